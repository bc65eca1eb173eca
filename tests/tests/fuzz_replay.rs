//! Every input the fuzzers (`cargo xtask fuzz`) ever crashed on, kept under
//! `tests/fuzz-crashes/TARGET/`, replayed through the same target body: each must now end
//! without a panic. Also a quick pass of every target over small conformance files, so that
//! the bodies themselves stay exercised.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use asdf_conformance::fuzz;

fn body(target: &str) -> fn(&[u8]) {
    match target {
        "layout" => fuzz::layout,
        "yaml" => fuzz::yaml,
        "codecs" => fuzz::codecs,
        "open_arrays" => fuzz::open_arrays,
        "update" => fuzz::update,
        "fits" => fuzz::fits,
        "drafts" => fuzz::drafts,
        "frames" => fuzz::frames,
        "remote" => fuzz::remote,
        "regions" => fuzz::regions,
        "chunked" => fuzz::chunked,
        other => panic!("tests/fuzz-crashes/{other}: no such target"),
    }
}

#[test]
fn crashes_found_by_fuzzing_stay_fixed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz-crashes");
    let mut replayed = 0;
    for dir in std::fs::read_dir(&root).unwrap().flatten() {
        let target = dir.file_name().to_string_lossy().into_owned();
        let f = body(&target);
        for input in std::fs::read_dir(dir.path()).unwrap().flatten() {
            if input.file_name() == ".gitkeep" {
                continue;
            }
            let bytes = std::fs::read(input.path()).unwrap();
            let r = std::panic::catch_unwind(|| f(&bytes));
            assert!(
                r.is_ok(),
                "{target}/{}: panics again",
                input.file_name().to_string_lossy()
            );
            replayed += 1;
        }
    }
    println!("{replayed} fuzz crash inputs replayed");
}

#[test]
fn every_target_runs_on_conformance_files() {
    asdf_testdata::needs_conformance!();
    let files: Vec<_> = asdf_conformance::files_with_ext(&asdf_conformance::conformance_dir(), "asdf")
        .into_iter()
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() <= 64 << 10))
        .collect();
    assert!(files.len() > 200, "{} files", files.len());
    for p in &files {
        let bytes = std::fs::read(p).unwrap();
        fuzz::layout(&bytes);
        fuzz::open_arrays(&bytes);
        let r = asdf_layout::Reader::open(bytes.as_slice());
        if let Ok(r) = r {
            if let Some(t) = r.tree_bytes() {
                fuzz::yaml(t);
            }
            for i in 0..r.block_count() {
                let (Ok(b), Ok(s)) = (r.block(i), r.read_stored(i)) else {
                    continue;
                };
                if let Some(seed) = fuzz::codec_seed(b.compression(), b.data_len(), &s) {
                    fuzz::codecs(&seed);
                }
            }
        }
    }
    fuzz::update("a note \u{e9}".as_bytes());
    for seed in asdf_conformance::fuzz::region_seeds() {
        fuzz::regions(seed.as_bytes());
    }
    for seed in asdf_conformance::fuzz::chunked_seeds() {
        fuzz::chunked(&seed);
    }
}
