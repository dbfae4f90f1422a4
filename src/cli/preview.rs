//! The PNG preview of a bake: its stages side by side, as the seed paper's
//! Figure 7 — (a) matched paths, (b) after collision removal, (c) smoothed —
//! coloured by time, with obstacles, boundary points and remaining collisions.

use crowdpatch::bake::Bake;
use crowdpatch::model::Direction;
use crowdpatch::trajectory::Agent;
use crowdpatch_png::{CrossingMark, PanelPath, StagePanel, StagesFigure, render_stages};

fn panel_paths(agents: &[Agent], straight: bool) -> Vec<PanelPath> {
    agents
        .iter()
        .map(|a| PanelPath { points: a.path.points.iter().map(|c| [c.p.x, c.p.y, c.t]).collect(), straight })
        .collect()
}

/// The figure of a bake.
pub fn figure(bake: &Bake) -> StagesFigure {
    let p = &bake.patch;
    let m = &bake.metrics;
    let collisions: Vec<[f64; 2]> = bake.remaining.iter().map(|c| [c.position.x, c.position.y]).collect();
    let before: Vec<[f64; 2]> = bake.collision.remaining.iter().map(|c| [c.position.x, c.position.y]).collect();
    let two_r = 2.0 * p.agent_radius;
    let fmt = |v: Option<f64>| v.map_or("–".to_string(), |d| format!("{d:.3} m"));
    let caption = format!(
        "{name}: {n} agents ({exo} exogenous, {endo} endogenous), L = {l} m, π = {pi} s, r = {r} m, seed {seed}, {mode:?} matching, {solver:?} solver\n\
         {state} after {it} iterations: min separation {sep} (2r = {two_r} m), obstacle clearance {obs}, seam clearance {seam}\n\
         speed mean {mean:.2} m/s (p5 {p5:.2}, p95 {p95:.2}, max {max:.2}), mean |u − u_cft| {dev:.2} m/s; turn rate p95 {tp95:.2} rad/s (max {tmax:.1}); coverage {cov:.0}%",
        name = p.name,
        n = bake.agents.len(),
        exo = bake.pairs.len(),
        endo = p.endogenous.len(),
        l = p.size,
        pi = p.period,
        r = p.agent_radius,
        seed = p.seed,
        mode = p.solver.matching,
        solver = p.solver.method,
        state = if bake.converged() {
            "collision-free".to_string()
        } else {
            format!("{} collisions remain", bake.remaining.len())
        },
        it = bake.collision.iterations,
        sep = fmt(m.min_separation),
        obs = fmt(m.obstacle_clearance),
        seam = fmt(m.seam_clearance),
        mean = m.speed.mean,
        p5 = m.speed.p5,
        p95 = m.speed.p95,
        max = m.speed.max,
        dev = m.speed.mean_comfort_deviation,
        tp95 = m.turn_rate.p95,
        tmax = m.turn_rate.max,
        cov = m.coverage * 100.0,
    );
    StagesFigure {
        size: p.size,
        period: p.period,
        agent_radius: p.agent_radius,
        obstacles: p.obstacles.clone(),
        crossings: p
            .crossings()
            .iter()
            .map(|c| CrossingMark {
                position: [c.position.x, c.position.y],
                t: c.t,
                entry: c.direction == Direction::Entry,
            })
            .collect(),
        stages: vec![
            StagePanel {
                title: "(a) matched (initial paths)".into(),
                paths: panel_paths(&bake.initial, true),
                collisions: vec![],
            },
            StagePanel {
                title: "(b) after collision removal".into(),
                paths: panel_paths(&bake.collision_free, false),
                collisions: before,
            },
            StagePanel { title: "(c) smoothed".into(), paths: panel_paths(&bake.agents, false), collisions },
        ],
        caption,
        ..StagesFigure::default()
    }
}

/// PNG bytes of the preview.
pub fn render(bake: &Bake) -> anyhow::Result<Vec<u8>> {
    Ok(render_stages(&figure(bake))?)
}
