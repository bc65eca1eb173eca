//! `zlib`: one zlib stream (RFC 1950) per block, as Python's `zlib.compress` writes it
//! (level 6 by default). Concatenated streams are accepted on read.
//!
//! Large blocks are compressed on all cores as pigz does: 1 MiB pieces deflated
//! independently (each primed with the 32 KiB before it, so the ratio barely changes), each
//! ended on a byte boundary with a sync flush, joined into one ordinary zlib stream whose
//! Adler-32 is combined from the pieces'. Any zlib reader reads it.

use std::io::Write;

use flate2::{Compress, Decompress, FlushCompress, FlushDecompress, Status};

use super::{Codec, CodecError, Label, stream::StreamStep, stream::decode_stream};

/// The `zlib` codec.
#[derive(Debug, Clone, Copy)]
pub struct Zlib {
    /// Compression level 0-9 used when writing.
    pub level: u32,
}

impl Default for Zlib {
    fn default() -> Self {
        Self { level: 6 }
    }
}

struct Step(Decompress);

impl StreamStep for Step {
    fn step(&mut self, input: &[u8], output: &mut [u8]) -> Result<(usize, usize, bool), CodecError> {
        let (i0, o0) = (self.0.total_in(), self.0.total_out());
        let st = self
            .0
            .decompress(input, output, FlushDecompress::None)
            .map_err(CodecError::library)?;
        let consumed = usize::try_from(self.0.total_in() - i0).unwrap_or(usize::MAX);
        let produced = usize::try_from(self.0.total_out() - o0).unwrap_or(usize::MAX);
        Ok((consumed, produced, st == Status::StreamEnd))
    }
    fn reset(&mut self) {
        self.0 = Decompress::new(true);
    }
}

impl Codec for Zlib {
    fn label(&self) -> Label {
        Label::ZLIB
    }

    fn decode(&self, input: &[u8], output: &mut [u8]) -> Result<(), CodecError> {
        decode_stream(&mut Step(Decompress::new(true)), input, output)
    }

    fn decode_pieces(&self, input: &[u8], expected: usize, sink: &mut dyn FnMut(&[u8])) -> Result<(), CodecError> {
        super::stream::decode_stream_pieces(&mut Step(Decompress::new(true)), input, expected, sink)
    }

    fn encode_pieces(
        &self,
        input: &[u8],
        sink: &mut dyn FnMut(&[u8]) -> Result<(), CodecError>,
    ) -> Result<(), CodecError> {
        if input.len() >= PARALLEL_MIN && crate::exec::threads() > 1 {
            return self.encode_parallel(input, sink);
        }
        let mut out = Vec::new();
        self.encode(input, &mut out)?;
        sink(&out)
    }

    fn encode(&self, input: &[u8], output: &mut Vec<u8>) -> Result<(), CodecError> {
        if input.len() >= PARALLEL_MIN && crate::exec::threads() > 1 {
            return self.encode_parallel(input, &mut |piece| {
                output.extend_from_slice(piece);
                Ok(())
            });
        }
        let mut enc = flate2::write::ZlibEncoder::new(output, flate2::Compression::new(self.level.min(9)));
        enc.write_all(input).map_err(CodecError::library)?;
        enc.finish().map_err(CodecError::library)?;
        Ok(())
    }
}

/// Inputs at least this large are compressed in parallel pieces.
const PARALLEL_MIN: usize = 4 << 20;
/// Bytes per piece.
const PIECE: usize = 1 << 20;
/// The deflate window: each piece is primed with this much of the input before it.
const WINDOW: usize = 32 << 10;

impl Zlib {
    /// Large inputs: 1 MiB pieces deflated on all cores, handed to `sink` in order as soon as
    /// each is ready (after the 2-byte zlib header; the Adler-32 trailer comes last).
    fn encode_parallel(
        &self,
        input: &[u8],
        sink: &mut dyn FnMut(&[u8]) -> Result<(), CodecError>,
    ) -> Result<(), CodecError> {
        let level = self.level.min(9);
        let pieces = input.len().div_ceil(PIECE);
        // RFC 1950 header: deflate, 32 KiB window, FLEVEL as zlib sets it for the level.
        let flevel: u8 = match level {
            0 | 1 => 0,
            2..=5 => 1,
            6 => 2,
            _ => 3,
        };
        let cmf: u8 = 0x78;
        let mut flg = flevel << 6;
        flg += (31 - ((u16::from(cmf) << 8 | u16::from(flg)) % 31) as u8) % 31;
        sink(&[cmf, flg])?;
        let mut sum = 1u32;
        let deflate = |k: usize| {
            let (start, end) = (k * PIECE, ((k + 1) * PIECE).min(input.len()));
            let piece = &input[start..end];
            let mut c = Compress::new(flate2::Compression::new(level), false);
            if k > 0 {
                c.set_dictionary(&input[start.saturating_sub(WINDOW)..start])
                    .map_err(CodecError::library)?;
            }
            let last = k + 1 == pieces;
            let flush = if last {
                FlushCompress::Finish
            } else {
                FlushCompress::Sync
            };
            let mut out: Vec<u8> = Vec::with_capacity(piece.len() / 2 + 4096);
            loop {
                if out.capacity() - out.len() < 4096 {
                    out.reserve(out.capacity().max(4096));
                }
                let consumed = usize::try_from(c.total_in()).unwrap_or(usize::MAX);
                let status = c
                    .compress_vec(piece.get(consumed..).unwrap_or_default(), &mut out, flush)
                    .map_err(CodecError::library)?;
                let all_in = usize::try_from(c.total_in()).unwrap_or(0) == piece.len();
                let room_left = out.len() < out.capacity();
                if (last && status == Status::StreamEnd) || (!last && all_in && room_left) {
                    break;
                }
            }
            Ok::<_, CodecError>((out, adler32(piece), piece.len()))
        };
        crate::exec::par_ordered(pieces, 4 * crate::exec::threads() + 2, deflate, &mut |part: Result<
            (Vec<u8>, u32, usize),
            CodecError,
        >| {
            let (bytes, a, len) = part?;
            sum = adler32_combine(sum, a, len);
            sink(&bytes)
        })?;
        sink(&sum.to_be_bytes())
    }
}

/// Adler-32 (zlib-rs's, the implementation flate2 already uses).
fn adler32(data: &[u8]) -> u32 {
    zlib_rs::adler32::adler32(1, data)
}

/// The Adler-32 of the concatenation of data with checksum `a1` and `len2` bytes with
/// checksum `a2` (zlib's `adler32_combine`, from zlib-rs).
fn adler32_combine(a1: u32, a2: u32, len2: usize) -> u32 {
    zlib_rs::adler32::adler32_combine(a1, a2, len2 as u64)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::cast_possible_truncation)]
    use super::*;

    #[test]
    fn adler32_matches_known_values_and_combines() {
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
        assert_eq!(adler32(b""), 1);
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 256) as u8).collect();
        for cut in [0, 1, 5552, 65_521, 99_999, 100_000] {
            let (x, y) = data.split_at(cut);
            assert_eq!(
                adler32_combine(adler32(x), adler32(y), y.len()),
                adler32(&data),
                "{cut}"
            );
        }
    }

    #[test]
    fn parallel_stream_is_one_ordinary_zlib_stream() {
        use std::io::Read;
        let data: Vec<u8> = (0..(9u32 << 20) + 12_345)
            .map(|i| ((i % 1000) as u8).wrapping_add((i.wrapping_mul(2_654_435_761) >> 13) as u8 & 7))
            .collect();
        for level in [1, 6, 9] {
            let z = Zlib { level };
            let mut par = Vec::new();
            z.encode_parallel(&data, &mut |piece| {
                par.extend_from_slice(piece);
                Ok(())
            })
            .unwrap();
            // An independent reader (flate2's) reads it as one stream.
            let mut back = Vec::new();
            flate2::read::ZlibDecoder::new(&par[..]).read_to_end(&mut back).unwrap();
            assert!(back == data, "level {level}");
            // And ours.
            let mut out = vec![0u8; data.len()];
            z.decode(&par, &mut out).unwrap();
            assert!(out == data);
            // The ratio stays close to one stream's.
            let mut one = Vec::new();
            let mut enc = flate2::write::ZlibEncoder::new(&mut one, flate2::Compression::new(level));
            enc.write_all(&data).unwrap();
            enc.finish().unwrap();
            assert!(
                par.len() < one.len() + one.len() / 50 + 1024,
                "level {level}: {} vs {}",
                par.len(),
                one.len()
            );
        }
    }
}
