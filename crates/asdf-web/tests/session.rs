//! The viewer's operations natively, over a file held in memory and read through the host
//! interface: description (tree, blocks, validation), pictures, and errors.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The module holds one open file: the tests take turns.
static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn fetch_from(bytes: Arc<Vec<u8>>, served: Arc<AtomicU64>) -> asdf_web::Fetch {
    Box::new(move |off, buf| {
        let off = usize::try_from(off).unwrap().min(bytes.len());
        let n = buf.len().min(bytes.len() - off);
        buf[..n].copy_from_slice(&bytes[off..off + n]);
        served.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    })
}

fn sample() -> Vec<u8> {
    let mut f = asdf::AsdfFile::new(asdf::Version::STANDARD_LATEST).unwrap();
    let img: Vec<f32> = (0..64 * 48).map(|i| (i % 64) as f32).collect();
    f.put_array("/sci/data", asdf::NewArray::from_slice(&img, &[48, 64]).unwrap())
        .unwrap();
    let spec: Vec<f64> = (0..300).map(f64::from).collect();
    f.put_array("/spectrum", asdf::NewArray::from_slice(&spec, &[300]).unwrap())
        .unwrap();
    let big = vec![1u16; 4 << 20];
    f.put_array("/big", asdf::NewArray::from_slice(&big, &[2048, 2048]).unwrap())
        .unwrap();
    let path = std::env::temp_dir().join(format!("asdf-web-{}.asdf", std::process::id()));
    f.write(&path, &asdf::WriteOptions::default()).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    bytes
}

#[test]
fn a_file_opens_with_its_tree_blocks_and_validation_reading_only_its_head_and_tail() {
    let _turn = TURN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let bytes = Arc::new(sample());
    let served = Arc::new(AtomicU64::new(0));
    let d = asdf_web::open_with(bytes.len() as u64, fetch_from(bytes.clone(), served.clone())).unwrap();
    let tree = &d["tree"];
    let keys: Vec<&str> = tree["c"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["k"].as_str())
        .collect();
    assert!(keys.contains(&"sci") && keys.contains(&"spectrum"), "{keys:?}");
    let sci = tree["c"].as_array().unwrap().iter().find(|c| c["k"] == "sci").unwrap();
    let data = &sci["c"][0];
    assert_eq!(data["p"], "/sci/data");
    assert_eq!(data["a"]["shape"], serde_json::json!([48, 64]));
    assert_eq!(data["a"]["datatype"], "float32");
    assert!(data["t"].as_str().unwrap().starts_with("core/ndarray-"));
    assert_eq!(d["blocks"].as_array().unwrap().len(), 3);
    assert_eq!(d["validation"]["valid"], true, "{}", d["validation"]);
    assert_eq!(d["images"], serde_json::json!(["/sci/data", "/big"]));
    // The 8 MiB block was not read to open the file.
    let read = served.load(Ordering::Relaxed);
    assert!(read < 1 << 20, "{read} bytes read of {}", bytes.len());

    // An image: one pixel per value, the first row at the bottom; the values for the cursor.
    let drawn = asdf_web::draw_json(br#"{"pointer": "/sci/data", "stretch": "minmax"}"#).unwrap();
    assert_eq!(
        (drawn.header["width"].as_u64(), drawn.header["height"].as_u64()),
        (Some(64), Some(48))
    );
    assert_eq!(drawn.rgba.len(), 64 * 48 * 4);
    assert_eq!(&drawn.rgba[..4], &[0, 0, 0, 255]);
    assert_eq!(drawn.values[63], 63.0);
    assert_eq!(drawn.header["histogram"].as_array().unwrap().len(), 128);
    // Reduced to a maximum size, with limits given.
    let drawn =
        asdf_web::draw_json(br#"{"pointer": "/big", "max": 256, "lo": 0, "hi": 2, "cmap": "viridis"}"#).unwrap();
    assert_eq!(drawn.header["width"], 256);
    assert_eq!(drawn.header["full"], serde_json::json!([2048, 2048]));
    // A spectrum as a plot.
    let drawn = asdf_web::draw_json(br#"{"pointer": "/spectrum", "plot": [600, 300]}"#).unwrap();
    assert_eq!(drawn.header["kind"], "plot");
    assert_eq!(drawn.rgba.len(), 600 * 300 * 4);
    // Errors name the problem.
    let e = asdf_web::draw_json(br#"{"pointer": "/nothing"}"#).unwrap_err();
    assert!(e.contains("/nothing"), "{e}");
    let e = asdf_web::draw_json(br#"{"pointer": "/sci/data", "stretch": "gamma"}"#).unwrap_err();
    assert!(e.contains("zscale"), "{e}");
}

#[test]
fn invalid_files_show_their_violations_and_broken_ones_an_error() {
    let _turn = TURN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let text = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\nasdf_library: !core/software-1.0.0 {name: 5}\nx: 1\n...\n".to_vec();
    let bytes = Arc::new(text);
    let d = asdf_web::open_with(bytes.len() as u64, fetch_from(bytes.clone(), Arc::default())).unwrap();
    let v = &d["validation"];
    assert_eq!(v["valid"], false, "{v}");
    let first = &v["violations"][0];
    assert_eq!(first["pointer"], "/asdf_library/name", "{v}");
    assert_eq!(first["line"], 6, "{v}");
    let junk = Arc::new(b"not an ASDF file at all".to_vec());
    let e = asdf_web::open_with(junk.len() as u64, fetch_from(junk, Arc::default())).unwrap_err();
    assert!(!e.is_empty());
    // A read the host fails is an error, not a panic.
    let e = asdf_web::open_with(1000, Box::new(|_, _| Err(std::io::Error::other("offline")))).unwrap_err();
    assert!(e.contains("offline") || !e.is_empty(), "{e}");
}
