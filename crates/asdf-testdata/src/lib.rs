//! Helpers for the workspace-level conformance suites: locating `../shared/conformance` and
//! listing its files. The suites themselves live in `tests/tests/`.

use std::path::{Path, PathBuf};

/// The `shared/conformance` directory beside the checkout, or `$ASDF_CONFORMANCE_DIR`.
///
/// # Panics
/// When it cannot be found: the suites must never be skipped silently.
#[must_use]
#[allow(clippy::panic)]
pub fn conformance_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("ASDF_CONFORMANCE_DIR") {
        return PathBuf::from(d);
    }
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    for dir in here.ancestors() {
        let c = dir.join("shared").join("conformance");
        if c.is_dir() {
            return c;
        }
    }
    panic!("conformance data not found: expected shared/conformance beside the checkout (or set ASDF_CONFORMANCE_DIR)");
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
