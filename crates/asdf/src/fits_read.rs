//! ASDF embedded in FITS (ASDF Standard 1.6.0, Appendix A): a FITS file opens as the ASDF file
//! its `ASDF` HDU holds, and ndarrays with `fits:` sources read their HDU's data, by ranges,
//! from the FITS file ([`asdf_fits::file::HduData`]). Writing is in `fits_write`.

use asdf_fits::{FitsError, Hdu, HduKind};

use crate::error::{Error, Warning};
use crate::file::AsdfFile;

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

    /// The data of the HDU a `fits:` source names, checked to be readable as raw values.
    pub(crate) fn fits_data(&self, uri: &str, pointer: &str) -> Result<asdf_fits::file::HduData<'_>, Error> {
        let text = uri.trim_start_matches("fits:");
        let err = |source| Error::Fits {
            pointer: pointer.to_owned(),
            source,
        };
        let Some(fits) = &self.fits else {
            return Err(err(FitsError::Source {
                text: text.to_owned(),
                problem: "a fits: source in a file that is not FITS",
            }));
        };
        let i = fits.source_hdu(text).map_err(err)?;
        Ok(fits.hdu_data(i, self.options.layout_limits.max_block_bytes))
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
            let Ok(i) = fits.source_hdu(uri.trim_start_matches("fits:")) else {
                continue;
            };
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
