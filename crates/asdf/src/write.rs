//! Writing: a tree and its arrays to a new file, atomically (a temporary file beside the target,
//! then a rename), with blocks in the order their arrays first appear in the tree.

use std::path::{Path, PathBuf};

use asdf_core_types::{NdArray, Source};
use asdf_layout::{BlockOptions, Label, Writer};
use asdf_yaml::{Document, EmitOptions, Node, NodeKind, Step};

use crate::{AsdfFile, Error};

/// How blocks are compressed on write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Compression {
    /// Keep each block's compression (new arrays: none).
    Keep,
    /// Write every block with this label (`Label::NONE` removes compression).
    All(Label),
}

/// Options for [`AsdfFile::write_to`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct WriteOptions {
    /// Block compression.
    pub compression: Compression,
    /// Write MD5 checksums (default on).
    pub checksums: bool,
    /// Write the block index (default on).
    pub index: bool,
    /// Validate the tree before writing (default on).
    pub validate: bool,
}

impl Default for WriteOptions {
    fn default() -> Self {
        Self {
            compression: Compression::Keep,
            checksums: true,
            index: true,
            validate: true,
        }
    }
}

impl WriteOptions {
    /// Sets the compression of every block.
    #[must_use]
    pub fn compression(mut self, c: Compression) -> Self {
        self.compression = c;
        self
    }
    /// Sets whether checksums are written.
    #[must_use]
    pub fn checksums(mut self, yes: bool) -> Self {
        self.checksums = yes;
        self
    }
    /// Sets whether the block index is written.
    #[must_use]
    pub fn index(mut self, yes: bool) -> Self {
        self.index = yes;
        self
    }
    /// Sets validation before writing.
    #[must_use]
    pub fn validate(mut self, yes: bool) -> Self {
        self.validate = yes;
        self
    }
}

/// Where a block of the written file comes from.
enum BlockSrc {
    /// Block `i` of the file that was opened.
    Existing(usize),
    /// Pending data added with [`AsdfFile::add_array`].
    New(usize),
}

/// The ndarrays of the tree with block sources, in the order they are met.
fn block_arrays(root: &Node) -> Vec<Vec<Step>> {
    let mut out = Vec::new();
    let mut stack: Vec<(&Node, Vec<Step>)> = vec![(root, Vec::new())];
    while let Some((n, path)) = stack.pop() {
        if n.tag.as_deref().is_some_and(|t| t.contains("core/ndarray-")) {
            if n.get("source").is_some_and(|s| s.as_i64().is_some()) {
                out.push(path.clone());
            }
            // A mask array may have its own block.
            if let Some(i) = n
                .as_mapping()
                .and_then(|m| m.entries.iter().position(|(k, _)| k.as_str() == Some("mask")))
            {
                let mut p = path.clone();
                p.push(Step::Entry(i));
                if let Some(m) = n.step(Step::Entry(i)) {
                    stack.push((m, p));
                }
            }
            continue;
        }
        match &n.kind {
            NodeKind::Mapping(m) => {
                for (i, (_, v)) in m.entries.iter().enumerate().rev() {
                    let mut p = path.clone();
                    p.push(Step::Entry(i));
                    stack.push((v, p));
                }
            }
            NodeKind::Sequence(s) => {
                for (i, v) in s.items.iter().enumerate().rev() {
                    let mut p = path.clone();
                    p.push(Step::Item(i));
                    stack.push((v, p));
                }
            }
            _ => {}
        }
    }
    out
}

fn temp_path(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let unique = format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    );
    target.with_file_name(unique)
}

impl AsdfFile {
    /// The full tag this file's standard version uses for `name` (`core/ndarray` ->
    /// `tag:stsci.edu:asdf/core/ndarray-1.1.0` for 1.6.0, `...-1.0.0` before).
    ///
    /// # Errors
    /// [`Error::NotFound`] when the standard version has no such tag.
    pub fn tag_for(&self, name: &str) -> Result<String, Error> {
        let schemas = asdf_core_types::schemas().map_err(|e| Error::Schema(e.to_string()))?;
        let v = self.standard;
        let prefix = format!("{}{name}-", asdf_yaml::node::tags::ASDF);
        schemas
            .tags_for_standard((v.major, v.minor, v.patch))
            .into_iter()
            .map(|t| t.tag)
            .find(|t| t.starts_with(&prefix))
            .ok_or_else(|| Error::NotFound(format!("tag {name} in ASDF Standard {v}")))
    }

    /// Adds an array stored in a new block: `data` holds the elements in C order and the byte
    /// order given; the ndarray node (tagged with the file's standard's ndarray version) is
    /// placed at `pointer`.
    ///
    /// # Errors
    /// [`Error::NotFound`] when the parent of `pointer` does not exist; a data length that does
    /// not match datatype and shape ([`Error::Array`]).
    pub fn add_array(
        &mut self,
        pointer: &str,
        datatype: asdf_core_types::Datatype,
        shape: &[usize],
        byteorder: asdf_core_types::ByteOrder,
        data: Vec<u8>,
    ) -> Result<(), Error> {
        let want = datatype.size() * shape.iter().product::<usize>();
        if data.len() != want {
            return Err(Error::Array {
                pointer: pointer.to_owned(),
                source: asdf_core_types::NdArrayError::ShapeMismatch,
            });
        }
        let index = self.reader.block_count() + self.pending.len();
        self.pending.push(data);
        let a = NdArray {
            source: Some(Source::Block(i64::try_from(index).unwrap_or(i64::MAX))),
            data: None,
            datatype: Some(datatype),
            byteorder,
            shape: Some(shape.iter().map(|d| asdf_core_types::Dim::Fixed(*d)).collect()),
            offset: 0,
            strides: None,
            mask: None,
        };
        let tag = self.tag_for("core/ndarray")?;
        asdf_yaml::pointer::set(&mut self.doc, pointer, a.to_node(&tag))
            .map_err(|_| Error::NotFound(pointer.to_owned()))?;
        Ok(())
    }

    /// The root, mutably (edit the tree, then [`AsdfFile::write_to`]).
    pub fn tree_mut(&mut self) -> &mut Node {
        &mut self.doc.root
    }

    /// The bytes of a complete file: this tree (with `asdf_library` naming this library) and
    /// every array block it references, renumbered in the order the arrays appear.
    ///
    /// # Errors
    /// Validation failures (with `validate`), block read or codec errors.
    pub fn to_bytes(&self, options: &WriteOptions) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        self.write_into(&mut out, options)?;
        Ok(out)
    }

    /// Writes the file to `path` atomically: into a temporary file in the same directory, then
    /// renamed over `path`, so a crash leaves either the old file or the new one.
    ///
    /// # Errors
    /// As [`AsdfFile::to_bytes`], plus I/O errors.
    pub fn write_to(&self, path: impl AsRef<Path>, options: &WriteOptions) -> Result<(), Error> {
        let path = path.as_ref();
        let io = |source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        let tmp = temp_path(path);
        let result = (|| {
            let f = std::fs::File::create(&tmp).map_err(io)?;
            let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
            self.write_into(&mut w, options)?;
            let f = w.into_inner().map_err(|e| io(e.into_error()))?;
            f.sync_all().map_err(io)?;
            std::fs::rename(&tmp, path).map_err(io)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result
    }

    fn write_into<W: std::io::Write>(&self, out: &mut W, options: &WriteOptions) -> Result<(), Error> {
        let mut doc: Document = self.doc.clone();
        // Renumber block sources in order of appearance.
        let arrays = block_arrays(&doc.root);
        let total = self.reader.block_count() + self.pending.len();
        let mut order: Vec<BlockSrc> = Vec::new();
        let mut map: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
        for path in &arrays {
            let Some(n) = node_at_mut(&mut doc.root, path) else {
                continue;
            };
            let Some(src) = n.get("source").and_then(Node::as_i64) else {
                continue;
            };
            let old = if src < 0 {
                i64::try_from(total).unwrap_or(0) + src
            } else {
                src
            };
            let old = usize::try_from(old).map_err(|_| Error::NotFound(format!("block {src}")))?;
            let new = *map.entry(old).or_insert_with(|| {
                order.push(if old < self.reader.block_count() {
                    BlockSrc::Existing(old)
                } else {
                    BlockSrc::New(old - self.reader.block_count())
                });
                order.len() - 1
            });
            if let Some(s) = n.get_mut("source") {
                *s = Node::int(i64::try_from(new).unwrap_or(i64::MAX));
            }
        }
        if options.validate {
            let schemas = asdf_core_types::schemas().map_err(|e| Error::Schema(e.to_string()))?;
            let r = schemas.validate_document(&doc);
            if !r.violations.is_empty() {
                return Err(Error::Invalid(r.violations));
            }
        }
        if let Some(m) = doc.root.as_mapping_mut() {
            let lib = Node::map(vec![
                (Node::str("author"), Node::str("The asdf-rs developers")),
                (Node::str("name"), Node::str("asdf-rs")),
                (Node::str("version"), Node::str(env!("CARGO_PKG_VERSION"))),
            ])
            .with_tag(self.tag_for("core/software")?);
            match m.get_mut("asdf_library") {
                Some(v) => *v = lib,
                None => m.entries.insert(0, (Node::str("asdf_library"), lib)),
            }
        }
        if doc.version.is_none() {
            doc.version = Some((1, 1));
        }
        let tree = asdf_yaml::emit(&doc, &EmitOptions::default())?;
        let mut w = Writer::new(out, self.standard)?;
        w.write_tree(&tree)?;
        let label = match options.compression {
            Compression::All(l) => Some(l),
            Compression::Keep => None,
        };
        let opts = BlockOptions::default().checksum(options.checksums);
        for src in &order {
            match src {
                BlockSrc::Existing(i) => {
                    let b = self.reader.block(*i)?;
                    let same = label.is_none_or(|l| l == b.compression());
                    if same && !b.header.is_streamed() {
                        // Copied without decoding.
                        let stored = self.reader.read_stored(*i)?;
                        w.write_encoded_block(&stored, b.header, &opts.compression(b.compression()))?;
                    } else {
                        let data = self.reader.read_data(*i)?;
                        w.write_block(&data, &opts.compression(label.unwrap_or(Label::NONE)))?;
                    }
                }
                BlockSrc::New(k) => {
                    w.write_block(&self.pending[*k], &opts.compression(label.unwrap_or(Label::NONE)))?;
                }
            }
        }
        w.finish(options.index)?;
        Ok(())
    }
}

fn node_at_mut<'a>(root: &'a mut Node, path: &[Step]) -> Option<&'a mut Node> {
    let mut n = root;
    for s in path {
        n = n.step_mut(*s)?;
    }
    Some(n)
}
