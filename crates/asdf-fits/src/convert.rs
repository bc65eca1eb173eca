//! Writing an ASDF file as FITS: the file embedded as JWST's pipelines write it (Standard 1.6.0,
//! Appendix A, and stdatamodels' layout), a FITS file described by a `fits/fits-*` node, and the
//! HDUs carried by the [`FITS_KEY`] node of a conversion from FITS.
//!
//! Arrays of numeric types become IMAGE HDUs, big-endian, their ndarrays' sources rewritten to
//! `fits:EXTNAME,EXTVER`; the tree (with the arrays FITS cannot hold as blocks of its own) goes
//! last, into the one-row BINTABLE `ASDF` (column `ASDF_METADATA`), or the appendix's IMAGE of
//! bytes on request. Data is streamed: memory holds a piece of an array at a time and the ASDF
//! HDU. What the writer needs of the ASDF file (its tree, its arrays, its own bytes with a given
//! tree) is the [`Tree`] trait, which the facade implements.

use std::collections::{HashMap, HashSet};
use std::io::{Seek, Write};
use std::sync::Arc;

use asdf_core_types::{ByteOrder, Datatype, Piece, Scalar, ScalarType, View};
use asdf_layout::storage::{ArrayBytes, Storage, StorageError};
use asdf_yaml::{Document, Node, NodeKind};
use sha2::Digest as _;

use crate::file::{AsdfHdu, FitsFile};
use crate::out::{self as fits_out, CardImage, CardValue};
use crate::write::{
    DataOut, HduError, PIECE, asdf_hdu_cards, bitpix_of, derived_name, describe_cards, fits_ndarray, image_cards,
    name_key, node_cards, strip_checksums, write_hdu,
};
use crate::{FitsError, Hdu, HduKind};

/// The key of the root mapping that carries a FITS file's HDUs (headers card by card, data as
/// aliases of the tree's ndarrays) in an ASDF file converted from FITS, so that converting back
/// gives the same HDUs and headers. Untagged, in the shape of the `fits/fits-*` schemas (a list
/// of `{header, data}`), with each card as its 80-character text: real JWST headers have values
/// longer than those schemas' 60 characters and `CONTINUE` cards.
pub const FITS_KEY: &str = "_fits";

/// Where an array's bytes are: its view, and the storage it reads.
pub type Located<'a> = (View, Arc<dyn ArrayBytes<'a> + 'a>);

/// What the FITS writer learns of one array of the tree.
pub struct ArrayFacts<'a> {
    /// Its datatype.
    pub datatype: Datatype,
    /// Its shape.
    pub shape: Vec<usize>,
    /// Whether it has a mask (FITS images hold none).
    pub masked: bool,
    /// Its view and storage, when its data is not in the tree.
    pub located: Option<Located<'a>>,
}

/// What the FITS writer needs of the ASDF file it writes.
pub trait Tree {
    /// The file's errors.
    type Error;
    /// The tree.
    ///
    /// # Errors
    /// A tree that cannot be had (a lazy open whose tree fails to parse).
    fn doc(&self) -> Result<&Document, Self::Error>;
    /// The node at `pointer`.
    ///
    /// # Errors
    /// No node there.
    fn get(&self, pointer: &str) -> Result<&Node, Self::Error>;
    /// The FITS file the ASDF file was read from, if it was.
    fn fits(&self) -> Option<&FitsFile>;
    /// The pointers of the tree's arrays, in document order.
    ///
    /// # Errors
    /// As [`Tree::doc`].
    fn array_pointers(&self) -> Result<Vec<String>, Self::Error>;
    /// The array at `pointer` (an error where there is none or it cannot be read).
    ///
    /// # Errors
    /// No array at `pointer`, or one that cannot be read.
    fn array(&self, pointer: &str) -> Result<ArrayFacts<'_>, Self::Error>;
    /// The view and storage of the ndarray at `pointer` (an error where its data is in the
    /// tree).
    ///
    /// # Errors
    /// As [`Tree::array`], and an ndarray without a block.
    fn located(&self, pointer: &str) -> Result<Located<'_>, Self::Error>;
    /// The ndarrays whose `fits:` source names an HDU of the FITS file read, with the HDU's
    /// index, in document order.
    ///
    /// # Errors
    /// As [`Tree::doc`].
    fn fits_sources(&self) -> Result<Vec<(String, usize)>, Self::Error>;
    /// Hands `g` the elements of the array at `pointer` as `T`, in C order.
    ///
    /// # Errors
    /// Reading or decoding the array.
    fn pieces<T: Scalar>(&self, pointer: &str, g: &mut dyn FnMut(Piece<'_, T>)) -> Result<(), Self::Error>;
    /// The bytes of the ASDF file with the tree `doc`, where the arrays at `in_hdus` are in
    /// HDUs now: their `fits:` sources are written as they are and their blocks not copied.
    ///
    /// # Errors
    /// Validation and block errors of the ASDF write.
    fn asdf_bytes(&self, doc: &Document, in_hdus: &HashSet<String>) -> Result<Vec<u8>, Self::Error>;
}

/// How the FITS file is written.
#[derive(Clone, Copy)]
pub struct Settings<'a> {
    /// `CHECKSUM` and `DATASUM` cards in every HDU.
    pub checksums: bool,
    /// The form of the ASDF HDU.
    pub asdf_hdu: AsdfHdu,
    /// EXTNAMEs chosen for arrays (pointer, name); others are derived from their key.
    pub names: &'a [(String, String)],
    /// `Some`: the `fits` node at this pointer is written as a FITS file of its own.
    pub node: Option<&'a str>,
    /// Called with (HDUs written, HDUs in all).
    pub progress: Option<&'a (dyn Fn(usize, usize) + Send + Sync)>,
}

impl std::fmt::Debug for ArrayFacts<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArrayFacts")
            .field("datatype", &self.datatype)
            .field("shape", &self.shape)
            .field("masked", &self.masked)
            .field("located", &self.located.as_ref().map(|(v, at)| (v, at.storage())))
            .finish()
    }
}

impl std::fmt::Debug for Settings<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("checksums", &self.checksums)
            .field("asdf_hdu", &self.asdf_hdu)
            .field("names", &self.names)
            .field("node", &self.node)
            .finish_non_exhaustive()
    }
}

/// Why a FITS file could not be written.
#[derive(Debug)]
pub enum ConvertError<E> {
    /// A FITS structure that cannot be written (at the ndarray `pointer`, or none: empty).
    Fits {
        /// The ndarray concerned.
        pointer: String,
        /// What is wrong.
        source: FitsError,
    },
    /// Reading the storage of the ndarray at `pointer`.
    Storage {
        /// The ndarray.
        pointer: String,
        /// What failed.
        source: StorageError,
    },
    /// Writing the output.
    Output(std::io::Error),
    /// A tree or a request the writer cannot follow.
    Usage(&'static str),
    /// The ASDF file's own error.
    Tree(E),
}

impl<E> From<E> for ConvertError<E> {
    fn from(e: E) -> Self {
        Self::Tree(e)
    }
}

/// An error of the FITS file read or written, at no ndarray.
fn at_file<E>(source: FitsError) -> ConvertError<E> {
    ConvertError::Fits {
        pointer: String::new(),
        source,
    }
}

/// An I/O error reading the FITS file read at `offset`.
fn read_io<E>(offset: u64) -> impl Fn(std::io::Error) -> ConvertError<E> {
    move |e| at_file(crate::file::io(offset)(e))
}

/// The data of an HDU written.
#[derive(Debug)]
enum Data {
    None,
    /// An ndarray of the tree as an image.
    Image {
        pointer: String,
        scalar: ScalarType,
    },
    /// The bytes of the ndarray's block as the HDU's data (a table): records hold values, so
    /// the sign bits of FITS's unsigned convention are flipped back (`flips`); bytes (`uint8`)
    /// are taken as they are.
    ArrayRaw {
        pointer: String,
        flips: Option<crate::SignFlips>,
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

/// One HDU to write.
#[derive(Debug)]
struct Planned {
    cards: Vec<CardImage>,
    data: Data,
    name: Option<String>,
    ver: i64,
}

/// The HDUs to write and the tree of the ASDF HDU (none for a `fits` node written alone).
#[derive(Debug)]
pub struct Plan {
    hdus: Vec<Planned>,
    doc: Option<Document>,
}

/// An HDU of the file read or of a `fits` node: its cards, what they say, and which ndarray of
/// the tree holds its data.
struct Origin {
    cards: Vec<CardImage>,
    hdu: Hdu,
    taker: Option<String>,
    /// Its data as it is, when no ndarray takes it (an HDU of the FITS file read).
    raw: Option<(u64, u64)>,
    /// An ndarray named it when the file was opened.
    was_taken: bool,
}

/// Big-endian bytes of one element.
trait Be: Scalar {
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

/// The numeric type and shape of the array at `pointer` when an IMAGE HDU can hold it.
fn fits_able<T: Tree>(tree: &T, p: &str) -> Option<(ScalarType, Vec<usize>)> {
    let a = tree.array(p).ok()?;
    // An image holds every element: a view whose elements take more bytes than its storage
    // holds (overlapping strides, `strides: [1, 1]` over 20000 x 20000) stays a view in the
    // ASDF HDU, so the FITS file is never larger than what the file read really holds.
    if let Some((v, at)) = &a.located
        && let Ok(len) = at.len()
        && (v.count() as u64).saturating_mul(v.datatype.size() as u64) > len
    {
        return None;
    }
    match a.datatype {
        Datatype::Scalar(t) if bitpix_of(t).is_some() && !a.masked && !a.shape.is_empty() && !a.shape.contains(&0) => {
            Some((t, a.shape))
        }
        _ => None,
    }
}

/// The HDUs to write, and the tree of the ASDF HDU.
///
/// # Errors
/// Cards that cannot be written, image HDUs whose data is no numeric ndarray, tables whose
/// data does not fit their header, and the tree's errors.
pub fn plan<T: Tree>(tree: &T, settings: &Settings<'_>) -> Result<Plan, ConvertError<T::Error>> {
    let standalone = settings.node;
    // Where the HDUs come from.
    let node_at = match standalone {
        Some(p) => Some(p.to_owned()),
        None => tree
            .doc()?
            .root
            .get(FITS_KEY)
            .filter(|n| n.as_sequence().is_some())
            .map(|_| format!("/{FITS_KEY}")),
    };
    let mut origins = match &node_at {
        Some(p) => origins_from_node(tree, p)?,
        None => origins_from_file(tree)?,
    };
    let under = node_at.as_ref().map(|p| format!("{p}/"));
    let mut taken: HashSet<String> = origins.iter().filter_map(|o| o.taker.clone()).collect();
    if node_at.is_none()
        && let Some(fits) = tree.fits()
    {
        let by_source: HashMap<String, usize> = tree.fits_sources()?.into_iter().collect();
        let at: HashMap<usize, usize> = origins.iter().enumerate().map(|(k, o)| (o.hdu.index, k)).collect();
        let by_place: HashMap<&str, usize> = fits.origin.iter().map(|(p, i)| (p.as_str(), *i)).collect();
        for p in tree.array_pointers()? {
            let Some(&i) = by_source.get(&p).or_else(|| by_place.get(p.as_str())) else {
                continue;
            };
            let image = matches!(fits.hdus[i].kind, HduKind::Image | HduKind::Primary);
            if image && fits_able(tree, &p).is_none() {
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
        let cards = image_cards(0, true, &[], ScalarType::UInt8, &[]).map_err(at_file)?;
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
            (Some(p), _) => match (fits_able(tree, p), &o.hdu.kind) {
                (Some((t, shape)), HduKind::Primary | HduKind::Image) => {
                    sources.push((p.clone(), index, true));
                    (
                        image_cards(index, primary, &o.cards, t, &shape).map_err(at_file)?,
                        Data::Image {
                            pointer: p.clone(),
                            scalar: t,
                        },
                    )
                }
                (_, HduKind::Primary | HduKind::Image) => {
                    return Err(ConvertError::Fits {
                        pointer: p.clone(),
                        source: FitsError::NoAsdf("an image HDU's data must be an ndarray of a numeric datatype"),
                    });
                }
                _ => {
                    sources.push((p.clone(), index, false));
                    (strip_checksums(&o.cards), table_data(tree, p, &o.hdu, index)?)
                }
            },
            (None, Some((offset, len))) if !o.was_taken => (strip_checksums(&o.cards), Data::FitsRaw { offset, len }),
            (None, Some(_)) => continue,
            (None, None) => {
                if o.hdu.data_len != 0 {
                    return Err(at_file(FitsError::DataLength {
                        hdu: index,
                        header: o.hdu.data_len,
                        data: 0,
                    }));
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
        for p in tree.array_pointers()? {
            if taken.contains(&p) || under.as_ref().is_some_and(|u| p.starts_with(u.as_str())) {
                continue;
            }
            let Some((t, shape)) = fits_able(tree, &p) else {
                continue;
            };
            let index = plan.len();
            let name = settings
                .names
                .iter()
                .find(|(q, _)| *q == p)
                .map_or_else(|| derived_name(&p), |(_, n)| n.clone());
            let seen = named.entry(name_key(&name)).or_default();
            *seen += 1;
            let ver = *seen;
            let card = |key: &str, value: CardValue, comment: &str| {
                fits_out::format_card(key, &value, Some(comment))
                    .map_err(|source| at_file(FitsError::Card { hdu: index, source }))
            };
            let mut cards = image_cards(index, false, &[], t, &shape).map_err(at_file)?;
            cards.extend(card("EXTNAME", CardValue::Str(name.clone()), "extension name")?);
            if ver > 1 {
                cards.extend(card("EXTVER", CardValue::Int(ver), "extension value")?);
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
    if standalone.is_some() {
        return Ok(Plan { hdus: plan, doc: None });
    }
    // The tree of the ASDF HDU: arrays in HDUs point at them.
    let mut doc = tree.doc()?.clone();
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
        let node = asdf_yaml::pointer::get_mut(&mut doc, p)
            .map_err(|_| ConvertError::Usage("an array the tree no longer has"))?;
        if !image {
            // A table: only where its data is changes.
            if let Some(m) = node.as_mapping_mut() {
                m.insert("source", Node::str(source));
            }
            continue;
        }
        let a = tree.array(p)?;
        let tag = node.tag.clone();
        *node = fits_ndarray(source, &a.datatype.to_string(), &a.shape);
        node.tag = tag;
    }
    doc.relink();
    Ok(Plan {
        hdus: plan,
        doc: Some(doc),
    })
}

/// The HDUs of the FITS file the ASDF file was read from (the ASDF HDU left out).
fn origins_from_file<T: Tree>(tree: &T) -> Result<Vec<Origin>, ConvertError<T::Error>> {
    let Some(fits) = tree.fits() else {
        return Ok(Vec::new());
    };
    let named: HashSet<usize> = fits.origin.iter().map(|(_, i)| *i).collect();
    let mut out = Vec::new();
    for hdu in fits.data_hdus() {
        out.push(Origin {
            cards: fits.header_cards(hdu).map_err(at_file)?,
            hdu: hdu.clone(),
            taker: None,
            raw: Some((hdu.data_offset, hdu.data_len)),
            was_taken: named.contains(&hdu.index),
        });
    }
    Ok(out)
}

/// The HDUs a `fits` node (or the [`FITS_KEY`] node) at `pointer` describes.
fn origins_from_node<T: Tree>(tree: &T, pointer: &str) -> Result<Vec<Origin>, ConvertError<T::Error>> {
    let doc = tree.doc()?;
    let items = doc
        .resolve(tree.get(pointer)?)
        .as_sequence()
        .ok_or(ConvertError::Usage("a fits node is a list of HDUs"))?
        .items
        .as_slice();
    let mut out = Vec::new();
    for (k, entry) in items.iter().enumerate() {
        let entry = doc.resolve(entry);
        let header = entry
            .get("header")
            .ok_or(ConvertError::Usage("an HDU of a fits node without header"))?;
        let cards = node_cards(k, doc.resolve(header)).map_err(at_file)?;
        let hdu = describe_cards(k, &cards).map_err(at_file)?;
        let taker = match entry.get("data") {
            Some(Node {
                kind: NodeKind::Alias(a),
                ..
            }) => doc
                .anchored(a)
                .map(|(path, _)| asdf_yaml::pointer::pointer_of(&doc.root, &path)),
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

/// The data of a table HDU from the ndarray at `pointer` (its records or bytes): the FITS
/// file's bytes when the ndarray is still all of an HDU read, else the ndarray's.
fn table_data<T: Tree>(tree: &T, pointer: &str, hdu: &Hdu, index: usize) -> Result<Data, ConvertError<T::Error>> {
    let (view, at) = tree.located(pointer)?;
    if let (Storage::Fits { hdu: i }, Some(fits)) = (at.storage(), tree.fits()) {
        let src = &fits.hdus[i];
        if view.is_c_contiguous() && view.byte_range() == (0..src.data_len) && src.data_len == hdu.data_len {
            return Ok(Data::FitsRaw {
                offset: src.data_offset,
                len: src.data_len,
            });
        }
    }
    let wrong = |data: u64| ConvertError::Fits {
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
                return Err(ConvertError::Fits {
                    pointer: pointer.to_owned(),
                    source: FitsError::NoAsdf("a table's records must be big-endian to be FITS data"),
                });
            }
            hdu.sign_flips().map_err(|source| ConvertError::Fits {
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

/// Writes the planned HDUs, then the ASDF HDU with the tree (its `_fits_hash` the SHA-256 of
/// the other headers, as stdatamodels writes it), into `w`.
///
/// # Errors
/// Reading the arrays, the ASDF file's own errors, and output errors.
pub fn write<T: Tree, W: Write + Seek>(
    tree: &T,
    w: &mut W,
    plan: Plan,
    settings: &Settings<'_>,
) -> Result<(), ConvertError<T::Error>> {
    let mut hash = sha2::Sha256::new();
    let mut kept: HashSet<String> = HashSet::new();
    for h in &plan.hdus {
        if let Data::Image { pointer, .. } | Data::ArrayRaw { pointer, .. } = &h.data {
            kept.insert(pointer.clone());
        }
    }
    let count = plan.hdus.len();
    for (index, h) in plan.hdus.into_iter().enumerate() {
        let header = write_one(tree, w, index, h.cards, &h.data, settings.checksums)?;
        hash.update(&header);
        if let Some(p) = settings.progress {
            p(index + 1, count + 1);
        }
    }
    let Some(mut doc) = plan.doc else {
        return w.flush().map_err(ConvertError::Output);
    };
    let digest: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
    if let Some(m) = doc.root.as_mapping_mut() {
        m.remove("_fits_hash");
        m.insert("_fits_hash", Node::str(digest));
    }
    let bytes = tree.asdf_bytes(&doc, &kept)?;
    let cards = asdf_hdu_cards(count, settings.asdf_hdu, bytes.len()).map_err(at_file)?;
    write_one(tree, w, count, cards, &Data::Bytes(bytes), settings.checksums)?;
    if let Some(p) = settings.progress {
        p(count + 1, count + 1);
    }
    w.flush().map_err(ConvertError::Output)
}

/// Writes one HDU (header, data, padding; CHECKSUM/DATASUM filled in afterwards when asked)
/// and returns its header as written.
fn write_one<T: Tree, W: Write + Seek>(
    tree: &T,
    w: &mut W,
    index: usize,
    cards: Vec<CardImage>,
    data: &Data,
    checksums: bool,
) -> Result<Vec<u8>, ConvertError<T::Error>> {
    write_hdu(w, index, cards, checksums, |out| write_data(tree, out, data)).map_err(|e| match e {
        HduError::Fits(e) => at_file(e),
        HduError::Io(e) => ConvertError::Output(e),
        HduError::Data(e) => e,
    })
}

fn write_data<T: Tree, W: Write + Seek>(
    tree: &T,
    out: &mut DataOut<'_, W>,
    data: &Data,
) -> Result<(), ConvertError<T::Error>> {
    match data {
        Data::None => Ok(()),
        Data::Bytes(b) => out.put(b).map_err(ConvertError::Output),
        Data::FitsRaw { offset, len } => copy_fits(tree, out, *offset, *len),
        Data::ArrayRaw { pointer, flips, len } => {
            let (view, at) = tree.located(pointer)?;
            let r = view.byte_range();
            let (s, e) = (
                usize::try_from(r.start).unwrap_or(usize::MAX),
                usize::try_from(r.end).unwrap_or(usize::MAX),
            );
            let whole = at.read().map_err(|source| ConvertError::Storage {
                pointer: pointer.clone(),
                source,
            })?;
            let mut bytes = whole
                .get(s..e)
                .map(<[u8]>::to_vec)
                .ok_or(ConvertError::Usage("a view outside its block"))?;
            let n = usize::try_from(*len).unwrap_or(usize::MAX).min(bytes.len());
            if let Some(f) = flips {
                f.apply(&mut bytes, 0);
            }
            out.put(&bytes[..n]).map_err(ConvertError::Output)
        }
        Data::Image { pointer, scalar } => {
            let flip = bitpix_of(*scalar).is_some_and(|(_, z)| z.is_some());
            // An image read from FITS and written under the same convention: its stored bytes
            // are the bytes to write.
            if let Some(fits) = tree.fits()
                && let Ok((view, at)) = tree.located(pointer)
                && let Storage::Fits { hdu: i } = at.storage()
                && view.is_c_contiguous()
                && view.byteorder == ByteOrder::Big
                && fits.hdus[i].value_datatype() == Some(scalar.name())
            {
                let r = view.byte_range();
                if r.end <= fits.hdus[i].data_len {
                    return copy_fits(tree, out, fits.hdus[i].data_offset + r.start, r.end - r.start);
                }
            }
            match scalar {
                ScalarType::Int8 => stream_typed::<i8, _, _>(tree, out, pointer, flip),
                ScalarType::UInt8 => stream_typed::<u8, _, _>(tree, out, pointer, flip),
                ScalarType::Int16 => stream_typed::<i16, _, _>(tree, out, pointer, flip),
                ScalarType::UInt16 => stream_typed::<u16, _, _>(tree, out, pointer, flip),
                ScalarType::Int32 => stream_typed::<i32, _, _>(tree, out, pointer, flip),
                ScalarType::UInt32 => stream_typed::<u32, _, _>(tree, out, pointer, flip),
                ScalarType::Int64 => stream_typed::<i64, _, _>(tree, out, pointer, flip),
                ScalarType::UInt64 => stream_typed::<u64, _, _>(tree, out, pointer, flip),
                ScalarType::Float32 => stream_typed::<f32, _, _>(tree, out, pointer, flip),
                ScalarType::Float64 => stream_typed::<f64, _, _>(tree, out, pointer, flip),
                _ => Err(ConvertError::Usage("a datatype FITS images do not have")),
            }
        }
    }
}

/// Copies `len` bytes of the FITS file read from `offset`, a piece at a time.
fn copy_fits<T: Tree, W: Write + Seek>(
    tree: &T,
    out: &mut DataOut<'_, W>,
    offset: u64,
    len: u64,
) -> Result<(), ConvertError<T::Error>> {
    let Some(fits) = tree.fits() else {
        return Err(ConvertError::Usage("FITS data asked of a file that is not FITS"));
    };
    let mut at = 0u64;
    while at < len {
        let n = usize::try_from((len - at).min(PIECE as u64)).unwrap_or(PIECE);
        let bytes = fits.source.bytes_at(offset + at, n).map_err(read_io(offset + at))?;
        out.put(&bytes).map_err(ConvertError::Output)?;
        at += n as u64;
    }
    Ok(())
}

/// The elements of the ndarray at `pointer`, big-endian (sign bits flipped for FITS's unsigned
/// convention when `flip`), a piece at a time.
fn stream_typed<X: Be, T: Tree, W: Write + Seek>(
    tree: &T,
    out: &mut DataOut<'_, W>,
    pointer: &str,
    flip: bool,
) -> Result<(), ConvertError<T::Error>> {
    let size = std::mem::size_of::<X>();
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
    tree.pieces::<X>(pointer, &mut |piece| {
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
        Some(e) => Err(ConvertError::Output(e)),
        None => Ok(()),
    }
}
