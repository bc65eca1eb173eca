//! `cargo bench -p asdf-core-types`: validating trees against the standard's schemas (with the
//! ndarray keywords): a tree of N mappings x 5 keys, and a tree of N tagged ndarrays.
//! (`cargo xtask bench-validate` and `cargo xtask bench` compare with Python asdf.)

#![allow(clippy::unwrap_used, clippy::expect_used)]

use asdf_yaml::{Document, Node, node::tags};
use divan::{Bencher, black_box};

fn main() {
    divan::main();
}

fn root(items: Vec<Node>) -> Document {
    let software = Node::map(vec![
        (Node::str("name"), Node::str("asdf-rs")),
        (Node::str("version"), Node::str("0.1.0")),
    ])
    .with_tag(format!("{}core/software-1.0.0", tags::ASDF));
    Document::new(
        Node::map(vec![
            (Node::str("asdf_library"), software),
            (Node::str("rows"), Node::seq(items)),
        ])
        .with_tag(format!("{}core/asdf-1.1.0", tags::ASDF)),
    )
}

#[divan::bench(args = [1_000, 20_000])]
fn plain_mappings(b: Bencher<'_, '_>, n: i64) {
    let doc = root(
        (0..n)
            .map(|i| {
                Node::map(vec![
                    (Node::str("a"), Node::int(i)),
                    (Node::str("b"), Node::str(format!("row {i}"))),
                    (Node::str("c"), Node::float(0.5)),
                    (Node::str("d"), Node::bool(i % 2 == 0)),
                    (Node::str("e"), Node::null()),
                ])
            })
            .collect(),
    );
    let schemas = asdf_core_types::schemas().unwrap();
    b.bench(|| assert!(schemas.validate_document(black_box(&doc)).is_valid()));
}

#[divan::bench(args = [100, 2_000])]
fn ndarrays(b: Bencher<'_, '_>, n: i64) {
    let doc = root(
        (0..n)
            .map(|i| {
                Node::map(vec![
                    (Node::str("source"), Node::int(i)),
                    (Node::str("datatype"), Node::str("float64")),
                    (Node::str("byteorder"), Node::str("little")),
                    (Node::str("shape"), Node::seq(vec![Node::int(3), Node::int(4)])),
                ])
                .with_tag(format!("{}core/ndarray-1.1.0", tags::ASDF))
            })
            .collect(),
    );
    let schemas = asdf_core_types::schemas().unwrap();
    b.bench(|| assert!(schemas.validate_document(black_box(&doc)).is_valid()));
}

#[divan::bench(sample_count = 10)]
fn load_schemas() -> usize {
    asdf_schema::AsdfSchemas::with_options(asdf_core_types::compile_options())
        .unwrap()
        .registry()
        .uris()
        .count()
}
