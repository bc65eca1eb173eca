//! The loops over many points that take most of an evaluation's time (polynomials, the
//! spherical rotations and conversions, the bounding box), compiled as well for the wider
//! vectors of x86-64 processors that have them (AVX-512 or AVX2, chosen at run time by the
//! `multiversion` crate). Every path does the same operations in the same order, and Rust
//! never fuses a multiply and an add, so the values are the same to the bit whichever runs.
//!
//! The trigonometry here is the branch-free part of [`crate::trig`] (so that the loops
//! vectorise); the points it does not cover (huge angles, infinities, NaN, a zero vector) are
//! found by a pass of comparisons first and computed again with the checked functions.

use multiversion::multiversion;

use crate::sky::{self, Mat3};
use crate::trig;

/// Points evaluated side by side in the polynomial loops (in registers: 8 lanes of f64 are one
/// AVX-512 register, two of AVX2, four of SSE2).
const LANES: usize = 8;

/// The largest radian argument the fast sine and cosine reduce exactly (as `trig::sin_cos`).
const TRIG_LIMIT: f64 = 1.0e6;

/// `N` values of a slice of at least `N`.
#[inline(always)]
fn lanes<const N: usize>(s: &[f64]) -> [f64; N] {
    std::array::from_fn(|l| s[l])
}

/// A 1-D polynomial (`c[k]` the coefficient of `t^k`) by Horner's rule at `N` points.
#[inline(always)]
fn poly1d_at<const N: usize>(c: &[f64], t: [f64; N]) -> [f64; N] {
    // (From the top coefficient, not from 0 × t: an infinite t gives an infinity, as
    // astropy's, not 0 × inf = NaN.)
    let Some((top, rest)) = c.split_last() else {
        return [0.0; N];
    };
    let mut o = [*top; N];
    for &k in rest.iter().rev() {
        for l in 0..N {
            o[l] = o[l] * t[l] + k;
        }
    }
    o
}

/// A 1-D polynomial at every `t`, into `out` (cleared first).
#[multiversion(targets("x86_64+avx512f+avx512dq+avx512vl", "x86_64+avx2+fma"))]
pub(crate) fn poly1d(c: &[f64], t: &[f64], out: &mut Vec<f64>) {
    out.clear();
    let mut blocks = t.chunks_exact(LANES);
    for b in &mut blocks {
        out.extend(poly1d_at::<LANES>(c, lanes(b)));
    }
    for &v in blocks.remainder() {
        out.extend(poly1d_at::<1>(c, [v]));
    }
}

/// A 2-D polynomial of degree `d` (row `i` of `c`: the coefficients of `x^i y^j`, `j` from 0
/// to `d - i`, rows of `d + 1` entries) at `N` points: Horner in `x` over rows that are each
/// Horner in `y`.
#[inline(always)]
fn poly2d_at<const N: usize>(c: &[f64], d: usize, x: [f64; N], y: [f64; N]) -> [f64; N] {
    let row_at = |i: usize| -> [f64; N] {
        let row = c.get(i * (d + 1)..i * (d + 1) + (d + 1 - i)).unwrap_or(&[]);
        let (last, rest) = row.split_last().unwrap_or((&0.0, &[]));
        let mut inner = [*last; N];
        for &k in rest.iter().rev() {
            for l in 0..N {
                inner[l] = inner[l] * y[l] + k;
            }
        }
        inner
    };
    // (From the top row, not from 0 × x: see `poly1d_at`.)
    let mut o = row_at(d);
    for i in (0..d).rev() {
        let inner = row_at(i);
        for l in 0..N {
            o[l] = o[l] * x[l] + inner[l];
        }
    }
    o
}

/// A 2-D polynomial at every point, into `out` (cleared first).
#[multiversion(targets("x86_64+avx512f+avx512dq+avx512vl", "x86_64+avx2+fma"))]
pub(crate) fn poly2d(c: &[f64], d: usize, x: &[f64], y: &[f64], out: &mut Vec<f64>) {
    out.clear();
    let n = x.len().min(y.len());
    let (x, y) = (&x[..n], &y[..n]);
    let mut xb = x.chunks_exact(LANES);
    let mut yb = y.chunks_exact(LANES);
    for (xs, ys) in (&mut xb).zip(&mut yb) {
        out.extend(poly2d_at::<LANES>(c, d, lanes(xs), lanes(ys)));
    }
    for (&xv, &yv) in xb.remainder().iter().zip(yb.remainder()) {
        out.extend(poly2d_at::<1>(c, d, [xv], [yv]));
    }
}

/// Whether every angle of `v` (degrees) is one the fast sine and cosine take.
#[inline(always)]
fn trig_ok(v: &[f64]) -> bool {
    v.iter().fold(true, |ok, x| ok & (x.to_radians().abs() < TRIG_LIMIT))
}

/// Whether every vector `(x, y, z)` is one whose longitude and latitude the fast arctangent
/// gives: finite, not so large that `x^2 + y^2` overflows, and not on the `z` axis.
#[inline(always)]
fn atan_ok(x: &[f64], y: &[f64], z: &[f64]) -> bool {
    x.iter().zip(y).zip(z).fold(true, |ok, ((x, y), z)| {
        ok & (x.abs() < 1e150) & (y.abs() < 1e150) & (z.abs() < 1e150) & ((*x != 0.0) | (*y != 0.0))
    })
}

/// gwcs's `spherical_to_cartesian`: longitudes and latitudes (degrees) into unit vectors
/// `(x, y, z)` (the outputs cleared first).
#[multiversion(targets("x86_64+avx512f+avx512dq+avx512vl", "x86_64+avx2+fma"))]
pub(crate) fn sph_to_cart(lon: &[f64], lat: &[f64], x: &mut Vec<f64>, y: &mut Vec<f64>, z: &mut Vec<f64>) {
    let n = lon.len().min(lat.len());
    let (lon, lat) = (&lon[..n], &lat[..n]);
    x.clear();
    y.clear();
    z.clear();
    x.resize(n, 0.0);
    y.resize(n, 0.0);
    z.resize(n, 0.0);
    // (Two loops, not one with a branch inside: the compiler would make that branch a select
    // and call libm for every point.)
    if trig_ok(lon) & trig_ok(lat) {
        for k in 0..n {
            let ((sl, cl), (sb, cb)) = (
                trig::sin_cos_fast(lon[k].to_radians()),
                trig::sin_cos_fast(lat[k].to_radians()),
            );
            (x[k], y[k], z[k]) = (cb * cl, cb * sl, sb);
        }
    } else {
        for k in 0..n {
            let ((sl, cl), (sb, cb)) = (trig::sin_cos(lon[k].to_radians()), trig::sin_cos(lat[k].to_radians()));
            (x[k], y[k], z[k]) = (cb * cl, cb * sl, sb);
        }
    }
}

/// One vector to its longitude and latitude (degrees), as gwcs's `cartesian_to_spherical`;
/// `FAST` for a vector [`atan_ok`] takes.
#[inline(always)]
fn cart_to_sph_one<const FAST: bool>(x: f64, y: f64, z: f64, wrap180: bool) -> (f64, f64) {
    let h = (x * x + y * y).sqrt();
    let (b, l) = if FAST {
        (trig::atan2_fast(z, h), trig::atan2_fast(y, x))
    } else {
        (trig::atan2(z, h), trig::atan2(y, x))
    };
    let b = b.to_degrees();
    let mut l = l.to_degrees();
    if h == 0.0 {
        l *= 0.0;
    }
    if !wrap180 && l.is_finite() {
        // numpy's mod by 360 (the longitude is in [-180, 180] here).
        l = if l < 0.0 {
            l + 360.0
        } else if l == 0.0 {
            0.0
        } else {
            l
        };
    }
    (l, b)
}

/// gwcs's `cartesian_to_spherical`: vectors into longitudes (in [0, 360), or (-180, 180] with
/// `wrap180`) and latitudes, degrees (the outputs cleared first).
#[multiversion(targets("x86_64+avx512f+avx512dq+avx512vl", "x86_64+avx2+fma"))]
pub(crate) fn cart_to_sph(x: &[f64], y: &[f64], z: &[f64], wrap180: bool, lon: &mut Vec<f64>, lat: &mut Vec<f64>) {
    let n = x.len().min(y.len()).min(z.len());
    let (x, y, z) = (&x[..n], &y[..n], &z[..n]);
    lon.clear();
    lat.clear();
    lon.resize(n, 0.0);
    lat.resize(n, 0.0);
    if atan_ok(x, y, z) {
        for k in 0..n {
            (lon[k], lat[k]) = cart_to_sph_one::<true>(x[k], y[k], z[k], wrap180);
        }
    } else {
        for k in 0..n {
            (lon[k], lat[k]) = cart_to_sph_one::<false>(x[k], y[k], z[k], wrap180);
        }
    }
}

/// A rotation of the sphere by `m` (the rotations native <-> celestial and astropy's spherical
/// rotation sequences): longitudes and latitudes in degrees into `olon` and `olat` (cleared
/// first); longitudes in (-180, 180], or [0, 360) with `wrap`.
#[multiversion(targets("x86_64+avx512f+avx512dq+avx512vl", "x86_64+avx2+fma"))]
pub(crate) fn rotate_sphere(m: &Mat3, wrap: bool, lon: &[f64], lat: &[f64], olon: &mut Vec<f64>, olat: &mut Vec<f64>) {
    let n = lon.len().min(lat.len());
    let (lon, lat) = (&lon[..n], &lat[..n]);
    olon.clear();
    olat.clear();
    olon.resize(n, 0.0);
    olat.resize(n, 0.0);
    let fast = trig_ok(lon) & trig_ok(lat);
    // A rotated vector on the z axis, exactly, is the fast arctangent's one case to avoid.
    let mut slow = !fast;
    if fast {
        for k in 0..n {
            let v = sky::apply(m, sky::to_cartesian_fast(lon[k], lat[k]));
            slow |= (v[0] == 0.0) & (v[1] == 0.0);
            let (mut p, t) = sky::to_spherical_fast(v);
            if wrap && p < 0.0 {
                p += 360.0;
            }
            olon[k] = p;
            olat[k] = t;
        }
    }
    if slow {
        for k in 0..n {
            let (mut p, t) = sky::to_spherical(sky::apply(m, sky::to_cartesian(lon[k], lat[k])));
            if wrap && p < 0.0 {
                p += 360.0;
            }
            olon[k] = p;
            olat[k] = t;
        }
    }
}

/// Points in the box, one axis at a time: `inside[k]` is cleared where `v[k]` is outside
/// `[lo, hi]` (NaN is inside, as astropy has it).
#[multiversion(targets("x86_64+avx512f+avx512dq+avx512vl", "x86_64+avx2+fma"))]
pub(crate) fn clip(v: &[f64], lo: f64, hi: f64, inside: &mut [bool]) {
    for (k, v) in inside.iter_mut().zip(v) {
        *k &= !(*v < lo || *v > hi);
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Angles (degrees) of every kind: ordinary, huge, infinite, NaN, zeros of both signs.
    fn angle() -> impl Strategy<Value = f64> {
        prop_oneof![
            8 => -720.0f64..720.0,
            1 => prop_oneof![
                Just(f64::NAN),
                Just(f64::INFINITY),
                Just(-0.0),
                Just(0.0),
                Just(90.0),
                Just(-90.0),
                Just(1.0e12),
                -1.0e300f64..1.0e300,
            ],
        ]
    }

    fn bits(v: &[f64]) -> Vec<u64> {
        // NaNs compared as NaN (their payloads may differ between paths).
        v.iter()
            .map(|x| if x.is_nan() { u64::MAX } else { x.to_bits() })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        /// The vectorised loops give, to the bit, what the checked point-by-point functions
        /// give, whichever points a block holds (one odd point sends a block to the slow path).
        #[test]
        fn the_loops_equal_the_point_by_point_functions(
            lon in proptest::collection::vec(angle(), 0..40),
            lat in proptest::collection::vec(angle(), 0..40),
            z in proptest::collection::vec(angle(), 0..40),
            angles in proptest::collection::vec(-400.0f64..400.0, 3),
        ) {
            let n = lon.len().min(lat.len()).min(z.len());
            let (lon, lat, z) = (&lon[..n], &lat[..n], &z[..n]);
            let (mut x, mut y, mut zz) = (Vec::new(), Vec::new(), Vec::new());
            sph_to_cart(lon, lat, &mut x, &mut y, &mut zz);
            for k in 0..n {
                let v = sky::to_cartesian(lon[k], lat[k]);
                prop_assert_eq!(bits(&[x[k], y[k], zz[k]]), bits(&v));
            }
            let (mut l, mut b) = (Vec::new(), Vec::new());
            for wrap180 in [false, true] {
                cart_to_sph(lon, lat, z, wrap180, &mut l, &mut b);
                for k in 0..n {
                    let one = cart_to_sph_one::<false>(lon[k], lat[k], z[k], wrap180);
                    prop_assert_eq!(bits(&[l[k], b[k]]), bits(&[one.0, one.1]));
                }
            }
            let m = sky::sequence(&angles, b"zyx");
            for wrap in [false, true] {
                rotate_sphere(&m, wrap, lon, lat, &mut l, &mut b);
                for k in 0..n {
                    let (mut p, t) = sky::to_spherical(sky::apply(&m, sky::to_cartesian(lon[k], lat[k])));
                    if wrap && p < 0.0 {
                        p += 360.0;
                    }
                    prop_assert_eq!(bits(&[l[k], b[k]]), bits(&[p, t]));
                }
            }
        }

        /// The polynomials in blocks of lanes equal Horner's rule point by point.
        #[test]
        fn the_polynomials_equal_horner(
            d in 0usize..6,
            c in proptest::collection::vec(-10.0f64..10.0, 36),
            x in proptest::collection::vec(-2.0f64..2.0, 0..30),
            y in proptest::collection::vec(-2.0f64..2.0, 0..30),
        ) {
            let n = x.len().min(y.len());
            let mut out = Vec::new();
            poly2d(&c, d, &x[..n], &y[..n], &mut out);
            prop_assert_eq!(out.len(), n);
            for k in 0..n {
                let row = |i: usize| {
                    let row = &c[i * (d + 1)..i * (d + 1) + (d + 1 - i)];
                    let mut inner = row[row.len() - 1];
                    for &k2 in row[..row.len() - 1].iter().rev() {
                        inner = inner * y[k] + k2;
                    }
                    inner
                };
                let mut o = row(d);
                for i in (0..d).rev() {
                    o = o * x[k] + row(i);
                }
                prop_assert_eq!(out[k].to_bits(), o.to_bits());
            }
            poly1d(&c[..=d], &x, &mut out);
            for (k, xv) in x.iter().enumerate() {
                let o = c[..d].iter().rev().fold(c[d], |o, k2| o * xv + k2);
                prop_assert_eq!(out[k].to_bits(), o.to_bits());
            }
        }
    }
}
