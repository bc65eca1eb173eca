//! `asdf_file_t`'s object: a file's tree (read when it is opened), its last error, and the
//! paths into the tree.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{CString, c_char};

use asdf_yaml::{Document, Node, NodeKind, Step};

use crate::error::{Code, ErrorState};

/// An open file: its tree (parsed when it is opened; a new file has an empty mapping) and
/// its last error.
#[derive(Debug)]
pub struct File {
    pub(crate) error: ErrorState,
    /// The tree (`None` when the file could not be read: its error says why).
    doc: Option<Document>,
    /// The file as the engine opened it (its blocks and arrays).
    #[allow(dead_code)]
    asdf: Option<asdf::AsdfFile>,
    /// NUL-terminated copies of scalars handed out, one per node, kept while the file is open.
    texts: RefCell<HashMap<Vec<Step>, CString>>,
}

impl File {
    pub(crate) fn new_empty() -> File {
        File {
            error: ErrorState::default(),
            doc: Some(Document::new(Node::map(Vec::new()))),
            asdf: None,
            texts: RefCell::default(),
        }
    }

    pub(crate) fn from_open(r: Result<asdf::AsdfFile, asdf::Error>) -> File {
        match r {
            Ok(f) => File {
                error: ErrorState::default(),
                doc: Some(f.document().clone()),
                asdf: Some(f),
                texts: RefCell::default(),
            },
            Err(e) => {
                let mut error = ErrorState::default();
                let code = match &e {
                    e if e.kind() == asdf::ErrorKind::Io => Code::System,
                    _ => Code::YamlParseFailed,
                };
                error.set(code, Some(&e.to_string()), 0);
                File {
                    error,
                    doc: None,
                    asdf: None,
                    texts: RefCell::default(),
                }
            }
        }
    }

    /// The node at `steps`'s text, NUL-terminated, kept while the file is open.
    pub(crate) fn text0(&self, steps: &[Step], text: &[u8]) -> *const c_char {
        let mut texts = self.texts.borrow_mut();
        // (A CString's buffer does not move when the map grows.)
        texts
            .entry(steps.to_vec())
            .or_insert_with(|| crate::util::c_string(text))
            .as_ptr()
    }

    /// The tree, if the file could be read.
    pub(crate) fn doc(&self) -> Option<&Document> {
        self.doc.as_ref()
    }

    /// The node at `steps` from the root (aliases followed).
    pub(crate) fn node_at(&self, steps: &[Step]) -> Option<&Node> {
        let doc = self.doc.as_ref()?;
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
        let doc = self.doc.as_ref()?;
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
