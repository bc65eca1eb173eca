//! Hostile files of a few hundred bytes against every command that reads whole files: each
//! test builds its file, runs `asdf-cli` as a child and checks the outcome (a clean error or
//! result: no signal, no panic), its peak resident memory and its time. Each prints a row of
//! the table in the reliability notes (`cargo test -p asdf-cli --test hostile -- --nocapture`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stdout)]

mod support;

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
