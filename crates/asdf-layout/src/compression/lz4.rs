//! `lz4` (label `lz4\0`): Python asdf's framing. The input is cut into chunks of 4 MiB; each
//! chunk is stored as `[u32 big-endian n][n bytes]`, where the n bytes are what python-lz4's
//! `lz4.block.compress` returns: a u32 little-endian uncompressed size, then a raw LZ4 block.
//!
//! Writing goes through the reference liblz4 (`LZ4_compress_default`, the call python-lz4
//! makes), so the bytes are identical to Python's; lz4_flex's encoder is not (it chooses other
//! matches near long runs). Reading uses lz4_flex's safe decoder.

use super::{Codec, CodecError, Label};

/// Input bytes per chunk when writing (Python asdf uses 4 MiB).
pub const LZ4_CHUNK: usize = 4 << 20;

/// The `lz4` codec.
#[derive(Debug, Clone, Copy, Default)]
pub struct Lz4;

fn be_u32(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4).map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

impl Codec for Lz4 {
    fn label(&self) -> Label {
        Label::LZ4
    }

    fn decode(&self, input: &[u8], output: &mut [u8]) -> Result<(), CodecError> {
        let (mut i, mut o) = (0usize, 0usize);
        while i < input.len() {
            let n = be_u32(input, i).ok_or(CodecError::Truncated { consumed: i as u64 })? as usize;
            let chunk = input
                .get(i + 4..i + 4 + n)
                .ok_or(CodecError::Truncated { consumed: i as u64 })?;
            if chunk.len() < 4 {
                return Err(CodecError::Framing { at: i as u64 });
            }
            let size = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]) as usize;
            let end = o
                .checked_add(size)
                .filter(|&e| e <= output.len())
                .ok_or(CodecError::SizeMismatch {
                    expected: output.len() as u64,
                    actual: (o + size) as u64,
                })?;
            let got =
                lz4_flex::block::decompress_into(&chunk[4..], &mut output[o..end]).map_err(CodecError::library)?;
            if got != size {
                return Err(CodecError::Framing { at: i as u64 });
            }
            o = end;
            i += 4 + n;
        }
        if o != output.len() {
            return Err(CodecError::SizeMismatch {
                expected: output.len() as u64,
                actual: o as u64,
            });
        }
        Ok(())
    }

    fn encode(&self, input: &[u8], output: &mut Vec<u8>) -> Result<(), CodecError> {
        for chunk in input.chunks(LZ4_CHUNK) {
            let c = lz4::block::compress(chunk, None, true).map_err(CodecError::library)?;
            let n = u32::try_from(c.len()).map_err(|_| CodecError::Framing {
                at: output.len() as u64,
            })?;
            output.extend_from_slice(&n.to_be_bytes());
            output.extend_from_slice(&c);
        }
        Ok(())
    }
}
