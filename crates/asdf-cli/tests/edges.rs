//! Where the CLI meets the world around the values (`/work/shared/EDGES.md`'s classes): outputs
//! that are inputs, output formats, folder walks, datatypes `get` writes, memory limits on
//! every reader, and the numbers given on the command line. Every test builds its input.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// What a run of `asdf-cli` gave.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    fn text(&self) -> String {
        format!("exit {:?}\n{}{}", self.code, self.stdout, self.stderr)
    }
}

fn cli(args: &[&std::ffi::OsStr]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_asdf-cli"));
    c.args(args);
    c
}

fn finish(c: &mut Command) -> Run {
    let out = c.output().unwrap();
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn run(args: &[&str]) -> Run {
    let os: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    finish(&mut cli(&os))
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// A small file with a float64 image `/x` (3 x 4) and a float32 vector `/v`.
fn sample(path: &Path) {
    let mut f = asdf::AsdfFile::new(asdf::Version::STANDARD_LATEST).unwrap();
    let x: Vec<f64> = (0..12).map(f64::from).collect();
    f.put_array("/x", asdf::NewArray::from_slice(&x, &[3, 4]).unwrap())
        .unwrap();
    let v: Vec<f32> = (0..5u8).map(f32::from).collect();
    f.put_array("/v", asdf::NewArray::from_slice(&v, &[5]).unwrap())
        .unwrap();
    f.write(path, &asdf::WriteOptions::default()).unwrap();
}

/// A 1.5.0 file whose tree is `tree_body`, followed by one uncompressed block of `data`.
fn with_block(tree_body: &str, data: &[u8]) -> Vec<u8> {
    let mut b = format!(
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n{tree_body}...\n"
    )
    .into_bytes();
    b.extend_from_slice(&[0xd3, b'B', b'L', b'K']);
    b.extend_from_slice(&48u16.to_be_bytes());
    b.extend_from_slice(&[0; 8]); // flags, compression
    for _ in 0..3 {
        b.extend_from_slice(&(data.len() as u64).to_be_bytes());
    }
    b.extend_from_slice(&[0; 16]); // no checksum
    b.extend_from_slice(data);
    b
}

/// A Zarr format 2 directory store of float64 at `store` (made with its folders): `.zarray`
/// with `shape`, `chunks` and `compressor` (JSON texts); chunks are written by the caller.
fn zarr_store(store: &Path, shape: &str, chunks: &str, compressor: &str) {
    std::fs::create_dir_all(store).unwrap();
    std::fs::write(
        store.join(".zarray"),
        format!(
            r#"{{"zarr_format": 2, "shape": {shape}, "chunks": {chunks}, "dtype": "<f8", "compressor": {compressor}, "fill_value": 0, "order": "C", "filters": null}}"#
        ),
    )
    .unwrap();
}

/// Writes at `input` a file whose `/z` is an asdf-zarr array in the directory store `path` (as
/// the tree names it: relative to the file, or absolute).
fn file_with_store(input: &Path, path: &str) {
    let mut f = asdf::AsdfFile::new(asdf::Version::STANDARD_LATEST).unwrap();
    let store = asdf::Node::map(vec![
        (asdf::Node::str("type_string"), asdf::Node::str("DirectoryStore")),
        (asdf::Node::str("path"), asdf::Node::str(path)),
    ]);
    let z =
        asdf::Node::map(vec![(asdf::Node::str("store"), store)]).with_tag(format!("{}1.0.0", asdf::ZARR_TAG_PREFIX));
    f.set("/z", z).unwrap();
    f.write(input, &asdf::WriteOptions::default()).unwrap();
}

// ---------------------------------------------------------------------------------------
// Outputs

/// Every command that writes refuses an output that is its input: by the same name, a hard
/// link, a symbolic link; the input is left as it was and nothing else is written.
#[cfg(unix)]
#[test]
fn outputs_that_are_inputs_are_refused_by_every_command() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("x.asdf");
    sample(&input);
    let before = std::fs::read(&input).unwrap();
    // Names of the input with each extension the commands write (and its own name, whose
    // extension is checked after it: the refusal is what is said).
    let mut names = Vec::new();
    for ext in ["asdf", "json", "npy", "png", "yaml", "fits"] {
        let hard = d.path().join(format!("hard.{ext}"));
        std::fs::hard_link(&input, &hard).unwrap();
        let soft = d.path().join(format!("soft.{ext}"));
        std::os::unix::fs::symlink(&input, &soft).unwrap();
        names.push((ext, hard, soft));
    }
    let name = |ext: &str, which: usize| -> PathBuf {
        let (_, h, l) = names.iter().find(|(e, _, _)| *e == ext).unwrap();
        match which {
            0 => input.clone(),
            1 => h.clone(),
            _ => l.clone(),
        }
    };
    let commands: Vec<(&str, Vec<&str>, &str)> = vec![
        ("get", vec!["/x"], "npy"),
        ("get", vec!["/x"], "json"),
        ("preview", vec!["/x"], "png"),
        ("preview", vec!["--all"], "png"),
        ("to-json", vec![], "json"),
        ("to-yaml", vec![], "yaml"),
        ("to-yaml", vec![], "asdf"),
        ("convert", vec![], "asdf"),
        ("convert", vec!["--to", "finf"], "asdf"),
        ("implode", vec![], "asdf"),
        ("explode", vec![], "asdf"),
    ];
    for (cmd, extra, ext) in &commands {
        for which in 0..3 {
            let out = name(ext, which);
            let mut args = vec![*cmd, input.to_str().unwrap()];
            args.extend(extra.iter());
            let o = s(&out);
            args.extend(["-o", o.as_str()]);
            let r = run(&args);
            assert_eq!(r.code, Some(1), "{args:?}: {}", r.text());
            assert!(r.stderr.contains("refusing to write over"), "{args:?}: {}", r.text());
            assert_eq!(std::fs::read(&input).unwrap(), before, "{args:?} changed the input");
            assert!(
                std::fs::symlink_metadata(name(ext, 2))
                    .unwrap()
                    .file_type()
                    .is_symlink()
            );
        }
    }
    // explode wrote no part beside any of those names.
    let parts: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n.contains("0000"))
        .collect();
    assert!(parts.is_empty(), "{parts:?}");
    // defragment rewrites its own file (staged): over itself it works, the values kept.
    let r = run(&["defragment", input.to_str().unwrap(), "-o", input.to_str().unwrap()]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    let f = asdf::open(&input).unwrap();
    assert_eq!(
        f.array("/x").unwrap().read::<Vec<f64>>().unwrap(),
        (0..12).map(f64::from).collect::<Vec<_>>()
    );
}

/// A file an input refers to (an exploded file's parts) is an input too: no command writes
/// over it, whatever name reaches it; `explode`'s own parts are checked before anything is
/// written.
#[cfg(unix)]
#[test]
fn files_an_input_refers_to_are_inputs() {
    let d = tempfile::tempdir().unwrap();
    let x = d.path().join("x.asdf");
    sample(&x);
    let ex = d.path().join("ex.asdf");
    let r = run(&["explode", x.to_str().unwrap(), "-o", ex.to_str().unwrap()]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    let part = d.path().join("ex0000.asdf");
    let part_bytes = std::fs::read(&part).unwrap();
    let json_link = d.path().join("part.json");
    std::fs::hard_link(&part, &json_link).unwrap();
    let png_link = d.path().join("part.png");
    std::os::unix::fs::symlink(&part, &png_link).unwrap();
    let e = ex.to_str().unwrap();
    let p = part.to_str().unwrap();
    for args in [
        vec!["convert", e, "-o", p],
        vec!["implode", e, "-o", p],
        vec!["defragment", e, "-o", p],
        vec!["to-yaml", e, "-o", p],
        vec!["get", e, "/x", "-o", json_link.to_str().unwrap()],
        vec!["to-json", e, "-o", json_link.to_str().unwrap()],
        vec!["preview", e, "/x", "-o", png_link.to_str().unwrap()],
    ] {
        let r = run(&args);
        assert_eq!(r.code, Some(1), "{args:?}: {}", r.text());
        assert!(r.stderr.contains("refusing to write over"), "{args:?}: {}", r.text());
        assert_eq!(std::fs::read(&part).unwrap(), part_bytes, "{args:?}");
    }
    // explode whose first part would be the file read: nothing written, not even the tree.
    let y = d.path().join("y.asdf");
    let y0 = d.path().join("y0000.asdf");
    std::fs::copy(&x, &y0).unwrap();
    let y0_bytes = std::fs::read(&y0).unwrap();
    let r = run(&["explode", y0.to_str().unwrap(), "-o", y.to_str().unwrap()]);
    assert_eq!(r.code, Some(1), "{}", r.text());
    assert!(r.stderr.contains("refusing to write over"), "{}", r.text());
    assert!(!y.exists());
    assert_eq!(std::fs::read(&y0).unwrap(), y0_bytes);
}

/// An output whose extension the command does not write is a usage error (exit 2) naming
/// the extensions it writes; nothing is written. A device is written into with the command's
/// format.
#[test]
fn output_extensions_the_command_does_not_write_are_usage_errors() {
    let d = tempfile::tempdir().unwrap();
    let x = d.path().join("x.asdf");
    sample(&x);
    let x = s(&x);
    let out = |name: &str| s(&d.path().join(name));
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["get".into(), x.clone(), "/x".into(), "-o".into(), out("o.fits")],
            ".json, .npy or .asdf",
        ),
        (
            vec!["get".into(), x.clone(), "/x".into(), "-o".into(), out("o")],
            ".json, .npy or .asdf",
        ),
        (
            vec!["get".into(), x.clone(), "/x".into(), "-o".into(), out("o.NPZ")],
            ".json, .npy or .asdf",
        ),
        (
            vec!["preview".into(), x.clone(), "/x".into(), "-o".into(), out("o.jpg")],
            ".png",
        ),
        (
            vec!["preview".into(), x.clone(), "--all".into(), "-o".into(), out("o.asdf")],
            ".png",
        ),
        (vec!["to-json".into(), x.clone(), "-o".into(), out("o.yaml")], ".json"),
        (
            vec!["to-yaml".into(), x.clone(), "-o".into(), out("o.json")],
            ".yaml, .yml or .asdf",
        ),
        (
            vec!["convert".into(), x.clone(), "-o".into(), out("o.json")],
            ".asdf, .fits, .fit, .fts or .finf",
        ),
        (
            vec![
                "convert".into(),
                x.clone(),
                "-o".into(),
                out("o.fits"),
                "--to".into(),
                "asdf".into(),
            ],
            "--to asdf",
        ),
        (
            vec![
                "convert".into(),
                x.clone(),
                "-o".into(),
                out("o.asdf"),
                "--to".into(),
                "fits".into(),
            ],
            "--to fits",
        ),
        (
            vec!["defragment".into(), x.clone(), "-o".into(), out("o.fits")],
            ".asdf",
        ),
        (
            vec!["defragment".into(), x.clone(), "-o".into(), out("o.json")],
            ".asdf",
        ),
        (vec!["implode".into(), x.clone(), "-o".into(), out("o.txt")], ".asdf"),
        (vec!["explode".into(), x.clone(), "-o".into(), out("o.json")], ".asdf"),
    ];
    for (args, names) in &cases {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = run(&a);
        assert_eq!(r.code, Some(2), "{a:?}: {}", r.text());
        assert!(r.stderr.contains(names), "{a:?}: {}", r.text());
    }
    let left: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "x.asdf")
        .collect();
    assert!(left.is_empty(), "written: {left:?}");
    // The extensions each command writes, in any case, are accepted.
    for (args, file) in [
        (vec!["get", &x, "/x", "-o"], "a.NPY"),
        (vec!["get", &x, "/x", "-o"], "a.json"),
        (vec!["preview", &x, "/x", "-o"], "a.PNG"),
        (vec!["to-yaml", &x, "-o"], "a.yml"),
        (vec!["convert", &x, "-o"], "a.fits"),
        (vec!["convert", &x, "--to", "asdf", "-o"], "a.bin"),
    ] {
        let o = out(file);
        let mut a = args.clone();
        a.push(&o);
        let r = run(&a);
        assert_eq!(r.code, Some(0), "{a:?}: {}", r.text());
        assert!(Path::new(&o).is_file(), "{a:?}");
    }
    // `get -o a.NPY` wrote numpy's format, not JSON.
    assert!(std::fs::read(d.path().join("a.NPY")).unwrap().starts_with(b"\x93NUMPY"));
    #[cfg(unix)]
    {
        let r = run(&["get", &x, "/x", "-o", "/dev/null"]);
        assert_eq!(r.code, Some(0), "{}", r.text());
    }
}

// ---------------------------------------------------------------------------------------
// Walks

/// `verify DIR` and `info DIR`: a link to a corrupt file is followed and fails, a name that
/// is not UTF-8 is read through its real path (and shown lossily, saying so), a link back
/// into the walk ends, a link to nothing and a FIFO are reported as skipped; the counts add
/// up and the exit status is 1.
#[cfg(unix)]
#[test]
fn folder_walks_report_every_entry() {
    use std::os::unix::ffi::OsStrExt as _;
    let d = tempfile::tempdir().unwrap();
    let w = d.path().join("w");
    std::fs::create_dir_all(w.join("sub")).unwrap();
    sample(&w.join("good.asdf"));
    let corrupt = d.path().join("corrupt.asdf");
    std::fs::write(&corrupt, b"#ASDF 1.0.0\nnot an ASDF file").unwrap();
    std::os::unix::fs::symlink(&corrupt, w.join("link.asdf")).unwrap();
    let odd = w.join(std::ffi::OsStr::from_bytes(b"odd\xff.asdf"));
    sample(&odd);
    std::os::unix::fs::symlink("..", w.join("sub/loop")).unwrap();
    std::os::unix::fs::symlink("nowhere.asdf", w.join("broken.asdf")).unwrap();
    let fifo = std::ffi::CString::new(w.join("pipe.asdf").as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let dir = s(&w);
    for cmd in ["verify", "info"] {
        let r = run(&[cmd, &dir]);
        let t = r.text();
        assert_eq!(r.code, Some(1), "{cmd}: {t}");
        let verb = if cmd == "verify" { "verified" } else { "read" };
        assert!(
            r.stdout.contains(&format!("6 files: 2 {verb}, 1 failed, 3 skipped")),
            "{cmd}: {t}"
        );
        assert!(t.contains("odd\u{fffd}.asdf (name not UTF-8"), "{cmd}: {t}");
        assert!(
            t.contains("link.asdf") && t.contains("pipe.asdf: not a regular file"),
            "{cmd}: {t}"
        );
        assert!(t.contains("broken.asdf: a link that cannot be followed"), "{cmd}: {t}");
        assert!(t.contains("sub/loop: a folder already walked"), "{cmd}: {t}");
    }
    let r = run(&["verify", &dir]);
    assert!(
        r.stdout
            .lines()
            .any(|l| l.starts_with("FAIL") && l.contains("link.asdf")),
        "{}",
        r.text()
    );
    assert!(
        r.stdout
            .lines()
            .any(|l| l.starts_with("ok") && l.contains("odd\u{fffd}.asdf")),
        "{}",
        r.text()
    );
    // A folder of good files and a link to one: all verified, exit 0.
    let clean = d.path().join("clean");
    std::fs::create_dir_all(&clean).unwrap();
    sample(&clean.join("a.asdf"));
    std::os::unix::fs::symlink(clean.join("a.asdf"), clean.join("b.asdf")).unwrap();
    let r = run(&["verify", &s(&clean)]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    assert!(
        r.stdout.contains("2 files: 2 verified, 0 failed, 0 skipped"),
        "{}",
        r.text()
    );
}

/// A folder that cannot be listed is reported and the walk goes on (the other files are
/// verified; exit 1). Root lists any folder, so as root the command runs as `nobody`.
#[cfg(unix)]
#[test]
fn an_unreadable_folder_is_reported_and_the_walk_goes_on() {
    use std::os::unix::fs::PermissionsExt as _;
    use std::os::unix::process::CommandExt as _;
    let d = tempfile::tempdir().unwrap();
    let w = d.path().join("w");
    std::fs::create_dir_all(w.join("a_closed")).unwrap();
    sample(&w.join("a_closed/hidden.asdf"));
    sample(&w.join("z.asdf"));
    for p in [d.path(), &w] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::set_permissions(w.join("z.asdf"), std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(w.join("a_closed"), std::fs::Permissions::from_mode(0o000)).unwrap();
    let mut c = cli(&[std::ffi::OsStr::new("verify"), w.as_os_str()]);
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        c.uid(65534).gid(65534);
    }
    let r = finish(&mut c);
    std::fs::set_permissions(w.join("a_closed"), std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(r.code, Some(1), "{}", r.text());
    assert!(r.stdout.contains("a_closed: folder cannot be listed"), "{}", r.text());
    assert!(
        r.stdout.lines().any(|l| l.starts_with("ok") && l.contains("z.asdf")),
        "{}",
        r.text()
    );
    assert!(
        r.stdout.contains("2 files: 1 verified, 0 failed, 1 skipped"),
        "{}",
        r.text()
    );
}

// ---------------------------------------------------------------------------------------
// Datatypes

/// `get` writes float16, complex64 and complex128 (and every other number type), from
/// little- and big-endian blocks and from inline arrays: numpy loads the `.npy` equal to its
/// own slicing of what Python asdf reads (dtype little-endian, same bits), and the JSON
/// values are those numbers (complex as Python's text). Random shapes, values and slices.
#[test]
fn get_writes_float16_and_complex_as_numpy_reads_them() {
    let py = asdf_testdata::interop_python();
    let d = tempfile::tempdir().unwrap();
    let make = r#"
import json, sys
import numpy as np, asdf
out = sys.argv[1]
rng = np.random.default_rng(20261128)
dtypes = ["<f2", ">f2", "<c8", ">c8", "<c16", ">c16", ">f4", ">i2", "<u8", ">f8", "|b1"]
cases = []
for i in range(12):
    tree = {}
    # Python asdf writes no 0-d array inline.
    inline = "inline" if i % 3 == 0 else "internal"
    for k, dt in enumerate(dtypes):
        ndim = int(rng.integers(1 if inline == "inline" else 0, 4))
        shape = tuple(int(n) for n in rng.integers(0, 6, size=ndim))
        n = int(np.prod(shape)) if shape else 1
        if dt.endswith("b1"):
            a = rng.integers(0, 2, size=n).astype(bool)
        elif "c" in dt:
            a = (rng.standard_normal(n) * 10.0 ** rng.integers(-5, 5, size=n)
                 + 1j * rng.standard_normal(n) * 10.0 ** rng.integers(-5, 5, size=n))
            a[:: 7] = complex("nan+infj")
        elif "f" in dt:
            a = rng.standard_normal(n) * 10.0 ** rng.integers(-9, 6, size=n)
            if n > 2:
                a[0], a[1] = np.inf, -0.0
        else:
            a = rng.integers(0, 1000, size=n)
        a = np.asarray(a).astype(dt).reshape(shape)
        tree[f"a{k}"] = a
        # A slice along each axis: start:stop:step, negative steps too.
        parts = []
        for m in shape:
            lo, hi = sorted(int(v) for v in rng.integers(0, m + 1, size=2))
            step = int(rng.choice([1, 2, -1, -2]))
            parts.append(f"{hi}:{lo}:{step}" if step < 0 else f"{lo}:{hi}:{step}")
        cases.append({"file": i, "key": f"a{k}", "slice": ", ".join(parts)})
    asdf.AsdfFile(tree).write_to(f"{out}/f{i}.asdf", all_array_storage=inline)
json.dump(cases, open(f"{out}/cases.json", "w"))
"#;
    let made = Command::new(&py).args(["-c", make]).arg(d.path()).output().unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let cases: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.path().join("cases.json")).unwrap()).unwrap();
    let mut checks = Vec::new();
    for (n, c) in cases.as_array().unwrap().iter().enumerate() {
        let file = s(&d.path().join(format!("f{}.asdf", c["file"])));
        let pointer = format!("/{}", c["key"].as_str().unwrap());
        let slice = c["slice"].as_str().unwrap();
        let npy = d.path().join(format!("c{n}.npy"));
        let r = run(&["get", &file, &pointer, "--slice", slice, "-o", &s(&npy)]);
        assert_eq!(r.code, Some(0), "{file} {pointer} [{slice}]: {}", r.text());
        let json = d.path().join(format!("c{n}.json"));
        let r = run(&["get", &file, &pointer, "--slice", slice, "-o", &s(&json)]);
        assert_eq!(r.code, Some(0), "{file} {pointer} [{slice}]: {}", r.text());
        checks.push(serde_json::json!({"file": file, "key": c["key"], "slice": slice, "npy": npy, "json": json}));
    }
    let manifest = d.path().join("checks.json");
    std::fs::write(&manifest, serde_json::to_vec(&checks).unwrap()).unwrap();
    let check = r#"
import json, math, sys
import numpy as np, asdf
def same(x, y):
    return x == y or (isinstance(x, float) and math.isnan(x) and math.isnan(y))
bad = 0
checks = json.load(open(sys.argv[1]))
for c in checks:
    with asdf.open(c["file"]) as f:
        want = np.asarray(f[c["key"]])
    idx = tuple(slice(*[int(v) if v else None for v in p.split(":")]) for p in c["slice"].split(", ")) if c["slice"] else ()
    want = want[idx]
    got = np.load(c["npy"])
    ok = (got.dtype == want.dtype.newbyteorder("<") and got.dtype.byteorder in "<|="
          and got.shape == want.shape
          and got.astype(want.dtype.newbyteorder("<")).tobytes() == want.astype(want.dtype.newbyteorder("<")).tobytes())
    j = json.load(open(c["json"]))
    flat = np.asarray(j["data"], dtype=object).ravel().tolist() if want.size else []
    if want.dtype.kind == "c":
        vals = [complex(v) for v in flat]
        ok = ok and all(same(a.real, b.real) and same(a.imag, b.imag) for a, b in zip(vals, want.ravel().tolist()))
    elif want.dtype.kind == "f":
        vals = [float(v) for v in flat]
        ok = ok and all(same(a, b) for a, b in zip(vals, want.ravel().astype(float).tolist()))
    else:
        ok = ok and flat == want.ravel().tolist()
    ok = ok and j["shape"] == list(want.shape) and len(flat) == want.size
    if not ok:
        bad += 1
        print("differs:", c, got.dtype, want.dtype, got.shape, want.shape, file=sys.stderr)
print(len(checks) - bad, bad)
"#;
    let out = Command::new(&py).args(["-c", check]).arg(&manifest).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let text = String::from_utf8_lossy(&out.stdout);
    let counts: Vec<usize> = text
        .lines()
        .last()
        .unwrap()
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    assert_eq!(counts[1], 0, "{err}");
    assert_eq!(counts[0], checks.len());
    assert!(counts[0] >= 100, "{counts:?}");
}

/// An inline float16 array whose YAML numbers are not float16 values: `get` rounds them as
/// numpy's `astype(float16)` does (to nearest, ties to even; past 65519.99 to infinity;
/// subnormals), and keeps the sign of zero.
#[test]
fn inline_float16_values_round_as_numpy_rounds_them() {
    let py = asdf_testdata::interop_python();
    let d = tempfile::tempdir().unwrap();
    let values = [
        "0.1",
        "-0.0",
        "65504.0",
        "65519.0",
        "65520.0",
        "-70000.0",
        "1.0e-8",
        "2.98e-8",
        "3.0e-8",
        "6.0e-5",
        "6.1035e-5",
        "1.00048828125",
        "1.000732421875",
        "2049.0",
        "2051.0",
        "0.333333",
        ".nan",
        "-.inf",
    ];
    let tree = format!(
        "h: !core/ndarray-1.0.0\n  data: [{}]\n  datatype: float16\n  shape: [{}]\n",
        values.join(", "),
        values.len()
    );
    let file = d.path().join("h.asdf");
    std::fs::write(
        &file,
        format!("#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n{tree}...\n"),
    )
    .unwrap();
    let npy = d.path().join("h.npy");
    let r = run(&["get", &s(&file), "/h", "-o", &s(&npy)]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    let py_values: Vec<String> = values
        .iter()
        .map(|v| match *v {
            ".nan" => "float('nan')".to_owned(),
            "-.inf" => "float('-inf')".to_owned(),
            v => v.to_owned(),
        })
        .collect();
    let check = format!(
        "import sys, numpy as np\nwant = np.array([{}], dtype=np.float64).astype('<f2')\ngot = np.load(sys.argv[1])\nprint(got.dtype.str, got.tobytes() == want.tobytes(), got.view('<u2').tolist(), want.view('<u2').tolist())",
        py_values.join(", ")
    );
    let out = Command::new(&py).args(["-c", &check]).arg(&npy).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.starts_with("<f2 True"), "{text}");
}

// ---------------------------------------------------------------------------------------
// Memory

/// An overlapping view (shape 200000 x 200000 over one 8-byte element, strides [0, 0]) in a
/// file of a few hundred bytes: `get`, `preview` and `preview --all` refuse it with the
/// array's name and its size, never an abort; `info` shows it without reading it.
#[test]
fn overlapping_views_are_refused_on_every_reader() {
    let d = tempfile::tempdir().unwrap();
    let tree = "img: !core/ndarray-1.0.0\n  source: 0\n  datatype: float64\n  byteorder: little\n  shape: [200000, 200000]\n  strides: [0, 0]\n";
    let file = d.path().join("ov.asdf");
    std::fs::write(&file, with_block(tree, &1.5f64.to_le_bytes())).unwrap();
    let masked = tree.to_owned() + "  mask: 0.0\n";
    let mfile = d.path().join("ovm.asdf");
    std::fs::write(&mfile, with_block(&masked, &1.5f64.to_le_bytes())).unwrap();
    let f = s(&file);
    let png = s(&d.path().join("o.png"));
    let npy = s(&d.path().join("o.npy"));
    for args in [
        vec!["preview", &f, "/img", "-o", &png],
        vec!["preview", &f, "--all", "-o", &png],
        vec!["preview", &f, "-o", &png],
        vec!["preview", &f, "/img", "--max-size", "64", "-o", &png],
        vec!["get", &f, "/img", "-o", &npy],
        vec!["get", &f, "/img"],
    ] {
        let r = run(&args);
        assert_eq!(r.code, Some(1), "{args:?}: {}", r.text());
        // Refused by the CLI's memory check or the library's limit of a decoded block,
        // whichever comes first; both name the array and its size.
        assert!(
            r.stderr
                .contains("/img: the array has 40000000000 elements, more than memory can hold")
                || r.stderr
                    .contains("/img: the region read is 320000000000 bytes, more than the limit"),
            "{args:?}: {}",
            r.text()
        );
    }
    let m = s(&mfile);
    let r = run(&["preview", &m, "/img", "-o", &png]);
    assert_eq!(r.code, Some(1), "{}", r.text());
    assert!(
        r.stderr.contains("/img: the array has 40000000000 elements")
            || r.stderr.contains("/img: the region read is 320000000000 bytes"),
        "{}",
        r.text()
    );
    // A small region of it is drawn.
    let r = run(&["preview", &f, "/img", "--slice", "0:8, 0:8", "-o", &png]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    let r = run(&["info", &f]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    assert!(r.stdout.contains("shape=[200000, 200000]"), "{}", r.text());
    assert!(!Path::new(&npy).exists());
    // to-json writes the array as its tree with the reason (it streamed 40 billion values):
    // the refusal of views whose zero strides repeat their data.
    let r = run(&["to-json", &f]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    assert!(
        r.stdout.contains(
            "\"$error\": \"/img: the array is 320000000000 bytes written out, from 8 bytes of data that its strides repeat"
        ),
        "{}",
        r.text()
    );
}

// ---------------------------------------------------------------------------------------
// Numbers

/// The numbers of the command line: `--max-size 0` and `-j 0` are usage errors (they were a
/// 1x1 picture and one job, silently); `--max-size` as large as 64 bits holds draws at one
/// pixel per value; `-j` past 1024 is a usage error, not a thousand threads per file.
#[test]
fn command_line_numbers_at_their_extremes() {
    let d = tempfile::tempdir().unwrap();
    let x = d.path().join("x.asdf");
    sample(&x);
    let x = s(&x);
    let png = s(&d.path().join("o.png"));
    let dir = s(d.path());
    for (args, code) in [
        (vec!["preview", &x, "/x", "-o", &png, "--max-size", "0"], 2),
        (vec!["preview", &x, "/x", "-o", &png, "--max-size", "-1"], 2),
        (
            vec!["preview", &x, "/x", "-o", &png, "--max-size", "18446744073709551616"],
            2,
        ),
        (vec!["preview", &x, "--all", "-o", &png, "--max-size", "0"], 2),
        (vec!["verify", &dir, "-j", "0"], 2),
        (vec!["info", &dir, "-j", "0"], 2),
        (vec!["verify", &dir, "-j", "1025"], 2),
        (vec!["verify", &dir, "-j", "-1"], 2),
        (vec!["verify", &dir, "-j", "1024"], 0),
        (vec!["info", &dir, "-j", "1"], 0),
    ] {
        let r = run(&args);
        assert_eq!(r.code, Some(code), "{args:?}: {}", r.text());
    }
    assert!(!Path::new(&png).exists());
    let r = run(&["preview", &x, "/x", "-o", &png, "--max-size", "18446744073709551615"]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    assert!(r.stderr.contains("(4x3, /x)"), "{}", r.text());
}

/// Found by the independent review: an `explode` that fails (its output a folder, or a name
/// ending in `/`) wrote its parts first, over existing files of those names. Now nothing is
/// put in place before every file is complete and every target is known to take a file.
#[test]
fn a_failed_explode_leaves_every_existing_file_as_it_was() {
    let d = tempfile::tempdir().unwrap();
    let x = d.path().join("x.asdf");
    sample(&x);
    std::fs::create_dir(d.path().join("dir.asdf")).unwrap();
    std::fs::write(d.path().join("dir0000.asdf"), b"precious").unwrap();
    let r = run(&["explode", &s(&x), "-o", &s(&d.path().join("dir.asdf"))]);
    assert_eq!(r.code, Some(1), "{}", r.text());
    assert_eq!(std::fs::read(d.path().join("dir0000.asdf")).unwrap(), b"precious");
    assert!(!d.path().join("dir0001.asdf").exists(), "{}", r.text());
    let out = format!("{}/", s(&d.path().join("out.asdf")));
    let r = run(&["explode", &s(&x), "-o", &out]);
    assert_ne!(r.code, Some(0), "{}", r.text());
    let left: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("out") || n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}: {}", r.text());
    // And a good explode still writes the file and its parts.
    let r = run(&["explode", &s(&x), "-o", &s(&d.path().join("e.asdf"))]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    assert!(d.path().join("e0000.asdf").exists() && d.path().join("e0001.asdf").exists());
    assert_eq!(
        asdf::open(d.path().join("e.asdf"))
            .unwrap()
            .array("/x")
            .unwrap()
            .read::<Vec<f64>>()
            .unwrap(),
        (0..12).map(f64::from).collect::<Vec<_>>()
    );
}

/// Found by the independent review: `to-yaml` kept a chunked array's chunk map but wrote no
/// blocks (the array was lost, exit 0); chunked arrays are inlined as core ndarrays now.
#[test]
fn to_yaml_inlines_chunked_arrays() {
    let d = tempfile::tempdir().unwrap();
    let x = d.path().join("c.asdf");
    let v: Vec<f64> = (0..35).map(f64::from).collect();
    let mut f = asdf::AsdfFile::new(asdf::Version::STANDARD_LATEST).unwrap();
    f.put_array("/z", asdf::NewArray::from_slice(&v, &[7, 5]).unwrap().chunks(&[3, 2]))
        .unwrap();
    f.write(&x, &asdf::WriteOptions::default()).unwrap();
    assert!(matches!(
        asdf::open(&x).unwrap().array("/z").unwrap().storage(),
        asdf::Storage::Chunked { .. }
    ));
    let out = d.path().join("y.asdf");
    let r = run(&["to-yaml", &s(&x), "-o", &s(&out)]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    let back = asdf::open(&out).unwrap();
    assert_eq!(back.array("/z").unwrap().read::<Vec<f64>>().unwrap(), v);
    assert_eq!(back.array("/z").unwrap().shape(), &[7, 5]);
}

/// Found by the independent review: `get` of a masked array wrote its values without the mask
/// (masked values read as valid); it refuses now, naming `to-json`, which writes the mask.
#[test]
fn get_refuses_masked_arrays_rather_than_drop_the_mask() {
    let d = tempfile::tempdir().unwrap();
    let m = d.path().join("m.asdf");
    let tree =
        "m: !core/ndarray-1.0.0\n  source: 0\n  datatype: float64\n  byteorder: little\n  shape: [2]\n  mask: 1.5\n";
    std::fs::write(
        &m,
        with_block(
            tree,
            &[1.5f64, 2.0].iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>(),
        ),
    )
    .unwrap();
    let (mp, npy, json) = (s(&m), s(&d.path().join("o.npy")), s(&d.path().join("o.json")));
    for args in [
        vec!["get", &mp, "/m"],
        vec!["get", &mp, "/m", "-o", &npy],
        vec!["get", &mp, "/m", "-o", &json],
    ] {
        let r = run(&args);
        assert_eq!(r.code, Some(1), "{args:?}: {}", r.text());
        assert!(r.stderr.contains("the array is masked"), "{}", r.text());
        assert!(r.stdout.is_empty(), "{}", r.text());
    }
    assert!(!d.path().join("o.npy").exists() && !d.path().join("o.json").exists());
}

/// Found by the independent review: `verify` of an exploded file passed when one of its parts
/// failed its checksum (Python asdf's read with checksums fails); the parts' blocks are
/// verified with the file now.
#[test]
fn verify_checks_the_blocks_of_exploded_parts() {
    let d = tempfile::tempdir().unwrap();
    let x = d.path().join("x.asdf");
    sample(&x);
    let e = d.path().join("e.asdf");
    let r = run(&["explode", &s(&x), "-o", &s(&e)]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    let r = run(&["verify", &s(&e)]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    let part = d.path().join("e0001.asdf");
    let mut bytes = std::fs::read(&part).unwrap();
    // The first byte of the block's data: after the magic, the header size and a header of 48.
    let at = bytes.windows(4).position(|w| w == b"\xd3BLK").unwrap() + 6 + 48;
    bytes[at] ^= 0xff;
    std::fs::write(&part, bytes).unwrap();
    let r = run(&["verify", &s(&e)]);
    assert_eq!(r.code, Some(1), "{}", r.text());
    assert!(r.stdout.contains("e0001.asdf"), "{}", r.text());
}

/// Found by the independent review: `diff` matched keys by their text, so a file with keys `1`
/// and `'1'` differed from itself, and `{1: x}` equalled `{'1': x}`.
#[test]
fn diff_tells_keys_of_one_text_and_two_types_apart() {
    let d = tempfile::tempdir().unwrap();
    let head = "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n";
    let both = d.path().join("both.asdf");
    std::fs::write(
        &both,
        format!("{head}m: {{1: one, '1': str-one, 'true': t, true: bool}}\n...\n"),
    )
    .unwrap();
    let r = run(&["diff", &s(&both), &s(&both)]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    let int = d.path().join("int.asdf");
    std::fs::write(&int, format!("{head}m: {{1: x}}\n...\n")).unwrap();
    let st = d.path().join("str.asdf");
    std::fs::write(&st, format!("{head}m: {{'1': x}}\n...\n")).unwrap();
    let r = run(&["diff", &s(&int), &s(&st)]);
    assert_eq!(r.code, Some(1), "{}", r.text());
}

/// Found by the independent review: a file name holding a newline printed as it is, so it
/// could forge a line of the walk's report (`ok    forged.asdf (9 blocks)`).
#[test]
fn names_with_control_characters_cannot_forge_report_lines() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("w");
    std::fs::create_dir(&dir).unwrap();
    sample(&dir.join("a\nok    forged.asdf (9 blocks)\nb.asdf"));
    let r = run(&["verify", &s(&dir)]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    assert!(!r.stdout.lines().any(|l| l.starts_with("ok    forged")), "{}", r.text());
    assert!(
        r.stdout.contains("a\\nok    forged.asdf (9 blocks)\\nb.asdf"),
        "{}",
        r.text()
    );
    assert!(r.stdout.contains("1 files: 1 verified"), "{}", r.text());
}

// ---------------------------------------------------------------------------------------
// Numbers in queries

/// `search --value` compares integers exactly at any size (2^53 + 1 is not 2^53, a 30-digit
/// integer is itself), a float equals an integer only when it is that integer, and the query
/// is read as a YAML scalar would be (`0x10`, `1_000`).
#[test]
fn search_compares_numbers_exactly() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("edges-search-numbers");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("n.asdf");
    std::fs::write(
        &p,
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
         a: 9007199254740992\nb: 9007199254740993\nc: 123456789012345678901234567890\nd: 2.5\ne: 16.0\nf: 1000\n...\n",
    )
    .unwrap();
    let f = s(&p);
    let hits = |v: &str| {
        let r = run(&["search", &f, "--value", v]);
        assert!(matches!(r.code, Some(0 | 1)), "{}", r.text());
        r.stdout
            .lines()
            .map(|l| l.split(' ').next().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(hits("9007199254740993"), ["/b"]);
    assert_eq!(hits("9007199254740992"), ["/a"]);
    assert_eq!(hits("9007199254740992.0"), ["/a"]);
    assert_eq!(hits("123456789012345678901234567890"), ["/c"]);
    assert_eq!(hits("123456789012345678901234567891"), Vec::<String>::new());
    assert_eq!(hits("2.50"), ["/d"]);
    assert_eq!(hits("16"), ["/e"]);
    assert_eq!(hits("0x10"), ["/e"]);
    assert_eq!(hits("1_000"), ["/f"]);
    assert_eq!(hits("1e3"), ["/f"]);
}

/// Found by the independent review: `diff` reported an array it could not read as a
/// difference (exit 1, "1 difference(s)"). A node that cannot be compared is an error on
/// standard error with exit 2, and is not counted as a difference; real differences are still
/// listed.
#[test]
fn diff_tells_unreadable_from_different() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("edges-diff-unreadable");
    std::fs::create_dir_all(&dir).unwrap();
    let tree = "a: 1\nx: !core/ndarray-1.0.0 {source: 0, datatype: float64, shape: [2], byteorder: little}\n";
    let good = dir.join("good.asdf");
    std::fs::write(&good, with_block(tree, &[0u8; 16])).unwrap();
    // The same tree, its block four bytes short of what the array needs.
    let short = dir.join("short.asdf");
    std::fs::write(&short, with_block(&tree.replace("a: 1", "a: 2"), &[0u8; 12])).unwrap();
    let r = run(&["diff", &s(&good), &s(&short)]);
    assert_eq!(r.code, Some(2), "{}", r.text());
    assert!(
        r.stdout.contains("/a:") && r.stdout.contains("1 difference(s)"),
        "{}",
        r.text()
    );
    assert!(!r.stdout.contains("/x"), "{}", r.text());
    assert!(r.stderr.contains("/x: not compared: second file:"), "{}", r.text());
    let r = run(&["diff", &s(&good), &s(&good)]);
    assert_eq!((r.code, r.stdout.as_str()), (Some(0), ""), "{}", r.text());
}

/// Found by the independent review: a file naming its Zarr directory store by a relative path
/// (`s.zarr`, beside it) was written by `convert`, `defragment` and `implode` into another
/// folder with the path copied as written, so the output named a store that is not there.
/// They refuse (exit 1, naming the store's pointer) and write nothing; in the input's folder
/// they write, and the output reads the store's values.
#[test]
fn outputs_in_another_folder_do_not_lose_relative_stores() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("edges-moved-stores");
    let _ = std::fs::remove_dir_all(&dir);
    let (a, b) = (dir.join("a"), dir.join("b"));
    std::fs::create_dir_all(&b).unwrap();
    zarr_store(&a.join("s.zarr"), "[2]", "[2]", "null");
    std::fs::write(
        a.join("s.zarr/0"),
        [1.25f64.to_le_bytes(), 2.5f64.to_le_bytes()].concat(),
    )
    .unwrap();
    let input = a.join("f.asdf");
    file_with_store(&input, "s.zarr");
    for command in ["convert", "defragment", "implode"] {
        let out = b.join(format!("{command}.asdf"));
        let r = run(&[command, &s(&input), "-o", &s(&out)]);
        assert_eq!(r.code, Some(1), "{command}: {}", r.text());
        assert!(
            r.stderr.contains("/z/store") && r.stderr.contains("input's folder"),
            "{command}: {}",
            r.text()
        );
        assert!(!out.exists(), "{command}");
        let beside = a.join(format!("{command}.asdf"));
        let r = run(&[command, &s(&input), "-o", &s(&beside)]);
        assert_eq!(r.code, Some(0), "{command}: {}", r.text());
        let r = run(&["get", &s(&beside), "/z"]);
        assert!(
            r.code == Some(0) && r.stdout.contains("1.25") && r.stdout.contains("2.5"),
            "{command}: {}",
            r.text()
        );
    }
}

/// Found by the independent review: `verify` never read the chunks of a Zarr directory store
/// ("0 blocks verified", exit 0, with a chunk that does not decode or a chunk file linked out
/// of the file's folder). Every stored chunk is now read and decoded; a chunk never written
/// is the fill value, not a problem.
#[test]
fn verify_reads_every_chunk_of_a_directory_store() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("edges-verify-store");
    let _ = std::fs::remove_dir_all(&dir);
    let store = dir.join("a/s.zarr");
    zarr_store(&store, "[4, 2]", "[2, 2]", r#"{"id": "zlib", "level": 1}"#);
    let zlib = |v: &[f64]| {
        use std::io::Write as _;
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        for x in v {
            e.write_all(&x.to_le_bytes()).unwrap();
        }
        e.finish().unwrap()
    };
    std::fs::write(store.join("0.0"), zlib(&[1.0, 2.0, 3.0, 4.0])).unwrap();
    let input = dir.join("a/f.asdf");
    file_with_store(&input, "s.zarr");
    // One chunk written, one never written (the fill value): verified.
    let r = run(&["verify", &s(&input)]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    // A chunk that does not decode.
    std::fs::write(store.join("1.0"), b"not zlib").unwrap();
    let r = run(&["verify", &s(&input)]);
    assert_eq!(r.code, Some(1), "{}", r.text());
    assert!(r.text().contains("/z"), "{}", r.text());
    // A chunk file linked to a file outside the file's folder: refused, and said.
    std::fs::remove_file(store.join("1.0")).unwrap();
    std::fs::write(dir.join("outside"), zlib(&[9.0, 9.0, 9.0, 9.0])).unwrap();
    std::os::unix::fs::symlink(dir.join("outside"), store.join("1.0")).unwrap();
    let r = run(&["verify", &s(&input)]);
    assert_eq!(r.code, Some(1), "{}", r.text());
    assert!(r.text().contains("/z") && r.text().contains("outside"), "{}", r.text());
}

/// Found by the independent review: `to-json` wrote asdf-zarr arrays as their raw tree (the
/// store's mapping), not their values. Random arrays written by Python asdf + asdf-zarr
/// (internal chunks and a directory store, several dtypes, partial edge chunks, chunks never
/// written) come out with the values Python asdf reads, element for element.
#[test]
fn to_json_decodes_asdf_zarr_arrays_as_python_reads_them() {
    let py = asdf_testdata::interop_python();
    let d = tempfile::tempdir().unwrap();
    let make = r#"
import json, sys
import numpy as np, asdf, zarr
out = sys.argv[1]
rng = np.random.default_rng(20261128)
want = {}
for i in range(8):
    tree = {}
    for k, dt in enumerate(["<f8", "<i4", ">u2", "<f4", "|i1"]):
        ndim = int(rng.integers(1, 4))
        shape = tuple(int(n) for n in rng.integers(1, 7, size=ndim))
        chunks = tuple(int(rng.integers(1, n + 1)) for n in shape)
        a = (rng.standard_normal(shape) * 100).astype(dt)
        if i % 2:
            z = zarr.open(f"{out}/f{i}_{k}.zarr", mode="w", shape=shape, chunks=chunks, dtype=dt, fill_value=0)
        else:
            z = zarr.zeros(shape, chunks=chunks, dtype=dt)
        # The first half written; the rest of the chunks may never be.
        half = tuple(slice(0, max(1, n // 2)) for n in shape)
        z[half] = a[half]
        tree[f"z{k}"] = z
    asdf.AsdfFile(tree).write_to(f"{out}/f{i}.asdf")
    with asdf.open(f"{out}/f{i}.asdf") as f:
        want[i] = {k: np.asarray(f[k][...]).tolist() for k in tree}
json.dump(want, open(f"{out}/want.json", "w"))
"#;
    let out = Command::new(&py).arg("-c").arg(make).arg(d.path()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let want: serde_json::Value = serde_json::from_slice(&std::fs::read(d.path().join("want.json")).unwrap()).unwrap();
    let mut compared = 0;
    for (i, arrays) in want.as_object().unwrap() {
        let r = run(&["to-json", &s(&d.path().join(format!("f{i}.asdf")))]);
        assert_eq!(r.code, Some(0), "{}", r.text());
        let got: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        for (k, values) in arrays.as_object().unwrap() {
            let data = &got[k]["data"];
            // Numbers compared as f64 (JSON's), every element.
            let flat = |v: &serde_json::Value| -> Vec<f64> {
                fn go(v: &serde_json::Value, out: &mut Vec<f64>) {
                    match v {
                        serde_json::Value::Array(a) => a.iter().for_each(|x| go(x, out)),
                        x => out.push(x.as_f64().unwrap()),
                    }
                }
                let mut out = Vec::new();
                go(v, &mut out);
                out
            };
            assert_eq!(flat(data), flat(values), "f{i} {k}: {}", got[k]);
            compared += flat(values).len();
        }
    }
    assert!(compared > 500, "{compared}");
}

/// Found by the independent review: with keys `'1'` (a string) and `1` (an integer) in one
/// mapping, `search` printed `/1` for both and `get` could not reach the integer key's array.
/// `search` prints `/~e<i>` (the entry's position) for the key whose text names the other
/// entry, and `get` reads each array by the pointer `search` printed.
#[test]
fn search_and_get_reach_keys_of_one_text_and_two_types() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("edges-entry-pointers");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("k.asdf");
    std::fs::write(
        &p,
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
         m:\n  '1': !core/ndarray-1.0.0 {data: [1, 2], datatype: int64, shape: [2]}\n  \
         1: !core/ndarray-1.0.0 {data: [7, 8, 9], datatype: int64, shape: [3]}\n...\n",
    )
    .unwrap();
    let f = s(&p);
    let r = run(&["search", &f, "--type", "ndarray"]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    let pointers: Vec<&str> = r.stdout.lines().map(|l| l.split(' ').next().unwrap()).collect();
    assert_eq!(pointers, ["/m/1", "/m/~e1"], "{}", r.text());
    let values = |ptr: &str| {
        let r = run(&["get", &f, ptr]);
        assert_eq!(r.code, Some(0), "{ptr}: {}", r.text());
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        v["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_i64().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(values("/m/1"), [1, 2]);
    assert_eq!(values("/m/~e1"), [7, 8, 9]);
    assert_eq!(values("/m/~e0"), [1, 2]);
    for bad in ["/m/~e01", "/m/~e2", "/m/~e"] {
        let r = run(&["get", &f, bad]);
        assert_eq!(r.code, Some(1), "{bad}: {}", r.text());
    }
}

/// Found by the independent review: Ctrl-C during `to-json -o out.json` left the write's
/// temporary file (`.out.json.PID.*.tmp`) beside the output. An interrupt now removes the
/// temporaries of unfinished writes; the output is not made.
#[test]
fn an_interrupted_write_leaves_no_temporary_file() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("edges-interrupted");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("big.asdf");
    let mut f = asdf::AsdfFile::new(asdf::Version::STANDARD_LATEST).unwrap();
    let x: Vec<f64> = (0..8_000_000u32).map(|i| f64::from(i) * 1.000_001).collect();
    f.put_array("/x", asdf::NewArray::from_slice(&x, &[x.len()]).unwrap())
        .unwrap();
    f.write(&input, &asdf::WriteOptions::default()).unwrap();
    let out = dir.join("out.json");
    let mut child = cli(&["to-json".as_ref(), input.as_os_str(), "-o".as_ref(), out.as_os_str()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let temporaries = || {
        std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
            .filter(|n| n.ends_with(".tmp"))
            .collect::<Vec<_>>()
    };
    // Interrupted once its temporary is there (the write under way).
    let start = std::time::Instant::now();
    while temporaries().is_empty() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "to-json ended before it was interrupted"
        );
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "no temporary appeared"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // SAFETY: the child is ours and still running (not waited for).
    let r = unsafe { libc::kill(i32::try_from(child.id()).unwrap(), libc::SIGINT) };
    assert_eq!(r, 0);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert_eq!(temporaries(), Vec::<String>::new());
    assert!(!out.exists());
}

/// Found by the independent review: a folder walk passed over files not named `.asdf` or FITS
/// without a word, even ASDF files under another name. Such a file is read when its first bytes
/// are an ASDF file's (`#ASDF`, `%FINF`), and the summary counts the others it passed over.
#[test]
fn folder_walks_read_asdf_files_by_content_and_count_the_others() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("edges-walk-others");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    sample(&dir.join("a.asdf"));
    sample(&dir.join("b.dat"));
    std::fs::write(
        dir.join("c.bin"),
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n--- {a: [}\n",
    )
    .unwrap();
    std::fs::write(dir.join("notes.txt"), "not ASDF").unwrap();
    std::fs::write(dir.join("empty"), "").unwrap();
    let r = run(&["verify", &s(&dir)]);
    assert_eq!(r.code, Some(1), "{}", r.text());
    assert!(
        r.stdout.contains("ok    ") && r.stdout.contains("b.dat"),
        "{}",
        r.text()
    );
    assert!(
        r.stdout.contains("FAIL  ") && r.stdout.contains("c.bin"),
        "{}",
        r.text()
    );
    assert!(
        r.stdout.contains("3 files: 2 verified, 1 failed, 0 skipped")
            && r.stdout
                .contains("(2 other files not ASDF by name or content, not read)"),
        "{}",
        r.text()
    );
    let r = run(&["info", &s(&dir)]);
    assert!(
        r.stdout
            .contains("(2 other files not ASDF by name or content, not read)"),
        "{}",
        r.text()
    );
}

/// Found by the independent review: `preview` of an empty 2-D array failed with the PNG
/// encoder's "Zero width not allowed", and an empty 1-D array gave an empty plot. Both are now
/// an error that names the array and its shape; `--all` passes over empty cubes.
#[test]
fn preview_of_an_empty_array_says_there_is_nothing_to_draw() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("edges-preview-empty");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("e.asdf");
    let mut f = asdf::AsdfFile::new(asdf::Version::STANDARD_LATEST).unwrap();
    for (name, shape) in [
        ("/e", vec![0usize, 5]),
        ("/e1", vec![3, 0]),
        ("/v", vec![0]),
        ("/c", vec![0, 4, 4]),
    ] {
        f.put_array(name, asdf::NewArray::from_slice::<f64>(&[], &shape).unwrap())
            .unwrap();
    }
    let x: Vec<f64> = (0..16).map(f64::from).collect();
    f.put_array("/img", asdf::NewArray::from_slice(&x, &[4, 4]).unwrap())
        .unwrap();
    f.write(&p, &asdf::WriteOptions::default()).unwrap();
    let out = dir.join("o.png");
    for (ptr, shape) in [("/e", "[0, 5]"), ("/e1", "[3, 0]"), ("/v", "[0]")] {
        let r = run(&["preview", &s(&p), ptr, "-o", &s(&out)]);
        assert_eq!(r.code, Some(1), "{ptr}: {}", r.text());
        assert!(
            r.stderr
                .contains(&format!("{ptr}: the region drawn has shape {shape}, no element")),
            "{}",
            r.text()
        );
        assert!(!out.exists());
    }
    let r = run(&["preview", &s(&p), "--all", "-o", &s(&out)]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    let r = run(&["preview", &s(&p), "-o", &s(&out)]);
    assert!(r.code == Some(0) && r.stderr.contains("/img"), "{}", r.text());
}

/// Found by the independent review: a Zarr store outside the file's folder was refused with a
/// message naming a Rust-only option, and no command could read it. `--references any` reads
/// it (the message names the flag); `--references none` refuses even a store beside the file.
#[test]
fn references_flag_sets_the_reference_policy() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("edges-references-flag");
    let _ = std::fs::remove_dir_all(&dir);
    let store = dir.join("outside.zarr");
    zarr_store(&store, "[2]", "[2]", "null");
    std::fs::create_dir_all(dir.join("in")).unwrap();
    std::fs::write(store.join("0"), [1.25f64.to_le_bytes(), 2.5f64.to_le_bytes()].concat()).unwrap();
    let input = dir.join("in/f.asdf");
    file_with_store(&input, store.to_str().unwrap());
    let r = run(&["get", &s(&input), "/z"]);
    assert_eq!(r.code, Some(1), "{}", r.text());
    assert!(r.stderr.contains("--references any"), "{}", r.text());
    let r = run(&["get", &s(&input), "/z", "--references", "any"]);
    assert!(r.code == Some(0) && r.stdout.contains("[1.25, 2.5]"), "{}", r.text());
    let r = run(&["--references", "none", "verify", &s(&input)]);
    assert_eq!(r.code, Some(1), "{}", r.text());
    let r = run(&["get", &s(&input), "/z", "--references", "sometimes"]);
    assert_eq!(r.code, Some(2), "{}", r.text());
}

/// Found by the second independent review of the CLI: `diff` took 2^53 + 1 and 2^53.0 (and
/// 2^63 - 1 and 9.223372036854775807e18) for equal; it missed a change in the array under the
/// integer key `1` beside the string key `'1'` (it read the string key's array in both files);
/// a file that cannot be opened exited 1 as "different"; a malformed `-i` pointer was taken.
#[test]
fn diff_compares_numbers_exactly_and_every_key_by_its_own_pointer() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("edges-diff-exact");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = |name: &str, body: &str| {
        let p = dir.join(name);
        std::fs::write(
            &p,
            format!("#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n{body}...\n"),
        )
        .unwrap();
        s(&p)
    };
    for (x, y, same) in [
        ("9007199254740993", "9007199254740993.0", false),
        ("9223372036854775807", "9.223372036854775807e+18", false),
        ("9007199254740992", "9007199254740992.0", true),
        ("123456789012345678901234567890", "123456789012345678901234567890", true),
        ("3", "3.5", false),
    ] {
        let a = file("a.asdf", &format!("v: {x}\n"));
        let b = file("b.asdf", &format!("v: {y}\n"));
        let r = run(&["diff", &a, &b]);
        assert_eq!(r.code, Some(if same { 0 } else { 1 }), "{x} vs {y}: {}", r.text());
    }
    let arrays = |int: &str| {
        format!(
            "m:\n  1: !core/ndarray-1.1.0 {{data: [{int}], datatype: int64, shape: [3]}}\n  '1': !core/ndarray-1.1.0 {{data: [0, 1], datatype: int64, shape: [2]}}\n"
        )
    };
    let a = file("c.asdf", &arrays("0, 1, 2"));
    let b = file("d.asdf", &arrays("1, 2, 3"));
    let r = run(&["diff", &a, &b]);
    assert_eq!(r.code, Some(1), "{}", r.text());
    assert!(
        r.stdout
            .contains("/m/~e0: 3 of 3 elements differ; first at flat index 0: 0 != 1"),
        "{}",
        r.text()
    );
    assert!(!r.stdout.contains("/m/1:"), "{}", r.text());
    let r = run(&["diff", &a, &s(&dir.join("missing.asdf"))]);
    assert_eq!(r.code, Some(2), "{}", r.text());
    let r = run(&["diff", &a, &b, "-i", "/m/bad~"]);
    assert_eq!(r.code, Some(2), "{}", r.text());
    let r = run(&["diff", &a, &b, "-i", "/m/~e0"]);
    assert_eq!((r.code, r.stdout.as_str()), (Some(0), ""), "{}", r.text());
    // `search --value null` finds a null, as `~` does.
    let n = file("n.asdf", "x: null\ny: ~\nz: 'null'\n");
    let r = run(&["search", &n, "--value", "null"]);
    assert!(
        r.stdout.contains("/x ") && r.stdout.contains("/y ") && r.stdout.contains("/z "),
        "{}",
        r.text()
    );
}

/// Found by the second independent review of the CLI: an output named through a symbolic link
/// onto a file of the input's Zarr directory store (a chunk, `.zarray`) was written over it
/// (the store ruined, exit 0); `explode` into another folder kept a relative store path; a
/// FIFO in a store hung `verify` for ever.
#[test]
fn stores_a_file_reads_are_inputs_and_never_hang() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("edges-store-inputs");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("other")).unwrap();
    zarr_store(&dir.join("s.zarr"), "[4]", "[2]", "null");
    std::fs::write(
        dir.join("s.zarr/0"),
        [1.0f64.to_le_bytes(), 2.0f64.to_le_bytes()].concat(),
    )
    .unwrap();
    std::fs::write(
        dir.join("s.zarr/1"),
        [3.0f64.to_le_bytes(), 4.0f64.to_le_bytes()].concat(),
    )
    .unwrap();
    let input = dir.join("f.asdf");
    file_with_store(&input, "s.zarr");
    let before: Vec<Vec<u8>> = ["0", "1", ".zarray"]
        .iter()
        .map(|k| std::fs::read(dir.join("s.zarr").join(k)).unwrap())
        .collect();
    for (link, target, args) in [
        ("c.npy", "s.zarr/0", vec!["get", "/z"]),
        ("c.json", "s.zarr/.zarray", vec!["to-json"]),
        ("c.asdf", "s.zarr/1", vec!["convert"]),
    ] {
        std::os::unix::fs::symlink(dir.join(target), dir.join(link)).unwrap();
        let mut argv = vec![args[0], input.to_str().unwrap()];
        argv.extend(&args[1..]);
        let out = s(&dir.join(link));
        argv.extend(["-o", out.as_str()]);
        let r = run(&argv);
        assert_eq!(r.code, Some(1), "{argv:?}: {}", r.text());
    }
    let after: Vec<Vec<u8>> = ["0", "1", ".zarray"]
        .iter()
        .map(|k| std::fs::read(dir.join("s.zarr").join(k)).unwrap())
        .collect();
    assert_eq!(before, after);
    let r = run(&["explode", &s(&input), "-o", &s(&dir.join("other/e.asdf"))]);
    assert_eq!(r.code, Some(1), "{}", r.text());
    assert!(!dir.join("other/e.asdf").exists());
    // A FIFO where a chunk file would be: an error naming it, at once.
    std::fs::remove_file(dir.join("s.zarr/1")).unwrap();
    let fifo = std::ffi::CString::new(dir.join("s.zarr/1").to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let r = run(&["verify", &s(&input)]);
    assert_eq!(r.code, Some(1), "{}", r.text());
    assert!(r.text().contains("not a regular file"), "{}", r.text());
}

/// Found by the remote review: the CLI printed the URL it was given in its own lines (`FAIL
/// https://user:secret@...`), secrets and all. Every line that names a target hides a URL's
/// password and signatures, as the library's messages do. (Port 1 of the loopback refuses at
/// once: no server is needed.)
#[test]
fn lines_that_name_a_url_hide_its_secrets() {
    let a = "http://reader:hunter2@127.0.0.1:1/a.asdf?sig=SIGSECRET";
    let b = "http://reader:hunter2@127.0.0.1:1/b.asdf?X-Amz-Signature=AMZSECRET";
    for args in [
        vec!["verify", a, b],
        vec!["verify", a],
        vec!["info", a, b],
        vec!["validate", a],
    ] {
        let r = run(&args);
        assert_eq!(r.code, Some(1), "{args:?}: {}", r.text());
        for secret in ["hunter2", "SIGSECRET", "AMZSECRET"] {
            assert!(!r.text().contains(secret), "{args:?}: {}", r.text());
        }
        assert!(r.text().contains("reader:***@127.0.0.1"), "{args:?}: {}", r.text());
    }
}

/// Found by the remote review: `verify` of an empty (or mistyped) folder or prefix exited 0
/// having verified nothing; `validate`'s summary line printed a URL's secrets.
#[test]
fn verify_of_nothing_fails_and_validate_hides_secrets() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("edges-verify-nothing");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let r = run(&["verify", &s(&dir)]);
    assert_eq!(r.code, Some(1), "{}", r.text());
    assert!(r.stderr.contains("nothing was verified"), "{}", r.text());
    let r = run(&[
        "validate",
        "http://u:pw-secret@127.0.0.1:1/a.asdf?key=KEYSECRET&auth=AUTHSECRET",
    ]);
    assert_eq!(r.code, Some(1), "{}", r.text());
    for secret in ["pw-secret", "KEYSECRET", "AUTHSECRET"] {
        assert!(!r.text().contains(secret), "{}", r.text());
    }
}

/// Found by the second CLI review: `--slice "0,"` (numpy's `a[0,]`) was refused, and a file
/// whose only 2-D arrays are one row said it had no array of two or more dimensions.
#[test]
fn a_trailing_comma_slices_as_numpy_and_preview_says_why_a_row_is_no_image() {
    let d = tempfile::tempdir().unwrap();
    let x = d.path().join("x.asdf");
    sample(&x);
    let x = s(&x);
    let one = run(&["get", &x, "/x", "--slice", "1,"]);
    let plain = run(&["get", &x, "/x", "--slice", "1"]);
    assert_eq!(one.code, Some(0), "{}", one.text());
    assert_eq!(one.stdout, plain.stdout);
    assert!(one.stdout.contains("[4.0, 5.0, 6.0, 7.0]"), "{}", one.text());
    for bad in [",", "1,,"] {
        assert_eq!(run(&["get", &x, "/x", "--slice", bad]).code, Some(2), "{bad}");
    }
    let row = d.path().join("row.asdf");
    let mut f = asdf::AsdfFile::new(asdf::Version::STANDARD_LATEST).unwrap();
    let v: Vec<f64> = (0..50).map(f64::from).collect();
    f.put_array("/r", asdf::NewArray::from_slice(&v, &[1, 50]).unwrap())
        .unwrap();
    f.write(&row, &asdf::WriteOptions::default()).unwrap();
    let png = s(&d.path().join("o.png"));
    let r = run(&["preview", &s(&row), "-o", &png]);
    assert_eq!(r.code, Some(1), "{}", r.text());
    assert!(r.stderr.contains("as a (1, N) row is not"), "{}", r.text());
    let r = run(&["preview", &s(&row), "/r", "-o", &png]);
    assert_eq!(r.code, Some(0), "{}", r.text());
}

/// Found by the second CLI review: a 200-byte file whose ndarray has a stride of 0 and a
/// shape of 1.6e9 made `get` write out 12.8 GB (1.9 GB of memory after 20 s). Refused before
/// anything that size is made; a region of it, or a small repeated view, is written.
#[test]
fn get_refuses_a_view_its_zero_strides_make_gigabytes_from_bytes() {
    let d = tempfile::tempdir().unwrap();
    let x = d.path().join("zs.asdf");
    let tree = "a: !core/ndarray-1.1.0 {source: 0, datatype: float64, byteorder: little, shape: [1600000000], strides: [0]}\nb: !core/ndarray-1.1.0 {source: 0, datatype: float64, byteorder: little, shape: [3], strides: [0]}\n";
    std::fs::write(&x, with_block(tree, &1.5f64.to_le_bytes())).unwrap();
    let x = s(&x);
    let r = run(&["get", &x, "/a"]);
    assert_eq!(r.code, Some(1), "{}", r.text());
    assert!(
        r.stderr.contains("12800000000 bytes written out, from 8 bytes"),
        "{}",
        r.text()
    );
    let r = run(&["get", &x, "/a", "--slice", "5:8"]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    assert!(r.stdout.contains("[1.5, 1.5, 1.5]"), "{}", r.text());
    let r = run(&["get", &x, "/b"]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    assert!(r.stdout.contains("[1.5, 1.5, 1.5]"), "{}", r.text());
    // `to-json` and `diff` write out or compare every element: the same refusal, at once
    // (they ran for hours). `to-json` writes the node as its tree with the reason; `diff`
    // says it could not compare it (exit 2), the small view compared.
    let r = run(&["to-json", &x]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(
        v["a"]["$error"]
            .as_str()
            .is_some_and(|e| e.contains("12800000000 bytes written out, from 8 bytes")),
        "{}",
        r.text()
    );
    assert_eq!(v["b"]["data"], serde_json::json!([1.5, 1.5, 1.5]), "{}", r.text());
    let r = run(&["diff", &x, &x]);
    assert_eq!(r.code, Some(2), "{}", r.text());
    assert!(
        r.stderr.contains("/a") && r.stderr.contains("strides repeat") && !r.stderr.contains("/b"),
        "{}",
        r.text()
    );
}

/// Found by the second CLI review: `to-yaml` of an array over its inline limit said the
/// array had more elements than memory can hold. It names its own limit and `to-json`.
#[test]
fn to_yaml_names_its_own_inline_limit() {
    let d = tempfile::tempdir().unwrap();
    let x = d.path().join("big.asdf");
    let tree =
        "a: !core/ndarray-1.1.0 {source: 0, datatype: float64, byteorder: little, shape: [10000001], strides: [0]}\n";
    std::fs::write(&x, with_block(tree, &1.5f64.to_le_bytes())).unwrap();
    let r = run(&["to-yaml", &s(&x)]);
    assert_eq!(r.code, Some(1), "{}", r.text());
    assert!(
        r.stderr
            .contains("/a: 10000001 elements, more than the 10000000 `to-yaml` writes inline")
            && r.stderr.contains("`to-json` streams"),
        "{}",
        r.text()
    );
}

/// Every `asdf-cli` command the README shows is one the CLI takes (its `convert obs.asdf
/// out.fits` was refused: `-o` is required). Run in a folder with an `obs.asdf`; commands of
/// URLs are left out (no network in tests).
#[test]
fn the_readme_commands_parse() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md")).unwrap();
    let d = tempfile::tempdir().unwrap();
    sample(&d.path().join("obs.asdf"));
    let mut tried = 0;
    for line in readme.lines().filter(|l| l.starts_with("asdf-cli ")) {
        if line.contains("://") {
            continue;
        }
        // Words as the shell splits them (double quotes), up to a comment.
        let mut words = Vec::new();
        let (mut word, mut quoted, mut any) = (String::new(), false, false);
        for c in line.chars() {
            match c {
                '"' => {
                    quoted = !quoted;
                    any = true;
                }
                '#' if !quoted && word.is_empty() => break,
                ' ' if !quoted => {
                    if any || !word.is_empty() {
                        words.push(std::mem::take(&mut word));
                    }
                    any = false;
                }
                c => word.push(c),
            }
        }
        if any || !word.is_empty() {
            words.push(word);
        }
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_asdf-cli"))
            .args(&words[1..])
            .current_dir(d.path())
            .stdin(std::process::Stdio::null())
            .env("EDITOR", "true")
            .env("VISUAL", "true")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !err.contains("Usage:") && !err.contains("--help"),
            "README: `{line}` is not a command the CLI takes: {err}"
        );
        tried += 1;
    }
    assert!(tried >= 8, "{tried} README commands found");
}

/// Found by the fifth CLI review: `diff` compared integer keys by their spelling, so
/// `{0x10: h, 1_000: k, yes: y}` differed from `{16: h, 1000: k, true: y}`, which Python asdf
/// reads as one tree. Keys are compared by value (a string key `'16'` is still another key).
#[test]
fn diff_compares_keys_by_value() {
    let d = tempfile::tempdir().unwrap();
    let head = "#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n";
    let file = |name: &str, body: &str| {
        let p = d.path().join(name);
        std::fs::write(&p, format!("{head}{body}\n...\n")).unwrap();
        s(&p)
    };
    let spelled = file("spelled.asdf", "m: {0x10: h, 1_000: k, +7: p, 010: o, yes: y}");
    let plain = file("plain.asdf", "m: {16: h, 1000: k, 7: p, 8: o, true: y}");
    let strings = file("strings.asdf", "m: {'16': h, '1000': k, '7': p, '8': o, 'true': y}");
    let r = run(&["diff", &spelled, &plain]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    let r = run(&["diff", &plain, &strings]);
    assert_eq!(r.code, Some(1), "{}", r.text());
}

/// Found by the fifth CLI review: every command refused a file with a mapping key the standard
/// does not allow (`1.0`, `null`, a date), which Python asdf reads with a warning. They are
/// read as Python asdf reads them, each named with its line:column and mapping; `validate`
/// counts them as violations. A `!!set`'s float and null members are not keys of that kind.
#[test]
fn keys_the_standard_does_not_allow_are_read_with_a_warning() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("keys.asdf");
    std::fs::write(
        &p,
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
         m: {1.0: x, null: y, 2020-01-01: z, ok: 1}\ns: !!set {1.5: null}\n...\n",
    )
    .unwrap();
    let f = s(&p);
    for cmd in ["info", "to-json", "verify"] {
        let r = run(&[cmd, &f]);
        assert_eq!(r.code, Some(0), "{cmd}: {}", r.text());
        for (place, key) in [("6:5", "1.0"), ("6:13", "null"), ("6:22", "2020-01-01")] {
            assert!(
                r.stderr.contains(&format!("at {place}: mapping key `{key}` of /m")),
                "{cmd}: {}",
                r.stderr
            );
        }
        assert!(!r.stderr.contains("`1.5`"), "{cmd}: a set member warned: {}", r.stderr);
    }
    let r = run(&["to-json", &f]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["m"]["1.0"], "x");
    assert_eq!(v["m"]["null"], "y");
    assert_eq!(v["m"]["2020-01-01"], "z");
    assert_eq!(v["m"]["ok"], 1);
    let r = run(&["validate", &f]);
    assert_eq!(r.code, Some(1), "{}", r.text());
    assert!(r.stdout.contains("3 violation(s)"), "{}", r.stdout);
    assert!(r.stdout.contains("at 6:5: mapping key `1.0` of /m"), "{}", r.stdout);
}

/// Found by the sixth CLI review. Keys of one type and one value are one key, the later value
/// read, as Python asdf reads them (floats by value, every NaN one key): `diff` of a file and
/// its copy found differences, and `get` gave the value Python drops. A boolean key written
/// `yes` or `On` is reachable by its text: an array under it failed `verify` and `to-yaml`
/// ("no node at /p/yes"), and `to-json` renamed it with no other key to collide with.
#[test]
fn keys_of_one_value_are_one_key_and_yes_keys_are_reachable() {
    let d = tempfile::tempdir().unwrap();
    let body = "p: {yes: !core/ndarray-1.1.0 {data: [8], datatype: int64, shape: [1]}}\n\
                b: {yes: a, On: c}\na: {1.5: x, 1.50: y, .nan: p, .NaN: q}\n";
    let text = format!(
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n{body}...\n"
    );
    let (f, g) = (d.path().join("y.asdf"), d.path().join("copy.asdf"));
    std::fs::write(&f, &text).unwrap();
    std::fs::write(&g, &text).unwrap();
    let (f, g) = (s(&f), s(&g));
    for cmd in ["verify", "to-yaml"] {
        let r = run(&[cmd, &f]);
        assert_eq!(r.code, Some(0), "{cmd}: {}", r.text());
    }
    let r = run(&["diff", &f, &g]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    let r = run(&["to-json", &f]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["b"], serde_json::json!({"yes": "c"}), "{}", r.text());
    assert_eq!(v["a"], serde_json::json!({"1.5": "y", ".nan": "q"}), "{}", r.text());
    assert_eq!(v["p"]["yes"]["data"], serde_json::json!([8]));
    assert!(!r.stderr.contains("(2)"), "{}", r.stderr);
    let r = run(&["get", &f, "/p/yes"]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    assert!(r.stdout.contains("[8]"), "{}", r.stdout);
}

/// `info` of a FITS file lists each HDU's values' type as FITS readers give it: a uint16
/// image is stored as BITPIX 16 under BZERO 32768 and listed as uint16 (as astropy reads it,
/// and as `to-json` and `verify` say), an int8 one (BITPIX 8, BZERO -128) as int8.
#[test]
fn info_lists_the_values_type_of_bzero_images() {
    let d = std::env::temp_dir().join(format!("asdf-cli-info-bzero-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let mut f = asdf::AsdfFile::new(asdf::Version::STANDARD_LATEST).unwrap();
    let u: Vec<u16> = (0..12).map(|i| 60_000 + i).collect();
    f.put_array("/u", asdf::NewArray::from_slice(&u, &[3, 4]).unwrap())
        .unwrap();
    let i: Vec<i8> = (-6..6).collect();
    f.put_array("/i", asdf::NewArray::from_slice(&i, &[12]).unwrap())
        .unwrap();
    let p = d.join("bzero.fits");
    f.write(
        &p,
        &asdf::WriteOptions::default().fits(asdf::FitsWriteOptions::default()),
    )
    .unwrap();
    let r = run(&["info", &s(&p)]);
    assert_eq!(r.code, Some(0), "{}", r.text());
    let line = |name: &str| {
        r.stdout
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(name))
            .unwrap_or_else(|| panic!("no HDU {name} in {}", r.stdout))
            .to_owned()
    };
    assert!(line("U").ends_with(" uint16"), "{}", r.stdout);
    assert!(line("I").ends_with(" int8"), "{}", r.stdout);
    std::fs::remove_dir_all(&d).ok();
}
