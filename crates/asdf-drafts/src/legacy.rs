//! Files of the drafts before ASDF 1.0.0 (`#ASDF 0.1.0`, `%FINF 0.1.0`) mapped onto today's
//! data model, so that every API and command works on them; and writing them.
//!
//! On open the tree is rewritten in memory (the file is untouched):
//! - the era's tags become their 1.0.0 tags: `tag:stsci.edu:asdf/0.1.0/core/ndarray` and
//!   `tag:stsci.edu:asdf/core/ndarray-0.1.0` become `tag:stsci.edu:asdf/core/ndarray-1.0.0`,
//!   FINF's `tag:stsci.edu:finf/0.1.0/core/finf` becomes `core/asdf-1.0.0` and its other
//!   `finf/0.1.0/X` tags `asdf/X-1.0.0`;
//! - an ndarray's `dtype` (the name before 2015-01-20, and FINF's) becomes `datatype`, in
//!   structured datatypes too;
//! - an ndarray with a `source` and no `byteorder` gets `byteorder: big`, the drafts' default
//!   (1.0.0 requires it beside `source`), and so does one whose block is an encoding chain
//!   with `quantize` (what the decoder produces: [`crate::chain`]).
//!
//! The tree then validates against the 1.0.0 schemas.

use std::sync::{Arc, OnceLock};

use crate::chain::{Chain, ChainCodec, ChainError, Encoding};
use asdf_layout::compression::Registry;
use asdf_layout::{Label, ReadAt, Reader};
use asdf_yaml::{Document, Node, NodeKind, Step};

/// The codecs a file is opened with: the default ones and the ASDF 0.1.0 draft's encoding chains
/// ([`crate::chain::ChainCodec`] parsing chains with [`parse_chain`]).
#[must_use]
pub fn read_registry() -> Arc<Registry> {
    static REGISTRY: OnceLock<Arc<Registry>> = OnceLock::new();
    REGISTRY
        .get_or_init(|| {
            let mut r = (*Registry::shared_default()).clone();
            r.register(Arc::new(ChainCodec::new(parse_chain)));
            Arc::new(r)
        })
        .clone()
}

fn usize_list(n: Option<&Node>) -> Option<Vec<usize>> {
    n?.as_sequence()?
        .items
        .iter()
        .map(|i| i.as_i64().and_then(|v| usize::try_from(v).ok()))
        .collect()
}

/// Parses an encoding chain's YAML (the ASDF 0.1.0 draft): a list whose entries are a name, a
/// `[name, {arguments}]` pair, or a one-entry mapping `{name: {arguments}}`.
///
/// # Errors
/// [`ChainError`] for YAML that does not parse or is not such a list, and missing arguments.
pub fn parse_chain(yaml: &[u8]) -> Result<Chain, ChainError> {
    let parsed = asdf_yaml::parse(yaml, &asdf_yaml::Limits::default()).map_err(|e| ChainError::Yaml(Box::new(e)))?;
    let root = &parsed.document.root;
    let items = root.as_sequence().ok_or(ChainError::Shape {
        index: 0,
        problem: "the chain is not a list",
    })?;
    let mut out = Vec::new();
    for (index, item) in items.items.iter().enumerate() {
        let shape = |problem| ChainError::Shape { index, problem };
        let (name, args) = if let Some(n) = item.as_str() {
            (n, None)
        } else if let Some(s) = item.as_sequence() {
            match s.items.as_slice() {
                [n] => (n.as_str().ok_or(shape("the name is not a string"))?, None),
                [n, a] => (n.as_str().ok_or(shape("the name is not a string"))?, Some(a)),
                _ => return Err(shape("a pair has one or two items")),
            }
        } else if let Some(m) = item.as_mapping() {
            match m.entries.as_slice() {
                [(k, v)] => (k.as_str().ok_or(shape("the name is not a string"))?, Some(v)),
                _ => return Err(shape("a mapping entry has exactly one key")),
            }
        } else {
            return Err(shape("neither a name nor a pair"));
        };
        let arg = |key: &str| args.and_then(|a| a.get(key));
        let missing = |name: &'static str, argument| ChainError::Argument { index, name, argument };
        out.push(match name {
            "zlib" => Encoding::Zlib,
            "tile" => {
                let shape = usize_list(arg("shape")).ok_or(missing("tile", "shape"))?;
                let original_shape = usize_list(arg("original_shape")).ok_or(missing("tile", "original_shape"))?;
                let item_size = arg("item_size")
                    .and_then(Node::as_i64)
                    .and_then(|v| usize::try_from(v).ok())
                    .ok_or(missing("tile", "item_size"))?;
                Encoding::Tile {
                    shape,
                    original_shape,
                    item_size,
                }
            }
            "quantize" => {
                let dtype = arg("dtype")
                    .and_then(Node::as_i64)
                    .and_then(|v| u8::try_from(v).ok())
                    .ok_or(missing("quantize", "dtype"))?;
                let original_shape = usize_list(arg("original_shape")).ok_or(missing("quantize", "original_shape"))?;
                Encoding::Quantize {
                    dtype,
                    original_shape,
                    bits: 0,
                }
            }
            other => Encoding::Unknown(other.to_owned()),
        });
    }
    Ok(Chain(out))
}

/// The report of a FINF tree against FINF 0.1.0's own schemas (`schemas/legacy/`), as the
/// tree was written (`None` for other files). ASDF 0.1.0's schemas are not among the data
/// this project has (only their 1.0.0 successors): those trees are validated after mapping.
///
/// # Errors
/// FINF 0.1.0's schemas, built in, that do not load (a build defect).
pub fn validate_era(
    doc: &Document,
    reader: &Reader<Box<dyn ReadAt>>,
) -> Result<Option<asdf_schema::Report>, &'static asdf_schema::SchemaError> {
    if reader.file_header().dialect != asdf_layout::Dialect::Finf {
        return Ok(None);
    }
    static FINF: OnceLock<Result<asdf_schema::AsdfSchemas, asdf_schema::SchemaError>> = OnceLock::new();
    let schemas = FINF.get_or_init(asdf_schema::AsdfSchemas::finf).as_ref()?;
    Ok(Some(schemas.validate_document(doc)))
}

/// The 1.0.0 tag of an era tag, if it is one.
#[must_use]
pub fn upgrade_tag(tag: &str) -> Option<String> {
    if let Some(rest) = tag.strip_prefix("tag:stsci.edu:asdf/0.1.0/") {
        return Some(format!("tag:stsci.edu:asdf/{rest}-1.0.0"));
    }
    if let Some(rest) = tag.strip_prefix("tag:stsci.edu:finf/0.1.0/") {
        let rest = if rest == "core/finf" { "core/asdf" } else { rest };
        return Some(format!("tag:stsci.edu:asdf/{rest}-1.0.0"));
    }
    if let Some(name) = tag.strip_prefix("tag:stsci.edu:asdf/")
        && let Some(base) = name.strip_suffix("-0.1.0")
    {
        return Some(format!("tag:stsci.edu:asdf/{base}-1.0.0"));
    }
    None
}

/// Renames key `from` to `to` in a (structured) datatype description: FINF's `dtype` is
/// today's `datatype`.
pub fn rename_keys(n: &mut Node, from: &str, to: &str) {
    match &mut n.kind {
        NodeKind::Mapping(m) => {
            for (k, v) in &mut m.entries {
                if k.as_str() == Some(from) {
                    *k = Node::str(to);
                }
                rename_keys(v, from, to);
            }
        }
        NodeKind::Sequence(s) => s.items.iter_mut().for_each(|i| rename_keys(i, from, to)),
        _ => {}
    }
}

/// Writes out the byte order of each field of a structured datatype that names none: `order`,
/// and for nested fields their enclosing field's when `inherit` (today's rule, written out for
/// FINF), or `order` again (FINF's own rule: every field defaults to big, when reading).
pub fn fields_explicit(dt: &mut Node, order: &str, inherit: bool) {
    let Some(fields) = dt.as_sequence_mut() else { return };
    for field in &mut fields.items {
        let Some(f) = field.as_mapping_mut() else { continue };
        if f.get("datatype").is_none() {
            continue;
        }
        if f.get("byteorder").is_none() {
            f.insert("byteorder", Node::str(order));
        }
        let own = f.get("byteorder").and_then(Node::as_str).unwrap_or(order).to_owned();
        let next = if inherit { own.as_str() } else { order };
        if let Some(inner) = f.get_mut("datatype") {
            fields_explicit(inner, next, inherit);
        }
    }
}

/// Whether block `i` is an encoding chain with a `quantize` step, read from the chain's YAML
/// whatever its length: reads of 64 KiB, then four times more each, until the chain's `...`
/// line (a chain as long as the block's stored bytes is read whole).
fn quantized(reader: &Reader<Box<dyn ReadAt>>, i: usize) -> bool {
    let Ok(b) = reader.block(i) else { return false };
    if b.header.compression != Label::ENCODING_CHAIN {
        return false;
    }
    let mut len = 64u64 << 10;
    loop {
        let n = usize::try_from(b.stored_len.min(len)).unwrap_or(0);
        let Ok(head) = reader.get_ref().bytes_at(b.data_offset, n) else {
            return false;
        };
        // A `...` at the very end of a partial read may go on (`...x`): read further.
        let whole = n as u64 == b.stored_len;
        if let Ok((yaml, rest)) = crate::chain::split(&head)
            && (whole || !rest.is_empty())
        {
            return parse_chain(yaml).is_ok_and(|c| c.0.iter().any(|e| matches!(e, Encoding::Quantize { .. })));
        }
        if len >= b.stored_len {
            return false;
        }
        len = len.saturating_mul(4);
    }
}

/// The paths of every tagged node under `root`, in document order (edited afterwards by path).
pub fn tagged_paths(root: &Node) -> Vec<Vec<Step>> {
    let mut tagged = Vec::new();
    root.walk(&mut |path, n| {
        if n.tag.is_some() {
            tagged.push(path.to_vec());
        }
        true
    });
    tagged
}

/// Maps a pre-1.0 tree onto today's data model (see the module's documentation).
pub fn normalize(doc: &mut Document, reader: &Reader<Box<dyn ReadAt>>) {
    if !reader.file_header().dialect.is_legacy() {
        return;
    }
    for path in tagged_paths(&doc.root) {
        let Some(n) = doc.root.at_path_mut(&path) else { continue };
        let Some(new) = n.tag.as_deref().and_then(upgrade_tag) else {
            continue;
        };
        n.tag = Some(new.into());
        if !asdf_core_types::is_ndarray_tag(n.tag.as_deref().unwrap_or_default()) {
            continue;
        }
        let Some(m) = n.as_mapping_mut() else { continue };
        for (k, v) in &mut m.entries {
            if k.as_str() == Some("dtype") {
                *k = Node::str("datatype");
                rename_keys(v, "dtype", "datatype");
            }
        }
        // The drafts' byteorder defaulted to big; 1.0.0 needs it beside `source`. FINF's
        // schemas say `default: big` for every ndarray and for every field of a structured
        // datatype (where 1.0.0's fields inherit the array's byte order): written out here.
        let finf = reader.file_header().dialect == asdf_layout::Dialect::Finf;
        if (finf || m.get("source").is_some()) && m.get("byteorder").is_none() {
            m.insert("byteorder", Node::str("big"));
        }
        if finf && let Some(dt) = m.get_mut("datatype") {
            fields_explicit(dt, "big", false);
        }
        let block = m
            .get("source")
            .and_then(Node::as_i64)
            .and_then(|s| usize::try_from(s).ok());
        if let Some(i) = block
            && quantized(reader, i)
        {
            m.insert("byteorder", Node::str("big"));
        }
    }
    // The era's `%TAG` prefixes no longer match the tags: today's instead.
    doc.tag_directives.retain(|(_, prefix)| {
        !prefix.starts_with("tag:stsci.edu:finf/")
            && !prefix.starts_with("tag:stsci.edu:asdf/0.1.0/")
            && prefix != "tag:stsci.edu:asdf/"
    });
    doc.tag_directives.retain(|(handle, _)| handle != "!");
    doc.tag_directives
        .insert(0, ("!".to_owned(), "tag:stsci.edu:asdf/".to_owned()));
}

/// The draft tag of a 1.x tag of the standard (`tag:stsci.edu:asdf/NAME-x.y.z`), if it is one.
fn downgrade_tag(tag: &str, dialect: asdf_layout::Dialect) -> Option<String> {
    let (name, _) = tag.strip_prefix("tag:stsci.edu:asdf/")?.rsplit_once('-')?;
    Some(match dialect {
        asdf_layout::Dialect::Finf => {
            let name = if name == "core/asdf" { "core/finf" } else { name };
            format!("tag:stsci.edu:finf/0.1.0/{name}")
        }
        _ => format!("tag:stsci.edu:asdf/0.1.0/{name}"),
    })
}

/// The tree `doc` of today's standard as the draft `dialect` writes it (the ASDF 0.1.0 draft,
/// FINF 0.1.0): the standard's tags become the draft's (`tag:stsci.edu:asdf/0.1.0/X`, FINF's
/// `tag:stsci.edu:finf/0.1.0/X` with `core/finf` at the root and `dtype` for `datatype`, each
/// field's byte order written out), with the draft's `%TAG !` directive; the ndarrays at the
/// pointers `big_endian` (behind a `quantize` step) become big-endian.
pub fn downgrade(doc: &mut Document, dialect: asdf_layout::Dialect, big_endian: &[&str]) {
    for p in big_endian {
        if let Ok(n) = asdf_yaml::pointer::get_mut(doc, p)
            && let Some(m) = n.as_mapping_mut()
        {
            m.insert("byteorder", Node::str("big"));
        }
    }
    for path in tagged_paths(&doc.root) {
        let Some(n) = doc.root.at_path_mut(&path) else { continue };
        let ndarray = n.tag.as_deref().is_some_and(asdf_core_types::is_ndarray_tag);
        if let Some(t) = n.tag.as_deref().and_then(|t| downgrade_tag(t, dialect)) {
            n.tag = Some(t.into());
        }
        if ndarray
            && dialect == asdf_layout::Dialect::Finf
            && let Some(m) = n.as_mapping_mut()
        {
            // FINF's fields default to big, not to the array's byte order: each field's
            // (inherited) byte order is written out.
            let order = m.get("byteorder").and_then(Node::as_str).unwrap_or("big").to_owned();
            if let Some(dt) = m.get_mut("datatype") {
                fields_explicit(dt, &order, true);
            }
            for (k, v) in &mut m.entries {
                if k.as_str() == Some("datatype") {
                    *k = Node::str("dtype");
                    rename_keys(v, "datatype", "dtype");
                }
            }
        }
    }
    let prefix = match dialect {
        asdf_layout::Dialect::Finf => "tag:stsci.edu:finf/0.1.0/",
        _ => "tag:stsci.edu:asdf/0.1.0/",
    };
    doc.tag_directives = vec![("!".to_owned(), prefix.to_owned())];
}

/// Moves `doc` to ASDF Standard `to` (`to`: major, minor, patch): every tag of the standard's
/// own schemas (`tag:stsci.edu:asdf/NAME-x.y.z`) becomes the version `to` lists for `NAME`
/// (tags `to` does not list are kept), and the core extension the history names becomes
/// `to`'s (Python asdf warns on every open of a 1.6.0 file whose history lists `core-1.5.0`).
/// Returns how many tags changed.
///
/// # Errors
/// The built-in schemas, when they cannot be loaded.
pub fn retag(doc: &mut Document, to: (u32, u32, u32)) -> Result<usize, &'static asdf_schema::SchemaError> {
    let schemas = asdf_core_types::schemas()?;
    let prefix = "tag:stsci.edu:asdf/";
    let name_of = |tag: &str| Some(tag.strip_prefix(prefix)?.rsplit_once('-')?.0.to_owned());
    let targets: std::collections::HashMap<String, String> = schemas
        .tags_for_standard(to)
        .into_iter()
        .filter_map(|t| Some((name_of(&t.tag)?, t.tag)))
        .collect();
    let mut changed = 0;
    for path in tagged_paths(&doc.root) {
        let Some(n) = doc.root.at_path_mut(&path) else {
            continue;
        };
        if let Some(new) = n.tag.as_deref().and_then(name_of).and_then(|name| targets.get(&name))
            && n.tag.as_deref() != Some(new.as_str())
        {
            n.tag = Some(new.as_str().into());
            changed += 1;
        }
    }
    let core = "asdf://asdf-format.org/core/extensions/core-";
    let new_uri = format!("{core}{}.{}.{}", to.0, to.1, to.2);
    if let Some(exts) = doc
        .root
        .get_mut("history")
        .and_then(|h| h.get_mut("extensions"))
        .and_then(Node::as_sequence_mut)
    {
        for e in &mut exts.items {
            if let Some(uri) = e.get_mut("extension_uri")
                && uri.as_str().is_some_and(|u| u.starts_with(core) && u != new_uri)
            {
                *uri = Node::str(new_uri.clone());
            }
        }
    }
    Ok(changed)
}

/// A tree just parsed, checked as an open checks it: a FINF tree validated as written against
/// FINF 0.1.0's schemas (with `validate`); every era's tree mapped onto 1.0.0 ([`normalize`]);
/// defaults filled in memory (`fill`: a file before ASDF Standard 1.6.0); then validated
/// against `schemas`, or only its tags checked. Unknown tags that `known` accepts (an
/// extension this build reads without a schema) are not reported.
///
/// # Errors
/// FINF 0.1.0's built-in schemas, when they do not load.
pub fn check(
    doc: &mut Document,
    reader: &Reader<Box<dyn ReadAt>>,
    schemas: &asdf_schema::AsdfSchemas,
    fill: bool,
    validate: bool,
    known: &dyn Fn(&str) -> bool,
) -> Result<asdf_schema::Report, &'static asdf_schema::SchemaError> {
    let era = if validate { validate_era(doc, reader)? } else { None };
    normalize(doc, reader);
    if fill {
        schemas.fill_defaults(doc);
    }
    let mut report = if validate {
        schemas.validate_document(doc)
    } else {
        schemas.check_tags(doc)
    };
    if let Some(era) = era {
        report.violations.extend(era.violations);
    }
    report
        .warnings
        .retain(|w| !matches!(w, asdf_schema::TagWarning::Unknown { tag, .. } if known(tag)));
    Ok(report)
}
