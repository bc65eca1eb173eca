//! `to-yaml`: the tree as pure YAML, every array inlined.

use std::process::ExitCode;

use asdf::Node;

use crate::out;
use crate::schemas::read_options;

/// Write the tree as pure YAML (an ASDF file without blocks), every array inlined.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The ASDF file.
    pub file: std::path::PathBuf,
    /// Output file, named `.yaml`, `.yml` or `.asdf` (the text is an ASDF file without
    /// blocks; a device or FIFO gets it too); default: standard output. Never one of the files
    /// read.
    #[arg(short, long)]
    output: Option<std::path::PathBuf>,
}

impl Args {
    pub fn run(&self) -> Result<ExitCode, asdf::Error> {
        to_yaml(&self.file, self.output.as_deref())
    }
}

/// The most elements `to-yaml` inlines for one array (about 1 GiB of tree in memory).
const MAX_INLINE_ELEMENTS: usize = 10_000_000;

fn to_yaml(path: &std::path::Path, out: Option<&std::path::Path>) -> Result<ExitCode, asdf::Error> {
    if let Some(o) = out {
        crate::output::refuse_input_path(path, o)?;
    }
    if let Some(o) = out
        && let Err(code) = crate::output::format("to-yaml", o, &["yaml", "yml", "asdf"])
    {
        return Ok(code);
    }
    let file = asdf::Open::path_or_url(path).options(read_options()).open()?;
    if let Some(o) = out {
        crate::output::refuse_inputs(&file, &[o.to_path_buf()], crate::output::Own::Refused)?;
    }
    let mut doc = file.document().clone();
    // Chunked arrays too (asdf-zarr's, ASDF.jl's): inlined as core ndarrays of the file's
    // standard (their chunks in blocks would be lost: the output has no blocks).
    let ndarrays: std::collections::HashSet<String> = file.array_pointers().into_iter().collect();
    let ndarray_tag = asdf::tag_for(file.standard_version(), "core/ndarray")?;
    for p in file.all_array_pointers() {
        // Inline YAML is built as a tree before it is written: arrays are inlined up to a
        // size whose tree fits in memory comfortably (to-json streams any size).
        if let Ok(v) = file.array(&p).and_then(|a| a.view().cloned())
            && v.count() > MAX_INLINE_ELEMENTS
        {
            crate::report::error(&format!(
                "{p}: {} elements, more than the {MAX_INLINE_ELEMENTS} `to-yaml` writes inline for one array (its tree is built in memory first); `to-json` streams arrays of any size",
                v.count()
            ));
            return Ok(ExitCode::from(1));
        }
        let a = file.array(&p).and_then(|a| a.values())?;
        let node = asdf_yaml_pointer_get(&doc, &p);
        let tag = if ndarrays.contains(&p) {
            node.and_then(|n| n.tag.as_deref().map(str::to_owned))
                .unwrap_or_default()
        } else {
            ndarray_tag.clone()
        };
        let mut inline = asdf::NdArray::inline(a.datatype, &a.shape, &a.elements).to_node(&tag);
        // Its anchor stays, so that aliases of the array (a FITS HDU's `data` in `_fits`)
        // still name it.
        inline.anchor = node.and_then(|n| n.anchor.clone());
        // The mask goes along: an array mask inlined as booleans, a scalar mask as it is.
        let mask = node.and_then(|n| n.get("mask")).map(|m| doc.resolve(m).clone());
        if let (Some(m), Some(map)) = (mask, inline.as_mapping_mut()) {
            let m = match (&a.mask, m.as_scalar()) {
                (Some(bits), None) => {
                    let bools: Vec<asdf::Element> = bits.iter().map(|b| asdf::Element::Bool(*b)).collect();
                    let dt = asdf::Datatype::Scalar(asdf::ScalarType::Bool8);
                    asdf::NdArray::inline(dt, &a.shape, &bools).to_node(&tag)
                }
                _ => m,
            };
            map.insert("mask", m);
        }
        let _ = asdf::yaml::pointer::set(&mut doc, &p, inline);
    }
    doc.relink();
    let text = asdf::emit_yaml(&doc)?;
    let mut bytes = b"#ASDF 1.0.0\n".to_vec();
    bytes.extend(format!("#ASDF_STANDARD {}\n", file.standard_version()).into_bytes());
    bytes.extend(text);
    emit(out, &bytes)?;
    Ok(ExitCode::SUCCESS)
}

/// Writes `bytes` to standard output, or atomically to `out` (a new file renamed into place
/// only once complete: a full disk or a kill never leaves a partial file, and an output that
/// is the input is replaced only after the input was read).
pub fn emit(out: Option<&std::path::Path>, bytes: &[u8]) -> Result<(), asdf::Error> {
    match out {
        None => out::stdout_bytes(bytes).map_err(|source| asdf::Error::Io {
            path: "<stdout>".into(),
            source,
        }),
        Some(out) => {
            asdf::write_atomically(out, |w| w.write_all(bytes))?;
            eprintln!("wrote {}", out.display());
            Ok(())
        }
    }
}

fn asdf_yaml_pointer_get<'a>(doc: &'a asdf::Document, p: &str) -> Option<&'a Node> {
    asdf::yaml::pointer::get(doc, p).ok()
}
