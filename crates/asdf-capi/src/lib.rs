//! The C API of asdf-rs: libasdf's public names, types and semantics (`include/asdf/*.h`)
//! over the asdf-rs engine, built as `libasdf_capi.so`/`.a` and installed as `libasdf` by
//! `cargo xtask capi PREFIX`. A C program written for libasdf compiles and links against it
//! unchanged (see `API.md` for what is provided, what is not yet, and where the semantics
//! differ).
//!
//! Every entry point catches panics (none crosses into C: the caller gets the function's
//! failure value and, where there is a file, an error on it), takes NULL and bad arguments
//! as errors, and returns memory only through objects the matching `asdf_*` function frees.
//! Handles are boxes owned by C; the library never frees what the caller owns.

mod core;
mod edit;
mod error;
mod extension;
mod file;
mod find;
mod ndarray;
mod open;
mod util;
mod value;
mod version;

pub use file::File;
pub use value::Value;
