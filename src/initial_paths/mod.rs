//! Stage 2: the initial shape of every agent's space-time path (seed paper
//! §3.3, end: "creating the initial batch of trajectories"). The path types
//! are in [`crate::path`].

use crate::geometry::{Vec2, segment_obstacle_distance};
use crate::matching::{Pair, matching_duration};
use crate::model::{Crossing, Direction, Patch, SolverKind};
use crate::path::{Agent, ControlPoint, Path, PointKind, clamp_inside};
use crowdpatch_runtime::format::{AgentKind, PointRef};
use router::Router;

mod router;

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
}
