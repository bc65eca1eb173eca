//! Which other files a file may make its reader open.

/// Which files references (`$ref` to other files, exploded-form array sources, Zarr stores
/// beside the file) may open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ReferencePolicy {
    /// Relative paths inside the file's directory only (the default): a file cannot make
    /// its reader open `/etc/passwd` or `../../secret.asdf`.
    #[default]
    RelativeOnly,
    /// Also absolute paths, `..`, and `file://` URIs. (`http(s)://` is never fetched.)
    AnyLocalPath,
    /// No other file is opened.
    None,
}
