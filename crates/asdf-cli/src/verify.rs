//! `verify`: every block decoded, every checksum and every array view checked.

use std::process::ExitCode;

use asdf::AsdfFile;

use crate::report;
use crate::schemas::read_options;

/// Read every block, decode it, check every checksum and every array's view; exit 1 on any
/// problem.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The ASDF file.
    pub file: std::path::PathBuf,
}

impl Args {
    pub fn run(&self) -> Result<ExitCode, asdf::Error> {
        verify(&self.file)
    }
}

/// What [`AsdfFile::verify`] finds, as lines: the checksum status of each block that passed,
/// and the problems.
pub fn block_problems(file: &AsdfFile, bar: Option<&report::Bar>) -> (Vec<String>, Vec<String>) {
    let progress = |done, total| {
        if let Some(b) = bar {
            b.update(done, total);
        }
    };
    let report = file.verify(Some(&progress));
    if let Some(b) = bar {
        b.finish();
    }
    let lines = report
        .blocks
        .iter()
        .filter_map(|(i, r)| r.as_ref().ok().map(|s| format!("block {i}: checksum {s:?}")))
        .collect();
    (lines, report.problems())
}

fn verify(path: &std::path::Path) -> Result<ExitCode, asdf::Error> {
    let file = asdf::Open::path_or_url(path).options(read_options()).open()?;
    let r = file.source().layout();
    let (lines, problems) = block_problems(&file, Some(&report::Bar::new("verifying blocks")));
    for l in &lines {
        println!("{l}");
    }
    for w in file.warnings() {
        report::warning(&w.to_string());
    }
    if problems.is_empty() {
        println!("{}: {} blocks verified", path.display(), r.block_count());
        return Ok(ExitCode::SUCCESS);
    }
    for p in &problems {
        println!("{p}");
    }
    Ok(ExitCode::from(1))
}
