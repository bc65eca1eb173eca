//! Golden outputs of `asdf-cli`; refresh with `UPDATE_GOLDEN=1 cargo test -p asdf-cli`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_asdf-cli"))
        .args(args)
        .current_dir(root())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

fn golden(name: &str, args: &[&str], code: i32) {
    let (got_code, text) = run(args);
    assert_eq!(got_code, code, "{name}: {text}");
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.txt"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("{}: missing; run with UPDATE_GOLDEN=1", path.display()));
    assert_eq!(
        text, want,
        "{name}: output changed; rerun with UPDATE_GOLDEN=1 if intended"
    );
}

#[test]
fn info_golden() {
    golden("info_small", &["info", "examples/data/small.asdf", "--show-blocks"], 0);
    golden(
        "info_f_misc",
        &[
            "info",
            "../shared/conformance/python-asdf-samples/f_misc.asdf",
            "--max-rows",
            "12",
        ],
        0,
    );
}

#[test]
fn validate_golden() {
    golden("validate_small", &["validate", "examples/data/small.asdf"], 0);
    golden(
        "validate_invalid",
        &[
            "validate",
            "../shared/conformance/asdf-pytests-data/inline/invalid_ndarray_data_is_mapping.asdf",
        ],
        1,
    );
}

#[test]
fn errors_and_usage() {
    let (code, text) = run(&[
        "info",
        "../shared/conformance/asdf-pytests-data/inline/ff_no_yaml_end_marker.asdf",
    ]);
    assert_eq!(code, 1);
    assert!(text.contains("end of YAML marker"), "{text}");
    let (code, _) = run(&["no-such-command"]);
    assert_eq!(code, 2);
    let (code, text) = run(&["info", "/no/such/file.asdf"]);
    assert_eq!(code, 1);
    assert!(text.contains("/no/such/file.asdf"), "{text}");
}

/// `verify` on every conformance file: exit 0 or 1, never a crash; the corrupt ones exit 1 and
/// say why.
#[test]
fn verify_every_conformance_file() {
    let c = asdf_testdata::conformance_dir();
    let corrupt = [
        "asdf-pytests-data/mutated/basic_bad_checksum.asdf",
        "asdf-pytests-data/mutated/compressed_unknown_label.asdf",
        "asdf-pytests-data/mutated/int_pad_full_magic_before_first_block.asdf",
        "asdf-pytests-data/upstream/block0.asdf",
        "asdf-pytests-data/upstream/block1.asdf",
        "asdf-pytests-data/inline/ff_no_yaml_end_marker.asdf",
        "asdf-pytests-data/inline/ff_block_header_size_40.asdf",
        "asdf-pytests-data/inline/ndarray_inline_shape_mismatch.asdf",
    ];
    let (mut ok, mut failed) = (0, 0);
    for p in asdf_testdata::files_with_ext(&c, "asdf") {
        let rel = p.strip_prefix(&c).unwrap().to_string_lossy().replace('\\', "/");
        let (code, text) = run(&["verify", &p.display().to_string()]);
        assert!(code == 0 || code == 1, "{rel}: exit {code}: {text}");
        if corrupt.contains(&rel.as_str()) {
            assert_eq!(code, 1, "{rel} must fail verification: {text}");
            assert!(
                text.lines()
                    .any(|l| !l.starts_with("block ") || l.contains("mismatch") || l.contains(':')),
                "{rel}"
            );
        }
        if code == 0 { ok += 1 } else { failed += 1 }
    }
    println!("verify: {ok} files verified, {failed} rejected with a message");
    assert!(ok > 200);
}
