//! FITS files, as far as ASDF embedded in FITS needs them (ASDF Standard 1.6.0, Appendix A):
//! each HDU's header cards and where its data lies, the HDU that holds the ASDF file (an
//! `EXTNAME = 'ASDF'` IMAGE of bytes, or the one-row BINTABLE with column `ASDF_METADATA` that
//! stdatamodels writes), and `fits:` ndarray sources resolved to HDUs.
//!
//! Only headers are read (2880-byte blocks of 80-character cards, FITS 4.0): data is located,
//! never loaded. Written by hand: the Rust FITS crates either read whole files (fitsrs reads
//! HDU data eagerly through its own readers) or bind CFITSIO (fitsio, a C library to install);
//! locating HDUs takes a header parser of a hundred lines (see docs/ARCHITECTURE.md).
//!
//! Writing: [`out`] (header cards formatted, checksums), [`write`] (cards and HDUs) and
//! [`convert`] (an ASDF file written as FITS, through the [`convert::Tree`] the facade
//! implements). Opening the ASDF HDU as a file and reading `fits:` sources are in [`file`].

pub mod convert;
pub mod file;
pub mod out;
pub mod write;

use asdf_layout::ReadAt;

/// The size of a FITS block.
pub const BLOCK: u64 = 2880;
/// The size of a header card.
pub const CARD: usize = 80;

/// Why a FITS file's structure cannot be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum FitsError {
    /// The file does not start with `SIMPLE  =`.
    #[error("not a FITS file: it does not start with `SIMPLE  =`")]
    NotFits,
    /// A header runs past the end of the file, or has no END card.
    #[error("HDU {hdu}: the header starting at byte {offset} has no END card before the end of the file")]
    NoEnd {
        /// Index of the HDU.
        hdu: usize,
        /// Offset of its header.
        offset: u64,
    },
    /// A mandatory keyword is missing or not of its type.
    #[error("HDU {hdu} (header at byte {offset}): keyword {keyword} is missing or invalid")]
    Keyword {
        /// Index of the HDU.
        hdu: usize,
        /// Offset of its header.
        offset: u64,
        /// The keyword.
        keyword: String,
    },
    /// The data (with its padding) runs past the end of the file.
    #[error("HDU {hdu}: its data runs to byte {end}, past the end of the file at {file_len}")]
    Truncated {
        /// Index of the HDU.
        hdu: usize,
        /// Where the data ends.
        end: u64,
        /// The file's length.
        file_len: u64,
    },
    /// More HDUs or header cards than the limits allow.
    #[error("more than {limit} {what}")]
    Limit {
        /// What was counted.
        what: &'static str,
        /// The limit.
        limit: usize,
    },
    /// No HDU named ASDF, or one that holds no ASDF file in either form.
    #[error("{0}")]
    NoAsdf(&'static str),
    /// Two HDUs with EXTNAME ASDF.
    #[error("HDUs {first} and {second} are both named ASDF")]
    DuplicateAsdf {
        /// The first.
        first: usize,
        /// The second.
        second: usize,
    },
    /// An HDU whose DATASUM or CHECKSUM card does not match its bytes (FITS 4.0, Appendix J).
    #[error("HDU {hdu}: its {card} does not match its bytes (the {part} changed since it was written)")]
    Checksum {
        /// Index of the HDU.
        hdu: usize,
        /// `DATASUM` or `CHECKSUM`.
        card: &'static str,
        /// What changed: the data, or the header.
        part: &'static str,
    },
    /// An ndarray of a datatype FITS images do not have, asked to be written as one.
    #[error("a FITS image cannot hold {0} values")]
    NoImageType(&'static str),
    /// A `fits:` source that names no HDU, or more than one.
    #[error("source `fits:{text}`: {problem}")]
    Source {
        /// The text after `fits:`.
        text: String,
        /// What is wrong.
        problem: &'static str,
    },
    /// A tile-compressed image HDU (`ZIMAGE = T`): not decoded.
    #[error("HDU {hdu} is a tile-compressed image (ZIMAGE): not supported; decompress it first (funpack, astropy)")]
    Compressed {
        /// Index of the HDU.
        hdu: usize,
    },
    /// An HDU whose values are scaled (BSCALE/BZERO other than 1/0): the stored integers are
    /// not the values, and Appendix A's sources point at the stored bytes.
    #[error("HDU {hdu} has BSCALE {bscale} / BZERO {bzero}: scaled data is not read as raw bytes")]
    Scaled {
        /// Index of the HDU.
        hdu: usize,
        /// BSCALE.
        bscale: f64,
        /// BZERO.
        bzero: f64,
    },
    /// A header card that cannot be written.
    #[error("HDU {hdu}: {source}")]
    Card {
        /// Index of the HDU (in the file written).
        hdu: usize,
        /// Why.
        #[source]
        source: CardError,
    },
    /// Data whose length is not what the HDU's header describes.
    #[error("HDU {hdu}: its header describes {header} bytes of data, the data given has {data}")]
    DataLength {
        /// Index of the HDU (in the file written).
        hdu: usize,
        /// Bytes the header describes.
        header: u64,
        /// Bytes given.
        data: u64,
    },
    /// Reading failed.
    #[error("reading the FITS file at byte {offset}: {message}")]
    Io {
        /// Where.
        offset: u64,
        /// The I/O error's text.
        message: String,
    },
}

/// Why a card cannot be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CardError {
    /// A keyword of more than 8 characters, or of characters other than `A-Z 0-9 - _`.
    #[error("keyword `{0}` is not a FITS keyword (at most 8 of A-Z 0-9 - _)")]
    Keyword(String),
    /// Text with characters outside printable ASCII (FITS headers are ASCII 32-126).
    #[error("card `{keyword}`: text with characters outside printable ASCII")]
    Text {
        /// The card's keyword.
        keyword: String,
    },
    /// A real value that is NaN or infinite.
    #[error("card `{keyword}`: a real value that is not finite")]
    NotFinite {
        /// The card's keyword.
        keyword: String,
    },
    /// A card image longer than 80 characters.
    #[error("card `{keyword}`: more than 80 characters")]
    TooLong {
        /// The card's keyword (its first 8 characters).
        keyword: String,
    },
    /// An `END` card among a header's cards: FITS readers would stop reading the header
    /// there (the writer ends every header itself).
    #[error("an END card among the header's cards would end the header early (the writer ends it)")]
    End,
}

/// The kind of an HDU.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HduKind {
    /// The primary HDU.
    Primary,
    /// `XTENSION = 'IMAGE'`.
    Image,
    /// `XTENSION = 'BINTABLE'` (not a compressed image).
    BinTable,
    /// `XTENSION = 'TABLE'` (ASCII).
    Table,
    /// A tile-compressed image (`ZIMAGE = T` in a BINTABLE).
    CompressedImage,
    /// Another XTENSION, by name.
    Unknown(String),
}

/// One HDU: its header cards and where its data lies.
#[derive(Debug, Clone, PartialEq)]
pub struct Hdu {
    /// Position in the file (0: primary).
    pub index: usize,
    /// Its kind.
    pub kind: HduKind,
    /// Offset of the header's first card.
    pub header_offset: u64,
    /// Offset of the data (after the header's padding).
    pub data_offset: u64,
    /// Bytes of data (without the padding to 2880): `|BITPIX| / 8 * GCOUNT * (PCOUNT +
    /// NAXIS1 * ... * NAXISn)`.
    pub data_len: u64,
    /// BITPIX.
    pub bitpix: i64,
    /// NAXIS1..NAXISn, in FITS order (fastest first).
    pub axes: Vec<u64>,
    /// EXTNAME, trimmed.
    pub name: Option<String>,
    /// EXTVER (1 when absent).
    pub ver: i64,
    /// Every card as (keyword, value text without comment): string values unquoted and
    /// trimmed, others as written.
    pub cards: Vec<(String, String)>,
}

impl Hdu {
    /// The value text of `keyword` (the first card with it).
    #[must_use]
    pub fn value(&self, keyword: &str) -> Option<&str> {
        self.cards.iter().find(|(k, _)| k == keyword).map(|(_, v)| v.as_str())
    }

    /// An integer value.
    #[must_use]
    pub fn int(&self, keyword: &str) -> Option<i64> {
        self.value(keyword)?.trim().parse().ok()
    }

    /// A real value (FITS allows `D` exponents).
    #[must_use]
    pub fn real(&self, keyword: &str) -> Option<f64> {
        self.value(keyword)?.trim().replace(['D', 'd'], "E").parse().ok()
    }

    /// A logical value.
    #[must_use]
    pub fn logical(&self, keyword: &str) -> Option<bool> {
        match self.value(keyword)?.trim() {
            "T" => Some(true),
            "F" => Some(false),
            _ => None,
        }
    }

    /// The ndarray datatype of the data's elements (BITPIX; no scaling applied): `uint8`,
    /// `int16`, `int32`, `int64`, `float32`, `float64`, all big-endian.
    #[must_use]
    pub fn datatype(&self) -> Option<&'static str> {
        Some(match self.bitpix {
            8 => "uint8",
            16 => "int16",
            32 => "int32",
            64 => "int64",
            -32 => "float32",
            -64 => "float64",
            _ => return None,
        })
    }

    /// The data's shape in C order (NAXISn first), as an ndarray's `shape`.
    #[must_use]
    pub fn shape(&self) -> Vec<u64> {
        self.axes.iter().rev().copied().collect()
    }

    /// BSCALE and BZERO when they are not the identity (1, 0): the stored integers are not the
    /// values FITS readers show.
    #[must_use]
    pub fn scaling(&self) -> Option<(f64, f64)> {
        let scale = self.real("BSCALE").unwrap_or(1.0);
        let zero = self.real("BZERO").unwrap_or(0.0);
        (scale != 1.0 || zero != 0.0).then_some((scale, zero))
    }

    /// The datatype of the values FITS readers show for an image: [`Hdu::datatype`], or under
    /// FITS's integer convention (BSCALE 1, BZERO 2^(bits-1); -128 for bytes) the unsigned
    /// type (signed for bytes) whose values it stores with the sign bit flipped, as JWST's DQ
    /// arrays (uint32 in BITPIX 32).
    #[must_use]
    pub fn value_datatype(&self) -> Option<&'static str> {
        if self.scaling().is_none() {
            return self.datatype();
        }
        if self.real("BSCALE").unwrap_or(1.0) != 1.0 {
            return None;
        }
        let zero = self.real("BZERO")?;
        Some(match self.bitpix {
            8 if zero == -128.0 => "int8",
            16 if zero == 32_768.0 => "uint16",
            32 if zero == 2_147_483_648.0 => "uint32",
            64 if zero == 9_223_372_036_854_775_808.0 => "uint64",
            _ => return None,
        })
    }

    /// The shape of the array the data holds, as an ndarray's `shape`: an image's axes in C
    /// order, a table's rows.
    #[must_use]
    pub fn array_shape(&self) -> Vec<u64> {
        match self.kind {
            HduKind::BinTable | HduKind::Table | HduKind::CompressedImage => {
                self.axes.get(1).map(|&n| vec![n]).unwrap_or_default()
            }
            _ => self.shape(),
        }
    }

    /// Where the stored bytes differ from the values by a flipped sign bit (FITS's integer
    /// convention: BZERO, or TZEROn for a table's integer columns, of 2^(bits-1); -128 for
    /// bytes): the sign bytes of one element or row to flip with `0x80`; `None` when nothing
    /// is scaled.
    ///
    /// # Errors
    /// [`FitsError::Scaled`] for any other scaling (an image's BSCALE/BZERO, a column's
    /// TSCALn/TZEROn): its stored values are not its values.
    pub fn sign_flips(&self) -> Result<Option<SignFlips>, FitsError> {
        let scaled = |bscale, bzero| FitsError::Scaled {
            hdu: self.index,
            bscale,
            bzero,
        };
        if matches!(self.kind, HduKind::BinTable) {
            let stride = self.axes.first().copied().unwrap_or(0);
            let mut runs = Vec::new();
            let mut at = 0u64;
            let fields = u64::try_from(self.int("TFIELDS").unwrap_or(0)).unwrap_or(0).min(999);
            for n in 1..=fields {
                let form = self
                    .value(&format!("TFORM{n}"))
                    .unwrap_or_default()
                    .trim()
                    .to_ascii_uppercase();
                let digits = form.bytes().take_while(u8::is_ascii_digit).count();
                let repeat: u64 = if digits == 0 {
                    1
                } else {
                    form[..digits].parse().unwrap_or(0)
                };
                let code = form.as_bytes().get(digits).copied().unwrap_or(b'?');
                let elem: u64 = match code {
                    b'L' | b'B' | b'A' => 1,
                    b'I' => 2,
                    b'J' | b'E' => 4,
                    b'K' | b'D' | b'C' | b'P' => 8,
                    b'M' | b'Q' => 16,
                    b'X' => 0,
                    _ => return Err(scaled(f64::NAN, f64::NAN)),
                };
                let bytes = if code == b'X' {
                    repeat.div_ceil(8)
                } else {
                    repeat.saturating_mul(elem)
                };
                let zero = self.real(&format!("TZERO{n}")).unwrap_or(0.0);
                let tscale = self.real(&format!("TSCAL{n}")).unwrap_or(1.0);
                if zero != 0.0 || tscale != 1.0 {
                    let flip = tscale == 1.0
                        && match code {
                            b'B' => zero == -128.0,
                            b'I' => zero == 32_768.0,
                            b'J' => zero == 2_147_483_648.0,
                            b'K' => zero == 9_223_372_036_854_775_808.0,
                            _ => false,
                        };
                    if !flip {
                        return Err(scaled(tscale, zero));
                    }
                    // Only the part of the column inside the row (a header may claim more).
                    let inside = stride.saturating_sub(at) / elem;
                    if inside > 0 {
                        runs.push((at, elem, repeat.min(inside)));
                    }
                }
                at = at.saturating_add(bytes);
            }
            return Ok((!runs.is_empty()).then(|| SignFlips {
                stride,
                count: self.axes.get(1).copied().unwrap_or(0),
                runs,
            }));
        }
        let Some((bscale, bzero)) = self.scaling() else {
            return Ok(None);
        };
        if self.value_datatype().is_none() || !matches!(self.kind, HduKind::Image | HduKind::Primary) {
            return Err(scaled(bscale, bzero));
        }
        let width = self.bitpix.unsigned_abs() / 8;
        Ok(Some(SignFlips {
            stride: width,
            count: u64::MAX,
            runs: vec![(0, width, 1)],
        }))
    }
}

/// Where the sign bits to flip are ([`Hdu::sign_flips`]): in each of `count` strides of
/// `stride` bytes (an image's elements, a table's rows; a table's heap after its rows is left
/// alone), the first byte of each element of every run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignFlips {
    /// Bytes of an element (image) or row (table).
    pub stride: u64,
    /// How many strides hold values (a table's rows; all of an image).
    pub count: u64,
    /// (offset in the stride, element width, elements) of each flipped column.
    pub runs: Vec<(u64, u64, u64)>,
}

impl SignFlips {
    /// Flips the sign bits in `data`, bytes of the HDU's data from `start` on: work in
    /// proportion to the elements flipped, whatever the stride.
    pub fn apply(&self, data: &mut [u8], start: u64) {
        if self.stride == 0 {
            return;
        }
        let end = start + data.len() as u64;
        let last = end.div_ceil(self.stride).min(self.count);
        for row in start / self.stride..last {
            let base = row * self.stride;
            for &(offset, width, n) in &self.runs {
                for k in 0..n {
                    let p = base + offset + k * width;
                    if p >= end {
                        break;
                    }
                    if p >= start {
                        data[usize::try_from(p - start).unwrap_or(usize::MAX)] ^= 0x80;
                    }
                }
            }
        }
    }
}

/// Limits on what a FITS header may make this reader do.
#[derive(Debug, Clone, Copy)]
pub struct FitsLimits {
    /// Most HDUs.
    pub max_hdus: usize,
    /// Most header cards in the whole file (memory follows the cards kept).
    pub max_cards: usize,
}

impl Default for FitsLimits {
    fn default() -> Self {
        Self {
            max_hdus: 10_000,
            max_cards: 1_000_000,
        }
    }
}

/// Whether `head` (the file's first bytes) starts a FITS file.
#[must_use]
pub fn is_fits(head: &[u8]) -> bool {
    head.starts_with(b"SIMPLE  =")
}

/// The keyword and value text of one card (`None` for commentary cards and blank ones).
#[must_use]
pub fn parse_card(card: &[u8]) -> Option<(String, String)> {
    let keyword = String::from_utf8_lossy(&card[..8]).trim_end().to_owned();
    if card.get(8..10) != Some(b"= ") {
        return (!keyword.is_empty()).then(|| (keyword, String::new()));
    }
    let rest = String::from_utf8_lossy(&card[10..]).into_owned();
    let t = rest.trim_start();
    let value = if let Some(s) = t.strip_prefix('\'') {
        // A string: '' is a quote; the value ends at the next lone quote.
        let mut out = String::new();
        let mut chars = s.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\'' {
                if chars.peek() == Some(&'\'') {
                    out.push('\'');
                    chars.next();
                    continue;
                }
                break;
            }
            out.push(c);
        }
        out.trim_end().to_owned()
    } else {
        t.split('/').next().unwrap_or_default().trim().to_owned()
    };
    Some((keyword, value))
}

fn io_err(offset: u64) -> impl Fn(std::io::Error) -> FitsError {
    move |e| FitsError::Io {
        offset,
        message: e.to_string(),
    }
}

/// An HDU described by its header cards (parsed as [`parse_card`] does): kind, BITPIX, axes,
/// name and the length of its data. `file_len` only bounds the arithmetic's errors.
///
/// # Errors
/// [`FitsError::Keyword`] for a mandatory keyword missing or invalid; [`FitsError::Truncated`]
/// when the data's size overflows.
pub fn describe(
    index: usize,
    header_offset: u64,
    data_offset: u64,
    cards: Vec<(String, String)>,
    file_len: u64,
) -> Result<Hdu, FitsError> {
    let mut hdu = Hdu {
        index,
        kind: HduKind::Primary,
        header_offset,
        data_offset,
        data_len: 0,
        bitpix: 0,
        axes: Vec::new(),
        name: None,
        ver: 1,
        cards,
    };
    let missing = |keyword: &str| FitsError::Keyword {
        hdu: index,
        offset: header_offset,
        keyword: keyword.to_owned(),
    };
    hdu.kind = if index == 0 {
        if hdu.cards.first().map(|(k, _)| k.as_str()) != Some("SIMPLE") {
            return Err(missing("SIMPLE"));
        }
        HduKind::Primary
    } else {
        match hdu.value("XTENSION").map(str::trim) {
            Some("IMAGE") => HduKind::Image,
            Some("BINTABLE") if hdu.logical("ZIMAGE") == Some(true) => HduKind::CompressedImage,
            Some("BINTABLE") => HduKind::BinTable,
            Some("TABLE") => HduKind::Table,
            Some(other) => HduKind::Unknown(other.to_owned()),
            None => return Err(missing("XTENSION")),
        }
    };
    hdu.bitpix = hdu
        .int("BITPIX")
        .filter(|b| matches!(b, 8 | 16 | 32 | 64 | -32 | -64))
        .ok_or_else(|| missing("BITPIX"))?;
    let naxis = hdu
        .int("NAXIS")
        .filter(|n| (0..=999).contains(n))
        .ok_or_else(|| missing("NAXIS"))?;
    for i in 1..=naxis {
        let key = format!("NAXIS{i}");
        let n = hdu
            .int(&key)
            .and_then(|n| u64::try_from(n).ok())
            .ok_or_else(|| missing(&key))?;
        hdu.axes.push(n);
    }
    let pcount = u64::try_from(hdu.int("PCOUNT").unwrap_or(0)).map_err(|_| missing("PCOUNT"))?;
    let gcount = u64::try_from(hdu.int("GCOUNT").unwrap_or(1)).map_err(|_| missing("GCOUNT"))?;
    // Random groups (a primary HDU with GROUPS = T and NAXIS1 = 0, FITS 4.0 section 6): each
    // of GCOUNT groups holds PCOUNT parameters and NAXIS2 x ... x NAXISn values; NAXIS1 does
    // not count (astropy's GroupsHDU sizes it so; other HDUs as astropy's header data size).
    let groups = index == 0 && hdu.logical("GROUPS") == Some(true) && hdu.axes.first() == Some(&0);
    let elems = if groups {
        hdu.axes[1..].iter().try_fold(1u64, |a, &d| a.checked_mul(d))
    } else if hdu.axes.is_empty() {
        Some(0)
    } else {
        hdu.axes.iter().try_fold(1u64, |a, &d| a.checked_mul(d))
    };
    let too_big = || FitsError::Truncated {
        hdu: index,
        end: u64::MAX,
        file_len,
    };
    hdu.data_len = elems
        .and_then(|e| e.checked_add(pcount))
        .and_then(|e| e.checked_mul(gcount))
        .and_then(|e| e.checked_mul(hdu.bitpix.unsigned_abs() / 8))
        .ok_or_else(too_big)?;
    hdu.name = hdu.value("EXTNAME").map(|s| s.trim().to_owned());
    hdu.ver = hdu.int("EXTVER").unwrap_or(1);
    Ok(hdu)
}

/// Reads every HDU's header and locates its data. Reads headers only.
///
/// # Errors
/// [`FitsError`]: not FITS, a header without END, a mandatory keyword missing, data past the
/// end of the file, limits, I/O.
pub fn read_hdus(source: &(impl ReadAt + ?Sized), file_len: u64, limits: FitsLimits) -> Result<Vec<Hdu>, FitsError> {
    let mut head = [0u8; 9];
    if file_len < 9 {
        return Err(FitsError::NotFits);
    }
    source.read_exact_at(0, &mut head).map_err(io_err(0))?;
    if !is_fits(&head) {
        return Err(FitsError::NotFits);
    }
    let mut hdus = Vec::new();
    let mut total_cards = 0usize;
    let mut at = 0u64;
    while at < file_len {
        let index = hdus.len();
        if index >= limits.max_hdus {
            return Err(FitsError::Limit {
                what: "HDUs",
                limit: limits.max_hdus,
            });
        }
        // Trailing zero or blank padding after the last HDU is tolerated (as astropy does).
        if index > 0 {
            let mut probe = [0u8; 8];
            let n = usize::try_from((file_len - at).min(8)).unwrap_or(0);
            source.read_exact_at(at, &mut probe[..n]).map_err(io_err(at))?;
            if probe[..n].iter().all(|&b| b == 0 || b == b' ') {
                break;
            }
        }
        let header_offset = at;
        let mut cards = Vec::new();
        let mut block = [0u8; 2880];
        let mut ended = false;
        while !ended {
            if at + BLOCK > file_len {
                return Err(FitsError::NoEnd {
                    hdu: index,
                    offset: header_offset,
                });
            }
            source.read_exact_at(at, &mut block).map_err(io_err(at))?;
            at += BLOCK;
            for card in block.chunks_exact(CARD) {
                if &card[..8] == b"END     " {
                    ended = true;
                    break;
                }
                if let Some(c) = parse_card(card) {
                    if total_cards >= limits.max_cards {
                        return Err(FitsError::Limit {
                            what: "header cards",
                            limit: limits.max_cards,
                        });
                    }
                    cards.push(c);
                    total_cards += 1;
                }
            }
        }
        let hdu = describe(index, header_offset, at, cards, file_len)?;
        let too_big = || FitsError::Truncated {
            hdu: index,
            end: u64::MAX,
            file_len,
        };
        let padded = hdu.data_len.div_ceil(BLOCK).checked_mul(BLOCK).ok_or_else(too_big)?;
        let end = at.checked_add(padded).ok_or_else(too_big)?;
        // The last HDU's data padding may be missing in files from careless writers: only the
        // data itself must be in the file.
        if at + hdu.data_len > file_len {
            return Err(FitsError::Truncated {
                hdu: index,
                end: at + hdu.data_len,
                file_len,
            });
        }
        at = end;
        hdus.push(hdu);
    }
    Ok(hdus)
}

/// The byte range of the ASDF file inside a FITS file: the data of the HDU named `ASDF`, an
/// IMAGE of bytes (Appendix A: BITPIX 8, NAXIS 1) or a one-row BINTABLE whose single column
/// `ASDF_METADATA` of TFORM `<n>B` holds the file (stdatamodels, asdf < 3.0).
///
/// # Errors
/// [`FitsError::NoAsdf`], [`FitsError::DuplicateAsdf`].
pub fn asdf_range(hdus: &[Hdu]) -> Result<std::ops::Range<u64>, FitsError> {
    let mut named = hdus
        .iter()
        .filter(|h| h.index > 0 && h.name.as_deref().is_some_and(|n| n.eq_ignore_ascii_case("ASDF")));
    let hdu = named.next().ok_or(FitsError::NoAsdf(
        "no HDU is named ASDF: this FITS file holds no ASDF tree",
    ))?;
    if let Some(second) = named.next() {
        return Err(FitsError::DuplicateAsdf {
            first: hdu.index,
            second: second.index,
        });
    }
    match hdu.kind {
        HduKind::Image if hdu.bitpix == 8 && hdu.axes.len() == 1 => Ok(hdu.data_offset..hdu.data_offset + hdu.data_len),
        HduKind::BinTable => {
            let tform = hdu.value("TFORM1").unwrap_or_default().trim().to_ascii_uppercase();
            let width: u64 = tform
                .strip_suffix('B')
                .map(|n| if n.is_empty() { Ok(1) } else { n.parse() })
                .and_then(Result::ok)
                .ok_or(FitsError::NoAsdf("the ASDF BINTABLE's column is not of TFORM <n>B"))?;
            if hdu.int("TFIELDS") != Some(1)
                || !hdu
                    .value("TTYPE1")
                    .is_some_and(|t| t.trim().eq_ignore_ascii_case("ASDF_METADATA"))
            {
                return Err(FitsError::NoAsdf(
                    "the ASDF BINTABLE does not have the one column ASDF_METADATA",
                ));
            }
            if hdu.axes.get(1) != Some(&1) || hdu.axes.first() != Some(&width) {
                return Err(FitsError::NoAsdf(
                    "the ASDF BINTABLE does not have one row of the column's width",
                ));
            }
            Ok(hdu.data_offset..hdu.data_offset + width)
        }
        _ => Err(FitsError::NoAsdf(
            "the HDU named ASDF is neither an IMAGE of bytes nor the ASDF_METADATA BINTABLE",
        )),
    }
}

/// The HDU a `fits:` ndarray source names: `fits:EXTNAME,EXTVER` or `fits:INDEX` (zero-based),
/// read as stdatamodels does (`((?P<name>[ -~]+),)?(?P<ver>[0-9]+)`; names compared without
/// case, as FITS readers do).
///
/// # Errors
/// [`FitsError::Source`]: not of that form, no such HDU, or two HDUs with that name and
/// version.
pub fn resolve_source<'a>(hdus: &'a [Hdu], source: &str) -> Result<&'a Hdu, FitsError> {
    let bad = |problem| FitsError::Source {
        text: source.to_owned(),
        problem,
    };
    let (name, ver) = match source.rsplit_once(',') {
        Some((name, ver)) => (Some(name), ver),
        None => (None, source),
    };
    if ver.is_empty() || !ver.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad("not of the form EXTNAME,EXTVER or INDEX"));
    }
    if name.is_some_and(|n| n.is_empty() || !n.bytes().all(|b| (b' '..=b'~').contains(&b))) {
        return Err(bad("the extension name is not printable ASCII"));
    }
    let ver: i64 = ver.parse().map_err(|_| bad("the number is too large"))?;
    match name {
        None => usize::try_from(ver)
            .ok()
            .and_then(|i| hdus.get(i))
            .ok_or(bad("no HDU has that index")),
        Some(name) => {
            // `PRIMARY` names the first HDU whatever its EXTNAME (astropy's rule; asdf 2.15
            // wrote `fits:PRIMARY,1` for arrays in the primary HDU).
            let primary = name.trim().eq_ignore_ascii_case("PRIMARY");
            let mut found = hdus.iter().enumerate().filter_map(|(i, h)| {
                (h.ver == ver
                    && ((primary && i == 0)
                        || h.name
                            .as_deref()
                            .is_some_and(|n| n.trim().eq_ignore_ascii_case(name.trim()))))
                .then_some(h)
            });
            let hdu = found.next().ok_or(bad("no HDU has that EXTNAME and EXTVER"))?;
            if found.next().is_some() {
                return Err(bad("two HDUs have that EXTNAME and EXTVER"));
            }
            Ok(hdu)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A header of `cards` (each padded to 80) with END, padded to 2880.
    fn header(cards: &[&str]) -> Vec<u8> {
        let mut v = Vec::new();
        for c in cards.iter().chain(&["END"]) {
            let mut line = c.as_bytes().to_vec();
            line.resize(CARD, b' ');
            v.extend_from_slice(&line);
        }
        v.resize(v.len().div_ceil(2880) * 2880, b' ');
        v
    }

    fn data(bytes: &[u8]) -> Vec<u8> {
        let mut v = bytes.to_vec();
        v.resize(v.len().div_ceil(2880) * 2880, 0);
        v
    }

    fn jwst_like(asdf: &[u8]) -> Vec<u8> {
        let mut f = header(&[
            "SIMPLE  =                    T",
            "BITPIX  =                    8",
            "NAXIS   =                    0",
            "EXTEND  =                    T",
        ]);
        f.extend(header(&[
            "XTENSION= 'IMAGE   '",
            "BITPIX  =                  -32",
            "NAXIS   =                    2",
            "NAXIS1  =                    4",
            "NAXIS2  =                    3",
            "PCOUNT  =                    0",
            "GCOUNT  =                    1",
            "EXTNAME = 'SCI     '           / science data",
            "EXTVER  =                    1",
        ]));
        let sci: Vec<u8> = (0..12).flat_map(|i| (i as f32).to_be_bytes()).collect();
        f.extend(data(&sci));
        let tform = format!("TFORM1  = '{}B'", asdf.len());
        let naxis1 = format!("NAXIS1  = {:>20}", asdf.len());
        f.extend(header(&[
            "XTENSION= 'BINTABLE'",
            "BITPIX  =                    8",
            "NAXIS   =                    2",
            &naxis1,
            "NAXIS2  =                    1",
            "PCOUNT  =                    0",
            "GCOUNT  =                    1",
            "TFIELDS =                    1",
            "TTYPE1  = 'ASDF_METADATA'",
            &tform,
            "EXTNAME = 'ASDF    '",
        ]));
        f.extend(data(asdf));
        f
    }

    #[test]
    fn jwst_layout_is_located() {
        let asdf = b"#ASDF 1.0.0\n%YAML 1.1\n--- {x: 1}\n...\n";
        let f = jwst_like(asdf);
        let hdus = read_hdus(&f, f.len() as u64, FitsLimits::default()).unwrap();
        assert_eq!(hdus.len(), 3);
        assert_eq!(hdus[1].kind, HduKind::Image);
        assert_eq!((hdus[1].name.as_deref(), hdus[1].ver), (Some("SCI"), 1));
        assert_eq!((hdus[1].datatype(), hdus[1].shape()), (Some("float32"), vec![3, 4]));
        assert_eq!(hdus[1].data_len, 48);
        let r = asdf_range(&hdus).unwrap();
        assert_eq!(
            &f[usize::try_from(r.start).unwrap()..usize::try_from(r.end).unwrap()],
            asdf
        );
        assert_eq!(resolve_source(&hdus, "SCI,1").unwrap().index, 1);
        assert_eq!(resolve_source(&hdus, "sci,1").unwrap().index, 1);
        assert_eq!(resolve_source(&hdus, "1").unwrap().index, 1);
        assert!(resolve_source(&hdus, "SCI,2").is_err());
        // The first HDU is PRIMARY whatever its name (astropy's rule).
        assert_eq!(resolve_source(&hdus, "PRIMARY,1").unwrap().index, 0);
        assert_eq!(resolve_source(&hdus, "primary ,1").unwrap().index, 0);
        assert!(resolve_source(&hdus, "PRIMARY,2").is_err());
        assert!(resolve_source(&hdus, "9").is_err());
        assert!(resolve_source(&hdus, "SCI,x").is_err());
    }

    /// A random-groups primary HDU (GROUPS = T, NAXIS1 = 0): its data is GCOUNT x (PCOUNT +
    /// NAXIS2 x NAXIS3) values, and an `ASDF` HDU hidden inside that data is not an HDU.
    #[test]
    fn random_groups_are_sized_without_naxis1() {
        let real = b"#ASDF 1.0.0\n%YAML 1.1\n--- {x: real}\n...\n";
        let fake = b"#ASDF 1.0.0\n%YAML 1.1\n--- {x: fake}\n...\n";
        let mut f = header(&[
            "SIMPLE  =                    T",
            "BITPIX  =                  -32",
            "NAXIS   =                    3",
            "NAXIS1  =                    0",
            "NAXIS2  =                    3",
            "NAXIS3  =                  100",
            "GROUPS  =                    T",
            "PCOUNT  =                    2",
            "GCOUNT  =                   30",
            "EXTEND  =                    T",
        ]);
        // 30 x (2 + 300) x 4 = 36,240 bytes of groups; a fake HDU inside them.
        let mut groups = Vec::new();
        let n = format!("NAXIS1  = {:>20}", fake.len());
        groups.extend(header(&[
            "XTENSION= 'IMAGE   '",
            "BITPIX  =                    8",
            "NAXIS   =                    1",
            &n,
            "EXTNAME = 'ASDF'",
        ]));
        groups.extend(data(fake));
        groups.resize(36_240, 0x41);
        f.extend(data(&groups));
        let n = format!("NAXIS1  = {:>20}", real.len());
        f.extend(header(&[
            "XTENSION= 'IMAGE   '",
            "BITPIX  =                    8",
            "NAXIS   =                    1",
            &n,
            "EXTNAME = 'ASDF'",
        ]));
        f.extend(data(real));
        let hdus = read_hdus(&f, f.len() as u64, FitsLimits::default()).unwrap();
        assert_eq!(hdus.len(), 2);
        assert_eq!(hdus[0].data_len, 36_240);
        let r = asdf_range(&hdus).unwrap();
        assert_eq!(
            &f[usize::try_from(r.start).unwrap()..usize::try_from(r.end).unwrap()],
            real
        );
    }

    #[test]
    fn appendix_a_image_form() {
        let asdf = b"#ASDF 1.0.0\n...\n";
        let mut f = header(&[
            "SIMPLE  =                    T",
            "BITPIX  =                    8",
            "NAXIS   =                    0",
        ]);
        let n = format!("NAXIS1  = {:>20}", asdf.len());
        f.extend(header(&[
            "XTENSION= 'IMAGE   '",
            "BITPIX  =                    8",
            "NAXIS   =                    1",
            &n,
            "EXTNAME = 'ASDF'",
        ]));
        f.extend(data(asdf));
        let hdus = read_hdus(&f, f.len() as u64, FitsLimits::default()).unwrap();
        assert_eq!(
            asdf_range(&hdus).unwrap().end - asdf_range(&hdus).unwrap().start,
            asdf.len() as u64
        );
    }

    #[test]
    fn damaged_files_are_errors_not_panics() {
        let f = jwst_like(b"#ASDF 1.0.0\n...\n");
        let l = FitsLimits::default();
        // Cut anywhere: an error or fewer HDUs, never a panic.
        for cut in (0..f.len()).step_by(97) {
            let _ = read_hdus(&f[..cut], cut as u64, l);
        }
        assert_eq!(read_hdus(&f[..2880], 2880, l).unwrap().len(), 1);
        assert!(matches!(
            read_hdus(&f[..4000], 4000, l),
            Err(FitsError::NoEnd { hdu: 1, .. })
        ));
        assert!(matches!(
            read_hdus(&f[..5780], 5780, l),
            Err(FitsError::Truncated { hdu: 1, .. })
        ));
        assert_eq!(read_hdus(&f[..6000], 6000, l).unwrap().len(), 2);
        assert_eq!(read_hdus(&b"#ASDF 1.0.0\n"[..], 12, l), Err(FitsError::NotFits));
        // An absurd NAXIS1 is a size error, not an allocation.
        let mut g = header(&[
            "SIMPLE  =                    T",
            "BITPIX  =                  -64",
            "NAXIS   =                    2",
            "NAXIS1  =  9223372036854775807",
            "NAXIS2  =  9223372036854775807",
        ]);
        g.extend(data(b"x"));
        assert!(matches!(
            read_hdus(&g, g.len() as u64, l),
            Err(FitsError::Truncated { .. })
        ));
        // Two HDUs named ASDF.
        let mut h = f.clone();
        let asdf_hdu = f[2880 * 3..].to_vec();
        h.extend(asdf_hdu);
        let hdus = read_hdus(&h, h.len() as u64, l).unwrap();
        assert!(matches!(
            asdf_range(&hdus),
            Err(FitsError::DuplicateAsdf { first: 2, second: 3 })
        ));
        // A compressed image is told apart.
        let mut c = header(&[
            "SIMPLE  =                    T",
            "BITPIX  =                    8",
            "NAXIS   =                    0",
        ]);
        c.extend(header(&[
            "XTENSION= 'BINTABLE'",
            "BITPIX  =                    8",
            "NAXIS   =                    2",
            "NAXIS1  =                    8",
            "NAXIS2  =                    0",
            "PCOUNT  =                    0",
            "GCOUNT  =                    1",
            "TFIELDS =                    1",
            "ZIMAGE  =                    T",
            "EXTNAME = 'SCI'",
        ]));
        let hdus = read_hdus(&c, c.len() as u64, l).unwrap();
        assert_eq!(hdus[1].kind, HduKind::CompressedImage);
        assert!(asdf_range(&hdus).is_err());
    }

    #[test]
    fn sign_flips_of_images_and_table_columns() {
        let hdu = |cards: &[(&str, &str)], axes: Vec<u64>, bitpix: i64, kind: HduKind| Hdu {
            index: 1,
            kind,
            header_offset: 0,
            data_offset: 0,
            data_len: 0,
            bitpix,
            axes,
            name: None,
            ver: 1,
            cards: cards.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
        };
        // uint16 image: every element's first byte, also from a range that starts mid-element.
        let img = hdu(&[("BZERO", "32768"), ("BSCALE", "1")], vec![3], 16, HduKind::Image);
        let f = img.sign_flips().unwrap().unwrap();
        let mut d = vec![0u8; 6];
        f.apply(&mut d, 0);
        assert_eq!(d, [0x80, 0, 0x80, 0, 0x80, 0]);
        let mut d = vec![0u8; 3];
        f.apply(&mut d, 1);
        assert_eq!(d, [0, 0x80, 0]);
        assert_eq!(img.value_datatype(), Some("uint16"));
        // A table: rows of (1J uint32, 2I int16): only the J column flips, and the heap
        // after the 2 rows is left alone; a column claiming more than the row is clipped.
        let cards = [
            ("TFIELDS", "2"),
            ("TFORM1", "1J"),
            ("TZERO1", "2147483648"),
            ("TFORM2", "99999999I"),
        ];
        let t = hdu(&cards, vec![8, 2], 8, HduKind::BinTable);
        let f = t.sign_flips().unwrap().unwrap();
        let mut d = vec![0u8; 20];
        f.apply(&mut d, 0);
        let flipped: Vec<usize> = d
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == 0x80)
            .map(|(i, _)| i)
            .collect();
        assert_eq!(flipped, vec![0, 8]);
        // Other scalings are refused.
        let t = hdu(
            &[("TFIELDS", "1"), ("TFORM1", "E"), ("TSCAL1", "2.0")],
            vec![4, 1],
            8,
            HduKind::BinTable,
        );
        assert!(matches!(t.sign_flips(), Err(FitsError::Scaled { .. })));
        let img = hdu(&[("BZERO", "10")], vec![3], 16, HduKind::Image);
        assert!(img.sign_flips().is_err());
    }

    #[test]
    fn card_values() {
        let card = |s: &str| {
            let mut b = s.as_bytes().to_vec();
            b.resize(80, b' ');
            parse_card(&b)
        };
        assert_eq!(
            card("EXTNAME = 'O''HARE  ' / a name"),
            Some(("EXTNAME".into(), "O'HARE".into()))
        );
        assert_eq!(
            card("BSCALE  =               1.5D0 / scale"),
            Some(("BSCALE".into(), "1.5D0".into()))
        );
        assert_eq!(
            card("COMMENT   anything = here"),
            Some(("COMMENT".into(), String::new()))
        );
        assert_eq!(card("        "), None);
    }
}
