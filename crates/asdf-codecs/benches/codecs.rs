//! `cargo bench -p asdf-codecs`: encode and decode throughput of every codec on 16 MiB of
//! int32 `(i % 1000) + 3 bits of noise` (the data of `cargo xtask bench`'s codec workloads).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::cast_possible_truncation)]

use asdf_codecs::Label;
use divan::{Bencher, black_box, counter::BytesCount};

fn main() {
    divan::main();
}

fn data() -> Vec<u8> {
    (0..(4usize << 20))
        .flat_map(|i| {
            let noise = ((i as u64).wrapping_mul(2_654_435_761) >> 13) & 7;
            ((i % 1000) as i32 + noise as i32).to_le_bytes()
        })
        .collect()
}

const LABELS: [&str; 6] = ["zlib", "bzp2", "lz4", "zstd", "lz4f", "blsc"];

fn codec(name: &str) -> std::sync::Arc<dyn asdf_codecs::Codec> {
    let label = Label::from_name(name).unwrap();
    asdf_codecs::Registry::default().get(label).unwrap().clone()
}

#[divan::bench(args = LABELS, sample_count = 10)]
fn encode(b: Bencher<'_, '_>, name: &str) {
    let (d, c) = (data(), codec(name));
    b.counter(BytesCount::new(d.len())).bench(|| {
        let mut out = Vec::new();
        c.encode(black_box(&d), &mut out).unwrap();
        out
    });
}

#[divan::bench(args = LABELS, sample_count = 10)]
fn decode(b: Bencher<'_, '_>, name: &str) {
    let (d, c) = (data(), codec(name));
    let mut stored = Vec::new();
    c.encode(&d, &mut stored).unwrap();
    let mut out = vec![0u8; d.len()];
    b.counter(BytesCount::new(d.len()))
        .bench_local(|| c.decode(black_box(&stored), &mut out).unwrap());
}
