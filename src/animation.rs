//! Stage 5b: foot-locked skeletal animation that follows planned footsteps
//! (course notes, "Footstep Parameterized Motion Blending using Barycentric
//! Coordinates" §4.2–4.5; "Avatar Locomotion in Crowd Simulation" §4.2–4.4).
//!
//! Per step (stance foot S planted at footprint `X_j`, swing foot W landing at
//! `X_{j+1}`):
//! 1. **Blend**: the library steps whose landing positions span the triangle
//!    that holds the wanted landing, with barycentric weights (eq. 1), each
//!    time-warped to the planned duration (phase `u ∈ [0, 1]`).
//! 2. **Transitions**: the pose at the step's start is the previous step's
//!    end pose; the difference to the blend is held through double support
//!    and faded out while the swing foot is in the air. At a boundary crossing
//!    (and a loop's end) the last step fades *into* the convention's boundary
//!    pose, so the neighbour tile starts from the same pose.
//! 3. **Root from the stance foot** (APM §4.3, eq. 2): the character is placed
//!    so that the stance foot's contact point stays exactly on `X_j`; turns
//!    are rotations about it (§4.4), spread over the step with a smoothstep,
//!    so the torso heading is filtered: continuous, with no rate jump at step
//!    boundaries.
//! 4. **Foot IK** (BPK blend §4.5): the swing foot stays on its footprint until
//!    it lifts off, then is carried smoothly onto the planned landing, by
//!    analytic two-bone IK on the leg (or by moving the foot joint when the
//!    rig's foot hangs outside the leg chain).
//!
//! So no planted foot slides, whatever the blend weights and time warps.

use crate::character::builtin::two_bone_ik;
use crate::character::library::LibraryError;
use crate::character::library::Weights;
use crate::character::{Character, Pose, Quat, Transform, V3, position_of, rotation_of, yaw, yaw_of_rotation};
use crate::footsteps::{BoundaryFootsteps, FootstepParams, FootstepPlan, GaitModel, PathEnds, landing_of, plan_agent};
use crate::model::Patch;
use crate::path::Agent;
use crowdpatch_runtime::format::{
    AgentAnimation, AnimationMetrics, BakedAgent, BoundaryGait, Foot, Footstep, Side, SkeletalAnimation, wrap_angle,
};
use std::f64::consts::FRAC_PI_2;

/// What the synthesis of one agent gives beside its animation: world
/// positions for the metrics.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Trace {
    /// Sample times `[s]` (unwrapped, clamped into the path's interval).
    pub times: Vec<f64>,
    /// Contact-joint world positions per sample, left then right, patch
    /// frame `[x, y, height]` `[m]`.
    pub feet: Vec<[[f64; 3]; 2]>,
    /// Root (hips) ground position per sample, patch frame `[m]`.
    pub root: Vec<[f64; 2]>,
    /// Every joint's world position per sample (glTF frame), for jump checks.
    pub joints: Vec<Vec<V3>>,
}

/// glTF yaw of a patch heading.
fn gltf_yaw(heading: f64) -> f64 {
    heading + FRAC_PI_2
}

/// glTF point (x, 0, −y) of a patch point.
fn to_gltf(p: [f64; 2]) -> V3 {
    V3::new(p[0], 0.0, -p[1])
}

/// Per-joint difference `a ⊖ b`: rotation `a·b⁻¹` and translation `a − b`.
fn pose_delta(a: &[Transform], b: &[Transform]) -> Vec<(Quat, V3)> {
    a.iter().zip(b).map(|(x, y)| (x.rotation * y.rotation.inverse(), x.translation - y.translation)).collect()
}

/// `base ⊕ s·delta`.
fn apply_delta(base: &mut [Transform], delta: &[(Quat, V3)], s: f64) {
    if s <= 0.0 {
        return;
    }
    for (t, (q, d)) in base.iter_mut().zip(delta) {
        let r = Quat::identity().try_slerp(q, s, 1e-12).unwrap_or(*q);
        t.rotation = r * t.rotation;
        t.translation += d * s;
    }
}

fn smoothstep(x: f64) -> f64 {
    let x = x.clamp(0.0, 1.0);
    x * x * (3.0 - 2.0 * x)
}

/// Moves the foot (ankle) of `foot` by `delta` (model frame) keeping its
/// global orientation: two-bone IK when the ankle hangs from a two-bone leg
/// of sided joints (the knee bending about `hinge`, its axis in the thigh's
/// frame, when given), else a shift of the foot joint itself.
pub fn move_foot(character: &Character, pose: &mut Pose, foot: Foot, delta: V3, hinge: Option<V3>) {
    if delta.norm() < 1e-9 {
        return;
    }
    let sk = &character.skeleton;
    let ankle = character.foot(foot).ankle;
    let g = sk.globals(pose);
    let chain = sk.joints[ankle].parent.and_then(|shin| sk.joints[shin].parent.map(|thigh| (thigh, shin)));
    let sided = |j: usize| character.mirror[j] != j;
    match chain {
        Some((thigh, shin)) if sided(thigh) && sided(shin) => {
            let pos = |j: usize| position_of(&g[j]);
            let reach = 0.999 * ((pos(shin) - pos(thigh)).norm() + (pos(ankle) - pos(shin)).norm());
            let contact = character.foot(foot).contact;
            let ankle_at = pos(ankle) + delta;
            let contact_at = pos(contact) + delta;
            let hip = pos(thigh);
            let roll = heel_roll(ankle_at, contact_at, hip, reach);
            let foot_global = roll * rotation_of(&g[ankle]);
            two_bone_ik(sk, pose, thigh, shin, ankle, contact_at + roll * (ankle_at - contact_at), hinge);
            let g2 = sk.globals(pose);
            pose[ankle].rotation = rotation_of(&g2[shin]).inverse() * foot_global;
        }
        _ => {
            let parent = sk.joints[ankle].parent.map_or_else(nalgebra::Matrix4::identity, |p| g[p]);
            let lin = parent.fixed_view::<3, 3>(0, 0).into_owned();
            if let Some(inv) = lin.try_inverse() {
                pose[ankle].translation += inv * delta;
            }
        }
    }
}

/// The roll of a foot about its contact point (heel up), as a walker does,
/// that brings its ankle from `ankle_at` within `reach` of the hip joint at
/// `hip`, rather than let the contact slide; at most 0.8 rad (identity when
/// the ankle is within reach or the foot has no separate contact joint).
fn heel_roll(ankle_at: V3, contact_at: V3, hip: V3, reach: f64) -> Quat {
    let mut roll = Quat::identity();
    if (ankle_at - contact_at).norm() > 1e-9 && (ankle_at - hip).norm() > reach {
        let arm = ankle_at - contact_at;
        let axis = V3::y().cross(&V3::new(contact_at.x - ankle_at.x, 0.0, contact_at.z - ankle_at.z));
        if let Some(axis) = nalgebra::Unit::try_new(axis, 1e-9) {
            for k in 1..=160 {
                let r = Quat::from_axis_angle(&axis, -0.005 * k as f64);
                let r = if (r * arm).y < arm.y { r.inverse() } else { r };
                roll = r;
                if (contact_at + r * arm - hip).norm() <= reach {
                    break;
                }
            }
        }
    }
    roll
}

/// How the body must move (model frame `[m]`) so that each foot, its
/// contact moved by its `delta` (model frame), is within reach of its leg
/// after the heel roll of [`heel_roll`]: first lowered (at most 0.3 m), then
/// shifted horizontally towards each foot still out of reach by its excess
/// times the foot's weight (1 for a planted foot, 0 for one in the air,
/// in between while it lifts or lands, so that the move is continuous in
/// time; the sum does not depend on the feet's order). Zero when every foot
/// reaches. Long or sharply turning steps stretch the legs beyond what the
/// clip's hip height allows; the feet stay planted and the root follows
/// them (BPK §5: the root moves with the stance foot).
fn reach_fix(character: &Character, pose: &Pose, feet: &[(Foot, V3, f64)]) -> V3 {
    let sk = &character.skeleton;
    let g = sk.globals(pose);
    let pos = |j: usize| position_of(&g[j]);
    // Per foot: hip, reach and the (rolled) ankle target.
    let legs: Vec<(V3, f64, V3, f64)> = feet
        .iter()
        .filter_map(|&(foot, delta, weight)| {
            let ankle = character.foot(foot).ankle;
            // A leg that follow_foot bends onto a detached foot joint: its
            // reach is the rest distance from the knee to the foot joint.
            if let Some((upper, lower)) = detached_leg(character, foot) {
                let rest = sk.globals(&sk.rest_pose());
                let shin = (position_of(&rest[ankle]) - position_of(&rest[lower])).norm();
                let reach = 0.998 * ((pos(lower) - pos(upper)).norm() + shin);
                return Some((pos(upper), reach, pos(ankle) + delta, weight));
            }
            let shin = sk.joints[ankle].parent?;
            let thigh = sk.joints[shin].parent?;
            // Only legs that move_foot bends by IK.
            if character.mirror[thigh] == thigh || character.mirror[shin] == shin {
                return None;
            }
            let reach = 0.998 * ((pos(shin) - pos(thigh)).norm() + (pos(ankle) - pos(shin)).norm());
            let contact_at = pos(character.foot(foot).contact) + delta;
            let ankle_at = pos(ankle) + delta;
            let hip = pos(thigh);
            let a = contact_at + heel_roll(ankle_at, contact_at, hip, reach) * (ankle_at - contact_at);
            Some((hip, reach, a, weight))
        })
        .collect();
    let mut drop = 0.0_f64;
    for &(hip, reach, a, _) in &legs {
        let d = a - hip;
        let (dh2, dv) = (d.x * d.x + d.z * d.z, -d.y);
        if dh2 + dv * dv > reach * reach {
            drop = drop.max(dv - (reach * reach - dh2).max(0.0).sqrt());
        }
    }
    let down = V3::new(0.0, -drop.clamp(0.0, 0.3), 0.0);
    let mut fix = down;
    for &(hip, reach, a, weight) in &legs {
        let d = a - (hip + down);
        let h = V3::new(d.x, 0.0, d.z);
        let r = (reach * reach - d.y * d.y).max(0.0).sqrt();
        if weight > 0.0 && h.norm() > r {
            fix += h * (weight * (h.norm() - r) / h.norm());
        }
    }
    // The horizontal shift is bounded: beyond, the root would leave the
    // path and the legs swing wildly; the foot then rolls further instead.
    let shift = V3::new(fix.x, 0.0, fix.z);
    if shift.norm() > MAX_ROOT_SHIFT {
        fix -= shift * (1.0 - MAX_ROOT_SHIFT / shift.norm());
    }
    fix
}

/// Largest horizontal move `[m]` of the body by [`reach_fix`].
const MAX_ROOT_SHIFT: f64 = 0.15;

/// One step being synthesised.
struct Step<'a> {
    /// The agent's baked path (for the root pull).
    path: &'a BakedAgent,
    /// Share of the root's miss from the path that is corrected (λ₄).
    root_pull: f64,
    stance: Foot,
    t0: f64,
    t1: f64,
    weights: Weights,
    lift: f64,
    /// Held transition offset from the previous step's end pose.
    start_delta: Vec<(Quat, V3)>,
    /// Offset into the boundary pose at the end, if any.
    end_delta: Option<Vec<(Quat, V3)>>,
    /// glTF yaw at the start.
    yaw0: f64,
    /// Residual yaw turned about the stance foot over the step.
    yaw_turn: f64,
    /// Stance-foot yaw in the model frame at u = 0 (for undoing its turn).
    stance_yaw0: f64,
    stance_at: V3,
    swing_from: V3,
    swing_to: V3,
    /// Swing contact (world) at lift-off and at the end without correction.
    swing_free_lift: V3,
    swing_free_end: V3,
}

/// A posed character at one instant: model-frame pose and its placement.
#[derive(Debug, Clone)]
struct Posed {
    pose: Pose,
    /// glTF yaw of the model frame.
    yaw: f64,
    /// glTF translation of the model origin (y = 0).
    offset: V3,
}

impl Posed {
    fn world(&self, m: V3) -> V3 {
        yaw(self.yaw) * m + self.offset
    }

    /// World positions (glTF frame) of every joint.
    fn world_positions(&self, character: &Character) -> Vec<V3> {
        character.skeleton.positions(&self.pose).iter().map(|&x| self.world(x)).collect()
    }
}

fn stance_yaw(character: &Character, pose: &Pose, foot: Foot, rest: &[nalgebra::Matrix4<f64>]) -> f64 {
    let g = character.skeleton.globals(pose);
    let a = character.foot(foot).ankle;
    yaw_of_rotation(&(rotation_of(&g[a]) * rotation_of(&rest[a]).inverse()))
}

impl Step<'_> {
    /// The blended, offset pose before placement and IK.
    fn raw_pose(&self, gait: &GaitModel, u: f64) -> Pose {
        let mut pose = gait.library.pose(&self.weights, u);
        let lift = self.lift.min(0.9);
        let fade = 1.0 - smoothstep((u - lift) / (0.65 * (1.0 - lift)).max(1e-6));
        apply_delta(&mut pose, &self.start_delta, fade);
        if let Some(end) = &self.end_delta {
            apply_delta(&mut pose, end, smoothstep((u - lift) / (1.0 - lift).max(1e-6)));
        }
        pose
    }

    /// Placement of `pose` at phase `u`: yaw about the stance contact and
    /// translation that puts it on its footprint, then the root pulled by
    /// [`Step::root_pull`] towards the path (BPK blend §5, root-movement
    /// fidelity λ₄; the feet are kept on their footprints by IK).
    fn place(&self, character: &Character, pose: Pose, u: f64, rest: &[nalgebra::Matrix4<f64>]) -> Posed {
        let turn_of_stance = wrap_angle(stance_yaw(character, &pose, self.stance, rest) - self.stance_yaw0);
        let y = self.yaw0 + self.yaw_turn * smoothstep(u) - turn_of_stance;
        let m = character.skeleton.positions(&pose);
        let c = m[character.foot(self.stance).contact];
        let rc = yaw(y) * c;
        let mut posed = Posed { pose, yaw: y, offset: V3::new(self.stance_at.x - rc.x, 0.0, self.stance_at.z - rc.z) };
        if self.root_pull > 0.0 {
            let t = self.t0 + u * (self.t1 - self.t0);
            let want = to_gltf(
                self.path
                    .sample(t.clamp(self.path.start(), self.path.end()))
                    .map_or(self.path.keys[0].position, |x| x.0),
            );
            // The in-place clip's own sway of the hips (their offset from the
            // model origin) is kept.
            let h = m[character.hips];
            let want = want + yaw(posed.yaw) * V3::new(h.x, 0.0, h.z);
            let hips = posed.world(h);
            posed.offset += V3::new(want.x - hips.x, 0.0, want.z - hips.z) * self.root_pull;
        }
        posed
    }

    /// The final pose at phase `u`: placed, with the stance foot held on its
    /// footprint and the swing foot corrected.
    fn posed(&self, character: &Character, gait: &GaitModel, u: f64, rest: &[nalgebra::Matrix4<f64>]) -> Posed {
        let raw = self.raw_pose(gait, u);
        let mut posed = self.place(character, raw, u, rest);
        let sk = &character.skeleton;
        let swing = self.stance.other();
        let lift = self.lift.min(0.95);
        // Horizontal model-frame moves of the stance foot onto its footprint
        // and of the swing foot onto its target.
        let model_delta = |posed: &Posed, foot: Foot, target: V3| {
            let w = posed.world(sk.positions(&posed.pose)[character.foot(foot).contact]);
            yaw(-posed.yaw) * V3::new(target.x - w.x, 0.0, target.z - w.z)
        };
        let swing_target = |posed: &Posed| {
            if u <= lift {
                self.swing_from
            } else {
                let w = posed.world(sk.positions(&posed.pose)[character.foot(swing).contact]);
                let s = smoothstep((u - lift) / (1.0 - lift));
                w + (self.swing_from - self.swing_free_lift) * (1.0 - s) + (self.swing_to - self.swing_free_end) * s
            }
        };
        // Lower the body when a planted foot is out of reach.
        // Both feet count (the swing foot at its target) so that the move
        // is continuous across plants; the swing foot's weight fades out
        // after its lift and in before its landing.
        let swing_weight = if u <= lift {
            1.0
        } else {
            let fade = 0.15 * (1.0 - lift);
            (1.0 - smoothstep((u - lift) / fade)).max(smoothstep((u - (1.0 - fade)) / fade))
        };
        let feet = [
            (self.stance, model_delta(&posed, self.stance, self.stance_at), 1.0),
            (swing, model_delta(&posed, swing, swing_target(&posed)), swing_weight),
        ];
        let fix = reach_fix(character, &posed.pose, &feet);
        let mut top = character.hips;
        while let Some(p) = sk.joints[top].parent {
            top = p;
        }
        posed.pose[top].translation += fix;
        let down = V3::new(0.0, -fix.y, 0.0);
        if self.root_pull > 0.0 || fix.norm() > 0.0 {
            let dm = model_delta(&posed, self.stance, self.stance_at) + down;
            move_foot(character, &mut posed.pose, self.stance, dm, gait.knee_hinges[self.stance.index()]);
        }
        let target = swing_target(&posed);
        // The swing foot keeps its height from the clip.
        let dm = model_delta(&posed, swing, target) + down;
        move_foot(character, &mut posed.pose, swing, dm, gait.knee_hinges[swing.index()]);
        for foot in [Foot::Left, Foot::Right] {
            follow_foot(character, &mut posed.pose, foot);
        }
        posed
    }
}

/// The leg chain (upper leg, lower leg) of a character whose foot joint
/// does not hang from its leg (an imported rig whose legs followed the foot
/// by an IK constraint): joints named `UpperLeg{L,R}` and `LowerLeg{L,R}`,
/// the foot joint not a descendant of the upper leg. `None` otherwise (the
/// built-in character's foot hangs from its shin).
pub fn detached_leg(character: &Character, foot: Foot) -> Option<(usize, usize)> {
    let sk = &character.skeleton;
    let side = match foot {
        Foot::Left => "L",
        Foot::Right => "R",
    };
    let upper = sk.find(&format!("UpperLeg{side}"))?;
    let lower = sk.find(&format!("LowerLeg{side}"))?;
    if sk.joints[lower].parent != Some(upper) {
        return None;
    }
    let mut j = Some(character.foot(foot).ankle);
    while let Some(k) = j {
        if k == lower || k == upper {
            return None;
        }
        j = sk.joints[k].parent;
    }
    Some((upper, lower))
}

/// Bends the leg chain of [`detached_leg`] by two-bone IK (law of cosines
/// at the knee, then a swing of the upper leg) so that the lower leg's end
/// (the foot joint's rest position in the lower leg's frame) reaches the
/// foot joint (model frame); nothing when the foot hangs from its leg.
pub fn follow_foot(character: &Character, pose: &mut Pose, foot: Foot) {
    let Some((upper, lower)) = detached_leg(character, foot) else {
        return;
    };
    let sk = &character.skeleton;
    let ankle = character.foot(foot).ankle;
    let rest = sk.globals(&sk.rest_pose());
    let Some(inv) = rest[lower].try_inverse() else {
        return;
    };
    let end_local = (inv * rest[ankle].column(3).into_owned()).xyz();
    let g = sk.globals(pose);
    let target = position_of(&g[ankle]);
    let end_of = |g: &[nalgebra::Matrix4<f64>]| (g[lower] * end_local.push(1.0)).xyz();
    let (h, k, a) = (position_of(&g[upper]), position_of(&g[lower]), end_of(&g));
    let (l1, l2) = ((k - h).norm(), (a - k).norm());
    if l1 < 1e-9 || l2 < 1e-9 {
        return;
    }
    let d = (target - h).norm().clamp((l1 - l2).abs() + 1e-6, 0.999 * (l1 + l2));
    // Knee: set the angle between the thigh and the shin to the one that
    // puts the end at distance d from the hip, about the current bend normal.
    let (u, v) = ((k - h) / l1, (a - k) / l2);
    let normal = nalgebra::Unit::try_new(u.cross(&v), 1e-9)
        .unwrap_or_else(|| nalgebra::Unit::new_normalize(u.cross(&V3::x()).try_normalize(1e-9).unwrap_or(V3::z())));
    let cur = u.dot(&v).clamp(-1.0, 1.0).acos();
    let want = ((d * d - l1 * l1 - l2 * l2) / (2.0 * l1 * l2)).clamp(-1.0, 1.0).acos();
    let bend = Quat::from_axis_angle(&normal, want - cur);
    let lower_parent = rotation_of(&g[upper]);
    pose[lower].rotation = lower_parent.inverse() * (bend * rotation_of(&g[lower]));
    // Hip: swing the chain so that the end points at the target.
    let g = sk.globals(pose);
    let a = end_of(&g);
    if let Some(swing) = Quat::rotation_between(&(a - h), &(target - h)) {
        let parent = sk.joints[upper].parent.map_or_else(Quat::identity, |p| rotation_of(&g[p]));
        pose[upper].rotation = parent.inverse() * (swing * rotation_of(&g[upper]));
    }
}

/// Synthesises one walking agent from its footstep plan; `start`/`end` are
/// the boundary conventions at its ends (their weights give the boundary
/// poses). Keys at `t = i · interval` covering the path's interval, its
/// start and end, and more where a planted foot needs them
/// ([`refine_keys`]).
pub fn synthesize_walker(
    skeletal: &Skeletal,
    agent: &BakedAgent,
    plan: &FootstepPlan,
    (start, end): (&BoundaryFootsteps, &BoundaryFootsteps),
    interval: f64,
) -> (AgentAnimation, Trace) {
    let (character, gait, root_pull) = (&skeletal.character, &skeletal.gait, skeletal.root_pull);
    let sk = &character.skeleton;
    let rest = sk.globals(&sk.rest_pose());
    let f = &plan.footsteps;
    let boundary_pose = |b: &BoundaryFootsteps| {
        let w: Weights = b.weights.iter().copied().filter(|x| x.1 > 0.0).collect();
        gait.library.pose(&w, 1.0)
    };
    let start_pose = boundary_pose(start);
    let end_pose = boundary_pose(end);
    let mut steps: Vec<Step<'_>> = Vec::with_capacity(f.len());
    let clamp = |t: f64| t.clamp(f[1].t, f[f.len() - 1].t);
    let mut prev_end = start_pose;
    for j in 1..f.len() - 1 {
        let (a, b) = (&f[j], &f[j + 1]);
        let q = landing_of(a, b);
        let weights = gait.library.weights(a.foot, q);
        let blend = gait.library.blended(&weights);
        let b0 = gait.library.pose(&weights, 0.0);
        let last = j + 2 == f.len();
        let b1 = gait.library.pose(&weights, 1.0);
        let mut step = Step {
            path: agent,
            root_pull,
            stance: a.foot,
            t0: a.t,
            t1: b.t,
            lift: blend.lift,
            start_delta: pose_delta(&prev_end, &b0),
            end_delta: last.then(|| pose_delta(&end_pose, &b1)),
            weights,
            yaw0: 0.0,
            yaw_turn: 0.0,
            stance_yaw0: 0.0,
            stance_at: to_gltf(a.position),
            swing_from: to_gltf(f[j - 1].position),
            swing_to: to_gltf(b.position),
            swing_free_lift: V3::zeros(),
            swing_free_end: V3::zeros(),
        };
        let raw0 = step.raw_pose(gait, 0.0);
        let raw1 = step.raw_pose(gait, 1.0);
        step.stance_yaw0 = stance_yaw(character, &raw0, a.foot, &rest);
        let stance_turn = wrap_angle(stance_yaw(character, &raw1, a.foot, &rest) - step.stance_yaw0);
        step.yaw0 = gltf_yaw(a.heading);
        step.yaw_turn = wrap_angle(gltf_yaw(b.heading) - step.yaw0 + stance_turn);
        // Where the swing foot would be without correction.
        let swing = a.foot.other();
        let free = |u: f64| {
            let posed = step.place(character, step.raw_pose(gait, u), u, &rest);
            posed.world(sk.positions(&posed.pose)[character.foot(swing).contact])
        };
        let (free_lift, free_end) = (free(step.lift.min(0.95)), free(1.0));
        step.swing_free_lift = free_lift;
        step.swing_free_end = free_end;
        prev_end = step.posed(character, gait, 1.0, &rest).pose;
        steps.push(step);
    }
    // The pose at time t: the step whose [t0, t1) holds it (the last one
    // holds its end too).
    let eval = |t: f64| {
        let tc = clamp(t);
        let k = steps.partition_point(|s| s.t1 <= tc).min(steps.len().saturating_sub(1));
        match steps.get(k) {
            Some(step) => {
                let u = ((tc - step.t0) / (step.t1 - step.t0)).clamp(0.0, 1.0);
                step.posed(character, gait, u, &rest)
            }
            None => Posed { pose: sk.rest_pose(), yaw: 0.0, offset: V3::zeros() },
        }
    };
    let (times, posed) = refine_keys(character, agent, &f[..], &sample_times(agent, interval), &eval);
    let footsteps = f.clone();
    output(character, agent, footsteps, times, posed, interval)
}

/// Most halvings of a key interval by [`refine_keys`] (down to 1/8 of it).
const MAX_REFINE: u32 = 3;

/// Bound on the speed `[m/s]` a planted foot may seem to have between two
/// keys: a key is inserted where the played foot strays more than
/// `KEY_SPEED_BOUND · Δ / 2` from the synthesised one at the middle of a key
/// interval of length Δ (a stray of d there and back reads as a mean speed
/// of 2d/Δ).
const KEY_SPEED_BOUND: f64 = 0.004;

/// Keys of an agent's joint tracks: the regular `times`, with keys inserted
/// by halving where interpolating the tracks (as glTF LINEAR does, see
/// [`played_world`]) moves a planted foot away from its footprint (more than
/// [`KEY_SPEED_BOUND`] allows), at most [`MAX_REFINE`] times. Interpolating
/// joint rotations is not interpolating the foot's position: without the
/// extra keys a planted foot slides slightly between keys.
fn refine_keys(
    character: &Character,
    agent: &BakedAgent,
    footsteps: &[Footstep],
    times: &[f64],
    eval: &dyn Fn(f64) -> Posed,
) -> (Vec<f64>, Vec<Posed>) {
    let planted =
        |t: f64| -> Vec<Foot> { footsteps.iter().filter(|f| f.t <= t && t <= f.lift).map(|f| f.foot).collect() };
    let mut out_t = Vec::with_capacity(times.len() * 2);
    let mut out_p = Vec::with_capacity(times.len() * 2);
    let Some(&t0) = times.first() else { return (out_t, out_p) };
    let mut a = (t0, eval(t0));
    let la0 = locals(character, agent, a.0, &a.1);
    out_t.push(a.0);
    out_p.push(a.1.clone());
    let mut la = la0;
    for &tb in &times[1..] {
        // Depth-first halving of [a, b].
        let b = (tb, eval(tb));
        let lb = locals(character, agent, b.0, &b.1);
        let mut stack = vec![(b, lb, 0u32)];
        while let Some((b, lb, depth)) = stack.pop() {
            let tm = 0.5 * (a.0 + b.0);
            let feet = planted(tm);
            let mid = (depth < MAX_REFINE && !feet.is_empty()).then(|| eval(tm)).filter(|m| {
                let truth = m.world_positions(character);
                let played = played_world(character, agent, &la, &lb, 0.5, tm);
                let d = feet.iter().map(|&ft| {
                    let c = character.foot(ft).contact;
                    let (p, q) = (played[c], truth[c]);
                    (p.x - q.x).hypot(p.z - q.z)
                });
                d.fold(0.0, f64::max) > KEY_SPEED_BOUND * (b.0 - a.0) / 2.0
            });
            if let Some(m) = mid {
                let lm = locals(character, agent, tm, &m);
                stack.push((b, lb, depth + 1));
                stack.push(((tm, m), lm, depth + 1));
            } else {
                out_t.push(b.0);
                out_p.push(b.1.clone());
                a = b;
                la = lb;
            }
        }
    }
    (out_t, out_p)
}

/// Local joint transforms of `p` at time `t` as the tracks hold them: the
/// top joints relative to the instance node (on the path at `t`), the others
/// as posed.
fn locals(character: &Character, agent: &BakedAgent, t: f64, p: &Posed) -> Vec<(V3, Quat)> {
    let tc = t.clamp(agent.start(), agent.end());
    let (ip, ih) = agent.sample(tc).unwrap_or((agent.keys[0].position, agent.keys[0].heading));
    let inst_yaw = gltf_yaw(ih);
    let inst_at = to_gltf(ip);
    let back = yaw(-inst_yaw);
    character
        .skeleton
        .joints
        .iter()
        .zip(&p.pose)
        .map(|(joint, local)| {
            if joint.parent.is_none() {
                let world_t = yaw(p.yaw) * local.translation + p.offset;
                (back * (world_t - inst_at), yaw(p.yaw - inst_yaw) * local.rotation)
            } else {
                (local.translation, local.rotation)
            }
        })
        .collect()
}

/// World positions (glTF frame) of every joint as a player shows them at
/// time `t`, a share `s` from the key with locals `a` to the key with locals
/// `b`: translations lerped, rotations slerped, under the instance node on
/// the path.
fn played_world(
    character: &Character,
    agent: &BakedAgent,
    a: &[(V3, Quat)],
    b: &[(V3, Quat)],
    s: f64,
    t: f64,
) -> Vec<V3> {
    let sk = &character.skeleton;
    let mut pose = sk.rest_pose();
    for ((x, (ta, qa)), (tb, qb)) in pose.iter_mut().zip(a).zip(b) {
        x.translation = ta.lerp(tb, s);
        let qb = if qa.coords.dot(&qb.coords) < 0.0 { Quat::new_unchecked(-qb.into_inner()) } else { *qb };
        x.rotation = qa.try_slerp(&qb, s, 1e-9).unwrap_or(*qa);
    }
    let tc = t.clamp(agent.start(), agent.end());
    let (ip, ih) = agent.sample(tc).unwrap_or((agent.keys[0].position, agent.keys[0].heading));
    let placed = Posed { pose: Vec::new(), yaw: gltf_yaw(ih), offset: to_gltf(ip) };
    sk.positions(&pose).iter().map(|&x| placed.world(x)).collect()
}

/// Sample times `i · interval` from the last one at or before the path's
/// start to the first one at or after its end, with the start and end
/// themselves (boundary crossings: the pose there is the seam convention's,
/// and a key there lets a player show it exactly, not a blend of neighbours).
pub fn sample_times(agent: &BakedAgent, interval: f64) -> Vec<f64> {
    let (a, b) = (agent.start(), agent.end());
    let i0 = (a / interval + 1e-9).floor() as i64;
    let i1 = (b / interval - 1e-9).ceil() as i64;
    let mut times: Vec<f64> = (i0..=i1).map(|i| i as f64 * interval).collect();
    let eps = 1e-6 * interval;
    for t in [a, b] {
        let k = times.partition_point(|&x| x < t);
        let near = |i: usize| times.get(i).is_some_and(|&x| (x - t).abs() <= eps);
        if !(near(k) || (k > 0 && near(k - 1))) {
            times.insert(k, t);
        }
    }
    times
}

/// Synthesises a standing agent: the idle clip (or the rest pose), played a
/// whole number of times per period, at the path's position and heading.
pub fn synthesize_standing(
    character: &Character,
    gait: &GaitModel,
    agent: &BakedAgent,
    period: f64,
    interval: f64,
) -> (AgentAnimation, Trace) {
    let sk = &character.skeleton;
    let times = sample_times(agent, interval);
    let idle = gait.library.idle.map(|k| &gait.library.clips[k]);
    let posed = times
        .iter()
        .map(|&t| {
            let tc = t.clamp(agent.start(), agent.end());
            let pose = match idle {
                Some(clip) => {
                    let d = clip.duration();
                    let n = (period / d).round().max(1.0);
                    clip.sample((tc - agent.start()) * n * d / period)
                }
                None => sk.rest_pose(),
            };
            let (p, h) = agent.sample(tc).unwrap_or((agent.keys[0].position, agent.keys[0].heading));
            let y = gltf_yaw(h);
            let hips = sk.positions(&pose)[character.hips];
            let r = yaw(y) * V3::new(hips.x, 0.0, hips.z);
            let target = to_gltf(p);
            Posed { pose, yaw: y, offset: V3::new(target.x - r.x, 0.0, target.z - r.z) }
        })
        .collect();
    output(character, agent, Vec::new(), times, posed, interval)
}

/// Trace points per regular key interval: the trace samples the played
/// animation at `interval / TRACE_SUBSTEPS`.
const TRACE_SUBSTEPS: usize = 4;

/// Local joint tracks relative to the instance node, and the trace.
fn output(
    character: &Character,
    agent: &BakedAgent,
    footsteps: Vec<Footstep>,
    times: Vec<f64>,
    posed: Vec<Posed>,
    interval: f64,
) -> (AgentAnimation, Trace) {
    let n = character.skeleton.len();
    let mut anim = AgentAnimation {
        footsteps,
        times: times.clone(),
        translations: Vec::with_capacity(times.len() * n),
        rotations: Vec::with_capacity(times.len() * n),
    };
    let mut prev_q: Vec<Option<[f32; 4]>> = vec![None; n];
    for (&t, p) in times.iter().zip(&posed) {
        for (j, (tr, rot)) in locals(character, agent, t, p).into_iter().enumerate() {
            let c = rot.coords;
            let mut q = [c.x as f32, c.y as f32, c.z as f32, c.w as f32];
            if let Some(pq) = prev_q[j] {
                let dot: f32 = (0..4).map(|k| pq[k] * q[k]).sum();
                if dot < 0.0 {
                    q = q.map(|x| -x);
                }
            }
            prev_q[j] = Some(q);
            anim.translations.push([tr.x as f32, tr.y as f32, tr.z as f32]);
            anim.rotations.push(q);
        }
    }
    // The trace is taken from the animation as a player interpolates it
    // (glTF LINEAR: lerp of translations, slerp of rotations, instance node
    // on the path, from the f32 keys), on a regular grid finer than the
    // keys, so that the metrics see what is played, not only the keys.
    let local = |i: usize| -> Vec<(V3, Quat)> {
        (0..n)
            .map(|j| {
                let t = anim.translations[i * n + j];
                let q = anim.rotations[i * n + j];
                let q =
                    Quat::new_normalize(nalgebra::Quaternion::new(q[3] as f64, q[0] as f64, q[1] as f64, q[2] as f64));
                (V3::new(t[0] as f64, t[1] as f64, t[2] as f64), q)
            })
            .collect()
    };
    let mut trace = Trace::default();
    if times.is_empty() {
        return (anim, trace);
    }
    let (first, last) = (times[0], times[times.len() - 1]);
    let step = interval / TRACE_SUBSTEPS as f64;
    let count = ((last - first) / step).round() as usize;
    let mut i = 0;
    let (mut la, mut lb) = (local(0), local((times.len() - 1).min(1)));
    for k in 0..=count {
        let t = (first + k as f64 * step).min(last);
        let mut moved = false;
        while i + 2 < times.len() && times[i + 1] <= t {
            i += 1;
            moved = true;
        }
        if moved {
            la = local(i);
            lb = local(i + 1);
        }
        let j = (i + 1).min(times.len() - 1);
        let s = if times[j] > times[i] { ((t - times[i]) / (times[j] - times[i])).clamp(0.0, 1.0) } else { 0.0 };
        let world = played_world(character, agent, &la, &lb, s, t);
        let foot = |f: Foot| {
            let w = world[character.foot(f).contact];
            [w.x, -w.z, w.y]
        };
        trace.times.push(t.clamp(agent.start(), agent.end()));
        trace.feet.push([foot(Foot::Left), foot(Foot::Right)]);
        let r = world[character.hips];
        trace.root.push([r.x, -r.z]);
        trace.joints.push(world);
    }
    (anim, trace)
}

/// A character ready to animate a bake: the character and its gait model
/// (step library, landing hulls), built once and shared by many bakes.
#[derive(Debug, Clone)]
pub struct Skeletal {
    /// The character.
    pub character: Character,
    /// Its gait model.
    pub gait: GaitModel,
    /// Joint-track sample rate `[Hz]` (rounded so that a whole number of
    /// samples fills the period).
    pub frame_rate: f64,
    /// Planner parameters.
    pub params: FootstepParams,
    /// Root-movement fidelity λ₄ in `[0, 1]` (BPK blend §5): the share of
    /// the root's miss from the baked path that is corrected by moving the
    /// body, both feet then held on their footprints by IK. 0 derives the
    /// root from the stance foot alone.
    pub root_pull: f64,
}

impl Skeletal {
    /// Prepares `character` (analyses its clips).
    ///
    /// # Errors
    /// [`LibraryError`] when the character has no walking steps.
    pub fn new(character: Character) -> Result<Skeletal, LibraryError> {
        let gait = GaitModel::new(&character)?;
        Ok(Skeletal { character, gait, frame_rate: 30.0, params: FootstepParams::default(), root_pull: 1.0 })
    }
}

/// The result of the footstep and animation stage.
#[derive(Debug, Clone)]
pub struct SkeletalOutcome {
    /// The animation (baked format).
    pub animation: SkeletalAnimation,
    /// Per agent, its footstep plan (`None` for a standing agent).
    pub plans: Vec<Option<FootstepPlan>>,
    /// Per agent, world positions of the synthesised motion.
    pub traces: Vec<Trace>,
    /// The gait at each boundary point, `(side, entry?, index, gait)`.
    pub gaits: Vec<(Side, bool, usize, BoundaryGait)>,
    /// Quality figures.
    pub metrics: AnimationMetrics,
    /// Footstep planning wall time `[ms]`.
    pub planning_ms: f64,
    /// Synthesis wall time `[ms]`.
    pub synthesis_ms: f64,
    /// Remarks (relaxed plans).
    pub notes: Vec<String>,
}

/// Plans footsteps for every agent and synthesises its skeletal animation.
/// `agents` are the bake's final paths and `baked` their baked form (same
/// order).
pub fn animate(patch: &Patch, agents: &[Agent], baked: &[BakedAgent], skeletal: &Skeletal) -> SkeletalOutcome {
    let character = &skeletal.character;
    let gait = &skeletal.gait;
    let period = patch.header.period;
    let per_period = (period * skeletal.frame_rate).round().max(2.0);
    let interval = period / per_period;
    let t = std::time::Instant::now();
    let mut plans = Vec::with_capacity(agents.len());
    let mut ends_of = Vec::with_capacity(agents.len());
    let mut gaits = Vec::new();
    let mut notes = Vec::new();
    for (i, (a, b)) in agents.iter().zip(baked).enumerate() {
        let ends = path_ends(a);
        let plan = plan_agent(gait, character, b, ends, period, &skeletal.params);
        if let Some(p) = &plan
            && p.relaxed
        {
            notes.push(format!("agent {i}: footstep limits were relaxed to follow its path"));
        }
        if let (Some(e), Some(x)) = (a.entry, a.exit) {
            let ge = gait.boundary(character, arr(e.position), arr(e.velocity), b.start()).gait;
            let gx = gait.boundary(character, arr(x.position), arr(x.velocity), b.end()).gait;
            gaits.push((e.side, true, e.index, ge));
            gaits.push((x.side, false, x.index, gx));
        }
        plans.push(plan);
        ends_of.push(ends);
    }
    let planning_ms = t.elapsed().as_secs_f64() * 1000.0;
    let t = std::time::Instant::now();
    let mut out = Vec::with_capacity(agents.len());
    let mut traces = Vec::with_capacity(agents.len());
    for ((b, plan), ends) in baked.iter().zip(&plans).zip(&ends_of) {
        let (anim, trace) = match (plan, ends) {
            (Some(plan), PathEnds::Exogenous { entry, exit }) => {
                let s = gait.boundary(character, b.keys[0].position, *entry, b.start());
                let e = gait.boundary(character, b.keys[b.keys.len() - 1].position, *exit, b.end());
                synthesize_walker(skeletal, b, plan, (&s, &e), interval)
            }
            (Some(plan), PathEnds::Loop) => {
                // The loop's convention, as the planner made it.
                let f = &plan.footsteps;
                let s = gait.boundary(character, b.keys[0].position, loop_velocity(&plan.footsteps, b), b.start());
                let mut e = s;
                e.left = f[f.len() - 1];
                e.right = f[f.len() - 2];
                synthesize_walker(skeletal, b, plan, (&s, &e), interval)
            }
            _ => synthesize_standing(character, gait, b, period, interval),
        };
        out.push(anim);
        traces.push(trace);
    }
    let synthesis_ms = t.elapsed().as_secs_f64() * 1000.0;
    let metrics = metrics(character, baked, &out, &traces, period);
    SkeletalOutcome {
        animation: SkeletalAnimation { character: character.to_runtime(), sample_interval: interval, agents: out },
        plans,
        traces,
        gaits,
        metrics,
        planning_ms,
        synthesis_ms,
        notes,
    }
}

/// The velocity the planner used at a loop's start: recovered from the
/// first footsteps' heading and the path.
fn loop_velocity(footsteps: &[Footstep], b: &BakedAgent) -> [f64; 2] {
    let h = footsteps[1].heading;
    let span = 0.25;
    let (p0, _) = b.sample(b.start()).unwrap_or((b.keys[0].position, 0.0));
    let (p1, _) = b.sample((b.start() + span).min(b.end())).unwrap_or((p0, 0.0));
    let (pe, _) = b.sample((b.end() - span).max(b.start())).unwrap_or((p0, 0.0));
    let speed = ((p1[0] - pe[0]).hypot(p1[1] - pe[1])) / (2.0 * span);
    [speed * h.cos(), speed * h.sin()]
}

fn arr(v: crate::geometry::Vec2) -> [f64; 2] {
    [v.x, v.y]
}

/// How an agent's path starts and ends.
pub fn path_ends(a: &Agent) -> PathEnds {
    match (a.entry, a.exit) {
        (Some(e), Some(x)) => PathEnds::Exogenous { entry: arr(e.velocity), exit: arr(x.velocity) },
        _ => {
            let p0 = a.path.points[0].p;
            let moves = a.path.points.iter().any(|c| (c.p - p0).norm() > 0.05);
            if moves { PathEnds::Loop } else { PathEnds::Standing }
        }
    }
}

fn percentile(v: &mut [f64], q: f64) -> f64 {
    crate::stats::quantile(v, q, crate::stats::Quantile::Nearest).unwrap_or(0.0)
}

/// The quality figures of a synthesised patch.
pub fn metrics(
    character: &Character,
    baked: &[BakedAgent],
    anims: &[AgentAnimation],
    traces: &[Trace],
    period: f64,
) -> AnimationMetrics {
    let mut skate = Vec::new();
    let mut timing = Vec::new();
    let mut landing = Vec::new();
    let mut deviation = Vec::new();
    let mut lengths = Vec::new();
    let mut cadences = Vec::new();
    let mut joint_speed: f64 = 0.0;
    let mut count = 0usize;
    for ((b, anim), tr) in baked.iter().zip(anims).zip(traces) {
        let f = &anim.footsteps;
        count += f.len();
        // Planted intervals: a foot from its plant to its lift-off.
        for fs in f {
            let k = fs.foot.index();
            for i in 1..tr.times.len() {
                let (ta, tb) = (tr.times[i - 1], tr.times[i]);
                if tb - ta > 1e-9 && ta >= fs.t - 1e-9 && tb <= fs.lift + 1e-9 {
                    let (a, c) = (tr.feet[i - 1][k], tr.feet[i][k]);
                    skate.push((c[0] - a[0]).hypot(c[1] - a[1]) / (tb - ta));
                }
            }
            // Landing: where the synthesised foot is at its plant time.
            if let Some(i) = tr.times.iter().position(|&t| t >= fs.t - 1e-9) {
                let p = tr.feet[i][k];
                landing.push((p[0] - fs.position[0]).hypot(p[1] - fs.position[1]));
                // Timing: the first sample from which the foot stops moving.
                let lo = tr.times.partition_point(|&t| t < fs.t - 0.3);
                let still = (lo + 1..tr.times.len()).find(|&j| {
                    let dt = tr.times[j] - tr.times[j - 1];
                    let a = tr.feet[j - 1][k];
                    let c = tr.feet[j][k];
                    dt > 1e-9 && (c[0] - a[0]).hypot(c[1] - a[1]) / dt < 0.05 && (c[2] - a[2]).abs() / dt < 0.05
                });
                if let Some(j) = still
                    && tr.times[j - 1] < fs.t + 0.3
                    && fs.t > tr.times[0] + 0.3
                {
                    timing.push((tr.times[j - 1] - fs.t).abs());
                }
            }
        }
        for w in f.windows(2) {
            let q = landing_of(&w[0], &w[1]);
            lengths.push(q[0]);
            cadences.push(1.0 / (w[1].t - w[0].t));
        }
        for (i, &t) in tr.times.iter().enumerate() {
            if let Some((p, _)) = b.sample(t) {
                deviation.push((tr.root[i][0] - p[0]).hypot(tr.root[i][1] - p[1]));
            }
            if i > 0 {
                let dt = tr.times[i] - tr.times[i - 1];
                if dt > 1e-9 {
                    for (a, c) in tr.joints[i - 1].iter().zip(&tr.joints[i]) {
                        joint_speed = joint_speed.max((c - a).norm() / dt);
                    }
                }
            }
        }
    }
    let mean = |v: &[f64]| if v.is_empty() { 0.0 } else { v.iter().sum::<f64>() / v.len() as f64 };
    let max = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    let stats = |v: &mut Vec<f64>| [mean(v), percentile(v, 0.05), percentile(v, 0.95)];
    AnimationMetrics {
        character: character.name.clone(),
        footsteps: count,
        foot_skate: mean(&skate),
        foot_skate_max: max(&skate),
        timing_error_mean: mean(&timing),
        timing_error_max: max(&timing),
        landing_error_mean: mean(&landing),
        root_deviation_mean: mean(&deviation),
        root_deviation_p95: percentile(&mut deviation.clone(), 0.95),
        root_deviation_max: max(&deviation),
        step_length: stats(&mut lengths),
        cadence: stats(&mut cadences),
        foot_overlaps: foot_overlaps(anims, period),
        max_joint_speed: joint_speed,
    }
}

/// Pairs of planted feet of different agents (any instances) that overlap:
/// planted at the same play time less than a foot length apart.
fn foot_overlaps(anims: &[AgentAnimation], period: f64) -> usize {
    const FOOT: f64 = 0.25;
    let mut n = 0;
    for (i, a) in anims.iter().enumerate() {
        for b in &anims[i + 1..] {
            for fa in &a.footsteps {
                for fb in &b.footsteps {
                    if (fa.position[0] - fb.position[0]).hypot(fa.position[1] - fb.position[1]) >= FOOT {
                        continue;
                    }
                    // Overlap in play time, for some whole shift of periods.
                    let k_lo = ((fa.t - fb.lift) / period).floor() as i64;
                    let k_hi = ((fa.lift - fb.t) / period).ceil() as i64;
                    if (k_lo..=k_hi).any(|k| {
                        let s = k as f64 * period;
                        fa.t < fb.lift + s && fb.t + s < fa.lift
                    }) {
                        n += 1;
                    }
                }
            }
        }
    }
    n
}
