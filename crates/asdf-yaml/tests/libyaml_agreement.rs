//! Differential check against libyaml (through libyaml-safer, a port of the C parser under
//! PyYAML's `CSafeLoader`, i.e. what Python asdf reads trees with): on every YAML tree in the
//! conformance data (ASDF files from Python asdf and other implementations, the standard's
//! reference files, schemas and manifests, and the JSON-Schema-Test-Suite's JSON files), this
//! crate's parser gives the same events.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use crate::libyaml_events;
use asdf_yaml::events::{Event, events};
use libyaml_events::libyaml_events;

/// libyaml's and this crate's events for `text`: `Ok(Some(events))` when both give the same,
/// `Ok(None)` when both refuse it, `Err(the first difference)` otherwise.
fn agreement(text: &[u8]) -> Result<Option<Vec<Event>>, String> {
    let theirs = libyaml_events(text);
    let ours = events(text)
        .ok()
        .map(|v| v.into_iter().map(|(e, _)| e).collect::<Vec<_>>());
    match (theirs, ours) {
        (Some(a), Some(b)) if a == b => Ok(Some(a)),
        (None, None) => Ok(None),
        (Some(a), Some(b)) => Err(a
            .iter()
            .zip(&b)
            .find(|(x, y)| x != y)
            .map(|(x, y)| format!("libyaml {x:?} / ours {y:?}"))
            .unwrap_or_else(|| "different lengths".to_owned())),
        (Some(_), None) => Err(format!("ours refuses: {:?}", events(text).err())),
        (None, Some(_)) => Err("libyaml refuses, ours accepts".to_owned()),
    }
}

fn tree_of(p: &Path) -> Option<Vec<u8>> {
    if p.extension().and_then(|x| x.to_str()) == Some("asdf") {
        let r = asdf_layout::Reader::open_path(p).ok()?;
        r.tree_bytes().map(<[u8]>::to_vec)
    } else {
        std::fs::read(p).ok()
    }
}

#[test]
fn same_events_as_libyaml_on_every_conformance_tree() {
    asdf_testdata::needs_conformance!();
    let root = asdf_testdata::conformance_dir();
    let mut paths = Vec::new();
    for dir in [
        "asdf-standard",
        "asdf-pytests-data",
        "other-impls",
        "python-asdf-samples",
    ] {
        paths.extend(asdf_testdata::files_with_ext(&root.join(dir), "asdf"));
        paths.extend(asdf_testdata::files_with_ext(&root.join(dir), "yaml"));
    }
    // JSON is flow YAML: the JSON-Schema-Test-Suite gives deeply nested flow collections,
    // escapes and non-ASCII text.
    paths.extend(asdf_testdata::files_with_ext(
        &root.join("json-schema-test-suite"),
        "json",
    ));
    paths.sort();
    let (mut agreed, mut both_refuse, mut differ) = (0, 0, Vec::new());
    for p in &paths {
        let Some(text) = tree_of(p) else { continue };
        let name = p.strip_prefix(&root).unwrap().display().to_string();
        match agreement(&text) {
            Ok(Some(_)) => agreed += 1,
            Ok(None) => both_refuse += 1,
            Err(first) => differ.push(format!("{name}: {first}")),
        }
    }
    println!(
        "{} trees: {agreed} same events as libyaml, {both_refuse} refused by both, {} differ",
        paths.len(),
        differ.len()
    );
    for d in &differ {
        println!("  {d}");
    }
    assert!(agreed > 400, "too few trees compared: {agreed}");
    assert!(differ.is_empty(), "{} trees differ from libyaml", differ.len());
}

/// The YAML files the ASDF ecosystem's packages ship (schemas, manifests, resources of
/// asdf-standard, asdf-astropy, gwcs, asdf-wcs-schemas, asdf-transform-schemas,
/// asdf-coordinates-schemas, rad, stdatamodels, dkist, sunpy; wheels from PyPI, pinned in
/// `tests/interop/ecosystem_yaml.py`, unpacked into `target/ecosystem-yaml`): the same events
/// as libyaml, and every document libyaml reads builds as a schema document (`parse_yaml`).
/// Needs `python3` with pip and PyPI (as the interop suite); fails loudly without them.
#[test]
fn same_events_as_libyaml_on_the_ecosystem_schemas() {
    let ws = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = ws.join("target/ecosystem-yaml");
    if !out.join(".ready").exists() {
        let ok = std::process::Command::new("python3")
            .arg(ws.join("tests/interop/ecosystem_yaml.py"))
            .arg(&out)
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            ok,
            "cannot fetch the ecosystem's wheels (python3 -m pip download; PyPI reachable?)"
        );
    }
    let files = out.join("files");
    let mut paths = asdf_testdata::files_with_ext(&files, "yaml");
    paths.extend(asdf_testdata::files_with_ext(&files, "yml"));
    paths.sort();
    let mut per_package: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    let (mut agreed, mut both_refuse, mut differ) = (0, 0, Vec::new());
    for p in &paths {
        let text = std::fs::read(p).unwrap();
        let name = p.strip_prefix(&files).unwrap().display().to_string();
        let package = name.split('/').next().unwrap_or_default().to_owned();
        match agreement(&text) {
            Ok(Some(a)) => {
                // One document per file here; it must also build as a tree.
                let docs = a.iter().filter(|e| matches!(e, Event::DocumentStart { .. })).count();
                if docs == 1
                    && let Err(e) = asdf_yaml::parse_yaml(&text, &asdf_yaml::Limits::default())
                {
                    differ.push(format!("{name}: libyaml reads it, parse_yaml refuses: {e}"));
                    continue;
                }
                agreed += 1;
                *per_package.entry(package).or_default() += 1;
            }
            Ok(None) => both_refuse += 1,
            Err(first) => differ.push(format!("{name}: {first}")),
        }
    }
    println!(
        "ecosystem YAML: {} files, {agreed} same events as libyaml and built ({per_package:?}), {both_refuse} refused by both, {} differ",
        paths.len(),
        differ.len()
    );
    for d in &differ {
        println!("  {d}");
    }
    assert!(agreed > 1500, "too few files compared: {agreed}");
    assert!(differ.is_empty(), "{} files differ from libyaml", differ.len());
}

/// U+2028 and U+2029 are line breaks in YAML 1.1: PyYAML's dumper (libyaml) writes them raw in
/// single-quoted scalars followed by the next line's indentation, e.g. `v: 'a\u2028  b'`
/// for "a\u2028b" (texts and values recorded from PyYAML 6, CSafeDumper / CSafeLoader). They
/// must read back as libyaml reads them.
#[test]
fn yaml_1_1_line_separators_in_quoted_scalars() {
    let cases: &[(&str, &str)] = &[
        ("v: '\u{2028}  '\n", "\u{2028}"),
        ("v: 'a\u{2028}  b'\n", "a\u{2028}b"),
        ("v: 'a\u{2029}  '\n", "a\u{2029}"),
        ("v: 'a \u{2028}\n\n  b'\n", "a\u{2028}\n\nb"),
        ("v: 'a\u{2028}\n  b'\n", "a\u{2028}\nb"),
        ("v: 'a\n\u{2028}  b'\n", "a\u{2028}b"),
        ("v: \"x\\Ny\"\n", "x\u{85}y"),
    ];
    for (text, want) in cases {
        let doc = asdf_yaml::parse(text.as_bytes(), &asdf_yaml::Limits::default())
            .unwrap()
            .document;
        assert_eq!(doc.root.get("v").unwrap().as_str(), Some(*want), "{text:?}");
        let ours: Vec<Event> = events(text.as_bytes()).unwrap().into_iter().map(|(e, _)| e).collect();
        assert_eq!(Some(ours), libyaml_events(text.as_bytes()), "{text:?}");
    }
}

mod generated {
    use super::{Event, events, libyaml_events};
    use asdf_yaml::{Document, EmitOptions, Node, NodeKind, ScalarStyle, emit, parse};
    use proptest::prelude::*;

    /// Text mixing YAML indicators, white space, line breaks (also U+0085, U+2028, U+2029),
    /// quotes, escapes and non-ASCII letters.
    fn text() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                6 => proptest::sample::select(vec![
                    'a', 'Z', '0', '1', '.', '-', '+', '_', ' ', ' ', ':', '#', ',', '[', ']', '{', '}', '?', '!',
                    '&', '*', '|', '>', '\'', '"', '%', '@', '`', '\\', '~', '\n', '\t', '\r', '\u{85}',
                    '\u{a0}', '\u{2028}', '\u{2029}', 'é', '雪', '\u{1f600}', '\u{7}', '\u{feff}',
                ]),
                1 => any::<char>(),
            ],
            0..24,
        )
        .prop_map(|v| v.into_iter().collect())
    }

    fn scalar() -> impl Strategy<Value = Node> {
        (
            text(),
            proptest::sample::select(vec![
                ScalarStyle::Any,
                ScalarStyle::Plain,
                ScalarStyle::SingleQuoted,
                ScalarStyle::DoubleQuoted,
                ScalarStyle::Literal,
                ScalarStyle::Folded,
            ]),
        )
            .prop_map(|(t, style)| {
                let mut n = Node::str(t);
                if let NodeKind::Scalar(s) = &mut n.kind {
                    s.style = style;
                }
                n
            })
    }

    fn tree() -> impl Strategy<Value = Node> {
        scalar().prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Node::seq),
                proptest::collection::vec((text(), inner), 0..6).prop_map(|kv| {
                    let mut seen = std::collections::HashSet::new();
                    Node::map(
                        kv.into_iter()
                            .filter(|(k, _)| seen.insert(k.clone()))
                            .map(|(k, v)| (Node::str(k), v))
                            .collect(),
                    )
                }),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        /// What the libyaml emitter writes, this parser reads as libyaml does, and the strings
        /// come back unchanged.
        #[test]
        fn emitted_trees_read_as_libyaml_reads_them(root in tree()) {
            let doc = Document::new(Node::map(vec![(Node::str("v"), root.clone())]));
            let text = emit(&doc, &EmitOptions::default()).unwrap();
            let ours: Vec<Event> = events(&text).unwrap().into_iter().map(|(e, _)| e).collect();
            prop_assert_eq!(Some(ours), libyaml_events(&text), "{}", String::from_utf8_lossy(&text));
            let back = parse(&text, &asdf_yaml::Limits::default()).unwrap().document;
            prop_assert!(same_strings(&root, back.root.get("v").unwrap()), "{}", String::from_utf8_lossy(&text));
        }
    }

    fn same_strings(a: &Node, b: &Node) -> bool {
        match (&a.kind, &b.kind) {
            (NodeKind::Scalar(x), NodeKind::Scalar(y)) => x.text == y.text,
            (NodeKind::Sequence(x), NodeKind::Sequence(y)) => {
                x.items.len() == y.items.len() && x.items.iter().zip(&y.items).all(|(p, q)| same_strings(p, q))
            }
            (NodeKind::Mapping(x), NodeKind::Mapping(y)) => {
                x.entries.len() == y.entries.len()
                    && x.entries
                        .iter()
                        .zip(&y.entries)
                        .all(|((k1, v1), (k2, v2))| same_strings(k1, k2) && same_strings(v1, v2))
            }
            _ => false,
        }
    }
}
