//! Python interop, both ways, against Python asdf 6.0.0 in a virtual environment (made on first
//! use from `tests/interop/requirements.txt`, or `$ASDF_PYTHON`). Never skipped: without Python
//! the suite fails with the reason.
//!
//! (a) Python writes a matrix of files (every dtype and byte order, every compression, every
//!     standard version, strings, inline, scalars, views, no checksums, padding); we read each
//!     and check the values Python recorded.
//! (b) We write the same kinds of files (every dtype and byte order, every compression label x
//!     every standard version, strings, scalars, streamed, exploded, a view, a masked array, a big
//!     integer, an anchor and its alias); Python opens them with validation on read and checksum
//!     validation, and checks the values.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation
)]

use std::path::{Path, PathBuf};
use std::process::Command;

use asdf::{AsdfFile, ByteOrder, Compression, Datatype, Element, Label, Node, Version, WriteOptions};
use asdf_conformance::python::{big_integer, flatten_json, json_at, json_value_eq, value_eq as py_value_eq};
use serde_json::Value as J;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The Python with asdf 6.0.0 (see [`asdf_testdata::interop_python`]).
fn python() -> PathBuf {
    asdf_testdata::interop_python()
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("asdf-rs-interop-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn numpy_dtype(dt: &Datatype) -> String {
    match dt {
        Datatype::Scalar(s) => match s.name() {
            "bool8" => "bool".to_owned(),
            n => n.to_owned(),
        },
        Datatype::Ascii(n) => format!("S{n}"),
        Datatype::Ucs4(n) => format!("U{n}"),
        other => other.to_string(),
    }
}

fn element_eq(e: &Element, j: &J) -> bool {
    match (e, j) {
        (Element::Float(f), J::Null) => f.is_nan(),
        (Element::Float(f), J::Number(n)) => n.as_f64() == Some(*f),
        (Element::Int(i), J::Number(n)) => n.as_i64() == Some(*i),
        (Element::UInt(u), J::Number(n)) => n.as_u64() == Some(*u),
        (Element::Bool(b), J::Bool(c)) => b == c,
        (Element::Str(s), J::String(t)) => s == t,
        (Element::Complex(c), J::Array(p)) if p.len() == 2 => {
            let g = |x: &J| x.as_f64().unwrap_or(f64::NAN);
            c.same(&asdf::Complex::new(g(&p[0]), g(&p[1])))
        }
        _ => false,
    }
}

#[test]
fn python_writes_we_read() {
    let py = python();
    let dir = tmpdir("pywrite");
    let out = Command::new(&py)
        .arg(workspace().join("tests/interop/write_python_files.py"))
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "Python writer failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected: J = serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let mut n = 0;
    for (name, want) in expected.as_object().unwrap() {
        let f = asdf::open(dir.join(format!("{name}.asdf"))).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(f.warnings().is_empty(), "{name}: {:?}", f.warnings());
        for (k, a) in want["arrays"].as_object().unwrap() {
            let got = f
                .array(&format!("/{k}"))
                .and_then(|a| a.values())
                .unwrap_or_else(|e| panic!("{name}/{k}: {e}"));
            let shape = asdf_conformance::python::shape(&a["shape"]);
            assert_eq!(got.shape, shape, "{name}/{k}");
            let dt = a["dtype"].as_str().unwrap().trim_start_matches(['<', '>', '=', '|']);
            let ours = numpy_dtype(&got.datatype);
            assert_eq!(ours.trim_start_matches(['<', '>', '=', '|']), dt, "{name}/{k}: dtype");
            let vals = a["values"].as_array().unwrap();
            assert_eq!(got.elements.len(), vals.len(), "{name}/{k}");
            for (i, (e, j)) in got.elements.iter().zip(vals).enumerate() {
                assert!(element_eq(e, j), "{name}/{k}[{i}]: {e:?} vs {j}");
            }
        }
        for (k, v) in want["scalars"].as_object().unwrap() {
            let node = f.get(&format!("/{}", k.replace('~', "~0").replace('/', "~1"))).unwrap();
            let ok = match v {
                J::String(s) => node.as_str() == Some(s.as_str()),
                J::Bool(b) => node.as_bool() == Some(*b),
                J::Null => node.is_null(),
                J::Number(x) if x.is_f64() => node.as_f64() == x.as_f64(),
                J::Number(x) => node.as_i64() == x.as_i64(),
                _ => false,
            };
            assert!(ok, "{name}/{k}: {node:?} vs {v}");
        }
        if let Some(masks) = want.get("masks").and_then(J::as_object) {
            for (k, m) in masks {
                let got = f.array(&format!("/{k}")).and_then(|a| a.values()).unwrap();
                let want: Vec<bool> = m.as_array().unwrap().iter().map(|b| b.as_bool().unwrap()).collect();
                assert_eq!(got.mask.as_deref(), Some(&want[..]), "{name}/{k}: mask");
            }
        }
        if let Some(big) = want.get("bigints").and_then(J::as_object) {
            for (k, v) in big {
                let node = f.get(&format!("/{k}")).unwrap();
                assert!(
                    node.tag.as_deref().is_some_and(|t| t.contains("core/integer-")),
                    "{name}/{k}"
                );
                assert_eq!(big_integer(&f, &format!("/{k}")), v.as_str().unwrap(), "{name}/{k}");
            }
        }
        if let Some(same) = want.get("same").and_then(J::as_array) {
            // The same object twice is one anchored node and an alias to it.
            let a = f.get(&format!("/{}", same[0].as_str().unwrap())).unwrap();
            let b = f.get(&format!("/{}", same[1].as_str().unwrap())).unwrap();
            assert!(std::ptr::eq(a, b), "{name}: aliases resolve to the anchored node");
            let c = asdf::complex::parse(&f.get("/c").unwrap().as_scalar().unwrap().text).unwrap();
            assert!(c.same(&asdf::Complex::new(1.0, 2.0)));
        }
        n += 1;
    }
    println!("interop (a): {n} files written by Python asdf 6.0 read with the right values");
    assert!(n >= 52);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn element_json(e: &Element) -> J {
    match e {
        Element::Float(f) if f.is_nan() => J::Null,
        Element::Float(f) if f.is_infinite() => J::String(if *f > 0.0 { "inf" } else { "-inf" }.to_owned()),
        Element::Float(f) => serde_json::json!(f),
        Element::Int(i) => serde_json::json!(i),
        Element::UInt(u) => serde_json::json!(u),
        Element::Bool(b) => J::Bool(*b),
        Element::Str(s) => J::String(s.clone()),
        Element::Complex(c) => {
            let p = |x: f64| match x {
                x if x.is_nan() => J::Null,
                x if x.is_infinite() => J::String(if x > 0.0 { "inf" } else { "-inf" }.to_owned()),
                x => serde_json::json!(x),
            };
            J::Array(vec![p(c.re), p(c.im)])
        }
        Element::Record(fields) => J::Array(fields.iter().map(element_json).collect()),
        other => panic!("{other:?}"),
    }
}

/// Writes the matrix: every scalar dtype in both byte orders, strings, every compression label
/// and every standard version; returns expected.json's content.
fn write_matrix(dir: &Path) -> usize {
    use asdf_core_types::ScalarType as T;
    let mut expected = serde_json::Map::new();
    let mut save = |name: String, f: &AsdfFile, opts: WriteOptions, arrays: &[&str], scalars: J| {
        f.write(dir.join(format!("{name}.asdf")), &opts)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut arr = serde_json::Map::new();
        for a in arrays {
            let got = f.array(&format!("/{a}")).and_then(|a| a.values()).unwrap();
            arr.insert(
                (*a).to_owned(),
                serde_json::json!({
                    "dtype": numpy_dtype(&got.datatype),
                    "shape": got.shape,
                    "values": got.elements.iter().map(element_json).collect::<Vec<_>>(),
                }),
            );
        }
        expected.insert(name, serde_json::json!({"arrays": arr, "scalars": scalars}));
    };
    let types = [
        T::Int8,
        T::UInt8,
        T::Int16,
        T::UInt16,
        T::Int32,
        T::UInt32,
        T::Int64,
        T::UInt64,
        T::Float16,
        T::Float32,
        T::Float64,
        T::Complex64,
        T::Complex128,
        T::Bool8,
    ];
    for t in types {
        for order in [ByteOrder::Little, ByteOrder::Big] {
            let mut f = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
            let size = t.size();
            // Deterministic bytes; floats from small integers so that every value is exact.
            let mut data = Vec::new();
            for i in 0..12u32 {
                let v = f64::from(i) * 1.5 - 4.0;
                let le: Vec<u8> = match t {
                    T::Float16 => {
                        let h: u16 = [
                            0x0000, 0x3c00, 0x4000, 0x4200, 0xbc00, 0x3800, 0x7c00, 0xfc00, 0x7e00, 0x4400, 0x4500,
                            0x4600,
                        ][i as usize];
                        h.to_le_bytes().to_vec()
                    }
                    #[allow(clippy::cast_possible_truncation)]
                    T::Float32 => (v as f32).to_le_bytes().to_vec(),
                    T::Float64 => v.to_le_bytes().to_vec(),
                    #[allow(clippy::cast_possible_truncation)]
                    T::Complex64 => [(v as f32).to_le_bytes(), (-v as f32).to_le_bytes()].concat(),
                    T::Complex128 => [v.to_le_bytes(), (-v).to_le_bytes()].concat(),
                    T::Bool8 => vec![u8::from(i % 3 == 0)],
                    _ => (u64::from(i) * 37 + 5).to_le_bytes()[..size].to_vec(),
                };
                let mut b = le;
                if order == ByteOrder::Big {
                    if matches!(t, T::Complex64 | T::Complex128) {
                        let half = size / 2;
                        b[..half].reverse();
                        b[half..].reverse();
                    } else {
                        b.reverse();
                    }
                }
                data.extend(b);
            }
            f.put_array(
                "/a",
                asdf::NewArray::from_bytes(Datatype::Scalar(t), &[3, 4], order, data),
            )
            .unwrap();
            let tag = if order == ByteOrder::Little { "le" } else { "be" };
            save(
                format!("dtype_{}_{tag}", t.name()),
                &f,
                WriteOptions::default(),
                &["a"],
                serde_json::json!({}),
            );
        }
    }
    // Strings: ASCII and UCS-4, and scalars of every kind with unicode keys.
    let mut f = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
    f.put_array(
        "/ascii",
        asdf::NewArray::from_bytes(Datatype::Ascii(3), &[2], ByteOrder::Big, b"ab\0cde".to_vec()),
    )
    .unwrap();
    let ucs: Vec<u8> = "héllowörld".chars().flat_map(|c| u32::from(c).to_le_bytes()).collect();
    f.put_array(
        "/ucs4",
        asdf::NewArray::from_bytes(Datatype::Ucs4(5), &[2], ByteOrder::Little, ucs),
    )
    .unwrap();
    if let Some(m) = f.get_mut("").unwrap().as_mapping_mut() {
        m.insert("ключ", Node::str("значение"));
        m.insert("none", Node::null());
        m.insert("yes", Node::str("yes"));
        m.insert("octal", Node::str("010"));
        m.insert("pi", Node::float(std::f64::consts::PI));
        m.insert("big", Node::int(1 << 62));
    }
    let scalars = serde_json::json!({"ключ": "значение", "none": null, "yes": "yes", "octal": "010", "pi": std::f64::consts::PI, "big": 1i64 << 62});
    save(
        "strings_and_scalars".to_owned(),
        &f,
        WriteOptions::default(),
        &["ascii", "ucs4"],
        scalars,
    );
    for label in [
        Label::NONE,
        Label::ZLIB,
        Label::BZP2,
        Label::LZ4,
        Label::ZSTD,
        Label::LZ4F,
        Label::BLSC,
    ] {
        for v in asdf::SUPPORTED_STANDARDS {
            let mut f = AsdfFile::new(v).unwrap();
            if let Some(m) = f.get_mut("").unwrap().as_mapping_mut() {
                m.insert("count", Node::int(42));
            }
            let data: Vec<u8> = (0..1000i64)
                .flat_map(|i| ((i % 97) as f64 * 0.25).to_le_bytes())
                .collect();
            f.put_array(
                "/data",
                asdf::NewArray::from_bytes(Datatype::Scalar(T::Float64), &[10, 100], ByteOrder::Little, data),
            )
            .unwrap();
            let ints: Vec<u8> = (0..256i32).flat_map(|i| (i * 3).to_be_bytes()).collect();
            f.put_array(
                "/ints",
                asdf::NewArray::from_bytes(Datatype::Scalar(T::Int32), &[256], ByteOrder::Big, ints),
            )
            .unwrap();
            let opts = WriteOptions::default().compression(Compression::All(label));
            save(
                format!("{}_{v}", label.name()),
                &f,
                opts,
                &["data", "ints"],
                serde_json::json!({"count": 42}),
            );
        }
    }
    // A streamed array (rows appended after the tree) and the exploded form.
    let mut f = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
    f.put_array(
        "/small",
        asdf::NewArray::from_bytes(
            Datatype::Scalar(T::Int16),
            &[3],
            ByteOrder::Little,
            vec![1, 0, 2, 0, 3, 0],
        ),
    )
    .unwrap();
    let mut s = f
        .write_streamed(
            dir.join("streamed.asdf"),
            "/rows",
            Datatype::Scalar(T::Float64),
            &[4],
            ByteOrder::Little,
            &WriteOptions::default(),
        )
        .unwrap();
    for r in 0..25 {
        let row: Vec<u8> = (0..4).flat_map(|c| f64::from(r * 4 + c).to_le_bytes()).collect();
        s.write_rows(&row).unwrap();
    }
    s.finish().unwrap();
    let values: Vec<f64> = (0..100).map(f64::from).collect();
    let both = serde_json::json!({"arrays": {"rows": {"dtype": "float64", "shape": [25, 4], "values": values},
                                             "small": {"dtype": "int16", "shape": [3], "values": [1, 2, 3]}}, "scalars": {}});
    expected.insert("streamed".to_owned(), both.clone());
    let g = asdf::open(dir.join("streamed.asdf")).unwrap();
    g.write(
        dir.join("exploded.asdf"),
        &WriteOptions::default().form(asdf::Form::Exploded),
    )
    .map(|w| w.files().to_vec())
    .unwrap();
    expected.insert("exploded".to_owned(), both);
    // A view (offset and strides into another array's block), a masked array and a big integer.
    let mut f = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
    let ints: Vec<u8> = (0..12i32).flat_map(i32::to_le_bytes).collect();
    f.put_array(
        "/base",
        asdf::NewArray::from_bytes(Datatype::Scalar(T::Int32), &[12], ByteOrder::Little, ints),
    )
    .unwrap();
    let mut view = f.get("/base").unwrap().clone();
    {
        let m = view.as_mapping_mut().unwrap();
        m.insert("shape", Node::seq(vec![Node::int(3)]));
        m.insert("offset", Node::int(8));
        m.insert("strides", Node::seq(vec![Node::int(12)]));
    }
    f.get_mut("").unwrap().as_mapping_mut().unwrap().insert("view", view);
    let vals: Vec<u8> = [10i32, 20, 30, 40].iter().flat_map(|x| x.to_le_bytes()).collect();
    f.put_array(
        "/masked",
        asdf::NewArray::from_bytes(Datatype::Scalar(T::Int32), &[4], ByteOrder::Little, vals),
    )
    .unwrap();
    f.put_array(
        "/masked/mask",
        asdf::NewArray::from_bytes(Datatype::Scalar(T::Bool8), &[4], ByteOrder::Little, vec![0, 1, 0, 1]),
    )
    .unwrap();
    let big = "-1180591620717411303424";
    let int_tag = asdf::tag_for(f.standard_version(), "core/integer").unwrap();
    f.get_mut("").unwrap().as_mapping_mut().unwrap().insert(
        "big",
        Node::map(vec![
            (Node::str("sign"), Node::str("-")),
            (Node::str("string"), Node::str(big)),
        ])
        .with_tag(int_tag),
    );
    let (neg, words) = asdf_core_types::integer::to_words(&big.parse().unwrap());
    assert!(neg);
    let wb: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    f.put_array(
        "/big/words",
        asdf::NewArray::from_bytes(Datatype::Scalar(T::UInt32), &[words.len()], ByteOrder::Little, wb),
    )
    .unwrap();
    // One mapping written once with an anchor and referred to again by an alias.
    let root = f.get_mut("").unwrap().as_mapping_mut().unwrap();
    let mut shared = Node::map(vec![(Node::str("x"), Node::int(1)), (Node::str("y"), Node::str("two"))]);
    shared.anchor = Some("id001".into());
    root.insert("shared", shared);
    let to_shared = asdf::Alias::to(root.get("shared").unwrap()).unwrap();
    root.insert(
        "again",
        Node {
            kind: asdf::NodeKind::Alias(to_shared),
            ..Node::null()
        },
    );
    // Our own reading first: the view and the mask are what they should be.
    let v = f.array("/view").and_then(|a| a.values()).unwrap();
    assert_eq!(v.elements, vec![Element::Int(2), Element::Int(5), Element::Int(8)]);
    assert_eq!(
        f.array("/masked").and_then(|a| a.values()).unwrap().mask,
        Some(vec![false, true, false, true])
    );
    f.write(dir.join("view_masked_bigint.asdf"), &WriteOptions::default())
        .unwrap();
    expected.insert(
        "view_masked_bigint".to_owned(),
        serde_json::json!({
            "arrays": {
                "base": {"dtype": "int32", "shape": [12], "values": (0..12).collect::<Vec<i32>>()},
                "view": {"dtype": "int32", "shape": [3], "values": [2, 5, 8]},
                "masked": {"dtype": "int32", "shape": [4], "values": [10, 20, 30, 40]},
            },
            "masks": {"masked": [false, true, false, true]},
            "bigints": {"big": big},
            "same": ["shared", "again"],
            "scalars": {},
        }),
    );
    let n = expected.len();
    std::fs::write(
        dir.join("expected.json"),
        serde_json::to_vec_pretty(&J::Object(expected)).unwrap(),
    )
    .unwrap();
    n
}

#[test]
fn we_write_python_reads() {
    let py = python();
    let dir = tmpdir("rswrite");
    let n = write_matrix(&dir);
    let (ok, text) = run_script(&py, "read_rust_files.py", &dir);
    println!(
        "interop (b): {n} files written here; Python says: {}",
        text.lines().last().unwrap_or_default()
    );
    assert!(ok, "Python could not read our files:\n{text}");
    assert!(!text.contains("WARN"), "Python warned:\n{text}");
    assert!(text.contains(&format!("{n} passed, 0 failed")), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Our pointer for a Python path: keys matched by text, or by value for integer and boolean
/// keys (Python reads the key `00000000` as the integer 0).
fn our_pointer(f: &AsdfFile, path: &str) -> Option<String> {
    let mut node = f.tree();
    let mut out = String::new();
    for tok in path.split('/').skip(1) {
        let tok = tok.replace("~1", "/").replace("~0", "~");
        let node_r = f.document().resolve(node);
        let (next, text) = match &node_r.kind {
            asdf::NodeKind::Mapping(m) => m.entries.iter().find_map(|(k, v)| {
                let s = k.as_scalar()?;
                let matches = s.text == tok
                    || matches!(s.value, asdf::Value::Int(i) if i.to_string() == tok)
                    || matches!(s.value, asdf::Value::Bool(b) if (if b { "True" } else { "False" }) == tok);
                matches.then(|| (v, s.text.to_string()))
            })?,
            asdf::NodeKind::Sequence(s) => (s.items.get(tok.parse::<usize>().ok()?)?, tok.clone()),
            _ => return None,
        };
        out.push('/');
        out.push_str(&text.replace('~', "~0").replace('/', "~1"));
        node = next;
    }
    Some(out)
}

/// Compares every file of Python's dump (`dump_conformance.py ROOT`: path -> arrays, masks,
/// big integers and scalars as Python asdf 6.0 reads them) with what we read from `root`,
/// opening with or without validation: (files, arrays, scalars, array values) compared.
fn same_as_python(root: &Path, dump: &J, validate: bool) -> (usize, usize, usize, usize) {
    let (mut files, mut arrays, mut scalars, mut values) = (0, 0, 0, 0usize);
    for (rel, items) in dump.as_object().unwrap() {
        if items.get("__open_error__").is_some() {
            continue;
        }
        let path = root.join(rel);
        let f = asdf::Open::path(&path)
            .options(asdf::OpenOptions::default().validate(validate))
            .open()
            .unwrap_or_else(|e| panic!("{rel}: Python reads it, we fail: {e}"));
        // And `to-json` (asdf_tools::json, the CLI's) of the same file: the same values.
        let mut text = Vec::new();
        asdf_tools::json::to_json(&f, &mut text).unwrap();
        let json: J = serde_json::from_slice(&text).unwrap_or_else(|e| panic!("{rel}: to-json is not JSON: {e}"));
        for (p, want) in items.as_object().unwrap() {
            let ptr = our_pointer(&f, p).unwrap_or_else(|| panic!("{rel}: no node at Python's {p}"));
            if want.get("error").is_some() {
                continue; // Python could not read this array either
            }
            let Some(j) = json_at(&json, &ptr) else {
                // Inside a chunked array, which to-json writes decoded (Python reads the
                // chunks' nodes; the decoded values are checked by the ASDF.jl chunked suite
                // below and the real-world suite): the array must be there, decoded.
                let inside_chunked = (1..ptr.len()).filter(|&i| ptr.as_bytes()[i] == b'/').any(|i| {
                    json_at(&json, &ptr[..i]).is_some_and(|a| {
                        a.get("$tag")
                            .and_then(J::as_str)
                            .is_some_and(asdf::is_chunked_array_tag)
                            && a.get("data").is_some()
                    })
                });
                assert!(inside_chunked, "{rel}{ptr}: not in to-json's output");
                continue;
            };
            if let Some(vals) = want.get("values") {
                let ndim = want["shape"].as_array().map_or(0, Vec::len);
                let mut got = Vec::new();
                flatten_json(&j["data"], ndim, &mut got);
                assert!(
                    got.len() == vals.as_array().unwrap().len()
                        && got
                            .iter()
                            .zip(vals.as_array().unwrap())
                            .all(|(a, b)| json_value_eq(a, b)),
                    "{rel}{ptr}: to-json's values differ from Python's: {j}"
                );
            } else if let Some(v) = want.get("scalar") {
                let j = j.get("$value").unwrap_or(j);
                let ok = match (j, v) {
                    (J::Null, J::Null) => true,
                    // A big integer keeps its digits; serde_json reads it as a float.
                    (J::Number(a), J::String(t)) => a.to_string() == *t || a.as_f64() == t.parse().ok(),
                    (J::Number(a), J::Number(b)) if a.is_f64() && b.is_u64() => a.as_f64() == b.as_f64(),
                    _ => json_value_eq(j, v),
                };
                assert!(ok, "{rel}{ptr}: to-json {j}, Python {v}");
            }
            if let Some(vals) = want.get("values") {
                let a = f
                    .array(&ptr)
                    .and_then(|a| a.values())
                    .unwrap_or_else(|e| panic!("{rel}{ptr}: Python reads it, we fail: {e}"));
                let shape = asdf_conformance::python::shape(&want["shape"]);
                assert_eq!(a.shape, shape, "{rel}{ptr}");
                let vals = vals.as_array().unwrap();
                assert_eq!(a.elements.len(), vals.len(), "{rel}{ptr}");
                for (i, (e, v)) in a.elements.iter().zip(vals).enumerate() {
                    assert!(py_value_eq(e, v), "{rel}{ptr}[{i}]: {e:?} vs {v}");
                }
                values += vals.len();
                if let Some(m) = want.get("mask").and_then(J::as_array) {
                    let m: Vec<bool> = m.iter().map(|b| b.as_bool().unwrap()).collect();
                    assert_eq!(a.mask.as_deref(), Some(&m[..]), "{rel}{ptr}: mask");
                }
                arrays += 1;
            } else if let Some(v) = want.get("int") {
                assert_eq!(big_integer(&f, &ptr), v.as_str().unwrap(), "{rel}{ptr}");
                scalars += 1;
            } else if let Some(v) = want.get("scalar") {
                let n = f.document().resolve(f.get(&ptr).unwrap());
                let s = n.as_scalar().unwrap_or_else(|| panic!("{rel}{ptr}: not a scalar here"));
                let ok = match (v, &s.value) {
                    (J::Null, asdf::Value::Null) => true,
                    (J::Bool(b), asdf::Value::Bool(c)) => b == c,
                    (J::Number(x), asdf::Value::Int(i)) => x.as_i64() == Some(*i),
                    (J::String(t), asdf::Value::BigInt(b)) => &b.to_string() == t,
                    (J::Number(x), asdf::Value::BigInt(b)) => x.to_string() == b.to_string(),
                    (J::Number(x), asdf::Value::Float(g)) => x.as_f64() == Some(*g),
                    (J::String(t), asdf::Value::Float(g)) => py_value_eq(&Element::Float(*g), &J::String(t.clone())),
                    (J::Object(_), asdf::Value::Str) => {
                        asdf::complex::parse_lenient(&s.text).is_some_and(|c| py_value_eq(&Element::Complex(c), v))
                    }
                    (J::String(t), asdf::Value::Str | asdf::Value::Timestamp) => s.text == t,
                    _ => false,
                };
                assert!(ok, "{rel}{ptr}: {:?} vs Python {v}", s.value);
                scalars += 1;
            }
        }
        files += 1;
    }
    (files, arrays, scalars, values)
}

/// Every conformance file Python asdf 6.0 opens, we open too, with the same arrays (values,
/// shapes, masks) and the same scalars at the same places.
#[test]
fn same_values_as_python_on_every_conformance_file() {
    asdf_testdata::needs_conformance!();
    let py = python();
    let out = Command::new(&py)
        .arg(workspace().join("tests/interop/dump_conformance.py"))
        .arg(asdf_testdata::conformance_dir())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let dump: J = serde_json::from_slice(&out.stdout).unwrap();
    let (files, arrays, scalars, _) = same_as_python(&asdf_testdata::conformance_dir(), &dump, false);
    println!("same as Python asdf 6.0: {files} files, {arrays} arrays, {scalars} scalars");
    assert!(files >= 240);
}

/// `defragment -c none` (the same write as the CLI's) of every Python-written sample and every
/// reference file: Python asdf 6.0 opens the result with validation and checksums and finds the
/// same tree and arrays.
#[test]
fn defragmented_files_read_by_python() {
    asdf_testdata::needs_conformance!();
    let py = python();
    let c = asdf_testdata::conformance_dir();
    let dir = tmpdir("defrag");
    let mut files = asdf_testdata::files_with_ext(&c.join("python-asdf-samples"), "asdf");
    files.extend(asdf_testdata::files_with_ext(
        &c.join("asdf-standard/reference_files"),
        "asdf",
    ));
    let mut pairs = Vec::new();
    for (i, p) in files.iter().enumerate() {
        // Block files of exploded samples are not files one defragments on their own.
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name.contains("exploded0") {
            continue;
        }
        let f = asdf::Open::path(p)
            .options(asdf::OpenOptions::default().validate(false))
            .open()
            .unwrap();
        let out = dir.join(format!("{i:03}_{name}"));
        f.write(
            &out,
            &WriteOptions::default()
                .validate(false)
                .compression(Compression::All(Label::NONE)),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        pairs.push((p.display().to_string(), out.display().to_string()));
    }
    let list = dir.join("pairs.json");
    std::fs::write(&list, serde_json::to_vec(&pairs).unwrap()).unwrap();
    let (ok, text) = run_script(&py, "compare_pairs.py", &list);
    println!(
        "defragment -c none: {} files; Python says: {}",
        pairs.len(),
        text.lines().last().unwrap_or_default()
    );
    assert!(ok, "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Runs `tests/interop/<script> <arg>` with the venv's Python: whether it succeeded, and its
/// standard output followed by its standard error.
/// Writes `expected` as DIR/expected.json and has Python asdf read every file it lists
/// (`read_rust_files.py`): all must pass. Returns the script's output.
fn python_reads(py: &Path, dir: &Path, expected: serde_json::Map<String, J>, what: &str) -> String {
    let n = expected.len();
    std::fs::write(
        dir.join("expected.json"),
        serde_json::to_vec_pretty(&J::Object(expected)).unwrap(),
    )
    .unwrap();
    let (ok, text) = run_script(py, "read_rust_files.py", dir);
    println!(
        "{what}: {n} files; Python says: {}",
        text.lines().last().unwrap_or_default()
    );
    assert!(ok, "Python could not read the files ({what}):\n{text}");
    assert!(text.contains(&format!("{n} passed, 0 failed")), "{text}");
    text
}

fn run_script(py: &Path, script: &str, arg: &Path) -> (bool, String) {
    let out = Command::new(py)
        .arg(workspace().join("tests/interop").join(script))
        .arg(arg)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// Files updated in place (a shorter tree; a padded file taking a bigger tree and new arrays
/// three times; Python's own padded sample taking an array, where Python asdf 6.0 itself
/// hangs) and one rewritten because its tree outgrew the room: Python asdf 6.0 opens each with
/// validation and checksums and finds the values.
#[test]
fn updated_files_read_by_python() {
    asdf_testdata::needs_conformance!();
    use asdf::{OpenOptions, Update};
    use asdf_core_types::ScalarType as T;
    let py = python();
    let dir = tmpdir("update");
    let f64s = |v: &[f64]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let arr = |dtype: &str, v: &[f64]| serde_json::json!({"dtype": dtype, "shape": [v.len()], "values": v});
    let base = |path: &Path, pad: bool| {
        let mut f = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
        f.put_array(
            "/a",
            asdf::NewArray::from_bytes(
                Datatype::Scalar(T::Float64),
                &[3],
                ByteOrder::Little,
                f64s(&[1.0, 2.0, 3.0]),
            ),
        )
        .unwrap();
        f.get_mut("")
            .unwrap()
            .as_mapping_mut()
            .unwrap()
            .insert("note", Node::str("a note long enough to be shortened"));
        f.write(path, &WriteOptions::default().pad_blocks(pad)).unwrap();
    };
    let mut expected = serde_json::Map::new();

    let p = dir.join("shorter.asdf");
    base(&p, false);
    let mut f = asdf::open(&p).unwrap();
    f.get_mut("")
        .unwrap()
        .as_mapping_mut()
        .unwrap()
        .insert("note", Node::str("short"));
    assert!(matches!(
        f.update(&WriteOptions::default()).unwrap(),
        Update::InPlace { .. }
    ));
    expected.insert(
        "shorter".into(),
        serde_json::json!({"arrays": {"a": arr("float64", &[1.0, 2.0, 3.0])}, "scalars": {"note": "short"}}),
    );

    let p = dir.join("grown.asdf");
    base(&p, false);
    let mut f = asdf::open(&p).unwrap();
    f.get_mut("")
        .unwrap()
        .as_mapping_mut()
        .unwrap()
        .insert("note", Node::str("z".repeat(400)));
    f.put_array(
        "/b",
        asdf::NewArray::from_bytes(Datatype::Scalar(T::Float64), &[2], ByteOrder::Little, f64s(&[4.0, 5.0])),
    )
    .unwrap();
    assert!(matches!(
        f.update(&WriteOptions::default()).unwrap(),
        Update::Rewritten(_)
    ));
    expected.insert(
        "grown".into(),
        serde_json::json!({"arrays": {"a": arr("float64", &[1.0, 2.0, 3.0]), "b": arr("float64", &[4.0, 5.0])},
            "scalars": {"note": "z".repeat(400)}}),
    );

    let p = dir.join("padded.asdf");
    base(&p, true);
    let mut arrays = serde_json::Map::new();
    arrays.insert("a".into(), arr("float64", &[1.0, 2.0, 3.0]));
    let mut scalars = serde_json::Map::new();
    for round in 0..3 {
        let mut f = asdf::open(&p).unwrap();
        let v: Vec<f64> = (0..5).map(|i| f64::from(i * 10 + round)).collect();
        let key = format!("new{round}");
        f.put_array(
            &format!("/{key}"),
            asdf::NewArray::from_bytes(Datatype::Scalar(T::Float64), &[5], ByteOrder::Little, f64s(&v)),
        )
        .unwrap();
        f.get_mut("")
            .unwrap()
            .as_mapping_mut()
            .unwrap()
            .insert(&format!("text{round}"), Node::str("w".repeat(200)));
        let u = f.update(&WriteOptions::default().pad_blocks(true)).unwrap();
        assert!(matches!(u, Update::InPlace { appended: 1, .. }), "{u:?}");
        arrays.insert(key, arr("float64", &v));
        scalars.insert(format!("text{round}"), J::String("w".repeat(200)));
    }
    expected.insert(
        "padded".into(),
        serde_json::json!({"arrays": arrays, "scalars": scalars}),
    );

    let p = dir.join("py_padded.asdf");
    std::fs::copy(
        asdf_testdata::conformance_dir().join("python-asdf-samples/h_padded.asdf"),
        &p,
    )
    .unwrap();
    let mut f = asdf::Open::path(&p).options(OpenOptions::default()).open().unwrap();
    f.put_array(
        "/added",
        asdf::NewArray::from_bytes(
            Datatype::Scalar(T::Int32),
            &[3],
            ByteOrder::Big,
            [7i32, 8, 9].iter().flat_map(|x| x.to_be_bytes()).collect(),
        ),
    )
    .unwrap();
    assert!(matches!(
        f.update(&WriteOptions::default()).unwrap(),
        Update::InPlace { appended: 1, .. }
    ));
    expected.insert(
        "py_padded".into(),
        serde_json::json!({"arrays": {"added": {"dtype": "int32", "shape": [3], "values": [7, 8, 9]}}}),
    );

    python_reads(&py, &dir, expected, "updated in place / rewritten");
    std::fs::remove_dir_all(&dir).unwrap();
}

use asdf_conformance::Rng;

fn random_text(r: &mut Rng) -> String {
    const POOL: &[char] = &[
        'a',
        'Z',
        '0',
        '1',
        '.',
        '-',
        '+',
        '_',
        ' ',
        ' ',
        ' ',
        ':',
        '#',
        ',',
        '[',
        ']',
        '{',
        '}',
        '?',
        '!',
        '&',
        '*',
        '|',
        '>',
        '\'',
        '"',
        '%',
        '@',
        '`',
        '\\',
        '~',
        '\n',
        '\n',
        '\t',
        '\r',
        '\u{85}',
        '\u{a0}',
        '\u{2028}',
        '\u{2029}',
        'é',
        '雪',
        '\u{7}',
        '\u{feff}',
        '\u{0}',
        '\u{1b}',
        '\u{7eff}',
        '\u{1f600}',
        '\u{10000}',
    ];
    const WORDS: &[&str] = &[
        "yes",
        "No",
        "on",
        "~",
        "null",
        "010",
        "0x1F",
        "1_000",
        "1:30",
        "1.5",
        "1e3",
        "-.inf",
        ".NaN",
        "2001-12-14",
        "<<",
        "=",
        "---",
        "...",
        "- a",
        "? b",
        ": c",
        "#",
        "a #b",
        "a: b",
        "longerword12345",
        "word",
    ];
    match r.below(4) {
        0 => WORDS[r.below(WORDS.len() as u64) as usize].to_owned(),
        1 => (0..r.below(40) + 10)
            .map(|_| {
                if r.below(5) == 0 {
                    " "
                } else {
                    WORDS[r.below(WORDS.len() as u64) as usize]
                }
            })
            .collect(),
        _ => (0..r.below(24))
            .map(|_| {
                if r.below(8) == 0 {
                    char::from_u32(r.below(0x11_0000) as u32).unwrap_or('x')
                } else {
                    POOL[r.below(POOL.len() as u64) as usize]
                }
            })
            .collect(),
    }
}

/// A random JSON value and the same value as a node.
fn random_value(r: &mut Rng, depth: u32) -> (J, Node) {
    let pick = if depth >= 4 { r.below(5) } else { r.below(8) };
    match pick {
        0 | 1 => {
            let t = random_text(r);
            (J::String(t.clone()), Node::str(t))
        }
        2 => {
            let i = (r.next_u64() as i64) >> r.below(64);
            (J::from(i), Node::int(i))
        }
        3 => {
            let f = f64::from_bits(r.next_u64());
            if f.is_finite() {
                (J::from(f), Node::float(f))
            } else {
                (J::from(0.5), Node::float(0.5))
            }
        }
        4 => match r.below(3) {
            0 => (J::Null, Node::null()),
            n => (J::Bool(n == 1), Node::bool(n == 1)),
        },
        5 | 6 => {
            let (js, ns): (Vec<J>, Vec<Node>) = (0..r.below(6)).map(|_| random_value(r, depth + 1)).unzip();
            (J::Array(js), Node::seq(ns))
        }
        _ => {
            let mut jm = serde_json::Map::new();
            let mut entries = Vec::new();
            for _ in 0..r.below(6) {
                let k = random_text(r);
                let (jv, nv) = random_value(r, depth + 1);
                if !jm.contains_key(&k) {
                    jm.insert(k.clone(), jv);
                    entries.push((k, nv));
                }
            }
            // The node's entries in the order of the JSON Python reads (serde_json's map
            // sorts its keys unless its `preserve_order` feature is on somewhere in the build).
            let mut by_key: std::collections::HashMap<String, Node> = entries.into_iter().collect();
            let entries = jm
                .keys()
                .filter_map(|k| by_key.remove(k).map(|v| (Node::str(k.clone()), v)))
                .collect();
            (J::Object(jm), Node::map(entries))
        }
    }
}

/// The YAML writer against PyYAML's CSafeDumper itself (the C libyaml emitter Python asdf
/// writes trees with): 3,000 generated trees of tricky strings (indicators, line breaks, tabs,
/// control characters, characters beyond the BMP, long lines to fold), integers, floats, bools
/// and nulls, in flow and block collections: the same bytes.
#[test]
fn yaml_text_as_pyyaml_writes_it() {
    let py = python();
    let dir = tmpdir("yaml");
    // YAML_TREES_SEED / YAML_TREES widen the run.
    let env = |k: &str, d: u64| std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d);
    let mut r = Rng(env("YAML_TREES_SEED", 0x9E37_79B9_7F4A_7C15) | 1);
    let (mut js, mut docs) = (Vec::new(), Vec::new());
    for _ in 0..env("YAML_TREES", 3000) {
        let (j, n) = random_value(&mut r, 0);
        js.push(j);
        let mut d = asdf::Document::new(n);
        d.tag_directives.clear();
        d.version = Some((1, 1));
        docs.push(d);
    }
    let input = dir.join("values.json");
    std::fs::write(&input, serde_json::to_vec(&J::Array(js)).unwrap()).unwrap();
    let out = Command::new(&py)
        .arg(workspace().join("tests/interop/dump_yaml.py"))
        .arg(&input)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let texts: Vec<String> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(texts.len(), docs.len());
    let mut differ = Vec::new();
    for (i, (d, want)) in docs.iter().zip(&texts).enumerate() {
        let ours = String::from_utf8(asdf::emit_yaml(d).unwrap()).unwrap();
        if &ours != want {
            differ.push(i);
            if differ.len() <= 3 {
                eprintln!("tree {i}:\nours:\n{ours}\nPyYAML:\n{want}");
            }
        }
    }
    println!(
        "{} of {} trees as PyYAML writes them",
        texts.len() - differ.len(),
        texts.len()
    );
    assert!(
        differ.is_empty(),
        "{} trees differ: {:?}",
        differ.len(),
        &differ[..differ.len().min(20)]
    );
}

/// The pre-1.0 drafts upgraded (`asdf-cli convert`'s path: open, `set_standard(1.6.0)`,
/// write): every historic reference file of the standard (`#ASDF 0.1.0`, four block header
/// layouts, encoding chains of the ASDF 0.1.0 draft) read by Python asdf 6.0 with validation and checksums
/// on, with the array values this library reads from the original.
#[test]
fn upgraded_legacy_files_python_reads() {
    let c = asdf_testdata::conformance!();
    let py = python();
    let dir = tmpdir("legacy");
    let mut expected = serde_json::Map::new();
    for twin in asdf_testdata::files_with_ext(&c.join("legacy/asdf-standard-history"), "yaml") {
        let src = twin.with_extension("asdf");
        if !src.exists() {
            continue;
        }
        let commit = src.parent().and_then(Path::parent).and_then(Path::file_name).unwrap();
        let name = format!(
            "{}-{}",
            commit.to_string_lossy(),
            src.file_stem().unwrap().to_string_lossy()
        );
        let original = asdf::open(&src).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut f = asdf::open(&src).unwrap();
        f.set_standard(Version::STANDARD_LATEST).unwrap();
        assert!(f.validate(None, None).unwrap().violations.is_empty(), "{name}");
        f.write(dir.join(format!("{name}.asdf")), &WriteOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut arr = serde_json::Map::new();
        for p in original.array_pointers() {
            let key = p.strip_prefix('/').unwrap();
            assert!(!key.contains('/'), "{name}: nested array {p}");
            let got = original.array(&p).and_then(|a| a.values()).unwrap();
            arr.insert(
                key.to_owned(),
                serde_json::json!({
                    "dtype": numpy_dtype(&got.datatype),
                    "shape": got.shape,
                    "values": got.elements.iter().map(element_json).collect::<Vec<_>>(),
                }),
            );
        }
        expected.insert(name, serde_json::json!({"arrays": arr}));
    }
    assert_eq!(expected.len(), 112);
    let text = python_reads(&py, &dir, expected, "pre-1.0 files upgraded to 1.6.0");
    assert!(!text.contains("WARN"), "Python warned:\n{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Scalars of a tree by JSON pointer, outside ndarrays, as JSON values.
fn tree_scalars(doc: &asdf::Document, n: &Node, at: String, out: &mut serde_json::Map<String, J>) {
    let n = doc.resolve(n);
    if n.tag.as_deref().is_some_and(asdf::is_ndarray_tag) {
        return;
    }
    match &n.kind {
        asdf::NodeKind::Mapping(m) => {
            for (k, v) in &m.entries {
                let key = k.as_scalar().map(|s| s.text.to_string()).unwrap_or_default();
                tree_scalars(doc, v, format!("{at}/{key}"), out);
            }
        }
        asdf::NodeKind::Sequence(s) => {
            for (i, v) in s.items.iter().enumerate() {
                tree_scalars(doc, v, format!("{at}/{i}"), out);
            }
        }
        _ => {
            let v = match n.as_scalar().map(|s| &s.value) {
                Some(asdf::Value::Int(i)) => serde_json::json!(i),
                Some(asdf::Value::Float(f)) => serde_json::json!(f),
                Some(asdf::Value::Bool(b)) => J::Bool(*b),
                Some(asdf::Value::Null) => J::Null,
                _ => J::String(n.as_str().unwrap_or_default().to_owned()),
            };
            out.insert(at, v);
        }
    }
}

/// ASDF in FITS as asdf 2.15 (`asdf.fits_embed`, removed in 3.0) wrote it, in its own venv:
/// its BINTABLE and Appendix A's IMAGE form read here with the values it wrote; and our files
/// in both forms read by it.
#[test]
fn asdf_215_fits_files_both_ways() {
    let py = asdf_testdata::asdf215_python();
    let dir = tmpdir("asdf215");
    let script = workspace().join("tests/interop/asdf215_fits.py");
    let out = Command::new(&py).arg(&script).arg("write").arg(&dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let want: J = serde_json::from_slice(&std::fs::read(dir.join("old.json")).unwrap()).unwrap();
    let mut n = 0;
    for form in ["table", "image"] {
        let f = asdf::Open::path(dir.join(format!("old_{form}.fits")))
            .options(asdf::OpenOptions::default().strict(true))
            .open()
            .unwrap_or_else(|e| panic!("{form}: {e}"));
        let kind = &f.source().fits_hdus().unwrap().last().unwrap().kind;
        let expected_kind = if form == "table" {
            asdf::fits::HduKind::BinTable
        } else {
            asdf::fits::HduKind::Image
        };
        assert_eq!(kind, &expected_kind, "{form}");
        assert_eq!(f.get("/meta/form").unwrap().as_str(), Some(form));
        for (p, values) in want.as_object().unwrap() {
            let got: Vec<J> = f
                .array(p)
                .and_then(|a| a.values())
                .unwrap()
                .elements
                .iter()
                .map(element_json)
                .collect();
            assert_eq!(&J::Array(got), values, "{form} {p}");
            n += 1;
        }
        // Ours, in both forms, for asdf 2.15 to read.
        for (ours, hdu) in [("table", asdf::AsdfHdu::Table), ("image", asdf::AsdfHdu::Image)] {
            f.write(
                dir.join(format!("ours_{form}_{ours}.fits")),
                &asdf::WriteOptions::default().fits(asdf::FitsWriteOptions::default().asdf_hdu(hdu)),
            )
            .unwrap();
        }
    }
    std::fs::write(dir.join("ours.json"), want.to_string()).unwrap();
    let out = Command::new(&py).arg(&script).arg("read").arg(&dir).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    println!(
        "asdf 2.15 fits_embed: {n} arrays of its files read here; it reads ours: {}",
        text.trim()
    );
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("8 arrays equal, 0 differ"), "{text}");
    assert_eq!(n, 4);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The FITS differential suite: asdf 2.15's fits_embed writes random ASDF-in-FITS files over
/// HDU lists astropy builds (`fits_random.py`: images of every type astropy writes, unsigned
/// under BZERO, 1 to 4 odd dimensions, repeated names with EXTVER, binary tables, every kind of
/// header card, the ASDF HDU in both forms); every array and scalar of each tree reads here as
/// asdf 2.15 and astropy read it, through the library and `to-json`. `ASDF_FITS_FILES` files
/// (150 by default) from seed `ASDF_FITS_SEED` (3).
#[test]
fn random_fits_files_read_as_astropy_reads_them() {
    let py = asdf_testdata::asdf215_python();
    let n: usize = std::env::var("ASDF_FITS_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(150);
    let seed = std::env::var("ASDF_FITS_SEED").unwrap_or_else(|_| "3".into());
    let dir = tmpdir("fitsrandom");
    generate(&py, "fits_random.py", &dir, n, &seed);
    let expected: J = serde_json::from_slice(&std::fs::read(dir.join("expected.json")).unwrap()).unwrap();
    let (mut files, mut arrays, mut values, mut hdu_arrays) = (0, 0, 0usize, 0);
    for (name, items) in expected.as_object().unwrap() {
        let f = asdf::open(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        no_fits_warnings(&f, name);
        let mut text = Vec::new();
        asdf_tools::json::to_json(&f, &mut text).unwrap();
        let json: J = serde_json::from_slice(&text).unwrap();
        for (p, want) in items.as_object().unwrap() {
            let j = json_at(&json, p).unwrap_or_else(|| panic!("{name}{p}: not in to-json's output"));
            if let Some(v) = want.get("scalar") {
                let got = f
                    .get(p)
                    .ok()
                    .and_then(Node::as_scalar)
                    .unwrap_or_else(|| panic!("{name}{p}"));
                let e = match got.value {
                    asdf::Value::Int(i) => Element::Int(i),
                    asdf::Value::Float(x) => Element::Float(x),
                    asdf::Value::Bool(b) => Element::Bool(b),
                    _ => panic!("{name}{p}: {got:?}"),
                };
                assert!(
                    py_value_eq(&e, v) && json_value_eq(j, v),
                    "{name}{p}: {e:?} / {j}, Python {v}"
                );
                continue;
            }
            let a = f
                .array(p)
                .and_then(|a| a.values())
                .unwrap_or_else(|e| panic!("{name}{p}: {e}"));
            assert_eq!(a.shape, asdf_conformance::python::shape(&want["shape"]), "{name}{p}");
            let vals = want["values"].as_array().unwrap();
            assert_eq!(a.elements.len(), vals.len(), "{name}{p}");
            for (i, (e, v)) in a.elements.iter().zip(vals).enumerate() {
                assert!(py_value_eq(e, v), "{name}{p}[{i}]: {e:?}, astropy {v}");
            }
            let mut got = Vec::new();
            flatten_json(&j["data"], a.shape.len(), &mut got);
            assert!(
                got.len() == vals.len() && got.iter().zip(vals).all(|(x, y)| json_value_eq(x, y)),
                "{name}{p}: to-json's values differ from astropy's"
            );
            if p.starts_with("/hdu") {
                hdu_arrays += 1;
            }
            arrays += 1;
            values += vals.len();
        }
        files += 1;
    }
    println!(
        "FITS differential with asdf 2.15 and astropy: {files} random files, {arrays} arrays ({hdu_arrays} in HDUs, {values} values), 0 differences"
    );
    assert!(files * 10 >= n * 9 && hdu_arrays > files);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 21, must-show 2 and 3: FITS files asdf-rs writes. stdatamodels' four models (see
/// `fits_models.py`) are read and written again as FITS (with CHECKSUM/DATASUM), converted to
/// ASDF (the `_fits` node keeping their headers) and back to FITS (the appendix's IMAGE form),
/// and a tree made here is written as FITS. `fits_written.py` judges them: astropy opens every
/// file with warnings as errors and checksums verified, fitsverify passes them when installed,
/// the HDUs and headers are stdatamodels' card for card, stdatamodels opens them as the same
/// models, and Python asdf 6.0 reads the converted ASDF files' arrays as stdatamodels does.
#[test]
fn fits_files_we_write_are_what_astropy_and_stdatamodels_expect() {
    let py = python();
    let dir = tmpdir("fitswrite");
    let (ok, text) = run_script(&py, "fits_models.py", &dir);
    assert!(ok, "fits_models.py failed:\n{text}");
    let models = ["cube", "image", "multislit", "table"];
    for m in models {
        let mut f = asdf::open(dir.join(format!("{m}.fits"))).unwrap();
        f.write(
            dir.join(format!("out_{m}.fits")),
            &asdf::WriteOptions::default().fits(asdf::FitsWriteOptions::default().checksums(true)),
        )
        .unwrap_or_else(|e| panic!("{m}: {e}"));
        assert!(f.keep_fits_headers().unwrap());
        f.write(dir.join(format!("rt_{m}.asdf")), &asdf::WriteOptions::default())
            .unwrap();
        let g = asdf::open(dir.join(format!("rt_{m}.asdf"))).unwrap();
        assert!(g.source().fits_hdus().is_none());
        g.write(
            dir.join(format!("rt_{m}.fits")),
            &asdf::WriteOptions::default().fits(asdf::FitsWriteOptions::default().asdf_hdu(asdf::AsdfHdu::Image)),
        )
        .unwrap_or_else(|e| panic!("{m}: {e}"));
    }
    // A tree made here: float32, uint16 (BZERO), int8 (BZERO -128), two arrays of one key.
    let mut f = asdf::AsdfFile::new(asdf::Version::new(1, 6, 0)).unwrap();
    let sci: Vec<f32> = (0..12).map(|i| i as f32 * 0.25).collect();
    f.put_array("/sci", asdf::NewArray::from_slice(&sci, &[3, 4]).unwrap())
        .unwrap();
    let dq: Vec<u16> = vec![0, 1, 32768, 65535];
    f.put_array("/dq", asdf::NewArray::from_slice(&dq, &[2, 2]).unwrap())
        .unwrap();
    let small: Vec<i8> = vec![-128, -1, 0, 127];
    f.put_array("/parts/0/flags", asdf::NewArray::from_slice(&small, &[4]).unwrap())
        .unwrap();
    f.put_array("/parts/1/flags", asdf::NewArray::from_slice(&small[..2], &[2]).unwrap())
        .unwrap();
    f.write(
        dir.join("new.fits"),
        &asdf::WriteOptions::default().fits(asdf::FitsWriteOptions::default().checksums(true)),
    )
    .unwrap();
    let want = serde_json::json!({
        "SCI,1": sci, "DQ,1": dq, "FLAGS,1": small, "FLAGS,2": &small[..2],
    });
    std::fs::write(dir.join("new.json"), want.to_string()).unwrap();
    let (ok, text) = run_script(&py, "fits_written.py", &dir);
    println!(
        "FITS files written by asdf-rs: {}",
        text.lines().last().unwrap_or_default()
    );
    assert!(ok, "fits_written.py:\n{text}");
    // 9 files in astropy; 8 HDU comparisons of 4 models x 2; every model the same.
    assert!(text.contains("astropy=9 "), "{text}");
    assert!(text.contains("models=8 "), "{text}");
    assert!(text.contains("new=4"), "{text}");
    if std::env::var_os("ASDF_REQUIRE_FITSVERIFY").is_some() {
        assert!(
            text.contains("fitsverify=9 "),
            "fitsverify is installed, so it must pass: {text}"
        );
    } else if !text.contains("fitsverify=9 ") {
        println!("fitsverify NOT RUN: not installed (`apt-get install fitsverify`)");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// ASDF inside FITS as JWST pipelines write it: stdatamodels 6.0 writes an ImageModel
/// (SCI/ERR/DQ, DQ as uint32 under BZERO), a SpecModel (a BINTABLE with a TZERO column), a
/// MultiSlitModel (SCI,1..3 and DQ,1..3) and a CubeModel; every `fits:`-sourced array reads
/// as astropy.io.fits reads its HDU, and every scalar of the tree as asdf 6.0 reads it
/// (`fits_models.py` also checks stdatamodels reads the same arrays as astropy).
#[test]
fn stdatamodels_fits_files_read_as_astropy_reads_them() {
    let py = python();
    let dir = tmpdir("fits");
    let (ok, text) = run_script(&py, "fits_models.py", &dir);
    assert!(ok, "fits_models.py failed:\n{text}");
    let expected: J = serde_json::from_slice(&std::fs::read(dir.join("expected.json")).unwrap()).unwrap();
    let (mut files, mut arrays, mut scalars) = (0, 0, 0);
    for (name, e) in expected.as_object().unwrap() {
        let f = asdf::open(dir.join(format!("{name}.fits"))).unwrap_or_else(|e| panic!("{name}: {e}"));
        no_fits_warnings(&f, name);
        assert!(f.source().fits_hdus().is_some(), "{name}");
        let want = e["arrays"].as_object().unwrap();
        let mut ours = f.array_pointers();
        ours.sort();
        let mut theirs: Vec<String> = want.keys().cloned().collect();
        theirs.sort();
        assert_eq!(ours, theirs, "{name}: arrays");
        for (p, a) in want {
            let v = f
                .array(p)
                .and_then(|a| a.values())
                .unwrap_or_else(|e| panic!("{name} {p}: {e}"));
            let shape: Vec<usize> = serde_json::from_value(a["shape"].clone()).unwrap();
            assert_eq!(v.shape, shape, "{name} {p}");
            let got: Vec<J> = v.elements.iter().map(element_json).collect();
            assert_eq!(&J::Array(got), &a["values"], "{name} {p}: values differ from astropy's");
            arrays += 1;
        }
        let mut mine = serde_json::Map::new();
        tree_scalars(f.document(), f.tree(), String::new(), &mut mine);
        assert_eq!(&J::Object(mine.clone()), &e["scalars"], "{name}: tree scalars");
        scalars += mine.len();
        files += 1;
    }
    println!(
        "stdatamodels FITS files: {files} files, {arrays} arrays and {scalars} tree scalars equal to astropy's and asdf's"
    );
    assert_eq!((files, arrays), (4, 12));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A file read from FITS and written back over itself (`write_to` its own path, `update`, what
/// `asdf-cli edit` and `defragment x.fits -o x.fits` do) stays FITS: astropy finds every HDU
/// (an unnamed image, a table nobody names) with its header cards and data as they were, and
/// the edit made to the tree.
#[test]
fn fits_files_written_over_themselves_keep_every_hdu() {
    let py = python();
    let dir = tmpdir("fitskept");
    let script = workspace().join("tests/interop/fits_kept.py");
    let original = dir.join("original.fits");
    let run = |args: &[&std::ffi::OsStr]| {
        let out = Command::new(&py).arg(&script).args(args).output().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let (ok, text) = run(&["make".as_ref(), original.as_os_str()]);
    assert!(ok, "{text}");
    for how in ["write_to", "update"] {
        let copy = dir.join(format!("{how}.fits"));
        std::fs::copy(&original, &copy).unwrap();
        let mut f = asdf::open(&copy).unwrap();
        f.set("/note", Node::str(how)).unwrap();
        match how {
            "write_to" => drop(f.write(&copy, &WriteOptions::default()).unwrap()),
            _ => {
                f.update(&WriteOptions::default()).unwrap();
            }
        }
        drop(f);
        let (ok, text) = run(&["compare".as_ref(), original.as_os_str(), copy.as_os_str()]);
        assert!(ok, "{how}: {text}");
        let g = asdf::open(&copy).unwrap();
        assert_eq!(g.get("/note").unwrap().as_str(), Some(how));
        assert!(g.source().fits_hdus().is_some(), "{how}: no longer FITS");
        assert_eq!(g.source().fits_asdf_form(), Some(asdf::AsdfHdu::Image), "{how}");
        assert_eq!(
            g.array("/sci").and_then(|a| a.read::<Vec<f32>>()).unwrap(),
            (0..12).map(|i| i as f32).collect::<Vec<_>>()
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `convert x.fits --to finf|asdf-0.1.0`: the arrays a FITS file keeps in its HDUs are written
/// into the draft's blocks (a `source: fits:SCI,1` means nothing outside FITS).
#[test]
fn fits_files_written_as_drafts_carry_their_arrays() {
    let py = python();
    let dir = tmpdir("fitsdraft");
    let original = dir.join("original.fits");
    let out = Command::new(&py)
        .arg(workspace().join("tests/interop/fits_kept.py"))
        .arg("make")
        .arg(&original)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let f = asdf::open(&original).unwrap();
    for dialect in [asdf::layout::Dialect::Finf, asdf::layout::Dialect::Asdf010] {
        let mut bytes = Vec::new();
        f.write(
            asdf::Target::Writer(&mut bytes),
            &asdf::WriteOptions::default().form(asdf::Form::Draft { dialect, chain: None }),
        )
        .unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains("fits:SCI"), "{dialect:?}: {text}");
        let g = asdf::Open::bytes(bytes)
            .options(asdf::OpenOptions::default())
            .open()
            .unwrap();
        assert_eq!(g.source().layout().file_header().dialect, dialect);
        assert_eq!(
            g.array("/sci").and_then(|a| a.read::<Vec<f32>>()).unwrap(),
            (0..12).map(|i| i as f32).collect::<Vec<_>>(),
            "{dialect:?}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A FITS file read without a mismatch between its HDUs and its tree, and valid.
fn no_fits_warnings(f: &AsdfFile, name: &str) {
    let bad: Vec<String> = f
        .warnings()
        .iter()
        .filter(|w| matches!(w, asdf::Warning::FitsMismatch { .. } | asdf::Warning::Invalid(_)))
        .map(ToString::to_string)
        .collect();
    assert!(bad.is_empty(), "{name}: {bad:?}");
}

/// Runs a generator of random files (`tests/interop/SCRIPT OUT N SEED`, printing how many it
/// wrote) and checks that it wrote at least 90% of them.
fn generate(py: &Path, script: &str, out: &Path, n: usize, seed: &str) {
    let run = Command::new(py)
        .arg(workspace().join("tests/interop").join(script))
        .arg(out)
        .arg(n.to_string())
        .arg(seed)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let written: usize = String::from_utf8_lossy(&run.stdout).trim().parse().unwrap();
    assert!(
        written * 10 >= n * 9,
        "{script} wrote {written} of {n}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
}

/// The differential suite: Python asdf 6.0 writes random valid files (`random_files.py`: every
/// dtype in both byte orders, records, strings, views with strides and offsets, inline arrays,
/// every compression label, streamed, padded and updated files, standards 1.0.0 to 1.6.0); we
/// open each with validation and read every array, mask and scalar Python reads, value by
/// value. `ASDF_DIFF_FILES` files (300 by default) from seed `ASDF_DIFF_SEED` (11).
#[test]
fn random_python_files_read_as_python_reads_them() {
    let py = python();
    let n: usize = std::env::var("ASDF_DIFF_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let seed = std::env::var("ASDF_DIFF_SEED").unwrap_or_else(|_| "11".into());
    let dir = tmpdir("random");
    let mut total = (0, 0, 0, 0);
    // In batches: the long run (100,000 files) never holds more than a batch on disk.
    for (b, start) in (0..n).step_by(2000).enumerate() {
        let batch = dir.join(format!("b{b}"));
        let count = (n - start).min(2000);
        generate(&py, "random_files.py", &batch, count, &format!("{seed}{b:04}"));
        let out = Command::new(&py)
            .arg(workspace().join("tests/interop/dump_conformance.py"))
            .arg(&batch)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let dump: J = serde_json::from_slice(&out.stdout).unwrap();
        let unread: Vec<&String> = dump
            .as_object()
            .unwrap()
            .iter()
            .filter(|(_, v)| v.get("__open_error__").is_some())
            .map(|(k, _)| k)
            .collect();
        assert!(unread.is_empty(), "Python cannot read its own files: {unread:?}");
        let (f, a, s, v) = same_as_python(&batch, &dump, true);
        total = (total.0 + f, total.1 + a, total.2 + s, total.3 + v);
        std::fs::remove_dir_all(&batch).unwrap();
    }
    println!(
        "differential with Python asdf 6.0: {} random files, {} arrays ({} values), {} scalars, 0 differences",
        total.0, total.1, total.3, total.2
    );
    assert!(total.0 * 10 >= n * 9 && total.1 > 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// asdf-zarr's chunked arrays (internal storage) as Python asdf 6.0 + asdf-zarr 0.0.4 write
/// them at random (`zarr_random.py`: every numeric dtype in both byte orders, shapes the
/// chunks do not divide, each compressor zarr-python writes, `order: F`, fill values,
/// unwritten chunks), beside an ndarray in a block compressed at random: each read through
/// the `Array` handle equals what Python reads back, value by value, and so do three random
/// regions of each (`Array::read_region` against numpy's slicing: negative indices and
/// steps, omitted axes, `...`). `ASDF_ZARR_FILES` files (80 by default, three arrays each)
/// from seed `ASDF_ZARR_SEED` (5).
/// What reading the generated files `dir/*.asdf` against their `*.json` found.
#[derive(Default)]
struct ChunkedCheck {
    arrays: usize,
    values: usize,
    regions: usize,
    compressors: std::collections::BTreeMap<String, usize>,
    bad: Vec<String>,
}

/// Reads every array of the generated files in `dir` whole and by region and compares them
/// with what Python read (the JSON files of `zarr_random.py`'s format).
fn check_chunked_files(dir: &std::path::Path) -> ChunkedCheck {
    let (mut arrays, mut values, mut regions) = (0usize, 0usize, 0usize);
    let mut compressors = std::collections::BTreeMap::<String, usize>::new();
    let mut bad = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let expected: J = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        let file = asdf::open(p.with_extension("asdf")).unwrap();
        for (pointer, want) in expected.as_object().unwrap() {
            let name = format!("{}{pointer}", p.display());
            let a = match file.array(pointer) {
                Ok(a) => a,
                Err(e) => {
                    bad.push(format!("{name}: {e}"));
                    continue;
                }
            };
            let shape: Vec<usize> = serde_json::from_value(want["shape"].clone()).unwrap();
            assert_eq!(a.shape(), shape.as_slice(), "{name}");
            if let Some(chunks) = want.get("chunks") {
                let chunks: Vec<usize> = serde_json::from_value(chunks.clone()).unwrap();
                let compressor = want["compressor"].as_str().map(str::to_owned);
                assert_eq!(
                    a.storage(),
                    asdf::Storage::Chunked {
                        chunks,
                        compressor: compressor.clone()
                    },
                    "{name}"
                );
                *compressors
                    .entry(compressor.unwrap_or_else(|| "none".into()))
                    .or_default() += 1;
                if let Some(store) = want.get("store").and_then(J::as_str) {
                    *compressors.entry(format!("store {store}")).or_default() += 1;
                }
            }
            // Regions first (on a fresh handle: nothing decoded yet), then the whole array.
            // Complex elements have no typed read (no `Scalar` for them), so no region read.
            let complex = matches!(
                a.datatype(),
                Datatype::Scalar(asdf::ScalarType::Complex64 | asdf::ScalarType::Complex128)
            );
            for r in want["regions"].as_array().unwrap().iter().filter(|_| !complex) {
                let text = r["region"].as_str().unwrap();
                let region: asdf::Region = text.parse().unwrap();
                let rshape: Vec<usize> = serde_json::from_value(r["shape"].clone()).unwrap();
                assert_eq!(a.region_shape(&region).unwrap(), rshape, "{name}[{text}]");
                let got = match read_region_elements(&a, &region) {
                    Ok(v) => v,
                    Err(e) => {
                        bad.push(format!("{name}[{text}]: {e}"));
                        continue;
                    }
                };
                let rv = r["values"].as_array().unwrap();
                assert_eq!(got.len(), rv.len(), "{name}[{text}]");
                if let Some(i) = (0..rv.len()).find(|&i| !element_eq(&got[i], &rv[i])) {
                    bad.push(format!("{name}[{text}]: element {i}: {:?} != {}", got[i], rv[i]));
                }
                // Decoded straight into a caller's buffer (what Python reads through): the
                // same bytes as the buffer the library makes, on a handle that has decoded
                // nothing yet.
                if let Some(e) = into_differs(&p.with_extension("asdf"), pointer, &region) {
                    bad.push(format!("{name}[{text}]: into a buffer: {e}"));
                }
                regions += 1;
            }
            if !complex && let Some(e) = into_differs(&p.with_extension("asdf"), pointer, &"".parse().unwrap()) {
                bad.push(format!("{name}: whole, into a buffer: {e}"));
            }
            let got = match a.values() {
                Ok(v) => v,
                Err(e) => {
                    bad.push(format!("{name}: {e}"));
                    continue;
                }
            };
            let want = want["values"].as_array().unwrap();
            assert_eq!(got.elements.len(), want.len(), "{name}");
            if let Some(i) = (0..want.len()).find(|&i| !element_eq(&got.elements[i], &want[i])) {
                bad.push(format!("{name}: element {i}: {:?} != {}", got.elements[i], want[i]));
                continue;
            }
            arrays += 1;
            values += want.len();
        }
    }
    ChunkedCheck {
        arrays,
        values,
        regions,
        compressors,
        bad,
    }
}

#[test]
fn zarr_arrays_read_as_python_asdf_zarr_reads_them() {
    let py = python();
    let n: usize = std::env::var("ASDF_ZARR_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(80);
    let seed = std::env::var("ASDF_ZARR_SEED").unwrap_or_else(|_| "5".into());
    let dir = tmpdir("zarr");
    generate(&py, "zarr_random.py", &dir, n, &seed);
    let ChunkedCheck {
        arrays,
        values,
        regions,
        compressors,
        bad,
    } = check_chunked_files(&dir);
    println!(
        "asdf-zarr: {arrays} arrays ({values} values; chunked ones by compressor {compressors:?}) and {regions} regions read as Python and numpy read them"
    );
    assert!(
        bad.is_empty(),
        "{} arrays differ or fail:\n{}",
        bad.len(),
        bad.join("\n")
    );
    assert!(arrays * 10 >= n * 3 * 9, "{arrays} arrays of {}", n * 3);
    assert!(regions * 2 >= arrays * 3, "{regions} regions");
    for store in ["store DirectoryStore", "store NestedDirectoryStore"] {
        assert!(
            n < 40 || compressors.get(store).is_some_and(|&k| k > 0),
            "no {store} read"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Where [`asdf::Array::read_region_into`] differs from
/// [`asdf::Array::read_region`] (as [`asdf::RegionBytes`]) for `region` of the array at `pointer` (each on a handle
/// of its own, fresh from `path`).
fn into_differs(path: &std::path::Path, pointer: &str, region: &asdf::Region) -> Option<String> {
    let (f1, f2) = (asdf::open(path).ok()?, asdf::open(path).ok()?);
    let (a1, a2) = (f1.array(pointer).ok()?, f2.array(pointer).ok()?);
    let (bytes, order) = match a1.read_region::<asdf::RegionBytes>(region) {
        Ok(r) => (r.bytes, r.byte_order),
        Err(e) => return Some(format!("read_region: {e}")),
    };
    let mut into = vec![0xA5u8; bytes.len()];
    match a2.read_region_into(region, &mut into) {
        Ok(o) if o == order && into == bytes => None,
        Ok(o) => Some(format!(
            "{} bytes, byte order {o:?} / {order:?}, first difference at {:?}",
            bytes.len(),
            into.iter().zip(&bytes).position(|(x, y)| x != y)
        )),
        Err(e) => Some(format!("read_region_into: {e}")),
    }
}

/// The elements of a region of `a`, typed by its datatype.
fn read_region_elements(a: &asdf::Array<'_>, region: &asdf::Region) -> Result<Vec<Element>, asdf::Error> {
    use asdf::ScalarType as S;
    let Datatype::Scalar(t) = a.datatype() else {
        panic!("not a scalar datatype: {}", a.datatype());
    };
    fn map<T: asdf::Scalar>(v: Vec<T>, f: impl Fn(T) -> Element) -> Vec<Element> {
        v.into_iter().map(f).collect()
    }
    let r = region;
    Ok(match t {
        S::Bool8 => map(a.read_region::<Vec<bool>>(r)?, Element::Bool),
        S::Int8 => map(a.read_region::<Vec<i8>>(r)?, |x| Element::Int(x.into())),
        S::Int16 => map(a.read_region::<Vec<i16>>(r)?, |x| Element::Int(x.into())),
        S::Int32 => map(a.read_region::<Vec<i32>>(r)?, |x| Element::Int(x.into())),
        S::Int64 => map(a.read_region::<Vec<i64>>(r)?, Element::Int),
        S::UInt8 => map(a.read_region::<Vec<u8>>(r)?, |x| Element::UInt(x.into())),
        S::UInt16 => map(a.read_region::<Vec<u16>>(r)?, |x| Element::UInt(x.into())),
        S::UInt32 => map(a.read_region::<Vec<u32>>(r)?, |x| Element::UInt(x.into())),
        S::UInt64 => map(a.read_region::<Vec<u64>>(r)?, Element::UInt),
        S::Float32 => map(a.read_region::<Vec<f32>>(r)?, |x| Element::Float(x.into())),
        S::Float64 => map(a.read_region::<Vec<f64>>(r)?, Element::Float),
        other => panic!("no typed read for {other:?}"),
    })
}

/// Chunked ndarrays in ASDF.jl's layout (`core/chunked-ndarray-1.0.0` of
/// `core/ndarray-chunk-1.0.0` chunks), made with Python asdf by `asdfjl_chunked.py` (overlapping
/// chunks, gaps, every byte order and block compression), read whole and by region equal to
/// ASDF.jl's assembly done with numpy.
#[test]
fn asdfjl_chunked_ndarrays_read_as_asdfjl_assembles_them() {
    let py = python();
    let n = 60;
    let dir = tmpdir("asdfjl");
    generate(&py, "asdfjl_chunked.py", &dir, n, "11");
    let c = check_chunked_files(&dir);
    println!(
        "ASDF.jl layout: {} chunked ndarrays ({} values) and {} regions read as ASDF.jl assembles them",
        c.arrays, c.values, c.regions
    );
    assert!(
        c.bad.is_empty(),
        "{} differ or fail:\n{}",
        c.bad.len(),
        c.bad.join("\n")
    );
    assert_eq!(c.arrays, n);
    assert!(c.regions * 2 >= c.arrays * 3, "{} regions", c.regions);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The preview's display limits and stretches equal astropy.visualization's over random
/// images Python asdf wrote (zscale, min/max, percentiles; asinh and log levels).
#[test]
fn preview_limits_equal_astropys() {
    let py = python();
    let n: usize = std::env::var("ASDF_PREVIEW_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(150);
    let dir = tmpdir("preview");
    generate(&py, "preview_limits.py", &dir, n, "3");
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0);
    let (mut checked, mut bad, mut degenerate) = (0, Vec::new(), 0);
    for k in 0..n {
        let name = format!("p{k:03}");
        let want: J =
            serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap()).unwrap();
        let f = asdf::open(dir.join(format!("{name}.asdf"))).unwrap();
        let region: asdf::Region = want["region"].as_str().unwrap().parse().unwrap();
        let v = asdf_preview::read_values(&f, "/a", &region).unwrap();
        assert_eq!(v.shape.len(), 2, "{name}");
        let pair = |j: &J| (j[0].as_f64().unwrap(), j[1].as_f64().unwrap());
        let p = want["percentile"].as_f64().unwrap();
        for (what, stretch, expected) in [
            ("zscale", asdf_preview::Stretch::ZScale, pair(&want["zscale"])),
            ("minmax", asdf_preview::Stretch::MinMax, pair(&want["minmax"])),
            (
                "percentile",
                asdf_preview::Stretch::Percentile(p),
                pair(&want["percentile_limits"]),
            ),
        ] {
            let got = stretch.limits(&v.values).unwrap();
            checked += 1;
            let equal = close(got.0, expected.0) && close(got.1, expected.1);
            if !equal && what == "zscale" && expected.0 >= expected.1 && got.0 <= expected.1 && got.1 >= expected.0 {
                // astropy fitted an empty range (samples exactly on a flat line): we keep the
                // samples' range, which holds astropy's (written down in ARCHITECTURE).
                degenerate += 1;
                continue;
            }
            if !equal {
                bad.push(format!("{name} {what}: ours {got:?}, astropy {expected:?}"));
            }
        }
        for (what, stretch) in [
            ("asinh", asdf_preview::Stretch::Asinh),
            ("log", asdf_preview::Stretch::Log),
        ] {
            for (x, y) in want["levels"]
                .as_array()
                .unwrap()
                .iter()
                .zip(want[what].as_array().unwrap())
            {
                let got = stretch.level(x.as_f64().unwrap(), 0.0, 1.0);
                checked += 1;
                if !close(got, y.as_f64().unwrap()) {
                    bad.push(format!("{name} {what}({x}): ours {got}, astropy {y}"));
                }
            }
        }
    }
    println!(
        "preview: {n} images, {} limits and levels equal to astropy.visualization's ({degenerate} zscale ranges astropy fits empty, where we keep the samples' range)",
        checked - degenerate
    );
    assert!(degenerate * 20 <= n, "{degenerate} degenerate zscale ranges of {n}");
    assert!(bad.is_empty(), "{} differ:\n{}", bad.len(), bad.join("\n"));
    std::fs::remove_dir_all(&dir).unwrap();
}
