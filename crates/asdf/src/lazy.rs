//! A lazy open's file ([`LazyFile`], from [`crate::Open::open_lazy`]): the header and block
//! index read, the tree not yet. An array read by pointer may answer from a skim of the tree's
//! text for the pointer's first key (as Python asdf and this library lay trees out); anything
//! else needs the tree, which [`LazyFile::parse`] parses and checks exactly as an eager open
//! does, returning the [`AsdfFile`] or what the eager open would have said.

use std::fmt;
use std::sync::OnceLock;

use asdf_core_types::NdArray;
use asdf_yaml::Document;

use crate::array::Array;
use crate::error::{Error, array_error, pointer_error};
use crate::file::{AsdfFile, Core, Tree};

/// A file opened lazily: its source, and its tree still to be parsed. Read arrays with
/// [`LazyFile::array`]; [`LazyFile::parse`] gives the [`AsdfFile`] for everything else.
///
/// What an array read checks: the node it reads (a YAML or schema error in it is reported, as
/// the eager open reports it). When the skim answers, the rest of the tree is not read: a
/// YAML error, a schema violation under `strict`, or a limit met elsewhere in it comes from
/// [`LazyFile::parse`] (which reports exactly what [`crate::Open::open`] would have), not from
/// the read. Open eagerly where a file must be refused whole before any of it is used.
///
/// ```no_run
/// let lazy = asdf::Open::path("big.asdf").open_lazy()?;
/// let x = lazy.array("/data")?.element(&[7])?;
/// let file = lazy.parse()?; // the whole tree now, checked as an eager open checks it
/// # Ok::<(), asdf::Error>(())
/// ```
pub struct LazyFile {
    core: Core,
    /// The tree, once something needed it (set at open for the files read whole: FITS, the
    /// drafts before 1.0.0).
    tree: OnceLock<Tree>,
    /// The first top-level value skimmed, by key (array reads before the tree is parsed).
    skimmed: OnceLock<(String, Document)>,
}

impl fmt::Debug for LazyFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LazyFile")
            .field("standard", &self.core.standard)
            .field("parsed", &self.tree.get().is_some())
            .finish_non_exhaustive()
    }
}

impl LazyFile {
    /// The file of `core`, its tree still to be parsed.
    pub(crate) fn new(core: Core) -> Self {
        LazyFile {
            core,
            tree: OnceLock::new(),
            skimmed: OnceLock::new(),
        }
    }

    /// A file already parsed, as a lazy one (a file read whole).
    pub(crate) fn parsed(file: AsdfFile) -> Self {
        LazyFile {
            core: file.core,
            tree: OnceLock::from(file.tree),
            skimmed: OnceLock::new(),
        }
    }

    /// The source, to finish an open with (its path, its origin).
    pub(crate) fn core_mut(&mut self) -> &mut Core {
        &mut self.core
    }

    /// The ndarray at `pointer`, as [`AsdfFile::array`] finds it: from a skim of the tree's
    /// text when the skim can answer, else from the tree (parsed now, once).
    ///
    /// # Errors
    /// As [`AsdfFile::array`]; when the tree is needed, what parsing it says.
    pub fn array(&self, pointer: &str) -> Result<Array<'_>, Error> {
        let skimmed = if self.tree.get().is_none() {
            self.skimmed_ndarray(pointer)
        } else {
            Ok(None)
        };
        match skimmed {
            Ok(Some(nd)) => self.core.array_of(nd, pointer),
            Ok(None) => self.core.array_in(self.doc()?, pointer),
            // Not an ndarray by the skim: a chunked array if the tree says so; a tree that
            // cannot be had (a strict open of an invalid tree) leaves the ndarray error.
            Err(e @ Error::Array { .. }) => match self.doc() {
                Ok(doc) => self.core.chunked_array(doc, pointer)?.ok_or(e),
                Err(_) => Err(e),
            },
            Err(e) => Err(e),
        }
    }

    /// The file with its tree, parsed and checked now (if nothing needed it yet).
    ///
    /// # Errors
    /// What an eager open would have said of the tree ([`Error::Yaml`], [`Error::Invalid`]
    /// when strict).
    pub fn parse(self) -> Result<AsdfFile, Error> {
        let tree = match self.tree.into_inner() {
            Some(t) => t,
            None => self.core.parse_and_check()?,
        };
        Ok(AsdfFile::of(self.core, tree))
    }

    /// The document, parsed on first need.
    fn doc(&self) -> Result<&Document, Error> {
        if let Some(t) = self.tree.get() {
            return Ok(&t.doc);
        }
        let t = self.core.parse_and_check()?;
        Ok(&self.tree.get_or_init(|| t).doc)
    }

    /// The ndarray at `pointer` from a skim of the tree's text (`None`: the skim cannot say).
    fn skimmed_ndarray(&self, pointer: &str) -> Result<Option<NdArray>, Error> {
        let Some(text) = self.core.reader.tree_bytes() else {
            return Ok(None);
        };
        if text.len() > self.core.options.yaml_limits.max_bytes {
            return Ok(None);
        }
        let Some((first, rest)) = asdf_yaml::skim::split_pointer(pointer) else {
            return Ok(None);
        };
        let doc = match self.skimmed.get() {
            Some((key, doc)) if *key == first => doc,
            Some(_) => return Ok(None),
            None => match asdf_yaml::skim::top_level_value(text, &first) {
                Some(doc) => &self.skimmed.get_or_init(|| (first, doc)).1,
                None => return Ok(None),
            },
        };
        let node = asdf_yaml::pointer::get(doc, &rest).map_err(|e| pointer_error(pointer, e))?;
        NdArray::from_node(node, doc).map(Some).map_err(array_error(pointer))
    }
}
