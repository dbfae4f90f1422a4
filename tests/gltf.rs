//! GLB tests on real bakes: every shipped patch is baked, written, read back
//! with the `gltf` crate and played: instance positions must follow the baked
//! paths; the Khronos validator must report nothing.

use crowdpatch::{Silent, bake, load_patch};
use crowdpatch_gltf::{GlbOptions, write_glb};
use crowdpatch_runtime::format::SceneExtras;
use gltf::animation::util::ReadOutputs;
use std::collections::BTreeMap;
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

/// Translation and scale keyframes of every animated node.
type Tracks = BTreeMap<usize, (Vec<f32>, Vec<[f32; 3]>, Vec<f32>, Vec<[f32; 3]>)>;

fn tracks(glb: &[u8]) -> (gltf::Gltf, Tracks) {
    let g = gltf::Gltf::from_slice(glb).unwrap();
    let blob = g.blob.clone().unwrap();
    let mut out: Tracks = BTreeMap::new();
    for anim in g.animations() {
        assert_eq!(anim.name(), Some("loop"));
        for ch in anim.channels() {
            let reader = ch.reader(|_| Some(&blob[..]));
            let times: Vec<f32> = reader.read_inputs().unwrap().collect();
            let e = out.entry(ch.target().node().index()).or_default();
            match reader.read_outputs().unwrap() {
                ReadOutputs::Translations(t) => {
                    e.0 = times;
                    e.1 = t.collect();
                }
                ReadOutputs::Scales(s) => {
                    e.2 = times;
                    e.3 = s.collect();
                }
                _ => {}
            }
        }
    }
    (g, out)
}

fn lerp(times: &[f32], values: &[[f32; 3]], tau: f64) -> [f64; 3] {
    let i = times.partition_point(|&t| f64::from(t) <= tau);
    if i == 0 {
        return values[0].map(f64::from);
    }
    if i >= times.len() {
        return values[times.len() - 1].map(f64::from);
    }
    let (a, b) = (f64::from(times[i - 1]), f64::from(times[i]));
    let u = (tau - a) / (b - a);
    std::array::from_fn(|c| f64::from(values[i - 1][c]) + (f64::from(values[i][c]) - f64::from(values[i - 1][c])) * u)
}

fn step(times: &[f32], values: &[[f32; 3]], tau: f64) -> f64 {
    let i = times.partition_point(|&t| f64::from(t) <= tau).max(1);
    f64::from(values[i - 1][0])
}

#[test]
fn shipped_bakes_play_back_their_paths() {
    for file in shipped() {
        let patch = load_patch(&file).unwrap();
        let b = bake(&patch, &mut Silent).unwrap();
        let baked = b.baked();
        let glb = write_glb(&baked, Some(&b.metrics.to_json()), &GlbOptions::default()).unwrap();
        let (g, tracks) = tracks(&glb);
        let record: serde_json::Value = {
            let raw = g.scenes().next().unwrap().extras().as_ref().unwrap().get().to_string();
            let v: serde_json::Value = serde_json::from_str(&raw).unwrap();
            v["crowdpatch"].clone()
        };
        let extras: SceneExtras = serde_json::from_value(record.clone()).unwrap();
        assert_eq!(extras.header.size, patch.header.size);
        assert_eq!(extras.header.period, patch.header.period);
        assert_eq!(extras.agents.len(), baked.agents.len());
        // The bake's figures ride along in the record, which the runtime's
        // reader skips.
        let metrics: crowdpatch::metrics::Metrics = serde_json::from_value(record["metrics"].clone()).unwrap();
        assert_eq!(metrics, b.metrics);
        // The baked patterns carry the velocities used.
        for c in patch.crossings() {
            let side = &extras.patterns[c.side];
            let p = match c.direction {
                crowdpatch::model::Direction::Entry => side.entries[c.index],
                crowdpatch::model::Direction::Exit => side.exits[c.index],
            };
            assert_eq!((p.s, p.t, p.velocity), (c.s, c.t, [c.velocity.x, c.velocity.y]));
        }
        let pi = patch.header.period;
        let mut checked = 0;
        for (agent, rec) in baked.agents.iter().zip(&extras.agents) {
            // The first instance also shows the last window where the last
            // node repeats the first: window k_last before the play time
            // the path starts in the first window, window k₀ from it on.
            let n = rec.nodes.len();
            let merged = n >= 2 && rec.nodes[0] == rec.nodes[n - 1];
            assert_eq!(merged, agent.last_on_first(pi), "{}", file.display());
            for (k_off, &node) in rec.nodes.iter().enumerate().take(n - usize::from(merged)) {
                let k = rec.first_instance + k_off as i64;
                let (tt, tv, st, sv) = &tracks[&node];
                for s in 0..=200 {
                    let tau = pi * s as f64 / 200.0;
                    let split = agent.start() - k as f64 * pi;
                    let k = if merged && k_off == 0 && tau < split { rec.first_instance + n as i64 - 1 } else { k };
                    let t = tau + k as f64 * pi;
                    let visible = step(st, sv, tau) > 0.5;
                    match agent.sample(t) {
                        Some((p, _)) if t < agent.end() - 1e-3 && t > agent.start() + 1e-3 => {
                            assert!(visible, "{}: agent node {node} hidden at τ={tau}", file.display());
                            let q = lerp(tt, tv, tau);
                            // Patch (x, y) ↦ glTF (x, 0, −y); f32 keys.
                            let err = ((q[0] - p[0]).powi(2) + q[1].powi(2) + (q[2] + p[1]).powi(2)).sqrt();
                            assert!(err < 1e-3, "{}: node {node} τ={tau}: {q:?} vs {p:?}", file.display());
                            checked += 1;
                        }
                        None => {
                            assert!(!visible, "{}: node {node} visible at τ={tau} outside its interval", file.display())
                        }
                        _ => {}
                    }
                }
            }
        }
        assert!(checked > 100, "{}: too few samples compared", file.display());
    }
}

/// The Khronos glTF Validator on every shipped bake: 0 errors, 0 warnings.
/// Needs `npm ci` in tools/gltf-validator (CI runs it); skipped otherwise.
#[test]
fn khronos_validator_accepts_every_shipped_bake() {
    let tool = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/gltf-validator");
    if !tool.join("node_modules/gltf-validator").is_dir() {
        println!("SKIPPED: the glTF validator is not installed; run `npm ci` in {}", tool.display());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for file in shipped() {
        let b = bake(&load_patch(&file).unwrap(), &mut Silent).unwrap();
        let out = dir.path().join(format!("{}.glb", crowdpatch::document::file_stem(&file)));
        std::fs::write(&out, write_glb(&b.baked(), Some(&b.metrics.to_json()), &GlbOptions::default()).unwrap())
            .unwrap();
        files.push(out);
    }
    let out = std::process::Command::new("node").arg(tool.join("validate.js")).args(&files).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "validator: {stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    for line in stdout.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!((v["errors"].as_u64(), v["warnings"].as_u64()), (Some(0), Some(0)), "{line}");
    }
    assert_eq!(stdout.lines().count(), files.len());
}
