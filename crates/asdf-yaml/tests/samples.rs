//! Trees written by Python asdf: parse -> emit -> parse gives the same tree, and the emitted
//! text is byte-identical to what Python wrote.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use asdf_yaml::{Document, EmitOptions, Limits, Node, NodeKind, Value, emit, parse};

fn conformance() -> PathBuf {
    asdf_testdata::conformance_dir()
}

fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    asdf_testdata::files_with_ext(dir, ext)
}

fn tree_of(p: &Path) -> Option<Vec<u8>> {
    if p.extension().and_then(|x| x.to_str()) == Some("asdf") {
        let r = asdf_layout::Reader::open_path(p).ok()?;
        r.tree_bytes().map(<[u8]>::to_vec)
    } else {
        let b = std::fs::read(p).unwrap();
        let s = b.windows(5).position(|w| w == b"%YAML")?;
        Some(b[s..].to_vec())
    }
}

/// Structural equality: tags, anchors, key order, values (NaN equal), flow style.
pub fn same(a: &Node, b: &Node, at: &str) {
    assert_eq!(a.tag, b.tag, "{at}: tag");
    assert_eq!(a.anchor, b.anchor, "{at}: anchor");
    match (&a.kind, &b.kind) {
        (NodeKind::Scalar(x), NodeKind::Scalar(y)) => match (&x.value, &y.value) {
            (Value::Float(f), Value::Float(g)) => {
                assert!(f == g || (f.is_nan() && g.is_nan()), "{at}: {f} vs {g}")
            }
            (Value::Str, Value::Str) | (Value::Timestamp, Value::Timestamp) => {
                assert_eq!(x.text, y.text, "{at}")
            }
            (v, w) => assert_eq!(v, w, "{at}"),
        },
        (NodeKind::Sequence(x), NodeKind::Sequence(y)) => {
            assert_eq!(x.flow, y.flow, "{at}: flow");
            assert_eq!(x.items.len(), y.items.len(), "{at}: length");
            for (i, (p, q)) in x.items.iter().zip(&y.items).enumerate() {
                same(p, q, &format!("{at}/{i}"));
            }
        }
        (NodeKind::Mapping(x), NodeKind::Mapping(y)) => {
            assert_eq!(x.flow, y.flow, "{at}: flow");
            assert_eq!(x.entries.len(), y.entries.len(), "{at}: length");
            for ((k1, v1), (k2, v2)) in x.entries.iter().zip(&y.entries) {
                same(k1, k2, &format!("{at}/<key>"));
                let name = k1.as_scalar().map(|s| s.text.clone()).unwrap_or_default();
                same(v1, v2, &format!("{at}/{name}"));
            }
        }
        (NodeKind::Alias(x), NodeKind::Alias(y)) => {
            assert_eq!(x.anchor, y.anchor, "{at}");
            assert_eq!(x.target, y.target, "{at}");
        }
        _ => panic!("{at}: node kinds differ"),
    }
}

fn round_trip(tree: &[u8], name: &str) -> (Document, Vec<u8>) {
    let doc = parse(tree, &Limits::default())
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .document;
    let out = emit(&doc, &EmitOptions::default()).unwrap();
    let again = parse(&out, &Limits::default()).unwrap().document;
    same(&doc.root, &again.root, name);
    assert_eq!(doc.tag_directives, again.tag_directives, "{name}");
    (doc, out)
}

#[test]
fn python_samples_reemit_byte_identically() {
    asdf_testdata::needs_conformance!();
    let mut n = 0;
    for p in files(&conformance().join("python-asdf-samples"), "asdf") {
        let Some(tree) = tree_of(&p) else { continue };
        let (_, out) = round_trip(&tree, &p.display().to_string());
        assert!(
            out == tree,
            "{}: re-emitted tree differs:\n{}",
            p.display(),
            String::from_utf8_lossy(&out)
        );
        n += 1;
    }
    println!("{n} Python asdf 6.0 trees re-emitted byte for byte");
    assert!(n >= 25, "{n}");
}

/// The asdf-standard reference files (trees of the .asdf files and the .yaml twins, every
/// version): the tree survives parse -> emit -> parse, and the text comes back byte for
/// byte, unicode_spp.yaml included (characters outside the Basic Multilingual Plane are
/// escaped in double quotes, as libyaml, and so Python asdf's CSafeDumper, writes them).
#[test]
fn reference_files_round_trip() {
    asdf_testdata::needs_conformance!();
    let dir = conformance().join("asdf-standard/reference_files");
    let mut files_all = files(&dir, "asdf");
    files_all.extend(files(&dir, "yaml"));
    let (mut identical, mut differ) = (0, Vec::new());
    for p in &files_all {
        let Some(tree) = tree_of(p) else { continue };
        let name = p.strip_prefix(&dir).unwrap().display().to_string();
        let (_, out) = round_trip(&tree, &name);
        if out == tree {
            identical += 1;
        } else {
            differ.push(name);
        }
    }
    println!("reference files: {identical} byte-identical, differing: {differ:?}");
    assert!(differ.is_empty(), "{differ:?} differ");
    assert!(identical >= 200, "{identical}");
}

#[test]
fn generated_catalogue_round_trips() {
    let doc = asdf_yaml::sample::catalogue(200);
    let text = emit(&doc, &EmitOptions::default()).unwrap();
    let (back, again) = round_trip(&text, "catalogue");
    assert_eq!(again, text);
    let rows = back.root.get("catalogue").unwrap().as_sequence().unwrap();
    assert_eq!(rows.items.len(), 200);
    assert_eq!(rows.items[7].get("yes").unwrap().as_str(), Some("yes"));
    assert_eq!(
        rows.items[7].get("ra").unwrap().as_f64(),
        doc.root.get("catalogue").unwrap().as_sequence().unwrap().items[7]
            .get("ra")
            .unwrap()
            .as_f64()
    );
}

/// `emit_edited` writes replacements, root entries put first and a default `%YAML` version,
/// and leaves the document as it was.
#[test]
fn edits_apply_while_writing() {
    use asdf_yaml::{Document, Edits, EmitOptions, Node, emit, emit_edited};
    let mut doc = Document::new(Node::map(vec![
        (Node::str("a"), Node::int(1)),
        (Node::str("b"), Node::seq(vec![Node::int(2), Node::int(3)])),
    ]));
    doc.version = None;
    let before = emit(&doc, &EmitOptions::default()).unwrap();
    let mut e = Edits::default();
    let b = doc.root.get("b").unwrap();
    e.replace(&b.as_sequence().unwrap().items[1], Node::str("three"));
    e.prepend_to_root(Node::str("first"), Node::bool(true));
    e.default_version((1, 1));
    let out = String::from_utf8(emit_edited(&doc, &EmitOptions::default(), &e).unwrap()).unwrap();
    assert!(out.starts_with("%YAML 1.1\n"), "{out}");
    assert!(out.contains("first: true\na: 1\nb: [2, three]\n"), "{out}");
    assert_eq!(emit(&doc, &EmitOptions::default()).unwrap(), before);
}
