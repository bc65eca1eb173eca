//! See `asdf_conformance::fuzz::regions`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| asdf_conformance::fuzz::regions(data));
