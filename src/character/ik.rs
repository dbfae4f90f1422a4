//! Inverse kinematics of the legs (BPK blend §4.5, course notes): analytic
//! two-bone IK, moving a foot with a heel roll when it is out of reach, the
//! body lowered or shifted when a planted foot cannot be reached, and legs
//! of imported rigs whose foot joint hangs outside the leg chain bent onto
//! the foot. Every function is O(joints) at most: it reads the global
//! transforms of the leg's chain from a [`PoseFk`], which makes each of them
//! once per change of the pose.

use super::fk::PoseFk;
use crate::character::{Character, Pose, Quat, Skeleton, V3, position_of, rotation_of};
use crowdpatch_runtime::format::Foot;

/// What the leg IK needs to know of a character, found once: its leg
/// length, the top joint above the hips and, per foot, the joints of its
/// leg. O(joints) to build.
#[derive(Debug, Clone, PartialEq)]
pub struct Legs {
    /// [`Character::leg_length`] `[m]`.
    pub leg_length: f64,
    /// The top joint above the hips (the one [`reach_fix`]'s move applies to).
    pub top: usize,
    /// Left then right.
    pub feet: [Leg; 2],
}

/// The joints of one leg ([`Legs`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Leg {
    /// The foot joint.
    pub ankle: usize,
    /// The contact joint ([`crate::character::FootJoints::contact`]).
    pub contact: usize,
    /// `(thigh, shin)` when the ankle hangs from a two-bone leg of sided
    /// joints, which [`move_foot`] bends by IK.
    pub bent: Option<(usize, usize)>,
    /// [`detached_leg`]: `(upper, lower)`.
    pub detached: Option<(usize, usize)>,
    /// For a detached leg: the rest distance `[m]` from the lower leg to
    /// the foot joint.
    pub detached_shin: f64,
    /// For a detached leg: the foot joint's rest position in the lower
    /// leg's frame, when that frame is invertible.
    pub end_local: Option<V3>,
    /// The inverse of the foot joint's model-frame rotation at rest.
    pub rest_ankle_inverse: Quat,
    /// For a detached leg: its knee's hinge axis in the upper leg's frame
    /// ([`detached_knee_hinge`]), when [`Legs::with_detached_hinges`] found
    /// one; [`follow_foot_fk`] then bends the knee about it.
    pub detached_hinge: Option<V3>,
}

impl Leg {
    /// Whether the leg is its own foot: neither a two-bone leg nor a
    /// detached one (no knee, no foot joint; it swings as a whole, and
    /// moving its end would move the leg). O(1).
    pub fn is_own_foot(&self) -> bool {
        self.bent.is_none() && self.detached.is_none()
    }
}

impl Legs {
    /// The legs of `character`.
    pub fn new(character: &Character) -> Legs {
        let sk = &character.skeleton;
        let rest = sk.globals(&sk.rest_pose());
        let mut top = character.hips;
        while let Some(p) = sk.joints[top].parent {
            top = p;
        }
        let sided = |j: usize| character.mirror[j] != j;
        let feet = Foot::BOTH.map(|foot| {
            let (ankle, contact) = (character.foot(foot).ankle, character.foot(foot).contact);
            let bent = sk.joints[ankle]
                .parent
                .and_then(|shin| sk.joints[shin].parent.map(|thigh| (thigh, shin)))
                .filter(|&(thigh, shin)| sided(thigh) && sided(shin));
            let detached = detached_leg(character, foot);
            let detached_shin =
                detached.map_or(0.0, |(_, lower)| (position_of(&rest[ankle]) - position_of(&rest[lower])).norm());
            let end_local = detached.and_then(|(_, lower)| {
                rest[lower].try_inverse().map(|inv| (inv * rest[ankle].column(3).into_owned()).xyz())
            });
            Leg {
                ankle,
                contact,
                bent,
                detached,
                detached_shin,
                end_local,
                rest_ankle_inverse: rotation_of(&rest[ankle]).inverse(),
                detached_hinge: None,
            }
        });
        Legs { leg_length: character.leg_length(), top, feet }
    }

    /// These legs with the knee hinges of their detached legs
    /// ([`detached_knee_hinge`]) from `character`'s clips. O(clips · joints).
    pub fn with_detached_hinges(mut self, character: &Character) -> Legs {
        for foot in Foot::BOTH {
            self.feet[foot.index()].detached_hinge = detached_knee_hinge(character, foot);
        }
        self
    }

    /// The leg of `foot`.
    pub fn leg(&self, foot: Foot) -> &Leg {
        &self.feet[foot.index()]
    }
}

/// Analytic two-bone IK: rotates `upper` and `lower` (globals) so that the
/// end joint reaches `target`, keeping the bend plane; returns the new
/// local rotations of `upper` and `lower` in `pose`. Unreachable targets are
/// approached along the line (the chain straightens to 99.9 %). With a
/// `hinge` (the knee's axis in `upper`'s frame, see
/// [`crate::character::Character::knee_hinge`]) the knee bends about it, always the same way,
/// so that a nearly straight leg never flips its bend from one frame to the
/// next; without, about the chain's current bend plane.
pub fn two_bone_ik(
    sk: &Skeleton,
    pose: &mut Pose,
    upper: usize,
    lower: usize,
    end: usize,
    target: V3,
    hinge: Option<V3>,
) {
    let mut fk = PoseFk::new(sk, std::mem::take(pose));
    two_bone_ik_fk(&mut fk, upper, lower, end, target, hinge);
    *pose = fk.into_pose();
}

/// [`two_bone_ik`] on a [`PoseFk`].
pub fn two_bone_ik_fk(fk: &mut PoseFk<'_>, upper: usize, lower: usize, end: usize, target: V3, hinge: Option<V3>) {
    let (g_upper, g_lower, g_end) = (fk.global(upper), fk.global(lower), fk.global(end));
    let (h, k, a) = (position_of(&g_upper), position_of(&g_lower), position_of(&g_end));
    let (l1, l2) = ((k - h).norm(), (a - k).norm());
    if l1 < 1e-9 || l2 < 1e-9 {
        return;
    }
    // The reachable distances; none for a chain shorter than the 1 µm kept
    // from folding flat (or not finite): left as it is. (`clamp` panicked on
    // such a chain, a character with bones of 0.1 µm found by fuzzing.)
    let (near, far) = ((l1 - l2).abs() + 1e-6, (l1 + l2) * 0.9995);
    if near.partial_cmp(&far).is_none_or(|o| o == std::cmp::Ordering::Greater) {
        return;
    }
    // A chain already straighter than `far` (as the pose has it) is not
    // bent to `far` for a target at its own distance: the IK of a pose's
    // own end leaves the pose as it is, so that calling it for no move is
    // the same as not calling it (a landing knee jumped 3.6 mm where one
    // step's pose called it and the next did not).
    let far = far.max((a - h).norm().min(l1 + l2));
    let d = (target - h).norm().clamp(near, far);
    // Wanted knee angle (interior angle at the knee).
    let want = ((l1 * l1 + l2 * l2 - d * d) / (2.0 * l1 * l2)).clamp(-1.0, 1.0).acos();
    let upper_rotation = fk.rotation(upper);
    let bend = if let Some(hinge) = hinge {
        let axis = nalgebra::Unit::new_normalize(upper_rotation * hinge);
        Quat::from_axis_angle(&axis, hinge_bend(h, k, a, &axis, d))
    } else {
        // Current knee angle.
        let cur = (h - k).normalize().dot(&(a - k).normalize()).clamp(-1.0, 1.0).acos();
        let mut axis = (k - h).cross(&(a - k));
        if axis.norm() < 1e-9 {
            // Straight chain: bend about the upper joint's local X.
            axis = upper_rotation * V3::x();
        }
        let axis = nalgebra::Unit::new_normalize(axis);
        // Opening the knee angle from `cur` to `want`: rotate the lower bone.
        Quat::from_axis_angle(&axis, cur - want)
    };
    let parent_lower = upper_rotation;
    let lower_global = bend * fk.rotation(lower);
    fk.set_rotation(lower, parent_lower.inverse() * lower_global);
    // Then swing the whole chain at the upper joint onto the target. The
    // upper joint and its ancestors did not change.
    let a2 = fk.position(end);
    let swing = Quat::rotation_between(&(a2 - h), &(target - h)).unwrap_or_else(Quat::identity);
    let upper_global = swing * upper_rotation;
    let parent = fk.skeleton().joints[upper].parent.map_or_else(Quat::identity, |p| fk.rotation(p));
    fk.set_rotation(upper, parent.inverse() * upper_global);
}

/// The turn `[rad]` of the lower bone about `axis` (through the knee `k`)
/// that puts the end `a` at distance `d` from the upper joint `h`: the
/// root of `|k − h + R(θ)(a − k)|² = d²` (Rodrigues: `E + P cos θ + Q sin θ`)
/// that bends the knee forward (its signed bend about `axis` stays
/// positive) and is nearest 0, so that `d` at the chain's own length turns
/// nothing, whatever the knee's twist off the hinge plane. A `d` out of
/// the hinge's range gives the turn to the nearest distance it reaches.
/// O(1).
fn hinge_bend(h: V3, k: V3, a: V3, axis: &nalgebra::Unit<V3>, d: f64) -> f64 {
    let (w, v) = (k - h, a - k);
    let (wn, vn) = (w.dot(axis), v.dot(axis));
    let e = w.norm_squared() + v.norm_squared() + 2.0 * wn * vn;
    let p = 2.0 * (w.dot(&v) - wn * vn);
    let q = 2.0 * w.dot(&axis.cross(&v));
    let (r, phi) = (p.hypot(q), q.atan2(p));
    if r < 1e-300 {
        return 0.0;
    }
    let c = ((d * d - e) / r).clamp(-1.0, 1.0);
    let (wu, vu) = (w.normalize(), v.normalize());
    let now = wu.cross(&vu).dot(axis).atan2(wu.dot(&vu));
    let roots = [super::wrap(phi - c.acos()), super::wrap(phi + c.acos())];
    let forward = |t: f64| now + t >= -1e-9;
    let pick =
        |ok: &dyn Fn(f64) -> bool| roots.iter().copied().filter(|&t| ok(t)).min_by(|x, y| x.abs().total_cmp(&y.abs()));
    pick(&forward).or_else(|| pick(&|_| true)).unwrap_or(0.0)
}

/// Moves the foot (ankle) of `foot` by `delta` (model frame) keeping its
/// global orientation: two-bone IK when the ankle hangs from a two-bone leg
/// of sided joints (the knee bending about `hinge`, its axis in the thigh's
/// frame, when given), else a shift of the foot joint itself.
pub fn move_foot(character: &Character, pose: &mut Pose, foot: Foot, delta: V3, hinge: Option<V3>) {
    let mut fk = PoseFk::new(&character.skeleton, std::mem::take(pose));
    move_foot_fk(&Legs::new(character), &mut fk, foot, delta, hinge);
    *pose = fk.into_pose();
}

/// [`move_foot`] on a [`PoseFk`], with the character's [`Legs`].
pub fn move_foot_fk(legs: &Legs, fk: &mut PoseFk<'_>, foot: Foot, delta: V3, hinge: Option<V3>) {
    let leg = legs.leg(foot);
    let ankle = leg.ankle;
    match leg.bent {
        Some((thigh, shin)) => {
            let contact = leg.contact;
            let reach = 0.999
                * ((fk.position(shin) - fk.position(thigh)).norm() + (fk.position(ankle) - fk.position(shin)).norm());
            let ankle_at = fk.position(ankle) + delta;
            let contact_at = fk.position(contact) + delta;
            let hip = fk.position(thigh);
            let roll = heel_roll(ankle_at, contact_at, hip, reach);
            let foot_global = roll * fk.rotation(ankle);
            two_bone_ik_fk(fk, thigh, shin, ankle, contact_at + roll * (ankle_at - contact_at), hinge);
            let q = fk.rotation(shin).inverse() * foot_global;
            fk.set_rotation(ankle, q);
        }
        None => {
            if delta.norm() < 1e-9 {
                return;
            }
            let parent = fk.skeleton().joints[ankle].parent.map_or_else(nalgebra::Matrix4::identity, |p| fk.global(p));
            let lin = parent.fixed_view::<3, 3>(0, 0).into_owned();
            if let Some(inv) = lin.try_inverse() {
                fk.translate(ankle, inv * delta);
            }
        }
    }
}

/// Turns the foot of `foot` by the rotation `r` (model frame) about its
/// contact joint, the contact staying where it is (two-bone IK brings the
/// ankle round, the knee bending about `hinge` when given); the caller
/// keeps the turned ankle within the leg's reach. O(leg depth).
pub fn pitch_foot_fk(legs: &Legs, fk: &mut PoseFk<'_>, foot: Foot, r: Quat, hinge: Option<V3>) {
    let leg = legs.leg(foot);
    let c = fk.position(leg.contact);
    let ankle_at = c + r * (fk.position(leg.ankle) - c);
    let foot_global = r * fk.rotation(leg.ankle);
    match leg.bent {
        Some((thigh, shin)) => {
            two_bone_ik_fk(fk, thigh, shin, leg.ankle, ankle_at, hinge);
            let q = fk.rotation(shin).inverse() * foot_global;
            fk.set_rotation(leg.ankle, q);
        }
        None => {
            let parent = fk.skeleton().joints[leg.ankle].parent.map_or_else(Quat::identity, |p| fk.rotation(p));
            fk.set_rotation(leg.ankle, parent.inverse() * foot_global);
        }
    }
}

/// Turns the foot of `foot` by `angle` `[rad]` about the vertical through
/// its contact joint (model frame, +Y up), the contact staying where it is:
/// two-bone IK brings the ankle round (the knee bending about `hinge`,
/// when given) and the foot takes its turned orientation, its heel rolled
/// up where the turned ankle is out of the leg's reach (the heel roll of [`move_foot_fk`]); a
/// foot joint outside a two-bone leg is turned in place. O(leg depth).
pub fn turn_foot_fk(legs: &Legs, fk: &mut PoseFk<'_>, foot: Foot, angle: f64, hinge: Option<V3>) {
    if angle.abs() < 1e-12 {
        return;
    }
    let leg = legs.leg(foot);
    let r = crate::character::yaw(angle);
    let c = fk.position(leg.contact);
    let ankle_at = c + r * (fk.position(leg.ankle) - c);
    let foot_global = r * fk.rotation(leg.ankle);
    match leg.bent {
        Some((thigh, shin)) => {
            // Out of reach once turned, the heel rolls up about the
            // contact as [`move_foot_fk`] does.
            let reach = 0.999
                * ((fk.position(shin) - fk.position(thigh)).norm()
                    + (fk.position(leg.ankle) - fk.position(shin)).norm());
            let roll = heel_roll(ankle_at, c, fk.position(thigh), reach);
            let foot_global = roll * foot_global;
            two_bone_ik_fk(fk, thigh, shin, leg.ankle, c + roll * (ankle_at - c), hinge);
            let q = fk.rotation(shin).inverse() * foot_global;
            fk.set_rotation(leg.ankle, q);
        }
        None => {
            let parent = fk.skeleton().joints[leg.ankle].parent.map_or_else(Quat::identity, |p| fk.rotation(p));
            fk.set_rotation(leg.ankle, parent.inverse() * foot_global);
        }
    }
}

/// Bends the toes of `foot` up at their joint by the least angle that
/// keeps the point `tip` (in the toe joint's frame: the tip of the sole,
/// [`crate::character::contact::Soles`]) no lower than `floor` (model-frame
/// height `[m]`), as a walker's toes bend at the ball when the heel rises
/// rather than go through the floor. Nothing for a foot without a toe joint
/// or a tip above the floor; continuous (0 where the tip touches the floor).
/// O(leg depth).
pub fn lift_toe_fk(legs: &Legs, fk: &mut PoseFk<'_>, foot: Foot, tip: V3, floor: f64) {
    let leg = legs.leg(foot);
    if leg.contact == leg.ankle {
        return;
    }
    let g = fk.global(leg.contact);
    let joint = position_of(&g);
    let at = (g * tip.push(1.0)).xyz();
    if at.y >= floor {
        return;
    }
    let v = at - joint;
    let along = V3::new(v.x, 0.0, v.z);
    let len = v.norm();
    if along.norm() < 1e-9 || len < 1e-9 {
        return;
    }
    let d = along.normalize();
    let elevation = v.y.atan2(d.dot(&v));
    let want = ((floor - joint.y) / len).clamp(-1.0, 1.0).asin();
    if want <= elevation {
        return;
    }
    let axis = nalgebra::Unit::new_normalize(d.cross(&V3::y()));
    let q = Quat::from_axis_angle(&axis, want - elevation) * fk.rotation(leg.contact);
    let parent = fk.skeleton().joints[leg.contact].parent.map_or_else(Quat::identity, |p| fk.rotation(p));
    fk.set_rotation(leg.contact, parent.inverse() * q);
}

/// The roll of a foot about its contact point (heel up), as a walker does,
/// that brings its ankle from `ankle_at` within `reach` of the hip joint at
/// `hip`, rather than let the contact slide; at most [`MAX_HEEL_ROLL`]
/// (identity when the ankle is within reach or the foot has no separate
/// contact joint).
///
/// The smallest such roll, solved in closed form: rolling the arm
/// `a = ankle − contact` by θ about the horizontal axis `k` (Rodrigues)
/// gives `|contact + R(θ)a − hip|² = E + P cos θ + Q sin θ`, which meets
/// `reach²` at `θ = φ ± acos(S / √(P² + Q²))`. The roll is continuous in its
/// inputs, so the body it lowers ([`reach_fix`]) moves smoothly. O(1).
pub(crate) fn heel_roll(ankle_at: V3, contact_at: V3, hip: V3, reach: f64) -> Quat {
    let arm = ankle_at - contact_at;
    if arm.norm() <= 1e-9 || (ankle_at - hip).norm() <= reach {
        return Quat::identity();
    }
    let axis = V3::y().cross(&V3::new(contact_at.x - ankle_at.x, 0.0, contact_at.z - ankle_at.z));
    let Some(k) = nalgebra::Unit::try_new(axis, 1e-9) else { return Quat::identity() };
    // The sense that raises the ankle.
    let dir = if (Quat::from_axis_angle(&k, -1e-3) * arm).y < arm.y { 1.0 } else { -1.0 };
    let d = contact_at - hip;
    let (dk, ak) = (d.dot(&k), arm.dot(&k));
    let e = d.norm_squared() + arm.norm_squared() + 2.0 * dk * ak;
    let p = 2.0 * (d.dot(&arm) - dk * ak);
    let q = dir * 2.0 * d.dot(&k.cross(&arm));
    let (r, phi) = (p.hypot(q), q.atan2(p));
    // Aimed a hair inside the reach, so that rounding leaves it reached.
    let inside = reach * (1.0 - 1e-9);
    let c = (inside * inside - e) / r.max(1e-300);
    let tau = std::f64::consts::TAU;
    let mut theta = None::<f64>;
    if c.abs() <= 1.0 {
        let w = c.acos();
        for cand in [phi - w, phi + w] {
            // `rem_euclid` is the angle itself in [0, 2π) (exact: no fmod).
            let t = if (0.0..tau).contains(&cand) { cand } else { cand.rem_euclid(tau) };
            if t > 0.0 && t < theta.unwrap_or(MAX_HEEL_ROLL) {
                theta = Some(t);
            }
        }
    }
    // Out of reach at every roll up to the largest: the roll that brings
    // the ankle nearest the hip (the distance is least at φ + π), so that
    // the roll, and the body's lowering that makes up the rest, are
    // continuous where the reach is just met (a reach met only past the
    // largest roll ends there as well).
    let theta = theta.unwrap_or_else(|| {
        let least = (phi + std::f64::consts::PI).rem_euclid(tau);
        let least = if least > std::f64::consts::PI { least - tau } else { least };
        let dist = |t: f64| e + p * t.cos() + q * t.sin();
        [0.0, MAX_HEEL_ROLL, least.clamp(0.0, MAX_HEEL_ROLL)]
            .into_iter()
            .fold(0.0, |b, t| if dist(t) < dist(b) { t } else { b })
    });
    Quat::from_axis_angle(&k, dir * theta)
}

/// Largest heel roll `[rad]` of [`heel_roll`].
const MAX_HEEL_ROLL: f64 = 0.8;

/// How the body must move (model frame `[m]`) so that each foot, its
/// contact moved by its `delta` (model frame), is within reach of its leg
/// after the heel roll of [`heel_roll`]: first lowered (at most 15 % of the
/// leg length), then
/// shifted horizontally towards each foot still out of reach by its excess
/// times the foot's weight (1 for a planted foot, 0 for one in the air,
/// in between while it lifts or lands, so that the move is continuous in
/// time; the sum does not depend on the feet's order). Zero when every foot
/// reaches. Long or sharply turning steps stretch the legs beyond what the
/// clip's hip height allows; the feet stay planted and the root follows
/// them (BPK §5: the root moves with the stance foot).
#[cfg(test)]
pub(crate) fn reach_fix(character: &Character, pose: &Pose, feet: &[(Foot, V3, f64)]) -> V3 {
    let mut fk = PoseFk::new(&character.skeleton, pose.clone());
    reach_fix_fk(&Legs::new(character), &mut fk, feet)
}

/// [`reach_fix`] on a [`PoseFk`], with the character's [`Legs`].
pub(crate) fn reach_fix_fk(legs: &Legs, fk: &mut PoseFk<'_>, feet: &[(Foot, V3, f64)]) -> V3 {
    // Per foot: hip, reach and the (rolled) ankle target.
    let legs_at: Vec<(V3, f64, V3, f64)> = feet
        .iter()
        .filter_map(|&(foot, delta, weight)| {
            let leg = legs.leg(foot);
            let ankle = leg.ankle;
            // A leg that follow_foot bends onto a detached foot joint: its
            // reach is the rest distance from the knee to the foot joint.
            if let Some((upper, lower)) = leg.detached {
                let reach = 0.998 * ((fk.position(lower) - fk.position(upper)).norm() + leg.detached_shin);
                return Some((fk.position(upper), reach, fk.position(ankle) + delta, weight));
            }
            // Only legs that move_foot bends by IK.
            let (thigh, shin) = leg.bent?;
            let reach = 0.998
                * ((fk.position(shin) - fk.position(thigh)).norm() + (fk.position(ankle) - fk.position(shin)).norm());
            let contact_at = fk.position(leg.contact) + delta;
            let ankle_at = fk.position(ankle) + delta;
            let hip = fk.position(thigh);
            let a = contact_at + heel_roll(ankle_at, contact_at, hip, reach) * (ankle_at - contact_at);
            Some((hip, reach, a, weight))
        })
        .collect();
    let mut drop = 0.0_f64;
    for &(hip, reach, a, _) in &legs_at {
        let d = a - hip;
        let (dh2, dv) = (d.x * d.x + d.z * d.z, -d.y);
        if dh2 + dv * dv > reach * reach {
            drop = drop.max(dv - (reach * reach - dh2).max(0.0).sqrt());
        }
    }
    let down = V3::new(0.0, -drop.clamp(0.0, MAX_DROP * legs.leg_length), 0.0);
    let mut fix = down;
    for &(hip, reach, a, weight) in &legs_at {
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
    let max_shift = MAX_ROOT_SHIFT * legs.leg_length;
    if shift.norm() > max_shift {
        fix -= shift * (1.0 - max_shift / shift.norm());
    }
    fix
}

/// Largest horizontal move of the body by [`reach_fix`], as a share of the
/// leg length ([`Character::leg_length`]). Only a character whose legs are
/// short for the path's speeds comes near it or [`MAX_DROP`] (the built-in
/// character does not on the shipped and 21 held-out patches: same
/// figures). Measured with KayKit's Knight (0.37 m legs: steps of 0.4 m at
/// 1.3 m/s), worst stance drift by the gate, (shift, drop) from (0.3, 0.1):
/// held-out r16-0 25 → 0.8 mm, `park` 21 → 1.9 mm, held-out r20-1 36 →
/// 17 mm (KayKit's Rogue there 31 → 8.9 mm). More of either costs more
/// than it gives: at (0.5, 0.2) the Knight's worst is 6.7 mm but a
/// Quaternius warrior's hips sink below the gate's posture floor and
/// RobotExpressive's body, shifted 0.3 m towards a far footprint, swings
/// back at 30 m/s when that foot lifts.
const MAX_ROOT_SHIFT: f64 = 0.4;

/// Largest lowering of the body by [`reach_fix`], as a share of the leg
/// length: beyond, a walker would crouch; the body shifts towards the feet
/// instead (the root leaves the path a little). See [`MAX_ROOT_SHIFT`]
/// for how it was chosen (the Knight's least hip height over leg length
/// then 0.72 for a moment, the gate's floor for it 0.64).
const MAX_DROP: f64 = 0.15;

/// The leg chain (upper leg, lower leg) of a character whose foot joint
/// does not hang from its leg (an imported rig whose legs followed the foot
/// by an IK constraint): its humanoid upper and lower leg (else joints named
/// `UpperLeg{L,R}` and `LowerLeg{L,R}`),
/// the foot joint not a descendant of the upper leg. `None` otherwise (the
/// built-in character's foot hangs from its shin).
pub fn detached_leg(character: &Character, foot: Foot) -> Option<(usize, usize)> {
    let sk = &character.skeleton;
    let side = match foot {
        Foot::Left => "L",
        Foot::Right => "R",
    };
    let [upper_bone, lower_bone, _, _] = crate::character::humanoid::Bone::leg(foot.index());
    let mapped = character.humanoid.as_ref().and_then(|h| Some((h.get(upper_bone)?, h.get(lower_bone)?)));
    let (upper, lower) = match mapped {
        Some(x) => x,
        None => (sk.find(&format!("UpperLeg{side}"))?, sk.find(&format!("LowerLeg{side}"))?),
    };
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

/// The knee's hinge axis of a [`detached_leg`] in its upper leg's frame
/// (unit), from the most bent knee among the rest pose and the clips' poses
/// (the knee at the lower leg, the end at the foot joint's rest position in
/// the lower leg's frame), oriented so that bending the knee is a positive
/// rotation about it; `None` for a leg that is not detached or a knee that
/// never bends (more than 0.1 rad). As
/// [`crate::character::Character::knee_hinge`] for a foot hanging from its
/// leg. O(clips · joints).
pub fn detached_knee_hinge(character: &Character, foot: Foot) -> Option<V3> {
    let (upper, lower) = detached_leg(character, foot)?;
    let sk = &character.skeleton;
    let rest = sk.globals(&sk.rest_pose());
    let end_local = (rest[lower].try_inverse()? * rest[character.foot(foot).ankle].column(3).into_owned()).xyz();
    character.hinge_of_most_bent(upper, lower, |g| (g[lower] * end_local.push(1.0)).xyz())
}

/// Bends the leg chain of [`detached_leg`] by two-bone IK (law of cosines
/// at the knee, then a swing of the upper leg) so that the lower leg's end
/// (the foot joint's rest position in the lower leg's frame) reaches the
/// foot joint (model frame); nothing when the foot hangs from its leg.
pub fn follow_foot(character: &Character, pose: &mut Pose, foot: Foot) {
    if detached_leg(character, foot).is_none() {
        return;
    }
    let mut fk = PoseFk::new(&character.skeleton, std::mem::take(pose));
    follow_foot_fk(&Legs::new(character), &mut fk, foot);
    *pose = fk.into_pose();
}

/// [`follow_foot`] on a [`PoseFk`], with the character's [`Legs`].
pub fn follow_foot_fk(legs: &Legs, fk: &mut PoseFk<'_>, foot: Foot) {
    let leg = legs.leg(foot);
    let (Some((upper, lower)), Some(end_local)) = (leg.detached, leg.end_local) else {
        return;
    };
    let ankle = leg.ankle;
    let target = fk.position(ankle);
    let end_of = |fk: &mut PoseFk<'_>| (fk.global(lower) * end_local.push(1.0)).xyz();
    let (h, k, a) = (fk.position(upper), fk.position(lower), end_of(fk));
    let (l1, l2) = ((k - h).norm(), (a - k).norm());
    if l1 < 1e-9 || l2 < 1e-9 {
        return;
    }
    let d = (target - h).norm().clamp((l1 - l2).abs() + 1e-6, 0.999 * (l1 + l2));
    // Knee: set the angle between the thigh and the shin to the one that
    // puts the end at distance d from the hip, about the knee's hinge (the
    // same way always, so that a nearly straight leg never flips its bend
    // from one frame to the next), else about the current bend normal.
    let (u, v) = ((k - h) / l1, (a - k) / l2);
    let want = ((d * d - l1 * l1 - l2 * l2) / (2.0 * l1 * l2)).clamp(-1.0, 1.0).acos();
    let bend = match leg.detached_hinge {
        Some(hinge) => {
            // The turn θ of the lower leg about the hinge through the knee
            // that puts its end at distance d from the hip (Rodrigues:
            // |m + cos θ w⊥ + sin θ (n × w)|² = E + P cos θ + Q sin θ, with
            // w = end − knee, w⊥ its part across the hinge n and m the
            // hip-to-knee vector plus w's part along it): of the two, the
            // one that leaves the knee bent forwards about the hinge; a
            // shin twisted out of the hinge's plane is not straightened.
            let axis = nalgebra::Unit::new_normalize(fk.rotation(upper) * hinge);
            let now = u.cross(&v).dot(&axis).atan2(u.dot(&v));
            let w = a - k;
            let w_par = axis.into_inner() * w.dot(&axis);
            let w_perp = w - w_par;
            let m = k - h + w_par;
            let across = axis.cross(&w);
            let e = m.norm_squared() + w_perp.norm_squared();
            let (p, q) = (2.0 * m.dot(&w_perp), 2.0 * m.dot(&across));
            let (r, phi) = (p.hypot(q), q.atan2(p));
            let c = ((d * d - e) / r.max(1e-300)).clamp(-1.0, 1.0);
            let bent = |t: f64| {
                let end = k + w_par + w_perp * t.cos() + across * t.sin();
                let v2 = (end - k).normalize();
                u.cross(&v2).dot(&axis).atan2(u.dot(&v2))
            };
            let theta = [phi + c.acos(), phi - c.acos()]
                .into_iter()
                .map(|t| (t + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU) - std::f64::consts::PI)
                .min_by(|&x, &y| {
                    let key = |t: f64| (bent(t) < 0.0, (bent(t) - want).abs());
                    let (kx, ky) = (key(x), key(y));
                    kx.0.cmp(&ky.0).then(kx.1.total_cmp(&ky.1))
                })
                .unwrap_or(want - now);
            Quat::from_axis_angle(&axis, theta)
        }
        None => {
            let normal = nalgebra::Unit::try_new(u.cross(&v), 1e-9).unwrap_or_else(|| {
                nalgebra::Unit::new_normalize(u.cross(&V3::x()).try_normalize(1e-9).unwrap_or(V3::z()))
            });
            let cur = u.dot(&v).clamp(-1.0, 1.0).acos();
            Quat::from_axis_angle(&normal, want - cur)
        }
    };
    let lower_parent = fk.rotation(upper);
    let q = lower_parent.inverse() * (bend * fk.rotation(lower));
    fk.set_rotation(lower, q);
    // Hip: swing the chain so that the end points at the target.
    let a = end_of(fk);
    if let Some(swing) = Quat::rotation_between(&(a - h), &(target - h)) {
        let parent = fk.skeleton().joints[upper].parent.map_or_else(Quat::identity, |p| fk.rotation(p));
        let q = parent.inverse() * (swing * fk.rotation(upper));
        fk.set_rotation(upper, q);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::character::{Character, Joint, Transform, builtin, mirror_map};

    fn leg(character: &Character, foot: Foot) -> (usize, usize, usize) {
        let sk = &character.skeleton;
        let ankle = character.foot(foot).ankle;
        let shin = sk.joints[ankle].parent.unwrap();
        (sk.joints[shin].parent.unwrap(), shin, ankle)
    }

    #[test]
    fn two_bone_ik_puts_the_end_joint_on_a_reachable_target_and_keeps_bone_lengths() {
        let c = builtin::character();
        let sk = &c.skeleton;
        for foot in [Foot::Left, Foot::Right] {
            let (thigh, shin, ankle) = leg(&c, foot);
            let mut pose = sk.rest_pose();
            let p0 = sk.positions(&pose);
            let lengths = |p: &[V3]| ((p[shin] - p[thigh]).norm(), (p[ankle] - p[shin]).norm());
            for (k, offset) in
                [V3::new(0.05, 0.12, 0.1), V3::new(-0.02, 0.3, -0.15), V3::new(0.0, 0.05, 0.25)].into_iter().enumerate()
            {
                let target = p0[ankle] + offset;
                let hinge = (k % 2 == 0).then(|| c.knee_hinge(foot)).flatten();
                two_bone_ik(sk, &mut pose, thigh, shin, ankle, target, hinge);
                let p = sk.positions(&pose);
                assert!((p[ankle] - target).norm() < 1e-6, "{foot:?} {k}: {} m off", (p[ankle] - target).norm());
                let (a, b) = (lengths(&p0), lengths(&p));
                assert!((a.0 - b.0).abs() < 1e-9 && (a.1 - b.1).abs() < 1e-9, "bones keep their lengths");
                assert_eq!(p[thigh], p0[thigh], "the hip joint does not move");
            }
        }
    }

    #[test]
    fn the_ik_of_a_legs_own_end_leaves_it_as_it_is_whatever_its_twist_and_stretch() {
        // A knee that bends a little off its hinge plane (a retargeted walk
        // twists it), and one straighter than the IK would bend it to: an
        // IK to the end where it is turned the knee (3.6 mm at a landing,
        // where one step's pose called it and the next did not).
        let c = builtin::character();
        let sk = &c.skeleton;
        for foot in [Foot::Left, Foot::Right] {
            let (thigh, shin, ankle) = leg(&c, foot);
            let hinge = c.knee_hinge(foot);
            assert!(hinge.is_some(), "the built-in knees have hinges");
            let (l1, l2) = {
                let p = sk.positions(&sk.rest_pose());
                ((p[shin] - p[thigh]).norm(), (p[ankle] - p[shin]).norm())
            };
            for (bend, twist) in [(0.6, 0.0), (0.6, 0.25), (0.02, 0.3), (0.0, 0.0)] {
                let mut pose = sk.rest_pose();
                let h = hinge.unwrap();
                let side = h.cross(&V3::y()).normalize();
                pose[shin].rotation = Quat::from_axis_angle(&nalgebra::Unit::new_normalize(h), bend)
                    * Quat::from_axis_angle(&nalgebra::Unit::new_normalize(side), twist)
                    * pose[shin].rotation;
                let p0 = sk.positions(&pose);
                let stretch = (p0[ankle] - p0[thigh]).norm() / (l1 + l2);
                let mut same = pose.clone();
                two_bone_ik(sk, &mut same, thigh, shin, ankle, p0[ankle], hinge);
                let p1 = sk.positions(&same);
                let moved = (p1[shin] - p0[shin]).norm().max((p1[ankle] - p0[ankle]).norm());
                assert!(
                    moved < 1e-9,
                    "{foot:?} bend {bend} twist {twist} (stretch {stretch:.5}): the knee moves {moved} m"
                );
                // And, for a bent knee, a target a millimetre away moves
                // it by about as much, not by a jump (a nearly straight
                // leg's knee moves as the square root of the change).
                if bend < 0.5 {
                    continue;
                }
                let mut near = pose.clone();
                let target = p0[ankle] + V3::new(0.0006, 0.0006, -0.0006);
                two_bone_ik(sk, &mut near, thigh, shin, ankle, target, hinge);
                let p2 = sk.positions(&near);
                assert!((p2[shin] - p0[shin]).norm() < 0.01, "{foot:?} bend {bend} twist {twist}: the knee jumps");
                if stretch < 0.999 {
                    assert!(
                        (p2[ankle] - target).norm() < 1e-6,
                        "{foot:?} bend {bend}: {} m off",
                        (p2[ankle] - target).norm()
                    );
                }
            }
        }
    }

    #[test]
    fn a_chain_too_short_to_bend_is_left_as_it_is() {
        // Found by fuzzing (character): bones of 0.05 µm (a file in
        // metres scaled by 1e-7) made the reachable range empty and
        // `f64::clamp` panicked.
        let j = |name: &str, parent, y: f64| Joint {
            name: name.into(),
            parent,
            rest: Transform { translation: V3::new(0.0, y, 0.0), ..Transform::default() },
        };
        let sk = Skeleton { joints: vec![j("Upper", None, 0.0), j("Lower", Some(0), -5e-8), j("End", Some(1), -5e-8)] };
        let mut pose = sk.rest_pose();
        two_bone_ik(&sk, &mut pose, 0, 1, 2, V3::new(0.0, -0.5, 0.1), None);
        assert_eq!(pose, sk.rest_pose());
    }

    #[test]
    fn an_unreachable_target_straightens_the_leg_towards_it() {
        let c = builtin::character();
        let sk = &c.skeleton;
        let (thigh, shin, ankle) = leg(&c, Foot::Left);
        let mut pose = sk.rest_pose();
        let p0 = sk.positions(&pose);
        let reach = (p0[shin] - p0[thigh]).norm() + (p0[ankle] - p0[shin]).norm();
        let target = p0[thigh] + V3::new(0.3, -1.0, 0.4).normalize() * (2.0 * reach);
        two_bone_ik(sk, &mut pose, thigh, shin, ankle, target, None);
        let p = sk.positions(&pose);
        let d = p[ankle] - p[thigh];
        assert!(d.norm() > 0.999 * reach && d.norm() <= reach, "{} of {reach}", d.norm());
        let off_line = d.cross(&(target - p[thigh]).normalize()).norm();
        assert!(off_line < 1e-6, "the end lies on the line to the target ({off_line} m off)");
    }

    #[test]
    fn move_foot_moves_the_contact_and_keeps_the_foot_orientation() {
        let c = builtin::character();
        let sk = &c.skeleton;
        for foot in [Foot::Left, Foot::Right] {
            let mut pose = sk.rest_pose();
            let (ankle, contact) = (c.foot(foot).ankle, c.foot(foot).contact);
            let g0 = sk.globals(&pose);
            let delta = V3::new(0.04, 0.08, -0.06);
            move_foot(&c, &mut pose, foot, delta, c.knee_hinge(foot));
            let g = sk.globals(&pose);
            let moved = position_of(&g[contact]) - position_of(&g0[contact]);
            assert!((moved - delta).norm() < 1e-6, "{foot:?}: contact moved {moved:?}, wanted {delta:?}");
            let turn = rotation_of(&g[ankle]) * rotation_of(&g0[ankle]).inverse();
            assert!(turn.angle() < 1e-6, "the foot keeps its global orientation ({} rad)", turn.angle());
        }
    }

    #[test]
    fn a_foot_turned_about_its_contact_keeps_the_contact_and_turns_its_heel_by_the_angle() {
        let c = builtin::character();
        let sk = &c.skeleton;
        let legs = Legs::new(&c);
        for foot in [Foot::Left, Foot::Right] {
            let (ankle, contact) = (c.foot(foot).ankle, c.foot(foot).contact);
            // Knees bent a little, as in stance: the ankle within reach.
            let mut pose = sk.rest_pose();
            move_foot(&c, &mut pose, foot, V3::new(0.0, 0.05, 0.0), c.knee_hinge(foot));
            let mut fk = PoseFk::new(sk, pose);
            let (c0, a0, q0) = (fk.position(contact), fk.position(ankle), fk.rotation(ankle));
            let angle = 0.35;
            turn_foot_fk(&legs, &mut fk, foot, angle, c.knee_hinge(foot));
            assert!((fk.position(contact) - c0).norm() < 1e-6, "{foot:?}: the contact moved");
            let (d0, d1) = (a0 - c0, fk.position(ankle) - c0);
            let turned = d1.z.atan2(d1.x) - d0.z.atan2(d0.x);
            // glTF yaw about +Y turns +X towards −Z.
            assert!((crate::character::wrap(-turned) - angle).abs() < 1e-6, "{foot:?}: turned {turned}");
            let q = fk.rotation(ankle) * q0.inverse();
            assert!((q.angle() - angle).abs() < 1e-6 && q.axis().unwrap().y > 0.999, "{foot:?}: {q:?}");
        }
    }

    #[test]
    fn toes_bend_up_at_their_joint_just_enough_to_keep_their_tip_out_of_the_floor() {
        let c = builtin::character();
        let sk = &c.skeleton;
        let legs = Legs::new(&c);
        let soles = crate::character::contact::Soles::of(&c);
        let foot = Foot::Left;
        let tip = soles.points[2];
        let toe = c.foot(foot).contact;
        // Roll the whole foot 30° heel up about the toe joint (an ankle
        // rotation): the toe tip goes under the floor.
        let mut fk = PoseFk::new(sk, sk.rest_pose());
        let ankle = c.foot(foot).ankle;
        let q = fk.rotation(ankle);
        let lateral = nalgebra::Unit::new_normalize(V3::x());
        let parent = fk.rotation(sk.joints[ankle].parent.unwrap());
        fk.set_rotation(ankle, parent.inverse() * Quat::from_axis_angle(&lateral, 0.5) * q);
        let at = |fk: &mut PoseFk<'_>| (fk.global(toe) * tip.local.push(1.0)).xyz();
        assert!(at(&mut fk).y < tip.rest.y - 0.01, "the tip is under the floor: {:?}", at(&mut fk));
        let joint = fk.position(toe);
        lift_toe_fk(&legs, &mut fk, foot, tip.local, tip.rest.y);
        assert!((at(&mut fk).y - tip.rest.y).abs() < 1e-9, "{:?}", at(&mut fk));
        assert!((fk.position(toe) - joint).norm() < 1e-12, "the toe joint stays");
        // A tip above the floor is left alone.
        let before = fk.pose().clone();
        lift_toe_fk(&legs, &mut fk, foot, tip.local, tip.rest.y - 0.05);
        assert_eq!(fk.pose(), &before);
    }

    #[test]
    fn heel_roll_brings_the_ankle_exactly_to_reach_and_is_continuous() {
        let (contact, hip) = (V3::new(0.0, 0.0, 0.1), V3::new(0.0, 0.9, -0.15));
        let mut last: Option<f64> = None;
        for i in 0..200 {
            // The ankle behind the contact, the hip ever farther.
            let ankle = V3::new(0.0, 0.08, -0.05);
            let reach = 0.86 - 1e-4 * f64::from(i);
            let r = heel_roll(ankle, contact, hip, reach);
            let rolled = contact + r * (ankle - contact);
            assert!(rolled.y >= ankle.y - 1e-12, "the heel goes up");
            if (ankle - hip).norm() > reach && r.angle() < MAX_HEEL_ROLL - 1e-9 {
                assert!(((rolled - hip).norm() - reach).abs() < 1e-8, "{i}: at reach");
            }
            if let Some(l) = last {
                assert!((r.angle() - l).abs() < 2e-3, "{i}: continuous ({l} → {})", r.angle());
            }
            last = Some(r.angle());
        }
    }

    #[test]
    fn reach_fix_lowers_the_body_only_when_a_planted_foot_is_out_of_reach() {
        let c = builtin::character();
        let pose = c.skeleton.rest_pose();
        let near = [(Foot::Left, V3::new(0.0, 0.02, 0.05), 1.0), (Foot::Right, V3::zeros(), 1.0)];
        assert_eq!(reach_fix(&c, &pose, &near), V3::zeros());
        let far = [(Foot::Left, V3::new(0.0, -0.12, 0.0), 1.0), (Foot::Right, V3::zeros(), 1.0)];
        let fix = reach_fix(&c, &pose, &far);
        assert!(fix.y < -0.01 && fix.y >= -0.3, "{fix:?}");
        assert!(V3::new(fix.x, 0.0, fix.z).norm() <= MAX_ROOT_SHIFT * c.leg_length() + 1e-12);
    }

    #[test]
    fn heel_roll_is_continuous_where_no_roll_reaches_any_more() {
        // The hip moves away until no roll of the foot brings the ankle
        // within reach: the roll goes on to the one that brings it nearest,
        // continuously, rather than jumping to the largest roll.
        let (contact, ankle) = (V3::new(0.0, 0.0, 0.1), V3::new(0.0, 0.08, -0.05));
        let reach = 0.8;
        let mut last: Option<(f64, f64)> = None;
        let mut unreachable = 0;
        for i in 0..20_000 {
            let hip = V3::new(0.0, 0.75, -0.3 - 2e-5 * f64::from(i));
            let r = heel_roll(ankle, contact, hip, reach);
            let rolled = contact + r * (ankle - contact);
            let d = (rolled - hip).norm();
            if d > reach + 1e-9 {
                unreachable += 1;
                // The nearest roll: rolling a little more or less is farther.
                for e in [-1e-3, 1e-3] {
                    let k = nalgebra::Unit::new_normalize(r.axis().map_or(V3::x(), |a| a.into_inner()));
                    let t = (r.angle() + e).clamp(0.0, MAX_HEEL_ROLL);
                    let other = contact + Quat::from_axis_angle(&k, t) * (ankle - contact);
                    assert!((other - hip).norm() >= d - 1e-9, "{i}: a roll of {t} brings the ankle nearer");
                }
            }
            if let Some((l, ld)) = last {
                // (Steep only where the reach is just met: a square root.)
                assert!((r.angle() - l).abs() < 0.02, "{i}: the roll jumps from {l} to {}", r.angle());
                assert!((d - ld).abs() < 1e-3, "{i}: the ankle's distance jumps from {ld} to {d}");
            }
            last = Some((r.angle(), d));
        }
        assert!(unreachable > 5000, "the hip went out of every roll's reach ({unreachable} samples)");
    }

    /// A rig whose foot joints hang from the root, beside their legs (as
    /// RobotExpressive's): root → hips → UpperLeg{L,R} → LowerLeg{L,R}, and
    /// root → Foot{L,R}.
    fn detached_rig() -> Character {
        let j = |name: &str, parent: Option<usize>, t: [f64; 3]| Joint {
            name: name.into(),
            parent,
            rest: Transform { translation: V3::new(t[0], t[1], t[2]), ..Transform::default() },
        };
        let joints = vec![
            j("Root", None, [0.0, 0.0, 0.0]),
            j("Hips", Some(0), [0.0, 1.0, 0.0]),
            j("UpperLegL", Some(1), [0.1, 0.0, 0.0]),
            j("LowerLegL", Some(2), [0.0, -0.45, 0.0]),
            j("UpperLegR", Some(1), [-0.1, 0.0, 0.0]),
            j("LowerLegR", Some(4), [0.0, -0.45, 0.0]),
            j("FootL", Some(0), [0.1, 0.1, 0.0]),
            j("FootR", Some(0), [-0.1, 0.1, 0.0]),
        ];
        let skeleton = crate::character::Skeleton { joints };
        let mirror = mirror_map(&skeleton);
        Character {
            name: "detached".into(),
            feet: [
                crate::character::FootJoints { ankle: 6, contact: 6 },
                crate::character::FootJoints { ankle: 7, contact: 7 },
            ],
            hips: 1,
            mirror,
            skeleton,
            primitives: vec![],
            clips: vec![],
            idle: None,
            height: 1.1,
            humanoid: None,
            notes: vec![],
        }
    }

    #[test]
    fn a_detached_knee_bends_about_its_hinge_through_a_straight_leg() {
        // A clip bends the left knee forwards (the shin swung back): that is
        // its hinge. The foot then rises from a straight leg, millimetre by
        // millimetre: the knee bends forwards every time, never flipping
        // back or sideways as the bend plane of a straight leg would let it.
        let mut c = detached_rig();
        let mut bent = c.skeleton.rest_pose();
        bent[3].rotation = Quat::from_axis_angle(&V3::x_axis(), 0.5);
        c.clips = vec![crate::character::Clip {
            name: "bend".into(),
            frame_interval: 0.1,
            frames: vec![c.skeleton.rest_pose(), bent],
            cyclic: false,
        }];
        let hinge = detached_knee_hinge(&c, Foot::Left).expect("the clip bends the knee");
        assert!((hinge - V3::x()).norm() < 1e-9, "{hinge:?}");
        assert_eq!(detached_knee_hinge(&c, Foot::Right), None, "the right knee never bends");
        let legs = Legs::new(&c).with_detached_hinges(&c);
        let mut last: Option<V3> = None;
        for i in 0..200 {
            let mut pose = c.skeleton.rest_pose();
            // Sideways a little too, so that the bend plane is the hinge's
            // only by the hinge.
            pose[6].translation += V3::new(0.002 * f64::from(i % 7), 0.0005 * f64::from(i), 0.0);
            let mut fk = PoseFk::new(&c.skeleton, pose);
            follow_foot_fk(&legs, &mut fk, Foot::Left);
            let (h, k, a) = (fk.position(2), fk.position(3), fk.position(6));
            // The knee ahead of the line from the hip to the foot.
            let along = (a - h).normalize();
            let off = (k - h) - along * (k - h).dot(&along);
            if i > 20 {
                assert!(off.z > 0.0 && off.z > 10.0 * off.x.abs(), "{i}: the knee bends {off:?}");
            }
            if let Some(l) = last {
                assert!((k - l).norm() < 0.02, "{i}: the knee jumps {} m", (k - l).norm());
            }
            last = Some(k);
        }
    }

    #[test]
    fn a_detached_leg_is_bent_onto_its_foot_joint() {
        let c = detached_rig();
        assert_eq!(detached_leg(&c, Foot::Left), Some((2, 3)));
        assert_eq!(detached_leg(&builtin::character(), Foot::Left), None, "the built-in foot hangs from its shin");
        let sk = &c.skeleton;
        let mut pose = sk.rest_pose();
        // The foot steps forward and up: the leg must follow it.
        pose[6].translation += V3::new(0.0, 0.15, 0.2);
        follow_foot(&c, &mut pose, Foot::Left);
        let rest = sk.globals(&sk.rest_pose());
        let end_local = (rest[3].try_inverse().unwrap() * rest[6].column(3).into_owned()).xyz();
        let g = sk.globals(&pose);
        let end = (g[3] * end_local.push(1.0)).xyz();
        let foot = position_of(&g[6]);
        assert!((end - foot).norm() < 1e-6, "the lower leg ends {} m from the foot", (end - foot).norm());
    }
}
