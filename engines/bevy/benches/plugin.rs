//! The plugin's per-frame CPU work at crowd scale, on one core: 1,000,
//! 10,000 and 35,000 walkers drawn (The Matrix Awakens city sample drew
//! 35,000 pedestrians), each with the built-in character's 21 joints.
//!
//! A world of `dense` tiles (the shipped patch, baked skeletal with the
//! built-in character) repeated over a grid, every cell shown, in a Bevy
//! app with the ECS, transforms, cameras and visibility (frustum culling
//! against one camera) but no renderer.
//! Measured per frame, the clock stepping by 1/60 s:
//! - `frame/direct/N`: a whole `App::update` with the plugin's default
//!   joint writes (sampling, joint world transforms written to
//!   `GlobalTransform`s, visibility, Bevy's transform propagation and
//!   visibility systems);
//! - `frame/hierarchy/N`: the same with joint entities in Bevy's hierarchy
//!   (local `Transform`s written, Bevy propagates);
//! - `poses/N`: the sampling and joint composition alone (no ECS): what the
//!   goal of 10,000 walkers within 4 ms measures.
//!
//! Before the timings it prints, per size, the cells, walkers drawn, joint
//! entities and the bytes per walker drawn (the plugin's buffers and the
//! loaded tiles; see docs/bevy.md for the ECS's own share).
//!
//! On one core: `taskset -c 0 cargo bench -p crowdpatch-bevy --bench plugin`
//! (Bevy's task pools keep their threads, all on that core).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bevy::camera::RenderTarget;
use bevy::prelude::*;
use criterion::{Criterion, criterion_group, criterion_main};
use crowdpatch::animation::Skeletal;
use crowdpatch::character::builtin;
use crowdpatch::{BakeOptions, Silent, bake_with, load_patch};
use crowdpatch_bevy::{CellPoses, CrowdClock, CrowdFocus, CrowdPatchPlugin, CrowdStats, JointWrites, TileJoints};
use crowdpatch_gltf::{GlbOptions, write_glb};
use crowdpatch_runtime::{Cell, Placement, StreamOptions, Tile, TileEntry, World, WorldFile};

const SIZES: [usize; 3] = [1_000, 10_000, 35_000];
const DT: f64 = 1.0 / 60.0;

/// Bakes `dense` into `dir/tiles/dense.glb` and returns the tile.
fn bake_dense(dir: &Path) -> Tile {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let patch = load_patch(&repo.join("patches/dense.patch.json")).unwrap();
    let options = BakeOptions { skeletal: Some(Arc::new(Skeletal::new(builtin::character()).unwrap())) };
    let bake = bake_with(&patch, &options, &mut Silent).unwrap();
    let glb = write_glb(&bake.baked(), None, &GlbOptions::default()).unwrap();
    std::fs::create_dir_all(dir.join("tiles")).unwrap();
    std::fs::write(dir.join("tiles/dense.glb"), &glb).unwrap();
    Tile::from_glb(&glb).unwrap()
}

/// A world of `cells` copies of the tile on a square grid; its path.
fn grid_world(dir: &Path, tile: &Tile, cells: usize) -> (std::path::PathBuf, usize) {
    let side = (cells as f64).sqrt().ceil() as usize;
    let mut world = World::new(side, side, tile.size(), tile.period());
    for k in 0..cells {
        world.set(k % side, k / side, Some(Cell { tile: 0, rotation: (k % 4) as u8 }));
    }
    let file =
        WorldFile::from_world(&world, vec![TileEntry { name: "dense".into(), glb: "tiles/dense.glb".into() }], None);
    let path = dir.join(format!("world-{cells}.json"));
    std::fs::write(&path, serde_json::to_string(&file).unwrap()).unwrap();
    (path, side)
}

fn app(world: &Path, cells: usize, side: usize, size: f64, mode: JointWrites) -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        bevy::asset::AssetPlugin::default(),
        bevy::transform::TransformPlugin,
        bevy::mesh::MeshPlugin,
        bevy::camera::CameraPlugin,
    ))
    .init_asset::<StandardMaterial>()
    .add_plugins(CrowdPatchPlugin {
        stream: StreamOptions { radius: 2.0 * side as f64 * size, memory_budget: 1 << 34, ..StreamOptions::default() },
        joints: mode,
        scenery: false,
        ..CrowdPatchPlugin::new(world)
    })
    .insert_resource(CrowdClock { time: 2.0, paused: true, ..CrowdClock::default() });
    let centre = side as f32 * size as f32 / 2.0;
    // The camera sees the whole grid (culling tests every walker).
    app.world_mut().spawn((
        Camera3d::default(),
        CrowdFocus,
        RenderTarget::None { size: UVec2::new(1920, 1080) },
        Transform::from_xyz(centre, 1.2 * centre + 20.0, 0.6 * centre)
            .looking_at(Vec3::new(centre, 0.0, -centre), Vec3::Y),
    ));
    let start = Instant::now();
    loop {
        app.update();
        let s = app.world().resource::<CrowdStats>();
        if s.tiles_pending == 0 && s.cells == cells {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(300), "{s:?}");
    }
    app.update();
    app
}

fn step(app: &mut App) {
    app.world_mut().resource_mut::<CrowdClock>().time += DT;
    app.update();
}

/// The sizes to run: all under `cargo bench`; under `cargo test` (a smoke
/// run of each benchmark once) the smallest only.
fn sizes() -> &'static [usize] {
    if std::env::args().any(|a| a == "--bench") { &SIZES } else { &SIZES[..1] }
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let tile = bake_dense(dir.path());
    // Walkers drawn per cell, averaged over a period.
    let mut poses = crowdpatch_runtime::Poses::new(tile.instance_count());
    let samples = 50;
    let per_cell = (0..samples)
        .map(|k| {
            tile.sample(k as f64 * tile.period() / samples as f64, &Placement::default(), poses.as_mut());
            poses.visible_count()
        })
        .sum::<usize>() as f64
        / samples as f64;
    println!("dense: {} instances, {per_cell:.1} drawn on average, {} joints", tile.instance_count(), 21);

    let mut group = c.benchmark_group("frame");
    group.sample_size(10).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    for &n in sizes() {
        let cells = (n as f64 / per_cell).round().max(1.0) as usize;
        let (world, side) = grid_world(dir.path(), &tile, cells);
        for mode in [JointWrites::Direct, JointWrites::Hierarchy] {
            let mut app = app(&world, cells, side, tile.size(), mode);
            step(&mut app);
            let s = app.world().resource::<CrowdStats>().clone();
            println!(
                "{n:>6} ({mode:?}): {} cells, {} walkers drawn of {}, {} joint entities, {} skinned vertices, {} walker draws, {:.0} bytes per walker drawn",
                s.cells,
                s.walkers_drawn,
                s.walkers,
                s.joints,
                s.skinned_vertices,
                s.walker_draws,
                s.bytes as f64 / s.walkers_drawn.max(1) as f64
            );
            let name = if mode == JointWrites::Direct { "direct" } else { "hierarchy" };
            group.bench_function(format!("{name}/{n}"), |b| b.iter(|| step(&mut app)));
        }
    }
    group.finish();

    // The pose work alone: one tile's joints sampled, every cell's roots
    // sampled and its joints composed.
    let mut group = c.benchmark_group("poses");
    group.sample_size(20).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    for &n in sizes() {
        let cells = (n as f64 / per_cell).round().max(1.0) as usize;
        let mut joints = TileJoints::new(&tile).unwrap();
        let mut cell_poses: Vec<CellPoses> = (0..cells)
            .map(|k| {
                let placement = Placement {
                    offset: [(k % 64) as f64 * tile.size(), (k / 64) as f64 * tile.size()],
                    rotation: (k % 4) as u8,
                };
                CellPoses::new(placement, tile.instance_count(), joints.joint_count())
            })
            .collect();
        let mut t = 2.0;
        group.bench_function(format!("{n}"), |b| {
            b.iter(|| {
                t += DT;
                joints.sample(t);
                for c in &mut cell_poses {
                    c.sample_roots(&tile, t);
                    c.compose_joints(&joints);
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
