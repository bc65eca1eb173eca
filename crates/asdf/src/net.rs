//! Remote files and object stores: `asdf-remote`'s names as the facade uses them. Built without
//! the feature `remote`, `asdf-remote` is built without its network: every call answers that
//! this build reads and writes no URLs (an [`crate::Error::Remote`] of kind `Usage`).

pub(crate) use asdf_remote::upload::Condition;
pub use asdf_remote::{Error as RemoteError, RemoteOptions, Stats as RemoteStats, is_url};
pub(crate) use asdf_remote::{open as open_source, put_file, same_origin, write_condition};
