//! Criterion micro-benchmarks of the hot kernels of collision removal and
//! smoothing, on seeded protocol patches (`crowdpatch::bench`):
//! `cargo bench --bench kernels`.
//!
//! - segment closest approach (seed paper eqs. 8–10) and the closest approach
//!   of two whole paths over their periodic instances;
//! - a row update of the distance matrix after one move: Algorithm 2's full
//!   recomputation (`DistanceMatrix`) against the pruned, windowed one of the
//!   default solver (`IncrementalMatrix`), and building each from scratch;
//! - the clamped cubic spline fit of smoothing (seed paper eqs. 11–12).

use criterion::{Criterion, criterion_group, criterion_main};
use crowdpatch::bench::{Protocol, Variant};
use crowdpatch::collision::CollisionParams;
use crowdpatch::collision::matrix::IncrementalMatrix;
use crowdpatch::collision::paper::DistanceMatrix;
use crowdpatch::geometry::{Vec2, closest_approach};
use crowdpatch::path::{Agent, Path};
use crowdpatch::proximity::{closest_periodic, ghosts};
use crowdpatch::smoothing::Spline;
use std::hint::black_box;

/// The initial paths and ghosts of protocol case `(n, run)`.
fn setup(n: usize, run: usize) -> (crowdpatch::Patch, Vec<Agent>) {
    let patch = Protocol::opt(Variant::Separated).patch(n, run);
    let pairs = crowdpatch::matching::match_patch(&patch, patch.solver.matching);
    let (agents, _) = crowdpatch::initial_paths::initial_paths(&patch, &pairs);
    (patch, agents)
}

fn closest(c: &mut Criterion) {
    c.bench_function("segment closest approach", |b| {
        b.iter(|| {
            closest_approach(
                black_box(Vec2::new(0.0, 0.0)),
                black_box(Vec2::new(1.2, 0.3)),
                black_box(Vec2::new(5.0, 1.0)),
                black_box(Vec2::new(-0.9, 0.1)),
                black_box(6.0),
            )
        })
    });
    let (_, agents) = setup(20, 0);
    c.bench_function("path closest approach, all instances (n = 20, one pair)", |b| {
        b.iter(|| closest_periodic(black_box(&agents[0].path), black_box(&agents[1].path), 10.0, None))
    });
}

fn matrix(c: &mut Criterion) {
    let (patch, mut agents) = setup(50, 0);
    let g = ghosts(&patch, &agents);
    let params = CollisionParams::from_patch(&patch);
    // One move: a smooth bump of agent 7 at the middle of its free range.
    let (lo, hi) = agents[7].path.free_range();
    let window =
        crowdpatch::collision::default::bump(&mut agents[7].path, (lo + hi) / 2.0, Vec2::new(0.3, -0.2), &params, 1.5);
    let paths: Vec<&Path> = agents.iter().map(|a| &a.path).collect();
    let mut group = c.benchmark_group("distance matrix (n = 50)");
    group.bench_function("Algorithm 2 matrix, build", |b| {
        b.iter(|| DistanceMatrix::new(black_box(&paths), &[], &g, &params))
    });
    group.bench_function("incremental matrix, build", |b| {
        b.iter(|| IncrementalMatrix::new(black_box(&paths), &[], &g, &params))
    });
    let mut full = DistanceMatrix::new(&paths, &[], &g, &params);
    group.bench_function("Algorithm 2 matrix, row update", |b| b.iter(|| full.update(black_box(&paths), 7)));
    let mut inc = IncrementalMatrix::new(&paths, &[], &g, &params);
    group.bench_function("incremental matrix, windowed row update", |b| {
        b.iter(|| inc.update(black_box(&paths), 7, window.as_ref().map(std::slice::from_ref)))
    });
    group.finish();
}

fn spline(c: &mut Criterion) {
    // Tacks every 0.5 s over a 20 s path.
    let t: Vec<f64> = (0..=40).map(|k| k as f64 * 0.5).collect();
    let p: Vec<Vec2> = t.iter().map(|&s| Vec2::new(s * 0.7, (s * 0.8).sin() * 2.0 + 8.0)).collect();
    c.bench_function("clamped spline fit (41 tacks)", |b| {
        b.iter(|| Spline::clamped(black_box(&t), black_box(&p), Vec2::new(0.0, 1.33), Vec2::new(1.33, 0.0)))
    });
}

criterion_group!(benches, closest, matrix, spline);
criterion_main!(benches);
