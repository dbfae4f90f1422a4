//! A baked patch in compact playback form: [`Tile`].
//!
//! A tile holds, per agent *instance* (one glTF node of the bake, see
//! `exporters/gltf`), its root-motion keyframes over one period (time,
//! position, heading, gait cycles) in one structure-of-arrays store, its
//! visibility interval, and optionally the joint clip of its skeleton. The
//! baked record (`extras.crowdpatch`: size, period, patterns with
//! velocities, obstacles, agents) is kept beside it.
//!
//! Sampling a tile at play time `t` evaluates every instance at
//! `τ = t mod π` by a binary search (or a cursor, [`TileCursor`]) over its
//! keys and a linear interpolation.

use crate::format::{AgentExtras, BakedPatch, SceneExtras, wrap_angle};
use crate::pose::{Placement, PosesMut};
use crate::skeletal::Character;
use std::sync::Arc;

/// Length `[m]` of one gait cycle (two steps) used to derive the gait phase
/// from the distance walked when the bake carries no footsteps: about two
/// steps of 0.7 m at the comfort speed of 1.33 m/s.
pub const NOMINAL_CYCLE_LENGTH: f64 = 1.4;

/// Most gait cycles an agent may walk (about 5 600 km): beyond, cycles would
/// lose their fraction in `f32`, and the phase is left at 0.
const MAX_CYCLES: f64 = 4_000_000.0;

/// Where the gait phase reported by [`Tile::sample`] comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaseSource {
    /// From the footsteps in the bake's extras
    /// (`extras.crowdpatch.agents[i].footsteps[j].t`, unwrapped times of
    /// successive foot plants): half a cycle per footstep, linear in time
    /// between them.
    Footsteps,
    /// From the distance walked (no footsteps in the bake): each agent's path
    /// is divided into a whole number of gait cycles of about
    /// [`NOMINAL_CYCLE_LENGTH`], so the phase is 0 where the agent enters
    /// (and leaves) the tile and where an endogenous loop closes. Phase is
    /// therefore continuous across seams and loops.
    DistanceWalked,
}

/// Interpolation of a joint channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interpolation {
    /// Linear (normalised linear for rotations).
    Linear,
    /// Held from each key to the next.
    Step,
}

/// What a joint channel animates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JointProperty {
    /// Translation `[m]`, 3 values per key.
    Translation,
    /// Rotation quaternion `(x, y, z, w)`, 4 values per key.
    Rotation,
    /// Scale, 3 values per key.
    Scale,
}

impl JointProperty {
    /// Values per key.
    pub fn width(self) -> usize {
        match self {
            JointProperty::Rotation => 4,
            _ => 3,
        }
    }
}

/// One joint of an instance's skeleton: a node below the instance node.
#[derive(Debug, Clone, PartialEq)]
pub struct Joint {
    /// glTF node index.
    pub node: usize,
    /// Node name, if any.
    pub name: Option<String>,
    /// Parent joint (index into [`JointClip::joints`]); `None` for a child of
    /// the instance node itself. Parents come before their children.
    pub parent: Option<usize>,
    /// Rest pose: the node's own transform.
    pub rest: JointPose,
}

/// A local joint transform (relative to its parent).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JointPose {
    /// Translation `[m]`.
    pub translation: [f32; 3],
    /// Unit quaternion `(x, y, z, w)`.
    pub rotation: [f32; 4],
    /// Scale.
    pub scale: [f32; 3],
}

impl Default for JointPose {
    fn default() -> Self {
        JointPose { translation: [0.0; 3], rotation: [0.0, 0.0, 0.0, 1.0], scale: [1.0; 3] }
    }
}

/// One animation channel of a joint.
#[derive(Debug, Clone, PartialEq)]
pub struct JointChannel {
    /// Index into [`JointClip::joints`].
    pub joint: usize,
    /// The animated property.
    pub property: JointProperty,
    /// Interpolation.
    pub interpolation: Interpolation,
    /// Key times `τ` `[s]`, strictly increasing, in `[0, π]`.
    pub times: Vec<f32>,
    /// [`JointProperty::width`] values per key.
    pub values: Vec<f32>,
}

/// The skeletal clip of one agent instance: the joints below its instance
/// node and the channels of the `loop` animation that target them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JointClip {
    /// The joints, parents first.
    pub joints: Vec<Joint>,
    /// Their channels.
    pub channels: Vec<JointChannel>,
}

impl JointClip {
    /// Local joint poses at play time `tau` `[s]` (in `[0, π)`): the rest pose
    /// where a property has no channel. `out` is resized to one pose per
    /// joint.
    pub fn sample(&self, tau: f32, out: &mut Vec<JointPose>) {
        out.clear();
        out.extend(self.joints.iter().map(|j| j.rest));
        for ch in &self.channels {
            let Some(pose) = out.get_mut(ch.joint) else { continue };
            let w = ch.property.width();
            let n = ch.times.len();
            if n == 0 || ch.values.len() < n * w {
                continue;
            }
            let i = ch.times.partition_point(|&t| t <= tau);
            let value = |k: usize, c: usize| ch.values[k * w + c];
            let mut v = [0.0f32; 4];
            if i == 0 || i >= n || ch.interpolation == Interpolation::Step {
                let k = i.saturating_sub(1).min(n - 1);
                (0..w).for_each(|c| v[c] = value(k, c));
            } else {
                let (t0, t1) = (ch.times[i - 1], ch.times[i]);
                let u = if t1 > t0 { (tau - t0) / (t1 - t0) } else { 0.0 };
                let sign =
                    if w == 4 && (0..4).map(|c| value(i - 1, c) * value(i, c)).sum::<f32>() < 0.0 { -1.0 } else { 1.0 };
                (0..w).for_each(|c| v[c] = value(i - 1, c) * (1.0 - u) + sign * value(i, c) * u);
            }
            match ch.property {
                JointProperty::Translation => pose.translation = [v[0], v[1], v[2]],
                JointProperty::Scale => pose.scale = [v[0], v[1], v[2]],
                JointProperty::Rotation => {
                    let n = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3]).sqrt();
                    if n > 0.0 {
                        pose.rotation = [v[0] / n, v[1] / n, v[2] / n, v[3] / n];
                    }
                }
            }
        }
    }
}

/// What an agent instance is: which agent, which period shifts, which node.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InstanceInfo {
    /// Index of the agent in [`SceneExtras::agents`].
    pub agent: usize,
    /// Period index `k`: from play time `split` on, the instance shows the
    /// agent's path at the unwrapped time `τ + kπ`.
    pub k: i64,
    /// Period index before play time `split`: the agent's last window where
    /// its first instance also shows it
    /// ([`crate::BakedAgent::last_on_first`]), else `k`.
    pub k_before: i64,
    /// Play time `[s]` from which `k` holds (0 where `k_before = k`).
    pub split: f64,
    /// glTF node index (for a tile built with [`Tile::from_baked`], the
    /// instance index).
    pub node: usize,
}

impl InstanceInfo {
    /// An instance showing one window, `k`.
    pub fn single(agent: usize, k: i64, node: usize) -> InstanceInfo {
        InstanceInfo { agent, k, k_before: k, split: 0.0, node }
    }

    /// The period index shown at play time `tau` `[s]`.
    pub fn period_index(&self, tau: f64) -> i64 {
        if tau < self.split { self.k_before } else { self.k }
    }

    /// The unwrapped time `[s]` of the path shown at play time `tau` `[s]`
    /// of a loop of period `period` `[s]`.
    pub fn path_time(&self, tau: f64, period: f64) -> f64 {
        tau + self.period_index(tau) as f64 * period
    }
}

/// A baked patch in compact playback form. See the [module](self)
/// documentation.
///
/// Shapes: `n` agent instances, `m` keys in all. Positions `[m]` are in the
/// patch frame (origin at the south-west corner, x east, y north), headings
/// `[rad]` from +x towards +y, times `[s]` in `[0, π]`.
#[derive(Debug, Clone)]
pub struct Tile {
    extras: SceneExtras,
    period32: f32,
    phase_source: PhaseSource,
    info: Vec<InstanceInfo>,
    /// Per instance: first key; `key_start[n] = m`.
    key_start: Vec<u32>,
    /// Per instance: start of the visible interval `τ` `[s]`.
    visible_from: Vec<f32>,
    /// Per instance: length of the visible interval `[s]` (it may wrap past π).
    visible_for: Vec<f32>,
    /// Per instance: index into `clips`, or `u32::MAX`.
    clip: Vec<u32>,
    /// All keys, instance after instance.
    keys: Vec<Key>,
    clips: Vec<JointClip>,
    /// The skinned mesh and skin of a skeletal bake, shared by every
    /// instance.
    character: Option<Arc<Character>>,
    /// Per joint of `character`: its row in the instances' joint clips.
    skin_rows: Vec<u32>,
}

/// One root-motion key, with what interpolating up to it needs: 24 bytes,
/// so that the two keys around a play time share a cache line or two.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Key {
    /// Time `τ` `[s]`.
    t: f32,
    /// Position `[m]`.
    x: f32,
    /// Position `[m]`.
    y: f32,
    /// Heading `[rad]`, unwrapped along the instance's keys.
    heading: f32,
    /// Gait cycles walked since the agent's start.
    cycles: f32,
    /// `1 / (t − t_previous)` `[1/s]` (0 for an instance's first key).
    inv_dt: f32,
}

/// The root-motion track of one instance while a tile is built: keys from
/// `τ = 0` to `τ = π`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Track {
    pub info: Option<InstanceInfo>,
    pub times: Vec<f32>,
    pub x: Vec<f32>,
    pub y: Vec<f32>,
    /// Unwrapped along the keys.
    pub heading: Vec<f32>,
    pub visible_from: f32,
    pub visible_for: f32,
    pub clip: Option<JointClip>,
}

impl Track {
    /// Distance walked `[m]` along the keys `keys` (a range of key indices).
    fn distance_over(&self, keys: std::ops::Range<usize>) -> f64 {
        (keys.start + 1..keys.end)
            .map(|i| f64::from(self.x[i] - self.x[i - 1]).hypot(f64::from(self.y[i] - self.y[i - 1])))
            .sum()
    }
}

/// Makes a track's keys run from exactly `τ = 0` to exactly `τ = π` (holding
/// its first and last values), so that every play time falls between two keys.
fn normalise(track: &mut Track, cycles: &mut Vec<f32>, period: f32) {
    if track.times.is_empty() {
        track.times.push(0.0);
        track.x.push(0.0);
        track.y.push(0.0);
        track.heading.push(0.0);
        cycles.push(0.0);
    }
    if track.times[0] > 0.0 {
        track.times.insert(0, 0.0);
        for v in [&mut track.x, &mut track.y, &mut track.heading, cycles] {
            v.insert(0, v[0]);
        }
    }
    let last = track.times.len() - 1;
    if track.times[last] < period || track.times.len() < 2 {
        track.times.push(period.max(track.times[last] + f32::EPSILON));
        for v in [&mut track.x, &mut track.y, &mut track.heading, cycles] {
            v.push(v[last]);
        }
    }
}

/// Inserts keys into `track` at the play times `taus` (sorted) that fall
/// strictly between two of its keys, with the values the track's linear
/// interpolation has there (position and heading as played are unchanged
/// up to `f32` rounding). O(k + m) for `k` keys and `m` times.
fn insert_keys(track: &mut Track, taus: &[f32]) {
    let n = track.times.len();
    if n < 2 || taus.is_empty() {
        return;
    }
    let (mut times, mut x, mut y, mut heading) = (
        Vec::with_capacity(n + taus.len()),
        Vec::with_capacity(n + taus.len()),
        Vec::with_capacity(n + taus.len()),
        Vec::with_capacity(n + taus.len()),
    );
    let mut s = taus.partition_point(|&tau| tau <= track.times[0]);
    for j in 0..n {
        if j > 0 {
            let (a, b) = (track.times[j - 1], track.times[j]);
            while s < taus.len() && taus[s] < b {
                let tau = taus[s];
                s += 1;
                if tau <= a || times.last().is_some_and(|&last| tau <= last) {
                    continue;
                }
                let u = (tau - a) / (b - a);
                times.push(tau);
                x.push(track.x[j - 1] + (track.x[j] - track.x[j - 1]) * u);
                y.push(track.y[j - 1] + (track.y[j] - track.y[j - 1]) * u);
                heading.push(track.heading[j - 1] + (track.heading[j] - track.heading[j - 1]) * u);
            }
            while s < taus.len() && taus[s] <= b {
                s += 1;
            }
        }
        times.push(track.times[j]);
        x.push(track.x[j]);
        y.push(track.y[j]);
        heading.push(track.heading[j]);
    }
    (track.times, track.x, track.y, track.heading) = (times, x, y, heading);
}

/// Gait cycles as a function of unwrapped time, from footstep times: half a
/// cycle per footstep, linear in between and extrapolated at the ends.
fn footstep_cycles(steps: &[f64], t: f64) -> f64 {
    match steps.len() {
        0 => 0.0,
        1 => 0.0,
        n => {
            let i = steps.partition_point(|&s| s <= t).clamp(1, n - 1);
            let (a, b) = (steps[i - 1], steps[i]);
            let u = if b > a { (t - a) / (b - a) } else { 0.0 };
            (((i - 1) as f64 + u) * 0.5).max(0.0)
        }
    }
}

impl Tile {
    /// Builds a tile from per-instance tracks (in instance order, agents in
    /// order) and the extras; computes the gait cycles.
    pub(crate) fn build(extras: SceneExtras, mut tracks: Vec<Track>, footsteps: Option<Vec<Vec<f64>>>) -> Tile {
        let period = extras.header.period;
        let phase_source = if footsteps.is_some() { PhaseSource::Footsteps } else { PhaseSource::DistanceWalked };
        // Gait cycles per key.
        let mut cycles: Vec<Vec<f32>> = tracks.iter().map(|t| vec![0.0; t.times.len()]).collect();
        let mut by_agent: Vec<Vec<usize>> = vec![Vec::new(); extras.agents.len()];
        for (i, t) in tracks.iter().enumerate() {
            if let Some(info) = t.info
                && let Some(list) = by_agent.get_mut(info.agent)
            {
                list.push(i);
            }
        }
        for (agent, list) in by_agent.iter_mut().enumerate() {
            list.sort_by_key(|&i| tracks[i].info.map_or(0, |info| info.k));
            if let Some(steps) = footsteps.as_ref().and_then(|f| f.get(agent)) {
                let [start, end] = extras.agents[agent].interval;
                for &i in list.iter() {
                    let info = tracks[i].info.unwrap_or(InstanceInfo::single(agent, 0, i));
                    // A key at every footstep inside the track, so that the
                    // phase is exact at each plant also where the root's
                    // keys lie far apart (a walker slowing to a stop).
                    let mut taus: Vec<f32> = steps.iter().map(|&s| (s - info.k as f64 * period) as f32).collect();
                    if info.k_before != info.k {
                        // Each window's footsteps on its side of the split.
                        let shown = |tau: f32, k: i64| info.period_index(f64::from(tau)) == k;
                        taus.retain(|&tau| shown(tau, info.k));
                        taus.extend(
                            steps
                                .iter()
                                .map(|&s| (s - info.k_before as f64 * period) as f32)
                                .filter(|&tau| shown(tau, info.k_before)),
                        );
                        taus.sort_by(f32::total_cmp);
                    }
                    insert_keys(&mut tracks[i], &taus);
                    cycles[i].resize(tracks[i].times.len(), 0.0);
                    for (j, &tau) in tracks[i].times.iter().enumerate() {
                        let t = info.path_time(f64::from(tau), period).clamp(start, end);
                        cycles[i][j] = footstep_cycles(steps, t).min(MAX_CYCLES) as f32;
                    }
                }
                continue;
            }
            // The tracks' keys in the order of the path's time: per window
            // `k`, (track, its keys showing window k). A track showing two
            // windows (its keys before its split, then from it) is two
            // pieces, and the hidden jump between them is no distance walked.
            let mut pieces: Vec<(i64, usize, std::ops::Range<usize>)> = Vec::with_capacity(list.len() + 1);
            for &i in list.iter() {
                let n = tracks[i].times.len();
                match tracks[i].info {
                    Some(info) if info.k_before != info.k => {
                        let cut = tracks[i].times.partition_point(|&tau| f64::from(tau) < info.split);
                        pieces.push((info.k_before, i, 0..cut));
                        pieces.push((info.k, i, cut..n));
                    }
                    info => pieces.push((info.map_or(0, |info| info.k), i, 0..n)),
                }
            }
            pieces.sort_by_key(|p| p.0);
            let total: f64 = pieces.iter().map(|(_, i, keys)| tracks[*i].distance_over(keys.clone())).sum();
            if total < 1e-3 {
                continue;
            }
            let n_cycles = (total / NOMINAL_CYCLE_LENGTH).round().max(1.0);
            if n_cycles > MAX_CYCLES {
                continue; // an absurd path: no gait phase
            }
            let per_metre = n_cycles / total;
            let mut walked = 0.0;
            for (_, i, keys) in pieces {
                let tr = &tracks[i];
                let first = keys.start;
                for j in keys {
                    if j > first {
                        walked += f64::from(tr.x[j] - tr.x[j - 1]).hypot(f64::from(tr.y[j] - tr.y[j - 1]));
                    }
                    cycles[i][j] = (walked * per_metre) as f32;
                }
            }
        }

        for (track, c) in tracks.iter_mut().zip(cycles.iter_mut()) {
            normalise(track, c, period as f32);
        }
        let total_keys: usize = tracks.iter().map(|t| t.times.len()).sum();
        let n = tracks.len();
        let mut tile = Tile {
            period32: period as f32,
            phase_source,
            info: Vec::with_capacity(n),
            key_start: Vec::with_capacity(n + 1),
            visible_from: Vec::with_capacity(n),
            visible_for: Vec::with_capacity(n),
            clip: Vec::with_capacity(n),
            keys: Vec::with_capacity(total_keys),
            clips: Vec::new(),
            extras,
            character: None,
            skin_rows: Vec::new(),
        };
        for (i, track) in tracks.iter_mut().enumerate() {
            tile.info.push(track.info.unwrap_or(InstanceInfo::single(0, 0, i)));
            tile.key_start.push(tile.keys.len() as u32);
            tile.visible_from.push(track.visible_from);
            tile.visible_for.push(track.visible_for);
            match track.clip.take() {
                Some(c) => {
                    tile.clip.push(tile.clips.len() as u32);
                    tile.clips.push(c);
                }
                None => tile.clip.push(u32::MAX),
            }
            for (k, &c) in cycles[i].iter().enumerate() {
                let dt = if k == 0 { 0.0 } else { track.times[k] - track.times[k - 1] };
                tile.keys.push(Key {
                    t: track.times[k],
                    x: track.x[k],
                    y: track.y[k],
                    heading: track.heading[k],
                    cycles: c,
                    inv_dt: if dt > 1e-30 { 1.0 / dt } else { 0.0 },
                });
            }
        }
        tile.key_start.push(tile.keys.len() as u32);
        tile
    }

    /// Builds the playback form straight from a [`BakedPatch`] (no GLB), with
    /// the same keys, in `f32`, as the GLB exporter writes: per instance `k`
    /// of each agent, the path sampled at `τ = 0`, at every path key inside
    /// the window `(kπ, (k+1)π)` and at `τ = π`, held at its ends outside the
    /// path's interval, visible on `[start − kπ, end − kπ) ∩ [0, π)`; where
    /// the first instance also shows the last window
    /// ([`crate::BakedAgent::last_on_first`]), its keys before the split are the
    /// last window's, and it is visible on both windows' parts (wrapping).
    ///
    /// The patch is assumed valid (as a bake produces it): at least two keys
    /// per agent, increasing times. An agent with fewer keys is skipped.
    pub fn from_baked(patch: &BakedPatch) -> Tile {
        let period = patch.header.period;
        let mut tracks = Vec::new();
        let mut agents = Vec::with_capacity(patch.agents.len());
        for (a, agent) in patch.agents.iter().enumerate() {
            if agent.keys.len() < 2 {
                agents.push(AgentExtras {
                    kind: agent.kind,
                    interval: [0.0, 0.0],
                    first_instance: 0,
                    nodes: vec![],
                    footsteps: None,
                });
                continue;
            }
            let (start, end) = (agent.start(), agent.end());
            // (τ in f32, unwrapped time to sample) of window k.
            let window = |k: i64| {
                let w0 = k as f64 * period;
                let w1 = w0 + period;
                let mut samples: Vec<(f32, f64)> = vec![(0.0, w0.clamp(start, end))];
                for key in agent.keys.iter().filter(|key| key.t > w0 && key.t < w1) {
                    let tau = (key.t - w0) as f32;
                    match samples.last_mut() {
                        Some(last) if last.0 >= tau => last.1 = key.t,
                        _ => samples.push((tau, key.t)),
                    }
                }
                match samples.last_mut() {
                    Some(last) if last.0 >= period as f32 => last.1 = w1.clamp(start, end),
                    _ => samples.push((period as f32, w1.clamp(start, end))),
                }
                samples
            };
            let mut nodes = Vec::new();
            for (k, before) in agent.instance_windows(period) {
                let (samples, info) = match before {
                    // Window `last` before the split, window k from it on.
                    Some(last) => {
                        let split = agent.split(period);
                        let s32 = split as f32;
                        let samples: Vec<(f32, f64)> = window(last)
                            .into_iter()
                            .filter(|w| w.0 < s32)
                            .chain(window(k).into_iter().filter(|w| w.0 >= s32))
                            .collect();
                        (samples, InstanceInfo { agent: a, k, k_before: last, split, node: tracks.len() })
                    }
                    None => (window(k), InstanceInfo::single(a, k, tracks.len())),
                };
                let mut track = Track { info: Some(info), ..Track::default() };
                let mut previous: Option<f64> = None;
                for (tau, t) in samples {
                    let (p, h) = agent.sample(t).unwrap_or((agent.keys[0].position, agent.keys[0].heading));
                    let h = match previous {
                        None => h,
                        Some(prev) => prev + wrap_angle(h - prev),
                    };
                    previous = Some(h);
                    track.times.push(tau);
                    track.x.push(p[0] as f32);
                    track.y.push(p[1] as f32);
                    track.heading.push(h as f32);
                }
                let w0 = k as f64 * period;
                let from = (start - w0).max(0.0) as f32;
                let to = match before {
                    // Shown on [from, π) and on [0, end − (last)π).
                    Some(_) => period as f32 + agent.hidden(period).0 as f32,
                    None => (end - w0).min(period) as f32,
                };
                track.visible_from = from;
                track.visible_for = (to - from).max(0.0).min(period as f32);
                nodes.push(tracks.len());
                tracks.push(track);
            }
            agents.push(agent.extras(period, nodes, None));
        }
        let extras = SceneExtras {
            format: patch.format,
            header: patch.header.clone(),
            patterns: patch.patterns.clone(),
            obstacles: patch.obstacles.clone(),
            agents,
            character: None,
        };
        // A skeletal bake's foot plants give the gait phase, as they do when
        // the tile is loaded from its GLB.
        let footsteps = patch.skeletal.as_ref().map(|sk| {
            (0..patch.agents.len())
                .map(|a| sk.agents.get(a).map(|x| x.footsteps.iter().map(|f| f.t).collect()).unwrap_or_default())
                .collect()
        });
        let mut tile = Tile::build(extras, tracks, footsteps);
        tile.character = patch.skeletal.as_ref().map(|sk| Arc::new(sk.character.clone()));
        tile
    }

    /// The baked record: name, size, period, radius, patterns (with
    /// velocities, patch frame), obstacles, agents.
    pub fn extras(&self) -> &SceneExtras {
        &self.extras
    }

    /// Name of the patch.
    pub fn name(&self) -> &str {
        &self.extras.header.name
    }

    /// Side length L `[m]`.
    pub fn size(&self) -> f64 {
        self.extras.header.size
    }

    /// Period π `[s]`.
    pub fn period(&self) -> f64 {
        self.extras.header.period
    }

    /// Agent radius r `[m]`.
    pub fn agent_radius(&self) -> f64 {
        self.extras.header.agent_radius
    }

    /// Number of agent instances `n`: the length of a sample.
    pub fn instance_count(&self) -> usize {
        self.info.len()
    }

    /// Number of agents (each has one or more instances).
    pub fn agent_count(&self) -> usize {
        self.extras.agents.len()
    }

    /// What instance `i` is.
    ///
    /// # Panics
    /// If `i ≥ instance_count()`.
    pub fn instance(&self, i: usize) -> InstanceInfo {
        self.info[i]
    }

    /// Where the gait phase comes from.
    pub fn phase_source(&self) -> PhaseSource {
        self.phase_source
    }

    /// The skeletal clip of instance `i`, when the bake has joints below its
    /// instance node.
    pub fn joint_clip(&self, i: usize) -> Option<&JointClip> {
        self.clip.get(i).and_then(|&c| self.clips.get(c as usize))
    }

    /// Visible interval of instance `i` as `(from, length)` `[s]`: visible at
    /// `τ` iff `(τ − from) mod π < length`.
    pub fn visibility(&self, i: usize) -> (f32, f32) {
        (self.visible_from[i], self.visible_for[i])
    }

    /// Number of keys in all (`m`).
    pub fn key_count(&self) -> usize {
        self.keys.len()
    }

    /// Heap bytes held by the playback form (keys, per-instance data, joint
    /// clips, the character's mesh and skin, about; not the extras record).
    pub fn memory_bytes(&self) -> usize {
        let per_key = std::mem::size_of::<Key>();
        let per_instance = std::mem::size_of::<InstanceInfo>() + 4 * 4;
        let clips: usize = self
            .clips
            .iter()
            .map(|c| {
                c.joints.len() * std::mem::size_of::<Joint>()
                    + c.channels.iter().map(|ch| (ch.times.len() + ch.values.len()) * 4 + 64).sum::<usize>()
            })
            .sum();
        let character = self.character.as_ref().map_or(0, |c| {
            c.joints.len() * (std::mem::size_of::<crate::skeletal::CharacterJoint>() + 16)
                + c.primitives.iter().map(|p| p.positions.len() * 64 + p.indices.len() * 4).sum::<usize>()
        });
        self.keys.len() * per_key + self.info.len() * per_instance + 4 + clips + character
    }

    /// The character of a skeletal bake: skeleton (joints in the order of
    /// each instance's [`JointClip`] joints and of the
    /// [`crate::JointSampler`]'s rows, parents, inverse bind matrices) and
    /// the skinned mesh every instance shares; `None` for a capsule bake.
    /// A game builds one mesh and one set of inverse bind matrices from it
    /// and draws every instance with them (`Arc`: tiles baked with one
    /// character may share it).
    pub fn character(&self) -> Option<&Arc<Character>> {
        self.character.as_ref()
    }

    /// Per joint `k` of [`Tile::character`] (the skin's order, which
    /// the inverse bind matrices and the mesh's `JOINTS_0` follow): its row
    /// in every instance's [`JointClip`] and [`crate::JointSampler`] row of
    /// joints (those list the joints breadth first). Empty for a capsule
    /// bake and for a tile built with [`Tile::from_baked`] (which has no
    /// joint clips).
    pub fn skin_rows(&self) -> &[u32] {
        &self.skin_rows
    }

    #[cfg(feature = "glb")]
    pub(crate) fn set_character(&mut self, character: Option<Character>, skin_rows: Vec<u32>) {
        self.character = character.map(Arc::new);
        self.skin_rows = skin_rows;
    }

    /// Play time `τ` `[s]` in `[0, π)` of time `t` `[s]` (any real).
    #[inline]
    pub fn play_time(&self, t: f64) -> f32 {
        let tau = t.rem_euclid(self.extras.header.period) as f32;
        if tau >= self.period32 || tau.is_nan() { 0.0 } else { tau }
    }

    /// Interpolates instance `i` at `τ` between keys `j − 1` and `j`:
    /// `(x, y, heading, cycles)`.
    #[inline(always)]
    fn lerp(&self, j: usize, tau: f32) -> (f32, f32, f32, f32) {
        let (a, b) = (self.keys[j - 1], self.keys[j]);
        let u = ((tau - a.t) * b.inv_dt).clamp(0.0, 1.0);
        (
            a.x + (b.x - a.x) * u,
            a.y + (b.y - a.y) * u,
            a.heading + (b.heading - a.heading) * u,
            a.cycles + (b.cycles - a.cycles) * u,
        )
    }

    /// The key `j` whose interval `[t_{j−1}, t_j)` holds `τ`, by binary search.
    #[inline(always)]
    fn find(&self, i: usize, tau: f32) -> usize {
        let (a, b) = (self.key_start[i] as usize, self.key_start[i + 1] as usize);
        let keys = &self.keys[a..b];
        a + keys.partition_point(|k| k.t <= tau).clamp(1, keys.len().max(2) - 1)
    }

    #[inline(always)]
    fn is_visible(&self, i: usize, tau: f32) -> bool {
        let mut d = tau - self.visible_from[i];
        if d < 0.0 {
            d += self.period32;
        }
        d < self.visible_for[i]
    }

    /// Pose of instance `i` at time `t` `[s]` (patch frame): position `[m]`,
    /// heading `[rad]` (not wrapped), visible, gait phase in `[0, 1)`.
    ///
    /// # Panics
    /// If `i ≥ instance_count()`.
    pub fn instance_pose(&self, i: usize, t: f64) -> ([f64; 2], f64, bool, f32) {
        let tau = self.play_time(t);
        let (x, y, h, c) = self.lerp(self.find(i, tau), tau);
        ([f64::from(x), f64::from(y)], f64::from(h), self.is_visible(i, tau), c - c.floor())
    }

    /// Samples every instance at time `t` `[s]` (any real; periodic),
    /// placed by `placement`, into `out` (one slot per instance, in instance
    /// order). O(n log k) for `n` instances of `k` keys each.
    ///
    /// # Panics
    /// If `out` is shorter than [`Tile::instance_count`].
    pub fn sample(&self, t: f64, placement: &Placement, out: PosesMut<'_>) {
        let tau = self.play_time(t);
        let n = self.instance_count();
        let out = out.truncate(n);
        for i in 0..n {
            let (x, y, h, c) = self.lerp(self.find(i, tau), tau);
            out.x[i] = x;
            out.y[i] = y;
            out.heading[i] = h;
            out.phase[i] = c - (c as i32) as f32;
            out.visible[i] = self.is_visible(i, tau);
        }
        placement.apply(self.size(), out);
    }

    /// As [`Tile::sample`], with a cursor per instance remembering its last
    /// key: when time moves forward by less than a key interval per call (a
    /// game's frames), each instance costs a comparison or two instead of a
    /// binary search.
    ///
    /// # Panics
    /// If `out` is shorter than [`Tile::instance_count`].
    pub fn sample_with(&self, t: f64, placement: &Placement, cursor: &mut TileCursor, out: PosesMut<'_>) {
        let tau = self.play_time(t);
        let n = self.instance_count();
        if cursor.key.len() != n {
            cursor.key = (0..n).map(|i| self.key_start[i] + 1).collect();
        }
        let out = out.truncate(n);
        for i in 0..n {
            let end = self.key_start[i + 1] as usize;
            let mut j = cursor.key[i] as usize;
            if j < self.key_start[i] as usize + 1 || j >= end || self.keys[j - 1].t > tau {
                j = self.find(i, tau);
            } else {
                while self.keys[j].t <= tau && j + 1 < end {
                    j += 1;
                }
            }
            cursor.key[i] = j as u32;
            let (x, y, h, c) = self.lerp(j, tau);
            out.x[i] = x;
            out.y[i] = y;
            out.heading[i] = h;
            out.phase[i] = c - (c as i32) as f32;
            out.visible[i] = self.is_visible(i, tau);
        }
        placement.apply(self.size(), out);
    }

    /// Position `[m]` (patch frame) of instance `i` at play time `tau`
    /// `[s]`, whether visible or not.
    pub(crate) fn position_at(&self, i: usize, tau: f32) -> [f32; 2] {
        let (x, y, _, _) = self.lerp(self.find(i, tau), tau);
        [x, y]
    }

    /// Key times of instance `i`.
    pub(crate) fn key_times(&self, i: usize) -> impl Iterator<Item = f32> + '_ {
        self.keys[self.key_start[i] as usize..self.key_start[i + 1] as usize].iter().map(|k| k.t)
    }

    /// The instance showing agent `agent` at unwrapped time `t` `[s]`, and
    /// the play time there; `None` outside the agent's interval.
    pub(crate) fn agent_instance_at(&self, agent: usize, t: f64) -> Option<(usize, f32)> {
        let a = self.extras.agents.get(agent)?;
        let [start, end] = a.interval;
        if !(t >= start && t <= end) {
            return None;
        }
        let period = self.extras.header.period;
        let mut k = (t / period).floor() as i64;
        let mut tau = t - k as f64 * period;
        // The end of an interval on kπ belongs to the previous window.
        if tau == 0.0 && t > start {
            k -= 1;
            tau = period;
        }
        let index = usize::try_from(k - a.first_instance).ok()?;
        let node = *a.nodes.get(index)?;
        let i = self.info.iter().position(|info| info.node == node)?;
        Some((i, tau as f32))
    }

    /// Position `[m]` (patch frame) of agent `agent` at unwrapped time `t`
    /// `[s]`, or `None` outside its interval.
    pub fn agent_position(&self, agent: usize, t: f64) -> Option<[f64; 2]> {
        let (i, tau) = self.agent_instance_at(agent, t)?;
        let (x, y, _, _) = self.lerp(self.find(i, tau.min(self.period32)), tau);
        Some([f64::from(x), f64::from(y)])
    }
}

/// Per-instance key cursors for [`Tile::sample_with`].
#[derive(Debug, Clone, Default)]
pub struct TileCursor {
    key: Vec<u32>,
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::format::{AgentKind, BakedAgent, PatchHeader, PathKey, Sides};
    use crate::pose::Poses;

    pub(crate) fn patch(agents: Vec<BakedAgent>) -> BakedPatch {
        BakedPatch {
            format: crate::FORMAT_VERSION,
            header: PatchHeader {
                name: "t".into(),
                size: 16.0,
                period: 10.0,
                agent_radius: 0.3,
                comfort_speed: 1.33,
                seed: 0,
            },
            patterns: Sides::default(),
            obstacles: vec![],
            agents,
            skeletal: None,
        }
    }

    fn agent(keys: &[(f64, [f64; 2])]) -> BakedAgent {
        BakedAgent {
            kind: AgentKind::Endogenous { index: 0 },
            keys: keys.iter().map(|&(t, position)| PathKey { t, position, heading: 0.0 }).collect(),
        }
    }

    #[test]
    fn sampling_matches_the_baked_path_at_every_instance() {
        // A path over [8, 23] s meets three windows at period 10; the last
        // one's part (play times 0 to 3 s) ends before the first's begins
        // (8 s), so the first instance shows both: two instances.
        let a = agent(&[(8.0, [0.0, 0.0]), (12.0, [4.0, 0.0]), (23.0, [4.0, 11.0])]);
        assert!(a.last_on_first(10.0));
        assert_eq!(a.split(10.0), 5.5);
        let tile = Tile::from_baked(&patch(vec![a.clone()]));
        assert_eq!(tile.instance_count(), 2);
        assert_eq!((tile.instance(0).k_before, tile.instance(0).k), (2, 0));
        let mut poses = Poses::new(2);
        for step in 0..200 {
            let t = step as f64 * 0.173;
            tile.sample(t, &Placement::default(), poses.as_mut());
            let tau = t.rem_euclid(10.0);
            let mut shown = 0;
            for i in 0..2 {
                let unwrapped = tile.instance(i).path_time(tau, 10.0);
                let visible = (8.0..23.0).contains(&unwrapped);
                assert_eq!(poses.visible[i], visible, "t = {t}, instance {i}");
                if visible {
                    shown += 1;
                    let (p, _) = a.sample(unwrapped).unwrap();
                    assert!((f64::from(poses.x[i]) - p[0]).abs() < 1e-4, "t = {t}");
                    assert!((f64::from(poses.y[i]) - p[1]).abs() < 1e-4, "t = {t}");
                }
            }
            // A 15 s path at period 10 s shows one or two instances at once.
            assert!((1..=2).contains(&shown), "t = {t}: {shown} shown");
        }
    }

    #[test]
    fn cursor_sampling_equals_binary_search() {
        let a = agent(&[(1.0, [0.0, 0.0]), (2.0, [1.0, 0.0]), (5.0, [1.0, 3.0]), (9.0, [5.0, 3.0])]);
        let b = agent(&[(3.0, [8.0, 8.0]), (7.0, [9.0, 8.0]), (13.0, [8.0, 8.0])]);
        let tile = Tile::from_baked(&patch(vec![a, b]));
        let n = tile.instance_count();
        let (mut p, mut q) = (Poses::new(n), Poses::new(n));
        let mut cursor = TileCursor::default();
        let place = Placement { offset: [32.0, -16.0], rotation: 3 };
        for step in 0..500 {
            // Forward steps, with a jump back now and then.
            let t = if step % 97 == 0 { 3.3 } else { step as f64 * 0.05 };
            tile.sample(t, &place, p.as_mut());
            tile.sample_with(t, &place, &mut cursor, q.as_mut());
            assert_eq!(p, q, "t = {t}");
        }
    }

    #[test]
    fn footstep_keys_keep_the_track_as_played() {
        let mut track = Track {
            info: None,
            times: vec![0.0, 2.0, 6.0],
            x: vec![0.0, 2.0, 2.0],
            y: vec![1.0, 1.0, 5.0],
            heading: vec![0.0, 0.0, 1.5],
            visible_from: 0.0,
            visible_for: 10.0,
            clip: None,
        };
        let before = track.clone();
        // Outside, on a key, twice the same and inside.
        insert_keys(&mut track, &[-1.0, 0.5, 2.0, 3.0, 3.0, 5.5, 6.0, 7.0]);
        assert_eq!(track.times, vec![0.0, 0.5, 2.0, 3.0, 5.5, 6.0]);
        let lerp = |tr: &Track, tau: f32| {
            let j = tr.times.partition_point(|&k| k <= tau).clamp(1, tr.times.len() - 1);
            let u = ((tau - tr.times[j - 1]) / (tr.times[j] - tr.times[j - 1])).clamp(0.0, 1.0);
            let f = |v: &[f32]| v[j - 1] + (v[j] - v[j - 1]) * u;
            (f(&tr.x), f(&tr.y), f(&tr.heading))
        };
        for step in 0..=120 {
            let tau = step as f32 * 0.05;
            let (a, b) = (lerp(&before, tau), lerp(&track, tau));
            assert!((a.0 - b.0).abs() < 1e-5 && (a.1 - b.1).abs() < 1e-5 && (a.2 - b.2).abs() < 1e-5, "τ = {tau}");
        }
    }

    #[test]
    fn distance_phase_is_zero_at_both_ends_of_a_path() {
        let a = agent(&[(1.0, [0.0, 0.0]), (9.0, [10.0, 0.0])]);
        let tile = Tile::from_baked(&patch(vec![a]));
        let (_, _, _, start) = tile.instance_pose(0, 1.0);
        let (_, _, _, end) = tile.instance_pose(0, 9.0 - 1e-6);
        assert!(start.abs() < 1e-5, "{start}");
        assert!(!(1e-4..=1.0 - 1e-4).contains(&end), "{end}");
        let (_, _, _, mid) = tile.instance_pose(0, 5.0);
        // 10 m in round(10 / 1.4) = 7 cycles: half-way is 3.5 cycles.
        assert!((mid - 0.5).abs() < 1e-4, "{mid}");
    }
}
