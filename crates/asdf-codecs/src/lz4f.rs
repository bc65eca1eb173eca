//! `lz4f` (asdf-compression): one LZ4 frame per block (LZ4 frame format).

use std::io::Write;

use super::{Codec, CodecError, Label};

/// The `lz4f` codec.
#[derive(Debug, Clone, Copy, Default)]
pub struct Lz4Frame;

impl Codec for Lz4Frame {
    fn label(&self) -> Label {
        Label::LZ4F
    }

    fn decode(&self, input: &[u8], output: &mut [u8]) -> Result<(), CodecError> {
        let mut dec = lz4_flex::frame::FrameDecoder::new(input);
        super::stream::read_exact_size(&mut dec, output)
    }

    fn decode_pieces(&self, input: &[u8], expected: usize, sink: &mut dyn FnMut(&[u8])) -> Result<(), CodecError> {
        let mut dec = lz4_flex::frame::FrameDecoder::new(input);
        super::stream::read_pieces(&mut dec, expected, sink)
    }

    fn encode(&self, input: &[u8], output: &mut Vec<u8>) -> Result<(), CodecError> {
        let mut enc = lz4_flex::frame::FrameEncoder::new(output);
        enc.write_all(input).map_err(CodecError::library)?;
        enc.finish().map_err(CodecError::library)?;
        Ok(())
    }
}
