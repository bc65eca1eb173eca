//! The file type: [`AsdfFile`] is a document (the tree, with its edits and aliases) over a
//! source (the reader of the bytes it was opened from, its blocks, the fingerprint the write
//! guard checks) plus the blocks added since. Reading arrays is in `array`, editing in `edit`
//! and `builder`, writing in `write`, `update` and `fits_write`.
//!
//! What is there is in the types: an [`AsdfFile`] holds its tree, parsed and checked (every
//! open, every new file), so nothing that reads it can fail for want of it; a
//! [`crate::LazyFile`] (a lazy open, `lazy.rs`) holds the same source and a tree still to be
//! parsed. Both are a [`Core`] (the source: reader, blocks added since, options, where the file
//! came from), which array and block reads need and nothing more.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use asdf_layout::{ReadAt, Reader, Version};
use asdf_schema::{AsdfSchemas, Report};
use asdf_yaml::{Document, Node};

use crate::error::{Error, Warning, pointer_error};
use crate::options::OpenOptions;
use asdf_drafts::legacy;
use asdf_fits::file::FitsFile;

/// Which block a block source names: one of the file read, or one added since.
#[derive(Debug, Clone, Copy)]
pub(crate) enum BlockIndex {
    /// Block `i` of the file read.
    File(usize),
    /// Block `i` of those added since opening.
    Pending(usize),
}

/// The block of an array added since opening.
#[derive(Debug, Clone)]
pub(crate) struct NewBlock {
    /// The decoded bytes.
    pub(crate) data: Vec<u8>,
    /// Its own compression (`None`: as the write options say).
    pub(crate) compression: Option<asdf_layout::Label>,
    /// Written as it is, whatever the write options say (a chunk of a chunked array, which
    /// its own codec compressed, or its chunk map).
    pub(crate) as_is: bool,
}

/// The tree once parsed and checked, with every warning of the file (the source's first).
#[derive(Debug, Clone)]
pub(crate) struct Tree {
    pub(crate) doc: Document,
    pub(crate) warnings: Vec<Warning>,
    /// How many of the layout reader's warnings `warnings` holds: a remote file finds its
    /// blocks past the first on first need, and what that finds comes after.
    pub(crate) layout_seen: usize,
    /// `warnings` and the layout warnings found after it was made (set once they are).
    pub(crate) late: OnceLock<Vec<Warning>>,
}

/// An ASDF file: opened ([`crate::open`], [`crate::Open`]) or made in memory
/// ([`AsdfFile::new`]), its tree parsed and checked.
pub struct AsdfFile {
    pub(crate) core: Core,
    pub(crate) tree: Tree,
}

/// The source of a file, eager or lazy: what array and block reads need (not the tree).
/// Public only as the target of the files' internal `Deref`; it has no public items.
#[allow(unnameable_types)]
pub struct Core {
    pub(crate) reader: Reader<Box<dyn ReadAt>>,
    /// The path opened (for updates in place).
    pub(crate) path: Option<PathBuf>,
    pub(crate) dir: Option<PathBuf>,
    /// Warnings of the source (header, block index, the FITS container), before the tree's.
    pub(crate) source_warnings: Vec<Warning>,
    /// How many layout warnings `source_warnings` holds.
    pub(crate) layout_at_open: usize,
    pub(crate) standard: Version,
    pub(crate) options: OpenOptions,
    /// Line of the file where the tree starts (to report positions as file lines).
    pub(crate) tree_line: u64,
    /// Blocks of arrays added since opening, not yet written.
    pub(crate) pending: Vec<NewBlock>,
    /// Blocks of the file read whose arrays were stored anew ([`AsdfFile::chunk_arrays`]):
    /// left out of writes unless something still names them.
    pub(crate) replaced: std::collections::HashSet<usize>,
    /// What the file at `path` looked like when it was opened (for writes over it).
    pub(crate) opened: Option<asdf_layout::guard::Fingerprint>,
    /// The FITS file this ASDF file was read from (ASDF embedded in FITS).
    pub(crate) fits: Option<std::sync::Arc<FitsFile>>,
    /// What a remote file's source has fetched.
    pub(crate) remote: Option<std::sync::Arc<crate::net::RemoteStats>>,
    /// The URL a remote file was opened from and its options (for stores beside it).
    pub(crate) remote_origin: Option<(String, crate::net::RemoteOptions)>,
}

// The two file types reach their source's fields and methods as their own (`self.reader`).
#[doc(hidden)]
impl std::ops::Deref for AsdfFile {
    type Target = Core;
    fn deref(&self) -> &Core {
        &self.core
    }
}

#[doc(hidden)]
impl std::ops::DerefMut for AsdfFile {
    fn deref_mut(&mut self) -> &mut Core {
        &mut self.core
    }
}

impl fmt::Debug for Core {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Core")
            .field("standard", &self.standard)
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for AsdfFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A remote file's blocks past the first are found on need: a Debug print finds none
        // (no I/O), and says "not found yet" until something else did.
        let blocks: &dyn fmt::Debug = if self.reader.blocks_found() {
            &self.reader.block_count()
        } else {
            &"not found yet"
        };
        f.debug_struct("AsdfFile")
            .field("standard", &self.standard)
            .field("blocks", blocks)
            .field("warnings", &self.warnings())
            .finish_non_exhaustive()
    }
}

impl Core {
    /// The source of a file over `reader`, its tree still to be parsed.
    pub(crate) fn new(reader: Reader<Box<dyn ReadAt>>, standard: Version, options: OpenOptions) -> Self {
        let layout_at_open = reader.warnings().len();
        let mut source_warnings: Vec<Warning> = reader.warnings().iter().cloned().map(Warning::Layout).collect();
        if crate::UNSTABLE_STANDARDS.contains(&standard) {
            source_warnings.push(Warning::UnstableStandard(standard));
        }
        let tree_line = reader.file_header().comments.len() as u64 + 1;
        Core {
            reader,
            path: None,
            dir: None,
            source_warnings,
            layout_at_open,
            standard,
            options,
            tree_line,
            pending: Vec::new(),
            replaced: std::collections::HashSet::new(),
            opened: None,
            fits: None,
            remote: None,
            remote_origin: None,
        }
    }

    /// The tree `doc`, with the source's warnings and none of its own.
    pub(crate) fn tree_of(&self, doc: Document) -> Tree {
        Tree {
            doc,
            warnings: self.source_warnings.clone(),
            layout_seen: self.layout_at_open,
            late: OnceLock::new(),
        }
    }

    /// The warnings of a file of this source with tree `t` (`None`: not parsed yet).
    pub(crate) fn warnings_with<'a>(&'a self, t: Option<&'a Tree>) -> &'a [Warning] {
        let Some(t) = t else {
            return &self.source_warnings;
        };
        // A remote file's blocks past the first are found on first need: what finding them
        // warned of comes after the tree's warnings (the reader's are fixed once found).
        let layout = self.reader.warnings();
        match layout.get(t.layout_seen..) {
            Some(late) if !late.is_empty() => t.late.get_or_init(|| {
                let mut all = t.warnings.clone();
                all.extend(late.iter().cloned().map(Warning::Layout));
                all
            }),
            _ => &t.warnings,
        }
    }

    /// The tree of the file's text, parsed (errors and warnings at lines of the file).
    pub(crate) fn parse_text(&self) -> Result<(Document, Vec<asdf_yaml::Warning>), Error> {
        let tree_line = self.tree_line;
        Ok(match self.reader.tree_bytes() {
            Some(t) => {
                let parse = if self.options.keys_as_written {
                    asdf_yaml::parse_as_written
                } else if self.options.any_scalar_keys {
                    asdf_yaml::parse_yaml
                } else {
                    asdf_yaml::parse
                };
                let mut parsed = parse(t, &self.options.yaml_limits).map_err(|e| Error::Yaml(e.shifted(tree_line)))?;
                if self.options.any_scalar_keys {
                    let keys = asdf_yaml::keys::nonstandard_key_warnings(&parsed.document.root);
                    parsed.warnings.extend(keys);
                }
                let warnings = parsed.warnings.into_iter().map(|w| w.shifted(tree_line)).collect();
                (parsed.document, warnings)
            }
            None => (Document::new(Node::map(Vec::new())), Vec::new()),
        })
    }

    /// The tree parsed, mapped from older eras, its tags checked and (when asked) validated:
    /// the part of an open that reads the tree.
    pub(crate) fn parse_and_check(&self) -> Result<Tree, Error> {
        let (mut doc, yaml_warnings) = self.parse_text()?;
        let schemas = match &self.options.schemas {
            Some(s) => s.clone(),
            None => crate::schemas()?,
        };
        let fill = self.standard < Version::new(1, 6, 0);
        // asdf-zarr's tags (an extension's, with no schema) are understood when this build
        // reads chunked arrays. ASDF.jl's chunked ndarray tags are read too, but stay
        // reported: they claim the standard's namespace and no manifest lists them.
        let known = |t: &str| asdf_chunked::READS && asdf_core_types::chunk_tags::is_zarr_tag(t);
        let validate = self.options.validate;
        let report = legacy::check(&mut doc, &self.reader, &schemas, fill, validate, &known)
            .map_err(Error::BuiltinSchemas)?
            .shifted(self.tree_line);
        let mut warnings = self.source_warnings.clone();
        warnings.extend(yaml_warnings.into_iter().map(Warning::Yaml));
        warnings.extend(report.warnings.into_iter().map(Warning::Tag));
        if validate && self.options.strict && !report.violations.is_empty() {
            return Err(Error::Invalid(report.violations));
        }
        warnings.extend(report.violations.into_iter().map(Warning::Invalid));
        Ok(Tree {
            doc,
            warnings,
            layout_seen: self.layout_at_open,
            late: OnceLock::new(),
        })
    }

    /// Whether `path` names the file this one was opened from.
    pub(crate) fn is_own_file(&self, path: &Path) -> bool {
        self.path
            .as_deref()
            .is_some_and(|own| asdf_layout::guard::same_file(path, own))
    }
}

impl AsdfFile {
    /// The file of `core` whose tree is `tree`.
    pub(crate) fn of(core: Core, tree: Tree) -> Self {
        AsdfFile { core, tree }
    }

    /// The document.
    pub(crate) fn doc(&self) -> &Document {
        &self.tree.doc
    }

    /// The document to edit.
    pub(crate) fn doc_mut(&mut self) -> &mut Document {
        &mut self.tree.doc
    }

    /// Replaces the document (the warnings stay).
    pub(crate) fn put_doc(&mut self, doc: Document) {
        *self.doc_mut() = doc;
    }

    /// The root of the tree.
    #[must_use]
    pub fn tree(&self) -> &Node {
        &self.tree.doc.root
    }

    /// The parsed YAML document (its root and anchors).
    #[must_use]
    pub fn document(&self) -> &Document {
        &self.tree.doc
    }

    /// The node at a JSON pointer (`/sci/data`), aliases followed.
    ///
    /// # Errors
    /// [`Error::NotFound`], [`Error::Pointer`].
    pub fn get(&self, pointer: &str) -> Result<&Node, Error> {
        asdf_yaml::pointer::get(self.doc(), pointer).map_err(|e| pointer_error(pointer, e))
    }

    /// The node at `pointer` as a typed value of its tag: a quantity, a unit, a table, a
    /// history entry, ... (the types of [`asdf_core_types::astro`] and
    /// [`asdf_core_types::typed`]).
    ///
    /// ```no_run
    /// use asdf::core_types::astro::Quantity;
    /// let f = asdf::open("obs.asdf")?;
    /// let exposure: Quantity = f.get_as("/meta/exposure_time")?;
    /// println!("{exposure}"); // 3.5 s
    /// # Ok::<(), asdf::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::NotFound`]; [`Error::Typed`] when the node is tagged otherwise (a node with no
    /// tag is read as the type asks) or lacks what the type needs.
    pub fn get_as<T: asdf_core_types::typed::Typed>(&self, pointer: &str) -> Result<T, Error> {
        let node = self.doc().resolve(self.get(pointer)?);
        let err = |source| Error::Typed {
            pointer: pointer.to_owned(),
            source,
        };
        if let Some(tag) = node.tag.as_deref()
            && !asdf_core_types::typed::tag_names(tag, T::NAME)
        {
            return Err(err(asdf_core_types::typed::TypedError::Tag {
                want: T::NAME,
                have: tag.to_owned(),
            }));
        }
        T::from_node(node).map_err(err)
    }

    /// Warnings met while opening: the source's, then the tree's, tags' and schemas'.
    #[must_use]
    pub fn warnings(&self) -> &[Warning] {
        self.core.warnings_with(Some(&self.tree))
    }

    /// The file's ASDF Standard version.
    #[must_use]
    pub fn standard_version(&self) -> Version {
        self.standard
    }

    /// Validates the tree again with `schemas` (the standard's when `None`; an extension's
    /// with [`crate::schemas_to_extend`]) and, when `custom` names a schema in them, the whole
    /// tree against that schema as well (Python asdf's `custom_schema`).
    ///
    /// # Errors
    /// [`Error::Schema`] when `custom` is not one of `schemas`.
    pub fn validate(&self, schemas: Option<&AsdfSchemas>, custom: Option<&str>) -> Result<Report, Error> {
        let builtin;
        let schemas = match schemas {
            Some(s) => s,
            None => {
                builtin = crate::schemas()?;
                &*builtin
            }
        };
        let own = self.doc();
        // Before 1.6.0, the defaults of these schemas (an extension's too) are filled in
        // before validating, as Python asdf does: a required property with a default is not
        // missing. (In a copy: the file's tree is not changed.)
        let filled;
        let doc = if self.standard < Version::new(1, 6, 0) {
            let mut d = own.clone();
            schemas.fill_defaults(&mut d);
            filled = d;
            &filled
        } else {
            own
        };
        let mut r = schemas.validate_document(doc);
        if let Some(uri) = custom {
            let vs = schemas.validator().validate(uri, &doc.root, doc, "")?;
            r.violations.extend(vs);
        }
        for v in &mut r.violations {
            v.span = v.span.shifted(self.tree_line);
        }
        Ok(r)
    }

    /// Replaces the tree with `yaml`, a complete YAML document (`%YAML 1.1` through `...`), as
    /// after editing the tree by hand; the blocks stay as they are. It is parsed with the limits
    /// the file was opened with, and not validated (call [`AsdfFile::validate`]). From here on,
    /// lines in errors and reports are lines of `yaml`. Returns the parser's warnings.
    ///
    /// # Errors
    /// [`Error::Yaml`] with the line and column in `yaml`; the tree is then left unchanged.
    pub fn set_tree_yaml(&mut self, yaml: &[u8]) -> Result<Vec<Warning>, Error> {
        let parsed = asdf_yaml::parse(yaml, &self.options.yaml_limits)?;
        self.put_doc(parsed.document);
        self.tree_line = 0;
        Ok(parsed.warnings.into_iter().map(Warning::Yaml).collect())
    }

    /// The JSON pointers of every ndarray in the tree, in document order (not through
    /// aliases, so an array is listed once; a mask array belongs to its ndarray and is not
    /// listed).
    ///
    #[must_use]
    pub fn array_pointers(&self) -> Vec<String> {
        self.pointers_tagged(asdf_core_types::is_ndarray_tag)
    }

    /// The JSON pointers of every array in the tree: the ndarrays of
    /// [`AsdfFile::array_pointers`] and the chunked arrays (asdf-zarr's, ASDF.jl's), in
    /// document order.
    ///
    #[must_use]
    pub fn all_array_pointers(&self) -> Vec<String> {
        self.pointers_tagged(|t| asdf_core_types::is_ndarray_tag(t) || crate::is_chunked_array_tag(t))
    }

    /// The pointers of the nodes whose tag `wanted` accepts (not those inside them).
    fn pointers_tagged(&self, wanted: impl Fn(&str) -> bool) -> Vec<String> {
        let root = &self.doc().root;
        let mut out = Vec::new();
        root.walk_with(&mut |path, n| {
            if n.tag.as_deref().is_some_and(&wanted) {
                out.push(asdf_yaml::pointer::pointer_of(root, path));
                return asdf_yaml::Visit::SkipChildren;
            }
            asdf_yaml::Visit::Continue
        });
        out
    }
}

impl Core {
    /// Where block `source` (`-1` is the last) lives, among the file's blocks and those added
    /// since (`None` past the end).
    ///
    /// # Errors
    /// A remote file's blocks past the first are found on first need: what finding them met.
    pub(crate) fn block_ref(&self, source: i64) -> Result<Option<BlockIndex>, Error> {
        if source == 0 && self.reader.has_block(0)? {
            return Ok(Some(BlockIndex::File(0)));
        }
        let count = self.reader.find_blocks()?;
        let Some(idx) = absolute_index(source, count + self.pending.len()) else {
            return Ok(None);
        };
        Ok(Some(match idx.checked_sub(count) {
            None => BlockIndex::File(idx),
            Some(k) => BlockIndex::Pending(k),
        }))
    }
}

pub(crate) use asdf_core_types::numbering::absolute_index;

/// Rewrites every negative ndarray `source` under `node` as the block number it stands for
/// in a file of `blocks` blocks.
pub(crate) fn absolute_sources(node: &mut Node, blocks: i64) {
    // Found by the one walk (aliases not followed: an anchored ndarray is rewritten once),
    // then rewritten in place.
    let mut negative = Vec::new();
    node.walk(&mut |path, n| {
        if n.tag.as_deref().is_some_and(asdf_core_types::is_ndarray_tag)
            && n.get("source").and_then(Node::as_i64).is_some_and(|i| i < 0)
        {
            negative.push(path.to_vec());
        }
        true
    });
    for path in negative {
        if let Some(s) = node.at_path_mut(&path).and_then(|n| n.get_mut("source"))
            && let Some(i) = s.as_i64()
        {
            *s = Node::int(blocks + i);
        }
    }
}
