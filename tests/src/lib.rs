//! Workspace-level conformance suites over `../shared/conformance`; the suites are in
//! `tests/tests/`, the helpers they share in the `asdf-testdata` crate.

pub use asdf_testdata::{conformance, conformance_dir, conformance_or_skip, files_with_ext};

pub mod fuzz;
pub mod python;
mod servers;

pub use servers::{serve, serve_writable, stop};

/// A small deterministic generator (xorshift64*): the same draws on every run, for the suites'
/// random files, trees and regions.
#[derive(Debug, Clone)]
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number below `n` (which must not be 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}
