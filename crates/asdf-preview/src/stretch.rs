//! From values to grey levels: the limits of the display range (zscale, min/max, percentile)
//! and the transfer function (linear, asinh, log), as DS9 and astropy's visualization module
//! name them.
#![expect(
    clippy::cast_possible_truncation,
    reason = "sample counts and indices computed from lengths, never negative or beyond them"
)]

/// How values become levels between 0 and 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stretch {
    /// Linear between the limits IRAF's zscale finds (DS9's "zscale"; the default for images).
    ZScale,
    /// Linear between the smallest and the largest value.
    MinMax,
    /// Linear between the percentiles that keep this central percentage of the values
    /// (99.5: from the 0.25th to the 99.75th percentile).
    Percentile(f64),
    /// astropy's `AsinhStretch(a=0.1)` between the smallest and the largest value.
    Asinh,
    /// astropy's `LogStretch(a=1000)` (DS9's log exponent) between the smallest and the largest value.
    Log,
}

impl std::str::FromStr for Stretch {
    type Err = String;

    /// `zscale`, `minmax`, `percentile` (99.5), `percentile=99`, `asinh`, `log`.
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim().to_ascii_lowercase();
        match s.as_str() {
            "zscale" => Ok(Stretch::ZScale),
            "minmax" | "linear" => Ok(Stretch::MinMax),
            "percentile" => Ok(Stretch::Percentile(99.5)),
            "asinh" => Ok(Stretch::Asinh),
            "log" => Ok(Stretch::Log),
            _ => match s.strip_prefix("percentile=").map(str::parse::<f64>) {
                Some(Ok(p)) if p > 0.0 && p <= 100.0 => Ok(Stretch::Percentile(p)),
                _ => Err(format!(
                    "unknown stretch `{s}`: zscale, minmax, percentile, percentile=P (0 < P <= 100), asinh or log"
                )),
            },
        }
    }
}

impl Stretch {
    /// The limits of the display range over `values` (non-finite values left out); `None`
    /// when no value is finite.
    #[must_use]
    pub fn limits(self, values: &[f64]) -> Option<(f64, f64)> {
        let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        if finite.is_empty() {
            return None;
        }
        Some(match self {
            Stretch::ZScale => zscale(&finite),
            Stretch::Percentile(p) => percentile_limits(finite, p),
            Stretch::MinMax | Stretch::Asinh | Stretch::Log => min_max(&finite),
        })
    }

    /// The level in 0..=1 of `v` between the limits `lo..hi` (clipped).
    #[must_use]
    pub fn level(self, v: f64, lo: f64, hi: f64) -> f64 {
        let x = if hi > lo {
            ((v - lo) / (hi - lo)).clamp(0.0, 1.0)
        } else {
            0.5
        };
        match self {
            Stretch::Asinh => (x / 0.1).asinh() / (1.0f64 / 0.1).asinh(),
            Stretch::Log => (1000.0 * x + 1.0).ln() / 1001.0f64.ln(),
            _ => x,
        }
    }
}

fn min_max(v: &[f64]) -> (f64, f64) {
    v.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
        (lo.min(x), hi.max(x))
    })
}

/// The percentiles keeping the central `p` percent, interpolated linearly as numpy's
/// `percentile` does by default.
fn percentile_limits(mut v: Vec<f64>, p: f64) -> (f64, f64) {
    v.sort_unstable_by(f64::total_cmp);
    let q = |f: f64| {
        let pos = f * (v.len() - 1) as f64;
        let (i, frac) = (pos.floor() as usize, pos - pos.floor());
        let next = v[(i + 1).min(v.len() - 1)];
        v[i] + (next - v[i]) * frac
    };
    let cut = (100.0 - p) / 200.0;
    (q(cut), q(1.0 - cut))
}

/// The number of samples zscale takes (IRAF's `nsample`, astropy's `n_samples`).
const ZSCALE_SAMPLES: usize = 1000;
/// The contrast (IRAF's `contrast`).
const ZSCALE_CONTRAST: f64 = 0.25;
/// The largest fraction of the samples the fit may reject.
const ZSCALE_MAX_REJECT: f64 = 0.5;
/// The fewest samples left for a fit.
const ZSCALE_MIN_NPIXELS: usize = 5;
/// Rejection threshold in standard deviations.
const ZSCALE_KREJ: f64 = 2.5;
/// Iterations of the fit.
const ZSCALE_ITERATIONS: usize = 5;

/// IRAF's zscale limits of finite values, as astropy's `ZScaleInterval` computes them with its
/// defaults: up to 1,000 samples taken at an even stride, sorted; a line fitted to them with
/// iterative 2.5-sigma rejection (rejected samples grown by 1% of the sample count); the slope
/// divided by the contrast (0.25) around the median; clipped to the samples' range.
#[must_use]
pub fn zscale(finite: &[f64]) -> (f64, f64) {
    let stride = ((finite.len() as f64 / ZSCALE_SAMPLES as f64).max(1.0)) as usize;
    let mut samples: Vec<f64> = finite.iter().step_by(stride).take(ZSCALE_SAMPLES).copied().collect();
    samples.sort_unstable_by(f64::total_cmp);
    let npix = samples.len();
    let (mut vmin, mut vmax) = (samples[0], samples[npix - 1]);
    let minpix = ZSCALE_MIN_NPIXELS.max((npix as f64 * ZSCALE_MAX_REJECT) as usize);
    let ngrow = 1usize.max((npix as f64 * 0.01) as usize);
    let mut bad = vec![false; npix];
    let (mut ngood, mut last_ngood) = (npix, npix + 1);
    let mut fit = None;
    for _ in 0..ZSCALE_ITERATIONS {
        if ngood >= last_ngood || ngood < minpix {
            break;
        }
        let Some((slope, intercept)) = fit_line(&samples, &bad) else {
            break;
        };
        fit = Some((slope, intercept));
        let flat: Vec<f64> = samples
            .iter()
            .enumerate()
            .map(|(i, s)| s - (slope * i as f64 + intercept))
            .collect();
        let threshold = ZSCALE_KREJ * std_dev(flat.iter().zip(&bad).filter(|(_, b)| !**b).map(|(f, _)| *f));
        for (b, f) in bad.iter_mut().zip(&flat) {
            if *f < -threshold || *f > threshold {
                *b = true;
            }
        }
        bad = grow(&bad, ngrow);
        last_ngood = ngood;
        ngood = bad.iter().filter(|b| !**b).count();
    }
    if let Some((slope, _)) = fit.filter(|_| ngood >= minpix) {
        let slope = slope / ZSCALE_CONTRAST;
        let center = (npix - 1) / 2;
        // numpy's median: the mean of the two middle samples when their count is even.
        let median = if npix.is_multiple_of(2) {
            (samples[npix / 2 - 1] + samples[npix / 2]) / 2.0
        } else {
            samples[npix / 2]
        };
        let (lo, hi) = (
            vmin.max(median - (center as f64 - 1.0) * slope),
            vmax.min(median + (npix - center) as f64 * slope),
        );
        // Samples left exactly on a flat line (an image of mostly one value) fit a range of
        // nothing; astropy's answer then depends on its fit's rounding (it may reject every
        // sample and give the samples' range, or give a minimum above the maximum). The
        // samples' range is kept instead, so that what differs from the common value shows.
        if lo < hi {
            (vmin, vmax) = (lo, hi);
        }
    }
    (vmin, vmax)
}

/// Least squares line `y = slope * i + intercept` through the samples not marked bad (numpy's
/// `polyfit` with 0/1 weights).
fn fit_line(y: &[f64], bad: &[bool]) -> Option<(f64, f64)> {
    let (mut n, mut sx, mut sy) = (0.0, 0.0, 0.0);
    for (i, v) in y.iter().enumerate().filter(|(i, _)| !bad[*i]) {
        n += 1.0;
        sx += i as f64;
        sy += v;
    }
    if n < 2.0 {
        return None;
    }
    let (mx, my) = (sx / n, sy / n);
    let (mut sxx, mut sxy) = (0.0, 0.0);
    for (i, v) in y.iter().enumerate().filter(|(i, _)| !bad[*i]) {
        sxx += (i as f64 - mx) * (i as f64 - mx);
        sxy += (i as f64 - mx) * (v - my);
    }
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    Some((slope, my - slope * mx))
}

/// The population standard deviation (numpy's `std`).
fn std_dev(v: impl Iterator<Item = f64> + Clone) -> f64 {
    let (n, s) = v.clone().fold((0.0, 0.0), |(n, s), x| (n + 1.0, s + x));
    if n == 0.0 {
        return 0.0;
    }
    let m = s / n;
    (v.map(|x| (x - m) * (x - m)).sum::<f64>() / n).sqrt()
}

/// numpy's `convolve(bad, ones(k), mode='same') != 0`: each bad sample marks the `k` around it.
fn grow(bad: &[bool], k: usize) -> Vec<bool> {
    let n = bad.len();
    let (before, after) = (k / 2, (k - 1) / 2);
    // Prefix counts: out[i] is whether any bad lies in i - before ..= i + after.
    let mut prefix = vec![0usize; n + 1];
    for (i, b) in bad.iter().enumerate() {
        prefix[i + 1] = prefix[i] + usize::from(*b);
    }
    (0..n)
        .map(|i| {
            let lo = i.saturating_sub(before);
            let hi = (i + after + 1).min(n);
            prefix[hi] > prefix[lo]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ramp_spans_its_range_and_outliers_are_cut() {
        let ramp: Vec<f64> = (0..10_000).map(f64::from).collect();
        let (lo, hi) = zscale(&ramp);
        // Samples at a stride of 10: the last is 9990.
        assert_eq!((lo, hi), (0.0, 9990.0));
        // Flat noise with a few very bright pixels: zscale ignores the bright ones.
        let mut v: Vec<f64> = (0..10_000).map(|i| 100.0 + f64::from(i % 7)).collect();
        for k in 0..20 {
            v[k * 500] = 1e6;
        }
        let (lo, hi) = zscale(&v);
        // The contrast (0.25) widens the fitted range; the bright pixels are left out.
        assert!(lo >= 100.0 && hi < 200.0, "{lo} {hi}");
        assert_eq!(Stretch::MinMax.limits(&v), Some((100.0, 1e6)));
    }

    #[test]
    fn percentile_and_levels() {
        let v: Vec<f64> = (0..=100).map(f64::from).collect();
        assert_eq!(Stretch::Percentile(90.0).limits(&v), Some((5.0, 95.0)));
        assert_eq!(Stretch::ZScale.limits(&[f64::NAN]), None);
        assert_eq!(Stretch::Log.level(1.0, 0.0, 1.0), 1.0);
        assert!(Stretch::Asinh.level(0.1, 0.0, 1.0) > 0.1);
        assert_eq!(Stretch::MinMax.level(5.0, 5.0, 5.0), 0.5);
        assert_eq!("percentile=90".parse::<Stretch>(), Ok(Stretch::Percentile(90.0)));
        assert!("gamma".parse::<Stretch>().is_err());
    }

    #[test]
    fn grow_marks_a_window_as_numpy_convolve_same() {
        let b = [false, false, true, false, false, false];
        assert_eq!(grow(&b, 1), b.to_vec());
        // k = 3: one before, one after.
        assert_eq!(grow(&b, 3), vec![false, true, true, true, false, false]);
        // k = 2: numpy's 'same' keeps full[(k-1)//2 ..]: one before, none after.
        assert_eq!(grow(&b, 2), vec![false, false, true, true, false, false]);
    }
}
