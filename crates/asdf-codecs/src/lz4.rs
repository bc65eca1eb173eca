//! `lz4` (label `lz4\0`): Python asdf's framing. The input is cut into chunks of 4 MiB; each
//! chunk is stored as `[u32 big-endian n][n bytes]`, where the n bytes are what python-lz4's
//! `lz4.block.compress` returns: a u32 little-endian uncompressed size, then a raw LZ4 block.
//!
//! Writing goes through the reference liblz4 (`LZ4_compress_default`, the call python-lz4
//! makes), so the bytes are identical to Python's; lz4_flex's encoder is not (it chooses other
//! matches near long runs). Reading uses liblz4's bounds-checked `LZ4_decompress_safe`.
//! Chunks are compressed and decompressed on all cores.
//!
//! On wasm32 (no C toolchain for the browser) both directions go through lz4_flex's safe
//! block functions: the same framing, readable by Python asdf, but not byte-identical to it.

use super::{Codec, CodecError, Label};

/// Input bytes per chunk when writing (Python asdf uses 4 MiB).
pub const LZ4_CHUNK: usize = 4 << 20;

/// One chunk to decode: its offset in the input, its LZ4 block, and its part of the output.
type Slot<'a> = (usize, &'a [u8], &'a mut [u8]);

/// The `lz4` codec.
#[derive(Debug, Clone, Copy, Default)]
pub struct Lz4;

fn be_u32(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4).map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

/// One chunk: its offset in the input, its LZ4 block, its decoded size.
type Chunk<'a> = (usize, &'a [u8], usize);

/// The chunk table, with the decoded sizes checked to add up to exactly `expected`.
fn chunk_table(input: &[u8], expected: usize) -> Result<Vec<Chunk<'_>>, CodecError> {
    let mut table = Vec::new();
    let (mut i, mut total) = (0usize, 0usize);
    while i < input.len() {
        let n = be_u32(input, i).ok_or(CodecError::Truncated { consumed: i as u64 })? as usize;
        let chunk = input
            .get(i + 4..i + 4 + n)
            .ok_or(CodecError::Truncated { consumed: i as u64 })?;
        if chunk.len() < 4 {
            return Err(CodecError::Framing { at: i as u64 });
        }
        let size = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]) as usize;
        total = total
            .checked_add(size)
            .filter(|&e| e <= expected)
            .ok_or(CodecError::SizeMismatch {
                expected: expected as u64,
                actual: total.saturating_add(size) as u64,
            })?;
        table.push((i, &chunk[4..], size));
        i += 4 + n;
    }
    if total != expected {
        return Err(CodecError::SizeMismatch {
            expected: expected as u64,
            actual: total as u64,
        });
    }
    Ok(table)
}

/// Decodes one chunk's LZ4 block into `out` (exactly its decoded size) with liblz4's
/// `LZ4_decompress_safe`: bounds-checked against hostile input, and faster than lz4_flex's
/// safe decoder.
fn decode_chunk(at: usize, block: &[u8], out: &mut [u8]) -> Result<(), CodecError> {
    let got = decode_block(at, block, out)?;
    if got == out.len() {
        Ok(())
    } else {
        Err(CodecError::Framing { at: at as u64 })
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn decode_block(at: usize, block: &[u8], out: &mut [u8]) -> Result<usize, CodecError> {
    let size = i32::try_from(out.len()).map_err(|_| CodecError::Framing { at: at as u64 })?;
    lz4::block::decompress_to_buffer(block, Some(size), out).map_err(CodecError::library)
}

#[cfg(target_arch = "wasm32")]
fn decode_block(_at: usize, block: &[u8], out: &mut [u8]) -> Result<usize, CodecError> {
    lz4_flex::block::decompress_into(block, out).map_err(CodecError::library)
}

/// The largest LZ4 block `len` input bytes can take.
#[cfg(not(target_arch = "wasm32"))]
fn block_bound(len: usize) -> Result<usize, CodecError> {
    lz4::block::compress_bound(len).map_err(CodecError::library)
}

#[cfg(target_arch = "wasm32")]
fn block_bound(len: usize) -> Result<usize, CodecError> {
    Ok(lz4_flex::block::get_maximum_output_size(len))
}

/// `chunk` as python-lz4's `lz4.block.compress` frames it (a u32 little-endian size, then the
/// LZ4 block) into `buf`, which is at least [`block_bound`] + 4 long; returns the bytes used.
#[cfg(not(target_arch = "wasm32"))]
fn encode_block(chunk: &[u8], buf: &mut [u8]) -> Result<usize, CodecError> {
    lz4::block::compress_to_buffer(chunk, None, true, buf).map_err(CodecError::library)
}

#[cfg(target_arch = "wasm32")]
fn encode_block(chunk: &[u8], buf: &mut [u8]) -> Result<usize, CodecError> {
    let size = u32::try_from(chunk.len()).map_err(|_| CodecError::Framing { at: 0 })?;
    let (head, rest) = buf.split_at_mut(4);
    head.copy_from_slice(&size.to_le_bytes());
    let n = lz4_flex::block::compress_into(chunk, rest).map_err(CodecError::library)?;
    Ok(4 + n)
}

impl Codec for Lz4 {
    fn label(&self) -> Label {
        Label::LZ4
    }

    fn decode(&self, input: &[u8], output: &mut [u8]) -> Result<(), CodecError> {
        // First the chunk table (cheap), then the chunks, decoded in parallel into their
        // disjoint parts of the output.
        let jobs = chunk_table(input, output.len())?;
        let mut slots: Vec<(usize, &[u8], &mut [u8])> = Vec::with_capacity(jobs.len());
        let mut rest = output;
        for (at, block, size) in jobs {
            let (head, tail) = rest.split_at_mut(size);
            slots.push((at, block, head));
            rest = tail;
        }
        let slots: Vec<std::sync::Mutex<Slot<'_>>> = slots.into_iter().map(std::sync::Mutex::new).collect();
        let results = crate::exec::par_map(slots.len(), |k| {
            let mut g = slots[k].lock().map_err(|_| CodecError::Framing { at: 0 })?;
            let (at, block, out) = &mut *g;
            decode_chunk(*at, block, out)
        });
        results.into_iter().collect()
    }

    fn decode_pieces(&self, input: &[u8], expected: usize, sink: &mut dyn FnMut(&[u8])) -> Result<(), CodecError> {
        // Chunk by chunk into one reused buffer (chunks are 4 MiB when Python wrote them).
        let table = chunk_table(input, expected)?;
        let largest = table.iter().map(|(_, _, size)| *size).max().unwrap_or(0);
        let mut buf = crate::codec::zeroed(largest)
            .ok_or_else(|| CodecError::library(std::io::Error::from(std::io::ErrorKind::OutOfMemory)))?;
        for (at, block, size) in table {
            decode_chunk(at, block, &mut buf[..size])?;
            sink(&buf[..size]);
        }
        Ok(())
    }

    fn encode(&self, input: &[u8], output: &mut Vec<u8>) -> Result<(), CodecError> {
        self.encode_pieces(input, &mut |piece| {
            output.extend_from_slice(piece);
            Ok(())
        })
    }

    fn encode_pieces(
        &self,
        input: &[u8],
        sink: &mut dyn FnMut(&[u8]) -> Result<(), CodecError>,
    ) -> Result<(), CodecError> {
        // Chunks compressed on all cores, handed over in order as soon as each is ready; the
        // output buffers are reused (no fresh pages to fault in for every chunk).
        let chunks: Vec<&[u8]> = input.chunks(LZ4_CHUNK).collect();
        let ahead = 2 * crate::exec::threads() + 2;
        let pool: std::sync::Mutex<Vec<Vec<u8>>> = std::sync::Mutex::default();
        let take = || pool.lock().map(|mut p| p.pop()).ok().flatten().unwrap_or_default();
        let mut at = 0u64;
        crate::exec::par_ordered(
            chunks.len(),
            ahead,
            |k| {
                let chunk = chunks[k];
                let mut buf = take();
                let bound = block_bound(chunk.len())? + 4;
                if buf.len() < bound {
                    buf.resize(bound, 0);
                }
                // The buffer keeps its length (no zeroing it again for the next chunk).
                let n = encode_block(chunk, &mut buf)?;
                Ok((buf, n))
            },
            &mut |c: Result<(Vec<u8>, usize), CodecError>| {
                let (buf, used) = c?;
                let c = buf.get(..used).ok_or(CodecError::Framing { at })?;
                let n = u32::try_from(c.len()).map_err(|_| CodecError::Framing { at })?;
                sink(&n.to_be_bytes())?;
                sink(c)?;
                at += 4 + c.len() as u64;
                if let Ok(mut p) = pool.lock() {
                    p.push(buf);
                }
                Ok(())
            },
        )
    }
}
