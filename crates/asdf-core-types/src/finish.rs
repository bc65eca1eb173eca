//! The tree text a write puts in a file: validated when asked, the defaults filled in memory
//! left out, `asdf_library` naming this library, `%YAML 1.1` when the document names no
//! version.

use asdf_yaml::{Document, Edits, EmitOptions, Node};

/// Why a tree could not be finished for writing.
#[derive(Debug, thiserror::Error)]
pub enum FinishError {
    /// The built-in schemas did not load (a build defect).
    #[error("the built-in schemas: {0}")]
    Schemas(&'static asdf_schema::SchemaError),
    /// The tree is invalid against the standard's schemas.
    #[error("the tree is invalid")]
    Invalid(Vec<asdf_schema::Violation>),
    /// The standard lists no `core/software` tag (not a standard this library writes).
    #[error("ASDF Standard {}.{}.{} has no core/software tag", .0.0, .0.1, .0.2)]
    NoSoftwareTag((u32, u32, u32)),
    /// Emitting the text failed.
    #[error(transparent)]
    Yaml(#[from] asdf_yaml::Error),
}

/// The `asdf_library` node of a file written for ASDF Standard `standard`: this library,
/// tagged with that standard's `core/software`.
///
/// # Errors
/// [`FinishError::Schemas`], [`FinishError::NoSoftwareTag`].
pub fn library_node(standard: (u32, u32, u32)) -> Result<Node, FinishError> {
    let tag = crate::standard_tag(standard, "core/software")
        .map_err(FinishError::Schemas)?
        .ok_or(FinishError::NoSoftwareTag(standard))?;
    Ok(Node::map(vec![
        (Node::str("author"), Node::str("The asdf-rs developers")),
        (Node::str("name"), Node::str("asdf-rs")),
        (Node::str("version"), Node::str(env!("CARGO_PKG_VERSION"))),
    ])
    .with_tag(tag))
}

/// The text written for `doc` with `edits` in a file of ASDF Standard `standard`.
///
/// # Errors
/// [`FinishError`].
pub fn finished_tree(
    doc: &Document,
    mut edits: Edits,
    standard: (u32, u32, u32),
    validate: bool,
) -> Result<Vec<u8>, FinishError> {
    if validate {
        let r = crate::schemas().map_err(FinishError::Schemas)?.validate_document(doc);
        if !r.violations.is_empty() {
            return Err(FinishError::Invalid(r.violations));
        }
    }
    edits.leave_out_filled(doc);
    if let Some(m) = doc.root.as_mapping() {
        let lib = library_node(standard)?;
        match m.get("asdf_library") {
            Some(v) => edits.replace(v, lib),
            None => edits.prepend_to_root(Node::str("asdf_library"), lib),
        }
    }
    edits.default_version((1, 1));
    Ok(asdf_yaml::emit_edited(doc, &EmitOptions::default(), &edits)?)
}
