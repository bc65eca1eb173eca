//! World coordinates for the viewer: the value of a pixel in the sky (or any world frame) and
//! a coordinate grid over a drawn plane, through the file's gwcs WCS (asdf-wcs).

use asdf::AsdfFile;
use asdf_wcs::{Wcs, WcsExt as _};
use serde_json::{Value as J, json};

/// Lattice points per side sampled for the grid.
const LATTICE: usize = 48;

/// The WCS of the file for an array of `ndim` axes: the one named, else the first whose pixel
/// axes are as many as the array's.
fn wcs_for(file: &AsdfFile, named: Option<&str>, ndim: usize) -> Result<(String, Wcs), String> {
    if let Some(p) = named {
        return file.wcs(p).map(|w| (p.to_owned(), w)).map_err(|e| e.to_string());
    }
    let mut last_err = None;
    for p in file.wcs_pointers() {
        match file.wcs(&p) {
            Ok(w) if w.pixel_n_dim() == ndim => return Ok((p, w)),
            Ok(_) => {}
            Err(e) => last_err = Some(e.to_string()),
        }
    }
    Err(last_err.unwrap_or_else(|| "the file has no WCS for this array".to_owned()))
}

/// The WCSs of the file, for the page: pointer, axes, or why one is not evaluated.
pub(crate) fn describe(file: &AsdfFile) -> J {
    J::Array(
        file.wcs_pointers()
            .into_iter()
            .map(|p| match file.wcs(&p) {
                Ok(w) => json!({
                    "pointer": p,
                    "pixel_n_dim": w.pixel_n_dim(),
                    "world_n_dim": w.world_n_dim(),
                    "frame": w.output_frame().name,
                    "axes": axes(&w),
                }),
                Err(e) => json!({ "pointer": p, "error": e.to_string() }),
            })
            .collect(),
    )
}

fn axes(w: &Wcs) -> Vec<J> {
    w.output_frame()
        .axes
        .iter()
        .map(|a| json!({ "name": a.name, "unit": a.unit, "type": a.physical_type }))
        .collect()
}

/// The drawn plane's place in the array: for each array axis, the index of plane column `c`
/// and row `r` (`start + k * step` on the two axes drawn, the index itself on the others).
struct Plane {
    /// Per array axis: the first index and the step.
    spans: Vec<(usize, i64)>,
    row_axis: usize,
    col_axis: usize,
}

impl Plane {
    fn new(file: &AsdfFile, pointer: &str, region: &str) -> Result<Plane, String> {
        let shape = file.array(pointer).map_err(|e| e.to_string())?.shape().to_vec();
        let region: asdf::Region = region.parse().map_err(|e| format!("slice: {e}"))?;
        let sel = region.resolve(&shape).map_err(|e| e.to_string())?;
        let kept: Vec<usize> = (0..sel.spans.len()).filter(|i| sel.spans[*i].keep).collect();
        if kept.len() != 2 {
            return Err("world coordinates are shown for a plane of two axes".to_owned());
        }
        Ok(Plane {
            spans: sel.spans.iter().map(|s| (s.start, s.step)).collect(),
            row_axis: kept[0],
            col_axis: kept[1],
        })
    }

    /// The WCS's pixel coordinates (x first: the array's axes reversed) of plane (col, row).
    #[allow(clippy::cast_precision_loss)]
    fn pixel(&self, col: f64, row: f64) -> Vec<f64> {
        let mut idx: Vec<f64> = self.spans.iter().map(|s| s.0 as f64).collect();
        let at = |s: &(usize, i64), k: f64| s.0 as f64 + k * s.1 as f64;
        idx[self.row_axis] = at(&self.spans[self.row_axis], row);
        idx[self.col_axis] = at(&self.spans[self.col_axis], col);
        idx.reverse();
        idx
    }
}

/// `{"op": "world", "pointer", "slice", "points": [[col, row], ...], "wcs"?}`: the world
/// coordinates of plane pixels.
pub(crate) fn world(file: &AsdfFile, req: &J) -> Result<J, String> {
    let pointer = req["pointer"].as_str().ok_or("no pointer")?;
    let plane = Plane::new(file, pointer, req["slice"].as_str().unwrap_or(""))?;
    let (wp, w) = wcs_for(file, req["wcs"].as_str(), plane.spans.len())?;
    let pts = req["points"].as_array().ok_or("no points")?;
    let mut cols = vec![Vec::with_capacity(pts.len()); w.pixel_n_dim()];
    for p in pts {
        let c = p[0].as_f64().ok_or("a point is [col, row]")?;
        let r = p[1].as_f64().ok_or("a point is [col, row]")?;
        for (col, v) in cols.iter_mut().zip(plane.pixel(c, r)) {
            col.push(v);
        }
    }
    let refs: Vec<&[f64]> = cols.iter().map(Vec::as_slice).collect();
    let world = w.pixel_to_world(&refs).map_err(|e| e.to_string())?;
    Ok(json!({
        "wcs": wp,
        "pixel": cols,
        "world": world.iter().map(|c| c.iter().map(|v| if v.is_finite() { J::from(*v) } else { J::Null }).collect::<Vec<_>>()).collect::<Vec<_>>(),
        "axes": axes(&w),
    }))
}

/// A "nice" step for about five lines over `span` (an angle in degrees when `angle`).
fn step(span: f64, angle: bool) -> f64 {
    let raw = span / 5.0;
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    if angle {
        const STEPS: [f64; 18] = [
            1.0 / 3600.0,
            2.0 / 3600.0,
            5.0 / 3600.0,
            10.0 / 3600.0,
            15.0 / 3600.0,
            30.0 / 3600.0,
            1.0 / 60.0,
            2.0 / 60.0,
            5.0 / 60.0,
            10.0 / 60.0,
            15.0 / 60.0,
            30.0 / 60.0,
            1.0,
            2.0,
            5.0,
            10.0,
            15.0,
            30.0,
        ];
        if let Some(s) = STEPS.iter().find(|s| **s >= raw) {
            return *s;
        }
        return 45.0;
    }
    let e = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * e)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * e)
}

/// `{"op": "grid", "pointer", "slice", "width", "height", "wcs"?}` (the plane's full size):
/// lines of constant world coordinate over the plane, as segments in plane coordinates.
pub(crate) fn grid(file: &AsdfFile, req: &J) -> Result<J, String> {
    let pointer = req["pointer"].as_str().ok_or("no pointer")?;
    let plane = Plane::new(file, pointer, req["slice"].as_str().unwrap_or(""))?;
    let (wp, w) = wcs_for(file, req["wcs"].as_str(), plane.spans.len())?;
    let width = req["width"].as_f64().ok_or("no width")?;
    let height = req["height"].as_f64().ok_or("no height")?;
    let n = LATTICE;
    #[allow(clippy::cast_precision_loss)]
    let at = |k: usize, size: f64| -0.5 + size * k as f64 / (n - 1) as f64;
    let mut cols = vec![Vec::with_capacity(n * n); w.pixel_n_dim()];
    for j in 0..n {
        for i in 0..n {
            for (col, v) in cols.iter_mut().zip(plane.pixel(at(i, width), at(j, height))) {
                col.push(v);
            }
        }
    }
    let refs: Vec<&[f64]> = cols.iter().map(Vec::as_slice).collect();
    let mut world = w.pixel_to_world(&refs).map_err(|e| e.to_string())?;
    let frame = w.output_frame();
    let mut lines = Vec::new();
    for (a, values) in world.iter_mut().enumerate().take(2) {
        let axis = frame.axes.get(a);
        let unit = axis.and_then(|x| x.unit.as_deref()).unwrap_or("");
        let angle = unit == "deg";
        let lon = angle
            && axis
                .and_then(|x| x.physical_type.as_deref())
                .is_some_and(|p| p.ends_with(".ra") || p.ends_with(".lon"));
        let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        let Some(&centre) = finite.get(finite.len() / 2) else {
            continue;
        };
        if lon {
            // Longitudes unwrapped about the plane's centre (no jump at 0/360).
            for v in values.iter_mut() {
                if *v - centre > 180.0 {
                    *v -= 360.0;
                } else if centre - *v > 180.0 {
                    *v += 360.0;
                }
            }
        }
        let (lo, hi) = values
            .iter()
            .filter(|v| v.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| (l.min(*v), h.max(*v)));
        if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
            continue;
        }
        let s = step(hi - lo, angle);
        let mut level = (lo / s).ceil() * s;
        let mut count = 0;
        while level <= hi && count < 64 {
            let segments = contour(values, n, level, width, height);
            if !segments.is_empty() {
                let shown = if lon { level.rem_euclid(360.0) } else { level };
                lines.push(json!({ "axis": a, "value": shown, "segments": segments }));
            }
            level += s;
            count += 1;
        }
    }
    Ok(json!({ "wcs": wp, "lines": lines, "axes": axes(&w) }))
}

/// Marching squares over the lattice: the segments where `v` crosses `level`, as
/// `[c0, r0, c1, r1]` in plane coordinates.
#[allow(clippy::cast_precision_loss)]
fn contour(v: &[f64], n: usize, level: f64, width: f64, height: f64) -> Vec<[f64; 4]> {
    let pos = |i: f64, j: f64| (-0.5 + width * i / (n - 1) as f64, -0.5 + height * j / (n - 1) as f64);
    let mut out = Vec::new();
    for j in 0..n - 1 {
        for i in 0..n - 1 {
            let c = [
                v[j * n + i],
                v[j * n + i + 1],
                v[(j + 1) * n + i + 1],
                v[(j + 1) * n + i],
            ];
            if c.iter().any(|x| !x.is_finite()) {
                continue;
            }
            // The corners (i, j), (i+1, j), (i+1, j+1), (i, j+1); the crossings on the edges.
            let corners = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)];
            let mut pts = Vec::with_capacity(4);
            for e in 0..4 {
                let (a, b) = (c[e], c[(e + 1) % 4]);
                if (a < level) != (b < level) {
                    let t = (level - a) / (b - a);
                    let (p, q) = (corners[e], corners[(e + 1) % 4]);
                    pts.push(pos(i as f64 + p.0 + t * (q.0 - p.0), j as f64 + p.1 + t * (q.1 - p.1)));
                }
            }
            for pair in pts.chunks_exact(2) {
                out.push([pair[0].0, pair[0].1, pair[1].0, pair[1].1]);
            }
        }
    }
    out
}
