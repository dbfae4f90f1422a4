//! The initial route of the project's solvers between two crossing stubs: a
//! walker goes the shortest way at its own pace, slows down or waits rather
//! than detours, and changes speed and direction gradually.
//!
//! - **Where**: through the waypoints of the route (the stub ends, the
//!   same-side point of seed paper §3.3, the corners of a way round
//!   obstacles), as a C¹ chain of cubic Bézier segments that leaves and
//!   meets the stubs in their own direction (tangents along the chord at
//!   inner waypoints, arms a third of each segment).
//! - **When**: along that curve with a speed that starts at the entry stub's
//!   speed, relaxes with a smoothstep over [`RAMP_TIME`] to a cruise speed,
//!   and relaxes to the exit stub's speed at the end; the cruise speed is
//!   what fills the time available. A walker whose cruise would be slower
//!   than its stride speed ([`crate::pace::stride_speed`]) walks at that
//!   speed instead and stands still for the time left, in one stop (people
//!   stop rather than crawl; they do not walk in circles). Each place it
//!   may stop is a [`Plan`]; the caller picks one.
//!
//! Cost: O(route length / 5 cm + duration / 50 ms) per plan.

use crate::geometry::Vec2;
use crate::path::{ControlPoint, clamp_inside};
use crowdpatch_runtime::format::wrap_angle;

/// Time `[s]` over which a walker changes speed at either end of its walk
/// and before and after a wait: with a speed change of about 1 m/s, an
/// acceleration of about 1 m/s², within what pedestrians do when starting
/// and stopping (about 0.5–1.5 m/s²).
pub const RAMP_TIME: f64 = 1.0;

/// A control point is kept where the heading turned this much since the
/// last kept one `[rad]`.
const KEEP_TURN: f64 = 0.1;
/// … or the speed changed this much `[m/s]` …
const KEEP_SPEED: f64 = 0.1;
/// … or this much time passed `[s]`.
const KEEP_TIME: f64 = 1.5;

/// A C¹ curve through waypoints, sampled densely by arc length.
struct Curve {
    /// Points every ≤ 5 cm along the curve.
    points: Vec<Vec2>,
    /// Arc length at each point `[m]`.
    arc: Vec<f64>,
}

impl Curve {
    /// The Bézier chain through `w` (at least two points) with end
    /// directions `start` and `end` (unit or zero).
    fn through(w: &[Vec2], start: Vec2, end: Vec2) -> Curve {
        let n = w.len();
        let dir = |i: usize| -> Vec2 {
            let d = if i == 0 {
                start
            } else if i == n - 1 {
                end
            } else {
                w[i + 1] - w[i - 1]
            };
            d.try_normalize(1e-12).unwrap_or_else(Vec2::zeros)
        };
        let mut points = vec![w[0]];
        for i in 0..n - 1 {
            let len = (w[i + 1] - w[i]).norm();
            let (p0, p3) = (w[i], w[i + 1]);
            let p1 = p0 + dir(i) * (len / 3.0);
            let p2 = p3 - dir(i + 1) * (len / 3.0);
            let steps = ((len / 0.05).ceil() as usize).max(1);
            for k in 1..=steps {
                let s = k as f64 / steps as f64;
                let u = 1.0 - s;
                points.push(p0 * (u * u * u) + p1 * (3.0 * u * u * s) + p2 * (3.0 * u * s * s) + p3 * (s * s * s));
            }
        }
        let mut arc = vec![0.0];
        for k in 1..points.len() {
            arc.push(arc[k - 1] + (points[k] - points[k - 1]).norm());
        }
        Curve { points, arc }
    }

    fn length(&self) -> f64 {
        self.arc[self.arc.len() - 1]
    }

    /// The point at arc length `s` `[m]` (clamped).
    fn at(&self, s: f64) -> Vec2 {
        let s = s.clamp(0.0, self.length());
        let k = self.arc.partition_point(|&a| a < s).clamp(1, self.arc.len() - 1);
        let (a, b) = (self.arc[k - 1], self.arc[k]);
        let u = if b > a { (s - a) / (b - a) } else { 0.0 };
        self.points[k - 1] + (self.points[k] - self.points[k - 1]) * u
    }
}

fn smoothstep(x: f64) -> f64 {
    let x = x.clamp(0.0, 1.0);
    x * x * (3.0 - 2.0 * x)
}

/// A speed profile over time: piecewise pieces `(duration, from, to)`, each
/// a smoothstep from one speed to another (constant when equal).
struct Profile {
    pieces: Vec<(f64, f64, f64)>,
}

impl Profile {
    /// Distance walked `[m]` after time `t` `[s]` (a smoothstep piece of
    /// duration d from a to b walks d·(a + b)/2; exactly integrated).
    fn distance(&self, t: f64) -> f64 {
        let mut s = 0.0;
        let mut t0 = 0.0;
        for &(d, a, b) in &self.pieces {
            if t <= t0 + d {
                let x = ((t - t0) / d.max(1e-12)).clamp(0.0, 1.0);
                // ∫₀ˣ smoothstep = x³ − x⁴/2.
                return s + d * (a * x + (b - a) * (x * x * x - 0.5 * x * x * x * x));
            }
            s += d * (a + b) / 2.0;
            t0 += d;
        }
        s
    }

    fn speed(&self, t: f64) -> f64 {
        let mut t0 = 0.0;
        for &(d, a, b) in &self.pieces {
            if t <= t0 + d {
                return a + (b - a) * smoothstep((t - t0) / d.max(1e-12));
            }
            t0 += d;
        }
        self.pieces.last().map_or(0.0, |p| p.2)
    }
}

/// The speed profile of a walk of `length` `[m]` in `time` `[s]` from stub
/// speed `a` to stub speed `b` `[m/s]`, cruising no slower than `slowest`
/// (else with a wait after fraction `wait_at ∈ [0, 1]` of the cruise);
/// `None` when the walk is too short for the ramps.
fn profile(length: f64, time: f64, a: f64, b: f64, slowest: f64, wait_at: f64) -> Option<Profile> {
    let tau = RAMP_TIME.min(time / 4.0);
    let cruise = (length - tau * (a + b) / 2.0) / (time - tau);
    if !cruise.is_finite() || cruise <= 0.0 {
        return None;
    }
    if cruise >= slowest {
        return Some(Profile { pieces: vec![(tau, a, cruise), (time - 2.0 * tau, cruise, cruise), (tau, cruise, b)] });
    }
    // Walk at `slowest`, stopping after `wait_at` of the cruise: ramps of
    // tau at both ends and into and out of the stop.
    let u = slowest;
    let ramps = tau * (a + u) / 2.0 + tau * u + tau * (u + b) / 2.0;
    let cruise_time = (length - ramps) / u;
    let wait = time - 4.0 * tau - cruise_time;
    if cruise_time < 0.0 || wait < 0.0 {
        return Some(Profile { pieces: vec![(tau, a, cruise), (time - 2.0 * tau, cruise, cruise), (tau, cruise, b)] });
    }
    let before = cruise_time * wait_at.clamp(0.0, 1.0);
    Some(Profile {
        pieces: vec![
            (tau, a, u),
            (before, u, u),
            (tau, u, 0.0),
            (wait, 0.0, 0.0),
            (tau, 0.0, u),
            (cruise_time - before, u, u),
            (tau, u, b),
        ],
    })
}

/// Where along its cruise a waiting walker may stop: from 10 % to 90 % of
/// the cruise, every 5 %, nearest half-way first. The first choice is the
/// one with the most clearance from obstacles (up to [`WAIT_CLEARANCE`];
/// people wait out of the way, not at the edge of a fountain that everyone
/// walks round), the nearest half-way among equals; the initial paths then
/// move a stop out of the other walkers' way (`place_stops`).
const WAIT_CANDIDATES: [f64; 17] =
    [0.5, 0.45, 0.55, 0.4, 0.6, 0.35, 0.65, 0.3, 0.7, 0.25, 0.75, 0.2, 0.8, 0.15, 0.85, 0.1, 0.9];

/// Clearance from obstacles `[m]` beyond which a place to wait is as good
/// as any other.
pub const WAIT_CLEARANCE: f64 = 2.0;

impl Profile {
    /// Time `[s]` from the start at which the walker stands still, if it
    /// waits.
    fn wait_start(&self) -> Option<f64> {
        let mut t = 0.0;
        for &(d, a, b) in &self.pieces {
            if a == 0.0 && b == 0.0 && d > 0.0 {
                return Some(t);
            }
            t += d;
        }
        None
    }
}

/// One way of walking a route: the free control points, and where the
/// walker stands if it waits.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The free control points after the entry stub's end, up to the exit
    /// stub's start (inclusive).
    pub points: Vec<ControlPoint>,
    /// Where the walker stands `[m]`, if it waits.
    pub stop: Option<Vec2>,
    /// Clearance `[m]` from obstacles of the place it stands, capped at
    /// [`WAIT_CLEARANCE`] (infinite without a wait).
    pub room: f64,
}

/// The ways of walking from stub end `(q_e, v_e, t_a)` to stub end
/// `(q_x, v_x, t_b)` (positions `[m]`, stub velocities `[m/s]`, times `[s]`)
/// through the inner waypoints `via`, kept inside `[r, L − r]²`
/// (`bounds = (r, L)`). `slowest` `[m/s]` is the slowest cruise before the
/// walker waits instead; a walker that waits has one plan per place it may
/// stand ([`WAIT_CANDIDATES`]), the best first: most clearance
/// `clearance(p)` from obstacles (`[m]`, up to [`WAIT_CLEARANCE`]), the
/// nearest half-way among equals. `None` when the time is too short for
/// the speed ramps (the caller then walks the route at constant speed).
pub fn paced_plans(
    (q_e, v_e, t_a): (Vec2, Vec2, f64),
    (q_x, v_x, t_b): (Vec2, Vec2, f64),
    via: &[Vec2],
    slowest: f64,
    (r, l): (f64, f64),
    clearance: &dyn Fn(Vec2) -> f64,
) -> Option<Vec<Plan>> {
    let mut w = vec![q_e];
    w.extend_from_slice(via);
    w.push(q_x);
    w.dedup_by(|a, b| (*a - *b).norm() < 1e-9);
    if w.len() < 2 {
        return None;
    }
    let curve = Curve::through(&w, v_e, v_x);
    let time = t_b - t_a;
    let (a, b) = (v_e.norm(), v_x.norm());
    let first = profile(curve.length(), time, a, b, slowest, 0.5)?;
    if first.wait_start().is_none() {
        let points = sample(&curve, &first, (q_e, v_e, t_a), (q_x, t_b), (r, l));
        return Some(vec![Plan { points, stop: None, room: f64::INFINITY }]);
    }
    let mut plans: Vec<Plan> = Vec::new();
    for at in WAIT_CANDIDATES {
        let Some(p) = profile(curve.length(), time, a, b, slowest, at) else { continue };
        let stop = curve.at(p.distance(p.wait_start().unwrap_or(0.0)) * curve.length() / p.distance(time).max(1e-12));
        let room = clearance(stop).min(WAIT_CLEARANCE);
        let points = sample(&curve, &p, (q_e, v_e, t_a), (q_x, t_b), (r, l));
        plans.push(Plan { points, stop: Some(stop), room });
    }
    // The one with the most room first (strictly more only: the candidates
    // are in order of distance from half-way).
    let mut best = 0;
    for k in 1..plans.len() {
        if plans[k].room > plans[best].room + 1e-3 {
            best = k;
        }
    }
    if !plans.is_empty() {
        let chosen = plans.remove(best);
        plans.insert(0, chosen);
    }
    (!plans.is_empty()).then_some(plans)
}

/// The profile `prof` along `curve` as control points after `q_e` (at
/// `t_a`) up to `q_x` at `t_b`: kept where the heading or the speed
/// changed or time passed ([`KEEP_TURN`], [`KEEP_SPEED`], [`KEEP_TIME`]).
fn sample(
    curve: &Curve,
    prof: &Profile,
    (q_e, v_e, t_a): (Vec2, Vec2, f64),
    (q_x, t_b): (Vec2, f64),
    (r, l): (f64, f64),
) -> Vec<ControlPoint> {
    let time = t_b - t_a;
    let scale = curve.length() / prof.distance(time).max(1e-12);
    let mut out: Vec<ControlPoint> = Vec::new();
    let (mut last_p, mut last_t) = (q_e, t_a);
    let mut last_heading: Option<f64> = None;
    let mut last_speed = v_e.norm();
    let steps = ((time / 0.05).ceil() as usize).max(1);
    for k in 1..=steps {
        let tt = if k == steps { time } else { time * k as f64 / steps as f64 };
        let p = clamp_inside(curve.at(prof.distance(tt) * scale), r, l);
        let speed = prof.speed(tt);
        let moved = (p - last_p).norm() > 1e-6;
        let heading = moved.then(|| (p - last_p).y.atan2((p - last_p).x));
        let turned = matches!((last_heading, heading), (Some(a), Some(b)) if wrap_angle(b - a).abs() >= KEEP_TURN);
        let changed = (speed - last_speed).abs() >= KEEP_SPEED;
        let t = t_a + tt;
        if (k == steps || turned || changed || t - last_t >= KEEP_TIME) && t - last_t > 1e-3 {
            out.push(ControlPoint::free(p, t));
            if heading.is_some() {
                last_heading = heading;
            }
            last_speed = speed;
            (last_p, last_t) = (p, t);
        }
    }
    let n = out.len();
    out[n - 1] = ControlPoint::free(q_x, t_b);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first plan's points.
    fn paced_route(
        entry: (Vec2, Vec2, f64),
        exit: (Vec2, Vec2, f64),
        via: &[Vec2],
        slowest: f64,
        bounds: (f64, f64),
        clearance: &dyn Fn(Vec2) -> f64,
    ) -> Option<Vec<ControlPoint>> {
        paced_plans(entry, exit, via, slowest, bounds, clearance).map(|mut p| p.swap_remove(0).points)
    }

    fn speeds(start: (Vec2, f64), pts: &[ControlPoint]) -> Vec<f64> {
        let mut prev = start;
        pts.iter()
            .map(|c| {
                let v = (c.p - prev.0).norm() / (c.t - prev.1);
                prev = (c.p, c.t);
                v
            })
            .collect()
    }

    #[test]
    fn profiles_walk_the_whole_length_in_the_whole_time() {
        for (len, time, a, b, slowest) in
            [(12.0, 10.0, 1.3, 1.3, 0.6), (12.0, 30.0, 1.3, 1.0, 0.6), (3.0, 4.0, 1.5, 0.4, 0.6)]
        {
            let p = profile(len, time, a, b, slowest, 0.5).unwrap();
            let total: f64 = p.pieces.iter().map(|x| x.0).sum();
            assert!((total - time).abs() < 1e-9);
            assert!((p.distance(time) - len).abs() < 1e-9, "{} vs {len}", p.distance(time));
            assert!((p.speed(0.0) - a).abs() < 1e-12 && (p.speed(time) - b).abs() < 1e-12);
            // The integral is the one of the speed.
            let n = 20000;
            let numeric: f64 = (0..n).map(|k| p.speed((k as f64 + 0.5) * time / n as f64) * time / n as f64).sum();
            assert!((numeric - len).abs() < 1e-3, "{numeric}");
        }
    }

    #[test]
    fn a_walker_with_time_to_spare_walks_straight_and_waits() {
        let (q_e, q_x) = (Vec2::new(1.0, 0.3), Vec2::new(1.0, 15.7));
        let v = Vec2::new(0.0, 1.3);
        let pts = paced_route((q_e, v, 0.0), (q_x, v, 40.0), &[], 0.7, (0.3, 16.0), &|_| f64::INFINITY).unwrap();
        // Straight: every point on x = 1.
        assert!(pts.iter().all(|c| (c.p.x - 1.0).abs() < 1e-9));
        // Never faster than the stub speed, and a wait (zero speed) exists.
        let s = speeds((q_e, 0.0), &pts);
        assert!(s.iter().all(|&v| v <= 1.3 + 1e-6), "{s:?}");
        assert!(s.iter().any(|&v| v < 1e-6), "no wait: {s:?}");
        assert_eq!(pts.last().unwrap().t, 40.0);
    }

    #[test]
    fn a_walker_waits_out_of_the_way_of_an_obstacle() {
        // A fountain of radius 1 m beside the half-way point (8, 8): the
        // wait moves along the walk to where it has 2 m of room.
        let (q_e, q_x) = (Vec2::new(0.3, 8.0), Vec2::new(15.7, 8.0));
        let v = Vec2::new(1.3, 0.0);
        let fountain = |p: Vec2| (p - Vec2::new(8.0, 9.5)).norm() - 1.0;
        let pts = paced_route((q_e, v, 0.0), (q_x, v, 40.0), &[], 0.7, (0.3, 16.0), &fountain).unwrap();
        let s = speeds((q_e, 0.0), &pts);
        let mut prev = q_e;
        let mut waits = Vec::new();
        for (c, v) in pts.iter().zip(&s) {
            if *v < 1e-6 {
                waits.push(prev);
            }
            prev = c.p;
        }
        assert!(!waits.is_empty(), "no wait: {s:?}");
        for w in waits {
            assert!(fountain(w) >= WAIT_CLEARANCE - 1e-9, "waits at {w:?}, {} m from the fountain", fountain(w));
        }
        // Still the whole walk in the whole time.
        assert_eq!(pts.last().unwrap().t, 40.0);
        assert_eq!(pts.last().unwrap().p, q_x);
    }

    #[test]
    fn turning_between_stubs_is_gradual() {
        // Enter going north, leave going east: a quarter turn spread over the walk.
        let q_e = Vec2::new(3.0, 0.3);
        let q_x = Vec2::new(15.7, 12.0);
        let open = |_: Vec2| f64::INFINITY;
        let pts = paced_route(
            (q_e, Vec2::new(0.0, 1.3), 0.0),
            (q_x, Vec2::new(1.3, 0.0), 14.0),
            &[],
            0.7,
            (0.3, 16.0),
            &open,
        )
        .unwrap();
        let mut prev = (q_e, 0.0, std::f64::consts::FRAC_PI_2);
        for c in &pts {
            let d = c.p - prev.0;
            let h = d.y.atan2(d.x);
            // No segment turns by more than a fifth of a right angle at once.
            assert!(wrap_angle(h - prev.2).abs() < 0.35, "turn of {} at t = {}", wrap_angle(h - prev.2), c.t);
            prev = (c.p, c.t, h);
        }
    }
}
