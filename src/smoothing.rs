//! Stage 4: smoothing (seed paper §3.5, eqs. 11–12, Figure 5).
//!
//! Each path's free part (between its crossing stubs, or the whole loop of an
//! endogenous agent) is sampled uniformly in time into *tacks*; a cubic
//! spline in time `S(t) = a + bt + ct² + dt³` per tack interval (eq. 11) is
//! fitted through them, C¹ (eq. 12; in fact C²) and clamped to the boundary
//! velocities at the stub ends (periodic for a loop), by an O(n) solve of its
//! tridiagonal (cyclic for a loop) moment system ([`crate::tridiagonal`]). The spline is then resampled
//! by curvature — the sharper it turns the finer the samples — into a new
//! polyline; a sample farther than the deviation threshold from the
//! unsmoothed path, or outside the patch shrunk by r, is dropped. Finally the
//! smoothed set is checked against every other path, obstacle and ghost: a
//! path involved in a collision the unsmoothed set did not have falls back to
//! its unsmoothed shape.

use crate::collision::{CollisionParams, find_contacts};
use crate::geometry::Vec2;
use crate::model::{Obstacle, Patch};
use crate::path::{Agent, ControlPoint, Path, PointKind};
use crate::proximity::{Contact, Ghost, Other};

/// A cubic spline in time through knots, one coordinate per component.
#[derive(Debug, Clone, PartialEq)]
pub struct Spline {
    /// Knot times `[s]`, strictly increasing.
    pub t: Vec<f64>,
    /// Knot positions `[m]`.
    pub p: Vec<Vec2>,
    /// Second derivatives at the knots `[m/s²]` (the spline's moments).
    pub m: Vec<Vec2>,
}

impl Spline {
    /// Clamped cubic spline through `(t, p)` with first derivatives `v0` and
    /// `v1` `[m/s]` at its ends. Solves the tridiagonal moment system
    /// (symmetric, strictly diagonally dominant) by the Thomas algorithm
    /// ([`crate::tridiagonal::solve`]): time and memory O(n) in the knots.
    ///
    /// # Panics
    /// If fewer than two knots are given or times do not increase.
    pub fn clamped(t: &[f64], p: &[Vec2], v0: Vec2, v1: Vec2) -> Spline {
        let n = t.len();
        assert!(n >= 2 && p.len() == n, "a spline needs two knots or more");
        let h: Vec<f64> = t.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(h.iter().all(|h| *h > 0.0), "spline knots must increase in time");
        let mut sub = vec![0.0; n];
        let mut diag = vec![0.0; n];
        let mut sup = vec![0.0; n];
        let mut rhs = vec![Vec2::zeros(); n];
        for i in 0..n {
            if i > 0 {
                diag[i] += 2.0 * h[i - 1];
                sub[i] = h[i - 1];
            }
            if i + 1 < n {
                diag[i] += 2.0 * h[i];
                sup[i] = h[i];
            }
            let right = if i + 1 < n { (p[i + 1] - p[i]) / h[i] } else { v1 };
            let left = if i > 0 { (p[i] - p[i - 1]) / h[i - 1] } else { v0 };
            rhs[i] = (right - left) * 6.0;
        }
        let m = crate::tridiagonal::solve(&sub, &diag, &sup, &rhs);
        Spline { t: t.to_vec(), p: p.to_vec(), m }
    }

    /// Periodic cubic spline through `(t, p)` where the last knot repeats the
    /// first one a period later (`p[n−1] == p[0]`): value, slope and moment
    /// agree across the seam. Cyclic tridiagonal moment system solved by
    /// Sherman–Morrison over the Thomas algorithm
    /// ([`crate::tridiagonal::solve_cyclic`]): time and memory O(n).
    ///
    /// # Panics
    /// If fewer than three knots are given or times do not increase.
    pub fn periodic(t: &[f64], p: &[Vec2]) -> Spline {
        let n = t.len() - 1; // distinct knots
        assert!(n >= 2, "a periodic spline needs three knots or more");
        let h: Vec<f64> = t.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(h.iter().all(|h| *h > 0.0), "spline knots must increase in time");
        let mut sub = vec![0.0; n];
        let mut diag = vec![0.0; n];
        let mut sup = vec![0.0; n];
        let mut rhs = vec![Vec2::zeros(); n];
        for i in 0..n {
            let hp = h[(i + n - 1) % n];
            let hi = h[i];
            diag[i] = 2.0 * (hp + hi);
            sub[i] = hp;
            sup[i] = hi;
            let y = |k: usize| p[k % n];
            rhs[i] = ((y(i + 1) - y(i)) / hi - (y(i) - y(i + n - 1)) / hp) * 6.0;
        }
        let mut m = crate::tridiagonal::solve_cyclic(&sub, &diag, &sup, &rhs);
        m.push(m[0]);
        Spline { t: t.to_vec(), p: p.to_vec(), m }
    }

    fn interval(&self, t: f64) -> usize {
        let i = self.t.partition_point(|k| *k <= t);
        i.saturating_sub(1).min(self.t.len() - 2)
    }

    /// Position `[m]` at time `t` `[s]` (eq. 11 in moment form).
    pub fn eval(&self, t: f64) -> Vec2 {
        let i = self.interval(t);
        let (t0, t1) = (self.t[i], self.t[i + 1]);
        let h = t1 - t0;
        let (a, b) = ((t1 - t) / h, (t - t0) / h);
        self.p[i] * a
            + self.p[i + 1] * b
            + (self.m[i] * (a * a * a - a) + self.m[i + 1] * (b * b * b - b)) * (h * h / 6.0)
    }

    /// Velocity `[m/s]` at time `t` `[s]`.
    pub fn velocity(&self, t: f64) -> Vec2 {
        let i = self.interval(t);
        let (t0, t1) = (self.t[i], self.t[i + 1]);
        let h = t1 - t0;
        let (a, b) = ((t1 - t) / h, (t - t0) / h);
        (self.p[i + 1] - self.p[i]) / h
            + (self.m[i + 1] * (3.0 * b * b - 1.0) - self.m[i] * (3.0 * a * a - 1.0)) * (h / 6.0)
    }
}

/// Smoothing parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct SmoothingParams {
    /// Time between tacks `[s]`.
    pub tack_interval: f64,
    /// Largest distance a smoothed sample may stray from the unsmoothed path `[m]`.
    pub max_deviation: f64,
    /// Heading change that triggers a new sample when resampling `[rad]`.
    pub max_turn: f64,
    /// Longest time between two samples `[s]`.
    pub max_step: f64,
    /// Fine step at which the spline is scanned `[s]`.
    pub scan_step: f64,
    /// Agent radius r `[m]` (samples stay in `[r, L − r]²`).
    pub radius: f64,
    /// Patch side L `[m]`.
    pub size: f64,
}

impl SmoothingParams {
    /// Parameters from a patch's values and solver options: the tack
    /// interval and deviation threshold of the document (r by default, as the
    /// seed paper ties it to the collision threshold); a new sample after
    /// 0.01 rad of turn or 1 s, the spline scanned every 20 ms. Fine samples
    /// where the path turns make the polyline a player draws (straight
    /// between keys) turn as the spline does: a kink of δ rad at one key
    /// shows as δ / 40 ms at 25 Hz, so δ = 0.01 rad reads as at most
    /// 0.25 rad/s where the spline turns slower.
    pub fn from_patch(patch: &Patch) -> SmoothingParams {
        SmoothingParams {
            tack_interval: patch.solver.tack_interval,
            max_deviation: patch.solver.max_deviation.unwrap_or(patch.header.agent_radius),
            max_turn: 0.01,
            max_step: 1.0,
            scan_step: 0.02,
            radius: patch.header.agent_radius,
            size: patch.header.size,
        }
    }
}

/// Speed `[m/s]` below which a free segment of an exogenous path is a
/// stop: the walker stands still there, and smoothing keeps it so (a
/// spline through a stop overshoots its ends, and the walker would creep
/// to and fro where it should stand).
pub const STOP_SPEED: f64 = 0.02;

/// Shortest stop `[s]` that smoothing keeps as it is.
pub const MIN_STOP: f64 = 0.3;

/// The stops of `path` between points `head` and `tail`: maximal runs of
/// segments slower than [`STOP_SPEED`] lasting [`MIN_STOP`] or more, as
/// `(first point, last point)`.
fn stops(path: &Path, head: usize, tail: usize) -> Vec<(usize, usize)> {
    let pts = &path.points;
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut k = head;
    while k < tail {
        if path.segment_velocity(k).norm() < STOP_SPEED {
            let first = k;
            while k < tail && path.segment_velocity(k).norm() < STOP_SPEED {
                k += 1;
            }
            if pts[k].t - pts[first].t >= MIN_STOP {
                out.push((first, k));
            }
        } else {
            k += 1;
        }
    }
    out
}

/// Smooths one path's free part; fixed stubs and boundary points are kept,
/// and so are the stops of an exogenous path ([`STOP_SPEED`]): the moving
/// pieces between them are smoothed each on its own, the spline clamped to
/// zero velocity where the walker stops and starts.
pub fn smooth_path(path: &Path, params: &SmoothingParams) -> Path {
    let pts = &path.points;
    let n = pts.len();
    let (head, tail) = if path.looped {
        (0, n - 1)
    } else {
        let head = pts.iter().position(|c| c.kind == PointKind::Stub).unwrap_or(0);
        let tail = pts.iter().rposition(|c| c.kind == PointKind::Stub).unwrap_or(n - 1);
        (head, tail)
    };
    if tail <= head + 1 && !path.looped {
        return path.clone();
    }
    if path.looped {
        let (ta, tb) = (pts[head].t, pts[tail].t);
        let k = (((tb - ta) / params.tack_interval).round() as usize).max(3);
        let tacks_t: Vec<f64> =
            (0..=k).map(|i| if i == k { tb } else { ta + (tb - ta) * i as f64 / k as f64 }).collect();
        let mut tacks_p: Vec<Vec2> = tacks_t.iter().map(|&t| path.position(t)).collect();
        tacks_p[k] = tacks_p[0];
        let spline = Spline::periodic(&tacks_t, &tacks_p);
        let mut out: Vec<ControlPoint> = pts[..=head].to_vec();
        out.extend(resample(path, &spline, (ta, tb), params));
        out.extend_from_slice(&pts[tail..]);
        let last = out.len() - 1;
        out[last].p = out[0].p;
        return Path { points: out, looped: true };
    }
    // Clamp to the stub velocities so the result is C¹ with the stubs.
    let v0 = if head > 0 { path.segment_velocity(head - 1) } else { path.segment_velocity(0) };
    let v1 = if tail + 1 < n { path.segment_velocity(tail) } else { path.segment_velocity(n - 2) };
    let mut out: Vec<ControlPoint> = pts[..=head].to_vec();
    let mut from = (head, v0);
    for (first, last) in stops(path, head, tail).into_iter().chain(std::iter::once((tail, tail))) {
        let (a, va) = from;
        let vb = if first == tail { v1 } else { Vec2::zeros() };
        if first > a {
            out.extend(smooth_piece(path, (pts[a].t, va), (pts[first].t, vb), params));
        }
        if first < tail {
            // The stop, as it is (its first point closes the piece before).
            if first > a {
                out.push(pts[first]);
            }
            out.extend_from_slice(&pts[first + 1..=last]);
        }
        from = (last, Vec2::zeros());
    }
    out.extend_from_slice(&pts[tail..]);
    Path { points: out, looped: false }
}

/// The interior samples of the clamped spline through tacks of `path`
/// between `(ta, va)` and `(tb, vb)` (times `[s]`, end velocities `[m/s]`).
fn smooth_piece(
    path: &Path,
    (ta, va): (f64, Vec2),
    (tb, vb): (f64, Vec2),
    params: &SmoothingParams,
) -> Vec<ControlPoint> {
    let span = tb - ta;
    let k = ((span / params.tack_interval).round() as usize).max(1);
    let tacks_t: Vec<f64> = (0..=k).map(|i| if i == k { tb } else { ta + span * i as f64 / k as f64 }).collect();
    let tacks_p: Vec<Vec2> = tacks_t.iter().map(|&t| path.position(t)).collect();
    let spline = Spline::clamped(&tacks_t, &tacks_p, va, vb);
    resample(path, &spline, (ta, tb), params)
}

/// Resamples `spline` over `(ta, tb)` (exclusive) by curvature and speed:
/// scanned every `scan_step`, a sample after `max_turn` of heading change,
/// a change of speed of [`MAX_SPEED_CHANGE`], or `max_step` of time; a
/// sample farther than `max_deviation` from `path` or outside the patch
/// shrunk by r is dropped.
fn resample(path: &Path, spline: &Spline, (ta, tb): (f64, f64), params: &SmoothingParams) -> Vec<ControlPoint> {
    let (r, l) = (params.radius, params.size);
    let ok = |t: f64, p: Vec2| {
        (p - path.position(t)).norm() <= params.max_deviation && p.x >= r && p.x <= l - r && p.y >= r && p.y <= l - r
    };
    let span = tb - ta;
    let mut out = Vec::new();
    let steps = ((span / params.scan_step).ceil() as usize).max(2);
    let mut last_t = ta;
    let mut last_speed = spline.velocity(ta).norm();
    let mut turned = 0.0;
    let mut prev_heading: Option<f64> = None;
    for s in 1..steps {
        let t = ta + span * s as f64 / steps as f64;
        let v = spline.velocity(t);
        let heading = (v.norm() > 1e-3).then(|| v.y.atan2(v.x));
        if let (Some(h), Some(ph)) = (heading, prev_heading) {
            turned += crowdpatch_runtime::format::wrap_angle(h - ph).abs();
        }
        if heading.is_some() {
            prev_heading = heading;
        }
        let due = turned >= params.max_turn
            || t - last_t >= params.max_step
            || (v.norm() - last_speed).abs() >= MAX_SPEED_CHANGE;
        if due && tb - t > params.scan_step * 0.5 {
            let p = spline.eval(t);
            if ok(t, p) {
                out.push(ControlPoint::free(p, t));
                last_t = t;
                last_speed = v.norm();
                turned = 0.0;
            }
        }
    }
    out
}

/// Change of speed `[m/s]` after which resampling keeps a sample: a walker
/// slowing into a stop or starting from one keeps keys as its speed
/// changes (between keys a player moves it at constant speed).
pub const MAX_SPEED_CHANGE: f64 = 0.1;

/// Outcome of smoothing a set of agents.
#[derive(Debug, Clone, PartialEq)]
pub struct SmoothingOutcome {
    /// Agents whose smoothed path keeps its unsmoothed shape over some time
    /// windows (smoothing there caused a new collision).
    pub spliced: Vec<usize>,
    /// Agents whose smoothing was given up entirely: they keep their
    /// unsmoothed path.
    pub reverted: Vec<usize>,
}

/// Half-width `[s]` of the first window of unsmoothed path put back around a
/// new collision; it doubles each time the same agent needs another.
pub const FIRST_SPLICE_HALF_WIDTH: f64 = 0.5;
/// How many windows an agent may get before its smoothing is given up.
pub const MAX_SPLICES: usize = 5;

/// Length `[s]` of the ramp over which a spliced path blends from its
/// smoothed to its unsmoothed shape.
pub const SPLICE_RAMP: f64 = 0.6;

/// Shortest time `[s]` between two samples of a spliced path (fixed points
/// excepted).
const MIN_SPACING: f64 = 0.05;

/// `smoothed` with the unsmoothed path `original` put back over each time
/// window: equal to `original` inside every window, to `smoothed` farther
/// than [`SPLICE_RAMP`] outside, and a linear blend of the two in between, so
/// that speeds stay bounded.
pub fn splice(smoothed: &Path, original: &Path, windows: &[(f64, f64)]) -> Path {
    if windows.is_empty() {
        return smoothed.clone();
    }
    let weight = |t: f64| -> f64 {
        windows
            .iter()
            .map(|&(a, b)| {
                if t >= a && t <= b {
                    1.0
                } else {
                    let d = if t < a { a - t } else { t - b };
                    (1.0 - d / SPLICE_RAMP).max(0.0)
                }
            })
            .fold(0.0, f64::max)
    };
    let mut times: Vec<f64> = smoothed.points.iter().map(|c| c.t).collect();
    times.extend(original.points.iter().map(|c| c.t).filter(|&t| weight(t) > 0.0));
    for &(a, b) in windows {
        let (lo, hi) = (a - SPLICE_RAMP, b + SPLICE_RAMP);
        let steps = ((hi - lo) / 0.1).ceil() as usize;
        times.extend((0..=steps).map(|k| lo + (hi - lo) * k as f64 / steps as f64));
    }
    // Samples only between the fixed stubs; the fixed points themselves always.
    let (lo, hi) = original.free_range();
    times.retain(|&t| t >= lo && t <= hi);
    times.extend(original.points.iter().filter(|c| c.kind != PointKind::Free).map(|c| c.t));
    times.sort_by(f64::total_cmp);
    // No sliver segments: keep samples at least MIN_SPACING apart, fixed
    // points always.
    let fixed: Vec<f64> = original.points.iter().filter(|c| c.kind != PointKind::Free).map(|c| c.t).collect();
    let mut kept: Vec<f64> = Vec::with_capacity(times.len());
    for t in times {
        let is_fixed = fixed.contains(&t);
        match kept.last() {
            Some(&last) if t - last < MIN_SPACING => {
                let last_fixed = fixed.contains(&last);
                if is_fixed && !last_fixed {
                    *kept.last_mut().unwrap() = t;
                } else if is_fixed && t > last {
                    kept.push(t);
                }
            }
            _ => kept.push(t),
        }
    }
    let times = kept;
    let kind_at = |t: f64| {
        original
            .points
            .iter()
            .chain(&smoothed.points)
            .find(|c| c.t == t && c.kind != PointKind::Free)
            .map_or(PointKind::Free, |c| c.kind)
    };
    let mut points: Vec<ControlPoint> = times
        .into_iter()
        .map(|t| {
            let w = weight(t);
            ControlPoint { p: smoothed.position(t) * (1.0 - w) + original.position(t) * w, t, kind: kind_at(t) }
        })
        .collect();
    // Keep the fixed points exact (both paths share them).
    for c in points.iter_mut().filter(|c| c.kind != PointKind::Free) {
        c.p = original.position(c.t);
    }
    if original.looped {
        let last = points.len() - 1;
        points[last].p = points[0].p;
    }
    Path { points, looped: original.looped }
}

/// Smooths every agent's path in place and proves that no new collision
/// appeared: where the smoothed set has a contact the unsmoothed set did not,
/// each agent involved gets its unsmoothed path back over a time window
/// around the contact (half-width 0.5 s, doubling for each further window
/// the agent needs); after [`MAX_SPLICES`] windows its smoothing is given up.
/// This repeats until no new contact is left; it terminates because every
/// round adds a window to some agent from a finite allowance.
pub fn smooth_agents(
    agents: &mut [Agent],
    obstacles: &[Obstacle],
    ghosts: &[Ghost],
    params: &SmoothingParams,
    collision: &CollisionParams,
) -> SmoothingOutcome {
    let before: Vec<Agent> = agents.to_vec();
    let key = |c: &Contact| (c.agent, c.other);
    let old: Vec<(usize, Other)> = find_contacts(&before, obstacles, ghosts, collision).iter().map(key).collect();
    let smoothed: Vec<Path> = agents.iter().map(|a| smooth_path(&a.path, params)).collect();
    for (a, s) in agents.iter_mut().zip(&smoothed) {
        a.path = s.clone();
    }
    let mut windows: Vec<Vec<(f64, f64)>> = vec![Vec::new(); agents.len()];
    loop {
        let new: Vec<Contact> = find_contacts(agents, obstacles, ghosts, collision)
            .into_iter()
            .filter(|c| !old.contains(&key(c)))
            .collect();
        let mut touched: Vec<(usize, f64)> = new
            .iter()
            .flat_map(|c| match c.other {
                Other::Agent(j) => vec![(c.agent, c.agent_time), (j, c.other_time)],
                _ => vec![(c.agent, c.agent_time)],
            })
            .filter(|&(i, _)| windows[i].len() <= MAX_SPLICES && agents[i].path != before[i].path)
            .collect();
        touched.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        touched.dedup_by(|a, b| a.0 == b.0);
        if touched.is_empty() {
            break;
        }
        for (i, t) in touched {
            let half = FIRST_SPLICE_HALF_WIDTH * f64::powi(2.0, windows[i].len() as i32);
            windows[i].push((t - half, t + half));
            agents[i].path = if windows[i].len() > MAX_SPLICES {
                before[i].path.clone()
            } else {
                splice(&smoothed[i], &before[i].path, &windows[i])
            };
        }
    }
    let spliced = (0..agents.len()).filter(|&i| !windows[i].is_empty() && windows[i].len() <= MAX_SPLICES).collect();
    let reverted = (0..agents.len()).filter(|&i| windows[i].len() > MAX_SPLICES).collect();
    SmoothingOutcome { spliced, reverted }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamped_spline_interpolates_and_honours_end_velocities() {
        let t = [0.0, 1.0, 2.5, 3.0, 4.0];
        let p =
            [Vec2::new(0.0, 0.0), Vec2::new(1.0, 2.0), Vec2::new(3.0, 2.0), Vec2::new(3.5, 1.0), Vec2::new(5.0, 0.0)];
        let (v0, v1) = (Vec2::new(1.0, 1.0), Vec2::new(2.0, -1.0));
        let s = Spline::clamped(&t, &p, v0, v1);
        for (ti, pi) in t.iter().zip(&p) {
            assert!((s.eval(*ti) - pi).norm() < 1e-12);
        }
        assert!((s.velocity(0.0) - v0).norm() < 1e-9);
        assert!((s.velocity(4.0) - v1).norm() < 1e-9);
        // C¹ at interior knots (eq. 12): left and right derivatives agree.
        for ti in &t[1..4] {
            let left = (s.eval(*ti) - s.eval(ti - 1e-6)) / 1e-6;
            let right = (s.eval(ti + 1e-6) - s.eval(*ti)) / 1e-6;
            assert!((left - right).norm() < 1e-4, "{left} {right}");
        }
    }

    #[test]
    fn periodic_spline_closes_smoothly() {
        let t = [0.0, 2.0, 5.0, 7.0, 10.0];
        let p =
            [Vec2::new(4.0, 4.0), Vec2::new(8.0, 4.0), Vec2::new(8.0, 8.0), Vec2::new(4.0, 8.0), Vec2::new(4.0, 4.0)];
        let s = Spline::periodic(&t, &p);
        assert!((s.velocity(0.0) - s.velocity(10.0)).norm() < 1e-9);
        assert!((s.eval(10.0) - s.eval(0.0)).norm() < 1e-12);
    }

    /// Tight smoothing limits on a 16 m patch with r = 0.3 m.
    fn straight_params() -> SmoothingParams {
        SmoothingParams {
            tack_interval: 0.5,
            max_deviation: 0.3,
            max_turn: 0.01,
            max_step: 1.0,
            scan_step: 0.02,
            radius: 0.3,
            size: 16.0,
        }
    }

    #[test]
    fn a_straight_path_stays_straight() {
        let path = Path {
            points: vec![
                ControlPoint { p: Vec2::new(0.0, 8.0), t: 0.0, kind: PointKind::Boundary },
                ControlPoint { p: Vec2::new(0.4, 8.0), t: 0.3, kind: PointKind::Stub },
                ControlPoint::free(Vec2::new(8.0, 8.0), 6.0),
                ControlPoint { p: Vec2::new(15.6, 8.0), t: 11.7, kind: PointKind::Stub },
                ControlPoint { p: Vec2::new(16.0, 8.0), t: 12.0, kind: PointKind::Boundary },
            ],
            looped: false,
        };
        let params = straight_params();
        let s = smooth_path(&path, &params);
        s.check().unwrap();
        assert_eq!(s.points[0], path.points[0]);
        assert_eq!(s.points[1], path.points[1]);
        assert_eq!(s.points[s.points.len() - 1], path.points[4]);
        for c in &s.points {
            assert!((c.p.y - 8.0).abs() < 1e-9 && (c.p - path.position(c.t)).norm() < 1e-6);
        }
    }

    #[test]
    fn a_walker_stands_still_where_it_stopped() {
        // North at 1 m/s with ramps, a stop of 6 s at (8, 8), then on.
        let mut points = vec![
            ControlPoint { p: Vec2::new(8.0, 0.0), t: 0.0, kind: PointKind::Boundary },
            ControlPoint { p: Vec2::new(8.0, 0.3), t: 0.3, kind: PointKind::Stub },
        ];
        for k in 1..=7 {
            points.push(ControlPoint::free(Vec2::new(8.0, 0.3 + k as f64), 0.3 + k as f64));
        }
        points.push(ControlPoint::free(Vec2::new(8.0, 7.8), 7.8));
        points.push(ControlPoint::free(Vec2::new(8.0, 8.0), 8.3));
        points.push(ControlPoint::free(Vec2::new(8.0, 8.0), 14.3));
        points.push(ControlPoint::free(Vec2::new(8.0, 8.2), 14.8));
        for k in 1..=7 {
            points.push(ControlPoint::free(Vec2::new(8.0, 8.2 + k as f64), 14.8 + k as f64));
        }
        let n = points.len();
        points[n - 1].kind = PointKind::Stub;
        points.push(ControlPoint { p: Vec2::new(8.0, 16.0), t: 22.1, kind: PointKind::Boundary });
        let path = Path { points, looped: false };
        path.check().unwrap();
        let params = straight_params();
        let s = smooth_path(&path, &params);
        s.check().unwrap();
        // Standing, exactly, all the stop long: no creeping to and fro.
        for k in 0..=60 {
            let t = 8.3 + k as f64 * 0.1;
            assert!((s.position(t) - Vec2::new(8.0, 8.0)).norm() < 1e-12, "moves at {t}: {:?}", s.position(t));
        }
        // Never backwards, before or after.
        assert!((0..s.points.len() - 1).all(|k| s.segment_velocity(k).y >= -1e-9));
        // A spline through the stop (the former smoothing) would creep.
        let whole = Spline::clamped(
            &(0..=43).map(|i| 0.3 + (21.8 - 0.3) * i as f64 / 43.0).collect::<Vec<_>>(),
            &(0..=43).map(|i| path.position(0.3 + (21.8 - 0.3) * i as f64 / 43.0)).collect::<Vec<_>>(),
            Vec2::new(0.0, 1.0),
            Vec2::new(0.0, 1.0),
        );
        let creep =
            (0..=60).map(|k| (whole.eval(8.3 + k as f64 * 0.1) - Vec2::new(8.0, 8.0)).norm()).fold(0.0, f64::max);
        assert!(creep > 1e-3, "{creep}");
    }
}
