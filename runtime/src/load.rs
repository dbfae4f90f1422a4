//! Loading a baked GLB into a [`Tile`].
//!
//! What is read (see `exporters/gltf` for the writer):
//! - `scene.extras.crowdpatch` ([`SceneExtras`]): checked first; a file without
//!   it is not a crowdpatch bake, a file of another `format` is refused;
//! - the animation `loop` (or the only animation): per agent instance node
//!   listed in `agents[i].nodes`, its translation and rotation channels (root
//!   motion, LINEAR or STEP) and its scale channel (STEP visibility: shown
//!   where the scale is not 0);
//! - the node tree below each instance node: the channels that target its
//!   descendants make the instance's [`JointClip`] (skeletal bakes put the
//!   character's joints there);
//! - a skeletal bake's character: its skinned mesh and skin
//!   ([`Tile::character`], read by the `mesh` module);
//! - optional `agents[i].footsteps`: `[{"t": …}, …]`, unwrapped foot-plant
//!   times, from which the gait phase is derived
//!   ([`PhaseSource::Footsteps`](crate::PhaseSource::Footsteps)).
//!
//! Everything is bounds-checked; a corrupt or hostile file gives a
//! [`LoadError`], never a panic.

use std::collections::HashMap;
use std::path::Path;

use crate::error::LoadError;
use crate::format::{FORMAT_VERSION, SceneExtras};
use crate::glb::{self, Root};
use crate::tile::{InstanceInfo, Interpolation, Joint, JointChannel, JointClip, JointPose, JointProperty, Tile, Track};

/// Largest number of agent instances read from one tile.
pub const MAX_INSTANCES: usize = 1 << 20;

/// Largest coordinate `[m]` read from a translation key (the exporter writes
/// at most 10⁶).
pub const MAX_COORDINATE: f32 = 1e7;

/// Slack on key times beyond the period `[s]` (f32 rounding of π).
const TIME_SLACK: f32 = 1e-3;

/// The animated properties of one node: sampler indices.
#[derive(Debug, Default, Clone, Copy)]
struct NodeChannels {
    translation: Option<usize>,
    rotation: Option<usize>,
    scale: Option<usize>,
}

impl Tile {
    /// Loads a baked GLB from its bytes.
    ///
    /// # Errors
    /// A [`LoadError`] saying what and where: not a GLB, malformed JSON, not a
    /// crowdpatch bake, an unknown format version, a malformed extras record,
    /// or a glTF object out of bounds or of an unsupported kind.
    ///
    /// # Panics
    /// Never, for any input.
    ///
    /// # Example
    /// ```
    /// use crowdpatch_runtime::{LoadError, Tile};
    /// let err = Tile::from_glb(b"not a glb").unwrap_err();
    /// assert!(matches!(err, LoadError::Container { .. }));
    /// ```
    pub fn from_glb(bytes: &[u8]) -> Result<Tile, LoadError> {
        let c = glb::container(bytes)?;
        let root = glb::root(c.json)?;
        let extras_value = crowdpatch_record(&root)?;
        let extras = parse_extras(&extras_value)?;
        let footsteps = footsteps(&extras_value, extras.agents.len())?;
        let data = glb::Data::new(&root, c.bin)?;
        let tracks = tracks(&root, &data, &extras)?;
        let character = crate::mesh::character(&root, &data, &extras)?;
        let rows = match character {
            Some(_) => crate::mesh::skin_rows(&root, &tracks.iter().map(|t| t.clip.as_ref()).collect::<Vec<_>>())?,
            None => Vec::new(),
        };
        let mut tile = Tile::build(extras, tracks, footsteps);
        tile.set_character(character, rows);
        Ok(tile)
    }

    /// Loads a baked GLB file.
    ///
    /// # Errors
    /// [`LoadError::Io`] when the file cannot be read, else
    /// [`LoadError::File`] naming the file around an error of
    /// [`Tile::from_glb`].
    pub fn load(path: impl AsRef<Path>) -> Result<Tile, LoadError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path)
            .map_err(|e| LoadError::Io { file: path.display().to_string(), reason: e.to_string() })?;
        Tile::from_glb(&bytes).map_err(|e| LoadError::File { file: path.display().to_string(), error: Box::new(e) })
    }
}

/// The `extras.crowdpatch` value of the default scene, with its version
/// checked.
fn crowdpatch_record(root: &Root) -> Result<serde_json::Value, LoadError> {
    let scene_index = root.scene.unwrap_or(0);
    let scene = root
        .scenes
        .get(scene_index)
        .ok_or_else(|| LoadError::NotCrowdpatch { reason: format!("the file has no scene {scene_index}") })?;
    let record = scene
        .extras
        .as_ref()
        .and_then(|e| e.get("crowdpatch"))
        .ok_or_else(|| LoadError::NotCrowdpatch { reason: "its scene has no extras.crowdpatch record".into() })?;
    match record.get("format").and_then(serde_json::Value::as_u64) {
        // Format 1 is format 2 without a first instance showing the last
        // window; format 2 is format 3 with its metrics required (they are
        // skipped): all read alike.
        Some(v) if (1..=u64::from(FORMAT_VERSION)).contains(&v) => Ok(record.clone()),
        Some(found) => Err(LoadError::UnsupportedVersion { found, supported: FORMAT_VERSION }),
        None => Err(LoadError::extras("format", "is missing or not a whole number")),
    }
}

fn parse_extras(value: &serde_json::Value) -> Result<SceneExtras, LoadError> {
    let extras: SceneExtras = serde_json::from_value(value.clone())
        .map_err(|e| LoadError::extras("", format!("does not match the baked format: {e}")))?;
    let positive = |name: &str, v: f64| {
        if v.is_finite() && v > 0.0 && v <= 1e6 {
            Ok(())
        } else {
            Err(LoadError::extras(name, format!("= {v} must be finite, > 0 and ≤ 1e6")))
        }
    };
    positive("size", extras.header.size)?;
    positive("period", extras.header.period)?;
    positive("agent_radius", extras.header.agent_radius)?;
    let instances: usize = extras.agents.iter().map(|a| a.nodes.len()).sum();
    if instances > MAX_INSTANCES {
        return Err(LoadError::extras("agents", format!("list {instances} instances, more than {MAX_INSTANCES}")));
    }
    for (i, a) in extras.agents.iter().enumerate() {
        let [s, e] = a.interval;
        if !(s.is_finite() && e.is_finite() && s <= e) {
            return Err(LoadError::extras(format!("agents[{i}].interval"), format!("= [{s}, {e}] is not an interval")));
        }
        if a.first_instance.unsigned_abs() > 1 << 40 {
            return Err(LoadError::extras(
                format!("agents[{i}].first_instance"),
                format!("= {} is absurd", a.first_instance),
            ));
        }
    }
    Ok(extras)
}

/// Optional per-agent footstep times (`agents[i].footsteps[j].t`), sorted.
fn footsteps(value: &serde_json::Value, agents: usize) -> Result<Option<Vec<Vec<f64>>>, LoadError> {
    let Some(list) = value.get("agents").and_then(|a| a.as_array()) else {
        return Ok(None);
    };
    let mut out = Vec::with_capacity(agents);
    for (i, a) in list.iter().enumerate() {
        let Some(steps) = a.get("footsteps").and_then(|f| f.as_array()) else {
            return Ok(None);
        };
        let mut times = Vec::with_capacity(steps.len());
        for (j, s) in steps.iter().enumerate() {
            let t = s.get("t").and_then(serde_json::Value::as_f64).filter(|t| t.is_finite()).ok_or_else(|| {
                LoadError::extras(format!("agents[{i}].footsteps[{j}].t"), "is missing or not a finite number")
            })?;
            times.push(t);
        }
        times.sort_by(f64::total_cmp);
        out.push(times);
    }
    Ok(if out.is_empty() { None } else { Some(out) })
}

/// The root-motion track (and joint clip) of every instance, in agent order.
fn tracks(root: &Root, bin: &glb::Data<'_>, extras: &SceneExtras) -> Result<Vec<Track>, LoadError> {
    let period = extras.header.period as f32;
    let node_count = root.nodes.len();
    let animation_index = match root.animations.iter().position(|a| a.name.as_deref() == Some("loop")) {
        Some(i) => Some(i),
        None if root.animations.len() == 1 => Some(0),
        None => None,
    };
    if animation_index.is_none() && extras.agents.iter().any(|a| !a.nodes.is_empty()) {
        return Err(LoadError::gltf("animations", "there is no animation named \"loop\""));
    }
    let anim_path = format!("animations[{}]", animation_index.unwrap_or(0));
    // Channels by target node.
    let mut by_node: HashMap<usize, NodeChannels> = HashMap::new();
    let mut joint_channels: HashMap<usize, Vec<(usize, JointProperty)>> = HashMap::new();
    if let Some(anim) = animation_index.and_then(|i| root.animations.get(i)) {
        for (c, ch) in anim.channels.iter().enumerate() {
            let Some(node) = ch.target.node else { continue };
            if node >= node_count {
                return Err(LoadError::gltf(
                    format!("{anim_path}.channels[{c}].target.node"),
                    format!("= {node}, but the file has {node_count} nodes"),
                ));
            }
            if ch.sampler >= anim.samplers.len() {
                return Err(LoadError::gltf(
                    format!("{anim_path}.channels[{c}].sampler"),
                    format!("= {}, but the animation has {} samplers", ch.sampler, anim.samplers.len()),
                ));
            }
            let e = by_node.entry(node).or_default();
            let property = match ch.target.path.as_str() {
                "translation" => {
                    e.translation = Some(ch.sampler);
                    JointProperty::Translation
                }
                "rotation" => {
                    e.rotation = Some(ch.sampler);
                    JointProperty::Rotation
                }
                "scale" => {
                    e.scale = Some(ch.sampler);
                    JointProperty::Scale
                }
                _ => continue, // morph weights: not part of the playback form
            };
            joint_channels.entry(node).or_default().push((ch.sampler, property));
        }
    }
    let children = |n: usize| root.nodes.get(n).map(|node| node.children.as_slice()).unwrap_or(&[]);
    for (n, node) in root.nodes.iter().enumerate() {
        if let Some(&bad) = node.children.iter().find(|&&c| c >= node_count) {
            return Err(LoadError::gltf(format!("nodes[{n}].children"), format!("holds {bad}, past the last node")));
        }
    }

    let reader = SamplerReader { root, bin, anim: animation_index, anim_path: &anim_path, period };
    let mut tracks = Vec::new();
    let mut seen_node = vec![false; node_count];
    for (a, agent) in extras.agents.iter().enumerate() {
        // The first instance showing the last window too: the last node
        // repeats the first.
        let nodes = &agent.nodes;
        let merged = nodes.len() >= 2 && nodes[0] == nodes[nodes.len() - 1];
        let last = agent.first_instance + nodes.len() as i64 - 1;
        // Where the last window's part ends and the first's begins.
        let (until, from) =
            crate::format::hidden_parts(agent.interval, agent.first_instance, last, extras.header.period);
        let info = |j: usize, node: usize| {
            let k = agent.first_instance + j as i64;
            if merged && j == 0 {
                InstanceInfo { agent: a, k, k_before: last, split: 0.5 * (until + from), node }
            } else {
                InstanceInfo::single(a, k, node)
            }
        };
        if merged && until > from - 0.5 * crate::format::MIN_HIDDEN {
            return Err(LoadError::extras(
                format!("agents[{a}].nodes"),
                format!(
                    "repeat node {} first and last, but the last window's part (play times 0 to {until:.6} s) \
                     is not hidden from the first's (from {from:.6} s)",
                    nodes[0]
                ),
            ));
        }
        for (j, &node) in nodes.iter().enumerate().take(nodes.len() - usize::from(merged)) {
            let path = format!("agents[{a}].nodes[{j}]");
            let Some(n) = root.nodes.get(node) else {
                return Err(LoadError::extras(path, format!("= {node}, but the file has {node_count} nodes")));
            };
            if std::mem::replace(&mut seen_node[node], true) {
                return Err(LoadError::extras(path, format!("= {node} is listed twice")));
            }
            let channels = by_node.get(&node).copied().unwrap_or_default();
            let mut track = root_motion(&reader, n, node, channels)?;
            track.info = Some(info(j, node));
            let (from, length) = visibility(&reader, channels.scale, n)?;
            track.visible_from = from;
            track.visible_for = length;
            track.clip = joint_clip(&reader, root, node, &children, &joint_channels)?;
            tracks.push(track);
        }
    }
    Ok(tracks)
}

/// Reads samplers of one animation with their checks.
struct SamplerReader<'a> {
    root: &'a Root,
    bin: &'a glb::Data<'a>,
    anim: Option<usize>,
    anim_path: &'a str,
    period: f32,
}

impl SamplerReader<'_> {
    /// Key times, values (flattened, `ty`) and interpolation of sampler `s`.
    fn read(&self, s: usize, ty: &str) -> Result<(Vec<f32>, Vec<f32>, Interpolation), LoadError> {
        let path = format!("{}.samplers[{s}]", self.anim_path);
        let sampler = self
            .anim
            .and_then(|a| self.root.animations.get(a))
            .and_then(|a| a.samplers.get(s))
            .ok_or_else(|| LoadError::gltf(&path, "does not exist"))?;
        let interpolation = match sampler.interpolation.as_str() {
            "LINEAR" => Interpolation::Linear,
            "STEP" => Interpolation::Step,
            other => {
                return Err(LoadError::gltf(&path, format!("interpolation {other} is not supported (LINEAR or STEP)")));
            }
        };
        let times = glb::floats(self.root, self.bin, sampler.input, "SCALAR")?;
        let values = glb::floats(self.root, self.bin, sampler.output, ty)?;
        let width = match ty {
            "VEC4" => 4,
            "VEC3" => 3,
            _ => 1,
        };
        if times.is_empty() || values.len() != times.len() * width {
            return Err(LoadError::gltf(
                &path,
                format!("has {} key times but {} output values of {ty}", times.len(), values.len() / width),
            ));
        }
        if times[0] < 0.0 || times.windows(2).any(|w| w[1] <= w[0]) {
            return Err(LoadError::gltf(&path, "key times must be ≥ 0 and strictly increasing"));
        }
        let last = times[times.len() - 1];
        if last > self.period + TIME_SLACK * self.period.max(1.0) {
            return Err(LoadError::gltf(
                &path,
                format!("key time {last} s lies beyond the period {} s of the loop", self.period),
            ));
        }
        Ok((times, values, interpolation))
    }
}

/// Value of a keyed track at `t`: linear or step, clamped at the ends.
fn eval(times: &[f32], values: &[f32], interpolation: Interpolation, t: f32) -> f32 {
    let i = times.partition_point(|&k| k <= t);
    if i == 0 {
        return values[0];
    }
    if i >= times.len() || interpolation == Interpolation::Step {
        return values[i - 1];
    }
    let u = (t - times[i - 1]) / (times[i] - times[i - 1]);
    values[i - 1] + (values[i] - values[i - 1]) * u
}

/// Translation and rotation keys of an instance node, merged onto the union
/// of their key times (exact: linear translation, and a yaw rotation slerps
/// at constant angular speed), in the patch frame.
fn root_motion(r: &SamplerReader<'_>, n: &glb::Node, node: usize, ch: NodeChannels) -> Result<Track, LoadError> {
    let bad_node = |what: &str| LoadError::gltf(format!("nodes[{node}]"), what.to_string());
    let t0 = n.translation.unwrap_or([0.0; 3]);
    let (tt, tv, ti) = match ch.translation {
        Some(s) => r.read(s, "VEC3")?,
        None => (vec![0.0], t0.iter().map(|&c| c as f32).collect(), Interpolation::Step),
    };
    let r0 = n.rotation.unwrap_or([0.0, 0.0, 0.0, 1.0]);
    let (rt, rv, ri) = match ch.rotation {
        Some(s) => r.read(s, "VEC4")?,
        None => (vec![0.0], r0.iter().map(|&c| c as f32).collect(), Interpolation::Step),
    };
    // Rotation keys as unwrapped headings.
    let mut headings = Vec::with_capacity(rt.len());
    for k in 0..rt.len() {
        let q = [rv[4 * k], rv[4 * k + 1], rv[4 * k + 2], rv[4 * k + 3]];
        let h = heading_of_rotation(q).ok_or_else(|| bad_node("has a zero rotation quaternion"))?;
        let h = match headings.last() {
            Some(&prev) => prev + crate::format::wrap_angle(f64::from(h - prev)) as f32,
            None => h,
        };
        headings.push(h);
    }
    if let Some(c) = tv.iter().find(|c| c.abs() > MAX_COORDINATE) {
        return Err(bad_node(&format!("has a translation key {c} m beyond ±{MAX_COORDINATE} m")));
    }
    let xs: Vec<f32> = (0..tt.len()).map(|k| tv[3 * k]).collect();
    let ys: Vec<f32> = (0..tt.len()).map(|k| -tv[3 * k + 2]).collect();
    let mut times: Vec<f32> = if tt == rt {
        tt.clone()
    } else {
        let mut u: Vec<f32> = tt.iter().chain(rt.iter()).copied().collect();
        u.sort_by(f32::total_cmp);
        u.dedup();
        u
    };
    times.retain(|&t| t <= r.period);
    if times.is_empty() {
        times.push(0.0);
    }
    let mut track = Track::default();
    for &t in &times {
        track.times.push(t);
        track.x.push(eval(&tt, &xs, ti, t) + 0.0);
        track.y.push(eval(&tt, &ys, ti, t) + 0.0);
        track.heading.push(eval(&rt, &headings, ri, t));
    }
    Ok(track)
}

/// Visible interval `(from, length)` of an instance from its STEP scale
/// channel (or its static scale): one interval, possibly wrapping past π.
fn visibility(r: &SamplerReader<'_>, scale: Option<usize>, n: &glb::Node) -> Result<(f32, f32), LoadError> {
    let period = r.period;
    let shown = |v: &[f32]| v.iter().any(|c| c.abs() > 1e-6);
    let Some(s) = scale else {
        let visible = shown(&n.scale.unwrap_or([1.0; 3]).map(|c| c as f32));
        return Ok((0.0, if visible { period } else { 0.0 }));
    };
    let (times, values, _) = r.read(s, "VEC3")?;
    // Segments [t_i, t_{i+1}) with the value of key i; before the first key
    // the first value holds.
    let mut segments: Vec<(f32, f32, bool)> = Vec::new();
    let on = |k: usize| shown(&values[3 * k..3 * k + 3]);
    let mut push = |a: f32, b: f32, v: bool| {
        if b <= a {
            return;
        }
        match segments.last_mut() {
            Some(last) if last.2 == v => last.1 = b,
            _ => segments.push((a, b, v)),
        }
    };
    push(0.0, times[0].min(period), on(0));
    for k in 0..times.len() {
        let end = times.get(k + 1).copied().unwrap_or(period).min(period);
        push(times[k], end, on(k));
    }
    let visible: Vec<(f32, f32)> = segments.iter().filter(|s| s.2).map(|s| (s.0, s.1)).collect();
    let path = format!("{}.samplers[{s}]", r.anim_path);
    match visible.as_slice() {
        [] => Ok((0.0, 0.0)),
        [(a, b)] => Ok((*a, b - a)),
        [(a0, b0), (a1, b1)] if *a0 <= 0.0 && *b1 >= period => Ok((*a1, (b1 - a1) + b0)),
        _ => Err(LoadError::gltf(
            path,
            format!("shows its instance over {} separate intervals; one interval per instance is read", visible.len()),
        )),
    }
}

/// The joints below instance node `node` and the channels targeting them.
fn joint_clip<'r>(
    r: &SamplerReader<'_>,
    root: &'r Root,
    node: usize,
    children: &dyn Fn(usize) -> &'r [usize],
    channels: &HashMap<usize, Vec<(usize, JointProperty)>>,
) -> Result<Option<JointClip>, LoadError> {
    if children(node).is_empty() {
        return Ok(None);
    }
    let mut clip = JointClip::default();
    let mut visited = std::collections::HashSet::new();
    visited.insert(node);
    // Breadth first keeps parents before children.
    let mut queue: std::collections::VecDeque<(usize, Option<usize>)> =
        children(node).iter().map(|&c| (c, None)).collect();
    while let Some((n, parent)) = queue.pop_front() {
        if !visited.insert(n) {
            return Err(LoadError::gltf(format!("nodes[{n}]"), "appears twice below an instance node (not a tree)"));
        }
        if clip.joints.len() >= root.nodes.len() {
            return Err(LoadError::gltf(format!("nodes[{node}]"), "has a node cycle below it"));
        }
        let Some(gn) = root.nodes.get(n) else {
            return Err(LoadError::gltf(format!("nodes[{n}]"), "does not exist"));
        };
        let f = |v: &[f64]| -> Vec<f32> { v.iter().map(|&c| c as f32).collect() };
        let t = f(&gn.translation.unwrap_or([0.0; 3]));
        let q = f(&gn.rotation.unwrap_or([0.0, 0.0, 0.0, 1.0]));
        let s = f(&gn.scale.unwrap_or([1.0; 3]));
        if t.iter().chain(&q).chain(&s).any(|c| !c.is_finite()) {
            return Err(LoadError::gltf(format!("nodes[{n}]"), "has a non-finite transform"));
        }
        let index = clip.joints.len();
        clip.joints.push(Joint {
            node: n,
            name: gn.name.clone(),
            parent,
            rest: JointPose {
                translation: [t[0], t[1], t[2]],
                rotation: [q[0], q[1], q[2], q[3]],
                scale: [s[0], s[1], s[2]],
            },
        });
        for &(sampler, property) in channels.get(&n).map(Vec::as_slice).unwrap_or(&[]) {
            let ty = if property == JointProperty::Rotation { "VEC4" } else { "VEC3" };
            let (times, values, interpolation) = r.read(sampler, ty)?;
            clip.channels.push(JointChannel { joint: index, property, interpolation, times, values });
        }
        queue.extend(children(n).iter().map(|&c| (c, Some(index))));
    }
    Ok(Some(clip))
}

/// Heading `[rad]` (patch frame) of a glTF rotation: the direction glTF
/// forward (+Z) turns to, as the exporter writes it (`yaw = heading + π/2`).
pub(crate) fn heading_of_rotation(q: [f32; 4]) -> Option<f32> {
    let [x, y, z, w] = q;
    let n = (x * x + y * y + z * z + w * w).sqrt();
    if n.is_nan() || n <= 1e-6 {
        return None;
    }
    let (x, y, z, w) = (x / n, y / n, z / n, w / n);
    // +Z rotated by q.
    let fx = 2.0 * (x * z + w * y);
    let fz = 1.0 - 2.0 * (x * x + y * y);
    // glTF (fx, fz) is the patch direction (cos h, −sin h).
    Some((-fz).atan2(fx))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_heading_round_trip() {
        for h in [-3.0f32, -1.0, 0.0, 0.7, 2.5] {
            let yaw = h + std::f32::consts::FRAC_PI_2;
            let q = [0.0, (yaw / 2.0).sin(), 0.0, (yaw / 2.0).cos()];
            let back = heading_of_rotation(q).unwrap();
            assert!(crate::format::wrap_angle(f64::from(back - h)).abs() < 1e-5, "{h} {back}");
        }
        assert_eq!(heading_of_rotation([0.0; 4]), None);
    }

    /// A file's `extras.crowdpatch` record of `format`, with or without the
    /// bake's figures.
    fn record(format: u32, metrics: bool) -> serde_json::Value {
        let pattern = serde_json::json!({ "entries": [], "exits": [] });
        let mut r = serde_json::json!({
            "format": format, "name": "t", "size": 16.0, "period": 10.0, "agent_radius": 0.3,
            "comfort_speed": 1.33, "seed": 7, "obstacles": [],
            "patterns": { "south": pattern, "east": pattern, "north": pattern, "west": pattern },
            "agents": [{ "kind": { "endogenous": { "index": 0 } }, "interval": [2.0, 12.0], "first_instance": 0,
                         "nodes": [0, 1] }],
        });
        if metrics {
            r["metrics"] = serde_json::json!({
                "min_separation": null, "coverage": 0.25, "foot_skate": null,
                "speed": { "mean": 1.25, "p5": 0.5, "p95": 1.5, "max": 2.0, "mean_comfort_deviation": 0.1 },
                "realism": { "reference": "pooled", "speed_ks": 0.5 },
            });
        }
        r
    }

    #[test]
    fn records_of_formats_1_to_3_read_alike_with_or_without_metrics() {
        let read = |r: serde_json::Value| {
            let json =
                serde_json::json!({ "asset": { "version": "2.0" }, "scenes": [{ "extras": { "crowdpatch": r } }] });
            let root = glb::root(json.to_string().as_bytes()).unwrap();
            crowdpatch_record(&root).and_then(|v| parse_extras(&v))
        };
        let current = read(record(FORMAT_VERSION, false)).unwrap();
        assert_eq!(current.format, 3);
        assert_eq!(current.agents[0].nodes, [0, 1]);
        for (format, metrics) in [(1, true), (2, true), (3, true), (2, false)] {
            let extras = read(record(format, metrics)).unwrap_or_else(|e| panic!("format {format}: {e}"));
            assert_eq!(extras.format, format);
            assert_eq!(SceneExtras { format: FORMAT_VERSION, ..extras }, current, "format {format}");
        }
        let e = read(record(4, true)).unwrap_err();
        assert_eq!(e, LoadError::UnsupportedVersion { found: 4, supported: 3 });
    }
}
