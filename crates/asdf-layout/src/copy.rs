//! The blocks of a file written from a file read: each block of the new file from where it
//! comes (a block of the file read, copied undecoded where its compression stays; new data;
//! another file's block; an empty place; bytes made for the write), in the order a numbering
//! gives.

use std::collections::HashSet;

use crate::atomic::Sink;
use crate::{BlockOptions, Error, Label, Reader, Writer};

/// Where a block of the written file comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockSrc {
    /// Block `i` of the file that was opened.
    Existing(usize),
    /// The `k`th block added since it was opened.
    New(usize),
    /// Block 0 of an external file (exploded form), brought into this file.
    External(String),
    /// An empty block in the place of one whose array moved elsewhere.
    Empty,
    /// Bytes made for this write (a chunked array's renumbered chunk map).
    Made(Vec<u8>),
}

/// Where the blocks come from, and how they are written.
pub struct Sources<'a, S, E> {
    /// The file read.
    pub reader: &'a Reader<S>,
    /// The `k`th block added since, with the compression it is written with.
    pub new: &'a dyn Fn(usize) -> (&'a [u8], Label),
    /// Block 0 of the external file a URI names, decoded.
    pub external: &'a dyn Fn(&str) -> Result<Vec<u8>, E>,
    /// The compression every block is written with (`None`: each keeps its own).
    pub recompress: Option<Label>,
    /// Blocks (of the new file) written as they are, in their own compression.
    pub as_is: &'a HashSet<usize>,
    /// Checksums and padding.
    pub options: BlockOptions,
    /// Called with (blocks written, blocks in all).
    pub progress: Option<&'a (dyn Fn(usize, usize) + Send + Sync)>,
}

impl<S, E> std::fmt::Debug for Sources<'_, S, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sources")
            .field("recompress", &self.recompress)
            .field("as_is", &self.as_is)
            .finish_non_exhaustive()
    }
}

/// Writes the blocks of `order` into `w`, after its tree.
///
/// A block of the file read whose compression stays is copied without decoding, a piece at a
/// time (bounded memory), hashed on the way; a stored checksum that is not of these bytes is
/// checked against the decoded ones (older files), and otherwise fails the write: a block whose
/// checksum does not match is never written again with a fresh, valid one (the corruption
/// would be laundered). An encoding chain of the ASDF 0.1.0 draft is not a block compression of
/// today's, and a pre-1.0 draft's block is always decoded and written afresh: its checksum's
/// meaning was "TBD" in every draft (those of 2015-03-17 match no bytes of their blocks), so it
/// is not carried over or required to match.
///
/// # Errors
/// Reading a block, a checksum that does not match, an external block, output errors.
pub fn write_blocks<W: Sink, S: crate::ReadAt, E: From<Error>>(
    w: &mut Writer<W>,
    order: &[BlockSrc],
    from: &Sources<'_, S, E>,
) -> Result<(), E> {
    let opts = from.options;
    let reader = from.reader;
    for (done, src) in order.iter().enumerate() {
        if let Some(p) = from.progress {
            p(done, order.len());
        }
        // A block written as it is keeps its own compression.
        let label = if from.as_is.contains(&done) {
            None
        } else {
            from.recompress
        };
        match src {
            BlockSrc::Existing(i) => {
                let b = reader.block(*i)?;
                let legacy = reader.file_header().dialect.is_legacy();
                let same =
                    !legacy && label.is_none_or(|l| l == b.compression()) && b.compression() != Label::ENCODING_CHAIN;
                if same && !b.header.is_streamed() {
                    let (_, md5) = w.write_encoded_block_from(
                        b.header,
                        b.stored_len,
                        &opts.compression(b.compression()),
                        &mut |sink| reader.read_stored_pieces(*i, sink),
                    )?;
                    if b.header.has_checksum() && md5 != b.header.checksum {
                        reader.verify_checksum(*i)?;
                    }
                } else {
                    if !legacy {
                        reader.verify_checksum(*i)?;
                    }
                    let data = reader.read_data(*i)?;
                    w.write_block_overlapped_with(
                        &data,
                        &opts.compression(label.unwrap_or(Label::NONE)),
                        &mut Sink::flush_early,
                    )?;
                }
            }
            BlockSrc::New(k) => {
                let (data, l) = (from.new)(*k);
                w.write_block_overlapped_with(data, &opts.compression(l), &mut Sink::flush_early)?;
            }
            BlockSrc::Made(data) => {
                w.write_block_overlapped_with(data, &opts.compression(Label::NONE), &mut Sink::flush_early)?;
            }
            BlockSrc::Empty => {
                w.write_block_overlapped_with(&[], &opts.compression(Label::NONE), &mut Sink::flush_early)?;
            }
            BlockSrc::External(uri) => {
                let data = (from.external)(uri)?;
                w.write_block_overlapped_with(
                    &data,
                    &opts.compression(label.unwrap_or(Label::NONE)),
                    &mut Sink::flush_early,
                )?;
            }
        }
    }
    if let Some(p) = from.progress {
        p(order.len(), order.len());
    }
    Ok(())
}

/// Ends the file `w` writes with block `i` of `reader` as its streamed block (as Python asdf
/// writes a file read with one: last, no block index after it), its data copied in the pieces
/// the reader reads.
///
/// # Errors
/// Read errors of the block; I/O errors.
pub fn finish_streamed<W: std::io::Write, S: crate::ReadAt>(
    w: Writer<W>,
    reader: &Reader<S>,
    i: usize,
) -> Result<W, Error> {
    let mut s = w.start_stream()?;
    let mut failed = None;
    reader.read_data_pieces(i, &mut |piece| {
        if failed.is_none()
            && let Err(e) = std::io::Write::write_all(&mut s, piece)
        {
            failed = Some(e);
        }
    })?;
    if let Some(e) = failed {
        return Err(e.into());
    }
    s.finish()
}
