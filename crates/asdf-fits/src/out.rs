//! Writing FITS (FITS 4.0): header cards formatted from keyword, value and comment (or taken
//! as written), headers padded into 2880-byte blocks, data padded with zeros, and the
//! CHECKSUM / DATASUM convention (FITS 4.0, Appendix J: a 32-bit ones' complement sum, the
//! HDU's complement written as 16 ASCII characters so that the HDU sums to -0).
//!
//! Written by hand for the reasons the reading half gives ([`crate::fits`]): what ASDF in FITS
//! needs of a writer is the card syntax and the block padding, a few hundred lines.

pub use crate::CardError;
use crate::{BLOCK, CARD, HduKind};

/// One 80-character card image.
pub type CardImage = [u8; CARD];

/// A header card's value.
#[derive(Debug, Clone, PartialEq)]
pub enum CardValue {
    /// A character string (quoted; one that does not fit a card continues on `CONTINUE` cards).
    Str(String),
    /// An integer.
    Int(i64),
    /// A real number (finite: FITS has no NaN or infinity in headers).
    Real(f64),
    /// A logical, `T` or `F`.
    Logical(bool),
    /// No value: a commentary card (`COMMENT`, `HISTORY`, a blank keyword) whose text is the
    /// comment.
    None,
}

fn blank_card() -> CardImage {
    [b' '; CARD]
}

fn printable(s: &str) -> bool {
    s.bytes().all(|b| (b' '..=b'~').contains(&b))
}

fn check_keyword(keyword: &str) -> Result<(), CardError> {
    if keyword == "END" {
        return Err(CardError::End);
    }
    if keyword.len() > 8
        || !keyword
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
    {
        return Err(CardError::Keyword(keyword.to_owned()));
    }
    Ok(())
}

/// A card image from its text as written (at most 80 printable characters; padded with
/// blanks).
///
/// # Errors
/// [`CardError::TooLong`], [`CardError::Text`].
pub fn raw_card(text: &str) -> Result<CardImage, CardError> {
    let keyword = || text.chars().take(8).collect::<String>().trim_end().to_owned();
    if !printable(text) {
        return Err(CardError::Text { keyword: keyword() });
    }
    if text.len() > CARD {
        return Err(CardError::TooLong { keyword: keyword() });
    }
    if keyword() == "END" {
        return Err(CardError::End);
    }
    let mut card = blank_card();
    card[..text.len()].copy_from_slice(text.as_bytes());
    Ok(card)
}

/// The value text of a real number as FITS writes it: the shortest digits that read back as
/// the same `f64`, always with a decimal point, exponent in upper case.
fn real_text(x: f64) -> String {
    let s = format!("{x:?}");
    let s = s.replace('e', "E");
    if s.contains('.') || s.contains('E') {
        if let Some((m, e)) = s.split_once('E')
            && !m.contains('.')
        {
            return format!("{m}.0E{e}");
        }
        s
    } else {
        format!("{s}.0")
    }
}

/// `s` quoted as a FITS string (quotes doubled; at least 8 characters inside the quotes, as
/// the standard recommends for fixed-format readers).
fn quoted(s: &str) -> String {
    let inner = s.replace('\'', "''");
    format!("'{inner:<8}'")
}

/// The card images of one card: usually one, more for commentary text longer than a card or
/// a string value longer than a card (the `CONTINUE` convention of FITS 4.0, section 4.2.1.2).
///
/// # Errors
/// [`CardError`].
pub fn format_card(keyword: &str, value: &CardValue, comment: Option<&str>) -> Result<Vec<CardImage>, CardError> {
    check_keyword(keyword)?;
    let text_err = || CardError::Text {
        keyword: keyword.to_owned(),
    };
    let comment = comment.unwrap_or_default();
    if !printable(comment) {
        return Err(text_err());
    }
    let mut head = blank_card();
    head[..keyword.len()].copy_from_slice(keyword.as_bytes());
    let value_text = match value {
        CardValue::None => {
            // Commentary: columns 9-80 hold text; longer text on more cards of the keyword.
            let bytes = comment.as_bytes();
            if bytes.is_empty() {
                return Ok(vec![head]);
            }
            return Ok(bytes
                .chunks(CARD - 8)
                .map(|chunk| {
                    let mut c = head;
                    c[8..8 + chunk.len()].copy_from_slice(chunk);
                    c
                })
                .collect());
        }
        CardValue::Str(s) => {
            if !printable(s) {
                return Err(text_err());
            }
            let q = quoted(s);
            if q.len() > CARD - 10 {
                return continued(head, s, comment);
            }
            // Left-justified in a 20-character field, as astropy renders it (a checksum is of
            // the card as a reader renders it with the value zeroed).
            format!("{q:<20}")
        }
        CardValue::Int(i) => format!("{i:>20}"),
        CardValue::Real(x) => {
            if !x.is_finite() {
                return Err(CardError::NotFinite {
                    keyword: keyword.to_owned(),
                });
            }
            format!("{:>20}", real_text(*x))
        }
        CardValue::Logical(b) => format!("{:>20}", if *b { "T" } else { "F" }),
    };
    let mut text = format!("{keyword:<8}= {value_text}");
    if !comment.is_empty() {
        text.push_str(" / ");
        text.push_str(comment);
    }
    // A comment that does not fit is cut at the card's end: the value always fits.
    text.truncate(CARD);
    raw_card(&text).map(|c| vec![c])
}

/// A long string over `CONTINUE` cards: each piece but the last ends in `&`.
fn continued(head: CardImage, s: &str, comment: &str) -> Result<Vec<CardImage>, CardError> {
    // Pieces of at most 67 characters inside the quotes once quotes are doubled (a doubled
    // quote is never split).
    let mut pieces: Vec<String> = Vec::new();
    let mut cur = String::new();
    for ch in s.chars() {
        let add = if ch == '\'' { 2 } else { 1 };
        if cur.len() + add > 67 {
            pieces.push(std::mem::take(&mut cur));
        }
        if ch == '\'' {
            cur.push_str("''");
        } else {
            cur.push(ch);
        }
    }
    pieces.push(cur);
    let n = pieces.len();
    let mut out = Vec::with_capacity(n);
    let keyword = String::from_utf8_lossy(&head[..8]).into_owned();
    for (i, p) in pieces.into_iter().enumerate() {
        let amp = if i + 1 < n { "&" } else { "" };
        let lead = if i == 0 {
            format!("{keyword}= ")
        } else {
            "CONTINUE  ".to_owned()
        };
        let mut text = format!("{lead}'{p}{amp}'");
        if i + 1 == n && !comment.is_empty() && text.len() + 3 + comment.len() <= CARD {
            text.push_str(" / ");
            text.push_str(comment);
        }
        out.push(raw_card(&text)?);
    }
    Ok(out)
}

/// A header: its cards, then `END`, padded with blanks to whole 2880-byte blocks.
#[must_use]
pub fn header_bytes(cards: &[CardImage]) -> Vec<u8> {
    let mut out = Vec::with_capacity((cards.len() + 37) * CARD);
    for c in cards {
        out.extend_from_slice(c);
    }
    let mut end = blank_card();
    end[..3].copy_from_slice(b"END");
    out.extend_from_slice(&end);
    let padded = usize::try_from((out.len() as u64).div_ceil(BLOCK) * BLOCK).unwrap_or(out.len());
    out.resize(padded, b' ');
    out
}

/// The zero bytes that pad `len` bytes of data to a whole block.
#[must_use]
pub fn data_padding(len: u64) -> usize {
    usize::try_from(len.div_ceil(BLOCK) * BLOCK - len).unwrap_or(0)
}

/// The keyword of a card image (columns 1-8, trailing blanks removed).
#[must_use]
pub fn card_keyword(card: &CardImage) -> &str {
    std::str::from_utf8(&card[..8]).unwrap_or("").trim_end()
}

/// The cards of a header as written (`header` the bytes from the first card to the end of
/// the header's blocks): every card before `END`.
#[must_use]
pub fn split_cards(header: &[u8]) -> Vec<CardImage> {
    let mut out = Vec::new();
    for c in header.chunks_exact(CARD) {
        if &c[..8] == b"END     " {
            break;
        }
        let mut card = blank_card();
        card.copy_from_slice(c);
        out.push(card);
    }
    out
}

/// The structural cards of a header whose data is an array: the mandatory keywords of
/// FITS 4.0 (sections 4.4.1.1 and 7.1.1), in their order, with `BITPIX` and `NAXISn` (fastest
/// axis first) from the data.
#[must_use]
pub fn structural_cards(kind: &HduKind, bitpix: i64, axes: &[u64]) -> Vec<(String, CardValue, &'static str)> {
    let mut out = Vec::new();
    match kind {
        HduKind::Primary => out.push((
            "SIMPLE".to_owned(),
            CardValue::Logical(true),
            "conforms to FITS standard",
        )),
        _ => out.push(("XTENSION".to_owned(), CardValue::Str("IMAGE".into()), "Image extension")),
    }
    out.push(("BITPIX".to_owned(), CardValue::Int(bitpix), "array data type"));
    out.push((
        "NAXIS".to_owned(),
        CardValue::Int(i64::try_from(axes.len()).unwrap_or(i64::MAX)),
        "number of array dimensions",
    ));
    for (i, n) in axes.iter().enumerate() {
        out.push((
            format!("NAXIS{}", i + 1),
            CardValue::Int(i64::try_from(*n).unwrap_or(i64::MAX)),
            "",
        ));
    }
    match kind {
        HduKind::Primary => out.push(("EXTEND".to_owned(), CardValue::Logical(true), "may contain extensions")),
        _ => {
            out.push(("PCOUNT".to_owned(), CardValue::Int(0), "number of parameters"));
            out.push(("GCOUNT".to_owned(), CardValue::Int(1), "number of groups"));
        }
    }
    out
}

/// Adds `bytes` (whole 4-byte words, big-endian) to a 32-bit ones' complement sum, FITS's
/// checksum arithmetic. `bytes` may be any length when it ends the data; a partial word is
/// padded with zeros, as the data's padding would be.
#[must_use]
pub fn ones_sum(bytes: &[u8], sum: u32) -> u32 {
    let mut acc = u64::from(sum);
    let mut words = bytes.chunks_exact(4);
    for w in &mut words {
        acc += u64::from(u32::from_be_bytes([w[0], w[1], w[2], w[3]]));
        if acc > u64::from(u32::MAX) << 8 {
            acc = (acc & 0xffff_ffff) + (acc >> 32);
        }
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 4];
        w[..rest.len()].copy_from_slice(rest);
        acc += u64::from(u32::from_be_bytes(w));
    }
    while acc >> 32 != 0 {
        acc = (acc & 0xffff_ffff) + (acc >> 32);
    }
    u32::try_from(acc).unwrap_or(u32::MAX)
}

/// Adds two 32-bit ones' complement sums.
#[must_use]
pub fn ones_add(a: u32, b: u32) -> u32 {
    let s = u64::from(a) + u64::from(b);
    u32::try_from((s & 0xffff_ffff) + (s >> 32)).unwrap_or(u32::MAX)
}

/// The 16 ASCII characters of FITS's checksum encoding of `value` (FITS 4.0, Appendix J):
/// each byte spread over four characters from `0x30`, none of the punctuation between the
/// digits and the letters, then rotated one place right.
#[must_use]
pub fn encode_checksum(value: u32) -> [u8; 16] {
    const EXCLUDE: [u8; 13] = [
        0x3a, 0x3b, 0x3c, 0x3d, 0x3e, 0x3f, 0x40, 0x5b, 0x5c, 0x5d, 0x5e, 0x5f, 0x60,
    ];
    let mut asc = [0u8; 16];
    for i in 0..4 {
        let byte = (value >> (24 - 8 * i)) & 0xff;
        let quotient = u8::try_from(byte / 4 + 0x30).unwrap_or(0x30);
        let remainder = u8::try_from(byte % 4).unwrap_or(0);
        let mut ch = [quotient; 4];
        ch[0] += remainder;
        let mut again = true;
        while again {
            again = false;
            for ex in EXCLUDE {
                for j in [0, 2] {
                    if ch[j] == ex || ch[j + 1] == ex {
                        ch[j] += 1;
                        ch[j + 1] -= 1;
                        again = true;
                    }
                }
            }
        }
        for (j, c) in ch.iter().enumerate() {
            asc[4 * j + i] = *c;
        }
    }
    let mut out = [0u8; 16];
    for (i, o) in out.iter_mut().enumerate() {
        *o = asc[(i + 15) % 16];
    }
    out
}

/// The `DATASUM` and `CHECKSUM` cards of an HDU whose header (the other cards, in order) is
/// `cards` and whose data (with its padding) sums to `datasum`: the two cards are put at the
/// end of `cards`, with CHECKSUM such that the whole HDU sums to -0.
///
/// # Errors
/// Never in practice (the cards are well formed); [`CardError`] for the type's sake.
pub fn add_checksum_cards(cards: &mut Vec<CardImage>, datasum: u32) -> Result<(), CardError> {
    cards.retain(|c| !matches!(card_keyword(c), "CHECKSUM" | "DATASUM"));
    cards.extend(format_card(
        "CHECKSUM",
        &CardValue::Str("0000000000000000".into()),
        Some("HDU checksum"),
    )?);
    cards.extend(format_card(
        "DATASUM",
        &CardValue::Str(datasum.to_string()),
        Some("data unit checksum"),
    )?);
    let sum = ones_add(ones_sum(&header_bytes(cards), 0), datasum);
    let code = encode_checksum(!sum);
    let at = cards.len() - 2;
    cards[at][11..27].copy_from_slice(&code);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cards_are_formatted_as_fits_fixed_format() {
        let c = format_card("BITPIX", &CardValue::Int(-32), Some("array data type")).unwrap();
        assert_eq!(
            std::str::from_utf8(&c[0]).unwrap().trim_end(),
            "BITPIX  =                  -32 / array data type"
        );
        let c = format_card("EXTNAME", &CardValue::Str("SCI".into()), None).unwrap();
        assert_eq!(std::str::from_utf8(&c[0]).unwrap().trim_end(), "EXTNAME = 'SCI     '");
        let c = format_card("X", &CardValue::Str("it's".into()), None).unwrap();
        assert_eq!(std::str::from_utf8(&c[0]).unwrap().trim_end(), "X       = 'it''s   '");
        let c = format_card("SIMPLE", &CardValue::Logical(true), None).unwrap();
        assert_eq!(&c[0][..30], b"SIMPLE  =                    T");
        let c = format_card("R", &CardValue::Real(1e-30), None).unwrap();
        assert!(std::str::from_utf8(&c[0]).unwrap().contains("1.0E-30"));
        let c = format_card("R", &CardValue::Real(3.0), None).unwrap();
        assert!(std::str::from_utf8(&c[0]).unwrap().contains(" 3.0"));
        assert!(format_card("lower", &CardValue::Int(1), None).is_err());
        assert!(format_card("R", &CardValue::Real(f64::NAN), None).is_err());
        let long: String = "abcdefghij".repeat(20);
        let c = format_card("LONG", &CardValue::Str(long.clone()), Some("c")).unwrap();
        assert_eq!(c.len(), 3);
        assert!(c[1].starts_with(b"CONTINUE  '"));
        let joined: String = c
            .iter()
            .map(|c| {
                let s = std::str::from_utf8(c).unwrap();
                let start = s.find('\'').unwrap() + 1;
                let end = s.rfind('\'').unwrap();
                s[start..end].trim_end_matches('&').to_owned()
            })
            .collect();
        assert_eq!(joined, long);
        let c = format_card("HISTORY", &CardValue::None, Some(&"h".repeat(100))).unwrap();
        assert_eq!(c.len(), 2);
    }

    #[test]
    fn headers_end_and_pad_to_blocks() {
        let h = header_bytes(&[raw_card("SIMPLE  =                    T").unwrap()]);
        assert_eq!(h.len(), 2880);
        assert_eq!(&h[80..83], b"END");
        assert_eq!(split_cards(&h).len(), 1);
    }

    #[test]
    fn a_checksummed_hdu_sums_to_minus_zero() {
        let mut cards = vec![
            raw_card("XTENSION= 'IMAGE   '").unwrap(),
            raw_card("BITPIX  =                    8").unwrap(),
        ];
        let data: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut padded = data.clone();
        padded.resize(data.len() + data_padding(data.len() as u64), 0);
        let datasum = ones_sum(&padded, 0);
        add_checksum_cards(&mut cards, datasum).unwrap();
        let total = ones_add(ones_sum(&header_bytes(&cards), 0), datasum);
        assert_eq!(total, u32::MAX);
        // Every character is a digit or a letter.
        let code = &cards[2][11..27];
        assert!(
            code.iter().all(u8::is_ascii_alphanumeric),
            "{:?}",
            std::str::from_utf8(code)
        );
    }

    #[test]
    fn ones_sum_wraps_the_carry_around() {
        assert_eq!(ones_sum(&[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 2], 0), 2);
        assert_eq!(ones_add(0xffff_fffe, 3), 2);
    }
}
