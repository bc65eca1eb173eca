//! `convert`: any ASDF file (the pre-1.0 drafts and ASDF in FITS included) to another layout.

use std::process::ExitCode;

use crate::output;
use crate::report;
use crate::rewrite::{ChunkShape, parse_chunks, parse_label};
use crate::schemas::read_options;

/// Convert a file to another layout: any ASDF file, the pre-1.0 drafts (`#ASDF 0.1.0`,
/// `%FINF 0.1.0`) included, to ASDF of the standard given (tags upgraded, arrays as
/// blocks, the ASDF 0.1.0 draft's encoding chains decoded).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The input file.
    pub file: std::path::PathBuf,
    /// Output file. Never one of the files read.
    #[arg(short, long)]
    output: std::path::PathBuf,
    /// Output format; default: from OUTPUT's extension (.asdf: asdf; .fits, .fit or .fts:
    /// fits; .finf: finf), another extension being a usage error. Given, it decides, and an
    /// extension of another format is a usage error (.asdf goes with asdf, asdf-0.1.0 and
    /// finf).
    #[arg(long, value_name = "FORMAT")]
    to: Option<Format>,
    /// ASDF Standard version of the output.
    #[arg(long, default_value = "1.6.0")]
    standard: String,
    /// Compression for every block: zlib, bzp2, lz4, zstd, lz4f, blsc, bls2 or none
    /// (default: keep each block's; encoding chains become none).
    #[arg(short = 'c', long, value_parser = parse_label)]
    compression: Option<asdf::Label>,
    /// Store every array with as many dimensions as CHUNKS has chunked in chunks of that
    /// shape (asdf-zarr's layout: "256,256"), each chunk compressed with `-c` (zlib, bzp2,
    /// zstd, bls2; default none). Arrays chunked already stay as they are.
    #[arg(long, value_name = "CHUNKS", value_parser = parse_chunks)]
    chunks: Option<ChunkShape>,
    /// FITS output: where the ASDF file goes.
    #[arg(long, value_name = "FORM", default_value = "table")]
    fits_form: FitsForm,
    /// FITS output: write CHECKSUM and DATASUM cards in every HDU.
    #[arg(long)]
    fits_checksum: bool,
    /// FITS output: write the FITS file the `fits/fits-*` node at this JSON pointer
    /// describes (its HDUs only, no ASDF HDU).
    #[arg(long, value_name = "POINTER")]
    fits_node: Option<String>,
    /// ASDF output from FITS: leave out the `_fits` node that keeps the FITS headers (and
    /// tables no ndarray names) for a conversion back to FITS.
    #[arg(long)]
    no_fits_headers: bool,
}

/// What `convert` writes.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    /// ASDF of the standard given.
    Asdf,
    /// ASDF in FITS (Appendix A of the standard).
    Fits,
    /// The ASDF 0.1.0 draft.
    #[value(name = "asdf-0.1.0")]
    Asdf010,
    /// FINF 0.1.0.
    Finf,
}

/// Where the ASDF file goes in a FITS file.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum FitsForm {
    /// The one-row BINTABLE named ASDF that JWST's files have.
    Table,
    /// Appendix A's IMAGE of bytes.
    Image,
}

impl Args {
    pub fn run(&self) -> Result<ExitCode, asdf::Error> {
        convert(
            &self.file,
            &self.output,
            self.to,
            &self.standard,
            self.compression,
            self.chunks.as_ref().map(|c| c.0.as_slice()),
            &FitsArgs {
                form: self.fits_form,
                checksum: self.fits_checksum,
                node: self.fits_node.as_deref(),
                no_headers: self.no_fits_headers,
            },
        )
    }
}

/// What `convert` writes beside the format: the FITS options.
struct FitsArgs<'a> {
    form: FitsForm,
    checksum: bool,
    node: Option<&'a str>,
    no_headers: bool,
}

/// The format `convert` writes to `out`: `--to`'s, or the one its extension names; an
/// extension that names no format, or another format than `--to`'s, is a usage error.
fn output_format(out: &std::path::Path, to: Option<Format>) -> Result<Format, ExitCode> {
    let ext = output::extension(out);
    let named = match ext.as_deref() {
        Some("asdf") => Some(Format::Asdf),
        Some("fits" | "fit" | "fts") => Some(Format::Fits),
        Some("finf") => Some(Format::Finf),
        _ => None,
    };
    match (to, named) {
        (Some(t), Some(n)) => {
            let agree = t == n || (n == Format::Asdf && matches!(t, Format::Asdf010 | Format::Finf));
            if agree {
                Ok(t)
            } else {
                output::usage(&format!(
                    "{}: --to {} writes {}, but the name ends in .{}",
                    out.display(),
                    t.name(),
                    t.describe(),
                    ext.unwrap_or_default()
                ))
            }
        }
        (Some(t), None) => Ok(t),
        (None, Some(n)) => Ok(n),
        (None, None) if output::is_special(out) => Ok(Format::Asdf),
        (None, None) => output::usage(&format!(
            "{}: `convert` writes {} files (or the format --to names); name the output with one of those extensions",
            out.display(),
            output::list(&["asdf", "fits", "fit", "fts", "finf"])
        )),
    }
}

impl Format {
    /// The name `--to` takes.
    fn name(self) -> &'static str {
        match self {
            Format::Asdf => "asdf",
            Format::Fits => "fits",
            Format::Asdf010 => "asdf-0.1.0",
            Format::Finf => "finf",
        }
    }

    /// What it is, for messages.
    fn describe(self) -> &'static str {
        match self {
            Format::Asdf => "ASDF (.asdf)",
            Format::Fits => "FITS (.fits, .fit or .fts)",
            Format::Asdf010 => "the ASDF 0.1.0 draft (.asdf)",
            Format::Finf => "the FINF 0.1.0 draft (.finf or .asdf)",
        }
    }
}

fn convert(
    path: &std::path::Path,
    out: &std::path::Path,
    to: Option<Format>,
    standard: &str,
    compression: Option<asdf::Label>,
    chunks: Option<&[usize]>,
    fits: &FitsArgs<'_>,
) -> Result<ExitCode, asdf::Error> {
    output::refuse_input_path(path, out)?;
    let format = match output_format(out, to) {
        Ok(f) => f,
        Err(code) => return Ok(code),
    };
    match format {
        Format::Asdf | Format::Fits => {}
        Format::Asdf010 | Format::Finf => {
            // The drafts before 1.0.0 (for readers of them and round trips); blocks decoded.
            let file = asdf::Open::path_or_url(path).options(read_options()).open()?;
            output::refuse_inputs(&file, &[out.to_path_buf()], output::Own::Refused)?;
            // The drafts' writer keeps external block files as the tree names them.
            if let Err(code) = output::refuse_moved_stores(&file, path, out, true) {
                return Ok(code);
            }
            let dialect = if format == Format::Finf {
                asdf::layout::Dialect::Finf
            } else {
                asdf::layout::Dialect::Asdf010
            };
            let mut result = Ok(());
            let written = asdf::write_atomically(out, |w| {
                result = file
                    .write(
                        asdf::Target::Writer(w),
                        &asdf::WriteOptions::default().form(asdf::Form::Draft { dialect, chain: None }),
                    )
                    .map(drop);
                match &result {
                    Ok(_) => Ok(()),
                    Err(_) => Err(std::io::Error::other("the draft could not be written")),
                }
            });
            // The draft's own error first (the temporary file is gone either way).
            result?;
            written?;
            let name = if format == Format::Finf { "finf" } else { "asdf-0.1.0" };
            println!("wrote {} (the {name} draft layout)", crate::many::show(out));
            return Ok(ExitCode::SUCCESS);
        }
    }
    let Ok(version) = standard.parse::<asdf::Version>() else {
        eprintln!("error: `{standard}` is not a version (such as 1.6.0)");
        return Ok(ExitCode::from(2));
    };
    let c = compression.map_or(asdf::Compression::Keep, asdf::Compression::All);
    let mut file = asdf::Open::path_or_url(path).options(read_options()).open()?;
    output::refuse_inputs(&file, &[out.to_path_buf()], output::Own::Refused)?;
    let from = file.standard_version();
    let dialect = file.source().layout().file_header().dialect;
    if dialect.is_legacy() {
        for i in 0..file.source().layout().block_count() {
            if let Err(e @ asdf::layout::Error::Checksum { .. }) = file.source().layout().verify_checksum(i) {
                report::warning(&format!(
                    "{e}: the drafts left the checksum's meaning \"TBD\"; the block is written with a checksum of its data as read"
                ));
            }
        }
    }
    let changed = file.set_standard(version)?;
    let report = file.validate(None, None)?;
    if !report.violations.is_empty() {
        return Err(asdf::Error::Invalid(report.violations));
    }
    let from_fits = file.source().fits_hdus().is_some();
    if let Some(chunks) = chunks {
        if format == Format::Fits {
            eprintln!("error: --chunks is for ASDF output (FITS holds no chunked arrays)");
            return Ok(ExitCode::from(2));
        }
        crate::rewrite::chunk(&mut file, chunks, compression)?;
    }
    if let Err(code) = output::refuse_moved_stores(&file, path, out, false) {
        return Ok(code);
    }
    let bar = std::sync::Arc::new(report::Bar::new(if format == Format::Fits {
        "writing HDUs"
    } else {
        "writing blocks"
    }));
    let b = bar.clone();
    let opts = asdf::WriteOptions::default()
        .compression(c)
        .progress(move |done, total| b.update(done, total));
    let r = if format == Format::Fits {
        let form = match fits.form {
            FitsForm::Table => asdf::AsdfHdu::Table,
            FitsForm::Image => asdf::AsdfHdu::Image,
        };
        let fo = asdf::FitsWriteOptions::default()
            .asdf_hdu(form)
            .checksums(fits.checksum);
        match fits.node {
            Some(p) => file.write(out, &opts.fits(fo.node(p))),
            None => file.write(out, &opts.fits(fo)),
        }
    } else {
        if from_fits && !fits.no_headers {
            file.keep_fits_headers()?;
        }
        file.write(out, &opts)
    };
    bar.finish();
    r?;
    if format == Format::Fits {
        println!(
            "wrote {} (FITS{}; ASDF Standard {version}, {changed} tags changed)",
            out.display(),
            if fits.node.is_some() {
                " from the fits node"
            } else {
                " with the ASDF tree in the ASDF HDU"
            }
        );
        return Ok(ExitCode::SUCCESS);
    }
    let layout = match dialect {
        asdf::layout::Dialect::Asdf010 => "ASDF 0.1.0 draft".to_owned(),
        asdf::layout::Dialect::Finf => "FINF 0.1.0 draft".to_owned(),
        _ if file.source().fits_hdus().is_some() => format!("ASDF Standard {from} in FITS"),
        _ => format!("ASDF Standard {from}"),
    };
    println!(
        "wrote {} (from the {layout}; ASDF Standard {version}, {changed} tags changed)",
        crate::many::show(out)
    );
    Ok(ExitCode::SUCCESS)
}
