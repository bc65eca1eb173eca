//! Writing files of the drafts before ASDF 1.0.0: the header line, the tree, and each block
//! with the draft's header layout (ASDF 0.1.0's 36 bytes, FINF's 40), encoded with a chain
//! when one is given.

use asdf_layout::legacy::header_bytes;
use asdf_layout::{BlockHeader, BlockLayout, Dialect, Error, FLAG_ENCODED, Label, Result, UsageError};

/// One block for [`write_file`]: an array's bytes and the encoding chain to store it with.
#[derive(Debug, Clone, Copy)]
pub struct LegacyBlock<'a> {
    /// The array's bytes (C order).
    pub data: &'a [u8],
    /// The chain (ASDF 0.1.0 only; `None`: stored as is).
    pub chain: Option<&'a crate::chain::Chain>,
    /// Whether `data` is little-endian (read by a `quantize` step).
    pub little_endian: bool,
}

/// Writes a file of a draft before 1.0.0: the header line (`#ASDF 0.1.0` or `%FINF 0.1.0`),
/// `tree` (YAML from `%YAML` through `...`, or empty for none), then each block: the ASDF 0.1.0 draft's
/// 36-byte header (ENCODED, with the chain's YAML first, when a chain is given) or FINF's
/// 40-byte header. Returns the bytes written.
///
/// # Errors
/// [`asdf_layout::UsageError::LegacyWrite`] for [`Dialect::Asdf`] or a chain in a FINF file; a
/// chain that cannot encode its data ([`asdf_layout::Error::Codec`]); I/O errors.
pub fn write_file(
    out: &mut dyn std::io::Write,
    dialect: Dialect,
    tree: &[u8],
    blocks: &[LegacyBlock<'_>],
) -> Result<u64> {
    let line: &[u8] = match dialect {
        Dialect::Asdf010 => b"#ASDF 0.1.0\n",
        Dialect::Finf => b"%FINF 0.1.0\n",
        _ => {
            return Err(Error::Usage(UsageError::LegacyWrite(
                "the ASDF 1.x layout is written by Writer",
            )));
        }
    };
    let io = |source| Error::Io {
        offset: Some(0),
        source,
    };
    let mut written = 0u64;
    let mut put = |out: &mut dyn std::io::Write, b: &[u8]| -> Result<()> {
        out.write_all(b).map_err(io)?;
        written += b.len() as u64;
        Ok(())
    };
    put(out, line)?;
    put(out, tree)?;
    for (index, b) in blocks.iter().enumerate() {
        let mut h = BlockHeader::new(Label::NONE, 0, b.data.len() as u64);
        let body = match (dialect, b.chain) {
            (Dialect::Finf, Some(_)) => {
                return Err(Error::Usage(UsageError::LegacyWrite(
                    "FINF blocks have no encoding chains",
                )));
            }
            (Dialect::Finf, None) => {
                h.layout = BlockLayout::Finf;
                h.header_size = 40;
                std::borrow::Cow::Borrowed(b.data)
            }
            (_, None) => {
                h.layout = BlockLayout::Sized36;
                h.header_size = 36;
                std::borrow::Cow::Borrowed(b.data)
            }
            (_, Some(chain)) => {
                h.layout = BlockLayout::Sized36;
                h.header_size = 36;
                h.flags = FLAG_ENCODED;
                let mut v = chain.to_yaml().into_bytes();
                let encoded = chain.encode(b.data, b.little_endian).map_err(|e| Error::Codec {
                    block: index,
                    offset: 0,
                    label: Label::ENCODING_CHAIN,
                    source: asdf_layout::CodecError::library(e),
                })?;
                v.extend_from_slice(&encoded);
                std::borrow::Cow::Owned(v)
            }
        };
        h.used_size = body.len() as u64;
        h.allocated_size = h.used_size;
        if h.layout == BlockLayout::Finf {
            h.data_size = h.used_size;
        }
        put(out, &header_bytes(&h))?;
        put(out, &body)?;
    }
    Ok(written)
}
