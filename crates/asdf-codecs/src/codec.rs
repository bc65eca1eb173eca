//! The [`Codec`] trait, the [`Label`] it is registered under, and what every codec shares.

use std::fmt;
use std::ops::Range;

/// The 4-byte compression field of a block header.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Label(pub [u8; 4]);

impl Label {
    /// No compression: four NUL bytes.
    pub const NONE: Label = Label([0; 4]);
    /// `zlib`.
    pub const ZLIB: Label = Label(*b"zlib");
    /// `bzp2`.
    pub const BZP2: Label = Label(*b"bzp2");
    /// `lz4\0`.
    pub const LZ4: Label = Label(*b"lz4\0");
    /// `zstd` (asdf-compression).
    pub const ZSTD: Label = Label(*b"zstd");
    /// `lz4f` (asdf-compression: one LZ4 frame).
    pub const LZ4F: Label = Label(*b"lz4f");
    /// `blsc` (blosc1 chunk).
    pub const BLSC: Label = Label(*b"blsc");
    /// `bls2` (blosc2 chunk or frame).
    pub const BLS2: Label = Label(*b"bls2");
    /// Not a label in any file: what an ASDF 0.1.0 block with the ENCODED flag (the ASDF 0.1.0 draft)
    /// reports, its data starting with a YAML encoding chain ([`crate::encoding`]). Its first
    /// byte is not ASCII, so no written label can be mistaken for it.
    pub const ENCODING_CHAIN: Label = Label([0xd3, b'e', b'n', b'c']);

    /// Whether this is the "no compression" label.
    #[must_use]
    pub fn is_none(self) -> bool {
        self == Label::NONE
    }

    /// Builds a label from a name of up to 4 ASCII bytes, NUL-padded (`"lz4"` -> `lz4\0`);
    /// `""` and `"none"` give [`Label::NONE`]. Returns `None` for longer names.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Label> {
        if name.is_empty() || name == "none" {
            return Some(Label::NONE);
        }
        let b = name.as_bytes();
        if b.len() > 4 {
            return None;
        }
        let mut l = [0u8; 4];
        l[..b.len()].copy_from_slice(b);
        Some(Label(l))
    }

    /// The label as text: NUL padding removed, other bytes escaped.
    #[must_use]
    pub fn name(self) -> String {
        if self.is_none() {
            return "none".to_owned();
        }
        if self == Label::ENCODING_CHAIN {
            return "encoding-chain".to_owned();
        }
        let trimmed: &[u8] = {
            let end = self.0.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
            &self.0[..end]
        };
        trimmed.escape_ascii().to_string()
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl fmt::Debug for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Label({:?})", self.name())
    }
}

/// What a codec reports when it cannot decode or encode.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// The stream decodes to a different number of bytes than the header's `data_size`.
    #[error("decoded size {actual} does not match the block's data_size {expected}")]
    SizeMismatch {
        /// data_size from the block header.
        expected: u64,
        /// What the stream produced (a lower bound when it produced too much).
        actual: u64,
    },
    /// The compressed bytes end before the stream does.
    #[error("compressed stream is truncated after {consumed} bytes")]
    Truncated {
        /// Input bytes consumed.
        consumed: u64,
    },
    /// The codec's framing (chunk lengths, sizes) is inconsistent.
    #[error("invalid framing at compressed byte {at}")]
    Framing {
        /// Offset within the compressed bytes.
        at: u64,
    },
    /// The underlying library rejected the data.
    #[error("{0}")]
    Library(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl CodecError {
    /// Wraps a library's error.
    pub fn library(e: impl std::error::Error + Send + Sync + 'static) -> Self {
        CodecError::Library(Box::new(e))
    }
}

/// A block compression algorithm.
///
/// Implement it to add a label; register the implementation with [`Registry::register`].
pub trait Codec: Send + Sync + fmt::Debug {
    /// The label written in block headers.
    fn label(&self) -> Label;

    /// Decodes `input` into `output`, which has exactly the block's `data_size` bytes.
    ///
    /// # Errors
    /// [`CodecError::SizeMismatch`] when the stream decodes to more or fewer bytes than
    /// `output.len()`; other variants for corrupt input.
    fn decode(&self, input: &[u8], output: &mut [u8]) -> Result<(), CodecError>;

    /// Appends the encoding of `input` to `output`.
    ///
    /// # Errors
    /// When the library fails.
    fn encode(&self, input: &[u8], output: &mut Vec<u8>) -> Result<(), CodecError>;

    /// Encodes `input`, handing the encoded bytes to `sink` in consecutive pieces (their
    /// concatenation is what [`Codec::encode`] appends), so that a writer can checksum and
    /// write the first pieces while later ones are being compressed. The default encodes the
    /// whole block and hands it over at once.
    ///
    /// # Errors
    /// When the library fails, or `sink`'s error (which stops the encoding).
    fn encode_pieces(
        &self,
        input: &[u8],
        sink: &mut dyn FnMut(&[u8]) -> Result<(), CodecError>,
    ) -> Result<(), CodecError> {
        let mut out = Vec::new();
        self.encode(input, &mut out)?;
        sink(&out)
    }

    /// Decodes `input`, which must decode to exactly `expected` bytes, handing the decoded
    /// bytes to `sink` in consecutive pieces (of about [`PIECE`] bytes for the streaming
    /// codecs), so that a block of any size is read with bounded memory. The default decodes
    /// the whole block and hands it over at once.
    ///
    /// # Errors
    /// As [`Codec::decode`]; an error may come after some pieces were handed over.
    fn decode_pieces(&self, input: &[u8], expected: usize, sink: &mut dyn FnMut(&[u8])) -> Result<(), CodecError> {
        let mut out = zeroed(expected)
            .ok_or_else(|| CodecError::library(std::io::Error::from(std::io::ErrorKind::OutOfMemory)))?;
        self.decode(input, &mut out)?;
        sink(&out);
        Ok(())
    }

    /// Decodes only bytes `range` of `input` (which decodes to `expected` bytes; `range` lies
    /// within it). The default decodes in pieces and keeps those in range; a codec with
    /// random access (Blosc2 frames, through their chunk index) decodes only what the range
    /// touches.
    ///
    /// # Errors
    /// As [`Codec::decode`].
    fn decode_range(&self, input: &[u8], expected: usize, range: Range<usize>) -> Result<Vec<u8>, CodecError> {
        decode_range_by_pieces(self, input, expected, range)
    }

    /// [`Codec::decode_range`] of stored bytes that are not in memory: `read(offset, len)`
    /// reads `len` of the `stored_len` stored bytes from `offset`. The default reads them all;
    /// a codec with random access (Blosc2 frames) reads only its header, its chunk index and
    /// the chunks the range touches, so that a cutout of a large block read from a file or a
    /// server costs what it touches.
    ///
    /// # Errors
    /// As [`Codec::decode`], and `read`'s.
    fn decode_range_from(
        &self,
        stored_len: u64,
        read: &mut dyn FnMut(u64, usize) -> Result<Vec<u8>, CodecError>,
        expected: usize,
        range: Range<usize>,
    ) -> Result<Vec<u8>, CodecError> {
        let len = usize::try_from(stored_len).map_err(|_| CodecError::Truncated { consumed: 0 })?;
        let all = read(0, len)?;
        self.decode_range(&all, expected, range)
    }
}

/// [`Codec::decode_range`] through [`Codec::decode_pieces`]: the pieces that overlap `range`
/// are kept.
///
/// # Errors
/// As [`Codec::decode_pieces`].
pub fn decode_range_by_pieces<C: Codec + ?Sized>(
    codec: &C,
    input: &[u8],
    expected: usize,
    range: Range<usize>,
) -> Result<Vec<u8>, CodecError> {
    let mut out = Vec::with_capacity(range.len());
    let mut pos = 0usize;
    codec.decode_pieces(input, expected, &mut |piece| {
        let (s, e) = (pos, pos + piece.len());
        pos = e;
        let (a, b) = (range.start.max(s), range.end.min(e));
        if a < b {
            out.extend_from_slice(&piece[a - s..b - s]);
        }
    })?;
    Ok(out)
}

/// The size of the pieces [`Codec::decode_pieces`] hands over (1 MiB).
pub const PIECE: usize = 1 << 20;

/// `n` zero bytes, or `None` when they cannot be allocated. Large buffers come from the
/// allocator's zeroed pages (`calloc`: fresh anonymous memory), so the pages a decoder never
/// writes are never touched: a block that claims gigabytes but decodes to a few bytes costs
/// a few pages of resident memory, not its claim.
#[must_use]
pub fn zeroed(n: usize) -> Option<Vec<u8>> {
    if n == 0 {
        return Some(Vec::new());
    }
    let layout = std::alloc::Layout::array::<u8>(n).ok()?;
    // SAFETY: `layout` has a non-zero size (n > 0). The pointer, when not null, was allocated
    // by the global allocator with exactly this layout (size n, alignment 1) and all n bytes
    // are initialised (zeroed), so it may become a Vec<u8> of length and capacity n, which
    // frees it with the same layout.
    unsafe {
        let p = std::alloc::alloc_zeroed(layout);
        if p.is_null() {
            return None;
        }
        Some(Vec::from_raw_parts(p, n, n))
    }
}

/// Shared helper: fails when a streaming decoder filled `output` but still has input that
/// decodes to more bytes.
pub(crate) fn too_much(expected: usize) -> CodecError {
    CodecError::SizeMismatch {
        expected: expected as u64,
        actual: expected as u64 + 1,
    }
}
