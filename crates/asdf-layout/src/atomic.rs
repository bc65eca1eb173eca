//! The one place files are written atomically: a temporary file beside the target
//! (`.NAME.PID.RANDOM.tmp`, named by `tempfile`, so that the temporaries of a killed writer can be recognised and
//! cleaned), synced, then renamed over the target; removed when anything fails or the writer
//! is dropped unfinished.
//!
//! A writer holds an exclusive `flock` on its temporary file from its creation to the rename.
//! A temporary is stale, and removed by the next writer of the same target, only when nobody
//! holds that lock and it is older than [`STALE_AGE`]: never by its PID, which says nothing in
//! another PID namespace (a container, or another NFS client sharing the folder, whose live
//! writer's PID is not in our `/proc`).

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// An I/O error writing the file at `path` (the target, whatever temporary was being written).
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
pub struct WriteError {
    /// The file being written.
    pub path: PathBuf,
    /// What the system said.
    #[source]
    pub source: std::io::Error,
}

/// The temporary files of this process not yet renamed into place nor removed: what
/// [`remove_unfinished_temporaries`] removes when the process is ended at once.
static UNFINISHED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn unfinished() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    UNFINISHED.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Removes every temporary file this process's writes have made and not yet renamed into
/// place: for a program about to end at once (an interrupt handler that calls
/// `std::process::exit`, which runs no destructor), so that no `.NAME.PID.*.tmp` is left
/// beside the targets. The targets themselves are untouched. Writes still running will fail.
pub fn remove_unfinished_temporaries() {
    for tmp in unfinished().drain(..) {
        let _ = std::fs::remove_file(tmp);
    }
}

/// A temporary file that becomes `target` on [`TempFile::commit`], and is removed otherwise.
#[derive(Debug)]
pub struct TempFile {
    tmp: PathBuf,
    target: PathBuf,
    armed: bool,
}

impl TempFile {
    /// Creates the temporary file for `target` (after removing the ones dead writers left).
    pub fn create(target: &Path) -> Result<(TempFile, std::fs::File), WriteError> {
        clean_stale_temps(target);
        let io = |source| WriteError {
            path: target.to_path_buf(),
            source,
        };
        // The name is `tempfile`'s (random, retried on a collision); the file is created by
        // `create_new`, so its mode is what `File::create` gives (`NamedTempFile`'s own 0600
        // would stay on every file written after the rename).
        let (dir, name) = dir_and_name(target);
        let made = tempfile::Builder::new()
            .prefix(&format!(".{name}.{}.", std::process::id()))
            .suffix(".tmp")
            .rand_bytes(12)
            .make_in(dir, create_new)
            .map_err(io)?;
        let (f, path) = made.into_parts();
        // Our `TempFile` removes it from here on.
        let tmp = path.keep().map_err(|e| io(e.error))?;
        // Held until the rename: the mark of a live writer, whatever its PID namespace.
        let _ = try_lock(&f);
        unfinished().push(tmp.clone());
        Ok((
            TempFile {
                tmp,
                target: target.to_path_buf(),
                armed: true,
            },
            f,
        ))
    }

    /// Drops the page cache of the file being replaced (best effort; its bytes on disk are
    /// untouched until the rename). Otherwise replacing a 1 GiB file needs another 1 GiB of
    /// free pages while the old file's stay cached until the rename, and fresh pages cost
    /// far more than recycled ones on a virtual machine (measured: a 1 GiB raw write took
    /// 2.4-3.0 s over an existing file and 0.23-0.27 s with its pages released first; np.save,
    /// which truncates the old file, recycles them the same way). Not for a write that reads
    /// the old file (the caller's own source): it would read it from disk again.
    pub fn release_replaced(&self) {
        #[cfg(target_os = "linux")]
        // Without blocking: another process may have put a FIFO there since `destination`.
        if let Ok(old) = crate::source::open_nonblocking(&self.target) {
            use std::os::fd::AsRawFd as _;
            // SAFETY: `old` is an open file descriptor for the duration of the call; the
            // advice only drops clean cached pages and cannot change the file.
            let _ = unsafe { libc::posix_fadvise(old.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        }
    }

    /// An I/O error while writing it, named by the target.
    pub fn error(&self, source: std::io::Error) -> WriteError {
        WriteError {
            path: self.target.clone(),
            source,
        }
    }

    /// Puts it on disk (when `durable`) and in the target's place.
    pub fn commit(mut self, file: std::fs::File, durable: bool) -> Result<(), WriteError> {
        if durable {
            file.sync_all().map_err(|e| self.error(e))?;
        }
        // Renamed while still open and locked, then closed: never an unlocked temporary.
        std::fs::rename(&self.tmp, &self.target).map_err(|e| self.error(e))?;
        self.armed = false;
        unfinished().retain(|t| t != &self.tmp);
        // A `File` has nothing to drop on wasm32 (no files of its own there).
        #[cfg_attr(target_arch = "wasm32", allow(clippy::drop_non_drop))]
        drop(file);
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if self.armed {
            let _ = std::fs::remove_file(&self.tmp);
            unfinished().retain(|t| t != &self.tmp);
        }
    }
}

/// The folder of `target` (`.` for a bare name) and its file name.
fn dir_and_name(target: &Path) -> (&Path, String) {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    (dir, name)
}

/// Writes a file atomically, as the facade's `AsdfFile::write_to` does: `fill` writes into a new
/// temporary file beside `path`, which is flushed to disk and renamed over `path` only when
/// `fill` succeeded; otherwise it is removed and `path` is untouched (a full disk never
/// leaves half a file in place of the old one).
///
/// # Errors
/// [`WriteError`] from `fill` or the file system.
pub fn write_atomically(
    path: impl AsRef<Path>,
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), WriteError> {
    let path = path.as_ref();
    let io = |source| WriteError {
        path: path.to_path_buf(),
        source,
    };
    let path = match destination(path) {
        Dest::InPlace => {
            let f = std::fs::OpenOptions::new().write(true).open(path).map_err(io)?;
            let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
            return fill(&mut w).and_then(|()| w.flush()).map_err(io);
        }
        Dest::Atomic(p) => p,
    };
    let (tmp, f) = TempFile::create(&path)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
    fill(&mut w).map_err(|e| tmp.error(e))?;
    let f = w.into_inner().map_err(|e| tmp.error(e.into_error()))?;
    tmp.commit(f, true)
}

/// Where a write of `path` goes.
#[derive(Debug)]
pub enum Dest {
    /// An existing file that is not a regular file (a device such as `/dev/null`, a FIFO, a
    /// terminal): written in place. A rename would replace the device node itself.
    InPlace,
    /// A regular file (or none yet): written atomically at this path, the file a symbolic
    /// link names rather than the link.
    Atomic(PathBuf),
}

/// The error for a streamed or exploded output that is not a regular file.
pub fn not_regular(path: &Path) -> WriteError {
    WriteError {
        path: path.to_path_buf(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file"),
    }
}

/// Where a write of `path` goes (see [`Dest`]).
pub fn destination(path: &Path) -> Dest {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => Dest::InPlace,
        Ok(_) if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) => {
            Dest::Atomic(std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()))
        }
        _ => Dest::Atomic(path.to_path_buf()),
    }
}

/// Creates `path`, which must not exist (so never through a planted symbolic link), with the
/// permissions `File::create` gives (the umask applies).
pub fn create_new(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .read(true)
        .create_new(true)
        .open(path)
}

/// How old an unlocked temporary must be to be taken for a dead writer's: a writer locks its
/// temporary right after creating it, so this only covers that instant (and file systems
/// whose locks are advisory in other ways).
pub const STALE_AGE: std::time::Duration = std::time::Duration::from_secs(60);

/// An exclusive, non-blocking `flock` on `f` (held until every descriptor of its open file is
/// closed); `Ok(false)` when another holds it.
fn try_lock(f: &std::fs::File) -> std::io::Result<bool> {
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd as _;
        // SAFETY: `f` is an open file descriptor for the duration of the call; flock only
        // takes or refuses an advisory lock on it.
        let r = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if r == 0 {
            return Ok(true);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() == std::io::ErrorKind::WouldBlock {
            return Ok(false);
        }
        Err(e)
    }
    #[cfg(not(unix))]
    {
        let _ = f;
        Ok(false)
    }
}

/// Removes the temporary files that writes of `target` killed before they finished left
/// beside it (`.NAME.PID.RANDOM.tmp` that nobody holds locked and older than [`STALE_AGE`]);
/// best effort.
pub fn clean_stale_temps(target: &Path) {
    clean_stale_temps_older_than(target, STALE_AGE);
}

/// [`clean_stale_temps`] with the age given.
pub fn clean_stale_temps_older_than(target: &Path, age: std::time::Duration) {
    let (dir, name) = dir_and_name(target);
    let prefix = format!(".{name}.");
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = file.strip_prefix(&prefix).and_then(|r| r.strip_suffix(".tmp")) else {
            continue;
        };
        let mut parts = rest.split('.');
        let (Some(pid), Some(unique), None) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        if unique.is_empty() || !unique.bytes().all(|b| b.is_ascii_alphanumeric()) || pid.parse::<u32>().is_err() {
            continue;
        }
        let path = e.path();
        let old = std::fs::symlink_metadata(&path)
            .ok()
            .filter(std::fs::Metadata::is_file)
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|a| a >= age);
        if !old {
            continue;
        }
        // Locked by us while it is removed: a writer that holds it keeps it.
        if let Ok(f) = crate::source::open_nonblocking(&path)
            && try_lock(&f).unwrap_or(false)
        {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Where a file is written: memory, or a file that can be flushed to disk early.
pub trait Sink: std::io::Write + std::io::Seek {
    /// Starts putting what was written so far on disk (called while a checksum is still
    /// being computed on another thread, so the two overlap).
    fn flush_early(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Sink for std::io::Cursor<Vec<u8>> {}

impl<S: Sink + ?Sized> Sink for &mut S {
    fn flush_early(&mut self) -> std::io::Result<()> {
        (**self).flush_early()
    }
}

impl Sink for std::io::BufWriter<std::fs::File> {
    fn flush_early(&mut self) -> std::io::Result<()> {
        self.flush()?;
        self.get_ref().sync_data()
    }
}

/// A buffered file written without forcing anything to disk (`WriteOptions::durable(false)`).
#[derive(Debug)]
pub struct Volatile(pub std::io::BufWriter<std::fs::File>);

impl std::io::Write for Volatile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.0.write_all(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

impl std::io::Seek for Volatile {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        self.0.seek(pos)
    }
    fn stream_position(&mut self) -> std::io::Result<u64> {
        self.0.stream_position()
    }
}

impl Sink for Volatile {}

#[cfg(test)]
mod tests {
    use super::*;

    /// A live writer's temporary whose PID is not ours to see (another PID namespace) stays,
    /// however old; once its writer is gone (the lock released), it is cleaned.
    #[test]
    fn temporaries_are_cleaned_by_lock_not_by_pid() {
        let dir = std::env::temp_dir().join(format!("asdf-rs-stale-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("t.asdf");
        // A PID above Linux's pid_max: never in /proc.
        let tmp = dir.join(".t.asdf.4294967295.12345.tmp");
        let writer = create_new(&tmp).unwrap();
        assert!(try_lock(&writer).unwrap());
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        writer.set_modified(old).unwrap();
        clean_stale_temps(&target);
        assert!(tmp.exists(), "a locked temporary was removed");
        // A second process (another open file description) cannot take the lock either.
        let other = crate::source::open_nonblocking(&tmp).unwrap();
        assert!(!try_lock(&other).unwrap());
        drop(other);
        drop(writer);
        // Unlocked but young: kept (the instant between a writer's create and its lock).
        let young = dir.join(".t.asdf.4294967295.777.tmp");
        drop(create_new(&young).unwrap());
        clean_stale_temps(&target);
        assert!(!tmp.exists(), "a dead writer's old temporary stayed");
        assert!(young.exists());
        clean_stale_temps_older_than(&target, std::time::Duration::ZERO);
        assert!(!young.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A file written atomically has the mode `File::create` gives (not `tempfile`'s 0600),
    /// and a temporary is named `.NAME.PID.RANDOM.tmp`, as the sweep expects.
    #[cfg(unix)]
    #[test]
    fn written_files_have_the_usual_mode_and_temporaries_their_name() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = std::env::temp_dir().join(format!("asdf-rs-mode-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("m.asdf");
        let plain = dir.join("plain");
        drop(std::fs::File::create(&plain).unwrap());
        write_atomically(&target, |w| w.write_all(b"x")).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&target), mode(&plain));
        assert_ne!(mode(&target), 0o600, "a umask of 0o177 would be needed for this");
        let (tmp, f) = TempFile::create(&target).unwrap();
        let name = tmp.tmp.file_name().unwrap().to_string_lossy().into_owned();
        let prefix = format!(".m.asdf.{}.", std::process::id());
        let unique = name.strip_prefix(&prefix).and_then(|r| r.strip_suffix(".tmp")).unwrap();
        assert_eq!(unique.len(), 12, "{name}");
        assert!(unique.bytes().all(|b| b.is_ascii_alphanumeric()), "{name}");
        let path = tmp.tmp.clone();
        // An unlocked old temporary of this form is swept; this one is locked (live).
        clean_stale_temps_older_than(&target, std::time::Duration::ZERO);
        assert!(path.exists());
        drop((tmp, f));
        assert!(!path.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
