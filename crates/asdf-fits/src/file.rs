//! A FITS file holding an ASDF file (Appendix A of the standard): its HDUs and bytes, the
//! window onto the ASDF HDU's data that an ASDF reader reads, and an HDU's data as the
//! storage of an ndarray with a `fits:` source ([`HduData`]).

use asdf_yaml::Node;
use std::borrow::Cow;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use asdf_layout::ReadAt;
use asdf_layout::storage::{ArrayBytes, RangeCost, Storage, StorageError};

use crate::{FitsError, FitsLimits, Hdu, HduKind, SignFlips};

/// Where a FITS file written puts its ASDF file: one of the two forms Appendix A of the
/// standard and stdatamodels use (exhaustive: there are no others).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AsdfHdu {
    /// The one-row BINTABLE with the column `ASDF_METADATA` (stdatamodels, JWST).
    #[default]
    Table,
    /// The IMAGE of bytes (BITPIX 8, NAXIS 1) of Appendix A.
    Image,
}

/// A FITS file's HDUs and its bytes.
pub struct FitsFile {
    /// The whole FITS file.
    pub source: Arc<dyn ReadAt>,
    /// Its HDUs.
    pub hdus: Vec<Hdu>,
    /// The HDU each ndarray's `fits:` source named when the file was opened, by JSON pointer
    /// (writing FITS again puts an array replaced since into its old HDU).
    pub origin: Vec<(String, usize)>,
    /// Where the ASDF HDU's data (the embedded file) starts in the FITS file.
    pub asdf_at: u64,
    /// Each HDU's sign-bit flips, worked out the first time its data is asked for.
    flips: Vec<OnceLock<Result<Option<SignFlips>, FitsError>>>,
}

impl std::fmt::Debug for FitsFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FitsFile")
            .field("hdus", &self.hdus.len())
            .field("asdf_at", &self.asdf_at)
            .finish_non_exhaustive()
    }
}

impl FitsFile {
    /// Reads the HDUs of `source` and finds the ASDF HDU: the file, and the window onto the
    /// ASDF file its data holds.
    ///
    /// # Errors
    /// [`FitsError`] for a file that is not FITS or holds no ASDF HDU.
    pub fn open(source: Arc<dyn ReadAt>) -> Result<(Self, Window), FitsError> {
        let len = source.size().map_err(io(0))?;
        let hdus = crate::read_hdus(&*source, len, FitsLimits::default())?;
        let range = crate::asdf_range(&hdus)?;
        let window = Window {
            inner: source.clone(),
            start: range.start,
            len: range.end - range.start,
        };
        let flips = hdus.iter().map(|_| OnceLock::new()).collect();
        Ok((
            Self {
                source,
                hdus,
                origin: Vec::new(),
                asdf_at: range.start,
                flips,
            },
            window,
        ))
    }

    /// The form of the ASDF HDU as read: written back in the same form.
    #[must_use]
    pub fn asdf_form(&self) -> AsdfHdu {
        match self
            .hdus
            .iter()
            .find(|h| h.data_offset == self.asdf_at)
            .map(|h| &h.kind)
        {
            Some(HduKind::Image | HduKind::Primary) => AsdfHdu::Image,
            _ => AsdfHdu::Table,
        }
    }

    /// The HDUs other than the ASDF one.
    pub fn data_hdus(&self) -> impl Iterator<Item = &Hdu> + '_ {
        self.hdus.iter().filter(move |h| h.data_offset != self.asdf_at)
    }

    /// The card images of `hdu`'s header, as written.
    ///
    /// # Errors
    /// [`FitsError::Io`].
    pub fn header_cards(&self, hdu: &Hdu) -> Result<Vec<crate::out::CardImage>, FitsError> {
        let len = usize::try_from(hdu.data_offset - hdu.header_offset).map_err(|_| FitsError::Io {
            offset: hdu.header_offset,
            message: "a header larger than memory".to_owned(),
        })?;
        let header = self
            .source
            .bytes_at(hdu.header_offset, len)
            .map_err(io(hdu.header_offset))?;
        Ok(crate::out::split_cards(&header))
    }

    /// HDU `i`'s sign-bit flips (FITS's unsigned integers), or why its data is not read.
    ///
    /// # Errors
    /// Why the HDU's data cannot be read as raw values (scaled data).
    pub fn flips(&self, i: usize) -> Result<Option<&SignFlips>, FitsError> {
        let Some(cell) = self.flips.get(i) else {
            return Err(FitsError::Source {
                text: i.to_string(),
                problem: "no such HDU",
            });
        };
        match cell.get_or_init(|| self.hdus[i].sign_flips()) {
            Ok(f) => Ok(f.as_ref()),
            Err(e) => Err(e.clone()),
        }
    }

    /// The ndarrays of `doc` (not through aliases, masks left with their array) whose `fits:`
    /// source names an HDU of this file, with that HDU's index, in document order.
    #[must_use]
    pub fn sources_in(&self, doc: &asdf_yaml::Document) -> Vec<(String, usize)> {
        let root = &doc.root;
        let mut out = Vec::new();
        root.walk_with(&mut |path, n| {
            if !n.tag.as_deref().is_some_and(asdf_core_types::is_ndarray_tag) {
                return asdf_yaml::Visit::Continue;
            }
            if let Some(text) = n
                .get("source")
                .and_then(Node::as_str)
                .and_then(|u| u.strip_prefix("fits:"))
                && let Ok(h) = crate::resolve_source(&self.hdus, text)
            {
                out.push((asdf_yaml::pointer::pointer_of(root, path), h.index));
            }
            asdf_yaml::Visit::SkipChildren
        });
        out
    }

    /// What differs between each ndarray of [`FitsFile::origin`] and its HDU (datatype and
    /// BITPIX, byte order, shape), as (JSON pointer, problem): warnings of an open.
    #[must_use]
    pub fn mismatches(&self, doc: &asdf_yaml::Document) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for (p, _) in &self.origin {
            let Ok(node) = asdf_yaml::pointer::get(doc, p) else {
                continue;
            };
            let Some(uri) = node.get("source").and_then(Node::as_str) else {
                continue;
            };
            let Ok(i) = self.source_hdu(uri.trim_start_matches("fits:")) else {
                continue;
            };
            let hdu = &self.hdus[i];
            let datatype = node.get("datatype").and_then(Node::as_str);
            let shape: Option<Vec<u64>> = node.get("shape").and_then(Node::as_sequence).map(|s| {
                s.items
                    .iter()
                    .filter_map(|n| n.as_i64().and_then(|v| u64::try_from(v).ok()))
                    .collect()
            });
            if datatype.is_some()
                && matches!(hdu.kind, HduKind::Image | HduKind::Primary)
                && datatype != hdu.value_datatype()
            {
                let problem = format!(
                    "datatype {} differs from HDU {}'s BITPIX {} ({})",
                    datatype.unwrap_or_default(),
                    hdu.index,
                    hdu.bitpix,
                    hdu.value_datatype().unwrap_or("?")
                );
                out.push((p.clone(), problem));
            }
            if node.get("byteorder").and_then(Node::as_str) == Some("little") {
                let problem = format!("byteorder little, but FITS data (HDU {}) is big-endian", hdu.index);
                out.push((p.clone(), problem));
            }
            if let Some(shape) = shape
                && shape != hdu.array_shape()
            {
                let problem = format!(
                    "shape {shape:?} differs from HDU {}'s {:?}",
                    hdu.index,
                    hdu.array_shape()
                );
                out.push((p.clone(), problem));
            }
        }
        out
    }

    /// The HDU a `fits:` source (the text after `fits:`) names, checked to be readable as
    /// raw values.
    ///
    /// # Errors
    /// A source that names no HDU or more than one, a tile-compressed or scaled HDU.
    pub fn source_hdu(&self, text: &str) -> Result<usize, FitsError> {
        let hdu = crate::resolve_source(&self.hdus, text)?;
        if hdu.kind == HduKind::CompressedImage {
            return Err(FitsError::Compressed { hdu: hdu.index });
        }
        self.flips(hdu.index)?;
        Ok(hdu.index)
    }

    /// Checks HDU `i`'s `DATASUM` and `CHECKSUM` cards (FITS 4.0, Appendix J) against its
    /// bytes, its data read 4 MiB at a time: `Ok(false)` when it has neither.
    ///
    /// # Errors
    /// [`FitsError::Checksum`] for a card that does not match; [`FitsError::Io`].
    pub fn verify_checksums(&self, i: usize) -> Result<bool, FitsError> {
        let Some(hdu) = self.hdus.get(i) else {
            return Ok(false);
        };
        let card = |k: &str| hdu.value(k).map(|v| v.trim().trim_matches('\'').trim().to_owned());
        let (datasum, checksum) = (card("DATASUM"), card("CHECKSUM"));
        if datasum.is_none() && checksum.is_none() {
            return Ok(false);
        }
        // The padding counts (zeros add nothing: a file that ends without it sums the same).
        let end = self.source.size().map_err(io(hdu.data_offset))?;
        let padded =
            (hdu.data_len + crate::out::data_padding(hdu.data_len) as u64).min(end.saturating_sub(hdu.data_offset));
        let mut sum = 0u32;
        let mut at = 0u64;
        const PIECE: u64 = 4 << 20;
        while at < padded {
            let n = (padded - at).min(PIECE);
            let len = usize::try_from(n).unwrap_or(usize::MAX);
            let offset = hdu.data_offset + at;
            let bytes = self.source.bytes_at(offset, len).map_err(io(offset))?;
            sum = crate::out::ones_sum(&bytes, sum);
            at += n;
        }
        if let Some(d) = &datasum
            && d.parse::<u32>().ok() != Some(sum)
        {
            return Err(FitsError::Checksum {
                hdu: i,
                card: "DATASUM",
                part: "data",
            });
        }
        if checksum.is_some() {
            let len = usize::try_from(hdu.data_offset - hdu.header_offset).unwrap_or(usize::MAX);
            let header = self
                .source
                .bytes_at(hdu.header_offset, len)
                .map_err(io(hdu.header_offset))?;
            if crate::out::ones_add(crate::out::ones_sum(&header, 0), sum) != u32::MAX {
                return Err(FitsError::Checksum {
                    hdu: i,
                    card: "CHECKSUM",
                    part: if datasum.is_some() { "header" } else { "header or data" },
                });
            }
        }
        Ok(true)
    }

    /// HDU `index`'s data as an array's storage: reads of more than `max_bytes` at once are
    /// refused.
    #[must_use]
    pub fn hdu_data(&self, index: usize, max_bytes: u64) -> HduData<'_> {
        HduData {
            file: self,
            index,
            max_bytes,
        }
    }
}

/// The data of one HDU, read by ranges from the FITS file, unsigned integers unflipped.
#[derive(Debug)]
pub struct HduData<'a> {
    file: &'a FitsFile,
    index: usize,
    max_bytes: u64,
}

impl<'a> HduData<'a> {
    fn hdu(&self) -> Result<&'a Hdu, StorageError> {
        self.file.hdus.get(self.index).ok_or_else(|| {
            owner(FitsError::Source {
                text: self.index.to_string(),
                problem: "no such HDU",
            })
        })
    }
}

fn owner(e: FitsError) -> StorageError {
    StorageError::Owner(Box::new(e))
}

impl<'a> ArrayBytes<'a> for HduData<'a> {
    fn storage(&self) -> Storage {
        Storage::Fits { hdu: self.index }
    }

    fn len(&self) -> Result<u64, StorageError> {
        Ok(self.hdu()?.data_len)
    }

    fn read(&self) -> Result<Cow<'a, [u8]>, StorageError> {
        self.read_range(0..self.len()?)
    }

    fn range_cost(&self) -> RangeCost {
        RangeCost::Bytes
    }

    fn read_range(&self, r: Range<u64>) -> Result<Cow<'a, [u8]>, StorageError> {
        let hdu = self.hdu()?;
        if r.end > hdu.data_len || r.start > r.end {
            return Err(StorageError::Layout(asdf_layout::Error::Usage(
                asdf_layout::UsageError::RangeOutOfBlock {
                    start: r.start,
                    end: r.end,
                    len: hdu.data_len,
                },
            )));
        }
        if r.end - r.start > self.max_bytes {
            return Err(StorageError::Layout(asdf_layout::Error::Limits(
                asdf_layout::LimitError::BlockBytes {
                    block: self.index,
                    claimed: r.end - r.start,
                    limit: self.max_bytes,
                },
            )));
        }
        let at = hdu.data_offset + r.start;
        let len = usize::try_from(r.end - r.start).map_err(|_| {
            owner(FitsError::Io {
                offset: at,
                message: "a range larger than memory".to_owned(),
            })
        })?;
        let bytes = self.file.source.bytes_at(at, len).map_err(|e| owner(io(at)(e)))?;
        // FITS's unsigned integers (BZERO / TZEROn of 2^(bits-1)) are stored sign-flipped.
        match self.file.flips(self.index).map_err(owner)? {
            None => Ok(bytes),
            Some(flips) => {
                let mut owned = bytes.into_owned();
                flips.apply(&mut owned, r.start);
                Ok(Cow::Owned(owned))
            }
        }
    }
}

/// `len` bytes of `inner` from `start`: the ASDF file inside a FITS file.
pub struct Window {
    inner: Arc<dyn ReadAt>,
    start: u64,
    len: u64,
}

impl std::fmt::Debug for Window {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Window")
            .field("start", &self.start)
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

impl ReadAt for Window {
    fn size(&self) -> std::io::Result<u64> {
        Ok(self.len)
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        if offset >= self.len {
            return Ok(0);
        }
        let n = usize::try_from((self.len - offset).min(buf.len() as u64)).unwrap_or(buf.len());
        self.inner.read_at(self.start + offset, &mut buf[..n])
    }

    fn reads_at_once(&self) -> usize {
        self.inner.reads_at_once()
    }

    fn read_streamed(&self, offset: u64, len: u64, sink: &mut asdf_layout::source::Sink<'_>) -> std::io::Result<()> {
        if offset.saturating_add(len) > self.len {
            return Err(past_window());
        }
        self.inner.read_streamed(self.start + offset, len, sink)
    }

    fn holds_in_memory(&self) -> bool {
        self.inner.holds_in_memory()
    }

    fn bytes_at(&self, offset: u64, len: usize) -> std::io::Result<Cow<'_, [u8]>> {
        if offset.saturating_add(len as u64) > self.len {
            return Err(past_window());
        }
        self.inner.bytes_at(self.start + offset, len)
    }
}

fn past_window() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "read past the ASDF HDU's data")
}

/// Whether `source` starts like a FITS file.
pub fn starts_as_fits(source: &(impl ReadAt + ?Sized)) -> bool {
    let mut head = [0u8; 9];
    source.read_exact_at(0, &mut head).is_ok() && crate::is_fits(&head)
}

/// An I/O error reading the FITS file at `offset`.
pub fn io(offset: u64) -> impl Fn(std::io::Error) -> FitsError {
    move |e| FitsError::Io {
        offset,
        message: e.to_string(),
    }
}
