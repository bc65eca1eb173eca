//! Numbers of the tree compared exactly (`search --value`, `diff`).

use asdf::Value;

/// A number as `search --value` and `diff` compare it: integers exactly (as their decimal text, any
/// size), floats as floats; an integer equals a float only when the float is that integer
/// exactly (so 2^53 + 1 is not 2^53, as Python's `==` has it).
#[derive(Debug, PartialEq)]
pub enum Number {
    Int(String),
    Float(f64),
}

pub fn number(v: &Value) -> Option<Number> {
    match v {
        Value::Int(i) => Some(Number::Int(i.to_string())),
        Value::BigInt(i) => Some(Number::Int(i.to_string())),
        Value::Float(f) => Some(Number::Float(*f)),
        _ => None,
    }
}

pub fn numbers_equal(a: &Number, b: &Number) -> bool {
    // The exact decimal text of an integral float (Rust prints every digit at `.0`).
    let int_text = |f: f64| {
        (f.is_finite() && f.fract() == 0.0).then(|| match format!("{f:.0}") {
            z if z == "-0" => "0".to_owned(),
            t => t,
        })
    };
    match (a, b) {
        (Number::Int(x), Number::Int(y)) => x == y,
        (Number::Float(x), Number::Float(y)) => x == y,
        (Number::Int(i), Number::Float(f)) | (Number::Float(f), Number::Int(i)) => int_text(*f).as_ref() == Some(i),
    }
}
