//! `defragment`, `explode` and `implode`: the file rewritten in another arrangement.

use std::process::ExitCode;

use crate::output;
use crate::report;
use crate::schemas::read_options;

/// Rewrite the file compactly (blocks in tree order, no gaps); `-c none` removes compression.
#[derive(clap::Args, Debug)]
pub struct Defragment {
    /// The ASDF file.
    pub file: std::path::PathBuf,
    /// Output file, named `.asdf` (or `.fits`, `.fit`, `.fts` for ASDF in FITS); the file
    /// itself is rewritten staged (the new file replaces it once complete) and keeps its
    /// format; never a file it refers to.
    #[arg(short, long)]
    output: std::path::PathBuf,
    /// Compression for every block: zlib, bzp2, lz4, zstd, lz4f, blsc, bls2 or none
    /// (default: keep each block's).
    #[arg(short = 'c', long, value_parser = parse_label)]
    compression: Option<asdf::Label>,
    /// Store every array with as many dimensions as CHUNKS has chunked in chunks of that
    /// shape (asdf-zarr's layout: "256,256"), each chunk compressed with `-c` (zlib, bzp2,
    /// zstd, bls2; default none). Arrays chunked already stay as they are.
    #[arg(long, value_name = "CHUNKS", value_parser = parse_chunks)]
    chunks: Option<ChunkShape>,
}

impl Defragment {
    pub fn run(&self) -> Result<ExitCode, asdf::Error> {
        rewrite(
            "defragment",
            &self.file,
            &self.output,
            self.compression,
            self.chunks.as_ref().map(|c| c.0.as_slice()),
        )
    }
}

/// A chunk shape (`--chunks`).
#[derive(Debug, Clone)]
pub struct ChunkShape(pub Vec<usize>);

/// A chunk shape: positive sizes separated by commas.
pub fn parse_chunks(s: &str) -> Result<ChunkShape, String> {
    let dims: Vec<usize> = s
        .split(',')
        .map(|d| d.trim().parse::<usize>().ok().filter(|&d| d > 0))
        .collect::<Option<_>>()
        .ok_or_else(|| format!("`{s}` is not a chunk shape (positive sizes separated by commas, such as 256,256)"))?;
    Ok(ChunkShape(dims))
}

/// Stores the arrays of `file` of `chunks`'s rank chunked, and says how many (and which
/// masked arrays stay ndarrays: an asdf-zarr array has no mask).
pub fn chunk(file: &mut asdf::AsdfFile, chunks: &[usize], compression: Option<asdf::Label>) -> Result<(), asdf::Error> {
    let (done, masked) = file.chunk_arrays(chunks, compression)?;
    if !masked.is_empty() {
        crate::report::warning(&format!(
            "masked arrays left unchunked, as ndarrays with their masks (an asdf-zarr array has no mask): {}",
            masked.join(", ")
        ));
    }
    eprintln!(
        "{} array{} stored in chunks of {chunks:?}{}",
        done.len(),
        if done.len() == 1 { "" } else { "s" },
        if done.is_empty() {
            " (none has that many dimensions)"
        } else {
            ""
        }
    );
    Ok(())
}

/// Write each array block as its own ASDF file beside OUTPUT (exploded form).
#[derive(clap::Args, Debug)]
pub struct Explode {
    /// The ASDF file.
    pub file: std::path::PathBuf,
    /// Output file, named `.asdf` (its blocks go beside it to STEM0000.asdf, STEM0001.asdf,
    /// ...); neither it nor a part may be one of the files read.
    #[arg(short, long)]
    output: std::path::PathBuf,
}

impl Explode {
    pub fn run(&self) -> Result<ExitCode, asdf::Error> {
        output::refuse_input_path(&self.file, &self.output)?;
        if let Err(code) = output::format("explode", &self.output, &["asdf"]) {
            return Ok(code);
        }
        if output::is_special(&self.output) {
            // Its parts would be files beside a device.
            crate::report::error(&format!(
                "{}: `explode` writes regular files (the tree and its parts)",
                self.output.display()
            ));
            return Ok(ExitCode::from(2));
        }
        let f = asdf::Open::path_or_url(&self.file).options(read_options()).open()?;
        let arrays = f.array_pointers().len().max(f.source().layout().block_count());
        output::refuse_inputs(&f, &output::exploded_names(&self.output, arrays), output::Own::Refused)?;
        if let Err(code) = output::refuse_moved_stores(&f, &self.file, &self.output, false) {
            return Ok(code);
        }
        let files = f
            .write(
                &self.output,
                &asdf::WriteOptions::default().validate(false).form(asdf::Form::Exploded),
            )
            .map(|w| w.files().to_vec())?;
        for p in files {
            println!("wrote {}", p.display());
        }
        Ok(ExitCode::SUCCESS)
    }
}

/// Bring the arrays of an exploded file back into one file.
#[derive(clap::Args, Debug)]
pub struct Implode {
    /// The exploded ASDF file.
    pub file: std::path::PathBuf,
    /// Output file, named `.asdf`; never one of the files read (the exploded file or a part).
    #[arg(short, long)]
    output: std::path::PathBuf,
}

impl Implode {
    pub fn run(&self) -> Result<ExitCode, asdf::Error> {
        rewrite("implode", &self.file, &self.output, None, None)
    }
}

/// The codecs this build writes, as the codec registry knows them (plus `none`).
/// The compression labels this build writes (`none` first).
fn writable() -> Vec<asdf::Label> {
    let mut known = asdf::compression::Registry::shared_default().labels();
    known.sort_by_key(|l| l.name());
    known.insert(0, asdf::Label::NONE);
    known
}

/// The `-c` option's value: a label this build writes (a usage error, exit 2, otherwise).
pub fn parse_label(name: &str) -> Result<asdf::Label, String> {
    asdf::Label::from_name(name)
        .filter(|l| writable().contains(l))
        .ok_or_else(|| {
            let names: Vec<String> = writable().iter().map(ToString::to_string).collect();
            format!("unknown compression `{name}` ({})", names.join(", "))
        })
}

/// Whether `out` names a FITS file by its extension (`.fits`, `.fit`, `.fts`).
pub fn fits_extension(out: &std::path::Path) -> bool {
    out.extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .is_some_and(|e| matches!(e.as_str(), "fits" | "fit" | "fts"))
}

fn rewrite(
    command: &str,
    path: &std::path::Path,
    out: &std::path::Path,
    compression: Option<asdf::Label>,
    chunks: Option<&[usize]>,
) -> Result<ExitCode, asdf::Error> {
    let mut file = asdf::Open::path_or_url(path).options(read_options()).open()?;
    // `defragment` rewrites its own file (whatever its name); `implode` never.
    let own = if command == "defragment" {
        output::Own::Rewritten
    } else {
        output::Own::Refused
    };
    let writes: &[&str] = if file.source().fits_asdf_form().is_some() {
        &["asdf", "fits", "fit", "fts"]
    } else {
        &["asdf"]
    };
    output::refuse_inputs(&file, &[out.to_path_buf()], own)?;
    if !(own == output::Own::Rewritten && file.source().is_own_path(out))
        && let Err(code) = output::format(command, out, writes)
    {
        if fits_extension(out) {
            eprintln!("(an ASDF file becomes ASDF in FITS with `convert`)");
        }
        return Ok(code);
    }
    if let Some(chunks) = chunks {
        chunk(&mut file, chunks, compression)?;
    }
    if let Err(code) = output::refuse_moved_stores(&file, path, out, false) {
        return Ok(code);
    }
    let c = compression.map_or(asdf::Compression::Keep, asdf::Compression::All);
    let bar = std::sync::Arc::new(report::Bar::new("writing blocks"));
    let b = bar.clone();
    let opts = asdf::WriteOptions::default()
        .validate(false)
        .compression(c)
        .progress(move |done, total| b.update(done, total));
    // ASDF in FITS stays FITS over itself (the library keeps every HDU) or to a FITS name;
    // to an ASDF name it keeps the FITS headers in `_fits`, as `convert` does.
    let fits_form = file.source().fits_asdf_form();
    let r = match fits_form {
        Some(form) if fits_extension(out) => file.write(
            out,
            &opts.clone().fits(asdf::FitsWriteOptions::default().asdf_hdu(form)),
        ),
        Some(_) if !file.source().is_own_path(out) => file.keep_fits_headers().and_then(|_| file.write(out, &opts)),
        _ => file.write(out, &opts),
    };
    bar.finish();
    r?;
    println!(
        "wrote {}{}",
        out.display(),
        if fits_form.is_some() && (fits_extension(out) || file.source().is_own_path(out)) {
            " (FITS, every HDU kept)"
        } else {
            ""
        }
    );
    Ok(ExitCode::SUCCESS)
}
