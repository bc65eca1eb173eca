//! Errors and warnings of the YAML layer; every one from the text names its line:column.

use crate::node::Span;
use crate::resolve::ConstructError;

/// Everything that can go wrong parsing or emitting a tree.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Not well-formed YAML.
    #[error("YAML syntax error at {span}: {problem}{}", context.map(|c| format!(" ({c})")).unwrap_or_default())]
    Syntax {
        /// Where the problem is.
        span: Span,
        /// What is wrong.
        problem: &'static str,
        /// What the parser was reading.
        context: Option<&'static str>,
    },
    /// The text is not UTF-8 (or another reader-level problem).
    #[error("YAML text is unreadable at byte {offset}: {problem}")]
    Encoding {
        /// Byte offset.
        offset: usize,
        /// What is wrong.
        problem: &'static str,
    },
    /// A scalar's value cannot be constructed (`!!int abc`, a plain `=`).
    #[error("at {span}: {kind}")]
    Construct {
        /// Where the scalar is.
        span: Span,
        /// What is wrong.
        kind: ConstructError,
    },
    /// Outside the YAML subset ASDF allows.
    #[error("at {span}: {kind}")]
    Subset {
        /// Where the node is.
        span: Span,
        /// Which rule.
        kind: SubsetError,
    },
    /// A configured limit was hit.
    #[error("at {span}: {kind}")]
    Limits {
        /// Where parsing stopped.
        span: Span,
        /// Which limit.
        kind: LimitError,
    },
    /// An alias whose anchored node is no longer in the tree (an edit removed it): the tree
    /// cannot be written ([`Document::remove_path`](crate::Document::remove_path) and the
    /// facade's edits keep such nodes).
    #[error("alias *{0} refers to a node that is no longer in the tree")]
    OrphanAlias(String),
    /// The emitter refused the events (a bug in the caller's tree, such as a bad anchor name).
    #[error("YAML emitter: {0}")]
    Emit(&'static str),
}

/// Rules of the ASDF YAML subset.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SubsetError {
    /// A mapping key that is not a string, integer or boolean.
    #[error("mapping keys must be strings, integers or booleans")]
    KeyType,
    /// More than one YAML document.
    #[error("the tree must be a single YAML document")]
    MultipleDocuments,
    /// An alias whose anchor was never defined.
    #[error("alias *{0} refers to no anchor")]
    UndefinedAlias(String),
}

/// A limit from [`Limits`](crate::Limits).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LimitError {
    /// Nesting deeper than `max_depth`.
    #[error("nesting deeper than {0} levels")]
    Depth(usize),
    /// More aliases than `max_aliases`.
    #[error("more than {0} aliases")]
    Aliases(usize),
    /// Expanding every alias would give more than `max_expanded_nodes` nodes (an alias bomb).
    #[error("expanding aliases would give more than {0} nodes")]
    Expansion(u64),
    /// Text longer than `max_bytes`.
    #[error("YAML text longer than {0} bytes")]
    Bytes(usize),
}

/// A problem that did not stop parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Warning {
    /// An integer literal outside [-(2^63 - 2), 2^63 - 1], the range the standard allows; its
    /// exact value is kept.
    IntOutOfRange {
        /// Where it is.
        span: Span,
        /// Its text.
        text: String,
    },
    /// A `%YAML` directive other than 1.1; the text was read with YAML 1.1 rules.
    YamlVersion {
        /// The declared version.
        major: i32,
        /// The declared version.
        minor: i32,
    },
    /// A key that occurs twice in one mapping; as in Python, the later value wins.
    DuplicateKey {
        /// Where the second occurrence is.
        span: Span,
        /// The key's text.
        key: String,
    },
    /// A mapping key the ASDF Standard does not allow (null, a float, a timestamp, a tagged
    /// key), read as PyYAML reads it: only where any scalar may be a key
    /// ([`crate::keys::nonstandard_key_warnings`]).
    NonstandardKey {
        /// Where the key is.
        span: Span,
        /// The JSON pointer of its mapping.
        pointer: String,
        /// The key's text.
        key: String,
    },
}

impl Warning {
    /// The warning with its position `lines` further down (as [`Error::shifted`]).
    #[must_use]
    pub fn shifted(mut self, lines: u64) -> Self {
        match &mut self {
            Warning::IntOutOfRange { span, .. }
            | Warning::DuplicateKey { span, .. }
            | Warning::NonstandardKey { span, .. } => *span = span.shifted(lines),
            Warning::YamlVersion { .. } => {}
        }
        self
    }
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Warning::IntOutOfRange { span, text } => write!(
                f,
                "at {span}: invalid integer literal value {text}: outside the range the ASDF Standard allows (int64)"
            ),
            Warning::YamlVersion { major, minor } => {
                write!(f, "the tree declares YAML {major}.{minor}; read as YAML 1.1")
            }
            Warning::DuplicateKey { span, key } => {
                write!(f, "at {span}: duplicate mapping key `{key}`; the later value is used")
            }
            Warning::NonstandardKey { span, pointer, key } => write!(
                f,
                "at {span}: mapping key `{}` of {} is not a string, integer or boolean, as the ASDF Standard requires; read as written",
                shown(key),
                if pointer.is_empty() {
                    "/".to_owned()
                } else {
                    shown(pointer)
                }
            ),
        }
    }
}

impl Error {
    /// The error with its position `lines` further down (a tree's lines as lines of the file
    /// holding it).
    #[must_use]
    pub fn shifted(mut self, lines: u64) -> Self {
        match &mut self {
            Error::Syntax { span, .. }
            | Error::Construct { span, .. }
            | Error::Subset { span, .. }
            | Error::Limits { span, .. } => *span = span.shifted(lines),
            Error::Encoding { .. } | Error::Emit(_) | Error::OrphanAlias(_) => {}
        }
        self
    }

    /// The position in the text, when known.
    #[must_use]
    pub fn span(&self) -> Option<Span> {
        match self {
            Error::Syntax { span, .. }
            | Error::Construct { span, .. }
            | Error::Subset { span, .. }
            | Error::Limits { span, .. } => Some(*span),
            Error::Encoding { .. } | Error::Emit(_) | Error::OrphanAlias(_) => None,
        }
    }
}

/// Text of a file as a message shows it: control characters escaped (a key cannot forge a line
/// or a terminal sequence) and at most 80 characters, then `…`.
fn shown(text: &str) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == 80 {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}
