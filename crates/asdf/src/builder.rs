//! New arrays: datatype and byte order taken from the element type, per-array compression
//! and storage, parents created as needed.

use crate::error::Error;
use crate::file::{AsdfFile, NewBlock};
use asdf_core_types::{ByteOrder, Datatype, Dim, NdArray, NdArrayError, Scalar, Source};
use asdf_layout::Label;
use asdf_layout::Version;
use asdf_yaml::{Document, Node};

/// Where a new array's data goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum NewStorage {
    /// A block of the file (the default).
    #[default]
    Internal,
    /// In the tree, as `data:` lists (small arrays).
    Inline,
}

/// An array to put in a file with [`AsdfFile::put_array`].
///
/// ```
/// use asdf::{AsdfFile, Label, NewArray, Version};
/// let mut file = AsdfFile::new(Version::STANDARD_LATEST)?;
/// file.put_array("/sci/data", NewArray::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?.compression(Label::ZLIB))?;
/// file.put_array("/sci/mask", NewArray::from_slice(&[0u8, 1, 0, 0], &[2, 2])?.inline())?;
/// assert_eq!(file.array("/sci/data")?.read::<Vec<f32>>()?, [1.0, 2.0, 3.0, 4.0]);
/// # Ok::<(), asdf::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct NewArray {
    pub(crate) datatype: Datatype,
    pub(crate) shape: Vec<usize>,
    pub(crate) byteorder: ByteOrder,
    pub(crate) data: Vec<u8>,
    pub(crate) compression: Option<Label>,
    pub(crate) storage: NewStorage,
    pub(crate) chunks: Option<Vec<usize>>,
}

/// This machine's byte order.
fn native() -> ByteOrder {
    if cfg!(target_endian = "big") {
        ByteOrder::Big
    } else {
        ByteOrder::Little
    }
}

impl NewArray {
    /// Elements `data` in C order with shape `shape`; the datatype is `T`'s, the byte order
    /// this machine's.
    ///
    /// # Errors
    /// [`Error::Array`] (`ShapeMismatch`) when the shape does not hold `data.len()` elements.
    pub fn from_slice<T: Scalar + bytemuck::Pod>(data: &[T], shape: &[usize]) -> Result<Self, Error> {
        let n = shape.iter().try_fold(1usize, |a, d| a.checked_mul(*d));
        if n != Some(data.len()) {
            return Err(Error::Array {
                pointer: String::new(),
                source: NdArrayError::ShapeMismatch,
            });
        }
        Ok(Self::from_bytes(
            Datatype::Scalar(T::TYPE),
            shape,
            native(),
            bytemuck::cast_slice(data).to_vec(),
        ))
    }

    /// An `ndarray` array or view (any layout: it is written in C order).
    #[cfg(feature = "ndarray")]
    #[must_use]
    pub fn from_ndarray<T: Scalar + bytemuck::Pod, D: ndarray::Dimension>(a: ndarray::ArrayView<'_, T, D>) -> Self {
        let shape = a.shape().to_vec();
        let bytes = match a.as_slice() {
            Some(s) => bytemuck::cast_slice(s).to_vec(),
            None => {
                let v: Vec<T> = a.iter().copied().collect();
                bytemuck::cast_slice(&v).to_vec()
            }
        };
        Self::from_bytes(Datatype::Scalar(T::TYPE), &shape, native(), bytes)
    }

    /// Raw element bytes in C order, of `datatype` and `byteorder` (structured and string
    /// datatypes too). [`AsdfFile::put_array`] checks the length.
    #[must_use]
    pub fn from_bytes(datatype: Datatype, shape: &[usize], byteorder: ByteOrder, data: Vec<u8>) -> Self {
        NewArray {
            datatype,
            shape: shape.to_vec(),
            byteorder,
            data,
            compression: None,
            storage: NewStorage::Internal,
            chunks: None,
        }
    }

    /// Compresses its block with `label` (`Label::ZLIB`, `Label::ZSTD`, `Label::BLS2`, ...),
    /// whatever the other arrays use; [`crate::Compression::All`] in the write options still
    /// overrides it.
    #[must_use]
    pub fn compression(mut self, label: Label) -> Self {
        self.compression = Some(label);
        self
    }

    /// Stores it in the tree instead of a block.
    #[must_use]
    pub fn inline(mut self) -> Self {
        self.storage = NewStorage::Inline;
        self
    }

    /// Stores it chunked, in chunks of shape `chunks` (one per dimension; chunks at the edges
    /// may reach past the array), each chunk a block of the file compressed with the array's
    /// [`NewArray::compression`] as a Zarr compressor: the layout of asdf-zarr (tag
    /// `asdf://asdf-format.org/zarr/tags/zarr-1.0.0`), which Python asdf reads with asdf-zarr
    /// installed and whose regions are read by decoding only the chunks they touch. Chunks of
    /// zeros only are not stored.
    ///
    /// ```
    /// use asdf::{AsdfFile, Label, NewArray, Region, Version};
    /// let data: Vec<f32> = (0..100 * 80).map(|i| i as f32).collect();
    /// let mut file = AsdfFile::new(Version::STANDARD_LATEST)?;
    /// file.put_array("/image", NewArray::from_slice(&data, &[100, 80])?.chunks(&[32, 32]).compression(Label::ZSTD))?;
    /// let file = asdf::Open::bytes(file.write(asdf::Target::Bytes, &asdf::WriteOptions::default())?.into_bytes()).open()?;
    /// let cut = file.array("/image")?.read_region::<Vec<f32>>(&"10:12, 5:8".parse::<Region>()?)?;
    /// assert_eq!(cut, [805.0, 806.0, 807.0, 885.0, 886.0, 887.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn chunks(mut self, chunks: &[usize]) -> Self {
        self.chunks = Some(chunks.to_vec());
        self
    }

    /// Sets where it is stored.
    #[must_use]
    pub fn storage(mut self, storage: NewStorage) -> Self {
        self.storage = storage;
        self
    }
}

impl AsdfFile {
    /// The full tag this file's standard version uses for `name` ([`tag_for`]).
    pub(crate) fn tag_for(&self, name: &str) -> Result<String, Error> {
        tag_for(self.standard, name)
    }

    /// A new, empty file for ASDF Standard `standard` (use [`Version::STANDARD_LATEST`], 1.6.0,
    /// unless a reader needs an older one): the root tagged `core/asdf` of that version.
    ///
    /// # Errors
    /// [`Error::UnsupportedStandard`].
    pub fn new(standard: Version) -> Result<Self, Error> {
        if !crate::reads_standard(standard) {
            return Err(Error::UnsupportedStandard(standard));
        }
        let root_tag = tag_for(standard, "core/asdf")?;
        let doc = Document::new(Node::map(Vec::new()).with_tag(root_tag));
        // A file with only its header: no bytes are made or read (the first write lays out
        // the tree and blocks).
        let reader = asdf_layout::Reader::empty(Box::new(Vec::new()) as Box<dyn asdf_layout::ReadAt>, standard);
        let mut core = crate::file::Core::new(reader, standard, crate::OpenOptions::default());
        core.source_warnings.clear();
        core.tree_line = 3;
        let tree = core.tree_of(doc);
        Ok(AsdfFile::of(core, tree))
    }

    /// Puts `array` at `pointer`, creating the mappings on the way that do not exist yet
    /// (replacing a node that is there). Its block (if it has one) is written with the file.
    ///
    /// # Errors
    /// [`Error::Array`] when the data does not match datatype and shape;
    /// [`Error::NotFound`] when a node on the way is not a mapping.
    pub fn put_array(&mut self, pointer: &str, array: NewArray) -> Result<(), Error> {
        let err = |source| Error::Array {
            pointer: pointer.to_owned(),
            source,
        };
        let count = array.shape.iter().try_fold(1usize, |a, d| a.checked_mul(*d));
        if count.and_then(|n| n.checked_mul(array.datatype.size())) != Some(array.data.len()) {
            return Err(err(NdArrayError::ShapeMismatch));
        }
        asdf_yaml::pointer::create_parents(self.doc_mut(), pointer)
            .map_err(|e| crate::error::pointer_error(pointer, e))?;
        let tag = self.tag_for("core/ndarray")?;
        let dims = array.shape.iter().map(|d| Dim::Fixed(*d)).collect();
        let mut nd = NdArray::in_block(0, array.datatype.clone(), array.byteorder, dims);
        if array.chunks.is_some() {
            let node = self.chunked_node(pointer, array)?;
            self.set(pointer, node)?;
            return Ok(());
        }
        let node = match array.storage {
            NewStorage::Inline => {
                let d = nd.decode(Some(&array.data)).map_err(err)?;
                NdArray::inline(d.datatype, &d.shape, &d.elements).to_node(&tag)
            }
            NewStorage::Internal => {
                let index = self.reader.block_count() + self.pending.len();
                let source = i64::try_from(index).unwrap_or(i64::MAX);
                // Negative sources count from the last block, which is about to change.
                crate::file::absolute_sources(&mut self.doc_mut().root, source);
                self.pending.push(NewBlock {
                    data: array.data,
                    compression: array.compression,
                    as_is: false,
                });
                nd.source = Some(Source::Block(source));
                nd.to_node(&tag)
            }
        };
        self.set(pointer, node)?;
        Ok(())
    }

    /// The node of `array` stored chunked (asdf-zarr's layout), its chunks and chunk map
    /// added as blocks.
    fn chunked_node(&mut self, pointer: &str, array: NewArray) -> Result<Node, Error> {
        let first = self.reader.block_count() + self.pending.len();
        let enc = asdf_chunked::encode_as_blocks(
            &array.datatype,
            array.byteorder,
            &array.shape,
            array.chunks.as_deref().unwrap_or_default(),
            array.data,
            array.compression,
            first,
        )
        .map_err(|source| Error::Chunked {
            pointer: pointer.to_owned(),
            source,
        })?;
        // Negative sources count from the last block, which is about to change.
        crate::file::absolute_sources(&mut self.doc_mut().root, i64::try_from(first).unwrap_or(i64::MAX));
        for data in enc.blocks.into_iter().chain(std::iter::once(enc.map)) {
            self.pending.push(NewBlock {
                data,
                compression: None,
                as_is: true,
            });
        }
        Ok(enc.node)
    }

    /// Stores chunked (as [`NewArray::chunks`] does) every array of the tree in a block that
    /// has as many dimensions as `chunks` (numeric or boolean, not masked, not streamed),
    /// each chunk compressed with `compression` as a Zarr compressor; the blocks they were in
    /// are left out of the next write. Returns the pointers of the arrays it chunked, and
    /// those of the masked arrays of that many dimensions it left as they are (an asdf-zarr
    /// array has no mask, and Python asdf reads an ndarray's mask only from an ndarray: for a
    /// warning that says so). A mask is never chunked, nor anything else inside an ndarray's
    /// node; nor are 0-d arrays (`chunks` empty: nothing is chunked).
    ///
    /// # Errors
    /// Read errors of the arrays, [`Error::Chunked`] for a compression with no Zarr
    /// compressor.
    pub fn chunk_arrays(
        &mut self,
        chunks: &[usize],
        compression: Option<Label>,
    ) -> Result<(Vec<String>, Vec<String>), Error> {
        asdf_chunked::zarr_compressor(compression)
            .map(drop)
            .map_err(|source| Error::Chunked {
                pointer: String::new(),
                source,
            })?;
        if chunks.is_empty() {
            return Ok((Vec::new(), Vec::new()));
        }
        let (found, masked) = asdf_chunked::chunkable(&self.doc().root, chunks.len());
        let total = self.reader.block_count() + self.pending.len();
        let whole: crate::Region = "...".parse().map_err(|_| Error::NotFound("region".to_owned()))?;
        let mut done = Vec::new();
        for path in found {
            let pointer = asdf_yaml::pointer::pointer_of(&self.doc().root, &path);
            let (array, block) = {
                let a = self.array(&pointer)?;
                let Datatype::Scalar(t) = a.datatype().clone() else {
                    continue;
                };
                if a.is_masked() {
                    continue;
                }
                let (bytes, order) = a.region_bytes(&whole)?;
                let block = self
                    .get(&format!("{pointer}/source"))
                    .ok()
                    .and_then(Node::as_i64)
                    .and_then(|s| crate::file::absolute_index(s, total));
                (
                    NewArray::from_bytes(Datatype::Scalar(t), a.shape(), order, bytes).chunks(chunks),
                    block,
                )
            };
            let array = match compression {
                Some(l) => array.compression(l),
                None => array,
            };
            self.put_array(&pointer, array)?;
            if let Some(b) = block.filter(|&b| b < self.reader.block_count()) {
                self.replaced.insert(b);
            }
            done.push(pointer);
        }
        Ok((done, masked))
    }
}

/// The full tag ASDF Standard `v` uses for `name` (`core/ndarray` ->
/// `tag:stsci.edu:asdf/core/ndarray-1.1.0` for 1.6.0, `...-1.0.0` before): what a node made
/// for a file of that version is tagged with.
///
/// # Errors
/// [`Error::NotFound`] when the standard version has no such tag.
pub fn tag_for(v: Version, name: &str) -> Result<String, Error> {
    asdf_core_types::standard_tag((v.major, v.minor, v.patch), name)
        .map_err(Error::BuiltinSchemas)?
        .ok_or_else(|| Error::NotFound(format!("tag {name} in ASDF Standard {v}")))
}
