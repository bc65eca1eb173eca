//! Integration tests of this crate in one binary (one link of the whole stack instead of
//! one per file: CI's build time). Each file is a module; run one with
//! `cargo test --test suite <file>::`.

#[path = "cli.rs"]
mod cli;
#[path = "edges.rs"]
mod edges;
#[path = "object_store.rs"]
mod object_store;
#[path = "wcs.rs"]
mod wcs;
