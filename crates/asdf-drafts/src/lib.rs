//! The drafts before ASDF 1.0.0 (the `#ASDF 0.1.0` files of 2014-2015, the ASDF 0.1.0 draft,
//! and FINF 0.1.0), beyond what reading the container needs (their block header layouts are
//! read by `asdf-layout`): the ASDF 0.1.0 draft's encoding chains ([`chain`]), a codec that
//! decodes encoded blocks, their trees mapped onto the 1.0.0 tags ([`legacy`]), and writing draft
//! files ([`write_file`]).

pub mod chain;
pub mod legacy;
mod write;

pub use chain::{Chain, ChainCodec, ChainError, Encoding};
pub use write::{LegacyBlock, write_file};
