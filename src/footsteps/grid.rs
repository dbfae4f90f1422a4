//! The plant grid of the footstep search (course notes, BPK §5;
//! docs/design.md "5a. Footsteps"): the plants a plan is made of — a foot
//! planting at a time of the grid of [`FootstepParams::time_step`] from the
//! start's left plant — with each plant's footprint made once, the path
//! sampled at each grid time, the true cost of a step between two plants
//! ([`PlantGrid::step_cost`], BPK §5.3) and a cheap lower bound of it
//! ([`PlantGrid::lower_bound`]) for the heuristic of [`super::relaxed`].

use super::gait::{BoundaryFootsteps, GaitModel, footprint, landing_on};
use super::params::FootstepParams;
use super::path::{at, at_within, key_after, wrap_angle_exact};
use crate::character::library::{AnnotationRange, BlendedStep};
use crowdpatch_runtime::format::{BakedAgent, Foot, Footstep};

/// The search's cost unit: a millijoule (costs are integers of it).
pub(super) const SCALE: f64 = 1000.0;

/// A cost `[J]` in the search's integer units (millijoules, rounded towards
/// zero: a monotone rounding, so a lower bound stays one).
pub(super) fn units(cost: f64) -> i64 {
    (cost * SCALE) as i64
}

/// A node of the plant graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Node {
    /// Grid time index (from the start's left plant) and the planted foot.
    Plant(i64, Foot),
    /// The goal's right plant.
    Goal,
}

/// The index of plant `(k, foot)` in arrays of both feet's plants by grid
/// time (`2 k + foot`).
pub(super) fn slot(k: i64, foot: Foot) -> usize {
    2 * k as usize + foot.index()
}

/// A plant's footstep with what its steps' costs ask of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Footprint {
    /// The footstep (its `lift` is its plant time until the plan's lifts are
    /// filled in).
    pub footstep: Footstep,
    /// The step length `[m]` the footprint was made for, clamped to the
    /// character's straight steps ([`GaitModel::clamp_length`]).
    pub length: f64,
    /// Cosine and sine of the footstep's heading.
    pub cos_sin: (f64, f64),
}

impl Footprint {
    /// A boundary footstep made for a step of `length` `[m]`.
    fn of(footstep: Footstep, length: f64) -> Footprint {
        Footprint { footstep, length, cos_sin: (footstep.heading.cos(), footstep.heading.sin()) }
    }
}

/// The part of a step's lower bound that is the path's, the same for both
/// feet (a plant's time and heading are the path's).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct PathPart {
    /// The step's duration `[s]`.
    pub duration: f64,
    /// The step's turn `[rad]`.
    pub turn: f64,
    /// The step's energy `[J]` ([`PlantGrid::energy_of`]).
    pub energy: f64,
}

/// The plants of one agent's footstep search: what the search asks of each
/// plant many times, made once. Grid times `k = 0..=k_max` from the start's
/// left plant; the goal is the goal's right plant at `goal_t`.
#[derive(Debug)]
pub(super) struct PlantGrid<'a> {
    gait: &'a GaitModel,
    agent: &'a BakedAgent,
    /// The planner's parameters.
    pub params: &'a FootstepParams,
    /// Time `[s]` of grid time 0: the start's left plant.
    t_start: f64,
    /// Grid step `[s]`.
    dt: f64,
    /// Time `[s]` of the goal's right plant.
    pub goal_t: f64,
    /// The last grid time (at or before `goal_t`).
    pub k_max: i64,
    /// The shortest step in grid times (at least one: the plants' graph is
    /// acyclic).
    pub k_min_step: i64,
    /// The longest step in grid times.
    pub k_max_step: i64,
    /// Grid times held: `k_max + 1`, at least 1.
    pub len: usize,
    /// The path at each grid time, and at `goal_t` (index `len`).
    path_at: Vec<[f64; 2]>,
    /// The first path key after each grid time.
    keys_after: Vec<usize>,
    /// The start's left plant (both feet's footprint at grid time 0).
    start: Footprint,
    /// The goal's right plant.
    goal: Footprint,
    /// The first path key after `goal_t`.
    goal_key: usize,
    /// Both feet's footprints at each grid time, by [`slot`].
    footprints: Vec<Footprint>,
    /// The natural durations and turns of each stance foot's blends.
    ranges: [AnnotationRange; 2],
}

impl<'a> PlantGrid<'a> {
    /// The plant grid of `agent` from `start`'s left plant to `goal`'s right
    /// plant at `goal_t` `[s]`. O(grid × log keys).
    pub fn new(
        gait: &'a GaitModel,
        agent: &'a BakedAgent,
        start: &BoundaryFootsteps,
        goal: &BoundaryFootsteps,
        goal_t: f64,
        params: &'a FootstepParams,
    ) -> PlantGrid<'a> {
        let dt = params.time_step;
        let k_max = ((goal_t - start.left.t) / dt).floor() as i64;
        let len = usize::try_from(k_max + 1).unwrap_or(0).max(1);
        let mut grid = PlantGrid {
            gait,
            agent,
            params,
            t_start: start.left.t,
            dt,
            goal_t,
            k_max,
            k_min_step: ((params.min_duration / dt).ceil() as i64).max(1),
            k_max_step: (params.max_duration / dt).floor() as i64,
            len,
            path_at: Vec::new(),
            keys_after: Vec::new(),
            start: Footprint::of(start.left, start.gait.step_length),
            goal: Footprint::of(goal.right, goal.gait.step_length),
            goal_key: key_after(agent, goal_t),
            footprints: Vec::new(),
            ranges: Foot::BOTH.map(|f| gait.library.annotation_range(f)),
        };
        // The path at each grid time, sampled once (the search asks for
        // each many times), and at the goal time.
        let times: Vec<f64> = (0..len as i64).map(|k| grid.time_of(k)).collect();
        grid.path_at = times.iter().map(|&t| at(agent, t).0).chain([at(agent, goal_t).0]).collect();
        grid.keys_after = times.iter().map(|&t| key_after(agent, t)).collect();
        // Every plant's footprint, made once per (k, foot): the heuristic
        // costs a bound of every step.
        let footprints = (0..len as i64).flat_map(|k| grid.footprints_made_at(k)).collect();
        grid.footprints = footprints;
        grid
    }

    /// Time `[s]` of grid time `k`.
    pub fn time_of(&self, k: i64) -> f64 {
        self.t_start + k as f64 * self.dt
    }

    /// The path's position `[m]` at grid time `k` (clamped to the grid).
    pub fn path_of(&self, k: i64) -> [f64; 2] {
        self.path_at[k.clamp(0, self.len as i64 - 1) as usize]
    }

    /// The path's position `[m]` at the goal's time.
    pub fn goal_position(&self) -> [f64; 2] {
        self.path_at[self.len]
    }

    /// The first path key after grid time `k` (clamped to the grid).
    fn key_of(&self, k: i64) -> usize {
        self.keys_after[k.clamp(0, self.len as i64 - 1) as usize]
    }

    /// The grid times a step from grid time `k` may last: from the shortest
    /// step to the longest one that does not pass the last grid time.
    pub fn steps_from(&self, k: i64) -> std::ops::RangeInclusive<i64> {
        self.k_min_step..=self.k_max_step.min(self.k_max - k)
    }

    /// The footprint of a plant of `foot` at grid time `k`: the root on the
    /// path facing its heading, the landing foot ahead of it by the offset
    /// of a straight step as long as the root's progress along that heading
    /// over the character's own step duration at the path's local speed.
    /// The progress is the smaller of the one before and the one after:
    /// round a sharp corner the root's chord runs sideways, and the landing
    /// foot is not a long stride ahead of it; a walker coming to a stop
    /// lands its foot beside it, not a stride ahead. A function of
    /// `(k, foot)` alone, so the search costs the very footprints the plan
    /// is made of. O(1) (made once by [`PlantGrid::new`]).
    pub fn footprint_at(&self, k: i64, foot: Foot) -> Footprint {
        self.footprints[slot(k, foot)]
    }

    /// Both feet's footprints at grid time `k` ([`PlantGrid::footprint_at`])
    /// at once: all but the offset of the foot is the path's.
    fn footprints_made_at(&self, k: i64) -> [Footprint; 2] {
        if k == 0 {
            return [self.start; 2];
        }
        let (gait, agent) = (self.gait, self.agent);
        let t = self.time_of(k);
        let (pn, h) = at(agent, t);
        let h_speed = 0.05;
        let (pa, _) = at(agent, t - h_speed);
        let (pb, _) = at(agent, t + h_speed);
        let speed = (pb[0] - pa[0]).hypot(pb[1] - pa[1]) / (2.0 * h_speed);
        let natural = gait.step_duration(speed);
        let (pp, _) = at(agent, (t - natural).max(self.t_start));
        let (pf, _) = at(agent, t + natural);
        let (c, s) = (h.cos(), h.sin());
        let along = |a: [f64; 2], b: [f64; 2]| ((b[0] - a[0]) * c + (b[1] - a[1]) * s).max(0.0);
        let length = along(pp, pn).min(along(pn, pf));
        Foot::BOTH.map(|foot| Footprint {
            footstep: footprint(gait, foot, t, (pn, h), (c, s), length),
            length: gait.clamp_length(foot, length),
            cos_sin: (c, s),
        })
    }

    /// The landing of a step onto `to` (its footprint) and the path there.
    fn target(&self, to: Node) -> (Footprint, [f64; 2]) {
        match to {
            Node::Goal => (self.goal, self.goal_position()),
            Node::Plant(kb, next) => (self.footprint_at(kb, next), self.path_of(kb)),
        }
    }

    /// The energy `[J]` of a step of `dur` `[s]` whose root goes from `ra`
    /// to `rb` `[m]` (BPK §5.3, `M (e_s dur + e_w d²/dur)`), and `d²`
    /// `[m²]`: the one expression of it for the step costs, their lower
    /// bounds and the straight-line heuristic.
    pub fn energy_of(&self, dur: f64, ra: [f64; 2], rb: [f64; 2]) -> (f64, f64) {
        let p = self.params;
        let d2 = (rb[0] - ra[0]).powi(2) + (rb[1] - ra[1]).powi(2);
        (p.mass * (p.e_s * dur + p.e_w * d2 / dur), d2)
    }

    /// The energy `[J]` of walking straight from the path at grid time `k`
    /// to the goal in the time left, `M (e_s τ + e_w D²/τ)` (BPK §5.4 with
    /// the time constraint): [`super::SearchBound::Straight`]'s heuristic.
    pub fn straight_bound(&self, k: i64) -> f64 {
        self.energy_of((self.goal_t - self.time_of(k)).max(1e-3), self.path_of(k), self.goal_position()).0
    }

    /// Whether a step of `dur` `[s]` is within the duration limits.
    fn in_duration(&self, dur: f64) -> bool {
        let p = self.params;
        dur >= p.min_duration - 1e-9 && dur <= p.max_duration + 1e-9
    }

    /// The duration `[s]` and turn `[rad]` of the step from `a` to `b`,
    /// `None` where they are out of the limits: for the step costs and
    /// their bounds.
    fn duration_and_turn(&self, a: &Footstep, b: &Footstep) -> Option<(f64, f64)> {
        let dur = b.t - a.t;
        if !self.in_duration(dur) {
            return None;
        }
        let turn = wrap_angle_exact(b.heading - a.heading);
        (turn.abs() <= self.params.max_turn).then_some((dur, turn))
    }

    /// The cost `[J]` of the step from plant `(k, foot)` onto `to` (BPK
    /// §5.3), `None` where the step is out of the limits (duration, turn,
    /// landing farther than [`FootstepParams::max_miss`] outside the
    /// landing hull). O(log library + hull) (a blend and a hull distance).
    pub fn step_cost(&self, k: i64, foot: Foot, to: Node) -> Option<f64> {
        let a = self.footprint_at(k, foot);
        let (b, rb) = self.target(to);
        let kb = match to {
            Node::Goal => self.goal_key,
            Node::Plant(kb, _) => self.key_of(kb),
        };
        self.cost_between((&a, self.key_of(k)), (&b, kb), self.path_of(k), rb)
    }

    /// Cost of a step from `a` (planted, stance, root at `ra`) to `b`
    /// (landing, root at `rb`), each with the index of the first path key
    /// after its time: the energy, plus the squared root misses (the
    /// landing outside the hull, the path's bulge from the root's chord,
    /// the pull beyond the legs' slack) by the tracking weight, the squared
    /// stride excess, log time warp and extra turn by their weights.
    fn cost_between(
        &self,
        (a, ka): (&Footprint, usize),
        (b, kb): (&Footprint, usize),
        ra: [f64; 2],
        rb: [f64; 2],
    ) -> Option<f64> {
        let (p, gait) = (self.params, self.gait);
        let (cs_a, cs_b, length) = (a.cos_sin, b.cos_sin, b.length);
        let (a, b) = (&a.footstep, &b.footstep);
        let (dur, turn) = self.duration_and_turn(a, b)?;
        let q = landing_on(a, cs_a, b);
        let (miss, near) = gait.hull_distance(a.foot, q);
        if miss > p.max_miss {
            return None;
        }
        let blend = gait.library.blended_at(a.foot, near);
        let (energy, d2) = self.energy_of(dur, ra, rb);
        // The path between the plants (its key lies between theirs).
        let between: [[f64; 2]; 3] =
            std::array::from_fn(|k| at_within(self.agent, a.t + dur * (k + 1) as f64 / 4.0, ka, kb));
        let bulge = chord_bulge(ra, rb, d2, &between);
        // The landing's footprint puts the foot ahead of the root as a step
        // of `length` does; a step whose root progresses more than that
        // leaves the trailing foot behind, out of reach of a short-legged
        // character, while the body is still on the path.
        let mismatch = stride_excess(ra, rb, cs_b, length);
        let excess = pull_excess(gait.slack, (a, cs_a), &blend, turn - blend.rotation, &between, rb);
        let warp = (dur / blend.duration.max(1e-3)).ln();
        let extra_turn = turn - blend.rotation;
        Some(
            energy
                + p.track_weight * (miss * miss + bulge * bulge + excess * excess)
                + p.length_weight * mismatch * mismatch
                + p.warp_weight * warp * warp
                + p.turn_weight * extra_turn * extra_turn,
        )
    }

    /// A lower bound `[J]` of the cost of the step from plant `(k, foot)`
    /// onto `to` ([`PlantGrid::step_cost`]), or `None` where the step cost
    /// surely rejects it: the step's energy, the squared excess of its
    /// root's progress over its landing's step length (both by the step
    /// cost's own expressions), the squared distance of its landing from
    /// the landing hull's bounding box, and the warp and turn terms of the
    /// nearest natural duration and turn any blend of the stance foot's
    /// steps has. Each term is at most the step cost's, so the sum is (and
    /// the search's integer units of it, [`units`] being monotone). O(1),
    /// no trigonometry: [`PlantGrid::foot_part`] of [`PlantGrid::path_part`].
    pub fn lower_bound(&self, k: i64, foot: Foot, to: Node) -> Option<f64> {
        self.path_part(k, to).and_then(|x| self.foot_part(k, foot, to, x))
    }

    /// The part of [`PlantGrid::lower_bound`] that is the path's, the same
    /// for both feet: the step's duration, turn and energy, `None` where
    /// the step cost rejects the duration or the turn.
    pub fn path_part(&self, k: i64, to: Node) -> Option<PathPart> {
        let (b, rb) = self.target(to);
        let (duration, turn) = self.duration_and_turn(&self.footprint_at(k, Foot::Left).footstep, &b.footstep)?;
        Some(PathPart { duration, turn, energy: self.energy_of(duration, self.path_of(k), rb).0 })
    }

    /// [`PlantGrid::lower_bound`] of the step from `(k, foot)` onto `to`
    /// given its [`PlantGrid::path_part`].
    pub fn foot_part(&self, k: i64, foot: Foot, to: Node, part: PathPart) -> Option<f64> {
        let PathPart { duration: dur, turn, energy } = part;
        let p = self.params;
        let a = self.footprint_at(k, foot);
        let (b, rb) = self.target(to);
        let gap2 = self.gait.hull_gap_squared(a.footstep.foot, landing_on(&a.footstep, a.cos_sin, &b.footstep));
        if gap2 > p.max_miss * p.max_miss {
            return None;
        }
        let ra = self.path_of(k);
        let mismatch = stride_excess(ra, rb, b.cos_sin, b.length);
        let r = &self.ranges[foot.index()];
        // |ln x| ≥ 2 |x − 1| / (x + 1), without a logarithm.
        let warp = if dur < r.duration[0] {
            2.0 * (r.duration[0] - dur) / (r.duration[0] + dur)
        } else if dur > r.duration[1] {
            2.0 * (dur - r.duration[1]) / (dur + r.duration[1])
        } else {
            0.0
        };
        let extra_turn = (r.rotation[0] - turn).max(turn - r.rotation[1]).max(0.0);
        Some(
            energy
                + p.track_weight * gap2
                + p.length_weight * mismatch * mismatch
                + p.warp_weight * warp * warp
                + p.turn_weight * extra_turn * extra_turn,
        )
    }
}

/// How far `[m]` the root's progress along `b`'s heading (cosine and sine
/// `cs_b`) from `ra` to `rb` exceeds the step length `length` `[m]` its
/// landing's footprint was made for: the one expression of it for the step
/// costs and their lower bounds.
fn stride_excess(ra: [f64; 2], rb: [f64; 2], cs_b: (f64, f64), length: f64) -> f64 {
    let progress = ((rb[0] - ra[0]) * cs_b.0 + (rb[1] - ra[1]) * cs_b.1).max(0.0);
    (progress - length).max(0.0)
}

/// Root tracking between the plants: the path's largest distance `[m]`
/// (at `between`, a quarter, half and three quarters of the step) from the
/// chord `ra`–`rb` the step's root takes, `d2` its squared length (a long
/// step across a sharp corner would leave the path's apex out of the legs'
/// reach).
fn chord_bulge(ra: [f64; 2], rb: [f64; 2], d2: f64, between: &[[f64; 2]; 3]) -> f64 {
    let offsets: [[f64; 2]; 3] = std::array::from_fn(|k| {
        let r = between[k];
        let (ux, uy) = (rb[0] - ra[0], rb[1] - ra[1]);
        let u = (((r[0] - ra[0]) * ux + (r[1] - ra[1]) * uy) / d2.max(1e-12)).clamp(0.0, 1.0);
        [ra[0] + u * ux - r[0], ra[1] + u * uy - r[1]]
    });
    // The largest `hypot`, taken only of the offsets whose squared
    // length is within 10⁻⁹ of the largest (the others are shorter,
    // whatever the rounding).
    let squares = offsets.map(|o| o[0] * o[0] + o[1] * o[1]);
    let most = squares.iter().copied().fold(0.0, f64::max);
    offsets
        .iter()
        .zip(squares)
        .filter(|&(_, sq)| !most.is_finite() || sq >= most * (1.0 - 1e-9))
        .map(|(o, _)| o[0].hypot(o[1]))
        .fold(0.0, f64::max)
}

/// How far `[m]` the root must leave the path beyond the legs' `slack`
/// `[m]` over a step from `a` (its heading's cosine and sine `cs_a`) with
/// `blend`, turning `extra` `[rad]` beyond the blend's clips, the path at
/// `between` (a quarter, half and three quarters of the step) and `rb`
/// (its end).
///
/// The root as the stance foot carries it (APM §4.3): where the blend puts
/// the root relative to the stance contact at each phase, turned about the
/// contact by the step's turn beyond the clips' (as the synthesis spreads
/// it, with a smoothstep). The synthesis pulls the root onto the path; the
/// legs absorb a pull up to `slack`, beyond which the root must leave the
/// path by the excess or the planted foot slides. A long slow step round a
/// sharp corner, the path sweeping on past the planted foot, pulls the body
/// far beyond a short leg's reach.
fn pull_excess(
    slack: f64,
    (a, cs_a): (&Footstep, (f64, f64)),
    blend: &BlendedStep,
    extra: f64,
    between: &[[f64; 2]; 3],
    rb: [f64; 2],
) -> f64 {
    let (rs, rd) = (blend.root_start, blend.root_displacement);
    let offset = |u: f64| [rs[0] + u * rd[0], rs[1] + u * rd[1]];
    // Squared pull at phase u with the heading's sine and cosine.
    let pull2 = |u: f64, (s, c): (f64, f64), r: &[f64; 2]| {
        let o = offset(u);
        let pred = [a.position[0] + o[0] * c - o[1] * s, a.position[1] + o[0] * s + o[1] * c];
        (r[0] - pred[0]).powi(2) + (r[1] - pred[1]).powi(2)
    };
    let root_at = |k: usize| if k < 3 { &between[k] } else { &rb };
    let phase = |k: usize| (k + 1) as f64 / 4.0;
    // smoothstep(u) at u = 1/4, 1/2, 3/4 and 1.
    const SMOOTH: [f64; 4] = [5.0 / 32.0, 0.5, 27.0 / 32.0, 1.0];
    // Within the slack for certain without turning: the pull with
    // a's heading, plus how far the turn can move the prediction
    // (|o| · |turn|, |o| at most its 1-norm), is within it.
    let sure = (0..4).all(|k| {
        let o = offset(phase(k));
        let turn_move = (o[0].abs() + o[1].abs()) * extra.abs() * SMOOTH[k];
        let room = slack - turn_move;
        room >= 0.0 && pull2(phase(k), (cs_a.1, cs_a.0), root_at(k)) <= room * room
    });
    if sure {
        return 0.0;
    }
    // The heading at those phases is a's turned by the extra
    // turn times 5/32, 1/2, 27/32 and 1: two sines and cosines
    // (of 5/32 and 1/2 of it) make all four.
    let (fifth, h) = ((extra * SMOOTH[0]).sin_cos(), (extra * 0.5).sin_cos());
    let whole = turned_by(h, h);
    let turned = [fifth, h, turned_by(whole, (-fifth.0, fifth.1)), whole].map(|x| turned_by((cs_a.1, cs_a.0), x));
    // Squared pulls; one root, of the largest.
    let most = (0..4).map(|k| pull2(phase(k), turned[k], root_at(k))).fold(0.0, f64::max);
    if most > slack * slack { most.sqrt() - slack } else { 0.0 }
}

/// The sine and cosine `(sin, cos)` of the sum of two angles given by
/// theirs.
fn turned_by(x: (f64, f64), y: (f64, f64)) -> (f64, f64) {
    (x.0 * y.1 + x.1 * y.0, x.1 * y.1 - x.0 * y.0)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::character::builtin;
    use crowdpatch_runtime::format::{AgentKind, PathKey, PointRef, Side};

    /// An exogenous agent through `points` (time `[s]`, position `[m]`),
    /// facing where it goes next (where it stands, where it went last).
    fn walk(points: &[(f64, [f64; 2])]) -> BakedAgent {
        let mut heading = 0.0;
        let keys = points
            .iter()
            .enumerate()
            .map(|(i, &(t, position))| {
                let (a, b) =
                    if i + 1 < points.len() { (position, points[i + 1].1) } else { (points[i - 1].1, position) };
                if (b[0] - a[0]).hypot(b[1] - a[1]) > 1e-9 {
                    heading = (b[1] - a[1]).atan2(b[0] - a[0]);
                }
                PathKey { t, position, heading }
            })
            .collect();
        let r = PointRef { side: Side::West, index: 0 };
        BakedAgent { kind: AgentKind::Exogenous { entry: r, exit: r }, keys }
    }

    /// Sample walks from t = 1 s, and their entry and exit velocities
    /// `[m/s]`: straight at a slow, a usual and a fast pace, round a
    /// half circle of 3 m radius, and with a 1.5 s stop halfway.
    pub(crate) fn sample_walks() -> Vec<(&'static str, BakedAgent, [f64; 2], [f64; 2])> {
        let times = |n: usize, span: f64| (0..=n).map(move |i| 1.0 + span * i as f64 / n as f64);
        let straight = |v: f64| walk(&times(20, 5.0).map(|t| (t, [1.0 + v * (t - 1.0), 8.0])).collect::<Vec<_>>());
        let (radius, v_turn) = (3.0, 1.2);
        let turn_span = std::f64::consts::PI * radius / v_turn;
        let turning = walk(
            &times(60, turn_span)
                .map(|t| {
                    let a = v_turn * (t - 1.0) / radius;
                    (t, [2.0 + radius * a.sin(), 2.0 + radius * (1.0 - a.cos())])
                })
                .collect::<Vec<_>>(),
        );
        // 1.3 m/s for 2 s, standing 1.5 s, 1.3 m/s for 2 s.
        let stopping = walk(
            &times(44, 5.5)
                .map(|t| {
                    let walked = (t - 1.0).min(2.0) + (t - 4.5).max(0.0);
                    (t, [1.0 + 1.3 * walked, 5.0])
                })
                .collect::<Vec<_>>(),
        );
        vec![
            ("straight 0.8 m/s", straight(0.8), [0.8, 0.0], [0.8, 0.0]),
            ("straight 1.33 m/s", straight(1.33), [1.33, 0.0], [1.33, 0.0]),
            ("straight 1.9 m/s", straight(1.9), [1.9, 0.0], [1.9, 0.0]),
            ("half circle", turning, [v_turn, 0.0], [-v_turn, 0.0]),
            ("stop", stopping, [1.3, 0.0], [1.3, 0.0]),
        ]
    }

    /// The default parameters, and those of the planner's first relaxation
    /// of them (a finer grid, longer steps and turns, farther landings).
    pub(crate) fn sample_params() -> [FootstepParams; 2] {
        let p = FootstepParams::default();
        let relaxed = FootstepParams {
            min_duration: (p.min_duration * 0.6).max(p.time_step),
            max_duration: p.max_duration * 1.6,
            max_turn: p.max_turn * 1.5,
            max_miss: p.max_miss * 3.0,
            time_step: p.time_step / 2.0,
            ..p
        };
        [p, relaxed]
    }

    /// Runs `check(name, grid)` on the plant grid of every sample walk with
    /// each of the sample parameters.
    pub(crate) fn for_every_grid(mut check: impl FnMut(&str, &PlantGrid)) {
        let c = builtin::character();
        let gait = GaitModel::new(&c).unwrap();
        for params in sample_params() {
            for (name, agent, entry, exit) in sample_walks() {
                let (t0, t1) = (agent.start(), agent.end());
                let start = gait.boundary(&c, at(&agent, t0).0, entry, t0);
                let goal = gait.boundary(&c, at(&agent, t1).0, exit, t1);
                let grid = PlantGrid::new(&gait, &agent, &start, &goal, goal.right.t, &params);
                assert!(grid.k_max > 100, "{name}: {} grid times", grid.k_max);
                check(name, &grid);
            }
        }
    }

    /// Every step of `grid` the search may take, `(k, foot, to)`: from each
    /// plant it can reach (every grid time and foot but the right foot at
    /// the start) onto each plant of the other foot the step duration
    /// bounds allow, and from a left plant onto the goal.
    pub(crate) fn search_steps(grid: &PlantGrid) -> Vec<(i64, Foot, Node)> {
        let mut out = Vec::new();
        for k in 0..=grid.k_max {
            for foot in Foot::BOTH.into_iter().filter(|&f| k > 0 || f == Foot::Left) {
                let plants = grid.steps_from(k).map(|s| Node::Plant(k + s, foot.other()));
                let goal = (foot == Foot::Left).then_some(Node::Goal);
                out.extend(plants.chain(goal).map(|to| (k, foot, to)));
            }
        }
        out
    }

    #[test]
    fn every_step_costs_at_least_its_lower_bound() {
        let (mut checked, mut goal_steps, mut rejected) = (0usize, 0usize, 0usize);
        for_every_grid(|name, grid| {
            for (k, foot, to) in search_steps(grid) {
                let Some(cost) = grid.step_cost(k, foot, to).filter(|c| c.is_finite()) else {
                    rejected += 1;
                    continue;
                };
                let bound = grid.lower_bound(k, foot, to);
                assert!(
                    bound.is_some_and(|b| b <= cost && units(b) <= units(cost)),
                    "{name}: step from ({k}, {foot:?}) onto {to:?} costs {cost} J, its lower bound is {bound:?}"
                );
                checked += 1;
                goal_steps += usize::from(to == Node::Goal);
            }
        });
        assert!(checked > 100_000, "only {checked} steps checked ({rejected} rejected)");
        assert!(goal_steps > 100, "only {goal_steps} steps onto the goal checked");
        assert!(rejected > 0, "no step rejected: the limits were not exercised");
    }
}
