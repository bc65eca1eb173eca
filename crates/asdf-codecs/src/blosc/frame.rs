//! Blosc2 contiguous frames (`bls2`): read through their chunk index (special chunks, b2nd
//! metalayers), written as C-Blosc2 lays them out; and the `bls2`/`bsc2` codecs.

#![cfg_attr(not(all(feature = "blsc", feature = "bls2")), allow(dead_code))]

#[allow(unused_imports)]
use super::*;
#[allow(unused_imports)]
use crate::codec::{Codec, CodecError, Label};

pub(super) const FRAME_MAGIC: &[u8] = b"\x9e\xa8b2frame";

/// A big-endian integer of `n` bytes at `at` in a frame header, after its msgpack marker.
pub(super) fn header_int(input: &[u8], at: usize, marker: u8, n: usize) -> Result<u64, CodecError> {
    let frame_err = |at: usize| CodecError::library(BloscError::Frame(at));
    if input.get(at - 1) != Some(&marker) {
        return Err(frame_err(at - 1));
    }
    let bytes = input.get(at..at + n).ok_or(frame_err(at))?;
    Ok(bytes.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b)))
}

/// A Blosc2 contiguous frame (C-Blosc2's README_CFRAME_FORMAT), opened: the header gives the
/// decoded size, the chunks' compressed size, the type size and the chunk size; the chunk
/// index (a Blosc2 chunk of little-endian int64 offsets from the end of the header) follows
/// the chunks; a negative offset is a special chunk whose top byte says which (bit 0: zeros,
/// bit 2: uninitialised, read as zeros; bit 1: NaN, by type size 4 or 8), as C-Blosc2's
/// `frame_special_chunk` reads it. The trailer (metalayers) is not needed for the data.
pub(super) struct Frame<'a> {
    input: &'a [u8],
    header_size: usize,
    index_at: usize,
    typesize: usize,
    chunksize: usize,
    nbytes: usize,
    /// The decoded chunk index.
    offsets: Vec<u8>,
}

impl<'a> Frame<'a> {
    /// Opens the frame, whose data must decode to `expected` bytes.
    fn open(input: &'a [u8], expected: usize) -> Result<Self, CodecError> {
        let frame_err = |at: usize| CodecError::library(BloscError::Frame(at));
        // Header: fixarray(14), "b2frame\0", then 0xd2 + i32 BE header_size.
        let header_size = usize::try_from(header_int(input, 11, 0xd2, 4)?).map_err(|_| frame_err(11))?;
        // Then 0xcf + u64 BE frame_size, which must be the whole input.
        let frame_size = header_int(input, 16, 0xcf, 8)?;
        if frame_size != input.len() as u64 {
            return Err(CodecError::Truncated {
                consumed: input.len() as u64,
            });
        }
        let nbytes = header_int(input, 30, 0xd3, 8)?;
        let cbytes = header_int(input, 39, 0xd3, 8)?;
        let typesize = usize::try_from(header_int(input, 48, 0xd2, 4)?).map_err(|_| frame_err(48))?;
        let chunksize = usize::try_from(header_int(input, 58, 0xd2, 4)?).map_err(|_| frame_err(58))?;
        if nbytes != expected as u64 {
            return Err(CodecError::SizeMismatch {
                expected: expected as u64,
                actual: nbytes,
            });
        }
        let mut f = Frame {
            input,
            header_size,
            index_at: 0,
            typesize,
            chunksize,
            nbytes: expected,
            offsets: Vec::new(),
        };
        if expected == 0 {
            return Ok(f);
        }
        if chunksize == 0 || header_size < 70 || header_size > input.len() {
            return Err(frame_err(if chunksize == 0 { 58 } else { 11 }));
        }
        let nchunks = expected.div_ceil(chunksize);
        // The chunk index, right after the chunks.
        let index_at = usize::try_from(cbytes)
            .ok()
            .and_then(|c| header_size.checked_add(c))
            .filter(|&at| at < input.len())
            .ok_or(frame_err(39))?;
        let index_len = nchunks.checked_mul(8).ok_or(frame_err(index_at))?;
        let mut offsets = crate::codec::zeroed(index_len).ok_or(frame_err(index_at))?;
        let index = &input[index_at..];
        let cb = le_u32(index, 12).ok_or(frame_err(index_at))?;
        let index = index.get(..cb).ok_or(frame_err(index_at))?;
        decode_chunk(index, &mut offsets).map_err(|_| frame_err(index_at))?;
        f.index_at = index_at;
        f.offsets = offsets;
        Ok(f)
    }

    /// The number of chunks.
    fn chunks(&self) -> usize {
        self.offsets.len() / 8
    }

    /// Whether chunk `i` is a special chunk of the frame's index (see [`Frame`]) or a Blosc2
    /// chunk whose header says it is all zeros, NaN or uninitialised: such a chunk is filled,
    /// never decoded, and needs no buffer of its size.
    fn special(&self, i: usize) -> Result<Option<Special>, CodecError> {
        let frame_err = |at: usize| CodecError::library(BloscError::Frame(at));
        let at_index = self.index_at + 8 * i;
        let o = self.offsets.get(8 * i..8 * i + 8).ok_or(frame_err(at_index))?;
        let off = i64::from_le_bytes([o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7]]);
        let nan = || match self.typesize {
            4 | 8 => Ok(Some(Special::NaN(self.typesize))),
            _ => Err(frame_err(at_index)),
        };
        if off < 0 {
            // Bit 7 and exactly one of the values the frame format defines (1 zeros, 2 NaN,
            // 4 uninitialised); reserved bits (3 to 6) or other values are refused.
            return match (off as u64 >> 56) as u8 {
                0x81 | 0x84 => Ok(Some(Special::Zero)),
                0x82 => nan(),
                _ => Err(frame_err(at_index)),
            };
        }
        let chunk = self.chunk_bytes(i, off)?;
        // A chunk with an extended header (flags bits 0 and 2) names a special value in bits
        // 4-6 of its `blosc2_flags` (byte 31): 1 zeros, 2 NaN, 4 uninitialised (3, a repeated
        // value, is decoded by the library).
        if chunk.len() >= 32 && chunk[2] & 0x05 == 0x05 && matches!((chunk[31] >> 4) & 0x07, 1 | 2 | 4) {
            // Its decoded size must be the chunk's place in the frame, as for any chunk.
            let want = self.chunk_range(i).len();
            if le_u32(chunk, 4) != Some(want) {
                return Err(CodecError::SizeMismatch {
                    expected: want as u64,
                    actual: le_u32(chunk, 4).unwrap_or(0) as u64,
                });
            }
            return match (chunk[31] >> 4) & 0x07 {
                2 => nan(),
                _ => Ok(Some(Special::Zero)),
            };
        }
        Ok(None)
    }

    /// The stored bytes from chunk `i` (at index offset `off`) to the chunk index.
    fn chunk_bytes(&self, i: usize, off: i64) -> Result<&'a [u8], CodecError> {
        let frame_err = |at: usize| CodecError::library(BloscError::Frame(at));
        let at = usize::try_from(off)
            .ok()
            .and_then(|o| self.header_size.checked_add(o))
            .filter(|&at| at < self.index_at)
            .ok_or(frame_err(self.index_at + 8 * i))?;
        Ok(&self.input[at..self.index_at])
    }

    /// Decodes chunk `i` into `out`, which has exactly its decoded size.
    fn decode_chunk(&self, i: usize, out: &mut [u8]) -> Result<(), CodecError> {
        if let Some(s) = self.special(i)? {
            s.fill(out);
            return Ok(());
        }
        let o = &self.offsets[8 * i..8 * i + 8];
        let off = i64::from_le_bytes([o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7]]);
        decode_chunk(self.chunk_bytes(i, off)?, out).map(|_| ())
    }

    /// The decoded byte range of chunk `i`.
    fn chunk_range(&self, i: usize) -> std::ops::Range<usize> {
        let start = i * self.chunksize;
        start..(start + self.chunksize).min(self.nbytes)
    }
}

/// The value a special chunk holds in every element.
#[derive(Debug, Clone, Copy)]
pub(super) enum Special {
    /// Zeros (also uninitialised chunks, read as zeros).
    Zero,
    /// NaN of the given type size (4 or 8).
    NaN(usize),
}

impl Special {
    /// Fills `out` (which starts on an element boundary) with the value.
    fn fill(self, out: &mut [u8]) {
        match self {
            Special::Zero => out.fill(0),
            Special::NaN(4) => out
                .chunks_mut(4)
                .for_each(|x| x.copy_from_slice(&f32::NAN.to_le_bytes()[..x.len()])),
            Special::NaN(_) => out
                .chunks_mut(8)
                .for_each(|x| x.copy_from_slice(&f64::NAN.to_le_bytes()[..x.len()])),
        }
    }

    /// Hands `n` bytes of the value to `sink` in pieces of at most [`crate::codec::PIECE`] bytes,
    /// from one buffer of that size.
    fn pieces(self, n: usize, sink: &mut dyn FnMut(&[u8])) {
        let mut buf = vec![0u8; n.min(crate::codec::PIECE)];
        self.fill(&mut buf);
        let mut left = n;
        while left > 0 {
            let k = left.min(buf.len());
            sink(&buf[..k]);
            left -= k;
        }
    }
}

/// The metalayers of a Blosc2 frame, each as (name, content bytes): the fixed ones stored in
/// the header, and the variable-length ones stored (compressed, one Blosc2 chunk each) in the
/// trailer. Their contents are opaque to the format (python-blosc2 writes msgpack values;
/// `b2nd` holds an N-d array's shape, chunk and block shapes).
#[cfg(feature = "bls2")]
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FrameMeta {
    /// Fixed-length metalayers (header).
    pub metalayers: Vec<(String, Vec<u8>)>,
    /// Variable-length metalayers (trailer), decompressed.
    pub vlmetalayers: Vec<(String, Vec<u8>)>,
}

/// Where the metalayer section of a frame header starts (C-Blosc2's `FRAME_HEADER_MINLEN`):
/// a msgpack array of (index size, {name: offset}, [contents]).
pub(super) const FRAME_METALAYERS: usize = 87;

/// Reads the metalayers of the Blosc2 frame `input` (see [`FrameMeta`]).
///
/// # Errors
/// [`CodecError`] naming the byte where the frame's header, index or trailer is malformed.
#[cfg(feature = "bls2")]
pub fn frame_metalayers(input: &[u8]) -> Result<FrameMeta, CodecError> {
    use rmpv::Value;
    let frame_err = |at: usize| CodecError::library(BloscError::Frame(at));
    if !input.starts_with(FRAME_MAGIC) {
        return Err(frame_err(0));
    }
    let nbytes = usize::try_from(header_int(input, 30, 0xd3, 8)?).map_err(|_| frame_err(30))?;
    let f = Frame::open(input, nbytes)?;
    let header = input.get(..f.header_size).ok_or(frame_err(11))?;
    let read_at = |bytes: &[u8], at: usize| -> Result<Value, CodecError> {
        let mut r = bytes.get(at..).ok_or(frame_err(at))?;
        rmpv::decode::read_value(&mut r).map_err(|_| frame_err(at))
    };
    // Section = [index size, {name: offset}, [contents]]; each offset points at a bin value.
    let names = |section: &Value, at: usize| -> Result<Vec<(String, usize)>, CodecError> {
        let Some(Value::Map(m)) = section.as_array().and_then(|a| a.get(1)) else {
            return Err(frame_err(at));
        };
        m.iter()
            .map(|(k, v)| {
                let name = k.as_str().ok_or(frame_err(at))?.to_owned();
                let off = v.as_u64().and_then(|o| usize::try_from(o).ok()).ok_or(frame_err(at))?;
                Ok((name, off))
            })
            .collect()
    };
    let bin = |bytes: &[u8], at: usize| -> Result<Vec<u8>, CodecError> {
        match read_at(bytes, at)? {
            Value::Binary(b) => Ok(b),
            _ => Err(frame_err(at)),
        }
    };
    let mut meta = FrameMeta::default();
    if header.len() > FRAME_METALAYERS {
        let section = read_at(header, FRAME_METALAYERS)?;
        for (name, off) in names(&section, FRAME_METALAYERS)? {
            meta.metalayers.push((name, bin(header, off)?));
        }
    }
    if nbytes == 0 {
        return Ok(meta);
    }
    // The trailer follows the chunk index: [version, section, trailer length, fingerprint];
    // its offsets count from the trailer's start.
    let index_len = le_u32(&input[f.index_at..], 12).ok_or(frame_err(f.index_at))?;
    let trailer_at = f
        .index_at
        .checked_add(index_len)
        .filter(|&t| t < input.len())
        .ok_or(frame_err(f.index_at))?;
    let trailer = &input[trailer_at..];
    let top = read_at(trailer, 0)?;
    let section = top.as_array().and_then(|a| a.get(1)).ok_or(frame_err(trailer_at))?;
    for (name, off) in names(section, trailer_at)? {
        let chunk = bin(trailer, off)?;
        let n = le_u32(&chunk, 4).ok_or(frame_err(trailer_at + off))?;
        let mut out = crate::codec::zeroed(n).ok_or(frame_err(trailer_at + off))?;
        decode_chunk(&chunk, &mut out)?;
        meta.vlmetalayers.push((name, out));
    }
    Ok(meta)
}

/// The `b2nd` metalayer of a frame (C-Blosc2's N-d array: README_B2ND_METALAYER): the array's
/// shape, and the chunk and block shapes its data is stored in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct B2nd {
    pub(super) shape: Vec<usize>,
    pub(super) chunks: Vec<usize>,
    pub(super) blocks: Vec<usize>,
}

impl B2nd {
    /// Dimensions of extent 1 in a chunk and a block of 1 change nothing in the layout: dropped
    /// (one is kept when all are), so that the work follows the bytes, not a rank of 1,000
    /// such dimensions.
    pub(super) fn without_trivial_dims(self) -> B2nd {
        let nd = self.shape.len();
        let keep: Vec<usize> = (0..nd)
            .filter(|&d| !(self.shape[d] == 1 && self.chunks[d] == 1 && self.blocks[d] == 1))
            .collect();
        if keep.len() == nd {
            return self;
        }
        let keep = if keep.is_empty() { vec![nd - 1] } else { keep };
        B2nd {
            shape: keep.iter().map(|&d| self.shape[d]).collect(),
            chunks: keep.iter().map(|&d| self.chunks[d]).collect(),
            blocks: keep.iter().map(|&d| self.blocks[d]).collect(),
        }
    }
}

/// The frame's `b2nd` metalayer, when it has one that makes sense.
pub(super) fn b2nd(input: &[u8]) -> Option<B2nd> {
    // Only the header's fixed metalayers: not the index or the trailer.
    let header_size = usize::try_from(header_int(input, 11, 0xd2, 4).ok()?).ok()?;
    let header = input.get(..header_size)?;
    let mut r = header.get(FRAME_METALAYERS..)?;
    let section = rmpv::decode::read_value(&mut r).ok()?;
    let names = section.as_array()?.get(1)?.as_map()?;
    let off = names.iter().find(|(k, _)| k.as_str() == Some("b2nd"))?.1.as_u64()?;
    let mut r = header.get(usize::try_from(off).ok()?..)?;
    let rmpv::Value::Binary(content) = rmpv::decode::read_value(&mut r).ok()? else {
        return None;
    };
    let v = rmpv::decode::read_value(&mut content.as_slice()).ok()?;
    let a = v.as_array()?;
    let dims = |i: usize| -> Option<Vec<usize>> {
        a.get(i)?
            .as_array()?
            .iter()
            .map(|x| x.as_u64().and_then(|x| usize::try_from(x).ok()))
            .collect()
    };
    let mut b = B2nd {
        shape: dims(2)?,
        chunks: dims(3)?,
        blocks: dims(4)?,
    };
    let nd = b.shape.len();
    let ok = nd > 0
        && b.chunks.len() == nd
        && b.blocks.len() == nd
        && b.chunks.iter().chain(&b.blocks).all(|&x| x > 0)
        && b.shape.iter().all(|&x| x > 0);
    if !ok {
        return None;
    }
    b = b.without_trivial_dims();
    Some(b)
}

/// Index `i` of a C-order grid of `dims` as coordinates.
pub(super) fn unravel(mut i: usize, dims: &[usize], out: &mut [usize]) {
    for (o, &d) in out.iter_mut().zip(dims).rev() {
        *o = i % d;
        i /= d;
    }
}

/// The size in bytes of a `b2nd` frame's array in C order (the frame's `nbytes` hold its
/// padded chunks: `nbytes / padded items` is the type size), when the metalayer is consistent
/// with `nbytes`.
pub(super) fn b2nd_array_size(b: &B2nd, nbytes: usize) -> Option<usize> {
    let items = |v: &[usize]| v.iter().try_fold(1usize, |a, &x| a.checked_mul(x));
    let mut padded = 1usize;
    for ((&s, &c), &k) in b.shape.iter().zip(&b.chunks).zip(&b.blocks) {
        padded = padded.checked_mul(s.div_ceil(c).checked_mul(c.div_ceil(k).checked_mul(k)?)?)?;
    }
    let ts = Some(padded).filter(|&n| n > 0 && nbytes.is_multiple_of(n))?;
    items(&b.shape)?.checked_mul(nbytes / ts)
}

/// The size in bytes of the N-d array a `b2nd` frame holds (what a block must decode it to
/// for the array's C order), when the frame has a consistent `b2nd` metalayer.
#[cfg(feature = "bls2")]
#[must_use]
pub fn b2nd_array_bytes(input: &[u8]) -> Option<usize> {
    let nbytes = usize::try_from(header_int(input, 30, 0xd3, 8).ok()?).ok()?;
    b2nd_array_size(&b2nd(input)?, nbytes)
}

/// Whether a `b2nd` frame's chunk order is the array's C order: no padding anywhere and
/// chunks and blocks whole in every dimension but the first.
pub(super) fn b2nd_is_c_order(b: &B2nd) -> bool {
    b.shape
        .iter()
        .zip(&b.chunks)
        .zip(&b.blocks)
        .enumerate()
        .all(|(d, ((&s, &c), &k))| {
            if d == 0 {
                s.is_multiple_of(c) && c.is_multiple_of(k)
            } else {
                s == c && c == k
            }
        })
}

/// Decodes a `b2nd` frame into `output` in the array's C order. The frame holds chunks of
/// the chunk shape (edge chunks padded), each laid out block by block (blocks of the block
/// shape in C order over the chunk, padded to whole blocks), each block in C order.
pub(super) fn decode_b2nd(input: &[u8], output: &mut [u8], b: &B2nd, nbytes: usize) -> Result<(), CodecError> {
    let frame_err = |at: usize| CodecError::library(BloscError::Frame(at));
    if b2nd_is_c_order(b) {
        return decode_frame(input, output);
    }
    let nd = b.shape.len();
    let items = |v: &[usize]| v.iter().try_fold(1usize, |a, &x| a.checked_mul(x));
    let ext: Vec<usize> = b
        .chunks
        .iter()
        .zip(&b.blocks)
        .map(|(&c, &k)| c.div_ceil(k) * k)
        .collect();
    let grid: Vec<usize> = b.shape.iter().zip(&b.chunks).map(|(&s, &c)| s.div_ceil(c)).collect();
    let bgrid: Vec<usize> = ext.iter().zip(&b.blocks).map(|(&e, &k)| e / k).collect();
    let (Some(chunk_items), Some(block_items), Some(nchunks), Some(nblocks), Some(rows), Some(all)) = (
        items(&ext),
        items(&b.blocks),
        items(&grid),
        items(&bgrid),
        items(&b.blocks[..nd - 1]),
        items(&b.shape),
    ) else {
        return Err(frame_err(FRAME_METALAYERS));
    };
    let padded = nchunks.checked_mul(chunk_items).ok_or(frame_err(FRAME_METALAYERS))?;
    let ts = Some(padded)
        .filter(|&n| n > 0 && nbytes.is_multiple_of(n))
        .map(|n| nbytes / n)
        .filter(|&ts| all.checked_mul(ts) == Some(output.len()))
        .ok_or(CodecError::SizeMismatch {
            expected: output.len() as u64,
            actual: nbytes as u64,
        })?;
    // The padded chunks may hold more elements than the array, but not without bound: the
    // work below is proportional to them (a frame of special chunks costs nothing to claim).
    if padded > all.saturating_mul(64).max(1 << 24) {
        return Err(frame_err(FRAME_METALAYERS));
    }
    // One chunk at a time (memory: the array and one chunk).
    let f = Frame::open(input, nbytes)?;
    if f.chunksize != chunk_items * ts {
        return Err(frame_err(58));
    }
    let mut raw = crate::codec::zeroed(f.chunksize).ok_or(frame_err(58))?;
    let (mut c, mut k, mut r, mut at) = (vec![0; nd], vec![0; nd], vec![0; nd.saturating_sub(1)], vec![0; nd]);
    let last = nd - 1;
    for ci in 0..nchunks {
        f.decode_chunk(ci, &mut raw)?;
        unravel(ci, &grid, &mut c);
        for bi in 0..nblocks {
            unravel(bi, &bgrid, &mut k);
            for row in 0..rows {
                unravel(row, &b.blocks[..last], &mut r);
                // The row's first element: inside the chunk (not padding) and the array?
                let mut inside = true;
                for d in 0..nd {
                    let within = k[d] * b.blocks[d] + if d < last { r[d] } else { 0 };
                    at[d] = c[d] * b.chunks[d] + within;
                    inside &= within < b.chunks[d] && at[d] < b.shape[d];
                }
                if !inside {
                    continue;
                }
                let len = b.blocks[last]
                    .min(b.shape[last] - at[last])
                    .min(b.chunks[last] - k[last] * b.blocks[last]);
                let src = (bi * block_items + row * b.blocks[last]) * ts;
                let dst = at.iter().zip(&b.shape).fold(0usize, |a, (&x, &s)| a * s + x) * ts;
                let from = raw.get(src..src + len * ts).ok_or(frame_err(30))?;
                output
                    .get_mut(dst..dst + len * ts)
                    .ok_or(frame_err(30))?
                    .copy_from_slice(from);
            }
        }
    }
    Ok(())
}

/// Decodes a whole Blosc2 frame into `output` (its decoded size), its chunks spread over the
/// machine's cores (each thread a run of consecutive chunks into its own part of `output`).
pub(super) fn decode_frame(input: &[u8], output: &mut [u8]) -> Result<(), CodecError> {
    let f = Frame::open(input, output.len())?;
    if output.is_empty() {
        return Ok(());
    }
    let f = &f;
    crate::exec::par_chunks_mut(output, f.chunksize, |i, out| f.decode_chunk(i, out))
}

/// Decodes bytes `range` of a Blosc2 frame (decoding to `expected` bytes): only the chunks
/// the range touches are decoded, found through the chunk index.
pub(super) fn decode_frame_range(
    input: &[u8],
    expected: usize,
    range: std::ops::Range<usize>,
) -> Result<Vec<u8>, CodecError> {
    let f = Frame::open(input, expected)?;
    let mut out = Vec::with_capacity(range.len());
    if range.is_empty() {
        return Ok(out);
    }
    let first = range.start / f.chunksize;
    let last = (range.end - 1) / f.chunksize;
    let mut buf = Vec::new();
    for i in first..=last.min(f.chunks().saturating_sub(1)) {
        let r = f.chunk_range(i);
        let s = range.start.max(r.start) - r.start;
        let e = range.end.min(r.end) - r.start;
        if let Some(special) = f.special(i)? {
            // Filled from the element the range starts in: no buffer of the chunk's size.
            let ts = match special {
                Special::NaN(ts) => ts,
                Special::Zero => 1,
            };
            let from = s - s % ts;
            let mut part = vec![0u8; e - from];
            special.fill(&mut part);
            out.extend_from_slice(&part[s - from..]);
            continue;
        }
        buf.clear();
        buf.resize(r.len(), 0);
        f.decode_chunk(i, &mut buf)?;
        out.extend_from_slice(&buf[s..e]);
    }
    Ok(out)
}

/// Stored blocks at least this large are read in parts for a range (smaller ones whole).
const SPARSE_FROM: u64 = 8 << 20;

/// [`Codec::decode_range_from`] for a frame: its header, its chunk index (and trailer) and the
/// chunks the range touches are read into a zeroed buffer of the frame's size (pages never
/// written cost no memory), whose other bytes are never looked at; then the frame is decoded
/// from it as from the whole. Anything that is not a frame, and small blocks, are read whole.
fn decode_frame_range_from(
    codec: &Blosc2,
    stored_len: u64,
    read: &mut dyn FnMut(u64, usize) -> Result<Vec<u8>, CodecError>,
    expected: usize,
    range: std::ops::Range<usize>,
) -> Result<Vec<u8>, CodecError> {
    let frame_err = |at: usize| CodecError::library(BloscError::Frame(at));
    let len = usize::try_from(stored_len).map_err(|_| frame_err(0))?;
    let head = read(0, len.min(4096))?;
    if stored_len < SPARSE_FROM || !head.starts_with(FRAME_MAGIC) || expected == 0 {
        let all = if head.len() == len { head } else { read(0, len)? };
        return codec.decode_range(&all, expected, range);
    }
    let header_size = usize::try_from(header_int(&head, 11, 0xd2, 4)?).map_err(|_| frame_err(11))?;
    let cbytes = usize::try_from(header_int(&head, 39, 0xd3, 8)?).map_err(|_| frame_err(39))?;
    let index_at = header_size
        .checked_add(cbytes)
        .filter(|&at| at < len && header_size <= len)
        .ok_or(frame_err(39))?;
    let mut sparse = crate::codec::zeroed(len).ok_or(CodecError::library(BloscError::TooLarge(len)))?;
    fn put(
        read: &mut dyn FnMut(u64, usize) -> Result<Vec<u8>, CodecError>,
        sparse: &mut [u8],
        at: usize,
        n: usize,
    ) -> Result<(), CodecError> {
        let bytes = read(at as u64, n)?;
        if bytes.len() != n {
            return Err(CodecError::Truncated { consumed: at as u64 });
        }
        sparse[at..at + n].copy_from_slice(&bytes);
        Ok(())
    }
    sparse[..head.len()].copy_from_slice(&head);
    if header_size > head.len() {
        put(read, &mut sparse, head.len(), header_size - head.len())?;
    }
    // The chunk index and the trailer after it (metalayers, and the frame's own length).
    put(read, &mut sparse, index_at, len - index_at)?;
    // Where the chunks the range touches start (special chunks have no bytes of their own).
    let starts: Vec<usize> = {
        let f = Frame::open(&sparse, expected)?;
        if range.is_empty() {
            Vec::new()
        } else {
            let first = range.start / f.chunksize;
            let last = ((range.end - 1) / f.chunksize).min(f.chunks().saturating_sub(1));
            (first..=last)
                .filter_map(|i| {
                    let o = &f.offsets[8 * i..8 * i + 8];
                    let off = i64::from_le_bytes([o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7]]);
                    usize::try_from(off).ok().and_then(|o| header_size.checked_add(o))
                })
                .collect()
        }
    };
    for at in starts {
        if at + 16 > index_at {
            return Err(frame_err(at));
        }
        // A chunk's header (16 bytes) gives its stored size.
        let h = read(at as u64, 16)?;
        let cb = le_u32(&h, 12).ok_or(frame_err(at))?;
        if cb < 16 || at + cb > index_at {
            return Err(frame_err(at));
        }
        put(read, &mut sparse, at, cb)?;
    }
    if b2nd_for(&sparse, expected)?.is_some_and(|(b, _)| !b2nd_is_c_order(&b)) {
        // Not in C order: every chunk is needed.
        let all = read(0, len)?;
        return codec.decode_range(&all, expected, range);
    }
    decode_frame_range(&sparse, expected, range)
}

/// A Blosc2 compressor, as C-Blosc2 numbers them (`compcode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Blosc2Codec {
    /// BloscLZ (C-Blosc2's default).
    #[default]
    BloscLz,
    /// LZ4.
    Lz4,
    /// LZ4 HC.
    Lz4Hc,
    /// zlib.
    Zlib,
    /// Zstandard.
    Zstd,
}

impl Blosc2Codec {
    fn code(self) -> u8 {
        match self {
            Self::BloscLz => blusc::BLOSC_BLOSCLZ,
            Self::Lz4 => blusc::BLOSC_LZ4,
            Self::Lz4Hc => blusc::BLOSC_LZ4HC,
            Self::Zlib => blusc::BLOSC_ZLIB,
            Self::Zstd => blusc::BLOSC_ZSTD,
        }
    }
}

/// The filter applied before a Blosc2 compressor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Blosc2Filter {
    /// None.
    None,
    /// Byte shuffle by the type size (C-Blosc2's default).
    #[default]
    Shuffle,
    /// Bit shuffle by the type size.
    BitShuffle,
}

/// The `bls2` codec. Writes a Blosc2 contiguous frame (the Blosc2 frame format; the layout asdf-cxx, the one
/// released `bls2` writer, writes) of chunks of `chunksize` bytes, a chunk of zeros stored as
/// a special value in the index, no 2 GiB limit; or, with `frame: false`, one Blosc2 chunk
/// (as the asdf-compression plugin writes, under 2 GiB). Reads both, told apart by the
/// frame's first bytes.
#[derive(Debug, Clone, Copy)]
pub struct Blosc2 {
    /// Compression level 0-9 when writing.
    pub level: i32,
    /// Element size for the shuffle filters when writing.
    pub typesize: usize,
    /// Write a contiguous frame (default) or one chunk.
    pub frame: bool,
    /// Bytes per chunk of a frame (default 4 MiB); a multiple of `typesize` is best.
    pub chunksize: usize,
    /// The compressor.
    pub codec: Blosc2Codec,
    /// The filter.
    pub filter: Blosc2Filter,
}

impl Default for Blosc2 {
    fn default() -> Self {
        Self {
            level: 5,
            typesize: 8,
            frame: true,
            chunksize: 4 << 20,
            codec: Blosc2Codec::BloscLz,
            filter: Blosc2Filter::Shuffle,
        }
    }
}

/// A frame header's fixed part as C-Blosc2 3.x writes it (`FRAME_HEADER_MINLEN`, 87 bytes)
/// followed by an empty metalayer section (10 bytes): 97 bytes.
pub(super) const FRAME_HEADER_LEN: u32 = 97;
/// The trailer with no variable-length metalayers and no fingerprint: 35 bytes.
pub(super) const FRAME_TRAILER: [u8; 35] = {
    let mut t = [0u8; 35];
    // fixarray(4): version 1, vlmetalayers (fixarray 3: uint16 map size 6, map16 0, array16 0),
    let head = [0x94, 0x01, 0x93, 0xcd, 0x00, 0x06, 0xde, 0x00, 0x00, 0xdc, 0x00, 0x00];
    let mut i = 0;
    while i < head.len() {
        t[i] = head[i];
        i += 1;
    }
    // uint32 trailer length (35), fixext16 fingerprint of type 0 (none), 16 zero bytes.
    t[12] = 0xce;
    t[16] = 35;
    t[17] = 0xd8;
    t
};

impl Blosc2 {
    fn cparams(&self) -> blusc::Blosc2Cparams {
        let mut p = blusc::BLOSC2_CPARAMS_DEFAULTS;
        p.compcode = self.codec.code();
        p.clevel = u8::try_from(self.level.clamp(0, 9)).unwrap_or(5);
        p.typesize = i32::try_from(self.typesize.clamp(1, 255)).unwrap_or(1);
        p.filters = [blusc::BLOSC_NOFILTER; blusc::BLOSC2_MAX_FILTERS as usize];
        p.filters[5] = match self.filter {
            Blosc2Filter::None => blusc::BLOSC_NOFILTER,
            Blosc2Filter::Shuffle => blusc::BLOSC_SHUFFLE,
            Blosc2Filter::BitShuffle => blusc::BLOSC_BITSHUFFLE,
        };
        p
    }

    /// One Blosc2 chunk of `input` (at most 2 GiB) with this codec, filter and level.
    fn chunk(&self, input: &[u8], output: &mut Vec<u8>) -> Result<(), CodecError> {
        let ctx = blusc::blosc2_create_cctx(self.cparams());
        compress_with(
            input,
            output,
            blusc::BLOSC2_MAX_BUFFERSIZE,
            blusc::BLOSC2_MAX_OVERHEAD,
            |i, d| blusc::blosc2_compress_ctx(&ctx, i, d),
        )
    }

    /// `input` as a contiguous frame: header, chunks, the index chunk, the trailer.
    fn encode_frame(&self, input: &[u8], output: &mut Vec<u8>) -> Result<(), CodecError> {
        let chunksize = self.chunksize.clamp(1, blusc::BLOSC2_MAXBLOCKSIZE as usize);
        let typesize = self.typesize.clamp(1, 255);
        // Chunks hold whole elements.
        let chunksize = (chunksize / typesize).max(1) * typesize;
        let start = output.len();
        let header_len = FRAME_HEADER_LEN as usize;
        output.resize(start + header_len, 0);
        let mut offsets = Vec::with_capacity(input.len().div_ceil(chunksize) * 8);
        let mut blocksize = 0u32;
        for chunk in input.chunks(chunksize) {
            let at = output.len() - start - header_len;
            if chunk.iter().all(|&b| b == 0) {
                // A run of zeros: bit 7 (special) and value 1 (zeros) in the top byte.
                offsets.extend_from_slice(&(0x81u64 << 56).to_le_bytes());
                continue;
            }
            offsets.extend_from_slice(&(at as u64).to_le_bytes());
            let before = output.len();
            self.chunk(chunk, output)?;
            if blocksize == 0 {
                blocksize = le_u32(&output[before..], 8)
                    .and_then(|b| u32::try_from(b).ok())
                    .unwrap_or(0);
            }
        }
        let cbytes = output.len() - start - header_len;
        // The index: a Blosc2 chunk of the little-endian int64 offsets, stored as they are (a
        // memcpy'd chunk, as C-Blosc2 writes small indexes): the 32-byte extended header
        // (version 5, flags 0x07 = extended header + memcpy, type size 8, sizes, the shuffle
        // filter in the last slot) and the offsets.
        if !offsets.is_empty() {
            let n =
                u32::try_from(offsets.len()).map_err(|_| CodecError::library(BloscError::TooLarge(offsets.len())))?;
            let total = n
                .checked_add(32)
                .ok_or(CodecError::library(BloscError::TooLarge(offsets.len())))?;
            output.extend_from_slice(&[5, 1, 0x07, 8]);
            output.extend_from_slice(&n.to_le_bytes());
            output.extend_from_slice(&n.to_le_bytes());
            output.extend_from_slice(&total.to_le_bytes());
            output.extend_from_slice(&[0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
            output.extend_from_slice(&offsets);
        }
        output.extend_from_slice(&FRAME_TRAILER);
        let frame_size = (output.len() - start) as u64;
        let h = &mut output[start..start + FRAME_HEADER_LEN as usize];
        let mut w = 0;
        let mut put = |bytes: &[u8]| {
            h[w..w + bytes.len()].copy_from_slice(bytes);
            w += bytes.len();
        };
        // fixarray(14), str8 "b2frame\0", int32 header size, uint64 frame size.
        put(b"\x9e\xa8b2frame\0\xd2");
        put(&FRAME_HEADER_LEN.to_be_bytes());
        put(&[0xcf]);
        put(&frame_size.to_be_bytes());
        // str4 flags: version 2 with 64-bit offsets, contiguous, codec | level << 4, split mode.
        let codec_flags = self.codec.code() | (u8::try_from(self.level.clamp(0, 9)).unwrap_or(5) << 4);
        put(&[0xa4, 0x12, 0x00, codec_flags, 0x02]);
        put(&[0xd3]);
        put(&(input.len() as u64).to_be_bytes());
        put(&[0xd3]);
        put(&(cbytes as u64).to_be_bytes());
        put(&[0xd2]);
        put(&u32::try_from(typesize).unwrap_or(1).to_be_bytes());
        put(&[0xd2]);
        put(&blocksize.to_be_bytes());
        put(&[0xd2]);
        put(&u32::try_from(chunksize).unwrap_or(0).to_be_bytes());
        // Threads for compression and decompression, no variable-length metalayers.
        put(&[0xd1, 0x00, 0x01, 0xd1, 0x00, 0x01, 0xc2]);
        // fixext16 of type 6 (filters): 6 filter codes, the codec, its meta, 6 filter metas, 2 spare.
        let p = self.cparams();
        put(&[0xd8, 0x06]);
        put(&p.filters);
        put(&[p.compcode, 0]);
        put(&p.filters_meta);
        put(&[0, 0]);
        // Metalayers: fixarray(3) of (uint16 map size 7, map16 of 0, array16 of 0).
        put(&[0x93, 0xcd, 0x00, 0x07, 0xde, 0x00, 0x00, 0xdc, 0x00, 0x00]);
        debug_assert_eq!(w, FRAME_HEADER_LEN as usize);
        Ok(())
    }
}

/// The `b2nd` metalayer of frame `input` and the frame's `nbytes`, when the block asks for
/// the frame's array in C order (`expected` is the array's size). A frame whose chunks are
/// not in C order is always read in C order at that size, whether or not its chunks are
/// padded (python-blosc2 stores `blosc2.asarray(a, chunks=(2, 2))` of a 4x4 array as four
/// 2x2 chunks of 16 bytes' frame size: the bytes in chunk order are not the array).
pub(super) fn b2nd_for(input: &[u8], expected: usize) -> Result<Option<(B2nd, usize)>, CodecError> {
    let nbytes = header_int(input, 30, 0xd3, 8)?;
    let Ok(n) = usize::try_from(nbytes) else {
        return Ok(None);
    };
    Ok(b2nd(input)
        .filter(|b| b2nd_array_size(b, n) == Some(expected))
        .map(|b| (b, n)))
}

impl Codec for Blosc2 {
    fn label(&self) -> Label {
        Label::BLS2
    }

    /// A frame whose size is not the block's but carries a `b2nd` metalayer whose array is
    /// decodes into the array's C order.
    fn decode(&self, input: &[u8], output: &mut [u8]) -> Result<(), CodecError> {
        if input.starts_with(FRAME_MAGIC) {
            if let Some((b, n)) = b2nd_for(input, output.len())? {
                return decode_b2nd(input, output, &b, n);
            }
            return decode_frame(input, output);
        }
        decode_whole_chunk(input, output)
    }

    /// A frame in chunk order is decoded one chunk at a time (memory: one chunk), and its
    /// special chunks are handed over from one piece-sized buffer (a frame of zero chunks
    /// that claims gigabytes costs a megabyte); a `b2nd` frame out of C order is decoded whole.
    fn decode_pieces(&self, input: &[u8], expected: usize, sink: &mut dyn FnMut(&[u8])) -> Result<(), CodecError> {
        if !input.starts_with(FRAME_MAGIC) || b2nd_for(input, expected)?.is_some_and(|(b, _)| !b2nd_is_c_order(&b)) {
            let mut out = crate::codec::zeroed(expected).ok_or(CodecError::library(BloscError::TooLarge(expected)))?;
            self.decode(input, &mut out)?;
            sink(&out);
            return Ok(());
        }
        let f = Frame::open(input, expected)?;
        let mut buf = Vec::new();
        for i in 0..f.chunks() {
            let r = f.chunk_range(i);
            if let Some(special) = f.special(i)? {
                special.pieces(r.len(), sink);
                continue;
            }
            buf.clear();
            buf.resize(r.len(), 0);
            f.decode_chunk(i, &mut buf)?;
            sink(&buf);
        }
        Ok(())
    }

    /// A frame decodes only the chunks `range` touches (through its chunk index).
    fn decode_range(
        &self,
        input: &[u8],
        expected: usize,
        range: std::ops::Range<usize>,
    ) -> Result<Vec<u8>, CodecError> {
        if input.starts_with(FRAME_MAGIC) {
            if b2nd_for(input, expected)?.is_some_and(|(b, _)| !b2nd_is_c_order(&b)) {
                // A b2nd array in C order: decoded whole, then cut.
                let mut out =
                    crate::codec::zeroed(expected).ok_or(CodecError::library(BloscError::TooLarge(expected)))?;
                self.decode(input, &mut out)?;
                return out
                    .get(range)
                    .map(<[u8]>::to_vec)
                    .ok_or(CodecError::Truncated { consumed: 0 });
            }
            return decode_frame_range(input, expected, range);
        }
        crate::codec::decode_range_by_pieces(self, input, expected, range)
    }

    fn decode_range_from(
        &self,
        stored_len: u64,
        read: &mut dyn FnMut(u64, usize) -> Result<Vec<u8>, CodecError>,
        expected: usize,
        range: std::ops::Range<usize>,
    ) -> Result<Vec<u8>, CodecError> {
        decode_frame_range_from(self, stored_len, read, expected, range)
    }

    fn encode(&self, input: &[u8], output: &mut Vec<u8>) -> Result<(), CodecError> {
        if self.frame {
            self.encode_frame(input, output)
        } else {
            self.chunk(input, output)
        }
    }
}

/// `bsc2`: the label AbacusSummit's tools (abacusutils' `Blosc2Compressor`) give a Blosc2
/// contiguous frame. Read (and written) as [`Blosc2`] frames.
#[derive(Debug, Clone, Copy, Default)]
pub struct AbacusBlosc2(pub Blosc2);

impl AbacusBlosc2 {
    /// The label.
    pub const LABEL: Label = Label(*b"bsc2");
}

impl Codec for AbacusBlosc2 {
    fn label(&self) -> Label {
        Self::LABEL
    }

    fn decode(&self, input: &[u8], output: &mut [u8]) -> Result<(), CodecError> {
        self.0.decode(input, output)
    }

    fn decode_range(
        &self,
        input: &[u8],
        expected: usize,
        range: std::ops::Range<usize>,
    ) -> Result<Vec<u8>, CodecError> {
        self.0.decode_range(input, expected, range)
    }

    fn decode_range_from(
        &self,
        stored_len: u64,
        read: &mut dyn FnMut(u64, usize) -> Result<Vec<u8>, CodecError>,
        expected: usize,
        range: std::ops::Range<usize>,
    ) -> Result<Vec<u8>, CodecError> {
        decode_frame_range_from(&self.0, stored_len, read, expected, range)
    }

    fn encode(&self, input: &[u8], output: &mut Vec<u8>) -> Result<(), CodecError> {
        Blosc2 { frame: true, ..self.0 }.encode(input, output)
    }
}
