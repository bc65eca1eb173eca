//! See `asdf_conformance::fuzz::frames`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| asdf_conformance::fuzz::frames(data));
