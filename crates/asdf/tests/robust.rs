//! No panic on any input: every conformance file, and thousands of byte-mutated copies of them,
//! go through open, every array access path (decode, one element, typed copy, iterator, view,
//! slice), the typed values of every tagged node, and an update in place; each call returns
//! `Ok` or `Err`, never panics.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::cast_possible_truncation
)]

use crate::common;

use asdf::{AsdfFile, Node, NodeKind, OpenOptions, WriteOptions};
use asdf_core_types::typed::Typed;

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Every typed reader on every tagged node (results ignored: only panics matter).
fn typed_values(root: &Node) {
    use asdf_core_types::astro::{AstroColumn, AstroTable, Column, Fits, Integer, Quantity, Table, Time};
    use asdf_core_types::typed::{
        Constant, Defunit, ExtensionMetadata, ExternalArray, HistoryEntry, Software, SubclassMetadata, Unit,
    };
    fn all<T: Typed>(n: &Node) {
        if let Ok(t) = T::from_node(n) {
            let _ = T::from_node(&t.to_node(n.tag.as_deref().unwrap_or_default()));
        }
    }
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if n.tag.is_some() {
            all::<Software>(n);
            all::<HistoryEntry>(n);
            all::<ExtensionMetadata>(n);
            all::<ExternalArray>(n);
            all::<Constant>(n);
            all::<SubclassMetadata>(n);
            all::<Unit>(n);
            all::<Defunit>(n);
            all::<asdf::NdArray>(n);
            all::<asdf::Complex>(n);
            all::<Integer>(n);
            all::<Table>(n);
            all::<Column>(n);
            all::<AstroTable>(n);
            all::<AstroColumn>(n);
            all::<Quantity>(n);
            all::<Time>(n);
            all::<Fits>(n);
        }
        match &n.kind {
            NodeKind::Mapping(m) => stack.extend(m.entries.iter().map(|(_, v)| v)),
            NodeKind::Sequence(s) => stack.extend(s.items.iter()),
            _ => {}
        }
    }
}

/// Every access path on every array of `f`.
fn exercise(f: &AsdfFile) {
    for a in common::ndarray_pointers(f, true) {
        let full = f.array(&a).and_then(|a| a.values());
        let _ = f.array(&a).and_then(|a| a.view().cloned());
        let _ = f.array(&a).and_then(|a| a.read::<Vec<f64>>());
        let _ = f.array(&a).and_then(|a| a.read::<Vec<i32>>());
        let _ = f.array(&a).and_then(|a| a.read::<std::borrow::Cow<'_, [f64]>>());
        let _ = f.array(&a).and_then(|a| {
            let mut sum = 0u64;
            a.for_each_chunk::<u8>(|c| sum += c.iter().map(|&x| u64::from(x)).sum::<u64>())
        });
        let _ = f.array(&a).and_then(|a| a.read::<asdf::RegionBytes>());
        let shape = full.as_ref().map(|x| x.shape.clone()).unwrap_or_else(|_| vec![0]);
        let _ = f.array(&a).and_then(|a| a.element(&vec![0; shape.len()]));
        let _ = f
            .array(&a)
            .and_then(|a| a.element(&shape.iter().map(|d| d.saturating_sub(1)).collect::<Vec<_>>()));
        let _ = f.array(&a).and_then(|a| a.element(&[usize::MAX]));
    }
    typed_values(f.tree());
}

#[test]
fn mutated_files_never_panic() {
    asdf_testdata::needs_conformance!();
    let c = asdf_testdata::conformance_dir();
    let mut files = asdf_testdata::files_with_ext(&c.join("python-asdf-samples"), "asdf");
    files.extend(asdf_testdata::files_with_ext(
        &c.join("asdf-standard/reference_files"),
        "asdf",
    ));
    files.extend(asdf_testdata::files_with_ext(&c.join("asdf-pytests-data"), "asdf"));
    let dir = std::env::temp_dir().join(format!("asdf-rs-robust-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut rng = Rng(0x00C0_FFEE_1234_5678);
    let (mut opened, mut tried, mut updated) = (0, 0, 0);
    let opts = OpenOptions::default().validate(false);
    for p in &files {
        let original = std::fs::read(p).unwrap();
        if original.len() > 4 << 20 {
            continue;
        }
        for round in 0..40 {
            let mut bytes = original.clone();
            if round > 0 {
                // A few bytes changed: in the tree (text) or anywhere (headers, blocks, index).
                let tree_end = bytes.windows(5).position(|w| w == b"\n...\n").unwrap_or(bytes.len());
                for _ in 0..1 + rng.below(4) {
                    let at = if rng.below(2) == 0 {
                        rng.below(tree_end)
                    } else {
                        rng.below(bytes.len())
                    };
                    if let Some(b) = bytes.get_mut(at) {
                        *b = match rng.below(4) {
                            0 => b'0' + rng.below(10) as u8,
                            1 => *b ^ (1 << rng.below(8)),
                            2 => b"-[]{}:,*&!'\" \n"[rng.below(14)],
                            _ => rng.next() as u8,
                        };
                    }
                }
            }
            tried += 1;
            let Ok(mut f) = asdf::Open::bytes(bytes.clone()).options(opts.clone()).open() else {
                continue;
            };
            opened += 1;
            exercise(&f);
            // Writing it out (blocks copied or recompressed), and reading that back.
            for c in [asdf::Compression::Keep, asdf::Compression::All(asdf::Label::ZLIB)] {
                if let Ok(out) = crate::common::bytes(&f, &WriteOptions::default().validate(false).compression(c))
                    && let Ok(g) = asdf::Open::bytes(out).options(opts.clone()).open()
                {
                    exercise(&g);
                }
            }
            let _ = f.resolve_references();
            let _ = f.validate(None, None);
            // An update of a copy on disk (in place or rewritten) must not panic either.
            if round % 4 == 1 {
                let path = dir.join("u.asdf");
                std::fs::write(&path, &bytes).unwrap();
                if let Ok(mut g) = asdf::Open::path(&path).options(opts.clone()).open() {
                    if let Some(m) = g.get_mut("").unwrap().as_mapping_mut() {
                        m.insert("x", Node::int(1));
                    }
                    if g.update(&WriteOptions::default().validate(false)).is_ok() {
                        updated += 1;
                        if let Ok(h) = asdf::Open::path(&path).options(opts.clone()).open() {
                            exercise(&h);
                        }
                    }
                }
            }
        }
    }
    println!("{tried} files tried, {opened} opened and exercised, {updated} updated");
    assert!(tried > 8000 && opened > 3000, "{tried} {opened}");
    std::fs::remove_dir_all(&dir).unwrap();
}
