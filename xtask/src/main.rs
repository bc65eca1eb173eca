//! Project tasks: `cargo xtask <task>`.
#![allow(clippy::print_stdout)]

use anyhow::{Result, bail};

struct Task {
    name: &'static str,
    help: &'static str,
    run: fn(&[String]) -> Result<()>,
}

const TASKS: &[Task] = &[
    Task {
        name: "layout",
        help: "FILE...: print the header, tree bounds and blocks of ASDF files",
        run: layout,
    },
    Task {
        name: "bench-yaml",
        help: "[ROWS]: parse a generated ~20 MB tree with asdf-yaml and with PyYAML (CSafeLoader), side by side",
        run: bench_yaml,
    },
];

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn bench_yaml(args: &[String]) -> Result<()> {
    let rows: usize = args
        .first()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(78_000);
    let doc = asdf_yaml::sample::catalogue(rows);
    let text = asdf_yaml::emit(&doc, &asdf_yaml::EmitOptions::default())?;
    let dir = std::path::Path::new("target/bench");
    std::fs::create_dir_all(dir)?;
    let path = dir.join("catalogue.yaml");
    std::fs::write(&path, &text)?;
    let mb = text.len() as f64 / 1e6;
    println!("document: {rows} rows, {mb:.1} MB ({})", path.display());
    let mut ours = Vec::new();
    for _ in 0..5 {
        let t = std::time::Instant::now();
        let p = asdf_yaml::parse(&text, &asdf_yaml::Limits::default())?;
        ours.push(t.elapsed().as_secs_f64());
        std::hint::black_box(p);
    }
    let ours = median(ours);
    let mut ev = Vec::new();
    for _ in 0..3 {
        let t = std::time::Instant::now();
        let e = asdf_yaml::events::events(&text)?;
        ev.push(t.elapsed().as_secs_f64());
        std::hint::black_box(e);
    }
    let ev = median(ev);
    println!("libyaml-safer events: {:7.3} s  {:7.1} MB/s", ev, mb / ev);
    println!(
        "asdf-yaml parse:      {:7.3} s  {:7.1} MB/s",
        ours,
        mb / ours
    );
    let script = r#"
import sys, time, yaml
class Loader(yaml.CSafeLoader):
    pass
def tagged(loader, suffix, node):
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)
Loader.add_multi_constructor('tag:stsci.edu:asdf/', tagged)
text = open(sys.argv[1], 'rb').read()
ts = []
for _ in range(3):
    t = time.perf_counter(); yaml.load(text, Loader=Loader); ts.append(time.perf_counter() - t)
ts.sort(); print(ts[1])
"#;
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&path)
        .output()?;
    if !out.status.success() {
        bail!(
            "python3 with PyYAML is needed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let py: f64 = String::from_utf8_lossy(&out.stdout).trim().parse()?;
    println!("PyYAML CSafeLoader:   {:7.3} s  {:7.1} MB/s", py, mb / py);
    println!("ratio (PyYAML time / asdf-yaml time): {:.1}x", py / ours);
    Ok(())
}

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
