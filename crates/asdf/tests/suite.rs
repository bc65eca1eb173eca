//! Integration tests of this crate in one binary (one link of the whole stack instead of
//! one per file: CI's build time). Each file is a module; run one with
//! `cargo test --test suite <file>::`.

// The shared helpers below are test code, as the files are.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "access.rs"]
mod access;
#[path = "aliases.rs"]
mod aliases;
#[cfg(feature = "zarr")]
#[path = "chunked.rs"]
mod chunked;
#[path = "common/mod.rs"]
mod common;
#[path = "crash.rs"]
mod crash;
#[path = "features.rs"]
mod features;
#[path = "fits.rs"]
mod fits;
#[path = "lazy.rs"]
mod lazy;
#[path = "legacy.rs"]
mod legacy;
#[path = "open.rs"]
mod open;
#[path = "proptest_roundtrip.rs"]
mod proptest_roundtrip;
#[path = "robust.rs"]
mod robust;
#[path = "update.rs"]
mod update;
#[path = "write.rs"]
mod write;
