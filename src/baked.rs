//! Conversion of a bake's result to the baked format of `crowdpatch-runtime`
//! ([`BakedPatch`]): agents with their path keys and headings, the four
//! patterns as baked (velocities and gait phases), the metrics and the
//! skeletal animation. Exporters write what this produces.

use crate::model::{Direction, Patch};
use crate::path::Agent;
use crowdpatch_runtime::format::{
    BakedAgent, BakedPatch, BakedPattern, BakedPoint, BoundaryGait, FORMAT_VERSION, Metrics, PathKey, Side, Sides,
    wrap_angle,
};
use crowdpatch_runtime::skeletal::SkeletalAnimation;

/// Slowest average speed `[m/s]` over a key's neighbourhood that still
/// defines a heading; slower, the agent keeps the heading it had.
pub const MIN_HEADING_SPEED: f64 = 0.2;

/// Headings `[rad]` at the control points of a path: the direction of the
/// central difference of positions (one-sided at open ends), carried over
/// where the agent stands still or barely moves; the same at both ends of a
/// loop of period `period` `[s]`.
pub fn headings(agent: &Agent, period: f64) -> Vec<f64> {
    let pts = &agent.path.points;
    let n = pts.len();
    let looped = agent.path.looped;
    let mut out: Vec<Option<f64>> = (0..n)
        .map(|i| {
            let (a, b, dt) = if looped {
                // Points 0 and n−1 coincide; neighbours wrap around them.
                let prev = if i == 0 { n - 2 } else { i - 1 };
                let next = if i == n - 1 { 1 } else { i + 1 };
                let dt = (pts[next].t - pts[prev].t).rem_euclid(period).max(1e-9);
                (pts[prev], pts[next], dt)
            } else {
                let (a, b) = (pts[i.saturating_sub(1)], pts[(i + 1).min(n - 1)]);
                (a, b, b.t - a.t)
            };
            let d = b.p - a.p;
            // Shuffling on the spot (below the speed of a slow step) keeps the
            // heading it had.
            (d.norm() / dt >= MIN_HEADING_SPEED).then(|| d.y.atan2(d.x))
        })
        .collect();
    // Fill gaps: forward with the last known, then the start backwards.
    let mut last = None;
    for h in out.iter_mut() {
        match h {
            Some(v) => last = Some(*v),
            None => *h = last,
        }
    }
    let first = out.iter().flatten().next().copied().unwrap_or(0.0);
    out.iter().map(|h| wrap_angle(h.unwrap_or(first))).collect()
}

/// The baked form of an agent.
pub fn baked_agent(agent: &Agent, period: f64) -> BakedAgent {
    let hs = headings(agent, period);
    BakedAgent {
        kind: agent.kind,
        keys: agent
            .path
            .points
            .iter()
            .zip(hs)
            .map(|(c, h)| PathKey { t: c.t, position: [c.p.x, c.p.y], heading: h })
            .collect(),
    }
}

/// The four patterns as baked: positions, times and the velocities used
/// (patch frame).
pub fn baked_patterns(patch: &Patch) -> Sides<BakedPattern> {
    let mut out: Sides<BakedPattern> = Sides::default();
    for c in patch.crossings() {
        let p = BakedPoint { s: c.s, t: c.t, velocity: [c.velocity.x, c.velocity.y], gait: None };
        match c.direction {
            Direction::Entry => out[c.side].entries.push(p),
            Direction::Exit => out[c.side].exits.push(p),
        }
    }
    out
}

/// The gait of each boundary point of a skeletal bake: side, entry (else
/// exit), index among that side's entries or exits, and the gait there.
pub type BoundaryGaits = [(Side, bool, usize, BoundaryGait)];

/// The baked patch (runtime format) of `patch` walked by `agents`, with its
/// metrics and, for a skeletal bake, the animation and the gait at each
/// boundary point. O(control points).
pub fn baked_patch(
    patch: &Patch,
    agents: &[Agent],
    metrics: &Metrics,
    skeletal: Option<(&SkeletalAnimation, &BoundaryGaits)>,
) -> BakedPatch {
    let mut patterns = baked_patterns(patch);
    for &(side, entry, index, gait) in skeletal.map_or(&[][..], |s| s.1) {
        let list = if entry { &mut patterns[side].entries } else { &mut patterns[side].exits };
        if let Some(p) = list.get_mut(index) {
            p.gait = Some(gait);
        }
    }
    BakedPatch {
        format: FORMAT_VERSION,
        header: patch.header.clone(),
        patterns,
        obstacles: patch.obstacles.clone(),
        agents: agents.iter().map(|a| baked_agent(a, patch.header.period)).collect(),
        metrics: metrics.clone(),
        skeletal: skeletal.map(|s| Box::new(s.0.clone())),
    }
}
