//! Skeletal bake benchmarks (criterion): footstep planning, animation
//! synthesis and the joint tracks' key reduction of the shipped `dense`
//! patch in-process, and the whole skeletal bake of it against a baseline
//! binary in the same run.
//!
//! - `synthesis`: [`crowdpatch::animation::animate`] (planning and synthesis
//!   of every walker) in-process, on the calling thread; throughput in
//!   thousandths of a walker-period (one walker for one period π), so
//!   criterion's elements/s divided by 1000 is walker-periods per second.
//! - `key reduction`: [`crowdpatch_gltf::write_glb`] of the skeletal bake
//!   (the GLB, its joint tracks reduced within the default bounds), per
//!   thousandth of a walker-period as above.
//! - `bake dense (process)`: `crowdpatch bake patches/dense.patch.json -j 1`
//!   of this tree's release binary and, when `CROWDPATCH_BASELINE` names
//!   another build's binary (e.g. the main branch's, built with
//!   `tools/same-bytes.sh` or by hand), of that one: the before/after ratio
//!   of the whole skeletal bake, in one run. The median stage timings of
//!   each binary's runs (from their reports: footstep planning, synthesis,
//!   the bake without writing the GLB) are printed with their ratios.
//!
//! Run: `cargo build --release --bin crowdpatch && CROWDPATCH_BASELINE=/path/to/old/crowdpatch cargo bench --bench skeletal`.
//! Instruction counts (`valgrind --tool=callgrind`) are the steadier
//! figures on a shared machine; these times are the cross-check.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use crowdpatch::animation::{Skeletal, animate};
use crowdpatch::character::builtin;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The skeletal bake of `dense` (with the built-in character) and its
/// walker-periods.
fn dense() -> (crowdpatch::Bake, f64) {
    let skeletal = Skeletal::new(builtin::character()).expect("the built-in character walks");
    let options = crowdpatch::BakeOptions { skeletal: Some(std::sync::Arc::new(skeletal)) };
    let patch = crowdpatch::load_patch(&root().join("patches/dense.patch.json")).expect("shipped patch");
    let bake = crowdpatch::bake_with(&patch, &options, &mut crowdpatch::Silent).expect("bake");
    let baked = bake.baked();
    let period = baked.header.period;
    let walker_periods: f64 = baked.agents.iter().map(|a| (a.end() - a.start()) / period).sum();
    (bake, walker_periods)
}

fn synthesis(c: &mut Criterion) {
    let skeletal = Skeletal::new(builtin::character()).expect("the built-in character walks");
    let file = root().join("patches/dense.patch.json");
    let patch = crowdpatch::load_patch(&file).expect("shipped patch");
    let bake = crowdpatch::bake(&patch, &mut crowdpatch::Silent).expect("bake");
    let baked = bake.baked();
    let period = baked.header.period;
    let walker_periods: f64 = baked.agents.iter().map(|a| (a.end() - a.start()) / period).sum();
    let mut group = c.benchmark_group("synthesis");
    group.sample_size(10);
    group.throughput(Throughput::Elements((walker_periods * 1000.0).round() as u64));
    group.bench_function(format!("dense planning+synthesis ({walker_periods:.1} walker-periods, per 1/1000)"), |b| {
        b.iter(|| black_box(animate(&bake.patch, &bake.agents, &baked.agents, &skeletal)));
    });
    group.finish();
}

fn reduction(c: &mut Criterion) {
    let (bake, walker_periods) = dense();
    let baked = bake.baked();
    let options = crowdpatch_gltf::GlbOptions::default();
    let metrics = bake.metrics.to_json();
    let mut group = c.benchmark_group("key reduction");
    group.sample_size(10);
    group.throughput(Throughput::Elements((walker_periods * 1000.0).round() as u64));
    group.bench_function(format!("dense GLB ({walker_periods:.1} walker-periods, per 1/1000)"), |b| {
        b.iter(|| black_box(crowdpatch_gltf::write_glb(&baked, Some(&metrics), &options).expect("GLB")));
    });
    group.finish();
}

/// Stage timings `[ms]` (footsteps, animation, bake total) from a report.
fn stages(report: &Path) -> Option<[f64; 3]> {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(report).ok()?).ok()?;
    let t = &v["timings"];
    Some([t["footsteps_ms"].as_f64()?, t["animation_ms"].as_f64()?, t["total_ms"].as_f64()?])
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() { f64::NAN } else { v[v.len() / 2] }
}

fn process(c: &mut Criterion) {
    let this = root().join("target/release/crowdpatch");
    let mut binaries: Vec<(String, PathBuf)> = Vec::new();
    if this.exists() {
        binaries.push(("this tree".into(), this));
    } else {
        eprintln!(
            "SKIPPED bake dense (process): build the release binary first (cargo build --release --bin crowdpatch)"
        );
        return;
    }
    match std::env::var_os("CROWDPATCH_BASELINE") {
        Some(b) => binaries.push(("baseline".into(), PathBuf::from(b))),
        None => {
            eprintln!("no baseline: set CROWDPATCH_BASELINE to an older crowdpatch binary for the before/after ratio")
        }
    }
    let dir = tempfile::tempdir().expect("temporary directory");
    let patch = root().join("patches/dense.patch.json");
    let mut group = c.benchmark_group("bake dense (process)");
    group.sample_size(10);
    let mut medians = Vec::new();
    for (name, bin) in &binaries {
        let glb = dir.path().join(format!("{}.glb", name.replace(' ', "-")));
        let report = dir.path().join(format!("{}.json", name.replace(' ', "-")));
        let timings = Mutex::new(Vec::new());
        let run = || {
            let status = Command::new(bin)
                .args(["bake", "-q", "-j", "1", "--report"])
                .arg(&report)
                .arg("-o")
                .arg(&glb)
                .arg(&patch)
                .status()
                .expect("run the binary");
            assert!(status.success(), "{} failed", bin.display());
            if let Some(s) = stages(&report) {
                timings.lock().expect("timings").push(s);
            }
        };
        group.bench_function(name.as_str(), |b| b.iter(run));
        let t = timings.into_inner().expect("timings");
        let m: [f64; 3] = std::array::from_fn(|k| median(&mut t.iter().map(|s| s[k]).collect::<Vec<_>>()));
        eprintln!(
            "{name}: footsteps {:.0} ms, animation {:.0} ms, bake without the GLB {:.0} ms (medians of {} runs)",
            m[0],
            m[1],
            m[2],
            t.len()
        );
        medians.push(m);
    }
    if let [now, before] = medians[..] {
        eprintln!(
            "baseline / this tree: footsteps {:.2}×, animation {:.2}×, bake without the GLB {:.2}×",
            before[0] / now[0],
            before[1] / now[1],
            before[2] / now[2]
        );
    }
    group.finish();
}

criterion_group!(skeletal, synthesis, reduction, process);
criterion_main!(skeletal);
