//! Where an array's bytes are (a block, a file, a region of either) for numpy to map or read.

use asdf::core_types::{ByteOrder, Datatype};
use asdf::{AsdfFile, Error, Label, Node, NodeKind};

use crate::tree::{ENTRY, node_at};

/// Where the file came from, for the Dask tasks that read it again.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    /// The path or URL as given (a path of any bytes: Python gives it as its `os.fsdecode`).
    pub(crate) path: std::path::PathBuf,
    pub(crate) remote: asdf_remote::RemoteOptions,
}

/// `(requests, bytes, ranges)` of a remote file.
pub(crate) type RemoteStats = (u64, u64, Vec<(u64, u64)>);

/// Where the data of an array is, as `NativeFile::layout` reports it.
pub(crate) enum LayoutStorage {
    /// A block of the file.
    Block {
        strides: Vec<i64>,
        offset: u64,
        block: usize,
        label: Label,
        data_len: u64,
        stored_offset: u64,
        stored_len: u64,
        /// numpy may map the path itself (an uncompressed block of a local ASDF file that is
        /// still the file opened).
        mapped: bool,
    },
    /// The tree's `data`.
    Inline,
    /// Chunks (asdf-zarr): read with `region`.
    Chunked {
        chunks: Vec<usize>,
        compressor: Option<String>,
    },
    /// Another file's block, or a FITS HDU.
    Other {
        external: Option<String>,
        strides: Vec<i64>,
        offset: u64,
    },
}

/// What `NativeFile::layout` gathers, without the GIL.
pub(crate) struct LayoutInfo {
    pub(crate) shape: Vec<usize>,
    pub(crate) masked: bool,
    pub(crate) datatype: Datatype,
    pub(crate) byteorder: ByteOrder,
    pub(crate) storage: LayoutStorage,
}

/// The layout of the array at `pointer` (see `NativeFile::layout`): reads block headers, so
/// it runs with the GIL released.
pub(crate) fn layout_info(f: &AsdfFile, pointer: &str) -> Result<Result<LayoutInfo, &'static str>, Error> {
    if pointer.contains(ENTRY) {
        return layout_by_entry(f, pointer);
    }
    match by_pointer(f, pointer) {
        Ok(info) => Ok(Ok(info)),
        // An exploded array whose file is missing or refused has the layout it is written
        // with: its data is read (and the reason it cannot be given) when it is used, as
        // Python asdf's lazy arrays do, so that one such array does not fail a whole tree.
        Err(e) if matches!(e.kind(), asdf::ErrorKind::Reference | asdf::ErrorKind::Io) => {
            written_external(f, pointer)?.ok_or(e).map(Ok)
        }
        Err(e) => Err(e),
    }
}

/// The layout an exploded array's node gives (`None` for other nodes), its file not opened.
pub(crate) fn written_external(f: &AsdfFile, pointer: &str) -> Result<Option<LayoutInfo>, Error> {
    let doc = f.document();
    let node = node_at(f, pointer)?;
    let Ok(nd) = asdf::NdArray::from_node(node, doc) else {
        return Ok(None);
    };
    let Some(asdf::core_types::ndarray::Source::Uri(uri)) = &nd.source else {
        return Ok(None);
    };
    let Ok(v) = asdf::View::new(&nd, u64::MAX) else {
        return Ok(None);
    };
    Ok(Some(LayoutInfo {
        shape: v.shape.clone(),
        masked: nd.mask.is_some(),
        datatype: v.datatype.clone(),
        byteorder: v.byteorder,
        storage: LayoutStorage::Other {
            external: Some(uri.clone()),
            strides: v.strides,
            offset: v.offset,
        },
    }))
}

/// The layout of an array under a key that no JSON pointer names (a `~e<i>` token, see
/// [`entry_tokens`]): the facade finds arrays by JSON pointer, so the node is read here. An
/// ndarray in a block of this file or in the tree; `Ok(Err(what))` for other storage.
pub(crate) fn layout_by_entry(f: &AsdfFile, pointer: &str) -> Result<Result<LayoutInfo, &'static str>, Error> {
    let doc = f.document();
    let node = node_at(f, pointer)?;
    if node.tag.as_deref().is_some_and(asdf::is_chunked_array_tag) {
        return Ok(Err("a chunked array"));
    }
    let array_err = |source| Error::Array {
        pointer: pointer.to_owned(),
        source,
    };
    let nd = asdf::NdArray::from_node(node, doc).map_err(array_err)?;
    let masked = nd.mask.is_some();
    match nd.source {
        None => {
            let Some(datatype) = nd.datatype.clone() else {
                return Ok(Err("an inline array without a datatype"));
            };
            Ok(Ok(LayoutInfo {
                shape: nd.resolved_shape(None).map_err(array_err)?,
                masked,
                datatype,
                byteorder: nd.byteorder,
                storage: LayoutStorage::Inline,
            }))
        }
        Some(asdf::core_types::ndarray::Source::Block(source)) => {
            if f.source().fits_hdus().is_some() {
                return Ok(Err("an array of ASDF in FITS"));
            }
            let total = f.source().blocks().len();
            let index = if source < 0 {
                i64::try_from(total).ok().and_then(|t| t.checked_add(source))
            } else {
                Some(source)
            }
            .and_then(|i| usize::try_from(i).ok())
            .filter(|&i| i < total)
            .ok_or_else(|| array_err(asdf::NdArrayError::Invalid("source")))?;
            let b = f.source().block(index)?;
            let v = asdf::View::new(&nd, b.data_len()?).map_err(array_err)?;
            Ok(Ok(LayoutInfo {
                shape: v.shape.clone(),
                masked,
                datatype: v.datatype.clone(),
                byteorder: v.byteorder,
                storage: LayoutStorage::Block {
                    strides: v.strides.clone(),
                    offset: v.offset,
                    block: index,
                    label: b.compression()?,
                    data_len: b.data_len()?,
                    stored_offset: b.data_offset()?,
                    stored_len: b.header()?.used_size,
                    mapped: false,
                },
            }))
        }
        Some(_) => Ok(Err("an array in another file")),
    }
}

/// [`layout_info`] of an array the facade finds by its JSON pointer.
pub(crate) fn by_pointer(f: &AsdfFile, pointer: &str) -> Result<LayoutInfo, Error> {
    let a = f.array(pointer)?;
    let shape = a.shape().to_vec();
    let masked = a.is_masked();
    match a.storage() {
        // One resolution: the handle holds the view it checked against the block.
        asdf::Storage::Internal { block } => {
            let v = a.view()?;
            let b = f.source().block(block)?;
            let label = b.compression()?;
            let h = b.header()?;
            let data_offset = b.data_offset()?;
            // numpy maps the path itself: only while it is still the file opened (a file
            // replaced by another writer is read through this open file instead).
            // An ASDF file inside FITS has its blocks at offsets of its HDU, not of the file.
            let local_asdf = f.source().layout().file_header().dialect == asdf::layout::Dialect::Asdf
                && f.source().fits_hdus().is_none()
                && f.source().unchanged_on_disk();
            let mapped = label == Label::NONE && local_asdf && !b.is_streamed().unwrap_or(true);
            Ok(LayoutInfo {
                shape,
                masked,
                datatype: v.datatype.clone(),
                byteorder: v.byteorder,
                storage: LayoutStorage::Block {
                    strides: v.strides.clone(),
                    offset: v.offset,
                    block,
                    label,
                    data_len: b.data_len()?,
                    stored_offset: data_offset,
                    stored_len: h.used_size,
                    mapped,
                },
            })
        }
        asdf::Storage::Chunked { chunks, compressor } => Ok(LayoutInfo {
            shape,
            masked,
            datatype: a.datatype().clone(),
            byteorder: a.byte_order(),
            storage: LayoutStorage::Chunked { chunks, compressor },
        }),
        asdf::Storage::Inline => Ok(LayoutInfo {
            shape,
            masked,
            datatype: a.datatype().clone(),
            byteorder: a.byte_order(),
            storage: LayoutStorage::Inline,
        }),
        other => {
            let external = match other {
                asdf::Storage::External { uri } => Some(uri.to_string()),
                _ => None,
            };
            let v = a.view()?;
            Ok(LayoutInfo {
                shape,
                masked,
                datatype: v.datatype.clone(),
                byteorder: v.byteorder,
                storage: LayoutStorage::Other {
                    external,
                    strides: v.strides.clone(),
                    offset: v.offset,
                },
            })
        }
    }
}

/// What [`NativeFile::target`] returns: path or URL, settings, anonymous, remote version.
pub(crate) type Target4 = (
    std::ffi::OsString,
    Vec<(String, String)>,
    bool,
    Option<(u64, Option<String>)>,
);

/// Why the chunked array at `pointer` is not read, when its Zarr dtype is one asdf_rs's
/// chunked arrays do not hold (records, strings): the message names the array and the dtype.
pub(crate) fn zarr_dtype_refusal(f: &AsdfFile, pointer: &str) -> Option<String> {
    let doc = f.document();
    let node = doc.resolve(node_at(f, pointer).ok()?);
    if !node.tag.as_deref().is_some_and(asdf::is_chunked_array_tag) {
        return None;
    }
    let dtype = doc.resolve(doc.resolve(node.get(".zarray")?).get("dtype")?);
    if let Some(s) = dtype.as_str() {
        let mut c = s.chars();
        let numeric = matches!(c.next(), Some('<' | '>' | '|' | '='))
            && matches!(c.next(), Some('i' | 'u' | 'f' | 'c' | 'b'))
            && c.as_str().parse::<u32>().is_ok();
        if numeric {
            return None;
        }
    }
    fn text(doc: &asdf::Document, n: &Node) -> String {
        match &doc.resolve(n).kind {
            NodeKind::Sequence(s) => format!(
                "[{}]",
                s.items.iter().map(|i| text(doc, i)).collect::<Vec<_>>().join(", ")
            ),
            NodeKind::Scalar(s) => format!("{:?}", s.text.as_str()),
            _ => "?".to_owned(),
        }
    }
    Some(format!(
        "{}: an asdf-zarr array of Zarr dtype {} (records or strings) is not read by asdf_rs, whose \
         chunked arrays hold numbers and booleans (Python asdf with asdf-zarr reads it)",
        if pointer.is_empty() { "/" } else { pointer },
        text(doc, dtype)
    ))
}
