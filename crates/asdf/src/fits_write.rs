//! Writing FITS (the writer itself is [`asdf_fits::convert`]): the facade's side of it, the
//! file read as the writer's [`Tree`], the write in place or to memory, and the [`FITS_KEY`]
//! node that carries a FITS file's headers through a conversion to plain ASDF.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use asdf_core_types::{ByteOrder, Datatype, Piece, Scalar, ScalarType};
use asdf_fits::convert::{self, ArrayFacts, ConvertError, Located, Settings, Tree};
use asdf_fits::file::FitsFile;
use asdf_fits::write::fits_ndarray;
use asdf_fits::{FitsError, HduKind};
use asdf_yaml::{Anchor, Document, Node, NodeKind};

use crate::error::Error;
use crate::file::AsdfFile;
use crate::target::FitsWriteOptions;
use asdf_layout::atomic::{Dest, TempFile, destination};

pub use asdf_fits::convert::FITS_KEY;

/// The file written as FITS, as the writer sees it.
struct AsFits<'a> {
    file: &'a AsdfFile,
    options: &'a FitsWriteOptions,
}

impl Tree for AsFits<'_> {
    type Error = Error;

    fn doc(&self) -> Result<&Document, Error> {
        Ok(self.file.doc())
    }

    fn get(&self, pointer: &str) -> Result<&Node, Error> {
        self.file.get(pointer)
    }

    fn fits(&self) -> Option<&FitsFile> {
        self.file.fits.as_deref()
    }

    fn array_pointers(&self) -> Result<Vec<String>, Error> {
        Ok(self.file.array_pointers())
    }

    fn array(&self, pointer: &str) -> Result<ArrayFacts<'_>, Error> {
        let a = self.file.array(pointer)?;
        Ok(ArrayFacts {
            datatype: a.datatype().clone(),
            shape: a.shape().to_vec(),
            masked: a.is_masked(),
            located: a.located.map(|s| (s.view, s.at)),
        })
    }

    fn located(&self, pointer: &str) -> Result<Located<'_>, Error> {
        let nd = self.file.ndarray_at(pointer)?;
        self.file.view_of(&nd, pointer)
    }

    fn fits_sources(&self) -> Result<Vec<(String, usize)>, Error> {
        match &self.file.fits {
            Some(fits) => Ok(fits.sources_in(self.file.doc())),
            None => Ok(Vec::new()),
        }
    }

    fn pieces<T: Scalar>(&self, pointer: &str, g: &mut dyn FnMut(Piece<'_, T>)) -> Result<(), Error> {
        self.file.array(pointer)?.pieces::<T>(g)
    }

    fn asdf_bytes(&self, doc: &Document, in_hdus: &HashSet<String>) -> Result<Vec<u8>, Error> {
        let mut options = self.options.asdf.clone();
        options.progress = None;
        // The blocks of the arrays now in HDUs are not copied into the ASDF HDU as well.
        let blocks: HashSet<usize> = in_hdus
            .iter()
            .filter_map(|p| match self.file.array(p).ok()?.storage() {
                crate::Storage::Internal { block } if block < self.file.reader.block_count() => Some(block),
                _ => None,
            })
            .collect();
        let kept = crate::write::KeptOut {
            sources: in_hdus.clone(),
            blocks,
        };
        let mut bytes = std::io::Cursor::new(Vec::new());
        self.file.write_doc_into(doc, &mut bytes, &options, &kept)?;
        Ok(bytes.into_inner())
    }
}

/// The facade's error for the writer's.
fn from_convert(e: ConvertError<Error>) -> Error {
    match e {
        ConvertError::Fits { pointer, source } => Error::Fits { pointer, source },
        ConvertError::Storage { pointer, source } => crate::error::storage_error(&pointer)(source),
        // Output errors are named by the caller, which knows the file.
        ConvertError::Output(source) => Error::Io {
            path: std::path::PathBuf::new(),
            source,
        },
        ConvertError::Usage(what) => Error::Usage(what),
        ConvertError::Tree(e) => e,
    }
}

impl AsdfFile {
    /// Writes this file as FITS at `path`, atomically: arrays of numeric types as IMAGE HDUs
    /// (big-endian; unsigned types under FITS's BZERO convention), the tree in the `ASDF` HDU
    /// with those arrays' sources `fits:EXTNAME,EXTVER` and `_fits_hash` (stdatamodels' hash of
    /// the other headers), as JWST's pipelines write it.
    ///
    /// A file read from FITS keeps its HDUs: their headers card for card (with BITPIX and
    /// NAXISn following the arrays), HDUs no ndarray names (tables) as they were, in their
    /// order. A tree with a [`FITS_KEY`] node (a conversion from FITS) takes its HDUs from it.
    /// Other arrays get new HDUs named after their key. Arrays FITS cannot hold (complex,
    /// float16, bool8, records, masked, zero-dimensional) stay blocks of the embedded file.
    ///
    /// # Errors
    /// Validation of the tree, cards that cannot be written, data that does not fit its
    /// header, block and I/O errors.
    ///
    /// Over the file's own path, the write holds an advisory lock on the file and first checks
    /// that no other writer changed it since it was opened ([`Error::Changed`] otherwise), as
    /// [`AsdfFile::write`] does.
    pub(crate) fn write_fits(&self, path: impl AsRef<Path>, options: &FitsWriteOptions) -> Result<(), Error> {
        let path = path.as_ref();
        let own = self.is_own_file(path);
        // A `fits` node written alone does not read the file's own tree into the output.
        let _lock = if own && options.node.is_none() {
            Some(self.lock_unchanged(path)?)
        } else {
            None
        };
        let path = match destination(path) {
            Dest::InPlace => {
                let bytes = self.to_fits_bytes(options)?;
                return crate::write_atomically(path, |w| std::io::Write::write_all(w, &bytes));
            }
            Dest::Atomic(p) => p,
        };
        let (tmp, f) = TempFile::create(&path)?;
        if !own {
            tmp.release_replaced();
        }
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        self.write_fits_into(&mut w, options).map_err(|e| match e {
            // Output errors name the file being written.
            Error::Io { path, source } if path.as_os_str().is_empty() => tmp.error(source).into(),
            e => e,
        })?;
        let f = w.into_inner().map_err(|e| tmp.error(e.into_error()))?;
        Ok(tmp.commit(f, options.asdf.durable)?)
    }

    /// The bytes of [`AsdfFile::write`] (FITS)'s file.
    ///
    /// # Errors
    /// As [`AsdfFile::write`] (FITS).
    pub(crate) fn to_fits_bytes(&self, options: &FitsWriteOptions) -> Result<Vec<u8>, Error> {
        let mut out = std::io::Cursor::new(Vec::new());
        self.write_fits_into(&mut out, options)?;
        Ok(out.into_inner())
    }

    /// Adds the [`FITS_KEY`] node to the tree of a file read from FITS: every HDU but the
    /// ASDF one, its header card for card and its data (an alias of the ndarray whose source
    /// names it; an image no ndarray names as a new ndarray; a table's bytes as a `uint8`
    /// ndarray), so that the file written as ASDF converts back to the same FITS file.
    /// Returns whether the file was read from FITS.
    ///
    /// # Errors
    /// Reading the FITS file's headers or tables.
    pub fn keep_fits_headers(&mut self) -> Result<bool, Error> {
        let Some(fits) = self.fits.clone() else {
            return Ok(false);
        };
        // The first ndarray naming each HDU.
        let mut takers: HashMap<usize, String> = HashMap::new();
        for (p, i) in fits.sources_in(self.doc()) {
            takers.entry(i).or_insert(p);
        }
        let ndarray_tag = self.tag_for("core/ndarray")?;
        let mut entries = Vec::new();
        let mut raw_tables = Vec::new();
        for hdu in fits.data_hdus() {
            let cards = fits
                .header_cards(hdu)
                .map_err(fits_file_error)?
                .iter()
                .map(|c| Node::str(String::from_utf8_lossy(c).trim_end().to_owned()))
                .collect();
            let data = if let Some(p) = takers.get(&hdu.index) {
                let node = self.get_mut(p)?;
                if node.anchor.is_none() {
                    node.anchor = Some(Anchor::new(&format!("fits_hdu{}", hdu.index)));
                }
                Node {
                    kind: NodeKind::Alias(asdf_yaml::Alias::to(node).ok_or(Error::Usage("an ndarray without anchor"))?),
                    ..Node::null()
                }
            } else if hdu.data_len == 0 {
                Node::null()
            } else if matches!(hdu.kind, HduKind::Image | HduKind::Primary)
                && let Some(dt) = hdu.value_datatype()
            {
                let shape: Vec<usize> = hdu
                    .array_shape()
                    .iter()
                    .map(|&d| usize::try_from(d).unwrap_or(usize::MAX))
                    .collect();
                fits_ndarray(format!("fits:{}", hdu.index), dt, &shape).with_tag(ndarray_tag.clone())
            } else {
                raw_tables.push((entries.len(), hdu.index));
                Node::null()
            };
            entries.push(Node::map(vec![
                (Node::str("header"), Node::seq(cards)),
                (Node::str("data"), data),
            ]));
        }
        let root = self
            .doc_mut()
            .root
            .as_mapping_mut()
            .ok_or(Error::Usage("a tree whose root is not a mapping"))?;
        root.remove(FITS_KEY);
        root.insert(FITS_KEY, Node::seq(entries));
        for (k, i) in raw_tables {
            let hdu = &fits.hdus[i];
            if hdu.data_len > self.options.layout_limits.max_block_bytes {
                return Err(Error::Layout(asdf_layout::Error::Limits(
                    asdf_layout::LimitError::BlockBytes {
                        block: i,
                        claimed: hdu.data_len,
                        limit: self.options.layout_limits.max_block_bytes,
                    },
                )));
            }
            let len = usize::try_from(hdu.data_len).map_err(|_| Error::Usage("a table larger than memory"))?;
            let bytes = fits
                .source
                .bytes_at(hdu.data_offset, len)
                .map_err(|e| fits_file_error(asdf_fits::file::io(hdu.data_offset)(e)))?;
            self.put_array(
                &format!("/{FITS_KEY}/{k}/data"),
                crate::NewArray::from_bytes(
                    Datatype::Scalar(ScalarType::UInt8),
                    &[len],
                    ByteOrder::Big,
                    bytes.into_owned(),
                ),
            )?;
        }
        self.doc_mut().relink();
        Ok(true)
    }

    /// The HDUs to write, written into `w`.
    fn write_fits_into<W: std::io::Write + std::io::Seek>(
        &self,
        w: &mut W,
        options: &FitsWriteOptions,
    ) -> Result<(), Error> {
        let tree = AsFits { file: self, options };
        let progress = options.asdf.progress.as_ref().map(|p| &*p.0);
        let settings = Settings {
            checksums: options.checksums,
            asdf_hdu: options.asdf_hdu,
            names: &options.names,
            node: options.node.as_deref(),
            progress,
        };
        let plan = convert::plan(&tree, &settings).map_err(from_convert)?;
        convert::write(&tree, w, plan, &settings).map_err(from_convert)
    }
}

/// An error of the FITS file read, at no ndarray.
fn fits_file_error(source: FitsError) -> Error {
    Error::Fits {
        pointer: String::new(),
        source,
    }
}
