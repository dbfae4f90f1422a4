//! Baked tiles, structure-aware: the input is a JSON chunk and a binary
//! chunk (`u32` little-endian length of the JSON, the JSON, then the binary
//! rest), wrapped into a well-formed GLB container (header, chunk lengths,
//! padding) so that mutations reach the glTF JSON, the accessors and the
//! meshopt decoder instead of stopping at the container. Seeds: real tiles
//! split by `fuzz/seed.sh`.
#![no_main]
use crowdpatch_runtime::Tile;
use libfuzzer_sys::fuzz_target;

fn glb(json: &[u8], bin: &[u8]) -> Vec<u8> {
    let pad = |n: usize| (4 - n % 4) % 4;
    let (jl, bl) = (json.len() + pad(json.len()), bin.len() + pad(bin.len()));
    let total = 12 + 8 + jl + if bin.is_empty() { 0 } else { 8 + bl };
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(jl as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(json);
    out.extend(std::iter::repeat_n(b' ', pad(json.len())));
    if !bin.is_empty() {
        out.extend_from_slice(&(bl as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(bin);
        out.extend(std::iter::repeat_n(0u8, pad(bin.len())));
    }
    out
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let n = (u32::from_le_bytes([data[0], data[1], data[2], data[3]]) as usize).min(data.len() - 4);
    let (json, bin) = data[4..].split_at(n);
    if let Ok(tile) = Tile::from_glb(&glb(json, bin)) {
        for i in 0..tile.instance_count().min(64) {
            let _ = tile.instance_pose(i, 1.25);
        }
    }
});
