//! Where a chunked array is read from ([`Context`]), and where a store on the local file system
//! is as a node names it: both in every build (the facade finds the files a tree refers to even
//! when it reads no chunked array).

use std::path::Path;

use asdf_core_types::ReferencePolicy;
use asdf_yaml::Node;

type Reader = asdf_layout::Reader<Box<dyn asdf_layout::ReadAt>>;

/// Where a chunked array is read from: the file's blocks, its directory and what may be
/// opened beside it.
#[allow(missing_debug_implementations)] // `absolute` is a closure
pub struct Context<'a> {
    /// The file's blocks.
    pub reader: &'a Reader,
    /// Turns a block source (negative: from the end) into a block index.
    pub absolute: &'a dyn Fn(i64, usize) -> Option<usize>,
    /// The file's directory (for stores beside it).
    pub dir: Option<&'a Path>,
    /// Which stores beside the file may be opened.
    pub policy: ReferencePolicy,
    /// The largest whole array decoded into memory.
    pub max_bytes: u64,
    /// The URL the file was opened from and the options it was opened with (a remote file).
    #[cfg(feature = "remote")]
    pub remote: Option<(String, asdf_remote::RemoteOptions)>,
}

/// The folder of a store on the local file system as written (a directory store's, or a local
/// `FSStore`'s): `None` for other stores.
pub fn local_store_path(store: &Node) -> Option<&str> {
    match store.get("type_string").and_then(Node::as_str)? {
        "DirectoryStore" | "NestedDirectoryStore" | "LocalStore" => store.get("path").and_then(Node::as_str),
        _ => local_fs_store(store),
    }
}

/// The folder of an `FSStore` on the local file system (zarr-python's `FSStore` of a path, whose
/// `fs` is fsspec's local file system, or a `file://` path): read as a directory store, under
/// the reference policy. `None` for other stores.
pub(crate) fn local_fs_store(store: &Node) -> Option<&str> {
    if store.get("type_string").and_then(Node::as_str) != Some("FSStore") {
        return None;
    }
    let path = store.get("path").and_then(Node::as_str)?;
    if let Some(local) = path.strip_prefix("file://") {
        return Some(local);
    }
    if path.contains("://") {
        return None;
    }
    // fsspec's description of its file system (JSON text): a local one says so.
    let fs: serde_json::Value = serde_json::from_str(store.get("fs").and_then(Node::as_str)?).ok()?;
    let local = |p: &serde_json::Value| matches!(p.as_str(), Some("file" | "local"));
    let protocol = fs.get("protocol")?;
    let is_local = local(protocol) || protocol.as_array().is_some_and(|a| a.iter().any(local));
    is_local.then_some(path)
}
