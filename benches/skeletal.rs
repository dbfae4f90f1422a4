//! Skeletal bake benchmarks (criterion): footstep planning and animation
//! synthesis of the shipped `dense` patch, and the whole skeletal bake of it
//! against a baseline binary in the same run.
//!
//! - `synthesis`: [`crowdpatch::animation::animate`] (planning and synthesis
//!   of every walker) in-process, single thread; throughput in thousandths
//!   of a walker-period (one walker for one period π), so criterion's
//!   elements/s divided by 1000 is walker-periods per second.
//! - `bake dense (process)`: `crowdpatch bake patches/dense.patch.json -j 1`
//!   of this tree's release binary and, when `CROWDPATCH_BASELINE` names
//!   another build's binary (e.g. the main branch's, built with
//!   `tools/same-bytes.sh` or by hand), of that one: the before/after ratio
//!   of the whole skeletal bake, in one run. The stage timings of both are
//!   printed from their reports.
//!
//! Run: `cargo build --release --bin crowdpatch && CROWDPATCH_BASELINE=/path/to/old/crowdpatch cargo bench --bench skeletal`.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use crowdpatch::animation::{Skeletal, animate};
use crowdpatch::character::builtin;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
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

/// Stage timings `[ms]` (footsteps, animation, total) from a report.
fn stages(report: &Path) -> Option<(f64, f64, f64)> {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(report).ok()?).ok()?;
    let t = &v["timings"];
    Some((t["footsteps_ms"].as_f64()?, t["animation_ms"].as_f64()?, t["total_ms"].as_f64()?))
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
    for (name, bin) in &binaries {
        let glb = dir.path().join(format!("{}.glb", name.replace(' ', "-")));
        let report = dir.path().join(format!("{}.json", name.replace(' ', "-")));
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
        };
        group.bench_function(name.as_str(), |b| b.iter(run));
        if let Some((f, a, t)) = stages(&report) {
            eprintln!("{name}: footsteps {f:.0} ms, animation {a:.0} ms, whole bake {t:.0} ms (last run)");
        }
    }
    group.finish();
}

criterion_group!(skeletal, synthesis, process);
criterion_main!(skeletal);
