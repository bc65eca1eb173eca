//! A pointer-directed open: the header and block index are read, the tree is not parsed until
//! something needs it. `view`, `element` and `array_as` at `/key...` skim the tree's text for
//! that top-level key ([`asdf_yaml::skim`]) and parse the whole tree only when the skim
//! cannot answer.

use std::sync::OnceLock;

use asdf_core_types::{NdArray, Scalar};

use crate::{AsdfFile, Element, Error, Shell, View, array_error};

/// A file opened by [`crate::open_lazy`]: its header and block index read, its tree not yet
/// parsed. Reading an array at a pointer parses only what it needs when the tree is laid out
/// as Python asdf and this library write it (the value at the pointer's first key found by a
/// skim of the text), and the whole tree otherwise (kept for later calls).
///
/// What a lazy open does not do until [`LazyFile::into_file`]: the YAML parse of the rest of
/// the tree (so a syntax error elsewhere in the tree is reported there, not at open), tag
/// checks and unknown-tag warnings, schema validation. `into_file` gives exactly the file
/// [`crate::open_with`] gives with the same options. FITS files and pre-1.0 files are opened in
/// full at once.
///
/// ```no_run
/// let f = asdf::open_lazy("big.asdf", asdf::OpenOptions::default())?;
/// let x = f.element("/data", &[7])?;
/// let file = f.into_file()?; // the whole tree, checked as `open_with` checks it
/// # Ok::<(), asdf::Error>(())
/// ```
pub struct LazyFile {
    /// The file, with an empty placeholder tree while `pending`.
    file: AsdfFile,
    /// The tree is still to be parsed.
    pending: bool,
    /// The whole tree, once a pointer needed it.
    tree: OnceLock<crate::Document>,
    /// The first top-level value skimmed, by key (a view then an element skim once).
    skimmed: OnceLock<(String, crate::Document)>,
}

impl std::fmt::Debug for LazyFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyFile")
            .field("file", &self.file)
            .field("pending", &self.pending)
            .finish_non_exhaustive()
    }
}

impl LazyFile {
    pub(crate) fn new(shell: Shell) -> Result<Self, Error> {
        let (file, pending) = match shell {
            // Pre-1.0 trees are mapped onto 1.0.0 after parsing: no skim for them.
            Shell::Tree(f) if !f.reader.file_header().dialect.is_legacy() => (f, true),
            other => (other.finish()?, false),
        };
        Ok(LazyFile {
            file,
            pending,
            tree: OnceLock::new(),
            skimmed: OnceLock::new(),
        })
    }

    /// The ndarray at `pointer`: from a skim of the text when it can answer, else from the
    /// whole tree.
    fn ndarray(&self, pointer: &str) -> Result<NdArray, Error> {
        if !self.pending {
            return self.file.ndarray_at(pointer);
        }
        let not_found = |e| crate::edit::pointer_error(pointer, e);
        if self.tree.get().is_none()
            && let Some(text) = self.file.reader.tree_bytes()
            && text.len() <= self.file.options.yaml_limits.max_bytes
        {
            let tokens = asdf_yaml::pointer::tokens(pointer).map_err(not_found)?;
            if let Some((first, rest)) = tokens.split_first()
                && let Some(doc) = match self.skimmed.get() {
                    Some((key, doc)) if key == first => Some(doc),
                    Some(_) => None,
                    None => asdf_yaml::skim::top_level_value(text, first)
                        .map(|doc| &self.skimmed.get_or_init(|| (first.clone(), doc)).1),
                }
            {
                let rest: String = rest
                    .iter()
                    .map(|t| format!("/{}", asdf_yaml::pointer::escape(t)))
                    .collect();
                let node = asdf_yaml::pointer::get(doc, &rest).map_err(not_found)?;
                return NdArray::from_node(node, doc).map_err(array_error(pointer));
            }
        }
        let doc = match self.tree.get() {
            Some(d) => d,
            None => {
                let (doc, _) = self.file.parse_tree()?;
                self.tree.get_or_init(|| doc)
            }
        };
        let node = asdf_yaml::pointer::get(doc, pointer).map_err(not_found)?;
        NdArray::from_node(node, doc).map_err(array_error(pointer))
    }

    /// As [`AsdfFile::view`].
    ///
    /// # Errors
    /// As [`AsdfFile::view`]; [`Error::Yaml`] when the tree had to be parsed and is not YAML.
    pub fn view(&self, pointer: &str) -> Result<View, Error> {
        let a = self.ndarray(pointer)?;
        self.file.view_of(&a, pointer).map(|(v, _)| v)
    }

    /// As [`AsdfFile::element`]: for an uncompressed block, only that element's bytes are read.
    ///
    /// # Errors
    /// As [`LazyFile::view`].
    pub fn element(&self, pointer: &str, index: &[usize]) -> Result<Element, Error> {
        self.file.array_of(self.ndarray(pointer)?, pointer)?.element(index)
    }

    /// As [`AsdfFile::array_as`].
    ///
    /// # Errors
    /// As [`LazyFile::view`].
    pub fn array_as<T: Scalar>(&self, pointer: &str) -> Result<Vec<T>, Error> {
        self.file.array_of(self.ndarray(pointer)?, pointer)?.read()
    }

    /// Warnings met so far: those of the header and block index (the tree's come with
    /// [`LazyFile::into_file`]).
    #[must_use]
    pub fn warnings(&self) -> &[crate::Warning] {
        self.file.warnings()
    }

    /// The byte-layout reader underneath.
    #[must_use]
    pub fn layout(&self) -> &asdf_layout::Reader<Box<dyn asdf_layout::ReadAt>> {
        self.file.layout()
    }

    /// The whole file, opened as [`crate::open_with`] opens it: the tree parsed, tags checked
    /// and validated as the options say.
    ///
    /// # Errors
    /// As [`crate::open_with`].
    pub fn into_file(self) -> Result<AsdfFile, Error> {
        if self.pending {
            self.file.finish_open()
        } else {
            Ok(self.file)
        }
    }
}
