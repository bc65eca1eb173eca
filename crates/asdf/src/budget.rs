//! How far a walk of a whole tree goes (the CLI's commands, [`crate::json`]): an alias bomb (a few hundred bytes whose
//! aliases expand to millions of nodes) or a tree nested through aliases far deeper than the
//! parser's depth limit must not take the memory, the stack or the output of a command.
//!
//! `info` prints a node that aliases lead to once and a reference after that; `to-json`,
//! `search` and `diff` follow aliases until [`MAX_EXPANDED`] nodes were reached through
//! aliases, then write or skip them as references (with a warning); every walk stops at
//! [`MAX_DEPTH`] levels.

/// The deepest level a walk enters (the YAML parser's own limit is 1,000; aliases can nest
/// a tree deeper than that).
pub const MAX_DEPTH: usize = 2_000;

/// The most nodes a walk reaches through aliases (the tree itself is walked whole).
pub const MAX_EXPANDED: u64 = 1_000_000;

/// Counts the nodes a walk reaches through aliases.
#[derive(Debug, Default)]
pub struct Expansion {
    /// How deep inside aliases the walk is now (0: not inside one).
    inside: usize,
    /// Nodes reached inside aliases so far.
    pub expanded: u64,
    /// Whether the budget ran out (aliases were left as references).
    pub exhausted: bool,
}

impl Expansion {
    /// Called on entering a node (`alias`: it was reached through an alias): false when an
    /// alias should not be followed because the budget is spent.
    pub fn enter(&mut self, alias: bool) -> bool {
        if alias {
            if self.expanded >= MAX_EXPANDED {
                self.exhausted = true;
                return false;
            }
            self.inside += 1;
        }
        if self.inside > 0 {
            self.expanded += 1;
        }
        true
    }

    /// Called on leaving a node entered with `enter(alias)` that returned true.
    pub fn leave(&mut self, alias: bool) {
        if alias {
            self.inside -= 1;
        }
    }

    /// The warning for a walk whose budget ran out.
    pub fn warning(&self) -> Option<String> {
        self.exhausted
            .then(|| format!("aliases expand to more than {MAX_EXPANDED} nodes; the rest were left as references"))
    }
}
