//! Lays out the functions that a short run touches (an open and one element, `info`) next to
//! each other in a binary, so that its first call faults in a few pages of code instead of
//! one per function (on a cold start the page faults cost more than the instructions). The
//! list is rust-lld's `--symbol-ordering-file`, recorded by `cargo xtask order-symbols`
//! under callgrind. Used by the build scripts of `xtask` and `asdf-cli` (`#[path]`).
//!
//! Applied only where rust-lld is certainly the linker (x86_64-unknown-linux-gnu with Rust
//! 1.90 or later and no linker chosen by configuration); elsewhere, or with
//! `ASDF_RS_NO_SYMBOL_ORDER` set, nothing changes. A stale list is harmless: names the
//! binary no longer has are skipped.

use std::path::PathBuf;

/// Passes `order_file` (relative to the package) to the linker of the package's binaries.
pub fn link(order_file: &str) {
    println!("cargo:rerun-if-changed={order_file}");
    for v in [
        "ASDF_RS_NO_SYMBOL_ORDER",
        "RUSTC_LINKER",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER",
    ] {
        println!("cargo:rerun-if-env-changed={v}");
    }
    let env = |k: &str| std::env::var(k).unwrap_or_default();
    if env("TARGET") != "x86_64-unknown-linux-gnu"
        || std::env::var_os("ASDF_RS_NO_SYMBOL_ORDER").is_some()
        || std::env::var_os("RUSTC_LINKER").is_some()
        || std::env::var_os("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER").is_some()
    {
        return;
    }
    let flags = env("CARGO_ENCODED_RUSTFLAGS");
    if ["linker", "link-self-contained", "fuse-ld", "link-args", "link-arg"]
        .iter()
        .any(|f| flags.contains(f))
    {
        return;
    }
    // rust-lld became the default linker of this target in Rust 1.90.
    let version = std::process::Command::new(std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()))
        .arg("-V")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .unwrap_or_default();
    let minor = version
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.split('.').nth(1))
        .and_then(|m| m.parse::<u32>().ok());
    if !version.starts_with("rustc 1.") || minor.is_none_or(|m| m < 90) {
        return;
    }
    let path = PathBuf::from(env("CARGO_MANIFEST_DIR")).join(order_file);
    let shown = path.to_string_lossy();
    if !path.is_file() || shown.contains(',') {
        return;
    }
    println!("cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={shown}");
    println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
}
