//! The ASDF schema keywords `datatype`, `exact_datatype`, `ndim` and `max_ndim`, as Python
//! asdf implements them, registered with [`asdf_schema`].

use std::sync::Arc;

use asdf_schema::{CompileOptions, Keyword, KeywordFactory};
use asdf_yaml::{Document, Node, NodeKind};

use crate::datatype::{Datatype, infer_inline, inline_ndim};

/// The datatype of an ndarray-like instance: its `datatype`, or the one numpy would infer
/// from its inline `data` (or from a bare nested list).
fn instance_datatype(instance: &Node) -> Result<Datatype, String> {
    match &instance.kind {
        NodeKind::Sequence(_) => infer_inline(instance).ok_or_else(|| "Not an array".to_owned()),
        NodeKind::Mapping(_) => {
            if let Some(d) = instance.get("datatype") {
                Datatype::from_node(d).map_err(|e| e.to_string())
            } else if let Some(d) = instance.get("data") {
                infer_inline(d).ok_or_else(|| "Not an array".to_owned())
            } else {
                Err("Not an array".to_owned())
            }
        }
        _ => Err("Not an array".to_owned()),
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

impl Keyword for DatatypeKw {
    fn validate(&self, instance: &Node, _doc: &Document) -> Result<(), String> {
        let got = instance_datatype(instance)?;
        if got == self.want {
            return Ok(());
        }
        if self.exact {
            return Err(format!("Expected datatype '{}', got '{got}'", self.want));
        }
        match (&self.want, &got) {
            (Datatype::Structured(w), Datatype::Structured(g)) => {
                if w.len() != g.len() {
                    return Err(format!(
                        "Mismatched number of fields: Expected {}, got {}",
                        w.len(),
                        g.len()
                    ));
                }
                for (a, b) in w.iter().zip(g) {
                    if !b.datatype.can_cast_to(&a.datatype) {
                        return Err(format!(
                            "Can not safely cast to expected datatype: Expected {}, got {}",
                            a.datatype, b.datatype
                        ));
                    }
                }
                Ok(())
            }
            (Datatype::Structured(_), _) => Err(format!("Expected structured datatype '{}', got '{got}'", self.want)),
            (_, Datatype::Structured(_)) => Err(format!("Expected scalar datatype '{}', got '{got}'", self.want)),
            _ if got.can_cast_to(&self.want) => Ok(()),
            _ => Err(format!("Can not safely cast from '{got}' to '{}'", self.want)),
        }
    }
}

#[derive(Debug)]
struct DatatypeFactory;

impl KeywordFactory for DatatypeFactory {
    fn name(&self) -> &str {
        "datatype"
    }
    fn compile(&self, value: &Node, schema: &Node) -> Result<Box<dyn Keyword>, String> {
        let want = Datatype::from_node(value).map_err(|e| e.to_string())?;
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
    fn validate(&self, instance: &Node, _doc: &Document) -> Result<(), String> {
        let Some(got) = instance_ndim(instance) else {
            return Ok(());
        };
        if self.max && got > self.n {
            return Err(format!(
                "Wrong number of dimensions: Expected max of {}, got {got}",
                self.n
            ));
        }
        if !self.max && got != self.n {
            return Err(format!("Wrong number of dimensions: Expected {}, got {got}", self.n));
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
    fn compile(&self, value: &Node, _schema: &Node) -> Result<Box<dyn Keyword>, String> {
        let n = value
            .as_i64()
            .and_then(|i| usize::try_from(i).ok())
            .ok_or_else(|| "expected a non-negative integer".to_owned())?;
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
