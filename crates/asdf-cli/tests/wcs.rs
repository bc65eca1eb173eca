//! `asdf-cli wcs` and the WCS of `get --slice -o X.asdf` cutouts, checked against gwcs in
//! Python (the reference; the interop venv, never skipped): one point, a grid to .npy, points
//! from a file, the inverse, a cutout whose WCS gwcs evaluates as the original at the same
//! pixels, and the refusals (a transform not evaluated, wrong coordinates).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn cli(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_asdf-cli"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn python(code: &str) -> String {
    let out = Command::new(asdf_testdata::interop_python())
        .args(["-c", code])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn nircam() -> String {
    python("import gwcs, pathlib; print(pathlib.Path(gwcs.__file__).parent / 'tests/data/nircamwcs.asdf')")
        .trim()
        .to_owned()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("asdf-rs-cli-wcs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn values(stdout: &str) -> Vec<f64> {
    stdout
        .lines()
        .map(|l| {
            l.split('=')
                .nth(1)
                .unwrap()
                .split_whitespace()
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect()
}

#[test]
fn one_point_both_ways_matches_gwcs() {
    let f = nircam();
    let (code, out, err) = cli(&["wcs", &f, "100", "200"]);
    assert_eq!(code, 0, "{err}");
    let ours = values(&out);
    let py = python(&format!(
        "import asdf; w = asdf.open({f:?})['wcs']; r = w(100, 200); print(repr(float(r[0])), repr(float(r[1]))); \
         b = w.invert(*r); print(repr(float(b[0])), repr(float(b[1])))"
    ));
    let want: Vec<f64> = py.split_whitespace().map(|v| v.parse().unwrap()).collect();
    assert!(
        (ours[0] - want[0]).abs() < 1e-9 && (ours[1] - want[1]).abs() < 1e-9,
        "{ours:?} {want:?}"
    );
    let (code, out, err) = cli(&[
        "wcs",
        &f,
        "/wcs",
        "--inverse",
        &want[0].to_string(),
        &want[1].to_string(),
    ]);
    assert_eq!(code, 0, "{err}");
    let back = values(&out);
    assert!(
        (back[0] - want[2]).abs() < 1e-6 && (back[1] - want[3]).abs() < 1e-6,
        "{back:?} {want:?}"
    );
    // A point outside the bounding box: NaN, as gwcs.
    let (_, out, _) = cli(&["wcs", &f, "-10", "5000"]);
    assert!(values(&out).iter().all(|v| v.is_nan()), "{out}");
    // Without coordinates: the frames; `info` lists them too.
    let (code, out, _) = cli(&["wcs", &f]);
    assert_eq!(code, 0);
    assert!(out.contains("frame 2: world (Celestial): lon [deg] pos.eq.ra"), "{out}");
    let (_, out, _) = cli(&["info", &f]);
    assert!(out.contains("WCS /wcs: 2 pixel axes -> 2 world axes"), "{out}");
}

#[test]
fn a_grid_and_a_list_of_points_match_gwcs() {
    let f = nircam();
    let d = tmp("grid");
    let npy = d.join("grid.npy");
    let (code, _, err) = cli(&["wcs", &f, "--grid", "--step", "37", "-o", npy.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let py = python(&format!(
        "import asdf, numpy as np; w = asdf.open({f:?})['wcs']; g = np.load({npy:?}); \
         xs = np.arange(0, 2048, 37.0); y, x = np.meshgrid(xs, xs, indexing='ij'); r = w(x.ravel(), y.ravel()); \
         print(g.shape[0] == x.size, np.nanmax(np.abs(g[:, 0] - r[0])), np.nanmax(np.abs(g[:, 1] - r[1])))"
    ));
    let parts: Vec<&str> = py.split_whitespace().collect();
    assert_eq!(parts[0], "True", "{py}");
    assert!(
        parts[1].parse::<f64>().unwrap() < 1e-9 && parts[2].parse::<f64>().unwrap() < 1e-9,
        "{py}"
    );
    // Points from a file (a header line, commas and spaces), world coordinates to CSV.
    let pts = d.join("points.txt");
    std::fs::write(&pts, "x,y\n0 0\n1023.5, 17\n# a comment\n2047,2047\n").unwrap();
    let csv = d.join("world.csv");
    let (code, _, err) = cli(&[
        "wcs",
        &f,
        "--points",
        pts.to_str().unwrap(),
        "-o",
        csv.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.starts_with("lon [deg],lat [deg]\n"), "{text}");
    assert_eq!(text.lines().count(), 4);
    let py = python(&format!(
        "import asdf, numpy as np; w = asdf.open({f:?})['wcs']; c = np.loadtxt({csv:?}, delimiter=',', skiprows=1); \
         r = w(np.array([0, 1023.5, 2047.]), np.array([0, 17, 2047.])); print(np.max(np.abs(c[:, 0] - r[0])) < 1e-9 and np.max(np.abs(c[:, 1] - r[1])) < 1e-9)"
    ));
    assert_eq!(py.trim(), "True");
    let _ = std::fs::remove_dir_all(&d);
}

/// `asdf-cli get FILE /data --slice REGION -o OUT`, which must succeed.
fn cutout(file: &Path, region: &str, out: &Path) {
    let (code, _, err) = cli(&[
        "get",
        file.to_str().unwrap(),
        "/data",
        "--slice",
        region,
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_cutout_carries_a_wcs_gwcs_evaluates_as_the_original() {
    let f = nircam();
    let d = tmp("cutout");
    let img = d.join("img.asdf");
    python(&format!(
        "import asdf, numpy as np; w = asdf.open({f:?})['wcs']; \
         asdf.AsdfFile({{'data': np.arange(2048 * 2048, dtype='f4').reshape(2048, 2048), 'wcs': w}}).write_to({img:?})"
    ));
    let cut = d.join("cut.asdf");
    cutout(&img, "100:300, 1400:1650", &cut);
    let py = python(&format!(
        "import asdf, numpy as np; o = asdf.open({img:?}); c = asdf.open({cut:?}); \
         same = np.array_equal(c['data'], o['data'][100:300, 1400:1650]); \
         y, x = np.mgrid[-3:203, -3:253].astype(float); a = c['wcs'](x, y); b = o['wcs'](x + 1400, y + 100); \
         inside = (x >= -0.5) & (x <= 249.5) & (y >= -0.5) & (y <= 199.5); \
         print(same, np.max(np.abs(a[0][inside] - b[0][inside])), np.isnan(a[0][~inside]).all())"
    ));
    let parts: Vec<&str> = py.split_whitespace().collect();
    assert_eq!(parts[0], "True", "{py}");
    assert!(parts[1].parse::<f64>().unwrap() == 0.0, "{py}");
    assert_eq!(parts[2], "True", "{py}");
    // Our own evaluation of the cutout's WCS agrees with the original's at the same pixel.
    let (_, a, _) = cli(&["wcs", cut.to_str().unwrap(), "10", "20"]);
    let (_, b, _) = cli(&["wcs", img.to_str().unwrap(), "1410", "120"]);
    assert_eq!(values(&a), values(&b));
    // A WCS whose transforms take pixels as quantities: the shift of its cutout is one too
    // (gwcs evaluates such a WCS with a bounding box one point at a time: arrays fail in it).
    let units = d.join("units.asdf");
    python(&format!(
        "import asdf, numpy as np; from astropy.modeling import models as m; from astropy import units as u, coordinates as coord; \
         from gwcs import wcs, coordinate_frames as cf; \
         det = cf.Frame2D(name='detector', axes_names=('x', 'y'), unit=(u.pix, u.pix)); \
         sky = cf.CelestialFrame(reference_frame=coord.ICRS(), name='sky', unit=(u.deg, u.deg)); \
         f = (m.Shift(-10 * u.pix) & m.Shift(-20 * u.pix)) | (m.Multiply(0.1 * u.arcsec / u.pix) & m.Multiply(0.1 * u.arcsec / u.pix)) | m.Pix2Sky_TAN() | m.RotateNative2Celestial(5 * u.deg, -30 * u.deg, 180 * u.deg); \
         w = wcs.WCS(forward_transform=f, input_frame=det, output_frame=sky); \
         asdf.AsdfFile({{'data': np.zeros((50, 60)), 'wcs': w}}).write_to({units:?})"
    ));
    let ucut = d.join("ucut.asdf");
    cutout(&units, "10:20, 5:15", &ucut);
    let py = python(&format!(
        "import asdf, numpy as np; o = asdf.open({units:?})['wcs']; c = asdf.open({ucut:?})['wcs']; \
         d = [np.subtract(c(float(i), float(j)), o(i + 5.0, j + 10.0)) for i in range(10) for j in range(0, 10, 3)]; \
         print(np.max(np.abs(d)))"
    ));
    assert!(py.split_whitespace().all(|v| v.parse::<f64>().unwrap() == 0.0), "{py}");
    // A region with a step carries no WCS: said, and the data is still written.
    let (code, _, err) = cli(&[
        "get",
        img.to_str().unwrap(),
        "/data",
        "--slice",
        "0:10:2, 0:10",
        "-o",
        cut.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("carries no WCS"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn refusals_are_clear() {
    let f = nircam();
    let d = tmp("refusals");
    // A transform not evaluated (a Gaussian) inside a WCS: refused by name, no value printed.
    let g = d.join("gauss.asdf");
    python(&format!(
        "import asdf; from astropy.modeling import models as m; from gwcs import wcs, coordinate_frames as cf; \
         w = wcs.WCS([(cf.Frame2D(name='d'), m.Gaussian1D() & m.Shift(1)), (cf.Frame2D(name='w'), None)]); \
         asdf.AsdfFile({{'wcs': w}}).write_to({g:?})"
    ));
    let (code, out, err) = cli(&["wcs", g.to_str().unwrap(), "1", "2"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("gaussian1d") && err.contains("not evaluated"), "{err}");
    assert!(out.is_empty(), "{out}");
    let (_, out, _) = cli(&["info", g.to_str().unwrap()]);
    assert!(out.contains("not evaluated"), "{out}");
    // Wrong counts and non-numbers: usage errors.
    assert_eq!(cli(&["wcs", &f, "1"]).0, 2);
    assert_eq!(cli(&["wcs", &f, "1", "x"]).0, 2);
    assert_eq!(cli(&["wcs", &f, "--grid", "--inverse"]).0, 2);
    // A pointer that is not a WCS, a file without one.
    let (code, _, err) = cli(&["wcs", &f, "/history", "1", "2"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("not a gwcs WCS"), "{err}");
    let plain = d.join("plain.asdf");
    python(&format!("import asdf; asdf.AsdfFile({{'a': 1}}).write_to({plain:?})"));
    let (code, _, err) = cli(&["wcs", plain.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no gwcs WCS"), "{err}");
    // Never writes over its input: the file, nor the points read.
    let (code, _, _) = cli(&["wcs", &f, "--grid", "-o", &f]);
    assert_ne!(code, 0);
    assert!(Path::new(&f).is_file());
    let pts = d.join("p.csv");
    std::fs::write(&pts, "1 2\n3 4\n").unwrap();
    let (code, _, err) = cli(&[
        "wcs",
        &f,
        "--points",
        pts.to_str().unwrap(),
        "-o",
        pts.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(std::fs::read_to_string(&pts).unwrap(), "1 2\n3 4\n");
    let _ = std::fs::remove_dir_all(&d);
}
