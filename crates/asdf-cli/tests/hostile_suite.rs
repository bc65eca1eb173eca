//! Integration tests of this crate in one binary (one link of the whole stack instead of
//! one per file: CI's build time). Each file is a module; run one with
//! `cargo test --test hostile_suite <file>::`.

// The shared helpers below are test code, as the files are.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "hostile.rs"]
mod hostile;
#[path = "hostile_new.rs"]
mod hostile_new;
#[path = "support/mod.rs"]
mod support;
