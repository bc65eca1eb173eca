//! ASDF embedded in FITS (Appendix A), read: FITS files built here card by card in the layout
//! JWST pipelines write (stdatamodels' one-row `ASDF_METADATA` BINTABLE, arrays in IMAGE HDUs
//! named by `fits:EXTNAME,EXTVER`) and in the appendix's IMAGE form.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss
)]

use asdf::{OpenOptions, Storage, WriteOptions};

use asdf_testdata::fits::{card, header, padded};

fn image(name: &str, bitpix: i32, axes: &[usize], data: &[u8], extra: &[String]) -> Vec<u8> {
    let mut cards = vec![
        card("XTENSION", "'IMAGE   '"),
        card("BITPIX", &bitpix.to_string()),
        card("NAXIS", &axes.len().to_string()),
    ];
    for (i, n) in axes.iter().enumerate() {
        cards.push(card(&format!("NAXIS{}", i + 1), &n.to_string()));
    }
    cards.extend([
        card("PCOUNT", "0"),
        card("GCOUNT", "1"),
        card("EXTNAME", &format!("'{name}'")),
        card("EXTVER", "1"),
    ]);
    cards.extend_from_slice(extra);
    let mut v = header(&cards);
    v.extend(padded(data));
    v
}

/// A JWST-style file: primary, SCI (float32 3x4), DQ (int32 3x4), then the ASDF table.
fn jwst(tree: &str, sci_extra: &[String]) -> (Vec<u8>, Vec<f32>, Vec<i32>) {
    let sci: Vec<f32> = (0..12).map(|i| i as f32 * 0.5 - 1.0).collect();
    let dq: Vec<i32> = (0..12).map(|i| i * 3).collect();
    let mut f = header(&[
        card("SIMPLE", "T"),
        card("BITPIX", "8"),
        card("NAXIS", "0"),
        card("EXTEND", "T"),
    ]);
    f.extend(image(
        "SCI",
        -32,
        &[4, 3],
        &sci.iter().flat_map(|v| v.to_be_bytes()).collect::<Vec<_>>(),
        sci_extra,
    ));
    f.extend(image(
        "DQ",
        32,
        &[4, 3],
        &dq.iter().flat_map(|v| v.to_be_bytes()).collect::<Vec<_>>(),
        &[],
    ));
    let asdf = format!(
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n{tree}...\n"
    );
    let n = asdf.len();
    f.extend(header(&[
        card("XTENSION", "'BINTABLE'"),
        card("BITPIX", "8"),
        card("NAXIS", "2"),
        card("NAXIS1", &n.to_string()),
        card("NAXIS2", "1"),
        card("PCOUNT", "0"),
        card("GCOUNT", "1"),
        card("TFIELDS", "1"),
        card("TTYPE1", "'ASDF_METADATA'"),
        card("TFORM1", &format!("'{n}B'")),
        card("EXTNAME", "'ASDF'"),
    ]));
    f.extend(padded(asdf.as_bytes()));
    (f, sci, dq)
}

const TREE: &str = "data: !core/ndarray-1.0.0 {source: 'fits:SCI,1', datatype: float32, byteorder: big, shape: [3, 4]}\n\
dq: !core/ndarray-1.0.0 {source: 'fits:DQ,1', datatype: int32, byteorder: big, shape: [3, 4]}\n\
meta: {telescope: JWST}\n";

#[test]
fn jwst_layout_reads_by_hdu() {
    let (bytes, sci, dq) = jwst(TREE, &[]);
    let f = asdf::Open::bytes(bytes.clone())
        .options(OpenOptions::default().strict(true))
        .open()
        .unwrap();
    assert!(f.warnings().is_empty(), "{:?}", f.warnings());
    let hdus = f.source().fits_hdus().unwrap();
    assert_eq!(hdus.len(), 4);
    assert_eq!(f.get("/meta/telescope").unwrap().as_str(), Some("JWST"));
    let a = f.array("/data").unwrap();
    assert_eq!(a.shape(), &[3, 4]);
    // `source: fits:SCI,1`: the data of HDU 1.
    assert_eq!(a.storage(), Storage::Fits { hdu: 1 });
    assert_eq!(a.read::<Vec<f32>>().unwrap(), sci);
    assert_eq!(a.read_region::<Vec<f32>>(&"2, 3".parse().unwrap()).unwrap()[0], sci[11]);
    assert_eq!(f.array("/dq").unwrap().read::<Vec<i32>>().unwrap(), dq);
    // Written as plain ASDF: the HDUs' data become blocks, the sources block numbers.
    let out = crate::common::bytes(&f, &WriteOptions::default()).unwrap();
    let g = asdf::Open::bytes(out)
        .options(OpenOptions::default().strict(true))
        .open()
        .unwrap();
    assert!(g.source().fits_hdus().is_none());
    assert_eq!(g.array("/data").unwrap().read::<Vec<f32>>().unwrap(), sci);
    assert!(matches!(g.array("/dq").unwrap().storage(), Storage::Internal { .. }));
    // An index source and the appendix's IMAGE form.
    let (bytes, sci, _) = jwst(&TREE.replace("fits:SCI,1", "fits:1"), &[]);
    let f = asdf::Open::bytes(bytes).options(OpenOptions::default()).open().unwrap();
    assert_eq!(f.array("/data").unwrap().read::<Vec<f32>>().unwrap(), sci);
}

#[test]
fn mismatches_warn_and_bad_sources_fail_clearly() {
    // Shape and datatype differ from the HDU's: warnings, and the ndarray's are used.
    let tree = TREE
        .replace("shape: [3, 4]}\ndq", "shape: [4, 3]}\ndq")
        .replace("datatype: int32", "datatype: uint32");
    let (bytes, _, _) = jwst(&tree, &[]);
    let f = asdf::Open::bytes(bytes).options(OpenOptions::default()).open().unwrap();
    let w: Vec<String> = f.warnings().iter().map(ToString::to_string).collect();
    assert!(
        w.iter().any(|w| w.contains("/data") && w.contains("shape [4, 3]")),
        "{w:?}"
    );
    assert!(
        w.iter().any(|w| w.contains("/dq") && w.contains("datatype uint32")),
        "{w:?}"
    );
    assert_eq!(f.array("/data").unwrap().shape(), &[4, 3]);
    // A source naming no HDU.
    let (bytes, _, _) = jwst(&TREE.replace("fits:DQ,1", "fits:ERR,1"), &[]);
    let f = asdf::Open::bytes(bytes).options(OpenOptions::default()).open().unwrap();
    let e = f.array("/dq").unwrap_err().to_string();
    assert!(
        e.contains("/dq") && e.contains("fits:ERR,1") && e.contains("no HDU"),
        "{e}"
    );
    // Scaled data is refused with its HDU and values named.
    let (bytes, _, _) = jwst(TREE, &[card("BZERO", "32768."), card("BSCALE", "1.")]);
    let f = asdf::Open::bytes(bytes).options(OpenOptions::default()).open().unwrap();
    let e = f.array("/data").and_then(|a| a.values()).unwrap_err().to_string();
    assert!(e.contains("HDU 1") && e.contains("BZERO 32768"), "{e}");
    // An update of a FITS file writes the FITS file again (never plain ASDF over it).
    let dir = std::env::temp_dir().join(format!("asdf-rs-fits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("x.fits");
    std::fs::write(&p, jwst(TREE, &[]).0).unwrap();
    let mut f = asdf::open(&p).unwrap();
    let hdus = f.source().fits_hdus().map(<[_]>::len);
    assert_eq!(
        f.update(&WriteOptions::default()).unwrap(),
        asdf::Update::Rewritten(asdf::RewriteReason::Fits)
    );
    assert!(f.source().fits_hdus().is_some());
    assert_eq!(asdf::open(&p).unwrap().source().fits_hdus().map(<[_]>::len), hdus);
    std::fs::remove_dir_all(&dir).unwrap();
    // A FITS file without an ASDF HDU: a clear error.
    let mut plain = header(&[card("SIMPLE", "T"), card("BITPIX", "8"), card("NAXIS", "0")]);
    plain.extend(image("SCI", 8, &[2], &[1, 2], &[]));
    let e = asdf::Open::bytes(plain)
        .options(OpenOptions::default())
        .open()
        .unwrap_err()
        .to_string();
    assert!(e.contains("no HDU is named ASDF"), "{e}");
}

// ---------------------------------------------------------------------------------------
// Writing.

use asdf::core_types::{Datatype, ScalarType};
use asdf::fits::{FitsLimits, Hdu, HduKind, read_hdus};
use asdf::{AsdfHdu, ByteOrder, FitsWriteOptions, NewArray};

fn hdus_of(bytes: &[u8]) -> Vec<Hdu> {
    read_hdus(bytes, bytes.len() as u64, FitsLimits::default()).unwrap()
}

/// The 80-character cards of `h`'s header, trailing blanks removed.
fn card_texts(bytes: &[u8], h: &Hdu) -> Vec<String> {
    bytes[h.header_offset as usize..h.data_offset as usize]
        .chunks(80)
        .map(|c| String::from_utf8_lossy(c).trim_end().to_owned())
        .take_while(|c| c != "END")
        .collect()
}

/// The FITS checksum arithmetic done as the FITS standard's reference code does it: 16-bit
/// halves summed separately, carries folded in at the end (independent of the library's).
fn ones_complement(bytes: &[u8]) -> u32 {
    let (mut hi, mut lo) = (0u64, 0u64);
    for w in bytes.chunks_exact(4) {
        hi += u64::from(u16::from_be_bytes([w[0], w[1]]));
        lo += u64::from(u16::from_be_bytes([w[2], w[3]]));
    }
    loop {
        let (hicarry, locarry) = (hi >> 16, lo >> 16);
        if hicarry == 0 && locarry == 0 {
            break;
        }
        hi = (hi & 0xffff) + locarry;
        lo = (lo & 0xffff) + hicarry;
    }
    ((hi << 16) | lo) as u32
}

/// A new file: arrays of every FITS image type, one FITS cannot hold, nested arrays.
fn new_tree() -> asdf::AsdfFile {
    let mut f = asdf::AsdfFile::new(asdf::Version::new(1, 6, 0)).unwrap();
    let sci: Vec<f32> = (0..12).map(|i| i as f32 / 4.0 - 1.0).collect();
    f.put_array(
        "/sci",
        NewArray::from_bytes(
            Datatype::Scalar(ScalarType::Float32),
            &[3, 4],
            ByteOrder::Little,
            sci.iter().flat_map(|v| v.to_le_bytes()).collect(),
        ),
    )
    .unwrap();
    let dq: Vec<u16> = vec![0, 1, 32767, 32768, 65535, 7];
    f.put_array(
        "/dq",
        NewArray::from_bytes(
            Datatype::Scalar(ScalarType::UInt16),
            &[2, 3],
            ByteOrder::Little,
            dq.iter().flat_map(|v| v.to_le_bytes()).collect(),
        ),
    )
    .unwrap();
    for (i, n) in [2usize, 3].iter().enumerate() {
        let v: Vec<i8> = (0..*n as i8).map(|k| k - 1).collect();
        f.put_array(
            &format!("/slits/{i}/data"),
            NewArray::from_bytes(
                Datatype::Scalar(ScalarType::Int8),
                &[*n],
                ByteOrder::Big,
                v.iter().map(|x| *x as u8).collect(),
            ),
        )
        .unwrap();
    }
    f.put_array(
        "/wave",
        NewArray::from_bytes(
            Datatype::Scalar(ScalarType::Complex64),
            &[2],
            ByteOrder::Little,
            vec![0u8; 16],
        ),
    )
    .unwrap();
    f.set(
        "/meta",
        asdf::Node::map(vec![(asdf::Node::str("telescope"), asdf::Node::str("JWST"))]),
    )
    .unwrap();
    f
}

#[test]
fn a_tree_is_written_as_asdf_in_fits() {
    let f = new_tree();
    let bytes = crate::common::fits_bytes(&f, FitsWriteOptions::default()).unwrap();
    assert_eq!(bytes.len() % 2880, 0);
    let hdus = hdus_of(&bytes);
    let names: Vec<(Option<&str>, i64, &HduKind)> = hdus.iter().map(|h| (h.name.as_deref(), h.ver, &h.kind)).collect();
    assert_eq!(
        names,
        [
            (None, 1, &HduKind::Primary),
            (Some("SCI"), 1, &HduKind::Image),
            (Some("DQ"), 1, &HduKind::Image),
            (Some("DATA"), 1, &HduKind::Image),
            (Some("DATA"), 2, &HduKind::Image),
            (Some("ASDF"), 1, &HduKind::BinTable),
        ]
    );
    // SCI big-endian, its axes FITS order; DQ under BZERO 32768 with sign bits flipped.
    assert_eq!((hdus[1].bitpix, hdus[1].axes.as_slice()), (-32, &[4u64, 3][..]));
    let at = hdus[1].data_offset as usize;
    assert_eq!(&bytes[at..at + 4], &(-1.0f32).to_be_bytes());
    assert_eq!(hdus[2].value("BZERO"), Some("32768"));
    let at = hdus[2].data_offset as usize;
    assert_eq!(&bytes[at..at + 4], &[0x80, 0, 0x80, 1]);
    assert_eq!(hdus[3].value("BZERO"), Some("-128"));
    // Read back: the same arrays, the sources FITS ones; the complex array a block inside.
    let g = asdf::Open::bytes(bytes.clone())
        .options(OpenOptions::default().strict(true))
        .open()
        .unwrap();
    assert!(g.warnings().is_empty(), "{:?}", g.warnings());
    for p in ["/sci", "/dq", "/slits/0/data", "/slits/1/data", "/wave"] {
        assert_eq!(
            g.array(p).and_then(|a| a.values()).unwrap(),
            f.array(p).and_then(|a| a.values()).unwrap(),
            "{p}"
        );
    }
    assert_eq!(g.get("/dq/source").unwrap().as_str(), Some("fits:DQ,1"));
    assert_eq!(g.get("/slits/1/data/source").unwrap().as_str(), Some("fits:DATA,2"));
    assert!(matches!(g.array("/wave").unwrap().storage(), Storage::Internal { .. }));
    assert_eq!(g.get("/meta/telescope").unwrap().as_str(), Some("JWST"));
    // _fits_hash: SHA-256 of the other HDUs' headers as written (stdatamodels' fits_hash).
    use sha2::Digest as _;
    let mut h = sha2::Sha256::new();
    for x in &hdus[..5] {
        h.update(&bytes[x.header_offset as usize..x.data_offset as usize]);
    }
    let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(g.get("/_fits_hash").unwrap().as_str(), Some(hex.as_str()));
    // Names given, the appendix's IMAGE form.
    let opts = FitsWriteOptions::default()
        .name("/sci", "SCI_A")
        .asdf_hdu(AsdfHdu::Image);
    let bytes = crate::common::fits_bytes(&f, opts).unwrap();
    let hdus = hdus_of(&bytes);
    assert_eq!(hdus[1].name.as_deref(), Some("SCI_A"));
    let last = hdus.last().unwrap();
    assert_eq!((&last.kind, last.bitpix, last.axes.len()), (&HduKind::Image, 8, 1));
    let g = asdf::Open::bytes(bytes)
        .options(OpenOptions::default().strict(true))
        .open()
        .unwrap();
    assert_eq!(
        g.array("/sci").and_then(|a| a.values()).unwrap(),
        f.array("/sci").and_then(|a| a.values()).unwrap()
    );
}

#[test]
fn checksums_make_every_hdu_sum_to_minus_zero() {
    let f = new_tree();
    let bytes = crate::common::fits_bytes(&f, FitsWriteOptions::default().checksums(true)).unwrap();
    let hdus = hdus_of(&bytes);
    for (i, h) in hdus.iter().enumerate() {
        let end = hdus.get(i + 1).map_or(bytes.len(), |n| n.header_offset as usize);
        let hdu = &bytes[h.header_offset as usize..end];
        assert_eq!(ones_complement(hdu), u32::MAX, "HDU {i}");
        let data = &bytes[h.data_offset as usize..end];
        assert_eq!(
            h.value("DATASUM"),
            Some(ones_complement(data).to_string().as_str()),
            "HDU {i}"
        );
        let code = h.value("CHECKSUM").unwrap();
        assert_eq!(code.len(), 16);
        assert!(code.bytes().all(|b| b.is_ascii_alphanumeric()), "{code}");
    }
    // Without checksums, none (a FITS file's cards are not carried over).
    let plain = crate::common::fits_bytes(&f, FitsWriteOptions::default()).unwrap();
    let g = asdf::Open::bytes(bytes).options(OpenOptions::default()).open().unwrap();
    let again = crate::common::fits_bytes(&g, FitsWriteOptions::default()).unwrap();
    for h in hdus_of(&again) {
        assert!(h.value("CHECKSUM").is_none() && h.value("DATASUM").is_none());
    }
    assert_eq!(hdus_of(&plain).len(), hdus_of(&again).len());
}

#[test]
fn a_fits_file_keeps_its_hdus_and_headers_through_asdf() {
    // A JWST-style file with a header card of note, and a table no ndarray names.
    let (mut bytes, sci, dq) = jwst(TREE, &[card("BUNIT", "'MJy/sr'"), "COMMENT a comment card".to_owned()]);
    let hdus = hdus_of(&bytes);
    let asdf_hdu = hdus.last().unwrap().header_offset as usize;
    let table_data: Vec<u8> = (0..12u8).collect();
    let mut table = header(&[
        card("XTENSION", "'BINTABLE'"),
        card("BITPIX", "8"),
        card("NAXIS", "2"),
        card("NAXIS1", "4"),
        card("NAXIS2", "3"),
        card("PCOUNT", "0"),
        card("GCOUNT", "1"),
        card("TFIELDS", "1"),
        card("TTYPE1", "'COUNTS'"),
        card("TFORM1", "'1J'"),
        card("TZERO1", "2147483648"),
        card("EXTNAME", "'EXTRA'"),
    ]);
    table.extend(padded(&table_data));
    bytes.splice(asdf_hdu..asdf_hdu, table);
    let f = asdf::Open::bytes(bytes.clone())
        .options(OpenOptions::default().strict(true))
        .open()
        .unwrap();
    // FITS -> FITS: the same HDUs, headers card for card, data byte for byte.
    let again = crate::common::fits_bytes(&f, FitsWriteOptions::default()).unwrap();
    let same = |a: &[u8], b: &[u8]| {
        let (ha, hb) = (hdus_of(a), hdus_of(b));
        assert_eq!(ha.len(), hb.len());
        for (x, y) in ha.iter().zip(&hb).filter(|(x, _)| x.name.as_deref() != Some("ASDF")) {
            assert_eq!(card_texts(a, x), card_texts(b, y));
            assert_eq!(
                &a[x.data_offset as usize..(x.data_offset + x.data_len) as usize],
                &b[y.data_offset as usize..(y.data_offset + y.data_len) as usize]
            );
        }
    };
    same(&bytes, &again);
    // FITS -> ASDF (with the _fits node) -> FITS.
    let mut f = asdf::Open::bytes(bytes.clone())
        .options(OpenOptions::default())
        .open()
        .unwrap();
    assert!(f.keep_fits_headers().unwrap());
    let plain = crate::common::bytes(&f, &WriteOptions::default()).unwrap();
    let g = asdf::Open::bytes(plain)
        .options(OpenOptions::default().strict(true))
        .open()
        .unwrap();
    assert!(g.source().fits_hdus().is_none());
    assert_eq!(g.array("/data").unwrap().read::<Vec<f32>>().unwrap(), sci);
    assert_eq!(g.array("/dq").unwrap().read::<Vec<i32>>().unwrap(), dq);
    let header = g
        .get(&format!("/{}/1/header", asdf::FITS_KEY))
        .unwrap()
        .as_sequence()
        .unwrap();
    assert_eq!(header.items[7].as_str(), Some(card("EXTNAME", "'SCI'").as_str()));
    assert_eq!(header.items.len(), 11);
    let back = crate::common::fits_bytes(&g, FitsWriteOptions::default()).unwrap();
    same(&bytes, &back);
    let h = asdf::Open::bytes(back)
        .options(OpenOptions::default().strict(true))
        .open()
        .unwrap();
    assert!(h.get(&format!("/{}", asdf::FITS_KEY)).is_err());
    assert_eq!(h.get("/data/source").unwrap().as_str(), Some("fits:SCI,1"));
    assert_eq!(h.array("/data").unwrap().read::<Vec<f32>>().unwrap(), sci);
    assert_eq!(h.get("/meta/telescope").unwrap().as_str(), Some("JWST"));
    // An array replaced in the tree goes into its old HDU.
    let mut f = asdf::Open::bytes(bytes).options(OpenOptions::default()).open().unwrap();
    let new: Vec<f32> = vec![9.0; 6];
    f.put_array(
        "/data",
        NewArray::from_bytes(
            Datatype::Scalar(ScalarType::Float32),
            &[2, 3],
            ByteOrder::Little,
            new.iter().flat_map(|v| v.to_le_bytes()).collect(),
        ),
    )
    .unwrap();
    let out = crate::common::fits_bytes(&f, FitsWriteOptions::default()).unwrap();
    let hdus = hdus_of(&out);
    assert_eq!(hdus.len(), 5);
    assert_eq!(
        (hdus[1].name.as_deref(), hdus[1].axes.as_slice()),
        (Some("SCI"), &[3u64, 2][..])
    );
    assert!(card_texts(&out, &hdus[1]).iter().any(|c| c.starts_with("BUNIT")));
    let g = asdf::Open::bytes(out).options(OpenOptions::default()).open().unwrap();
    assert_eq!(g.array("/data").unwrap().read::<Vec<f32>>().unwrap(), new);
}

#[test]
fn a_fits_node_is_written_card_for_card() {
    let mut f = asdf::AsdfFile::new(asdf::Version::new(1, 6, 0)).unwrap();
    f.set_tree_yaml(
        b"%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\nhdus: !fits/fits-1.2.0\n\
- header:\n  - [SIMPLE, true, conforms to FITS standard]\n  - [BITPIX, 8, array data type]\n  - [NAXIS, 0, number of array dimensions]\n  - [EXTEND, true]\n  - []\n  - ['', Top Level MIRI Metadata]\n  - [DATE, '2013-08-30T10:49:55.070373', The date this file was created (UTC)]\n  - [EXPTIME, 1.5]\n\
- header:\n  - [XTENSION, IMAGE, Image extension]\n  - [BITPIX, -32, array data type]\n  - [NAXIS, 2, number of array dimensions]\n  - [NAXIS1, 3]\n  - [NAXIS2, 2]\n  - [PCOUNT, 0, number of parameters]\n  - [GCOUNT, 1, number of groups]\n  - [EXTNAME, SCI, extension name]\n  - [BUNIT, DN, Units of the data array]\n  data: null\n...\n",
    )
    .unwrap();
    let v: Vec<f32> = (0..6).map(|i| i as f32).collect();
    f.put_array(
        "/hdus/1/data",
        NewArray::from_bytes(
            Datatype::Scalar(ScalarType::Float32),
            &[2, 3],
            ByteOrder::Little,
            v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        ),
    )
    .unwrap();
    assert!(f.validate(None, None).unwrap().violations.is_empty());
    let dir = std::env::temp_dir().join(format!("asdf-fits-node-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("node.fits");
    f.write(
        &path,
        &asdf::WriteOptions::default().fits((FitsWriteOptions::default()).clone().node("/hdus")),
    )
    .unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let hdus = hdus_of(&bytes);
    assert_eq!(hdus.len(), 2, "no ASDF HDU");
    assert_eq!(
        card_texts(&bytes, &hdus[0]),
        [
            "SIMPLE  =                    T / conforms to FITS standard",
            "BITPIX  =                    8 / array data type",
            "NAXIS   =                    0 / number of array dimensions",
            "EXTEND  =                    T",
            "",
            "        Top Level MIRI Metadata",
            "DATE    = '2013-08-30T10:49:55.070373' / The date this file was created (UTC)",
            "EXPTIME =                  1.5",
        ]
    );
    let sci = card_texts(&bytes, &hdus[1]);
    assert_eq!(sci[0], "XTENSION= 'IMAGE   '           / Image extension");
    assert_eq!(
        sci.last().unwrap(),
        "BUNIT   = 'DN      '           / Units of the data array"
    );
    let at = hdus[1].data_offset as usize;
    let got: Vec<f32> = bytes[at..at + 24]
        .chunks(4)
        .map(|c| f32::from_be_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(got, v);
    // A header that describes data the node does not give, a keyword FITS does not allow.
    f.set("/hdus/1/data", asdf::Node::null()).unwrap();
    let bad = dir.join("bad.fits");
    let err = f
        .write(
            &bad,
            &asdf::WriteOptions::default().fits((FitsWriteOptions::default()).clone().node("/hdus")),
        )
        .unwrap_err();
    assert!(err.to_string().contains("describes 24 bytes of data"), "{err}");
    f.set(
        "/hdus/0/header/7",
        asdf::Node::seq(vec![asdf::Node::str("exptime"), asdf::Node::float(1.5)]),
    )
    .unwrap();
    let err = f
        .write(
            &bad,
            &asdf::WriteOptions::default().fits((FitsWriteOptions::default()).clone().node("/hdus")),
        )
        .unwrap_err();
    assert!(err.to_string().contains("`exptime` is not a FITS keyword"), "{err}");
    // An END card before EXTNAME would end the header there and lose the HDU's name: refused,
    // as a card and as a card's text.
    for end in [
        asdf::Node::seq(vec![asdf::Node::str("END")]),
        asdf::Node::str("END"),
        asdf::Node::seq(vec![asdf::Node::str("END"), asdf::Node::str("x")]),
    ] {
        f.set(
            "/hdus/0/header/7",
            asdf::Node::seq(vec![asdf::Node::str("EXPTIME"), asdf::Node::float(1.5)]),
        )
        .unwrap();
        f.set("/hdus/1/data", asdf::Node::null()).unwrap();
        let mut g = asdf::Open::bytes(crate::common::bytes(&f, &WriteOptions::default()).unwrap())
            .options(OpenOptions::default())
            .open()
            .unwrap();
        g.put_array(
            "/hdus/1/data",
            NewArray::from_bytes(
                Datatype::Scalar(ScalarType::Float32),
                &[2, 3],
                ByteOrder::Little,
                v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            ),
        )
        .unwrap();
        g.set("/hdus/1/header/6", end).unwrap();
        let err = g
            .write(
                &bad,
                &asdf::WriteOptions::default().fits((FitsWriteOptions::default()).clone().node("/hdus")),
            )
            .unwrap_err();
        assert!(err.to_string().contains("END card"), "{err}");
    }
    // Nothing is left behind by the failed writes.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn writes_over_a_fits_file_guard_against_a_second_writer() {
    let dir = std::env::temp_dir().join(format!("asdf-fits-guard-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("obs.fits");
    new_tree()
        .write(&path, &asdf::WriteOptions::default().fits(FitsWriteOptions::default()))
        .unwrap();
    // Over its own path: FITS again, then through write_to (the tree checked where it is,
    // inside the ASDF HDU; a FITS file written over itself stays FITS), then FITS once more.
    let f = asdf::open(&path).unwrap();
    f.write(
        &path,
        &asdf::WriteOptions::default().fits(FitsWriteOptions::default().checksums(true)),
    )
    .unwrap();
    let f = asdf::open(&path).unwrap();
    assert!(f.source().fits_hdus().is_some());
    f.write(&path, &WriteOptions::default()).unwrap();
    let g = asdf::open(&path).unwrap();
    assert!(g.source().fits_hdus().is_some());
    g.write(&path, &asdf::WriteOptions::default().fits(FitsWriteOptions::default()))
        .unwrap();
    // A second writer changes the file after the first opened it: the first is refused and
    // the second's file stays.
    let first = asdf::open(&path).unwrap();
    let second = asdf::open(&path).unwrap();
    second
        .write(
            &path,
            &asdf::WriteOptions::default().fits(FitsWriteOptions::default().asdf_hdu(AsdfHdu::Image)),
        )
        .unwrap();
    let err = first
        .write(&path, &asdf::WriteOptions::default().fits(FitsWriteOptions::default()))
        .unwrap_err();
    assert!(matches!(err, asdf::Error::Changed { .. }), "{err}");
    let now = asdf::open(&path).unwrap();
    assert_eq!(now.source().fits_hdus().unwrap().last().unwrap().kind, HduKind::Image);
    assert_eq!(
        now.array("/sci").and_then(|a| a.values()).unwrap(),
        new_tree().array("/sci").and_then(|a| a.values()).unwrap()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Keys that differ only by case or trailing blanks (`sci`, `SCI`, `'sci '`) name HDUs FITS
/// readers take for the same EXTNAME: each gets its own EXTVER, and every array reads back as
/// itself from the FITS file written.
#[test]
fn extnames_equal_for_fits_readers_get_their_own_extver() {
    let mut f = asdf::AsdfFile::new(asdf::Version::new(1, 6, 0)).unwrap();
    let keys = ["/sci", "/SCI", "/sci ", "/Sci  "];
    for (i, k) in keys.iter().enumerate() {
        let v: Vec<f32> = (0..4).map(|j| (i * 10 + j) as f32).collect();
        f.put_array(k, NewArray::from_slice(&v, &[4]).unwrap()).unwrap();
    }
    let bytes = crate::common::fits_bytes(&f, FitsWriteOptions::default()).unwrap();
    let hdus = hdus_of(&bytes);
    let mut pairs: Vec<(String, i64)> = hdus
        .iter()
        .filter_map(|h| h.name.clone().map(|n| (n.trim_end().to_ascii_uppercase(), h.ver)))
        .filter(|(n, _)| n != "ASDF")
        .collect();
    pairs.sort();
    pairs.dedup();
    assert_eq!(pairs.len(), keys.len(), "{pairs:?}");
    let g = asdf::Open::bytes(bytes).options(OpenOptions::default()).open().unwrap();
    for (i, k) in keys.iter().enumerate() {
        let want: Vec<f32> = (0..4).map(|j| (i * 10 + j) as f32).collect();
        assert_eq!(g.array(k).and_then(|a| a.read::<Vec<f32>>()).unwrap(), want, "{k:?}");
    }
}

/// An ASDF file written as FITS: its arrays go into HDUs and their blocks are not copied into
/// the ASDF HDU as well (every array stored once).
#[test]
fn arrays_moved_into_hdus_leave_no_copy_in_the_asdf_hdu() {
    let f = new_tree();
    let plain = asdf::Open::bytes(crate::common::bytes(&f, &WriteOptions::default()).unwrap())
        .options(OpenOptions::default())
        .open()
        .unwrap();
    assert!(plain.source().layout().block_count() > 0);
    let bytes = crate::common::fits_bytes(&plain, FitsWriteOptions::default()).unwrap();
    let g = asdf::Open::bytes(bytes).options(OpenOptions::default()).open().unwrap();
    // Only the array FITS cannot hold (complex64) keeps a block.
    let internal = g
        .array_pointers()
        .iter()
        .filter(|p| matches!(g.array(p).unwrap().storage(), Storage::Internal { .. }))
        .count();
    assert_eq!(internal, 1);
    assert_eq!(
        g.source().layout().block_count(),
        internal,
        "the ASDF HDU still holds the arrays' blocks"
    );
    for p in plain.array_pointers() {
        assert_eq!(
            g.array(&p).and_then(|a| a.values()).unwrap().elements,
            plain.array(&p).and_then(|a| a.values()).unwrap().elements,
            "{p}"
        );
    }
}

/// A view whose elements overlap (`strides: [1, 1]` over 20000 x 20000 uint8 of a 40 KB
/// block) is written as FITS as the view of its block it is, not as a 400 MB image.
#[test]
fn overlapping_views_do_not_grow_into_images() {
    let n = 20_000usize;
    let tree = format!(
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
         v: !core/ndarray-1.0.0 {{source: 0, datatype: uint8, byteorder: little, shape: [{n}, {n}], strides: [1, 1]}}\n\
         w: !core/ndarray-1.0.0 {{source: 0, datatype: uint8, byteorder: little, shape: [10, 4], strides: [4, 1]}}\n...\n"
    );
    let data: Vec<u8> = (0..2 * n).map(|i| (i % 251) as u8).collect();
    let mut file = tree.into_bytes();
    file.extend_from_slice(b"\xd3BLK");
    file.extend_from_slice(&48u16.to_be_bytes());
    file.extend_from_slice(&[0u8; 8]);
    for _ in 0..3 {
        file.extend_from_slice(&(data.len() as u64).to_be_bytes());
    }
    file.extend_from_slice(&[0u8; 16]);
    file.extend_from_slice(&data);
    let f = asdf::Open::bytes(file).options(OpenOptions::default()).open().unwrap();
    let bytes = crate::common::fits_bytes(&f, FitsWriteOptions::default()).unwrap();
    assert!(bytes.len() < 200_000, "{} bytes of FITS from a 40 KB file", bytes.len());
    let g = asdf::Open::bytes(bytes).options(OpenOptions::default()).open().unwrap();
    assert!(matches!(g.array("/v").unwrap().storage(), Storage::Internal { .. }));
    assert!(matches!(g.array("/w").unwrap().storage(), Storage::Fits { .. }));
    for (i, j) in [(0, 0), (5, 7), (n - 1, n - 1)] {
        assert_eq!(
            g.array("/v").and_then(|a| a.element(&[i, j])).unwrap(),
            f.array("/v").and_then(|a| a.element(&[i, j])).unwrap()
        );
    }
    assert_eq!(g.array("/w").and_then(|a| a.read::<Vec<u8>>()).unwrap(), data[..40]);
}

/// `verify` checks each HDU's DATASUM and CHECKSUM against its bytes (as astropy does on
/// open with `checksum=True`): a file written with them passes; one bit of an image's data
/// changed fails its DATASUM, one bit of a header's comment its CHECKSUM; a file without
/// them has nothing to check there.
#[test]
fn verify_checks_fits_checksums() {
    let f = new_tree();
    let bytes = crate::common::fits_bytes(&f, FitsWriteOptions::default().checksums(true)).unwrap();
    let g = asdf::Open::bytes(bytes.clone()).open().unwrap();
    let report = g.verify(None);
    assert!(report.is_ok(), "{:?}", report.problems());
    assert!(!report.hdus.is_empty());
    assert!(
        report.hdus.iter().all(|(_, r)| matches!(r, Ok(true))),
        "{:?}",
        report.hdus
    );
    let hdus = hdus_of(&bytes);
    let image = hdus
        .iter()
        .position(|h| h.data_len > 0 && h.value("EXTNAME").is_some_and(|n| n != "ASDF"))
        .unwrap();
    // A bit of the image's data.
    let mut data_flip = bytes.clone();
    data_flip[hdus[image].data_offset as usize + 1] ^= 0x04;
    let report = asdf::Open::bytes(data_flip).open().unwrap().verify(None);
    assert!(!report.is_ok());
    let problems = report.problems().join("\n");
    assert!(
        problems.contains(&format!("HDU {image}: its DATASUM does not match")),
        "{problems}"
    );
    // A bit of a comment in the primary header (the cards still parse).
    let mut header_flip = bytes.clone();
    let at = bytes[..hdus[0].data_offset as usize]
        .windows(6)
        .position(|w| w == b"BITPIX")
        .unwrap()
        + 40;
    header_flip[at] = if header_flip[at] == b'x' { b'y' } else { b'x' };
    let report = asdf::Open::bytes(header_flip).open().unwrap().verify(None);
    let problems = report.problems().join("\n");
    assert!(problems.contains("HDU 0: its CHECKSUM does not match"), "{problems}");
    // Without the cards, nothing to check and nothing wrong.
    let plain = crate::common::fits_bytes(&f, FitsWriteOptions::default()).unwrap();
    let report = asdf::Open::bytes(plain).open().unwrap().verify(None);
    assert!(report.is_ok(), "{:?}", report.problems());
    assert!(report.hdus.iter().all(|(_, r)| matches!(r, Ok(false))));
}
