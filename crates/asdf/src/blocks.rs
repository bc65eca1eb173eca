//! Blocks: the [`Block`] handle, and where an array's bytes are found (a block of this file,
//! one added since, another file's block, a FITS HDU's data) and read from (whole, a range, or
//! in pieces with bounded memory).

use std::borrow::Cow;
use std::sync::Arc;

use asdf_core_types::{Datatype, Element, NdArray, NdArrayError, Scalar, Source, View};
use asdf_layout::storage::{ArrayBytes, FileBlock, Held, RangeCost, Storage};
use asdf_layout::{BlockHeader, ChecksumStatus, Label};

use crate::error::{Error, array_error, storage_error};
use crate::file::{AsdfFile, BlockIndex};

pub(crate) use asdf_core_types::Piece;

/// Where an array's decoded bytes come from: a block of this file, bytes added since or read
/// from another file, a FITS HDU's data, a chunked array's chunks, each implemented by the
/// crate that owns it ([`asdf_layout::storage`]).
pub(crate) type Bytes<'f> = Arc<dyn ArrayBytes<'f> + 'f>;

impl AsdfFile {
    /// Where the data of `a` (an ndarray of this file at `pointer`) lives (`None`: inline);
    /// another file's block (exploded form) is read now.
    pub(crate) fn locate(&self, a: &NdArray, pointer: &str) -> Result<Option<Bytes<'_>>, Error> {
        Ok(Some(match &a.source {
            None => return Ok(None),
            Some(Source::Block(i)) => match self.block_ref(*i)? {
                Some(BlockIndex::File(index)) => Arc::new(FileBlock {
                    reader: &self.reader,
                    index,
                }),
                Some(BlockIndex::Pending(k)) => Arc::new(Held {
                    bytes: Cow::Borrowed(self.pending[k].data.as_slice()),
                    storage: Storage::New,
                }),
                None => return Err(array_error(pointer)(NdArrayError::MissingBlock)),
            },
            Some(Source::Uri(u)) if u.starts_with("fits:") => Arc::new(self.fits_data(u, pointer)?),
            Some(Source::Uri(u)) => Arc::new(Held {
                bytes: Cow::Owned(self.external_block(u, pointer)?),
                storage: Storage::External { uri: u.clone() },
            }),
        }))
    }

    /// The view of the block-backed ndarray `a`, checked against its storage's length, and
    /// the storage.
    pub(crate) fn view_of(&self, a: &NdArray, pointer: &str) -> Result<(View, Bytes<'_>), Error> {
        let err = array_error(pointer);
        let at = self
            .locate(a, pointer)?
            .ok_or_else(|| err(NdArrayError::MissingBlock))?;
        let len = at.len().map_err(storage_error(pointer))?;
        Ok((View::new(a, len).map_err(err)?, at))
    }

    /// The decoded bytes of `a`'s block (`None`: inline).
    pub(crate) fn block_bytes(&self, a: &NdArray, pointer: &str) -> Result<Option<Vec<u8>>, Error> {
        match self.locate(a, pointer)? {
            None => Ok(None),
            Some(at) => Ok(Some(at.read().map_err(storage_error(pointer))?.into_owned())),
        }
    }
}

/// The bytes `view` reads from `at`: only the range it touches where a range costs its
/// bytes, or (compressed) where it touches at most half of the data (Blosc2 frames decode just
/// the chunks it spans, streaming codecs stop at its end), `view` then rebased onto that range.
/// A 4-element view over a block that decodes to gigabytes costs its 4 elements' chunk.
pub(crate) fn view_data<'a>(view: &mut View, at: &dyn ArrayBytes<'a>, pointer: &str) -> Result<Cow<'a, [u8]>, Error> {
    let range = view.byte_range();
    let len = at.len().map_err(storage_error(pointer))?;
    let ranged = match at.range_cost() {
        RangeCost::Bytes => true,
        RangeCost::Chunks | RangeCost::Prefix => range.end - range.start <= len / 2,
    };
    if ranged && range.end <= len {
        let data = at.read_range(range.clone()).map_err(storage_error(pointer))?;
        view.offset -= range.start;
        return Ok(data);
    }
    at.read().map_err(storage_error(pointer))
}

/// One element of the block-backed array `view` describes over `at`: only its bytes read.
pub(crate) fn element_at(
    view: &View,
    at: &dyn ArrayBytes<'_>,
    pointer: &str,
    index: &[usize],
) -> Result<Element, Error> {
    let err = array_error(pointer);
    let off = view.element_offset(index).map_err(err)?;
    let size = view.datatype.size() as u64;
    let bytes = at.read_range(off..off + size).map_err(storage_error(pointer))?;
    view.decode_one(&bytes).map_err(err)
}

/// Hands `g` the elements of the block-backed array `view` describes over `at`, in C order:
/// the bytes of whole elements with their byte order, or (strided views, another datatype)
/// elements one by one; bounded memory where the storage hands its bytes in pieces (a
/// compressed block decoded about 1 MiB at a time, a chunked array a row of chunks at a time).
pub(crate) fn pieces_at<T: Scalar>(
    view: &View,
    at: &dyn ArrayBytes<'_>,
    pointer: &str,
    g: &mut dyn FnMut(Piece<'_, T>),
) -> Result<(), Error> {
    let err = array_error(pointer);
    let size = std::mem::size_of::<T>();
    if view.datatype != Datatype::Scalar(T::TYPE) || !view.is_c_contiguous() {
        let mut view = view.clone();
        let data = view_data(&mut view, at, pointer)?;
        for x in view.iter::<T>(data).map_err(err)? {
            g(Piece::One(x));
        }
        return Ok(());
    }
    let range = view.byte_range();
    let order = view.byteorder;
    // Position in the decoded data, and the bytes of an element split between pieces.
    let (mut pos, mut carry) = (0u64, Vec::<u8>::with_capacity(size));
    at.pieces(&mut |piece: &[u8]| {
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
    })
    .map_err(storage_error(pointer))
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
