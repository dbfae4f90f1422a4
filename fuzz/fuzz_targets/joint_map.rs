//! Joint maps (`--joint-map`, `--source-joint-map`): `{"format": 1,
//! "bones": {…}}` with VRM humanoid bone names.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = crowdpatch::character::humanoid::JointMap::from_json(text, "fuzz.json");
});
