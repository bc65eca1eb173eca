//! MD5 of block data (the checksum every block header carries), single-threaded.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::cast_possible_truncation)]
use asdf_layout::md5_of;
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

#[divan::bench(sample_count = 10)]
fn md5(b: Bencher<'_, '_>) {
    let d = data();
    b.counter(BytesCount::new(d.len())).bench(|| md5_of(black_box(&d)));
}
