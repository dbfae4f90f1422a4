//! The Khronos glTF Validator on GLBs of the hand-built patches: no error, no
//! warning, and no information message either.
//!
//! Runs `node tools/gltf-validator/validate.js`; the validator is the npm
//! package pinned in `tools/gltf-validator/package-lock.json`. Without its
//! `node_modules` (run `npm ci` there) the test prints `SKIPPED: …` and passes.
//! Set `CROWDPATCH_GLB_DIR=some/dir` to keep the GLBs it writes.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use crowdpatch_gltf::{GlbOptions, write_glb};

fn validator_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/gltf-validator")
}

#[test]
fn khronos_validator_reports_no_issue() {
    let dir = validator_dir();
    if !dir.join("node_modules/gltf-validator").is_dir() {
        println!(
            "SKIPPED: the Khronos glTF Validator is not installed, run npm ci in tools/gltf-validator ({})",
            dir.display()
        );
        return;
    }
    if Command::new("node").arg("--version").output().is_err() {
        println!("SKIPPED: node is not on PATH; install Node.js and run npm ci in tools/gltf-validator");
        return;
    }

    // CROWDPATCH_GLB_DIR=dir keeps the files there for a look.
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = std::env::var_os("CROWDPATCH_GLB_DIR").map_or_else(|| tmp.path().to_owned(), PathBuf::from);
    std::fs::create_dir_all(&out_dir).unwrap();
    let no_ground = GlbOptions { ground: false, ..GlbOptions::default() };
    let many_sides = GlbOptions { circle_segments: 100, obstacle_height: 3.0, ..GlbOptions::default() };
    let cases = [
        ("full", common::full(), GlbOptions::default()),
        ("full-options", common::full(), many_sides),
        ("loop-only", common::loop_only(), no_ground.clone()),
        ("no-agents", common::no_agents(), GlbOptions::default()),
        ("no-agents-no-ground", common::no_agents(), no_ground.clone()),
        ("empty", common::empty(), GlbOptions::default()),
        ("empty-no-ground", common::empty(), no_ground),
    ];
    let mut files = Vec::new();
    for (name, patch, options) in &cases {
        let path = out_dir.join(format!("{name}.glb"));
        std::fs::write(&path, write_glb(patch, Some(&common::metrics()), options).unwrap()).unwrap();
        files.push(path);
    }

    let run = Command::new("node").arg(dir.join("validate.js")).args(&files).output().expect("node runs");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    println!("{stdout}{stderr}");
    let reports: Vec<serde_json::Value> =
        stdout.lines().map(|l| serde_json::from_str(l).expect("one JSON line per file")).collect();
    assert_eq!(reports.len(), files.len(), "a report per file; stderr: {stderr}");
    for report in &reports {
        for count in ["errors", "warnings", "infos"] {
            assert_eq!(report[count], 0, "{count} in {report}");
        }
        assert_eq!(report["animations"], 1, "one animation in {report}");
    }
    assert!(run.status.success(), "validate.js exit status {:?}", run.status);
}
