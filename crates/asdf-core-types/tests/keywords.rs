//! The datatype and ndim keywords on the standard's schemas and Python asdf's test cases.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use asdf_yaml::{Limits, parse};

fn tree(rel: &str) -> Vec<u8> {
    let p = asdf_testdata::conformance_dir().join(rel);
    let b = std::fs::read(p).unwrap();
    let s = b.windows(5).position(|w| w == b"%YAML").unwrap();
    let e = b.windows(5).position(|w| w == b"\n...\n").map_or(b.len(), |e| e + 5);
    b[s..e].to_vec()
}

fn report(text: &[u8]) -> asdf_schema::Report {
    let doc = parse(text, &Limits::default()).unwrap().document;
    asdf_core_types::schemas().unwrap().validate_document(&doc)
}

#[test]
fn mask_datatypes() {
    asdf_testdata::needs_conformance!();
    let bad = report(&tree("asdf-pytests-data/inline/ndarray_mask_invalid_strings.asdf"));
    assert!(!bad.is_valid());
    let v = &bad.violations[0];
    assert_eq!(v.instance, "/arr");
    assert!(v.message.contains("is not valid under any of the given schemas"), "{v}");
    // The message points at the mask and says why.
    assert!(v.message.contains("(closest: /arr/mask: Can not safely cast"), "{v}");
    assert!(v.message.contains("bool8"), "{v}");
    for ok in [
        "asdf-pytests-data/inline/ndarray_mask_is_ndarray.asdf",
        "asdf-pytests-data/inline/ndarray_mask_scalar.asdf",
        "asdf-pytests-data/inline/ndarray_mask_nan.asdf",
        "asdf-pytests-data/inline/ndarray_inline_structured.asdf",
        "asdf-pytests-data/inline/ndarray_inline_strings.asdf",
        "asdf-pytests-data/inline/ndarray_inline_bare.asdf",
    ] {
        let r = report(&tree(ok));
        assert!(r.is_valid(), "{ok}: {:?}", r.violations);
    }
}

#[test]
fn every_reference_and_sample_tree_still_validates() {
    asdf_testdata::needs_conformance!();
    let c = asdf_testdata::conformance_dir();
    let mut n = 0;
    for dir in ["asdf-standard/reference_files", "python-asdf-samples"] {
        for p in asdf_testdata::files_with_ext(&c.join(dir), "asdf") {
            let rel = p.strip_prefix(&c).unwrap().to_string_lossy().into_owned();
            let r = report(&tree(&rel));
            assert!(r.is_valid(), "{rel}: {:?}", r.violations);
            n += 1;
        }
    }
    assert!(n > 100);
}

#[test]
fn ndim_and_exact_datatype() {
    let s = asdf_core_types::schemas().unwrap();
    let mut own = asdf_schema::AsdfSchemas::with_options(asdf_core_types::compile_options()).unwrap();
    own.add_schema(b"id: http://example.org/img-1.0.0\nallOf:\n- $ref: http://stsci.edu/schemas/asdf/core/ndarray-1.1.0\n- ndim: 2\n  datatype: float32\n- max_ndim: 3\n").unwrap();
    own.add_schema(b"id: http://example.org/exact-1.0.0\ndatatype: float32\nexact_datatype: true\n")
        .unwrap();
    own.add_manifest(b"id: m\nextension_uri: e\ntags:\n- {tag_uri: 'tag:example.org/img-1.0.0', schema_uri: 'http://example.org/img-1.0.0'}\n- {tag_uri: 'tag:example.org/exact-1.0.0', schema_uri: 'http://example.org/exact-1.0.0'}\n").unwrap();
    let check = |t: &str| {
        let doc = parse(t.as_bytes(), &Limits::default()).unwrap().document;
        own.validate_document(&doc)
    };
    assert!(
        check("a: !<tag:example.org/img-1.0.0> {source: 0, datatype: int16, byteorder: big, shape: [2, 2]}").is_valid()
    );
    let r = check("a: !<tag:example.org/img-1.0.0> {source: 0, datatype: int32, byteorder: big, shape: [2, 2, 1]}");
    let msgs: Vec<&str> = r.violations.iter().map(|v| v.message.as_str()).collect();
    assert!(
        msgs.iter()
            .any(|m| m.contains("Wrong number of dimensions: Expected 2, got 3")),
        "{msgs:?}"
    );
    assert!(
        msgs.iter()
            .any(|m| m.contains("Can not safely cast from 'int32' to 'float32'")),
        "{msgs:?}"
    );
    assert!(check("a: !<tag:example.org/exact-1.0.0> {datatype: float32}").is_valid());
    assert!(!check("a: !<tag:example.org/exact-1.0.0> {datatype: float16}").is_valid());
    let _ = s;
}
