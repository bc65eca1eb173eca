//! Reads an array into `ndarray::ArrayD<f64>`.
//!
//! `cargo run -p asdf-examples --example read_ndarray -- examples/data/small.asdf /image`

// README: read
/// The array at `pointer` of the file at `path`, as an `ndarray` array.
pub fn read_array(path: &str, pointer: &str) -> Result<asdf::ndarray::ArrayD<f64>, asdf::Error> {
    let file = asdf::open(path)?;
    let array = file.array(pointer)?;
    println!(
        "{pointer}: {:?} {} {:?}",
        array.shape(),
        array.datatype(),
        array.storage()
    );
    array.read()
}
// README: end

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| "examples/data/small.asdf".to_owned());
    let pointer = args.next().unwrap_or_else(|| "/image".to_owned());
    let a = read_array(&path, &pointer)?;
    println!("sum {}, mean {:?}", a.sum(), a.mean());
    Ok(())
}
