//! World coordinates against gwcs (the reference), value by value: random pipelines built with
//! astropy.modeling and gwcs from every transform asdf-wcs evaluates and written by Python asdf,
//! and the WCS files the gwcs and dkist packages ship. Python evaluates pixel -> world
//! (`wcs(*pixel)`) and world -> pixel (`wcs.invert(*world)`) at random points
//! (`tests/interop/wcs_reference.py`); we read the same WCS and compare every value: world
//! coordinates within 1e-9 degrees (angles; other axes within 1e-9 of their magnitude), pixels
//! within 1e-6, NaN where gwcs gives NaN. Never skipped: without Python the suite fails.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::cast_precision_loss)]

use std::path::{Path, PathBuf};
use std::process::Command;

use asdf_wcs::WcsExt;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn python() -> PathBuf {
    asdf_testdata::interop_python()
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("asdf-rs-wcs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn reference(args: &[&str]) -> (usize, usize) {
    let out = Command::new(python())
        .arg(workspace().join("tests/interop/wcs_reference.py"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "wcs_reference.py failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = String::from_utf8_lossy(&out.stdout);
    let mut it = s.split_whitespace().map(|w| w.parse::<usize>().unwrap());
    (it.next().unwrap(), it.next().unwrap())
}

/// The rows of a 2-D float64 array.
fn rows(f: &asdf::AsdfFile, pointer: &str) -> Option<Vec<Vec<f64>>> {
    f.get(pointer).ok()?;
    let a = f.array(pointer).unwrap();
    let shape = a.shape().to_vec();
    let v: Vec<f64> = a.read().unwrap();
    let n = shape.get(1).copied().unwrap_or(v.len());
    Some(v.chunks(n.max(1)).map(<[f64]>::to_vec).collect())
}

#[derive(Default, Debug)]
struct Tally {
    files: usize,
    points: usize,
    values: usize,
    worst_world_deg: f64,
    worst_world_rel: f64,
    worst_pixel: f64,
    worst_pixel_numerical: f64,
    worst_pixel_at: String,
    worst_pixel_far: f64,
    inverted: usize,
    numerical: usize,
    worst_round_trip: f64,
    gwcs_unconverged: usize,
    other_preimage: usize,
    refused_inverse: Vec<String>,
    gwcs_failed_inverse: usize,
    differences: Vec<String>,
}

/// The tolerance on a world axis: 1e-9 degrees in the axis's unit for angles, else 1e-9 of
/// the value's magnitude (at least 1e-12).
fn world_close(t: &mut Tally, unit: Option<&str>, ours: f64, theirs: f64) -> bool {
    if ours.is_nan() || theirs.is_nan() {
        return ours.is_nan() && theirs.is_nan();
    }
    let deg_per_unit = match unit.map(str::trim) {
        Some("deg") => Some(1.0),
        Some("arcsec") => Some(1.0 / 3600.0),
        Some("arcmin") => Some(1.0 / 60.0),
        Some("rad") => Some(180.0 / std::f64::consts::PI),
        _ => None,
    };
    match deg_per_unit {
        Some(f) => {
            let mut d = (ours - theirs).abs() * f;
            // A longitude of 359.99999999999 and one of 0 are the same place.
            d = d.min((360.0 - d).abs());
            t.worst_world_deg = t.worst_world_deg.max(d);
            d <= 1e-9
        }
        None => {
            let d = (ours - theirs).abs() / theirs.abs().max(1.0);
            t.worst_world_rel = t.worst_world_rel.max(d);
            d <= 1e-9
        }
    }
}

fn compare(t: &mut Tally, name: &str, wcs: &asdf_wcs::Wcs, reference: &asdf::AsdfFile) {
    let pixel = rows(reference, "/pixel").unwrap();
    let n = pixel.first().map_or(0, Vec::len);
    t.files += 1;
    t.points += n;
    let refs: Vec<&[f64]> = pixel.iter().map(Vec::as_slice).collect();
    let Some(world) = rows(reference, "/world") else {
        return;
    };
    let ours = match wcs.pixel_to_world(&refs) {
        Ok(w) => w,
        Err(e) => {
            t.differences.push(format!("{name}: gwcs evaluates it, we fail: {e}"));
            return;
        }
    };
    let units: Vec<Option<String>> = wcs.output_frame().axes.iter().map(|a| a.unit.clone()).collect();
    for (d, (o, r)) in ours.iter().zip(&world).enumerate() {
        for (k, (a, b)) in o.iter().zip(r).enumerate() {
            t.values += 1;
            if !world_close(t, units.get(d).cloned().flatten().as_deref(), *a, *b) && t.differences.len() < 20 {
                t.differences.push(format!(
                    "{name}: world axis {d} at pixel {:?}: ours {a:.17e}, gwcs {b:.17e}",
                    pixel.iter().map(|c| c[k]).collect::<Vec<_>>()
                ));
            }
        }
    }
    let back = rows(reference, "/back");
    let wrefs: Vec<&[f64]> = world.iter().map(Vec::as_slice).collect();
    // Where gwcs inverts numerically its answer is good to its tolerance (1e-5 pixels); ours
    // iterates further: compared at gwcs's tolerance, and ours checked by its round trip.
    let numerical = reference.get("/numerical").is_ok();
    let tol = if numerical { 2e-5 } else { 1e-6 };
    let back_ok: Option<Vec<bool>> = reference.get("/back_ok").ok().map(|_| {
        let a = reference.array("/back_ok").unwrap();
        a.values().unwrap().elements.iter().map(asdf::Element::truthy).collect()
    });
    match (back, wcs.world_to_pixel(&wrefs)) {
        (Some(back), Ok(ours)) => {
            t.inverted += 1;
            if numerical {
                t.numerical += 1;
                let orefs: Vec<&[f64]> = ours.iter().map(Vec::as_slice).collect();
                let again = wcs.pixel_to_world(&orefs).unwrap();
                // On the sky: the distance between the two points (a longitude difference
                // shrinks by cos(latitude)), else each axis.
                let sky = units.len() == 2 && units.iter().all(|u| u.as_deref() == Some("deg"));
                for k in 0..again.first().map_or(0, Vec::len) {
                    let d: Vec<f64> = again.iter().zip(&world).map(|(a, w)| a[k] - w[k]).collect();
                    if d.iter().any(|v| !v.is_finite()) {
                        continue;
                    }
                    let dd = if sky {
                        let dl = (d[0] + 180.0).rem_euclid(360.0) - 180.0;
                        (dl * world[1][k].to_radians().cos()).hypot(d[1])
                    } else {
                        d.iter().fold(0.0f64, |m, v| m.max(v.abs()))
                    };
                    t.worst_round_trip = t.worst_round_trip.max(dd);
                    assert!(
                        dd < 1e-9,
                        "{name}: our numerical inverse does not round-trip: off by {dd} at point {k}"
                    );
                }
            }
            for (d, (o, r)) in ours.iter().zip(&back).enumerate() {
                for (k, (a, b)) in o.iter().zip(r).enumerate() {
                    if back_ok.as_ref().is_some_and(|m| !m[k]) {
                        // gwcs did not converge there (checked by its own round trip); ours
                        // is checked by its round trip above.
                        t.gwcs_unconverged += 1;
                        continue;
                    }
                    t.values += 1;
                    let ok = if a.is_nan() || b.is_nan() {
                        a.is_nan() && b.is_nan()
                    } else {
                        let dlt = (a - b).abs();
                        let ok = dlt <= tol * b.abs().max(1.0);
                        if ok && numerical {
                            t.worst_pixel_numerical = t.worst_pixel_numerical.max(dlt);
                        } else if ok && b.abs() > 1e4 {
                            // Far outside any image (no bounding box): the relative difference.
                            t.worst_pixel_far = t.worst_pixel_far.max(dlt / b.abs());
                        } else if ok {
                            if dlt > t.worst_pixel {
                                t.worst_pixel_at = format!("{name}: axis {d}, ours {a}, gwcs {b}");
                            }
                            t.worst_pixel = t.worst_pixel.max(dlt);
                        }
                        ok
                    };
                    if !ok && numerical && a.is_finite() && b.is_finite() {
                        // Both answers map back to the world coordinates (gwcs's checked in
                        // Python, ours above): the WCS is not one-to-one there (two pixels
                        // for one place), and either is an answer.
                        t.other_preimage += 1;
                        continue;
                    }
                    if !ok && t.differences.len() < 20 {
                        t.differences.push(format!(
                            "{name}: pixel axis {d} at world {:?}: ours {a:.17e}, gwcs {b:.17e}",
                            world.iter().map(|c| c[k]).collect::<Vec<_>>()
                        ));
                    }
                }
            }
        }
        (Some(_), Err(e)) => {
            // Refused by name (no inverse we evaluate): never a silent difference.
            assert!(
                matches!(e, asdf_wcs::Error::NoInverse { .. }),
                "{name}: the inverse failed otherwise than refused: {e}"
            );
            t.refused_inverse.push(format!("{name}: {e}"));
        }
        (None, _) => t.gwcs_failed_inverse += 1,
    }
}

fn report(t: &Tally) {
    eprintln!(
        "wcs differential: {} files, {} points, {} values compared; worst world {:.3e} deg (angles), {:.3e} relative (other axes); worst pixel {:.3e} (analytic inverses), {:.3e} (numerical, gwcs's to its tolerance of 1e-5); {} inverted ({} numerically by both, our round trip within {:.1e}), {} inverses refused by name, {} where gwcs failed to invert (its numerical inverse raised), {} values where gwcs's iteration did not converge, {} where both found a different pixel of the same place",
        t.files,
        t.points,
        t.values,
        t.worst_world_deg,
        t.worst_world_rel,
        t.worst_pixel,
        t.worst_pixel_numerical,
        t.inverted,
        t.numerical,
        t.worst_round_trip,
        t.refused_inverse.len(),
        t.gwcs_failed_inverse,
        t.gwcs_unconverged,
        t.other_preimage
    );
    eprintln!(
        "  worst pixel (analytic, |pixel| <= 1e4): {}; beyond 1e4 pixels, relative {:.1e}",
        t.worst_pixel_at, t.worst_pixel_far
    );
    for r in t.refused_inverse.iter().take(5) {
        eprintln!("  refused: {r}");
    }
    assert!(
        t.differences.is_empty(),
        "differences from gwcs:\n{}",
        t.differences.join("\n")
    );
}

/// Random pipelines of every transform evaluated, written by Python asdf with gwcs.
#[test]
fn random_pipelines_match_gwcs() {
    let dir = tmpdir("random");
    let n: usize = std::env::var("ASDF_WCS_RANDOM")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    let (written, _) = reference(&["random", dir.to_str().unwrap(), &n.to_string(), "20261129"]);
    assert_eq!(written, n);
    let mut t = Tally::default();
    for k in 0..n {
        let path = dir.join(format!("random-{k}.asdf"));
        let f = asdf::open(&path).unwrap();
        let kind = f
            .get("/kind")
            .ok()
            .and_then(|k| k.as_str().map(str::to_owned))
            .unwrap_or_default();
        let wcs = f
            .wcs("/wcs")
            .unwrap_or_else(|e| panic!("random-{k} ({kind}): the WCS is refused: {e}"));
        compare(&mut t, &format!("random-{k} ({kind})"), &wcs, &f);
    }
    report(&t);
    assert!(t.inverted * 2 > n, "too few inverted: {t:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The WCS files the gwcs package ships (JWST NIRCam, MIRI imaging, MIRI LRS) and dkist's.
#[test]
fn package_files_match_gwcs() {
    let out = Command::new(python())
        .args([
            "-c",
            "import gwcs, dkist, pathlib as p; \
             [print(f) for m in (gwcs, dkist) for f in sorted(p.Path(m.__file__).parent.rglob('*.asdf'))]",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut files: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    // What the data model packages make: a Roman image (roman_datamodels), a JWST image model
    // (stdatamodels) as ASDF and as FITS.
    let made = tmpdir("makers");
    reference(&["makers", made.to_str().unwrap()]);
    for f in ["roman_image.asdf", "jwst_image.asdf", "jwst_image.fits"] {
        files.push(made.join(f).to_string_lossy().into_owned());
    }
    let gwcs_files: Vec<String> = files
        .iter()
        .filter(|f| f.contains("/gwcs/tests/data/"))
        .cloned()
        .collect();
    assert!(gwcs_files.len() >= 3, "gwcs's test data is missing: {files:?}");
    // Each file's WCS nodes: those gwcs reads are compared; those it cannot read are listed.
    let dir = tmpdir("files");
    let mut t = Tally::default();
    let mut refused = Vec::new();
    let mut args: Vec<&str> = vec!["files", dir.to_str().unwrap()];
    let usable: Vec<String> = files
        .iter()
        .filter(|f| {
            let a = asdf::open(f.as_str());
            a.is_ok_and(|a| !a.wcs_pointers().is_empty())
        })
        .cloned()
        .collect();
    args.extend(usable.iter().map(String::as_str));
    let out = Command::new(python())
        .arg(workspace().join("tests/interop/wcs_reference.py"))
        .args(&args)
        .output()
        .unwrap();
    let written: usize = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .and_then(|w| w.parse().ok())
        .unwrap_or(0);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for k in 0..written {
        let r = asdf::open(dir.join(format!("file-{k}.asdf"))).unwrap();
        let source = r.get("/source").unwrap().as_str().unwrap().to_owned();
        let pointer = r.get("/pointer").unwrap().as_str().unwrap().to_owned();
        let f = asdf::open(&source).unwrap();
        let name = format!(
            "{}#{pointer}",
            Path::new(&source).file_name().unwrap().to_string_lossy()
        );
        match f.wcs(&pointer) {
            Ok(w) => compare(&mut t, &name, &w, &r),
            Err(e) => {
                assert!(
                    matches!(e, asdf_wcs::Error::Unsupported { .. }),
                    "{name}: refused otherwise than by name: {e}"
                );
                refused.push(format!("{name}: {e}"));
            }
        }
    }
    for r in &refused {
        eprintln!("  not evaluated: {r}");
    }
    report(&t);
    assert!(t.files >= 14, "too few WCSs compared: {t:?}");
    for g in &gwcs_files {
        assert!(
            !refused
                .iter()
                .any(|r| r.starts_with(Path::new(g.as_str()).file_name().unwrap().to_str().unwrap())),
            "a gwcs test file is refused: {refused:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
