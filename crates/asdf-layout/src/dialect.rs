//! What a file's header line announces ([`Dialect`]) and the block header layouts of the
//! drafts before ASDF 1.0.0 ([`BlockLayout`]).

/// The 4 bytes that start every block.
pub const BLOCK_MAGIC: [u8; 4] = [0xd3, b'B', b'L', b'K'];
/// The block magic of FINF 0.1.0: `89 42 4c 4b`.
pub const FINF_BLOCK_MAGIC: [u8; 4] = [0x89, b'B', b'L', b'K'];

/// Which layout a file's header line announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Dialect {
    /// `#ASDF 1.x`: ASDF Standard 1.0.0 and later.
    #[default]
    Asdf,
    /// `#ASDF 0.1.0`: the drafts of 2014-2015 (the ASDF 0.1.0 draft and its neighbours), whose block
    /// headers came in four layouts ([`BlockLayout`]).
    Asdf010,
    /// `%FINF 0.1.0`: the draft ASDF was called before 2014 (FINF 0.1.0).
    Finf,
}

impl Dialect {
    /// The 4 bytes that start a block in this dialect.
    #[must_use]
    pub fn block_magic(self) -> [u8; 4] {
        match self {
            Dialect::Finf => FINF_BLOCK_MAGIC,
            Dialect::Asdf | Dialect::Asdf010 => BLOCK_MAGIC,
        }
    }

    /// Whether this is one of the drafts before ASDF 1.0.0.
    #[must_use]
    pub fn is_legacy(self) -> bool {
        self != Dialect::Asdf
    }
}

/// Which block header layout a header was read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum BlockLayout {
    /// ASDF 1.0.0 (also files headed `#ASDF 0.1.0` from 2015-03-17 on): flags u32,
    /// compression [u8; 4], allocated, used, data_size u64, MD5 [u8; 16] (48 bytes).
    #[default]
    Standard,
    /// `#ASDF 0.1.0` of 2014-10 to 2015-01-20: flags u32, allocated, used, checksum u64,
    /// encoding char[16] (44 bytes).
    Encoding44,
    /// `#ASDF 0.1.0` of 2015-01 (the ASDF 0.1.0 draft): flags u32 (STREAMED, ENCODED), allocated, used,
    /// memory_size, checksum u64 (36 bytes).
    Sized36,
    /// `#ASDF 0.1.0` of 2015-03-09: flags u32, compression [u8; 4], allocated, used,
    /// data_size, checksum u64 (40 bytes).
    Label40,
    /// FINF 0.1.0 (magic `89 42 4c 4b`): allocated, used, checksum u64, encoding
    /// char[16] (40 bytes; no flags).
    Finf,
}
