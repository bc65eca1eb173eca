//! The transforms and their evaluation over columns of points, as astropy.modeling evaluates
//! them (the same formulas, the same treatment of units).

use crate::error::Error;
use crate::kernels;
use crate::pool;
use crate::sky::{self, Mat3, Projection};
use crate::units::Unit;

/// A number with its unit (`None`: a plain number, not a quantity).
pub(crate) type Q = (f64, Option<Unit>);

/// One coordinate of many points, with its unit (`None`: plain numbers). Its buffer goes
/// back to the thread's pool when it is dropped.
#[derive(Debug)]
pub(crate) struct Col {
    pub(crate) v: Vec<f64>,
    pub(crate) u: Option<Unit>,
}

impl Col {
    pub(crate) fn plain(v: Vec<f64>) -> Col {
        Col { v, u: None }
    }

    /// The values, taken out.
    pub(crate) fn take(mut self) -> Vec<f64> {
        std::mem::take(&mut self.v)
    }
}

impl Clone for Col {
    fn clone(&self) -> Col {
        let mut v = pool::take(self.v.len());
        v.extend_from_slice(&self.v);
        Col { v, u: self.u }
    }
}

impl Drop for Col {
    fn drop(&mut self) {
        pool::give(std::mem::take(&mut self.v));
    }
}

/// Arithmetic between two transforms' outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
}

/// A tabular transform's table.
#[derive(Debug, Clone)]
pub(crate) struct Table {
    /// The grid of each input axis, ascending.
    pub(crate) points: Vec<Vec<f64>>,
    pub(crate) points_unit: Option<Unit>,
    /// The values, C order over the grid.
    pub(crate) values: Vec<f64>,
    pub(crate) values_unit: Option<Unit>,
    pub(crate) nearest: bool,
    pub(crate) bounds_error: bool,
    /// `None`: extrapolate (scipy's `fill_value=None`).
    pub(crate) fill: Option<f64>,
}

/// What a transform does.
#[derive(Debug, Clone)]
pub(crate) enum Kind {
    Compose(Box<Transform>, Box<Transform>),
    Concat(Box<Transform>, Box<Transform>),
    Arith(Op, Box<Transform>, Box<Transform>),
    /// The model with some inputs fixed: (input index, value).
    FixInputs(Box<Transform>, Vec<(usize, f64)>),
    Mapping(Vec<usize>),
    Identity,
    Constant(Q),
    Shift(Q),
    Scale(Q),
    MultiplyScale(Q),
    Linear1d {
        slope: Q,
        intercept: Q,
    },
    Affine {
        m: [f64; 4],
        t: [f64; 2],
        unit: Option<Unit>,
    },
    /// Angle in radians.
    Rotate2d(f64),
    Poly1d {
        c: Vec<f64>,
        map: Option<(f64, f64)>,
    },
    /// `c[i * (d + 1) + j]` multiplies x^i y^j.
    Poly2d {
        degree: usize,
        c: Vec<f64>,
        xmap: Option<(f64, f64)>,
        ymap: Option<(f64, f64)>,
    },
    /// A rotation of the sphere; `wrap`: longitudes below 0 move up by 360 (the sky rotations).
    Euler {
        m: Mat3,
        wrap: bool,
    },
    RotSeq {
        m: Mat3,
        spherical: bool,
    },
    Proj {
        p: Projection,
        pix2sky: bool,
    },
    SphToCart {
        wrap180: bool,
    },
    CartToSph {
        wrap180: bool,
    },
    Tabular(Box<Table>),
}

/// An inverse in the file that could not be read.
#[derive(Debug, Clone)]
pub(crate) struct BadInverse {
    pub(crate) pointer: String,
    pub(crate) message: String,
    /// It holds a transform not evaluated (else it is malformed).
    pub(crate) unsupported: bool,
}

/// An interval of an input: points outside it give NaN.
pub(crate) type Interval = (f64, f64);

/// A transform of the tree: what it does, how many coordinates it takes and gives, the inverse
/// the file gives, its bounding box, and where it is.
#[derive(Debug, Clone)]
pub struct Transform {
    pub(crate) kind: Kind,
    pub(crate) n_in: usize,
    pub(crate) n_out: usize,
    /// The inverse the file gives: read, or why it could not be (said when it is used).
    pub(crate) inverse: Option<Result<Box<Transform>, BadInverse>>,
    /// Per input (in input order): `None` for an ignored input.
    pub(crate) bbox: Option<Vec<Option<Interval>>>,
    pub(crate) pointer: String,
    pub(crate) tag: String,
    /// Whether a parameter of this transform is a quantity; `None` when it has no parameters.
    pub(crate) quantity_params: Option<bool>,
}

fn mul_units(a: Option<Unit>, b: Option<Unit>) -> Option<Unit> {
    match (a, b) {
        (None, None) => None,
        (Some(a), None) => Some(a),
        (None, Some(b)) => Some(b),
        (Some(a), Some(b)) => Some(a.times(&b)),
    }
}

impl Transform {
    /// How many coordinates it takes.
    #[must_use]
    pub fn n_inputs(&self) -> usize {
        self.n_in
    }

    /// How many coordinates it gives.
    #[must_use]
    pub fn n_outputs(&self) -> usize {
        self.n_out
    }

    /// The tag of the transform, as written in the file.
    #[must_use]
    pub fn tag(&self) -> &str {
        &self.tag
    }

    /// The JSON pointer of the transform in its file.
    #[must_use]
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    fn units_err(&self, reason: String) -> Error {
        Error::Units {
            pointer: self.pointer.clone(),
            reason,
        }
    }

    /// astropy's `uses_quantity`: a parameter anywhere is a quantity, or there is no parameter
    /// at all.
    pub(crate) fn uses_quantity(&self) -> bool {
        let mut any_param = false;
        let mut any_quantity = false;
        self.params(&mut any_param, &mut any_quantity);
        !any_param || any_quantity
    }

    fn params(&self, any: &mut bool, quantity: &mut bool) {
        match &self.kind {
            Kind::Compose(a, b) | Kind::Concat(a, b) | Kind::Arith(_, a, b) => {
                a.params(any, quantity);
                b.params(any, quantity);
            }
            Kind::FixInputs(a, _) => a.params(any, quantity),
            _ => {
                if let Some(q) = self.quantity_params {
                    *any = true;
                    *quantity |= q;
                }
            }
        }
    }

    /// Converts `c` to `to` (a quantity of another kind is an error; a plain column is taken as
    /// it is when `allow_plain`).
    fn convert(&self, c: &mut Col, to: Unit, allow_plain: bool, what: &str) -> Result<(), Error> {
        match c.u {
            None => {
                if allow_plain {
                    Ok(())
                } else {
                    Err(self.units_err(format!("{what} is a plain number but must be a quantity")))
                }
            }
            Some(u) => {
                let f = u
                    .factor_to(&to)
                    .ok_or_else(|| self.units_err(format!("{what}: units do not convert to the transform's")))?;
                if f != 1.0 {
                    for v in &mut c.v {
                        *v *= f;
                    }
                }
                c.u = Some(to);
                Ok(())
            }
        }
    }

    /// `c + q` with Quantity arithmetic: the result in `c`'s unit.
    fn add_q(&self, mut c: Col, q: Q) -> Result<Col, Error> {
        let add = match (c.u, q.1) {
            (None, None) => q.0,
            (Some(cu), Some(qu)) => {
                q.0 * qu
                    .factor_to(&cu)
                    .ok_or_else(|| self.units_err("the units of an input and of the offset differ in kind".into()))?
            }
            (Some(cu), None) if cu.is_dimensionless() => q.0 / cu.scale,
            (None, Some(qu)) if qu.is_dimensionless() => {
                let f = qu.scale;
                for v in &mut c.v {
                    *v /= f;
                }
                c.u = Some(qu);
                q.0
            }
            _ => return Err(self.units_err("a quantity and a plain number cannot be added".into())),
        };
        for v in &mut c.v {
            *v += add;
        }
        Ok(c)
    }

    /// Evaluates the transform on columns (each the same length).
    pub(crate) fn eval(&self, mut ins: Vec<Col>) -> Result<Vec<Col>, Error> {
        if ins.len() != self.n_in {
            return Err(Error::Usage(format!(
                "{}: takes {} coordinates, given {}",
                self.pointer,
                self.n_in,
                ins.len()
            )));
        }
        let n = ins.first().map_or(0, |c| c.v.len());
        Ok(match &self.kind {
            Kind::Compose(a, b) => b.eval(a.eval(ins)?)?,
            Kind::Concat(a, b) => {
                let rest = ins.split_off(a.n_in);
                let mut out = a.eval(ins)?;
                out.extend(b.eval(rest)?);
                out
            }
            Kind::Arith(op, a, b) => {
                let l = a.eval(ins.clone())?;
                let r = b.eval(ins)?;
                l.into_iter()
                    .zip(r)
                    .map(|(x, y)| self.arith(*op, x, y))
                    .collect::<Result<_, _>>()?
            }
            Kind::FixInputs(m, fixed) => {
                let mut full = Vec::with_capacity(m.n_in);
                let mut given = ins.into_iter();
                for i in 0..m.n_in {
                    match fixed.iter().find(|(k, _)| *k == i) {
                        Some((_, v)) => full.push(Col::plain(filled(*v, n))),
                        None => full.push(given.next().ok_or_else(|| Error::Usage("too few inputs".into()))?),
                    }
                }
                m.eval(full)?
            }
            Kind::Mapping(map) => map.iter().map(|&i| ins[i].clone()).collect(),
            Kind::Identity => ins,
            Kind::Constant((a, au)) => (0..self.n_out)
                .map(|_| Col {
                    v: filled(*a, n),
                    u: *au,
                })
                .collect(),
            Kind::Shift(q) => vec![self.add_q(one(ins), *q)?],
            Kind::Scale((f, fu)) => {
                let mut c = one(ins);
                if let Some(fu) = fu {
                    self.convert(&mut c, *fu, true, "the input")?;
                }
                for v in &mut c.v {
                    *v *= f;
                }
                vec![c]
            }
            Kind::MultiplyScale((f, fu)) => {
                let mut c = one(ins);
                for v in &mut c.v {
                    *v *= f;
                }
                c.u = mul_units(c.u, *fu);
                vec![c]
            }
            Kind::Linear1d { slope, intercept } => {
                let mut c = one(ins);
                for v in &mut c.v {
                    *v *= slope.0;
                }
                c.u = mul_units(c.u, slope.1);
                vec![self.add_q(c, *intercept)?]
            }
            Kind::Affine { m, t, unit } => {
                // astropy converts quantities to the matrix's unit first; a matrix of plain
                // numbers takes the values as they are.
                if let Some(u) = unit {
                    for c in &mut ins {
                        self.convert(c, *u, true, "an input")?;
                    }
                }
                let y = ins.pop().map(Col::take).unwrap_or_default();
                let x = ins.pop().map(Col::take).unwrap_or_default();
                let mut ox = pool::take(n);
                let mut oy = pool::take(n);
                for (x, y) in x.iter().zip(&y) {
                    ox.push(m[0] * x + m[1] * y + t[0]);
                    oy.push(m[2] * x + m[3] * y + t[1]);
                }
                vec![Col { v: ox, u: *unit }, Col { v: oy, u: *unit }]
            }
            Kind::Rotate2d(a) => {
                let mut y = ins.pop().unwrap_or_else(|| Col::plain(Vec::new()));
                let mut x = ins.pop().unwrap_or_else(|| Col::plain(Vec::new()));
                if let Some(xu) = x.u {
                    self.convert(&mut y, xu, false, "y")?;
                } else if y.u.is_some() {
                    return Err(self.units_err("x is plain and y a quantity".into()));
                }
                let (s, c) = a.sin_cos();
                for (x, y) in x.v.iter_mut().zip(y.v.iter_mut()) {
                    let (a, b) = (*x, *y);
                    *x = a * c - b * s;
                    *y = a * s + b * c;
                }
                vec![x, y]
            }
            Kind::Poly1d { c, map } => {
                let x = one(ins);
                if x.u.is_some() {
                    return Err(self.units_err("a polynomial of plain coefficients given a quantity".into()));
                }
                let t = mapped(x, *map);
                let mut out = pool::take(t.len());
                kernels::poly1d(c, &t, &mut out);
                pool::give(t);
                vec![Col::plain(out)]
            }
            Kind::Poly2d { degree, c, xmap, ymap } => {
                let y = ins.pop().unwrap_or_else(|| Col::plain(Vec::new()));
                let x = ins.pop().unwrap_or_else(|| Col::plain(Vec::new()));
                if x.u.is_some() || y.u.is_some() {
                    return Err(self.units_err("a polynomial of plain coefficients given a quantity".into()));
                }
                let d = *degree;
                let xt = mapped(x, *xmap);
                let yt = mapped(y, *ymap);
                let mut out = pool::take(xt.len());
                kernels::poly2d(c, d, &xt, &yt, &mut out);
                pool::give(xt);
                pool::give(yt);
                vec![Col::plain(out)]
            }
            Kind::Euler { m, wrap } => {
                let (a, b, quantity) = self.degrees_in(ins)?;
                let (mut lon, mut lat) = (pool::take(a.len()), pool::take(a.len()));
                kernels::rotate_sphere(m, *wrap, &a, &b, &mut lon, &mut lat);
                pool::give(a);
                pool::give(b);
                degrees_out(vec![lon, lat], quantity)
            }
            Kind::RotSeq { m, spherical: true } => {
                let (a, b, quantity) = self.degrees_in(ins)?;
                let (mut lon, mut lat) = (pool::take(a.len()), pool::take(a.len()));
                kernels::rotate_sphere(m, false, &a, &b, &mut lon, &mut lat);
                pool::give(a);
                pool::give(b);
                degrees_out(vec![lon, lat], quantity)
            }
            Kind::RotSeq { m, spherical: false } => {
                let mut z = ins.pop().unwrap_or_else(|| Col::plain(Vec::new()));
                let mut y = ins.pop().unwrap_or_else(|| Col::plain(Vec::new()));
                let mut x = ins.pop().unwrap_or_else(|| Col::plain(Vec::new()));
                for ((x, y), z) in x.v.iter_mut().zip(y.v.iter_mut()).zip(z.v.iter_mut()) {
                    [*x, *y, *z] = sky::apply(m, [*x, *y, *z]);
                }
                vec![x, y, z]
            }
            Kind::Proj { p, pix2sky } => {
                let (mut a, mut b, quantity) = self.degrees_in(ins)?;
                for (x, y) in a.iter_mut().zip(b.iter_mut()) {
                    (*x, *y) = if *pix2sky { p.pix2sky(*x, *y) } else { p.sky2pix(*x, *y) };
                }
                degrees_out(vec![a, b], quantity)
            }
            Kind::SphToCart { .. } => {
                let (lon, lat, quantity) = self.degrees_in(ins)?;
                let n = lon.len();
                let (mut x, mut y, mut z) = (pool::take(n), pool::take(n), pool::take(n));
                kernels::sph_to_cart(&lon, &lat, &mut x, &mut y, &mut z);
                pool::give(lon);
                pool::give(lat);
                let u = quantity.then_some(Unit::ONE);
                vec![Col { v: x, u }, Col { v: y, u }, Col { v: z, u }]
            }
            Kind::CartToSph { wrap180 } => {
                let z = ins.pop().unwrap_or_else(|| Col::plain(Vec::new()));
                let y = ins.pop().unwrap_or_else(|| Col::plain(Vec::new()));
                let x = ins.pop().unwrap_or_else(|| Col::plain(Vec::new()));
                let quantity = x.u.is_some();
                let (mut lon, mut lat) = (pool::take(x.v.len()), pool::take(x.v.len()));
                kernels::cart_to_sph(&x.v, &y.v, &z.v, *wrap180, &mut lon, &mut lat);
                degrees_out(vec![lon, lat], quantity)
            }
            Kind::Tabular(t) => vec![self.tabular(t, ins)?],
        })
    }

    /// The two angle inputs in degrees (astropy's `input_units = deg`, plain numbers allowed),
    /// and whether they were quantities.
    fn degrees_in(&self, mut ins: Vec<Col>) -> Result<(Vec<f64>, Vec<f64>, bool), Error> {
        let mut b = ins.pop().unwrap_or_else(|| Col::plain(Vec::new()));
        let mut a = ins.pop().unwrap_or_else(|| Col::plain(Vec::new()));
        let quantity = a.u.is_some() || b.u.is_some();
        self.convert(&mut a, Unit::DEGREE, true, "the first angle")?;
        self.convert(&mut b, Unit::DEGREE, true, "the second angle")?;
        Ok((a.take(), b.take(), quantity))
    }

    fn arith(&self, op: Op, mut x: Col, mut y: Col) -> Result<Col, Error> {
        match op {
            Op::Add | Op::Sub => {
                match (x.u, y.u) {
                    (Some(xu), Some(_)) => self.convert(&mut y, xu, false, "the right operand")?,
                    (None, None) => {}
                    _ => return Err(self.units_err("a quantity and a plain number cannot be added".into())),
                }
                let s = if op == Op::Add { 1.0 } else { -1.0 };
                for (a, b) in x.v.iter_mut().zip(&y.v) {
                    *a += s * b;
                }
                Ok(x)
            }
            Op::Mul => {
                for (a, b) in x.v.iter_mut().zip(&y.v) {
                    *a *= b;
                }
                x.u = mul_units(x.u, y.u);
                Ok(x)
            }
            Op::Div => {
                for (a, b) in x.v.iter_mut().zip(&y.v) {
                    *a /= b;
                }
                x.u = mul_units(x.u, y.u.map(|u| u.recip()));
                Ok(x)
            }
            Op::Pow => {
                if x.u.is_some() || y.u.is_some() {
                    return Err(self.units_err("a power of quantities is not evaluated".into()));
                }
                for (a, b) in x.v.iter_mut().zip(&y.v) {
                    *a = a.powf(*b);
                }
                Ok(x)
            }
        }
    }

    fn tabular(&self, t: &Table, mut ins: Vec<Col>) -> Result<Col, Error> {
        for c in &mut ins {
            // A table of plain points takes a quantity's values as they are (astropy hands the
            // values to scipy).
            if let Some(pu) = t.points_unit {
                self.convert(c, pu, true, "a tabular input")?;
            }
        }
        let n = ins.first().map_or(0, |c| c.v.len());
        let dims: Vec<usize> = t.points.iter().map(Vec::len).collect();
        let mut out = pool::take(n);
        let mut idx = vec![0usize; dims.len()];
        let mut frac = vec![0.0f64; dims.len()];
        'points: for k in 0..n {
            let mut outside = false;
            for (d, grid) in t.points.iter().enumerate() {
                let x = ins[d].v[k];
                if x.is_nan() {
                    out.push(f64::NAN);
                    continue 'points;
                }
                let (lo, hi) = (grid[0], grid[grid.len() - 1]);
                if x < lo || x > hi {
                    if t.bounds_error {
                        return Err(Error::OutOfTable {
                            pointer: self.pointer.clone(),
                            value: x,
                        });
                    }
                    outside = true;
                }
                // scipy's search: the cell below, clamped to the grid's cells.
                let mut i = grid.partition_point(|g| *g < x).saturating_sub(1);
                if grid.len() >= 2 && i > grid.len() - 2 {
                    i = grid.len() - 2;
                }
                idx[d] = i;
                frac[d] = if grid.len() >= 2 {
                    (x - grid[i]) / (grid[i + 1] - grid[i])
                } else {
                    0.0
                };
            }
            if outside && let Some(f) = t.fill {
                out.push(f);
                continue;
            }
            let value = if t.nearest {
                let mut flat = 0;
                for (d, n) in dims.iter().enumerate() {
                    let i = if frac[d] <= 0.5 { idx[d] } else { idx[d] + 1 };
                    flat = flat * n + i.min(n - 1);
                }
                t.values[flat]
            } else {
                // The weighted sum over the cell's corners.
                let mut sum = 0.0;
                for corner in 0..(1usize << dims.len()) {
                    let mut w = 1.0;
                    let mut flat = 0;
                    for (d, n) in dims.iter().enumerate() {
                        let up = corner >> (dims.len() - 1 - d) & 1 == 1;
                        let i = if up { (idx[d] + 1).min(n - 1) } else { idx[d] };
                        w *= if up { frac[d] } else { 1.0 - frac[d] };
                        flat = flat * n + i;
                    }
                    sum += t.values[flat] * w;
                }
                sum
            };
            out.push(value);
        }
        Ok(Col {
            v: out,
            u: t.values_unit,
        })
    }

    /// The inverse: the one the file gives, else the analytic one.
    ///
    /// # Errors
    /// [`Error::NoInverse`] when there is none.
    pub fn inverse(&self) -> Result<Transform, Error> {
        match &self.inverse {
            Some(Ok(i)) => return Ok((**i).clone()),
            Some(Err(bad)) if bad.unsupported => {
                return Err(Error::Unsupported {
                    pointer: bad.pointer.clone(),
                    what: format!("the inverse the file gives ({})", bad.message),
                });
            }
            Some(Err(bad)) => {
                return Err(Error::Malformed {
                    pointer: bad.pointer.clone(),
                    reason: format!("the inverse the file gives cannot be used: {}", bad.message),
                });
            }
            None => {}
        }
        let none = |hint| Error::NoInverse {
            pointer: self.pointer.clone(),
            what: self.tag.clone(),
            hint,
        };
        let kind = match &self.kind {
            Kind::Compose(a, b) => {
                let (bi, ai) = (b.inverse()?, a.inverse()?);
                if bi.n_out != ai.n_in || bi.n_in != self.n_out || ai.n_out != self.n_in {
                    return Err(Error::Malformed {
                        pointer: self.pointer.clone(),
                        reason: "the inverses of the two transforms do not compose".into(),
                    });
                }
                Kind::Compose(Box::new(bi), Box::new(ai))
            }
            Kind::Concat(a, b) => {
                let (ai, bi) = (a.inverse()?, b.inverse()?);
                if ai.n_in != a.n_out || bi.n_in != b.n_out {
                    return Err(Error::Malformed {
                        pointer: self.pointer.clone(),
                        reason: "an inverse does not take its transform's outputs".into(),
                    });
                }
                Kind::Concat(Box::new(ai), Box::new(bi))
            }
            Kind::Arith(..) | Kind::FixInputs(..) | Kind::Constant(_) | Kind::Poly1d { .. } | Kind::Poly2d { .. } => {
                return Err(none(" (astropy has no analytic inverse of it either)"));
            }
            Kind::Mapping(map) => {
                let mut inv = Vec::with_capacity(self.n_in);
                for i in 0..self.n_in {
                    inv.push(
                        map.iter()
                            .position(|&m| m == i)
                            .ok_or_else(|| none(" (the mapping drops an input)"))?,
                    );
                }
                return Ok(Transform {
                    kind: Kind::Mapping(inv),
                    n_in: self.n_out,
                    n_out: self.n_in,
                    ..self.bare()
                });
            }
            Kind::Identity => Kind::Identity,
            Kind::Shift((o, u)) => Kind::Shift((-o, *u)),
            Kind::Scale((f, u)) => Kind::Scale((1.0 / f, *u)),
            Kind::MultiplyScale((f, u)) => Kind::MultiplyScale((1.0 / f, u.map(|u| u.recip()))),
            Kind::Linear1d { slope, intercept } => Kind::Linear1d {
                slope: (1.0 / slope.0, slope.1.map(|u| u.recip())),
                intercept: (
                    -intercept.0 / slope.0,
                    mul_units(intercept.1, slope.1.map(|u| u.recip())),
                ),
            },
            Kind::Affine { m, t, unit } => {
                let det = m[0] * m[3] - m[1] * m[2];
                if det == 0.0 {
                    return Err(none(" (its matrix is singular)"));
                }
                let inv = [m[3] / det, -m[1] / det, -m[2] / det, m[0] / det];
                let t2 = [-(inv[0] * t[0] + inv[1] * t[1]), -(inv[2] * t[0] + inv[3] * t[1])];
                Kind::Affine {
                    m: inv,
                    t: t2,
                    unit: *unit,
                }
            }
            Kind::Rotate2d(a) => Kind::Rotate2d(-a),
            Kind::Euler { m, wrap } => Kind::Euler {
                m: sky::transpose(m),
                wrap: *wrap,
            },
            Kind::RotSeq { m, spherical } => Kind::RotSeq {
                m: sky::transpose(m),
                spherical: *spherical,
            },
            Kind::Proj { p, pix2sky } => Kind::Proj {
                p: *p,
                pix2sky: !pix2sky,
            },
            Kind::SphToCart { wrap180 } => Kind::CartToSph { wrap180: *wrap180 },
            Kind::CartToSph { wrap180 } => Kind::SphToCart { wrap180: *wrap180 },
            Kind::Tabular(t) => {
                if t.points.len() != 1 {
                    return Err(none(" (only a 1-D table is inverted)"));
                }
                let lt = &t.values;
                let up = lt.windows(2).all(|w| w[1] > w[0]);
                let down = lt.windows(2).all(|w| w[1] < w[0]);
                if !(up || down) {
                    return Err(none(" (its table is not monotonic)"));
                }
                let (mut p, mut v) = (lt.clone(), t.points[0].clone());
                if down {
                    p.reverse();
                    v.reverse();
                }
                Kind::Tabular(Box::new(Table {
                    points: vec![p],
                    points_unit: t.values_unit,
                    values: v,
                    values_unit: t.points_unit,
                    nearest: t.nearest,
                    bounds_error: t.bounds_error,
                    fill: t.fill,
                }))
            }
        };
        Ok(Transform {
            kind,
            n_in: self.n_out,
            n_out: self.n_in,
            ..self.bare()
        })
    }

    fn bare(&self) -> Transform {
        Transform {
            kind: Kind::Identity,
            n_in: self.n_in,
            n_out: self.n_out,
            inverse: None,
            bbox: None,
            pointer: self.pointer.clone(),
            tag: self.tag.clone(),
            quantity_params: self.quantity_params,
        }
    }
}

/// The values mapped from a polynomial's domain to its window (`off + scl x`, as astropy's
/// `poly_map_domain`; nothing to do for the identity, whose result is `x` exactly).
fn mapped(c: Col, map: Option<(f64, f64)>) -> Vec<f64> {
    match map {
        Some((off, scl)) if off != 0.0 || scl != 1.0 => {
            let mut v = c.take();
            for x in &mut v {
                *x = off + scl * *x;
            }
            v
        }
        _ => c.take(),
    }
}

fn filled(x: f64, n: usize) -> Vec<f64> {
    let mut v = pool::take(n);
    v.resize(n, x);
    v
}

fn one(mut ins: Vec<Col>) -> Col {
    ins.pop().unwrap_or_else(|| Col::plain(Vec::new()))
}

fn degrees_out(cols: Vec<Vec<f64>>, quantity: bool) -> Vec<Col> {
    cols.into_iter()
        .map(|v| Col {
            v,
            u: quantity.then_some(Unit::DEGREE),
        })
        .collect()
}
