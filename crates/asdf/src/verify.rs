//! [`AsdfFile::verify`]: every block read, decoded and checksummed, every array's view checked
//! against its block; on every core, in bounded memory. The CLI's `verify` and `validate` and
//! the Python bindings' `verify` all call it.

use std::path::PathBuf;

use crate::{AsdfFile, Error, layout::ChecksumStatus};

/// What [`AsdfFile::verify`] found: one result per block (in block order) and one per array
/// whose view or data could not be read.
#[derive(Debug)]
#[non_exhaustive]
pub struct VerifyReport {
    /// Each block's checksum status, or why it could not be read, decoded or checksummed.
    pub blocks: Vec<(usize, Result<ChecksumStatus, Error>)>,
    /// The arrays (JSON pointers) whose view does not fit their block, or whose data (inline
    /// arrays, masks) could not be read.
    pub arrays: Vec<(String, Error)>,
    /// For a file in FITS: each HDU's `DATASUM` and `CHECKSUM` cards checked against its bytes
    /// (`Ok(false)`: it has neither), in HDU order.
    pub hdus: Vec<(usize, Result<bool, Error>)>,
}

impl VerifyReport {
    /// Whether every block and every array passed.
    #[must_use]
    pub fn is_ok(&self) -> bool {
        self.arrays.is_empty() && self.blocks.iter().all(|(_, r)| r.is_ok()) && self.hdus.iter().all(|(_, r)| r.is_ok())
    }

    /// Every problem as one line that says where it is (`block 3: ...`, `/data: ...`), each
    /// once (one cause, an unknown compression say, can show for a block and its array).
    #[must_use]
    pub fn problems(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (i, r) in &self.blocks {
            if let Err(e) = r {
                let m = e.to_string();
                out.push(if m.starts_with("block ") {
                    m
                } else {
                    format!("block {i}: {m}")
                });
            }
        }
        for (i, r) in &self.hdus {
            if let Err(e) = r {
                let m = e.to_string();
                out.push(if m.starts_with("HDU ") {
                    m
                } else {
                    format!("HDU {i}: {m}")
                });
            }
        }
        for (p, e) in &self.arrays {
            let m = e.to_string();
            out.push(if m.starts_with('/') { m } else { format!("{p}: {m}") });
        }
        let mut seen = std::collections::HashSet::new();
        out.retain(|p| seen.insert(p.clone()));
        out
    }
}

impl AsdfFile {
    /// Reads every block, decodes it and checks its checksum, and checks every array's view
    /// against its block (shape, strides, datatype, offset; inline arrays and masks are
    /// decoded); every chunk of a chunked array whose chunks are not the file's blocks (a
    /// Zarr directory store) is read and decoded, a row of the chunk grid at a time. Blocks are checked on every core, each decoded in pieces and hashed on the
    /// way: memory stays bounded by a piece per core whatever the blocks hold or claim.
    ///
    /// `progress(blocks done, blocks)` is called as blocks are checked.
    pub fn verify(&self, progress: Option<&(dyn Fn(usize, usize) + Sync)>) -> VerifyReport {
        asdf_layout::compression::exec::with_threads(self.options.threads, || self.verify_all(progress))
    }

    fn verify_all(&self, progress: Option<&(dyn Fn(usize, usize) + Sync)>) -> VerifyReport {
        let progress = progress.unwrap_or(&|_, _| {});
        let r = &self.reader;
        let count = r.block_count();
        let done = std::sync::atomic::AtomicUsize::new(0);
        // The one executor (asdf_codecs::exec): results in block order; a panic in a
        // worker goes on in the caller, so every block has its result.
        let blocks: Vec<(usize, Result<ChecksumStatus, Error>)> = asdf_layout::compression::exec::par_map(count, |i| {
            let result = r.check_block(i).map_err(Error::from);
            progress(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1, count);
            (i, result)
        });
        let mut arrays = Vec::new();
        for p in self.array_pointers() {
            // A block-backed array's view was checked against its block when its handle was
            // made; inline arrays and masks are decoded to check them.
            let checked = self.array(&p).and_then(|a| {
                if a.view().is_ok() && !a.is_masked() {
                    Ok(())
                } else {
                    a.values().map(|_| ())
                }
            });
            if let Err(e) = checked {
                arrays.push((p, e));
            } else if let Some(e) = self.external_problem(&p) {
                arrays.push((p, e));
            }
        }
        // Chunked arrays: chunks that are blocks of the file were checked with the blocks;
        // those in a directory store beside it (or any other) are read and decoded here.
        let chunked = |p: &String| {
            self.get(p)
                .is_ok_and(|n| n.tag.as_deref().is_some_and(crate::is_chunked_array_tag))
        };
        for p in self.all_array_pointers().into_iter().filter(chunked) {
            if let Err(e) = self.array(&p).and_then(|a| a.decode_every_piece()) {
                arrays.push((p, e));
            }
        }
        let hdus = self.fits.as_ref().map_or_else(Vec::new, |fits| {
            (0..fits.hdus.len())
                .map(|i| {
                    let r = fits.verify_checksums(i).map_err(|source| Error::Fits {
                        pointer: String::new(),
                        source,
                    });
                    (i, r)
                })
                .collect()
        });
        VerifyReport { blocks, arrays, hdus }
    }

    /// For an ndarray whose block is in another file (the exploded form): that file's own
    /// blocks verified (a part whose checksum fails fails its array, as Python asdf's read
    /// with checksums does); `None` when it passes or the array is not external.
    fn external_problem(&self, pointer: &str) -> Option<Error> {
        let doc = self.doc();
        let uri = asdf_yaml::pointer::get(doc, pointer).ok()?.get("source")?.as_str()?;
        if uri.starts_with("fits:") {
            return None;
        }
        let external = |file: PathBuf, source: Error| Error::External {
            pointer: pointer.to_owned(),
            file,
            source: Box::new(source),
        };
        let path = match self.referenced_path(uri) {
            Ok(Some(p)) => p,
            // Refused or without a folder: the array's read already says so.
            _ => return None,
        };
        let part = match crate::Open::path(&path)
            .options(self.options.clone().validate(false))
            .open()
        {
            Ok(f) => f,
            Err(e) => return Some(external(path, e)),
        };
        let report = part.verify(None);
        report
            .blocks
            .into_iter()
            .find_map(|(_, r)| r.err())
            .or_else(|| report.arrays.into_iter().next().map(|(_, e)| e))
            .map(|e| external(path, e))
    }
}
