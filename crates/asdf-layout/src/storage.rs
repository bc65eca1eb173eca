//! Where an array's decoded bytes come from: the [`ArrayBytes`] trait, and its implementations
//! for what this crate owns (a block of a file, bytes held in memory).
//!
//! Each kind of storage is implemented by the crate that owns it: a block of this file and
//! bytes in memory here, a FITS HDU's data in `asdf-fits`, a chunked array's chunks in
//! `asdf-chunked`. The facade's array code reads through the trait and matches no kind.

use std::borrow::Cow;
use std::ops::Range;

use crate::reader::Reader;
use crate::source::ReadAt;

/// Why a storage's bytes could not be had: this crate's own errors, or the error of the
/// crate that owns the storage (a FITS HDU's, a chunked array's), boxed and downcast by the
/// caller that knows it.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// A block of the file: its header, its codec, its bytes, a limit.
    #[error(transparent)]
    Layout(#[from] crate::Error),
    /// The owning crate's error.
    #[error(transparent)]
    Owner(Box<dyn std::error::Error + Send + Sync>),
}

/// Where an array's data is, as the storage describes itself.
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
    /// In chunks (asdf-zarr's chunked arrays, ASDF.jl's), each its own block of this file or
    /// an object of a store.
    Chunked {
        /// The chunk shape.
        chunks: Vec<usize>,
        /// The chunks' compressor (its numcodecs id), `None` when uncompressed.
        compressor: Option<String>,
    },
    /// In the data of HDU `hdu` (zero-based) of the FITS file the ASDF file is in
    /// (`source: fits:NAME,VER`).
    Fits {
        /// The HDU's index.
        hdu: usize,
    },
}

/// What a read of a byte range costs, against a read of everything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeCost {
    /// Only the range's bytes (uncompressed bytes, a file's or in memory).
    Bytes,
    /// The compressed chunks the range spans (a Blosc2 frame).
    Chunks,
    /// Everything up to the range's end, decoded (a compressed stream, a chunked array).
    Prefix,
}

/// The decoded bytes of one array's data, C order as its view lays them out. What is read
/// may borrow for `'a` (from a memory map, a file held in memory, bytes the caller holds): a
/// zero-copy read outlives the storage handle.
pub trait ArrayBytes<'a>: std::fmt::Debug + Send + Sync {
    /// What the storage is.
    fn storage(&self) -> Storage;

    /// How many bytes the data decodes to: what a view is checked against.
    ///
    /// # Errors
    /// A header that cannot be read.
    fn len(&self) -> Result<u64, StorageError>;

    /// Whether the data decodes to no bytes.
    ///
    /// # Errors
    /// As [`ArrayBytes::len`].
    fn is_empty(&self) -> Result<bool, StorageError> {
        Ok(self.len()? == 0)
    }

    /// Every decoded byte (borrowed where the bytes are in memory or mapped, uncompressed).
    ///
    /// # Errors
    /// Read and codec errors, limits.
    fn read(&self) -> Result<Cow<'a, [u8]>, StorageError>;

    /// What [`ArrayBytes::read_range`] costs.
    fn range_cost(&self) -> RangeCost {
        RangeCost::Prefix
    }

    /// The decoded bytes in `range` (within [`ArrayBytes::len`]).
    ///
    /// # Errors
    /// A range outside the data; as [`ArrayBytes::read`].
    fn read_range(&self, range: Range<u64>) -> Result<Cow<'a, [u8]>, StorageError> {
        let all = self.read()?;
        let outside = |len: usize| {
            StorageError::Layout(crate::Error::Usage(crate::UsageError::RangeOutOfBlock {
                start: range.start,
                end: range.end,
                len: len as u64,
            }))
        };
        let (lo, hi) = match (usize::try_from(range.start), usize::try_from(range.end)) {
            (Ok(lo), Ok(hi)) if lo <= hi && hi <= all.len() => (lo, hi),
            _ => return Err(outside(all.len())),
        };
        Ok(match all {
            Cow::Borrowed(b) => Cow::Borrowed(&b[lo..hi]),
            Cow::Owned(b) => Cow::Owned(b[lo..hi].to_vec()),
        })
    }

    /// Hands `sink` the decoded bytes in order, a piece at a time: memory bounded by a piece,
    /// not by the data.
    ///
    /// # Errors
    /// As [`ArrayBytes::read`] (`sink` has then seen the pieces decoded so far).
    fn pieces(&self, sink: &mut dyn FnMut(&[u8])) -> Result<(), StorageError> {
        sink(&self.read()?);
        Ok(())
    }

    /// The C-ordered box of `extent` elements from `lo` (one per axis), decoded into its own
    /// bytes in the machine's byte order: `None` where the storage is no grid of chunks (a
    /// view of the bytes is then read instead).
    fn read_box(&self, lo: &[usize], extent: &[usize]) -> Option<Result<Vec<u8>, StorageError>> {
        let _ = (lo, extent);
        None
    }

    /// [`ArrayBytes::read_box`] straight into `out` (exactly the box's bytes).
    fn read_box_into(&self, lo: &[usize], extent: &[usize], out: &mut [u8]) -> Option<Result<(), StorageError>> {
        let _ = (lo, extent, out);
        None
    }
}

/// Block `index` of a file.
pub struct FileBlock<'r, R: ReadAt> {
    /// The file's reader.
    pub reader: &'r Reader<R>,
    /// The block's index.
    pub index: usize,
}

impl<R: ReadAt> std::fmt::Debug for FileBlock<'_, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileBlock")
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

impl<'r, R: ReadAt> ArrayBytes<'r> for FileBlock<'r, R> {
    fn storage(&self) -> Storage {
        Storage::Internal { block: self.index }
    }

    fn len(&self) -> Result<u64, StorageError> {
        Ok(self.reader.block(self.index)?.data_len())
    }

    fn read(&self) -> Result<Cow<'r, [u8]>, StorageError> {
        Ok(self.reader.read_data(self.index)?)
    }

    /// With `verify_checksums`, a block with a checksum is verified by a whole read, which a
    /// read of its bytes then is (`Prefix`): ranges are for reads of at most half of it.
    fn range_cost(&self) -> RangeCost {
        let Ok(b) = self.reader.block(self.index) else {
            return RangeCost::Prefix;
        };
        let label = b.compression();
        if self.reader.options().verify_checksums && b.header.has_checksum() {
            RangeCost::Prefix
        } else if label.is_none() {
            RangeCost::Bytes
        } else if label == crate::Label::BLS2 {
            RangeCost::Chunks
        } else {
            RangeCost::Prefix
        }
    }

    fn read_range(&self, range: Range<u64>) -> Result<Cow<'r, [u8]>, StorageError> {
        Ok(self.reader.read_range(self.index, range)?)
    }

    fn pieces(&self, sink: &mut dyn FnMut(&[u8])) -> Result<(), StorageError> {
        Ok(self.reader.read_data_pieces(self.index, sink)?)
    }
}

/// Decoded bytes held in memory (an array added since opening, another file's block already
/// read), with what they are.
#[derive(Debug)]
pub struct Held<'a> {
    /// The bytes.
    pub bytes: Cow<'a, [u8]>,
    /// What they are.
    pub storage: Storage,
}

impl<'a> ArrayBytes<'a> for Held<'a> {
    fn storage(&self) -> Storage {
        self.storage.clone()
    }

    fn len(&self) -> Result<u64, StorageError> {
        Ok(self.bytes.len() as u64)
    }

    /// Borrowed bytes are lent; owned ones copied (another file's block, read once).
    fn read(&self) -> Result<Cow<'a, [u8]>, StorageError> {
        Ok(match &self.bytes {
            Cow::Borrowed(b) => Cow::Borrowed(b),
            Cow::Owned(v) => Cow::Owned(v.clone()),
        })
    }

    fn read_range(&self, range: Range<u64>) -> Result<Cow<'a, [u8]>, StorageError> {
        let len = self.bytes.len();
        let (lo, hi) = match (usize::try_from(range.start), usize::try_from(range.end)) {
            (Ok(lo), Ok(hi)) if lo <= hi && hi <= len => (lo, hi),
            _ => {
                return Err(StorageError::Layout(crate::Error::Usage(
                    crate::UsageError::RangeOutOfBlock {
                        start: range.start,
                        end: range.end,
                        len: len as u64,
                    },
                )));
            }
        };
        Ok(match &self.bytes {
            Cow::Borrowed(b) => Cow::Borrowed(&b[lo..hi]),
            Cow::Owned(v) => Cow::Owned(v[lo..hi].to_vec()),
        })
    }

    fn range_cost(&self) -> RangeCost {
        RangeCost::Bytes
    }
}
