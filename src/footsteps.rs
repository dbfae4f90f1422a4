//! Stage 5a: footstep planning (course notes, "Dynamic Footsteps Planning for
//! Multiple Characters" §5 — BPK), one agent at a time, following its baked
//! path in space *and* time.
//!
//! **Search.** A* (the `pathfinding` crate) over footstep states: the foot
//! that has just planted, the plant time on a grid of [`FootstepParams::time_step`]
//! from the path's start, and — derived from them — the footprint and the
//! heading. The footprint of a plant at time `t` is where the character's
//! walking pose puts that foot when its root is on the path at `t` facing
//! the path's heading, after a straight step as long as the root's progress
//! over the character's own step duration at the path's speed there: so the
//! root is on the path at every step time, the step it takes is the
//! difference of two footprints, and a footprint depends on `(t, foot)`
//! alone — the search costs exactly the footprints its plan is made of.
//! **Actions** are steps of the character's step library: the swing foot
//! lands where the next
//! footprint is, in a duration (time warp of the blended clip steps) and with
//! a turn within limits; a landing outside the library's landing hull is
//! projected onto it, and the root then misses the path by that much.
//! **Cost** (BPK §5.3): the energy `M ∫ (e_s + e_w |v|²) dt` of the step
//! (`e_s` = 2.23 J/(kg·s), `e_w` = 1.26 J·s/(kg·m²), `v` the root's speed over
//! the step), plus a term that keeps the root on the path at the step times
//! (the squared miss), a time-warp term (playing a step much faster or slower
//! than its clip), a turn term, and a term on the root's progress beyond the
//! step length the landing's footprint was made for (the trailing foot
//! would be left out of reach). **Heuristic** ([`SearchBound`]): the least
//! cost to the goal over the plant grid with each step at a lower bound of
//! its cost (a backward pass over the grid before the search; admissible and
//! consistent), and steps that cannot belong to a plan cheaper than a greedy
//! one left uncosted; or, as BPK §5.4 with the time constraint, the least
//! energy to cover the straight distance to the goal in exactly the time
//! left, `M (e_s τ + e_w D²/τ)` (Jensen's inequality: admissible, and tighter
//! than BPK's `2 M D √(e_s e_w)`, which ignores the time constraint). Both
//! find plans of the same least cost.
//!
//! **Boundaries and loops** (the seam convention of
//! [`crowdpatch_runtime::skeletal`]): an exogenous agent starts with the two
//! footprints of its entry point (the right foot planted one boundary step
//! before, the left planting at the entry time) and must end with the two of
//! its exit point; an endogenous loop starts and ends with those of its start
//! time, a period apart, so its footsteps repeat with the period.

use crate::character::library::{StepLibrary, Weights};
use crate::character::{Character, V3};
use crowdpatch_runtime::format::{BakedAgent, Foot, Footstep};
use crowdpatch_runtime::skeletal::BoundaryGait;

/// Parameters of the planner.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FootstepParams {
    /// Agent mass M `[kg]`.
    pub mass: f64,
    /// Energy rate standing, e_s `[J/(kg·s)]` (BPK: 2.23).
    pub e_s: f64,
    /// Energy coefficient of speed, e_w `[J·s/(kg·m²)]` (BPK: 1.26).
    pub e_w: f64,
    /// Plant-time grid `[s]`.
    pub time_step: f64,
    /// Shortest step `[s]`.
    pub min_duration: f64,
    /// Longest step `[s]`.
    pub max_duration: f64,
    /// Weight of the squared root miss `[J/m²]`.
    pub track_weight: f64,
    /// Weight of the squared log time warp `[J]`.
    pub warp_weight: f64,
    /// Weight of the squared excess of a step's root progress over the step
    /// length its landing footprint was made for `[J/m²]`.
    pub length_weight: f64,
    /// Largest turn of one step `[rad]`.
    pub max_turn: f64,
    /// Weight of the squared turn beyond what the steps' clips turn `[J/rad²]`.
    pub turn_weight: f64,
    /// Farthest a landing may lie outside the library's landing hull `[m]`
    /// (a step the legs cannot take is not planned: the body would have to
    /// crouch or the planted foot slide).
    pub max_miss: f64,
    /// The A* heuristic and pruning (the same least cost either way).
    pub bound: SearchBound,
}

/// The heuristic of the footstep search. Both are admissible, so A* finds
/// a plan of least cost with either; where two plans cost the same to the
/// millijoule, each may return a different one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SearchBound {
    /// The energy of walking straight to the goal in the time left,
    /// `M (e_s τ + e_w D²/τ)` (BPK §5.4 with the time constraint), every
    /// step out of an expanded plant costed: the planner as it was, kept to
    /// check and to measure the other against.
    Straight,
    /// The least cost to the goal over the plant grid with each step at a
    /// lower bound of its cost (a backward pass over the grid, O(grid ×
    /// steps) cheap bounds), and steps that cannot belong to a plan
    /// cheaper than a greedy one left uncosted.
    #[default]
    Relaxed,
}

impl Default for FootstepParams {
    fn default() -> Self {
        FootstepParams {
            mass: 70.0,
            e_s: 2.23,
            e_w: 1.26,
            time_step: 1.0 / 30.0,
            min_duration: 0.25,
            max_duration: 1.5,
            track_weight: 20_000.0,
            warp_weight: 60.0,
            length_weight: 5_000.0,
            max_turn: 1.6,
            turn_weight: 40.0,
            max_miss: 0.12,
            bound: SearchBound::Relaxed,
        }
    }
}

/// What the planner needs to know of a character's gait, precomputed from
/// its step library.
#[derive(Debug, Clone)]
pub struct GaitModel {
    /// The step library.
    pub library: StepLibrary,
    /// Landing hull per stance foot (counter-clockwise polygon, or fewer
    /// than three points when degenerate), step frame.
    hulls: [Vec<[f64; 2]>; 2],
    /// Bounding box `[min, max]` of each hull (`None` when empty).
    hull_boxes: [Option<[[f64; 2]; 2]>; 2],
    /// Straight-walking table per landing foot: (step length `[m]`, offset of
    /// the landing contact from the root at the plant, step frame
    /// `[forward, left]`, root offset from the stance contact at the start).
    table: [Vec<(f64, [f64; 2])>; 2],
    /// Straight walking: (speed `[m/s]`, step duration `[s]`), by speed.
    durations: Vec<(f64, f64)>,
    /// Name of the character.
    pub character: String,
    /// Knee hinge axis per leg, left then right ([`Character::knee_hinge`]),
    /// for the foot IK of the synthesis.
    pub knee_hinges: [Option<V3>; 2],
    /// How far `[m]` the synthesis may pull the root from where the stance
    /// foot carries it (onto the path) before a leg runs out of reach: a
    /// fifth of the leg length ([`Character::leg_length`]).
    pub slack: f64,
}

/// The two footsteps and the gait that the seam convention fixes at a
/// boundary crossing (or a loop's start).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoundaryFootsteps {
    /// The right foot's plant, one boundary step before the crossing.
    pub right: Footstep,
    /// The left foot's plant at the crossing time.
    pub left: Footstep,
    /// The gait record for the baked pattern.
    pub gait: BoundaryGait,
    /// Blend weights of the step that ends at the crossing (right stance).
    pub weights: [(usize, f64); 2],
}

impl GaitModel {
    /// Builds the gait model of `character`.
    ///
    /// # Errors
    /// A [`crate::character::library::LibraryError`] when the character has
    /// no walking steps.
    pub fn new(character: &Character) -> Result<GaitModel, crate::character::library::LibraryError> {
        let library = StepLibrary::new(character)?;
        let hulls = std::array::from_fn(|f| {
            let pts: Vec<[f64; 2]> = library.by_foot[f].iter().map(|&i| library.landing(i)).collect();
            convex_hull(&pts)
        });
        let hull_boxes = std::array::from_fn(|f| {
            let h: &Vec<[f64; 2]> = &hulls[f];
            (!h.is_empty()).then(|| {
                h.iter().fold([[f64::INFINITY; 2], [f64::NEG_INFINITY; 2]], |[lo, hi], q| {
                    [[lo[0].min(q[0]), lo[1].min(q[1])], [hi[0].max(q[0]), hi[1].max(q[1])]]
                })
            })
        });
        // Landing offsets from the root at a plant, straight walking, by step
        // length: the end pose of straight blends at a range of speeds.
        let table = std::array::from_fn(|landing_foot| {
            let stance = Foot::BOTH[landing_foot].other();
            let (slow, fast) = library.speed_range();
            (0..=16)
                .map(|k| {
                    let v = slow + (fast - slow) * k as f64 / 16.0;
                    let w = library.straight(stance, v);
                    let (root, land) = end_offsets(character, &library, &w);
                    let length = library.blended(&w).landing[0];
                    (length, [land[0] - root[0], land[1] - root[1]])
                })
                .collect()
        });
        let (slow, fast) = library.speed_range();
        let durations = (0..=16)
            .map(|k| {
                let v = slow + (fast - slow) * k as f64 / 16.0;
                (v, library.blended(&library.straight(Foot::Left, v)).duration)
            })
            .collect();
        let knee_hinges = [character.knee_hinge(Foot::Left), character.knee_hinge(Foot::Right)];
        let slack = 0.2 * character.leg_length();
        Ok(GaitModel {
            library,
            hulls,
            hull_boxes,
            table,
            durations,
            character: character.name.clone(),
            knee_hinges,
            slack,
        })
    }

    /// Offset of the contact of `foot`, just planted after a straight step of
    /// length `length` `[m]`, from the root, `[forward, left]` `[m]`.
    pub fn plant_offset(&self, foot: Foot, length: f64) -> [f64; 2] {
        let t = &self.table[foot.index()];
        if length <= t[0].0 {
            return t[0].1;
        }
        for w in t.windows(2) {
            if length <= w[1].0 {
                let u = if w[1].0 - w[0].0 > 1e-9 { (length - w[0].0) / (w[1].0 - w[0].0) } else { 1.0 };
                return [w[0].1[0] + u * (w[1].1[0] - w[0].1[0]), w[0].1[1] + u * (w[1].1[1] - w[0].1[1])];
            }
        }
        t[t.len() - 1].1
    }

    /// `length` `[m]` clamped to the straight step lengths of the table of
    /// [`GaitModel::plant_offset`] for a landing `foot`.
    pub fn clamp_length(&self, foot: Foot, length: f64) -> f64 {
        let t = &self.table[foot.index()];
        length.clamp(t[0].0, t[t.len() - 1].0.max(t[0].0))
    }

    /// Duration `[s]` of the character's own straight step at `speed`
    /// `[m/s]` (clamped to its slowest and fastest walk). O(1) (17 samples).
    pub fn step_duration(&self, speed: f64) -> f64 {
        let d = &self.durations;
        if speed <= d[0].0 {
            return d[0].1;
        }
        for w in d.windows(2) {
            if speed <= w[1].0 {
                let u = if w[1].0 - w[0].0 > 1e-9 { (speed - w[0].0) / (w[1].0 - w[0].0) } else { 1.0 };
                return w[0].1 + u * (w[1].1 - w[0].1);
            }
        }
        d[d.len() - 1].1
    }

    /// A lower bound of the square of [`GaitModel::hull_distance`]: the
    /// squared distance `[m²]` of `q` from the bounding box of the landing
    /// hull of stance foot `stance`, less a millionth of it for rounding (0
    /// inside the box, or for an empty hull). O(1).
    pub fn hull_gap_squared(&self, stance: Foot, q: [f64; 2]) -> f64 {
        let Some([lo, hi]) = self.hull_boxes[stance.index()] else { return 0.0 };
        let gap = |x: f64, lo: f64, hi: f64| (lo - x).max(x - hi).max(0.0);
        let (gx, gy) = (gap(q[0], lo[0], hi[0]), gap(q[1], lo[1], hi[1]));
        (gx * gx + gy * gy) * (1.0 - 1e-6)
    }

    /// Distance `[m]` of a landing `q` (step frame) from the landing hull of
    /// stance foot `stance`, and the nearest point of the hull.
    pub fn hull_distance(&self, stance: Foot, q: [f64; 2]) -> (f64, [f64; 2]) {
        hull_distance(&self.hulls[stance.index()], q)
    }

    /// The seam convention at a crossing of `position` `[m]` (patch frame)
    /// at time `t` `[s]` with velocity `velocity` `[m/s]`: the two footsteps
    /// and the gait (see [`crowdpatch_runtime::skeletal`]).
    pub fn boundary(&self, character: &Character, position: [f64; 2], velocity: [f64; 2], t: f64) -> BoundaryFootsteps {
        let speed = velocity[0].hypot(velocity[1]);
        let heading = if speed > 1e-9 { velocity[1].atan2(velocity[0]) } else { 0.0 };
        let w = self.library.straight(Foot::Right, speed);
        let b = self.library.blended(&w);
        let pose = self.library.pose(&w, 1.0);
        let p = character.skeleton.positions(&pose);
        let root = p[character.hips];
        let to_patch = |m: V3| -> [f64; 2] {
            // Model (x left, z forward) relative to the root → patch frame.
            let (fwd, left) = (m.z - root.z, m.x - root.x);
            let (c, s) = (heading.cos(), heading.sin());
            [position[0] + fwd * c - left * s, position[1] + fwd * s + left * c]
        };
        let cl = p[character.foot(Foot::Left).contact];
        let cr = p[character.foot(Foot::Right).contact];
        let weights = [w[0], *w.get(1).unwrap_or(&(w[0].0, 0.0))];
        BoundaryFootsteps {
            right: Footstep { t: t - b.duration, foot: Foot::Right, position: to_patch(cr), heading, lift: t },
            left: Footstep { t, foot: Foot::Left, position: to_patch(cl), heading, lift: t },
            gait: BoundaryGait { foot: Foot::Left, phase: 0.0, step_duration: b.duration, step_length: cl.z - cr.z },
            weights,
        }
    }
}

/// Root and landing-contact positions (model frame, `[forward, left]`
/// relative to the stance contact) at the end of a blended step.
fn end_offsets(character: &Character, library: &StepLibrary, w: &Weights) -> ([f64; 2], [f64; 2]) {
    let pose = library.pose(w, 1.0);
    let p = character.skeleton.positions(&pose);
    let stance = library.steps[w[0].0].annotation.stance;
    let c = p[character.foot(stance).contact];
    let l = p[character.foot(stance.other()).contact];
    let r = p[character.hips];
    ([r.z - c.z, r.x - c.x], [l.z - c.z, l.x - c.x])
}

/// A footstep plan of one agent.
#[derive(Debug, Clone, PartialEq)]
pub struct FootstepPlan {
    /// Footsteps in time order; the first two (and, for an exit or a loop,
    /// the last two) are the boundary convention's.
    pub footsteps: Vec<Footstep>,
    /// Cost of the plan `[J]`.
    pub cost: f64,
    /// A* nodes expanded.
    pub expanded: usize,
    /// Step costs computed (the search's work: each ~100 ns).
    pub costed: usize,
    /// Whether the limits had to be relaxed to find a plan.
    pub relaxed: bool,
}

/// How an agent's path starts and ends, for the planner.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PathEnds {
    /// Enters and leaves through boundary points with these velocities.
    Exogenous {
        /// Entry velocity `[m/s]`, patch frame.
        entry: [f64; 2],
        /// Exit velocity `[m/s]`, patch frame.
        exit: [f64; 2],
    },
    /// A loop of one period.
    Loop,
    /// Stands still: no footsteps.
    Standing,
}

/// Position `[m]` and heading `[rad]` of a baked path at `t`, clamped.
fn at(agent: &BakedAgent, t: f64) -> ([f64; 2], f64) {
    let t = t.clamp(agent.start(), agent.end());
    path_sample(agent, t).unwrap_or((agent.keys[0].position, agent.keys[0].heading))
}

/// The position of [`at`] when the first key after the clamped `t` lies in
/// `lo..=hi` ([`path_position_within`]).
fn at_within(agent: &BakedAgent, t: f64, lo: usize, hi: usize) -> [f64; 2] {
    let t = t.clamp(agent.start(), agent.end());
    path_position_within(agent, t, lo, hi).map_or(agent.keys[0].position, |x| x.0)
}

/// The index of the first key of `agent` after `t` clamped into the path's
/// interval (the `lo`/`hi` of [`at_within`]).
fn key_after(agent: &BakedAgent, t: f64) -> usize {
    let t = t.clamp(agent.start(), agent.end());
    agent.keys.partition_point(|k| k.t <= t)
}

/// [`BakedAgent::sample`], the same bits: position `[m]` and heading
/// `[rad]` at `t` `[s]`, `None` outside the path's interval; an angle
/// already in (−2π, 2π) is not taken through `fmod` (whose remainder is
/// then the angle itself). O(log keys).
pub(crate) fn path_sample(agent: &BakedAgent, t: f64) -> Option<([f64; 2], f64)> {
    let (p, i, u) = path_position_at(agent, t)?;
    let keys = &agent.keys;
    Some((
        p,
        match (i, u) {
            (0, _) => keys[0].heading,
            (_, None) => keys[keys.len() - 1].heading,
            (i, Some(u)) => lerp_angle(keys[i - 1].heading, keys[i].heading, u),
        },
    ))
}

/// The position of [`BakedAgent::sample`] alone, the same bits. O(log keys).
pub(crate) fn path_position(agent: &BakedAgent, t: f64) -> Option<[f64; 2]> {
    path_position_at(agent, t).map(|x| x.0)
}

/// Position at `t`, the key after it and the share `u` of the way to it
/// (`None` at or after the last key).
fn path_position_at(agent: &BakedAgent, t: f64) -> Option<([f64; 2], usize, Option<f64>)> {
    path_position_within(agent, t, 0, agent.keys.len())
}

/// [`path_position_at`] when the index of the first key after `t` is known
/// to lie in `lo..=hi` (e.g. `t` between two times whose indices are `lo`
/// and `hi`): the same result, from a search of those keys only.
fn path_position_within(agent: &BakedAgent, t: f64, lo: usize, hi: usize) -> Option<([f64; 2], usize, Option<f64>)> {
    let keys = &agent.keys;
    if keys.is_empty() || t < keys[0].t || t > keys[keys.len() - 1].t {
        return None;
    }
    let i = lo + keys[lo..hi].partition_point(|k| k.t <= t);
    if i == 0 {
        return Some((keys[0].position, 0, None));
    }
    if i >= keys.len() {
        return Some((keys[keys.len() - 1].position, i, None));
    }
    let (a, b) = (keys[i - 1], keys[i]);
    let u = (t - a.t) / (b.t - a.t);
    let p = [a.position[0] + (b.position[0] - a.position[0]) * u, a.position[1] + (b.position[1] - a.position[1]) * u];
    Some((p, i, Some(u)))
}

/// `x % 2π`, exactly: `x` itself when `|x| < 2π`.
fn rem_tau(x: f64) -> f64 {
    let tau = std::f64::consts::TAU;
    if x.abs() < tau { x } else { x % tau }
}

/// [`crowdpatch_runtime::format::lerp_angle`], the same bits.
fn lerp_angle(a: f64, b: f64, u: f64) -> f64 {
    let (tau, pi) = (std::f64::consts::TAU, std::f64::consts::PI);
    let mut d = rem_tau(b - a);
    if d > pi {
        d -= tau;
    } else if d <= -pi {
        d += tau;
    }
    wrap_angle_exact(a + d * u)
}

/// [`crowdpatch_runtime::format::wrap_angle`], the same bits.
pub(crate) fn wrap_angle_exact(a: f64) -> f64 {
    let (tau, pi) = (std::f64::consts::TAU, std::f64::consts::PI);
    let mut w = rem_tau(a);
    if w > pi {
        w -= tau;
    } else if w <= -pi {
        w += tau;
    }
    w
}

/// Mean velocity of the path over `[t − h, t + h]` (clamped, or wrapped for a
/// loop of period `period`).
fn velocity(agent: &BakedAgent, t: f64, h: f64, period: Option<f64>) -> [f64; 2] {
    let (a, b) = match period {
        Some(pi) => {
            let s = agent.start();
            let wrap = |x: f64| s + (x - s).rem_euclid(pi);
            let (pa, pb) = (at(agent, wrap(t - h)).0, at(agent, wrap(t + h)).0);
            (pa, pb)
        }
        None => (at(agent, t - h).0, at(agent, t + h).0),
    };
    let span = match period {
        Some(_) => 2.0 * h,
        None => (t + h).min(agent.end()) - (t - h).max(agent.start()),
    };
    [(b[0] - a[0]) / span.max(1e-9), (b[1] - a[1]) / span.max(1e-9)]
}

/// The walking velocity of a loop at its seam (its start, a period after
/// its end) `[m/s]`: the mean of the arriving and leaving speeds (over
/// 0.5 s each side), in the direction halfway between them. The mean
/// velocity across the seam would cancel where the loop turns back on
/// itself, and give a far too slow gait there.
pub fn loop_seam_velocity(agent: &BakedAgent, period: f64) -> [f64; 2] {
    let (t0, t1) = (agent.start(), agent.end());
    let (vi, vo) = (velocity(agent, t1 - 0.25, 0.25, None), velocity(agent, t0 + 0.25, 0.25, None));
    let (si, so) = (vi[0].hypot(vi[1]), vo[0].hypot(vo[1]));
    let dir = [vi[0] / si.max(1e-9) + vo[0] / so.max(1e-9), vi[1] / si.max(1e-9) + vo[1] / so.max(1e-9)];
    let (dn, speed) = (dir[0].hypot(dir[1]), (si + so) / 2.0);
    if dn > 1e-6 { [speed * dir[0] / dn, speed * dir[1] / dn] } else { velocity(agent, t0, 0.25, Some(period)) }
}

/// Plans the footsteps of one agent along its baked path.
///
/// Returns `None` for a standing agent. A path too short or too fast for
/// the library gets a plan all the same: the limits are relaxed (and the plan
/// says so).
pub fn plan_agent(
    gait: &GaitModel,
    character: &Character,
    agent: &BakedAgent,
    ends: PathEnds,
    period: f64,
    params: &FootstepParams,
) -> Option<FootstepPlan> {
    let (t0, t1) = (agent.start(), agent.end());
    let (start, goal) = match ends {
        PathEnds::Standing => return None,
        PathEnds::Exogenous { entry, exit } => {
            (gait.boundary(character, at(agent, t0).0, entry, t0), gait.boundary(character, at(agent, t1).0, exit, t1))
        }
        PathEnds::Loop => {
            let v = loop_seam_velocity(agent, period);
            let mut s = gait.boundary(character, at(agent, t0).0, v, t0);
            // The right foot's plant one boundary step before the seam is
            // where the path is then: a loop may turn sharply at its seam,
            // and a footprint straight behind along the seam's heading
            // could be a metre from where the walker arrives.
            let back = ideal_footstep(gait, agent, Foot::Right, t1 - (s.left.t - s.right.t), s.gait.step_length);
            s.right.position = back.position;
            s.right.heading = back.heading;
            let mut g = s;
            for f in [&mut g.left, &mut g.right] {
                f.t += period;
                f.lift += period;
            }
            (s, g)
        }
    };
    // The search runs from the start's left plant to the goal's right plant.
    let goal_t = goal.right.t;
    let mut relaxed = false;
    let mut p = *params;
    for attempt in 0..3 {
        if let Some(mut plan) = search(gait, agent, &start, &goal, goal_t, &p) {
            plan.relaxed = relaxed;
            return Some(plan);
        }
        relaxed = true;
        p.min_duration = (p.min_duration * 0.6).max(p.time_step);
        p.max_duration *= 1.6;
        p.max_turn *= 1.5 + attempt as f64;
        p.max_miss *= 3.0;
        p.time_step /= 2.0;
    }
    // Last resort: evenly spaced steps.
    let span = goal_t - start.left.t;
    let mut n = ((span / 0.55).round() as usize).max(1);
    if n.is_multiple_of(2) {
        n += 1; // left at start, right at the goal: an odd number of steps
    }
    let mut footsteps = vec![start.right, start.left];
    for k in 1..n {
        let t = start.left.t + span * k as f64 / n as f64;
        let foot = if k % 2 == 1 { Foot::Right } else { Foot::Left };
        footsteps.push(ideal_footstep(gait, agent, foot, t, 0.7));
    }
    footsteps.push(goal.right);
    footsteps.push(goal.left);
    finish_lifts(&mut footsteps, gait);
    Some(FootstepPlan { footsteps, cost: f64::INFINITY, expanded: 0, costed: 0, relaxed: true })
}

/// The footstep of `foot` planting at `t` with the root on the path, after a
/// step of length `length`.
fn ideal_footstep(gait: &GaitModel, agent: &BakedAgent, foot: Foot, t: f64, length: f64) -> Footstep {
    let (p, h) = at(agent, t);
    footprint(gait, foot, t, (p, h), (h.cos(), h.sin()), length)
}

/// [`ideal_footstep`] with the path's position and heading at `t`, and
/// the heading's cosine and sine, given.
fn footprint(
    gait: &GaitModel,
    foot: Foot,
    t: f64,
    (p, h): ([f64; 2], f64),
    (c, s): (f64, f64),
    length: f64,
) -> Footstep {
    let o = gait.plant_offset(foot, length);
    Footstep { t, foot, position: [p[0] + o[0] * c - o[1] * s, p[1] + o[0] * s + o[1] * c], heading: h, lift: t }
}

/// Fills each footstep's lift-off time: during the following step, after
/// its share of double support.
fn finish_lifts(footsteps: &mut [Footstep], gait: &GaitModel) {
    for j in 0..footsteps.len() {
        let lift = match footsteps.get(j + 2) {
            Some(after) => {
                let next = footsteps[j + 1];
                let q = landing_of(&next, after);
                let share = gait.library.blended_at(next.foot, q).lift;
                next.t + share * (after.t - next.t)
            }
            None => footsteps.get(j + 1).map_or(footsteps[j].t, |n| n.t),
        };
        footsteps[j].lift = lift.max(footsteps[j].t);
    }
}

/// Landing of `to` in the step frame of `from` (its stance contact and
/// heading), `[forward, left]` `[m]`.
pub fn landing_of(from: &Footstep, to: &Footstep) -> [f64; 2] {
    landing_on(from, (from.heading.cos(), from.heading.sin()), to)
}

/// [`landing_of`] with the cosine and sine of `from`'s heading given.
fn landing_on(from: &Footstep, (c, s): (f64, f64), to: &Footstep) -> [f64; 2] {
    let d = [to.position[0] - from.position[0], to.position[1] - from.position[1]];
    [d[0] * c + d[1] * s, -d[0] * s + d[1] * c]
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Node {
    /// Grid time index (from the start's left plant) and the planted foot.
    Plant(i64, Foot),
    /// The goal's right plant.
    Goal,
}

fn search(
    gait: &GaitModel,
    agent: &BakedAgent,
    start: &BoundaryFootsteps,
    goal: &BoundaryFootsteps,
    goal_t: f64,
    p: &FootstepParams,
) -> Option<FootstepPlan> {
    let t_start = start.left.t;
    let dt = p.time_step;
    let scale = 1000.0; // cost units: millijoules, as integers
    let time_of = |k: i64| t_start + k as f64 * dt;
    let k_max = ((goal_t - t_start) / dt).floor() as i64;
    // At least one grid time: the plants' graph is acyclic.
    let k_min_step = ((p.min_duration / dt).ceil() as i64).max(1);
    let k_max_step = (p.max_duration / dt).floor() as i64;
    // The path at each grid time, sampled once (the search asks for each
    // many times); index k_max + 1 holds the goal time.
    let grid = usize::try_from(k_max + 1).unwrap_or(0).max(1);
    let path_at: Vec<[f64; 2]> =
        (0..grid).map(|k| at(agent, time_of(k as i64)).0).chain([at(agent, goal_t).0]).collect();
    let path_of = |k: i64| path_at[k.clamp(0, grid as i64 - 1) as usize];
    let goal_pos = path_at[grid];
    // The first path key after each grid time, and after the goal time.
    let keys_after: Vec<usize> = (0..grid).map(|k| key_after(agent, time_of(k as i64))).collect();
    let key_of = |k: i64| keys_after[k.clamp(0, grid as i64 - 1) as usize];
    // The goal's heading's cosine and sine, and the first path key after it.
    let (goal_cs, goal_key) = ((goal.right.heading.cos(), goal.right.heading.sin()), key_after(agent, goal_t));
    // The footprint of a plant at grid time `k`: the root on the path
    // facing its heading, the landing foot ahead of it by the offset of a
    // straight step as long as the root's progress along that heading over
    // the character's own step duration at the path's local speed. The
    // progress is the smaller of the one before and the one after: round a
    // sharp corner the root's chord runs sideways, and the landing foot is
    // not a long stride ahead of it; a walker coming to a stop lands its
    // foot beside it, not a stride ahead. A function of (k, foot) alone, so
    // the search costs the very footprints the plan is made of.
    // Both feet's at once: all but the offset of the foot is the path's.
    let footsteps_at = |k: i64| -> [(Footstep, f64, (f64, f64)); 2] {
        if k == 0 {
            let start = (start.left, start.gait.step_length, (start.left.heading.cos(), start.left.heading.sin()));
            return [start; 2];
        }
        let t = time_of(k);
        let (pn, h) = at(agent, t);
        let h_speed = 0.05;
        let (pa, _) = at(agent, t - h_speed);
        let (pb, _) = at(agent, t + h_speed);
        let speed = (pb[0] - pa[0]).hypot(pb[1] - pa[1]) / (2.0 * h_speed);
        let natural = gait.step_duration(speed);
        let (pp, _) = at(agent, (t - natural).max(t_start));
        let (pf, _) = at(agent, t + natural);
        let (c, s) = (h.cos(), h.sin());
        let along = |a: [f64; 2], b: [f64; 2]| ((b[0] - a[0]) * c + (b[1] - a[1]) * s).max(0.0);
        let length = along(pp, pn).min(along(pn, pf));
        Foot::BOTH
            .map(|foot| (footprint(gait, foot, t, (pn, h), (c, s), length), gait.clamp_length(foot, length), (c, s)))
    };
    // The energy of a step of `dur` `[s]` whose root goes from `ra` to `rb`
    // (BPK §5.3, `M (e_s dur + e_w d²/dur)`), and `d²`: the one expression
    // of it for the step costs and the heuristic's lower bound of them.
    let energy_of = |dur: f64, ra: [f64; 2], rb: [f64; 2]| -> (f64, f64) {
        let d2 = (rb[0] - ra[0]).powi(2) + (rb[1] - ra[1]).powi(2);
        (p.mass * (p.e_s * dur + p.e_w * d2 / dur), d2)
    };
    // How far the root's progress along `b`'s heading (cosine and sine
    // `cs_b`) from `ra` to `rb` exceeds the step length `length` `[m]` its
    // landing's footprint was made for: the one expression of it for the
    // step costs and their lower bounds.
    let stride_excess = |ra: [f64; 2], rb: [f64; 2], cs_b: (f64, f64), length: f64| {
        let progress = ((rb[0] - ra[0]) * cs_b.0 + (rb[1] - ra[1]) * cs_b.1).max(0.0);
        (progress - length).max(0.0)
    };
    let in_duration = |dur: f64| dur >= p.min_duration - 1e-9 && dur <= p.max_duration + 1e-9;
    // The duration and turn of the step from `a` to `b`, `None` where they
    // are out of the limits: for the step costs and their bounds.
    let duration_and_turn = |a: &Footstep, b: &Footstep| -> Option<(f64, f64)> {
        let dur = b.t - a.t;
        if !in_duration(dur) {
            return None;
        }
        let turn = wrap_angle_exact(b.heading - a.heading);
        (turn.abs() <= p.max_turn).then_some((dur, turn))
    };
    // Cost of a step from `a` (planted, stance, root at `ra`) to `b`
    // (landing, root at `rb`, its footprint made for a step of `length`).
    // `a` comes with the cosine and sine of its heading and the index of
    // the first path key after its time, `b` with the same.
    let step_cost = |(a, cs_a, ka): (&Footstep, (f64, f64), usize),
                     (b, cs_b, kb): (&Footstep, (f64, f64), usize),
                     ra: [f64; 2],
                     rb: [f64; 2],
                     length: f64|
     -> Option<f64> {
        let (dur, turn) = duration_and_turn(a, b)?;
        let q = landing_on(a, cs_a, b);
        let (miss, near) = gait.hull_distance(a.foot, q);
        if miss > p.max_miss {
            return None;
        }
        let blend = gait.library.blended_at(a.foot, near);
        let (energy, d2) = energy_of(dur, ra, rb);
        // The path between the plants (its key lies between theirs).
        let between: [[f64; 2]; 3] =
            std::array::from_fn(|k| at_within(agent, a.t + dur * (k + 1) as f64 / 4.0, ka, kb));
        // Root tracking between the plants: the path's largest distance
        // from the chord the step's root takes (a long step across a sharp
        // corner would leave the path's apex out of the legs' reach).
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
        let bulge = offsets
            .iter()
            .zip(squares)
            .filter(|&(_, sq)| !most.is_finite() || sq >= most * (1.0 - 1e-9))
            .map(|(o, _)| o[0].hypot(o[1]))
            .fold(0.0, f64::max);
        // The landing's footprint puts the foot ahead of the root as a step
        // of `length` does; a step whose root progresses more than that
        // leaves the trailing foot behind, out of reach of a short-legged
        // character, while the body is still on the path.
        let mismatch = stride_excess(ra, rb, cs_b, length);
        // The root as the stance foot carries it (APM §4.3): where the
        // blend puts the root relative to the stance contact at each phase,
        // turned about the contact by the step's turn beyond the clips'
        // (as the synthesis spreads it, with a smoothstep). The synthesis
        // pulls the root onto the path; the legs absorb a pull up to
        // `gait.slack`, beyond which the root must leave the path by the
        // excess or the planted foot slides. A long slow step round a
        // sharp corner, the path sweeping on past the planted foot, pulls
        // the body far beyond a short leg's reach.
        let excess = {
            let extra = turn - blend.rotation;
            let (rs, rd) = (blend.root_start, blend.root_displacement);
            let offset = |u: f64| [rs[0] + u * rd[0], rs[1] + u * rd[1]];
            // Squared pull at phase u with the heading's sine and cosine.
            let pull2 = |u: f64, (s, c): (f64, f64), r: &[f64; 2]| {
                let o = offset(u);
                let pred = [a.position[0] + o[0] * c - o[1] * s, a.position[1] + o[0] * s + o[1] * c];
                (r[0] - pred[0]).powi(2) + (r[1] - pred[1]).powi(2)
            };
            let at = |k: usize| if k < 3 { &between[k] } else { &rb };
            let phase = |k: usize| (k + 1) as f64 / 4.0;
            // smoothstep(u) at u = 1/4, 1/2, 3/4 and 1.
            const SMOOTH: [f64; 4] = [5.0 / 32.0, 0.5, 27.0 / 32.0, 1.0];
            // Within the slack for certain without turning: the pull with
            // a's heading, plus how far the turn can move the prediction
            // (|o| · |turn|, |o| at most its 1-norm), is within it.
            let sure = (0..4).all(|k| {
                let o = offset(phase(k));
                let turn_move = (o[0].abs() + o[1].abs()) * extra.abs() * SMOOTH[k];
                let room = gait.slack - turn_move;
                room >= 0.0 && pull2(phase(k), (cs_a.1, cs_a.0), at(k)) <= room * room
            });
            if sure {
                0.0
            } else {
                // The heading at those phases is a's turned by the extra
                // turn times 5/32, 1/2, 27/32 and 1: two sines and cosines
                // (of 5/32 and 1/2 of it) make all four.
                let mul = |x: (f64, f64), y: (f64, f64)| (x.0 * y.1 + x.1 * y.0, x.1 * y.1 - x.0 * y.0);
                let (fifth, h) = ((extra * SMOOTH[0]).sin_cos(), (extra * 0.5).sin_cos());
                let whole = mul(h, h);
                let turned = [fifth, h, mul(whole, (-fifth.0, fifth.1)), whole].map(|x| mul((cs_a.1, cs_a.0), x));
                // Squared pulls; one root, of the largest.
                let most = (0..4).map(|k| pull2(phase(k), turned[k], at(k))).fold(0.0, f64::max);
                if most > gait.slack * gait.slack { most.sqrt() - gait.slack } else { 0.0 }
            }
        };
        let warp = (dur / blend.duration.max(1e-3)).ln();
        let extra_turn = turn - blend.rotation;
        Some(
            energy
                + p.track_weight * (miss * miss + bulge * bulge + excess * excess)
                + p.length_weight * mismatch * mismatch
                + p.warp_weight * warp * warp
                + p.turn_weight * extra_turn * extra_turn,
        )
    };
    // Every plant's footprint, made once per (k, foot) with the cosine and
    // sine of its heading: the heuristic below costs a bound of every step.
    type Typical = (Footstep, f64, (f64, f64));
    let typical_at: Vec<Typical> = (0..grid as i64).flat_map(footsteps_at).collect();
    let slot = |k: i64, foot: Foot| 2 * k as usize + foot.index();
    let typical = |k: i64, foot: Foot| typical_at[slot(k, foot)];
    let ranges = Foot::BOTH.map(|f| gait.library.annotation_range(f));
    // The landing of a step onto `to` (its footstep, the step length its
    // footprint was made for, its heading's cosine and sine) and the path
    // there.
    let target = |to: Node| -> (Typical, [f64; 2]) {
        match to {
            Node::Goal => ((goal.right, goal.gait.step_length, goal_cs), goal_pos),
            Node::Plant(kb, next) => (typical(kb, next), path_of(kb)),
        }
    };
    // A lower bound of the cost of the step from plant (k, foot) to `to`,
    // in the search's integer units, or `None` where the step cost surely
    // rejects it: the step's energy, the squared excess of its root's
    // progress over its landing's step length (both by the step cost's own
    // expressions), the squared distance of its landing from the landing
    // hull's bounding box, and the warp and turn terms of the nearest
    // natural duration and turn any blend of the stance foot's steps has.
    // Each term is at most the step cost's, so the sum is (rounding being
    // monotone). O(1), no trigonometry: `foot_part(k, foot, to,
    // path_part(k, to)?)`. `path_part` is the part that is the path's, the
    // same for both feet (a plant's time and heading are the path's): the
    // step's duration, turn and energy, `None` where the step cost rejects
    // the duration or the turn.
    let path_part = |k: i64, to: Node| -> Option<(f64, f64, f64)> {
        let ((b, _, _), rb) = target(to);
        let (dur, turn) = duration_and_turn(&typical(k, Foot::Left).0, &b)?;
        Some((dur, turn, energy_of(dur, path_of(k), rb).0))
    };
    let foot_part = |k: i64, foot: Foot, to: Node, (dur, turn, energy): (f64, f64, f64)| -> Option<i64> {
        let (a, _, cs_a) = typical(k, foot);
        let ((b, length, cs_b), rb) = target(to);
        let gap2 = gait.hull_gap_squared(a.foot, landing_on(&a, cs_a, &b));
        if gap2 > p.max_miss * p.max_miss {
            return None;
        }
        let ra = path_of(k);
        let mismatch = stride_excess(ra, rb, cs_b, length);
        let r = &ranges[foot.index()];
        // |ln x| ≥ 2 |x − 1| / (x + 1), without a logarithm.
        let warp = if dur < r.duration[0] {
            2.0 * (r.duration[0] - dur) / (r.duration[0] + dur)
        } else if dur > r.duration[1] {
            2.0 * (dur - r.duration[1]) / (dur + r.duration[1])
        } else {
            0.0
        };
        let extra_turn = (r.rotation[0] - turn).max(turn - r.rotation[1]).max(0.0);
        let c = energy
            + p.track_weight * gap2
            + p.length_weight * mismatch * mismatch
            + p.warp_weight * warp * warp
            + p.turn_weight * extra_turn * extra_turn;
        Some((c * scale) as i64)
    };
    // The heuristic: the least cost from a plant to the goal when every
    // step costs its lower bound above, over every sequence of plants the
    // steps' durations allow (a backward pass over the plant grid, a DAG).
    // Each step the search may take is an edge of this relaxed graph and
    // costs at least its bound, so the heuristic is admissible and
    // consistent; it follows the path round its bends and counts the
    // strides the legs cannot take, where the energy of walking straight to
    // the goal (`M (e_s τ + e_w D²/τ)`, BPK §5.4) cut across them.
    // `unreachable`: no sequence of steps reaches the goal. O(grid × steps).
    let unreachable = i64::MAX;
    let mut to_goal = vec![unreachable; 2 * grid];
    // Each step's bound (`unreachable` for a step surely rejected, or one
    // to a plant the goal cannot be reached from), by plant and step length
    // in grid times, for the search.
    // Kept only up to 4 M of them (32 MB: a walker of an hour at the
    // default grid, a quarter of that on the finest grid of the relaxed
    // limits); beyond, each is made again when the search asks for it.
    let steps = (k_max_step - k_min_step + 1).max(0) as usize;
    let relaxed = p.bound == SearchBound::Relaxed;
    let kept = relaxed && 2 * grid * steps <= 1 << 22;
    let mut bounds = vec![unreachable; if kept { 2 * grid * steps } else { 0 }];
    for k in (0..=k_max.max(0)).rev().filter(|_| relaxed) {
        let goal_step = path_part(k, Node::Goal).and_then(|x| foot_part(k, Foot::Left, Node::Goal, x));
        let mut best = [goal_step.unwrap_or(unreachable), unreachable];
        for s in k_min_step..=k_max_step.min(k_max - k) {
            let rest = Foot::BOTH.map(|f| to_goal[slot(k + s, f.other())]);
            if rest == [unreachable; 2] {
                continue;
            }
            let Some(shared) = path_part(k, Node::Plant(k + s, Foot::Left)) else { continue };
            for foot in Foot::BOTH {
                let (f, to) = (foot.index(), Node::Plant(k + s, foot.other()));
                if rest[f] == unreachable {
                    continue;
                }
                if let Some(c) = foot_part(k, foot, to, shared) {
                    if kept {
                        bounds[slot(k, foot) * steps + (s - k_min_step) as usize] = c;
                    }
                    best[f] = best[f].min(c.saturating_add(rest[f]));
                }
            }
        }
        for foot in Foot::BOTH {
            to_goal[slot(k, foot)] = best[foot.index()];
        }
    }
    if to_goal[0] == unreachable && relaxed {
        return None;
    }
    // The bound of the step of `s` grid times from plant (k, foot), as
    // kept above or made again.
    let bound_of = |k: i64, foot: Foot, s: i64| -> i64 {
        if kept {
            return bounds[slot(k, foot) * steps + (s - k_min_step) as usize];
        }
        let to = Node::Plant(k + s, foot.other());
        if to_goal[slot(k + s, foot.other())] == unreachable {
            return unreachable;
        }
        path_part(k, to).and_then(|x| foot_part(k, foot, to, x)).unwrap_or(unreachable)
    };
    // The true step cost, in the search's integer units.
    let costed = std::cell::Cell::new(0);
    let edge_cost = |k: i64, foot: Foot, to: Node| -> Option<i64> {
        costed.set(costed.get() + 1);
        let (a, _, cs_a) = typical(k, foot);
        let ((b, length, cs_b), rb) = target(to);
        let kb = match to {
            Node::Goal => goal_key,
            Node::Plant(kb, _) => key_of(kb),
        };
        let c = step_cost((&a, cs_a, key_of(k)), (&b, cs_b, kb), path_of(k), rb, length)?;
        Some((c * scale) as i64)
    };
    // An upper bound of the plan's cost: the true cost of a greedy plan,
    // each step the one of least true cost plus heuristic from the last
    // (the search's own step costs; `unreachable` when it runs into a dead
    // end).
    let mut upper = {
        let (mut k, mut foot, mut g) = (0i64, Foot::Left, 0i64);
        loop {
            if !relaxed {
                break unreachable;
            }
            let next = foot.other();
            let mut best: Option<(i64, Node, i64)> = None; // (c + h, to, c)
            if next == Foot::Right
                && let Some(c) = edge_cost(k, foot, Node::Goal)
            {
                best = Some((c, Node::Goal, c));
            }
            for s in k_min_step..=k_max_step.min(k_max - k) {
                let (h, least) = (to_goal[slot(k + s, next)], bound_of(k, foot, s));
                if least == unreachable || best.is_some_and(|b| least + h >= b.0) {
                    continue;
                }
                let to = Node::Plant(k + s, next);
                if let Some(c) = edge_cost(k, foot, to)
                    && best.is_none_or(|b| c + h < b.0)
                {
                    best = Some((c + h, to, c));
                }
            }
            match best {
                None => break unreachable,
                Some((_, Node::Goal, c)) => break g + c,
                Some((_, Node::Plant(kb, fb), c)) => (k, foot, g) = (kb, fb, g + c),
            }
        }
    };
    // The least cost found so far to each plant, as A* generates its
    // successors (A*'s own: a node is expanded at that cost). A step whose
    // bound puts every plan through it above `upper` is not costed: A*
    // would never expand its plant from there. A step onto the goal makes
    // a plan, and may lower `upper`.
    let mut reached = vec![unreachable; 2 * grid];
    reached[0] = 0;
    let mut expanded = 0usize;
    let result = pathfinding::prelude::astar(
        &Node::Plant(0, Foot::Left),
        |&n| {
            expanded += 1;
            let Node::Plant(k, foot) = n else { return Vec::new() };
            let g = reached[slot(k, foot)];
            let next = foot.other();
            let mut out = Vec::new();
            for s in k_min_step..=k_max_step.min(k_max - k) {
                let to = Node::Plant(k + s, next);
                let pruned = || {
                    let (h, least) = (to_goal[slot(k + s, next)], bound_of(k, foot, s));
                    least == unreachable || g.saturating_add(least).saturating_add(h) > upper
                };
                if relaxed && pruned() {
                    continue;
                }
                if let Some(c) = edge_cost(k, foot, to) {
                    let best = &mut reached[slot(k + s, next)];
                    *best = (*best).min(g + c);
                    out.push((to, c));
                }
            }
            // The goal: the right foot lands on the goal's right footprint.
            if next == Foot::Right
                && let Some(c) = edge_cost(k, foot, Node::Goal)
            {
                upper = upper.min(g + c);
                out.push((Node::Goal, c));
            }
            out
        },
        |&n| match (n, p.bound) {
            (Node::Goal, _) => 0,
            (Node::Plant(k, foot), SearchBound::Relaxed) => to_goal[slot(k, foot)],
            (Node::Plant(k, _), SearchBound::Straight) => {
                // The energy of walking straight to the goal in the time left.
                (energy_of((goal_t - time_of(k)).max(1e-3), path_of(k), goal_pos).0 * scale) as i64
            }
        },
        |&n| n == Node::Goal,
    )?;
    let (nodes, cost) = result;
    let mut footsteps = vec![start.right];
    for n in &nodes {
        match *n {
            Node::Plant(0, _) => footsteps.push(start.left),
            Node::Plant(k, foot) => footsteps.push(typical(k, foot).0),
            Node::Goal => footsteps.push(goal.right),
        }
    }
    footsteps.push(goal.left);
    // Headings of inner footsteps from the path; positions as planned.
    finish_lifts(&mut footsteps, gait);
    Some(FootstepPlan { footsteps, cost: cost as f64 / scale, expanded, costed: costed.get(), relaxed: false })
}

/// Convex hull (counter-clockwise) of points; fewer than three points when
/// they are collinear or too few.
fn convex_hull(points: &[[f64; 2]]) -> Vec<[f64; 2]> {
    let mut p: Vec<[f64; 2]> = points.to_vec();
    p.sort_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])));
    p.dedup_by(|a, b| (a[0] - b[0]).hypot(a[1] - b[1]) < 1e-6);
    if p.len() < 3 {
        return p;
    }
    let cross = |o: [f64; 2], a: [f64; 2], b: [f64; 2]| (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
    let mut lower: Vec<[f64; 2]> = Vec::new();
    for &q in &p {
        while lower.len() >= 2 && cross(lower[lower.len() - 2], lower[lower.len() - 1], q) <= 1e-12 {
            lower.pop();
        }
        lower.push(q);
    }
    let mut upper: Vec<[f64; 2]> = Vec::new();
    for &q in p.iter().rev() {
        while upper.len() >= 2 && cross(upper[upper.len() - 2], upper[upper.len() - 1], q) <= 1e-12 {
            upper.pop();
        }
        upper.push(q);
    }
    lower.pop();
    upper.pop();
    lower.extend(upper);
    if lower.len() < 3 {
        // Collinear: the two extremes.
        return vec![p[0], p[p.len() - 1]];
    }
    lower
}

/// Distance of `q` from a hull (polygon, segment or point) and the nearest
/// point of it (0 and `q` inside).
fn hull_distance(hull: &[[f64; 2]], q: [f64; 2]) -> (f64, [f64; 2]) {
    match hull.len() {
        0 => (0.0, q),
        1 => ((q[0] - hull[0][0]).hypot(q[1] - hull[0][1]), hull[0]),
        _ => {
            let n = hull.len();
            // The vertex after vertex i (no integer division).
            let after = |i: usize| if i + 1 == n { 0 } else { i + 1 };
            // Inside (left of every edge): no distance to compute.
            let left_of = |i: usize| {
                let (a, b) = (hull[i], hull[after(i)]);
                let cross = (b[0] - a[0]) * (q[1] - a[1]) - (b[1] - a[1]) * (q[0] - a[0]);
                cross >= 0.0 || cross.is_nan()
            };
            if n >= 3 && (0..n).all(left_of) {
                return (0.0, q);
            }
            let edges = if n == 2 { 1 } else { n };
            let nearest = |i: usize| {
                let (a, b) = (hull[i], hull[after(i)]);
                let (ux, uy) = (b[0] - a[0], b[1] - a[1]);
                let len2 = (ux * ux + uy * uy).max(1e-18);
                let s = (((q[0] - a[0]) * ux + (q[1] - a[1]) * uy) / len2).clamp(0.0, 1.0);
                [a[0] + s * ux, a[1] + s * uy]
            };
            // The first edge of least distance (`hypot`), its distance
            // taken only where the squared distance is within 10⁻⁹ of the
            // least one (the others are farther, whatever the rounding).
            let square = |c: [f64; 2]| (c[0] - q[0]) * (c[0] - q[0]) + (c[1] - q[1]) * (c[1] - q[1]);
            let least = (0..edges).map(|i| square(nearest(i))).fold(f64::INFINITY, f64::min);
            let mut best = (f64::INFINITY, q);
            for i in 0..edges {
                let c = nearest(i);
                let sq = square(c);
                if least.is_finite() && (sq > least * (1.0 + 1e-9) || sq.is_nan()) {
                    continue;
                }
                let d = (c[0] - q[0]).hypot(c[1] - q[1]);
                if d < best.0 {
                    best = (d, c);
                }
            }
            best
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::character::builtin;
    use crowdpatch_runtime::format::{AgentKind, PathKey, PointRef, Side};

    fn straight_agent(speed: f64, duration: f64) -> BakedAgent {
        let keys = (0..=10)
            .map(|i| {
                let t = 1.0 + duration * i as f64 / 10.0;
                PathKey { t, position: [1.0 + speed * (t - 1.0), 8.0], heading: 0.0 }
            })
            .collect();
        let r = PointRef { side: Side::West, index: 0 };
        BakedAgent { kind: AgentKind::Exogenous { entry: r, exit: r }, keys }
    }

    #[test]
    fn path_samples_are_the_runtimes_bit_for_bit() {
        // Headings that wrap, turn by more than π between keys, and lie
        // beyond 2π.
        let headings = [3.1, -3.0, 0.2, 7.0, -6.5, 2.0, 12.9];
        let keys: Vec<PathKey> = headings
            .iter()
            .enumerate()
            .map(|(i, &h)| PathKey {
                t: 1.0 + 0.7 * i as f64,
                position: [0.3 * i as f64, 1.0 - 0.2 * i as f64],
                heading: h,
            })
            .collect();
        let r = PointRef { side: Side::West, index: 0 };
        let agent = BakedAgent { kind: AgentKind::Exogenous { entry: r, exit: r }, keys };
        for i in -10..=600 {
            let t = 1.0 + f64::from(i) * 0.0073;
            let mine = path_sample(&agent, t).map(|(p, h)| (p.map(f64::to_bits), h.to_bits()));
            let theirs = agent.sample(t).map(|(p, h)| (p.map(f64::to_bits), h.to_bits()));
            assert_eq!(mine, theirs, "t = {t}");
            assert_eq!(path_position(&agent, t).map(|p| p.map(f64::to_bits)), theirs.map(|x| x.0));
            // A window that holds the key after t gives the same.
            let k = key_after(&agent, t);
            let (lo, hi) = (k.saturating_sub(2), (k + 3).min(agent.keys.len()));
            assert_eq!(at_within(&agent, t, lo, hi).map(f64::to_bits), at(&agent, t).0.map(f64::to_bits));
        }
        for a in [-20.0, -7.0, -3.2, -0.0, 0.0, 3.2, 6.4, 100.0, f64::NAN] {
            assert_eq!(wrap_angle_exact(a).to_bits(), crowdpatch_runtime::format::wrap_angle(a).to_bits(), "{a}");
        }
    }

    #[test]
    fn hull_distances_are_those_of_every_edge_bit_for_bit() {
        // Every edge's distance with `hypot`, the first least one.
        let plain = |hull: &[[f64; 2]], q: [f64; 2]| {
            let n = hull.len();
            let mut inside = n >= 3;
            let mut best = (f64::INFINITY, q);
            for i in 0..n {
                let (a, b) = (hull[i], hull[(i + 1) % n]);
                if n >= 3 && (b[0] - a[0]) * (q[1] - a[1]) - (b[1] - a[1]) * (q[0] - a[0]) < 0.0 {
                    inside = false;
                }
                let (ux, uy) = (b[0] - a[0], b[1] - a[1]);
                let len2 = (ux * ux + uy * uy).max(1e-18);
                let s = (((q[0] - a[0]) * ux + (q[1] - a[1]) * uy) / len2).clamp(0.0, 1.0);
                let c = [a[0] + s * ux, a[1] + s * uy];
                let d = (c[0] - q[0]).hypot(c[1] - q[1]);
                if d < best.0 {
                    best = (d, c);
                }
                if n == 2 {
                    break;
                }
            }
            if inside { (0.0, q) } else { best }
        };
        let gait = GaitModel::new(&builtin::character()).unwrap();
        let mut next = crate::test_uniform(0x853c_49e6_748f_ea9b_u64);
        let square = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]];
        for hull in [&gait.hulls[0][..], &gait.hulls[1][..], &square[..], &square[..2]] {
            let mut points: Vec<[f64; 2]> = (0..20_000).map(|_| [4.0 * next() - 2.0, 4.0 * next() - 2.0]).collect();
            // On the vertices, and equally far from two edges.
            points.extend(hull.iter().copied());
            points.extend([[0.5, -1.0], [2.0, 2.0], [-1.0, -1.0], [f64::NAN, 0.0]]);
            for q in points {
                let (a, b) = (hull_distance(hull, q), plain(hull, q));
                assert_eq!((a.0.to_bits(), a.1.map(f64::to_bits)), (b.0.to_bits(), b.1.map(f64::to_bits)), "{q:?}");
            }
        }
    }

    #[test]
    fn convex_hull_and_distance() {
        let h = convex_hull(&[[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.5, 0.5]]);
        assert_eq!(h.len(), 4);
        assert_eq!(hull_distance(&h, [0.5, 0.5]).0, 0.0);
        assert!((hull_distance(&h, [2.0, 0.5]).0 - 1.0).abs() < 1e-12);
        assert!((hull_distance(&[[0.0, 0.0], [1.0, 0.0]], [0.5, 2.0]).0 - 2.0).abs() < 1e-12);
    }

    #[test]
    fn a_walk_too_long_to_keep_its_step_bounds_plans_at_the_straight_line_bounds_cost() {
        // 2,000 s at the default grid: 120,000 plants, too many to keep
        // their step bounds (each is made again when the search asks).
        let c = builtin::character();
        let gait = GaitModel::new(&c).unwrap();
        let (agent, v) = (straight_agent(1.2, 2000.0), [1.2, 0.0]);
        let ends = PathEnds::Exogenous { entry: v, exit: v };
        let plan = |bound| {
            plan_agent(&gait, &c, &agent, ends, 2000.0, &FootstepParams { bound, ..Default::default() }).unwrap()
        };
        let (s, r) = (plan(SearchBound::Straight), plan(SearchBound::Relaxed));
        assert!(!s.relaxed && !r.relaxed);
        assert_eq!(s.cost.to_bits(), r.cost.to_bits(), "{} against {}", s.cost, r.cost);
        assert!(r.costed < s.costed, "{} against {} step costs", r.costed, s.costed);
        assert!(r.footsteps.len() > 3000, "{} footsteps", r.footsteps.len());
    }

    #[test]
    fn a_straight_walk_gets_alternating_steps_at_a_human_cadence() {
        let c = builtin::character();
        let gait = GaitModel::new(&c).unwrap();
        let agent = straight_agent(1.33, 10.0);
        let v = [1.33, 0.0];
        let plan =
            plan_agent(&gait, &c, &agent, PathEnds::Exogenous { entry: v, exit: v }, 10.0, &FootstepParams::default())
                .unwrap();
        assert!(!plan.relaxed);
        let f = &plan.footsteps;
        for w in f.windows(2) {
            assert_ne!(w[0].foot, w[1].foot, "feet alternate");
            assert!(w[1].t > w[0].t);
        }
        // Ends are the boundary convention's: left plants at the entry and
        // at the exit time.
        assert_eq!(f[1].foot, Foot::Left);
        assert!((f[1].t - 1.0).abs() < 1e-12);
        assert_eq!(f[f.len() - 1].foot, Foot::Left);
        assert!((f[f.len() - 1].t - 11.0).abs() < 1e-12);
        // About 1.8 steps per second at 1.33 m/s.
        let steps = (f.len() - 2) as f64;
        let cadence = steps / 10.0;
        assert!((cadence - 1.8).abs() < 0.15, "cadence {cadence}");
    }
}
