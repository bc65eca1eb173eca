//! The tree as JSON, arrays decoded (`to-json`; `diff` and `get` write elements the same way).
//!
//! The format (also in the README):
//! - mappings are objects (keys as strings), sequences are arrays, YAML null/bool/int/float are
//!   JSON null/bool/number; integers beyond 64 bits are written with all their digits;
//!   NaN and infinities are the strings `"NaN"`, `"Infinity"`, `"-Infinity"`;
//! - a tagged mapping gets a first key `"$tag"` with the full tag; a tagged scalar or sequence
//!   becomes `{"$tag": ..., "$value": ...}`;
//! - an ndarray becomes `{"$tag": ..., "datatype": ..., "shape": [...], "data": [...]}` with
//!   `data` nested by shape (C order) and `"mask"` (nested the same way) when the array is
//!   masked; complex elements are strings as Python writes them (`"(1+2j)"`), records are arrays
//!   of their fields in order; a chunked array (asdf-zarr's, ASDF.jl's) is written the same
//!   way, its chunks decoded, with its own tag;
//! - an ndarray that cannot be read is written as its tree with an `"$error"` key saying why;
//! - an alias is written out in full where it appears; an alias back into its own ancestor (a
//!   cycle) is `{"$alias": "anchor"}`.

use std::fmt::Write as _;

use asdf::{AsdfFile, Element, Node, NodeKind, Value, Visit};

/// Writes the tree of `file` as pretty JSON to `sink` as it goes (arrays element by element:
/// memory stays bounded by the largest block, whatever the array's shape or strides), and
/// returns warnings about arrays that could not be read (those are written as their raw tree).
///
/// # Errors
/// Writing to `sink`.
pub fn to_json(file: &AsdfFile, sink: &mut dyn std::io::Write) -> std::io::Result<Vec<String>> {
    let doc = file.document();
    let mut j = Json {
        file,
        out: String::new(),
        sink,
        failed: None,
        open: Vec::new(),
        warnings: Vec::new(),
    };
    let walked = asdf::yaml::Walker::default().walk(doc, &mut j);
    j.out.push('\n');
    j.flush(0);
    if let Some(e) = j.failed {
        return Err(e);
    }
    j.warnings.extend(walked.warning());
    Ok(j.warnings)
}

struct Json<'a> {
    file: &'a AsdfFile,
    /// Text not yet handed to `sink`.
    out: String,
    sink: &'a mut dyn std::io::Write,
    /// The first error of `sink` (nothing more is written after it).
    failed: Option<std::io::Error>,
    /// What each node entered and not yet left opened (its children's indent and how it closes).
    open: Vec<Open>,
    warnings: Vec<String>,
}

/// What a node being written opened.
enum Open {
    /// Nothing (a scalar, an array written whole).
    Nothing,
    /// A JSON object: whether no key was written yet, the node's indent, and the keys written
    /// (two YAML keys of one text, `1` and `'1'`, or a key `$tag` of a tagged mapping, would
    /// be one JSON key: the later one is renamed, with a warning).
    Object {
        first: bool,
        indent: usize,
        keys: std::collections::HashSet<String>,
    },
    /// A JSON array, wrapped in `{"$tag", "$value"}` when `tagged`.
    Array { tagged: bool, indent: usize, empty: bool },
}

impl Open {
    /// The indent of the children.
    fn child_indent(&self) -> usize {
        match self {
            Open::Nothing => 0,
            Open::Object { indent, .. } => indent + 1,
            Open::Array { tagged, indent, .. } => indent + 1 + usize::from(*tagged),
        }
    }
}

impl Json<'_> {
    /// Hands the text so far to the sink once it holds more than `keep` bytes.
    fn flush(&mut self, keep: usize) {
        if self.out.len() <= keep {
            return;
        }
        if self.failed.is_none()
            && let Err(e) = self.sink.write_all(self.out.as_bytes())
        {
            self.failed = Some(e);
        }
        self.out.clear();
    }
}

/// Appends `s` as a JSON string (quoted, escaped).
pub fn string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn float(out: &mut String, f: f64) {
    if f.is_nan() {
        out.push_str("\"NaN\"");
    } else if f.is_infinite() {
        out.push_str(if f > 0.0 { "\"Infinity\"" } else { "\"-Infinity\"" });
    } else {
        let _ = write!(out, "{f:?}");
    }
}

fn pad(out: &mut String, indent: usize) {
    out.push('\n');
    for _ in 0..indent {
        out.push_str("  ");
    }
}

impl Json<'_> {
    /// Writes what comes before a node: the comma, the new line and the key in its parent.
    /// Returns the node's indent.
    fn before(&mut self, at: &asdf::yaml::At<'_, '_>) -> usize {
        let Some(parent) = self.open.last_mut() else {
            return 0;
        };
        let indent = parent.child_indent();
        match parent {
            Open::Object { first, keys, .. } => {
                if !*first {
                    self.out.push(',');
                }
                *first = false;
                pad(&mut self.out, indent);
                let key = at.key().unwrap_or_default();
                // The key a pointer's text names (the string key of that text) keeps its text;
                // another key of the same text (the integer `1` beside `'1'`) is renamed.
                let named = match (at.parent(), at.step()) {
                    (Some(p), Some(asdf::yaml::Step::Entry(i))) => {
                        asdf::yaml::pointer::entry_token(p, i).is_none_or(|t| t == asdf::yaml::pointer::escape(key))
                    }
                    _ => true,
                };
                let mut written = key.to_owned();
                let mut k = 2;
                if !named {
                    written = format!("{key} ({k})");
                    k += 1;
                }
                while !keys.insert(written.clone()) {
                    written = format!("{key} ({k})");
                    k += 1;
                }
                if written != key {
                    self.warnings.push(format!(
                        "{}: the key `{key}` is written as `{written}`: the mapping has another key that JSON writes as `{key}`",
                        at.pointer_exact()
                    ));
                }
                string(&mut self.out, &written);
                self.out.push_str(": ");
            }
            Open::Array { empty, .. } => {
                if !*empty {
                    self.out.push(',');
                }
                *empty = false;
                pad(&mut self.out, indent);
            }
            Open::Nothing => {}
        }
        indent
    }
}

impl<'a> asdf::yaml::Visitor<'a> for Json<'_> {
    fn enter(&mut self, at: &asdf::yaml::At<'_, 'a>) -> Visit {
        self.flush(1 << 20);
        let indent = self.before(at);
        let n = at.node();
        let mut error = None;
        if n.tag
            .as_deref()
            .is_some_and(|t| asdf::is_ndarray_tag(t) || asdf::is_chunked_array_tag(t))
        {
            // The pointer that names exactly this node (`~e<i>` for a key whose text names
            // another entry).
            let ptr = at.pointer_exact();
            let streamed = n.get("source").is_some() && n.get("mask").is_none();
            let r = if streamed {
                self.streamed_array(n, &ptr, indent)
            } else {
                self.file
                    .array(&ptr)
                    .and_then(|a| a.refuse_repeated(a.shape()).and_then(|()| a.values()))
                    .map(|a| self.array(n, &a, indent))
            };
            match r {
                Ok(()) => {
                    self.open.push(Open::Nothing);
                    return Visit::SkipChildren;
                }
                Err(e) => {
                    // (Most errors name the array already.)
                    let text = e.to_string();
                    let named = text.starts_with(&format!("{ptr}: "));
                    self.warnings.push(if named {
                        format!("{text} (written as its tree)")
                    } else {
                        format!("{ptr}: {text} (written as its tree)")
                    });
                    error = Some(e.to_string());
                }
            }
        }
        let open = match &n.kind {
            NodeKind::Mapping(_) => {
                self.out.push('{');
                let mut first = true;
                let mut keys = std::collections::HashSet::new();
                if let Some(t) = &n.tag {
                    pad(&mut self.out, indent + 1);
                    self.out.push_str("\"$tag\": ");
                    string(&mut self.out, t);
                    first = false;
                    keys.insert("$tag".to_owned());
                }
                if let Some(e) = &error {
                    if !first {
                        self.out.push(',');
                    }
                    pad(&mut self.out, indent + 1);
                    self.out.push_str("\"$error\": ");
                    string(&mut self.out, e);
                    first = false;
                    keys.insert("$error".to_owned());
                }
                Open::Object { first, indent, keys }
            }
            NodeKind::Sequence(_) => {
                self.open_tagged(n, indent);
                self.out.push('[');
                Open::Array {
                    tagged: n.tag.is_some(),
                    indent,
                    empty: true,
                }
            }
            NodeKind::Scalar(s) => {
                self.open_tagged(n, indent);
                match &s.value {
                    Value::Null => self.out.push_str("null"),
                    Value::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
                    Value::Int(i) => {
                        let _ = write!(self.out, "{i}");
                    }
                    Value::BigInt(b) => {
                        let _ = write!(self.out, "{b}");
                    }
                    Value::Float(f) => float(&mut self.out, *f),
                    Value::Str | Value::Timestamp => string(&mut self.out, &s.text),
                    Value::Binary(_) => {
                        let b64: String = s.text.chars().filter(|c| !c.is_whitespace()).collect();
                        string(&mut self.out, &b64);
                    }
                }
                self.close_tagged(n, indent);
                Open::Nothing
            }
            NodeKind::Alias(a) => {
                // Not reached: the walk resolves aliases or cuts them.
                self.out.push_str("{\"$alias\": ");
                string(&mut self.out, &a.anchor);
                self.out.push('}');
                Open::Nothing
            }
        };
        self.open.push(open);
        if self.failed.is_some() {
            Visit::Stop
        } else {
            Visit::Continue
        }
    }

    fn leave(&mut self, at: &asdf::yaml::At<'_, 'a>) {
        match self.open.pop() {
            Some(Open::Object { first, indent, .. }) => {
                if !first {
                    pad(&mut self.out, indent);
                }
                self.out.push('}');
            }
            Some(Open::Array { tagged, indent, empty }) => {
                if !empty {
                    pad(&mut self.out, indent + usize::from(tagged));
                }
                self.out.push(']');
                self.close_tagged(at.node(), indent);
            }
            Some(Open::Nothing) | None => {}
        }
    }

    fn cut(&mut self, at: &asdf::yaml::At<'_, 'a>, why: asdf::yaml::Cut) -> Visit {
        self.before(at);
        if why == asdf::yaml::Cut::Depth {
            let _ = write!(
                self.out,
                "{{\"$error\": \"nested deeper than {} levels\"}}",
                asdf::yaml::walk::MAX_DEPTH
            );
        } else {
            self.out.push_str("{\"$alias\": ");
            string(&mut self.out, at.alias().map(|a| &**a).unwrap_or_default());
            self.out.push('}');
        }
        Visit::Continue
    }
}

impl Json<'_> {
    fn open_tagged(&mut self, n: &Node, indent: usize) {
        if let Some(t) = &n.tag {
            self.out.push('{');
            pad(&mut self.out, indent + 1);
            self.out.push_str("\"$tag\": ");
            string(&mut self.out, t);
            self.out.push(',');
            pad(&mut self.out, indent + 1);
            self.out.push_str("\"$value\": ");
        }
    }

    fn close_tagged(&mut self, n: &Node, indent: usize) {
        if n.tag.is_some() {
            pad(&mut self.out, indent);
            self.out.push('}');
        }
    }

    /// An ndarray with a block, written element by element as they are decoded (no mask).
    fn streamed_array(&mut self, n: &Node, ptr: &str, indent: usize) -> Result<(), asdf::Error> {
        let array = self.file.array(ptr)?;
        array.refuse_repeated(array.shape())?;
        let view = array.view()?.clone();
        let shape = view.shape.clone();
        let count = view.count();
        if count == 0 || shape.is_empty() {
            // Nothing to stream: the general writer handles empty and 0-d arrays.
            let a = array.values()?;
            self.array(n, &a, indent);
            return Ok(());
        }
        // The bytes are read (and checked) before anything of this array is written. Memory is
        // the smaller of the view's elements (a few elements of a block that decodes to
        // gigabytes) and its block (a view whose zero strides repeat 8 bytes 2e7 times).
        let elements_bytes = (count as u128).saturating_mul(view.datatype.size() as u128);
        let block = match array.storage() {
            asdf::Storage::Internal { block } => Some(self.file.source().block(block)?),
            _ => None,
        };
        let (view, data) = match block {
            Some(b) if u128::from(b.data_len()?) < elements_bytes => (view, b.read()?.into_owned()),
            _ => {
                let bytes: asdf::RegionBytes = array.read()?;
                let view = asdf::View {
                    strides: asdf::core_types::view::c_strides(&bytes.shape, view.datatype.size()),
                    shape: bytes.shape,
                    offset: 0,
                    byteorder: bytes.byte_order,
                    ..view
                };
                (view, bytes.bytes)
            }
        };
        let elements = view.elements(&data).map_err(|source| asdf::Error::Array {
            pointer: ptr.to_owned(),
            source,
        })?;
        {
            self.array_head(n, &view.datatype.to_string(), &shape, indent);
            // Brackets opened and closed as the flat index crosses each dimension's rows.
            let spans: Vec<usize> = (0..shape.len()).map(|d| shape[d..].iter().product::<usize>()).collect();
            for (k, e) in elements.enumerate() {
                if k > 0 {
                    for span in spans.iter().rev() {
                        if k % span == 0 {
                            self.out.push(']');
                        }
                    }
                    self.out.push_str(", ");
                }
                for span in &spans {
                    if k % span == 0 {
                        self.out.push('[');
                    }
                }
                element(&mut self.out, &e);
                self.flush(1 << 20);
                if self.failed.is_some() {
                    return Ok(());
                }
            }
            for _ in &spans {
                self.out.push(']');
            }
            pad(&mut self.out, indent);
            self.out.push('}');
        }
        Ok(())
    }

    fn array_head(&mut self, n: &Node, datatype: &str, shape: &[usize], indent: usize) {
        let o = &mut self.out;
        o.push('{');
        pad(o, indent + 1);
        o.push_str("\"$tag\": ");
        string(o, n.tag.as_deref().unwrap_or_default());
        o.push(',');
        pad(o, indent + 1);
        o.push_str("\"datatype\": ");
        string(o, datatype);
        o.push(',');
        pad(o, indent + 1);
        let dims: Vec<String> = shape.iter().map(ToString::to_string).collect();
        let _ = write!(o, "\"shape\": [{}],", dims.join(", "));
        pad(o, indent + 1);
        o.push_str("\"data\": ");
    }

    fn array(&mut self, n: &Node, a: &asdf::ArrayValues, indent: usize) {
        self.array_head(n, &a.datatype.to_string(), &a.shape, indent);
        let o = &mut self.out;
        nested(o, &a.shape, &a.elements, &mut |o, e| element(o, e));
        if let Some(m) = &a.mask {
            o.push(',');
            pad(o, indent + 1);
            o.push_str("\"mask\": ");
            nested(o, &a.shape, m, &mut |o, b| {
                o.push_str(if *b { "true" } else { "false" })
            });
        }
        pad(o, indent);
        o.push('}');
    }
}

/// Writes `items` as arrays nested by `shape` (one line per innermost row).
fn nested<T>(o: &mut String, shape: &[usize], items: &[T], each: &mut dyn FnMut(&mut String, &T)) {
    match shape.split_first() {
        None => match items.first() {
            Some(x) => each(o, x),
            None => o.push_str("null"),
        },
        Some((&n, rest)) => {
            let stride: usize = rest.iter().product();
            o.push('[');
            for i in 0..n {
                if i > 0 {
                    o.push_str(", ");
                }
                let lo = (i * stride).min(items.len());
                let hi = ((i + 1) * stride).min(items.len());
                nested(o, rest, &items[lo..hi], each);
            }
            o.push(']');
        }
    }
}

/// One element as `to-json` writes it (numbers, `true`/`false`, complex as Python's text,
/// records as arrays of their fields): how other outputs (`diff`) show an element too.
#[must_use]
pub fn element_text(e: &Element) -> String {
    let mut o = String::new();
    element(&mut o, e);
    o
}

fn element(o: &mut String, e: &Element) {
    match e {
        Element::Bool(b) => o.push_str(if *b { "true" } else { "false" }),
        Element::Int(i) => {
            let _ = write!(o, "{i}");
        }
        Element::UInt(u) => {
            let _ = write!(o, "{u}");
        }
        Element::Float(f) => float(o, *f),
        Element::Complex(c) => string(o, &asdf::complex::to_python_string(*c)),
        Element::Str(s) => string(o, s),
        Element::Record(fields) | Element::Array(fields) => {
            o.push('[');
            for (i, f) in fields.iter().enumerate() {
                if i > 0 {
                    o.push_str(", ");
                }
                element(o, f);
            }
            o.push(']');
        }
    }
}

/// An array (or a region of one) as `to-json` writes arrays, without the tag:
/// `{"datatype": ..., "shape": [...], "data": [...]}`, `data` nested by shape (C order).
#[must_use]
pub fn array_to_json(datatype: &str, shape: &[usize], elements: &[Element]) -> String {
    let mut o = String::from("{\"datatype\": ");
    string(&mut o, datatype);
    let dims: Vec<String> = shape.iter().map(ToString::to_string).collect();
    let _ = write!(o, ", \"shape\": [{}], \"data\": ", dims.join(", "));
    nested(&mut o, shape, elements, &mut |o, e| element(o, e));
    o.push('}');
    o
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    /// Keys of one text and different types (`2` and `'2'`, `true` and `'true'`) in one
    /// mapping: the string key is written under its text and the other (whichever comes
    /// first) renamed with a warning that lists the rename, each with its own values.
    #[test]
    fn keys_of_one_text_and_two_types_are_never_merged() {
        let text = "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
                    m:\n  2: !core/ndarray-1.1.0 {data: [1, 2], datatype: int64, shape: [2]}\n  '2': !core/ndarray-1.1.0 {data: [3, 4], datatype: int64, shape: [2]}\n  true: a\n  'true': b\n  $tag: c\n...\n";
        let f = asdf::Open::bytes(text.as_bytes().to_vec()).open().unwrap();
        // The pointer `/2` names the string key (as Python's `tree['2']` does), `/~e0` the
        // integer key.
        assert_eq!(f.array("/m/2").unwrap().read::<Vec<i64>>().unwrap(), [3, 4]);
        assert_eq!(f.array("/m/~e0").unwrap().read::<Vec<i64>>().unwrap(), [1, 2]);
        assert_eq!(f.get("/m/true").unwrap().as_str(), Some("b"));
        let mut out = Vec::new();
        let warnings = super::to_json(&f, &mut out).unwrap();
        let j: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let m = j["m"].as_object().unwrap();
        assert_eq!(m.len(), 5, "{m:?}");
        assert_eq!(m["2"]["data"], serde_json::json!([3, 4]), "{m:?}");
        assert_eq!(m["2 (2)"]["data"], serde_json::json!([1, 2]), "{m:?}");
        assert_eq!((m["true"].as_str(), m["true (2)"].as_str()), (Some("b"), Some("a")));
        assert_eq!(m["$tag"], "c");
        assert!(
            warnings.iter().any(|w| w.contains("`2` is written as `2 (2)`")),
            "{warnings:?}"
        );
        assert!(
            warnings.iter().any(|w| w.contains("`true` is written as `true (2)`")),
            "{warnings:?}"
        );
    }
}
