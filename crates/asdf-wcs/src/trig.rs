//! Sine, cosine and arctangent for the evaluation of many points, written here rather than
//! taken from the platform's libm: glibc's `sin`, `cos` and `atan2` (correctly rounded, with
//! slow paths) were a third of the time of a 16-million point grid through NIRCam's WCS. These
//! are accurate to a few units in the last place (Taylor series on a reduced argument, whose
//! truncation error is below 1e-19), far inside the 1e-9 degrees (2e-11 radians) the WCS suite
//! holds us to against gwcs, and several times faster. Arguments they do not reduce well
//! (beyond ±1e6 radians, infinities, NaN; a zero vector for `atan2`) go to libm.

/// pi/2 in three parts: the first two of 33 significant bits (q × part is exact for |q| < 2^20).
const PIO2_1: f64 = 1.570_796_326_734_125_6;
const PIO2_2: f64 = 6.077_100_506_303_966e-11;
const PIO2_3: f64 = 2.022_266_248_795_950_6e-21;
const FRAC_2_PI: f64 = std::f64::consts::FRAC_2_PI;
const ROUNDER: f64 = 6_755_399_441_055_744.0;

/// sin r, |r| <= pi/4: Taylor series to r^17.
#[inline]
fn sin_kernel(r: f64) -> f64 {
    let z = r * r;
    // 1/3!, 1/5!, ... 1/17! with alternating signs, Horner in z.
    let p = -1.0 / 355_687_428_096_000.0;
    let p = p * z + 1.0 / 1_307_674_368_000.0;
    let p = p * z - 1.0 / 6_227_020_800.0;
    let p = p * z + 1.0 / 39_916_800.0;
    let p = p * z - 1.0 / 362_880.0;
    let p = p * z + 1.0 / 5_040.0;
    let p = p * z - 1.0 / 120.0;
    let p = p * z + 1.0 / 6.0;
    r - r * z * p
}

/// cos r, |r| <= pi/4: Taylor series to r^18.
#[inline]
fn cos_kernel(r: f64) -> f64 {
    let z = r * r;
    let p = 1.0 / 6_402_373_705_728_000.0;
    let p = p * z - 1.0 / 20_922_789_888_000.0;
    let p = p * z + 1.0 / 87_178_291_200.0;
    let p = p * z - 1.0 / 479_001_600.0;
    let p = p * z + 1.0 / 3_628_800.0;
    let p = p * z - 1.0 / 40_320.0;
    let p = p * z + 1.0 / 720.0;
    let p = p * z - 1.0 / 24.0;
    let p = p * z + 0.5;
    1.0 - z * p
}

/// (sin x, cos x).
#[inline]
pub(crate) fn sin_cos(x: f64) -> (f64, f64) {
    if x.is_nan() || x.abs() >= 1.0e6 {
        return x.sin_cos();
    }
    sin_cos_fast(x)
}

/// (sin x, cos x) for |x| < 1e6, without a branch (the quadrant's swap and signs are selects
/// and a flip of the sign bit, the same values as negation).
#[inline(always)]
pub(crate) fn sin_cos_fast(x: f64) -> (f64, f64) {
    // Rounded to the nearest integer by adding and taking away 1.5 × 2^52 (no libm call); the
    // low bits of the sum are the integer's, in two's complement.
    let k = x * FRAC_2_PI + ROUNDER;
    let q = k - ROUNDER;
    let r = ((x - q * PIO2_1) - q * PIO2_2) - q * PIO2_3;
    let (s, c) = (sin_kernel(r), cos_kernel(r));
    let bits = k.to_bits();
    // Quadrants 1 and 3 swap sine and cosine; the sine is negative in 2 and 3, the cosine in 1
    // and 2.
    let (s, c) = if bits & 1 == 0 { (s, c) } else { (c, s) };
    let sin_neg = (bits >> 1) & 1;
    let cos_neg = (bits ^ (bits >> 1)) & 1;
    (
        f64::from_bits(s.to_bits() ^ (sin_neg << 63)),
        f64::from_bits(c.to_bits() ^ (cos_neg << 63)),
    )
}

/// tan(pi/12).
const TAN_PI_12: f64 = 0.267_949_192_431_122_7;
const SQRT_3: f64 = 1.732_050_807_568_877_2;
const FRAC_PI_6: f64 = std::f64::consts::FRAC_PI_6;

/// atan t, |t| <= tan(pi/12): Taylor series to t^33.
#[inline]
fn atan_kernel(t: f64) -> f64 {
    let z = t * t;
    // atan t = t + t z P(z), P(z) = -1/3 + z/5 - z^2/7 + ... + z^15/33, Horner from the top.
    let p = 1.0 / 33.0;
    let p = p * z - 1.0 / 31.0;
    let p = p * z + 1.0 / 29.0;
    let p = p * z - 1.0 / 27.0;
    let p = p * z + 1.0 / 25.0;
    let p = p * z - 1.0 / 23.0;
    let p = p * z + 1.0 / 21.0;
    let p = p * z - 1.0 / 19.0;
    let p = p * z + 1.0 / 17.0;
    let p = p * z - 1.0 / 15.0;
    let p = p * z + 1.0 / 13.0;
    let p = p * z - 1.0 / 11.0;
    let p = p * z + 1.0 / 9.0;
    let p = p * z - 1.0 / 7.0;
    let p = p * z + 1.0 / 5.0;
    let p = p * z - 1.0 / 3.0;
    t + t * z * p
}

/// atan2(y, x), as libm's (the same quadrants and signs).
#[inline]
pub(crate) fn atan2(y: f64, x: f64) -> f64 {
    let (ax, ay) = (x.abs(), y.abs());
    if !(ax.is_finite() && ay.is_finite()) || (ax == 0.0 && ay == 0.0) {
        return y.atan2(x);
    }
    atan2_fast(y, x)
}

/// atan2(y, x) for finite `x` and `y` not both zero: one division and selects, no branch (so
/// that loops over many points vectorise).
#[inline(always)]
pub(crate) fn atan2_fast(y: f64, x: f64) -> f64 {
    let (ax, ay) = (x.abs(), y.abs());
    let swap = ay > ax;
    let (lo, hi) = if swap { (ax, ay) } else { (ay, ax) };
    // t = lo / hi in [0, 1]; past tan(pi/12), atan t = pi/6 + atan((t sqrt3 - 1) / (t + sqrt3)),
    // both forms one quotient of lo and hi.
    let far = lo > TAN_PI_12 * hi;
    let (num, den, base) = if far {
        (lo * SQRT_3 - hi, lo + hi * SQRT_3, FRAC_PI_6)
    } else {
        (lo, hi, 0.0)
    };
    let a = base + atan_kernel(num / den);
    let a = if swap { std::f64::consts::FRAC_PI_2 - a } else { a };
    let a = if x.is_sign_negative() {
        std::f64::consts::PI - a
    } else {
        a
    };
    if y.is_sign_negative() { -a } else { a }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agree_with_libm() {
        let mut worst: f64 = 0.0;
        let mut x = -20.0;
        while x < 20.0 {
            let (s, c) = sin_cos(x);
            worst = worst.max((s - x.sin()).abs()).max((c - x.cos()).abs());
            x += 0.000_731;
        }
        assert!(worst < 4e-16, "sin/cos off by {worst}");
        let mut worst: f64 = 0.0;
        for i in -300..300 {
            for j in -300..300 {
                let (y, x) = (f64::from(i) * 0.0173, f64::from(j) * 0.0291);
                worst = worst.max((atan2(y, x) - y.atan2(x)).abs());
            }
        }
        assert!(worst < 1e-15, "atan2 off by {worst}");
        for (y, x) in [
            (0.0, 0.0),
            (-0.0, -1.0),
            (0.0, -1.0),
            (1.0, f64::INFINITY),
            (f64::NAN, 1.0),
        ] {
            let (a, b) = (atan2(y, x), y.atan2(x));
            assert!(a == b || (a.is_nan() && b.is_nan()), "{y} {x}");
        }
    }
}
