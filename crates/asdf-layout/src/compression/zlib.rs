//! `zlib`: one zlib stream (RFC 1950) per block, as Python's `zlib.compress` writes it
//! (level 6 by default). Concatenated streams are accepted on read.

use std::io::Write;

use flate2::{Decompress, FlushDecompress, Status};

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

    fn encode(&self, input: &[u8], output: &mut Vec<u8>) -> Result<(), CodecError> {
        let mut enc = flate2::write::ZlibEncoder::new(output, flate2::Compression::new(self.level.min(9)));
        enc.write_all(input).map_err(CodecError::library)?;
        enc.finish().map_err(CodecError::library)?;
        Ok(())
    }
}
