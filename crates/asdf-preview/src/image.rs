//! RGBA pictures: a plane of values drawn through a stretch and a colour map, text in 8x8
//! glyphs, PNG encoding.
#![expect(
    clippy::cast_possible_truncation,
    reason = "pixel arithmetic: levels are clamped to 0..=1 and coordinates checked against the picture before the casts"
)]

use crate::stretch::Stretch;

/// An RGBA picture, rows from the top of the picture down, 4 bytes a pixel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// `width * height * 4` bytes: red, green, blue, alpha.
    pub rgba: Vec<u8>,
}

/// A colour, red, green and blue.
pub type Rgb = [u8; 3];

/// The colour maps by name: `gray` (black to white) and matplotlib's perceptual maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Colormap {
    /// Black to white.
    Gray,
    /// matplotlib's viridis.
    Viridis,
    /// matplotlib's inferno.
    Inferno,
    /// matplotlib's magma.
    Magma,
    /// matplotlib's plasma.
    Plasma,
    /// cividis (for colour-vision deficiencies).
    Cividis,
    /// Google's turbo.
    Turbo,
    /// cubehelix (Green 2011).
    Cubehelix,
}

impl Colormap {
    /// Every colour map, with its name.
    pub const ALL: [(&'static str, Colormap); 8] = [
        ("gray", Colormap::Gray),
        ("viridis", Colormap::Viridis),
        ("inferno", Colormap::Inferno),
        ("magma", Colormap::Magma),
        ("plasma", Colormap::Plasma),
        ("cividis", Colormap::Cividis),
        ("turbo", Colormap::Turbo),
        ("cubehelix", Colormap::Cubehelix),
    ];

    /// The colour of level `t` (0..=1).
    #[must_use]
    pub fn color(self, t: f64) -> Rgb {
        let g = match self {
            Colormap::Gray => {
                let v = (t.clamp(0.0, 1.0) * 255.0).round() as u8;
                return [v, v, v];
            }
            Colormap::Viridis => colorous::VIRIDIS,
            Colormap::Inferno => colorous::INFERNO,
            Colormap::Magma => colorous::MAGMA,
            Colormap::Plasma => colorous::PLASMA,
            Colormap::Cividis => colorous::CIVIDIS,
            Colormap::Turbo => colorous::TURBO,
            Colormap::Cubehelix => colorous::CUBEHELIX,
        };
        let c = g.eval_continuous(t.clamp(0.0, 1.0));
        [c.r, c.g, c.b]
    }

    /// 256 colours, level 0 to 1 (a lookup table for drawing).
    #[must_use]
    pub fn table(self) -> Vec<Rgb> {
        (0..256).map(|i| self.color(f64::from(i) / 255.0)).collect()
    }
}

impl std::str::FromStr for Colormap {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim().to_ascii_lowercase();
        let s = if s == "grey" || s == "greys" {
            "gray".to_owned()
        } else {
            s
        };
        Colormap::ALL
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, c)| *c)
            .ok_or_else(|| {
                let names: Vec<&str> = Colormap::ALL.iter().map(|(n, _)| *n).collect();
                format!("unknown colour map `{s}`: {}", names.join(", "))
            })
    }
}

/// Parses `#rrggbb`.
///
/// # Errors
/// A message naming the value.
pub fn parse_color(s: &str) -> Result<Rgb, String> {
    let h = s.trim().trim_start_matches('#');
    let bad = || format!("`{s}` is not a colour as #rrggbb");
    if h.len() != 6 || !h.is_ascii() {
        return Err(bad());
    }
    let byte = |i: usize| u8::from_str_radix(&h[i..i + 2], 16).map_err(|_| bad());
    Ok([byte(0)?, byte(2)?, byte(4)?])
}

/// How a plane becomes a picture.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Style {
    /// The limits and the transfer function.
    pub stretch: Stretch,
    /// The colour map.
    pub cmap: Colormap,
    /// The colour of NaN and infinite values.
    pub nan_color: Rgb,
    /// The colour of masked values.
    pub mask_color: Rgb,
    /// The array's first row at the bottom of the picture (the astronomical convention, as DS9
    /// shows FITS images); at the top when false (as numpy prints arrays).
    pub origin_lower: bool,
}

impl Default for Style {
    fn default() -> Self {
        Style {
            stretch: Stretch::ZScale,
            cmap: Colormap::Gray,
            nan_color: [255, 0, 255],
            mask_color: [0, 160, 255],
            origin_lower: true,
        }
    }
}

/// A 2-D plane of values, C order (row 0 first), and which are masked.
#[derive(Debug, Clone, PartialEq)]
pub struct Plane {
    /// Columns.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// `width * height` values.
    pub values: Vec<f64>,
    /// True where masked (`None`: nothing is).
    pub masked: Option<Vec<bool>>,
}

impl Plane {
    /// Whether element `i` counts toward limits and histograms: finite and not masked.
    fn usable(&self, i: usize) -> bool {
        self.values[i].is_finite() && !self.masked.as_ref().is_some_and(|m| m[i])
    }

    /// The values that are finite and not masked.
    #[must_use]
    pub fn usable_values(&self) -> Vec<f64> {
        (0..self.values.len())
            .filter(|&i| self.usable(i))
            .map(|i| self.values[i])
            .collect()
    }

    /// The plane reduced so that neither side exceeds `max` (each output pixel the mean of the
    /// usable values of its `f x f` box; NaN when none is, masked when all are masked).
    #[must_use]
    pub fn reduced(&self, max: usize) -> Plane {
        let f = self.width.max(self.height).div_ceil(max.max(1)).max(1);
        if f == 1 {
            return self.clone();
        }
        let (w, h) = (self.width.div_ceil(f), self.height.div_ceil(f));
        let mut sum = vec![0.0f64; w * h];
        let mut n = vec![0u32; w * h];
        let mut masked = vec![0u32; w * h];
        let mut total = vec![0u32; w * h];
        for y in 0..self.height {
            for x in 0..self.width {
                let (i, o) = (y * self.width + x, (y / f) * w + x / f);
                total[o] += 1;
                if self.masked.as_ref().is_some_and(|m| m[i]) {
                    masked[o] += 1;
                } else if self.values[i].is_finite() {
                    sum[o] += self.values[i];
                    n[o] += 1;
                }
            }
        }
        Plane {
            width: w,
            height: h,
            values: sum
                .iter()
                .zip(&n)
                .map(|(s, &k)| if k > 0 { s / f64::from(k) } else { f64::NAN })
                .collect(),
            masked: self
                .masked
                .as_ref()
                .map(|_| masked.iter().zip(&total).map(|(m, t)| m == t).collect()),
        }
    }

    /// The display limits `style.stretch` gives over the usable values (`None`: there are none).
    #[must_use]
    pub fn limits(&self, stretch: Stretch) -> Option<(f64, f64)> {
        stretch.limits(&self.usable_values())
    }

    /// The picture, one pixel per value, with the limits `stretch` finds.
    #[must_use]
    pub fn render(&self, style: &Style) -> Image {
        let (lo, hi) = self.limits(style.stretch).unwrap_or((0.0, 1.0));
        self.render_between(style, lo, hi)
    }

    /// The picture, one pixel per value, with the limits given.
    #[must_use]
    pub fn render_between(&self, style: &Style, lo: f64, hi: f64) -> Image {
        let table = style.cmap.table();
        let mut rgba = Vec::with_capacity(self.width * self.height * 4);
        for row in 0..self.height {
            let y = if style.origin_lower { self.height - 1 - row } else { row };
            for x in 0..self.width {
                let i = y * self.width + x;
                let c = if self.masked.as_ref().is_some_and(|m| m[i]) {
                    style.mask_color
                } else if !self.values[i].is_finite() {
                    style.nan_color
                } else {
                    table[(style.stretch.level(self.values[i], lo, hi) * 255.0).round() as usize]
                };
                rgba.extend_from_slice(&[c[0], c[1], c[2], 255]);
            }
        }
        Image {
            width: self.width,
            height: self.height,
            rgba,
        }
    }
}

/// Counts of `values` in `bins` equal bins from `lo` to `hi` (values outside left out).
#[must_use]
pub fn histogram(values: &[f64], lo: f64, hi: f64, bins: usize) -> Vec<u64> {
    let mut h = vec![0u64; bins];
    if bins == 0 || hi <= lo {
        return h;
    }
    for v in values.iter().filter(|v| **v >= lo && **v <= hi) {
        let b = (((v - lo) / (hi - lo)) * bins as f64) as usize;
        h[b.min(bins - 1)] += 1;
    }
    h
}

impl Image {
    /// A picture of one colour.
    #[must_use]
    pub fn filled(width: usize, height: usize, c: Rgb) -> Image {
        Image {
            width,
            height,
            rgba: std::iter::repeat_n([c[0], c[1], c[2], 255], width * height)
                .flatten()
                .collect(),
        }
    }

    /// Sets one pixel (outside the picture: nothing).
    pub fn put(&mut self, x: i64, y: i64, c: Rgb) {
        if x < 0 || y < 0 || x as usize >= self.width || y as usize >= self.height {
            return;
        }
        let i = (y as usize * self.width + x as usize) * 4;
        self.rgba[i..i + 3].copy_from_slice(&c);
    }

    /// A straight line (Bresenham's).
    pub fn line(&mut self, (mut x0, mut y0): (i64, i64), (x1, y1): (i64, i64), c: Rgb) {
        let (dx, dy) = ((x1 - x0).abs(), -(y1 - y0).abs());
        let (sx, sy) = (if x0 < x1 { 1 } else { -1 }, if y0 < y1 { 1 } else { -1 });
        let mut err = dx + dy;
        loop {
            self.put(x0, y0, c);
            if x0 == x1 && y0 == y1 {
                break;
            }
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x0 += sx;
            }
            if e2 <= dx {
                err += dx;
                y0 += sy;
            }
        }
    }

    /// Text in 8x8 glyphs (ASCII; others drawn as `?`) with its top left corner at `x, y`.
    pub fn text(&mut self, x: i64, y: i64, s: &str, c: Rgb) {
        for (k, ch) in s.chars().enumerate() {
            let code = if ch.is_ascii() { ch as usize } else { '?' as usize };
            let glyph = font8x8::legacy::BASIC_LEGACY[code];
            for (row, bits) in glyph.iter().enumerate() {
                for col in 0..8 {
                    if bits & (1 << col) != 0 {
                        self.put(x + 8 * k as i64 + col, y + row as i64, c);
                    }
                }
            }
        }
    }

    /// Copies `other` with its top left corner at `x, y` (clipped).
    pub fn paste(&mut self, other: &Image, x: usize, y: usize) {
        for row in 0..other.height.min(self.height.saturating_sub(y)) {
            let w = other.width.min(self.width.saturating_sub(x));
            let src = &other.rgba[row * other.width * 4..(row * other.width + w) * 4];
            let at = ((y + row) * self.width + x) * 4;
            self.rgba[at..at + w * 4].copy_from_slice(src);
        }
    }

    /// The picture as a PNG file (8-bit RGBA).
    ///
    /// # Errors
    /// The encoder's, for a picture too large for PNG.
    pub fn to_png(&self) -> Result<Vec<u8>, png::EncodingError> {
        let mut out = Vec::new();
        let w = u32::try_from(self.width).map_err(|_| too_large())?;
        let h = u32::try_from(self.height).map_err(|_| too_large())?;
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header()?;
        writer.write_image_data(&self.rgba)?;
        writer.finish()?;
        Ok(out)
    }
}

fn too_large() -> png::EncodingError {
    png::EncodingError::LimitsExceeded
}

/// Pictures side by side in rows, each under its caption (`columns` to a row).
#[must_use]
pub fn contact_sheet(tiles: &[(String, Image)], columns: usize) -> Image {
    const GAP: usize = 8;
    const CAPTION: usize = 12;
    let columns = columns.max(1);
    let cell_w = tiles.iter().map(|(_, i)| i.width).max().unwrap_or(0).max(64);
    let cell_h = tiles.iter().map(|(_, i)| i.height).max().unwrap_or(0) + CAPTION;
    let rows = tiles.len().div_ceil(columns);
    let width = GAP + columns.min(tiles.len()).max(1) * (cell_w + GAP);
    let height = GAP + rows * (cell_h + GAP);
    let mut sheet = Image::filled(width, height, [32, 32, 32]);
    for (k, (caption, img)) in tiles.iter().enumerate() {
        let (x, y) = (
            GAP + (k % columns) * (cell_w + GAP),
            GAP + (k / columns) * (cell_h + GAP),
        );
        let max_chars = cell_w / 8;
        let shown: String = if caption.chars().count() > max_chars {
            let tail: String = caption.chars().rev().take(max_chars.saturating_sub(1)).collect();
            format!("~{}", tail.chars().rev().collect::<String>())
        } else {
            caption.clone()
        };
        sheet.text(x as i64, y as i64, &shown, [230, 230, 230]);
        sheet.paste(img, x, y + CAPTION);
    }
    sheet
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_row_at_the_bottom_nan_and_mask_in_their_colours() {
        let p = Plane {
            width: 2,
            height: 2,
            values: vec![0.0, f64::NAN, 1.0, 1.0],
            masked: Some(vec![false, false, false, true]),
        };
        let style = Style {
            stretch: Stretch::MinMax,
            ..Style::default()
        };
        let img = p.render(&style);
        let px = |x: usize, y: usize| img.rgba[(y * 2 + x) * 4..(y * 2 + x) * 4 + 3].to_vec();
        // Row 0 of the array is the bottom row of the picture.
        assert_eq!(px(0, 1), vec![0, 0, 0]);
        assert_eq!(px(1, 1), style.nan_color.to_vec());
        assert_eq!(px(0, 0), vec![255, 255, 255]);
        assert_eq!(px(1, 0), style.mask_color.to_vec());
        let top = p.render(&Style {
            origin_lower: false,
            ..style
        });
        assert_eq!(&top.rgba[..3], &[0, 0, 0]);
    }

    #[test]
    fn reduced_planes_average_boxes() {
        let p = Plane {
            width: 4,
            height: 2,
            values: vec![1.0, 3.0, f64::NAN, f64::NAN, 1.0, 3.0, 5.0, 5.0],
            masked: None,
        };
        let r = p.reduced(2);
        assert_eq!((r.width, r.height), (2, 1));
        assert_eq!(r.values, vec![2.0, 5.0]);
        assert_eq!(histogram(&[0.0, 0.5, 1.0, 2.0], 0.0, 1.0, 2), vec![1, 2]);
    }

    #[test]
    fn png_and_names() {
        let img = Image::filled(3, 2, [1, 2, 3]);
        let png = img.to_png().unwrap();
        assert_eq!(&png[1..4], b"PNG");
        assert_eq!("viridis".parse::<Colormap>(), Ok(Colormap::Viridis));
        assert!("jet".parse::<Colormap>().unwrap_err().contains("viridis"));
        assert_eq!(parse_color("#ff0010"), Ok([255, 0, 16]));
        assert!(parse_color("red").is_err());
        let sheet = contact_sheet(&[("/a".into(), img.clone()), ("/b".into(), img)], 2);
        assert!(sheet.width > 128);
    }
}
