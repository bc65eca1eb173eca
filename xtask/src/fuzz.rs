//! `cargo xtask fuzz [--seconds N] [--runs N] [--seed N] [--max-len N] [TARGET...]`: seeds each cargo-fuzz target's corpus from the
//! conformance files, runs it for N seconds or N runs (stable toolchain, `--sanitizer none`), and prints
//! executions, coverage and crashes per target. A crash fails the task and names the artifact
//! to copy into `tests/fuzz-crashes/TARGET/`, where `tests/fuzz_replay.rs` replays it.
//! Every run appends its row to `target/fuzz-ledger.md` (executions are counted across runs).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result, bail};

const TARGETS: [&str; 11] = [
    "layout",
    "yaml",
    "codecs",
    "open_arrays",
    "update",
    "fits",
    "drafts",
    "frames",
    "remote",
    "regions",
    "chunked",
];

fn corpus_dir(target: &str) -> PathBuf {
    Path::new("target/fuzz-corpus").join(target)
}

fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, ext, out);
        } else if p.extension().is_some_and(|e| e == ext) {
            out.push(p);
        }
    }
}

/// Writes seed inputs for every target (files of at most 256 KiB).
fn seed() -> Result<()> {
    let conf = asdf_testdata::conformance_dir();
    let mut asdf_files = Vec::new();
    files(&conf, "asdf", &mut asdf_files);
    files(Path::new("examples/data"), "asdf", &mut asdf_files);
    asdf_files.retain(|p| std::fs::metadata(p).is_ok_and(|m| m.len() <= 256 << 10));
    let mut yaml_files = Vec::new();
    files(&conf.join("yaml-test-suite"), "yaml", &mut yaml_files);
    for t in TARGETS {
        std::fs::create_dir_all(corpus_dir(t))?;
    }
    let put = |t: &str, k: usize, bytes: &[u8]| std::fs::write(corpus_dir(t).join(format!("seed-{k:05}")), bytes);
    let mut n = [0usize; 11];
    for (k, p) in asdf_files.iter().enumerate() {
        let bytes = std::fs::read(p)?;
        put("layout", k, &bytes)?;
        put("open_arrays", k, &bytes)?;
        n[0] += 1;
        n[3] += 1;
        if bytes.len() <= 64 << 10 {
            put("fits", k, &asdf_testdata::fits::with_asdf_image(&bytes))?;
            n[5] += 1;
            // A script of whole answers, then one of every kind of misbehaviour.
            let mut scripted: Vec<u8> = if k % 2 == 0 {
                vec![0; 64]
            } else {
                (0..64u8).map(|i| i.wrapping_mul(37)).collect()
            };
            scripted.extend_from_slice(&bytes);
            put("remote", k, &scripted)?;
            n[8] += 1;
        }
        let Ok(r) = asdf_layout::Reader::open(bytes.as_slice()) else {
            continue;
        };
        if let Some(t) = r.tree_bytes() {
            put("yaml", k, t)?;
            n[1] += 1;
        }
        for i in 0..r.block_count() {
            let (Ok(b), Ok(stored)) = (r.block(i), r.read_stored(i)) else {
                continue;
            };
            if let Some(s) = asdf_conformance::fuzz::codec_seed(b.compression(), b.data_len(), &stored) {
                put("codecs", k * 100 + i, &s)?;
                n[2] += 1;
            }
        }
    }
    // Blosc2 frames written by C-Blosc2 (special chunks, delta, metalayers) for the codecs
    // target: the decoded size is the frame header's (big-endian, at byte 30).
    let mut frames = Vec::new();
    files(&conf.join("blosc2-frames/frames"), "b2frame", &mut frames);
    for (k, p) in frames.iter().enumerate() {
        let bytes = std::fs::read(p)?;
        let Some(size) = bytes
            .get(30..38)
            .map(|b| b.iter().fold(0u64, |a, x| (a << 8) | u64::from(*x)))
        else {
            continue;
        };
        if bytes.len() <= 256 << 10
            && let Some(s) = asdf_conformance::fuzz::codec_seed(asdf_layout::Label::BLS2, size, &bytes)
        {
            put("codecs", 200_000 + k, &s)?;
            n[2] += 1;
        }
    }
    // The drafts: historic `#ASDF 0.1.0` files (their first line replaced by the pick byte).
    let mut drafts = Vec::new();
    files(&conf.join("legacy"), "asdf", &mut drafts);
    for (k, p) in drafts.iter().enumerate() {
        let bytes = std::fs::read(p)?;
        if let Some(rest) = bytes.strip_prefix(b"#ASDF 0.1.0\n".as_slice())
            && bytes.len() <= 256 << 10
        {
            let mut v = vec![0u8];
            v.extend_from_slice(rest);
            put("drafts", k, &v)?;
            n[6] += 1;
        }
    }
    for (k, p) in frames.iter().enumerate() {
        let bytes = std::fs::read(p)?;
        if bytes.len() <= 256 << 10 {
            put("frames", k, &bytes)?;
            n[7] += 1;
        }
    }
    for (k, p) in yaml_files.iter().enumerate() {
        put("yaml", 100_000 + k, &std::fs::read(p)?)?;
        n[1] += 1;
    }
    for (k, s) in ["", "note", "a: b", "\u{1F600} é \t \\ \"'", "- [x, {y: z}]"]
        .iter()
        .enumerate()
    {
        put("update", k, s.as_bytes())?;
        n[4] += 1;
    }
    for (k, s) in asdf_conformance::fuzz::region_seeds().iter().enumerate() {
        put("regions", k, s.as_bytes())?;
        n[9] += 1;
    }
    for (k, s) in asdf_conformance::fuzz::chunked_seeds().iter().enumerate() {
        put("chunked", k, s)?;
        n[10] += 1;
    }
    println!(
        "seeds: {}",
        TARGETS
            .iter()
            .zip(n)
            .map(|(t, n)| format!("{t} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(())
}

/// From libFuzzer's log: (executions, coverage edges, features, corpus size, new units, peak
/// RSS MiB): the last status line (`#N ... cov: C ft: F corp: K/...`) and the final stats.
fn stats(log: &str) -> [u64; 6] {
    let mut out = [0u64; 6];
    let field = |line: &str, key: &str| -> Option<u64> {
        line.split(key)
            .nth(1)?
            .split_whitespace()
            .next()?
            .split('/')
            .next()?
            .parse()
            .ok()
    };
    for line in log.lines() {
        if line.starts_with('#') && line[1..].starts_with(|c: char| c.is_ascii_digit()) {
            out[1] = field(line, "cov: ").unwrap_or(out[1]);
            out[2] = field(line, "ft: ").unwrap_or(out[2]);
            out[3] = field(line, "corp: ").unwrap_or(out[3]);
        }
        out[0] = field(line, "stat::number_of_executed_units:").unwrap_or(out[0]);
        out[4] = field(line, "stat::new_units_added:").unwrap_or(out[4]);
        out[5] = field(line, "stat::peak_rss_mb:").unwrap_or(out[5]);
    }
    out
}

/// Appends a run's row to `target/fuzz-ledger.md`, so the executions of all runs on a machine
/// can be added up (the volume goal is counted across runs).
fn ledger(row: &str, max_len: u64) -> Result<()> {
    use std::io::Write as _;
    let path = Path::new("target/fuzz-ledger.md");
    let fresh = !path.exists();
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
    if fresh {
        writeln!(
            f,
            "| unix time | max_len | target | seconds | executions | exec/s | coverage (edges) | features | corpus | new units | peak RSS MiB | result |"
        )?;
        writeln!(f, "|---|---|---|---|---|---|---|---|---|---|---|---|")?;
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    writeln!(f, "| {now} | {max_len} {row}")?;
    Ok(())
}

/// A target's run: libFuzzer's output and the seconds it took.
type Finished = Result<(std::process::Output, u64)>;

pub fn fuzz(args: &[String]) -> Result<()> {
    let mut seconds = 60u64;
    let mut seed_arg: Option<u64> = None;
    let mut runs_arg: Option<u64> = None;
    let mut max_len = 262_144u64;
    let mut jobs = 1usize;
    let mut targets: Vec<String> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--seconds" {
            seconds = it.next().context("--seconds N")?.parse()?;
        } else if a == "--runs" {
            runs_arg = Some(it.next().context("--runs N")?.parse::<u64>()?);
        } else if a == "--jobs" {
            jobs = it.next().context("--jobs N")?.parse()?;
        } else if a == "--max-len" {
            max_len = it.next().context("--max-len N")?.parse()?;
        } else if a == "--seed" {
            seed_arg = Some(it.next().context("--seed N")?.parse::<u64>()?);
        } else if TARGETS.contains(&a.as_str()) {
            targets.push(a.clone());
        } else {
            bail!("unknown argument `{a}` (targets: {})", TARGETS.join(", "));
        }
    }
    if targets.is_empty() {
        targets = TARGETS.iter().map(|t| (*t).to_owned()).collect();
    }
    seed()?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let fuzz_cmd = |extra: &[&str]| {
        let mut c = Command::new(&cargo);
        c.args(["fuzz"]).args(extra);
        c
    };
    let status = fuzz_cmd(&["build", "--fuzz-dir", "fuzz", "--sanitizer", "none", "-O"]).status()?;
    if !status.success() {
        bail!("cargo fuzz build failed (is cargo-fuzz installed? `cargo install cargo-fuzz`)");
    }
    let mut crashes = Vec::new();
    println!(
        "| target | seconds | executions | exec/s | coverage (edges) | features | corpus | new units | peak RSS MiB | result |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    // Each target's command line, then the targets run `jobs` at a time (each libFuzzer
    // process is single-threaded; with a fixed seed and run count the inputs tried are the
    // same whatever runs beside it).
    let mut commands = Vec::new();
    for t in &targets {
        let corpus = corpus_dir(t);
        let artifacts = Path::new("target/fuzz-artifacts").join(t);
        std::fs::create_dir_all(&artifacts)?;
        let mut run: Vec<String> = [
            "run",
            "--fuzz-dir",
            "fuzz",
            "--sanitizer",
            "none",
            "-O",
            t.as_str(),
            &corpus.to_string_lossy(),
            "--",
            &format!("-max_total_time={seconds}"),
            "-rss_limit_mb=2048",
            "-timeout=20",
            &format!("-max_len={max_len}"),
            &format!("-artifact_prefix={}/", artifacts.display()),
            "-print_final_stats=1",
        ]
        .iter()
        .map(|a| (*a).to_owned())
        .collect();
        // A fixed seed and a number of runs (`--seed`, `--runs`, as CI runs it): the same
        // inputs are tried run after run, whatever the machine's speed (`--seconds` is then
        // only a cap).
        if let Some(s) = seed_arg {
            run.push(format!("-seed={s}"));
        }
        if let Some(n) = runs_arg {
            run.push(format!("-runs={n}"));
        }
        commands.push((t.clone(), artifacts, run));
    }
    // `jobs` workers take the next target as each finishes; results are reported in order.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done: std::sync::Mutex<Vec<Option<Finished>>> =
        std::sync::Mutex::new((0..commands.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, commands.len().max(1)) {
            scope.spawn(|| {
                loop {
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((_, _, run)) = commands.get(k) else { break };
                    let started = std::time::Instant::now();
                    let out = fuzz_cmd(&run.iter().map(String::as_str).collect::<Vec<_>>())
                        .output()
                        .map(|o| (o, started.elapsed().as_secs().max(1)))
                        .map_err(anyhow::Error::from);
                    if let Ok(mut d) = done.lock() {
                        d[k] = Some(out);
                    }
                }
            });
        }
    });
    let outcomes = done
        .into_inner()
        .map_err(|_| anyhow::anyhow!("a fuzzing worker panicked"))?;
    {
        let batch = &commands;
        for ((t, artifacts, _), outcome) in batch.iter().zip(outcomes) {
            let (out, took) = outcome.context("a fuzzing run was not started")??;
            let log = String::from_utf8_lossy(&out.stderr).into_owned();
            std::fs::write(artifacts.join("last-run.log"), &log)?;
            let [execs, cov, ft, corp, new, rss] = stats(&log);
            let result = if out.status.success() {
                "0 crashes".to_owned()
            } else {
                let art = log
                    .lines()
                    .find_map(|l| l.split("Test unit written to ").nth(1))
                    .unwrap_or("(see log)")
                    .to_owned();
                crashes.push(format!("{t}: {art}"));
                format!("CRASH {art}")
            };
            let row = format!(
                "| {t} | {took} | {execs} | {} | {cov} | {ft} | {corp} | {new} | {rss} | {result} |",
                execs / took
            );
            println!("{row}");
            ledger(&row, max_len)?;
        }
    }
    if !crashes.is_empty() {
        bail!(
            "fuzzing found crashes (logs in target/fuzz-artifacts/TARGET/last-run.log); copy each input into \
             tests/fuzz-crashes/TARGET/ and fix it:\n  {}",
            crashes.join("\n  ")
        );
    }
    Ok(())
}
