//! Updating files where they are: tree edits that fit are written over the old tree, added
//! arrays are appended, existing blocks are left byte for byte; edits that do not fit rewrite
//! the file safely. Python asdf 6.0 reading the results is in the interop suite.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::path::{Path, PathBuf};

use asdf::{AsdfFile, ByteOrder, Datatype, Node, OpenOptions, RewriteReason, Update, Version, WriteOptions};
use asdf_core_types::ScalarType;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("asdf-rs-update-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn f64s(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A file with two float64 arrays and a string, written with `opts`.
fn two_arrays(path: &Path, opts: &WriteOptions) {
    let mut f = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
    let t = Datatype::Scalar(ScalarType::Float64);
    f.put_array(
        "/a",
        asdf::NewArray::from_bytes(t.clone(), &[4], ByteOrder::Little, f64s(&[1.0, 2.0, 3.0, 4.0])),
    )
    .unwrap();
    f.put_array(
        "/b",
        asdf::NewArray::from_bytes(t, &[2, 2], ByteOrder::Little, f64s(&[5.0, 6.0, 7.0, 8.0])),
    )
    .unwrap();
    f.get_mut("")
        .unwrap()
        .as_mapping_mut()
        .unwrap()
        .insert("note", Node::str("a rather long note that can be shortened later"));
    f.write(path, opts).unwrap();
}

/// The stored bytes of every block (header and data) of the file at `path`.
fn block_bytes(path: &Path) -> Vec<Vec<u8>> {
    let f = asdf::open(path).unwrap();
    let bytes = std::fs::read(path).unwrap();
    (0..f.source().layout().block_count())
        .map(|i| {
            let b = f.source().layout().block(i).unwrap();
            let end = b.data_offset + b.header.used_size;
            bytes[usize::try_from(b.offset).unwrap()..usize::try_from(end).unwrap()].to_vec()
        })
        .collect()
}

fn values(f: &AsdfFile, p: &str) -> Vec<f64> {
    f.array(p).and_then(|a| a.read::<Vec<f64>>()).unwrap()
}

fn check_all(path: &Path) -> AsdfFile {
    let f = asdf::Open::path(path)
        .options(OpenOptions::default().verify_checksums(true))
        .open()
        .unwrap();
    assert!(f.warnings().is_empty(), "{:?}", f.warnings());
    for i in 0..f.source().layout().block_count() {
        f.source().layout().verify_checksum(i).unwrap();
    }
    f
}

#[test]
fn a_shorter_tree_is_written_in_place_and_blocks_are_untouched() {
    let dir = tmp("shorter");
    let path = dir.join("f.asdf");
    two_arrays(&path, &WriteOptions::default());
    let before = block_bytes(&path);
    let len_before = std::fs::metadata(&path).unwrap().len();
    let mut f = asdf::open(&path).unwrap();
    f.get_mut("")
        .unwrap()
        .as_mapping_mut()
        .unwrap()
        .insert("note", Node::str("short"));
    let u = f.update(&WriteOptions::default()).unwrap();
    let Update::InPlace {
        tree_bytes,
        room,
        appended,
    } = u
    else {
        panic!("{u:?}")
    };
    assert!(tree_bytes < room && appended == 0, "{u:?}");
    assert_eq!(block_bytes(&path), before, "blocks rewritten");
    assert_eq!(std::fs::metadata(&path).unwrap().len(), len_before);
    // The value seen after the update is what is on disk.
    assert_eq!(f.get("/note").unwrap().as_str(), Some("short"));
    let g = check_all(&path);
    assert_eq!(g.get("/note").unwrap().as_str(), Some("short"));
    assert_eq!(values(&g, "/a"), [1.0, 2.0, 3.0, 4.0]);
    assert_eq!(values(&g, "/b"), [5.0, 6.0, 7.0, 8.0]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_tree_that_does_not_fit_rewrites_the_file() {
    let dir = tmp("grow");
    let path = dir.join("f.asdf");
    two_arrays(&path, &WriteOptions::default());
    let mut f = asdf::open(&path).unwrap();
    f.get_mut("")
        .unwrap()
        .as_mapping_mut()
        .unwrap()
        .insert("more", Node::str("x".repeat(500)));
    let u = f.update(&WriteOptions::default()).unwrap();
    assert!(
        matches!(u, Update::Rewritten(RewriteReason::TreeTooLarge { need, room }) if need > room),
        "{u:?}"
    );
    let g = check_all(&path);
    assert_eq!(g.get("/more").unwrap().as_str().map(str::len), Some(500));
    assert_eq!(values(&g, "/b"), [5.0, 6.0, 7.0, 8.0]);
    // No temporary file is left beside it.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn padded_file_takes_a_bigger_tree_and_a_new_array_in_place() {
    let dir = tmp("padded");
    let path = dir.join("f.asdf");
    two_arrays(&path, &WriteOptions::default().pad_blocks(true));
    let before = block_bytes(&path);
    let first_block = asdf::open(&path).unwrap().source().layout().block(0).unwrap().offset;
    assert_eq!(first_block % 4096, 0, "tree padded to a 4 KiB boundary");
    for round in 0..3 {
        let mut f = asdf::open(&path).unwrap();
        f.get_mut("")
            .unwrap()
            .as_mapping_mut()
            .unwrap()
            .insert(&format!("more{round}"), Node::str("y".repeat(300)));
        let vals: Vec<f64> = (0..10).map(|i| f64::from(i + round * 100)).collect();
        f.put_array(
            &format!("/new{round}"),
            asdf::NewArray::from_bytes(
                Datatype::Scalar(ScalarType::Float64),
                &[10],
                ByteOrder::Little,
                f64s(&vals),
            ),
        )
        .unwrap();
        let u = f.update(&WriteOptions::default().pad_blocks(true)).unwrap();
        assert!(matches!(u, Update::InPlace { appended: 1, .. }), "round {round}: {u:?}");
        // The blocks that were there are still there, byte for byte, at the same place.
        let now = block_bytes(&path);
        assert_eq!(&now[..before.len()], &before[..]);
        assert_eq!(now.len(), before.len() + usize::try_from(round).unwrap() + 1);
        assert_eq!(values(&f, &format!("/new{round}")), vals);
        assert_eq!(f.source().layout().block(0).unwrap().offset, first_block);
    }
    let g = check_all(&path);
    assert_eq!(values(&g, "/a"), [1.0, 2.0, 3.0, 4.0]);
    assert_eq!(values(&g, "/new2")[9], 209.0);
    assert!(matches!(
        g.source().layout().block_discovery(),
        asdf_layout::BlockDiscovery::Index { .. }
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn python_padded_sample_takes_an_array_in_place() {
    asdf_testdata::needs_conformance!();
    // Python asdf 6.0 hangs adding an array to a padded file; here it is appended.
    let dir = tmp("pypadded");
    let path = dir.join("h_padded.asdf");
    std::fs::copy(
        asdf_testdata::conformance_dir().join("python-asdf-samples/h_padded.asdf"),
        &path,
    )
    .unwrap();
    let before = block_bytes(&path);
    let mut f = asdf::open(&path).unwrap();
    let old: Vec<String> = f
        .tree()
        .as_mapping()
        .unwrap()
        .entries
        .iter()
        .filter_map(|(k, _)| k.as_str().map(str::to_owned))
        .collect();
    f.put_array(
        "/added",
        asdf::NewArray::from_bytes(
            Datatype::Scalar(ScalarType::Int32),
            &[3],
            ByteOrder::Big,
            [7i32, 8, 9].iter().flat_map(|x| x.to_be_bytes()).collect(),
        ),
    )
    .unwrap();
    let u = f.update(&WriteOptions::default()).unwrap();
    assert!(matches!(u, Update::InPlace { appended: 1, .. }), "{u:?}");
    assert_eq!(block_bytes(&path)[..before.len()], before[..]);
    let g = check_all(&path);
    assert_eq!(g.array("/added").and_then(|a| a.read::<Vec<i32>>()).unwrap(), [7, 8, 9]);
    for k in old {
        assert!(g.get(&format!("/{k}")).is_ok(), "{k} lost");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn negative_sources_keep_pointing_at_their_block_when_blocks_are_appended() {
    let dir = tmp("negative");
    let path = dir.join("f.asdf");
    two_arrays(&path, &WriteOptions::default().pad_blocks(true));
    // Make /b refer to its block as -1 (the last block).
    let mut f = asdf::open(&path).unwrap();
    *f.get_mut("").unwrap().get_mut("b").unwrap().get_mut("source").unwrap() = Node::int(-1);
    f.update(&WriteOptions::default()).unwrap();
    assert_eq!(f.get("/b/source").unwrap().as_i64(), Some(-1));
    f.put_array(
        "/c",
        asdf::NewArray::from_bytes(
            Datatype::Scalar(ScalarType::Float64),
            &[1],
            ByteOrder::Little,
            f64s(&[9.0]),
        ),
    )
    .unwrap();
    f.update(&WriteOptions::default()).unwrap();
    assert_eq!(values(&f, "/b"), [5.0, 6.0, 7.0, 8.0]);
    assert_eq!(values(&f, "/c"), [9.0]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn files_without_a_path_or_with_a_stream_are_refused_or_rewritten() {
    asdf_testdata::needs_conformance!();
    let f0 = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
    let mut f = asdf::Open::bytes(crate::common::bytes(&f0, &WriteOptions::default()).unwrap())
        .options(OpenOptions::default())
        .open()
        .unwrap();
    assert!(matches!(f.update(&WriteOptions::default()), Err(asdf::Error::NoPath)));

    let dir = tmp("stream");
    let path = dir.join("s.asdf");
    std::fs::copy(
        asdf_testdata::conformance_dir().join("python-asdf-samples/c_stream.asdf"),
        &path,
    )
    .unwrap();
    let mut f = asdf::open(&path).unwrap();
    let before = f.array("/stream").and_then(|a| a.values()).map(|a| a.elements);
    f.get_mut("")
        .unwrap()
        .as_mapping_mut()
        .unwrap()
        .insert("x", Node::int(1));
    let u = f.update(&WriteOptions::default()).unwrap();
    assert_eq!(u, Update::Rewritten(RewriteReason::StreamedBlock));
    let g = check_all(&path);
    assert_eq!(g.get("/x").unwrap().as_i64(), Some(1));
    let after = g.array("/stream").and_then(|a| a.values()).map(|a| a.elements);
    assert!(before.is_ok());
    assert_eq!(
        before
            .unwrap()
            .iter()
            .zip(after.unwrap().iter())
            .filter(|(a, b)| !a.same(b))
            .count(),
        0
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every Python-written sample and every reference file: a key added and updated (in place
/// when the tree fits, rewritten otherwise), then every array reads the same values as before.
#[test]
fn every_conformance_file_survives_an_update() {
    asdf_testdata::needs_conformance!();
    let c = asdf_testdata::conformance_dir();
    let mut files = asdf_testdata::files_with_ext(&c.join("python-asdf-samples"), "asdf");
    files.extend(asdf_testdata::files_with_ext(
        &c.join("asdf-standard/reference_files"),
        "asdf",
    ));
    let dir = tmp("every");
    let (mut in_place, mut rewritten) = (0, 0);
    for (i, p) in files.iter().enumerate() {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name.contains("exploded0") {
            continue;
        }
        // Exploded files refer to their block files by relative name: copy the directory's files.
        let target = dir.join(format!("{i:03}"));
        std::fs::create_dir_all(&target).unwrap();
        for e in std::fs::read_dir(p.parent().unwrap()).unwrap().flatten() {
            if e.path().is_file() {
                std::fs::copy(e.path(), target.join(e.file_name())).unwrap();
            }
        }
        let path = target.join(&name);
        let opts = OpenOptions::default().validate(false);
        let before = asdf::Open::path(&path).options(opts.clone()).open().unwrap();
        let arrays: Vec<(String, Vec<asdf::Element>)> = common::ndarray_pointers(&before, false)
            .into_iter()
            .filter_map(|a| before.array(&a).and_then(|a| a.values()).ok().map(|x| (a, x.elements)))
            .collect();
        drop(before);
        let mut f = asdf::Open::path(&path).options(opts.clone()).open().unwrap();
        let Some(m) = f.get_mut("").unwrap().as_mapping_mut() else {
            continue;
        };
        m.insert("x_updated", Node::str("by asdf-rs"));
        match f
            .update(&WriteOptions::default().validate(false))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
        {
            Update::InPlace { .. } => in_place += 1,
            _ => rewritten += 1,
        }
        let g = asdf::Open::path(&path)
            .options(opts)
            .open()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(g.get("/x_updated").unwrap().as_str(), Some("by asdf-rs"), "{name}");
        for (a, want) in &arrays {
            let got = g
                .array(a)
                .and_then(|a| a.values())
                .unwrap_or_else(|e| panic!("{name}{a}: {e}"))
                .elements;
            assert!(
                got.len() == want.len() && got.iter().zip(want).all(|(x, y)| x.same(y)),
                "{name}{a}"
            );
        }
    }
    println!("{in_place} updated in place, {rewritten} rewritten");
    assert!(in_place + rewritten >= 120, "{in_place} {rewritten}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Two writers that opened the same file: the first one's in-place update lands; the second
/// (in place or a full rewrite) finds the file changed and refuses, writing nothing. Nothing
/// the first wrote is lost.
#[test]
fn racing_writers_the_second_refuses() {
    let d = tmp("race");
    let p = d.join("race.asdf");
    two_arrays(&p, &WriteOptions::default().pad_blocks(true));
    for second_in_place in [true, false] {
        let mut a = asdf::open(&p).unwrap();
        let mut b = asdf::open(&p).unwrap();
        a.get_mut("")
            .unwrap()
            .as_mapping_mut()
            .unwrap()
            .insert("note", Node::str("A"));
        assert!(matches!(
            a.update(&WriteOptions::default()).unwrap(),
            Update::InPlace { .. }
        ));
        b.get_mut("")
            .unwrap()
            .as_mapping_mut()
            .unwrap()
            .insert("note", Node::str("B"));
        let lost = std::fs::read(&p).unwrap();
        let r = if second_in_place {
            b.update(&WriteOptions::default()).map(|_| ())
        } else {
            b.write(&p, &WriteOptions::default()).map(|_| ())
        };
        assert!(matches!(r, Err(asdf::Error::Changed { .. })), "{r:?}");
        assert_eq!(std::fs::read(&p).unwrap(), lost, "the refused write changed the file");
        let back = check_all(&p);
        assert_eq!(back.get("/note").unwrap().as_str(), Some("A"));
        assert_eq!(values(&back, "/a"), [1.0, 2.0, 3.0, 4.0]);
    }
    // A rewrite first (the path now names a new file), then an in-place update of the old one.
    let a = asdf::open(&p).unwrap();
    let mut b = asdf::open(&p).unwrap();
    a.write(&p, &WriteOptions::default()).unwrap();
    b.get_mut("")
        .unwrap()
        .as_mapping_mut()
        .unwrap()
        .insert("note", Node::str("B"));
    assert!(matches!(
        b.update(&WriteOptions::default()),
        Err(asdf::Error::Changed { .. })
    ));
    check_all(&p);
}

/// Many processes' worth of racing updates from threads: each either lands whole or refuses;
/// the file is valid at the end and holds the last landed value.
#[test]
fn concurrent_updates_never_lose_bytes() {
    let d = tmp("race-threads");
    let p = d.join("race.asdf");
    two_arrays(&p, &WriteOptions::default().pad_blocks(true));
    let landed = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for t in 0..8 {
            let (p, landed) = (&p, &landed);
            s.spawn(move || {
                for k in 0..10 {
                    let Ok(mut f) = asdf::open(p) else { continue };
                    let v = format!("writer {t} round {k}");
                    f.get_mut("")
                        .unwrap()
                        .as_mapping_mut()
                        .unwrap()
                        .insert("note", Node::str(v.clone()));
                    match f.update(&WriteOptions::default()) {
                        Ok(_) => landed.lock().unwrap().push(v),
                        Err(asdf::Error::Changed { .. }) => {}
                        Err(e) => panic!("{e}"),
                    }
                }
            });
        }
    });
    let landed = landed.into_inner().unwrap();
    assert!(!landed.is_empty());
    let back = check_all(&p);
    assert_eq!(values(&back, "/b"), [5.0, 6.0, 7.0, 8.0]);
    let note = back.get("/note").unwrap().as_str().unwrap().to_owned();
    assert!(landed.contains(&note), "{note} never landed");
}

/// Another process truncates the file while it is open: with the default options (no memory
/// map) reading its blocks is an I/O error, never SIGBUS (which would kill this test process).
#[test]
fn a_file_truncated_while_open_is_an_error_not_a_crash() {
    let d = tmp("truncated");
    let p = d.join("t.asdf");
    two_arrays(&p, &WriteOptions::default());
    let f = asdf::open(&p).unwrap();
    let first_block = f.source().layout().block(0).unwrap().data_offset;
    std::fs::OpenOptions::new()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len(first_block + 3)
        .unwrap();
    assert!(f.array("/a").and_then(|a| a.read::<Vec<f64>>()).is_err());
    assert!(f.array("/b").and_then(|a| a.read::<Vec<f64>>()).is_err());
    assert!(f.source().layout().check_block(1).is_err());
}
