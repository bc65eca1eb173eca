//! What the command line writes, for programs that want the same output: the tree as JSON
//! ([`json`], `asdf-cli to-json`'s format). The commands themselves are the `asdf-cli` binary.

pub mod json;
