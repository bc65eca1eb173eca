//! Writing FITS: the cards of images and of the ASDF HDU, the EXTNAMEs of new HDUs, the cards
//! of a `fits` node of a tree, and one HDU written (header, data with its running checksum,
//! padding; CHECKSUM and DATASUM when asked). What goes into each HDU is the facade's choice.

use std::io::{Seek, SeekFrom, Write};

use asdf_core_types::ScalarType;
use asdf_yaml::Node;

use crate::file::AsdfHdu;
use crate::out::{CardImage, CardValue};
use crate::{CardError, FitsError, Hdu, HduKind};

fn card_err(hdu: usize) -> impl Fn(CardError) -> FitsError {
    move |source| FitsError::Card { hdu, source }
}

/// How an ndarray's datatype is stored in FITS: BITPIX, and BZERO when the values are kept
/// with their sign bit flipped (FITS's unsigned convention).
pub fn bitpix_of(t: ScalarType) -> Option<(i64, Option<&'static str>)> {
    Some(match t {
        ScalarType::UInt8 => (8, None),
        ScalarType::Int8 => (8, Some("-128")),
        ScalarType::Int16 => (16, None),
        ScalarType::UInt16 => (16, Some("32768")),
        ScalarType::Int32 => (32, None),
        ScalarType::UInt32 => (32, Some("2147483648")),
        ScalarType::Int64 => (64, None),
        ScalarType::UInt64 => (64, Some("9223372036854775808")),
        ScalarType::Float32 => (-32, None),
        ScalarType::Float64 => (-64, None),
        _ => return None,
    })
}

/// What `cards` say of an HDU (index `index` in the file written).
///
/// # Errors
/// Cards that do not describe an HDU.
pub fn describe_cards(index: usize, cards: &[CardImage]) -> Result<Hdu, FitsError> {
    let parsed = cards.iter().filter_map(|c| crate::parse_card(c)).collect();
    crate::describe(index, 0, 0, parsed, u64::MAX)
}

/// The cards of a `header` list of a `fits` node: a card's text, or `[keyword, value,
/// comment]` as the `fits/fits-*` schemas have it.
///
/// # Errors
/// A card that cannot be written.
pub fn node_cards(hdu: usize, header: &Node) -> Result<Vec<CardImage>, FitsError> {
    let err = card_err(hdu);
    let mut out = Vec::new();
    let items = header.as_sequence().map(|s| s.items.as_slice()).unwrap_or_default();
    for item in items {
        if let Some(text) = item.as_str() {
            out.push(crate::out::raw_card(text).map_err(&err)?);
            continue;
        }
        let parts = item.as_sequence().map(|s| s.items.as_slice()).unwrap_or_default();
        let keyword = parts.first().and_then(Node::as_str).unwrap_or_default();
        let commentary = matches!(keyword, "" | "COMMENT" | "HISTORY");
        let text = |n: Option<&Node>| n.map(scalar_text).unwrap_or_default();
        let cards = if parts.len() <= 1 || commentary {
            let t = if parts.len() >= 2 {
                text(parts.get(1))
            } else {
                String::new()
            };
            crate::out::format_card(keyword, &CardValue::None, Some(&t))
        } else {
            let v = &parts[1];
            let value = if let Some(b) = v.as_bool() {
                CardValue::Logical(b)
            } else if let Some(i) = v.as_i64() {
                CardValue::Int(i)
            } else if let Some(x) = v.as_f64() {
                CardValue::Real(x)
            } else {
                CardValue::Str(scalar_text(v))
            };
            let comment = parts.get(2).map(scalar_text);
            crate::out::format_card(keyword, &value, comment.as_deref())
        };
        out.extend(cards.map_err(&err)?);
    }
    Ok(out)
}

fn scalar_text(n: &Node) -> String {
    n.as_scalar().map(|s| s.text.to_string()).unwrap_or_default()
}

/// An EXTNAME as FITS readers compare them: without case and without trailing blanks.
#[must_use]
pub fn name_key(name: &str) -> String {
    name.trim_end().to_ascii_uppercase()
}

/// The EXTNAME of a new HDU for the ndarray at `pointer`: its key (the last one that is not
/// a sequence index), upper case.
#[must_use]
pub fn derived_name(pointer: &str) -> String {
    let tokens = asdf_yaml::pointer::tokens(pointer).unwrap_or_default();
    let key = tokens
        .iter()
        .rev()
        .find(|t| !t.bytes().all(|b| b.is_ascii_digit()))
        .cloned()
        .unwrap_or_default();
    let mut name: String = key
        .chars()
        .map(|c| {
            if (' '..='~').contains(&c) {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .take(68)
        .collect();
    // Trailing blanks of a FITS string are not significant: `sci ` is `SCI`.
    name.truncate(name.trim_end().len());
    if name.trim().is_empty() {
        name = "DATA".to_owned();
    }
    if name.eq_ignore_ascii_case("ASDF") || name.eq_ignore_ascii_case("PRIMARY") {
        name.push_str("_DATA");
    }
    name
}

/// The cards of an HDU whose data is an ndarray of `scalar` and `shape`: the structural cards
/// from the data (the original card kept where its value is the same, for its comment), the
/// BSCALE/BZERO of the unsigned convention, then every other card of `original` in order.
///
/// # Errors
/// A datatype FITS images do not have, a card that cannot be written.
pub fn image_cards(
    hdu: usize,
    primary: bool,
    original: &[CardImage],
    scalar: ScalarType,
    shape: &[usize],
) -> Result<Vec<CardImage>, FitsError> {
    let err = card_err(hdu);
    let (bitpix, bzero) = bitpix_of(scalar).ok_or(FitsError::NoImageType(scalar.name()))?;
    let axes: Vec<u64> = shape.iter().rev().map(|&n| n as u64).collect();
    let kind = if primary { HduKind::Primary } else { HduKind::Image };
    let find = |keyword: &str| {
        original
            .iter()
            .find(|c| crate::out::card_keyword(c) == keyword)
            .and_then(|c| crate::parse_card(c).map(|(_, v)| (c, v)))
    };
    let mut out = Vec::new();
    for (keyword, value, comment) in crate::out::structural_cards(&kind, bitpix, &axes) {
        let same = find(&keyword).filter(|(_, v)| match &value {
            CardValue::Int(i) => v.trim().parse::<i64>().ok() == Some(*i),
            CardValue::Logical(b) => v.trim() == if *b { "T" } else { "F" },
            CardValue::Str(s) => v.trim() == s,
            _ => false,
        });
        match same {
            Some((card, _)) => out.push(*card),
            None => out.extend(
                crate::out::format_card(&keyword, &value, (!comment.is_empty()).then_some(comment)).map_err(&err)?,
            ),
        }
    }
    if let Some(zero) = bzero {
        out.push(crate::out::raw_card(&format!("BSCALE  = {:>20}", 1)).map_err(&err)?);
        out.push(crate::out::raw_card(&format!("BZERO   = {zero:>20}")).map_err(&err)?);
    }
    let float = bitpix < 0;
    let mut dropping = false;
    for c in original {
        let k = crate::out::card_keyword(c);
        if k == "CONTINUE" && dropping {
            continue;
        }
        dropping = matches!(
            k,
            "SIMPLE"
                | "XTENSION"
                | "BITPIX"
                | "NAXIS"
                | "PCOUNT"
                | "GCOUNT"
                | "EXTEND"
                | "BSCALE"
                | "BZERO"
                | "CHECKSUM"
                | "DATASUM"
        ) || (k.starts_with("NAXIS") && k[5..].bytes().all(|b| b.is_ascii_digit()))
            || (float && k == "BLANK");
        if !dropping {
            out.push(*c);
        }
    }
    Ok(out)
}

/// The cards of the ASDF HDU holding `n` bytes of ASDF file, in `form`.
///
/// # Errors
/// A card that cannot be written (none in practice: the values are fixed).
pub fn asdf_hdu_cards(index: usize, form: AsdfHdu, n: usize) -> Result<Vec<CardImage>, FitsError> {
    let err = card_err(index);
    let mut cards = Vec::new();
    let mut card = |k: &str, v: CardValue, c: &str| -> Result<(), FitsError> {
        cards.extend(crate::out::format_card(k, &v, (!c.is_empty()).then_some(c)).map_err(&err)?);
        Ok(())
    };
    let n64 = i64::try_from(n).unwrap_or(i64::MAX);
    match form {
        AsdfHdu::Table => {
            card("XTENSION", CardValue::Str("BINTABLE".into()), "binary table extension")?;
            card("BITPIX", CardValue::Int(8), "array data type")?;
            card("NAXIS", CardValue::Int(2), "number of array dimensions")?;
            card("NAXIS1", CardValue::Int(n64), "length of dimension 1")?;
            card("NAXIS2", CardValue::Int(1), "length of dimension 2")?;
            card("PCOUNT", CardValue::Int(0), "number of group parameters")?;
            card("GCOUNT", CardValue::Int(1), "number of groups")?;
            card("TFIELDS", CardValue::Int(1), "number of table fields")?;
            card("TTYPE1", CardValue::Str("ASDF_METADATA".into()), "")?;
            card("TFORM1", CardValue::Str(format!("{n}B")), "")?;
        }
        AsdfHdu::Image => {
            card("XTENSION", CardValue::Str("IMAGE".into()), "Image extension")?;
            card("BITPIX", CardValue::Int(8), "array data type")?;
            card("NAXIS", CardValue::Int(1), "number of array dimensions")?;
            card("NAXIS1", CardValue::Int(n64), "")?;
            card("PCOUNT", CardValue::Int(0), "number of parameters")?;
            card("GCOUNT", CardValue::Int(1), "number of groups")?;
        }
    }
    card("EXTNAME", CardValue::Str("ASDF".into()), "extension name")?;
    Ok(cards)
}

/// How much data is handed to the output at a time.
pub const PIECE: usize = 1 << 20;

/// The output of an HDU's data: the file, and the running checksum of the data.
pub struct DataOut<'w, W: Write + Seek> {
    w: &'w mut W,
    sum: u32,
    carry: Vec<u8>,
    len: u64,
}

impl<W: Write + Seek> std::fmt::Debug for DataOut<'_, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataOut")
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

impl<W: Write + Seek> DataOut<'_, W> {
    /// Writes `bytes`, adding them to the checksum.
    ///
    /// # Errors
    /// The output's.
    pub fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.w.write_all(bytes)?;
        self.len += bytes.len() as u64;
        let mut b = bytes;
        if !self.carry.is_empty() {
            let take = (4 - self.carry.len()).min(b.len());
            self.carry.extend_from_slice(&b[..take]);
            b = &b[take..];
            if self.carry.len() == 4 {
                self.sum = crate::out::ones_sum(&self.carry, self.sum);
                self.carry.clear();
            }
        }
        let whole = b.len() / 4 * 4;
        self.sum = crate::out::ones_sum(&b[..whole], self.sum);
        self.carry.extend_from_slice(&b[whole..]);
        Ok(())
    }

    fn finish_data(&mut self) -> std::io::Result<u32> {
        let pad = crate::out::data_padding(self.len);
        self.put(&vec![0u8; pad])?;
        Ok(self.sum)
    }
}

/// Why an HDU could not be written.
#[derive(Debug)]
pub enum HduError<E> {
    /// A card.
    Fits(FitsError),
    /// The output.
    Io(std::io::Error),
    /// The data's own.
    Data(E),
}

/// Writes one HDU at `w`: its header from `cards`, its data by `data` (through a [`DataOut`]),
/// the padding; with `checksums`, CHECKSUM and DATASUM filled in afterwards (the header
/// written again). Returns the header as written.
///
/// # Errors
/// [`HduError`].
pub fn write_hdu<W: Write + Seek, E>(
    w: &mut W,
    index: usize,
    mut cards: Vec<CardImage>,
    checksums: bool,
    data: impl FnOnce(&mut DataOut<'_, W>) -> Result<(), E>,
) -> Result<Vec<u8>, HduError<E>> {
    let start = w.stream_position().map_err(HduError::Io)?;
    if checksums {
        crate::out::add_checksum_cards(&mut cards, 0).map_err(|e| HduError::Fits(card_err(index)(e)))?;
    }
    let header = crate::out::header_bytes(&cards);
    w.write_all(&header).map_err(HduError::Io)?;
    let mut out = DataOut {
        w,
        sum: 0,
        carry: Vec::new(),
        len: 0,
    };
    data(&mut out).map_err(HduError::Data)?;
    let datasum = out.finish_data().map_err(HduError::Io)?;
    if !checksums {
        return Ok(header);
    }
    crate::out::add_checksum_cards(&mut cards, datasum).map_err(|e| HduError::Fits(card_err(index)(e)))?;
    let header = crate::out::header_bytes(&cards);
    let end = w.stream_position().map_err(HduError::Io)?;
    w.seek(SeekFrom::Start(start)).map_err(HduError::Io)?;
    w.write_all(&header).map_err(HduError::Io)?;
    w.seek(SeekFrom::Start(end)).map_err(HduError::Io)?;
    Ok(header)
}

/// `cards` without CHECKSUM and DATASUM (they would no longer hold).
#[must_use]
pub fn strip_checksums(cards: &[CardImage]) -> Vec<CardImage> {
    cards
        .iter()
        .filter(|c| !matches!(crate::out::card_keyword(c), "CHECKSUM" | "DATASUM"))
        .copied()
        .collect()
}

/// An ndarray node (untagged) whose data is FITS data: big-endian, at `source`.
#[must_use]
pub fn fits_ndarray(source: String, datatype: &str, shape: &[usize]) -> Node {
    Node::map(vec![
        (Node::str("source"), Node::str(source)),
        (Node::str("datatype"), Node::str(datatype)),
        (Node::str("byteorder"), Node::str("big")),
        (
            Node::str("shape"),
            Node::seq(
                shape
                    .iter()
                    .map(|&d| Node::int(i64::try_from(d).unwrap_or(i64::MAX)))
                    .collect(),
            ),
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_hdus_are_named_after_their_key() {
        assert_eq!(derived_name("/sci"), "SCI");
        assert_eq!(derived_name("/slits/3/data"), "DATA");
        assert_eq!(derived_name("/slits/3"), "SLITS");
        assert_eq!(derived_name("/asdf"), "ASDF_DATA");
        assert_eq!(derived_name("/a~1b"), "A/B");
        assert_eq!(derived_name(""), "DATA");
    }
}
