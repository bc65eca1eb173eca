//! libasdf's own test suites, compiled unchanged against our headers and library.
//!
//! The suites come from libasdf's source archive in `../shared/conformance/other-impls/libasdf/`
//! (never copied into this project): unpacked into a temporary folder, each `test-*.c` that
//! uses only libasdf's public headers is compiled with munit and libasdf's `tests/util.c`
//! against `include/` here (libasdf's own headers are not on the include path) and linked to
//! `libasdf_capi.so`, then run; munit's report is counted and printed (the suites that do not
//! build yet say which functions they miss). Each suite must pass at least its floor.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{soname_dir, target_dir};

/// Each suite and the tests of it that pass at least (a suite passing fewer, or not building,
/// is a regression; raise the floor as more pass). Why the others fail: `README.md`.
const FLOORS: &[(&str, usize)] = &[
    ("test-version", 4),
    ("test-tag", 1),
    ("test-error", 3),
    ("test-value", 65),
    ("test-extension", 12),
    ("test-time", 4),
    ("test-core-extensions", 10),
    ("test-ndarray", 0),
];

/// One suite's outcome.
#[derive(Debug)]
struct Outcome {
    built: Result<(), String>,
    passed: usize,
    total: usize,
    failed: Vec<String>,
}

/// Unpacks libasdf's source and munit (its test framework, into `libasdf/tests/munit`).
fn unpack(conformance: &Path, work: &Path) -> PathBuf {
    let dir = conformance.join("other-impls/libasdf");
    for prefix in ["libasdf-", "munit-"] {
        let archive = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
            .unwrap_or_else(|| panic!("{prefix}*.tar.gz in {}", dir.display()));
        let st = Command::new("tar")
            .arg("xzf")
            .arg(&archive)
            .arg("-C")
            .arg(work)
            .status()
            .unwrap();
        assert!(st.success(), "tar failed on {}", archive.display());
    }
    work.join("libasdf")
}

fn run_suite(name: &str, lib: &Path, conformance: &Path, work: &Path) -> Outcome {
    let ours = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let target = target_dir();
    // The suites include <libfyaml.h> without using it: an empty header stands in for it
    // (libfyaml is libasdf's YAML library, not ours). `tests/util.c` includes the
    // `config.h` libasdf's build generates: ours says only what util.c asks (no libstatgrab,
    // so its total-memory helper gives 0).
    let shim = work.join("shim");
    std::fs::create_dir_all(&shim).unwrap();
    std::fs::write(shim.join("libfyaml.h"), "/* not used by the public-header suites */\n").unwrap();
    std::fs::write(shim.join("config.h"), "#include <asdf/config.h>\n").unwrap();
    // The library's soname is libasdf's (libasdf.so.0.0.0): the programs load it by that
    // name, from a folder where it is a link to the build's libasdf_capi.so.
    let libdir = soname_dir(work);
    let tmp = work.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let exe = work.join(name);
    let tests = lib.join("tests");
    let out = Command::new("cc")
        .arg("-std=gnu11")
        .arg("-g")
        .arg(format!("-I{}", ours.display()))
        .arg(format!("-I{}", shim.display()))
        .arg(format!("-I{}", tests.display()))
        .arg(format!(
            "-DREFERENCE_FILES_DIR=\"{}\"",
            conformance.join("asdf-standard/reference_files").display()
        ))
        .arg(format!("-DFIXTURES_DIR=\"{}\"", tests.join("fixtures").display()))
        .arg(format!("-DTEMP_DIR=\"{}\"", tmp.display()))
        .arg(tests.join(format!("{name}.c")))
        .arg(tests.join("util.c"))
        .arg(tests.join("munit/munit.c"))
        .arg(format!("-L{}", target.display()))
        .arg("-lasdf_capi")
        .arg(format!("-Wl,-rpath,{}", libdir.display()))
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        // The missing functions, or the first errors.
        let mut missing: Vec<&str> = err
            .lines()
            .filter_map(|l| l.split("undefined reference to `").nth(1))
            .map(|s| s.trim_end_matches('\''))
            .collect();
        missing.sort_unstable();
        missing.dedup();
        let why = if missing.is_empty() {
            err.lines()
                .filter(|l| l.contains("error"))
                .take(5)
                .collect::<Vec<_>>()
                .join("\n    ")
        } else {
            format!("{} functions missing: {}", missing.len(), missing.join(", "))
        };
        return Outcome {
            built: Err(why),
            passed: 0,
            total: 0,
            failed: Vec::new(),
        };
    }
    let run = Command::new(&exe).current_dir(work).output().unwrap();
    let text = String::from_utf8_lossy(&run.stdout).into_owned() + &String::from_utf8_lossy(&run.stderr);
    // munit's lines: "/suite/test_name   [ OK    ] ..." and "[ ERROR ]", "[ FAIL  ]".
    let mut passed = 0;
    let mut total = 0;
    let mut failed = Vec::new();
    for line in text.lines() {
        let Some((test, rest)) = line.split_once('[') else {
            continue;
        };
        let test = test.trim();
        let status = rest.trim_start();
        // (Backtraces of crashed tests also start with `/`.)
        if !test.starts_with('/') || !["OK", "ERROR", "FAIL", "SKIP"].iter().any(|s| status.starts_with(s)) {
            continue;
        }
        total += 1;
        if rest.trim_start().starts_with("OK") {
            passed += 1;
        } else {
            failed.push(format!("{test} [{}", rest.trim()));
        }
    }
    if total == 0 {
        failed.push(format!(
            "no munit report (exit {:?}): {}",
            run.status.code(),
            text.trim()
        ));
    }
    Outcome {
        built: Ok(()),
        passed,
        total,
        failed,
    }
}

#[test]
fn libasdf_public_header_suites_against_ours() {
    let conformance = asdf_testdata::conformance!();
    let work = std::env::temp_dir().join(format!("asdf-capi-suites-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let lib = unpack(&conformance, &work);
    let mut regressions = Vec::new();
    for (name, floor) in FLOORS {
        let o = run_suite(name, &lib, &conformance, &work);
        match &o.built {
            Ok(()) => eprintln!("libasdf {name}: {} of {} tests pass", o.passed, o.total),
            Err(why) => eprintln!("libasdf {name}: NOT BUILT against ours yet: {why}"),
        }
        for f in &o.failed {
            eprintln!("    {f}");
        }
        if *floor > 0 && (o.built.is_err() || o.passed < *floor) {
            regressions.push(format!("{name}: {} passed, at least {floor} expected: {o:?}", o.passed));
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    assert!(
        regressions.is_empty(),
        "suites that must pass did not: {regressions:#?}"
    );
}
