//! Reads one element of a large file without parsing its whole tree or reading its block: a
//! lazy open reads the header and block index, skims the tree's text for the array, and reads
//! only the element's bytes (of an uncompressed block).
//!
//! `cargo run -p asdf-examples --example one_element -- examples/data/small.asdf /image 2 3`

// README: element
/// The element at `index` of the array at `pointer`, opened lazily; then the warnings of the
/// whole file (the tree is parsed and checked when it is first needed).
pub fn one_element(path: &str, pointer: &str, index: &[usize]) -> Result<asdf::Element, asdf::Error> {
    let lazy = asdf::Open::path(path).open_lazy()?;
    let x = lazy.array(pointer)?.element(index)?;
    let file = lazy.parse()?; // now the whole tree, checked as an eager open checks it
    for w in file.warnings() {
        eprintln!("{w}");
    }
    Ok(x)
}
// README: end

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| "examples/data/small.asdf".to_owned());
    let pointer = args.next().unwrap_or_else(|| "/image".to_owned());
    let index: Vec<usize> = args.map(|a| a.parse()).collect::<Result<_, _>>()?;
    let index = if index.is_empty() { vec![2, 3] } else { index };
    println!("{pointer}{index:?} = {:?}", one_element(&path, &pointer, &index)?);
    Ok(())
}
