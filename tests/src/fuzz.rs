//! The bodies of the fuzz targets in `fuzz/` (cargo-fuzz), kept here so that the crashes the
//! fuzzers find are replayed by the ordinary test suite (`tests/fuzz_replay.rs` over
//! `tests/fuzz-crashes/TARGET/`). Each takes arbitrary bytes and panics only on a real bug
//! (a panic inside the library, or a broken round trip the body asserts).

#![allow(clippy::expect_used, clippy::panic, clippy::missing_panics_doc)]

use asdf_layout::Label;

/// The byte layout: header, comments, tree bounds, block headers, the block index, and every
/// block read, ranged and checksummed.
pub fn layout(data: &[u8]) {
    // FITS headers too (ASDF in FITS): located, never loaded.
    if let Ok(hdus) = asdf_layout::fits::read_hdus(data, data.len() as u64, asdf_layout::fits::FitsLimits::default()) {
        let _ = asdf_layout::fits::asdf_range(&hdus);
        let _ = asdf_layout::fits::resolve_source(&hdus, "SCI,1");
    }
    let Ok(r) = asdf_layout::Reader::open(data) else { return };
    let _ = r.tree_bytes();
    for i in 0..r.block_count().min(64) {
        let _ = r.block(i);
        let _ = r.read_data(i);
        let _ = r.read_range(i, 0..1);
        let _ = r.check_block(i);
        let _ = r.verify_checksum(i);
        let _ = r.read_data_pieces(i, &mut |_| {});
    }
}

/// The YAML parser and emitter: any text parses or fails cleanly; what parses emits, and what
/// it emits parses again to the same tree (emitted again to the same text).
pub fn yaml(data: &[u8]) {
    let limits = asdf_yaml::Limits::default();
    let Ok(parsed) = asdf_yaml::parse(data, &limits) else {
        return;
    };
    skim_agrees(data, &parsed.document);
    // Duplicate keys are invalid YAML, read as PyYAML reads them (the last value in the first
    // key's place, with a warning; aliases into the dropped value keep its value): such
    // documents round-trip like any other.
    let Ok(text) = asdf_yaml::emit(&parsed.document, &asdf_yaml::EmitOptions::default()) else {
        return;
    };
    let again = asdf_yaml::parse(&text, &limits).expect("emitted YAML parses again");
    let (Some(a), Some(b)) = (canonical(&parsed.document), canonical(&again.document)) else {
        return;
    };
    assert!(
        a == b,
        "emit/parse round trip changed the tree:\n{}\n{a}\n---- then ----\n{b}",
        String::from_utf8_lossy(&text),
    );
}

/// Where the skim of a lazy open answers for a top-level key, it answers what the parser built
/// (position included).
pub fn skim_agrees(text: &[u8], doc: &asdf_yaml::Document) {
    let Some(m) = doc.root.as_mapping() else { return };
    for (k, v) in &m.entries {
        let Some(key) = k.as_str() else { continue };
        if let Some(skimmed) = asdf_yaml::skim::top_level_value(text, key) {
            assert!(
                skimmed.root == *v && skimmed.tag_directives == doc.tag_directives,
                "skim of /{key} differs from the parse:\n{}\n{:?}\n---- parsed ----\n{:?}",
                String::from_utf8_lossy(text),
                skimmed.root,
                v
            );
        }
    }
}

/// A tree as text that says what it is, not how it was written: tags (other than YAML's
/// own), scalar values, keys and items in order, aliases expanded (an alias back to an
/// ancestor as the number of levels up); anchor names, styles and positions left out. `None`
/// past 100,000 nodes (an alias bomb: not compared).
fn canonical(doc: &asdf_yaml::Document) -> Option<String> {
    use std::fmt::Write as _;
    enum Step<'a> {
        Node(&'a asdf_yaml::Node),
        Text(&'static str),
        Leave,
    }
    let mut out = String::new();
    let mut stack = vec![Step::Node(&doc.root)];
    let mut ancestors: Vec<*const asdf_yaml::Node> = Vec::new();
    let mut budget = 100_000u32;
    while let Some(step) = stack.pop() {
        let n = match step {
            Step::Text(t) => {
                out.push_str(t);
                continue;
            }
            Step::Leave => {
                ancestors.pop();
                continue;
            }
            Step::Node(n) => doc.resolve(n),
        };
        budget = budget.checked_sub(1)?;
        if let Some(up) = ancestors.iter().rev().position(|a| std::ptr::eq(*a, n)) {
            let _ = write!(out, "<cycle {up}>");
            continue;
        }
        // YAML's own tags (`!!str`, `!!int`, ...) say what the value already says.
        let tag = n.tag.as_deref().filter(|t| !t.starts_with("tag:yaml.org,2002:"));
        let _ = write!(out, "<{tag:?}>");
        match &n.kind {
            asdf_yaml::NodeKind::Scalar(s) => match s.value {
                // Strings by their text; other values by value (`.nan` and `.NaN` alike).
                asdf_yaml::Value::Str => {
                    let _ = write!(out, "{:?}", s.text);
                }
                ref v => {
                    let _ = write!(out, "{v:?}");
                }
            },
            asdf_yaml::NodeKind::Alias(a) => {
                let _ = write!(out, "*{:?}", a.anchor);
            }
            asdf_yaml::NodeKind::Mapping(m) => {
                ancestors.push(n);
                stack.push(Step::Leave);
                stack.push(Step::Text("}"));
                for (k, v) in m.entries.iter().rev() {
                    stack.push(Step::Text(","));
                    stack.push(Step::Node(v));
                    stack.push(Step::Text(":"));
                    stack.push(Step::Node(k));
                }
                out.push('{');
            }
            asdf_yaml::NodeKind::Sequence(q) => {
                ancestors.push(n);
                stack.push(Step::Leave);
                stack.push(Step::Text("]"));
                for v in q.items.iter().rev() {
                    stack.push(Step::Text(","));
                    stack.push(Step::Node(v));
                }
                out.push('[');
            }
        }
    }
    Some(out)
}

const LABELS: [Label; 8] = [
    Label::ENCODING_CHAIN,
    Label::ZLIB,
    Label::BZP2,
    Label::LZ4,
    Label::ZSTD,
    Label::LZ4F,
    Label::BLSC,
    Label::BLS2,
];

/// Every codec's decoder on arbitrary bytes: the first byte picks the codec, the next four the
/// decoded size (below 4 MiB), the rest is the compressed stream. Whole and piecewise decoding
/// must agree.
pub fn codecs(data: &[u8]) {
    let [pick, a, b, c, d, rest @ ..] = data else { return };
    let label = LABELS[usize::from(*pick) % LABELS.len()];
    let expected = (u32::from_le_bytes([*a, *b, *c, *d]) % (1 << 22)) as usize;
    // The codecs files are opened with: today's and seed 001's encoding chains.
    let registry = asdf::legacy::read_registry();
    let Some(codec) = registry.get(label) else { return };
    let mut whole = vec![0u8; expected];
    let whole_ok = codec.decode(rest, &mut whole).is_ok();
    let mut pieces = Vec::new();
    let pieces_ok = codec
        .decode_pieces(rest, expected, &mut |p| pieces.extend_from_slice(p))
        .is_ok();
    if whole_ok && pieces_ok {
        assert!(whole == pieces, "{label}: whole and piecewise decoding differ");
    }
    assert!(!whole_ok || pieces_ok, "{label}: decodes whole but not in pieces");
    if whole_ok {
        // A range (from the input's first bytes) decodes to the same bytes as the whole.
        let s = usize::from(*a) * expected / 256;
        let e = (s + usize::from(*b) * 64).min(expected);
        match codec.decode_range(rest, expected, s..e) {
            Ok(part) => assert!(part == whole[s..e], "{label}: range {s}..{e} differs from the whole"),
            Err(err) => panic!("{label}: decodes whole but not range {s}..{e}: {err}"),
        }
    }
}

/// A seed for [`codecs`]: the label's pick byte, the decoded size, the stored bytes.
#[must_use]
pub fn codec_seed(label: Label, data_size: u64, stored: &[u8]) -> Option<Vec<u8>> {
    let pick = u8::try_from(LABELS.iter().position(|l| *l == label)?).ok()?;
    let size = u32::try_from(data_size).ok().filter(|s| *s < 1 << 22)?;
    let mut v = vec![pick];
    v.extend_from_slice(&size.to_le_bytes());
    v.extend_from_slice(stored);
    Some(v)
}

fn ndarrays(n: &asdf::Node, at: &str, out: &mut Vec<String>) {
    // An explicit stack: a deep tree must not overflow this walk either.
    let mut stack = vec![(n, at.to_owned())];
    while let Some((n, at)) = stack.pop() {
        if out.len() > 64 {
            return;
        }
        if n.tag.as_deref().is_some_and(asdf::is_ndarray_tag) {
            out.push(at.clone());
        }
        match &n.kind {
            asdf::NodeKind::Mapping(m) => {
                for (k, v) in &m.entries {
                    let key = k.as_str().map(asdf::escape_pointer_token).unwrap_or_default();
                    stack.push((v, format!("{at}/{key}")));
                }
            }
            asdf::NodeKind::Sequence(s) => {
                for (i, v) in s.items.iter().enumerate() {
                    stack.push((v, format!("{at}/{i}")));
                }
            }
            _ => {}
        }
    }
}

/// A whole file through the facade: opened (with and without validation), validated, every
/// ndarray's view, one element and streamed reads, and a write back to bytes.
pub fn open_arrays(data: &[u8]) {
    for validate in [true, false] {
        let opts = asdf::OpenOptions::default().validate(validate);
        let Ok(f) = asdf::open_bytes(data.to_vec(), opts) else {
            continue;
        };
        let _ = f.validate();
        let mut arrays = Vec::new();
        ndarrays(f.tree(), "", &mut arrays);
        for p in &arrays {
            if let Ok(v) = f.view(p) {
                // Materialise only what is small; stream the rest.
                if v.count() <= 1 << 16 {
                    let _ = f.array_values(p);
                }
                let _ = f.element(p, &vec![0; v.shape.len()]);
            }
            let _ = f.array_for_each::<f64>(p, |_| {});
            let _ = f.array_chunks::<u8>(p, |_| {});
        }
        let _ = f.to_bytes(&asdf::WriteOptions::default().validate(false));
    }
}

/// Update in place and read back: a file whose tree holds the input as a string and one
/// array, updated with an edit of that string, reads back with the edit and the same array.
pub fn update(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let dir = std::env::temp_dir().join(format!("asdf-fuzz-update-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("f.asdf");
    let mut f = asdf::AsdfFile::new(asdf::Version::STANDARD_LATEST).expect("new file");
    f.tree_mut()
        .as_mapping_mut()
        .expect("root mapping")
        .insert("note", asdf::Node::str(text));
    let bytes: Vec<u8> = (0..64u8).collect();
    let dt = asdf::Datatype::Scalar(asdf::ScalarType::UInt8);
    f.add_array("/a", dt, &[64], asdf::ByteOrder::Little, bytes.clone())
        .expect("add array");
    let opts = asdf::WriteOptions::default().pad_blocks(true).durable(false);
    f.write_to(&path, &opts).expect("write");
    let mut g = asdf::open(&path).expect("reads back what it wrote");
    let edited: String = text.chars().rev().collect();
    g.tree_mut()
        .as_mapping_mut()
        .expect("root mapping")
        .insert("note", asdf::Node::str(edited.clone()));
    g.update(&opts).expect("update");
    let h = asdf::open(&path).expect("reads back the update");
    assert_eq!(h.get("/note").expect("note").as_str(), Some(edited.as_str()));
    assert_eq!(h.array_as::<u8>("/a").expect("array"), bytes);
}
