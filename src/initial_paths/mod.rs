//! Stage 2: the initial shape of every agent's space-time path (seed paper
//! §3.3, end: "creating the initial batch of trajectories"). The path types
//! are in [`crate::path`].

use crate::geometry::{Vec2, segment_obstacle_distance};
use crate::matching::{Pair, matching_duration};
use crate::model::{Crossing, Direction, Patch, SolverKind};
use crate::path::{Agent, ControlPoint, Path, PointKind, clamp_inside};
use crowdpatch_runtime::format::{AgentKind, PointRef};
use router::Router;

mod formation;
mod paced;
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
/// - a pair too fast for its walker gets extra periods (`Δt + kπ`): the
///   seed paper's solver adds them above `fast_factor × u_cft` (the `k` that
///   brings the speed nearest u_cft); the project's solvers as soon as the
///   walker would hurry ([`crate::pace::hurry_limit`],
///   [`crate::pace::extra_periods`]);
/// - a same-side pair gets a control point towards the centre, as deep as its
///   time allows at the walker's pace;
/// - a slow pair: the seed paper's solver walks at comfort speed and pauses
///   half-way below `slow_factor × u_cft`; the project's solvers walk the
///   shortest way at the walker's pace, slowing down, and wait half-way when
///   even `wait_factor ×` its preferred speed is too fast ([`paced`]);
/// - endogenous agents loop through their waypoints;
/// - no initial path crosses a static obstacle: legs that would are routed
///   around it by A* on a 0.2 m grid (pathfinding crate), then shortened by
///   line of sight.
///
/// Cost: O(pairs · (route + A* grid)) plus O(pairs · duration / 50 ms).
pub fn initial_paths(patch: &Patch, pairs: &[Pair]) -> (Vec<Agent>, Vec<InitialNote>) {
    let entries = patch.crossings_of(Direction::Entry);
    let exits = patch.crossings_of(Direction::Exit);
    let router = Router::new(patch);
    // The project's solvers first try a wider berth round obstacles, which
    // leaves the smooth curve room to round the corners.
    let wide = (patch.solver.method != SolverKind::Paper && !patch.obstacles.is_empty())
        .then(|| Router::with_clearance(patch, patch.header.agent_radius + WIDE_BERTH));
    let mut notes = Vec::new();
    let mut agents = Vec::new();
    let mut plans = Vec::new();
    // Walking groups matched as units walk in formation (`formation`).
    let mut in_formation: Vec<Option<(Path, f64, Option<String>)>> = vec![None; pairs.len()];
    if patch.solver.method != SolverKind::Paper {
        for group in formation_groups(patch, pairs, &entries, &exits) {
            let members: Vec<(Crossing, Crossing)> =
                group.iter().map(|&i| (entries[pairs[i].entry], exits[pairs[i].exit])).collect();
            let wide = Router::with_clearance(
                patch,
                patch.header.agent_radius + 0.1 + formation::half_width(members.len(), patch.header.agent_radius),
            );
            let (ce, cx, slack) = formation::crossings(patch, &members);
            let clear = |start: Vec2, points: &[ControlPoint]| clear_of_obstacles(patch, start, points);
            let walk = |router: &Router, shape| {
                let (group, note, _) = exogenous_path(patch, router, &ce, &cx, MIN_FREE + slack);
                // A route through an obstacle is no formation's.
                if note.is_some() {
                    return None;
                }
                formation::paths(patch, &members, (&ce, &cx), &group, &clear, shape).map(|paths| (paths, note))
            };
            let pace = ce.preferred_speed;
            let walked = walk(&wide, formation::Shape::Abreast)
                .or_else(|| walk(&router, formation::Shape::Abreast))
                .or_else(|| walk(&router, formation::Shape::InLine));
            if let Some((paths, note)) = walked {
                for (k, (&i, path)) in group.iter().zip(paths).enumerate() {
                    in_formation[i] = Some((path, pace, if k == 0 { note.clone() } else { None }));
                }
            }
        }
    }
    for (pair, formed) in pairs.iter().zip(in_formation) {
        let (e, x) = (entries[pair.entry], exits[pair.exit]);
        let (path, note, stops, preferred_speed) = match formed {
            Some((path, pace, note)) => (path, note, None, pace),
            None => {
                let (path, note, stops) = match wide.as_ref().map(|w| exogenous_path(patch, w, &e, &x, MIN_FREE)) {
                    Some((path, None, stops)) if path.points.len() > 4 || !has_kinks(&path) => (path, None, stops),
                    _ => exogenous_path(patch, &router, &e, &x, MIN_FREE),
                };
                (path, note, stops, patch.walker_speed(&e))
            }
        };
        plans.push(stops);
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
            preferred_speed,
        });
    }
    for (index, endo) in patch.endogenous.iter().enumerate() {
        let (path, note) = endogenous_path(patch, &router, endo);
        if let Some(message) = note {
            notes.push(InitialNote { agent: agents.len(), message });
        }
        let preferred_speed = path.mean_speed();
        agents.push(Agent { kind: AgentKind::Endogenous { index }, path, entry: None, exit: None, preferred_speed });
    }
    place_stops(patch, &mut agents, &plans);
    (agents, notes)
}

/// Personal space `[m]` beyond 2r that a walker choosing where to stand
/// keeps from the others' initial paths.
pub const STANDING_SPACE: f64 = 0.5;

/// Clearance from obstacles `[m]` that a place to stand needs to be chosen
/// over the roomiest one (or as much as that one has, if less).
pub const STANDING_ROOM: f64 = 1.0;

/// Sweeps of [`place_stops`] over the waiting walkers.
const PLACING_SWEEPS: usize = 2;

/// Where the walkers that stop stand: each in turn (agent order,
/// [`PLACING_SWEEPS`] times over) takes, among its places ([`paced::Plan`])
/// with [`STANDING_ROOM`] from obstacles, the one whose path spends the
/// least time within 2r + [`STANDING_SPACE`] of the other agents' current
/// paths (every periodic instance, its own other instances included);
/// among equals, the first (most room from obstacles, then nearest
/// half-way). People stop out of the way of those walking by, which
/// spares collision removal the pushes that would make them shuffle.
/// O(sweeps · stopping agents · places · agents · segments · shifts).
fn place_stops(patch: &Patch, agents: &mut [Agent], plans: &[Option<Vec<paced::Plan>>]) {
    let pi = patch.header.period;
    let threshold = 2.0 * patch.header.agent_radius + STANDING_SPACE;
    for _ in 0..PLACING_SWEEPS {
        for (i, options) in plans.iter().enumerate() {
            let Some(options) = options.as_ref().filter(|o| o.len() > 1) else { continue };
            let room = options[0].room.min(STANDING_ROOM) - 1e-3;
            let mut best: Option<(f64, Path)> = None;
            for plan in options.iter().filter(|p| p.room >= room) {
                let path = with_free_points(&agents[i].path, &plan.points);
                let mut conflict = crate::proximity::overlap(&path, &path, pi, Some(0), threshold).1;
                for (j, other) in agents.iter().enumerate() {
                    if j != i {
                        conflict += crate::proximity::overlap(&path, &other.path, pi, None, threshold).1;
                    }
                }
                if best.as_ref().is_none_or(|b| conflict < b.0 - 1e-6) {
                    best = Some((conflict, path));
                }
            }
            if let Some((_, path)) = best {
                agents[i].path = path;
            }
        }
    }
}

/// `path` (an exogenous path: entry, stub end, free points, exit) with its
/// free points replaced by `free` (ending at the exit stub's start).
fn with_free_points(path: &Path, free: &[ControlPoint]) -> Path {
    let n = path.points.len();
    let mut points = path.points[..2].to_vec();
    points.extend_from_slice(free);
    let m = points.len();
    points[m - 1].kind = PointKind::Stub;
    points.push(path.points[n - 1]);
    Path { points, looped: false }
}

/// Shortest time `[s]` a walker's path spends between its two crossing
/// stubs: fewer, and it gets another period.
const MIN_FREE: f64 = 0.2;

/// The walking groups of `pairs` that walk in formation: for each entry
/// group ([`crate::matching::crossing_groups`]) whose members' exits are
/// all the members of one exit group, the indices into `pairs` of its
/// members in their order across the walking direction
/// ([`crate::matching::lateral_order`]), as [`crate::matching::match_patch`]
/// pairs them. O(pairs log pairs).
fn formation_groups(patch: &Patch, pairs: &[Pair], entries: &[Crossing], exits: &[Crossing]) -> Vec<Vec<usize>> {
    let exit_groups = crate::matching::crossing_groups(patch, exits);
    let mut exit_group_of = vec![None; exits.len()];
    for (g, members) in exit_groups.iter().enumerate() {
        members.iter().for_each(|&x| exit_group_of[x] = Some(g));
    }
    let mut pair_of_entry = vec![None; entries.len()];
    for (i, pair) in pairs.iter().enumerate() {
        pair_of_entry[pair.entry] = Some(i);
    }
    let mut out = Vec::new();
    for group in crate::matching::crossing_groups(patch, entries) {
        let Some(members) = group.iter().map(|&e| pair_of_entry[e]).collect::<Option<Vec<usize>>>() else { continue };
        let target = exit_group_of[pairs[members[0]].exit];
        let together = target.is_some()
            && members.iter().all(|&i| exit_group_of[pairs[i].exit] == target)
            && target.is_some_and(|g| exit_groups[g].len() == members.len());
        if together {
            let crossings: Vec<Crossing> = members.iter().map(|&i| entries[pairs[i].entry]).collect();
            out.push(crate::matching::lateral_order(&crossings).into_iter().map(|k| members[k]).collect());
        }
    }
    out
}

/// The initial path from `e` to `x` with at least `min_free` `[s]` between
/// its stubs, a note if no obstacle-free route exists, and the ways of
/// walking it if the walker waits.
fn exogenous_path(
    patch: &Patch,
    router: &Router,
    e: &Crossing,
    x: &Crossing,
    min_free: f64,
) -> (Path, Option<String>, Option<Vec<paced::Plan>>) {
    let depth = patch.stub_depth();
    let (pi, r, l) = (patch.header.period, patch.header.agent_radius, patch.header.size);
    let paper = patch.solver.method == SolverKind::Paper;
    let pace = patch.walker_speed(e);
    let tau_e = e.time_to_depth(depth);
    let tau_x = x.time_to_depth(depth);
    let q_e = e.position + e.velocity * tau_e;
    let q_x = x.position - x.velocity * tau_x;
    let dt0 = matching_duration(e.t, x.t, pi);
    // Smallest number of extra periods leaving some time between the stubs.
    let mut k_min = 0usize;
    while dt0 + k_min as f64 * pi - tau_e - tau_x < min_free {
        k_min += 1;
    }
    let free_time = |k: usize| dt0 + k as f64 * pi - tau_e - tau_x;

    // Spatial route between the stub ends.
    let mut waypoints = vec![q_e];
    let mut note = None;
    if e.side == x.side {
        let d = (q_x - q_e).norm();
        let reach = pace * free_time(k_min) / 2.0;
        let h = (reach * reach - d * d / 4.0).max(0.0).sqrt().clamp(2.0_f64.min(l / 4.0), l / 2.0 - r);
        let n = crate::geometry::v2(e.side.inward_normal());
        let mid = (e.position + x.position) / 2.0 + n * h;
        waypoints.push(clamp_inside(mid, r, l));
    }
    waypoints.push(q_x);
    let (route, blocked) = router.route_through(&waypoints);
    if blocked {
        note =
            Some("no obstacle-free route was found between the crossings; the initial path crosses an obstacle".into());
    }
    let length: f64 = route.windows(2).map(|w| (w[1] - w[0]).norm()).sum();
    let k = if paper {
        paper_extra_periods(patch, length, free_time, k_min)
    } else {
        crate::pace::extra_periods(
            length,
            free_time(0),
            pi,
            crate::pace::hurry_limit(pace, patch.header.comfort_speed),
            k_min,
        )
    };
    let t_in = e.t;
    let t_out = e.t + dt0 + k as f64 * pi;
    let (t_a, t_b) = (t_in + tau_e, t_out - tau_x);
    let mut points = vec![ControlPoint { p: e.position, t: t_in, kind: PointKind::Boundary }];
    points.push(ControlPoint { p: q_e, t: t_a, kind: PointKind::Stub });
    let free = t_b - t_a;
    let slowest = if paper {
        patch.solver.slow_factor * pace
    } else {
        // A given boundary speed is the walker's walking speed; a drawn one
        // its pace, walked at its stride with stops.
        let factor = if patch.velocity_given(e) {
            patch.solver.wait_factor.min(crate::pace::CALM_FACTOR)
        } else {
            patch.solver.wait_factor
        };
        crate::pace::stride_speed(pace, factor, patch.header.comfort_speed)
    };
    let plans = (!paper && !blocked)
        .then(|| {
            paced::paced_plans(
                (q_e, e.velocity, t_a),
                (q_x, x.velocity, t_b),
                &route[1..route.len() - 1],
                slowest,
                (r, l),
                &|p| {
                    patch
                        .obstacles
                        .iter()
                        .map(|o| crate::geometry::obstacle_signed_distance(p, o).0)
                        .fold(f64::INFINITY, f64::min)
                },
            )
        })
        .flatten()
        .map(|p| p.into_iter().filter(|plan| clear_of_obstacles(patch, q_e, &plan.points)).collect::<Vec<_>>())
        .filter(|p| !p.is_empty());
    match plans.as_ref().map(|p| &p[0]) {
        Some(plan) => points.extend_from_slice(&plan.points),
        None => {
            let slow = length / free < slowest;
            timed_route(&route, t_a, t_b, slow.then_some(pace), &mut points)
        }
    }
    let n = points.len();
    points[n - 1].kind = PointKind::Stub;
    points.push(ControlPoint { p: x.position, t: t_out, kind: PointKind::Boundary });
    (Path { points, looped: false }, note, plans)
}

/// Clearance `[m]` beyond r that the project's solvers first route with
/// round obstacles (people keep a wider berth than the 10 cm the tight
/// route allows).
pub const WIDE_BERTH: f64 = 0.45;

/// Whether a path turns by more than 0.3 rad at some control point (a
/// route that fell back to straight legs).
fn has_kinks(path: &Path) -> bool {
    path.points.windows(3).any(|w| {
        let (a, b) = (w[1].p - w[0].p, w[2].p - w[1].p);
        a.norm() > 1e-6 && b.norm() > 1e-6 && a.angle(&b) > 0.3
    })
}

/// The seed paper's extra periods: above `fast_factor × u_cft`, the `k`
/// (from `k_min`, 12 at most) whose speed is nearest u_cft.
fn paper_extra_periods(patch: &Patch, length: f64, free_time: impl Fn(usize) -> f64, k_min: usize) -> usize {
    let u_cft = patch.header.comfort_speed;
    if length / free_time(k_min) <= patch.solver.fast_factor * u_cft {
        return k_min;
    }
    (k_min..k_min + 12)
        .min_by(|&a, &b| {
            let da = (length / free_time(a) - u_cft).abs();
            let db = (length / free_time(b) - u_cft).abs();
            da.total_cmp(&db)
        })
        .unwrap_or(k_min)
}

/// Whether the polyline from `start` through `points` keeps r + 5 cm from
/// every obstacle.
fn clear_of_obstacles(patch: &Patch, start: Vec2, points: &[ControlPoint]) -> bool {
    let r = patch.header.agent_radius;
    let mut prev = start;
    points.iter().all(|c| {
        let ok = patch.obstacles.iter().all(|o| segment_obstacle_distance(prev, c.p, o).1 >= r + 0.05);
        prev = c.p;
        ok
    })
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
    // A two-point loop gets a middle point so it can bend (a standing
    // agent's points are then held).
    if points.len() == 2 {
        let p = points[0].p;
        points.insert(1, ControlPoint::free(p, t0 + pi / 2.0));
    }
    let last = points.len() - 1;
    points[last].p = points[0].p;
    if w.len() == 1 {
        for c in &mut points {
            c.kind = PointKind::Held;
        }
    }
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

    /// A straight exogenous path from `a` to `b` (stubs of 0.3 m at 1 m/s),
    /// walked from `t0` to `t1`, with its free points.
    fn straight(a: Vec2, b: Vec2, t0: f64, t1: f64) -> Path {
        let d = (b - a).normalize();
        let points = vec![
            ControlPoint { p: a, t: t0, kind: PointKind::Boundary },
            ControlPoint { p: a + d * 0.3, t: t0 + 0.3, kind: PointKind::Stub },
            ControlPoint { p: b - d * 0.3, t: t1 - 0.3, kind: PointKind::Stub },
            ControlPoint { p: b, t: t1, kind: PointKind::Boundary },
        ];
        Path { points, looped: false }
    }

    #[test]
    fn a_walker_stops_out_of_the_way_of_another() {
        let p = patch(r#"{"format":1,"size":16,"period":60,"sides":{}}"#);
        let r = p.header.agent_radius;
        // A crosses south to north in 40 s at a stride of 1 m/s: it stands
        // about 25 s, half-way first.
        let v = Vec2::new(0.0, 1.0);
        let (qa, qb) = (Vec2::new(8.0, 0.3), Vec2::new(8.0, 15.7));
        let plans = paced::paced_plans((qa, v, 0.3), (qb, v, 39.7), &[], 1.0, (r, 16.0), &|_| f64::INFINITY).unwrap();
        assert!(plans.len() > 1 && plans.iter().all(|x| x.stop.is_some()));
        let a_path =
            with_free_points(&straight(Vec2::new(8.0, 0.0), Vec2::new(8.0, 16.0), 0.0, 40.0), &plans[0].points);
        a_path.check().unwrap();
        // B crosses west to east through the half-way stop, while A stands there.
        let mid = a_path.points.iter().position(|c| (c.p - Vec2::new(8.0, 8.0)).norm() < 0.1).unwrap();
        let t_mid = a_path.points[mid].t + 5.0;
        let b_path = straight(Vec2::new(0.0, 8.0), Vec2::new(16.0, 8.0), t_mid - 8.0, t_mid + 8.0);
        let agent = |path: Path| Agent {
            kind: AgentKind::Endogenous { index: 0 },
            path,
            entry: None,
            exit: None,
            preferred_speed: 1.0,
        };
        let mut agents = vec![agent(a_path.clone()), agent(b_path)];
        let before = crate::proximity::closest_periodic(&agents[0].path, &agents[1].path, 60.0, None).unwrap();
        assert!(before.distance < 2.0 * r, "{}", before.distance);
        place_stops(&p, &mut agents, &[Some(plans), None]);
        agents[0].path.check().unwrap();
        let after = crate::proximity::closest_periodic(&agents[0].path, &agents[1].path, 60.0, None).unwrap();
        assert!(after.distance >= 2.0 * r + STANDING_SPACE, "{}", after.distance);
        // Still the same walk: same ends, same route.
        assert_eq!(agents[0].path.points[0], a_path.points[0]);
        assert_eq!(agents[0].path.points.last(), a_path.points.last());
        assert!(agents[0].path.points.iter().all(|c| (c.p.x - 8.0).abs() < 1e-9));
    }

    #[test]
    fn a_drawn_pace_strides_and_a_given_speed_keeps_walking() {
        // Two walkers with 24 s for 16 m: one drawn (strides at 1.3 × its
        // pace and stands), one given 1.0 m/s (walks at 0.9 m/s at least and
        // stands less).
        let p = patch(
            r#"{"format":1,"size":16,"period":30,"sides":{
                "south":{"entries":[{"s":4,"t":0},{"s":12,"t":3,"velocity":[0,1.0]}]},
                "north":{"exits":[{"s":12,"t":24},{"s":4,"t":27}]}}}"#,
        );
        let pairs = crate::matching::match_patch(&p, crate::model::MatchingMode::Stable);
        let (agents, _) = initial_paths(&p, &pairs);
        for a in &agents {
            let e = a.entry.unwrap();
            // Between the stubs, ramps to the stub speeds (1.33 m/s, the
            // default velocity of the exits) left out: the cruise.
            let n = a.path.points.len();
            let cruise = (a.path.points[1].t + 1.0, a.path.points[n - 2].t - 1.0);
            let fastest = (1..n - 2)
                .filter(|&k| a.path.points[k].t >= cruise.0 && a.path.points[k + 1].t <= cruise.1)
                .map(|k| a.path.segment_velocity(k).norm())
                .fold(0.0, f64::max);
            let still: f64 = (0..a.path.points.len() - 1)
                .filter(|&k| a.path.segment_velocity(k).norm() < 1e-6)
                .map(|k| a.path.points[k + 1].t - a.path.points[k].t)
                .sum();
            if p.velocity_given(&e) {
                assert_eq!(a.preferred_speed, 1.0);
                assert!(fastest <= 1.0 + 1e-6, "{fastest}");
            } else {
                let stride = crate::pace::stride_speed(a.preferred_speed, 1.3, 1.33);
                assert!(stride > a.preferred_speed);
                assert!((fastest - stride).abs() < 0.02, "{fastest} vs {stride}");
                assert!(still > 1.0, "{still}");
            }
        }
    }
}
