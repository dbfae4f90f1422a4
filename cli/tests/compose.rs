//! `crowdpatch compose` end to end: the shipped 10×10 town map is composed
//! by the real binary into a fresh directory, read back with the runtime, and
//! must pass the compatibility check with no seam collision and no seam
//! jump; a deliberately wrong neighbour is reported with its coordinates; the
//! content-hash cache re-bakes nothing the second time; a Wang set fills a
//! larger world seamlessly.

use crowdpatch_runtime::{
    Cell, DirectorySource, Poses, SeamProblem, Side, StreamEvent, StreamOptions, Streamer, Tile, WangSet, WorldFile,
    seam_metrics,
};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn root() -> PathBuf {
    // The repository root: cli/ is one level down.
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn compose(dir: &Path, extra: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_crowdpatch"))
        .arg("compose")
        .arg(root().join("maps/town.map.json"))
        .arg("-o")
        .arg(dir)
        .args(extra)
        .output()
        .unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn load(dir: &Path) -> (WorldFile, Vec<Tile>) {
    let file = WorldFile::load(dir.join("world.json")).unwrap();
    let tiles = file.load_tiles(dir).unwrap();
    (file, tiles)
}

#[test]
fn the_town_composes_seamlessly() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, stderr) = compose(tmp.path(), &[]);
    assert_eq!(code, 0, "{stderr}");
    let (file, tiles) = load(tmp.path());
    let world = file.world();
    assert_eq!((world.columns(), world.rows()), (10, 10));
    // The map has 10 empty cells ('.').
    assert_eq!(world.cells().count(), 90);
    assert!(tiles.len() < 90, "{} tiles: cells share tiles", tiles.len());
    let extras: Vec<_> = tiles.iter().map(Tile::extras).collect();
    let mismatches = world.check(&extras);
    assert!(mismatches.is_empty(), "{mismatches:#?}");

    let refs: Vec<&Tile> = tiles.iter().collect();
    let seams = seam_metrics(&world, &refs);
    let two_r = 2.0 * tiles[0].agent_radius();
    // Every shared edge between walkable cells has a pattern, and every
    // boundary point of it a crossing pedestrian.
    assert!(seams.edges >= 140, "{}", seams.edges);
    assert!(seams.crossings.len() > 10 * seams.edges / 4);
    assert_eq!(seams.unmatched, 0);
    assert!(seams.max_position_error < 1e-3, "seam jump: {} m", seams.max_position_error);
    assert!(seams.max_time_error < 1e-6, "{}", seams.max_time_error);
    assert!(seams.max_velocity_jump < 1e-2, "velocity jump: {} m/s", seams.max_velocity_jump);
    assert!(seams.collisions.is_empty(), "{:#?}", seams.collisions);
    assert!(seams.min_clearance.unwrap() >= two_r - 1e-3, "{:?}", seams.min_clearance);
    // Walking groups (the library's `pairs` pattern) cross seams together:
    // the pair leaving a tile enters its neighbour as one pair and leaves
    // it as one.
    assert!(seams.group_crossings >= 10, "{} groups crossing", seams.group_crossings);
    assert_eq!(seams.groups_parted, 0);
    println!(
        "town: {} tiles, {} edges, {} crossings, max position error {:.2e} m, max velocity jump {:.2e} m/s, min clearance {:.3} m, {} walking groups crossing, {} parted",
        tiles.len(),
        seams.edges,
        seams.crossings.len(),
        seams.max_position_error,
        seams.max_velocity_jump,
        seams.min_clearance.unwrap(),
        seams.group_crossings,
        seams.groups_parted
    );

    // A deliberately wrong neighbour: cell (4, 3) (a street crossing) turned a
    // quarter turn. Its sides no longer mirror its neighbours'.
    let mut wrong = world.clone();
    let cell = wrong.get(4, 3).unwrap();
    wrong.set(4, 3, Some(Cell { tile: cell.tile, rotation: (cell.rotation + 1) % 4 }));
    let mismatches = wrong.check(&extras);
    assert!(!mismatches.is_empty());
    for m in &mismatches {
        let here = m.cell == [4, 3];
        let neighbour = m.neighbour == Some([4, 3]);
        assert!(here || neighbour, "{m}");
    }
    // Reported on all four sides, from both cells of each edge.
    for side in Side::ALL {
        assert!(mismatches.iter().any(|m| m.cell == [4, 3] && m.side == Some(side)), "{side}: {mismatches:#?}");
    }
    let text = mismatches[0].to_string();
    assert!(text.contains("(4, 3)"), "{text}");
    println!("wrong neighbour: {} mismatches, e.g. {text}", mismatches.len());

    // A tile with another neighbour's content: swap in a tile that differs.
    let mut swapped = world.clone();
    let other = (0..tiles.len()).find(|&t| t != cell.tile).unwrap();
    swapped.set(4, 3, Some(Cell { tile: other, rotation: 0 }));
    assert!(swapped.check(&extras).iter().any(|m| m.cell == [4, 3] || m.neighbour == Some([4, 3])));
    // Emptying a cell opens its neighbours' sides.
    let mut holed = world.clone();
    holed.set(4, 3, None);
    let open = holed.check(&extras);
    assert!(open.iter().all(|m| matches!(m.problem, SeamProblem::OpenSide { .. }) && m.neighbour == Some([4, 3])));
    assert_eq!(open.len(), 4);

    // The second run bakes nothing: every tile comes from the cache.
    let before = std::fs::read(tmp.path().join("world.json")).unwrap();
    let (code, stderr) = compose(tmp.path(), &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains(&format!("(0 baked, {} cached)", tiles.len())), "{stderr}");
    assert_eq!(std::fs::read(tmp.path().join("world.json")).unwrap(), before, "deterministic");
}

#[test]
fn a_wang_set_fills_any_world() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, stderr) = compose(tmp.path(), &["--wang", "2"]);
    assert_eq!(code, 0, "{stderr}");
    let (file, tiles) = load(tmp.path());
    let wang = file.wang.clone().unwrap();
    assert_eq!(wang.k, 2);
    assert_eq!(wang.tiles.len(), 16);
    let set = WangSet::from_file(&wang);
    assert!(set.missing().is_empty());
    // The file's grid is the fill of its seed.
    assert_eq!(set.fill(wang.seed, [0, 0], 10, 10, file.size, file.period), file.world());
    // A 16×12 window of the unbounded world of another seed, far from the
    // origin: seamless inside, open only at its border.
    let world = set.fill(99, [-1000, 5000], 16, 12, file.size, file.period);
    let extras: Vec<_> = tiles.iter().map(Tile::extras).collect();
    let mismatches = world.check(&extras);
    assert!(mismatches.iter().all(|m| m.neighbour.is_none()), "{mismatches:#?}");
    let refs: Vec<&Tile> = tiles.iter().collect();
    let seams = seam_metrics(&world, &refs);
    assert_eq!(seams.edges, 15 * 12 + 16 * 11);
    assert_eq!(seams.unmatched, 0);
    assert!(seams.collisions.is_empty(), "{:#?}", seams.collisions);
    assert!(seams.max_position_error < 1e-3 && seams.max_velocity_jump < 1e-2);
    // Aperiodic: no two rows of the window are the same.
    let rows: Vec<Vec<Option<Cell>>> = (0..12).map(|j| (0..16).map(|i| world.get(i, j)).collect()).collect();
    for a in 0..12 {
        for b in a + 1..12 {
            assert_ne!(rows[a], rows[b]);
        }
    }
}

#[test]
fn bad_maps_name_the_field() {
    let tmp = tempfile::tempdir().unwrap();
    let map = tmp.path().join("bad.map.json");
    std::fs::write(
        &map,
        format!(
            r###"{{"format": 1, "size": 16.0, "period": 10.0, "patterns": {:?},
               "kinds": {{"street": {{"density": -2}}}}, "legend": {{"#": "street", "x": "mall"}},
               "grid": ["##", "#"]}}"###,
            root().join("patterns").display().to_string()
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_crowdpatch"))
        .args(["compose", map.to_str().unwrap(), "-o"])
        .arg(tmp.path().join("out"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    for needle in ["kinds.street.density", "legend.x", "grid[1]"] {
        assert!(stderr.contains(needle), "{needle}: {stderr}");
    }
    assert!(!tmp.path().join("out").exists(), "bad input writes nothing");
}

#[test]
fn the_town_streams_from_its_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, stderr) = compose(tmp.path(), &["--quiet"]);
    assert_eq!(code, 0, "{stderr}");
    let file = WorldFile::load(tmp.path().join("world.json")).unwrap();
    let world = file.world();
    let l = file.size;
    let options = StreamOptions { radius: 30.0, hysteresis: 0.0, memory_budget: usize::MAX, workers: 2 };
    let mut s = Streamer::new(world.clone(), DirectorySource::for_world(tmp.path(), &file), options);
    let mut poses = Poses::default();
    for (k, focus) in [[10.0, 10.0], [80.0, 80.0], [150.0, 40.0]].into_iter().enumerate() {
        let events = s.update_blocking(focus, Duration::from_secs(30));
        assert!(!events.iter().any(|e| matches!(e, StreamEvent::LoadFailed { .. })), "{events:?}");
        // Exactly the non-empty cells within the radius are shown.
        let mut expected = Vec::new();
        for ([i, j], _) in world.cells() {
            let dx = (i as f64 * l - focus[0]).max(focus[0] - (i + 1) as f64 * l).max(0.0);
            let dy = (j as f64 * l - focus[1]).max(focus[1] - (j + 1) as f64 * l).max(0.0);
            if dx.hypot(dy) <= 30.0 {
                expected.push([i as i64, j as i64]);
            }
        }
        expected.sort();
        let mut shown: Vec<[i64; 2]> = s.shown_cells().map(|(c, _)| c).collect();
        shown.sort();
        assert_eq!(shown, expected, "focus {focus:?}");
        // Every shown agent is inside its cell (up to the f32 rounding of
        // world positions) and poses are finite.
        let cells = s.sample(3.7 + k as f64, &mut poses);
        assert!(poses.visible_count() > 0);
        for ([i, j], range) in cells {
            for a in range {
                let (x, y) = (f64::from(poses.x[a]), f64::from(poses.y[a]));
                assert!(x >= i as f64 * l - 1e-3 && x <= (i + 1) as f64 * l + 1e-3, "({i}, {j}): x = {x}");
                assert!(y >= j as f64 * l - 1e-3 && y <= (j + 1) as f64 * l + 1e-3, "({i}, {j}): y = {y}");
                assert!(poses.heading[a].is_finite() && (0.0..1.0).contains(&poses.phase[a]));
            }
        }
    }
}

/// Every file of a composed directory but hidden ones (temporary files a
/// killed process leaves), by path relative to `dir`, with its bytes.
fn files(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.file_name().unwrap().to_string_lossy().starts_with('.') {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// The plan's rows: (job hash, tile key, shard).
fn plan(extra: &[&str]) -> Vec<(String, String, String)> {
    let out = Command::new(env!("CARGO_BIN_EXE_crowdpatch"))
        .arg("compose")
        .arg(root().join("maps/town.map.json"))
        .arg("--plan")
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0].to_owned(), f[1].to_owned(), f[2].to_owned())
        })
        .collect()
}

#[test]
fn shards_in_any_order_then_a_gather_give_the_bytes_of_one_run() {
    let one = tempfile::tempdir().unwrap();
    let (code, stderr) = compose(one.path(), &["--quiet"]);
    assert_eq!(code, 0, "{stderr}");
    let expected = files(one.path());

    // The plan: every distinct tile once, each in one shard of three.
    let rows = plan(&["--shards", "3"]);
    let tiles: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.1.as_str()).collect();
    assert_eq!(tiles.len(), rows.len());
    assert_eq!(expected.keys().filter(|p| p.extension().is_some_and(|e| e == "glb")).count(), rows.len());
    for (job, tile, shard) in &rows {
        assert!(expected.contains_key(&PathBuf::from(format!("tiles/{tile}.glb"))), "{tile}");
        assert_eq!(job.len(), 16);
        assert!(["1/3", "2/3", "3/3"].contains(&shard.as_str()), "{shard}");
    }

    let sharded = tempfile::tempdir().unwrap();
    // Shard 3, then 1 (from a Kubernetes index), 3 again, then 2 (from a
    // Slurm array numbered from 1).
    assert_eq!(compose(sharded.path(), &["--shard", "3/3", "-q"]).0, 0);
    let k8s = Command::new(env!("CARGO_BIN_EXE_crowdpatch"))
        .arg("compose")
        .arg(root().join("maps/town.map.json"))
        .arg("-o")
        .arg(sharded.path())
        .args(["--shard-from", "k8s", "--shards", "3", "-q"])
        .env("JOB_COMPLETION_INDEX", "0")
        .status()
        .unwrap();
    assert!(k8s.success());
    assert_eq!(compose(sharded.path(), &["--shard", "3/3", "-q"]).0, 0);
    // Before the last shard: the gather names its tiles and writes nothing.
    let (code, stderr) = compose(sharded.path(), &["--gather", "--shards", "3"]);
    assert_eq!(code, 2, "{stderr}");
    let missing: Vec<_> = rows.iter().filter(|r| r.2 == "2/3").collect();
    for (job, tile, _) in &missing {
        assert!(stderr.contains(&format!("tile {tile}")) && stderr.contains(job.as_str()), "{stderr}");
    }
    assert_eq!(stderr.contains("shard 2/3 should have made it"), !missing.is_empty(), "{stderr}");
    assert!(!sharded.path().join("world.json").exists());
    let slurm = Command::new(env!("CARGO_BIN_EXE_crowdpatch"))
        .arg("compose")
        .arg(root().join("maps/town.map.json"))
        .arg("-o")
        .arg(sharded.path())
        .args(["--shard-from", "slurm", "-q"])
        .env("SLURM_ARRAY_TASK_ID", "2")
        .env("SLURM_ARRAY_TASK_MIN", "1")
        .env("SLURM_ARRAY_TASK_COUNT", "3")
        .status()
        .unwrap();
    assert!(slurm.success());
    let (code, stderr) = compose(sharded.path(), &["--gather", "-q"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(files(sharded.path()), expected, "sharded and gathered against one run");

    // A corrupt tile: the gather names it and its shard; that shard run
    // again bakes it again; the gather then gives the same bytes.
    let (_, tile, shard) = &rows[0];
    let glb = sharded.path().join(format!("tiles/{tile}.glb"));
    let bytes = std::fs::read(&glb).unwrap();
    std::fs::write(&glb, &bytes[..bytes.len() / 2]).unwrap();
    std::fs::remove_file(sharded.path().join("world.json")).unwrap();
    let (code, stderr) = compose(sharded.path(), &["--gather", "--shards", "3"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains(&format!("{tile}.glb")) && stderr.contains(&format!("shard {shard} should")), "{stderr}");
    assert_eq!(compose(sharded.path(), &["--shard", shard, "-q"]).0, 0);
    assert_eq!(compose(sharded.path(), &["--gather", "-q"]).0, 0);
    assert_eq!(files(sharded.path()), expected);
}

#[test]
fn a_killed_shard_run_again_finishes_its_jobs() {
    let one = tempfile::tempdir().unwrap();
    assert_eq!(compose(one.path(), &["--quiet"]).0, 0);
    let expected = files(one.path());
    let rows = plan(&["--shards", "2"]);
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(compose(dir.path(), &["--shard", "2/2", "-q"]).0, 0);
    // Shard 1 killed (SIGKILL: no clean-up) while its writes are slowed.
    let mut child = Command::new(env!("CARGO_BIN_EXE_crowdpatch"))
        .arg("compose")
        .arg(root().join("maps/town.map.json"))
        .arg("-o")
        .arg(dir.path())
        .args(["--shard", "1/2", "-q", "-j", "1"])
        .env("CROWDPATCH_WRITE_DELAY_MS", "400")
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    child.kill().unwrap();
    child.wait().unwrap();
    let (code, stderr) = compose(dir.path(), &["--gather", "--shards", "2"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("shard 1/2 should have made it"), "{stderr}");
    assert!(!stderr.contains("shard 2/2 should"), "{stderr}");
    assert!(rows.iter().any(|r| r.2 == "1/2"));
    assert_eq!(compose(dir.path(), &["--shard", "1/2", "-q"]).0, 0);
    let (code, stderr) = compose(dir.path(), &["--gather", "-q"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(files(dir.path()), expected);
}
