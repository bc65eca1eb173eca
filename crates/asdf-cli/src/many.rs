//! Many files at once (`verify` and `info` given several paths, a folder or a prefix such as
//! `s3://bucket/run42/`): the targets expanded into files, each file worked on by one of
//! `jobs` threads, a progress bar over the files, results in the order of the files.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::report;

/// The most objects listed under one prefix.
const MAX_LISTED: usize = 1_000_000;

/// Whether `targets` name more than one file: several targets, a folder or a prefix.
pub fn is_many(targets: &[PathBuf]) -> bool {
    targets.len() > 1 || targets.first().is_some_and(|t| is_prefix(t) || t.is_dir())
}

fn is_prefix(t: &Path) -> bool {
    t.to_str().is_some_and(|s| asdf::is_url(s) && s.ends_with('/'))
}

fn is_asdf_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".asdf") || lower.ends_with(".fits") || lower.ends_with(".fit")
}

/// The files `targets` name: a path or URL as it is; a folder's `.asdf` and FITS files at
/// every level below it; a prefix's objects so named (listed from the store). Sorted within
/// each folder or prefix.
///
/// # Errors
/// A folder that cannot be read; a prefix that cannot be listed.
pub fn expand(targets: &[PathBuf]) -> Result<Vec<String>, asdf::Error> {
    let mut out = Vec::new();
    for t in targets {
        if is_prefix(t) {
            let prefix = t.to_string_lossy();
            let listed = asdf::remote::list(&prefix, &asdf::RemoteOptions::default(), MAX_LISTED)
                .map_err(|e| asdf::Error::Remote(Box::new(e)))?;
            out.extend(listed.into_iter().map(|(u, _)| u).filter(|u| is_asdf_name(u)));
        } else if t.is_dir() {
            let mut found = Vec::new();
            walk(t, &mut found).map_err(|source| asdf::Error::Io {
                path: t.clone(),
                source,
            })?;
            found.sort();
            out.extend(found);
        } else {
            out.push(t.to_string_lossy().into_owned());
        }
    }
    Ok(out)
}

fn walk(dir: &Path, found: &mut Vec<String>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let path = entry.path();
        if kind.is_dir() {
            walk(&path, found)?;
        } else if kind.is_file() && path.file_name().and_then(|n| n.to_str()).is_some_and(is_asdf_name) {
            found.push(path.to_string_lossy().into_owned());
        }
    }
    Ok(())
}

/// `f` of every item, `jobs` at a time, with a progress bar labelled `what`; the results in
/// the items' order.
pub fn run_all<T: Send>(items: &[String], jobs: usize, what: &str, f: impl Fn(&str) -> T + Sync) -> Vec<T> {
    let bar = report::Bar::new(what);
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Vec<std::sync::Mutex<Option<T>>> = items.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, items.len().max(1)) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let r = f(item);
                    if let Ok(mut slot) = results[i].lock() {
                        *slot = Some(r);
                    }
                    bar.update(done.fetch_add(1, Ordering::Relaxed) + 1, items.len());
                }
            });
        }
    });
    bar.finish();
    results
        .into_iter()
        .filter_map(|m| m.into_inner().ok().flatten())
        .collect()
}

/// `n` bytes for people (1.2 GB).
pub fn bytes(n: u64) -> String {
    let f = n as f64;
    match n {
        0..1_000 => format!("{n} B"),
        1_000..1_000_000 => format!("{:.1} kB", f / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} MB", f / 1e6),
        _ => format!("{:.2} GB", f / 1e9),
    }
}
