//! See `asdf_conformance::fuzz::chunked`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| asdf_conformance::fuzz::chunked(data));
