//! Sampling the synthesised motion into joint tracks: key times on a
//! regular grid with the path's ends, keys inserted where glTF LINEAR
//! interpolation would move a planted foot, local transforms relative to
//! the instance node, and the trace of the animation *as played* that the
//! metrics measure.

use crate::character::contact::Soles;
use crate::character::fk;
use crate::character::{Character, Pose, Quat, SlerpArc, Transform, V3, mul4, position_of, yaw};
use crate::footsteps::{path_sample, wrap_angle_exact};
use crowdpatch_runtime::format::{AgentAnimation, BakedAgent, Foot, Footstep, PathKey};
use std::f64::consts::FRAC_PI_2;

/// What the synthesis of one agent gives beside its animation: world
/// positions for the metrics.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Trace {
    /// Sample times `[s]` (unwrapped, within the path's interval).
    pub times: Vec<f64>,
    /// Contact-joint world positions per sample, left then right, patch
    /// frame `[x, y, height]` `[m]`.
    pub feet: Vec<[[f64; 3]; 2]>,
    /// Root (hips) ground position per sample, patch frame `[m]`.
    pub root: Vec<[f64; 2]>,
    /// Every joint's world position per sample (glTF frame), for jump checks.
    pub joints: Vec<Vec<V3>>,
    /// The soles' contact points per sample ([`crate::character::contact::Soles::points`]:
    /// left heel, ball, toe, then right), patch frame `[x, y, height]` `[m]`.
    pub contacts: Vec<[[f64; 3]; 6]>,
    /// The lowest sole vertex per sample, as skinned: its height `[m]`
    /// (infinite for a character without a mesh).
    pub lowest: Vec<f64>,
    /// Per step event (a plant or a lift-off inside the path's interval,
    /// and a loop's closing), how far the synthesised pose jumps across it
    /// (by time order). The samples above see a pop only as a fast move
    /// between keys; this sees it as what it is.
    pub events: Vec<EventJump>,
}

/// Continuity of the synthesised motion across one step event: the largest
/// distance `[m]` any joint's world position moves from just before the
/// event to just after it ([`EVENT_SPAN`] either side).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EventJump {
    /// Time of the event `[s]` (unwrapped, on the agent's interval).
    pub t: f64,
    /// What happens then.
    pub kind: EventKind,
    /// The foot that plants or lifts (none for a loop's closing).
    pub foot: Option<Foot>,
    /// Largest joint displacement across the event `[m]`.
    pub distance: f64,
    /// The joint that moves most (skeleton index).
    pub joint: usize,
}

/// A step event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// A foot lands (one step ends, the next begins).
    Plant,
    /// A foot lifts off.
    Lift,
    /// A loop closes: its pose at the end of its period against its pose
    /// at the start.
    LoopClose,
}

impl EventKind {
    /// The event in words.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Plant => "landing",
            EventKind::Lift => "lift-off",
            EventKind::LoopClose => "loop closing",
        }
    }
}

/// Half the span `[s]` across which [`EventJump`] compares poses: a joint
/// at 30 m/s moves 0.06 mm in it, a pop moves millimetres.
pub const EVENT_SPAN: f64 = 1e-6;

/// The [`EventJump`]s of `footsteps` whose plants and lift-offs lie strictly
/// inside `(lo, hi)`, from the synthesised poses `eval` gives (two per
/// event). O(events · joints).
pub(super) fn event_jumps(
    character: &Character,
    footsteps: &[Footstep],
    (lo, hi): (f64, f64),
    eval: &dyn Fn(f64) -> Posed,
) -> Vec<EventJump> {
    let mut events: Vec<(f64, EventKind, Foot)> = footsteps
        .iter()
        .flat_map(|f| [(f.t, EventKind::Plant, f.foot), (f.lift, EventKind::Lift, f.foot)])
        .filter(|&(t, _, _)| t > lo + EVENT_SPAN && t < hi - EVENT_SPAN)
        .collect();
    events.sort_by(|a, b| a.0.total_cmp(&b.0));
    events
        .into_iter()
        .map(|(t, kind, foot)| {
            let world = |p: Posed| -> Vec<V3> {
                character.skeleton.positions(&p.pose).into_iter().map(|x| p.world(x)).collect()
            };
            let (a, b) = (world(eval(t - EVENT_SPAN)), world(eval(t + EVENT_SPAN)));
            let (joint, distance) = largest_move(&a, &b);
            EventJump { t, kind, foot: Some(foot), distance, joint }
        })
        .collect()
}

/// The joint that moves most from `a` to `b` and how far `[m]`.
pub(super) fn largest_move(a: &[V3], b: &[V3]) -> (usize, f64) {
    a.iter()
        .zip(b)
        .map(|(x, y)| (y - x).norm())
        .enumerate()
        .fold((0, 0.0), |m, (j, d)| if d > m.1 { (j, d) } else { m })
}

/// glTF yaw of a patch heading.
pub(super) fn gltf_yaw(heading: f64) -> f64 {
    heading + FRAC_PI_2
}

/// glTF point (x, 0, −y) of a patch point.
pub(super) fn to_gltf(p: [f64; 2]) -> V3 {
    V3::new(p[0], 0.0, -p[1])
}

/// A posed character at one instant: model-frame pose and its placement.
#[derive(Debug, Clone)]
pub(super) struct Posed {
    pub(super) pose: Pose,
    /// glTF yaw of the model frame.
    pub(super) yaw: f64,
    /// glTF translation of the model origin (y = 0).
    pub(super) offset: V3,
}

impl Posed {
    pub(super) fn world(&self, m: V3) -> V3 {
        yaw(self.yaw) * m + self.offset
    }

    /// World positions (glTF frame) of every joint.
    #[cfg(test)]
    pub(super) fn world_positions(&self, character: &Character) -> Vec<V3> {
        character.skeleton.positions(&self.pose).iter().map(|&x| self.world(x)).collect()
    }
}

/// Most halvings of a key interval by [`refine_keys`] (down to 1/8 of it).
const MAX_REFINE: u32 = 3;

/// Bound on the speed `[m/s]` a planted foot may seem to have between two
/// keys: a key is inserted where the played foot strays more than
/// `KEY_SPEED_BOUND · Δ / 2` from the synthesised one at the middle of a key
/// interval of length Δ (a stray of d there and back reads as a mean speed
/// of 2d/Δ: 0.33 mm at 30 Hz keys). Measured on `dense` (built-in
/// character, three.js playback): 0.004 → 0.02 takes the bake from 1.06 to
/// 0.68 s on one thread and the file from 4.63 to 3.69 MB (with the 0.3 mm
/// contact bound of the key reduction), and raises the planted-foot speed
/// mean from 3.8 to 6.5 mm/s and the stance drift's largest from 0.3 to
/// 0.9 mm: a wobble of a third of a millimetre between keys.
const KEY_SPEED_BOUND: f64 = 0.02;

/// Least 3-D stray `[m]` of a swing foot's played contact joint from the
/// synthesised one at the middle of a key interval for which a key is
/// inserted there ([`refine_keys`]).
const SWING_KEY_BOUND: f64 = 0.005;

/// A swing foot is compared only while its played contact joint is less
/// than this `[m]` above its height in the rest pose ([`refine_keys`]).
const SWING_KEY_HEIGHT: f64 = 0.05;

/// Shortest key interval `[s]` a swing foot's keys are refined to
/// ([`refine_keys`]): 1/120 s. Much shorter ones would chase the steep
/// stretches of a synthesised swing (a swing leg at full stretch, whose
/// heel roll rises as a square root, [`crate::character::ik::heel_roll`])
/// that 30 Hz keys smooth over, and show them as jumps (a 1 ms key
/// interval on the Godette VRM on `park`: a shin at 38 m/s).
const MIN_SWING_KEY: f64 = 1.0 / 120.0;

/// Keys of an agent's joint tracks: the regular `times`, with keys inserted
/// by halving where interpolating the tracks (as glTF LINEAR does, see
/// [`played_world`]) moves a planted foot away from its footprint (more than
/// [`KEY_SPEED_BOUND`] allows), at most [`MAX_REFINE`] times. The middle of
/// an interval is synthesised only where the played contact strays from its
/// footprint, then compared with the synthesised contact. Interpolating
/// joint rotations is not interpolating the foot's position: without the
/// extra keys a planted foot slides slightly between keys.
///
/// A swing foot near the floor is keyed the same way where its played
/// contact joint strays more than [`SWING_KEY_BOUND`] from the synthesised
/// one, down to key intervals of [`MIN_SWING_KEY`]: between sparse keys
/// the interpolated foot cuts the corner from its forward swing to its
/// vertical drop onto the footprint, and a heel skimmed the last 10–16 cm
/// over the floor (the built-in character on `figure7` at 4 Hz; 20 cm at
/// one landing at 30 Hz). Cost: a synthesised pose per key interval where
/// a swing foot is low, O(joints) each.
pub(super) fn refine_keys(
    character: &Character,
    agent: &BakedAgent,
    footsteps: &[Footstep],
    times: &[f64],
    eval: &dyn Fn(f64) -> Posed,
) -> (Vec<f64>, Vec<Posed>) {
    let planted =
        |t: f64| footsteps.iter().filter(move |f| f.t <= t && t <= f.lift).map(|f| (f.foot, to_gltf(f.position)));
    // Every swing: (foot, lift-off, plant).
    let swings: Vec<(Foot, f64, f64)> = footsteps
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let prev = footsteps[..i].iter().rev().find(|p| p.foot == f.foot)?;
            (prev.lift < f.t).then_some((f.foot, prev.lift, f.t))
        })
        .collect();
    let swinging = |t: f64| swings.iter().filter(move |l| l.1 <= t && t < l.2).map(|l| l.0);
    let rest = character.skeleton.positions(&character.skeleton.rest_pose());
    let low = |ft: Foot| rest[character.foot(ft).contact].y + SWING_KEY_HEIGHT;
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
            let bound = KEY_SPEED_BOUND * (b.0 - a.0) / 2.0;
            // A planted contact is where its footprint says (synthesis holds
            // it there by IK): the played contacts are compared with their
            // footprints first, and the pose at the middle is synthesised
            // only where one strays, to compare it with the pose itself.
            // The played contacts, each made once.
            let mut played = [None::<V3>; 2];
            let mut played_at = |ft: Foot| {
                *played[ft.index()].get_or_insert_with(|| {
                    played_joint(character, agent, &la, &lb, 0.5, tm, character.foot(ft).contact)
                })
            };
            let strays = depth < MAX_REFINE
                && feet.clone().any(|(ft, at)| {
                    let p = played_at(ft);
                    (p.x - at.x).hypot(p.z - at.z) > bound
                });
            // A swing foot near the floor is compared with the pose.
            let low_swing: Vec<Foot> = if tm - a.0 >= MIN_SWING_KEY - 1e-12 {
                swinging(tm).filter(|&ft| played_at(ft).y < low(ft)).collect()
            } else {
                Vec::new()
            };
            let mid = (strays || !low_swing.is_empty()).then(|| eval(tm)).filter(|m| {
                // Only the planted and landing contacts are compared: their
                // chains alone are evaluated (the same bits as the whole
                // skeleton's).
                let at = |ft: Foot| m.world(fk::position(&character.skeleton, &m.pose, character.foot(ft).contact));
                let d = feet.clone().map(|(ft, _)| {
                    let (q, p) = (at(ft), played_at(ft));
                    (p.x - q.x).hypot(p.z - q.z)
                });
                (strays && d.fold(0.0, f64::max) > bound)
                    || low_swing.iter().any(|&ft| (played_at(ft) - at(ft)).norm() > SWING_KEY_BOUND)
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
    let (ip, ih) = path_sample(agent, tc).unwrap_or((agent.keys[0].position, agent.keys[0].heading));
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
#[cfg(test)]
fn played_world(
    character: &Character,
    agent: &BakedAgent,
    a: &[(V3, Quat)],
    b: &[(V3, Quat)],
    s: f64,
    t: f64,
) -> Vec<V3> {
    let arcs = key_arcs(a, b);
    let mut scratch = (character.skeleton.rest_pose(), Vec::new());
    played_world_on(character, placement_at(agent, t), a, b, &arcs, s, &mut scratch)
}

/// Per joint, the rotation at key `b` on `a`'s hemisphere and the arc to it
/// from `a` (the slerp of [`played_world`]).
fn key_arcs(a: &[(V3, Quat)], b: &[(V3, Quat)]) -> Vec<(Quat, SlerpArc)> {
    a.iter()
        .zip(b)
        .map(|((_, qa), (_, qb))| {
            let qb = if qa.coords.dot(&qb.coords) < 0.0 { Quat::new_unchecked(-qb.into_inner()) } else { *qb };
            (qb, SlerpArc::new(qa, &qb, 1e-9))
        })
        .collect()
}

/// [`played_world`] with the instance node's placement (turn and
/// translation, [`placement_at`]), the keys' arcs ([`key_arcs`]) and a
/// scratch pose (its scales the rest pose's) and globals.
fn played_world_on(
    character: &Character,
    (turn, offset): (Quat, V3),
    a: &[(V3, Quat)],
    b: &[(V3, Quat)],
    arcs: &[(Quat, SlerpArc)],
    s: f64,
    (pose, globals): &mut (Pose, Vec<nalgebra::Matrix4<f64>>),
) -> Vec<V3> {
    let sk = &character.skeleton;
    for ((x, (ta, qa)), ((tb, _), (qb, arc))) in pose.iter_mut().zip(a).zip(b.iter().zip(arcs)) {
        x.translation = ta.lerp(tb, s);
        x.rotation = arc.at(qa, qb, s).unwrap_or(*qa);
    }
    sk.globals_into(pose, globals);
    globals.iter().map(|g| turn * position_of(g) + offset).collect()
}

/// The instance node's turn and translation (glTF frame) at time `t`
/// (clamped to the path's interval).
fn placement_at(agent: &BakedAgent, t: f64) -> (Quat, V3) {
    let tc = t.clamp(agent.start(), agent.end());
    let (ip, ih) = path_sample(agent, tc).unwrap_or((agent.keys[0].position, agent.keys[0].heading));
    (yaw(gltf_yaw(ih)), to_gltf(ip))
}

/// World position (glTF frame) of joint `j` as [`played_world`] gives it,
/// from its chain alone: O(depth of `j`) rather than O(joints).
fn played_joint(
    character: &Character,
    agent: &BakedAgent,
    a: &[(V3, Quat)],
    b: &[(V3, Quat)],
    s: f64,
    t: f64,
    j: usize,
) -> V3 {
    let sk = &character.skeleton;
    // The chain's local matrices, from `j` up; then their product from the
    // top down, as `fk::position` makes it.
    let mut chain: [nalgebra::Matrix4<f64>; 16] = [nalgebra::Matrix4::zeros(); 16];
    let mut len = 0;
    let mut global: Option<nalgebra::Matrix4<f64>> = None;
    let mut k = Some(j);
    while let Some(i) = k {
        let ((ta, qa), (tb, qb)) = (&a[i], &b[i]);
        let qb = if qa.coords.dot(&qb.coords) < 0.0 { Quat::new_unchecked(-qb.into_inner()) } else { *qb };
        let local = Transform {
            translation: ta.lerp(tb, s),
            rotation: SlerpArc::new(qa, &qb, 1e-9).at(qa, &qb, s).unwrap_or(*qa),
            scale: sk.joints[i].rest.scale,
        }
        .matrix();
        if len == chain.len() {
            // A chain deeper than 16 joints: from the whole pose.
            global = Some(fk::global_of(sk, &played_chain_pose(character, a, b, s, j), j));
            break;
        }
        chain[len] = local;
        len += 1;
        k = sk.joints[i].parent;
    }
    let g = global.unwrap_or_else(|| {
        let mut g = chain[len - 1];
        for m in chain[..len - 1].iter().rev() {
            g = mul4(&g, m);
        }
        g
    });
    let tc = t.clamp(agent.start(), agent.end());
    let (ip, ih) = path_sample(agent, tc).unwrap_or((agent.keys[0].position, agent.keys[0].heading));
    let placed = Posed { pose: Vec::new(), yaw: gltf_yaw(ih), offset: to_gltf(ip) };
    placed.world(position_of(&g))
}

/// The rest pose with the chain of `j` interpolated as [`played_joint`]
/// does it.
fn played_chain_pose(character: &Character, a: &[(V3, Quat)], b: &[(V3, Quat)], s: f64, j: usize) -> Pose {
    let sk = &character.skeleton;
    let mut pose = sk.rest_pose();
    let mut k = Some(j);
    while let Some(i) = k {
        let ((ta, qa), (tb, qb)) = (&a[i], &b[i]);
        pose[i].translation = ta.lerp(tb, s);
        let qb = if qa.coords.dot(&qb.coords) < 0.0 { Quat::new_unchecked(-qb.into_inner()) } else { *qb };
        pose[i].rotation = qa.try_slerp(&qb, s, 1e-9).unwrap_or(*qa);
        k = sk.joints[i].parent;
    }
    pose
}

/// Inserts `t` into the increasing `times` where it keeps them increasing,
/// unless a time within `eps` of it is there already. O(log n + n) (the
/// insertion's shift).
fn insert_key_time(times: &mut Vec<f64>, t: f64, eps: f64) {
    let k = times.partition_point(|&x| x < t);
    let near = |i: usize| times.get(i).is_some_and(|&x| (x - t).abs() <= eps);
    if !(near(k) || (k > 0 && near(k - 1))) {
        times.insert(k, t);
    }
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
        insert_key_time(&mut times, t, eps);
    }
    times
}

/// A path's heading turns faster than this `[rad/s]` more (or less) after
/// one of its keys than before it: [`with_turn_keys`] puts a joint key there.
const TURN_RATE_KINK: f64 = 5.0;

/// `times` (increasing) with a key at every path key inside them where the
/// path's heading changes its rate of turn by more than [`TURN_RATE_KINK`].
///
/// The instance node turns with the path's heading, linearly between the
/// path's keys, and the joint tracks are relative to it. Where the node
/// turns sharply inside one joint-key interval (a walker nearly in place
/// whose path reverses: its heading turns by 2 rad in 20 ms), the two
/// interpolations no longer compose into the synthesised pose: a planted
/// foot swings by centimetres for a few milliseconds, between the middles
/// that [`refine_keys`] tests. With a joint key at each such path key, both
/// tracks change linearly between the same keys and [`refine_keys`] halves
/// what is left. O(times + path keys).
pub(super) fn with_turn_keys(times: Vec<f64>, agent: &BakedAgent) -> Vec<f64> {
    let rate = |a: &PathKey, b: &PathKey| wrap_angle_exact(b.heading - a.heading) / (b.t - a.t).max(1e-9);
    let kinks = agent.keys.windows(3).filter(|w| (rate(&w[1], &w[2]) - rate(&w[0], &w[1])).abs() > TURN_RATE_KINK);
    with_key_times(times, kinks.map(|w| w[1].t))
}

/// `times` (increasing) with each of `extra` that lies inside them (more
/// than 1 µs from their ends) and more than 1 µs from every key. O(times ·
/// extra) at worst (each insertion shifts the keys after it).
pub(super) fn with_key_times(mut times: Vec<f64>, extra: impl Iterator<Item = f64>) -> Vec<f64> {
    let (Some(&lo), Some(&hi)) = (times.first(), times.last()) else { return times };
    let eps = 1e-6;
    for t in extra.filter(|&t| t > lo + eps && t < hi - eps) {
        insert_key_time(&mut times, t, eps);
    }
    times
}

/// Trace points per regular key interval: the trace samples the played
/// animation at `interval / TRACE_SUBSTEPS`.
const TRACE_SUBSTEPS: usize = 4;

/// A key interval's middle is traced unless a trace point lies this close
/// to it `[s]`.
const TRACE_MIDDLE_GAP: f64 = 5e-4;

/// Times `[s]` at which the trace samples the played animation of `keys`
/// (increasing): every `interval / TRACE_SUBSTEPS` from the first key to the
/// last, and the middle of every key interval (where interpolation strays
/// most from the synthesised motion) that no point of that grid lies within
/// [`TRACE_MIDDLE_GAP`] of, inside the path's interval `(lo, hi)` (the
/// instance is hidden outside it), whose ends are samples too. The grid
/// alone steps over the short intervals [`refine_keys`] makes, and a planted
/// foot that swings between two of them for a few milliseconds would go
/// unseen. O(keys + samples).
fn trace_times(keys: &[f64], interval: f64, (lo, hi): (f64, f64)) -> Vec<f64> {
    let eps = 1e-9;
    let mut out: Vec<f64> =
        trace_times_all(keys, interval).into_iter().filter(|&t| t > lo + eps && t < hi - eps).collect();
    out.insert(0, lo);
    if hi > lo + eps {
        out.push(hi);
    }
    out
}

/// [`trace_times`] from the first key to the last.
fn trace_times_all(keys: &[f64], interval: f64) -> Vec<f64> {
    let (first, last) = (keys[0], keys[keys.len() - 1]);
    let step = interval / TRACE_SUBSTEPS as f64;
    let count = ((last - first) / step).round() as usize;
    let mut out = Vec::with_capacity(count + 1 + keys.len() / 4);
    let grid = |k: usize| (first + k as f64 * step).min(last);
    let mut k = 0;
    for w in keys.windows(2) {
        let mid = 0.5 * (w[0] + w[1]);
        while k <= count && grid(k) <= mid {
            out.push(grid(k));
            k += 1;
        }
        let near = (k > 0 && mid - grid(k - 1) < TRACE_MIDDLE_GAP) || (k <= count && grid(k) - mid < TRACE_MIDDLE_GAP);
        if !near {
            out.push(mid);
        }
    }
    out.extend((k..=count).map(grid));
    out
}

/// Local joint tracks relative to the instance node, and the trace.
pub(super) fn output(
    character: &Character,
    soles: &Soles,
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
    // on the path, from the f32 keys), at the times of `trace_times`, so
    // that the metrics see what is played, not only the keys.
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
    let samples = trace_times(&times, interval, (agent.start(), agent.end()));
    trace.times.reserve(samples.len());
    trace.feet.reserve(samples.len());
    trace.root.reserve(samples.len());
    trace.joints.reserve(samples.len());
    let mut i = 0;
    let (mut la, mut lb) = (local(0), local((times.len() - 1).min(1)));
    let mut arcs = key_arcs(&la, &lb);
    let mut scratch = (character.skeleton.rest_pose(), Vec::with_capacity(n));
    for t in samples {
        let mut moved = false;
        while i + 2 < times.len() && times[i + 1] <= t {
            i += 1;
            moved = true;
        }
        if moved {
            la = local(i);
            lb = local(i + 1);
            arcs = key_arcs(&la, &lb);
        }
        let j = (i + 1).min(times.len() - 1);
        let s = if times[j] > times[i] { ((t - times[i]) / (times[j] - times[i])).clamp(0.0, 1.0) } else { 0.0 };
        let (turn, offset) = placement_at(agent, t);
        let world = played_world_on(character, (turn, offset), &la, &lb, &arcs, s, &mut scratch);
        let foot = |f: Foot| {
            let w = world[character.foot(f).contact];
            [w.x, -w.z, w.y]
        };
        trace.times.push(t);
        trace.feet.push([foot(Foot::Left), foot(Foot::Right)]);
        let r = world[character.hips];
        trace.root.push([r.x, -r.z]);
        trace.joints.push(world);
        let points = soles.points_at(&scratch.1);
        trace.contacts.push(points.map(|p| {
            let w = turn * p + offset;
            [w.x, -w.z, w.y]
        }));
        trace.lowest.push(soles.lowest_at(&scratch.1));
    }
    (anim, trace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::character::builtin;
    use crowdpatch_runtime::format::AgentKind;

    fn walker(from: [f64; 2], to: [f64; 2], t: (f64, f64)) -> BakedAgent {
        BakedAgent {
            kind: AgentKind::Endogenous { index: 0 },
            keys: vec![
                PathKey { t: t.0, position: from, heading: 0.0 },
                PathKey { t: t.1, position: to, heading: 0.0 },
            ],
        }
    }

    #[test]
    fn sample_times_hold_the_grid_and_the_path_ends() {
        let a = walker([0.0, 0.0], [1.0, 0.0], (0.25, 1.05));
        let t = sample_times(&a, 0.1);
        assert_eq!(t.first(), Some(&0.2));
        assert_eq!(t.last(), Some(&1.1));
        assert!(t.contains(&0.25) && t.contains(&1.05), "{t:?}");
        assert!(t.windows(2).all(|w| w[1] > w[0]), "increasing: {t:?}");
        // An end on the grid is not doubled.
        let b = walker([0.0, 0.0], [1.0, 0.0], (0.3, 0.9));
        let tb = sample_times(&b, 0.1);
        assert_eq!(tb.len(), 7, "{tb:?}");
    }

    /// Poses of a character standing on its left foot at `foot` (patch
    /// frame), its body turning by `turn(t)` `[rad]` about that foot.
    fn pivot(c: &Character, foot: [f64; 2], turn: impl Fn(f64) -> f64) -> impl Fn(f64) -> Posed {
        let pose = c.skeleton.rest_pose();
        let contact = c.skeleton.positions(&pose)[c.foot(Foot::Left).contact];
        let at = to_gltf(foot);
        move |t: f64| {
            let y = gltf_yaw(turn(t));
            let r = yaw(y) * contact;
            Posed { pose: pose.clone(), yaw: y, offset: V3::new(at.x - r.x, 0.0, at.z - r.z) }
        }
    }

    fn planted(foot: [f64; 2]) -> Vec<Footstep> {
        vec![Footstep { t: 0.0, foot: Foot::Left, position: foot, heading: 0.0, lift: 10.0 }]
    }

    #[test]
    fn no_keys_are_added_where_interpolation_already_holds_the_planted_foot() {
        let c = builtin::character();
        let agent = walker([2.0, 3.0], [2.5, 3.0], (0.0, 1.0));
        let eval = pivot(&c, [2.0, 3.1], |_| 0.0);
        let times = sample_times(&agent, 0.1);
        let (t, posed) = refine_keys(&c, &agent, &planted([2.0, 3.1]), &times, &eval);
        assert_eq!(t, times, "a still body on a moving instance node interpolates exactly");
        assert_eq!(posed.len(), t.len());
    }

    #[test]
    fn keys_are_inserted_where_a_turn_about_the_planted_foot_would_slide_it() {
        let c = builtin::character();
        let agent = walker([2.0, 3.0], [2.0, 3.0 + 1e-3], (0.0, 1.0));
        let foot = [2.0, 3.1];
        // A quarter turn in 0.3 s about the planted foot.
        let eval = pivot(&c, foot, |t| (t / 0.3).min(1.0) * std::f64::consts::FRAC_PI_2);
        let times = sample_times(&agent, 0.1);
        let (t, posed) = refine_keys(&c, &agent, &planted(foot), &times, &eval);
        assert!(t.len() > times.len(), "keys were inserted: {} vs {}", t.len(), times.len());
        assert!(t.windows(2).all(|w| w[1] > w[0]));
        assert!(times.iter().all(|x| t.contains(x)), "the regular keys are kept");
        // At most MAX_REFINE halvings: no interval shorter than 0.1 / 8.
        assert!(t.windows(2).all(|w| w[1] - w[0] >= 0.1 / 8.0 - 1e-12));
        // Between the new keys the played foot now stays within the bound.
        for (w, p) in t.windows(2).zip(posed.windows(2)) {
            let (la, lb) = (locals(&c, &agent, w[0], &p[0]), locals(&c, &agent, w[1], &p[1]));
            let tm = 0.5 * (w[0] + w[1]);
            let played = played_world(&c, &agent, &la, &lb, 0.5, tm);
            let truth = eval(tm).world_positions(&c);
            let k = c.foot(Foot::Left).contact;
            let d = (played[k].x - truth[k].x).hypot(played[k].z - truth[k].z);
            let depth_limited = w[1] - w[0] <= 0.1 / 8.0 + 1e-12;
            assert!(depth_limited || d <= KEY_SPEED_BOUND * (w[1] - w[0]) / 2.0 + 1e-12, "{d} m at {tm}");
        }
    }

    /// The largest horizontal stray `[m]` of the played left contact from
    /// `foot` (patch frame) over `[0, 1]` s at 0.5 ms steps, from keys at
    /// `times` (refined) on `agent`'s instance node.
    fn played_stray(
        c: &Character,
        agent: &BakedAgent,
        times: &[f64],
        eval: &dyn Fn(f64) -> Posed,
        foot: [f64; 2],
    ) -> f64 {
        let (t, posed) = refine_keys(c, agent, &planted(foot), times, eval);
        let at = to_gltf(foot);
        let k = c.foot(Foot::Left).contact;
        let mut worst = 0.0_f64;
        for i in 0..=2000 {
            let x = f64::from(i) * 5e-4;
            let j = t.partition_point(|&y| y <= x).clamp(1, t.len() - 1);
            let s = (x - t[j - 1]) / (t[j] - t[j - 1]);
            let (la, lb) = (locals(c, agent, t[j - 1], &posed[j - 1]), locals(c, agent, t[j], &posed[j]));
            let p = played_world(c, agent, &la, &lb, s.clamp(0.0, 1.0), x)[k];
            worst = worst.max((p.x - at.x).hypot(p.z - at.z));
        }
        worst
    }

    #[test]
    fn a_joint_key_where_the_path_turns_sharply_keeps_the_planted_foot_still() {
        // A body standing still on its left foot, on a path that barely
        // moves but whose heading turns by 2 rad between two path keys
        // 20 ms apart (at 0.51 and 0.53 s, between the 30 Hz joint keys):
        // the instance node turns under the body, the joint tracks turn back.
        let c = builtin::character();
        let keys = (0..=50)
            .map(|i| {
                let t = 0.01 + 0.02 * f64::from(i);
                let heading = if t < 0.52 { 0.3 } else { 2.3 };
                PathKey { t, position: [2.0 + 1e-5 * f64::from(i), 3.0], heading }
            })
            .collect();
        let agent = BakedAgent { kind: AgentKind::Endogenous { index: 0 }, keys };
        let foot = [2.0, 3.1];
        let eval = pivot(&c, foot, |_| 0.4);
        let grid = sample_times(&agent, 1.0 / 30.0);
        let with = with_turn_keys(grid.clone(), &agent);
        assert_eq!(with.len(), grid.len() + 2, "a key at both ends of the turn: {with:?}");
        assert!(with.iter().any(|&x| (x - 0.51).abs() < 1e-9) && with.iter().any(|&x| (x - 0.53).abs() < 1e-9));
        assert!(with.windows(2).all(|w| w[1] > w[0]));
        // Without the keys the planted foot swings by centimetres between
        // two refined keys; with them it stays within a millimetre.
        let without = played_stray(&c, &agent, &grid, &eval, foot);
        let kept = played_stray(&c, &agent, &with, &eval, foot);
        assert!(without > 0.005, "{without} m");
        assert!(kept < 0.001, "{kept} m (without the keys: {without} m)");
        // A path turning steadily gets no key.
        let steady = BakedAgent {
            kind: AgentKind::Endogenous { index: 0 },
            keys: (0..=50)
                .map(|i| PathKey { t: 0.02 * f64::from(i), position: [0.0, 0.0], heading: 2.0 * 0.02 * f64::from(i) })
                .collect(),
        };
        assert_eq!(with_turn_keys(grid.clone(), &steady), grid);
    }

    #[test]
    fn the_trace_holds_the_grid_and_the_middle_of_every_short_key_interval() {
        let interval = 0.1;
        let keys = [0.0, 0.1, 0.2, 0.2125, 0.225, 0.25, 0.3, 0.4001, 0.5];
        let t = trace_times_all(&keys, interval);
        assert!(t.windows(2).all(|w| w[1] > w[0]), "increasing: {t:?}");
        assert_eq!((t[0], t[t.len() - 1]), (0.0, 0.5));
        // Every grid point (interval / 4) is there.
        for k in 0..=20 {
            let g = f64::from(k) * interval / 4.0;
            assert!(t.iter().any(|&x| (x - g).abs() < 1e-12), "grid point {g}: {t:?}");
        }
        // Every key interval's middle is traced, or a point lies within
        // TRACE_MIDDLE_GAP of it; the short ones add their middles.
        for w in keys.windows(2) {
            let m = 0.5 * (w[0] + w[1]);
            assert!(t.iter().any(|&x| (x - m).abs() < TRACE_MIDDLE_GAP), "middle {m}: {t:?}");
        }
        for m in [0.20625, 0.21875, 0.2375] {
            assert!(t.iter().any(|&x| (x - m).abs() < 1e-12), "middle {m}: {t:?}");
        }
        // The middle of 0.3..0.4001 lies 0.05 ms from the grid: not doubled.
        assert_eq!(t.len(), 21 + 3, "{t:?}");
        // Within a path's interval: its ends and what lies between.
        let within = trace_times(&keys, interval, (0.01, 0.45));
        assert_eq!((within[0], within[within.len() - 1]), (0.01, 0.45));
        assert_eq!(within[1..within.len() - 1], t[1..t.len() - 3], "{within:?}");
    }
}
