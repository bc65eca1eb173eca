//! The Blosc2 frames of `../shared/conformance/blosc2-frames` (written by C-Blosc2 through
//! python-blosc2): each decodes, through the `bls2` codec, to the bytes whose MD5 the manifest
//! gives, or fails with a clear error. Never to other bytes without an error: that is
//! silent corruption. The counts are printed; frames that do not decode yet are listed with
//! their error (issue #23 covers the frame format in full).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::cast_possible_truncation
)]

use asdf_conformance::conformance_dir;
use asdf_layout::compression::{Label, Registry};
use md5::{Digest as _, Md5};
use serde_json::Value as J;

/// The corpus folder, its manifest and the `bls2` codec.
fn corpus() -> (
    std::path::PathBuf,
    J,
    std::sync::Arc<dyn asdf_layout::compression::Codec>,
) {
    let dir = conformance_dir().join("blosc2-frames");
    let manifest = manifest(&dir);
    let codec = Registry::shared_default().get(Label::BLS2).unwrap().clone();
    (dir, manifest, codec)
}

/// The corpus's MANIFEST.json.
fn manifest(dir: &std::path::Path) -> J {
    serde_json::from_str(&std::fs::read_to_string(dir.join("MANIFEST.json")).unwrap()).unwrap()
}

#[test]
fn frames_decode_to_their_md5_or_fail_clearly() {
    asdf_testdata::needs_conformance!();
    let dir = conformance_dir().join("blosc2-frames");
    let manifest = manifest(&dir);
    let registry = Registry::shared_default();
    let codec = registry.get(Label::BLS2).expect("bls2 codec");
    let (mut exact, mut refused, mut wrong) = (Vec::new(), Vec::new(), Vec::new());
    for case in manifest["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let nbytes = usize::try_from(case["nbytes"].as_u64().unwrap()).unwrap();
        let frame = std::fs::read(dir.join(format!("frames/{name}.b2frame"))).unwrap();
        let mut out = vec![0u8; nbytes];
        match codec.decode(&frame, &mut out) {
            Ok(()) => {
                let md5 = format!("{:x}", Md5::digest(&out));
                if md5 == case["md5"].as_str().unwrap() {
                    exact.push(name.to_owned());
                } else {
                    wrong.push(name.to_owned());
                }
            }
            Err(e) => refused.push(format!("{name}: {e}")),
        }
    }
    println!(
        "blosc2 frames: {} decode to their MD5, {} refused with an error, {} decode to wrong bytes",
        exact.len(),
        refused.len(),
        wrong.len()
    );
    for r in &refused {
        println!("  refused: {r}");
    }
    assert!(wrong.is_empty(), "silent corruption: {wrong:?}");
    assert_eq!(
        exact.len(),
        manifest["cases"].as_array().unwrap().len(),
        "frames that do not decode"
    );
    assert_eq!(exact.len(), 70);
}

/// A range of a frame decodes only the chunks it touches (through the chunk index) and gives
/// the same bytes as the whole decode, for ranges inside one chunk, across chunk borders,
/// over special chunks and up to the end.
#[test]
fn ranges_of_frames_equal_the_whole_decode() {
    asdf_testdata::needs_conformance!();
    let (dir, manifest, codec) = corpus();
    let mut checked = 0;
    for case in manifest["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let n = usize::try_from(case["nbytes"].as_u64().unwrap()).unwrap();
        let chunk = usize::try_from(case["chunksize"].as_u64().unwrap()).unwrap().max(1);
        let frame = std::fs::read(dir.join(format!("frames/{name}.b2frame"))).unwrap();
        let mut whole = vec![0u8; n];
        codec.decode(&frame, &mut whole).unwrap();
        let mut ranges = vec![0..0, 0..n.min(1), n.saturating_sub(3)..n, 0..n];
        if n > chunk {
            ranges.push(chunk - 2..chunk + 5);
            ranges.push(chunk + 7..(2 * chunk + 1).min(n));
        }
        for r in ranges {
            let got = codec.decode_range(&frame, n, r.clone()).unwrap();
            assert!(got == whole[r.clone()], "{name} {r:?}");
            checked += 1;
        }
    }
    assert!(checked > 200, "{checked}");
}

/// The ASDF files whose `bls2` block is a C-Blosc2 frame (as asdf-cxx writes it) or one chunk
/// (as the asdf-compression plugin writes it): the block decodes to the bytes of the expected
/// `.npy`, the tree's shape is the `.npy`'s, and element-sized ranges (one chunk decoded for a
/// frame) agree.
#[test]
fn asdf_files_with_bls2_frames_and_chunks_hold_the_expected_arrays() {
    asdf_testdata::needs_conformance!();
    let dir = conformance_dir().join("blosc2-frames/asdf");
    let mut checked = 0;
    for name in ["f8_2d", "i4_1d", "u2_3d"] {
        let npy = std::fs::read(dir.join(format!("expected_{name}.npy"))).unwrap();
        let header_len = usize::from(u16::from_le_bytes([npy[8], npy[9]]));
        let header = String::from_utf8_lossy(&npy[10..10 + header_len]).into_owned();
        let data = &npy[10 + header_len..];
        let shape: Vec<i64> = header
            .split("'shape': (")
            .nth(1)
            .and_then(|s| s.split(')').next())
            .unwrap()
            .split(',')
            .filter_map(|x| x.trim().parse().ok())
            .collect();
        for form in ["frame", "chunk"] {
            let file = asdf::open(dir.join(format!("bls2_{form}_{name}.asdf"))).unwrap();
            let tree_shape: Vec<i64> = file
                .get("/data/shape")
                .unwrap()
                .as_sequence()
                .unwrap()
                .items
                .iter()
                .map(|n| n.as_i64().unwrap())
                .collect();
            assert_eq!(tree_shape, shape, "{form} {name}");
            let blocks = file.source().layout();
            // What `asdf-cli verify` checks: the block decodes and its checksum matches.
            blocks.check_block(0).unwrap_or_else(|e| panic!("{form} {name}: {e}"));
            blocks
                .verify_checksum(0)
                .unwrap_or_else(|e| panic!("{form} {name}: {e}"));
            let whole = blocks.read_data(0).unwrap();
            assert!(*whole == *data, "{form} {name}: decoded bytes differ from the .npy");
            let n = data.len() as u64;
            for r in [0..8, n / 2..n / 2 + 8, n - 8..n] {
                let part = blocks.read_range(0, r.clone()).unwrap();
                let (s, e) = (usize::try_from(r.start).unwrap(), usize::try_from(r.end).unwrap());
                assert!(*part == data[s..e], "{form} {name} {r:?}");
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 6);
}

/// Frames that lie: header sizes, a chunk index past the frame or of the wrong length, offsets
/// past the chunks, special-value bits the format reserves, a frame cut short. Each fails with
/// an error (never a panic, never other bytes than the frame's), whole and by range.
#[test]
fn lying_frames_fail_cleanly() {
    asdf_testdata::needs_conformance!();
    let dir = conformance_dir().join("blosc2-frames");
    let registry = Registry::shared_default();
    let codec = registry.get(Label::BLS2).unwrap();
    let frame = std::fs::read(dir.join("frames/special_zeros_i4.b2frame")).unwrap();
    let n = usize::try_from(u64::from_be_bytes(frame[30..38].try_into().unwrap())).unwrap();
    let mut whole = vec![0u8; n];
    codec.decode(&frame, &mut whole).unwrap();
    let header_size = usize::try_from(u32::from_be_bytes(frame[11..15].try_into().unwrap())).unwrap();
    let cbytes = usize::try_from(u64::from_be_bytes(frame[39..47].try_into().unwrap())).unwrap();
    let index_at = header_size + cbytes;
    let set_be = |f: &mut Vec<u8>, at: usize, v: &[u8]| f[at..at + v.len()].copy_from_slice(v);
    let mut cases: Vec<(&str, Vec<u8>)> = Vec::new();
    let mut f = frame.clone();
    set_be(&mut f, 11, &u32::MAX.to_be_bytes());
    cases.push(("header size past the frame", f));
    let mut f = frame.clone();
    set_be(&mut f, 39, &u64::MAX.to_be_bytes());
    cases.push(("compressed size past the frame", f));
    let mut f = frame.clone();
    set_be(&mut f, 39, &((cbytes - 40) as u64).to_be_bytes());
    cases.push(("index where a chunk is", f));
    let mut f = frame.clone();
    set_be(&mut f, 58, &0u32.to_be_bytes());
    cases.push(("chunk size zero", f));
    let mut f = frame.clone();
    set_be(&mut f, 58, &1u32.to_be_bytes());
    cases.push(("chunk size 1: index of the wrong length", f));
    let mut f = frame.clone();
    set_be(&mut f, 30, &((n as u64) * 1000).to_be_bytes());
    cases.push(("decoded size lies", f));
    // The index chunk's data: offsets past the chunks, and reserved special bits.
    let data_at = index_at + 32;
    let mut f = frame.clone();
    f[data_at..data_at + 8].copy_from_slice(&(i64::MAX / 2).to_le_bytes());
    cases.push(("offset past the chunks", f));
    let mut f = frame.clone();
    f[data_at + 8..data_at + 16].copy_from_slice(&(0x88u64 << 56).to_le_bytes());
    cases.push(("reserved special bits", f));
    let mut f = frame.clone();
    f[data_at + 8..data_at + 16].copy_from_slice(&(0x89u64 << 56).to_le_bytes());
    cases.push(("zeros with a reserved bit", f));
    let mut f = frame.clone();
    f[data_at + 8..data_at + 16].copy_from_slice(&(0x83u64 << 56).to_le_bytes());
    cases.push(("two special values at once", f));
    let mut f = frame.clone();
    f.truncate(frame.len() - 20);
    cases.push(("cut short", f));
    for (what, bad) in &cases {
        let mut out = vec![0u8; n];
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| codec.decode(bad, &mut out)));
        match r {
            Err(_) => panic!("{what}: panicked"),
            Ok(Ok(())) => assert!(out == whole, "{what}: decoded to other bytes without an error"),
            Ok(Err(_)) => {}
        }
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| codec.decode_range(bad, n, 0..n)));
        match r {
            Err(_) => panic!("{what}: range panicked"),
            Ok(Ok(part)) => assert!(part == whole, "{what}: range decoded to other bytes"),
            Ok(Err(_)) => {}
        }
    }
    // And every one is refused.
    for (what, bad) in &cases {
        let mut out = vec![0u8; n];
        assert!(codec.decode(bad, &mut out).is_err(), "{what}: accepted");
    }
}

/// Metalayers (header) and variable-length metalayers (trailer, compressed) as the manifest
/// records them (python-blosc2 stores msgpack values); the b2nd frame's `b2nd` metalayer holds
/// its shape, chunk and block shapes; frames without any give none.
#[test]
fn metalayers_and_vlmetalayers_equal_the_manifest() {
    use rmpv::Value;
    asdf_testdata::needs_conformance!();
    let dir = conformance_dir().join("blosc2-frames");
    let manifest = manifest(&dir);
    let to_json = |v: &Value| -> J {
        match v {
            Value::Integer(i) => J::from(i.as_i64().unwrap()),
            Value::F64(f) => J::from(*f),
            Value::F32(f) => J::from(f64::from(*f)),
            Value::String(s) => J::from(s.as_str().unwrap()),
            Value::Array(a) => J::Array(
                a.iter()
                    .map(|x| serde_json::to_value(format!("{x}")).unwrap())
                    .collect(),
            ),
            other => J::from(format!("{other}")),
        }
    };
    let decode = |bytes: &[u8]| rmpv::decode::read_value(&mut &bytes[..]).unwrap();
    let mut with_meta = 0;
    for case in manifest["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let frame = std::fs::read(dir.join(format!("frames/{name}.b2frame"))).unwrap();
        let meta = asdf_layout::compression::frame_metalayers(&frame).unwrap_or_else(|e| panic!("{name}: {e}"));
        for (key, ours) in [("meta", &meta.metalayers), ("vlmeta", &meta.vlmetalayers)] {
            let want = case.get(key).and_then(J::as_object);
            if name.starts_with("b2nd") && key == "meta" {
                continue;
            }
            assert_eq!(
                ours.len(),
                want.map_or(0, serde_json::Map::len),
                "{name} {key}: {ours:?}"
            );
            for (k, bytes) in ours {
                let v = decode(bytes);
                let w = &want.unwrap()[k.as_str()];
                let same = match (&v, w) {
                    (Value::Array(a), J::Array(b)) => {
                        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.as_i64() == y.as_i64())
                    }
                    _ => to_json(&v) == *w,
                };
                assert!(same, "{name} {key} {k}: {v} != {w}");
                with_meta += 1;
            }
        }
        if name.starts_with("b2nd") {
            let (_, b2nd) = meta
                .metalayers
                .iter()
                .find(|(k, _)| k == "b2nd")
                .expect("b2nd metalayer");
            // [version, ndim, shape, chunkshape, blockshape]
            let v = decode(b2nd);
            let a = v.as_array().unwrap();
            let dims = |i: usize| {
                a[i].as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_i64().unwrap())
                    .collect::<Vec<_>>()
            };
            let want = |k: &str| {
                case[k]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_i64().unwrap())
                    .collect::<Vec<_>>()
            };
            assert_eq!(dims(2), want("b2nd_shape"));
            assert_eq!(dims(3), want("b2nd_chunks"));
            assert_eq!(dims(4), want("b2nd_blocks"));
            with_meta += 1;
        }
    }
    assert_eq!(with_meta, 5, "metalayers checked");
}

/// Data of `n` elements of `typesize` bytes with runs of zeros (whole chunks of them at the
/// chunk sizes the tests use) and a slowly varying rest.
fn sample(n: usize, typesize: usize) -> Vec<u8> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut v = 0u64;
    let mut out = Vec::with_capacity(n * typesize);
    for i in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v = v.wrapping_add(x % 5);
        let value = if (n / 3..2 * n / 3).contains(&i) { 0 } else { v % 1000 };
        out.extend_from_slice(&value.to_le_bytes()[..typesize]);
    }
    out
}

/// The frames we write: every codec x filter x type size, three chunk sizes (one that does not
/// divide the data, one chunk for all, and the default), chunks of zeros among them.
fn our_frames(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    use asdf_layout::compression::{Blosc2, Blosc2Codec, Blosc2Filter, Codec as _};
    std::fs::create_dir_all(dir).unwrap();
    let mut out = Vec::new();
    for codec in [
        Blosc2Codec::BloscLz,
        Blosc2Codec::Lz4,
        Blosc2Codec::Lz4Hc,
        Blosc2Codec::Zlib,
        Blosc2Codec::Zstd,
    ] {
        for filter in [Blosc2Filter::None, Blosc2Filter::Shuffle, Blosc2Filter::BitShuffle] {
            for typesize in [1, 2, 4, 8] {
                for chunksize in [7_000, 1 << 20, Blosc2::default().chunksize] {
                    let data = sample(30_001, typesize);
                    let c = Blosc2 {
                        level: 5,
                        typesize,
                        frame: true,
                        chunksize,
                        codec,
                        filter,
                    };
                    let mut frame = Vec::new();
                    c.encode(&data, &mut frame).unwrap();
                    let path = dir.join(format!("ours_{codec:?}_{filter:?}_{typesize}_{chunksize}.b2frame"));
                    std::fs::write(&path, &frame).unwrap();
                    out.push((path, data));
                }
            }
        }
    }
    out
}

/// Every frame we write decodes (whole and by ranges) to the bytes it was made from, and a
/// chunk of zeros is a special value in the index, not a stored chunk.
#[test]
fn our_frames_read_back() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("frames-ours");
    let registry = Registry::shared_default();
    let codec = registry.get(Label::BLS2).unwrap();
    let frames = our_frames(&dir);
    for (path, data) in &frames {
        let frame = std::fs::read(path).unwrap();
        assert!(frame.starts_with(b"\x9e\xa8b2frame\0"), "{}", path.display());
        let mut got = vec![0u8; data.len()];
        codec.decode(&frame, &mut got).unwrap();
        assert!(got == *data, "{}", path.display());
        let r = data.len() / 2 - 10..data.len() / 2 + 10;
        assert_eq!(
            codec.decode_range(&frame, data.len(), r.clone()).unwrap(),
            data[r],
            "{}",
            path.display()
        );
    }
    // Zeros cost nothing: in 7,000-byte chunks, the middle third of zeros holds whole chunks,
    // which the index marks special (top byte 0x81) instead of storing.
    let mut specials = 0;
    for (path, data) in frames
        .iter()
        .filter(|(p, _)| p.to_string_lossy().ends_with("_7000.b2frame"))
    {
        let frame = std::fs::read(path).unwrap();
        let cbytes = usize::try_from(u64::from_be_bytes(frame[39..47].try_into().unwrap())).unwrap();
        let index = &frame[97 + cbytes + 32..frame.len() - 35];
        let special = index.chunks_exact(8).filter(|o| o[7] == 0x81).count();
        let zero_chunks = data.chunks(7_000 / 8 * 8).filter(|c| c.iter().all(|&b| b == 0)).count();
        assert_eq!(special, zero_chunks, "{}", path.display());
        specials += special;
    }
    assert!(specials >= 45, "{specials} special chunks");
    // The same frames under AbacusSummit's label for them, `bsc2`.
    let bsc2 = registry.get(asdf_layout::compression::AbacusBlosc2::LABEL).unwrap();
    for (path, data) in frames.iter().take(12) {
        let mut got = vec![0u8; data.len()];
        bsc2.decode(&std::fs::read(path).unwrap(), &mut got).unwrap();
        assert!(got == *data, "bsc2 {}", path.display());
    }
    println!("{} frames written and read back", frames.len());
}

/// python-blosc2 (C-Blosc2) decodes every frame we write, and we decode every frame it writes
/// fresh (a matrix of codecs, filters and type sizes, with chunks of zeros and a partial last
/// chunk), both to the bytes they were made from.
#[test]
fn python_blosc2_reads_our_frames_and_we_read_its() {
    let py = asdf_testdata::interop_python();
    let script = asdf_testdata::workspace_root().join("tests/interop/blosc2_frames.py");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("frames-interop");
    let _ = std::fs::remove_dir_all(&dir);
    let frames = our_frames(&dir.join("ours"));
    let listing: Vec<J> = frames
        .iter()
        .map(|(p, d)| serde_json::json!({"path": p, "md5": format!("{:x}", Md5::digest(d)), "nbytes": d.len()}))
        .collect();
    let list = dir.join("ours.json");
    std::fs::write(&list, serde_json::to_vec(&listing).unwrap()).unwrap();
    let out = std::process::Command::new(&py)
        .arg(&script)
        .arg("read")
        .arg(&list)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let verdicts: Vec<J> = serde_json::from_slice(&out.stdout).unwrap();
    let bad: Vec<&J> = verdicts.iter().filter(|v| v["ok"] != J::Bool(true)).collect();
    assert!(
        bad.is_empty(),
        "python-blosc2 does not read {} of our frames: {bad:#?}",
        bad.len()
    );
    assert_eq!(verdicts.len(), frames.len());

    let out = std::process::Command::new(&py)
        .arg(&script)
        .arg("write")
        .arg(dir.join("python"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let theirs: Vec<J> = serde_json::from_slice(&out.stdout).unwrap();
    let registry = Registry::shared_default();
    let codec = registry.get(Label::BLS2).unwrap();
    for case in &theirs {
        let frame = std::fs::read(case["path"].as_str().unwrap()).unwrap();
        let mut got = vec![0u8; usize::try_from(case["nbytes"].as_u64().unwrap()).unwrap()];
        codec
            .decode(&frame, &mut got)
            .unwrap_or_else(|e| panic!("{}: {e}", case["path"]));
        assert_eq!(
            format!("{:x}", Md5::digest(&got)),
            case["md5"].as_str().unwrap(),
            "{}",
            case["path"]
        );
    }
    println!(
        "python-blosc2 4.14.1 read {} frames of ours; we read {} fresh frames of python-blosc2",
        verdicts.len(),
        theirs.len()
    );
    assert_eq!(theirs.len(), 63);
    assert_eq!(theirs.iter().filter(|c| c.get("b2nd").is_some()).count(), 3);
}

/// More than 2 GiB (one Blosc2 chunk's limit) as a `bls2` frame, through the facade: written,
/// opened, one element read through the chunk index, the whole array read back equal. Needs
/// about 8 GB of memory and a few minutes, so it runs on demand:
/// `cargo test --release -p asdf-conformance --test suite blosc2_frames:: -- --ignored`.
#[test]
#[ignore = "a 2.2 GiB array: run with --ignored (about 8 GB of memory)"]
fn arrays_over_2_gib_as_frames() {
    use asdf::{ByteOrder, Compression, Datatype, Element, WriteOptions};
    use asdf_core_types::ScalarType;
    let n: usize = (2 << 30) + (200 << 20);
    let data: Vec<u8> = (0..n).map(|i| ((i % 251) as u8) ^ ((i >> 20) as u8)).collect();
    let mut f = asdf::AsdfFile::new(asdf::Version::new(1, 6, 0)).unwrap();
    f.put_array(
        "/big",
        asdf::NewArray::from_bytes(
            Datatype::Scalar(ScalarType::UInt8),
            &[n],
            ByteOrder::Little,
            data.clone(),
        ),
    )
    .unwrap();
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("over-2-gib.asdf");
    f.write(
        &path,
        &WriteOptions::default().compression(Compression::All(Label::BLS2)),
    )
    .unwrap();
    drop(f);
    let g = asdf::open(&path).unwrap();
    let b = g.source().layout().block(0).unwrap();
    assert_eq!(b.compression(), Label::BLS2);
    assert_eq!(b.header.data_size, n as u64);
    for i in [0, n / 2, n - 1] {
        assert_eq!(
            g.array("/big").and_then(|a| a.element(&[i])).unwrap(),
            Element::UInt(u64::from(data[i])),
            "element {i}"
        );
    }
    let back = g
        .array("/big")
        .and_then(|a| a.read::<std::borrow::Cow<'_, [u8]>>())
        .unwrap();
    assert!(back.as_ref() == data.as_slice(), "the array read back differs");
    drop(back);
    std::fs::remove_file(&path).unwrap();
}

/// `blsc` as AbacusSummit writes it (abacusutils' framing: length-prefixed blosc1 chunks) and
/// as asdf-compression writes it (one chunk), both made by python-blosc (C-Blosc 1.x): each
/// decodes to its bytes, whole, in pieces and by ranges across chunk borders.
#[test]
fn blsc_in_abacus_framing_and_as_one_chunk() {
    let py = asdf_testdata::interop_python();
    let script = asdf_testdata::workspace_root().join("tests/interop/blosc2_frames.py");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("blsc-forms");
    let out = std::process::Command::new(&py)
        .arg(&script)
        .arg("blsc")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let cases: Vec<J> = serde_json::from_slice(&out.stdout).unwrap();
    let registry = Registry::shared_default();
    let codec = registry.get(Label::BLSC).unwrap();
    let mut forms = std::collections::BTreeMap::<String, usize>::new();
    for case in &cases {
        let path = case["path"].as_str().unwrap();
        let body = std::fs::read(path).unwrap();
        let n = usize::try_from(case["nbytes"].as_u64().unwrap()).unwrap();
        let mut got = vec![0u8; n];
        codec.decode(&body, &mut got).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(
            format!("{:x}", Md5::digest(&got)),
            case["md5"].as_str().unwrap(),
            "{path}"
        );
        let mut pieces = Vec::with_capacity(n);
        codec
            .decode_pieces(&body, n, &mut |p| pieces.extend_from_slice(p))
            .unwrap();
        assert!(pieces == got, "{path}: pieces");
        for r in [0..1, n / 2 - 70_000..n / 2 + 70_000, n - 5..n] {
            assert_eq!(codec.decode_range(&body, n, r.clone()).unwrap(), got[r], "{path}");
        }
        // The wrong size is an error, not a short or padded array.
        assert!(codec.decode(&body, &mut vec![0u8; n + 1]).is_err(), "{path}");
        *forms.entry(case["form"].as_str().unwrap().to_owned()).or_default() += 1;
    }
    println!("blsc bodies from python-blosc read: {forms:?}");
    assert_eq!(forms.get("abacus"), Some(&6));
    assert_eq!(forms.get("chunk"), Some(&3));
}

/// A `b2nd` frame (an N-d array stored in chunks and blocks, edge chunks padded) decodes into
/// the array's C order when the block's size is the array's: the manifest's `array_md5`. At its
/// own (padded, chunk-ordered) size it still gives the chunks' bytes (`md5`).
#[test]
fn b2nd_frames_decode_in_c_order() {
    asdf_testdata::needs_conformance!();
    let (dir, manifest, codec) = corpus();
    let mut checked = 0;
    for case in manifest["cases"].as_array().unwrap() {
        let Some(shape) = case.get("b2nd_shape").and_then(J::as_array) else {
            continue;
        };
        let name = case["name"].as_str().unwrap();
        let frame = std::fs::read(dir.join(format!("frames/{name}.b2frame"))).unwrap();
        let ts = usize::try_from(case["typesize"].as_u64().unwrap()).unwrap();
        let n = shape
            .iter()
            .map(|x| usize::try_from(x.as_u64().unwrap()).unwrap())
            .product::<usize>()
            * ts;
        let mut c_order = vec![0u8; n];
        codec.decode(&frame, &mut c_order).unwrap();
        assert_eq!(
            format!("{:x}", Md5::digest(&c_order)),
            case["array_md5"].as_str().unwrap(),
            "{name}"
        );
        let r = n / 2 - 100..n / 2 + 100;
        assert_eq!(codec.decode_range(&frame, n, r.clone()).unwrap(), c_order[r], "{name}");
        let mut raw = vec![0u8; usize::try_from(case["nbytes"].as_u64().unwrap()).unwrap()];
        codec.decode(&frame, &mut raw).unwrap();
        assert_eq!(
            format!("{:x}", Md5::digest(&raw)),
            case["md5"].as_str().unwrap(),
            "{name}"
        );
        // Any other size is an error.
        assert!(codec.decode(&frame, &mut vec![0u8; n + ts]).is_err());
        checked += 1;
    }
    assert_eq!(checked, 1);
}

/// The `bls2` writer's options through the facade (`WriteOptions::codec`): a frame of 64 KiB
/// zstd chunks with bit shuffle, and one chunk (asdf-compression's form); both read back, and
/// the frame header says what was asked.
#[test]
fn bls2_options_through_the_facade() {
    use asdf::compression::{Blosc2, Blosc2Codec, Blosc2Filter};
    use asdf::{ByteOrder, Compression, Datatype, WriteOptions};
    use asdf_core_types::ScalarType;
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("bls2-options");
    std::fs::create_dir_all(&dir).unwrap();
    let values: Vec<f64> = (0..100_000).map(|i| f64::from(i).sqrt()).collect();
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    for (name, codec) in [
        (
            "frame",
            Blosc2 {
                chunksize: 64 << 10,
                codec: Blosc2Codec::Zstd,
                filter: Blosc2Filter::BitShuffle,
                ..Blosc2::default()
            },
        ),
        (
            "chunk",
            Blosc2 {
                frame: false,
                ..Blosc2::default()
            },
        ),
    ] {
        let mut f = asdf::AsdfFile::new(asdf::Version::new(1, 6, 0)).unwrap();
        f.put_array(
            "/x",
            asdf::NewArray::from_bytes(
                Datatype::Scalar(ScalarType::Float64),
                &[values.len()],
                ByteOrder::Little,
                bytes.clone(),
            ),
        )
        .unwrap();
        let path = dir.join(format!("{name}.asdf"));
        let opts = WriteOptions::default()
            .compression(Compression::All(Label::BLS2))
            .codec(std::sync::Arc::new(codec));
        f.write(&path, &opts).unwrap();
        let g = asdf::open(&path).unwrap();
        assert_eq!(
            g.array("/x").and_then(|a| a.read::<Vec<f64>>()).unwrap(),
            values,
            "{name}"
        );
        let r = g.source().layout();
        let stored = r.read_stored(0).unwrap();
        assert_eq!(stored.starts_with(b"\x9e\xa8b2frame\0"), name == "frame", "{name}");
        if name == "frame" {
            // codec_flags: zstd (5) with level 5 in the high nibble; chunk size 64 KiB.
            assert_eq!(stored[27], 0x55);
            assert_eq!(u32::from_be_bytes(stored[58..62].try_into().unwrap()), 64 << 10);
            assert_eq!(stored[69..77], [0xd8, 6, 0, 0, 0, 0, 0, 2]);
        }
    }
}

/// Differential: python-blosc2 writes `b2nd` arrays of random rank, shape, chunk and block
/// shapes (even and uneven, padded and not), dtypes and codecs; each frame, read at the
/// array's size, gives python-blosc2's own C-order bytes, whole, in pieces and by ranges. The
/// number of arrays is `ASDF_B2ND_CASES` (300 by default; seed `ASDF_B2ND_SEED`, 7).
#[test]
fn b2nd_frames_of_random_layouts_read_as_python_blosc2_reads_them() {
    let py = asdf_testdata::interop_python();
    let script = asdf_testdata::workspace_root().join("tests/interop/blosc2_frames.py");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("b2nd-random");
    let _ = std::fs::remove_dir_all(&dir);
    let n = std::env::var("ASDF_B2ND_CASES").unwrap_or_else(|_| "300".into());
    let seed = std::env::var("ASDF_B2ND_SEED").unwrap_or_else(|_| "7".into());
    let out = std::process::Command::new(&py)
        .arg(&script)
        .args(["b2nd".as_ref(), dir.as_os_str(), n.as_ref(), seed.as_ref()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let cases: Vec<J> = serde_json::from_slice(&out.stdout).unwrap();
    let registry = Registry::shared_default();
    let codec = registry.get(Label::BLS2).unwrap();
    let (mut bytes, mut reordered) = (0usize, 0usize);
    for case in &cases {
        let path = case["path"].as_str().unwrap();
        let frame = std::fs::read(path).unwrap();
        let n = usize::try_from(case["nbytes"].as_u64().unwrap()).unwrap();
        let what = format!(
            "{path}: shape {} chunks {} blocks {}",
            case["shape"], case["chunks"], case["blocks"]
        );
        let mut got = vec![0u8; n];
        codec.decode(&frame, &mut got).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(
            format!("{:x}", Md5::digest(&got)),
            case["md5"].as_str().unwrap(),
            "{what}"
        );
        let mut pieces = Vec::new();
        codec
            .decode_pieces(&frame, n, &mut |p| pieces.extend_from_slice(p))
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(pieces == got, "{what}: pieces");
        for r in [0..n.min(3), n / 3..n / 2, n.saturating_sub(5)..n] {
            assert_eq!(
                codec.decode_range(&frame, n, r.clone()).unwrap(),
                got[r.clone()],
                "{what} {r:?}"
            );
        }
        if case["chunks"] != case["shape"] {
            reordered += 1;
        }
        bytes += n;
    }
    println!(
        "b2nd differential: {} python-blosc2 arrays ({reordered} chunked), {bytes} bytes, 0 differences",
        cases.len()
    );
    assert!(!cases.is_empty() && reordered > 0);
}

/// python-blosc2's `asarray(np.arange(16).reshape(4, 4), chunks=(2, 2), blocks=(2, 2))`: four
/// whole (unpadded) chunks, stored in chunk order, read in the array's order.
#[test]
fn b2nd_unpadded_chunks_read_in_array_order() {
    let py = asdf_testdata::interop_python();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("b2nd-4x4");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("a.b2frame");
    let code = format!(
        "import blosc2, numpy as np\nopen({:?}, 'wb').write(blosc2.asarray(np.arange(16, dtype='<i8').reshape(4, 4), chunks=(2, 2), blocks=(2, 2)).to_cframe())",
        path.display().to_string()
    );
    let out = std::process::Command::new(&py).args(["-c", &code]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let frame = std::fs::read(&path).unwrap();
    let registry = Registry::shared_default();
    let codec = registry.get(Label::BLS2).unwrap();
    let mut got = vec![0u8; 128];
    codec.decode(&frame, &mut got).unwrap();
    let values: Vec<i64> = got
        .chunks(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(values, (0..16).collect::<Vec<i64>>());
    assert_eq!(codec.decode_range(&frame, 128, 16..32).unwrap(), got[16..32]);
}

/// Frames of special-value chunks that claim 3 GiB in 200 bytes (python-blosc2's `zeros` as a
/// b2nd array and a super-chunk filled with `fill_special`): read in pieces of at most
/// [`asdf_layout::compression::PIECE`] bytes (no buffer of a chunk's size) and by a 4-byte
/// range in the middle.
#[test]
fn special_value_frames_need_no_buffer_of_their_claimed_size() {
    let py = asdf_testdata::interop_python();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("special-3g");
    std::fs::create_dir_all(&dir).unwrap();
    let code = format!(
        "import blosc2\nd = {:?}\n\
         s = blosc2.zeros((3 * 2**30,), dtype='u1', chunks=(2**30,), blocks=(2**20,))\n\
         open(d + '/b2nd.b2frame', 'wb').write(s.to_cframe())\n\
         s = blosc2.SChunk(chunksize=2**30)\ns.fill_special(3 * 2**30, blosc2.SpecialValue.ZERO)\n\
         open(d + '/schunk.b2frame', 'wb').write(s.to_cframe())",
        dir.display().to_string()
    );
    let out = std::process::Command::new(&py).args(["-c", &code]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let registry = Registry::shared_default();
    let codec = registry.get(Label::BLS2).unwrap();
    let n = 3usize << 30;
    for name in ["b2nd", "schunk"] {
        let frame = std::fs::read(dir.join(format!("{name}.b2frame"))).unwrap();
        assert!(frame.len() < 400, "{name}: {} bytes", frame.len());
        let (mut total, mut largest, mut nonzero) = (0usize, 0usize, false);
        codec
            .decode_pieces(&frame, n, &mut |p| {
                total += p.len();
                largest = largest.max(p.len());
                nonzero |= p.iter().any(|&b| b != 0);
            })
            .unwrap();
        assert_eq!(total, n, "{name}");
        assert!(
            largest <= asdf_layout::compression::PIECE,
            "{name}: a piece of {largest} bytes"
        );
        assert!(!nonzero, "{name}");
        assert_eq!(
            codec.decode_range(&frame, n, n / 2..n / 2 + 4).unwrap(),
            [0; 4],
            "{name}"
        );
    }
}
