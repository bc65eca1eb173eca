//! ASDF embedded in FITS (Appendix A), read: FITS files built here card by card in the layout
//! JWST pipelines write (stdatamodels' one-row `ASDF_METADATA` BINTABLE, arrays in IMAGE HDUs
//! named by `fits:EXTNAME,EXTVER`) and in the appendix's IMAGE form.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use asdf::{OpenOptions, Storage, WriteOptions};

/// A header of `cards` (each padded to 80 characters) and END, padded to 2880 bytes.
fn header(cards: &[String]) -> Vec<u8> {
    let mut v = Vec::new();
    for c in cards.iter().map(String::as_str).chain(["END"]) {
        let mut line = c.as_bytes().to_vec();
        line.resize(80, b' ');
        v.extend_from_slice(&line);
    }
    v.resize(v.len().div_ceil(2880) * 2880, b' ');
    v
}

fn padded(bytes: &[u8]) -> Vec<u8> {
    let mut v = bytes.to_vec();
    v.resize(v.len().div_ceil(2880) * 2880, 0);
    v
}

fn card(key: &str, value: &str) -> String {
    format!("{key:<8}= {value:>20}")
}

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
    let f = asdf::open_bytes(bytes.clone(), OpenOptions::default().strict(true)).unwrap();
    assert!(f.warnings().is_empty(), "{:?}", f.warnings());
    let hdus = f.fits_hdus().unwrap();
    assert_eq!(hdus.len(), 4);
    assert_eq!(f.get("/meta/telescope").unwrap().as_str(), Some("JWST"));
    let a = f.array("/data").unwrap();
    assert_eq!(a.shape(), &[3, 4]);
    assert_eq!(
        a.storage(),
        Storage::External {
            uri: "fits:SCI,1".into()
        }
    );
    assert_eq!(a.read::<f32>().unwrap(), sci);
    assert_eq!(a.get::<f32>(&[2, 3]).unwrap(), sci[11]);
    assert_eq!(f.array("/dq").unwrap().read::<i32>().unwrap(), dq);
    // Written as plain ASDF: the HDUs' data become blocks, the sources block numbers.
    let out = f.to_bytes(&WriteOptions::default()).unwrap();
    let g = asdf::open_bytes(out, OpenOptions::default().strict(true)).unwrap();
    assert!(g.fits_hdus().is_none());
    assert_eq!(g.array("/data").unwrap().read::<f32>().unwrap(), sci);
    assert!(matches!(g.array("/dq").unwrap().storage(), Storage::Internal { .. }));
    // An index source and the appendix's IMAGE form.
    let (bytes, sci, _) = jwst(&TREE.replace("fits:SCI,1", "fits:1"), &[]);
    let f = asdf::open_bytes(bytes, OpenOptions::default()).unwrap();
    assert_eq!(f.array("/data").unwrap().read::<f32>().unwrap(), sci);
}

#[test]
fn mismatches_warn_and_bad_sources_fail_clearly() {
    // Shape and datatype differ from the HDU's: warnings, and the ndarray's are used.
    let tree = TREE
        .replace("shape: [3, 4]}\ndq", "shape: [4, 3]}\ndq")
        .replace("datatype: int32", "datatype: uint32");
    let (bytes, _, _) = jwst(&tree, &[]);
    let f = asdf::open_bytes(bytes, OpenOptions::default()).unwrap();
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
    let f = asdf::open_bytes(bytes, OpenOptions::default()).unwrap();
    let e = f.array("/dq").unwrap_err().to_string();
    assert!(
        e.contains("/dq") && e.contains("fits:ERR,1") && e.contains("no HDU"),
        "{e}"
    );
    // Scaled data is refused with its HDU and values named.
    let (bytes, _, _) = jwst(TREE, &[card("BZERO", "32768."), card("BSCALE", "1.")]);
    let f = asdf::open_bytes(bytes, OpenOptions::default()).unwrap();
    let e = f.array_values("/data").unwrap_err().to_string();
    assert!(e.contains("HDU 1") && e.contains("BZERO 32768"), "{e}");
    // Writing over the FITS file in place is refused.
    let dir = std::env::temp_dir().join(format!("asdf-rs-fits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("x.fits");
    std::fs::write(&p, jwst(TREE, &[]).0).unwrap();
    let mut f = asdf::open(&p).unwrap();
    assert!(f.update(&WriteOptions::default()).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
    // A FITS file without an ASDF HDU: a clear error.
    let mut plain = header(&[card("SIMPLE", "T"), card("BITPIX", "8"), card("NAXIS", "0")]);
    plain.extend(image("SCI", 8, &[2], &[1, 2], &[]));
    let e = asdf::open_bytes(plain, OpenOptions::default()).unwrap_err().to_string();
    assert!(e.contains("no HDU is named ASDF"), "{e}");
}
