//! Opening from any `Read + Seek`, and the reference policy (which other files a file may make
//! its reader open).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use asdf::{OpenOptions, ReferencePolicy};

#[test]
fn a_read_seek_source_gives_the_same_file() {
    asdf_testdata::needs_conformance!();
    let p = asdf_testdata::conformance_dir().join("python-asdf-samples/f_misc.asdf");
    let a = asdf::open(&p).unwrap();
    let b = asdf::Open::reader(std::io::Cursor::new(std::fs::read(&p).unwrap()))
        .options(OpenOptions::default())
        .open()
        .unwrap();
    let c = asdf::Open::reader(std::fs::File::open(&p).unwrap())
        .options(OpenOptions::default())
        .open()
        .unwrap();
    // (Compared as emitted YAML: the tree holds a NaN, which is not equal to itself.)
    let yaml = |f: &asdf::AsdfFile| asdf::emit_yaml(f.document()).unwrap();
    assert_eq!(yaml(&a), yaml(&b));
    assert_eq!(yaml(&a), yaml(&c));
    assert_eq!(a.source().layout().block_count(), c.source().layout().block_count());
    for i in 0..a.source().layout().block_count() {
        assert_eq!(
            a.source().layout().read_data(i).unwrap(),
            c.source().layout().read_data(i).unwrap()
        );
    }
    // A truncated stream is an error, not a panic.
    let bytes = std::fs::read(&p).unwrap();
    let cut = bytes[..bytes.len() / 2].to_vec();
    if let Ok(f) = asdf::Open::reader(std::io::Cursor::new(cut))
        .options(OpenOptions::default())
        .open()
    {
        assert!((0..f.source().layout().block_count()).any(|i| f.source().layout().read_data(i).is_err()));
    }
}

#[test]
fn references_outside_the_directory_need_the_permissive_policy() {
    asdf_testdata::needs_conformance!();
    let dir = std::env::temp_dir().join(format!("asdf-rs-refpolicy-{}", std::process::id()));
    let sub = dir.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let target = asdf_testdata::conformance_dir().join("python-asdf-samples/a_small.asdf");
    std::fs::copy(&target, dir.join("a_small.asdf")).unwrap();
    let abs = dir.join("a_small.asdf");
    let main = format!(
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
         up: {{$ref: '../a_small.asdf#/data'}}\nabs: {{$ref: '{}#/data'}}\n...\n",
        abs.display()
    );
    std::fs::write(sub.join("main.asdf"), main).unwrap();
    let path = sub.join("main.asdf");

    let mut f = asdf::open(&path).unwrap();
    let e = f.resolve_references().unwrap_err().to_string();
    assert!(e.contains("only relative paths"), "{e}");

    let mut f = asdf::Open::path(&path)
        .options(OpenOptions::default().references(ReferencePolicy::None))
        .open()
        .unwrap();
    let e = f.resolve_references().unwrap_err().to_string();
    assert!(e.contains("allows no other file"), "{e}");

    // Permissive: `..` and absolute paths are followed.
    let mut f = asdf::Open::path(&path)
        .options(OpenOptions::default().references(ReferencePolicy::AnyLocalPath))
        .open()
        .unwrap();
    assert_eq!(f.resolve_references().unwrap(), 2);
    let want = asdf::open(&target)
        .unwrap()
        .array("/data")
        .and_then(|a| a.values())
        .unwrap()
        .elements;
    assert_eq!(f.array("/up").and_then(|a| a.values()).unwrap().elements, want);
    assert_eq!(f.array("/abs").and_then(|a| a.values()).unwrap().elements, want);
    // http(s) is never fetched, whatever the policy.
    let web = std::fs::read_to_string(&path)
        .unwrap()
        .replace("...\n", "web: {$ref: 'https://example.org/x.asdf#/a'}\n...\n");
    std::fs::write(sub.join("web.asdf"), web).unwrap();
    let mut f = asdf::Open::path(sub.join("web.asdf"))
        .options(OpenOptions::default().references(ReferencePolicy::AnyLocalPath))
        .open()
        .unwrap();
    let e = f.resolve_references().unwrap_err().to_string();
    assert!(e.contains("http(s) references are not fetched"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// History entries as Python asdf writes them: `time` is a YAML timestamp where the schema
/// says `type: string, format: date-time`. Python's validator takes a datetime for a string
/// there, and so does this one: the file opens with validation on. A date alone is no
/// datetime (in Python either) and fails.
#[test]
fn python_history_entries_with_timestamps_validate() {
    let file = |time: &str| {
        format!(
            "#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
             asdf_library: !core/software-1.0.0 {{author: The ASDF Developers, homepage: 'http://github.com/asdf-format/asdf',\n  name: asdf, version: 2.15.0}}\n\
             history:\n  entries:\n  - !core/history_entry-1.0.0\n    description: Made by a pipeline\n    time: {time}\n\
             data: 1\n...\n"
        )
        .into_bytes()
    };
    for ok in [
        "2023-07-28 17:58:39.903239",
        "2001-12-14t21:59:43.10-05:00",
        "2001-12-14 21:59:43.10 -5",
    ] {
        let f = asdf::Open::bytes(file(ok)).options(OpenOptions::default()).open();
        assert!(f.is_ok(), "{ok}: {:?}", f.err());
        assert!(f.unwrap().validate(None, None).unwrap().is_valid());
    }
    // A date without a time is not a date-time: the file still opens (reading never refuses
    // what Python reads), with the violation as a warning naming pointer, line and schema.
    let bad = asdf::Open::bytes(file("2002-12-14"))
        .options(OpenOptions::default())
        .open()
        .unwrap();
    let v: Vec<_> = bad.warnings().iter().filter_map(asdf::Warning::violation).collect();
    let time = v
        .iter()
        .find(|x| x.instance == "/history/entries/0/time")
        .unwrap_or_else(|| panic!("{v:?}"));
    assert_eq!(time.span.line + 1, 12, "{time}");
    assert!(time.schema.contains("history_entry-1.0.0"), "{time}");
    assert!(
        bad.warnings().iter().any(|w| w
            .to_string()
            .starts_with("schema violation: /history/entries/0/time (line 12:")),
        "{:?}",
        bad.warnings()
    );
    assert_eq!(bad.get("/data").unwrap().as_i64(), Some(1));
    // Strictly, it is refused with the same violation.
    let strict = asdf::Open::bytes(file("2002-12-14"))
        .options(OpenOptions::default().strict(true))
        .open();
    match strict {
        Err(asdf::Error::Invalid(e)) => assert_eq!(e, v.into_iter().cloned().collect::<Vec<_>>()),
        other => panic!("{other:?}"),
    }
    // Without validation there is nothing to report.
    let off = asdf::Open::bytes(file("2002-12-14"))
        .options(OpenOptions::default().validate(false))
        .open()
        .unwrap();
    assert_eq!(off.warnings().iter().filter_map(asdf::Warning::violation).count(), 0);
}

/// Files before 1.6.0 get the defaults Python asdf 6.0's default open fills with the field's
/// packages installed: an astropy table (DKIST datasets hold them) gets `meta: {}` and
/// `qtable: false` when it lacks them; a 1.6.0 file gets none.
#[test]
fn astropy_tables_before_1_6_0_get_their_defaults() {
    for (std, filled) in [("1.5.0", true), ("1.6.0", false)] {
        let text = format!(
            "#ASDF 1.0.0\n#ASDF_STANDARD {std}\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
             t: !<tag:astropy.org:astropy/table/table-1.0.0>\n  colnames: [a]\n  columns:\n  - !core/column-1.0.0\n    \
             data: !core/ndarray-1.0.0 {{data: [1, 2], datatype: int64, shape: [2]}}\n    name: a\n...\n"
        );
        let f = asdf::Open::bytes(text.into_bytes())
            .options(asdf::OpenOptions::default().validate(false))
            .open()
            .unwrap();
        let t = f.get("/t").unwrap();
        assert_eq!(
            t.get("meta")
                .is_some_and(|m| m.as_mapping().is_some_and(|m| m.entries.is_empty())),
            filled,
            "{std}"
        );
        assert_eq!(
            t.get("qtable").and_then(asdf::Node::as_bool) == Some(false),
            filled,
            "{std}"
        );
        // The column's own defaults (the standard's schema) too.
        assert_eq!(f.get("/t/columns/0/description").is_ok(), filled, "{std}");
    }
}

#[test]
fn references_that_lead_only_to_one_another_are_an_error_naming_the_cycle() {
    let head = "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n";
    for (body, cycle) in [
        ("a: {$ref: '#/b'}\nb: {$ref: '#/a'}\n", "/a -> /b -> /a"),
        ("a: {$ref: '#/a'}\n", "/a -> /a"),
        (
            "x: 1\na: {$ref: '#/b'}\nb: {$ref: '#/c'}\nc: {$ref: '#/b'}\n",
            "/b -> /c -> /b",
        ),
    ] {
        let bytes = format!("{head}{body}...\n").into_bytes();
        let mut f = asdf::Open::bytes(bytes).options(OpenOptions::default()).open().unwrap();
        let e = f.resolve_references().unwrap_err();
        assert_eq!(e.kind(), asdf::ErrorKind::Reference, "{e}");
        assert!(e.to_string().contains(cycle), "{body}: {e}");
    }
    // A chain that ends at a node, and a container that holds a reference to itself, resolve.
    let body = "a: {$ref: '#/b'}\nb: {$ref: '#/c'}\nc: 7\nd: {inner: {$ref: '#/d'}}\n";
    let mut f = asdf::Open::bytes(format!("{head}{body}...\n").into_bytes())
        .options(OpenOptions::default())
        .open()
        .unwrap();
    assert_eq!(f.resolve_references().unwrap(), 3);
    assert_eq!(f.get("/a").unwrap().as_i64(), Some(7));
    assert_eq!(f.get("/b").unwrap().as_i64(), Some(7));
}

#[test]
fn references_keep_their_aliases_and_read_as_python_asdf_reads_them() {
    let head = "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n";
    // An alias of a reference means its target (it was an alias of a node no longer there);
    // a fragment is percent-decoded; a `$ref` mapping's other members are ignored.
    let body =
        "a: &R {$ref: '#/b'}\nb: 3\nc: *R\nl: [*R, *R]\nd: {$ref: '#/b%20c'}\nb c: 7\ne: {$ref: '#/b', note: x}\n";
    let mut f = asdf::Open::bytes(format!("{head}{body}...\n").into_bytes())
        .options(OpenOptions::default())
        .open()
        .unwrap();
    assert_eq!(f.resolve_references().unwrap(), 3);
    for p in ["/a", "/c", "/l/0", "/l/1", "/e"] {
        assert_eq!(f.get(p).unwrap().as_i64(), Some(3), "{p}");
    }
    assert_eq!(f.get("/d").unwrap().as_i64(), Some(7));
    // And it writes, and reads back the same.
    let bytes = crate::common::bytes(&f, &asdf::WriteOptions::default()).unwrap();
    let g = asdf::Open::bytes(bytes).options(OpenOptions::default()).open().unwrap();
    for p in ["/a", "/c", "/l/1", "/e"] {
        assert_eq!(g.get(p).unwrap().as_i64(), Some(3), "{p}");
    }
}
