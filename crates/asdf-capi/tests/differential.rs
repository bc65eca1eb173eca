//! The same C program (`tests/c/walk.c`: every value of a file's tree, its path, type, tag and
//! value as its type) built against libasdf and against this library gives the same output
//! over the ASDF Standard's reference files.
//!
//! libasdf is built from `../shared/conformance/other-impls/libasdf/` by its `build.sh`
//! (`.ci/run` does it and sets `ASDF_LIBASDF_PREFIX`; here it is built into
//! `target/libasdf-ref` when cmake is there). One difference is libasdf's and is normalised:
//! the children of the root have paths starting `//` there (`//a`), while the same value
//! looked up by path has `/a` in libasdf too (any file shows it, e.g. `1.0.0/anchor.asdf`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn target_dir() -> PathBuf {
    // `cargo test` leaves the library beside the test binary (in `deps/`); `cargo build` puts a
    // copy one folder up, possibly older: the one in `deps/` first.
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap().to_path_buf();
    if deps.join("libasdf_capi.so").exists() {
        deps
    } else {
        deps.parent().unwrap().to_path_buf()
    }
}

/// libasdf's install prefix, building it when it is not there; `None` (said) when it cannot
/// be built here.
fn libasdf(conformance: &Path) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("ASDF_LIBASDF_PREFIX") {
        return Some(PathBuf::from(p));
    }
    let root = asdf_testdata::workspace_root();
    let prefix = root.join("target/libasdf-ref");
    if prefix.join("lib/libasdf.so").exists() {
        return Some(prefix);
    }
    let st = Command::new("bash")
        .arg(conformance.join("other-impls/libasdf/build.sh"))
        .arg(&prefix)
        .arg(root.join("target/libasdf-build"))
        .output();
    match st {
        Ok(o) if o.status.success() => Some(prefix),
        Ok(o) => {
            let why = String::from_utf8_lossy(&o.stderr)
                .lines()
                .last()
                .unwrap_or("")
                .to_owned();
            if std::env::var_os("ASDF_REQUIRE_LIBASDF").is_some() {
                panic!("libasdf could not be built ({why}) and ASDF_REQUIRE_LIBASDF is set");
            }
            eprintln!(
                "NOT RUN: differential::walk_agrees_with_libasdf (libasdf's build.sh failed: {why}; it needs cmake and Debian's libstatgrab-dev libmd-dev liblz4-dev libbz2-dev zlib1g-dev)"
            );
            None
        }
        Err(e) => panic!("bash: {e}"),
    }
}

fn build(out: &Path, include: &Path, libdir: &Path, lib: &str, rpath: &Path) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/walk.c");
    let o = Command::new("cc")
        .args(["-std=gnu11", "-Wall", "-Wextra", "-Werror", "-O1"])
        .arg(format!("-I{}", include.display()))
        .arg(&src)
        .arg(format!("-L{}", libdir.display()))
        .arg(format!("-l{lib}"))
        .arg(format!("-Wl,-rpath,{}", rpath.display()))
        .arg("-o")
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "cc failed: {}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn walk_agrees_with_libasdf() {
    let conformance = asdf_testdata::conformance!();
    let Some(prefix) = libasdf(&conformance) else { return };
    let work = std::env::temp_dir().join(format!("asdf-capi-diff-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let libdir = work.join("lib");
    std::fs::create_dir_all(&libdir).unwrap();
    let target = target_dir();
    let link = libdir.join("libasdf.so.0.0.0");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(target.join("libasdf_capi.so"), &link).unwrap();
    let theirs = work.join("walk-libasdf");
    let ours = work.join("walk-ours");
    build(
        &theirs,
        &prefix.join("include"),
        &prefix.join("lib"),
        "asdf",
        &prefix.join("lib"),
    );
    build(
        &ours,
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("include"),
        &target,
        "asdf_capi",
        &libdir,
    );
    let files = asdf_testdata::files_with_ext(&conformance.join("asdf-standard/reference_files"), "asdf");
    assert!(files.len() > 50, "the reference files: {}", files.len());
    let run = |exe: &Path| -> String {
        let o = Command::new(exe).args(&files).output().unwrap();
        assert!(
            o.status.success(),
            "{} failed: {}",
            exe.display(),
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap()
    };
    let (a, b) = (run(&theirs), run(&ours));
    let mut normalised = 0;
    let a: Vec<String> = a
        .lines()
        .map(|l| match l.strip_prefix("//") {
            Some(rest) => {
                normalised += 1;
                format!("/{rest}")
            }
            None => l.to_owned(),
        })
        .collect();
    let b: Vec<&str> = b.lines().collect();
    let diffs: Vec<String> = a
        .iter()
        .zip(&b)
        .filter(|(x, y)| x.as_str() != **y)
        .take(20)
        .map(|(x, y)| format!("libasdf: {x}\n   ours: {y}"))
        .collect();
    eprintln!(
        "walk differential: {} files, {} lines compared ({} values), {} libasdf root-child paths normalised, {} differences",
        files.len(),
        a.len(),
        a.iter().filter(|l| l.starts_with('/')).count(),
        normalised,
        diffs.len()
    );
    let _ = std::fs::remove_dir_all(&work);
    assert_eq!(a.len(), b.len(), "the outputs differ in length");
    assert!(diffs.is_empty(), "differences:\n{}", diffs.join("\n"));
}
