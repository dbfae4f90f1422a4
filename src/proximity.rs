//! Periodic proximity queries between space-time paths, in the manner of
//! parry's `query` module: free functions over plain data that collision
//! removal, smoothing and metrics all use.
//!
//! Path `a` at time `t` is compared with path `b` at `t + kπ` for every
//! integer `k` at which both exist (periodic instances, docs/design.md
//! "Conventions"); for `a = b`, every `k ≠ 0`: the agent's own other
//! instances. Distances are closed-form per pair of linear segments (seed
//! paper eqs. 8–10). *Ghosts* stand for the neighbouring tiles' agents
//! crossing the seams (docs/design.md "Seams").

use crate::geometry::{Vec2, closer_than, segment_obstacle_distance};
use crate::model::{Crossing, Direction, Obstacle, Patch};
use crate::path::{Agent, ControlPoint, Path, PointKind};

/// Closest approach of two paths (or a path and a ghost).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Approach {
    /// Centre distance at the closest approach `[m]`.
    pub distance: f64,
    /// Time on the first path `[s]` (its own unwrapped time).
    pub t_a: f64,
    /// Time on the second path `[s]` (its own unwrapped time; `t_b − t_a` is
    /// a whole number of periods).
    pub t_b: f64,
    /// Position on the first path `[m]`.
    pub p_a: Vec2,
    /// Position on the second path `[m]`.
    pub p_b: Vec2,
}

/// Closest approach of `a(t)` and `b(t + shift)` over their common times, or
/// `None` if they never coexist. Sweeps both polylines once: O(n_a + n_b).
pub fn closest_with_shift(a: &Path, b: &Path, shift: f64) -> Option<Approach> {
    closest_with_shift_in(a, b, shift, f64::NEG_INFINITY, f64::INFINITY)
}

/// [`closest_with_shift`] restricted to the times `t ∈ [lo, hi]` of `a`
/// (`b` at `t + shift`): the closest approach within a time window, or `None`
/// if the paths do not coexist there. O(segments in the window).
pub fn closest_with_shift_in(a: &Path, b: &Path, shift: f64, lo: f64, hi: f64) -> Option<Approach> {
    let t0 = a.start().max(b.start() - shift).max(lo);
    let t1 = a.end().min(b.end() - shift).min(hi);
    if t1 < t0 {
        return None;
    }
    let mut i = a.segment_at(t0);
    let mut j = b.segment_at(t0 + shift);
    let mut t = t0;
    let (mut va, mut vb) = (a.segment_velocity(i), b.segment_velocity(j));
    // (squared distance, start, offset, positions and velocities there)
    let mut best: Option<(f64, f64, f64, Vec2, Vec2, Vec2, Vec2)> = None;
    loop {
        let ea = a.points[i + 1].t;
        let eb = b.points[j + 1].t - shift;
        let te = ea.min(eb).min(t1);
        if te >= t {
            let pa = a.points[i].p + va * (t - a.points[i].t);
            let pb = b.points[j].p + vb * (t + shift - b.points[j].t);
            // Eqs. 8–10 (as `geometry::closest_approach`), squared.
            let w = pa - pb;
            let dv = va - vb;
            let dv2 = dv.norm_squared();
            let dt = if dv2 > 0.0 { (-w.dot(&dv) / dv2).clamp(0.0, te - t) } else { 0.0 };
            let d2 = (w + dv * dt).norm_squared();
            if best.is_none_or(|bst| d2 < bst.0) {
                best = Some((d2, t, dt, pa, va, pb, vb));
            }
        }
        if te >= t1 {
            break;
        }
        if ea <= te {
            i += 1;
        }
        if eb <= te {
            j += 1;
        }
        if i + 1 >= a.points.len() || j + 1 >= b.points.len() {
            break;
        }
        if ea <= te {
            va = a.segment_velocity(i);
        }
        if eb <= te {
            vb = b.segment_velocity(j);
        }
        t = te;
    }
    best.map(|(d2, t, dt, pa, va, pb, vb)| Approach {
        distance: d2.sqrt(),
        t_a: t + dt,
        t_b: t + dt + shift,
        p_a: pa + va * dt,
        p_b: pb + vb * dt,
    })
}

/// The period shifts `k` at which `a(t)` and `b(t + kπ)` coexist.
pub fn shifts(a: &Path, b: &Path, period: f64) -> std::ops::RangeInclusive<i64> {
    let lo = ((b.start() - a.end()) / period).ceil() as i64;
    let hi = ((b.end() - a.start()) / period).floor() as i64;
    lo..=hi
}

/// Closest approach of two paths over every pair of their periodic
/// instances, `a(t)` against `b(t + kπ)`, leaving out the shift `skip` (0 for
/// an agent against its own other instances; for a ghost against the agent
/// crossing there, the shift at which they are one and the same).
pub fn closest_periodic(a: &Path, b: &Path, period: f64, skip: Option<i64>) -> Option<Approach> {
    let mut best: Option<Approach> = None;
    for k in shifts(a, b, period) {
        if Some(k) == skip {
            continue;
        }
        if let Some(ap) = closest_with_shift(a, b, k as f64 * period)
            && best.is_none_or(|bst| ap.distance < bst.distance)
        {
            best = Some(ap);
        }
    }
    best
}

/// Total time `[s]` during which `a` and `b` (all instance pairs but the
/// shift `skip`) are closer than `threshold`, and the number of instance
/// pairs (shifts) that ever are.
pub fn overlap(a: &Path, b: &Path, period: f64, skip: Option<i64>, threshold: f64) -> (usize, f64) {
    let mut count = 0;
    let mut total = 0.0;
    for k in shifts(a, b, period) {
        if Some(k) == skip {
            continue;
        }
        let shift = k as f64 * period;
        let t0 = a.start().max(b.start() - shift);
        let t1 = a.end().min(b.end() - shift);
        if t1 <= t0 {
            continue;
        }
        let mut time = 0.0;
        let mut i = a.segment_at(t0);
        let mut j = b.segment_at(t0 + shift);
        let mut t = t0;
        loop {
            let ea = a.points[i + 1].t;
            let eb = b.points[j + 1].t - shift;
            let te = ea.min(eb).min(t1);
            if te > t {
                let va = a.segment_velocity(i);
                let vb = b.segment_velocity(j);
                let pa = a.points[i].p + va * (t - a.points[i].t);
                let pb = b.points[j].p + vb * (t + shift - b.points[j].t);
                if let Some((s, e)) = closer_than(pa, va, pb, vb, te - t, threshold) {
                    time += e - s;
                }
            }
            if te >= t1 {
                break;
            }
            if ea <= te {
                i += 1;
            }
            if eb <= te {
                j += 1;
            }
            if i + 1 >= a.points.len() || j + 1 >= b.points.len() {
                break;
            }
            t = te;
        }
        if time > 0.0 {
            count += 1;
            total += time;
        }
    }
    (count, total)
}

/// Closest approach of a path to a static obstacle: `(t, position, signed
/// distance to the surface, push direction)`.
pub fn closest_to_obstacle(a: &Path, o: &Obstacle) -> (f64, Vec2, f64, Vec2) {
    let mut best = (a.start(), a.points[0].p, f64::INFINITY, Vec2::new(1.0, 0.0));
    for w in a.points.windows(2) {
        let (u, d, dir) = segment_obstacle_distance(w[0].p, w[1].p, o);
        if d < best.2 {
            best = (w[0].t + (w[1].t - w[0].t) * u, w[0].p + (w[1].p - w[0].p) * u, d, dir);
        }
    }
    best
}

/// A seam ghost: the neighbour tile's agent crossing a boundary point, as a
/// fixed straight path outside the patch (docs/design.md "Seams").
#[derive(Debug, Clone, PartialEq)]
pub struct Ghost {
    /// The boundary point it crosses.
    pub crossing: Crossing,
    /// The agent of this patch that crosses there, and the shift `k` at which
    /// `agent(t)` and `ghost(t + kπ)` are the same walker (skipped).
    pub owner: Option<(usize, i64)>,
    /// Its path: two fixed points.
    pub path: Path,
}

/// The ghosts of every boundary point of `patch`; `owner_of` gives the agent
/// crossing each point.
pub fn ghosts(patch: &Patch, agents: &[Agent]) -> Vec<Ghost> {
    let depth = 2.0 * patch.header.agent_radius;
    patch
        .crossings()
        .into_iter()
        .map(|c| {
            let ((p0, t0), (p1, t1)) = c.ghost(depth);
            let owner = agents.iter().enumerate().find_map(|(i, a)| {
                let crossing_time = match c.direction {
                    Direction::Entry => {
                        a.entry.filter(|e| e.side == c.side && e.index == c.index).map(|_| a.path.start())
                    }
                    Direction::Exit => a.exit.filter(|x| x.side == c.side && x.index == c.index).map(|_| a.path.end()),
                }?;
                // agent(T) is the ghost at c.t: T + kπ = c.t.
                Some((i, ((c.t - crossing_time) / patch.header.period).round() as i64))
            });
            let fixed = |p, t| ControlPoint { p, t, kind: PointKind::Boundary };
            Ghost { crossing: c, owner, path: Path { points: vec![fixed(p0, t0), fixed(p1, t1)], looped: false } }
        })
        .collect()
}

/// What an agent collides with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Other {
    /// Another agent (or, if the same index, another instance of itself).
    Agent(usize),
    /// A static obstacle.
    Obstacle(usize),
    /// The ghost of a boundary point (an agent of the neighbouring tile).
    Ghost(usize),
}

/// A remaining collision: who, when, where, how close.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Contact {
    /// The agent.
    pub agent: usize,
    /// What it collides with.
    pub other: Other,
    /// Play time of the closest approach `[s]`, in `[0, π)`.
    pub time: f64,
    /// Position of the agent then `[m]`.
    pub position: Vec2,
    /// Centre distance (to an obstacle: to its surface) `[m]`.
    pub distance: f64,
    /// Distance needed: 2r, or r to an obstacle `[m]`.
    pub required: f64,
    /// Unwrapped time on the agent's own path `[s]`.
    pub agent_time: f64,
    /// Unwrapped time on the other agent's own path `[s]` (equal to
    /// `agent_time` for fixed movers).
    pub other_time: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(points: &[(f64, f64, f64)]) -> Path {
        Path { points: points.iter().map(|&(x, y, t)| ControlPoint::free(Vec2::new(x, y), t)).collect(), looped: false }
    }

    /// Minimum distance by sampling every 1 ms over all shifts.
    fn sampled(a: &Path, b: &Path, period: f64, skip_zero: bool) -> f64 {
        let mut best = f64::INFINITY;
        for k in -5..=5 {
            if k == 0 && skip_zero {
                continue;
            }
            let shift = k as f64 * period;
            let (t0, t1) = (a.start().max(b.start() - shift), a.end().min(b.end() - shift));
            if t1 < t0 {
                continue;
            }
            let n = ((t1 - t0) / 0.001).ceil() as usize + 1;
            for s in 0..=n {
                let t = t0 + (t1 - t0) * s as f64 / n as f64;
                best = best.min((a.position(t) - b.position(t + shift)).norm());
            }
        }
        best
    }

    #[test]
    fn closest_periodic_matches_sampling() {
        let a = path(&[(0.0, 0.0, 1.0), (5.0, 3.0, 4.0), (9.0, 3.5, 8.0), (16.0, 4.0, 13.0)]);
        let b = path(&[(8.0, 0.0, 6.0), (7.0, 8.0, 9.0), (6.5, 16.0, 15.0)]);
        for (x, y, skip) in [(&a, &b, false), (&a, &a, true), (&b, &b, true), (&b, &a, false)] {
            let exact = closest_periodic(x, y, 10.0, skip.then_some(0)).map_or(f64::INFINITY, |ap| ap.distance);
            let s = sampled(x, y, 10.0, skip);
            if s.is_infinite() {
                assert!(exact.is_infinite(), "{exact} vs never together");
                continue;
            }
            assert!(exact <= s + 1e-9 && s - exact < 1e-2, "{exact} vs {s}");
        }
        // The approach's points are where the paths are at those times.
        let ap = closest_periodic(&a, &b, 10.0, None).unwrap();
        assert!((a.position(ap.t_a) - ap.p_a).norm() < 1e-9);
        assert!((b.position(ap.t_b) - ap.p_b).norm() < 1e-9);
        assert!(((ap.t_b - ap.t_a) / 10.0 - ((ap.t_b - ap.t_a) / 10.0).round()).abs() < 1e-9);
    }

    #[test]
    fn overlap_time_of_a_head_on_pass() {
        // Two agents 0.2 m apart laterally pass head-on at 1 m/s each: closer
        // than 0.6 m while |2(t − 5)|² + 0.04 < 0.36 ⇔ |t − 5| < √0.08.
        let a = path(&[(0.0, 0.0, 0.0), (10.0, 0.0, 10.0)]);
        let b = path(&[(10.0, 0.2, 0.0), (0.0, 0.2, 10.0)]);
        let (count, time) = overlap(&a, &b, 100.0, None, 0.6);
        assert_eq!(count, 1);
        assert!((time - 2.0 * 0.08f64.sqrt()).abs() < 1e-9, "{time}");
    }
}
