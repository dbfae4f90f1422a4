//! Error-bounded joint tracks: per joint channel, the keys of one
//! instance's window that a player needs to show every joint within a stated
//! error of the baked samples, rotations quantised to normalised 16-bit
//! integers.
//!
//! Every joint channel (rotation or translation of one joint) keeps **its
//! own key times**: an arm that swings smoothly needs far fewer keys than a
//! leg holding a planted foot. The bounds are stated on the skeleton and
//! hold at every baked sample as the player interpolates each channel from
//! its own keys (slerp of the rotations as the player decodes them, lerp of
//! the translations: glTF LINEAR):
//! - every joint's local rotation within [`KeyTolerance::rotation`],
//! - every extremity's position (forward kinematics below the instance
//!   node) within [`KeyTolerance::position`],
//! - the joints of a **planted foot** (the foot joint and those below it,
//!   while a footstep holds it: `Footstep::t ≤ t ≤ Footstep::lift`) within
//!   [`KeyTolerance::contact`] horizontally: an error that changes from key
//!   to key reads as speed, so a planted foot gets a bound far below the
//!   others.
//!
//! How: each channel first gets a tolerance of its own, per sample, from its
//! **lever arm** (the farthest extremity below the joint over the window):
//! an angular error `e` of joint `j` moves an extremity at distance `ℓ` by at
//! most `e ℓ`, so the position budget `P`, shared between the `N` channels
//! that move the extremity, gives `e ≤ s P / (N ℓ)` (and likewise for the
//! contact bound while a foot below is planted; `s` lets each channel start
//! with more than its strict share, as the errors of a chain seldom add up).
//! Each channel is then simplified on its own: from a kept key `a`, the next
//! is the farthest sample `c` such that every sample between them is within
//! the channel's tolerance (a gallop of lengths 2, 4, 8, … then bisection;
//! every accepted interval is checked at every sample inside). Then the
//! whole skeleton is **played** from the kept keys at every sample (forward
//! kinematics), and wherever a bound fails, the tolerances of the channels
//! that move the failing joint are halved over their key interval around
//! that sample and those channels simplified again, until every bound holds
//! (or, below the floor of 16-bit rotations, every sample is kept). This is
//! tolerance-bounded curve simplification per channel (as in ACL and
//! gltfpack) with the error measured on the skeleton. Samples nearest each
//! plant and lift stay keys of the channels that move that foot.
//!
//! Cost: O(c · m log m · L) per pass for c channels, m samples and kept
//! intervals of L samples, plus O(m · n) forward kinematics per pass for n
//! joints; a few passes.

use crowdpatch_runtime::skeletal::SkeletalAnimation;

use crate::options::KeyTolerance;

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

/// A rotation quantised to normalised shorts and back (glTF 2.0 §3.11:
/// `c = round(f · 32767)`, `f = max(c / 32767, −1)`).
pub(crate) fn quantise(q: [f32; 4]) -> [i16; 4] {
    q.map(|c| (c.clamp(-1.0, 1.0) * 32767.0).round() as i16)
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
    let (wa, wb) = (((1.0 - u) * th).sin() / s, (u * th).sin() / s);
    normalise(std::array::from_fn(|k| wa * a[k] + wb * b[k]))
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
/// by gallop and bisection, never stepping over a sample in `must`. One key
/// when `fits(0, None)` (constant within bounds) and nothing is a must.
/// Cost: O(K log L) calls of `fits` for K kept keys `L` samples apart.
fn simplify(m: usize, must: &[bool], mut fits: impl FnMut(usize, Option<usize>) -> bool) -> Vec<usize> {
    if m < 2 {
        return (0..m).collect();
    }
    if !must[1..].iter().any(|&x| x) && fits(0, None) {
        return vec![0];
    }
    let mut kept = vec![0];
    let mut a0 = 0;
    while a0 + 1 < m {
        let limit = (a0 + 1..m).find(|&k| must[k]).unwrap_or(m - 1);
        // Gallop: lo fits (or is the next sample), hi does not (or is past
        // the limit).
        let (mut lo, mut hi) = (a0 + 1, limit + 1);
        let mut len = 2;
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
        a0 = lo;
    }
    kept
}

/// Part of the feet's position and contact bounds that the channels
/// moving both feet (the root) may use; the legs below get the rest.
const ROOT_SHARE: f64 = 0.95;

/// Reduces the joint tracks of the samples `window` (indices into the
/// agent's samples, at play times `times` `[s]`, strictly increasing) of
/// agent `agent` of `sk` within `tol`, per channel; `played` maps a baked
/// rotation to the normalised 16-bit integers a player decodes (quantised,
/// or quantised and filtered by a compressor).
pub(crate) fn reduce(
    sk: &SkeletalAnimation,
    agent: usize,
    window: &[usize],
    times: &[f64],
    tol: &KeyTolerance,
    played: &dyn Fn([f32; 4]) -> [i16; 4],
) -> Reduced {
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
    let root_share = std::env::var("CP_GAMMA").ok().and_then(|v| v.parse().ok()).unwrap_or(ROOT_SHARE);
    let other_share: Option<f64> = std::env::var("CP_PHI").ok().and_then(|v| v.parse().ok());
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
    // Baked and played values, and the baked world positions.
    let baked_q: Vec<[f64; 4]> =
        window.iter().flat_map(|&w| (0..n).map(move |j| normalise(a.rotations[w * n + j].map(f64::from)))).collect();
    let played_q: Vec<[f64; 4]> = window
        .iter()
        .flat_map(|&w| (0..n).map(move |j| normalise(dequantise(played(a.rotations[w * n + j])))))
        .collect();
    let baked_t: Vec<[f64; 3]> =
        window.iter().flat_map(|&w| (0..n).map(move |j| a.translations[w * n + j].map(f64::from))).collect();
    let (mut p, mut q, mut s) = (vec![[0.0; 3]; n], vec![[0.0; 4]; n], vec![[0.0; 3]; n]);
    let mut world = vec![[0.0; 3]; m * n];
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
    for f in &a.footsteps {
        let side = f.foot.index();
        for (k, &t) in agent_t.iter().enumerate() {
            if f.t - eps <= t && t <= f.lift + eps {
                planted[k][side] = true;
            }
        }
        for e in [f.t, f.lift] {
            if e >= agent_t[0] && e <= agent_t[m - 1] {
                let i = agent_t.partition_point(|&t| t < e);
                let near = if i > 0 && (i == m || e - agent_t[i - 1] < agent_t[i] - e) { i - 1 } else { i };
                event[near][side] = true;
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
    // of it; φ is ROOT_SHARE for a foot's joints and 1/N for the others.
    let mut bound2 = vec![vec![(0.0f64, 0.0f64); n]; groups.len()];
    for x in 0..n {
        let movers: Vec<usize> =
            (0..groups.len()).filter(|&g| groups[g].channels.iter().any(|&i| moves(&channels[i], x))).collect();
        let count = movers.len();
        for (r, &g) in movers.iter().enumerate() {
            let phi = if foot_of[x].is_some() { root_share } else { other_share.unwrap_or(1.0 / count as f64) };
            let f = if count == 1 { 1.0 } else { phi + (1.0 - phi) * r as f64 / (count - 1) as f64 };
            bound2[g][x] = ((f * tol.position).powi(2), (f * tol.contact).powi(2));
        }
    }
    // The pose as played so far: chosen groups from their keys, the others
    // at their quantised samples (as at their keys); world transforms.
    let mut local_q: Vec<[f64; 4]> = played_q.clone();
    let local_t: Vec<[f64; 3]> = baked_t.clone();
    let mut local_t = local_t;
    for j in 0..n {
        if !channels.iter().any(|ch| ch.joint == j && ch.property == Property::Rotation) {
            for k in 0..m {
                local_q[k * n + j] = baked_q[j];
            }
        }
    }
    let (mut wp, mut wq, mut ws) = (vec![[0.0; 3]; m * n], vec![[0.0; 4]; m * n], vec![[0.0; 3]; m * n]);
    let mut pose =
        |local_q: &[[f64; 4]], local_t: &[[f64; 3]], wp: &mut [[f64; 3]], wq: &mut [[f64; 4]], ws: &mut [[f64; 3]]| {
            for k in 0..m {
                fk(&parents, &scales, |j| local_q[k * n + j], |j| local_t[k * n + j], &mut p, &mut q, &mut s);
                wp[k * n..(k + 1) * n].copy_from_slice(&p);
                wq[k * n..(k + 1) * n].copy_from_slice(&q);
                ws[k * n..(k + 1) * n].copy_from_slice(&s);
            }
        };
    pose(&local_q, &local_t, &mut wp, &mut wq, &mut ws);
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
        let (mut gp, mut gq, mut gs) = (vec![[0.0; 3]; n], vec![[0.0; 4]; n], vec![[0.0; 3]; n]);
        let mut arcs = vec![(0.0, 0.0); group.channels.len()];
        let kept = simplify(m, &must, |a0, c0| {
            // The group's channels between keys a0 and c0 (None: held at
            // their baked sample 0).
            if let Some(c0) = c0 {
                for (slot, &i) in group.channels.iter().enumerate() {
                    let j = channels[i].joint;
                    if channels[i].property == Property::Rotation {
                        let th = dot(played_q[a0 * n + j], played_q[c0 * n + j]).abs().min(1.0).acos();
                        arcs[slot] = (th, th.sin());
                    }
                }
            }
            let range = match c0 {
                Some(c0) => a0 + 1..c0 + 1,
                None => 1..m,
            };
            for k in range {
                for x in sub.iter().copied() {
                    let (mut r, mut t) = (local_q[k * n + x], local_t[k * n + x]);
                    for (slot, &i) in group.channels.iter().enumerate() {
                        let ch = channels[i];
                        if ch.joint != x {
                            continue;
                        }
                        match (ch.property, c0) {
                            (Property::Rotation, None) => r = baked_q[x],
                            (Property::Translation, None) => t = baked_t[x],
                            (Property::Rotation, Some(c0)) => {
                                let (qa, mut qc) = (played_q[a0 * n + x], played_q[c0 * n + x]);
                                if dot(qa, qc) < 0.0 {
                                    qc = qc.map(|v| -v);
                                }
                                let u = (times[k] - times[a0]) / (times[c0] - times[a0]);
                                r = slerp_pre(qa, qc, arcs[slot].0, arcs[slot].1, u);
                            }
                            (Property::Translation, Some(c0)) => {
                                let (ta, tc) = (baked_t[a0 * n + x], baked_t[c0 * n + x]);
                                let u = (times[k] - times[a0]) / (times[c0] - times[a0]);
                                t = std::array::from_fn(|v| ta[v] + (tc[v] - ta[v]) * u);
                            }
                        }
                        if ch.property == Property::Rotation && dot(r, baked_q[k * n + x]).abs() < min_cos {
                            return false;
                        }
                    }
                    // Forward kinematics of the subtree from the parent's
                    // world transform as played.
                    match parents[x] {
                        Some(px) => {
                            let (pp, pq, ps) = if ancestor[px][group.top] {
                                (gp[px], gq[px], gs[px])
                            } else {
                                (wp[k * n + px], wq[k * n + px], ws[k * n + px])
                            };
                            let d = rotate(pq, std::array::from_fn(|v| t[v] * ps[v]));
                            gp[x] = std::array::from_fn(|v| pp[v] + d[v]);
                            gq[x] = mul(pq, r);
                            gs[x] = std::array::from_fn(|v| ps[v] * scales[x][v]);
                        }
                        None => (gp[x], gq[x], gs[x]) = (t, r, scales[x]),
                    }
                }
                for &x in &checked {
                    let w = world[k * n + x];
                    let d: [f64; 3] = std::array::from_fn(|v| gp[x][v] - w[v]);
                    let (pos2, contact2) = bound2[g][x];
                    if extremity[x] && d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > pos2 {
                        return false;
                    }
                    if foot_of[x].is_some_and(|side| planted[k][side]) && d[0] * d[0] + d[2] * d[2] > contact2 {
                        return false;
                    }
                }
            }
            true
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
                    for k in a0..c0 + last {
                        let u = (times[k] - times[a0]) / (times[c0] - times[a0]);
                        match ch.property {
                            Property::Rotation => {
                                let (qa, mut qc) = (played_q[a0 * n + j], played_q[c0 * n + j]);
                                if dot(qa, qc) < 0.0 {
                                    qc = qc.map(|v| -v);
                                }
                                let th = dot(qa, qc).min(1.0).acos();
                                local_q[k * n + j] = slerp_pre(qa, qc, th, th.sin(), u);
                            }
                            Property::Translation => {
                                let (ta, tc) = (baked_t[a0 * n + j], baked_t[c0 * n + j]);
                                local_t[k * n + j] = std::array::from_fn(|v| ta[v] + (tc[v] - ta[v]) * u);
                            }
                        }
                    }
                }
            }
            kept_of[i].clone_from(&kept);
        }
        pose(&local_q, &local_t, &mut wp, &mut wq, &mut ws);
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
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crowdpatch_runtime::skeletal::{AgentAnimation, Character, CharacterJoint, Foot, Footstep};

    /// Hips swaying and turning, two legs swinging, a foot planted from
    /// 0.4 s to 1.1 s: `m` samples over 2 s.
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
            ],
            left_foot: 2,
            right_foot: 4,
            hips: 0,
            height: 1.75,
            primitives: vec![],
            hip_joints: [1, 3],
            leg_length: 0.85,
        };
        let times: Vec<f64> = (0..m).map(|k| 2.0 * k as f64 / (m - 1) as f64).collect();
        let about_x = |a: f64| [(a / 2.0).sin() as f32, 0.0, 0.0, (a / 2.0).cos() as f32];
        let about_y = |a: f64| [0.0, (a / 2.0).sin() as f32, 0.0, (a / 2.0).cos() as f32];
        let (mut rotations, mut translations) = (Vec::new(), Vec::new());
        for &t in &times {
            let w = std::f64::consts::TAU * t;
            rotations.extend([
                about_y(0.2 * w.sin()),
                about_x(0.5 * w.sin()),
                about_x(0.1 * w.cos()),
                about_x(-0.5 * w.sin()),
                about_x(0.0),
            ]);
            translations.extend([
                [0.0, (0.9 + 0.02 * (2.0 * w).cos()) as f32, 0.0],
                [0.1, 0.0, 0.0],
                [0.0, -0.85, 0.0],
                [-0.1, 0.0, 0.0],
                [0.0, -0.85, 0.0],
            ]);
        }
        let footsteps = vec![Footstep { t: 0.4, foot: Foot::Left, position: [0.0, 0.0], heading: 0.0, lift: 1.1 }];
        let agent = AgentAnimation { footsteps, times: times.clone(), translations, rotations };
        (SkeletalAnimation { character, sample_interval: 2.0 / (m - 1) as f64, agents: vec![agent] }, times)
    }

    #[test]
    fn reduced_keys_hold_every_bound_at_every_sample_and_keep_plants_and_lifts() {
        let (sk, times) = walker(241);
        let window: Vec<usize> = (0..times.len()).collect();
        for tol in [
            KeyTolerance::default(),
            KeyTolerance { position: 0.005, rotation: 0.05, contact: 0.001 },
            // Near the floor of the 16-bit rotations (about 3·10⁻⁵ m at 1 m).
            KeyTolerance { position: 2e-4, rotation: 2e-3, contact: 5e-5 },
        ] {
            let r = reduce(&sk, 0, &window, &times, &tol, &quantise);
            assert_eq!(r.kept.first(), Some(&0));
            assert_eq!(r.kept.last(), Some(&240));
            assert!(r.kept.windows(2).all(|w| w[0] < w[1]));
            // The samples at the plant (0.4 s) and the lift (1.1 s).
            assert!(r.kept.contains(&48) && r.kept.contains(&132), "{:?}", r.kept);
            assert!(r.position_error <= tol.position, "{tol:?}: {r:?}");
            assert!(r.rotation_error <= tol.rotation + 1e-12, "{tol:?}: {r:?}");
            assert!(r.contact_error <= tol.contact, "{tol:?}: {r:?}");
            assert!(r.kept.len() < times.len(), "smooth motion needs fewer keys than samples");
        }
        // Looser bounds keep fewer keys.
        let loose =
            reduce(&sk, 0, &window, &times, &KeyTolerance { position: 0.01, rotation: 0.1, contact: 0.01 }, &quantise);
        let tight = reduce(&sk, 0, &window, &times, &KeyTolerance::default(), &quantise);
        assert!(loose.kept.len() < tight.kept.len(), "{} vs {}", loose.kept.len(), tight.kept.len());
    }

    #[test]
    fn quantised_rotations_are_within_a_hundredth_of_a_degree() {
        for q in [[0.0f32, 0.0, 0.0, 1.0], [0.5, -0.5, 0.5, 0.5], [0.1, 0.7, -0.2, 0.677]] {
            let n = normalise(q.map(f64::from));
            let back = normalise(dequantise(quantise(n.map(|c| c as f32))));
            assert!(angle(n, back) < 1e-4, "{q:?}: {} rad", angle(n, back));
        }
    }
}
