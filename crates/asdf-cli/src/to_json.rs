//! `to-json`: the tree as JSON (the format of [`asdf::json`]), arrays decoded.

use std::process::ExitCode;

use crate::report;

use crate::out;
use crate::schemas::read_options;
use crate::to_yaml::refuse_input_as_output;

/// Print the tree as JSON (for jq), arrays decoded; see the README for the format.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The ASDF file.
    pub file: std::path::PathBuf,
    /// Output file (default: standard output).
    #[arg(short, long)]
    output: Option<std::path::PathBuf>,
}

impl Args {
    pub fn run(&self) -> Result<ExitCode, asdf::Error> {
        to_json(&self.file, self.output.as_deref())
    }
}

fn to_json(path: &std::path::Path, out: Option<&std::path::Path>) -> Result<ExitCode, asdf::Error> {
    let file = asdf::Open::path_or_url(path).options(read_options()).open()?;
    refuse_input_as_output(&file, out)?;
    for w in file.warnings() {
        report::warning(&w.to_string());
    }
    // Written as it is made: to standard output, or to a new file renamed into place.
    let mut warnings = Vec::new();
    match out {
        None => {
            let mut o = out::Stdout;
            warnings = asdf::json::to_json(&file, &mut o).map_err(|source| asdf::Error::Io {
                path: "<stdout>".into(),
                source,
            })?;
        }
        Some(out) => {
            asdf::write_atomically(out, |w| {
                warnings = asdf::json::to_json(&file, w)?;
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
