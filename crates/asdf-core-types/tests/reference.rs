//! Every ndarray in every asdf-standard reference .asdf decodes to the values of its .yaml
//! twin (NaN equal to NaN), every version; and the rest of the trees are equal.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use asdf_core_types::{Decoded, NdArray, Source};
use asdf_layout::Reader;
use asdf_yaml::{Document, Limits, Node, NodeKind, Value, parse};

struct Side {
    doc: Document,
    reader: Option<Reader<Vec<u8>>>,
    dir: std::path::PathBuf,
}

fn load(p: &Path) -> Side {
    let bytes = std::fs::read(p).unwrap();
    if p.extension().and_then(|x| x.to_str()) == Some("asdf") {
        let r = Reader::open(bytes).unwrap();
        let doc = parse(r.tree_bytes().unwrap(), &Limits::default()).unwrap().document;
        Side {
            doc,
            reader: Some(r),
            dir: p.parent().unwrap().to_path_buf(),
        }
    } else {
        let s = bytes.windows(5).position(|w| w == b"%YAML").unwrap();
        let doc = parse(&bytes[s..], &Limits::default()).unwrap().document;
        Side {
            doc,
            reader: None,
            dir: p.parent().unwrap().to_path_buf(),
        }
    }
}

fn block_of(side: &Side, a: &NdArray) -> Option<Vec<u8>> {
    match a.source.as_ref()? {
        Source::Block(i) => {
            let r = side.reader.as_ref()?;
            let n = r.block_count() as i64;
            let idx = if *i < 0 { n + i } else { *i };
            Some(r.read_data(usize::try_from(idx).ok()?).ok()?.into_owned())
        }
        Source::Uri(u) => {
            let r = Reader::open(std::fs::read(side.dir.join(u)).ok()?).ok()?;
            Some(r.read_data(0).ok()?.into_owned())
        }
    }
}

fn decode(side: &Side, n: &Node) -> Decoded {
    let a = NdArray::from_node(n, &side.doc).unwrap();
    let block = block_of(side, &a);
    a.decode(block.as_deref()).unwrap()
}

fn compare(a: &Side, an: &Node, b: &Side, bn: &Node, at: &str, arrays: &mut usize) {
    let (an, bn) = (a.doc.resolve(an), b.doc.resolve(bn));
    let is_nd = |n: &Node| n.tag.as_deref().is_some_and(|t| t.contains("core/ndarray"));
    if is_nd(an) || is_nd(bn) {
        let (x, y) = (decode(a, an), decode(b, bn));
        assert_eq!(x.shape, y.shape, "{at}: shape");
        assert_eq!(x.elements.len(), y.elements.len(), "{at}");
        for (i, (p, q)) in x.elements.iter().zip(&y.elements).enumerate() {
            assert!(p.same(q), "{at}[{i}]: {p:?} != {q:?}");
        }
        *arrays += 1;
        return;
    }
    assert_eq!(an.tag, bn.tag, "{at}: tag");
    match (&an.kind, &bn.kind) {
        (NodeKind::Mapping(m), NodeKind::Mapping(n)) => {
            for (k, v) in &m.entries {
                let key = k.as_scalar().unwrap().text.to_string();
                if at.is_empty() && (key == "asdf_library" || key == "history") {
                    continue;
                }
                let w = n
                    .entries
                    .iter()
                    .find(|(k2, _)| k2.as_scalar().unwrap().text == key)
                    .map(|(_, w)| w);
                let w = w.unwrap_or_else(|| panic!("{at}/{key} missing in the yaml twin"));
                compare(a, v, b, w, &format!("{at}/{key}"), arrays);
            }
        }
        (NodeKind::Sequence(s), NodeKind::Sequence(t)) => {
            assert_eq!(s.items.len(), t.items.len(), "{at}");
            for (i, (p, q)) in s.items.iter().zip(&t.items).enumerate() {
                compare(a, p, b, q, &format!("{at}/{i}"), arrays);
            }
        }
        (NodeKind::Scalar(x), NodeKind::Scalar(y)) => match (&x.value, &y.value) {
            (Value::Float(f), Value::Float(g)) => assert!(f == g || (f.is_nan() && g.is_nan()), "{at}"),
            (Value::Str, Value::Str) => assert_eq!(x.text, y.text, "{at}"),
            (v, w) => assert_eq!(v, w, "{at}"),
        },
        _ => panic!("{at}: kinds differ"),
    }
}

#[test]
fn reference_arrays_equal_their_yaml_twins() {
    asdf_testdata::needs_conformance!();
    let dir = asdf_testdata::conformance_dir().join("asdf-standard/reference_files");
    let (mut files, mut arrays) = (0, 0);
    for p in asdf_testdata::files_with_ext(&dir, "asdf") {
        let twin = p.with_extension("yaml");
        if !twin.exists() {
            continue;
        }
        let (a, b) = (load(&p), load(&twin));
        compare(&a, &a.doc.root, &b, &b.doc.root, "", &mut arrays);
        files += 1;
    }
    println!("{files} reference files, {arrays} arrays equal to their yaml twins");
    assert!(files >= 100);
    assert!(arrays >= 240);
}

#[test]
fn negative_strides_view() {
    asdf_testdata::needs_conformance!();
    let p = asdf_testdata::conformance_dir().join("asdf-pytests-data/upstream/ndarray_in_list1.asdf");
    let s = load(&p);
    let n = asdf_yaml::pointer::get(&s.doc, "/list/0/a").unwrap();
    let d = decode(&s, n);
    let got: Vec<i64> = d
        .elements
        .iter()
        .map(|e| match e {
            asdf_core_types::Element::Int(i) => *i,
            _ => panic!(),
        })
        .collect();
    assert_eq!(got, vec![2, 1, 0]);
}
