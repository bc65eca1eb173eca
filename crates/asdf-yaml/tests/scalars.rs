//! Plain scalars resolve exactly as PyYAML's SafeLoader resolves them. The expected values
//! were recorded from PyYAML 6.0.3 (with libyaml) by `tests/data/pyyaml_scalars.py`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use asdf_yaml::{Limits, Value, parse};

#[test]
fn plain_scalars_match_pyyaml() {
    let table = include_str!("data/pyyaml_scalars.tsv");
    let mut n = 0;
    for line in table.lines().filter(|l| !l.starts_with('#')) {
        let mut parts = line.split('\t');
        let (text, kind, want) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap_or(""));
        let src = format!("v: {text}\n");
        let parsed = parse(src.as_bytes(), &Limits::default());
        n += 1;
        if kind == "error" && want == "ConstructorError" {
            // PyYAML's safe loader cannot construct `=` (`!!value`) and `<<` as a value
            // (`!!merge`); Python asdf's loader, the reference for trees, gives the text as a
            // string tagged so (as for every YAML tag it does not construct).
            let doc = parsed.unwrap_or_else(|e| panic!("`{text}`: {e}")).document;
            let v = doc.root.get("v").unwrap();
            let tag = if text == "=" {
                "tag:yaml.org,2002:value"
            } else {
                "tag:yaml.org,2002:merge"
            };
            assert_eq!((v.as_str(), v.tag.as_deref()), (Some(text), Some(tag)), "`{text}`");
            continue;
        }
        if kind == "error" {
            assert!(parsed.is_err(), "`{text}`: PyYAML fails ({want}), we gave {parsed:?}");
            continue;
        }
        let doc = parsed.unwrap_or_else(|e| panic!("`{text}`: {e}")).document;
        let s = doc.root.get("v").unwrap().as_scalar().unwrap().clone();
        match (kind, &s.value) {
            ("str", Value::Str) => assert_eq!(s.text, want, "`{text}`"),
            ("null", Value::Null) | ("timestamp", Value::Timestamp) => {}
            ("bool", Value::Bool(b)) => assert_eq!(b.to_string(), want, "`{text}`"),
            ("int", Value::Int(i)) => assert_eq!(i.to_string(), want, "`{text}`"),
            ("int", Value::BigInt(i)) => assert_eq!(i.to_string(), want, "`{text}`"),
            ("float", Value::Float(f)) if want == "nan" => assert!(f.is_nan(), "`{text}`"),
            ("float", Value::Float(f)) => {
                let w: f64 = want.parse().unwrap();
                assert_eq!(*f, w, "`{text}`");
                // And it is written back as Python's repr writes it.
                if f.is_finite() {
                    assert_eq!(asdf_yaml::resolve::python_float_repr(*f), want, "`{text}`");
                }
            }
            (k, v) => panic!("`{text}`: PyYAML gives {k} {want:?}, we gave {v:?}"),
        }
    }
    println!("{n} plain scalars resolve as PyYAML resolves them");
    assert!(n >= 100, "{n}");
}

#[test]
fn strings_that_would_resolve_otherwise_are_quoted_on_write() {
    use asdf_yaml::{Document, EmitOptions, Node, emit};
    let table = include_str!("data/pyyaml_scalars.tsv");
    for line in table.lines().filter(|l| !l.starts_with('#')) {
        let text = line.split('\t').next().unwrap();
        let mut root = Node::map(vec![(Node::str("v"), Node::str(text))]);
        if let Some(m) = root.as_mapping_mut() {
            m.flow = false;
        }
        let doc = Document::new(root);
        let out = emit(&doc, &EmitOptions::default()).unwrap();
        let back = parse(&out, &Limits::default()).unwrap().document;
        assert_eq!(
            back.root.get("v").unwrap().as_str(),
            Some(text),
            "{}",
            String::from_utf8_lossy(&out)
        );
    }
    for s in [
        "yes",
        "010",
        "1:30",
        "~",
        "",
        "1_0",
        "null",
        ".nan",
        "2001-12-14",
        "=",
        "<<",
    ] {
        let doc = Document::new(Node::seq(vec![Node::str(s)]));
        let out = String::from_utf8(emit(&doc, &EmitOptions::default()).unwrap()).unwrap();
        assert!(out.contains(&format!("['{s}']")), "{s}: {out}");
    }
}

/// The non-specific tag `!` asks for the plain resolution, quoted or not, as C libyaml reads
/// it: Python asdf writes `time: ! '2026-11-22 03:20:32+00:00'` for a timestamp libyaml must
/// quote, and PyYAML reads a timestamp back. Without the tag, quoted text stays a string.
#[test]
fn the_non_specific_tag_resolves_as_plain() {
    let doc = parse(
        b"a: ! '2026-11-22 03:20:32+00:00'\nb: ! \"12\"\nc: ! 'text'\nd: '2026-11-22 03:20:32+00:00'\ne: ! 2001-12-14\n",
        &Limits::default(),
    )
    .unwrap()
    .document;
    let value = |k: &str| doc.root.get(k).unwrap().as_scalar().unwrap().value.clone();
    assert_eq!(value("a"), Value::Timestamp);
    assert_eq!(value("b"), Value::Int(12));
    assert_eq!(value("c"), Value::Str);
    assert_eq!(value("d"), Value::Str);
    assert_eq!(value("e"), Value::Timestamp);
}

/// YAML core tags PyYAML's safe constructor lacks (`!!python/tuple`, `!!python/object:...`,
/// `!!python/name:...`, any `!!other`) on scalars and collections: the node as written, its tag
/// kept, as Python asdf 6.0's loader gives them (checked there: a `TaggedList`, `TaggedDict`
/// or `TaggedString` with the tag); nothing constructed, nothing refused.
#[test]
fn unconstructed_core_tags_are_kept_as_tagged_nodes() {
    let src = "t: !!python/tuple [1, {a: 2}]\no: !!python/object:os.system {a: 1}\nn: !!python/name:os.system ''\ns: !!python/str abc\nf: !!foo 1\nv: !!value x\n";
    let doc = parse(src.as_bytes(), &Limits::default()).unwrap().document;
    let y = "tag:yaml.org,2002:";
    let tag = |k: &str| {
        doc.root
            .get(k)
            .unwrap()
            .tag
            .as_deref()
            .map(|t| t.strip_prefix(y).unwrap().to_owned())
    };
    assert_eq!(tag("t").as_deref(), Some("python/tuple"));
    assert_eq!(doc.root.get("t").unwrap().as_sequence().unwrap().items.len(), 2);
    assert_eq!(tag("o").as_deref(), Some("python/object:os.system"));
    assert_eq!(doc.root.get("o").unwrap().get("a").unwrap().as_i64(), Some(1));
    assert_eq!(tag("n").as_deref(), Some("python/name:os.system"));
    assert_eq!(doc.root.get("n").unwrap().as_str(), Some(""));
    assert_eq!(doc.root.get("s").unwrap().as_str(), Some("abc"));
    // A number under an unknown tag is the text, a string (Python asdf: TaggedString '1').
    assert_eq!(doc.root.get("f").unwrap().as_str(), Some("1"));
    assert_eq!(doc.root.get("v").unwrap().as_str(), Some("x"));
    // The known collection tags still check their shapes as PyYAML does.
    assert!(parse(b"s: !!set [1, 2]\n", &Limits::default()).is_err());
    assert!(parse(b"o: !!omap {a: 1}\n", &Limits::default()).is_err());
}
