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
    if let Ok(hdus) = asdf::fits::read_hdus(data, data.len() as u64, asdf::fits::FitsLimits::default()) {
        let _ = asdf::fits::asdf_range(&hdus);
        let _ = asdf::fits::resolve_source(&hdus, "SCI,1");
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
            // Compared as written out: a NaN scalar is not `==` to itself.
            assert!(
                format!("{:?}", skimmed.root) == format!("{v:?}") && skimmed.tag_directives == doc.tag_directives,
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
    // The codecs files are opened with: today's and the ASDF 0.1.0 draft's encoding chains.
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
        let Ok(f) = asdf::Open::bytes(data.to_vec()).options(opts).open() else {
            continue;
        };
        let _ = f.validate(None, None);
        read_arrays(&f);
        let _ = f
            .write(asdf::Target::Bytes, &asdf::WriteOptions::default().validate(false))
            .map(asdf::Written::into_bytes);
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
    f.get_mut("")
        .expect("the root")
        .as_mapping_mut()
        .expect("root mapping")
        .insert("note", asdf::Node::str(text));
    let bytes: Vec<u8> = (0..64u8).collect();
    let dt = asdf::Datatype::Scalar(asdf::ScalarType::UInt8);
    f.put_array(
        "/a",
        asdf::NewArray::from_bytes(dt, &[64], asdf::ByteOrder::Little, bytes.clone()),
    )
    .expect("add array");
    let opts = asdf::WriteOptions::default().pad_blocks(true).durable(false);
    f.write(&path, &opts).expect("write");
    let mut g = asdf::open(&path).expect("reads back what it wrote");
    let edited: String = text.chars().rev().collect();
    g.get_mut("")
        .expect("the root")
        .as_mapping_mut()
        .expect("root mapping")
        .insert("note", asdf::Node::str(edited.clone()));
    g.update(&opts).expect("update");
    let h = asdf::open(&path).expect("reads back the update");
    assert_eq!(h.get("/note").expect("note").as_str(), Some(edited.as_str()));
    assert_eq!(h.array("/a").and_then(|a| a.read::<Vec<u8>>()).expect("array"), bytes);
}

/// ASDF in FITS: the input as a FITS file (a primary header is put in front when it has
/// none): its HDUs located, every source name resolved, the file opened through the facade
/// (every array read) and written back as FITS.
pub fn fits(data: &[u8]) {
    let bytes = if asdf::fits::is_fits(data) {
        data.to_vec()
    } else {
        let mut v = Vec::with_capacity(2880 + data.len());
        for card in [
            "SIMPLE  =                    T",
            "BITPIX  =                    8",
            "NAXIS   =                    0",
            "END",
        ] {
            let mut c = card.as_bytes().to_vec();
            c.resize(80, b' ');
            v.extend_from_slice(&c);
        }
        v.resize(2880, b' ');
        v.extend_from_slice(data);
        v
    };
    if let Ok(hdus) = asdf::fits::read_hdus(bytes.as_slice(), bytes.len() as u64, asdf::fits::FitsLimits::default()) {
        let _ = asdf::fits::asdf_range(&hdus);
        for h in hdus.iter().take(16) {
            let name = format!("{},{}", h.name.as_deref().unwrap_or(""), h.ver);
            let _ = asdf::fits::resolve_source(&hdus, &name);
            let _ = h.sign_flips();
        }
    }
    let Ok(f) = asdf::Open::bytes(bytes)
        .options(asdf::OpenOptions::default().validate(false))
        .open()
    else {
        return;
    };
    read_arrays(&f);
    let _ = f
        .write(
            asdf::Target::Bytes,
            &asdf::WriteOptions::default().fits(asdf::FitsWriteOptions::default()),
        )
        .map(asdf::Written::into_bytes);
}

/// Every ndarray of `f` (at most 64): view, first element, small arrays whole (materialised
/// only when small), streamed reads.
fn read_arrays(f: &asdf::AsdfFile) {
    let mut arrays = Vec::new();
    ndarrays(f.tree(), "", &mut arrays);
    for p in &arrays {
        if let Ok(v) = f.array(p).and_then(|a| a.view().cloned()) {
            if v.count() <= 1 << 16 {
                let _ = f.array(p).and_then(|a| a.values());
                let _ = f.array(p).and_then(|a| a.read::<Vec<f64>>());
            }
            let _ = f.array(p).and_then(|a| a.element(&vec![0; v.shape.len()]));
        }
        let _ = f.array(p).and_then(|a| a.for_each_chunk::<f64>(|_| {}));
        let _ = f.array(p).and_then(|a| a.for_each_chunk::<u8>(|_| {}));
    }
}

/// The drafts before 1.0.0: the first byte picks `#ASDF 0.1.0` or `%FINF 0.1.0`, the rest
/// follows it (tree, block headers of every draft layout, encoding chains). Opened, every
/// array read, every block verified, and written back as its draft.
pub fn drafts(data: &[u8]) {
    let [pick, rest @ ..] = data else { return };
    let (head, dialect): (&[u8], _) = if pick & 1 == 0 {
        (b"#ASDF 0.1.0\n", asdf_layout::Dialect::Asdf010)
    } else {
        (b"%FINF 0.1.0\n", asdf_layout::Dialect::Finf)
    };
    let mut bytes = head.to_vec();
    bytes.extend_from_slice(rest);
    let Ok(f) = asdf::Open::bytes(bytes)
        .options(asdf::OpenOptions::default().validate(false))
        .open()
    else {
        return;
    };
    read_arrays(&f);
    let r = f.source().layout();
    for i in 0..r.block_count().min(16) {
        let _ = r.check_block(i);
        let _ = r.read_range(i, 0..1);
    }
    let mut out = Vec::new();
    if f.write(
        asdf::Target::Writer(&mut out),
        &asdf::WriteOptions::default().form(asdf::Form::Draft { dialect, chain: None }),
    )
    .is_ok()
    {
        let _ = asdf::Open::bytes(out)
            .options(asdf::OpenOptions::default().validate(false))
            .open();
    }
}

/// Blosc2 frames, b2nd ones included: decoded at the frame's own size and at its array's
/// (C order) size when those are under 4 MiB; whole, in pieces and by ranges must agree.
pub fn frames(data: &[u8]) {
    let registry = asdf_layout::compression::Registry::shared_default();
    let Some(codec) = registry.get(Label::BLS2) else { return };
    let nbytes = data
        .get(30..39)
        .filter(|b| b[0] == 0xd3)
        .map(|b| b[1..].iter().fold(0u64, |a, x| (a << 8) | u64::from(*x)));
    let sizes = [
        nbytes.and_then(|n| usize::try_from(n).ok()),
        asdf_layout::compression::b2nd_array_bytes(data),
    ];
    for expected in sizes.into_iter().flatten().filter(|&n| n <= 4 << 20) {
        let mut whole = vec![0u8; expected];
        let whole_ok = codec.decode(data, &mut whole).is_ok();
        let mut pieces = Vec::new();
        let pieces_ok = codec
            .decode_pieces(data, expected, &mut |p| pieces.extend_from_slice(p))
            .is_ok();
        assert_eq!(whole_ok, pieces_ok, "whole {whole_ok}, pieces {pieces_ok}");
        if whole_ok {
            assert!(whole == pieces, "whole and piecewise decoding differ");
            for r in [
                0..expected.min(7),
                expected / 3..expected / 2,
                expected.saturating_sub(9)..expected,
            ] {
                let part = codec
                    .decode_range(data, expected, r.clone())
                    .expect("decodes whole but not a range");
                assert!(part == whole[r.clone()], "range {r:?} differs from the whole");
            }
        }
    }
    let _ = asdf_layout::compression::frame_metalayers(data);
}

/// A source whose answers the input scripts: the first 64 bytes say, read by read, whether
/// the answer is whole, short, an error, or bytes that changed (another writer); the rest is
/// the file. Opened through the facade from a `Read + Seek` and from the layout reader,
/// every array and block read: errors, never a panic or a hang.
pub fn remote(data: &[u8]) {
    if data.len() < 64 {
        return;
    }
    let (script, file) = data.split_at(64);
    let src = Scripted {
        script: script.to_vec(),
        file: file.to_vec(),
        calls: std::sync::atomic::AtomicUsize::new(0),
        pos: 0,
    };
    if let Ok(f) = asdf::Open::reader(src)
        .options(asdf::OpenOptions::default().validate(false))
        .open()
    {
        read_arrays(&f);
    }
    let src = Scripted {
        script: script.to_vec(),
        file: file.to_vec(),
        calls: std::sync::atomic::AtomicUsize::new(0),
        pos: 0,
    };
    if let Ok(r) = asdf_layout::Reader::open(src) {
        for i in 0..r.block_count().min(16) {
            let _ = r.read_data(i);
            let _ = r.check_block(i);
            let _ = r.read_range(i, 0..1);
        }
    }
}

/// See [`remote`].
struct Scripted {
    script: Vec<u8>,
    file: Vec<u8>,
    calls: std::sync::atomic::AtomicUsize,
    pos: u64,
}

impl Scripted {
    fn answer(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        let k = self.calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let act = self.script[k % self.script.len()];
        let at = usize::try_from(offset).unwrap_or(usize::MAX).min(self.file.len());
        let mut n = buf.len().min(self.file.len() - at);
        match act {
            0..=199 => {}
            200..=219 => n = n.min(usize::from(act - 199)),
            220..=239 => return Err(std::io::Error::other("scripted failure")),
            _ => {
                buf[..n].copy_from_slice(&self.file[at..at + n]);
                for b in buf[..n].iter_mut().step_by(usize::from(act - 239)) {
                    *b ^= 0x5a;
                }
                return Ok(n);
            }
        }
        buf[..n].copy_from_slice(&self.file[at..at + n]);
        Ok(n)
    }
}

impl asdf_layout::ReadAt for Scripted {
    fn size(&self) -> std::io::Result<u64> {
        Ok(self.file.len() as u64)
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        self.answer(offset, buf)
    }
}

impl std::io::Read for Scripted {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.answer(self.pos, buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl std::io::Seek for Scripted {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        let len = self.file.len() as i128;
        let new = match to {
            std::io::SeekFrom::Start(s) => i128::from(s),
            std::io::SeekFrom::End(e) => len + i128::from(e),
            std::io::SeekFrom::Current(c) => i128::from(self.pos) + i128::from(c),
        };
        self.pos = u64::try_from(new).map_err(|_| std::io::Error::other("seek before the start"))?;
        Ok(self.pos)
    }
}

/// The region syntax (`get --slice`, `preview --slice`, Python's slicing): the first byte
/// picks a shape (0 to 4 axes, lengths 0 to 40, or one huge axis), the rest is the text.
/// Parsing and resolving never panic; a resolved selection stays inside the array, counts
/// what it takes, and gathers exactly that many elements from its bounding box.
pub fn regions(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let ndim = usize::from(pick % 5);
    let shape: Vec<usize> = (0..ndim)
        .map(|d| match (pick >> 3).wrapping_add(u8::try_from(d).unwrap_or(0)) % 7 {
            0 => 0,
            1 => 1,
            // An axis near the largest a view can describe.
            2 if d == 0 => usize::MAX >> 2,
            k => usize::from(k) * 5 + d,
        })
        .collect();
    let text = String::from_utf8_lossy(rest);
    let Ok(region) = text.parse::<asdf_core_types::region::Region>() else {
        return;
    };
    let Ok(sel) = region.resolve(&shape) else {
        return;
    };
    assert_eq!(sel.spans.len(), shape.len(), "{text:?}");
    let mut count: u128 = 1;
    for (s, &len) in sel.spans.iter().zip(&shape) {
        assert!(s.count <= len, "{text:?}: {s:?} over an axis of {len}");
        if s.count > 0 {
            assert!(
                s.index(0) < len && s.index(s.count - 1) < len,
                "{text:?}: {s:?} outside {len}"
            );
        }
        count = count.saturating_mul(s.count as u128);
    }
    // Gathered from the bounding box when it is small enough to hold.
    let (lo, extent) = sel.bounding_box();
    let boxed: u128 = extent.iter().map(|&e| e as u128).product();
    if boxed <= 1 << 16 {
        let data: Vec<u32> = (0..u32::try_from(boxed).unwrap_or(0)).collect();
        let got = sel.gather_in(&lo, &extent, &data);
        assert_eq!(got.len() as u128, count, "{text:?}");
        let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
        let got_bytes = sel.gather_bytes_in(&lo, &extent, &bytes, 4);
        let want: Vec<u8> = got.iter().flat_map(|x| x.to_le_bytes()).collect();
        assert_eq!(got_bytes, want, "{text:?}");
    }
}

/// An ASDF block (header of 48 bytes, no compression, no checksum) holding `data`.
fn raw_block(data: &[u8]) -> Vec<u8> {
    let len = data.len() as u64;
    let mut b = b"\xd3BLK".to_vec();
    b.extend_from_slice(&48u16.to_be_bytes());
    b.extend_from_slice(&[0; 8]);
    for _ in 0..3 {
        b.extend_from_slice(&len.to_be_bytes());
    }
    b.extend_from_slice(&[0; 16]);
    b.extend_from_slice(data);
    b
}

/// A chunked array (asdf-zarr's internal layout) from arbitrary bytes: the Zarr metadata
/// (text up to the first NUL, placed as the `.zarray` of a zarr-tagged node), then pieces
/// split at `0xFF 0xFE`: the chunk map's block, then the chunks' blocks. The file is opened
/// from memory and the array read whole, by regions and by its chunk map; a chunk is decoded
/// alone (`decode_zarr_chunk`). Nothing panics, and nothing is allocated beyond the limits
/// (a decoded block of at most 64 MiB here).
pub fn chunked(data: &[u8]) {
    let (meta, rest) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let meta = String::from_utf8_lossy(meta);
    let mut pieces: Vec<&[u8]> = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i + 1 < rest.len() {
        if rest[i] == 0xFF && rest[i + 1] == 0xFE {
            pieces.push(&rest[start..i]);
            start = i + 2;
            i += 2;
        } else {
            i += 1;
        }
    }
    pieces.push(&rest[start.min(rest.len())..]);
    let _ = asdf::ChunkLayout::from_json(serde_json::from_str(&meta).unwrap_or_default());
    for (k, p) in pieces.iter().enumerate().skip(1).take(4) {
        let index = [k as u64 - 1, 0, 0];
        for n in 1..=3 {
            let _ = asdf::decode_zarr_chunk(&meta, &index[..n], Some(p.to_vec()));
        }
        let _ = asdf::decode_zarr_chunk(&meta, &index[..1], None);
    }
    let mut file = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\nz: !<asdf://asdf-format.org/zarr/tags/zarr-1.0.0>\n  chunk_block_map: 0\n  .zarray: ".to_vec();
    // The metadata as one flow node (JSON is YAML's flow style) on its line.
    file.extend(meta.replace(['\n', '\r'], " ").into_bytes());
    file.extend_from_slice(b"\n...\n");
    for p in &pieces {
        file.extend(raw_block(p));
    }
    let mut options = asdf::OpenOptions::default().validate(false);
    options.layout_limits.max_block_bytes = 64 << 20;
    let Ok(f) = asdf::Open::bytes(file).options(options).open() else {
        return;
    };
    let _ = f.array("/z").map(|a| a.chunk_map());
    let Ok(a) = f.array("/z") else {
        return;
    };
    let _ = a.values();
    for r in ["", "0", "::-1", "1:3, ::2", "..., -1"] {
        if let Ok(region) = r.parse::<asdf::Region>() {
            let _ = a.read_region::<asdf::RegionBytes>(&region);
        }
    }
}

/// Seeds of the `regions` target: a shape byte, then region texts a user writes, extremes
/// included.
#[must_use]
pub fn region_seeds() -> Vec<String> {
    [
        "\u{1}1:5, ::2, -1",
        "\u{2}...",
        "\u{3}0:10:9223372036854775807",
        "\u{4}::-9223372036854775808",
        "\u{c}0:99999999999999999999, -1_000:+3",
        "\u{11}..., 1, ::-3",
        "\u{1b}5:-5:-2, 0",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect()
}

/// Seeds of the `chunked` target: a 2-D float64 array of 2x2 chunks (one missing) with each
/// compressor asdf-zarr writes, a complex one with a null fill value, and an F-ordered one.
#[must_use]
pub fn chunked_seeds() -> Vec<Vec<u8>> {
    let map = |m: &[i32]| m.iter().flat_map(|b| b.to_le_bytes()).collect::<Vec<u8>>();
    let chunk: Vec<u8> = (0..4).flat_map(|i| f64::from(i).to_le_bytes()).collect();
    let mut out = Vec::new();
    for (dtype, fill, compressor, order) in [
        ("<f8", "0", "null", "C"),
        ("<f8", "NaN", "{\"id\": \"zlib\", \"level\": 1}", "F"),
        ("<c16", "null", "null", "C"),
        (">i4", "7", "{\"id\": \"zstd\", \"level\": 3}", "C"),
    ] {
        let meta = format!(
            "{{\"zarr_format\": 2, \"shape\": [3, 4], \"chunks\": [2, 2], \"dtype\": \"{dtype}\", \"compressor\": {compressor}, \"fill_value\": {fill}, \"order\": \"{order}\", \"filters\": null}}"
        );
        let mut seed = meta.into_bytes();
        seed.push(0);
        seed.extend(map(&[1, 2, -1, 1]));
        seed.extend_from_slice(&[0xFF, 0xFE]);
        seed.extend_from_slice(&chunk);
        seed.extend_from_slice(&[0xFF, 0xFE]);
        seed.extend(chunk.iter().rev());
        out.push(seed);
    }
    out
}
