//! Error-bounded joint tracks: the keys of one instance's window that a
//! player needs to show every joint within a stated error of the baked
//! samples, rotations quantised to normalised 16-bit integers.
//!
//! The bounds are stated on the skeleton and hold at every baked sample as
//! the player interpolates every channel from its keys (slerp of the
//! rotations as the player decodes them, lerp of the translations: glTF
//! LINEAR):
//! - every joint's local rotation within [`KeyTolerance::rotation`],
//! - every extremity's position (the joints with no child, and the feet;
//!   forward kinematics below the instance node) within
//!   [`KeyTolerance::position`],
//! - the joints of a **planted foot** (the foot joint and those below it,
//!   while a footstep holds it: `Footstep::t ≤ t ≤ Footstep::lift`) within
//!   [`KeyTolerance::contact`] horizontally: an error that changes from key
//!   to key reads as speed, so a planted foot gets a bound far below the
//!   others.
//!
//! **Groups.** Channels that vary over the window are reduced in groups,
//! each group keeping one list of key times: the *root* (the channels that
//! move both feet: the hips' translation and rotation), then one group per
//! *leg* (the channels that move one foot only: thigh, shin, foot), then
//! every other channel on its own (spine, chest, neck, arms, toes), parents
//! first. A planted foot needs dense keys in the channels that move it, and
//! sharing them keeps the whole leg exact at each key; an arm that swings
//! smoothly needs far fewer keys than a leg, and keeps only those. A channel
//! that never leaves its first sample within the bounds gets no keys (its
//! node holds that sample).
//!
//! **Reduction, in order.** Each group is simplified against the pose as
//! played so far: the groups reduced before it play from their keys, those
//! after it at their quantised samples (as at their keys). From a kept key
//! `a`, the next is the farthest sample `c` such that, with the group's
//! channels interpolated between `a` and `c`, every sample after `a` up to
//! `c` is within the group's share of the bounds at the joints it moves
//! (forward kinematics of its subtree; a gallop of lengths 2, 4, 8, … then
//! bisection, every accepted interval checked at every sample inside). The
//! groups moving a joint share its bounds in order: the i-th of N may bring
//! the error up to `(φ + (1 − φ)(i − 1)/(N − 1))` of the bound, the last
//! one to all of it, with φ = [`ROOT_SHARE`] at the feet (the root takes
//! most of it: the legs need their keys anyway) and [`OTHER_SHARE`]
//! elsewhere. As the last group moving a joint checks it with every other
//! group final, the bounds hold at every sample by construction. Samples
//! nearest each plant and lift stay keys of the groups that move that foot.
//! A group whose channels drive one joint (one rotation channel, or the
//! root's hips) needs no forward kinematics: turning or moving joint `j`
//! turns or moves its subtree rigidly with `j`.
//!
//! This is tolerance-bounded curve simplification (as in ACL and gltfpack)
//! with the error measured on the skeleton rather than per curve.
//!
//! **Compressed files** ([`Played`]) write the same keys through the
//! compressor's filters, which move a rotation by about 10⁻⁵ rad, a
//! translation by up to 2⁻¹⁷ of its largest component (0.06 mm at 8–16 m), a
//! key time by up to 8 µs: their values are played
//! at every sample (at its written time, where a key is exactly its written
//! value), and wherever a bound fails, that sample becomes a key of every
//! group moving the joint, until every bound holds (1–2 % more keys).
//!
//! Cost: O(G · K log L · L · s) per instance for G groups of K kept keys
//! `L` samples apart and subtrees of s joints, plus O(m · n) forward
//! kinematics per group for m samples and n joints.

use crowdpatch_runtime::skeletal::SkeletalAnimation;

use crate::options::KeyTolerance;
use crate::played::Played;

/// The kept keys of every joint channel of one instance's window and the
/// errors they show.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reduced {
    /// Per joint, the kept sample indices (into the window) of its rotation
    /// channel, first and last sample included; a single index: the channel
    /// is constant within the bounds (the joint node's rotation is that
    /// sample's, and no channel is written).
    pub rotation: Vec<Vec<usize>>,
    /// Per joint, the same for its translation channel.
    pub translation: Vec<Vec<usize>>,
    /// Largest extremity position error measured `[m]` (every sample).
    pub position_error: f64,
    /// Largest joint rotation error measured `[rad]` (local, every sample).
    pub rotation_error: f64,
    /// Largest horizontal position error of a planted foot's joints `[m]`.
    pub contact_error: f64,
}

fn dequantise(q: [i16; 4]) -> [f64; 4] {
    q.map(|c| (f64::from(c) / 32767.0).max(-1.0))
}

fn normalise(q: [f64; 4]) -> [f64; 4] {
    let n = q.iter().map(|c| c * c).sum::<f64>().sqrt();
    if n > 0.0 { q.map(|c| c / n) } else { [0.0, 0.0, 0.0, 1.0] }
}

fn dot(a: [f64; 4], b: [f64; 4]) -> f64 {
    (0..4).map(|k| a[k] * b[k]).sum()
}

/// Angle `[rad]` between two unit quaternions' rotations.
#[cfg(test)]
fn angle(a: [f64; 4], b: [f64; 4]) -> f64 {
    2.0 * dot(a, b).abs().clamp(0.0, 1.0).acos()
}

fn rotate(q: [f64; 4], v: [f64; 3]) -> [f64; 3] {
    let [x, y, z, w] = q;
    let t = [2.0 * (y * v[2] - z * v[1]), 2.0 * (z * v[0] - x * v[2]), 2.0 * (x * v[1] - y * v[0])];
    [
        v[0] + w * t[0] + (y * t[2] - z * t[1]),
        v[1] + w * t[1] + (z * t[0] - x * t[2]),
        v[2] + w * t[2] + (x * t[1] - y * t[0]),
    ]
}

fn mul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]
}

/// Slerp of unit quaternions along the short arc, with the arc's angle
/// `th` and its sine `s` precomputed (`th = 0`: nlerp).
fn slerp_pre(a: [f64; 4], b: [f64; 4], th: f64, s: f64, u: f64) -> [f64; 4] {
    if th < 1e-3 {
        return normalise(std::array::from_fn(|k| a[k] + (b[k] - a[k]) * u));
    }
    let (wa, wb) = (sin((1.0 - u) * th) / s, sin(u * th) / s);
    normalise(std::array::from_fn(|k| wa * a[k] + wb * b[k]))
}

/// `x.sin()`, by its Taylor series to x¹³ for `|x| ≤ 0.5` (relative error
/// below 10⁻¹⁵: a slerp between keys turns a joint by far less).
fn sin(x: f64) -> f64 {
    if x.abs() > 0.5 {
        return x.sin();
    }
    let x2 = x * x;
    x * (1.0
        - x2 / 6.0
            * (1.0 - x2 / 20.0 * (1.0 - x2 / 42.0 * (1.0 - x2 / 72.0 * (1.0 - x2 / 110.0 * (1.0 - x2 / 156.0))))))
}

/// Forward kinematics of one instance pose: world (instance-node frame)
/// positions `p` and rotations `q` of every joint from local rotations,
/// translations and constant scales (parents first).
fn fk(
    parents: &[Option<usize>],
    scales: &[[f64; 3]],
    rot: impl Fn(usize) -> [f64; 4],
    tr: impl Fn(usize) -> [f64; 3],
    p: &mut [[f64; 3]],
    q: &mut [[f64; 4]],
    s: &mut [[f64; 3]],
) {
    for j in 0..parents.len() {
        let (r, t) = (rot(j), tr(j));
        match parents[j] {
            Some(pj) => {
                let a = rotate(q[pj], std::array::from_fn(|i| t[i] * s[pj][i]));
                p[j] = std::array::from_fn(|i| p[pj][i] + a[i]);
                q[j] = mul(q[pj], r);
                s[j] = std::array::from_fn(|i| s[pj][i] * scales[j][i]);
            }
            None => (p[j], q[j], s[j]) = (t, r, scales[j]),
        }
    }
}

/// What a channel drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Property {
    Rotation,
    Translation,
}

/// One joint channel.
#[derive(Debug, Clone, Copy)]
struct Channel {
    joint: usize,
    property: Property,
}

/// Channels reduced together: they share one list of kept keys.
struct Group {
    /// Indices into the channels, all driving joints of the subtree of
    /// `top`.
    channels: Vec<usize>,
    /// The topmost joint the group drives.
    top: usize,
    /// Feet whose plants and lifts stay keys of the group.
    events: [bool; 2],
}

/// Greedy simplification of one group: from each kept key the farthest
/// sample that `fits` (every sample after the key up to it within bounds),
/// by gallop (from the last step's length, doubling) and bisection, never
/// stepping over a sample in `must`. One key
/// when `fits(0, None)` (constant within bounds) and nothing is a must.
/// Cost: O(K log L) calls of `fits` for K kept keys `L` samples apart.
fn simplify(m: usize, must: &[bool], mut fits: impl FnMut(usize, Option<usize>) -> bool) -> Vec<usize> {
    if m < 2 {
        return (0..m).collect();
    }
    if !must[1..].iter().any(|&x| x) && fits(0, None) {
        return vec![0];
    }
    // The first must at or after each sample (m: none).
    let mut next_must = vec![m; m + 1];
    for k in (0..m).rev() {
        next_must[k] = if must[k] { k } else { next_must[k + 1] };
    }
    let mut kept = vec![0];
    let mut a0 = 0;
    // The last step, where the gallop starts (steps change slowly).
    let mut step = 2;
    while a0 + 1 < m {
        let limit = match next_must[a0 + 1] {
            k if k < m => k,
            _ => m - 1,
        };
        // Gallop: lo fits (or is the next sample), hi does not (or is past
        // the limit).
        let (mut lo, mut hi) = (a0 + 1, limit + 1);
        let mut len = step.clamp(2, (limit - a0).max(2));
        while a0 + len <= limit {
            if fits(a0, Some(a0 + len)) {
                lo = a0 + len;
                len *= 2;
            } else {
                hi = a0 + len;
                break;
            }
        }
        if hi == limit + 1 && lo < limit {
            if fits(a0, Some(limit)) {
                lo = limit;
            } else {
                hi = limit;
            }
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if fits(a0, Some(mid)) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        kept.push(lo);
        step = lo - a0;
        a0 = lo;
    }
    kept
}

/// φ at a foot's joints: the part of the feet's position and contact bounds
/// that the root (the first group moving them) may use; the legs below get
/// the rest. Measured on the shipped patches: 0.5 → 0.95 saves 8 % of the
/// keys.
pub(crate) const ROOT_SHARE: f64 = 0.95;

/// φ at other extremities (head, hands): the part of the position bound the
/// first group moving them may use.
pub(crate) const OTHER_SHARE: f64 = 0.5;

/// Reduces the joint tracks of the samples `window` (indices into the
/// agent's samples, at play times `times` `[s]`, strictly increasing) of
/// agent `agent` of `sk` within `tol`, per channel; `played` gives what a
/// player decodes of the rotations and translations written (quantised, or
/// also filtered by a compressor).
pub(crate) fn reduce(
    sk: &SkeletalAnimation,
    agent: usize,
    window: &[usize],
    times: &[f64],
    tol: &KeyTolerance,
    written: &Played,
) -> Reduced {
    let played = &Played::plain();
    let c = &sk.character;
    let a = &sk.agents[agent];
    let n = c.joints.len();
    let m = window.len();
    if m < 2 {
        let all: Vec<usize> = (0..m).collect();
        return Reduced {
            rotation: vec![all.clone(); n],
            translation: vec![all; n],
            position_error: 0.0,
            rotation_error: 0.0,
            contact_error: 0.0,
        };
    }
    let parents: Vec<Option<usize>> = c.joints.iter().map(|j| j.parent).collect();
    let scales: Vec<[f64; 3]> = c.joints.iter().map(|j| j.scale).collect();
    // ancestor[x][j]: j is x or an ancestor of x.
    let mut ancestor = vec![vec![false; n]; n];
    for x in 0..n {
        ancestor[x][x] = true;
        if let Some(p) = parents[x] {
            let (lo, hi) = ancestor.split_at_mut(x);
            for (j, &is) in lo[p].iter().enumerate() {
                hi[0][j] |= is;
            }
        }
    }
    // Joints of each foot: the foot joint and its descendants.
    let mut foot_of = vec![None::<usize>; n];
    for (side, &f) in [c.left_foot, c.right_foot].iter().enumerate() {
        foot_of[f] = Some(side);
    }
    for j in 0..n {
        if foot_of[j].is_none() {
            foot_of[j] = parents[j].and_then(|p| foot_of[p]);
        }
    }
    // Extremities: leaf joints and the feet (their position is bounded).
    let mut extremity: Vec<bool> = (0..n).map(|j| !parents.contains(&Some(j))).collect();
    extremity[c.left_foot] = true;
    extremity[c.right_foot] = true;
    // The arrays of m · n values, in the thread's scratch (their pages
    // stay mapped from one instance to the next).
    let mut scratch = SCRATCH.with(|s| s.take());
    let Scratch { baked_q, played_q, baked_t, played_t, world, local_q, local_t, wp, wq } = &mut scratch;
    // Baked and played values, and the baked world positions.
    baked_q.clear();
    baked_q.extend(window.iter().flat_map(|&w| (0..n).map(move |j| normalise(a.rotations[w * n + j].map(f64::from)))));
    played_q.clear();
    played_q.extend(
        window
            .iter()
            .flat_map(|&w| (0..n).map(move |j| normalise(dequantise(played.rotation(a.rotations[w * n + j]))))),
    );
    baked_t.clear();
    baked_t.extend(window.iter().flat_map(|&w| (0..n).map(move |j| a.translations[w * n + j].map(f64::from))));
    played_t.clear();
    played_t.extend(
        window.iter().flat_map(|&w| (0..n).map(move |j| played.translation(a.translations[w * n + j]).map(f64::from))),
    );
    let (baked_q, played_q, baked_t, played_t) = (&*baked_q, &*played_q, &*baked_t, &*played_t);
    let (mut p, mut q, mut s) = (vec![[0.0; 3]; n], vec![[0.0; 4]; n], vec![[0.0; 3]; n]);
    world.clear();
    world.resize(m * n, [0.0; 3]);
    for k in 0..m {
        fk(&parents, &scales, |j| baked_q[k * n + j], |j| baked_t[k * n + j], &mut p, &mut q, &mut s);
        world[k * n..(k + 1) * n].copy_from_slice(&p);
    }
    // Which feet each sample has planted, and the samples nearest each
    // plant and lift, per foot.
    let eps = 1e-9;
    let mut planted = vec![[false; 2]; m];
    let mut event = vec![[false; 2]; m];
    let agent_t: Vec<f64> = window.iter().map(|&w| a.times[w]).collect();
    // Runs of samples in the agent's time order: one, or two where a first
    // instance also shows the last window (its later samples come first).
    let cut = (1..m).find(|&k| agent_t[k] < agent_t[k - 1]).unwrap_or(m);
    for f in &a.footsteps {
        let side = f.foot.index();
        for (k, &t) in agent_t.iter().enumerate() {
            if f.t - eps <= t && t <= f.lift + eps {
                planted[k][side] = true;
            }
        }
        for (lo, run) in [(0, &agent_t[..cut]), (cut, &agent_t[cut..])] {
            let n = run.len();
            for e in [f.t, f.lift] {
                if n > 0 && e >= run[0] && e <= run[n - 1] {
                    let i = run.partition_point(|&t| t < e);
                    let near = if i > 0 && (i == n || e - run[i - 1] < run[i] - e) { i - 1 } else { i };
                    event[lo + near][side] = true;
                }
            }
        }
    }
    // The channels whose baked values change over the window (the others
    // hold their first sample: no channel is written).
    let mut channels: Vec<Channel> = Vec::with_capacity(2 * n);
    for j in 0..n {
        let (r0, t0) = (a.rotations[window[0] * n + j], a.translations[window[0] * n + j]);
        if window.iter().any(|&w| (0..4).any(|i| (a.rotations[w * n + j][i] - r0[i]).abs() > 1e-7)) {
            channels.push(Channel { joint: j, property: Property::Rotation });
        }
        if window.iter().any(|&w| (0..3).any(|i| (a.translations[w * n + j][i] - t0[i]).abs() > 1e-7)) {
            channels.push(Channel { joint: j, property: Property::Translation });
        }
    }
    // moves(ch, x): channel `ch` moves the position of joint `x`.
    let moves = |ch: &Channel, x: usize| match ch.property {
        Property::Rotation => x != ch.joint && ancestor[x][ch.joint],
        Property::Translation => ancestor[x][ch.joint],
    };
    let moves_side = |ch: &Channel, side: usize| (0..n).any(|x| foot_of[x] == Some(side) && moves(ch, x));
    // The groups, in the order they are reduced (each after those driving
    // its ancestors): the root (channels that move both feet), one group
    // per leg (channels that move one foot), then every other channel on
    // its own, parents first.
    let mut groups: Vec<Group> = Vec::new();
    let mut grouped = vec![false; channels.len()];
    let mut push_group = |ids: Vec<usize>, events: [bool; 2], grouped: &mut Vec<bool>| {
        if let Some(top) = ids.iter().map(|&i| channels[i].joint).min() {
            ids.iter().for_each(|&i| grouped[i] = true);
            groups.push(Group { channels: ids, top, events });
        }
    };
    let root: Vec<usize> =
        (0..channels.len()).filter(|&i| moves_side(&channels[i], 0) && moves_side(&channels[i], 1)).collect();
    push_group(root, [true, true], &mut grouped);
    for side in 0..2 {
        let ids: Vec<usize> = (0..channels.len()).filter(|&i| !grouped[i] && moves_side(&channels[i], side)).collect();
        let mut events = [false; 2];
        events[side] = true;
        push_group(ids, events, &mut grouped);
    }
    let mut rest: Vec<usize> = (0..channels.len()).filter(|&i| !grouped[i]).collect();
    rest.sort_by_key(|&i| channels[i].joint);
    for i in rest {
        push_group(vec![i], [false; 2], &mut grouped);
    }
    // Bounds per (group, joint): the position and contact error the joint
    // may show once the group is reduced (squared). The groups moving a
    // joint share its bounds in order: the i-th of N may bring the error
    // up to (φ + (1 − φ)(i − 1)/(N − 1)) of the bound, the last one to all
    // of it; φ is ROOT_SHARE for a foot's joints, OTHER_SHARE for others.
    let mut bound2 = vec![vec![(0.0f64, 0.0f64); n]; groups.len()];
    for x in 0..n {
        let movers: Vec<usize> =
            (0..groups.len()).filter(|&g| groups[g].channels.iter().any(|&i| moves(&channels[i], x))).collect();
        let count = movers.len();
        for (r, &g) in movers.iter().enumerate() {
            let phi = if foot_of[x].is_some() { ROOT_SHARE } else { OTHER_SHARE };
            let f = if count == 1 { 1.0 } else { phi + (1.0 - phi) * r as f64 / (count - 1) as f64 };
            bound2[g][x] = ((f * tol.position).powi(2), (f * tol.contact).powi(2));
        }
    }
    // The pose as played so far: chosen groups from their keys, the others
    // at their quantised samples (as at their keys); world transforms.
    local_q.clear();
    local_q.extend_from_slice(played_q);
    local_t.clear();
    local_t.extend_from_slice(played_t);
    for j in 0..n {
        if !channels.iter().any(|ch| ch.joint == j && ch.property == Property::Rotation) {
            for k in 0..m {
                local_q[k * n + j] = baked_q[j];
            }
        }
        if !channels.iter().any(|ch| ch.joint == j && ch.property == Property::Translation) {
            for k in 0..m {
                local_t[k * n + j] = baked_t[j];
            }
        }
    }
    // World scale of each joint (constant: scales are not animated).
    let mut wscale = vec![[1.0; 3]; n];
    for x in 0..n {
        wscale[x] = match parents[x] {
            Some(px) => std::array::from_fn(|v| wscale[px][v] * scales[x][v]),
            None => scales[x],
        };
    }
    wp.clear();
    wp.resize(m * n, [0.0; 3]);
    wq.clear();
    wq.resize(m * n, [0.0; 4]);
    // World transforms of the joints of the subtree of `top` (all joints
    // for None) at every sample, from the local values.
    let pose =
        |top: Option<usize>, local_q: &[[f64; 4]], local_t: &[[f64; 3]], wp: &mut [[f64; 3]], wq: &mut [[f64; 4]]| {
            let joints: Vec<usize> = (top.unwrap_or(0)..n).filter(|&x| top.is_none_or(|t| ancestor[x][t])).collect();
            for k in 0..m {
                for &x in &joints {
                    let (r, t) = (local_q[k * n + x], local_t[k * n + x]);
                    let i = k * n + x;
                    match parents[x] {
                        Some(px) => {
                            let (pp, pq, ps) = (wp[k * n + px], wq[k * n + px], wscale[px]);
                            let d = rotate(pq, std::array::from_fn(|v| t[v] * ps[v]));
                            wp[i] = std::array::from_fn(|v| pp[v] + d[v]);
                            wq[i] = mul(pq, r);
                        }
                        None => (wp[i], wq[i]) = (t, r),
                    }
                }
            }
        };
    pose(None, local_q, local_t, wp, wq);
    let min_cos = (tol.rotation / 2.0).cos();
    let mut kept_of: Vec<Vec<usize>> = vec![vec![0]; channels.len()];
    for (g, group) in groups.iter().enumerate() {
        let sub: Vec<usize> = (group.top..n).filter(|&x| ancestor[x][group.top]).collect();
        let checked: Vec<usize> = sub
            .iter()
            .copied()
            .filter(|&x| {
                (extremity[x] || foot_of[x].is_some()) && group.channels.iter().any(|&i| moves(&channels[i], x))
            })
            .collect();
        let must: Vec<bool> =
            (0..m).map(|k| k == m - 1 || (0..2).any(|side| group.events[side] && event[k][side])).collect();
        let (mut gp, mut gq) = (vec![[0.0; 3]; n], vec![[0.0; 4]; n]);
        // The group's channels of each joint of the subtree: (rotation,
        // translation) slots.
        let mut slot_of = vec![(None::<usize>, None::<usize>); n];
        for (slot, &i) in group.channels.iter().enumerate() {
            let ch = channels[i];
            match ch.property {
                Property::Rotation => slot_of[ch.joint].0 = Some(slot),
                Property::Translation => slot_of[ch.joint].1 = Some(slot),
            }
        }
        // Per slot: the keys' values (rotations on the same hemisphere) and
        // the arc between them.
        let mut ends = vec![([0.0; 4], [0.0; 4], 0.0, 0.0); group.channels.len()];
        // A group whose channels all drive one joint j (its rotation, its
        // translation or both: a single channel, or the root's hips) needs
        // no forward kinematics: turning j's local rotation from r₀ (the
        // pose as played so far) to r turns its whole subtree rigidly about
        // j by the world rotation Δ = (q_parent r)(q_parent r₀)⁻¹, and
        // moving its local translation moves the subtree with j, so a joint
        // x below moves to j' + Δ(x − j). Per sample and checked joint: the
        // offset x − j and x's error in that pose.
        let single = {
            let j = channels[group.channels[0]].joint;
            group.channels.iter().all(|&i| channels[i].joint == j).then_some(j)
        };
        let rigid: Vec<([f64; 3], [f64; 3])> = match single {
            Some(j) => (0..m)
                .flat_map(|k| checked.iter().map(move |&x| (k, x)))
                .map(|(k, x)| {
                    let (px, pj, w) = (wp[k * n + x], wp[k * n + j], world[k * n + x]);
                    (std::array::from_fn(|v| px[v] - pj[v]), std::array::from_fn(|v| px[v] - w[v]))
                })
                .collect(),
            None => Vec::new(),
        };
        // The rigid test in its own arithmetic: a hair inside the bounds.
        let inside = 1.0 - 1e-9;
        let kept = simplify(m, &must, |a0, c0| {
            // The group's channels between keys a0 and c0 (None: held at
            // their baked sample 0).
            if let Some(c0) = c0 {
                for (slot, &i) in group.channels.iter().enumerate() {
                    let j = channels[i].joint;
                    if channels[i].property == Property::Rotation {
                        let (qa, mut qc) = (played_q[a0 * n + j], played_q[c0 * n + j]);
                        if dot(qa, qc) < 0.0 {
                            qc = qc.map(|v| -v);
                        }
                        let th = dot(qa, qc).min(1.0).acos();
                        ends[slot] = (qa, qc, th, th.sin());
                    }
                }
            }
            // Whether sample k is within every bound.
            let mut within = |k: usize| -> bool {
                let u = c0.map_or(0.0, |c0| (times[k] - times[a0]) / (times[c0] - times[a0]));
                // Joint j's rotation as the group plays it in `slot` (held at
                // its baked sample 0 when unkeyed); None when it turns past
                // the rotation bound.
                let rotation = |slot: usize, j: usize| -> Option<[f64; 4]> {
                    let r = match c0 {
                        None => baked_q[j],
                        Some(_) => {
                            let (qa, qc, th, sn) = ends[slot];
                            slerp_pre(qa, qc, th, sn, u)
                        }
                    };
                    if dot(r, baked_q[k * n + j]).abs() < min_cos { None } else { Some(r) }
                };
                if let Some(j) = single {
                    let parent = parents[j].map_or([0.0, 0.0, 0.0, 1.0], |p| wq[k * n + p]);
                    // The turn of the subtree, when the group turns j.
                    let turn = match slot_of[j].0 {
                        Some(slot) => {
                            let Some(r) = rotation(slot, j) else { return false };
                            let old = wq[k * n + j];
                            Some(mul(mul(parent, r), [-old[0], -old[1], -old[2], old[3]]))
                        }
                        None => None,
                    };
                    // The move of j, when the group moves it.
                    let shift: Option<[f64; 3]> = slot_of[j].1.map(|_| {
                        let t = match c0 {
                            None => baked_t[j],
                            Some(c0) => {
                                let (ta, tc) = (played_t[a0 * n + j], played_t[c0 * n + j]);
                                std::array::from_fn(|v| ta[v] + (tc[v] - ta[v]) * u)
                            }
                        };
                        let at: [f64; 3] = match parents[j] {
                            Some(px) => {
                                let (pp, ps) = (wp[k * n + px], wscale[px]);
                                let d = rotate(parent, std::array::from_fn(|v| t[v] * ps[v]));
                                std::array::from_fn(|v| pp[v] + d[v])
                            }
                            None => t,
                        };
                        let old = wp[k * n + j];
                        std::array::from_fn(|v| at[v] - old[v])
                    });
                    return checked.iter().enumerate().all(|(xi, &x)| {
                        let (o, e) = rigid[k * checked.len() + xi];
                        let moved = turn.map_or(o, |turn| rotate(turn, o));
                        let d: [f64; 3] = match shift {
                            None => std::array::from_fn(|v| e[v] + moved[v] - o[v]),
                            Some(sh) => std::array::from_fn(|v| e[v] + sh[v] + moved[v] - o[v]),
                        };
                        let (pos2, contact2) = bound2[g][x];
                        let over_p = extremity[x] && d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > pos2 * inside;
                        let over_c = foot_of[x].is_some_and(|side| planted[k][side])
                            && d[0] * d[0] + d[2] * d[2] > contact2 * inside;
                        !over_p && !over_c
                    });
                }
                for x in sub.iter().copied() {
                    let (mut r, mut t) = (local_q[k * n + x], local_t[k * n + x]);
                    if let Some(slot) = slot_of[x].0 {
                        let Some(q) = rotation(slot, x) else { return false };
                        r = q;
                    }
                    if slot_of[x].1.is_some() {
                        t = match c0 {
                            None => baked_t[x],
                            Some(c0) => {
                                let (ta, tc) = (played_t[a0 * n + x], played_t[c0 * n + x]);
                                std::array::from_fn(|v| ta[v] + (tc[v] - ta[v]) * u)
                            }
                        };
                    }
                    // Forward kinematics of the subtree from the parent's
                    // world transform as played.
                    match parents[x] {
                        Some(px) => {
                            let (pp, pq) = if ancestor[px][group.top] {
                                (gp[px], gq[px])
                            } else {
                                (wp[k * n + px], wq[k * n + px])
                            };
                            let d = rotate(pq, std::array::from_fn(|v| t[v] * wscale[px][v]));
                            gp[x] = std::array::from_fn(|v| pp[v] + d[v]);
                            gq[x] = mul(pq, r);
                        }
                        None => (gp[x], gq[x]) = (t, r),
                    }
                }
                checked.iter().all(|&x| {
                    let w = world[k * n + x];
                    let d: [f64; 3] = std::array::from_fn(|v| gp[x][v] - w[v]);
                    let (pos2, contact2) = bound2[g][x];
                    let over_p = extremity[x] && d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > pos2;
                    let over_c =
                        foot_of[x].is_some_and(|side| planted[k][side]) && d[0] * d[0] + d[2] * d[2] > contact2;
                    !over_p && !over_c
                })
            };
            let (lo, hi) = match c0 {
                Some(c0) => (a0 + 1, c0 + 1),
                None => (1, m),
            };
            // The middle first (where linear playback strays most), then
            // every other sample.
            let mid = (lo + hi) / 2;
            if hi > lo && !within(mid) {
                return false;
            }
            (lo..hi).filter(|&k| k != mid).all(&mut within)
        });
        // Play the group from its keys.
        for &i in &group.channels {
            let ch = channels[i];
            let j = ch.joint;
            if kept.len() == 1 {
                for k in 0..m {
                    match ch.property {
                        Property::Rotation => local_q[k * n + j] = baked_q[j],
                        Property::Translation => local_t[k * n + j] = baked_t[j],
                    }
                }
            } else {
                for (w, pair) in kept.windows(2).enumerate() {
                    let (a0, c0) = (pair[0], pair[1]);
                    let last = usize::from(w + 2 == kept.len());
                    // The arc between the keys, once per key pair.
                    let (qa, mut qc) = (played_q[a0 * n + j], played_q[c0 * n + j]);
                    if dot(qa, qc) < 0.0 {
                        qc = qc.map(|v| -v);
                    }
                    let th = dot(qa, qc).min(1.0).acos();
                    let sn = th.sin();
                    for k in a0..c0 + last {
                        let u = (times[k] - times[a0]) / (times[c0] - times[a0]);
                        match ch.property {
                            Property::Rotation => {
                                local_q[k * n + j] = slerp_pre(qa, qc, th, sn, u);
                            }
                            Property::Translation => {
                                let (ta, tc) = (played_t[a0 * n + j], played_t[c0 * n + j]);
                                local_t[k * n + j] = std::array::from_fn(|v| ta[v] + (tc[v] - ta[v]) * u);
                            }
                        }
                    }
                }
            }
            kept_of[i].clone_from(&kept);
        }
        pose(Some(group.top), local_q, local_t, wp, wq);
    }
    // A compressed file plays the same keys through its filters (which move
    // a rotation by about 10⁻⁵ rad, a translation by up to 0.06 mm, a key
    // time by a microsecond): play its own values at every sample, and where a
    // bound fails, make that sample a key of every group moving the joint
    // (the file then holds the plain file's keys and these few more).
    if !written.is_plain() {
        let key_t: Vec<f64> = times.iter().map(|&t| f64::from(written.time(t as f32))).collect();
        let value_q: Vec<[f64; 4]> = window
            .iter()
            .flat_map(|&w| (0..n).map(move |j| normalise(dequantise(written.rotation(a.rotations[w * n + j])))))
            .collect();
        let value_t: Vec<[f64; 3]> = window
            .iter()
            .flat_map(|&w| (0..n).map(move |j| written.translation(a.translations[w * n + j]).map(f64::from)))
            .collect();
        let (pos2, contact2) = (tol.position * tol.position, tol.contact * tol.contact);
        for _ in 0..m {
            for (i, ch) in channels.iter().enumerate() {
                let kept = &kept_of[i];
                let j = ch.joint;
                if kept.len() < 2 {
                    continue;
                }
                let mut at = 0;
                // The arc of the key pair at `at` (made when `at` moves).
                let arc = |at: usize| {
                    let (a0, c0) = (kept[at], kept[at + 1]);
                    let (qa, mut qc) = (value_q[a0 * n + j], value_q[c0 * n + j]);
                    if dot(qa, qc) < 0.0 {
                        qc = qc.map(|v| -v);
                    }
                    let th = dot(qa, qc).min(1.0).acos();
                    (qa, qc, th, th.sin())
                };
                let mut ends = (ch.property == Property::Rotation).then(|| arc(0));
                for k in 0..m {
                    // Sample k as played at its own written time: a key
                    // is then exactly its written value, so that enough
                    // repairs always meet the bounds (the baked motion
                    // itself may turn faster than the filter's time step,
                    // e.g. at a lift-off a few microseconds after a
                    // sample).
                    while at + 2 < kept.len() && key_t[kept[at + 1]] <= key_t[k] {
                        at += 1;
                        if ends.is_some() {
                            ends = Some(arc(at));
                        }
                    }
                    let (a0, c0) = (kept[at], kept[at + 1]);
                    let u = ((key_t[k] - key_t[a0]) / (key_t[c0] - key_t[a0])).clamp(0.0, 1.0);
                    match ch.property {
                        Property::Rotation => {
                            let (qa, qc, th, sn) = ends.unwrap_or_else(|| arc(at));
                            local_q[k * n + j] = slerp_pre(qa, qc, th, sn, u);
                        }
                        Property::Translation => {
                            let (ta, tc) = (value_t[a0 * n + j], value_t[c0 * n + j]);
                            local_t[k * n + j] = std::array::from_fn(|v| ta[v] + (tc[v] - ta[v]) * u);
                        }
                    }
                }
            }
            pose(None, local_q, local_t, wp, wq);
            let mut added = false;
            for k in 0..m {
                for x in 0..n {
                    let d: [f64; 3] = std::array::from_fn(|v| wp[k * n + x][v] - world[k * n + x][v]);
                    let over = (extremity[x] && d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > pos2)
                        || (foot_of[x].is_some_and(|side| planted[k][side]) && d[0] * d[0] + d[2] * d[2] > contact2);
                    let turned = channels.iter().any(|ch| {
                        ch.joint == x
                            && ch.property == Property::Rotation
                            && dot(local_q[k * n + x], baked_q[k * n + x]).abs() < min_cos
                    });
                    if !over && !turned {
                        continue;
                    }
                    for group in groups.iter().rev() {
                        let relevant = group.channels.iter().any(|&i| {
                            (over && moves(&channels[i], x))
                                || (turned && channels[i].joint == x && channels[i].property == Property::Rotation)
                        });
                        let first = group.channels[0];
                        if !relevant || kept_of[first].len() < 2 {
                            continue;
                        }
                        if let Err(at) = kept_of[first].binary_search(&k) {
                            for &i in &group.channels {
                                kept_of[i].insert(at, k);
                            }
                            added = true;
                        }
                    }
                }
            }
            if !added {
                break;
            }
        }
    }
    // Measure every sample as played from the kept keys.
    let mut out = Reduced {
        rotation: vec![vec![0]; n],
        translation: vec![vec![0]; n],
        position_error: 0.0,
        rotation_error: 0.0,
        contact_error: 0.0,
    };
    let mut cos_r = 1.0f64;
    for k in 0..m {
        for x in 0..n {
            cos_r = cos_r.min(dot(local_q[k * n + x], baked_q[k * n + x]).abs());
            let (u, v) = (wp[k * n + x], world[k * n + x]);
            let d: [f64; 3] = std::array::from_fn(|i| u[i] - v[i]);
            if extremity[x] {
                out.position_error = out.position_error.max((d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt());
            }
            if foot_of[x].is_some_and(|side| planted[k][side]) {
                out.contact_error = out.contact_error.max((d[0] * d[0] + d[2] * d[2]).sqrt());
            }
        }
    }
    out.rotation_error = 2.0 * cos_r.min(1.0).acos();
    for (i, ch) in channels.iter().enumerate() {
        let kept = std::mem::take(&mut kept_of[i]);
        match ch.property {
            Property::Rotation => out.rotation[ch.joint] = kept,
            Property::Translation => out.translation[ch.joint] = kept,
        }
    }
    SCRATCH.with(|s| s.set(scratch));
    out
}

/// The arrays of one instance's [`reduce`] (samples × joints), kept per
/// thread between instances.
#[derive(Default)]
struct Scratch {
    baked_q: Vec<[f64; 4]>,
    played_q: Vec<[f64; 4]>,
    baked_t: Vec<[f64; 3]>,
    played_t: Vec<[f64; 3]>,
    world: Vec<[f64; 3]>,
    local_q: Vec<[f64; 4]>,
    local_t: Vec<[f64; 3]>,
    wp: Vec<[f64; 3]>,
    wq: Vec<[f64; 4]>,
}

thread_local! {
    static SCRATCH: std::cell::Cell<Scratch> = std::cell::Cell::new(Scratch::default());
}

#[cfg(test)]
mod tests {
    use super::*;

    use crowdpatch_runtime::skeletal::{AgentAnimation, Character, CharacterJoint, Foot, Footstep};

    use crate::played::quantise;

    /// Hips swaying, turning and bobbing, two legs swinging, an arm
    /// swinging, feet held level; the left foot planted from 0.4 s to 1.1 s:
    /// `m` samples over 2 s.
    fn walker(m: usize) -> (SkeletalAnimation, Vec<f64>) {
        let joint = |name: &str, parent, t: [f64; 3]| CharacterJoint {
            name: name.into(),
            parent,
            translation: t,
            rotation: [0.0, 0.0, 0.0, 1.0],
            scale: [1.0; 3],
            inverse_bind: [0.0; 16],
        };
        let character = Character {
            name: "test".into(),
            joints: vec![
                joint("hips", None, [0.0, 0.9, 0.0]),
                joint("leg_l", Some(0), [0.1, 0.0, 0.0]),
                joint("foot_l", Some(1), [0.0, -0.85, 0.0]),
                joint("leg_r", Some(0), [-0.1, 0.0, 0.0]),
                joint("foot_r", Some(3), [0.0, -0.85, 0.0]),
                joint("arm", Some(0), [0.2, 0.5, 0.0]),
                joint("hand", Some(5), [0.0, -0.6, 0.0]),
            ],
            left_foot: 2,
            right_foot: 4,
            hips: 0,
            height: 1.75,
            primitives: vec![],
            hip_joints: [1, 3],
            leg_length: 0.85,
        };
        // Play times as a file holds them (f32).
        let times: Vec<f64> = (0..m).map(|k| f64::from((2.0 * k as f64 / (m - 1) as f64) as f32)).collect();
        let about_x = |a: f64| [(a / 2.0).sin() as f32, 0.0, 0.0, (a / 2.0).cos() as f32];
        let about_y = |a: f64| [0.0, (a / 2.0).sin() as f32, 0.0, (a / 2.0).cos() as f32];
        let (mut rotations, mut translations) = (Vec::new(), Vec::new());
        for &t in &times {
            let w = std::f64::consts::TAU * t;
            rotations.extend([
                about_y(0.2 * w.sin()),
                about_x(0.5 * w.sin()),
                about_x(0.0),
                about_x(-0.5 * w.sin()),
                about_x(0.0),
                about_x(0.3 * w.cos()),
                about_x(0.0),
            ]);
            translations.extend([
                [0.0, (0.9 + 0.02 * (2.0 * w).cos()) as f32, 0.0],
                [0.1, 0.0, 0.0],
                [0.0, -0.85, 0.0],
                [-0.1, 0.0, 0.0],
                [0.0, -0.85, 0.0],
                [0.2, 0.5, 0.0],
                [0.0, -0.6, 0.0],
            ]);
        }
        let footsteps = vec![Footstep { t: 0.4, foot: Foot::Left, position: [0.0, 0.0], heading: 0.0, lift: 1.1 }];
        let agent = AgentAnimation { footsteps, times: times.clone(), translations, rotations };
        (SkeletalAnimation { character, sample_interval: 2.0 / (m - 1) as f64, agents: vec![agent] }, times)
    }

    /// Errors (position of extremities, horizontal position of the planted
    /// left foot, local rotation) of the keys of `r` played as `written`
    /// would at every sample: an independent player of the kept keys.
    fn play(sk: &SkeletalAnimation, times: &[f64], r: &Reduced, written: &Played) -> (f64, f64, f64) {
        let a = &sk.agents[0];
        let n = sk.character.joints.len();
        let parents: Vec<Option<usize>> = sk.character.joints.iter().map(|j| j.parent).collect();
        let scales = vec![[1.0; 3]; n];
        let key_t: Vec<f64> = times.iter().map(|&t| f64::from(written.time(t as f32))).collect();
        let q = |k: usize, j: usize| normalise(dequantise(written.rotation(a.rotations[k * n + j])));
        let t = |k: usize, j: usize| written.translation(a.translations[k * n + j]).map(f64::from);
        let baked_q = |k: usize, j: usize| normalise(a.rotations[k * n + j].map(f64::from));
        let baked_t = |k: usize, j: usize| a.translations[k * n + j].map(f64::from);
        let (mut pos, mut contact, mut rot) = (0.0f64, 0.0f64, 0.0f64);
        let (mut p, mut pq, mut ps) = (vec![[0.0; 3]; n], vec![[0.0; 4]; n], vec![[0.0; 3]; n]);
        let (mut w, mut wq, mut ws) = (vec![[0.0; 3]; n], vec![[0.0; 4]; n], vec![[0.0; 3]; n]);
        // Each sample is played at its own written time.
        for (k, &tk) in key_t.iter().enumerate() {
            // The keys around tk.
            let around = |kept: &[usize]| {
                let i = kept.iter().rposition(|&c| key_t[c] <= tk).unwrap_or(0).min(kept.len() - 2);
                let (a0, c0) = (kept[i], kept[i + 1]);
                (a0, c0, ((tk - key_t[a0]) / (key_t[c0] - key_t[a0])).clamp(0.0, 1.0))
            };
            let local_q: Vec<[f64; 4]> = (0..n)
                .map(|j| match r.rotation[j][..] {
                    [k0] => baked_q(k0, j),
                    ref kept => {
                        let (a0, c0, u) = around(kept);
                        let (qa, mut qc) = (q(a0, j), q(c0, j));
                        if dot(qa, qc) < 0.0 {
                            qc = qc.map(|x| -x);
                        }
                        let th = dot(qa, qc).min(1.0).acos();
                        slerp_pre(qa, qc, th, th.sin(), u)
                    }
                })
                .collect();
            let local_t: Vec<[f64; 3]> = (0..n)
                .map(|j| match r.translation[j][..] {
                    [k0] => baked_t(k0, j),
                    ref kept => {
                        let (a0, c0, u) = around(kept);
                        let (ta, tc) = (t(a0, j), t(c0, j));
                        std::array::from_fn(|i| ta[i] + (tc[i] - ta[i]) * u)
                    }
                })
                .collect();
            fk(&parents, &scales, |j| local_q[j], |j| local_t[j], &mut p, &mut pq, &mut ps);
            fk(&parents, &scales, |j| baked_q(k, j), |j| baked_t(k, j), &mut w, &mut wq, &mut ws);
            for j in 0..n {
                rot = rot.max(angle(local_q[j], baked_q(k, j)));
                let d: [f64; 3] = std::array::from_fn(|i| p[j][i] - w[j][i]);
                if [2, 4, 6].contains(&j) {
                    pos = pos.max((d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt());
                }
                if j == 2 && (0.4..=1.1).contains(&a.times[k]) {
                    contact = contact.max((d[0] * d[0] + d[2] * d[2]).sqrt());
                }
            }
        }
        (pos, contact, rot)
    }

    #[test]
    fn reduced_keys_hold_every_bound_at_every_sample_and_report_what_they_show() {
        let (sk, times) = walker(241);
        let window: Vec<usize> = (0..times.len()).collect();
        for tol in [
            KeyTolerance::default(),
            KeyTolerance { position: 0.005, rotation: 0.05, contact: 0.001 },
            // Near the floor of the 16-bit rotations (about 3·10⁻⁵ m at 1 m).
            KeyTolerance { position: 2e-4, rotation: 2e-3, contact: 5e-5 },
        ] {
            let r = reduce(&sk, 0, &window, &times, &tol, &Played::plain());
            for kept in r.rotation.iter().chain(&r.translation) {
                assert_eq!(kept.first(), Some(&0));
                assert!(kept.len() == 1 || kept.last() == Some(&240), "{kept:?}");
                assert!(kept.windows(2).all(|w| w[0] < w[1]));
            }
            let (pos, contact, rot) = play(&sk, &times, &r, &Played::plain());
            assert!(pos <= tol.position && contact <= tol.contact && rot <= tol.rotation + 1e-12, "{tol:?}: {r:?}");
            // The errors reported are the errors shown.
            assert!((pos - r.position_error).abs() < 1e-9, "{pos} vs {}", r.position_error);
            assert!((contact - r.contact_error).abs() < 1e-9, "{contact} vs {}", r.contact_error);
            assert!((rot - r.rotation_error).abs() < 1e-6, "{rot} vs {}", r.rotation_error);
        }
    }

    #[test]
    fn legs_share_their_keys_the_arm_keeps_fewer_and_level_feet_keep_none() {
        let (sk, times) = walker(241);
        let window: Vec<usize> = (0..times.len()).collect();
        let r = reduce(&sk, 0, &window, &times, &KeyTolerance::default(), &Played::plain());
        // The root (hips rotation and translation) moves both feet: one list.
        assert_eq!(r.rotation[0], r.translation[0]);
        // Feet held level, hand and constant translations: no keys.
        for j in [2, 4, 6] {
            assert_eq!(r.rotation[j], vec![0], "joint {j}");
        }
        assert!((1..7).all(|j| r.translation[j] == vec![0]));
        // The plant (0.4 s) and the lift (1.1 s) are keys of the left leg
        // and of the root.
        for kept in [&r.rotation[1], &r.rotation[0]] {
            assert!(kept.contains(&48) && kept.contains(&132), "{kept:?}");
        }
        // The arm swings smoothly: fewer keys than the legs.
        assert!(r.rotation[5].len() < r.rotation[1].len(), "{} vs {}", r.rotation[5].len(), r.rotation[1].len());
        assert!(r.rotation[1].len() < times.len(), "smooth motion needs fewer keys than samples");
        // Looser bounds keep fewer keys.
        let loose = KeyTolerance { position: 0.01, rotation: 0.1, contact: 0.01 };
        let l = reduce(&sk, 0, &window, &times, &loose, &Played::plain());
        let count = |r: &Reduced| r.rotation.iter().chain(&r.translation).map(Vec::len).sum::<usize>();
        assert!(count(&l) < count(&r), "{} vs {}", count(&l), count(&r));
    }

    #[cfg(feature = "meshopt")]
    #[test]
    fn a_compressed_file_keeps_the_plain_keys_and_its_own_bounds() {
        let (sk, times) = walker(241);
        let window: Vec<usize> = (0..times.len()).collect();
        let written = Played::new(crate::options::Compression::Meshopt, 2.0);
        assert!(written.time_filter_bits().is_some());
        for tol in [KeyTolerance::default(), KeyTolerance { position: 2e-4, rotation: 2e-3, contact: 5e-5 }] {
            let plain = reduce(&sk, 0, &window, &times, &tol, &Played::plain());
            let r = reduce(&sk, 0, &window, &times, &tol, &written);
            for (a, b) in plain.rotation.iter().chain(&plain.translation).zip(r.rotation.iter().chain(&r.translation)) {
                assert!(a.iter().all(|k| b.contains(k)), "{a:?} ⊄ {b:?}");
            }
            let (pos, contact, rot) = play(&sk, &times, &r, &written);
            assert!(pos <= tol.position && contact <= tol.contact && rot <= tol.rotation + 1e-12, "{tol:?}: {r:?}");
            assert!((pos - r.position_error).abs() < 1e-9 && (contact - r.contact_error).abs() < 1e-9);
        }
    }

    #[test]
    fn quantised_rotations_are_within_a_hundredth_of_a_degree() {
        for q in [[0.0f32, 0.0, 0.0, 1.0], [0.5, -0.5, 0.5, 0.5], [0.1, 0.7, -0.2, 0.677]] {
            let n = normalise(q.map(f64::from));
            let back = normalise(dequantise(quantise(n.map(|c| c as f32))));
            assert!(angle(n, back) < 1e-4, "{q:?}: {} rad", angle(n, back));
        }
    }

    #[test]
    fn the_sine_series_matches_the_library() {
        for i in -100..=100 {
            let x = f64::from(i) * 0.006;
            assert!((sin(x) - x.sin()).abs() <= 1e-15, "{x}");
        }
    }
}
