//! The plugin in a Bevy app without a renderer: walkers stand where the
//! runtime puts them, both joint-writing paths give the same skeletons,
//! plain and compressed tiles play alike, the clock can be set, and bad
//! files are reported while the rest of the world plays.

mod common;

use std::time::Duration;

use bevy::camera::visibility::InheritedVisibility;
use bevy::mesh::skinning::SkinnedMesh;
use bevy::prelude::*;
use common::{compose_world, ecs_app, run_until};
use crowdpatch_bevy::{CrowdClock, CrowdPatchPlugin, CrowdStats, JointWrites, WalkerBody};
use crowdpatch_runtime::{Placement, Poses, Tile, WorldFile};

const GRID: [&str; 2] = ["#-", "##"];
const LOADED: Duration = Duration::from_secs(60);

/// Every drawn walker's joint world positions, sorted (a multiset that does
/// not depend on entity order).
fn joint_positions(app: &mut App) -> Vec<[f32; 3]> {
    let world = app.world_mut();
    let mut meshes = world.query::<(&SkinnedMesh, &InheritedVisibility)>();
    let mut seen = std::collections::HashSet::new();
    let mut joints = Vec::new();
    for (skin, visible) in meshes.iter(world) {
        if !visible.get() || !seen.insert(skin.joints[0]) {
            continue;
        }
        for &j in &skin.joints {
            joints.push(world.get::<GlobalTransform>(j).unwrap().translation().to_array());
        }
    }
    joints.sort_by(|a, b| a.partial_cmp(b).unwrap());
    joints
}

fn paused_at(t: f64) -> CrowdClock {
    CrowdClock { time: t, paused: true, ..CrowdClock::default() }
}

fn loaded(app: &mut App, cells: usize) {
    assert!(
        run_until(app, LOADED, |s| s.cells == cells && s.tiles_pending == 0),
        "{:?}",
        app.world().resource::<CrowdStats>()
    );
    // One more frame poses what was spawned by the last update.
    app.update();
}

#[test]
fn walkers_stand_where_the_runtime_puts_them_and_follow_the_clock() {
    let dir = tempfile::tempdir().unwrap();
    let world_path = compose_world(dir.path(), &GRID, false);
    let mut app = ecs_app(CrowdPatchPlugin::new(&world_path), [16.0, 16.0]);
    app.insert_resource(paused_at(3.3));
    loaded(&mut app, 4);
    // The runtime's own reading of the same files.
    let file = WorldFile::load(&world_path).unwrap();
    let tiles = file.load_tiles(dir.path()).unwrap();
    for t in [3.3, 7.95, 123.4] {
        app.world_mut().resource_mut::<CrowdClock>().time = t;
        app.update();
        let mut expected = Vec::new();
        for ([i, j], cell) in file.world().cells() {
            let tile: &Tile = &tiles[cell.tile];
            let placement = Placement { offset: [i as f64 * file.size, j as f64 * file.size], rotation: cell.rotation };
            let mut poses = Poses::new(tile.instance_count());
            tile.sample(t, &placement, poses.as_mut());
            for k in 0..poses.len() {
                if poses.visible[k] {
                    expected.push([poses.x[k], poses.y[k]]);
                }
            }
        }
        let world = app.world_mut();
        let mut bodies = world.query::<(&WalkerBody, &SkinnedMesh, &GlobalTransform, &Visibility)>();
        let mut seen = std::collections::HashSet::new();
        let mut drawn: Vec<[f32; 2]> = Vec::new();
        for (_, skin, g, v) in bodies.iter(world) {
            if *v == Visibility::Visible && seen.insert(skin.joints[0]) {
                drawn.push([g.translation().x, -g.translation().z]);
            }
        }
        assert_eq!(drawn.len(), expected.len(), "t = {t}");
        assert_eq!(app.world().resource::<CrowdStats>().walkers_drawn, expected.len());
        for e in &expected {
            let near = drawn.iter().map(|d| (d[0] - e[0]).hypot(d[1] - e[1])).fold(f32::INFINITY, f32::min);
            assert!(near < 1e-4, "t = {t}: no walker drawn at {e:?} (nearest {near} m)");
        }
    }
    // Unpaused at double speed, the clock runs twice as fast as the app's.
    {
        let mut clock = app.world_mut().resource_mut::<CrowdClock>();
        clock.paused = false;
        clock.speed = 2.0;
    }
    // Bevy measures a frame from the instant its previous update began:
    // the wall time is taken from before an update that primes it, so it
    // bounds the frame however long the work between updates takes.
    let start = std::time::Instant::now();
    app.update();
    let before = app.world().resource::<CrowdClock>().time;
    std::thread::sleep(Duration::from_millis(50));
    app.update();
    let (elapsed, advanced) = (start.elapsed().as_secs_f64(), app.world().resource::<CrowdClock>().time - before);
    assert!(advanced > 0.0 && advanced <= 2.0 * elapsed + 1e-3, "advanced {advanced} s in {elapsed} s");
}

#[test]
fn direct_writes_pose_the_joints_as_bevys_hierarchy_does() {
    let dir = tempfile::tempdir().unwrap();
    let world_path = compose_world(dir.path(), &GRID, false);
    let mut positions = Vec::new();
    for mode in [JointWrites::Direct, JointWrites::Hierarchy] {
        let mut app = ecs_app(CrowdPatchPlugin { joints: mode, ..CrowdPatchPlugin::new(&world_path) }, [16.0, 16.0]);
        app.insert_resource(paused_at(4.7));
        loaded(&mut app, 4);
        app.update();
        positions.push(joint_positions(&mut app));
    }
    let (direct, hierarchy) = (&positions[0], &positions[1]);
    assert!(direct.len() > 21 * 10, "{} joints drawn", direct.len());
    assert_eq!(direct.len(), hierarchy.len());
    let worst = direct
        .iter()
        .zip(hierarchy)
        .map(|(a, b)| (0..3).map(|k| (a[k] - b[k]).abs()).fold(0.0, f32::max))
        .fold(0.0, f32::max);
    assert!(worst < 1e-4, "joint positions differ by up to {worst} m");
    // Feet on the ground: the lowest joint of the crowd is within a few
    // centimetres of y = 0, none far below it.
    let lowest = direct.iter().map(|p| p[1]).fold(f32::INFINITY, f32::min);
    assert!((-0.02..0.12).contains(&lowest), "lowest joint at {lowest} m");
}

#[test]
fn plain_and_compressed_tiles_play_alike() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut positions = Vec::new();
    for (dir, compress) in [(&a, false), (&b, true)] {
        let world_path = compose_world(dir.path(), &GRID, compress);
        let mut app = ecs_app(CrowdPatchPlugin::new(&world_path), [16.0, 16.0]);
        app.insert_resource(paused_at(2.25));
        loaded(&mut app, 4);
        positions.push(joint_positions(&mut app));
    }
    assert_eq!(positions[0].len(), positions[1].len());
    let worst = positions[0]
        .iter()
        .zip(&positions[1])
        .map(|(p, q)| (0..3).map(|k| (p[k] - q[k]).abs()).fold(0.0, f32::max))
        .fold(0.0, f32::max);
    assert!(worst < 0.005, "compressed joints differ by up to {worst} m");
}

#[test]
fn bad_files_are_reported_and_the_rest_of_the_world_plays() {
    // No world file: one message, nothing shown, no panic.
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nowhere/world.json");
    let mut app = ecs_app(CrowdPatchPlugin::new(&missing), [8.0, 8.0]);
    assert!(run_until(&mut app, LOADED, |s| s.world_error.is_some()));
    let message = app.world().resource::<CrowdStats>().world_error.clone().unwrap();
    assert!(message.contains("nowhere/world.json"), "{message}");
    for _ in 0..5 {
        app.update();
    }
    assert_eq!(app.world().resource::<CrowdStats>().walkers, 0);
    // A world file that is not one.
    let garbage = dir.path().join("garbage.json");
    std::fs::write(&garbage, b"{\"format\": 1, \"size\": ").unwrap();
    let mut app = ecs_app(CrowdPatchPlugin::new(&garbage), [8.0, 8.0]);
    assert!(run_until(&mut app, LOADED, |s| s.world_error.is_some()));

    // One tile truncated, another replaced by a foreign file: their cells
    // stay empty, the others play.
    let world_path = compose_world(dir.path(), &GRID, true);
    let file = WorldFile::load(&world_path).unwrap();
    // With two tiles or more, the first is truncated; with three or more,
    // the second is replaced too. At least one stays good.
    assert!(file.tiles.len() >= 2, "{} tiles", file.tiles.len());
    let broken = if file.tiles.len() >= 3 { 2 } else { 1 };
    let truncated = dir.path().join(&file.tiles[0].glb);
    let bytes = std::fs::read(&truncated).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 3]).unwrap();
    if broken == 2 {
        std::fs::write(dir.path().join(&file.tiles[1].glb), b"\x89PNG\r\n\x1a\n not a tile").unwrap();
    }
    let cells_of = |k: usize| file.world().cells().filter(|(_, c)| c.tile == k).count();
    let good_cells = 4 - (0..broken).map(cells_of).sum::<usize>();
    let mut app = ecs_app(CrowdPatchPlugin::new(&world_path), [16.0, 16.0]);
    assert!(
        run_until(&mut app, LOADED, |s| s.tiles_failed == broken && s.tiles_pending == 0 && s.cells == good_cells),
        "{:?}",
        app.world().resource::<CrowdStats>()
    );
    app.update();
    let stats = app.world().resource::<CrowdStats>().clone();
    assert!(stats.walkers > 0 && stats.walkers_drawn > 0, "{stats:?}");
    assert!(stats.world_error.is_none());
}
