//! The blocks of a file being written: which block of the file read (or added since, or of
//! another file) becomes which block of the new file, and the edits that renumber the tree's
//! ndarray sources and chunk maps to match. Pure over the tree and a few facts about the
//! blocks; the facade reads and writes the bytes.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

pub use asdf_layout::copy::BlockSrc;
use asdf_yaml::{Document, Edits, Node, Step};

use crate::{NdArray, NdArrayError};

/// The absolute index of block `source` among `total` blocks (`-1` is the last): the one place
/// negative sources are counted.
#[must_use]
pub fn absolute_index(source: i64, total: usize) -> Option<usize> {
    let abs = if source < 0 {
        i64::try_from(total).ok()?.checked_add(source)?
    } else {
        source
    };
    usize::try_from(abs).ok().filter(|i| *i < total)
}

/// What the numbering needs to know of the blocks.
pub struct Facts<'a, E> {
    /// Blocks of the file read.
    pub existing: usize,
    /// Blocks added since (numbered after those).
    pub pending: usize,
    /// Blocks of the file read whose arrays moved elsewhere or were replaced: not copied
    /// (written empty where every block keeps its place).
    pub gone: &'a dyn Fn(usize) -> bool,
    /// The file's streamed block (its last), unless a new stream replaces it.
    pub old_stream: Option<usize>,
    /// Blocks of other files (exploded form) come into this file.
    pub internalize: bool,
    /// Ndarrays (by pointer) whose string sources are written as they are.
    pub kept_sources: &'a HashSet<String>,
    /// The file written streams a new array (`source: -1`), whose block comes last.
    pub stream_target: bool,
    /// The decoded bytes of block `i` (chunk maps), where they can be read.
    pub data: &'a dyn Fn(usize) -> Option<Cow<'a, [u8]>>,
    /// The decoded length of block `i` of the file read (a streamed array's rows).
    pub len: &'a dyn Fn(usize) -> Result<u64, E>,
}

impl<E> std::fmt::Debug for Facts<'_, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Facts")
            .field("existing", &self.existing)
            .field("pending", &self.pending)
            .field("old_stream", &self.old_stream)
            .field("internalize", &self.internalize)
            .field("stream_target", &self.stream_target)
            .finish_non_exhaustive()
    }
}

/// The blocks of the file written, in order, and the edits that renumber the tree.
#[derive(Debug)]
pub struct Numbering {
    /// Renumbered sources and chunk maps, and streamed arrays' shapes made fixed.
    pub edits: Edits,
    /// Where each block comes from.
    pub order: Vec<BlockSrc>,
    /// Blocks written as they are (chunks in their own codec, chunk maps).
    pub as_is: HashSet<usize>,
    /// The file's streamed block, written last and streamed again.
    pub keep_stream: Option<usize>,
}

/// Why the blocks cannot be numbered.
#[derive(Debug)]
pub enum NumberingError<E> {
    /// An ndarray's source names no block.
    NoBlock {
        /// The source.
        source: i64,
        /// Blocks in all.
        total: usize,
    },
    /// A block number a chunk map (int32) cannot hold.
    TooMany(usize),
    /// A streamed ndarray that cannot be read.
    Array(NdArrayError),
    /// A block's length that cannot be read.
    Block(E),
}

/// A chunked array (asdf-zarr) of the tree with chunks in blocks: where it is, and its chunk
/// map's block and chunk blocks (absolute indices; negative: a chunk not stored).
struct Chunked {
    path: Vec<Step>,
    map_block: usize,
    chunks: Vec<i32>,
}

/// The ndarrays of the tree with block sources (masks included, after their array), in the
/// order they are met.
#[must_use]
pub fn block_arrays(root: &Node) -> Vec<Vec<Step>> {
    let mut out = Vec::new();
    root.walk(&mut |path, n| {
        if n.tag.as_deref().is_some_and(crate::is_ndarray_tag) && n.get("source").is_some() {
            out.push(path.to_vec());
        }
        true
    });
    out
}

/// The chunked arrays of `doc` with chunks in blocks whose chunk maps can be read (of the size
/// their metadata gives, naming blocks the file has).
fn chunked<E>(doc: &Document, total: usize, facts: &Facts<'_, E>) -> Vec<Chunked> {
    let mut found = Vec::new();
    doc.root.walk(&mut |path, n| {
        if n.tag.as_deref().is_some_and(crate::chunk_tags::is_zarr_tag)
            && let Some(src) = n.get("chunk_block_map").and_then(Node::as_i64)
        {
            found.push((path.to_vec(), src));
        }
        true
    });
    found
        .into_iter()
        .filter_map(|(path, src)| {
            let map_block = absolute_index(src, total)?;
            let bytes = (facts.data)(map_block)?;
            if !bytes.len().is_multiple_of(4) {
                return None;
            }
            let chunks: Vec<i32> = bytes
                .chunks_exact(4)
                .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            chunks
                .iter()
                .all(|&b| b < 0 || usize::try_from(b).is_ok_and(|b| b < total))
                .then_some(Chunked {
                    path,
                    map_block,
                    chunks,
                })
        })
        .collect()
}

/// The number block `old` gets in the file written: its place in `order`, where it is put
/// when first met (`existing`: how many blocks the file read has; later ones are added).
fn place(map: &mut HashMap<usize, usize>, order: &mut Vec<BlockSrc>, old: usize, existing: usize) -> usize {
    *map.entry(old).or_insert_with(|| {
        order.push(if old < existing {
            BlockSrc::Existing(old)
        } else {
            BlockSrc::New(old - existing)
        });
        order.len() - 1
    })
}

fn int(i: usize) -> Node {
    Node::int(i64::try_from(i).unwrap_or(i64::MAX))
}

/// Numbers the blocks of the file written with the tree `doc`, in the order their arrays
/// appear, as edits applied while the tree is written (the tree itself is neither changed nor
/// copied).
///
/// A block of the file read that no ndarray names by number may be named by something else (an
/// extension's tag referring to blocks by index, as asdf-zarr's `chunk_block_map` does): then
/// every block of the file keeps its place and its index, so such references stay true, and
/// nothing is dropped. Chunked arrays name their blocks through their chunk maps: those are
/// renumbered with the rest (a new map written); a map that cannot be read leaves its blocks
/// unnamed, so every block keeps its place.
///
/// # Errors
/// A source that names no block, a streamed array that cannot be read, more blocks than a chunk
/// map can name.
pub fn number_blocks<E>(doc: &Document, facts: &Facts<'_, E>) -> Result<Numbering, NumberingError<E>> {
    let mut edits = Edits::default();
    let arrays = block_arrays(&doc.root);
    let existing = facts.existing;
    let total = existing + facts.pending;
    let mut order: Vec<BlockSrc> = Vec::new();
    let mut map: HashMap<usize, usize> = HashMap::new();
    let mut ext_map: HashMap<String, usize> = HashMap::new();
    let mut named: HashSet<usize> = arrays
        .iter()
        .filter_map(|p| doc.root.at_path(p)?.get("source")?.as_i64())
        .filter_map(|src| absolute_index(src, total))
        .collect();
    let chunked = chunked(doc, total, facts);
    for c in &chunked {
        named.insert(c.map_block);
        named.extend(c.chunks.iter().filter_map(|&b| usize::try_from(b).ok()));
    }
    let gone = |i: usize| (facts.gone)(i) && !named.contains(&i);
    let keep_places = (0..existing).any(|i| !named.contains(&i) && !gone(i));
    let is_streamed = |n: &Node| {
        n.get("shape")
            .and_then(Node::as_sequence)
            .is_some_and(|s| s.items.iter().any(|d| d.as_str() == Some("*")))
    };
    let old_stream = facts.old_stream.filter(|_| !facts.stream_target);
    let keep_stream = old_stream.filter(|&i| {
        arrays.iter().any(|p| {
            doc.root.at_path(p).is_some_and(|n| {
                is_streamed(n)
                    && n.get("source")
                        .and_then(Node::as_i64)
                        .is_some_and(|src| absolute_index(src, total) == Some(i))
            })
        })
    });
    if keep_places {
        for i in (0..existing).filter(|i| Some(*i) != keep_stream) {
            map.insert(i, i);
            order.push(if gone(i) {
                BlockSrc::Empty
            } else {
                BlockSrc::Existing(i)
            });
        }
    }
    let no_block = |source: i64| NumberingError::NoBlock { source, total };
    for path in &arrays {
        let Some(n) = doc.root.at_path(path) else {
            continue;
        };
        if let Some(uri) = n.get("source").and_then(Node::as_str).map(str::to_owned) {
            if !facts.internalize
                || facts
                    .kept_sources
                    .contains(&asdf_yaml::pointer::pointer_of(&doc.root, path))
            {
                continue;
            }
            // Exploded form: the external file's block comes into this file.
            let new = *ext_map.entry(uri.clone()).or_insert_with(|| {
                order.push(BlockSrc::External(uri.clone()));
                order.len() - 1
            });
            if let Some(s) = n.get("source") {
                edits.replace(s, int(new));
            }
            continue;
        }
        let Some(src) = n.get("source").and_then(Node::as_i64) else {
            continue;
        };
        let streamed = is_streamed(n);
        if streamed && src == -1 && facts.stream_target {
            // The array being streamed: its block comes last.
            continue;
        }
        if streamed && keep_stream.is_some_and(|i| absolute_index(src, total) == Some(i)) {
            // The file's streamed array stays streamed: its block is written last.
            if let Some(s) = n.get("source") {
                edits.replace(s, Node::int(-1));
            }
            continue;
        }
        if streamed {
            // A streamed array of the file read becomes an ordinary array of fixed shape.
            let idx = absolute_index(src, total).ok_or_else(|| no_block(src))?;
            let a = NdArray::from_node(n, &Document::new(Node::null())).map_err(NumberingError::Array)?;
            let len = (facts.len)(idx).map_err(NumberingError::Block)?;
            let shape = a.resolved_shape(Some(len)).map_err(NumberingError::Array)?;
            if let Some(sh) = n.get("shape") {
                edits.replace(sh, Node::seq(shape.iter().map(|d| int(*d)).collect()));
            }
        }
        let old = absolute_index(src, total).ok_or_else(|| no_block(src))?;
        let new = place(&mut map, &mut order, old, existing);
        if let Some(s) = n.get("source") {
            edits.replace(s, int(new));
        }
    }
    // Blocks written as they are (chunks compressed by their own codec, chunk maps).
    let mut as_is: HashSet<usize> = HashSet::new();
    for c in &chunked {
        let mut new_map = Vec::with_capacity(c.chunks.len() * 4);
        for &b in &c.chunks {
            let new = match usize::try_from(b) {
                Ok(old) => {
                    let new = place(&mut map, &mut order, old, existing);
                    as_is.insert(new);
                    i32::try_from(new).map_err(|_| NumberingError::TooMany(new))?
                }
                Err(_) => -1,
            };
            new_map.extend_from_slice(&new.to_le_bytes());
        }
        order.push(BlockSrc::Made(new_map));
        as_is.insert(order.len() - 1);
        if let Some(m) = doc.root.at_path(&c.path).and_then(|n| n.get("chunk_block_map")) {
            edits.replace(m, int(order.len() - 1));
        }
    }
    Ok(Numbering {
        edits,
        order,
        as_is,
        keep_stream,
    })
}

/// Where the block of one part of an exploded write comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartSource {
    /// A block source of the tree (negative: from the end).
    Block(i64),
    /// Another file's block, by the URI the tree gives.
    External(String),
}

/// One part of an exploded write: a file of its own holding one block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// Where its block comes from.
    pub source: PartSource,
    /// Its file name, beside the main file (`stem0000.asdf`, `stem0001.asdf`, ...).
    pub name: String,
}

/// An exploded write planned: the parts, in the order their arrays first appear, and the tree
/// of the main file with each ndarray's source naming its part's file.
#[derive(Debug, Clone)]
pub struct Exploded {
    /// One per distinct block source (arrays sharing a block share its part).
    pub parts: Vec<Part>,
    /// The main file's tree.
    pub doc: Document,
}

/// Why a tree cannot be written in exploded form.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExplodeError {
    /// The chunked array at this JSON pointer: its chunks are blocks its chunk map names by
    /// number, which the exploded form has no place for.
    Chunked(String),
    /// Blocks of the file read that no ndarray names (an extension's tag may refer to them by
    /// index): they would be left behind.
    Unnamed(Vec<usize>),
}

/// The exploded form of `doc` (a file of `file_blocks` blocks read): each distinct ndarray
/// source becomes a part named `stem` and its number. Pure: the caller reads the blocks and
/// writes the files.
///
/// # Errors
/// [`ExplodeError`].
pub fn explode(doc: &Document, file_blocks: usize, total_blocks: usize, stem: &str) -> Result<Exploded, ExplodeError> {
    let mut chunked = None;
    doc.root.walk(&mut |path, n| {
        if chunked.is_none() && n.tag.as_deref().is_some_and(crate::chunk_tags::is_chunked_array_tag) {
            chunked = Some(asdf_yaml::pointer::pointer_of(&doc.root, path));
        }
        chunked.is_none()
    });
    if let Some(pointer) = chunked {
        return Err(ExplodeError::Chunked(pointer));
    }
    let arrays = block_arrays(&doc.root);
    let named: HashSet<usize> = arrays
        .iter()
        .filter_map(|p| doc.root.at_path(p)?.get("source")?.as_i64())
        .filter_map(|i| absolute_index(i, total_blocks))
        .collect();
    let left: Vec<usize> = (0..file_blocks).filter(|i| !named.contains(i)).collect();
    if !left.is_empty() {
        return Err(ExplodeError::Unnamed(left));
    }
    let mut main = doc.clone();
    let mut parts = Vec::new();
    let mut names: HashMap<String, String> = HashMap::new();
    for p in arrays {
        let Some(source) = doc.root.at_path(&p).and_then(|n| n.get("source")) else {
            continue;
        };
        let key = source.as_scalar().map(|x| x.text.to_string()).unwrap_or_default();
        let name = names
            .entry(key.clone())
            .or_insert_with(|| {
                let name = format!("{stem}{:04}.asdf", parts.len());
                let source = source.as_i64().map_or(PartSource::External(key), PartSource::Block);
                parts.push(Part {
                    source,
                    name: name.clone(),
                });
                name
            })
            .clone();
        if let Some(s) = main.root.at_path_mut(&p).and_then(|n| n.get_mut("source")) {
            *s = Node::str(name);
        }
    }
    Ok(Exploded { parts, doc: main })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Document {
        asdf_yaml::parse(text.as_bytes(), &asdf_yaml::Limits::default())
            .unwrap()
            .document
    }

    #[test]
    fn explode_shares_a_part_per_source_and_renames_sources() {
        let d = doc(concat!(
            "a: !<tag:stsci.edu:asdf/core/ndarray-1.1.0> {source: 1, datatype: uint8, shape: [2]}\n",
            "b: !<tag:stsci.edu:asdf/core/ndarray-1.1.0> {source: 0, datatype: uint8, shape: [2]}\n",
            "c: !<tag:stsci.edu:asdf/core/ndarray-1.1.0> {source: -1, datatype: uint8, shape: [2]}\n",
            "d: !<tag:stsci.edu:asdf/core/ndarray-1.1.0> {source: other.asdf, datatype: uint8, shape: [2]}\n",
            "e: !<tag:stsci.edu:asdf/core/ndarray-1.1.0> {source: 1, datatype: uint8, shape: [2]}\n",
        ));
        let x = explode(&d, 2, 2, "obs").unwrap();
        let sources: Vec<_> = x.parts.iter().map(|p| (p.source.clone(), p.name.as_str())).collect();
        // `-1` names block 1 too, but by another text: a part of its own, as the tree wrote it.
        assert_eq!(
            sources,
            [
                (PartSource::Block(1), "obs0000.asdf"),
                (PartSource::Block(0), "obs0001.asdf"),
                (PartSource::Block(-1), "obs0002.asdf"),
                (PartSource::External("other.asdf".to_owned()), "obs0003.asdf"),
            ]
        );
        let src = |k: &str| {
            x.doc
                .root
                .get(k)
                .unwrap()
                .get("source")
                .unwrap()
                .as_str()
                .unwrap()
                .to_owned()
        };
        assert_eq!(
            ["a", "b", "c", "d", "e"].map(src),
            [
                "obs0000.asdf",
                "obs0001.asdf",
                "obs0002.asdf",
                "obs0003.asdf",
                "obs0000.asdf"
            ]
        );
    }

    #[test]
    fn explode_refuses_unnamed_blocks_and_chunked_arrays() {
        let d = doc("a: !<tag:stsci.edu:asdf/core/ndarray-1.1.0> {source: 1, datatype: uint8, shape: [2]}\n");
        assert_eq!(explode(&d, 3, 3, "x").unwrap_err(), ExplodeError::Unnamed(vec![0, 2]));
        let d = doc(concat!(
            "a: !<tag:stsci.edu:asdf/core/ndarray-1.1.0> {source: 0, datatype: uint8, shape: [2]}\n",
            "z: {inner: !<asdf://asdf-format.org/zarr/tags/zarr-1.0.0> {chunk_block_map: 1}}\n",
        ));
        assert_eq!(
            explode(&d, 1, 1, "x").unwrap_err(),
            ExplodeError::Chunked("/z/inner".to_owned())
        );
    }
}
