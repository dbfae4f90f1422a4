//! The `loop` animation: keyframe tracks of agent instances over one period,
//! and a small builder for the channels and samplers of one glTF animation.
//!
//! Play time `τ ∈ [0, π]`; instance `k` of an agent shows the path at the
//! unwrapped time `t = τ + kπ` when that lies in the path's interval
//! `[start, end]`, and is hidden (scale 0) otherwise, holding the nearest end
//! of the path so that nothing jumps while hidden.

use std::collections::BTreeMap;
use std::f64::consts::FRAC_PI_2;

use crowdpatch_runtime::BakedAgent;
use crowdpatch_runtime::format::wrap_angle;
use gltf_json as json;
use json::validation::Checked::Valid;

use crate::builder::{Builder, FloatType, ViewKind};
use crate::geometry::patch_to_gltf;

/// Unit quaternion `(x, y, z, w)` of a rotation by `yaw` `[rad]` about +Y.
pub(crate) fn yaw_quaternion(yaw: f64) -> [f64; 4] {
    let (s, c) = (yaw / 2.0).sin_cos();
    [0.0, s, 0.0, c]
}

/// Yaw about +Y `[rad]` that turns glTF forward (+Z) towards the baked heading
/// `heading` `[rad]` (patch frame, from +x towards +y): the patch direction
/// `(cos h, sin h)` is the glTF direction `(cos h, 0, −sin h)`, and a yaw `θ`
/// turns +Z into `(sin θ, 0, cos θ)`, so `θ = h + π/2`.
pub(crate) fn heading_to_yaw(heading: f64) -> f64 {
    heading + FRAC_PI_2
}

/// The keyframes of one agent instance over the play window.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct InstanceTrack {
    /// Key times `τ` `[s]` of the translation and rotation channels: strictly
    /// increasing in `f32`, from 0 to `π`.
    pub times: Vec<f32>,
    /// glTF translation `[m]` at each key time.
    pub translations: Vec<[f32; 3]>,
    /// Yaw quaternion at each key time; consecutive ones in the same
    /// hemisphere, so that glTF's slerp turns the short way as
    /// [`crowdpatch_runtime::format::lerp_angle`] does.
    pub rotations: Vec<[f32; 4]>,
    /// Key times `τ` `[s]` of the STEP scale channel, from 0 to `π`.
    pub scale_times: Vec<f32>,
    /// Uniform scale from each scale key on: 1 visible, 0 hidden.
    pub scales: Vec<f32>,
}

impl InstanceTrack {
    /// The track of instance `k` (see [`BakedAgent::instances`]) of `agent`,
    /// for a patch of period `period` `[s]`.
    ///
    /// Translation and rotation are keyed at every path key inside the
    /// window `(kπ, (k+1)π)` (at `τ = t − kπ`) and at `τ = 0` and `τ = π`,
    /// where the path is sampled at the window's ends clamped into the path's
    /// interval. Between keys glTF interpolates linearly, as
    /// [`BakedAgent::sample`] does. Times that coincide in `f32` are merged,
    /// the later key winning.
    ///
    /// Key times are as `time` maps them (what a player decodes: the
    /// identity, or a compressor's filter keeping 0 and π).
    ///
    /// The agent must have been checked: at least two keys, finite, times
    /// strictly increasing.
    pub fn new(agent: &BakedAgent, k: i64, period: f64, time: &dyn Fn(f32) -> f32) -> Self {
        let (start, end) = (agent.start(), agent.end());
        let w0 = k as f64 * period;
        let w1 = w0 + period;
        let period32 = period as f32;

        // (τ in f32, unwrapped time to sample)
        let mut samples: Vec<(f32, f64)> = Vec::new();
        let mut push = |tau: f32, t: f64| {
            let tau = time(tau);
            match samples.last_mut() {
                Some(last) if last.0 >= tau => last.1 = t,
                _ => samples.push((tau, t)),
            }
        };
        push(0.0, w0.clamp(start, end));
        for key in agent.keys.iter().filter(|key| key.t > w0 && key.t < w1) {
            push((key.t - w0) as f32, key.t);
        }
        push(period32, w1.clamp(start, end));

        let first = &agent.keys[0];
        let mut times = Vec::with_capacity(samples.len());
        let mut translations = Vec::with_capacity(samples.len());
        let mut rotations = Vec::with_capacity(samples.len());
        let mut previous: Option<(f64, f64)> = None; // (heading, unwrapped yaw)
        for (tau, t) in samples {
            let (p, heading) = agent.sample(t).unwrap_or((first.position, first.heading));
            let yaw = match previous {
                None => heading_to_yaw(heading),
                Some((h, yaw)) => yaw + wrap_angle(heading - h),
            };
            previous = Some((heading, yaw));
            times.push(tau);
            translations.push(patch_to_gltf(p, 0.0).map(|c| c as f32));
            rotations.push(yaw_quaternion(yaw).map(|c| c as f32));
        }

        // Visible on [shown_from, shown_to) of the play window.
        let shown_from = time((start - w0).max(0.0) as f32);
        let shown_to = time((end - w0).min(period) as f32);
        let (scale_times, scales) = if shown_from >= shown_to {
            (vec![0.0, period32], vec![0.0, 0.0])
        } else {
            let mut t = vec![0.0];
            let mut s = vec![if shown_from <= 0.0 { 1.0 } else { 0.0 }];
            if shown_from > 0.0 {
                t.push(shown_from);
                s.push(1.0);
            }
            if shown_to < period32 {
                t.push(shown_to);
                s.push(0.0);
            }
            t.push(period32);
            s.push(if shown_to >= period32 { 1.0 } else { 0.0 });
            (t, s)
        };

        InstanceTrack { times, translations, rotations, scale_times, scales }
    }
}

impl InstanceTrack {
    /// The track and node name of the instance of agent `i`, `agent`,
    /// showing window `k` and, before its split, window `before` (see
    /// [`BakedAgent::instance_windows`]): `agent {i} instance {k}`, or for a
    /// first instance also showing the last window its
    /// [`InstanceTrack::merged`] track, `agent {i} instances {k} and {last}`.
    pub fn of(
        agent: &BakedAgent,
        i: usize,
        (k, before): (i64, Option<i64>),
        period: f64,
        time: &dyn Fn(f32) -> f32,
    ) -> (Self, String) {
        match before {
            Some(last) => {
                (InstanceTrack::merged(agent, k, last, period, time), format!("agent {i} instances {k} and {last}"))
            }
            None => (InstanceTrack::new(agent, k, period, time), format!("agent {i} instance {k}")),
        }
    }

    /// The track of an agent's first instance `k0` also showing its last
    /// window `k1` ([`BakedAgent::last_on_first`]): window k1's keys before
    /// [`BakedAgent::split`] (as `time` maps it), window k0's from it on;
    /// visible until window k1's part ends and from window k0's part on,
    /// hidden in between (where it moves from the path's end to its start).
    /// Rotations stay in one hemisphere throughout.
    pub fn merged(agent: &BakedAgent, k0: i64, k1: i64, period: f64, time: &dyn Fn(f32) -> f32) -> Self {
        let late = InstanceTrack::new(agent, k1, period, time);
        let early = InstanceTrack::new(agent, k0, period, time);
        let split = time(agent.split(period) as f32);
        let (until, from) = agent.hidden(period);
        let (until, from) = (time(until as f32), time(from as f32));
        let mut track = InstanceTrack::default();
        for j in (0..late.times.len()).filter(|&j| late.times[j] < split) {
            track.times.push(late.times[j]);
            track.translations.push(late.translations[j]);
            track.rotations.push(late.rotations[j]);
        }
        let flip = match (track.rotations.last(), early.rotations.iter().zip(&early.times).find(|x| *x.1 >= split)) {
            (Some(a), Some((b, _))) => a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>() < 0.0,
            _ => false,
        };
        for j in (0..early.times.len()).filter(|&j| early.times[j] >= split) {
            track.times.push(early.times[j]);
            track.translations.push(early.translations[j]);
            track.rotations.push(if flip { early.rotations[j].map(|c| -c) } else { early.rotations[j] });
        }
        let period32 = period as f32;
        (track.scale_times, track.scales) = (vec![0.0, until, from, period32], vec![1.0, 0.0, 1.0, 1.0]);
        track
    }
}

/// The keyframes of one sampler: times (an input accessor from
/// [`AnimationBuilder::input`]), interpolation, and output values.
pub(crate) struct Keys<'a> {
    /// Input accessor of the key times.
    pub input: json::Index<json::Accessor>,
    /// How values are interpolated between keys.
    pub interpolation: json::animation::Interpolation,
    /// Element type of the outputs.
    pub ty: FloatType,
    /// Output values, flattened: one element of `ty` per key time.
    pub values: &'a [f32],
}

/// Channels and samplers of one glTF animation under construction. Input
/// (time) accessors are shared between samplers whose key times are equal.
#[derive(Default)]
pub(crate) struct AnimationBuilder {
    channels: Vec<json::animation::Channel>,
    samplers: Vec<json::animation::Sampler>,
    /// Input accessors by the bit patterns of their `f32` times.
    inputs: BTreeMap<Vec<u32>, json::Index<json::Accessor>>,
}

impl AnimationBuilder {
    /// The input accessor holding `times` `[s]` (strictly increasing, ≥ 0),
    /// with `min`/`max`; made on first use.
    pub fn input(&mut self, b: &mut Builder, times: &[f32]) -> json::Index<json::Accessor> {
        let key: Vec<u32> = times.iter().map(|t| t.to_bits()).collect();
        if let Some(&accessor) = self.inputs.get(&key) {
            return accessor;
        }
        let accessor = b.floats(ViewKind::Animation, FloatType::Scalar, times, true);
        self.inputs.insert(key, accessor);
        accessor
    }

    /// Adds a sampler over `keys` and a channel driving `path` of `node`
    /// with it.
    pub fn channel(
        &mut self,
        b: &mut Builder,
        node: json::Index<json::Node>,
        path: json::animation::Property,
        keys: Keys<'_>,
    ) {
        let output = b.floats(ViewKind::Animation, keys.ty, keys.values, false);
        let sampler = json::Index::push(
            &mut self.samplers,
            json::animation::Sampler {
                extensions: None,
                extras: None,
                input: keys.input,
                interpolation: Valid(keys.interpolation),
                output,
            },
        );
        self.channels.push(json::animation::Channel {
            sampler,
            target: json::animation::Target { extensions: None, extras: None, node, path: Valid(path) },
            extensions: None,
            extras: None,
        });
    }

    /// Adds a sampler over `input` and an `output` accessor already written,
    /// and a channel driving `path` of `node` with it.
    pub fn channel_with_output(
        &mut self,
        node: json::Index<json::Node>,
        path: json::animation::Property,
        input: json::Index<json::Accessor>,
        interpolation: json::animation::Interpolation,
        output: json::Index<json::Accessor>,
    ) {
        let sampler = json::Index::push(
            &mut self.samplers,
            json::animation::Sampler {
                extensions: None,
                extras: None,
                input,
                interpolation: Valid(interpolation),
                output,
            },
        );
        self.channels.push(json::animation::Channel {
            sampler,
            target: json::animation::Target { extensions: None, extras: None, node, path: Valid(path) },
            extensions: None,
            extras: None,
        });
    }

    /// Adds the translation, rotation and scale channels of an instance node.
    pub fn instance(&mut self, b: &mut Builder, node: json::Index<json::Node>, track: &InstanceTrack) {
        use json::animation::{Interpolation, Property};
        let input = self.input(b, &track.times);
        let translations: Vec<f32> = track.translations.iter().flatten().copied().collect();
        let rotations: Vec<f32> = track.rotations.iter().flatten().copied().collect();
        let linear = |ty, values| Keys { input, interpolation: Interpolation::Linear, ty, values };
        self.channel(b, node, Property::Translation, linear(FloatType::Vec3, &translations));
        self.channel(b, node, Property::Rotation, linear(FloatType::Vec4, &rotations));
        let scales: Vec<f32> = track.scales.iter().flat_map(|&s| [s; 3]).collect();
        let keys = Keys {
            input: self.input(b, &track.scale_times),
            interpolation: Interpolation::Step,
            ty: FloatType::Vec3,
            values: &scales,
        };
        self.channel(b, node, Property::Scale, keys);
    }

    /// Whether no channel was added yet.
    pub fn is_empty(&self) -> bool {
        self.channels.is_empty()
    }

    /// Pushes the animation named `name`, unless it has no channel (glTF
    /// forbids empty animations).
    pub fn finish(self, b: &mut Builder, name: &str) -> Option<json::Index<json::Animation>> {
        if self.channels.is_empty() {
            return None;
        }
        Some(b.root.push(json::Animation {
            extensions: None,
            extras: None,
            channels: self.channels,
            name: Some(name.to_owned()),
            samplers: self.samplers,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crowdpatch_runtime::{AgentKind, PathKey};

    fn agent(keys: &[(f64, [f64; 2], f64)]) -> BakedAgent {
        BakedAgent {
            kind: AgentKind::Endogenous { index: 0 },
            keys: keys.iter().map(|&(t, position, heading)| PathKey { t, position, heading }).collect(),
        }
    }

    #[test]
    fn heading_maps_patch_directions_to_gltf_directions() {
        for h in [-3.0, -1.0, 0.0, 0.5, 2.0, std::f64::consts::PI] {
            let q = yaw_quaternion(heading_to_yaw(h));
            // Rotate +Z by q (a rotation about Y): (sin θ, 0, cos θ).
            let (s, c) = (q[1], q[3]);
            let forward = [2.0 * s * c, 0.0, c * c - s * s];
            let expected = patch_to_gltf([h.cos(), h.sin()], 0.0);
            for i in 0..3 {
                assert!((forward[i] - expected[i]).abs() < 1e-12, "h = {h}: {forward:?} vs {expected:?}");
            }
        }
    }

    #[test]
    fn tracks_key_window_ends_and_inner_keys() {
        // Period 10, path over [8, 23]: instances 0, 1, 2.
        let a = agent(&[(8.0, [0.0, 0.0], 0.0), (12.0, [4.0, 0.0], 3.0), (23.0, [4.0, 11.0], -3.0)]);
        assert_eq!(a.instances(10.0), 0..3);
        let t0 = InstanceTrack::new(&a, 0, 10.0, &|t| t);
        assert_eq!(t0.times, vec![0.0, 8.0, 10.0]);
        assert_eq!(t0.translations[0], [0.0, 0.0, 0.0]); // held before the start
        assert_eq!(t0.translations[2], [2.0, 0.0, 0.0]);
        assert_eq!((t0.scale_times.clone(), t0.scales.clone()), (vec![0.0, 8.0, 10.0], vec![0.0, 1.0, 1.0]));
        let t1 = InstanceTrack::new(&a, 1, 10.0, &|t| t);
        assert_eq!(t1.times, vec![0.0, 2.0, 10.0]);
        assert_eq!((t1.scale_times.clone(), t1.scales.clone()), (vec![0.0, 10.0], vec![1.0, 1.0]));
        let t2 = InstanceTrack::new(&a, 2, 10.0, &|t| t);
        assert_eq!(t2.times, vec![0.0, 3.0, 10.0]);
        assert_eq!(t2.translations[2], [4.0, 0.0, -11.0]); // held after the end
        assert_eq!((t2.scale_times.clone(), t2.scales.clone()), (vec![0.0, 3.0, 10.0], vec![1.0, 0.0, 0.0]));
        // Headings 3 → −3 turn the short way through π: same hemisphere.
        for track in [&t0, &t1, &t2] {
            for w in track.rotations.windows(2) {
                let d: f32 = (0..4).map(|i| w[0][i] * w[1][i]).sum();
                assert!(d >= 0.0, "{:?}", track.rotations);
            }
        }
    }

    #[test]
    fn keys_that_meet_in_f32_are_merged() {
        // A key a hair before the window's end rounds onto π.
        let a = agent(&[(1.0, [0.0, 0.0], 0.0), (10.0 - 1e-9, [9.0, 0.0], 0.0), (12.0, [11.0, 0.0], 0.0)]);
        let t = InstanceTrack::new(&a, 0, 10.0, &|t| t);
        assert_eq!(t.times, vec![0.0, 1.0, 10.0]);
        assert!(t.times.windows(2).all(|w| w[0] < w[1]));
    }
}
