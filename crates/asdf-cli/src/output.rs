//! Where a command's output goes: the one guard that every command that writes a file goes
//! through, before anything is written.
//!
//! - The format follows the output's extension (or an explicit flag, for `convert --to`): an
//!   extension the command does not write is a usage error (exit 2) naming the ones it does,
//!   never a silent choice. An existing device or FIFO (`/dev/null`) has no extension to go
//!   by: it gets the command's first format.
//! - No output is one of the files read: the input, a file it refers to (external blocks,
//!   exploded parts), nor a hard or symbolic link to one (compared by device and inode, after
//!   links). Only `defragment` and `edit` rewrite their own file, staged (a new file renamed
//!   into place once complete); the files it refers to are refused there too.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use asdf::AsdfFile;

/// The extension of `out`, lowercased (`None` when it has none or it is not UTF-8).
pub fn extension(out: &Path) -> Option<String> {
    out.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase)
}

/// Whether `out` exists and is not a regular file after links (a device, a FIFO): it is
/// written into, and its name says nothing of a format.
pub fn is_special(out: &Path) -> bool {
    std::fs::metadata(out).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// `.a`, `.b` or `.c`.
pub fn list(exts: &[&str]) -> String {
    let dotted: Vec<String> = exts.iter().map(|e| format!(".{e}")).collect();
    match dotted.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// Refuses `out` when it is the file named `input` (links followed): checked first, before
/// the file is opened and before the format, so that this is what is said of it.
/// [`refuse_inputs`] checks the files it refers to once it is open.
///
/// # Errors
/// [`asdf::Error::OutputIsInput`].
pub fn refuse_input_path(input: &Path, out: &Path) -> Result<(), asdf::Error> {
    // A URL names its object by its text (keys are literal): the same text is the same object.
    let url = |p: &Path| p.to_str().filter(|s| asdf::is_url(s)).map(str::to_owned);
    if asdf::same_file(out, input) || url(out).is_some_and(|o| url(input).is_some_and(|i| i == o)) {
        return Err(asdf::Error::OutputIsInput {
            output: out.to_path_buf(),
            input: input.to_path_buf(),
        });
    }
    Ok(())
}

/// The format `command` writes to `out`: the one of `writes` (extensions without the dot,
/// lowercase, the default first) that `out` ends with, or the first for a device or FIFO.
/// Otherwise the error is reported and the usage exit code returned.
pub fn format(command: &str, out: &Path, writes: &[&'static str]) -> Result<&'static str, ExitCode> {
    // Only the rewriting commands upload; the others would write a local file named like the
    // URL (`s3:/bucket/x.npy`) and say they wrote the URL.
    if out.to_str().is_some_and(asdf::is_url) && !matches!(command, "defragment" | "implode") {
        return usage(&format!(
            "{}: `{command}` writes local files only (`convert`, `defragment`, `implode` and `edit` write to URLs)",
            out.display()
        ));
    }
    if is_special(out) {
        return Ok(writes.first().copied().unwrap_or_default());
    }
    if let Some(e) = extension(out)
        && let Some(w) = writes.iter().find(|w| **w == e)
    {
        return Ok(w);
    }
    usage(&format!(
        "{}: `{command}` writes {} files: name the output with {}",
        out.display(),
        list(writes),
        if writes.len() == 1 {
            "that extension"
        } else {
            "one of those extensions"
        }
    ))
}

/// Reports a usage error; the usage exit code.
pub fn usage<T>(message: &str) -> Result<T, ExitCode> {
    crate::report::error(message);
    Err(ExitCode::from(2))
}

/// Whether the output may be the file read itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Own {
    /// No (every command but `defragment` and `edit`).
    Refused,
    /// Yes: the command rewrites its own file, staged; the files it refers to are still refused.
    Rewritten,
}

/// Refuses (with [`asdf::Error::OutputIsInput`]) when one of `outputs` is one of the files
/// `file` reads: itself (unless `own` allows it) and every file it refers to, links followed;
/// or lies inside a Zarr directory store it reads (a chunk file, `.zarray`, through a link).
///
/// # Errors
/// [`asdf::Error::OutputIsInput`] naming the output and the input.
pub fn refuse_inputs(file: &AsdfFile, outputs: &[PathBuf], own: Own) -> Result<(), asdf::Error> {
    let inputs = file.source().input_files();
    let folders = file.source().input_folders();
    for out in outputs {
        // Inside a store the file reads (by the path the write would take: links followed,
        // the output's folder resolved when the output does not exist yet).
        let resolved = out.canonicalize().ok().or_else(|| {
            let parent = out
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            Some(parent.canonicalize().ok()?.join(out.file_name()?))
        });
        if let Some(r) = &resolved
            && let Some(folder) = folders.iter().find(|f| r.starts_with(f))
        {
            return Err(asdf::Error::OutputIsInput {
                output: out.clone(),
                input: folder.clone(),
            });
        }
        for input in &inputs {
            if own == Own::Rewritten && file.source().is_own_path(input) {
                continue;
            }
            if asdf::same_file(out, input) {
                return Err(asdf::Error::OutputIsInput {
                    output: out.clone(),
                    input: input.clone(),
                });
            }
        }
    }
    Ok(())
}

/// The files `explode` writes for `out`: `out` itself and the parts beside it
/// (`STEM0000.asdf`, ... one per array at most), as the library names them.
pub fn exploded_names(out: &Path, arrays: usize) -> Vec<PathBuf> {
    let stem = out
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dir = out.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut names: Vec<PathBuf> = (0..arrays).map(|k| dir.join(format!("{stem}{k:04}.asdf"))).collect();
    names.push(out.to_path_buf());
    names
}

/// The pointers of the directory stores (asdf-zarr's external storage: `store` or
/// `meta_store` of a Zarr array, a `DirectoryStore`, `NestedDirectoryStore` or `LocalStore`)
/// that `file`'s tree names by a path relative to its folder.
fn relative_stores(file: &AsdfFile, sources: bool) -> Result<Vec<String>, asdf::Error> {
    struct Find(Vec<String>, bool);
    impl<'a> asdf::walk::Visitor<'a> for Find {
        fn enter(&mut self, at: &asdf::walk::At<'_, 'a>) -> asdf::Visit {
            let n = at.node();
            let relative = |p: &str| !p.contains("://") && !Path::new(p).is_absolute();
            if self.1
                && n.tag.as_deref().is_some_and(asdf::is_ndarray_tag)
                && n.get("source").and_then(asdf::Node::as_str).is_some_and(relative)
            {
                self.0.push(format!("{}/source", at.pointer_exact()));
            }
            if n.tag.as_deref().is_some_and(asdf::is_zarr_tag) {
                for key in ["store", "meta_store"] {
                    let Some(store) = n.get(key) else { continue };
                    let kind = store.get("type_string").and_then(asdf::Node::as_str);
                    let path = store.get("path").and_then(asdf::Node::as_str);
                    if matches!(kind, Some("DirectoryStore" | "NestedDirectoryStore" | "LocalStore"))
                        && path.is_some_and(|p| !p.contains("://") && !Path::new(p).is_absolute())
                    {
                        self.0.push(format!("{}/{key}", at.pointer_exact()));
                    }
                }
            }
            asdf::Visit::Continue
        }
    }
    let mut find = Find(Vec::new(), sources);
    asdf::walk::Walker::default().walk(file.document(), &mut find);
    Ok(find.0)
}

/// Refuses (the error reported, exit 1) writing `file`, read from `input`, to `out` in
/// another folder when its tree names a store beside the input by a relative path (and, with
/// `sources`, for writers that keep them, an external block file): the output would name
/// what is not beside it (a path is copied as written, never rewritten to lead back out of
/// the output's folder). Remote inputs and outputs name their stores by URL and are not
/// concerned.
pub fn refuse_moved_stores(file: &AsdfFile, input: &Path, out: &Path, sources: bool) -> Result<(), ExitCode> {
    let is_url = |p: &Path| p.to_str().is_some_and(asdf::is_url);
    if is_url(input) || is_url(out) {
        return Ok(());
    }
    let folder = |p: &Path| {
        let parent = p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        parent.canonicalize().unwrap_or_else(|_| parent.to_path_buf())
    };
    if folder(input) == folder(out) {
        return Ok(());
    }
    let stores = match relative_stores(file, sources) {
        Ok(s) => s,
        Err(e) => {
            crate::report::error(&e.to_string());
            return Err(ExitCode::from(1));
        }
    };
    if stores.is_empty() {
        return Ok(());
    }
    crate::report::error(&format!(
        "{}: the tree names files or Zarr directory stores beside {} by relative paths ({}); written in another folder, the output would name what is not beside it: write the output in the input's folder",
        out.display(),
        input.display(),
        stores.join(", ")
    ));
    Err(ExitCode::from(1))
}
