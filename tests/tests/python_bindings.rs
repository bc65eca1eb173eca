//! The Python package `asdf_rs` (crates/asdf-python): built with maturin into the interop
//! venv, then its pytest suite: the conformance corpora against Python asdf 6.0, writing and
//! reading both ways, remote files on a range-counting HTTP server and on moto's S3 server,
//! and a dask.distributed LocalCluster over S3 (tests/interop/requirements.txt has them all).
#![allow(clippy::unwrap_used, clippy::panic)]

use std::process::Command;

#[test]
fn the_python_package_passes_its_pytest_suite() {
    let root = asdf_testdata::workspace_root();
    let py = asdf_testdata::interop_python();
    let venv = py.parent().and_then(|b| b.parent()).unwrap().to_path_buf();
    if let Some(dir) = prebuilt() {
        // CI built and installed the extension before the tests, with the test build's
        // dependencies (`.ci/run`): cargo holds the workspace's target folder while tests run.
        println!(
            "the extension as installed before the tests (wheel in {})",
            dir.display()
        );
    } else {
        // Its own target folder: this test runs while cargo holds the workspace's.
        let build = maturin(&py, &venv, &["develop", "-q"]);
        assert!(build, "maturin develop failed");
    }

    let mut cmd = Command::new(&py);
    cmd.args([
        "-m",
        "pytest",
        "-q",
        "-rA",
        "-s",
        "-p",
        "no:cacheprovider",
        "-W",
        "ignore::DeprecationWarning",
    ])
    .arg(root.join("crates/asdf-python/tests"))
    .current_dir(root.join("crates/asdf-python"));
    // The CLI beside this test's binary (`cargo test --workspace` builds it first): the suite
    // verifies a prefix of object storage with it.
    if let Some(cli) = std::env::current_exe()
        .ok()
        .and_then(|t| t.parent().and_then(|deps| deps.parent()).map(|d| d.join("asdf-cli")))
        .filter(|c| c.exists())
    {
        cmd.env("ASDF_CLI", cli);
    }
    match asdf_testdata::conformance_or_skip() {
        Some(dir) => {
            cmd.env("ASDF_CONFORMANCE_DIR", dir);
        }
        None => {
            // conformance_or_skip printed the loud line; pytest skips (and names) the corpus test.
            cmd.env("ASDF_CONFORMANCE_DIR", root.join("target/no-conformance-here"));
        }
    }
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    println!("{text}");
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "pytest failed");
    let summary = text.lines().rev().find(|l| l.contains(" passed")).unwrap_or_default();
    assert!(summary.contains("passed"), "no pytest summary: {summary}");
    if text.contains("NOT RUN") {
        println!("NOT RUN: the asdf_rs corpus suite (conformance data missing)");
    }
}

/// The package as a user installs it: `maturin build` makes an abi3 wheel (one wheel for
/// CPython 3.11 and later), which installs with pip into a fresh virtual environment (numpy
/// from the package index) and reads a file there, with its xarray entry point declared.
#[test]
fn the_abi3_wheel_installs_in_a_fresh_venv() {
    let root = asdf_testdata::workspace_root();
    let py = asdf_testdata::interop_python();
    let venv_dir = py.parent().and_then(|b| b.parent()).unwrap().to_path_buf();
    let out = root.join("target/wheels-test");
    let _ = std::fs::remove_dir_all(&out);
    // CI made the wheel before the tests (see the pytest suite's test); else it is made here,
    // with the same profile and target folder as the pytest suite's build: cargo reuses it.
    let wheel_dir = match prebuilt() {
        Some(dir) => dir,
        None => {
            let build = maturin(&py, &venv_dir, &["build", "-q", "-o", &out.to_string_lossy()]);
            assert!(build, "maturin build failed");
            out.clone()
        }
    };
    std::fs::create_dir_all(&out).unwrap();
    let wheels: Vec<_> = std::fs::read_dir(&wheel_dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "whl"))
        .collect();
    assert_eq!(wheels.len(), 1, "{wheels:?}");
    let name = wheels[0].file_name().unwrap().to_string_lossy().to_string();
    assert!(name.contains("-cp311-abi3-"), "not an abi3 wheel: {name}");
    let fresh = out.join("venv");
    // The interpreter the interop venv was made from: a plain venv of it, nothing installed.
    let base: String = String::from_utf8(
        Command::new(&py)
            .args(["-c", "import sys; print(sys._base_executable)"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .trim()
    .to_owned();
    assert!(
        Command::new(&base)
            .args(["-m", "venv"])
            .arg(&fresh)
            .status()
            .unwrap()
            .success()
    );
    let pip = Command::new(fresh.join("bin/python"))
        .args(["-m", "pip", "install", "-q"])
        .arg(&wheels[0])
        .status()
        .unwrap();
    assert!(pip.success(), "pip install of {name} failed");
    let check = Command::new(fresh.join("bin/python"))
        .args([
            "-c",
            "import asdf_rs, numpy as np, importlib.metadata as m, os, tempfile\n\
             p = os.path.join(tempfile.mkdtemp(), 'x.asdf')\n\
             asdf_rs.write(p, {'a': np.arange(10.0)}, compression='zstd')\n\
             with asdf_rs.open(p) as f: assert f['/a'].sum() == 45.0\n\
             eps = [e.name for e in m.entry_points(group='xarray.backends')]\n\
             assert 'asdf_rs' in eps, eps\n\
             print('wheel ok', asdf_rs.__version__)",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&check.stdout);
    println!("{name}: {text}{}", String::from_utf8_lossy(&check.stderr));
    assert!(check.status.success() && text.contains("wheel ok"));
}

/// The folder of the wheel CI built, and installed in the interop venv, before the tests
/// (`ASDF_PYEXT_PREBUILT`, set by `.ci/run`), when it is set.
fn prebuilt() -> Option<std::path::PathBuf> {
    let dir = std::path::PathBuf::from(std::env::var_os("ASDF_PYEXT_PREBUILT")?);
    assert!(dir.is_dir(), "ASDF_PYEXT_PREBUILT={} is not a folder", dir.display());
    Some(dir)
}

/// `python -m maturin ARGS` on the extension with the pyext profile in target/pyext, the venv
/// of `py` first on the PATH; whether it succeeded.
fn maturin(py: &std::path::Path, venv: &std::path::Path, args: &[&str]) -> bool {
    let root = asdf_testdata::workspace_root();
    Command::new(py)
        .args(["-m", "maturin"])
        .args(args)
        .args(["--profile", "pyext", "-m"])
        .arg(root.join("crates/asdf-python/Cargo.toml"))
        .env("VIRTUAL_ENV", venv)
        .env("CARGO_TARGET_DIR", root.join("target/pyext"))
        .env(
            "PATH",
            format!(
                "{}:{}",
                venv.join("bin").display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .status()
        .unwrap()
        .success()
}
