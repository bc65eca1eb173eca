//! `bzp2`: one bzip2 stream per block, level 9 (Python's `bz2.compress` default).
//! Concatenated streams are accepted on read.

use std::io::Write;

use super::{Codec, CodecError, Label, stream::StreamStep, stream::decode_stream};

/// The `bzp2` codec.
#[derive(Debug, Clone, Copy)]
pub struct Bzp2 {
    /// Block size 1-9 (x 100 kB) used when writing.
    pub level: u32,
}

impl Default for Bzp2 {
    fn default() -> Self {
        Self { level: 9 }
    }
}

struct Step(bzip2::Decompress);

impl StreamStep for Step {
    fn step(&mut self, input: &[u8], output: &mut [u8]) -> Result<(usize, usize, bool), CodecError> {
        let (i0, o0) = (self.0.total_in(), self.0.total_out());
        let st = self.0.decompress(input, output).map_err(CodecError::library)?;
        let consumed = usize::try_from(self.0.total_in() - i0).unwrap_or(usize::MAX);
        let produced = usize::try_from(self.0.total_out() - o0).unwrap_or(usize::MAX);
        Ok((consumed, produced, st == bzip2::Status::StreamEnd))
    }
    fn reset(&mut self) {
        self.0 = bzip2::Decompress::new(false);
    }
}

impl Codec for Bzp2 {
    fn label(&self) -> Label {
        Label::BZP2
    }

    fn decode(&self, input: &[u8], output: &mut [u8]) -> Result<(), CodecError> {
        decode_stream(&mut Step(bzip2::Decompress::new(false)), input, output)
    }

    fn decode_pieces(&self, input: &[u8], expected: usize, sink: &mut dyn FnMut(&[u8])) -> Result<(), CodecError> {
        super::stream::decode_stream_pieces(&mut Step(bzip2::Decompress::new(false)), input, expected, sink)
    }

    fn encode(&self, input: &[u8], output: &mut Vec<u8>) -> Result<(), CodecError> {
        let mut enc = bzip2::write::BzEncoder::new(output, bzip2::Compression::new(self.level.clamp(1, 9)));
        enc.write_all(input).map_err(CodecError::library)?;
        enc.finish().map_err(CodecError::library)?;
        Ok(())
    }
}
