//! Runs the programs in `examples/` and checks that the README's snippets are these programs'
//! code, word for word: what the README shows is compiled and run here.
#![allow(clippy::unwrap_used, dead_code)]

use std::path::PathBuf;

#[path = "../iterate_blocks.rs"]
mod iterate_blocks;
#[path = "../one_element.rs"]
mod one_element;
#[path = "../read_ndarray.rs"]
mod read_ndarray;
#[path = "../update_in_place.rs"]
mod update_in_place;
#[path = "../validate_extension.rs"]
mod validate_extension;
#[path = "../write_two_arrays.rs"]
mod write_two_arrays;

fn here() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn small() -> String {
    here().join("data/small.asdf").to_string_lossy().into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("asdf-examples-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn one_element_of_a_lazy_open() {
    // The example file's image is 0.5 * (0..12) in 3 x 4: [2, 3] is the 12th.
    assert_eq!(
        one_element::one_element(&small(), "/image", &[2, 3]).unwrap(),
        asdf::Element::Float(5.5)
    );
    assert!(one_element::one_element(&small(), "/image", &[3, 0]).is_err());
    assert!(matches!(
        one_element::one_element(&small(), "/nothing", &[0]),
        Err(asdf::Error::NotFound(_))
    ));
}

#[test]
fn read_into_ndarray() {
    let a = read_ndarray::read_array(&small(), "/image").unwrap();
    assert_eq!(a.shape(), &[3, 4]);
    // The example file's image is 0.5 * (0..12).
    let want: Vec<f64> = (0..12).map(|i| f64::from(i) * 0.5).collect();
    assert_eq!(a.iter().copied().collect::<Vec<_>>(), want);
    // The wrong type is an error, not a conversion.
    assert!(read_ndarray::read_array(&small(), "/counts").is_err());
}

#[test]
fn write_two_arrays_with_different_compression() {
    let dir = scratch("write");
    let path = dir.join("two.asdf");
    write_two_arrays::write_two(&path).unwrap();
    let f = asdf::open(&path).unwrap();
    assert!(f.warnings().is_empty(), "{:?}", f.warnings());
    let flux = f.array("/sci/flux").unwrap();
    let dq = f.array("/sci/dq").unwrap();
    assert_eq!(flux.compression(), Some(asdf::Label::ZSTD));
    assert_eq!(dq.compression(), Some(asdf::Label::ZLIB));
    assert_eq!(flux.shape(), &[64, 64]);
    let v = flux.read::<Vec<f32>>().unwrap();
    assert!((v[100] - (100.0f32 * 0.01).sin()).abs() < 1e-6);
    let dq_buf = dq.read::<Vec<u16>>().unwrap();
    assert_eq!(
        dq_buf.iter().filter(|x| **x == 1).count(),
        (0..4096).filter(|i| i % 97 == 0).count()
    );
    // Blocks as handles: the same compressions, in the order the arrays were put.
    let listed = iterate_blocks::list_blocks(&path.to_string_lossy()).unwrap();
    assert_eq!(
        listed,
        vec![(0, asdf::Label::ZSTD, 64 * 64 * 4), (1, asdf::Label::ZLIB, 64 * 64 * 2)]
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn iterate_blocks_into_a_buffer() {
    let listed = iterate_blocks::list_blocks(&small()).unwrap();
    // image: 12 float64, uncompressed; counts: 1000 int32, zlib.
    assert_eq!(listed, vec![(0, asdf::Label::NONE, 96), (1, asdf::Label::ZLIB, 4000)]);
}

#[test]
fn update_in_place_and_validate() {
    let dir = scratch("update");
    let path = dir.join("small.asdf");
    std::fs::copy(small(), &path).unwrap();
    let how = update_in_place::rename_observer(&path, "E. Hubble").unwrap();
    assert!(matches!(how, asdf::Update::InPlace { .. }), "{how:?}");
    let f = asdf::open(&path).unwrap();
    assert_eq!(f.get("/observer").unwrap().as_str(), Some("E. Hubble"));
    assert_eq!(f.array("/counts").unwrap().read::<Vec<i32>>().unwrap().len(), 1000);
    std::fs::remove_dir_all(dir).unwrap();

    let bad = "%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
               exposure: !<tag:example.org:exposure-1.0.0> {seconds: -3, filter: F200W}\n...\n";
    let v = validate_extension::violations(bad).unwrap();
    assert_eq!(v.len(), 2, "{v:?}");
    assert!(
        v.iter()
            .any(|m| m.contains("/exposure/seconds") && m.contains("-3 is less than the minimum of 0")),
        "{v:?}"
    );
    assert!(v.iter().any(|m| m.contains("/exposure/filter")), "{v:?}");
    let good = bad.replace("-3", "30").replace("F200W", "F150W");
    assert!(validate_extension::violations(&good).unwrap().is_empty());
}

/// The snippets between `// README: NAME` and `// README: end` in the examples.
fn marked(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Option<Vec<&str>> = None;
    for line in text.lines() {
        if line.starts_with("// README: end") {
            out.push(cur.take().unwrap().join("\n"));
        } else if line.starts_with("// README: ") {
            cur = Some(Vec::new());
        } else if let Some(c) = &mut cur {
            c.push(line);
        }
    }
    out
}

#[test]
fn readme_snippets_are_the_examples() {
    let readme = std::fs::read_to_string(here().join("../README.md")).unwrap();
    let mut blocks = Vec::new();
    let mut cur: Option<Vec<&str>> = None;
    for line in readme.lines() {
        if line == "```rust" {
            cur = Some(Vec::new());
        } else if line == "```" {
            if let Some(c) = cur.take() {
                blocks.push(c.join("\n"));
            }
        } else if let Some(c) = &mut cur {
            c.push(line);
        }
    }
    let mut snippets = Vec::new();
    for name in [
        "read_ndarray.rs",
        "write_two_arrays.rs",
        "iterate_blocks.rs",
        "one_element.rs",
    ] {
        snippets.extend(marked(&std::fs::read_to_string(here().join(name)).unwrap()));
    }
    assert_eq!(snippets.len(), 4);
    // Every Rust snippet of the README is one of these (none is left untested), and each of
    // these is shown.
    for b in &blocks {
        assert!(snippets.contains(b), "a README snippet that no example holds:\n{b}");
    }
    for s in &snippets {
        assert!(blocks.contains(s), "the README does not show this example code:\n{s}");
    }
}
