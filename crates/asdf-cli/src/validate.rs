//! `validate`: the tree against its tags' schemas, the arrays against their blocks.

use std::process::ExitCode;

use crate::report;
use crate::schemas::{EXTRA_SCHEMAS, read_options};
use crate::verify::block_problems;

/// Validate the tree against the schemas of its tags, and its arrays against their blocks;
/// exit 1 listing every violation.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The ASDF file.
    pub file: std::path::PathBuf,
    /// Also validate the whole tree against this schema (YAML).
    #[arg(long, value_name = "FILE")]
    pub schema: Option<std::path::PathBuf>,
    /// Check the tree only: do not read blocks, checksums or array data.
    #[arg(long)]
    skip_block_validation: bool,
}

impl Args {
    /// `custom`: the id of `--schema` among the loaded schemas.
    pub fn run(&self, custom: Option<&str>) -> Result<ExitCode, asdf::Error> {
        validate(&self.file, custom, self.skip_block_validation)
    }
}

fn validate(path: &std::path::Path, custom: Option<&str>, skip_blocks: bool) -> Result<ExitCode, asdf::Error> {
    let file = asdf::Open::path_or_url(path).options(read_options()).open()?;
    let report = match EXTRA_SCHEMAS.get().cloned().flatten() {
        Some(schemas) => file.validate(Some(&schemas), custom)?,
        None => file.validate(None, None)?,
    };
    // A key the standard does not allow is read (as Python asdf reads it) but is a violation.
    let mut problems = Vec::new();
    for w in file.warnings() {
        if matches!(w, asdf::Warning::Yaml(asdf::YamlWarning::NonstandardKey { .. })) {
            problems.push(w.to_string());
        } else {
            report::warning(&w.to_string());
        }
    }
    if !skip_blocks {
        problems.extend(block_problems(&file, None).1.iter().map(ToString::to_string));
    }
    if report.is_valid() && problems.is_empty() {
        println!("{}: valid", crate::many::show(path));
        return Ok(ExitCode::SUCCESS);
    }
    let head = report::file_head(path, file.source().layout().tree_range().map_or(0, |r| r.end));
    for v in &report.violations {
        println!("{v}");
        if let Some(s) = report::snippet(&head, v.span.line, v.span.column) {
            println!("{s}");
        }
    }
    for p in &problems {
        println!("{p}");
    }
    println!(
        "{}: {} violation(s)",
        crate::many::show(path),
        report.violations.len() + problems.len()
    );
    Ok(ExitCode::from(1))
}
