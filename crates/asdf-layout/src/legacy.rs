//! Block headers of the drafts before ASDF 1.0.0: the `#ASDF 0.1.0` files of 2014-2015 and
//! FINF 0.1.0.
//!
//! Every file of the standard's history from 2014-10 to 2015-08 says `#ASDF 0.1.0`, but its
//! block headers came in four layouts ([`BlockLayout`]); `header_size` tells them apart:
//! 44 ([`BlockLayout::Encoding44`]), 36 ([`BlockLayout::Sized36`], the ASDF 0.1.0 draft), 40
//! ([`BlockLayout::Label40`]) and 48 ([`BlockLayout::Standard`], the layout that became
//! 1.0.0). A header may be larger than its fields ("for example to align the block content"),
//! so any other size is read as whichever layouts fit in it and pass the field checks (flags
//! known, `used <= allocated`, a sizes-agree check for unencoded blocks, labels and encoding
//! names printable, the allocation inside the file); the layouts that pass must read the same
//! block (sizes, flags, compression, encoding), else the error names the offset and the
//! candidates. An exact size is read as its layout, and a failed
//! check there is an error too.
//!
//! FINF blocks (magic `89 42 4c 4b`) have no flags: allocated, used and checksum (u64) and a
//! 16-byte encoding. FINF 0.1.0 says `header_size` "should be at least 29", which no field
//! boundary matches (the fields take 40 bytes); this reader needs the 24 bytes of the three
//! sizes and reads as much of the encoding name as the header holds (choice written down in
//! docs/ARCHITECTURE.md).

use crate::block::{BlockHeader, FLAG_ENCODED, FLAG_STREAMED};
use crate::compression::Label;
use crate::dialect::{BLOCK_MAGIC, BlockLayout, Dialect, FINF_BLOCK_MAGIC};
use crate::error::{Error, FormatError, LegacyHeaderProblem, Result};

fn u64_at(f: &[u8], i: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&f[i..i + 8]);
    u64::from_be_bytes(b)
}

fn label_ok(l: [u8; 4]) -> bool {
    let end = l.iter().position(|&b| b == 0).unwrap_or(4);
    l[..end].iter().all(u8::is_ascii_alphanumeric) && l[end..].iter().all(|&b| b == 0)
}

fn encoding_ok(e: &[u8]) -> bool {
    let end = e.iter().position(|&b| b == 0).unwrap_or(e.len());
    e[..end].iter().all(|b| b.is_ascii_graphic()) && e[end..].iter().all(|&b| b == 0)
}

/// The fields of `layout` read from `f` (the bytes after `header_size`), or why they fail the
/// checks. `room` is the bytes of the file after the header.
fn read_layout(
    f: &[u8],
    header_size: u16,
    layout: BlockLayout,
    room: u64,
) -> std::result::Result<BlockHeader, LegacyHeaderProblem> {
    let need: u16 = match layout {
        BlockLayout::Standard => 48,
        BlockLayout::Encoding44 => 44,
        BlockLayout::Sized36 => 36,
        BlockLayout::Label40 => 40,
        BlockLayout::Finf => 24,
    };
    if header_size < need || f.len() < usize::from(need) {
        return Err(LegacyHeaderProblem::TooSmall { need });
    }
    let mut h = BlockHeader::new(Label::NONE, 0, 0);
    h.header_size = header_size;
    h.layout = layout;
    let flags = if layout == BlockLayout::Finf {
        0
    } else {
        u32::from_be_bytes([f[0], f[1], f[2], f[3]])
    };
    let known = if layout == BlockLayout::Sized36 {
        FLAG_STREAMED | FLAG_ENCODED
    } else {
        FLAG_STREAMED
    };
    if flags & !known != 0 || flags == FLAG_STREAMED | FLAG_ENCODED {
        return Err(LegacyHeaderProblem::Flags(flags));
    }
    h.flags = flags;
    match layout {
        BlockLayout::Standard | BlockLayout::Label40 => {
            let label = [f[4], f[5], f[6], f[7]];
            if !label_ok(label) {
                return Err(LegacyHeaderProblem::Label(label));
            }
            h.compression = Label(label);
            h.allocated_size = u64_at(f, 8);
            h.used_size = u64_at(f, 16);
            h.data_size = u64_at(f, 24);
            if layout == BlockLayout::Standard {
                h.checksum.copy_from_slice(&f[32..48]);
            } else {
                h.legacy_checksum = u64_at(f, 32);
            }
        }
        BlockLayout::Encoding44 => {
            h.allocated_size = u64_at(f, 4);
            h.used_size = u64_at(f, 12);
            h.data_size = h.used_size;
            h.legacy_checksum = u64_at(f, 20);
            h.encoding.copy_from_slice(&f[28..44]);
        }
        BlockLayout::Sized36 => {
            h.allocated_size = u64_at(f, 4);
            h.used_size = u64_at(f, 12);
            h.data_size = u64_at(f, 20);
            h.legacy_checksum = u64_at(f, 28);
            if flags & FLAG_ENCODED != 0 {
                h.compression = Label::ENCODING_CHAIN;
            }
        }
        BlockLayout::Finf => {
            h.allocated_size = u64_at(f, 0);
            h.used_size = u64_at(f, 8);
            h.data_size = h.used_size;
            h.legacy_checksum = u64_at(f, 16);
            let end = usize::from(header_size).min(40).min(f.len());
            h.encoding[..end - 24].copy_from_slice(&f[24..end]);
        }
    }
    if !encoding_ok(&h.encoding) {
        return Err(LegacyHeaderProblem::Encoding);
    }
    if !h.is_streamed() {
        if h.used_size > h.allocated_size {
            return Err(LegacyHeaderProblem::UsedExceedsAllocated {
                used: h.used_size,
                allocated: h.allocated_size,
            });
        }
        if h.compression.is_none() && h.data_size != h.used_size {
            return Err(LegacyHeaderProblem::SizesDisagree {
                used: h.used_size,
                data: h.data_size,
            });
        }
        if h.allocated_size > room {
            return Err(LegacyHeaderProblem::BeyondFile {
                allocated: h.allocated_size,
                room,
            });
        }
    }
    Ok(h)
}

/// Parses the block header at the start of `bytes` (at most 6 + 48 bytes are looked at) of a
/// file of `dialect`; `available` is the file's bytes from `offset` on.
///
/// # Errors
/// [`FormatError::BadBlockMagic`], [`FormatError::TruncatedBlockHeader`],
/// [`FormatError::LegacyBlockHeader`].
pub(crate) fn parse_block_header(bytes: &[u8], offset: u64, available: u64, dialect: Dialect) -> Result<BlockHeader> {
    let magic = dialect.block_magic();
    if bytes.len() < 6 {
        return Err(Error::format(
            offset,
            FormatError::TruncatedBlockHeader {
                needed: 6,
                available: bytes.len() as u64,
            },
        ));
    }
    if bytes[..4] != magic {
        return Err(Error::format(offset, FormatError::BadBlockMagic(bytes[..4].to_vec())));
    }
    let header_size = u16::from_be_bytes([bytes[4], bytes[5]]);
    let total = 6 + u64::from(header_size);
    let f = &bytes[6..];
    if (f.len() as u64) < u64::from(header_size).min(48) {
        return Err(Error::format(
            offset,
            FormatError::TruncatedBlockHeader {
                needed: total,
                available: bytes.len() as u64,
            },
        ));
    }
    let room = available.saturating_sub(total);
    let fail = |problem| Error::format(offset, FormatError::LegacyBlockHeader { header_size, problem });
    if dialect == Dialect::Finf {
        return read_layout(f, header_size, BlockLayout::Finf, room).map_err(fail);
    }
    let exact = match header_size {
        36 => Some(BlockLayout::Sized36),
        40 => Some(BlockLayout::Label40),
        44 => Some(BlockLayout::Encoding44),
        48 => Some(BlockLayout::Standard),
        _ => None,
    };
    if let Some(layout) = exact {
        return read_layout(f, header_size, layout, room).map_err(fail);
    }
    if header_size < 36 {
        return Err(fail(LegacyHeaderProblem::TooSmall { need: 36 }));
    }
    let fits: Vec<BlockHeader> = [
        BlockLayout::Sized36,
        BlockLayout::Label40,
        BlockLayout::Encoding44,
        BlockLayout::Standard,
    ]
    .into_iter()
    .filter_map(|l| read_layout(f, header_size, l, room).ok())
    .collect();
    // Several layouts that read the same block (sizes, flags, compression, encoding: the
    // data's place and meaning) are not a real ambiguity: the first is taken. Only layouts
    // that disagree are refused.
    let meaning = |h: &BlockHeader| {
        (
            h.allocated_size,
            h.used_size,
            h.data_size,
            h.flags,
            h.compression,
            h.encoding,
        )
    };
    match fits.as_slice() {
        [one] => Ok(*one),
        [] => Err(fail(LegacyHeaderProblem::NoLayoutFits)),
        [first, rest @ ..] if rest.iter().all(|h| meaning(h) == meaning(first)) => Ok(*first),
        many => Err(fail(LegacyHeaderProblem::Ambiguous(
            many.iter().map(|h| h.layout).collect(),
        ))),
    }
}

impl BlockHeader {
    /// As [`BlockHeader::read_at`], for a file of `dialect` (whose block headers the drafts
    /// before 1.0.0 laid out differently: this module).
    ///
    /// # Errors
    /// As [`BlockHeader::read_at`]; for the drafts, a header that fits none of their layouts
    /// or more than one ([`FormatError::LegacyBlockHeader`]).
    pub fn read_in(
        source: &(impl crate::ReadAt + ?Sized),
        offset: u64,
        file_len: u64,
        dialect: Dialect,
    ) -> Result<Self> {
        match dialect {
            Dialect::Asdf => Self::read_at(source, offset, file_len),
            Dialect::Asdf010 | Dialect::Finf => {
                Self::read_with(source, offset, file_len, |bytes, offset, available| {
                    parse_block_header(bytes, offset, available, dialect)
                })
            }
        }
    }
}

/// The bytes of a header in its layout (magic included), `6 + header_size` long (at least the
/// layout's fields; extra bytes are zero): a draft's layouts, and 1.0.0's.
#[must_use]
pub fn header_bytes(h: &BlockHeader) -> Vec<u8> {
    if h.layout == BlockLayout::Standard {
        return h.to_bytes();
    }
    block_header_bytes(h)
}

fn block_header_bytes(h: &BlockHeader) -> Vec<u8> {
    let (magic, fields) = match h.layout {
        BlockLayout::Finf => (FINF_BLOCK_MAGIC, 40u16),
        BlockLayout::Sized36 => (BLOCK_MAGIC, 36),
        BlockLayout::Label40 => (BLOCK_MAGIC, 40),
        BlockLayout::Encoding44 => (BLOCK_MAGIC, 44),
        BlockLayout::Standard => (BLOCK_MAGIC, 48),
    };
    let size = h.header_size.max(fields);
    let mut v = Vec::with_capacity(6 + usize::from(size));
    v.extend_from_slice(&magic);
    v.extend_from_slice(&size.to_be_bytes());
    if h.layout != BlockLayout::Finf {
        v.extend_from_slice(&h.flags.to_be_bytes());
    }
    match h.layout {
        BlockLayout::Standard | BlockLayout::Label40 => {
            v.extend_from_slice(&h.compression.0);
            v.extend_from_slice(&h.allocated_size.to_be_bytes());
            v.extend_from_slice(&h.used_size.to_be_bytes());
            v.extend_from_slice(&h.data_size.to_be_bytes());
            if h.layout == BlockLayout::Standard {
                v.extend_from_slice(&h.checksum);
            } else {
                v.extend_from_slice(&h.legacy_checksum.to_be_bytes());
            }
        }
        BlockLayout::Encoding44 | BlockLayout::Finf => {
            v.extend_from_slice(&h.allocated_size.to_be_bytes());
            v.extend_from_slice(&h.used_size.to_be_bytes());
            v.extend_from_slice(&h.legacy_checksum.to_be_bytes());
            v.extend_from_slice(&h.encoding);
        }
        BlockLayout::Sized36 => {
            v.extend_from_slice(&h.allocated_size.to_be_bytes());
            v.extend_from_slice(&h.used_size.to_be_bytes());
            v.extend_from_slice(&h.data_size.to_be_bytes());
            v.extend_from_slice(&h.legacy_checksum.to_be_bytes());
        }
    }
    v.resize(6 + usize::from(size), 0);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(layout: BlockLayout, header_size: u16, flags: u32, sizes: (u64, u64, u64)) -> Vec<u8> {
        let mut h = BlockHeader::new(Label::NONE, sizes.1, sizes.2);
        h.layout = layout;
        h.header_size = header_size;
        h.flags = flags;
        h.allocated_size = sizes.0;
        block_header_bytes(&h)
    }

    #[test]
    fn layouts_by_size_and_checks() {
        for (layout, size) in [
            (BlockLayout::Sized36, 36),
            (BlockLayout::Label40, 40),
            (BlockLayout::Encoding44, 44),
            (BlockLayout::Standard, 48),
        ] {
            let b = header(layout, size, 0, (8, 8, 8));
            let h = parse_block_header(&b, 0, 1000, Dialect::Asdf010).unwrap();
            assert_eq!((h.layout, h.used_size, h.allocated_size), (layout, 8, 8), "{layout:?}");
            assert_eq!(header_bytes(&h), b);
        }
        // The ASDF 0.1.0 draft's ENCODED flag: memory_size differs from used_size.
        let b = header(BlockLayout::Sized36, 36, FLAG_ENCODED, (10, 10, 1024));
        let h = parse_block_header(&b, 0, 1000, Dialect::Asdf010).unwrap();
        assert!(h.is_encoded());
        assert_eq!((h.compression, h.data_size), (Label::ENCODING_CHAIN, 1024));
        // Both flags together are refused; an unencoded block whose sizes disagree too.
        let b = header(BlockLayout::Sized36, 36, 3, (10, 10, 10));
        assert!(parse_block_header(&b, 0, 1000, Dialect::Asdf010).is_err());
        let b = header(BlockLayout::Sized36, 36, 0, (10, 10, 1024));
        assert!(parse_block_header(&b, 0, 1000, Dialect::Asdf010).is_err());
        // A padded header: only the layouts whose checks pass are candidates. Candidates
        // that read the same block (36 and 44 here: the same sizes, flags, no encoding) are
        // no ambiguity; candidates that disagree (the 36-byte layout's checksum is the
        // 44-byte layout's encoding name `zlib`) are refused.
        let b = header(BlockLayout::Sized36, 52, 0, (8, 8, 8));
        let h = parse_block_header(&b, 7, 1000, Dialect::Asdf010).unwrap();
        assert_eq!(
            (h.layout, h.allocated_size, h.used_size, h.data_size),
            (BlockLayout::Sized36, 8, 8, 8)
        );
        let mut b = header(BlockLayout::Sized36, 52, 0, (8, 8, 8));
        b[6 + 28..6 + 32].copy_from_slice(b"zlib");
        let e = parse_block_header(&b, 7, 1000, Dialect::Asdf010).unwrap_err();
        assert_eq!(e.offset(), Some(7));
        assert!(e.to_string().contains("more than one"), "{e}");
        let b = header(BlockLayout::Sized36, 38, FLAG_ENCODED, (10, 10, 1024));
        let h = parse_block_header(&b, 0, 1000, Dialect::Asdf010).unwrap();
        assert_eq!(h.layout, BlockLayout::Sized36);
        // Too small, and an allocation beyond the file.
        let mut b = header(BlockLayout::Sized36, 36, 0, (8, 8, 8));
        b[5] = 30;
        assert!(parse_block_header(&b, 0, 1000, Dialect::Asdf010).is_err());
        let b = header(BlockLayout::Sized36, 36, 0, (8000, 8, 8));
        assert!(parse_block_header(&b, 0, 1000, Dialect::Asdf010).is_err());
    }

    #[test]
    fn finf_headers() {
        let b = header(BlockLayout::Finf, 40, 0, (16, 12, 12));
        assert_eq!(&b[..4], b"\x89BLK");
        assert_eq!(b.len(), 46);
        let h = parse_block_header(&b, 0, 100, Dialect::Finf).unwrap();
        assert_eq!(
            (h.layout, h.used_size, h.data_size, h.allocated_size),
            (BlockLayout::Finf, 12, 12, 16)
        );
        // The seed's "at least 29": the sizes are read, the encoding as far as it goes.
        let mut short = b[..35].to_vec();
        short[5] = 29;
        let h = parse_block_header(&short, 0, 100, Dialect::Finf).unwrap();
        assert_eq!(h.used_size, 12);
        assert!(parse_block_header(&b, 0, 100, Dialect::Asdf010).is_err());
    }
}
