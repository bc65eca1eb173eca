//! JSON-Schema-Test-Suite, draft 4, through this crate's validator: every required test and
//! the optional ones, with counts and the failing cases printed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use asdf_schema::{CompileOptions, Registry, Validator};
use asdf_yaml::{Document, Mapping, Node, Sequence};

fn suite() -> PathBuf {
    asdf_testdata::conformance_dir().join("json-schema-test-suite")
}

/// JSON -> node tree (numbers keep integer-ness and big values).
fn node(v: &serde_json::Value) -> Node {
    use serde_json::Value as J;
    match v {
        J::Null => Node::null(),
        J::Bool(b) => Node::bool(*b),
        J::String(s) => Node::str(s.clone()),
        J::Number(n) => {
            let t = n.to_string();
            if let Ok(i) = t.parse::<i64>() {
                Node::int(i)
            } else if t.bytes().all(|c| c.is_ascii_digit() || c == b'-') {
                Node::bigint(t.parse().unwrap())
            } else {
                Node::float(t.parse().unwrap())
            }
        }
        J::Array(a) => {
            let mut n = Node::seq(a.iter().map(node).collect());
            if let Some(Sequence { flow, .. }) = n.as_sequence_mut() {
                *flow = true;
            }
            n
        }
        J::Object(o) => {
            let mut n = Node::map(o.iter().map(|(k, v)| (Node::str(k.clone()), node(v))).collect());
            if let Some(Mapping { flow, .. }) = n.as_mapping_mut() {
                *flow = true;
            }
            n
        }
    }
}

fn read_json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn registry() -> Registry {
    let mut reg = Registry::new();
    let remotes = suite().join("remotes");
    let meta = suite().join("metaschema/draft-04-schema.json");
    reg.set_retriever(Arc::new(move |uri: &str| {
        if let Some(rest) = uri.strip_prefix("http://localhost:1234/") {
            let p = remotes.join(rest);
            return p.is_file().then(|| node(&read_json(&p)));
        }
        if uri.starts_with("http://json-schema.org/draft-04/schema") {
            return Some(node(&read_json(&meta)));
        }
        None
    }));
    reg
}

struct Tally {
    pass: usize,
    fail: Vec<String>,
}

fn run(dir: &Path, check_formats: bool) -> Tally {
    let mut t = Tally {
        pass: 0,
        fail: Vec::new(),
    };
    let mut files = asdf_testdata::files_with_ext(dir, "json");
    files.retain(|f| f.parent() == Some(dir));
    for f in files {
        let fname = f.file_name().unwrap().to_string_lossy().into_owned();
        for group in read_json(&f).as_array().unwrap() {
            let gdesc = group["description"].as_str().unwrap();
            let mut reg = registry();
            let uri = reg.add(None, node(&group["schema"]));
            let opts = CompileOptions::default().check_formats(check_formats);
            let v = Validator::compile(&mut reg, &[&uri], &opts);
            for test in group["tests"].as_array().unwrap() {
                let name = format!("{fname}: {gdesc}: {}", test["description"].as_str().unwrap());
                let want = test["valid"].as_bool().unwrap();
                let data = node(&test["data"]);
                let doc = Document::new(data.clone());
                let got = match &v {
                    Ok(v) => v.is_valid(&uri, &data, &doc).unwrap(),
                    Err(e) => {
                        t.fail.push(format!("{name} (compile: {e})"));
                        continue;
                    }
                };
                // The full report must agree with the quick check.
                let errs = v.as_ref().unwrap().validate(&uri, &data, &doc, "").unwrap();
                assert_eq!(errs.is_empty(), got, "{name}: report and quick check disagree");
                if got == want {
                    t.pass += 1;
                } else {
                    t.fail.push(name);
                }
            }
        }
    }
    t
}

#[test]
fn draft4_required() {
    asdf_testdata::needs_conformance!();
    let t = run(&suite().join("tests/draft4"), false);
    println!("draft4 required: {}/{} pass", t.pass, t.pass + t.fail.len());
    for f in &t.fail {
        println!("  FAIL {f}");
    }
    assert!(t.fail.is_empty(), "{} required tests fail", t.fail.len());
    assert!(t.pass >= 600);
}

#[test]
fn draft4_optional() {
    asdf_testdata::needs_conformance!();
    let mut t = run(&suite().join("tests/draft4/optional"), true);
    let f = run(&suite().join("tests/draft4/optional/format"), true);
    t.pass += f.pass;
    t.fail.extend(f.fail);
    let total = t.pass + t.fail.len();
    println!(
        "draft4 optional: {}/{total} pass ({:.1}%)",
        t.pass,
        100.0 * t.pass as f64 / total as f64
    );
    for f in &t.fail {
        println!("  FAIL {f}");
    }
    assert!(t.pass * 100 >= total * 90, "optional pass rate below 90%");
}
