//! Joint maps (`--joint-map`, `--source-joint-map`): `{"format": 1,
//! "bones": {…}}` with VRM humanoid bone names, read, then applied to a
//! character as `--character FILE --joint-map MAP` applies it (the skinned
//! figure7 tile that `fuzz/seed.sh` puts among the character seeds; read
//! only when present).
#![no_main]
use crowdpatch::character::humanoid::JointMap;
use crowdpatch::character::import::{ImportOptions, import_bytes};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn character() -> Option<&'static [u8]> {
    static BYTES: OnceLock<Option<Vec<u8>>> = OnceLock::new();
    BYTES
        .get_or_init(|| {
            let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/character_gltf/0-figure7.glb");
            // The seed's first byte is the character target's mode.
            std::fs::read(p).ok().map(|b| b[1..].to_vec())
        })
        .as_deref()
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(map) = JointMap::from_json(text, "fuzz.json")
        && let Some(bytes) = character()
    {
        let options = ImportOptions { height: Some(1.75), joint_map: Some(map), motion_only: false };
        let _ = import_bytes(bytes, "figure7", "figure7.glb", &options);
    }
});
