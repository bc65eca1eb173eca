//! `asdf_file_t`'s object: a file's tree (read when it is opened), its last error, and the
//! paths into the tree.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_char;

use asdf_yaml::{Document, Node, NodeKind, Step};

use crate::error::ErrorState;

/// An open file: the engine's file (its tree, blocks and arrays; a new file is an empty one)
/// and its last error.
#[derive(Debug)]
pub struct File {
    pub(crate) error: ErrorState,
    /// The file (`None` when it could not be read: its error says why).
    asdf: Option<asdf::AsdfFile>,
    /// NUL-terminated copies of scalars handed out, one per text, kept while the file is open
    /// (so that a pointer handed out stays valid while the tree changes).
    texts: RefCell<HashMap<Vec<u8>, Vec<u8>>>,
    /// The version `asdf_library_set_version` gave.
    pub(crate) library_version: Option<String>,
}

impl File {
    pub(crate) fn new_empty() -> File {
        let asdf = asdf::AsdfFile::new(asdf::Version::STANDARD_LATEST).ok();
        File {
            error: ErrorState::default(),
            asdf,
            texts: RefCell::default(),
            library_version: None,
        }
    }

    pub(crate) fn from_open(r: Result<asdf::AsdfFile, asdf::Error>) -> File {
        match r {
            Ok(f) => File {
                error: ErrorState::default(),
                asdf: Some(f),
                texts: RefCell::default(),
                library_version: None,
            },
            Err(e) => {
                let mut error = ErrorState::default();
                error.set(crate::error::code_of(&e), Some(&e.to_string()), 0);
                File {
                    error,
                    asdf: None,
                    texts: RefCell::default(),
                    library_version: None,
                }
            }
        }
    }

    /// A scalar's text with a NUL after it (all of it, even with NULs inside), kept while the
    /// file is open.
    pub(crate) fn text0(&self, text: &[u8]) -> *const c_char {
        let mut texts = self.texts.borrow_mut();
        // (A Vec's buffer does not move when the map grows.)
        texts
            .entry(text.to_vec())
            .or_insert_with(|| crate::util::with_nul(text))
            .as_ptr()
            .cast()
    }

    /// The tree, if the file could be read.
    pub(crate) fn doc(&self) -> Option<&Document> {
        self.asdf.as_ref().map(asdf::AsdfFile::document)
    }

    /// The engine's file.
    pub(crate) fn asdf(&self) -> Option<&asdf::AsdfFile> {
        self.asdf.as_ref()
    }

    /// The engine's file, to change.
    pub(crate) fn asdf_mut(&mut self) -> Option<&mut asdf::AsdfFile> {
        self.asdf.as_mut()
    }

    /// The node at `steps`, to change (`None` through an alias: a change there would change
    /// another place of the tree).
    pub(crate) fn node_at_mut(&mut self, steps: &[Step]) -> Option<&mut Node> {
        let mut n = self.asdf.as_mut()?.get_mut("").ok()?;
        for s in steps {
            n = match (s, &mut n.kind) {
                (Step::Item(i), NodeKind::Sequence(q)) => q.items.get_mut(*i)?,
                (Step::Entry(i), NodeKind::Mapping(m)) => &mut m.entries.get_mut(*i)?.1,
                _ => return None,
            };
            if matches!(n.kind, NodeKind::Alias(_)) {
                return None;
            }
        }
        Some(n)
    }

    /// The node at `steps` from the root (aliases followed).
    pub(crate) fn node_at(&self, steps: &[Step]) -> Option<&Node> {
        let doc = self.doc()?;
        let mut n = doc.resolve(&doc.root);
        for s in steps {
            n = match (s, &n.kind) {
                (Step::Item(i), NodeKind::Sequence(q)) => doc.resolve(q.items.get(*i)?),
                (Step::Entry(i), NodeKind::Mapping(m)) => doc.resolve(&m.entries.get(*i)?.1),
                (Step::Key(i), NodeKind::Mapping(m)) => doc.resolve(&m.entries.get(*i)?.0),
                _ => return None,
            };
        }
        Some(n)
    }

    /// The steps of a libasdf path (`a/b/0`, `/a/b/0`; "" or "/" for the root): keys of
    /// mappings and indices of sequences (negative from the end), separated by `/`.
    pub(crate) fn steps_of(&self, path: &[u8]) -> Option<Vec<Step>> {
        let doc = self.doc()?;
        let mut steps = Vec::new();
        let mut n = doc.resolve(&doc.root);
        for seg in path.split(|b| *b == b'/').filter(|s| !s.is_empty()) {
            let (step, next) = child(doc, n, seg)?;
            steps.push(step);
            n = next;
        }
        Some(steps)
    }
}

/// The child of `n` named by a path segment: a key of a mapping, or an index of a sequence
/// (negative from the end).
pub(crate) fn child<'a>(doc: &'a Document, n: &'a Node, seg: &[u8]) -> Option<(Step, &'a Node)> {
    match &n.kind {
        NodeKind::Mapping(m) => {
            let i = m
                .entries
                .iter()
                .position(|(k, _)| scalar_text(doc.resolve(k)).is_some_and(|t| t == seg))?;
            Some((Step::Entry(i), doc.resolve(&m.entries[i].1)))
        }
        NodeKind::Sequence(q) => {
            let i = at_index(std::str::from_utf8(seg).ok()?.parse::<i64>().ok()?, q.items.len())?;
            Some((Step::Item(i), doc.resolve(&q.items[i])))
        }
        _ => None,
    }
}

/// An index that may count from the end, checked against `len`.
pub(crate) fn at_index(i: i64, len: usize) -> Option<usize> {
    let len = i64::try_from(len).ok()?;
    let i = if i < 0 { len + i } else { i };
    if (0..len).contains(&i) {
        usize::try_from(i).ok()
    } else {
        None
    }
}

pub(crate) fn scalar_text(n: &Node) -> Option<&[u8]> {
    match &n.kind {
        NodeKind::Scalar(s) => Some(s.text.as_bytes()),
        _ => None,
    }
}
