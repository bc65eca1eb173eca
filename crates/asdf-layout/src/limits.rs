//! Resource limits checked before anything is allocated.

/// Upper bounds on what reading a file may allocate. Every check happens before the
/// allocation, so a header claiming exabytes is an error, never an allocation attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Largest YAML tree (bytes) that is read into memory.
    pub max_tree_bytes: u64,
    /// Most blocks a file may have.
    pub max_blocks: usize,
    /// Largest decoded block (bytes) that is read into memory.
    pub max_block_bytes: u64,
    /// Largest block index (bytes) that is read.
    pub max_index_bytes: u64,
}

impl Default for Limits {
    /// 1 GiB of YAML, 1,048,576 blocks, 16 GiB per decoded block, 64 MiB of block index.
    fn default() -> Self {
        Self {
            max_tree_bytes: 1 << 30,
            max_blocks: 1 << 20,
            max_block_bytes: 16 << 30,
            max_index_bytes: 64 << 20,
        }
    }
}

impl Limits {
    /// No limits at all (for trusted files only).
    #[must_use]
    pub fn unlimited() -> Self {
        Self {
            max_tree_bytes: u64::MAX,
            max_blocks: usize::MAX,
            max_block_bytes: u64::MAX,
            max_index_bytes: u64::MAX,
        }
    }
}
