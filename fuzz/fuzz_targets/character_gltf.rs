//! Characters and animation sources in glTF (`.glb`, or `.gltf` JSON with
//! its buffers as data URIs) as `--character` and `--animation-source` read
//! them: the scene, the skin, the humanoid mapping, the clips. The first
//! byte chooses a character (a skin needed) or an animation source
//! (motion only), and a height to scale to or none.
#![no_main]
use crowdpatch::character::import::{ImportOptions, import_bytes};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, bytes)) = data.split_first() else { return };
    let options = ImportOptions {
        height: (mode & 1 == 1).then_some(1.75),
        joint_map: None,
        motion_only: mode & 2 == 2,
    };
    let _ = import_bytes(bytes, "fuzz", "fuzz.glb", &options);
});
