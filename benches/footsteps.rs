//! Footstep planning benchmark (criterion): A* planning time per
//! agent-period (one agent walking for one period π) on shipped patches,
//! built-in character, default planner parameters.
//!
//! Each patch is planned with both heuristics of the search
//! ([`SearchBound`]): `straight` (the planner as it was) and `relaxed` (the
//! default), in the same run, so their ratio is measured on one machine
//! state. They find plans of the same cost.
//!
//! Run: `cargo bench --bench footsteps`. The throughput criterion prints is
//! in agent-periods per second; single thread.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use crowdpatch::animation::path_ends;
use crowdpatch::character::builtin;
use crowdpatch::footsteps::{FootstepParams, GaitModel, SearchBound, plan_agent};

fn planning(c: &mut Criterion) {
    let character = builtin::character();
    let gait = GaitModel::new(&character).expect("the built-in character walks");
    let mut group = c.benchmark_group("footstep planning");
    group.sample_size(10);
    for name in ["figure7", "park", "dense"] {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("patches").join(format!("{name}.patch.json"));
        let patch = crowdpatch::load_patch(&file).expect("shipped patch");
        let bake = crowdpatch::bake(&patch, &mut crowdpatch::Silent).expect("bake");
        let baked = bake.baked();
        let period = baked.header.period;
        let agent_periods: f64 = baked.agents.iter().map(|a| (a.end() - a.start()) / period).sum();
        // Throughput in thousandths of an agent-period (criterion counts integers).
        group.throughput(Throughput::Elements((agent_periods * 1000.0).round() as u64));
        for (bound, label) in [(SearchBound::Straight, "straight"), (SearchBound::Relaxed, "relaxed")] {
            let params = FootstepParams { bound, ..FootstepParams::default() };
            group.bench_function(
                format!(
                    "{name} ({} agents, {agent_periods:.1} agent-periods, per 1/1000), {label}",
                    baked.agents.len()
                ),
                |b| {
                    b.iter(|| {
                        for (agent, b) in bake.agents.iter().zip(&baked.agents) {
                            black_box(plan_agent(&gait, &character, b, path_ends(agent), period, &params));
                        }
                    });
                },
            );
        }
    }
    group.finish();
}

criterion_group!(benches, planning);
criterion_main!(benches);
