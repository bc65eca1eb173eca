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

mod common;
use common::{soname_dir, target_dir};

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
                "NOT RUN: differential::walk_and_arrays_agree_with_libasdf (libasdf's build.sh failed: {why}; it needs cmake and Debian's libstatgrab-dev libmd-dev liblz4-dev libbz2-dev zlib1g-dev)"
            );
            None
        }
        Err(e) => panic!("bash: {e}"),
    }
}

fn build(src: &str, out: &Path, include: &Path, libdir: &Path, lib: &str, rpath: &Path) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c").join(src);
    let o = Command::new("cc")
        .args(["-std=gnu11", "-Wall", "-Wextra", "-Werror", "-O1"])
        .arg(format!("-I{}", include.display()))
        .arg(&src)
        .arg(format!("-L{}", libdir.display()))
        .arg(format!("-l{lib}"))
        .arg("-lm")
        .arg(format!("-Wl,-rpath,{}", rpath.display()))
        .arg("-o")
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "cc failed: {}", String::from_utf8_lossy(&o.stderr));
}

/// A line of libasdf's output as ours reads it, where libasdf contradicts itself or YAML: its
/// `//` for the root's children and its quoted keys (`/"datatype<c16"`, from its find iterator
/// only) made plain; the non-specific tag `!` that libasdf reports as the `!` handle's prefix
/// (`tag:stsci.edu:asdf/`; YAML and PyYAML: `!`).
fn normalise(line: &str) -> String {
    let line = line.replace("\ttag:stsci.edu:asdf/\t", "\t!\t");
    let line = line
        .strip_prefix("//")
        .map_or_else(|| line.clone(), |rest| format!("/{rest}"));
    match line.strip_prefix("/\"") {
        Some(rest) => match rest.split_once('"') {
            Some((key, tail)) => format!("/{key}{tail}"),
            None => line,
        },
        None => line,
    }
}

/// Arrays libasdf reads wrongly or not at all, each shown by the file named, where ours gives
/// what the standard and Python asdf give: (file, array path, why).
const LIBASDF_DEFECTS: &[(&str, &str, &str)] = &[
    (
        "compressed.asdf",
        "/bzp2",
        "libasdf's element reads and typed whole reads of a compressed block read the compressed bytes",
    ),
    ("compressed.asdf", "/zlib", "as /bzp2"),
    (
        "shared.asdf",
        "/subset",
        "libasdf ignores the array's offset and strides (a view of another's block)",
    ),
    ("exploded.asdf", "/data", "libasdf does not read external blocks"),
    ("stream.asdf", "/my_stream", "libasdf does not read a streamed block"),
    // Python asdf's samples (`python-asdf-samples`).
    ("b_zlib.asdf", "/big", "as compressed.asdf /bzp2 (zlib)"),
    ("b_zlib.asdf", "/data", "as compressed.asdf /bzp2 (zlib)"),
    ("b_bzp2.asdf", "/big", "as compressed.asdf /bzp2"),
    ("b_bzp2.asdf", "/data", "as compressed.asdf /bzp2"),
    ("b_lz4.asdf", "/big", "as compressed.asdf /bzp2 (lz4)"),
    ("b_lz4.asdf", "/data", "as compressed.asdf /bzp2 (lz4)"),
    ("v5_zlib.asdf", "/data", "as compressed.asdf /bzp2 (zlib)"),
    ("b_blsc.asdf", "/big", "libasdf does not decode blsc blocks"),
    ("b_blsc.asdf", "/data", "libasdf does not decode blsc blocks"),
    ("b_lz4f.asdf", "/big", "libasdf does not decode lz4f blocks"),
    ("b_lz4f.asdf", "/data", "libasdf does not decode lz4f blocks"),
    ("b_zstd.asdf", "/big", "libasdf does not decode zstd blocks"),
    ("b_zstd.asdf", "/data", "libasdf does not decode zstd blocks"),
    ("c_stream.asdf", "/stream", "libasdf does not read a streamed block"),
    ("d_exploded.asdf", "/a", "libasdf does not read external blocks"),
    ("d_exploded.asdf", "/b", "libasdf does not read external blocks"),
    ("f_shared_base.asdf", "/col", "as shared.asdf /subset (a strided view)"),
    ("f_shared_base.asdf", "/view", "as shared.asdf /subset (an offset view)"),
    ("v5_view.asdf", "/view", "as shared.asdf /subset (an offset view)"),
];

/// Runs both programs over the files: their outputs split per array (`== file` then each
/// array's lines), compared; the arrays of `LIBASDF_DEFECTS` are left out and counted.
fn compare(
    theirs: &Path,
    ours: &Path,
    files: &[PathBuf],
    defects: &[(&str, &str, &str)],
) -> (usize, usize, usize, Vec<String>) {
    let run = |exe: &Path| -> Vec<String> {
        let o = Command::new(exe).args(files).output().unwrap();
        assert!(
            o.status.success(),
            "{} failed: {}",
            exe.display(),
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap().lines().map(normalise).collect()
    };
    let (a, b) = (run(theirs), run(ours));
    // Blocks: the file, the entry (a line starting with `/`, or the file's line), its lines.
    let blocks = |lines: &[String]| -> Vec<(String, String, Vec<String>)> {
        let mut out: Vec<(String, String, Vec<String>)> = Vec::new();
        let mut file = String::new();
        for l in lines {
            if let Some(f) = l.strip_prefix("== ") {
                file = f.to_owned();
                out.push((file.clone(), String::new(), vec![l.clone()]));
            } else if l.starts_with('/') {
                let path = l.split([':', '\t']).next().unwrap_or_default().to_owned();
                out.push((file.clone(), path, vec![l.clone()]));
            } else if let Some(last) = out.last_mut() {
                last.2.push(l.clone());
            }
        }
        out
    };
    let (ba, bb) = (blocks(&a), blocks(&b));
    let mut diffs = Vec::new();
    let mut skipped = 0;
    let mut compared = 0;
    let mut values = 0;
    let mut j = 0;
    for (file, path, lines) in &ba {
        let defect = defects.iter().any(|(f, p, _)| f == file && p == path);
        // Ours may read entries libasdf cannot: find the same entry in ours.
        let Some(k) = bb[j..].iter().position(|(f, p, _)| f == file && p == path) else {
            diffs.push(format!("{file} {path}: missing from ours"));
            continue;
        };
        let theirs_lines = lines;
        let ours_lines = &bb[j + k].2;
        j += k + 1;
        if defect {
            skipped += 1;
            continue;
        }
        compared += 1;
        values += theirs_lines.len();
        if theirs_lines != ours_lines && diffs.len() < 20 {
            diffs.push(format!(
                "{file} {path}:\n  libasdf: {theirs_lines:?}\n     ours: {ours_lines:?}"
            ));
        }
    }
    (compared, values, skipped, diffs)
}

#[test]
fn walk_and_arrays_agree_with_libasdf() {
    let conformance = asdf_testdata::conformance!();
    let Some(prefix) = libasdf(&conformance) else { return };
    let work = std::env::temp_dir().join(format!("asdf-capi-diff-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let libdir = soname_dir(&work);
    let target = target_dir();
    let ours_include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let mut files = asdf_testdata::files_with_ext(&conformance.join("asdf-standard/reference_files"), "asdf");
    assert!(files.len() > 50, "the reference files: {}", files.len());
    let samples = asdf_testdata::files_with_ext(&conformance.join("python-asdf-samples"), "asdf");
    assert!(samples.len() > 20, "Python asdf's samples: {}", samples.len());
    files.extend(samples);
    let mut all_diffs = Vec::new();
    for program in ["walk", "arrays"] {
        let theirs = work.join(format!("{program}-libasdf"));
        let ours = work.join(format!("{program}-ours"));
        let src = format!("{program}.c");
        build(
            &src,
            &theirs,
            &prefix.join("include"),
            &prefix.join("lib"),
            "asdf",
            &prefix.join("lib"),
        );
        build(&src, &ours, &ours_include, &target, "asdf_capi", &libdir);
        let defects = if program == "arrays" { LIBASDF_DEFECTS } else { &[] };
        let (compared, lines, skipped, diffs) = compare(&theirs, &ours, &files, defects);
        eprintln!(
            "{program} differential: {} files, {compared} entries compared ({lines} lines), {skipped} left out as libasdf defects, {} differences",
            files.len(),
            diffs.len()
        );
        all_diffs.extend(diffs);
    }
    for (f, p, why) in LIBASDF_DEFECTS {
        eprintln!("  libasdf defect, left out: {f} {p}: {why}");
    }
    let _ = std::fs::remove_dir_all(&work);
    assert!(all_diffs.is_empty(), "differences:\n{}", all_diffs.join("\n"));
}

/// The same programs, built with AddressSanitizer (and its LeakSanitizer) against this library,
/// over every ASDF file of the conformance data (the standard's reference files, Python asdf's
/// samples, the legacy files, and the mutated and hostile ones): no report, no crash.
#[test]
fn the_programs_run_clean_under_sanitizers() {
    let conformance = asdf_testdata::conformance!();
    let work = std::env::temp_dir().join(format!("asdf-capi-asan-{}", std::process::id()));
    let libdir = soname_dir(&work);
    let target = target_dir();
    let files = asdf_testdata::files_with_ext(&conformance, "asdf");
    assert!(files.len() > 300, "conformance files: {}", files.len());
    for program in ["walk", "arrays"] {
        let exe = work.join(format!("{program}-asan"));
        let src = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/c")
            .join(format!("{program}.c"));
        let o = Command::new("cc")
            .args([
                "-std=gnu11",
                "-g",
                "-O1",
                "-fsanitize=address",
                "-fno-omit-frame-pointer",
            ])
            .arg(format!(
                "-I{}",
                Path::new(env!("CARGO_MANIFEST_DIR")).join("include").display()
            ))
            .arg(&src)
            .arg(format!("-L{}", target.display()))
            .args(["-lasdf_capi", "-lm"])
            .arg(format!("-Wl,-rpath,{}", libdir.display()))
            .arg("-o")
            .arg(&exe)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "cc -fsanitize=address failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let run = Command::new(&exe)
            .args(&files)
            .env("ASAN_OPTIONS", "detect_leaks=1:halt_on_error=1:abort_on_error=0")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&run.stderr);
        assert!(
            run.status.success() && !err.contains("Sanitizer"),
            "{program} under AddressSanitizer (exit {:?}): {}",
            run.status.code(),
            err.lines().take(30).collect::<Vec<_>>().join("\n")
        );
        eprintln!(
            "{program} under AddressSanitizer and LeakSanitizer: {} files, no report",
            files.len()
        );
    }
    let _ = std::fs::remove_dir_all(&work);
}
