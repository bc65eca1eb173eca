//! Uploads cancelled (an interrupt) and uploads running, process-wide.

use std::sync::atomic::{AtomicU64, Ordering};

/// Set by [`cancel_uploads`].
pub(crate) static CANCEL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Uploads in progress in this process.
pub(crate) static UPLOADING: AtomicU64 = AtomicU64::new(0);

/// Cancels the uploads in progress in this process (an interrupt handler's call): each is
/// aborted, its parts deleted, before its next part; nothing is written. Uploads started
/// later are cancelled too.
pub fn cancel_uploads() {
    CANCEL.store(true, Ordering::Relaxed);
}

/// Whether [`cancel_uploads`] was called in this process: an interrupt came. An upload
/// that had sent its completion when it came is not stopped by it (the object is written), so
/// a caller that returns success after it says so.
#[must_use]
pub fn uploads_cancelled() -> bool {
    CANCEL.load(Ordering::Relaxed)
}

/// Whether an upload is in progress in this process (an interrupt handler that cancels
/// uploads lets them abort, and otherwise exits at once).
#[must_use]
pub fn uploading() -> bool {
    UPLOADING.load(Ordering::Relaxed) > 0
}

pub(crate) struct Uploading;

impl Uploading {
    pub(crate) fn start() -> Self {
        UPLOADING.fetch_add(1, Ordering::Relaxed);
        Uploading
    }
}

impl Drop for Uploading {
    fn drop(&mut self) {
        UPLOADING.fetch_sub(1, Ordering::Relaxed);
    }
}
