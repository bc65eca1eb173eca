//! `wcs`: world coordinates of pixels (and pixels of world coordinates) through a file's gwcs
//! WCS, evaluated natively; `info`'s summary of a file's WCS frames.

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;

use asdf_wcs::{Wcs, WcsExt};

use crate::output;
use crate::schemas::read_options;

/// World coordinates through the file's gwcs WCS (as gwcs evaluates them): the world
/// coordinates of one pixel (`wcs FILE X Y`), of a list of points (`--points`), or of every
/// pixel of the bounding box (`--grid`); `--inverse` goes from world to pixel. Pixel
/// coordinates count from 0 at the centre of the first pixel, x (the column) first, as gwcs.
/// Points outside the bounding box give NaN. Without coordinates, the WCS's frames.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The ASDF file (or URL, or a FITS file with an ASDF extension).
    pub file: std::path::PathBuf,
    /// The WCS's JSON pointer (`/meta/wcs`), then the coordinates of one point; without a
    /// pointer, the file's first WCS.
    #[arg(allow_negative_numbers = true)]
    args: Vec<String>,
    /// From world coordinates to pixel coordinates.
    #[arg(long)]
    inverse: bool,
    /// A file of points, one per line, coordinates separated by commas or spaces (`-`:
    /// standard input); lines starting with `#` and a first line of names are skipped.
    #[arg(long, conflicts_with = "grid")]
    points: Option<std::path::PathBuf>,
    /// Every pixel of the bounding box (or of --shape), every --step pixels.
    #[arg(long)]
    grid: bool,
    /// The pixel grid's size when the WCS has no bounding box (`2048,2048`, x first).
    #[arg(long, value_delimiter = ',')]
    shape: Vec<usize>,
    /// The grid's step in pixels.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    step: u64,
    /// The file to write: `.csv` (a header of axis names and units, a row per point) or
    /// `.npy` (float64, shape (points, axes)). Default: the values on standard output.
    #[arg(short, long)]
    output: Option<std::path::PathBuf>,
}

const WRITES: &[&str] = &["csv", "npy"];

impl Args {
    pub fn run(&self) -> Result<ExitCode, asdf::Error> {
        let format = match &self.output {
            Some(o) => {
                output::refuse_input_path(&self.file, o)?;
                match output::format("wcs", o, WRITES) {
                    Ok(f) => Some(f),
                    Err(code) => return Ok(code),
                }
            }
            None => None,
        };
        let file = asdf::Open::path_or_url(&self.file).options(read_options()).open()?;
        if let Some(o) = &self.output {
            output::refuse_inputs(&file, std::slice::from_ref(o), output::Own::Refused)?;
        }
        let (pointer, coords) = match self.args.first() {
            Some(a) if a.starts_with('/') || a.is_empty() => (Some(a.clone()), &self.args[1..]),
            _ => (None, &self.args[..]),
        };
        let pointer = match pointer {
            Some(p) => p,
            None => match file.wcs_pointers().into_iter().next() {
                Some(p) => p,
                None => return usage(&format!("{}: the file has no gwcs WCS", self.file.display())),
            },
        };
        let wcs = match file.wcs(&pointer) {
            Ok(w) => w,
            Err(e) => return fail(&e),
        };
        let mut values = Vec::new();
        for c in coords {
            match c.parse::<f64>() {
                Ok(v) => values.push(v),
                Err(_) => return usage(&format!("{c:?} is not a number")),
            }
        }
        let n_in = if self.inverse {
            wcs.world_n_dim()
        } else {
            wcs.pixel_n_dim()
        };
        // The points: given (one on the command line, or a file's), or a grid made block by
        // block as it is evaluated and written (memory: a block's, whatever the grid's size).
        let points: Points = if let Some(p) = &self.points {
            if !values.is_empty() {
                return usage("give the coordinates on the command line or in --points, not both");
            }
            if self.output.as_deref().is_some_and(|o| asdf::same_file(p, o)) {
                return usage(&format!("refusing to write over {}, which is being read", p.display()));
            }
            match read_points(p, n_in) {
                Ok(c) => Points::Given(c),
                Err(m) => return usage(&m),
            }
        } else if self.grid {
            if !values.is_empty() || self.inverse {
                return usage("--grid takes no coordinates and no --inverse");
            }
            match GridSpec::new(&wcs, &self.shape, self.step) {
                Ok(g) => Points::Grid(g),
                Err(m) => return usage(&m),
            }
        } else if values.is_empty() {
            println!("{}", describe(&pointer, &wcs).trim_end());
            return Ok(ExitCode::SUCCESS);
        } else {
            if values.len() != n_in {
                return usage(&format!(
                    "the WCS takes {n_in} {} coordinates, {} given",
                    if self.inverse { "world" } else { "pixel" },
                    values.len()
                ));
            }
            Points::Given(values.into_iter().map(|v| vec![v]).collect())
        };
        let total = points.len();
        let eval = |lo: usize, hi: usize| -> Result<Vec<Vec<f64>>, asdf_wcs::Error> {
            let cols = points.block(lo, hi);
            let refs: Vec<&[f64]> = cols.iter().map(Vec::as_slice).collect();
            if self.inverse {
                wcs.world_to_pixel(&refs)
            } else {
                wcs.pixel_to_world(&refs)
            }
        };
        let frame = if self.inverse {
            wcs.input_frame()
        } else {
            wcs.output_frame()
        };
        let n_out = if self.inverse {
            wcs.pixel_n_dim()
        } else {
            wcs.world_n_dim()
        };
        let labels: Vec<(String, String)> = (0..n_out)
            .map(|i| {
                let a = frame.axes.get(i);
                let name = a
                    .map(|a| a.name.clone())
                    .filter(|n| !n.is_empty())
                    .unwrap_or_else(|| format!("axis{i}"));
                (name, a.and_then(|a| a.unit.clone()).unwrap_or_default())
            })
            .collect();
        // A WCS error inside a write: carried out as an I/O error, reported as the WCS's.
        let failed: std::cell::RefCell<Option<asdf_wcs::Error>> = std::cell::RefCell::new(None);
        let blocks = |f: &mut dyn FnMut(&[Vec<f64>]) -> std::io::Result<()>| -> std::io::Result<()> {
            let mut lo = 0;
            while lo < total {
                let hi = (lo + BLOCK).min(total);
                match eval(lo, hi) {
                    Ok(r) => f(&r)?,
                    Err(e) => {
                        *failed.borrow_mut() = Some(e);
                        return Err(std::io::Error::other("the WCS could not be evaluated"));
                    }
                }
                lo = hi;
            }
            Ok(())
        };
        let written = match (format, &self.output) {
            (Some("npy"), Some(o)) => asdf::write_atomically(o, |w| {
                let mut w = std::io::BufWriter::new(w);
                crate::get::write_npy(&mut w, "<f8", &[total, n_out], &[])?;
                blocks(&mut |r| {
                    for k in 0..r.first().map_or(0, Vec::len) {
                        for c in r {
                            w.write_all(&c[k].to_le_bytes())?;
                        }
                    }
                    Ok(())
                })?;
                w.flush()
            }),
            (Some(_), Some(o)) => asdf::write_atomically(o, |w| {
                let mut w = std::io::BufWriter::new(w);
                let head: Vec<String> = labels
                    .iter()
                    .map(|(n, u)| if u.is_empty() { n.clone() } else { format!("{n} [{u}]") })
                    .collect();
                writeln!(w, "{}", head.join(","))?;
                blocks(&mut |r| {
                    for k in 0..r.first().map_or(0, Vec::len) {
                        let row: Vec<String> = r.iter().map(|c| c[k].to_string()).collect();
                        writeln!(w, "{}", row.join(","))?;
                    }
                    Ok(())
                })?;
                w.flush()
            }),
            _ if total == 1 => {
                let r = match eval(0, 1) {
                    Ok(r) => r,
                    Err(e) => return fail(&e),
                };
                for ((name, unit), c) in labels.iter().zip(&r) {
                    println!("{name} = {} {unit}", c[0]);
                }
                Ok(())
            }
            _ => {
                let r = blocks(&mut |r| {
                    for k in 0..r.first().map_or(0, Vec::len) {
                        let row: Vec<String> = r.iter().map(|c| c[k].to_string()).collect();
                        println!("{}", row.join(" "));
                    }
                    Ok(())
                });
                if let Some(e) = failed.borrow_mut().take() {
                    return fail(&e);
                }
                r.map_err(|source| asdf::Error::Io {
                    path: "<stdout>".into(),
                    source,
                })
            }
        };
        if let Some(e) = failed.borrow_mut().take() {
            return fail(&e);
        }
        written?;
        if let Some(o) = &self.output {
            eprintln!("wrote {total} point(s) x {n_out} coordinate(s) to {}", o.display());
        }
        Ok(ExitCode::SUCCESS)
    }
}

fn usage(message: &str) -> Result<ExitCode, asdf::Error> {
    Ok(output::usage::<()>(message).err().unwrap_or(ExitCode::from(2)))
}

fn fail(e: &asdf_wcs::Error) -> Result<ExitCode, asdf::Error> {
    crate::report::error(&e.to_string());
    Ok(ExitCode::from(1))
}

/// The points of a text file, one per line.
fn read_points(path: &std::path::Path, n: usize) -> Result<Vec<Vec<f64>>, String> {
    let text = if path.as_os_str() == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s).map_err(|e| format!("standard input: {e}"))?;
        s
    } else {
        std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?
    };
    let mut cols = vec![Vec::new(); n];
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let parts: Vec<&str> = line
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|s| !s.is_empty())
            .collect();
        let nums: Result<Vec<f64>, _> = parts.iter().map(|s| s.parse::<f64>()).collect();
        match nums {
            Ok(v) if v.len() == n => {
                for (c, x) in cols.iter_mut().zip(v) {
                    c.push(x);
                }
            }
            Err(_) if cols[0].is_empty() && i == 0 => {} // a header
            _ => {
                return Err(format!(
                    "{} line {}: expected {n} numbers, found {line:?}",
                    path.display(),
                    i + 1
                ));
            }
        }
    }
    Ok(cols)
}

/// Points evaluated and written at a time.
const BLOCK: usize = 1 << 20;

/// The points of a `wcs` run.
enum Points {
    /// One column per coordinate.
    Given(Vec<Vec<f64>>),
    /// A grid, made block by block.
    Grid(GridSpec),
}

impl Points {
    fn len(&self) -> usize {
        match self {
            Points::Given(c) => c.first().map_or(0, Vec::len),
            Points::Grid(g) => g.total,
        }
    }

    /// Points `lo..hi`, one column per coordinate.
    fn block(&self, lo: usize, hi: usize) -> Vec<Vec<f64>> {
        match self {
            Points::Given(c) => c.iter().map(|col| col[lo..hi].to_vec()).collect(),
            Points::Grid(g) => g.block(lo, hi),
        }
    }
}

/// Every pixel centre of the bounding box (or of `--shape`), every `step`, x fastest.
struct GridSpec {
    /// Per axis: the first pixel, how many, the step.
    first: Vec<i64>,
    counts: Vec<usize>,
    step: usize,
    total: usize,
}

impl GridSpec {
    fn new(wcs: &Wcs, shape: &[usize], step: u64) -> Result<GridSpec, String> {
        let n = wcs.pixel_n_dim();
        let step = usize::try_from(step).unwrap_or(usize::MAX);
        let ranges: Vec<(i64, i64)> = if !shape.is_empty() {
            if shape.len() != n {
                return Err(format!("--shape needs {n} sizes"));
            }
            shape
                .iter()
                .map(|s| (0, i64::try_from(*s).unwrap_or(i64::MAX) - 1))
                .collect()
        } else if let Some(bb) = wcs.bounding_box() {
            bb.iter()
                .enumerate()
                .map(|(i, iv)| {
                    let (lo, hi) = iv.ok_or(format!(
                        "the bounding box ignores pixel axis {i}: give the grid's size with --shape"
                    ))?;
                    if !(lo.is_finite() && hi.is_finite()) {
                        return Err(format!(
                            "the bounding box of pixel axis {i} is not finite: give --shape"
                        ));
                    }
                    #[allow(clippy::cast_possible_truncation)]
                    Ok((lo.ceil() as i64, hi.floor() as i64))
                })
                .collect::<Result<_, String>>()?
        } else {
            return Err("the WCS has no bounding box: give the grid's size with --shape".into());
        };
        let counts: Vec<usize> = ranges
            .iter()
            .map(|(lo, hi)| {
                if hi < lo {
                    0
                } else {
                    usize::try_from(hi - lo).unwrap_or(0) / step + 1
                }
            })
            .collect();
        let total = counts
            .iter()
            .try_fold(1usize, |a, c| a.checked_mul(*c))
            .ok_or("the grid has more points than can be counted; use a larger --step")?;
        Ok(GridSpec {
            first: ranges.iter().map(|r| r.0).collect(),
            counts,
            step,
            total,
        })
    }

    #[allow(clippy::cast_precision_loss)]
    fn block(&self, lo: usize, hi: usize) -> Vec<Vec<f64>> {
        let n = self.counts.len();
        let mut cols = vec![Vec::with_capacity(hi - lo); n];
        for k in lo..hi {
            let mut rest = k;
            for (d, col) in cols.iter_mut().enumerate() {
                let i = rest % self.counts[d].max(1);
                rest /= self.counts[d].max(1);
                let offset = i64::try_from(i.saturating_mul(self.step)).unwrap_or(i64::MAX);
                col.push(self.first[d].saturating_add(offset) as f64);
            }
        }
        cols
    }
}

/// The frames and steps of a WCS, for `info` and `wcs FILE`.
pub fn describe(pointer: &str, wcs: &Wcs) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "WCS {pointer}{}: {} pixel axes -> {} world axes",
        if wcs.name().is_empty() {
            String::new()
        } else {
            format!(" ({})", wcs.name())
        },
        wcs.pixel_n_dim(),
        wcs.world_n_dim()
    );
    for (i, st) in wcs.steps().iter().enumerate() {
        let f = &st.frame;
        let axes: Vec<String> = f
            .axes
            .iter()
            .map(|a| {
                let mut t = if a.name.is_empty() {
                    "?".to_owned()
                } else {
                    a.name.clone()
                };
                if let Some(u) = &a.unit {
                    let _ = write!(t, " [{u}]");
                }
                if let Some(p) = &a.physical_type {
                    let _ = write!(t, " {p}");
                }
                t
            })
            .collect();
        let _ = writeln!(s, "  frame {i}: {} ({:?}): {}", f.name, f.kind, axes.join(", "));
        if let Some(t) = &st.transform {
            let _ = writeln!(s, "    transform {} -> {}: {}", t.n_inputs(), t.n_outputs(), t.tag());
        }
    }
    if let Some(bb) = wcs.bounding_box() {
        let parts: Vec<String> = bb
            .iter()
            .map(|iv| iv.map_or_else(|| "ignored".to_owned(), |(a, b)| format!("[{a}, {b}]")))
            .collect();
        let _ = writeln!(s, "  bounding box: {}", parts.join(" x "));
    }
    s
}
