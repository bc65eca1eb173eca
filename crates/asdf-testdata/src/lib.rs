//! Helpers for the workspace-level conformance suites: locating `../shared/conformance` and
//! listing its files. The suites themselves live in `tests/tests/`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `shared/conformance` directory beside the checkout, or `$ASDF_CONFORMANCE_DIR` (when
/// that variable is set, it alone is looked at: a path that is not a folder means "absent").
#[must_use]
pub fn find_conformance() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("ASDF_CONFORMANCE_DIR") {
        let d = PathBuf::from(d);
        return d.is_dir().then_some(d);
    }
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .map(|dir| dir.join("shared").join("conformance"))
        .find(|c| c.is_dir())
}

/// The conformance directory, for code that runs only once a test has checked it is there
/// (through [`conformance!`]).
///
/// # Panics
/// When it cannot be found.
#[must_use]
#[allow(clippy::panic)]
pub fn conformance_dir() -> PathBuf {
    find_conformance().unwrap_or_else(|| {
        panic!(
            "conformance data not found: expected shared/conformance beside the checkout (or set ASDF_CONFORMANCE_DIR)"
        )
    })
}

/// The variable that makes missing conformance data a failure (CI sets it).
pub const REQUIRE_VAR: &str = "ASDF_REQUIRE_CONFORMANCE";

/// The conformance directory, or `None` after one loud line on standard error naming the test
/// that did not run (written past the test harness's capture, so it shows in a passing run).
///
/// # Panics
/// When the data is missing and `ASDF_REQUIRE_CONFORMANCE` is set (as CI sets it).
#[must_use]
#[allow(clippy::panic)]
pub fn conformance_or_skip() -> Option<PathBuf> {
    use std::io::Write as _;
    if let Some(c) = find_conformance() {
        return Some(c);
    }
    // The test binary (`access-0123abcd` -> `access`) and the test's thread name.
    let binary = std::env::args()
        .next()
        .and_then(|a| Path::new(&a).file_stem().map(|s| s.to_string_lossy().into_owned()))
        .map(|s| s.rsplit_once('-').map_or(s.clone(), |(name, _)| name.to_owned()))
        .unwrap_or_default();
    let test = format!("{binary}::{}", std::thread::current().name().unwrap_or("a test"));
    if std::env::var_os(REQUIRE_VAR).is_some() {
        panic!(
            "{test}: conformance data not found (shared/conformance beside the checkout or ASDF_CONFORMANCE_DIR) and {REQUIRE_VAR} is set"
        );
    }
    let _ = writeln!(
        std::io::stderr().lock(),
        "NOT RUN: {test} (needs ../shared/conformance beside the checkout or ASDF_CONFORMANCE_DIR)"
    );
    None
}

/// `let c = asdf_testdata::conformance!();` at the top of a test that reads the conformance
/// data: the directory, or an early return after one loud line when it is absent (a failure
/// when `ASDF_REQUIRE_CONFORMANCE` is set).
#[macro_export]
macro_rules! conformance {
    () => {
        match $crate::conformance_or_skip() {
            Some(c) => c,
            None => return,
        }
    };
}

/// Every file under `dir` whose name ends with `ext`, sorted.
#[must_use]
pub fn files_with_ext(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().and_then(|x| x.to_str()) == Some(ext) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// `asdf_testdata::needs_conformance!();` as the first line of a test that reads the
/// conformance data (directly or through helpers): an early return after one loud line when it
/// is absent (a failure when `ASDF_REQUIRE_CONFORMANCE` is set).
#[macro_export]
macro_rules! needs_conformance {
    () => {
        if $crate::conformance_or_skip().is_none() {
            return;
        }
    };
}

/// The workspace's root folder.
#[must_use]
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Python with asdf 6.0.0 for the interop suites: `$ASDF_PYTHON`, or `target/pyenv`,
/// made from `tests/interop/requirements.txt` on first use (and again when they change).
///
/// # Panics
/// When Python or PyPI cannot be reached: those suites must never be skipped silently.
pub fn interop_python() -> PathBuf {
    static PY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PY.get_or_init(make_python).clone()
}

/// A Python with asdf 2.15 (the last with `asdf.fits_embed`, which wrote ASDF in FITS in both
/// forms) in a venv of its own, `target/pyenv-asdf215`, made on first use from
/// `tests/interop/requirements-asdf215.txt` (or `$ASDF_PYTHON_215`).
///
/// # Panics
/// As [`interop_python`].
#[must_use]
pub fn asdf215_python() -> PathBuf {
    static PY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PY.get_or_init(|| {
        if let Some(p) = std::env::var_os("ASDF_PYTHON_215") {
            return PathBuf::from(p);
        }
        make_venv("target/pyenv-asdf215", "tests/interop/requirements-asdf215.txt")
    })
    .clone()
}

fn make_python() -> PathBuf {
    if let Some(p) = std::env::var_os("ASDF_PYTHON") {
        return PathBuf::from(p);
    }
    make_venv("target/pyenv", "tests/interop/requirements.txt")
}

#[allow(clippy::panic, clippy::unwrap_used)]
fn make_venv(dir: &str, requirements: &str) -> PathBuf {
    let venv = workspace_root().join(dir);
    let py = venv.join("bin/python");
    let ready = venv.join(".ready");
    let req = workspace_root().join(requirements);
    let wanted = std::fs::read(&req).unwrap();
    // The marker holds the requirements it was made for: new requirements install again.
    if std::fs::read(&ready).ok().as_deref() != Some(wanted.as_slice()) {
        let ok = py.exists()
            || Command::new("python3")
                .args(["-m", "venv"])
                .arg(&venv)
                .status()
                .is_ok_and(|s| s.success());
        assert!(
            ok,
            "interop suite: cannot create a Python venv with `python3 -m venv` (is python3 installed?)"
        );
        let ok = Command::new(&py)
            .args(["-m", "pip", "install", "-q", "-r"])
            .arg(&req)
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            ok,
            "interop suite: `pip install -r {}` failed (PyPI reachable?)",
            req.display()
        );
        std::fs::write(&ready, &wanted).unwrap();
    }
    py
}

/// FITS files built card by card, for the tests and the fuzz seeds.
pub mod fits {
    /// A header of `cards` (each padded to 80 characters) and END, padded to 2880 bytes.
    #[must_use]
    pub fn header(cards: &[String]) -> Vec<u8> {
        let mut v = Vec::new();
        for c in cards.iter().map(String::as_str).chain(["END"]) {
            let mut line = c.as_bytes().to_vec();
            line.resize(80, b' ');
            v.extend_from_slice(&line);
        }
        v.resize(v.len().div_ceil(2880) * 2880, b' ');
        v
    }

    /// `bytes` padded with zeros to whole 2880-byte blocks (an HDU's data).
    #[must_use]
    pub fn padded(bytes: &[u8]) -> Vec<u8> {
        let mut v = bytes.to_vec();
        v.resize(v.len().div_ceil(2880) * 2880, 0);
        v
    }

    /// A value card: the keyword, `= `, the value right-aligned in 20 columns.
    #[must_use]
    pub fn card(key: &str, value: &str) -> String {
        format!("{key:<8}= {value:>20}")
    }

    /// A FITS file of a primary HDU, an IMAGE `SCI` of 3 x 4 float32 (0 to 11), and `asdf` as
    /// the data of an `ASDF` IMAGE HDU (Appendix A's form).
    #[must_use]
    pub fn with_asdf_image(asdf: &[u8]) -> Vec<u8> {
        let mut f = header(&[
            card("SIMPLE", "T"),
            card("BITPIX", "8"),
            card("NAXIS", "0"),
            card("EXTEND", "T"),
        ]);
        f.extend(header(&[
            "XTENSION= 'IMAGE   '".to_owned(),
            card("BITPIX", "-32"),
            card("NAXIS", "2"),
            card("NAXIS1", "4"),
            card("NAXIS2", "3"),
            card("PCOUNT", "0"),
            card("GCOUNT", "1"),
            "EXTNAME = 'SCI     '".to_owned(),
        ]));
        f.extend(padded(
            &(0..12u8).flat_map(|i| f32::from(i).to_be_bytes()).collect::<Vec<u8>>(),
        ));
        f.extend(header(&[
            "XTENSION= 'IMAGE   '".to_owned(),
            card("BITPIX", "8"),
            card("NAXIS", "1"),
            card("NAXIS1", &asdf.len().to_string()),
            card("PCOUNT", "0"),
            card("GCOUNT", "1"),
            "EXTNAME = 'ASDF    '".to_owned(),
        ]));
        f.extend(padded(asdf));
        f
    }
}
