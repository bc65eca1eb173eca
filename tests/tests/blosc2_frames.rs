//! The Blosc2 frames of `../shared/conformance/blosc2-frames` (written by C-Blosc2 through
//! python-blosc2): each decodes, through the `bls2` codec, to the bytes whose MD5 the manifest
//! gives, or fails with a clear error. Never to other bytes without an error: that is
//! silent corruption. The counts are printed; frames that do not decode yet are listed with
//! their error (issue #23 covers the frame format in full).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use asdf_conformance::conformance_dir;
use asdf_layout::compression::{Label, Registry};
use md5::{Digest as _, Md5};
use serde_json::Value as J;

#[test]
fn frames_decode_to_their_md5_or_fail_clearly() {
    asdf_testdata::needs_conformance!();
    let dir = conformance_dir().join("blosc2-frames");
    let manifest: J = serde_json::from_str(&std::fs::read_to_string(dir.join("MANIFEST.json")).unwrap()).unwrap();
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
    assert!(exact.len() >= 60, "only {} frames decode", exact.len());
}

/// A range of a frame decodes only the chunks it touches (through the chunk index) and gives
/// the same bytes as the whole decode, for ranges inside one chunk, across chunk borders,
/// over special chunks and up to the end.
#[test]
fn ranges_of_frames_equal_the_whole_decode() {
    asdf_testdata::needs_conformance!();
    let dir = conformance_dir().join("blosc2-frames");
    let manifest: J = serde_json::from_str(&std::fs::read_to_string(dir.join("MANIFEST.json")).unwrap()).unwrap();
    let registry = Registry::shared_default();
    let codec = registry.get(Label::BLS2).unwrap();
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
