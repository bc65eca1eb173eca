//! Opening a file without blocking on it (a FIFO waits for a writer otherwise): a leaf
//! module, used by the opener, atomic writes and Zarr directory stores.

use std::path::Path;

/// Opens `path` for reading without blocking on a FIFO and without making a terminal the
/// controlling one (reads of a regular file ignore `O_NONBLOCK`). The caller then refuses
/// anything but a regular file: a device the user names is opened, then closed unread.
pub(crate) fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut o, libc::O_NONBLOCK | libc::O_NOCTTY);
    o.open(path)
}
