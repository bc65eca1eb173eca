//! `cargo bench -p asdf-layout`: MD5 of block data (the checksum every block header carries),
//! single-threaded, over 16 MiB (MD5's speed does not depend on the bytes).
use asdf_layout::md5_of;
use divan::{Bencher, black_box, counter::BytesCount};

fn main() {
    divan::main();
}

#[divan::bench(sample_count = 10)]
fn md5(b: Bencher<'_, '_>) {
    let d = vec![0x5au8; 16 << 20];
    b.counter(BytesCount::new(d.len())).bench(|| md5_of(black_box(&d)));
}
