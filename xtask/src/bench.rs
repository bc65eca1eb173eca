//! `cargo xtask bench`: workloads run side by side, each in a fresh child process (so peak
//! RSS is the workload's own), with this project and with Python asdf 6.0 where it applies.
//! Children print one line of JSON: seconds, peak RSS (VmHWM) and a check value that the
//! parent compares, so a fast wrong answer is caught. With `BENCH_SMAPS=1` a child also lists
//! its largest resident mappings on stderr (to see where its RSS goes).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use asdf::{AsdfFile, ByteOrder, Datatype, OpenOptions, ScalarType, Version, WriteOptions};

/// Peak resident set size of this process, KiB (VmHWM).
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn report(secs: f64, check: f64) {
    if std::env::var_os("BENCH_SMAPS").is_some() {
        // Resident KiB per mapping, largest first (to see where RSS goes).
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
        let mut name = String::new();
        let mut rows: Vec<(u64, String)> = Vec::new();
        for l in smaps.lines() {
            if l.contains('-') && !l.starts_with(|c: char| c.is_ascii_uppercase()) {
                name = l.split_whitespace().skip(5).collect::<Vec<_>>().join(" ");
            } else if let Some(v) = l.strip_prefix("Rss:") {
                let kib: u64 = v.trim().trim_end_matches(" kB").trim().parse().unwrap_or(0);
                rows.push((kib, name.clone()));
            }
        }
        rows.sort_by_key(|r| std::cmp::Reverse(r.0));
        for (k, n) in rows.iter().take(12) {
            eprintln!("{k:>8} KiB  {n}");
        }
    }
    println!(
        "{{\"secs\": {secs}, \"rss_kib\": {}, \"check\": {check}}}",
        peak_rss_kib()
    );
}

/// Minor page faults of this process so far (`BENCH_FAULTS=1`: the faults of a timed region,
/// to see how much of a cold open is the kernel mapping pages in).
fn minor_faults() -> i64 {
    // SAFETY: getrusage writes one `rusage` into the zeroed value it is given.
    unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &raw mut u);
        u.ru_minflt
    }
}

/// Elements of the 1 GiB float64 array: `i * 0.5`.
const BIG_ELEMENTS: usize = 1 << 27;

/// Elements of the codec workloads' int32 array (256 MiB).
const CODEC_ELEMENTS: usize = 1 << 26;

/// `(i % 1000)` plus 3 bits of noise (a multiplicative hash, the same in the Python child).
fn codec_value(i: usize) -> i32 {
    let noise = ((i as u64).wrapping_mul(2_654_435_761) >> 13) & 7;
    i32::try_from(i % 1000).unwrap_or(0) + i32::try_from(noise).unwrap_or(0)
}

/// 20,000 mappings of 5 keys (int, string, float, bool, null).
fn tree_rows() -> asdf::Node {
    use asdf::Node;
    Node::seq(
        (0..20_000i64)
            .map(|i| {
                Node::map(vec![
                    (Node::str("a"), Node::int(i)),
                    (Node::str("b"), Node::str(format!("row {i}"))),
                    (Node::str("c"), Node::float(0.5)),
                    (Node::str("d"), Node::bool(i % 2 == 0)),
                    (Node::str("e"), Node::null()),
                ])
            })
            .collect(),
    )
}

/// Scalar values under `n` (every node visited).
fn count_scalars(n: &asdf::Node) -> usize {
    let mut count = 0;
    let mut stack = vec![n];
    while let Some(n) = stack.pop() {
        match &n.kind {
            asdf::NodeKind::Mapping(m) => stack.extend(m.entries.iter().map(|(_, v)| v)),
            asdf::NodeKind::Sequence(s) => stack.extend(s.items.iter()),
            asdf::NodeKind::Scalar(_) => count += 1,
            asdf::NodeKind::Alias(_) => {}
        }
    }
    count
}

/// `bench-child WORKLOAD ARGS`: one workload in this process.
pub fn child(args: &[String]) -> Result<()> {
    let arg = |i: usize| args.get(i).cloned().unwrap_or_default();
    match arg(0).as_str() {
        "idle" => report(0.0, 0.0),
        "write" | "write-nochecksum" | "write-volatile" | "write-nochecksum-volatile" => {
            let n: usize = arg(2).parse().unwrap_or(BIG_ELEMENTS);
            let data: Vec<u8> = (0..n).flat_map(|i| (i as f64 * 0.5).to_le_bytes()).collect();
            let t = Instant::now();
            let mut f = AsdfFile::new(Version::STANDARD_LATEST)?;
            f.put_array(
                "/data",
                asdf::NewArray::from_bytes(Datatype::Scalar(ScalarType::Float64), &[n], ByteOrder::Little, data),
            )?;
            let mode = arg(0);
            let options = WriteOptions::default()
                .checksums(!mode.contains("nochecksum"))
                .durable(!mode.ends_with("volatile"));
            f.write(arg(1), &options)?;
            report(t.elapsed().as_secs_f64(), n as f64);
        }
        "sum" | "sum-default" => {
            let t = Instant::now();
            // `sum` maps the file (explicit); `sum-default` opens with the default options
            // (positioned reads: a file truncated by another process cannot crash the reader).
            let opts = if arg(0) == "sum" {
                OpenOptions::default().memmap(true)
            } else {
                OpenOptions::default()
            };
            let f = asdf::Open::path(arg(1)).options(opts).open()?;
            // Summed as numpy sums (several partial sums the compiler can vectorise).
            let mut lanes = [0.0f64; 8];
            f.array("/data").and_then(|a| {
                a.for_each_chunk::<f64>(|c| {
                    let mut it = c.chunks_exact(8);
                    for x in &mut it {
                        for (l, v) in lanes.iter_mut().zip(x) {
                            *l += v;
                        }
                    }
                    for (l, v) in lanes.iter_mut().zip(it.remainder()) {
                        *l += v;
                    }
                })
            })?;
            report(t.elapsed().as_secs_f64(), lanes.iter().sum());
        }
        "element" | "element-novalidate" | "element-default" => {
            let faults = std::env::var_os("BENCH_FAULTS").map(|_| minor_faults());
            let t = Instant::now();
            let opts = OpenOptions::default()
                .validate(arg(0) != "element-novalidate")
                .memmap(arg(0) != "element-default");
            let f = asdf::Open::path(arg(1)).options(opts.clone()).open()?;
            let n = f.array("/data").and_then(|a| a.view().cloned())?.shape[0];
            let e = f.array("/data").and_then(|a| a.element(&[n / 2 + 7]))?;
            let v = match e {
                asdf::Element::Float(x) => x,
                other => bail!("unexpected element {other:?}"),
            };
            let secs = t.elapsed().as_secs_f64();
            if let Some(before) = faults {
                // The same again, now that code and data are warm: what a cold open adds.
                eprintln!("page faults while timed: {}", minor_faults() - before);
                let again = Instant::now();
                let f = asdf::Open::path(arg(1)).options(opts).open()?;
                let opened = again.elapsed();
                let n = f.array("/data").and_then(|a| a.view().cloned())?.shape[0];
                f.array("/data").and_then(|a| a.element(&[n / 2 + 7]))?;
                eprintln!("warm: open {opened:?}, open + view + element {:?}", again.elapsed());
            }
            report(secs, v);
        }
        "cli" => {
            // A whole `asdf-cli` process (see `cli`): its time and peak RSS, not this one's.
            let rest: Vec<String> = args.iter().skip(2).cloned().collect();
            let (secs, rss, code) = run_whole(&arg(1), &rest)?;
            if code != 0 {
                bail!("{} {} exited with {code}", arg(1), rest.join(" "));
            }
            println!("{{\"secs\": {secs}, \"rss_kib\": {rss}, \"check\": {code}}}");
        }
        "element-lazy" => {
            let faults = std::env::var_os("BENCH_FAULTS").map(|_| minor_faults());
            let t = Instant::now();
            let opts = OpenOptions::default().validate(false).memmap(true);
            let f = asdf::Open::path(arg(1)).options(opts).open_lazy()?;
            let n = f.array("/data").and_then(|a| a.view().cloned())?.shape[0];
            let v = match f.array("/data").and_then(|a| a.element(&[n / 2 + 7]))? {
                asdf::Element::Float(x) => x,
                other => bail!("unexpected element {other:?}"),
            };
            let secs = t.elapsed().as_secs_f64();
            if let Some(before) = faults {
                eprintln!("page faults while timed: {}", minor_faults() - before);
            }
            report(secs, v);
        }
        "fits-element" | "fits-element-novalidate" => {
            // A JWST-style FITS file (stdatamodels' ImageModel): open, one element of SCI.
            let t = Instant::now();
            let opts = OpenOptions::default().validate(arg(0) == "fits-element").memmap(true);
            let f = asdf::Open::path(arg(1)).options(opts).open()?;
            let n = f.array("/data").and_then(|a| a.view().cloned())?.shape[0];
            let v = match f.array("/data").and_then(|a| a.element(&[n / 2, 7]))? {
                asdf::Element::Float(x) => x,
                other => bail!("unexpected element {other:?}"),
            };
            report(t.elapsed().as_secs_f64(), v);
        }
        "stream" => {
            // GiB streamed in 1 MiB writes of 128 rows x 1024 float64.
            let gib: u64 = arg(2).parse().unwrap_or(2);
            let t = Instant::now();
            let f = AsdfFile::new(Version::STANDARD_LATEST)?;
            let mut w = f.write_streamed(
                arg(1),
                "/data",
                Datatype::Scalar(ScalarType::Float64),
                &[1024],
                ByteOrder::Little,
                &WriteOptions::default(),
            )?;
            let mut chunk = vec![0u8; 1 << 20];
            for k in 0..gib * 1024 {
                for (i, c) in chunk.chunks_exact_mut(8).enumerate() {
                    c.copy_from_slice(&((k * 131_072 + i as u64) as f64).to_le_bytes());
                }
                w.write_rows(&chunk)?;
            }
            let rows = w.rows();
            w.finish()?;
            report(t.elapsed().as_secs_f64(), rows as f64);
        }
        "codec-write" | "codec-write-volatile" => {
            let durable = arg(0) == "codec-write";
            let label = asdf_layout::Label::from_name(&arg(2)).context("codec label")?;
            let data: Vec<u8> = (0..CODEC_ELEMENTS).flat_map(|i| codec_value(i).to_le_bytes()).collect();
            let t = Instant::now();
            let mut f = AsdfFile::new(Version::STANDARD_LATEST)?;
            f.put_array(
                "/data",
                asdf::NewArray::from_bytes(
                    Datatype::Scalar(ScalarType::Int32),
                    &[CODEC_ELEMENTS],
                    ByteOrder::Little,
                    data,
                ),
            )?;
            f.write(
                arg(1),
                &WriteOptions::default()
                    .compression(asdf::Compression::All(label))
                    .durable(durable),
            )?;
            report(t.elapsed().as_secs_f64(), std::fs::metadata(arg(1))?.len() as f64);
        }
        "codec-read" => {
            let t = Instant::now();
            let f = asdf::open(arg(1))?;
            let mut s = 0i64;
            f.array("/data")
                .and_then(|a| a.for_each_chunk::<i32>(|c| s += c.iter().map(|&x| i64::from(x)).sum::<i64>()))?;
            report(t.elapsed().as_secs_f64(), s as f64);
        }
        "tree-write" => {
            let t = Instant::now();
            let mut f = AsdfFile::new(Version::STANDARD_LATEST)?;
            if let Some(m) = f.get_mut("")?.as_mapping_mut() {
                m.insert("rows", tree_rows());
            }
            f.write(arg(1), &WriteOptions::default())?;
            report(t.elapsed().as_secs_f64(), 0.0);
        }
        "tree-open" | "tree-open-novalidate" => {
            let t = Instant::now();
            let f = asdf::Open::path(arg(1))
                .options(OpenOptions::default().validate(arg(0) == "tree-open"))
                .open()?;
            let n = count_scalars(f.get("/rows")?);
            report(t.elapsed().as_secs_f64(), n as f64);
        }
        "tree-validate" => {
            let f = asdf::Open::path(arg(1))
                .options(OpenOptions::default().validate(false))
                .open()?;
            let t = Instant::now();
            let r = f.validate(None, None)?;
            if !r.is_valid() {
                bail!("invalid: {:?}", r.violations.first());
            }
            report(t.elapsed().as_secs_f64(), 0.0);
        }
        "floors" => {
            // The machine's limits, each on one core, in this process (see `Floors`).
            let big = arg(1);
            // First, in a fresh process: open(2) + fstat + pread(2) of 8 bytes, the least an
            // element costs.
            let t = Instant::now();
            let f = std::fs::File::open(&big)?;
            let size = f.metadata()?.len();
            let mut x = [0u8; 8];
            std::os::unix::fs::FileExt::read_exact_at(&f, &mut x, size / 2)?;
            let element = t.elapsed().as_secs_f64();
            drop(f);
            let gib = 1u64 << 30;
            let piece = 64usize << 20;
            let mut a = vec![1u8; piece];
            let mut b = vec![2u8; piece];
            let t = Instant::now();
            for k in 0..16u8 {
                a[0] = k;
                b.copy_from_slice(&a);
                std::hint::black_box(&b);
            }
            let memcpy = t.elapsed().as_secs_f64();
            let file = std::fs::File::open(&big)?;
            let t = Instant::now();
            let mut at = 0u64;
            while at < size {
                let n = std::os::unix::fs::FileExt::read_at(&file, &mut b, at)?;
                if n == 0 {
                    break;
                }
                at += n as u64;
            }
            let read = t.elapsed().as_secs_f64() * gib as f64 / size as f64;
            let tmp = std::path::PathBuf::from(format!("{big}.floor.tmp"));
            // From a page cache with nothing dirty, as each write workload starts (`fresh`).
            write_back_dirty_pages();
            let t = Instant::now();
            {
                let mut w = std::fs::File::create(&tmp)?;
                for _ in 0..16 {
                    std::io::Write::write_all(&mut w, &a)?;
                }
            }
            let write = t.elapsed().as_secs_f64();
            std::fs::remove_file(&tmp)?;
            // MD5: ours (AWS-LC's assembly), the md-5 crate (what we used before), and
            // OpenSSL's (Python's hashlib, what Python asdf uses), one after the other.
            let t = Instant::now();
            let mut h = asdf_layout::md5::Md5::new();
            for _ in 0..16 {
                h.update(&a);
            }
            std::hint::black_box(h.finalize());
            let md5 = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let mut h = <md5::Md5 as md5::Digest>::new();
            for _ in 0..16 {
                md5::Digest::update(&mut h, &a);
            }
            std::hint::black_box(md5::Digest::finalize(h));
            let md5_crate = t.elapsed().as_secs_f64();
            let md5_openssl = Command::new(python_exe()?)
                .args([
                    "-c",
                    "import hashlib, time\na = bytes(range(256)) * (1 << 18)\nt = time.perf_counter()\nh = hashlib.md5()\nfor _ in range(16): h.update(a)\nh.digest()\nprint(time.perf_counter() - t)",
                ])
                .output()
                .ok()
                .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse::<f64>().ok())
                .unwrap_or(f64::INFINITY);
            // The codecs on the codec workload's data (64 MiB of it; seconds per 256 MiB).
            let data: Vec<u8> = (0..CODEC_ELEMENTS / 4)
                .flat_map(|i| codec_value(i).to_le_bytes())
                .collect();
            let registry = asdf_layout::compression::Registry::shared_default();
            let mut codecs = serde_json::Map::new();
            for name in ["zlib", "lz4", "zstd", "blsc"] {
                let Some(codec) = asdf_layout::Label::from_name(name).and_then(|l| registry.get(l)) else {
                    continue;
                };
                let mut enc = Vec::new();
                let t = Instant::now();
                codec.encode(&data, &mut enc)?;
                let e = t.elapsed().as_secs_f64() * 4.0;
                let mut dec = vec![0u8; data.len()];
                let t = Instant::now();
                codec.decode(&enc, &mut dec)?;
                let d = t.elapsed().as_secs_f64() * 4.0;
                if dec != data {
                    bail!("{name} does not round-trip");
                }
                codecs.insert(
                    name.to_owned(),
                    serde_json::json!({"encode": e, "decode": d, "ratio": data.len() as f64 / enc.len() as f64}),
                );
            }
            println!(
                "{}",
                serde_json::json!({"memcpy": memcpy, "read": read, "write": write, "md5": md5, "md5_crate": md5_crate, "md5_openssl": md5_openssl, "codecs": codecs, "element": element})
            );
        }
        other => bail!("unknown bench child `{other}`"),
    }
    Ok(())
}

/// What one run of a workload measured (one JSON line of its process).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Run {
    pub(crate) secs: f64,
    pub(crate) rss_kib: u64,
    pub(crate) check: f64,
    /// Bytes read or fetched, where the workload says (`bench-cutout`).
    pub(crate) bytes: u64,
}

pub(crate) fn parse_run(out: &std::process::Output, what: &str) -> Result<Run> {
    if !out.status.success() {
        bail!(
            "{what} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().last().unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(line).with_context(|| format!("{what}: `{line}`"))?;
    Ok(Run {
        secs: v["secs"].as_f64().unwrap_or(f64::NAN),
        rss_kib: v["rss_kib"].as_u64().unwrap_or(0),
        check: v["check"].as_f64().unwrap_or(f64::NAN),
        bytes: v["bytes"].as_u64().unwrap_or(0),
    })
}

fn ours(args: &[&str]) -> Result<Run> {
    let exe = match (USE_BASELINE.get(), BASELINE.get()) {
        (true, Some(base)) => base.clone(),
        _ => std::env::current_exe()?,
    };
    LAST_CHILD.set(Some(args.join(" ")));
    let out = Command::new(exe).arg("bench-child").args(args).output()?;
    parse_run(&out, &format!("bench-child {}", args.join(" ")))
}

/// `--against XTASK`: another build's xtask (an earlier commit's), whose `bench-child` runs
/// take turns with ours in every row of ours, for the ratio of each row before and after a
/// change, measured side by side in one run.
static BASELINE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
/// Each row of ours run against the baseline: its child's arguments, our median seconds, the
/// baseline's (NaN: the baseline build has no such workload).
static AGAINST: std::sync::Mutex<Vec<(String, f64, f64)>> = std::sync::Mutex::new(Vec::new());

thread_local! {
    /// The job now running calls the baseline's children, not ours.
    static USE_BASELINE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// The arguments of the last child of ours started on this thread.
    static LAST_CHILD: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// `job` run with the baseline's children.
fn as_baseline(job: &mut dyn FnMut() -> Result<Run>) -> Result<Run> {
    USE_BASELINE.set(true);
    let r = job();
    USE_BASELINE.set(false);
    r
}

/// The peer crate's bench binary (xtask/peer, its own workspace), built once per run.
fn peer_exe() -> Result<PathBuf> {
    static BUILT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let ok = *BUILT.get_or_init(|| {
        println!("(building xtask/peer: the asdf-rs 0.2 bench binary)");
        cargo_build(&["--manifest-path", "xtask/peer/Cargo.toml"])
    });
    if !ok {
        bail!("cannot build xtask/peer (crates.io reachable?)");
    }
    Ok(PathBuf::from("xtask/peer/target/release/peer-bench"))
}

fn peer(args: &[&str]) -> Result<Run> {
    let out = Command::new(peer_exe()?).args(args).output()?;
    parse_run(&out, &format!("peer-bench {}", args.join(" ")))
}

/// `cargo build --quiet --release ARGS` succeeded.
fn cargo_build(args: &[&str]) -> bool {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
        .args(["build", "--quiet", "--release"])
        .args(args)
        .status()
        .is_ok_and(|s| s.success())
}

/// The release `asdf-cli`, built once per run.
pub(crate) fn cli_exe() -> Result<PathBuf> {
    static BUILT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let ok = *BUILT.get_or_init(|| cargo_build(&["--package", "asdf-tools"]));
    if !ok {
        bail!("cannot build asdf-cli in release");
    }
    Ok(PathBuf::from("target/release/asdf-cli"))
}

/// `asdf-cli ARGS` as a whole process, timed from a fresh small `bench-child cli` process
/// (see there): the peak RSS Linux reports for a child starts from its parent's at the fork,
/// so the parent must be small. The check is the exit code.
fn cli(args: &[&str]) -> Result<Run> {
    let exe = cli_exe()?;
    let exe = exe.to_string_lossy().into_owned();
    let mut all = vec!["cli", exe.as_str()];
    all.extend_from_slice(args);
    ours(&all)
}

/// Runs `exe ARGS` to its end: wall time from spawn to exit and its peak RSS from `wait4`.
fn run_whole(exe: &str, args: &[String]) -> Result<(f64, u64, i32)> {
    let t = Instant::now();
    let child = Command::new(exe)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    let pid = libc::pid_t::try_from(child.id())?;
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero `rusage` is a valid value of that plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our child, not yet waited for (`child` is dropped without waiting);
    // `status` and `usage` are valid for writes for the call's duration.
    let got = unsafe { libc::wait4(pid, &raw mut status, 0, &raw mut usage) };
    let secs = t.elapsed().as_secs_f64();
    if got != pid {
        bail!("wait4 failed: {}", std::io::Error::last_os_error());
    }
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    Ok((secs, u64::try_from(usage.ru_maxrss).unwrap_or(0), code))
}

pub(crate) fn python_exe() -> Result<PathBuf> {
    let venv = Path::new("target/pyenv");
    let py = venv.join("bin/python");
    if !venv.join(".ready").exists() {
        println!("(creating target/pyenv with asdf 6.0.0 for the Python side)");
        let ok = Command::new("python3")
            .args(["-m", "venv"])
            .arg(venv)
            .status()?
            .success()
            && Command::new(&py)
                .args(["-m", "pip", "install", "-q", "-r", "tests/interop/requirements.txt"])
                .status()?
                .success();
        if !ok {
            bail!("cannot create target/pyenv with asdf 6.0.0 (python3 and PyPI needed)");
        }
        std::fs::write(venv.join(".ready"), b"ok")?;
    }
    // The venv may have been made by the interop suite (.ci/run), without h5py.
    if !venv.join(".bench-ready").exists() {
        println!("(installing h5py into target/pyenv for the HDF5 rows)");
        let ok = Command::new(&py)
            .args(["-m", "pip", "install", "-q", "-r", "xtask/bench/requirements.txt"])
            .status()?
            .success();
        if !ok {
            bail!("cannot install xtask/bench/requirements.txt into target/pyenv (PyPI needed)");
        }
        std::fs::write(venv.join(".bench-ready"), b"ok")?;
    }
    Ok(py)
}

fn python(args: &[&str]) -> Result<Run> {
    let out = Command::new(python_exe()?)
        .arg("xtask/bench/python_child.py")
        .args(args)
        .output()?;
    parse_run(&out, &format!("python_child.py {}", args.join(" ")))
}

/// Medians of `n` runs of each job, the jobs taking turns (one run of each, then again), so
/// that a machine whose speed drifts during the benchmark weighs on all of them alike.
fn medians(n: usize, jobs: &mut [&mut dyn FnMut() -> Result<Run>]) -> Result<Vec<Run>> {
    let mut all: Vec<Vec<Run>> = vec![Vec::new(); jobs.len()];
    // With a baseline: each job that runs a child of ours runs again with the baseline's, the
    // two in turn (which goes first alternates by round).
    let against = BASELINE.get().is_some();
    let mut base: Vec<Vec<Run>> = vec![Vec::new(); jobs.len()];
    let mut child: Vec<Option<String>> = vec![None; jobs.len()];
    let mut base_failed = vec![false; jobs.len()];
    for round in 0..n {
        for (k, job) in jobs.iter_mut().enumerate() {
            let base_first = against && round % 2 == 1 && child[k].is_some() && !base_failed[k];
            if base_first {
                match as_baseline(&mut **job) {
                    Ok(r) => base[k].push(r),
                    Err(_) => base_failed[k] = true,
                }
            }
            LAST_CHILD.set(None);
            all[k].push(job()?);
            if let Some(c) = LAST_CHILD.take() {
                child[k] = Some(c);
            }
            if against && !base_first && child[k].is_some() && !base_failed[k] {
                match as_baseline(&mut **job) {
                    Ok(r) => base[k].push(r),
                    Err(_) => base_failed[k] = true,
                }
            }
        }
    }
    for (k, c) in child.iter().enumerate() {
        let Some(c) = c else { continue };
        let median = |runs: &[Run]| {
            let mut s: Vec<f64> = runs.iter().map(|r| r.secs).collect();
            s.sort_by(f64::total_cmp);
            s.get(s.len() / 2).copied().unwrap_or(f64::NAN)
        };
        let old = if base_failed[k] { f64::NAN } else { median(&base[k]) };
        AGAINST
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((c.clone(), median(&all[k]), old));
    }
    all.into_iter()
        .map(|mut runs| {
            if runs
                .windows(2)
                .any(|w| w[0].check != w[1].check && !(w[0].check.is_nan() && w[1].check.is_nan()))
            {
                bail!("runs disagree: {runs:?}");
            }
            runs.sort_by(|a, b| a.secs.total_cmp(&b.secs));
            Ok(runs[runs.len() / 2])
        })
        .collect()
}

/// `run` writing `path` as a new file: `path` removed first, then `sync(2)`, so that the run
/// starts with no dirty pages of earlier runs to write back and no old file to free.
fn fresh(path: &Path, run: impl FnOnce() -> Result<Run>) -> Result<Run> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
        _ => {}
    }
    write_back_dirty_pages();
    run()
}

/// `run` writing over `path`, which the previous run left: `sync(2)` first, as [`fresh`].
fn replacing(path: &Path, run: impl FnOnce() -> Result<Run>) -> Result<Run> {
    if !path.exists() {
        bail!("{} should be there to be replaced", path.display());
    }
    write_back_dirty_pages();
    run()
}

/// `sync(2)`: every dirty page of the machine written back before a timed write starts.
fn write_back_dirty_pages() {
    // SAFETY: sync takes no arguments and cannot fail.
    unsafe { libc::sync() };
}

/// Median by time of `n` runs; the check values must agree.
fn median_of(n: usize, mut f: impl FnMut() -> Result<Run>) -> Result<Run> {
    let mut runs = (0..n).map(|_| f()).collect::<Result<Vec<_>>>()?;
    if runs
        .windows(2)
        .any(|w| w[0].check != w[1].check && !(w[0].check.is_nan() && w[1].check.is_nan()))
    {
        bail!("runs disagree: {runs:?}");
    }
    runs.sort_by(|a, b| a.secs.total_cmp(&b.secs));
    Ok(runs[runs.len() / 2])
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// Seconds with 4 decimals, or 4 significant digits below 10 ms.
fn secs(s: f64) -> String {
    if s < 0.01 {
        format!("{s:.3e}")
    } else {
        format!("{s:.4}")
    }
}

/// The machine's limits, measured by `bench-child floors` (the best of three fresh
/// processes): seconds per GiB on one core for a memory copy, a page-cache read and write and
/// MD5; the codecs' seconds per 256 MiB of the codec data on one core; a fresh process's
/// open + pread of 8 bytes.
#[derive(Debug, Clone, Default)]
struct Floors {
    memcpy: f64,
    read: f64,
    write: f64,
    md5: f64,
    md5_crate: f64,
    md5_openssl: f64,
    /// label -> (encode s, decode s, compression ratio) per 256 MiB.
    codecs: Vec<(String, f64, f64, f64)>,
    element: f64,
    idle: f64,
}

impl Floors {
    fn measure(big: &str) -> Result<Floors> {
        // A process start and exit: the least of three runs of /bin/true.
        let mut idle = f64::INFINITY;
        for _ in 0..3 {
            idle = idle.min(run_whole("/bin/true", &[])?.0);
        }
        let mut best = Floors {
            memcpy: f64::INFINITY,
            read: f64::INFINITY,
            write: f64::INFINITY,
            md5: f64::INFINITY,
            md5_crate: f64::INFINITY,
            md5_openssl: f64::INFINITY,
            codecs: Vec::new(),
            element: f64::INFINITY,
            idle,
        };
        for _ in 0..3 {
            let exe = std::env::current_exe()?;
            let out = Command::new(exe).args(["bench-child", "floors", big]).output()?;
            if !out.status.success() {
                bail!("bench-child floors: {}", String::from_utf8_lossy(&out.stderr));
            }
            let v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
            let f = |k: &str| v[k].as_f64().unwrap_or(f64::INFINITY);
            best.memcpy = best.memcpy.min(f("memcpy"));
            best.read = best.read.min(f("read"));
            best.write = best.write.min(f("write"));
            best.md5 = best.md5.min(f("md5"));
            best.md5_crate = best.md5_crate.min(f("md5_crate"));
            best.md5_openssl = best.md5_openssl.min(f("md5_openssl"));
            best.element = best.element.min(f("element"));
            if let Some(m) = v["codecs"].as_object() {
                for (name, c) in m {
                    let (e, d, r) = (
                        c["encode"].as_f64().unwrap_or(f64::INFINITY),
                        c["decode"].as_f64().unwrap_or(f64::INFINITY),
                        c["ratio"].as_f64().unwrap_or(1.0),
                    );
                    match best.codecs.iter_mut().find(|x| x.0 == *name) {
                        Some(x) => {
                            x.1 = x.1.min(e);
                            x.2 = x.2.min(d);
                        }
                        None => best.codecs.push((name.clone(), e, d, r)),
                    }
                }
            }
        }
        Ok(best)
    }

    fn print(&self) {
        let gb = |s: f64| (1u64 << 30) as f64 / s / 1e9;
        println!(
            "  limits, one core: memcpy {:.1} GB/s, page-cache read {:.1} GB/s, page-cache write {:.1} GB/s, MD5 {:.2} GB/s (ours, AWS-LC; the md-5 crate {:.2} GB/s, OpenSSL by Python's hashlib {:.2} GB/s), open + pread of 8 bytes {} s, process start (/bin/true) {} s",
            gb(self.memcpy),
            gb(self.read),
            gb(self.write),
            gb(self.md5),
            gb(self.md5_crate),
            gb(self.md5_openssl),
            secs(self.element),
            secs(self.idle)
        );
        for (name, e, d, r) in &self.codecs {
            println!(
                "  limits, one core: {name} encode {:.2} GB/s, decode {:.2} GB/s (of the 256 MiB int32 data, ratio {r:.1})",
                (256u64 << 20) as f64 / e / 1e9,
                (256u64 << 20) as f64 / d / 1e9
            );
        }
    }

    fn codec(&self, name: &str) -> Option<(f64, f64, f64)> {
        self.codecs.iter().find(|c| c.0 == name).map(|c| (c.1, c.2, c.3))
    }

    /// The floor of a row (seconds, and what it is), on this 2-core machine; `None` for rows
    /// bound by parsing or the device, which have no hardware floor worth the name.
    fn of(&self, row: &str) -> Option<(f64, String)> {
        let cores = 2.0;
        if row.starts_with("write 1 GiB f64, checksums, no fsync") {
            return Some((
                self.write.max(self.md5),
                "max(page-cache write, one core's MD5) of 1 GiB".to_owned(),
            ));
        }
        if row.starts_with("write 1 GiB f64, no checksums, no fsync") {
            return Some((self.write, "page-cache write of 1 GiB".to_owned()));
        }
        if row.starts_with("open + sum 1 GiB") {
            return Some((self.read, "page-cache read of 1 GiB".to_owned()));
        }
        if row.contains("one element") {
            return Some((self.element, "open(2) + pread(2) of 8 bytes".to_owned()));
        }
        if row.starts_with("stream 2 GiB") {
            return Some((
                2.0 * self.write.max(self.md5),
                "max(page-cache write, one core's MD5) of 2 GiB".to_owned(),
            ));
        }
        if let Some(rest) = row.strip_prefix("CLI verify, ") {
            let mib: f64 = rest.split_whitespace().next()?.parse().ok()?;
            let gib = mib / 1024.0;
            if rest.contains("zlib") {
                let (_, d, r) = self.codec("zlib")?;
                let decode = d * mib / 256.0;
                let md5 = self.md5 * gib / r;
                return Some((
                    self.idle + (decode + md5) / cores,
                    "process start + (zlib decode + MD5 of the stored bytes) / 2 cores".to_owned(),
                ));
            }
            return Some((
                self.idle + (self.read * gib).max(self.md5 * gib / cores),
                "process start + max(page-cache read, MD5 / 2 cores)".to_owned(),
            ));
        }
        for name in ["zlib", "lz4", "zstd", "blsc"] {
            let Some((e, d, r)) = self.codec(name) else { continue };
            let md5 = self.md5 / 4.0 / r;
            if row.starts_with(&format!("write 256 MiB int32, {name}, no fsync")) {
                return Some((
                    (e + md5) / cores,
                    format!("({name} encode + MD5 of the compressed bytes) / 2 cores"),
                ));
            }
            if row.starts_with(&format!("open + sum 256 MiB int32, {name}")) {
                return Some((d / cores, format!("{name} decode / 2 cores")));
            }
        }
        None
    }
}

struct Table(Vec<[String; 6]>);

impl Table {
    fn row(&mut self, workload: &str, ours: Run, theirs: Option<(&str, Run)>) {
        let (who, ratio, rss) = match theirs {
            Some((who, t)) => (
                who.to_owned(),
                format!("{:.1}x", t.secs / ours.secs),
                format!("{:.1} / {:.1}", mib(ours.rss_kib), mib(t.rss_kib)),
            ),
            None => ("-".to_owned(), "-".to_owned(), format!("{:.1}", mib(ours.rss_kib))),
        };
        let t = theirs.map_or("-".to_owned(), |(_, t)| secs(t.secs));
        println!(
            "  {workload}: ours {} s, {who} {t}, ratio {ratio}, peak RSS MiB (ours / theirs) {rss}",
            secs(ours.secs)
        );
        self.0.push([workload.to_owned(), secs(ours.secs), who, t, ratio, rss]);
    }

    fn print(&self, floors: Option<&Floors>) {
        println!("\n| workload | ours (s) | other | other (s) | speed-up | peak RSS MiB (ours / other) |");
        println!("|---|---|---|---|---|---|");
        for r in &self.0 {
            println!("| {} |", r.join(" | "));
        }
        let Some(floors) = floors else { return };
        // Each workload once, beside its physical limit on this machine.
        println!("\n| workload | ours (s) | limit (s) | limit | ours at % of the limit's speed |");
        println!("|---|---|---|---|---|");
        let mut seen = std::collections::HashSet::new();
        for r in &self.0 {
            if !seen.insert(r[0].clone()) {
                continue;
            }
            let ours: f64 = r[1].parse().unwrap_or(f64::NAN);
            match floors.of(&r[0]) {
                Some((limit, what)) => println!(
                    "| {} | {} | {} | {what} | {:.0}% |",
                    r[0],
                    r[1],
                    secs(limit),
                    100.0 * limit / ours
                ),
                None => println!(
                    "| {} | {} | - | none: bound by parsing, or by the device (fsync) | - |",
                    r[0], r[1]
                ),
            }
        }
    }
}

/// `cargo xtask bench [--runs N] [--against XTASK] [WORKLOAD...]`; workloads: write, sum,
/// element, stream, codecs, tree. `--against`: another build's xtask binary (an earlier
/// commit's `target/debug/xtask`), whose runs take turns with ours in each row of ours; a table
/// of each row's ratio (ours / the baseline's median seconds) follows the others.
pub fn bench(args: &[String]) -> Result<()> {
    let mut runs = 3;
    let mut picked: Vec<String> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--runs" => runs = it.next().context("--runs N")?.parse()?,
            "--against" => {
                let exe = PathBuf::from(it.next().context("--against XTASK")?);
                if !exe.is_file() {
                    bail!("--against {}: no such program", exe.display());
                }
                BASELINE
                    .set(exe)
                    .map_err(|_| anyhow::anyhow!("--against given twice"))?;
            }
            w => picked.push(w.to_owned()),
        }
    }
    let all = ["write", "sum", "element", "fits", "cli", "stream", "codecs", "tree"];
    if picked.is_empty() {
        picked = all.iter().map(|s| (*s).to_owned()).collect();
    }
    if let Some(w) = picked.iter().find(|w| !all.contains(&w.as_str())) {
        bail!("unknown workload `{w}` (known: {})", all.join(", "));
    }
    let dir = Path::new("target/bench-data");
    std::fs::create_dir_all(dir)?;
    let big = dir.join("big_f64.asdf");
    let big_s = big.to_string_lossy().into_owned();
    let want_sum = (BIG_ELEMENTS as f64 - 1.0) * BIG_ELEMENTS as f64 / 4.0;
    let mut table = Table(Vec::new());
    let idle = ours(&["idle"])?;
    println!(
        "bench: medians of {runs} runs per workload (at least 5 for compressed data and the sums, 7 for \
         the tree, 9 for one element), the programs compared taking turns; idle child peak RSS {:.1} MiB",
        mib(idle.rss_kib)
    );

    if picked.iter().any(|w| w == "write") {
        // Python asdf and asdf-rs leave the bytes in the page cache; ours by default forces
        // them to disk before the rename (durable). Both are shown.
        for (name, mode, checksums) in [
            ("write 1 GiB f64, checksums", "write", true),
            ("write 1 GiB f64, no checksums", "write-nochecksum", false),
        ] {
            // The writers take turns; each writes a new file (its path removed first) and
            // starts from a page cache with nothing dirty (`fresh`, untimed): a writer that
            // follows a 1 GiB write must not pay for the kernel writing back or freeing the
            // previous one's pages.
            let volatile = format!("{mode}-volatile");
            let (py, peer_f) = (dir.join("py_big.asdf"), dir.join("peer_big.asdf"));
            let (np_f, h5_f) = (dir.join("np_big.npy"), dir.join("h5_big.h5"));
            let mut jobs: Vec<Box<dyn FnMut() -> Result<Run>>> = vec![
                Box::new(|| fresh(&py, || python(&[mode, &py.to_string_lossy()]))),
                Box::new(|| fresh(&big, || ours(&[&volatile, &big_s]))),
                Box::new(|| fresh(&big, || ours(&[mode, &big_s]))),
            ];
            if checksums {
                jobs.push(Box::new(|| {
                    fresh(&peer_f, || peer(&["write", &peer_f.to_string_lossy()]))
                }));
            } else {
                // The same bytes written by numpy (np.save) and h5py (an HDF5 dataset): no
                // checksums either, not synced.
                jobs.push(Box::new(|| {
                    fresh(&np_f, || python(&["np-write", &np_f.to_string_lossy()]))
                }));
                jobs.push(Box::new(|| {
                    fresh(&h5_f, || python(&["h5-write", &h5_f.to_string_lossy()]))
                }));
            }
            let mut refs: Vec<&mut dyn FnMut() -> Result<Run>> = jobs
                .iter_mut()
                .map(|j| &mut **j as &mut dyn FnMut() -> Result<Run>)
                .collect();
            let m = medians(runs, &mut refs)?;
            drop(refs);
            drop(jobs);
            let (p, o, o_sync) = (m[0], m[1], m[2]);
            table.row(&format!("{name}, no fsync"), o, Some(("Python asdf 6.0", p)));
            if checksums {
                table.row(&format!("{name}, no fsync"), o, Some(("asdf-rs 0.2", m[3])));
            }
            table.row(&format!("{name}, ours fsynced"), o_sync, Some(("Python asdf 6.0", p)));
            if !checksums {
                table.row(&format!("{name}, no fsync"), o, Some(("numpy np.save", m[3])));
                table.row(&format!("{name}, no fsync"), o, Some(("h5py 3.12", m[4])));
            }
        }
        // Over an existing 1 GiB file (clean in the page cache): np.save truncates it and
        // writes in its place (a crash or a full disk part-way loses the old file); ours
        // writes beside it and renames, and ext4 (auto_da_alloc) starts writing the new
        // file's pages back at a rename that replaces a file, so that a power cut leaves the
        // old file or the new one. That flush is in our time.
        let (ours_r, np_r) = (dir.join("replace_ours.asdf"), dir.join("replace_np.npy"));
        let mut ours_job = || {
            replacing(&ours_r, || {
                ours(&["write-nochecksum-volatile", &ours_r.to_string_lossy()])
            })
        };
        let mut np_job = || replacing(&np_r, || python(&["np-write", &np_r.to_string_lossy()]));
        // Untimed: the files to replace.
        ours(&["write-nochecksum-volatile", &ours_r.to_string_lossy()])?;
        python(&["np-write", &np_r.to_string_lossy()])?;
        let m = medians(runs, &mut [&mut ours_job, &mut np_job])?;
        table.row(
            "write 1 GiB f64, no checksums, no fsync, replacing a file",
            m[0],
            Some(("numpy np.save", m[1])),
        );
        for f in [&ours_r, &np_r, &dir.join("peer_big.asdf")] {
            let _ = std::fs::remove_file(f);
        }
    } else if !big.exists() {
        ours(&["write", &big_s])?;
    }
    let (np_big, h5_big) = (dir.join("np_big.npy"), dir.join("h5_big.h5"));
    if picked.iter().any(|w| w == "sum" || w == "element") {
        if !np_big.exists() {
            python(&["np-write", &np_big.to_string_lossy()])?;
        }
        if !h5_big.exists() {
            python(&["h5-write", &h5_big.to_string_lossy()])?;
        }
    }
    let (np_big, h5_big) = (
        np_big.to_string_lossy().into_owned(),
        h5_big.to_string_lossy().into_owned(),
    );
    if picked.iter().any(|w| w == "sum") {
        let m = medians(
            runs.max(5),
            &mut [
                &mut || ours(&["sum", &big_s]),
                &mut || python(&["sum", &big_s]),
                &mut || python(&["sum-memmap", &big_s]),
                &mut || peer(&["sum", &big_s]),
                &mut || python(&["np-sum", &np_big]),
                &mut || python(&["h5-sum", &h5_big]),
                &mut || ours(&["sum-default", &big_s]),
            ],
        )?;
        let (o, p, p_map, r, np, h5, o_read) = (m[0], m[1], m[2], m[3], m[4], m[5], m[6]);
        if (o_read.check - o.check).abs() > want_sum * 1e-9 {
            bail!("sum: ours mapped {} read {}", o.check, o_read.check);
        }
        // The cost of the safe default (no memory map): its own row, against the mapped open.
        table.row(
            "open + sum 1 GiB (default: read, no mmap)",
            o_read,
            Some(("asdf-rs mapped (memmap(true))", o)),
        );
        table.row(
            "open + sum 1 GiB (default: read, no mmap)",
            o_read,
            Some(("Python asdf 6.0 default", p)),
        );
        if (o.check - want_sum).abs() > want_sum * 1e-9 {
            bail!("sum: ours {} want {want_sum}", o.check);
        }
        // Every other program's sum agrees with ours.
        for (who, t) in [
            ("Python", p),
            ("Python memmap", p_map),
            ("asdf-rs", r),
            ("numpy", np),
            ("h5py", h5),
        ] {
            if (t.check - o.check).abs() > want_sum * 1e-9 {
                bail!("sum: ours {} {who} {}", o.check, t.check);
            }
        }
        table.row("open + sum 1 GiB (mmap)", o, Some(("Python asdf 6.0 default", p)));
        table.row("open + sum 1 GiB (mmap)", o, Some(("Python asdf 6.0 memmap", p_map)));
        table.row("open + sum 1 GiB (mmap)", o, Some(("asdf-rs 0.2", r)));
        table.row(
            "open + sum 1 GiB (mmap)",
            o,
            Some(("numpy np.load, memory-mapped .npy", np)),
        );
        table.row(
            "open + sum 1 GiB (mmap)",
            o,
            Some(("h5py 3.12 (reads the dataset)", h5)),
        );
        let t = Instant::now();
        let bytes = std::fs::read(&big)?;
        let raw = Run {
            secs: t.elapsed().as_secs_f64(),
            rss_kib: 0,
            check: bytes.len() as f64,
            bytes: bytes.len() as u64,
        };
        drop(bytes);
        table.row("open + sum 1 GiB (mmap)", o, Some(("std::fs::read of the file", raw)));
    }
    if picked.iter().any(|w| w == "element") {
        // Short runs: more of them.
        let m = medians(
            runs.max(9),
            &mut [
                &mut || ours(&["element", &big_s]),
                &mut || python(&["element", &big_s]),
                &mut || python(&["element-memmap", &big_s]),
                &mut || peer(&["element", &big_s]),
                &mut || ours(&["element-novalidate", &big_s]),
                &mut || python(&["np-element", &np_big]),
                &mut || python(&["h5-element", &h5_big]),
                &mut || ours(&["element-default", &big_s]),
                &mut || ours(&["element-lazy", &big_s]),
            ],
        )?;
        let (o, p, p_map, r, o_nv, np, h5, o_read, o_lazy) = (m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8]);
        table.row(
            "open (validating) + one element of 1 GiB (default: read, no mmap)",
            o_read,
            Some(("asdf-rs mapped (memmap(true))", o)),
        );
        let want = ((BIG_ELEMENTS / 2 + 7) as f64) * 0.5;
        if o.check != want {
            bail!("element: ours {} want {want}", o.check);
        }
        if p.check != want || p_map.check != want {
            bail!("element: Python {} / {} want {want}", p.check, p_map.check);
        }
        table.row("open + one element of 1 GiB", o, Some(("Python asdf 6.0 default", p)));
        table.row(
            "open + one element of 1 GiB",
            o,
            Some(("Python asdf 6.0 memmap", p_map)),
        );
        if r.check != want {
            bail!("element: asdf-rs {} want {want}", r.check);
        }
        for (who, t) in [("numpy np.load, memory-mapped .npy", np), ("h5py 3.12", h5)] {
            if t.check != want {
                bail!("element: {who} {} want {want}", t.check);
            }
            table.row("open + one element of 1 GiB", o, Some((who, t)));
        }
        table.row(
            "open (validating) + one element of 1 GiB",
            o,
            Some(("asdf-rs 0.2 (raw mapped bytes)", r)),
        );
        if o_nv.check != want {
            bail!("element-novalidate: ours {} want {want}", o_nv.check);
        }
        table.row(
            "open (not validating) + one element of 1 GiB",
            o_nv,
            Some(("asdf-rs 0.2 (raw mapped bytes)", r)),
        );
        if o_lazy.check != want {
            bail!("element-lazy: ours {} want {want}", o_lazy.check);
        }
        // asdf-rs 0.2 parses no tree before reading a block: the like-for-like open is ours
        // without the tree parsed (`open_lazy`: a skim of the text finds `/data`).
        table.row(
            "open_lazy (tree not parsed) + one element of 1 GiB",
            o_lazy,
            Some(("asdf-rs 0.2 (raw mapped bytes)", r)),
        );
        println!(
            "  one element: peak RSS {:.1} MiB (idle process {:.1} MiB): target < 10 MB {}",
            mib(o.rss_kib),
            mib(idle.rss_kib),
            if o.rss_kib * 1024 < 10_000_000 {
                "met"
            } else {
                "NOT met"
            }
        );
    }
    if picked.iter().any(|w| w == "fits") {
        // A 1 GiB JWST-style FITS file written by stdatamodels (ImageModel: SCI float32
        // 16384 x 16384, the tree in the ASDF BINTABLE), made once.
        let fits = dir.join("jwst_1gib.fits");
        let fits_s = fits.to_string_lossy().into_owned();
        if !fits.exists() {
            python(&["fits-make", &fits_s])?;
        }
        let m = medians(
            runs.max(9),
            &mut [
                &mut || ours(&["fits-element", &fits_s]),
                &mut || python(&["fits-stdatamodels", &fits_s]),
                &mut || python(&["fits-stdatamodels-memmap", &fits_s]),
                &mut || python(&["fits-astropy", &fits_s]),
                &mut || ours(&["fits-element-novalidate", &fits_s]),
            ],
        )?;
        // (8192 * 16384 + 7) * 0.25, as numpy rounds it to float32.
        let want = f64::from(33_554_433.75_f32);
        for (who, r) in [
            ("ours", m[0]),
            ("stdatamodels", m[1]),
            ("stdatamodels memmap", m[2]),
            ("astropy", m[3]),
            ("ours unvalidated", m[4]),
        ] {
            if r.check != want {
                bail!("fits: {who} read {} want {want}", r.check);
            }
        }
        let row = "FITS 1 GiB (JWST ImageModel): open (validating) + one element of SCI";
        table.row(
            row,
            m[0],
            Some(("stdatamodels 6.0 ImageModel(path) (its default: no memmap)", m[1])),
        );
        table.row(
            row,
            m[0],
            Some(("stdatamodels 6.0 on an HDUList opened memmap=True", m[2])),
        );
        table.row(
            row,
            m[0],
            Some(("astropy.io.fits (memmap, the SCI HDU only, no ASDF)", m[3])),
        );
        table.row(
            "FITS 1 GiB (JWST ImageModel): open (not validating) + one element of SCI",
            m[4],
            Some(("astropy.io.fits (memmap, the SCI HDU only, no ASDF)", m[3])),
        );
    }
    if picked.iter().any(|w| w == "cli") {
        // The command line, whole processes, on files Python asdf wrote (checksums on): ours
        // from spawn to exit, Python's in its process (its start-up and imports not counted).
        let mut files = Vec::new();
        for (name, mib, codec) in [
            ("cli_raw_64.asdf", "64", "none"),
            ("cli_zlib_64.asdf", "64", "zlib"),
            ("cli_raw_1024.asdf", "1024", "none"),
        ] {
            let p = dir.join(name);
            if !p.exists() {
                python(&["cli-make", &p.to_string_lossy(), mib, codec])?;
            }
            files.push((p.to_string_lossy().into_owned(), mib, codec));
        }
        for (p, mib, codec) in &files {
            let m = medians(
                runs.max(5),
                &mut [&mut || cli(&["verify", p]), &mut || python(&["verify", p])],
            )?;
            let what = if *codec == "none" { "raw" } else { codec };
            table.row(
                &format!("CLI verify, {mib} MiB {what} (whole process; Python: open with checksums, every array read)"),
                m[0],
                Some(("Python asdf 6.0", m[1])),
            );
        }
        let (raw64, big_cli) = (&files[0].0, &files[2].0);
        let out = dir.join("cli_out.asdf").to_string_lossy().into_owned();
        let json = dir.join("cli_out.json").to_string_lossy().into_owned();
        for (label, args) in [
            ("CLI info, 1 GiB", vec!["info", big_cli.as_str()]),
            (
                "CLI to-json, 64 MiB raw (to a file)",
                vec!["to-json", raw64.as_str(), "-o", json.as_str()],
            ),
            (
                "CLI diff, 1 GiB against itself",
                vec!["diff", big_cli.as_str(), big_cli.as_str()],
            ),
            (
                "CLI defragment, 1 GiB",
                vec!["defragment", big_cli.as_str(), "-o", out.as_str()],
            ),
        ] {
            let o = median_of(runs, || cli(&args))?;
            table.row(label, o, None);
        }
        let _ = std::fs::remove_file(&out);
        let _ = std::fs::remove_file(&json);
    }
    if picked.iter().any(|w| w == "stream") {
        let path = dir.join("stream.asdf");
        let o = ours(&["stream", &path.to_string_lossy(), "2"])?;
        let f = asdf::open(&path)?;
        let rows = f.array("/data").and_then(|a| a.view().cloned())?.shape[0];
        if rows as f64 != o.check || rows != 2 * 1024 * 128 {
            bail!("stream: {rows} rows read back, {} written", o.check);
        }
        let last = f.array("/data").and_then(|a| a.element(&[rows - 1, 1023]))?;
        if last != asdf::Element::Float((2 * 1024 * 131_072 - 1) as f64) {
            bail!("stream: last element {last:?}");
        }
        drop(f);
        std::fs::remove_file(&path)?;
        table.row("stream 2 GiB (write_rows, 1 MiB at a time)", o, None);
        println!(
            "  stream: {:.0} MB/s, peak RSS {:.1} MiB: target < 64 MiB {}",
            2.0 * 1024.0 * 1024.0 * 1024.0 / o.secs / 1e6,
            mib(o.rss_kib),
            if o.rss_kib < 64 * 1024 { "met" } else { "NOT met" }
        );
    }
    if picked.iter().any(|w| w == "codecs") {
        let want: i64 = (0..CODEC_ELEMENTS).map(|i| i64::from(codec_value(i))).sum();
        for label in ["zlib", "lz4", "zstd", "blsc"] {
            let ours_path = dir.join(format!("codec_{label}.asdf"));
            let py_path = dir.join(format!("codec_{label}_py.asdf"));
            let (o, p) = (ours_path.to_string_lossy(), py_path.to_string_lossy());
            // Like for like: neither Python asdf nor asdf-rs syncs a new file to disk; ours
            // does by default (WriteOptions::durable), shown in a second row.
            let m = medians(
                runs.max(5),
                &mut [
                    &mut || ours(&["codec-write-volatile", &o, label]),
                    &mut || ours(&["codec-write", &o, label]),
                    &mut || python(&["codec-write", &p, label]),
                ],
            )?;
            let (ow, ow_sync, pw) = (m[0], m[1], m[2]);
            table.row(
                &format!("write 256 MiB int32, {label}, no fsync"),
                ow,
                Some(("Python asdf 6.0", pw)),
            );
            table.row(
                &format!("write 256 MiB int32, {label}, ours fsynced"),
                ow_sync,
                Some(("Python asdf 6.0", pw)),
            );
            println!(
                "    sizes: ours {:.1} MB, Python {:.1} MB",
                ow.check / 1e6,
                pw.check / 1e6
            );
            // Each reads the file Python wrote (the same bytes for both).
            let m = medians(
                runs.max(5),
                &mut [&mut || ours(&["codec-read", &p]), &mut || python(&["codec-read", &p])],
            )?;
            let (or, pr) = (m[0], m[1]);
            if or.check != want as f64 || pr.check != want as f64 {
                bail!("{label}: sums ours {} Python {} want {want}", or.check, pr.check);
            }
            table.row(
                &format!("open + sum 256 MiB int32, {label}"),
                or,
                Some(("Python asdf 6.0", pr)),
            );
            if label == "zlib" {
                // Deflate as HDF5 applies it (gzip filter level 6 on 1 MiB chunks).
                let h5_path = dir.join("codec_zlib.h5");
                let h = h5_path.to_string_lossy();
                let hw = median_of(runs.max(5), || python(&["h5-codec-write", &h]))?;
                table.row("write 256 MiB int32, zlib, no fsync", ow, Some(("h5py 3.12 gzip", hw)));
                println!(
                    "    sizes: ours {:.1} MB, h5py {:.1} MB",
                    ow.check / 1e6,
                    hw.check / 1e6
                );
                let hr = median_of(runs.max(5), || python(&["h5-codec-read", &h]))?;
                if hr.check != want as f64 {
                    bail!("zlib: h5py sum {} want {want}", hr.check);
                }
                table.row("open + sum 256 MiB int32, zlib", or, Some(("h5py 3.12 gzip", hr)));
            }
            if label == "zlib" || label == "lz4" {
                let peer_path = dir.join(format!("codec_{label}_peer.asdf"));
                let rw = median_of(runs, || peer(&["codec-write", &peer_path.to_string_lossy(), label]))?;
                table.row(
                    &format!("write 256 MiB int32, {label}, no fsync"),
                    ow,
                    Some(("asdf-rs 0.2", rw)),
                );
                let rr = median_of(runs, || peer(&["codec-read", &p]))?;
                if rr.check != want as f64 {
                    bail!("{label}: asdf-rs sum {} want {want}", rr.check);
                }
                table.row(
                    &format!("open + sum 256 MiB int32, {label}"),
                    or,
                    Some(("asdf-rs 0.2", rr)),
                );
            }
        }
    }
    if picked.iter().any(|w| w == "tree") {
        let o_path = dir.join("tree_ours.asdf");
        let p_path = dir.join("tree_py.asdf");
        let (o, p) = (o_path.to_string_lossy(), p_path.to_string_lossy());
        let n = runs.max(7);
        let m = medians(
            n,
            &mut [&mut || ours(&["tree-write", &o]), &mut || python(&["tree-write", &p])],
        )?;
        let (ow, pw) = (m[0], m[1]);
        table.row(
            "write a tree of 20,000 mappings x 5 keys",
            ow,
            Some(("Python asdf 6.0", pw)),
        );
        let m = medians(
            n,
            &mut [
                &mut || ours(&["tree-open", &p]),
                &mut || python(&["tree-open", &p]),
                &mut || peer(&["tree-open", &p]),
                &mut || ours(&["tree-open-novalidate", &p]),
                &mut || ours(&["tree-validate", &p]),
                &mut || python(&["tree-validate", &p]),
            ],
        )?;
        let (oo, po, rn, on, ov, pv) = (m[0], m[1], m[2], m[3], m[4], m[5]);
        if oo.check != po.check {
            bail!("tree: ours touched {} scalars, Python {}", oo.check, po.check);
        }
        table.row(
            "open (validating) + touch every node",
            oo,
            Some(("Python asdf 6.0", po)),
        );
        if rn.check != oo.check {
            bail!("tree: asdf-rs touched {} scalars, ours {}", rn.check, oo.check);
        }
        table.row(
            "open (validating) + touch every node",
            oo,
            Some(("asdf-rs 0.2 (no validation)", rn)),
        );
        table.row(
            "open (not validating) + touch every node",
            on,
            Some(("asdf-rs 0.2 (no validation)", rn)),
        );
        table.row("validate the tree", ov, Some(("Python asdf 6.0", pv)));
    }
    // The limits, measured after the workloads (which made the 1 GiB file they read).
    let floors = if big.exists() {
        let f = Floors::measure(&big_s)?;
        f.print();
        Some(f)
    } else {
        println!("  limits: not measured (no {big_s}; run the write, sum or element workload)");
        None
    };
    table.print(floors.as_ref());
    if let Some(base) = BASELINE.get() {
        let rows = AGAINST.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        println!(
            "\nagainst {} (medians of the same runs, taking turns): ours / baseline per row",
            base.display()
        );
        println!(
            "  {:<60} {:>10} {:>10} {:>7}",
            "bench-child", "ours s", "base s", "ratio"
        );
        for (child, new, old) in rows.iter() {
            let ratio = new / old;
            let mark = if ratio > 1.1 { "  over 10% slower" } else { "" };
            println!(
                "  {child:<60} {:>10} {:>10} {:>7.3}{mark}",
                secs(*new),
                if old.is_nan() { "n/a".to_owned() } else { secs(*old) },
                ratio
            );
        }
    }
    Ok(())
}
