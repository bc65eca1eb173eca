//! Shared by the hostile-input tests: files built byte by byte, and `asdf-cli` run as a child
//! whose peak resident memory and time are measured.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a child run gave.
#[derive(Debug)]
pub struct Outcome {
    /// Exit code (-1: killed by a signal, whose number is in `signal`).
    pub code: i32,
    /// Signal that ended the child, if any.
    pub signal: Option<i32>,
    /// Standard output and standard error.
    /// Standard output (its first 256 KiB and last 4 KiB) and error.
    pub stdout: String,
    /// How many bytes the child wrote to standard output.
    pub stdout_len: usize,
    pub stderr: String,
    /// Peak resident set size, MiB.
    pub peak_mib: f64,
    /// Wall time.
    pub secs: f64,
}

/// Runs `asdf-cli ARGS` with a wall-clock limit (killed past it, which fails the test) and
/// measures its peak RSS with `wait4`. The figure is an upper bound: Linux starts a spawned
/// child's `ru_maxrss` from this (parent) process's own high-water mark, so tests keep this
/// process small (no big file read whole, child output kept only in part).
// The child is reaped by `wait4` (for its resource usage), which the lint does not see.
#[allow(clippy::zombie_processes)]
pub fn run_measured(args: &[&str], limit: Duration) -> Outcome {
    let t = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_asdf-cli"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = i32::try_from(child.id()).unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    // Only the head and the tail of what the child writes are kept: a test process that
    // grew would raise its children's measured peak (a spawned child starts from the
    // parent's high-water mark in `ru_maxrss`).
    fn keep(mut r: impl std::io::Read) -> (Vec<u8>, usize) {
        const HEAD: usize = 256 << 10;
        const TAIL: usize = 4 << 10;
        let (mut head, mut tail, mut total) = (Vec::new(), std::collections::VecDeque::new(), 0usize);
        let mut buf = vec![0u8; 64 << 10];
        loop {
            let n = match r.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            total += n;
            for &b in &buf[..n] {
                if head.len() < HEAD {
                    head.push(b);
                } else {
                    tail.push_back(b);
                    if tail.len() > TAIL {
                        tail.pop_front();
                    }
                }
            }
        }
        if !tail.is_empty() {
            head.extend_from_slice(b"\n[...]\n");
            head.extend(tail);
        }
        (head, total)
    }
    let so = std::thread::spawn(move || keep(&mut out));
    let se = std::thread::spawn(move || keep(&mut err));
    let mut status = 0i32;
    // SAFETY: rusage is plain data; zeroed is a valid value for it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `pid` is our own child, not yet reaped; `status` and `usage` are valid for writes.
        let r = unsafe { libc::wait4(pid, &raw mut status, libc::WNOHANG, &raw mut usage) };
        if r == pid {
            break;
        }
        assert!(r == 0, "wait4 failed");
        if t.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("asdf-cli {args:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let secs = t.elapsed().as_secs_f64();
    let (so, stdout_len) = so.join().unwrap();
    let stdout = String::from_utf8_lossy(&so).into_owned();
    let stderr = String::from_utf8_lossy(&se.join().unwrap().0).into_owned();
    let (code, signal) = if libc::WIFEXITED(status) {
        (libc::WEXITSTATUS(status), None)
    } else {
        (-1, Some(libc::WTERMSIG(status)))
    };
    Outcome {
        code,
        signal,
        stdout,
        stdout_len,
        stderr,
        // ru_maxrss is in KiB on Linux.
        #[allow(clippy::cast_precision_loss)]
        peak_mib: usage.ru_maxrss as f64 / 1024.0,
        secs,
    }
}

/// A fresh directory under the target directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The header lines and a tree (YAML document) of a 1.5.0 file.
pub fn head(tree_body: &str) -> Vec<u8> {
    format!(
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n{tree_body}...\n"
    )
    .into_bytes()
}

/// A block: header (48 bytes) then `stored`, with the given label, data_size and checksum.
pub fn block(label: &[u8; 4], stored: &[u8], data_size: u64, checksum: [u8; 16]) -> Vec<u8> {
    let mut b = vec![0xd3, b'B', b'L', b'K'];
    b.extend_from_slice(&48u16.to_be_bytes());
    b.extend_from_slice(&0u32.to_be_bytes());
    b.extend_from_slice(label);
    b.extend_from_slice(&(stored.len() as u64).to_be_bytes());
    b.extend_from_slice(&(stored.len() as u64).to_be_bytes());
    b.extend_from_slice(&data_size.to_be_bytes());
    b.extend_from_slice(&checksum);
    b.extend_from_slice(stored);
    b
}

/// A zstd frame of `n` zero bytes made of RLE blocks (4 bytes per 128 KiB): a real "bomb",
/// written by hand from RFC 8878 so that making it costs nothing.
pub fn zstd_zeros(n: u64) -> Vec<u8> {
    const MAX: u64 = 128 << 10;
    let mut f = vec![0x28, 0xb5, 0x2f, 0xfd];
    // Frame header descriptor: no content size, not single-segment, no checksum, no dictionary;
    // window descriptor: 2^17 bytes.
    f.push(0x00);
    f.push((17 - 10) << 3);
    let mut left = n;
    loop {
        let size = left.min(MAX);
        left -= size;
        let last = u32::from(left == 0);
        // Block header: last flag, type 1 (RLE), size; then the byte to repeat.
        let h = last | (1 << 1) | (u32::try_from(size).unwrap() << 3);
        f.extend_from_slice(&h.to_le_bytes()[..3]);
        f.push(0);
        if left == 0 {
            break;
        }
    }
    f
}

/// Writes `bytes` to `dir/name` and returns the path as a string.
pub fn put(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p.to_string_lossy().into_owned()
}
