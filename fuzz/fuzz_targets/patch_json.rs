//! Patch documents (`*.patch.json`) as `crowdpatch bake` and `validate`
//! read them: the file read and parsed, pattern references resolved
//! (against copies of the shipped patterns), every problem listed, then
//! what a bake would refuse (limits). Never a panic, a hang or a blow-up.
#![no_main]
#[path = "common.rs"]
mod common;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = common::file("patches/fuzz.patch.json", data);
    if let Ok(patch) = crowdpatch::load_patch(&path) {
        let _ = crowdpatch::bake::refusals(&patch, &crowdpatch::BakeOptions::default(), "--frame-rate");
        let _ = crowdpatch::validate::self_tiling_note(&patch);
    }
});
