//! Writing the layout: header and comments, the caller's tree bytes, padding, blocks, an
//! optional streamed last block, and the block index.

use std::io::{self, Seek, SeekFrom, Write};
use std::sync::Arc;

use crate::block::{BLOCK_HEADER_FIELDS, BlockHeader, FLAG_STREAMED};
use crate::compression::{Label, Registry};
use crate::error::{Error, Result, UsageError};
use crate::index::index_bytes;
use crate::reader::md5_of;
use crate::version::Version;

/// How one block is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct BlockOptions {
    /// Compression label ([`Label::NONE`] for none).
    pub compression: Label,
    /// Store the MD5 of the stored bytes (otherwise all zeros).
    pub checksum: bool,
    /// Extra bytes allocated after the data (unused space for later growth).
    pub padding: u64,
    /// header_size to write (at least 48; more aligns the data).
    pub header_size: u16,
    /// Allocate room to grow as Python asdf's `pad_blocks=True` does: the allocated size is
    /// raised to [`padded_size`] of the stored size (`padding` is then ignored).
    pub pad_blocks: bool,
}

/// The file-system block size Python asdf pads to.
pub const PAD_BLOCK: u64 = 4096;

/// The size Python asdf's `pad_blocks=True` reserves for `len` bytes: 10% more, rounded up to
/// whole 4096-byte blocks, plus one block (80 bytes -> 8192).
#[must_use]
pub fn padded_size(len: u64) -> u64 {
    let grown = len.saturating_add(len.div_ceil(10));
    (grown.div_ceil(PAD_BLOCK).saturating_add(1)).saturating_mul(PAD_BLOCK)
}

impl Default for BlockOptions {
    /// Uncompressed, with checksum, no padding, 48-byte header.
    fn default() -> Self {
        Self {
            compression: Label::NONE,
            checksum: true,
            padding: 0,
            header_size: BLOCK_HEADER_FIELDS,
            pad_blocks: false,
        }
    }
}

impl BlockOptions {
    /// Sets the compression.
    #[must_use]
    pub fn compression(mut self, label: Label) -> Self {
        self.compression = label;
        self
    }
    /// Sets whether to write a checksum.
    #[must_use]
    pub fn checksum(mut self, yes: bool) -> Self {
        self.checksum = yes;
        self
    }
    /// Sets the unused bytes after the data.
    #[must_use]
    pub fn padding(mut self, bytes: u64) -> Self {
        self.padding = bytes;
        self
    }
    /// Sets whether room to grow is allocated as Python asdf's `pad_blocks=True` does.
    #[must_use]
    pub fn pad_blocks(mut self, yes: bool) -> Self {
        self.pad_blocks = yes;
        self
    }
    /// Sets header_size (values below 48 are raised to 48).
    #[must_use]
    pub fn header_size(mut self, size: u16) -> Self {
        self.header_size = size.max(BLOCK_HEADER_FIELDS);
        self
    }
}

/// Where a written block landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrittenBlock {
    /// Offset of the block magic.
    pub offset: u64,
    /// Offset of the first data byte.
    pub data_offset: u64,
    /// The header written.
    pub header: BlockHeader,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    BeforeTree,
    AfterTree,
    Blocks,
}

/// Writes an ASDF file's layout to any [`Write`].
///
/// Order: [`Writer::new`] (header and comments), [`Writer::write_tree`] (optional),
/// [`Writer::write_padding`] (optional), blocks, then [`Writer::finish`] (block index) or
/// [`Writer::start_stream`] (a streamed last block, no index).
#[derive(Debug)]
pub struct Writer<W: Write> {
    inner: W,
    pos: u64,
    offsets: Vec<u64>,
    state: State,
    registry: Arc<Registry>,
}

impl<W: Write> Writer<W> {
    /// Writes `#ASDF 1.0.0` and `#ASDF_STANDARD {standard}`.
    ///
    /// # Errors
    /// I/O errors.
    pub fn new(inner: W, standard: Version) -> Result<Self> {
        Self::with_comments(inner, standard, &[], Registry::shared_default())
    }

    /// Like [`Writer::new`], with extra comment lines (each written as `#text`) and a codec
    /// registry.
    ///
    /// # Errors
    /// I/O errors.
    pub fn with_comments(inner: W, standard: Version, comments: &[&str], registry: Arc<Registry>) -> Result<Self> {
        let mut w = Writer {
            inner,
            pos: 0,
            offsets: Vec::new(),
            state: State::BeforeTree,
            registry,
        };
        let mut head = format!("#ASDF {}\n#ASDF_STANDARD {standard}\n", Version::FILE_FORMAT_1_0_0);
        for c in comments {
            for line in c.lines() {
                head.push('#');
                head.push_str(line);
                head.push('\n');
            }
        }
        w.put(head.as_bytes())?;
        Ok(w)
    }

    /// Continues an existing file: `inner` is positioned at byte `position`, the end of the
    /// file's last block, and `offsets` are that file's block offsets. Further blocks are
    /// appended there and [`Writer::finish`] writes an index listing old and new blocks.
    /// Used to add blocks to a file in place.
    #[must_use]
    pub fn resume(inner: W, position: u64, offsets: Vec<u64>, registry: Arc<Registry>) -> Self {
        Writer {
            inner,
            pos: position,
            offsets,
            state: State::Blocks,
            registry,
        }
    }

    fn write_zeros(&mut self, len: u64) -> Result<()> {
        let zeros = [0u8; 4096];
        let mut left = len;
        while left > 0 {
            let n = usize::try_from(left.min(zeros.len() as u64)).unwrap_or(zeros.len());
            self.put(&zeros[..n])?;
            left -= n as u64;
        }
        Ok(())
    }

    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.inner.write_all(bytes).map_err(Error::io_at(self.pos))?;
        self.pos += bytes.len() as u64;
        Ok(())
    }

    /// Bytes written so far (the offset of the next byte).
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// The underlying writer.
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// Writes the YAML tree. `tree` must start with `%YAML` (or `---`) and end with a `...`
    /// line (`\n...\n`).
    ///
    /// # Errors
    /// [`UsageError::TreeNotDelimited`], [`UsageError::TreeAfterBlocks`], I/O errors.
    pub fn write_tree(&mut self, tree: &[u8]) -> Result<()> {
        if self.state != State::BeforeTree {
            return Err(Error::Usage(UsageError::TreeAfterBlocks));
        }
        if !(tree.starts_with(b"%") || tree.starts_with(b"---")) || !tree.ends_with(b"\n...\n") {
            return Err(Error::Usage(UsageError::TreeNotDelimited));
        }
        self.put(tree)?;
        self.state = State::AfterTree;
        Ok(())
    }

    /// Writes `len` bytes of `fill` between the tree and the first block (room for the tree to
    /// grow). The standard recommends spaces; Python asdf writes NULs.
    ///
    /// # Errors
    /// [`UsageError::TreeAfterBlocks`] once a block was written; I/O errors.
    pub fn write_padding(&mut self, len: u64, fill: u8) -> Result<()> {
        if self.state == State::Blocks {
            return Err(Error::Usage(UsageError::TreeAfterBlocks));
        }
        if self.state == State::BeforeTree {
            // A file without a tree must have its first block right after the header.
            return Err(Error::Usage(UsageError::PaddingWithoutTree));
        }
        let chunk = [fill; 4096];
        let mut left = len;
        while left > 0 {
            let n = usize::try_from(left.min(chunk.len() as u64)).unwrap_or(chunk.len());
            self.put(&chunk[..n])?;
            left -= n as u64;
        }
        Ok(())
    }

    /// Compresses (per `opts`) and writes one block of decoded bytes `data`.
    ///
    /// # Errors
    /// [`UsageError::UnknownCodec`], codec failures, I/O errors.
    pub fn write_block(&mut self, data: &[u8], opts: &BlockOptions) -> Result<WrittenBlock> {
        let (stored, mut h) = self.encode(data, opts)?;
        self.write_stored(&stored, &mut h, opts)
    }

    /// The bytes to store for `data` (compressed per `opts`, or `data` itself) and their
    /// header.
    fn encode<'d>(&self, data: &'d [u8], opts: &BlockOptions) -> Result<(std::borrow::Cow<'d, [u8]>, BlockHeader)> {
        if opts.compression.is_none() {
            let h = BlockHeader::new(Label::NONE, data.len() as u64, data.len() as u64);
            return Ok((std::borrow::Cow::Borrowed(data), h));
        }
        let codec = self
            .registry
            .get(opts.compression)
            .ok_or(Error::Usage(UsageError::UnknownCodec(opts.compression)))?
            .clone();
        let mut stored = Vec::new();
        codec.encode(data, &mut stored).map_err(|source| Error::Codec {
            block: self.offsets.len(),
            offset: self.pos,
            label: opts.compression,
            source,
        })?;
        let h = BlockHeader::new(opts.compression, stored.len() as u64, data.len() as u64);
        Ok((std::borrow::Cow::Owned(stored), h))
    }

    /// `header` made to describe `stored` (copied without decoding): not streamed, used
    /// size set, data size too when uncompressed.
    fn encoded_header(stored: &[u8], header: BlockHeader) -> BlockHeader {
        Self::encoded_header_of_len(stored.len() as u64, header)
    }

    /// The header of a copied block of `len` stored bytes: not streamed, sizes from `len`.
    fn encoded_header_of_len(len: u64, header: BlockHeader) -> BlockHeader {
        let mut h = header;
        // A header read from a pre-1.0 file is written in today's layout.
        h.layout = crate::BlockLayout::Standard;
        h.legacy_checksum = 0;
        h.encoding = [0; 16];
        h.flags &= !FLAG_STREAMED;
        h.used_size = len;
        if h.compression.is_none() {
            h.data_size = h.used_size;
        }
        h
    }

    /// Sets a block header's size and allocation from `opts`; returns the padding to write
    /// after the data.
    fn place(h: &mut BlockHeader, opts: &BlockOptions) -> u64 {
        h.header_size = opts.header_size.max(BLOCK_HEADER_FIELDS);
        let padding = if opts.pad_blocks {
            padded_size(h.used_size) - h.used_size
        } else {
            opts.padding
        };
        h.allocated_size = h.used_size + padding;
        padding
    }

    /// Writes already-encoded bytes with the given header fields (compression, data_size and
    /// flags are kept; sizes and checksum are set from `stored` and `opts`). Used to copy a
    /// block without decoding it.
    ///
    /// # Errors
    /// I/O errors; a streamed header.
    pub fn write_encoded_block(
        &mut self,
        stored: &[u8],
        header: BlockHeader,
        opts: &BlockOptions,
    ) -> Result<WrittenBlock> {
        let mut h = Self::encoded_header(stored, header);
        self.write_stored(stored, &mut h, opts)
    }

    fn write_stored(&mut self, stored: &[u8], h: &mut BlockHeader, opts: &BlockOptions) -> Result<WrittenBlock> {
        self.state = State::Blocks;
        let padding = Self::place(h, opts);
        h.checksum = if opts.checksum { md5_of(stored) } else { [0; 16] };
        let offset = self.pos;
        self.put(&h.to_bytes())?;
        let data_offset = self.pos;
        self.put(stored)?;
        self.write_zeros(padding)?;
        self.offsets.push(offset);
        Ok(WrittenBlock {
            offset,
            data_offset,
            header: *h,
        })
    }

    /// Writes a streamed block header; everything written to the returned writer is the
    /// block's data, up to the end of the file. No block index is written.
    ///
    /// # Errors
    /// I/O errors.
    pub fn start_stream(mut self) -> Result<StreamWriter<W>> {
        self.state = State::Blocks;
        let mut h = BlockHeader::new(Label::NONE, 0, 0);
        h.flags = FLAG_STREAMED;
        h.allocated_size = 0;
        let offset = self.pos;
        self.put(&h.to_bytes())?;
        Ok(StreamWriter {
            inner: self.inner,
            block_offset: offset,
            data_offset: self.pos,
            written: 0,
        })
    }

    /// Offsets of the blocks written so far.
    pub fn block_offsets(&self) -> &[u64] {
        &self.offsets
    }

    /// Writes the block index (when `index` is true and there are blocks), flushes and gives
    /// back the writer.
    ///
    /// # Errors
    /// I/O errors.
    pub fn finish(mut self, index: bool) -> Result<W> {
        if index && !self.offsets.is_empty() {
            let b = index_bytes(&self.offsets);
            self.put(&b)?;
        }
        self.inner.flush().map_err(Error::io_at(self.pos))?;
        Ok(self.inner)
    }
}

/// Blocks at least this large have their MD5 computed on another thread while they are
/// written (see [`Writer::write_block_overlapped`]).
const OVERLAP_MIN: usize = 4 << 20;

/// Offset of the checksum field from the block magic.
const CHECKSUM_AT: u64 = 38;

impl<W: Write + Seek> Writer<W> {
    /// As [`Writer::write_block`], but for a seekable output the MD5 of a large block is
    /// computed on a second thread while its bytes are being written, and the header's
    /// checksum field is filled in afterwards: the checksum costs (almost) no extra time.
    ///
    /// # Errors
    /// As [`Writer::write_block`], plus seek errors.
    pub fn write_block_overlapped(&mut self, data: &[u8], opts: &BlockOptions) -> Result<WrittenBlock> {
        self.write_block_overlapped_with(data, opts, &mut |_| Ok(()))
    }

    /// As [`Writer::write_block_overlapped`]; `meanwhile` runs on this thread once the block's
    /// bytes are written and while the checksum may still be computing (a file writer can
    /// start flushing the block to disk there).
    ///
    /// # Errors
    /// As [`Writer::write_block_overlapped`], and `meanwhile`'s error.
    pub fn write_block_overlapped_with(
        &mut self,
        data: &[u8],
        opts: &BlockOptions,
        meanwhile: &mut dyn FnMut(&mut W) -> io::Result<()>,
    ) -> Result<WrittenBlock> {
        if !opts.compression.is_none() {
            return self.write_block_pieces(data, opts, meanwhile);
        }
        let (stored, mut h) = self.encode(data, opts)?;
        self.write_stored_overlapped(&stored, &mut h, opts, meanwhile)
    }

    /// Writes a compressed block as its codec produces it, piece by piece ([`Codec::encode_pieces`]):
    /// each piece is added to the MD5 and written while the codec compresses the next ones,
    /// and the header (sizes, checksum) is written last, in place. No copy of the whole
    /// compressed block is held.
    ///
    /// [`Codec::encode_pieces`]: crate::Codec::encode_pieces
    fn write_block_pieces(
        &mut self,
        data: &[u8],
        opts: &BlockOptions,
        meanwhile: &mut dyn FnMut(&mut W) -> io::Result<()>,
    ) -> Result<WrittenBlock> {
        let codec = self
            .registry
            .get(opts.compression)
            .ok_or(Error::Usage(UsageError::UnknownCodec(opts.compression)))?
            .clone();
        self.state = State::Blocks;
        let offset = self.pos;
        let mut h = BlockHeader::new(opts.compression, 0, data.len() as u64);
        h.header_size = opts.header_size.max(BLOCK_HEADER_FIELDS);
        self.put(&h.to_bytes())?;
        let data_offset = self.pos;
        let mut md5 = opts.checksum.then(crate::md5::Md5::new);
        let mut failed: Option<Error> = None;
        let encoded = codec.encode_pieces(data, &mut |piece| {
            let written = match md5.as_mut() {
                // A large piece is hashed on a second thread while it is written.
                Some(m) if piece.len() >= OVERLAP_MIN => {
                    crate::compression::exec::join(|| m.update(piece), || self.put(piece)).1
                }
                Some(m) => {
                    m.update(piece);
                    self.put(piece)
                }
                None => self.put(piece),
            };
            written.map_err(|e| {
                let kind = match &e {
                    Error::Io { source, .. } => source.kind(),
                    _ => io::ErrorKind::Other,
                };
                failed = Some(e);
                crate::CodecError::library(io::Error::from(kind))
            })
        });
        if let Some(e) = failed {
            return Err(e);
        }
        encoded.map_err(|source| Error::Codec {
            block: self.offsets.len(),
            offset,
            label: opts.compression,
            source,
        })?;
        h.used_size = self.pos - data_offset;
        let padding = if opts.pad_blocks {
            padded_size(h.used_size) - h.used_size
        } else {
            opts.padding
        };
        h.allocated_size = h.used_size + padding;
        h.checksum = md5.map_or([0; 16], |m| m.finalize());
        self.write_zeros(padding)?;
        let pos = self.pos;
        meanwhile(&mut self.inner).map_err(Error::io_at(pos))?;
        self.inner.seek(SeekFrom::Start(offset)).map_err(Error::io_at(offset))?;
        self.inner.write_all(&h.to_bytes()).map_err(Error::io_at(offset))?;
        self.inner.seek(SeekFrom::Start(pos)).map_err(Error::io_at(pos))?;
        self.offsets.push(offset);
        Ok(WrittenBlock {
            offset,
            data_offset,
            header: h,
        })
    }

    /// As [`Writer::write_encoded_block`], with the checksum overlapped as in
    /// [`Writer::write_block_overlapped`].
    ///
    /// # Errors
    /// As [`Writer::write_encoded_block`], plus seek errors.
    pub fn write_encoded_block_overlapped(
        &mut self,
        stored: &[u8],
        header: BlockHeader,
        opts: &BlockOptions,
    ) -> Result<WrittenBlock> {
        let mut h = Self::encoded_header(stored, header);
        self.write_stored_overlapped(stored, &mut h, opts, &mut |_| Ok(()))
    }

    /// Copies a block's stored bytes without holding them: `fill` hands `stored_len` bytes to
    /// the sink it is given, in pieces; they are written (and hashed, with `opts.checksum`)
    /// as they come, and the checksum is written into the header at the end. Returns the
    /// written block and the MD5 of the bytes copied (whatever `opts.checksum`).
    ///
    /// # Errors
    /// I/O errors; `fill`'s error; [`UsageError::BufferSize`] when `fill` hands over another
    /// number of bytes than `stored_len`.
    pub fn write_encoded_block_from(
        &mut self,
        header: BlockHeader,
        stored_len: u64,
        opts: &BlockOptions,
        fill: &mut dyn FnMut(&mut PieceSink<'_>) -> Result<()>,
    ) -> Result<(WrittenBlock, [u8; 16])> {
        self.state = State::Blocks;
        let mut h = Self::encoded_header_of_len(stored_len, header);
        let padding = Self::place(&mut h, opts);
        h.checksum = [0; 16];
        let offset = self.pos;
        self.put(&h.to_bytes())?;
        let data_offset = self.pos;
        let mut hasher = crate::md5::Md5::new();
        fill(&mut |piece| {
            hasher.update(piece);
            self.put(piece)
        })?;
        if self.pos - data_offset != stored_len {
            return Err(Error::Usage(crate::error::UsageError::BufferSize {
                expected: stored_len,
                got: self.pos - data_offset,
            }));
        }
        self.write_zeros(padding)?;
        self.offsets.push(offset);
        let sum: [u8; 16] = hasher.finalize();
        if opts.checksum {
            let at = offset + CHECKSUM_AT;
            self.inner.seek(SeekFrom::Start(at)).map_err(Error::io_at(at))?;
            self.inner.write_all(&sum).map_err(Error::io_at(at))?;
            self.inner
                .seek(SeekFrom::Start(self.pos))
                .map_err(Error::io_at(self.pos))?;
            h.checksum = sum;
        }
        Ok((
            WrittenBlock {
                offset,
                data_offset,
                header: h,
            },
            sum,
        ))
    }

    fn write_stored_overlapped(
        &mut self,
        stored: &[u8],
        h: &mut BlockHeader,
        opts: &BlockOptions,
        meanwhile: &mut dyn FnMut(&mut W) -> io::Result<()>,
    ) -> Result<WrittenBlock> {
        if !opts.checksum || stored.len() < OVERLAP_MIN {
            return self.write_stored(stored, h, opts);
        }
        let no_sum = BlockOptions {
            checksum: false,
            ..*opts
        };
        let (sum, written) = crate::compression::exec::join(
            || md5_of(stored),
            || {
                self.write_stored(stored, h, &no_sum).and_then(|w| {
                    let pos = self.pos;
                    meanwhile(&mut self.inner).map_err(Error::io_at(pos))?;
                    Ok(w)
                })
            },
        );
        let mut written = written?;
        let at = written.offset + CHECKSUM_AT;
        self.inner.seek(SeekFrom::Start(at)).map_err(Error::io_at(at))?;
        self.inner.write_all(&sum).map_err(Error::io_at(at))?;
        self.inner
            .seek(SeekFrom::Start(self.pos))
            .map_err(Error::io_at(self.pos))?;
        h.checksum = sum;
        written.header.checksum = sum;
        Ok(written)
    }
}

/// Where [`Writer::write_encoded_block_from`]'s filler hands the stored bytes, in pieces.
pub type PieceSink<'a> = dyn FnMut(&[u8]) -> Result<()> + 'a;

/// The data of a streamed last block: write rows to it, then [`StreamWriter::finish`].
#[derive(Debug)]
pub struct StreamWriter<W: Write> {
    inner: W,
    block_offset: u64,
    data_offset: u64,
    written: u64,
}

impl<W: Write> StreamWriter<W> {
    /// Offset of the streamed block's magic.
    pub fn block_offset(&self) -> u64 {
        self.block_offset
    }
    /// Offset of its first data byte.
    pub fn data_offset(&self) -> u64 {
        self.data_offset
    }
    /// Data bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }
    /// Flushes and gives back the writer.
    ///
    /// # Errors
    /// I/O errors.
    pub fn finish(mut self) -> Result<W> {
        self.inner
            .flush()
            .map_err(Error::io_at(self.data_offset + self.written))?;
        Ok(self.inner)
    }
}

impl<W: Write> Write for StreamWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}
