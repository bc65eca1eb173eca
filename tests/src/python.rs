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

/// A value of `to-json` ([`asdf::json`], ours) against the same value of Python's dump: NaN and infinities as
/// `to-json` spells them, complex numbers as Python's text, numbers by value.
#[must_use]
pub fn json_value_eq(ours: &J, py: &J) -> bool {
    match (ours, py) {
        (J::String(s), J::String(t)) if matches!(t.as_str(), "nan" | "inf" | "-inf") => {
            matches!(
                (s.as_str(), t.as_str()),
                ("NaN", "nan") | ("Infinity", "inf") | ("-Infinity", "-inf")
            )
        }
        (J::String(s), J::Object(o)) if o.contains_key("complex") => {
            asdf::complex::parse_lenient(s).is_some_and(|c| value_eq(&Element::Complex(c), py))
        }
        (J::Number(a), J::Number(b)) => {
            a.as_f64() == b.as_f64() && (a.as_i64() == b.as_i64()) && (a.as_u64() == b.as_u64())
        }
        (J::Array(a), J::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| json_value_eq(x, y)),
        (J::String(s), J::String(t)) => s == t || s.trim_end() == t.trim_end_matches('\0'),
        (J::Bool(a), J::Bool(b)) => a == b,
        _ => false,
    }
}

/// `to-json`'s nested `data` (or `mask`) flattened over the array's `ndim` levels.
pub fn flatten_json<'a>(j: &'a J, ndim: usize, out: &mut Vec<&'a J>) {
    match j {
        J::Array(items) if ndim > 0 => items.iter().for_each(|i| flatten_json(i, ndim - 1, out)),
        other => out.push(other),
    }
}

/// The node of `to-json`'s output at our JSON pointer `ptr`: a tagged scalar or sequence is
/// entered through its `$value`.
#[must_use]
pub fn json_at<'a>(root: &'a J, ptr: &str) -> Option<&'a J> {
    let mut at = root;
    for token in ptr.split('/').skip(1) {
        let token = token.replace("~1", "/").replace("~0", "~");
        let inner = at.get("$value").unwrap_or(at);
        at = match inner {
            J::Object(o) => o.get(&token)?,
            J::Array(a) => a.get(token.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(at)
}

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
        .array(&format!("{ptr}/words"))
        .and_then(|a| a.values())
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
