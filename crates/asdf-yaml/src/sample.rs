//! A generated tree shaped like a large ASDF catalogue, for benchmarks.

use crate::node::{Document, Mapping, Node, tags};

/// A document of `rows` catalogue entries (about 400 bytes of YAML each): tagged ndarray
/// mappings, floats, ints, strings and flow sequences.
#[must_use]
pub fn catalogue(rows: usize) -> Document {
    let mut entries = Vec::with_capacity(rows);
    for i in 0..rows {
        #[allow(clippy::cast_precision_loss)]
        let x = i as f64;
        let arr = Node::map(vec![
            (Node::str("source"), Node::int(i64::try_from(i).unwrap_or(i64::MAX))),
            (Node::str("datatype"), Node::str("float64")),
            (Node::str("byteorder"), Node::str("little")),
            (Node::str("shape"), Node::seq(vec![Node::int(3), Node::int(3)])),
        ])
        .with_tag(format!("{}core/ndarray-1.1.0", tags::ASDF));
        let row = Node::map(vec![
            (Node::str("name"), Node::str(format!("source_{i:06}"))),
            (Node::str("ra"), Node::float(x * 0.001_234_5 % 360.0)),
            (Node::str("dec"), Node::float((x * 0.000_987_6 % 180.0) - 90.0)),
            (Node::str("flux"), arr),
            (
                Node::str("flags"),
                Node::seq(vec![Node::int(1), Node::bool(i % 2 == 0), Node::null()]),
            ),
            (
                Node::str("note"),
                Node::str(format!("observed on night {} with filter F{}W", i % 365, 100 + i % 900)),
            ),
            (Node::str("yes"), Node::str("yes")),
        ]);
        entries.push(row);
    }
    let mut root = Node::map(vec![
        (Node::str("catalogue"), Node::seq(entries)),
        (Node::str("title"), Node::str("generated catalogue")),
    ])
    .with_tag(format!("{}core/asdf-1.1.0", tags::ASDF));
    if let Some(Mapping { flow, .. }) = root.as_mapping_mut() {
        *flow = false;
    }
    Document::new(root)
}
