//! Integration tests of this crate in one binary (one link of the whole stack instead of
//! one per file: CI's build time). Each file is a module; run one with
//! `cargo test --test suite <file>::`.

#[path = "f_misc.rs"]
mod f_misc;
#[path = "keywords.rs"]
mod keywords;
#[path = "reference.rs"]
mod reference;
#[path = "typed.rs"]
mod typed;
#[path = "typed_astro.rs"]
mod typed_astro;
#[path = "typed_values.rs"]
mod typed_values;
