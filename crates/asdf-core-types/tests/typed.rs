//! typed -> node -> typed is the identity (proptest, through YAML text), and typed -> node
//! writes what Python asdf 6.0 wrote for the same value.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::cast_precision_loss)]

use asdf_core_types::complex::{self, Complex};
use asdf_core_types::{ByteOrder, Datatype, Element, Field, NdArray, ScalarType};
use asdf_yaml::{Document, EmitOptions, Limits, Node, NodeKind, emit, parse};
use proptest::prelude::*;

fn through_text(n: Node) -> (Node, Document) {
    let doc = Document::new(Node::map(vec![(Node::str("v"), n)]));
    let text = emit(&doc, &EmitOptions::default()).unwrap();
    let back = parse(&text, &Limits::default()).unwrap().document;
    (back.root.get("v").unwrap().clone(), back)
}

/// Every ndarray node Python asdf wrote comes back identical from from_node -> to_node.
#[test]
fn ndarray_nodes_as_python_writes_them() {
    asdf_testdata::needs_conformance!();
    let c = asdf_testdata::conformance_dir();
    let mut n = 0;
    for p in asdf_testdata::files_with_ext(&c.join("python-asdf-samples"), "asdf") {
        let r = asdf_layout::Reader::open_path(&p).unwrap();
        let Some(tree) = r.tree_bytes() else { continue };
        let doc = parse(tree, &Limits::default()).unwrap().document;
        let mut stack = vec![&doc.root];
        while let Some(node) = stack.pop() {
            match &node.kind {
                NodeKind::Mapping(m) => stack.extend(m.entries.iter().map(|(_, v)| v)),
                NodeKind::Sequence(s) => stack.extend(s.items.iter()),
                _ => {}
            }
            let Some(tag) = node.tag.as_deref().filter(|t| t.contains("core/ndarray")) else {
                continue;
            };
            if !matches!(node.kind, NodeKind::Mapping(_)) {
                continue;
            }
            let a = NdArray::from_node(node, &doc).unwrap();
            let again = a.to_node(tag);
            let (x, y) = (
                emit(&Document::new(node.clone()), &EmitOptions::default()).unwrap(),
                emit(&Document::new(again), &EmitOptions::default()).unwrap(),
            );
            assert_eq!(
                String::from_utf8_lossy(&y),
                String::from_utf8_lossy(&x),
                "{}",
                p.display()
            );
            n += 1;
        }
    }
    println!("{n} ndarray nodes written as Python asdf wrote them");
    assert!(n >= 40);
}

fn scalar_type() -> impl Strategy<Value = ScalarType> {
    prop::sample::select(vec![
        ScalarType::Int8,
        ScalarType::Int16,
        ScalarType::Int32,
        ScalarType::Int64,
        ScalarType::UInt8,
        ScalarType::UInt16,
        ScalarType::UInt32,
        ScalarType::UInt64,
        ScalarType::Float16,
        ScalarType::Float32,
        ScalarType::Float64,
        ScalarType::Complex64,
        ScalarType::Complex128,
        ScalarType::Bool8,
    ])
}

fn leaf_datatype() -> impl Strategy<Value = Datatype> {
    prop_oneof![
        scalar_type().prop_map(Datatype::Scalar),
        (1usize..40).prop_map(Datatype::Ascii),
        (1usize..40).prop_map(Datatype::Ucs4),
    ]
}

fn datatype() -> impl Strategy<Value = Datatype> {
    leaf_datatype().prop_recursive(2, 12, 4, |inner| {
        prop::collection::vec(
            (
                proptest::option::of("[a-z][a-z0-9_]{0,6}"),
                inner,
                proptest::option::of(prop::sample::select(vec![ByteOrder::Big, ByteOrder::Little])),
                prop::collection::vec(1usize..4, 0..3),
            )
                .prop_map(|(name, datatype, byteorder, shape)| Field {
                    name,
                    datatype,
                    byteorder,
                    shape,
                }),
            1..4,
        )
        .prop_map(Datatype::Structured)
    })
}

/// Values representable in `t`.
fn element_for(t: ScalarType) -> BoxedStrategy<Element> {
    match t {
        ScalarType::Bool8 => any::<bool>().prop_map(Element::Bool).boxed(),
        ScalarType::Int8 => any::<i8>().prop_map(|v| Element::Int(v.into())).boxed(),
        ScalarType::Int16 => any::<i16>().prop_map(|v| Element::Int(v.into())).boxed(),
        ScalarType::Int32 => any::<i32>().prop_map(|v| Element::Int(v.into())).boxed(),
        ScalarType::Int64 => any::<i64>().prop_map(Element::Int).boxed(),
        ScalarType::UInt8 => any::<u8>().prop_map(|v| Element::UInt(v.into())).boxed(),
        ScalarType::UInt16 => any::<u16>().prop_map(|v| Element::UInt(v.into())).boxed(),
        ScalarType::UInt32 => any::<u32>().prop_map(|v| Element::UInt(v.into())).boxed(),
        ScalarType::UInt64 => any::<u64>().prop_map(Element::UInt).boxed(),
        ScalarType::Float16 => (-2048i32..2048)
            .prop_map(|v| Element::Float(f64::from(v) / 4.0))
            .boxed(),
        ScalarType::Float32 => any::<f32>().prop_map(|v| Element::Float(v.into())).boxed(),
        ScalarType::Complex64 => (any::<f32>(), any::<f32>())
            .prop_map(|(a, b)| Element::Complex(Complex::new(a.into(), b.into())))
            .boxed(),
        ScalarType::Complex128 => (any::<f64>(), any::<f64>())
            .prop_map(|(a, b)| Element::Complex(Complex::new(a, b)))
            .boxed(),
        _ => any::<f64>().prop_map(Element::Float).boxed(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    #[test]
    fn datatype_round_trips(dt in datatype()) {
        let (n, _) = through_text(dt.to_node());
        prop_assert_eq!(Datatype::from_node(&n).unwrap(), dt);
    }

    #[test]
    fn complex_round_trips(re in any::<f64>(), im in any::<f64>()) {
        let c = Complex::new(re, im);
        let text = complex::to_python_string(c);
        let back = complex::parse(&text).unwrap();
        prop_assert!(back.same(&c), "{} -> {:?}", text, back);
        // And the text matches the standard's pattern (the schema accepts it).
        prop_assert!(text.bytes().all(|b| b.is_ascii_alphanumeric() || b"+-.()".contains(&b)));
    }

    #[test]
    fn inline_ndarray_round_trips(
        (t, shape, elements) in (scalar_type(), prop::collection::vec(1usize..4, 1..3))
            .prop_flat_map(|(t, shape)| {
                let n: usize = shape.iter().product();
                (Just(t), Just(shape), prop::collection::vec(element_for(t), n))
            })
    ) {
        let a = NdArray::inline(Datatype::Scalar(t), &shape, &elements);
        let tag = "tag:stsci.edu:asdf/core/ndarray-1.1.0";
        let (n, doc) = through_text(a.to_node(tag));
        let b = NdArray::from_node(&n, &doc).unwrap();
        let d = b.decode(None).unwrap();
        prop_assert_eq!(&d.shape, &shape);
        for (x, y) in d.elements.iter().zip(&elements) {
            prop_assert!(x.same(y), "{:?} vs {:?}", x, y);
        }
    }

    #[test]
    fn integers_round_trip(v in any::<i128>()) {
        let big = num_bigint::BigInt::from(v);
        let (neg, words) = asdf_core_types::integer::to_words(&big);
        prop_assert_eq!(asdf_core_types::integer::from_words(neg, &words), big);
    }
}
