//! Duplicate keys (invalid YAML that PyYAML reads: the last value takes the first key's place)
//! keep PyYAML's meaning for anchors and aliases: an alias is the anchored node itself, so an
//! anchor whose node a duplicate dropped still means that node's value, before and after.
//! The expected trees are what PyYAML 6's CSafeLoader builds for each text (checked by hand
//! with `yaml.load(text, Loader=yaml.CSafeLoader)`), written without aliases or duplicates.
//! The first case is the input the `yaml` fuzz target found (minimised): its emitted text
//! named an anchor that no longer existed.

#![allow(clippy::unwrap_used)]

use asdf_yaml::{Document, EmitOptions, Limits, Node, NodeKind, Value, emit, parse};

/// The tree's values with aliases followed: tags, scalar texts, structure.
fn plain(doc: &Document, n: &Node, out: &mut String) {
    let n = doc.resolve(n);
    if let Some(t) = &n.tag {
        out.push_str(t);
        out.push(' ');
    }
    match &n.kind {
        NodeKind::Scalar(s) if s.value == Value::Null => out.push_str("null"),
        NodeKind::Scalar(s) => out.push_str(&format!("{:?}={:?}", s.value, s.text)),
        NodeKind::Sequence(q) => {
            out.push('[');
            for i in &q.items {
                plain(doc, i, out);
                out.push(',');
            }
            out.push(']');
        }
        NodeKind::Mapping(m) => {
            out.push('{');
            for (k, v) in &m.entries {
                plain(doc, k, out);
                out.push(':');
                plain(doc, v, out);
                out.push(',');
            }
            out.push('}');
        }
        NodeKind::Alias(a) => out.push_str(&format!("<dangling {}>", a.anchor)),
    }
}

fn values(text: &[u8]) -> String {
    let d = parse(text, &Limits::default()).unwrap().document;
    let mut s = String::new();
    plain(&d, &d.root, &mut s);
    s
}

const CASES: [(&str, &str); 6] = [
    ("a: &r\na: *r\n", "a: null\n"),
    ("a: &r 1\nb: 2\na: [*r, *r]\nc: *r\n", "a: [1, 1]\nb: 2\nc: 1\n"),
    ("a: &r {x: &s 1, y: *s}\na: *s\nb: *r\n", "a: 1\nb: {x: 1, y: 1}\n"),
    ("a: &r [1]\nb: *r\na: 2\nc: *r\n", "a: 2\nb: [1]\nc: [1]\n"),
    (
        "m: {a: &r [1, &q 2], a: [*r, *q]}\nn: *r\no: *q\n",
        "m: {a: [[1, 2], 2]}\nn: [1, 2]\no: 2\n",
    ),
    // Aliases to a dropped node from a nested mapping, after the duplicate.
    (
        "a: &r {k: [1, 2]}\na: 0\nb: {c: *r, d: [*r]}\n",
        "a: 0\nb: {c: {k: [1, 2]}, d: [{k: [1, 2]}]}\n",
    ),
];

#[test]
fn aliases_into_a_replaced_value_keep_pyyaml_values() {
    for (text, expected) in CASES {
        assert_eq!(values(text.as_bytes()), values(expected.as_bytes()), "{text}");
    }
}

#[test]
fn what_is_emitted_parses_again_to_the_same_values() {
    for (text, expected) in CASES {
        let first = parse(text.as_bytes(), &Limits::default()).unwrap();
        let out = emit(&first.document, &EmitOptions::default()).unwrap();
        assert_eq!(
            values(&out),
            values(expected.as_bytes()),
            "{text}\nemitted:\n{}",
            String::from_utf8_lossy(&out)
        );
    }
}

#[test]
fn the_fuzz_finding_round_trips() {
    let text = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fuzz-crashes/yaml/dup-key-alias-into-replaced-value.yaml"
    ))
    .unwrap();
    let first = parse(&text, &Limits::default()).unwrap();
    let out = emit(&first.document, &EmitOptions::default()).unwrap();
    let mut a = String::new();
    plain(&first.document, &first.document.root, &mut a);
    assert!(!a.contains("<dangling"), "{a}");
    assert_eq!(values(&out), a, "emitted:\n{}", String::from_utf8_lossy(&out));
}
