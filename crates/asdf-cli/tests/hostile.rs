//! Hostile files of a few hundred bytes against every command that reads whole files: each
//! test builds its file, runs `asdf-cli` as a child and checks the outcome (a clean error or
//! result: no signal, no panic), its peak resident memory and its time. Each prints a row of
//! the table in the reliability notes (`cargo test -p asdf-tools --test hostile_suite -- --nocapture`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stdout)]

use crate::support;

use std::time::Duration;

use support::{Outcome, block, head, put, run_measured, scratch, zstd_zeros};

const GIB: u64 = 1 << 30;

fn row(class: &str, cmd: &str, o: &Outcome) {
    let first = o.stderr.lines().chain(o.stdout.lines()).last().unwrap_or("").to_owned();
    println!(
        "| {class} | {cmd} | exit {} | {:.1} MiB | {:.2} s | {} |",
        o.code,
        o.peak_mib,
        o.secs,
        first.chars().take(90).collect::<String>()
    );
}

/// A clean ending: an exit code of 0, 1 or 2, no signal, no panic message.
fn clean(o: &Outcome, what: &str) {
    assert!(o.signal.is_none(), "{what}: killed by signal {:?}", o.signal);
    assert!(matches!(o.code, 0..=2), "{what}: exit {}", o.code);
    assert!(!o.stderr.contains("panicked"), "{what}: panicked:\n{}", o.stderr);
}

fn uint8_array(n: u64) -> String {
    format!("data: !core/ndarray-1.0.0 {{source: 0, datatype: uint8, byteorder: little, shape: [{n}]}}\n")
}

#[test]
fn a_block_claiming_12_gib_that_holds_a_few_bytes() {
    let d = scratch("claim12");
    let claim = 12 * GIB;
    let mut f = head(&uint8_array(claim));
    f.extend(block(b"zstd", &zstd_zeros(400), claim, [0; 16]));
    let p = put(&d, "claim.asdf", &f);
    assert!(f.len() < 600, "{} bytes", f.len());
    for cmd in ["verify", "to-json", "to-yaml", "info"] {
        let o = run_measured(&[cmd, &p], Duration::from_secs(60));
        row("block claims 12 GiB, holds 400 B", cmd, &o);
        clean(&o, cmd);
        assert!(o.peak_mib <= 64.0, "{cmd}: {:.1} MiB", o.peak_mib);
    }
    let o = run_measured(&["verify", &p], Duration::from_secs(60));
    assert_eq!(o.code, 1);
    assert!(
        o.stdout.contains("does not match the block's data_size"),
        "{}",
        o.stdout
    );
}

#[test]
fn a_block_that_really_decodes_to_10_gib() {
    let d = scratch("bomb10");
    let n = 10 * GIB;
    let mut f = head(&uint8_array(n));
    f.extend(block(b"zstd", &zstd_zeros(n), n, [0; 16]));
    let p = put(&d, "bomb.asdf", &f);
    let o = run_measured(&["verify", &p], Duration::from_secs(300));
    row("zstd bomb, 10 GiB decoded", "verify", &o);
    clean(&o, "verify");
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(o.peak_mib <= 256.0, "verify: {:.1} MiB", o.peak_mib);
}

#[test]
fn datatype_sizes_that_wrap() {
    let d = scratch("wrap");
    let cases = [
        (
            "ucs4 of 2^62 characters",
            "data: !core/ndarray-1.0.0 {source: 0, datatype: [ucs4, 4611686018427387904], byteorder: little, shape: [1]}\n",
        ),
        (
            "record field of shape [2^61+1]",
            "data: !core/ndarray-1.0.0 {source: 0, datatype: [{name: a, datatype: float64, shape: [2305843009213693953]}], byteorder: little, shape: [1]}\n",
        ),
        (
            "shape product wraps to 0",
            "data: !core/ndarray-1.0.0 {source: 0, datatype: float64, byteorder: little, shape: [4294967296, 4294967296, 0]}\n",
        ),
        (
            "shape product wraps",
            "data: !core/ndarray-1.0.0 {source: 0, datatype: float64, byteorder: little, shape: [4294967296, 4294967296]}\n",
        ),
        (
            "strides overflow",
            "data: !core/ndarray-1.0.0 {source: 0, datatype: float64, byteorder: little, shape: [4294967296, 4294967296], strides: [9223372036854775807, 9223372036854775807]}\n",
        ),
        (
            "offset near 2^63",
            "data: !core/ndarray-1.0.0 {source: 0, datatype: float64, byteorder: little, shape: [2], offset: 9223372036854775807}\n",
        ),
    ];
    for (i, (what, tree)) in cases.iter().enumerate() {
        let mut f = head(tree);
        f.extend(block(&[0; 4], &[7u8; 64], 64, [0; 16]));
        let p = put(&d, &format!("wrap{i}.asdf"), &f);
        for cmd in ["verify", "to-json", "to-yaml", "info", "validate"] {
            let o = run_measured(&[cmd, &p], Duration::from_secs(60));
            row(what, cmd, &o);
            clean(&o, &format!("{what}: {cmd}"));
            assert!(o.peak_mib <= 64.0, "{what}: {cmd}: {:.1} MiB", o.peak_mib);
            if cmd == "verify" {
                assert_eq!(o.code, 1, "{what}: verify must report the array: {}", o.stdout);
            }
        }
    }
}

#[test]
fn zero_strides_over_2e8_elements() {
    let d = scratch("zerostride");
    let tree = "data: !core/ndarray-1.0.0 {source: 0, datatype: float64, byteorder: little, shape: [20000, 10000], strides: [0, 0]}\n";
    let mut f = head(tree);
    f.extend(block(&[0; 4], &1.5f64.to_le_bytes(), 8, [0; 16]));
    let p = put(&d, "zs.asdf", &f);
    assert!(f.len() < 500);
    let o = run_measured(&["verify", &p], Duration::from_secs(60));
    row("zero strides, 2e8 elements", "verify", &o);
    clean(&o, "verify");
    assert_eq!(o.code, 0, "{}", o.stdout);
    assert!(o.peak_mib <= 64.0, "verify: {:.1} MiB", o.peak_mib);
    for cmd in ["info", "validate"] {
        let o = run_measured(&[cmd, &p], Duration::from_secs(60));
        row("zero strides, 2e8 elements", cmd, &o);
        clean(&o, cmd);
        assert!(o.peak_mib <= 64.0, "{cmd}: {:.1} MiB", o.peak_mib);
    }
}

#[test]
fn twenty_thousand_dimensions() {
    let d = scratch("ndim");
    let dims = vec!["1"; 20_000].join(", ");
    let tree =
        format!("data: !core/ndarray-1.0.0 {{source: 0, datatype: uint8, byteorder: little, shape: [{dims}]}}\n");
    let mut f = head(&tree);
    f.extend(block(&[0; 4], &[1], 1, [0; 16]));
    let p = put(&d, "ndim.asdf", &f);
    for cmd in ["to-yaml", "to-json", "verify", "info"] {
        let o = run_measured(&[cmd, &p], Duration::from_secs(60));
        row("20,000 dimensions", cmd, &o);
        clean(&o, cmd);
        assert!(o.peak_mib <= 64.0, "{cmd}: {:.1} MiB", o.peak_mib);
    }
    let o = run_measured(&["verify", &p], Duration::from_secs(60));
    assert_eq!(o.code, 1);
    assert!(o.stdout.contains("dimensions"), "{}", o.stdout);
}

/// A small valid file with one block (the bundled example).
fn sample(dir: &std::path::Path, name: &str) -> String {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/data/small.asdf");
    put(dir, name, &std::fs::read(src).unwrap())
}

#[test]
fn a_closed_stdout_ends_quietly() {
    use std::io::Read as _;
    use std::process::{Command, Stdio};
    let d = scratch("pipe");
    // Enough output that the reader is gone before it ends.
    let rows: String = (0..20_000).map(|i| format!("  k{i}: {i}\n")).collect();
    let p = put(&d, "many.asdf", &head(&rows));
    for cmd in [
        &["to-json", &p][..],
        &["to-yaml", &p],
        &["info", &p, "--max-rows", "0"],
        &["search", &p, "--key", "k"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_asdf-cli"))
            .args(cmd)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = [0u8; 10];
        child.stdout.take().unwrap().read_exact(&mut first).unwrap();
        // stdout is dropped: the pipe is closed with most of the output unread.
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        println!(
            "| closed stdout | {} | exit {:?} | {} |",
            cmd[0],
            out.status.code(),
            err.trim()
        );
        assert_eq!(out.status.code(), Some(0), "{cmd:?}: {err}");
        assert!(
            !err.contains("panicked") && !err.contains("Broken pipe"),
            "{cmd:?}: {err}"
        );
    }
}

#[test]
fn outputs_that_are_inputs_are_refused() {
    let d = scratch("outin");
    let p = sample(&d, "x.asdf");
    let before = std::fs::read(&p).unwrap();
    for cmd in ["to-json", "to-yaml"] {
        let o = run_measured(&[cmd, &p, "-o", &p], Duration::from_secs(60));
        row("output is the input", cmd, &o);
        assert_eq!(o.code, 1);
        assert!(o.stderr.contains("refusing to write over"), "{}", o.stderr);
        assert_eq!(std::fs::read(&p).unwrap(), before);
    }
    // explode's first part would be the input.
    let part = sample(&d, "y0000.asdf");
    let out = d.join("y.asdf").to_string_lossy().into_owned();
    let o = run_measured(&["explode", &part, "-o", &out], Duration::from_secs(60));
    row("explode part is the input", "explode", &o);
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert_eq!(std::fs::read(&part).unwrap(), before);
    assert!(!std::path::Path::new(&out).exists());
    // defragment over its own input is staged: the result replaces it only when complete.
    let o = run_measured(&["defragment", &p, "-o", &p], Duration::from_secs(60));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = run_measured(&["verify", &p], Duration::from_secs(60));
    assert_eq!(o.code, 0, "{}", o.stdout);
    let o = run_measured(&["diff", &p, &put(&d, "orig.asdf", &before)], Duration::from_secs(60));
    assert_eq!(o.code, 0, "{}", o.stdout);
}

#[test]
fn a_temporary_file_of_a_killed_run_is_cleaned() {
    let d = scratch("stale");
    let p = sample(&d, "z.asdf");
    // A temporary file named as a write of z.asdf by a process that is gone.
    // Stale means unlocked and older than a minute (not a PID missing from /proc).
    let stale = d.join(".z.asdf.4194303.1700000000000000000.tmp");
    std::fs::write(&stale, vec![0u8; 4096]).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&stale)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
    let young = d.join(".z.asdf.4194303.1700000000000000001.tmp");
    std::fs::write(&young, vec![0u8; 16]).unwrap();
    let mine = d.join(".z.asdf.notapid.tmp");
    std::fs::write(&mine, b"kept").unwrap();
    let o = run_measured(&["defragment", &p, "-o", &p], Duration::from_secs(60));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(!stale.exists(), "stale temporary file left");
    assert!(
        young.exists(),
        "a temporary of the last minute was removed (its writer may be starting)"
    );
    assert!(mine.exists(), "a file of another shape was removed");
}

#[cfg(unix)]
#[test]
fn references_through_symlinks_and_to_fifos() {
    let d = scratch("escape");
    let inner = d.join("dir");
    std::fs::create_dir_all(&inner).unwrap();
    // A secret outside the file's directory, and a link to it inside.
    let secret = sample(&d, "secret.asdf");
    std::os::unix::fs::symlink(&secret, inner.join("link.asdf")).unwrap();
    let tree = "data: !core/ndarray-1.0.0 {source: link.asdf, datatype: float64, byteorder: little, shape: [1]}\n";
    let p = put(&inner, "main.asdf", &head(tree));
    let o = run_measured(&["to-json", &p], Duration::from_secs(60));
    row("source through a symlink out of the directory", "to-json", &o);
    clean(&o, "to-json");
    assert!(o.stderr.contains("outside the file's directory"), "{}", o.stderr);
    let o = run_measured(
        &["implode", &p, "-o", &inner.join("out.asdf").to_string_lossy()],
        Duration::from_secs(60),
    );
    assert_eq!(o.code, 1, "{}", o.stdout);
    // A FIFO as a source, and as the file itself: refused at once, no hang.
    let fifo = inner.join("fifo.asdf");
    let c = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let tree = "data: !core/ndarray-1.0.0 {source: fifo.asdf, datatype: float64, byteorder: little, shape: [1]}\n";
    let p = put(&inner, "f.asdf", &head(tree));
    for args in [vec!["to-json", p.as_str()], vec!["verify", p.as_str()]] {
        let o = run_measured(&args, Duration::from_secs(20));
        row("source is a FIFO", args[0], &o);
        clean(&o, args[0]);
    }
    let fifo_s = fifo.to_string_lossy().into_owned();
    let o = run_measured(&["info", &fifo_s], Duration::from_secs(20));
    row("the file is a FIFO", "info", &o);
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("not a regular file"), "{}", o.stderr);
}

/// Three blocks: an ndarray names block 0, an extension's tag names blocks 1 and 2 by index
/// (as asdf-zarr's chunk_block_map does).
fn blocks_named_by_an_extension(checksum1: [u8; 16]) -> Vec<u8> {
    let tree = "a: !core/ndarray-1.0.0 {source: 0, datatype: uint8, byteorder: little, shape: [4]}\n\
                chunks: !<asdf://example.org/tags/chunk_block_map-1.0.0> {'0': 1, '1': 2}\n";
    let mut f = head(tree);
    f.extend(block(&[0; 4], &[1, 2, 3, 4], 4, [0; 16]));
    f.extend(block(&[0; 4], b"first chunk", 11, checksum1));
    f.extend(block(&[0; 4], b"second chunk!", 13, [0; 16]));
    f
}

fn block_data(p: &str) -> Vec<Vec<u8>> {
    let f = asdf::Open::path(p)
        .options(asdf::OpenOptions::default().validate(false))
        .open()
        .unwrap();
    (0..f.source().layout().block_count())
        .map(|i| f.source().layout().read_data(i).unwrap().into_owned())
        .collect()
}

#[test]
fn blocks_named_only_by_an_extension_survive_rewrites() {
    let d = scratch("extblocks");
    let p = put(&d, "z.asdf", &blocks_named_by_an_extension([0; 16]));
    let want = block_data(&p);
    assert_eq!(want.len(), 3);
    for (cmd, extra) in [
        ("defragment", vec![]),
        ("defragment", vec!["-c", "zlib"]),
        ("implode", vec![]),
    ] {
        let out = d
            .join(format!("out-{cmd}-{}.asdf", extra.len()))
            .to_string_lossy()
            .into_owned();
        let mut args = vec![cmd, p.as_str(), "-o", out.as_str()];
        args.extend(extra.iter().copied());
        let o = run_measured(&args, Duration::from_secs(60));
        row("blocks named by an extension tag", cmd, &o);
        assert_eq!(o.code, 0, "{}", o.stderr);
        assert_eq!(block_data(&out), want, "{cmd} {extra:?}: blocks lost or moved");
        let t = asdf::Open::path(&out)
            .options(asdf::OpenOptions::default().validate(false))
            .open()
            .unwrap();
        assert_eq!(t.get("/chunks/1").unwrap().as_i64(), Some(2));
        assert_eq!(t.array("/a").and_then(|a| a.read::<Vec<u8>>()).unwrap(), [1, 2, 3, 4]);
    }
    // Exploded form has no place for them: refused, naming them, nothing written.
    let out = d.join("ex.asdf").to_string_lossy().into_owned();
    let o = run_measured(&["explode", &p, "-o", &out], Duration::from_secs(60));
    row("blocks named by an extension tag", "explode", &o);
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("blocks [1, 2]"), "{}", o.stderr);
    assert!(!std::path::Path::new(&out).exists());
}

#[test]
fn a_bad_checksum_is_never_rewritten_as_a_good_one() {
    let d = scratch("badsum");
    let p = put(&d, "bad.asdf", &blocks_named_by_an_extension([0xab; 16]));
    for (cmd, extra) in [
        ("defragment", vec![]),
        ("defragment", vec!["-c", "lz4"]),
        ("implode", vec![]),
    ] {
        let out = d
            .join(format!("out-{cmd}-{}.asdf", extra.len()))
            .to_string_lossy()
            .into_owned();
        let mut args = vec![cmd, p.as_str(), "-o", out.as_str()];
        args.extend(extra.iter().copied());
        let o = run_measured(&args, Duration::from_secs(60));
        row("block with a bad checksum", cmd, &o);
        assert_eq!(o.code, 1, "{cmd}: {}", o.stdout);
        assert!(o.stderr.contains("checksum"), "{}", o.stderr);
        assert!(!std::path::Path::new(&out).exists(), "{cmd} wrote {out}");
    }
}

#[test]
fn zero_strides_stream_through_to_json_and_diff() {
    let d = scratch("zerostride-stream");
    let tree = "data: !core/ndarray-1.0.0 {source: 0, datatype: float64, byteorder: little, shape: [2000, 10000], strides: [0, 0]}\n";
    let mut f = head(tree);
    f.extend(block(&[0; 4], &1.5f64.to_le_bytes(), 8, [0; 16]));
    let p = put(&d, "zs.asdf", &f);
    let out = d.join("zs.json").to_string_lossy().into_owned();
    let o = run_measured(&["to-json", &p, "-o", &out], Duration::from_secs(240));
    row("zero strides, 2e7 elements", "to-json", &o);
    clean(&o, "to-json");
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.peak_mib <= 64.0, "to-json: {:.1} MiB", o.peak_mib);
    // The whole output is not parsed here (it would raise this process's memory, which
    // the children's measured peaks inherit): its shape is checked by its size and ends.
    let (mut head, mut rows, mut last) = (Vec::new(), 0usize, Vec::new());
    {
        use std::io::Read as _;
        let mut r = std::fs::File::open(&out).unwrap();
        let mut buf = vec![0u8; 1 << 16];
        let mut prev = [0u8; 3];
        loop {
            let n = r.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            if head.len() < 400 {
                head.extend_from_slice(&buf[..n.min(400)]);
            }
            let mut joined = prev.to_vec();
            joined.extend_from_slice(&buf[..n]);
            rows += joined.windows(4).filter(|w| *w == b"], [").count();
            prev.copy_from_slice(&joined[joined.len() - 3..]);
            last = joined[joined.len().saturating_sub(32)..].to_vec();
        }
    }
    let text = String::from_utf8_lossy(&head).into_owned();
    assert!(text.contains("\"shape\": [2000, 10000]"), "{text}");
    assert!(text.contains("\"data\": [[1.5, 1.5"), "{text}");
    assert!(
        last.ends_with(b"1.5, 1.5]]\n  }\n}\n"),
        "{}",
        String::from_utf8_lossy(&last)
    );
    assert_eq!(rows, 1999);
    let o = run_measured(&["diff", &p, &p], Duration::from_secs(240));
    row("zero strides, 2e7 elements", "diff", &o);
    assert_eq!(o.code, 0, "{}", o.stdout);
    assert!(o.peak_mib <= 64.0, "diff: {:.1} MiB", o.peak_mib);
    let o = run_measured(&["to-yaml", &p], Duration::from_secs(60));
    row("zero strides, 2e7 elements", "to-yaml", &o);
    clean(&o, "to-yaml");
    assert_eq!(o.code, 1);
    assert!(o.peak_mib <= 64.0, "to-yaml: {:.1} MiB", o.peak_mib);
}

#[test]
fn an_alias_bomb_of_a_few_hundred_bytes() {
    let d = scratch("aliasbomb");
    // Seven levels of ten aliases each: 10^7 nodes when expanded.
    let mut tree = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..7 {
        let items = vec![format!("*a{}", i - 1); 10].join(", ");
        tree.push_str(&format!("a{i}: &a{i} [{items}]\n"));
    }
    let f = head(&tree);
    assert!(f.len() < 700, "{} bytes", f.len());
    let p = put(&d, "bomb.asdf", &f);
    for args in [
        vec!["info", p.as_str(), "--max-rows", "0"],
        vec!["search", p.as_str(), "--type", "str"],
        vec!["to-json", p.as_str()],
        vec!["diff", p.as_str(), p.as_str()],
        vec!["validate", p.as_str()],
        vec!["to-yaml", p.as_str()],
    ] {
        let o = run_measured(&args, Duration::from_secs(120));
        row("alias bomb, 619 bytes, 1e7 nodes", args[0], &o);
        clean(&o, args[0]);
        assert!(o.peak_mib <= 256.0, "{}: {:.1} MiB", args[0], o.peak_mib);
        assert!(o.stdout_len < 64 << 20, "{}: {} bytes of output", args[0], o.stdout_len);
    }
}

#[test]
fn big_blocks_are_verified_and_copied_in_bounded_memory() {
    use std::io::Write as _;
    let d = scratch("bigblock");
    let n: u64 = 256 << 20;
    let p = d.join("big.asdf");
    {
        // Written in pieces: this process stays small (its children's peaks start from it).
        let mut f = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
        f.write_all(&head(&uint8_array(n))).unwrap();
        let header = block(&[0; 4], &[], n, [0; 16]);
        let mut header = header[..header.len()].to_vec();
        // used and allocated sizes: the data follows.
        header[14..22].copy_from_slice(&n.to_be_bytes());
        header[22..30].copy_from_slice(&n.to_be_bytes());
        f.write_all(&header).unwrap();
        let piece = vec![7u8; 1 << 20];
        for _ in 0..n >> 20 {
            f.write_all(&piece).unwrap();
        }
    }
    let p = p.to_string_lossy().into_owned();
    let o = run_measured(&["verify", &p], Duration::from_secs(120));
    row("256 MiB uncompressed block", "verify", &o);
    assert_eq!(o.code, 0, "{}", o.stdout);
    assert!(o.peak_mib <= 64.0, "verify: {:.1} MiB", o.peak_mib);
    let out = d.join("copy.asdf").to_string_lossy().into_owned();
    let o = run_measured(&["defragment", &p, "-o", &out], Duration::from_secs(120));
    row("256 MiB uncompressed block", "defragment", &o);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.peak_mib <= 64.0, "defragment: {:.1} MiB", o.peak_mib);
    let o = run_measured(&["verify", &out], Duration::from_secs(120));
    assert_eq!(o.code, 0, "{}", o.stdout);
    assert!(
        o.stdout.contains("checksum ok (MD5 of the stored bytes)"),
        "{}",
        o.stdout
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn diff_of_50000_keys_is_linear() {
    let d = scratch("diffkeys");
    let tree = |changed: usize| -> Vec<u8> {
        let rows: String = (0..50_000)
            .map(|i| format!("k{i}: {}\n", if i == changed { 1 } else { 0 }))
            .collect();
        head(&rows)
    };
    let a = put(&d, "a.asdf", &tree(7));
    let b = put(&d, "b.asdf", &tree(49_000));
    // Quadratic key lookups took about a minute here; the limit only guards against that.
    let o = run_measured(&["diff", &a, &b], Duration::from_secs(30));
    row("diff of 50,000 keys", "diff", &o);
    assert_eq!(o.code, 1);
    assert!(o.stdout.contains("2 difference(s)"), "{}", o.stdout);
    assert!(
        o.stdout.contains("/k7: 1 != 0") && o.stdout.contains("/k49000: 0 != 1"),
        "{}",
        o.stdout
    );
}

/// Outputs that are not regular files: a FIFO (and so a device such as /dev/null) is written
/// into, never replaced by a rename; a symbolic link's file is replaced, the link stays.
#[cfg(unix)]
#[test]
fn outputs_that_are_fifos_or_links_are_written_through() {
    use std::io::Read as _;
    use std::os::unix::fs::FileTypeExt as _;
    let d = scratch("outkinds");
    let p = sample(&d, "x.asdf");
    let fifo = d.join("out.fifo");
    let c = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut s = String::new();
            std::fs::File::open(&fifo).unwrap().read_to_string(&mut s).unwrap();
            s
        })
    };
    let o = run_measured(&["to-json", &p, "-o", &fifo.to_string_lossy()], Duration::from_secs(60));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let got = reader.join().unwrap();
    assert!(got.contains("\"$tag\""), "{got}");
    assert!(
        std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(),
        "the FIFO was replaced"
    );
    // A link to a file: the file gets the output, the link stays a link.
    let real = d.join("real.json");
    std::fs::write(&real, b"old").unwrap();
    let link = d.join("link.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let o = run_measured(&["to-json", &p, "-o", &link.to_string_lossy()], Duration::from_secs(60));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert!(std::fs::read_to_string(&real).unwrap().contains("\"$tag\""));
}

/// Two 2-element arrays at the start and the end of one zstd block that decodes to 1 GiB
/// (a file of a few kilobytes): `get`, `to-json` and `diff` keep the bytes each array spans,
/// not the decoded block (review of the storage trait: all three held 2 GiB or more).
#[test]
fn tiny_arrays_of_a_big_compressed_block_cost_their_own_bytes() {
    let d = scratch("tiny-in-bomb");
    let n = GIB;
    let tree = format!(
        "b: !core/ndarray-1.0.0 {{source: 0, datatype: float64, byteorder: little, shape: [2]}}\n\
         a: !core/ndarray-1.0.0 {{source: 0, datatype: float64, byteorder: little, shape: [2], offset: {}}}\n",
        n - 16
    );
    let mut f = head(&tree);
    f.extend(block(b"zstd", &zstd_zeros(n), n, [0; 16]));
    let p = put(&d, "tiny.asdf", &f);
    let out = d.join("a.npy").to_string_lossy().into_owned();
    for args in [
        vec!["get", p.as_str(), "/a", "-o", out.as_str()],
        vec!["to-json", p.as_str()],
        vec!["diff", p.as_str(), p.as_str()],
    ] {
        let o = run_measured(&args, Duration::from_secs(300));
        row("2 elements of a 1 GiB zstd block", args[0], &o);
        clean(&o, args[0]);
        assert_eq!(o.code, 0, "{args:?}: {}{}", o.stdout, o.stderr);
        assert!(o.peak_mib <= 64.0, "{args:?}: {:.1} MiB", o.peak_mib);
        if args[0] == "to-json" {
            assert_eq!(o.stdout.matches("\"data\": [0.0, 0.0]").count(), 2, "{}", o.stdout);
        }
    }
}

/// A sliding window: int8 of shape [100000, 100000] with strides [1, 1] over 200 kB (schema
/// valid, read by numpy as a view). Writing it out element by element would take hours:
/// `to-json` writes the refusal as the array's `$error`, `diff` reports it, both at once;
/// a region of it reads.
#[test]
fn overlapping_strides_are_refused_where_elements_are_written_out() {
    let d = scratch("sliding");
    let m = 100_000u64;
    let tree = format!(
        "w: !core/ndarray-1.0.0 {{source: 0, datatype: int8, byteorder: little, shape: [{m}, {m}], strides: [1, 1]}}\n"
    );
    let mut f = head(&tree);
    let data: Vec<u8> = (0..2 * m).map(|i| (i % 100) as u8).collect();
    f.extend(block(&[0; 4], &data, 2 * m, [0; 16]));
    let p = put(&d, "sliding.asdf", &f);
    let o = run_measured(&["to-json", &p], Duration::from_secs(60));
    row("sliding window, 1e10 elements", "to-json", &o);
    clean(&o, "to-json");
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("strides repeat"),
        "{}",
        &o.stdout[..o.stdout.len().min(2000)]
    );
    let o = run_measured(&["diff", &p, &p], Duration::from_secs(60));
    row("sliding window, 1e10 elements", "diff", &o);
    clean(&o, "diff");
    assert!(
        o.stdout.contains("strides repeat") || o.stderr.contains("strides repeat"),
        "{}{}",
        o.stdout,
        o.stderr
    );
    let o = run_measured(&["get", &p, "/w", "--slice", "5, 10:14"], Duration::from_secs(60));
    clean(&o, "get");
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("15") && o.stdout.contains("18"), "{}", o.stdout);
}
