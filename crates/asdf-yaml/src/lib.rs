//! The tagged YAML 1.1 tree of ASDF files, read and written as Python asdf does.
//!
//! Parsing uses this crate's own scanner and grammar (YAML 1.2 syntax, which reads every tree
//! libyaml writes; the whole yaml-test-suite passes, errors included), then
//! resolves plain scalars with PyYAML's YAML 1.1 rules (`yes` is true, `010` is 8, `1e3` is a
//! string), keeps tags, anchors, key order, styles and positions, and keeps aliases as links
//! (so alias bombs cost nothing, and are refused by [`Limits`] before anyone expands them).
//! Emitting makes the same decisions as PyYAML's serializer and lays the text out as the C
//! libyaml emitter behind PyYAML's `CSafeDumper` does, so a tree Python asdf wrote is written
//! back byte for byte; collections read from text keep their block or flow style
//! ([`FlowPolicy::Read`]), so a tree other software wrote comes back as it was too.
//!
//! ```
//! use asdf_yaml::{parse, emit, EmitOptions, Limits, Value};
//!
//! let text = b"%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\nn: 010\nok: yes\ns: '010'\n...\n";
//! let doc = parse(text, &Limits::default())?.document;
//! assert_eq!(doc.root.tag.as_deref(), Some("tag:stsci.edu:asdf/core/asdf-1.1.0"));
//! assert_eq!(doc.root.get("n").unwrap().as_i64(), Some(8));
//! assert_eq!(doc.root.get("ok").unwrap().as_bool(), Some(true));
//! assert_eq!(doc.root.get("s").unwrap().as_str(), Some("010"));
//! // What was read keeps its layout; values are written as PyYAML writes them.
//! assert_eq!(emit(&doc, &EmitOptions::default())?,
//!     b"%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\nn: 8\nok: true\ns: '010'\n...\n");
//! // PyYAML's own layout (`default_flow_style=None`): flow for a mapping of scalars.
//! let mut python = EmitOptions::default();
//! python.flow = asdf_yaml::FlowPolicy::Python;
//! assert_eq!(emit(&doc, &python)?,
//!     b"%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0 {n: 8, ok: true, s: '010'}\n...\n");
//! # Ok::<(), asdf_yaml::Error>(())
//! ```

mod emit;
mod error;
pub mod events;
mod grammar;
pub mod keys;
pub mod node;
mod parse;
pub mod pointer;
pub mod resolve;
#[cfg(feature = "sample")]
#[doc(hidden)]
pub mod sample;
mod scanner;
pub mod skim;
pub mod walk;
mod writer;

pub use emit::{Edits, EmitOptions, FlowPolicy, emit, emit_edited};
pub use error::{Error, LimitError, SubsetError, Warning};
pub use node::{
    Alias, Anchor, CompactString, Document, Mapping, Node, NodeKind, Scalar, ScalarStyle, Sequence, Span, Step, Value,
    Visit,
};
pub use parse::{Limits, Parsed, key_identity, parse, parse_as_written, parse_yaml};
pub use resolve::ConstructError;
pub use walk::{Aliases, At, Cut, Visitor, Walker};
