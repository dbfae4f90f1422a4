//! Baked tiles (GLB, formats 1–3, plain or `EXT_meshopt_compression`) as
//! games load them with `crowdpatch-runtime`, then sampled once as a game
//! would (root poses and joint poses at a time).
#![no_main]
use crowdpatch_runtime::Tile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(tile) = Tile::from_glb(data) {
        common_play(&tile);
    }
});

fn common_play(tile: &Tile) {
    let _ = tile.memory_bytes();
    for i in 0..tile.instance_count().min(64) {
        let _ = tile.instance_pose(i, 1.25);
    }
    for a in 0..tile.agent_count().min(64) {
        let _ = tile.agent_position(a, 0.5);
    }
}
