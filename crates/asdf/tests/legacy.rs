//! The layouts before 1.0.0: the standard's historic reference files (every one headed
//! `#ASDF 0.1.0`, four block header layouts) against their `.yaml` twins, and FINF 0.1.0 and
//! ASDF 0.1.0 encoded files built here byte by byte from the seed texts (not by this
//! library's writer), then round trips of the writer.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::cast_possible_truncation
)]

use std::collections::BTreeMap;
use std::io::Write as _;

use asdf::core_types::Element;
use asdf::layout::BlockLayout;
use asdf::{Node, NodeKind, OpenOptions};

/// Every scalar outside ndarrays, by JSON pointer (aliases followed).
fn scalars(doc: &asdf::Document, n: &Node, at: String, out: &mut BTreeMap<String, String>) {
    let n = doc.resolve(n);
    if n.tag.as_deref().is_some_and(asdf::is_ndarray_tag) {
        out.insert(at, "<ndarray>".to_owned());
        return;
    }
    match &n.kind {
        NodeKind::Mapping(m) => {
            for (k, v) in &m.entries {
                let key = k.as_scalar().map(|s| s.text.to_string()).unwrap_or_default();
                scalars(doc, v, format!("{at}/{key}"), out);
            }
        }
        NodeKind::Sequence(s) => {
            for (i, v) in s.items.iter().enumerate() {
                scalars(doc, v, format!("{at}/{i}"), out);
            }
        }
        _ => {
            out.insert(at, n.as_scalar().map(|s| format!("{:?}", s.value)).unwrap_or_default());
        }
    }
}

/// Equal, floats to the 12 significant digits the twins were printed with.
fn close(a: &Element, b: &Element) -> bool {
    let f = |x: f64, y: f64| x == y || (x.is_nan() && y.is_nan()) || (x - y).abs() <= 5e-12 * y.abs();
    match (a, b) {
        (Element::Float(x), Element::Float(y)) => f(*x, *y),
        (Element::Complex(x), Element::Complex(y)) => f(x.re, y.re) && f(x.im, y.im),
        (Element::Record(x), Element::Record(y)) | (Element::Array(x), Element::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| close(a, b))
        }
        _ => a == b,
    }
}

fn layout_name(f: &asdf::AsdfFile) -> String {
    match f.source().layout().block(0) {
        Err(_) => "no block".to_owned(),
        Ok(b) => match b.header.layout {
            BlockLayout::Encoding44 => "44-byte header (encoding field)",
            BlockLayout::Sized36 => "36-byte header (the ASDF 0.1.0 draft)",
            BlockLayout::Label40 => "40-byte header (compression label)",
            BlockLayout::Standard => "48-byte header (1.0.0 layout)",
            _ => "other",
        }
        .to_owned(),
    }
}

#[test]
fn historic_reference_files_read_as_their_twins() {
    let c = asdf_testdata::conformance!();
    let dir = c.join("legacy/asdf-standard-history");
    let mut per_layout: BTreeMap<String, usize> = BTreeMap::new();
    let mut arrays = 0;
    let mut failures = Vec::new();
    for twin in asdf_testdata::files_with_ext(&dir, "yaml") {
        let file = twin.with_extension("asdf");
        if !file.exists() {
            continue;
        }
        let check = || -> Result<(String, usize), String> {
            let opts = OpenOptions::default().strict(true);
            let ours = asdf::Open::path(&file)
                .options(opts.clone())
                .open()
                .map_err(|e| format!("open: {e}"))?;
            let theirs = asdf::Open::path(&twin)
                .options(opts)
                .open()
                .map_err(|e| format!("open twin: {e}"))?;
            let (mut a, mut b) = (BTreeMap::new(), BTreeMap::new());
            scalars(ours.document(), ours.tree(), String::new(), &mut a);
            scalars(theirs.document(), theirs.tree(), String::new(), &mut b);
            if a != b {
                return Err(format!("trees differ:\n{a:?}\n{b:?}"));
            }
            let pointers = theirs.array_pointers();
            if ours.array_pointers() != pointers || pointers.is_empty() {
                return Err(format!("arrays {:?} vs {pointers:?}", ours.array_pointers()));
            }
            for p in &pointers {
                let x = ours
                    .array(p)
                    .and_then(|a| a.values())
                    .map_err(|e| format!("{p}: {e}"))?;
                let y = theirs
                    .array(p)
                    .and_then(|a| a.values())
                    .map_err(|e| format!("twin {p}: {e}"))?;
                if x.shape != y.shape || x.datatype != y.datatype {
                    return Err(format!(
                        "{p}: {:?} {:?} vs {:?} {:?}",
                        x.shape, x.datatype, y.shape, y.datatype
                    ));
                }
                if x.elements.len() != y.elements.len() || !x.elements.iter().zip(&y.elements).all(|(a, b)| close(a, b))
                {
                    return Err(format!("{p}: values differ"));
                }
            }
            Ok((layout_name(&ours), pointers.len()))
        };
        match check() {
            Ok((layout, n)) => {
                *per_layout.entry(layout).or_default() += 1;
                arrays += n;
            }
            Err(e) => failures.push(format!("{}: {e}", file.display())),
        }
    }
    let total: usize = per_layout.values().sum();
    let _ = writeln!(
        std::io::stderr().lock(),
        "historic files read as their twins: {total} ({arrays} arrays); per block layout: {per_layout:?}"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(total, 112, "{per_layout:?}");
    // Every layout of the history is there (README of the corpus).
    assert_eq!(per_layout.len(), 5, "{per_layout:?}");
}

// ---------------------------------------------------------------------------------------
// Files built byte by byte from the seeds.

fn be64(v: u64) -> [u8; 8] {
    v.to_be_bytes()
}

/// A block header of the ASDF 0.1.0 draft (36 bytes of fields) for `body`.
fn sized36(flags: u32, body: &[u8], memory_size: u64) -> Vec<u8> {
    let mut v = vec![0xd3, b'B', b'L', b'K'];
    v.extend_from_slice(&36u16.to_be_bytes());
    v.extend_from_slice(&flags.to_be_bytes());
    v.extend_from_slice(&be64(body.len() as u64)); // allocated
    v.extend_from_slice(&be64(body.len() as u64)); // used
    v.extend_from_slice(&be64(memory_size));
    v.extend_from_slice(&be64(0)); // checksum
    v.extend_from_slice(body);
    v
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// Packs signed `codes` of `bits` bits most significant bit first, zero-padded to a byte
/// (written independently of the library's packer).
fn pack(codes: &[i64], bits: u32) -> Vec<u8> {
    let mut bitvec: Vec<bool> = Vec::new();
    for &c in codes {
        for k in (0..bits).rev() {
            bitvec.push((c >> k) & 1 == 1);
        }
    }
    bitvec
        .chunks(8)
        .map(|ch| {
            ch.iter()
                .enumerate()
                .fold(0u8, |b, (i, &on)| b | (u8::from(on) << (7 - i)))
        })
        .collect()
}

/// A quantize chunk: header then packed codes.
fn chunk(bits: u8, offset: f64, scale: f64, codes: &[i64]) -> Vec<u8> {
    let mut v = vec![bits];
    v.extend_from_slice(&offset.to_be_bytes());
    v.extend_from_slice(&scale.to_be_bytes());
    v.extend_from_slice(&be64(codes.len() as u64));
    v.extend_from_slice(&pack(codes, u32::from(bits)));
    v
}

fn f64s(f: &asdf::AsdfFile, p: &str) -> Vec<f64> {
    f.array(p)
        .and_then(|a| a.values())
        .unwrap()
        .elements
        .iter()
        .map(|e| match e {
            Element::Float(x) => *x,
            Element::Int(i) => *i as f64,
            Element::UInt(u) => *u as f64,
            other => panic!("{other:?}"),
        })
        .collect()
}

#[test]
fn finf_files_built_from_the_seed() {
    // FINF 0.1.0: `%FINF 0.1.0`, a YAML 1.1 tree, blocks with magic 89 42 4c 4b and header
    // allocated/used/checksum (u64) + encoding char[16]; ndarray `dtype`, big-endian default.
    let tree = "%YAML 1.1\n%TAG ! tag:stsci.edu:finf/0.1.0/\n--- !core/finf\n\
                image: !core/ndarray\n  source: 0\n  dtype: float64\n  shape: [2, 3]\n\
                counts: !core/ndarray\n  source: 1\n  dtype: int16\n  byteorder: little\n  shape: [4]\n\
                small: !core/ndarray\n  dtype: int32\n  data: [1, 2, 3]\n\
                named: !core/ndarray\n  source: 2\n  dtype: uint8\n  shape: [2]\n\
                note: hello\n...\n";
    let image: Vec<f64> = vec![1.5, -2.0, 3.25, 1e300, -0.0, 42.0];
    let counts: Vec<i16> = vec![-3, 7, 300, -32768];
    let mut file = b"%FINF 0.1.0\n".to_vec();
    file.extend_from_slice(tree.as_bytes());
    file.extend_from_slice(b"    "); // room to grow the tree
    for (body, spare, encoding) in [
        (
            image.iter().flat_map(|v| v.to_be_bytes()).collect::<Vec<u8>>(),
            16u64,
            "",
        ),
        (counts.iter().flat_map(|v| v.to_le_bytes()).collect(), 0, ""),
        (vec![1, 2], 0, "gzip"),
    ] {
        file.extend_from_slice(&[0x89, b'B', b'L', b'K']);
        file.extend_from_slice(&40u16.to_be_bytes());
        file.extend_from_slice(&be64(body.len() as u64 + spare)); // allocated
        file.extend_from_slice(&be64(body.len() as u64)); // used
        file.extend_from_slice(&be64(0)); // checksum
        let mut name = [0u8; 16];
        name[..encoding.len()].copy_from_slice(encoding.as_bytes());
        file.extend_from_slice(&name); // encoding
        file.extend_from_slice(&body);
        file.extend(std::iter::repeat_n(0xee, usize::try_from(spare).unwrap()));
    }
    let f = asdf::Open::bytes(file)
        .options(OpenOptions::default().strict(true))
        .open()
        .unwrap();
    assert_eq!(f.source().layout().file_header().dialect, asdf::layout::Dialect::Finf);
    assert_eq!(f.source().layout().block_count(), 3);
    assert_eq!(f64s(&f, "/image"), image);
    assert_eq!(f.array("/image").unwrap().shape(), &[2, 3]);
    assert_eq!(
        f64s(&f, "/counts"),
        counts.iter().map(|&c| f64::from(c)).collect::<Vec<_>>()
    );
    assert_eq!(f64s(&f, "/small"), vec![1.0, 2.0, 3.0]);
    assert_eq!(f.get("/note").unwrap().as_str(), Some("hello"));
    assert_eq!(
        f.tree().tag.as_deref(),
        Some("tag:stsci.edu:asdf/core/asdf-1.0.0"),
        "FINF's root maps to today's"
    );
    // The tree is validated as written against FINF's own schemas (a dtype FINF did not
    // have), besides the 1.0.0 schemas after mapping.
    let bad = b"%FINF 0.1.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:finf/0.1.0/\n--- !core/finf\nx: !core/ndarray\n  dtype: float65\n  data: [1]\n...\n";
    match asdf::Open::bytes(bad.to_vec())
        .options(OpenOptions::default().strict(true))
        .open()
    {
        Err(asdf::Error::Invalid(v)) => {
            assert!(v.iter().any(|v| v.schema.contains("finf/0.1.0/core/ndarray")), "{v:?}")
        }
        other => panic!("{other:?}"),
    }
    // A block naming an encoding (the seed's "TBD") fails alone, clearly.
    let e = f.array("/named").and_then(|a| a.values()).unwrap_err().to_string();
    assert!(e.contains("encoding `gzip`"), "{e}");
}

/// Files of the ASDF 0.1.0 draft with encoding chains: tile+zlib, quantize+zlib (odd bit widths, several
/// chunks), tile+quantize+zlib on big-endian float64 with edge tiles, and an unknown encoding.
#[test]
fn encoded_files_built_from_seed_001() {
    let (rows, cols, tr, tc) = (5usize, 7usize, 2usize, 3usize);
    // 1. tile + zlib over uint16 5x7, tiles 2x3, edge tiles padded with zeros; tiles in C
    //    order over the grid, elements of each tile in C order.
    let a: Vec<u16> = (0..rows * cols)
        .map(|i| u16::try_from(i * 37 % 1000).unwrap())
        .collect();
    let mut tiled = Vec::new();
    for ti in 0..rows.div_ceil(tr) {
        for tj in 0..cols.div_ceil(tc) {
            for i in 0..tr {
                for j in 0..tc {
                    let (r, c) = (ti * tr + i, tj * tc + j);
                    let v = if r < rows && c < cols { a[r * cols + c] } else { 0 };
                    tiled.extend_from_slice(&v.to_le_bytes());
                }
            }
        }
    }
    let mut b1 = b"--- [[tile, {shape: [2, 3], original_shape: [5, 7], item_size: 2}], zlib]\n...\n".to_vec();
    b1.extend_from_slice(&zlib(&tiled));

    // 2. quantize + zlib, float32, three chunks of 5, 13 and 7 bits.
    let chunks: [(u8, f64, f64, Vec<i64>); 3] = [
        (5, 10.0, 0.5, (-16..16).collect()),
        (13, -1000.0, 0.125, vec![-4096, 4095, 0, 1, -1, 77, -2000]),
        (7, 0.0, 2.0, vec![63, -64, 5]),
    ];
    let mut q = Vec::new();
    let mut expected_q: Vec<f64> = Vec::new();
    for (bits, off, scale, codes) in &chunks {
        q.extend_from_slice(&chunk(*bits, *off, *scale, codes));
        expected_q.extend(codes.iter().map(|&c| f64::from((c as f64 * scale + off) as f32)));
    }
    let n = expected_q.len();
    let mut b2 = format!("--- [[quantize, {{dtype: 32, original_shape: [{n}]}}], zlib]\n...\n").into_bytes();
    b2.extend_from_slice(&zlib(&q));

    // 3. tile + quantize + zlib, float64 big-endian 5x7, tiles 2x3 with edge tiles, one
    //    9-bit chunk per (padded) tile with its own offset and scale.
    let mut q3 = Vec::new();
    let mut expected3 = vec![0f64; rows * cols];
    let grid = (rows.div_ceil(tr), cols.div_ceil(tc));
    for ti in 0..grid.0 {
        for tj in 0..grid.1 {
            let (off, scale) = ((ti * 10 + tj) as f64, 0.01 * (1 + ti + tj) as f64);
            let mut codes = Vec::new();
            for i in 0..tr {
                for j in 0..tc {
                    let code = ((ti * 31 + tj * 17 + i * 5 + j) % 512) as i64 - 256;
                    codes.push(code);
                    let (r, c) = (ti * tr + i, tj * tc + j);
                    if r < rows && c < cols {
                        expected3[r * cols + c] = code as f64 * scale + off;
                    }
                }
            }
            q3.extend_from_slice(&chunk(9, off, scale, &codes));
        }
    }
    let padded = grid.0 * tr * grid.1 * tc;
    let mut b3 = format!(
        "--- [[tile, {{shape: [2, 3], original_shape: [5, 7], item_size: 8}}], [quantize, {{dtype: 64, original_shape: [{padded}]}}], zlib]\n...\n"
    )
    .into_bytes();
    b3.extend_from_slice(&zlib(&q3));

    // 4. An encoding nobody knows: that block fails, the rest reads.
    let mut b4 = b"--- [[rot13, {strength: 2}], zlib]\n...\n".to_vec();
    b4.extend_from_slice(&zlib(&[0u8; 8]));

    let tree = format!(
        "%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/0.1.0/\n--- !core/asdf\n\
         tiled: !core/ndarray\n  source: 0\n  datatype: uint16\n  byteorder: little\n  shape: [5, 7]\n\
         quantized: !core/ndarray\n  source: 1\n  datatype: float32\n  shape: [{n}]\n\
         both: !core/ndarray\n  source: 2\n  datatype: float64\n  byteorder: big\n  shape: [5, 7]\n\
         unknown: !core/ndarray\n  source: 3\n  datatype: float64\n  shape: [1]\n...\n"
    );
    let mut file = b"#ASDF 0.1.0\n".to_vec();
    file.extend_from_slice(tree.as_bytes());
    file.extend_from_slice(&sized36(2, &b1, (rows * cols * 2) as u64));
    file.extend_from_slice(&sized36(2, &b2, (n * 4) as u64));
    file.extend_from_slice(&sized36(2, &b3, (rows * cols * 8) as u64));
    file.extend_from_slice(&sized36(2, &b4, 8));
    assert_eq!(n, 32 + 7 + 3);

    let f = asdf::Open::bytes(file)
        .options(OpenOptions::default().strict(true))
        .open()
        .unwrap();
    assert_eq!(f.source().layout().block_count(), 4);
    assert_eq!(f64s(&f, "/tiled"), a.iter().map(|&v| f64::from(v)).collect::<Vec<_>>());
    assert_eq!(f64s(&f, "/quantized"), expected_q);
    assert_eq!(f64s(&f, "/both"), expected3);
    let e = f.array("/unknown").and_then(|a| a.values()).unwrap_err().to_string();
    assert!(e.contains("unknown encoding `rot13`"), "{e}");
    // The typed handle reads the same values.
    let both: Vec<f64> = f.array("/both").unwrap().read::<Vec<f64>>().unwrap();
    assert_eq!(both, expected3);
}

#[test]
fn ff_file_format_0_1_0_now_reads() {
    // Python asdf refuses this file ("Unsupported ASDF file format version"); this library
    // reads the pre-1.0 drafts (a deliberate difference, written down in the README).
    let c = asdf_testdata::conformance!();
    let f = asdf::open(c.join("asdf-pytests-data/inline/ff_file_format_0.1.0.asdf")).unwrap();
    assert_eq!(f.get("/foo").unwrap().as_str(), Some("bar"));
    assert_eq!(f.tree().tag.as_deref(), Some("tag:stsci.edu:asdf/core/asdf-1.0.0"));
}

// ---------------------------------------------------------------------------------------
// Round trips of this library's writer of the pre-1.0 layouts.

mod round_trip {
    use super::*;
    use asdf::drafts::chain::{Chain, Encoding};
    use asdf::drafts::{LegacyBlock, write_file};
    use asdf::layout::Dialect;
    use proptest::prelude::*;

    /// (datatype name, item size, float?)
    const TYPES: [(&str, usize, bool); 4] = [
        ("float64", 8, true),
        ("float32", 4, true),
        ("uint16", 2, false),
        ("int32", 4, false),
    ];

    fn bytes_of(values: &[f64], ty: usize, little: bool) -> Vec<u8> {
        let mut out = Vec::new();
        for &v in values {
            let b: Vec<u8> = match (TYPES[ty].0, little) {
                ("float64", true) => v.to_le_bytes().to_vec(),
                ("float64", false) => v.to_be_bytes().to_vec(),
                ("float32", true) => (v as f32).to_le_bytes().to_vec(),
                ("float32", false) => (v as f32).to_be_bytes().to_vec(),
                ("uint16", true) => (v as u16).to_le_bytes().to_vec(),
                ("uint16", false) => (v as u16).to_be_bytes().to_vec(),
                (_, true) => (v as i32).to_le_bytes().to_vec(),
                (_, false) => (v as i32).to_be_bytes().to_vec(),
            };
            out.extend(b);
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

        #[test]
        fn asdf_0_1_0_encoded_blocks(
            shape in prop::collection::vec(1usize..9, 1..4),
            tile_seed in prop::collection::vec(1usize..11, 3),
            ty in 0usize..4,
            little in any::<bool>(),
            chain_kind in 0usize..5,
            bits in 2u8..25,
            seed in any::<u32>(),
        ) {
            let (dtype, item, float) = TYPES[ty];
            let n: usize = shape.iter().product();
            let values: Vec<f64> = (0..n)
                .map(|i| {
                    let x = f64::from(((i as u32).wrapping_mul(2_654_435_761) ^ seed) % 50_000);
                    if float { x / 7.0 - 3000.0 } else { x }
                })
                .collect();
            let data = bytes_of(&values, ty, little);
            let tile_shape: Vec<usize> = shape.iter().zip(&tile_seed).map(|(d, t)| 1 + (t - 1) % (d + 2)).collect();
            let tile = Encoding::Tile { shape: tile_shape, original_shape: shape.clone(), item_size: item };
            let padded: usize = shape.iter().zip(match &tile { Encoding::Tile { shape, .. } => shape, _ => unreachable!() })
                .map(|(d, t)| d.div_ceil(*t) * t).product();
            let quantize = |len: usize| Encoding::Quantize { dtype: u8::try_from(item * 8).unwrap(), original_shape: vec![len], bits };
            // Quantize only floats.
            let kind = if float { chain_kind } else { chain_kind % 3 };
            let chain = Chain(match kind {
                0 => vec![Encoding::Zlib],
                1 => vec![tile.clone()],
                2 => vec![tile.clone(), Encoding::Zlib],
                3 => vec![quantize(n), Encoding::Zlib],
                _ => vec![tile.clone(), quantize(padded), Encoding::Zlib],
            });
            let shape_text = format!("{shape:?}");
            let tree = format!(
                "%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/0.1.0/\n--- !core/asdf\na: !core/ndarray\n  source: 0\n  datatype: {dtype}\n  byteorder: {}\n  shape: {shape_text}\n...\n",
                if little { "little" } else { "big" }
            );
            let mut file = Vec::new();
            write_file(&mut file, Dialect::Asdf010, tree.as_bytes(), &[LegacyBlock { data: &data, chain: Some(&chain), little_endian: little }]).unwrap();
            let f = asdf::Open::bytes(file).options(OpenOptions::default().strict(true)).open().unwrap();
            prop_assert_eq!(f.source().layout().block(0).unwrap().header.layout, BlockLayout::Sized36);
            let got = f64s(&f, "/a");
            prop_assert_eq!(got.len(), n);
            if kind >= 3 {
                // Lossy: within half a quantization step of the whole range, plus float32's
                // own rounding.
                let (lo, hi) = values.iter().fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
                let step = (hi - lo) / (2f64.powi(i32::from(bits)) - 1.0);
                for (a, b) in values.iter().zip(&got) {
                    let tol = step / 2.0 + 1e-9 + if item == 4 { 1e-6 * a.abs().max(1.0) } else { 1e-12 * a.abs() };
                    prop_assert!((a - b).abs() <= tol, "{} vs {} (step {})", a, b, step);
                }
            } else {
                let want: Vec<f64> = values.iter().map(|&v| if item == 4 && float { f64::from(v as f32) } else { v }).collect();
                prop_assert_eq!(got, want);
            }
        }

        #[test]
        fn finf_files(values in prop::collection::vec(-1e6f64..1e6, 1..40), little in any::<bool>(), declare in any::<bool>()) {
            let data = bytes_of(&values, 0, little);
            // FINF's byteorder defaults to big: left out only for big-endian data.
            let order = if little { "  byteorder: little\n" } else if declare { "  byteorder: big\n" } else { "" };
            let tree = format!(
                "%YAML 1.1\n%TAG ! tag:stsci.edu:finf/0.1.0/\n--- !core/finf\nx: !core/ndarray\n  source: 0\n  dtype: float64\n{order}  shape: [{}]\n...\n",
                values.len()
            );
            let mut file = Vec::new();
            write_file(&mut file, Dialect::Finf, tree.as_bytes(), &[LegacyBlock { data: &data, chain: None, little_endian: little }]).unwrap();
            prop_assert_eq!(&file[..12], b"%FINF 0.1.0\n");
            let f = asdf::Open::bytes(file).options(OpenOptions::default().strict(true)).open().unwrap();
            prop_assert_eq!(f64s(&f, "/x"), values);
        }
    }

    #[test]
    fn finf_refuses_chains_and_asdf_1_is_not_a_draft() {
        let chain = Chain(vec![Encoding::Zlib]);
        let b = [LegacyBlock {
            data: &[1, 2],
            chain: Some(&chain),
            little_endian: true,
        }];
        assert!(write_file(&mut Vec::new(), Dialect::Finf, b"", &b).is_err());
        assert!(write_file(&mut Vec::new(), Dialect::Asdf, b"", &[]).is_err());
    }
}

/// `AsdfFile::write_draft`: a file of today written as the ASDF 0.1.0 draft's layout (a tile + quantize +
/// zlib chain on the float image, tile + zlib on the counts) and as FINF, read back.
#[test]
fn files_of_today_written_as_drafts() {
    use asdf::drafts::chain::{Chain, Encoding};
    use asdf::layout::Dialect;
    use asdf::{NewArray, Version, WriteOptions};
    let image: Vec<f64> = (0..30).map(|i| f64::from(i) * 1.25 - 7.0).collect();
    let counts: Vec<i16> = (0..7).map(|i| i * 300 - 900).collect();
    let mut f = asdf::AsdfFile::new(Version::STANDARD_LATEST).unwrap();
    f.put_array("/sci/image", NewArray::from_slice(&image, &[6, 5]).unwrap())
        .unwrap();
    f.put_array("/counts", NewArray::from_slice(&counts, &[7]).unwrap())
        .unwrap();
    f.set("/name", Node::str("a draft")).unwrap();
    let f = asdf::Open::bytes(crate::common::bytes(&f, &WriteOptions::default()).unwrap())
        .options(OpenOptions::default())
        .open()
        .unwrap();
    let chain = |_: usize, a: Option<&asdf::Array<'_>>| -> Option<Chain> {
        let a = a?;
        let shape = a.shape().to_vec();
        let item = a.datatype().size();
        let tile = Encoding::Tile {
            shape: shape.iter().map(|d| d.div_ceil(2)).collect(),
            original_shape: shape.clone(),
            item_size: item,
        };
        Some(Chain(if a.datatype().to_string() == "float64" {
            let padded = shape.iter().map(|d| d.div_ceil(2) * 2).product();
            vec![
                tile,
                Encoding::Quantize {
                    dtype: 64,
                    original_shape: vec![padded],
                    bits: 16,
                },
                Encoding::Zlib,
            ]
        } else {
            vec![tile, Encoding::Zlib]
        }))
    };
    let mut draft = Vec::new();
    f.write(
        asdf::Target::Writer(&mut draft),
        &asdf::WriteOptions::default().form(asdf::Form::Draft {
            dialect: Dialect::Asdf010,
            chain: Some(std::sync::Arc::new(chain)),
        }),
    )
    .unwrap();
    assert!(draft.starts_with(b"#ASDF 0.1.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/0.1.0/\n"));
    let d = asdf::Open::bytes(draft)
        .options(OpenOptions::default().strict(true))
        .open()
        .unwrap();
    assert_eq!(d.source().layout().block_count(), 2);
    assert!(d.source().layout().block(0).unwrap().header.is_encoded());
    let got = f64s(&d, "/sci/image");
    for (a, b) in image.iter().zip(&got) {
        // Half a 16-bit step over each tile's range.
        assert!((a - b).abs() <= 36.25 / 65535.0, "{a} vs {b}");
    }
    assert_eq!(
        f64s(&d, "/counts"),
        counts.iter().map(|&c| f64::from(c)).collect::<Vec<_>>()
    );
    assert_eq!(d.get("/name").unwrap().as_str(), Some("a draft"));

    let mut finf = Vec::new();
    f.write(
        asdf::Target::Writer(&mut finf),
        &asdf::WriteOptions::default().form(asdf::Form::Draft {
            dialect: Dialect::Finf,
            chain: None,
        }),
    )
    .unwrap();
    let text = String::from_utf8_lossy(&finf);
    assert!(text.starts_with("%FINF 0.1.0\n") && text.contains("--- !core/finf") && text.contains("dtype: float64"));
    let d = asdf::Open::bytes(finf)
        .options(OpenOptions::default().strict(true))
        .open()
        .unwrap();
    assert_eq!(f64s(&d, "/sci/image"), image);
    assert_eq!(
        f64s(&d, "/counts"),
        counts.iter().map(|&c| f64::from(c)).collect::<Vec<_>>()
    );
    // FINF blocks have no chains.
    assert!(
        f.write(
            asdf::Target::Writer(&mut Vec::new()),
            &asdf::WriteOptions::default().form(asdf::Form::Draft {
                dialect: Dialect::Finf,
                chain: Some(std::sync::Arc::new(chain))
            })
        )
        .is_err()
    );
}

/// The quantize rule (a quantized block decodes big-endian, whatever the tree says) holds for a
/// chain whose YAML is longer than any fixed read: a 200 KiB comment before the chain.
#[test]
fn quantize_rule_holds_for_long_chains() {
    let codes: Vec<i64> = (-16..16).collect();
    let q = chunk(5, 10.0, 0.5, &codes);
    let expected: Vec<f64> = codes
        .iter()
        .map(|&c| f64::from((c as f64 * 0.5 + 10.0) as f32))
        .collect();
    let n = codes.len();
    for comment in [0usize, 70 << 10, 200 << 10] {
        let mut b = format!("# {}\n", "x".repeat(comment)).into_bytes();
        b.extend_from_slice(format!("--- [[quantize, {{dtype: 32, original_shape: [{n}]}}], zlib]\n...\n").as_bytes());
        b.extend_from_slice(&zlib(&q));
        let tree = format!(
            "%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/0.1.0/\n--- !core/asdf\n\
             q: !core/ndarray\n  source: 0\n  datatype: float32\n  byteorder: little\n  shape: [{n}]\n...\n"
        );
        let mut file = b"#ASDF 0.1.0\n".to_vec();
        file.extend_from_slice(tree.as_bytes());
        file.extend_from_slice(&sized36(2, &b, (n * 4) as u64));
        let f = asdf::Open::bytes(file).options(OpenOptions::default()).open().unwrap();
        assert_eq!(f64s(&f, "/q"), expected, "a comment of {comment} bytes");
    }
}

/// FINF's byte order defaults (its ndarray and field schemas: `default: big`): an array that
/// names no byte order is big-endian, and so is each field of a structured datatype that
/// names none, even in a little-endian array; written back as FINF, the fields keep their
/// byte order.
#[test]
fn finf_byte_order_defaults_are_big_for_arrays_and_fields() {
    let tree = "%YAML 1.1\n%TAG ! tag:stsci.edu:finf/0.1.0/\n--- !core/finf\n\
                a: !core/ndarray\n  source: 0\n  dtype: int32\n  shape: [3]\n\
                rec: !core/ndarray\n  source: 1\n  shape: [2]\n  byteorder: little\n  dtype:\n\
                \x20   - name: x\n      dtype: int16\n    - name: y\n      dtype: float64\n      byteorder: little\n\
                \x20   - name: z\n      dtype:\n        - name: w\n          dtype: uint16\n...\n";
    let a: Vec<u8> = [1i32, -2, 300].iter().flat_map(|v| v.to_be_bytes()).collect();
    let mut rec = Vec::new();
    for (x, y, w) in [(5i16, 1.5f64, 258u16), (-7, 2.5, 3)] {
        rec.extend_from_slice(&x.to_be_bytes());
        rec.extend_from_slice(&y.to_le_bytes());
        rec.extend_from_slice(&w.to_be_bytes());
    }
    let mut file = b"%FINF 0.1.0\n".to_vec();
    file.extend_from_slice(tree.as_bytes());
    for body in [&a, &rec] {
        file.extend_from_slice(&[0x89, b'B', b'L', b'K']);
        file.extend_from_slice(&40u16.to_be_bytes());
        file.extend_from_slice(&be64(body.len() as u64));
        file.extend_from_slice(&be64(body.len() as u64));
        file.extend_from_slice(&be64(0));
        file.extend_from_slice(&[0u8; 16]);
        file.extend_from_slice(body);
    }
    let check = |f: &asdf::AsdfFile| {
        assert_eq!(f64s(f, "/a"), vec![1.0, -2.0, 300.0]);
        let rows: Vec<String> = (0..2)
            .map(|i| format!("{:?}", f.array("/rec").and_then(|a| a.element(&[i])).unwrap()))
            .collect();
        assert!(
            rows[0].contains("Int(5)") && rows[0].contains("1.5") && rows[0].contains("UInt(258)"),
            "{rows:?}"
        );
        assert!(
            rows[1].contains("Int(-7)") && rows[1].contains("2.5") && rows[1].contains("UInt(3)"),
            "{rows:?}"
        );
    };
    let f = asdf::Open::bytes(file)
        .options(OpenOptions::default().strict(true))
        .open()
        .unwrap();
    check(&f);
    let mut out = Vec::new();
    f.write(
        asdf::Target::Writer(&mut out),
        &asdf::WriteOptions::default().form(asdf::Form::Draft {
            dialect: asdf::layout::Dialect::Finf,
            chain: None,
        }),
    )
    .unwrap();
    let g = asdf::Open::bytes(out)
        .options(OpenOptions::default().strict(true))
        .open()
        .unwrap();
    check(&g);
}

/// A file of today whose structured fields inherit the array's little-endian byte order,
/// written as FINF (whose fields default to big): read back, the values are the same.
#[test]
fn fields_that_inherit_little_endian_survive_finf() {
    let tree = "#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
                rec: !core/ndarray-1.0.0\n  source: 0\n  shape: [2]\n  byteorder: little\n  datatype:\n\
                \x20 - name: x\n    datatype: int16\n  - name: y\n    datatype: float64\n...\n";
    let mut body = Vec::new();
    for (x, y) in [(5i16, 1.5f64), (-7, 2.5)] {
        body.extend_from_slice(&x.to_le_bytes());
        body.extend_from_slice(&y.to_le_bytes());
    }
    let mut file = tree.as_bytes().to_vec();
    file.extend_from_slice(b"\xd3BLK");
    file.extend_from_slice(&48u16.to_be_bytes());
    file.extend_from_slice(&[0u8; 8]); // flags, compression
    for _ in 0..3 {
        file.extend_from_slice(&be64(body.len() as u64));
    }
    file.extend_from_slice(&[0u8; 16]);
    file.extend_from_slice(&body);
    let f = asdf::Open::bytes(file).options(OpenOptions::default()).open().unwrap();
    let rows = |f: &asdf::AsdfFile| -> Vec<String> {
        (0..2)
            .map(|i| format!("{:?}", f.array("/rec").and_then(|a| a.element(&[i])).unwrap()))
            .collect()
    };
    let before = rows(&f);
    assert!(
        before[0].contains("Int(5)") && before[1].contains("Int(-7)"),
        "{before:?}"
    );
    let mut out = Vec::new();
    f.write(
        asdf::Target::Writer(&mut out),
        &asdf::WriteOptions::default().form(asdf::Form::Draft {
            dialect: asdf::layout::Dialect::Finf,
            chain: None,
        }),
    )
    .unwrap();
    let g = asdf::Open::bytes(out)
        .options(OpenOptions::default().strict(true))
        .open()
        .unwrap();
    assert_eq!(rows(&g), before);
}
