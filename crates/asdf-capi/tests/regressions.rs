//! The defects an outside review of the C API found, each checked by a C program
//! (`tests/c/review.c`) built with AddressSanitizer and LeakSanitizer against this library.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn target_dir() -> PathBuf {
    // (As in the other tests: the library beside the test binary first.)
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap().to_path_buf();
    if deps.join("libasdf_capi.so").exists() {
        deps
    } else {
        deps.parent().unwrap().to_path_buf()
    }
}

#[test]
fn the_review_findings_stay_fixed() {
    let work = std::env::temp_dir().join(format!("asdf-capi-review-{}", std::process::id()));
    let libdir = work.join("lib");
    std::fs::create_dir_all(&libdir).unwrap();
    let target = target_dir();
    std::os::unix::fs::symlink(target.join("libasdf_capi.so"), libdir.join("libasdf.so.0.0.0")).unwrap();
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
