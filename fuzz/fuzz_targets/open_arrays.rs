//! See `asdf_conformance::fuzz::open_arrays`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| asdf_conformance::fuzz::open_arrays(data));
