//! Integration tests of this crate in one binary (one link of the whole stack instead of
//! one per file: CI's build time). Each file is a module; run one with
//! `cargo test --test suite <file>::`.

#[path = "blosc2_frames.rs"]
mod blosc2_frames;
#[path = "browser.rs"]
mod browser;
#[path = "corpus.rs"]
mod corpus;
#[path = "edges.rs"]
mod edges;
#[path = "expectations.rs"]
mod expectations;
#[path = "fuzz_replay.rs"]
mod fuzz_replay;
#[path = "interop.rs"]
mod interop;
#[path = "python_bindings.rs"]
mod python_bindings;
#[path = "realworld.rs"]
mod realworld;
#[path = "remote.rs"]
mod remote;
#[path = "slices.rs"]
mod slices;
#[path = "structure.rs"]
mod structure;
#[path = "wcs.rs"]
mod wcs;
