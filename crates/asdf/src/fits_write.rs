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
use std::io::{Seek, Write};
use std::path::Path;

use asdf_core_types::{ByteOrder, Datatype, ScalarType};
use asdf_fits::out::{self as fits_out, CardImage, CardValue};
use asdf_fits::write::{
    self as fits_write, DataOut, HduError, PIECE, bitpix_of, derived_name, describe_cards, fits_ndarray, image_cards,
    name_key, node_cards, strip_checksums,
};
use asdf_fits::{FitsError, Hdu, HduKind};
use asdf_yaml::{Anchor, Document, Node, NodeKind};
use sha2::Digest as _;

use crate::blocks::Piece;
use crate::error::Error;
use crate::file::AsdfFile;
use crate::target::FitsWriteOptions;
use asdf_layout::atomic::{Dest, TempFile, destination};
use asdf_layout::storage::Storage;

/// The key of the root mapping that carries a FITS file's HDUs (headers card by card, data
/// as aliases of the tree's ndarrays) in an ASDF file converted from FITS, so that converting
/// back gives the same HDUs and headers. Untagged, in the shape of the `fits/fits-*` schemas
/// (a list of `{header, data}`), with each card as its 80-character text: real JWST headers
/// have values longer than those schemas' 60 characters and `CONTINUE` cards.
pub const FITS_KEY: &str = "_fits";

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
                .header_cards(hdu)
                .map_err(fits_file_error)?
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
                .map_err(fits_io(hdu.data_offset))?;
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
            let cards = image_cards(0, true, &[], ScalarType::UInt8, &[]).map_err(fits_file_error)?;
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
                            image_cards(index, primary, &o.cards, t, &shape).map_err(fits_file_error)?,
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
                let mut cards = image_cards(index, false, &[], t, &shape).map_err(fits_file_error)?;
                cards.extend(
                    fits_out::format_card("EXTNAME", &CardValue::Str(name.clone()), Some("extension name"))
                        .map_err(|source| fits_file_error(FitsError::Card { hdu: index, source }))?,
                );
                if ver > 1 {
                    cards.extend(
                        fits_out::format_card("EXTVER", &CardValue::Int(ver), Some("extension value"))
                            .map_err(|source| fits_file_error(FitsError::Card { hdu: index, source }))?,
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
                cards: fits.header_cards(hdu).map_err(fits_file_error)?,
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
            let cards = node_cards(k, self.doc()?.resolve(header)).map_err(fits_file_error)?;
            let hdu = describe_cards(k, &cards).map_err(fits_file_error)?;
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
        let cards = fits_write::asdf_hdu_cards(index, options.asdf_hdu, n).map_err(fits_file_error)?;
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
        cards: Vec<CardImage>,
        data: &Data,
        checksums: bool,
    ) -> Result<Vec<u8>, Error> {
        fits_write::write_hdu(w, index, cards, checksums, |out| self.write_data(out, data)).map_err(|e| match e {
            HduError::Fits(e) => fits_file_error(e),
            HduError::Io(e) => out_io(e),
            HduError::Data(e) => e,
        })
    }

    fn write_data<W: Write + Seek>(&self, out: &mut DataOut<'_, W>, data: &Data) -> Result<(), Error> {
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
                    if let Ok((view, at)) = self.view_of(&nd, pointer)
                        && let Storage::Fits { hdu: i } = at.storage()
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
        if let (Storage::Fits { hdu: i }, Some(fits)) = (at.storage(), &self.fits) {
            let src = &fits.hdus[i];
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
        let whole = at.read().map_err(crate::error::storage_error(pointer))?;
        whole
            .get(s..e)
            .map(<[u8]>::to_vec)
            .ok_or(Error::Usage("a view outside its block"))
    }

    /// Copies `len` bytes of the FITS file read from `offset`, a piece at a time.
    fn copy_fits<W: Write + Seek>(&self, out: &mut DataOut<'_, W>, offset: u64, len: u64) -> Result<(), Error> {
        let Some(fits) = &self.fits else {
            return Err(Error::Usage("FITS data asked of a file that is not FITS"));
        };
        let mut at = 0u64;
        while at < len {
            let n = usize::try_from((len - at).min(PIECE as u64)).unwrap_or(PIECE);
            let bytes = fits.source.bytes_at(offset + at, n).map_err(fits_io(offset + at))?;
            out.put(&bytes).map_err(out_io)?;
            at += n as u64;
        }
        Ok(())
    }

    fn stream_be<W: Write + Seek>(
        &self,
        out: &mut DataOut<'_, W>,
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
        out: &mut DataOut<'_, W>,
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

/// An error of the FITS file read or written, at no ndarray.
fn fits_file_error(source: FitsError) -> Error {
    Error::Fits {
        pointer: String::new(),
        source,
    }
}

/// An I/O error reading the FITS file read at `offset`.
fn fits_io(offset: u64) -> impl Fn(std::io::Error) -> Error {
    move |e| fits_file_error(asdf_fits::file::io(offset)(e))
}

/// An error writing the FITS file (named by [`AsdfFile::write`] (FITS) when it has a path).
fn out_io(source: std::io::Error) -> Error {
    Error::Io {
        path: std::path::PathBuf::new(),
        source,
    }
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
