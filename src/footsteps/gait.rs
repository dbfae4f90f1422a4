//! What the footstep planner knows of a character's gait (course notes,
//! BPK §5: the step library's reach and timing; docs/design.md "5a.
//! Footsteps"): the [`GaitModel`] precomputed from its step library, the
//! seam convention's [`BoundaryFootsteps`], and the footstep geometry built
//! on them — a plant's footprint, the landing of one footstep in the step
//! frame of another, and lift-off times.

use super::hull::{convex_hull, hull_distance};
use crate::character::library::{StepLibrary, Weights};
use crate::character::{Character, V3};
use crowdpatch_runtime::format::{Foot, Footstep};
use crowdpatch_runtime::skeletal::BoundaryGait;

/// What the planner needs to know of a character's gait, precomputed from
/// its step library.
#[derive(Debug, Clone)]
pub struct GaitModel {
    /// The step library.
    pub library: StepLibrary,
    /// Landing hull per stance foot (counter-clockwise polygon, or fewer
    /// than three points when degenerate), step frame.
    pub(super) hulls: [Vec<[f64; 2]>; 2],
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

/// [`super::ideal_footstep`] with the path's position and heading at `t`, and
/// the heading's cosine and sine, given.
pub(super) fn footprint(
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
pub(super) fn finish_lifts(footsteps: &mut [Footstep], gait: &GaitModel) {
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
pub(super) fn landing_on(from: &Footstep, (c, s): (f64, f64), to: &Footstep) -> [f64; 2] {
    let d = [to.position[0] - from.position[0], to.position[1] - from.position[1]];
    [d[0] * c + d[1] * s, -d[0] * s + d[1] * c]
}
