//! Writing: every conformance file read -> written -> read gives the same tree and arrays;
//! new files with arrays; compression choices; atomic replacement.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use asdf::{
    AsdfFile, ByteOrder, Compression, Datatype, Element, Label, Node, NodeKind, OpenOptions, Version, WriteOptions,
};
use asdf_core_types::ScalarType;

fn sorted_arrays(f: &AsdfFile) -> Vec<String> {
    let mut v = common::ndarray_pointers(f, false);
    v.sort();
    v
}

/// Trees equal apart from `source` numbers (blocks are renumbered on write).
fn same_tree(a: &Node, b: &Node, at: &str) {
    assert_eq!(a.tag, b.tag, "{at}: tag");
    match (&a.kind, &b.kind) {
        (NodeKind::Mapping(x), NodeKind::Mapping(y)) => {
            let kx: Vec<_> = x
                .entries
                .iter()
                .map(|(k, _)| k.as_scalar().map(|s| s.text.to_string()))
                .collect();
            let ky: Vec<_> = y
                .entries
                .iter()
                .map(|(k, _)| k.as_scalar().map(|s| s.text.to_string()))
                .collect();
            assert_eq!(kx, ky, "{at}: keys");
            for ((k, v), (_, w)) in x.entries.iter().zip(&y.entries) {
                let key = k.as_scalar().map(|s| s.text.to_string()).unwrap_or_default();
                // Sources are renumbered; a streamed shape ('*') is written as the rows it had.
                let streamed_shape = key == "shape"
                    && v.as_sequence()
                        .is_some_and(|s| s.items.iter().any(|d| d.as_str() == Some("*")));
                if key != "source" && !streamed_shape {
                    same_tree(v, w, &format!("{at}/{key}"));
                }
            }
        }
        (NodeKind::Sequence(x), NodeKind::Sequence(y)) => {
            assert_eq!(x.items.len(), y.items.len(), "{at}");
            for (i, (v, w)) in x.items.iter().zip(&y.items).enumerate() {
                same_tree(v, w, &format!("{at}/{i}"));
            }
        }
        (NodeKind::Scalar(x), NodeKind::Scalar(y)) => match (&x.value, &y.value) {
            (asdf::Value::Float(f), asdf::Value::Float(g)) => assert!(f == g || (f.is_nan() && g.is_nan()), "{at}"),
            (asdf::Value::Str, asdf::Value::Str) => assert_eq!(x.text, y.text, "{at}"),
            (v, w) => assert_eq!(v, w, "{at}"),
        },
        (NodeKind::Alias(x), NodeKind::Alias(y)) => assert_eq!(x.target, y.target, "{at}"),
        _ => panic!("{at}: kinds differ"),
    }
}

fn same_elements(a: &[Element], b: &[Element]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same(y))
}

#[test]
fn read_write_read_keeps_trees_and_arrays() {
    asdf_testdata::needs_conformance!();
    let c = asdf_testdata::conformance_dir();
    let mut files = asdf_testdata::files_with_ext(&c.join("python-asdf-samples"), "asdf");
    files.extend(asdf_testdata::files_with_ext(
        &c.join("asdf-standard/reference_files"),
        "asdf",
    ));
    let (mut n, mut arrays_checked) = (0, 0);
    for p in files {
        let name = p.display().to_string();
        let f = asdf::Open::path(&p)
            .options(OpenOptions::default().validate(false))
            .open()
            .unwrap();
        for opts in [
            WriteOptions::default().validate(false),
            WriteOptions::default()
                .validate(false)
                .compression(Compression::All(Label::ZLIB))
                .index(false),
        ] {
            let bytes = crate::common::bytes(&f, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
            let g = asdf::Open::bytes(bytes)
                .options(OpenOptions::default().validate(false))
                .open()
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            // Same tree apart from asdf_library and the renumbered sources.
            let strip = |f: &AsdfFile| {
                let mut t = f.tree().clone();
                if let Some(m) = t.as_mapping_mut() {
                    m.remove("asdf_library");
                }
                t
            };
            let (t1, t2) = (strip(&f), strip(&g));
            same_tree(&t1, &t2, &name);
            assert_eq!(sorted_arrays(&f), sorted_arrays(&g), "{name}");
            for a in sorted_arrays(&f) {
                let (x, y) = (
                    f.array(&a).and_then(|a| a.values()),
                    g.array(&a).and_then(|a| a.values()),
                );
                match (x, y) {
                    (Ok(x), Ok(y)) => {
                        assert_eq!(x.shape, y.shape, "{name}{a}");
                        assert!(same_elements(&x.elements, &y.elements), "{name}{a}");
                        assert_eq!(x.mask, y.mask, "{name}{a}");
                        arrays_checked += 1;
                    }
                    (Err(_), Err(_)) => {}
                    (x, y) => panic!("{name}{a}: {x:?} vs {y:?}"),
                }
            }
        }
        n += 1;
    }
    println!("{n} files rewritten twice each; {arrays_checked} arrays equal after the round trip");
    assert!(n >= 120);
}

#[test]
fn new_file_with_arrays() {
    let dir = std::env::temp_dir().join(format!("asdf-rs-write-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("new.asdf");
    let mut f = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
    if let Some(m) = f.get_mut("").unwrap().as_mapping_mut() {
        m.insert("name", Node::str("example"));
        m.insert("n", Node::int(3));
        m.insert("sci", Node::map(vec![]));
    }
    let data: Vec<u8> = (0..12).flat_map(|i| (f64::from(i) * 1.5).to_le_bytes()).collect();
    f.put_array(
        "/sci/data",
        asdf::NewArray::from_bytes(Datatype::Scalar(ScalarType::Float64), &[3, 4], ByteOrder::Little, data),
    )
    .unwrap();
    f.put_array(
        "/flags",
        asdf::NewArray::from_bytes(
            Datatype::Scalar(ScalarType::UInt8),
            &[4],
            ByteOrder::Big,
            vec![1, 0, 1, 1],
        ),
    )
    .unwrap();
    // Readable before writing.
    assert_eq!(
        f.array("/flags").and_then(|a| a.values()).unwrap().elements[0],
        Element::UInt(1)
    );
    for compression in [
        Label::NONE,
        Label::ZLIB,
        Label::BZP2,
        Label::LZ4,
        Label::ZSTD,
        Label::LZ4F,
        Label::BLS2,
    ] {
        f.write(
            &path,
            &WriteOptions::default().compression(Compression::All(compression)),
        )
        .unwrap();
        let g = asdf::open(&path).unwrap();
        assert!(g.warnings().is_empty(), "{:?}", g.warnings());
        let a = g.array("/sci/data").and_then(|a| a.values()).unwrap();
        assert_eq!(a.shape, vec![3, 4]);
        assert_eq!(a.elements[11], Element::Float(16.5));
        assert_eq!(
            g.array("/flags").and_then(|a| a.values()).unwrap().elements,
            vec![Element::UInt(1), Element::UInt(0), Element::UInt(1), Element::UInt(1)]
        );
        assert_eq!(g.get("/asdf_library/name").unwrap().as_str(), Some("asdf-rs"));
        assert_eq!(g.standard_version(), Version::new(1, 6, 0));
        for i in 0..g.source().layout().block_count() {
            assert_eq!(g.source().layout().block(i).unwrap().compression(), compression);
            g.source().layout().verify_checksum(i).unwrap();
        }
    }
    // Only the target is left: no temporary files.
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["new.asdf".to_owned()]);
    // An invalid tree is not written, and the old file stays.
    let before = std::fs::read(&path).unwrap();
    let mut bad = asdf::open(&path).unwrap();
    if let Some(m) = bad.get_mut("").unwrap().as_mapping_mut() {
        m.insert(
            "sw",
            Node::map(vec![(Node::str("name"), Node::str("x"))]).with_tag("tag:stsci.edu:asdf/core/software-1.0.0"),
        );
    }
    assert!(matches!(
        bad.write(&path, &WriteOptions::default()),
        Err(asdf::Error::Invalid(_))
    ));
    assert_eq!(std::fs::read(&path).unwrap(), before);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn streamed_and_exploded() {
    let dir = std::env::temp_dir().join(format!("asdf-rs-stream-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut f = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
    f.put_array(
        "/other",
        asdf::NewArray::from_bytes(
            Datatype::Scalar(ScalarType::Int16),
            &[3],
            ByteOrder::Little,
            vec![1, 0, 2, 0, 3, 0],
        ),
    )
    .unwrap();
    let path = dir.join("s.asdf");
    let mut s = f
        .write_streamed(
            &path,
            "/stream",
            Datatype::Scalar(ScalarType::Float64),
            &[4],
            ByteOrder::Little,
            &WriteOptions::default(),
        )
        .unwrap();
    assert!(!path.exists(), "nothing at the target until finish");
    for r in 0..50 {
        let row: Vec<u8> = (0..4).flat_map(|c| f64::from(r * 4 + c).to_le_bytes()).collect();
        s.write_rows(&row).unwrap();
    }
    assert!(s.write_rows(&[0u8; 7]).is_err(), "partial rows are refused");
    assert_eq!(s.rows(), 50);
    s.finish().unwrap();
    let g = asdf::open(&path).unwrap();
    let a = g.array("/stream").and_then(|a| a.values()).unwrap();
    assert_eq!(a.shape, vec![50, 4]);
    assert_eq!(a.elements[199], Element::Float(199.0));
    assert_eq!(
        g.array("/other").and_then(|a| a.values()).unwrap().elements,
        vec![Element::Int(1), Element::Int(2), Element::Int(3)]
    );
    // Exploded: main file plus one file per block; read back, and imploded again.
    let ex = dir.join("ex.asdf");
    let files = g
        .write(&ex, &WriteOptions::default().form(asdf::Form::Exploded))
        .map(|w| w.files().to_vec())
        .unwrap();
    assert_eq!(files.len(), 3, "{files:?}");
    assert!(dir.join("ex0000.asdf").exists() && dir.join("ex0001.asdf").exists());
    let e = asdf::open(&ex).unwrap();
    assert_eq!(e.source().layout().block_count(), 0);
    assert!(e.get("/stream/source").unwrap().as_str().is_some());
    assert_eq!(e.array("/stream").and_then(|a| a.values()).unwrap().elements.len(), 200);
    let back = dir.join("imploded.asdf");
    e.write(&back, &WriteOptions::default()).unwrap();
    let i = asdf::open(&back).unwrap();
    assert_eq!(i.source().layout().block_count(), 2);
    assert_eq!(
        i.array("/stream").and_then(|a| a.values()).unwrap().elements,
        g.array("/stream").and_then(|a| a.values()).unwrap().elements
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn float16_needs_standard_1_6() {
    let mut f = AsdfFile::new(Version::new(1, 5, 0)).unwrap();
    f.put_array(
        "/h",
        asdf::NewArray::from_bytes(
            Datatype::Scalar(ScalarType::Float16),
            &[1],
            ByteOrder::Little,
            vec![0, 0x3c],
        ),
    )
    .unwrap();
    match crate::common::bytes(&f, &WriteOptions::default()) {
        Err(asdf::Error::Invalid(v)) => assert!(v[0].message.contains("float16"), "{}", v[0]),
        other => panic!("{other:?}"),
    }
}

#[test]
fn progress_is_reported_per_block() {
    asdf_testdata::needs_conformance!();
    let f = asdf::open(asdf_testdata::conformance_dir().join("python-asdf-samples/e_three_blocks.asdf")).unwrap();
    let n = f.source().layout().block_count();
    assert_eq!(n, 3);
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let s = seen.clone();
    let opts = WriteOptions::default().progress(move |done, total| s.lock().unwrap().push((done, total)));
    let bytes = crate::common::bytes(&f, &opts).unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![(0, 3), (1, 3), (2, 3), (3, 3)]);
    let g = asdf::Open::bytes(bytes).options(OpenOptions::default()).open().unwrap();
    assert_eq!(g.source().layout().block_count(), 3);
}

/// A 1.5.0 file is read with its schema defaults filled as Python asdf 6.0 fills them (a
/// column's `description: ''` and `meta: {}`, direct properties of its schema; not an
/// ndarray's `offset`, whose default sits behind `anyOf`, which Python's filling does not
/// follow), which validation and typed values see; writing it back leaves them out, unless the
/// user set the value (then it is theirs and is written).
#[test]
fn filled_defaults_are_written_only_when_set() {
    let dir = std::env::temp_dir().join(format!("asdf-rs-defaults-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("old.asdf");
    let mut f = AsdfFile::new(Version::new(1, 5, 0)).unwrap();
    add_three_bytes(&mut f);
    let mut col = asdf_yaml::Mapping::default();
    col.insert("name", Node::str("c"));
    col.insert("data", f.get("/a").unwrap().clone());
    f.get_mut("").unwrap().as_mapping_mut().unwrap().insert(
        "col",
        Node::map(col.entries).with_tag("tag:stsci.edu:asdf/core/column-1.0.0"),
    );
    f.write(&path, &WriteOptions::default()).unwrap();
    let raw = |p: &std::path::Path| {
        let r = asdf_layout::Reader::open(std::fs::read(p).unwrap()).unwrap();
        String::from_utf8(r.tree_bytes().unwrap().to_vec()).unwrap()
    };
    assert!(!raw(&path).contains("description"), "{}", raw(&path));
    let g = asdf::open(&path).unwrap();
    assert_eq!(
        g.get("/col/description").ok().and_then(Node::as_str),
        Some(""),
        "filled in memory"
    );
    assert!(
        g.get("/col/meta")
            .is_ok_and(|m| m.as_mapping().is_some_and(|m| m.entries.is_empty()))
    );
    assert!(
        g.get("/a/offset").is_err(),
        "Python asdf 6.0 does not fill an ndarray's offset"
    );
    let again = dir.join("again.asdf");
    g.write(&again, &WriteOptions::default()).unwrap();
    assert!(!raw(&again).contains("description"), "{}", raw(&again));
    assert!(!raw(&again).contains("meta"), "{}", raw(&again));
    // Set by the user (to the default's value): written.
    let mut h = asdf::open(&again).unwrap();
    if let Some(c) = h.get_mut("").unwrap().get_mut("col").and_then(Node::as_mapping_mut) {
        c.insert("description", Node::str(""));
    }
    h.write(&path, &WriteOptions::default()).unwrap();
    assert!(raw(&path).contains("description: ''"), "{}", raw(&path));
    assert!(!raw(&path).contains("meta"), "{}", raw(&path));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A streamed array stays streamed through a rewrite (as Python asdf's write_to keeps it):
/// shape `['*', ...]`, source -1, its block last and flagged streamed, the same rows.
#[test]
fn streamed_arrays_stay_streamed() {
    asdf_testdata::needs_conformance!();
    let src = asdf_testdata::conformance_dir().join("python-asdf-samples/c_stream.asdf");
    let dir = std::env::temp_dir().join(format!("asdf-rs-stay-streamed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = asdf::open(&src).unwrap();
    let before = f.array("/stream").and_then(|a| a.values()).unwrap();
    for (name, options) in [
        ("kept.asdf", WriteOptions::default()),
        (
            "zlib.asdf",
            WriteOptions::default().compression(Compression::All(Label::ZLIB)),
        ),
    ] {
        let out = dir.join(name);
        f.write(&out, &options).unwrap();
        let g = asdf::open(&out).unwrap();
        let shape = g.get("/stream/shape").unwrap().as_sequence().unwrap();
        assert_eq!(shape.items[0].as_str(), Some("*"), "{name}");
        assert_eq!(g.get("/stream/source").unwrap().as_i64(), Some(-1), "{name}");
        let blocks = g.source().layout();
        let last = blocks.block(blocks.block_count() - 1).unwrap();
        assert!(last.header.is_streamed(), "{name}");
        let after = g.array("/stream").and_then(|a| a.values()).unwrap();
        assert_eq!(after.shape, before.shape, "{name}");
        assert!(same_elements(&after.elements, &before.elements), "{name}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// ASDF Standard 1.7.0 as asdf-standard has it today (not final: `ndarray-1.2.0`,
/// `integer-1.2.0`): read and validated, with a warning; written only on opt-in.
#[test]
fn standard_1_7_0_is_read_and_written_only_on_opt_in() {
    let v = Version::new(1, 7, 0);
    let mut f = AsdfFile::new(v).unwrap();
    add_three_bytes(&mut f);
    if std::env::var_os("ASDF_UNSTABLE_CORE_SCHEMAS").is_none() {
        assert!(matches!(
            crate::common::bytes(&f, &WriteOptions::default()),
            Err(asdf::Error::UnstableStandard(x)) if x == v
        ));
    }
    let bytes = crate::common::bytes(&f, &WriteOptions::default().unstable_standard(true)).unwrap();
    let text = String::from_utf8_lossy(&bytes[..300]).into_owned();
    assert!(text.contains("#ASDF_STANDARD 1.7.0"), "{text}");
    assert!(text.contains("!core/ndarray-1.2.0"), "{text}");
    let g = asdf::Open::bytes(bytes).options(OpenOptions::default()).open().unwrap();
    assert!(
        g.warnings()
            .iter()
            .any(|w| matches!(w, asdf::Warning::UnstableStandard(x) if *x == v)),
        "{:?}",
        g.warnings()
    );
    assert_eq!(
        g.warnings().iter().filter_map(asdf::Warning::violation).count(),
        0,
        "{:?}",
        g.warnings()
    );
    assert_eq!(
        g.array("/a").and_then(|a| a.values()).unwrap().elements,
        vec![Element::UInt(1), Element::UInt(2), Element::UInt(3)]
    );
    // A schema violation under ndarray-1.2.0 is found.
    let bad =
        String::from_utf8_lossy(&crate::common::bytes(&f, &WriteOptions::default().unstable_standard(true)).unwrap())
            .replace("datatype: uint8", "datatype: uint99");
    let h = asdf::Open::bytes(bad.into_bytes())
        .options(OpenOptions::default())
        .open()
        .unwrap();
    assert!(
        h.warnings()
            .iter()
            .filter_map(asdf::Warning::violation)
            .any(|x| x.schema.contains("ndarray-1.2.0")),
        "{:?}",
        h.warnings()
    );
}

/// `/a`: three uint8 elements, 1 2 3.
fn add_three_bytes(f: &mut AsdfFile) {
    f.put_array(
        "/a",
        asdf::NewArray::from_bytes(
            Datatype::Scalar(ScalarType::UInt8),
            &[3],
            ByteOrder::Little,
            vec![1, 2, 3],
        ),
    )
    .unwrap();
}

/// Pages of `file` in the page cache (mincore over a mapping that touches none of them).
#[cfg(target_os = "linux")]
fn cached_pages(file: &std::fs::File) -> usize {
    use std::os::fd::AsRawFd as _;
    let len = usize::try_from(file.metadata().unwrap().len()).unwrap();
    let page = 4096;
    // SAFETY: a fresh read-only shared mapping of an open file, unmapped below; mincore
    // writes one byte per page into `vec`, which has that many.
    unsafe {
        let at = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        );
        assert_ne!(at, libc::MAP_FAILED);
        let mut vec = vec![0u8; len.div_ceil(page)];
        assert_eq!(libc::mincore(at, len, vec.as_mut_ptr()), 0);
        libc::munmap(at, len);
        vec.iter().filter(|b| **b & 1 == 1).count()
    }
}

/// Replacing a file releases the old file's cached pages before the new one is written
/// (its bytes stay intact until the rename).
#[cfg(target_os = "linux")]
#[test]
fn replacing_a_file_releases_its_cached_pages() {
    let dir = std::env::temp_dir().join(format!("asdf-rs-release-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("replaced.asdf");
    let array = |fill: u8| {
        let mut f = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
        let data = vec![fill; 8 << 20];
        f.put_array(
            "/data",
            asdf::NewArray::from_bytes(Datatype::Scalar(ScalarType::UInt8), &[8 << 20], ByteOrder::Little, data),
        )
        .unwrap();
        f
    };
    // Written durably (its pages clean), then read: all of it cached.
    array(1).write(&path, &WriteOptions::default()).unwrap();
    let old = std::fs::File::open(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let before = cached_pages(&old);
    assert!(before >= bytes.len() / 4096, "{before} pages cached");
    array(2).write(&path, &WriteOptions::default().durable(false)).unwrap();
    assert_eq!(cached_pages(&old), 0, "the replaced file's pages are released");
    // The old file's bytes were untouched (still readable through the old handle).
    let mut again = Vec::new();
    std::io::Read::read_to_end(&mut &old, &mut again).unwrap();
    assert_eq!(again, bytes);
    let f = asdf::open(&path).unwrap();
    assert_eq!(
        f.array("/data").and_then(|a| a.element(&[5])).unwrap(),
        Element::UInt(2)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
