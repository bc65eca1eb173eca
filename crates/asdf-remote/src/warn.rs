//! Warnings of this crate (a file read whole from a server that ignores `Range`, an upload
//! left unguarded, requests that go unsigned): handed to the hook the caller sets
//! ([`set_warning_hook`]), so that a library user can show, log or capture them; printed on
//! standard error, `warning: ` first, while none is set.

use std::sync::{Arc, RwLock};

/// What receives a warning's text (one line, without `warning: `).
pub type WarningHook = Arc<dyn Fn(&str) + Send + Sync>;

static HOOK: RwLock<Option<WarningHook>> = RwLock::new(None);

/// Sets the hook that receives this crate's warnings, for the whole process (`None`: printed
/// on standard error, the default). `asdf-cli` leaves the default.
pub fn set_warning_hook(hook: Option<WarningHook>) {
    match HOOK.write() {
        Ok(mut h) => *h = hook,
        Err(poisoned) => *poisoned.into_inner() = hook,
    }
}

/// Hands `message` to the hook, or prints it.
pub(crate) fn warn(message: &str) {
    let hook = match HOOK.read() {
        Ok(h) => h.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    };
    match hook {
        Some(h) => h(message),
        None => eprintln!("warning: {message}"),
    }
}
