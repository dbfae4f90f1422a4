//! Retargeting: a clip of one humanoid (the *source*: the built-in
//! character's procedural walks, a walk on another rig in a glTF file, a
//! BVH take) played on another (the *target*), through their humanoid
//! mappings ([`crate::character::humanoid`]).
//!
//! Both characters are in the model frame (+Y up, facing +Z, left +X), so
//! directions compare directly whatever the rigs' bone axes and rest poses
//! (a T-pose onto arms-down is fine). Per frame:
//!
//! 1. **Bone directions.** Each humanoid bone has an *anatomical frame*
//!    built from joint positions: its primary axis points to the next bone
//!    of its chain (thigh → knee, knee → ankle, ankle → toes, spine → chest
//!    → neck → head, shoulder → elbow → wrist; for the hips, from the right
//!    hip joint to the left), its secondary axis is a reference direction
//!    (+X, or +Z for arm bones, +Y for the hips) turned by the bone's
//!    rotation since rest, which carries twist. The target bone is turned so
//!    that its anatomical frame matches the source's: `Q_t = A_s(t) ·
//!    A_t,rest⁻¹ · Q_t,rest`. A bone without a next bone (head, hands, toes)
//!    takes the source's rotation relative to its parent bone, expressed in
//!    the model frame.
//! 2. **Proportions.** Lengths scale by `k`, the ratio of the straight leg
//!    lengths ([`Character::leg_length`]): the hips move by `k` times the
//!    source's hips displacement from rest, and each foot is put, by
//!    two-bone IK on the target's own leg (or by moving a foot joint that
//!    hangs outside the leg, which the leg then follows), where the source's
//!    is relative to its hips, scaled by `k`, about the target's own rest
//!    stance — the ball of the foot (the contact joint) when both rigs have
//!    one, so that a ball kept planted through heel-off stays planted
//!    whatever the foot's length. So a foot planted in the source is planted
//!    in the target,
//!    at the target's hip height and stance width, and step lengths scale
//!    with the legs. A target whose legs are their own feet (one bone, no
//!    knee, no foot joint) is stood where the source's feet are instead
//!    ([`super::rigid::stand`]: legs aimed, body raised and rolled), its
//!    feet rocking on their soles.
//! 3. **Time.** Walks of geometrically similar bodies are dynamically
//!    similar at equal Froude numbers `v²/(g·l)` (Alexander 1989): time
//!    scales by `√k`, so the retargeted clip's frame interval is the
//!    source's times `√k`, and speeds scale by `√k`.
//!
//! Joints the mapping does not name keep their rest pose relative to their
//! parent (fingers, twist bones, props). Cost: O(frames · joints).

use super::contact::Soles;
use super::fk::PoseFk;
use super::humanoid::{Bone, Humanoid};
use super::ik::{Legs, follow_foot, heel_roll, two_bone_ik};
use super::rigid::{self, FootGoal};
use super::{Character, Clip, Pose, Quat, Skeleton, Transform, V3, position_of, rotation_of, smoothstep};
use crowdpatch_runtime::format::Foot;
use nalgebra::{Matrix3, Rotation3};

/// Why a clip cannot be retargeted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RetargetError {
    /// A character has no humanoid mapping.
    #[error("{0} has no humanoid mapping (hips and two legs) to retarget through")]
    NoMapping(String),
}

/// The bone whose position gives a bone's primary direction, by chain.
fn next_in_chain(b: Bone) -> &'static [Bone] {
    use Bone::*;
    match b {
        Spine => &[Chest, Neck, Head],
        Chest => &[Neck, Head],
        Neck => &[Head],
        LeftShoulder => &[LeftUpperArm],
        LeftUpperArm => &[LeftLowerArm],
        LeftLowerArm => &[LeftHand],
        RightShoulder => &[RightUpperArm],
        RightUpperArm => &[RightLowerArm],
        RightLowerArm => &[RightHand],
        LeftUpperLeg => &[LeftLowerLeg, LeftFoot],
        LeftLowerLeg => &[LeftFoot],
        LeftFoot => &[LeftToes],
        RightUpperLeg => &[RightLowerLeg, RightFoot],
        RightLowerLeg => &[RightFoot],
        RightFoot => &[RightToes],
        _ => &[],
    }
}

/// The humanoid parent of a bone (the bone its relative rotation is taken
/// against when it has no next bone).
fn parent_bone(b: Bone, has: &dyn Fn(Bone) -> bool) -> Option<Bone> {
    use Bone::*;
    let chain: &[Bone] = match b {
        Spine => &[Hips],
        Chest => &[Spine, Hips],
        Neck => &[Chest, Spine, Hips],
        Head => &[Neck, Chest, Spine, Hips],
        LeftShoulder | RightShoulder => &[Chest, Spine, Hips],
        LeftUpperArm => &[LeftShoulder, Chest, Spine, Hips],
        RightUpperArm => &[RightShoulder, Chest, Spine, Hips],
        LeftLowerArm => &[LeftUpperArm],
        RightLowerArm => &[RightUpperArm],
        LeftHand => &[LeftLowerArm, LeftUpperArm],
        RightHand => &[RightLowerArm, RightUpperArm],
        LeftUpperLeg | RightUpperLeg => &[Hips],
        LeftLowerLeg => &[LeftUpperLeg],
        RightLowerLeg => &[RightUpperLeg],
        LeftFoot => &[LeftLowerLeg, LeftUpperLeg],
        RightFoot => &[RightLowerLeg, RightUpperLeg],
        LeftToes => &[LeftFoot],
        RightToes => &[RightFoot],
        Hips => &[],
    };
    chain.iter().copied().find(|&p| has(p))
}

fn is_arm(b: Bone) -> bool {
    matches!(b.index(), 5..=12)
}

/// An orthonormal frame whose first axis is `primary` and whose second is
/// `secondary` made orthogonal to it (another axis when they are nearly
/// parallel).
fn frame(primary: V3, secondary: V3) -> Rotation3<f64> {
    let x = primary.try_normalize(1e-12).unwrap_or_else(V3::x);
    let mut y = secondary - x * secondary.dot(&x);
    if y.norm() < 0.2 * secondary.norm().max(1e-12) {
        for alt in [V3::y(), V3::z(), V3::x()] {
            y = alt - x * alt.dot(&x);
            if y.norm() > 0.5 {
                break;
            }
        }
    }
    let y = y.normalize();
    Rotation3::from_matrix_unchecked(Matrix3::from_columns(&[x, y, x.cross(&y)]))
}

/// One side of a retarget: a character's rest globals and mapping.
struct Side<'a> {
    character: &'a Character,
    h: &'a Humanoid,
    rest_p: Vec<V3>,
    rest_q: Vec<Quat>,
}

impl<'a> Side<'a> {
    fn new(character: &'a Character) -> Result<Side<'a>, RetargetError> {
        let h = character.humanoid.as_ref().ok_or_else(|| RetargetError::NoMapping(character.name.clone()))?;
        let g = character.skeleton.globals(&character.skeleton.rest_pose());
        Ok(Side {
            character,
            h,
            rest_p: g.iter().map(position_of).collect(),
            rest_q: g.iter().map(rotation_of).collect(),
        })
    }
}

/// The retargeting of one source onto one target, prepared once.
pub struct Retarget<'a> {
    source: Side<'a>,
    target: Side<'a>,
    /// Length ratio target / source (straight legs).
    pub k: f64,
    /// Bones mapped in both, in humanoid order.
    bones: Vec<Bone>,
    /// Per bone: the next bone used for its direction (mapped in both).
    next: Vec<Option<Bone>>,
    /// Per bone: its humanoid parent (mapped in both).
    parent: Vec<Option<Bone>>,
    /// The target joint that carries the hips' displacement: the lowest
    /// common ancestor of the hips and the upper legs.
    mover: usize,
    /// For a target whose legs are their own feet ([`rigid`]): its legs
    /// and soles.
    rigid: Option<(Legs, Soles)>,
}

impl<'a> Retarget<'a> {
    /// Prepares retargeting from `source` onto `target`.
    ///
    /// # Errors
    /// [`RetargetError::NoMapping`] when either has no humanoid mapping.
    pub fn new(source: &'a Character, target: &'a Character) -> Result<Retarget<'a>, RetargetError> {
        let s = Side::new(source)?;
        let t = Side::new(target)?;
        let both = |b: Bone| s.h.get(b).is_some() && t.h.get(b).is_some();
        let bones: Vec<Bone> = super::humanoid::BONES.iter().copied().filter(|&b| both(b)).collect();
        let next = bones.iter().map(|&b| next_in_chain(b).iter().copied().find(|&c| both(c))).collect();
        let parent = bones.iter().map(|&b| parent_bone(b, &both)).collect();
        let k = target.leg_length() / source.leg_length().max(1e-9);
        let sk = &target.skeleton;
        let hips = t.h.get(Bone::Hips).unwrap_or(target.hips);
        let mut mover = hips;
        for b in [Bone::LeftUpperLeg, Bone::RightUpperLeg, Bone::Spine] {
            if let Some(j) = t.h.get(b) {
                while !sk.is_ancestor(mover, j) {
                    match sk.joints[mover].parent {
                        Some(p) => mover = p,
                        None => break,
                    }
                }
            }
        }
        let legs = Legs::new(target);
        let rigid = rigid::is_rigid(&legs).then(|| (legs, Soles::of(target)));
        Ok(Retarget { source: s, target: t, k, bones, next, parent, mover, rigid })
    }

    /// The anatomical frame of bone `i` (of `self.bones`) on one side, from
    /// joint positions `p` and rotations `q`.
    fn anatomical(&self, side: &Side<'_>, i: usize, p: &[V3], q: &[Quat]) -> Option<Rotation3<f64>> {
        let b = self.bones[i];
        let j = side.h.get(b)?;
        let delta = q[j] * side.rest_q[j].inverse();
        if b == Bone::Hips {
            let (l, r) = (side.h.get(Bone::LeftUpperLeg)?, side.h.get(Bone::RightUpperLeg)?);
            return Some(frame(p[l] - p[r], delta * V3::y()));
        }
        let c = side.h.get(self.next[i]?)?;
        let reference = if is_arm(b) { V3::z() } else { V3::x() };
        Some(frame(p[c] - p[j], delta * reference))
    }

    /// The target pose for a source pose (both model frame). O(joints).
    pub fn pose(&self, source_pose: &[Transform]) -> Pose {
        let (s, t) = (&self.source, &self.target);
        let ssk = &s.character.skeleton;
        let tsk = &t.character.skeleton;
        let sg = ssk.globals(source_pose);
        let sp: Vec<V3> = sg.iter().map(position_of).collect();
        let sq: Vec<Quat> = sg.iter().map(rotation_of).collect();
        // 1. Global rotations of the target's mapped bones.
        let mut tq: Vec<Option<Quat>> = vec![None; tsk.len()];
        for (i, &b) in self.bones.iter().enumerate() {
            let (Some(js), Some(jt)) = (s.h.get(b), t.h.get(b)) else { continue };
            let q = match (self.anatomical(s, i, &sp, &sq), self.anatomical(t, i, &t.rest_p, &t.rest_q)) {
                (Some(a_s), Some(a_t)) => Quat::from_rotation_matrix(&(a_s * a_t.inverse())) * t.rest_q[jt],
                _ => {
                    // Relative to the humanoid parent, in the model frame.
                    match self.parent[i].and_then(|p| Some((p, s.h.get(p)?, t.h.get(p)?))) {
                        Some((_, ps, pt)) => {
                            let rel = s.rest_q[ps] * (sq[ps].inverse() * sq[js]) * s.rest_q[js].inverse();
                            // Humanoid order puts parent bones first.
                            let parent_now = tq[pt].unwrap_or(t.rest_q[pt]);
                            parent_now * t.rest_q[pt].inverse() * rel * t.rest_q[jt]
                        }
                        None => sq[js] * s.rest_q[js].inverse() * t.rest_q[jt],
                    }
                }
            };
            tq[jt] = Some(q);
        }
        // 2. The hips' displacement, scaled.
        let (hs, ht) = (s.h.get(Bone::Hips), t.h.get(Bone::Hips));
        let disp = match hs {
            Some(h) => (sp[h] - s.rest_p[h]) * self.k,
            None => V3::zeros(),
        };
        // 3. Globals in skeleton order, then locals.
        let n = tsk.len();
        let mut gp = vec![V3::zeros(); n];
        let mut gq = vec![Quat::identity(); n];
        let mut pose = tsk.rest_pose();
        for j in 0..n {
            let rest = &tsk.joints[j].rest;
            let (pp, pq) = match tsk.joints[j].parent {
                Some(p) => (gp[p], gq[p]),
                None => (V3::zeros(), Quat::identity()),
            };
            gq[j] = tq[j].unwrap_or(pq * rest.rotation);
            gp[j] = if j == self.mover { t.rest_p[j] + disp } else { pp + pq * rest.translation };
            pose[j].rotation = pq.inverse() * gq[j];
            pose[j].translation = pq.inverse() * (gp[j] - pp);
        }
        // 4. Feet where the source's are, relative to the hips, scaled: the
        // contact point (ball of the foot) when both rigs have one, so that
        // a ball the source keeps planted through heel-off stays planted
        // whatever the target's foot length; else the ankle.
        if let (Some(hs), Some(ht)) = (hs, ht) {
            let hips_t = gp[ht];
            for foot in Foot::BOTH {
                let fb = Bone::leg(foot.index())[2];
                let (Some(fs), Some(ft)) = (s.h.get(fb), t.h.get(fb)) else { continue };
                let (cs, ct) = (s.character.foot(foot).contact, t.character.foot(foot).contact);
                let (cs, ct) = if cs != fs && ct != ft { (cs, ct) } else { (fs, ft) };
                let want_contact = hips_t + (sp[cs] - sp[hs]) * self.k + (t.rest_p[ct] - t.rest_p[ht])
                    - (s.rest_p[cs] - s.rest_p[hs]) * self.k;
                let foot_q = tq[ft].unwrap_or(t.rest_q[ft]);
                let want = want_contact - foot_q * t.rest_q[ft].inverse() * (t.rest_p[ct] - t.rest_p[ft]);
                self.place_ankle(&mut pose, foot, ft, (want, want_contact), tq[ft]);
            }
            if let Some(rigid) = &self.rigid {
                pose = self.stand_rigid(pose, rigid, (hs, ht), (&sp, &sq), hips_t);
            }
        }
        pose
    }

    /// A target whose legs are their own feet stood where the source's
    /// feet are ([`rigid::stand`]): each foot's sole joint over where the
    /// source's contact is relative to its hips, scaled (as step 4 puts a
    /// foot), yawed as the source's foot, its lowest sole point as high as
    /// the source's contact is over its rest height; the lower foot
    /// carries the body, the other is reached by the waddle's roll; a foot
    /// within 5 mm of the floor rocks on its sole, one 2 cm up is in the
    /// air.
    fn stand_rigid(
        &self,
        pose: Pose,
        (legs, soles): &(Legs, Soles),
        (hs, ht): (usize, usize),
        (sp, sq): (&[V3], &[Quat]),
        hips_t: V3,
    ) -> Pose {
        let (s, t) = (&self.source, &self.target);
        let goals = Foot::BOTH.map(|foot| {
            let cs = s.character.foot(foot).contact;
            let ct = legs.leg(foot).contact;
            let want = hips_t + (sp[cs] - sp[hs]) * self.k + (t.rest_p[ct] - t.rest_p[ht])
                - (s.rest_p[cs] - s.rest_p[hs]) * self.k;
            let ankle = s.character.foot(foot).ankle;
            let yaw = super::yaw_of_rotation(&(sq[ankle] * s.rest_q[ankle].inverse()));
            let height = (want.y - t.rest_p[ct].y).max(0.0);
            let pin = 1.0 - smoothstep((height - 0.005) / 0.015);
            FootGoal { foot, at: [want.x, want.z], yaw, height, pin }
        });
        let [l, r] = goals;
        let (support, other) = if l.height <= r.height { (l, r) } else { (r, l) };
        let mut fk = PoseFk::new(&t.character.skeleton, pose);
        // Both feet on the floor (the roles swap as their heights cross),
        // both miss by half beyond the roll's reach: the same pose either
        // way.
        let planted = other.pin * (1.0 - smoothstep(other.height / 0.01));
        rigid::stand(&mut fk, legs, soles, (&support, &other), 0.5 * planted);
        fk.into_pose()
    }

    /// Puts the target's ankle `ankle` at `want` (model frame), its contact
    /// then at `contact` (the same point as `want` for a foot without one):
    /// two-bone IK on its leg when it hangs from it, else by moving the foot
    /// joint (and bending the leg after it); then gives the foot its global
    /// rotation `foot_q` back. An ankle beyond the leg's reach is first
    /// brought within it by rolling the foot about its contact, heel up
    /// ([`heel_roll`]), as a walker does: a longer foot than the source's, on
    /// a shorter leg, pitched as the source's, would hold its ankle farther
    /// from the hip than the leg reaches, and the planted contact would rise
    /// with it.
    fn place_ankle(&self, pose: &mut Pose, foot: Foot, ankle: usize, (want, contact): (V3, V3), foot_q: Option<Quat>) {
        let c = self.target.character;
        let sk = &c.skeleton;
        let [ub, lb, _, _] = Bone::leg(foot.index());
        let (Some(upper), Some(lower)) = (self.target.h.get(ub), self.target.h.get(lb)) else { return };
        let hangs = sk.joints[ankle].parent == Some(lower) && sk.joints[lower].parent == Some(upper);
        if hangs {
            let g = sk.globals(pose);
            let (hip, knee, at) = (position_of(&g[upper]), position_of(&g[lower]), position_of(&g[ankle]));
            // The reach of two_bone_ik (which straightens a leg to 99.95 %).
            let reach = 0.9995 * ((knee - hip).norm() + (at - knee).norm());
            let roll = heel_roll(want, contact, hip, reach);
            let want = contact + roll * (want - contact);
            let foot_q = foot_q.map(|q| roll * q);
            two_bone_ik(sk, pose, upper, lower, ankle, want, None);
            if let Some(q) = foot_q {
                let g = sk.globals(pose);
                let parent = sk.joints[ankle].parent.map_or_else(Quat::identity, |p| rotation_of(&g[p]));
                pose[ankle].rotation = parent.inverse() * q;
            }
            return;
        } else if !sk.is_ancestor(upper, ankle) {
            set_global_position(sk, pose, ankle, want);
            follow_foot(c, pose, foot);
        } else {
            return;
        }
        if let Some(q) = foot_q {
            let g = sk.globals(pose);
            let parent = sk.joints[ankle].parent.map_or_else(Quat::identity, |p| rotation_of(&g[p]));
            pose[ankle].rotation = parent.inverse() * q;
        }
    }

    /// The source clip played on the target: every frame retargeted, the
    /// frame interval scaled by `√k` (dynamic similarity), root motion
    /// removed at the hips; named `name (retargeted from source)`.
    pub fn clip(&self, clip: &Clip) -> Clip {
        let frames: Vec<Pose> = clip.frames.iter().map(|f| self.pose(f)).collect();
        let mut out = Clip {
            name: format!("{} (from {})", clip.name, self.source.character.name),
            frame_interval: clip.frame_interval * self.k.sqrt(),
            frames,
            cyclic: clip.cyclic,
        };
        let hips = self.target.h.get(Bone::Hips).unwrap_or(self.target.character.hips);
        out.make_in_place_at(&self.target.character.skeleton, hips);
        out
    }
}

/// Sets joint `j`'s local translation so that its global position is `at`.
fn set_global_position(sk: &Skeleton, pose: &mut Pose, j: usize, at: V3) {
    let g = sk.globals(pose);
    match sk.joints[j].parent {
        Some(p) => {
            let inv = g[p].try_inverse().unwrap_or_else(nalgebra::Matrix4::identity);
            pose[j].translation = (inv * at.push(1.0)).xyz();
        }
        None => pose[j].translation = at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::character::builtin;

    #[test]
    fn retargeting_a_character_onto_itself_gives_back_its_poses() {
        let c = builtin::character();
        let r = Retarget::new(&c, &c).unwrap();
        assert!((r.k - 1.0).abs() < 1e-12);
        let clip = c.clips.iter().find(|k| k.name == "walk 1.33 m/s").unwrap();
        for f in clip.frames.iter().step_by(7) {
            let out = r.pose(f);
            let (a, b) = (c.skeleton.positions(f), c.skeleton.positions(&out));
            for (j, (x, y)) in a.iter().zip(&b).enumerate() {
                assert!((x - y).norm() < 1e-6, "joint {} off by {} m", c.skeleton.joints[j].name, (x - y).norm());
            }
        }
    }

    /// The built-in character with every length scaled by `s` and its
    /// joints renamed (Mixamo style) — a different rig of the same shape.
    fn scaled_renamed(s: f64) -> Character {
        let mut c = builtin::character();
        let rename = |n: &str| -> String {
            let side = if n.ends_with("_l") {
                "Left"
            } else if n.ends_with("_r") {
                "Right"
            } else {
                ""
            };
            let base = n.trim_end_matches("_l").trim_end_matches("_r");
            let part = match base {
                "hips" => "Hips",
                "spine" => "Spine",
                "chest" => "Spine2",
                "neck" => "Neck",
                "head" => "Head",
                "clavicle" => "Shoulder",
                "upper_arm" => "Arm",
                "forearm" => "ForeArm",
                "hand" => "Hand",
                "thigh" => "UpLeg",
                "shin" => "Leg",
                "foot" => "Foot",
                "toe" => "ToeBase",
                other => other,
            };
            format!("mixamorig:{side}{part}")
        };
        for j in &mut c.skeleton.joints {
            j.name = rename(&j.name);
            j.rest.translation *= s;
        }
        c.humanoid = crate::character::humanoid_of(&c.skeleton);
        c.clips.clear();
        c
    }

    #[test]
    fn a_ball_beyond_the_legs_reach_stays_where_it_is_wanted_and_the_heel_rolls() {
        // The built-in character on legs at 0.35 of their length with its
        // own feet (as the KayKit rigs: a long foot on a short leg). The
        // ball wanted 0.1 m ahead of its rest place, the foot flat: the ankle
        // is then beyond the leg's reach. The foot rolls about its ball, heel
        // up, until the leg reaches; the ball stays where it is wanted
        // rather than the leg dragging it up and back.
        let src = builtin::character();
        let mut dst = src.clone();
        let sk = &mut dst.skeleton;
        let mut lowered = 0.0;
        for side in ["l", "r"] {
            for bone in ["shin", "foot"] {
                let j = sk.find(&format!("{bone}_{side}")).unwrap();
                if side == "l" {
                    lowered -= 0.65 * sk.joints[j].rest.translation.y;
                }
                sk.joints[j].rest.translation *= 0.35;
            }
        }
        let hips = sk.find("hips").unwrap();
        sk.joints[hips].rest.translation.y -= lowered;
        let r = Retarget::new(&src, &dst).unwrap();
        let foot = Foot::Left;
        let (ankle, contact) = (dst.foot(foot).ankle, dst.foot(foot).contact);
        let mut pose = dst.skeleton.rest_pose();
        let rest = dst.skeleton.positions(&pose);
        let want_contact = rest[contact] + V3::new(0.0, 0.0, 0.1);
        let want_ankle = want_contact + (rest[ankle] - rest[contact]);
        let g = dst.skeleton.globals(&pose);
        r.place_ankle(&mut pose, foot, ankle, (want_ankle, want_contact), Some(rotation_of(&g[ankle])));
        let p = dst.skeleton.positions(&pose);
        assert!((p[contact] - want_contact).norm() < 1e-3, "the ball is {} m off", (p[contact] - want_contact).norm());
        assert!(p[ankle].y > rest[ankle].y + 0.01, "the heel rolls up: ankle at {} m", p[ankle].y);
    }

    #[test]
    fn a_walk_keeps_its_planted_feet_on_a_rig_of_other_size_and_names() {
        let src = builtin::character();
        let dst = scaled_renamed(0.6);
        let h = dst.humanoid.as_ref().unwrap();
        assert_eq!(h.get(Bone::LeftLowerLeg).map(|j| dst.skeleton.joints[j].name.as_str()), Some("mixamorig:LeftLeg"));
        let r = Retarget::new(&src, &dst).unwrap();
        assert!((r.k - 0.6).abs() < 1e-9, "{}", r.k);
        let clip = src.clips.iter().find(|k| k.name == "walk 1.33 m/s").unwrap();
        let out = r.clip(clip);
        assert!((out.frame_interval - clip.frame_interval * 0.6f64.sqrt()).abs() < 1e-12);
        // Foot heights scale with the legs: the source's planted ball stays
        // on the ground, so does the target's.
        for (f, g) in clip.frames.iter().zip(&out.frames).step_by(5) {
            let (a, b) = (src.skeleton.positions(f), dst.skeleton.positions(g));
            for foot in Foot::BOTH {
                let (sa, ta) = (src.foot(foot).ankle, dst.foot(foot).ankle);
                let want = (a[sa].y - 0.08) * 0.6 + 0.08 * 0.6;
                assert!((b[ta].y - want).abs() < 0.01, "ankle at {} m, want {want}", b[ta].y);
            }
            assert!((dst.hip_height_ratio(g) - src.hip_height_ratio(f)).abs() < 0.02);
        }
    }
}
