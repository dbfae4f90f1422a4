//! Conversion of a bake's result to the baked format of `crowdpatch-runtime`
//! ([`BakedPatch`]): agents with their path keys and headings, the four
//! patterns as baked (velocities and gait phases) and the skeletal
//! animation. Exporters write what this produces, with the bake's metrics
//! beside it ([`crate::bake::Bake::metrics`]).

use crate::model::{Direction, Patch};
use crate::path::Agent;
use crowdpatch_runtime::format::{
    BakedAgent, BakedPatch, BakedPattern, BakedPoint, BoundaryGait, FORMAT_VERSION, PathKey, Side, Sides, wrap_angle,
};
use crowdpatch_runtime::skeletal::SkeletalAnimation;

/// Slowest average speed `[m/s]` over a key's neighbourhood that still
/// defines a heading; slower, the agent keeps the heading it had.
pub const MIN_HEADING_SPEED: f64 = 0.2;

/// Fastest turn of a baked heading `[rad/s]`: half a turn in a quarter of a
/// second. A path that reverses between two keys 20 ms apart would
/// otherwise turn the body (the capsule, the root pose, the skeleton's root
/// node) at up to 150 rad/s. Slower limits leave a walker that sets off in
/// a new direction facing sideways while it starts to move, and its
/// footsteps sideways or backwards (2π rad/s: a backward step refused by the
/// gate in 1 of 101 sweep bakes).
pub const MAX_HEADING_RATE: f64 = 4.0 * std::f64::consts::PI;

/// Headings `[rad]` at the control points of a path: the direction of the
/// central difference of positions (one-sided at open ends), carried over
/// where the agent stands still or barely moves, then turning at most
/// [`MAX_HEADING_RATE`] ([`limit_turn_rate`]); the same at both ends of a
/// loop of period `period` `[s]`. O(n) but for the windows of a reversal.
pub fn headings(agent: &Agent, period: f64) -> Vec<f64> {
    let mut hs = raw_headings(agent, period);
    let ts: Vec<f64> = agent.path.points.iter().map(|c| c.t).collect();
    limit_turn_rate(&ts, &mut hs, MAX_HEADING_RATE);
    hs
}

/// Spreads every turn of `headings` `[rad]` (at increasing times `ts`
/// `[s]`) faster than `rate` `[rad/s]` over the shortest window of keys
/// round it that allows it, turning evenly in time (the shorter way) between
/// the window's first and last key, which keep their headings: the first
/// and last key never change (a loop's seam and a boundary crossing keep
/// theirs). A turn too fast even over the whole path is left as it is.
/// O(n · w) for windows of w keys.
pub fn limit_turn_rate(ts: &[f64], headings: &mut [f64], rate: f64) {
    let n = headings.len().min(ts.len());
    let too_fast =
        |h: &[f64], a: usize, b: usize| wrap_angle(h[b] - h[a]).abs() > rate * (ts[b] - ts[a]) * (1.0 + 1e-9) + 1e-12;
    let mut i = 1;
    while i < n {
        if !too_fast(headings, i - 1, i) {
            i += 1;
            continue;
        }
        // Grow the window [a, b] round the turn, the side nearer in time to
        // its middle first, until the turn fits or the path ends.
        let middle = 0.5 * (ts[i - 1] + ts[i]);
        let (mut a, mut b) = (i - 1, i);
        while too_fast(headings, a, b) && (a > 0 || b + 1 < n) {
            if a > 0 && (b + 1 == n || middle - ts[a - 1] <= ts[b + 1] - middle) {
                a -= 1;
            } else {
                b += 1;
            }
        }
        if too_fast(headings, a, b) {
            i += 1;
            continue;
        }
        let (h0, turn, span) = (headings[a], wrap_angle(headings[b] - headings[a]), ts[b] - ts[a]);
        for k in a + 1..b {
            headings[k] = wrap_angle(h0 + turn * (ts[k] - ts[a]) / span);
        }
        // Every turn up to the window's last key is now within the rate
        // (the keys before it and its ends are unchanged).
        i = b + 1;
    }
}

/// [`headings`] before the turn rate is limited.
fn raw_headings(agent: &Agent, period: f64) -> Vec<f64> {
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

/// The four patterns as baked: positions, times, the velocities used
/// (patch frame) and the walking groups.
pub fn baked_patterns(patch: &Patch) -> Sides<BakedPattern> {
    let mut out: Sides<BakedPattern> = Sides::default();
    for c in patch.crossings() {
        let group = patch.sides[c.side].points(c.direction).get(c.index).and_then(|b| b.group);
        let p = BakedPoint { s: c.s, t: c.t, velocity: [c.velocity.x, c.velocity.y], gait: None, group };
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

/// The baked patch (runtime format) of `patch` walked by `agents`, with,
/// for a skeletal bake, the animation and the gait at each boundary point.
/// O(control points).
pub fn baked_patch(
    patch: &Patch,
    agents: &[Agent],
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
        skeletal: skeletal.map(|s| Box::new(s.0.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Largest turn rate `[rad/s]` between consecutive keys.
    fn fastest(ts: &[f64], hs: &[f64]) -> f64 {
        ts.windows(2).zip(hs.windows(2)).map(|(t, h)| wrap_angle(h[1] - h[0]).abs() / (t[1] - t[0])).fold(0.0, f64::max)
    }

    #[test]
    fn a_reversal_between_two_keys_turns_evenly_over_a_window_round_it() {
        // Keys every 20 ms; heading east, then west from 1.0 s on: a half
        // turn between two keys (157 rad/s).
        let ts: Vec<f64> = (0..=100).map(|k| k as f64 * 0.02).collect();
        let raw: Vec<f64> = ts.iter().map(|&t| if t < 1.0 - 1e-9 { 0.0 } else { std::f64::consts::PI }).collect();
        assert!(fastest(&ts, &raw) > 100.0);
        let mut hs = raw.clone();
        limit_turn_rate(&ts, &mut hs, MAX_HEADING_RATE);
        assert!(fastest(&ts, &hs) <= MAX_HEADING_RATE * (1.0 + 1e-6), "{}", fastest(&ts, &hs));
        // Both ends keep their headings; keys far from the turn are untouched.
        assert_eq!((hs[0], hs[100]), (raw[0], raw[100]));
        let changed: Vec<usize> = (0..=100).filter(|&k| hs[k] != raw[k]).collect();
        let (first, last) = (changed[0], changed[changed.len() - 1]);
        // Half a turn takes π / MAX_HEADING_RATE: the window is about that
        // long and centred on the reversal (between keys 49 and 50, 0.99 s).
        let (ta, tb) = (ts[first - 1], ts[last + 1]);
        let least = std::f64::consts::PI / MAX_HEADING_RATE;
        assert!((least..least + 0.06).contains(&(tb - ta)), "window {ta}..{tb} s");
        assert!((0.5 * (ta + tb) - 0.99).abs() <= 0.021, "window {ta}..{tb} s");
        // It turns one way throughout (no back and forth).
        let steps: Vec<f64> = hs.windows(2).map(|h| wrap_angle(h[1] - h[0])).collect();
        assert!(steps.iter().all(|&d| d >= -1e-12) || steps.iter().all(|&d| d <= 1e-12));
    }

    #[test]
    fn turns_within_the_rate_are_left_exactly_as_they_are() {
        // A steady turn at 5 rad/s, wrapping round ±π several times.
        let ts: Vec<f64> = (0..200).map(|k| k as f64 * 0.03).collect();
        let raw: Vec<f64> = ts.iter().map(|&t| wrap_angle(5.0 * t)).collect();
        let mut hs = raw.clone();
        limit_turn_rate(&ts, &mut hs, MAX_HEADING_RATE);
        assert_eq!(hs, raw);
    }

    #[test]
    fn a_reversal_at_the_path_start_keeps_the_start_heading_and_turns_after_it() {
        let ts: Vec<f64> = (0..50).map(|k| k as f64 * 0.02).collect();
        let raw: Vec<f64> = (0..50).map(|k| if k == 0 { 0.0 } else { 3.0 }).collect();
        let mut hs = raw.clone();
        limit_turn_rate(&ts, &mut hs, MAX_HEADING_RATE);
        assert_eq!(hs[0], 0.0);
        assert!(fastest(&ts, &hs) <= MAX_HEADING_RATE * (1.0 + 1e-6));
        // 3 rad at the largest rate: the heading reaches 3 no sooner than
        // that allows, and within a key of it.
        let reached = hs.iter().position(|&h| (h - 3.0).abs() < 1e-12).unwrap();
        let least = 3.0 / MAX_HEADING_RATE;
        assert!(ts[reached] >= least - 1e-9 && ts[reached] < least + 0.021, "{}", ts[reached]);
    }

    #[test]
    fn a_turn_too_fast_for_the_whole_path_is_left_as_it_is() {
        let ts = [0.0, 0.01, 0.02];
        let mut hs = [0.0, 0.0, 3.0];
        limit_turn_rate(&ts, &mut hs, MAX_HEADING_RATE);
        assert_eq!(hs, [0.0, 0.0, 3.0]);
    }
}
