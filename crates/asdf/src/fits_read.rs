//! ASDF embedded in FITS (ASDF Standard 1.6.0, Appendix A): a FITS file opens as the ASDF file
//! its `ASDF` HDU holds, and ndarrays with `fits:` sources read their HDU's data, by ranges,
//! from the FITS file. Built on [`asdf_fits`]; writing is in `fits_write`.

use asdf_fits::{FitsError, Hdu, HduKind};

use crate::error::{Error, Warning};
use crate::file::AsdfFile;
use crate::fits_source::fits_io;

impl AsdfFile {
    /// The ndarrays whose `fits:` source names an HDU of `hdus`, with its index, in document
    /// order.
    pub(crate) fn fits_sources(&self, hdus: &[Hdu]) -> Result<Vec<(String, usize)>, Error> {
        let mut out = Vec::new();
        for p in self.array_pointers()? {
            let Some(uri) = self
                .get(&p)
                .ok()
                .and_then(|n| n.get("source"))
                .and_then(crate::Node::as_str)
            else {
                continue;
            };
            if let Some(text) = uri.strip_prefix("fits:")
                && let Ok(h) = asdf_fits::resolve_source(hdus, text)
            {
                out.push((p, h.index));
            }
        }
        Ok(out)
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
        let hdu = asdf_fits::resolve_source(&fits.hdus, uri.trim_start_matches("fits:")).map_err(err)?;
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
    pub(crate) fn fits_mismatches(&self) -> Vec<Warning> {
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
