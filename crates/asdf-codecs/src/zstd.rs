//! `zstd` (asdf-compression): one Zstandard frame per block (concatenated frames accepted).

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
