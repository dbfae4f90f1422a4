//! Characters: a skeleton, a skinned mesh and cyclic clips, the material of
//! the footstep and animation stages.
//!
//! - [`builtin`]: the built-in character, generated in code (no asset);
//! - [`import`]: a user character from a glTF/GLB file;
//! - [`analysis`]: foot plants, steps and their annotations (course notes,
//!   "Dynamic Footsteps Planning for Multiple Characters" §4 — called BPK);
//! - [`contact`]: the contact points of the soles (heel, ball, toe) and the
//!   lowest mesh vertices, found in the rest pose;
//! - [`describe`]: the character in words, as `character inspect` and the
//!   editor show it;
//! - [`library`]: the annotated steps of a character, mirrored, with the
//!   landing-position triangulation used for barycentric blending;
//! - [`fk`] and [`ik`]: forward kinematics of single joints and the leg IK
//!   (two-bone IK, heel roll, reach fix, detached legs), which retargeting
//!   and the animation stage both use;
//! - [`rigid`]: legs of one bone (no knee, no foot joint) walking as a
//!   compass: their sole joints, and poses stood on their feet.
//!
//! Frames: the character's *model frame* is glTF's — +Y up, facing +Z, its
//! left is +X, feet on `y = 0`. Clips are *in place*: the hips stay over the
//! origin on average and a planted foot slides backwards; root motion is
//! derived from the stance foot (BPK §4.3; course notes, "Avatar Locomotion in
//! Crowd Simulation" §4.3), so clips made with root motion are put in place on
//! load ([`Clip::make_in_place`]).

pub mod analysis;
pub mod builtin;
pub mod bvh;
pub mod choice;
pub mod contact;
pub mod describe;
pub mod fk;
pub mod humanoid;
pub mod ik;
pub mod import;
pub mod library;
pub mod retarget;
pub mod rigid;
pub mod setup;

use crowdpatch_runtime::format::Foot;
use crowdpatch_runtime::skeletal::{self as rt, SkinnedPrimitive};
use humanoid::{Humanoid, Rig};
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

    /// [`Transform::interpolate`] with the rotations' arc precomputed
    /// (`arc` = `SlerpArc::new(&self.rotation, &b.rotation, 1e-12)`): the
    /// same bits, without an arccosine or a square root. O(1).
    pub fn interpolate_on(&self, b: &Transform, u: f64, arc: &SlerpArc) -> Transform {
        Transform {
            translation: self.translation.lerp(&b.translation, u),
            rotation: arc.at(&self.rotation, &b.rotation, u).unwrap_or(self.rotation),
            scale: self.scale.lerp(&b.scale, u),
        }
    }
}

/// The arc between two unit quaternions `a` and `b` (the short way round),
/// precomputed for slerps between them at many parameters:
/// [`SlerpArc::at`]`(a, b, t)` gives the same bits as nalgebra's
/// `a.try_slerp(b, t, epsilon)`, at the cost of two sines (the arccosine
/// and the square root are taken once). 24 bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlerpArc {
    /// Half the angle between them `[rad]` (`acos` of the dot product).
    hang: f64,
    /// Its sine, `√(1 − cos²)`.
    s_hang: f64,
    /// Whether `b` is negated (the dot product is negative).
    flip: bool,
    /// 0: an arc; 1: `a` and `b` coincide (the slerp is `a`); 2: too
    /// short an arc for `epsilon` (no slerp).
    kind: u8,
}

impl SlerpArc {
    /// The arc from `a` to `b`; `epsilon` as nalgebra's `try_slerp` takes
    /// it (no slerp where the sine of the half-angle is within it of 0).
    pub fn new(a: &Quat, b: &Quat, epsilon: f64) -> SlerpArc {
        // The steps of `UnitQuaternion::try_slerp` and of
        // `Unit<Vector>::try_slerp`, in their order.
        let flip = a.coords.dot(&b.coords) < 0.0;
        let bc = if flip { -b.coords } else { b.coords };
        let c_hang = a.coords.dot(&bc);
        if c_hang >= 1.0 {
            return SlerpArc { hang: 0.0, s_hang: 0.0, flip, kind: 1 };
        }
        let hang = c_hang.acos();
        let s_hang = (1.0 - c_hang * c_hang).sqrt();
        let kind = if relative_eq_zero(s_hang, epsilon) { 2 } else { 0 };
        SlerpArc { hang, s_hang, flip, kind }
    }

    /// The slerp from `a` to `b` (those given to [`SlerpArc::new`]) at `t`:
    /// `a.try_slerp(b, t, epsilon)`, bit for bit. O(1).
    pub fn at(&self, a: &Quat, b: &Quat, t: f64) -> Option<Quat> {
        match self.kind {
            1 => Some(*a),
            2 => None,
            _ => {
                let bc = if self.flip { -b.coords } else { b.coords };
                let ta = ((1.0 - t) * self.hang).sin() / self.s_hang;
                // At t = ½ both sines are of the same angle (1 − ½ is ½ exactly).
                let tb = if t == 0.5 { ta } else { (t * self.hang).sin() / self.s_hang };
                let mut res = a.coords.scale(ta);
                res.axpy(tb, &bc, 1.0);
                Some(Quat::new_unchecked(nalgebra::Quaternion::from(res)))
            }
        }
    }
}

/// `approx::relative_eq!(s, 0.0, epsilon = epsilon)` with the default
/// relative tolerance (`f64::EPSILON`), as nalgebra's `try_slerp` tests it.
fn relative_eq_zero(s: f64, epsilon: f64) -> bool {
    if s == 0.0 {
        return true;
    }
    if s.is_infinite() {
        return false;
    }
    let abs_diff = (s - 0.0).abs();
    abs_diff <= epsilon || abs_diff <= s.abs() * f64::EPSILON
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

/// `0` below 0, `1` above 1, the cubic smoothstep `3x² − 2x³` between:
/// the ease of every blend weight of the characters and the synthesis.
/// O(1).
pub(crate) fn smoothstep(x: f64) -> f64 {
    let x = x.clamp(0.0, 1.0);
    x * x * (3.0 - 2.0 * x)
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
        self.globals_into(pose, &mut out);
        out
    }

    /// [`Skeleton::globals`] into `out` (its allocation reused).
    pub fn globals_into(&self, pose: &[Transform], out: &mut Vec<Matrix4<f64>>) {
        out.clear();
        for (j, joint) in self.joints.iter().enumerate() {
            let local = pose[j].matrix();
            out.push(match joint.parent {
                Some(p) => mul4(&out[p], &local),
                None => local,
            });
        }
    }

    /// Model-frame position of every joint in `pose`.
    pub fn positions(&self, pose: &[Transform]) -> Vec<V3> {
        self.globals(pose).iter().map(position_of).collect()
    }

    /// `pose` taken through `to_model` (a similarity: rotation, uniform
    /// scale, translation) into another frame, each joint's global
    /// transform stripped of scale, then made local again: the same motion
    /// on a skeleton whose joints all have unit scale. O(joints).
    pub fn model_pose(&self, pose: &[Transform], to_model: &Matrix4<f64>) -> Pose {
        let g = self.globals(pose);
        let rigid: Vec<(V3, Quat)> = g
            .iter()
            .map(|m| {
                let m = to_model * m;
                (position_of(&m), rotation_of(&m))
            })
            .collect();
        self.joints
            .iter()
            .enumerate()
            .map(|(j, joint)| {
                let (p, q) = rigid[j];
                match joint.parent {
                    Some(k) => {
                        let (pp, pq) = rigid[k];
                        Transform {
                            translation: pq.inverse() * (p - pp),
                            rotation: pq.inverse() * q,
                            ..Transform::default()
                        }
                    }
                    None => Transform { translation: p, rotation: q, ..Transform::default() },
                }
            })
            .collect()
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

/// The product `a · b` of 4×4 matrices, the same bits as nalgebra's
/// `a * b` (which sums `((a₀b₀ + a₁b₁) + a₂b₂) + a₃b₃` for each entry, one
/// column of `b` at a time), written out: the forward kinematics of the
/// synthesis multiplies many of them. 64 multiplications.
pub fn mul4(a: &Matrix4<f64>, b: &Matrix4<f64>) -> Matrix4<f64> {
    let (a, b) = (a.as_slice(), b.as_slice());
    // Column-major: entry (r, c) at c · 4 + r.
    let mut out = [0.0; 16];
    for c in 0..4 {
        let (b0, b1, b2, b3) = (b[c * 4], b[c * 4 + 1], b[c * 4 + 2], b[c * 4 + 3]);
        for r in 0..4 {
            out[c * 4 + r] = a[12 + r] * b3 + (a[8 + r] * b2 + (a[4 + r] * b1 + a[r] * b0));
        }
    }
    Matrix4::from_column_slice(&out)
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
/// few ulps. The iteration stops after [`MAX_ROTATION_ITERATIONS`] (a
/// degenerate matrix never converges: a zero column, or entries that
/// overflowed); a matrix with a non-finite entry gives the identity. O(1).
pub fn rotation_of(m: &Matrix4<f64>) -> Quat {
    let mut r: Matrix3<f64> = m.fixed_view::<3, 3>(0, 0).into_owned();
    if !r.iter().all(|x| x.is_finite()) {
        return Quat::identity();
    }
    for c in 0..3 {
        let n = r.column(c).norm();
        if n > 0.0 {
            r.set_column(c, &(r.column(c) / n));
        }
    }
    let closed =
        Quat::new_normalize(Quat::from_rotation_matrix(&nalgebra::Rotation3::from_matrix_unchecked(r)).into_inner());
    let off = (r.transpose() * r - Matrix3::identity()).amax();
    if off <= 1e-9 && r.determinant() > 0.0 {
        closed
    } else {
        Quat::from_matrix_eps(&r, f64::EPSILON, MAX_ROTATION_ITERATIONS, closed)
    }
}

/// Iterations of [`rotation_of`]'s nearest-rotation search: a sheared joint
/// matrix of a real rig converges in a few; found by fuzzing, a degenerate
/// one (entries overflowed to ±∞ in a product, then NaN) looped for ever
/// with nalgebra's 0, "until convergence".
pub const MAX_ROTATION_ITERATIONS: usize = 100;

/// Repairs the pops of every clip of `character` ([`Clip::repair_pops`]),
/// returning a note per clip repaired (its name, how many pops, the worst:
/// joint, frame and size). O(frames · joints).
pub fn repair_clip_pops(character: &mut Character) -> Vec<String> {
    let mut notes = Vec::new();
    let names: Vec<String> = character.skeleton.joints.iter().map(|j| j.name.clone()).collect();
    for clip in &mut character.clips {
        let pops = clip.repair_pops();
        let Some(worst) = pops.iter().max_by(|a, b| a.size.total_cmp(&b.size)) else { continue };
        let size = if worst.rotation {
            format!("{:.0}°", worst.size.to_degrees())
        } else {
            format!("{:.1} cm", 100.0 * worst.size)
        };
        notes.push(format!(
            "clip {}: {} joint value{} popped out for one frame and back (worst: {} at frame {}, {size}); each replaced by its neighbours' mean",
            clip.name,
            pops.len(),
            if pops.len() == 1 { "" } else { "s" },
            names.get(worst.joint).map_or("?", |s| s.as_str()),
            worst.frame,
        ));
    }
    notes
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

/// A joint's rotation from one frame to the next and back by more than
/// this `[rad]` (17°) is a pop ([`Clip::repair_pops`]): at 24 frames a
/// second and more, a walk's fastest joint turns about half of it a frame.
pub const POP_ANGLE: f64 = 0.3;

/// A joint's translation out and back by more than this `[m]` from one
/// frame to the next is a pop ([`Clip::repair_pops`]).
pub const POP_SHIFT: f64 = 0.05;

/// A repaired pop ([`Clip::repair_pops`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pop {
    /// The frame.
    pub frame: usize,
    /// The joint (skeleton index).
    pub joint: usize,
    /// How far it went out: rotation `[rad]`, or translation `[m]` for a
    /// translation pop.
    pub size: f64,
    /// Whether it was a rotation.
    pub rotation: bool,
}

impl Clip {
    /// Repairs pops: a joint that turns by more than [`POP_ANGLE`] (or moves
    /// by more than [`POP_SHIFT`]) at one frame and back at the next, its
    /// neighbours less than half as far apart, is a keyframe gone wrong (a
    /// walk so keyed would flick a foot off the floor for a frame, or split
    /// its stance into two); that frame's value is replaced by its
    /// neighbours' mean (slerp, lerp). Neighbours wrap for a cyclic clip;
    /// the end frames of another are left alone. Returns what was repaired.
    /// O(frames · joints).
    pub fn repair_pops(&mut self) -> Vec<Pop> {
        let n = self.frames.len();
        let mut pops = Vec::new();
        if n < 3 {
            return pops;
        }
        for k in 0..n {
            if !self.cyclic && (k == 0 || k + 1 == n) {
                continue;
            }
            let (a, b) = ((k + n - 1) % n, (k + 1) % n);
            for j in 0..self.frames[k].len() {
                let (p, q, r) = (self.frames[a][j], self.frames[k][j], self.frames[b][j]);
                let (out, back, across) = (
                    q.rotation.angle_to(&p.rotation),
                    q.rotation.angle_to(&r.rotation),
                    p.rotation.angle_to(&r.rotation),
                );
                if out > POP_ANGLE && back > POP_ANGLE && across < 0.5 * out.min(back) {
                    self.frames[k][j].rotation = p.rotation.slerp(&r.rotation, 0.5);
                    pops.push(Pop { frame: k, joint: j, size: out.max(back), rotation: true });
                }
                let (out, back, across) = (
                    (q.translation - p.translation).norm(),
                    (q.translation - r.translation).norm(),
                    (p.translation - r.translation).norm(),
                );
                if out > POP_SHIFT && back > POP_SHIFT && across < 0.5 * out.min(back) {
                    self.frames[k][j].translation = 0.5 * (p.translation + r.translation);
                    pops.push(Pop { frame: k, joint: j, size: out.max(back), rotation: false });
                }
            }
        }
        pops
    }

    /// Duration `[s]`: `frames × interval` for a cyclic clip (the last frame
    /// blends into the first), `(frames − 1) × interval` otherwise.
    pub fn duration(&self) -> f64 {
        let n = self.frames.len() as f64;
        if self.cyclic { n * self.frame_interval } else { (n - 1.0).max(0.0) * self.frame_interval }
    }

    /// The pose at time `t` `[s]`: wrapped into the cycle for a cyclic clip,
    /// clamped otherwise; frames interpolated (lerp/slerp).
    pub fn sample(&self, t: f64) -> Pose {
        if self.frames.len() == 1 {
            return self.frames[0].clone();
        }
        let (i, j, u) = self.frames_at(t);
        self.frames[i].iter().zip(&self.frames[j]).map(|(a, b)| a.interpolate(b, u)).collect()
    }

    /// The frames `i`, `j` whose interpolation by `u` is the pose at time
    /// `t` `[s]` ([`Clip::sample`]): `j` follows `i` (wrapping for a cyclic
    /// clip, clamped otherwise). The clip has at least two frames. O(1).
    pub fn frames_at(&self, t: f64) -> (usize, usize, f64) {
        let n = self.frames.len();
        let d = self.duration();
        // `t.rem_euclid(d)` is `t` itself in [0, d) (exact: no fmod).
        let t = if self.cyclic { if (0.0..d).contains(&t) { t } else { t.rem_euclid(d) } } else { t.clamp(0.0, d) };
        let x = t / self.frame_interval;
        let i = (x.floor() as usize).min(n - 1);
        let u = x - i as f64;
        let j = if self.cyclic { (i + 1) % n } else { (i + 1).min(n - 1) };
        (i, j, u)
    }

    /// The arcs of [`Transform::interpolate_on`] between each frame `i`
    /// and the one after it ([`Clip::frames_at`]), joint by joint: index
    /// `i · joints + joint`. O(frames · joints).
    pub fn arcs(&self) -> Vec<SlerpArc> {
        let n = self.frames.len();
        let next = |i: usize| if self.cyclic { (i + 1) % n } else { (i + 1).min(n - 1) };
        (0..n)
            .flat_map(|i| {
                self.frames[i]
                    .iter()
                    .zip(&self.frames[next(i)])
                    .map(|(a, b)| SlerpArc::new(&a.rotation, &b.rotation, 1e-12))
            })
            .collect()
    }

    /// Removes root motion: the top joints' average horizontal velocity and
    /// yaw rate over the clip, so that the clip plays in place (and, when it
    /// is cyclic, loops without a jump). Root motion is re-derived from the
    /// stance foot when the clip is used.
    pub fn make_in_place(&mut self, skeleton: &Skeleton) {
        let tops: Vec<usize> = (0..skeleton.len()).filter(|&j| skeleton.joints[j].parent.is_none()).collect();
        for top in tops {
            self.make_in_place_at(skeleton, top);
        }
    }

    /// Moves the whole body horizontally so that joint `at` (the hips) is
    /// over the model origin on average over the clip: the root of root
    /// motion then follows the path, whatever the clip's lean. O(frames ·
    /// joints).
    pub fn centre_at(&mut self, skeleton: &Skeleton, at: usize) {
        let n = self.frames.len().max(1) as f64;
        let mean = self.frames.iter().map(|f| skeleton.positions(f)[at]).fold(V3::zeros(), |a, p| a + p) / n;
        let shift = V3::new(mean.x, 0.0, mean.z);
        let tops: Vec<usize> = (0..skeleton.len()).filter(|&j| skeleton.joints[j].parent.is_none()).collect();
        for frame in &mut self.frames {
            for &top in &tops {
                frame[top].translation -= shift;
            }
        }
    }

    /// Makes a clip cut from a take loop: the difference of its last frame
    /// from its first (each joint's local rotation and translation) is
    /// spread over the clip, a share `k / (n − 1)` at frame `k`, so that
    /// the last frame is the first; the caller then drops it and marks the
    /// clip cyclic. A whole gait cycle cut from plant to plant has its feet
    /// where they began but not its arms (the 2.3 s Mixamo take: a hand
    /// 0.3–0.7 m from where it began, which the loop then crossed in one
    /// frame, at 40–77 m/s as played). Standard loop closing by residual
    /// distribution. Joints where `kept` is true are left alone (the body's
    /// placement and the legs: their residual is the turn left over the
    /// cycle, and spread it would swing the planted feet round). O(frames ·
    /// joints).
    pub fn close_loop(&mut self, kept: &[bool]) {
        let n = self.frames.len();
        if n < 2 {
            return;
        }
        let (first, last) = (self.frames[0].clone(), self.frames[n - 1].clone());
        for (k, frame) in self.frames.iter_mut().enumerate().skip(1) {
            let s = k as f64 / (n - 1) as f64;
            for (j, ((t, a), b)) in frame.iter_mut().zip(&first).zip(&last).enumerate() {
                if kept.get(j).copied().unwrap_or(false) {
                    continue;
                }
                let r = a.rotation * b.rotation.inverse();
                t.rotation = Quat::identity().slerp(&r, s) * t.rotation;
                t.translation += (a.translation - b.translation) * s;
            }
        }
    }

    /// Removes root motion measured at joint `at` (the hips: root motion
    /// may be keyed on any joint above them): its average horizontal
    /// velocity and yaw rate over the clip, taken out of the whole body by
    /// moving the top joints, so that the clip plays in place. O(frames ·
    /// joints).
    pub fn make_in_place_at(&mut self, skeleton: &Skeleton, at: usize) {
        let n = self.frames.len();
        if n < 2 {
            return;
        }
        // Displacement and yaw change per frame: least-squares slopes over
        // every frame (a take that is not a whole cycle has its pelvis at
        // another phase of its sway at each end).
        let g: Vec<Matrix4<f64>> = self.frames.iter().map(|f| skeleton.globals(f)[at]).collect();
        let mut yaws = Vec::with_capacity(n);
        for m in &g {
            let y = yaw_of_rotation(&rotation_of(m));
            let y = match yaws.last() {
                Some(&p) => p + wrap(y - p),
                None => y,
            };
            yaws.push(y);
        }
        let kbar = (n - 1) as f64 / 2.0;
        let den: f64 = (0..n).map(|k| (k as f64 - kbar).powi(2)).sum::<f64>().max(1e-12);
        let slope = |v: &dyn Fn(usize) -> f64| {
            let mean = (0..n).map(v).sum::<f64>() / n as f64;
            (0..n).map(|k| (k as f64 - kbar) * (v(k) - mean)).sum::<f64>() / den
        };
        let dp = V3::new(slope(&|k| g[k][(0, 3)]), 0.0, slope(&|k| g[k][(2, 3)]));
        let dyaw = slope(&|k| yaws[k]);
        if dp.norm() < 1e-4 * self.frame_interval && dyaw.abs() < 1e-5 {
            return;
        }
        let centre = position_of(&g[0]);
        let tops: Vec<usize> = (0..skeleton.len()).filter(|&j| skeleton.joints[j].parent.is_none()).collect();
        for (k, frame) in self.frames.iter_mut().enumerate() {
            let back = yaw(-dyaw * k as f64);
            let shift = V3::new(dp.x, 0.0, dp.z) * k as f64;
            for &top in &tops {
                let t = &mut frame[top];
                t.translation = centre + back * (t.translation - shift - centre);
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
    /// Its humanoid bones (joint indices), when known.
    pub humanoid: Option<Humanoid>,
    /// What was done to it on import (props left out, a turn into the model
    /// frame, a rescale, skipped clips), in words.
    pub notes: Vec<String>,
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
        self.hinge_of_most_bent(thigh, shin, |g| position_of(&g[ankle]))
    }

    /// The hinge axis of the bend at joint `lower` between the bones
    /// `upper` → `lower` → `end(globals)` (a model-frame point), in
    /// `upper`'s frame (unit), from the most bent among the rest pose and 24
    /// poses of each clip, oriented so that the bend is a positive rotation
    /// about it; `None` when it never bends more than 0.1 rad.
    /// O(clips · joints).
    pub fn hinge_of_most_bent(&self, upper: usize, lower: usize, end: impl Fn(&[Matrix4<f64>]) -> V3) -> Option<V3> {
        let sk = &self.skeleton;
        let mut poses = vec![sk.rest_pose()];
        for clip in &self.clips {
            let d = clip.duration();
            poses.extend((0..24).map(|i| clip.sample(d * i as f64 / 24.0)));
        }
        let mut best: Option<(f64, V3)> = None;
        for pose in &poses {
            let g = sk.globals(pose);
            let (h, k, a) = (position_of(&g[upper]), position_of(&g[lower]), end(&g));
            let (Some(u), Some(v)) = ((k - h).try_normalize(1e-9), (a - k).try_normalize(1e-9)) else { continue };
            let c = u.cross(&v);
            let bend = c.norm().atan2(u.dot(&v));
            if bend > best.map_or(0.1, |b| b.0) {
                best = Some((bend, rotation_of(&g[upper]).inverse() * c.normalize()));
            }
        }
        best.map(|b| b.1)
    }

    /// The hip joints of the two legs (the upper legs' joints, else the
    /// hips), left then right.
    pub fn hip_joints(&self) -> [usize; 2] {
        std::array::from_fn(|s| {
            let upper = humanoid::Bone::leg(s)[0];
            self.humanoid.as_ref().and_then(|h| h.get(upper)).unwrap_or(self.hips)
        })
    }

    /// Length of a straight leg `[m]`, the mean of both sides: from the hip
    /// joint through the knee to the ankle at rest, plus the ankle's height
    /// above the ground; the rest height of the hip joints for a leg without
    /// a knee or a foot. Natural walking keeps the hip joints at 0.9–1.0 of
    /// it (hip height over leg length).
    pub fn leg_length(&self) -> f64 {
        let sk = &self.skeleton;
        let p = sk.positions(&sk.rest_pose());
        let hips = self.hip_joints();
        let side = |s: usize| -> f64 {
            let ankle = self.feet[s].ankle;
            let lower = self.humanoid.as_ref().and_then(|h| h.get(humanoid::Bone::leg(s)[1]));
            match lower {
                Some(k) if ankle != hips[s] => {
                    (p[k] - p[hips[s]]).norm() + (p[ankle] - p[k]).norm() + p[ankle].y.max(0.0)
                }
                _ => p[hips[s]].y,
            }
        };
        (side(0) + side(1)) / 2.0
    }

    /// Hip height over leg length in a model-frame pose (ground at `y = 0`).
    pub fn hip_height_ratio(&self, pose: &[Transform]) -> f64 {
        let p = self.skeleton.positions(pose);
        let [l, r] = self.hip_joints();
        (p[l].y + p[r].y) / 2.0 / self.leg_length().max(1e-9)
    }

    /// The joints of `foot`.
    pub fn foot(&self, foot: Foot) -> FootJoints {
        self.feet[foot.index()]
    }

    /// The character in the baked format: joints with rest transforms and
    /// inverse bind matrices, feet, hips, mesh (its sole points left for
    /// [`contact::Soles::records`] to fill).
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
            hip_joints: self.hip_joints(),
            leg_length: self.leg_length(),
            sole_points: Vec::new(),
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
/// `…_l`/`…_r`, `…L`/`…R`, `….L`/`….R`, `….l`/`….r`, `left_…`/`right_…`,
/// `…-left`/`…-right` ([`humanoid::mirror_by_names`]); a joint without a
/// partner mirrors to itself.
pub fn mirror_map(skeleton: &Skeleton) -> Vec<usize> {
    let names: Vec<String> = skeleton.joints.iter().map(|j| j.name.clone()).collect();
    humanoid::mirror_by_names(&names)
}

/// The humanoid bones of a skeleton by its joint names (or structure), or
/// `None` when it is not an upright biped. O(joints · depth).
pub fn humanoid_of(skeleton: &Skeleton) -> Option<Humanoid> {
    let rig = Rig {
        names: skeleton.joints.iter().map(|j| j.name.clone()).collect(),
        parents: skeleton.joints.iter().map(|j| j.parent).collect(),
        positions: skeleton.positions(&skeleton.rest_pose()),
        eligible: vec![true; skeleton.len()],
    };
    let h = Humanoid::find(&rig, &std::collections::BTreeMap::new(), None, "").ok()?;
    h.axes(&rig, "").ok()?;
    Some(h)
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
    #[test]
    fn a_cycle_cut_from_a_take_loops_its_arms_and_keeps_its_legs() {
        // An arm (joint 1) swings and drifts 0.9 rad over the cycle, so its
        // last frame is far from its first; a leg (joint 2, kept) ends
        // where it began but its turn must not be touched.
        let turn = |a: f64| Transform {
            rotation: Quat::from_axis_angle(&V3::x_axis(), a),
            translation: V3::new(0.0, 0.1 * a, 0.0),
            ..Transform::default()
        };
        let n = 21;
        let frames: Vec<Pose> = (0..n)
            .map(|k| {
                let s = k as f64 / (n - 1) as f64;
                vec![turn(0.2 * s), turn((s * std::f64::consts::TAU).sin() * 0.4 + 0.9 * s), turn(0.5 * s)]
            })
            .collect();
        let mut clip = Clip { name: "cycle".into(), frame_interval: 1.0 / 30.0, frames: frames.clone(), cyclic: false };
        clip.close_loop(&[true, false, true]);
        let (first, last) = (&clip.frames[0], &clip.frames[n - 1]);
        assert!(first[1].rotation.angle_to(&last[1].rotation) < 1e-9, "the arm's last frame is its first");
        assert!((first[1].translation - last[1].translation).norm() < 1e-12);
        // Kept joints are untouched; the first frame is as it was.
        for (a, b) in clip.frames.iter().zip(&frames) {
            assert_eq!((a[0], a[2]), (b[0], b[2]));
        }
        assert_eq!(clip.frames[0], frames[0]);
        // Looped (the last frame dropped), the arm turns no more from a
        // frame to the next across the loop than within the clip.
        clip.frames.pop();
        let step = |a: &Pose, b: &Pose| a[1].rotation.angle_to(&b[1].rotation);
        let within = clip.frames.windows(2).map(|w| step(&w[0], &w[1])).fold(0.0, f64::max);
        let across = step(&clip.frames[n - 2], &clip.frames[0]);
        assert!(across <= within * 1.01, "across the loop {across} rad, within {within} rad");
        let before = step(&frames[n - 2], &frames[0]);
        assert!(before > 0.5, "the take's cycle jumped {before} rad at its loop");
    }

    #[test]
    fn a_joint_out_and_back_in_one_frame_is_repaired_and_a_fast_or_turning_one_is_not() {
        let turn = |a: f64| Transform { rotation: Quat::from_axis_angle(&V3::x_axis(), a), ..Transform::default() };
        // Joint 0 turns steadily 0.25 rad a frame (fast, not a pop), joint
        // 1 swings to and fro (a turning point at frame 5), joint 2 spikes
        // 0.6 rad at frame 3.
        let frames: Vec<Pose> = (0..10)
            .map(|k| {
                let k = k as f64;
                let spike = if k == 3.0 { 0.6 } else { 0.0 };
                vec![turn(0.25 * k), turn(0.3 * (k - 5.0).abs()), turn(0.01 * k + spike)]
            })
            .collect();
        let mut clip = Clip { name: "walk".into(), frame_interval: 1.0 / 30.0, frames: frames.clone(), cyclic: false };
        let pops = clip.repair_pops();
        assert_eq!(pops.len(), 1, "{pops:?}");
        assert_eq!((pops[0].frame, pops[0].joint, pops[0].rotation), (3, 2, true));
        assert!((pops[0].size - 0.6).abs() < 0.02);
        // Repaired to its neighbours' mean; nothing else touched.
        assert!(clip.frames[3][2].rotation.angle_to(&turn(0.03).rotation) < 1e-9);
        for (k, (a, b)) in clip.frames.iter().zip(&frames).enumerate() {
            for j in 0..3 {
                if (k, j) != (3, 2) {
                    assert_eq!(a[j], b[j]);
                }
            }
        }
        // Repairing again finds nothing.
        assert!(clip.repair_pops().is_empty());
    }

    use super::*;

    /// Found by fuzzing (`fuzz/fuzz_targets/character_gltf.rs`): a joint
    /// whose global matrix overflowed (a node scale of 1e300 under another)
    /// hung the importer in the nearest-rotation search for ever.
    #[test]
    fn degenerate_joint_matrices_give_a_rotation_at_once() {
        let cases = [
            Matrix4::from_element(f64::INFINITY),
            Matrix4::from_element(f64::NAN),
            Matrix4::zeros(),
            Matrix4::new_nonuniform_scaling(&V3::new(1e300, 1e-300, 0.0)),
            Matrix4::new(1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
            Matrix4::new_nonuniform_scaling(&V3::new(1e200, 1e200, 1e200)) * Matrix4::from_element(1e200),
        ];
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for m in cases {
                tx.send(rotation_of(&m)).unwrap();
            }
        });
        for k in 0..6 {
            let q = rx.recv_timeout(std::time::Duration::from_secs(5)).unwrap_or_else(|_| panic!("case {k} hangs"));
            assert!(q.coords.iter().all(|c| c.is_finite()) || k == 2, "case {k}: {q:?}");
        }
        // A sheared matrix of a real rig still gets its nearest rotation.
        let sheared = Matrix4::new(1.0, 0.1, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0);
        let q = rotation_of(&sheared);
        assert!((q.norm() - 1.0).abs() < 1e-12 && q.angle() < 0.1, "{q:?}");
    }

    #[test]
    fn mul4_and_slerp_arcs_are_nalgebras_bit_for_bit() {
        // Deterministic pseudo-random entries, with zeros of both signs,
        // ones and rigid transforms.
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            match x % 7 {
                0 => 0.0,
                1 => -0.0,
                2 => 1.0,
                _ => (x >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0,
            }
        };
        for _ in 0..2000 {
            let a = Matrix4::from_fn(|_, _| next());
            let (qa, qb) = (
                Quat::from_euler_angles(next(), next(), next()),
                Quat::from_euler_angles(next(), 0.01 * next(), next()),
            );
            for (q, eps) in [(qb, 1e-12), (qa, 1e-12), (Quat::new_unchecked(-qa.into_inner()), 1e-9), (qb, 1e-3)] {
                let arc = SlerpArc::new(&qa, &q, eps);
                for t in [0.0, 0.25, 0.5, 0.7, 1.0, 1.3] {
                    let bits = |x: Option<Quat>| x.map(|x| x.coords.map(f64::to_bits));
                    assert_eq!(bits(arc.at(&qa, &q, t)), bits(qa.try_slerp(&q, t, eps)), "{qa:?} {q:?} {t}");
                }
            }
            let b = Matrix4::from_fn(|_, _| next());
            let (m, n) = (mul4(&a, &b), a * b);
            for k in 0..16 {
                assert_eq!(m[k].to_bits(), n[k].to_bits(), "{a} {b}");
            }
        }
        let t = Transform { translation: V3::new(0.1, -0.2, 0.3), rotation: yaw(0.7), scale: V3::new(1.0, 1.0, 1.0) };
        let u = Transform { translation: V3::new(0.0, -0.45, 0.0), rotation: Quat::identity(), ..Transform::default() };
        assert_eq!(mul4(&t.matrix(), &u.matrix()), t.matrix() * u.matrix());
    }

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
