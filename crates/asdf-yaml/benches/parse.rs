//! `cargo bench -p asdf-yaml11`: parse and emit throughput on a generated ASDF-like tree.
//! (`cargo xtask bench-yaml` compares the 20 MB case with PyYAML side by side.)

#![allow(clippy::unwrap_used, clippy::expect_used)]

use asdf_yaml::{EmitOptions, Limits, emit, parse, sample::catalogue};
use divan::{Bencher, black_box, counter::BytesCount};

fn main() {
    divan::main();
}

#[divan::bench(args = [1_000, 50_000])]
fn parse_catalogue(b: Bencher<'_, '_>, rows: usize) {
    let text = emit(&catalogue(rows), &EmitOptions::default()).unwrap();
    b.counter(BytesCount::new(text.len()))
        .bench(|| parse(black_box(&text), &Limits::default()).unwrap());
}

#[divan::bench(args = [1_000, 50_000])]
fn emit_catalogue(b: Bencher<'_, '_>, rows: usize) {
    let doc = catalogue(rows);
    let len = emit(&doc, &EmitOptions::default()).unwrap().len();
    b.counter(BytesCount::new(len))
        .bench(|| emit(black_box(&doc), &EmitOptions::default()).unwrap());
}
