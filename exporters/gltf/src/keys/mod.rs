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
//! one to all of it, with φ = [`ROOT_SHARE`](groups::ROOT_SHARE) at the feet (the root takes
//! most of it: the legs need their keys anyway) and [`OTHER_SHARE`](groups::OTHER_SHARE)
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
//!
//! **Layout.** [`reduce`] drives the stages: [`kinematics`] (the
//! skeleton, the samples as baked and as played, forward kinematics, the
//! errors measured), [`contacts`](mod@contacts) (plants and lifts per
//! sample), [`groups`](mod@groups) (the channels that vary, their groups
//! and shares of the bounds), [`simplify`](mod@simplify) (greedy
//! simplification against a test) with [`fit`] (a group's test of an
//! interval between two keys), [`play`] (channels played from their keys)
//! and [`repair`](mod@repair) (compressed files); [`quat`] holds the
//! quaternion arithmetic.

mod contacts;
mod fit;
mod groups;
mod kinematics;
mod play;
mod quat;
mod repair;
mod simplify;
mod window;

use crowdpatch_runtime::skeletal::SkeletalAnimation;

use self::contacts::contacts;
use self::fit::GroupFit;
use self::groups::{Group, Property, bounds, groups, varying_channels};
use self::kinematics::{Pose, Samples, Skeleton, measure, place};
use self::play::play_keys;
use self::repair::{repair, written_values};
use self::simplify::simplify;
use self::window::Window;
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
    let skeleton = Skeleton::of(c);
    // The arrays of m · n values, in the thread's scratch (their pages
    // stay mapped from one instance to the next).
    let mut scratch = SCRATCH.with(|s| s.take());
    let Scratch { samples, pose } = &mut scratch;
    samples.fill(&skeleton, a, window, played);
    let contacts = contacts(a, window);
    let channels = varying_channels(a, window, n);
    let groups = groups(&channels, &skeleton);
    let bound2 = bounds(&groups, &channels, &skeleton, tol);
    let w = Window {
        sk: &skeleton,
        samples,
        contacts: &contacts,
        channels: &channels,
        times,
        m,
        min_cos: (tol.rotation / 2.0).cos(),
    };
    start_pose(&w, pose);
    let mut kept_of: Vec<Vec<usize>> = vec![vec![0]; channels.len()];
    for (group, bound2) in groups.iter().zip(&bound2) {
        reduce_group(&w, group, bound2, pose, &mut kept_of);
    }
    // A compressed file plays the same keys through its filters: where a
    // bound fails, more keys.
    if !written.is_plain() {
        let values = written_values(a, window, times, n, written);
        repair(&w, &groups, tol, &values, pose, &mut kept_of);
    }
    // Measure every sample as played from the kept keys.
    let errors = measure(&skeleton, samples, pose, &contacts.planted);
    let mut out = Reduced {
        rotation: vec![vec![0]; n],
        translation: vec![vec![0]; n],
        position_error: errors.position,
        rotation_error: errors.rotation,
        contact_error: errors.contact,
    };
    for (ch, kept) in channels.iter().zip(kept_of) {
        match ch.property {
            Property::Rotation => out.rotation[ch.joint] = kept,
            Property::Translation => out.translation[ch.joint] = kept,
        }
    }
    SCRATCH.with(|s| s.set(scratch));
    out
}

/// Sets `pose` to the samples as played before any group is reduced: every
/// channel at its quantised samples (as at its keys), the joints' other
/// properties held at their baked sample 0; world transforms placed.
/// Cost: O(m · n).
fn start_pose(w: &Window, pose: &mut Pose) {
    let (n, m) = (w.sk.len(), w.m);
    let samples = w.samples;
    pose.local_q.clear();
    pose.local_q.extend_from_slice(&samples.played_q);
    pose.local_t.clear();
    pose.local_t.extend_from_slice(&samples.played_t);
    for j in 0..n {
        if !w.channels.iter().any(|ch| ch.joint == j && ch.property == Property::Rotation) {
            for k in 0..m {
                pose.local_q[k * n + j] = samples.baked_q[j];
            }
        }
        if !w.channels.iter().any(|ch| ch.joint == j && ch.property == Property::Translation) {
            for k in 0..m {
                pose.local_t[k * n + j] = samples.baked_t[j];
            }
        }
    }
    pose.wp.clear();
    pose.wp.resize(m * n, [0.0; 3]);
    pose.wq.clear();
    pose.wq.resize(m * n, [0.0; 4]);
    place(w.sk, None, m, pose);
}

/// Simplifies `group` against the pose as played so far within its bounds
/// `bound2` (per joint, squared), records its keys in `kept_of` (per
/// channel) and plays it from them into `pose`. Cost: O(K log L · L · s)
/// for K kept keys `L` samples apart and a subtree of s joints.
fn reduce_group(w: &Window, group: &Group, bound2: &[(f64, f64)], pose: &mut Pose, kept_of: &mut [Vec<usize>]) {
    let must = group.must(&w.contacts.event, w.m);
    let kept = {
        let mut fit = GroupFit::new(w, pose, group, bound2);
        simplify(w.m, &must, |a0, c0| fit.fits(a0, c0))
    };
    for &i in &group.channels {
        play_keys(w, pose, w.channels[i], &kept);
        kept_of[i].clone_from(&kept);
    }
    place(w.sk, Some(group.top), w.m, pose);
}

/// The arrays of one instance's [`reduce`] (samples × joints), kept per
/// thread between instances.
#[derive(Default)]
struct Scratch {
    samples: Samples,
    pose: Pose,
}

thread_local! {
    static SCRATCH: std::cell::Cell<Scratch> = std::cell::Cell::new(Scratch::default());
}

#[cfg(test)]
mod tests {
    use super::*;

    use crowdpatch_runtime::skeletal::{AgentAnimation, Character, CharacterJoint, Foot, Footstep};

    use super::contacts::Contacts;
    use super::groups::Channel;
    use super::kinematics::fk;
    use super::quat::{angle, arc, dequantise, normalise, slerp};

    /// The parts of a [`Window`] over every sample of the walker
    /// ([`walker`]), played plainly.
    pub(super) struct Parts {
        pub times: Vec<f64>,
        pub skeleton: Skeleton,
        pub samples: Samples,
        pub contacts: Contacts,
        pub channels: Vec<Channel>,
    }

    impl Parts {
        pub(super) fn walker(m: usize) -> Parts {
            let (sk, times) = walker(m);
            let window: Vec<usize> = (0..m).collect();
            let skeleton = Skeleton::of(&sk.character);
            let mut samples = Samples::default();
            samples.fill(&skeleton, &sk.agents[0], &window, &Played::plain());
            let contacts = contacts(&sk.agents[0], &window);
            let channels = varying_channels(&sk.agents[0], &window, skeleton.len());
            Parts { times, skeleton, samples, contacts, channels }
        }

        /// The window, with a rotation bound of `rotation` `[rad]`.
        pub(super) fn window(&self, rotation: f64) -> Window<'_> {
            Window {
                sk: &self.skeleton,
                samples: &self.samples,
                contacts: &self.contacts,
                channels: &self.channels,
                times: &self.times,
                m: self.times.len(),
                min_cos: (rotation / 2.0).cos(),
            }
        }

        /// The pose before any group is reduced ([`start_pose`]).
        pub(super) fn start_pose(&self) -> Pose {
            let mut pose = Pose::default();
            start_pose(&self.window(0.1), &mut pose);
            pose
        }
    }

    /// Hips swaying, turning and bobbing, two legs swinging, an arm
    /// swinging, feet held level; the left foot planted from 0.4 s to 1.1 s:
    /// `m` samples over 2 s.
    pub(super) fn walker(m: usize) -> (SkeletalAnimation, Vec<f64>) {
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
            sole_points: vec![],
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
        let skeleton = Skeleton::of(&sk.character);
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
                        slerp(&arc(q(a0, j), q(c0, j)), u)
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
            let sample_q: Vec<[f64; 4]> = (0..n).map(|j| baked_q(k, j)).collect();
            let sample_t: Vec<[f64; 3]> = (0..n).map(|j| baked_t(k, j)).collect();
            fk(&skeleton, &local_q, &local_t, &mut p, &mut pq, &mut ps);
            fk(&skeleton, &sample_q, &sample_t, &mut w, &mut wq, &mut ws);
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
}
