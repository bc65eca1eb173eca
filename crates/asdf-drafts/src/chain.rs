//! Encoding chains of the ASDF 0.1.0 draft: a block with the ENCODED flag starts
//! with a YAML list of encodings (`--- [[tile, {shape: [32, 32]}], zlib]\n...\n`) applied in
//! order to encode and in reverse to decode, followed by the encoded bytes.
//!
//! Built in: `tile` (array to array), `quantize` (array to binary) and `zlib` (binary to
//! binary). A chain is some `tile`s, at most one `quantize`, then `zlib`s; with no `quantize`
//! the array's bytes are the binary (the seed's implicit "null" encoding). An unknown name
//! makes that block fail ([`ChainError::Unknown`]) and nothing else.
//!
//! The seed leaves some things open; this implementation reads them so (docs/ARCHITECTURE.md
//! repeats the list):
//! - **Tiles** are stored one after another in C order over the grid of tiles, the elements
//!   of each tile in C order. Edge tiles are padded to the full tile shape as the seed says
//!   (each padded element a copy of its tile's first element, so that a `quantize` after the
//!   tiling keeps the tile's range that of real values); the decoder also takes edge tiles
//!   stored clipped to the
//!   array, told apart by the data's length.
//! - **Quantize** chunks are decoded one after another and their values concatenated,
//!   whatever their number; this writer makes one chunk per tile after a `tile` (each tile its
//!   own offset and scale, as CFITSIO does) and chunks of 65,536 values otherwise. Values are
//!   packed most significant bit first, across byte boundaries, each chunk's data padded with
//!   zero bits to a whole byte. The decoded floats (`dtype` 32 or 64) are big-endian, the byte
//!   order of every other number in the block and of the era's arrays by default: a reader of
//!   the tree must take the array as big-endian (the `asdf` crate rewrites its `byteorder`).
//! - **memory_size** must equal the decoded length.
//!
//! The chain's YAML is parsed by a [`ChainParser`] the caller supplies (this crate has no
//! YAML parser; the `asdf` crate registers [`ChainCodec`] with one built on `asdf-yaml`).

use std::io::Read;

use asdf_layout::compression::{Codec, CodecError, Label};

/// One step of a chain.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Encoding {
    /// Reorders an array into tiles of `shape` (array to array).
    Tile {
        /// The shape of a tile.
        shape: Vec<usize>,
        /// The array's shape before tiling.
        original_shape: Vec<usize>,
        /// Bytes per element.
        item_size: usize,
    },
    /// Floats to scaled integers (array to binary; lossy).
    Quantize {
        /// 32 or 64: the bits of the floats.
        dtype: u8,
        /// The shape of the quantized array.
        original_shape: Vec<usize>,
        /// Bits per encoded value when this writer encodes (1 to 32); not needed to decode,
        /// each chunk says its own.
        bits: u8,
    },
    /// zlib (binary to binary).
    Zlib,
    /// An encoding this library does not know.
    Unknown(String),
}

impl Encoding {
    /// The encoding's name in a chain.
    #[must_use]
    pub fn name(&self) -> &str {
        match self {
            Encoding::Tile { .. } => "tile",
            Encoding::Quantize { .. } => "quantize",
            Encoding::Zlib => "zlib",
            Encoding::Unknown(n) => n,
        }
    }
}

/// A list of encodings, in the order they are applied when encoding.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Chain(pub Vec<Encoding>);

/// What an encoding chain reports when it cannot decode or encode.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ChainError {
    /// The block's data has no YAML chain ending in a `...` line.
    #[error("the encoded block does not start with a YAML encoding chain ending in a `...` line")]
    NoChainEnd,
    /// The chain's YAML does not parse.
    #[error("the encoding chain's YAML does not parse: {0}")]
    Yaml(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The chain is not a list of names and (name, arguments) pairs.
    #[error("the encoding chain is not a list of names and [name, {{arguments}}] pairs (entry {index}: {problem})")]
    Shape {
        /// Position in the chain.
        index: usize,
        /// What is wrong.
        problem: &'static str,
    },
    /// An argument is missing or of the wrong kind.
    #[error("encoding {index} (`{name}`): argument `{argument}` is missing or invalid")]
    Argument {
        /// Position in the chain.
        index: usize,
        /// The encoding.
        name: &'static str,
        /// The argument.
        argument: &'static str,
    },
    /// An encoding this library does not know.
    #[error("unknown encoding `{name}` (entry {index} of the chain): this block cannot be decoded")]
    Unknown {
        /// Position in the chain.
        index: usize,
        /// Its name.
        name: String,
    },
    /// The kinds do not follow each other (array-to-array, then array-to-binary, then
    /// binary-to-binary).
    #[error("encoding {index} (`{name}`) cannot follow a binary-producing encoding")]
    Order {
        /// Position in the chain.
        index: usize,
        /// Its name.
        name: String,
    },
    /// Tiled data whose length fits neither padded nor clipped edge tiles.
    #[error("tiled data has {got} bytes; tiles of {tile:?} over {original:?} need {padded} (padded) or {clipped}")]
    TileLength {
        /// The tile shape.
        tile: Vec<usize>,
        /// The array shape.
        original: Vec<usize>,
        /// Length with padded edge tiles.
        padded: usize,
        /// Length with clipped edge tiles.
        clipped: usize,
        /// The data's length.
        got: usize,
    },
    /// A quantize chunk is malformed.
    #[error("quantize chunk at byte {at}: {problem}")]
    Quantize {
        /// Offset in the quantized stream.
        at: usize,
        /// What is wrong.
        problem: &'static str,
    },
    /// A value that quantize cannot encode (NaN or infinite), or a bad bit width.
    #[error("quantize cannot encode: {0}")]
    QuantizeInput(&'static str),
    /// The decoded data is not memory_size long.
    #[error("the chain decodes to {got} bytes, not the block's memory_size {expected}")]
    Size {
        /// memory_size.
        expected: usize,
        /// What the chain gave.
        got: usize,
    },
    /// An intermediate result beyond the bound set for this block.
    #[error("an intermediate result of the chain exceeds {limit} bytes")]
    TooLarge {
        /// The bound.
        limit: usize,
    },
    /// zlib failed.
    #[error("zlib: {0}")]
    Zlib(#[source] std::io::Error),
    /// The codec was asked to encode without a chain.
    #[error("an encoding chain block is written with Chain::encode, not through the codec registry")]
    EncodeNeedsChain,
}

/// Parses a chain's YAML (the bytes before and including the `...` line).
pub type ChainParser = fn(&[u8]) -> Result<Chain, ChainError>;

/// Splits an encoded block's data into the chain's YAML (through its `...` line) and the
/// encoded bytes after it.
///
/// # Errors
/// [`ChainError::NoChainEnd`].
pub fn split(block: &[u8]) -> Result<(&[u8], &[u8]), ChainError> {
    let end = asdf_layout::header::find_end_marker(block, 0, true).ok_or(ChainError::NoChainEnd)?;
    Ok(block.split_at(end))
}

fn product(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))
}

/// Calls `f` with every index of `shape` in C order.
fn for_each_index(shape: &[usize], mut f: impl FnMut(&[usize])) {
    if shape.contains(&0) {
        return;
    }
    let mut idx = vec![0usize; shape.len()];
    loop {
        f(&idx);
        let mut d = shape.len();
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// Geometry of a tiling. Dimensions of extent 1 tiled by 1 change nothing in the layout and
/// are dropped: the work is bounded by the bytes, not by a rank of 1,000 such dimensions.
struct Tiling {
    tile: Vec<usize>,
    original: Vec<usize>,
    item: usize,
    grid: Vec<usize>,
}

impl Tiling {
    fn new(tile: &[usize], original: &[usize], item: usize, index: usize) -> Result<Self, ChainError> {
        let arg = |argument| ChainError::Argument {
            index,
            name: "tile",
            argument,
        };
        if tile.len() != original.len() {
            return Err(arg("shape"));
        }
        if tile.contains(&0) {
            return Err(arg("shape"));
        }
        if item == 0 {
            return Err(arg("item_size"));
        }
        let (mut t, mut o): (Vec<usize>, Vec<usize>) = tile
            .iter()
            .zip(original)
            .filter(|&(&t, &o)| !(t == 1 && o == 1))
            .map(|(&t, &o)| (t, o))
            .unzip();
        if t.is_empty() && !tile.is_empty() {
            (t, o) = (vec![1], vec![1]);
        }
        let grid = t.iter().zip(&o).map(|(t, o)| o.div_ceil(*t)).collect();
        Ok(Tiling {
            tile: t,
            original: o,
            item,
            grid,
        })
    }

    fn padded_len(&self) -> Option<usize> {
        product(&self.grid)?
            .checked_mul(product(&self.tile)?)?
            .checked_mul(self.item)
    }

    fn clipped_len(&self) -> Option<usize> {
        product(&self.original)?.checked_mul(self.item)
    }

    /// Calls `f(tiled_offset, array_offset, len)` for each contiguous run of bytes, in the
    /// tiled order; `padded` says whether edge tiles take their full shape in the tiled data.
    fn runs(&self, padded: bool, mut f: impl FnMut(usize, usize, usize)) {
        let n = self.tile.len();
        if n == 0 {
            f(0, 0, self.item);
            return;
        }
        // Strides of the array, in elements.
        let mut strides = vec![1usize; n];
        for d in (0..n - 1).rev() {
            strides[d] = strides[d + 1] * self.original[d + 1];
        }
        let mut tiled = 0usize;
        for_each_index(&self.grid, |t| {
            let start: Vec<usize> = t.iter().zip(&self.tile).map(|(i, s)| i * s).collect();
            let extent: Vec<usize> = (0..n).map(|d| self.tile[d].min(self.original[d] - start[d])).collect();
            let stored: Vec<usize> = if padded { self.tile.clone() } else { extent.clone() };
            let rows = &stored[..n - 1];
            let row_len = stored[n - 1];
            for_each_index(rows, |r| {
                let inside = r.iter().zip(&extent).all(|(i, e)| i < e);
                if inside {
                    let at: usize = (0..n - 1).map(|d| (start[d] + r[d]) * strides[d]).sum::<usize>() + start[n - 1];
                    f(tiled, at * self.item, extent[n - 1] * self.item);
                }
                tiled += row_len * self.item;
            });
        });
    }
}

fn untile(data: &[u8], tile: &[usize], original: &[usize], item: usize, index: usize) -> Result<Vec<u8>, ChainError> {
    let t = Tiling::new(tile, original, item, index)?;
    let padded = t.padded_len().unwrap_or(usize::MAX);
    let clipped = t.clipped_len().ok_or(ChainError::TooLarge { limit: usize::MAX })?;
    let mode = if data.len() == padded {
        true
    } else if data.len() == clipped {
        false
    } else {
        return Err(ChainError::TileLength {
            tile: tile.to_vec(),
            original: original.to_vec(),
            padded,
            clipped,
            got: data.len(),
        });
    };
    let mut out = asdf_layout::compression::zeroed(clipped).ok_or(ChainError::TooLarge { limit: clipped })?;
    t.runs(mode, |from, to, len| {
        out[to..to + len].copy_from_slice(&data[from..from + len])
    });
    Ok(out)
}

fn tile(data: &[u8], tile: &[usize], original: &[usize], item: usize, index: usize) -> Result<Vec<u8>, ChainError> {
    let t = Tiling::new(tile, original, item, index)?;
    let padded = t.padded_len().ok_or(ChainError::TooLarge { limit: usize::MAX })?;
    if Some(data.len()) != t.clipped_len() {
        return Err(ChainError::Size {
            expected: t.clipped_len().unwrap_or(0),
            got: data.len(),
        });
    }
    let mut out = vec![0u8; padded];
    let mut written = vec![false; padded / item.max(1)];
    t.runs(true, |to, from, len| {
        out[to..to + len].copy_from_slice(&data[from..from + len]);
        for w in &mut written[to / item..(to + len) / item] {
            *w = true;
        }
    });
    // The seed leaves the padding's values open ("discarded upon decoding"): each padded
    // element repeats its tile's first element (always a real one), so that a `quantize`
    // after the tiling keeps each tile's range that of its real values.
    let tile_elems = product(tile).unwrap_or(1).max(1);
    for (chunk, w) in out.chunks_mut(tile_elems * item).zip(written.chunks(tile_elems)) {
        if w.iter().all(|&x| x) || chunk.len() < item {
            continue;
        }
        let first: Vec<u8> = chunk[..item].to_vec();
        for (e, _) in chunk.chunks_mut(item).zip(w).filter(|(_, ok)| !**ok) {
            e.copy_from_slice(&first);
        }
    }
    Ok(out)
}

const QUANTIZE_HEADER: usize = 1 + 8 + 8 + 8;

/// Bytes pulled one at a time from a reader, through a buffer; counts what was taken.
struct ByteSource<'r> {
    r: &'r mut dyn Read,
    buf: Vec<u8>,
    pos: usize,
    len: usize,
    taken: usize,
}

impl ByteSource<'_> {
    fn next(&mut self) -> Result<Option<u8>, ChainError> {
        if self.pos == self.len {
            self.len = loop {
                match self.r.read(&mut self.buf) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(ChainError::Zlib(e)),
                }
            };
            self.pos = 0;
            if self.len == 0 {
                return Ok(None);
            }
        }
        let b = self.buf[self.pos];
        self.pos += 1;
        self.taken += 1;
        Ok(Some(b))
    }
}

/// [`dequantize`] reading the quantized stream from `r` and handing the big-endian floats to
/// `sink` in pieces of about [`asdf_layout::compression::PIECE`] bytes: memory is a piece, whatever
/// the chunks claim. At most `max_out` bytes; returns how many were handed over.
// As `dequantize`: the casts take low bits and narrow to float32 as `dtype: 32` asks.
#[allow(clippy::cast_possible_truncation)]
fn dequantize_stream(
    r: &mut dyn Read,
    dtype: u8,
    max_out: usize,
    sink: &mut dyn FnMut(&[u8]) -> Result<(), ChainError>,
) -> Result<usize, ChainError> {
    let size = usize::from(dtype / 8);
    let mut src = ByteSource {
        r,
        buf: vec![0; 64 << 10],
        pos: 0,
        len: 0,
        taken: 0,
    };
    let piece = asdf_layout::compression::PIECE;
    let mut out: Vec<u8> = Vec::with_capacity(piece);
    let mut total = 0usize;
    loop {
        let at = src.taken;
        let bad = |problem| ChainError::Quantize { at, problem };
        let mut h = [0u8; QUANTIZE_HEADER];
        match src.next()? {
            None => break,
            Some(b) => h[0] = b,
        }
        for x in &mut h[1..] {
            *x = src.next()?.ok_or(bad("header cut off"))?;
        }
        let bits = h[0];
        let f64_at = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&h[i..i + 8]);
            f64::from_be_bytes(b)
        };
        let (offset, scale) = (f64_at(1), f64_at(9));
        let mut nb = [0u8; 8];
        nb.copy_from_slice(&h[17..25]);
        if bits == 0 || bits > 64 {
            return Err(bad("encoded_bits must be 1 to 64"));
        }
        let n = usize::try_from(u64::from_be_bytes(nb)).map_err(|_| bad("nvalues too large"))?;
        if n.saturating_mul(size) > max_out.saturating_sub(total) {
            return Err(ChainError::TooLarge { limit: max_out });
        }
        let mut acc: u128 = 0;
        let mut have = 0u32;
        let b = u32::from(bits);
        for _ in 0..n {
            while have < b {
                let byte = src.next()?.ok_or(bad("data cut off"))?;
                acc = (acc << 8) | u128::from(byte);
                have += 8;
            }
            let raw = (acc >> (have - b)) as u64 & (u64::MAX >> (64 - b));
            have -= b;
            acc &= (1u128 << have) - 1;
            let v = ((raw << (64 - b)) as i64) >> (64 - b);
            let x = (v as f64) * scale + offset;
            if dtype == 32 {
                out.extend_from_slice(&(x as f32).to_be_bytes());
            } else {
                out.extend_from_slice(&x.to_be_bytes());
            }
            if out.len() >= piece {
                sink(&out)?;
                out.clear();
            }
        }
        total += n * size;
    }
    if !out.is_empty() {
        sink(&out)?;
    }
    Ok(total)
}

/// Quantizes `values` into chunks of `chunk` values with `bits` bits each.
// The casts take bytes off a bit accumulator and a rounded, clamped value as an integer.
#[allow(clippy::cast_possible_truncation)]
fn quantize(values: &[f64], bits: u8, chunk: usize) -> Result<Vec<u8>, ChainError> {
    if bits == 0 || bits > 32 {
        return Err(ChainError::QuantizeInput("this writer encodes 1 to 32 bits per value"));
    }
    if values.iter().any(|v| !v.is_finite()) {
        return Err(ChainError::QuantizeInput("a value is NaN or infinite"));
    }
    let half = 2f64.powi(i32::from(bits) - 1);
    let mut out = Vec::new();
    for part in values.chunks(chunk.max(1)) {
        let lo = part.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = part.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let scale = if hi > lo { (hi - lo) / (2.0 * half - 1.0) } else { 0.0 };
        let offset = if scale > 0.0 { lo + half * scale } else { lo };
        out.push(bits);
        out.extend_from_slice(&offset.to_be_bytes());
        out.extend_from_slice(&scale.to_be_bytes());
        out.extend_from_slice(&(part.len() as u64).to_be_bytes());
        let mut acc: u128 = 0;
        let mut have = 0u32;
        let b = u32::from(bits);
        for &v in part {
            let q = if scale > 0.0 {
                ((v - offset) / scale).round().clamp(-half, half - 1.0) as i64
            } else {
                0
            };
            acc = (acc << b) | u128::from(q as u64 & (u64::MAX >> (64 - b)));
            have += b;
            while have >= 8 {
                out.push((acc >> (have - 8)) as u8);
                have -= 8;
                acc &= (1u128 << have) - 1;
            }
        }
        if have > 0 {
            out.push((acc << (8 - have)) as u8);
        }
    }
    Ok(out)
}

impl Chain {
    /// Checks the kinds' order and that every name is known; returns the position of the
    /// array-to-binary step, if any.
    fn check(&self) -> Result<Option<usize>, ChainError> {
        let mut binary = false;
        let mut a2b = None;
        for (index, e) in self.0.iter().enumerate() {
            match e {
                Encoding::Unknown(name) => {
                    return Err(ChainError::Unknown {
                        index,
                        name: name.clone(),
                    });
                }
                Encoding::Tile { .. } | Encoding::Quantize { .. } if binary => {
                    return Err(ChainError::Order {
                        index,
                        name: e.name().to_owned(),
                    });
                }
                Encoding::Quantize { dtype, .. } => {
                    if *dtype != 32 && *dtype != 64 {
                        return Err(ChainError::Argument {
                            index,
                            name: "quantize",
                            argument: "dtype",
                        });
                    }
                    binary = true;
                    a2b = Some(index);
                }
                Encoding::Zlib => binary = true,
                Encoding::Tile { .. } => {}
            }
        }
        Ok(a2b)
    }

    /// Whether the chain has a `tile` step (whose inverse needs the whole array at once).
    fn tiled(&self) -> bool {
        self.0.iter().any(|e| matches!(e, Encoding::Tile { .. }))
    }

    /// Hands the chain's decoded bytes to `sink` in pieces, for a chain without `tile`: the
    /// stored bytes go through the zlib steps and `quantize` as streams, so memory is a piece
    /// whatever the block or its chunks claim. At most `max_out` bytes; returns how many.
    fn stream(
        &self,
        data: &[u8],
        max_out: usize,
        sink: &mut dyn FnMut(&[u8]) -> Result<(), ChainError>,
    ) -> Result<usize, ChainError> {
        let a2b = self.check()?;
        // The zlib steps are the chain's tail (`check`): undone last first.
        let zlibs = self.0.iter().filter(|e| matches!(e, Encoding::Zlib)).count();
        let mut r: Box<dyn Read + '_> = Box::new(data);
        for _ in 0..zlibs {
            r = Box::new(flate2::read::ZlibDecoder::new(r));
        }
        if let Some(Encoding::Quantize { dtype, .. }) = a2b.and_then(|i| self.0.get(i)) {
            return dequantize_stream(&mut r, *dtype, max_out, sink);
        }
        let mut buf = vec![0u8; asdf_layout::compression::PIECE];
        let mut total = 0usize;
        loop {
            let n = match r.read(&mut buf) {
                Ok(0) => return Ok(total),
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(ChainError::Zlib(e)),
            };
            total += n;
            if total > max_out {
                return Err(ChainError::TooLarge { limit: max_out });
            }
            sink(&buf[..n])?;
        }
    }

    /// Hands the decoded block (`expected` bytes) to `sink` in pieces: streamed for a chain
    /// without `tile` (memory: a piece), decoded whole otherwise.
    ///
    /// # Errors
    /// As [`Chain::decode`].
    pub fn decode_pieces(&self, data: &[u8], expected: usize, sink: &mut dyn FnMut(&[u8])) -> Result<(), ChainError> {
        if self.tiled() {
            let mut out = asdf_layout::compression::zeroed(expected).ok_or(ChainError::TooLarge { limit: expected })?;
            self.decode(data, &mut out)?;
            sink(&out);
            return Ok(());
        }
        let got = self.stream(data, expected, &mut |p| {
            sink(p);
            Ok(())
        })?;
        if got != expected {
            return Err(ChainError::Size { expected, got });
        }
        Ok(())
    }

    /// Decodes `data` (the bytes after the chain's YAML) into `out`, which is the block's
    /// memory_size long. A chain without `tile` decodes straight into `out` (no intermediate
    /// buffers); with `tile`, the intermediate results grow only as the stored bytes really
    /// produce them (never by a claim), within 64 times `out` plus 1 MiB, and an allocation
    /// the system refuses is an error, not an abort.
    ///
    /// # Errors
    /// [`ChainError`]: unknown encodings, bad order or arguments, malformed data, a decoded
    /// size other than `out.len()`.
    pub fn decode(&self, data: &[u8], out: &mut [u8]) -> Result<(), ChainError> {
        self.check()?;
        if !self.tiled() {
            let mut pos = 0usize;
            let expected = out.len();
            let got = self.stream(data, expected, &mut |p| {
                out.get_mut(pos..pos + p.len())
                    .ok_or(ChainError::TooLarge { limit: expected })?
                    .copy_from_slice(p);
                pos += p.len();
                Ok(())
            })?;
            if got != expected {
                return Err(ChainError::Size { expected, got });
            }
            return Ok(());
        }
        // Intermediate results are bounded by what the block can need: padded tiles and
        // quantize headers stay well within 64 times the decoded size plus 1 MiB.
        let limit = out.len().saturating_mul(64).saturating_add(1 << 20);
        // The part before the tiles, streamed into a buffer that grows with what it gets.
        let binary = Chain(
            self.0
                .iter()
                .filter(|e| !matches!(e, Encoding::Tile { .. }))
                .cloned()
                .collect(),
        );
        let mut collected: Vec<u8> = Vec::new();
        binary.stream(data, limit, &mut |p| {
            collected
                .try_reserve(p.len())
                .map_err(|_| ChainError::TooLarge { limit })?;
            collected.extend_from_slice(p);
            Ok(())
        })?;
        let mut cur: std::borrow::Cow<'_, [u8]> = std::borrow::Cow::Owned(collected);
        for (index, e) in self.0.iter().enumerate().rev() {
            cur = std::borrow::Cow::Owned(match e {
                Encoding::Zlib | Encoding::Quantize { .. } => continue,
                Encoding::Tile {
                    shape,
                    original_shape,
                    item_size,
                } => untile(&cur, shape, original_shape, *item_size, index)?,
                Encoding::Unknown(_) => unreachable_unknown()?,
            });
        }
        if cur.len() != out.len() {
            return Err(ChainError::Size {
                expected: out.len(),
                got: cur.len(),
            });
        }
        out.copy_from_slice(&cur);
        Ok(())
    }

    /// Encodes an array's bytes (`little_endian` says their byte order, used by `quantize`,
    /// which reads them as floats of its `dtype`). Returns the bytes that follow the chain's
    /// YAML.
    ///
    /// # Errors
    /// As [`Chain::decode`], and NaN or infinite values for `quantize`.
    pub fn encode(&self, data: &[u8], little_endian: bool) -> Result<Vec<u8>, ChainError> {
        self.check()?;
        let tile_elems = self.0.iter().rev().find_map(|e| match e {
            Encoding::Tile { shape, .. } => product(shape),
            _ => None,
        });
        let mut cur = data.to_vec();
        for (index, e) in self.0.iter().enumerate() {
            cur = match e {
                Encoding::Tile {
                    shape,
                    original_shape,
                    item_size,
                } => tile(&cur, shape, original_shape, *item_size, index)?,
                Encoding::Quantize { dtype, bits, .. } => {
                    let size = usize::from(*dtype / 8);
                    let values: Vec<f64> = cur
                        .chunks_exact(size)
                        .map(|c| match (size, little_endian) {
                            (4, true) => f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
                            (4, false) => f64::from(f32::from_be_bytes([c[0], c[1], c[2], c[3]])),
                            (_, le) => {
                                let mut b = [0u8; 8];
                                b.copy_from_slice(c);
                                if le {
                                    f64::from_le_bytes(b)
                                } else {
                                    f64::from_be_bytes(b)
                                }
                            }
                        })
                        .collect();
                    quantize(&values, *bits, tile_elems.unwrap_or(65_536))?
                }
                Encoding::Zlib => {
                    let mut out = Vec::new();
                    asdf_layout::compression::Zlib::default()
                        .encode(&cur, &mut out)
                        .map_err(|e| ChainError::Zlib(std::io::Error::other(e)))?;
                    out
                }
                Encoding::Unknown(_) => unreachable_unknown()?,
            };
        }
        Ok(cur)
    }

    /// The chain as the YAML that starts an encoded block (`--- [...]\n...\n`).
    #[must_use]
    pub fn to_yaml(&self) -> String {
        let list = |v: &[usize]| format!("[{}]", v.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "));
        let entries: Vec<String> = self
            .0
            .iter()
            .map(|e| match e {
                Encoding::Tile {
                    shape,
                    original_shape,
                    item_size,
                } => format!(
                    "[tile, {{shape: {}, original_shape: {}, item_size: {item_size}}}]",
                    list(shape),
                    list(original_shape)
                ),
                Encoding::Quantize {
                    dtype, original_shape, ..
                } => format!(
                    "[quantize, {{dtype: {dtype}, original_shape: {}}}]",
                    list(original_shape)
                ),
                Encoding::Zlib => "zlib".to_owned(),
                Encoding::Unknown(n) => n.clone(),
            })
            .collect();
        format!("--- [{}]\n...\n", entries.join(", "))
    }
}

/// `check` refuses unknown encodings before any step runs.
fn unreachable_unknown() -> Result<Vec<u8>, ChainError> {
    Err(ChainError::Shape {
        index: 0,
        problem: "unknown encoding",
    })
}

/// The codec of [`Label::ENCODING_CHAIN`] blocks: splits off the chain's YAML, parses it with
/// the parser it was built with, and decodes.
#[derive(Debug, Clone, Copy)]
pub struct ChainCodec {
    parse: ChainParser,
}

impl ChainCodec {
    /// A codec that parses chains with `parse`.
    #[must_use]
    pub fn new(parse: ChainParser) -> Self {
        Self { parse }
    }
}

impl Codec for ChainCodec {
    fn label(&self) -> Label {
        Label::ENCODING_CHAIN
    }

    fn decode(&self, input: &[u8], output: &mut [u8]) -> Result<(), CodecError> {
        let (yaml, data) = split(input).map_err(CodecError::library)?;
        let chain = (self.parse)(yaml).map_err(CodecError::library)?;
        chain.decode(data, output).map_err(CodecError::library)
    }

    /// Streamed for chains without `tile` (see [`Chain::decode_pieces`]).
    fn decode_pieces(&self, input: &[u8], expected: usize, sink: &mut dyn FnMut(&[u8])) -> Result<(), CodecError> {
        let (yaml, data) = split(input).map_err(CodecError::library)?;
        let chain = (self.parse)(yaml).map_err(CodecError::library)?;
        chain.decode_pieces(data, expected, sink).map_err(CodecError::library)
    }

    fn encode(&self, _input: &[u8], _output: &mut Vec<u8>) -> Result<(), CodecError> {
        Err(CodecError::library(ChainError::EncodeNeedsChain))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quantized stream `data` decoded whole.
    fn dequantize(data: &[u8], dtype: u8, max_out: usize) -> Result<Vec<u8>, ChainError> {
        let mut out = Vec::new();
        let mut r = data;
        dequantize_stream(&mut r, dtype, max_out, &mut |p| {
            out.extend_from_slice(p);
            Ok(())
        })?;
        Ok(out)
    }

    #[test]
    fn tiles_round_trip_with_edges_padded_or_clipped() {
        let orig = [5usize, 7];
        let data: Vec<u8> = (0..35u8).collect();
        let tiled = tile(&data, &[2, 3], &orig, 1, 0).unwrap();
        // 3 x 3 tiles of 6 elements.
        assert_eq!(tiled.len(), 54);
        // First tile: rows 0-1, columns 0-2.
        assert_eq!(&tiled[..6], &[0, 1, 2, 7, 8, 9]);
        // Third tile (columns 6-8): one real column, two padded with the tile's first value.
        assert_eq!(&tiled[12..18], &[6, 6, 6, 13, 6, 6]);
        assert_eq!(untile(&tiled, &[2, 3], &orig, 1, 0).unwrap(), data);
        // The same tiles stored clipped to the array.
        let mut clipped = Vec::new();
        let t = Tiling::new(&[2, 3], &orig, 1, 0).unwrap();
        let mut runs = Vec::new();
        t.runs(false, |from, to, len| runs.push((from, to, len)));
        for (_, to, len) in &runs {
            clipped.extend_from_slice(&data[*to..to + len]);
        }
        assert_eq!(untile(&clipped, &[2, 3], &orig, 1, 0).unwrap(), data);
        assert!(untile(&clipped[1..], &[2, 3], &orig, 1, 0).is_err());
    }

    #[test]
    fn quantize_packs_odd_bit_widths_across_bytes() {
        let values: Vec<f64> = (0..37).map(|i| f64::from(i) * 0.25 - 3.0).collect();
        for bits in [3u8, 7, 11, 13, 32] {
            let q = quantize(&values, bits, 10).unwrap();
            let d = dequantize(&q, 64, 1 << 20).unwrap();
            let back: Vec<f64> = d.chunks(8).map(|c| f64::from_be_bytes(c.try_into().unwrap())).collect();
            let step = 2.25 / (2f64.powi(i32::from(bits)) - 1.0);
            for (a, b) in values.iter().zip(&back) {
                assert!((a - b).abs() <= step / 2.0 + 1e-12, "{bits} bits: {a} vs {b}");
            }
        }
        assert!(quantize(&[f64::NAN], 8, 10).is_err());
        assert!(dequantize(&[9u8; 10], 64, 100).is_err());
    }
}
