//! `blsc` (one blosc1 chunk, as asdf-compression and asdf-cxx write it) and `bls2` (one
//! blosc2 chunk; a Blosc2 contiguous frame, as asdf-cxx writes, is recognised by its
//! `9e a8 "b2frame"` start and its chunks are decoded in order).
//!
//! Decoding uses `blusc`, a pure-Rust port of c-blosc2 that is young: every call into it is
//! guarded so that a panic inside it becomes a [`CodecError`], never a crash.

use std::panic::{AssertUnwindSafe, catch_unwind};

use super::{Codec, CodecError, Label};

const HEADER: usize = 16;

/// Errors from blusc, which reports only a status code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BloscError {
    /// blusc returned an error code (or panicked) while decoding.
    #[error("blosc chunk is corrupt (decoder status {0})")]
    Corrupt(i64),
    /// blusc could not compress the data.
    #[error("blosc could not compress {0} bytes")]
    Compress(usize),
    /// More than a blosc chunk can hold (2 GiB).
    #[error("{0} bytes are more than one blosc chunk can hold")]
    TooLarge(usize),
    /// A malformed Blosc2 frame.
    #[error("blosc2 frame is malformed at byte {0}")]
    Frame(usize),
}

fn le_u32(b: &[u8], at: usize) -> Option<usize> {
    b.get(at..at + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as usize)
}

/// Decodes one blosc1/blosc2 chunk at the start of `input` into `output`, which must be exactly
/// the chunk's uncompressed size. Returns the chunk's compressed length.
fn decode_chunk(input: &[u8], output: &mut [u8]) -> Result<usize, CodecError> {
    let (Some(nbytes), Some(cbytes)) = (le_u32(input, 4), le_u32(input, 12)) else {
        return Err(CodecError::Truncated { consumed: 0 });
    };
    if input.len() < HEADER {
        return Err(CodecError::Truncated { consumed: 0 });
    }
    if nbytes != output.len() {
        return Err(CodecError::SizeMismatch {
            expected: output.len() as u64,
            actual: nbytes as u64,
        });
    }
    if cbytes < HEADER || cbytes > input.len() {
        return Err(CodecError::Truncated {
            consumed: input.len() as u64,
        });
    }
    let chunk = &input[..cbytes];
    let status = catch_unwind(AssertUnwindSafe(|| blusc::blosc2_decompress(chunk, output)))
        .map_err(|_| CodecError::library(BloscError::Corrupt(-999)))?;
    if status < 0 {
        return Err(CodecError::library(BloscError::Corrupt(i64::from(status))));
    }
    if status as usize != output.len() {
        return Err(CodecError::SizeMismatch {
            expected: output.len() as u64,
            actual: status as u64,
        });
    }
    Ok(cbytes)
}

const FRAME_MAGIC: &[u8] = b"\x9e\xa8b2frame";

/// Decodes the data chunks of a Blosc2 contiguous frame in order (the index chunk and
/// trailer that follow them are not needed to fill `output`).
fn decode_frame(input: &[u8], output: &mut [u8]) -> Result<(), CodecError> {
    // Header: fixarray(14), "b2frame\0", then 0xd2 + i32 BE header_size.
    let frame_err = |at: usize| CodecError::library(BloscError::Frame(at));
    if input.get(10) != Some(&0xd2) {
        return Err(frame_err(10));
    }
    let hs = input.get(11..15).ok_or(frame_err(11))?;
    let header_size = u32::from_be_bytes([hs[0], hs[1], hs[2], hs[3]]) as usize;
    // Then 0xcf + u64 BE frame_size, which must be the whole input.
    if input.get(15) != Some(&0xcf) {
        return Err(frame_err(15));
    }
    let fs = input.get(16..24).ok_or(frame_err(16))?;
    let frame_size = u64::from_be_bytes([fs[0], fs[1], fs[2], fs[3], fs[4], fs[5], fs[6], fs[7]]);
    if frame_size != input.len() as u64 {
        return Err(CodecError::Truncated {
            consumed: input.len() as u64,
        });
    }
    let mut pos = header_size;
    let mut out = 0usize;
    while out < output.len() {
        let chunk = input.get(pos..).filter(|c| c.len() >= HEADER).ok_or(frame_err(pos))?;
        let n = le_u32(chunk, 4).ok_or(frame_err(pos))?;
        let end = out
            .checked_add(n)
            .filter(|&e| e <= output.len())
            .ok_or(CodecError::SizeMismatch {
                expected: output.len() as u64,
                actual: (out + n) as u64,
            })?;
        if n == 0 {
            return Err(frame_err(pos));
        }
        let used = decode_chunk(chunk, &mut output[out..end])?;
        out = end;
        pos += used;
    }
    Ok(())
}

/// Runs a blusc compressor into a buffer `overhead` bytes larger than the input.
fn compress_with(
    input: &[u8],
    output: &mut Vec<u8>,
    max: usize,
    overhead: usize,
    f: impl FnOnce(&[u8], &mut [u8]) -> i32,
) -> Result<(), CodecError> {
    if input.len() > max {
        return Err(CodecError::library(BloscError::TooLarge(input.len())));
    }
    let mut dest = vec![0u8; input.len() + overhead];
    let n = catch_unwind(AssertUnwindSafe(|| f(input, &mut dest))).unwrap_or(0);
    if n <= 0 {
        return Err(CodecError::library(BloscError::Compress(input.len())));
    }
    output.extend_from_slice(&dest[..n as usize]);
    Ok(())
}

/// Decodes `input`, which must be exactly one chunk.
fn decode_whole_chunk(input: &[u8], output: &mut [u8]) -> Result<(), CodecError> {
    let used = decode_chunk(input, output)?;
    if used != input.len() {
        return Err(CodecError::Framing { at: used as u64 });
    }
    Ok(())
}

/// The `blsc` codec (blosc1 chunk).
#[derive(Debug, Clone, Copy)]
pub struct Blosc1 {
    /// Compression level 0-9 when writing (asdf-compression's default is 9).
    pub level: i32,
    /// Element size for the shuffle filter when writing.
    pub typesize: usize,
}

impl Default for Blosc1 {
    fn default() -> Self {
        Self { level: 9, typesize: 8 }
    }
}

impl Codec for Blosc1 {
    fn label(&self) -> Label {
        Label::BLSC
    }

    fn decode(&self, input: &[u8], output: &mut [u8]) -> Result<(), CodecError> {
        decode_whole_chunk(input, output)
    }

    /// Whole blosc blocks at a time (`blosc1_getitem`), about 1 MiB per piece.
    fn decode_pieces(&self, input: &[u8], expected: usize, sink: &mut dyn FnMut(&[u8])) -> Result<(), CodecError> {
        let whole = |sink: &mut dyn FnMut(&[u8])| {
            let mut out = Vec::new();
            out.try_reserve_exact(expected)
                .map_err(|_| CodecError::library(BloscError::TooLarge(expected)))?;
            out.resize(expected, 0);
            decode_whole_chunk(input, &mut out)?;
            sink(&out);
            Ok(())
        };
        let (Some(nbytes), Some(blocksize), Some(cbytes)) = (le_u32(input, 4), le_u32(input, 8), le_u32(input, 12))
        else {
            return Err(CodecError::Truncated { consumed: 0 });
        };
        let typesize = usize::from(input[3]);
        if nbytes != expected {
            return Err(CodecError::SizeMismatch {
                expected: expected as u64,
                actual: nbytes as u64,
            });
        }
        // Anything unusual (trailing chunks, odd block sizes, a memcpy'd chunk): whole.
        if cbytes != input.len()
            || typesize == 0
            || blocksize == 0
            || !blocksize.is_multiple_of(typesize)
            || !expected.is_multiple_of(typesize)
            || expected <= super::PIECE
        {
            return whole(sink);
        }
        let step = (super::PIECE / blocksize).max(1) * blocksize;
        let mut buf = vec![0u8; step.min(expected)];
        let mut at = 0;
        while at < expected {
            let len = (expected - at).min(step);
            let (Ok(start), Ok(n)) = (i32::try_from(at / typesize), i32::try_from(len / typesize)) else {
                return whole(sink);
            };
            let got = catch_unwind(AssertUnwindSafe(|| {
                blusc::blosc1_getitem(input, start, n, &mut buf[..len])
            }))
            .map_err(|_| CodecError::library(BloscError::Corrupt(-999)))?;
            if usize::try_from(got).ok() != Some(len) {
                return Err(CodecError::library(BloscError::Corrupt(i64::from(got))));
            }
            sink(&buf[..len]);
            at += len;
        }
        Ok(())
    }

    fn encode(&self, input: &[u8], output: &mut Vec<u8>) -> Result<(), CodecError> {
        let shuffle = i32::from(blusc::BLOSC_SHUFFLE);
        compress_with(input, output, i32::MAX as usize - HEADER, HEADER, |i, d| {
            blusc::blosc1_compress(self.level, shuffle, self.typesize, i, d)
        })
    }
}

/// The `bls2` codec (blosc2 chunk on write; chunk or contiguous frame on read).
#[derive(Debug, Clone, Copy)]
pub struct Blosc2 {
    /// Compression level 0-9 when writing.
    pub level: i32,
    /// Element size for the shuffle filter when writing.
    pub typesize: usize,
}

impl Default for Blosc2 {
    fn default() -> Self {
        Self { level: 5, typesize: 8 }
    }
}

impl Codec for Blosc2 {
    fn label(&self) -> Label {
        Label::BLS2
    }

    fn decode(&self, input: &[u8], output: &mut [u8]) -> Result<(), CodecError> {
        if input.starts_with(FRAME_MAGIC) {
            return decode_frame(input, output);
        }
        decode_whole_chunk(input, output)
    }

    fn encode(&self, input: &[u8], output: &mut Vec<u8>) -> Result<(), CodecError> {
        let shuffle = i32::from(blusc::BLOSC_SHUFFLE);
        compress_with(
            input,
            output,
            blusc::BLOSC2_MAX_BUFFERSIZE,
            blusc::BLOSC2_MAX_OVERHEAD,
            |i, d| blusc::blosc2_compress(self.level, shuffle, self.typesize, i, d),
        )
    }
}
