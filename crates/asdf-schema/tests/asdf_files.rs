//! The embedded schemas on real files: every reference file tree validates; the
//! schema-invalid cases of Python asdf's test data fail, naming the path.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use asdf_schema::{AsdfSchemas, TagWarning};
use asdf_yaml::{Limits, parse};

fn tree_of(p: &std::path::Path) -> Vec<u8> {
    let b = std::fs::read(p).unwrap();
    let start = b.windows(5).position(|w| w == b"%YAML").unwrap();
    let end = b.windows(5).position(|w| w == b"\n...\n").map_or(b.len(), |e| e + 5);
    b[start..end].to_vec()
}

#[test]
fn reference_files_validate() {
    asdf_testdata::needs_conformance!();
    let s = AsdfSchemas::embedded().unwrap();
    let dir = asdf_testdata::conformance_dir().join("asdf-standard/reference_files");
    let mut n = 0;
    for ext in ["asdf", "yaml"] {
        for p in asdf_testdata::files_with_ext(&dir, ext) {
            let t = tree_of(&p);
            let doc = parse(&t, &Limits::default()).unwrap().document;
            let r = s.validate_document(&doc);
            assert!(r.is_valid(), "{}: {:#?}", p.display(), r.violations);
            n += 1;
        }
    }
    println!("{n} reference trees valid");
    assert!(n >= 200);
}

#[test]
fn invalid_cases_fail_naming_the_path() {
    asdf_testdata::needs_conformance!();
    let s = AsdfSchemas::embedded().unwrap();
    let inline = asdf_testdata::conformance_dir().join("asdf-pytests-data/inline");
    for (f, ptr, needle) in [
        ("invalid_ndarray_data_is_mapping.asdf", "", ""),
        ("complex_invalid_foo.asdf", "", "does not match"),
        // ndarray_mask_invalid_strings.asdf needs the `datatype` keyword, which asdf-core-types
        // registers; it is checked there.
    ] {
        let doc = parse(&tree_of(&inline.join(f)), &Limits::default()).unwrap().document;
        let r = s.validate_document(&doc);
        assert!(!r.is_valid(), "{f} should be invalid");
        let v = &r.violations[0];
        assert!(v.instance.starts_with(ptr), "{f}: {v}");
        assert!(v.message.contains(needle), "{f}: {v}");
        println!("{f}: {v}");
    }
    for i in 0..13 {
        let f = format!("complex/invalid_{i:02}.asdf");
        let doc = parse(&tree_of(&inline.join(&f)), &Limits::default()).unwrap().document;
        assert!(!s.validate_document(&doc).is_valid(), "{f}");
    }
    for i in 0..17 {
        let f = format!("complex/valid_{i:02}.asdf");
        let doc = parse(&tree_of(&inline.join(&f)), &Limits::default()).unwrap().document;
        let r = s.validate_document(&doc);
        assert!(r.is_valid(), "{f}: {:?}", r.violations);
    }
}

#[test]
fn unknown_tags_warn_once_each() {
    asdf_testdata::needs_conformance!();
    let s = AsdfSchemas::embedded().unwrap();
    let p = asdf_testdata::conformance_dir().join("asdf-pytests-data/inline/unknown_tags_nested.asdf");
    let doc = parse(&tree_of(&p), &Limits::default()).unwrap().document;
    let r = s.validate_document(&doc);
    assert!(r.is_valid(), "{:?}", r.violations);
    let unknown: Vec<_> = r
        .warnings
        .iter()
        .filter(|w| matches!(w, TagWarning::Unknown { .. }))
        .collect();
    assert_eq!(unknown.len(), 2, "{:?}", r.warnings);
}

#[test]
fn defaults_are_filled_for_older_standards() {
    let s = AsdfSchemas::embedded().unwrap();
    let text = b"%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\narr: !core/ndarray-1.0.0\n  source: 0\n  datatype: float64\n  byteorder: little\n  shape: [3]\ncol: !core/column-1.0.0\n  name: c\n  data: !core/ndarray-1.0.0 [1, 2]\n...\n";
    let mut doc = parse(text, &Limits::default()).unwrap().document;
    let added = s.fill_defaults(&mut doc);
    assert_eq!(added, 2);
    // Python asdf 6.0's rule: an ndarray's `offset` default sits behind `anyOf`, not filled.
    assert!(doc.root.get("arr").unwrap().get("offset").is_none());
    assert_eq!(
        doc.root.get("col").unwrap().get("description").unwrap().as_str(),
        Some("")
    );
    assert!(doc.root.get("col").unwrap().get("meta").unwrap().as_mapping().is_some());
    // Filling twice adds nothing more, and the result still validates.
    assert_eq!(s.fill_defaults(&mut doc), 0);
    let r = s.validate_document(&doc);
    assert!(r.is_valid(), "{:?}", r.violations);
}

#[test]
fn write_hints_and_tag_resolution() {
    use asdf_schema::TagResolution;
    let s = AsdfSchemas::embedded().unwrap();
    let h = s.write_hints("tag:stsci.edu:asdf/core/ndarray-1.1.0");
    assert_eq!(h.property_order[..3], ["source", "data", "mask"]);
    assert_eq!(
        s.write_hints("tag:stsci.edu:asdf/core/asdf-1.1.0").property_order,
        ["asdf_library", "history"]
    );
    assert!(matches!(
        s.resolve_tag("tag:stsci.edu:asdf/core/ndarray-1.1.0"),
        TagResolution::Known(_)
    ));
    assert!(matches!(
        s.resolve_tag("tag:stsci.edu:asdf/core/ndarray-1.1.5"),
        TagResolution::NewerPatch { .. }
    ));
    assert!(matches!(
        s.resolve_tag("tag:stsci.edu:asdf/core/ndarray-1.9.0"),
        TagResolution::NewerMinor { .. }
    ));
    assert!(matches!(
        s.resolve_tag("tag:stsci.edu:asdf/core/ndarray-2.0.0"),
        TagResolution::NewerMajor { .. }
    ));
    assert!(matches!(
        s.resolve_tag("tag:example.org/thing-1.0.0"),
        TagResolution::Unknown
    ));
    let tags = s.tags_for_standard((1, 6, 0));
    assert!(tags.iter().any(|t| t.tag == "tag:stsci.edu:asdf/core/ndarray-1.1.0"));
    assert!(!tags.iter().any(|t| t.tag == "tag:stsci.edu:asdf/core/ndarray-1.0.0"));
    // The astronomy manifests require 1.6.0 or later: a standard before it lists each tag in
    // one version only (its core manifest's), and 1.6.0 lists the astronomy ones.
    for minor in 0..6 {
        let tags = s.tags_for_standard((1, minor, 0));
        let mut names: Vec<&str> = tags.iter().filter_map(|t| Some(t.tag.rsplit_once('-')?.0)).collect();
        let all = names.len();
        names.dedup();
        assert_eq!(names.len(), all, "1.{minor}.0 lists a tag in two versions: {tags:?}");
        assert!(!tags.iter().any(|t| t.tag.ends_with("time/time-1.4.0")), "1.{minor}.0");
    }
    assert!(
        s.tags_for_standard((1, 5, 0))
            .iter()
            .any(|t| t.tag == "tag:stsci.edu:asdf/unit/quantity-1.1.0")
    );
    assert!(tags.iter().any(|t| t.tag == "tag:stsci.edu:asdf/time/time-1.4.0"));
    // A newer major version in a file is a violation; a newer minor a warning.
    let doc = parse(b"%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\na: !core/software-2.0.0 {name: x, version: '1'}\nb: !core/software-1.3.0 {name: x, version: '1'}\n...\n", &Limits::default()).unwrap().document;
    let r = s.validate_document(&doc);
    assert_eq!(r.violations.len(), 1, "{:?}", r.violations);
    assert_eq!(r.violations[0].instance, "/a");
    assert!(matches!(&r.warnings[..], [TagWarning::NewerMinor { .. }]));
}

#[test]
fn user_schemas_and_manifests_can_be_added() {
    let mut s = AsdfSchemas::embedded().unwrap();
    s.add_schema(b"%YAML 1.1\n---\n$schema: http://stsci.edu/schemas/yaml-schema/draft-01\nid: http://example.org/schemas/thing-1.0.0\ntype: object\nproperties:\n  size: {type: integer, minimum: 0}\n  arr: {$ref: http://stsci.edu/schemas/asdf/core/ndarray-1.1.0}\nrequired: [size]\n...\n").unwrap();
    s.add_manifest(b"id: http://example.org/manifests/things-1.0.0\nextension_uri: http://example.org/extensions/things-1.0.0\ntags:\n- tag_uri: tag:example.org:things/thing-1.0.0\n  schema_uri: http://example.org/schemas/thing-1.0.0\n").unwrap();
    let ok = parse(
        b"--- !core/asdf-1.1.0\nt: !<tag:example.org:things/thing-1.0.0> {size: 3}\n",
        &Limits::default(),
    )
    .unwrap()
    .document;
    assert!(s.validate_document(&ok).is_valid());
    let bad = parse(b"--- !<tag:stsci.edu:asdf/core/asdf-1.1.0>\nt: !<tag:example.org:things/thing-1.0.0>\n  size: -1\n  arr: {shape: 3}\n", &Limits::default()).unwrap().document;
    let r = s.validate_document(&bad);
    let ptrs: Vec<&str> = r.violations.iter().map(|v| v.instance.as_str()).collect();
    assert!(ptrs.contains(&"/t/size"), "{:?}", r.violations);
    assert!(r.violations.iter().all(|v| v.span.line >= 1), "{:?}", r.violations);
}

#[test]
fn refs_by_tag() {
    let mut s = AsdfSchemas::embedded().unwrap();
    s.add_schema(b"id: http://example.org/holder-1.0.0\ntype: object\nproperties:\n  sw: {$ref: 'tag:stsci.edu:asdf/core/software-1.0.0'}\n").unwrap();
    s.add_manifest(b"id: m2\nextension_uri: e2\ntags:\n- {tag_uri: 'tag:example.org/holder-1.0.0', schema_uri: 'http://example.org/holder-1.0.0'}\n").unwrap();
    let ok = parse(
        b"h: !<tag:example.org/holder-1.0.0> {sw: {name: a, version: '1'}}\n",
        &Limits::default(),
    )
    .unwrap()
    .document;
    assert!(s.validate_document(&ok).is_valid());
    let bad = parse(
        b"h: !<tag:example.org/holder-1.0.0> {sw: {name: a}}\n",
        &Limits::default(),
    )
    .unwrap()
    .document;
    let r = s.validate_document(&bad);
    assert_eq!(r.violations[0].instance, "/h/sw", "{:?}", r.violations);
    assert!(r.violations[0].message.contains("'version' is a required property"));
}
