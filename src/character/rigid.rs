//! Legs that are their own feet: a rig whose leg is one bone, with neither
//! knee nor foot joint (Kenney's mini characters: `leg-left`, `leg-right`
//! hanging from the root), walks as a compass, the rigid leg pivoting on
//! its sole while the body vaults over it (the compass gait, McGeer,
//! *Passive dynamic walking*, 1990). Such a leg cannot move its end
//! without moving the whole leg, so the two-bone IK of [`super::ik`] does
//! nothing for it; instead:
//!
//! - each such leg gets a **sole joint** ([`add_sole_joints`]): a joint
//!   without skin at the middle of the leg's sole, the foot's contact joint,
//!   so that the analysis, the footstep planner and the gate see the point
//!   that is planted rather than the hip the leg hangs from;
//! - a pose is **stood** on its feet ([`stand`]): each leg is aimed so
//!   that its sole joint is over its goal, the body raised or lowered so
//!   that the supporting foot's lowest sole point is on its goal height,
//!   and rolled about its forward axis so that the other foot's is on
//!   its own (the rigid walker's waddle: it lifts the swing foot off the
//!   floor, which a leg without a knee cannot bend away, and keeps both
//!   feet on the floor in double support). A planted foot rocks on its
//!   lowest point (heel while the leg points forward, toe tip while it
//!   points back), which stays where the foot laid flat on its footprint
//!   has it.

use super::contact::Soles;
use super::fk::PoseFk;
use super::ik::Legs;
use super::{Character, Joint, Quat, Transform, V3, yaw};
use crowdpatch_runtime::format::Foot;

/// Most the body is rolled about its forward axis by [`stand`] `[rad]`
/// (20°): a rigid walker waddles, but not onto its side (Kenney's wide
/// hips need up to 8°, the built-in character's narrow ones with rigid
/// legs up to 15°).
pub const MAX_ROLL: f64 = 0.35;

/// Whether both legs of `legs` are their own feet (no knee, no foot
/// joint). O(1).
pub fn is_rigid(legs: &Legs) -> bool {
    legs.feet.iter().all(|l| l.is_own_foot())
}

/// Gives each leg of `character` that is one bone (its foot joint is its
/// upper leg: no knee, no foot) a sole joint as its contact joint: a child
/// of the leg without skin, at rest on the floor (`y = 0`) under the middle
/// of the leg's lowest vertices (those within 1 cm of its lowest),
/// named after the leg with `_sole`. Clips get the joint at rest. Nothing
/// for a rig with a knee or a foot, or a leg without vertices. Returns the
/// names added. O(vertices + clips · frames).
pub fn add_sole_joints(character: &mut Character, upper_legs: [Option<usize>; 2]) -> Vec<String> {
    let mut added = Vec::new();
    for foot in Foot::BOTH {
        let leg = character.feet[foot.index()].ankle;
        if upper_legs[foot.index()] != Some(leg) || character.feet[foot.index()].contact != leg {
            continue;
        }
        let sk = &character.skeleton;
        let below = |j: usize| sk.is_ancestor(leg, j);
        let vertices: Vec<V3> = character
            .primitives
            .iter()
            .flat_map(|p| p.positions.iter().zip(&p.joints).zip(&p.weights))
            .filter(|((_, js), ws)| {
                let k = (0..4).max_by(|&a, &b| ws[a].total_cmp(&ws[b])).unwrap_or(0);
                ws[k] > 0.0 && below(js[k] as usize)
            })
            .map(|((v, _), _)| V3::new(v[0] as f64, v[1] as f64, v[2] as f64))
            .collect();
        let Some(low) = vertices.iter().map(|v| v.y).min_by(f64::total_cmp) else { continue };
        let sole: Vec<&V3> = vertices.iter().filter(|v| v.y < low + 0.01).collect();
        let n = sole.len() as f64;
        let mid = sole.iter().fold(V3::zeros(), |a, v| a + **v) / n;
        let rest = sk.globals(&sk.rest_pose());
        let Some(inverse) = rest[leg].try_inverse() else { continue };
        let local = (inverse * V3::new(mid.x, 0.0, mid.z).push(1.0)).xyz();
        let mut name = format!("{}_sole", sk.joints[leg].name);
        while sk.joints.iter().any(|j| j.name == name) {
            name.push('_');
        }
        let transform = Transform { translation: local, ..Transform::default() };
        character.skeleton.joints.push(Joint { name: name.clone(), parent: Some(leg), rest: transform });
        for clip in &mut character.clips {
            for frame in &mut clip.frames {
                frame.push(transform);
            }
        }
        let j = character.skeleton.len() - 1;
        character.feet[foot.index()].contact = j;
        added.push(name);
    }
    if !added.is_empty() {
        character.mirror = super::mirror_map(&character.skeleton);
    }
    added
}

/// Where [`stand`] puts one foot, model frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FootGoal {
    /// The foot.
    pub foot: Foot,
    /// Where its contact (sole) joint goes, horizontally `[m]` (`x`, `z`).
    pub at: [f64; 2],
    /// The foot's yaw relative to its rest `[rad]`.
    pub yaw: f64,
    /// Height `[m]` of its lowest sole point over that point's height at
    /// rest.
    pub height: f64,
    /// How much the foot rocks on its lowest sole point, in `[0, 1]`: 1 for
    /// a planted foot (that point stays where the foot laid flat at `at`
    /// has it), 0 for a foot in the air (its contact joint goes to `at`).
    pub pin: f64,
}

/// Stands the pose of `fk` on its feet (module docs): aims each rigid leg
/// at its goal, moves the top joint ([`Legs::top`]) vertically so that
/// `support`'s lowest sole point is at its goal height, and rolls the
/// legs' parent about the body's forward axis (up to [`MAX_ROLL`]) so that
/// `other`'s is at its own. Beyond the roll's reach, `support` misses its
/// height by the share `yielding` (in `[0, 1]`) of the miss, `other` by
/// the rest: a caller whose feet swap roles (at a landing) keeps the pose
/// continuous by giving the miss to the same foot on both sides. Legs that
/// are not rigid, or that hang from different parents, are left alone.
/// Returns the vertical move `[m]` and the roll `[rad]` (positive raising
/// the left hip). O(bisection steps · pin passes · leg depth): about 50
/// evaluations of both legs' aims.
pub fn stand(
    fk: &mut PoseFk<'_>,
    legs: &Legs,
    soles: &Soles,
    (support, other): (&FootGoal, &FootGoal),
    yielding: f64,
) -> (f64, f64) {
    let sk = fk.skeleton();
    // The legs' model-frame rotations at rest (a rigid leg's foot joint is
    // the leg).
    let rest_rotations = &legs.feet.map(|l| l.rest_ankle_inverse.inverse());
    let (l, r) = (legs.feet[0].ankle, legs.feet[1].ankle);
    let Some(parent) = sk.joints[l].parent.filter(|&p| sk.joints[r].parent == Some(p)) else { return (0.0, 0.0) };
    if !is_rigid(legs) {
        return (0.0, 0.0);
    }
    // The legs at their rest translations (a foot IK may have moved them).
    for leg in &legs.feet {
        let rest = sk.joints[leg.ankle].rest.translation;
        let now = fk.pose()[leg.ankle].translation;
        if (now - rest).norm() > 0.0 {
            fk.translate(leg.ankle, rest - now);
        }
    }
    let parent_q0 = fk.rotation(parent);
    let grand = sk.joints[parent].parent.map_or_else(Quat::identity, |g| fk.rotation(g));
    let forward = {
        let f = parent_q0 * V3::z();
        let h = V3::new(f.x, 0.0, f.z);
        if h.norm() > 1e-9 { nalgebra::Unit::new_normalize(h) } else { V3::z_axis() }
    };
    // Raising the other foot's hip: + about forward raises the left (+X).
    let sign = if other.foot == Foot::Left { 1.0 } else { -1.0 };
    let eval = |fk: &mut PoseFk<'_>, beta: f64| {
        let roll = Quat::from_axis_angle(&forward, sign * beta);
        fk.set_rotation(parent, grand.inverse() * roll * parent_q0);
        let ls = aim_foot(fk, legs, soles, rest_rotations, support);
        let lo = aim_foot(fk, legs, soles, rest_rotations, other);
        let dy = support.height - ls;
        (lo + dy - other.height, dy)
    };
    let (r0, _) = eval(fk, 0.0);
    let beta = if r0.abs() < 1e-7 {
        0.0
    } else {
        // The other foot's height rises with β: the root nearest 0, on the
        // side the height needs (scanned in eighths of [0, ±MAX], then
        // bisected), or that side's end where there is none.
        let side = if r0 < 0.0 { MAX_ROLL } else { -MAX_ROLL };
        let mut bracket = None;
        let mut prev = 0.0;
        for k in 1..=8 {
            let b = side * k as f64 / 8.0;
            let (r, _) = eval(fk, b);
            if (r < 0.0) != (r0 < 0.0) {
                bracket = Some(if side > 0.0 { (prev, b) } else { (b, prev) });
                break;
            }
            prev = b;
        }
        if let Some((mut lo, mut hi)) = bracket {
            for _ in 0..40 {
                let mid = 0.5 * (lo + hi);
                let (rm, _) = eval(fk, mid);
                if rm < 0.0 {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            0.5 * (lo + hi)
        } else {
            side
        }
    };
    let (r, dy) = eval(fk, beta);
    // Out of the roll's reach, the support takes `yielding` of the miss.
    let dy = dy - r * yielding.clamp(0.0, 1.0);
    let top = legs.top;
    fk.translate(top, V3::new(0.0, dy, 0.0));
    (dy, sign * beta)
}

/// Most passes [`aim_foot`] makes to put a planted foot's lowest point
/// where it belongs.
const PIN_PASSES: usize = 12;

/// Aims the rigid leg of `goal.foot` (module docs) and returns the height
/// `[m]` of its lowest sole point over that point's rest height. A planted
/// foot (`pin` 1) has its lowest point put where the foot laid flat at the
/// goal has it, by moving the aim by that point's miss (until it is under
/// a micrometre, at most [`PIN_PASSES`] passes).
/// O(leg depth).
fn aim_foot(fk: &mut PoseFk<'_>, legs: &Legs, soles: &Soles, rest_rotations: &[Quat; 2], goal: &FootGoal) -> f64 {
    let f = goal.foot.index();
    let leg = legs.feet[f];
    let points = &soles.points[3 * f..3 * f + 3];
    let c_rest = soles.contact_rest[f];
    let turn = yaw(goal.yaw);
    let at = V3::new(goal.at[0], 0.0, goal.at[1]);
    let mut target = at;
    let mut low = 0.0;
    for pass in 0..=PIN_PASSES {
        aim_leg(fk, leg.ankle, leg.contact, rest_rotations[f], goal.yaw, target);
        // The lowest sole point, blended over a centimetre (as the pivot
        // of a rolling foot passes from heel to toe tip).
        let heights: Vec<(V3, V3)> = points
            .iter()
            .map(|p| {
                let now = p.at(&fk.global(p.joint)) - V3::new(0.0, p.rest.y, 0.0);
                let flat = at + turn * (p.rest - c_rest);
                (now, flat)
            })
            .collect();
        let min = heights.iter().map(|h| h.0.y).fold(f64::INFINITY, f64::min);
        low = min;
        if pass == PIN_PASSES || goal.pin <= 0.0 {
            break;
        }
        let (mut w_sum, mut miss) = (0.0, V3::zeros());
        for (now, flat) in &heights {
            let w = (-(now.y - min) / 0.005).exp();
            w_sum += w;
            miss += (flat - now) * w;
        }
        let miss = miss / w_sum;
        let step = V3::new(miss.x, 0.0, miss.z) * goal.pin;
        // Each pass leaves about a fifth of the miss (the aim pitches the
        // foot a little further): converged to a micrometre, a planted
        // heel holds still from frame to frame (three passes left it
        // trembling by 0.1–0.5 mm, 6–40 mm/s over 10 ms).
        if step.norm() < 1e-6 {
            break;
        }
        target += step;
    }
    low
}

/// Turns leg joint `leg` (its translation at rest) so that its contact
/// joint `contact` is over `target` (model frame, horizontally; out of
/// reach, as far towards it as 98 % of the leg's length allows), the foot
/// yawed by `yaw_rel` `[rad]` from its rest: the rest orientation yawed,
/// then the shortest turn that points the leg there. `rest_q` is the
/// leg's model-frame rotation at rest. O(leg depth).
fn aim_leg(fk: &mut PoseFk<'_>, leg: usize, contact: usize, rest_q: Quat, yaw_rel: f64, target: V3) {
    let sk = fk.skeleton();
    let hip = fk.position(leg);
    let g0 = yaw(yaw_rel) * rest_q;
    let v = g0 * sk.joints[contact].rest.translation;
    let len = v.norm();
    if len < 1e-9 {
        return;
    }
    let mut d = V3::new(target.x - hip.x, 0.0, target.z - hip.z);
    let reach = 0.98 * len;
    if d.norm() > reach {
        d *= reach / d.norm();
    }
    let dir = V3::new(d.x, -(len * len - d.norm_squared()).sqrt(), d.z);
    let mut g = Quat::rotation_between(&v, &dir).unwrap_or_else(Quat::identity) * g0;
    // The shortest turn of a leg pointing sideways and forwards yaws the
    // foot a little (a foot half a metre long, 1° off, has its heel 5 mm
    // aside): twisted back about the leg's axis, which keeps the contact
    // joint where it is.
    let up = nalgebra::Unit::new_normalize(-dir);
    for _ in 0..2 {
        let f = g * rest_q.inverse() * V3::z();
        let off = super::wrap(yaw_rel - super::yaw_of(f.x, f.z));
        g = Quat::from_axis_angle(&up, off) * g;
    }
    let parent = sk.joints[leg].parent.map_or_else(Quat::identity, |p| fk.rotation(p));
    fk.set_rotation(leg, parent.inverse() * g);
}

/// Where a rigid leg's foot meets the ground in a pose: its contact joint
/// `contact_at` horizontally, at the height of its lowest sole point over
/// that point's rest height (a foot rocking on its heel or toe tip stands
/// on the floor while its contact joint is over it). `globals`: the pose's
/// global matrices. O(1).
pub fn ground_point(soles: &Soles, globals: &[nalgebra::Matrix4<f64>], foot: Foot, contact_at: V3) -> V3 {
    let f = foot.index();
    let low = soles.points[3 * f..3 * f + 3]
        .iter()
        .map(|p| p.at(&globals[p.joint]).y - p.rest.y)
        .fold(f64::INFINITY, f64::min);
    V3::new(contact_at.x, low, contact_at.z)
}
