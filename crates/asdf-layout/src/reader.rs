//! Opening a file: header, tree bounds, block discovery (index or scan), and block access.

use std::borrow::Cow;
use std::fs::File;
use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use crate::md5::Md5;

use crate::block::{BlockHeader, MIN_BLOCK_HEADER_LEN, find_magic_of};
use crate::compression::{Label, Registry};
use crate::error::{Error, FormatError, IndexProblem, LimitError, Result, Unsupported, UsageError, Warning};
use crate::header::{Content, FileHeader, read_file_header, read_tree};
use crate::index::{INDEX_HEADER, find_index, parse_index, read_index_bytes};
use crate::limits::Limits;
use crate::prefault::hand_over_mapped;
use crate::source::{Prefetched, ReadAt};

/// How blocks were located when the file was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BlockDiscovery {
    /// The file has no blocks.
    NoBlocks,
    /// The block index at this offset was checked and used.
    Index {
        /// Offset of `#ASDF BLOCK INDEX`.
        offset: u64,
    },
    /// Blocks were found by skipping along block headers (no usable index).
    Scan,
}

/// Which convention a verified checksum followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChecksumStatus {
    /// The checksum field is all zeros (or the block is streamed): nothing to verify.
    Absent,
    /// MD5 of the used (stored) bytes, as the standard says and asdf >= 5.3 writes.
    StoredBytes,
    /// MD5 of the decoded bytes of a compressed block, as asdf < 5.3 wrote.
    DecodedBytes,
}

/// Options for [`Reader::open_with`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ReadOptions {
    /// Allocation limits.
    pub limits: Limits,
    /// Codecs for compressed blocks.
    pub registry: Arc<Registry>,
    /// Use a valid block index when present (otherwise always scan).
    pub use_index: bool,
    /// Verify each block's checksum whenever its data is read.
    pub verify_checksums: bool,
    /// Find the blocks past the first on first need, not at open (default off): for sources
    /// where every read is a request (a remote file), an open that reads the tree and the
    /// first block then costs no read of the file's tail (its block index). The first block
    /// is still located and its header read at open; see [`Reader::warnings`].
    pub lazy_blocks: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            limits: Limits::default(),
            registry: Registry::shared_default(),
            use_index: true,
            verify_checksums: false,
            lazy_blocks: false,
        }
    }
}

impl ReadOptions {
    /// Sets the limits.
    #[must_use]
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }
    /// Sets the codec registry.
    #[must_use]
    pub fn registry(mut self, registry: Arc<Registry>) -> Self {
        self.registry = registry;
        self
    }
    /// Whether to use the block index.
    #[must_use]
    pub fn use_index(mut self, yes: bool) -> Self {
        self.use_index = yes;
        self
    }
    /// Whether to verify checksums on every data read.
    #[must_use]
    pub fn verify_checksums(mut self, yes: bool) -> Self {
        self.verify_checksums = yes;
        self
    }
    /// Whether to find the blocks past the first on first need (see
    /// [`ReadOptions::lazy_blocks`]).
    #[must_use]
    pub fn lazy_blocks(mut self, yes: bool) -> Self {
        self.lazy_blocks = yes;
        self
    }
}

/// Where a block is and what its header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockInfo {
    /// Position of the block in the file (0-based).
    pub index: usize,
    /// Offset of the block magic.
    pub offset: u64,
    /// Offset of the first data byte.
    pub data_offset: u64,
    /// The parsed header.
    pub header: BlockHeader,
    /// Stored bytes: `used_size`, or for a streamed block everything up to the end of file.
    pub stored_len: u64,
}

impl BlockInfo {
    /// Decoded length: `data_size`, or the stored length of a streamed block.
    #[must_use]
    pub fn data_len(&self) -> u64 {
        if self.header.is_streamed() {
            self.stored_len
        } else {
            self.header.data_size
        }
    }

    /// The compression label.
    #[must_use]
    pub fn compression(&self) -> Label {
        self.header.compression
    }
}

#[derive(Debug, Clone)]
struct Slot {
    offset: u64,
    header: OnceLock<BlockHeader>,
}

/// An open ASDF file at the layout level: header, tree bytes and blocks.
///
/// Opening reads the header, the tree and the block headers needed to locate blocks (with a
/// valid index: the first and last only). Block data is read only when asked for, one block
/// at a time, and an uncompressed range without reading the rest of its block.
///
/// ```
/// use asdf_layout::{Reader, Writer, BlockOptions, Version};
/// let mut w = Writer::new(Vec::new(), Version::STANDARD_LATEST)?;
/// w.write_tree(b"%YAML 1.1\n--- {x: 1}\n...\n")?;
/// w.write_block(&[1, 2, 3], &BlockOptions::default())?;
/// let bytes = w.finish(true)?;
/// let r = Reader::open(bytes)?;
/// assert_eq!(r.block_count(), 1);
/// assert_eq!(&*r.read_data(0)?, &[1, 2, 3]);
/// # Ok::<(), asdf_layout::Error>(())
/// ```
#[derive(Debug)]
pub struct Reader<S> {
    source: S,
    file_len: u64,
    header: FileHeader,
    tree_range: Option<Range<u64>>,
    tree: Option<Vec<u8>>,
    /// The open's warnings (before blocks are found).
    opened_warnings: Vec<Warning>,
    /// Where blocks start and the first block, while the rest is not yet found (lazy).
    pending: Option<(u64, Slot)>,
    found: OnceLock<Found>,
    options: ReadOptions,
}

/// What block discovery found.
#[derive(Debug)]
struct Found {
    slots: Vec<Slot>,
    discovery: BlockDiscovery,
    /// The open's warnings and discovery's.
    warnings: Vec<Warning>,
    /// Why discovery failed, when it ran after the open (lazy) and failed.
    failed: Option<Arc<Error>>,
}

impl Found {
    fn none(warnings: Vec<Warning>) -> Self {
        Found {
            slots: Vec::new(),
            discovery: BlockDiscovery::NoBlocks,
            warnings,
            failed: None,
        }
    }
}

impl Reader<File> {
    /// Opens the file at `path` with positioned reads.
    ///
    /// # Errors
    /// As [`Reader::open_with`], plus failing to open the file.
    pub fn open_path(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(File::open(path)?, ReadOptions::default())
    }
}

impl<S: ReadAt> Reader<S> {
    /// The reader of a file that has only its header: ASDF 1.0.0 of ASDF Standard `standard`,
    /// no tree, no blocks; made in memory, nothing is read from `source` (a new file, before
    /// it is first written).
    pub fn empty(source: S, standard: crate::Version) -> Self {
        Reader {
            source,
            file_len: 0,
            header: FileHeader {
                dialect: crate::Dialect::Asdf,
                format_version: crate::Version::new(1, 0, 0),
                standard_version: standard,
                standard_version_declared: true,
                comments: vec![format!("ASDF_STANDARD {standard}")],
                content_offset: 0,
                content: Content::Empty,
            },
            tree_range: None,
            tree: None,
            opened_warnings: Vec::new(),
            pending: None,
            found: OnceLock::from(Found::none(Vec::new())),
            options: ReadOptions::default(),
        }
    }

    /// Opens `source` with default options.
    ///
    /// # Errors
    /// As [`Reader::open_with`].
    pub fn open(source: S) -> Result<Self> {
        Self::open_with(source, ReadOptions::default())
    }

    /// Opens `source`: parses the header, locates the tree and the blocks.
    ///
    /// # Errors
    /// A malformed header or tree bounds, an invalid block header met while scanning, limits,
    /// I/O errors. An unknown compression label is not an error here (only when that block's
    /// data is read).
    pub fn open_with(source: S, options: ReadOptions) -> Result<Self> {
        Self::open_prefetched(Prefetched::new(source)?, options)
    }

    /// [`Reader::open_with`] on a source whose first bytes may already have been read
    /// through its cache (see [`Prefetched`]).
    ///
    /// # Errors
    /// As [`Reader::open_with`].
    pub fn open_prefetched(source: Prefetched<S>, options: ReadOptions) -> Result<Self> {
        let file_len = source.size()?;
        let r = Reader::open_cached(source, file_len, options)?;
        Ok(Reader {
            source: r.source.into_inner(),
            file_len: r.file_len,
            header: r.header,
            tree_range: r.tree_range,
            tree: r.tree,
            opened_warnings: r.opened_warnings,
            pending: r.pending,
            found: r.found,
            options: r.options,
        })
    }
}

impl<S: ReadAt> Reader<Prefetched<S>> {
    fn open_cached(source: Prefetched<S>, file_len: u64, options: ReadOptions) -> Result<Self> {
        let mut warnings = Vec::new();
        let header = read_file_header(&source, file_len, &options.limits, &mut warnings)?;
        let (tree_range, tree, blocks_from) = match header.content {
            Content::Tree => {
                let start = header.content_offset;
                let t = read_tree(&source, start, file_len, &options.limits)?;
                let end = start + t.len() as u64;
                (Some(start..end), Some(t), Some(end))
            }
            Content::Block => (None, None, Some(header.content_offset)),
            Content::Empty => (None, None, None),
        };
        let mut reader = Reader {
            source,
            file_len,
            header,
            tree_range,
            tree,
            opened_warnings: warnings,
            pending: None,
            found: OnceLock::new(),
            options,
        };
        let Some(from) = blocks_from else {
            reader.found = OnceLock::from(Found::none(reader.opened_warnings.clone()));
            return Ok(reader);
        };
        let magic = reader.header.dialect.block_magic();
        let Some(first) = find_magic_of(&reader.source, from, file_len, magic)? else {
            reader.found = OnceLock::from(Found::none(reader.opened_warnings.clone()));
            return Ok(reader);
        };
        // Lazy: the first block's header now (a block that does not parse is found the
        // eager way, with its errors and warnings at open), the rest on first need.
        if reader.options.lazy_blocks
            && reader.header.dialect == crate::Dialect::Asdf
            && let Ok(h) = BlockHeader::read_in(&reader.source, first, file_len, reader.header.dialect)
        {
            let slot = Slot {
                offset: first,
                header: OnceLock::from(h),
            };
            reader.pending = Some((first, slot));
            return Ok(reader);
        }
        let found = reader.discover(first)?;
        reader.found = OnceLock::from(found);
        Ok(reader)
    }
}

impl<S: ReadAt> Reader<S> {
    /// Finds the blocks from the first one's magic at `first`: by the index, else by scanning.
    fn discover(&self, first: u64) -> Result<Found> {
        let mut found = Found::none(self.opened_warnings.clone());
        if !(self.options.use_index
            && self.header.dialect != crate::Dialect::Finf
            && self.try_index(first, &mut found)?)
        {
            self.scan(first, &mut found)?;
        }
        Ok(found)
    }

    /// What discovery found, finding it now when it was deferred (a failure is kept: the
    /// blocks are then the first one, and every block read returns it).
    fn found(&self) -> &Found {
        self.found.get_or_init(|| {
            let Some((first, slot)) = &self.pending else {
                return Found::none(self.opened_warnings.clone());
            };
            self.discover(*first).unwrap_or_else(|e| Found {
                slots: vec![slot.clone()],
                discovery: BlockDiscovery::Scan,
                warnings: self.opened_warnings.clone(),
                failed: Some(Arc::new(e)),
            })
        })
    }

    /// Whether block 0 exists, without finding the others (a lazy reader knows its first
    /// block from the open).
    pub fn has_blocks(&self) -> bool {
        match self.found.get() {
            Some(f) => !f.slots.is_empty(),
            None => self.pending.is_some(),
        }
    }

    /// Whether block `index` exists. Block 0 is known from the open; asking for any other
    /// finds the blocks if they were left for later ([`Reader::find_blocks`]).
    ///
    /// # Errors
    /// What finding the blocks met.
    pub fn has_block(&self, index: usize) -> Result<bool> {
        if index == 0 && self.has_blocks() {
            return Ok(true);
        }
        Ok(index < self.find_blocks()?)
    }

    /// Whether the blocks past the first have been found (always, unless
    /// [`ReadOptions::lazy_blocks`]).
    pub fn blocks_found(&self) -> bool {
        self.found.get().is_some()
    }

    /// Finds the blocks now if they were left for later, and returns their count.
    ///
    /// # Errors
    /// What finding them met (as an eager open would have refused the file): limits, a
    /// block header below the minimum size, I/O errors.
    pub fn find_blocks(&self) -> Result<usize> {
        let f = self.found();
        match &f.failed {
            Some(e) => Err(Error::Blocks(Arc::clone(e))),
            None => Ok(f.slots.len()),
        }
    }

    /// Returns whether a valid index was found and installed.
    fn try_index(&self, first: u64, found: &mut Found) -> Result<bool> {
        let min = first + MIN_BLOCK_HEADER_LEN;
        let lim = self.options.limits.max_index_bytes;
        let Some(at) = find_index(&self.source, min, self.file_len, lim)? else {
            return Ok(false);
        };
        let bytes = match read_index_bytes(&self.source, at, self.file_len, lim) {
            Ok(b) => b,
            Err(Error::Limits(_)) => {
                found.warnings.push(Warning::IndexUnparsable { offset: at });
                return Ok(false);
            }
            Err(e) => return Err(e),
        };
        let Ok(offsets) = parse_index(&bytes) else {
            found.warnings.push(Warning::IndexUnparsable { offset: at });
            return Ok(false);
        };
        if offsets.is_empty() {
            found.warnings.push(Warning::IndexEmpty { offset: at });
            return Ok(false);
        }
        if offsets.len() > self.options.limits.max_blocks {
            return Err(Error::Limits(LimitError::Blocks {
                limit: self.options.limits.max_blocks,
            }));
        }
        match self.check_index(&offsets, first, at) {
            Ok((h0, hl)) => {
                let n = offsets.len();
                found.slots = offsets
                    .into_iter()
                    .map(|offset| Slot {
                        offset,
                        header: OnceLock::new(),
                    })
                    .collect();
                let _ = found.slots[0].header.set(h0);
                let _ = found.slots[n - 1].header.set(hl);
                found.discovery = BlockDiscovery::Index { offset: at };
                Ok(true)
            }
            Err((entry, problem)) => {
                found.warnings.push(Warning::IndexInvalid {
                    offset: at,
                    entry,
                    problem,
                });
                Ok(false)
            }
        }
    }

    /// The checks the standard recommends: entry 0 is the first block, entries increase by at
    /// least one header and lie before the index, the last entry is a block whose allocation
    /// ends where the index starts.
    fn check_index(
        &self,
        offsets: &[u64],
        first: u64,
        index_at: u64,
    ) -> std::result::Result<(BlockHeader, BlockHeader), (usize, IndexProblem)> {
        if offsets[0] != first {
            return Err((
                0,
                IndexProblem::FirstBlockMismatch {
                    indexed: offsets[0],
                    found: first,
                },
            ));
        }
        for (i, w) in offsets.windows(2).enumerate() {
            if w[1] < w[0].saturating_add(MIN_BLOCK_HEADER_LEN) {
                return Err((i + 1, IndexProblem::NotIncreasing));
            }
        }
        let last = offsets.len() - 1;
        if offsets[last].saturating_add(MIN_BLOCK_HEADER_LEN) > index_at {
            return Err((last, IndexProblem::OutOfFile));
        }
        let dialect = self.header.dialect;
        let h0 = BlockHeader::read_in(&self.source, first, index_at, dialect)
            .map_err(|_| (0, IndexProblem::NoBlockAtEntry))?;
        let hl = BlockHeader::read_in(&self.source, offsets[last], index_at, dialect)
            .map_err(|_| (last, IndexProblem::NoBlockAtEntry))?;
        if hl.is_streamed() {
            return Err((last, IndexProblem::Streamed));
        }
        let end = offsets[last]
            .saturating_add(hl.total_header_len())
            .saturating_add(hl.allocated_size);
        if end != index_at {
            return Err((last, IndexProblem::LastBlockEnd { block_end: end }));
        }
        Ok((h0, hl))
    }

    /// Finds blocks by skipping along headers from `first`.
    fn scan(&self, first: u64, found: &mut Found) -> Result<()> {
        found.slots.clear();
        found.discovery = BlockDiscovery::Scan;
        let mut pos = first;
        loop {
            if found.slots.len() >= self.options.limits.max_blocks {
                return Err(Error::Limits(LimitError::Blocks {
                    limit: self.options.limits.max_blocks,
                }));
            }
            let h = match BlockHeader::read_in(&self.source, pos, self.file_len, self.header.dialect) {
                Ok(h) => h,
                // A header_size below 48 (or a pre-1.0 header that fits no layout) is an error
                // at open (as in Python asdf); other damage (a cut-off header, used >
                // allocated) stops the scan with a warning, so the tree and the blocks before
                // it stay readable.
                Err(Error::Format { kind, offset }) if !kind.refuses_open() => {
                    found.warnings.push(Warning::BadBlockHeader { offset, kind });
                    return Ok(());
                }
                Err(e) => return Err(e),
            };
            let index = found.slots.len();
            let slot = Slot {
                offset: pos,
                header: OnceLock::new(),
            };
            let _ = slot.header.set(h);
            found.slots.push(slot);
            if h.is_streamed() {
                return Ok(());
            }
            let next = pos
                .saturating_add(h.total_header_len())
                .saturating_add(h.allocated_size);
            if next > self.file_len {
                found.warnings.push(Warning::BlockTruncated {
                    block: index,
                    offset: pos,
                });
                return Ok(());
            }
            let mut tail = [0u8; 4];
            let n = usize::try_from((self.file_len - next).min(4)).unwrap_or(0);
            self.source
                .read_exact_at(next, &mut tail[..n])
                .map_err(Error::io_at(next))?;
            let tail = &tail[..n];
            if n == 4 && tail == self.header.dialect.block_magic() {
                pos = next;
                continue;
            }
            if tail == &INDEX_HEADER[..n] || tail.iter().all(|&b| b == 0) {
                return Ok(());
            }
            let mut shown = vec![0u8; usize::try_from((self.file_len - next).min(16)).unwrap_or(0)];
            self.source
                .read_exact_at(next, &mut shown)
                .map_err(Error::io_at(next))?;
            found.warnings.push(Warning::TrailingBytes {
                offset: next,
                bytes: shown,
            });
            return Ok(());
        }
    }

    /// The parsed header and comment lines.
    pub fn file_header(&self) -> &FileHeader {
        &self.header
    }

    /// The file's length in bytes when it was opened.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// The YAML tree's bytes (from `%YAML` through the `...` line), if the file has a tree.
    pub fn tree_bytes(&self) -> Option<&[u8]> {
        self.tree.as_deref()
    }

    /// The tree's byte range in the file.
    pub fn tree_range(&self) -> Option<Range<u64>> {
        self.tree_range.clone()
    }

    /// Warnings collected while opening and finding the blocks (with
    /// [`ReadOptions::lazy_blocks`], those of finding the blocks once they are found:
    /// [`Reader::blocks_found`]).
    pub fn warnings(&self) -> &[Warning] {
        self.found.get().map_or(&self.opened_warnings, |f| &f.warnings)
    }

    /// How the blocks were located (finding them if they were left for later).
    pub fn block_discovery(&self) -> BlockDiscovery {
        self.found().discovery
    }

    /// Number of blocks (finding them if they were left for later; if that fails, the
    /// first block only, and every block read returns the failure: see
    /// [`Reader::find_blocks`]).
    pub fn block_count(&self) -> usize {
        self.found().slots.len()
    }

    /// Offsets of every block's magic, in file order (finding them if they were left for
    /// later).
    pub fn block_offsets(&self) -> Vec<u64> {
        self.found().slots.iter().map(|s| s.offset).collect()
    }

    /// The read options in force.
    pub fn options(&self) -> &ReadOptions {
        &self.options
    }

    /// The underlying source.
    pub fn get_ref(&self) -> &S {
        &self.source
    }

    /// Gives back the source.
    pub fn into_inner(self) -> S {
        self.source
    }

    /// Position and header of block `i` (reading the header if the index was used).
    ///
    /// # Errors
    /// [`UsageError::NoSuchBlock`]; a bad header at the indexed offset; I/O errors.
    pub fn block(&self, i: usize) -> Result<BlockInfo> {
        let slot = match (&self.pending, self.found.get()) {
            // The first block, known from a lazy open: nothing more to find.
            (Some((_, first)), None) if i == 0 => first,
            _ => {
                let found = self.found();
                if let Some(e) = &found.failed {
                    return Err(Error::Blocks(Arc::clone(e)));
                }
                found.slots.get(i).ok_or(Error::Usage(UsageError::NoSuchBlock {
                    index: i,
                    count: found.slots.len(),
                }))?
            }
        };
        let header = match slot.header.get() {
            Some(h) => *h,
            None => {
                let h = BlockHeader::read_in(&self.source, slot.offset, self.file_len, self.header.dialect)?;
                *slot.header.get_or_init(|| h)
            }
        };
        let data_offset = slot.offset + header.total_header_len();
        let stored_len = if header.is_streamed() {
            self.file_len.saturating_sub(data_offset)
        } else {
            header.used_size
        };
        Ok(BlockInfo {
            index: i,
            offset: slot.offset,
            data_offset,
            header,
            stored_len,
        })
    }

    /// [`Reader::check_stored_in_file`], and the stored bytes within the limit of a block read
    /// into memory.
    fn check_stored_readable(&self, b: &BlockInfo) -> Result<()> {
        self.check_stored_in_file(b)?;
        if b.stored_len > self.options.limits.max_block_bytes {
            return Err(Error::Limits(LimitError::BlockBytes {
                block: b.index,
                claimed: b.stored_len,
                limit: self.options.limits.max_block_bytes,
            }));
        }
        Ok(())
    }

    fn check_stored_in_file(&self, b: &BlockInfo) -> Result<()> {
        let end = b.data_offset.saturating_add(b.stored_len);
        if end > self.file_len {
            return Err(Error::format(
                b.offset,
                FormatError::BlockBeyondEof {
                    end,
                    file_len: self.file_len,
                },
            ));
        }
        Ok(())
    }

    fn stored_usize(&self, b: &BlockInfo) -> Result<usize> {
        usize::try_from(b.stored_len).map_err(|_| {
            Error::Limits(LimitError::BlockBytes {
                block: b.index,
                claimed: b.stored_len,
                limit: usize::MAX as u64,
            })
        })
    }

    /// The block's stored (possibly compressed) bytes: borrowed from memory-backed sources.
    ///
    /// # Errors
    /// As [`Reader::block`], plus data past the end of the file, limits, I/O errors.
    pub fn read_stored(&self, i: usize) -> Result<Cow<'_, [u8]>> {
        let b = self.block(i)?;
        self.check_stored_readable(&b)?;
        let len = self.stored_usize(&b)?;
        self.source
            .bytes_at(b.data_offset, len)
            .map_err(Error::io_at(b.data_offset))
    }

    /// Block `i`'s stored (possibly compressed) bytes handed to `sink` in pieces (the whole
    /// range at once from memory-backed sources, 4 MiB reads otherwise): bounded memory
    /// whatever the block's size.
    ///
    /// # Errors
    /// As [`Reader::read_stored`]; `sink`'s error stops the read.
    pub fn read_stored_pieces(&self, i: usize, sink: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        let b = self.block(i)?;
        self.check_stored_in_file(&b)?;
        if self.source.holds_in_memory() {
            return sink(&self.read_stored(i)?);
        }
        const STEP: u64 = 4 << 20;
        let mut at = 0;
        while at < b.stored_len {
            let len = usize::try_from((b.stored_len - at).min(STEP)).unwrap_or(0);
            let piece = self
                .source
                .bytes_at(b.data_offset + at, len)
                .map_err(Error::io_at(b.data_offset + at))?;
            sink(&piece)?;
            at += len as u64;
        }
        Ok(())
    }

    fn check_decodable(&self, b: &BlockInfo) -> Result<()> {
        let h = &b.header;
        if let Some(name) = h.encoding_name() {
            return Err(Error::Unsupported {
                offset: b.offset,
                kind: Unsupported::BlockEncoding(name),
            });
        }
        if h.compression.is_none() {
            if !h.is_streamed() && h.data_size != h.used_size {
                return Err(Error::format(
                    b.offset + 30,
                    FormatError::UncompressedSizeMismatch {
                        used: h.used_size,
                        data: h.data_size,
                    },
                ));
            }
            return Ok(());
        }
        if self.options.registry.get(h.compression).is_none() {
            return Err(Error::Unsupported {
                offset: b.offset + 10,
                kind: Unsupported::Compression(h.compression, self.options.registry.labels()),
            });
        }
        if h.is_streamed() {
            return Err(Error::Unsupported {
                offset: b.offset + 10,
                kind: Unsupported::CompressedStream,
            });
        }
        if h.data_size > self.options.limits.max_block_bytes {
            return Err(Error::Limits(LimitError::BlockBytes {
                block: b.index,
                claimed: h.data_size,
                limit: self.options.limits.max_block_bytes,
            }));
        }
        Ok(())
    }

    /// The codec of block `b`'s label.
    fn codec(&self, b: &BlockInfo) -> Result<&Arc<dyn crate::Codec>> {
        let label = b.header.compression;
        self.options.registry.get(label).ok_or_else(|| Error::Unsupported {
            offset: b.offset + 10,
            kind: Unsupported::Compression(label, self.options.registry.labels()),
        })
    }

    fn decode_into(&self, b: &BlockInfo, stored: &[u8], out: &mut [u8]) -> Result<()> {
        self.codec(b)?.decode(stored, out).map_err(codec_error(b))
    }

    fn maybe_verify(&self, b: &BlockInfo, stored: &[u8], decoded: Option<&[u8]>) -> Result<()> {
        if self.options.verify_checksums {
            verify(b, stored, decoded)?;
        }
        Ok(())
    }

    /// The block's decoded bytes: borrowed for uncompressed blocks of memory-backed sources.
    ///
    /// # Errors
    /// Unknown compression, a stream that decodes to a size other than `data_size`, limits,
    /// a checksum mismatch (with `verify_checksums`), I/O errors.
    pub fn read_data(&self, i: usize) -> Result<Cow<'_, [u8]>> {
        let b = self.block(i)?;
        self.check_decodable(&b)?;
        let stored = self.read_stored(i)?;
        if b.header.compression.is_none() {
            self.maybe_verify(&b, &stored, None)?;
            return Ok(stored);
        }
        let out = self.decode_owned(&b, &stored)?;
        self.maybe_verify(&b, &stored, Some(&out))?;
        Ok(Cow::Owned(out))
    }

    /// Decodes block `b` (stored bytes `stored`) into a new buffer, with memory bounded by what
    /// the stream really decodes to, not by what the header claims: a plausible claim (at most
    /// [`PLAUSIBLE_RATIO`] times the stored size, or 64 MiB) gets a lazily zeroed buffer of the
    /// claim decoded in place (on all cores for chunked codecs; pages the stream never writes
    /// are never touched); a larger claim is decoded in pieces into a buffer that grows with
    /// the output, so a lie ends in a size error before memory follows it.
    fn decode_owned(&self, b: &BlockInfo, stored: &[u8]) -> Result<Vec<u8>> {
        let err = || {
            Error::Limits(LimitError::Allocation {
                block: b.index,
                bytes: b.header.data_size,
            })
        };
        let expected = usize::try_from(b.header.data_size).map_err(|_| err())?;
        let plausible = stored.len().saturating_mul(PLAUSIBLE_RATIO).max(64 << 20);
        if expected <= plausible {
            let mut out = crate::compression::zeroed(expected).ok_or_else(err)?;
            self.decode_into(b, stored, &mut out)?;
            return Ok(out);
        }
        let codec = self.codec(b)?;
        let mut out: Vec<u8> = Vec::new();
        let mut failed = false;
        codec
            .decode_pieces(stored, expected, &mut |piece| {
                if failed || out.try_reserve(piece.len()).is_err() {
                    failed = true;
                    return;
                }
                out.extend_from_slice(piece);
            })
            .map_err(codec_error(b))?;
        if failed {
            return Err(err());
        }
        Ok(out)
    }

    /// Decodes block `i` into `buf`, which must be exactly [`BlockInfo::data_len`] long.
    ///
    /// # Errors
    /// [`UsageError::BufferSize`], and as [`Reader::read_data`].
    pub fn read_data_into(&self, i: usize, buf: &mut [u8]) -> Result<()> {
        let b = self.block(i)?;
        self.check_decodable(&b)?;
        if buf.len() as u64 != b.data_len() {
            return Err(Error::Usage(UsageError::BufferSize {
                expected: b.data_len(),
                got: buf.len() as u64,
            }));
        }
        if b.header.compression.is_none() {
            self.check_stored_in_file(&b)?;
            self.source
                .read_exact_at(b.data_offset, buf)
                .map_err(Error::io_at(b.data_offset))?;
            return self.maybe_verify(&b, buf, None);
        }
        let stored = self.read_stored(i)?;
        self.decode_into(&b, &stored, buf)?;
        self.maybe_verify(&b, &stored, Some(buf))
    }

    /// Bytes `range` of block `i`'s decoded data. For an uncompressed block only those bytes
    /// are read; a compressed block is decoded whole first.
    ///
    /// # Errors
    /// [`UsageError::RangeOutOfBlock`], and as [`Reader::read_data`] (checksums are not
    /// verified on partial reads).
    pub fn read_range(&self, i: usize, range: Range<u64>) -> Result<Cow<'_, [u8]>> {
        let b = self.block(i)?;
        self.check_decodable(&b)?;
        if range.start > range.end || range.end > b.data_len() {
            return Err(Error::Usage(UsageError::RangeOutOfBlock {
                start: range.start,
                end: range.end,
                len: b.data_len(),
            }));
        }
        if b.header.compression.is_none() {
            self.check_stored_in_file(&b)?;
            let len = usize::try_from(range.end - range.start).unwrap_or(usize::MAX);
            let at = b.data_offset + range.start;
            return self.source.bytes_at(at, len).map_err(Error::io_at(at));
        }
        let (s, e) = (
            usize::try_from(range.start).unwrap_or(usize::MAX),
            usize::try_from(range.end).unwrap_or(usize::MAX),
        );
        if self.options.verify_checksums && b.header.has_checksum() {
            // The whole block is decoded to be verified.
            let all = self.read_data(i)?;
            return Ok(Cow::Owned(all[s..e].to_vec()));
        }
        // Only what the range needs: pieces up to its end (bounded memory), or for codecs
        // with random access (Blosc2 frames) only the chunks it touches.
        let expected = usize::try_from(b.header.data_size).map_err(|_| {
            Error::Limits(LimitError::Allocation {
                block: b.index,
                bytes: b.header.data_size,
            })
        })?;
        let codec = self.codec(&b)?;
        let out = if self.source.holds_in_memory() {
            let stored = self.read_stored(i)?;
            codec.decode_range(&stored, expected, s..e).map_err(codec_error(&b))?
        } else {
            // Read from a file or a server: only what the codec asks for (a Blosc2 frame's
            // header, index and touched chunks); an I/O error is reported as itself.
            self.check_stored_readable(&b)?;
            let mut failed = None;
            let mut read = |off: u64, len: usize| -> std::result::Result<Vec<u8>, crate::compression::CodecError> {
                let end = off.checked_add(len as u64).filter(|&end| end <= b.stored_len);
                let Some(_) = end else {
                    return Err(crate::compression::CodecError::Truncated { consumed: off });
                };
                let at = b.data_offset + off;
                match self.source.bytes_at(at, len) {
                    Ok(bytes) => Ok(bytes.into_owned()),
                    Err(e) => {
                        failed = Some(Error::io_at(at)(e));
                        Err(crate::compression::CodecError::Truncated { consumed: off })
                    }
                }
            };
            let r = codec.decode_range_from(b.stored_len, &mut read, expected, s..e);
            if let Some(e) = failed {
                return Err(e);
            }
            r.map_err(codec_error(&b))?
        };
        if out.len() != e - s {
            return Err(codec_error(&b)(crate::compression::CodecError::SizeMismatch {
                expected: (e - s) as u64,
                actual: out.len() as u64,
            }));
        }
        Ok(Cow::Owned(out))
    }

    /// Block `i`'s decoded bytes handed to `sink` in consecutive pieces, with bounded memory
    /// whatever the block's size: uncompressed blocks in 4 MiB pieces of the file (borrowed
    /// from a memory map), compressed ones as the codec decodes them (see
    /// [`crate::Codec::decode_pieces`]). With `verify_checksums` the block is read whole and
    /// verified first.
    ///
    /// # Errors
    /// As [`Reader::read_data`]; an error may come after some pieces were handed over.
    pub fn read_data_pieces(&self, i: usize, sink: &mut dyn FnMut(&[u8])) -> Result<()> {
        let b = self.block(i)?;
        self.check_decodable(&b)?;
        if self.options.verify_checksums && b.header.has_checksum() && !b.header.is_streamed() {
            // Hashed as the pieces go by: the mismatch, if any, comes after them.
            let mut stored_md5 = Md5::new();
            let mut decoded_md5 = Md5::new();
            let compressed = !b.header.compression.is_none();
            if compressed {
                stored_md5.update(&self.read_stored(i)?);
            }
            self.pieces(&b, &mut |p| {
                decoded_md5.update(p);
                sink(p);
            })?;
            let decoded: [u8; 16] = decoded_md5.finalize();
            let stored: [u8; 16] = if compressed { stored_md5.finalize() } else { decoded };
            return if stored == b.header.checksum || decoded == b.header.checksum {
                Ok(())
            } else {
                Err(checksum_error(&b, stored))
            };
        }
        self.pieces(&b, sink)
    }

    /// [`Reader::read_data_pieces`] without checksums.
    fn pieces(&self, b: &BlockInfo, sink: &mut dyn FnMut(&[u8])) -> Result<()> {
        let i = b.index;
        if b.header.compression.is_none() {
            self.check_stored_in_file(b)?;
            if self.source.holds_in_memory() {
                let len = usize::try_from(b.stored_len).map_err(|_| {
                    Error::Limits(LimitError::Allocation {
                        block: b.index,
                        bytes: b.stored_len,
                    })
                })?;
                let data = self
                    .source
                    .bytes_at(b.data_offset, len)
                    .map_err(Error::io_at(b.data_offset))?;
                hand_over_mapped(&data, sink);
                return Ok(());
            }
            // Others are read 4 MiB at a time.
            return self.read_stored_pieces(i, &mut |p| {
                sink(p);
                Ok(())
            });
        }
        let stored = self.read_stored(i)?;
        let codec = self.codec(b)?;
        let expected = usize::try_from(b.header.data_size).map_err(|_| {
            Error::Limits(LimitError::Allocation {
                block: b.index,
                bytes: b.header.data_size,
            })
        })?;
        codec.decode_pieces(&stored, expected, sink).map_err(codec_error(b))
    }

    /// Reads block `i` whole as [`Reader::verify`] does for one block: decodes every byte (in
    /// pieces, with bounded memory whatever the block's size or claim) and checks the checksum
    /// against the stored or the decoded bytes, saying which matched.
    ///
    /// # Errors
    /// As [`Reader::read_data`] and [`Reader::verify_checksum`].
    pub fn check_block(&self, i: usize) -> Result<ChecksumStatus> {
        let b = self.block(i)?;
        self.check_decodable(&b)?;
        let wants_sum = b.header.has_checksum() && !b.header.is_streamed();
        let compressed = !b.header.compression.is_none();
        let stored_md5: Option<[u8; 16]> = if wants_sum && compressed {
            Some(md5_of(&self.read_stored(i)?))
        } else {
            None
        };
        let mut decoded_md5 = Md5::new();
        self.pieces(&b, &mut |p| {
            if wants_sum {
                decoded_md5.update(p);
            }
        })?;
        if !wants_sum {
            return Ok(ChecksumStatus::Absent);
        }
        let decoded: [u8; 16] = decoded_md5.finalize();
        match stored_md5 {
            None if decoded == b.header.checksum => Ok(ChecksumStatus::StoredBytes),
            None => Err(checksum_error(&b, decoded)),
            Some(s) if s == b.header.checksum => Ok(ChecksumStatus::StoredBytes),
            Some(_) if decoded == b.header.checksum => Ok(ChecksumStatus::DecodedBytes),
            Some(s) => Err(checksum_error(&b, s)),
        }
    }

    /// Verifies block `i`'s checksum, saying which convention matched.
    ///
    /// Uncompressed blocks are hashed in 1 MiB pieces without holding the block in memory.
    ///
    /// # Errors
    /// [`Error::Checksum`] when neither the stored nor the decoded bytes match; read and decode
    /// errors.
    pub fn verify_checksum(&self, i: usize) -> Result<ChecksumStatus> {
        let b = self.block(i)?;
        if !b.header.has_checksum() || b.header.is_streamed() {
            return Ok(ChecksumStatus::Absent);
        }
        self.check_stored_in_file(&b)?;
        if b.header.compression.is_none() {
            let mut hasher = Md5::new();
            let mut buf = vec![0u8; 1 << 20];
            let mut pos = b.data_offset;
            let end = b.data_offset + b.stored_len;
            while pos < end {
                let n = usize::try_from((end - pos).min(buf.len() as u64)).unwrap_or(buf.len());
                self.source
                    .read_exact_at(pos, &mut buf[..n])
                    .map_err(Error::io_at(pos))?;
                hasher.update(&buf[..n]);
                pos += n as u64;
            }
            let actual: [u8; 16] = hasher.finalize();
            return if actual == b.header.checksum {
                Ok(ChecksumStatus::StoredBytes)
            } else {
                Err(checksum_error(&b, actual))
            };
        }
        let mut stored_md5 = Md5::new();
        self.read_stored_pieces(i, &mut |p| {
            stored_md5.update(p);
            Ok(())
        })?;
        let actual: [u8; 16] = stored_md5.finalize();
        if actual == b.header.checksum {
            return Ok(ChecksumStatus::StoredBytes);
        }
        let stored = self.read_stored(i)?;
        // The older convention: MD5 of the decoded bytes, hashed as they are decoded (bounded
        // memory whatever the block's size).
        self.check_decodable(&b)?;
        let expected = usize::try_from(b.header.data_size).map_err(|_| {
            Error::Limits(LimitError::Allocation {
                block: b.index,
                bytes: b.header.data_size,
            })
        })?;
        let mut hasher = Md5::new();
        self.codec(&b)?
            .decode_pieces(&stored, expected, &mut |p| hasher.update(p))
            .map_err(codec_error(&b))?;
        let decoded: [u8; 16] = hasher.finalize();
        if decoded == b.header.checksum {
            Ok(ChecksumStatus::DecodedBytes)
        } else {
            Err(checksum_error(&b, actual))
        }
    }
}

pub use crate::md5::md5_of;

fn checksum_error(b: &BlockInfo, actual: [u8; 16]) -> Error {
    Error::Checksum {
        block: b.index,
        offset: b.offset,
        expected: b.header.checksum,
        actual,
    }
}

fn verify(b: &BlockInfo, stored: &[u8], decoded: Option<&[u8]>) -> Result<ChecksumStatus> {
    if !b.header.has_checksum() || b.header.is_streamed() {
        return Ok(ChecksumStatus::Absent);
    }
    let actual = md5_of(stored);
    if actual == b.header.checksum {
        return Ok(ChecksumStatus::StoredBytes);
    }
    if let Some(d) = decoded
        && md5_of(d) == b.header.checksum
    {
        return Ok(ChecksumStatus::DecodedBytes);
    }
    Err(checksum_error(b, actual))
}

/// Turns a codec's error on block `b` into an [`Error::Codec`] naming the block.
fn codec_error(b: &BlockInfo) -> impl Fn(crate::CodecError) -> Error + '_ {
    move |source| Error::Codec {
        block: b.index,
        offset: b.offset,
        label: b.header.compression,
        source,
    }
}

/// How many times its stored size a compressed block may claim to decode to before its
/// decoding buffer grows with the output instead of being reserved up front (deflate's
/// limit is about 1032; lz4's 255).
const PLAUSIBLE_RATIO: usize = 1024;
