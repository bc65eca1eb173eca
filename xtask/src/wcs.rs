//! `cargo xtask bench-wcs`: a 4096 x 4096 grid of pixel -> world through a NIRCam WCS (the one
//! gwcs's package ships: a polynomial distortion, v2v3, a rotation sequence to the sky), by
//! gwcs in Python, by asdf-wcs in Rust (a process of ours), and by asdf_rs's Python binding.
//! Each run is a fresh process; the grid is made and the WCS read before the clock starts;
//! the programs take turns; medians and peak RSS.

use std::process::Command;
use std::time::Instant;

use anyhow::{Context as _, Result, bail};
use asdf_wcs::WcsExt as _;

use crate::bench::{Run, parse_run};

/// The grid's side.
const N: usize = 4096;

/// `bench-wcs-child FILE N`: our evaluation in this process.
pub fn child(args: &[String]) -> Result<()> {
    let path = args.first().context("FILE")?;
    let n: usize = args.get(1).context("N")?.parse()?;
    let f = asdf::open(path)?;
    let w = f.wcs("/wcs")?;
    let mut x = Vec::with_capacity(n * n);
    let mut y = Vec::with_capacity(n * n);
    for r in 0..n {
        for c in 0..n {
            #[allow(clippy::cast_precision_loss)]
            {
                x.push(c as f64);
                y.push(r as f64);
            }
        }
    }
    let t = Instant::now();
    let world = w.pixel_to_world(&[&x, &y])?;
    let secs = t.elapsed().as_secs_f64();
    let check: f64 = world.iter().flatten().filter(|v| v.is_finite()).sum();
    let rss = std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .unwrap_or(0);
    println!("{{\"secs\": {secs}, \"rss_kib\": {rss}, \"check\": {check}, \"bytes\": 0}}");
    Ok(())
}

/// `bench-wcs [--runs N]`.
pub fn bench(args: &[String]) -> Result<()> {
    let mut runs = 5;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--runs" => runs = it.next().context("--runs N")?.parse()?,
            other => bail!("unknown argument {other}"),
        }
    }
    let py = crate::bench::python_exe()?;
    let out = Command::new(&py)
        .args([
            "-c",
            "import gwcs, pathlib; print(pathlib.Path(gwcs.__file__).parent / 'tests/data/nircamwcs.asdf')",
        ])
        .output()?;
    let file = String::from_utf8(out.stdout)?.trim().to_owned();
    if !std::path::Path::new(&file).is_file() {
        bail!("gwcs's NIRCam WCS file is missing (is gwcs installed in target/pyenv?)");
    }
    let side = N.to_string();
    let exe = std::env::current_exe()?;
    let ours = || -> Result<Run> {
        let o = Command::new(&exe).args(["bench-wcs-child", &file, &side]).output()?;
        parse_run(&o, "bench-wcs-child")
    };
    let python = |mode: &str| -> Result<Run> {
        let o = Command::new(&py)
            .args(["xtask/bench/wcs_child.py", mode, &file, &side])
            .output()?;
        parse_run(&o, &format!("wcs_child.py {mode}"))
    };
    let mut all: Vec<Vec<Run>> = vec![Vec::new(); 3];
    for _ in 0..runs {
        all[0].push(python("gwcs")?);
        all[1].push(ours()?);
        all[2].push(python("asdf_rs")?);
    }
    let med = |v: &mut Vec<Run>| -> Run {
        v.sort_by(|a, b| a.secs.total_cmp(&b.secs));
        v[v.len() / 2]
    };
    let (g, o, p) = (med(&mut all[0]), med(&mut all[1]), med(&mut all[2]));
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.abs();
    if !close(o.check, g.check) || !close(p.check, g.check) {
        bail!(
            "the world coordinates differ: gwcs {}, ours {}, asdf_rs {}",
            g.check,
            o.check,
            p.check
        );
    }
    println!(
        "bench-wcs: {N} x {N} pixels -> world, NIRCam's WCS (gwcs's test data), medians of {runs} runs taking turns"
    );
    println!("| program | seconds | vs gwcs | peak RSS MiB |");
    println!("|---|---|---|---|");
    #[allow(clippy::cast_precision_loss)]
    for (name, r) in [
        ("gwcs 1.0 (Python)", &g),
        ("asdf-wcs (Rust)", &o),
        ("asdf_rs.wcs (Python)", &p),
    ] {
        println!(
            "| {name} | {:.3} | {:.1}x | {:.0} |",
            r.secs,
            g.secs / r.secs,
            r.rss_kib as f64 / 1024.0
        );
    }
    Ok(())
}
