//! Integration tests of this crate in one binary (one link of the whole stack instead of
//! one per file: CI's build time). Each file is a module; run one with
//! `cargo test --test suite <file>::`.

// The shared helpers below are test code, as the files are.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "duplicate_keys.rs"]
mod duplicate_keys;
#[path = "emitter_agreement.rs"]
mod emitter_agreement;
#[path = "libyaml_agreement.rs"]
mod libyaml_agreement;
#[path = "support/libyaml_events.rs"]
mod libyaml_events;
#[path = "round_trip_types.rs"]
mod round_trip_types;
#[path = "samples.rs"]
mod samples;
#[path = "scalars.rs"]
mod scalars;
#[path = "subset_and_limits.rs"]
mod subset_and_limits;
#[path = "yaml_test_suite.rs"]
mod yaml_test_suite;
