//! Every single-byte flip of the small conformance files (each byte XOR 0x01 and XOR 0xFF)
//! through the layout reader and the facade (open with and without validation, every array's
//! view, elements and streamed reads, a write back): no panic, every case within a time
//! bound, and this process's peak memory within a bound. (The fuzz targets' bodies, so that
//! the sweep and the fuzzers test the same thing.)

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stdout)]

use std::time::{Duration, Instant};

use asdf_conformance::{conformance_dir, files_with_ext, fuzz};

/// Peak resident memory of this process, MiB (Linux; 0 elsewhere).
fn peak_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kib| kib / 1024.0)
}

#[test]
fn every_single_byte_flip_of_small_files() {
    asdf_testdata::needs_conformance!();
    let mut files: Vec<_> = files_with_ext(&conformance_dir(), "asdf")
        .into_iter()
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() <= 1200))
        .collect();
    files.sort();
    assert!(files.len() >= 40, "{} small files", files.len());
    let (mut cases, mut slowest) = (0u64, Duration::ZERO);
    let start = Instant::now();
    for p in &files {
        let original = std::fs::read(p).unwrap();
        for i in 0..original.len() {
            for mask in [0x01u8, 0xff] {
                let mut bytes = original.clone();
                bytes[i] ^= mask;
                let t = Instant::now();
                let r = std::panic::catch_unwind(|| {
                    fuzz::layout(&bytes);
                    fuzz::open_arrays(&bytes);
                });
                let took = t.elapsed();
                assert!(r.is_ok(), "{}: byte {i} ^ {mask:#04x} panics", p.display());
                assert!(
                    took < Duration::from_secs(5),
                    "{}: byte {i} ^ {mask:#04x} took {took:?}",
                    p.display()
                );
                slowest = slowest.max(took);
                cases += 1;
            }
        }
    }
    let peak = peak_mib();
    println!(
        "byte flips: {} files, {cases} flipped copies, 0 panics, slowest {slowest:?}, total {:?}, peak {peak:.0} MiB",
        files.len(),
        start.elapsed()
    );
    assert!(cases > 50_000, "{cases} cases");
    assert!(peak < 1024.0, "peak {peak:.0} MiB");
}
