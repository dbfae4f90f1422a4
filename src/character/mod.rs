//! Characters: a skeleton, a skinned mesh and cyclic clips, the material of
//! the footstep and animation stages.
//!
//! - [`builtin`]: the built-in character, generated in code (no asset);
//! - [`import`]: a user character from a glTF/GLB file;
//! - [`analysis`]: foot plants, steps and their annotations (course notes,
//!   "Dynamic Footsteps Planning for Multiple Characters" §4 — called BPK);
//! - [`library`]: the annotated steps of a character, mirrored, with the
//!   landing-position triangulation used for barycentric blending.
//!
//! Frames: the character's *model frame* is glTF's — +Y up, facing +Z, its
//! left is +X, feet on `y = 0`. Clips are *in place*: the hips stay over the
//! origin on average and a planted foot slides backwards; root motion is
//! derived from the stance foot (BPK §4.3; course notes, "Avatar Locomotion in
//! Crowd Simulation" §4.3), so clips made with root motion are put in place on
//! load ([`Clip::make_in_place`]).

pub mod analysis;
pub mod builtin;
pub mod import;
pub mod library;

use crowdpatch_runtime::format::Foot;
use crowdpatch_runtime::skeletal::{self as rt, SkinnedPrimitive};
use nalgebra::{Matrix3, Matrix4, UnitQuaternion, Vector3};

/// A 3D vector or point `[m]`.
pub type V3 = Vector3<f64>;
/// A unit quaternion.
pub type Quat = UnitQuaternion<f64>;

/// A local joint transform: translation `[m]`, rotation, scale (glTF order
/// `T · R · S`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Transform {
    /// Translation `[m]`.
    pub translation: V3,
    /// Rotation.
    pub rotation: Quat,
    /// Scale (per axis).
    pub scale: V3,
}

impl Default for Transform {
    fn default() -> Self {
        Transform { translation: V3::zeros(), rotation: Quat::identity(), scale: V3::new(1.0, 1.0, 1.0) }
    }
}

impl Transform {
    /// A pure translation.
    pub fn from_translation(t: V3) -> Transform {
        Transform { translation: t, ..Transform::default() }
    }

    /// The 4×4 matrix `T · R · S`.
    pub fn matrix(&self) -> Matrix4<f64> {
        let mut m = self.rotation.to_homogeneous();
        for c in 0..3 {
            for r in 0..3 {
                m[(r, c)] *= self.scale[c];
            }
        }
        m[(0, 3)] = self.translation.x;
        m[(1, 3)] = self.translation.y;
        m[(2, 3)] = self.translation.z;
        m
    }

    /// Interpolates towards `b` by `u ∈ [0, 1]` (lerp, shortest slerp, lerp).
    pub fn interpolate(&self, b: &Transform, u: f64) -> Transform {
        Transform {
            translation: self.translation.lerp(&b.translation, u),
            rotation: self.rotation.try_slerp(&b.rotation, u, 1e-12).unwrap_or(self.rotation),
            scale: self.scale.lerp(&b.scale, u),
        }
    }
}

/// Rotation about +Y by `yaw` `[rad]` (turns +Z towards +X).
pub fn yaw(yaw: f64) -> Quat {
    Quat::from_axis_angle(&Vector3::y_axis(), yaw)
}

/// Yaw `[rad]` of the horizontal direction `(x, z)` in the model frame:
/// 0 along +Z, π/2 along +X.
pub fn yaw_of(x: f64, z: f64) -> f64 {
    x.atan2(z)
}

/// Yaw `[rad]` of a rotation: where it turns +Z, seen from above.
pub fn yaw_of_rotation(q: &Quat) -> f64 {
    let f = q * V3::z();
    yaw_of(f.x, f.z)
}

/// A joint of a skeleton.
#[derive(Debug, Clone, PartialEq)]
pub struct Joint {
    /// Unique name.
    pub name: String,
    /// Parent joint (before this one), or `None` for a top joint.
    pub parent: Option<usize>,
    /// Rest (bind) local transform.
    pub rest: Transform,
}

/// A joint hierarchy, parents before children.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Skeleton {
    /// The joints.
    pub joints: Vec<Joint>,
}

/// Local transforms of every joint of a skeleton (in joint order).
pub type Pose = Vec<Transform>;

impl Skeleton {
    /// Number of joints.
    pub fn len(&self) -> usize {
        self.joints.len()
    }

    /// Whether there is no joint.
    pub fn is_empty(&self) -> bool {
        self.joints.is_empty()
    }

    /// Index of the joint named `name`.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.joints.iter().position(|j| j.name == name)
    }

    /// The rest pose.
    pub fn rest_pose(&self) -> Pose {
        self.joints.iter().map(|j| j.rest).collect()
    }

    /// Global (model-frame) matrices of `pose`: forward kinematics.
    pub fn globals(&self, pose: &[Transform]) -> Vec<Matrix4<f64>> {
        let mut out: Vec<Matrix4<f64>> = Vec::with_capacity(self.joints.len());
        for (j, joint) in self.joints.iter().enumerate() {
            let local = pose[j].matrix();
            out.push(match joint.parent {
                Some(p) => out[p] * local,
                None => local,
            });
        }
        out
    }

    /// Model-frame position of every joint in `pose`.
    pub fn positions(&self, pose: &[Transform]) -> Vec<V3> {
        self.globals(pose).iter().map(position_of).collect()
    }

    /// Whether joint `a` is `b` or one of its ancestors.
    pub fn is_ancestor(&self, a: usize, mut b: usize) -> bool {
        loop {
            if a == b {
                return true;
            }
            match self.joints[b].parent {
                Some(p) => b = p,
                None => return false,
            }
        }
    }
}

/// Translation part of a 4×4 matrix.
pub fn position_of(m: &Matrix4<f64>) -> V3 {
    V3::new(m[(0, 3)], m[(1, 3)], m[(2, 3)])
}

/// Rotation part of a 4×4 matrix (scale removed): the columns normalised,
/// then the quaternion in closed form (Shepperd's method, as nalgebra's
/// `from_rotation_matrix`) when they are orthonormal to 1e-9, else the
/// nearest rotation by nalgebra's iterative `from_matrix_eps` started from
/// it (a sheared matrix, from non-uniform scales). The closed form costs
/// about 1/50 of the iteration from the identity and agrees with it to a
/// few ulps.
pub fn rotation_of(m: &Matrix4<f64>) -> Quat {
    let mut r: Matrix3<f64> = m.fixed_view::<3, 3>(0, 0).into_owned();
    for c in 0..3 {
        let n = r.column(c).norm();
        if n > 0.0 {
            r.set_column(c, &(r.column(c) / n));
        }
    }
    let closed =
        Quat::new_normalize(Quat::from_rotation_matrix(&nalgebra::Rotation3::from_matrix_unchecked(r)).into_inner());
    let off = (r.transpose() * r - Matrix3::identity()).amax();
    if off <= 1e-9 && r.determinant() > 0.0 { closed } else { Quat::from_matrix_eps(&r, f64::EPSILON, 0, closed) }
}

/// A clip: poses sampled at a fixed interval over its duration.
#[derive(Debug, Clone, PartialEq)]
pub struct Clip {
    /// Name, unique within the character.
    pub name: String,
    /// Sample interval `[s]`.
    pub frame_interval: f64,
    /// Poses at `k · frame_interval`, `k = 0..frames.len()`.
    pub frames: Vec<Pose>,
    /// Whether the clip loops: the frame after the last is the first.
    pub cyclic: bool,
}

impl Clip {
    /// Duration `[s]`: `frames × interval` for a cyclic clip (the last frame
    /// blends into the first), `(frames − 1) × interval` otherwise.
    pub fn duration(&self) -> f64 {
        let n = self.frames.len() as f64;
        if self.cyclic { n * self.frame_interval } else { (n - 1.0).max(0.0) * self.frame_interval }
    }

    /// The pose at time `t` `[s]`: wrapped into the cycle for a cyclic clip,
    /// clamped otherwise; frames interpolated (lerp/slerp).
    pub fn sample(&self, t: f64) -> Pose {
        let n = self.frames.len();
        if n == 1 {
            return self.frames[0].clone();
        }
        let d = self.duration();
        let t = if self.cyclic { t.rem_euclid(d) } else { t.clamp(0.0, d) };
        let x = t / self.frame_interval;
        let i = (x.floor() as usize).min(n - 1);
        let u = x - i as f64;
        let j = if self.cyclic { (i + 1) % n } else { (i + 1).min(n - 1) };
        self.frames[i].iter().zip(&self.frames[j]).map(|(a, b)| a.interpolate(b, u)).collect()
    }

    /// Removes root motion: the top joints' average horizontal velocity and
    /// yaw rate over the clip, so that the clip plays in place (and, when it
    /// is cyclic, loops without a jump). Root motion is re-derived from the
    /// stance foot when the clip is used.
    pub fn make_in_place(&mut self, skeleton: &Skeleton) {
        let n = self.frames.len();
        if n < 2 {
            return;
        }
        let tops: Vec<usize> = (0..skeleton.len()).filter(|&j| skeleton.joints[j].parent.is_none()).collect();
        for &top in &tops {
            let first = self.frames[0][top];
            let last = self.frames[n - 1][top];
            // Displacement and yaw change per frame, as a cyclic clip's last
            // frame is one interval before the first of the next cycle.
            let steps = (n - 1) as f64;
            let dp = (last.translation - first.translation) / steps;
            let dyaw = wrap(yaw_of_rotation(&(last.rotation * first.rotation.inverse()))) / steps;
            if dp.xz().norm() < 1e-4 * self.frame_interval && dyaw.abs() < 1e-5 {
                continue;
            }
            for (k, frame) in self.frames.iter_mut().enumerate() {
                let back = yaw(-dyaw * k as f64);
                let t = &mut frame[top];
                let shifted = t.translation - V3::new(dp.x, 0.0, dp.z) * k as f64;
                let centre = first.translation;
                t.translation = centre + back * (shifted - centre);
                t.rotation = back * t.rotation;
            }
        }
    }
}

/// Wraps an angle into `(−π, π]`.
pub fn wrap(a: f64) -> f64 {
    crowdpatch_runtime::format::wrap_angle(a)
}

/// The joints of one foot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FootJoints {
    /// The ankle (the foot joint).
    pub ankle: usize,
    /// The contact point that stays on the ground through the whole stance,
    /// heel-off included: the ball of the foot (toe joint) when the rig has
    /// one, else the ankle.
    pub contact: usize,
}

/// A character: skeleton, skinned mesh, clips and the joints that matter to
/// locomotion.
#[derive(Debug, Clone, PartialEq)]
pub struct Character {
    /// Name.
    pub name: String,
    /// The skeleton.
    pub skeleton: Skeleton,
    /// Skinned mesh primitives in the model frame at rest.
    pub primitives: Vec<SkinnedPrimitive>,
    /// Feet, left then right.
    pub feet: [FootJoints; 2],
    /// The hips (pelvis) joint.
    pub hips: usize,
    /// Mirror image of each joint (itself for a joint on the mid-plane).
    pub mirror: Vec<usize>,
    /// Locomotion clips (cyclic walks, turns) and the idle clip.
    pub clips: Vec<Clip>,
    /// Index of the idle (standing) clip in `clips`, if any.
    pub idle: Option<usize>,
    /// Height at rest `[m]`.
    pub height: f64,
}

impl Character {
    /// The knee's hinge axis of `foot`'s leg in the thigh's frame (unit),
    /// from the most bent knee among the rest pose and the clips' poses,
    /// oriented so that bending the knee is a positive rotation of the shin
    /// about it; `None` when the ankle does not hang from a two-bone leg or
    /// the knee never bends (more than 0.1 rad).
    pub fn knee_hinge(&self, foot: Foot) -> Option<V3> {
        let sk = &self.skeleton;
        let ankle = self.foot(foot).ankle;
        let shin = sk.joints[ankle].parent?;
        let thigh = sk.joints[shin].parent?;
        let mut poses = vec![sk.rest_pose()];
        for clip in &self.clips {
            let d = clip.duration();
            poses.extend((0..24).map(|i| clip.sample(d * i as f64 / 24.0)));
        }
        let mut best: Option<(f64, V3)> = None;
        for pose in &poses {
            let g = sk.globals(pose);
            let (h, k, a) = (position_of(&g[thigh]), position_of(&g[shin]), position_of(&g[ankle]));
            let (u, v) = ((k - h).normalize(), (a - k).normalize());
            let c = u.cross(&v);
            let bend = c.norm().atan2(u.dot(&v));
            if bend > best.map_or(0.1, |b| b.0) {
                best = Some((bend, rotation_of(&g[thigh]).inverse() * c.normalize()));
            }
        }
        best.map(|b| b.1)
    }

    /// The joints of `foot`.
    pub fn foot(&self, foot: Foot) -> FootJoints {
        self.feet[foot.index()]
    }

    /// The character in the baked format: joints with rest transforms and
    /// inverse bind matrices, feet, hips, mesh.
    pub fn to_runtime(&self) -> rt::Character {
        let rest = self.skeleton.rest_pose();
        let globals = self.skeleton.globals(&rest);
        let joints = self
            .skeleton
            .joints
            .iter()
            .zip(&globals)
            .map(|(j, g)| {
                let inv = g.try_inverse().unwrap_or_else(Matrix4::identity);
                let q = j.rest.rotation.coords;
                rt::CharacterJoint {
                    name: j.name.clone(),
                    parent: j.parent,
                    translation: j.rest.translation.into(),
                    rotation: [q.x, q.y, q.z, q.w],
                    scale: j.rest.scale.into(),
                    inverse_bind: std::array::from_fn(|k| inv[(k % 4, k / 4)]),
                }
            })
            .collect();
        rt::Character {
            name: self.name.clone(),
            joints,
            left_foot: self.feet[0].contact,
            right_foot: self.feet[1].contact,
            hips: self.hips,
            height: self.height,
            primitives: self.primitives.clone(),
        }
    }

    /// Mirrors `pose` across the model frame's mid-plane (`x = 0`): left
    /// and right joints swap and every motion is reflected.
    ///
    /// Works for any rig whose rest pose is symmetric, whatever its joints'
    /// axis conventions: each joint's model-frame rotation *relative to its
    /// rest* is reflected (`S·Δ·S`, `S = diag(−1, 1, 1)`) and taken from its
    /// mirror joint, then turned back into local transforms. Top-joint
    /// translations are reflected as well.
    pub fn mirror_pose(&self, pose: &[Transform]) -> Pose {
        let sk = &self.skeleton;
        let rest = sk.rest_pose();
        let rest_g = sk.globals(&rest);
        let g = sk.globals(pose);
        let reflect = |q: &Quat| {
            let c = q.coords;
            Quat::new_unchecked(nalgebra::Quaternion::new(c.w, c.x, -c.y, -c.z))
        };
        let scale_of =
            |m: &Matrix4<f64>| V3::new(m.column(0).xyz().norm(), m.column(1).xyz().norm(), m.column(2).xyz().norm());
        let mirrored: Vec<Matrix4<f64>> = (0..sk.len())
            .map(|j| {
                let m = self.mirror[j];
                let delta = rotation_of(&g[m]) * rotation_of(&rest_g[m]).inverse();
                let r = reflect(&delta) * rotation_of(&rest_g[j]);
                let p = position_of(&g[m]);
                Transform { translation: V3::new(-p.x, p.y, p.z), rotation: r, scale: scale_of(&rest_g[j]) }.matrix()
            })
            .collect();
        (0..sk.len())
            .map(|j| {
                let local = match sk.joints[j].parent {
                    None => mirrored[j],
                    Some(p) => mirrored[p].try_inverse().unwrap_or_else(Matrix4::identity) * mirrored[j],
                };
                Transform { translation: position_of(&local), rotation: rotation_of(&local), scale: pose[j].scale }
            })
            .collect()
    }
}

/// Pairs every joint with its mirror by name: `…Left…`/`…Right…`,
/// `…_l`/`…_r`, `…L`/`…R`, `….L`/`….R`, `left_…`/`right_…`; a joint
/// without a partner mirrors to itself.
pub fn mirror_map(skeleton: &Skeleton) -> Vec<usize> {
    let swaps: [(&str, &str); 6] =
        [("Left", "Right"), ("left", "right"), ("_l", "_r"), (".L", ".R"), ("_L", "_R"), ("L", "R")];
    skeleton
        .joints
        .iter()
        .enumerate()
        .map(|(i, j)| {
            for (a, b) in swaps {
                for (from, to) in [(a, b), (b, a)] {
                    // Try every occurrence, last first (suffixes are the usual case).
                    let mut idx: Vec<usize> = j.name.match_indices(from).map(|(k, _)| k).collect();
                    idx.reverse();
                    for k in idx {
                        let name = format!("{}{}{}", &j.name[..k], to, &j.name[k + from.len()..]);
                        if let Some(m) = skeleton.find(&name) {
                            return m;
                        }
                    }
                }
            }
            i
        })
        .collect()
}

/// Blends poses with weights (summing to 1): translations and scales as
/// weighted sums, rotations as the normalised weighted sum of quaternions
/// aligned to the first (a good approximation of the weighted mean for
/// nearby rotations).
pub fn blend_poses(poses: &[(&[Transform], f64)]) -> Pose {
    let n = poses[0].0.len();
    (0..n)
        .map(|j| {
            let first = poses[0].0[j].rotation.coords;
            let mut t = V3::zeros();
            let mut s = V3::zeros();
            let mut q = nalgebra::Vector4::zeros();
            for (pose, w) in poses {
                let x = &pose[j];
                t += x.translation * *w;
                s += x.scale * *w;
                let c = x.rotation.coords;
                q += if c.dot(&first) < 0.0 { -c * *w } else { c * *w };
            }
            let rotation = if q.norm() > 1e-12 {
                Quat::from_quaternion(nalgebra::Quaternion::from(q))
            } else {
                poses[0].0[j].rotation
            };
            Transform { translation: t, rotation, scale: s }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transform_matrix_composes_translation_rotation_scale() {
        let t = Transform { translation: V3::new(1.0, 2.0, 3.0), rotation: yaw(0.5), scale: V3::new(2.0, 2.0, 2.0) };
        let m = t.matrix();
        let p = m.transform_point(&nalgebra::Point3::new(0.0, 0.0, 1.0));
        let expect = V3::new(1.0, 2.0, 3.0) + yaw(0.5) * V3::new(0.0, 0.0, 2.0);
        assert!((p.coords - expect).norm() < 1e-12);
        assert!((yaw_of_rotation(&yaw(0.5)) - 0.5).abs() < 1e-12);
    }
}
