//! Limits on what a document may ask of a bake, so that every input costs
//! bounded time and memory, and the one check of them ([`check_bake`]) that
//! `crowdpatch validate` and `crowdpatch bake` (before any work) both call:
//! the two cannot disagree (docs/design.md "Limits").
//!
//! Each limit is derived from what the stage it feeds costs, measured on the
//! reference machine (2 cores, 24 GB; docs/benchmarks.md "Growth"):
//!
//! | stage | cost | bounded by |
//! |---|---|---|
//! | reading | O(bytes) | [`MAX_DOCUMENT_BYTES`] |
//! | validation | O(p + V + W + close pairs) (grid broad phase) | the counts below |
//! | 1. matching | O(p² log p) stable, O(p³) optimal | [`MAX_BOUNDARY_POINTS`] |
//! | 2. initial paths | O(n) + one A* per blocked leg over ≤ 2000² cells; router grid O(cells + covered cells · V) | [`MAX_OBSTACLES`], [`MAX_OBSTACLE_VERTICES`], [`MAX_TOTAL_WAYPOINTS`] |
//! | 3. collision removal | O(n² · c · s) matrix, O(n · c · s) per iteration | [`MAX_ITERATIONS`]; social forces [`MAX_SOCIAL_FORCE_WORK`] |
//! | 4. smoothing | O(tacks) per path (O(n) spline solves), contacts O(n² · c · s) per round | [`MAX_TACKS_PER_PERIOD`] |
//! | 5. animation | O(agents · joints · samples) time and memory | [`MAX_TRACK_SAMPLES`], [`MAX_JOINT_SAMPLES`] |
//!
//! (p boundary points, n agents, c control points per path, s period
//! shifts, V polygon vertices, W waypoints.)

use crate::model::{Obstacle, Patch, Side};
use crate::problem::{FieldPath, Problem, Target};

/// Largest document read `[bytes]` (patch, pattern, map): 16 MiB holds
/// every limit below many times over (a boundary point is about 40 bytes of
/// JSON), and reading one (380 000 points, 14 MB) takes under a second and
/// 70 MB before its counts refuse it.
pub const MAX_DOCUMENT_BYTES: u64 = 16 << 20;

/// Largest number of boundary points (entries + exits) on one side. Half of
/// [`MAX_BOUNDARY_POINTS`]: a side holds at most the whole traffic of two.
pub const MAX_SIDE_POINTS: usize = 500;

/// Largest number of boundary points (entries + exits) of a patch: 500
/// entry/exit pairs. Measured (docs/benchmarks.md "Growth"): a bake of 400 pairs on a
/// 64 m patch takes minutes and gigabytes with skeletal animation; the
/// stable matching of 500 pairs takes milliseconds, the optimal one (O(p³))
/// about a second.
pub const MAX_BOUNDARY_POINTS: usize = 1000;

/// Largest number of obstacles of a patch. Every path segment is checked
/// against every obstacle during collision removal and smoothing.
pub const MAX_OBSTACLES: usize = 256;

/// Largest number of vertices of one polygon obstacle (its self-intersection
/// check is O(V²): 0.5 M segment pairs at this limit).
pub const MAX_POLYGON_VERTICES: usize = 1024;

/// Largest number of polygon vertices over all obstacles: each distance
/// query to the obstacles is O(V), and the initial paths' router grid (up to
/// 2000² cells) asks one per covered cell.
pub const MAX_OBSTACLE_VERTICES: usize = 4096;

/// Largest number of endogenous agents of a patch.
pub const MAX_ENDOGENOUS: usize = 256;

/// Largest number of waypoints of one endogenous agent.
pub const MAX_WAYPOINTS: usize = 256;

/// Largest number of waypoints over all endogenous agents: each leg that
/// meets an obstacle is routed by one A* search.
pub const MAX_TOTAL_WAYPOINTS: usize = 4096;

/// Largest speed of a boundary velocity, and of an endogenous agent between
/// two waypoints (the straight leg over its time) `[m/s]`: four times a
/// fast run, far beyond walking; above it the solvers' pushes and the
/// footstep planner have nothing a walker could follow.
pub const MAX_BOUNDARY_SPEED: f64 = 10.0;

/// Largest `solver.max_iterations`: one iteration of the `default` solver
/// costs O(n · c · s), about 0.6 ms at 400 pairs (docs/benchmarks.md "Growth"), so the
/// cap bounds collision removal to about a minute there.
pub const MAX_ITERATIONS: usize = 100_000;

/// Largest number of smoothing tacks per period (`period / tack_interval`):
/// a path of k periods gets k times as many, each a row of its O(n) spline
/// solve and a step of its resampling.
pub const MAX_TACKS_PER_PERIOD: f64 = 100_000.0;

/// Range of the skeletal sample rate (`--frame-rate`) `[Hz]`.
pub const FRAME_RATE_RANGE: (f64, f64) = (1.0, 240.0);

/// Largest number of samples per joint track and period (`period ×
/// frame rate`, rounded): the GLB exporter's limit, the same number here so
/// that no bake fails at export after its work.
pub const MAX_TRACK_SAMPLES: f64 = 100_000.0;

/// Largest *estimated* number of joint samples of a skeletal bake
/// ([`estimated_joint_samples`]: agents × their estimated span × frame rate
/// × joints). The footstep planning and synthesis keep about 270 bytes and
/// spend about 10 µs per estimated joint sample (measured: 200 pairs on a
/// 64 m patch, 13.4 M estimated, 3.5 GB and 2 minutes; 400 pairs, 27.7 M,
/// 7.4 GB and 5 minutes): the limit keeps a skeletal bake under about 8 GB
/// and five minutes on the reference machine.
pub const MAX_JOINT_SAMPLES: f64 = 30.0e6;

/// Integration time step of the `social-forces` solver `[s]`: its loop
/// ([`crate::collision::social_forces`]) and its cost estimate here both read
/// it, so it lives in the lower of the two layers.
pub const SOCIAL_FORCES_DT: f64 = 0.05;

/// Sweeps of the `social-forces` solver over the time line (its loop and its
/// cost estimate, as [`SOCIAL_FORCES_DT`]).
pub const SOCIAL_FORCES_SWEEPS: usize = 3;

/// Largest estimated work of the `social-forces` solver, in agent-neighbour
/// interactions (sweeps × time steps × agents × (agents + obstacles +
/// ghosts)); about 15 ns each (measured: 100 pairs on 32 m, 1.1 × 10⁸ in
/// 1.5 s; 400 pairs on 64 m, 3.2 × 10⁹ in 52 s), so under three minutes at
/// this limit.
pub const MAX_SOCIAL_FORCE_WORK: f64 = 1.0e10;

/// What a bake animates, for its budget: the character's joint count and
/// the joint-track sample rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AnimationLoad {
    /// Joints of the character.
    pub joints: usize,
    /// Joint-track sample rate `[Hz]`.
    pub frame_rate: f64,
    /// How the frame rate is set, for messages (`--frame-rate`).
    pub frame_rate_flag: &'static str,
}

fn problem(path: FieldPath, target: Target, message: String) -> Problem {
    Problem::new(path, target, message)
}

fn field(name: &str) -> FieldPath {
    name.split('.').fold(FieldPath::new(), |p, f| p.field(f))
}

/// The counts of a patch against their limits: points per side and per
/// patch, obstacles, polygon vertices, endogenous agents and waypoints.
/// O(sides + obstacles + agents). [`crate::validate::validate_patch`] runs
/// it first and skips its pair checks when a count is over its limit, so a
/// document of a million points is refused in the time it takes to read it.
pub fn count_problems(patch: &Patch) -> Vec<Problem> {
    let mut out = Vec::new();
    let mut total = 0usize;
    for side in Side::ALL {
        let p = &patch.sides[side];
        let n = p.entries.len() + p.exits.len();
        total += n;
        if n > MAX_SIDE_POINTS {
            let path = match &patch.pattern_sources[side] {
                Some(_) => field("sides").field(side.name()).field("pattern"),
                None => field("sides").field(side.name()),
            };
            out.push(problem(
                path,
                Target::Side(side),
                format!(
                    "has {n} boundary points ({} entries, {} exits); a side holds at most {MAX_SIDE_POINTS}",
                    p.entries.len(),
                    p.exits.len()
                ),
            ));
        }
    }
    if total > MAX_BOUNDARY_POINTS {
        out.push(problem(
            field("sides"),
            Target::Parity,
            format!("hold {total} boundary points; a patch holds at most {MAX_BOUNDARY_POINTS} (entries and exits)"),
        ));
    }
    if patch.obstacles.len() > MAX_OBSTACLES {
        out.push(problem(
            field("obstacles"),
            Target::Document,
            format!("has {} obstacles; a patch holds at most {MAX_OBSTACLES}", patch.obstacles.len()),
        ));
    }
    let mut vertices = 0usize;
    for (k, o) in patch.obstacles.iter().enumerate() {
        if let Obstacle::Polygon(vs) = o {
            vertices += vs.len();
            if vs.len() > MAX_POLYGON_VERTICES {
                out.push(problem(
                    field("obstacles").index(k).field("polygon"),
                    Target::Obstacle(k),
                    format!("has {} vertices; a polygon has at most {MAX_POLYGON_VERTICES}", vs.len()),
                ));
            }
        }
    }
    if vertices > MAX_OBSTACLE_VERTICES {
        out.push(problem(
            field("obstacles"),
            Target::Document,
            format!("have {vertices} polygon vertices in all; at most {MAX_OBSTACLE_VERTICES}"),
        ));
    }
    if patch.endogenous.len() > MAX_ENDOGENOUS {
        out.push(problem(
            field("endogenous"),
            Target::Document,
            format!("has {} agents; a patch holds at most {MAX_ENDOGENOUS}", patch.endogenous.len()),
        ));
    }
    let mut waypoints = 0usize;
    for (k, e) in patch.endogenous.iter().enumerate() {
        waypoints += e.waypoints.len();
        if e.waypoints.len() > MAX_WAYPOINTS {
            out.push(problem(
                field("endogenous").index(k).field("waypoints"),
                Target::Endogenous(k),
                format!("has {} waypoints; an agent has at most {MAX_WAYPOINTS}", e.waypoints.len()),
            ));
        }
    }
    if waypoints > MAX_TOTAL_WAYPOINTS {
        out.push(problem(
            field("endogenous"),
            Target::Document,
            format!("have {waypoints} waypoints in all; at most {MAX_TOTAL_WAYPOINTS}"),
        ));
    }
    out
}

/// Upper estimate of how long `[s]` an exogenous agent lives in the patch:
/// its stubs, then a route of at most 2L (a diagonal with detours) walked
/// at comfort speed, rounded up to the next period — and never more than
/// the extra-period rule of the initial paths allows (the smallest count
/// clearing the stubs, then at most 12 more; docs/design.md "2. Initial
/// paths"). Longer detours around obstacles can exceed the first term (not
/// the second).
pub fn estimated_agent_span(patch: &Patch) -> f64 {
    let (l, pi, u) = (patch.header.size, patch.header.period, patch.header.comfort_speed);
    let depth = patch.stub_depth();
    let crossings = patch.crossings();
    let stub = |entry: bool| {
        crossings
            .iter()
            .filter(|c| (c.direction == crate::model::Direction::Entry) == entry)
            .map(|c| c.time_to_depth(depth))
            .fold(0.0, f64::max)
    };
    let stubs = stub(true) + stub(false);
    let k_min = ((stubs + 0.2) / pi).ceil();
    let walk = 2.0 * l / u.max(1e-9) + stubs;
    (((walk / pi).ceil() + 1.0) * pi).min((k_min + 13.0) * pi)
}

/// Estimated joint samples of a skeletal bake: per exogenous agent (one
/// per entry) its [`estimated_agent_span`], per endogenous agent one period,
/// times the frame rate and the joints.
pub fn estimated_joint_samples(patch: &Patch, animation: &AnimationLoad) -> f64 {
    let entries: usize = Side::ALL.iter().map(|s| patch.sides[*s].entries.len()).sum();
    let span = entries as f64 * estimated_agent_span(patch) + patch.endogenous.len() as f64 * patch.header.period;
    span * animation.frame_rate * animation.joints as f64
}

/// Everything a bake of `patch` refuses beyond the document's own problems
/// ([`crate::validate::validate_patch`], checked on load): the counts
/// ([`count_problems`]), the iteration cap, the tack count, the social-forces
/// work and, with `animation`, the frame rate, the samples per joint track
/// and the joint-sample budget. `crowdpatch validate` and `crowdpatch bake`
/// both call it, bake before any work, so they agree. Each problem names the
/// field (or command-line flag) and the value, and what to change.
/// O(p + obstacles + agents).
pub fn check_bake(patch: &Patch, animation: Option<&AnimationLoad>) -> Vec<Problem> {
    let mut out = count_problems(patch);
    let (l, pi) = (patch.header.size, patch.header.period);
    if !(l.is_finite() && pi.is_finite() && l > 0.0 && pi > 0.0) {
        // The document's own problems say why; nothing can be estimated.
        return out;
    }
    let s = &patch.solver;
    if s.max_iterations > MAX_ITERATIONS {
        out.push(problem(
            field("solver.max_iterations"),
            Target::Document,
            format!("= {} is more than {MAX_ITERATIONS}, the most a bake runs", s.max_iterations),
        ));
    }
    if s.tack_interval.is_finite() && s.tack_interval > 0.0 && pi / s.tack_interval > MAX_TACKS_PER_PERIOD {
        out.push(problem(
            field("solver.tack_interval"),
            Target::Document,
            format!(
                "= {} s gives {:.0} smoothing tacks per period; at most {MAX_TACKS_PER_PERIOD:.0}: use {} s or more",
                s.tack_interval,
                pi / s.tack_interval,
                pi / MAX_TACKS_PER_PERIOD
            ),
        ));
    }
    if s.method == crate::model::SolverKind::SocialForces {
        let entries: usize = Side::ALL.iter().map(|side| patch.sides[*side].entries.len()).sum();
        let agents = (entries + patch.endogenous.len()) as f64;
        let points = (2 * entries) as f64;
        let steps = SOCIAL_FORCES_SWEEPS as f64 * estimated_agent_span(patch) / SOCIAL_FORCES_DT;
        let work = steps * agents * (agents + patch.obstacles.len() as f64 + points);
        if work > MAX_SOCIAL_FORCE_WORK {
            out.push(problem(
                field("solver.method"),
                Target::Document,
                format!(
                    "= \"social-forces\" would need about {work:.1e} agent interactions here (time steps of {} s over each agent's span × agents × neighbours); at most {MAX_SOCIAL_FORCE_WORK:.0e}: use \"default\", fewer agents or a shorter period",
                    SOCIAL_FORCES_DT
                ),
            ));
        }
    }
    let Some(a) = animation else { return out };
    let (lo, hi) = FRAME_RATE_RANGE;
    if !(a.frame_rate.is_finite() && (lo..=hi).contains(&a.frame_rate)) {
        out.push(problem(
            FieldPath::new(),
            Target::Document,
            format!("{} {}: must be in [{lo}, {hi}] Hz", a.frame_rate_flag, a.frame_rate),
        ));
        return out;
    }
    let per_period = (pi * a.frame_rate).round();
    if per_period > MAX_TRACK_SAMPLES {
        out.push(problem(
            field("period"),
            Target::Document,
            format!(
                "= {pi} s at {} {} Hz gives {per_period:.0} samples per joint track and period; at most {MAX_TRACK_SAMPLES:.0}: use {} {:.1} or less, a shorter period or --animation none",
                a.frame_rate_flag,
                a.frame_rate,
                a.frame_rate_flag,
                (MAX_TRACK_SAMPLES / pi * 10.0).floor() / 10.0
            ),
        ));
        return out;
    }
    let samples = estimated_joint_samples(patch, a);
    if samples > MAX_JOINT_SAMPLES {
        out.push(problem(
            field("sides"),
            Target::Document,
            format!(
                "ask for about {samples:.2e} joint samples of skeletal animation ({} agents walking about {:.0} s each at {} {} Hz, {} joints); at most {MAX_JOINT_SAMPLES:.1e} (about 8 GB): use fewer boundary points, a lower {}, or --animation none",
                Side::ALL.iter().map(|s| patch.sides[*s].entries.len()).sum::<usize>() + patch.endogenous.len(),
                estimated_agent_span(patch),
                a.frame_rate_flag,
                a.frame_rate,
                a.joints,
                a.frame_rate_flag
            ),
        ));
    }
    out
}
