//! Regions of an array in numpy's basic slicing: `start:stop:step` per axis, integers (which
//! drop their axis), `...` (as many full axes as needed), and omitted trailing axes (full).
//!
//! ```
//! use asdf_core_types::region::Region;
//! let r: Region = "1:5, ::2, -1".parse().unwrap();
//! let s = r.resolve(&[10, 7, 3]).unwrap();
//! assert_eq!(s.shape(), vec![4, 4]);
//! ```

use std::str::FromStr;

use crate::view::View;

/// One axis of a region, as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slice {
    /// One index (negative counts from the end); the axis is dropped.
    Index(i64),
    /// `start:stop:step`, each optional, as Python's `slice`.
    Range {
        /// The first index (default: 0, or the last for a negative step).
        start: Option<i64>,
        /// One past the last (default: the end, or before the first for a negative step).
        stop: Option<i64>,
        /// The step (default 1; never 0).
        step: Option<i64>,
    },
    /// `...`: full axes, as many as the region leaves out.
    Ellipsis,
}

/// A region as written: one [`Slice`] per axis (fewer than the array's: the rest are full).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Region {
    /// The axes.
    pub slices: Vec<Slice>,
}

/// A region that does not fit the array or cannot be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegionError {
    /// Text that is not numpy's basic slicing (with the part that is not).
    #[error("`{0}` is not a slice (start:stop:step), an index or `...`")]
    Syntax(String),
    /// A step of 0.
    #[error("a slice step cannot be zero")]
    ZeroStep,
    /// More than one `...`.
    #[error("a region can only have a single ellipsis (`...`)")]
    Ellipses,
    /// More axes than the array has.
    #[error("the region has {region} axes and the array {array}")]
    TooManyAxes {
        /// The region's axes (`...` not counted).
        region: usize,
        /// The array's.
        array: usize,
    },
    /// An index that no array has: beyond 64 bits (numpy: "cannot fit 'int' into an
    /// index-sized integer").
    #[error("index {0} does not fit in a 64-bit integer")]
    IndexTooLarge(String),
    /// An index outside its axis.
    #[error("index {index} is out of bounds for axis {axis} with size {size}")]
    OutOfBounds {
        /// The index as written.
        index: i64,
        /// The axis.
        axis: usize,
        /// Its size.
        size: usize,
    },
}

impl FromStr for Region {
    type Err = RegionError;

    /// numpy's basic slicing without the brackets: `"100:300, 1400:1600"`, `"2, :, ::-1"`,
    /// `"..., 0"`; the empty text (or `...`) is the whole array.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if s.is_empty() {
            return Ok(Self::default());
        }
        // One trailing comma, as numpy's `a[0,]` (a tuple of one index): not `,` alone, nor
        // two.
        let s = match s.strip_suffix(',') {
            Some(rest) if !rest.trim().is_empty() && !rest.trim_end().ends_with(',') => rest,
            _ => s,
        };
        let num = |t: &str, part: &str| number(t, part).map(|n| n.map(|(v, _)| v));
        let mut slices = Vec::new();
        for part in s.split(',') {
            let p = part.trim();
            if p == "..." {
                if slices.contains(&Slice::Ellipsis) {
                    return Err(RegionError::Ellipses);
                }
                slices.push(Slice::Ellipsis);
                continue;
            }
            let bits: Vec<&str> = p.split(':').collect();
            slices.push(match bits.as_slice() {
                [i] => match number(i, p)? {
                    // An index beyond 64 bits fits no axis (numpy refuses it too).
                    Some((_, true)) => return Err(RegionError::IndexTooLarge(i.trim().to_owned())),
                    Some((v, false)) => Slice::Index(v),
                    None => return Err(RegionError::Syntax(p.to_owned())),
                },
                [a, b] => Slice::Range {
                    start: num(a, p)?,
                    stop: num(b, p)?,
                    step: None,
                },
                [a, b, c] => {
                    let step = num(c, p)?;
                    if step == Some(0) {
                        return Err(RegionError::ZeroStep);
                    }
                    Slice::Range {
                        start: num(a, p)?,
                        stop: num(b, p)?,
                        step,
                    }
                }
                _ => return Err(RegionError::Syntax(p.to_owned())),
            });
        }
        Ok(Self { slices })
    }
}

/// A number of a slice as Python reads an integer (an optional sign, decimal digits, `_`
/// between digits), any size: values beyond 64 bits are saturated to `i64::MIN` or `i64::MAX`,
/// which slice every axis (at most `i64::MAX` long) exactly as the larger value would (start
/// and stop clamp to the axis; a step that large takes at most one index). An empty text is
/// `None` (the default); the flag says whether the value was saturated.
fn number(t: &str, part: &str) -> Result<Option<(i64, bool)>, RegionError> {
    let t = t.trim();
    if t.is_empty() {
        return Ok(None);
    }
    let syntax = || RegionError::Syntax(part.to_owned());
    let (negative, digits) = match t.as_bytes()[0] {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    // Digits with single underscores between them, as Python's int literals.
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
        || !digits.bytes().all(|b| b.is_ascii_digit() || b == b'_')
    {
        return Err(syntax());
    }
    let mut v: i64 = 0;
    for b in digits.bytes().filter(u8::is_ascii_digit) {
        let d = i64::from(b - b'0');
        v = match v
            .checked_mul(10)
            .and_then(|x| if negative { x.checked_sub(d) } else { x.checked_add(d) })
        {
            Some(x) => x,
            None => return Ok(Some((if negative { i64::MIN } else { i64::MAX }, true))),
        };
    }
    Ok(Some((v, false)))
}

/// One axis of a resolved region: the indices `start + k * step` for `k` in `0..count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// The first index.
    pub start: usize,
    /// The step (negative: backwards).
    pub step: i64,
    /// How many indices.
    pub count: usize,
    /// Whether the axis is kept in the result (false for an integer index).
    pub keep: bool,
}

impl Span {
    /// The lowest index it takes and one past the highest (empty for no index).
    #[must_use]
    pub fn bounds(&self) -> (usize, usize) {
        if self.count == 0 {
            return (self.start, self.start);
        }
        let last = self.index(self.count - 1);
        (self.start.min(last), self.start.max(last) + 1)
    }

    /// The `k`-th index.
    #[must_use]
    pub fn index(&self, k: usize) -> usize {
        // Within the axis (0..size, a usize) by construction (see `Region::resolve`).
        let i = i128::try_from(self.start).unwrap_or(0) + i128::try_from(k).unwrap_or(0) * i128::from(self.step);
        usize::try_from(i).unwrap_or(0)
    }
}

/// A region resolved against an array's shape: one [`Span`] per axis of the array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// The spans, one per axis.
    pub spans: Vec<Span>,
}

impl Region {
    /// The region over an array of shape `shape`, as numpy resolves it.
    ///
    /// # Errors
    /// [`RegionError`] for more axes than the array has, or an index out of bounds.
    pub fn resolve(&self, shape: &[usize]) -> Result<Selection, RegionError> {
        let given = self.slices.iter().filter(|s| **s != Slice::Ellipsis).count();
        if given > shape.len() {
            return Err(RegionError::TooManyAxes {
                region: given,
                array: shape.len(),
            });
        }
        let mut slices: Vec<Slice> = Vec::with_capacity(shape.len());
        for s in &self.slices {
            if *s == Slice::Ellipsis {
                slices.extend(std::iter::repeat_n(
                    Slice::Range {
                        start: None,
                        stop: None,
                        step: None,
                    },
                    shape.len() - given,
                ));
            } else {
                slices.push(*s);
            }
        }
        while slices.len() < shape.len() {
            slices.push(Slice::Range {
                start: None,
                stop: None,
                step: None,
            });
        }
        let spans = slices
            .iter()
            .zip(shape)
            .enumerate()
            .map(|(axis, (s, &size))| span(*s, axis, size))
            .collect::<Result<_, _>>()?;
        Ok(Selection { spans })
    }
}

/// An axis of size `size` sliced by `s`, as Python's `slice.indices` and integer indexing do.
fn span(s: Slice, axis: usize, size: usize) -> Result<Span, RegionError> {
    let n = i64::try_from(size).unwrap_or(i64::MAX);
    match s {
        Slice::Index(i) => {
            let j = if i < 0 { i + n } else { i };
            if j < 0 || j >= n {
                return Err(RegionError::OutOfBounds { index: i, axis, size });
            }
            Ok(Span {
                start: usize::try_from(j).unwrap_or(0),
                step: 1,
                count: 1,
                keep: false,
            })
        }
        Slice::Range { start, stop, step } => {
            // In i128: every i64 bound plus or minus an axis length, and a step of i64::MIN
            // negated, fit (Python's `slice.indices`, which has no overflow).
            let step = i128::from(step.unwrap_or(1));
            if step == 0 {
                return Err(RegionError::ZeroStep);
            }
            let n = i128::from(n);
            let clamp = |v: Option<i64>, default: i128, lo: i128, hi: i128| match v.map(i128::from) {
                None => default,
                Some(v) if v < 0 => (v + n).max(lo),
                Some(v) => v.min(hi),
            };
            let (start, stop) = if step > 0 {
                (clamp(start, 0, 0, n), clamp(stop, n, 0, n))
            } else {
                (clamp(start, n - 1, -1, n - 1), clamp(stop, -1, -1, n - 1))
            };
            let count = if step > 0 {
                if stop > start {
                    (stop - start + step - 1) / step
                } else {
                    0
                }
            } else if start > stop {
                (start - stop - step - 1) / (-step)
            } else {
                0
            };
            // An axis of at most one index takes no step (a step near 2^63 times a stride
            // would overflow the view's arithmetic for nothing).
            let step = if count <= 1 {
                1
            } else {
                i64::try_from(step).unwrap_or(1)
            };
            Ok(Span {
                start: if count == 0 {
                    0
                } else {
                    usize::try_from(start).unwrap_or(0)
                },
                step,
                count: usize::try_from(count).unwrap_or(0),
                keep: true,
            })
        }
        Slice::Ellipsis => Ok(Span {
            start: 0,
            step: 1,
            count: size,
            keep: true,
        }),
    }
}

impl Selection {
    /// The shape of the result (the kept axes' counts).
    #[must_use]
    pub fn shape(&self) -> Vec<usize> {
        self.spans.iter().filter(|s| s.keep).map(|s| s.count).collect()
    }

    /// How many elements it selects.
    #[must_use]
    pub fn count(&self) -> usize {
        self.spans.iter().map(|s| s.count).product()
    }

    /// The smallest box holding it: per axis, the first index and how many.
    #[must_use]
    pub fn bounding_box(&self) -> (Vec<usize>, Vec<usize>) {
        self.spans
            .iter()
            .map(|s| {
                let (lo, hi) = s.bounds();
                (lo, hi - lo)
            })
            .unzip()
    }

    /// The selected elements of `data`, the C-ordered elements of the box `bounding_box`
    /// gives, in C order of the selection.
    #[must_use]
    pub fn gather<T: Copy>(&self, data: &[T]) -> Vec<T> {
        let (lo, extent) = self.bounding_box();
        self.gather_in(&lo, &extent, data)
    }

    /// The selected elements of `data`, the C-ordered elements of the box starting at `lo`
    /// with extent `extent` (which must hold the selection), in C order of the selection.
    #[must_use]
    pub fn gather_in<T: Copy>(&self, lo: &[usize], extent: &[usize], data: &[T]) -> Vec<T> {
        let mut strides = vec![1usize; extent.len()];
        for d in (0..extent.len().saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * extent[d + 1];
        }
        let total = self.count();
        let mut out = Vec::with_capacity(total);
        if total == 0 {
            return out;
        }
        let mut k = vec![0usize; self.spans.len()];
        loop {
            let at = offset_in(&self.spans, &k, lo, &strides);
            if let Some(x) = data.get(at) {
                out.push(*x);
            }
            // The next index, last axis fastest.
            if !next_index(&mut k, &self.spans) {
                return out;
            }
        }
    }
}

/// Where index `k` of `spans` is in a box starting at `lo` with `strides` (in the strides'
/// unit); the box holds the selection (zips stop at the shortest: `spans` may be a prefix).
fn offset_in(spans: &[Span], k: &[usize], lo: &[usize], strides: &[usize]) -> usize {
    spans
        .iter()
        .zip(k)
        .zip(lo)
        .zip(strides)
        .map(|(((s, &k), &lo), &st)| (s.index(k) - lo) * st)
        .sum()
}

/// Moves `k` (an index over `spans`, one counter per span) to the next index in C order, the
/// last counter fastest; false after the last.
fn next_index(k: &mut [usize], spans: &[Span]) -> bool {
    for d in (0..k.len()).rev() {
        k[d] += 1;
        if k[d] < spans[d].count {
            return true;
        }
        k[d] = 0;
    }
    false
}

impl Selection {
    /// Whether it is its bounding box (every axis a run of step 1, or one index): then the
    /// box's C-ordered elements are the selection's, as they are.
    #[must_use]
    pub fn is_box(&self) -> bool {
        self.spans.iter().all(|s| s.step == 1 || s.count <= 1)
    }

    /// [`Selection::gather_in`] over bytes, elements of `size` bytes: the box's bytes copied
    /// a run at a time where the last axis has step 1 (one element at a time otherwise).
    #[must_use]
    pub fn gather_bytes_in(&self, lo: &[usize], extent: &[usize], data: &[u8], size: usize) -> Vec<u8> {
        let total = self.count();
        let mut out = Vec::with_capacity(total.saturating_mul(size));
        let n = self.spans.len();
        if total == 0 || n == 0 || lo.len() != n || extent.len() != n {
            if n == 0 && total == 1 {
                out.extend_from_slice(data.get(..size).unwrap_or_default());
            }
            return out;
        }
        let mut strides = vec![size; n];
        for d in (0..n - 1).rev() {
            strides[d] = strides[d + 1] * extent[d + 1];
        }
        let last = &self.spans[n - 1];
        let mut k = vec![0usize; n - 1];
        loop {
            let base = offset_in(&self.spans[..n - 1], &k, lo, &strides);
            if last.step == 1 || last.count <= 1 {
                let from = base + (last.start - lo[n - 1]) * size;
                if let Some(run) = data.get(from..from + last.count * size) {
                    out.extend_from_slice(run);
                }
            } else {
                for j in 0..last.count {
                    let at = base + (last.index(j) - lo[n - 1]) * size;
                    if let Some(x) = data.get(at..at + size) {
                        out.extend_from_slice(x);
                    }
                }
            }
            // The next row, the axis before the last fastest.
            if !next_index(&mut k, &self.spans[..n - 1]) {
                return out;
            }
        }
    }
}

impl View {
    /// The view of the elements `sel` selects (in the same block: offset and strides moved, no
    /// byte copied); within the block whenever this view is.
    #[must_use]
    pub fn select(&self, sel: &Selection) -> View {
        let mut offset = i128::from(self.offset);
        let (mut shape, mut strides) = (Vec::new(), Vec::new());
        for (s, &stride) in sel.spans.iter().zip(&self.strides) {
            if s.count > 0 {
                offset += s.start as i128 * i128::from(stride);
            }
            if s.keep {
                shape.push(s.count);
                strides.push(stride.saturating_mul(s.step));
            }
        }
        View {
            datatype: self.datatype.clone(),
            byteorder: self.byteorder,
            shape,
            strides,
            offset: u64::try_from(offset).unwrap_or(self.offset),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(r: &str, shape: &[usize]) -> Selection {
        r.parse::<Region>().unwrap().resolve(shape).unwrap()
    }

    /// The byte gather gives what the element gather gives (concatenated), for boxes, steps,
    /// reversals and integer indices, elements of 1 to 16 bytes.
    #[test]
    fn byte_gather_equals_element_gather() {
        let shape = [5usize, 7, 6];
        for r in [
            "...",
            "1:4, 2:6, :",
            "::2, ::-1, 1::3",
            "3, :, 2",
            "-1:0:-2, 5, :",
            "0:0, :, :",
            ":, 1:2, 4:5",
            "::-1, ::-2, ::-3",
        ] {
            let s = sel(r, &shape);
            let (lo, extent) = s.bounding_box();
            for size in [1usize, 2, 8, 16] {
                // The box's elements, each `size` bytes naming its position.
                let n: usize = extent.iter().product();
                let data: Vec<u8> = (0..n * size).map(|i| u8::try_from(i % 251).unwrap()).collect();
                let elements: Vec<&[u8]> = data.chunks_exact(size).collect();
                let want = s.gather_in(&lo, &extent, &elements).concat();
                assert_eq!(s.gather_bytes_in(&lo, &extent, &data, size), want, "{r} size {size}");
                if s.is_box() {
                    assert_eq!(want, data, "{r}: a box is its own bytes");
                }
            }
        }
    }

    /// Every slice of a short axis, against the indices Python's `range(n)[start:stop:step]` gives.
    #[test]
    fn slices_resolve_as_python_does() {
        fn python(n: i64, start: Option<i64>, stop: Option<i64>, step: i64) -> Vec<i64> {
            // The reference: Python's rules, spelled out on an explicit list.
            let norm = |v: i64| if v < 0 { v + n } else { v };
            let (mut out, mut i) = (Vec::new(), 0i64);
            if step > 0 {
                let a = start.map_or(0, |v| norm(v).clamp(0, n));
                let b = stop.map_or(n, |v| norm(v).clamp(0, n));
                i = a;
                while i < b {
                    out.push(i);
                    i += step;
                }
            } else {
                let a = start.map_or(n - 1, |v| norm(v).clamp(-1, n - 1));
                let b = stop.map_or(-1, |v| norm(v).clamp(-1, n - 1));
                i += a;
                while i > b {
                    out.push(i);
                    i += step;
                }
            }
            out
        }
        let opts = [
            None,
            Some(-9),
            Some(-3),
            Some(-1),
            Some(0),
            Some(1),
            Some(2),
            Some(5),
            Some(9),
        ];
        for n in [0i64, 1, 5] {
            for start in opts {
                for stop in opts {
                    for step in [-3i64, -1, 1, 2, 4] {
                        let s = span(
                            Slice::Range {
                                start,
                                stop,
                                step: Some(step),
                            },
                            0,
                            usize::try_from(n).unwrap(),
                        )
                        .unwrap();
                        let got: Vec<i64> = (0..s.count).map(|k| s.index(k) as i64).collect();
                        assert_eq!(got, python(n, start, stop, step), "n={n} {start:?}:{stop:?}:{step}");
                    }
                }
            }
        }
    }

    #[test]
    fn parse_and_shape() {
        assert_eq!(sel("", &[3, 4]).shape(), vec![3, 4]);
        assert_eq!(sel("...", &[3, 4]).shape(), vec![3, 4]);
        assert_eq!(sel("1", &[3, 4]).shape(), vec![4]);
        assert_eq!(sel("..., 1", &[3, 4, 5]).shape(), vec![3, 4]);
        assert_eq!(sel("1:3, ..., ::-2", &[3, 4, 5]).shape(), vec![2, 4, 3]);
        assert_eq!(sel(" 100:300 , 1400:1600 ", &[500, 2000]).shape(), vec![200, 200]);
        // numpy's `a[0,]` and `a[1:3,]`: one trailing comma.
        assert_eq!(sel("0,", &[3, 4]).shape(), vec![4]);
        assert_eq!(sel("1:3, ", &[3, 4]).shape(), vec![2, 4]);
        for bad in [",", "0,,", ",0"] {
            assert!(bad.parse::<Region>().is_err(), "{bad}");
        }
        let e = |r: &str, shape: &[usize]| r.parse::<Region>().and_then(|r| r.resolve(shape)).unwrap_err();
        assert_eq!(e("1:2:0", &[3]), RegionError::ZeroStep);
        assert_eq!(e("..., ...", &[3]), RegionError::Ellipses);
        assert_eq!(e("1, 2", &[3]), RegionError::TooManyAxes { region: 2, array: 1 });
        assert_eq!(
            e("3", &[3]),
            RegionError::OutOfBounds {
                index: 3,
                axis: 0,
                size: 3
            }
        );
        assert_eq!(
            e("-4", &[3]),
            RegionError::OutOfBounds {
                index: -4,
                axis: 0,
                size: 3
            }
        );
        assert!(matches!(e("a:b", &[3]), RegionError::Syntax(_)));
        assert!(matches!(e("1:2:3:4", &[3]), RegionError::Syntax(_)));
    }

    #[test]
    fn gather_follows_the_selection() {
        // A 4x5 array holding its flat index.
        let data: Vec<usize> = (0..20).collect();
        let s = sel("1:4:2, ::-2", &[4, 5]);
        let (lo, ext) = s.bounding_box();
        assert_eq!((lo.clone(), ext.clone()), (vec![1, 0], vec![3, 5]));
        let boxed: Vec<usize> = (lo[0]..lo[0] + ext[0])
            .flat_map(|i| (lo[1]..lo[1] + ext[1]).map(move |j| i * 5 + j))
            .collect();
        assert_eq!(s.gather(&boxed), vec![9, 7, 5, 19, 17, 15]);
        let s = sel("2", &[4, 5]);
        let (lo, _) = s.bounding_box();
        assert_eq!(s.gather(&data[lo[0] * 5..lo[0] * 5 + 5]), vec![10, 11, 12, 13, 14]);
    }
}
