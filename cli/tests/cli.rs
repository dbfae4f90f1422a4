//! CLI tests: run the real `crowdpatch` binary in fresh temporary directories
//! and check exit codes, outputs and messages.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_crowdpatch"))
}

fn repo() -> PathBuf {
    // The repository root: cli/ is one level down.
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn run(args: &[&str], cwd: &Path) -> Output {
    bin().args(args).current_dir(cwd).output().expect("the binary runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn bake_writes_glb_report_and_preview() {
    let dir = tempfile::tempdir().unwrap();
    let patch = repo().join("patches/figure7.patch.json");
    let out = run(
        &["bake", patch.to_str().unwrap(), "-o", "f7.glb", "--report", "f7.report.json", "--preview", "f7.png"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let glb = std::fs::read(dir.path().join("f7.glb")).unwrap();
    assert_eq!(&glb[0..4], b"glTF");
    let png = std::fs::read(dir.path().join("f7.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("f7.report.json")).unwrap()).unwrap();
    assert_eq!(report["converged"], true);
    assert!(report["iterations"].is_u64());
    for key in
        ["min_separation", "obstacle_clearance", "collisions", "boundary_error", "speed", "turn_rate", "coverage"]
    {
        assert!(report["metrics"].get(key).is_some(), "metrics.{key} missing: {report}");
    }
    assert!(report["metrics"]["min_separation"].as_f64().unwrap() >= 0.6);
    assert!(report["metrics"]["boundary_error"]["position"].as_f64().unwrap() <= 1e-6);
    let matching = report["matching"].as_array().unwrap();
    assert_eq!(matching.len(), 10);
    for m in matching {
        for end in ["entry", "exit"] {
            assert!(m[end]["side"].is_string() && m[end]["s"].is_f64() && m[end]["t"].is_f64(), "{m}");
        }
        assert!(m["score"].is_f64());
    }
    for stage in ["matching_ms", "initial_paths_ms", "collision_removal_ms", "smoothing_ms", "total_ms"] {
        assert!(report["timings"][stage].is_f64(), "timings.{stage}");
    }
    // Nothing else left behind (no temporary files).
    let mut names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, ["f7.glb", "f7.png", "f7.report.json"]);
}

#[test]
fn the_same_seed_gives_byte_identical_glbs() {
    let dir = tempfile::tempdir().unwrap();
    let patch = repo().join("patches/dense.patch.json");
    for name in ["a.glb", "b.glb"] {
        let out = run(&["bake", patch.to_str().unwrap(), "-o", name, "--seed", "42"], dir.path());
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    let out = run(&["bake", patch.to_str().unwrap(), "-o", "c.glb", "--seed", "43"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let read = |n: &str| std::fs::read(dir.path().join(n)).unwrap();
    assert_eq!(read("a.glb"), read("b.glb"));
    assert_ne!(read("a.glb"), read("c.glb"));
}

#[test]
fn a_batch_bakes_every_shipped_patch_into_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let patches: Vec<String> = std::fs::read_dir(repo().join("patches"))
        .unwrap()
        .map(|e| e.unwrap().path().to_string_lossy().into_owned())
        .filter(|p| p.ends_with(".patch.json"))
        .collect();
    let mut args = vec!["bake".to_string()];
    args.extend(patches.iter().cloned());
    args.extend(["-o", "out", "--report", "out", "--matching", "optimal"].map(String::from));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(&refs, dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for p in &patches {
        let stem = crowdpatch::document::file_stem(Path::new(p));
        assert!(dir.path().join(format!("out/{stem}.glb")).is_file(), "{stem}.glb");
        let report: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.path().join(format!("out/{stem}.report.json"))).unwrap())
                .unwrap();
        assert_eq!(report["matching_mode"], "optimal");
        // Only figure7 does not tile with itself: said on the command line
        // and in the report's notes.
        let note = "does not tile with itself";
        let noted = report["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().starts_with(note));
        assert_eq!(noted, stem == "figure7", "{stem}: {}", report["notes"]);
        let said = text(&out.stderr).lines().any(|l| l.contains(&format!("note: {p}: {note}")));
        assert_eq!(said, stem == "figure7", "{stem}: {}", text(&out.stderr));
    }
}

#[test]
fn remaining_collisions_exit_1_and_still_write_the_glb() {
    let dir = tempfile::tempdir().unwrap();
    // The dense patch with a single iteration allowed and no smoothing.
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(repo().join("patches/dense.patch.json")).unwrap()).unwrap();
    doc["solver"] = serde_json::json!({"max_iterations": 1, "smoothing": false});
    std::fs::write(dir.path().join("stuck.patch.json"), doc.to_string()).unwrap();
    let out = run(&["bake", "stuck.patch.json", "-o", "stuck.glb", "--report", "r.json"], dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("COLLISION"), "{}", text(&out.stderr));
    assert!(dir.path().join("stuck.glb").is_file());
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.path().join("r.json")).unwrap()).unwrap();
    assert_eq!(report["converged"], false);
    let first = &report["remaining_collisions"][0];
    assert!(first["agent"].is_u64() && first["time"].is_f64() && first["position"].is_array(), "{report}");
}

/// Malformed documents of many kinds: each must exit 2, name the offending
/// field (or file), never panic, and write nothing.
#[test]
fn malformed_documents_exit_2_and_name_the_field() {
    let base = r#""format":1,"size":16,"period":10"#;
    let cases: Vec<(&str, String, &str)> = vec![
        ("not json", "this is not json".into(), "expected"),
        ("empty file", String::new(), "EOF"),
        ("missing size", r#"{"format":1,"period":10}"#.into(), "size"),
        ("wrong type", format!(r#"{{{base},"agent_radius":"big"}}"#), "agent_radius"),
        ("unknown top-level field", format!(r#"{{{base},"colour":1}}"#), "colour"),
        (
            "unknown nested field",
            format!(
                r#"{{{base},"sides":{{"east":{{"entries":[{{"s":1,"t":1,"sped":1}}],"exits":[{{"s":3,"t":5}}]}}}}}}"#
            ),
            "sides.east.entries[0].sped",
        ),
        (
            "t out of range",
            format!(r#"{{{base},"sides":{{"east":{{"entries":[{{"s":2,"t":10.2}}],"exits":[{{"s":9,"t":1}}]}}}}}}"#),
            "sides.east.entries[0].t = 10.2 is not in [0, 10)",
        ),
        (
            "s out of range",
            format!(r#"{{{base},"sides":{{"south":{{"entries":[{{"s":-1,"t":1}}],"exits":[{{"s":9,"t":1}}]}}}}}}"#),
            "sides.south.entries[0].s",
        ),
        (
            "entry velocity outward",
            format!(
                r#"{{{base},"sides":{{"south":{{"entries":[{{"s":3,"t":1,"velocity":[0,-1]}}],"exits":[{{"s":9,"t":1}}]}}}}}}"#
            ),
            "sides.south.entries[0].velocity",
        ),
        (
            "exit velocity inward",
            format!(
                r#"{{{base},"sides":{{"west":{{"entries":[{{"s":3,"t":1}}],"exits":[{{"s":9,"t":1,"velocity":[1,0]}}]}}}}}}"#
            ),
            "sides.west.exits[0].velocity",
        ),
        (
            "parity",
            format!(
                r#"{{{base},"sides":{{"north":{{"entries":[{{"s":3,"t":1}},{{"s":9,"t":4}}],"exits":[{{"s":12,"t":7}}]}}}}}}"#
            ),
            "parity",
        ),
        (
            "absurd period",
            r#"{"format":1,"size":16,"period":1e308,"sides":{"south":{"entries":[{"s":3,"t":1}],"exits":[{"s":9,"t":5}]}}}"#
                .into(),
            "period = 100000000",
        ),
        ("tiny period", r#"{"format":1,"size":16,"period":1e-9}"#.into(), "period = 0.000000001 is not in [1, 3600]"),
        ("huge size", r#"{"format":1,"size":1e12,"period":10}"#.into(), "size = 1000000000000 is not in [1, 1000]"),
        ("comfort speed", format!(r#"{{{base},"comfort_speed":1e-200}}"#), "comfort_speed"),
        (
            "boundary speed",
            format!(
                r#"{{{base},"sides":{{"south":{{"entries":[{{"s":3,"t":1,"velocity":[0,1e9]}}],"exits":[{{"s":9,"t":5}}]}}}}}}"#
            ),
            "sides.south.entries[0].velocity = [0, 1000000000] is faster than 10 m/s",
        ),
        (
            "obstacle outside",
            format!(r#"{{{base},"obstacles":[{{"circle":{{"center":[15.5,8],"radius":1}}}}]}}"#),
            "obstacles[0]",
        ),
        (
            "obstacle radius",
            format!(r#"{{{base},"obstacles":[{{"circle":{{"center":[8,8],"radius":-1}}}}]}}"#),
            "obstacles[0].circle.radius",
        ),
        (
            "self-intersecting polygon",
            format!(r#"{{{base},"obstacles":[{{"polygon":[[2,2],[6,6],[6,2],[2,6]]}}]}}"#),
            "obstacles[0].polygon",
        ),
        (
            "polygon too short",
            format!(r#"{{{base},"obstacles":[{{"polygon":[[2,2],[6,6]]}}]}}"#),
            "obstacles[0].polygon",
        ),
        (
            "obstacle covers a boundary point",
            format!(
                r#"{{{base},"sides":{{"south":{{"entries":[{{"s":8,"t":1}}]}},"north":{{"exits":[{{"s":8,"t":9}}]}}}},"obstacles":[{{"circle":{{"center":[8,1],"radius":0.8}}}}]}}"#
            ),
            "covers the crossing at sides.south.entries[0]",
        ),
        (
            "inseparable points",
            format!(
                r#"{{{base},"sides":{{"south":{{"entries":[{{"s":8,"t":1}},{{"s":8.3,"t":1}}],"exits":[{{"s":2,"t":6}},{{"s":14,"t":6}}]}}}}}}"#
            ),
            "too close to be separable",
        ),
        ("bad format version", r#"{"format":2,"size":16,"period":10}"#.into(), "format"),
        ("negative size", r#"{"format":1,"size":-16,"period":10}"#.into(), "size"),
        ("zero period", r#"{"format":1,"size":16,"period":0}"#.into(), "period"),
        ("radius too large", format!(r#"{{{base},"agent_radius":5}}"#), "agent_radius"),
        ("huge number", r#"{"format":1,"size":1e999,"period":10}"#.into(), "size"),
        (
            "missing pattern file",
            format!(r#"{{{base},"sides":{{"east":{{"pattern":"nope.pattern.json"}}}}}}"#),
            "sides.east.pattern",
        ),
        (
            "pattern and inline at once",
            format!(r#"{{{base},"sides":{{"east":{{"pattern":"p.pattern.json","entries":[]}}}}}}"#),
            "sides.east.entries",
        ),
        (
            "endogenous waypoint outside",
            format!(r#"{{{base},"endogenous":[{{"waypoints":[{{"position":[0.1,8],"t":1}}]}}]}}"#),
            "endogenous[0].waypoints[0].position",
        ),
        (
            "endogenous times not increasing",
            format!(
                r#"{{{base},"endogenous":[{{"waypoints":[{{"position":[4,8],"t":3}},{{"position":[8,8],"t":2}}]}}]}}"#
            ),
            "endogenous[0].waypoints[1].t",
        ),
        ("solver option", format!(r#"{{{base},"solver":{{"max_iterations":0}}}}"#), "solver.max_iterations"),
        ("solver unknown option", format!(r#"{{{base},"solver":{{"iterations":10}}}}"#), "solver.iterations"),
        ("matching mode", format!(r#"{{{base},"solver":{{"matching":"greedy"}}}}"#), "solver.matching"),
        ("deep nesting", "[".repeat(100_000), ""),
    ];
    let dir = tempfile::tempdir().unwrap();
    // A valid pattern file for the "pattern and inline" case.
    std::fs::write(dir.path().join("p.pattern.json"), r#"{"format":1,"length":16,"period":10}"#).unwrap();
    for (what, json, needle) in cases {
        let file = dir.path().join("bad.patch.json");
        std::fs::write(&file, &json).unwrap();
        let out = run(&["bake", "bad.patch.json", "-o", "bad.glb"], dir.path());
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        assert!(!err.contains("panicked"), "{what}: {err}");
        assert!(err.contains("bad.patch.json"), "{what}: the message names the file: {err}");
        assert!(err.contains(needle), "{what}: expected {needle:?} in {err}");
        assert!(!dir.path().join("bad.glb").exists(), "{what}: nothing is written");
        let v = run(&["validate", "bad.patch.json"], dir.path());
        assert_eq!(v.status.code(), Some(2), "{what}: validate");
    }
}

#[test]
fn every_problem_is_listed_not_just_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let json = r#"{"format":1,"size":16,"period":10,"colour":1,"shade":2,
        "sides":{"east":{"entries":[{"s":20,"t":11}],"exits":[]}},
        "obstacles":[{"circle":{"center":[8,8],"radius":0}}]}"#;
    std::fs::write(dir.path().join("many.patch.json"), json).unwrap();
    let out = run(&["validate", "many.patch.json"], dir.path());
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    for needle in ["colour", "shade"] {
        assert!(err.contains(needle), "{needle} in {err}");
    }
    // Unknown fields stop nothing else from being reported once they are fixed.
    let json = r#"{"format":1,"size":16,"period":10,
        "sides":{"east":{"entries":[{"s":20,"t":11}],"exits":[]}},
        "obstacles":[{"circle":{"center":[8,8],"radius":0}}]}"#;
    std::fs::write(dir.path().join("many.patch.json"), json).unwrap();
    let err = text(&run(&["validate", "many.patch.json"], dir.path()).stderr);
    for needle in ["sides.east.entries[0].s", "sides.east.entries[0].t", "parity", "obstacles[0].circle.radius"] {
        assert!(err.contains(needle), "{needle} in {err}");
    }
}

#[test]
fn validate_accepts_the_shipped_documents() {
    let mut files: Vec<String> = Vec::new();
    for dir in ["patches", "patterns"] {
        for e in std::fs::read_dir(repo().join(dir)).unwrap() {
            files.push(e.unwrap().path().to_string_lossy().into_owned());
        }
    }
    let mut args = vec!["validate"];
    args.extend(files.iter().map(String::as_str));
    let out = run(&args, &repo());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).lines().count(), files.len());
}

#[test]
fn every_command_has_help_and_bad_arguments_exit_2() {
    for args in [&["--help"][..], &["bake", "--help"], &["validate", "--help"]] {
        let out = run(args, &repo());
        assert_eq!(out.status.code(), Some(0));
        assert!(text(&out.stdout).contains("Usage"), "{args:?}");
    }
    let out = run(&["bake", "x.patch.json"], &repo());
    assert_eq!(out.status.code(), Some(2), "missing -o");
    let out = run(&["frobnicate"], &repo());
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn key_error_bounds_trade_size_for_fidelity_and_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let patch = repo().join("patches/figure7.patch.json");
    let bake = |name: &str, extra: &[&str]| {
        let mut args = vec!["bake", patch.to_str().unwrap(), "-q", "-o", name, "--report", "r.json"];
        args.extend_from_slice(extra);
        let out = run(&args, dir.path());
        assert_eq!(out.status.code(), Some(0), "{extra:?}: {}", text(&out.stderr));
        let report: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.path().join("r.json")).unwrap()).unwrap();
        (std::fs::metadata(dir.path().join(name)).unwrap().len(), report["metrics"]["animation"].clone())
    };
    let (default_bytes, default) = bake("d.glb", &[]);
    let loose = ["--key-position-error", "5", "--key-rotation-error", "2", "--key-contact-error", "1"];
    let (loose_bytes, looser) = bake("l.glb", &loose);
    let (all_bytes, all) = bake("a.glb", &["--every-sample"]);
    // Each file holds the bounds it was asked for, and reports them.
    for (a, bounds) in [(&default, [1e-3, 0.5f64.to_radians(), 3e-4]), (&looser, [5e-3, 2f64.to_radians(), 1e-3])] {
        let t = &a["key_tolerance"];
        for (k, (name, bound)) in ["position", "rotation", "contact"].iter().zip(bounds).enumerate() {
            let achieved = a[["key_position_error", "key_rotation_error", "key_contact_error"][k]].as_f64().unwrap();
            assert!((t[name].as_f64().unwrap() - bound).abs() < 1e-12, "{name}: {a}");
            assert!(achieved > 0.0 && achieved <= bound + 1e-9, "{name}: {achieved} > {bound}");
        }
    }
    // Looser bounds keep fewer keys in a smaller file; every sample keeps
    // the most, exactly.
    let keys = |a: &serde_json::Value| a["joint_keys"].as_u64().unwrap();
    assert!(keys(&looser) * 10 < keys(&default) * 8, "{} vs {} keys", keys(&looser), keys(&default));
    assert!(loose_bytes < default_bytes && default_bytes < all_bytes, "{loose_bytes} {default_bytes} {all_bytes}");
    assert!(keys(&all) > 2 * keys(&default));
    assert!(all["key_tolerance"].is_null() && all["key_position_error"].as_f64() == Some(0.0), "{all}");
    // Bounds out of range or together with --every-sample are refused,
    // naming the flag, and nothing is written.
    for bad in [
        &["--key-position-error", "0.2"][..],
        &["--key-rotation-error", "6"],
        &["--key-position-error", "10.5"],
        &["--key-contact-error", "nan"],
        &["--every-sample", "--key-contact-error", "1"],
    ] {
        let mut args = vec!["bake", patch.to_str().unwrap(), "-o", "bad.glb"];
        args.extend_from_slice(bad);
        let out = run(&args, dir.path());
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        let flag = bad.iter().rev().find(|a| a.starts_with("--")).unwrap();
        assert!(text(&out.stderr).contains(flag), "{bad:?}: {}", text(&out.stderr));
        assert!(!dir.path().join("bad.glb").exists());
    }
}

#[test]
fn several_patches_need_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let a = repo().join("patches/figure7.patch.json");
    let b = repo().join("patches/plaza.patch.json");
    let out = run(&["bake", a.to_str().unwrap(), b.to_str().unwrap(), "-o", "x.glb"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("directory"), "{}", text(&out.stderr));
}

/// Standing people of a patch document: its endogenous agents with one waypoint.
fn standing_people(doc: &serde_json::Value) -> usize {
    doc["endogenous"]
        .as_array()
        .map_or(0, |a| a.iter().filter(|e| e["waypoints"].as_array().unwrap().len() == 1).count())
}

#[test]
fn pattern_generate_makes_a_flow_that_turns_a_corner_issue_33() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let args = ["pattern", "generate", "--size", "12", "--density", "0.03", "--standing", "0"];
    let out = run(&[&args[..], &["--flow", "southwest=1", "-o", "c.patch.json"]].concat(), d);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // Heading south-west: in at east and north, out at west and south.
    let c: serde_json::Value = serde_json::from_slice(&std::fs::read(d.join("c.patch.json")).unwrap()).unwrap();
    for (side, incoming) in [("east", true), ("north", true), ("west", false), ("south", false)] {
        let count = |field: &str| c["sides"][side][field].as_array().map_or(0, Vec::len);
        assert_eq!((count("entries") > 0, count("exits") > 0), (incoming, !incoming), "{side}: {c}");
    }
    let out = run(&["validate", "c.patch.json"], d);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let said = text(&[out.stdout, out.stderr].concat());
    assert!(said.contains("c.patch.json: ok:"), "{said}");
    // A heading that is neither a side nor a diagonal is named.
    let out = run(&[&args[..], &["--flow", "nordeast=1", "-o", "x.patch.json"]].concat(), d);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("\"nordeast\" is not north, east, south, west, northeast"),
        "{}",
        text(&out.stderr)
    );
    assert!(!d.join("x.patch.json").exists());
}

#[test]
fn pattern_stand_adds_standing_groups_and_generate_has_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let plaza = repo().join("patches/plaza.patch.json");
    std::fs::copy(&plaza, d.join("plaza.patch.json")).unwrap();
    let before: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("plaza.patch.json")).unwrap()).unwrap();
    // A share that the plaza already has adds nobody; a larger one adds groups.
    let out =
        run(&["pattern", "stand", "plaza.patch.json", "--share", "0.4", "--seed", "3", "-o", "more.patch.json"], d);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let more: serde_json::Value = serde_json::from_slice(&std::fs::read(d.join("more.patch.json")).unwrap()).unwrap();
    assert!(standing_people(&more) >= standing_people(&before) + 2, "{}", text(&out.stderr));
    // The input is never the output; a bad share is refused; nothing written.
    let out = run(&["pattern", "stand", "plaza.patch.json", "-o", "plaza.patch.json"], d);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("would overwrite the input"), "{}", text(&out.stderr));
    let out = run(&["pattern", "stand", "plaza.patch.json", "--share", "1.5", "-o", "bad.patch.json"], d);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("standing share = 1.5"), "{}", text(&out.stderr));
    assert!(!d.join("bad.patch.json").exists());
    assert_eq!(std::fs::read(d.join("plaza.patch.json")).unwrap(), std::fs::read(&plaza).unwrap());
    // Generated patches stand a fifth by default, none with --standing 0.
    for (standing, some) in [("0.2", true), ("0", false)] {
        let out = run(&["pattern", "generate", "--density", "0.06", "--standing", standing, "-o", "g.patch.json"], d);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let g: serde_json::Value = serde_json::from_slice(&std::fs::read(d.join("g.patch.json")).unwrap()).unwrap();
        assert_eq!(standing_people(&g) > 0, some, "--standing {standing}");
        // The result bakes collision-free.
        let out = run(&["bake", "g.patch.json", "-o", "g.glb", "--animation", "none", "--quiet"], d);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
}

/// Issue 31: `realism --write-group-reference` writes the walking groups'
/// table of scene folders (obsmat.txt, groups.txt), and names the line of a
/// group that lists an unknown walker.
#[test]
fn realism_writes_the_group_reference_of_scene_folders() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("park");
    std::fs::create_dir(&scene).unwrap();
    // Walkers 1 and 2 walk +y abreast 0.75 m apart at 1.25 m/s, 3 alone at
    // 1.5 m/s; frames every 10 (0.4 s); `frame id x z y vx vz vy`.
    let mut obsmat = String::new();
    for k in 0..6 {
        let (f, y) = (10 * k, 0.5 * k as f64);
        obsmat +=
            &format!("{f} 1 1.0 0 {y} 0 0 1.25\n{f} 2 1.75 0 {y} 0 0 1.25\n{f} 3 6 0 {} 0 0 1.5\n", 0.6 * k as f64);
    }
    std::fs::write(scene.join("obsmat.txt"), obsmat).unwrap();
    std::fs::write(scene.join("groups.txt"), "1 2\n").unwrap();
    let out = run(&["realism", "--write-group-reference", "groups.json", "park"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let table: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("groups.json")).unwrap()).unwrap();
    let s = &table["scenes"][0];
    assert_eq!(s["name"], "park");
    assert_eq!(s["stats"]["walkers_in_groups"], 2);
    assert!((s["stats"]["pairs"]["spacing"]["p50"].as_f64().unwrap() - 0.75).abs() < 1e-9, "{s}");
    assert!((s["stats"]["speed_ratio"].as_f64().unwrap() - 1.25 / 1.5).abs() < 1e-9, "{s}");
    assert_eq!(s["stats"]["triads"]["spacing"], serde_json::Value::Null);
    std::fs::write(scene.join("groups.txt"), "1 2\n3 9\n").unwrap();
    let out = run(&["realism", "--write-group-reference", "again.json", "park"], dir.path());
    assert_ne!(out.status.code(), Some(0));
    let err = text(&out.stderr);
    assert!(err.contains("groups.txt:2") && err.contains("id 9"), "{err}");
    assert!(!dir.path().join("again.json").exists());
}
