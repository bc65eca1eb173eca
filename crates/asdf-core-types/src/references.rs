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

/// Why a reference to another file is not followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// `http(s)://` is never fetched.
    Remote,
    /// [`ReferencePolicy::None`].
    NoneAllowed,
    /// An absolute path, `..` or `file://` under [`ReferencePolicy::RelativeOnly`].
    NotRelative,
    /// A URI scheme other than `file://`.
    Scheme,
    /// A relative path that a symbolic link takes outside the file's directory.
    OutsideDirectory(std::path::PathBuf),
}

/// The local file a reference `uri` of a file in `dir` names, as `policy` allows (`Ok(None)`:
/// a relative reference of a file with no directory, opened from memory).
///
/// A reference is a URI: its path is percent-decoded, as Python asdf opens it (`my%20file.asdf`
/// is `my file.asdf`), and the policy applies to what is opened (`..%2Fx.asdf` is `../x.asdf`).
/// Under [`ReferencePolicy::RelativeOnly`], symbolic links are followed to where they lead,
/// which must still be inside `dir`.
///
/// # Errors
/// What the policy refuses.
pub fn local_path(
    uri: &str,
    dir: Option<&std::path::Path>,
    policy: ReferencePolicy,
) -> Result<Option<std::path::PathBuf>, Refused> {
    use std::path::{Component, PathBuf};
    if uri.starts_with("http://") || uri.starts_with("https://") {
        return Err(Refused::Remote);
    }
    if policy == ReferencePolicy::None {
        return Err(Refused::NoneAllowed);
    }
    let local = uri.strip_prefix("file://").unwrap_or(uri);
    // (Escapes that do not decode to UTF-8 leave the text as written.)
    let decoded = PathBuf::from(
        percent_encoding::percent_decode_str(local)
            .decode_utf8()
            .map_or_else(|_| local.to_owned(), std::borrow::Cow::into_owned),
    );
    let rel = decoded.as_path();
    let plain =
        !uri.contains("://") && !rel.is_absolute() && !rel.components().any(|c| matches!(c, Component::ParentDir));
    if !plain && policy != ReferencePolicy::AnyLocalPath {
        return Err(Refused::NotRelative);
    }
    if local.contains("://") {
        return Err(Refused::Scheme);
    }
    if rel.is_absolute() {
        return Ok(Some(rel.to_path_buf()));
    }
    let Some(dir) = dir else { return Ok(None) };
    let joined = dir.join(rel);
    if policy == ReferencePolicy::RelativeOnly {
        // (A path that does not resolve is left for the open to report.) The file's own folder
        // always resolves (it was opened from it); if it does not now, nothing is opened on its
        // behalf.
        let real_dir = dir
            .canonicalize()
            .map_err(|_| Refused::OutsideDirectory(dir.to_path_buf()))?;
        if let Ok(real) = joined.canonicalize() {
            if !real.starts_with(&real_dir) {
                return Err(Refused::OutsideDirectory(real));
            }
            // Opened where the link leads, as checked.
            return Ok(Some(real));
        }
    }
    Ok(Some(joined))
}
