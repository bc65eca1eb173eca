//! `verify`: every block decoded, every checksum and every array view checked.

use std::process::ExitCode;

use asdf::AsdfFile;

use crate::report;
use crate::schemas::read_options;

/// Read every block, decode it, check every checksum and every array's view; exit 1 on any
/// problem. Several files, a folder or a prefix (`s3://bucket/run42/`): each file verified,
/// several at once, a line each and a summary.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The ASDF file (or files, folders, prefixes ending in `/`).
    #[arg(required = true, num_args = 1..)]
    pub files: Vec<std::path::PathBuf>,
    /// Files verified at once (several files only), 1 to 1024.
    #[arg(long, short = 'j', default_value_t = 8, value_parser = crate::many::parse_jobs)]
    pub jobs: usize,
}

impl Args {
    pub fn run(&self) -> Result<ExitCode, asdf::Error> {
        if crate::many::is_many(&self.files) {
            return verify_many(&self.files, self.jobs);
        }
        verify(&self.files[0])
    }
}

/// What one file's verification found: blocks and bytes checked, or the problems.
fn verify_one(target: &std::path::PathBuf) -> Result<(usize, u64), Vec<String>> {
    let file = asdf::Open::path_or_url(target)
        .options(read_options())
        .open()
        .map_err(|e| vec![e.to_string()])?;
    let (_, problems) = block_problems(&file, None);
    if !problems.is_empty() {
        return Err(problems);
    }
    let r = file.source().layout();
    let bytes = (0..r.block_count())
        .filter_map(|i| r.block(i).ok().map(|b| b.header.used_size))
        .sum();
    Ok((r.block_count(), bytes))
}

fn verify_many(targets: &[std::path::PathBuf], jobs: usize) -> Result<ExitCode, asdf::Error> {
    // The time the summary gives counts the listing of prefixes and folders too.
    let start = std::time::Instant::now();
    let found = crate::many::expand(targets)?;
    let others = found.others_note();
    let crate::many::Found { files, skipped, .. } = found;
    let results = crate::many::run_all(&files, jobs, "verifying files", verify_one);
    let (mut blocks, mut bytes, mut failed) = (0usize, 0u64, 0usize);
    for (f, r) in files.iter().zip(&results) {
        let f = crate::many::show(f);
        match r {
            Ok((n, b)) => {
                blocks += n;
                bytes = bytes.saturating_add(*b);
                println!("ok    {f} ({n} blocks)");
            }
            Err(problems) => {
                failed += 1;
                println!("FAIL  {f}: {}", problems.join("; "));
            }
        }
    }
    crate::many::print_skipped(&skipped);
    println!(
        "{} files: {} verified, {failed} failed, {} skipped; {blocks} blocks, {} of block data, in {:.1} s{others}",
        files.len() + skipped.len(),
        files.len() - failed,
        skipped.len(),
        crate::many::bytes(bytes),
        start.elapsed().as_secs_f64()
    );
    // Nothing verified is a problem (a mistyped prefix must not pass a pipeline's check).
    if files.is_empty() && skipped.is_empty() {
        report::error("no ASDF or FITS files found: nothing was verified");
    }
    Ok(if failed == 0 && skipped.is_empty() && !files.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
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
    let hdu_lines = report.hdus.iter().filter_map(|(i, r)| match r {
        Ok(true) => Some(format!("HDU {i}: checksum cards ok")),
        _ => None,
    });
    let lines = report
        .blocks
        .iter()
        .filter_map(|(i, r)| {
            r.as_ref().ok().map(|s| {
                let what = match s {
                    asdf::layout::ChecksumStatus::Absent => "no checksum to check",
                    asdf::layout::ChecksumStatus::StoredBytes => "checksum ok (MD5 of the stored bytes)",
                    asdf::layout::ChecksumStatus::DecodedBytes => {
                        "checksum ok (MD5 of the decoded bytes, as Python asdf before 5.3 wrote it)"
                    }
                    _ => "checksum ok",
                };
                format!("block {i}: {what}")
            })
        })
        .chain(hdu_lines)
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
        let hdus = lines.iter().filter(|l| l.starts_with("HDU ")).count();
        let and_hdus = if hdus > 0 {
            format!(", {hdus} HDUs' checksum cards")
        } else {
            String::new()
        };
        println!(
            "{}: {} blocks{and_hdus} verified",
            crate::many::show(path),
            r.block_count()
        );
        return Ok(ExitCode::SUCCESS);
    }
    for p in &problems {
        println!("{p}");
    }
    Ok(ExitCode::from(1))
}
