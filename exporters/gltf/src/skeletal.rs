//! Skeletal agents: per agent instance a copy of the character's joint
//! hierarchy below the instance node, a skin over it and a skinned-mesh node
//! at the scene root; joint channels in the `loop` animation.

use crowdpatch_runtime::format::{AgentExtras, BakedPatch, CharacterExtras};
use crowdpatch_runtime::skeletal::{AgentAnimation, Character, GAIT_CONVENTION, SkeletalAnimation};
use gltf_json as json;

use crate::animation::{AnimationBuilder, InstanceTrack, Keys};
use crate::builder::{Builder, FloatType, ViewKind};
use crate::error::ExportError;
use crate::keys;
use crate::options::GlbOptions;
use crate::played::Played;

fn bad(path: impl Into<String>, reason: impl Into<String>) -> ExportError {
    ExportError::InvalidSkeletal { path: path.into(), reason: reason.into() }
}

/// Checks the skeletal animation against the patch.
pub(crate) fn check(patch: &BakedPatch, sk: &SkeletalAnimation) -> Result<(), ExportError> {
    let c = &sk.character;
    let n = c.joints.len();
    if n == 0 || n > u16::MAX as usize {
        return Err(bad("skeletal.character.joints", format!("has {n} joints; 1 to 65535 are written")));
    }
    for (j, joint) in c.joints.iter().enumerate() {
        if joint.parent.is_some_and(|p| p >= j) {
            return Err(bad(format!("skeletal.character.joints[{j}].parent"), "must come before the joint"));
        }
        let nums = joint.translation.iter().chain(&joint.rotation).chain(&joint.scale).chain(&joint.inverse_bind);
        if nums.clone().any(|v| !v.is_finite()) {
            return Err(bad(format!("skeletal.character.joints[{j}]"), "has a non-finite number"));
        }
    }
    for (k, &j) in [c.left_foot, c.right_foot, c.hips].iter().enumerate() {
        if j >= n {
            return Err(bad(format!("skeletal.character (feet and hips)[{k}]"), format!("joint {j} does not exist")));
        }
    }
    for (k, p) in c.primitives.iter().enumerate() {
        let v = p.positions.len();
        if p.normals.len() != v || p.joints.len() != v || p.weights.len() != v || v == 0 {
            return Err(bad(format!("skeletal.character.primitives[{k}]"), "attribute counts differ or are zero"));
        }
        if p.indices.iter().any(|&i| i as usize >= v) || p.indices.len() % 3 != 0 || p.indices.is_empty() {
            return Err(bad(format!("skeletal.character.primitives[{k}].indices"), "out of range or not triangles"));
        }
        if p.joints.iter().flatten().any(|&j| j as usize >= n) {
            return Err(bad(format!("skeletal.character.primitives[{k}].joints"), "index past the last joint"));
        }
        if p.positions
            .iter()
            .flatten()
            .chain(p.normals.iter().flatten())
            .chain(p.weights.iter().flatten())
            .any(|x| !x.is_finite())
        {
            return Err(bad(format!("skeletal.character.primitives[{k}]"), "has a non-finite number"));
        }
    }
    if c.primitives.is_empty() {
        return Err(bad("skeletal.character.primitives", "the character has no mesh"));
    }
    if !(sk.sample_interval > 0.0 && sk.sample_interval <= patch.header.period) {
        return Err(bad("skeletal.sample_interval", format!("= {} is not in (0, period]", sk.sample_interval)));
    }
    let per = patch.header.period / sk.sample_interval;
    if (per - per.round()).abs() > 1e-6 || per.round() > 100_000.0 {
        return Err(bad("skeletal.sample_interval", "must divide the period into at most 100000 samples"));
    }
    if sk.agents.len() != patch.agents.len() {
        return Err(bad(
            "skeletal.agents",
            format!("{} animations for {} agents", sk.agents.len(), patch.agents.len()),
        ));
    }
    for (i, a) in sk.agents.iter().enumerate() {
        let m = a.times.len();
        if m == 0 || a.rotations.len() != m * n || a.translations.len() != m * n {
            return Err(bad(format!("skeletal.agents[{i}]"), "track lengths do not match times × joints"));
        }
        if a.rotations.iter().flatten().chain(a.translations.iter().flatten()).any(|x| !x.is_finite()) {
            return Err(bad(format!("skeletal.agents[{i}]"), "has a non-finite number"));
        }
        for (k, w) in a.times.windows(2).enumerate() {
            let steps = (w[1] - w[0]) / sk.sample_interval;
            if !(steps > 1e-6 && steps <= 1.0 + 1e-6) {
                return Err(bad(
                    format!("skeletal.agents[{i}].times[{}]", k + 1),
                    "times must increase by at most the sample interval",
                ));
            }
        }
        if a.footsteps
            .iter()
            .any(|f| !(f.t.is_finite() && f.lift.is_finite() && f.position.iter().all(|x| x.is_finite())))
        {
            return Err(bad(format!("skeletal.agents[{i}].footsteps"), "has a non-finite number"));
        }
    }
    Ok(())
}

/// The keys of instance `k`'s window of play time `[kπ, (k + 1)π]`: play
/// time τ `[s]` and index into the agent's samples `times` (sorted,
/// unwrapped). The window starts at τ = 0 and ends at τ = π; where the
/// samples do not reach, the first or last sample is held. Consecutive
/// windows share their boundary sample, so the loop point shows no jump.
/// A sample whose time `time` maps (as a player decodes it) onto that of the
/// sample before is left out, so that the written times increase.
pub(crate) fn window_keys(times: &[f64], k: i64, period: f64, time: &dyn Fn(f32) -> f32) -> Vec<(f32, usize)> {
    let (w0, w1) = (k as f64 * period, (k + 1) as f64 * period);
    let eps = 1e-6 * period;
    let lo = times.partition_point(|&t| t < w0 - eps);
    let hi = times.partition_point(|&t| t <= w1 + eps);
    let mut keys: Vec<(f32, usize)> = Vec::with_capacity(hi.saturating_sub(lo) + 2);
    let last = times.len().saturating_sub(1);
    if lo >= hi {
        // No sample inside: hold the nearest one.
        let i = lo.min(last);
        return vec![(0.0, i), (period as f32, i)];
    }
    if (times[lo] - w0).abs() > eps {
        keys.push((0.0, lo.saturating_sub(1).min(lo)));
    }
    for (i, &t) in times.iter().enumerate().take(hi).skip(lo) {
        let tau = ((t - w0).clamp(0.0, period)) as f32;
        let tau = if (t - w0).abs() <= eps {
            0.0
        } else if (t - w1).abs() <= eps {
            period as f32
        } else {
            tau
        };
        match keys.last() {
            Some(&(prev, _)) if time(tau) <= time(prev) => {}
            _ => keys.push((tau, i)),
        }
    }
    let end = period as f32;
    match keys.last_mut() {
        Some(last) if last.0 < end && time(last.0) >= end => last.0 = end,
        Some(last) if last.0 < end => keys.push((end, hi - 1)),
        _ => {}
    }
    keys
}

/// Figures of the joint tracks written.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TrackStats {
    /// Joint keys written (rotation and translation channels).
    pub keys: usize,
    /// Largest joint position error measured `[m]`.
    pub position_error: f64,
    /// Largest joint rotation error measured `[rad]`.
    pub rotation_error: f64,
    /// Largest position error of a planted foot's joints `[m]`.
    pub contact_error: f64,
}

/// The character record of the scene extras.
pub(crate) fn character_extras(sk: &SkeletalAnimation) -> CharacterExtras {
    let c = &sk.character;
    CharacterExtras {
        name: c.name.clone(),
        joints: c.joints.iter().map(|j| j.name.clone()).collect(),
        parents: c.joints.iter().map(|j| j.parent).collect(),
        left_foot: c.left_foot,
        right_foot: c.right_foot,
        hips: c.hips,
        height: c.height,
        hip_joints: c.hip_joints,
        leg_length: c.leg_length,
        gait_convention: GAIT_CONVENTION.to_owned(),
        sole_points: c.sole_points.clone(),
    }
}

/// The keys of one instance's window and, with a key tolerance, its
/// reduced channels.
type Plan = (Vec<(f32, usize)>, Option<(Vec<(f32, usize)>, keys::Reduced)>);

/// `f` over `items`, in parallel with the `parallel` feature (rayon, in the
/// caller's pool); results in the order of `items`.
fn map_instances<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        // One instance per task (instances differ in cost by 10×: an even
        // split leaves one thread idle).
        items.par_iter().with_max_len(1).map(f).collect()
    }
    #[cfg(not(feature = "parallel"))]
    {
        items.iter().map(f).collect()
    }
}

/// The keys of agent `i`'s instance showing window `k` (and window `before`
/// before its split, [`BakedAgent::instance_windows`]): its play time (τ,
/// sample index) and, with a tolerance, the visible part of the window only
/// (a hidden instance shows nothing; players hold the first and last keys),
/// each joint channel reduced within the tolerance to the keys it needs
/// ([`keys::reduce`]).
fn instance_keys(
    patch: &BakedPatch,
    sk: &SkeletalAnimation,
    options: &GlbOptions,
    played: &Played,
    i: usize,
    (k, before): (i64, Option<i64>),
) -> Plan {
    let (agent, anim) = (&patch.agents[i], &sk.agents[i]);
    let period = patch.header.period;
    let time = |t| played.time(t);
    let window = match before {
        // Window `last` before the split, window k from it on.
        Some(last) => {
            let split = time(agent.split(period) as f32);
            let before = window_keys(&anim.times, last, period, &time).into_iter().filter(|w| time(w.0) < split);
            before
                .chain(window_keys(&anim.times, k, period, &time).into_iter().filter(|w| time(w.0) >= split))
                .collect()
        }
        None => window_keys(&anim.times, k, period, &time),
    };
    let reduced = options.key_tolerance.map(|tol| {
        let eps = 1e-6 * patch.header.period;
        let (start, end) = (agent.start() - eps, agent.end() + eps);
        let mut visible: Vec<(f32, usize)> =
            window.iter().copied().filter(|w| (start..=end).contains(&anim.times[w.1])).collect();
        if visible.len() < 2 {
            visible.clone_from(&window);
        }
        let idx: Vec<usize> = visible.iter().map(|w| w.1).collect();
        let times: Vec<f64> = visible.iter().map(|w| f64::from(w.0)).collect();
        (visible, keys::reduce(sk, i, &idx, &times, &tol, played))
    });
    (window, reduced)
}

/// Instance nodes with joint subtrees, skins and skinned-mesh nodes, and
/// their channels. Returns the agents' extras records.
pub(crate) fn agent_nodes(
    b: &mut Builder,
    animation: &mut AnimationBuilder,
    patch: &BakedPatch,
    sk: &SkeletalAnimation,
    options: &GlbOptions,
    roots: &mut Vec<json::Index<json::Node>>,
) -> (Vec<AgentExtras>, TrackStats) {
    let mut stats = TrackStats::default();
    let played = b.played;
    if patch.agents.is_empty() {
        return (Vec::new(), stats);
    }
    let c = &sk.character;
    let mesh = b.skinned_mesh(&c.name, &c.primitives);
    let ibm: Vec<f32> = c.joints.iter().flat_map(|j| j.inverse_bind.map(|x| x as f32)).collect();
    let ibm = b.floats(ViewKind::Skin, FloatType::Mat4, &ibm, false);
    // The keys of every instance, reduced (in parallel with the
    // `parallel` feature; the same result in any case).
    let windows: Vec<Vec<(i64, Option<i64>)>> =
        patch.agents.iter().map(|agent| agent.instance_windows(patch.header.period)).collect();
    let pairs: Vec<(usize, (i64, Option<i64>))> =
        windows.iter().enumerate().flat_map(|(i, w)| w.iter().map(move |&w| (i, w))).collect();
    let mut plans = map_instances(&pairs, |&(i, w)| instance_keys(patch, sk, options, &played, i, w)).into_iter();
    let mut records = Vec::with_capacity(patch.agents.len());
    let mut skins: Vec<json::Skin> = Vec::new();
    let mut mesh_nodes = Vec::new();
    for (i, (agent, anim)) in patch.agents.iter().zip(&sk.agents).enumerate() {
        let mut nodes = Vec::new();
        for &window in &windows[i] {
            let (track, name) = InstanceTrack::of(agent, i, window, patch.header.period, &|t| played.time(t));
            let node = b.root.push(json::Node {
                name: Some(name.clone()),
                translation: Some(track.translations[0]),
                rotation: Some(json::scene::UnitQuaternion(track.rotations[0])),
                scale: Some([track.scales[0]; 3]),
                ..Default::default()
            });
            animation.instance(b, node, &track);
            let (window, reduced) = plans.next().unwrap_or_default();
            if let Some((_, r)) = &reduced {
                stats.position_error = stats.position_error.max(r.position_error);
                stats.rotation_error = stats.rotation_error.max(r.rotation_error);
                stats.contact_error = stats.contact_error.max(r.contact_error);
            }
            let instance =
                InstanceJoints { anim, n: c.joints.len(), window: &window, reduced: reduced.as_ref(), played };
            let joint_nodes = joint_nodes(b, animation, c, &instance, &mut stats);
            // Top joints hang below the instance node.
            let tops: Vec<json::Index<json::Node>> =
                c.joints.iter().zip(&joint_nodes).filter(|(j, _)| j.parent.is_none()).map(|(_, &nd)| nd).collect();
            b.root.nodes[node.value()].children = Some(tops);
            let skin = json::Index::<json::Skin>::new(skins.len() as u32);
            skins.push(json::Skin {
                extensions: None,
                extras: None,
                inverse_bind_matrices: Some(ibm),
                joints: joint_nodes.clone(),
                name: Some(name.clone()),
                skeleton: None,
            });
            mesh_nodes.push(json::Node {
                mesh: Some(mesh),
                skin: Some(skin),
                name: Some(format!("{name} mesh")),
                ..Default::default()
            });
            roots.push(node);
            nodes.push(node.value());
        }
        records.push(agent.extras(patch.header.period, nodes, Some(anim.footsteps.clone())));
    }
    for s in skins {
        b.root.push(s);
    }
    for m in mesh_nodes {
        let node = b.root.push(m);
        roots.push(node);
    }
    (records, stats)
}

/// What one instance's joint nodes read: the agent's samples, the
/// instance's window (play time τ, sample index) and, with a key
/// tolerance, its visible part and reduced channels ([`Plan`]).
struct InstanceJoints<'a> {
    anim: &'a AgentAnimation,
    /// The character's joint count (samples hold n values each).
    n: usize,
    window: &'a [(f32, usize)],
    reduced: Option<&'a (Vec<(f32, usize)>, keys::Reduced)>,
    played: Played,
}

/// The joint nodes of one instance, parents linked to their children, and
/// their channels (counted in `stats`), in the character's joint order.
fn joint_nodes(
    b: &mut Builder,
    animation: &mut AnimationBuilder,
    c: &Character,
    instance: &InstanceJoints,
    stats: &mut TrackStats,
) -> Vec<json::Index<json::Node>> {
    let tau: Vec<f32> = instance.window.iter().map(|w| instance.played.time(w.0)).collect();
    let mut joint_nodes: Vec<json::Index<json::Node>> = Vec::with_capacity(c.joints.len());
    for (j, joint) in c.joints.iter().enumerate() {
        let node = joint_node(b, animation, c, instance, j, &tau, stats);
        if let Some(p) = joint.parent {
            let parent = joint_nodes[p].value();
            b.root.nodes[parent].children.get_or_insert_with(Vec::new).push(node);
        }
        joint_nodes.push(node);
    }
    joint_nodes
}

/// The node of joint `j` of one instance and its channels: the reduced
/// keys with a key tolerance, else every sample of the window (at play
/// times `tau`) of each property that varies.
fn joint_node(
    b: &mut Builder,
    animation: &mut AnimationBuilder,
    c: &Character,
    instance: &InstanceJoints,
    j: usize,
    tau: &[f32],
    stats: &mut TrackStats,
) -> json::Index<json::Node> {
    let (anim, window, reduced, n) = (instance.anim, instance.window, instance.reduced, instance.n);
    let joint = &c.joints[j];
    let rot: Vec<[f32; 4]> = window.iter().map(|w| anim.rotations[w.1 * n + j]).collect();
    let tr: Vec<[f32; 3]> = window.iter().map(|w| anim.translations[w.1 * n + j]).collect();
    // Which properties have a channel.
    let varies3 = tr.iter().any(|v| (0..3).any(|c| (v[c] - tr[0][c]).abs() > 1e-7));
    let varies4 = rot.iter().any(|v| (0..4).any(|c| (v[c] - rot[0][c]).abs() > 1e-7));
    let (moves3, moves4) = match reduced {
        Some((_, r)) => (r.translation[j].len() > 1, r.rotation[j].len() > 1),
        None => (varies3, varies4),
    };
    // The node's own transform: the character's rest pose where a channel
    // drives it (players show the channel), else the value it holds (the
    // first visible sample when reduced).
    let k0 = reduced.map_or(window[0].1, |(visible, _)| visible[0].1);
    let rest_t = joint.translation.map(|x| x as f32);
    let rest_r = joint.rotation.map(|x| x as f32);
    let t0 = if moves3 { rest_t } else { anim.translations[k0 * n + j] };
    let r0 = if moves4 { rest_r } else { anim.rotations[k0 * n + j] };
    let node = b.root.push(json::Node {
        name: Some(joint.name.clone()),
        translation: Some(t0).filter(|t| *t != [0.0; 3]),
        rotation: Some(json::scene::UnitQuaternion(r0)).filter(|r| r.0 != [0.0, 0.0, 0.0, 1.0]),
        scale: Some(joint.scale.map(|x| x as f32)).filter(|s| *s != [1.0; 3]),
        ..Default::default()
    });
    match reduced {
        Some(plan) => reduced_channels(b, animation, node, instance, plan, j, stats),
        None => {
            use json::animation::{Interpolation, Property};
            let input = animation.input(b, tau);
            if varies3 {
                let values: Vec<f32> = tr.iter().flatten().copied().collect();
                let keys = Keys { input, interpolation: Interpolation::Linear, ty: FloatType::Vec3, values: &values };
                animation.channel(b, node, Property::Translation, keys);
                stats.keys += tr.len();
            }
            if varies4 {
                let values: Vec<f32> = rot.iter().flatten().copied().collect();
                let keys = Keys { input, interpolation: Interpolation::Linear, ty: FloatType::Vec4, values: &values };
                animation.channel(b, node, Property::Rotation, keys);
                stats.keys += rot.len();
            }
        }
    }
    node
}

/// The channels of joint `j`'s node `node` from the instance's reduced
/// keys (`plan`: the visible samples and the kept keys, indices into
/// them): a channel for each property with more than one key.
fn reduced_channels(
    b: &mut Builder,
    animation: &mut AnimationBuilder,
    node: json::Index<json::Node>,
    instance: &InstanceJoints,
    (visible, r): &(Vec<(f32, usize)>, keys::Reduced),
    j: usize,
    stats: &mut TrackStats,
) {
    use json::animation::{Interpolation, Property};
    let (anim, played, n) = (instance.anim, instance.played, instance.n);
    let (kt, kr) = (&r.translation[j], &r.rotation[j]);
    if kt.len() > 1 {
        let t: Vec<f32> = kt.iter().map(|&k| played.time(visible[k].0)).collect();
        let input = animation.input(b, &t);
        let values: Vec<f32> = kt.iter().flat_map(|&k| anim.translations[visible[k].1 * n + j]).collect();
        let keys = Keys { input, interpolation: Interpolation::Linear, ty: FloatType::Vec3, values: &values };
        animation.channel(b, node, Property::Translation, keys);
        stats.keys += kt.len();
    }
    if kr.len() > 1 {
        let t: Vec<f32> = kr.iter().map(|&k| played.time(visible[k].0)).collect();
        let input = animation.input(b, &t);
        let values: Vec<i16> = kr.iter().flat_map(|&k| played.rotation(anim.rotations[visible[k].1 * n + j])).collect();
        let output = b.shorts(ViewKind::Animation, FloatType::Vec4, &values);
        animation.channel_with_output(node, Property::Rotation, input, Interpolation::Linear, output);
        stats.keys += kr.len();
    }
}
