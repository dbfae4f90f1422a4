//! Error-bounded joint tracks: the keys of one instance's window that a
//! player needs to show every joint within a stated error of the baked
//! samples, rotations quantised to normalised 16-bit integers.
//!
//! Per channel, keys are kept greedily: from a kept key, the next kept key
//! is the farthest one such that interpolating between the two (slerp for
//! rotations, lerp for translations, as glTF LINEAR) stays within the
//! channel's tolerance at every sample in between (the classic
//! tolerance-bounded curve simplification, as in ACL and gltfpack). A
//! joint's rotation tolerance is the angle bound, and no more than the
//! position bound divided by the joint's reach (the farthest joint below it,
//! rest pose). The result is
//! then **measured**: every joint's position (forward kinematics below the
//! instance node) at every sample, reduced and quantised against as baked;
//! if any exceeds the position bound, the tolerances are halved and the
//! channels reduced again (at most four times, then every key is kept).
//! Cost: O(keys · joints · L) per instance, L the longest kept interval.

use crowdpatch_runtime::skeletal::SkeletalAnimation;

use crate::options::KeyTolerance;

/// One joint channel after reduction: indices (into the window's samples)
/// of the kept keys.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reduced {
    /// Per joint: kept sample indices of the rotation channel.
    pub rotation: Vec<Vec<usize>>,
    /// Per joint: kept sample indices of the translation channel.
    pub translation: Vec<Vec<usize>>,
    /// Largest joint position error measured `[m]`.
    pub position_error: f64,
    /// Largest joint rotation error measured `[rad]`.
    pub rotation_error: f64,
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

/// Slerp of unit quaternions along the short arc.
fn slerp(a: [f64; 4], b: [f64; 4], u: f64) -> [f64; 4] {
    let mut d = dot(a, b);
    let b = if d < 0.0 {
        d = -d;
        b.map(|c| -c)
    } else {
        b
    };
    if d > 0.9995 {
        return normalise(std::array::from_fn(|k| a[k] + (b[k] - a[k]) * u));
    }
    let th = d.clamp(-1.0, 1.0).acos();
    let s = th.sin();
    let (wa, wb) = (((1.0 - u) * th).sin() / s, (u * th).sin() / s);
    normalise(std::array::from_fn(|k| wa * a[k] + wb * b[k]))
}

/// Angle `[rad]` between two unit quaternions' rotations.
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

/// Greedy reduction of one channel of `n` samples: `fits(a, c)` tells
/// whether interpolating from sample `a` to sample `c` holds every sample
/// between them.
fn greedy(n: usize, fits: impl Fn(usize, usize) -> bool) -> Vec<usize> {
    let mut kept = vec![0];
    let mut a = 0;
    while a + 1 < n {
        let mut b = a + 1;
        while b + 1 < n && fits(a, b + 1) {
            b += 1;
        }
        kept.push(b);
        a = b;
    }
    kept
}

/// Value of a channel at sample `m` as played from its kept keys.
fn played<T: Copy>(
    kept: &[usize],
    times: &[f64],
    m: usize,
    value: impl Fn(usize) -> T,
    mix: impl Fn(T, T, f64) -> T,
) -> T {
    let i = kept.partition_point(|&k| k <= m);
    if i == 0 {
        return value(kept[0]);
    }
    if i >= kept.len() {
        return value(kept[kept.len() - 1]);
    }
    let (a, b) = (kept[i - 1], kept[i]);
    if a == m {
        return value(a);
    }
    let u = (times[m] - times[a]) / (times[b] - times[a]);
    mix(value(a), value(b), u)
}

/// Reduces the channels of the samples `window` (indices into the agent's
/// samples, at play times `times` `[s]`, strictly increasing) of agent
/// `agent` of `sk`, within `tol`.
pub(crate) fn reduce(
    sk: &SkeletalAnimation,
    agent: usize,
    window: &[usize],
    times: &[f64],
    tol: &KeyTolerance,
) -> Reduced {
    let c = &sk.character;
    let a = &sk.agents[agent];
    let n = c.joints.len();
    let m = window.len();
    let rot = |j: usize, k: usize| -> [f64; 4] { a.rotations[window[k] * n + j].map(f64::from) };
    let rot_q = |j: usize, k: usize| -> [f64; 4] { normalise(dequantise(quantise(a.rotations[window[k] * n + j]))) };
    let tr = |j: usize, k: usize| -> [f64; 3] { a.translations[window[k] * n + j].map(f64::from) };
    // Rest-pose reach of every joint: its farthest descendant.
    let mut rest_pos: Vec<[f64; 3]> = Vec::with_capacity(n);
    let mut rest_rot: Vec<[f64; 4]> = Vec::with_capacity(n);
    for j in &c.joints {
        let (p, q) = match j.parent {
            Some(pj) => {
                let t = rotate(rest_rot[pj], j.translation);
                (
                    [rest_pos[pj][0] + t[0], rest_pos[pj][1] + t[1], rest_pos[pj][2] + t[2]],
                    mul(rest_rot[pj], j.rotation),
                )
            }
            None => (j.translation, j.rotation),
        };
        rest_pos.push(p);
        rest_rot.push(q);
    }
    let mut reach = vec![0.0f64; n];
    for d in 0..n {
        let mut k = c.joints[d].parent;
        while let Some(p) = k {
            let v: f64 = (0..3).map(|i| (rest_pos[d][i] - rest_pos[p][i]).powi(2)).sum::<f64>().sqrt();
            reach[p] = reach[p].max(v);
            k = c.joints[p].parent;
        }
    }
    let mut scale = 1.0;
    for _attempt in 0..4 {
        let pos_tol = tol.position * scale;
        let mut out = Reduced {
            rotation: Vec::with_capacity(n),
            translation: Vec::with_capacity(n),
            position_error: 0.0,
            rotation_error: 0.0,
        };
        for j in 0..n {
            let rtol = (tol.rotation * scale).min(pos_tol / reach[j].max(1e-9));
            out.rotation.push(greedy(m, |s, e| {
                (s + 1..e).all(|k| {
                    let u = (times[k] - times[s]) / (times[e] - times[s]);
                    angle(slerp(rot_q(j, s), rot_q(j, e), u), rot(j, k)) <= rtol
                })
            }));
            let ttol = pos_tol;
            out.translation.push(greedy(m, |s, e| {
                (s + 1..e).all(|k| {
                    let u = (times[k] - times[s]) / (times[e] - times[s]);
                    let (p, q, x) = (tr(j, s), tr(j, e), tr(j, k));
                    (0..3).map(|i| (p[i] + (q[i] - p[i]) * u - x[i]).powi(2)).sum::<f64>().sqrt() <= ttol
                })
            }));
        }
        // Measure: world positions and rotations of every joint at every
        // sample, as played from the kept, quantised keys vs as baked.
        let mut worst_p = 0.0f64;
        let mut worst_r = 0.0f64;
        let mut gp = vec![[0.0; 3]; n];
        let mut gq = vec![[0.0; 4]; n];
        let mut hp = vec![[0.0; 3]; n];
        let mut hq = vec![[0.0; 4]; n];
        for k in 0..m {
            for j in 0..n {
                let (t0, q0) = (tr(j, k), rot(j, k));
                let t1 = played(
                    &out.translation[j],
                    times,
                    k,
                    |i| tr(j, i),
                    |p, q, u| std::array::from_fn(|i| p[i] + (q[i] - p[i]) * u),
                );
                let q1 = played(&out.rotation[j], times, k, |i| rot_q(j, i), slerp);
                worst_r = worst_r.max(angle(q0, q1));
                match c.joints[j].parent {
                    Some(p) => {
                        let (a0, a1) = (rotate(gq[p], t0), rotate(hq[p], t1));
                        gp[j] = std::array::from_fn(|i| gp[p][i] + a0[i]);
                        hp[j] = std::array::from_fn(|i| hp[p][i] + a1[i]);
                        gq[j] = mul(gq[p], q0);
                        hq[j] = mul(hq[p], q1);
                    }
                    None => {
                        (gp[j], gq[j], hp[j], hq[j]) = (t0, q0, t1, q1);
                    }
                }
                let e: f64 = (0..3).map(|i| (gp[j][i] - hp[j][i]).powi(2)).sum::<f64>().sqrt();
                worst_p = worst_p.max(e);
            }
        }
        out.position_error = worst_p;
        out.rotation_error = worst_r;
        if worst_p <= tol.position && worst_r <= tol.rotation {
            return out;
        }
        scale *= 0.5;
    }
    // Every key (quantisation alone is far below any sensible bound).
    let all: Vec<usize> = (0..m).collect();
    Reduced { rotation: vec![all.clone(); n], translation: vec![all; n], position_error: 0.0, rotation_error: 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greedy_keeps_the_ends_and_the_corners() {
        // A polyline 0 → 10 → 0 sampled at integers: the corner stays.
        let v: Vec<f64> = (0..21).map(|i| if i <= 10 { i as f64 } else { 20.0 - i as f64 }).collect();
        let kept = greedy(v.len(), |a, c| {
            (a + 1..c).all(|k| {
                let u = (k - a) as f64 / (c - a) as f64;
                (v[a] + (v[c] - v[a]) * u - v[k]).abs() <= 1e-9
            })
        });
        assert_eq!(kept, vec![0, 10, 20]);
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
