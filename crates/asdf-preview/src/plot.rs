//! A 1-D array (a spectrum, a light curve) as a line plot with axes, ticks and labels.
#![expect(
    clippy::cast_possible_truncation,
    reason = "pixel arithmetic: coordinates of a picture of at most a few thousand pixels"
)]

use crate::image::{Image, Rgb};

const BACKGROUND: Rgb = [255, 255, 255];
const AXES: Rgb = [0, 0, 0];
const LINE: Rgb = [31, 119, 180];
const GRID: Rgb = [225, 225, 225];

/// About `n` round tick values covering `lo..=hi` (1, 2 or 5 times a power of ten apart).
#[must_use]
pub fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return vec![lo];
    }
    let raw = (hi - lo) / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// A tick label: short, without trailing zeros (`0.5`, `1200`, `1.5e-07`).
#[must_use]
pub fn label(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && !(1e-3..1e6).contains(&a) {
        let s = format!("{v:.2e}");
        // `1.50e-7` -> `1.5e-7`
        return match s.split_once('e') {
            Some((m, e)) => format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.')),
            None => s,
        };
    }
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".to_owned() } else { s.to_owned() }
}

/// The values as a line over their index, `width x height` pixels, with axes, ticks and
/// tick labels; NaN and infinite values leave gaps in the line.
#[must_use]
pub fn line_plot(values: &[f64], width: usize, height: usize) -> Image {
    let (width, height) = (width.max(160), height.max(120));
    let mut img = Image::filled(width, height, BACKGROUND);
    let finite = values.iter().copied().filter(|v| v.is_finite());
    let (mut lo, mut hi) = finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v), b.max(v)));
    if lo > hi {
        (lo, hi) = (0.0, 1.0);
    } else if lo == hi {
        (lo, hi) = (lo - 0.5, hi + 0.5);
    }
    let pad = (hi - lo) * 0.05;
    let (lo, hi) = (lo - pad, hi + pad);
    let xmax = values.len().saturating_sub(1).max(1) as f64;
    let yticks = ticks(lo, hi, 6);
    let ylabel_chars = yticks.iter().map(|t| label(*t).len()).max().unwrap_or(1);
    // The plot area.
    let left = (8 * ylabel_chars + 14) as i64;
    let (right, top, bottom) = (width as i64 - 12, 10i64, height as i64 - 24);
    let px = |i: f64| left + ((i / xmax) * (right - left) as f64).round() as i64;
    let py = |v: f64| bottom - (((v - lo) / (hi - lo)) * (bottom - top) as f64).round() as i64;
    for t in &yticks {
        let y = py(*t);
        img.line((left + 1, y), (right, y), GRID);
        img.line((left - 4, y), (left, y), AXES);
        let s = label(*t);
        img.text(left - 6 - 8 * s.len() as i64, y - 4, &s, AXES);
    }
    let xticks = ticks(0.0, xmax, ((right - left) / 80).max(2) as usize);
    for t in &xticks {
        let x = px(*t);
        img.line((x, bottom), (x, bottom + 4), AXES);
        let s = label(*t);
        img.text(x - 4 * s.len() as i64, bottom + 8, &s, AXES);
    }
    img.line((left, top), (left, bottom), AXES);
    img.line((left, bottom), (right, bottom), AXES);
    let mut last: Option<(i64, i64)> = None;
    for (i, v) in values.iter().enumerate() {
        if !v.is_finite() {
            last = None;
            continue;
        }
        let p = (px(i as f64), py(*v));
        match last {
            Some(q) => img.line(q, p, LINE),
            None => img.put(p.0, p.1, LINE),
        }
        last = Some(p);
    }
    img
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_labels_short() {
        assert_eq!(ticks(0.0, 10.0, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        let t: Vec<String> = ticks(0.13, 0.61, 4).into_iter().map(label).collect();
        assert_eq!(t, ["0.2", "0.4", "0.6"]);
        assert_eq!(label(1200.0), "1200");
        assert_eq!(label(1.5e-7), "1.5e-7");
        assert_eq!(label(-0.0), "0");
    }

    #[test]
    fn the_line_is_drawn_with_a_gap_at_nan() {
        let v: Vec<f64> = (0..100)
            .map(|i| if i == 50 { f64::NAN } else { f64::from(i) })
            .collect();
        let img = line_plot(&v, 400, 200);
        let blue = img.rgba.chunks(4).filter(|p| p[..3] == LINE).count();
        assert!(blue > 200, "{blue} line pixels");
        assert_eq!((img.width, img.height), (400, 200));
    }
}
