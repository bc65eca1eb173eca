//! Writes the project's bundled example file, `examples/data/small.asdf`: a 3x4 float64 array
//! (uncompressed) and 1000 int32 values (zlib), with a tree written the way Python asdf 6.0
//! writes one. `cargo run -p asdf-layout --example make_example -- OUT`

#![allow(clippy::print_stdout, clippy::print_stderr)]

use asdf_layout::{BlockOptions, Label, Version, Writer};

/// The example file's bytes.
#[allow(dead_code)]
pub fn example_bytes() -> Result<Vec<u8>, asdf_layout::Error> {
    let tree = "%YAML 1.1
%TAG ! tag:stsci.edu:asdf/
--- !core/asdf-1.1.0
asdf_library: !core/software-1.0.0 {author: The asdf-rs developers, name: asdf-rs,
  version: 0.1.0}
counts: !core/ndarray-1.1.0
  source: 1
  datatype: int32
  byteorder: little
  shape: [1000]
image: !core/ndarray-1.1.0
  source: 0
  datatype: float64
  byteorder: little
  shape: [3, 4]
observer: asdf-rs example
...
";
    let image: Vec<u8> = (0..12).flat_map(|i| (f64::from(i) * 0.5).to_le_bytes()).collect();
    let counts: Vec<u8> = (0..1000i32).flat_map(|i| ((i * 7) % 100).to_le_bytes()).collect();
    let mut w = Writer::new(Vec::new(), Version::new(1, 6, 0))?;
    w.write_tree(tree.as_bytes())?;
    w.write_block(&image, &BlockOptions::default())?;
    w.write_block(&counts, &BlockOptions::default().compression(Label::ZLIB))?;
    w.finish(true)
}

fn main() -> std::process::ExitCode {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "examples/data/small.asdf".to_owned());
    match example_bytes()
        .map_err(|e| e.to_string())
        .and_then(|b| std::fs::write(&out, b).map_err(|e| e.to_string()))
    {
        Ok(()) => {
            println!("wrote {out}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::ExitCode::FAILURE
        }
    }
}
