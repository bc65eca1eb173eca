//! Values keep their type through emit and parse wherever the emitter has to quote them
//! (found by the `yaml` fuzz target: C libyaml's `! '...'` turned a timestamp in a flow
//! collection into a string).

#![allow(clippy::unwrap_used)]

use asdf_yaml::{EmitOptions, Limits, NodeKind, Value, emit, parse};

#[test]
fn a_timestamp_in_a_flow_mapping_stays_a_timestamp() {
    for text in [
        "--- {time: 2001-11-23 10:01:42}\n",
        "--- {time: 2001-11-23 10:01:42 -5, who: ed}\n",
        "--- [2023-07-28 17:58:39.903239, 2002-12-14]\n",
    ] {
        let first = parse(text.as_bytes(), &Limits::default()).unwrap();
        let out = emit(&first.document, &EmitOptions::default()).unwrap();
        let again = parse(&out, &Limits::default()).unwrap();
        let stamps = |d: &asdf_yaml::Document| -> Vec<String> {
            let mut v = Vec::new();
            let items: Vec<&asdf_yaml::Node> = match &d.root.kind {
                NodeKind::Mapping(m) => m.entries.iter().map(|(_, v)| v).collect(),
                NodeKind::Sequence(s) => s.items.iter().collect(),
                _ => Vec::new(),
            };
            for n in items {
                if let NodeKind::Scalar(s) = &n.kind
                    && s.value == Value::Timestamp
                {
                    v.push(s.text.to_string());
                }
            }
            v
        };
        assert!(!stamps(&first.document).is_empty(), "{text}");
        assert_eq!(
            stamps(&first.document),
            stamps(&again.document),
            "{}",
            String::from_utf8_lossy(&out)
        );
    }
}

/// A duplicate key whose later value is an alias keeps the first key's place (as a Python
/// dict does), which comes before the anchor: the emitter writes the anchored node there and
/// an alias where the anchor was, so the text parses again to the same tree (found by the
/// `yaml` fuzz target).
#[test]
fn an_alias_that_comes_before_its_anchor_is_written_in_full() {
    let text = "--- \ninvoice: 34843\nbill-to: &id001 {given: Chris}\ninvoice: *id001\n...\n";
    let first = parse(text.as_bytes(), &Limits::default()).unwrap();
    let out = emit(&first.document, &EmitOptions::default()).unwrap();
    let again = parse(&out, &Limits::default()).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out)));
    for doc in [&first.document, &again.document] {
        for key in ["invoice", "bill-to"] {
            let v = doc.resolve(doc.root.get(key).unwrap());
            assert_eq!(v.get("given").and_then(asdf_yaml::Node::as_str), Some("Chris"), "{key}");
        }
    }
    let shown = String::from_utf8_lossy(&out);
    assert!(shown.find("&id001").unwrap() < shown.find("*id001").unwrap(), "{shown}");
}

/// A duplicate key whose value defines an anchor: the value takes the first key's place, and
/// aliases to that anchor (inside the value and after it) resolve to it there (found by the
/// `yaml` fuzz target).
#[test]
fn anchors_inside_a_duplicate_key_value_stay_resolvable() {
    let text = "a: &x Foo\nb: &y Bar\nc: *y\nb: {v: &y Baz, w: *y}\nd: *y\n";
    let doc = parse(text.as_bytes(), &Limits::default()).unwrap().document;
    let s = |p: &str| {
        let n = asdf_yaml::pointer::get(&doc, p).unwrap();
        doc.resolve(n).as_str().map(str::to_owned)
    };
    assert_eq!(s("/b/v").as_deref(), Some("Baz"));
    assert_eq!(s("/b/w").as_deref(), Some("Baz"));
    assert_eq!(s("/d").as_deref(), Some("Baz"));
    let out = emit(&doc, &EmitOptions::default()).unwrap();
    let again = parse(&out, &Limits::default()).unwrap().document;
    let n = asdf_yaml::pointer::get(&again, "/d").unwrap();
    assert_eq!(
        again.resolve(n).as_str(),
        Some("Baz"),
        "{}",
        String::from_utf8_lossy(&out)
    );
}
