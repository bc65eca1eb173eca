//! A lazy open (`Open::open_lazy`): its arrays are what an eager open's file gives, and once
//! parsed it is the same file; errors in the rest of the tree come then.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use asdf::{AsdfFile, ByteOrder, Datatype, Node, OpenOptions, ScalarType, Version, WriteOptions};

fn temp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("asdf-rs-lazy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// A file of `/data` (float64, 10 elements) and `/meta`, written by this library.
fn written(path: &std::path::Path) {
    let mut f = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
    let data: Vec<u8> = (0..10).flat_map(|i| (f64::from(i) * 0.5).to_le_bytes()).collect();
    f.put_array(
        "/data",
        asdf::NewArray::from_bytes(Datatype::Scalar(ScalarType::Float64), &[10], ByteOrder::Little, data),
    )
    .unwrap();
    if let Some(m) = f.get_mut("").unwrap().as_mapping_mut() {
        m.insert("meta", Node::map(vec![(Node::str("k"), Node::str("v"))]));
    }
    f.write(path, &WriteOptions::default()).unwrap();
}

#[test]
fn a_lazy_open_reads_an_element_without_the_rest_of_the_tree() {
    let path = temp("plain.asdf");
    written(&path);
    let lazy = asdf::Open::path(&path)
        .options(OpenOptions::default())
        .open_lazy()
        .unwrap();
    let eager = asdf::open(&path).unwrap();
    assert_eq!(
        lazy.array("/data").and_then(|a| a.view().cloned()).unwrap(),
        eager.array("/data").and_then(|a| a.view().cloned()).unwrap()
    );
    assert_eq!(
        lazy.array("/data").and_then(|a| a.element(&[7])).unwrap(),
        asdf::Element::Float(3.5)
    );
    assert_eq!(
        lazy.array("/data").and_then(|a| a.read::<Vec<f64>>()).unwrap(),
        eager.array("/data").and_then(|a| a.read::<Vec<f64>>()).unwrap()
    );
    assert!(matches!(
        lazy.array("/data").and_then(|a| a.element(&[10])),
        Err(asdf::Error::Array { .. })
    ));
    assert!(matches!(
        lazy.array("/nothing").and_then(|a| a.view().cloned()),
        Err(asdf::Error::NotFound(_))
    ));
    let full = lazy.parse().unwrap();
    assert_eq!(
        asdf::emit_yaml(full.document()).unwrap(),
        asdf::emit_yaml(eager.document()).unwrap()
    );
    assert_eq!(format!("{:?}", full.warnings()), format!("{:?}", eager.warnings()));

    // A tree the skim does not read (a block scalar) is parsed whole: same answers.
    let bytes = std::fs::read(&path).unwrap();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let k = text.find("meta: {k: v}").expect("meta written in flow style");
    let mut odd = bytes.clone();
    odd[k..k + 12].copy_from_slice(b"meta: |\n  kv");
    let odd_path = temp("odd.asdf");
    std::fs::write(&odd_path, &odd).unwrap();
    let tree = asdf::open(&odd_path).unwrap();
    assert_eq!(tree.get("/meta").unwrap().as_str(), Some("kv\n"));
    let lazy = asdf::Open::path(&odd_path)
        .options(OpenOptions::default())
        .open_lazy()
        .unwrap();
    assert_eq!(
        lazy.array("/data").and_then(|a| a.element(&[9])).unwrap(),
        asdf::Element::Float(4.5)
    );
}

#[test]
fn errors_in_the_rest_of_the_tree_come_when_the_tree_is_needed() {
    let path = temp("broken.asdf");
    written(&path);
    let mut bytes = std::fs::read(&path).unwrap();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    // `meta: {k: v}` becomes `meta: {k: v]`: not YAML, though brackets still balance for
    // the skim stepping over it.
    let k = text.find("meta: {k: v}").unwrap();
    bytes[k + 11] = b']';
    std::fs::write(&path, &bytes).unwrap();
    let eager = asdf::Open::path(&path)
        .options(OpenOptions::default())
        .open()
        .unwrap_err()
        .to_string();
    let lazy = asdf::Open::path(&path)
        .options(OpenOptions::default())
        .open_lazy()
        .unwrap();
    assert_eq!(
        lazy.array("/data").and_then(|a| a.element(&[1])).unwrap(),
        asdf::Element::Float(0.5)
    );
    // The whole tree is needed for a pointer the skim cannot answer: the parse error then.
    assert!(matches!(
        lazy.array("/meta/k").and_then(|a| a.view().cloned()),
        Err(asdf::Error::Yaml(_))
    ));
    // And again: the tree is not kept half-read.
    assert!(matches!(
        lazy.array("/meta/k").and_then(|a| a.view().cloned()),
        Err(asdf::Error::Yaml(_))
    ));
    assert_eq!(lazy.parse().unwrap_err().to_string(), eager);
}

#[test]
fn validation_happens_when_the_tree_is_needed() {
    let path = temp("invalid.asdf");
    written(&path);
    let bytes = std::fs::read(&path).unwrap();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    // `byteorder: little` -> `byteorder: middle` (same length): invalid against ndarray's schema.
    let k = text.find("byteorder: little").unwrap();
    let mut bad = bytes.clone();
    bad[k + 11..k + 17].copy_from_slice(b"middle");
    std::fs::write(&path, &bad).unwrap();
    let strict = OpenOptions::default().strict(true);
    assert!(matches!(
        asdf::Open::path(&path).options(strict.clone()).open(),
        Err(asdf::Error::Invalid(_))
    ));
    let lazy = asdf::Open::path(&path).options(strict).open_lazy().unwrap();
    // The array itself says what is wrong, as the eager open's file would.
    assert!(matches!(
        lazy.array("/data").and_then(|a| a.view().cloned()),
        Err(asdf::Error::Array { .. })
    ));
    assert!(matches!(lazy.parse(), Err(asdf::Error::Invalid(_))));
}

/// Every file of the conformance corpus: each top-level array read lazily is the array read
/// eagerly, the lazy file once parsed is the eager open's file, and where the skim answers it answers the
/// parser's node.
#[test]
fn lazy_opens_agree_with_open_on_the_corpus() {
    let c = asdf_testdata::conformance!();
    let options = OpenOptions::default().validate(false);
    let (mut files, mut arrays, mut skimmed) = (0, 0, 0);
    for path in asdf_testdata::files_with_ext(&c, "asdf") {
        let eager = asdf::Open::path(&path).options(options.clone()).open();
        let lazy = asdf::Open::path(&path).options(options.clone()).open_lazy();
        let (eager, lazy) = match (eager, lazy) {
            (Ok(e), Ok(l)) => (e, l),
            (Err(e), Ok(l)) => {
                let again = l.parse().expect_err("the eager open refused it");
                assert_eq!(again.to_string(), e.to_string(), "{}", path.display());
                continue;
            }
            (Err(_), Err(_)) => continue,
            (Ok(_), Err(e)) => panic!("{}: lazy open failed: {e}", path.display()),
        };
        files += 1;
        let tree_bytes = eager.source().layout().tree_bytes().map(<[u8]>::to_vec);
        let parsed = tree_bytes
            .as_deref()
            .and_then(|t| asdf_yaml::parse(t, &asdf_yaml::Limits::default()).ok());
        let keys: Vec<String> = eager
            .tree()
            .as_mapping()
            .map(|m| {
                m.entries
                    .iter()
                    .filter_map(|(k, _)| k.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        for key in &keys {
            if let (Some(t), Some(p)) = (&tree_bytes, &parsed)
                && let Some(s) = asdf_yaml::skim::top_level_value(t, key)
            {
                skimmed += 1;
                assert_eq!(Some(&s.root), p.document.root.get(key), "{} /{key}", path.display());
            }
            let pointer = format!("/{}", asdf::escape_pointer_token(key));
            let Ok(view) = eager.array(&pointer).and_then(|a| a.view().cloned()) else {
                continue;
            };
            arrays += 1;
            assert_eq!(
                lazy.array(&pointer).and_then(|a| a.view().cloned()).unwrap(),
                view,
                "{} {pointer}",
                path.display()
            );
            if view.shape.iter().all(|n| *n > 0) {
                let at = vec![0; view.shape.len()];
                let (a, b) = (
                    eager.array(&pointer).and_then(|a| a.element(&at)),
                    lazy.array(&pointer).and_then(|a| a.element(&at)),
                );
                assert_eq!(format!("{a:?}"), format!("{b:?}"), "{} {pointer}", path.display());
            }
        }
        let full = lazy.parse().unwrap();
        assert_eq!(
            format!("{:?}", full.warnings()),
            format!("{:?}", eager.warnings()),
            "{}",
            path.display()
        );
        assert_eq!(
            asdf::emit_yaml(full.document()).ok(),
            asdf::emit_yaml(eager.document()).ok(),
            "{}",
            path.display()
        );
    }
    println!("{files} files, {arrays} top-level arrays, {skimmed} top-level values skimmed");
    assert!(files > 100 && arrays > 50 && skimmed > 50, "{files} {arrays} {skimmed}");
}

/// YAML 1.1 breaks lines at CR, NEL, LS and PS too, in a comment as anywhere: a key behind one
/// (here a second `data`, whose later value wins, or a second `byteorder`) is the parser's to
/// see, so the skim gives up and a lazy read answers what the eager open answers (found by an
/// independent review).
#[test]
fn line_breaks_other_than_lf_never_make_a_lazy_read_differ() {
    let path = temp("breaks.asdf");
    written(&path);
    let bytes = std::fs::read(&path).unwrap();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let end = text.find("\n...\n").expect("the tree's end");
    let little = text.find("byteorder: little").expect("written little-endian");
    let mut cases = Vec::new();
    for br in ["\u{2028}", "\u{2029}", "\u{85}", "\r"] {
        let mut b = bytes[..=end].to_vec();
        b.extend_from_slice(format!("# note{br}data: 5").as_bytes());
        b.extend_from_slice(&bytes[end..]);
        cases.push(b);
        let mut b = bytes[..little + 17].to_vec();
        b.extend_from_slice(format!(" # c{br}  byteorder: big").as_bytes());
        b.extend_from_slice(&bytes[little + 17..]);
        cases.push(b);
    }
    for (i, b) in cases.into_iter().enumerate() {
        let p = temp(&format!("breaks{i}.asdf"));
        std::fs::write(&p, &b).unwrap();
        let options = OpenOptions::default().validate(false);
        let eager = asdf::Open::path(&p).options(options.clone()).open();
        let lazy = asdf::Open::path(&p).options(options).open_lazy().unwrap();
        let lazy_read = lazy.array("/data").and_then(|a| a.read::<Vec<f64>>());
        match eager {
            Ok(e) => assert_eq!(
                format!("{lazy_read:?}"),
                format!("{:?}", e.array("/data").and_then(|a| a.read::<Vec<f64>>())),
                "case {i}"
            ),
            Err(e) => assert_eq!(lazy.parse().unwrap_err().to_string(), e.to_string(), "case {i}"),
        }
    }
}
