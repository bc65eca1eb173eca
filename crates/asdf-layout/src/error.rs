//! Errors and warnings of the layout layer.
//!
//! Every error that comes from the file's bytes names the byte offset where the problem was
//! found. Warnings are values collected on the [`Reader`](crate::Reader); nothing is printed.

use std::fmt;
use std::io;

use crate::compression::{CodecError, Label};
use crate::version::Version;

/// Result alias of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong while reading or writing the layout of an ASDF file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The bytes are not a well-formed ASDF file at `offset`.
    #[error("byte {offset}: {kind}")]
    Format {
        /// Byte offset from the start of the file.
        offset: u64,
        /// What was wrong.
        kind: FormatError,
    },
    /// The file is well formed but uses something this library does not support.
    #[error("byte {offset}: {kind}")]
    Unsupported {
        /// Byte offset from the start of the file.
        offset: u64,
        /// What is not supported.
        kind: Unsupported,
    },
    /// A configured [`Limits`](crate::Limits) value would be exceeded; nothing was allocated.
    #[error("{0}")]
    Limits(LimitError),
    /// The caller asked for something that cannot be done (a block that does not exist, a
    /// buffer of the wrong size, a write out of order).
    #[error("{0}")]
    Usage(UsageError),
    /// A block's data could not be decoded.
    #[error("block {block} at byte {offset} (compression {label}): {source}")]
    Codec {
        /// Index of the block.
        block: usize,
        /// Offset of the block's magic.
        offset: u64,
        /// The block's compression label.
        label: Label,
        /// What the codec reported.
        #[source]
        source: CodecError,
    },
    /// A block's stored MD5 matches neither its stored bytes nor its decoded bytes.
    #[error(
        "block {block} at byte {offset}: checksum mismatch (stored {}, MD5 of used bytes {})",
        hex(expected),
        hex(actual)
    )]
    Checksum {
        /// Index of the block.
        block: usize,
        /// Offset of the block's magic.
        offset: u64,
        /// The checksum stored in the block header.
        expected: [u8; 16],
        /// The MD5 of the block's used (stored) bytes.
        actual: [u8; 16],
    },
    /// Finding the file's blocks after the open failed (a reader that left them for later,
    /// [`ReadOptions::lazy_blocks`](crate::ReadOptions::lazy_blocks)): what an eager open
    /// would have refused the file for. Kept, and returned by every block read after it.
    #[error("finding the file's blocks: {0}")]
    Blocks(#[source] std::sync::Arc<Error>),
    /// An I/O error, with the offset of the read or write when known.
    #[error("I/O error{}: {source}", offset.map(|o| format!(" at byte {o}")).unwrap_or_default())]
    Io {
        /// Offset of the failed operation, when known.
        offset: Option<u64>,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

impl Error {
    pub(crate) fn format(offset: u64, kind: FormatError) -> Self {
        Error::Format { offset, kind }
    }

    pub(crate) fn io_at(offset: u64) -> impl FnOnce(io::Error) -> Error {
        move |source| Error::Io {
            offset: Some(offset),
            source,
        }
    }

    /// The [`FormatError`] kind, if this is a format error.
    #[must_use]
    pub fn format_kind(&self) -> Option<&FormatError> {
        match self {
            Error::Format { kind, .. } => Some(kind),
            Error::Blocks(e) => e.format_kind(),
            _ => None,
        }
    }

    /// The byte offset the error points at, if any.
    #[must_use]
    pub fn offset(&self) -> Option<u64> {
        match self {
            Error::Format { offset, .. }
            | Error::Unsupported { offset, .. }
            | Error::Codec { offset, .. }
            | Error::Checksum { offset, .. } => Some(*offset),
            Error::Io { offset, .. } => *offset,
            Error::Blocks(e) => e.offset(),
            Error::Limits(_) | Error::Usage(_) => None,
        }
    }
}

impl From<io::Error> for Error {
    fn from(source: io::Error) -> Self {
        Error::Io { offset: None, source }
    }
}

fn join_labels(labels: &[Label]) -> String {
    let names: Vec<String> = labels.iter().map(ToString::to_string).collect();
    names.join(", ")
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    use fmt::Write;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Ways the bytes of a file can be malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// The file does not start with `#ASDF` followed by a version.
    #[error("does not appear to be an ASDF file: expected a `#ASDF <version>` header line")]
    NotAsdf,
    /// The version after `#ASDF` or `#ASDF_STANDARD` could not be parsed.
    #[error("unparsable version `{0}`")]
    UnparsableVersion(String),
    /// A line between the header and the tree does not start with `#`.
    #[error("invalid content between header and tree: expected a `#` comment line, `%YAML` or a block")]
    JunkBeforeTree,
    /// The YAML tree has no `...` end-of-document line.
    #[error("end of YAML marker (`...` on its own line) not found for the tree starting here")]
    TreeEndNotFound,
    /// A block magic was expected here.
    #[error("expected block magic d3 42 4c 4b (89 42 4c 4b in FINF files), found {}", hex(.0))]
    BadBlockMagic(Vec<u8>),
    /// The block header is cut off by the end of the file.
    #[error("block header truncated: needs {needed} bytes, {available} available")]
    TruncatedBlockHeader {
        /// Bytes the header needs.
        needed: u64,
        /// Bytes left in the file.
        available: u64,
    },
    /// `header_size` is below the 48 bytes every block header has.
    #[error("block header size must be >= 48, found {0}")]
    BlockHeaderTooSmall(u16),
    /// `used_size` exceeds `allocated_size`.
    #[error("block used_size {used} exceeds allocated_size {allocated}")]
    UsedExceedsAllocated {
        /// used_size
        used: u64,
        /// allocated_size
        allocated: u64,
    },
    /// An uncompressed block whose `data_size` differs from its `used_size`.
    #[error("uncompressed block has data_size {data} but used_size {used}; they must be equal")]
    UncompressedSizeMismatch {
        /// used_size
        used: u64,
        /// data_size
        data: u64,
    },
    /// A block's space runs past the end of the file.
    #[error("block data runs to byte {end}, past the end of the file at {file_len}")]
    BlockBeyondEof {
        /// Where the block's used (or allocated) space ends.
        end: u64,
        /// The file's length.
        file_len: u64,
    },
    /// A streamed block that is not the last block.
    #[error("a streamed block must be the last block")]
    StreamedNotLast,
    /// A block header of a draft before 1.0.0 (`#ASDF 0.1.0`, `%FINF 0.1.0`) that fits none
    /// of the draft's layouts, or more than one.
    #[error("block header (header_size {header_size}) of a pre-1.0 file: {problem}")]
    LegacyBlockHeader {
        /// The header's `header_size`.
        header_size: u16,
        /// What is wrong.
        problem: LegacyHeaderProblem,
    },
}

impl FormatError {
    /// Whether a block header with this problem makes the file unreadable, not merely damaged
    /// from there on: a header_size below its fields, or a pre-1.0 header no layout reads
    /// (a cut-off header, used > allocated or an allocation past the end only stop the block
    /// scan, with a warning).
    #[must_use]
    pub fn refuses_open(&self) -> bool {
        match self {
            FormatError::BlockHeaderTooSmall(_) => true,
            FormatError::LegacyBlockHeader { problem, .. } => !matches!(
                problem,
                LegacyHeaderProblem::UsedExceedsAllocated { .. }
                    | LegacyHeaderProblem::BeyondFile { .. }
                    | LegacyHeaderProblem::SizesDisagree { .. }
            ),
            _ => false,
        }
    }
}

/// Why a block header of a draft before 1.0.0 was not read ([`FormatError::LegacyBlockHeader`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LegacyHeaderProblem {
    /// Smaller than the fields of its layout.
    #[error("too small: the fields need {need} bytes")]
    TooSmall {
        /// Bytes of fields the layout has.
        need: u16,
    },
    /// Unknown flags (or STREAMED and ENCODED together).
    #[error("unknown or contradictory flags {0:#x}")]
    Flags(u32),
    /// A compression label that is not NUL-padded ASCII letters and digits.
    #[error("compression label {} is not a name", hex(.0))]
    Label([u8; 4]),
    /// An encoding field that is not NUL-padded printable ASCII.
    #[error("the encoding field is not a NUL-padded name")]
    Encoding,
    /// `used_size` exceeds `allocated_size`.
    #[error("used_size {used} exceeds allocated_size {allocated}")]
    UsedExceedsAllocated {
        /// used_size
        used: u64,
        /// allocated_size
        allocated: u64,
    },
    /// An unencoded block whose memory (data) size differs from its used size.
    #[error("unencoded block with used_size {used} but memory size {data}")]
    SizesDisagree {
        /// used_size
        used: u64,
        /// memory_size / data_size
        data: u64,
    },
    /// The allocation runs past the end of the file.
    #[error("allocated_size {allocated} runs past the end of the file ({room} bytes left)")]
    BeyondFile {
        /// allocated_size
        allocated: u64,
        /// Bytes after the header.
        room: u64,
    },
    /// A header size none of the layouts fit.
    #[error("no block header layout of the 0.1.0 drafts fits it")]
    NoLayoutFits,
    /// A header size several layouts fit.
    #[error("it fits more than one layout of the 0.1.0 drafts ({0:?}); refusing to guess")]
    Ambiguous(Vec<crate::dialect::BlockLayout>),
}

/// Things this library does not support.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Unsupported {
    /// A file format version whose major number is not 1.
    #[error("unsupported ASDF file format version {0} (this library reads 1.x and the 0.1.0 drafts)")]
    FileFormatVersion(Version),
    /// A compression label that no registered codec handles.
    #[error("unknown compression `{0}`; supported compression types are: {list}", list = join_labels(.1))]
    Compression(Label, Vec<Label>),
    /// A streamed block with a compression label (its decoded size is unknown).
    #[error("a streamed block cannot be compressed")]
    CompressedStream,
    /// A pre-1.0 block whose `encoding` field names an encoding: the drafts left its meaning
    /// "TBD", so its data cannot be decoded.
    #[error("the block's encoding `{0}` (a pre-1.0 header field the drafts never defined) cannot be decoded")]
    BlockEncoding(String),
}

/// A configured limit that would be exceeded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LimitError {
    /// The YAML tree is larger than `Limits::max_tree_bytes`.
    #[error("the YAML tree is longer than the limit of {limit} bytes")]
    TreeBytes {
        /// The limit.
        limit: u64,
    },
    /// More blocks than `Limits::max_blocks`.
    #[error("the file has more than the limit of {limit} blocks")]
    Blocks {
        /// The limit.
        limit: usize,
    },
    /// A block claims a decoded size over `Limits::max_block_bytes`.
    #[error("block {block} claims {claimed} decoded bytes, over the limit of {limit}")]
    BlockBytes {
        /// Index of the block.
        block: usize,
        /// data_size from the header.
        claimed: u64,
        /// The limit.
        limit: u64,
    },
    /// The block index is larger than `Limits::max_index_bytes`.
    #[error("the block index is longer than the limit of {limit} bytes")]
    IndexBytes {
        /// The limit.
        limit: u64,
    },
    /// Memory for a block could not be reserved.
    #[error("could not allocate {bytes} bytes for block {block}")]
    Allocation {
        /// Index of the block.
        block: usize,
        /// Bytes requested.
        bytes: u64,
    },
}

/// Misuse of the API.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UsageError {
    /// A pre-1.0 file that cannot be written as asked.
    #[error("cannot write this pre-1.0 file: {0}")]
    LegacyWrite(&'static str),
    /// A block index past the last block.
    #[error("no block {index}: the file has {count} blocks")]
    NoSuchBlock {
        /// Requested index.
        index: usize,
        /// Number of blocks.
        count: usize,
    },
    /// A caller's buffer of the wrong length.
    #[error("buffer holds {got} bytes, the block decodes to {expected}")]
    BufferSize {
        /// Needed length.
        expected: u64,
        /// Given length.
        got: u64,
    },
    /// A byte range outside the block's data.
    #[error("range {start}..{end} is outside the block's {len} data bytes")]
    RangeOutOfBlock {
        /// Start of the range.
        start: u64,
        /// End of the range.
        end: u64,
        /// Block data length.
        len: u64,
    },
    /// Tree bytes handed to the writer do not form one `%YAML ... ...` document.
    #[error("tree bytes must start with `%YAML` and end with a `...` line")]
    TreeNotDelimited,
    /// The tree must be written before any block.
    #[error("the tree must be written before any block, and only once")]
    TreeAfterBlocks,
    /// Padding requested in a file without a tree (its first block must follow the header).
    #[error("padding is only allowed after a tree")]
    PaddingWithoutTree,
    /// Writing after a streamed block was started.
    #[error("nothing can follow a streamed block")]
    AfterStream,
    /// A compression label with no registered codec.
    #[error("no codec registered for compression `{0}`")]
    UnknownCodec(Label),
    /// allocated_size smaller than the data.
    #[error("allocated size {allocated} is smaller than the {used} bytes to store")]
    AllocationTooSmall {
        /// Requested allocation.
        allocated: u64,
        /// Bytes to store.
        used: u64,
    },
}

/// A problem found while reading that did not stop the read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Warning {
    /// The file format version is 1.x with x > 0: newer than this library knows.
    NewerFileFormat(Version),
    /// A block index was found but could not be parsed; blocks were found by scanning.
    IndexUnparsable {
        /// Offset of `#ASDF BLOCK INDEX`.
        offset: u64,
    },
    /// The block index lists no blocks; blocks were found by scanning.
    IndexEmpty {
        /// Offset of `#ASDF BLOCK INDEX`.
        offset: u64,
    },
    /// The block index disagrees with the file; blocks were found by scanning.
    IndexInvalid {
        /// Offset of `#ASDF BLOCK INDEX`.
        offset: u64,
        /// The index entry that failed the check.
        entry: usize,
        /// What was wrong.
        problem: IndexProblem,
    },
    /// Bytes after the last block that are neither a block index nor NUL padding.
    TrailingBytes {
        /// Where they start.
        offset: u64,
        /// Up to the first 16 of them.
        bytes: Vec<u8>,
    },
    /// A block header that cannot be read; no further blocks can be located.
    BadBlockHeader {
        /// Offset of its magic (or of the bad field).
        offset: u64,
        /// What is wrong.
        kind: FormatError,
    },
    /// A block's allocated space runs past the end of the file (the file may be truncated);
    /// no further blocks can be located.
    BlockTruncated {
        /// Index of the block.
        block: usize,
        /// Offset of its magic.
        offset: u64,
    },
}

/// Why a block index was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum IndexProblem {
    /// Entry 0 is not the offset of the first block after the tree.
    FirstBlockMismatch {
        /// What the index says.
        indexed: u64,
        /// Where the first block magic was found.
        found: u64,
    },
    /// Entries are not strictly increasing by at least one block header.
    NotIncreasing,
    /// An entry lies outside the file (past the index itself).
    OutOfFile,
    /// No valid block header at the entry's offset.
    NoBlockAtEntry,
    /// The last block does not end where the index starts.
    LastBlockEnd {
        /// Where the last indexed block's allocation ends.
        block_end: u64,
    },
    /// The last indexed block is streamed, which cannot coexist with an index.
    Streamed,
}

impl fmt::Display for IndexProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IndexProblem::FirstBlockMismatch { indexed, found } => {
                write!(f, "it says {indexed} but the first block is at {found}")
            }
            IndexProblem::NotIncreasing => f.write_str("offsets are not increasing by at least a block header"),
            IndexProblem::OutOfFile => f.write_str("the offset lies outside the file's blocks"),
            IndexProblem::NoBlockAtEntry => f.write_str("no valid block header at the offset"),
            IndexProblem::LastBlockEnd { block_end } => {
                write!(f, "the last block ends at {block_end}, not where the index starts")
            }
            IndexProblem::Streamed => f.write_str("a streamed block cannot have an index"),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::NewerFileFormat(v) => {
                write!(f, "file format version {v} is newer than 1.0.0; reading it as 1.0.0")
            }
            Warning::IndexUnparsable { offset } => write!(
                f,
                "byte {offset}: failed to read block index, falling back to serial reading"
            ),
            Warning::IndexEmpty { offset } => write!(
                f,
                "byte {offset}: invalid block index contents, no offsets, falling back to serial reading"
            ),
            Warning::IndexInvalid { offset, entry, problem } => write!(
                f,
                "byte {offset}: invalid block index contents for block {entry} ({problem}), falling back to serial reading"
            ),
            Warning::TrailingBytes { offset, bytes } => write!(
                f,
                "byte {offset}: read invalid bytes {} after blocks, your file might be corrupt",
                hex(bytes)
            ),
            Warning::BadBlockHeader { offset, kind } => {
                write!(f, "byte {offset}: unreadable block header ({kind}); no further blocks")
            }
            Warning::BlockTruncated { block, offset } => write!(
                f,
                "byte {offset}: block {block} runs past the end of the file; the file may be truncated"
            ),
        }
    }
}
