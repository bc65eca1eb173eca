//! ASDF embedded in FITS (ASDF Standard 1.6.0, Appendix A): a FITS file opens as the ASDF file
//! its `ASDF` HDU holds, and ndarrays with `fits:` sources read their HDU's data, by ranges,
//! from the FITS file. Built on [`asdf_layout::fits`]; writing is in `fits_write`.

use std::sync::Arc;

use asdf_layout::ReadAt;
use asdf_layout::fits::{FitsError, Hdu, HduKind, SignFlips};

use crate::{AsdfFile, Error, Warning};

/// A FITS file's HDUs and its bytes.
pub(crate) struct FitsFile {
    pub(crate) source: Arc<dyn ReadAt>,
    pub(crate) hdus: Vec<Hdu>,
    /// The HDU each ndarray's `fits:` source named when the file was opened, by pointer
    /// (writing FITS again puts an array replaced since into its old HDU).
    pub(crate) origin: Vec<(String, usize)>,
    /// Where the ASDF HDU's data (the embedded file) starts in the FITS file.
    pub(crate) asdf_at: u64,
    /// Each HDU's sign-bit flips, worked out the first time its data is asked for.
    flips: Vec<std::sync::OnceLock<Result<Option<SignFlips>, FitsError>>>,
}

impl FitsFile {
    /// The form of the ASDF HDU as read: written back in the same form.
    pub(crate) fn asdf_form(&self) -> crate::AsdfHdu {
        match self
            .hdus
            .iter()
            .find(|h| h.data_offset == self.asdf_at)
            .map(|h| &h.kind)
        {
            Some(HduKind::Image | HduKind::Primary) => crate::AsdfHdu::Image,
            _ => crate::AsdfHdu::Table,
        }
    }

    /// The HDUs other than the ASDF one.
    pub(crate) fn data_hdus(&self) -> impl Iterator<Item = &Hdu> + '_ {
        self.hdus.iter().filter(move |h| h.data_offset != self.asdf_at)
    }

    /// The card images of `hdu`'s header, as written.
    pub(crate) fn header_cards(&self, hdu: &Hdu) -> Result<Vec<asdf_layout::fits_out::CardImage>, Error> {
        let len = usize::try_from(hdu.data_offset - hdu.header_offset)
            .map_err(|_| Error::Usage("a header larger than memory"))?;
        let header = self
            .source
            .bytes_at(hdu.header_offset, len)
            .map_err(fits_io(hdu.header_offset))?;
        Ok(asdf_layout::fits_out::split_cards(&header))
    }

    /// HDU `i`'s sign-bit flips (FITS's unsigned integers), or why its data is not read.
    fn flips(&self, i: usize) -> Result<Option<&SignFlips>, FitsError> {
        match self.flips[i].get_or_init(|| self.hdus[i].sign_flips()) {
            Ok(f) => Ok(f.as_ref()),
            Err(e) => Err(e.clone()),
        }
    }
}

/// `len` bytes of `inner` from `start`: the ASDF file inside a FITS file.
struct Window {
    inner: Arc<dyn ReadAt>,
    start: u64,
    len: u64,
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

    fn holds_in_memory(&self) -> bool {
        self.inner.holds_in_memory()
    }

    fn bytes_at(&self, offset: u64, len: usize) -> std::io::Result<std::borrow::Cow<'_, [u8]>> {
        if offset.saturating_add(len as u64) > self.len {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "read past the ASDF HDU's data",
            ));
        }
        self.inner.bytes_at(self.start + offset, len)
    }
}

/// Whether the source starts like a FITS file.
pub(crate) fn is_fits(source: &dyn ReadAt) -> bool {
    let mut head = [0u8; 9];
    source.read_exact_at(0, &mut head).is_ok() && asdf_layout::fits::is_fits(&head)
}

/// An I/O error reading the FITS file at `offset`.
pub(crate) fn fits_io(offset: u64) -> impl Fn(std::io::Error) -> Error {
    move |e| {
        file_error(FitsError::Io {
            offset,
            message: e.to_string(),
        })
    }
}

fn file_error(source: FitsError) -> Error {
    Error::Fits {
        pointer: String::new(),
        source,
    }
}

/// Opens the ASDF file inside the FITS file `source`.
pub(crate) fn open(
    source: Box<dyn ReadAt>,
    dir: Option<std::path::PathBuf>,
    options: crate::OpenOptions,
) -> Result<AsdfFile, Error> {
    let source: Arc<dyn ReadAt> = Arc::from(source);
    let len = source.size().map_err(fits_io(0))?;
    let hdus =
        asdf_layout::fits::read_hdus(&*source, len, asdf_layout::fits::FitsLimits::default()).map_err(file_error)?;
    let range = asdf_layout::fits::asdf_range(&hdus).map_err(file_error)?;
    let window = Window {
        inner: source.clone(),
        start: range.start,
        len: range.end - range.start,
    };
    let mut file = crate::open_source(Box::new(window), dir, options)?;
    let flips = hdus.iter().map(|_| std::sync::OnceLock::new()).collect();
    let origin = file.fits_sources(&hdus);
    file.fits = Some(Arc::new(FitsFile {
        source,
        hdus,
        origin,
        asdf_at: range.start,
        flips,
    }));
    let mismatches = file.fits_mismatches();
    file.warnings.extend(mismatches);
    Ok(file)
}

impl AsdfFile {
    /// For a file read from FITS, the form its ASDF HDU has (what writing it back keeps).
    #[must_use]
    pub fn fits_asdf_form(&self) -> Option<crate::AsdfHdu> {
        self.fits.as_ref().map(|f| f.asdf_form())
    }

    /// Whether `path` names the file this one was opened from.
    #[must_use]
    pub fn is_own_path(&self, path: impl AsRef<std::path::Path>) -> bool {
        self.is_own_file(path.as_ref())
    }
    /// The HDUs of the FITS file this ASDF file was read from (`None` for an ASDF file).
    #[must_use]
    pub fn fits_hdus(&self) -> Option<&[Hdu]> {
        self.fits.as_deref().map(|f| f.hdus.as_slice())
    }

    /// The ndarrays whose `fits:` source names an HDU of `hdus`, with its index, in document
    /// order.
    pub(crate) fn fits_sources(&self, hdus: &[Hdu]) -> Vec<(String, usize)> {
        let mut out = Vec::new();
        for p in self.array_pointers() {
            let Some(uri) = self
                .get(&p)
                .ok()
                .and_then(|n| n.get("source"))
                .and_then(crate::Node::as_str)
            else {
                continue;
            };
            if let Some(text) = uri.strip_prefix("fits:")
                && let Ok(h) = asdf_layout::fits::resolve_source(hdus, text)
            {
                out.push((p, h.index));
            }
        }
        out
    }

    /// The HDU a `fits:` source names, checked to be readable as raw bytes.
    pub(crate) fn fits_hdu(&self, uri: &str, pointer: &str) -> Result<usize, Error> {
        let err = |source| Error::Fits {
            pointer: pointer.to_owned(),
            source,
        };
        let Some(fits) = &self.fits else {
            return Err(err(FitsError::Source {
                text: uri.trim_start_matches("fits:").to_owned(),
                problem: "a fits: source in a file that is not FITS",
            }));
        };
        let hdu = asdf_layout::fits::resolve_source(&fits.hdus, uri.trim_start_matches("fits:")).map_err(err)?;
        if hdu.kind == HduKind::CompressedImage {
            return Err(err(FitsError::Compressed { hdu: hdu.index }));
        }
        fits.flips(hdu.index).map_err(err)?;
        Ok(hdu.index)
    }

    /// Bytes `range` of HDU `index`'s data (within it: checked by the caller's view), or all.
    pub(crate) fn fits_bytes(
        &self,
        index: usize,
        range: Option<std::ops::Range<u64>>,
    ) -> Result<std::borrow::Cow<'_, [u8]>, Error> {
        let Some(fits) = &self.fits else {
            return Err(Error::Usage("FITS data asked of a file that is not FITS"));
        };
        let hdu = &fits.hdus[index];
        let r = range.unwrap_or(0..hdu.data_len);
        if r.end > hdu.data_len || r.start > r.end {
            return Err(Error::Usage("a range outside the HDU's data"));
        }
        if r.end - r.start > self.options.layout_limits.max_block_bytes {
            return Err(Error::Layout(asdf_layout::Error::Limits(
                asdf_layout::LimitError::BlockBytes {
                    block: index,
                    claimed: r.end - r.start,
                    limit: self.options.layout_limits.max_block_bytes,
                },
            )));
        }
        let len = usize::try_from(r.end - r.start).map_err(|_| Error::Usage("a range larger than memory"))?;
        let bytes = fits
            .source
            .bytes_at(hdu.data_offset + r.start, len)
            .map_err(fits_io(hdu.data_offset + r.start))?;
        // FITS's unsigned integers (BZERO / TZEROn of 2^(bits-1)) are stored sign-flipped.
        match fits.flips(index).map_err(|source| Error::Fits {
            pointer: String::new(),
            source,
        })? {
            None => Ok(bytes),
            Some(flips) => {
                let mut owned = bytes.into_owned();
                flips.apply(&mut owned, r.start);
                Ok(std::borrow::Cow::Owned(owned))
            }
        }
    }

    /// One warning per ndarray whose datatype or shape differs from its HDU's.
    fn fits_mismatches(&self) -> Vec<Warning> {
        let mut out = Vec::new();
        let Some(fits) = &self.fits else { return out };
        // The ndarrays found with `fits:` sources at open (one walk of the tree).
        for (p, _) in &fits.origin {
            let Ok(node) = self.get(p) else { continue };
            let Some(uri) = node.get("source").and_then(crate::Node::as_str) else {
                continue;
            };
            let Ok(i) = self.fits_hdu(uri, p) else { continue };
            let hdu = &fits.hdus[i];
            let datatype = node.get("datatype").and_then(crate::Node::as_str);
            let shape: Option<Vec<u64>> = node.get("shape").and_then(crate::Node::as_sequence).map(|s| {
                s.items
                    .iter()
                    .filter_map(|n| n.as_i64().and_then(|v| u64::try_from(v).ok()))
                    .collect()
            });
            if datatype.is_some()
                && matches!(hdu.kind, HduKind::Image | HduKind::Primary)
                && datatype != hdu.value_datatype()
            {
                out.push(Warning::FitsMismatch {
                    pointer: p.clone(),
                    problem: format!(
                        "datatype {} differs from HDU {}'s BITPIX {} ({})",
                        datatype.unwrap_or_default(),
                        hdu.index,
                        hdu.bitpix,
                        hdu.value_datatype().unwrap_or("?")
                    ),
                });
            }
            if node.get("byteorder").and_then(crate::Node::as_str) == Some("little") {
                out.push(Warning::FitsMismatch {
                    pointer: p.clone(),
                    problem: format!("byteorder little, but FITS data (HDU {}) is big-endian", hdu.index),
                });
            }
            if let Some(shape) = shape
                && shape != hdu.array_shape()
            {
                out.push(Warning::FitsMismatch {
                    pointer: p.clone(),
                    problem: format!(
                        "shape {shape:?} differs from HDU {}'s {:?}",
                        hdu.index,
                        hdu.array_shape()
                    ),
                });
            }
        }
        out
    }
}
