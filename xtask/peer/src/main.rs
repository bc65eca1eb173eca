//! One benchmark workload with the peer crate asdf-rs 0.2, in this process; prints one JSON
//! line (seconds, peak RSS in KiB, a check value), as `cargo xtask bench-child` does.

use std::time::Instant;

use asdf::{AsdfBuilder, AsdfFile, Compression};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

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
    println!("{}", serde_json::json!({"secs": secs, "rss_kib": peak_rss_kib(), "check": check}));
}

const BIG_ELEMENTS: usize = 1 << 27;
const CODEC_ELEMENTS: usize = 1 << 26;

fn codec_value(i: usize) -> i32 {
    let noise = ((i as u64).wrapping_mul(2_654_435_761) >> 13) & 7;
    (i % 1000) as i32 + noise as i32
}

fn count(v: asdf::Value<'_>) -> usize {
    if v.is_mapping() {
        v.entries().map(|(_, x)| count(x)).sum()
    } else if v.is_sequence() {
        v.items().map(count).sum()
    } else {
        1
    }
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).cloned().unwrap_or_default();
    match arg(0).as_str() {
        "write" => {
            let data: Vec<f64> = (0..BIG_ELEMENTS).map(|i| i as f64 * 0.5).collect();
            let t = Instant::now();
            let mut b = AsdfBuilder::new();
            b.set_array("data", &data)?;
            b.write_to_path(arg(1))?;
            report(t.elapsed().as_secs_f64(), BIG_ELEMENTS as f64);
        }
        "sum" => {
            let t = Instant::now();
            let f = AsdfFile::open(arg(1))?;
            let s: f64 = f.read_array_of::<f64>("data")?.iter().sum();
            report(t.elapsed().as_secs_f64(), s);
        }
        "element" => {
            // Its only way to one element: the raw (mapped) block bytes.
            let t = Instant::now();
            let f = AsdfFile::open(arg(1))?;
            let b = f.block_data(0)?;
            let i = BIG_ELEMENTS / 2 + 7;
            let x = f64::from_le_bytes(b[i * 8..i * 8 + 8].try_into()?);
            report(t.elapsed().as_secs_f64(), x);
        }
        "codec-write" => {
            let c = match arg(2).as_str() {
                "zlib" => Compression::Zlib,
                "lz4" => Compression::Lz4,
                other => return Err(format!("asdf-rs has no {other}").into()),
            };
            let data: Vec<i32> = (0..CODEC_ELEMENTS).map(codec_value).collect();
            let t = Instant::now();
            let mut b = AsdfBuilder::new().with_compression(c);
            b.set_array("data", &data)?;
            b.write_to_path(arg(1))?;
            report(t.elapsed().as_secs_f64(), std::fs::metadata(arg(1))?.len() as f64);
        }
        "codec-read" => {
            let t = Instant::now();
            let f = AsdfFile::open(arg(1))?;
            let s: i64 = f.read_array_of::<i32>("data")?.iter().map(|x| i64::from(*x)).sum();
            report(t.elapsed().as_secs_f64(), s as f64);
        }
        "tree-open" => {
            let t = Instant::now();
            let f = AsdfFile::open(arg(1))?;
            let tree = f.tree()?.ok_or("no tree")?;
            let n = count(tree.get("rows").ok_or("no rows")?);
            report(t.elapsed().as_secs_f64(), n as f64);
        }
        other => return Err(format!("unknown mode {other}").into()),
    }
    Ok(())
}
