//! The headers compile, each on its own and all together, as C11 (`-std=c11 -Wall -Wextra
//! -Werror`) and as C++17.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn include() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("include")
}

/// Every header, as `asdf/x.h` and `asdf/core/x.h`.
fn headers() -> Vec<String> {
    let mut out = Vec::new();
    for (dir, prefix) in [("asdf", "asdf/"), ("asdf/core", "asdf/core/")] {
        for e in std::fs::read_dir(include().join(dir)).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            if name.ends_with(".h") {
                out.push(format!("{prefix}{name}"));
            }
        }
    }
    out.sort();
    out
}

fn compile(compiler: &str, args: &[&str], source: &str, ext: &str) {
    let dir = std::env::temp_dir().join(format!("asdf-capi-headers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join(format!("t.{ext}"));
    std::fs::write(&src, source).unwrap();
    let o = Command::new(compiler)
        .args(args)
        .arg(format!("-I{}", include().display()))
        .arg("-c")
        .arg(&src)
        .arg("-o")
        .arg(dir.join("t.o"))
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        o.status.success(),
        "{compiler} {args:?} failed on:\n{source}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn every_header_compiles_alone_and_together_as_c11_and_cpp() {
    let hs = headers();
    assert!(hs.len() >= 19, "headers: {hs:?}");
    // (Not -pedantic: libasdf's emitter flags go up to bit 62, past ISO C's int enumerators, and
    // their values are the API.)
    let strict = ["-std=c11", "-Wall", "-Wextra", "-Werror"];
    for h in &hs {
        compile(
            "cc",
            &strict,
            &format!("#include <{h}>\nint main(void) {{ return 0; }}\n"),
            "c",
        );
    }
    let all: String = hs.iter().map(|h| format!("#include <{h}>\n")).collect();
    compile("cc", &strict, &format!("{all}int main(void) {{ return 0; }}\n"), "c");
    compile(
        "c++",
        &["-std=c++17", "-Wall", "-Wextra", "-Werror"],
        &format!("{all}int main() {{ return 0; }}\n"),
        "cpp",
    );
}
