//! Remote files and object stores: the one place the facade meets `asdf-remote` (feature
//! `remote`): its types, and the calls the open, the writes and the references make. Built
//! without it, the same names exist and every call answers that this build reads and writes no
//! URLs (an [`crate::Error::Remote`] of kind `Usage`); nothing else changes.

#[cfg(feature = "remote")]
#[path = "net/on.rs"]
mod imp;

#[cfg(not(feature = "remote"))]
#[path = "net/off.rs"]
mod imp;

pub(crate) use imp::{
    Condition, check_condition, head, is_changed, is_usage, open_source, put_file, same_origin, version_read,
};
pub use imp::{RemoteError, RemoteOptions, RemoteStats, is_url};
