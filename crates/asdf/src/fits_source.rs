//! The FITS file an ASDF file was read from (ASDF Standard 1.6.0, Appendix A): its HDUs, its
//! bytes, and the window onto the ASDF HDU's data that the ASDF reader reads.

use std::sync::Arc;

use asdf_fits::{FitsError, Hdu, HduKind, SignFlips};
use asdf_layout::ReadAt;

use crate::error::Error;

/// Where a FITS file written puts its ASDF file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum AsdfHdu {
    /// The one-row BINTABLE with the column `ASDF_METADATA` (stdatamodels, JWST).
    #[default]
    Table,
    /// The IMAGE of bytes (BITPIX 8, NAXIS 1) of Appendix A.
    Image,
}

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
    pub(crate) flips: Vec<std::sync::OnceLock<Result<Option<SignFlips>, FitsError>>>,
}

impl FitsFile {
    /// The form of the ASDF HDU as read: written back in the same form.
    pub(crate) fn asdf_form(&self) -> AsdfHdu {
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
    pub(crate) fn data_hdus(&self) -> impl Iterator<Item = &Hdu> + '_ {
        self.hdus.iter().filter(move |h| h.data_offset != self.asdf_at)
    }

    /// The card images of `hdu`'s header, as written.
    pub(crate) fn header_cards(&self, hdu: &Hdu) -> Result<Vec<asdf_fits::out::CardImage>, Error> {
        let len = usize::try_from(hdu.data_offset - hdu.header_offset)
            .map_err(|_| Error::Usage("a header larger than memory"))?;
        let header = self
            .source
            .bytes_at(hdu.header_offset, len)
            .map_err(fits_io(hdu.header_offset))?;
        Ok(asdf_fits::out::split_cards(&header))
    }

    /// HDU `i`'s sign-bit flips (FITS's unsigned integers), or why its data is not read.
    pub(crate) fn flips(&self, i: usize) -> Result<Option<&SignFlips>, FitsError> {
        match self.flips[i].get_or_init(|| self.hdus[i].sign_flips()) {
            Ok(f) => Ok(f.as_ref()),
            Err(e) => Err(e.clone()),
        }
    }
}

/// `len` bytes of `inner` from `start`: the ASDF file inside a FITS file.
pub(crate) struct Window {
    pub(crate) inner: Arc<dyn ReadAt>,
    pub(crate) start: u64,
    pub(crate) len: u64,
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
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "read past the ASDF HDU's data",
            ));
        }
        self.inner.read_streamed(self.start + offset, len, sink)
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
    source.read_exact_at(0, &mut head).is_ok() && asdf_fits::is_fits(&head)
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

pub(crate) fn file_error(source: FitsError) -> Error {
    Error::Fits {
        pointer: String::new(),
        source,
    }
}
