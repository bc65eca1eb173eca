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

/// Reads every block (decoding it and checking its checksum) and every array: the checksum
/// lines, and the problems found.
pub fn block_problems(file: &AsdfFile, bar: Option<&report::Bar>) -> (Vec<String>, Vec<String>) {
    let r = file.layout();
    let (mut lines, mut problems) = (Vec::new(), Vec::new());
    let count = r.block_count();
    // Blocks are checked on every core, each decoded in pieces and hashed on the way (MD5 is
    // one core's work per block): memory stays bounded by a piece per core whatever the blocks
    // hold or claim. Results are reported in block order.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done = std::sync::atomic::AtomicUsize::new(0);
    let results: std::sync::Mutex<Vec<Option<Result<asdf::layout::ChecksumStatus, String>>>> =
        std::sync::Mutex::new(vec![None; count]);
    let workers = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .min(count.max(1));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                use std::sync::atomic::Ordering;
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= count {
                        break;
                    }
                    let result = r.check_block(i).map_err(|e| {
                        let m = e.to_string();
                        if m.starts_with("block ") {
                            m
                        } else {
                            format!("block {i}: {m}")
                        }
                    });
                    if let Ok(mut all) = results.lock() {
                        all[i] = Some(result);
                    }
                    let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                    if let Some(b) = bar {
                        b.update(n, count);
                    }
                }
            });
        }
    });
    let results = results.into_inner().unwrap_or_default();
    for (i, result) in results.into_iter().enumerate() {
        match result {
            Some(Ok(s)) => lines.push(format!("block {i}: checksum {s:?}")),
            Some(Err(m)) => problems.push(m),
            None => problems.push(format!("block {i}: not checked")),
        }
    }
    if let Some(b) = bar {
        b.finish();
    }
    for p in file.array_pointers() {
        // Arrays with a block: their view is checked against the block (shape, strides,
        // datatype, offset), no element is materialised. Inline arrays (their data is in the
        // tree) and masks are decoded.
        let checked = match file.view(&p) {
            Ok(_) if !has_mask(file, &p) => Ok(()),
            Err(asdf::Error::Array {
                source: asdf::NdArrayError::MissingBlock,
                ..
            })
            | Ok(_) => file.array_values(&p).map(|_| ()),
            Err(e) => Err(e),
        };
        if let Err(e) = checked {
            let m = e.to_string();
            problems.push(if m.starts_with('/') { m } else { format!("{p}: {m}") });
        }
    }
    // One problem (an unknown compression, say) can show up for the block and its array.
    let mut seen = std::collections::HashSet::new();
    problems.retain(|p| seen.insert(p.clone()));
    (lines, problems)
}

/// Whether the ndarray at `p` has a `mask`.
fn has_mask(file: &AsdfFile, p: &str) -> bool {
    file.get(p)
        .ok()
        .is_some_and(|n| file.document().resolve(n).get("mask").is_some())
}

fn verify(path: &std::path::Path) -> Result<ExitCode, asdf::Error> {
    let file = asdf::open_path_or_url(path, read_options())?;
    let r = file.layout();
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
