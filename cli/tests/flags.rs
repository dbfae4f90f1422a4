//! The flags `bake` and `compose` share are one definition: for a table of
//! animation and export flag sets, the real binary's `bake` (of a small
//! patch) and `compose` (of a two-cell map) both accept or both refuse, and
//! refuse with the same message, exit 2.
//!
//! Accepted sets are judged at the argument-checking stage: both commands
//! are given an output under a regular file, which they refuse after every
//! flag, the character included, was checked, and before any bake. A few
//! capsule sets are then baked and composed for real.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    // The repository root: cli/ is one level down.
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn run(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_crowdpatch")).args(args).current_dir(cwd).output().expect("the binary runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A map of two lane cells side by side, from the shipped patterns.
fn tiny_map(dir: &Path) -> PathBuf {
    let map = dir.join("tiny.map.json");
    let json = serde_json::json!({
        "format": 1, "name": "tiny", "size": 16.0, "period": 10.0, "seed": 3,
        "patterns": repo().join("patterns"),
        "kinds": {"lane": {"density": 0.04}}, "legend": {"-": "lane"}, "grid": ["--"],
    });
    std::fs::write(&map, json.to_string()).unwrap();
    map
}

/// What a flag set should do: be accepted, or be refused with a message
/// whose line holds `needle` (the flag, or the file at fault).
#[derive(Debug, Clone, Copy)]
enum Expect {
    Accepted,
    Refused { needle: &'static str },
}

use Expect::{Accepted, Refused};

/// The table: flag sets and what both commands must do with them. `{dir}`
/// stands for the test's directory (files that exist: `bad.json`, a
/// malformed joint map; `map.json`, a valid one; `bad.glb`, not glTF).
fn table() -> Vec<(Vec<&'static str>, Expect)> {
    let mut rows: Vec<(Vec<&'static str>, Expect)> = vec![
        (vec![], Accepted),
        (vec!["--animation", "none"], Accepted),
        (vec!["--animation", "skeletal"], Accepted),
        (vec!["--animation", "walk"], Refused { needle: "--animation" }),
        // --frame-rate: [1, 240] Hz, refused whatever the animation.
        (vec!["--animation", "skeletal", "--frame-rate", "1"], Accepted),
        (vec!["--animation", "skeletal", "--frame-rate", "240"], Accepted),
        (vec!["--animation", "none", "--frame-rate", "60"], Accepted),
        (vec!["--frame-rate", "0"], Refused { needle: "--frame-rate" }),
        (vec!["--frame-rate", "-1"], Refused { needle: "--frame-rate" }),
        (vec!["--frame-rate", "1000"], Refused { needle: "--frame-rate" }),
        (vec!["--frame-rate", "nan"], Refused { needle: "--frame-rate" }),
        (vec!["--frame-rate", "inf"], Refused { needle: "--frame-rate" }),
        (vec!["--frame-rate", "fast"], Refused { needle: "--frame-rate" }),
        (vec!["--animation", "none", "--frame-rate", "0"], Refused { needle: "--frame-rate" }),
        (vec!["--animation", "skeletal", "--frame-rate", "0.5"], Refused { needle: "--frame-rate" }),
        // --character-height: ≥ 0 m, 0 keeping the file's scale.
        (vec!["--animation", "skeletal", "--character-height", "0"], Accepted),
        (vec!["--animation", "skeletal", "--character-height", "1.9"], Accepted),
        (vec!["--character-height", "-1"], Refused { needle: "--character-height" }),
        (vec!["--character-height", "nan"], Refused { needle: "--character-height" }),
        (vec!["--character-height", "inf"], Refused { needle: "--character-height" }),
        (vec!["--character-height", "tall"], Refused { needle: "--character-height" }),
        // Files a skeletal bake reads.
        (vec!["--animation", "skeletal", "--character", "missing.glb"], Refused { needle: "--character" }),
        (vec!["--animation", "skeletal", "--character", "bad.glb"], Refused { needle: "bad.glb" }),
        (
            vec!["--animation", "skeletal", "--animation-source", "missing.bvh"],
            Refused { needle: "--animation-source" },
        ),
        (vec!["--animation", "skeletal", "--animation-source", "builtin"], Accepted),
        (vec!["--animation", "skeletal", "--joint-map", "missing.json"], Refused { needle: "--joint-map" }),
        (vec!["--animation", "skeletal", "--joint-map", "bad.json"], Refused { needle: "--joint-map" }),
        (vec!["--animation", "skeletal", "--joint-map", "map.json"], Accepted),
        (vec!["--animation", "skeletal", "--source-joint-map", "bad.json"], Refused { needle: "--source-joint-map" }),
        // The exporter's key bounds.
        (vec!["--key-position-error", "0.25"], Accepted),
        (vec!["--key-position-error", "10"], Accepted),
        (vec!["--key-position-error", "0.2"], Refused { needle: "--key-position-error" }),
        (vec!["--key-position-error", "11"], Refused { needle: "--key-position-error" }),
        (vec!["--key-position-error", "nan"], Refused { needle: "--key-position-error" }),
        (vec!["--key-position-error", "-1"], Refused { needle: "--key-position-error" }),
        (vec!["--key-rotation-error", "0.01"], Accepted),
        (vec!["--key-rotation-error", "5"], Accepted),
        (vec!["--key-rotation-error", "0"], Refused { needle: "--key-rotation-error" }),
        (vec!["--key-rotation-error", "6"], Refused { needle: "--key-rotation-error" }),
        (vec!["--key-contact-error", "0.1"], Accepted),
        (vec!["--key-contact-error", "1"], Accepted),
        (vec!["--key-contact-error", "0.05"], Refused { needle: "--key-contact-error" }),
        (vec!["--key-contact-error", "2"], Refused { needle: "--key-contact-error" }),
        (vec!["--every-sample"], Accepted),
        (vec!["--every-sample", "--key-position-error", "1"], Refused { needle: "--every-sample" }),
        (vec!["--every-sample", "--key-contact-error", "0.3"], Refused { needle: "--every-sample" }),
        (vec!["--compress", "meshopt"], Accepted),
        (vec!["--compress", "zip"], Refused { needle: "--compress" }),
    ];
    // A character users bring, when the shared data is there.
    if repo().join("../shared/data/characters/RobotExpressive.glb").is_file() {
        rows.push((vec!["--animation", "skeletal", "--character", "robot.glb"], Accepted));
        rows.push((vec!["--animation", "skeletal", "--character", "robot.glb", "--character-height", "0"], Accepted));
    }
    rows
}

/// The first line of `stderr` holding `needle`.
fn line_with<'a>(stderr: &'a str, needle: &str) -> Option<&'a str> {
    stderr.lines().find(|l| l.contains(needle))
}

#[test]
fn bake_and_compose_accept_and_refuse_the_same_flags_alike() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("bad.json"), r#"{"format": 1, "bones": {"hips":"#).unwrap();
    std::fs::write(dir.join("map.json"), r#"{"format": 1, "bones": {"hips": "hips"}}"#).unwrap();
    std::fs::write(dir.join("bad.glb"), "not a glb").unwrap();
    let robot = repo().join("../shared/data/characters/RobotExpressive.glb");
    if robot.is_file() {
        std::fs::copy(&robot, dir.join("robot.glb")).unwrap();
    }
    // Outputs under a regular file: refused after every flag was checked.
    std::fs::write(dir.join("blocker"), "").unwrap();
    let patch = repo().join("patches/figure7.patch.json");
    let map = tiny_map(dir);
    let (patch, map) = (patch.to_str().unwrap(), map.to_str().unwrap());
    let mut summary = Vec::new();
    for (flags, expect) in table() {
        let bake = run(&[&["bake", patch, "-o", "blocker/x.glb"][..], &flags].concat(), dir);
        let compose = run(&[&["compose", map, "-o", "blocker/out"][..], &flags].concat(), dir);
        let (b, c) = (text(&bake.stderr), text(&compose.stderr));
        let shown = format!("{flags:?}\n--- bake:\n{b}--- compose:\n{c}");
        // Both stop with exit 2: at a flag, or at the blocked output.
        assert_eq!((bake.status.code(), compose.status.code()), (Some(2), Some(2)), "{shown}");
        match expect {
            Accepted => {
                for (stderr, what) in [(&b, "baked"), (&c, "composed")] {
                    let stop = format!("problem(s) with the output paths; nothing was {what}");
                    assert!(stderr.contains(&stop), "accepted flags stop at the output: {shown}");
                    assert_eq!(stderr.lines().filter(|l| l.starts_with("error:")).count(), 1, "{shown}");
                }
                summary.push(format!("accepted  {}", flags.join(" ")));
            }
            Refused { needle } => {
                let (lb, lc) = (line_with(&b, needle), line_with(&c, needle));
                assert!(lb.is_some_and(|l| l.starts_with("error:")), "bake names {needle}: {shown}");
                assert_eq!(lb, lc, "the same message: {shown}");
                assert!(!b.contains("output paths") && !c.contains("output paths"), "{shown}");
                summary.push(format!("refused   {:<60} {}", flags.join(" "), lb.unwrap()));
            }
        }
    }
    println!("{}", summary.join("\n"));
}

#[test]
fn capsule_flag_sets_bake_and_compose() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let patch = repo().join("patches/figure7.patch.json");
    let map = tiny_map(dir);
    for (k, flags) in [
        &["--animation", "none"][..],
        &["--animation", "none", "--frame-rate", "60", "--character-height", "0"],
        &["--animation", "none", "--every-sample", "--compress", "meshopt"],
        &["--animation", "none", "--key-position-error", "10", "--key-rotation-error", "5"],
    ]
    .into_iter()
    .enumerate()
    {
        let glb = format!("p{k}.glb");
        let bake = run(&[&["bake", patch.to_str().unwrap(), "-o", &glb, "--quiet"][..], flags].concat(), dir);
        assert_eq!(bake.status.code(), Some(0), "{flags:?}: {}", text(&bake.stderr));
        assert_eq!(&std::fs::read(dir.join(&glb)).unwrap()[..4], b"glTF");
        let out = format!("w{k}");
        let compose = run(&[&["compose", map.to_str().unwrap(), "-o", &out, "--quiet"][..], flags].concat(), dir);
        assert_eq!(compose.status.code(), Some(0), "{flags:?}: {}", text(&compose.stderr));
        assert!(dir.join(&out).join("world.json").is_file());
    }
}

#[test]
fn compose_refuses_a_frame_rate_beyond_the_sample_budget_as_bake_does() {
    // Tiles of 64 m and 420 s: at 240 Hz a joint track holds 100 800
    // samples a period, over the budget of 100 000; at 200 Hz, 84 000.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let library = run(&["pattern", "library", "-o", "lib", "--size", "64", "--period", "420", "--counts", "1"], dir);
    assert_eq!(library.status.code(), Some(0), "{}", text(&library.stderr));
    let map = dir.join("long.map.json");
    let json = serde_json::json!({
        "format": 1, "name": "long", "size": 64.0, "period": 420.0, "seed": 3, "patterns": "lib",
        "kinds": {"lane": {"density": 0.0005}}, "legend": {"-": "lane"}, "grid": ["--"],
    });
    std::fs::write(&map, json.to_string()).unwrap();
    let map = map.to_str().unwrap();
    // Capsules: composed, writing the tile's document.
    let capsules = run(&["compose", map, "-o", "capsules", "--quiet"], dir);
    assert_eq!(capsules.status.code(), Some(0), "{}", text(&capsules.stderr));
    let tiles: Vec<PathBuf> = std::fs::read_dir(dir.join("capsules/tiles"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".patch.json"))
        .collect();
    assert_eq!(tiles.len(), 1, "{tiles:?}");
    let tile = tiles[0].to_str().unwrap();
    let skeletal = ["--animation", "skeletal", "--frame-rate"];
    let compose = run(&[&["compose", map, "-o", "skeletal"][..], &skeletal, &["240"]].concat(), dir);
    let bake = run(&[&["bake", tile, "-o", "x.glb"][..], &skeletal, &["240"]].concat(), dir);
    let (c, b) = (text(&compose.stderr), text(&bake.stderr));
    assert_eq!((compose.status.code(), bake.status.code()), (Some(2), Some(2)), "{c}\n{b}");
    // The same refusal after each command's own prefix (the tile, the file).
    let refusal = |s: &str| s.lines().find_map(|l| l.find("period = 420 s").map(|k| l[k..].to_string()));
    let expected = "period = 420 s at --frame-rate 240 Hz gives 100800 samples";
    assert!(refusal(&c).is_some_and(|r| r.starts_with(expected)), "{c}");
    assert_eq!(refusal(&c), refusal(&b), "{c}\n{b}");
    assert!(!dir.join("skeletal").exists() && !dir.join("x.glb").exists(), "refused: nothing written");
    // 200 Hz passes the check: both stop at the blocked output instead.
    std::fs::write(dir.join("blocker"), "").unwrap();
    let compose = run(&[&["compose", map, "-o", "blocker/out"][..], &skeletal, &["200"]].concat(), dir);
    let bake = run(&[&["bake", tile, "-o", "blocker/x.glb"][..], &skeletal, &["200"]].concat(), dir);
    for out in [&compose, &bake] {
        let stderr = text(&out.stderr);
        assert!(stderr.contains("problem(s) with the output paths") && !stderr.contains("period ="), "{stderr}");
    }
}
