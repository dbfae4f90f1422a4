//! Runtime tests on real bakes: every shipped patch is baked, written as a
//! GLB and loaded back with `crowdpatch-runtime`'s own GLB reader; sampling
//! must follow the baked paths. The loader is fuzzed with corrupted files
//! (it must return errors, never panic), and a hand-made skeletal GLB (a joint
//! subtree below each instance node) exercises the joint-clip path. A file of
//! the previous format (2, metrics required) plays like the current one.

use crowdpatch::{Silent, bake, load_patch};
use crowdpatch_gltf::{GlbOptions, write_glb};
use crowdpatch_runtime::{LoadError, PhaseSource, Placement, Poses, Tile};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn shipped() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("patches"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".patch.json"))
        .collect();
    v.sort();
    v
}

fn baked_glb(name: &str) -> (crowdpatch_runtime::BakedPatch, Vec<u8>) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("patches").join(format!("{name}.patch.json"));
    let b = bake(&load_patch(&file).unwrap(), &mut Silent).unwrap();
    let baked = b.baked();
    let glb = write_glb(&baked, Some(&b.metrics.to_json()), &GlbOptions::default()).unwrap();
    (baked, glb)
}

#[test]
fn loaded_tiles_play_the_baked_paths() {
    for file in shipped() {
        let b = bake(&load_patch(&file).unwrap(), &mut Silent).unwrap();
        let baked = b.baked();
        let glb = write_glb(&baked, Some(&b.metrics.to_json()), &GlbOptions::default()).unwrap();
        let tile = Tile::from_glb(&glb).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let direct = Tile::from_baked(&baked);
        assert_eq!(tile.agent_count(), baked.agents.len());
        assert_eq!(tile.instance_count(), direct.instance_count());
        assert_eq!(tile.phase_source(), PhaseSource::DistanceWalked);
        let n = tile.instance_count();
        let (mut a, mut b) = (Poses::new(n), Poses::new(n));
        let period = baked.header.period;
        for step in 0..400 {
            let t = step as f64 * 0.0731;
            tile.sample(t, &Placement::default(), a.as_mut());
            direct.sample(t, &Placement::default(), b.as_mut());
            let tau = t.rem_euclid(period);
            for i in 0..n {
                let info = tile.instance(i);
                let agent = &baked.agents[info.agent];
                let unwrapped = info.path_time(tau, period);
                let inside = unwrapped >= agent.start() && unwrapped < agent.end();
                // Visibility flips at f32-rounded times; skip the instants at the edge.
                let near_edge = (unwrapped - agent.start()).abs() < 1e-4 || (unwrapped - agent.end()).abs() < 1e-4;
                if !near_edge {
                    assert_eq!(a.visible[i], inside, "{}: t = {t}, instance {i}", file.display());
                }
                if inside {
                    let (p, h) = agent.sample(unwrapped).unwrap();
                    let d = (f64::from(a.x[i]) - p[0]).hypot(f64::from(a.y[i]) - p[1]);
                    assert!(d < 1e-3, "{}: t = {t}, instance {i}: {d} m off", file.display());
                    let dh = crowdpatch_runtime::format::wrap_angle(f64::from(a.heading[i]) - h);
                    // A half turn on the spot between two keys may go either
                    // way once rounded to f32: no heading to compare there.
                    let j = agent.keys.partition_point(|k| k.t <= unwrapped).clamp(1, agent.keys.len() - 1);
                    let turn =
                        crowdpatch_runtime::format::wrap_angle(agent.keys[j].heading - agent.keys[j - 1].heading);
                    assert!(
                        turn.abs() > 3.1 || dh.abs() < 1e-3,
                        "{}: t = {t}, instance {i}: heading {dh} rad off",
                        file.display()
                    );
                }
                // The GLB path and the direct path agree.
                assert!((a.x[i] - b.x[i]).abs() < 1e-3 && (a.y[i] - b.y[i]).abs() < 1e-3);
                assert!(
                    (a.phase[i] - b.phase[i]).abs() < 1e-3 || (a.phase[i] - b.phase[i]).abs() > 0.999,
                    "{}: t = {t}, instance {i} {:?}: phase {} vs {}",
                    file.display(),
                    tile.instance(i),
                    a.phase[i],
                    b.phase[i]
                );
                assert!((0.0..1.0).contains(&a.phase[i]));
            }
        }
        // Bytes per agent instance stay small.
        assert!(tile.memory_bytes() / n.max(1) < 4096, "{}", tile.memory_bytes());
    }
}

#[test]
fn gait_phase_is_continuous_along_each_agent_path() {
    let (baked, glb) = baked_glb("park");
    let tile = Tile::from_glb(&glb).unwrap();
    // Sample every agent along its unwrapped interval; phase steps stay small
    // (no jump where instances hand over or a loop closes).
    for (a, agent) in baked.agents.iter().enumerate() {
        let mut previous: Option<f32> = None;
        let steps = 2000;
        for s in 0..=steps {
            let t = (agent.start() + (agent.end() - agent.start()) * s as f64 / steps as f64).min(agent.end());
            let Some(p) = tile.agent_position(a, t) else { panic!("agent {a} at {t}") };
            assert!(p[0].is_finite());
            let phase = phase_of(&tile, a, t);
            if let Some(prev) = previous {
                let d = (phase - prev).rem_euclid(1.0);
                let d = d.min(1.0 - d);
                assert!(d < 0.05, "agent {a}: phase jumps by {d} at t = {t}");
            }
            previous = Some(phase);
        }
    }
}

/// Phase of agent `a` at unwrapped time `t`, read from a sample.
fn phase_of(tile: &Tile, a: usize, t: f64) -> f32 {
    let period = tile.period();
    let mut k = (t / period).floor() as i64;
    if t - k as f64 * period == 0.0 && t > tile.extras().agents[a].interval[0] {
        k -= 1;
    }
    let tau = t - k as f64 * period;
    // The instance showing window k at τ (an agent's first instance may
    // show its last window too, before its split).
    let shows = |i: usize| tile.instance(i).agent == a && tile.instance(i).period_index(tau) == k;
    let i = (0..tile.instance_count()).find(|&i| shows(i)).unwrap();
    // instance_pose wraps τ = π to 0; stay just inside the window.
    let (_, _, _, phase) = tile.instance_pose(i, tau.min(period - 1e-6));
    phase
}

#[test]
fn non_crowdpatch_and_unknown_versions_are_refused_clearly() {
    let (_, glb) = baked_glb("figure7");
    // A plain glTF without the crowdpatch record.
    let plain = edit_json(&glb, |j| {
        j["scenes"][0]["extras"] = json!({ "author": "someone" });
    });
    let e = Tile::from_glb(&plain).unwrap_err();
    assert!(matches!(e, LoadError::NotCrowdpatch { .. }), "{e}");
    assert!(e.to_string().contains("not a crowdpatch bake"), "{e}");
    // A future format version.
    let future = edit_json(&glb, |j| {
        j["scenes"][0]["extras"]["crowdpatch"]["format"] = json!(99);
    });
    let e = Tile::from_glb(&future).unwrap_err();
    assert_eq!(e, LoadError::UnsupportedVersion { found: 99, supported: crowdpatch_runtime::FORMAT_VERSION });
    assert!(e.to_string().contains("re-bake"), "{e}");
    // Format 1 (no first instance showing the last window) reads alike.
    let v1 = edit_json(&glb, |j| {
        j["scenes"][0]["extras"]["crowdpatch"]["format"] = json!(1);
    });
    assert!(Tile::from_glb(&v1).is_ok());
    // Not a GLB at all.
    assert!(matches!(Tile::from_glb(b"{\"asset\":{}}"), Err(LoadError::Container { .. })));
    // A missing file names the file.
    let e = Tile::load("no/such/tile.glb").unwrap_err();
    assert!(e.to_string().contains("no/such/tile.glb"), "{e}");
}

/// The bytes of `glb` with its one `"format":3` written `"format":2`: the
/// file as format 2 wrote it (the same bytes but for the version, metrics
/// included).
fn as_format_2(glb: &[u8]) -> Vec<u8> {
    let json_len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    let (from, to) = (&b"\"format\":3"[..], &b"\"format\":2"[..]);
    let at: Vec<usize> = (20..20 + json_len - from.len()).filter(|&i| &glb[i..i + from.len()] == from).collect();
    assert_eq!(at.len(), 1, "one format field in the JSON chunk");
    let mut old = glb.to_vec();
    old[at[0]..at[0] + to.len()].copy_from_slice(to);
    old
}

#[test]
fn a_format_2_file_plays_like_its_format_3_twin() {
    for name in ["park", "figure7"] {
        let (baked, glb) = baked_glb(name);
        assert_eq!(crowdpatch_runtime::FORMAT_VERSION, 3);
        let old = as_format_2(&glb);
        let (json, _) = split(&old);
        let record = &json["scenes"][0]["extras"]["crowdpatch"];
        assert_eq!(record["format"], 2);
        assert!(record["metrics"]["speed"]["mean"].as_f64().is_some(), "{name}: format 2 holds the metrics");
        let (old_tile, new_tile) = (Tile::from_glb(&old).unwrap(), Tile::from_glb(&glb).unwrap());
        // A format-3 file without the bake's figures plays alike too.
        let bare = Tile::from_glb(&write_glb(&baked, None, &GlbOptions::default()).unwrap()).unwrap();
        assert_eq!(old_tile.extras().format, 2);
        let mut same = old_tile.extras().clone();
        same.format = 3;
        assert_eq!(&same, new_tile.extras(), "{name}");
        assert_eq!(bare.extras(), new_tile.extras(), "{name}");
        let n = new_tile.instance_count();
        assert!(n > 0);
        assert_eq!((old_tile.instance_count(), bare.instance_count()), (n, n));
        let (mut a, mut b, mut c) = (Poses::new(n), Poses::new(n), Poses::new(n));
        let placement = Placement { offset: [16.0, -32.0], rotation: 3 };
        for step in 0..500 {
            let t = step as f64 * 0.0537;
            old_tile.sample(t, &placement, a.as_mut());
            new_tile.sample(t, &placement, b.as_mut());
            bare.sample(t, &placement, c.as_mut());
            for p in [&a, &c] {
                assert_eq!((&p.x, &p.y, &p.heading, &p.phase), (&b.x, &b.y, &b.heading, &b.phase), "{name}: t = {t}");
                assert_eq!(p.visible, b.visible, "{name}: t = {t}");
            }
        }
    }
}

#[test]
fn a_first_instance_showing_the_last_window_loads_and_a_false_one_is_refused() {
    let (baked, glb) = baked_glb("figure7");
    let period = baked.header.period;
    let (json, _) = split(&glb);
    let agents = json["scenes"][0]["extras"]["crowdpatch"]["agents"].as_array().unwrap().clone();
    // Some agents list their first node again last, exactly those whose
    // path allows it.
    let merged: Vec<usize> = (0..agents.len())
        .filter(|&a| {
            let nodes = agents[a]["nodes"].as_array().unwrap();
            nodes.len() >= 2 && nodes[0] == nodes[nodes.len() - 1]
        })
        .collect();
    assert!(!merged.is_empty());
    for (a, agent) in baked.agents.iter().enumerate() {
        assert_eq!(merged.contains(&a), agent.last_on_first(period), "agent {a}");
    }
    let tile = Tile::from_glb(&glb).unwrap();
    let distinct: usize = agents.iter().map(|a| a["nodes"].as_array().unwrap().len()).sum::<usize>() - merged.len();
    assert_eq!(tile.instance_count(), distinct);
    // A path stretched so that its last window's part overlaps the first's.
    let a = merged[0];
    let bad = edit_json(&glb, |j| {
        let interval = &mut j["scenes"][0]["extras"]["crowdpatch"]["agents"][a]["interval"];
        let start = interval[0].as_f64().unwrap();
        let end = interval[1].as_f64().unwrap();
        let last = (end / period).ceil() * period;
        interval[1] = json!(last - period + (start - (start / period).floor() * period) + 0.5);
    });
    let e = Tile::from_glb(&bad).unwrap_err();
    let text = e.to_string();
    assert!(text.contains(&format!("agents[{a}].nodes")) && text.contains("not hidden"), "{text}");
}

/// Splits a GLB into JSON and binary chunk.
fn split(glb: &[u8]) -> (Value, Vec<u8>) {
    let json_len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    let json: Value = serde_json::from_slice(&glb[20..20 + json_len]).unwrap();
    let bin = if glb.len() > 20 + json_len { glb[20 + json_len + 8..].to_vec() } else { Vec::new() };
    (json, bin)
}

/// Packs JSON and a binary chunk into a GLB.
fn pack(json: &Value, bin: &[u8]) -> Vec<u8> {
    let mut j = serde_json::to_vec(json).unwrap();
    while !j.len().is_multiple_of(4) {
        j.push(b' ');
    }
    let mut b = bin.to_vec();
    while !b.len().is_multiple_of(4) {
        b.push(0);
    }
    let total = 12 + 8 + j.len() + if b.is_empty() { 0 } else { 8 + b.len() };
    let mut out = Vec::with_capacity(total);
    out.extend(b"glTF");
    out.extend(2u32.to_le_bytes());
    out.extend((total as u32).to_le_bytes());
    out.extend((j.len() as u32).to_le_bytes());
    out.extend(b"JSON");
    out.extend(j);
    if !b.is_empty() {
        out.extend((b.len() as u32).to_le_bytes());
        out.extend(b"BIN\0");
        out.extend(b);
    }
    out
}

fn edit_json(glb: &[u8], f: impl FnOnce(&mut Value)) -> Vec<u8> {
    let (mut json, bin) = split(glb);
    f(&mut json);
    pack(&json, &bin)
}

/// Adds, below every instance node, a two-joint chain (`hips` → `knee`)
/// whose rotations are keyed in the `loop` animation, as a skeletal bake
/// does; the knee bends by `bend(τ)` about +X.
fn with_skeleton(glb: &[u8]) -> Vec<u8> {
    let (mut json, mut bin) = split(glb);
    let period = json["scenes"][0]["extras"]["crowdpatch"]["period"].as_f64().unwrap() as f32;
    let times = [0.0f32, period / 2.0, period];
    let angles = [0.0f32, 0.8, 0.0];
    let push_floats = |bin: &mut Vec<u8>, v: &[f32]| -> usize {
        let at = bin.len();
        bin.extend(v.iter().flat_map(|f| f.to_le_bytes()));
        at
    };
    let time_at = push_floats(&mut bin, &times);
    let quats: Vec<f32> = angles.iter().flat_map(|a| [(a / 2.0).sin(), 0.0, 0.0, (a / 2.0).cos()]).collect();
    let quat_at = push_floats(&mut bin, &quats);
    let view = json["bufferViews"].as_array().unwrap().len();
    json["bufferViews"]
        .as_array_mut()
        .unwrap()
        .push(json!({"buffer": 0, "byteOffset": time_at, "byteLength": bin.len() - time_at}));
    json["buffers"][0]["byteLength"] = json!(bin.len());
    let acc = json["accessors"].as_array().unwrap().len();
    json["accessors"].as_array_mut().unwrap().push(
        json!({"bufferView": view, "componentType": 5126, "count": 3, "type": "SCALAR", "min": [0.0], "max": [period]}),
    );
    json["accessors"].as_array_mut().unwrap().push(
        json!({"bufferView": view, "byteOffset": quat_at - time_at, "componentType": 5126, "count": 3, "type": "VEC4"}),
    );
    let instance_nodes: Vec<usize> = json["scenes"][0]["extras"]["crowdpatch"]["agents"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|a| a["nodes"].as_array().unwrap().iter().map(|n| n.as_u64().unwrap() as usize).collect::<Vec<_>>())
        .collect();
    for node in instance_nodes {
        let hips = json["nodes"].as_array().unwrap().len();
        json["nodes"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "hips", "translation": [0.0, 0.9, 0.0], "children": [hips + 1]}));
        json["nodes"].as_array_mut().unwrap().push(json!({"name": "knee", "translation": [0.0, -0.45, 0.0]}));
        json["nodes"][node]["children"] = json!([hips]);
        let sampler = json["animations"][0]["samplers"].as_array().unwrap().len();
        json["animations"][0]["samplers"]
            .as_array_mut()
            .unwrap()
            .push(json!({"input": acc, "output": acc + 1, "interpolation": "LINEAR"}));
        json["animations"][0]["channels"]
            .as_array_mut()
            .unwrap()
            .push(json!({"sampler": sampler, "target": {"node": hips + 1, "path": "rotation"}}));
    }
    pack(&json, &bin)
}

#[test]
fn joint_tracks_below_instance_nodes_become_joint_clips() {
    let (_, glb) = baked_glb("figure7");
    let skinned = with_skeleton(&glb);
    let tile = Tile::from_glb(&skinned).unwrap();
    let plain = Tile::from_glb(&glb).unwrap();
    assert_eq!(tile.instance_count(), plain.instance_count());
    let mut joints = Vec::new();
    for i in 0..tile.instance_count() {
        let clip = tile.joint_clip(i).expect("every instance has its skeleton");
        assert_eq!(clip.joints.len(), 2);
        assert_eq!(clip.joints[0].name.as_deref(), Some("hips"));
        assert_eq!(clip.joints[0].parent, None);
        assert_eq!(clip.joints[1].parent, Some(0));
        assert_eq!(clip.channels.len(), 1);
        assert_eq!(clip.channels[0].joint, 1);
        // Bend at a quarter period: 0.4 rad (linear between 0 and 0.8).
        clip.sample(tile.period() as f32 / 4.0, &mut joints);
        let q = joints[1].rotation;
        let angle = 2.0 * q[0].atan2(q[3]);
        assert!((angle - 0.4).abs() < 1e-3, "{angle}");
        assert_eq!(joints[0].translation, [0.0, 0.9, 0.0]);
        // Root motion is untouched by the skeleton.
        for t in [0.3, 4.1, 9.7] {
            assert_eq!(tile.instance_pose(i, t), plain.instance_pose(i, t));
        }
    }
    // A cycle in the joint tree is an error, not a hang.
    let cyclic = edit_json(&skinned, |j| {
        let last = j["nodes"].as_array().unwrap().len() - 1;
        j["nodes"][last]["children"] = json!([last - 1]);
    });
    assert!(Tile::from_glb(&cyclic).is_err());
}

#[test]
fn footsteps_in_the_extras_drive_the_gait_phase() {
    let (baked, glb) = baked_glb("figure7");
    // One footstep every 0.5 s over each agent's interval.
    let with_steps = edit_json(&glb, |j| {
        for a in j["scenes"][0]["extras"]["crowdpatch"]["agents"].as_array_mut().unwrap() {
            let [s, e] = [a["interval"][0].as_f64().unwrap(), a["interval"][1].as_f64().unwrap()];
            let steps: Vec<Value> = (0..)
                .map(|k| s + 0.5 * k as f64)
                .take_while(|&t| t <= e)
                .map(|t| json!({"t": t, "foot": "left"}))
                .collect();
            a["footsteps"] = Value::Array(steps);
        }
    });
    let tile = Tile::from_glb(&with_steps).unwrap();
    assert_eq!(tile.phase_source(), PhaseSource::Footsteps);
    let agent = &baked.agents[0];
    // 0.25 s after the start: half a step, a quarter cycle.
    let phase = phase_of(&tile, 0, agent.start() + 0.25);
    assert!((phase - 0.25).abs() < 1e-3, "{phase}");
}

/// A small real GLB to mutate.
fn fuzz_seed() -> Vec<u8> {
    let (_, glb) = baked_glb("park");
    with_skeleton(&glb)
}

/// Replaces the `n`-th number in the JSON text by `value`.
fn replace_number(json: &str, n: usize, value: &str) -> String {
    let bytes = json.as_bytes();
    let mut count = 0;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let starts = (c.is_ascii_digit() || c == b'-')
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'.'));
        if starts && (i == 0 || bytes[i - 1] != b'"') {
            let mut j = i + 1;
            while j < bytes.len() && (bytes[j].is_ascii_digit() || b".eE+-".contains(&bytes[j])) {
                j += 1;
            }
            if count == n {
                return format!("{}{}{}", &json[..i], value, &json[j..]);
            }
            count += 1;
            i = j;
        } else {
            i += 1;
        }
    }
    json.to_string()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, .. ProptestConfig::default() })]

    /// Random byte flips anywhere: an error or a tile, never a panic.
    #[test]
    fn corrupted_bytes_never_panic(flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
        let mut glb = FUZZ.with(|f| f.clone());
        for (at, byte) in flips {
            let i = at.index(glb.len());
            glb[i] = byte;
        }
        let _ = Tile::from_glb(&glb);
    }

    /// Flips in the binary chunk only: the JSON stays valid, so the loader
    /// reads accessors holding NaN, infinities, unordered key times or zero
    /// quaternions. An error or a tile, never a panic; a tile loaded from such
    /// data samples finite poses.
    #[test]
    fn corrupted_key_data_never_panics(flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..16)) {
        let mut glb = FUZZ.with(|f| f.clone());
        let json_len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
        let bin_start = 20 + json_len + 8;
        for (at, byte) in flips {
            let i = bin_start + at.index(glb.len() - bin_start);
            glb[i] = byte;
        }
        if let Ok(tile) = Tile::from_glb(&glb) {
            let mut poses = Poses::new(tile.instance_count());
            for t in [0.0, 2.5, 7.25, 123.4] {
                tile.sample(t, &Placement { offset: [32.0, 16.0], rotation: 1 }, poses.as_mut());
                prop_assert!(poses.x.iter().chain(&poses.y).chain(&poses.heading).all(|v| v.is_finite()));
                prop_assert!(poses.phase.iter().all(|p| (0.0..1.0).contains(p)));
            }
        }
    }

    /// Truncations anywhere: always an error.
    #[test]
    fn truncated_files_are_errors(cut in any::<prop::sample::Index>()) {
        let glb = FUZZ.with(|f| f.clone());
        let cut = cut.index(glb.len());
        prop_assert!(Tile::from_glb(&glb[..cut]).is_err());
    }

    /// Absurd counts, offsets, indices and values in a well-formed container:
    /// an error or a tile, never a panic or a huge allocation.
    #[test]
    fn absurd_numbers_never_panic(
        which in 0usize..1500,
        value in prop::sample::select(vec![
            "-1", "0", "1", "3", "4294967295", "4294967296", "18446744073709551615", "1e308", "-1e308",
            "1e-320", "99999999", "2147483647", "65536", "0.5", "NaN"
        ]),
    ) {
        let glb = FUZZ.with(|f| f.clone());
        let (json, bin) = split(&glb);
        let text = replace_number(&serde_json::to_string(&json).unwrap(), which, value);
        let mut j = text.into_bytes();
        while !j.len().is_multiple_of(4) { j.push(b' '); }
        let total = 12 + 8 + j.len() + 8 + bin.len();
        let mut out = Vec::new();
        out.extend(b"glTF");
        out.extend(2u32.to_le_bytes());
        out.extend((total as u32).to_le_bytes());
        out.extend((j.len() as u32).to_le_bytes());
        out.extend(b"JSON");
        out.extend(j);
        out.extend((bin.len() as u32).to_le_bytes());
        out.extend(b"BIN\0");
        out.extend(bin);
        let _ = Tile::from_glb(&out);
    }
}

thread_local! {
    static FUZZ: Vec<u8> = fuzz_seed();
}

#[test]
#[ignore = "prints how fuzzed inputs fail; run with --ignored --nocapture"]
fn fuzz_outcomes() {
    let seed = fuzz_seed();
    let (json, bin) = split(&seed);
    let text = serde_json::to_string(&json).unwrap();
    let numbers = (0..).take_while(|&n| replace_number(&text, n, "777777.5") != text).count();
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for n in 0..numbers {
        for v in ["-1", "4294967296", "1e308", "99999999", "3"] {
            let t = replace_number(&text, n, v);
            let out = pack(&serde_json::from_str(&t).unwrap_or(Value::Null), &bin);
            let kind = match Tile::from_glb(&out) {
                Ok(_) => "ok".to_string(),
                Err(e) => format!("{:?}", e).split([' ', '{', '(']).next().unwrap().to_string(),
            };
            *counts.entry(kind).or_default() += 1;
        }
    }
    println!("{numbers} numbers in the JSON; outcomes {counts:?}");
}
