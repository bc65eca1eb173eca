//! `cargo xtask bench-cutout`: a 512 x 512 cutout of a 16384 x 16384 float32 image (1 GiB),
//! local and over HTTP on loopback, from the same image stored five ways: in 256 x 256 zstd
//! chunks as asdf-zarr writes them (read by us and by Python asdf + asdf-zarr), the same chunks
//! as a zarr-python directory store (read by zarr-python), one uncompressed block, one zstd
//! block (the whole-block decode a cutout costs without chunks), and a Blosc2 frame (4 MiB
//! chunks, written by us). Each run is a fresh process, timed from open to the cutout in
//! memory; the programs take turns. Bytes: what the process read from files (`rchar`), or over
//! HTTP what the server sent.

use std::io::BufRead as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context as _, Result, bail};

use crate::bench::{Run, parse_run as parse};

/// Where the cutout starts (row, column): not aligned with the chunks (it meets 9 of them).
const AT: (usize, usize) = (1000, 7000);

fn proc_value(file: &str, key: &str) -> u64 {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// `bench-cutout-child TARGET`: our cutout in this process.
pub fn child(args: &[String]) -> Result<()> {
    let target = args.first().context("TARGET")?;
    let region: asdf::Region = format!("{}:{}, {}:{}", AT.0, AT.0 + 512, AT.1, AT.1 + 512)
        .parse()
        .context("region")?;
    let before = proc_value("/proc/self/io", "rchar:");
    let t = Instant::now();
    let f = asdf::Open::path_or_url(target).validate(false).open()?;
    let cut = f.array("/image")?.read_region::<Vec<f32>>(&region)?;
    let secs = t.elapsed().as_secs_f64();
    let bytes = proc_value("/proc/self/io", "rchar:") - before;
    let check: f64 = cut.iter().map(|&v| f64::from(v)).sum();
    println!(
        "{{\"secs\": {secs}, \"rss_kib\": {}, \"check\": {check}, \"bytes\": {bytes}}}",
        proc_value("/proc/self/status", "VmHWM:")
    );
    Ok(())
}

/// The loopback range server (tests/servers/range_server.py) over `dir`.
struct Server {
    child: std::process::Child,
    port: u16,
}

impl Server {
    fn start(py: &Path, dir: &Path) -> Result<Self> {
        let mut child = Command::new(py)
            .arg("tests/servers/range_server.py")
            .arg(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().context("server stdout")?).read_line(&mut line)?;
        let port = line
            .strip_prefix("PORT ")
            .and_then(|p| p.trim().parse().ok())
            .context("server port")?;
        Ok(Self { child, port })
    }

    fn get(&self, path: &str) -> Result<serde_json::Value> {
        use std::io::{Read as _, Write as _};
        let mut s = std::net::TcpStream::connect(("127.0.0.1", self.port))?;
        write!(s, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")?;
        let mut text = String::new();
        s.read_to_string(&mut text)?;
        let body = text.split("\r\n\r\n").nth(1).unwrap_or_default();
        Ok(serde_json::from_str(body)?)
    }

    /// `run` with the server's counters zeroed first; its bytes are then what was served.
    fn counted(&self, run: impl FnOnce() -> Result<Run>) -> Result<Run> {
        self.get("/__reset__")?;
        let mut r = run()?;
        r.bytes = self.get("/__stats__")?["bytes"].as_u64().unwrap_or(0);
        Ok(r)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn bench(args: &[String]) -> Result<()> {
    let runs: usize = match args {
        [flag, n] if flag == "--runs" => n.parse()?,
        [] => 5,
        _ => bail!("usage: bench-cutout [--runs N]"),
    };
    let py = crate::bench::python_exe()?;
    let dir = Path::new("target/bench-data/cutout");
    let ready = dir.join(".ready");
    if !ready.exists() {
        println!("(writing the 1 GiB image five ways into {}: a minute)", dir.display());
        std::fs::create_dir_all(dir)?;
        let ok = Command::new(&py)
            .args(["xtask/bench/cutout.py", "make"])
            .arg(dir)
            .status()?
            .success();
        if !ok {
            bail!("cutout.py make failed");
        }
        // The Blosc2 frame (Python asdf writes none without an extension): ours, 1 MiB chunks.
        let raw = asdf::open(dir.join("raw.asdf"))?;
        let opts = asdf::WriteOptions::default().compression(asdf::Compression::All(asdf::Label::BLS2));
        raw.write(dir.join("bls2.asdf"), &opts)?;
        std::fs::write(&ready, b"ok")?;
    }
    let exe = std::env::current_exe()?;
    let ours = |target: &str| -> Result<Run> {
        let out = Command::new(&exe).args(["bench-cutout-child", target]).output()?;
        parse(&out, &format!("bench-cutout-child {target}"))
    };
    let (y, x) = (AT.0.to_string(), AT.1.to_string());
    let python = |mode: &str, target: &str| -> Result<Run> {
        let out = Command::new(&py)
            .args(["xtask/bench/cutout.py", mode, target, &y, &x])
            .output()?;
        parse(&out, &format!("cutout.py {mode} {target}"))
    };
    let server = Server::start(&py, dir)?;
    let url = |name: &str| format!("http://127.0.0.1:{}/{name}", server.port);
    let file = |name: &str| dir.join(name).to_string_lossy().into_owned();
    type Job<'a> = (
        &'static str,
        &'static str,
        &'static str,
        Box<dyn Fn() -> Result<Run> + 'a>,
    );
    let jobs: Vec<Job<'_>> = vec![
        (
            "asdf-zarr chunks (zstd 256x256)",
            "ours",
            "chunks",
            Box::new(|| ours(&file("zarr.asdf"))),
        ),
        (
            "asdf-zarr chunks (zstd 256x256)",
            "Python asdf 6.0 + asdf-zarr",
            "chunks",
            Box::new(|| python("asdf", &file("zarr.asdf"))),
        ),
        (
            "the same chunks as a Zarr store",
            "zarr-python 2.18",
            "chunks",
            Box::new(|| python("zarr", &file("store.zarr"))),
        ),
        (
            "one uncompressed block",
            "ours",
            "raw",
            Box::new(|| ours(&file("raw.asdf"))),
        ),
        (
            "one uncompressed block",
            "Python asdf 6.0",
            "raw",
            Box::new(|| python("asdf", &file("raw.asdf"))),
        ),
        (
            "Blosc2 frame (4 MiB chunks)",
            "ours",
            "bls2",
            Box::new(|| ours(&file("bls2.asdf"))),
        ),
        (
            "one zstd block (whole decode)",
            "ours",
            "zstd",
            Box::new(|| ours(&file("zstd.asdf"))),
        ),
        (
            "one zstd block (whole decode)",
            "Python asdf 6.0",
            "zstd",
            Box::new(|| python("asdf", &file("zstd.asdf"))),
        ),
        (
            "HTTP: asdf-zarr chunks",
            "ours",
            "http-chunks",
            Box::new(|| server.counted(|| ours(&url("zarr.asdf")))),
        ),
        (
            "HTTP: asdf-zarr chunks",
            "Python asdf 6.0 + asdf-zarr",
            "http-chunks",
            Box::new(|| server.counted(|| python("asdf", &url("zarr.asdf")))),
        ),
        (
            "HTTP: the same chunks as a Zarr store",
            "zarr-python 2.18 (fsspec)",
            "http-chunks",
            Box::new(|| server.counted(|| python("zarr", &url("store.zarr")))),
        ),
        (
            "HTTP: one uncompressed block",
            "ours",
            "http-raw",
            Box::new(|| server.counted(|| ours(&url("raw.asdf")))),
        ),
        (
            "HTTP: Blosc2 frame (4 MiB chunks)",
            "ours",
            "http-bls2",
            Box::new(|| server.counted(|| ours(&url("bls2.asdf")))),
        ),
    ];
    let mut all: Vec<Vec<Run>> = vec![Vec::new(); jobs.len()];
    for round in 0..runs {
        for ((what, who, _, job), out) in jobs.iter().zip(&mut all) {
            let r = job().with_context(|| format!("{what}, {who}, run {round}"))?;
            out.push(r);
        }
    }
    let check = all[0][0].check;
    println!(
        "\ncutout [{}:{}, {}:{}] of a 16384 x 16384 float32 image: medians of {runs} runs, taking turns",
        AT.0,
        AT.0 + 512,
        AT.1,
        AT.1 + 512
    );
    println!("\n| stored as | reader | time (s) | x ours on the same bytes | MiB read or fetched | peak RSS MiB |");
    println!("|---|---|---|---|---|---|");
    let mut ours_time = std::collections::HashMap::new();
    for ((what, who, group, _), runs) in jobs.iter().zip(&mut all) {
        if runs
            .iter()
            .any(|r| (r.check - check).abs() > 1e-6 * check.abs().max(1.0))
        {
            bail!(
                "{what}, {who}: the cutout's sum differs ({:?} vs {check})",
                runs.iter().map(|r| r.check).collect::<Vec<_>>()
            );
        }
        runs.sort_by(|a, b| a.secs.total_cmp(&b.secs));
        let m = runs[runs.len() / 2];
        let key = (*group).to_owned();
        if *who == "ours" {
            ours_time.insert(key.clone(), m.secs);
        }
        let ratio = ours_time
            .get(&key)
            .map_or("-".to_owned(), |o| format!("{:.1}x", m.secs / o));
        println!(
            "| {what} | {who} | {:.4} | {ratio} | {:.2} | {:.0} |",
            m.secs,
            m.bytes as f64 / 1048576.0,
            m.rss_kib as f64 / 1024.0
        );
    }
    drop(jobs);
    drop(server);
    Ok(())
}
