//! Writing: a tree and its arrays to a new file, atomically (a temporary file beside the target,
//! then a rename), with blocks in the order their arrays first appear in the tree.

use std::path::{Path, PathBuf};

use asdf_core_types::NdArray;
use asdf_layout::{BlockOptions, Label, Writer, copy};
use asdf_yaml::{Document, EmitOptions, Node};
use std::io::Write as _;

use crate::target::{Compression, WriteOptions};
use crate::{AsdfFile, Error};
use asdf_core_types::numbering::{ExplodeError, Facts, Numbering, NumberingError, PartSource, explode, number_blocks};
use asdf_layout::atomic::{Dest, Sink, TempFile, Volatile, destination, not_regular};

/// Writes a file atomically, as [`AsdfFile::write`] does: `fill` writes into a new
/// temporary file beside `path`, which is flushed to disk and renamed over `path` only when
/// `fill` succeeded; otherwise it is removed and `path` is untouched (a full disk never
/// leaves half a file in place of the old one). A device or FIFO is written in place.
///
/// # Errors
/// [`Error::Io`] from `fill` or the file system.
pub fn write_atomically(
    path: impl AsRef<Path>,
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), Error> {
    Ok(asdf_layout::atomic::write_atomically(path, fill)?)
}

/// What a FITS write keeps out of the blocks of the ASDF file it embeds (the data goes into
/// HDUs): an argument of the block writer, not an option a caller can set.
#[derive(Debug, Default)]
pub(crate) struct KeptOut {
    /// The ndarrays (by pointer) whose string sources are written as they are, not brought
    /// into the file.
    pub(crate) sources: std::collections::HashSet<String>,
    /// Blocks of the file read whose arrays moved elsewhere: never copied (an empty block
    /// keeps their number where every block keeps its place).
    pub(crate) blocks: std::collections::HashSet<usize>,
}

impl AsdfFile {
    /// The bytes of a complete file: this tree (with `asdf_library` naming this library) and
    /// every array block it references, renumbered in the order the arrays appear.
    ///
    /// # Errors
    /// Validation failures (with `validate`), block read or codec errors.
    pub(crate) fn to_bytes(&self, options: &WriteOptions) -> Result<Vec<u8>, Error> {
        let mut out = std::io::Cursor::new(Vec::new());
        self.write_into(&mut out, options)?;
        Ok(out.into_inner())
    }

    /// Locks the file this file was opened from (at `path`) and checks it is unchanged.
    pub(crate) fn lock_unchanged(&self, path: &Path) -> Result<std::fs::File, Error> {
        // In a FITS file, the tree is in the ASDF HDU's data.
        let inside = self.fits.as_ref().map_or(0, |f| f.asdf_at);
        let tree_at = inside + self.reader.tree_range().map_or(0, |r| r.start);
        Ok(asdf_layout::guard::lock_unchanged(
            path,
            self.opened.as_ref(),
            tree_at,
            self.reader.tree_bytes(),
        )?)
    }

    /// [`AsdfFile::write`] without the lock.
    /// `release_old`: the file replaced is not read by this write (see
    /// [`TempFile::release_replaced`]).
    pub(crate) fn write_atomic(&self, path: &Path, options: &WriteOptions, release_old: bool) -> Result<(), Error> {
        match self.stage_atomic(path, options, release_old)? {
            Some((tmp, f)) => Ok(tmp.commit(f, options.durable)?),
            None => Ok(()),
        }
    }

    /// [`AsdfFile::write_atomic`] up to the rename: the complete temporary file beside the
    /// target, to be committed by the caller (`None`: a device or FIFO, written into already).
    pub(crate) fn stage_atomic(
        &self,
        path: &Path,
        options: &WriteOptions,
        release_old: bool,
    ) -> Result<Option<(TempFile, std::fs::File)>, Error> {
        let path = match destination(path) {
            Dest::InPlace => {
                // A device or a FIFO: the whole file, made in memory, written into it.
                let bytes = self.to_bytes(options)?;
                return write_atomically(path, |w| w.write_all(&bytes)).map(|()| None);
            }
            Dest::Atomic(p) => p,
        };
        let (tmp, f) = TempFile::create(&path)?;
        if release_old {
            tmp.release_replaced();
        }
        let w = std::io::BufWriter::with_capacity(1 << 20, f);
        let w = if options.durable {
            let mut w = w;
            self.write_into(&mut w, options)?;
            w
        } else {
            let mut w = Volatile(w);
            self.write_into(&mut w, options)?;
            w.0
        };
        let f = w.into_inner().map_err(|e| tmp.error(e.into_error()))?;
        Ok(Some((tmp, f)))
    }

    fn write_into<W: Sink>(&self, out: &mut W, options: &WriteOptions) -> Result<(), Error> {
        self.write_doc_into(self.doc(), out, options, &KeptOut::default())
    }

    /// Writes the file with the tree `doc` (this file's, or an edited copy of it).
    pub(crate) fn write_doc_into<W: Sink>(
        &self,
        doc: &Document,
        out: &mut W,
        options: &WriteOptions,
        kept: &KeptOut,
    ) -> Result<(), Error> {
        let (w, stream) = self.write_blocks(doc, out, options, kept, false)?;
        match stream {
            // The file's streamed block stays streamed (as Python asdf writes it): last, with
            // no block index after it.
            Some(i) => {
                copy::finish_streamed(w, &self.reader, i)?;
            }
            None => {
                w.finish(options.index)?;
            }
        }
        Ok(())
    }

    /// Writes header, tree and blocks of `doc` (this file's tree, possibly edited) and returns
    /// the writer, ready for the index or a streamed block, and the file's streamed block when
    /// it is to be written last as one (its arrays keep their `*` dimension, source -1).
    fn write_blocks<W: Sink>(
        &self,
        doc: &Document,
        out: W,
        options: &WriteOptions,
        kept: &KeptOut,
        stream_target: bool,
    ) -> Result<(Writer<W>, Option<usize>), Error> {
        let existing = self.reader.block_count();
        let gone = |i: usize| kept.blocks.contains(&i) || self.replaced.contains(&i);
        let data = |i: usize| match i.checked_sub(existing) {
            Some(k) => Some(std::borrow::Cow::Borrowed(self.pending.get(k)?.data.as_slice())),
            None => self.reader.read_data(i).ok(),
        };
        let len = |i: usize| self.reader.block(i).map(|b| b.data_len());
        let facts = Facts {
            existing,
            pending: self.pending.len(),
            gone: &gone,
            old_stream: existing
                .checked_sub(1)
                .filter(|&i| self.reader.block(i).is_ok_and(|b| b.header.is_streamed())),
            internalize: options.internalize,
            kept_sources: &kept.sources,
            stream_target,
            data: &data,
            len: &len,
        };
        let Numbering {
            edits,
            order,
            as_is,
            keep_stream,
        } = number_blocks(doc, &facts).map_err(|e| match e {
            NumberingError::NoBlock { source, total } => {
                Error::NotFound(format!("block {source} (the file has {total})"))
            }
            NumberingError::TooMany(new) => Error::NotFound(format!("block {new} (a chunk map holds int32)")),
            NumberingError::Array(source) => Error::Array {
                pointer: String::new(),
                source,
            },
            NumberingError::Block(e) => e.into(),
        })?;
        let tree = self.finished_tree(doc, edits, options)?;
        let mut w = Writer::with_comments(out, self.standard, &[], options.registry())?;
        w.write_tree(&tree)?;
        if options.pad_blocks {
            // Room for the tree to grow, as Python asdf leaves it: NULs up to a 4 KiB boundary.
            let used = w.position();
            w.write_padding(asdf_layout::padded_size(used) - used, 0)?;
        }
        let new = |k: usize| {
            let b = &self.pending[k];
            let l = if b.as_is {
                b.compression.unwrap_or(Label::NONE)
            } else {
                options.new_block_label(b.compression)
            };
            (b.data.as_slice(), l)
        };
        let external = |uri: &str| self.external_block(uri, "");
        let sources = copy::Sources {
            reader: &self.reader,
            new: &new,
            external: &external,
            recompress: match options.compression {
                Compression::All(l) => Some(l),
                Compression::Keep => None,
            },
            as_is: &as_is,
            options: BlockOptions::default()
                .checksum(options.checksums)
                .pad_blocks(options.pad_blocks),
            progress: options.progress.as_ref().map(|p| &*p.0),
        };
        copy::write_blocks(&mut w, &order, &sources)?;
        Ok((w, keep_stream))
    }

    /// Writes this file with a streamed array at `pointer` (datatype, byte order and the shape
    /// of one row given; the first dimension grows as rows are appended). Rows go straight to
    /// disk through the returned writer, with bounded memory; [`StreamingWriter::finish`] puts
    /// the file at `path` (until then it is a temporary file beside it).
    ///
    /// # Errors
    /// As [`AsdfFile::write`].
    pub fn write_streamed(
        &self,
        path: impl AsRef<Path>,
        pointer: &str,
        datatype: asdf_core_types::Datatype,
        row_shape: &[usize],
        byteorder: asdf_core_types::ByteOrder,
        options: &WriteOptions,
    ) -> Result<StreamingWriter, Error> {
        let path = path.as_ref().to_path_buf();
        let row_bytes = datatype.size() * row_shape.iter().product::<usize>();
        let dims = std::iter::once(asdf_core_types::Dim::Streamed)
            .chain(row_shape.iter().map(|d| asdf_core_types::Dim::Fixed(*d)))
            .collect();
        let a = NdArray::in_block(-1, datatype, byteorder, dims);
        let mut doc = self.doc().clone();
        asdf_yaml::pointer::set(&mut doc, pointer, a.to_node(&self.tag_for("core/ndarray")?))
            .map_err(|_| Error::NotFound(pointer.to_owned()))?;
        let path = match destination(&path) {
            Dest::Atomic(p) => p,
            Dest::InPlace => return Err(not_regular(&path).into()),
        };
        let (tmp, file) = TempFile::create(&path)?;
        let (w, _) = self.write_blocks(
            &doc,
            std::io::BufWriter::with_capacity(1 << 20, file),
            options,
            &KeptOut::default(),
            true,
        )?;
        Ok(StreamingWriter {
            inner: Some(w.start_stream()?),
            row_bytes,
            rows: 0,
            tmp,
        })
    }

    /// Writes the file in exploded form: `path` holds the tree, and each array block goes to
    /// its own ASDF file beside it (`name0000.asdf`, `name0001.asdf`, ...), referenced by
    /// relative file name.
    ///
    /// # Errors
    /// As [`AsdfFile::write`].
    pub(crate) fn write_exploded(&self, path: impl AsRef<Path>, options: &WriteOptions) -> Result<Vec<PathBuf>, Error> {
        let path = path.as_ref();
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let (file_blocks, total) = (
            self.reader.block_count(),
            self.reader.block_count() + self.pending.len(),
        );
        let plan = explode(self.doc(), file_blocks, total, &stem).map_err(|e| match e {
            ExplodeError::Chunked(pointer) => Error::NotSupported {
                pointer,
                problem: "a chunked array has no place in the exploded form (its chunks are blocks its chunk map names): write the file whole",
            },
            ExplodeError::Unnamed(blocks) => Error::UnnamedBlocks { blocks },
            _ => Error::NotFound("the exploded form".to_owned()),
        })?;
        // No output may be the input (or a file it refers to): it would be replaced before
        // everything was read from it.
        let inputs = self.source().input_files();
        let outputs = plan.parts.iter().map(|p| dir.join(&p.name));
        for out in outputs.chain(std::iter::once(path.to_path_buf())) {
            if let Some(i) = inputs.iter().find(|i| asdf_layout::guard::same_file(&out, i)) {
                return Err(Error::OutputIsInput {
                    output: out,
                    input: i.clone(),
                });
            }
        }
        let mut staged = Vec::new();
        for part in &plan.parts {
            let block = match &part.source {
                PartSource::Block(i) => match self
                    .block_ref(*i)?
                    .ok_or_else(|| Error::NotFound(format!("block {i}")))?
                {
                    crate::file::BlockIndex::Pending(k) => self.pending[k].clone(),
                    crate::file::BlockIndex::File(idx) => {
                        // A corrupt block is not given a fresh checksum in its part.
                        self.reader.verify_checksum(idx)?;
                        crate::file::NewBlock {
                            data: self.reader.read_data(idx)?.into_owned(),
                            compression: None,
                            as_is: false,
                        }
                    }
                },
                PartSource::External(uri) => crate::file::NewBlock {
                    data: self.external_block(uri, "")?,
                    compression: None,
                    as_is: false,
                },
            };
            // Each block file is a complete ASDF file holding just that block.
            staged.push(self.stage_part(dir.join(&part.name), &block, options)?);
        }
        let mut main = AsdfFile::new(self.standard)?;
        main.put_doc(plan.doc);
        main.dir = self.dir.clone();
        // Nothing is put in place until every file is complete: a failure on the way (a full
        // disk, an output that is a folder) leaves every existing file as it was.
        let main_staged = main.stage_atomic(path, &options.clone().internalize(false), true)?;
        for target in staged.iter().map(|(p, ..)| p.as_path()).chain(std::iter::once(path)) {
            if target.is_dir() || target.as_os_str().as_encoded_bytes().ends_with(b"/") {
                return Err(Error::Io {
                    path: target.to_path_buf(),
                    source: std::io::Error::from(std::io::ErrorKind::IsADirectory),
                });
            }
        }
        let mut written = vec![path.to_path_buf()];
        for (p, tmp, f) in staged {
            tmp.commit(f, options.durable)?;
            written.push(p);
        }
        if let Some((tmp, f)) = main_staged {
            tmp.commit(f, options.durable)?;
        }
        Ok(written)
    }

    /// A file of `block` alone under a tree naming this library, complete in a temporary file
    /// beside `path` that the caller commits: a part of the exploded form.
    fn stage_part(
        &self,
        path: PathBuf,
        block: &crate::file::NewBlock,
        options: &WriteOptions,
    ) -> Result<(PathBuf, TempFile, std::fs::File), Error> {
        let path = match destination(&path) {
            Dest::Atomic(p) => p,
            Dest::InPlace => return Err(not_regular(&path).into()),
        };
        let (tmp, file) = TempFile::create(&path)?;
        let mut doc = AsdfFile::new(self.standard)?.doc().clone();
        if let Some(m) = doc.root.as_mapping_mut() {
            m.insert("asdf_library", self.library_node()?);
        }
        let tree = asdf_yaml::emit(&doc, &EmitOptions::default())?;
        let mut w = Writer::with_comments(std::io::BufWriter::new(file), self.standard, &[], options.registry())?;
        w.write_tree(&tree)?;
        let label = options.new_block_label(block.compression);
        w.write_block_overlapped(
            &block.data,
            &BlockOptions::default().checksum(options.checksums).compression(label),
        )?;
        let out = w.finish(options.index)?;
        let f = out.into_inner().map_err(|e| tmp.error(e.into_error()))?;
        Ok((path, tmp, f))
    }

    /// The YAML text written for `doc` with `edits`: validated (when asked), `asdf_library`
    /// naming this library, `%YAML 1.1` when the document has no version.
    pub(crate) fn finished_tree(
        &self,
        doc: &Document,
        edits: asdf_yaml::Edits,
        options: &WriteOptions,
    ) -> Result<Vec<u8>, Error> {
        let validate = options.validate;
        if crate::UNSTABLE_STANDARDS.contains(&self.standard)
            && !options.unstable_standard
            && std::env::var_os("ASDF_UNSTABLE_CORE_SCHEMAS").is_none()
        {
            return Err(Error::UnstableStandard(self.standard));
        }
        let v = self.standard;
        Ok(asdf_core_types::finish::finished_tree(
            doc,
            edits,
            (v.major, v.minor, v.patch),
            validate,
        )?)
    }

    fn library_node(&self) -> Result<Node, Error> {
        let v = self.standard;
        Ok(asdf_core_types::finish::library_node((v.major, v.minor, v.patch))?)
    }
}

/// Appends rows to a file's streamed array; see [`AsdfFile::write_streamed`].
#[derive(Debug)]
pub struct StreamingWriter {
    inner: Option<asdf_layout::StreamWriter<std::io::BufWriter<std::fs::File>>>,
    row_bytes: usize,
    rows: u64,
    tmp: TempFile,
}

impl StreamingWriter {
    /// Appends whole rows (`bytes.len()` must be a multiple of the row size).
    ///
    /// # Errors
    /// A partial row ([`Error::Array`]); I/O errors.
    pub fn write_rows(&mut self, bytes: &[u8]) -> Result<(), Error> {
        if self.row_bytes == 0 || !bytes.len().is_multiple_of(self.row_bytes) {
            return Err(Error::Array {
                pointer: String::new(),
                source: asdf_core_types::NdArrayError::ShapeMismatch,
            });
        }
        let w = self
            .inner
            .as_mut()
            .ok_or(Error::Usage("the stream is already finished"))?;
        w.write_all(bytes).map_err(|e| self.tmp.error(e))?;
        self.rows += (bytes.len() / self.row_bytes) as u64;
        Ok(())
    }

    /// Rows written so far.
    #[must_use]
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Flushes, syncs and moves the file to its path.
    ///
    /// # Errors
    /// I/O errors (the temporary file is removed).
    pub fn finish(mut self) -> Result<(), Error> {
        let w = self
            .inner
            .take()
            .ok_or(Error::Usage("the stream is already finished"))?;
        let buf = w.finish()?;
        let f = buf.into_inner().map_err(|e| self.tmp.error(e.into_error()))?;
        Ok(self.tmp.commit(f, true)?)
    }
}
