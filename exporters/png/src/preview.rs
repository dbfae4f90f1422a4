//! The PNG preview of a bake (feature `bake`): its stages side by side, as
//! the seed paper's Figure 7 — (a) matched paths, (b) after collision
//! removal, (c) smoothed — coloured by time, with obstacles, boundary points,
//! remaining collisions and a caption of the metrics. The command line's
//! `bake --preview` and the editor's PNG export draw the same figure.

use crate::error::PngError;
use crate::stages::{CrossingMark, PanelPath, StagePanel, StagesFigure, render_stages};
use crowdpatch::bake::Bake;
use crowdpatch::model::Direction;
use crowdpatch::path::Agent;

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
    let two_r = 2.0 * p.header.agent_radius;
    let fmt = |v: Option<f64>| v.map_or("–".to_string(), |d| format!("{d:.3} m"));
    let caption = format!(
        "{name}: {n} agents ({exo} exogenous, {endo} endogenous), L = {l} m, π = {pi} s, r = {r} m, seed {seed}, {mode:?} matching, {solver:?} solver\n\
         {state} after {it} iterations: min separation {sep} (2r = {two_r} m), obstacle clearance {obs}, seam clearance {seam}\n\
         speed mean {mean:.2} m/s (p5 {p5:.2}, p95 {p95:.2}, max {max:.2}), mean |u − u_cft| {dev:.2} m/s; turn rate p95 {tp95:.2} rad/s (max {tmax:.1}); coverage {cov:.0}%",
        name = p.header.name,
        n = bake.agents.len(),
        exo = bake.pairs.len(),
        endo = p.endogenous.len(),
        l = p.header.size,
        pi = p.header.period,
        r = p.header.agent_radius,
        seed = p.header.seed,
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
    // Skeletal bakes: the footsteps (each a foot-long mark along its
    // heading, coloured by its plant time) and the animation figures.
    let mut caption = caption;
    let mut stages = vec![
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
    ];
    if let Some(sk) = &bake.skeletal {
        const FOOT: f64 = 0.26;
        let marks = sk
            .animation
            .agents
            .iter()
            .flat_map(|a| a.footsteps.iter())
            .map(|f| {
                let (c, s) = (f.heading.cos(), f.heading.sin());
                let [x, y] = f.position;
                PanelPath {
                    points: vec![
                        [x - 0.3 * FOOT * c, y - 0.3 * FOOT * s, f.t],
                        [x + 0.7 * FOOT * c, y + 0.7 * FOOT * s, f.t],
                    ],
                    straight: true,
                }
            })
            .collect();
        stages.push(StagePanel {
            title: format!("(d) footsteps ({})", sk.metrics.character),
            paths: marks,
            collisions: vec![],
        });
        let a = &sk.metrics;
        caption.push_str(&format!(
            "\nfootsteps {n}: step length {sl:.2} m (p5 {sl5:.2}, p95 {sl95:.2}), cadence {cd:.2} steps/s (p5 {cd5:.2}, p95 {cd95:.2}); \
             foot skate {fs:.4} m/s (max {fsm:.3}); timing error mean {te:.3} s; root deviation mean {rd:.3} m, p95 {rd95:.3} m",
            n = a.footsteps,
            sl = a.step_length[0],
            sl5 = a.step_length[1],
            sl95 = a.step_length[2],
            cd = a.cadence[0],
            cd5 = a.cadence[1],
            cd95 = a.cadence[2],
            fs = a.foot_skate,
            fsm = a.foot_skate_max,
            te = a.timing_error_mean,
            rd = a.root_deviation_mean,
            rd95 = a.root_deviation_p95,
        ));
    }
    StagesFigure {
        size: p.header.size,
        period: p.header.period,
        agent_radius: p.header.agent_radius,
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
        stages,
        caption,
        ..StagesFigure::default()
    }
}

/// PNG bytes of the preview.
///
/// # Errors
/// As [`render_stages`].
pub fn render(bake: &Bake) -> Result<Vec<u8>, PngError> {
    render_stages(&figure(bake))
}
