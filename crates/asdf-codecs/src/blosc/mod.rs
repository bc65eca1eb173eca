//! `blsc` (one blosc1 chunk, as asdf-compression and asdf-cxx write it) and `bls2` (a Blosc2
//! contiguous frame, as asdf-cxx writes, recognised by its `9e a8 "b2frame"` start, read
//! through its chunk index and written by default; or one blosc2 chunk, as asdf-compression
//! writes).
//!
//! The shared Blosc chunk decoding is here; the `blsc` codec (Blosc1 chunks, AbacusSummit's
//! framing) in `blosc1.rs`, Blosc2 frames (reading, writing, b2nd) in `frame.rs`.
//!
//! Decoding uses `blusc`, a pure-Rust port of c-blosc2 that is young: every call into it is
//! guarded so that a panic inside it becomes a [`CodecError`], never a crash.

// Built for one of `blsc` and `bls2` alone, the other codec's helpers are unused.
#![cfg_attr(not(all(feature = "blsc", feature = "bls2")), allow(dead_code))]

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::codec::CodecError;

mod blosc1;
mod frame;

#[cfg(feature = "blsc")]
pub use blosc1::Blosc1;
#[allow(unused_imports)]
use blosc1::*;
#[allow(unused_imports)]
use frame::*;
#[cfg(feature = "bls2")]
pub use frame::{AbacusBlosc2, Blosc2, Blosc2Codec, Blosc2Filter, FrameMeta, b2nd_array_bytes, frame_metalayers};

pub(super) const HEADER: usize = 16;

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
    /// A chunk this decoder does not read.
    #[error("blosc2 chunk not supported: {0}")]
    Unsupported(&'static str),
}

pub(super) fn le_u32(b: &[u8], at: usize) -> Option<usize> {
    b.get(at..at + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as usize)
}

/// Decodes one blosc1/blosc2 chunk at the start of `input` into `output`, which must be exactly
/// the chunk's uncompressed size. Returns the chunk's compressed length.
pub(super) fn decode_chunk(input: &[u8], output: &mut [u8]) -> Result<usize, CodecError> {
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
    // The delta filter is undone here, not by blusc (which decoded a zstd + delta + shuffle
    // chunk of C-Blosc2 to wrong bytes without an error): blusc undoes the filters after it
    // with delta's slot cleared, then delta is undone as C-Blosc2's `delta_decoder` does.
    let delta = delta_slot(chunk)?;
    let patched;
    let chunk = match delta {
        Some(k) => {
            let mut c = chunk.to_vec();
            c[16 + k] = 0;
            patched = c;
            &patched[..]
        }
        None => chunk,
    };
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
    if delta.is_some() {
        let typesize = usize::from(chunk[3]).max(1);
        let blocksize = le_u32(chunk, 8)
            .filter(|&b| b > 0)
            .ok_or(CodecError::library(BloscError::Frame(8)))?;
        undo_delta(output, blocksize, typesize);
    }
    Ok(cbytes)
}

pub(super) const BLOSC_DELTA: u8 = 3;

/// The filter slot of the delta filter in a Blosc2 chunk with an extended header, if the chunk
/// uses it (and its data was filtered: not a plain copy). Delta must be the first filter
/// applied (every slot before it empty), so that undoing it last, after blusc, is the
/// pipeline's order; a chunk with a filter before delta is refused rather than guessed.
pub(super) fn delta_slot(chunk: &[u8]) -> Result<Option<usize>, CodecError> {
    const MEMCPYED: u8 = 0x02;
    let flags = chunk[2];
    let extended = flags & 0x05 == 0x05;
    if !extended || flags & MEMCPYED != 0 || chunk.len() < 32 {
        return Ok(None);
    }
    let filters = &chunk[16..22];
    let Some(k) = filters.iter().position(|&f| f == BLOSC_DELTA) else {
        return Ok(None);
    };
    if filters[..k].iter().any(|&f| f != 0) || filters[k + 1..].contains(&BLOSC_DELTA) {
        return Err(CodecError::library(BloscError::Unsupported(
            "a delta filter after another filter in the pipeline",
        )));
    }
    Ok(Some(k))
}

/// C-Blosc2's `delta_decoder` over each block of a decoded chunk: the first block is a running
/// XOR of words of the type size (8 bytes for multiples of 8, bytes for other odd sizes),
/// every later block is XORed with the decoded first block; trailing bytes that do not fill
/// a word are left as they are.
pub(super) fn undo_delta(out: &mut [u8], blocksize: usize, typesize: usize) {
    let w = match typesize {
        1 | 2 | 4 | 8 => typesize,
        t if t % 8 == 0 => 8,
        _ => 1,
    };
    let first_len = blocksize.min(out.len());
    let words = first_len / w * w;
    for i in w..words {
        out[i] ^= out[i - w];
    }
    let (first, rest) = out.split_at_mut(first_len);
    for block in rest.chunks_mut(blocksize) {
        let n = block.len() / w * w;
        for (d, r) in block[..n].iter_mut().zip(first.iter()) {
            *d ^= *r;
        }
    }
}

/// Runs a blusc compressor into a buffer `overhead` bytes larger than the input.
pub(super) fn compress_with(
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
pub(super) fn decode_whole_chunk(input: &[u8], output: &mut [u8]) -> Result<(), CodecError> {
    let used = decode_chunk(input, output)?;
    if used != input.len() {
        return Err(CodecError::Framing { at: used as u64 });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::codec::Codec;
    /// A b2nd metalayer of 1,000 dimensions, all but two of extent 1 (chunk and block 1):
    /// read as the 2-dimensional layout it is, with the same array and padded sizes.
    #[test]
    fn b2nd_rank_follows_the_bytes() {
        let mut b = super::B2nd {
            shape: vec![1; 1000],
            chunks: vec![1; 1000],
            blocks: vec![1; 1000],
        };
        (b.shape[10], b.chunks[10], b.blocks[10]) = (7, 3, 2);
        (b.shape[999], b.chunks[999], b.blocks[999]) = (5, 5, 4);
        let n = super::b2nd_array_size(&b, 3 * 4 * 8 * 2).unwrap();
        let small = b.without_trivial_dims();
        assert_eq!((small.shape.len(), small.shape.clone()), (2, vec![7, 5]));
        assert_eq!(super::b2nd_array_size(&small, 3 * 4 * 8 * 2), Some(n));
        assert!(!super::b2nd_is_c_order(&small));
    }

    use super::*;

    fn one_call(level: i32, typesize: usize, input: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        compress_with(input, &mut out, i32::MAX as usize - HEADER, HEADER, |i, d| {
            blusc::blosc1_compress(level, i32::from(blusc::BLOSC_SHUFFLE), typesize, i, d)
        })
        .unwrap();
        out
    }

    /// Compressed in groups on all cores, a chunk has the bytes of one call over the whole
    /// input: block sizes that do and do not divide the first group, a final partial block or
    /// none, levels with and without split blocks, and inputs partly or wholly incompressible
    /// (which are compressed in one call).
    #[test]
    fn groups_give_the_bytes_of_one_call() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut noise = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut joined = 0;
        for (len, typesize, level, kind) in [
            (8 << 20, 8, 9, 0),
            ((9 << 20) + 3, 8, 9, 0),
            ((20 << 20) + 4, 8, 5, 0),
            ((12 << 20) + 7, 8, 7, 0),
            ((17 << 20) + 1, 8, 1, 0),
            ((10 << 20) + 40, 20, 9, 0),
            ((11 << 20) + 16, 16, 9, 0),
            ((9 << 20) + 5, 12, 9, 0),
            ((11 << 20) + 16, 8, 9, 1),
            (9 << 20, 8, 9, 2),
        ] {
            let input: Vec<u8> = (0..len / 4)
                .flat_map(|i: usize| {
                    let v = match kind {
                        // Mostly compressible, an incompressible stretch in the middle.
                        1 if (4 << 18..6 << 18).contains(&i) => {
                            noise().to_le_bytes()[0..4].try_into().map(u32::from_le_bytes).unwrap()
                        }
                        2 => noise().to_le_bytes()[0..4].try_into().map(u32::from_le_bytes).unwrap(),
                        _ => u32::try_from(i % 1000 + ((i as u64).wrapping_mul(2_654_435_761) >> 13 & 7) as usize)
                            .unwrap(),
                    };
                    v.to_le_bytes()
                })
                .chain(std::iter::repeat_n(5u8, len % 4))
                .collect();
            let shuffle = i32::from(blusc::BLOSC_SHUFFLE);
            let one = |i: &[u8], d: &mut [u8]| blusc::blosc1_compress(level, shuffle, typesize, i, d);
            let whole = one_call(level, typesize, &input);
            let mut via = Vec::new();
            Blosc1 { level, typesize }.encode(&input, &mut via).unwrap();
            assert!(via == whole, "len {len} typesize {typesize} level {level} kind {kind}");
            if let Some(g) = blosc1_in_groups(&input, typesize, &one).unwrap() {
                assert!(g == whole, "len {len} typesize {typesize} level {level} kind {kind}");
                joined += 1;
            }
            let mut back = vec![0u8; len];
            Blosc1::default().decode(&via, &mut back).unwrap();
            assert!(back == input);
        }
        assert!(joined >= 5, "only {joined} inputs were compressed in groups");
    }
}
