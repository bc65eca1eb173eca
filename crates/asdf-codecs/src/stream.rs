//! The decode loop shared by streaming decompressors (zlib, bzip2): fill an exact-size output,
//! accept concatenated streams, and tell "too much", "too little" and "truncated" apart.

use crate::codec::{CodecError, PIECE, too_much};

/// One call into a streaming decompressor.
pub(crate) trait StreamStep {
    /// Decodes some of `input` into `output`: (bytes consumed, bytes produced, stream ended).
    fn step(&mut self, input: &[u8], output: &mut [u8]) -> Result<(usize, usize, bool), CodecError>;
    /// Starts a fresh stream (for concatenated streams).
    fn reset(&mut self);
}

pub(crate) fn decode_stream(d: &mut impl StreamStep, input: &[u8], output: &mut [u8]) -> Result<(), CodecError> {
    // The whole output is the one window: the data stays where it was decoded.
    let expected = output.len();
    decode_through(d, input, expected, output, &mut |_| {})
}

/// Fills `output` from a decoding reader and checks that the reader ends there.
#[cfg(any(feature = "zstd", feature = "lz4f"))]
pub(crate) fn read_exact_size(dec: &mut impl std::io::Read, output: &mut [u8]) -> Result<(), CodecError> {
    let expected = output.len();
    read_through(dec, expected, output, &mut |_| {})
}

/// As [`decode_stream`], but into a reused buffer of [`PIECE`] bytes handed to `sink` each time
/// it fills: the whole `expected` bytes, with the same checks, in bounded memory.
pub(crate) fn decode_stream_pieces(
    d: &mut impl StreamStep,
    input: &[u8],
    expected: usize,
    sink: &mut dyn FnMut(&[u8]),
) -> Result<(), CodecError> {
    let mut buf = vec![0u8; PIECE.min(expected).max(1)];
    decode_through(d, input, expected, &mut buf, sink)
}

/// The decode loop: `expected` bytes decoded through the window `buf`, which is handed to
/// `sink` each time it fills (and at the end); concatenated streams accepted; "too much",
/// "too little" and "truncated" told apart.
fn decode_through(
    d: &mut impl StreamStep,
    input: &[u8],
    expected: usize,
    buf: &mut [u8],
    sink: &mut dyn FnMut(&[u8]),
) -> Result<(), CodecError> {
    let (mut i, mut total, mut fill) = (0usize, 0usize, 0usize);
    loop {
        if fill == buf.len() && fill > 0 {
            sink(&buf[..fill]);
            total += fill;
            fill = 0;
        }
        let room = (expected - total - fill).min(buf.len() - fill);
        let (c, p, ended) = if room > 0 {
            d.step(&input[i..], &mut buf[fill..fill + room])?
        } else {
            // Everything expected is there: the stream must end without producing more.
            let mut probe = [0u8; 1];
            let (c, p, ended) = d.step(&input[i..], &mut probe)?;
            if p > 0 {
                return Err(too_much(expected));
            }
            (c, 0, ended)
        };
        i += c;
        fill += p;
        if ended {
            if total + fill < expected && i < input.len() {
                d.reset();
                continue;
            }
            break;
        }
        if c == 0 && p == 0 {
            if i >= input.len() {
                return Err(CodecError::Truncated { consumed: i as u64 });
            }
            return Err(CodecError::Framing { at: i as u64 });
        }
    }
    if fill > 0 {
        sink(&buf[..fill]);
        total += fill;
    }
    if total != expected {
        return Err(CodecError::SizeMismatch {
            expected: expected as u64,
            actual: total as u64,
        });
    }
    Ok(())
}

/// As [`read_exact_size`], in pieces of [`PIECE`] bytes handed to `sink`.
#[cfg(any(feature = "zstd", feature = "lz4f"))]
pub(crate) fn read_pieces(
    dec: &mut impl std::io::Read,
    expected: usize,
    sink: &mut dyn FnMut(&[u8]),
) -> Result<(), CodecError> {
    let mut buf = vec![0u8; PIECE.min(expected).max(1)];
    read_through(dec, expected, &mut buf, sink)
}

/// `expected` bytes read from `dec` through the window `buf`, handed to `sink` each time it
/// fills (and at the end); then the reader must be at its end.
#[cfg(any(feature = "zstd", feature = "lz4f"))]
fn read_through(
    dec: &mut impl std::io::Read,
    expected: usize,
    buf: &mut [u8],
    sink: &mut dyn FnMut(&[u8]),
) -> Result<(), CodecError> {
    let mut total = 0;
    while total < expected {
        let want = (expected - total).min(buf.len());
        let mut fill = 0;
        while fill < want {
            match dec.read(&mut buf[fill..want]) {
                Ok(0) => break,
                Ok(n) => fill += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(CodecError::library(e)),
            }
        }
        if fill == 0 {
            break;
        }
        sink(&buf[..fill]);
        total += fill;
        if fill < want {
            break;
        }
    }
    if total != expected {
        return Err(CodecError::SizeMismatch {
            expected: expected as u64,
            actual: total as u64,
        });
    }
    let mut probe = [0u8; 1];
    match dec.read(&mut probe) {
        Ok(0) => Ok(()),
        Ok(_) => Err(too_much(expected)),
        Err(e) => Err(CodecError::library(e)),
    }
}
