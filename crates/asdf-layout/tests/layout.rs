//! Writer and reader rules: round trips, padding, streaming, index use, laziness, limits,
//! and byte-identity with Python asdf's lz4 framing.

#![allow(
    clippy::cast_possible_truncation,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::needless_range_loop
)]

use std::path::{Path, PathBuf};

use asdf_layout::{
    BlockDiscovery, BlockHeader, BlockOptions, ChecksumStatus, Error, FormatError, Label, LimitError, Limits,
    ReadOptions, Reader, RecordingSource, UsageError, Version, Warning, Writer,
};
use proptest::prelude::*;

#[allow(dead_code)]
#[path = "../examples/make_example.rs"]
mod make_example;

#[test]
fn bundled_example_is_what_make_example_writes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/data/small.asdf");
    let committed = std::fs::read(root).unwrap();
    assert_eq!(
        committed,
        make_example::example_bytes().unwrap(),
        "rerun the make_example example"
    );
    let r = Reader::open(committed).unwrap();
    assert_eq!(r.block_count(), 2);
    assert!(r.warnings().is_empty());
}

const TREE: &[u8] = b"%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\nx: 1\n...\n";

fn conformance() -> PathBuf {
    asdf_testdata::conformance_dir()
}

fn write(blocks: &[(&[u8], BlockOptions)], index: bool) -> Vec<u8> {
    let mut w = Writer::new(Vec::new(), Version::STANDARD_LATEST).unwrap();
    w.write_tree(TREE).unwrap();
    for (d, o) in blocks {
        w.write_block(d, o).unwrap();
    }
    w.finish(index).unwrap()
}

#[test]
fn writes_what_python_writes_for_a_small_file() {
    asdf_testdata::needs_conformance!();
    // a_small.asdf: tree then one 72-byte block, checksum, index `- 687`.
    let py = std::fs::read(conformance().join("python-asdf-samples/a_small.asdf")).unwrap();
    let r = Reader::open(py.clone()).unwrap();
    let tree = r.tree_bytes().unwrap();
    let data = r.read_data(0).unwrap();
    let mut w = Writer::new(Vec::new(), Version::new(1, 6, 0)).unwrap();
    w.write_tree(tree).unwrap();
    w.write_block(&data, &BlockOptions::default()).unwrap();
    let ours = w.finish(true).unwrap();
    assert_eq!(ours, py, "byte-identical to Python asdf 6.0's a_small.asdf");
}

#[test]
fn three_blocks_and_no_index_no_checksum_match_python() {
    asdf_testdata::needs_conformance!();
    for (name, opts, index) in [
        ("e_three_blocks.asdf", BlockOptions::default(), true),
        (
            "h_noindex_nochecksum.asdf",
            BlockOptions::default().checksum(false),
            false,
        ),
    ] {
        let py = std::fs::read(conformance().join("python-asdf-samples").join(name)).unwrap();
        let r = Reader::open(py.clone()).unwrap();
        let mut w = Writer::new(Vec::new(), r.file_header().standard_version).unwrap();
        w.write_tree(r.tree_bytes().unwrap()).unwrap();
        for i in 0..r.block_count() {
            w.write_block(&r.read_data(i).unwrap(), &opts).unwrap();
        }
        assert_eq!(w.finish(index).unwrap(), py, "{name}");
    }
}

#[test]
fn padded_file_matches_python() {
    asdf_testdata::needs_conformance!();
    // h_padded.asdf: tree padded with NULs to 0x2000, block allocated 8192 with 80 used.
    let py = std::fs::read(conformance().join("python-asdf-samples/h_padded.asdf")).unwrap();
    let r = Reader::open(py.clone()).unwrap();
    let tree_end = r.tree_range().unwrap().end;
    let b = r.block(0).unwrap();
    assert_eq!(b.offset, 0x2000);
    let mut w = Writer::new(Vec::new(), r.file_header().standard_version).unwrap();
    w.write_tree(r.tree_bytes().unwrap()).unwrap();
    w.write_padding(0x2000 - tree_end, 0).unwrap();
    let opts = BlockOptions::default().padding(b.header.allocated_size - b.header.used_size);
    w.write_block(&r.read_data(0).unwrap(), &opts).unwrap();
    assert_eq!(w.finish(true).unwrap(), py);
}

#[test]
fn lz4_is_byte_identical_to_python() {
    asdf_testdata::needs_conformance!();
    let py = std::fs::read(conformance().join("python-asdf-samples/b_lz4.asdf")).unwrap();
    let r = Reader::open(py).unwrap();
    assert!(r.block_count() >= 1);
    for i in 0..r.block_count() {
        let b = r.block(i).unwrap();
        assert_eq!(b.compression(), Label::LZ4);
        let data = r.read_data(i).unwrap();
        let stored = r.read_stored(i).unwrap();
        let mut ours = Vec::new();
        asdf_layout::Registry::default()
            .get(Label::LZ4)
            .unwrap()
            .encode(&data, &mut ours)
            .unwrap();
        assert!(
            ours == *stored,
            "block {i}: lz4 bytes differ from python-lz4 ({} vs {} bytes)",
            ours.len(),
            stored.len()
        );
        assert_eq!(r.verify_checksum(i).unwrap(), ChecksumStatus::StoredBytes);
    }
}

#[test]
fn zlib_and_bzp2_blocks_from_python_decode_and_reencode() {
    asdf_testdata::needs_conformance!();
    for (name, label) in [("b_zlib.asdf", Label::ZLIB), ("b_bzp2.asdf", Label::BZP2)] {
        let py = std::fs::read(conformance().join("python-asdf-samples").join(name)).unwrap();
        let r = Reader::open(py).unwrap();
        for i in 0..r.block_count() {
            assert_eq!(r.block(i).unwrap().compression(), label);
            let data = r.read_data(i).unwrap().into_owned();
            let f = write(&[(&data, BlockOptions::default().compression(label))], true);
            let back = Reader::open(f).unwrap();
            assert_eq!(&*back.read_data(0).unwrap(), &data[..]);
            assert_eq!(back.verify_checksum(0).unwrap(), ChecksumStatus::StoredBytes);
        }
    }
}

#[test]
fn streamed_block_runs_to_end_of_file() {
    use std::io::Write as _;
    let mut w = Writer::new(Vec::new(), Version::STANDARD_LATEST).unwrap();
    w.write_tree(TREE).unwrap();
    w.write_block(&[1, 2, 3], &BlockOptions::default()).unwrap();
    let mut s = w.start_stream().unwrap();
    for row in 0..10u8 {
        s.write_all(&[row; 16]).unwrap();
    }
    assert_eq!(s.written(), 160);
    let f = s.finish().unwrap();
    let r = Reader::open(f.clone()).unwrap();
    assert!(r.warnings().is_empty());
    assert_eq!(r.block_count(), 2);
    let b = r.block(1).unwrap();
    assert!(b.header.is_streamed());
    assert_eq!(b.data_len(), 160);
    assert_eq!(r.read_data(1).unwrap()[16 * 9], 9);
    assert_eq!(r.verify_checksum(1).unwrap(), ChecksumStatus::Absent);
    // Appending rows later grows the block.
    let mut g = f;
    g.extend_from_slice(&[10u8; 16]);
    assert_eq!(Reader::open(g).unwrap().block(1).unwrap().data_len(), 176);
}

#[test]
fn python_stream_sample() {
    asdf_testdata::needs_conformance!();
    let r = Reader::open_path(conformance().join("python-asdf-samples/c_stream.asdf")).unwrap();
    assert_eq!(r.block_count(), 1);
    let b = r.block(0).unwrap();
    assert!(b.header.is_streamed());
    assert_eq!(b.data_len() % 64, 0, "rows of 8 float64");
    assert_eq!(r.block_discovery(), BlockDiscovery::Scan);
}

const BIG: usize = 100_000;

#[test]
fn index_is_used_and_only_needed_headers_are_read() {
    let blocks: Vec<Vec<u8>> = (0..50u8).map(|i| vec![i; BIG]).collect();
    let spec: Vec<(&[u8], BlockOptions)> = blocks.iter().map(|b| (&b[..], BlockOptions::default())).collect();
    let f = write(&spec, true);
    let src = RecordingSource::new(f.clone());
    let r = Reader::open(&src).unwrap();
    assert!(matches!(r.block_discovery(), BlockDiscovery::Index { .. }));
    assert_eq!(r.block_count(), 50);
    let offsets = r.block_offsets();
    let read_at_open: u64 = src.reads().iter().map(|(a, b)| b - a).sum();
    assert!(
        read_at_open < 200_000,
        "open read {read_at_open} bytes of a {} byte file",
        f.len()
    );
    // Opening reads ahead at most one chunk after the tree and before the end; the blocks in
    // between (data and headers) are not touched.
    for i in 2..48 {
        assert!(
            !src.touched(offsets[i], offsets[i] + 54 + BIG as u64),
            "block {i} read at open"
        );
    }
    // Reading block 20 reads its header and data and nothing of its neighbours.
    src.clear();
    assert_eq!(&*r.read_data(20).unwrap(), &blocks[20][..]);
    assert!(!src.touched(0, offsets[20]));
    assert!(!src.touched(offsets[21], f.len() as u64));
    // A slice of an uncompressed block reads only that slice.
    src.clear();
    let _ = r.block(30).unwrap();
    src.clear();
    assert_eq!(&*r.read_range(30, 100..110).unwrap(), &[30u8; 10]);
    let data30 = offsets[30] + 54;
    assert_eq!(src.reads(), vec![(data30 + 100, data30 + 110)]);
    // The same file read by scanning finds the same blocks, reading headers only.
    let src2 = RecordingSource::new(f.clone());
    let scanned = Reader::open_with(&src2, ReadOptions::default().use_index(false)).unwrap();
    assert_eq!(scanned.block_discovery(), BlockDiscovery::Scan);
    assert_eq!(scanned.block_offsets(), offsets);
    for i in 2..50 {
        let d = offsets[i] + 54;
        assert!(!src2.touched(d, d + BIG as u64), "block {i} data read by the scan");
    }
}

#[test]
fn flow_style_index_is_accepted() {
    let mut f = write(
        &[
            (&[1u8; 10], BlockOptions::default()),
            (&[2u8; 10], BlockOptions::default()),
        ],
        false,
    );
    let offsets = Reader::open(f.clone()).unwrap().block_offsets();
    f.extend_from_slice(
        format!(
            "#ASDF BLOCK INDEX\r\n%YAML 1.1\r\n--- [{}, {}]\r\n...\r\n\0\0\0\0\0",
            offsets[0], offsets[1]
        )
        .as_bytes(),
    );
    let r = Reader::open(f).unwrap();
    assert!(r.warnings().is_empty(), "{:?}", r.warnings());
    assert!(matches!(r.block_discovery(), BlockDiscovery::Index { .. }));
}

#[test]
fn allocated_gaps_and_large_headers_round_trip() {
    let f = write(
        &[
            (&[1u8; 100], BlockOptions::default().padding(500).header_size(64)),
            (&[2u8; 100], BlockOptions::default().compression(Label::ZLIB).padding(7)),
        ],
        true,
    );
    let r = Reader::open(f).unwrap();
    assert!(r.warnings().is_empty());
    let b0 = r.block(0).unwrap();
    assert_eq!(
        (b0.header.allocated_size, b0.header.used_size, b0.header.header_size),
        (600, 100, 64)
    );
    assert_eq!(r.block(1).unwrap().offset, b0.offset + 70 + 600);
    assert_eq!(&*r.read_data(1).unwrap(), &[2u8; 100][..]);
}

#[test]
fn tree_less_file_with_blocks() {
    let mut w = Writer::new(Vec::new(), Version::STANDARD_LATEST).unwrap();
    assert!(matches!(
        w.write_padding(5, b' '),
        Err(Error::Usage(UsageError::PaddingWithoutTree))
    ));
    w.write_block(b"abc", &BlockOptions::default()).unwrap();
    assert!(matches!(
        w.write_tree(TREE),
        Err(Error::Usage(UsageError::TreeAfterBlocks))
    ));
    let f = w.finish(true).unwrap();
    let r = Reader::open(f).unwrap();
    assert!(r.tree_bytes().is_none());
    assert_eq!(&*r.read_data(0).unwrap(), b"abc");
}

#[test]
fn writer_rejects_undelimited_tree_and_unknown_codec() {
    let mut w = Writer::new(Vec::new(), Version::STANDARD_LATEST).unwrap();
    assert!(matches!(
        w.write_tree(b"%YAML 1.1\n--- {}\n"),
        Err(Error::Usage(UsageError::TreeNotDelimited))
    ));
    w.write_tree(TREE).unwrap();
    let bad = BlockOptions::default().compression(Label(*b"nope"));
    assert!(matches!(
        w.write_block(b"x", &bad),
        Err(Error::Usage(UsageError::UnknownCodec(_)))
    ));
}

/// Builds a file whose single block header is `h` followed by `data`.
fn with_header(h: &BlockHeader, data: &[u8]) -> Vec<u8> {
    let mut f = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n".to_vec();
    f.extend_from_slice(TREE);
    f.extend_from_slice(&h.to_bytes());
    f.extend_from_slice(data);
    f
}

#[test]
fn huge_claims_are_errors_not_allocations() {
    // A zlib block claiming 4 EiB of decoded data.
    let mut h = BlockHeader::new(Label::ZLIB, 10, 4 << 60);
    h.allocated_size = 10;
    let f = with_header(&h, &[0u8; 10]);
    let r = Reader::open(f.clone()).unwrap();
    match r.read_data(0) {
        Err(Error::Limits(LimitError::BlockBytes { claimed, .. })) => assert_eq!(claimed, 4 << 60),
        other => panic!("{other:?}"),
    }
    // Even with no limits nothing is allocated for the claim: 4 EiB from 10 bytes is beyond
    // any codec's ratio, so the output grows with what the stream decodes (here: nothing, the
    // stream is garbage) and the read ends in the codec's error.
    let r = Reader::open_with(f, ReadOptions::default().limits(Limits::unlimited())).unwrap();
    assert!(
        matches!(r.read_data(0), Err(Error::Codec { .. })),
        "{:?}",
        r.read_data(0)
    );
    // An uncompressed block claiming more bytes than the file has.
    let mut h = BlockHeader::new(Label::NONE, 1 << 62, 1 << 62);
    h.allocated_size = 1 << 62;
    let r = Reader::open(with_header(&h, &[0u8; 10])).unwrap();
    assert!(matches!(r.warnings(), [Warning::BlockTruncated { block: 0, .. }]));
    assert!(matches!(
        r.read_data(0).unwrap_err().format_kind(),
        Some(FormatError::BlockBeyondEof { .. })
    ));
    // Too many blocks.
    let f = write(
        &[(&[1u8], BlockOptions::default()), (&[2u8], BlockOptions::default())],
        false,
    );
    let mut lim = Limits::default();
    lim.max_blocks = 1;
    assert!(matches!(
        Reader::open_with(f, ReadOptions::default().limits(lim)),
        Err(Error::Limits(LimitError::Blocks { limit: 1 }))
    ));
}

#[test]
fn size_mismatches_are_errors() {
    // Uncompressed with data_size != used_size.
    let mut h = BlockHeader::new(Label::NONE, 4, 5);
    h.allocated_size = 4;
    let r = Reader::open(with_header(&h, b"abcd")).unwrap();
    assert!(matches!(
        r.read_data(0).unwrap_err().format_kind(),
        Some(FormatError::UncompressedSizeMismatch { used: 4, data: 5 })
    ));
    // zlib stream that decodes to 100 bytes in a block claiming 99.
    let mut enc = Vec::new();
    asdf_layout::Registry::default()
        .get(Label::ZLIB)
        .unwrap()
        .encode(&[9u8; 100], &mut enc)
        .unwrap();
    let h = BlockHeader::new(Label::ZLIB, enc.len() as u64, 99);
    let r = Reader::open(with_header(&h, &enc)).unwrap();
    assert!(matches!(r.read_data(0), Err(Error::Codec { .. })));
    let mut buf = vec![0u8; 3];
    assert!(matches!(
        r.read_data_into(0, &mut buf),
        Err(Error::Usage(UsageError::BufferSize { .. }))
    ));
    assert!(matches!(
        r.read_range(0, 50..200),
        Err(Error::Usage(UsageError::RangeOutOfBlock { .. }))
    ));
    assert!(matches!(
        r.block(3),
        Err(Error::Usage(UsageError::NoSuchBlock { index: 3, count: 1 }))
    ));
}

#[test]
fn user_codecs_can_be_registered() {
    #[derive(Debug)]
    struct Xor;
    impl asdf_layout::Codec for Xor {
        fn label(&self) -> Label {
            Label(*b"xor1")
        }
        fn decode(&self, input: &[u8], output: &mut [u8]) -> Result<(), asdf_layout::CodecError> {
            if input.len() != output.len() {
                return Err(asdf_layout::CodecError::SizeMismatch {
                    expected: output.len() as u64,
                    actual: input.len() as u64,
                });
            }
            for (o, i) in output.iter_mut().zip(input) {
                *o = i ^ 0x5a;
            }
            Ok(())
        }
        fn encode(&self, input: &[u8], output: &mut Vec<u8>) -> Result<(), asdf_layout::CodecError> {
            output.extend(input.iter().map(|b| b ^ 0x5a));
            Ok(())
        }
    }
    let mut reg = asdf_layout::Registry::default();
    reg.register(std::sync::Arc::new(Xor));
    let reg = std::sync::Arc::new(reg);
    let mut w = Writer::with_comments(Vec::new(), Version::STANDARD_LATEST, &["made by a test"], reg.clone()).unwrap();
    w.write_tree(TREE).unwrap();
    w.write_block(b"hello", &BlockOptions::default().compression(Label(*b"xor1")))
        .unwrap();
    let f = w.finish(true).unwrap();
    // Without the codec: the file opens, the block is an error only when read.
    let plain = Reader::open(f.clone()).unwrap();
    assert_eq!(
        plain.file_header().comments,
        vec!["ASDF_STANDARD 1.6.0", "made by a test"]
    );
    assert!(matches!(plain.read_data(0), Err(Error::Unsupported { .. })));
    let r = Reader::open_with(f, ReadOptions::default().registry(reg)).unwrap();
    assert_eq!(&*r.read_data(0).unwrap(), b"hello");
}

fn label_strategy() -> impl Strategy<Value = Label> {
    prop::sample::select(
        asdf_layout::Registry::default()
            .labels()
            .into_iter()
            .chain([Label::NONE])
            .collect::<Vec<_>>(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    /// Any set of blocks, any codec, padding, checksum and index choice reads back the same.
    #[test]
    fn write_read_round_trip(
        blocks in prop::collection::vec(
            (prop::collection::vec(any::<u8>(), 0..3000), label_strategy(), any::<bool>(), 0u64..100),
            0..6),
        index in any::<bool>(),
        tree_pad in 0u64..300,
    ) {
        let mut w = Writer::new(Vec::new(), Version::new(1, 5, 0)).unwrap();
        w.write_tree(TREE).unwrap();
        w.write_padding(tree_pad, b' ').unwrap();
        for (d, l, c, p) in &blocks {
            w.write_block(d, &BlockOptions::default().compression(*l).checksum(*c).padding(*p)).unwrap();
        }
        let f = w.finish(index).unwrap();
        let r = Reader::open(f).unwrap();
        prop_assert!(r.warnings().is_empty(), "{:?}", r.warnings());
        prop_assert_eq!(r.block_count(), blocks.len());
        prop_assert_eq!(r.tree_bytes(), Some(TREE));
        prop_assert_eq!(r.file_header().standard_version, Version::new(1, 5, 0));
        for (i, (d, _, c, _)) in blocks.iter().enumerate() {
            prop_assert_eq!(&*r.read_data(i).unwrap(), &d[..]);
            let want = if *c { ChecksumStatus::StoredBytes } else { ChecksumStatus::Absent };
            prop_assert_eq!(r.verify_checksum(i).unwrap(), want);
        }
    }

    /// Arbitrary bytes after a valid header never panic the reader.
    #[test]
    fn garbage_never_panics(tail in prop::collection::vec(any::<u8>(), 0..400)) {
        let mut f = b"#ASDF 1.0.0\n".to_vec();
        f.extend_from_slice(&tail);
        if let Ok(r) = Reader::open(f.clone()) {
            for i in 0..r.block_count() {
                let _ = r.read_data(i);
                let _ = r.verify_checksum(i);
            }
        }
        let mut g = b"#ASDF 1.0.0\n\xd3BLK".to_vec();
        g.extend_from_slice(&tail);
        if let Ok(r) = Reader::open(g) {
            for i in 0..r.block_count() {
                let _ = r.read_data(i);
            }
        }
    }
}

/// Python asdf 6.0 + asdf-compression samples: every label decodes to the same arrays as the
/// zlib sample, and this build's encoder round-trips each label.
#[test]
fn compression_samples_agree_with_zlib() {
    asdf_testdata::needs_conformance!();
    let dir = conformance().join("python-asdf-samples");
    let want = {
        let r = Reader::open_path(dir.join("b_zlib.asdf")).unwrap();
        (0..r.block_count())
            .map(|i| r.read_data(i).unwrap().into_owned())
            .collect::<Vec<_>>()
    };
    let mut names = vec!["b_bzp2.asdf", "b_lz4.asdf"];
    if cfg!(feature = "zstd") {
        names.push("b_zstd.asdf");
    }
    if cfg!(feature = "lz4f") {
        names.push("b_lz4f.asdf");
    }
    if cfg!(feature = "blsc") {
        names.push("b_blsc.asdf");
    }
    for name in names {
        let r = Reader::open_path(dir.join(name)).unwrap();
        let got: Vec<Vec<u8>> = (0..r.block_count())
            .map(|i| r.read_data(i).unwrap().into_owned())
            .collect();
        assert!(got == want, "{name}: decoded blocks differ from b_zlib.asdf");
        for i in 0..r.block_count() {
            assert_eq!(r.verify_checksum(i).unwrap(), ChecksumStatus::StoredBytes, "{name}");
            let label = r.block(i).unwrap().compression();
            let f = write(&[(&got[i], BlockOptions::default().compression(label))], true);
            assert!(
                *Reader::open(f).unwrap().read_data(0).unwrap() == got[i][..],
                "{name} re-encoded"
            );
        }
    }
}

#[cfg(feature = "blsc")]
#[test]
fn blosc1_block_written_by_asdf_cxx() {
    asdf_testdata::needs_conformance!();
    // JuliaAstro's file from asdf-cxx: float16[256] all 1.0 in one `blsc` block; wrong index.
    let r =
        Reader::open_path(conformance().join("other-impls/JuliaAstro-ASDF.jl/blue_upchan_gain.00000000.asdf")).unwrap();
    assert!(matches!(r.warnings(), [Warning::IndexInvalid { entry: 0, .. }]));
    let d = r.read_data(0).unwrap();
    assert_eq!(d.len(), 512);
    assert!(d.chunks_exact(2).all(|h| u16::from_le_bytes([h[0], h[1]]) == 0x3c00));
    assert_eq!(r.verify_checksum(0).unwrap(), ChecksumStatus::StoredBytes);
}

/// Blosc2 chunks and contiguous frames (inner codecs blosclz, lz4, zlib, zstd), made by
/// `tests/data/blosc/generate.py` with python-blosc2; each holds int32 0..100000.
#[cfg(feature = "bls2")]
#[test]
fn blosc2_chunks_and_frames_decode() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/blosc");
    let codec = asdf_layout::Registry::default();
    let codec = codec.get(Label::BLS2).unwrap();
    let mut n = 0;
    for kind in ["chunk", "frame"] {
        for inner in ["blosclz", "lz4", "zlib", "zstd"] {
            let input = std::fs::read(dir.join(format!("{kind}_{inner}.bls2"))).unwrap();
            let mut out = vec![0u8; 400_000];
            codec
                .decode(&input, &mut out)
                .unwrap_or_else(|e| panic!("{kind} {inner}: {e}"));
            assert!(
                out.chunks_exact(4)
                    .enumerate()
                    .all(|(i, b)| i32::from_le_bytes(b.try_into().unwrap()) == i as i32),
                "{kind} {inner}"
            );
            let mut short = vec![0u8; 399_996];
            assert!(
                codec.decode(&input, &mut short).is_err(),
                "{kind} {inner}: size mismatch"
            );
            // Truncated input is an error, never a panic.
            for cut in (0..input.len()).step_by(97) {
                assert!(codec.decode(&input[..cut], &mut out).is_err());
            }
            n += 1;
        }
    }
    assert_eq!(n, 8);
}

#[cfg(feature = "bls2")]
proptest! {
    #![proptest_config(ProptestConfig { cases: 300, .. ProptestConfig::default() })]

    /// Corrupted blosc chunks and frames give an error or some bytes, never a crash.
    #[test]
    fn corrupted_blosc_never_crashes(
        file in prop::sample::select(vec!["chunk_blosclz", "chunk_lz4", "chunk_zstd", "frame_zlib", "frame_lz4"]),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
    ) {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/blosc");
        let mut input = std::fs::read(dir.join(format!("{file}.bls2"))).unwrap();
        for (i, b) in flips {
            let at = i.index(input.len());
            input[at] = b;
        }
        let reg = asdf_layout::Registry::default();
        let mut out = vec![0u8; 400_000];
        let _ = reg.get(Label::BLS2).unwrap().decode(&input, &mut out);
        let _ = reg.get(Label::BLSC).unwrap().decode(&input, &mut out);
    }
}

/// `padded_size` reserves what Python asdf's `pad_blocks=True` reserved in h_padded.asdf: the
/// header and tree (664 bytes) padded to 8192, the 80-byte block allocated 8192.
#[test]
fn padding_matches_python_pad_blocks() {
    asdf_testdata::needs_conformance!();
    let p = asdf_testdata::conformance_dir().join("python-asdf-samples/h_padded.asdf");
    let r = asdf_layout::Reader::open(std::fs::read(p).unwrap()).unwrap();
    let b = r.block(0).unwrap();
    let tree_end = r.tree_range().unwrap().end;
    assert_eq!(asdf_layout::padded_size(tree_end), b.offset);
    assert_eq!(asdf_layout::padded_size(b.header.used_size), b.header.allocated_size);
    assert_eq!(asdf_layout::padded_size(0), 4096);
}

/// The overlapped checksum (MD5 on a second thread while the block is written, the header
/// patched after) and the piecewise compressed write (pieces hashed and written while later
/// ones compress, the header written last) give exactly the bytes of the plain writer, for
/// small and large blocks, every codec, with and without checksums and padding.
#[test]
fn overlapped_checksums_give_the_same_bytes() {
    use asdf_layout::{BlockOptions, Version, Writer};
    let big: Vec<u8> = (0..(9u32 << 20)).map(|i| (i % 251) as u8 ^ (i >> 13) as u8).collect();
    let small = b"a few bytes".to_vec();
    let registry = asdf_layout::Registry::default();
    let mut labels = registry.labels();
    labels.push(Label::NONE);
    for label in labels {
        for (checksum, pad, padding) in [(true, false, 0), (false, false, 100), (true, true, 0)] {
            let opts = BlockOptions::default()
                .compression(label)
                .checksum(checksum)
                .pad_blocks(pad)
                .padding(padding);
            let mut plain = Writer::new(Vec::new(), Version::new(1, 6, 0)).unwrap();
            let mut over = Writer::new(std::io::Cursor::new(Vec::new()), Version::new(1, 6, 0)).unwrap();
            for d in [&small, &big, &[][..], &small] {
                let a = plain.write_block(d, &opts).unwrap();
                let b = over.write_block_overlapped(d, &opts).unwrap();
                assert_eq!(a, b, "{label}");
            }
            let a = plain.finish(true).unwrap();
            let b = over.finish(true).unwrap().into_inner();
            assert!(a == b, "{label} {opts:?}: bytes differ");
            let r = asdf_layout::Reader::open(b).unwrap();
            for i in 0..4 {
                r.verify_checksum(i).unwrap();
                assert_eq!(
                    r.read_data(i).unwrap().len(),
                    [small.len(), big.len(), 0, small.len()][i]
                );
            }
        }
    }
}

/// A write that fails half-way through a compressed block is an I/O error at the offset where
/// it failed (no panic, no hang with compression threads still running).
#[test]
fn failing_output_mid_block_is_an_io_error() {
    struct Fails(std::io::Cursor<Vec<u8>>, usize);
    impl std::io::Write for Fails {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            if self.0.get_ref().len() + b.len() > self.1 {
                return Err(std::io::Error::new(std::io::ErrorKind::StorageFull, "disk full"));
            }
            self.0.write(b)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    impl std::io::Seek for Fails {
        fn seek(&mut self, p: std::io::SeekFrom) -> std::io::Result<u64> {
            self.0.seek(p)
        }
    }
    // Incompressible bytes (xorshift), 24 MiB: several lz4 chunks and zlib pieces.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let big: Vec<u8> = (0..(24usize << 20))
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    for label in [Label::LZ4, Label::ZLIB] {
        let mut w = Writer::new(Fails(std::io::Cursor::new(Vec::new()), 3 << 20), Version::new(1, 6, 0)).unwrap();
        let e = w
            .write_block_overlapped(&big, &BlockOptions::default().compression(label))
            .unwrap_err();
        match e {
            Error::Io { offset, source } => {
                assert_eq!(source.kind(), std::io::ErrorKind::StorageFull, "{label}");
                let offset = offset.unwrap();
                assert!(offset > 0 && offset <= 3 << 20, "{label}: {offset}");
            }
            other => panic!("{label}: {other:?}"),
        }
    }
}

/// Piecewise reading gives the same bytes as whole-block reading for every block of every
/// conformance file (or the same failure), and every codec hands a 9 MiB block over in pieces
/// of at most 4 MiB.
#[test]
fn pieces_join_to_the_whole_block() {
    asdf_testdata::needs_conformance!();
    let c = asdf_testdata::conformance_dir();
    let (mut blocks, mut same) = (0, 0);
    for p in asdf_testdata::files_with_ext(&c, "asdf") {
        let Ok(r) = asdf_layout::Reader::open(std::fs::read(&p).unwrap()) else {
            continue;
        };
        for i in 0..r.block_count() {
            blocks += 1;
            let mut joined = Vec::new();
            let pieces = r.read_data_pieces(i, &mut |piece| joined.extend_from_slice(piece));
            match (r.read_data(i), pieces) {
                (Ok(whole), Ok(())) => {
                    assert!(whole.as_ref() == joined.as_slice(), "{}: block {i}", p.display());
                    same += 1;
                }
                (Err(_), Err(_)) => {}
                (a, b) => panic!("{}: block {i}: {:?} vs {:?}", p.display(), a.map(|_| ()), b),
            }
        }
    }
    assert!(same > 400, "{same} of {blocks}");

    let data: Vec<u8> = (0..(9u32 << 20)).map(|i| (i % 251) as u8 ^ (i >> 11) as u8).collect();
    let registry = asdf_layout::Registry::default();
    let labels = ["zlib", "bzp2", "lz4", "zstd", "lz4f", "blsc"];
    #[cfg(all(feature = "zstd", feature = "lz4f", feature = "blsc"))]
    assert!(
        labels
            .iter()
            .all(|l| registry.get(asdf_layout::Label::from_name(l).unwrap()).is_some())
    );
    // Without their features some codecs are not built in.
    for (label, codec) in labels
        .iter()
        .filter_map(|l| Some((l, registry.get(asdf_layout::Label::from_name(l).unwrap())?)))
    {
        let mut stored = Vec::new();
        codec.encode(&data, &mut stored).unwrap();
        let (mut joined, mut largest) = (Vec::new(), 0);
        codec
            .decode_pieces(&stored, data.len(), &mut |piece| {
                largest = largest.max(piece.len());
                joined.extend_from_slice(piece);
            })
            .unwrap();
        assert!(joined == data, "{label}");
        assert!(largest <= 4 << 20, "{label}: a piece of {largest} bytes");
        // One byte short or long is an error, as for whole-block decoding.
        assert!(
            codec.decode_pieces(&stored, data.len() - 1, &mut |_| {}).is_err(),
            "{label}"
        );
        assert!(
            codec.decode_pieces(&stored, data.len() + 1, &mut |_| {}).is_err(),
            "{label}"
        );
    }
}

/// `Reader::empty`: a new file's reader, made without bytes.
#[test]
fn an_empty_reader_has_its_header_only() {
    let r = Reader::empty(Vec::<u8>::new(), Version::new(1, 5, 0));
    assert_eq!(r.file_header().standard_version, Version::new(1, 5, 0));
    assert!(r.file_header().standard_version_declared);
    assert_eq!(r.block_count(), 0);
    assert!(r.tree_bytes().is_none());
    assert!(r.warnings().is_empty());
    assert!(r.block(0).is_err());
}

/// A reader that finds its blocks on first need (`lazy_blocks`, remote files) ends up as the
/// eager one: over files of 0 to 5 blocks, with and without an index, each damaged at a few
/// bytes (a fixed sequence), the lazy reader opens where the eager one does; once its blocks
/// are found, count, offsets, discovery, warnings and every block's header and data are the
/// eager reader's, and where finding them fails (what the eager open refused) the failure is
/// returned by every block read after it. Before they are found, block 0 is the eager one's.
#[test]
fn lazy_block_discovery_ends_as_eager_discovery() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut refused_late, mut compared) = (0, 0);
    for case in 0..600 {
        let n = (case % 6) as usize;
        let datas: Vec<Vec<u8>> = (0..n)
            .map(|i| (0..(next() % 300) as usize).map(|j| (i * 31 + j) as u8).collect())
            .collect();
        let opts: Vec<BlockOptions> = (0..n)
            .map(|i| {
                if i % 2 == 1 {
                    BlockOptions::default().compression(Label::ZLIB)
                } else {
                    BlockOptions::default()
                }
            })
            .collect();
        let blocks: Vec<(&[u8], BlockOptions)> = datas.iter().map(|d| d.as_slice()).zip(opts).collect();
        let mut bytes = write(&blocks, case % 3 != 0);
        if case >= 60 {
            for _ in 0..1 + next() % 3 {
                let at = (next() % bytes.len() as u64) as usize;
                bytes[at] = (next() & 0xff) as u8;
            }
        }
        let eager = Reader::open_with(bytes.clone(), ReadOptions::default());
        let lazy = Reader::open_with(bytes.clone(), ReadOptions::default().lazy_blocks(true));
        let (eager, lazy) = match (eager, lazy) {
            (Ok(e), Ok(l)) => (Some(e), l),
            (Err(_), Ok(l)) => (None, l),
            (Err(e), Err(l)) => {
                assert_eq!(e.to_string(), l.to_string(), "case {case}");
                continue;
            }
            (Ok(_), Err(l)) => panic!("case {case}: the lazy open refused what the eager one opened: {l}"),
        };
        if lazy.has_blocks() && !lazy.blocks_found() {
            let first = lazy.block(0).unwrap();
            if let Some(e) = &eager {
                assert_eq!(e.block(0).unwrap(), first, "case {case}");
            }
        }
        match (eager, lazy.find_blocks()) {
            (Some(e), Ok(count)) => {
                compared += 1;
                assert!(lazy.blocks_found());
                assert_eq!(count, e.block_count(), "case {case}");
                assert_eq!(lazy.block_offsets(), e.block_offsets(), "case {case}");
                assert_eq!(lazy.block_discovery(), e.block_discovery(), "case {case}");
                assert_eq!(lazy.warnings(), e.warnings(), "case {case}");
                for i in 0..count {
                    assert_eq!(lazy.block(i).ok(), e.block(i).ok(), "case {case} block {i}");
                    assert_eq!(
                        lazy.read_data(i).map(|d| d.into_owned()).ok(),
                        e.read_data(i).map(|d| d.into_owned()).ok(),
                        "case {case} block {i}"
                    );
                }
            }
            (None, Err(err)) => {
                refused_late += 1;
                assert!(matches!(err, Error::Blocks(_)), "case {case}: {err}");
                assert!(matches!(lazy.block(0), Err(Error::Blocks(_))), "case {case}");
                assert!(matches!(lazy.read_data(0), Err(Error::Blocks(_))), "case {case}");
            }
            (Some(_), Err(err)) => panic!("case {case}: lazy discovery failed where the eager open did not: {err}"),
            (None, Ok(_)) => panic!("case {case}: the eager open failed, lazy discovery did not"),
        }
    }
    assert!(
        compared > 300 && refused_late > 0,
        "compared {compared}, refused late {refused_late}"
    );
}
