//! Channels played from their kept keys into the pose as played, as a
//! player interpolates them (glTF LINEAR: slerp of the rotations, lerp of
//! the translations).

use super::groups::{Channel, Property};
use super::kinematics::Pose;
use super::quat::{Arc, arc, slerp};
use super::window::Window;

/// Writes channel `ch` played from the keys `kept` (sample indices; one
/// key: held at its baked sample 0) at every sample's time into the local
/// values of `pose`, from the quantised values. Cost: O(m).
pub(super) fn play_keys(w: &Window, pose: &mut Pose, ch: Channel, kept: &[usize]) {
    let n = w.sk.len();
    let j = ch.joint;
    if kept.len() == 1 {
        for k in 0..w.m {
            match ch.property {
                Property::Rotation => pose.local_q[k * n + j] = w.samples.baked_q[j],
                Property::Translation => pose.local_t[k * n + j] = w.samples.baked_t[j],
            }
        }
        return;
    }
    let (played_q, played_t, times) = (&w.samples.played_q, &w.samples.played_t, w.times);
    for (i, pair) in kept.windows(2).enumerate() {
        let (a0, c0) = (pair[0], pair[1]);
        // The last pair also writes its second key.
        let last = usize::from(i + 2 == kept.len());
        match ch.property {
            Property::Rotation => {
                // The arc between the keys, once per key pair.
                let ends = arc(played_q[a0 * n + j], played_q[c0 * n + j]);
                for k in a0..c0 + last {
                    let u = (times[k] - times[a0]) / (times[c0] - times[a0]);
                    pose.local_q[k * n + j] = slerp(&ends, u);
                }
            }
            Property::Translation => {
                let (ta, tc) = (played_t[a0 * n + j], played_t[c0 * n + j]);
                for k in a0..c0 + last {
                    let u = (times[k] - times[a0]) / (times[c0] - times[a0]);
                    pose.local_t[k * n + j] = std::array::from_fn(|v| ta[v] + (tc[v] - ta[v]) * u);
                }
            }
        }
    }
}

/// The values a file holds (samples × joints) through its compressor's
/// filters: key times `[s]`, rotations and translations as decoded.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Written {
    /// Per sample, its key time as written `[s]`.
    pub key_t: Vec<f64>,
    /// Rotations as decoded, normalised.
    pub value_q: Vec<[f64; 4]>,
    /// Translations as decoded `[m]`.
    pub value_t: Vec<[f64; 3]>,
}

/// Writes channel `ch` played from the keys `kept` (at least two) at every
/// sample's own written time into the local values of `pose`, from the
/// written values: a key is then exactly its written value. Cost: O(m).
pub(super) fn play_written(w: &Window, written: &Written, pose: &mut Pose, ch: Channel, kept: &[usize]) {
    let n = w.sk.len();
    let j = ch.joint;
    let key_t = &written.key_t;
    let rotation = ch.property == Property::Rotation;
    let mut at = 0;
    // The arc of the key pair at `at` (made when `at` moves).
    let mut ends = if rotation { written_arc(written, kept, at, j, n) } else { Arc::default() };
    for k in 0..w.m {
        while at + 2 < kept.len() && key_t[kept[at + 1]] <= key_t[k] {
            at += 1;
            if rotation {
                ends = written_arc(written, kept, at, j, n);
            }
        }
        let (a0, c0) = (kept[at], kept[at + 1]);
        let u = ((key_t[k] - key_t[a0]) / (key_t[c0] - key_t[a0])).clamp(0.0, 1.0);
        if rotation {
            pose.local_q[k * n + j] = slerp(&ends, u);
        } else {
            let (ta, tc) = (written.value_t[a0 * n + j], written.value_t[c0 * n + j]);
            pose.local_t[k * n + j] = std::array::from_fn(|v| ta[v] + (tc[v] - ta[v]) * u);
        }
    }
}

/// The arc between the written rotations of joint `j` (of `n`) at the keys
/// `kept[at]` and `kept[at + 1]`.
fn written_arc(written: &Written, kept: &[usize], at: usize, j: usize, n: usize) -> Arc {
    let (a0, c0) = (kept[at], kept[at + 1]);
    arc(written.value_q[a0 * n + j], written.value_q[c0 * n + j])
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::keys::quat::{angle, dot};
    use crate::keys::tests::Parts;

    #[test]
    fn a_channel_played_from_its_keys_passes_through_them_and_one_key_holds() {
        let parts = Parts::walker(41);
        let w = parts.window(0.1);
        let n = parts.skeleton.len();
        let mut pose = parts.start_pose();
        // The left leg's rotation (joint 1) keyed at four samples.
        let leg = Channel { joint: 1, property: Property::Rotation };
        let kept = [0, 7, 20, 40];
        play_keys(&w, &mut pose, leg, &kept);
        for &k in &kept {
            let (q, key) = (pose.local_q[k * n + 1], parts.samples.played_q[k * n + 1]);
            assert!(angle(q, key) < 1e-7, "sample {k}: {q:?} vs {key:?}");
        }
        // Between the keys, the slerp stays on the short arc between them.
        let arc = dot(parts.samples.played_q[7 * n + 1], parts.samples.played_q[20 * n + 1]).abs();
        for k in 8..20 {
            let q = pose.local_q[k * n + 1];
            assert!(dot(q, parts.samples.played_q[7 * n + 1]).abs() >= arc - 1e-12, "sample {k}");
        }
        // The hips' translation (joint 0) held by one key: sample 0, baked.
        let hips = Channel { joint: 0, property: Property::Translation };
        play_keys(&w, &mut pose, hips, &[0]);
        assert!((0..parts.times.len()).all(|k| pose.local_t[k * n] == parts.samples.baked_t[0]));
    }
}
