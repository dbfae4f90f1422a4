//! Shared by the plugin's tests: a small world composed and baked here (the
//! built-in character, plain or `--compress meshopt` tiles), and a Bevy app
//! that runs the plugin without a window.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bevy::prelude::*;
use crowdpatch::animation::Skeletal;
use crowdpatch::character::builtin;
use crowdpatch::compose::{compose, load_map};
use crowdpatch::{BakeOptions, Silent, bake_with};
use crowdpatch_bevy::{CrowdPatchPlugin, CrowdStats};
use crowdpatch_gltf::{Compression, GlbOptions, write_glb};
use crowdpatch_runtime::{TileEntry, WorldFile};

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Composes the map `grid` (`#` street, `-` lane, `p` park: the shipped
/// park with its obstacles; 16 m tiles, period 10 s,
/// the shipped pattern library) into `dir` as `crowdpatch compose
/// --animation skeletal` would (`--compress meshopt` with `compress`), and
/// returns the path of its `world.json`.
pub fn compose_world(dir: &Path, grid: &[&str], compress: bool) -> PathBuf {
    fs::create_dir_all(dir.join("tiles")).unwrap();
    let map = serde_json::json!({
        "format": 1, "name": "test", "size": 16.0, "period": 10.0, "seed": 7,
        "patterns": repo().join("patterns"),
        "kinds": {
            "street": { "density": 0.09 },
            "lane": { "density": 0.04 },
            "park": { "density": 0.04, "template": repo().join("patches/park.patch.json") }
        },
        "legend": { "#": "street", "-": "lane", "p": "park" },
        "grid": grid,
    });
    let map_path = dir.join("test.map.json");
    fs::write(&map_path, serde_json::to_string_pretty(&map).unwrap()).unwrap();
    let map = load_map(&map_path).unwrap();
    let composition = compose(&map);
    let options = BakeOptions { skeletal: Some(Arc::new(Skeletal::new(builtin::character()).unwrap())) };
    let compression = if compress { Compression::Meshopt } else { Compression::None };
    let glb_options = GlbOptions { compression, ..GlbOptions::default() };
    let mut entries = Vec::new();
    for t in &composition.tiles {
        let patch = t.document.resolve(None, dir).unwrap();
        let bake = bake_with(&patch, &options, &mut Silent).unwrap();
        let glb = write_glb(&bake.baked(), None, &glb_options).unwrap();
        let file = format!("tiles/{}.glb", t.key);
        fs::write(dir.join(&file), glb).unwrap();
        entries.push(TileEntry { name: t.key.clone(), glb: file });
    }
    let world = WorldFile::from_world(&composition.world, entries, None);
    let path = dir.join("world.json");
    fs::write(&path, serde_json::to_string_pretty(&world).unwrap()).unwrap();
    path
}

/// An app running `plugin` with Bevy's ECS, assets, transforms and
/// visibility but no renderer or window, and a focus entity at world point
/// `focus`.
pub fn ecs_app(plugin: CrowdPatchPlugin, focus: [f32; 2]) -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        bevy::asset::AssetPlugin::default(),
        bevy::transform::TransformPlugin,
        bevy::mesh::MeshPlugin,
        bevy::camera::visibility::VisibilityPlugin,
    ))
    .init_asset::<StandardMaterial>()
    .add_plugins(plugin);
    app.world_mut().spawn((crowdpatch_bevy::CrowdFocus, Transform::from_xyz(focus[0], 0.0, -focus[1])));
    app
}

/// Updates `app` until `done` holds of its stats (or `timeout` passes);
/// returns whether it held.
pub fn run_until(app: &mut App, timeout: Duration, done: impl Fn(&CrowdStats) -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < timeout {
        app.update();
        if done(app.world().resource::<CrowdStats>()) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    false
}
