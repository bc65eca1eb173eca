//! Writers that share a file: what a file looked like when it was opened, an advisory lock
//! for the time of a write over it, and the check that nobody changed it in between.
//!
//! The `asdf` facade's update in place and its writes over the file's own path take an
//! exclusive lock (`flock`) on the file, then check that the path still names the file that was
//! opened, with the same size and modification time and the same tree bytes. Two such writers
//! racing on one file are serialised by the lock, and the one that comes second finds the file
//! changed and refuses ([`LockError::Changed`]) instead of writing from stale offsets: no bytes
//! of the first writer are lost.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::atomic::WriteError;

/// Why a file could not be locked for a write over it.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Opening, locking or reading it failed.
    #[error(transparent)]
    Io(#[from] WriteError),
    /// It is not the file that was opened any more.
    #[error("{}: not written: the file changed since it was opened ({what}); open it again and redo the change", path.display())]
    Changed {
        /// The file.
        path: PathBuf,
        /// What changed.
        what: &'static str,
    },
}

/// What a file looked like when it was opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    len: u64,
    modified: Option<SystemTime>,
    id: (u64, u64),
}

impl Fingerprint {
    /// The fingerprint of the file `meta` describes.
    #[must_use]
    pub fn of(meta: &std::fs::Metadata) -> Self {
        Self {
            len: meta.len(),
            modified: meta.modified().ok(),
            id: file_id(meta),
        }
    }
}

#[cfg(unix)]
fn file_id(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt as _;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn file_id(_meta: &std::fs::Metadata) -> (u64, u64) {
    (0, 0)
}

/// Whether `a` and `b` name the same existing file (the same device and inode on Unix, the
/// same canonical path elsewhere).
#[must_use]
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) if cfg!(unix) => file_id(&x) == file_id(&y),
        _ => match (a.canonicalize(), b.canonicalize()) {
            (Ok(x), Ok(y)) => x == y,
            _ => false,
        },
    }
}

/// Opens `path` for writing, waits for an exclusive lock on it, and checks that it is still
/// the file described by `opened` whose tree bytes (at `tree_at`) were `tree`. The lock lasts
/// as long as the returned file is open.
///
/// # Errors
/// [`LockError`].
pub fn lock_unchanged(
    path: &Path,
    opened: Option<&Fingerprint>,
    tree_at: u64,
    tree: Option<&[u8]>,
) -> Result<File, LockError> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let io = |source| {
        LockError::Io(WriteError {
            path: path.to_path_buf(),
            source,
        })
    };
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(io)?;
    f.lock().map_err(io)?;
    let changed = |what: &'static str| LockError::Changed {
        path: path.to_path_buf(),
        what,
    };
    let Some(opened) = opened else {
        return Ok(f);
    };
    let now = Fingerprint::of(&f.metadata().map_err(io)?);
    let named = std::fs::metadata(path).map_err(io)?;
    if file_id(&named) != now.id || now.id != opened.id {
        return Err(changed("the path now names another file (it was replaced)"));
    }
    if now.len != opened.len {
        return Err(changed("its size changed"));
    }
    if now.modified != opened.modified {
        return Err(changed("it was modified"));
    }
    if let Some(tree) = tree {
        let mut now_tree = vec![0u8; tree.len()];
        f.seek(SeekFrom::Start(tree_at)).map_err(io)?;
        f.read_exact(&mut now_tree).map_err(io)?;
        if now_tree != tree {
            return Err(changed("its tree changed"));
        }
    }
    Ok(f)
}
