//! Integration tests of this crate in one binary (one link of the whole stack instead of
//! one per file: CI's build time). Each file is a module; run one with
//! `cargo test --test suite <file>::`.

#[path = "asdf_files.rs"]
mod asdf_files;
#[path = "equivalence.rs"]
mod equivalence;
#[path = "json_schema_test_suite.rs"]
mod json_schema_test_suite;
