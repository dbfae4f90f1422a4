//! Characters users bring: the rigged humanoids of `../shared/data/characters`
//! (several conventions: Blender `.L/.R`, kebab-case, `…L/…R` suffixes, feet
//! hanging from the root, legs without knees, an animation file without a
//! mesh) through the real `crowdpatch` binary. SKIPPED when the data is absent.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn shared(rel: &str) -> Option<PathBuf> {
    let p = repo().join("../shared/data").join(rel);
    p.exists().then_some(p)
}

fn run(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_crowdpatch")).args(args).current_dir(cwd).output().expect("the binary runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The walking characters of the shared data.
const WALKERS: [&str; 5] = [
    "KayKit_Knight.glb",
    "KayKit_Skeleton_Rogue.glb",
    "Kenney_character-male-b.glb",
    "Quaternius_RPG_Warrior.gltf",
    "RobotExpressive.glb",
];

#[test]
fn every_shared_humanoid_is_mapped_and_can_walk_and_an_animation_file_is_refused_with_what_to_pass() {
    let Some(dir) = shared("characters") else {
        println!("SKIPPED: ../shared/data/characters is absent");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    for name in WALKERS {
        let file = dir.join(name);
        let out = run(&["character", "inspect", file.to_str().unwrap(), "--json"], tmp.path());
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json["can_walk"], true, "{name}");
        // Both legs mapped: hips, upper legs, feet (Kenney's legs are one
        // block each, no knee and no foot joint: the leg is its own foot).
        let bones: Vec<&str> = json["mapping"].as_array().unwrap().iter().filter_map(|m| m["bone"].as_str()).collect();
        let feet: &[&str] = if name.starts_with("Kenney") { &[] } else { &["leftFoot", "rightFoot"] };
        for b in ["hips", "leftUpperLeg", "rightUpperLeg"].iter().chain(feet) {
            assert!(bones.contains(b), "{name}: {b} not mapped ({bones:?})");
        }
    }
    // An animation file (skeleton and clips, no mesh): refused, saying what
    // to do with it.
    let anim = dir.join("KayKit_Rig_Medium_MovementBasic_nomesh.glb");
    let out = run(&["character", "inspect", anim.to_str().unwrap()], tmp.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--animation-source"), "{}", text(&out.stderr));
}

#[test]
fn shared_humanoids_bake_figure7_the_avenue_and_the_park_within_the_quality_gate() {
    let Some(dir) = shared("characters") else {
        println!("SKIPPED: ../shared/data/characters is absent");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    // The park's loops turn through corners of 140°: a long step round one
    // left a short leg's planted foot out of reach.
    for (name, patch) in WALKERS.iter().flat_map(|n| ["figure7", "avenue", "park"].map(|p| (n, p))) {
        let file = dir.join(name);
        let glb = format!("{name}-{patch}.glb");
        let report = format!("{name}-{patch}.report.json");
        let patch_name = patch;
        let patch = repo().join(format!("patches/{patch}.patch.json"));
        let out = run(
            &["bake", patch.to_str().unwrap(), "--character", file.to_str().unwrap(), "-o", &glb, "--report", &report],
            tmp.path(),
        );
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(tmp.path().join(&report)).unwrap()).unwrap();
        let gate = &r["animation_gate"];
        let violations: Vec<&str> =
            gate["violations"].as_array().unwrap().iter().map(|v| v["metric"].as_str().unwrap()).collect();
        assert_eq!(out.status.code(), Some(0), "{name} on {patch_name}: {}", text(&out.stderr));
        assert!(violations.is_empty(), "{name}: {gate}");
        // The figures the gate judged, within its limits.
        let limit = |k: &str| gate["limits"][k].as_f64().unwrap();
        assert!(gate["stance_drift_p95"].as_f64().unwrap() <= limit("stance_drift_p95"), "{name}");
        assert!(gate["stance_drift_max"]["value"].as_f64().unwrap() <= limit("stance_drift_max"), "{name}");
        assert!(gate["lowest_vertex_median"].as_f64().unwrap().abs() <= limit("lowest_vertex"), "{name}");
        // And, tighter than the gate, what a player should see of the
        // feet, issue 29's bar: heels and balls planted to under a
        // centimetre at the 95th percentile, under 2 % of contacts
        // drifting over 2 cm, the lowest vertex within a centimetre of
        // the floor (the worst so far: the UE mannequin's 5.1 mm on the
        // park, the Quaternius warrior's 0.7 % there, KayKit's +5.6 mm).
        // Kenney's legs, one block each without knee or foot joint, walk
        // as a compass rocking on their soles (`character::rigid`).
        let (p95, over) = (gate["stance_drift_p95"].as_f64().unwrap(), gate["stance_drift_over_2cm"].as_f64().unwrap());
        assert!(p95 < 0.01 && over < 0.02, "{name} on {patch_name}: p95 {p95}, {over} over 2 cm");
        assert!(gate["lowest_vertex_median"].as_f64().unwrap().abs() <= 0.01, "{name} on {patch_name}");
        assert!(gate["step_length_min"]["value"].as_f64().unwrap() >= -0.19, "{name}");
        assert!(gate["planted_lift_max"]["value"].as_f64().unwrap() <= 0.025, "{name}");
        assert!(std::fs::metadata(tmp.path().join(&glb)).unwrap().len() > 10_000, "{name}");
    }
}

/// Humanoids of other conventions (Unreal mannequin, Rigify metarig with
/// no neck or head names, Mixamo names without a prefix, VRM 0.x).
const OTHER_HUMANOIDS: [&str; 4] =
    ["MML_cylinderman.glb", "OrangeJuiceGames_male_base_mesh.glb", "VALID_Black_M_2_Busi.glb", "Godette_vrm_v4.vrm"];

#[test]
fn issue_29_animals_are_refused_with_exit_2_in_one_sentence_and_every_humanoid_bakes() {
    let Some(dir) = shared("characters") else {
        println!("SKIPPED: ../shared/data/characters is absent");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let patch = repo().join("patches/figure7.patch.json");
    // The wolf (a quadruped): refused by inspect and by bake, saying what
    // was found, nothing written.
    let wolf = dir.join("Quaternius_Wolf.glb");
    for args in [
        vec!["character", "inspect", wolf.to_str().unwrap()],
        vec!["bake", patch.to_str().unwrap(), "--character", wolf.to_str().unwrap(), "-o", "wolf.glb"],
    ] {
        let out = run(&args, tmp.path());
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        let line = err.lines().find(|l| l.contains("is not a two-legged humanoid")).unwrap_or_default();
        assert!(line.contains("Quaternius_Wolf.glb") && line.contains("spine"), "{err}");
        assert_eq!(line.trim_end_matches('.').matches(". ").count(), 0, "one sentence: {line}");
    }
    assert!(!tmp.path().join("wolf.glb").exists());
    // Humanoids of every convention bake, the Rigify metarig with its head
    // and neck taken from the top of its spine chain.
    for name in OTHER_HUMANOIDS {
        let file = dir.join(name);
        let out = run(&["character", "inspect", file.to_str().unwrap(), "--json"], tmp.path());
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let bone =
            |b: &str| json["mapping"].as_array().unwrap().iter().find(|m| m["bone"] == b).map(|m| m["joint"].clone());
        assert!(bone("head").is_some() && bone("hips") != bone("spine"), "{name}: {}", json["mapping"]);
        if name.starts_with("OrangeJuice") {
            assert_eq!(bone("head"), Some("spine.005".into()), "{}", json["mapping"]);
            assert_eq!(bone("neck"), Some("spine.004".into()));
            assert_eq!(bone("chest"), Some("spine.003".into()));
        }
        let glb = format!("{name}.glb");
        let out =
            run(&["bake", patch.to_str().unwrap(), "--character", file.to_str().unwrap(), "-o", &glb], tmp.path());
        // Baked (never refused, exit 2), within the gate.
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
    }
}

#[test]
fn a_mocap_walk_retargeted_onto_every_shared_humanoid_bakes_within_the_gate() {
    // A walk file as `--animation-source` (issue 29, item 3): the 2.3 s
    // Mixamo take, its straightest gait cycle cut out and looped. Before
    // the cycle's arms were looped (Clip::close_loop) a hand crossed the
    // loop in one frame (RobotExpressive's finger at 55–77 m/s, KayKit's
    // hand, Godette's fingers: exit 1), and before the IK left a leg's own
    // end alone a knee jumped 1–4 mm at landings (VALID, the UE mannequin,
    // the Rigify metarig, KayKit: exit 1).
    let (Some(dir), Some(bvh)) = (shared("characters"), shared("mocap/mixamo-walk.bvh")) else {
        println!("SKIPPED: ../shared/data characters or mocap absent");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let patch = repo().join("patches/figure7.patch.json");
    let mut failed = Vec::new();
    for name in WALKERS.iter().chain(&OTHER_HUMANOIDS).filter(|n| !n.starts_with("Kenney")) {
        let glb = format!("{name}-bvh.glb");
        let file = dir.join(name);
        let args = ["bake", patch.to_str().unwrap(), "--character", file.to_str().unwrap(), "--animation-source"];
        let out = run(&[&args[..], &[bvh.to_str().unwrap(), "-o", &glb]].concat(), tmp.path());
        let err = text(&out.stderr);
        println!("{name}: exit {:?}", out.status.code());
        if out.status.code() != Some(0) {
            failed.push(format!("{name}: {err}"));
        } else if !err.contains("retargeted") {
            failed.push(format!("{name}: the notes do not say where the walk comes from: {err}"));
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}
