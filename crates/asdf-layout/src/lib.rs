//! The byte layout of ASDF files (ASDF Standard 1.0.0-1.6.0, file format 1.0.0).
//!
//! This crate knows everything about an ASDF file's bytes except the meaning of its YAML
//! tree: the `#ASDF` header and comment lines, where the tree starts and ends, the binary
//! blocks and their headers (the drafts' layouts too), the block index, checksums, and writing
//! all of that back; the codecs are the `asdf-codecs` crate's. It reads through [`ReadAt`] (positioned reads from files, byte buffers or
//! memory maps), so opening a file never reads block data, and reading one block never reads
//! another.
//!
//! ```
//! use asdf_layout::{BlockOptions, Label, Reader, Version, Writer, ChecksumStatus};
//!
//! // Write a tree and two blocks, one zlib-compressed.
//! let mut w = Writer::new(Vec::new(), Version::STANDARD_LATEST)?;
//! w.write_tree(b"%YAML 1.1\n--- {a: 1}\n...\n")?;
//! w.write_block(&[0u8; 64], &BlockOptions::default())?;
//! w.write_block(&[7u8; 1000], &BlockOptions::default().compression(Label::ZLIB))?;
//! let file = w.finish(true)?;
//!
//! // Read it back.
//! let r = Reader::open(file)?;
//! assert_eq!(r.file_header().standard_version, Version::new(1, 6, 0));
//! assert_eq!(r.tree_bytes(), Some(&b"%YAML 1.1\n--- {a: 1}\n...\n"[..]));
//! assert_eq!(r.block_count(), 2);
//! assert_eq!(r.read_data(1)?.len(), 1000);
//! assert_eq!(r.verify_checksum(1)?, ChecksumStatus::StoredBytes);
//! assert!(r.warnings().is_empty());
//! # Ok::<(), asdf_layout::Error>(())
//! ```

pub mod atomic;
pub mod block;
pub mod copy;
mod dialect;
mod error;
pub mod guard;
pub mod header;
pub mod index;
pub mod legacy;
mod limits;
pub mod md5;
mod prefault;
mod reader;
pub mod source;
pub mod storage;
pub mod update;
mod version;
mod writer;

/// The block codecs (the `asdf-codecs` crate).
pub use asdf_codecs as compression;
pub use asdf_codecs::{Codec, CodecError, Label, PIECE, Registry};
pub use block::{BLOCK_MAGIC, BlockHeader, BlockLayout, Dialect, FLAG_ENCODED, FLAG_STREAMED};
pub use error::{
    Error, FormatError, IndexProblem, LegacyHeaderProblem, LimitError, Result, Unsupported, UsageError, Warning,
};
pub use header::{Content, FileHeader};
pub use limits::Limits;
pub use reader::{BlockDiscovery, BlockInfo, ChecksumStatus, ReadOptions, Reader, md5_of};
#[cfg(feature = "mmap")]
pub use source::MmapSource;
pub use source::{Prefetched, ReadAt, RecordingSource, SeekSource};
pub use version::{ParseVersionError, Version};
pub use writer::{BlockOptions, PAD_BLOCK, PieceSink, StreamWriter, Writer, WrittenBlock, padded_size};

/// The first read when searching a file (for the end of the tree, a block magic, the block
/// index): most trees and indexes are small.
pub(crate) const FIRST_READ: usize = 4 * 1024;
/// Later reads of such a search grow up to this size.
pub(crate) const MAX_READ: usize = 64 * 1024;
