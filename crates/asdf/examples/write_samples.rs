//! Writes a few files with every compression label into a directory, for interop checks:
//! `cargo run -p asdf --example write_samples -- DIR`

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::cast_precision_loss)]

use asdf::{AsdfFile, ByteOrder, Compression, Datatype, Label, Node, Version, WriteOptions};
use asdf_core_types::ScalarType;

fn main() -> Result<(), asdf::Error> {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "target/interop".to_owned()));
    std::fs::create_dir_all(&dir).map_err(|e| asdf::Error::Io {
        path: dir.clone(),
        source: e,
    })?;
    for (name, label) in [
        ("none", Label::NONE),
        ("zlib", Label::ZLIB),
        ("bzp2", Label::BZP2),
        ("lz4", Label::LZ4),
        ("zstd", Label::ZSTD),
        ("lz4f", Label::LZ4F),
        ("blsc", Label::BLSC),
    ] {
        for v in [Version::new(1, 6, 0), Version::new(1, 5, 0), Version::new(1, 0, 0)] {
            let mut f = AsdfFile::new(v)?;
            if let Some(m) = f.tree_mut().as_mapping_mut() {
                m.insert("title", Node::str("interop"));
                m.insert("yes_string", Node::str("yes"));
                m.insert("count", Node::int(42));
            }
            let data: Vec<u8> = (0..1000i64)
                .flat_map(|i| ((i % 97) as f64 * 0.25).to_le_bytes())
                .collect();
            f.add_array(
                "/data",
                Datatype::Scalar(ScalarType::Float64),
                &[10, 100],
                ByteOrder::Little,
                data,
            )?;
            let ints: Vec<u8> = (0..256i32).flat_map(|i| (i * 3).to_be_bytes()).collect();
            f.add_array(
                "/ints",
                Datatype::Scalar(ScalarType::Int32),
                &[256],
                ByteOrder::Big,
                ints,
            )?;
            let path = dir.join(format!("{name}_{v}.asdf"));
            f.write_to(&path, &WriteOptions::default().compression(Compression::All(label)))?;
            println!("{}", path.display());
        }
    }
    Ok(())
}
