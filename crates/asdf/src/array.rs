//! Typed handles: [`Array`] for an ndarray of the tree, [`Block`] for a block of the file.

use crate::{AsdfFile, BlockRef, Error, Piece, array_error};
use asdf_core_types::{ByteOrder, Datatype, Element, NdArray, NdArrayError, Scalar, Source, View};
use asdf_layout::{BlockHeader, ChecksumStatus, Label};
use std::borrow::Cow;

/// Where an array's data is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Storage {
    /// In block `block` of this file.
    Internal {
        /// The block's index.
        block: usize,
    },
    /// In the tree (`data:` lists).
    Inline,
    /// In another file (exploded form), named by `uri`.
    External {
        /// The file's URI, relative to this file.
        uri: String,
    },
    /// Added since the file was opened, not yet written.
    New,
    /// In the data of HDU `hdu` (zero-based) of the FITS file the ASDF file is in
    /// (`source: fits:NAME,VER`).
    Fits {
        /// The HDU's index.
        hdu: usize,
    },
}

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
    file: &'f AsdfFile,
    pointer: String,
    nd: NdArray,
    shape: Vec<usize>,
    datatype: Datatype,
    /// A block-backed array's view (checked against its block) and where its block is:
    /// resolved once, when the handle is made; every read starts from here.
    located: Option<(View, BlockRef)>,
    /// An inline array's elements, decoded once (to learn its shape) and kept.
    inline: Option<asdf_core_types::Decoded>,
}

impl AsdfFile {
    /// The ndarray at `pointer`, as a handle: no block data is read until a read method is
    /// called (an array in another file, exploded form, is read now to learn its length).
    ///
    /// # Errors
    /// [`Error::NotFound`]; [`Error::Array`] when the node is not a valid ndarray or its
    /// block does not hold it.
    pub fn array(&self, pointer: &str) -> Result<Array<'_>, Error> {
        self.array_of(self.ndarray_at(pointer)?, pointer)
    }

    /// The handle of the ndarray `nd` found at `pointer`.
    pub(crate) fn array_of(&self, nd: NdArray, pointer: &str) -> Result<Array<'_>, Error> {
        let err = array_error(pointer);
        let (shape, datatype, located, inline) = if nd.source.is_none() {
            let d = nd.decode(None).map_err(err)?;
            (d.shape.clone(), d.datatype.clone(), None, Some(d))
        } else {
            let (view, at) = self.view_of(&nd, pointer)?;
            (view.shape.clone(), view.datatype.clone(), Some((view, at)), None)
        };
        Ok(Array {
            file: self,
            pointer: pointer.to_owned(),
            nd,
            shape,
            datatype,
            located,
            inline,
        })
    }

    /// The JSON pointers of every ndarray in the tree, in document order (not through
    /// aliases, so an array is listed once; a mask array belongs to its ndarray and is not
    /// listed).
    #[must_use]
    pub fn array_pointers(&self) -> Vec<String> {
        let root = &self.doc.root;
        let mut out = Vec::new();
        root.walk_with(&mut |path, n| {
            if n.tag.as_deref().is_some_and(asdf_core_types::is_ndarray_tag) {
                out.push(asdf_yaml::pointer::pointer_of(root, path));
                return asdf_yaml::Visit::SkipChildren;
            }
            asdf_yaml::Visit::Continue
        });
        out
    }

    /// Every ndarray of the tree as a handle, in document order. An ndarray that cannot be
    /// read (a missing block, a bad node) is an `Err` in its place; the others still come.
    pub fn arrays(&self) -> impl Iterator<Item = Result<Array<'_>, Error>> + '_ {
        self.array_pointers().into_iter().map(|p| self.array(&p))
    }

    /// Every block of the file, as handles (header fields, offsets, checksum state, reads
    /// into a caller's buffer).
    pub fn blocks(&self) -> impl ExactSizeIterator<Item = Block<'_>> + '_ {
        (0..self.reader.block_count()).map(|index| Block { file: self, index })
    }

    /// Block `index` of the file.
    ///
    /// # Errors
    /// [`Error::NotFound`] when the file has no such block.
    pub fn block(&self, index: usize) -> Result<Block<'_>, Error> {
        if index < self.reader.block_count() {
            Ok(Block { file: self, index })
        } else {
            Err(Error::NotFound(format!(
                "block {index} (the file has {})",
                self.reader.block_count()
            )))
        }
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
        match (&self.nd.source, self.located.as_ref().map(|(_, at)| at)) {
            (None, _) => Storage::Inline,
            (Some(Source::Uri(u)), _) => Storage::External { uri: u.clone() },
            (_, Some(BlockRef::File(i))) => Storage::Internal { block: *i },
            (_, Some(BlockRef::Fits(i))) => Storage::Fits { hdu: *i },
            _ => Storage::New,
        }
    }

    /// The compression of the array's block (`Label::NONE` when uncompressed); `None` for
    /// arrays not in a block of this file.
    #[must_use]
    pub fn compression(&self) -> Option<Label> {
        match self.located.as_ref().map(|(_, at)| at) {
            Some(BlockRef::File(i)) => self.file.reader.block(*i).ok().map(|b| b.compression()),
            Some(BlockRef::Pending(k)) => self.file.pending.get(*k).map(|p| p.compression.unwrap_or(Label::NONE)),
            _ => None,
        }
    }

    /// Whether the ndarray has a mask (read it with [`AsdfFile::array_values`]).
    #[must_use]
    pub fn is_masked(&self) -> bool {
        self.nd.mask.is_some()
    }

    /// How the elements lie in the array's block (datatype, byte order, shape, strides in
    /// bytes, offset of the first element), checked against the block's length when the
    /// handle was made; `None` for an inline array (its elements are in the tree).
    #[must_use]
    pub fn view(&self) -> Option<&View> {
        self.located.as_ref().map(|(v, _)| v)
    }

    /// Hands `g` the elements in C order: the bytes of whole elements with their byte order,
    /// or elements one by one (inline arrays, strided views, blocks not in this file).
    pub(crate) fn pieces<T: Scalar>(&self, g: &mut dyn FnMut(Piece<'_, T>)) -> Result<(), Error> {
        match &self.located {
            None => {
                for x in self.read::<T>()? {
                    g(Piece::One(x));
                }
                Ok(())
            }
            Some((view, at)) => self.file.pieces_at(view, at, &self.pointer, g),
        }
    }

    /// The elements one by one from the block (not for inline arrays: `MissingBlock`).
    pub(crate) fn iter<T: Scalar>(&self) -> Result<asdf_core_types::Elements<'f, T>, Error> {
        let err = array_error(&self.pointer);
        let (view, at) = self.located.as_ref().ok_or_else(|| err(NdArrayError::MissingBlock))?;
        self.file.iter_at(view.clone(), at.clone(), &self.pointer)
    }

    /// The elements as `Vec<T>`, C order, native byte order (`T` must be the datatype:
    /// `f32` for float32).
    ///
    /// # Errors
    /// [`Error::Array`] with `TypeMismatch`; block and codec errors.
    pub fn read<T: Scalar>(&self) -> Result<Vec<T>, Error> {
        match (&self.inline, &self.located) {
            (Some(d), _) => crate::typed_elements(d, &self.pointer),
            (None, Some((view, at))) => {
                let mut view = view.clone();
                let data = self.file.view_data(&mut view, at.clone(), &self.pointer)?;
                view.to_vec(&data).map_err(array_error(&self.pointer))
            }
            (None, None) => Err(array_error(&self.pointer)(NdArrayError::MissingBlock)),
        }
    }

    /// The elements into `out` (exactly [`Array::len`] of them), C order, native byte order,
    /// decoded straight into it: no intermediate copy of the array. A compressed block is
    /// decoded a piece at a time.
    ///
    /// # Errors
    /// [`Error::Array`] with `ShapeMismatch` when `out` is not the array's length; as
    /// [`Array::read`].
    pub fn read_into<T: Scalar>(&self, out: &mut [T]) -> Result<(), Error> {
        let err = array_error(&self.pointer);
        if out.len() != self.len() {
            return Err(err(NdArrayError::ShapeMismatch));
        }
        let size = std::mem::size_of::<T>();
        let mut at = 0usize;
        let mut overflow = false;
        self.pieces::<T>(&mut |p| match p {
            Piece::Bytes(bytes, order) => {
                let n = bytes.len() / size;
                let Some(dst) = out.get_mut(at..at + n) else {
                    overflow = true;
                    return;
                };
                match T::as_native(bytes, order) {
                    Some(src) => dst.copy_from_slice(src),
                    None => {
                        for (d, c) in dst.iter_mut().zip(bytes.chunks_exact(size)) {
                            *d = T::read(c, order);
                        }
                    }
                }
                at += n;
            }
            Piece::One(x) => match out.get_mut(at) {
                Some(d) => {
                    *d = x;
                    at += 1;
                }
                None => overflow = true,
            },
        })?;
        if overflow || at != out.len() {
            return Err(err(NdArrayError::ShapeMismatch));
        }
        Ok(())
    }

    /// The array as an `ndarray::ArrayD<T>` (feature `ndarray`).
    ///
    /// # Errors
    /// As [`Array::read`].
    #[cfg(feature = "ndarray")]
    pub fn to_ndarray<T: Scalar>(&self) -> Result<ndarray::ArrayD<T>, Error> {
        let v = self.read::<T>()?;
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&self.shape), v)
            .map_err(|_| array_error(&self.pointer)(NdArrayError::ShapeMismatch))
    }

    /// One element by index (one per dimension); only its bytes are read from an
    /// uncompressed block.
    ///
    /// # Errors
    /// [`Error::Array`] for an index out of range.
    pub fn element(&self, index: &[usize]) -> Result<Element, Error> {
        match &self.located {
            Some((view, at)) => self.file.element_at(view, at.clone(), &self.pointer, index),
            None => match &self.inline {
                Some(d) => AsdfFile::inline_element(d, &self.pointer, index),
                None => Err(array_error(&self.pointer)(NdArrayError::MissingBlock)),
            },
        }
    }

    /// One element by index, as `T`.
    ///
    /// # Errors
    /// As [`Array::element`]; `TypeMismatch` when `T` is not the datatype.
    pub fn get<T: Scalar>(&self, index: &[usize]) -> Result<T, Error> {
        let err = array_error(&self.pointer);
        if self.datatype != Datatype::Scalar(T::TYPE) {
            return Err(err(NdArrayError::TypeMismatch {
                want: T::TYPE,
                have: self.datatype.to_string(),
            }));
        }
        let e = self.element(index)?;
        T::from_element(&e).ok_or_else(|| err(NdArrayError::Invalid("data")))
    }

    /// Rows `rows` of the first dimension (all of the others), C order: a slice of the
    /// array. Elements before the first row are skipped, not decoded into memory.
    ///
    /// # Errors
    /// [`Error::Array`] when `rows` is past the end; as [`Array::read`].
    pub fn read_rows<T: Scalar + 'f>(&self, rows: std::ops::Range<usize>) -> Result<Vec<T>, Error> {
        let err = array_error(&self.pointer);
        let first = self.shape.first().copied().unwrap_or(1);
        if rows.start > rows.end || rows.end > first {
            return Err(err(NdArrayError::Invalid("rows")));
        }
        let row: usize = self.shape.iter().skip(1).product();
        let (skip, take) = (rows.start * row, (rows.end - rows.start) * row);
        Ok(self.elements::<T>()?.skip(skip).take(take).collect())
    }

    /// The elements one by one, C order (the block is decoded once and held while the
    /// iterator lives; inline arrays are decoded first).
    ///
    /// # Errors
    /// As [`Array::read`].
    pub fn elements<T: Scalar + 'f>(&self) -> Result<Box<dyn Iterator<Item = T> + 'f>, Error> {
        if self.nd.source.is_none() {
            return Ok(Box::new(self.read::<T>()?.into_iter()));
        }
        Ok(Box::new(self.iter::<T>()?))
    }

    /// The elements in chunks of `n` (the last may be shorter), C order: an iterator that can
    /// stop early, and zip with another array's chunks.
    ///
    /// ```no_run
    /// let f = asdf::open("pair.asdf")?;
    /// let (a, b) = (f.array("/a")?, f.array("/b")?);
    /// let mut dot = 0.0;
    /// for (x, y) in a.chunks::<f64>(4096)?.zip(b.chunks::<f64>(4096)?) {
    ///     dot += x.iter().zip(&y).map(|(x, y)| x * y).sum::<f64>();
    /// }
    /// # Ok::<(), asdf::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Array::read`]; [`Error::Usage`] when `n` is 0.
    pub fn chunks<T: Scalar + 'f>(&self, n: usize) -> Result<Chunks<'f, T>, Error> {
        if n == 0 {
            return Err(Error::Usage("a chunk of 0 elements"));
        }
        Ok(Chunks {
            inner: self.elements::<T>()?,
            n,
        })
    }

    /// Calls `f` on slices of up to [`crate::CHUNK_ELEMENTS`] elements in C order, with
    /// memory bounded by a piece of the block (see [`AsdfFile::array_chunks`]).
    ///
    /// # Errors
    /// As [`Array::read`].
    pub fn for_each_chunk<T: Scalar>(&self, f: impl FnMut(&[T])) -> Result<(), Error> {
        crate::chunks_from_pieces(|g| self.pieces(g), f)
    }
}

/// Chunks of an array's elements; see [`Array::chunks`].
pub struct Chunks<'f, T> {
    inner: Box<dyn Iterator<Item = T> + 'f>,
    n: usize,
}

impl<T> std::fmt::Debug for Chunks<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chunks").field("n", &self.n).finish_non_exhaustive()
    }
}

impl<T> Iterator for Chunks<'_, T> {
    type Item = Vec<T>;
    fn next(&mut self) -> Option<Vec<T>> {
        let v: Vec<T> = self.inner.by_ref().take(self.n).collect();
        (!v.is_empty()).then_some(v)
    }
}

/// A block of the file: its header, where it is, its checksum, and its data.
#[derive(Debug, Clone, Copy)]
pub struct Block<'f> {
    file: &'f AsdfFile,
    index: usize,
}

impl Block<'_> {
    /// The block's index in the file.
    #[must_use]
    pub fn index(&self) -> usize {
        self.index
    }

    fn info(&self) -> Result<asdf_layout::BlockInfo, Error> {
        Ok(self.file.reader.block(self.index)?)
    }

    /// The block header (flags, compression, allocated, used and data sizes, checksum).
    ///
    /// # Errors
    /// A header that cannot be read.
    pub fn header(&self) -> Result<BlockHeader, Error> {
        Ok(self.info()?.header)
    }

    /// Where the block (its magic) starts in the file.
    ///
    /// # Errors
    /// As [`Block::header`].
    pub fn offset(&self) -> Result<u64, Error> {
        Ok(self.info()?.offset)
    }

    /// Where its stored bytes start in the file.
    ///
    /// # Errors
    /// As [`Block::header`].
    pub fn data_offset(&self) -> Result<u64, Error> {
        Ok(self.info()?.data_offset)
    }

    /// The compression (`Label::NONE` when uncompressed).
    ///
    /// # Errors
    /// As [`Block::header`].
    pub fn compression(&self) -> Result<Label, Error> {
        Ok(self.info()?.compression())
    }

    /// How many bytes the data has once decoded.
    ///
    /// # Errors
    /// As [`Block::header`].
    pub fn data_len(&self) -> Result<u64, Error> {
        Ok(self.info()?.data_len())
    }

    /// Whether the block was written streamed (its size is the rest of the file).
    ///
    /// # Errors
    /// As [`Block::header`].
    pub fn is_streamed(&self) -> Result<bool, Error> {
        Ok(self.info()?.header.is_streamed())
    }

    /// Verifies the checksum: what it covers when it matches (`Absent` when the header has
    /// none).
    ///
    /// # Errors
    /// [`asdf_layout::Error`] checksum mismatch, and read errors.
    pub fn verify_checksum(&self) -> Result<ChecksumStatus, Error> {
        Ok(self.file.reader.verify_checksum(self.index)?)
    }

    /// The decoded data (borrowed from a memory map when uncompressed).
    ///
    /// # Errors
    /// Read and codec errors.
    pub fn read(&self) -> Result<Cow<'_, [u8]>, Error> {
        Ok(self.file.reader.read_data(self.index)?)
    }

    /// The decoded data into `buf`, replacing what it held and reusing its capacity. Memory
    /// follows what the block really decodes to, a piece at a time, never the size its header
    /// claims: the way to read a block from a file you do not trust.
    ///
    /// # Errors
    /// Read and codec errors (`buf` then holds the pieces decoded so far).
    pub fn read_into_vec(&self, buf: &mut Vec<u8>) -> Result<(), Error> {
        buf.clear();
        Ok(self
            .file
            .reader
            .read_data_pieces(self.index, &mut |piece| buf.extend_from_slice(piece))?)
    }

    /// The decoded data into `buf`, which must be exactly [`Block::data_len`] bytes: no
    /// intermediate copy. (Sizing `buf` from a header's claim trusts the file; see
    /// [`Block::read_into_vec`].)
    ///
    /// # Errors
    /// A length mismatch, read and codec errors.
    pub fn read_into(&self, buf: &mut [u8]) -> Result<(), Error> {
        Ok(self.file.reader.read_data_into(self.index, buf)?)
    }
}
