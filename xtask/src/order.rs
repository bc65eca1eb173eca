//! `cargo xtask order-symbols`: records, under callgrind, the functions that short runs of
//! the bench child and of `asdf-cli` execute, and writes them (in the order first met) as the
//! linkers' symbol ordering files (`xtask/open-path.order`, `crates/asdf-cli/open-path.order`;
//! see `build-support/symbol_order.rs`). Needs valgrind; run it in release (it re-runs itself
//! so) after changes that rename many functions, and commit the two files.

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};
use asdf::{AsdfFile, ByteOrder, Datatype, ScalarType, Version, WriteOptions};

/// Rust symbols of the functions one run of `exe ARGS` executes, in the order callgrind
/// names them (first call first, roughly).
fn executed(exe: &Path, args: &[&str], out: &Path) -> Result<Vec<String>> {
    let status = Command::new("valgrind")
        .args(["--tool=callgrind", "--demangle=no", "-q"])
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(exe)
        .args(args)
        .stdout(std::process::Stdio::null())
        .status()
        .context("valgrind (apt install valgrind)")?;
    if !status.success() {
        bail!("{} {} under callgrind: {status}", exe.display(), args.join(" "));
    }
    let text = std::fs::read_to_string(out)?;
    let mut names = Vec::new();
    for line in text.lines() {
        let rest = line.strip_prefix("fn=").or_else(|| line.strip_prefix("cfn="));
        // `fn=(12) name` names id 12 the first time; later lines repeat only `(12)`.
        if let Some((_, name)) = rest.and_then(|r| r.split_once(") "))
            && (name.starts_with("_ZN") || name.starts_with("_R"))
        {
            // Callgrind marks recursion depth as `name'2`.
            let name = match name.rsplit_once('\'') {
                Some((base, depth)) if depth.bytes().all(|b| b.is_ascii_digit()) => base,
                _ => name,
            };
            names.push(name.to_owned());
        }
    }
    Ok(names)
}

fn write_order(path: &str, runs: &[Vec<String>]) -> Result<usize> {
    let mut seen = HashSet::new();
    let mut text = String::new();
    for name in runs.iter().flatten() {
        if seen.insert(name.as_str()) {
            text.push_str(name);
            text.push('\n');
        }
    }
    std::fs::write(path, text)?;
    Ok(seen.len())
}

pub fn order_symbols(_args: &[String]) -> Result<()> {
    let dir = Path::new("target/order-symbols");
    std::fs::create_dir_all(dir)?;
    // A small file of the shape the bench opens (one float64 array at /data).
    let file = dir.join("small.asdf");
    let n = 1 << 16;
    let data: Vec<u8> = (0..n).flat_map(|i| (f64::from(i) * 0.5).to_le_bytes()).collect();
    let mut f = AsdfFile::new(Version::STANDARD_LATEST)?;
    f.put_array(
        "/data",
        asdf::NewArray::from_bytes(
            Datatype::Scalar(ScalarType::Float64),
            &[n as usize],
            ByteOrder::Little,
            data,
        ),
    )?;
    f.write(&file, &WriteOptions::default())?;
    let file_s = file.to_string_lossy().into_owned();
    let callgrind = dir.join("callgrind.out");

    let me = std::env::current_exe()?;
    let mut runs = Vec::new();
    for mode in ["element-lazy", "element", "element-novalidate", "element-default"] {
        runs.push(executed(&me, &["bench-child", mode, &file_s], &callgrind)?);
    }
    let count = write_order("xtask/open-path.order", &runs)?;
    println!("xtask/open-path.order: {count} functions");

    let cli = crate::bench::cli_exe()?;
    let mut runs = Vec::new();
    for cmd in ["info", "validate", "verify"] {
        runs.push(executed(&cli, &[cmd, &file_s], &callgrind)?);
    }
    let count = write_order("crates/asdf-cli/open-path.order", &runs)?;
    println!("crates/asdf-cli/open-path.order: {count} functions");
    Ok(())
}
