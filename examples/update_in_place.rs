//! Changes a value of the tree and saves it in place (the blocks are not rewritten when the
//! tree still fits).
//!
//! `cargo run -p asdf-examples --example update_in_place -- copy_of_small.asdf`

/// Sets `/observer` of the file at `path` to `name` and updates the file in place.
pub fn rename_observer(path: &std::path::Path, name: &str) -> Result<asdf::Update, asdf::Error> {
    let mut file = asdf::open(path)?;
    file.set("/observer", asdf::Node::str(name))?;
    file.update(&asdf::WriteOptions::default())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("give the path of a file to change")?;
    let how = rename_observer(std::path::Path::new(&path), "E. Hubble")?;
    println!("{how:?}");
    Ok(())
}
