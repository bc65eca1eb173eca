//! Writes two arrays, each compressed its own way.
//!
//! `cargo run -p asdf-examples --example write_two_arrays -- out.asdf`

// README: write
use asdf::{AsdfFile, Label, NewArray, Version, WriteOptions};

/// A file with a float32 image compressed with zstd and a uint16 quality mask with zlib.
pub fn write_two(path: &std::path::Path) -> Result<(), asdf::Error> {
    let flux: Vec<f32> = (0..64 * 64).map(|i| (i as f32 * 0.01).sin()).collect();
    let dq: Vec<u16> = (0..64 * 64).map(|i| u16::from(i % 97 == 0)).collect();
    let mut file = AsdfFile::new(Version::STANDARD_LATEST)?;
    file.put_array(
        "/sci/flux",
        NewArray::from_slice(&flux, &[64, 64])?.compression(Label::ZSTD),
    )?;
    file.put_array(
        "/sci/dq",
        NewArray::from_slice(&dq, &[64, 64])?.compression(Label::ZLIB),
    )?;
    file.write(path, &WriteOptions::default())?;
    Ok(())
}
// README: end

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).unwrap_or_else(|| "two_arrays.asdf".to_owned());
    write_two(std::path::Path::new(&path))?;
    println!("wrote {path}");
    Ok(())
}
