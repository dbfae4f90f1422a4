//! Round trip: write hand-built baked patches, read the GLB back with the
//! `gltf` crate, and compare what a player would show with
//! `BakedAgent::sample`.

mod common;

use std::collections::BTreeMap;

use crowdpatch_gltf::{ANIMATION_NAME, EXTRAS_KEY, ExportError, GlbOptions, write_glb};
use crowdpatch_runtime::format::{AgentExtras, BakedAgent, BakedPatch, Obstacle, PathKey, SceneExtras};
use gltf::animation::Interpolation;
use gltf::animation::util::ReadOutputs;

/// Keyframes of one channel as read back.
#[derive(Debug, Clone)]
struct Track<const N: usize> {
    times: Vec<f32>,
    values: Vec<[f32; N]>,
    interpolation: Interpolation,
}

/// The animated transform of one node.
#[derive(Debug, Default)]
struct NodeTracks {
    translation: Option<Track<3>>,
    rotation: Option<Track<4>>,
    scale: Option<Track<3>>,
}

/// Where `tau` falls: the key at or before it and the fraction to the next.
fn locate(times: &[f32], tau: f64) -> (usize, f64) {
    let i = times.partition_point(|&t| f64::from(t) <= tau);
    if i == 0 {
        return (0, 0.0);
    }
    if i >= times.len() {
        return (times.len() - 1, 0.0);
    }
    let (a, b) = (f64::from(times[i - 1]), f64::from(times[i]));
    (i - 1, (tau - a) / (b - a))
}

impl<const N: usize> Track<N> {
    /// The value at `tau` under the channel's interpolation (LINEAR as a
    /// component-wise lerp: rotations get their own slerp below).
    fn at(&self, tau: f64) -> [f64; N] {
        let (i, u) = locate(&self.times, tau);
        let a = self.values[i].map(f64::from);
        if u == 0.0 || self.interpolation == Interpolation::Step {
            return a;
        }
        let b = self.values[i + 1].map(f64::from);
        std::array::from_fn(|c| a[c] + (b[c] - a[c]) * u)
    }
}

/// glTF's spherical linear interpolation of the rotation track at `tau`.
fn slerp_at(track: &Track<4>, tau: f64) -> [f64; 4] {
    let (i, u) = locate(&track.times, tau);
    let a = track.values[i].map(f64::from);
    if u == 0.0 {
        return a;
    }
    let mut b = track.values[i + 1].map(f64::from);
    let mut d: f64 = (0..4).map(|c| a[c] * b[c]).sum();
    if d < 0.0 {
        b = b.map(|c| -c);
        d = -d;
    }
    if d > 0.999_999 {
        return std::array::from_fn(|c| a[c] + (b[c] - a[c]) * u);
    }
    let omega = d.acos();
    let (wa, wb) = (((1.0 - u) * omega).sin() / omega.sin(), (u * omega).sin() / omega.sin());
    std::array::from_fn(|c| wa * a[c] + wb * b[c])
}

/// The direction glTF +Z points to after the rotation `q` (x, y, z, w).
fn forward(q: [f64; 4]) -> [f64; 3] {
    let [x, y, z, w] = q;
    [2.0 * (x * z + w * y), 2.0 * (y * z - w * x), 1.0 - 2.0 * (x * x + y * y)]
}

/// A GLB read back.
struct ReadBack {
    doc: gltf::Document,
    blob: Vec<u8>,
}

impl ReadBack {
    fn new(glb: &[u8]) -> Self {
        let gltf = gltf::Gltf::from_slice(glb).expect("the GLB parses");
        let blob = gltf.blob.clone().unwrap_or_default();
        ReadBack { doc: gltf.document, blob }
    }

    fn extras(&self) -> SceneExtras {
        serde_json::from_value(self.record()).expect("extras.crowdpatch is a SceneExtras")
    }

    /// `extras.crowdpatch` as JSON.
    fn record(&self) -> serde_json::Value {
        let scene = self.doc.default_scene().expect("a default scene");
        let raw = scene.extras().as_ref().expect("scene extras");
        let value: serde_json::Value = serde_json::from_str(raw.get()).unwrap();
        value[EXTRAS_KEY].clone()
    }

    fn animation(&self) -> gltf::Animation<'_> {
        let mut animations = self.doc.animations();
        let a = animations.next().expect("one animation");
        assert!(animations.next().is_none(), "exactly one animation");
        assert_eq!(a.name(), Some(ANIMATION_NAME));
        a
    }

    /// Tracks by node index.
    fn tracks(&self) -> BTreeMap<usize, NodeTracks> {
        let mut out: BTreeMap<usize, NodeTracks> = BTreeMap::new();
        for channel in self.animation().channels() {
            let reader = channel.reader(|_| Some(self.blob.as_slice()));
            let times: Vec<f32> = reader.read_inputs().unwrap().collect();
            let interpolation = channel.sampler().interpolation();
            let entry = out.entry(channel.target().node().index()).or_default();
            match reader.read_outputs().unwrap() {
                ReadOutputs::Translations(v) => {
                    entry.translation = Some(Track { times, values: v.collect(), interpolation })
                }
                ReadOutputs::Rotations(v) => {
                    entry.rotation = Some(Track { times, values: v.into_f32().collect(), interpolation })
                }
                ReadOutputs::Scales(v) => entry.scale = Some(Track { times, values: v.collect(), interpolation }),
                ReadOutputs::MorphTargetWeights(_) => panic!("unexpected morph weights"),
            }
        }
        out
    }
}

fn gltf_point(p: [f64; 2]) -> [f64; 3] {
    [p[0], 0.0, -p[1]]
}

fn distance(a: [f64; 3], b: [f64; 3]) -> f64 {
    (0..3).map(|c| (a[c] - b[c]).powi(2)).sum::<f64>().sqrt()
}

/// The extras a patch should carry, given the node indices read back.
fn expected_extras(patch: &BakedPatch, agents: Vec<AgentExtras>) -> SceneExtras {
    SceneExtras {
        format: patch.format,
        header: patch.header.clone(),
        patterns: patch.patterns.clone(),
        obstacles: patch.obstacles.clone(),
        agents,
        character: None,
    }
}

/// Checks everything a player sees of `patch` against the read-back GLB.
fn assert_plays_like_the_patch(patch: &BakedPatch, glb: &[u8]) {
    let rb = ReadBack::new(glb);
    let extras = rb.extras();
    let nodes: Vec<gltf::Node<'_>> = rb.doc.nodes().collect();
    assert_instances_are_named(patch, &extras, &nodes);
    assert_eq!(extras, expected_extras(patch, extras.agents.clone()));
    let tracks = rb.tracks();
    assert_the_loop_runs_one_period(&rb, &tracks, patch.header.period);
    assert_instances_follow_their_paths(patch, &extras, &tracks);
    assert_the_static_pose_is_the_first_key(&nodes, &tracks);
}

/// Extras: one record per agent, instances as `instances()` says, node
/// names to match, one mesh for every instance.
fn assert_instances_are_named(patch: &BakedPatch, extras: &SceneExtras, nodes: &[gltf::Node<'_>]) {
    let period = patch.header.period;
    assert_eq!(extras.agents.len(), patch.agents.len());
    let mut agent_mesh = None;
    for (i, (agent, record)) in patch.agents.iter().zip(&extras.agents).enumerate() {
        let instances = agent.instances(period);
        assert_eq!(record.kind, agent.kind);
        assert_eq!(record.interval, [agent.start(), agent.end()]);
        assert_eq!(record.first_instance, instances.start);
        assert_eq!(record.nodes.len(), instances.clone().count());
        // The first instance shows the last window too where it can: the
        // last node repeats the first.
        let merged = agent.last_on_first(period);
        let last = instances.end - 1;
        assert_eq!(record.nodes.len() >= 2 && record.nodes[0] == record.nodes[record.nodes.len() - 1], merged);
        for (k, &n) in instances.zip(&record.nodes) {
            let node = &nodes[n];
            let name = match merged {
                true if k == record.first_instance || k == last => {
                    format!("agent {i} instances {} and {last}", record.first_instance)
                }
                _ => format!("agent {i} instance {k}"),
            };
            assert_eq!(node.name(), Some(name.as_str()));
            let mesh = node.mesh().expect("an instance node has the agent mesh").index();
            assert_eq!(*agent_mesh.get_or_insert(mesh), mesh, "instances share one mesh");
        }
    }
}

/// The animation runs from 0 to π exactly; every sampler is keyed at both,
/// at increasing times.
fn assert_the_loop_runs_one_period(rb: &ReadBack, tracks: &BTreeMap<usize, NodeTracks>, period: f64) {
    let animation = rb.animation();
    let period32 = period as f32;
    for sampler in animation.samplers() {
        let input = sampler.input();
        // Bounds as numbers (a whole number is written without a fraction).
        let bound = |v: Option<serde_json::Value>| v.and_then(|v| v[0].as_f64());
        assert_eq!(bound(input.min()), Some(0.0));
        assert_eq!(bound(input.max()), Some(f64::from(period32)));
    }
    for track in tracks.values() {
        for times in [
            track.translation.as_ref().map(|t| &t.times),
            track.rotation.as_ref().map(|t| &t.times),
            track.scale.as_ref().map(|t| &t.times),
        ]
        .into_iter()
        .flatten()
        {
            assert_eq!(times.first(), Some(&0.0));
            assert_eq!(times.last(), Some(&period32));
            assert!(times.windows(2).all(|w| w[0] < w[1]));
        }
    }
}

/// Plays the loop: at many play times, every instance is where the path
/// says (or hidden, holding the nearest end), facing its heading.
fn assert_instances_follow_their_paths(patch: &BakedPatch, extras: &SceneExtras, tracks: &BTreeMap<usize, NodeTracks>) {
    let period = patch.header.period;
    let steps = 400;
    for (agent, record) in patch.agents.iter().zip(&extras.agents) {
        let (start, end) = (agent.start(), agent.end());
        for step in 0..=steps {
            let tau = period * step as f64 / steps as f64;
            let mut shown = 0;
            let count = record.nodes.len();
            let merged = agent.last_on_first(period);
            for (j, &n) in record.nodes.iter().enumerate().take(count - usize::from(merged)) {
                // The merged instance shows the last window before its split
                // and moves from the path's end to its start while hidden.
                let before = merged && j == 0 && tau < agent.split(period);
                let k = record.first_instance + if before { count as i64 - 1 } else { j as i64 };
                let t = tau + k as f64 * period;
                let (until, from) = agent.hidden(period);
                let moving_hidden = merged && j == 0 && tau > until + 1e-4 && tau < from - 1e-4;
                let track = &tracks[&n];
                let (translation, rotation, scale) = (
                    track.translation.as_ref().expect("a translation channel"),
                    track.rotation.as_ref().expect("a rotation channel"),
                    track.scale.as_ref().expect("a scale channel"),
                );
                assert_eq!(translation.interpolation, Interpolation::Linear);
                assert_eq!(rotation.interpolation, Interpolation::Linear);
                assert_eq!(scale.interpolation, Interpolation::Step);
                for w in rotation.values.windows(2) {
                    let d: f32 = (0..4).map(|c| w[0][c] * w[1][c]).sum();
                    assert!(d >= 0.0, "consecutive rotations in opposite hemispheres");
                }
                let clamped = t.clamp(start, end);
                let (p, h) = agent.sample(clamped).unwrap();
                let at = translation.at(tau);
                let s = scale.at(tau);
                if moving_hidden {
                    assert_eq!(s, [0.0; 3], "node {n} shown at τ = {tau} between its two windows");
                    continue;
                }
                assert!(
                    distance(at, gltf_point(p)) < 1e-4,
                    "node {n} at τ = {tau}: {at:?}, path at t = {clamped}: {p:?}"
                );
                let f = forward(slerp_at(rotation, tau));
                assert!(
                    distance(f, gltf_point([h.cos(), h.sin()])) < 1e-4,
                    "node {n} at τ = {tau}: faces {f:?}, heading {h}"
                );
                assert!(s == [0.0; 3] || s == [1.0; 3], "scale {s:?}");
                // Away from the interval's ends (where STEP switches), the
                // instance shows exactly when the path is there.
                let margin = 1e-3;
                if t > start + margin && t < end - margin {
                    assert_eq!(s, [1.0; 3], "node {n} hidden at τ = {tau} (t = {t})");
                    shown += 1;
                } else if t < start - margin || t > end + margin {
                    assert_eq!(s, [0.0; 3], "node {n} shown at τ = {tau} (t = {t})");
                }
            }
            // A loop agent is always shown once; others at most once per
            // time (except at the switch instants).
            let interior = (0..count).all(|j| {
                let t = tau + (record.first_instance + j as i64) as f64 * period;
                (t - start).abs() > 1e-3 && (t - end).abs() > 1e-3
            });
            if interior && (end - start - period).abs() < 1e-9 {
                assert_eq!(shown, 1, "loop agent shown {shown} times at τ = {tau}");
            }
        }
    }
}

/// The static pose is the pose at τ = 0.
fn assert_the_static_pose_is_the_first_key(nodes: &[gltf::Node<'_>], tracks: &BTreeMap<usize, NodeTracks>) {
    for (&n, track) in tracks {
        let node = &nodes[n];
        let (t, r, s) = node.transform().decomposed();
        if let Some(tr) = &track.translation {
            assert_eq!(t, tr.values[0]);
        }
        if let Some(rt) = &track.rotation {
            assert_eq!(r, rt.values[0]);
        }
        if let Some(sc) = &track.scale {
            assert_eq!(s, sc.values[0]);
        }
    }
}

fn write(patch: &BakedPatch) -> Vec<u8> {
    write_glb(patch, Some(&common::metrics()), &GlbOptions::default()).expect("the patch is valid")
}

#[test]
fn full_patch_plays_like_its_paths() {
    let patch = common::full();
    let glb = write(&patch);
    assert_plays_like_the_patch(&patch, &glb);
    let rb = ReadBack::new(&glb);
    // 3 + 1 + 2 instance nodes, 2 obstacles, ground.
    assert_eq!(rb.doc.nodes().count(), 6 + 2 + 1);
    let scene = rb.doc.default_scene().unwrap();
    assert_eq!(scene.nodes().count(), 9, "every node is a scene root");
    let names: Vec<_> = rb.doc.materials().map(|m| m.name().unwrap().to_owned()).collect();
    assert_eq!(names, ["agent", "obstacle", "ground"]);
    // Obstacles stand on the ground, 0.8 m high, where the patch has them.
    for node in rb.doc.nodes().filter(|n| n.name().is_some_and(|s| s.starts_with("obstacle"))) {
        let mesh = node.mesh().unwrap();
        let prim = mesh.primitives().next().unwrap();
        let bb = prim.bounding_box();
        assert_eq!((bb.min[1], bb.max[1]), (0.0, 0.8));
        assert!(prim.get(&gltf::Semantic::Normals).is_some());
    }
    let circle = rb.doc.nodes().find(|n| n.name() == Some("obstacle 1")).unwrap();
    let bb = circle.mesh().unwrap().primitives().next().unwrap().bounding_box();
    assert!((bb.min[0] - 6.8).abs() < 1e-5 && (bb.max[2] + 6.8).abs() < 1e-5, "{bb:?}");
    // The ground is L × L.
    let ground = rb.doc.nodes().find(|n| n.name() == Some("ground")).unwrap();
    let bb = ground.mesh().unwrap().primitives().next().unwrap().bounding_box();
    assert_eq!((bb.min, bb.max), ([0.0, 0.0, -16.0], [16.0, 0.0, 0.0]));
    // The agent body is ~1.75 m tall, r wide, standing on y = 0.
    let agent = rb.doc.meshes().find(|m| m.name() == Some("agent")).unwrap();
    let bb = agent.primitives().next().unwrap().bounding_box();
    assert_eq!((bb.min[1], bb.max[1]), (0.0, 1.75));
    assert!((bb.max[0] - 0.3).abs() < 1e-6 && bb.max[2] > 0.3, "a nose on +Z: {bb:?}");
}

/// `v` with every number as an `f64` (the file writes whole numbers without
/// a fraction).
fn as_f64(v: &serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Number(n) => n.as_f64().into(),
        serde_json::Value::Array(a) => a.iter().map(as_f64).collect(),
        serde_json::Value::Object(o) => o.iter().map(|(k, x)| (k.clone(), as_f64(x))).collect(),
        other => other.clone(),
    }
}

#[test]
fn metrics_are_written_as_given_with_the_written_tracks_figures() {
    let patch = common::full();
    let given = common::metrics();
    let with = ReadBack::new(&write(&patch)).record();
    // The figures as given, but for the exporter's own figures of the joint
    // tracks it wrote (none: the patch has no skeleton).
    let mut expected = given.clone();
    for key in ["joint_keys", "key_position_error", "key_rotation_error", "key_contact_error"] {
        assert_ne!(given["animation"][key], 0.0, "{key}");
        expected["animation"][key] = 0.into();
    }
    assert_eq!(as_f64(&with["metrics"]), as_f64(&expected));
    // Figures without `animation` get none.
    let plain = serde_json::json!({ "coverage": 0.5, "speed": { "mean": 1.25 } });
    let glb = write_glb(&patch, Some(&plain), &GlbOptions::default()).unwrap();
    assert_eq!(as_f64(&ReadBack::new(&glb).record()["metrics"]), as_f64(&plain));
    // Without figures the record has no `metrics`, and is otherwise the same.
    let without = ReadBack::new(&write_glb(&patch, None, &GlbOptions::default()).unwrap()).record();
    assert!(without.get("metrics").is_none(), "{without}");
    let mut stripped = with.clone();
    stripped.as_object_mut().unwrap().remove("metrics");
    assert_eq!(stripped, without);
    assert_eq!(without["format"], crowdpatch_runtime::FORMAT_VERSION);
}

#[test]
fn endogenous_loop_starting_late_is_always_shown_once() {
    let patch = common::loop_only();
    assert_eq!(patch.agents[0].instances(patch.header.period), 0..2);
    assert_plays_like_the_patch(&patch, &write(&patch));
}

#[test]
fn instances_share_time_accessors() {
    let patch = common::full();
    let rb = ReadBack::new(&write(&patch));
    let animation = rb.animation();
    let mut inputs: Vec<usize> = animation.samplers().map(|s| s.input().index()).collect();
    let samplers = inputs.len();
    inputs.sort();
    inputs.dedup();
    // Translation and rotation of each node share one input; the
    // always-shown instances share the scale input [0, π].
    assert!(inputs.len() < samplers * 2 / 3, "{} inputs for {samplers} samplers", inputs.len());
}

#[test]
fn patch_without_agents_keeps_a_loop_of_one_period() {
    let patch = common::no_agents();
    let glb = write(&patch);
    assert_plays_like_the_patch(&patch, &glb);
    let rb = ReadBack::new(&glb);
    let animation = rb.animation();
    let input = animation.samplers().next().unwrap().input();
    assert_eq!(input.max().and_then(|v| v[0].as_f64()), Some(10.0));
    assert_eq!(rb.doc.meshes().count(), 3, "two obstacles and the ground, no agent mesh");
    assert_eq!(rb.doc.materials().count(), 2);
}

#[test]
fn empty_patch_without_ground_still_has_a_scene_and_a_loop() {
    let patch = common::empty();
    let options = GlbOptions { ground: false, ..GlbOptions::default() };
    let glb = write_glb(&patch, None, &options).unwrap();
    assert_plays_like_the_patch(&patch, &glb);
    let rb = ReadBack::new(&glb);
    // One placeholder node carries the scene and the loop.
    assert_eq!(rb.doc.nodes().count(), 1);
    assert_eq!(rb.doc.nodes().next().unwrap().name(), Some("empty patch"));
    assert_eq!(rb.doc.meshes().count(), 0);
    assert_eq!(rb.doc.animations().count(), 1);
    assert_eq!(rb.extras(), expected_extras(&patch, vec![]));
}

#[test]
fn writing_twice_gives_identical_bytes() {
    for patch in [common::full(), common::loop_only(), common::no_agents(), common::empty()] {
        let a = write(&patch);
        let b = write(&patch.clone());
        assert!(a == b, "{}: two writes differ", patch.header.name);
        assert_eq!(a.len() % 4, 0);
    }
}

#[test]
fn options_shape_the_meshes() {
    let patch = common::full();
    let options = GlbOptions {
        obstacle_height: 2.5,
        agent_height: 1.6,
        ground: false,
        circle_segments: 48,
        ..GlbOptions::default()
    };
    let rb = ReadBack::new(&write_glb(&patch, None, &options).unwrap());
    assert!(rb.doc.nodes().all(|n| n.name() != Some("ground")));
    let circle = rb.doc.meshes().find(|m| m.name() == Some("obstacle 1")).unwrap();
    let prim = circle.primitives().next().unwrap();
    assert_eq!(prim.bounding_box().max[1], 2.5);
    // 48 wall pairs, a hub and 48 cap vertices.
    assert_eq!(prim.get(&gltf::Semantic::Positions).unwrap().count(), 48 * 2 + 1 + 48);
    let agent = rb.doc.meshes().find(|m| m.name() == Some("agent")).unwrap();
    assert_eq!(agent.primitives().next().unwrap().bounding_box().max[1], 1.6);
}

/// Asserts that writing `patch` fails with an error matching `expected`.
fn assert_rejects(patch: &BakedPatch, options: &GlbOptions, expected: impl Fn(&ExportError) -> bool) {
    match write_glb(patch, None, options) {
        Ok(_) => panic!("accepted a bad patch"),
        Err(e) => assert!(expected(&e), "unexpected error: {e} ({e:?})"),
    }
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let ok = GlbOptions::default();
    let with = |f: &dyn Fn(&mut BakedPatch)| {
        let mut p = common::full();
        f(&mut p);
        p
    };

    // Agents: too few keys (none, one), NaN, time going back, too long.
    let p = with(&|p| p.agents[1].keys.clear());
    assert_rejects(&p, &ok, |e| matches!(e, ExportError::TooFewKeys { agent: 1, count: 0 }));
    let p = with(&|p| p.agents[2].keys.truncate(1));
    assert_rejects(&p, &ok, |e| matches!(e, ExportError::TooFewKeys { agent: 2, count: 1 }));
    assert!(write_glb(&p, None, &ok).unwrap_err().to_string().contains("agent 2"));
    let p = with(&|p| p.agents[0].keys[3].position[1] = f64::NAN);
    assert_rejects(
        &p,
        &ok,
        |e| matches!(e, ExportError::NonFinite { path, .. } if path == "agents[0].keys[3].position[1]"),
    );
    let p = with(&|p| p.agents[0].keys[2].heading = f64::INFINITY);
    assert_rejects(&p, &ok, |e| matches!(e, ExportError::NonFinite { path, .. } if path.starts_with("agents[0]")));
    let p = with(&|p| p.agents[1].keys[2].t = 4.0);
    assert_rejects(&p, &ok, |e| matches!(e, ExportError::TimeNotIncreasing { agent: 1, key: 2, .. }));
    let p = with(&|p| p.agents[1].keys[2].t = 1e300);
    assert_rejects(&p, &ok, |e| matches!(e, ExportError::PathTooLong { agent: 1, .. }));
    let p = with(&|p| p.agents[1].keys[2].t = 1e5);
    assert_rejects(&p, &ok, |e| matches!(e, ExportError::PathTooLong { agent: 1, .. }));
    let p = with(&|p| {
        p.agents[1].keys = vec![
            PathKey { t: -1e12, position: [0.0, 0.0], heading: 0.0 },
            PathKey { t: -1e12 + 1.0, position: [1.0, 0.0], heading: 0.0 },
        ]
    });
    assert_rejects(&p, &ok, |e| matches!(e, ExportError::PathTooLong { agent: 1, .. }));

    // Patch parameters, boundary points.
    for (field, f) in [
        ("period", (|p: &mut BakedPatch| p.header.period = 0.0) as fn(&mut BakedPatch)),
        ("size", |p| p.header.size = f64::NAN),
        ("agent_radius", |p| p.header.agent_radius = -0.3),
        ("comfort_speed", |p| p.header.comfort_speed = f64::INFINITY),
    ] {
        assert_rejects(&with(&f), &ok, |e| matches!(e, ExportError::InvalidParameter { field: x, .. } if *x == field));
    }
    let p = with(&|p| p.format = 99);
    assert_rejects(&p, &ok, |e| matches!(e, ExportError::UnsupportedFormat { found: 99, .. }));
    let p = with(&|p| p.patterns.west.exits[1].velocity[0] = f64::NAN);
    assert_rejects(
        &p,
        &ok,
        |e| matches!(e, ExportError::NonFinite { path, .. } if path == "patterns.west.exits[1].velocity[0]"),
    );

    // Obstacles.
    for bad in [
        Obstacle::Polygon(vec![[0.0, 0.0], [1.0, 1.0]]),
        Obstacle::Polygon(vec![[0.0, 0.0], [1.0, 1.0], [1.0, 1.0], [0.0, 0.0]]),
        Obstacle::Polygon(vec![[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]),
        Obstacle::Polygon(vec![[0.0, 0.0], [1.0, f64::NAN], [2.0, 0.0]]),
        Obstacle::Polygon(vec![]),
        Obstacle::Circle { center: [1.0, 1.0], radius: 0.0 },
        Obstacle::Circle { center: [f64::NAN, 1.0], radius: 1.0 },
    ] {
        let p = with(&|p| p.obstacles.push(bad.clone()));
        assert_rejects(&p, &ok, |e| match e {
            ExportError::InvalidObstacle { obstacle, .. } => *obstacle == 2,
            ExportError::NonFinite { path, .. } => path.starts_with("obstacles[2]"),
            _ => false,
        });
    }

    // Options.
    let patch = common::full();
    for options in [
        GlbOptions { obstacle_height: 0.0, ..ok.clone() },
        GlbOptions { obstacle_height: f64::NAN, ..ok.clone() },
        GlbOptions { agent_height: -1.0, ..ok.clone() },
        GlbOptions { circle_segments: 8, ..ok.clone() },
    ] {
        assert_rejects(&patch, &options, |e| matches!(e, ExportError::InvalidOption { .. }));
    }
}

#[test]
fn odd_but_valid_paths_are_written() {
    // A path starting before 0, one ending exactly on a window boundary, one
    // a hair before it, and one whose keys are closer than f32 can tell.
    let mut patch = common::base("odd");
    let agent = |keys: &[(f64, [f64; 2])]| BakedAgent {
        kind: crowdpatch_runtime::AgentKind::Endogenous { index: 0 },
        keys: common::path(keys),
    };
    patch.agents = vec![
        agent(&[(-3.0, [1.0, 1.0]), (4.0, [5.0, 1.0])]),
        agent(&[(5.0, [1.0, 2.0]), (20.0, [15.0, 2.0])]),
        agent(&[(5.0, [1.0, 3.0]), (10.0 - 1e-9, [9.0, 3.0]), (12.0, [11.0, 3.0])]),
        agent(&[(2.0, [1.0, 4.0]), (2.0 + 1e-9, [1.0 + 1e-9, 4.0]), (6.0, [5.0, 4.0])]),
    ];
    let glb = write(&patch);
    assert_plays_like_the_patch(&patch, &glb);
}

#[test]
fn coordinates_and_periods_out_of_f32_reach_are_errors() {
    let ok = GlbOptions::default();
    let mut p = common::full();
    p.agents[0].keys[1].position[0] = 1e30;
    assert_rejects(
        &p,
        &ok,
        |e| matches!(e, ExportError::OutOfRange { path, .. } if path == "agents[0].keys[1].position[0]"),
    );
    let mut p = common::full();
    p.obstacles[0] = Obstacle::Polygon(vec![[0.0, 0.0], [1e9, 0.0], [0.0, 1.0]]);
    assert_rejects(
        &p,
        &ok,
        |e| matches!(e, ExportError::OutOfRange { path, .. } if path == "obstacles[0].polygon[1][0]"),
    );
    for period in [1e-9, 1e9, f64::NAN, -10.0] {
        let mut p = common::full();
        p.header.period = period;
        assert_rejects(&p, &ok, |e| matches!(e, ExportError::InvalidParameter { field: "period", .. }));
    }
    let mut p = common::full();
    p.header.size = 1e300;
    assert_rejects(&p, &ok, |e| matches!(e, ExportError::InvalidParameter { field: "size", .. }));
}

#[test]
fn too_many_instances_in_all_is_an_error() {
    let mut p = common::base("crowded");
    let long = BakedAgent {
        kind: crowdpatch_runtime::AgentKind::Endogenous { index: 0 },
        keys: common::path(&[(0.0, [1.0, 1.0]), (9_999.5, [2.0, 1.0])]),
    };
    assert_eq!(long.instances(p.header.period).count(), 1000);
    p.agents = vec![long; crowdpatch_gltf::MAX_INSTANCES / 1000 + 1];
    assert_rejects(&p, &GlbOptions::default(), |e| matches!(e, ExportError::TooManyInstances { .. }));
}

/// A small deterministic generator (xorshift64*), so that the test needs no
/// random-number crate and always sees the same cases.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in [a, b).
    fn range(&mut self, a: f64, b: f64) -> f64 {
        a + (b - a) * (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// [`Rng::spoil`] of a uniform number in [a, b).
    fn spoilt_range(&mut self, a: f64, b: f64) -> f64 {
        let v = self.range(a, b);
        self.spoil(v)
    }
    /// Mostly `value`, sometimes a number that breaks things.
    fn spoil(&mut self, value: f64) -> f64 {
        match self.below(60) {
            0 => f64::NAN,
            1 => f64::INFINITY,
            2 => -value,
            3 => 0.0,
            4 => value * 1e12,
            _ => value,
        }
    }
}

/// Random patches, many of them broken: the writer returns an error or a
/// GLB that the `gltf` crate reads, with strictly increasing key times from
/// 0 to π, and never panics.
#[test]
fn random_patches_never_panic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut written, mut rejected) = (0, 0);
    for case in 0..3000 {
        let mut p = common::base(&format!("random {case}"));
        p.header.period = rng.spoil(10.0);
        p.header.size = rng.spoil(16.0);
        p.header.agent_radius = rng.spoil(0.3);
        for _ in 0..rng.below(5) {
            let n = rng.below(8);
            let mut t = rng.range(-5.0, 15.0);
            let mut keys = Vec::new();
            for _ in 0..n {
                keys.push(PathKey {
                    t: rng.spoil(t),
                    position: [rng.spoilt_range(-1.0, 17.0), rng.range(-1.0, 17.0)],
                    heading: rng.spoilt_range(-4.0, 4.0),
                });
                // Mostly forward in time, by steps from 1e-9 s to 8 s.
                t += if rng.below(20) == 0 { -1.0 } else { 10f64.powf(rng.range(-9.0, 0.9)) };
            }
            p.agents.push(BakedAgent { kind: crowdpatch_runtime::AgentKind::Endogenous { index: 0 }, keys });
        }
        for _ in 0..rng.below(4) {
            if rng.below(2) == 0 {
                let center = [rng.range(0.0, 16.0), rng.range(0.0, 16.0)];
                p.obstacles.push(Obstacle::Circle { center, radius: rng.spoilt_range(0.01, 3.0) });
            } else {
                // Often self-intersecting, with repeats and collinear runs.
                let n = rng.below(10);
                let mut v = Vec::new();
                for _ in 0..n {
                    match rng.below(6) {
                        0 if !v.is_empty() => v.push(v[rng.below(v.len())]),
                        1 => v.push([rng.range(0.0, 4.0).round(), 0.0]),
                        _ => v.push([rng.spoilt_range(0.0, 4.0), rng.range(0.0, 4.0)]),
                    }
                }
                p.obstacles.push(Obstacle::Polygon(v));
            }
        }
        let options = GlbOptions { ground: rng.below(2) == 0, ..GlbOptions::default() };
        let Ok(glb) = write_glb(&p, None, &options) else {
            rejected += 1;
            continue;
        };
        written += 1;
        let rb = ReadBack::new(&glb);
        let period32 = p.header.period as f32;
        for channel in rb.animation().channels() {
            let reader = channel.reader(|_| Some(rb.blob.as_slice()));
            let times: Vec<f32> = reader.read_inputs().unwrap().collect();
            assert_eq!((times[0], times[times.len() - 1]), (0.0, period32), "case {case}");
            assert!(times.windows(2).all(|w| w[0] < w[1]), "case {case}: {times:?}");
        }
        // Where f32 key times can hold the path to 0.1 mm: speeds below
        // 20 m/s (a key time rounded by up to 1 µs moves the agent 20 µm).
        let speed = |w: &[PathKey]| {
            let d = (w[1].position[0] - w[0].position[0]).hypot(w[1].position[1] - w[0].position[1]);
            d / (w[1].t - w[0].t)
        };
        if p.agents.iter().all(|a| a.keys.windows(2).all(|w| speed(w) < 20.0)) {
            assert_plays_like_the_patch(&p, &glb);
        }
    }
    println!("{written} written, {rejected} rejected");
    // Both paths were exercised.
    assert!(written > 50 && rejected > 50, "{written} written, {rejected} rejected");
}
