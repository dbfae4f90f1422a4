//! Synthesis of one agent's motion (BPK blend §4.2–4.5, APM §4.2–4.4): per
//! planned step, the blend of library steps, transitions, placement about
//! the stance foot with the root pulled onto the path, and foot IK; a
//! standing agent plays the idle clip. Cost: O(keys · joints) per agent,
//! with a few extra keys where a planted foot needs them.

use super::sampling::{
    Posed, Trace, event_jumps, gltf_yaw, output, refine_keys, sample_times, to_gltf, with_key_times, with_turn_keys,
};
use super::skeletal::Skeletal;
use crate::character::fk::{self, PoseFk};
use crate::character::ik::{
    Leg, Legs, follow_foot_fk, lift_toe_fk, move_foot_fk, pitch_foot_fk, reach_fix_fk, turn_foot_fk,
};
use crate::character::library::Weights;
use crate::character::rigid::{self, FootGoal};
use crate::character::{Pose, Quat, SlerpArc, Transform, V3, smoothstep, yaw, yaw_of_rotation};
use crate::footsteps::{BoundaryFootsteps, FootstepPlan, landing_of, path_position, wrap_angle_exact};
use crowdpatch_runtime::format::{AgentAnimation, BakedAgent, Foot};

/// Per-joint difference `a ⊖ b`: rotation `a·b⁻¹` and translation `a − b`,
/// with the arc from the identity to the rotation (for [`apply_delta`]).
fn pose_delta(a: &[Transform], b: &[Transform]) -> Vec<(Quat, V3, SlerpArc)> {
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            let q = x.rotation * y.rotation.inverse();
            (q, x.translation - y.translation, SlerpArc::new(&Quat::identity(), &q, 1e-12))
        })
        .collect()
}

/// `base ⊕ s·delta`: each rotation turned by the slerp from the identity
/// to its delta rotation at `s`.
fn apply_delta(base: &mut [Transform], delta: &[(Quat, V3, SlerpArc)], s: f64) {
    if s <= 0.0 {
        return;
    }
    for (t, (q, d, arc)) in base.iter_mut().zip(delta) {
        let r = arc.at(&Quat::identity(), q, s).unwrap_or(*q);
        t.rotation = r * t.rotation;
        t.translation += d * s;
    }
}

/// Time `[s]` over which a foot's height at a step's start settles onto
/// the height the step's blend gives it ([`Step::holds`]): about the time
/// from heel strike to foot flat in walking (10–15 % of a 1.1 s gait
/// cycle; Perry & Burnfield, *Gait Analysis*, 2010, ch. 2).
const SETTLE_TIME: f64 = 0.15;

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
    start_delta: Vec<(Quat, V3, SlerpArc)>,
    /// Per foot (left, right), the height `[m]` the transition offset puts
    /// the contact joint at at `u = 0` above where the blend alone has it
    /// ([`Step::holds`]).
    held_height: [f64; 2],
    /// Offset into the boundary pose at the end, if any.
    end_delta: Option<Vec<(Quat, V3, SlerpArc)>>,
    /// glTF yaw at the start.
    yaw0: f64,
    /// Residual yaw turned about the stance foot over the step.
    yaw_turn: f64,
    /// Stance-foot yaw in the model frame at u = 0 (for undoing its turn).
    stance_yaw0: f64,
    /// For the swing foot, planted in the previous step: the yaw it is
    /// held by at this step's start (what the previous step turned), and
    /// its world (glTF) yaw relative to its rest then, unheld; held until
    /// its lift-off ([`Step::hold_yaw`]). None for the first step.
    trail_yaw: Option<(f64, f64)>,
    /// Contact points (in their joints' frames) of the toes' tips, left
    /// then right, and their height at rest `[m]` (model frame).
    toe_tips: [(V3, f64); 2],
    stance_at: V3,
    swing_from: V3,
    swing_to: V3,
    /// World (glTF) yaws `[rad]` of the swing foot's footprint at its
    /// lift-off, the stance foot's and the swing foot's landing: a rigid
    /// leg's foot keeps its footprint's ([`Step::posed_rigid`]).
    footprint_yaws: [f64; 3],
    /// Swing contact (world) at lift-off and at the end without correction.
    swing_free_lift: V3,
    swing_free_end: V3,
    /// The same with the body moved within reach ([`Step::fixed`]).
    swing_fixed_lift: V3,
    swing_fixed_end: V3,
}

/// A planted foot is held against the body's turn exactly up to this
/// `[rad]` (40°), then less and less ([`capped`]).
const FULL_HOLD: f64 = 0.7;

/// Most a planted foot is held against the body's turn `[rad]` (69°,
/// [`Step::hold_yaw`]): beyond about this a walker's foot turns with it
/// (a pivot on the spot).
const MAX_HOLD: f64 = 1.2;

/// `δ` as held: itself up to [`FULL_HOLD`], then saturating smoothly
/// (`tanh`, with a continuous slope) towards [`MAX_HOLD`].
fn capped(delta: f64) -> f64 {
    let a = delta.abs();
    if a <= FULL_HOLD {
        return delta;
    }
    let room = MAX_HOLD - FULL_HOLD;
    delta.signum() * (FULL_HOLD + room * ((a - FULL_HOLD) / room).tanh())
}

/// Height `[m]` over its height at rest to which a planted foot turning on
/// the floor lifts its heel ([`Step::pivot_heel`]): a pivot on the ball.
const PIVOT_HEEL_RISE: f64 = 0.03;

/// Turn `[rad]` (6°) of a planted foot on the floor by which its heel is
/// up by [`PIVOT_HEEL_RISE`] ([`Step::pivot_heel`]).
const PIVOT_ONSET: f64 = 0.1;

/// Share of the swing over which the swing foot's horizontal move from its
/// footprint eases in ([`Step::swing_target`]).
const SWING_EASE: f64 = 0.3;

/// Share of the swing over which the swing foot's horizontal move comes
/// onto its footprint before the landing ([`Step::swing_target`]): a foot
/// still moving at the clip's speed as it comes down slides the last
/// centimetres of its swing along the floor (1–2 cm on retargeted walks).
const SWING_LAND: f64 = 0.4;

/// Share of the swing before the landing by which the swing foot is over
/// its footprint ([`SWING_LAND`]): its last centimetre down is vertical
/// (RobotExpressive on figure7, heel drift p95 6.7 → 0.5 mm).
const LAND_TAIL: f64 = 0.1;

/// [`SWING_LAND`] for a foot outside a two-bone leg (a leg that follows its
/// foot, [`follow_foot_fk`]): a foot on its footprint that early would be
/// out of such a leg's reach (RobotExpressive: its lower leg's end 1.1 cm
/// off the foot at the 99th percentile with 0.3, under 1 cm with 0.2).
const SWING_LAND_DETACHED: f64 = 0.2;

/// Share of the swing over which the swing foot's raise to
/// [`SWING_CLEARANCE`] comes in after the lift-off ([`Step::clear_floor`]):
/// a foot lowered into the floor by a retargeted walk would otherwise skim
/// it early in the swing (toe tips of the KayKit knight: stance drift p95
/// 104 → 26 mm, from [`SWING_EASE`]'s 0.3 to 0.2). The raise goes out over
/// the last [`LAND_TAIL`], once the foot is over its footprint: going out
/// over the last 0.2 let a heel skim the floor while still moving onto its
/// footprint (the built-in character on `figure7` at 15 Hz keys: a heel
/// 11.9 cm along the floor).
const CLEARANCE_EASE: f64 = 0.2;

/// Height difference `[m]` of heel and ball over which the pivot of a
/// rolling foot passes from one to the other ([`Step::pin_sole`]).
const PIVOT_BLEND: f64 = 0.01;

/// Height `[m]` of a rigid leg's swing foot's lowest sole point over the
/// floor in mid-swing ([`Step::posed_rigid`]): a leg without a knee lifts
/// its foot by the body's roll alone, and a foot within 1 cm of the floor
/// for 0.1 s counts as planted.
const RIGID_CLEARANCE: f64 = 0.03;

/// Farthest a rigid leg's swing foot is from under its hip, horizontally,
/// as a share of the leg's length ([`Step::posed_rigid`]): 0.8 leaves the
/// foot 0.6 legs under the hip, low enough to be put at its clearance by
/// the body's roll.
const SWING_REACH: f64 = 0.8;

/// Share of the swing over which a rigid leg's swing foot comes down onto
/// its footprint ([`Step::posed_rigid`]).
const RIGID_LAND: f64 = 0.25;

/// Least height `[m]` of the swing foot's sole over the floor in mid-swing
/// ([`Step::clear_floor`]): a walker's least toe clearance is 1–2 cm
/// (Winter, *Foot trajectory in human gait*, 1992).
const SWING_CLEARANCE: f64 = 0.015;

/// Model-frame yaw of the foot joint of `leg` relative to its rest.
fn stance_yaw(fk: &mut PoseFk<'_>, leg: &Leg) -> f64 {
    yaw_of_rotation(&(fk.rotation(leg.ankle) * leg.rest_ankle_inverse))
}

/// A pose being placed: its joints (with their globals as computed) and
/// its placement, glTF yaw and translation of the model origin (y = 0).
struct Placing<'s> {
    fk: PoseFk<'s>,
    yaw: f64,
    /// `yaw(yaw)`.
    turn: Quat,
    offset: V3,
}

impl Placing<'_> {
    /// World (glTF) point of model point `m`.
    fn world(&self, m: V3) -> V3 {
        self.turn * m + self.offset
    }

    fn into_posed(self) -> Posed {
        Posed { pose: self.fk.into_pose(), yaw: self.yaw, offset: self.offset }
    }
}

impl Step<'_> {
    /// The blended, offset pose before placement and IK, with the vertical
    /// holds of its feet ([`Step::holds`]).
    fn raw_pose(&self, skeletal: &Skeletal, u: f64) -> Raw {
        let pose = skeletal.gait.library.pose(&self.weights, u);
        self.raw_from(skeletal, pose, u)
    }

    /// [`Step::raw_pose`] from the blend's pose at `u` (the library's).
    fn raw_from(&self, skeletal: &Skeletal, blend: Pose, u: f64) -> Raw {
        let mut clean = blend.clone();
        self.end_offset(&mut clean, u);
        let pose = self.offset_pose(blend, u);
        let holds = self.holds(skeletal, &clean, &pose, u);
        Raw { pose, holds }
    }

    /// Weight of the transition offset from the previous step at `u`: held
    /// until the lift-off, then faded out.
    fn start_fade(&self, u: f64) -> f64 {
        let lift = self.lift.min(0.9);
        1.0 - smoothstep((u - lift) / (0.65 * (1.0 - lift)).max(1e-6))
    }

    /// [`Step::raw_pose`]'s pose from the blend's pose at `u`: the
    /// transition offset from the previous step, then the one into the
    /// boundary pose.
    fn offset_pose(&self, mut pose: Pose, u: f64) -> Pose {
        apply_delta(&mut pose, &self.start_delta, self.start_fade(u));
        self.end_offset(&mut pose, u);
        pose
    }

    /// The offset into the boundary pose at `u` (last step only).
    fn end_offset(&self, pose: &mut Pose, u: f64) {
        let lift = self.lift.min(0.9);
        if let Some(end) = &self.end_delta {
            apply_delta(pose, end, smoothstep((u - lift) / (1.0 - lift).max(1e-6)));
        }
    }

    /// The vertical moves `[m]` (left, right) that hold the feet on the
    /// ground the blend puts them on while the transition offset from the
    /// previous step is held: the offset is a rotation of each joint, and
    /// as the stance leg turns through its step a constant rotation of hip,
    /// knee and ankle lifts the planted foot (up to 15 cm in sharp
    /// transitions), which the horizontal hold of the footprint does not
    /// see. A foot's contact joint is held at the blend's height plus the
    /// offset's height at `u = 0` (so the pose is continuous with the
    /// previous step's end), that difference settling within
    /// [`SETTLE_TIME`] (or 90 % of a shorter step; a landing foot comes
    /// down flat); the stance foot
    /// all step long, the trailing foot until its lift-off and then fading
    /// as the offset does (continuous at both ends). Then the sole goes
    /// onto the floor while the foot bears weight: a ball under it is
    /// raised onto it ([`Step::ground_weight`]), and a stance foot whose
    /// heel and ball are both over it is lowered onto it in its flat
    /// stance ([`flat_stance`]). O(joints).
    fn holds(&self, skeletal: &Skeletal, clean: &Pose, raw: &Pose, u: f64) -> [f64; 2] {
        let sk = &skeletal.character.skeleton;
        let fade = self.start_fade(u);
        // Settled before the step's end (a short step's too), so that the
        // next step starts from the blend's own heights.
        let span = (SETTLE_TIME / (self.t1 - self.t0).max(1e-9)).min(0.9);
        let settle = 1.0 - smoothstep(u / span);
        let mut out = [0.0; 2];
        for foot in [self.stance, self.stance.other()] {
            let c = skeletal.legs.leg(foot).contact;
            let target = fk::position(sk, clean, c).y + self.held_height[foot.index()] * settle;
            let weight = if foot == self.stance { 1.0 } else { fade };
            let y = fk::position(sk, raw, c).y;
            out[foot.index()] = (target - y) * weight;
            // Its sole on the floor while it bears weight: a blend of
            // walks turns hip, knee and ankle of a planted leg by
            // averages, and the average of poses with a foot on the floor
            // need not have it there (the built-in walks on figure7: a
            // trailing toe joint 4.4 cm under its height at rest in the
            // heel rise, its sole 4.2 cm in the floor); nor does a clip
            // keyed with its feet over it (the Quaternius warrior's own
            // walk: the stance sole 1.8 cm up).
            let [heel, ball] = [0, 1].map(|k| {
                let p = &skeletal.soles.points[3 * foot.index() + k];
                p.at(&fk::global_of(sk, raw, p.joint)).y + out[foot.index()]
            });
            // The ball up onto the floor (a heel under it is pitched up
            // about the ball by `flat_foot`), or heel and ball down onto it.
            if ball < 0.0 {
                out[foot.index()] -= ball * self.ground_weight(foot, u);
            } else if foot == self.stance {
                out[foot.index()] -= heel.min(ball).max(0.0) * flat_stance(u);
            }
        }
        out
    }

    /// `foot`'s share of the ground at `u`: 1 for the stance foot and for
    /// the trailing foot up to its lift-off, fading out over
    /// [`SWING_EASE`] of the swing after it and in over the landing
    /// ([`SWING_LAND`]); continuous, and 1 at both ends of the step.
    fn ground_weight(&self, foot: Foot, u: f64) -> f64 {
        if foot == self.stance {
            return 1.0;
        }
        let land = SWING_LAND * (1.0 - self.lift.min(0.95));
        self.lift_fade(u).max(smoothstep((u - (1.0 - land)) / land))
    }

    /// The trailing foot's share of the ground at `u`: 1 up to its
    /// lift-off, fading out over [`SWING_EASE`] of the swing after it.
    fn lift_fade(&self, u: f64) -> f64 {
        let lift = self.lift.min(0.95);
        if u <= lift { 1.0 } else { 1.0 - smoothstep((u - lift) / (SWING_EASE * (1.0 - lift))) }
    }

    /// Weight at `u` of `foot`'s sole kept flat ([`flat_ball`]): the stance
    /// foot's comes in over the loading response (20 % of the step, the
    /// landing foot coming down from its heel) and stays; the trailing
    /// foot's holds until its lift-off and fades out over [`SWING_EASE`]
    /// of the swing. Continuous across steps (1 where the stance foot
    /// becomes the trailing one, 0 where the swing foot lands).
    fn sole_weight(&self, foot: Foot, u: f64) -> f64 {
        if foot == self.stance { smoothstep(u / 0.2) } else { self.lift_fade(u) }
    }

    /// Placement of `pose` at phase `u`: yaw about the stance contact and
    /// translation that puts it on its footprint, then the root pulled by
    /// [`Step::root_pull`] towards the path (BPK blend §5, root-movement
    /// fidelity λ₄; the feet are kept on their footprints by IK).
    fn place<'s>(&self, skeletal: &'s Skeletal, pose: Pose, u: f64) -> Placing<'s> {
        let character = &skeletal.character;
        let mut fk = PoseFk::new(&character.skeleton, pose);
        let leg = skeletal.legs.leg(self.stance);
        let turn_of_stance = wrap_angle_exact(stance_yaw(&mut fk, leg) - self.stance_yaw0);
        let y = self.yaw0 + self.yaw_turn * smoothstep(u) - turn_of_stance;
        let c = fk.position(leg.contact);
        let turn = yaw(y);
        let rc = turn * c;
        let offset = V3::new(self.stance_at.x - rc.x, 0.0, self.stance_at.z - rc.z);
        let mut placing = Placing { fk, yaw: y, turn, offset };
        if self.root_pull > 0.0 {
            let t = self.t0 + u * (self.t1 - self.t0);
            let want = to_gltf(
                path_position(self.path, t.clamp(self.path.start(), self.path.end()))
                    .unwrap_or(self.path.keys[0].position),
            );
            // The in-place clip's own sway of the hips (their offset from the
            // model origin) is kept.
            let h = placing.fk.position(character.hips);
            let want = want + turn * V3::new(h.x, 0.0, h.z);
            let hips = placing.world(h);
            placing.offset += V3::new(want.x - hips.x, 0.0, want.z - hips.z) * self.root_pull;
        }
        placing
    }

    /// The final pose at phase `u`: placed, with the stance foot held on its
    /// footprint and the swing foot corrected.
    fn posed(&self, skeletal: &Skeletal, u: f64) -> Posed {
        self.posed_from(skeletal, self.raw_pose(skeletal, u), u)
    }

    /// [`Step::posed`] from the raw pose at `u` ([`Step::raw_pose`]).
    fn posed_from(&self, skeletal: &Skeletal, raw: Raw, u: f64) -> Posed {
        if rigid::is_rigid(&skeletal.legs) {
            return self.posed_rigid(skeletal, raw, u);
        }
        let (gait, legs) = (&skeletal.gait, &skeletal.legs);
        let holds = raw.holds;
        let Fixed { mut p, fix } = self.fixed(skeletal, raw, u);
        let swing = self.stance.other();
        let down = V3::new(0.0, -fix.y, 0.0);
        let hold = |foot: Foot| V3::new(0.0, holds[foot.index()], 0.0);
        if self.root_pull > 0.0 || fix.norm() > 0.0 || holds[self.stance.index()] != 0.0 {
            let dm = model_delta(legs, &mut p, self.stance, self.stance_at) + down + hold(self.stance);
            move_foot_fk(legs, &mut p.fk, self.stance, dm, gait.knee_hinges[self.stance.index()]);
        }
        // The swing foot in the air goes where the body, shifted, carries
        // it, corrected onto its footprints at both ends of the swing by
        // offsets taken with the body shifted as it is there: so it is on
        // its footprint exactly at lift-off and landing whatever the shift,
        // and the pose is continuous across both.
        let target = if u <= self.lift.min(0.95) {
            self.swing_from
        } else {
            self.swing_target(legs, &mut p, u, (self.swing_fixed_lift, self.swing_fixed_end))
        };
        // The swing foot keeps its height from the clip (held on the
        // ground before its lift-off).
        let dm = model_delta(legs, &mut p, swing, target) + down + hold(swing);
        move_foot_fk(legs, &mut p.fk, swing, dm, gait.knee_hinges[swing.index()]);
        let released = self.hold_yaw(skeletal, &mut p, u);
        self.clear_floor(skeletal, &mut p, u);
        self.flat_foot(skeletal, &mut p, u);
        for foot in Foot::BOTH {
            flat_ball(skeletal, &mut p, foot, self.sole_weight(foot, u));
        }
        self.pivot_heel(skeletal, &mut p, released);
        for foot in [Foot::Left, Foot::Right] {
            let (tip, floor) = self.toe_tips[foot.index()];
            lift_toe_fk(legs, &mut p.fk, foot, tip, floor);
            above_floor(skeletal, &mut p, foot);
            self.pin_sole(skeletal, &mut p, foot, u);
            follow_foot_fk(legs, &mut p.fk, foot);
        }
        p.into_posed()
    }

    /// [`Step::posed_from`] for legs that are their own feet (no knee, no
    /// foot joint; [`rigid`]): the pose placed, then stood on its feet
    /// ([`rigid::stand`]): the stance foot on its footprint, and the other
    /// on its own until its lift-off (both feet on the floor in double
    /// support), then in the air: up, across from footprint to footprint
    /// (bowed to pass under its hip, within [`SWING_REACH`]) and down, its
    /// lowest sole point [`RIGID_CLEARANCE`] over the floor in mid-swing
    /// (coming in over [`CLEARANCE_EASE`] of the swing and going out over
    /// its last [`RIGID_LAND`], once over its footprint). Each foot keeps
    /// its footprint's yaw as the body turns over it ([`capped`]), the
    /// swing foot turning from one to the next in the air. Continuous: at
    /// the landing both feet are on their footprints, as at the next
    /// step's start. O(joints + bisection steps · leg depth).
    fn posed_rigid(&self, skeletal: &Skeletal, raw: Raw, u: f64) -> Posed {
        let legs = &skeletal.legs;
        let mut p = self.place(skeletal, raw.pose, u);
        let lift = self.lift.min(0.95);
        let [from_yaw, stance_yaw, to_yaw] = self.footprint_yaws;
        let swing = self.stance.other();
        let hip = p.fk.position(legs.leg(swing).ankle);
        let (target, height, foot_yaw, air) = if u <= lift {
            (self.swing_from, 0.0, from_yaw, 0.0)
        } else {
            // Up first, then across from footprint to footprint, then down
            // onto the footprint: a foot that came down while still moving
            // slid its heel along the floor (its last 5 cm in 15 ms).
            let swing = 1.0 - lift;
            let (up, down) = (CLEARANCE_EASE * swing, RIGID_LAND * swing);
            let w = smoothstep((u - lift) / up) * (1.0 - smoothstep((u - (1.0 - down)) / down));
            let s = smoothstep((u - lift - 0.5 * up) / (swing - 0.5 * up - down));
            // Along the line from footprint to footprint, bowed (a
            // quadratic Bézier curve) to pass under the swing hip
            // sideways: the straight line of a sharp turn's step passes
            // far beside it.
            let (from, to) = (self.swing_from, self.swing_to);
            let hip_w = p.world(hip);
            let line = to - from;
            let aside = if line.norm() > 1e-9 {
                let along = line.normalize();
                let d = V3::new(hip_w.x - from.x, 0.0, hip_w.z - from.z);
                d - along * along.dot(&d)
            } else {
                V3::zeros()
            };
            let target = from + line * s + aside * (2.0 * s * (1.0 - s));
            (target, RIGID_CLEARANCE * w, from_yaw + wrap_angle_exact(to_yaw - from_yaw) * s, w)
        };
        let model = |p: &Placing<'_>, w: V3| {
            let m = p.turn.inverse() * (w - p.offset);
            [m.x, m.z]
        };
        // A foot is held at its footprint's yaw as the body turns over it
        // up to 40°, then less and less ([`capped`], as a two-bone leg's
        // planted foot is): a leg without a knee turned 100° from its hips
        // (a 140° corner) rocked on its foot's side, and its swing popped.
        let held = |foot_yaw: f64| capped(wrap_angle_exact(foot_yaw - p.yaw));
        let support =
            FootGoal { foot: self.stance, at: model(&p, self.stance_at), yaw: held(stance_yaw), height: 0.0, pin: 1.0 };
        // In the air the foot stays well within the leg's reach (as it
        // leaves and reaches the floor, by its clearance's weight): the
        // straight line between two footprints of a sharp turn passes
        // farther from the hip than the leg reaches, and a leg at full
        // stretch sideways holds its foot at hip height.
        let mut at = model(&p, target);
        if air > 0.0 {
            let reach = SWING_REACH * p.fk.skeleton().joints[legs.leg(swing).contact].rest.translation.norm();
            let d = [at[0] - hip.x, at[1] - hip.z];
            let n = d[0].hypot(d[1]);
            if n > reach {
                let k = 1.0 - air * (n - reach) / n;
                at = [hip.x + d[0] * k, hip.z + d[1] * k];
            }
        }
        let other = FootGoal {
            foot: swing,
            at,
            yaw: held(foot_yaw),
            height,
            // Rocking on its lowest point in the air too, the foot comes
            // down with that point already where it lands, as at its
            // lift-off it left with it there: no weight to fade in or out.
            pin: 1.0,
        };
        // Beyond the body's roll, the trailing foot misses its height (a
        // toe-off), never the landing one: the swing foot up to its
        // highest, the stance foot as the swing foot comes down onto its
        // footprint (where the two swap roles).
        let yielding = if air > 0.0 && u > 0.5 * (1.0 + lift) { 1.0 - smoothstep(height / 0.01) } else { 0.0 };
        rigid::stand(&mut p.fk, legs, &skeletal.soles, (&support, &other), yielding);
        p.into_posed()
    }

    /// Holds each planted foot at the yaw it was planted with, turning it
    /// about its contact joint: a walker turning over a step turns on its
    /// stance foot without the foot turning on the floor, so that no heel
    /// skids round the ball (the turn of the body is taken up at the hip);
    /// the foot takes up the turn in the air, the swing foot's hold fading
    /// out from its lift-off to its landing. Continuous: the hold is 0 at a
    /// plant and at the landing, and what the stance foot holds at the
    /// step's end the trailing foot holds at the next step's start.
    /// O(leg depth).
    fn hold_yaw(&self, skeletal: &Skeletal, p: &mut Placing<'_>, u: f64) -> [f64; 2] {
        let mut released = [0.0; 2];
        let (gait, legs) = (&skeletal.gait, &skeletal.legs);
        let stance = legs.leg(self.stance);
        let now = p.yaw + stance_yaw(&mut p.fk, stance);
        // The last step gives up its hold by its end, which meets a
        // boundary's (or the loop's own start's) pose that holds nothing.
        let end = if self.end_delta.is_some() { 1.0 - smoothstep((u - 0.5) / 0.5) } else { 1.0 };
        // Unwrapped: what the body has turned since the plant (the step's
        // turn so far), corrected by the little the measured yaw differs.
        let expected = -self.yaw_turn * smoothstep(u);
        let hold = expected + wrap_angle_exact(self.yaw0 + self.stance_yaw0 - now - expected);
        turn_foot_fk(legs, &mut p.fk, self.stance, capped(hold) * end, gait.knee_hinges[self.stance.index()]);
        if self.end_delta.is_none() {
            released[self.stance.index()] = (hold - capped(hold)).abs();
        }
        if let Some((held0, now0)) = self.trail_yaw {
            let swing = self.stance.other();
            let lift = self.lift.min(0.95);
            let w = if u <= lift { 1.0 } else { 1.0 - smoothstep((u - lift) / (1.0 - lift)) };
            if w > 0.0 {
                let now = p.yaw + stance_yaw(&mut p.fk, legs.leg(swing));
                let hold = held0 + wrap_angle_exact(now0 - now);
                turn_foot_fk(legs, &mut p.fk, swing, capped(hold) * w, gait.knee_hinges[swing.index()]);
                released[swing.index()] = (hold - capped(hold)).abs() * w;
            }
        }
        released
    }

    /// Brings the stance foot's heel down towards the floor in mid-stance,
    /// pitching the foot about its contact joint, where the walk holds it
    /// over the floor (a walk retargeted onto a longer foot, or a clip
    /// walking on its toes): a walker's foot is flat from the loading
    /// response to the heel rise (Perry & Burnfield 2010, ch. 2), and a
    /// heel hovering there slides in on the next landing. The weight comes
    /// in over the first 20 % of the step and goes out from its middle to
    /// 80 %, before the heel rises; the pitch is cut to what keeps the
    /// ankle within the leg's reach (a straight leg cannot lower it).
    /// A heel pushed under the floor is raised onto it the same way, from
    /// 5 % of the step to 70 % (faded out by its end): the transition offset
    /// from the previous step ([`Step::holds`]) turns hip, knee and ankle,
    /// and the foot kept at the orientation it gives would push the built-in
    /// walker's heel 4.8 cm into the floor in the loading response.
    /// Continuous (the heel is above the floor at the landing). O(leg
    /// depth).
    fn flat_foot(&self, skeletal: &Skeletal, p: &mut Placing<'_>, u: f64) {
        let w = flat_stance(u);
        // A heel under the floor is raised from just after the landing
        // (where it is above the floor) until the heel rise.
        let w_sunk = smoothstep(u / 0.05) * (1.0 - smoothstep((u - 0.7) / 0.3));
        pitch_heel(skeletal, p, self.stance, 0.0, (w, w_sunk));
    }

    /// Lifts the heel of a planted foot that turns on the floor: beyond
    /// what [`Step::hold_yaw`] holds (`released`, per foot `[rad]`, the
    /// foot's own turn on the floor), a walker pivots on the ball of the
    /// foot with the heel up (issue of heels skidding round the ball in
    /// sharp turns: the park's 140° corners swept a heel 10 cm along the
    /// floor). The heel is raised towards [`PIVOT_HEEL_RISE`] over its
    /// height at rest, the whole way once the released turn is
    /// [`PIVOT_ONSET`], by pitching the foot about its contact joint (never
    /// lowered). Continuous: the released turn is. O(leg depth).
    fn pivot_heel(&self, skeletal: &Skeletal, p: &mut Placing<'_>, released: [f64; 2]) {
        for foot in Foot::BOTH {
            let r = released[foot.index()];
            if r > 0.0 {
                pitch_heel(skeletal, p, foot, PIVOT_HEEL_RISE, (0.0, smoothstep(r / PIVOT_ONSET)));
            }
        }
    }

    /// Keeps the point of `foot`'s sole it rolls on where the foot laid
    /// flat on its footprint would have it: a foot held by its contact
    /// joint rolls about that joint, and where its sole touches the floor
    /// elsewhere (the heel as a landing foot comes down flat, the ball as
    /// the heel rises on a foot without a toe joint) that point slides.
    /// The pivot is the heel where it is the lower of heel and ball, the
    /// ball where that is, blended over [`PIVOT_BLEND`]; the foot is moved
    /// horizontally by what puts the pivot where the foot's yaw alone
    /// (its pitch and roll undone about the contact joint) would put it.
    /// Weighted by the foot's share of the ground: the stance foot fully,
    /// the trailing foot up to its lift-off then fading over
    /// [`SWING_EASE`] of the swing, the swing foot fading in over its
    /// landing ([`SWING_LAND`]); continuous. Nothing for a leg that is its
    /// own foot (no knee, no foot joint). O(leg depth).
    fn pin_sole(&self, skeletal: &Skeletal, p: &mut Placing<'_>, foot: Foot, u: f64) {
        let w = self.ground_weight(foot, u);
        if w <= 0.0 {
            return;
        }
        let legs = &skeletal.legs;
        let leg = legs.leg(foot);
        if leg.is_own_foot() {
            // A leg that is its own foot (no knee, no foot joint) swings
            // as a whole: shifting its end would shift the leg.
            return;
        }
        let soles = &skeletal.soles;
        let c = p.fk.position(leg.contact);
        let c_rest = soles.contact_rest[foot.index()];
        let q = p.fk.rotation(leg.ankle) * leg.rest_ankle_inverse;
        let flat = yaw(yaw_of_rotation(&q));
        let at = |fk: &mut PoseFk<'_>, k: usize| {
            let point = &soles.points[3 * foot.index() + k];
            let now = point.at(&fk.global(point.joint));
            (now, c + flat * (point.rest - c_rest))
        };
        let (heel, heel_flat) = at(&mut p.fk, 0);
        let (ball, ball_flat) = at(&mut p.fk, 1);
        let on_ball = smoothstep(0.5 + ((heel.y - heel_flat.y) - (ball.y - ball_flat.y)) / (2.0 * PIVOT_BLEND));
        let d = (heel_flat - heel) * (1.0 - on_ball) + (ball_flat - ball) * on_ball;
        let d = V3::new(d.x, 0.0, d.z) * w;
        if d.norm() > 1e-9 {
            move_foot_fk(legs, &mut p.fk, foot, d, skeletal.gait.knee_hinges[foot.index()]);
        }
    }

    /// Raises the swing foot in the air so that its sole (heel, ball and
    /// toe tip, [`crate::character::contact::Soles`]) clears the floor by
    /// [`SWING_CLEARANCE`]: a clip's swing foot played on another body, or
    /// lowered with it, would pass through the floor or scrape its toes
    /// along it. The raise comes in after the lift-off ([`CLEARANCE_EASE`]
    /// of the swing) and goes out over the last [`LAND_TAIL`], where the
    /// foot is over its footprint, so the pose is continuous at both and
    /// the foot comes down onto its footprint, not along the floor.
    /// O(leg depth).
    fn clear_floor(&self, skeletal: &Skeletal, p: &mut Placing<'_>, u: f64) {
        let lift = self.lift.min(0.95);
        if u <= lift || u >= 1.0 {
            return;
        }
        let span = CLEARANCE_EASE * (1.0 - lift);
        let tail = LAND_TAIL * (1.0 - lift);
        let w = smoothstep((u - lift) / span) * (1.0 - smoothstep((u - (1.0 - tail)) / tail));
        if w <= 0.0 {
            return;
        }
        let swing = self.stance.other();
        let points = &skeletal.soles.points[3 * swing.index()..3 * swing.index() + 3];
        let low = points.iter().map(|c| c.at(&p.fk.global(c.joint)).y - c.rest.y).fold(f64::INFINITY, f64::min);
        let raise = w * (SWING_CLEARANCE * w - low).max(0.0);
        if raise > 0.0 {
            let hinge = skeletal.gait.knee_hinges[swing.index()];
            move_foot_fk(&skeletal.legs, &mut p.fk, swing, V3::new(0.0, raise, 0.0), hinge);
        }
    }

    /// Where the swing foot goes at phase `u` after its lift-off: where the
    /// pose `p` carries it, plus the offsets that put it on its footprints
    /// at lift-off and landing, `free` being where `p`'s kind of pose
    /// carried it then.
    fn swing_target(&self, legs: &Legs, p: &mut Placing<'_>, u: f64, (free_lift, free_end): (V3, V3)) -> V3 {
        let lift = self.lift.min(0.95);
        let c = p.fk.position(legs.leg(self.stance.other()).contact);
        let w = p.world(c);
        let s = smoothstep((u - lift) / (1.0 - lift));
        let to = w + (self.swing_from - free_lift) * (1.0 - s) + (self.swing_to - free_end) * s;
        // The foot leaves the floor before it moves along it: its
        // horizontal move from the footprint eases in over the first
        // [`SWING_EASE`] of the swing (a foot held to the lift-off would
        // otherwise set off at the clip's speed there and drag its toes).
        let e = smoothstep((u - lift) / (SWING_EASE * (1.0 - lift)));
        let from = self.swing_from;
        let (x, z) = (from.x + (to.x - from.x) * e, from.z + (to.z - from.z) * e);
        // And it comes onto its footprint before it comes down: over the
        // last [`SWING_LAND`] of the swing its horizontal place is drawn to
        // the footprint, where it is by the last [`LAND_TAIL`] (the landing
        // foot settles vertically).
        let land = if legs.leg(self.stance.other()).bent.is_some() { SWING_LAND } else { SWING_LAND_DETACHED };
        let (span, tail) = (land * (1.0 - lift), LAND_TAIL * (1.0 - lift));
        let l = smoothstep((u - (1.0 - span)) / (span - tail));
        let end = self.swing_to;
        V3::new(x + (end.x - x) * l, to.y, z + (end.z - z) * l)
    }

    /// The raw pose at `u` placed ([`Step::place`]) and its body moved by
    /// [`reach_fix_fk`] so that both feet (the swing foot at its target,
    /// its weight fading out after its lift-off and in before its landing)
    /// are within reach; the move made.
    fn fixed<'s>(&self, skeletal: &'s Skeletal, raw: Raw, u: f64) -> Fixed<'s> {
        let legs = &skeletal.legs;
        let holds = raw.holds;
        let mut p = self.place(skeletal, raw.pose, u);
        let swing = self.stance.other();
        let lift = self.lift.min(0.95);
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
        let hold = |foot: Foot| V3::new(0.0, holds[foot.index()], 0.0);
        let stance_delta = model_delta(legs, &mut p, self.stance, self.stance_at) + hold(self.stance);
        let target = if u <= lift {
            self.swing_from
        } else {
            self.swing_target(legs, &mut p, u, (self.swing_free_lift, self.swing_free_end))
        };
        let swing_delta = model_delta(legs, &mut p, swing, target) + hold(swing);
        let feet = [(self.stance, stance_delta, 1.0), (swing, swing_delta, swing_weight)];
        let fix = reach_fix_fk(legs, &mut p.fk, &feet);
        p.fk.translate(legs.top, fix);
        Fixed { p, fix }
    }
}

/// Raises `foot` by what keeps every point of its sole (heel, ball, toe
/// tip: [`crate::character::contact::Soles`]) on or over the floor: a foot
/// without a toe joint that rolls over its ball at the heel rise would
/// push its toe tip into the floor (RobotExpressive on `figure7`: 4.9 cm),
/// where a rigid foot pivots on its tip. Continuous in the pose (the raise
/// is the lowest point's depth). Nothing for a leg that is its own foot.
/// O(leg depth).
fn above_floor(skeletal: &Skeletal, p: &mut Placing<'_>, foot: Foot) {
    let leg = skeletal.legs.leg(foot);
    if leg.is_own_foot() {
        // A leg that is its own foot (no knee, no foot joint) swings as a
        // whole: shifting its end would shift the leg.
        return;
    }
    let points = &skeletal.soles.points[3 * foot.index()..3 * foot.index() + 3];
    let low = points.iter().map(|c| c.at(&p.fk.global(c.joint)).y).fold(f64::INFINITY, f64::min);
    if low < 0.0 {
        let hinge = skeletal.gait.knee_hinges[foot.index()];
        move_foot_fk(&skeletal.legs, &mut p.fk, foot, V3::new(0.0, -low, 0.0), hinge);
    }
}

/// Weight at phase `u` of a stance foot's flat stance, from the loading
/// response to the heel rise (Perry & Burnfield 2010, ch. 2): in over the
/// first 20 % of the step, out from its middle to 80 %; 0 at both ends.
fn flat_stance(u: f64) -> f64 {
    smoothstep(u / 0.2) * (1.0 - smoothstep((u - 0.5) / 0.3))
}

/// Pitches `foot` toe-down so that its sole is as flat as at rest, its ball
/// coming down relative to its heel by the share `w` of what it is up,
/// while the heel is lower than that: a foot bearing weight flat on the
/// floor, not on its heel with the forefoot up. A walk retargeted onto a
/// foot whose bones slope otherwise than its source's plays the stance
/// with the toes raised (RobotExpressive's ball 4.8 cm up from the plant
/// to the heel rise, KayKit's 2.8 cm), which the holds, on the foot's
/// lowest point, do not see. The foot turns about its contact joint, which
/// stays on its footprint, and is then lowered or raised so that the heel
/// is back at its height; the whole effect fades out as the heel comes up
/// as far as the ball (a heel rise, a foot off the floor), over
/// [`PIVOT_BLEND`]; cut to what keeps the ankle within the leg's reach.
/// Continuous. Nothing for a leg that is its own foot. O(leg depth).
fn flat_ball(skeletal: &Skeletal, p: &mut Placing<'_>, foot: Foot, w: f64) {
    let legs = &skeletal.legs;
    let leg = legs.leg(foot);
    if w <= 0.0 || leg.is_own_foot() {
        return;
    }
    let k = 3 * foot.index();
    let (heel, ball) = (&skeletal.soles.points[k], &skeletal.soles.points[k + 1]);
    let at = |p: &mut Placing<'_>, c: &crate::character::contact::ContactPoint| c.at(&p.fk.global(c.joint));
    let (h, b) = (at(p, heel), at(p, ball));
    let up = b.y - ball.rest.y;
    // Fully while the forefoot is up more than the heel by [`PIVOT_BLEND`]
    // or more, not at all once the heel is up as much (a heel rise, or the
    // whole foot off the floor): continuous.
    let w = w * smoothstep((up - (h.y - heel.rest.y)) / PIVOT_BLEND);
    if up <= 0.0 || w <= 0.0 {
        return;
    }
    let arm = b - h;
    let along = V3::new(arm.x, 0.0, arm.z);
    if along.norm() < 1e-6 {
        return;
    }
    // The pitch that makes the sole as flat as at rest (the ball `up`
    // lower relative to the heel), about the horizontal axis across the
    // foot through the contact joint, which stays on its footprint; then
    // the heel back down to its height.
    let (axis, full) = pitch_lowering(arm, up);
    let c = p.fk.position(leg.contact);
    let mut angle = w * full;
    if let Some((thigh, shin)) = leg.bent {
        let (hip, ankle, reach) = hip_ankle_reach(p, thigh, shin, leg.ankle);
        let q = |a: f64| Quat::from_axis_angle(&axis, a);
        // The ankle turned about the contact, then moved with the heel
        // back to its height.
        let ankle_at = |a: f64| {
            let heel_at = c + q(a) * (h - c);
            c + q(a) * (ankle - c) + V3::new(0.0, h.y - heel_at.y, 0.0)
        };
        let Some(share) = share_within_reach(angle, |a| (ankle_at(a) - hip).norm() <= reach) else { return };
        angle *= share;
    }
    let hinge = skeletal.gait.knee_hinges[foot.index()];
    pitch_foot_fk(legs, &mut p.fk, foot, Quat::from_axis_angle(&axis, angle), hinge);
    let down = h.y - at(p, heel).y;
    if down.abs() > 1e-9 {
        move_foot_fk(legs, &mut p.fk, foot, V3::new(0.0, down, 0.0), hinge);
    }
}

/// Pitches `foot` about its contact joint (the horizontal axis across the
/// foot) so that its heel comes to `want` `[m]` over its height at rest:
/// down by the share `w.0` of the way where it is higher, up by `w.1`
/// where it is lower; cut to what keeps the ankle within the leg's reach.
/// Nothing for a leg without a knee or a foot that is its own contact.
/// O(leg depth).
fn pitch_heel(skeletal: &Skeletal, p: &mut Placing<'_>, foot: Foot, want: f64, (w_down, w_up): (f64, f64)) {
    let leg = skeletal.legs.leg(foot);
    let Some((thigh, shin)) = leg.bent else { return };
    if w_down.max(w_up) <= 0.0 || leg.contact == leg.ankle {
        return;
    }
    let heel = &skeletal.soles.points[3 * foot.index()];
    let c = p.fk.position(leg.contact);
    let at = heel.at(&p.fk.global(heel.joint));
    let (arm, up) = (at - c, at.y - heel.rest.y - want);
    let along = V3::new(arm.x, 0.0, arm.z);
    let w = if up > 0.0 { w_down } else { w_up };
    if up == 0.0 || w <= 0.0 || along.norm() < 1e-6 {
        return;
    }
    // The pitch that lowers the heel by `up` (raises it by `-up`),
    // about the horizontal axis across the foot through the contact.
    let (axis, full) = pitch_lowering(arm, up);
    let (hip, ankle, reach) = hip_ankle_reach(p, thigh, shin, leg.ankle);
    let fits = |a: f64| (c + Quat::from_axis_angle(&axis, a) * (ankle - c) - hip).norm() <= reach;
    let Some(share) = share_within_reach(w * full, fits) else { return };
    let angle = w * full * share;
    let hinge = skeletal.gait.knee_hinges[foot.index()];
    pitch_foot_fk(&skeletal.legs, &mut p.fk, foot, Quat::from_axis_angle(&axis, angle), hinge);
}

/// The pitch of a foot that lowers a point of it at `arm` `[m]` from the
/// pivot by `up` `[m]` (raises it by `-up`): the horizontal axis across
/// the foot (unit) and the angle `[rad]` about it. O(1).
fn pitch_lowering(arm: V3, up: f64) -> (nalgebra::Unit<V3>, f64) {
    let (r, y) = (arm.norm(), arm.y);
    let full = (y / r).clamp(-1.0, 1.0).asin() - ((y - up) / r).clamp(-1.0, 1.0).asin();
    (nalgebra::Unit::new_normalize(V3::y().cross(&V3::new(arm.x, 0.0, arm.z))), full)
}

/// The hip (the thigh joint) and the ankle of a two-bone leg in `p`, and
/// its reach `[m]` (99.9 % of its length, as the IK straightens it).
/// O(leg depth).
fn hip_ankle_reach(p: &mut Placing<'_>, thigh: usize, shin: usize, ankle: usize) -> (V3, V3, f64) {
    let (hip, knee, ankle) = (p.fk.position(thigh), p.fk.position(shin), p.fk.position(ankle));
    (hip, ankle, 0.999 * ((knee - hip).norm() + (ankle - knee).norm()))
}

/// The largest share in `[0, 1]` of a turn by `angle` that `fits` (keeps
/// the ankle within the leg's reach): 1 when the whole turn does, `None`
/// when not even none does, else by bisection (30 halvings).
fn share_within_reach(angle: f64, fits: impl Fn(f64) -> bool) -> Option<f64> {
    if fits(angle) {
        return Some(1.0);
    }
    if !fits(0.0) {
        return None;
    }
    let (mut lo, mut hi) = (0.0, 1.0);
    for _ in 0..30 {
        let mid = 0.5 * (lo + hi);
        if fits(mid * angle) { lo = mid } else { hi = mid }
    }
    Some(lo)
}

/// A step's pose before placement and IK ([`Step::raw_pose`]).
#[derive(Clone)]
struct Raw {
    pose: Pose,
    /// The vertical moves `[m]` of the feet (left, right) that hold them
    /// on the ground ([`Step::holds`]).
    holds: [f64; 2],
}

/// A placed pose with its body moved within reach of its feet
/// ([`Step::fixed`]).
struct Fixed<'s> {
    p: Placing<'s>,
    /// The body's move (model frame) `[m]`.
    fix: V3,
}

/// The horizontal model-frame move of `foot`'s contact in `p` onto
/// `target` (world).
fn model_delta(legs: &Legs, p: &mut Placing<'_>, foot: Foot, target: V3) -> V3 {
    let c = p.fk.position(legs.leg(foot).contact);
    let w = p.world(c);
    yaw(-p.yaw) * V3::new(target.x - w.x, 0.0, target.z - w.z)
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
            held_height: [0.0; 2],
            end_delta: last.then(|| pose_delta(&end_pose, &b1)),
            weights,
            yaw0: 0.0,
            yaw_turn: 0.0,
            stance_yaw0: 0.0,
            trail_yaw: None,
            toe_tips: Foot::BOTH.map(|f| {
                let p = &skeletal.soles.points[3 * f.index() + 2];
                (p.local, p.rest.y)
            }),
            stance_at: to_gltf(a.position),
            swing_from: to_gltf(f[j - 1].position),
            swing_to: to_gltf(b.position),
            footprint_yaws: [&f[j - 1], a, b].map(|x| gltf_yaw(x.heading)),
            swing_free_lift: V3::zeros(),
            swing_free_end: V3::zeros(),
            swing_fixed_lift: V3::zeros(),
            swing_fixed_end: V3::zeros(),
        };
        let leg = skeletal.legs.leg(a.foot);
        // The raw poses at both ends, from the blend's poses made above,
        // and how high the transition offset puts each contact joint at
        // the start over the blend alone.
        let raw0 = step.offset_pose(b0.clone(), 0.0);
        for foot in [Foot::Left, Foot::Right] {
            let c = skeletal.legs.leg(foot).contact;
            step.held_height[foot.index()] = fk::position(sk, &raw0, c).y - fk::position(sk, &b0, c).y;
        }
        let raw1 = step.raw_from(skeletal, b1, 1.0);
        step.stance_yaw0 = stance_yaw(&mut PoseFk::new(sk, raw0), leg);
        let stance_turn = wrap_angle_exact(stance_yaw(&mut PoseFk::new(sk, raw1.pose.clone()), leg) - step.stance_yaw0);
        step.yaw0 = gltf_yaw(a.heading);
        step.yaw_turn = wrap_angle_exact(gltf_yaw(b.heading) - step.yaw0 + stance_turn);
        if let Some(prev) = steps.last() {
            let swing_leg = skeletal.legs.leg(a.foot.other());
            let now0 = step.yaw0 + stance_yaw(&mut PoseFk::new(sk, step.offset_pose(b0.clone(), 0.0)), swing_leg);
            step.trail_yaw = Some((-prev.yaw_turn, now0));
        }
        // Where the swing foot would be without correction.
        let swing_foot = a.foot.other();
        let swing = skeletal.legs.leg(swing_foot);
        let free = |raw: Raw, u: f64| {
            let mut placing = step.place(skeletal, raw.pose, u);
            let c = placing.fk.position(swing.contact);
            placing.world(c)
        };
        let lift = step.lift.min(0.95);
        let (free_lift, free_end) = (free(step.raw_pose(skeletal, lift), lift), free(raw1.clone(), 1.0));
        step.swing_free_lift = free_lift;
        step.swing_free_end = free_end;
        // And with the body moved within reach there (the swing foot's
        // target then its footprint, whatever these give).
        let fixed = |raw: Raw, u: f64| {
            let Fixed { mut p, .. } = step.fixed(skeletal, raw, u);
            let c = p.fk.position(swing.contact);
            p.world(c)
        };
        let fixed_both = (fixed(step.raw_pose(skeletal, lift), lift), fixed(raw1.clone(), 1.0));
        (step.swing_fixed_lift, step.swing_fixed_end) = fixed_both;
        // The next step starts from this one's raw end pose, before its
        // placement and IK: the next step places and corrects it as this
        // one does at its end (the same footprints, the root on the path),
        // so the pose is continuous across the landing. Its corrected pose
        // would have the body's reach fix and the feet's heel roll applied
        // twice.
        prev_end = raw1.pose;
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
                step.posed(skeletal, u)
            }
            None => Posed { pose: sk.rest_pose(), yaw: 0.0, offset: V3::zeros() },
        }
    };
    let (times, posed) = refine_keys(
        character,
        agent,
        &f[..],
        &with_turn_keys(with_plant_keys(sample_times(agent, interval), f), agent),
        &eval,
    );
    let footsteps = f.clone();
    let (anim, mut trace) = output(character, &skeletal.soles, agent, footsteps, times, posed, interval);
    trace.events = event_jumps(character, f, (f[1].t, f[f.len() - 1].t), &eval);
    (anim, trace)
}

/// `times` with a key at every plant and lift-off of `footsteps` inside
/// them: a player then shows each foot on its footprint exactly when it
/// plants, not half-way between two keys that straddle the landing.
fn with_plant_keys(times: Vec<f64>, footsteps: &[crowdpatch_runtime::format::Footstep]) -> Vec<f64> {
    with_key_times(times, footsteps.iter().flat_map(|f| [f.t, f.lift]))
}

/// Synthesises a standing agent: the idle clip (or the rest pose), played a
/// whole number of times per period, at the path's position and heading.
pub fn synthesize_standing(
    skeletal: &Skeletal,
    agent: &BakedAgent,
    period: f64,
    interval: f64,
) -> (AgentAnimation, Trace) {
    let (character, gait) = (&skeletal.character, &skeletal.gait);
    let sk = &character.skeleton;
    let times = sample_times(agent, interval);
    let idle = gait.library.idle.map(|k| &gait.library.clips[k]);
    // A standing agent's path may wander a few centimetres (collision
    // removal nudges it; it stands while it stays within 5 cm): it stands
    // on one spot, its mean, facing its mean heading, so that its feet do
    // not slide with the path.
    let n = agent.keys.len().max(1) as f64;
    let stand_at = agent.keys.iter().fold([0.0, 0.0], |a, k| [a[0] + k.position[0] / n, a[1] + k.position[1] / n]);
    let (sin, cos) = agent.keys.iter().fold((0.0, 0.0), |a, k| (a.0 + k.heading.sin(), a.1 + k.heading.cos()));
    let stand_heading = if sin.hypot(cos) > 1e-9 { sin.atan2(cos) } else { agent.keys[0].heading };
    // The idle clip's hips sway over its feet: the body is put on the
    // spot by the hips' mean over the clip, and held there by its feet:
    // each pose is moved by its feet's midpoint's offset from its mean, so
    // that feet the clip moves together stay put (a clip put in place at
    // its hips, as imported clips are, carries its feet against the hips'
    // sway: VALID's idle slid both feet 2.1 cm).
    let feet_mid = |pose: &[crate::character::Transform]| {
        let p = sk.positions(pose);
        let m = (p[character.foot(Foot::Left).contact] + p[character.foot(Foot::Right).contact]) * 0.5;
        V3::new(m.x, 0.0, m.z)
    };
    let (hips, feet) = match idle {
        Some(clip) if !clip.frames.is_empty() => {
            let n = clip.frames.len() as f64;
            let hips = clip.frames.iter().map(|f| sk.positions(f)[character.hips]).sum::<V3>() / n;
            (hips, clip.frames.iter().map(|f| feet_mid(f)).sum::<V3>() / n)
        }
        _ => {
            let rest = sk.rest_pose();
            (sk.positions(&rest)[character.hips], feet_mid(&rest))
        }
    };
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
            let (p, h) = (stand_at, stand_heading);
            let y = gltf_yaw(h);
            let held = feet_mid(&pose) - feet;
            let r = yaw(y) * V3::new(hips.x + held.x, 0.0, hips.z + held.z);
            let target = to_gltf(p);
            Posed { pose, yaw: y, offset: V3::new(target.x - r.x, 0.0, target.z - r.z) }
        })
        .collect();
    output(character, &skeletal.soles, agent, Vec::new(), times, posed, interval)
}
