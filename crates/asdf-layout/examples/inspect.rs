//! Prints the layout of ASDF files: header, comments, tree bounds, blocks (compression,
//! sizes, checksum convention) and any warnings.
//!
//! `cargo run --release -p asdf-layout --example inspect -- FILE...`

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;

use asdf_layout::{BlockDiscovery, MmapSource, Reader};

fn inspect(path: &str) -> Result<bool, asdf_layout::Error> {
    let r = Reader::open(MmapSource::open(path)?)?;
    let h = r.file_header();
    println!("{path}: {} bytes", r.file_len());
    println!(
        "  file format {}, ASDF Standard {}{}",
        h.format_version,
        h.standard_version,
        if h.standard_version_declared {
            ""
        } else {
            " (no #ASDF_STANDARD comment)"
        }
    );
    for c in &h.comments {
        println!("  #{c}");
    }
    match (r.tree_range(), r.tree_bytes()) {
        (Some(range), Some(tree)) => {
            println!(
                "  tree: bytes {}..{} ({} lines)",
                range.start,
                range.end,
                tree.split(|&b| b == b'\n').count() - 1
            );
            for line in String::from_utf8_lossy(tree).lines() {
                println!("  | {line}");
            }
        }
        _ => println!("  no tree"),
    }
    let how = match r.block_discovery() {
        BlockDiscovery::NoBlocks => "no blocks".to_owned(),
        BlockDiscovery::Index { offset } => format!("block index at byte {offset}"),
        BlockDiscovery::Scan => "found by scanning block headers".to_owned(),
        _ => "unknown".to_owned(),
    };
    println!("  {} block(s), {how}", r.block_count());
    let mut ok = true;
    for i in 0..r.block_count() {
        let b = r.block(i)?;
        let check = match r.verify_checksum(i) {
            Ok(s) => format!("{s:?}"),
            Err(e) => {
                ok = false;
                format!("ERROR {e}")
            }
        };
        println!(
            "  block {i} @ {}: compression {}, allocated {}, used {}, data {}{}; checksum {check}",
            b.offset,
            b.compression(),
            b.header.allocated_size,
            b.stored_len,
            b.data_len(),
            if b.header.is_streamed() { ", streamed" } else { "" },
        );
        if let Err(e) = r.read_data(i) {
            ok = false;
            println!("    cannot decode: {e}");
        }
    }
    for w in r.warnings() {
        println!("  warning: {w}");
    }
    Ok(ok)
}

fn main() -> ExitCode {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        eprintln!("usage: inspect FILE...");
        return ExitCode::from(2);
    }
    let mut code = ExitCode::SUCCESS;
    for f in &files {
        match inspect(f) {
            Ok(true) => {}
            Ok(false) => code = ExitCode::FAILURE,
            Err(e) => {
                eprintln!("{f}: {e}");
                code = ExitCode::FAILURE;
            }
        }
    }
    code
}
