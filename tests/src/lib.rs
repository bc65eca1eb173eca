//! Workspace-level conformance suites over `../shared/conformance`; the suites are in
//! `tests/tests/`, the helpers they share in the `asdf-testdata` crate.

pub use asdf_testdata::{conformance, conformance_dir, conformance_or_skip, files_with_ext};

pub mod fuzz;
pub mod python;
mod servers;

pub use servers::{serve, serve_writable, stop};
