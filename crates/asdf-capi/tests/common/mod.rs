//! What the C API's tests share: where the library under test is, and a folder where it is
//! found under libasdf's soname.

use std::path::{Path, PathBuf};

/// The folder of the library under test: `cargo test` leaves it beside the test binary (in
/// `deps/`); `cargo build` puts a copy one folder up, possibly older: the one in `deps/` first.
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap().to_path_buf();
    if deps.join("libasdf_capi.so").exists() {
        deps
    } else {
        deps.parent().unwrap().to_path_buf()
    }
}

/// `dir/lib`, made, holding `libasdf.so.0.0.0` (the library's soname, which the programs built
/// against it load) as a link to the library under test.
pub fn soname_dir(dir: &Path) -> PathBuf {
    let lib = dir.join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    let link = lib.join("libasdf.so.0.0.0");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(target_dir().join("libasdf_capi.so"), &link).unwrap();
    lib
}
