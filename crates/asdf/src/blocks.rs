//! Blocks: the [`Block`] handle, and where an array's bytes are found (a block of this file,
//! one added since, another file's block, a FITS HDU's data) and read from (whole, a range, or
//! in pieces with bounded memory).

use std::borrow::Cow;

use asdf_core_types::{ByteOrder, Datatype, Element, NdArray, NdArrayError, Scalar, Source, View};
use asdf_layout::{BlockHeader, ChecksumStatus, Label};

use crate::error::{Error, array_error};
use crate::file::{AsdfFile, BlockRef};

/// How elements are handed over internally: whole elements' bytes, or one at a time.
pub(crate) enum Piece<'a, T> {
    /// The bytes of whole elements in this byte order.
    Bytes(&'a [u8], ByteOrder),
    /// One element.
    One(T),
}

impl AsdfFile {
    /// Where the data of `a` (an ndarray of this file at `pointer`) lives.
    pub(crate) fn locate(&self, a: &NdArray, pointer: &str) -> Result<Option<BlockRef>, Error> {
        match &a.source {
            None => Ok(None),
            Some(Source::Block(i)) => self.block_ref(*i)?.map(Some).ok_or_else(|| Error::Array {
                pointer: pointer.to_owned(),
                source: NdArrayError::MissingBlock,
            }),
            Some(Source::Uri(u)) if u.starts_with("fits:") => Ok(Some(BlockRef::Fits(self.fits_hdu(u, pointer)?))),
            Some(Source::Uri(u)) => Ok(Some(BlockRef::External(u.clone()))),
        }
    }

    /// The decoded bytes of a block: borrowed from the memory map for uncompressed blocks.
    pub(crate) fn block_data(&self, at: BlockRef, pointer: &str) -> Result<std::borrow::Cow<'_, [u8]>, Error> {
        use std::borrow::Cow;
        match at {
            BlockRef::File(i) => Ok(self.reader.read_data(i)?),
            BlockRef::Pending(k) => Ok(Cow::Borrowed(self.pending[k].data.as_slice())),
            BlockRef::External(u) => Ok(Cow::Owned(self.external_block(&u, pointer)?)),
            BlockRef::Loaded(data) => Ok(Cow::Owned(data)),
            BlockRef::Fits(i) => self.fits_bytes(i, None),
            BlockRef::Chunked(c) => crate::zarr::decoded(&c, &self.reader)
                .map(Cow::Owned)
                .map_err(|source| Error::Chunked {
                    pointer: pointer.to_owned(),
                    source,
                }),
        }
    }

    /// The bytes `view` reads from its block: for a compressed block of this file of which the
    /// view touches at most half, only the range it touches is decoded (Blosc2 frames decode
    /// just the chunks it spans, streaming codecs stop at its end; special chunks need no
    /// buffer), and `view` is rebased onto that range. A 4-element view over a block that
    /// decodes to gigabytes costs its 4 elements' chunk, not the block.
    pub(crate) fn view_data(
        &self,
        view: &mut View,
        at: BlockRef,
        pointer: &str,
    ) -> Result<std::borrow::Cow<'_, [u8]>, Error> {
        if let BlockRef::File(i) = at {
            let b = self.reader.block(i)?;
            let range = view.byte_range();
            if !b.header.compression.is_none() && (range.end - range.start) <= b.data_len() / 2 {
                let data = self.reader.read_range(i, range.clone())?;
                view.offset -= range.start;
                return Ok(data);
            }
        }
        self.block_data(at, pointer)
    }

    pub(crate) fn view_of(&self, a: &NdArray, pointer: &str) -> Result<(View, BlockRef), Error> {
        let err = array_error(pointer);
        let at = self
            .locate(a, pointer)?
            .ok_or_else(|| err(NdArrayError::MissingBlock))?;
        // An external file's block has to be read for its length: keep what was read.
        let at = match at {
            BlockRef::External(u) => BlockRef::Loaded(self.external_block(&u, pointer)?),
            other => other,
        };
        let len = match &at {
            BlockRef::File(i) => self.reader.block(*i)?.data_len(),
            BlockRef::Pending(k) => self.pending[*k].data.len() as u64,
            BlockRef::External(_) => 0,
            BlockRef::Loaded(data) => data.len() as u64,
            BlockRef::Fits(i) => self
                .fits
                .as_deref()
                .and_then(|f| f.hdus.get(*i))
                .map_or(0, |h| h.data_len),
            BlockRef::Chunked(_) => 0,
        };
        Ok((View::new(a, len).map_err(err)?, at))
    }

    /// One element of the block-backed array `view` at `at` describes.
    pub(crate) fn element_at(
        &self,
        view: &View,
        at: BlockRef,
        pointer: &str,
        index: &[usize],
    ) -> Result<Element, Error> {
        let err = array_error(pointer);
        let off = view.element_offset(index).map_err(err)?;
        let size = view.datatype.size() as u64;
        let bytes = match at {
            BlockRef::File(i) => self.reader.read_range(i, off..off + size)?,
            BlockRef::Fits(i) => self.fits_bytes(i, Some(off..off + size))?,
            other => {
                let all = self.block_data(other, pointer)?;
                let (s, e) = (
                    usize::try_from(off).unwrap_or(usize::MAX),
                    usize::try_from(off + size).unwrap_or(usize::MAX),
                );
                std::borrow::Cow::Owned(
                    all.get(s..e)
                        .ok_or_else(|| err(NdArrayError::Invalid("index")))?
                        .to_vec(),
                )
            }
        };
        view.decode_one(&bytes).map_err(err)
    }

    /// The elements of the block-backed array `view` at `at` describes, one by one.
    pub(crate) fn iter_at<T: Scalar>(
        &self,
        mut view: View,
        at: BlockRef,
        pointer: &str,
    ) -> Result<asdf_core_types::Elements<'_, T>, Error> {
        let data = self.view_data(&mut view, at, pointer)?;
        view.iter(data).map_err(array_error(pointer))
    }

    /// Hands `g` the elements of the block-backed array `view` at `at` describes, in C order:
    /// the bytes of whole elements with their byte order, or (strided views, blocks not in
    /// this file) elements one by one; bounded memory: a compressed block is decoded piece by piece (about 1 MiB at a time), an uncompressed one read in pieces of the file.
    pub(crate) fn pieces_at<T: Scalar>(
        &self,
        view: &View,
        at: &BlockRef,
        pointer: &str,
        g: &mut dyn FnMut(Piece<'_, T>),
    ) -> Result<(), Error> {
        let err = array_error(pointer);
        let size = std::mem::size_of::<T>();
        let mut one_by_one = |xs: &mut dyn Iterator<Item = T>| {
            for x in xs {
                g(Piece::One(x));
            }
        };
        let BlockRef::File(block) = *at else {
            one_by_one(&mut self.iter_at::<T>(view.clone(), at.clone(), pointer)?);
            return Ok(());
        };
        if view.datatype != Datatype::Scalar(T::TYPE) {
            return Err(err(NdArrayError::TypeMismatch {
                want: T::TYPE,
                have: view.datatype.to_string(),
            }));
        }
        if !view.is_c_contiguous() {
            one_by_one(&mut self.iter_at::<T>(view.clone(), at.clone(), pointer)?);
            return Ok(());
        }
        let range = view.byte_range();
        let order = view.byteorder;
        // Position in the decoded block, and the bytes of an element split between pieces.
        let (mut pos, mut carry) = (0u64, Vec::<u8>::with_capacity(size));
        self.reader.read_data_pieces(block, &mut |piece: &[u8]| {
            let start = pos;
            pos += piece.len() as u64;
            let lo = usize::try_from(range.start.saturating_sub(start).min(piece.len() as u64)).unwrap_or(0);
            let hi = usize::try_from(range.end.saturating_sub(start).min(piece.len() as u64)).unwrap_or(0);
            let mut part = &piece[lo..hi.max(lo)];
            if !carry.is_empty() {
                let take = (size - carry.len()).min(part.len());
                carry.extend_from_slice(&part[..take]);
                part = &part[take..];
                if carry.len() == size {
                    g(Piece::Bytes(&carry, order));
                    carry.clear();
                }
            }
            let whole = part.len() - part.len() % size;
            if whole > 0 {
                g(Piece::Bytes(&part[..whole], order));
            }
            carry.extend_from_slice(&part[whole..]);
        })?;
        Ok(())
    }

    pub(crate) fn block_bytes(&self, a: &NdArray, pointer: &str) -> Result<Option<Vec<u8>>, Error> {
        match self.locate(a, pointer)? {
            None => Ok(None),
            Some(at) => Ok(Some(self.block_data(at, pointer)?.into_owned())),
        }
    }
}

/// A block of the file: its header, where it is, its checksum, and its data.
#[derive(Debug, Clone, Copy)]
pub struct Block<'f> {
    pub(crate) file: &'f AsdfFile,
    pub(crate) index: usize,
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
