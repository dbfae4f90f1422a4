//! Clips of an imported character: every animation of the file (or only
//! locomotion and idle ones), resampled at [`FRAME_RATE`] on the kept
//! joints; cyclic when the first and last poses agree; locomotion clips put
//! in place.

use super::joints::Kept;
use super::scene::{SceneTree, buffer};
use crate::character::{Clip, Quat, Skeleton, Transform, V3};
use gltf::animation::util::ReadOutputs;
use std::collections::BTreeMap;

/// Sample rate of imported clips `[Hz]`.
pub const FRAME_RATE: f64 = 60.0;

/// The clips of `g` on the kept joints, each with whether it is the idle
/// clip (name with `idle`); without `all_clips`, only locomotion clips
/// (names with walk, run, jog, turn or step, and no jump) and idle ones.
/// O(clips · frames · joints).
pub(super) fn read_clips(
    g: &gltf::Gltf,
    blob: &[u8],
    tree: &SceneTree<'_>,
    kept: &Kept,
    all_clips: bool,
) -> Vec<(Clip, bool)> {
    let skeleton = &kept.skeleton;
    let get = buffer(blob);
    let mut clips = Vec::new();
    for a in g.animations() {
        let cname = a.name().unwrap_or("clip").to_owned();
        let lower = cname.to_lowercase();
        let locomotion =
            ["walk", "run", "jog", "turn", "step"].iter().any(|k| lower.contains(k)) && !lower.contains("jump");
        let idle = lower.contains("idle");
        if !(all_clips || locomotion || idle) {
            continue;
        }
        // Channels by kept joint.
        type Track = (Vec<f32>, Vec<[f32; 4]>, gltf::animation::Interpolation);
        let mut tracks: BTreeMap<(usize, u8), Track> = BTreeMap::new();
        let mut end = 0f32;
        for ch in a.channels() {
            let node = ch.target().node().index();
            let Some(&j) = kept.index_of.get(&node) else { continue };
            let r = ch.reader(get.clone());
            let Some(times) = r.read_inputs() else { continue };
            let times: Vec<f32> = times.collect();
            let (kind, values): (u8, Vec<[f32; 4]>) = match r.read_outputs() {
                Some(ReadOutputs::Translations(t)) => (0, t.map(|v| [v[0], v[1], v[2], 0.0]).collect()),
                Some(ReadOutputs::Rotations(q)) => (1, q.into_f32().collect()),
                Some(ReadOutputs::Scales(s)) => (2, s.map(|v| [v[0], v[1], v[2], 0.0]).collect()),
                _ => continue,
            };
            let interp = ch.sampler().interpolation();
            // Cubic splines store (in-tangent, value, out-tangent) per key.
            let values = if interp == gltf::animation::Interpolation::CubicSpline {
                values.chunks_exact(3).map(|c| c[1]).collect()
            } else {
                values
            };
            if values.len() != times.len() || times.is_empty() {
                continue;
            }
            end = end.max(times[times.len() - 1]);
            tracks.insert((j, kind), (times, values, interp));
        }
        let duration = f64::from(end);
        if duration <= 1e-3 {
            continue;
        }
        let pose_at = |t: f64| -> Vec<Transform> {
            let mut pose: Vec<Transform> = kept.nodes.iter().map(|&i| tree.local[i]).collect();
            for (&(j, kind), (times, values, interp)) in &tracks {
                let v = sample_track(times, values, *interp, t as f32, kind == 1);
                match kind {
                    0 => pose[j].translation = V3::new(v[0].into(), v[1].into(), v[2].into()),
                    1 => {
                        pose[j].rotation = Quat::from_quaternion(nalgebra::Quaternion::new(
                            v[3].into(),
                            v[0].into(),
                            v[1].into(),
                            v[2].into(),
                        ))
                    }
                    _ => pose[j].scale = V3::new(v[0].into(), v[1].into(), v[2].into()),
                }
            }
            pose
        };
        let first = pose_at(0.0);
        let last = pose_at(duration);
        let cyclic = first.iter().zip(&last).enumerate().all(|(j, (a, b))| {
            let top = skeleton.joints[j].parent.is_none();
            (top || (a.translation - b.translation).norm() < 1e-3 * skeleton_scale(skeleton))
                && a.rotation.angle_to(&b.rotation) < 0.02
        });
        let n = ((duration * FRAME_RATE).round() as usize).max(2);
        let dt = duration / n as f64;
        let count = if cyclic { n } else { n + 1 };
        let frames: Vec<Vec<Transform>> = (0..count).map(|k| pose_at(k as f64 * dt)).collect();
        let mut clip = Clip { name: cname, frame_interval: dt, frames, cyclic };
        if locomotion {
            clip.make_in_place(skeleton);
        }
        clips.push((clip, idle));
    }
    clips
}

/// A length typical of the skeleton (its rest extent) `[m]`.
fn skeleton_scale(sk: &Skeleton) -> f64 {
    let p = sk.positions(&sk.rest_pose());
    let (lo, hi) = p.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |a, q| (a.0.min(q.y), a.1.max(q.y)));
    (hi - lo).max(1e-3)
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
    let u = f64::from((t - times[i - 1]) / (times[i] - times[i - 1]));
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
