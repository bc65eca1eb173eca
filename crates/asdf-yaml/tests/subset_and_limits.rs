//! The ASDF YAML subset, the YAML cases of Python asdf's test data, and limits.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use asdf_yaml::{ConstructError, Error, LimitError, Limits, NodeKind, SubsetError, Value, Warning, parse, pointer};

fn inline(name: &str) -> Vec<u8> {
    let dir = asdf_testdata::conformance_dir().join("asdf-pytests-data/inline");
    let r = asdf_layout::Reader::open_path(dir.join(name)).unwrap();
    r.tree_bytes().unwrap().to_vec()
}

#[test]
fn invalid_omaps_are_constructor_errors() {
    asdf_testdata::needs_conformance!();
    for f in [
        "yaml_invalid_omap_1.asdf",
        "yaml_invalid_omap_2.asdf",
        "yaml_invalid_omap_3.asdf",
    ] {
        match parse(&inline(f), &Limits::default()) {
            Err(Error::Construct {
                kind: ConstructError::Shape { tag, .. },
                span,
            }) => {
                assert_eq!(tag, "tag:yaml.org,2002:omap", "{f}");
                assert!(span.line >= 3, "{f}: points into the tree ({span})");
            }
            other => panic!("{f}: {other:?}"),
        }
    }
    let ok = parse(b"od: !!omap\n- a: 1\n- b: 2\n", &Limits::default()).unwrap();
    assert!(ok.document.root.get("od").is_some());
}

#[test]
fn recursive_tagged_aliases_stay_links() {
    asdf_testdata::needs_conformance!();
    let p = parse(&inline("yaml_recursive_tagged_aliases.asdf"), &Limits::default()).unwrap();
    let d = &p.document;
    let o = d.root.get("o").unwrap();
    assert_eq!(o.tag.as_deref(), Some("tag:stsci.edu:asdf/some/tag-1.0.0"));
    // o.inverse.inverse is o itself.
    let again = pointer::get(d, "/o/inverse/inverse").unwrap();
    assert!(std::ptr::eq(again, o));
    let l = d.root.get("l").unwrap();
    assert!(std::ptr::eq(pointer::get(d, "/l/0").unwrap(), l));
    assert!(std::ptr::eq(pointer::get(d, "/l/0/0/0").unwrap(), l));
}

#[test]
fn explicit_full_tags_and_yaml_versions() {
    asdf_testdata::needs_conformance!();
    let d = parse(&inline("yaml_explicit_full_tags.asdf"), &Limits::default())
        .unwrap()
        .document;
    assert_eq!(d.root.tag.as_deref(), Some("tag:stsci.edu:asdf/core/asdf-1.1.0"));
    assert_eq!(
        d.root.get("foo").unwrap().tag.as_deref(),
        Some("tag:stsci.edu:asdf/core/ndarray-1.0.0")
    );
    assert!(d.tag_directives.is_empty());
    let p = parse(&inline("yaml_version_1_2_directive.asdf"), &Limits::default()).unwrap();
    assert_eq!(p.warnings, vec![Warning::YamlVersion { major: 1, minor: 2 }]);
    assert_eq!(p.document.root.get("foo").unwrap().as_str(), Some("bar"));
}

#[test]
fn integer_literal_limits() {
    asdf_testdata::needs_conformance!();
    let ok = parse(&inline("int_literal_limits_ok.asdf"), &Limits::default()).unwrap();
    assert!(ok.warnings.is_empty(), "{:?}", ok.warnings);
    assert_eq!(
        ok.document.root.get("min").unwrap().as_i64(),
        Some(-9_223_372_036_854_775_806)
    );
    for (f, text) in [
        ("int_literal_out_of_range_pos_value.asdf", "9223372036854775808"),
        ("int_literal_out_of_range_neg_value.asdf", "-9223372036854775807"),
        ("int_literal_out_of_range_pos_key.asdf", "9223372036854775808"),
        ("int_literal_out_of_range_neg_key.asdf", "-9223372036854775807"),
    ] {
        let p = parse(&inline(f), &Limits::default()).unwrap();
        match &p.warnings[..] {
            [Warning::IntOutOfRange { text: t, span }] => {
                assert_eq!(t, text, "{f}");
                assert_eq!(span.line, 3, "{f}: 0-based line within the tree");
            }
            w => panic!("{f}: {w:?}"),
        }
        // The exact value is kept.
        let m = p.document.root.as_mapping().unwrap();
        let n = if f.contains("key") {
            &m.entries[0].0
        } else {
            &m.entries[0].1
        };
        assert_eq!(n.as_scalar().unwrap().text, text);
        assert!(matches!(n.as_scalar().unwrap().value, Value::Int(_) | Value::BigInt(_)));
    }
}

#[test]
fn keys_must_be_str_int_or_bool() {
    for bad in [
        "? [1, 2]\n: x\n",
        "1.5: x\n",
        "~: x\n",
        "? {a: 1}\n: x\n",
        "2001-12-14: x\n",
    ] {
        match parse(bad.as_bytes(), &Limits::default()) {
            Err(Error::Subset {
                kind: SubsetError::KeyType,
                span,
            }) => assert_eq!(span.line, 0, "{bad}"),
            other => panic!("{bad:?}: {other:?}"),
        }
    }
    let ok = parse(
        b"a: 1\n2: b\ntrue: c\n'1.5': d\n//: a comment key\nn: ~\n",
        &Limits::default(),
    )
    .unwrap();
    let m = ok.document.root.as_mapping().unwrap();
    assert_eq!(m.entries.len(), 6);
    assert!(ok.document.root.get("n").unwrap().is_null());
    assert_eq!(ok.document.root.get("//").unwrap().as_str(), Some("a comment key"));
}

#[test]
fn duplicate_keys_keep_the_later_value() {
    let p = parse(b"a: 1\nb: 2\na: 3\n", &Limits::default()).unwrap();
    assert_eq!(p.document.root.as_mapping().unwrap().entries.len(), 2);
    assert_eq!(p.document.root.get("a").unwrap().as_i64(), Some(3));
    assert!(matches!(&p.warnings[..], [Warning::DuplicateKey { key, .. }] if key == "a"));
}

#[test]
fn errors_name_line_and_column() {
    let e = parse(b"a: 1\nb: [1, 2\nc: 3\n", &Limits::default()).unwrap_err();
    let s = e.span().unwrap();
    assert!(s.line >= 1, "{e}");
    assert!(e.to_string().contains(&format!("{}:", s.line + 1)), "{e}");
    let e = parse(b"a: !!int abc\n", &Limits::default()).unwrap_err();
    assert_eq!(e.span().unwrap().to_string(), "1:4");
    assert!(matches!(
        parse(b"a: *nope\n", &Limits::default()),
        Err(Error::Subset {
            kind: SubsetError::UndefinedAlias(_),
            ..
        })
    ));
    assert!(matches!(
        parse(b"--- 1\n--- 2\n", &Limits::default()),
        Err(Error::Subset {
            kind: SubsetError::MultipleDocuments,
            ..
        })
    ));
    assert!(parse(b"\xff\xfe garbage", &Limits::default()).is_err());
}

#[test]
fn alias_bomb_is_refused() {
    // The classic "billion laughs": 9 levels of 9 aliases each.
    let mut s = String::from("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..10 {
        let refs = vec![format!("*a{}", i - 1); 9].join(", ");
        s.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    let t = std::time::Instant::now();
    match parse(s.as_bytes(), &Limits::default()) {
        Err(Error::Limits {
            kind: LimitError::Expansion(_),
            span,
        }) => assert!(span.line >= 5, "{span}"),
        other => panic!("{other:?}"),
    }
    assert!(t.elapsed().as_secs() < 5);
    // With a higher limit the links are kept, unexpanded.
    let mut lim = Limits::default();
    lim.max_expanded_nodes = u64::MAX;
    let p = parse(s.as_bytes(), &lim).unwrap();
    assert!(matches!(
        p.document.root.get("a9").unwrap().as_sequence().unwrap().items[0].kind,
        NodeKind::Alias(_)
    ));
    lim.max_aliases = 10;
    assert!(matches!(
        parse(s.as_bytes(), &lim),
        Err(Error::Limits {
            kind: LimitError::Aliases(10),
            ..
        })
    ));
}

#[test]
fn deep_nesting_is_refused_without_stack_overflow() {
    for (open, close) in [("[", "]"), ("{a: ", "}")] {
        let s = format!("{}1{}", open.repeat(10_000), close.repeat(10_000));
        match parse(s.as_bytes(), &Limits::default()) {
            Err(Error::Limits {
                kind: LimitError::Depth(1000),
                span,
            }) => assert_eq!(span.line, 0),
            other => panic!("{other:?}"),
        }
    }
    let block: String = (0..10_000).map(|i| format!("{}- \n", "  ".repeat(i))).collect();
    assert!(matches!(
        parse(block.as_bytes(), &Limits::default()),
        Err(Error::Limits { .. }) | Err(Error::Syntax { .. })
    ));
    // Within the limit, deep trees parse and emit (iteratively).
    let s = format!("{}1{}", "[".repeat(900), "]".repeat(900));
    let d = parse(s.as_bytes(), &Limits::default()).unwrap().document;
    let out = asdf_yaml::emit(&d, &asdf_yaml::EmitOptions::default()).unwrap();
    assert!(parse(&out, &Limits::default()).is_ok());
}

/// The event parser alone (no [`Limits`]) refuses flow nesting past 10,000 levels, and deep
/// nesting followed by many entries stays linear: each case must finish under a watchdog.
#[test]
fn deep_flow_nesting_in_the_event_parser() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let too_deep = "[".repeat(20_000);
        let refused = matches!(
            asdf_yaml::events::events(too_deep.as_bytes()),
            Err(Error::Limits {
                kind: LimitError::Depth(10_000),
                ..
            })
        );
        // 9,000 open sequences or mappings, then 200,000 entries on one line or on many.
        let mut finished = 0;
        for (open, entry) in [("[", "a, "), ("[", "a,\n"), ("{", "a: b, "), ("{", "a: b,\n")] {
            let text = format!("{}{}", open.repeat(9_000), entry.repeat(200_000));
            // Unclosed: a syntax error at the end, after every entry was scanned.
            if let Err(Error::Syntax { span, .. }) = asdf_yaml::events::events(text.as_bytes()) {
                assert!(span.index >= text.len() as u64 - 2, "{open:?} {entry:?}: {span}");
                finished += 1;
            }
        }
        let _ = tx.send((refused, finished));
    });
    let (refused, finished) = rx
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("deep nesting made the event parser hang");
    assert!(refused, "20,000 nested flow sequences were not refused");
    assert_eq!(finished, 4);
}

/// Flow content at or left of its block's indentation, which C libyaml (PyYAML's CSafeLoader)
/// reads: stdatamodels schemas close flow sequences at column 0. Expected values as
/// `yaml.load(text, Loader=yaml.CSafeLoader)` gives them.
#[test]
fn flow_content_left_of_its_block_reads_as_libyaml_reads_it() {
    for (text, expected) in [
        ("a: [\n  1, 2\n]\n", "a: [1, 2]\n"),
        ("a:\n  b: [\n    1, 2\n]\n", "a: {b: [1, 2]}\n"),
        ("a: {\n  x: 1\n}\n", "a: {x: 1}\n"),
        ("a: [\n1, 2]\n", "a: [1, 2]\n"),
        ("- [a,\nb]\n", "- [a, b]\n"),
        ("key:\n  - [\n  1]\n", "key: [[1]]\n"),
        ("a: [\n  b: 1\n]\n", "a: [{b: 1}]\n"),
    ] {
        let got = asdf_yaml::parse(text.as_bytes(), &Limits::default()).unwrap_or_else(|e| panic!("{text:?}: {e}"));
        let want = asdf_yaml::parse(expected.as_bytes(), &Limits::default()).unwrap();
        let emit = |d: &asdf_yaml::Document| {
            let mut d = d.clone();
            // Compare values, not styles.
            let mut stack = vec![&mut d.root];
            while let Some(n) = stack.pop() {
                match &mut n.kind {
                    asdf_yaml::NodeKind::Mapping(m) => {
                        m.flow = true;
                        stack.extend(m.entries.iter_mut().map(|(_, v)| v));
                    }
                    asdf_yaml::NodeKind::Sequence(s) => {
                        s.flow = true;
                        stack.extend(s.items.iter_mut());
                    }
                    _ => {}
                }
            }
            asdf_yaml::emit(&d, &asdf_yaml::EmitOptions::default()).unwrap()
        };
        assert_eq!(emit(&got.document), emit(&want.document), "{text:?}");
    }
}

/// Outside an ASDF tree (schemas, manifests) any scalar is a key, as in PyYAML (a dkist schema
/// has a `null` key); an ASDF tree keeps its key rule.
#[test]
fn schema_documents_take_any_scalar_key() {
    let text = b"null: 1\n~: 2\n1.5: x\n2001-01-01: y\nname: z\n";
    let doc = asdf_yaml::parse_yaml(text, &Limits::default()).unwrap();
    let m = doc.document.root.as_mapping().unwrap();
    // `null` and `~` are the same key: the last value in the first key's place (PyYAML:
    // {None: 2, 1.5: 'x', date(2001, 1, 1): 'y', 'name': 'z'}).
    assert_eq!(m.entries.len(), 4);
    assert!(m.entries[0].0.is_null());
    assert_eq!(m.entries[0].1.as_i64(), Some(2));
    assert_eq!(m.entries[1].0.as_f64(), Some(1.5));
    assert!(
        asdf_yaml::parse(text, &Limits::default()).is_err(),
        "an ASDF tree refuses a null key"
    );
    assert!(
        asdf_yaml::parse_yaml(b"[a]: 1\n", &Limits::default()).is_err(),
        "a collection key"
    );
}

#[test]
fn an_alias_key_is_its_anchored_scalar() {
    // As PyYAML reads it: `{*k : 2}` is `{name: 2}`.
    let ok = parse(b"a: &k name\nb: {*k : 2}\nc: &n 5\nd: {*n : x}\n", &Limits::default()).unwrap();
    let b = ok.document.root.get("b").unwrap().as_mapping().unwrap();
    assert_eq!(b.entries[0].0.as_str(), Some("name"));
    assert_eq!(b.entries[0].1.as_i64(), Some(2));
    let d = ok.document.root.get("d").unwrap().as_mapping().unwrap();
    assert!(matches!(d.entries[0].0.as_scalar().unwrap().value, Value::Int(5)));
    // An alias to a float, or to a collection, is still not a key.
    for bad in ["a: &k 1.5\nb: {*k : 2}\n", "a: &k [1]\nb: {*k : 2}\n"] {
        match parse(bad.as_bytes(), &Limits::default()) {
            Err(Error::Subset {
                kind: SubsetError::KeyType,
                span,
            }) => assert_eq!(span.line, 1, "{bad}"),
            other => panic!("{bad:?}: {other:?}"),
        }
    }
}
