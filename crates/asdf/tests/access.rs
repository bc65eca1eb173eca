//! Element and typed access without decoding whole arrays: every element read alone equals
//! the element of the full decode, for every array of the conformance files; typed copies and
//! zero-copy slices equal the decoded values; a single-element read touches only its bytes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::borrow::Cow;

use asdf::{AsdfFile, ByteOrder, Datatype, Element, OpenOptions, ScalarType, Version, WriteOptions};

/// The multi-index of flat position `flat` in C order.
fn unravel(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for (k, d) in shape.iter().enumerate().rev() {
        idx[k] = flat % d;
        flat /= d;
    }
    idx
}

#[test]
fn every_element_read_alone_equals_the_full_decode() {
    asdf_testdata::needs_conformance!();
    let c = asdf_testdata::conformance_dir();
    let mut files = asdf_testdata::files_with_ext(&c.join("python-asdf-samples"), "asdf");
    files.extend(asdf_testdata::files_with_ext(
        &c.join("asdf-standard/reference_files"),
        "asdf",
    ));
    let (mut arrays, mut elements, mut typed) = (0, 0, 0);
    for p in files {
        let name = p.display().to_string();
        let Ok(f) = asdf::Open::path(&p)
            .options(OpenOptions::default().validate(false))
            .open()
        else {
            continue;
        };
        for a in common::ndarray_pointers(&f, false) {
            let Ok(full) = f.array(&a).and_then(|a| a.values()) else {
                continue;
            };
            arrays += 1;
            // Up to ~64 elements per array, spread over it, always the first and the last.
            let step = (full.elements.len() / 64).max(1);
            let picks = (0..full.elements.len())
                .step_by(step)
                .chain(full.elements.len().checked_sub(1));
            for flat in picks {
                let want = &full.elements[flat];
                let idx = unravel(flat, &full.shape);
                let got = f
                    .array(&a)
                    .and_then(|a| a.element(&idx))
                    .unwrap_or_else(|e| panic!("{name}{a}{idx:?}: {e}"));
                assert!(got.same(want), "{name}{a}{idx:?}: {got:?} != {want:?}");
                elements += 1;
            }
            // One past the end of the first dimension is refused.
            if let Some(first) = full.shape.first() {
                let mut idx = vec![0; full.shape.len()];
                idx[0] = *first;
                assert!(f.array(&a).and_then(|a| a.element(&idx)).is_err(), "{name}{a}");
            }
            if full.datatype == Datatype::Scalar(ScalarType::Float64) {
                let v = f.array(&a).and_then(|a| a.read::<Vec<f64>>()).unwrap();
                assert_eq!(v.len(), full.elements.len());
                for (x, e) in v.iter().zip(&full.elements) {
                    assert!(Element::Float(*x).same(e), "{name}{a}");
                }
                let mut each = Vec::new();
                f.array(&a)
                    .and_then(|a| {
                        a.for_each_chunk::<f64>(|c| {
                            for &x in c {
                                each.push(x);
                            }
                        })
                    })
                    .unwrap();
                assert!(each.iter().zip(&v).all(|(x, y)| x == y || (x.is_nan() && y.is_nan())));
                assert_eq!(each.len(), v.len());
                let mut chunks = Vec::new();
                f.array(&a)
                    .and_then(|a| {
                        a.for_each_chunk::<f64>(|c| {
                            assert!(!c.is_empty() && c.len() <= asdf::CHUNK_ELEMENTS);
                            chunks.extend_from_slice(c);
                        })
                    })
                    .unwrap();
                assert!(
                    chunks.iter().zip(&v).all(|(x, y)| x.to_bits() == y.to_bits()),
                    "{name}{a}"
                );
                assert_eq!(chunks.len(), v.len());
                let it: Vec<f64> = f.array(&a).and_then(|a| a.read::<Vec<f64>>()).unwrap();
                assert!(it.iter().zip(&v).all(|(x, y)| x == y || (x.is_nan() && y.is_nan())));
                assert_eq!(it.len(), v.len());
                let s = f
                    .array(&a)
                    .and_then(|a| a.read::<std::borrow::Cow<'_, [f64]>>())
                    .unwrap();
                assert_eq!(s.as_ref().len(), v.len());
                assert!(s.iter().zip(&v).all(|(x, y)| x == y || (x.is_nan() && y.is_nan())));
                typed += 1;
            }
            if full.datatype == Datatype::Scalar(ScalarType::Int64) {
                let v = f.array(&a).and_then(|a| a.read::<Vec<i64>>()).unwrap();
                assert!(
                    v.iter().zip(&full.elements).all(|(x, e)| Element::Int(*x).same(e)),
                    "{name}{a}"
                );
                assert!(
                    f.array(&a).and_then(|a| a.read::<Vec<f64>>()).is_err(),
                    "{name}{a}: wrong type accepted"
                );
                typed += 1;
            }
        }
    }
    println!("{arrays} arrays, {elements} elements read one at a time; {typed} typed reads");
    assert!(
        arrays >= 290 && elements >= 3000 && typed >= 50,
        "{arrays} {elements} {typed}"
    );
}

#[test]
fn one_element_of_a_big_array_reads_only_its_bytes() {
    let dir = std::env::temp_dir().join(format!("asdf-rs-access-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big.asdf");
    // 1000 x 1000 float64, little-endian: element [i, j] = i * 1000 + j.
    let data: Vec<u8> = (0..1_000_000u32).flat_map(|i| f64::from(i).to_le_bytes()).collect();
    let mut f = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
    f.put_array(
        "/x",
        asdf::NewArray::from_bytes(
            Datatype::Scalar(ScalarType::Float64),
            &[1000, 1000],
            ByteOrder::Little,
            data,
        ),
    )
    .unwrap();
    f.write(&path, &WriteOptions::default()).unwrap();

    let src = asdf_layout::RecordingSource::new(std::fs::File::open(&path).unwrap());
    let g = asdf::open(&path).unwrap();
    assert_eq!(
        g.array("/x").and_then(|a| a.element(&[123, 456])).unwrap(),
        Element::Float(123_456.0)
    );
    let v = g.array("/x").and_then(|a| a.view().cloned()).unwrap();
    assert!(v.is_c_contiguous());
    assert_eq!(v.element_offset(&[123, 456]).unwrap(), (123 * 1000 + 456) * 8);
    assert!(g.array("/x").and_then(|a| a.element(&[1000, 0])).is_err());
    assert!(g.array("/x").and_then(|a| a.element(&[1])).is_err());
    // Zero-copy when native and aligned; still right when not.
    let s = g
        .array("/x")
        .and_then(|a| a.read::<std::borrow::Cow<'_, [f64]>>())
        .unwrap();
    assert_eq!(s[999_999], 999_999.0);
    // The map starts on a page boundary, so the data is aligned when its file offset is.
    let aligned = g.source().layout().block(0).unwrap().data_offset.is_multiple_of(8);
    assert_eq!(matches!(s, Cow::Borrowed(_)), aligned && cfg!(target_endian = "little"));

    // Through the layout reader with a recording source: reading one element's range
    // touches only those 8 bytes of the block.
    let r = asdf_layout::Reader::open(src).unwrap();
    let b = r.block(0).unwrap();
    r.get_ref().clear();
    let off = v.element_offset(&[999, 999]).unwrap();
    let e = r.read_range(0, off..off + 8).unwrap();
    assert_eq!(f64::from_le_bytes(e.as_ref().try_into().unwrap()), 999_999.0);
    assert_eq!(
        r.get_ref().reads(),
        vec![(b.data_offset + off, b.data_offset + off + 8)]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn big_endian_and_strided_views_read_element_by_element() {
    // A big-endian int32 2x3 array and its transpose as a view (strides swapped).
    let mut f = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
    let data: Vec<u8> = (0..6i32).flat_map(i32::to_be_bytes).collect();
    f.put_array(
        "/a",
        asdf::NewArray::from_bytes(Datatype::Scalar(ScalarType::Int32), &[2, 3], ByteOrder::Big, data),
    )
    .unwrap();
    let bytes = crate::common::bytes(&f, &WriteOptions::default()).unwrap();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let view = text.replacen(
        "a: !core/ndarray-1.1.0",
        "t: !core/ndarray-1.1.0 {source: 0, datatype: int32, byteorder: big, shape: [3, 2], strides: [4, 12]}\na: !core/ndarray-1.1.0",
        1,
    );
    // The tree grew: rebuild the file with the edited tree so block offsets stay right.
    let mut g = asdf::Open::bytes(bytes).options(OpenOptions::default()).open().unwrap();
    let tree_start = view.find("%YAML").unwrap();
    let tree_end = view.find("\n...\n").unwrap() + 5;
    g.set_tree_yaml(&view.as_bytes()[tree_start..tree_end]).unwrap();
    let h = asdf::Open::bytes(crate::common::bytes(&g, &WriteOptions::default()).unwrap())
        .options(OpenOptions::default())
        .open()
        .unwrap();
    assert_eq!(h.array("/a").and_then(|a| a.element(&[1, 2])).unwrap(), Element::Int(5));
    assert_eq!(h.array("/t").and_then(|a| a.element(&[2, 1])).unwrap(), Element::Int(5));
    assert_eq!(h.array("/t").and_then(|a| a.element(&[1, 0])).unwrap(), Element::Int(1));
    assert_eq!(
        h.array("/t").and_then(|a| a.read::<Vec<i32>>()).unwrap(),
        vec![0, 3, 1, 4, 2, 5]
    );
    assert_eq!(
        h.array("/t").and_then(|a| a.read::<Vec<i32>>()).unwrap(),
        vec![0, 3, 1, 4, 2, 5]
    );
    assert_eq!(h.array("/a").and_then(|a| a.read::<Vec<i32>>()).unwrap().len(), 6);
    assert!(h.array("/a").and_then(|a| a.read::<Vec<i64>>()).is_err());
    assert_eq!(
        h.array("/a").and_then(|a| a.read::<Vec<i32>>()).unwrap(),
        vec![0, 1, 2, 3, 4, 5]
    );
    // Big-endian data is never lent as a native slice on a little-endian machine.
    let s = h
        .array("/a")
        .and_then(|a| a.read::<std::borrow::Cow<'_, [i32]>>())
        .unwrap();
    assert_eq!(s.as_ref(), &[0, 1, 2, 3, 4, 5]);
    if cfg!(target_endian = "little") {
        assert!(matches!(s, Cow::Owned(_)));
    }
    assert!(h.array("/t").and_then(|a| a.view().cloned()).unwrap().strides == vec![4, 12]);
    assert!(!h.array("/t").and_then(|a| a.view().cloned()).unwrap().is_c_contiguous());
}

#[cfg(feature = "ndarray")]
#[test]
fn arrays_as_ndarray() {
    asdf_testdata::needs_conformance!();
    let mut f = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
    let data: Vec<u8> = (0..6i32).flat_map(i32::to_le_bytes).collect();
    f.put_array(
        "/a",
        asdf::NewArray::from_bytes(Datatype::Scalar(ScalarType::Int32), &[2, 3], ByteOrder::Little, data),
    )
    .unwrap();
    let g = asdf::Open::bytes(crate::common::bytes(&f, &WriteOptions::default()).unwrap())
        .options(OpenOptions::default())
        .open()
        .unwrap();
    let a = g.array("/a").and_then(|a| a.read::<ndarray::ArrayD<i32>>()).unwrap();
    assert_eq!(a.shape(), &[2, 3]);
    assert_eq!(a[[1, 2]], 5);
    assert!(g.array("/a").and_then(|a| a.read::<ndarray::ArrayD<f64>>()).is_err());
    // Inline data too.
    let c = asdf_testdata::conformance_dir().join("python-asdf-samples/f_inline_threshold.asdf");
    let h = asdf::open(c).unwrap();
    assert_eq!(
        h.array("/small")
            .and_then(|a| a.read::<ndarray::ArrayD<i64>>())
            .unwrap()
            .into_raw_vec_and_offset()
            .0,
        vec![0, 1, 2, 3, 4]
    );
    assert_eq!(
        h.array("/large")
            .and_then(|a| a.read::<ndarray::ArrayD<i64>>())
            .unwrap()[[49]],
        49
    );
}

/// A view with a zero stride claims 10^15 elements of an 8-byte block: reading it is an error,
/// not an abort; one element of it reads fine.
#[test]
fn absurd_zero_stride_views_are_errors() {
    let mut f = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
    f.put_array(
        "/a",
        asdf::NewArray::from_bytes(
            Datatype::Scalar(ScalarType::Float64),
            &[1],
            ByteOrder::Little,
            1.5f64.to_le_bytes().to_vec(),
        ),
    )
    .unwrap();
    let bytes = crate::common::bytes(&f, &WriteOptions::default()).unwrap();
    let mut g = asdf::Open::bytes(bytes).options(OpenOptions::default()).open().unwrap();
    let yaml = String::from_utf8(asdf::emit_yaml(g.document()).unwrap()).unwrap();
    let yaml = yaml.replace("shape: [1]", "shape: [1000000000000000]\n  strides: [0]");
    g.set_tree_yaml(yaml.as_bytes()).unwrap();
    assert!(g.array("/a").and_then(|a| a.values()).is_err());
    assert!(g.array("/a").and_then(|a| a.read::<Vec<f64>>()).is_err());
    // Streaming holds memory, not time: refused as the whole read is.
    let streamed = g.array("/a").and_then(|a| a.for_each_chunk::<f64>(|_| {}));
    assert!(matches!(streamed, Err(asdf::Error::Repeated { .. })), "{streamed:?}");
    assert_eq!(
        g.array("/a").and_then(|a| a.element(&[999_999_999_999_999])).unwrap(),
        Element::Float(1.5)
    );
    assert_eq!(
        g.array("/a")
            .and_then(|a| a.read_region::<Vec<f64>>(&"0:3".parse().unwrap()))
            .unwrap(),
        vec![1.5; 3]
    );
}

/// `array_for_each` on compressed blocks: elements split across the codec's 1 MiB pieces (a
/// view at offset 4) come out whole and right, for every codec.
#[test]
fn for_each_reads_compressed_blocks_piece_by_piece() {
    let n = (3usize << 20) / 8;
    let data: Vec<u8> = (0..n).flat_map(|i| (i as f64 * 0.25).to_le_bytes()).collect();
    for label in ["zlib", "bzp2", "lz4", "zstd", "lz4f", "blsc", "bls2"] {
        let mut f = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
        f.put_array(
            "/x",
            asdf::NewArray::from_bytes(
                Datatype::Scalar(ScalarType::Float64),
                &[n],
                ByteOrder::Little,
                data.clone(),
            ),
        )
        .unwrap();
        let label = asdf::Label::from_name(label).unwrap();
        let bytes =
            crate::common::bytes(&f, &WriteOptions::default().compression(asdf::Compression::All(label))).unwrap();
        let mut g = asdf::Open::bytes(bytes).options(OpenOptions::default()).open().unwrap();
        // A second array: a view of the same block at byte offset 4 (elements straddle pieces).
        let yaml = String::from_utf8(asdf::emit_yaml(g.document()).unwrap()).unwrap();
        let view = format!(
            "y: !core/ndarray-1.1.0 {{source: 0, datatype: float64, byteorder: little, shape: [{}], offset: 4}}\n\
             z: !core/ndarray-1.1.0 {{source: 0, datatype: int32, byteorder: little, shape: [{}], offset: 4, strides: [8]}}\n...\n",
            n - 1,
            n - 1
        );
        g.set_tree_yaml(yaml.replace("...\n", &view).as_bytes()).unwrap();
        let mut xs = Vec::new();
        g.array("/x")
            .and_then(|a| {
                a.for_each_chunk::<f64>(|c| {
                    for &v in c {
                        xs.push(v);
                    }
                })
            })
            .unwrap();
        assert_eq!(xs.len(), n, "{label}");
        assert!(xs.iter().enumerate().all(|(i, v)| *v == i as f64 * 0.25), "{label}");
        // A contiguous view at offset 4: its elements straddle the pieces' boundaries.
        let mut ys = Vec::new();
        g.array("/y")
            .and_then(|a| {
                a.for_each_chunk::<f64>(|c| {
                    for &v in c {
                        ys.push(v.to_bits());
                    }
                })
            })
            .unwrap();
        let whole: Vec<u64> = g
            .array("/y")
            .and_then(|a| a.read::<Vec<f64>>())
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect();
        assert!(ys == whole, "{label}");
        // The same in slices: every slice full but the last.
        let (mut cs, mut sizes) = (Vec::new(), Vec::new());
        g.array("/y")
            .and_then(|a| {
                a.for_each_chunk::<f64>(|c| {
                    cs.extend(c.iter().map(|v| v.to_bits()));
                    sizes.push(c.len());
                })
            })
            .unwrap();
        assert!(cs == whole, "{label}");
        assert!(
            sizes[..sizes.len() - 1].iter().all(|&k| k == asdf::CHUNK_ELEMENTS),
            "{label}"
        );
        // A strided int32 view (not contiguous) goes through the whole-block path.
        let mut zs = Vec::new();
        g.array("/z")
            .and_then(|a| {
                a.for_each_chunk::<i32>(|c| {
                    for &v in c {
                        zs.push(v);
                    }
                })
            })
            .unwrap();
        assert_eq!(zs, g.array("/z").and_then(|a| a.read::<Vec<i32>>()).unwrap(), "{label}");
        let mut zc = Vec::new();
        g.array("/z")
            .and_then(|a| a.for_each_chunk::<i32>(|c| zc.extend_from_slice(c)))
            .unwrap();
        assert_eq!(zc, zs, "{label}");
        assert!(
            g.array("/x")
                .and_then(|a| a.for_each_chunk::<f32>(|c| {
                    for &_ in c {
                        {};
                    }
                }))
                .is_err()
        );
        assert!(g.array("/x").and_then(|a| a.for_each_chunk::<f32>(|_| {})).is_err());
    }
}

/// `array_chunks` on a mapped uncompressed block whose data starts at every offset modulo 8
/// (aligned blocks are handed over in place, the others converted): the same elements and
/// slice sizes, in both byte orders.
#[test]
fn chunks_of_aligned_and_misaligned_mapped_blocks() {
    let n = 2 * asdf::CHUNK_ELEMENTS + 1234;
    let dir = std::env::temp_dir().join(format!("asdf-rs-align-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut starts = std::collections::BTreeSet::new();
    for order in [ByteOrder::Little, ByteOrder::Big] {
        for pad in 0..8 {
            let want: Vec<f64> = (0..n).map(|i| i as f64 * 1.25 - 7.0).collect();
            let bytes: Vec<u8> = want
                .iter()
                .flat_map(|v| match order {
                    ByteOrder::Little => v.to_le_bytes(),
                    ByteOrder::Big => v.to_be_bytes(),
                })
                .collect();
            let mut f = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
            f.put_array(
                "/x",
                asdf::NewArray::from_bytes(Datatype::Scalar(ScalarType::Float64), &[n], order, bytes),
            )
            .unwrap();
            if let Some(m) = f.get_mut("").unwrap().as_mapping_mut() {
                m.insert("pad", asdf::Node::str("p".repeat(pad)));
            }
            let path = dir.join(format!("{pad}-{order:?}.asdf"));
            f.write(&path, &WriteOptions::default()).unwrap();
            let file = std::fs::read(&path).unwrap();
            let at = file.windows(4).position(|w| w == b"\xd3BLK").unwrap() + 6 + 48;
            starts.insert(at % 8);
            let g = asdf::open(&path).unwrap();
            let (mut got, mut sizes) = (Vec::new(), Vec::new());
            g.array("/x")
                .and_then(|a| {
                    a.for_each_chunk::<f64>(|c| {
                        got.extend(c.iter().map(|v| v.to_bits()));
                        sizes.push(c.len());
                    })
                })
                .unwrap();
            assert!(
                got.into_iter().eq(want.iter().map(|v| v.to_bits())),
                "pad {pad} {order:?}"
            );
            assert!(sizes[..sizes.len() - 1].iter().all(|&k| k == asdf::CHUNK_ELEMENTS));
        }
    }
    assert_eq!(starts.len(), 8, "every alignment of the data was tried");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A block whose header claims a terabyte: `read_into_vec` grows with what the block really
/// decodes to and then fails, never sizing the buffer from the claim.
#[test]
fn block_read_into_vec_follows_the_data_not_the_claim() {
    let mut f = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
    let data: Vec<u16> = (0..50_000u16).collect();
    f.put_array(
        "/a",
        asdf::NewArray::from_slice(&data, &[50_000])
            .unwrap()
            .compression(asdf::Label::ZLIB),
    )
    .unwrap();
    let mut bytes = crate::common::bytes(&f, &WriteOptions::default().checksums(false)).unwrap();
    // The honest file first.
    let ok = asdf::Open::bytes(bytes.clone())
        .options(OpenOptions::default())
        .open()
        .unwrap();
    let mut buf = Vec::new();
    ok.source().block(0).unwrap().read_into_vec(&mut buf).unwrap();
    assert_eq!(buf.len(), 100_000);
    assert_eq!(&buf[2..4], &1u16.to_le_bytes());
    // data_size sits 30 bytes after the block magic.
    let at = bytes.windows(4).position(|w| w == b"\xd3BLK").unwrap() + 30;
    bytes[at..at + 8].copy_from_slice(&(1u64 << 40).to_be_bytes());
    let bad = asdf::Open::bytes(bytes)
        .options(OpenOptions::default().validate(false))
        .open()
        .unwrap();
    let block = bad.source().block(0).unwrap();
    assert_eq!(block.data_len().unwrap(), 1 << 40);
    let mut buf = Vec::new();
    assert!(block.read_into_vec(&mut buf).is_err());
    assert!(
        buf.capacity() < 1 << 24,
        "the buffer followed the claim: {}",
        buf.capacity()
    );
}

/// `verify`: every block decoded and checksummed, every array's view checked, each problem
/// once and where it is; an honest file passes.
#[test]
fn verify_reports_every_block_and_array_problem() {
    let mut f = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
    let data: Vec<f64> = (0..4_000).map(f64::from).collect();
    for (p, label) in [
        ("/a", asdf::Label::ZLIB),
        ("/b", asdf::Label::NONE),
        ("/c", asdf::Label::ZSTD),
    ] {
        f.put_array(
            p,
            asdf::NewArray::from_slice(&data, &[4_000]).unwrap().compression(label),
        )
        .unwrap();
    }
    let bytes = crate::common::bytes(&f, &WriteOptions::default()).unwrap();
    let ok = asdf::Open::bytes(bytes.clone())
        .options(OpenOptions::default())
        .open()
        .unwrap();
    let report = ok.verify(None);
    assert!(report.is_ok(), "{:?}", report.problems());
    assert_eq!(report.blocks.len(), 3);
    assert!(report.blocks.iter().enumerate().all(|(i, (j, r))| i == *j && r.is_ok()));

    // Block 1 (uncompressed) gets a wrong byte: its checksum fails, the others pass; and the
    // third array's shape is made larger than its block holds.
    let mut bad = bytes;
    let magics: Vec<usize> = bad
        .windows(4)
        .enumerate()
        .filter(|(_, w)| *w == b"\xd3BLK")
        .map(|(i, _)| i)
        .collect();
    let header_size = usize::from(u16::from_be_bytes([bad[magics[1] + 4], bad[magics[1] + 5]]));
    bad[magics[1] + 6 + header_size + 10] ^= 0xff;
    let text = String::from_utf8_lossy(&bad).into_owned();
    let n = text.rfind("shape: [4000]").unwrap();
    bad[n..n + 13].copy_from_slice(b"shape: [9000]");
    let f = asdf::Open::bytes(bad)
        .options(OpenOptions::default().validate(false))
        .open()
        .unwrap();
    let seen = std::sync::atomic::AtomicUsize::new(0);
    let report = f.verify(Some(&|done, total| {
        assert!(done <= total && total == 3);
        seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }));
    assert_eq!(seen.into_inner(), 3);
    assert!(!report.is_ok());
    assert!(report.blocks[0].1.is_ok() && report.blocks[1].1.is_err() && report.blocks[2].1.is_ok());
    let problems = report.problems();
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems[0].starts_with("block 1") && problems[0].contains("checksum"),
        "{problems:?}"
    );
    assert!(problems[1].starts_with("/c"), "{problems:?}");
}

/// `get_as`: a node read as the typed value of its tag; `info` shows a quantity as one.
#[test]
fn typed_values_by_pointer() {
    use asdf::core_types::astro::Quantity;
    use asdf::core_types::typed::Software;
    let mut f = asdf::AsdfFile::new(asdf::Version::STANDARD_LATEST).unwrap();
    let tag = asdf::tag_for(f.standard_version(), "unit/quantity").unwrap();
    let unit = asdf::tag_for(f.standard_version(), "unit/unit").unwrap();
    let q = asdf::Node::map(vec![
        (asdf::Node::str("value"), asdf::Node::float(3.5)),
        (asdf::Node::str("unit"), asdf::Node::str("km / s").with_tag(unit)),
    ])
    .with_tag(tag);
    f.set("/speed", q).unwrap();
    f.set("/name", asdf::Node::str("x")).unwrap();
    let bytes = crate::common::bytes(&f, &asdf::WriteOptions::default()).unwrap();
    let g = asdf::Open::bytes(bytes.clone()).open().unwrap();
    let speed: Quantity = g.get_as("/speed").unwrap();
    assert_eq!(speed.to_string(), "3.5 km / s");
    // Another tag is an error naming both; a missing node is NotFound.
    let e = g.get_as::<Software>("/speed").unwrap_err();
    assert!(matches!(e, asdf::Error::Typed { .. }), "{e}");
    assert!(e.to_string().contains("core/software"), "{e}");
    assert!(matches!(
        g.get_as::<Quantity>("/nothing"),
        Err(asdf::Error::NotFound(_))
    ));
    // An untagged node is read as the type asks: a string is not a quantity.
    assert!(matches!(g.get_as::<Quantity>("/name"), Err(asdf::Error::Typed { .. })));
    // The same through a lazy open.
    let lazy = asdf::Open::bytes(bytes).open_lazy().unwrap().parse().unwrap();
    assert_eq!(lazy.get_as::<Quantity>("/speed").unwrap(), speed);
}

/// A view whose strides overlap its block (a 200000 x 200000 float64 array over 16 bytes)
/// claims 320 GB: every read is held to the limit of a decoded block with a clear error
/// (never an abort allocating it), the whole array and regions alike; a region within the
/// limit reads.
#[test]
fn overlapping_views_are_held_to_the_block_limit() {
    let mut file = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
        img: !core/ndarray-1.1.0 {source: 0, datatype: float64, byteorder: little, shape: [200000, 200000], strides: [0, 0]}\n...\n"
        .to_vec();
    let data: Vec<u8> = [1.5f64, 2.5].iter().flat_map(|x| x.to_le_bytes()).collect();
    file.extend_from_slice(b"\xd3BLK");
    file.extend_from_slice(&48u16.to_be_bytes());
    file.extend_from_slice(&[0; 8]);
    for _ in 0..3 {
        file.extend_from_slice(&(data.len() as u64).to_be_bytes());
    }
    file.extend_from_slice(&[0; 16]);
    file.extend_from_slice(&data);
    let f = asdf::Open::bytes(file)
        .options(OpenOptions::default().validate(false))
        .open()
        .unwrap();
    let a = f.array("/img").unwrap();
    let too_large = |r: Result<(), asdf::Error>| match r {
        Err(asdf::Error::ReadTooLarge { bytes, .. }) => assert!(bytes > 1 << 30, "{bytes}"),
        other => panic!("{other:?}"),
    };
    too_large(a.read::<Vec<f64>>().map(drop));
    too_large(a.values().map(drop));
    too_large(a.values().map(drop));
    too_large(a.read_region::<Vec<f64>>(&"..., ::-1".parse().unwrap()).map(drop));
    too_large(a.read_region::<asdf::RegionBytes>(&"..., :".parse().unwrap()).map(drop));
    // A region within the limit reads (every element is the block's first).
    assert_eq!(
        a.read_region::<Vec<f64>>(&"0:2, 7:10".parse().unwrap()).unwrap(),
        [1.5; 6]
    );
    assert_eq!(
        a.read_region::<Vec<f64>>(&":, 5".parse().unwrap()).unwrap().len(),
        200_000
    );
}

/// The generic read's edges: an empty region of the wrong type is refused as a whole read is;
/// an inline array's bytes are refused with a clear error (its typed reads work); a chunked
/// array is refused by the exploded form, naming it, and nothing is written.
#[test]
fn generic_read_and_write_edges() {
    let mut f = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
    let data: Vec<f64> = (0..12).map(f64::from).collect();
    f.put_array("/a", asdf::NewArray::from_slice(&data, &[3, 4]).unwrap())
        .unwrap();
    f.put_array("/i", asdf::NewArray::from_slice(&data, &[12]).unwrap().inline())
        .unwrap();
    let bytes = f
        .write(asdf::Target::Bytes, &WriteOptions::default())
        .unwrap()
        .into_bytes();
    let g = asdf::Open::bytes(bytes).open().unwrap();
    let a = g.array("/a").unwrap();
    let empty: asdf::Region = "1:1".parse().unwrap();
    assert!(a.read_region::<Vec<f32>>(&empty).is_err());
    assert!(a.read_region::<Vec<f64>>(&empty).unwrap().is_empty());
    let i = g.array("/i").unwrap();
    assert_eq!(i.read::<Vec<f64>>().unwrap(), data);
    assert_eq!(i.read_region::<Vec<f64>>(&"2:4".parse().unwrap()).unwrap(), [2.0, 3.0]);
    let e = i.read::<asdf::RegionBytes>().unwrap_err();
    assert!(
        matches!(e, asdf::Error::NotSupported { ref pointer, .. } if pointer == "/i"),
        "{e:?}"
    );
    assert_eq!(e.kind(), asdf::ErrorKind::Usage);
    let mut out = vec![0u8; 16];
    assert!(matches!(
        i.read_region_into(&"0:2".parse().unwrap(), &mut out),
        Err(asdf::Error::NotSupported { .. })
    ));
    let mut c = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
    let chunked = c.put_array(
        "/img",
        asdf::NewArray::from_slice(&data, &[3, 4]).unwrap().chunks(&[2, 2]),
    );
    if !cfg!(feature = "zarr") {
        // Without chunked arrays, asking for one is refused by name.
        let e = chunked.unwrap_err();
        assert!(
            matches!(e, asdf::Error::Chunked { ref pointer, .. } if pointer == "/img"),
            "{e:?}"
        );
        return;
    }
    chunked.unwrap();
    let dir = std::env::temp_dir().join(format!("asdf-exploded-chunked-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let e = c
        .write(dir.join("x.asdf"), &WriteOptions::default().form(asdf::Form::Exploded))
        .unwrap_err();
    assert!(
        matches!(e, asdf::Error::NotSupported { ref pointer, .. } if pointer == "/img"),
        "{e}"
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "nothing is written");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// With `verify_checksums`, a read of an array through its storage verifies its block: a
/// whole read of a block whose bytes changed fails with the checksum error (uncompressed
/// and compressed alike); without the option the changed value is read.
#[test]
fn whole_reads_verify_checksums_when_asked() {
    for label in [asdf::Label::NONE, asdf::Label::ZLIB] {
        let mut f = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
        let data: Vec<f64> = (0..1000).map(f64::from).collect();
        f.put_array("/x", asdf::NewArray::from_slice(&data, &[1000]).unwrap())
            .unwrap();
        let opts = WriteOptions::default().compression(asdf::Compression::All(label));
        let mut bytes = crate::common::bytes(&f, &opts).unwrap();
        let g = asdf::Open::bytes(bytes.clone()).open().unwrap();
        let block = g.source().block(0).unwrap();
        let at = usize::try_from(block.data_offset().unwrap()).unwrap();
        let stored = usize::try_from(block.header().unwrap().used_size).unwrap();
        // A byte of the stored data changed: for zlib, one the stream still decodes past is
        // not guaranteed, so the change is made where a value lands when uncompressed, and
        // the compressed case only asks for an error of either kind.
        bytes[at + stored / 2] ^= 0x01;
        let strict = asdf::Open::bytes(bytes.clone())
            .options(OpenOptions::default().verify_checksums(true))
            .open()
            .unwrap();
        let e = strict.array("/x").unwrap().read::<Vec<f64>>().unwrap_err();
        if label == asdf::Label::NONE {
            assert!(e.to_string().contains("checksum"), "{e}");
            let lax = asdf::Open::bytes(bytes).open().unwrap();
            let read = lax.array("/x").unwrap().read::<Vec<f64>>().unwrap();
            assert_eq!(read.len(), 1000);
            assert_ne!(read, data);
        }
    }
}

/// A zlib codec that records how many threads the executor gives the work it runs in.
#[derive(Debug, Default)]
struct CountingZlib(std::sync::Mutex<Vec<usize>>);

impl asdf::compression::Codec for CountingZlib {
    fn label(&self) -> asdf::Label {
        asdf::Label::ZLIB
    }
    fn decode(&self, input: &[u8], output: &mut [u8]) -> Result<(), asdf::compression::CodecError> {
        asdf::compression::Zlib::default().decode(input, output)
    }
    fn encode(&self, input: &[u8], output: &mut Vec<u8>) -> Result<(), asdf::compression::CodecError> {
        self.0.lock().unwrap().push(asdf::compression::exec::threads());
        asdf::compression::Zlib::default().encode(input, output)
    }
}

/// The thread count is the call's: `WriteOptions::threads` for a write, `OpenOptions::threads`
/// for reads, nothing process-wide; the values written and read are the same whatever the
/// counts.
#[test]
fn thread_counts_are_per_call_and_change_no_byte() {
    let data: Vec<f64> = (0..3_000_000).map(|i| f64::from(i % 977) * 0.5).collect();
    let mut f = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
    f.put_array("/x", asdf::NewArray::from_slice(&data, &[data.len()]).unwrap())
        .unwrap();
    let mut files = Vec::new();
    for n in [1, 3] {
        let codec = std::sync::Arc::new(CountingZlib::default());
        let opts = WriteOptions::default()
            .compression(asdf::Compression::All(asdf::Label::ZLIB))
            .codec(codec.clone())
            .threads(n);
        files.push(crate::common::bytes(&f, &opts).unwrap());
        let seen = codec.0.lock().unwrap().clone();
        assert_eq!(seen, [n], "threads seen by the codec of a write with threads({n})");
    }
    // (zlib on several threads compresses in pieces: the bytes differ, the values do not.)
    for (file, n) in files.iter().flat_map(|f| [(f, 1), (f, 4)]) {
        let g = asdf::Open::bytes(file.clone())
            .options(OpenOptions::default().threads(n))
            .open()
            .unwrap();
        assert_eq!(g.array("/x").unwrap().read::<Vec<f64>>().unwrap(), data);
        assert!(g.verify(None).is_ok(), "threads({n})");
    }
    // Outside a call, the default holds.
    assert_eq!(
        asdf::compression::exec::threads(),
        asdf::compression::exec::with_threads(None, asdf::compression::exec::threads)
    );
}

/// Masked values in inline data are `null`, as the standard allows and Python asdf writes a
/// masked array stored inline (`data: [1.0, null, 3.0, null]` beside its `mask`, or alone):
/// the array opens and validates, `values` masks them (with the `mask` key's flags too), and
/// typed reads give zero there, as numpy's data under the mask (asdf 6.0's reader).
#[test]
fn inline_nulls_are_masked_values() {
    let text = "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
                m: !core/ndarray-1.1.0\n  data: [1.0, null, 3.0, 4.0]\n  mask: !core/ndarray-1.1.0 {data: [false, true, false, true], datatype: bool8, shape: [4]}\n  datatype: float64\n  shape: [4]\n\
                n: !core/ndarray-1.1.0 {data: [[1, null], [3, 4]], datatype: int32, shape: [2, 2]}\n...\n";
    let f = asdf::Open::bytes(text.as_bytes().to_vec())
        .options(OpenOptions::default().strict(true))
        .open()
        .unwrap();
    let m = f.array("/m").unwrap();
    assert!(m.is_masked());
    let v = m.values().unwrap();
    assert_eq!(v.mask, Some(vec![false, true, false, true]));
    assert_eq!(m.read::<Vec<f64>>().unwrap(), [1.0, 0.0, 3.0, 4.0]);
    let n = f.array("/n").unwrap();
    assert!(n.is_masked(), "a null alone masks its place");
    assert_eq!(n.values().unwrap().mask, Some(vec![false, true, false, false]));
    assert_eq!(n.read::<Vec<i32>>().unwrap(), [1, 0, 3, 4]);
    // A null in a record's field, or where no value can be, is still refused.
    let bad = text.replace("[[1, null], [3, 4]]", "[[1, 2], null]");
    let g = asdf::Open::bytes(bad.into_bytes()).open().unwrap();
    assert!(g.array("/n").is_err());
}
