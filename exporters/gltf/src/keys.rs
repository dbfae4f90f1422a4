//! Error-bounded joint tracks: the keys of one instance's window that a
//! player needs to show every joint within a stated error of the baked
//! samples, rotations quantised to normalised 16-bit integers.
//!
//! The kept key times are **shared by every joint channel of an instance**
//! (one time accessor per instance). From a kept key `a`, the next kept key
//! is the farthest sample `c` such that playing every joint from `a` to `c`
//! (slerp of the rotations as the player decodes them, lerp of the
//! translations: glTF LINEAR) keeps, at every baked sample between them,
//! - every joint's local rotation within [`KeyTolerance::rotation`],
//! - every joint's position (forward kinematics below the instance node)
//!   within [`KeyTolerance::position`],
//! - the joints of a **planted foot** (the foot joint and those below it,
//!   while a footstep holds it: `Footstep::t ≤ t ≤ Footstep::lift`) within
//!   [`KeyTolerance::contact`]: an error that changes from key to key reads
//!   as speed, so a planted foot gets a bound far below the others.
//!
//! Samples nearest each plant and lift are always kept. The search gallops
//! (lengths 2, 4, 8, … then bisection), every accepted interval being
//! checked at every sample inside: the bounds hold at every baked sample,
//! whatever the search skips. This is tolerance-bounded curve simplification
//! (as in ACL and gltfpack) measured on the skeleton rather than per curve.
//! Cost: O(m · n · L log L) per instance for m samples, n joints and kept
//! intervals of L samples.

use crowdpatch_runtime::skeletal::SkeletalAnimation;

use crate::options::KeyTolerance;

/// The kept keys of one instance's window and the errors they show.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reduced {
    /// Kept sample indices (into the window), shared by all joint channels;
    /// the first and last samples are kept.
    pub kept: Vec<usize>,
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

/// Reduces the joint tracks of the samples `window` (indices into the
/// agent's samples, at play times `times` `[s]`, strictly increasing) of
/// agent `agent` of `sk` within `tol`; `played` maps a baked rotation to the
/// normalised 16-bit integers a player decodes (quantised, or quantised and
/// filtered by a compressor).
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
        return Reduced { kept: (0..m).collect(), position_error: 0.0, rotation_error: 0.0, contact_error: 0.0 };
    }
    let parents: Vec<Option<usize>> = c.joints.iter().map(|j| j.parent).collect();
    let scales: Vec<[f64; 3]> = c.joints.iter().map(|j| j.scale).collect();
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
    // Which feet each sample has planted, and the samples always kept.
    let eps = 1e-9;
    let mut planted = vec![[false; 2]; m];
    let mut must = vec![false; m];
    (must[0], must[m - 1]) = (true, true);
    let agent_t: Vec<f64> = window.iter().map(|&w| a.times[w]).collect();
    for f in &a.footsteps {
        for (k, &t) in agent_t.iter().enumerate() {
            if f.t - eps <= t && t <= f.lift + eps {
                planted[k][f.foot.index()] = true;
            }
        }
        for event in [f.t, f.lift] {
            if event >= agent_t[0] && event <= agent_t[m - 1] {
                let i = agent_t.partition_point(|&t| t < event);
                let near = if i > 0 && (i == m || event - agent_t[i - 1] < agent_t[i] - event) { i - 1 } else { i };
                must[near] = true;
            }
        }
    }
    // Errors at sample `k` played between kept keys `a0` and `c0`
    // (`k == a0`: the key itself): (position, rotation, contact) over the
    // joints, stopping early once over `tol` when `stop`.
    // Squared bounds, and the rotation bound as |cos(angle / 2)|, so that
    // the search compares without square roots or arc cosines.
    let (pos2, contact2) = (tol.position * tol.position, tol.contact * tol.contact);
    let min_cos = (tol.rotation / 2.0).cos();
    let mut arcs = vec![(0.0, 0.0); n];
    let (mut p, mut q, mut s) = (vec![[0.0; 3]; n], vec![[0.0; 4]; n], vec![[0.0; 3]; n]);
    let mut local = vec![[0.0; 4]; n];
    let mut errors = |a0: usize, c0: usize, ks: std::ops::Range<usize>, stop: bool| -> Option<(f64, f64, f64)> {
        for j in 0..n {
            let (qa, qc) = (played_q[a0 * n + j], played_q[c0 * n + j]);
            let d = dot(qa, qc).abs().min(1.0);
            let th = d.acos();
            arcs[j] = (th, th.sin());
        }
        // Squared position errors and the smallest |cos(half angle)|.
        let (mut ep, mut ec, mut cos_r) = (0.0f64, 0.0f64, 1.0f64);
        for k in ks {
            let u = if c0 == a0 { 0.0 } else { (times[k] - times[a0]) / (times[c0] - times[a0]) };
            for j in 0..n {
                let (qa, mut qc) = (played_q[a0 * n + j], played_q[c0 * n + j]);
                if dot(qa, qc) < 0.0 {
                    qc = qc.map(|x| -x);
                }
                local[j] = slerp_pre(qa, qc, arcs[j].0, arcs[j].1, u);
                cos_r = cos_r.min(dot(local[j], baked_q[k * n + j]).abs());
            }
            let tr = |j: usize| -> [f64; 3] {
                let (ta, tc) = (baked_t[a0 * n + j], baked_t[c0 * n + j]);
                std::array::from_fn(|i| ta[i] + (tc[i] - ta[i]) * u)
            };
            fk(&parents, &scales, |j| local[j], tr, &mut p, &mut q, &mut s);
            for j in 0..n {
                let w = world[k * n + j];
                let d: [f64; 3] = std::array::from_fn(|i| p[j][i] - w[i]);
                match foot_of[j] {
                    Some(side) if planted[k][side] => {
                        ec = ec.max(d[0] * d[0] + d[2] * d[2]);
                        ep = ep.max(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
                    }
                    _ if extremity[j] => ep = ep.max(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]),
                    _ => {}
                }
            }
            if stop && (ep > pos2 || cos_r < min_cos || ec > contact2) {
                return None;
            }
        }
        Some((ep.sqrt(), 2.0 * cos_r.min(1.0).acos(), ec.sqrt()))
    };
    let mut kept = vec![0];
    let mut a0 = 0;
    while a0 + 1 < m {
        let limit = (a0 + 1..m).find(|&k| must[k]).unwrap_or(m - 1);
        let mut fits = |c0: usize| errors(a0, c0, a0 + 1..c0, true).is_some();
        // Gallop: lo fits, hi does not (or is past the limit).
        let (mut lo, mut hi) = (a0 + 1, limit + 1);
        let mut len = 2;
        while a0 + len <= limit {
            if fits(a0 + len) {
                lo = a0 + len;
                len *= 2;
            } else {
                hi = a0 + len;
                break;
            }
        }
        if hi == limit + 1 && lo < limit {
            if fits(limit) {
                lo = limit;
            } else {
                hi = limit;
            }
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if fits(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        kept.push(lo);
        a0 = lo;
    }
    // Measure every sample as played from the kept keys.
    let mut out = Reduced { kept, position_error: 0.0, rotation_error: 0.0, contact_error: 0.0 };
    for w in out.kept.windows(2) {
        let last = usize::from(w[1] == m - 1);
        if let Some((ep, er, ec)) = errors(w[0], w[1], w[0]..w[1] + last, false) {
            out.position_error = out.position_error.max(ep);
            out.rotation_error = out.rotation_error.max(er);
            out.contact_error = out.contact_error.max(ec);
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
