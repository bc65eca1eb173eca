//! Block headers: `d3 42 4c 4b`, u16 BE header_size, then (big-endian) flags u32,
//! compression [u8; 4], allocated/used/data sizes u64, MD5 [u8; 16]; `header_size` may exceed
//! the 48 bytes of fields (the extra bytes are skipped).
//!
//! Files of the drafts before 1.0.0 ([`Dialect::Asdf010`], [`Dialect::Finf`]) have other
//! block headers, read by `legacy` (`BlockHeader::read_in`) into the same [`BlockHeader`]
//! ([`BlockLayout`] says which one a header was).

use crate::compression::Label;
use crate::error::{Error, FormatError, Result};
use crate::source::ReadAt;

pub use crate::dialect::{BLOCK_MAGIC, BlockLayout, Dialect, FINF_BLOCK_MAGIC};
/// Bytes of the fields every block header has (after magic and header_size).
pub const BLOCK_HEADER_FIELDS: u16 = 48;
/// Magic + header_size + the 48 bytes of fields.
pub const MIN_BLOCK_HEADER_LEN: u64 = 6 + BLOCK_HEADER_FIELDS as u64;
/// The STREAMED flag: the block runs to the end of the file.
pub const FLAG_STREAMED: u32 = 0x1;
/// The ENCODED flag of the ASDF 0.1.0 draft: the block's data starts with a YAML
/// encoding chain ([`crate::encoding`]).
pub const FLAG_ENCODED: u32 = 0x2;
/// A parsed block header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BlockHeader {
    /// Bytes after the header_size field up to the data (>= 48).
    pub header_size: u16,
    /// Bit flags ([`FLAG_STREAMED`]).
    pub flags: u32,
    /// Compression label.
    pub compression: Label,
    /// Space reserved for the block's data.
    pub allocated_size: u64,
    /// Bytes of stored (possibly compressed) data.
    pub used_size: u64,
    /// Bytes of decoded data.
    pub data_size: u64,
    /// MD5 of the stored bytes (or, in files from asdf < 5.3, of the decoded bytes);
    /// all zeros means none.
    pub checksum: [u8; 16],
    /// The layout the header was read in (written in, for [`BlockHeader::to_bytes`]).
    pub layout: BlockLayout,
    /// The 64-bit checksum field of the drafts before 1.0.0 (0: none). An MD5 does not fit
    /// in it and the drafts left its meaning "TBD", so it is kept but never verified.
    pub legacy_checksum: u64,
    /// The 16-byte `encoding` field of [`BlockLayout::Encoding44`] and [`BlockLayout::Finf`]
    /// headers (NUL-padded; all zeros: none). Its meaning was "TBD": a block naming one is
    /// not decoded ([`crate::Unsupported::BlockEncoding`]).
    pub encoding: [u8; 16],
}

impl BlockHeader {
    /// A header for `used` stored bytes decoding to `data` bytes, with no padding and no
    /// checksum.
    #[must_use]
    pub fn new(compression: Label, used: u64, data: u64) -> Self {
        Self {
            header_size: BLOCK_HEADER_FIELDS,
            flags: 0,
            compression,
            allocated_size: used,
            used_size: used,
            data_size: data,
            checksum: [0; 16],
            layout: BlockLayout::Standard,
            legacy_checksum: 0,
            encoding: [0; 16],
        }
    }

    /// Whether the ENCODED flag of the 0.1.0 draft is set (the data starts with an encoding
    /// chain; the compression label is then [`Label::ENCODING_CHAIN`]).
    #[must_use]
    pub fn is_encoded(&self) -> bool {
        self.layout == BlockLayout::Sized36 && self.flags & FLAG_ENCODED != 0
    }

    /// The `encoding` field as text, when it names one.
    #[must_use]
    pub fn encoding_name(&self) -> Option<String> {
        let end = self.encoding.iter().position(|&b| b == 0).unwrap_or(16);
        (end > 0).then(|| self.encoding[..end].escape_ascii().to_string())
    }

    /// Whether the STREAMED flag is set.
    #[must_use]
    pub fn is_streamed(&self) -> bool {
        self.flags & FLAG_STREAMED != 0
    }

    /// Whether a checksum is present (not all zeros).
    #[must_use]
    pub fn has_checksum(&self) -> bool {
        self.checksum != [0; 16]
    }

    /// Bytes from the magic to the first data byte.
    #[must_use]
    pub fn total_header_len(&self) -> u64 {
        6 + u64::from(self.header_size)
    }

    /// Parses the header whose magic starts `bytes` (at least 6 + 48 bytes; the caller reads
    /// `header_size - 48` further bytes only to skip them). `offset` is used in errors.
    ///
    /// # Errors
    /// Bad magic, header_size below 48, too few bytes, used_size above allocated_size.
    pub fn parse(bytes: &[u8], offset: u64) -> Result<Self> {
        if bytes.len() < 6 {
            return Err(Error::format(
                offset,
                FormatError::TruncatedBlockHeader {
                    needed: MIN_BLOCK_HEADER_LEN,
                    available: bytes.len() as u64,
                },
            ));
        }
        if bytes[..4] != BLOCK_MAGIC {
            return Err(Error::format(offset, FormatError::BadBlockMagic(bytes[..4].to_vec())));
        }
        let header_size = u16::from_be_bytes([bytes[4], bytes[5]]);
        if header_size < BLOCK_HEADER_FIELDS {
            return Err(Error::format(offset + 4, FormatError::BlockHeaderTooSmall(header_size)));
        }
        let Some(f) = bytes.get(6..6 + usize::from(BLOCK_HEADER_FIELDS)) else {
            return Err(Error::format(
                offset,
                FormatError::TruncatedBlockHeader {
                    needed: MIN_BLOCK_HEADER_LEN,
                    available: bytes.len() as u64,
                },
            ));
        };
        let u64_at = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&f[i..i + 8]);
            u64::from_be_bytes(b)
        };
        let mut checksum = [0u8; 16];
        checksum.copy_from_slice(&f[32..48]);
        let h = BlockHeader {
            header_size,
            flags: u32::from_be_bytes([f[0], f[1], f[2], f[3]]),
            compression: Label([f[4], f[5], f[6], f[7]]),
            allocated_size: u64_at(8),
            used_size: u64_at(16),
            data_size: u64_at(24),
            checksum,
            layout: BlockLayout::Standard,
            legacy_checksum: 0,
            encoding: [0; 16],
        };
        if !h.is_streamed() && h.used_size > h.allocated_size {
            return Err(Error::format(
                offset + 22,
                FormatError::UsedExceedsAllocated {
                    used: h.used_size,
                    allocated: h.allocated_size,
                },
            ));
        }
        Ok(h)
    }

    /// Reads and parses the header at `offset` of `source`, checking that it fits in a file of
    /// `file_len` bytes.
    ///
    /// # Errors
    /// As [`BlockHeader::parse`], plus I/O errors and a header cut off by the end of the file.
    pub fn read_at(source: &(impl ReadAt + ?Sized), offset: u64, file_len: u64) -> Result<Self> {
        Self::read_with(source, offset, file_len, |bytes, offset, _| Self::parse(bytes, offset))
    }

    /// Reads up to 6 + 48 bytes at `offset` and parses them with `parse(bytes, offset, bytes
    /// left in the file)`, checking that the header fits in the file (the drafts' layouts use
    /// it too: `BlockHeader::read_in`).
    pub(crate) fn read_with(
        source: &(impl ReadAt + ?Sized),
        offset: u64,
        file_len: u64,
        parse: impl FnOnce(&[u8], u64, u64) -> Result<Self>,
    ) -> Result<Self> {
        let available = file_len.saturating_sub(offset);
        let mut buf = [0u8; 6 + BLOCK_HEADER_FIELDS as usize];
        let n = usize::try_from(available.min(MIN_BLOCK_HEADER_LEN)).unwrap_or(0);
        source
            .read_exact_at(offset, &mut buf[..n])
            .map_err(Error::io_at(offset))?;
        let h = parse(&buf[..n], offset, available)?;
        if h.total_header_len() > available {
            return Err(Error::format(
                offset,
                FormatError::TruncatedBlockHeader {
                    needed: h.total_header_len(),
                    available,
                },
            ));
        }
        Ok(h)
    }

    /// The header's bytes (magic included) in the 1.0.0 layout, `total_header_len()` long;
    /// bytes past the 48 fields are zero. (A draft's layouts: `legacy::header_bytes`.)
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(usize::from(self.header_size) + 6);
        v.extend_from_slice(&BLOCK_MAGIC);
        v.extend_from_slice(&self.header_size.max(BLOCK_HEADER_FIELDS).to_be_bytes());
        v.extend_from_slice(&self.flags.to_be_bytes());
        v.extend_from_slice(&self.compression.0);
        v.extend_from_slice(&self.allocated_size.to_be_bytes());
        v.extend_from_slice(&self.used_size.to_be_bytes());
        v.extend_from_slice(&self.data_size.to_be_bytes());
        v.extend_from_slice(&self.checksum);
        v.resize(6 + usize::from(self.header_size.max(BLOCK_HEADER_FIELDS)), 0);
        v
    }
}

/// Finds the first block magic at or after `from`, reading in chunks; `None` at end of file.
///
/// # Errors
/// I/O errors.
pub fn find_magic(source: &(impl ReadAt + ?Sized), from: u64, file_len: u64) -> Result<Option<u64>> {
    find_magic_of(source, from, file_len, BLOCK_MAGIC)
}

/// As [`find_magic`], for the block magic `magic` (FINF's differs: [`Dialect::block_magic`]).
///
/// # Errors
/// I/O errors.
pub fn find_magic_of(source: &(impl ReadAt + ?Sized), from: u64, file_len: u64, magic: [u8; 4]) -> Result<Option<u64>> {
    // 4 KiB first (blocks usually start right there), then larger chunks up to 64 KiB.
    let mut chunk = crate::FIRST_READ;
    let mut pos = from;
    while pos < file_len {
        let want = usize::try_from((file_len - pos).min(chunk as u64)).unwrap_or(chunk);
        let got = source.bytes_at(pos, want).map_err(Error::io_at(pos))?;
        if let Some(i) = got.windows(4).position(|w| w == magic) {
            return Ok(Some(pos + i as u64));
        }
        if want < 4 || pos + want as u64 >= file_len {
            break;
        }
        // Overlap by 3 bytes so a magic split across chunks is found.
        pos += want as u64 - 3;
        chunk = (chunk * 2).min(crate::MAX_READ);
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip_and_errors() {
        let mut h = BlockHeader::new(Label::ZLIB, 10, 100);
        h.allocated_size = 20;
        h.checksum[3] = 7;
        let b = h.to_bytes();
        assert_eq!(b.len(), 54);
        assert_eq!(BlockHeader::parse(&b, 0).unwrap(), h);
        let mut bad = b.clone();
        bad[5] = 40;
        assert_eq!(
            BlockHeader::parse(&bad, 9).unwrap_err().format_kind(),
            Some(&FormatError::BlockHeaderTooSmall(40))
        );
        assert!(matches!(
            BlockHeader::parse(&b[..30], 0).unwrap_err().format_kind(),
            Some(FormatError::TruncatedBlockHeader { .. })
        ));
        let mut over = h;
        over.used_size = 30;
        assert!(matches!(
            BlockHeader::parse(&over.to_bytes(), 0).unwrap_err().format_kind(),
            Some(FormatError::UsedExceedsAllocated { .. })
        ));
        let mut wide = h;
        wide.header_size = 64;
        let wb = wide.to_bytes();
        assert_eq!(wb.len(), 70);
        assert_eq!(BlockHeader::read_at(&wb, 0, 70).unwrap(), wide);
        assert!(BlockHeader::read_at(&wb[..60], 0, 60).is_err());
    }

    #[test]
    fn magic_search_across_chunks() {
        let mut v = vec![b' '; 200_000];
        v[65_534..65_538].copy_from_slice(&BLOCK_MAGIC);
        assert_eq!(find_magic(&v, 0, v.len() as u64).unwrap(), Some(65_534));
        assert_eq!(find_magic(&v, 65_535, v.len() as u64).unwrap(), None);
        let partial = [0xd3, b'B', b'L', 0xd3, b'B', b'L', b'K'];
        assert_eq!(find_magic(&partial[..], 0, 7).unwrap(), Some(3));
    }
}
