//! Project tasks: `cargo xtask <task>`.
#![allow(clippy::print_stdout)]

use anyhow::{Result, bail};

struct Task {
    name: &'static str,
    help: &'static str,
    run: fn(&[String]) -> Result<()>,
}

const TASKS: &[Task] = &[Task {
    name: "layout",
    help: "FILE...: print the header, tree bounds and blocks of ASDF files",
    run: layout,
}];

fn layout(args: &[String]) -> Result<()> {
    if args.is_empty() {
        bail!("usage: cargo xtask layout FILE...");
    }
    for path in args {
        let r = asdf_layout::Reader::open_path(path)?;
        println!(
            "{path}: {} bytes, standard {}",
            r.file_len(),
            r.file_header().standard_version
        );
        for i in 0..r.block_count() {
            let b = r.block(i)?;
            println!(
                "  block {i} at {}: {} {} -> {}",
                b.offset,
                b.compression(),
                b.stored_len,
                b.data_len()
            );
        }
        for w in r.warnings() {
            println!("  warning: {w}");
        }
    }
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(name) = args.first() else {
        println!("cargo xtask <task>\n");
        for t in TASKS {
            println!("  {:<12} {}", t.name, t.help);
        }
        return Ok(());
    };
    match TASKS.iter().find(|t| t.name == name) {
        Some(t) => (t.run)(&args[1..]),
        None => bail!("unknown task `{name}`; run `cargo xtask` for the list"),
    }
}
