//! Lists a file's blocks, reading each into one buffer that is reused.
//!
//! `cargo run -p asdf-examples --example iterate_blocks -- examples/data/small.asdf`

// README: blocks
/// Each block's index, compression and decoded size; every block is read (and its checksum
/// verified) into one reused buffer.
pub fn list_blocks(path: &str) -> Result<Vec<(usize, asdf::Label, usize)>, asdf::Error> {
    let file = asdf::open(path)?;
    let mut buf = Vec::new();
    let mut out = Vec::new();
    for block in file.source().blocks() {
        block.verify_checksum()?;
        block.read_into_vec(&mut buf)?; // grows with what the block holds, not its claim
        out.push((block.index(), block.compression()?, buf.len()));
    }
    Ok(out)
}
// README: end

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "examples/data/small.asdf".to_owned());
    for (i, label, len) in list_blocks(&path)? {
        println!("block {i}: {label}, {len} bytes");
    }
    Ok(())
}
