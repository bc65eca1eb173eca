//! Regions (numpy's basic slicing, as `get --slice`, `preview --slice` and Python's `LazyArray`
//! take them) against numpy itself: random region texts with integers near 0, near the axes'
//! lengths, near `i64::MIN`/`i64::MAX` and beyond 64 bits, read from a file we wrote and
//! evaluated by numpy on the same values; every answer (values and shape, or an error) equal.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write as _;
use std::process::{Command, Stdio};

use asdf::{AsdfFile, NewArray, Version, WriteOptions};
use serde_json::{Value as J, json};

use asdf_conformance::Rng;

/// A draw below `n` (the suite's deterministic generator).
fn below(rng: &mut Rng, n: usize) -> usize {
    usize::try_from(rng.below(n as u64)).unwrap()
}

/// An integer as a user might type it: near 0, near the axis' length, near the 64-bit
/// extremes, beyond 64 bits, sometimes with a `+` or underscores.
fn number(rng: &mut Rng, len: usize) -> String {
    let n = i128::try_from(len).unwrap();
    let v: i128 = match below(rng, 9) {
        0..=2 => i128::try_from(below(rng, 7)).unwrap() - 3,
        3 | 4 => n + i128::try_from(below(rng, 5)).unwrap() - 2,
        5 => -n + i128::try_from(below(rng, 5)).unwrap() - 2,
        6 => i128::from(i64::MAX) - i128::try_from(below(rng, 3)).unwrap() + i128::try_from(below(rng, 3)).unwrap(),
        7 => i128::from(i64::MIN) + i128::try_from(below(rng, 3)).unwrap() - i128::try_from(below(rng, 3)).unwrap(),
        _ => {
            let big = [10i128.pow(20), 1i128 << 64, 1i128 << 100, i128::from(u64::MAX)][below(rng, 4)];
            if below(rng, 2) == 0 { big } else { -big }
        }
    };
    match below(rng, 10) {
        0 if v >= 0 => format!("+{v}"),
        1 if v.abs() >= 1000 => {
            // Underscores between digit groups, as Python's literals allow.
            let s = v.abs().to_string();
            let mut out = String::new();
            for (i, c) in s.chars().enumerate() {
                if i > 0 && (s.len() - i).is_multiple_of(3) {
                    out.push('_');
                }
                out.push(c);
            }
            if v < 0 { format!("-{out}") } else { out }
        }
        _ => v.to_string(),
    }
}

fn maybe(rng: &mut Rng, len: usize) -> String {
    if below(rng, 4) == 0 {
        String::new()
    } else {
        number(rng, len)
    }
}

/// A region for an array of `shape`: up to one more axis than it has, an ellipsis now and
/// then, indices and 2- or 3-part slices (steps never 0: numpy's error is ours, tested apart).
fn region(rng: &mut Rng, shape: &[usize]) -> String {
    let axes = below(rng, shape.len() + 2);
    let mut parts = Vec::new();
    let mut ellipsis = false;
    for a in 0..axes {
        let len = shape.get(a).copied().unwrap_or(3);
        let part = match below(rng, 8) {
            0 if !ellipsis => {
                ellipsis = true;
                "...".to_owned()
            }
            1 | 2 => number(rng, len),
            3 => format!("{}:{}", maybe(rng, len), maybe(rng, len)),
            _ => {
                let mut step = maybe(rng, len);
                while step
                    .trim_start_matches(['+', '-'])
                    .replace('_', "")
                    .bytes()
                    .all(|b| b == b'0')
                    && !step.is_empty()
                {
                    step = number(rng, len);
                }
                format!("{}:{}:{step}", maybe(rng, len), maybe(rng, len))
            }
        };
        parts.push(part);
    }
    let sep = if below(rng, 3) == 0 { " , " } else { "," };
    parts.join(sep)
}

#[test]
fn regions_resolve_as_numpy_does() {
    let shapes: [&[usize]; 7] = [&[7], &[1], &[0], &[5, 6], &[3, 4, 5], &[2, 0, 3], &[1, 9]];
    let dir = std::env::temp_dir().join(format!("asdf-rs-slices-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut rng = Rng(0x5EED_0F51_1CE5);
    let per_shape = 1_500;
    let mut cases = Vec::new();
    let mut ours = Vec::new();
    for (k, shape) in shapes.iter().enumerate() {
        let n: usize = shape.iter().product();
        let values: Vec<i32> = (0..i32::try_from(n).unwrap()).collect();
        let path = dir.join(format!("a{k}.asdf"));
        let mut f = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
        f.put_array("/a", NewArray::from_slice(&values, shape).unwrap())
            .unwrap();
        f.write(&path, &WriteOptions::default()).unwrap();
        let file = asdf::open(&path).unwrap();
        let a = file.array("/a").unwrap();
        for _ in 0..per_shape {
            let text = region(&mut rng, shape);
            let got = match text.parse::<asdf::Region>() {
                Err(e) => json!({ "error": e.to_string() }),
                Ok(r) => match (a.region_shape(&r), a.read_region::<Vec<i32>>(&r)) {
                    (Ok(s), Ok(v)) => json!({ "shape": s, "values": v }),
                    (Err(e), _) | (_, Err(e)) => json!({ "error": e.to_string() }),
                },
            };
            cases.push(json!({ "shape": shape, "text": text }));
            ours.push(got);
        }
    }
    let script = r#"
import json, sys
import numpy as np
out = []
for c in json.load(sys.stdin):
    a = np.arange(int(np.prod(c["shape"])), dtype=np.int32).reshape(c["shape"])
    t = c["text"].strip() or "..."
    try:
        r = eval("a[" + t + "]", {"a": a})
        r = np.asarray(r)
        out.append({"shape": list(r.shape), "values": r.ravel().tolist()})
    except (IndexError, ValueError, TypeError, OverflowError) as e:
        out.append({"error": type(e).__name__ + ": " + str(e)})
json.dump(out, sys.stdout)
"#;
    let mut child = Command::new(asdf_testdata::interop_python())
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let input = serde_json::to_vec(&cases).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success(), "numpy failed");
    let numpy: Vec<J> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(numpy.len(), cases.len());
    let mut differ = Vec::new();
    let (mut errors, mut huge) = (0, 0);
    for ((c, o), p) in cases.iter().zip(&ours).zip(&numpy) {
        let text = c["text"].as_str().unwrap();
        if text
            .replace('_', "")
            .split(|ch: char| !ch.is_ascii_digit())
            .any(|d| d.len() >= 19)
        {
            huge += 1;
        }
        let same = match (o.get("error"), p.get("error")) {
            (Some(_), Some(_)) => {
                errors += 1;
                true
            }
            (None, None) => o == p,
            _ => false,
        };
        if !same {
            differ.push(format!("{} [{text}]: ours {o}, numpy {p}", c["shape"]));
        }
    }
    eprintln!(
        "regions against numpy: {} cases ({errors} errors on both sides, {huge} with integers of 19 digits or more), {} differences",
        cases.len(),
        differ.len()
    );
    assert!(cases.len() >= 10_000);
    assert!(huge > 1_000, "too few extreme integers drawn: {huge}");
    assert!(
        differ.is_empty(),
        "{} differences, first: {:#?}",
        differ.len(),
        &differ[..differ.len().min(10)]
    );
    let _ = std::fs::remove_dir_all(&dir);
}
