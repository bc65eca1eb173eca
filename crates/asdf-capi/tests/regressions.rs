//! The defects an outside review of the C API found, each checked by a C program
//! (`tests/c/review.c`) built with AddressSanitizer and LeakSanitizer against this library.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;

mod common;
use common::{soname_dir, target_dir};

#[test]
fn the_review_findings_stay_fixed() {
    let work = std::env::temp_dir().join(format!("asdf-capi-review-{}", std::process::id()));
    let libdir = soname_dir(&work);
    let target = target_dir();
    let exe = work.join("review");
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = Command::new("cc")
        .args(["-std=gnu11", "-g", "-fsanitize=address", "-fno-omit-frame-pointer"])
        .arg(format!("-I{}", here.join("include").display()))
        .arg(here.join("tests/c/review.c"))
        .arg(format!("-L{}", target.display()))
        .arg("-lasdf_capi")
        .arg(format!("-Wl,-rpath,{}", libdir.display()))
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(o.status.success(), "cc failed: {}", String::from_utf8_lossy(&o.stderr));
    // The hostile file of the conformance data, when it is there.
    let mut run = Command::new(&exe);
    match asdf_testdata::find_conformance() {
        Some(c) => {
            run.arg(c.join("asdf-pytests-data/mutated/compressed_unknown_label.asdf"));
        }
        None => eprintln!("NOT RUN: the unknown-compression check of review.c (needs ../shared/conformance)"),
    }
    let out = run.env("ASAN_OPTIONS", "detect_leaks=1").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let _ = std::fs::remove_dir_all(&work);
    assert!(out.status.success() && !text.contains("Sanitizer"), "review.c: {text}");
}
