//! The sky's arithmetic: rotations of the sphere (astropy's conventions: a rotation matrix turns
//! the frame, `R_z(a) = [[c, s, 0], [-s, c, 0], [0, 0, 1]]`, and a sequence multiplies the last
//! on the left) and the map projections of the FITS WCS papers (Calabretta & Greisen 2002, as
//! wcslib computes them for astropy), all in degrees.

use crate::trig;

/// A 3 × 3 matrix, rows first.
pub(crate) type Mat3 = [[f64; 3]; 3];

/// The rotation by `angle` (radians) about `axis` (`x`, `y` or `z`), astropy's
/// `rotation_matrix(angle, axis, unit=rad)`.
pub(crate) fn axis_rotation(angle: f64, axis: u8) -> Mat3 {
    let (s, c) = angle.sin_cos();
    let i = match axis {
        b'x' => 0,
        b'y' => 1,
        _ => 2,
    };
    let a1 = (i + 1) % 3;
    let a2 = (i + 2) % 3;
    let mut r = [[0.0; 3]; 3];
    r[i][i] = 1.0;
    r[a1][a1] = c;
    r[a1][a2] = s;
    r[a2][a1] = -s;
    r[a2][a2] = c;
    r
}

fn matmul(a: &Mat3, b: &Mat3) -> Mat3 {
    let mut r = [[0.0; 3]; 3];
    for (i, row) in r.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            *v = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
        }
    }
    r
}

/// The matrix of a sequence of rotations (angles in radians, one axis letter each): the
/// product `M_n ... M_2 M_1`.
pub(crate) fn sequence(angles: &[f64], axes: &[u8]) -> Mat3 {
    let mut m = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    for (a, ax) in angles.iter().zip(axes) {
        m = matmul(&axis_rotation(*a, *ax), &m);
    }
    m
}

/// The transpose (the inverse of a rotation).
pub(crate) fn transpose(m: &Mat3) -> Mat3 {
    let mut r = [[0.0; 3]; 3];
    for (i, row) in m.iter().enumerate() {
        for (j, v) in row.iter().enumerate() {
            r[j][i] = *v;
        }
    }
    r
}

/// `m · v`.
#[inline]
pub(crate) fn apply(m: &Mat3, v: [f64; 3]) -> [f64; 3] {
    [
        m[0][0] * v[0] + m[0][1] * v[1] + m[0][2] * v[2],
        m[1][0] * v[0] + m[1][1] * v[1] + m[1][2] * v[2],
        m[2][0] * v[0] + m[2][1] * v[1] + m[2][2] * v[2],
    ]
}

/// Longitude and latitude (degrees) to the unit vector.
#[inline]
pub(crate) fn to_cartesian(lon: f64, lat: f64) -> [f64; 3] {
    let (sa, ca) = trig::sin_cos(lon.to_radians());
    let (sd, cd) = trig::sin_cos(lat.to_radians());
    [ca * cd, cd * sa, sd]
}

/// [`to_cartesian`] for angles under 1e6 radians (no branch).
#[inline(always)]
pub(crate) fn to_cartesian_fast(lon: f64, lat: f64) -> [f64; 3] {
    let (sa, ca) = trig::sin_cos_fast(lon.to_radians());
    let (sd, cd) = trig::sin_cos_fast(lat.to_radians());
    [ca * cd, cd * sa, sd]
}

/// [`to_spherical`] for a finite vector off the z axis (no branch).
#[inline(always)]
pub(crate) fn to_spherical_fast(v: [f64; 3]) -> (f64, f64) {
    let h = (v[0] * v[0] + v[1] * v[1]).sqrt();
    (
        trig::atan2_fast(v[1], v[0]).to_degrees(),
        trig::atan2_fast(v[2], h).to_degrees(),
    )
}

/// A vector to longitude (in (-180, 180]) and latitude, degrees.
#[inline]
pub(crate) fn to_spherical(v: [f64; 3]) -> (f64, f64) {
    let h = (v[0] * v[0] + v[1] * v[1]).sqrt();
    (trig::atan2(v[1], v[0]).to_degrees(), trig::atan2(v[2], h).to_degrees())
}

/// The projections evaluated (the others of astropy are refused by name).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Projection {
    /// TAN, gnomonic.
    Tan,
    /// SIN, orthographic (the slant form, with obliqueness, is refused).
    Sin,
    /// ARC, zenithal equidistant.
    Arc,
    /// STG, stereographic.
    Stg,
    /// ZEA, zenithal equal area.
    Zea,
    /// CAR, plate carrée (astropy evaluates it as the identity).
    Car,
    /// MER, Mercator.
    Mer,
    /// CEA, cylindrical equal area, with `lambda`.
    Cea { lambda: f64 },
    /// SFL, Sanson-Flamsteed.
    Sfl,
    /// AIT, Hammer-Aitoff.
    Ait,
}

/// The radius of the generating sphere, for degrees (wcslib's `R2D`).
const R0: f64 = 180.0 / std::f64::consts::PI;
/// wcslib's tolerance on the edges of a projection's domain.
const TOL: f64 = 1.0e-13;

#[inline]
fn sind(x: f64) -> f64 {
    x.to_radians().sin()
}
#[inline]
fn cosd(x: f64) -> f64 {
    x.to_radians().cos()
}
#[inline]
fn atan2d(y: f64, x: f64) -> f64 {
    y.atan2(x).to_degrees()
}
#[inline]
fn asind(x: f64) -> f64 {
    x.asin().to_degrees()
}
#[inline]
fn acosd(x: f64) -> f64 {
    x.acos().to_degrees()
}

/// wcslib's check of native coordinates from a deprojection: within a tolerance of the
/// domain they are moved onto it, beyond it the point is invalid.
fn bound(phi: f64, theta: f64) -> (f64, f64) {
    let mut p = phi;
    let mut t = theta;
    if p < -180.0 {
        if p < -180.0 - TOL {
            return (f64::NAN, f64::NAN);
        }
        p = -180.0;
    } else if p > 180.0 {
        if p > 180.0 + TOL {
            return (f64::NAN, f64::NAN);
        }
        p = 180.0;
    }
    if t < -90.0 {
        if t < -90.0 - TOL {
            return (f64::NAN, f64::NAN);
        }
        t = -90.0;
    } else if t > 90.0 {
        if t > 90.0 + TOL {
            return (f64::NAN, f64::NAN);
        }
        t = 90.0;
    }
    (p, t)
}

/// The azimuth of a zenithal projection's plane point (0 at the centre).
#[inline]
fn zenithal_phi(x: f64, y: f64, r: f64) -> f64 {
    if r == 0.0 { 0.0 } else { atan2d(x, -y) }
}

impl Projection {
    /// Projection plane (x, y) to native spherical (phi, theta), degrees; NaN where the point
    /// has no deprojection.
    pub(crate) fn pix2sky(&self, x: f64, y: f64) -> (f64, f64) {
        if x.is_nan() || y.is_nan() {
            return (f64::NAN, f64::NAN);
        }
        match *self {
            Projection::Tan => {
                let r = x.hypot(y);
                bound(zenithal_phi(x, y, r), atan2d(R0, r))
            }
            Projection::Arc => {
                let r = x.hypot(y);
                bound(zenithal_phi(x, y, r), 90.0 - r)
            }
            Projection::Stg => {
                let r = x.hypot(y);
                bound(zenithal_phi(x, y, r), 90.0 - 2.0 * (r / (2.0 * R0)).atan().to_degrees())
            }
            Projection::Zea => {
                let r = x.hypot(y);
                let mut s = r / (2.0 * R0);
                if s.abs() > 1.0 {
                    if (s.abs() - 1.0) > TOL {
                        return (f64::NAN, f64::NAN);
                    }
                    s = s.signum();
                }
                bound(zenithal_phi(x, y, r), 90.0 - 2.0 * asind(s))
            }
            Projection::Sin => sin_x2s(x, y),
            Projection::Car => (x, y),
            Projection::Mer => bound(x, 2.0 * (y / R0).exp().atan().to_degrees() - 90.0),
            Projection::Cea { lambda } => {
                let mut s = y * lambda / R0;
                if s.abs() > 1.0 {
                    if s.abs() > 1.0 + TOL {
                        return (f64::NAN, f64::NAN);
                    }
                    s = s.signum();
                }
                bound(x, asind(s))
            }
            Projection::Sfl => {
                let c = cosd(y);
                let phi = if c == 0.0 { 0.0 } else { x / c };
                bound(phi, y)
            }
            Projection::Ait => ait_x2s(x, y),
        }
    }

    /// Native spherical (phi, theta) to the projection plane, degrees; NaN where the point
    /// has no projection.
    pub(crate) fn sky2pix(&self, phi: f64, theta: f64) -> (f64, f64) {
        if phi.is_nan() || theta.is_nan() {
            return (f64::NAN, f64::NAN);
        }
        let plane = |r: f64| (r * sind(phi), -r * cosd(phi));
        match *self {
            Projection::Tan => {
                let s = sind(theta);
                if s <= 0.0 {
                    return (f64::NAN, f64::NAN);
                }
                plane(R0 * cosd(theta) / s)
            }
            Projection::Arc => plane(90.0 - theta),
            Projection::Stg => {
                let s = 1.0 + sind(theta);
                if s == 0.0 {
                    return (f64::NAN, f64::NAN);
                }
                plane(2.0 * R0 * cosd(theta) / s)
            }
            Projection::Zea => plane(2.0 * R0 * sind((90.0 - theta) / 2.0)),
            Projection::Sin => {
                if theta < 0.0 {
                    return (f64::NAN, f64::NAN);
                }
                plane(R0 * cosd(theta))
            }
            Projection::Car => (phi, theta),
            Projection::Mer => {
                if theta <= -90.0 || theta >= 90.0 {
                    return (f64::NAN, f64::NAN);
                }
                (phi, R0 * ((90.0 + theta) / 2.0).to_radians().tan().ln())
            }
            Projection::Cea { lambda } => (phi, R0 * sind(theta) / lambda),
            Projection::Sfl => (phi * cosd(theta), theta),
            Projection::Ait => {
                let ct = cosd(theta);
                let w = (2.0 / (1.0 + ct * cosd(phi / 2.0))).sqrt() * R0;
                (2.0 * w * ct * sind(phi / 2.0), w * sind(theta))
            }
        }
    }
}

fn sin_x2s(x: f64, y: f64) -> (f64, f64) {
    let x0 = x / R0;
    let y0 = y / R0;
    let r2 = x0 * x0 + y0 * y0;
    let theta = if r2 < 0.5 {
        acosd(r2.sqrt())
    } else if r2 <= 1.0 {
        asind((1.0 - r2).sqrt())
    } else if r2 <= 1.0 + TOL {
        0.0
    } else {
        return (f64::NAN, f64::NAN);
    };
    let phi = if r2 == 0.0 { 0.0 } else { atan2d(x0, -y0) };
    bound(phi, theta)
}

fn ait_x2s(x: f64, y: f64) -> (f64, f64) {
    let w0 = 2.0 * R0 * R0;
    let w1 = 1.0 / (2.0 * w0);
    let w2 = w1 / 4.0;
    let w3 = 1.0 / (2.0 * R0);
    let mut u = 1.0 - x * x * w2 - y * y * w1;
    if u < 0.5 {
        if u < 0.5 - TOL {
            return (f64::NAN, f64::NAN);
        }
        u = 0.5;
    }
    let z = u.sqrt();
    let mut s = z * y / R0;
    if s.abs() > 1.0 {
        if s.abs() > 1.0 + TOL {
            return (f64::NAN, f64::NAN);
        }
        s = s.signum();
    }
    let xp = 2.0 * z * z - 1.0;
    let yp = z * x * w3;
    let phi = if xp == 0.0 && yp == 0.0 {
        0.0
    } else {
        2.0 * atan2d(yp, xp)
    };
    bound(phi, asind(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projections_round_trip() {
        let ps = [
            Projection::Tan,
            Projection::Arc,
            Projection::Stg,
            Projection::Zea,
            Projection::Sin,
            Projection::Car,
            Projection::Mer,
            Projection::Cea { lambda: 1.0 },
            Projection::Sfl,
            Projection::Ait,
        ];
        for p in ps {
            for (phi, theta) in [(10.0, 80.0), (-120.0, 45.0), (170.0, 60.0), (0.0, 89.0)] {
                let (x, y) = p.sky2pix(phi, theta);
                let (a, b) = p.pix2sky(x, y);
                assert!(
                    (a - phi).abs() < 1e-9 && (b - theta).abs() < 1e-9,
                    "{p:?} {phi} {theta} -> {x} {y} -> {a} {b}"
                );
            }
        }
    }

    #[test]
    fn a_rotation_and_its_transpose_undo_each_other() {
        let m = sequence(&[0.3, -1.2, 2.0], b"zxz");
        let v = apply(&transpose(&m), apply(&m, to_cartesian(33.0, -12.0)));
        let (lon, lat) = to_spherical(v);
        assert!((lon - 33.0).abs() < 1e-12 && (lat + 12.0).abs() < 1e-12);
    }
}
