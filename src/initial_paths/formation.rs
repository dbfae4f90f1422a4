//! Initial paths of a walking group in formation (issue 31; docs/design.md
//! "Walking groups").
//!
//! The group as a whole walks the path a single walker would from the
//! group's entry crossing to its exit crossing
//! ([`crate::matching::group_crossing`]: the members' mean position, time
//! and velocity, at the group's pace), routed round obstacles with room for
//! the formation's width. Each member walks from its own entry point to its
//! place in the formation, keeps that place from the *join* to the *split*
//! time, then walks to its own exit point at its own time — so every
//! member keeps its boundary conditions exactly (the mirror rule).
//!
//! Where the way is too narrow for them to walk side by side (the route
//! with room for the formation's width is blocked, and the places beside
//! the narrow one are not clear of the obstacles), members walk in line
//! ([`Shape::InLine`]), as pedestrians form a river in a narrow street.
//!
//! The places follow the observations: pairs nearly abreast (Moussaïd et
//! al. 2010, PLoS ONE 5(4) e10047; ETH/UCY pairs 0.68–0.88 m apart, at
//! 68–79° to the walking direction, `data/groups.json`), triads in a V with
//! the middle member behind (Zanlungo & Kanda 2013; measured triad angles
//! 51–66°), and groups of four or five as sub-groups of two or three one
//! behind the other (Zanlungo & Kanda 2013). Between its crossing and its
//! place a member behind walks faster and one ahead slower, and in
//! formation all share the group's speed: the catch-up rule of Yersin et
//! al. 2008 §5 (a member behind along the walking direction speeds up, the
//! members inside ±0.5 m take a common speed), here solved over the join
//! interval rather than step by step. Collision removal treats members as
//! any other walkers: they stay 2r apart.

use crate::geometry::Vec2;
use crate::matching::{group_crossing, periodic_offset};
use crate::model::{Crossing, Patch};
use crate::path::{ControlPoint, Path, PointKind, clamp_inside};

/// Distance `[m]` between neighbours abreast in a formation (at least
/// 2r + 0.15 m): the ETH/UCY pairs' median spacing is 0.68–0.88 m.
pub const FORMATION_SPACING: f64 = 0.75;

/// How far `[m]` one member of a pair walks ahead of the other: a pair at
/// [`FORMATION_SPACING`] meets the walking direction at 75°, inside the
/// measured medians (67–80°).
pub const PAIR_STAGGER: f64 = 0.2;

/// Distance between the rows of sub-groups in a group of four or five, in
/// spacings abreast (1.2 m at [`FORMATION_SPACING`]).
pub const ROW_GAP: f64 = 1.6;

/// Farthest `[m]` a member walks ahead of or behind its place because it
/// crosses before or after the group's mean time.
const LAG_REACH: f64 = 0.6;

/// Share of the group's time between its stubs spent reaching the
/// formation (and, at the end, leaving it for the exits).
const JOIN_SHARE: f64 = 0.25;

/// Shortest time `[s]` between two control points of a member's path.
const MIN_GAP: f64 = 0.1;

/// Fastest a member walks `[m/s]` to reach its place or its exit (above:
/// the group walks as singles).
const CATCH_UP_LIMIT: f64 = 2.2;

/// Spacing `[m]` between neighbours abreast for agents of radius `r`.
fn spacing(r: f64) -> f64 {
    FORMATION_SPACING.max(2.0 * r + 0.15)
}

/// Half the lateral extent `[m]` of the formation of `n` members: what
/// its route keeps from obstacles beyond a single walker's clearance.
pub(super) fn half_width(n: usize, r: f64) -> f64 {
    let across = match n {
        0 | 1 => 0,
        2 | 4 => 1,
        _ => 2,
    };
    across as f64 * spacing(r) / 2.0
}

/// Places in a formation of `n` members, in their order right to left:
/// (to the left `[m]`, behind `[m]`) of the group's path. Sub-groups of
/// four or five: the right-hand two (or three) in front.
pub fn places(n: usize, r: f64) -> Vec<(f64, f64)> {
    let w = spacing(r);
    let row = |k: usize, behind: f64| -> Vec<(f64, f64)> {
        match k {
            1 => vec![(0.0, behind)],
            2 => vec![(-w / 2.0, behind - PAIR_STAGGER / 2.0), (w / 2.0, behind + PAIR_STAGGER / 2.0)],
            // A V: the middle member behind, its neighbours at 60° to the
            // walking direction.
            _ => vec![(-w, behind), (0.0, behind + w / 3f64.sqrt()), (w, behind)],
        }
    };
    match n {
        0..=3 => row(n, 0.0),
        _ => {
            let front = n - 2;
            let mut out = row(front.min(3), 0.0);
            out.extend(row(n - front.min(3), ROW_GAP * w));
            out
        }
    }
}

/// How a group's members walk: side by side ([`places`]), or one behind
/// the other where the way is too narrow for that ([`in_line`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// Pairs abreast, triads in a V, sub-groups beyond three.
    Abreast,
    /// Single file, in the order the members cross in.
    InLine,
}

/// Distance `[m]` between members walking in line (at least 2r + 0.3 m).
pub const LINE_GAP: f64 = 0.9;

/// Places of `members` walking in line (see [`places`]): single file
/// centred on the group's path, [`LINE_GAP`] apart (or 2r + 0.3 m), the
/// member crossing first (its periodic time offset from the group's
/// `ce`) in front. O(n log n).
fn in_line(members: &[(Crossing, Crossing)], ce: &Crossing, pi: f64, r: f64) -> Vec<(f64, f64)> {
    let gap = LINE_GAP.max(2.0 * r + 0.3);
    let mut order: Vec<usize> = (0..members.len()).collect();
    order.sort_by(|&a, &b| {
        let lag = |k: usize| periodic_offset(members[k].0.t - ce.t, pi);
        lag(a).total_cmp(&lag(b)).then(a.cmp(&b))
    });
    let mut out = vec![(0.0, 0.0); members.len()];
    let middle = (members.len() as f64 - 1.0) / 2.0;
    for (rank, &k) in order.iter().enumerate() {
        out[k] = (0.0, (rank as f64 - middle) * gap);
    }
    out
}

/// The unit walking direction of `path` around time `t`: its displacement
/// over ±0.5 s, or, where it stands, over the nearest time before (else
/// after) it moved; `fallback` if it never moves.
fn heading(path: &Path, t: f64, fallback: Vec2) -> Vec2 {
    let (start, end) = (path.start(), path.end());
    let moved = |a: f64| {
        let d = path.position((a + 0.5).min(end)) - path.position((a - 0.5).max(start));
        (d.norm() > 0.05).then(|| d.normalize())
    };
    let mut k = 0.0;
    while t - k >= start - 0.5 {
        if let Some(d) = moved(t - k) {
            return d;
        }
        k += 0.5;
    }
    let mut k = 0.0;
    while t + k <= end + 0.5 {
        if let Some(d) = moved(t + k) {
            return d;
        }
        k += 0.5;
    }
    fallback
}

/// The crossings of a walking group whose `members` enter and leave at
/// the given crossings ([`group_crossing`], at the group's pace), and the
/// least time `[s]` its path needs between its stubs beyond a walker's:
/// room for every member to reach its place and leave it for its exit.
/// O(members).
pub(super) fn crossings(patch: &Patch, members: &[(Crossing, Crossing)]) -> (Crossing, Crossing, f64) {
    let pi = patch.header.period;
    let ins: Vec<Crossing> = members.iter().map(|m| m.0).collect();
    let outs: Vec<Crossing> = members.iter().map(|m| m.1).collect();
    let pace = crate::matching::members_pace(patch, &ins);
    let (ce, cx) = (group_crossing(&ins, pace, pi), group_crossing(&outs, pace, pi));
    let spread =
        |cs: &[Crossing], c: &Crossing| cs.iter().map(|m| periodic_offset(m.t - c.t, pi).abs()).fold(0.0, f64::max);
    let slack = spread(&ins, &ce) + spread(&outs, &cx) + 2.0 * patch.stub_depth() / ce.normal_speed().max(0.1);
    (ce, cx, 2.0 * slack)
}

/// The initial paths of a walking group's `members` (entry and exit
/// crossings, in their order right to left) around `group`, the path of
/// the group as a whole between its crossings `ce` and `cx`
/// ([`crossings`]); `clear` tells whether a polyline from a point through
/// control points keeps clear of the obstacles. `None` when the formation
/// does not fit (a member could not reach its place at
/// [`CATCH_UP_LIMIT`], too little time between the crossings, a place
/// inside an obstacle): the members then walk as singles.
/// O(members · control points).
pub(super) fn paths(
    patch: &Patch,
    members: &[(Crossing, Crossing)],
    (ce, cx): (&Crossing, &Crossing),
    group: &Path,
    clear: &dyn Fn(Vec2, &[ControlPoint]) -> bool,
    shape: Shape,
) -> Option<Vec<Path>> {
    let (pi, r, l) = (patch.header.period, patch.header.agent_radius, patch.header.size);
    let depth = patch.stub_depth();
    let n = group.points.len();
    let (t_a, t_b) = (group.points[1].t, group.points[n - 2].t);
    let (join, split) = (t_a + JOIN_SHARE * (t_b - t_a), t_b - JOIN_SHARE * (t_b - t_a));
    let mut times = vec![join];
    for c in &group.points[2..n - 2] {
        if c.t > times[times.len() - 1] + MIN_GAP && c.t < split - MIN_GAP {
            times.push(c.t);
        }
    }
    times.push(split);
    let fallback = {
        let d = cx.position - ce.position;
        if d.norm() > 0.1 { d.normalize() } else { crate::geometry::v2(ce.side.inward_normal()) }
    };
    let frames: Vec<(Vec2, Vec2)> = times.iter().map(|&t| (group.position(t), heading(group, t, fallback))).collect();
    let mut out = Vec::with_capacity(members.len());
    let pace = ce.preferred_speed;
    let spots = match shape {
        Shape::Abreast => places(members.len(), r),
        Shape::InLine => in_line(members, ce, pi, r),
    };
    for ((e, x), (left, behind)) in members.iter().zip(spots) {
        // A member crossing after the group's mean time walks that much
        // further behind (its mean lag at entry and exit, at the group's
        // pace, at most LAG_REACH): it keeps its own step phase (generated
        // members cross half a step apart) instead of hurrying to its place.
        let lag = (periodic_offset(e.t - ce.t, pi) + periodic_offset(x.t - cx.t, pi)) / 2.0;
        let lag = (pace * lag).clamp(-LAG_REACH, LAG_REACH);
        // A pair whose members cross apart in time is staggered by that
        // alone (else by PAIR_STAGGER).
        let behind = match shape {
            Shape::InLine => behind,
            Shape::Abreast if members.len() == 2 && lag.abs() > 0.05 => lag,
            Shape::Abreast => behind + lag,
        };
        // The member's times are the group's shifted by whole periods.
        let shift = e.t - periodic_offset(e.t - ce.t, pi) - ce.t;
        let t_out = group.end() + shift + periodic_offset(x.t - group.end(), pi);
        let (tau_e, tau_x) = (e.time_to_depth(depth), x.time_to_depth(depth));
        let mut points = vec![
            ControlPoint { p: e.position, t: e.t, kind: PointKind::Boundary },
            ControlPoint { p: e.position + e.velocity * tau_e, t: e.t + tau_e, kind: PointKind::Stub },
        ];
        for (&t, &(p, d)) in times.iter().zip(&frames) {
            let side = Vec2::new(-d.y, d.x);
            points.push(ControlPoint::free(clamp_inside(p + side * left - d * behind, r, l), t + shift));
        }
        points.push(ControlPoint { p: x.position - x.velocity * tau_x, t: t_out - tau_x, kind: PointKind::Stub });
        points.push(ControlPoint { p: x.position, t: t_out, kind: PointKind::Boundary });
        let fits = points.windows(2).all(|w| {
            let dt = w[1].t - w[0].t;
            dt >= MIN_GAP.min(tau_e.min(tau_x)) - 1e-9 && (w[1].p - w[0].p).norm() <= CATCH_UP_LIMIT * dt
        });
        if !fits || !clear(points[1].p, &points[2..points.len() - 1]) {
            return None;
        }
        out.push(Path { points, looped: false });
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_2r_apart_and_keep_the_observed_angles() {
        for r in [0.25, 0.3, 0.45] {
            for n in 2..=5 {
                let p = places(n, r);
                assert_eq!(p.len(), n);
                for i in 0..n {
                    for j in i + 1..n {
                        let d = ((p[i].0 - p[j].0).powi(2) + (p[i].1 - p[j].1).powi(2)).sqrt();
                        assert!(d >= 2.0 * r + 0.15 - 1e-9, "n {n}, r {r}: {i}–{j} {d}");
                    }
                }
                // Right to left within each row.
                assert!(p.windows(2).all(|w| w[0].0 < w[1].0 || w[1].1 > w[0].1 + 0.5), "{p:?}");
            }
        }
        let angle = |a: (f64, f64), b: (f64, f64)| (b.0 - a.0).atan2(b.1 - a.1).abs().to_degrees();
        let pair = places(2, 0.25);
        let a = angle(pair[0], pair[1]);
        assert!((67.0..=80.0).contains(&a), "pair angle {a}");
        let triad = places(3, 0.25);
        let a = angle(triad[0], triad[1]).min(180.0 - angle(triad[0], triad[1]));
        assert!((55.0..=65.0).contains(&a), "triad angle {a}");
    }
}
