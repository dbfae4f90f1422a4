//! Joint poses of a whole crowd at once: the local joint transforms of every
//! agent instance of a tile at a time `t`, from its skeletal clips, in a
//! compact playback form meant to be sampled every frame.
//!
//! Layout (structure of arrays): the key times of all instances in one
//! array, each distinct key-time list of an instance once (skeletal bakes
//! write about a dozen per instance: one for the root, one per leg, one per
//! other channel); rotation keys as
//! normalised 16-bit integers (8 bytes, as the bake writes them; a float
//! file is quantised on the way in, ≤ 0.002° per joint), translation and
//! scale keys as `f32 × 3`; per channel its joint, its key-time list and
//! where its values start. Sampling advances one cursor per key-time list
//! (a comparison or two per frame when time moves forward), then
//! interpolates each channel from the two keys around `t`: lerp for
//! translations and scales, normalised lerp for rotations (within 10⁻⁵ rad
//! of slerp for the key spacing of a bake), step where the channel says so.
//! Nothing is allocated per frame; the output is one row of joints per
//! instance ([`JointPoses`]).
//!
//! Cost: O(channels) per call, plus O(log k) per key-time list after a jump
//! back in time or a first call.

use crate::tile::{Interpolation, JointClip, JointProperty, Tile};

/// Per channel: what it drives and where its keys are.
#[derive(Debug, Clone, Copy)]
struct Channel {
    /// Output row offset of its joint: `instance · joints + joint`.
    slot: u32,
    /// Index into the key-time lists.
    track: u32,
    /// First value (index into the values of its property).
    values: u32,
    property: JointProperty,
    step: bool,
}

/// The joint clips of a tile in playback form. See the [module](self)
/// documentation.
#[derive(Debug, Clone)]
pub struct JointSampler {
    period: f64,
    period32: f32,
    joints: usize,
    instances: usize,
    /// Rest pose of every slot (instance · joints + joint).
    rest_t: Vec<[f32; 3]>,
    rest_r: Vec<[f32; 4]>,
    rest_s: Vec<[f32; 3]>,
    /// Key-time lists: (first, count) into `times`.
    tracks: Vec<(u32, u32)>,
    times: Vec<f32>,
    channels: Vec<Channel>,
    rotations: Vec<[i16; 4]>,
    vectors: Vec<[f32; 3]>,
}

/// One cursor per key-time list of a [`JointSampler`]: the key after the
/// last time sampled.
#[derive(Debug, Clone, Default)]
pub struct JointCursors {
    key: Vec<u32>,
    /// Per list, `(key, u)` of the current call.
    at: Vec<(u32, f32)>,
}

/// Local joint transforms of every instance: row `i · joints + j` is joint
/// `j` of instance `i` (glTF: translation `[m]`, unit quaternion `(x, y, z,
/// w)`, scale), relative to its parent joint, top joints relative to the
/// instance node.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JointPoses {
    /// Translations `[m]`.
    pub translation: Vec<[f32; 3]>,
    /// Rotations, unit quaternions `(x, y, z, w)`.
    pub rotation: Vec<[f32; 4]>,
    /// Scales.
    pub scale: Vec<[f32; 3]>,
}

impl JointPoses {
    /// The joints of instance `i` of a sampler with `joints` joints per
    /// instance: (translations, rotations, scales).
    pub fn instance(&self, i: usize, joints: usize) -> InstanceJoints<'_> {
        let r = i * joints..(i + 1) * joints;
        (&self.translation[r.clone()], &self.rotation[r.clone()], &self.scale[r])
    }
}

/// The joints of one instance: (translations, rotations, scales).
pub type InstanceJoints<'a> = (&'a [[f32; 3]], &'a [[f32; 4]], &'a [[f32; 3]]);

fn quantise(q: [f32; 4]) -> [i16; 4] {
    q.map(|c| (c.clamp(-1.0, 1.0) * 32767.0).round() as i16)
}

impl JointSampler {
    /// The playback form of `tile`'s joint clips, or `None` for a tile with
    /// none (a capsule bake). Instances without a clip keep their rest pose
    /// (zero joints for them when no instance has a clip). O(keys).
    pub fn new(tile: &Tile) -> Option<JointSampler> {
        let clips: Vec<Option<&JointClip>> = (0..tile.instance_count()).map(|i| tile.joint_clip(i)).collect();
        JointSampler::from_clips(&clips, tile.period())
    }

    /// As [`JointSampler::new`], from one optional clip per instance and the
    /// period `[s]`. All clips should have the same joints (one character);
    /// rows are as long as the largest clip's joint list.
    pub fn from_clips(clips: &[Option<&JointClip>], period: f64) -> Option<JointSampler> {
        let joints = clips.iter().flatten().map(|c| c.joints.len()).max()?;
        let instances = clips.len();
        let mut s = JointSampler {
            period,
            period32: period as f32,
            joints,
            instances,
            rest_t: vec![[0.0; 3]; instances * joints],
            rest_r: vec![[0.0, 0.0, 0.0, 1.0]; instances * joints],
            rest_s: vec![[1.0; 3]; instances * joints],
            tracks: Vec::new(),
            times: Vec::new(),
            channels: Vec::new(),
            rotations: Vec::new(),
            vectors: Vec::new(),
        };
        for (i, clip) in clips.iter().enumerate() {
            let Some(clip) = clip else { continue };
            for (j, joint) in clip.joints.iter().enumerate() {
                let slot = i * joints + j;
                s.rest_t[slot] = joint.rest.translation;
                s.rest_r[slot] = joint.rest.rotation;
                s.rest_s[slot] = joint.rest.scale;
            }
            // This instance's distinct key-time lists.
            let first_track = s.tracks.len();
            for ch in &clip.channels {
                let w = ch.property.width();
                let n = ch.times.len();
                if n == 0 || ch.values.len() < n * w || ch.joint >= clip.joints.len() {
                    continue;
                }
                let same = |&(a, c): &(u32, u32)| s.times[a as usize..(a + c) as usize] == ch.times[..];
                let track = match s.tracks[first_track..].iter().position(same) {
                    Some(k) => first_track + k,
                    None => {
                        s.tracks.push((s.times.len() as u32, n as u32));
                        s.times.extend_from_slice(&ch.times);
                        s.tracks.len() - 1
                    }
                };
                let values = match ch.property {
                    JointProperty::Rotation => {
                        let at = s.rotations.len();
                        s.rotations.extend(ch.values.chunks_exact(4).map(|q| quantise([q[0], q[1], q[2], q[3]])));
                        at
                    }
                    _ => {
                        let at = s.vectors.len();
                        s.vectors.extend(ch.values.chunks_exact(3).map(|v| [v[0], v[1], v[2]]));
                        at
                    }
                };
                s.channels.push(Channel {
                    slot: (i * joints + ch.joint) as u32,
                    track: track as u32,
                    values: values as u32,
                    property: ch.property,
                    step: ch.interpolation == Interpolation::Step,
                });
            }
        }
        Some(s)
    }

    /// Joints per instance (the row length of [`JointPoses`]).
    pub fn joint_count(&self) -> usize {
        self.joints
    }

    /// Instances (rows of joints).
    pub fn instance_count(&self) -> usize {
        self.instances
    }

    /// Joint channels in all.
    pub fn channel_count(&self) -> usize {
        self.channels.len()
    }

    /// Heap bytes of the playback form.
    pub fn memory_bytes(&self) -> usize {
        self.rest_t.len() * (12 + 16 + 12)
            + self.tracks.len() * 8
            + self.times.len() * 4
            + self.channels.len() * std::mem::size_of::<Channel>()
            + self.rotations.len() * 8
            + self.vectors.len() * 12
    }

    /// Fresh cursors for [`JointSampler::sample`].
    pub fn cursors(&self) -> JointCursors {
        JointCursors { key: vec![0; self.tracks.len()], at: vec![(0, 0.0); self.tracks.len()] }
    }

    /// An output of the right size (every row at rest).
    pub fn poses(&self) -> JointPoses {
        JointPoses { translation: self.rest_t.clone(), rotation: self.rest_r.clone(), scale: self.rest_s.clone() }
    }

    /// Local joint transforms of every instance at time `t` `[s]` (any
    /// real; periodic) into `out` (from [`JointSampler::poses`]), with
    /// `cursors` from [`JointSampler::cursors`]. Allocates nothing.
    ///
    /// # Panics
    /// If `out` or `cursors` were made for another sampler.
    pub fn sample(&self, t: f64, cursors: &mut JointCursors, out: &mut JointPoses) {
        let tau = t.rem_euclid(self.period) as f32;
        let tau = if tau >= self.period32 || tau.is_nan() { 0.0 } else { tau };
        assert!(cursors.key.len() == self.tracks.len() && out.rotation.len() == self.rest_r.len());
        // Each key-time list: the key after τ, and the share between it and
        // the one before.
        for (k, &(first, count)) in self.tracks.iter().enumerate() {
            let times = &self.times[first as usize..(first + count) as usize];
            let mut j = cursors.key[k] as usize;
            if j == 0 || j > times.len() || times[j - 1] > tau {
                j = times.partition_point(|&x| x <= tau);
            } else {
                while j < times.len() && times[j] <= tau {
                    j += 1;
                }
            }
            cursors.key[k] = j as u32;
            let u = if j == 0 || j >= times.len() {
                0.0
            } else {
                let (a, b) = (times[j - 1], times[j]);
                if b > a { (tau - a) / (b - a) } else { 0.0 }
            };
            cursors.at[k] = (j as u32, u);
        }
        out.translation.copy_from_slice(&self.rest_t);
        out.rotation.copy_from_slice(&self.rest_r);
        out.scale.copy_from_slice(&self.rest_s);
        for ch in &self.channels {
            let (j, u) = cursors.at[ch.track as usize];
            let count = self.tracks[ch.track as usize].1 as usize;
            // Keys a (before) and b (after), held at the ends.
            let (a, b, u) = match j as usize {
                0 => (0, 0, 0.0),
                j if j >= count => (count - 1, count - 1, 0.0),
                j if ch.step => (j - 1, j - 1, 0.0),
                j => (j - 1, j, u),
            };
            let slot = ch.slot as usize;
            let base = ch.values as usize;
            match ch.property {
                JointProperty::Rotation => {
                    let qa = self.rotations[base + a].map(|c| (f32::from(c) / 32767.0).max(-1.0));
                    let qb = self.rotations[base + b].map(|c| (f32::from(c) / 32767.0).max(-1.0));
                    let d = qa[0] * qb[0] + qa[1] * qb[1] + qa[2] * qb[2] + qa[3] * qb[3];
                    let sb = if d < 0.0 { -u } else { u };
                    let q: [f32; 4] = std::array::from_fn(|c| qa[c] * (1.0 - u) + qb[c] * sb);
                    let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
                    if n > 0.0 {
                        out.rotation[slot] = q.map(|c| c / n);
                    }
                }
                property => {
                    let (va, vb) = (self.vectors[base + a], self.vectors[base + b]);
                    let v = std::array::from_fn(|c| va[c] + (vb[c] - va[c]) * u);
                    if property == JointProperty::Translation {
                        out.translation[slot] = v;
                    } else {
                        out.scale[slot] = v;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tile::{Joint, JointChannel, JointPose};

    fn clip(shift: f32) -> JointClip {
        let joint = |parent| Joint { node: 0, name: None, parent, rest: JointPose::default() };
        let times = vec![0.0, 0.4 + shift, 1.0, 2.0];
        let rot = |a: f32| [0.0, (a / 2.0).sin(), 0.0, (a / 2.0).cos()];
        JointClip {
            joints: vec![joint(None), joint(Some(0)), joint(Some(1))],
            channels: vec![
                JointChannel {
                    joint: 0,
                    property: JointProperty::Translation,
                    interpolation: Interpolation::Linear,
                    times: times.clone(),
                    values: vec![0.0, 1.0, 0.0, 0.5, 1.1, 0.0, 1.0, 1.0, 0.2, 2.0, 0.9, 0.0],
                },
                JointChannel {
                    joint: 1,
                    property: JointProperty::Rotation,
                    interpolation: Interpolation::Linear,
                    times: times.clone(),
                    values: [0.0, 0.3, -0.4, 1.2].iter().flat_map(|&a| rot(a)).collect(),
                },
                JointChannel {
                    joint: 2,
                    property: JointProperty::Rotation,
                    interpolation: Interpolation::Step,
                    times: vec![0.0, 1.5],
                    values: [0.1, -0.2].iter().flat_map(|&a| rot(a)).collect(),
                },
            ],
        }
    }

    #[test]
    fn sampling_matches_each_clip_sampled_alone_forward_and_back() {
        let (a, b) = (clip(0.0), clip(0.2));
        let clips = [Some(&a), None, Some(&b)];
        let s = JointSampler::from_clips(&clips, 2.0).unwrap();
        assert_eq!((s.joint_count(), s.instance_count()), (3, 3));
        // Instance a shares one key-time list between its first two channels.
        assert_eq!(s.tracks.len(), 4);
        let (mut cur, mut out) = (s.cursors(), s.poses());
        let mut single = Vec::new();
        // Forward in frame steps, then a jump back, then beyond the period.
        let ts: Vec<f64> = (0..130).map(|k| f64::from(k) / 60.0).chain([0.3, 1.7, 5.25, -0.5]).collect();
        for t in ts {
            s.sample(t, &mut cur, &mut out);
            let tau = t.rem_euclid(2.0) as f32;
            for (i, c) in clips.iter().enumerate() {
                let (tr, rot, _) = out.instance(i, 3);
                match c {
                    Some(c) => {
                        c.sample(tau, &mut single);
                        for j in 0..3 {
                            let d = (0..3).map(|k| (tr[j][k] - single[j].translation[k]).abs()).fold(0.0, f32::max);
                            assert!(d < 1e-5, "t {t} joint {j}");
                            // Equal up to the sign and the 16-bit quantisation.
                            let d: f32 = (0..4).map(|k| rot[j][k] * single[j].rotation[k]).sum();
                            let close = (0..4).all(|k| (rot[j][k] * d.signum() - single[j].rotation[k]).abs() < 1e-4);
                            assert!(close, "t {t} joint {j}: {:?} vs {:?}", rot[j], single[j].rotation);
                        }
                    }
                    None => assert!(rot.iter().all(|q| *q == [0.0, 0.0, 0.0, 1.0])),
                }
            }
        }
    }

    #[test]
    fn a_tile_without_clips_has_no_sampler() {
        assert!(JointSampler::from_clips(&[None, None], 1.0).is_none());
    }
}
