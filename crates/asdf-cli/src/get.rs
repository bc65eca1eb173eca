//! `get`: one array, or a region of it, as a `.npy` file numpy loads or as JSON.

use std::io::Write as _;
use std::process::ExitCode;

use asdf::{ByteOrder, Datatype, Element, ScalarType};

use crate::output;
use crate::schemas::read_options;

/// Write an array, or a region of it (numpy's basic slicing), as .npy or JSON; only what the
/// region touches is read. Numbers of every kind (integers, float16 to float64, complex64 and
/// complex128) and booleans; big-endian arrays are written little-endian
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The ASDF file (or URL).
    pub file: std::path::PathBuf,
    /// The array's JSON pointer (`/sci/data`; `~e<i>` names a mapping's entry by position, for
    /// a key no text names, as `search` prints it).
    pointer: String,
    /// The region, as numpy slices it: `"100:300, 1400:1600"`, `"2, ..."`, `"::-1"`.
    #[arg(long, allow_hyphen_values = true)]
    slice: Option<String>,
    /// Output file, its format named by its extension: `.npy` (numpy's format: `<f2`, `<c8`,
    /// `<c16`... little-endian), `.json` (as `to-json` writes arrays: complex values as
    /// strings such as "(1+2j)") or `.asdf` (the region at `/data`, and the file's WCS moved to
    /// the cutout at `/wcs`: its pixel (0, 0) is the region's corner); another extension is a
    /// usage error; a device or FIFO gets JSON. Default: JSON on standard output. Never one of
    /// the files read.
    #[arg(short, long)]
    output: Option<std::path::PathBuf>,
    /// The gwcs WCS an `.asdf` cutout carries (its JSON pointer); default: the file's first,
    /// when the region keeps every axis with step 1.
    #[arg(long, value_name = "POINTER")]
    wcs: Option<String>,
}

/// The extensions `get` writes (the first is what a device or FIFO gets).
const WRITES: &[&str] = &["json", "npy", "asdf"];

impl Args {
    pub fn run(&self) -> Result<ExitCode, asdf::Error> {
        let region: asdf::Region = match self.slice.as_deref().unwrap_or("").parse() {
            Ok(r) => r,
            Err(e) => {
                crate::report::error(&format!("--slice: {e}"));
                return Ok(ExitCode::from(2));
            }
        };
        let format = match &self.output {
            None => "json",
            Some(out) => {
                match output::refuse_input_path(&self.file, out).map(|()| output::format("get", out, WRITES))? {
                    Ok(f) => f,
                    Err(code) => return Ok(code),
                }
            }
        };
        let file = asdf::Open::path_or_url(&self.file).options(read_options()).open()?;
        if let Some(out) = &self.output {
            output::refuse_inputs(&file, std::slice::from_ref(out), output::Own::Refused)?;
        }
        let a = file.array(&self.pointer)?;
        if a.is_masked() {
            // Its values alone would read as valid where the file masks them.
            crate::report::error(&format!(
                "{}: the array is masked, and `get` writes no masks (a .npy file has no place for one); `to-json` writes it with its mask",
                self.pointer
            ));
            return Ok(ExitCode::from(1));
        }
        let shape = a.region_shape(&region)?;
        if let Err(e) = a.refuse_repeated(&shape) {
            crate::report::error(&format!("{e}; take a smaller region with --slice"));
            return Ok(ExitCode::from(1));
        }
        let Some((descr, bytes)) = region_bytes(&a, &region)? else {
            crate::report::error(&format!(
                "{}: `get` writes arrays of numbers and booleans; this one holds {}",
                self.pointer,
                a.datatype()
            ));
            return Ok(ExitCode::from(1));
        };
        if format == "asdf" {
            let out = self.output.as_deref().unwrap_or(std::path::Path::new(""));
            return write_cutout(&file, &a, &region, &shape, bytes, self.wcs.as_deref(), out);
        }
        if format == "npy" {
            let out = self.output.as_deref().unwrap_or(std::path::Path::new(""));
            asdf::write_atomically(out, |w| write_npy(w, descr, &shape, &bytes))?;
            eprintln!("wrote {}", out.display());
            return Ok(ExitCode::SUCCESS);
        }
        let Datatype::Scalar(t) = a.datatype() else {
            return Ok(ExitCode::from(1));
        };
        // Written element by element as the text is made (memory: the region's bytes).
        let datatype = a.datatype().to_string();
        let write = |w: &mut dyn std::io::Write| write_json(w, &datatype, &shape, *t, &bytes);
        match &self.output {
            None => {
                let mut out = std::io::BufWriter::new(std::io::stdout().lock());
                write(&mut out)
                    .and_then(|()| out.flush())
                    .map_err(|source| asdf::Error::Io {
                        path: "<stdout>".into(),
                        source,
                    })?;
            }
            Some(out) => {
                asdf::write_atomically(out, |w| {
                    let mut b = std::io::BufWriter::new(w);
                    write(&mut b)?;
                    b.flush()
                })?;
                eprintln!("wrote {}", out.display());
            }
        }
        Ok(ExitCode::SUCCESS)
    }
}

/// An ASDF file of the region (`/data`) and the WCS moved to it (`/wcs`).
fn write_cutout(
    file: &asdf::AsdfFile,
    a: &asdf::Array<'_>,
    region: &asdf::Region,
    shape: &[usize],
    bytes: Vec<u8>,
    wcs: Option<&str>,
    out: &std::path::Path,
) -> Result<ExitCode, asdf::Error> {
    use asdf_wcs::WcsExt as _;
    let mut new = asdf::AsdfFile::new(asdf::Version::STANDARD_LATEST)?;
    let datatype = a.datatype().clone();
    new.put_array(
        "/data",
        asdf::NewArray::from_bytes(datatype, shape, ByteOrder::Little, bytes),
    )?;
    let pointer = match wcs {
        Some(p) => Some(p.to_owned()),
        None => file.wcs_pointers().into_iter().next(),
    };
    if let Some(p) = pointer {
        let sel = region.resolve(a.shape()).map_err(|e| asdf::Error::Region {
            pointer: a.pointer().to_owned(),
            source: e,
        })?;
        // The WCS's pixel axes are the array's axes reversed (x, the last array axis, first).
        let fits = sel.spans.iter().all(|s| s.keep && s.step == 1);
        match (fits, wcs.is_some()) {
            (true, _) => {
                #[allow(clippy::cast_precision_loss)]
                let origin: Vec<f64> = sel.spans.iter().rev().map(|s| s.start as f64).collect();
                let size: Vec<usize> = sel.spans.iter().rev().map(|s| s.count).collect();
                match asdf_wcs::cutout_node(file, &p, &origin, &size, asdf::Version::STANDARD_LATEST) {
                    Ok(node) => {
                        new.set("/wcs", node)?;
                    }
                    Err(e) if wcs.is_some() => {
                        crate::report::error(&e.to_string());
                        return Ok(ExitCode::from(1));
                    }
                    Err(e) => crate::report::warning(&format!("the cutout carries no WCS: {e}")),
                }
            }
            (false, true) => {
                crate::report::error(
                    "--wcs: a cutout carries a WCS only when the region keeps every axis, with step 1",
                );
                return Ok(ExitCode::from(2));
            }
            (false, false) => {
                crate::report::warning("the cutout carries no WCS: the region drops an axis or steps by more than 1")
            }
        }
    }
    new.write(out, &asdf::WriteOptions::default())?;
    eprintln!("wrote {}", out.display());
    Ok(ExitCode::SUCCESS)
}

/// numpy's type string of a scalar type, little-endian (`None` for types `get` does not write).
fn descr(t: ScalarType) -> Option<&'static str> {
    Some(match t {
        ScalarType::Bool8 => "|b1",
        ScalarType::Int8 => "|i1",
        ScalarType::Int16 => "<i2",
        ScalarType::Int32 => "<i4",
        ScalarType::Int64 => "<i8",
        ScalarType::UInt8 => "|u1",
        ScalarType::UInt16 => "<u2",
        ScalarType::UInt32 => "<u4",
        ScalarType::UInt64 => "<u8",
        ScalarType::Float16 => "<f2",
        ScalarType::Float32 => "<f4",
        ScalarType::Float64 => "<f8",
        ScalarType::Complex64 => "<c8",
        ScalarType::Complex128 => "<c16",
        _ => return None,
    })
}

/// The size of the numbers an element of `t` is made of (a complex element is two).
fn part_size(t: ScalarType) -> usize {
    match t {
        ScalarType::Complex64 | ScalarType::Complex128 => t.size() / 2,
        _ => t.size(),
    }
}

/// The region's elements as little-endian bytes with numpy's type string (`None` for
/// datatypes `get` does not write). Memory is checked before the region is read.
fn region_bytes(a: &asdf::Array<'_>, r: &asdf::Region) -> Result<Option<(&'static str, Vec<u8>)>, asdf::Error> {
    let Datatype::Scalar(t) = a.datatype() else {
        return Ok(None);
    };
    let t = *t;
    let Some(descr) = descr(t) else {
        return Ok(None);
    };
    let shape = a.region_shape(r)?;
    let count = shape.iter().fold(1usize, |n, d| n.saturating_mul(*d));
    let size = t.size();
    if a.view().is_err() {
        // Inline: the tree's elements, cut to the region.
        asdf_preview::check_memory(
            a.pointer(),
            a.shape().iter().fold(1usize, |n, d| n.saturating_mul(*d)),
            48,
        )?;
        let all = a.values()?;
        let sel = r.resolve(&all.shape).map_err(|source| asdf::Error::Region {
            pointer: a.pointer().to_owned(),
            source,
        })?;
        let index: Vec<usize> = (0..all.elements.len()).collect();
        let picked = sel.gather_in(&vec![0; all.shape.len()], &all.shape, &index);
        let mut out = Vec::with_capacity(picked.len() * size);
        let bad = || asdf::Error::Array {
            pointer: a.pointer().to_owned(),
            source: asdf::NdArrayError::Invalid("data"),
        };
        for i in picked {
            element_le(t, all.elements.get(i).ok_or_else(bad)?, &mut out).ok_or_else(bad)?;
        }
        return Ok(Some((descr, out)));
    }
    // The region's bytes as read (in the array's byte order), then swapped in place.
    asdf_preview::check_memory(a.pointer(), count, size)?;
    let asdf::RegionBytes {
        mut bytes,
        byte_order: order,
        ..
    } = a.read_region(r)?;
    if order == ByteOrder::Big {
        let n = part_size(t);
        if n > 1 {
            for part in bytes.chunks_exact_mut(n) {
                part.reverse();
            }
        }
    }
    Ok(Some((descr, bytes)))
}

/// Appends the little-endian bytes of an element of an inline array of type `t` (decoded as
/// that type: `None` for an element that is not a value of it).
fn element_le(t: ScalarType, e: &Element, out: &mut Vec<u8>) -> Option<()> {
    let int = |e: &Element| match e {
        Element::Int(i) => Some(i128::from(*i)),
        Element::UInt(u) => Some(i128::from(*u)),
        Element::Bool(b) => Some(i128::from(*b)),
        _ => None,
    };
    let float = |e: &Element| match e {
        Element::Float(f) => Some(*f),
        Element::Int(i) => Some(*i as f64),
        Element::UInt(u) => Some(*u as f64),
        _ => None,
    };
    let complex = |e: &Element| match e {
        Element::Complex(c) => Some(*c),
        e => float(e).map(|f| asdf::Complex::new(f, 0.0)),
    };
    match t {
        ScalarType::Bool8 => out.push(u8::from(match e {
            Element::Bool(b) => *b,
            e => int(e)? != 0,
        })),
        ScalarType::Int8 => out.extend(i8::try_from(int(e)?).ok()?.to_le_bytes()),
        ScalarType::Int16 => out.extend(i16::try_from(int(e)?).ok()?.to_le_bytes()),
        ScalarType::Int32 => out.extend(i32::try_from(int(e)?).ok()?.to_le_bytes()),
        ScalarType::Int64 => out.extend(i64::try_from(int(e)?).ok()?.to_le_bytes()),
        ScalarType::UInt8 => out.extend(u8::try_from(int(e)?).ok()?.to_le_bytes()),
        ScalarType::UInt16 => out.extend(u16::try_from(int(e)?).ok()?.to_le_bytes()),
        ScalarType::UInt32 => out.extend(u32::try_from(int(e)?).ok()?.to_le_bytes()),
        ScalarType::UInt64 => out.extend(u64::try_from(int(e)?).ok()?.to_le_bytes()),
        ScalarType::Float16 => out.extend(f64_to_f16(float(e)?).to_le_bytes()),
        ScalarType::Float32 => out.extend(f64_to_f32(float(e)?).to_le_bytes()),
        ScalarType::Float64 => out.extend(float(e)?.to_le_bytes()),
        ScalarType::Complex64 => {
            let c = complex(e)?;
            out.extend(f64_to_f32(c.re).to_le_bytes());
            out.extend(f64_to_f32(c.im).to_le_bytes());
        }
        ScalarType::Complex128 => {
            let c = complex(e)?;
            out.extend(c.re.to_le_bytes());
            out.extend(c.im.to_le_bytes());
        }
        _ => return None,
    }
    Some(())
}

/// The float32 nearest to `x` (as numpy's `astype(float32)`; an inline float32 element was
/// decoded from one, so this gives it back exactly).
#[allow(clippy::cast_possible_truncation)]
fn f64_to_f32(x: f64) -> f32 {
    x as f32
}

/// IEEE 754 binary16 nearest to `x` (ties to even, as numpy's `astype(float16)`).
// The casts are of values bounded above: a subnormal count below 1025, a significand in
// 1024..=2048, an exponent in -14..=15.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn f64_to_f16(x: f64) -> u16 {
    let sign = if x.is_sign_negative() { 0x8000u16 } else { 0 };
    let a = x.abs();
    if a.is_nan() {
        return sign | 0x7e00;
    }
    // 65520 is half-way between the largest half (65504) and 2^16: it rounds to infinity.
    if a >= 65520.0 {
        return sign | 0x7c00;
    }
    if a < 2f64.powi(-14) {
        // Subnormal (or zero): multiples of 2^-24; 1024 of them is the smallest normal, whose
        // bits are 0x0400 too.
        return sign | (a * 2f64.powi(24)).round_ties_even() as u16;
    }
    // 2^e <= a < 2^(e+1), -14 <= e <= 15.
    let e = i32::try_from((a.to_bits() >> 52) & 0x7ff).unwrap_or(1023) - 1023;
    let mut m = (a * 2f64.powi(10 - e)).round_ties_even() as u32;
    let mut e = e;
    if m == 2048 {
        m = 1024;
        e += 1;
    }
    if e > 15 {
        return sign | 0x7c00;
    }
    sign | ((((e + 15) as u32) << 10) | (m - 1024)) as u16
}

/// The little-endian bytes `region_bytes` made, as elements (for JSON: as `to-json` decodes
/// them).
/// The region as `to-json` writes an array (`{"datatype": ..., "shape": ..., "data": [...]}`,
/// a line), its elements decoded and written a batch at a time.
fn write_json(
    w: &mut dyn std::io::Write,
    datatype: &str,
    shape: &[usize],
    t: ScalarType,
    bytes: &[u8],
) -> std::io::Result<()> {
    let size = t.size().max(1);
    let count = bytes.len() / size;
    if count == 0 || shape.is_empty() {
        // No element (brackets only), or one (0-d).
        let mut json = asdf_tools::json::array_to_json(datatype, shape, &elements(t, bytes));
        json.push('\n');
        return w.write_all(json.as_bytes());
    }
    let head = asdf_tools::json::array_to_json(datatype, shape, &[]);
    // `{"datatype": ..., "shape": [...], "data": ` and the data's opening.
    let cut = head.find("\"data\": ").map_or(head.len(), |i| i + "\"data\": ".len());
    w.write_all(&head.as_bytes()[..cut])?;
    // Brackets open and close as the flat index crosses each dimension's rows.
    let spans: Vec<usize> = (0..shape.len()).map(|d| shape[d..].iter().product::<usize>()).collect();
    let mut text = String::new();
    for (batch, chunk) in bytes.chunks(size * 65_536).enumerate() {
        text.clear();
        for (j, e) in elements(t, chunk).iter().enumerate() {
            let k = batch * 65_536 + j;
            if k > 0 {
                for span in spans.iter().rev() {
                    if k % span == 0 {
                        text.push(']');
                    }
                }
                text.push_str(", ");
            }
            for span in &spans {
                if k % span == 0 {
                    text.push('[');
                }
            }
            text.push_str(&asdf_tools::json::element_text(e));
        }
        w.write_all(text.as_bytes())?;
    }
    w.write_all("]".repeat(shape.len()).as_bytes())?;
    w.write_all(b"}\n")
}

fn elements(t: ScalarType, b: &[u8]) -> Vec<Element> {
    let n = t.size();
    b.chunks_exact(n)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..n.min(8)].copy_from_slice(&c[..n.min(8)]);
            let f32_at = |k: usize| f32::from_le_bytes([c[k], c[k + 1], c[k + 2], c[k + 3]]);
            let f64_at = |k: usize| {
                let mut x = [0u8; 8];
                x.copy_from_slice(&c[k..k + 8]);
                f64::from_le_bytes(x)
            };
            match t {
                ScalarType::Bool8 => Element::Bool(c[0] != 0),
                ScalarType::Int8 => Element::Int(i64::from(c[0] as i8)),
                ScalarType::Int16 => Element::Int(i64::from(i16::from_le_bytes([c[0], c[1]]))),
                ScalarType::Int32 => Element::Int(i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]]))),
                ScalarType::Int64 => Element::Int(i64::from_le_bytes(w)),
                ScalarType::Float16 => {
                    Element::Float(asdf::core_types::ndarray::f16_to_f64(u16::from_le_bytes([c[0], c[1]])))
                }
                ScalarType::Float32 => Element::Float(f64::from(f32_at(0))),
                ScalarType::Float64 => Element::Float(f64_at(0)),
                ScalarType::Complex64 => {
                    Element::Complex(asdf::Complex::new(f64::from(f32_at(0)), f64::from(f32_at(4))))
                }
                ScalarType::Complex128 => Element::Complex(asdf::Complex::new(f64_at(0), f64_at(8))),
                _ => Element::UInt(u64::from_le_bytes(w)),
            }
        })
        .collect()
}

/// numpy's `.npy` format 1.0: the magic, the version, a header dictionary padded with spaces
/// so that the data starts on a 64-byte boundary, then the data (C order). Written by hand:
/// the element type is known only at run time, and the header is a few lines of a documented
/// format (numpy's `lib.format`), checked by numpy loading what we write.
pub(crate) fn write_npy(w: &mut dyn std::io::Write, descr: &str, shape: &[usize], data: &[u8]) -> std::io::Result<()> {
    let dims = match shape {
        [] => String::new(),
        [d] => format!("{d},"),
        ds => ds.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({dims}), }}");
    // magic (6) + version (2) + length (2) + header + '\n' is a multiple of 64.
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    header.push('\n');
    let len = u16::try_from(header.len()).map_err(|_| std::io::Error::other("npy header too long"))?;
    w.write_all(b"\x93NUMPY\x01\x00")?;
    w.write_all(&len.to_le_bytes())?;
    w.write_all(header.as_bytes())?;
    w.write_all(data)
}
