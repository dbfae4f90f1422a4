//! Runtime benchmarks (criterion): agent samples per second per core for a
//! world of a million agents, tile load time, bytes per agent; joint samples
//! per second per core for skeletal tiles (`joints`: the shipped `dense`
//! patch baked with the built-in character, default and `--compress
//! meshopt` output loaded back; throughput in joint transforms, i.e.
//! instances × joints per call) and memory per walker in playback form.
//!
//! The tiles are real bakes: the Wang set (K = 2) of the shipped town map,
//! composed and baked in-process, written as GLB and loaded back by the
//! runtime. The world fills a square of cells from the set until it holds at
//! least a million agent instances.
//!
//! Run: `cargo bench --bench runtime`. Everything runs on one thread: the
//! figures are per core.

use std::hint::black_box;
use std::path::Path;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use crowdpatch::compose::{compose_wang, load_map};
use crowdpatch_gltf::{GlbOptions, write_glb};
use crowdpatch_runtime::{CrowdSampler, JointSampler, PlacedTile, Poses, Tile, TileCursor, WangSet};

/// The 16 Wang tiles of the town map, as GLB bytes.
fn wang_glbs() -> Vec<Vec<u8>> {
    let map = load_map(&Path::new(env!("CARGO_MANIFEST_DIR")).join("maps/town.map.json")).expect("shipped map");
    let composition = compose_wang(&map, 2);
    composition
        .tiles
        .iter()
        .map(|t| {
            let patch = t.document.resolve(None, Path::new(".")).expect("valid tile");
            let bake = crowdpatch::bake(&patch, &mut crowdpatch::Silent).expect("bake");
            write_glb(&bake.baked(), Some(&bake.metrics.to_json()), &GlbOptions::default()).expect("glb")
        })
        .collect()
}

struct Setup {
    glbs: Vec<Vec<u8>>,
    tiles: Vec<Tile>,
    /// (tile, placement) of every cell of the million-agent world.
    cells: Vec<(usize, crowdpatch_runtime::Placement)>,
    agents: usize,
}

fn setup() -> Setup {
    let glbs = wang_glbs();
    let tiles: Vec<Tile> = glbs.iter().map(|g| Tile::from_glb(g).expect("load")).collect();
    let mut set = WangSet::new(2);
    // The composition lists combinations in [n, e, s, w] order.
    let mut k = 0;
    for n in 0..2 {
        for e in 0..2 {
            for s in 0..2 {
                for w in 0..2 {
                    set.insert([n, e, s, w], k);
                    k += 1;
                }
            }
        }
    }
    let mean = tiles.iter().map(Tile::instance_count).sum::<usize>() as f64 / tiles.len() as f64;
    let side = ((1_000_000.0 / mean).sqrt().ceil()) as usize;
    let l = tiles[0].size();
    let world = set.fill(1, [0, 0], side, side, l, tiles[0].period());
    let cells: Vec<_> = world.cells().map(|([i, j], c)| (c.tile, world.placement(i, j, c.rotation))).collect();
    let agents = cells.iter().map(|(t, _)| tiles[*t].instance_count()).sum();
    Setup { glbs, tiles, cells, agents }
}

fn benches(c: &mut Criterion) {
    let s = setup();
    let glb_bytes: usize = s.glbs.iter().map(Vec::len).sum();
    let instances: usize = s.tiles.iter().map(Tile::instance_count).sum();
    let memory: usize = s.tiles.iter().map(Tile::memory_bytes).sum();
    eprintln!(
        "world: {} cells, {} agent instances from {} distinct tiles ({} instances); \
         bytes per agent instance: {:.0} in memory (playback form), {:.0} in the GLB files; \
         pose output {} bytes per agent",
        s.cells.len(),
        s.agents,
        s.tiles.len(),
        instances,
        memory as f64 / instances as f64,
        glb_bytes as f64 / instances as f64,
        4 * 4 + 1
    );

    let mut g = c.benchmark_group("sample");
    g.sample_size(20);
    g.measurement_time(std::time::Duration::from_secs(4));

    // The whole world, as a game samples it each frame: each distinct tile
    // evaluated once, then placed per cell.
    g.throughput(Throughput::Elements(s.agents as u64));
    let placed: Vec<PlacedTile<'_>> =
        s.cells.iter().map(|&(t, placement)| PlacedTile { key: t, tile: &s.tiles[t], placement }).collect();
    let mut sampler = CrowdSampler::new();
    let (mut out, mut ranges) = (Poses::default(), Vec::new());
    let mut t = 0.0;
    g.bench_function("world_1M_agents", |b| {
        b.iter(|| {
            t += 1.0 / 60.0;
            sampler.sample(black_box(t), &placed, &mut out, &mut ranges);
            black_box(&out);
        })
    });

    // Every agent evaluated from its own keyframes (no sharing): the cost
    // when every tile is distinct. Binary search, then a cursor per instance.
    let per_tile: Vec<&Tile> = s.tiles.iter().collect();
    let n: usize = per_tile.iter().map(|t| t.instance_count()).sum();
    g.throughput(Throughput::Elements(n as u64));
    let mut poses: Vec<Poses> = per_tile.iter().map(|t| Poses::new(t.instance_count())).collect();
    let mut t = 0.0;
    g.bench_function("keyframes_binary_search", |b| {
        b.iter(|| {
            t += 1.0 / 60.0;
            for (tile, p) in per_tile.iter().zip(poses.iter_mut()) {
                tile.sample(black_box(t), &crowdpatch_runtime::Placement::default(), p.as_mut());
            }
        })
    });
    let mut cursors: Vec<TileCursor> = per_tile.iter().map(|_| TileCursor::default()).collect();
    let mut t = 0.0;
    g.bench_function("keyframes_cursor", |b| {
        b.iter(|| {
            t += 1.0 / 60.0;
            for ((tile, p), cursor) in per_tile.iter().zip(poses.iter_mut()).zip(cursors.iter_mut()) {
                tile.sample_with(black_box(t), &crowdpatch_runtime::Placement::default(), cursor, p.as_mut());
            }
        })
    });
    g.finish();

    let mut g = c.benchmark_group("load");
    g.sample_size(30);
    let largest = s.glbs.iter().max_by_key(|g| g.len()).expect("tiles");
    g.throughput(Throughput::Bytes(largest.len() as u64));
    g.bench_function("tile_from_glb", |b| {
        b.iter_batched(
            || largest.clone(),
            |bytes| Tile::from_glb(black_box(&bytes)).expect("load"),
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

/// The shipped `dense` patch, baked skeletal with the built-in character,
/// written as GLB with `options`.
fn skeletal_glb(options: &GlbOptions) -> Vec<u8> {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("patches/dense.patch.json");
    let patch = crowdpatch::load_patch(&file).expect("shipped patch");
    let skeletal = crowdpatch::animation::Skeletal::new(crowdpatch::character::builtin::character()).expect("walks");
    let bake_options = crowdpatch::BakeOptions { skeletal: Some(std::sync::Arc::new(skeletal)) };
    let bake = crowdpatch::bake_with(&patch, &bake_options, &mut crowdpatch::Silent).expect("bake");
    write_glb(&bake.baked(), Some(&bake.metrics.to_json()), options).expect("glb")
}

fn joints(c: &mut Criterion) {
    let plain = skeletal_glb(&GlbOptions::default());
    let meshopt =
        skeletal_glb(&GlbOptions { compression: crowdpatch_gltf::Compression::Meshopt, ..GlbOptions::default() });
    let mut g = c.benchmark_group("joints");
    g.sample_size(30);
    for (name, glb) in [("dense", &plain), ("dense_meshopt", &meshopt)] {
        let tile = Tile::from_glb(glb).expect("load");
        let sampler = JointSampler::new(&tile).expect("a skeletal tile");
        let (n, joints) = (sampler.instance_count(), sampler.joint_count());
        let walkers = tile.agent_count();
        let walker_seconds: f64 = tile.extras().agents.iter().map(|a| a.interval[1] - a.interval[0]).sum();
        eprintln!(
            "{name}: {} bytes GLB, {walkers} walkers, {n} instances × {joints} joints, {} channels; playback form              {} bytes = {:.0} per walker, {:.0} per walker-second; root keys {} bytes; output {} bytes per instance",
            glb.len(),
            sampler.channel_count(),
            sampler.memory_bytes(),
            sampler.memory_bytes() as f64 / walkers as f64,
            sampler.memory_bytes() as f64 / walker_seconds,
            tile.memory_bytes(),
            joints * 40,
        );
        g.throughput(Throughput::Elements((n * joints) as u64));
        let (mut cursors, mut out) = (sampler.cursors(), sampler.poses());
        let mut t = 0.0;
        g.bench_function(format!("{name}_cursor"), |b| {
            b.iter(|| {
                t += 1.0 / 60.0;
                sampler.sample(black_box(t), &mut cursors, &mut out);
                black_box(&out);
            })
        });
        // Jumps in time: every call searches its keys.
        let mut t = 0.0;
        g.bench_function(format!("{name}_random_times"), |b| {
            b.iter(|| {
                t += 3.7;
                sampler.sample(black_box(t), &mut cursors, &mut out);
                black_box(&out);
            })
        });
    }
    g.finish();
}

criterion_group!(runtime, benches, joints);
criterion_main!(runtime);
