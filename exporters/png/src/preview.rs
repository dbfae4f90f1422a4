//! The PNG preview of a bake (feature `bake`): its stages side by side, as
//! the seed paper's Figure 7 — (a) matched paths, (b) after collision
//! removal, (c) smoothed — coloured by time, with obstacles, boundary points,
//! remaining collisions and a caption of the metrics — and under them the
//! realism chart (how the walkers compare with real pedestrians). The
//! command line's `bake --preview` and the editor's PNG export draw the same
//! figure.

use crate::canvas::stack;
use crate::error::PngError;
use crate::lines::{LineChart, LinePanel, LineSeries, render_lines};
use crate::stages::{CrossingMark, PanelPath, StagePanel, StagesFigure, render_stages};
use crowdpatch::bake::Bake;
use crowdpatch::model::Direction;
use crowdpatch::path::Agent;
use crowdpatch::realism;
use crowdpatch::realism::reference::Reference;

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

/// The realism chart of a bake (docs/design.md "Realism"): the cumulative
/// distributions of its walkers' speed, turn rate, detour and
/// nearest-neighbour distance every 0.4 s next to the real pedestrians of
/// the shipped reference (pooled ETH/UCY), and, for the speed, the floor the
/// boundary conditions impose and the walkers' preferred speeds.
pub fn realism_chart(bake: &Bake) -> LineChart {
    let reference = Reference::shipped_ref();
    let pooled = &reference.pooled;
    let samples = realism::bake_samples(&bake.patch, &bake.agents, realism::SAMPLE_INTERVAL);
    let cdf = |v: &[f64], (lo, cap): (f64, f64)| -> Vec<[f64; 2]> {
        let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
        s.sort_by(f64::total_cmp);
        let n = s.len().max(1) as f64;
        let mut pts = vec![[lo, 0.0]];
        for (i, x) in s.iter().enumerate() {
            let x = x.min(cap);
            pts.push([x, i as f64 / n]);
            pts.push([x, (i + 1) as f64 / n]);
        }
        pts.push([cap, 1.0]);
        pts
    };
    let table = |q: &[f64], (lo, cap): (f64, f64)| -> Vec<[f64; 2]> {
        let n = q.len().saturating_sub(1).max(1) as f64;
        q.iter().enumerate().map(|(k, x)| [x.clamp(lo, cap), k as f64 / n]).collect()
    };
    const BAKE: [u8; 3] = [20, 20, 20];
    const REAL: [u8; 3] = [31, 119, 180];
    const FLOOR: [u8; 3] = [230, 120, 20];
    const PREFERRED: [u8; 3] = [44, 160, 44];
    let panel = |title: &str, x_label: &str, ours: &[f64], real: &[f64], range: (f64, f64)| LinePanel {
        title: title.into(),
        x_label: x_label.into(),
        y_label: "share of samples".into(),
        series: vec![
            LineSeries {
                name: format!("real pedestrians ({})", pooled.name),
                colour: REAL,
                points: table(real, range),
            },
            LineSeries { name: "this bake".into(), colour: BAKE, points: cdf(ours, range) },
        ],
        legend_bottom: true,
        ..LinePanel::default()
    };
    let mut speed = panel("speed", "speed [m/s]", &samples.speed, &pooled.speed_quantiles, (0.0, 2.5));
    speed.series.push(LineSeries {
        name: "floor (straight walks)".into(),
        colour: FLOOR,
        points: cdf(&realism::floor_speeds(&bake.agents), (0.0, 2.5)),
    });
    let preferred: Vec<f64> = bake.agents.iter().filter(|a| a.entry.is_some()).map(|a| a.preferred_speed).collect();
    speed.series.push(LineSeries { name: "preferred".into(), colour: PREFERRED, points: cdf(&preferred, (0.0, 2.5)) });
    let m = bake.metrics.realism.clone().unwrap_or_default();
    // Walkers in groups against the range over the ETH/UCY scenes with
    // group annotations (data/groups.json).
    let (lo, hi) =
        realism::groups::GroupReference::shipped_ref().range(|s| Some(100.0 * s.share_in_groups)).unwrap_or_default();
    LineChart {
        title: format!(
            "{}: like real pedestrians (in brackets)? speed KS {:.2}; medians: speed {:.2} m/s ({:.2}, floor {:.2}), \
             turn {:.2} rad/s ({:.2}), detour {:.3} ({:.3}), nearest {:.2} m ({:.2}); \
             in groups {:.0} % ({lo:.0}–{hi:.0} %); every {} s",
            bake.patch.header.name,
            m.speed_ks,
            m.crowd.speed.p50,
            pooled.stats.speed.p50,
            m.floor_speed.p50,
            m.crowd.turn_rate.p50,
            pooled.stats.turn_rate.p50,
            m.crowd.detour.p50,
            pooled.stats.detour.p50,
            m.crowd.nearest_neighbour.p50,
            pooled.stats.nearest_neighbour.p50,
            100.0 * m.groups.share_in_groups,
            realism::SAMPLE_INTERVAL,
        ),
        panels: vec![
            speed,
            panel("turn rate", "turn rate [rad/s]", &samples.turn_rate, &pooled.turn_rate_quantiles, (0.0, 2.0)),
            panel(
                "detour (path length / straight distance)",
                "detour",
                &samples.detour,
                &pooled.detour_quantiles,
                (1.0, 1.3),
            ),
            panel(
                "nearest neighbour",
                "distance [m]",
                &samples.nearest_neighbour,
                &pooled.nearest_neighbour_quantiles,
                (0.0, 6.0),
            ),
        ],
        columns: 4,
        panel_width_px: 450,
        panel_height_px: 300,
    }
}

/// PNG bytes of the preview: the stages figure with the realism chart
/// under it.
///
/// # Errors
/// As [`render_stages`] and [`render_lines`].
pub fn render(bake: &Bake) -> Result<Vec<u8>, PngError> {
    let stages = render_stages(&figure(bake))?;
    let chart = render_lines(&realism_chart(bake))?;
    stack(&[&stages, &chart])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_realism_chart_says_how_many_walk_in_groups_against_the_real_scenes() {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../patches/figure7.patch.json");
        let patch = crowdpatch::load_patch(&file).unwrap();
        let bake = crowdpatch::bake::bake(&patch, &mut crowdpatch::bake::Silent).unwrap();
        let title = realism_chart(&bake).title;
        // No walker of a shipped patch is in a group yet; the ETH/UCY
        // scenes have 44-69 % (data/groups.json).
        assert!(title.contains("in groups 0 % (44–69 %)"), "{title}");
    }
}
