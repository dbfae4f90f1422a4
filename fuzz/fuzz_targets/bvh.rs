//! BVH motion files (`--animation-source FILE.bvh`): the hierarchy, the
//! channels and the frames.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = crowdpatch::character::bvh::parse(text, "fuzz.bvh");
});
