//! Typed handles: [`Array`] for an ndarray of the tree, [`Block`] for a block of the file.

use crate::blocks::Piece;
use crate::error::{Error, array_error, pointer_error, storage_error};
use crate::file::{AsdfFile, BlockIndex, Core};
use asdf_core_types::region::{Region, Selection};
use asdf_core_types::stored::{ReadError, Stored};
use asdf_core_types::{ByteOrder, Datatype, Element, NdArray, NdArrayError, Scalar, Source, View};
use asdf_layout::Label;
use asdf_layout::storage::Storage;
use asdf_yaml::Document;

/// An ndarray of the tree: what it is (shape, datatype, byte order, where it is stored and
/// how it is compressed) without reading its data, and typed reads of that data.
///
/// ```no_run
/// let file = asdf::open("image.asdf")?;
/// let sci = file.array("/sci/data")?;
/// println!("{:?} {} {:?}", sci.shape(), sci.datatype(), sci.compression());
/// let pixels: Vec<f32> = sci.read()?;
/// # Ok::<(), asdf::Error>(())
/// ```
#[derive(Debug)]
pub struct Array<'f> {
    pub(crate) file: &'f Core,
    pub(crate) pointer: String,
    pub(crate) nd: NdArray,
    pub(crate) shape: Vec<usize>,
    pub(crate) datatype: Datatype,
    /// A block-backed array's view (checked against its storage's length) and its storage:
    /// resolved once, when the handle is made; every read starts from here.
    pub(crate) located: Option<Stored<'f>>,
    /// A chunked array's own handle (its chunk map, its store).
    pub(crate) chunked: Option<std::sync::Arc<asdf_chunked::Chunked>>,
    /// An inline array's elements, decoded once (to learn its shape) and kept.
    pub(crate) inline: Option<asdf_core_types::Decoded>,
}

impl AsdfFile {
    /// The ndarray at `pointer`, as a handle: no block data is read until a read method is
    /// called (an array in another file, exploded form, is read now to learn its length).
    ///
    /// # Errors
    /// [`Error::NotFound`]; [`Error::Array`] when the node is not a valid ndarray or its
    /// block does not hold it.
    pub fn array(&self, pointer: &str) -> Result<Array<'_>, Error> {
        self.core.array_in(self.doc(), pointer)
    }

    /// The ndarray at `pointer`.
    pub(crate) fn ndarray_at(&self, pointer: &str) -> Result<NdArray, Error> {
        self.core.ndarray_in(self.doc(), pointer)
    }
}

impl Core {
    /// The array at `pointer` of `doc` (the tree of a file of this source).
    pub(crate) fn array_in(&self, doc: &Document, pointer: &str) -> Result<Array<'_>, Error> {
        match self.ndarray_in(doc, pointer) {
            Ok(nd) => self.array_of(nd, pointer),
            Err(e @ Error::Array { .. }) => self.chunked_array(doc, pointer)?.ok_or(e),
            Err(e) => Err(e),
        }
    }

    /// The ndarray at `pointer` of `doc`.
    pub(crate) fn ndarray_in(&self, doc: &Document, pointer: &str) -> Result<NdArray, Error> {
        let node = asdf_yaml::pointer::get(doc, pointer).map_err(|e| pointer_error(pointer, e))?;
        NdArray::from_node(node, doc).map_err(array_error(pointer))
    }

    /// The chunked array (asdf-zarr's, ASDF.jl's) at `pointer`, if the node there is one.
    pub(crate) fn chunked_array(&self, doc: &Document, pointer: &str) -> Result<Option<Array<'_>>, Error> {
        // Not a chunked array unless the tree says so: a pointer that misses leaves the
        // ndarray error as it was.
        let Ok(node) = asdf_yaml::pointer::get(doc, pointer) else {
            return Ok(None);
        };
        let cx = asdf_chunked::Context {
            reader: &self.reader,
            absolute: &crate::file::absolute_index,
            dir: self.dir.as_deref(),
            policy: self.options.references,
            max_bytes: self.options.layout_limits.max_block_bytes,
            #[cfg(feature = "remote")]
            remote: self.remote_origin.clone(),
        };
        let opened = asdf_chunked::open(&cx, doc, doc.resolve(node)).map_err(|source| Error::Chunked {
            pointer: pointer.to_owned(),
            source,
        })?;
        let Some(c) = opened else { return Ok(None) };
        let (shape, datatype) = (c.shape().to_vec(), c.datatype().clone());
        // Read as one block holding the decoded array: C order, native byte order.
        let dims = shape.iter().map(|&d| asdf_core_types::Dim::Fixed(d)).collect();
        let nd = NdArray::in_block(0, datatype.clone(), asdf_chunked::Chunked::byte_order(), dims);
        let len = shape.iter().product::<usize>() * datatype.size();
        let view = View::new(&nd, len as u64).map_err(array_error(pointer))?;
        Ok(Some(Array {
            file: self,
            pointer: pointer.to_owned(),
            shape,
            datatype,
            nd,
            located: Some(Stored::new(view, c.storage(&self.reader))),
            chunked: Some(c),
            inline: None,
        }))
    }

    /// The handle of the ndarray `nd` found at `pointer`.
    pub(crate) fn array_of(&self, nd: NdArray, pointer: &str) -> Result<Array<'_>, Error> {
        let err = array_error(pointer);
        let (shape, datatype, located, inline) = if nd.source.is_none() {
            let d = nd.decode(None).map_err(err)?;
            (d.shape.clone(), d.datatype.clone(), None, Some(d))
        } else {
            let (view, at) = self.view_of(&nd, pointer)?;
            (
                view.shape.clone(),
                view.datatype.clone(),
                Some(Stored::new(view, at)),
                None,
            )
        };
        Ok(Array {
            file: self,
            pointer: pointer.to_owned(),
            nd,
            shape,
            datatype,
            located,
            chunked: None,
            inline,
        })
    }
}

impl<'f> Array<'f> {
    /// Where the ndarray is in the tree.
    #[must_use]
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// The shape (a streamed array's first dimension as its block holds it).
    #[must_use]
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Refuses to write out a region of `shape` (the whole array: [`Array::shape`]) that this
    /// array's strides make far larger than the data it views: over 1 GiB and over 64 times
    /// the bytes its view spans. Zero strides repeat data (a 200-byte file can claim 12.8 GB),
    /// and so do overlapping ones (a sliding window: `strides: [1, 1]` over 2 MB claims a
    /// terabyte); numpy keeps such a view as strides, but a reader that writes every element
    /// out, as JSON, `.npy` or a comparison, would run for hours. Other arrays always pass.
    ///
    /// # Errors
    /// [`Error::Repeated`].
    pub fn refuse_repeated(&self, shape: &[usize]) -> Result<(), Error> {
        match self.view().ok().and_then(|v| v.repeated(shape)) {
            Some((bytes, data)) => Err(Error::Repeated {
                pointer: self.pointer.clone(),
                bytes,
                data,
            }),
            None => Ok(()),
        }
    }

    /// How many elements (the product of the shape).
    #[must_use]
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the array has no element.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The element type.
    #[must_use]
    pub fn datatype(&self) -> &Datatype {
        &self.datatype
    }

    /// The byte order of the stored elements.
    #[must_use]
    pub fn byte_order(&self) -> ByteOrder {
        self.nd.byteorder
    }

    /// Where the data is.
    #[must_use]
    pub fn storage(&self) -> Storage {
        self.located.as_ref().map_or(Storage::Inline, |s| s.at.storage())
    }

    /// The compression of the array's block (`Label::NONE` when uncompressed); `None` for
    /// arrays not in a block of this file.
    #[must_use]
    pub fn compression(&self) -> Option<Label> {
        match (self.storage(), &self.nd.source) {
            (Storage::Internal { block }, _) => self.file.reader.block(block).ok().map(|b| b.compression()),
            (Storage::New, Some(Source::Block(i))) => match self.file.block_ref(*i) {
                Ok(Some(BlockIndex::Pending(k))) => {
                    self.file.pending.get(k).map(|p| p.compression.unwrap_or(Label::NONE))
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// Where the chunks of this asdf-zarr array are, when they are blocks of the file (`None`
    /// for any other array): for readers that fetch chunks themselves.
    #[must_use]
    pub fn chunk_map(&self) -> Option<crate::ChunkMap> {
        self.chunked.as_ref().and_then(|c| c.chunk_map())
    }

    /// For an asdf-zarr array whose chunks are in a store outside the file: the object `key`
    /// of that store and the array's metadata, read under the file's reference policy and the
    /// same checks as the array's own reads (the store's place resolved against the file's
    /// directory, links followed and kept inside it); `None` for any other array. For readers
    /// that hand the store to other software (Python's zarr).
    ///
    /// # Errors
    /// [`Error::Chunked`] for a key that leaves the store or an object that cannot be read.
    pub fn chunk_store_object(&self, key: &str) -> Result<Option<crate::StoreObject>, Error> {
        match &self.chunked {
            Some(c) => c.store_object(key).map_err(|source| Error::Chunked {
                pointer: self.pointer.clone(),
                source,
            }),
            None => Ok(None),
        }
    }

    /// Whether the ndarray has a mask (read it with [`Array::values`]).
    #[must_use]
    pub fn is_masked(&self) -> bool {
        self.nd.mask.is_some() || self.inline.as_ref().is_some_and(|d| !d.nulls.is_empty())
    }

    /// How the elements lie in the array's block (datatype, byte order, shape, strides in
    /// bytes, offset of the first element), checked against the block's length when the
    /// handle was made.
    ///
    /// # Errors
    /// [`Error::Array`] (`MissingBlock`) for an inline array (its elements are in the tree).
    pub fn view(&self) -> Result<&View, Error> {
        self.located
            .as_ref()
            .map(|s| &s.view)
            .ok_or_else(|| array_error(&self.pointer)(NdArrayError::MissingBlock))
    }

    /// Hands `g` the elements in C order: the bytes of whole elements with their byte order,
    /// or elements one by one (inline arrays, strided views, blocks not in this file).
    pub(crate) fn pieces<T: Scalar>(&self, g: &mut dyn FnMut(Piece<'_, T>)) -> Result<(), Error> {
        match &self.located {
            None => {
                for x in self.read_vec::<T>()? {
                    g(Piece::One(x));
                }
                Ok(())
            }
            Some(s) => s.pieces(g).map_err(self.read_error()),
        }
    }

    /// The elements as `Vec<T>`, C order, native byte order (`T` must be the datatype:
    /// `f32` for float32).
    ///
    /// # Errors
    /// [`Error::Array`] with `TypeMismatch`; block and codec errors.
    pub(crate) fn read_vec<T: Scalar>(&self) -> Result<Vec<T>, Error> {
        self.check_whole()?;
        match (&self.inline, &self.located) {
            (Some(d), _) => d.typed().map_err(array_error(&self.pointer)),
            (None, Some(s)) => s.to_vec().map_err(self.read_error()),
            (None, None) => Err(array_error(&self.pointer)(NdArrayError::MissingBlock)),
        }
    }

    /// The shape of what [`Array::read_region`] gives for `region`.
    ///
    /// # Errors
    /// [`Error::Region`] when the region does not fit the array.
    pub fn region_shape(&self, region: &Region) -> Result<Vec<usize>, Error> {
        Ok(self.selection(region)?.shape())
    }

    /// A read of `counts` elements along each axis is held to the limit of a decoded block
    /// (`Limits::max_block_bytes`), whole or by region: a view whose strides overlap a small
    /// block can claim far more elements than its file holds.
    fn check_read(&self, counts: impl Iterator<Item = usize>) -> Result<(), Error> {
        let bytes = counts.fold(self.datatype.size() as u128, |acc, d| acc.saturating_mul(d as u128));
        let limit = self.file.options.layout_limits.max_block_bytes;
        if bytes > u128::from(limit) || usize::try_from(bytes).is_err() {
            return Err(Error::ReadTooLarge {
                pointer: self.pointer.clone(),
                bytes,
                limit,
            });
        }
        Ok(())
    }

    /// [`Array::check_read`] of the whole array.
    fn check_whole(&self) -> Result<(), Error> {
        self.check_read(self.shape.iter().copied())
    }

    fn selection(&self, region: &Region) -> Result<Selection, Error> {
        let sel = region.resolve(&self.shape).map_err(|source| Error::Region {
            pointer: self.pointer.clone(),
            source,
        })?;
        self.check_read(sel.spans.iter().map(|s| s.count))?;
        Ok(sel)
    }

    /// The elements of `region` (numpy's basic slicing: `"100:300, 1400:1600"`, `"2, ..."`,
    /// `"::-1"`), C order, native byte order, shaped as [`Array::region_shape`] says. Only
    /// what the region touches is read: the chunks it touches of a chunked array, the
    /// byte range it spans of an uncompressed block (a ranged read), the Blosc2 chunks it
    /// spans of a frame; another compressed block is decoded once and kept for the
    /// handle's life.
    ///
    /// # Errors
    /// [`Error::Region`]; as [`Array::read`].
    pub(crate) fn region_vec<T: Scalar>(&self, region: &Region) -> Result<Vec<T>, Error> {
        let sel = self.selection(region)?;
        let err = array_error(&self.pointer);
        // The type is checked whatever the region holds (an empty one too).
        if self.datatype != Datatype::Scalar(T::TYPE) {
            return Err(err(NdArrayError::TypeMismatch {
                want: T::TYPE,
                have: self.datatype.to_string(),
            }));
        }
        match &self.located {
            // Inline: the tree's elements, already decoded.
            None => Ok(sel.gather_in(&vec![0; self.shape.len()], &self.shape, &self.read_vec::<T>()?)),
            Some(s) => s.region_vec(&sel).map_err(self.read_error()),
        }
    }

    /// The bytes of the elements of `region`, C order, each in the byte order returned (the
    /// array's own, or the machine's for a chunked array): for any datatype (records,
    /// strings, complex), as [`Array::read_region`] reads them.
    ///
    /// # Errors
    /// As [`Array::read_region`]; [`Error::Array`] (`MissingBlock`) for an inline array.
    pub(crate) fn region_bytes(&self, region: &Region) -> Result<(Vec<u8>, ByteOrder), Error> {
        let sel = self.selection(region)?;
        self.refuse_inline()?;
        let s = self
            .located
            .as_ref()
            .ok_or_else(|| array_error(&self.pointer)(NdArrayError::MissingBlock))?;
        s.region_bytes(&sel).map_err(self.read_error())
    }

    /// A region's bytes (as [`crate::RegionBytes`] has them) into `out`, which must hold exactly the region's bytes
    /// (its elements times the datatype's size); returns their byte order. A box of a
    /// chunked array (a whole read, a block of rows) is decoded straight into `out`, each
    /// chunk as it arrives: no buffer of the whole region between, which is what a caller
    /// that owns the memory (Python's `bytes`, a numpy array) wants.
    ///
    /// # Errors
    /// As [`Array::read_region`]; [`Error::Usage`] when `out` is not the region's size.
    pub fn read_region_into(&self, region: &Region, out: &mut [u8]) -> Result<ByteOrder, Error> {
        self.with_threads(|| self.region_into(region, out))
    }

    fn region_into(&self, region: &Region, out: &mut [u8]) -> Result<ByteOrder, Error> {
        let sel = self.selection(region)?;
        self.refuse_inline()?;
        let want = sel.count().saturating_mul(self.datatype.size());
        if out.len() != want {
            return Err(Error::Usage("the buffer is not the size of the region's bytes"));
        }
        let s = self
            .located
            .as_ref()
            .ok_or_else(|| array_error(&self.pointer)(NdArrayError::MissingBlock))?;
        s.region_into(&sel, out).map_err(self.read_error())
    }

    /// Every byte of the storage decoded, a piece at a time (a chunked array's stored chunks,
    /// one row of the chunk grid at a time): what [`AsdfFile::verify`] checks of chunks that
    /// are not blocks of the file (a directory store's files); a chunk never written is the
    /// fill value, not a problem.
    ///
    /// [`AsdfFile::verify`]: crate::AsdfFile::verify
    pub(crate) fn decode_every_piece(&self) -> Result<(), Error> {
        match &self.located {
            Some(s) => s.at.pieces(&mut |_| {}).map_err(storage_error(&self.pointer)),
            None => Ok(()),
        }
    }

    /// The elements as a slice of `T`: borrowed straight from the file's bytes (a memory map,
    /// a file held in memory) when the block is uncompressed, the byte order native, the
    /// layout C-contiguous and the data aligned; a copy otherwise.
    ///
    /// # Errors
    /// As [`Array::read`].
    pub(crate) fn cow_slice<T: Scalar + bytemuck::Pod>(&self) -> Result<std::borrow::Cow<'f, [T]>, Error> {
        match &self.located {
            None => self.read_vec().map(std::borrow::Cow::Owned),
            Some(s) => s.cow_slice().map_err(self.read_error()),
        }
    }

    /// One element by index (one per dimension); only its bytes are read from an
    /// uncompressed block.
    ///
    /// # Errors
    /// [`Error::Array`] for an index out of range.
    pub fn element(&self, index: &[usize]) -> Result<Element, Error> {
        match &self.located {
            Some(s) => s.element(index).map_err(self.read_error()),
            None => match &self.inline {
                Some(d) => d.element(index).map_err(array_error(&self.pointer)),
                None => Err(array_error(&self.pointer)(NdArrayError::MissingBlock)),
            },
        }
    }

    /// Calls `f` on slices of up to [`crate::CHUNK_ELEMENTS`] elements in C order, with
    /// memory bounded by a piece of the block (a compressed block is decoded a piece at a
    /// time).
    ///
    /// # Errors
    /// As [`Array::read`].
    pub fn for_each_chunk<T: Scalar>(&self, f: impl FnMut(&[T])) -> Result<(), Error> {
        // Memory is bounded, but time follows the claim: a view whose zero strides repeat its
        // data billions of times is refused, as a whole read is.
        self.refuse_repeated(&self.shape)?;
        self.with_threads(|| asdf_core_types::view::chunks_from_pieces(|g| self.pieces(g), f))
    }

    /// The facade's error for a read of the stored elements.
    fn read_error(&self) -> impl Fn(ReadError) -> Error + '_ {
        |e| match e {
            ReadError::Storage(source) => storage_error(&self.pointer)(source),
            ReadError::Array(source) => array_error(&self.pointer)(source),
            ReadError::TooLarge(bytes) => Error::ReadTooLarge {
                pointer: self.pointer.clone(),
                bytes,
                limit: self.file.options.layout_limits.max_block_bytes,
            },
        }
    }

    /// The bytes of an inline array are not had: its elements are in the tree.
    fn refuse_inline(&self) -> Result<(), Error> {
        if self.inline.is_some() {
            return Err(Error::NotSupported {
                pointer: self.pointer.clone(),
                problem: "an inline array's elements are in the tree, not in bytes: read them typed (`Vec<T>`) or with `values`",
            });
        }
        Ok(())
    }

    /// The elements as dynamically typed values, with the mask applied as flags (the
    /// block and the mask's block are read now): for callers that do not know the datatype
    /// (a viewer, a diff). Typed reads cost the array's own size, not 32 bytes per element.
    ///
    /// # Errors
    /// As [`Array::read`].
    pub fn values(&self) -> Result<ArrayValues, Error> {
        self.with_threads(|| self.all_values())
    }

    fn all_values(&self) -> Result<ArrayValues, Error> {
        self.check_whole()?;
        let err = array_error(&self.pointer);
        let block = match &self.located {
            Some(s) => Some(s.at.read().map_err(storage_error(&self.pointer))?.into_owned()),
            None => None,
        };
        let d = self.nd.decode(block.as_deref()).map_err(err)?;
        let mask = match &self.nd.mask {
            // Inline `null`s mask their places without a `mask` key.
            None => self.nd.mask_flags(&d, None).map_err(err)?,
            Some(asdf_core_types::Mask::Array(m)) => {
                let mb = self.file.block_bytes(m, &self.pointer)?;
                self.nd.mask_flags(&d, mb.as_deref()).map_err(err)?
            }
            Some(asdf_core_types::Mask::Value(_)) => self.nd.mask_flags(&d, None).map_err(err)?,
        };
        Ok(ArrayValues {
            datatype: d.datatype,
            shape: d.shape,
            elements: d.elements,
            mask,
        })
    }
}

/// costs the array's own size, not 32 bytes per element.
#[derive(Debug, Clone, PartialEq)]
pub struct ArrayValues {
    /// The element type.
    pub datatype: Datatype,
    /// The shape.
    pub shape: Vec<usize>,
    /// The elements, C order.
    pub elements: Vec<Element>,
    /// True for masked elements.
    pub mask: Option<Vec<bool>>,
}
