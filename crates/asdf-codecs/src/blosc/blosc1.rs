//! The `blsc` codec: one Blosc1 chunk, or AbacusSummit's framing of several.

#![cfg_attr(not(all(feature = "blsc", feature = "bls2")), allow(dead_code))]

use std::panic::{AssertUnwindSafe, catch_unwind};

#[allow(unused_imports)]
use super::*;
#[allow(unused_imports)]
use crate::codec::{Codec, CodecError, Label};

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
        if let Some(chunks) = abacus_chunks(input) {
            let mut at = 0;
            let total = output.len() as u64;
            for c in chunks {
                let n = le_u32(&input[c.clone()], 4).ok_or(CodecError::Truncated {
                    consumed: c.start as u64,
                })?;
                let out = output.get_mut(at..at + n).ok_or(CodecError::SizeMismatch {
                    expected: total,
                    actual: (at + n) as u64,
                })?;
                decode_whole_chunk(&input[c], out)?;
                at += n;
            }
            if at != output.len() {
                return Err(CodecError::SizeMismatch {
                    expected: output.len() as u64,
                    actual: at as u64,
                });
            }
            return Ok(());
        }
        decode_whole_chunk(input, output)
    }

    /// Whole blosc blocks at a time (`blosc1_getitem`), about 1 MiB per piece; AbacusSummit's
    /// framing a chunk (about 4 MiB) at a time.
    fn decode_pieces(&self, input: &[u8], expected: usize, sink: &mut dyn FnMut(&[u8])) -> Result<(), CodecError> {
        if let Some(chunks) = abacus_chunks(input) {
            let mut done = 0usize;
            for c in chunks {
                let n = le_u32(&input[c.clone()], 4).ok_or(CodecError::Truncated {
                    consumed: c.start as u64,
                })?;
                if done.checked_add(n).is_none_or(|d| d > expected) {
                    return Err(CodecError::SizeMismatch {
                        expected: expected as u64,
                        actual: (done as u64).saturating_add(n as u64),
                    });
                }
                // Zeroed lazily: a chunk header that lies about its size costs no memory.
                let mut buf = crate::codec::zeroed(n).ok_or(CodecError::library(BloscError::TooLarge(n)))?;
                decode_whole_chunk(&input[c], &mut buf)?;
                sink(&buf);
                done += n;
            }
            if done != expected {
                return Err(CodecError::SizeMismatch {
                    expected: expected as u64,
                    actual: done as u64,
                });
            }
            return Ok(());
        }
        let whole = |sink: &mut dyn FnMut(&[u8])| {
            let mut out =
                crate::codec::zeroed(expected).ok_or_else(|| CodecError::library(BloscError::TooLarge(expected)))?;
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
            || expected <= crate::codec::PIECE
        {
            return whole(sink);
        }
        let step = (crate::codec::PIECE / blocksize).max(1) * blocksize;
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
        let one = |i: &[u8], d: &mut [u8]| blusc::blosc1_compress(self.level, shuffle, self.typesize, i, d);
        if crate::exec::threads() > 1
            && input.len() >= 2 * PROBE
            && input.len() <= i32::MAX as usize - HEADER
            && let Some(chunk) = blosc1_in_groups(input, self.typesize, &one)?
        {
            output.extend_from_slice(&chunk);
            return Ok(());
        }
        compress_with(input, output, i32::MAX as usize - HEADER, HEADER, one)
    }
}

/// The chunks of a `blsc` block in AbacusSummit's framing (abacusutils' `BloscCompressor`):
/// blosc1 chunks of about 4 MiB of data each, every one preceded by its compressed length as a
/// big-endian u32. `None` for one chunk (asdf-compression's form, whose header's `cbytes` is
/// the block's length and whose first byte is a blosc version, 1 to 4), or for anything whose
/// lengths do not chain exactly to the end with each chunk's own `cbytes` agreeing: told apart
/// by structure, never by guess.
pub(super) fn abacus_chunks(input: &[u8]) -> Option<Vec<std::ops::Range<usize>>> {
    if matches!(input.first(), Some(1..=4)) && le_u32(input, 12) == Some(input.len()) {
        return None;
    }
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < input.len() {
        let len = input.get(at..at + 4)?;
        let len = usize::try_from(u32::from_be_bytes([len[0], len[1], len[2], len[3]])).ok()?;
        let start = at + 4;
        let end = start.checked_add(len)?;
        if end > input.len() || len < HEADER || le_u32(input, start + 12) != Some(len) {
            return None;
        }
        out.push(start..end);
        at = end;
    }
    (!out.is_empty()).then_some(out)
}

/// The first group of [`blosc1_in_groups`]: at least any block size blosc picks (4 MiB at most).
pub(super) const PROBE: usize = 4 << 20;
/// About this much input per group.
pub(super) const GROUP: usize = 8 << 20;
/// Header flag: the chunk holds its input as is.
pub(super) const MEMCPYED: u8 = 0x02;

/// A blosc1 chunk compresses its blocks independently of each other, so a large input can be
/// compressed as groups of whole blocks on all cores, each group a chunk of its own, whose
/// blocks are then joined under one header with their start offsets moved: the bytes one call
/// over the whole input gives (a test compares them). `None` when that is not certain (a group
/// stored as is, a group whose block size or flags differ, a result no smaller than the input):
/// the caller then compresses the input in one call.
pub(super) fn blosc1_in_groups(
    input: &[u8],
    typesize: usize,
    one: &(impl Fn(&[u8], &mut [u8]) -> i32 + Sync),
) -> Result<Option<Vec<u8>>, CodecError> {
    // Compressing into a reused buffer (no fresh pages per group), keeping the chunk only.
    let pool: std::sync::Mutex<Vec<Vec<u8>>> = std::sync::Mutex::default();
    let compress = |g: &[u8]| -> Option<Vec<u8>> {
        let mut buf = pool.lock().ok().and_then(|mut p| p.pop()).unwrap_or_default();
        if buf.len() < g.len() + HEADER {
            buf.resize(g.len() + HEADER, 0);
        }
        let n = catch_unwind(AssertUnwindSafe(|| one(g, &mut buf))).unwrap_or(0);
        let chunk = usize::try_from(n)
            .ok()
            .filter(|&n| n >= HEADER)
            .map(|n| buf[..n].to_vec());
        if let Ok(mut p) = pool.lock() {
            p.push(buf);
        }
        chunk.filter(|c| c[2] & MEMCPYED == 0)
    };
    // The block size blosc picks for any input of at least 4 MiB (a multiple of the element
    // size, at most 4 MiB): that of a first group of 4 MiB rounded down to whole elements.
    let probe_len = PROBE - PROBE % typesize.max(1);
    let Some(probe) = compress(&input[..probe_len]) else {
        return Ok(None);
    };
    let Some(block) = le_u32(&probe, 8).filter(|&b| b > 0 && b <= probe_len) else {
        return Ok(None);
    };
    let (mut groups, mut at) = if probe_len.is_multiple_of(block) {
        (vec![probe.clone()], probe_len)
    } else {
        (Vec::new(), 0)
    };
    // Groups of whole blocks; the last also takes the final partial block, so that it is the
    // leftover block of its group as it is of the whole.
    let per = (GROUP / block).max(1) * block;
    let mut bounds = Vec::new();
    while at < input.len() {
        let mut to = (at + per).min(input.len());
        if input.len() - to < block {
            to = input.len();
        }
        bounds.push((at, to));
        at = to;
    }
    let mut uncertain = false;
    let stop = || CodecError::library(BloscError::Compress(input.len()));
    crate::exec::par_ordered(
        bounds.len(),
        2 * crate::exec::threads() + 2,
        |k| compress(&input[bounds[k].0..bounds[k].1]),
        &mut |chunk: Option<Vec<u8>>| match chunk {
            Some(c) if c[..4] == probe[..4] && le_u32(&c, 8) == Some(block) => {
                groups.push(c);
                Ok(())
            }
            _ => {
                uncertain = true;
                Err(stop())
            }
        },
    )
    .or_else(|e| if uncertain { Ok(()) } else { Err(e) })?;
    if uncertain {
        return Ok(None);
    }
    // Each group: header, its blocks' starts, their data.
    let mut starts = Vec::new();
    let mut data: Vec<&[u8]> = Vec::new();
    for c in &groups {
        let (Some(nbytes), Some(cbytes)) = (le_u32(c, 4), le_u32(c, 12)) else {
            return Ok(None);
        };
        let nblocks = nbytes.div_ceil(block);
        let first = HEADER + 4 * nblocks;
        if cbytes != c.len() || cbytes < first {
            return Ok(None);
        }
        for i in 0..nblocks {
            let Some(s) = le_u32(c, HEADER + 4 * i).and_then(|s| s.checked_sub(first)) else {
                return Ok(None);
            };
            starts.push((data.len(), s));
        }
        data.push(&c[first..]);
    }
    let nbytes = input.len();
    let payload: usize = data.iter().map(|d| d.len()).sum();
    let first = HEADER + 4 * starts.len();
    let (Ok(nbytes32), Ok(cbytes32)) = (u32::try_from(nbytes), u32::try_from(first + payload)) else {
        return Ok(None);
    };
    if payload >= nbytes || starts.len() != nbytes.div_ceil(block) {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(first + payload);
    out.extend_from_slice(&probe[..4]);
    out.extend_from_slice(&nbytes32.to_le_bytes());
    out.extend_from_slice(&probe[8..12]);
    out.extend_from_slice(&cbytes32.to_le_bytes());
    let mut base = Vec::with_capacity(data.len());
    let mut sum = first;
    for d in &data {
        base.push(sum);
        sum += d.len();
    }
    for (g, s) in starts {
        let Ok(at) = u32::try_from(base[g] + s) else {
            return Ok(None);
        };
        out.extend_from_slice(&at.to_le_bytes());
    }
    for d in data {
        out.extend_from_slice(d);
    }
    Ok(Some(out))
}
