//! `get`: one array, or a region of it, as a `.npy` file numpy loads or as JSON.

use std::io::Write as _;
use std::process::ExitCode;

use asdf::{Datatype, Element, ScalarType};

use crate::schemas::read_options;

/// Write an array, or a region of it (numpy's basic slicing), as .npy or JSON; only what the
/// region touches is read
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The ASDF file (or URL).
    pub file: std::path::PathBuf,
    /// The array's JSON pointer (`/sci/data`).
    pointer: String,
    /// The region, as numpy slices it: `"100:300, 1400:1600"`, `"2, ..."`, `"::-1"`.
    #[arg(long, allow_hyphen_values = true)]
    slice: Option<String>,
    /// Output file: `.npy` (numpy's format) or `.json` (as `to-json` writes arrays); default:
    /// JSON on standard output.
    #[arg(short, long)]
    output: Option<std::path::PathBuf>,
}

impl Args {
    pub fn run(&self) -> Result<ExitCode, asdf::Error> {
        let region: asdf::Region = match self.slice.as_deref().unwrap_or("").parse() {
            Ok(r) => r,
            Err(e) => {
                crate::report::error(&format!("--slice: {e}"));
                return Ok(ExitCode::from(2));
            }
        };
        let file = asdf::Open::path_or_url(&self.file).options(read_options()).open()?;
        let a = file.array(&self.pointer)?;
        let shape = a.region_shape(&region)?;
        let Some((descr, bytes)) = region_bytes(&a, &region)? else {
            crate::report::error(&format!(
                "{}: `get` writes arrays of numbers and booleans; this one holds {}",
                self.pointer,
                a.datatype()
            ));
            return Ok(ExitCode::from(1));
        };
        let npy = self
            .output
            .as_deref()
            .is_some_and(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("npy")));
        if npy {
            let out = self.output.as_deref().unwrap_or(std::path::Path::new(""));
            asdf::write_atomically(out, |w| write_npy(w, descr, &shape, &bytes))?;
            eprintln!("wrote {}", out.display());
            return Ok(ExitCode::SUCCESS);
        }
        let elements = elements(a.datatype(), &bytes);
        let mut json = asdf::json::array_to_json(&a.datatype().to_string(), &shape, &elements);
        json.push('\n');
        match &self.output {
            None => std::io::stdout()
                .write_all(json.as_bytes())
                .map_err(|source| asdf::Error::Io {
                    path: "<stdout>".into(),
                    source,
                })?,
            Some(out) => {
                asdf::write_atomically(out, |w| w.write_all(json.as_bytes()))?;
                eprintln!("wrote {}", out.display());
            }
        }
        Ok(ExitCode::SUCCESS)
    }
}

/// The region's elements as little-endian bytes with numpy's type string (`None` for
/// datatypes `get` does not write).
fn region_bytes(a: &asdf::Array<'_>, r: &asdf::Region) -> Result<Option<(&'static str, Vec<u8>)>, asdf::Error> {
    fn le<T: asdf::Scalar, const N: usize>(
        a: &asdf::Array<'_>,
        r: &asdf::Region,
        f: impl Fn(T) -> [u8; N],
    ) -> Result<Vec<u8>, asdf::Error> {
        Ok(a.read_region::<T>(r)?.into_iter().flat_map(f).collect())
    }
    let Datatype::Scalar(t) = a.datatype() else {
        return Ok(None);
    };
    Ok(Some(match t {
        ScalarType::Bool8 => ("|b1", le::<bool, 1>(a, r, |x| [u8::from(x)])?),
        ScalarType::Int8 => ("|i1", le::<i8, 1>(a, r, i8::to_le_bytes)?),
        ScalarType::Int16 => ("<i2", le::<i16, 2>(a, r, i16::to_le_bytes)?),
        ScalarType::Int32 => ("<i4", le::<i32, 4>(a, r, i32::to_le_bytes)?),
        ScalarType::Int64 => ("<i8", le::<i64, 8>(a, r, i64::to_le_bytes)?),
        ScalarType::UInt8 => ("|u1", le::<u8, 1>(a, r, u8::to_le_bytes)?),
        ScalarType::UInt16 => ("<u2", le::<u16, 2>(a, r, u16::to_le_bytes)?),
        ScalarType::UInt32 => ("<u4", le::<u32, 4>(a, r, u32::to_le_bytes)?),
        ScalarType::UInt64 => ("<u8", le::<u64, 8>(a, r, u64::to_le_bytes)?),
        ScalarType::Float32 => ("<f4", le::<f32, 4>(a, r, f32::to_le_bytes)?),
        ScalarType::Float64 => ("<f8", le::<f64, 8>(a, r, f64::to_le_bytes)?),
        _ => return Ok(None),
    }))
}

/// The little-endian bytes `region_bytes` made, as elements (for JSON).
fn elements(dt: &Datatype, b: &[u8]) -> Vec<Element> {
    let Datatype::Scalar(t) = dt else { return Vec::new() };
    let n = t.size();
    b.chunks_exact(n)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..n].copy_from_slice(c);
            match t {
                ScalarType::Bool8 => Element::Bool(c[0] != 0),
                ScalarType::Int8 => Element::Int(i64::from(c[0] as i8)),
                ScalarType::Int16 => Element::Int(i64::from(i16::from_le_bytes([c[0], c[1]]))),
                ScalarType::Int32 => Element::Int(i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]]))),
                ScalarType::Int64 => Element::Int(i64::from_le_bytes(w)),
                ScalarType::Float32 => Element::Float(f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]]))),
                ScalarType::Float64 => Element::Float(f64::from_le_bytes(w)),
                _ => Element::UInt(u64::from_le_bytes(w)),
            }
        })
        .collect()
}

/// numpy's `.npy` format 1.0: the magic, the version, a header dictionary padded with spaces
/// so that the data starts on a 64-byte boundary, then the data (C order). Written by hand:
/// the element type is known only at run time, and the header is a few lines of a documented
/// format (numpy's `lib.format`), checked by numpy loading what we write.
fn write_npy(w: &mut dyn std::io::Write, descr: &str, shape: &[usize], data: &[u8]) -> std::io::Result<()> {
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
