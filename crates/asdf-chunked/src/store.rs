//! Stores beside the file: directories (inside the file's directory under the default
//! reference policy, links followed and checked) and, for a file opened from a URL, `FSStore`s
//! on its own origin.

use std::path::{Path, PathBuf};

use asdf_core_types::ReferencePolicy;
use asdf_yaml::Node;

use crate::error::ChunkedError;
use crate::place::{local_fs_store, local_store_path};

/// The directory of the store `store` (a `store:` or `meta_store:` mapping as asdf-zarr
/// writes it), checked against `policy`: under the default policy it must be inside `dir`,
/// the file's directory (asdf-zarr writes absolute paths, so an absolute path inside it is
/// accepted). With it, the bound every file read from the store must resolve inside (the
/// file's directory, links followed; `None` when the policy allows any local path).
pub(crate) fn store_dir(
    store: &Node,
    dir: Option<&Path>,
    policy: ReferencePolicy,
) -> Result<(PathBuf, Option<PathBuf>), ChunkedError> {
    let kind = store
        .get("type_string")
        .and_then(Node::as_str)
        .ok_or(ChunkedError::Metadata("store type_string"))?;
    if !matches!(kind, "DirectoryStore" | "NestedDirectoryStore" | "LocalStore") && local_fs_store(store).is_none() {
        return Err(ChunkedError::ExternalStore(format!(
            "a `{kind}` store is not read (directory stores are, and FSStores on the local file system or at a URL)"
        )));
    }
    let path = local_store_path(store).ok_or(ChunkedError::Metadata("store path"))?;
    if policy == ReferencePolicy::None {
        return Err(ChunkedError::StoreRefusedByNone(PathBuf::from(path)));
    }
    let dir = dir.ok_or_else(|| {
        ChunkedError::ExternalStore("the file has no directory (a remote or in-memory file)".to_owned())
    })?;
    let path = dir.join(path);
    let canon = path
        .canonicalize()
        .map_err(|e| ChunkedError::StoreIo(path.clone(), e))?;
    if policy == ReferencePolicy::RelativeOnly {
        let base = dir
            .canonicalize()
            .map_err(|e| ChunkedError::StoreIo(dir.to_path_buf(), e))?;
        if !canon.starts_with(&base) {
            return Err(ChunkedError::StoreRefused(path));
        }
        return Ok((canon, Some(base)));
    }
    Ok((canon, None))
}

/// The URL of the key `key` of the store at `url`, built by the remote crate's encoding (never
/// by formatting: an HTTP store's keys are percent-encoded where a URL path needs it).
#[cfg(feature = "remote")]
pub(crate) fn store_key_url(url: &str, key: &str) -> Result<String, ChunkedError> {
    let prefix = if url.ends_with('/') {
        url.to_owned()
    } else {
        format!("{url}/")
    };
    asdf_remote::child_url(&prefix, key).map_err(|e| ChunkedError::ExternalStore(e.to_string()))
}

/// The URL of an `FSStore` (asdf-zarr writes its `path` as the URL) and the options to read it
/// with: only for a file opened from a URL, and only on the same origin (scheme, host and
/// port) as the file, so that a file cannot make its reader fetch from elsewhere.
#[cfg(feature = "remote")]
pub(crate) fn url_store(
    store: &Node,
    remote: Option<&(String, asdf_remote::RemoteOptions)>,
) -> Result<(String, asdf_remote::RemoteOptions), ChunkedError> {
    let path = store
        .get("path")
        .and_then(Node::as_str)
        .ok_or(ChunkedError::Metadata("store path"))?;
    let Some((file_url, opts)) = remote else {
        return Err(ChunkedError::ExternalStore(format!(
            "an FSStore at {path} is read only for a file opened from a URL"
        )));
    };
    if !asdf_remote::is_url(path) || !asdf_remote::same_origin(path, file_url) {
        return Err(ChunkedError::StoreRefused(PathBuf::from(path)));
    }
    Ok((path.trim_end_matches('/').to_owned(), opts.clone()))
}

/// The object at `url` (`None`: not there), at most `limit` bytes.
#[cfg(feature = "remote")]
pub(crate) fn fetch_object(
    url: &str,
    opts: &asdf_remote::RemoteOptions,
    limit: u64,
) -> Result<Option<Vec<u8>>, ChunkedError> {
    use asdf_layout::ReadAt as _;
    let io = |e: std::io::Error| ChunkedError::StoreIo(PathBuf::from(url), e);
    let src = match asdf_remote::RemoteSource::open(url, opts) {
        Ok(s) => s,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(io(std::io::Error::other(e.to_string()))),
    };
    let size = src.size().map_err(io)?;
    if size > limit {
        return Err(io(std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!("{size} bytes, more than {limit}"),
        )));
    }
    let len = usize::try_from(size).map_err(|_| io(std::io::Error::from(std::io::ErrorKind::FileTooLarge)))?;
    Ok(Some(src.bytes_at(0, len).map_err(io)?.into_owned()))
}

/// The largest metadata document read from a store.
pub(crate) const MAX_METADATA_BYTES: u64 = 1 << 24;

/// Reads the file `key` of the directory store `dir`, `None` when it is not there.
pub(crate) fn read_store_file(
    dir: &Path,
    within: Option<&Path>,
    key: &str,
    limit: u64,
) -> Result<Option<Vec<u8>>, ChunkedError> {
    use std::io::Read as _;
    let path = dir.join(key);
    // The policy applies where links lead: the file is opened by its resolved path, which
    // must be inside the bound (a chunk file that is a link out of the folder is refused).
    let real = match path.canonicalize() {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ChunkedError::StoreIo(path, e)),
    };
    if let Some(bound) = within
        && !real.starts_with(bound)
    {
        return Err(ChunkedError::StoreFileRefused(path, real));
    }
    // Opened without blocking (a FIFO put in the store would wait for a writer forever), and
    // read only when it is a regular file.
    let f = match asdf_layout::source::open_nonblocking(&real) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ChunkedError::StoreIo(path, e)),
    };
    if !f.metadata().is_ok_and(|m| m.is_file()) {
        return Err(ChunkedError::StoreIo(
            path,
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a regular file (a FIFO, a socket, a device or a folder)",
            ),
        ));
    }
    let mut out = Vec::new();
    f.take(limit.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| ChunkedError::StoreIo(path.clone(), e))?;
    if out.len() as u64 > limit {
        return Err(ChunkedError::StoreIo(
            path,
            std::io::Error::new(std::io::ErrorKind::FileTooLarge, format!("larger than {limit} bytes")),
        ));
    }
    Ok(Some(out))
}
