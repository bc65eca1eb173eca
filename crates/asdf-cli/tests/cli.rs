//! Golden outputs of `asdf-cli`; refresh with `UPDATE_GOLDEN=1 cargo test -p asdf-tools`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `asdf-cli ARGS` run from the checkout, with `$EDITOR` set to `editor` (and no `$VISUAL`)
/// when given: exit code, stdout + stderr.
fn run_cli(args: &[&str], editor: Option<&str>) -> (i32, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_asdf-cli"));
    cmd.args(args).current_dir(root());
    // `edit` keeps the text it could not apply in a private temporary directory: here that
    // is a directory of the test's own, removed when the run is over.
    let scratch = tempfile::tempdir().unwrap();
    if let Some(e) = editor {
        cmd.env_remove("VISUAL").env("EDITOR", e).env("TMPDIR", scratch.path());
    }
    let out = cmd.output().unwrap();
    drop(scratch);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

/// Whether `../shared/conformance` is beside the checkout (the golden outputs name files by
/// that relative path); when not, one loud `NOT RUN` line (a failure under
/// `ASDF_REQUIRE_CONFORMANCE`) and the caller skips its conformance part.
fn have_shared() -> bool {
    asdf_testdata::conformance_or_skip().is_some() && root().join("../shared/conformance").is_dir()
}

fn run(args: &[&str]) -> (i32, String) {
    run_cli(args, None)
}

fn run_with_editor(args: &[&str], editor: &str) -> (i32, String) {
    run_cli(args, Some(editor))
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

/// A quantity is shown as its value and unit (the typed values of `asdf::core_types`).
#[test]
fn info_shows_quantities() {
    let dir = tempfile_dir("quantity");
    let path = dir.join("q.asdf");
    let mut f = asdf::AsdfFile::new(asdf::Version::STANDARD_LATEST).unwrap();
    let tag = asdf::tag_for(f.standard_version(), "unit/quantity").unwrap();
    let q = asdf::Node::map(vec![
        (asdf::Node::str("value"), asdf::Node::float(3.5)),
        (asdf::Node::str("unit"), asdf::Node::str("km / s")),
    ])
    .with_tag(tag);
    f.set("/speed", q).unwrap();
    f.write(&path, &asdf::WriteOptions::default()).unwrap();
    let (code, text) = run(&["info", &path.display().to_string()]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains(": 3.5 km / s"), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

fn tempfile_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("asdf-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn info_golden() {
    golden("info_small", &["info", "examples/data/small.asdf", "--show-blocks"], 0);
    if !have_shared() {
        return;
    }
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
    if !have_shared() {
        return;
    }
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
    if have_shared() {
        let (code, text) = run(&[
            "info",
            "../shared/conformance/asdf-pytests-data/inline/ff_no_yaml_end_marker.asdf",
        ]);
        assert_eq!(code, 1);
        assert!(text.contains("end of YAML marker"), "{text}");
    }
    // A YAML error shows the line with a caret under the place.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-errors");
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.asdf");
    std::fs::write(
        &bad,
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\na: [1, 2\nb: 3\n...\n",
    )
    .unwrap();
    let (code, text) = run(&["info", &bad.display().to_string()]);
    assert_eq!(code, 1);
    assert!(
        text.ends_with(
            "error: YAML syntax error at 7:1: did not find expected ',' or ']' (while parsing a flow sequence)\n      7 | b: 3\n        | ^\n"
        ),
        "{text}"
    );
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
    asdf_testdata::needs_conformance!();
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
        let f = p.display().to_string();
        for args in [
            vec!["info", &f, "--max-rows", "0"],
            vec!["search", &f],
            vec!["to-yaml", &f, "-o", "/dev/null"],
        ] {
            let (code, text) = run(&args);
            assert!(code == 0 || code == 1, "{args:?}: exit {code}: {text}");
        }
        // Writing to a device writes into it: /dev/null stays the null device.
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt as _;
            let t = std::fs::metadata("/dev/null").unwrap().file_type();
            assert!(t.is_char_device(), "{rel}: /dev/null was replaced");
        }
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

/// Two small files of our own that differ in one array element and one scalar.
fn differing_pair() -> (String, String) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-diff");
    std::fs::create_dir_all(&dir).unwrap();
    let make = |name: &str, third: f64, label: &str| {
        let mut f = asdf::AsdfFile::new(asdf::Version::STANDARD_LATEST).unwrap();
        let data: Vec<u8> = [1.0f64, 2.0, third].iter().flat_map(|x| x.to_le_bytes()).collect();
        f.put_array(
            "/flux",
            asdf::NewArray::from_bytes(
                asdf::Datatype::from_node(&asdf::Node::str("float64")).unwrap(),
                &[3],
                asdf::ByteOrder::Little,
                data,
            ),
        )
        .unwrap();
        f.get_mut("")
            .unwrap()
            .as_mapping_mut()
            .unwrap()
            .insert("label", asdf::Node::str(label));
        let p = dir.join(name);
        f.write(&p, &asdf::WriteOptions::default()).unwrap();
        p.display().to_string()
    };
    (make("a.asdf", 3.0, "first"), make("b.asdf", 4.5, "second"))
}

#[test]
fn diff_golden() {
    // Array values and scalars that differ, in full and minimal form.
    let (a, b) = differing_pair();
    let (code, text) = run(&["diff", &a, &b, "-i", "/asdf_library"]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("/flux: 1 of 3 elements differ; first at flat index 2: 3.0 != 4.5"),
        "{text}"
    );
    assert!(text.contains("/label: \"first\" != \"second\""), "{text}");
    let (code, text) = run(&["diff", "-m", &a, &b, "-i", "/asdf_library"]);
    assert_eq!((code, text.as_str()), (1, "/flux\n/label\n"));
    if !have_shared() {
        return;
    }
    let s = "../shared/conformance/asdf-standard/reference_files";
    golden(
        "diff_basic_versions",
        &[
            "diff",
            &format!("{s}/1.0.0/basic.asdf"),
            &format!("{s}/1.1.0/basic.asdf"),
        ],
        1,
    );
    let (code, text) = run(&[
        "diff",
        "-i",
        "/asdf_library",
        &format!("{s}/1.0.0/basic.asdf"),
        &format!("{s}/1.1.0/basic.asdf"),
    ]);
    assert_eq!((code, text.as_str()), (0, ""), "only asdf_library differs");
    // A file against itself, and against a copy with other compression: no difference.
    let (code, text) = run(&[
        "diff",
        &format!("{s}/1.6.0/basic.asdf"),
        &format!("{s}/1.6.0/basic.asdf"),
    ]);
    assert_eq!((code, text.as_str()), (0, ""));
    let samples = "../shared/conformance/python-asdf-samples";
    let (code, text) = run(&[
        "diff",
        &format!("{samples}/b_zlib.asdf"),
        &format!("{samples}/b_lz4.asdf"),
    ]);
    assert_eq!((code, text.as_str()), (0, ""), "same arrays, other compression");
}

#[test]
fn search_golden() {
    if !have_shared() {
        return;
    }
    let f = "../shared/conformance/python-asdf-samples/f_misc.asdf";
    golden("search_ndarray", &["search", f, "--type", "ndarray"], 0);
    golden("search_key_value", &["search", f, "--key", "^n", "--value", "asdf"], 0);
    let (code, text) = run(&["search", f, "--value", "no such value anywhere"]);
    assert_eq!((code, text.as_str()), (1, ""));
    let (code, text) = run(&["search", f, "--key", "(unclosed"]);
    assert_eq!(code, 2, "{text}");
}

#[test]
fn catalog_commands() {
    asdf_testdata::needs_conformance!();
    golden("tags_1_6_0", &["tags", "--standard", "1.6.0"], 0);
    golden("extensions", &["extensions"], 0);
    let (code, text) = run(&["schemas"]);
    assert_eq!(code, 0);
    assert!(
        text.lines()
            .any(|l| l == "http://stsci.edu/schemas/asdf/core/ndarray-1.1.0"),
        "{text}"
    );
    // Every schema file in the standard's copy is listed.
    let std_dir = asdf_testdata::conformance_dir().join("asdf-standard/resources/stable/schemas/stsci.edu/asdf");
    let mut n = 0;
    for p in asdf_testdata::files_with_ext(&std_dir, "yaml") {
        let rel = p.strip_prefix(&std_dir).unwrap().with_extension("");
        if rel.to_string_lossy().starts_with("version_map-") {
            continue; // data (tag versions per standard), not a schema
        }
        let id = format!(
            "http://stsci.edu/schemas/asdf/{}",
            rel.to_string_lossy().replace('\\', "/")
        );
        assert!(text.lines().any(|l| l == id), "{id} not listed");
        n += 1;
    }
    assert!(n > 50, "{n}");
    let (code, _) = run(&["tags", "--standard", "2.0.0"]);
    assert_eq!(code, 1);
    let (code, _) = run(&["tags", "--standard", "one"]);
    assert_eq!(code, 2);
}

/// `to-json` on every conformance file: valid JSON (or exit 1 with a message), never a crash,
/// every array's data nested as its shape says; one golden output.
#[test]
fn to_json_every_conformance_file() {
    asdf_testdata::needs_conformance!();
    golden(
        "to_json_basic",
        &[
            "to-json",
            "../shared/conformance/asdf-standard/reference_files/1.6.0/basic.asdf",
        ],
        0,
    );
    fn check_arrays(v: &serde_json::Value, at: &str, n: &mut usize) {
        match v {
            serde_json::Value::Object(m) => {
                let nd = m.get("$tag").and_then(|t| t.as_str()).is_some_and(asdf::is_ndarray_tag);
                if nd && m.contains_key("$error") {
                    return;
                }
                if nd && let (Some(shape), Some(data)) = (m.get("shape"), m.get("data")) {
                    let shape: Vec<usize> = shape
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|d| usize::try_from(d.as_u64().unwrap()).unwrap())
                        .collect();
                    let mut level = vec![data];
                    for (k, &d) in shape.iter().enumerate() {
                        let mut next = Vec::new();
                        for x in level {
                            let xs = x.as_array().unwrap_or_else(|| panic!("{at}: dim {k} not a list"));
                            assert_eq!(xs.len(), d, "{at}: dim {k}");
                            next.extend(xs);
                        }
                        level = next;
                    }
                    *n += 1;
                    return;
                }
                for (k, x) in m {
                    check_arrays(x, &format!("{at}/{k}"), n);
                }
            }
            serde_json::Value::Array(xs) => {
                for (i, x) in xs.iter().enumerate() {
                    check_arrays(x, &format!("{at}/{i}"), n);
                }
            }
            _ => {}
        }
    }
    let c = asdf_testdata::conformance_dir();
    let (mut files, mut arrays) = (0, 0);
    for p in asdf_testdata::files_with_ext(&c, "asdf") {
        let out = Command::new(env!("CARGO_BIN_EXE_asdf-cli"))
            .args(["to-json", &p.display().to_string()])
            .output()
            .unwrap();
        let code = out.status.code().unwrap_or(-1);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(code == 0 || code == 1, "{}: exit {code}: {err}", p.display());
        if code == 1 {
            assert!(err.starts_with("error: "), "{}: {err}", p.display());
            continue;
        }
        let v: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{}: not JSON: {e}", p.display()));
        check_arrays(&v, "", &mut arrays);
        files += 1;
    }
    println!("to-json: {files} files, {arrays} arrays");
    assert!(files > 200 && arrays > 300, "{files} files, {arrays} arrays");
}

/// Anchors whose aliases point back into themselves (legal YAML): every command that walks the
/// tree stops at the cycle instead of overflowing the stack.
#[test]
fn recursive_aliases_do_not_loop() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-recursive");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("rec.asdf");
    std::fs::write(
        &p,
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
         a: &x [1, *x]\nb: &y {k: *y}\n...\n",
    )
    .unwrap();
    let f = p.display().to_string();
    let (code, text) = run(&["info", &f]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("[1] (alias *x, back to an ancestor)"), "{text}");
    let (code, text) = run(&["search", &f, "--value", "1"]);
    assert_eq!((code, text.as_str()), (0, "/a/0 (int): 1\n"));
    let (code, text) = run(&["diff", &f, &f]);
    assert_eq!((code, text.as_str()), (0, ""));
    let (code, text) = run(&["to-json", &f]);
    assert_eq!(code, 0, "{text}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["a"][1]["$alias"], "x");
    assert_eq!(v["b"]["k"]["$alias"], "y");
}

/// `diff` follows the second tree along the walk of the first: keys only in either file,
/// lengths, kinds and tags that differ, an alias cycle in one file only, and `--ignore`.
#[test]
fn diff_of_structures() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-diff-structures");
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, tree: &str| {
        let p = dir.join(name);
        std::fs::write(
            &p,
            format!("#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n{tree}...\n"),
        )
        .unwrap();
        p.display().to_string()
    };
    let a = write(
        "a.asdf",
        "same: {x: 1, y: [1, 2]}\nfirst_only: 1\nlonger: [1, 2, 3]\nkind: {k: 1}\nloop: &l {next: *l}\nskip: {p: 1}\n",
    );
    let b = write(
        "b.asdf",
        "same: {x: 1.0, y: [1, 2]}\nsecond_only: 2\nlonger: [1, 2]\nkind: [1]\nloop: {next: {next: 1}}\nskip: {p: 2}\n",
    );
    let (code, text) = run(&["diff", &a, &b, "-i", "/skip"]);
    assert_eq!(code, 1, "{text}");
    let want = [
        "/first_only: only in the first file",
        "/longer: length 3 != 2",
        "/kind: mapping of 1 != sequence of 1",
        "/loop/next: an alias back to an ancestor in only one file",
        "/second_only: only in the second file",
        "5 difference(s)",
    ];
    assert_eq!(text.lines().collect::<Vec<_>>(), want, "{text}");
    // The other way round: the cycle is met in the second tree.
    let (code, text) = run(&["diff", "-m", &b, &a]);
    assert_eq!(code, 1, "{text}");
    assert_eq!(
        text.lines().collect::<Vec<_>>(),
        [
            "/second_only",
            "/longer",
            "/kind",
            "/loop/next",
            "/skip/p",
            "/first_only"
        ],
        "{text}"
    );
}

/// `edit` with scripted editors: a good edit is written (arrays intact), a YAML error, a schema
/// violation or a failing editor leave the file byte for byte as it was.
#[test]
fn edit_with_scripted_editors() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-edit");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("small.asdf");
    std::fs::copy(root().join("examples/data/small.asdf"), &p).unwrap();
    let f = p.display().to_string();
    let edit = |editor: &str| run_with_editor(&["edit", &f], editor);
    let (code, text) = edit("true");
    assert_eq!((code, text.as_str()), (0, "no changes\n"));
    let (code, text) = edit("sed -i 's/asdf-rs example/an edited observer/'");
    assert_eq!(code, 0, "{text}");
    let (code, text) = run(&["diff", "examples/data/small.asdf", &f]);
    assert_eq!(
        (code, text.as_str()),
        (
            1,
            "/observer: \"asdf-rs example\" != \"an edited observer\"\n1 difference(s)\n"
        )
    );
    let (code, text) = run(&["verify", &f]);
    assert_eq!(code, 0, "{text}");
    let before = std::fs::read(&p).unwrap();
    for (editor, expect) in [
        (
            "sed -i 's/byteorder: little/byteorder: middle/'",
            "'middle' is not one of the allowed values",
        ),
        ("sed -i 's/^counts:/counts: [/'", "YAML syntax error at 7:9"),
        ("false", "the editor `false` failed"),
    ] {
        let (code, text) = edit(editor);
        assert_eq!(code, 1, "{editor}: {text}");
        assert!(text.contains(expect), "{editor}: {text}");
        assert!(text.contains("is unchanged"), "{editor}: {text}");
        assert_eq!(std::fs::read(&p).unwrap(), before, "{editor}: file changed");
    }
}

/// `edit --in-place`: a shorter tree goes over the old one (blocks untouched, same length);
/// a tree that does not fit is written by a safe rewrite.
#[test]
fn edit_in_place() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-edit-in-place");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("small.asdf");
    std::fs::copy(root().join("examples/data/small.asdf"), &p).unwrap();
    let f = p.display().to_string();
    let edit = |editor: &str| run_with_editor(&["edit", "--in-place", &f], editor);
    let before = std::fs::read(&p).unwrap();
    let (code, text) = edit("sed -i 's/asdf-rs example/short/'");
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("in place"), "{text}");
    let after = std::fs::read(&p).unwrap();
    assert_eq!(after.len(), before.len());
    // Everything from the first block on is byte for byte the same.
    let first_block = before.windows(4).position(|w| w == b"\xd3BLK").unwrap();
    assert_eq!(after[first_block..], before[first_block..]);
    let (code, text) = run(&["verify", &f]);
    assert_eq!(code, 0, "{text}");
    let (code, text) = edit(&format!("sed -i 's/short/{}/'", "x".repeat(300)));
    assert_eq!(code, 0, "{text}");
    // Why, in words (review finding: it printed `TreeTooLarge { need: .., room: .. }`).
    assert!(
        text.contains("rewrote") && text.contains("whole: the new tree needs") && !text.contains("TreeTooLarge"),
        "{text}"
    );
    let (code, text) = run(&["verify", &f]);
    assert_eq!(code, 0, "{text}");
}

/// `validate --schema`, `--schema-dir` and `--skip-block-validation`.
#[test]
fn validate_options() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-validate");
    let ext = dir.join("ext");
    std::fs::create_dir_all(&ext).unwrap();
    let custom = dir.join("custom.yaml");
    std::fs::write(
        &custom,
        "%YAML 1.1\n---\n$schema: http://stsci.edu/schemas/yaml-schema/draft-01\n\
         id: http://example.org/schemas/custom-1.0.0\ntype: object\n\
         properties:\n  observer: {type: string, maxLength: 5}\nrequired: [observer, telescope]\n...\n",
    )
    .unwrap();
    let (code, text) = run(&[
        "validate",
        "examples/data/small.asdf",
        "--schema",
        &custom.display().to_string(),
    ]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("/observer (line 18:11): 'asdf-rs example' is too long"),
        "{text}"
    );
    assert!(text.contains("'telescope' is a required property"), "{text}");
    assert!(text.ends_with("2 violation(s)\n"), "{text}");

    // An extension: a manifest and a schema for a tag the standard does not have.
    std::fs::write(
        ext.join("manifest.yaml"),
        "%YAML 1.1\n---\nid: asdf://example.org/manifests/things-1.0.0\n\
         extension_uri: asdf://example.org/extensions/things-1.0.0\n\
         tags:\n- tag_uri: asdf://example.org/tags/thing-1.0.0\n  schema_uri: asdf://example.org/schemas/thing-1.0.0\n...\n",
    )
    .unwrap();
    std::fs::write(
        ext.join("thing.yaml"),
        "%YAML 1.1\n---\n$schema: http://stsci.edu/schemas/yaml-schema/draft-01\n\
         id: asdf://example.org/schemas/thing-1.0.0\ntype: object\n\
         properties:\n  name: {type: string}\nrequired: [name]\n...\n",
    )
    .unwrap();
    let file = dir.join("thing.asdf");
    std::fs::write(
        &file,
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
         thing: !<asdf://example.org/tags/thing-1.0.0> {name: 3}\n...\n",
    )
    .unwrap();
    let f = file.display().to_string();
    let (code, text) = run(&["validate", &f]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("is not recognized"), "unknown tag warned: {text}");
    let (code, text) = run(&["validate", &f, "--schema-dir", &ext.display().to_string()]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("/thing/name (line 6:"), "{text}");
    assert!(text.contains("3 is not of type 'string'"), "{text}");

    // Before 1.6.0, an extension schema's defaults are filled in before validating (Python
    // asdf does): a required property with a default is not missing (gwcs's rotate3d
    // `direction` in old files).
    std::fs::write(
        ext.join("rot.yaml"),
        "%YAML 1.1\n---\n$schema: http://stsci.edu/schemas/yaml-schema/draft-01\n\
         id: asdf://example.org/schemas/rot-1.0.0\ntype: object\n\
         properties:\n  direction: {enum: [zxz, xyz], default: zxz}\nrequired: [direction]\n...\n",
    )
    .unwrap();
    std::fs::write(
        ext.join("manifest2.yaml"),
        "%YAML 1.1\n---\nid: asdf://example.org/manifests/rot-1.0.0\n\
         extension_uri: asdf://example.org/extensions/rot-1.0.0\n\
         tags:\n- tag_uri: asdf://example.org/tags/rot-1.0.0\n  schema_uri: asdf://example.org/schemas/rot-1.0.0\n...\n",
    )
    .unwrap();
    for (standard, want) in [("1.5.0", 0), ("1.6.0", 1)] {
        let old = dir.join(format!("rot-{standard}.asdf"));
        std::fs::write(
            &old,
            format!(
                "#ASDF 1.0.0\n#ASDF_STANDARD {standard}\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
                 r: !<asdf://example.org/tags/rot-1.0.0> {{angle: 1}}\n...\n"
            ),
        )
        .unwrap();
        let (code, text) = run(&[
            "validate",
            &old.display().to_string(),
            "--schema-dir",
            &ext.display().to_string(),
        ]);
        assert_eq!(code, want, "{standard}: {text}");
        if want == 1 {
            assert!(text.contains("'direction' is a required property"), "{text}");
        }
        // Every command reads with the extension's schemas when given them (a global option):
        // `to-json` shows the filled default as Python's default open does, before 1.6.0 only.
        let (code, text) = run(&["to-json", &old.display().to_string()]);
        assert_eq!(code, 0, "{text}");
        assert!(
            !text.contains("direction"),
            "{standard}: no default without the schemas: {text}"
        );
        let (code, text) = run(&[
            "--schema-dir",
            &ext.display().to_string(),
            "to-json",
            &old.display().to_string(),
        ]);
        assert_eq!(code, 0, "{text}");
        assert_eq!(text.contains("\"direction\": \"zxz\""), want == 0, "{standard}: {text}");
        assert!(
            !text.contains("is not recognized"),
            "{standard}: the tag is known now: {text}"
        );
    }

    // A folder schema claiming a known id (dkist ships a custom schema with the id of
    // core/asdf-1.1.0) does not replace the standard's: skipped with a warning.
    let shadow = dir.join("shadow");
    std::fs::create_dir_all(&shadow).unwrap();
    std::fs::write(
        shadow.join("level_1.yaml"),
        "%YAML 1.1\n---\n$schema: http://stsci.edu/schemas/yaml-schema/draft-01\n\
         id: http://stsci.edu/schemas/asdf/core/asdf-1.1.0\ntype: object\nrequired: [inversion]\n...\n",
    )
    .unwrap();
    let (code, text) = run(&[
        "validate",
        "examples/data/small.asdf",
        "--schema-dir",
        &shadow.display().to_string(),
    ]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains(
            "declares the id http://stsci.edu/schemas/asdf/core/asdf-1.1.0, which is already known: not used"
        ),
        "{text}"
    );

    // Block problems count unless skipped.
    if !have_shared() {
        return;
    }
    let bad = "../shared/conformance/asdf-pytests-data/mutated/basic_bad_checksum.asdf";
    let (code, text) = run(&["validate", bad]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("checksum mismatch"), "{text}");
    let (code, text) = run(&["validate", bad, "--skip-block-validation"]);
    assert_eq!(code, 0, "{text}");
}

#[test]
fn to_yaml_golden() {
    asdf_testdata::needs_conformance!();
    golden(
        "to_yaml_basic",
        &[
            "to-yaml",
            "../shared/conformance/asdf-standard/reference_files/1.6.0/basic.asdf",
        ],
        0,
    );
    // The result is an ASDF file without blocks that validates, with the same array values.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-to-yaml");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("f_misc.asdf");
    let src = "../shared/conformance/python-asdf-samples/f_misc.asdf";
    let (code, text) = run(&["to-yaml", src, "-o", &out.display().to_string()]);
    assert_eq!(code, 0, "{text}");
    let (code, text) = run(&["validate", &out.display().to_string()]);
    assert_eq!(code, 0, "{text}");
    let (code, text) = run(&["diff", src, &out.display().to_string()]);
    assert_eq!((code, text.as_str()), (0, ""), "same tree and arrays");
    let f = asdf::open(&out).unwrap();
    assert_eq!(f.source().layout().block_count(), 0);
    // Every sample and reference file: to-yaml gives the same tree and arrays (masks included).
    let c = asdf_testdata::conformance_dir();
    let mut files = asdf_testdata::files_with_ext(&c.join("python-asdf-samples"), "asdf");
    files.extend(asdf_testdata::files_with_ext(
        &c.join("asdf-standard/reference_files"),
        "asdf",
    ));
    for p in &files {
        let src = p.display().to_string();
        let (code, text) = run(&["to-yaml", &src, "-o", &out.display().to_string()]);
        assert_eq!(code, 0, "{src}: {text}");
        let (code, text) = run(&["diff", &src, &out.display().to_string()]);
        assert_eq!((code, text.as_str()), (0, ""), "{src}");
    }
    assert!(files.len() > 100);
}

/// `defragment -c none` by the CLI over every Python-written sample and reference file: the
/// output is byte for byte the library's write (which the interop suite has Python asdf 6.0
/// read, with validation and checksums), and our `verify` and `validate` accept it.
#[test]
fn defragment_none_verify_validate() {
    asdf_testdata::needs_conformance!();
    let c = asdf_testdata::conformance_dir();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-defrag");
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = asdf_testdata::files_with_ext(&c.join("python-asdf-samples"), "asdf");
    files.extend(asdf_testdata::files_with_ext(
        &c.join("asdf-standard/reference_files"),
        "asdf",
    ));
    let mut n = 0;
    for (i, p) in files.iter().enumerate() {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name.contains("exploded0") {
            continue; // the block file of an exploded sample
        }
        let out = dir.join(format!("{i:03}_{name}"));
        let o = out.display().to_string();
        let (code, text) = run(&["defragment", &p.display().to_string(), "-o", &o, "-c", "none"]);
        assert_eq!(code, 0, "{name}: {text}");
        let f = asdf::Open::path(p)
            .options(asdf::OpenOptions::default().validate(false))
            .open()
            .unwrap();
        let lib = f
            .write(
                asdf::Target::Bytes,
                &asdf::WriteOptions::default()
                    .validate(false)
                    .compression(asdf::Compression::All(asdf::Label::NONE)),
            )
            .map(asdf::Written::into_bytes)
            .unwrap();
        assert!(
            std::fs::read(&out).unwrap() == lib,
            "{name}: CLI output differs from the library's write"
        );
        for cmd in ["verify", "validate"] {
            let (code, text) = run(&[cmd, &o]);
            assert_eq!(code, 0, "{cmd} {name}: {text}");
        }
        n += 1;
    }
    println!("defragment -c none: {n} files verified and validated");
    assert!(n > 100, "{n}");
}

/// Every case Python asdf's suite expects to fail (at open, on access, or when checksums are
/// checked): `verify` or `validate` rejects it with a message. Bad `$ref`s fail only when
/// references are resolved, which neither command does (as in Python).
#[test]
fn failing_expectations_are_rejected() {
    asdf_testdata::needs_conformance!();
    let base = asdf_testdata::conformance_dir().join("asdf-pytests-data");
    let e: serde_json::Value = serde_json::from_slice(&std::fs::read(base.join("EXPECTATIONS.json")).unwrap()).unwrap();
    let mut n = 0;
    for c in e["cases"].as_array().unwrap() {
        let file = c["file"].as_str().unwrap();
        let expect = c["expect"].as_str().unwrap();
        // File format 0.1.0 is read here (the pre-1.0 drafts), where Python refuses it.
        if !matches!(expect, "error" | "error_on_access" | "ok_unless_validating")
            || file.starts_with("inline/refs/")
            || file == "inline/ff_file_format_0.1.0.asdf"
        {
            continue;
        }
        let p = base.join(file).display().to_string();
        let (vcode, vtext) = run(&["verify", &p]);
        let (code, text) = run(&["validate", &p]);
        assert!(
            vcode == 1 || code == 1,
            "{file}: verify {vcode} {vtext}\nvalidate {code} {text}"
        );
        assert!(!vtext.is_empty() && !text.is_empty(), "{file}: no message");
        n += 1;
    }
    println!("{n} failing cases rejected");
    assert!(n >= 30, "{n}");
}

/// No command panics on damaged files: byte-mutated copies of the Python-written samples go
/// through info, verify, to-json, to-yaml, validate, search and diff; every run ends with exit
/// code 0, 1 or 2 (a panic would be 101).
#[test]
fn damaged_files_never_crash_a_command() {
    asdf_testdata::needs_conformance!();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-damaged");
    std::fs::create_dir_all(&dir).unwrap();
    let samples = asdf_testdata::files_with_ext(&asdf_testdata::conformance_dir().join("python-asdf-samples"), "asdf");
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut runs = 0;
    for (i, p) in samples.iter().enumerate() {
        let original = std::fs::read(p).unwrap();
        if original.len() > 1 << 20 {
            continue;
        }
        for round in 0..4 {
            let mut bytes = original.clone();
            for _ in 0..3 {
                let at = usize::try_from(next() % bytes.len() as u64).unwrap();
                bytes[at] = u8::try_from(next() % 256).unwrap();
            }
            let f = dir.join(format!("d{i}_{round}.asdf"));
            std::fs::write(&f, &bytes).unwrap();
            let f = f.display().to_string();
            for args in [
                vec!["info", f.as_str()],
                vec!["verify", f.as_str()],
                vec!["to-json", f.as_str()],
                vec!["to-yaml", f.as_str()],
                vec!["validate", f.as_str()],
                vec!["search", f.as_str(), "--key", "data"],
                vec!["diff", f.as_str(), p.to_str().unwrap()],
            ] {
                let (code, text) = run(&args);
                assert!((0..=2).contains(&code), "{args:?}: exit {code}\n{text}");
                runs += 1;
            }
        }
    }
    assert!(runs > 500, "{runs}");
}

/// The file changes while the editor is open (another writer updated it): `edit --in-place`
/// and a plain `edit` refuse, keep the user's text, and leave the other writer's bytes alone.
#[test]
fn edit_refuses_a_file_changed_while_the_editor_was_open() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-edit-race");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("small.asdf");
    let other = dir.join("other.asdf");
    for in_place in [true, false] {
        std::fs::copy(root().join("examples/data/small.asdf"), &p).unwrap();
        // Another writer: the same file with a different tree, written over it in place.
        let (code, text) = run_with_editor(
            &["edit", "--in-place", &p.display().to_string()],
            "sed -i 's/asdf-rs example/other writer/'",
        );
        assert_eq!(code, 0, "{text}");
        std::fs::copy(&p, &other).unwrap();
        std::fs::copy(root().join("examples/data/small.asdf"), &p).unwrap();
        // The editor, while open, sees the other writer land (its bytes copied over the file),
        // then makes its own change.
        let script = dir.join("editor.sh");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\ncat '{}' > '{}'\nsed -i 's/asdf-rs example/mine/' \"$1\"\n",
                other.display(),
                p.display()
            ),
        )
        .unwrap();
        let landed = std::fs::read(&other).unwrap();
        let mut args = vec!["edit"];
        if in_place {
            args.push("--in-place");
        }
        let f = p.display().to_string();
        args.push(&f);
        let (code, text) = run_with_editor(&args, &format!("sh '{}'", script.display()));
        assert_eq!(code, 1, "in place {in_place}: {text}");
        assert!(text.contains("changed since it was opened"), "{text}");
        assert_eq!(
            std::fs::read(&p).unwrap(),
            landed,
            "the other writer's bytes were touched"
        );
        assert!(text.contains("your edit is kept in"), "{text}");
    }
}

/// `validate --python-resources PYTHON` validates with the schemas that the Python packages
/// installed there register with asdf (asdf-wcs-schemas, from the interop requirements):
/// a gwcs step without its required `frame` is found; without the flag the tag is unknown.
#[test]
fn validate_with_the_resources_python_packages_register() {
    let python = asdf_testdata::interop_python();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-python-resources");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("step.asdf");
    std::fs::write(
        &file,
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
         step: !<tag:stsci.edu:gwcs/step-1.2.0> {transform: null}\n...\n",
    )
    .unwrap();
    let f = file.display().to_string();
    let (code, text) = run(&["validate", &f]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("is not recognized"), "{text}");
    let (code, text) = run(&["validate", &f, "--python-resources", &python.display().to_string()]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("/step (line 6:"), "{text}");
    assert!(text.contains("'frame' is a required property"), "{text}");
    assert!(text.contains("resources from"), "{text}");
    let (code, text) = run(&["validate", &f, "--python-resources", "/no/such/python"]);
    assert_eq!(code, 1, "{text}");
}

/// `convert` upgrades a pre-1.0 draft (the ASDF 0.1.0 draft's encoded block, a zlib encoding chain) to ASDF
/// 1.6.0: the result verifies, validates and holds the same values; FITS output and unknown
/// formats are usage errors.
#[test]
fn convert_upgrades_a_draft() {
    asdf_testdata::needs_conformance!();
    let src =
        asdf_testdata::conformance_dir().join("legacy/asdf-standard-history/2015-01-29-3857687/0.1.0/compressed.asdf");
    let src = src.display().to_string();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-convert");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("up.asdf").display().to_string();
    let (code, text) = run(&["convert", &src, "-o", &out]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("from the ASDF 0.1.0 draft; ASDF Standard 1.6.0"),
        "{text}"
    );
    assert!(
        std::fs::read(&out)
            .unwrap()
            .starts_with(b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n")
    );
    assert_eq!(run(&["verify", &out]).0, 0);
    assert_eq!(run(&["validate", &out]).0, 0);
    // The values are the same; only the root's tag moved to 1.6.0's version.
    let (code, diff) = run(&["diff", &src, &out, "-i", "/asdf_library", "-i", "/history"]);
    assert_eq!(code, 1, "{diff}");
    assert!(
        diff.contains("/: tag tag:stsci.edu:asdf/core/asdf-1.0.0 != tag:stsci.edu:asdf/core/asdf-1.1.0")
            && diff.contains("1 difference(s)"),
        "{diff}"
    );
    let (_, json) = run(&["to-json", &out]);
    assert!(json.contains("core/ndarray-1.1.0") && json.contains("127"), "{json}");
    // And back to the drafts: FINF, then the FINF file upgraded again, same values.
    let finf = dir.join("down.finf").display().to_string();
    let (code, text) = run(&["convert", &out, "-o", &finf, "--to", "finf"]);
    assert_eq!(code, 0, "{text}");
    assert!(std::fs::read(&finf).unwrap().starts_with(b"%FINF 0.1.0\n"));
    let again = dir.join("again.asdf").display().to_string();
    assert_eq!(run(&["convert", &finf, "-o", &again]).0, 0);
    let (code, diff) = run(&["diff", &out, &again, "-i", "/asdf_library", "-i", "/history"]);
    assert_eq!(code, 0, "{diff}");
    // A draft straight to FITS (the extension says so): the arrays in IMAGE HDUs.
    let fits = dir.join("x.fits").display().to_string();
    assert_eq!(run(&["convert", &src, "-o", &fits]).0, 0);
    assert!(std::fs::read(&fits).unwrap().starts_with(b"SIMPLE  ="));
    let (code, json) = run(&["to-json", &fits]);
    assert!(code == 0 && json.contains("127"), "{json}");
    assert_eq!(run(&["convert", &src, "-o", &out, "--to", "hdf5"]).0, 2);
    assert_eq!(run(&["convert", &src, "-o", &out, "--standard", "9.9"]).0, 2);
}

/// A FITS file holding ASDF (Appendix A's IMAGE form): `info` lists the HDUs beside the tree,
/// `to-json` reads the array from its HDU, `convert` writes plain ASDF.
#[test]
fn fits_files_open_everywhere() {
    fn header(cards: &[String]) -> Vec<u8> {
        let mut v: Vec<u8> = cards
            .iter()
            .map(String::as_str)
            .chain(["END"])
            .flat_map(|c| format!("{c:<80}").into_bytes())
            .collect();
        v.resize(v.len().div_ceil(2880) * 2880, b' ');
        v
    }
    let padded = |d: &[u8]| {
        let mut v = d.to_vec();
        v.resize(v.len().div_ceil(2880) * 2880, 0);
        v
    };
    let card = |k: &str, v: &str| format!("{k:<8}= {v:>20}");
    let asdf = b"#ASDF 1.0.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\nflux: !core/ndarray-1.0.0 {source: 'fits:FLUX,2', datatype: int16, byteorder: big, shape: [3]}\n...\n";
    let mut f = header(&[card("SIMPLE", "T"), card("BITPIX", "8"), card("NAXIS", "0")]);
    f.extend(header(&[
        card("XTENSION", "'IMAGE'"),
        card("BITPIX", "16"),
        card("NAXIS", "1"),
        card("NAXIS1", "3"),
        card("EXTNAME", "'FLUX'"),
        card("EXTVER", "2"),
    ]));
    f.extend(padded(&[0, 7, 255, 254, 1, 0]));
    f.extend(header(&[
        card("XTENSION", "'IMAGE'"),
        card("BITPIX", "8"),
        card("NAXIS", "1"),
        card("NAXIS1", &asdf.len().to_string()),
        card("EXTNAME", "'ASDF'"),
    ]));
    f.extend(padded(asdf));
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-fits");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("obs.fits");
    std::fs::write(&p, &f).unwrap();
    let p = p.display().to_string();
    let (code, text) = run(&["info", &p]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("FITS file, 3 HDU(s)") && text.contains("FLUX       ver 2"),
        "{text}"
    );
    let (code, json) = run(&["to-json", &p]);
    assert_eq!(code, 0, "{json}");
    let j: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(j["flux"]["data"], serde_json::json!([7, -2, 256]));
    let out = dir.join("obs.asdf").display().to_string();
    let (code, text) = run(&["convert", &p, "-o", &out]);
    assert_eq!(code, 0, "{text}");
    let (code, json) = run(&["to-json", &out]);
    assert_eq!(code, 0, "{json}");
    let j: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(j["flux"]["data"], serde_json::json!([7, -2, 256]));
    // And back to FITS (the _fits node kept the headers), with checksums; then the appendix's
    // IMAGE form; a bad form is a usage error.
    let back = dir.join("back.fits").display().to_string();
    let (code, text) = run(&["convert", &out, "-o", &back, "--fits-checksum"]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("FITS with the ASDF tree in the ASDF HDU"), "{text}");
    let (code, text) = run(&["info", &back]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("FLUX       ver 2"), "{text}");
    let (code, json) = run(&["to-json", &back]);
    assert_eq!(code, 0, "{json}");
    let j: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(j["flux"]["data"], serde_json::json!([7, -2, 256]));
    assert!(j.get("_fits").is_none(), "{json}");
    let img = dir.join("img.fits").display().to_string();
    let (code, text) = run(&["convert", &back, "-o", &img, "--fits-form", "image"]);
    assert_eq!(code, 0, "{text}");
    let (code, text) = run(&["info", &img]);
    assert!(code == 0 && text.contains("ASDF       ver 1   IMAGE"), "{text}");
    let (code, _) = run(&["convert", &back, "-o", &img, "--fits-form", "tile"]);
    assert_eq!(code, 2);
}

/// `get` with `--slice`: the `.npy` files it writes load in numpy equal to numpy's slicing of
/// what Python asdf (+ asdf-zarr) reads, for chunked arrays and block arrays of random files;
/// JSON on standard output gives the same values; a bad slice is a usage error.
#[test]
fn get_writes_what_numpy_loads() {
    let py = asdf_testdata::interop_python();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-get");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let made = std::process::Command::new(&py)
        .arg(root().join("tests/interop/zarr_random.py"))
        .arg(&dir)
        .args(["6", "get"])
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let mut checks = Vec::new();
    for i in 0..6 {
        let asdf = dir.join(format!("z{i:05}.asdf"));
        let expected: serde_json::Value =
            serde_json::from_slice(&std::fs::read(asdf.with_extension("json")).unwrap()).unwrap();
        for (pointer, want) in expected.as_object().unwrap() {
            if want["dtype"].as_str().is_some_and(|d| d.contains('c')) {
                continue; // complex: not written by `get`
            }
            for (k, r) in want["regions"].as_array().unwrap().iter().enumerate() {
                let npy = dir.join(format!("z{i}{}_{k}.npy", pointer.replace('/', "_")));
                let slice = r["region"].as_str().unwrap();
                let (code, text) = run(&[
                    "get",
                    &asdf.display().to_string(),
                    pointer,
                    "--slice",
                    slice,
                    "-o",
                    &npy.display().to_string(),
                ]);
                assert_eq!(code, 0, "{text}");
                checks.push(serde_json::json!({"npy": npy, "shape": r["shape"], "values": r["values"]}));
                // The same region as JSON on standard output.
                let (code, text) = run(&["get", &asdf.display().to_string(), pointer, "--slice", slice]);
                assert_eq!(code, 0, "{text}");
                let j: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
                assert_eq!(j["shape"], r["shape"], "{slice}");
            }
        }
    }
    let manifest = dir.join("checks.json");
    std::fs::write(&manifest, serde_json::to_vec(&checks).unwrap()).unwrap();
    let script = r#"
import json, math, sys
import numpy as np
checks = json.load(open(sys.argv[1]))
bad = 0
for c in checks:
    a = np.load(c["npy"])
    flat = [None if isinstance(x, float) and math.isnan(x) else x for x in a.ravel().tolist()]
    if list(a.shape) != c["shape"] or flat != c["values"]:
        bad += 1
        print("differs:", c["npy"], a.shape, c["shape"], file=sys.stderr)
print(len(checks) - bad, bad)
"#;
    let (good, bad) = python_counts(&py, script, &manifest);
    println!("get: {good} .npy files loaded by numpy equal, {bad} differ");
    assert_eq!(bad, 0);
    assert!(good >= 20, "{good}");
    let (code, text) = run(&[
        "get",
        &dir.join("z00000.asdf").display().to_string(),
        "/z",
        "--slice",
        "1:2:0",
    ]);
    assert_eq!((code, text.trim()), (2, "error: --slice: a slice step cannot be zero"));
}

/// Runs the Python `script` with `manifest` (and the interop scripts' folder) as arguments; its
/// last line is two counts: (equal, different). Its standard error is shown when it fails.
fn python_counts(py: &Path, script: &str, manifest: &Path) -> (usize, usize) {
    let out = std::process::Command::new(py)
        .args(["-c", script])
        .arg(manifest)
        .arg(root().join("tests/interop"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let counts: Vec<usize> = text
        .lines()
        .last()
        .unwrap_or_default()
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    if counts[1] != 0 {
        eprintln!("{err}");
    }
    (counts[0], counts[1])
}

/// `defragment` and `convert` of files Python asdf + asdf-zarr wrote, with `--chunks` storing
/// the plain array chunked and the chunked ones kept (their chunk maps renumbered, their
/// chunks written as they are whatever `-c` says): Python asdf + asdf-zarr reads every array
/// of the output equal to what it read from the input.
#[test]
fn rewrites_keep_and_make_chunked_arrays_python_reads() {
    let py = asdf_testdata::interop_python();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-chunks");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let n = 16;
    let made = std::process::Command::new(&py)
        .arg(root().join("tests/interop/zarr_random.py"))
        .arg(&dir)
        .args([&n.to_string(), "rechunk"])
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let mut checks = Vec::new();
    for i in 0..n {
        let input = dir.join(format!("z{i:05}.asdf"));
        let expected: serde_json::Value =
            serde_json::from_slice(&std::fs::read(input.with_extension("json")).unwrap()).unwrap();
        let rank = expected["/n"]["shape"].as_array().unwrap().len();
        let chunks = vec!["7"; rank].join(",");
        let c = ["none", "zlib", "zstd", "bzp2"][i % 4];
        let output = dir.join(format!("out{i:05}.asdf"));
        let command = if i % 2 == 0 { "defragment" } else { "convert" };
        let (code, text) = run(&[
            command,
            &input.display().to_string(),
            "-o",
            &output.display().to_string(),
            "--chunks",
            &chunks,
            "-c",
            c,
        ]);
        assert_eq!(code, 0, "{text}");
        checks.push(serde_json::json!({"asdf": output, "expected": expected}));
    }
    let manifest = dir.join("checks.json");
    std::fs::write(&manifest, serde_json::to_vec(&checks).unwrap()).unwrap();
    let script = r#"
import json, sys
import asdf, numpy as np, zarr
sys.path.insert(0, sys.argv[2])
from zarr_random import as_json as flat
good = bad = 0
for c in json.load(open(sys.argv[1])):
    with asdf.open(c["asdf"], lazy_load=False) as af:
        for pointer, want in c["expected"].items():
            a = af[pointer[1:]]
            ok = isinstance(a, zarr.Array) and list(a.shape) == want["shape"] and flat(a[...]) == want["values"]
            good, bad = good + ok, bad + (not ok)
            if not ok:
                print("differs:", c["asdf"], pointer, type(a), file=sys.stderr)
print(good, bad)
"#;
    let (good, bad) = python_counts(&py, script, &manifest);
    println!(
        "defragment/convert --chunks: {good} arrays read by Python asdf + asdf-zarr as zarr arrays equal, {bad} differ"
    );
    assert_eq!((good, bad), (n * 3, 0));
}

/// The pixels of a PNG file: width, height, RGBA bytes.
fn png_pixels(path: &Path) -> (usize, usize, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgba);
    buf.truncate(info.buffer_size());
    (info.width as usize, info.height as usize, buf)
}

#[test]
fn preview_draws_images_plots_planes_and_sheets() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-preview");
    std::fs::create_dir_all(&dir).unwrap();
    // A 40x60 ramp brighter with each row, a NaN at row 0 column 0; a spectrum; a cube whose
    // planes are 0, 1, 2 everywhere; a table of strings.
    let mut img: Vec<f32> = (0..40 * 60).map(|i| (i / 60) as f32).collect();
    img[0] = f32::NAN;
    let spectrum: Vec<f64> = (0..500).map(|i| (f64::from(i) / 30.0).sin()).collect();
    let cube: Vec<i16> = (0..3 * 8 * 10).map(|i| i16::try_from(i / 80).unwrap()).collect();
    let mut f = asdf::AsdfFile::new(asdf::Version::STANDARD_LATEST).unwrap();
    f.put_array("/sci/data", asdf::NewArray::from_slice(&img, &[40, 60]).unwrap())
        .unwrap();
    f.put_array("/flux", asdf::NewArray::from_slice(&spectrum, &[500]).unwrap())
        .unwrap();
    f.put_array("/cube", asdf::NewArray::from_slice(&cube, &[3, 8, 10]).unwrap())
        .unwrap();
    let src = dir.join("p.asdf");
    f.write(&src, &asdf::WriteOptions::default()).unwrap();
    let src = src.display().to_string();
    let out = dir.join("out.png");
    let o = out.display().to_string();

    // No pointer: the first image of the file; the first row at the bottom; NaN in magenta.
    let (code, text) = run(&["preview", &src, "-o", &o, "--stretch", "minmax"]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("(60x40, /sci/data)"), "{text}");
    let (w, h, px) = png_pixels(&out);
    assert_eq!((w, h), (60, 40));
    let at = |px: &[u8], x: usize, y: usize| px[(y * w + x) * 4..(y * w + x) * 4 + 4].to_vec();
    assert_eq!(
        at(&px, 0, h - 1),
        vec![255, 0, 255, 255],
        "NaN (row 0) at the bottom left"
    );
    assert_eq!(at(&px, 1, h - 1), vec![0, 0, 0, 255], "row 0 is the darkest");
    assert_eq!(at(&px, 1, 0), vec![255, 255, 255, 255], "the last row at the top");
    let px_first = px.clone();
    // --origin-upper, a colour map, a reduced size.
    let (code, text) = run(&[
        "preview",
        &src,
        "/sci/data",
        "-o",
        &o,
        "--origin-upper",
        "--cmap",
        "viridis",
        "--max-size",
        "30",
    ]);
    assert_eq!(code, 0, "{text}");
    let (w2, h2, px2) = png_pixels(&out);
    assert_eq!((w2, h2), (30, 20));
    let at2 = |x: usize, y: usize| px2[(y * w2 + x) * 4..(y * w2 + x) * 4 + 3].to_vec();
    // Boxes of 2x2 averaged: the NaN is left out of its box's mean; row 0 now at the top.
    assert_eq!(at2(1, 0), at2(2, 0));
    assert_ne!(at2(0, 0), [255, 0, 255]);
    assert_ne!(at2(0, 0), at2(0, 19));
    // A spectrum: a plot with axes, the line drawn.
    let (code, text) = run(&["preview", &src, "/flux", "-o", &o]);
    assert_eq!(code, 0, "{text}");
    let (w, h, px) = png_pixels(&out);
    assert_eq!((w, h), (800, 400));
    let line = px.chunks(4).filter(|p| p[..3] == [31, 119, 180]).count();
    assert!(line > 800, "{line} line pixels");
    // A cube: its first plane by default, another with --slice.
    for (slice, level) in [(None, 0u8), (Some("2, :, :"), 255)] {
        let mut args = vec!["preview", &src, "/cube", "-o", &o, "--stretch", "minmax"];
        if let Some(s) = slice {
            args.extend(["--slice", s]);
        }
        let (code, text) = run(&args);
        assert_eq!(code, 0, "{text}");
        let (w, h, px) = png_pixels(&out);
        assert_eq!((w, h), (10, 8));
        // A constant plane draws at mid-grey between equal limits.
        assert!(px.chunks(4).all(|p| p[0] == 128), "{slice:?} {level}");
    }
    // Every image on one sheet.
    let (code, text) = run(&["preview", &src, "--all", "-o", &o]);
    assert_eq!(code, 0, "{text}");
    let (w, _, _) = png_pixels(&out);
    assert!(w > 60, "{w}");
    // ASDF in FITS (Appendix A of the standard): the same picture.
    let fits = dir.join("p.fits").display().to_string();
    assert_eq!(run(&["convert", &src, "-o", &fits]).0, 0);
    let (code, text) = run(&["preview", &fits, "/sci/data", "-o", &o, "--stretch", "minmax"]);
    assert_eq!(code, 0, "{text}");
    let (w, h, fits_px) = png_pixels(&out);
    assert_eq!((w, h), (60, 40));
    assert_eq!(fits_px, px_first, "the FITS file draws as the ASDF file");
    // Errors: a region with three axes, an unknown stretch, a missing array.
    let (code, text) = run(&["preview", &src, "/cube", "-o", &o, "--slice", ":, :, :"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("choose a plane with --slice"), "{text}");
    let (code, text) = run(&["preview", &src, "-o", &o, "--stretch", "gamma"]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("zscale"), "{text}");
    let (code, text) = run(&["preview", &src, "/nothing", "-o", &o]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("/nothing"), "{text}");
}

/// Chunked arrays (asdf-zarr's layout) are compared by their values, as ndarrays are: one
/// element changed anywhere is a difference (the chunk maps and metadata compared alone said
/// nothing); a chunked array and an ndarray of the same values are equal.
#[test]
fn diff_compares_chunked_arrays_by_value() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-diff-chunked");
    std::fs::create_dir_all(&dir).unwrap();
    let (rows, cols) = (37usize, 23usize);
    let base: Vec<f32> = (0..rows * cols).map(|i| i as f32 * 0.5).collect();
    let make = |name: &str, data: &[f32], chunks: Option<&[usize]>| {
        let mut f = asdf::AsdfFile::new(asdf::Version::STANDARD_LATEST).unwrap();
        let mut a = asdf::NewArray::from_slice(data, &[rows, cols]).unwrap();
        if let Some(c) = chunks {
            a = a.chunks(c).compression(asdf::Label::ZLIB);
        }
        f.put_array("/img", a).unwrap();
        let p = dir.join(name);
        f.write(&p, &asdf::WriteOptions::default()).unwrap();
        p.display().to_string()
    };
    let a = make("a.asdf", &base, Some(&[8, 5]));
    let plain = make("plain.asdf", &base, None);
    for (k, at) in [0, rows * cols / 2, rows * cols - 1].into_iter().enumerate() {
        let mut changed = base.clone();
        changed[at] += 1.0;
        let b = make(&format!("b{k}.asdf"), &changed, Some(&[8, 5]));
        let (code, text) = run(&["diff", &a, &b, "-i", "/asdf_library"]);
        assert_eq!(code, 1, "{text}");
        assert!(
            text.contains(&format!(
                "/img: 1 of {} elements differ; first at flat index {at}",
                rows * cols
            )),
            "{text}"
        );
    }
    let (code, text) = run(&["diff", &a, &plain, "-i", "/asdf_library"]);
    assert_eq!(code, 0, "{text}");
    let again = make("again.asdf", &base, Some(&[8, 5]));
    let (code, text) = run(&["diff", &a, &again, "-i", "/asdf_library"]);
    assert_eq!(code, 0, "{text}");
}
