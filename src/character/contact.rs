//! Where a character's feet touch the ground: the **contact points** of its
//! soles (heel, ball and toe of each foot) and the **sole vertices** (the
//! lowest of its skinned mesh), found once in the rest (bind) pose.
//!
//! These are what a player sees of the feet: the quality gate
//! ([`crate::animation::gate`]), the report and `tools/threejs-check` measure
//! foot contact on these points as played ([`crate::animation::contact`]),
//! not only on the joint the footstep planner holds.
//!
//! - *heel*: the rearmost point of the foot's sole, carried by the ankle
//!   (foot) joint;
//! - *ball*: the sole under the toe joint (the ball of the foot), carried by
//!   the toe joint; without a toe joint, 70 % of the way from heel to toe,
//!   carried by the ankle;
//! - *toe*: the foremost point of the sole, carried by the toe joint (or the
//!   ankle).
//!
//! The sole is the lowest layer of the mesh vertices the foot's joints carry
//! (most weight on the ankle or a joint below it): within
//! [`SOLE_LAYER`] of their lowest. A foot that carries no vertex (a rig
//! whose mesh is not skinned to its foot) falls back on its joints put down
//! on the ground: the ankle for the heel, the toe joint for ball and toe.
//! Cost: O(vertices) once per character.

use super::{Character, V3};
use crowdpatch_runtime::format::Foot;
use serde::Serialize;

/// Thickness of the sole layer `[m]`: vertices of a foot within this of
/// its lowest vertex at rest are its sole.
pub const SOLE_LAYER: f64 = 0.015;

/// Most sole vertices kept for the lowest-vertex measure (the lowest of the
/// mesh at rest).
pub const SOLE_VERTICES: usize = 256;

/// Which part of a foot's sole a contact point is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Part {
    /// The rearmost point of the sole, under the ankle.
    Heel,
    /// The sole under the toe joint.
    Ball,
    /// The foremost point of the sole.
    Toe,
}

impl Part {
    /// The three parts, heel first.
    pub const ALL: [Part; 3] = [Part::Heel, Part::Ball, Part::Toe];

    /// Its name in messages and reports.
    pub fn name(self) -> &'static str {
        match self {
            Part::Heel => "heel",
            Part::Ball => "ball",
            Part::Toe => "toe",
        }
    }
}

/// One contact point of a foot: a point rigidly carried by `joint`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContactPoint {
    /// The foot.
    pub foot: Foot,
    /// Which part of its sole.
    pub part: Part,
    /// The joint that carries it (skeleton index).
    pub joint: usize,
    /// Its position in the joint's frame (the joint's rest global matrix
    /// inverted, times its rest position) `[m]`.
    pub local: V3,
    /// Its position in the model frame at rest `[m]`.
    pub rest: V3,
}

impl ContactPoint {
    /// Its model-frame position `[m]` for its joint's global matrix
    /// `global`. O(1).
    pub fn at(&self, global: &nalgebra::Matrix4<f64>) -> V3 {
        (global * self.local.push(1.0)).xyz()
    }
}

/// A mesh vertex with its skin: rest position (model frame) `[m]`, joints
/// and weights.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SkinnedVertex {
    /// Position at rest, model frame `[m]`.
    pub rest: V3,
    /// Joint indices.
    pub joints: [u16; 4],
    /// Weights (summing to 1).
    pub weights: [f32; 4],
    /// The rest position in each joint's rest frame (the inverse bind
    /// matrix applied), so that skinning it is a dot product a joint.
    pub locals: [V3; 4],
}

/// The soles of a character: six contact points (left heel, ball, toe,
/// then right) and the lowest mesh vertices at rest.
#[derive(Debug, Clone, PartialEq)]
pub struct Soles {
    /// Left heel, ball, toe, then right heel, ball, toe.
    pub points: [ContactPoint; 6],
    /// The lowest mesh vertices at rest (at most [`SOLE_VERTICES`]).
    pub vertices: Vec<SkinnedVertex>,
    /// Whether each foot's points come from its mesh (else from its joints).
    pub from_mesh: [bool; 2],
    /// Each foot's contact joint at rest, model frame `[m]` (left, right).
    pub contact_rest: [V3; 2],
}

impl Soles {
    /// The soles of `character`. O(vertices + joints).
    pub fn of(character: &Character) -> Soles {
        let sk = &character.skeleton;
        let rest = sk.globals(&sk.rest_pose());
        let pos = |j: usize| super::position_of(&rest[j]);
        // The joints below each ankle (the ankle included).
        let below = |ankle: usize, j: usize| j == ankle || sk.is_ancestor(ankle, j);
        let mut feet_vertices: [Vec<V3>; 2] = [Vec::new(), Vec::new()];
        let inverse_rest: Vec<_> =
            rest.iter().map(|g| g.try_inverse().unwrap_or_else(nalgebra::Matrix4::identity)).collect();
        let mut all: Vec<SkinnedVertex> = Vec::new();
        for p in &character.primitives {
            for ((v, js), ws) in p.positions.iter().zip(&p.joints).zip(&p.weights) {
                let v = V3::new(v[0] as f64, v[1] as f64, v[2] as f64);
                let locals = js.map(|j| inverse_rest.get(j as usize).map_or(v, |m| (m * v.push(1.0)).xyz()));
                all.push(SkinnedVertex { rest: v, joints: *js, weights: *ws, locals });
                let (mut best, mut w) = (usize::MAX, 0.0f32);
                for k in 0..4 {
                    if ws[k] > w {
                        (best, w) = (js[k] as usize, ws[k]);
                    }
                }
                for foot in Foot::BOTH {
                    if best < sk.len() && below(character.foot(foot).ankle, best) {
                        feet_vertices[foot.index()].push(v);
                    }
                }
            }
        }
        let mut from_mesh = [false; 2];
        let mut points = Vec::with_capacity(6);
        for foot in Foot::BOTH {
            let fj = character.foot(foot);
            let (ankle, contact) = (pos(fj.ankle), pos(fj.contact));
            let forward = {
                let d = V3::new(contact.x - ankle.x, 0.0, contact.z - ankle.z);
                if d.norm() > 0.01 { d.normalize() } else { V3::new(0.0, 0.0, 1.0) }
            };
            let vs = &feet_vertices[foot.index()];
            let low = vs.iter().map(|v| v.y).fold(f64::INFINITY, f64::min);
            let (heel, ball, toe) = if low.is_finite() {
                from_mesh[foot.index()] = true;
                let layer: Vec<V3> = vs.iter().copied().filter(|v| v.y <= low + SOLE_LAYER).collect();
                let along = |v: &V3| v.dot(&forward);
                let heel = *layer.iter().min_by(|a, b| along(a).total_cmp(&along(b))).unwrap_or(&ankle);
                let toe = *layer.iter().max_by(|a, b| along(a).total_cmp(&along(b))).unwrap_or(&contact);
                let ball =
                    if fj.contact != fj.ankle { V3::new(contact.x, low, contact.z) } else { heel + (toe - heel) * 0.7 };
                (heel, ball, toe)
            } else {
                let ground = |p: V3| V3::new(p.x, 0.0, p.z);
                (ground(ankle), ground(contact), ground(contact))
            };
            for (part, at) in [(Part::Heel, heel), (Part::Ball, ball), (Part::Toe, toe)] {
                let joint = if part == Part::Heel { fj.ankle } else { fj.contact };
                let local = rest[joint].try_inverse().map_or(V3::zeros(), |inv| (inv * at.push(1.0)).xyz());
                points.push(ContactPoint { foot, part, joint, local, rest: at });
            }
        }
        // The lowest vertices of the whole mesh.
        all.sort_by(|a, b| a.rest.y.total_cmp(&b.rest.y));
        all.truncate(SOLE_VERTICES);
        if let Some(low) = all.first().map(|v| v.rest.y) {
            all.retain(|v| v.rest.y <= low + 0.03);
        }
        let contact_rest = Foot::BOTH.map(|f| pos(character.foot(f).contact));
        Soles { points: points.try_into().expect("six contact points"), vertices: all, from_mesh, contact_rest }
    }

    /// Puts each of `character`'s clips on the floor: the clip's ground is
    /// the median over its frames of the lowest sole vertex (of the sole
    /// points for a character without a mesh; in a walk a foot is always
    /// down, standing both are), and the clip's top joints
    /// are moved up or down by it, so that a clip authored with its feet
    /// in the floor or over it plants them on it as the bind pose does
    /// (the model frame's floor, `y = 0`, is the lowest vertex at rest).
    /// Returns, per clip moved more than 2 mm, its name and the move `[m]`.
    /// O(clip frames · joints).
    pub fn ground_clips(&self, character: &mut Character) -> Vec<(String, f64)> {
        let sk = &character.skeleton;
        let rest_low = self.lowest_at(&sk.globals(&sk.rest_pose()));
        let rest_low = if rest_low.is_finite() {
            rest_low
        } else {
            self.points.iter().map(|p| p.rest.y).fold(f64::INFINITY, f64::min)
        };
        let tops: Vec<usize> = (0..sk.len()).filter(|&j| sk.joints[j].parent.is_none()).collect();
        let mut moved = Vec::new();
        for clip in &mut character.clips {
            let mut lows: Vec<f64> = clip
                .frames
                .iter()
                .map(|f| {
                    let g = sk.globals(f);
                    let low = self.lowest_at(&g);
                    if low.is_finite() {
                        low
                    } else {
                        self.points_at(&g).iter().map(|p| p.y).fold(f64::INFINITY, f64::min)
                    }
                })
                .filter(|y| y.is_finite())
                .collect();
            let Some(ground) = crate::stats::quantile(&mut lows, 0.5, crate::stats::Quantile::Nearest) else {
                continue;
            };
            let dy = rest_low.clamp(-0.05, 0.0) - ground;
            if dy.abs() <= 0.002 {
                continue;
            }
            for f in &mut clip.frames {
                for &t in &tops {
                    f[t].translation.y += dy;
                }
            }
            moved.push((clip.name.clone(), dy));
        }
        moved
    }

    /// The contact points as the baked format records them.
    pub fn records(&self) -> Vec<crowdpatch_runtime::format::SolePoint> {
        self.points
            .iter()
            .map(|p| crowdpatch_runtime::format::SolePoint {
                foot: p.foot,
                part: p.part.name().to_owned(),
                joint: p.joint,
                local: p.local.into(),
            })
            .collect()
    }

    /// The contact points' model-frame positions for the joints' global
    /// matrices `globals` (in the order of [`Soles::points`]). O(1).
    pub fn points_at(&self, globals: &[nalgebra::Matrix4<f64>]) -> [V3; 6] {
        std::array::from_fn(|k| {
            let p = &self.points[k];
            p.at(&globals[p.joint])
        })
    }

    /// The least height (`y`) of the sole vertices, linear-blend skinned by
    /// the joints' global matrices `globals`. O(sole vertices).
    pub fn lowest_at(&self, globals: &[nalgebra::Matrix4<f64>]) -> f64 {
        let mut low = f64::INFINITY;
        for v in &self.vertices {
            let mut y = 0.0;
            let mut wsum = 0.0;
            for k in 0..4 {
                let w = v.weights[k] as f64;
                let j = v.joints[k] as usize;
                if w <= 0.0 || j >= globals.len() {
                    continue;
                }
                y += w * (globals[j].row(1) * v.locals[k].push(1.0))[0];
                wsum += w;
            }
            if wsum > 0.0 {
                low = low.min(y / wsum);
            }
        }
        low
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::character::builtin;

    #[test]
    fn the_builtin_soles_lie_on_the_ground_heel_behind_ball_behind_toe() {
        let c = builtin::character();
        let s = Soles::of(&c);
        assert_eq!(s.from_mesh, [true, true]);
        for foot in 0..2 {
            let [h, b, t] = [0, 1, 2].map(|k| s.points[3 * foot + k].rest);
            for p in [h, b, t] {
                assert!(p.y.abs() < 0.02, "{p:?} is not on the ground");
            }
            // The model faces +Z.
            assert!(h.z < b.z && b.z < t.z, "heel {h:?}, ball {b:?}, toe {t:?}");
            // The left foot is on +X.
            assert_eq!(h.x > 0.0, foot == 0);
        }
        // The contact points at rest, through the joints, are where they
        // were found; the sole vertices at rest are as low as the mesh.
        let sk = &c.skeleton;
        let g = sk.globals(&sk.rest_pose());
        for (p, q) in s.points_at(&g).iter().zip(&s.points) {
            assert!((p - q.rest).norm() < 1e-9);
        }
        let low = c.primitives.iter().flat_map(|p| &p.positions).map(|v| v[1] as f64).fold(f64::INFINITY, f64::min);
        assert!((s.lowest_at(&g) - low).abs() < 1e-6);
    }

    #[test]
    fn a_clip_with_its_feet_in_the_floor_is_put_back_on_it() {
        let mut c = builtin::character();
        let s = Soles::of(&c);
        // The built-in walks stand on the floor already.
        assert!(s.clone().ground_clips(&mut c.clone()).is_empty());
        let tops: Vec<usize> = (0..c.skeleton.len()).filter(|&j| c.skeleton.joints[j].parent.is_none()).collect();
        let before = c.clips[0].frames.clone();
        for f in &mut c.clips[0].frames {
            for &t in &tops {
                f[t].translation.y -= 0.03;
            }
        }
        let moved = s.ground_clips(&mut c);
        assert_eq!(moved.len(), 1, "{moved:?}");
        assert_eq!(moved[0].0, c.clips[0].name);
        assert!((moved[0].1 - 0.03).abs() < 1e-9, "{moved:?}");
        for (a, b) in c.clips[0].frames.iter().zip(&before) {
            for &t in &tops {
                assert!((a[t].translation - b[t].translation).norm() < 1e-9);
            }
        }
    }
}
