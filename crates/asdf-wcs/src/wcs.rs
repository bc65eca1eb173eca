//! gwcs's `wcs`: steps of frames and transforms, evaluated pixel to world and back as gwcs's
//! `__call__` and `invert` do (bounding box, footprint, units).

use std::mem::MaybeUninit;

use crate::error::Error;
use crate::frames::{self, Frame};
use crate::model::{Col, Interval, Kind, Transform};
use crate::parse::{self, At, GWCS, tag_parts};

/// Points evaluated together (one task of the CPU pool).
const CHUNK: usize = 4096;

/// The relative tolerance on the footprint's edges (our corners and gwcs's differ by a few
/// units in the last place).
const EDGE: f64 = 1e-12;

/// A step of the pipeline: a frame and the transform from it to the next step's frame.
#[derive(Debug, Clone)]
pub struct Step {
    /// The frame.
    pub frame: Frame,
    /// The transform to the next frame (`None` for the last).
    pub transform: Option<Transform>,
}

/// A gwcs WCS read from a file: its steps, ready to evaluate.
#[derive(Debug, Clone)]
pub struct Wcs {
    name: String,
    steps: Vec<Step>,
    forward: Transform,
    bbox: Option<Vec<Option<Interval>>>,
    pointer: String,
}

impl Wcs {
    /// Reads the WCS at `pointer` (a node tagged `tag:stsci.edu:gwcs/wcs-*`).
    ///
    /// # Errors
    /// [`Error::File`] when there is no such node; [`Error::Unsupported`] naming the first
    /// transform or frame not evaluated; [`Error::Malformed`] where a node is not what its tag
    /// says.
    pub fn read(file: &asdf::AsdfFile, pointer: &str) -> Result<Wcs, Error> {
        let node = file.get(pointer)?;
        let at = At::new(file, node);
        parse::READ.set(0);
        match tag_parts(at.tag(), GWCS) {
            Some(("wcs", v)) if parse::known_major(v) => {}
            _ => {
                return Err(Error::Malformed {
                    pointer: if pointer.is_empty() {
                        "the root".to_owned()
                    } else {
                        pointer.to_owned()
                    },
                    reason: format!("not a gwcs WCS (tag {:?})", at.tag()),
                });
            }
        }
        let items = at
            .get("steps")
            .and_then(|s| s.items())
            .ok_or_else(|| at.malformed("a WCS without `steps`"))?;
        if items.len() < 2 {
            return Err(at.malformed("a WCS needs at least two steps"));
        }
        let mut steps = Vec::with_capacity(items.len());
        for (i, s) in items.iter().enumerate() {
            match tag_parts(s.tag(), GWCS) {
                Some(("step", v)) if parse::known_major(v) => {}
                _ => return Err(s.unsupported(format!("the step {:?}", s.tag()))),
            }
            let frame = frames::frame(s.get("frame").ok_or_else(|| s.malformed("a step without a frame"))?)?;
            let transform = match s.get("transform") {
                Some(t) if !t.node.is_null() => Some(parse::transform(t)?),
                _ => None,
            };
            if transform.is_none() && i + 1 < items.len() {
                return Err(s.malformed("a step before the last without a transform"));
            }
            steps.push(Step { frame, transform });
        }
        let mut ts: Vec<Transform> = steps.iter().filter_map(|s| s.transform.clone()).collect();
        for w in ts.windows(2) {
            if w[0].n_out != w[1].n_in {
                return Err(Error::Malformed {
                    pointer: w[1].pointer.clone(),
                    reason: format!("takes {} coordinates, the step before gives {}", w[1].n_in, w[0].n_out),
                });
            }
        }
        // gwcs's bounding box is the first step's transform's: its own, or (astropy's default
        // for a bare 1-D lookup table) the range of the table's points.
        let bbox = ts.first().and_then(|t| {
            t.bbox.clone().or_else(|| match &t.kind {
                Kind::Tabular(table) if table.points.len() == 1 => {
                    let p = &table.points[0];
                    let lo = p.iter().copied().fold(f64::INFINITY, f64::min);
                    let hi = p.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    (lo <= hi).then(|| vec![Some((lo, hi))])
                }
                _ => None,
            })
        });
        let mut forward = ts.remove(0);
        for t in ts {
            let (n_in, n_out) = (forward.n_in, t.n_out);
            forward = Transform {
                pointer: forward.pointer.clone(),
                tag: "compose".to_owned(),
                kind: Kind::Compose(Box::new(forward), Box::new(t)),
                n_in,
                n_out,
                inverse: None,
                bbox: None,
                quantity_params: None,
            };
        }
        // A frame whose axes are not as many as the transform's coordinates is accepted, as
        // gwcs accepts it: the coordinates are the transform's (units from the frame where it
        // has one for the coordinate).
        Ok(Wcs {
            name: at.key_str("name").unwrap_or_default().to_owned(),
            steps,
            forward,
            bbox,
            pointer: pointer.to_owned(),
        })
    }

    /// The WCS's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The steps.
    #[must_use]
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// Whether the pipeline takes quantities (astropy's `uses_quantity`: a parameter is one, or
    /// there is no parameter): the pixel coordinates then carry the input frame's units.
    pub(crate) fn uses_quantity(&self) -> bool {
        self.forward.uses_quantity()
    }

    /// The input (pixel) frame.
    #[must_use]
    pub fn input_frame(&self) -> &Frame {
        &self.steps[0].frame
    }

    /// The output (world) frame.
    #[must_use]
    pub fn output_frame(&self) -> &Frame {
        &self.steps[self.steps.len() - 1].frame
    }

    /// How many pixel coordinates.
    #[must_use]
    pub fn pixel_n_dim(&self) -> usize {
        self.forward.n_in
    }

    /// How many world coordinates.
    #[must_use]
    pub fn world_n_dim(&self) -> usize {
        self.forward.n_out
    }

    /// The bounding box of the pixel coordinates, per axis (`None` for an axis it ignores).
    #[must_use]
    pub fn bounding_box(&self) -> Option<&[Option<(f64, f64)>]> {
        self.bbox.as_deref()
    }

    /// Pixel to world, as gwcs's `wcs(x, y, ...)`: one slice per pixel axis (all the same
    /// length), one vector per world axis, in the output frame's units. Points outside the
    /// bounding box give NaN. Evaluated on the CPU pool.
    ///
    /// # Errors
    /// [`Error::Usage`] when the slices are not one per axis of equal length; [`Error::Units`]
    /// or [`Error::OutOfTable`] where astropy raises too.
    pub fn pixel_to_world(&self, pixel: &[&[f64]]) -> Result<Vec<Vec<f64>>, Error> {
        self.run(&self.forward, pixel, Direction::Forward)
    }

    /// [`Wcs::pixel_to_world`] into `world` (one slice per world axis, each as long as the
    /// pixel slices): no allocation of the results.
    ///
    /// # Errors
    /// As [`Wcs::pixel_to_world`]; [`Error::Usage`] when `world` is not one slice per world
    /// axis of the points' length.
    pub fn pixel_to_world_into(&self, pixel: &[&[f64]], world: &mut [&mut [f64]]) -> Result<(), Error> {
        self.run_into(&self.forward, pixel, Direction::Forward, &mut as_uninit(world))
    }

    /// [`Wcs::pixel_to_world_into`], or with `with_bounding_box` false every point evaluated
    /// (gwcs's `with_bounding_box=False`).
    ///
    /// # Errors
    /// As [`Wcs::pixel_to_world_into`].
    pub fn pixel_to_world_with(
        &self,
        pixel: &[&[f64]],
        world: &mut [&mut [f64]],
        with_bounding_box: bool,
    ) -> Result<(), Error> {
        let dir = if with_bounding_box {
            Direction::Forward
        } else {
            Direction::Unbounded
        };
        self.run_into(&self.forward, pixel, dir, &mut as_uninit(world))
    }

    /// World to pixel, as gwcs's `invert`: the inverse the file gives or the analytic one;
    /// points outside the footprint of the bounding box, or landing outside it, give NaN.
    ///
    /// # Errors
    /// [`Error::NoInverse`] when a transform of the pipeline has no inverse (gwcs then iterates
    /// numerically; that is not done here); as [`Wcs::pixel_to_world`].
    pub fn world_to_pixel(&self, world: &[&[f64]]) -> Result<Vec<Vec<f64>>, Error> {
        let n = world.first().map_or(0, |c| c.len());
        let mut out = vec![vec![0.0; n]; self.pixel_n_dim()];
        let mut refs: Vec<&mut [f64]> = out.iter_mut().map(Vec::as_mut_slice).collect();
        self.world_to_pixel_into(world, &mut refs)?;
        Ok(out)
    }

    /// [`Wcs::world_to_pixel`] into `pixel`.
    ///
    /// # Errors
    /// As [`Wcs::world_to_pixel`] and [`Wcs::pixel_to_world_into`].
    pub fn world_to_pixel_into(&self, world: &[&[f64]], pixel: &mut [&mut [f64]]) -> Result<(), Error> {
        self.world_to_pixel_with(world, pixel, true)
    }

    /// [`Wcs::world_to_pixel_into`], or with `with_bounding_box` false neither the footprint
    /// nor the bounding box applied (gwcs's `with_bounding_box=False`).
    ///
    /// # Errors
    /// As [`Wcs::world_to_pixel_into`].
    pub fn world_to_pixel_with(
        &self,
        world: &[&[f64]],
        pixel: &mut [&mut [f64]],
        with_bounding_box: bool,
    ) -> Result<(), Error> {
        let backward = match self.forward.inverse() {
            Ok(b) => Some(b),
            // No inverse in the file and none analytic: gwcs iterates numerically (pixel and
            // world axes as many), and so does this.
            Err(Error::NoInverse { .. }) if self.pixel_n_dim() == self.world_n_dim() => None,
            Err(Error::NoInverse { pointer, what, .. }) => {
                return Err(Error::NoInverse {
                    pointer,
                    what,
                    hint: " (and the WCS has not as many world axes as pixel axes, which a numerical inverse needs, in gwcs too)",
                });
            }
            Err(e) => return Err(e),
        };
        let mut owned: Vec<Vec<f64>>;
        let world = if self.bbox.is_some() && with_bounding_box {
            owned = world.iter().map(|w| w.to_vec()).collect();
            self.outside_footprint(&mut owned)?;
            owned.iter().map(Vec::as_slice).collect::<Vec<_>>()
        } else {
            world.to_vec()
        };
        match &backward {
            Some(b) => self.run_into(b, &world, Direction::Backward, &mut as_uninit(pixel))?,
            None => self.numerical_inverse(&world, pixel)?,
        }
        if let Some(bb) = self.bbox.as_ref().filter(|_| with_bounding_box) {
            for (col, iv) in pixel.iter_mut().zip(bb) {
                if let Some((lo, hi)) = iv {
                    for v in col.iter_mut() {
                        if *v < *lo || *v > *hi {
                            *v = f64::NAN;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// World to pixel by Newton's method, for a WCS without an inverse (gwcs's
    /// `numerical_inverse` does it by a fixed-point iteration from a fitted approximate
    /// inverse, to 1e-5 pixels): from an affine fit of the inverse over the bounding box (or
    /// pixel 1, as gwcs), the Jacobian by central differences, a step that makes the residual
    /// grow halved, until a step is below 1e-10 pixels or the residual at the floor of the
    /// arithmetic (at most 100 steps); a point that does not converge is NaN. Longitudes are
    /// compared modulo 360.
    fn numerical_inverse(&self, world: &[&[f64]], pixel: &mut [&mut [f64]]) -> Result<(), Error> {
        let n = self.pixel_n_dim();
        let count = world.first().map_or(0, |c| c.len());
        if pixel.len() != n || pixel.iter().any(|c| c.len() != count) || world.len() != n {
            return Err(Error::Usage(format!(
                "{}: the outputs must be {n} slices of {count} values",
                self.pointer
            )));
        }
        let frame = self.output_frame();
        let wraps: Vec<bool> = (0..n)
            .map(|i| {
                frame.axes.get(i).is_some_and(|a| {
                    a.unit.as_deref() == Some("deg")
                        && a.physical_type
                            .as_deref()
                            .is_some_and(|p| p.ends_with(".ra") || p.ends_with(".lon"))
                })
            })
            .collect();
        let start: Vec<f64> = match &self.bbox {
            Some(bb) => bb.iter().map(|iv| iv.map_or(1.0, |(a, b)| 0.5 * (a + b))).collect(),
            None => vec![1.0; n],
        };
        // x: the current guess of every point still iterating: from an affine fit of pixel on
        // world over a grid of the bounding box (as gwcs starts from a fitted approximate
        // inverse: the branch inside the image where the WCS is not one-to-one), else the
        // centre.
        let mut x: Vec<Vec<f64>> = start.iter().map(|s| vec![*s; count]).collect();
        if let Some(fit) = self.affine_start(&wraps)? {
            for k in 0..count {
                let dw: Vec<f64> = (0..n)
                    .map(|o| {
                        let d = world[o][k] - fit.centre[o];
                        if wraps[o] {
                            (d + 180.0).rem_euclid(360.0) - 180.0
                        } else {
                            d
                        }
                    })
                    .collect();
                for (d, row) in fit.coef.iter().enumerate() {
                    let v = row[0] + row[1..].iter().zip(&dw).map(|(c, w)| c * w).sum::<f64>();
                    if v.is_finite() {
                        x[d][k] = v;
                    }
                }
            }
        }
        // Longitudes reduced to [0, 360) first: a huge longitude's residual would otherwise be
        // below the floor of its own arithmetic at once (and the guess taken for an answer).
        let reduced: Vec<Vec<f64>> = world
            .iter()
            .zip(&wraps)
            .map(|(w, wrap)| {
                if *wrap {
                    w.iter().map(|v| v.rem_euclid(360.0)).collect()
                } else {
                    w.to_vec()
                }
            })
            .collect();
        let world: Vec<&[f64]> = reduced.iter().map(Vec::as_slice).collect();
        let world = &world[..];
        let mut active: Vec<usize> = (0..count).filter(|&k| world.iter().all(|w| w[k].is_finite())).collect();
        let mut done = vec![false; count];
        // Per point: the last accepted guess, its step and its residual (a step that makes the
        // residual grow is halved: damped Newton).
        let mut last: Vec<Option<Accepted>> = vec![None; count];
        let h = 1e-4;
        for _ in 0..100 {
            if active.is_empty() {
                break;
            }
            let m = active.len();
            // The guess and its 2n neighbours, evaluated together.
            let mut probe: Vec<Vec<f64>> = vec![Vec::with_capacity(m * (2 * n + 1)); n];
            for (d, col) in probe.iter_mut().enumerate() {
                for shift in 0..=2 * n {
                    let delta = match shift {
                        0 => 0.0,
                        s if (s - 1) / 2 == d => {
                            if s % 2 == 1 {
                                h
                            } else {
                                -h
                            }
                        }
                        _ => 0.0,
                    };
                    col.extend(active.iter().map(|&k| x[d][k] + delta));
                }
            }
            let refs: Vec<&[f64]> = probe.iter().map(Vec::as_slice).collect();
            let f = self.run(&self.forward, &refs, Direction::Unbounded)?;
            let mut still = Vec::with_capacity(m);
            for (j, &k) in active.iter().enumerate() {
                let at = |out: usize, shift: usize| f[out][shift * m + j];
                // The residual and the Jacobian (rows: world axes; columns: pixel axes).
                let mut r = vec![0.0; n];
                let mut jac = vec![vec![0.0; n]; n];
                for o in 0..n {
                    let diff = |a: f64, b: f64| {
                        let d = a - b;
                        if wraps[o] {
                            (d + 180.0).rem_euclid(360.0) - 180.0
                        } else {
                            d
                        }
                    };
                    r[o] = diff(at(o, 0), world[o][k]);
                    for (d, c) in jac[o].iter_mut().enumerate() {
                        *c = diff(at(o, 1 + 2 * d), at(o, 2 + 2 * d)) / (2.0 * h);
                    }
                }
                let norm = r.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                // At the floor of the arithmetic (a few units in the last place of the world
                // coordinates): done.
                let floor = 8.0 * f64::EPSILON * (0..n).fold(1.0f64, |m, o| m.max(world[o][k].abs()));
                if norm <= floor {
                    done[k] = true;
                    continue;
                }
                if let Some((px, pdx, pnorm)) = &mut last[k]
                    && (norm > *pnorm || norm.is_nan())
                {
                    // Worse than before: back to half the last step.
                    let mut tiny = true;
                    for d in 0..n {
                        pdx[d] *= 0.5;
                        x[d][k] = px[d] - pdx[d];
                        tiny &= pdx[d].abs() < 1e-13 * (1.0 + px[d].abs());
                    }
                    if !tiny {
                        still.push(k);
                    }
                    continue;
                }
                let step = solve(jac, r);
                match step {
                    Some(dx) if dx.iter().all(|v| v.is_finite()) => {
                        let here: Vec<f64> = (0..n).map(|d| x[d][k]).collect();
                        let mut biggest: f64 = 0.0;
                        for d in 0..n {
                            x[d][k] -= dx[d];
                            biggest = biggest.max(dx[d].abs());
                        }
                        last[k] = Some((here, dx, norm));
                        if biggest < 1e-10 {
                            done[k] = true;
                        } else {
                            still.push(k);
                        }
                    }
                    _ => {}
                }
            }
            active = still;
        }
        // Every answer checked: the world coordinates of the pixel found are those asked for
        // (a step that stalled away from a solution gives NaN, never a made-up pixel).
        let found: Vec<usize> = (0..count).filter(|&k| done[k]).collect();
        if !found.is_empty() {
            let probe: Vec<Vec<f64>> = (0..n).map(|d| found.iter().map(|&k| x[d][k]).collect()).collect();
            let refs: Vec<&[f64]> = probe.iter().map(Vec::as_slice).collect();
            let back = self.run(&self.forward, &refs, Direction::Unbounded)?;
            for (j, &k) in found.iter().enumerate() {
                let ok = (0..n).all(|o| {
                    let d = back[o][j] - world[o][k];
                    let d = if wraps[o] {
                        (d + 180.0).rem_euclid(360.0) - 180.0
                    } else {
                        d
                    };
                    d.abs() <= 1e-9 * world[o][k].abs().max(1.0)
                });
                done[k] = ok;
            }
        }
        for (d, out) in pixel.iter_mut().enumerate() {
            for (k, v) in out.iter_mut().enumerate() {
                *v = if done[k] { x[d][k] } else { f64::NAN };
            }
        }
        Ok(())
    }

    /// The least-squares affine map from world to pixel over a 16 x 16 grid of the bounding
    /// box (`None` without a bounding box of every axis, or when the fit fails).
    fn affine_start(&self, wraps: &[bool]) -> Result<Option<AffineFit>, Error> {
        let Some(bb) = &self.bbox else { return Ok(None) };
        let Some(bb) = bb.iter().copied().collect::<Option<Vec<(f64, f64)>>>() else {
            return Ok(None);
        };
        let n = bb.len();
        if n > 3 {
            return Ok(None);
        }
        const G: usize = 16;
        let total = G.pow(u32::try_from(n).unwrap_or(1));
        let mut grid: Vec<Vec<f64>> = vec![Vec::with_capacity(total); n];
        for k in 0..total {
            let mut rest = k;
            for (d, col) in grid.iter_mut().enumerate() {
                let i = rest % G;
                rest /= G;
                #[allow(clippy::cast_precision_loss)]
                col.push(bb[d].0 + (bb[d].1 - bb[d].0) * i as f64 / (G - 1) as f64);
            }
        }
        let refs: Vec<&[f64]> = grid.iter().map(Vec::as_slice).collect();
        let world = self.run(&self.forward, &refs, Direction::Unbounded)?;
        let centre: Vec<f64> = world.iter().map(|w| w[total / 2]).collect();
        if centre.iter().any(|c| !c.is_finite()) {
            return Ok(None);
        }
        // Normal equations of pixel_d = c0 + sum_o c_o (world_o - centre_o).
        let m = n + 1;
        let mut ata = vec![vec![0.0; m]; m];
        let mut atb = vec![vec![0.0; m]; n];
        for k in 0..total {
            let mut row = vec![1.0];
            for o in 0..n {
                let d = world[o][k] - centre[o];
                row.push(if wraps.get(o).copied().unwrap_or(false) {
                    (d + 180.0).rem_euclid(360.0) - 180.0
                } else {
                    d
                });
            }
            if row.iter().any(|v| !v.is_finite()) {
                continue;
            }
            for i in 0..m {
                for j in 0..m {
                    ata[i][j] += row[i] * row[j];
                }
                for d in 0..n {
                    atb[d][i] += row[i] * grid[d][k];
                }
            }
        }
        let mut coef = Vec::with_capacity(n);
        for b in atb {
            match solve(ata.clone(), b) {
                Some(c) => coef.push(c),
                None => return Ok(None),
            }
        }
        Ok(Some(AffineFit { centre, coef }))
    }

    /// gwcs's `footprint`: the world coordinates of the bounding box's corners (clockwise
    /// from the lower left for a 2-D frame of spatial axes; every corner otherwise), one row
    /// per corner.
    ///
    /// # Errors
    /// [`Error::Usage`] when the WCS has no bounding box; as [`Wcs::pixel_to_world`].
    pub fn footprint(&self) -> Result<Vec<Vec<f64>>, Error> {
        let bb = self
            .bbox
            .as_ref()
            .ok_or_else(|| Error::Usage("the WCS has no bounding box".into()))?;
        // An axis the bounding box ignores spans everything (gwcs: -inf to inf).
        let bb: Vec<(f64, f64)> = bb
            .iter()
            .map(|i| i.unwrap_or((f64::NEG_INFINITY, f64::INFINITY)))
            .collect();
        let out_frame = self.output_frame();
        let all_spatial = !out_frame.axes.is_empty()
            && out_frame
                .axes
                .iter()
                .all(|a| a.axis_type.eq_ignore_ascii_case("spatial"));
        let vertices: Vec<Vec<f64>> = if bb.len() == 2 && all_spatial && out_frame.naxes() > 1 {
            let (x, y) = (bb[0], bb[1]);
            vec![vec![x.0, x.0, x.1, x.1], vec![y.0, y.1, y.1, y.0]]
        } else {
            let n = bb.len();
            let count = 1usize << n.min(20);
            let mut cols = vec![Vec::with_capacity(count); n];
            for k in 0..count {
                for (d, col) in cols.iter_mut().enumerate() {
                    // itertools.product: the last axis changes fastest.
                    let bit = (k >> (n - 1 - d)) & 1;
                    col.push(if bit == 0 { bb[d].0 } else { bb[d].1 });
                }
            }
            cols
        };
        let refs: Vec<&[f64]> = vertices.iter().map(Vec::as_slice).collect();
        let world = self.run(&self.forward, &refs, Direction::Unbounded)?;
        let n = world.first().map_or(0, Vec::len);
        Ok((0..n).map(|k| world.iter().map(|c| c[k]).collect()).collect())
    }

    /// gwcs's `outside_footprint`: world coordinates outside the footprint's range become NaN.
    fn outside_footprint(&self, world: &mut [Vec<f64>]) -> Result<(), Error> {
        let fp = self.footprint()?;
        let frame = self.output_frame();
        let types: Vec<String> = frame.axes.iter().map(|a| a.axis_type.clone()).collect();
        let mut distinct = types.clone();
        distinct.sort();
        distinct.dedup();
        for axtyp in &distinct {
            let in_type = types.iter().filter(|t| *t == axtyp).count();
            for (idim, coord) in world.iter_mut().enumerate() {
                let range: Vec<f64> = if in_type > 1 {
                    fp.iter()
                        .map(|row| row.get(idim).copied().unwrap_or(f64::NAN))
                        .collect()
                } else {
                    fp.iter().flatten().copied().collect()
                };
                let (min, max) = nan_min_max(&range);
                // The footprint's corners are ours, within a few units in the last place of
                // gwcs's: a point on gwcs's edge is kept (not lost to a difference of 1e-14).
                let tol = EDGE
                    * [1.0, min.abs(), max.abs()]
                        .into_iter()
                        .filter(|v| v.is_finite())
                        .fold(0.0, f64::max);
                let phys = frame
                    .axes
                    .get(idim)
                    .and_then(|a| a.physical_type.as_deref())
                    .unwrap_or("");
                if axtyp == "SPATIAL" && (phys.ends_with(".ra") || phys.ends_with(".lon")) && (max - min) > 180.0 {
                    let d = 0.5 * (min + max);
                    let lower: Vec<f64> = range.iter().copied().filter(|v| *v <= d).collect();
                    let upper: Vec<f64> = range
                        .iter()
                        .copied()
                        .filter(|v| {
                            v.partial_cmp(&d) != Some(std::cmp::Ordering::Less)
                                && v.partial_cmp(&d) != Some(std::cmp::Ordering::Equal)
                        })
                        .collect();
                    let (_, lo) = nan_min_max(&lower);
                    let (hi, _) = nan_min_max(&upper);
                    for v in coord.iter_mut() {
                        if *v > lo + tol && *v < hi - tol {
                            *v = f64::NAN;
                        }
                    }
                } else {
                    for v in coord.iter_mut() {
                        if *v < min - tol || *v > max + tol {
                            *v = f64::NAN;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn run(&self, t: &Transform, ins: &[&[f64]], dir: Direction) -> Result<Vec<Vec<f64>>, Error> {
        let n = ins.first().map_or(0, |c| c.len());
        // The outputs' pages are first touched by the threads that write them (zeroed or
        // filled here first, their faults were taken by one thread: a fifth of a 16-million
        // point grid's time).
        let mut out: Vec<Vec<f64>> = (0..t.n_out).map(|_| Vec::with_capacity(n)).collect();
        {
            let mut dest: Vec<&mut [MaybeUninit<f64>]> =
                out.iter_mut().map(|c| &mut c.spare_capacity_mut()[..n]).collect();
            self.run_into(t, ins, dir, &mut dest)?;
        }
        for col in &mut out {
            // SAFETY: `run_into` returned Ok, so it wrote every element of every output slice
            // (see there); those are the first `n` elements, within the capacity `n`.
            unsafe { col.set_len(n) };
        }
        Ok(out)
    }

    /// Evaluates `t` at the points `ins` into `out`, on the CPU pool; on Ok every element of
    /// every slice of `out` was written.
    fn run_into(
        &self,
        t: &Transform,
        ins: &[&[f64]],
        dir: Direction,
        out: &mut [&mut [MaybeUninit<f64>]],
    ) -> Result<(), Error> {
        if ins.len() != t.n_in {
            return Err(Error::Usage(format!(
                "{}: {} coordinates given, {} expected",
                self.pointer,
                ins.len(),
                t.n_in
            )));
        }
        let n = ins.first().map_or(0, |c| c.len());
        if ins.iter().any(|c| c.len() != n) {
            return Err(Error::Usage("the coordinates differ in length".into()));
        }
        if out.len() != t.n_out || out.iter().any(|c| c.len() != n) {
            return Err(Error::Usage(format!(
                "{}: the outputs must be {} slices of {n} values",
                self.pointer, t.n_out
            )));
        }
        let (from, to) = match dir {
            Direction::Backward => (self.output_frame(), self.input_frame()),
            _ => (self.input_frame(), self.output_frame()),
        };
        let uses_q = t.uses_quantity();
        let bbox = match dir {
            Direction::Forward => self.bbox.as_deref(),
            _ => None,
        };
        // Each task writes its points' coordinates straight into the outputs.
        let mut per_chunk: Vec<Vec<&mut [MaybeUninit<f64>]>> = (0..n.div_ceil(CHUNK)).map(|_| Vec::new()).collect();
        for col in out.iter_mut() {
            for (k, piece) in col.chunks_mut(CHUNK).enumerate() {
                per_chunk[k].push(piece);
            }
        }
        // On the library's executor (its thread count: `ASDF_RS_THREADS`, else the cores, at
        // most 8; one thread in the browser's build).
        let tasks: Vec<std::sync::Mutex<Vec<&mut [MaybeUninit<f64>]>>> =
            per_chunk.into_iter().map(std::sync::Mutex::new).collect();
        asdf::compression::exec::par_map(tasks.len(), |c| {
            let lo = c * CHUNK;
            let hi = (lo + CHUNK).min(n);
            let mut dest = tasks[c].lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            self.chunk(t, ins, lo, hi, bbox, uses_q, from, to, &mut dest)
        })
        .into_iter()
        .collect()
    }

    #[allow(clippy::too_many_arguments)]
    fn chunk(
        &self,
        t: &Transform,
        ins: &[&[f64]],
        lo: usize,
        hi: usize,
        bbox: Option<&[Option<Interval>]>,
        uses_q: bool,
        from: &Frame,
        to: &Frame,
        dest: &mut [&mut [MaybeUninit<f64>]],
    ) -> Result<(), Error> {
        // The points inside the bounding box (astropy evaluates only those), and how many.
        let inside: Option<(Vec<bool>, usize)> = bbox.map(|bb| {
            let mut m = vec![true; hi - lo];
            for (iv, c) in bb.iter().zip(ins) {
                if let Some((a, b)) = *iv {
                    crate::kernels::clip(&c[lo..hi], a, b, &mut m);
                }
            }
            let count = m.iter().map(|k| usize::from(*k)).sum();
            (m, count)
        });
        if inside.as_ref().is_some_and(|(_, count)| *count == 0) {
            for d in dest.iter_mut() {
                d.fill(MaybeUninit::new(f64::NAN));
            }
            return Ok(());
        }
        // Every point inside: no compaction.
        let inside = inside.filter(|(m, count)| *count < m.len()).map(|(m, _)| m);
        let cols: Vec<Col> = ins
            .iter()
            .enumerate()
            .map(|(d, c)| {
                let mut v = crate::pool::take(hi - lo);
                match &inside {
                    None => v.extend_from_slice(&c[lo..hi]),
                    Some(m) => v.extend(c[lo..hi].iter().zip(m).filter(|(_, k)| **k).map(|(v, _)| *v)),
                }
                let u = if uses_q {
                    from.axes.get(d).and_then(|a| a.parsed_unit)
                } else {
                    None
                };
                Col { v, u }
            })
            .collect();
        let outs = t.eval(cols)?;
        if outs.len() != dest.len() {
            return Err(Error::Usage(format!(
                "{}: gives {} coordinates, {} expected",
                t.pointer,
                outs.len(),
                dest.len()
            )));
        }
        for (d, (mut c, dst)) in outs.into_iter().zip(dest.iter_mut()).enumerate() {
            if let (Some(cu), Some(fu)) = (c.u, to.axes.get(d).and_then(|a| a.parsed_unit)) {
                let f = cu.factor_to(&fu).ok_or_else(|| Error::Units {
                    pointer: t.pointer.clone(),
                    reason: format!(
                        "output {d} does not convert to the unit of the frame {:?} ({})",
                        to.name,
                        to.axes[d].unit.as_deref().unwrap_or("")
                    ),
                })?;
                if f != 1.0 {
                    for v in &mut c.v {
                        *v *= f;
                    }
                }
            }
            match &inside {
                None => {
                    for (o, v) in dst.iter_mut().zip(c.v.iter().chain(std::iter::repeat(&f64::NAN))) {
                        o.write(*v);
                    }
                }
                Some(m) => {
                    let mut it = c.v.iter();
                    for (o, k) in dst.iter_mut().zip(m) {
                        o.write(if *k {
                            it.next().copied().unwrap_or(f64::NAN)
                        } else {
                            f64::NAN
                        });
                    }
                }
            }
        }
        Ok(())
    }
}

/// A Newton step taken: the guess it started from, the step, the residual there.
type Accepted = (Vec<f64>, Vec<f64>, f64);

/// An affine map from world to pixel (`pixel_d = coef[d][0] + sum_o coef[d][1 + o] (world_o -
/// centre_o)`).
struct AffineFit {
    centre: Vec<f64>,
    coef: Vec<Vec<f64>>,
}

/// Solves `a x = b` (Gaussian elimination with partial pivoting); `None` when singular.
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for c in 0..n {
        let p = (c..n).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))?;
        if a[p][c] == 0.0 || !a[p][c].is_finite() {
            return None;
        }
        a.swap(c, p);
        b.swap(c, p);
        let pivot = a[c].clone();
        for r in c + 1..n {
            let f = a[r][c] / pivot[c];
            for (v, q) in a[r].iter_mut().zip(&pivot).skip(c) {
                *v -= f * q;
            }
            b[r] -= f * b[c];
        }
    }
    let mut x = vec![0.0; n];
    for c in (0..n).rev() {
        let s: f64 = (c + 1..n).map(|k| a[c][k] * x[k]).sum();
        x[c] = (b[c] - s) / a[c][c];
    }
    Some(x)
}

/// Initialised slices seen as slices that may be written.
fn as_uninit<'a>(s: &'a mut [&mut [f64]]) -> Vec<&'a mut [MaybeUninit<f64>]> {
    s.iter_mut()
        .map(|c| {
            let p = std::ptr::from_mut::<[f64]>(*c) as *mut [MaybeUninit<f64>];
            // SAFETY: `MaybeUninit<f64>` has the layout of `f64`, the slice is the same memory
            // borrowed for as long, and only initialised values are written through it (never
            // `MaybeUninit::uninit()`), so it stays a valid `[f64]`.
            unsafe { &mut *p }
        })
        .collect()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    Backward,
    Unbounded,
}

/// numpy's `min` and `max`: NaN when any value is NaN (or there is none).
fn nan_min_max(v: &[f64]) -> (f64, f64) {
    if v.is_empty() || v.iter().any(|x| x.is_nan()) {
        return (f64::NAN, f64::NAN);
    }
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (min, max)
}
