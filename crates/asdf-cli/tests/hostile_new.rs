//! Hostile files for the surfaces added in the second wave (the ASDF 0.1.0 draft's encoding
//! chains, Blosc2 frames), run through `asdf-cli` as a child whose peak memory and time are
//! measured: a few hundred bytes that claim gigabytes neither abort the process nor take
//! memory by their claims (`verify` promises under 10 MiB of buffers whatever a block claims).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::cast_possible_truncation,
    clippy::cast_precision_loss
)]

use crate::support;

use std::io::Write as _;
use std::time::Duration;
use support::{put, run_measured, scratch};

const GIB: u64 = 1 << 30;

/// A `#ASDF 0.1.0` file (the draft's 36-byte block header, flag 2: encoded) whose one block
/// holds `chain_yaml` and then `body`, decoding to `memory_size` bytes.
fn draft_file(tree: &str, chain_yaml: &str, body: &[u8], memory_size: u64) -> Vec<u8> {
    let mut block = chain_yaml.as_bytes().to_vec();
    block.extend_from_slice(body);
    let mut f =
        format!("#ASDF 0.1.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/0.1.0/\n--- !core/asdf\n{tree}...\n").into_bytes();
    f.extend_from_slice(&[0xd3, b'B', b'L', b'K']);
    f.extend_from_slice(&36u16.to_be_bytes()); // header_size
    f.extend_from_slice(&2u32.to_be_bytes()); // flags: encoded
    f.extend_from_slice(&(block.len() as u64).to_be_bytes()); // allocated
    f.extend_from_slice(&(block.len() as u64).to_be_bytes()); // used
    f.extend_from_slice(&memory_size.to_be_bytes()); // memory_size
    f.extend_from_slice(&0u64.to_be_bytes()); // checksum
    f.extend_from_slice(&block);
    f
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// `n` zero bytes through zlib twice, made without holding them: zlib of a stream of zeros,
/// fed in pieces.
fn zlib_zlib_zeros(n: u64) -> Vec<u8> {
    let mut inner = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![0u8; 1 << 20];
    let mut left = n;
    while left > 0 {
        let k = left.min(zeros.len() as u64);
        inner.write_all(&zeros[..usize::try_from(k).unwrap()]).unwrap();
        left -= k;
    }
    zlib(&inner.finish().unwrap())
}

/// One quantize chunk header: bits, offset, scale, nvalues (big-endian).
fn quantize_header(bits: u8, n: u64) -> Vec<u8> {
    let mut h = vec![bits];
    h.extend_from_slice(&0f64.to_be_bytes());
    h.extend_from_slice(&1f64.to_be_bytes());
    h.extend_from_slice(&n.to_be_bytes());
    h
}

#[test]
fn chains_that_claim_gigabytes_are_decoded_in_pieces() {
    let d = scratch("chains-claims");
    // 1. [quantize, zlib, zlib]: one 1-bit chunk of 2^29 values (float64: 4 GiB), its 64 MiB
    //    of packed zero bits through zlib twice (a few hundred bytes).
    let n: u64 = 1 << 29;
    let mut q = quantize_header(1, n);
    let mut inner = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    inner.write_all(&q).unwrap();
    q.clear();
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..(n / 8) / (1 << 20) {
        inner.write_all(&zeros).unwrap();
    }
    let body = zlib(&inner.finish().unwrap());
    let tree = format!("data: !core/ndarray\n  source: 0\n  datatype: float64\n  shape: [{n}]\n");
    let file = draft_file(
        &tree,
        &format!("--- [[quantize, {{dtype: 64, original_shape: [{n}]}}], zlib, zlib]\n...\n"),
        &body,
        n * 8,
    );
    println!("quantize bomb: {} bytes claiming {} GiB", file.len(), n * 8 / GIB);
    let q = put(&d, "quantize.asdf", &file);
    // 2. [zlib, zlib] to 1 GiB.
    let file = draft_file(
        &format!("data: !core/ndarray\n  source: 0\n  datatype: uint8\n  shape: [{GIB}]\n"),
        "--- [zlib, zlib]\n...\n",
        &zlib_zlib_zeros(GIB),
        GIB,
    );
    println!("zlib bomb: {} bytes claiming 1 GiB", file.len());
    let z = put(&d, "zlib.asdf", &file);
    for (p, what) in [(&q, "quantize"), (&z, "zlib")] {
        let o = run_measured(&["verify", p], Duration::from_secs(300));
        println!("verify {what}: exit {}, {:.1} MiB, {:.1} s", o.code, o.peak_mib, o.secs);
        assert_eq!(o.signal, None, "{what}: killed: {}", o.stderr);
        assert_eq!(o.code, 0, "{what}: {}{}", o.stdout, o.stderr);
        assert!(o.peak_mib < 64.0, "verify {what}: {:.1} MiB", o.peak_mib);
        let o = run_measured(&["info", p], Duration::from_secs(60));
        assert_eq!((o.code, o.signal), (0, None), "{what}: {}", o.stderr);
    }
}

/// A 1,000-dimension tile step over a 16 MiB array, tiles of one element: the work follows the
/// bytes, not the rank.
#[test]
fn a_tile_step_of_a_thousand_dimensions() {
    let d = scratch("tile-rank");
    let len = 16usize << 20;
    let mut shape = vec!["1"; 999];
    let last = len.to_string();
    shape.push(&last);
    let dims = shape.join(", ");
    let mut tiles = vec!["1"; 999];
    tiles.push("1");
    let tdims = tiles.join(", ");
    // Zlib'd in pieces: this process stays small (its children's measured peak starts from
    // its own).
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    let piece: Vec<u8> = (0..1usize << 20).map(|i| (i % 251) as u8).collect();
    for _ in 0..len >> 20 {
        z.write_all(&piece).unwrap();
    }
    let file = draft_file(
        &format!("data: !core/ndarray\n  source: 0\n  datatype: uint8\n  byteorder: little\n  shape: [{len}]\n"),
        &format!("--- [[tile, {{shape: [{tdims}], original_shape: [{dims}], item_size: 1}}], zlib]\n...\n"),
        &z.finish().unwrap(),
        len as u64,
    );
    let p = put(&d, "tile.asdf", &file);
    let o = run_measured(&["verify", &p], Duration::from_secs(60));
    println!("tile over 1,000 dimensions: exit {}, {:.1} s", o.code, o.secs);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(o.secs < 20.0, "{:.1} s", o.secs);
}

/// A `bls2` frame of three special (zero) chunks of 1 GiB, made by python-blosc2 (a few
/// hundred bytes): `verify` of the whole block, and `to-json` and `diff` of a 4-element view
/// over it, take megabytes, not the gigabytes the chunks claim.
#[test]
fn special_value_frames_behind_small_views() {
    let d = scratch("special-frames");
    let py = asdf_testdata::interop_python();
    let frame_path = d.join("zeros.b2frame");
    let code = format!(
        "import blosc2\ns = blosc2.SChunk(chunksize=2**30)\ns.fill_special(3 * 2**30, blosc2.SpecialValue.ZERO)\nopen({:?}, 'wb').write(s.to_cframe())",
        frame_path.display().to_string()
    );
    let out = std::process::Command::new(&py).args(["-c", &code]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let frame = std::fs::read(&frame_path).unwrap();
    let n = 3 * GIB;
    let file = |tree: &str| {
        let mut f = support::head(tree);
        f.extend(support::block(b"bls2", &frame, n, [0; 16]));
        f
    };
    let whole = put(
        &d,
        "whole.asdf",
        &file(&format!(
            "data: !core/ndarray-1.0.0 {{source: 0, datatype: uint8, byteorder: little, shape: [{n}]}}\n"
        )),
    );
    let view = put(
        &d,
        "view.asdf",
        &file(&format!(
            "data: !core/ndarray-1.0.0 {{source: 0, datatype: uint8, byteorder: little, shape: [4], offset: {}}}\n",
            n / 2
        )),
    );
    println!("{} bytes of frame claiming 3 GiB", frame.len());
    for args in [
        vec!["verify", whole.as_str()],
        vec!["to-json", view.as_str()],
        vec!["diff", view.as_str(), view.as_str()],
    ] {
        let o = run_measured(&args, Duration::from_secs(120));
        println!("{}: exit {}, {:.1} MiB, {:.2} s", args[0], o.code, o.peak_mib, o.secs);
        assert_eq!((o.code, o.signal), (0, None), "{args:?}: {}{}", o.stdout, o.stderr);
        assert!(o.peak_mib < 64.0, "{args:?}: {:.1} MiB", o.peak_mib);
        if args[0] == "to-json" {
            assert!(o.stdout.contains("[0, 0, 0, 0]"), "{}", o.stdout);
        }
    }
}

/// A FITS file made card by card: a primary HDU, an image `SCI` (3 x 4 float32) that the
/// tree names, an unnamed image, and the ASDF HDU in Appendix A's IMAGE form.
fn small_fits() -> Vec<u8> {
    use asdf_testdata::fits::{card, header, padded as data};
    let tree = "#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
                sci: !core/ndarray-1.0.0\n  source: fits:SCI,1\n  datatype: float32\n  byteorder: big\n  shape: [3, 4]\n...\n";
    let mut f = header(&[
        card("SIMPLE", "T"),
        card("BITPIX", "8"),
        card("NAXIS", "0"),
        card("EXTEND", "T"),
    ]);
    let image = |name: Option<&str>, bitpix: &str, axes: &[usize]| {
        let mut c = vec![
            "XTENSION= 'IMAGE   '".to_owned(),
            card("BITPIX", bitpix),
            card("NAXIS", &axes.len().to_string()),
        ];
        for (i, a) in axes.iter().enumerate() {
            c.push(card(&format!("NAXIS{}", i + 1), &a.to_string()));
        }
        c.push(card("PCOUNT", "0"));
        c.push(card("GCOUNT", "1"));
        if let Some(n) = name {
            c.push(format!("EXTNAME = '{n:<8}'"));
        }
        header(&c)
    };
    f.extend(image(Some("SCI"), "-32", &[4, 3]));
    f.extend(data(
        &(0..12).flat_map(|i| (i as f32).to_be_bytes()).collect::<Vec<u8>>(),
    ));
    f.extend(image(None, "16", &[2, 2]));
    f.extend(data(&[0, 1, 0, 2, 0, 3, 0, 4]));
    f.extend(image(Some("ASDF"), "8", &[tree.len()]));
    f.extend(data(tree.as_bytes()));
    f
}

/// `convert x.fits -o y.asdf` keeps the FITS headers in `_fits`, whose `data` aliases the
/// array: `to-yaml` of that file inlines the array under its anchor (the alias still names
/// it), and `defragment y.fits -o y.fits` and `edit` keep every HDU.
#[test]
fn fits_conversions_keep_aliases_and_hdus() {
    let d = scratch("fits-conversions");
    let x = put(&d, "x.fits", &small_fits());
    let y = d.join("y.asdf").display().to_string();
    let o = run_measured(&["convert", &x, "-o", &y], Duration::from_secs(60));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = run_measured(&["to-yaml", &y], Duration::from_secs(60));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("sci: &fits_hdu1") && o.stdout.contains("data: *fits_hdu1"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("[8.0, 9.0, 10.0, 11.0]"), "{}", o.stdout);
    // Over itself, a FITS file stays FITS with its three other HDUs.
    let hdus = |p: &str| {
        let bytes = std::fs::read(p).unwrap();
        asdf::fits::read_hdus(&bytes, bytes.len() as u64, asdf::fits::FitsLimits::default())
            .unwrap()
            .len()
    };
    let o = run_measured(&["defragment", &x, "-o", &x], Duration::from_secs(60));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(hdus(&x), 4);
    let f = asdf::open(&x).unwrap();
    assert_eq!(
        f.array("/sci").and_then(|a| a.read::<Vec<f32>>()).unwrap(),
        (0..12).map(|i| i as f32).collect::<Vec<_>>()
    );
}
