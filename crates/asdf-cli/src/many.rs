//! Many files at once (`verify` and `info` given several paths, a folder or a prefix such as
//! `s3://bucket/run42/`): the targets expanded into files, each file worked on by one of
//! `jobs` threads, a progress bar over the files, results in the order of the files.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::report;

/// The most objects listed under one prefix.
const MAX_LISTED: usize = 1_000_000;

/// The most files worked on at once (`-j`).
pub const MAX_JOBS: usize = 1024;

/// The `-j` option's value: 1 to [`MAX_JOBS`] (a usage error, exit 2, otherwise).
pub fn parse_jobs(s: &str) -> Result<usize, String> {
    s.trim()
        .parse::<usize>()
        .ok()
        .filter(|j| (1..=MAX_JOBS).contains(j))
        .ok_or_else(|| format!("`{s}` is not a number of files at once (1 to {MAX_JOBS})"))
}

/// Whether `targets` name more than one file: several targets, a folder or a prefix.
pub fn is_many(targets: &[PathBuf]) -> bool {
    targets.len() > 1 || targets.first().is_some_and(|t| is_prefix(t) || t.is_dir())
}

fn is_prefix(t: &Path) -> bool {
    t.to_str().is_some_and(|s| asdf::is_url(s) && s.ends_with('/'))
}

/// Whether a file name ends in `.asdf`, `.fits` or `.fit` (any case; the name need not be
/// UTF-8).
fn is_asdf_name(name: &std::ffi::OsStr) -> bool {
    let lower = name.as_encoded_bytes().to_ascii_lowercase();
    lower.ends_with(b".asdf") || lower.ends_with(b".fits") || lower.ends_with(b".fit")
}

/// An entry of a walk that was not read, and why.
#[derive(Debug, Clone)]
pub struct Skipped {
    /// The entry (a file, a link, a folder).
    pub path: PathBuf,
    /// Why it was not read.
    pub reason: String,
}

/// What the targets named: the files to read (paths as found, whatever their names' encoding,
/// or URLs) and the entries skipped, with the reason.
#[derive(Debug, Default)]
pub struct Found {
    /// The files, in order: sorted within each folder or prefix.
    pub files: Vec<PathBuf>,
    /// The entries skipped.
    pub skipped: Vec<Skipped>,
    /// The files (objects) passed over as not ASDF: named neither `.asdf` nor FITS, and (a
    /// local file) not starting as an ASDF file (`#ASDF`) or a draft (`%FINF`) does.
    pub others: usize,
}

impl Found {
    /// The summary's note of the files passed over (empty when none were).
    #[must_use]
    pub fn others_note(&self) -> String {
        match self.others {
            0 => String::new(),
            n => format!(
                " ({n} other file{} not ASDF by name or content, not read)",
                if n == 1 { "" } else { "s" }
            ),
        }
    }
}

/// Whether the file at `path` starts as an ASDF file or a FINF 0.1.0 draft does.
fn starts_as_asdf(path: &Path) -> bool {
    use std::io::Read as _;
    let mut head = [0u8; 5];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| &head == b"#ASDF" || &head == b"%FINF")
}

/// `path` (or URL) for a line of output: lossily when it is not UTF-8, saying so; a URL's
/// secrets hidden.
pub fn show(path: &Path) -> String {
    // Control characters (a newline, an escape) escaped: a name cannot start a line of its own
    // (`ok    forged.asdf`) or move the terminal's cursor.
    // A URL's secrets (a password, a signature) hidden.
    let text: String = asdf::remote::redact(&path.display().to_string())
        .chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect();
    if path.to_str().is_some() {
        text
    } else {
        format!("{text} (name not UTF-8, shown with U+FFFD)")
    }
}

/// Prints a line for each entry skipped.
pub fn print_skipped(skipped: &[Skipped]) {
    for s in skipped {
        println!("SKIP  {}: {}", show(&s.path), s.reason);
    }
}

/// The files `targets` name: a path or URL as it is; a folder's `.asdf` and FITS files at
/// every level below it, and its other files that start as ASDF files do (`#ASDF`, `%FINF`); a prefix's objects so named (listed from the store). Sorted within
/// each folder or prefix. A link (to a file or a folder) is followed; what cannot be read
/// (a folder that cannot be listed, a link to nothing or into a folder already walked, an
/// entry that is not a regular file) is a skipped entry with its reason, and the walk goes on.
///
/// # Errors
/// A prefix that cannot be listed.
pub fn expand(targets: &[PathBuf]) -> Result<Found, asdf::Error> {
    let mut found = Found::default();
    for t in targets {
        if is_prefix(t) {
            let prefix = t.to_string_lossy();
            let listed = asdf::remote::list_entries(&prefix, &asdf::RemoteOptions::default(), MAX_LISTED)
                .map_err(|e| asdf::Error::Remote(Box::new(e)))?;
            // A folder marker (an empty object whose key ends in `/`) is a folder, as a local
            // folder is: not a file to read. S3's listing gives it with its `/`; Google's and
            // Azure's (object_store's) without, with objects listed under it. A name listed
            // twice (a marker and a file) is read once.
            let urls: std::collections::BTreeSet<&str> = listed.iter().map(|e| e.url.as_str()).collect();
            let mut seen = std::collections::HashSet::new();
            for e in &listed {
                let u = &e.url;
                if e.key.ends_with('/') && e.size == Some(0) {
                    continue;
                }
                if !is_asdf_name(std::ffi::OsStr::new(u)) {
                    found.others += 1;
                    continue;
                }
                let folder = format!("{u}/");
                let marker = e.size == Some(0)
                    && urls
                        .range::<str, _>((std::ops::Bound::Excluded(folder.as_str()), std::ops::Bound::Unbounded))
                        .next()
                        .is_some_and(|next| next.starts_with(&folder));
                if !marker && seen.insert(u.clone()) {
                    found.files.push(PathBuf::from(u));
                }
            }
        } else if t.is_dir() {
            let mut walk = Walk {
                seen: std::collections::HashSet::new(),
                found: Vec::new(),
                skipped: Vec::new(),
                others: 0,
            };
            walk.folder(t);
            walk.found.sort();
            found.files.extend(walk.found);
            found.skipped.extend(walk.skipped);
            found.others += walk.others;
        } else {
            found.files.push(t.clone());
        }
    }
    Ok(found)
}

/// A walk of a folder: the folders entered (by device and inode: a link back into one is not
/// walked twice, so a loop ends), the files found, the entries skipped.
struct Walk {
    seen: std::collections::HashSet<(u64, u64)>,
    found: Vec<PathBuf>,
    skipped: Vec<Skipped>,
    others: usize,
}

impl Walk {
    /// A regular file (or a link to one): read when its name or its first bytes say ASDF,
    /// else counted among the others.
    fn file(&mut self, path: PathBuf, named: bool) {
        if named || starts_as_asdf(&path) {
            self.found.push(path);
        } else {
            self.others += 1;
        }
    }

    fn skip(&mut self, path: &Path, reason: impl Into<String>) {
        self.skipped.push(Skipped {
            path: path.to_path_buf(),
            reason: reason.into(),
        });
    }

    /// Walks the folder `dir` (its links followed), iteratively: no depth limit to overflow.
    fn folder(&mut self, dir: &Path) {
        let mut stack = vec![dir.to_path_buf()];
        while let Some(dir) = stack.pop() {
            match std::fs::metadata(&dir) {
                Ok(m) => {
                    if !self.seen.insert(file_id(&m)) {
                        self.skip(&dir, "a folder already walked (a link back into the walk)");
                        continue;
                    }
                }
                Err(e) => {
                    self.skip(&dir, format!("cannot be read: {e}"));
                    continue;
                }
            }
            let entries = match std::fs::read_dir(&dir) {
                Ok(r) => r,
                Err(e) => {
                    self.skip(&dir, format!("folder cannot be listed: {e}"));
                    continue;
                }
            };
            let mut subfolders = Vec::new();
            for entry in entries {
                let entry = match entry {
                    Ok(e) => e,
                    Err(e) => {
                        self.skip(&dir, format!("folder could not be listed to its end: {e}"));
                        break;
                    }
                };
                let path = entry.path();
                let kind = match entry.file_type() {
                    Ok(k) => k,
                    Err(e) => {
                        self.skip(&path, format!("cannot be read: {e}"));
                        continue;
                    }
                };
                let named = is_asdf_name(&entry.file_name());
                if kind.is_dir() {
                    subfolders.push(path);
                } else if kind.is_file() {
                    self.file(path, named);
                } else if kind.is_symlink() {
                    // Followed: a link to a file is read as the file, a link to a folder
                    // walked (once); a link to nothing is reported.
                    match std::fs::metadata(&path) {
                        Ok(m) if m.is_dir() => subfolders.push(path),
                        Ok(m) if m.is_file() => self.file(path, named),
                        Ok(_) if named => self.skip(&path, "a link to something that is not a regular file"),
                        Ok(_) => {}
                        // Whatever its name: it may have led to a folder.
                        Err(e) => self.skip(&path, format!("a link that cannot be followed: {e}")),
                    }
                } else if named {
                    self.skip(&path, "not a regular file (a FIFO, a socket or a device)");
                }
            }
            // Sorted, then pushed in reverse: the folders are walked in name order.
            subfolders.sort();
            stack.extend(subfolders.into_iter().rev());
        }
    }
}

/// A file's device and inode (on other systems, a stand-in that never repeats).
#[cfg(unix)]
fn file_id(m: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt as _;
    (m.dev(), m.ino())
}

#[cfg(not(unix))]
fn file_id(_: &std::fs::Metadata) -> (u64, u64) {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    (u64::MAX, NEXT.fetch_add(1, Ordering::Relaxed) as u64)
}

/// `f` of every item, `jobs` at a time, with a progress bar labelled `what`; the results in
/// the items' order. The items run on the executor's pool of `jobs` threads, and so does the
/// parallel work inside each (decoding, checksums): `jobs` threads in all.
pub fn run_all<I: Sync, T: Send>(items: &[I], jobs: usize, what: &str, f: impl Fn(&I) -> T + Sync) -> Vec<T> {
    use asdf::compression::exec;
    let bar = report::Bar::new(what);
    let done = AtomicUsize::new(0);
    let results = exec::with_threads(Some(jobs.max(1)), || {
        exec::par_map(items.len(), |i| {
            let r = f(&items[i]);
            bar.update(done.fetch_add(1, Ordering::Relaxed) + 1, items.len());
            r
        })
    });
    bar.finish();
    results
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
