//! Hostile WCS trees: a valid gwcs WCS (a JWST-like imaging pipeline with a distortion, units
//! and a tabular axis) mutated at random (a value replaced by another kind, a key dropped, a tag
//! changed, a count made huge or negative, an alias to its own ancestor); reading it and
//! evaluating points through it never panics and never hangs: an answer or an error that names
//! the place. (The values of valid pipelines are checked against gwcs in `tests/tests/wcs.rs`.)

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use asdf_wcs::WcsExt;
use proptest::prelude::*;

const WCS: &str = r"wcs: !<tag:stsci.edu:gwcs/wcs-1.2.0>
  name: ''
  steps:
  - !<tag:stsci.edu:gwcs/step-1.1.0>
    frame: !<tag:stsci.edu:gwcs/frame-1.0.0>
      axes_names: [x, y, w]
      axes_order: [0, 1, 2]
      axes_type: [PIXEL, PIXEL, PIXEL]
      naxes: 3
      name: detector
      unit: [!unit/unit-1.0.0 pixel, !unit/unit-1.0.0 pixel, !unit/unit-1.0.0 pixel]
    transform: !transform/concatenate-1.2.0
      bounding_box: !transform/property/bounding_box-1.0.0
        ignore: []
        intervals:
          x0: [-0.5, 99.5]
          x1: [-0.5, 79.5]
          x2: [-0.5, 9.5]
        order: F
      inputs: [x0, x1, x2]
      forward:
      - !transform/compose-1.2.0
        forward:
        - !transform/concatenate-1.2.0
          forward:
          - !transform/shift-1.2.0 {offset: !unit/quantity-1.1.0 {unit: !unit/unit-1.0.0 pixel, value: -50.0}}
          - !transform/shift-1.2.0 {offset: !unit/quantity-1.1.0 {unit: !unit/unit-1.0.0 pixel, value: -40.0}}
        - !transform/compose-1.2.0
          forward:
          - !transform/concatenate-1.2.0
            forward:
            - !transform/multiplyscale-1.0.0 {factor: !unit/quantity-1.1.0 {unit: !unit/unit-1.0.0 arcsec pixel-1, value: 0.1}}
            - !transform/multiplyscale-1.0.0 {factor: !unit/quantity-1.1.0 {unit: !unit/unit-1.0.0 arcsec pixel-1, value: 0.1}}
          - !transform/compose-1.2.0
            forward:
            - !transform/affine-1.2.0
              matrix: !unit/quantity-1.1.0
                unit: !unit/unit-1.0.0 arcsec
                value: !core/ndarray-1.0.0
                  data: [[1.0, 0.01], [-0.01, 1.0]]
                  datatype: float64
                  shape: [2, 2]
              translation: !unit/quantity-1.1.0
                unit: !unit/unit-1.0.0 arcsec
                value: !core/ndarray-1.0.0 {data: [0.0, 0.0], datatype: float64, shape: [2]}
            - !transform/compose-1.2.0
              forward:
              - !transform/gnomonic-1.2.0 {direction: pix2sky}
              - !transform/rotate3d-1.3.0
                direction: native2celestial
                phi: 5.6
                psi: 180.0
                theta: -72.0
      - !transform/compose-1.2.0
        forward:
        - !transform/remap_axes-1.3.0 {mapping: [0, 0]}
        - !transform/concatenate-1.2.0
          forward:
          - !transform/linear1d-1.0.0
            intercept: !unit/quantity-1.1.0 {unit: !unit/unit-1.0.0 nm, value: 500.0}
            slope: !unit/quantity-1.1.0 {unit: !unit/unit-1.0.0 nm pixel-1, value: 0.1}
          - !transform/tabular-1.2.0
            bounds_error: false
            fill_value: .nan
            lookup_table: !core/ndarray-1.0.0 {data: [1.0, 2.0, 4.0, 8.0], datatype: float64, shape: [4]}
            method: linear
            points:
            - !unit/quantity-1.1.0
              unit: !unit/unit-1.0.0 pixel
              value: !core/ndarray-1.0.0 {data: [0.0, 3.0, 6.0, 9.0], datatype: float64, shape: [4]}
  - !<tag:stsci.edu:gwcs/step-1.1.0>
    frame: !<tag:stsci.edu:gwcs/composite_frame-1.0.0>
      frames:
      - !<tag:stsci.edu:gwcs/celestial_frame-1.0.0>
        axes_names: [lon, lat]
        axes_order: [0, 1]
        name: sky
        reference_frame: !<tag:astropy.org:astropy/coordinates/frames/icrs-1.1.0> {frame_attributes: {}}
        unit: [!unit/unit-1.0.0 deg, !unit/unit-1.0.0 deg]
      - !<tag:stsci.edu:gwcs/spectral_frame-1.0.0>
        axes_names: [wavelength]
        axes_order: [2]
        name: wave
        unit: [!unit/unit-1.0.0 nm]
      - !<tag:stsci.edu:gwcs/frame-1.0.0>
        axes_names: [flux]
        axes_order: [3]
        axes_type: [CUSTOM]
        naxes: 1
        name: other
      name: world
";

fn file(tree: &str) -> Option<asdf::AsdfFile> {
    let text = format!(
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n{tree}...\n"
    );
    asdf::Open::bytes(text.into_bytes()).validate(false).open().ok()
}

/// Reads and evaluates every WCS of the file; whether one was read.
fn exercise(f: &asdf::AsdfFile) -> bool {
    let mut read = false;
    for p in f.wcs_pointers() {
        let Ok(w) = f.wcs(&p) else { continue };
        read = true;
        let n = w.pixel_n_dim();
        let cols: Vec<Vec<f64>> = (0..n)
            .map(|d| {
                vec![
                    0.0,
                    1.5,
                    -3.0,
                    50.0,
                    99.0,
                    f64::NAN,
                    f64::INFINITY,
                    1e300,
                    -7.0 + d as f64,
                ]
            })
            .collect();
        let refs: Vec<&[f64]> = cols.iter().map(Vec::as_slice).collect();
        if let Ok(world) = w.pixel_to_world(&refs) {
            let wr: Vec<&[f64]> = world.iter().map(Vec::as_slice).collect();
            let _ = w.world_to_pixel(&wr);
        }
        let _ = w.footprint();
        let _ = asdf_wcs::cutout_node(f, &p, &vec![3.0; n], &vec![10; n], asdf::Version::STANDARD_LATEST);
    }
    read
}

/// Every line of the tree, each replaced in turn by every replacement (or dropped, or with an
/// alias loop to an ancestor): about 3,900 trees, of which about 1,500 are still ASDF files and
/// about 1,000 still WCSs that read and evaluate.
#[test]
fn mutated_trees_never_panic() {
    let lines: Vec<&str> = WCS.lines().collect();
    let (mut tried, mut read) = (0, 0);
    for line in 0..lines.len() {
        for which in 0..=REPLACEMENTS.len() {
            for anchor in [false, true] {
                let mut out: Vec<String> = Vec::with_capacity(lines.len());
                for (i, l) in lines.iter().enumerate() {
                    if i == line {
                        // Dropped, or what follows the first `: ` (a key's value) or `- ` (an
                        // item) replaced.
                        let Some(r) = REPLACEMENTS.get(which) else { continue };
                        out.push(match l.find(": ") {
                            Some(k) => format!("{}: {r}", &l[..k]),
                            None => match l.find("- ") {
                                Some(k) => format!("{}- {r}", &l[..k]),
                                None => format!("{l} {r}"),
                            },
                        });
                    } else if anchor && i == 1 {
                        // `*loop` then aliases an ancestor of the place it is in.
                        out.push("  name: &loop ''".to_owned());
                    } else {
                        out.push((*l).to_owned());
                    }
                }
                if let Some(f) = file(&(out.join("\n") + "\n")) {
                    tried += 1;
                    read += usize::from(exercise(&f));
                }
            }
        }
    }
    // Most mutants are still YAML and an ASDF file; many still read as a WCS and evaluate.
    assert!(tried > 1000 && read > 500, "{tried} files, {read} WCSs read");
}

#[test]
fn the_unmutated_tree_evaluates() {
    let f = file(WCS).unwrap();
    let w = f.wcs("/wcs").unwrap();
    let out = w
        .pixel_to_world(&[&[10.0, 200.0], &[20.0, 20.0], &[3.0, 3.0]])
        .map_err(|e| e.to_string())
        .unwrap();
    assert_eq!(out.len(), 4);
    assert!(out[0][0].is_finite() && out[1][0].is_finite() && out[2][0].is_finite() && out[3][0].is_finite());
    // Outside the bounding box (x = 200 > 99.5): NaN on every axis.
    assert!(out.iter().all(|c| c[1].is_nan()));
    let back = w.world_to_pixel(&[&out[0][..1], &out[1][..1], &out[2][..1], &out[3][..1]]);
    // Back to the pixel (the duplicating mapping's inverse takes the first copy, as astropy's).
    let back = back.unwrap();
    for (b, want) in back.iter().zip([10.0, 20.0, 3.0]) {
        assert!((b[0] - want).abs() < 1e-6, "{back:?}");
    }
    // The wavelength: 500 nm + 0.1 nm/pixel x 3 pixels.
    assert!((out[2][0] - 500.3).abs() < 1e-9, "{}", out[2][0]);
}

/// What a mutation puts in place of a scalar value.
const REPLACEMENTS: &[&str] = &[
    "-1",
    "0",
    "1e308",
    "-1e308",
    ".nan",
    ".inf",
    "'text'",
    "[]",
    "{}",
    "null",
    "[1, 2, 3]",
    "99999999999",
    "!transform/shift-1.2.0 {offset: 1}",
    "!core/ndarray-1.0.0 {data: [[1, 2], [3]], datatype: float64, shape: [2, 2]}",
    "!unit/quantity-1.1.0 {unit: !unit/unit-1.0.0 furlong, value: 1}",
    "*loop",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, .. ProptestConfig::default() })]

    #[test]
    fn tags_swapped_never_panic(a in 0usize..40, b in 0usize..40) {
        // Two tags of the tree exchanged: a transform where a frame belongs, a projection in
        // a shift's place, ...
        let tags: Vec<(usize, usize)> = WCS
            .match_indices('!')
            .filter_map(|(i, _)| WCS[i..].find([' ', '\n']).map(|e| (i, i + e)))
            .collect();
        let (a, b) = (tags[a % tags.len()], tags[b % tags.len()]);
        if a != b {
            let (first, second) = if a.0 < b.0 { (a, b) } else { (b, a) };
            let text = format!(
                "{}{}{}{}{}",
                &WCS[..first.0],
                &WCS[second.0..second.1],
                &WCS[first.1..second.0],
                &WCS[first.0..first.1],
                &WCS[second.1..]
            );
            if let Some(f) = file(&text) {
                exercise(&f);
            }
        }
    }
}
