//! C-Blosc2 (2.11.0, built from source by blosc2-src) against blusc (asdf-layout's `bls2`
//! codec): which decodes the 70 conformance frames exactly, and how fast each decodes and
//! encodes a 256 MiB float64 array in 64 chunks of 4 MiB (blosclz, shuffle, level 5, one
//! thread each). Usage: `cblosc2-eval CONFORMANCE_DIR`.

use std::ffi::c_void;
use std::time::Instant;

use asdf_layout::compression::{Blosc2, Codec as _};
use md5::{Digest as _, Md5};

/// The frame decoded by C-Blosc2, chunk by chunk.
fn c_decode(frame: &[u8], nbytes: usize) -> Result<Vec<u8>, String> {
    let mut buf = frame.to_vec();
    let len = i64::try_from(buf.len()).map_err(|e| e.to_string())?;
    // SAFETY: `buf` outlives the call and C-Blosc2 copies it (`copy = true`); the schunk it
    // returns is checked for null before use and freed once.
    unsafe {
        let sc = blosc2_src::blosc2_schunk_from_buffer(buf.as_mut_ptr(), len, true);
        if sc.is_null() {
            return Err("blosc2_schunk_from_buffer refused the frame".to_owned());
        }
        let mut out = vec![0u8; nbytes];
        let mut at = 0usize;
        for i in 0..(*sc).nchunks {
            let room = i32::try_from(nbytes - at).unwrap_or(i32::MAX);
            // SAFETY: `out[at..]` has `room` bytes of space.
            let n = blosc2_src::blosc2_schunk_decompress_chunk(sc, i, out[at..].as_mut_ptr().cast::<c_void>(), room);
            if n < 0 {
                blosc2_src::blosc2_schunk_free(sc);
                return Err(format!("chunk {i}: error {n}"));
            }
            at += usize::try_from(n).unwrap_or(0);
        }
        blosc2_src::blosc2_schunk_free(sc);
        if at != nbytes {
            return Err(format!("{at} bytes, not {nbytes}"));
        }
        Ok(out)
    }
}

/// `data` compressed by C-Blosc2 in chunks of `chunk` bytes (the chunks only: no frame).
fn c_encode(data: &[u8], chunk: usize) -> usize {
    let mut cp = blosc2_src::BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 8;
    cp.clevel = 5;
    cp.nthreads = 1;
    let mut total = 0;
    let mut dest = vec![0u8; chunk + 64];
    // SAFETY: the context is created from plain parameters and freed once; each call writes
    // at most `dest.len()` bytes, which it is told.
    unsafe {
        let ctx = blosc2_src::blosc2_create_cctx(cp);
        for c in data.chunks(chunk) {
            let n = blosc2_src::blosc2_compress_ctx(
                ctx,
                c.as_ptr().cast::<c_void>(),
                i32::try_from(c.len()).unwrap_or(0),
                dest.as_mut_ptr().cast::<c_void>(),
                i32::try_from(dest.len()).unwrap_or(0),
            );
            total += usize::try_from(n).unwrap_or(0);
        }
        blosc2_src::blosc2_free_ctx(ctx);
    }
    total
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    // SAFETY: called once, before any other C-Blosc2 call.
    unsafe { blosc2_src::blosc2_init() };
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--one") {
        let frame = std::fs::read(&args[2]).expect("frame");
        let n: usize = args[3].parse().expect("size");
        match c_decode(&frame, n) {
            Ok(out) => println!("{:x}", Md5::digest(&out)),
            Err(e) => println!("error: {e}"),
        }
        return;
    }
    let dir = std::path::PathBuf::from(std::env::args().nth(1).expect("usage: cblosc2-eval CONFORMANCE_DIR"))
        .join("blosc2-frames");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("MANIFEST.json")).expect("MANIFEST.json")).expect("json");
    let ours = Blosc2::default();
    let (mut c_exact, mut b_exact, mut c_fail) = (0, 0, Vec::new());
    let cases = manifest["cases"].as_array().expect("cases");
    for case in cases {
        let name = case["name"].as_str().unwrap_or_default();
        let n = usize::try_from(case["nbytes"].as_u64().unwrap_or(0)).unwrap_or(0);
        let want = case["md5"].as_str().unwrap_or_default();
        let frame = std::fs::read(dir.join(format!("frames/{name}.b2frame"))).expect("frame");
        // C-Blosc2 in a child process each: a crash is a result, not the end of the run.
        let path = dir.join(format!("frames/{name}.b2frame"));
        let child = std::process::Command::new(std::env::current_exe().expect("exe"))
            .arg("--one")
            .arg(&path)
            .arg(n.to_string())
            .output()
            .expect("child");
        let said = String::from_utf8_lossy(&child.stdout).trim().to_owned();
        if !child.status.success() {
            let why = String::from_utf8_lossy(&child.stderr)
                .lines()
                .last()
                .unwrap_or_default()
                .to_owned();
            c_fail.push(format!("{name}: crashed ({}; {why})", child.status));
        } else if said == want {
            c_exact += 1;
        } else {
            c_fail.push(format!("{name}: {said}"));
        }
        let mut out = vec![0u8; n];
        if ours.decode(&frame, &mut out).is_ok() && format!("{:x}", Md5::digest(&out)) == want {
            b_exact += 1;
        }
    }
    println!("| decoder | conformance frames exact (of {}) |", cases.len());
    println!("|---|---|");
    println!("| C-Blosc2 2.11.0 (blosc2-src) | {c_exact} |");
    println!("| blusc 0.0.7 + asdf-layout's frame reader | {b_exact} |");
    for f in &c_fail {
        println!("  C-Blosc2: {f}");
    }

    // Speed: 256 MiB float64, 64 chunks of 4 MiB, one thread each, medians of 5.
    let n = 256 << 17;
    let data: Vec<u8> = (0..n)
        .flat_map(|i| ((f64::from(i) * 0.001).sin() * 1000.0).round().to_le_bytes())
        .collect();
    let mut frame = Vec::new();
    ours.encode(&data, &mut frame).expect("encode");
    let time = |f: &mut dyn FnMut()| {
        let t = Instant::now();
        f();
        t.elapsed().as_secs_f64()
    };
    let (mut cd, mut bd, mut ce, mut be) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut c_size = 0;
    for _ in 0..5 {
        cd.push(time(&mut || {
            assert!(c_decode(&frame, data.len()).expect("C decode") == data)
        }));
        // blusc on one thread: a range over the whole frame decodes chunk after chunk.
        bd.push(time(&mut || {
            assert!(ours.decode_range(&frame, data.len(), 0..data.len()).expect("decode") == data);
        }));
        ce.push(time(&mut || c_size = c_encode(&data, 4 << 20)));
        be.push(time(&mut || {
            let mut out = Vec::new();
            ours.encode(&data, &mut out).expect("encode");
            std::hint::black_box(out);
        }));
    }
    let mb = |s: f64| data.len() as f64 / s / 1e6;
    let (cd, bd, ce, be) = (median(cd), median(bd), median(ce), median(be));
    println!();
    println!("| 256 MiB float64, 64 x 4 MiB chunks, 1 thread | C-Blosc2 2.11.0 | blusc 0.0.7 | blusc / C |");
    println!("|---|---|---|---|");
    println!(
        "| decode | {:.0} ms ({:.0} MB/s) | {:.0} ms ({:.0} MB/s) | {:.2}x the time |",
        cd * 1e3,
        mb(cd),
        bd * 1e3,
        mb(bd),
        bd / cd
    );
    println!(
        "| encode | {:.0} ms ({:.0} MB/s) | {:.0} ms ({:.0} MB/s) | {:.2}x the time |",
        ce * 1e3,
        mb(ce),
        be * 1e3,
        mb(be),
        be / ce
    );
    println!(
        "| compressed | {:.1} MiB | {:.1} MiB | |",
        c_size as f64 / 1048576.0,
        frame.len() as f64 / 1048576.0
    );
}
