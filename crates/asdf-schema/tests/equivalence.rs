//! The embedded schemas (`schemas/`) against the official copies in
//! `../shared/conformance/asdf-standard/resources` (read as test data): same ids, tags and
//! normative content, and the same verdict on every example and every reference file tree.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use asdf_schema::AsdfSchemas;
use asdf_schema::asdf::strip_prose;
use asdf_yaml::{Document, EmitOptions, Limits, Node, parse};

fn canon(node: &Node) -> String {
    let mut n = node.clone();
    strip_prose(&mut n);
    // One layout for both (PyYAML's), whatever style each file was written in.
    let mut opts = EmitOptions::default();
    opts.flow = asdf_yaml::FlowPolicy::Python;
    String::from_utf8(asdf_yaml::emit(&Document::new(n), &opts).unwrap()).unwrap()
}

fn official() -> AsdfSchemas {
    let c = asdf_testdata::conformance_dir();
    let mut s = AsdfSchemas::empty(Default::default()).unwrap();
    s.add_dir(&c.join("asdf-standard/resources")).unwrap();
    s.add_dir(&c.join("json-schema-test-suite/metaschema")).unwrap();
    s
}

fn examples(root: &Node) -> Vec<String> {
    root.get("examples")
        .and_then(Node::as_sequence)
        .map(|s| {
            s.items
                .iter()
                .filter_map(|e| e.as_sequence()?.items.last()?.as_scalar().map(|x| x.text.to_string()))
                .collect()
        })
        .unwrap_or_default()
}

fn verdict(s: &AsdfSchemas, text: &[u8]) -> (bool, usize) {
    let doc = parse(text, &Limits::default()).unwrap().document;
    let r = s.validate_document(&doc);
    (r.is_valid(), r.violations.len())
}

#[test]
fn embedded_schemas_equal_the_official_ones() {
    asdf_testdata::needs_conformance!();
    let off = official();
    let emb = AsdfSchemas::embedded().unwrap();
    let dir = asdf_testdata::conformance_dir().join("asdf-standard/resources");
    let mut compared = 0;
    let mut example_count = 0;
    let embedded_files = asdf_schema::asdf::embedded_files();
    for p in asdf_testdata::files_with_ext(&dir, "yaml") {
        let doc = parse(&std::fs::read(&p).unwrap(), &Limits::default()).unwrap().document;
        let Some(id) = doc.root.get("id").and_then(Node::as_str).map(str::to_owned) else {
            // version_map files: not schemas; compared by path.
            let rel = p.strip_prefix(&dir).unwrap().to_string_lossy().replace('\\', "/");
            let (_, text) = embedded_files
                .iter()
                .find(|(f, _)| *f == rel)
                .unwrap_or_else(|| panic!("{rel} missing"));
            let ours = parse(text, &Limits::default()).unwrap().document.root;
            assert_eq!(canon(&ours), canon(&doc.root), "{rel}");
            compared += 1;
            continue;
        };
        if p.to_string_lossy().contains("manifests") {
            let m = emb
                .manifests()
                .iter()
                .find(|m| m.id == id)
                .unwrap_or_else(|| panic!("manifest {id} missing"));
            let o = off.manifests().iter().find(|m| m.id == id).unwrap();
            assert_eq!(m, o, "{id}");
            compared += 1;
            continue;
        }
        let ours = emb
            .registry()
            .document(&id)
            .unwrap_or_else(|| panic!("schema {id} not embedded"));
        assert_eq!(ours.get("id").and_then(Node::as_str), Some(id.as_str()));
        assert_eq!(
            ours.get("tag").and_then(Node::as_str),
            doc.root.get("tag").and_then(Node::as_str),
            "{id}: tag"
        );
        assert_eq!(canon(ours), canon(&doc.root), "{id}: normative content differs");
        // Our title is short and our own.
        let title = ours.get("title").and_then(Node::as_str).unwrap();
        assert!(
            title.len() < 80 && Some(title) != doc.root.get("title").and_then(Node::as_str),
            "{id}"
        );
        // Same verdict on every example of both.
        let (a, b) = (examples(&doc.root), examples(ours));
        assert_eq!(a, b, "{id}: examples differ");
        for ex in a {
            let text = format!("%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- {ex}\n...\n");
            assert_eq!(
                verdict(&emb, text.as_bytes()),
                verdict(&off, text.as_bytes()),
                "{id}: example {ex}"
            );
            example_count += 1;
        }
        compared += 1;
    }
    println!(
        "{compared} schemas and manifests equal to the official copies; {example_count} examples with equal verdicts"
    );
    assert!(compared >= 74);
    // The draft-04 metaschema too.
    let m =
        std::fs::read(asdf_testdata::conformance_dir().join("json-schema-test-suite/metaschema/draft-04-schema.json"))
            .unwrap();
    let m = parse(&m, &Limits::default()).unwrap().document.root;
    let ours = emb
        .registry()
        .document("http://json-schema.org/draft-04/schema")
        .unwrap();
    assert_eq!(canon(ours), canon(&m));
}

#[test]
fn same_verdict_on_every_reference_tree() {
    asdf_testdata::needs_conformance!();
    let off = official();
    let emb = AsdfSchemas::embedded().unwrap();
    let dir = asdf_testdata::conformance_dir().join("asdf-standard/reference_files");
    let mut n = 0;
    for ext in ["asdf", "yaml"] {
        for p in asdf_testdata::files_with_ext(&dir, ext) {
            let b = std::fs::read(&p).unwrap();
            let s = b.windows(5).position(|w| w == b"%YAML").unwrap();
            let e = b.windows(5).position(|w| w == b"\n...\n").map_or(b.len(), |e| e + 5);
            let (ve, vo) = (verdict(&emb, &b[s..e]), verdict(&off, &b[s..e]));
            assert_eq!(ve, vo, "{}", p.display());
            assert!(ve.0, "{}", p.display());
            n += 1;
        }
    }
    assert!(n >= 200);
}

#[test]
fn metaschema_rejects_broken_schemas() {
    let emb = AsdfSchemas::embedded().unwrap();
    for bad in [
        "type: 5\n",
        "required: yes\n",
        "properties: [1]\n",
        "minItems: -1\n",
        "tag: abc\n",
    ] {
        let doc = parse(bad.as_bytes(), &Limits::default()).unwrap().document;
        let errs = emb
            .validator()
            .validate("http://stsci.edu/schemas/yaml-schema/draft-01", &doc.root, &doc, "")
            .unwrap();
        assert!(!errs.is_empty(), "{bad}");
    }
}

/// FINF 0.1.0's schemas (`schemas/legacy/`) against the originals in
/// `../shared/conformance/legacy/finf-standard`: same ids, tags and normative content, titles
/// our own, and the same verdict on every example.
#[test]
fn finf_schemas_equal_the_originals() {
    asdf_testdata::needs_conformance!();
    let dir = asdf_testdata::conformance_dir().join("legacy/finf-standard/schemas/stsci.edu");
    let ours = AsdfSchemas::finf().unwrap();
    let embedded = asdf_schema::asdf::legacy_files();
    let mut official = AsdfSchemas::empty(Default::default()).unwrap();
    official.add_dir(&dir).unwrap();
    let mut tags = String::new();
    let mut compared = 0;
    let mut example_count = 0;
    for p in asdf_testdata::files_with_ext(&dir, "yaml") {
        let doc = parse(&std::fs::read(&p).unwrap(), &Limits::default()).unwrap().document;
        let id = doc.root.get("id").and_then(Node::as_str).unwrap().to_owned();
        let rel = p.strip_prefix(&dir).unwrap().to_string_lossy().replace('\\', "/");
        let (_, text) = embedded
            .iter()
            .find(|(f, _)| *f == format!("legacy/{rel}"))
            .unwrap_or_else(|| panic!("{rel} missing"));
        let mine = parse(text, &Limits::default()).unwrap().document.root;
        assert_eq!(mine.get("id").and_then(Node::as_str), Some(id.as_str()));
        assert_eq!(
            mine.get("tag").and_then(Node::as_str),
            doc.root.get("tag").and_then(Node::as_str),
            "{id}: tag"
        );
        if let Some(tag) = doc.root.get("tag").and_then(Node::as_str) {
            tags.push_str(&format!("  - {{tag_uri: \"{tag}\", schema_uri: \"{id}\"}}\n"));
        }
        assert_eq!(canon(&mine), canon(&doc.root), "{id}: normative content differs");
        let title = mine.get("title").and_then(Node::as_str).unwrap();
        assert!(
            title.len() < 80 && Some(title) != doc.root.get("title").and_then(Node::as_str),
            "{id}"
        );
        compared += 1;
    }
    official
        .add_manifest(format!("id: x\nextension_uri: x\ntags:\n{tags}").as_bytes())
        .unwrap();
    for p in asdf_testdata::files_with_ext(&dir, "yaml") {
        let doc = parse(&std::fs::read(&p).unwrap(), &Limits::default()).unwrap().document;
        for ex in examples(&doc.root) {
            let text = format!("%YAML 1.1\n%TAG ! tag:stsci.edu:finf/0.1.0/core/\n--- {ex}\n...\n");
            assert_eq!(
                verdict(&ours, text.as_bytes()),
                verdict(&official, text.as_bytes()),
                "example {ex}"
            );
            example_count += 1;
        }
    }
    println!("{compared} FINF schemas equal to the originals; {example_count} examples with equal verdicts");
    assert_eq!(compared, 7);
    assert!(example_count >= 10, "{example_count}");
}
