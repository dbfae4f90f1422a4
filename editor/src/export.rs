//! Exports of a bake: the GLB a game loads and the PNG preview of the bake
//! stages, the same files `crowdpatch bake -o … --preview …` writes.

use crowdpatch::bake::Bake;
use std::path::Path;

/// Writes the baked GLB of `bake` to `file`, atomically.
///
/// # Errors
/// Export errors (an impossible baked patch) and I/O errors, with the file named.
pub fn write_glb(bake: &Bake, file: &Path) -> anyhow::Result<()> {
    let glb = crowdpatch_gltf::write_glb(
        &bake.baked(),
        Some(&bake.metrics.to_json()),
        &crowdpatch_gltf::GlbOptions::default(),
    )?;
    crowdpatch::io::write_atomic(file, &glb).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))
}

/// Writes the PNG preview of `bake`'s stages to `file`, atomically.
///
/// # Errors
/// Drawing and I/O errors, with the file named.
pub fn write_png(bake: &Bake, file: &Path) -> anyhow::Result<()> {
    let png = crowdpatch_png::preview::render(bake)?;
    crowdpatch::io::write_atomic(file, &png).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))
}
