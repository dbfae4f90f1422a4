//! The space-time paths every stage of the bake shares: [`Path`], a polyline
//! of [`ControlPoint`]s `(p, t)` with strictly increasing, unwrapped times
//! (docs/design.md "Conventions"), and the [`Agent`] walking it.
//!
//! An exogenous agent's path starts at its entry point and ends at its exit
//! point; both are *boundary* control points, never moved. Next to each lies
//! a fixed *crossing stub*: the straight walk with the boundary velocity down
//! to the stub depth (r by default), which makes the path's velocity at the
//! seam exactly the pattern's and keeps neighbouring tiles' agents apart (a
//! ghost outside, a stub inside). Everything between the stubs is free to
//! move, inside the patch shrunk by r. An endogenous agent's path is a loop:
//! its last control point is its first one a period later, and the two move
//! together.

use crate::geometry::Vec2;
use crate::model::Crossing;
use crowdpatch_runtime::format::{AgentKind, wrap_angle};

/// Role of a control point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointKind {
    /// An entry or exit point: fixed.
    Boundary,
    /// The inner end of a crossing stub: fixed.
    Stub,
    /// A movable control point.
    Free,
    /// A point of a standing agent (an endogenous agent with one waypoint):
    /// fixed. It holds its place for the whole period and walkers go round
    /// it, as round a post; a sitter shoved back and forth by passers-by
    /// would shuffle a turn on the spot at each push.
    Held,
}

/// A control point of a path: position `[m]` at unwrapped time `[s]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ControlPoint {
    /// Position `[m]`, patch frame.
    pub p: Vec2,
    /// Unwrapped time `[s]`.
    pub t: f64,
    /// Whether and why it is fixed.
    pub kind: PointKind,
}

impl ControlPoint {
    /// A movable control point.
    pub fn free(p: Vec2, t: f64) -> ControlPoint {
        ControlPoint { p, t, kind: PointKind::Free }
    }

    /// Whether the solver may move it.
    pub fn is_free(&self) -> bool {
        self.kind == PointKind::Free
    }
}

/// A space-time polyline with strictly increasing times.
#[derive(Debug, Clone, PartialEq)]
pub struct Path {
    /// Control points, at least two, times strictly increasing.
    pub points: Vec<ControlPoint>,
    /// An endogenous loop: the last point is the first one a period later and
    /// moves with it.
    pub looped: bool,
}

impl Path {
    /// First time `[s]`.
    pub fn start(&self) -> f64 {
        self.points[0].t
    }

    /// Last time `[s]`.
    pub fn end(&self) -> f64 {
        self.points[self.points.len() - 1].t
    }

    /// Index `i` of the segment `[points[i], points[i+1]]` holding time `t`
    /// (clamped to the path's segments).
    pub fn segment_at(&self, t: f64) -> usize {
        let i = self.points.partition_point(|c| c.t <= t);
        i.saturating_sub(1).min(self.points.len() - 2)
    }

    /// Position `[m]` at time `t` `[s]`, linear between control points;
    /// clamped to the ends outside `[start, end]`.
    pub fn position(&self, t: f64) -> Vec2 {
        let i = self.segment_at(t);
        let (a, b) = (self.points[i], self.points[i + 1]);
        let u = ((t - a.t) / (b.t - a.t)).clamp(0.0, 1.0);
        a.p + (b.p - a.p) * u
    }

    /// Velocity `[m/s]` of segment `i`.
    pub fn segment_velocity(&self, i: usize) -> Vec2 {
        let (a, b) = (self.points[i], self.points[i + 1]);
        (b.p - a.p) / (b.t - a.t)
    }

    /// Velocity `[m/s]` at time `t`: the mean of the two segments meeting
    /// there when `t` is a control point's time (within 1 ns), else the
    /// velocity of the segment holding `t`. O(log n).
    pub fn velocity_at(&self, t: f64) -> Vec2 {
        let i = self.segment_at(t);
        let v = self.segment_velocity(i);
        if i > 0 && (self.points[i].t - t).abs() < 1e-9 { (v + self.segment_velocity(i - 1)) / 2.0 } else { v }
    }

    /// Length of the path `[m]`.
    pub fn length(&self) -> f64 {
        self.points.windows(2).map(|w| (w[1].p - w[0].p).norm()).sum()
    }

    /// Mean speed `[m/s]`: length over duration.
    pub fn mean_speed(&self) -> f64 {
        self.length() / (self.end() - self.start())
    }

    /// Largest speed over a segment `[m/s]`; 0 for a path that spans no time
    /// (the maximum of `crate::metrics::speed_stats` for this path alone).
    /// O(control points).
    pub fn max_speed(&self) -> f64 {
        let total: f64 = self.points.windows(2).map(|w| w[1].t - w[0].t).sum();
        if total <= 0.0 {
            return 0.0;
        }
        self.points.windows(2).map(|w| (w[1].p - w[0].p).norm() / (w[1].t - w[0].t)).fold(0.0, f64::max)
    }

    /// The time range `[s]` in which control points may be inserted or moved:
    /// between the fixed stubs (the whole path for a loop).
    pub fn free_range(&self) -> (f64, f64) {
        if self.looped {
            return (self.start(), self.end());
        }
        let lo = self.points.iter().find(|c| c.kind == PointKind::Stub).map_or(self.start(), |c| c.t);
        let hi = self.points.iter().rev().find(|c| c.kind == PointKind::Stub).map_or(self.end(), |c| c.t);
        (lo, hi)
    }

    /// Index of a movable control point at time `t` (clamped into the free
    /// range): an existing free point within `merge` `[s]` of `t` if there is
    /// one, else a new one inserted on the path (the path's shape is
    /// unchanged). `None` when no movable point can exist there (the free range
    /// is empty or `t` falls on a fixed point with no room beside it).
    pub fn movable_point_at(&mut self, t: f64, merge: f64) -> Option<usize> {
        // Keep a minimum spacing in time from neighbours.
        const MIN_DT: f64 = 1e-4;
        if self.holds() {
            return None;
        }
        let (lo, hi) = self.free_range();
        if hi - lo <= 4.0 * MIN_DT {
            return None;
        }
        let t = t.clamp(lo + 2.0 * MIN_DT, hi - 2.0 * MIN_DT);
        // Nearest existing free point.
        let mut best: Option<(usize, f64)> = None;
        for (i, c) in self.points.iter().enumerate() {
            if self.is_movable(i) {
                let d = (c.t - t).abs();
                if d <= merge && best.is_none_or(|(_, bd)| d < bd) {
                    best = Some((i, d));
                }
            }
        }
        if let Some((i, _)) = best {
            return Some(i);
        }
        let i = self.segment_at(t);
        let (a, b) = (self.points[i], self.points[i + 1]);
        if t - a.t < MIN_DT || b.t - t < MIN_DT {
            let j = if t - a.t < b.t - t { i } else { i + 1 };
            let c = self.points[j];
            let linked = self.looped && !self.holds() && (j == 0 || j == self.points.len() - 1);
            return (c.is_free() || linked).then_some(j);
        }
        let p = self.position(t);
        self.points.insert(i + 1, ControlPoint::free(p, t));
        Some(i + 1)
    }

    /// Moves control point `i` to `p`; the two ends of a loop move together.
    pub fn set_position(&mut self, i: usize, p: Vec2) {
        let last = self.points.len() - 1;
        self.points[i].p = p;
        if self.looped && (i == 0 || i == last) {
            self.points[0].p = p;
            self.points[last].p = p;
        }
    }

    /// Whether control point `i` may be moved.
    pub fn is_movable(&self, i: usize) -> bool {
        self.points[i].is_free() || (self.looped && !self.holds() && (i == 0 || i == self.points.len() - 1))
    }

    /// Frees a held path's points ([`PointKind::Held`] → free): the
    /// standing agent may then step aside.
    pub fn release(&mut self) {
        for c in &mut self.points {
            if c.kind == PointKind::Held {
                c.kind = PointKind::Free;
            }
        }
    }

    /// Whether the path is a standing agent's, held in place
    /// ([`PointKind::Held`]): no point of it may move and none is added.
    /// A held path's points are all held (none is ever added to it), so the
    /// first tells: O(1), as [`Path::is_movable`] asks it for every point.
    pub fn holds(&self) -> bool {
        self.points.first().is_some_and(|c| c.kind == PointKind::Held)
    }

    /// Checks the invariants: at least two points, finite values, strictly
    /// increasing times, loop ends equal. Returns a description of the first
    /// violation.
    pub fn check(&self) -> Result<(), String> {
        if self.points.len() < 2 {
            return Err(format!("{} control points; a path needs 2", self.points.len()));
        }
        for (i, w) in self.points.windows(2).enumerate() {
            if w[1].t.partial_cmp(&w[0].t) != Some(std::cmp::Ordering::Greater) {
                return Err(format!("time does not increase at control point {}: {} then {}", i + 1, w[0].t, w[1].t));
            }
        }
        if self.points.iter().any(|c| !(c.p.x.is_finite() && c.p.y.is_finite() && c.t.is_finite())) {
            return Err("a control point is not finite".into());
        }
        if self.looped && self.points[0].p != self.points[self.points.len() - 1].p {
            return Err("loop ends differ".into());
        }
        Ok(())
    }
}

/// An agent of a patch under construction: its kind and path.
#[derive(Debug, Clone, PartialEq)]
pub struct Agent {
    /// Exogenous (with its boundary points) or endogenous.
    pub kind: AgentKind,
    /// The path.
    pub path: Path,
    /// Entry point, for an exogenous agent.
    pub entry: Option<Crossing>,
    /// Exit point, for an exogenous agent.
    pub exit: Option<Crossing>,
    /// The walker's preferred walking speed `[m/s]`: what matching,
    /// initial paths and collision removal aim at.
    pub preferred_speed: f64,
}

/// One heading change of a path, between the midpoints of two consecutive
/// moving segments.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Turn {
    /// Heading change rate `[rad/s]`: the change of direction over the time
    /// between the two segments' midpoints.
    pub rate: f64,
    /// Time between the two midpoints `[s]` (the sample's weight).
    pub span: f64,
    /// Start time of the second segment `[s]`: the control point where the
    /// path turns.
    pub at: f64,
    /// Mean speed of the two segments `[m/s]`: `rate × speed` is the
    /// lateral acceleration of the turn `[m/s²]`
    /// ([`crate::pace::TURN_ACCELERATION`] bounds it).
    pub speed: f64,
}

/// Slowest segment speed `[m/s]` that still defines a heading for
/// [`Path::turns`]; slower segments (standing, shuffling) are skipped.
pub const TURN_MIN_SPEED: f64 = 0.05;

impl Path {
    /// The heading changes of the path at its control points (seed paper §4
    /// reports turning as heading change over time): for each pair of
    /// consecutive moving segments (faster than [`TURN_MIN_SPEED`] and longer
    /// than 1 µm), the turn between them over the time between their
    /// midpoints. Standing segments carry the last heading. O(control points).
    pub fn turns(&self) -> Vec<Turn> {
        let mut out = Vec::new();
        let mut prev: Option<(f64, f64, f64)> = None; // (heading, mid-time, speed)
        for w in self.points.windows(2) {
            let d = w[1].p - w[0].p;
            let dt = w[1].t - w[0].t;
            if d.norm() < 1e-6 || d.norm() / dt < TURN_MIN_SPEED {
                continue;
            }
            let h = d.y.atan2(d.x);
            let mid = (w[0].t + w[1].t) / 2.0;
            let speed = d.norm() / dt;
            if let Some((ph, pm, pv)) = prev {
                let span = mid - pm;
                if span > 0.0 {
                    out.push(Turn {
                        rate: wrap_angle(h - ph).abs() / span,
                        span,
                        at: w[0].t,
                        speed: (pv + speed) / 2.0,
                    });
                }
            }
            prev = Some((h, mid, speed));
        }
        out
    }
}

/// Clamps a point into the patch shrunk by `r`: `[r, L − r]²`.
pub fn clamp_inside(p: Vec2, r: f64, l: f64) -> Vec2 {
    Vec2::new(p.x.clamp(r, l - r), p.y.clamp(r, l - r))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserted_points_do_not_change_the_path() {
        let mut path = Path {
            points: vec![
                ControlPoint { p: Vec2::new(0.0, 0.0), t: 0.0, kind: PointKind::Boundary },
                ControlPoint { p: Vec2::new(1.0, 0.0), t: 1.0, kind: PointKind::Stub },
                ControlPoint { p: Vec2::new(5.0, 4.0), t: 5.0, kind: PointKind::Stub },
                ControlPoint { p: Vec2::new(6.0, 4.0), t: 6.0, kind: PointKind::Boundary },
            ],
            looped: false,
        };
        let before = path.position(3.3);
        let i = path.movable_point_at(3.0, 0.1).unwrap();
        assert!(path.is_movable(i));
        assert!((path.position(3.3) - before).norm() < 1e-12);
        // Asking inside a stub gives a point at the stub's free end instead.
        let j = path.movable_point_at(0.5, 0.0).unwrap();
        assert!(path.points[j].t > 1.0 && path.points[j].t < 1.01);
        path.check().unwrap();
    }

    #[test]
    fn turns_measure_heading_change_between_segment_midpoints() {
        // 2 s east at 1 m/s, then north: a quarter turn between midpoints 1 s and 2.75 s.
        let path = Path {
            points: vec![
                ControlPoint::free(Vec2::new(0.5, 0.5), 0.0),
                ControlPoint::free(Vec2::new(2.5, 0.5), 2.0),
                ControlPoint::free(Vec2::new(2.5, 3.5), 3.5),
                ControlPoint::free(Vec2::new(2.5, 3.5), 4.5),
            ],
            looped: false,
        };
        let turns = path.turns();
        assert_eq!(turns.len(), 1, "the standing segment is skipped");
        assert!((turns[0].rate - std::f64::consts::FRAC_PI_2 / 1.75).abs() < 1e-12);
        assert_eq!((turns[0].span, turns[0].at), (1.75, 2.0));
    }
}
