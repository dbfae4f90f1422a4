//! Clips of an imported file: every animation, resampled at [`FRAME_RATE`]
//! on the kept joints, in the file's frame (local transforms as keyed).
//! Which clip is a walk, a run or an idle is measured later
//! ([`crate::character::choice`]), not read from names.

use super::joints::Kept;
use super::scene::SceneTree;
use super::source::Source;
use crate::character::{Pose, Quat, V3};
use gltf::accessor::{DataType, Dimensions};
use gltf::animation::util::ReadOutputs;
use std::collections::BTreeMap;

/// Sample rate of imported clips `[Hz]`.
pub const FRAME_RATE: f64 = 60.0;

/// Longest clip read `[s]`; longer animations are skipped with a note.
pub const MAX_CLIP_SECONDS: f64 = 120.0;

/// Most clips read from one file.
pub const MAX_CLIPS: usize = 256;

/// A clip as read: poses at `k · frame_interval` for `k = 0..=n`, the last
/// one at the animation's end.
pub(super) struct RawClip {
    pub name: String,
    pub frame_interval: f64,
    pub frames: Vec<Pose>,
}

/// The animations of the file on the kept joints, and notes on what was
/// skipped. A channel whose accessors are not of the types glTF allows for
/// its path is skipped. O(clips · frames · joints).
pub(super) fn read_clips(source: &Source, tree: &SceneTree<'_>, kept: &Kept) -> (Vec<RawClip>, Vec<String>) {
    let get = source.get();
    let mut clips = Vec::new();
    let mut notes = Vec::new();
    for (k, a) in source.document.animations().enumerate() {
        let cname = a.name().map_or_else(|| format!("animation {k}"), str::to_owned);
        if clips.len() >= MAX_CLIPS {
            notes.push(format!("only the first {MAX_CLIPS} animations were read"));
            break;
        }
        type Track = (Vec<f32>, Vec<[f32; 4]>, gltf::animation::Interpolation);
        let mut tracks: BTreeMap<(usize, u8), Track> = BTreeMap::new();
        let mut end = 0f32;
        for ch in a.channels() {
            let node = ch.target().node().index();
            let Some(&j) = kept.index_of.get(&node) else { continue };
            let sampler = ch.sampler();
            let (input, output) = (sampler.input(), sampler.output());
            let vec3 = output.data_type() == DataType::F32 && output.dimensions() == Dimensions::Vec3;
            let ok_types = input.data_type() == DataType::F32
                && input.dimensions() == Dimensions::Scalar
                && match ch.target().property() {
                    gltf::animation::Property::Rotation => output.dimensions() == Dimensions::Vec4,
                    gltf::animation::Property::MorphTargetWeights => false,
                    _ => vec3,
                };
            if !ok_types {
                continue;
            }
            let r = ch.reader(get.clone());
            let Some(times) = r.read_inputs() else { continue };
            let times: Vec<f32> = times.collect();
            let (kind, values): (u8, Vec<[f32; 4]>) = match r.read_outputs() {
                Some(ReadOutputs::Translations(t)) => (0, t.map(|v| [v[0], v[1], v[2], 0.0]).collect()),
                Some(ReadOutputs::Rotations(q)) => (1, q.into_f32().collect()),
                Some(ReadOutputs::Scales(s)) => (2, s.map(|v| [v[0], v[1], v[2], 0.0]).collect()),
                _ => continue,
            };
            let interp = sampler.interpolation();
            // Cubic splines store (in-tangent, value, out-tangent) per key.
            let values = if interp == gltf::animation::Interpolation::CubicSpline {
                values.chunks_exact(3).map(|c| c[1]).collect()
            } else {
                values
            };
            let finite = times.iter().all(|t| t.is_finite()) && values.iter().flatten().all(|x| x.is_finite());
            if values.len() != times.len() || times.is_empty() || !finite || times.windows(2).any(|w| w[1] < w[0]) {
                continue;
            }
            end = end.max(times[times.len() - 1]);
            tracks.insert((j, kind), (times, values, interp));
        }
        let duration = f64::from(end);
        if duration <= 1e-3 {
            continue;
        }
        if duration > MAX_CLIP_SECONDS {
            notes.push(format!("{cname}: {duration:.1} s long, more than the {MAX_CLIP_SECONDS} s read; skipped"));
            continue;
        }
        let pose_at = |t: f64| -> Pose {
            // What a clip leaves unkeyed holds the node's transform in the
            // file (not the bind pose the rest may have been put at).
            let mut pose: Pose = kept.nodes.iter().map(|&i| tree.file_local[i]).collect();
            for (&(j, kind), (times, values, interp)) in &tracks {
                let v = sample_track(times, values, *interp, t as f32, kind == 1);
                match kind {
                    0 => pose[j].translation = V3::new(v[0].into(), v[1].into(), v[2].into()),
                    1 => {
                        let q = nalgebra::Quaternion::new(v[3].into(), v[0].into(), v[1].into(), v[2].into());
                        if q.norm() > 1e-9 {
                            pose[j].rotation = Quat::from_quaternion(q);
                        }
                    }
                    _ => pose[j].scale = V3::new(v[0].into(), v[1].into(), v[2].into()),
                }
            }
            pose
        };
        let n = ((duration * FRAME_RATE).round() as usize).max(2);
        let dt = duration / n as f64;
        let frames: Vec<Pose> = (0..=n).map(|k| pose_at(k as f64 * dt)).collect();
        clips.push(RawClip { name: cname, frame_interval: dt, frames });
    }
    (clips, notes)
}

/// Value of a keyframe track at `t` (clamped at the ends); rotations are
/// slerped.
fn sample_track(
    times: &[f32],
    values: &[[f32; 4]],
    interp: gltf::animation::Interpolation,
    t: f32,
    rotation: bool,
) -> [f32; 4] {
    let i = times.partition_point(|&k| k <= t);
    if i == 0 {
        return values[0];
    }
    if i >= times.len() || interp == gltf::animation::Interpolation::Step {
        return values[i - 1];
    }
    let (a, b) = (values[i - 1], values[i]);
    let span = times[i] - times[i - 1];
    let u = if span > 0.0 { f64::from((t - times[i - 1]) / span) } else { 1.0 };
    if rotation {
        let q = |v: [f32; 4]| {
            Quat::from_quaternion(nalgebra::Quaternion::new(v[3].into(), v[0].into(), v[1].into(), v[2].into()))
        };
        let r = q(a).try_slerp(&q(b), u, 1e-9).unwrap_or(q(a));
        let c = r.coords;
        [c.x as f32, c.y as f32, c.z as f32, c.w as f32]
    } else {
        std::array::from_fn(|k| (f64::from(a[k]) + (f64::from(b[k]) - f64::from(a[k])) * u) as f32)
    }
}
