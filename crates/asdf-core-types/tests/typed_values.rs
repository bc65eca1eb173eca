//! Typed values (software, history_entry, extension_metadata, externalarray, constant,
//! subclass_metadata, unit, defunit): every tagged node of these kinds in the conformance data
//! and in the schemas' examples converts to its typed value and back to an equivalent node;
//! typed -> node -> typed is the identity (proptest).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;

use asdf_core_types::astro::{AstroColumn, AstroTable, Column, Fits, Integer, Quantity, Table, Time};
use asdf_core_types::typed::{
    Constant, Defunit, ExtensionMetadata, ExternalArray, HistoryEntry, Software, SoftwareList, SubclassMetadata,
    Target, Typed, TypedError, Unit,
};
use asdf_core_types::{Complex, NdArray};
use asdf_yaml::{Limits, Node, NodeKind, Value, parse};
use proptest::prelude::*;

/// Same tag and content; mapping keys in any order; complex numbers by value.
fn equivalent(a: &Node, b: &Node) -> bool {
    if a.tag != b.tag {
        return false;
    }
    if a.tag.as_deref().is_some_and(|t| t.contains("core/complex-")) {
        let v = |n: &Node| n.as_scalar().and_then(|s| asdf_core_types::complex::parse(&s.text));
        return matches!((v(a), v(b)), (Some(x), Some(y)) if x.same(&y));
    }
    match (&a.kind, &b.kind) {
        (NodeKind::Mapping(x), NodeKind::Mapping(y)) => {
            x.entries.len() == y.entries.len()
                && x.entries.iter().all(|(k, v)| {
                    y.entries
                        .iter()
                        .find(|(k2, _)| k2.as_scalar().map(|s| &s.text) == k.as_scalar().map(|s| &s.text))
                        .is_some_and(|(_, v2)| equivalent(v, v2))
                })
        }
        (NodeKind::Sequence(x), NodeKind::Sequence(y)) => {
            x.items.len() == y.items.len() && x.items.iter().zip(&y.items).all(|(p, q)| equivalent(p, q))
        }
        (NodeKind::Scalar(x), NodeKind::Scalar(y)) => match (&x.value, &y.value) {
            (Value::Float(p), Value::Float(q)) => p == q || (p.is_nan() && q.is_nan()),
            (Value::Str, Value::Str) | (Value::Timestamp, Value::Timestamp) => x.text == y.text,
            (p, q) => p == q,
        },
        (NodeKind::Alias(x), NodeKind::Alias(y)) => x.anchor == y.anchor,
        _ => false,
    }
}

fn round_trip<T: Typed>(n: &Node) -> Result<bool, TypedError> {
    let tag = n.tag.as_deref().map(str::to_owned).unwrap_or_default();
    let t = T::from_node(n)?;
    Ok(equivalent(n, &t.to_node(&tag)))
}

/// Checks every node tagged with one of the typed tags under `root`; counts per tag name.
fn check_tree(root: &Node, at: &str, counts: &mut BTreeMap<&'static str, usize>) {
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if let Some(tag) = n.tag.as_deref() {
            let name = tag.strip_prefix("tag:stsci.edu:asdf/").unwrap_or("");
            let base = name.rsplit_once('-').map_or("", |(b, _)| b);
            let r = match base {
                "core/software" => Some((Software::NAME, round_trip::<Software>(n))),
                "core/history_entry" => Some((HistoryEntry::NAME, round_trip::<HistoryEntry>(n))),
                "core/extension_metadata" => Some((ExtensionMetadata::NAME, round_trip::<ExtensionMetadata>(n))),
                "core/externalarray" => Some((ExternalArray::NAME, round_trip::<ExternalArray>(n))),
                "core/constant" => Some((Constant::NAME, round_trip::<Constant>(n))),
                "core/subclass_metadata" => Some((SubclassMetadata::NAME, round_trip::<SubclassMetadata>(n))),
                "unit/unit" => Some((Unit::NAME, round_trip::<Unit>(n))),
                "unit/defunit" => Some((Defunit::NAME, round_trip::<Defunit>(n))),
                "core/ndarray" => Some((NdArray::NAME, round_trip::<NdArray>(n))),
                "core/complex" => Some((Complex::NAME, round_trip::<Complex>(n))),
                "core/integer" => Some((Integer::NAME, round_trip::<Integer>(n))),
                "core/table" => Some((Table::NAME, round_trip::<Table>(n))),
                "core/column" => Some((Column::NAME, round_trip::<Column>(n))),
                "table/table" => Some((AstroTable::NAME, round_trip::<AstroTable>(n))),
                "table/column" => Some((AstroColumn::NAME, round_trip::<AstroColumn>(n))),
                "unit/quantity" => Some((Quantity::NAME, round_trip::<Quantity>(n))),
                "time/time" => Some((Time::NAME, round_trip::<Time>(n))),
                "fits/fits" => Some((Fits::NAME, round_trip::<Fits>(n))),
                _ => None,
            };
            if let Some((name, r)) = r {
                match r {
                    Ok(true) => *counts.entry(name).or_default() += 1,
                    Ok(false) => {
                        let t = n.tag.as_deref().map(str::to_owned).unwrap_or_default();
                        let again = match name {
                            "core/ndarray" => <NdArray as Typed>::from_node(n).map(|a| Typed::to_node(&a, &t)),
                            _ => Ok(Node::null()),
                        };
                        let y = |n: &Node| {
                            String::from_utf8_lossy(
                                &asdf_yaml::emit(&asdf_yaml::Document::new(n.clone()), &Default::default()).unwrap(),
                            )
                            .into_owned()
                        };
                        panic!(
                            "{at}: {tag}: not equivalent after the round trip:\n{}\n---- became ----\n{}",
                            y(n),
                            again.map(|a| y(&a)).unwrap_or_default()
                        )
                    }
                    // Files made invalid on purpose may hold nodes no typed value can represent.
                    Err(_) if at.contains("invalid") => *counts.entry("(invalid, refused)").or_default() += 1,
                    Err(e) => panic!("{at}: {tag}: {e}"),
                }
            }
        }
        match &n.kind {
            NodeKind::Mapping(m) => stack.extend(m.entries.iter().map(|(_, v)| v)),
            NodeKind::Sequence(s) => stack.extend(s.items.iter()),
            _ => {}
        }
    }
}

#[test]
fn conformance_nodes_round_trip() {
    asdf_testdata::needs_conformance!();
    let c = asdf_testdata::conformance_dir();
    let mut counts = BTreeMap::new();
    let mut files = 0;
    for ext in ["asdf", "yaml"] {
        for p in asdf_testdata::files_with_ext(&c, ext) {
            let bytes = std::fs::read(&p).unwrap();
            let tree = if ext == "asdf" {
                match asdf_layout::Reader::open(bytes) {
                    Ok(r) => r.tree_bytes().map(<[u8]>::to_vec),
                    Err(_) => None,
                }
            } else {
                Some(bytes)
            };
            let Some(tree) = tree else { continue };
            let Ok(parsed) = parse(&tree, &Limits::default()) else {
                continue;
            };
            check_tree(&parsed.document.root, &p.display().to_string(), &mut counts);
            files += 1;
        }
    }
    println!("{files} trees: {counts:?}");
    for name in [Software::NAME, HistoryEntry::NAME, ExtensionMetadata::NAME, Unit::NAME] {
        assert!(counts.get(name).copied().unwrap_or(0) > 0, "no {name} seen: {counts:?}");
    }
    assert!(counts[Software::NAME] > 200, "{counts:?}");
}

#[test]
fn schema_examples_round_trip() {
    let mut counts = BTreeMap::new();
    for (path, text) in asdf_schema::asdf::embedded_files() {
        let doc = parse(text, &Limits::default()).unwrap().document;
        let Some(ex) = doc.root.get("examples").and_then(Node::as_sequence) else {
            continue;
        };
        for e in &ex.items {
            let Some(body) = e.as_sequence().and_then(|s| s.items.last()).and_then(Node::as_scalar) else {
                continue;
            };
            let wrapped = format!("%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- {}\n...\n", body.text);
            let Ok(parsed) = parse(wrapped.as_bytes(), &Limits::default()) else {
                continue;
            };
            check_tree(&parsed.document.root, &path, &mut counts);
        }
    }
    println!("schema examples: {counts:?}");
    // Every tag with examples in the standard (and the tags nested in them).
    for name in [
        ExternalArray::NAME,
        Unit::NAME,
        NdArray::NAME,
        Complex::NAME,
        Integer::NAME,
        Table::NAME,
        Column::NAME,
        AstroTable::NAME,
        AstroColumn::NAME,
        Quantity::NAME,
        Time::NAME,
        Fits::NAME,
    ] {
        assert!(counts.contains_key(name), "no example of {name} checked: {counts:?}");
    }
    assert!(counts[Time::NAME] >= 35 && counts[NdArray::NAME] >= 35, "{counts:?}");
}

#[test]
fn errors_name_the_key() {
    let doc = parse(
        b"%YAML 1.1\n---\na: {version: '1'}\nb: {name: x, version: 3}\nc: [1]\nd: {fileuri: f, target: [1], datatype: int8, shape: [1]}\n...\n",
        &Limits::default(),
    )
    .unwrap()
    .document;
    let g = |k: &str| doc.root.get(k).unwrap();
    assert_eq!(
        Software::from_node(g("a")).unwrap_err().to_string(),
        "core/software: `name` is required"
    );
    assert_eq!(
        Software::from_node(g("b")).unwrap_err().to_string(),
        "core/software: `version` must be a string"
    );
    assert_eq!(
        Software::from_node(g("c")).unwrap_err().to_string(),
        "core/software: expected a mapping"
    );
    assert_eq!(
        ExternalArray::from_node(g("d")).unwrap_err().to_string(),
        "core/externalarray: `target` must be an integer or a string"
    );
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9 ._/:-]{0,20}",
        Just("yes".to_owned()),
        Just("1.0".to_owned()),
        Just("~".to_owned()),
        Just("2020-01-01".to_owned()),
        "\\PC{0,12}",
    ]
}

fn extra() -> impl Strategy<Value = Vec<(Node, Node)>> {
    proptest::collection::btree_map("x_[a-z]{1,6}", text(), 0..3)
        .prop_map(|m| m.into_iter().map(|(k, v)| (Node::str(k), Node::str(v))).collect())
}

fn software() -> impl Strategy<Value = Software> {
    (
        text(),
        text(),
        proptest::option::of(text()),
        proptest::option::of(text()),
        extra(),
        any::<bool>(),
    )
        .prop_map(|(name, version, author, homepage, extra, tagged)| Software {
            name,
            version,
            author,
            homepage,
            extra,
            tag: tagged.then(|| "tag:stsci.edu:asdf/core/software-1.0.0".to_owned()),
        })
}

fn identity<T: Typed + PartialEq + std::fmt::Debug>(t: &T, tag: &str) {
    let n = t.to_node(tag);
    // Through text too: emit, parse, read.
    let doc = asdf_yaml::Document::new(asdf_yaml::Node::map(vec![(Node::str("v"), n.clone())]));
    let bytes = asdf_yaml::emit(&doc, &asdf_yaml::EmitOptions::default()).unwrap();
    let back = parse(&bytes, &Limits::default()).unwrap().document;
    assert_eq!(&T::from_node(&n).unwrap(), t);
    // After the text, extra nodes carry positions and styles: compared as nodes.
    let t2 = T::from_node(back.root.get("v").unwrap()).unwrap();
    assert!(equivalent(&t2.to_node(tag), &n), "{}", String::from_utf8_lossy(&bytes));
}

proptest! {
    #[test]
    fn software_identity(mut s in software()) {
        s.tag = Some("tag:stsci.edu:asdf/core/software-1.0.0".to_owned());
        identity(&s, "tag:stsci.edu:asdf/core/software-1.0.0");
    }

    #[test]
    fn history_entry_identity(
        description in text(),
        time in proptest::option::of(prop_oneof![Just("2024-03-01T12:30:00".to_owned()), Just("2024-03-01 12:30:00.5+00:00".to_owned())]),
        one in software(),
        many in proptest::collection::vec(software(), 0..3),
        pick in 0..3u8,
        extra in extra(),
    ) {
        let software = match pick { 0 => None, 1 => Some(SoftwareList::One(one)), _ => Some(SoftwareList::Many(many)) };
        let time = time.map(|t| HistoryEntry::time_node(&t));
        identity(&HistoryEntry { description, time, software, extra }, "tag:stsci.edu:asdf/core/history_entry-1.0.0");
    }

    #[test]
    fn extension_metadata_identity(
        class in text(),
        uri in proptest::option::of(text()),
        a in proptest::option::of(software()),
        b in proptest::option::of(software()),
        c in proptest::option::of(software()),
        extra in extra(),
    ) {
        let e = ExtensionMetadata { extension_class: class, extension_uri: uri, package: a, manifest_software: b, software: c, extra };
        identity(&e, "tag:stsci.edu:asdf/core/extension_metadata-1.0.0");
    }

    #[test]
    fn externalarray_identity(
        fileuri in text(),
        index in proptest::option::of(any::<i64>()),
        name in text(),
        datatype in text(),
        shape in proptest::collection::vec(0..u64::from(u32::MAX), 0..4),
        extra in extra(),
    ) {
        let target = index.map_or(Target::Name(name), Target::Index);
        identity(&ExternalArray { fileuri, target, datatype, shape, extra }, "tag:stsci.edu:asdf/core/externalarray-1.0.0");
    }

    #[test]
    fn small_types_identity(name in "[A-Za-z_][A-Za-z0-9_]{1,8}", unit in proptest::option::of("[ -~]{0,16}"), null in any::<bool>(), v in text(), extra in extra()) {
        identity(&SubclassMetadata { name: name.clone(), extra: extra.clone() }, "tag:stsci.edu:asdf/core/subclass_metadata-1.0.0");
        identity(&Unit(v.clone()), "tag:stsci.edu:asdf/unit/unit-1.0.0");
        let explicit_null = null && unit.is_none();
        identity(&Defunit { name, unit: unit.map(Unit), explicit_null, extra }, "tag:stsci.edu:asdf/unit/defunit-1.0.0");
        identity(&Constant { value: Node::str(v) }, "tag:stsci.edu:asdf/core/constant-1.0.0");
    }
}

/// Every embedded schema meets its metaschema, every example in the standard's schemas
/// validates (with the ASDF keywords), every manifest tag names a registered schema (what
/// `cargo xtask validate-schemas` prints).
#[test]
fn embedded_schemas_meet_their_metaschemas_and_their_examples_validate() {
    let c = asdf_core_types::check_embedded_schemas().unwrap();
    println!(
        "schemas valid: {}, examples valid: {}, manifest tags resolved: {}",
        c.schemas_valid, c.examples_valid, c.tags_resolved
    );
    assert!(c.failures.is_empty(), "{:#?}", c.failures);
    // The standard 1.6.0's schemas, their examples and its manifests' tags, all of them seen.
    assert!(
        c.schemas_valid >= 60 && c.examples_valid >= 100 && c.tags_resolved >= 150,
        "{c:?}"
    );
}
