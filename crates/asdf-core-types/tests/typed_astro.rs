//! typed -> node -> typed is the identity, through YAML text, for the array-based typed values:
//! ndarray, integer, table and column (core and astronomy), quantity, time and fits (proptest).
//! Arrays are generated, then taken through one write/read so their `form` says what a node
//! written by this library holds.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use asdf_core_types::astro::{
    Array, AstroTable, Card, CardValue, Column, Coordinate, Fits, Hdu, HduData, Integer, Location, Number, Quantity,
    QuantityValue, Table, Time, TimeValue,
};
use asdf_core_types::typed::Typed;
use asdf_core_types::{ByteOrder, Datatype, Dim, NdArray, ScalarType, Source};
use asdf_yaml::{Document, EmitOptions, Limits, Node, parse};
use proptest::prelude::*;

const NDARRAY: &str = "tag:stsci.edu:asdf/core/ndarray-1.1.0";
const UNIT: &str = "tag:stsci.edu:asdf/unit/unit-1.0.0";
const QUANTITY: &str = "tag:stsci.edu:asdf/unit/quantity-1.2.0";

/// `t` -> node -> text -> node -> typed gives `t` back, and the node from it is the same text.
fn identity<T: Typed + PartialEq + std::fmt::Debug>(t: &T, tag: &str) {
    let n = t.to_node(tag);
    assert_eq!(&T::from_node(&n).unwrap(), t, "in memory");
    let emit = |n: &Node| {
        let doc = Document::new(Node::map(vec![(Node::str("v"), n.clone())]));
        asdf_yaml::emit(&doc, &EmitOptions::default()).unwrap()
    };
    let text = emit(&n);
    let back = parse(&text, &Limits::default()).unwrap().document;
    let t2 = T::from_node(back.root.get("v").unwrap()).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&emit(&t2.to_node(tag))),
        String::from_utf8_lossy(&text),
        "through text"
    );
}

fn word() -> impl Strategy<Value = String> {
    "[a-zA-Z_][a-zA-Z0-9_]{0,8}"
}

fn number() -> impl Strategy<Value = Number> {
    prop_oneof![
        any::<i32>().prop_map(|i| Number::Int(i64::from(i))),
        (-1e12f64..1e12).prop_map(Number::Float),
    ]
}

/// A block-backed or inline float64/int32 array, in the form this library writes it.
fn array() -> impl Strategy<Value = Array> {
    (
        any::<bool>(),
        prop::collection::vec(1usize..5, 1..3),
        prop::sample::select(vec![ScalarType::Float64, ScalarType::Int32, ScalarType::UInt8]),
        prop::sample::select(vec![ByteOrder::Big, ByteOrder::Little]),
        0i64..4,
        0u64..3,
    )
        .prop_map(|(inline, shape, t, order, source, offset)| {
            let n: usize = shape.iter().product();
            let a = if inline {
                let elements: Vec<_> = (0..n)
                    .map(|i| asdf_core_types::Element::Int(i64::try_from(i).unwrap()))
                    .collect();
                NdArray::inline(Datatype::Scalar(ScalarType::Int32), &shape, &elements)
            } else {
                let mut a = NdArray::inline(Datatype::Scalar(t), &shape, &[]);
                a.data = None;
                a.source = Some(Source::Block(source));
                a.byteorder = order;
                a.offset = offset * 8;
                a.shape = Some(shape.iter().map(|d| Dim::Fixed(*d)).collect());
                a
            };
            let a = <NdArray as Typed>::from_node(&a.to_node(NDARRAY)).unwrap();
            Array {
                array: a,
                tag: NDARRAY.to_owned(),
            }
        })
}

fn unit() -> impl Strategy<Value = (String, Option<String>)> {
    (
        prop::sample::select(vec!["m", "km", "deg", "m / s", "2.1798721 10-18kg m2 s-2"]),
        any::<bool>(),
    )
        .prop_map(|(u, t)| (u.to_owned(), t.then(|| UNIT.to_owned())))
}

fn meta() -> impl Strategy<Value = Option<Node>> {
    proptest::option::of(
        prop::collection::btree_map(word(), word(), 0..3)
            .prop_map(|m| Node::map(m.into_iter().map(|(k, v)| (Node::str(k), Node::str(v))).collect())),
    )
}

fn column(tag: &'static str) -> impl Strategy<Value = Column> {
    (
        word(),
        array(),
        proptest::option::of(word()),
        proptest::option::of(unit()),
        meta(),
    )
        .prop_map(move |(name, data, description, unit, meta)| Column {
            name,
            data,
            description,
            unit,
            meta,
            extra: Vec::new(),
            tag: Some(tag.to_owned()),
        })
}

fn quantity() -> impl Strategy<Value = Quantity> {
    (
        prop_oneof![
            number().prop_map(QuantityValue::Number),
            array().prop_map(|a| QuantityValue::Array(Box::new(a)))
        ],
        unit(),
        proptest::option::of(prop::sample::select(vec!["float32", "float64", "int16"])),
    )
        .prop_map(|(value, (unit, unit_tag), datatype)| Quantity {
            value,
            unit,
            unit_tag,
            datatype: datatype.map(str::to_owned),
            extra: Vec::new(),
            tag: Some(QUANTITY.to_owned()),
        })
}

fn time() -> impl Strategy<Value = Time> {
    let texts = prop::sample::select(vec![
        "2000-12-31T13:05:27.737",
        "B2000.0",
        "J2000.5",
        "2001:003:04:05:06.789",
    ]);
    let value = prop_oneof![
        texts.clone().prop_map(|s| TimeValue::Text(s.to_owned())),
        prop::collection::vec(texts, 1..3)
            .prop_map(|v| TimeValue::Texts(Node::seq(v.into_iter().map(Node::str).collect()))),
        number().prop_map(TimeValue::Number),
        array().prop_map(|a| TimeValue::Array(Box::new(a))),
    ];
    let coord = prop_oneof![
        number().prop_map(Coordinate::Number),
        quantity().prop_map(|q| Coordinate::Quantity(Box::new(q))),
    ];
    let location = proptest::option::of((coord.clone(), coord.clone(), coord).prop_map(|(x, y, z)| Location {
        x,
        y,
        z,
        extra: Vec::new(),
    }));
    (
        value,
        proptest::option::of(prop::sample::select(vec!["jyear", "mjd", "iso", "byear"])),
        proptest::option::of(prop::sample::select(vec!["utc", "tai", "tdb"])),
        proptest::option::of(0i64..9),
        location,
        any::<bool>(),
    )
        .prop_map(|(value, format, scale, precision, location, short)| {
            // The short form holds only a string or a list of strings.
            let short = short && matches!(value, TimeValue::Text(_) | TimeValue::Texts(_));
            Time {
                value,
                format: (!short).then_some(format).flatten().map(str::to_owned),
                base_format: None,
                scale: (!short).then_some(scale).flatten().map(str::to_owned),
                precision: (!short).then_some(precision).flatten(),
                in_subfmt: None,
                out_subfmt: None,
                location: (!short).then_some(location).flatten(),
                extra: Vec::new(),
                short,
            }
        })
}

fn card() -> impl Strategy<Value = Card> {
    (
        0usize..4,
        "[A-Z][A-Z0-9]{0,7}",
        prop_oneof![
            "[a-zA-Z ]{0,10}".prop_map(CardValue::Text),
            number().prop_map(CardValue::Number),
            any::<bool>().prop_map(CardValue::Bool),
        ],
        "[a-z ]{0,20}",
    )
        .prop_map(|(n, k, v, c)| Card {
            keyword: (n >= 1).then_some(k),
            value: (n >= 2).then_some(v),
            comment: (n >= 3).then_some(c),
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, .. ProptestConfig::default() })]

    #[test]
    fn ndarray_identity(a in array()) {
        identity(&a.array, NDARRAY);
    }

    #[test]
    fn integer_identity(v in any::<i128>()) {
        let i = Integer::inline(&v.into(), NDARRAY);
        let i = Integer::from_node(&i.to_node("tag:stsci.edu:asdf/core/integer-1.1.0")).unwrap();
        identity(&i, "tag:stsci.edu:asdf/core/integer-1.1.0");
    }

    #[test]
    fn column_identity(c in column("tag:stsci.edu:asdf/core/column-1.0.0")) {
        identity(&c, "tag:stsci.edu:asdf/core/column-1.0.0");
    }

    #[test]
    fn table_identity(columns in prop::collection::vec(column("tag:stsci.edu:asdf/core/column-1.0.0"), 0..4), meta in meta()) {
        identity(&Table { columns, meta, extra: Vec::new() }, "tag:stsci.edu:asdf/core/table-1.0.0");
    }

    #[test]
    fn astro_table_identity(columns in prop::collection::vec(column("tag:stsci.edu:asdf/table/column-1.1.0"), 0..4), meta in meta()) {
        identity(&AstroTable(Table { columns, meta, extra: Vec::new() }), "tag:stsci.edu:asdf/table/table-1.1.0");
    }

    #[test]
    fn quantity_identity(q in quantity()) {
        identity(&q, QUANTITY);
    }

    #[test]
    fn time_identity(t in time()) {
        identity(&t, "tag:stsci.edu:asdf/time/time-1.2.0");
    }

    #[test]
    fn fits_identity(hdus in prop::collection::vec(
        (prop::collection::vec(card(), 0..5), proptest::option::of(prop_oneof![
            array().prop_map(HduData::Array),
            Just(HduData::Null),
        ])).prop_map(|(header, data)| Hdu { header, data }),
        1..4,
    )) {
        identity(&Fits(hdus), "tag:stsci.edu:asdf/fits/fits-1.2.0");
    }
}

#[test]
fn errors_name_the_key() {
    let doc = parse(
        b"%YAML 1.1\n---\nq: {value: 1}\nt: {format: jyear}\nf: [{data: null}]\nc: {name: a}\ni: {sign: x, words: [1]}\n...\n",
        &Limits::default(),
    )
    .unwrap()
    .document;
    let g = |k: &str| doc.root.get(k).unwrap();
    assert_eq!(
        Quantity::from_node(g("q")).unwrap_err().to_string(),
        "unit/quantity: `unit` is required"
    );
    assert_eq!(
        Time::from_node(g("t")).unwrap_err().to_string(),
        "time/time: `value` is required"
    );
    assert_eq!(
        Fits::from_node(g("f")).unwrap_err().to_string(),
        "fits/fits: `header` is required"
    );
    assert_eq!(
        Column::from_node(g("c")).unwrap_err().to_string(),
        "core/column: `data` is required"
    );
    assert_eq!(
        Integer::from_node(g("i")).unwrap_err().to_string(),
        "core/integer: `sign` must be + or -"
    );
}

/// The quantity and the table columns of a file Python asdf 6.0 wrote (with asdf-astropy),
/// replaced by their typed values written back, give the same bytes: keys, tags and styles as
/// Python writes them.
#[test]
fn python_quantity_and_columns_are_written_back_byte_for_byte() {
    asdf_testdata::needs_conformance!();
    let p = asdf_testdata::conformance_dir().join("python-asdf-samples/f_astropy_table.asdf");
    let r = asdf_layout::Reader::open(std::fs::read(p).unwrap()).unwrap();
    let tree = r.tree_bytes().unwrap().to_vec();
    let mut doc = parse(&tree, &Limits::default()).unwrap().document;
    let root = doc.root.as_mapping_mut().unwrap();
    let q = root.get_mut("quantity").unwrap();
    let tag = q.tag.as_deref().map(str::to_owned).unwrap();
    *q = Quantity::from_node(q).unwrap().to_node(&tag);
    let cols = root
        .get_mut("table")
        .unwrap()
        .get_mut("columns")
        .unwrap()
        .as_sequence_mut()
        .unwrap();
    assert_eq!(cols.items.len(), 2);
    for c in &mut cols.items {
        let tag = c.tag.as_deref().map(str::to_owned).unwrap();
        *c = asdf_core_types::astro::AstroColumn::from_node(c).unwrap().to_node(&tag);
    }
    let out = asdf_yaml::emit(&doc, &EmitOptions::default()).unwrap();
    assert_eq!(String::from_utf8_lossy(&out), String::from_utf8_lossy(&tree));
}
