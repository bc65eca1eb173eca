//! Edges where a file meets other software, checked against it: a file moved to another
//! standard opens in Python asdf 6.0 without a warning.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

fn tmpdir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("asdf-rs-edges-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A file Python asdf wrote as 1.5.0, moved to 1.6.0 (`asdf-cli convert --standard 1.6.0`'s
/// `set_standard`): its history names the 1.6.0 core extension, so Python asdf opens it
/// without a warning (it warned on every open while the history kept `core-1.5.0`); and the
/// other way, 1.6.0 to 1.5.0.
#[test]
fn a_file_moved_to_another_standard_names_its_core_extension() {
    let py = asdf_testdata::interop_python();
    let dir = tmpdir("standard");
    for (from, to) in [("1.5.0", "1.6.0"), ("1.6.0", "1.5.0")] {
        let src = dir.join(format!("from-{from}.asdf"));
        let out = Command::new(&py)
            .args([
                "-c",
                "import sys, asdf, numpy as np\n\
                 af = asdf.AsdfFile({'x': np.arange(5.0), 'm': {'a': 1}}, version=sys.argv[2])\n\
                 af.write_to(sys.argv[1])",
            ])
            .arg(&src)
            .arg(from)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let mut f = asdf::open(&src).unwrap();
        f.set_standard(to.parse().unwrap()).unwrap();
        let dst = dir.join(format!("to-{to}.asdf"));
        f.write(&dst, &asdf::WriteOptions::default()).unwrap();
        let text = String::from_utf8_lossy(&std::fs::read(&dst).unwrap()).into_owned();
        assert!(
            text.contains(&format!("core/extensions/core-{to}"))
                && !text.contains(&format!("core/extensions/core-{from}")),
            "{text}"
        );
        let out = Command::new(&py)
            .args([
                "-W",
                "error",
                "-c",
                "import sys, asdf\n\
                 with asdf.open(sys.argv[1]) as f:\n    assert list(f['x']) == [0.0, 1.0, 2.0, 3.0, 4.0]\n    print(f.version_string)",
            ])
            .arg(&dst)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{from} -> {to}: Python asdf warned or failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), to);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Moving a file to a standard before 1.6.0 gives its `time` and `quantity` nodes the versions
/// that standard's core manifest lists, never the astronomy manifests' (which require 1.6.0
/// or later); and back to 1.6.0 they take an astronomy version again. The moved tree is valid
/// under the target standard's schemas.
#[test]
fn a_file_moved_to_an_older_standard_takes_that_standards_tags() {
    let text = "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
                q: !unit/quantity-1.2.0 {value: 1.5, unit: !unit/unit-1.0.0 m}\n\
                t: !time/time-1.2.0 {value: '2020-01-01T00:00:00', format: isot, scale: utc}\n...\n";
    let mut f = asdf::Open::bytes(text.as_bytes().to_vec()).open().unwrap();
    f.set_standard("1.5.0".parse().unwrap()).unwrap();
    let tag = |f: &asdf::AsdfFile, p: &str| f.get(p).unwrap().tag.as_deref().map(str::to_owned);
    assert_eq!(tag(&f, "/q").as_deref(), Some("tag:stsci.edu:asdf/unit/quantity-1.1.0"));
    assert_eq!(tag(&f, "/t").as_deref(), Some("tag:stsci.edu:asdf/time/time-1.1.0"));
    let bytes = f
        .write(asdf::Target::Bytes, &asdf::WriteOptions::default())
        .map(asdf::Written::into_bytes)
        .unwrap();
    let back = asdf::Open::bytes(bytes).open().unwrap();
    let report = back.validate(None, None).unwrap();
    assert!(report.is_valid(), "{:?}", report.violations);
    let mut f = back;
    f.set_standard("1.6.0".parse().unwrap()).unwrap();
    assert!(
        tag(&f, "/q")
            .unwrap()
            .starts_with("tag:stsci.edu:asdf/unit/quantity-1.")
    );
    assert_ne!(tag(&f, "/q").as_deref(), Some("tag:stsci.edu:asdf/unit/quantity-1.1.0"));
}
