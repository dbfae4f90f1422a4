//! Stage 2: agents' space-time paths and their initial shape (seed paper §3.3,
//! end: "creating the initial batch of trajectories").
//!
//! A [`Path`] is a polyline of control points `(p, t)` with strictly
//! increasing, unwrapped times (DESIGN.md "Conventions"). An exogenous agent's
//! path starts at its entry point and ends at its exit point; both are
//! *boundary* control points, never moved. Next to each lies a fixed
//! *crossing stub*: the straight walk with the boundary velocity down to the
//! stub depth (r by default), which makes the path's velocity at the seam
//! exactly the pattern's and keeps neighbouring tiles' agents apart (a ghost
//! outside, a stub inside). Everything between the stubs is free to move,
//! inside the patch shrunk by r. An endogenous agent's path is a loop: its
//! last control point is its first one a period later, and the two move
//! together.

use crate::geometry::{Vec2, segment_obstacle_distance};
use crate::matching::{Pair, matching_duration};
use crate::model::{Crossing, Direction, Obstacle, Patch, SolverKind};
use crowdpatch_runtime::format::{AgentKind, PointRef};

/// Role of a control point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointKind {
    /// An entry or exit point: fixed.
    Boundary,
    /// The inner end of a crossing stub: fixed.
    Stub,
    /// A movable control point.
    Free,
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

    /// Length of the path `[m]`.
    pub fn length(&self) -> f64 {
        self.points.windows(2).map(|w| (w[1].p - w[0].p).norm()).sum()
    }

    /// Mean speed `[m/s]`: length over duration.
    pub fn mean_speed(&self) -> f64 {
        self.length() / (self.end() - self.start())
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
        let (lo, hi) = self.free_range();
        if hi - lo <= 4.0 * MIN_DT {
            return None;
        }
        let t = t.clamp(lo + 2.0 * MIN_DT, hi - 2.0 * MIN_DT);
        // Nearest existing free point.
        let mut best: Option<(usize, f64)> = None;
        for (i, c) in self.points.iter().enumerate() {
            if c.is_free() || (self.looped && (i == 0 || i == self.points.len() - 1)) {
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
            let linked = self.looped && (j == 0 || j == self.points.len() - 1);
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
        self.points[i].is_free() || (self.looped && (i == 0 || i == self.points.len() - 1))
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
}

/// Problems noticed while building initial paths (not errors: the bake goes on).
#[derive(Debug, Clone, PartialEq)]
pub struct InitialNote {
    /// Agent index.
    pub agent: usize,
    /// What happened.
    pub message: String,
}

/// Builds the initial path of every matched pair (in pair order) and of every
/// endogenous agent (after them), following the seed paper §3.3:
///
/// - straight space-time segments between the crossing stubs;
/// - a pair whose speed would exceed `fast_factor × u_cft` gets extra periods
///   (`Δt + kπ`, the `k` that brings its speed nearest u_cft);
/// - a same-side pair gets a control point towards the centre, as deep as its
///   time allows at comfort speed;
/// - a pair slower than `slow_factor × u_cft` walks at comfort speed and
///   pauses half-way (two control points at one position);
/// - endogenous agents loop through their waypoints;
/// - no initial path crosses a static obstacle: legs that would are routed
///   around it by A* on a 0.2 m grid (pathfinding crate), then shortened by
///   line of sight.
pub fn initial_paths(patch: &Patch, pairs: &[Pair]) -> (Vec<Agent>, Vec<InitialNote>) {
    let entries = patch.crossings_of(Direction::Entry);
    let exits = patch.crossings_of(Direction::Exit);
    let router = Router::new(patch);
    let mut notes = Vec::new();
    let mut agents = Vec::new();
    for pair in pairs {
        let (e, x) = (entries[pair.entry], exits[pair.exit]);
        let (path, note) = exogenous_path(patch, &router, &e, &x);
        if let Some(message) = note {
            notes.push(InitialNote { agent: agents.len(), message });
        }
        agents.push(Agent {
            kind: AgentKind::Exogenous {
                entry: PointRef { side: e.side, index: e.index },
                exit: PointRef { side: x.side, index: x.index },
            },
            path,
            entry: Some(e),
            exit: Some(x),
        });
    }
    for (index, endo) in patch.endogenous.iter().enumerate() {
        let (path, note) = endogenous_path(patch, &router, endo);
        if let Some(message) = note {
            notes.push(InitialNote { agent: agents.len(), message });
        }
        agents.push(Agent { kind: AgentKind::Endogenous { index }, path, entry: None, exit: None });
    }
    (agents, notes)
}

fn exogenous_path(patch: &Patch, router: &Router, e: &Crossing, x: &Crossing) -> (Path, Option<String>) {
    let depth = patch.stub_depth();
    let (pi, u_cft, r, l) =
        (patch.header.period, patch.header.comfort_speed, patch.header.agent_radius, patch.header.size);
    let tau_e = e.time_to_depth(depth);
    let tau_x = x.time_to_depth(depth);
    let q_e = e.position + e.velocity * tau_e;
    let q_x = x.position - x.velocity * tau_x;
    let dt0 = matching_duration(e.t, x.t, pi);
    // Smallest number of extra periods leaving some time between the stubs.
    let min_free = 0.2;
    let mut k_min = 0usize;
    while dt0 + k_min as f64 * pi - tau_e - tau_x < min_free {
        k_min += 1;
    }
    let free_time = |k: usize| dt0 + k as f64 * pi - tau_e - tau_x;

    // Spatial route between the stub ends.
    let mut waypoints = vec![q_e];
    let mut note = None;
    let mut same_side_mid = None;
    if e.side == x.side {
        let d = (q_x - q_e).norm();
        let reach = u_cft * free_time(k_min) / 2.0;
        let h = (reach * reach - d * d / 4.0).max(0.0).sqrt().clamp(2.0_f64.min(l / 4.0), l / 2.0 - r);
        let n = crate::geometry::v2(e.side.inward_normal());
        let mid = (e.position + x.position) / 2.0 + n * h;
        waypoints.push(clamp_inside(mid, r, l));
        same_side_mid = Some(clamp_inside(mid, r, l));
    }
    waypoints.push(q_x);
    let (route, blocked) = router.route_through(&waypoints);
    if blocked {
        note =
            Some("no obstacle-free route was found between the crossings; the initial path crosses an obstacle".into());
    }
    let length: f64 = route.windows(2).map(|w| (w[1] - w[0]).norm()).sum();

    // Extra periods for pairs far faster than comfort.
    let mut k = k_min;
    if length / free_time(k_min) > patch.solver.fast_factor * u_cft {
        k = (k_min..k_min + 12)
            .min_by(|&a, &b| {
                let da = (length / free_time(a) - u_cft).abs();
                let db = (length / free_time(b) - u_cft).abs();
                da.total_cmp(&db)
            })
            .unwrap_or(k_min);
    }
    let t_in = e.t;
    let t_out = e.t + dt0 + k as f64 * pi;
    let (t_a, t_b) = (t_in + tau_e, t_out - tau_x);
    let mut points = vec![ControlPoint { p: e.position, t: t_in, kind: PointKind::Boundary }];
    points.push(ControlPoint { p: q_e, t: t_a, kind: PointKind::Stub });
    let free = t_b - t_a;
    let slow = length / free < patch.solver.slow_factor * u_cft;
    let comfort = if matches!(patch.solver.method, SolverKind::Default | SolverKind::Greedy) && !blocked {
        comfort_route(patch, (q_e, e.velocity, t_a), (q_x, x.velocity, t_b), same_side_mid)
    } else {
        None
    };
    match comfort {
        Some(free_points) => points.extend(free_points),
        None => timed_route(&route, t_a, t_b, if slow { Some(u_cft) } else { None }, &mut points),
    }
    let n = points.len();
    points[n - 1].kind = PointKind::Stub;
    points.push(ControlPoint { p: x.position, t: t_out, kind: PointKind::Boundary });
    (Path { points, looped: false }, note)
}

/// Position of the cubic Hermite curve from `(p0, v0)` at time 0 to
/// `(p1, v1)` at time `h` `[s]`, at time `t ∈ [0, h]`.
pub fn hermite(p0: Vec2, v0: Vec2, p1: Vec2, v1: Vec2, h: f64, t: f64) -> Vec2 {
    let s = t / h;
    let (s2, s3) = (s * s, s * s * s);
    p0 * (2.0 * s3 - 3.0 * s2 + 1.0)
        + v0 * (h * (s3 - 2.0 * s2 + s))
        + p1 * (3.0 * s2 - 2.0 * s3)
        + v1 * (h * (s3 - s2))
}

/// The initial route of the `default` solver between the stub ends
/// `(q_e, v_e, t_a)` and `(q_x, v_x, t_b)` (positions `[m]`, boundary
/// velocities `[m/s]`, times `[s]`): a C¹ piecewise cubic Hermite curve in
/// time that leaves and meets the crossing stubs with their own velocity, so
/// an agent turns gradually instead of at the stub end, through one middle
/// waypoint when useful — the seed paper's same-side point towards the centre
/// (`same_side_mid`), or, for a pair slower than comfort, a bow to the side
/// of the chord facing the centre, as deep as it takes for the route to be
/// walked near u_cft instead of pausing (time-weighted `|u − u_cft|` cannot
/// drop otherwise: ∫(u_cft − u)dt = u_cft·T − length). The curve is sampled
/// every 50 ms and kept where its heading turned 0.08 rad or 1.5 s passed.
///
/// Returns the free control points after `q_e` up to `q_x` (inclusive, at
/// `t_b`), or `None` when the curve would come within r + 5 cm of an
/// obstacle (the caller then routes around it instead).
fn comfort_route(
    patch: &Patch,
    (q_e, v_e, t_a): (Vec2, Vec2, f64),
    (q_x, v_x, t_b): (Vec2, Vec2, f64),
    same_side_mid: Option<Vec2>,
) -> Option<Vec<ControlPoint>> {
    let (r, l, u_cft) = (patch.header.agent_radius, patch.header.size, patch.header.comfort_speed);
    let span = t_b - t_a;
    let chord = q_x - q_e;
    let d = chord.norm();
    let centre = Vec2::new(l / 2.0, l / 2.0);
    let mid = same_side_mid.or_else(|| {
        let wanted = 0.95 * u_cft * span;
        if d < 1e-6 || d / span >= 0.9 * u_cft || wanted <= d {
            return None;
        }
        let depth = (wanted * wanted - d * d).sqrt() / 2.0;
        let mut n = Vec2::new(-chord.y, chord.x) / d;
        let half = (q_e + q_x) / 2.0;
        if (centre - half).dot(&n) < 0.0 {
            n = -n;
        }
        let inner = r + 0.5;
        Some(Vec2::new((half + n * depth).x.clamp(inner, l - inner), (half + n * depth).y.clamp(inner, l - inner)))
    });
    // Knots: (position, velocity, time).
    let mut knots = vec![(q_e, v_e, t_a)];
    if let Some(m) = mid {
        let (a, b) = ((m - q_e).norm(), (q_x - m).norm());
        if a + b > 1e-6 {
            let tm = t_a + span * a / (a + b);
            let dir = if d > 1e-6 { chord / d } else { Vec2::new(-(m - q_e).y, (m - q_e).x).normalize() };
            knots.push((m, dir * ((a + b) / span), tm));
        }
    }
    knots.push((q_x, v_x, t_b));
    let mut out: Vec<ControlPoint> = Vec::new();
    let mut last = (q_e, t_a);
    let mut last_heading: Option<f64> = None;
    for w in knots.windows(2) {
        let ((p0, v0, t0), (p1, v1, t1)) = (w[0], w[1]);
        let h = t1 - t0;
        let steps = ((h / 0.05).ceil() as usize).max(1);
        for k in 1..=steps {
            let t = if k == steps { t1 } else { t0 + h * k as f64 / steps as f64 };
            let p = clamp_inside(hermite(p0, v0, p1, v1, h, t - t0), r, l);
            let heading = (p - last.0).y.atan2((p - last.0).x);
            let turned =
                last_heading.is_some_and(|lh| crowdpatch_runtime::format::wrap_angle(heading - lh).abs() >= 0.15);
            if (k == steps || turned || t - last.1 >= 1.5) && t - last.1 > 1e-3 {
                out.push(ControlPoint::free(p, t));
                last_heading = Some(heading);
                last = (p, t);
            }
        }
    }
    // The last point is the stub's inner end, exactly.
    let n = out.len();
    if n == 0 {
        return None;
    }
    out[n - 1] = ControlPoint::free(q_x, t_b);
    let clear = |a: Vec2, b: Vec2| patch.obstacles.iter().all(|o| segment_obstacle_distance(a, b, o).1 >= r + 0.05);
    let mut prev = q_e;
    for c in &out {
        if !clear(prev, c.p) {
            return None;
        }
        prev = c.p;
    }
    Some(out)
}

/// Appends free control points along `route` (whose first point is already
/// in `out` at time `t_a`) so it ends at time `t_b`. With `walk_speed`, the
/// agent walks at that speed and pauses at the route's half-length for the
/// rest of the time; else it walks at constant speed.
fn timed_route(route: &[Vec2], t_a: f64, t_b: f64, walk_speed: Option<f64>, out: &mut Vec<ControlPoint>) {
    let lengths: Vec<f64> = route.windows(2).map(|w| (w[1] - w[0]).norm()).collect();
    let total: f64 = lengths.iter().sum();
    let span = t_b - t_a;
    let (speed, pause) = match walk_speed {
        Some(u) if total / u < span => (u, span - total / u),
        _ => (total / span, 0.0),
    };
    if total < 1e-9 {
        // Standing still.
        out.push(ControlPoint::free(route[route.len() - 1], t_b));
        return;
    }
    let half = total / 2.0;
    let mut s = 0.0;
    let mut paused = pause <= 0.0;
    for (i, seg) in lengths.iter().enumerate() {
        let (a, b) = (route[i], route[i + 1]);
        if !paused && s + seg >= half {
            let u = if *seg > 0.0 { (half - s) / seg } else { 0.0 };
            let m = a + (b - a) * u;
            let tm = t_a + half / speed;
            if tm - out.last().unwrap().t > 1e-3 {
                out.push(ControlPoint::free(m, tm));
            }
            out.push(ControlPoint::free(m, tm + pause));
            paused = true;
        }
        s += seg;
        let t = t_a + s / speed + if paused { pause } else { 0.0 };
        let t = if i + 1 == lengths.len() { t_b } else { t };
        if t - out.last().unwrap().t > 1e-3 {
            out.push(ControlPoint::free(b, t));
        } else if i + 1 == lengths.len() {
            let last = out.len() - 1;
            out[last].t = t_b;
            out[last].p = b;
        }
    }
}

fn endogenous_path(patch: &Patch, router: &Router, endo: &crate::model::Endogenous) -> (Path, Option<String>) {
    let pi = patch.header.period;
    let w = &endo.waypoints;
    let mut points = Vec::new();
    let mut note = None;
    let t0 = w[0].t;
    for i in 0..w.len() {
        let a = crate::geometry::v2(w[i].position);
        let (b, tb) = if i + 1 < w.len() {
            (crate::geometry::v2(w[i + 1].position), w[i + 1].t)
        } else {
            (crate::geometry::v2(w[0].position), t0 + pi)
        };
        let ta = w[i].t;
        if points.is_empty() {
            points.push(ControlPoint::free(a, ta));
        }
        let (route, blocked) = router.route_through(&[a, b]);
        if blocked {
            note = Some("no obstacle-free route between two waypoints; the initial loop crosses an obstacle".into());
        }
        timed_route(&route, ta, tb, None, &mut points);
    }
    if points.len() == 1 {
        points.push(ControlPoint::free(points[0].p, t0 + pi));
    }
    // A standing agent or a two-point loop gets a middle point so it can bend.
    if points.len() == 2 {
        let p = points[0].p;
        points.insert(1, ControlPoint::free(p, t0 + pi / 2.0));
    }
    let last = points.len() - 1;
    points[last].p = points[0].p;
    (Path { points, looped: true }, note)
}

/// Clamps a point into the patch shrunk by `r`: `[r, L − r]²`.
pub fn clamp_inside(p: Vec2, r: f64, l: f64) -> Vec2 {
    Vec2::new(p.x.clamp(r, l - r), p.y.clamp(r, l - r))
}

/// A* router around static obstacles on a grid over the patch shrunk by r.
struct Router<'a> {
    obstacles: &'a [Obstacle],
    clearance: f64,
    r: f64,
    h: f64,
    n: usize,
    blocked: Vec<bool>,
}

impl<'a> Router<'a> {
    fn new(patch: &'a Patch) -> Router<'a> {
        let r = patch.header.agent_radius;
        let l = patch.header.size;
        let clearance = r + 0.1;
        let h = 0.2_f64.min((l - 2.0 * r) / 8.0).max(1e-3);
        let n = (((l - 2.0 * r) / h).floor() as usize + 1).min(2000);
        let mut blocked = vec![false; n * n];
        if !patch.obstacles.is_empty() {
            for i in 0..n {
                for j in 0..n {
                    let p = Vec2::new(r + i as f64 * h, r + j as f64 * h);
                    blocked[i * n + j] =
                        patch.obstacles.iter().any(|o| crate::geometry::obstacle_signed_distance(p, o).0 < clearance);
                }
            }
        }
        Router { obstacles: &patch.obstacles, clearance, r, h, n, blocked }
    }

    fn clear(&self, a: Vec2, b: Vec2) -> bool {
        self.obstacles.iter().all(|o| segment_obstacle_distance(a, b, o).1 >= self.clearance - 0.05)
    }

    /// Route through `waypoints` in order, leg by leg; returns the points and
    /// whether some leg had to cross an obstacle.
    fn route_through(&self, waypoints: &[Vec2]) -> (Vec<Vec2>, bool) {
        let mut out = vec![waypoints[0]];
        let mut blocked = false;
        for w in waypoints.windows(2) {
            match self.route(w[0], w[1]) {
                Some(leg) => out.extend_from_slice(&leg[1..]),
                None => {
                    blocked = true;
                    out.push(w[1]);
                }
            }
        }
        (out, blocked)
    }

    fn cell(&self, p: Vec2) -> (usize, usize) {
        let f = |c: f64| (((c - self.r) / self.h).round().max(0.0) as usize).min(self.n - 1);
        (f(p.x), f(p.y))
    }

    fn center(&self, c: (usize, usize)) -> Vec2 {
        Vec2::new(self.r + c.0 as f64 * self.h, self.r + c.1 as f64 * self.h)
    }

    /// Shortest obstacle-free route from `a` to `b`, or `None`.
    fn route(&self, a: Vec2, b: Vec2) -> Option<Vec<Vec2>> {
        if self.obstacles.is_empty() || self.clear(a, b) {
            return Some(vec![a, b]);
        }
        let n = self.n;
        let nearest_free = |p: Vec2| -> Option<(usize, usize)> {
            let c = self.cell(p);
            if !self.blocked[c.0 * n + c.1] {
                return Some(c);
            }
            let mut best = None;
            for i in c.0.saturating_sub(10)..(c.0 + 11).min(n) {
                for j in c.1.saturating_sub(10)..(c.1 + 11).min(n) {
                    if !self.blocked[i * n + j] {
                        let d = (self.center((i, j)) - p).norm();
                        if best.is_none_or(|(_, bd)| d < bd) {
                            best = Some(((i, j), d));
                        }
                    }
                }
            }
            best.map(|(c, _)| c)
        };
        let (start, goal) = (nearest_free(a)?, nearest_free(b)?);
        let scale = 1000.0;
        let (cells, _) = pathfinding::directed::astar::astar(
            &start,
            |&(i, j)| {
                let mut v = Vec::with_capacity(8);
                for (di, dj) in [(-1i64, 0i64), (1, 0), (0, -1), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1)] {
                    let (ni, nj) = (i as i64 + di, j as i64 + dj);
                    if ni < 0 || nj < 0 || ni >= n as i64 || nj >= n as i64 {
                        continue;
                    }
                    let (ni, nj) = (ni as usize, nj as usize);
                    if self.blocked[ni * n + nj] {
                        continue;
                    }
                    let cost = if di != 0 && dj != 0 {
                        (self.h * std::f64::consts::SQRT_2 * scale) as u64
                    } else {
                        (self.h * scale) as u64
                    };
                    v.push(((ni, nj), cost));
                }
                v
            },
            |&(i, j)| {
                let d = ((i as f64 - goal.0 as f64).powi(2) + (j as f64 - goal.1 as f64).powi(2)).sqrt();
                (d * self.h * scale * 0.999) as u64
            },
            |&c| c == goal,
        )?;
        let mut raw: Vec<Vec2> = vec![a];
        raw.extend(cells.iter().map(|&c| self.center(c)));
        raw.push(b);
        // Line-of-sight shortening (string pulling).
        let mut out = vec![a];
        let mut i = 0;
        while i + 1 < raw.len() {
            let mut j = raw.len() - 1;
            while j > i + 1 && !self.clear(raw[i], raw[j]) {
                j -= 1;
            }
            out.push(raw[j]);
            i = j;
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::PatchDocument;

    fn patch(json: &str) -> Patch {
        let (doc, unknown) = PatchDocument::from_json(json).unwrap();
        assert!(unknown.is_empty());
        doc.resolve(None, std::path::Path::new(".")).unwrap()
    }

    #[test]
    fn initial_paths_keep_boundaries_and_increase_in_time() {
        let p = patch(
            r#"{"format":1,"size":16,"period":10,"sides":{
                "south":{"entries":[{"s":4,"t":1},{"s":10,"t":2}],"exits":[{"s":12,"t":9}]},
                "north":{"exits":[{"s":8,"t":0.5}]}},
                "obstacles":[{"circle":{"center":[8,8],"radius":1.5}}],
                "endogenous":[{"waypoints":[{"position":[3,12],"t":1},{"position":[6,12],"t":4}]}]}"#,
        );
        let pairs = crate::matching::match_patch(&p, crate::model::MatchingMode::Stable);
        let (agents, _) = initial_paths(&p, &pairs);
        assert_eq!(agents.len(), 3);
        for a in &agents {
            a.path.check().unwrap();
            if let (Some(e), Some(x)) = (a.entry, a.exit) {
                let first = a.path.points[0];
                let last = a.path.points[a.path.points.len() - 1];
                assert_eq!((first.p, first.t), (e.position, e.t));
                assert_eq!(last.p, x.position);
                assert!(((last.t - x.t) / p.header.period - ((last.t - x.t) / p.header.period).round()).abs() < 1e-9);
                // The first segment walks with the boundary velocity.
                assert!((a.path.segment_velocity(0) - e.velocity).norm() < 1e-9);
            }
            // No initial path through the obstacle.
            for w in a.path.points.windows(2) {
                let (_, d, _) = segment_obstacle_distance(w[0].p, w[1].p, &p.obstacles[0]);
                assert!(d >= p.header.agent_radius, "{d}");
            }
        }
    }

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
}
