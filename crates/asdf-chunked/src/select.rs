//! Which ndarrays of a tree can be stored chunked (in every build: the facade asks before it
//! learns whether this build writes chunked arrays).

use asdf_yaml::{Node, Step, Visit};

/// The ndarrays of `root` that can be chunked in `ndim` dimensions (in a block, a shape of
/// `ndim` integers), by path; and the pointers of those that have a mask, left apart (an
/// asdf-zarr array has none). An ndarray's mask, an ndarray too, is never chunked on its own.
#[must_use]
pub fn chunkable(root: &Node, ndim: usize) -> (Vec<Vec<Step>>, Vec<String>) {
    let mut found = Vec::new();
    let mut masked = Vec::new();
    root.walk_with(&mut |path, n| {
        if !n.tag.as_deref().is_some_and(asdf_core_types::is_ndarray_tag) {
            return Visit::Continue;
        }
        let candidate = n.get("source").and_then(Node::as_i64).is_some()
            && n.get("shape")
                .and_then(Node::as_sequence)
                .is_some_and(|s| s.items.len() == ndim && s.items.iter().all(|d| d.as_i64().is_some()));
        if candidate && n.get("mask").is_some() {
            masked.push(asdf_yaml::pointer::pointer_of(root, path));
        } else if candidate {
            found.push(path.to_vec());
        }
        Visit::SkipChildren
    });
    (found, masked)
}
