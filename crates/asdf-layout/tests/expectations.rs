//! Every layout case of `asdf-pytests-data/EXPECTATIONS.json` (Python asdf's own test suite),
//! each asserting its expected outcome at the layout level; every other case must at least
//! open here without a layout error or warning (its tree semantics are tested elsewhere).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::path::PathBuf;

use asdf_layout::{
    BlockDiscovery, ChecksumStatus, Content, Error, FormatError, IndexProblem, ReadOptions, Reader, Unsupported,
    Version, Warning,
};

fn conformance() -> PathBuf {
    asdf_testdata::conformance_dir()
}

fn data_dir() -> PathBuf {
    conformance().join("asdf-pytests-data")
}

fn open(rel: &str) -> Result<Reader<Vec<u8>>, Error> {
    Reader::open(std::fs::read(data_dir().join(rel)).unwrap())
}

fn open_with(rel: &str, o: ReadOptions) -> Result<Reader<Vec<u8>>, Error> {
    Reader::open_with(std::fs::read(data_dir().join(rel)).unwrap(), o)
}

fn all_data(r: &Reader<Vec<u8>>) -> Vec<Vec<u8>> {
    (0..r.block_count())
        .map(|i| r.read_data(i).unwrap().into_owned())
        .collect()
}

fn reference(rel: &str) -> Reader<Vec<u8>> {
    let p = conformance().join("asdf-standard/reference_files").join(rel);
    Reader::open(std::fs::read(p).unwrap()).unwrap()
}

fn le_i64(b: &[u8]) -> Vec<i64> {
    b.chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn format_kind(r: Result<Reader<Vec<u8>>, Error>) -> FormatError {
    match r {
        Err(Error::Format { kind, .. }) => kind,
        other => panic!("expected a format error, got {other:?}"),
    }
}

/// The blocks of the 1.6.0 int.asdf reference file, which the `mutated/int_*` cases derive from.
fn int_base() -> Vec<Vec<u8>> {
    all_data(&reference("1.6.0/int.asdf"))
}

fn assert_int_blocks(rel: &str, r: &Reader<Vec<u8>>) {
    assert_eq!(r.block_count(), 12, "{rel}");
    assert_eq!(all_data(r), int_base(), "{rel}: block data differs from int.asdf");
}

fn one_warning(rel: &str, r: &Reader<Vec<u8>>) -> Warning {
    assert_eq!(r.warnings().len(), 1, "{rel}: {:?}", r.warnings());
    r.warnings()[0].clone()
}

/// The layout cases of EXPECTATIONS.json handled by `check_layout_case`.
const LAYOUT_CASES: &[&str] = &[
    "inline/ff_no_yaml_end_marker.asdf",
    "inline/ff_no_final_newline.asdf",
    "inline/ff_no_asdf_header.asdf",
    "inline/ff_fits_magic.asdf",
    "inline/ff_fits_magic_newline.asdf",
    "inline/ff_header_only.asdf",
    "inline/ff_header_and_standard_no_newline.asdf",
    "inline/ff_junk_after_header.asdf",
    "inline/ff_unparsable_version.asdf",
    "inline/ff_block_header_size_40.asdf",
    "inline/ff_block_header_truncated.asdf",
    "inline/ff_file_format_0.1.0.asdf",
    "inline/ff_valid_no_standard_comment.asdf",
    "inline/ab_zero_padding_then_empty_block.asdf",
    "inline/unsupported_standard_999.asdf",
    "mutated/int_index_first_plus4.asdf",
    "mutated/int_index_first_minus4.asdf",
    "mutated/int_index_empty.asdf",
    "mutated/int_index_tail_overwritten_junk.asdf",
    "mutated/int_index_junk_appended.asdf",
    "mutated/int_fake_index_zeros.asdf",
    "mutated/int_index_reversed.asdf",
    "mutated/int_no_index.asdf",
    "mutated/int_no_index_trailing_3_nul.asdf",
    "mutated/int_no_index_trailing_3_x01.asdf",
    "mutated/int_pad_before_first_block_nul7.asdf",
    "mutated/int_pad_before_first_block_d3BL_x4.asdf",
    "mutated/int_pad_full_magic_before_first_block.asdf",
    "mutated/int_index_last_plus8.asdf",
    "mutated/basic_bad_checksum.asdf",
    "mutated/basic_zero_checksum.asdf",
    "mutated/basic_header_size_64.asdf",
    "mutated/compressed_unknown_label.asdf",
    "mutated/stream_empty.asdf",
    "mutated/stream_partial_row.asdf",
    "mutated/stream_two_views.asdf",
    "mutated/ndarray2_index_points_to_fake_magic.asdf",
];

/// Checks one layout case; returns false when `rel` is not a layout case.
fn check_layout_case(rel: &str) -> bool {
    match rel {
        "inline/ff_no_yaml_end_marker.asdf" => {
            let e = open(rel).unwrap_err();
            assert_eq!(e.format_kind(), Some(&FormatError::TreeEndNotFound));
            assert_eq!(e.offset(), Some(12), "points at the tree's start");
        }
        "inline/ff_no_final_newline.asdf" => {
            let r = open(rel).unwrap();
            let t = r.tree_bytes().unwrap();
            assert!(t.ends_with(b"baz: 42\n..."));
            assert_eq!(r.tree_range().unwrap().end, r.file_len());
            assert_eq!(r.block_count(), 0);
        }
        "inline/ff_no_asdf_header.asdf" | "inline/ff_fits_magic.asdf" | "inline/ff_fits_magic_newline.asdf" => {
            assert_eq!(format_kind(open(rel)), FormatError::NotAsdf);
        }
        "inline/ff_header_only.asdf" | "inline/ff_header_and_standard_no_newline.asdf" => {
            let r = open(rel).unwrap();
            assert_eq!(r.file_header().content, Content::Empty);
            assert!(r.tree_bytes().is_none());
            assert_eq!(r.block_count(), 0);
            assert!(r.warnings().is_empty());
            let declared = rel.contains("standard");
            assert_eq!(r.file_header().standard_version_declared, declared);
            assert_eq!(r.file_header().standard_version, Version::new(1, 0, 0));
        }
        "inline/ff_junk_after_header.asdf" => {
            let e = open(rel).unwrap_err();
            assert_eq!(e.format_kind(), Some(&FormatError::JunkBeforeTree));
            assert_eq!(e.offset(), Some(12));
        }
        "inline/ff_unparsable_version.asdf" => {
            assert_eq!(format_kind(open(rel)), FormatError::UnparsableVersion("foo".into()));
        }
        "inline/ff_block_header_size_40.asdf" => {
            assert_eq!(format_kind(open(rel)), FormatError::BlockHeaderTooSmall(40));
        }
        "inline/ff_block_header_truncated.asdf" => {
            assert_eq!(format_kind(open(rel)), FormatError::BlockHeaderTooSmall(0));
        }
        // Python asdf refuses file format 0.1.0; this library reads the pre-1.0 drafts.
        "inline/ff_file_format_0.1.0.asdf" => {
            let r = open(rel).unwrap();
            assert_eq!(r.file_header().format_version, Version::new(0, 1, 0));
            assert_eq!(r.file_header().dialect, asdf_layout::Dialect::Asdf010);
            assert!(r.tree_bytes().unwrap().windows(9).any(|w| w == b"foo : bar"));
        }
        "inline/ff_valid_no_standard_comment.asdf" => {
            let r = open(rel).unwrap();
            assert_eq!(r.file_header().format_version, Version::new(1, 0, 0));
            assert_eq!(r.file_header().standard_version, Version::new(1, 0, 0));
            assert!(!r.file_header().standard_version_declared);
            assert!(r.tree_bytes().unwrap().ends_with(b"foo : bar\n..."));
        }
        "inline/ab_zero_padding_then_empty_block.asdf" => {
            let r = open(rel).unwrap();
            assert!(r.warnings().is_empty());
            assert_eq!(r.block_count(), 1);
            let b = r.block(0).unwrap();
            assert_eq!(b.offset, r.tree_range().unwrap().end + 8190);
            assert_eq!(b.data_len(), 0);
            assert!(r.read_data(0).unwrap().is_empty());
        }
        "inline/unsupported_standard_999.asdf" => {
            // The layout reports the version; rejecting it is the facade's decision.
            let r = open(rel).unwrap();
            assert_eq!(r.file_header().standard_version, Version::new(999, 999, 999));
        }
        "mutated/int_index_first_plus4.asdf" | "mutated/int_index_first_minus4.asdf" => {
            let r = open(rel).unwrap();
            match one_warning(rel, &r) {
                Warning::IndexInvalid {
                    entry: 0,
                    problem: IndexProblem::FirstBlockMismatch { .. },
                    ..
                } => {}
                w => panic!("{rel}: {w:?}"),
            }
            assert_eq!(r.block_discovery(), BlockDiscovery::Scan);
            assert_int_blocks(rel, &r);
        }
        "mutated/int_index_empty.asdf" => {
            let r = open(rel).unwrap();
            assert!(matches!(one_warning(rel, &r), Warning::IndexEmpty { .. }));
            assert_int_blocks(rel, &r);
        }
        "mutated/int_index_tail_overwritten_junk.asdf"
        | "mutated/int_index_junk_appended.asdf"
        | "mutated/int_fake_index_zeros.asdf" => {
            let r = open(rel).unwrap();
            assert!(matches!(one_warning(rel, &r), Warning::IndexUnparsable { .. }), "{rel}");
            assert_int_blocks(rel, &r);
        }
        "mutated/int_index_reversed.asdf" => {
            let r = open(rel).unwrap();
            match one_warning(rel, &r) {
                Warning::IndexInvalid {
                    problem: IndexProblem::NotIncreasing | IndexProblem::FirstBlockMismatch { .. },
                    ..
                } => {}
                w => panic!("{rel}: {w:?}"),
            }
            assert_int_blocks(rel, &r);
        }
        "mutated/int_no_index.asdf" | "mutated/int_no_index_trailing_3_nul.asdf" => {
            let r = open(rel).unwrap();
            assert!(r.warnings().is_empty(), "{rel}: {:?}", r.warnings());
            assert_eq!(r.block_discovery(), BlockDiscovery::Scan);
            assert_int_blocks(rel, &r);
        }
        "mutated/int_no_index_trailing_3_x01.asdf" => {
            let r = open(rel).unwrap();
            match one_warning(rel, &r) {
                Warning::TrailingBytes { bytes, offset } => {
                    assert_eq!(bytes, vec![1, 1, 1]);
                    assert_eq!(offset, r.file_len() - 3);
                }
                w => panic!("{w:?}"),
            }
            assert_int_blocks(rel, &r);
        }
        "mutated/int_pad_before_first_block_nul7.asdf" | "mutated/int_pad_before_first_block_d3BL_x4.asdf" => {
            let r = open(rel).unwrap();
            assert!(r.warnings().is_empty(), "{rel}: {:?}", r.warnings());
            assert!(matches!(r.block_discovery(), BlockDiscovery::Index { .. }));
            assert_int_blocks(rel, &r);
        }
        "mutated/int_pad_full_magic_before_first_block.asdf" => {
            // A full magic in the padding is a block start: its garbage header must not go
            // unnoticed (Python fails when the arrays are read).
            match open(rel) {
                Err(_) => {}
                Ok(r) => {
                    assert!(!r.warnings().is_empty());
                    assert!(r.read_data(0).is_err(), "the garbage block must not decode");
                    assert_ne!(r.block_count(), 12);
                }
            }
        }
        "mutated/int_index_last_plus8.asdf" => {
            // Divergent in Python; decided here as the standard recommends: the last entry
            // is checked too, and a bad one discards the whole index.
            let r = open(rel).unwrap();
            match one_warning(rel, &r) {
                Warning::IndexInvalid { entry: 11, .. } => {}
                w => panic!("{w:?}"),
            }
            assert_int_blocks(rel, &r);
        }
        "mutated/basic_bad_checksum.asdf" => {
            let r = open(rel).unwrap();
            assert_eq!(le_i64(&r.read_data(0).unwrap()), (0..8).collect::<Vec<_>>());
            assert!(matches!(r.verify_checksum(0), Err(Error::Checksum { block: 0, .. })));
            let strict = open_with(rel, ReadOptions::default().verify_checksums(true)).unwrap();
            assert!(matches!(strict.read_data(0), Err(Error::Checksum { .. })));
            let mut buf = vec![0u8; 64];
            assert!(matches!(
                strict.read_data_into(0, &mut buf),
                Err(Error::Checksum { .. })
            ));
        }
        "mutated/basic_zero_checksum.asdf" => {
            let r = open_with(rel, ReadOptions::default().verify_checksums(true)).unwrap();
            assert_eq!(r.verify_checksum(0).unwrap(), ChecksumStatus::Absent);
            assert_eq!(le_i64(&r.read_data(0).unwrap()), (0..8).collect::<Vec<_>>());
        }
        "mutated/basic_header_size_64.asdf" => {
            let r = open(rel).unwrap();
            assert!(r.warnings().is_empty());
            let b = r.block(0).unwrap();
            assert_eq!(b.header.header_size, 64);
            assert_eq!(b.data_offset, b.offset + 70);
            assert_eq!(le_i64(&r.read_data(0).unwrap()), (0..8).collect::<Vec<_>>());
            assert_eq!(r.verify_checksum(0).unwrap(), ChecksumStatus::StoredBytes);
        }
        "mutated/compressed_unknown_label.asdf" => {
            let r = open(rel).unwrap();
            assert!(r.warnings().is_empty());
            assert_eq!(r.block_count(), 2);
            match r.read_data(0) {
                Err(Error::Unsupported {
                    kind: Unsupported::Compression(l, supported),
                    ..
                }) => {
                    assert_eq!(&l.0, b"xxxx");
                    assert!(supported.contains(&asdf_layout::Label::ZLIB));
                    let msg = r.read_data(0).unwrap_err().to_string();
                    assert!(msg.contains("supported compression types are"), "{msg}");
                }
                other => panic!("{other:?}"),
            }
            assert_eq!(le_i64(&r.read_data(1).unwrap()), (0..128).collect::<Vec<_>>());
        }
        "mutated/stream_empty.asdf" => {
            let r = open(rel).unwrap();
            assert_eq!(r.block_count(), 1);
            let b = r.block(0).unwrap();
            assert!(b.header.is_streamed());
            assert_eq!(b.data_len(), 0);
        }
        "mutated/stream_partial_row.asdf" => {
            let r = open(rel).unwrap();
            let b = r.block(0).unwrap();
            assert!(b.header.is_streamed());
            // 8 rows of 8 float64 plus 3 stray bytes; the row count is the facade's job.
            assert_eq!(b.data_len(), 8 * 64 + 3);
        }
        "mutated/stream_two_views.asdf" => {
            let r = open(rel).unwrap();
            assert_eq!(r.block_count(), 1);
            assert_eq!(r.block(0).unwrap().data_len(), 512);
        }
        "mutated/ndarray2_index_points_to_fake_magic.asdf" => {
            let r = open(rel).unwrap();
            match one_warning(rel, &r) {
                Warning::IndexInvalid { entry: 0, .. } => {}
                w => panic!("{w:?}"),
            }
            assert_eq!(r.block_count(), 2);
            assert_eq!(le_i64(&r.read_data(0).unwrap()), vec![10, 11]);
            assert_eq!(le_i64(&r.read_data(1).unwrap()), vec![1, 2, 3]);
        }
        _ => return false,
    }
    true
}

#[test]
fn expectations_json_layout_cases() {
    asdf_testdata::needs_conformance!();
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data_dir().join("EXPECTATIONS.json")).unwrap()).unwrap();
    let cases = j["cases"].as_array().unwrap();
    assert!(cases.len() >= 100, "{} cases", cases.len());
    let (mut layout, mut other) = (0, 0);
    let mut seen = BTreeSet::new();
    let mut checked = BTreeSet::new();
    for c in cases {
        let rel = c["file"].as_str().unwrap();
        seen.insert(rel.to_owned());
        if check_layout_case(rel) {
            checked.insert(rel.to_owned());
            layout += 1;
        } else {
            // Not a layout case: the file must open cleanly at this level.
            let r = open(rel).unwrap_or_else(|e| panic!("{rel}: {e}"));
            assert!(r.warnings().is_empty(), "{rel}: {:?}", r.warnings());
            assert!(r.tree_bytes().is_some(), "{rel}");
            for i in 0..r.block_count() {
                r.read_data(i).unwrap_or_else(|e| panic!("{rel} block {i}: {e}"));
            }
            other += 1;
        }
    }
    println!("EXPECTATIONS.json: {layout} layout cases checked, {other} other cases open cleanly");
    let listed: BTreeSet<String> = LAYOUT_CASES.iter().map(|s| (*s).to_owned()).collect();
    assert_eq!(
        checked, listed,
        "every layout case listed here is in EXPECTATIONS.json and ran"
    );
    assert!(seen.len() == cases.len(), "duplicate case files");
}

#[test]
fn upstream_files_with_legacy_or_wrong_checksums() {
    asdf_testdata::needs_conformance!();
    // block0/block1: written by asdf 1.2.2 and hand-edited; stored MD5 does not match.
    for f in ["upstream/block0.asdf", "upstream/block1.asdf"] {
        let r = open(f).unwrap();
        assert_eq!(r.block_count(), 1);
        let b = r.block(0).unwrap();
        assert_eq!(b.data_len(), 80_000);
        assert_eq!(r.read_data(0).unwrap().len(), 80_000);
        assert!(matches!(r.verify_checksum(0), Err(Error::Checksum { .. })), "{f}");
    }
    // ndarray2: lz4 and bzp2 blocks with 8192-byte allocations, MD5 of the decoded data.
    let r = open("upstream/ndarray2.asdf").unwrap();
    assert!(r.warnings().is_empty());
    assert_eq!(r.block_offsets()[0], 8192);
    for i in 0..2 {
        let b = r.block(i).unwrap();
        assert_eq!(b.header.allocated_size, 8192);
        assert_eq!(r.verify_checksum(i).unwrap(), ChecksumStatus::DecodedBytes);
    }
    assert_eq!(le_i64(&r.read_data(0).unwrap()), vec![10, 11]);
    assert_eq!(le_i64(&r.read_data(1).unwrap()), vec![1, 2, 3]);
}
