//! The web viewer in a real browser: Debian's chromium, headless, driven by playwright-core
//! (`tests/browser/viewer.mjs`), over the viewer built for wasm32 and files this test writes,
//! served by the range server on loopback (which counts the bytes it sends).
//!
//! Needs `/usr/bin/chromium` (Debian's `chromium`; `.ci/run` installs it and sets
//! `ASDF_REQUIRE_BROWSER=1`, which makes its absence a failure), Node.js with npm (the test
//! installs `tests/browser`'s locked playwright-core), and the `wasm32-unknown-unknown` target
//! (added with rustup when missing). `UPDATE_SCREENSHOTS=1` writes the screenshots, and the
//! pictures `asdf-cli preview` draws of the same file, to `docs/img/`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::cast_possible_truncation
)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    asdf_testdata::workspace_root()
}

fn chromium_or_skip() -> bool {
    if Path::new("/usr/bin/chromium").exists() {
        return true;
    }
    let msg = "NOT RUN: browser::the_viewer_works_in_chromium (needs Debian's chromium at /usr/bin/chromium: apt-get install chromium)";
    assert!(std::env::var_os("ASDF_REQUIRE_BROWSER").is_none(), "{msg}");
    loud(msg);
    false
}

/// A line on standard error that the test harness does not capture (CI's log shows it).
fn loud(text: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

fn run(cmd: &mut Command, what: &str) {
    let status = cmd.status().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(status.success(), "{what} failed ({status})");
}

/// The viewer's folder: the page's files and the module built for wasm32.
fn build_viewer(out: &Path) {
    let installed = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("wasm32-unknown-unknown"))
        .unwrap_or(false);
    if !installed {
        run(
            Command::new("rustup").args(["target", "add", "wasm32-unknown-unknown"]),
            "rustup target add wasm32-unknown-unknown",
        );
    }
    // Its own target folder: this test runs while cargo holds the workspace's.
    let target = root().join("target/viewer-build");
    run(
        Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .current_dir(root())
            .env("CARGO_TARGET_DIR", &target)
            .args([
                "build",
                "--quiet",
                "-p",
                "asdf-web",
                "--target",
                "wasm32-unknown-unknown",
                "--profile",
                "viewer",
            ]),
        "building the viewer for wasm32",
    );
    let wasm = std::fs::read(target.join("wasm32-unknown-unknown/viewer/asdf_web.wasm")).unwrap();
    asdf_web::write_viewer(out, &wasm, &root().join("web")).unwrap();
    loud(&format!("browser test: asdf_web.wasm is {} bytes", wasm.len()));
}

fn f32s(v: &[f32], shape: &[usize]) -> asdf::NewArray {
    asdf::NewArray::from_slice(v, shape).unwrap()
}

/// A JWST-like image model: metadata, `data` (stars on a sloped sky with noise, a NaN box at
/// rows 0..8, columns 0..16), `dq`, `err`; a spectrum; a cube.
fn jwst_like(path: &Path) {
    let (h, w) = (256usize, 320usize);
    let mut seed = 7u64;
    let mut noise = move || {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((seed >> 33) as f32 / (1u64 << 31) as f32) - 0.5
    };
    let stars = [
        (40.0f32, 60.0f32, 900.0f32),
        (200.0, 250.0, 3000.0),
        (120.0, 180.0, 500.0),
        (30.0, 300.0, 1500.0),
    ];
    let mut data = vec![0f32; h * w];
    for y in 0..h {
        for x in 0..w {
            let mut v = 100.0 + 0.05 * y as f32 + 4.0 * noise();
            for (sy, sx, f) in stars {
                let d2 = (y as f32 - sy).powi(2) + (x as f32 - sx).powi(2);
                v += f * (-d2 / 8.0).exp();
            }
            data[y * w + x] = v;
        }
    }
    for y in 0..8 {
        for x in 0..16 {
            data[y * w + x] = f32::NAN;
        }
    }
    let dq: Vec<u32> = (0..h * w).map(|i| u32::from(data[i].is_nan())).collect();
    let err: Vec<f32> = data.iter().map(|v| v.abs().sqrt()).collect();
    let spectrum: Vec<f64> = (0..1000)
        .map(|i| 1.0 + (-((f64::from(i) - 400.0) / 20.0).powi(2)).exp())
        .collect();
    // A source moving across the field from plane to plane, on a faint ramp.
    let (ch, cw) = (120usize, 160usize);
    let cube: Vec<f32> = (0..5 * ch * cw)
        .map(|i| {
            let (k, y, x) = (i / (ch * cw), (i / cw) % ch, i % cw);
            let (sy, sx) = (30.0 + 15.0 * k as f32, 30.0 + 25.0 * k as f32);
            let d2 = (y as f32 - sy).powi(2) + (x as f32 - sx).powi(2);
            0.01 * x as f32 + 50.0 * (-d2 / 60.0).exp()
        })
        .collect();
    let mut f = asdf::AsdfFile::new(asdf::Version::STANDARD_LATEST).unwrap();
    f.set_tree_yaml(
        b"%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\nmeta:\n  telescope: JWST\n  model_type: ImageModel\n  instrument: {name: NIRCAM, detector: NRCA1, filter: F200W, pupil: CLEAR}\n  exposure: {type: NRC_IMAGE, start_time: 60000.5, duration: 1288.5, nframes: 4}\n  target: {proposer_name: NGC 1234, ra: 53.16, dec: -27.78}\n  wcs: !<tag:stsci.edu:gwcs/wcs-1.2.0>\n    name: ''\n    steps:\n    - !<tag:stsci.edu:gwcs/step-1.1.0>\n      frame: !<tag:stsci.edu:gwcs/frame2d-1.0.0>\n        axes_names: [x, y]\n        axes_order: [0, 1]\n        name: detector\n        unit: [!unit/unit-1.0.0 pixel, !unit/unit-1.0.0 pixel]\n      transform: !transform/compose-1.2.0\n        forward:\n        - !transform/concatenate-1.2.0\n          forward:\n          - !transform/shift-1.2.0 {offset: -160.0}\n          - !transform/shift-1.2.0 {offset: -128.0}\n        - !transform/compose-1.2.0\n          forward:\n          - !transform/concatenate-1.2.0\n            forward:\n            - !transform/scale-1.2.0 {factor: 0.00025}\n            - !transform/scale-1.2.0 {factor: 0.00025}\n          - !transform/compose-1.2.0\n            forward:\n            - !transform/gnomonic-1.2.0 {direction: pix2sky}\n            - !transform/rotate3d-1.3.0 {direction: native2celestial, phi: 53.16, theta: -27.78, psi: 180.0}\n    - !<tag:stsci.edu:gwcs/step-1.1.0>\n      frame: !<tag:stsci.edu:gwcs/celestial_frame-1.0.0>\n        axes_names: [lon, lat]\n        axes_order: [0, 1]\n        axis_physical_types: [pos.eq.ra, pos.eq.dec]\n        name: world\n        reference_frame: !<tag:astropy.org:astropy/coordinates/frames/icrs-1.1.0> {frame_attributes: {}}\n        unit: [!unit/unit-1.0.0 deg, !unit/unit-1.0.0 deg]\n...\n",
    )
    .unwrap();
    f.put_array("/data", f32s(&data, &[h, w])).unwrap();
    f.put_array("/dq", asdf::NewArray::from_slice(&dq, &[h, w]).unwrap())
        .unwrap();
    f.put_array("/err", f32s(&err, &[h, w])).unwrap();
    f.put_array("/spectrum", asdf::NewArray::from_slice(&spectrum, &[1000]).unwrap())
        .unwrap();
    f.put_array("/cube", f32s(&cube, &[5, ch, cw])).unwrap();
    f.write(path, &asdf::WriteOptions::default()).unwrap();
}

/// A file of one `bytes`-long float32 array (zeros), written once and kept between runs.
fn large(path: &Path, bytes: usize) {
    if std::fs::metadata(path).is_ok_and(|m| m.len() > bytes as u64) {
        return;
    }
    let side = ((bytes / 4) as f64).sqrt() as usize;
    let zeros = vec![0f32; side * side];
    let mut f = asdf::AsdfFile::new(asdf::Version::STANDARD_LATEST).unwrap();
    f.put_array("/image", f32s(&zeros, &[side, side])).unwrap();
    f.write(path, &asdf::WriteOptions::default()).unwrap();
}

#[test]
fn the_viewer_works_in_chromium() {
    if !chromium_or_skip() {
        return;
    }
    let dir = root().join("target/browser-test");
    std::fs::create_dir_all(&dir).unwrap();
    build_viewer(&dir);
    jwst_like(&dir.join("jwst.asdf"));
    std::fs::write(
        dir.join("invalid.asdf"),
        b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\nasdf_library: !core/software-1.0.0 {name: 5, version: 1.0}\nobject: {kind: invalid}\n...\n",
    )
    .unwrap();
    // Nesting deeper than the parser's limit.
    let mut hostile = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n--- \nx: ".to_vec();
    hostile.extend(std::iter::repeat_n(b'[', 200_000));
    hostile.extend_from_slice(b"\n...\n");
    std::fs::write(dir.join("hostile.asdf"), hostile).unwrap();
    large(&dir.join("big.asdf"), 1 << 30);
    large(&dir.join("hundred.asdf"), 100_000_000);
    let shots = if std::env::var_os("UPDATE_SCREENSHOTS").is_some() {
        root().join("docs/img")
    } else {
        dir.join("shots")
    };
    std::fs::create_dir_all(&shots).unwrap();
    // The pictures `asdf-cli preview` draws of the same file (docs/img/ when updating).
    let jwst = asdf::open(dir.join("jwst.asdf")).unwrap();
    let options = asdf_preview::Options::default();
    let cube = asdf_preview::Options {
        style: asdf_preview::Style {
            cmap: asdf_preview::Colormap::Inferno,
            ..asdf_preview::Style::default()
        },
        ..options
    };
    let plane: asdf::Region = "2, :, :".parse().unwrap();
    for (name, pointer, region, opts) in [
        ("preview-zscale.png", "/data", None, &options),
        ("preview-spectrum.png", "/spectrum", None, &options),
        ("preview-cube-plane.png", "/cube", Some(&plane), &cube),
    ] {
        let img = asdf_preview::draw(&jwst, pointer, region, opts).unwrap();
        std::fs::write(shots.join(name), img.to_png().unwrap()).unwrap();
    }

    let browser_dir = root().join("tests/browser");
    if !browser_dir.join("node_modules/playwright-core").is_dir() {
        run(
            Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund"])
                .current_dir(&browser_dir),
            "npm ci (playwright-core)",
        );
    }
    let (mut server, port) = asdf_conformance::serve("python3", &dir);
    let out = Command::new("node")
        .arg(browser_dir.join("viewer.mjs"))
        .arg(format!("http://127.0.0.1:{port}"))
        .arg(&dir)
        .arg(&shots)
        .output();
    asdf_conformance::stop(&mut server, Ok(()));
    let out = out.unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    loud(&format!(
        "browser test (chromium, tests/browser/viewer.mjs):\n{}",
        text.trim_end()
    ));
    assert!(out.status.success(), "the browser test failed:\n{text}");
    let summary: serde_json::Value = serde_json::from_str(text.lines().rfind(|l| l.starts_with('{')).unwrap()).unwrap();
    let read = summary["gib_read_by_viewer"]["bytes"].as_u64().unwrap();
    let served = summary["gib_served"]["bytes"].as_u64().unwrap();
    loud(&format!(
        "browser test: a 1 GiB file opened; the viewer read {read} bytes in {} reads, the server sent {served} bytes of it in {} requests",
        summary["gib_read_by_viewer"]["requests"], summary["gib_served"]["requests"]
    ));
    assert!(read < 1 << 20 && served < 1 << 20);
    // The world coordinates the page showed under the cursor are asdf-wcs's (the same library
    // the CLI and Python use) at that pixel.
    let shown = &summary["world"]["world"];
    let pixel: Vec<f64> = shown["pixel"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c[0].as_f64().unwrap())
        .collect();
    let wcs = asdf_wcs::WcsExt::wcs(&jwst, "/meta/wcs").unwrap();
    let want = wcs.pixel_to_world(&[&[pixel[0]], &[pixel[1]]]).unwrap();
    for (axis, w) in want.iter().enumerate() {
        let got = shown["world"][axis][0].as_f64().unwrap();
        assert!((got - w[0]).abs() < 1e-12, "axis {axis}: page {got}, library {}", w[0]);
    }
    loud(&format!(
        "browser test: under the cursor {}; a grid of {} lines",
        summary["world"]["text"], summary["grid_lines"]
    ));
}
