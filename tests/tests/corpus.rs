//! Every `.asdf` file under `shared/conformance`: blocks enumerated and decoded, every non-zero
//! checksum verified (saying which convention matched); every file read the same through each
//! source kind; and a truncation sweep that must never panic.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;

use asdf_conformance::{conformance_dir, files_with_ext};
use asdf_layout::{ChecksumStatus, Error, MmapSource, ReadAt, Reader, Unsupported};

fn rel(p: &Path) -> String {
    p.strip_prefix(conformance_dir())
        .unwrap()
        .to_string_lossy()
        .replace('\\', "/")
}

/// Files whose layout is broken on purpose: opening them must fail.
const OPEN_FAILS: &[&str] = &[
    "asdf-pytests-data/inline/ff_block_header_size_40.asdf",
    "asdf-pytests-data/inline/ff_block_header_truncated.asdf",
    "asdf-pytests-data/inline/ff_fits_magic.asdf",
    "asdf-pytests-data/inline/ff_fits_magic_newline.asdf",
    "asdf-pytests-data/inline/ff_junk_after_header.asdf",
    "asdf-pytests-data/inline/ff_no_asdf_header.asdf",
    "asdf-pytests-data/inline/ff_no_yaml_end_marker.asdf",
    "asdf-pytests-data/inline/ff_unparsable_version.asdf",
];

/// Blocks whose stored checksum is wrong on purpose.
const BAD_CHECKSUMS: &[&str] = &[
    "asdf-pytests-data/mutated/basic_bad_checksum.asdf",
    "asdf-pytests-data/upstream/block0.asdf",
    "asdf-pytests-data/upstream/block1.asdf",
];

/// Blocks whose compression label is not one this build decodes (at the layout level, which
/// has no YAML parser for the ASDF 0.1.0 draft's encoding chains: the `asdf` crate decodes those).
fn undecodable(rel: &str, label: asdf_layout::Label) -> bool {
    (rel == "asdf-pytests-data/mutated/compressed_unknown_label.asdf" && &label.0 == b"xxxx")
        || (rel.starts_with("legacy/") && label == asdf_layout::Label::ENCODING_CHAIN)
}

#[test]
fn every_conformance_file_blocks_and_checksums() {
    asdf_testdata::needs_conformance!();
    let files = files_with_ext(&conformance_dir(), "asdf");
    assert!(files.len() >= 250, "only {} .asdf files found", files.len());
    let mut tally: BTreeMap<String, usize> = BTreeMap::new();
    let mut blocks_total = 0;
    for p in &files {
        let name = rel(p);
        let r = Reader::open(std::fs::read(p).unwrap());
        if name.starts_with("legacy/") {
            // Layouts before 1.0.0 (`#ASDF 0.1.0`): read in their own dialect.
            let dialect = r.as_ref().map(|r| r.file_header().dialect);
            assert_eq!(dialect.ok(), Some(asdf_layout::Dialect::Asdf010), "{name}");
            *tally.entry("legacy files (0.1.0 layouts)".into()).or_default() += 1;
        }
        if OPEN_FAILS.contains(&name.as_str()) {
            assert!(r.is_err(), "{name} must not open");
            *tally.entry("files rejected at open (on purpose)".into()).or_default() += 1;
            continue;
        }
        let r = r.unwrap_or_else(|e| panic!("{name}: {e}"));
        *tally.entry("files opened".into()).or_default() += 1;
        for i in 0..r.block_count() {
            blocks_total += 1;
            let b = r.block(i).unwrap();
            match r.read_data(i) {
                Ok(d) => assert_eq!(d.len() as u64, b.data_len(), "{name} block {i}"),
                Err(Error::Unsupported {
                    kind: Unsupported::Compression(l, _),
                    ..
                }) if undecodable(&name, l) => {
                    *tally
                        .entry(format!("blocks not decodable in this build ({l})"))
                        .or_default() += 1;
                }
                Err(e) => panic!("{name} block {i}: {e}"),
            }
            match r.verify_checksum(i) {
                Ok(s) => *tally.entry(format!("checksum {s:?}")).or_default() += 1,
                Err(Error::Checksum { .. }) if BAD_CHECKSUMS.contains(&name.as_str()) => {
                    *tally.entry("checksum mismatch (on purpose)".into()).or_default() += 1;
                }
                // The commit that first wrote MD5 checksums ("Regenerate reference files with
                // checksums") stored digests of no bytes of the block we can find (not the used,
                // allocated or decoded bytes); the next commits' are right.
                Err(Error::Checksum { .. }) if name.starts_with("legacy/asdf-standard-history/2015-03-17-") => {
                    *tally
                        .entry("checksum mismatch (2015-03-17 history files)".into())
                        .or_default() += 1;
                }
                Err(Error::Unsupported {
                    kind: Unsupported::Compression(l, _),
                    ..
                }) if undecodable(&name, l) => {
                    // Legacy convention (MD5 of decoded data) on a block this build cannot decode.
                    *tally.entry("checksum unverifiable (cannot decode)".into()).or_default() += 1;
                }
                Err(e) => panic!("{name} block {i}: checksum: {e}"),
            }
        }
    }
    println!("{blocks_total} blocks in {} files", files.len());
    for (k, v) in &tally {
        println!("  {k}: {v}");
    }
    assert!(tally.get("checksum StoredBytes").copied().unwrap_or(0) > 100);
    assert!(tally.get("checksum DecodedBytes").copied().unwrap_or(0) > 10);
    assert_eq!(
        tally.get("files rejected at open (on purpose)"),
        Some(&OPEN_FAILS.len())
    );
}

fn summary<S: ReadAt>(r: &Reader<S>) -> Vec<(u64, Result<Vec<u8>, String>)> {
    (0..r.block_count())
        .map(|i| {
            let b = r.block(i).unwrap();
            (
                b.offset,
                r.read_data(i).map(|d| d.into_owned()).map_err(|e| e.to_string()),
            )
        })
        .collect()
}

#[test]
fn file_mmap_and_bytes_sources_agree() {
    asdf_testdata::needs_conformance!();
    for p in files_with_ext(&conformance_dir(), "asdf") {
        let Ok(bytes) = Reader::open(std::fs::read(&p).unwrap()) else {
            assert!(Reader::open(File::open(&p).unwrap()).is_err());
            continue;
        };
        let file = Reader::open(File::open(&p).unwrap()).unwrap();
        let mmap = Reader::open(MmapSource::open(&p).unwrap()).unwrap();
        let want = summary(&bytes);
        assert_eq!(summary(&file), want, "{}", rel(&p));
        assert_eq!(summary(&mmap), want, "{}", rel(&p));
        assert_eq!(file.tree_bytes(), bytes.tree_bytes());
        assert_eq!(file.warnings(), bytes.warnings());
    }
}

/// Where to cut a file: every prefix of a file under 64 KiB; of a larger one, every prefix
/// within 512 bytes of a place where its structure changes (its start and end, the tree's
/// end, each block's magic, the block index) and every 61st elsewhere. (Each prefix is
/// opened, so every prefix of the six large files was most of this test's time, cutting
/// mostly through block data, where the cuts all meet the same check.)
fn cut_points(all: &[u8]) -> Vec<usize> {
    if all.len() < 64 << 10 {
        return (0..=all.len()).collect();
    }
    let mut marks = vec![0, all.len()];
    for pattern in [&b"\xd3BLK"[..], b"\n...", b"#ASDF BLOCK INDEX"] {
        marks.extend(
            all.windows(pattern.len())
                .enumerate()
                .filter(|(_, w)| *w == pattern)
                .map(|(i, _)| i),
        );
    }
    let mut keep = vec![false; all.len() + 1];
    for m in marks {
        keep[m.saturating_sub(512)..=(m + 512).min(all.len())].fill(true);
    }
    (0..=all.len()).filter(|&n| keep[n] || n % 61 == 0).collect()
}

/// Every cut of every conformance file ([`cut_points`]: every prefix of the small ones) gives
/// a value or an error, never a panic.
#[test]
fn truncation_sweep() {
    asdf_testdata::needs_conformance!();
    let mut prefixes = 0u64;
    let (mut opened, mut failed) = (0u64, 0u64);
    for p in files_with_ext(&conformance_dir(), "asdf") {
        let all = std::fs::read(&p).unwrap();
        for n in cut_points(&all) {
            prefixes += 1;
            let cut = &all[..n];
            match Reader::open(cut) {
                Err(_) => failed += 1,
                Ok(r) => {
                    opened += 1;
                    for i in 0..r.block_count() {
                        let _ = r.read_data(i);
                        let _ = r.read_range(i, 0..1);
                        if n % 61 == 0 || all.len() < 8192 {
                            let _ = r.verify_checksum(i);
                        }
                    }
                }
            }
        }
    }
    println!("truncation sweep: {prefixes} prefixes, {opened} opened, {failed} rejected");
    assert!(prefixes > 500_000);
    assert!(opened > 0 && failed > 0);
}

#[test]
fn checksum_statuses_are_reported() {
    asdf_testdata::needs_conformance!();
    // The 1.6.0 compressed reference file was written by asdf 4.1 (MD5 of decoded data);
    // Python asdf 6.0's b_zlib.asdf uses MD5 of the stored bytes.
    let d = conformance_dir();
    let old = Reader::open_path(d.join("asdf-standard/reference_files/1.6.0/compressed.asdf")).unwrap();
    assert_eq!(old.verify_checksum(0).unwrap(), ChecksumStatus::DecodedBytes);
    let new = Reader::open_path(d.join("python-asdf-samples/b_zlib.asdf")).unwrap();
    assert_eq!(new.verify_checksum(0).unwrap(), ChecksumStatus::StoredBytes);
    let none = Reader::open_path(d.join("python-asdf-samples/h_noindex_nochecksum.asdf")).unwrap();
    assert_eq!(none.verify_checksum(0).unwrap(), ChecksumStatus::Absent);
}

/// Every key path of a tree (mapping keys as text, sequence items as numbers), aliases not
/// followed.
fn key_paths(tree: &[u8]) -> std::collections::BTreeSet<String> {
    let doc = asdf_yaml::parse(tree, &asdf_yaml::Limits::default()).unwrap().document;
    let mut out = std::collections::BTreeSet::new();
    let mut stack = vec![(String::new(), &doc.root)];
    while let Some((at, n)) = stack.pop() {
        match &n.kind {
            asdf_yaml::NodeKind::Mapping(m) => {
                for (k, v) in &m.entries {
                    // Keys by value (`00000000` is the integer 0, written back as `0`).
                    let key = k.as_scalar().map_or_else(String::new, |s| match &s.value {
                        asdf_yaml::Value::Int(i) => i.to_string(),
                        _ => s.text.to_string(),
                    });
                    let p = format!("{at}/{key}");
                    out.insert(p.clone());
                    stack.push((p, v));
                }
            }
            asdf_yaml::NodeKind::Sequence(s) => {
                for (i, item) in s.items.iter().enumerate() {
                    stack.push((format!("{at}/{i}"), item));
                }
            }
            _ => {}
        }
    }
    out
}

/// Defaults filled in on reading a file older than ASDF Standard 1.6.0 live in memory only:
/// rewriting such a file (as `asdf-cli defragment` does) adds no key that was not in it
/// (`asdf_library` is rewritten by every writer, as Python asdf's is).
#[test]
fn rewriting_older_files_adds_no_key() {
    asdf_testdata::needs_conformance!();
    let dir = std::env::temp_dir().join(format!("asdf-rs-older-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (mut checked, mut with_defaults) = (0usize, 0usize);
    let mut by_version: BTreeMap<String, usize> = BTreeMap::new();
    for p in files_with_ext(&conformance_dir(), "asdf") {
        let name = rel(&p);
        if name.starts_with("legacy/") {
            continue;
        }
        let Ok(r) = Reader::open(std::fs::read(&p).unwrap()) else {
            continue;
        };
        let v = r.file_header().standard_version;
        if v >= asdf_layout::Version::new(1, 6, 0) {
            continue;
        }
        let Some(before) = r.tree_bytes().map(key_paths) else {
            continue;
        };
        let Ok(file) = asdf::Open::path(&p)
            .options(asdf::OpenOptions::default().validate(false))
            .open()
        else {
            continue;
        };
        let out = dir.join("out.asdf");
        if file
            .write(&out, &asdf::WriteOptions::default().validate(false))
            .is_err()
        {
            continue;
        }
        let again = Reader::open(std::fs::read(&out).unwrap()).unwrap();
        let after = key_paths(again.tree_bytes().unwrap());
        let added: Vec<&String> = after
            .iter()
            .filter(|k| !before.contains(*k) && !k.starts_with("/asdf_library"))
            .collect();
        assert!(added.is_empty(), "{name} (standard {v}): rewriting added {added:?}");
        // The tree in memory does hold the defaults (validation and typed values see them).
        let in_memory = key_paths(&asdf::emit_yaml(file.document()).unwrap());
        if in_memory.len() > before.len() {
            with_defaults += 1;
        }
        checked += 1;
        *by_version.entry(v.to_string()).or_default() += 1;
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!(
        "rewrote {checked} files older than 1.6.0 ({by_version:?}); {with_defaults} had defaults filled in memory"
    );
    assert!(checked >= 100, "only {checked} older files rewritten");
    // Python asdf 6.0's filling (direct `properties` and inline `allOf` only) leaves most of
    // the corpus untouched; at least one file does get defaults in memory.
    assert!(with_defaults >= 1, "no file had defaults filled");
}
