//! python-asdf-samples/f_misc.asdf (written by Python asdf 6.0): structured, big-endian,
//! complex, masked, bool, unicode, big-int, strided and inline arrays decode to the values
//! Python asdf reads (recorded from asdf 6.0.0 / numpy).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use asdf_core_types::{Complex, Element, NdArray, Source};
use asdf_layout::Reader;
use asdf_yaml::{Document, Limits, Node, parse, pointer};

struct F {
    r: Reader<Vec<u8>>,
    doc: Document,
}

fn open() -> F {
    let p = asdf_testdata::conformance_dir().join("python-asdf-samples/f_misc.asdf");
    let r = Reader::open(std::fs::read(p).unwrap()).unwrap();
    let doc = parse(r.tree_bytes().unwrap(), &Limits::default()).unwrap().document;
    F { r, doc }
}

impl F {
    fn node(&self, ptr: &str) -> &Node {
        pointer::get(&self.doc, ptr).unwrap()
    }
    fn array(&self, ptr: &str) -> (NdArray, Vec<Element>, Vec<usize>) {
        let a = NdArray::from_node(self.node(ptr), &self.doc).unwrap();
        let block = match &a.source {
            Some(Source::Block(i)) => Some(self.r.read_data(usize::try_from(*i).unwrap()).unwrap().into_owned()),
            _ => None,
        };
        let d = a.decode(block.as_deref()).unwrap();
        (a, d.elements, d.shape)
    }
}

fn floats(e: &[Element]) -> Vec<f64> {
    e.iter()
        .map(|x| match x {
            Element::Float(f) => *f,
            _ => panic!("{x:?}"),
        })
        .collect()
}

#[test]
fn f_misc_values() {
    asdf_testdata::needs_conformance!();
    let f = open();
    assert_eq!(floats(&f.array("/bigendian").1), vec![0.0, 1.0, 2.0, 3.0]);
    assert_eq!(f.array("/bool_arr").1, vec![Element::Bool(true), Element::Bool(false)]);
    let c = f.array("/complex_array").1;
    assert!(c[0].same(&Element::Complex(Complex::new(1.0, 2.0))));
    assert!(c[1].same(&Element::Complex(Complex::new(3.0, -4.0))));
    let cs = asdf_core_types::complex::parse(&f.node("/complex_scalar").as_scalar().unwrap().text).unwrap();
    assert!(cs.same(&Complex::new(1.0, 2.0)));
    assert_eq!(
        f.array("/inline").1,
        vec![Element::Int(1), Element::Int(2), Element::Int(3)]
    );
    assert_eq!(
        floats(&f.array("/strided_view").1),
        vec![2.0, 5.0, 8.0, 11.0, 14.0, 17.0]
    );
    assert_eq!(
        floats(&f.array("/view2").1),
        (0..10).map(|i| f64::from(i) * 2.0).collect::<Vec<_>>()
    );
    assert_eq!(floats(&f.array("/base").1), (0..20).map(f64::from).collect::<Vec<_>>());
    assert_eq!(
        f.array("/unicode_arr").1,
        vec![Element::Str("héllo".into()), Element::Str("wörld".into())]
    );
    let s = f.array("/structured").1;
    assert_eq!(
        s,
        vec![
            Element::Record(vec![Element::Int(1), Element::Float(2.5), Element::Str("ab".into())]),
            Element::Record(vec![Element::Int(3), Element::Float(4.5), Element::Str("cd".into())]),
        ]
    );
    // Masked: mask array [False, True, False] in its own block.
    let (m, vals, shape) = f.array("/masked");
    assert_eq!(shape, vec![3]);
    assert_eq!(floats(&vals), vec![1.0, 2.0, 3.0]);
    let mblock = match &m.mask {
        Some(asdf_core_types::Mask::Array(a)) => match a.source {
            Some(Source::Block(i)) => f.r.read_data(usize::try_from(i).unwrap()).unwrap().into_owned(),
            _ => panic!(),
        },
        other => panic!("{other:?}"),
    };
    let d = m.decode(Some(&f.r.read_data(6).unwrap())).unwrap();
    assert_eq!(m.mask_flags(&d, Some(&mblock)).unwrap(), Some(vec![false, true, false]));
    // Big integers: sign and uint32 words.
    for (ptr, want) in [
        ("/big_int", "1180591620717411303424"),
        ("/big_int_neg", "-1180591620717411303424"),
    ] {
        let n = f.node(ptr);
        let neg = n.get("sign").and_then(Node::as_str) == Some("-");
        let words: Vec<u32> = f
            .array(&format!("{ptr}/words"))
            .1
            .iter()
            .map(|e| match e {
                Element::UInt(u) => u32::try_from(*u).unwrap(),
                _ => panic!(),
            })
            .collect();
        assert_eq!(asdf_core_types::integer::from_words(neg, &words).to_string(), want);
        assert_eq!(n.get("string").and_then(Node::as_str), Some(want));
    }
    // Scalars.
    assert!(f.node("/nan").as_f64().unwrap().is_nan());
    assert_eq!(f.node("/inf").as_f64(), Some(f64::INFINITY));
    assert!(f.node("/none").is_null());
    assert!(matches!(&f.node("/bytes").as_scalar().unwrap().value, asdf_yaml::Value::Binary(b) if b[..] == [0, 1]));
}
