//! `zstd` (asdf-compression): one Zstandard frame per block (concatenated frames accepted).
//!
//! Natively through the reference libzstd; on wasm32 (no C toolchain for the browser) through
//! the pure-Rust `zrip`, which blusc already uses for Blosc's zstd chunks.

use super::{Codec, CodecError, Label};

/// The `zstd` codec.
#[derive(Debug, Clone, Copy)]
pub struct Zstd {
    /// Compression level used when writing.
    pub level: i32,
}

impl Default for Zstd {
    fn default() -> Self {
        Self { level: 3 }
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl Codec for Zstd {
    fn label(&self) -> Label {
        Label::ZSTD
    }

    fn decode(&self, input: &[u8], output: &mut [u8]) -> Result<(), CodecError> {
        let mut dec = zstd::stream::read::Decoder::with_buffer(input).map_err(CodecError::library)?;
        super::stream::read_exact_size(&mut dec, output)
    }

    fn decode_pieces(&self, input: &[u8], expected: usize, sink: &mut dyn FnMut(&[u8])) -> Result<(), CodecError> {
        let mut dec = zstd::stream::read::Decoder::with_buffer(input).map_err(CodecError::library)?;
        super::stream::read_pieces(&mut dec, expected, sink)
    }

    fn encode(&self, input: &[u8], output: &mut Vec<u8>) -> Result<(), CodecError> {
        let c = zstd::bulk::compress(input, self.level).map_err(CodecError::library)?;
        output.extend_from_slice(&c);
        Ok(())
    }
}

#[cfg(target_arch = "wasm32")]
impl Codec for Zstd {
    fn label(&self) -> Label {
        Label::ZSTD
    }

    fn decode(&self, input: &[u8], output: &mut [u8]) -> Result<(), CodecError> {
        // At most one byte more than expected, so that a block decoding to more is told apart.
        let limit = output.len().saturating_add(1);
        let got = zrip::decompress_with_limit(input, limit).map_err(CodecError::library)?;
        if got.len() != output.len() {
            return Err(CodecError::SizeMismatch {
                expected: output.len() as u64,
                actual: got.len() as u64,
            });
        }
        output.copy_from_slice(&got);
        Ok(())
    }

    fn encode(&self, input: &[u8], output: &mut Vec<u8>) -> Result<(), CodecError> {
        let c = zrip::compress(input, self.level).map_err(CodecError::library)?;
        output.extend_from_slice(&c);
        Ok(())
    }
}
