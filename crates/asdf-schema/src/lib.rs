//! ASDF schemas: a strict JSON Schema Draft 4 validator over the tagged YAML tree, with the
//! YAML Schema extensions (`tag` with glob patterns) and keywords that other crates plug in.
//!
//! ```
//! use asdf_schema::{CompileOptions, Registry, Validator};
//! use asdf_yaml::{parse, Limits};
//!
//! let schema = parse(b"id: http://example.org/s\ntype: object\nrequired: [a]\n", &Limits::default())?.document;
//! let mut reg = Registry::new();
//! reg.add(None, schema.root);
//! let v = Validator::compile(&mut reg, &["http://example.org/s"], &CompileOptions::default())?;
//! let doc = parse(b"b: 1\n", &Limits::default())?.document;
//! let errs = v.validate("http://example.org/s", &doc.root, &doc, "")?;
//! assert_eq!(errs[0].message, "'a' is a required property");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod asdf;
mod compiled;
mod error;
mod format;
mod registry;
#[cfg(test)]
mod scan;
pub mod uri;
mod validator;

pub use asdf::{AsdfSchemas, Manifest, Report, TagDef, TagResolution, TagWarning, WriteHints};
pub use error::KeywordError;
pub use error::{SchemaError, Violation};
pub use registry::{Location, Registry, Retriever};
pub use validator::{CompileOptions, Keyword, KeywordFactory, Validator};
