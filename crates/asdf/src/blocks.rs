//! Blocks: the [`Block`] handle, and where an array's bytes are found (a block of this file,
//! one added since, another file's block, a FITS HDU's data) and read from (whole, a range, or
//! in pieces with bounded memory).

use std::borrow::Cow;
use std::sync::Arc;

use asdf_core_types::{NdArray, NdArrayError, Source, View};
use asdf_layout::storage::{FileBlock, Held, Storage};
use asdf_layout::{BlockHeader, ChecksumStatus, Label};

use crate::error::{Error, array_error, storage_error};
use crate::file::{BlockIndex, Core};

pub(crate) use asdf_core_types::Piece;

/// Where an array's decoded bytes come from: a block of this file, bytes added since or read
/// from another file, a FITS HDU's data, a chunked array's chunks, each implemented by the
/// crate that owns it ([`asdf_layout::storage`]).
pub(crate) use asdf_core_types::stored::Bytes;

impl Core {
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

    /// The data of the HDU a `fits:` source names, checked to be readable as raw values.
    pub(crate) fn fits_data(&self, uri: &str, pointer: &str) -> Result<asdf_fits::file::HduData<'_>, Error> {
        let text = uri.trim_start_matches("fits:");
        let err = |source| Error::Fits {
            pointer: pointer.to_owned(),
            source,
        };
        let Some(fits) = &self.fits else {
            return Err(err(asdf_fits::FitsError::Source {
                text: text.to_owned(),
                problem: "a fits: source in a file that is not FITS",
            }));
        };
        let i = fits.source_hdu(text).map_err(err)?;
        Ok(fits.hdu_data(i, self.options.layout_limits.max_block_bytes))
    }

    /// The decoded bytes of `a`'s block (`None`: inline).
    pub(crate) fn block_bytes(&self, a: &NdArray, pointer: &str) -> Result<Option<Vec<u8>>, Error> {
        match self.locate(a, pointer)? {
            None => Ok(None),
            Some(at) => Ok(Some(at.read().map_err(storage_error(pointer))?.into_owned())),
        }
    }
}

/// A block of the file: its header, where it is, its checksum, and its data.
#[derive(Debug, Clone, Copy)]
pub struct Block<'f> {
    pub(crate) file: &'f Core,
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
