//! Editing the tree by JSON pointer, with aliases kept true.
//!
//! An alias refers to its anchored node by identity ([`asdf_yaml::Anchor`]), so inserting,
//! removing and moving nodes around it never changes what it means; an edit that would leave
//! an alias with no node either keeps the node (removal: the first alias takes its place) or is
//! refused (a new node with an alias to nothing). Edits made through [`AsdfFile::get_mut`]
//! are not checked: writing refuses a tree with an orphaned alias
//! ([`asdf_yaml::Error::OrphanAlias`]), and [`AsdfFile::get`] reports one.

use crate::error::{Error, pointer_error};
use crate::file::AsdfFile;
use asdf_yaml::Node;
use asdf_yaml::pointer;

impl AsdfFile {
    /// The node at `pointer`, mutably (aliases on the way are followed; an alias at the end is
    /// returned as it is).
    ///
    /// # Errors
    /// [`Error::NotFound`], [`Error::Pointer`].
    pub fn get_mut(&mut self, pointer: &str) -> Result<&mut Node, Error> {
        pointer::get_mut(self.doc_mut(), pointer).map_err(|e| pointer_error(pointer, e))
    }

    /// Sets the node at `pointer`: replaces a value, adds a mapping key, or appends to a
    /// sequence (`-` or the length). Returns the node replaced. Anchored nodes inside it that
    /// aliases elsewhere refer to are kept (the first alias takes the node's place).
    ///
    /// # Errors
    /// [`Error::NotFound`] when the parent does not exist; [`Error::Pointer`] when `node` holds
    /// an alias to an anchor that is not in the tree (nothing is changed then).
    pub fn set(&mut self, pointer: &str, node: Node) -> Result<Option<Node>, Error> {
        pointer::set_checked(self.doc_mut(), pointer, node).map_err(|e| pointer_error(pointer, e))
    }

    /// Adds `node` at `pointer` as JSON Patch's `add` does: in a sequence, inserted before the
    /// index (the items after it shift); in a mapping, a new or replaced key.
    ///
    /// # Errors
    /// As [`AsdfFile::set`].
    pub fn insert(&mut self, pointer: &str, node: Node) -> Result<Option<Node>, Error> {
        pointer::insert(self.doc_mut(), pointer, node).map_err(|e| pointer_error(pointer, e))
    }

    /// Removes the node at `pointer` and returns it. Aliases elsewhere to anchored nodes inside
    /// it stay true: the first such alias (in document order) takes the anchored node's place.
    ///
    /// # Errors
    /// [`Error::NotFound`] (the root cannot be removed), [`Error::Pointer`].
    pub fn remove(&mut self, pointer: &str) -> Result<Node, Error> {
        pointer::remove(self.doc_mut(), pointer).map_err(|e| pointer_error(pointer, e))
    }

    /// Moves the node at `from` to `to` (JSON Patch's `move`; `to` is read in the tree without
    /// the node). Aliases to it and into it follow it.
    ///
    /// # Errors
    /// [`Error::NotFound`], [`Error::Pointer`]; nothing is changed then.
    pub fn move_node(&mut self, from: &str, to: &str) -> Result<(), Error> {
        pointer::move_node(self.doc_mut(), from, to).map_err(|e| pointer_error(to, e))
    }
}

impl AsdfFile {
    /// Moves the file to ASDF Standard `to`: every tag of the standard's own schemas
    /// (`tag:stsci.edu:asdf/NAME-x.y.z`) becomes the version `to` lists for `NAME`, and the
    /// file is written with `#ASDF_STANDARD to`. Tags `to` does not list are kept. Used by
    /// `asdf-cli convert` to upgrade files (the pre-1.0 drafts' trees are read as 1.0.0).
    /// Returns how many tags changed; validate afterwards ([`AsdfFile::validate`]) to check
    /// the tree against the new versions' schemas.
    ///
    /// # Errors
    /// [`Error::UnsupportedStandard`].
    pub fn set_standard(&mut self, to: asdf_layout::Version) -> Result<usize, Error> {
        if !crate::reads_standard(to) {
            return Err(Error::UnsupportedStandard(to));
        }
        let changed = asdf_drafts::legacy::retag(self.doc_mut(), (to.major, to.minor, to.patch))
            .map_err(Error::BuiltinSchemas)?;
        self.standard = to;
        Ok(changed)
    }
}
