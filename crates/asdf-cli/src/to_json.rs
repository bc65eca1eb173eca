//! `to-json`: the tree as JSON (the format of [`asdf::json`]), arrays decoded.

use std::process::ExitCode;

use crate::report;

use crate::out;
use crate::output;
use crate::schemas::read_options;

/// Print the tree as JSON (for jq), arrays decoded; see the README for the format.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The ASDF file.
    pub file: std::path::PathBuf,
    /// Output file, named `.json` (a device or FIFO gets JSON too); default: standard
    /// output. Never one of the files read.
    #[arg(short, long)]
    output: Option<std::path::PathBuf>,
}

impl Args {
    pub fn run(&self) -> Result<ExitCode, asdf::Error> {
        to_json(&self.file, self.output.as_deref())
    }
}

fn to_json(path: &std::path::Path, out: Option<&std::path::Path>) -> Result<ExitCode, asdf::Error> {
    if let Some(o) = out {
        output::refuse_input_path(path, o)?;
    }
    if let Some(o) = out
        && let Err(code) = output::format("to-json", o, &["json"])
    {
        return Ok(code);
    }
    let file = asdf::Open::path_or_url(path).options(read_options()).open()?;
    if let Some(o) = out {
        output::refuse_inputs(&file, &[o.to_path_buf()], output::Own::Refused)?;
    }
    for w in file.warnings() {
        report::warning(&w.to_string());
    }
    // Written as it is made: to standard output, or to a new file renamed into place.
    let mut warnings = Vec::new();
    match out {
        None => {
            let mut o = out::Stdout;
            warnings = asdf_tools::json::to_json(&file, &mut o).map_err(|source| asdf::Error::Io {
                path: "<stdout>".into(),
                source,
            })?;
        }
        Some(out) => {
            asdf::write_atomically(out, |w| {
                warnings = asdf_tools::json::to_json(&file, w)?;
                Ok(())
            })?;
            eprintln!("wrote {}", out.display());
        }
    }
    for w in &warnings {
        report::warning(w);
    }
    Ok(ExitCode::SUCCESS)
}
