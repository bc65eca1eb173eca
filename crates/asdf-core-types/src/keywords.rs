//! The ASDF schema keywords `datatype`, `exact_datatype`, `ndim` and `max_ndim`, as Python
//! asdf implements them, registered with [`asdf_schema`].

use std::sync::Arc;

use asdf_schema::{CompileOptions, Keyword, KeywordError, KeywordFactory};
use asdf_yaml::{Document, Node, NodeKind};

use crate::datatype::{Datatype, DatatypeError, infer_inline, inline_ndim};

/// Why an instance fails one of these keywords (or a keyword's value does not compile). The
/// messages are Python asdf's, which the validator reports as they are.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeywordFailure {
    /// The instance is not an ndarray or a nested list.
    #[error("Not an array")]
    NotAnArray,
    /// The instance's (or the schema's) `datatype` is not one the standard defines.
    #[error(transparent)]
    Datatype(#[from] DatatypeError),
    /// `exact_datatype`: another datatype.
    #[error("Expected datatype '{want}', got '{got}'")]
    NotExactly {
        /// The schema's.
        want: Datatype,
        /// The instance's.
        got: Datatype,
    },
    /// Records with another number of fields.
    #[error("Mismatched number of fields: Expected {want}, got {got}")]
    FieldCount {
        /// The schema's.
        want: usize,
        /// The instance's.
        got: usize,
    },
    /// A record field that cannot be cast safely.
    #[error("Can not safely cast to expected datatype: Expected {want}, got {got}")]
    FieldCast {
        /// The schema's field datatype.
        want: Datatype,
        /// The instance's.
        got: Datatype,
    },
    /// A record wanted, a scalar found.
    #[error("Expected structured datatype '{want}', got '{got}'")]
    NotStructured {
        /// The schema's.
        want: Datatype,
        /// The instance's.
        got: Datatype,
    },
    /// A scalar wanted, a record found.
    #[error("Expected scalar datatype '{want}', got '{got}'")]
    NotScalar {
        /// The schema's.
        want: Datatype,
        /// The instance's.
        got: Datatype,
    },
    /// A datatype that does not cast safely to the schema's.
    #[error("Can not safely cast from '{got}' to '{want}'")]
    Cast {
        /// The schema's.
        want: Datatype,
        /// The instance's.
        got: Datatype,
    },
    /// `ndim`: another number of dimensions.
    #[error("Wrong number of dimensions: Expected {want}, got {got}")]
    Ndim {
        /// The schema's.
        want: usize,
        /// The instance's.
        got: usize,
    },
    /// `max_ndim`: too many dimensions.
    #[error("Wrong number of dimensions: Expected max of {max}, got {got}")]
    MaxNdim {
        /// The schema's.
        max: usize,
        /// The instance's.
        got: usize,
    },
    /// An `ndim` or `max_ndim` value that is not a non-negative integer.
    #[error("expected a non-negative integer")]
    BadDimensionCount,
}

/// The datatype of an ndarray-like instance: its `datatype`, or the one numpy would infer
/// from its inline `data` (or from a bare nested list).
fn instance_datatype(instance: &Node) -> Result<Datatype, KeywordFailure> {
    match &instance.kind {
        NodeKind::Sequence(_) => infer_inline(instance).ok_or(KeywordFailure::NotAnArray),
        NodeKind::Mapping(_) => {
            if let Some(d) = instance.get("datatype") {
                Ok(Datatype::from_node(d)?)
            } else if let Some(d) = instance.get("data") {
                infer_inline(d).ok_or(KeywordFailure::NotAnArray)
            } else {
                Err(KeywordFailure::NotAnArray)
            }
        }
        _ => Err(KeywordFailure::NotAnArray),
    }
}

fn instance_ndim(instance: &Node) -> Option<usize> {
    match &instance.kind {
        NodeKind::Mapping(_) => {
            if let Some(s) = instance.get("shape").and_then(Node::as_sequence) {
                Some(s.items.len())
            } else {
                instance.get("data").map(inline_ndim)
            }
        }
        NodeKind::Sequence(_) => Some(inline_ndim(instance)),
        _ => None,
    }
}

#[derive(Debug)]
struct DatatypeKw {
    want: Datatype,
    exact: bool,
}

impl DatatypeKw {
    fn check(&self, instance: &Node) -> Result<(), KeywordFailure> {
        let got = instance_datatype(instance)?;
        if got == self.want {
            return Ok(());
        }
        let want = self.want.clone();
        if self.exact {
            return Err(KeywordFailure::NotExactly { want, got });
        }
        match (&self.want, &got) {
            (Datatype::Structured(w), Datatype::Structured(g)) => {
                if w.len() != g.len() {
                    return Err(KeywordFailure::FieldCount {
                        want: w.len(),
                        got: g.len(),
                    });
                }
                for (a, b) in w.iter().zip(g) {
                    if !b.datatype.can_cast_to(&a.datatype) {
                        return Err(KeywordFailure::FieldCast {
                            want: a.datatype.clone(),
                            got: b.datatype.clone(),
                        });
                    }
                }
                Ok(())
            }
            (Datatype::Structured(_), _) => Err(KeywordFailure::NotStructured { want, got }),
            (_, Datatype::Structured(_)) => Err(KeywordFailure::NotScalar { want, got }),
            _ if got.can_cast_to(&self.want) => Ok(()),
            _ => Err(KeywordFailure::Cast { want, got }),
        }
    }
}

impl Keyword for DatatypeKw {
    fn validate(&self, instance: &Node, _doc: &Document) -> Result<(), KeywordError> {
        Ok(self.check(instance)?)
    }
}

#[derive(Debug)]
struct DatatypeFactory;

impl KeywordFactory for DatatypeFactory {
    fn name(&self) -> &str {
        "datatype"
    }
    fn compile(&self, value: &Node, schema: &Node) -> Result<Box<dyn Keyword>, KeywordError> {
        let want = Datatype::from_node(value).map_err(KeywordFailure::from)?;
        let exact = schema.get("exact_datatype").and_then(Node::as_bool).unwrap_or(false);
        Ok(Box::new(DatatypeKw { want, exact }))
    }
}

#[derive(Debug)]
struct NdimKw {
    n: usize,
    max: bool,
}

impl Keyword for NdimKw {
    fn validate(&self, instance: &Node, _doc: &Document) -> Result<(), KeywordError> {
        let Some(got) = instance_ndim(instance) else {
            return Ok(());
        };
        if self.max && got > self.n {
            return Err(KeywordFailure::MaxNdim { max: self.n, got }.into());
        }
        if !self.max && got != self.n {
            return Err(KeywordFailure::Ndim { want: self.n, got }.into());
        }
        Ok(())
    }
}

#[derive(Debug)]
struct NdimFactory(bool);

impl KeywordFactory for NdimFactory {
    fn name(&self) -> &str {
        if self.0 { "max_ndim" } else { "ndim" }
    }
    fn compile(&self, value: &Node, _schema: &Node) -> Result<Box<dyn Keyword>, KeywordError> {
        let n = value
            .as_i64()
            .and_then(|i| usize::try_from(i).ok())
            .ok_or(KeywordFailure::BadDimensionCount)?;
        Ok(Box::new(NdimKw { n, max: self.0 }))
    }
}

/// Compile options with the ASDF keywords registered (`exact_datatype` is read by
/// `datatype`).
#[must_use]
pub fn compile_options() -> CompileOptions {
    CompileOptions::default()
        .keyword(Arc::new(DatatypeFactory))
        .keyword(Arc::new(NdimFactory(false)))
        .keyword(Arc::new(NdimFactory(true)))
}

/// The standard's schemas with the ASDF keywords, shared and compiled once.
///
/// # Errors
/// An embedded schema that does not compile (a build defect).
pub fn schemas() -> Result<Arc<asdf_schema::AsdfSchemas>, &'static asdf_schema::SchemaError> {
    static SHARED: std::sync::OnceLock<Result<Arc<asdf_schema::AsdfSchemas>, asdf_schema::SchemaError>> =
        std::sync::OnceLock::new();
    match SHARED.get_or_init(|| asdf_schema::AsdfSchemas::with_options(compile_options()).map(Arc::new)) {
        Ok(s) => Ok(s.clone()),
        Err(e) => Err(e),
    }
}

/// The full tag ASDF Standard `v` (major, minor, patch) lists for `name` (such as
/// `core/ndarray`: `tag:stsci.edu:asdf/core/ndarray-1.1.0` for 1.6.0), if it lists one.
///
/// # Errors
/// As [`schemas`].
pub fn standard_tag(v: (u32, u32, u32), name: &str) -> Result<Option<String>, &'static asdf_schema::SchemaError> {
    let prefix = format!("{}{name}-", asdf_yaml::node::tags::ASDF);
    Ok(schemas()?
        .tags_for_standard(v)
        .into_iter()
        .map(|t| t.tag)
        .find(|t| t.starts_with(&prefix)))
}

/// What [`check_embedded_schemas`] found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SchemaCheck {
    /// Schemas valid against their metaschema.
    pub schemas_valid: usize,
    /// Schema examples valid against their schemas.
    pub examples_valid: usize,
    /// Manifest tags whose schema is registered.
    pub tags_resolved: usize,
    /// Every failure, `path: what`.
    pub failures: Vec<String>,
}

/// Checks the embedded schemas and manifests as a whole: every schema against its metaschema,
/// every example a schema gives against the schemas (with the ASDF keywords), every manifest
/// tag's schema registered. (`cargo xtask validate-schemas` prints it; a test requires it.)
///
/// # Errors
/// An embedded schema that does not compile or parse (a build defect).
pub fn check_embedded_schemas() -> Result<SchemaCheck, String> {
    use asdf_yaml::Limits;
    let schemas = schemas().map_err(|e| e.to_string())?;
    let v = schemas.validator();
    let mut c = SchemaCheck::default();
    for (path, text) in asdf_schema::asdf::embedded_files() {
        let doc = asdf_yaml::parse(text, &Limits::default())
            .map_err(|e| format!("{path}: {e}"))?
            .document;
        if path.contains("manifests") {
            let tags = doc.root.get("tags").and_then(Node::as_sequence);
            for t in tags.map(|s| s.items.as_slice()).unwrap_or_default() {
                let schema = t.get("schema_uri").and_then(Node::as_str).unwrap_or_default();
                if schemas.registry().contains(schema) {
                    c.tags_resolved += 1;
                } else {
                    c.failures.push(format!("{path}: tag schema {schema} not found"));
                }
            }
            continue;
        }
        let meta = doc
            .root
            .get("$schema")
            .and_then(Node::as_str)
            .unwrap_or("http://json-schema.org/draft-04/schema")
            .trim_end_matches('#');
        let errs = v
            .validate(meta, &doc.root, &doc, "")
            .map_err(|e| format!("{path}: {e}"))?;
        if errs.is_empty() {
            c.schemas_valid += 1;
        } else {
            c.failures
                .extend(errs.iter().map(|e| format!("{path}: against {meta}: {e}")));
        }
        let examples = doc.root.get("examples").and_then(Node::as_sequence);
        for e in examples.map(|s| s.items.as_slice()).unwrap_or_default() {
            let Some(items) = e.as_sequence().map(|s| &s.items) else {
                continue;
            };
            let (Some(desc), Some(body)) = (
                items.first().and_then(Node::as_scalar),
                items.last().and_then(Node::as_scalar),
            ) else {
                continue;
            };
            // An example is a fragment: a document with the ASDF tag prefix around it.
            let text = format!("%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- {}\n...\n", body.text);
            match asdf_yaml::parse(text.as_bytes(), &Limits::default()) {
                Ok(p) => {
                    let report = schemas.validate_document(&p.document);
                    if report.is_valid() {
                        c.examples_valid += 1;
                    } else {
                        c.failures.extend(
                            report
                                .violations
                                .iter()
                                .map(|e| format!("{path}: example '{}': {e}", desc.text)),
                        );
                    }
                }
                Err(e) => c
                    .failures
                    .push(format!("{path}: example '{}' does not parse: {e}", desc.text)),
            }
        }
    }
    Ok(c)
}
