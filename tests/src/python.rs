//! What Python asdf 6.0 read, as the interop scripts write it in JSON (`tests/interop/*.py`),
//! compared with what we read.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::missing_panics_doc,
    clippy::cast_precision_loss
)]

use asdf::{Element, Node};
use serde_json::Value as J;

/// Whether our element `e` is the value Python dumped as `j` (floats `nan`/`inf` as strings,
/// complex numbers as `{"complex": [re, im]}`, records and sub-arrays as lists, strings without
/// numpy's trailing padding).
#[must_use]
pub fn value_eq(e: &Element, j: &J) -> bool {
    match (e, j) {
        (Element::Float(f), J::String(s)) => match s.as_str() {
            "nan" => f.is_nan(),
            "inf" => *f == f64::INFINITY,
            "-inf" => *f == f64::NEG_INFINITY,
            _ => false,
        },
        (Element::Complex(c), J::Object(o)) => {
            let p = o["complex"].as_array().unwrap();
            let g = |x: &J| match x {
                J::String(s) if s == "nan" => f64::NAN,
                J::String(s) if s == "inf" => f64::INFINITY,
                J::String(s) if s == "-inf" => f64::NEG_INFINITY,
                other => other.as_f64().unwrap_or(f64::NAN),
            };
            c.same(&asdf::Complex::new(g(&p[0]), g(&p[1])))
        }
        (Element::Record(items), J::Array(vals)) => {
            items.len() == vals.len() && items.iter().zip(vals).all(|(a, b)| value_eq(a, b))
        }
        (Element::Array(items), J::Array(vals)) => {
            items.len() == vals.len() && items.iter().zip(vals).all(|(a, b)| value_eq(a, b))
        }
        (Element::Str(s), J::String(t)) => s == t || s.trim_end() == t.trim_end_matches('\0'),
        (Element::Float(f), J::Number(n)) => n.as_f64() == Some(*f),
        (Element::Int(i), J::Number(n)) => n.as_f64() == Some(*i as f64) && (n.as_i64() == Some(*i) || !n.is_i64()),
        (Element::UInt(u), J::Number(n)) => n.as_u64() == Some(*u),
        (Element::Bool(b), J::Bool(c)) => b == c,
        _ => false,
    }
}

/// The decimal text of the `core/integer` object at `ptr`, decoded from its sign and words.
#[must_use]
pub fn big_integer(f: &asdf::AsdfFile, ptr: &str) -> String {
    let node = f.get(ptr).unwrap();
    let neg = node.get("sign").and_then(Node::as_str) == Some("-");
    let words: Vec<u32> = f
        .array_values(&format!("{ptr}/words"))
        .unwrap()
        .elements
        .iter()
        .map(|e| match e {
            Element::UInt(u) => u32::try_from(*u).unwrap(),
            other => panic!("{other:?}"),
        })
        .collect();
    asdf_core_types::integer::from_words(neg, &words).to_string()
}

/// A shape Python dumped (a list of integers).
#[must_use]
pub fn shape(j: &J) -> Vec<usize> {
    j.as_array()
        .unwrap()
        .iter()
        .map(|x| usize::try_from(x.as_u64().unwrap()).unwrap())
        .collect()
}
