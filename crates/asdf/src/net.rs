//! Remote files and object stores: the one place the facade meets `asdf-remote` (feature
//! `remote`). Built without it, the same names exist and answer that this build reads and
//! writes no URLs (an error of kind `Usage`); nothing else changes.

#[cfg(feature = "remote")]
#[path = "net/on.rs"]
mod imp;

#[cfg(not(feature = "remote"))]
#[path = "net/off.rs"]
mod imp;

pub use imp::{RemoteError, RemoteOptions, RemoteStats, is_url};
pub(crate) use imp::{open_url, remote_kind};
