//! Validation of patterns and patches: every problem, each with its field
//! path, the offending value and what would fix it (docs/design.md "Conventions",
//! limits checked on load).

use crate::broadphase::{Aabb, for_each_close_pair, for_each_close_pair_between};
use crate::geometry::{
    closest_approach, polygon_area, polygon_self_intersects, rotate_quarter, segment_obstacle_distance, v2,
};
use crate::limits::{MAX_ITERATIONS, MAX_TACKS_PER_PERIOD};
use crate::model::{
    BoundaryPoint, Crossing, Direction, Obstacle, Patch, PatchHeader, Pattern, PointId, Side, SolverOptions,
};
use crate::problem::{FieldPath, Problem, ProblemList, Target};

/// Smallest speed across a side `[m/s]` a boundary velocity may have: slower
/// crossings would take an unbounded time to clear the seam.
pub const MIN_NORMAL_SPEED: f64 = 0.1;

/// Practical range of the patch side L `[m]`: beyond it the bake's work and
/// the baked file grow without bound (and 32-bit export loses precision).
pub const SIZE_RANGE: (f64, f64) = (1.0, 1000.0);
/// Practical range of the period π `[s]`.
pub const PERIOD_RANGE: (f64, f64) = (1.0, 3600.0);
/// Practical range of the comfort speed u_cft `[m/s]` (pedestrians).
pub const COMFORT_SPEED_RANGE: (f64, f64) = (0.1, 10.0);
/// Smallest agent radius r `[m]`.
pub const MIN_AGENT_RADIUS: f64 = 0.01;
pub use crate::limits::MAX_BOUNDARY_SPEED;

/// Most members of a walking group (a group of boundary points, issue 31):
/// Yersin et al. 2008, §5, groups of 2 to 5; the ETH/UCY annotations have
/// a few of 6 (`data/groups.json`), which walk as sub-groups.
pub const MAX_GROUP_SIZE: usize = 5;
/// Largest distance `[m]` along the side between neighbouring members of a
/// walking group where they cross it: real pairs walk 0.47–1.14 m apart
/// (p10–p90 over the ETH/UCY scenes, `data/groups.json`); a group crossing
/// a side at a slant spreads wider along it.
pub const GROUP_SPACING: f64 = 1.5;
/// Longest time `[s]` over which all members of a walking group cross their
/// side (the shortest arc of the period holding their times): a group in
/// line (p90 spacing 1.1 m at 0.7–1.2 m/s) crosses over up to about 1.5 s a
/// pair; 3 s leaves room for a triad.
pub const GROUP_TIME_SPAN: f64 = 3.0;

fn problem(path: FieldPath, target: Target, message: impl Into<String>) -> Problem {
    Problem::new(path, target, message)
}

/// The path of a patch parameter (`size`, `solver.margin`, …).
fn param(name: &str) -> FieldPath {
    name.split('.').fold(FieldPath::new(), |p, f| p.field(f))
}

fn fmt_v(v: [f64; 2]) -> String {
    format!("[{}, {}]", v[0], v[1])
}

/// Checks one pattern on its own: length and period, arc positions and times in
/// range, finite numbers, velocities that cross the side the right way (entries
/// inward, exits outward, in the side frame). `prefix` leads every field path
/// (e.g. `sides.east`); on a patch's `side`, problems target its points;
/// velocities are shown turned by `display_turns` quarter turns (the frame the
/// user wrote them in). O(points).
pub fn validate_pattern_in(
    pattern: &Pattern,
    prefix: &FieldPath,
    side: Option<Side>,
    display_turns: i32,
) -> Vec<Problem> {
    let mut out = Vec::new();
    let (l, pi) = (pattern.length, pattern.period);
    let whole = side.map_or(Target::Document, Target::Side);
    if !(l.is_finite() && (SIZE_RANGE.0..=SIZE_RANGE.1).contains(&l)) {
        out.push(problem(
            prefix.field("length"),
            whole,
            format!("= {l} is not in [{}, {}] [m]", SIZE_RANGE.0, SIZE_RANGE.1),
        ));
    }
    if !(pi.is_finite() && (PERIOD_RANGE.0..=PERIOD_RANGE.1).contains(&pi)) {
        out.push(problem(
            prefix.field("period"),
            whole,
            format!("= {pi} is not in [{}, {}] [s]", PERIOD_RANGE.0, PERIOD_RANGE.1),
        ));
    }
    for direction in [Direction::Entry, Direction::Exit] {
        for (i, b) in pattern.points(direction).iter().enumerate() {
            let at = prefix.field(direction.field()).index(i);
            let target = side.map_or(Target::Document, |side| Target::Point(PointId { side, direction, index: i }));
            if !(b.s.is_finite() && b.s >= 0.0 && b.s <= l) {
                out.push(problem(
                    at.field("s"),
                    target,
                    format!("= {} is not in [0, {l}] (the side's length) [m]", b.s),
                ));
            }
            if !(b.t.is_finite() && b.t >= 0.0 && b.t < pi) {
                out.push(problem(at.field("t"), target, format!("= {} is not in [0, {pi}) (the period) [s]", b.t)));
            }
            if let Some(v) = b.velocity {
                let shown = crate::geometry::arr(rotate_quarter(v2(v), display_turns));
                if !(v[0].is_finite() && v[1].is_finite()) {
                    out.push(problem(at.field("velocity"), target, format!("= {} must be finite [m/s]", fmt_v(shown))));
                    continue;
                }
                if v[0].hypot(v[1]) > MAX_BOUNDARY_SPEED {
                    out.push(problem(
                        at.field("velocity"),
                        target,
                        format!("= {} is faster than {MAX_BOUNDARY_SPEED} m/s", fmt_v(shown)),
                    ));
                    continue;
                }
                // Side frame: y is the inward normal.
                let inward = v[1];
                let across = match direction {
                    Direction::Entry => inward,
                    Direction::Exit => -inward,
                };
                if across <= 0.0 {
                    let want = match direction {
                        Direction::Entry => "an entry's velocity must point into the patch",
                        Direction::Exit => "an exit's velocity must point out of the patch",
                    };
                    out.push(problem(
                        at.field("velocity"),
                        target,
                        format!("= {} does not cross the side: {want}", fmt_v(shown)),
                    ));
                } else if across < MIN_NORMAL_SPEED {
                    out.push(problem(
                        at.field("velocity"),
                        target,
                        format!(
                            "= {} crosses the side at only {across:.3} m/s; at least {MIN_NORMAL_SPEED} m/s is needed to clear the seam",
                            fmt_v(shown)
                        ),
                    ));
                }
            }
        }
    }
    check_groups(pattern, prefix, side, &mut out);
    out
}

/// The walking groups of one side: per id, its members as (direction,
/// index), in document order (entries first). O(points log points).
pub fn side_groups(pattern: &Pattern) -> std::collections::BTreeMap<u32, Vec<(Direction, usize)>> {
    let mut groups: std::collections::BTreeMap<u32, Vec<(Direction, usize)>> = Default::default();
    for direction in [Direction::Entry, Direction::Exit] {
        for (i, b) in pattern.points(direction).iter().enumerate() {
            if let Some(g) = b.group {
                groups.entry(g).or_default().push((direction, i));
            }
        }
    }
    groups
}

/// The shortest arc `[s]` of the period `pi` holding every time of `times`
/// (their spread on the circle of the period). O(n log n).
fn periodic_span(times: &mut [f64], pi: f64) -> f64 {
    times.sort_by(f64::total_cmp);
    let (Some(&first), Some(&last)) = (times.first(), times.last()) else { return 0.0 };
    let widest_gap = times.windows(2).map(|w| w[1] - w[0]).fold(first + pi - last, f64::max);
    pi - widest_gap
}

/// The walking-group problems of one side (see [`BoundaryPoint::group`]):
/// members all entries or all exits, 2 to [`MAX_GROUP_SIZE`] of them,
/// neighbours along the side at most [`GROUP_SPACING`] apart, all crossing
/// within [`GROUP_TIME_SPAN`]. Points whose `s` or `t` is out of range are
/// left to their own problems. O(points log points).
///
/// [`BoundaryPoint::group`]: crate::model::BoundaryPoint::group
fn check_groups(pattern: &Pattern, prefix: &FieldPath, side: Option<Side>, out: &mut Vec<Problem>) {
    let (l, pi) = (pattern.length, pattern.period);
    let point = |(direction, index): (Direction, usize)| pattern.points(direction)[index];
    let at = |(direction, index): (Direction, usize)| prefix.field(direction.field()).index(index);
    let target = |(direction, index): (Direction, usize)| {
        side.map_or(Target::Document, |side| Target::Point(PointId { side, direction, index }))
    };
    let name = |m: (Direction, usize)| format!("{}[{}]", m.0.field(), m.1);
    for (id, members) in side_groups(pattern) {
        let (&first, rest) = members.split_first().expect("a group id has a member");
        if let Some(&other) = rest.iter().find(|m| m.0 != first.0) {
            out.push(problem(
                at(other).field("group"),
                target(other),
                format!(
                    "= {id} is also the group of {}: a group enters together or leaves together; give the {} another id",
                    name(first),
                    other.0.field()
                ),
            ));
            continue;
        }
        if members.len() < 2 {
            out.push(problem(
                at(first).field("group"),
                target(first),
                format!("= {id} has no other member on this side; a group has 2 to {MAX_GROUP_SIZE} (remove the id or group another point with it)"),
            ));
            continue;
        }
        if members.len() > MAX_GROUP_SIZE {
            let m = members[MAX_GROUP_SIZE];
            out.push(problem(
                at(m).field("group"),
                target(m),
                format!(
                    "= {id} has {} members; a group has at most {MAX_GROUP_SIZE} (split it into groups of 2 or 3)",
                    members.len()
                ),
            ));
            continue;
        }
        let valid = |b: &BoundaryPoint| {
            b.s.is_finite() && (0.0..=l).contains(&b.s) && b.t.is_finite() && (0.0..pi).contains(&b.t)
        };
        if !members.iter().all(|&m| valid(&point(m))) {
            continue;
        }
        let mut along = members.clone();
        along.sort_by(|&a, &b| point(a).s.total_cmp(&point(b).s));
        for w in along.windows(2) {
            let gap = point(w[1]).s - point(w[0]).s;
            if gap > GROUP_SPACING {
                out.push(problem(
                    at(w[1]).field("s"),
                    target(w[1]),
                    format!(
                        "= {} is {gap:.3} m along the side from {} (s = {}) of the same group {id}; members cross within {GROUP_SPACING} m of their neighbour",
                        point(w[1]).s,
                        name(w[0]),
                        point(w[0]).s
                    ),
                ));
            }
        }
        let mut times: Vec<f64> = members.iter().map(|&m| point(m).t).collect();
        let span = periodic_span(&mut times, pi);
        if span > GROUP_TIME_SPAN {
            let last = *members.last().expect("two members or more");
            out.push(problem(
                at(last).field("t"),
                target(last),
                format!(
                    "= {}: the members of group {id} cross over {span:.3} s (t = {:?}); a group crosses within {GROUP_TIME_SPAN} s",
                    point(last).t,
                    members.iter().map(|&m| point(m).t).collect::<Vec<_>>()
                ),
            ));
        }
    }
}

/// Checks a pattern file's content (see [`validate_pattern_in`]; velocities in
/// the side frame, paths from the file's root).
pub fn validate_pattern(pattern: &Pattern) -> Vec<Problem> {
    let n = pattern.entries.len() + pattern.exits.len();
    if n > crate::limits::MAX_SIDE_POINTS {
        return vec![problem(
            FieldPath::new(),
            Target::Document,
            format!(
                "has {n} boundary points ({} entries, {} exits); a side holds at most {}",
                pattern.entries.len(),
                pattern.exits.len(),
                crate::limits::MAX_SIDE_POINTS
            ),
        )];
    }
    crate::problem::capped(validate_pattern_in(pattern, &FieldPath::new(), None, 0))
}

/// Checks a resolved patch and returns every problem found: parameter limits,
/// the counts of [`crate::limits::count_problems`], each side's points,
/// parity, obstacles (inside A, valid, not covering a crossing), endogenous
/// waypoints (and the speed between them), solver options, and pairs of
/// boundary points too close in space and time for any two paths to stay 2r
/// apart. At most [`crate::problem::PROBLEMS_PER_KIND`] problems of each kind
/// are listed, then how many more ([`ProblemList`]).
///
/// Cost: O(p + V + W) for p boundary points, V polygon vertices (O(V²) per
/// polygon for its self-intersection) and W waypoints, plus the close
/// pairs found by a grid broad phase ([`crate::broadphase`]) — not all
/// pairs. A patch over a count limit gets its count problems and its
/// parameter problems only, in O(p).
pub fn validate_patch(patch: &Patch) -> Vec<Problem> {
    let mut out = ProblemList::new();
    check_patch(patch, &mut out);
    out.into_vec()
}

/// The problems of a patch's parameters alone — L, π, r, u_cft and the
/// solver's options — exactly as [`validate_patch`] reports them (which
/// calls it): the one source of these limits, which the editor checks a
/// typed value against. O(1).
pub fn parameter_problems(header: &PatchHeader, solver: &SolverOptions) -> Vec<Problem> {
    let mut out = Vec::new();
    check_parameters(header, solver, &mut out);
    out
}

/// Pushes the parameter problems; returns whether L, π, r and u_cft are sane
/// (the checks that follow need them).
fn check_parameters(header: &PatchHeader, solver: &SolverOptions, out: &mut impl Extend<Problem>) -> bool {
    let (l, pi, r, u) = (header.size, header.period, header.agent_radius, header.comfort_speed);
    let mut params_ok = true;
    let mut push = |p: Problem| out.extend(std::iter::once(p));
    let in_range = |x: f64, (lo, hi): (f64, f64)| x.is_finite() && (lo..=hi).contains(&x);
    if !in_range(l, SIZE_RANGE) {
        push(problem(
            param("size"),
            Target::Document,
            format!("= {l} is not in [{}, {}] [m]", SIZE_RANGE.0, SIZE_RANGE.1),
        ));
        params_ok = false;
    }
    if !in_range(pi, PERIOD_RANGE) {
        push(problem(
            param("period"),
            Target::Document,
            format!("= {pi} is not in [{}, {}] [s]", PERIOD_RANGE.0, PERIOD_RANGE.1),
        ));
        params_ok = false;
    }
    if !(r.is_finite() && r >= MIN_AGENT_RADIUS && (!l.is_finite() || r < l / 4.0)) {
        push(problem(
            param("agent_radius"),
            Target::Document,
            format!("= {r} must be in [{MIN_AGENT_RADIUS}, L/4) = [{MIN_AGENT_RADIUS}, {}) [m]", l / 4.0),
        ));
        params_ok = false;
    }
    if !in_range(u, COMFORT_SPEED_RANGE) {
        push(problem(
            param("comfort_speed"),
            Target::Document,
            format!("= {u} is not in [{}, {}] [m/s]", COMFORT_SPEED_RANGE.0, COMFORT_SPEED_RANGE.1),
        ));
        params_ok = false;
    }
    for p in validate_solver(header, solver) {
        push(p);
    }
    params_ok
}

fn check_patch(patch: &Patch, out: &mut ProblemList) {
    let params_ok = check_parameters(&patch.header, &patch.solver, out);
    let (l, pi, r) = (patch.header.size, patch.header.period, patch.header.agent_radius);
    let counts = crate::limits::count_problems(patch);
    if !counts.is_empty() {
        // Too many elements to check one by one in bounded time.
        out.extend(counts);
        return;
    }
    if !params_ok {
        // Everything below depends on sane parameters.
        return;
    }

    for side in Side::ALL {
        let key = FieldPath::new().field("sides").field(side.name());
        let prefix = match &patch.pattern_sources[side] {
            Some(_) => key.field("pattern").inside(None, &FieldPath::new()),
            None => key,
        };
        let turns = if patch.pattern_sources[side].is_some() { 0 } else { side.index() as i32 };
        let mut p = patch.sides[side].clone();
        p.length = l;
        p.period = pi;
        out.extend(validate_pattern_in(&p, &prefix, Some(side), turns));
    }

    let entries: usize = Side::ALL.iter().map(|s| patch.sides[*s].entries.len()).sum();
    let exits: usize = Side::ALL.iter().map(|s| patch.sides[*s].exits.len()).sum();
    if entries != exits {
        out.push(problem(
            param("sides"),
            Target::Parity,
            format!(
                "break parity: {entries} entries but {exits} exits over the four sides (every agent that comes in must go out; add or remove points)"
            ),
        ));
    }

    // Walking groups: every group that enters leaves as a group of the same
    // size (issue 31); groups with problems of their own are left out.
    let mut sizes = [Vec::new(), Vec::new()];
    for side in Side::ALL {
        for members in side_groups(&patch.sides[side]).into_values() {
            if (2..=MAX_GROUP_SIZE).contains(&members.len()) && members.iter().all(|m| m.0 == members[0].0) {
                sizes[(members[0].0 == Direction::Exit) as usize].push(members.len());
            }
        }
    }
    sizes[0].sort_unstable();
    sizes[1].sort_unstable();
    if sizes[0] != sizes[1] {
        out.push(problem(
            param("sides"),
            Target::Parity,
            format!(
                "have entering groups of sizes {:?} but leaving groups of sizes {:?} over the four sides: every group that enters must leave as a group of the same size (give the points the same group sizes on entry and exit)",
                sizes[0], sizes[1]
            ),
        ));
    }

    let obstacles_ok = validate_obstacles(patch, out);
    validate_endogenous(patch, obstacles_ok, out);

    // Crossing geometry needs valid points.
    if out.iter().any(|p| p.path.starts_with_field("sides") && p.path.segments().len() > 1) {
        return;
    }
    let crossings = patch.crossings();
    let depth = patch.stub_depth();
    if obstacles_ok {
        // Obstacles against crossing stubs, through a grid: pairs whose boxes
        // come within r.
        let stubs: Vec<Aabb> = crossings
            .iter()
            .map(|c| {
                let ((a, _), (b, _)) = c.stub(depth);
                [a.x.min(b.x), a.y.min(b.y), a.x.max(b.x), a.y.max(b.y)]
            })
            .collect();
        let shapes: Vec<Aabb> = patch.obstacles.iter().map(obstacle_box).collect();
        for_each_close_pair_between(&shapes, &stubs, r, |k, i| {
            let (o, c) = (&patch.obstacles[k], &crossings[i]);
            let ((a, _), (b, _)) = c.stub(depth);
            let (_, d, _) = segment_obstacle_distance(a, b, o);
            let at = FieldPath::new().field("obstacles").index(k);
            if d < r && out.admits(&at, &Target::Obstacle(k)) {
                out.push_admitted(problem(
                    at,
                    Target::Obstacle(k),
                    format!(
                        "covers the crossing at {} (s = {}, t = {}): it comes {:.3} m from the agent's path there, less than r = {r} m",
                        c.path(),
                        c.s,
                        c.t,
                        d.max(0.0)
                    ),
                ));
            }
        });
    }
    // Pairs of boundary points, through a grid over their fixed parts' boxes:
    // only pairs within 2r in space can come closer than 2r.
    let parts: Vec<Aabb> = crossings.iter().map(|c| fixed_parts_box(c, depth, 2.0 * r)).collect();
    for_each_close_pair(&parts, 2.0 * r, |i, j| {
        let (a, b) = (&crossings[i], &crossings[j]);
        if let Some((d, t)) = fixed_parts_distance(a, b, depth, 2.0 * r, pi)
            && d < 2.0 * r - 1e-9
        {
            let target = Target::PointPair(a.id(), b.id());
            if out.admits(&a.path(), &target) {
                out.push_admitted(problem(
                    a.path(),
                    target,
                    format!(
                        "and {} are too close to be separable: the agents crossing there (straight for {depth} m either side of the seam) come {d:.3} m apart at t = {t:.2} s, less than 2r = {} m; move one of them in s or t",
                        b.path(),
                        2.0 * r
                    ),
                ));
            }
        }
    });
}

/// The box `[xmin, ymin, xmax, ymax]` of an obstacle `[m]`.
fn obstacle_box(o: &Obstacle) -> Aabb {
    match o {
        Obstacle::Circle { center, radius } => {
            [center[0] - radius, center[1] - radius, center[0] + radius, center[1] + radius]
        }
        Obstacle::Polygon(vs) => {
            vs.iter().fold([f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY], |b, v| {
                [b[0].min(v[0]), b[1].min(v[1]), b[2].max(v[0]), b[3].max(v[1])]
            })
        }
    }
}

/// The box of a boundary point's fixed parts: its stub (`stub_depth`) and
/// its ghost (`ghost_depth`), in space `[m]`.
fn fixed_parts_box(c: &Crossing, stub_depth: f64, ghost_depth: f64) -> Aabb {
    let ((a, _), (b, _)) = c.stub(stub_depth);
    let ((g, _), (h, _)) = c.ghost(ghost_depth);
    [
        a.x.min(b.x).min(g.x).min(h.x),
        a.y.min(b.y).min(g.y).min(h.y),
        a.x.max(b.x).max(g.x).max(h.x),
        a.y.max(b.y).max(g.y).max(h.y),
    ]
}

/// Smallest distance `[m]` between the fixed parts (crossing stub inside the
/// patch, ghost outside) of two boundary points over all period shifts, and
/// when `[s]`. Stub against stub and stub against ghost count; ghost against
/// ghost lies outside the patch and is the neighbours' business. Cost: O(1 +
/// the parts' durations / period) closest approaches.
pub fn fixed_parts_distance(
    a: &Crossing,
    b: &Crossing,
    stub_depth: f64,
    ghost_depth: f64,
    period: f64,
) -> Option<(f64, f64)> {
    let parts = |c: &Crossing| [c.stub(stub_depth), c.ghost(ghost_depth)];
    let (pa, pb) = (parts(a), parts(b));
    let mut best: Option<(f64, f64)> = None;
    for (ia, sa) in pa.iter().enumerate() {
        for (ib, sb) in pb.iter().enumerate() {
            if ia == 1 && ib == 1 {
                continue;
            }
            // Every shift at which the two parts coexist.
            let k0 = ((sa.0.1 - sb.1.1) / period).floor() as i64;
            let k1 = ((sa.1.1 - sb.0.1) / period).ceil() as i64;
            for k in k0..=k1 {
                let shift = k as f64 * period;
                let t0 = sa.0.1.max(sb.0.1 + shift);
                let t1 = sa.1.1.min(sb.1.1 + shift);
                if t1 < t0 {
                    continue;
                }
                let va = (sa.1.0 - sa.0.0) / (sa.1.1 - sa.0.1);
                let vb = (sb.1.0 - sb.0.0) / (sb.1.1 - sb.0.1);
                let pa0 = sa.0.0 + va * (t0 - sa.0.1);
                let pb0 = sb.0.0 + vb * (t0 - shift - sb.0.1);
                let (dt, d) = closest_approach(pa0, va, pb0, vb, t1 - t0);
                if best.is_none_or(|(bd, _)| d < bd) {
                    best = Some((d, (t0 + dt).rem_euclid(period)));
                }
            }
        }
    }
    best
}

fn validate_solver(header: &PatchHeader, s: &SolverOptions) -> Vec<Problem> {
    let r = header.agent_radius;
    let mut out = Vec::new();
    if !(1..=MAX_ITERATIONS).contains(&s.max_iterations) {
        out.push(problem(
            param("solver.max_iterations"),
            Target::Document,
            format!("= {} must be in [1, {MAX_ITERATIONS}]", s.max_iterations),
        ));
    }
    if !(s.margin.is_finite() && s.margin >= 0.0 && s.margin < r.max(0.0)) {
        out.push(problem(
            param("solver.margin"),
            Target::Document,
            format!("= {} must be in [0, r) = [0, {r}) [m]", s.margin),
        ));
    }
    if let Some(d) = s.stub_depth
        && !(d.is_finite() && d >= 0.01 && d <= header.size / 4.0)
    {
        out.push(problem(param("solver.stub_depth"), Target::Document, format!("= {d} must be in [0.01, L/4] [m]")));
    }
    if !(s.fast_factor.is_finite() && s.fast_factor > 1.0) {
        out.push(problem(param("solver.fast_factor"), Target::Document, format!("= {} must be > 1", s.fast_factor)));
    }
    if !(s.wait_factor.is_finite() && (0.0..=2.0).contains(&s.wait_factor)) {
        out.push(problem(
            param("solver.wait_factor"),
            Target::Document,
            format!("= {} must be in [0, 2]", s.wait_factor),
        ));
    }
    if !(s.slow_factor.is_finite() && (0.0..1.0).contains(&s.slow_factor)) {
        out.push(problem(
            param("solver.slow_factor"),
            Target::Document,
            format!("= {} must be in [0, 1)", s.slow_factor),
        ));
    }
    if !(s.merge_interval.is_finite() && s.merge_interval >= 0.0 && s.merge_interval < header.period) {
        out.push(problem(
            param("solver.merge_interval"),
            Target::Document,
            format!("= {} must be in [0, period) [s]", s.merge_interval),
        ));
    }
    let min_tack = header.period / MAX_TACKS_PER_PERIOD;
    if !(s.tack_interval.is_finite() && s.tack_interval > 0.0 && s.tack_interval <= header.period) {
        out.push(problem(
            param("solver.tack_interval"),
            Target::Document,
            format!("= {} must be in (0, period] [s]", s.tack_interval),
        ));
    } else if s.tack_interval < min_tack {
        out.push(problem(
            param("solver.tack_interval"),
            Target::Document,
            format!(
                "= {} s gives more than {MAX_TACKS_PER_PERIOD:.0} smoothing tacks per period; use {min_tack} s or more",
                s.tack_interval
            ),
        ));
    }
    if let Some(d) = s.max_deviation
        && !(d.is_finite() && d > 0.0)
    {
        out.push(problem(
            param("solver.max_deviation"),
            Target::Document,
            format!("= {d} must be a finite number > 0 [m]"),
        ));
    }
    out
}

/// Returns whether every obstacle is well-formed (later checks need that).
fn validate_obstacles(patch: &Patch, out: &mut ProblemList) -> bool {
    let l = patch.header.size;
    let inside = |p: [f64; 2]| p.iter().all(|c| c.is_finite() && *c >= 0.0 && *c <= l);
    let before = out.len();
    for (k, o) in patch.obstacles.iter().enumerate() {
        match o {
            Obstacle::Circle { center, radius } => {
                let at = FieldPath::new().field("obstacles").index(k).field("circle");
                let target = Target::Obstacle(k);
                if !(radius.is_finite() && *radius > 0.0) {
                    out.push(problem(
                        at.field("radius"),
                        target,
                        format!("= {radius} must be a finite number > 0 [m]"),
                    ));
                } else if !(inside([center[0] - radius, center[1] - radius])
                    && inside([center[0] + radius, center[1] + radius]))
                {
                    out.push(problem(
                        at.field("center"),
                        target,
                        format!("= {} with radius {radius} reaches outside the patch [0, {l}]² [m]", fmt_v(*center)),
                    ));
                }
            }
            Obstacle::Polygon(vs) => {
                let at = FieldPath::new().field("obstacles").index(k).field("polygon");
                let target = Target::Obstacle(k);
                if vs.len() < 3 {
                    out.push(problem(at, target, format!("has {} vertices; a polygon needs at least 3", vs.len())));
                    continue;
                }
                let mut ok = true;
                for (i, v) in vs.iter().enumerate() {
                    if !inside(*v) {
                        out.push(problem(
                            at.index(i),
                            target,
                            format!("= {} is outside the patch [0, {l}]² [m]", fmt_v(*v)),
                        ));
                        ok = false;
                    }
                }
                if ok && polygon_area(vs).abs() < 1e-6 {
                    out.push(problem(at, target, "has no area (its vertices are collinear or repeated)"));
                } else if ok && polygon_self_intersects(vs) {
                    out.push(problem(at, target, "crosses itself; give the vertices in order around the outline"));
                }
            }
        }
    }
    out.len() == before
}

fn validate_endogenous(patch: &Patch, obstacles_ok: bool, out: &mut ProblemList) {
    let (l, pi, r) = (patch.header.size, patch.header.period, patch.header.agent_radius);
    // Waypoints inside the patch, to be checked against the obstacles.
    let mut placed: Vec<(usize, usize)> = Vec::new();
    for (k, e) in patch.endogenous.iter().enumerate() {
        let at = FieldPath::new().field("endogenous").index(k);
        let target = Target::Endogenous(k);
        if e.waypoints.is_empty() {
            out.push(problem(at.field("waypoints"), target, "is empty; give at least one waypoint"));
            continue;
        }
        let mut times_ok = true;
        for (i, w) in e.waypoints.iter().enumerate() {
            let wat = at.field("waypoints").index(i);
            let p = w.position;
            if !p.iter().all(|c| c.is_finite() && *c >= r && *c <= l - r) {
                out.push(problem(
                    wat.field("position"),
                    target,
                    format!(
                        "= {} must be inside the patch and at least r = {r} m from its sides, in [{r}, {}]² [m]",
                        fmt_v(p),
                        l - r
                    ),
                ));
            } else {
                placed.push((k, i));
            }
            if !w.t.is_finite() {
                out.push(problem(wat.field("t"), target, format!("= {} must be finite [s]", w.t)));
                times_ok = false;
            } else if i == 0 && !(0.0..pi).contains(&w.t) {
                out.push(problem(
                    wat.field("t"),
                    target,
                    format!("= {} is not in [0, {pi}) (the first waypoint's time) [s]", w.t),
                ));
                times_ok = false;
            } else if i > 0 {
                let prev = e.waypoints[i - 1].t;
                if w.t <= prev {
                    out.push(problem(
                        wat.field("t"),
                        target,
                        format!("= {} must be later than the previous waypoint's {prev} [s]", w.t),
                    ));
                    times_ok = false;
                }
                let first = e.waypoints[0].t;
                if w.t >= first + pi {
                    out.push(problem(
                        wat.field("t"),
                        target,
                        format!("= {} must be less than one period after the first waypoint ({first} + {pi}) [s]", w.t),
                    ));
                    times_ok = false;
                }
            }
        }
        // The speed of each leg, the closing one included (back at the first
        // waypoint a period after leaving it): the boundary velocities' cap.
        let n = e.waypoints.len();
        let finite = e.waypoints.iter().all(|w| w.position.iter().all(|c| c.is_finite()));
        if times_ok && finite && n > 1 {
            for i in 0..n {
                let (a, b) = (&e.waypoints[i], &e.waypoints[(i + 1) % n]);
                let dt = if i + 1 < n { b.t - a.t } else { b.t + pi - a.t };
                let d = (a.position[0] - b.position[0]).hypot(a.position[1] - b.position[1]);
                let speed = d / dt;
                if speed > MAX_BOUNDARY_SPEED {
                    let next =
                        if i + 1 < n { format!("waypoints[{}]", i + 1) } else { "waypoints[0] a period later".into() };
                    out.push(problem(
                        at.field("waypoints").index(i),
                        target,
                        format!(
                            "to {next}: {d:.3} m in {dt:.3} s is {speed:.1} m/s, faster than {MAX_BOUNDARY_SPEED} m/s; space the times further apart or the positions closer"
                        ),
                    ));
                }
            }
        }
    }
    if !obstacles_ok || patch.obstacles.is_empty() {
        return;
    }
    // Waypoints against obstacles, through a grid: pairs within r.
    let points: Vec<Aabb> = placed
        .iter()
        .map(|&(k, i)| {
            let p = patch.endogenous[k].waypoints[i].position;
            [p[0], p[1], p[0], p[1]]
        })
        .collect();
    let shapes: Vec<Aabb> = patch.obstacles.iter().map(obstacle_box).collect();
    for_each_close_pair_between(&points, &shapes, r, |w, j| {
        let (k, i) = placed[w];
        let p = patch.endogenous[k].waypoints[i].position;
        let (d, _) = crate::geometry::obstacle_signed_distance(v2(p), &patch.obstacles[j]);
        let wat = FieldPath::new().field("endogenous").index(k).field("waypoints").index(i).field("position");
        if d < r && out.admits(&wat, &Target::Endogenous(k)) {
            out.push_admitted(problem(
                wat,
                Target::Endogenous(k),
                format!("= {} is {:.3} m from obstacles[{j}], less than r = {r} m", fmt_v(p), d),
            ));
        }
    });
}

/// How a side meets the opposite side of a copy of the same patch (tiling
/// with itself, docs/design.md "Mirror rule"): the points of `here` (a
/// side-frame pattern) with no partner in the mirror of `opposite` (the
/// opposite side's pattern), as `(direction, index)`; empty when that seam
/// is seamless. Positions, times (modulo `period` `[s]`) and velocities
/// match within `tol` (`[m]`, `[s]`, `[m/s]`); a missing velocity is the
/// normal at `comfort` `[m/s]`. O(p²) for p points of a side.
pub fn mirror_mismatches(
    here: &Pattern,
    opposite: &Pattern,
    period: f64,
    comfort: f64,
    tol: f64,
) -> Vec<(Direction, usize)> {
    let there = opposite.mirror();
    let velocity = |b: &crate::model::BoundaryPoint, d: Direction| {
        b.velocity.unwrap_or(match d {
            Direction::Entry => [0.0, comfort],
            Direction::Exit => [0.0, -comfort],
        })
    };
    let mut out = Vec::new();
    for d in [Direction::Entry, Direction::Exit] {
        let mut used = vec![false; there.points(d).len()];
        for (i, p) in here.points(d).iter().enumerate() {
            let vp = velocity(p, d);
            let hit = there.points(d).iter().enumerate().position(|(j, q)| {
                let dt = (p.t - q.t).abs();
                let dt = dt.min(period - dt);
                let vq = velocity(q, d);
                !used[j]
                    && (p.s - q.s).abs() <= tol
                    && dt <= tol
                    && (vp[0] - vq[0]).abs() <= tol
                    && (vp[1] - vq[1]).abs() <= tol
            });
            match hit {
                Some(j) => used[j] = true,
                None => out.push((d, i)),
            }
        }
    }
    out
}

/// Tolerance of [`self_tiling_note`] (`[m]`, `[s]`, `[m/s]`).
pub const SELF_TILING_TOLERANCE: f64 = 1e-6;

/// A note when the patch does not tile with itself — its north side is not
/// the mirror of its south side, or its west side not that of its east
/// side, so that copies of it side by side leave walkers with no one to
/// continue them — naming the first points without a partner; `None` when
/// it tiles. Not a problem: a patch composed with other neighbours
/// (`crowdpatch compose`) need not tile with itself. O(p²) per side.
pub fn self_tiling_note(patch: &Patch) -> Option<String> {
    let (pi, u) = (patch.header.period, patch.header.comfort_speed);
    let mut seams = Vec::new();
    let mut unmatched = 0;
    for (a, b) in [(Side::South, Side::North), (Side::East, Side::West)] {
        let here = mirror_mismatches(&patch.sides[a], &patch.sides[b], pi, u, SELF_TILING_TOLERANCE);
        let there = mirror_mismatches(&patch.sides[b], &patch.sides[a], pi, u, SELF_TILING_TOLERANCE);
        if here.is_empty() && there.is_empty() {
            continue;
        }
        unmatched += here.len() + there.len();
        let first = here
            .first()
            .map(|&(d, i)| (a, d, i))
            .or_else(|| there.first().map(|&(d, i)| (b, d, i)))
            .map(|(side, d, i)| {
                let p = &patch.sides[side].points(d)[i];
                format!("sides.{}.{}[{i}] at s = {} m, t = {} s", side.name(), d.field(), p.s, p.t)
            })
            .unwrap_or_default();
        seams.push(format!("{} is not the mirror of {} (first: {first})", b.name(), a.name()));
    }
    (!seams.is_empty()).then(|| {
        format!(
            "does not tile with itself: {}; {unmatched} boundary point(s) have no partner across the seam \
             (fine for a tile composed with other neighbours; the editor's Make tileable mirrors south and east)",
            seams.join("; ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{BoundaryPoint, PatchDocument, SideDocument};
    use std::path::Path;

    fn side(entries: &[(f64, f64)], exits: &[(f64, f64)]) -> Option<SideDocument> {
        let points = |v: &[(f64, f64)]| {
            Some(v.iter().map(|&(s, t)| BoundaryPoint { s, t, velocity: None, group: None }).collect())
        };
        Some(SideDocument { entries: points(entries), exits: points(exits), ..SideDocument::default() })
    }

    #[test]
    fn a_patch_tiles_with_itself_when_north_mirrors_south_and_west_mirrors_east() {
        let mut doc = PatchDocument::new(16.0, 10.0);
        // South entries at s mirror to north exits at L − s (docs/design.md
        // "Mirror rule"); an inline side is in the patch frame.
        doc.sides.south = side(&[(4.0, 1.0)], &[]);
        doc.sides.north = side(&[], &[(12.0, 1.0)]);
        let tiles = doc.resolve(None, Path::new(".")).unwrap();
        let mirrored = crate::model::Pattern::mirror(&tiles.sides[Side::South]);
        assert_eq!(mirror_mismatches(&tiles.sides[Side::North], &tiles.sides[Side::South], 10.0, 1.33, 1e-6), vec![]);
        assert_eq!(tiles.sides[Side::North].exits.len(), mirrored.exits.len());
        assert_eq!(self_tiling_note(&tiles), None);
        // The north exit a second later: no partner either way.
        doc.sides.north = side(&[], &[(12.0, 2.0)]);
        let shifted = doc.resolve(None, Path::new(".")).unwrap();
        let note = self_tiling_note(&shifted).unwrap();
        assert!(note.contains("north is not the mirror of south") && note.contains("2 boundary point(s)"), "{note}");
        assert!(note.contains("sides.south.entries[0] at s = 4 m, t = 1 s"), "{note}");
        assert!(!note.contains("west"), "{note}");
    }

    /// Points `(s, t, group)`, inline (patch-frame, no velocity).
    fn grouped(v: &[(f64, f64, Option<u32>)]) -> Option<Vec<BoundaryPoint>> {
        Some(v.iter().map(|&(s, t, group)| BoundaryPoint { s, t, velocity: None, group }).collect())
    }

    /// A patch whose south side has `entries` and north side `exits`.
    fn south_north(entries: &[(f64, f64, Option<u32>)], exits: &[(f64, f64, Option<u32>)]) -> Vec<Problem> {
        let mut doc = PatchDocument::new(16.0, 10.0);
        doc.sides.south = Some(SideDocument { entries: grouped(entries), ..SideDocument::default() });
        doc.sides.north = Some(SideDocument { exits: grouped(exits), ..SideDocument::default() });
        checked(&doc)
    }

    /// The problems of a patch document: those of resolving it (each side's
    /// points), else [`validate_patch`]'s.
    fn checked(doc: &PatchDocument) -> Vec<Problem> {
        doc.resolve(None, Path::new(".")).map_or_else(|p| p, |patch| validate_patch(&patch))
    }

    fn shown(problems: &[Problem]) -> Vec<String> {
        problems.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn groups_that_enter_and_leave_together_are_valid() {
        // Two pairs enter south 0.8 m apart, two pairs leave north (one
        // 0.6 s apart over the period's end), a single each way; ids are
        // each side's own (1 on both sides).
        let p = south_north(
            &[(4.0, 1.0, Some(1)), (4.8, 1.2, Some(1)), (10.0, 2.0, Some(2)), (10.8, 2.0, Some(2)), (10.0, 6.0, None)],
            &[(8.0, 9.8, Some(1)), (8.8, 0.4, Some(1)), (3.0, 3.0, Some(3)), (3.9, 3.1, Some(3)), (12.0, 5.0, None)],
        );
        assert_eq!(shown(&p), Vec::<String>::new());
    }

    #[test]
    fn group_problems_name_the_field_and_value() {
        let one = south_north(&[(4.0, 1.0, Some(7)), (8.0, 1.0, None)], &[(4.0, 5.0, None), (12.0, 5.0, None)]);
        assert!(
            shown(&one).iter().any(|p| p.starts_with("sides.south.entries[0].group = 7 has no other member")),
            "{:?}",
            shown(&one)
        );
        // 2 m apart along the side.
        let far = south_north(&[(4.0, 1.0, Some(1)), (6.0, 1.0, Some(1))], &[(4.0, 5.0, Some(1)), (5.0, 5.0, Some(1))]);
        assert!(
            shown(&far)
                .iter()
                .any(|p| p.starts_with("sides.south.entries[1].s = 6 is 2.000 m along the side from entries[0]")),
            "{:?}",
            shown(&far)
        );
        // 4 s apart (and not across the period's end).
        let late =
            south_north(&[(4.0, 1.0, Some(1)), (5.0, 5.0, Some(1))], &[(4.0, 5.0, Some(1)), (5.0, 5.0, Some(1))]);
        assert!(
            shown(&late)
                .iter()
                .any(|p| p.starts_with("sides.south.entries[1].t = 5: the members of group 1 cross over 4.000 s")),
            "{:?}",
            shown(&late)
        );
        // One id for an entry and an exit of one side.
        let mut doc = PatchDocument::new(16.0, 10.0);
        doc.sides.south = Some(SideDocument {
            entries: grouped(&[(4.0, 1.0, Some(2))]),
            exits: grouped(&[(9.0, 1.0, Some(2))]),
            ..SideDocument::default()
        });
        let both = shown(&checked(&doc));
        assert!(
            both.iter().any(|p| p.starts_with("sides.south.exits[0].group = 2 is also the group of entries[0]")),
            "{both:?}"
        );
        // Six members.
        let six: Vec<(f64, f64, Option<u32>)> = (0..6).map(|k| (2.0 + 0.8 * k as f64, 1.0, Some(4))).collect();
        let singles: Vec<(f64, f64, Option<u32>)> = (0..6).map(|k| (2.0 + 2.0 * k as f64, 5.0, None)).collect();
        let big = shown(&south_north(&six, &singles));
        assert!(big.iter().any(|p| p.starts_with("sides.south.entries[5].group = 4 has 6 members")), "{big:?}");
        // A pair enters, two singles leave: sizes differ.
        let unmatched =
            shown(&south_north(&[(4.0, 1.0, Some(1)), (4.8, 1.0, Some(1))], &[(4.0, 5.0, None), (12.0, 5.0, None)]));
        assert!(
            unmatched
                .iter()
                .any(|p| p.starts_with("sides have entering groups of sizes [2] but leaving groups of sizes []")),
            "{unmatched:?}"
        );
    }

    #[test]
    fn a_group_problem_in_a_pattern_file_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pair.pattern.json");
        std::fs::write(
            &file,
            r#"{"format": 1, "length": 16, "period": 10, "entries": [{"s": 4, "t": 1, "group": 3}, {"s": 9, "t": 1, "group": 3}]}"#,
        )
        .unwrap();
        let e = crate::document::load_pattern(&file).unwrap_err().to_string();
        assert!(e.contains("pair.pattern.json: entries[1].s = 9 is 5.000 m along the side"), "{e}");
        // Referenced from a patch: the pattern file, and the path through the
        // patch's side.
        let patch = dir.path().join("p.patch.json");
        std::fs::write(
            &patch,
            r#"{"format": 1, "size": 16, "period": 10, "sides": {"west": {"pattern": "pair.pattern.json"}}}"#,
        )
        .unwrap();
        let e = crate::document::load_patch(&patch).unwrap_err().to_string();
        assert!(e.contains("pair.pattern.json") && e.contains("entries[1].s = 9 is 5.000 m"), "{e}");
    }

    #[test]
    fn documents_without_groups_are_written_as_before_and_groups_round_trip() {
        let alone = BoundaryPoint { s: 4.0, t: 1.5, velocity: None, group: None };
        assert_eq!(serde_json::to_string(&alone).unwrap(), r#"{"s":4.0,"t":1.5}"#);
        let member = BoundaryPoint { group: Some(2), ..alone };
        let json = serde_json::to_string(&member).unwrap();
        assert_eq!(json, r#"{"s":4.0,"t":1.5,"group":2}"#);
        assert_eq!(serde_json::from_str::<BoundaryPoint>(&json).unwrap(), member);
        // Every shipped pattern reads and writes back to the same bytes, a
        // group key on the members of a group only.
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("patterns");
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let file: crate::model::PatternFile = serde_json::from_str(&text).unwrap();
            let again = serde_json::to_string_pretty(&file).unwrap();
            let members = file.entries.iter().chain(&file.exits).filter(|b| b.group.is_some()).count();
            assert_eq!(again.matches("\"group\"").count(), members, "{}", path.display());
            // Byte for byte: the shipped files are as `save_pattern` writes.
            assert_eq!(again + "\n", text, "{}", path.display());
        }
        // The mirror rule keeps a group: the group leaving one side is the
        // group entering the neighbour.
        let mut p = crate::model::Pattern::empty(16.0, 10.0);
        p.exits = vec![member, BoundaryPoint { s: 4.8, ..member }];
        let m = p.mirror();
        assert_eq!(m.entries.iter().map(|b| b.group).collect::<Vec<_>>(), [Some(2), Some(2)]);
        assert!(validate_pattern(&m).is_empty(), "{:?}", validate_pattern(&m));
    }
}
