//! The built-in character, generated in code: a 1.75 m mannequin of 21
//! joints and tapered boxes, with in-place cyclic walks at several speeds, a
//! walk on the spot, turning walks and an idle clip.
//!
//! Walks follow human norms: step length `l(v) = 0.74 m · (v / 1.33)^0.58`
//! (0.74 m at 1.33 m/s, ≈ 1.8 steps/s; 0.42 m and 1.2 steps/s at 0.5 m/s;
//! 0.94 m and 2.1 steps/s at 2 m/s), a duty factor (stance share of the cycle)
//! from 0.66 at slow speeds to 0.58 at fast ones, pelvis drop, sway and
//! rotation, arm swing against the legs, heel-off and toe-off. Every clip is
//! generated with its feet truly planted in a walking frame (the ball of the
//! planted foot does not move; leg poses by analytic two-bone IK) and then
//! expressed in place, as the analysis expects.

use super::ik::two_bone_ik;
use super::{
    Character, Clip, FootJoints, Joint, Pose, Skeleton, Transform, V3, mirror_map, rotation_of, smoothstep, yaw,
};
use crowdpatch_runtime::skeletal::SkinnedPrimitive;
use nalgebra::Vector3;
use std::f64::consts::{PI, TAU};

/// Sample rate of the generated clips `[Hz]`.
pub const FRAME_RATE: f64 = 60.0;

/// Speeds `[m/s]` of the generated straight walks.
pub const WALK_SPEEDS: [f64; 6] = [0.5, 0.8, 1.1, 1.33, 1.6, 2.0];

/// Turn per step `[rad]` of the generated turning walks (at 1.1 m/s), both ways.
pub const TURN_PER_STEP: f64 = 0.35;

/// Step length `[m]` of a human walking at `speed` `[m/s]`:
/// `0.74 · (speed / 1.33)^0.58`.
pub fn step_length(speed: f64) -> f64 {
    0.74 * (speed.max(0.0) / 1.33).powf(0.58)
}

/// Cadence `[steps/s]` at `speed` `[m/s]`: speed over step length (1.4 on
/// the spot).
pub fn cadence(speed: f64) -> f64 {
    if speed < 1e-6 { 1.4 } else { speed / step_length(speed) }
}

// Proportions (model frame, metres).
const PELVIS_Y: f64 = 0.99;
const HIP_X: f64 = 0.09;
const HIP_DROP: f64 = 0.04;
const THIGH: f64 = 0.45;
const SHIN: f64 = 0.42;
const ANKLE_Y: f64 = PELVIS_Y - HIP_DROP - THIGH - SHIN; // 0.08
const BALL_FWD: f64 = 0.13;
const FOOT_HALF_WIDTH: f64 = 0.095;
const TOE_Y: f64 = 0.02; // height of the toe joint (ball of the foot) when planted
/// From the ball of the foot to the ankle, in the foot's frame.
const BALL_TO_ANKLE: V3 = V3::new(0.0, ANKLE_Y - TOE_Y, -BALL_FWD); // lateral distance of a footprint from the path

/// Joint names, in order.
const NAMES: [&str; 21] = [
    "hips",
    "spine",
    "chest",
    "neck",
    "head",
    "clavicle_l",
    "upper_arm_l",
    "forearm_l",
    "hand_l",
    "clavicle_r",
    "upper_arm_r",
    "forearm_r",
    "hand_r",
    "thigh_l",
    "shin_l",
    "foot_l",
    "toe_l",
    "thigh_r",
    "shin_r",
    "foot_r",
    "toe_r",
];

mod j {
    pub const HIPS: usize = 0;
    pub const SPINE: usize = 1;
    pub const CHEST: usize = 2;
    pub const NECK: usize = 3;
    pub const HEAD: usize = 4;
    pub const CLAVICLE: [usize; 2] = [5, 9];
    pub const UPPER_ARM: [usize; 2] = [6, 10];
    pub const FOREARM: [usize; 2] = [7, 11];
    pub const HAND: [usize; 2] = [8, 12];
    pub const THIGH: [usize; 2] = [13, 17];
    pub const SHIN: [usize; 2] = [14, 18];
    pub const FOOT: [usize; 2] = [15, 19];
    pub const TOE: [usize; 2] = [16, 20];
}

fn skeleton() -> Skeleton {
    let mut joints = Vec::new();
    let mut add = |name: &str, parent: Option<usize>, t: [f64; 3]| {
        joints.push(Joint {
            name: name.to_owned(),
            parent,
            rest: Transform::from_translation(V3::new(t[0], t[1], t[2])),
        });
    };
    add(NAMES[0], None, [0.0, PELVIS_Y, 0.0]);
    add(NAMES[1], Some(j::HIPS), [0.0, 0.09, 0.0]);
    add(NAMES[2], Some(j::SPINE), [0.0, 0.17, 0.0]);
    add(NAMES[3], Some(j::CHEST), [0.0, 0.22, 0.0]);
    add(NAMES[4], Some(j::NECK), [0.0, 0.09, 0.0]);
    for (k, s) in [1.0, -1.0].into_iter().enumerate() {
        let base = j::CLAVICLE[k];
        add(NAMES[base], Some(j::CHEST), [0.03 * s, 0.17, 0.0]);
        add(NAMES[base + 1], Some(base), [0.16 * s, 0.0, 0.0]);
        add(NAMES[base + 2], Some(base + 1), [0.0, -0.29, 0.0]);
        add(NAMES[base + 3], Some(base + 2), [0.0, -0.26, 0.0]);
    }
    for (k, s) in [1.0, -1.0].into_iter().enumerate() {
        let base = j::THIGH[k];
        add(NAMES[base], Some(j::HIPS), [HIP_X * s, -HIP_DROP, 0.0]);
        add(NAMES[base + 1], Some(base), [0.0, -THIGH, 0.0]);
        add(NAMES[base + 2], Some(base + 1), [0.0, -SHIN, 0.0]);
        add(NAMES[base + 3], Some(base + 2), [0.0, -(ANKLE_Y - TOE_Y), BALL_FWD]);
    }
    Skeleton { joints }
}

/// The built-in character with all its clips.
pub fn character() -> Character {
    let skeleton = skeleton();
    let skeleton_for_map = skeleton.clone();
    let mirror = mirror_map(&skeleton);
    let primitives = mesh(&skeleton);
    let mut clips = Vec::new();
    clips.push(walk(&skeleton, 0.0, 0.0, "walk on the spot"));
    for v in WALK_SPEEDS {
        clips.push(walk(&skeleton, v, 0.0, &format!("walk {v:.2} m/s")));
    }
    clips.push(walk(&skeleton, 1.1, TURN_PER_STEP, "turn left 1.10 m/s"));
    clips.push(walk(&skeleton, 1.1, -TURN_PER_STEP, "turn right 1.10 m/s"));
    let idle = clips.len();
    clips.push(idle_clip(&skeleton));
    Character {
        name: "builtin".into(),
        skeleton,
        primitives,
        feet: [
            FootJoints { ankle: j::FOOT[0], contact: j::TOE[0] },
            FootJoints { ankle: j::FOOT[1], contact: j::TOE[1] },
        ],
        hips: j::HIPS,
        mirror,
        clips,
        idle: Some(idle),
        height: 1.75,
        humanoid: super::humanoid_of(&skeleton_for_map),
        notes: Vec::new(),
    }
}

/// Sets joint `joint`'s local rotation so that its global rotation is `global`.
fn set_global_rotation(sk: &Skeleton, pose: &mut Pose, joint: usize, global: super::Quat) {
    let g = sk.globals(pose);
    let parent = sk.joints[joint].parent.map_or_else(super::Quat::identity, |p| rotation_of(&g[p]));
    pose[joint].rotation = parent.inverse() * global;
}

fn min_jerk(x: f64) -> f64 {
    let x = x.clamp(0.0, 1.0);
    x * x * x * (10.0 - 15.0 * x + 6.0 * x * x)
}

/// The walking frame: where the character's root is and which way it heads
/// at time `t` of a walk at `v` `[m/s]` turning `omega` `[rad/s]`.
fn root_at(t: f64, v: f64, omega: f64) -> (V3, f64) {
    if omega.abs() < 1e-9 {
        (V3::new(0.0, 0.0, v * t), 0.0)
    } else {
        let r = v / omega;
        let a = omega * t;
        (V3::new(r * (1.0 - a.cos()), 0.0, r * a.sin()), a)
    }
}

/// One foot's motion in the walking frame: ball (contact) position, ankle
/// position, foot yaw and heel pitch at time `t`.
struct FootTrack {
    /// Plant times (heel strikes) of this foot, one per cycle, and the next.
    plant: f64,
    cycle: f64,
    duty: f64,
    side: f64,
    v: f64,
    omega: f64,
    lift_height: f64,
}

impl FootTrack {
    /// Footprint (ankle ground point and yaw) of the plant at `t_p`: beside
    /// the root at mid-stance.
    fn footprint(&self, t_p: f64) -> (V3, f64) {
        let (r, h) = root_at(t_p + self.cycle / 4.0, self.v, self.omega);
        let lateral = yaw(h) * V3::new(self.side * FOOT_HALF_WIDTH, 0.0, 0.0);
        (r + lateral, h)
    }

    /// (ball, yaw, pitch, planted, phase in stance/swing) at `t` for a heel
    /// pitch needed to reach, `pitch_needed` (applied in stance).
    fn at(&self, t: f64) -> (V3, f64, bool, f64) {
        let d = self.cycle;
        let k = ((t - self.plant) / d).floor();
        let t_p = self.plant + k * d;
        let s = (t - t_p) / d; // in [0, 1)
        let (a0, y0) = self.footprint(t_p);
        let ball0 = a0 + yaw(y0) * V3::new(0.0, TOE_Y, BALL_FWD);
        if s <= self.duty {
            (ball0, y0, true, s / self.duty)
        } else {
            let (a1, y1) = self.footprint(t_p + d);
            let ball1 = a1 + yaw(y1) * V3::new(0.0, TOE_Y, BALL_FWD);
            let u = (s - self.duty) / (1.0 - self.duty);
            let m = min_jerk(u);
            let mut b = ball0 + (ball1 - ball0) * m;
            b.y = TOE_Y + self.lift_height * (PI * u).sin().powf(1.2);
            (b, y0 + super::wrap(y1 - y0) * m, false, u)
        }
    }
}

/// The parameters of one generated walk.
struct WalkGait {
    v: f64,
    omega: f64,
    cycle: f64,
    frames_n: usize,
    dt: f64,
    feet: [FootTrack; 2],
    fast: f64,
    pelvis_mid: f64,
    drop: f64,
    sway: f64,
    pelvis_yaw: f64,
    lean: f64,
    arm_swing: f64,
    /// Longest hip-to-ankle distance `[m]`.
    reach: f64,
}

impl WalkGait {
    /// The gait of a walk at `v` `[m/s]` turning `turn` `[rad]` per step:
    /// cadence and duty factor from the speed, pelvis drop, sway, yaw and
    /// lean, arm swing.
    fn new(v: f64, turn: f64) -> WalkGait {
        let f = cadence(v);
        let step_t = 1.0 / f;
        let cycle = 2.0 * step_t;
        let omega = turn / step_t;
        let fast = (v / 1.33).clamp(0.0, 1.6);
        let duty = (0.66 - 0.05 * fast).clamp(0.56, 0.7);
        let frames_n = (cycle * FRAME_RATE).round().max(8.0) as usize;
        let lift_height = 0.05 + 0.03 * fast;
        WalkGait {
            v,
            omega,
            cycle,
            frames_n,
            dt: cycle / frames_n as f64,
            feet: [
                FootTrack { plant: 0.0, cycle, duty, side: 1.0, v, omega, lift_height },
                FootTrack { plant: cycle / 2.0, cycle, duty, side: -1.0, v, omega, lift_height },
            ],
            fast,
            pelvis_mid: PELVIS_Y - 0.015 - 0.012 * fast,
            drop: 0.012 + 0.02 * fast,
            sway: 0.025 - 0.008 * fast,
            pelvis_yaw: 0.03 + 0.05 * fast,
            lean: 0.03 + 0.04 * fast,
            arm_swing: 0.08 + 0.28 * fast,
            reach: (THIGH + SHIN) * 0.985,
        }
    }

    /// The upper body at time `t` (pelvis, spine, arms; legs at rest bend),
    /// in place relative to the walking frame, with that frame's root and
    /// heading.
    fn body(&self, sk: &Skeleton, t: f64) -> (Pose, V3, f64) {
        let ph = TAU * t / self.cycle;
        let (root, heading) = root_at(t, self.v, self.omega);
        let mut pose = sk.rest_pose();
        let up = self.pelvis_mid - self.drop * (1.0 + (2.0 * ph).cos()) / 2.0;
        let local_pelvis = V3::new(self.sway * ph.sin(), 0.0, 0.0);
        let pelvis_rot = yaw(heading) * yaw(-self.pelvis_yaw * ph.cos()) * rx(self.lean * 0.5);
        let pelvis_pos = root + yaw(heading) * local_pelvis + V3::new(0.0, up, 0.0);
        // In place: express everything relative to the walking frame.
        let back = yaw(-heading);
        pose[j::HIPS].translation = back * (pelvis_pos - root);
        pose[j::HIPS].rotation = back * pelvis_rot;
        pose[j::SPINE].rotation = yaw(0.6 * self.pelvis_yaw * ph.cos()) * rx(self.lean * 0.3);
        pose[j::CHEST].rotation = yaw(0.8 * self.pelvis_yaw * ph.cos()) * rx(self.lean * 0.2);
        pose[j::NECK].rotation = yaw(-0.4 * self.pelvis_yaw * ph.cos()) * rx(-self.lean * 0.5);
        pose[j::HEAD].rotation = rx(-self.lean * 0.4);
        let fast = self.fast;
        for (k, s) in [1.0, -1.0].into_iter().enumerate() {
            // Arms swing against the legs: the left arm is forward when the
            // right foot plants (t = cycle / 2).
            let swing = s * self.arm_swing * ph.cos();
            pose[j::UPPER_ARM[k]].rotation = rz(s * 0.1) * rx(swing);
            pose[j::FOREARM[k]].rotation = rx(-(0.2 + 0.25 * fast + 0.2 * fast * (-swing * s).max(0.0)));
            pose[j::HAND[k]].rotation = rx(-0.1);
            pose[j::THIGH[k]].rotation = rx(-0.25);
            pose[j::SHIN[k]].rotation = rx(0.5);
        }
        (pose, root, heading)
    }

    /// The heel pitch `[rad]` a planted foot (ball at `ball`, yaw `fyaw`,
    /// model frame) at swing phase `phase` needs to be reached from the hip
    /// at `hip`: its rolling heel-off, raised up to 0.6 rad while out of
    /// reach; and whether it is reached then.
    fn heel_pitch(&self, hip: V3, phase: f64, ball: V3, fyaw: f64) -> (f64, bool) {
        let mut p = 0.45 * smoothstep((phase - 0.75) / 0.25);
        while p < 0.6 && (ball + yaw(fyaw) * rx(p) * BALL_TO_ANKLE - hip).norm() > self.reach {
            p += 0.005;
        }
        (p, (ball + yaw(fyaw) * rx(p) * BALL_TO_ANKLE - hip).norm() <= self.reach)
    }

    /// The heel pitches of the planted feet at time `t` for `pose`.
    fn pitches(&self, sk: &Skeleton, pose: &Pose, t: f64, root: V3, heading: f64, row: &mut [f64; 2]) -> bool {
        let g = sk.globals(pose);
        let back = yaw(-heading);
        let mut ok = true;
        for (k, foot) in self.feet.iter().enumerate() {
            let (ball_w, foot_yaw_w, planted, phase) = foot.at(t);
            if planted {
                let hip = super::position_of(&g[j::THIGH[k]]);
                let (p, reached) = self.heel_pitch(hip, phase, back * (ball_w - root), foot_yaw_w - heading);
                row[k] = p;
                ok &= reached;
            }
        }
        ok
    }
}

/// A cyclic window maximum and cos²-weighted mean of `drops` (a fifth of the
/// cycle wide), never less than the drop itself nor more than the window's
/// largest.
fn smooth_drops(drops: &[f64]) -> Vec<f64> {
    let frames_n = drops.len();
    let half = frames_n / 10;
    (0..frames_n)
        .map(|i| {
            let w = |k: isize| drops[(i as isize + k).rem_euclid(frames_n as isize) as usize];
            let max = (-(half as isize)..=half as isize).map(w).fold(0.0, f64::max);
            let mean = (-(half as isize)..=half as isize).map(|k| {
                let x = (k as f64 / (half.max(1) as f64)) * std::f64::consts::FRAC_PI_2;
                x.cos().powi(2) * (-(half as isize)..=half as isize).map(|m| w(k + m)).fold(0.0, f64::max)
            });
            let norm: f64 = (-(half as isize)..=half as isize)
                .map(|k| ((k as f64 / (half.max(1) as f64)) * std::f64::consts::FRAC_PI_2).cos().powi(2))
                .sum();
            (mean.sum::<f64>() / norm).max(w(0)).min(max)
        })
        .collect()
}

/// Generates an in-place cyclic walk at `v` `[m/s]` turning `turn` `[rad]`
/// per step (positive: to the left): the upper body and the pelvis lowered
/// until every planted foot is reached (pass 1, the drop smoothed round the
/// cycle), then the legs by two-bone IK onto the foot tracks with a rolling
/// heel (pass 2). O(frames · joints).
fn walk(sk: &Skeleton, v: f64, turn: f64, name: &str) -> Clip {
    let gait = WalkGait::new(v, turn);
    let (frames_n, dt) = (gait.frames_n, gait.dt);
    // Pass 1: body without legs, and the heel pitch each planted foot needs.
    let mut bodies = Vec::with_capacity(frames_n);
    let mut drops: Vec<f64> = Vec::with_capacity(frames_n);
    let mut pitches = vec![[0.0f64; 2]; frames_n];
    for (i, pitch_row) in pitches.iter_mut().enumerate() {
        let t = i as f64 * dt;
        let (mut pose, root, heading) = gait.body(sk, t);
        // Lower the pelvis until every planted foot can be reached with at
        // most 0.6 rad of heel-off.
        let mut extra = 0.0;
        while !gait.pitches(sk, &pose, t, root, heading, pitch_row) && extra <= 0.25 {
            extra += 0.002;
            pose[j::HIPS].translation.y -= 0.002;
        }
        drops.push(extra);
        bodies.push((pose, root, heading));
    }
    // The extra pelvis drop, smoothed round the cycle, then the heel
    // pitches again.
    let smooth = smooth_drops(&drops);
    for (i, (pose, root, heading)) in bodies.iter_mut().enumerate() {
        pose[j::HIPS].translation.y += drops[i] - smooth[i];
        gait.pitches(sk, pose, i as f64 * dt, *root, *heading, &mut pitches[i]);
    }
    let feet = &gait.feet;
    // Pitch at toe-off of each foot: the last planted frame's.
    let lift_pitch: Vec<f64> = (0..2)
        .map(|k| {
            (0..frames_n)
                .filter(|&i| {
                    let t = i as f64 * dt;
                    feet[k].at(t).2 && !feet[k].at(t + dt).2
                })
                .map(|i| pitches[i][k])
                .next()
                .unwrap_or(0.45)
        })
        .collect();
    // Pass 2: legs by IK onto the foot tracks.
    let mut frames = Vec::with_capacity(frames_n);
    for (i, (mut pose, root, heading)) in bodies.into_iter().enumerate() {
        let t = i as f64 * dt;
        let back = yaw(-heading);
        for (k, foot) in feet.iter().enumerate() {
            let (ball_w, foot_yaw_w, planted, phase) = foot.at(t);
            let ball = back * (ball_w - root);
            let fyaw = foot_yaw_w - heading;
            let pitch = if planted {
                pitches[i][k]
            } else {
                lift_pitch[k] * (1.0 - smoothstep(phase / 0.45)) - 0.15 * (PI * phase).sin().powi(2)
            };
            let ankle = ball + yaw(fyaw) * rx(pitch) * BALL_TO_ANKLE;
            two_bone_ik(sk, &mut pose, j::THIGH[k], j::SHIN[k], j::FOOT[k], ankle, None);
            set_global_rotation(sk, &mut pose, j::FOOT[k], yaw(fyaw) * rx(pitch));
            // The toes stay flat on the ground while the heel rises.
            let toe_pitch = if planted { 0.0 } else { (pitch * 0.3).min(0.0) };
            set_global_rotation(sk, &mut pose, j::TOE[k], yaw(fyaw) * rx(toe_pitch));
        }
        frames.push(pose);
    }
    Clip { name: name.to_owned(), frame_interval: dt, frames, cyclic: true }
}

fn rx(a: f64) -> super::Quat {
    super::Quat::from_axis_angle(&Vector3::x_axis(), a)
}

fn rz(a: f64) -> super::Quat {
    super::Quat::from_axis_angle(&Vector3::z_axis(), a)
}

/// A 4 s idle: standing, breathing, a slight sway; feet flat, side by side.
fn idle_clip(sk: &Skeleton) -> Clip {
    let cycle = 4.0;
    let n = (cycle * FRAME_RATE / 2.0) as usize;
    let dt = cycle / n as f64;
    let mut frames = Vec::with_capacity(n);
    for i in 0..n {
        let ph = TAU * i as f64 * dt / cycle;
        let mut pose = sk.rest_pose();
        pose[j::HIPS].translation = V3::new(0.012 * ph.sin(), PELVIS_Y - 0.01 - 0.003 * (2.0 * ph).cos(), 0.0);
        pose[j::CHEST].rotation = rx(0.015 * (2.0 * ph).sin());
        pose[j::HEAD].rotation = yaw(0.05 * ph.sin());
        for (k, s) in [1.0, -1.0].into_iter().enumerate() {
            pose[j::UPPER_ARM[k]].rotation = rz(s * 0.08) * rx(0.02 * (2.0 * ph).sin());
            pose[j::FOREARM[k]].rotation = rx(-0.15);
            pose[j::THIGH[k]].rotation = rx(-0.05);
            pose[j::SHIN[k]].rotation = rx(0.1);
            let ankle = V3::new(s * 0.1, ANKLE_Y, -0.01);
            two_bone_ik(sk, &mut pose, j::THIGH[k], j::SHIN[k], j::FOOT[k], ankle, None);
            set_global_rotation(sk, &mut pose, j::FOOT[k], yaw(s * 0.08));
            set_global_rotation(sk, &mut pose, j::TOE[k], yaw(s * 0.08));
        }
        frames.push(pose);
    }
    Clip { name: "idle".into(), frame_interval: dt, frames, cyclic: true }
}

/// A box from `y0` to `y1` (model frame, along the bone), with half-widths
/// `(wx0, wz0)` at `y0` and `(wx1, wz1)` at `y1`, centred on `(cx, cz)`.
struct Segment {
    joint: usize,
    centre: [f64; 2],
    y: [f64; 2],
    half: [[f64; 2]; 2],
    z_shift: f64,
}

fn mesh(sk: &Skeleton) -> Vec<SkinnedPrimitive> {
    let g = sk.globals(&sk.rest_pose());
    let at = |k: usize| super::position_of(&g[k]);
    let mut clothes = Vec::new();
    let mut skin = Vec::new();
    let mut shoes = Vec::new();
    let seg = |joint: usize, top: V3, bottom_y: f64, half0: [f64; 2], half1: [f64; 2]| Segment {
        joint,
        centre: [top.x, top.z],
        y: [bottom_y, top.y],
        half: [half0, half1],
        z_shift: 0.0,
    };
    let pelvis = at(j::HIPS);
    clothes.push(seg(j::HIPS, pelvis + V3::new(0.0, 0.06, 0.0), pelvis.y - 0.1, [0.15, 0.1], [0.15, 0.095]));
    let spine = at(j::SPINE);
    clothes.push(seg(j::SPINE, spine + V3::new(0.0, 0.17, 0.0), spine.y - 0.04, [0.145, 0.09], [0.16, 0.1]));
    let chest = at(j::CHEST);
    clothes.push(seg(j::CHEST, chest + V3::new(0.0, 0.22, 0.0), chest.y - 0.02, [0.16, 0.1], [0.2, 0.1]));
    let neck = at(j::NECK);
    skin.push(seg(j::NECK, neck + V3::new(0.0, 0.1, 0.0), neck.y - 0.02, [0.045, 0.045], [0.045, 0.045]));
    let head = at(j::HEAD);
    skin.push(seg(j::HEAD, head + V3::new(0.0, 0.19, 0.0), head.y - 0.01, [0.075, 0.095], [0.085, 0.1]));
    // A nose, so that the facing direction shows.
    skin.push(Segment {
        joint: j::HEAD,
        centre: [0.0, 0.1],
        y: [head.y + 0.06, head.y + 0.1],
        half: [[0.015, 0.02], [0.012, 0.012]],
        z_shift: 0.0,
    });
    for k in 0..2 {
        let sh = at(j::UPPER_ARM[k]);
        clothes.push(seg(j::UPPER_ARM[k], sh + V3::new(0.0, 0.04, 0.0), sh.y - 0.29, [0.045, 0.05], [0.055, 0.055]));
        let el = at(j::FOREARM[k]);
        clothes.push(seg(j::FOREARM[k], el, el.y - 0.26, [0.035, 0.035], [0.045, 0.045]));
        let wr = at(j::HAND[k]);
        skin.push(seg(j::HAND[k], wr, wr.y - 0.17, [0.02, 0.04], [0.025, 0.045]));
        let hip = at(j::THIGH[k]);
        clothes.push(seg(j::THIGH[k], hip + V3::new(0.0, 0.05, 0.0), hip.y - THIGH, [0.055, 0.06], [0.08, 0.085]));
        let knee = at(j::SHIN[k]);
        clothes.push(seg(j::SHIN[k], knee + V3::new(0.0, 0.02, 0.0), knee.y - SHIN, [0.04, 0.045], [0.055, 0.06]));
        let ankle = at(j::FOOT[k]);
        shoes.push(Segment {
            joint: j::FOOT[k],
            centre: [ankle.x, ankle.z + 0.04],
            y: [0.0, ankle.y + 0.03],
            half: [[0.048, 0.09], [0.04, 0.07]],
            z_shift: 0.0,
        });
        let ball = at(j::TOE[k]);
        shoes.push(Segment {
            joint: j::TOE[k],
            centre: [ball.x, ball.z + 0.035],
            y: [0.0, 0.045],
            half: [[0.045, 0.04], [0.04, 0.035]],
            z_shift: 0.0,
        });
    }
    vec![
        primitive("clothes", [0.18, 0.30, 0.55, 1.0], &clothes),
        primitive("skin", [0.80, 0.60, 0.48, 1.0], &skin),
        primitive("shoes", [0.12, 0.10, 0.09, 1.0], &shoes),
    ]
}

fn primitive(name: &str, colour: [f32; 4], segments: &[Segment]) -> SkinnedPrimitive {
    let mut p = SkinnedPrimitive { material: name.to_owned(), colour, ..Default::default() };
    for s in segments {
        let corner = |level: usize, sx: f64, sz: f64| {
            let h = s.half[level];
            V3::new(s.centre[0] + sx * h[0], s.y[level], s.centre[1] + s.z_shift + sz * h[1])
        };
        let c = |level, sx, sz| corner(level, sx, sz);
        // Faces as quads (counter-clockwise seen from outside).
        let faces: [[V3; 4]; 6] = [
            [c(0, -1.0, 1.0), c(0, 1.0, 1.0), c(1, 1.0, 1.0), c(1, -1.0, 1.0)], // front +z
            [c(0, 1.0, -1.0), c(0, -1.0, -1.0), c(1, -1.0, -1.0), c(1, 1.0, -1.0)], // back
            [c(0, 1.0, 1.0), c(0, 1.0, -1.0), c(1, 1.0, -1.0), c(1, 1.0, 1.0)], // +x
            [c(0, -1.0, -1.0), c(0, -1.0, 1.0), c(1, -1.0, 1.0), c(1, -1.0, -1.0)], // −x
            [c(1, -1.0, 1.0), c(1, 1.0, 1.0), c(1, 1.0, -1.0), c(1, -1.0, -1.0)], // top
            [c(0, -1.0, -1.0), c(0, 1.0, -1.0), c(0, 1.0, 1.0), c(0, -1.0, 1.0)], // bottom
        ];
        for f in faces {
            let n = (f[1] - f[0]).cross(&(f[2] - f[0])).normalize();
            let base = p.positions.len() as u32;
            for v in f {
                p.positions.push([v.x as f32, v.y as f32, v.z as f32]);
                p.normals.push([n.x as f32, n.y as f32, n.z as f32]);
                p.joints.push([s.joint as u16, 0, 0, 0]);
                p.weights.push([1.0, 0.0, 0.0, 0.0]);
            }
            p.indices.extend([base, base + 1, base + 2, base, base + 2, base + 3]);
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_norms_at_comfort_speed() {
        assert!((step_length(1.33) - 0.74).abs() < 1e-9);
        assert!((cadence(1.33) - 1.797).abs() < 0.01);
        assert!(step_length(0.5) > 0.35 && step_length(0.5) < 0.5);
        assert!(step_length(2.0) > 0.85 && step_length(2.0) < 1.0);
    }

    #[test]
    fn the_character_is_human_sized_and_symmetric() {
        let c = character();
        assert!((15..=25).contains(&c.skeleton.len()));
        let top = c
            .primitives
            .iter()
            .flat_map(|p| p.positions.iter())
            .map(|p| f64::from(p[1]))
            .fold(f64::NEG_INFINITY, f64::max);
        assert!((top - 1.75).abs() < 0.02, "height {top}");
        for (i, &m) in c.mirror.iter().enumerate() {
            assert_eq!(c.mirror[m], i);
        }
        assert_eq!(c.mirror[j::FOOT[0]], j::FOOT[1]);
        // Mirroring the rest pose gives the rest pose.
        let rest = c.skeleton.rest_pose();
        let m = c.mirror_pose(&rest);
        for (a, b) in rest.iter().zip(&m) {
            assert!((a.translation - b.translation).norm() < 1e-9);
            assert!(a.rotation.angle_to(&b.rotation) < 1e-9);
        }
    }
}
