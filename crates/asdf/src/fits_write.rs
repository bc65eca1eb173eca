//! Writing FITS: an ASDF file embedded in FITS as JWST's pipelines write it (Standard 1.6.0,
//! Appendix A, and stdatamodels' layout), a FITS file described by a `fits/fits-*` node, and
//! the `_fits` node that carries a FITS file's headers through a conversion to plain ASDF.
//!
//! Arrays of numeric types become IMAGE HDUs, big-endian, their ndarrays' sources rewritten to
//! `fits:EXTNAME,EXTVER`; the tree (with the arrays FITS cannot hold as blocks of its own)
//! goes last, into the one-row BINTABLE `ASDF` (column `ASDF_METADATA`), or the appendix's
//! IMAGE of bytes on request. Data is streamed: memory holds a piece of an array at a time
//! and the ASDF HDU. The file is written beside the target and renamed into place.

use std::collections::{HashMap, HashSet};
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use asdf_core_types::{ByteOrder, Datatype, ScalarType};
use asdf_fits::out::{self as fits_out, CardImage, CardValue};
use asdf_fits::{CardError, FitsError, Hdu, HduKind};
use asdf_yaml::{Anchor, Document, Node, NodeKind};
use sha2::Digest as _;

use crate::blocks::Piece;
use crate::error::Error;
use crate::file::{AsdfFile, BlockRef};
use crate::fits_source::AsdfHdu;
use crate::target::FitsWriteOptions;
use asdf_layout::atomic::{Dest, TempFile, destination};

/// The key of the root mapping that carries a FITS file's HDUs (headers card by card, data
/// as aliases of the tree's ndarrays) in an ASDF file converted from FITS, so that converting
/// back gives the same HDUs and headers. Untagged, in the shape of the `fits/fits-*` schemas
/// (a list of `{header, data}`), with each card as its 80-character text: real JWST headers
/// have values longer than those schemas' 60 characters and `CONTINUE` cards.
pub const FITS_KEY: &str = "_fits";

/// How an ndarray's datatype is stored in FITS: BITPIX, and BZERO when the values are kept
/// with their sign bit flipped (FITS's unsigned convention).
fn bitpix_of(t: ScalarType) -> Option<(i64, Option<&'static str>)> {
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

/// The data of an HDU written.
enum Data {
    None,
    /// An ndarray of the tree as an image.
    Image {
        pointer: String,
        scalar: ScalarType,
    },
    /// The bytes of the ndarray's block as the HDU's data (a table): records hold values,
    /// so the sign bits of FITS's unsigned convention are flipped back (`flips`); bytes
    /// (`uint8`) are taken as they are.
    ArrayRaw {
        pointer: String,
        flips: Option<asdf_fits::SignFlips>,
        len: u64,
    },
    /// Bytes of the FITS file read, as they are.
    FitsRaw {
        offset: u64,
        len: u64,
    },
    /// Bytes in memory.
    Bytes(Vec<u8>),
}

struct Planned {
    cards: Vec<CardImage>,
    data: Data,
    name: Option<String>,
    ver: i64,
}

/// An HDU of the file read or of a `fits` node: its cards, what they say, and which ndarray
/// of the tree holds its data.
struct Origin {
    cards: Vec<CardImage>,
    hdu: Hdu,
    taker: Option<String>,
    /// Its data as it is, when no ndarray takes it (an HDU of the FITS file read).
    raw: Option<(u64, u64)>,
    /// An ndarray named it when the file was opened.
    was_taken: bool,
}

fn card_err(hdu: usize) -> impl Fn(CardError) -> Error {
    move |source| Error::Fits {
        pointer: String::new(),
        source: FitsError::Card { hdu, source },
    }
}

fn describe(index: usize, cards: &[CardImage]) -> Result<Hdu, Error> {
    let parsed = cards.iter().filter_map(|c| asdf_fits::parse_card(c)).collect();
    asdf_fits::describe(index, 0, 0, parsed, u64::MAX).map_err(|source| Error::Fits {
        pointer: String::new(),
        source,
    })
}

/// The cards of a `header` list of a `fits` node: a card's text, or `[keyword, value,
/// comment]` as the `fits/fits-*` schemas have it.
fn node_cards(hdu: usize, header: &Node) -> Result<Vec<CardImage>, Error> {
    let err = card_err(hdu);
    let mut out = Vec::new();
    let items = header.as_sequence().map(|s| s.items.as_slice()).unwrap_or_default();
    for item in items {
        if let Some(text) = item.as_str() {
            out.push(fits_out::raw_card(text).map_err(&err)?);
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
            fits_out::format_card(keyword, &CardValue::None, Some(&t))
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
            fits_out::format_card(keyword, &value, comment.as_deref())
        };
        out.extend(cards.map_err(&err)?);
    }
    Ok(out)
}

fn scalar_text(n: &Node) -> String {
    n.as_scalar().map(|s| s.text.to_string()).unwrap_or_default()
}

/// An EXTNAME as FITS readers compare them: without case and without trailing blanks.
fn name_key(name: &str) -> String {
    name.trim_end().to_ascii_uppercase()
}

/// The EXTNAME of a new HDU for the ndarray at `pointer`: its key (the last one that is not
/// a sequence index), upper case.
fn derived_name(pointer: &str) -> String {
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
fn image_cards(
    hdu: usize,
    primary: bool,
    original: &[CardImage],
    scalar: ScalarType,
    shape: &[usize],
) -> Result<Vec<CardImage>, Error> {
    let err = card_err(hdu);
    let (bitpix, bzero) = bitpix_of(scalar).ok_or(Error::Usage("a datatype FITS images do not have"))?;
    let axes: Vec<u64> = shape.iter().rev().map(|&n| n as u64).collect();
    let kind = if primary { HduKind::Primary } else { HduKind::Image };
    let find = |keyword: &str| {
        original
            .iter()
            .find(|c| fits_out::card_keyword(c) == keyword)
            .and_then(|c| asdf_fits::parse_card(c).map(|(_, v)| (c, v)))
    };
    let mut out = Vec::new();
    for (keyword, value, comment) in fits_out::structural_cards(&kind, bitpix, &axes) {
        let same = find(&keyword).filter(|(_, v)| match &value {
            CardValue::Int(i) => v.trim().parse::<i64>().ok() == Some(*i),
            CardValue::Logical(b) => v.trim() == if *b { "T" } else { "F" },
            CardValue::Str(s) => v.trim() == s,
            _ => false,
        });
        match same {
            Some((card, _)) => out.push(*card),
            None => out.extend(
                fits_out::format_card(&keyword, &value, (!comment.is_empty()).then_some(comment)).map_err(&err)?,
            ),
        }
    }
    if let Some(zero) = bzero {
        out.push(fits_out::raw_card(&format!("BSCALE  = {:>20}", 1)).map_err(&err)?);
        out.push(fits_out::raw_card(&format!("BZERO   = {zero:>20}")).map_err(&err)?);
    }
    let float = bitpix < 0;
    let mut dropping = false;
    for c in original {
        let k = fits_out::card_keyword(c);
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

/// Big-endian bytes of one element.
trait Be: asdf_core_types::Scalar {
    fn put_be(self, out: &mut Vec<u8>);
}

macro_rules! be {
    ($($t:ty),*) => {$(
        impl Be for $t {
            fn put_be(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_be_bytes());
            }
        }
    )*};
}
be!(i8, u8, i16, u16, i32, u32, i64, u64, f32, f64);

/// How much data is handed to the output at a time.
const PIECE: usize = 1 << 20;

/// The output: a file, the running checksum of the current HDU's data.
struct Out<'w, W: Write + Seek> {
    w: &'w mut W,
    sum: u32,
    carry: Vec<u8>,
    len: u64,
}

impl<W: Write + Seek> Out<'_, W> {
    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.w.write_all(bytes)?;
        self.len += bytes.len() as u64;
        let mut b = bytes;
        if !self.carry.is_empty() {
            let take = (4 - self.carry.len()).min(b.len());
            self.carry.extend_from_slice(&b[..take]);
            b = &b[take..];
            if self.carry.len() == 4 {
                self.sum = fits_out::ones_sum(&self.carry, self.sum);
                self.carry.clear();
            }
        }
        let whole = b.len() / 4 * 4;
        self.sum = fits_out::ones_sum(&b[..whole], self.sum);
        self.carry.extend_from_slice(&b[whole..]);
        Ok(())
    }

    fn finish_data(&mut self) -> std::io::Result<u32> {
        let pad = fits_out::data_padding(self.len);
        self.put(&vec![0u8; pad])?;
        Ok(self.sum)
    }
}

impl AsdfFile {
    /// Writes this file as FITS at `path`, atomically: arrays of numeric types as IMAGE HDUs
    /// (big-endian; unsigned types under FITS's BZERO convention), the tree in the `ASDF` HDU
    /// with those arrays' sources `fits:EXTNAME,EXTVER` and `_fits_hash` (stdatamodels' hash of
    /// the other headers), as JWST's pipelines write it.
    ///
    /// A file read from FITS keeps its HDUs: their headers card for card (with BITPIX and
    /// NAXISn following the arrays), HDUs no ndarray names (tables) as they were, in their
    /// order. A tree with a [`FITS_KEY`] node (a conversion from FITS) takes its HDUs from it.
    /// Other arrays get new HDUs named after their key. Arrays FITS cannot hold (complex,
    /// float16, bool8, records, masked, zero-dimensional) stay blocks of the embedded file.
    ///
    /// # Errors
    /// Validation of the tree, cards that cannot be written, data that does not fit its
    /// header, block and I/O errors.
    ///
    /// Over the file's own path, the write holds an advisory lock on the file and first checks
    /// that no other writer changed it since it was opened ([`Error::Changed`] otherwise), as
    /// [`AsdfFile::write`] does.
    pub(crate) fn write_fits(&self, path: impl AsRef<Path>, options: &FitsWriteOptions) -> Result<(), Error> {
        let path = path.as_ref();
        let own = self.is_own_file(path);
        if let Some(pointer) = &options.node {
            let (plan, _) = self.plan_fits(options, Some(pointer))?;
            return self.write_plan_to(path, plan, None, options, !own);
        }
        let _lock = if own { Some(self.lock_unchanged(path)?) } else { None };
        let (plan, doc) = self.plan_fits(options, None)?;
        self.write_plan_to(path, plan, Some(doc), options, !own)
    }

    /// The bytes of [`AsdfFile::write`] (FITS)'s file.
    ///
    /// # Errors
    /// As [`AsdfFile::write`] (FITS).
    pub(crate) fn to_fits_bytes(&self, options: &FitsWriteOptions) -> Result<Vec<u8>, Error> {
        let (plan, doc) = self.plan_fits(options, options.node.as_deref())?;
        let doc = options.node.is_none().then_some(doc);
        let mut out = std::io::Cursor::new(Vec::new());
        self.write_plan(&mut out, plan, doc, options)?;
        Ok(out.into_inner())
    }

    /// Adds the [`FITS_KEY`] node to the tree of a file read from FITS: every HDU but the
    /// ASDF one, its header card for card and its data (an alias of the ndarray whose source
    /// names it; an image no ndarray names as a new ndarray; a table's bytes as a `uint8`
    /// ndarray), so that the file written as ASDF converts back to the same FITS file.
    /// Returns whether the file was read from FITS.
    ///
    /// # Errors
    /// Reading the FITS file's headers or tables.
    pub fn keep_fits_headers(&mut self) -> Result<bool, Error> {
        let Some(fits) = self.fits.clone() else {
            return Ok(false);
        };
        // The first ndarray naming each HDU.
        let mut takers: HashMap<usize, String> = HashMap::new();
        for (p, i) in self.fits_sources(&fits.hdus)? {
            takers.entry(i).or_insert(p);
        }
        let ndarray_tag = self.tag_for("core/ndarray")?;
        let mut entries = Vec::new();
        let mut raw_tables = Vec::new();
        for hdu in fits.data_hdus() {
            let cards = fits
                .header_cards(hdu)?
                .iter()
                .map(|c| Node::str(String::from_utf8_lossy(c).trim_end().to_owned()))
                .collect();
            let data = if let Some(p) = takers.get(&hdu.index) {
                let node = self.get_mut(p)?;
                if node.anchor.is_none() {
                    node.anchor = Some(Anchor::new(&format!("fits_hdu{}", hdu.index)));
                }
                Node {
                    kind: NodeKind::Alias(asdf_yaml::Alias::to(node).ok_or(Error::Usage("an ndarray without anchor"))?),
                    ..Node::null()
                }
            } else if hdu.data_len == 0 {
                Node::null()
            } else if matches!(hdu.kind, HduKind::Image | HduKind::Primary)
                && let Some(dt) = hdu.value_datatype()
            {
                let shape: Vec<usize> = hdu
                    .array_shape()
                    .iter()
                    .map(|&d| usize::try_from(d).unwrap_or(usize::MAX))
                    .collect();
                fits_ndarray(format!("fits:{}", hdu.index), dt, &shape).with_tag(ndarray_tag.clone())
            } else {
                raw_tables.push((entries.len(), hdu.index));
                Node::null()
            };
            entries.push(Node::map(vec![
                (Node::str("header"), Node::seq(cards)),
                (Node::str("data"), data),
            ]));
        }
        let root = self
            .doc_mut()?
            .root
            .as_mapping_mut()
            .ok_or(Error::Usage("a tree whose root is not a mapping"))?;
        root.remove(FITS_KEY);
        root.insert(FITS_KEY, Node::seq(entries));
        for (k, i) in raw_tables {
            let hdu = &fits.hdus[i];
            if hdu.data_len > self.options.layout_limits.max_block_bytes {
                return Err(Error::Layout(asdf_layout::Error::Limits(
                    asdf_layout::LimitError::BlockBytes {
                        block: i,
                        claimed: hdu.data_len,
                        limit: self.options.layout_limits.max_block_bytes,
                    },
                )));
            }
            let len = usize::try_from(hdu.data_len).map_err(|_| Error::Usage("a table larger than memory"))?;
            let bytes = fits
                .source
                .bytes_at(hdu.data_offset, len)
                .map_err(crate::fits_source::fits_io(hdu.data_offset))?;
            self.put_array(
                &format!("/{FITS_KEY}/{k}/data"),
                crate::NewArray::from_bytes(
                    Datatype::Scalar(ScalarType::UInt8),
                    &[len],
                    ByteOrder::Big,
                    bytes.into_owned(),
                ),
            )?;
        }
        self.doc_mut()?.relink();
        Ok(true)
    }

    /// The HDUs to write, and the tree of the ASDF HDU.
    fn plan_fits(
        &self,
        options: &FitsWriteOptions,
        standalone: Option<&str>,
    ) -> Result<(Vec<Planned>, Document), Error> {
        // Where the HDUs come from.
        let node_at = match standalone {
            Some(p) => Some(p.to_owned()),
            None => self
                .doc()?
                .root
                .get(FITS_KEY)
                .filter(|n| n.as_sequence().is_some())
                .map(|_| format!("/{FITS_KEY}")),
        };
        let mut origins = match &node_at {
            Some(p) => self.origins_from_node(p)?,
            None => self.origins_from_file()?,
        };
        let under = node_at.as_ref().map(|p| format!("{p}/"));
        // Which ndarray goes where.
        let fits_able = |p: &str| -> Option<(ScalarType, Vec<usize>)> {
            let a = self.array(p).ok()?;
            // An image holds every element: a view whose elements take more bytes than its
            // block holds (overlapping strides, `strides: [1, 1]` over 20000 x 20000) stays a
            // view of its block in the ASDF HDU, so the FITS file is never larger than what
            // the file read really holds.
            if let crate::Storage::Internal { block } = a.storage()
                && let (Ok(v), Ok(len)) = (a.view(), self.source().block(block).and_then(|b| b.data_len()))
                && (v.count() as u64).saturating_mul(v.datatype.size() as u64) > len
            {
                return None;
            }
            match a.datatype() {
                Datatype::Scalar(t)
                    if bitpix_of(*t).is_some() && !a.is_masked() && !a.shape().is_empty() && !a.is_empty() =>
                {
                    Some((*t, a.shape().to_vec()))
                }
                _ => None,
            }
        };
        let mut taken: HashSet<String> = origins.iter().filter_map(|o| o.taker.clone()).collect();
        if node_at.is_none()
            && let Some(fits) = &self.fits
        {
            let by_source: HashMap<String, usize> = self.fits_sources(&fits.hdus)?.into_iter().collect();
            let at: HashMap<usize, usize> = origins.iter().enumerate().map(|(k, o)| (o.hdu.index, k)).collect();
            let by_place: HashMap<&str, usize> = fits.origin.iter().map(|(p, i)| (p.as_str(), *i)).collect();
            for p in self.array_pointers()? {
                let Some(&i) = by_source.get(&p).or_else(|| by_place.get(p.as_str())) else {
                    continue;
                };
                let image = matches!(fits.hdus[i].kind, HduKind::Image | HduKind::Primary);
                if image && fits_able(&p).is_none() {
                    continue;
                }
                if let Some(o) = at
                    .get(&i)
                    .and_then(|&k| origins.get_mut(k))
                    .filter(|o| o.taker.is_none())
                {
                    o.taker = Some(p.clone());
                    taken.insert(p);
                }
            }
        }
        let mut plan: Vec<Planned> = Vec::new();
        let mut sources: Vec<(String, usize, bool)> = Vec::new();
        if origins.first().is_none_or(|o| o.hdu.kind != HduKind::Primary) {
            let cards = image_cards(0, true, &[], ScalarType::UInt8, &[])?;
            plan.push(Planned {
                cards,
                data: Data::None,
                name: None,
                ver: 1,
            });
        }
        for o in origins {
            let index = plan.len();
            let primary = index == 0;
            let (cards, data) = match (&o.taker, o.raw) {
                (Some(p), _) => match (fits_able(p), &o.hdu.kind) {
                    (Some((t, shape)), HduKind::Primary | HduKind::Image) => {
                        sources.push((p.clone(), index, true));
                        (
                            image_cards(index, primary, &o.cards, t, &shape)?,
                            Data::Image {
                                pointer: p.clone(),
                                scalar: t,
                            },
                        )
                    }
                    (_, HduKind::Primary | HduKind::Image) => {
                        return Err(Error::Fits {
                            pointer: p.clone(),
                            source: FitsError::NoAsdf("an image HDU's data must be an ndarray of a numeric datatype"),
                        });
                    }
                    _ => {
                        sources.push((p.clone(), index, false));
                        (strip_checksums(&o.cards), self.table_data(p, &o.hdu, index)?)
                    }
                },
                (None, Some((offset, len))) if !o.was_taken => {
                    (strip_checksums(&o.cards), Data::FitsRaw { offset, len })
                }
                (None, Some(_)) => continue,
                (None, None) => {
                    if o.hdu.data_len != 0 {
                        return Err(Error::Fits {
                            pointer: String::new(),
                            source: FitsError::DataLength {
                                hdu: index,
                                header: o.hdu.data_len,
                                data: 0,
                            },
                        });
                    }
                    (strip_checksums(&o.cards), Data::None)
                }
            };
            plan.push(Planned {
                cards,
                data,
                name: o.hdu.name.clone(),
                ver: o.hdu.ver,
            });
        }
        // New HDUs for the other arrays; EXTVER counts the HDUs of a name (without case).
        if standalone.is_none() {
            let mut named: HashMap<String, i64> = HashMap::new();
            for h in &plan {
                if let Some(n) = &h.name {
                    *named.entry(name_key(n)).or_default() += 1;
                }
            }
            for p in self.array_pointers()? {
                if taken.contains(&p) || under.as_ref().is_some_and(|u| p.starts_with(u.as_str())) {
                    continue;
                }
                let Some((t, shape)) = fits_able(&p) else { continue };
                let index = plan.len();
                let name = options
                    .names
                    .iter()
                    .find(|(q, _)| *q == p)
                    .map_or_else(|| derived_name(&p), |(_, n)| n.clone());
                let seen = named.entry(name_key(&name)).or_default();
                *seen += 1;
                let ver = *seen;
                let mut cards = image_cards(index, false, &[], t, &shape)?;
                cards.extend(
                    fits_out::format_card("EXTNAME", &CardValue::Str(name.clone()), Some("extension name"))
                        .map_err(card_err(index))?,
                );
                if ver > 1 {
                    cards.extend(
                        fits_out::format_card("EXTVER", &CardValue::Int(ver), Some("extension value"))
                            .map_err(card_err(index))?,
                    );
                }
                sources.push((p.clone(), index, true));
                plan.push(Planned {
                    cards,
                    data: Data::Image { pointer: p, scalar: t },
                    name: Some(name),
                    ver,
                });
            }
        }
        // The tree of the ASDF HDU: arrays in HDUs point at them.
        let mut doc = self.doc()?.clone();
        if standalone.is_none() {
            if let Some(m) = doc.root.as_mapping_mut() {
                m.remove(FITS_KEY);
            }
            let mut pairs: HashMap<(String, i64), usize> = HashMap::new();
            for h in &plan {
                if let Some(n) = &h.name {
                    *pairs.entry((name_key(n), h.ver)).or_default() += 1;
                }
            }
            let unique = |name: &str, ver: i64| pairs.get(&(name_key(name), ver)) == Some(&1);
            for (p, index, image) in &sources {
                if under.as_ref().is_some_and(|u| p.starts_with(u.as_str())) {
                    // An HDU's data inside the fits node itself: gone with the node.
                    continue;
                }
                let h = &plan[*index];
                let source = match &h.name {
                    Some(n) if unique(n, h.ver) && !n.contains('\'') => format!("fits:{n},{}", h.ver),
                    _ => format!("fits:{index}"),
                };
                let node = asdf_yaml::pointer::get_mut(&mut doc, p).map_err(|e| crate::error::pointer_error(p, e))?;
                if !image {
                    // A table: only where its data is changes.
                    if let Some(m) = node.as_mapping_mut() {
                        m.insert("source", Node::str(source));
                    }
                    continue;
                }
                let a = self.array(p)?;
                let tag = node.tag.clone();
                *node = fits_ndarray(source, &a.datatype().to_string(), a.shape());
                node.tag = tag;
            }
            doc.relink();
        }
        Ok((plan, doc))
    }

    /// The HDUs of the FITS file this file was read from (the ASDF HDU left out).
    fn origins_from_file(&self) -> Result<Vec<Origin>, Error> {
        let Some(fits) = &self.fits else {
            return Ok(Vec::new());
        };
        let named: HashSet<usize> = fits.origin.iter().map(|(_, i)| *i).collect();
        let mut out = Vec::new();
        for hdu in fits.data_hdus() {
            out.push(Origin {
                cards: fits.header_cards(hdu)?,
                hdu: hdu.clone(),
                taker: None,
                raw: Some((hdu.data_offset, hdu.data_len)),
                was_taken: named.contains(&hdu.index),
            });
        }
        Ok(out)
    }

    /// The HDUs a `fits` node (or the [`FITS_KEY`] node) at `pointer` describes.
    fn origins_from_node(&self, pointer: &str) -> Result<Vec<Origin>, Error> {
        let node = self.get(pointer)?;
        let items = node
            .as_sequence()
            .ok_or(Error::Usage("a fits node is a list of HDUs"))?
            .items
            .as_slice();
        let mut out = Vec::new();
        for (k, entry) in items.iter().enumerate() {
            let entry = self.doc()?.resolve(entry);
            let header = entry
                .get("header")
                .ok_or(Error::Usage("an HDU of a fits node without header"))?;
            let cards = node_cards(k, self.doc()?.resolve(header))?;
            let hdu = describe(k, &cards)?;
            let taker = match entry.get("data") {
                Some(Node {
                    kind: NodeKind::Alias(a),
                    ..
                }) => {
                    let doc = self.doc()?;
                    doc.anchored(a)
                        .map(|(path, _)| asdf_yaml::pointer::pointer_of(&doc.root, &path))
                }
                Some(n) if n.tag.as_deref().is_some_and(asdf_core_types::is_ndarray_tag) => {
                    Some(format!("{pointer}/{k}/data"))
                }
                _ => None,
            };
            out.push(Origin {
                cards,
                hdu,
                taker,
                raw: None,
                was_taken: false,
            });
        }
        Ok(out)
    }

    fn write_plan_to(
        &self,
        path: &Path,
        plan: Vec<Planned>,
        doc: Option<Document>,
        options: &FitsWriteOptions,
        release_old: bool,
    ) -> Result<(), Error> {
        let path = match destination(path) {
            Dest::InPlace => {
                let mut out = std::io::Cursor::new(Vec::new());
                self.write_plan(&mut out, plan, doc, options)?;
                let bytes = out.into_inner();
                return crate::write_atomically(path, |w| w.write_all(&bytes));
            }
            Dest::Atomic(p) => p,
        };
        let (tmp, f) = TempFile::create(&path)?;
        if release_old {
            tmp.release_replaced();
        }
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        self.write_plan(&mut w, plan, doc, options).map_err(|e| match e {
            // Output errors name the file being written.
            Error::Io { path, source } if path.as_os_str().is_empty() => tmp.error(source).into(),
            e => e,
        })?;
        let f = w.into_inner().map_err(|e| tmp.error(e.into_error()))?;
        Ok(tmp.commit(f, options.asdf.durable)?)
    }

    fn write_plan<W: Write + Seek>(
        &self,
        w: &mut W,
        plan: Vec<Planned>,
        doc: Option<Document>,
        options: &FitsWriteOptions,
    ) -> Result<(), Error> {
        let mut hash = sha2::Sha256::new();
        let mut kept: HashSet<String> = HashSet::new();
        for h in &plan {
            if let Data::Image { pointer, .. } | Data::ArrayRaw { pointer, .. } = &h.data {
                kept.insert(pointer.clone());
            }
        }
        let count = plan.len();
        for (index, h) in plan.into_iter().enumerate() {
            let header = self.write_hdu(w, index, h.cards, &h.data, options.checksums)?;
            hash.update(&header);
            if let Some(p) = &options.asdf.progress {
                (p.0)(index + 1, count + 1);
            }
        }
        let Some(mut doc) = doc else {
            return w.flush().map_err(out_io);
        };
        let digest: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
        if let Some(m) = doc.root.as_mapping_mut() {
            m.remove("_fits_hash");
            m.insert("_fits_hash", Node::str(digest));
        }
        let mut asdf_opts = options.asdf.clone();
        asdf_opts.progress = None;
        // The blocks of the arrays now in HDUs are not copied into the ASDF HDU as well.
        let moved: HashSet<usize> = kept
            .iter()
            .filter_map(|p| match self.array(p).ok()?.storage() {
                crate::Storage::Internal { block } if block < self.reader.block_count() => Some(block),
                _ => None,
            })
            .collect();
        let kept = crate::write::KeptOut {
            sources: kept,
            blocks: moved,
        };
        let mut bytes = std::io::Cursor::new(Vec::new());
        self.write_doc_into(&doc, &mut bytes, &asdf_opts, &kept)?;
        let bytes = bytes.into_inner();
        let n = bytes.len();
        let index = count;
        let err = card_err(index);
        let mut cards = Vec::new();
        let mut card = |k: &str, v: CardValue, c: &str| -> Result<(), Error> {
            cards.extend(fits_out::format_card(k, &v, (!c.is_empty()).then_some(c)).map_err(&err)?);
            Ok(())
        };
        let n64 = i64::try_from(n).unwrap_or(i64::MAX);
        match options.asdf_hdu {
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
        self.write_hdu(w, index, cards, &Data::Bytes(bytes), options.checksums)?;
        if let Some(p) = &options.asdf.progress {
            (p.0)(count + 1, count + 1);
        }
        w.flush().map_err(out_io)
    }

    /// Writes one HDU (header, data, padding; CHECKSUM/DATASUM filled in afterwards when
    /// asked) and returns its header as written.
    fn write_hdu<W: Write + Seek>(
        &self,
        w: &mut W,
        index: usize,
        mut cards: Vec<CardImage>,
        data: &Data,
        checksums: bool,
    ) -> Result<Vec<u8>, Error> {
        let start = w.stream_position().map_err(out_io)?;
        if checksums {
            fits_out::add_checksum_cards(&mut cards, 0).map_err(card_err(index))?;
        }
        let header = fits_out::header_bytes(&cards);
        w.write_all(&header).map_err(out_io)?;
        let mut out = Out {
            w,
            sum: 0,
            carry: Vec::new(),
            len: 0,
        };
        self.write_data(&mut out, data)?;
        let datasum = out.finish_data().map_err(out_io)?;
        if !checksums {
            return Ok(header);
        }
        fits_out::add_checksum_cards(&mut cards, datasum).map_err(card_err(index))?;
        let header = fits_out::header_bytes(&cards);
        let end = w.stream_position().map_err(out_io)?;
        w.seek(SeekFrom::Start(start)).map_err(out_io)?;
        w.write_all(&header).map_err(out_io)?;
        w.seek(SeekFrom::Start(end)).map_err(out_io)?;
        Ok(header)
    }

    fn write_data<W: Write + Seek>(&self, out: &mut Out<'_, W>, data: &Data) -> Result<(), Error> {
        match data {
            Data::None => Ok(()),
            Data::Bytes(b) => out.put(b).map_err(out_io),
            Data::FitsRaw { offset, len } => self.copy_fits(out, *offset, *len),
            Data::ArrayRaw { pointer, flips, len } => {
                let mut bytes = self.array_bytes(pointer)?;
                let n = usize::try_from(*len).unwrap_or(usize::MAX).min(bytes.len());
                if let Some(f) = flips {
                    f.apply(&mut bytes, 0);
                }
                out.put(&bytes[..n]).map_err(out_io)
            }
            Data::Image { pointer, scalar } => {
                let flip = bitpix_of(*scalar).is_some_and(|(_, z)| z.is_some());
                // An image read from FITS and written under the same convention: its stored
                // bytes are the bytes to write.
                if let Some(fits) = &self.fits {
                    let nd = self.ndarray_at(pointer)?;
                    if let Ok((view, BlockRef::Fits(i))) = self.view_of(&nd, pointer)
                        && view.is_c_contiguous()
                        && view.byteorder == ByteOrder::Big
                        && fits.hdus[i].value_datatype() == Some(scalar.name())
                    {
                        let r = view.byte_range();
                        if r.end <= fits.hdus[i].data_len {
                            return self.copy_fits(out, fits.hdus[i].data_offset + r.start, r.end - r.start);
                        }
                    }
                }
                self.stream_be(out, pointer, *scalar, flip)
            }
        }
    }

    /// The data of a table HDU from the ndarray at `pointer` (its records or bytes): the
    /// FITS file's bytes when the ndarray is still all of an HDU read, else the ndarray's.
    fn table_data(&self, pointer: &str, hdu: &Hdu, index: usize) -> Result<Data, Error> {
        let nd = self.ndarray_at(pointer)?;
        let (view, at) = self.view_of(&nd, pointer)?;
        if let (BlockRef::Fits(i), Some(fits)) = (&at, &self.fits) {
            let src = &fits.hdus[*i];
            if view.is_c_contiguous() && view.byte_range() == (0..src.data_len) && src.data_len == hdu.data_len {
                return Ok(Data::FitsRaw {
                    offset: src.data_offset,
                    len: src.data_len,
                });
            }
        }
        let wrong = |data: u64| Error::Fits {
            pointer: pointer.to_owned(),
            source: FitsError::DataLength {
                hdu: index,
                header: hdu.data_len,
                data,
            },
        };
        if !view.is_c_contiguous() {
            return Err(wrong(0));
        }
        let len = view.byte_range().end - view.byte_range().start;
        // The header may describe a heap after the rows: the rows are what the ndarray has.
        if len > hdu.data_len || (len != hdu.data_len && hdu.int("PCOUNT").unwrap_or(0) == 0) {
            return Err(wrong(len));
        }
        let flips = match &view.datatype {
            Datatype::Structured(fields) => {
                if fields
                    .iter()
                    .any(|f| f.byteorder == Some(ByteOrder::Little) && f.datatype.size() > 1)
                {
                    return Err(Error::Fits {
                        pointer: pointer.to_owned(),
                        source: FitsError::NoAsdf("a table's records must be big-endian to be FITS data"),
                    });
                }
                hdu.sign_flips().map_err(|source| Error::Fits {
                    pointer: pointer.to_owned(),
                    source,
                })?
            }
            _ => None,
        };
        Ok(Data::ArrayRaw {
            pointer: pointer.to_owned(),
            flips,
            len,
        })
    }

    /// The bytes of the block-backed ndarray at `pointer` (a contiguous view).
    fn array_bytes(&self, pointer: &str) -> Result<Vec<u8>, Error> {
        let nd = self.ndarray_at(pointer)?;
        let (view, at) = self.view_of(&nd, pointer)?;
        let r = view.byte_range();
        let (s, e) = (
            usize::try_from(r.start).unwrap_or(usize::MAX),
            usize::try_from(r.end).unwrap_or(usize::MAX),
        );
        let whole = self.block_data(at, pointer)?;
        whole
            .get(s..e)
            .map(<[u8]>::to_vec)
            .ok_or(Error::Usage("a view outside its block"))
    }

    /// Copies `len` bytes of the FITS file read from `offset`, a piece at a time.
    fn copy_fits<W: Write + Seek>(&self, out: &mut Out<'_, W>, offset: u64, len: u64) -> Result<(), Error> {
        let Some(fits) = &self.fits else {
            return Err(Error::Usage("FITS data asked of a file that is not FITS"));
        };
        let mut at = 0u64;
        while at < len {
            let n = usize::try_from((len - at).min(PIECE as u64)).unwrap_or(PIECE);
            let bytes = fits
                .source
                .bytes_at(offset + at, n)
                .map_err(crate::fits_source::fits_io(offset + at))?;
            out.put(&bytes).map_err(out_io)?;
            at += n as u64;
        }
        Ok(())
    }

    fn stream_be<W: Write + Seek>(
        &self,
        out: &mut Out<'_, W>,
        pointer: &str,
        scalar: ScalarType,
        flip: bool,
    ) -> Result<(), Error> {
        match scalar {
            ScalarType::Int8 => self.stream_typed::<i8, W>(out, pointer, flip),
            ScalarType::UInt8 => self.stream_typed::<u8, W>(out, pointer, flip),
            ScalarType::Int16 => self.stream_typed::<i16, W>(out, pointer, flip),
            ScalarType::UInt16 => self.stream_typed::<u16, W>(out, pointer, flip),
            ScalarType::Int32 => self.stream_typed::<i32, W>(out, pointer, flip),
            ScalarType::UInt32 => self.stream_typed::<u32, W>(out, pointer, flip),
            ScalarType::Int64 => self.stream_typed::<i64, W>(out, pointer, flip),
            ScalarType::UInt64 => self.stream_typed::<u64, W>(out, pointer, flip),
            ScalarType::Float32 => self.stream_typed::<f32, W>(out, pointer, flip),
            ScalarType::Float64 => self.stream_typed::<f64, W>(out, pointer, flip),
            _ => Err(Error::Usage("a datatype FITS images do not have")),
        }
    }

    /// The elements of the ndarray at `pointer`, big-endian (sign bits flipped for FITS's
    /// unsigned convention when `flip`), a piece at a time.
    fn stream_typed<T: Be, W: Write + Seek>(
        &self,
        out: &mut Out<'_, W>,
        pointer: &str,
        flip: bool,
    ) -> Result<(), Error> {
        let size = std::mem::size_of::<T>();
        let mut buf: Vec<u8> = Vec::with_capacity(PIECE + 64);
        let mut failed: Option<std::io::Error> = None;
        let mut flush = |buf: &mut Vec<u8>, failed: &mut Option<std::io::Error>| {
            if flip {
                for i in (0..buf.len()).step_by(size) {
                    buf[i] ^= 0x80;
                }
            }
            if failed.is_none()
                && let Err(e) = out.put(buf)
            {
                *failed = Some(e);
            }
            buf.clear();
        };
        self.array(pointer)?.pieces::<T>(&mut |piece| {
            if failed.is_some() {
                return;
            }
            match piece {
                Piece::Bytes(b, order) => {
                    for part in b.chunks(PIECE) {
                        if order == ByteOrder::Big {
                            buf.extend_from_slice(part);
                        } else {
                            for c in part.chunks_exact(size) {
                                buf.extend(c.iter().rev());
                            }
                        }
                        if buf.len() >= PIECE {
                            flush(&mut buf, &mut failed);
                        }
                    }
                }
                Piece::One(x) => {
                    x.put_be(&mut buf);
                    if buf.len() >= PIECE {
                        flush(&mut buf, &mut failed);
                    }
                }
            }
        })?;
        flush(&mut buf, &mut failed);
        match failed {
            Some(e) => Err(out_io(e)),
            None => Ok(()),
        }
    }
}

/// An ndarray node (untagged) whose data is FITS data: big-endian, at `source`.
fn fits_ndarray(source: String, datatype: &str, shape: &[usize]) -> Node {
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

/// An error writing the FITS file (named by [`AsdfFile::write`] (FITS) when it has a path).
fn out_io(source: std::io::Error) -> Error {
    Error::Io {
        path: std::path::PathBuf::new(),
        source,
    }
}

/// `cards` without CHECKSUM and DATASUM (they would no longer hold).
fn strip_checksums(cards: &[CardImage]) -> Vec<CardImage> {
    cards
        .iter()
        .filter(|c| !matches!(fits_out::card_keyword(c), "CHECKSUM" | "DATASUM"))
        .copied()
        .collect()
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
