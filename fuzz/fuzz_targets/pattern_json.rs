//! Pattern documents (`*.pattern.json`) as the library and `validate` read
//! them.
#![no_main]
#[path = "common.rs"]
mod common;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = common::file("patterns/fuzz.pattern.json", data);
    let _ = crowdpatch::document::load_pattern(&path);
});
