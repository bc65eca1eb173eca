//! Where a file's bytes come from ([`AsdfFile::source`]): the reader and its blocks, the path
//! and what it looked like when opened (the write guard), a remote file's fetch counts, the
//! FITS file an ASDF file was read from, and the other files it reads.

use std::path::PathBuf;

use asdf_fits::Hdu;
use asdf_layout::{ReadAt, Reader};

use asdf_yaml::Node;

use crate::blocks::Block;
use crate::error::Error;
use crate::file::AsdfFile;
use asdf_fits::file::AsdfHdu;

/// The source of an [`AsdfFile`]: see [`AsdfFile::source`].
#[derive(Debug, Clone, Copy)]
pub struct Source<'f> {
    file: &'f AsdfFile,
}

impl AsdfFile {
    /// Where the file's bytes come from: its blocks, the byte-layout reader, the path and
    /// whether it changed on disk since it was opened, a remote file's fetch counts, the FITS
    /// file it was read from.
    #[must_use]
    pub fn source(&self) -> Source<'_> {
        Source { file: self }
    }
}

impl<'f> Source<'f> {
    /// Whether the file opened from a path is still the file that was opened (same device,
    /// inode, length and modification time): `false` once another writer has replaced or
    /// changed it, and for files not opened from a path.
    #[must_use]
    pub fn unchanged_on_disk(&self) -> bool {
        match (&self.file.path, &self.file.opened) {
            (Some(p), Some(fp)) => std::fs::metadata(p).is_ok_and(|m| asdf_layout::guard::Fingerprint::of(&m) == *fp),
            _ => false,
        }
    }

    /// What this file's remote source has fetched (requests, bytes, ranges); `None` for a
    /// local file (feature `remote`).
    #[must_use]
    pub fn remote_stats(&self) -> Option<std::sync::Arc<crate::net::RemoteStats>> {
        self.file.remote.clone()
    }

    /// The byte-layout reader underneath (every block header and raw access); most callers
    /// want [`Source::blocks`].
    #[must_use]
    pub fn layout(&self) -> &'f Reader<Box<dyn ReadAt>> {
        &self.file.reader
    }

    /// For a file read from FITS, the form its ASDF HDU has (what writing it back keeps).
    #[must_use]
    pub fn fits_asdf_form(&self) -> Option<AsdfHdu> {
        self.file.fits.as_ref().map(|f| f.asdf_form())
    }

    /// Whether `path` names the file this one was opened from.
    #[must_use]
    pub fn is_own_path(&self, path: impl AsRef<std::path::Path>) -> bool {
        self.file.is_own_file(path.as_ref())
    }

    /// The HDUs of the FITS file this ASDF file was read from (`None` for an ASDF file).
    #[must_use]
    pub fn fits_hdus(&self) -> Option<&'f [Hdu]> {
        self.file.fits.as_deref().map(|f| f.hdus.as_slice())
    }

    /// Every block of the file, as handles (header fields, offsets, checksum state, reads
    /// into a caller's buffer).
    pub fn blocks(&self) -> impl ExactSizeIterator<Item = Block<'f>> + 'f {
        let file = self.file;
        (0..file.reader.block_count()).map(move |index| Block { file, index })
    }

    /// Block `index` of the file.
    ///
    /// # Errors
    /// [`Error::NotFound`] when the file has no such block; for a remote file, whose blocks
    /// past the first are found on first need, what finding them met.
    pub fn block(&self, index: usize) -> Result<Block<'f>, Error> {
        if self.file.reader.has_block(index)? {
            Ok(Block { file: self.file, index })
        } else {
            let count = self.file.reader.find_blocks()?;
            Err(Error::NotFound(format!("block {index} (the file has {count})")))
        }
    }

    /// The files this file reads from: its own path and the external array files (exploded
    /// form) that its ndarrays name, where they exist.
    #[must_use]
    pub fn input_files(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = self.file.path.iter().cloned().collect();
        let doc = self.file.doc();
        doc.root.walk(&mut |_, n| {
            if let Some(src) = n.get("source").and_then(Node::as_str)
                && let Ok(Some(p)) = self.file.referenced_path(src)
                && p.exists()
            {
                out.push(p);
            }
            true
        });
        out
    }

    /// The folders this file reads from besides its files: the Zarr directory stores its
    /// chunked arrays name (`store`, `meta_store`), resolved (links followed) where they
    /// exist, whatever the reference policy says of them. No output may go inside one.
    #[must_use]
    pub fn input_folders(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let doc = self.file.doc();
        let dir = self.file.dir.clone().unwrap_or_else(|| PathBuf::from("."));
        doc.root.walk(&mut |_, n| {
            if n.tag.as_deref().is_some_and(crate::is_zarr_tag) {
                for key in ["store", "meta_store"] {
                    let Some(store) = n.get(key) else { continue };
                    let path = asdf_chunked::local_store_path(store);
                    if let Some(p) = path
                        && let Ok(real) = dir.join(p).canonicalize()
                    {
                        out.push(real);
                    }
                }
            }
            true
        });
        out
    }
}
