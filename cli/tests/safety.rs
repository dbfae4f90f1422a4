//! Bounded work and nothing of the user's lost (docs/design.md "Limits",
//! "Output safety"): extreme documents refused by `validate` and `bake`
//! alike, quickly and by name; output paths checked before any work;
//! temporary files removed on SIGINT; the same bytes whatever `--jobs`.
//! Runs the real binary in fresh temporary directories.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_crowdpatch"))
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn run(args: &[&str], cwd: &Path) -> Output {
    bin().args(args).current_dir(cwd).output().expect("the binary runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Every file below `dir`, relative, sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p.clone());
            }
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
        }
    }
    out.sort();
    out
}

fn side(entries: &[(f64, f64)], exits: &[(f64, f64)]) -> serde_json::Value {
    let list = |v: &[(f64, f64)]| v.iter().map(|&(s, t)| serde_json::json!({"s": s, "t": t})).collect::<Vec<_>>();
    serde_json::json!({"entries": list(entries), "exits": list(exits)})
}

/// Extreme documents: `(what, JSON, text the message must hold)`.
fn extreme_documents() -> Vec<(&'static str, String, &'static str)> {
    let pair = |extra: serde_json::Value| {
        let mut doc = serde_json::json!({"format": 1, "size": 16, "period": 10,
            "sides": {"south": side(&[(4.0, 1.0)], &[]), "north": side(&[], &[(8.0, 6.0)])}});
        for (k, v) in extra.as_object().unwrap() {
            doc[k] = v.clone();
        }
        doc.to_string()
    };
    let same = vec![(4.0, 1.0); 5000];
    let many: Vec<(f64, f64)> = (0..600).map(|i| (0.5 + (i % 30) as f64 * 0.5, (i / 30) as f64 * 0.45)).collect();
    let circle: Vec<[f64; 2]> = (0..5000)
        .map(|i| {
            let a = std::f64::consts::TAU * i as f64 / 5000.0;
            [8.0 + 3.0 * a.cos(), 8.0 + 3.0 * a.sin()]
        })
        .collect();
    let discs: Vec<serde_json::Value> = (0..300)
        .map(|i| serde_json::json!({"circle": {"center": [2.0 + (i % 20) as f64 * 0.6, 2.0 + (i / 20) as f64 * 0.6], "radius": 0.1}}))
        .collect();
    let standing: Vec<serde_json::Value> = (0..300)
        .map(|i| serde_json::json!({"waypoints": [{"position": [1.0 + (i % 20) as f64 * 0.7, 1.0 + (i / 20) as f64 * 0.7], "t": 0.0}]}))
        .collect();
    let waypoints: Vec<serde_json::Value> =
        (0..2000).map(|i| serde_json::json!({"position": [8.0, 8.0], "t": i as f64 * 0.004})).collect();
    vec![
        (
            "5000 identical entries and exits",
            serde_json::json!({"format": 1, "size": 16, "period": 10,
                "sides": {"south": side(&same, &[]), "north": side(&[], &same)}})
            .to_string(),
            "sides.south has 5000 boundary points",
        ),
        (
            "600 points on one side",
            serde_json::json!({"format": 1, "size": 16, "period": 10,
                "sides": {"east": side(&many[..300], &many[300..])}})
            .to_string(),
            "sides.east has 600 boundary points",
        ),
        (
            "a polygon of 5000 vertices",
            pair(serde_json::json!({"obstacles": [{"polygon": circle}]})),
            "obstacles[0].polygon has 5000 vertices",
        ),
        ("300 obstacles", pair(serde_json::json!({"obstacles": discs})), "obstacles has 300 obstacles"),
        ("300 endogenous agents", pair(serde_json::json!({"endogenous": standing})), "endogenous has 300 agents"),
        (
            "2000 waypoints",
            pair(serde_json::json!({"endogenous": [{"waypoints": waypoints}]})),
            "endogenous[0].waypoints has 2000 waypoints",
        ),
        (
            "a waypoint at 163 m/s",
            pair(serde_json::json!({"endogenous": [{"waypoints": [
                {"position": [1.0, 8.0], "t": 0.0}, {"position": [15.0, 8.0], "t": 14.0 / 163.0}]}]})),
            "endogenous[0].waypoints[0] to waypoints[1]: 14.000 m in 0.086 s is 163.0 m/s",
        ),
        (
            "the largest size and period at 30 Hz",
            serde_json::json!({"format": 1, "size": 1000, "period": 3600,
                "sides": {"south": side(&[(500.0, 1.0)], &[]), "north": side(&[], &[(500.0, 1800.0)])}})
            .to_string(),
            "period = 3600 s at --frame-rate 30 Hz gives 108000 samples",
        ),
        (
            "a tack every nanosecond",
            pair(serde_json::json!({"solver": {"tack_interval": 1e-9}})),
            "solver.tack_interval = 0.000000001",
        ),
        (
            "a billion iterations",
            pair(serde_json::json!({"solver": {"max_iterations": 1_000_000_000u64}})),
            "solver.max_iterations = 1000000000",
        ),
        (
            "a 17 MiB document",
            format!("{}{}", pair(serde_json::json!({})), " ".repeat(17 << 20)),
            "is larger than 16 MiB",
        ),
    ]
}

#[test]
fn issue14_extreme_documents_are_refused_by_validate_and_bake_alike() {
    let dir = tempfile::tempdir().unwrap();
    for (what, json, needle) in extreme_documents() {
        let file = dir.path().join("x.patch.json");
        std::fs::write(&file, &json).unwrap();
        for command in [&["validate", "x.patch.json"][..], &["bake", "x.patch.json", "-o", "out/x.glb"][..]] {
            let out = run(command, dir.path());
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{what}: {command:?}: {err}");
            assert!(!err.contains("panicked"), "{what}: {err}");
            assert!(
                err.contains(&format!("x.patch.json: {needle}")),
                "{what}: {command:?}: expected {needle:?} in {err}"
            );
            assert!(err.lines().count() <= 50, "{what}: the list is capped: {} lines", err.lines().count());
        }
        std::fs::remove_file(&file).unwrap();
        assert!(files(dir.path()).is_empty(), "{what}: nothing written: {:?}", files(dir.path()));
    }
}

#[test]
fn issue14_thousands_of_inseparable_pairs_are_counted_not_listed() {
    let dir = tempfile::tempdir().unwrap();
    let same = vec![(4.0, 1.0); 400];
    let json = serde_json::json!({"format": 1, "size": 16, "period": 10,
        "sides": {"south": side(&same, &[]), "north": side(&[], &same)}});
    std::fs::write(dir.path().join("x.patch.json"), json.to_string()).unwrap();
    let out = run(&["validate", "x.patch.json"], dir.path());
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(err.contains("x.patch.json: and 79780 more problem(s) at sides.south.entries[…]"), "{err}");
    assert!(err.lines().count() < 50, "{err}");
}

#[test]
fn issue14_an_output_never_overwrites_an_input_or_another_output() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let figure7 = std::fs::read(repo().join("patches/figure7.patch.json")).unwrap();
    std::fs::write(d.join("a.patch.json"), &figure7).unwrap();
    // A patch whose north side is a pattern file.
    std::fs::write(d.join("p.pattern.json"), std::fs::read(repo().join("patterns/sparse.pattern.json")).unwrap())
        .unwrap();
    let mirror = std::fs::read(repo().join("patterns/sparse-mirror.pattern.json")).unwrap();
    std::fs::write(d.join("m.pattern.json"), &mirror).unwrap();
    std::fs::write(
        d.join("b.patch.json"),
        r#"{"format":1,"size":16,"period":10,"sides":{"north":{"pattern":"p.pattern.json"},"south":{"pattern":"m.pattern.json"}}}"#,
    )
    .unwrap();
    std::fs::hard_link(d.join("a.patch.json"), d.join("hard.glb")).unwrap();
    std::os::unix::fs::symlink("a.patch.json", d.join("soft.glb")).unwrap();
    let before = files(d);
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["bake", "a.patch.json", "-o", "a.patch.json"], "-o a.patch.json: is the input PATCH"),
        (vec!["bake", "a.patch.json", "-o", "./sub/../a.patch.json"], "is the input PATCH"),
        (vec!["bake", "a.patch.json", "-o", "hard.glb"], "-o hard.glb: is the input PATCH"),
        (vec!["bake", "a.patch.json", "-o", "soft.glb"], "-o soft.glb: is the input PATCH"),
        (
            vec!["bake", "b.patch.json", "-o", "x.glb", "--report", "p.pattern.json"],
            "--report p.pattern.json: is the input PATCH",
        ),
        (vec!["bake", "a.patch.json", "-o", "x.glb", "--report", "x.glb"], "--report x.glb: is also -o x.glb"),
        (vec!["bake", "a.patch.json", "-o", "x.glb", "--preview", "./x.glb"], "--preview ./x.glb: is also -o x.glb"),
        (vec!["bake", "a.patch.json", "-o", "x.glb", "--report", "r.json", "--preview", "r.json"], "is also --report"),
        (vec!["bake", "a.patch.json", "b.patch.json", "-o", "out", "--report", "out", "--preview", "out"], ""),
        (vec!["bake", "a.patch.json", "-o", "missing/x.glb"], "-o missing/x.glb: the directory missing does not exist"),
        (
            vec!["bake", "a.patch.json", "b.patch.json", "-o", "a.patch.json"],
            "-o a.patch.json: is a file, not a directory",
        ),
        (vec!["bake", "a.patch.json", "./a.patch.json", "-o", "newdir"], "would both be written as a.glb"),
        (vec!["bake", "a.patch.json", "-o", "/proc/x.glb"], "cannot write in /proc"),
    ];
    for (args, needle) in cases {
        let out = run(&args, d);
        let err = text(&out.stderr);
        if needle.is_empty() {
            // Several outputs per patch in one directory: distinct names, allowed.
            assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
            for f in ["out/a.glb", "out/a.report.json", "out/a.png", "out/b.glb"] {
                assert!(d.join(f).is_file(), "{args:?}: {f}");
            }
            std::fs::remove_dir_all(d.join("out")).unwrap();
            continue;
        }
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: expected {needle:?} in {err}");
        assert_eq!(files(d), before, "{args:?}: nothing created or removed");
        assert_eq!(std::fs::read(d.join("a.patch.json")).unwrap(), figure7, "{args:?}: the source is intact");
        assert_eq!(std::fs::read(d.join("m.pattern.json")).unwrap(), mirror);
    }

    // A read-only output file is not replaced.
    std::fs::write(d.join("ro.glb"), b"keep").unwrap();
    let mut perms = std::fs::metadata(d.join("ro.glb")).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(d.join("ro.glb"), perms).unwrap();
    let out = run(&["bake", "a.patch.json", "-o", "ro.glb"], d);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("-o ro.glb: exists and is read-only"));
    assert_eq!(std::fs::read(d.join("ro.glb")).unwrap(), b"keep");

    // compose: the report may not be the map, a template or a pattern.
    let map = repo().join("maps/town.map.json");
    let out = run(&["compose", map.to_str().unwrap(), "-o", "town", "--report", map.to_str().unwrap()], d);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("is the input MAP"), "{}", text(&out.stderr));
    let park = repo().join("patches/park.patch.json");
    let out = run(&["compose", map.to_str().unwrap(), "-o", "town", "--report", park.to_str().unwrap()], d);
    assert_eq!(out.status.code(), Some(2));
    assert!(!d.join("town").exists(), "nothing created on refusal");
    // character inspect --png may not overwrite its character.
    std::fs::write(d.join("c.glb"), b"glTF").unwrap();
    let out = run(&["character", "inspect", "c.glb", "--png", "c.glb"], d);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--png c.glb: is the input CHARACTER"), "{}", text(&out.stderr));
    // bench --out that is a file.
    let out = run(&["bench", "--out", "a.patch.json", "--n-max", "1", "--runs", "1"], d);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read(d.join("a.patch.json")).unwrap(), figure7);
}

/// Whether a file named `.crowdpatch-*.tmp` is in `dir`.
fn temporaries(dir: &Path) -> Vec<String> {
    files(dir).into_iter().filter(|f| f.contains(".crowdpatch-") && f.ends_with(".tmp")).collect()
}

#[test]
fn issue14_sigint_during_a_write_removes_the_temporary_and_keeps_the_previous_output() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let patch = repo().join("patches/figure7.patch.json");
    let first = run(&["bake", patch.to_str().unwrap(), "-o", "x.glb", "--animation", "none", "--quiet"], d);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let previous = std::fs::read(d.join("x.glb")).unwrap();
    for signal in ["-INT", "-TERM"] {
        // The bake again, holding its written temporary file for 20 s before
        // the rename: the interrupt falls inside the write.
        let mut child = bin()
            .args([
                "bake",
                patch.to_str().unwrap(),
                "-o",
                "x.glb",
                "--report",
                "x.report.json",
                "--seed",
                "9",
                "--quiet",
            ])
            .env("CROWDPATCH_WRITE_DELAY_MS", "20000")
            .current_dir(d)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while temporaries(d).is_empty() {
            assert!(start.elapsed() < Duration::from_secs(120), "no temporary file appeared");
            assert!(child.try_wait().unwrap().is_none(), "the bake ended early");
            std::thread::sleep(Duration::from_millis(20));
        }
        // The shell's own `kill`: no procps needed.
        let status = Command::new("sh").args(["-c", &format!("kill {signal} {}", child.id())]).status().unwrap();
        assert!(status.success());
        let out = child.wait_with_output().unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "{signal}: {err}");
        assert!(err.contains("interrupted: 1 temporary file(s) removed"), "{signal}: {err}");
        assert!(temporaries(d).is_empty(), "{signal}: {:?}", files(d));
        assert_eq!(std::fs::read(d.join("x.glb")).unwrap(), previous, "{signal}: the previous output is intact");
        assert!(!d.join("x.report.json").exists());
    }
}

#[test]
fn issue14_the_same_bytes_with_one_job_or_several() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let patches: Vec<String> = ["figure7", "park", "plaza", "avenue"]
        .iter()
        .map(|n| repo().join(format!("patches/{n}.patch.json")).display().to_string())
        .collect();
    for (jobs, out) in [("1", "one"), ("3", "three")] {
        let mut args: Vec<&str> = vec!["bake"];
        args.extend(patches.iter().map(String::as_str));
        args.extend(["-o", out, "--jobs", jobs, "--quiet"]);
        let o = run(&args, d);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    }
    for n in ["figure7", "park", "plaza", "avenue"] {
        let a = std::fs::read(d.join(format!("one/{n}.glb"))).unwrap();
        let b = std::fs::read(d.join(format!("three/{n}.glb"))).unwrap();
        assert!(a == b, "{n}.glb differs between --jobs 1 and --jobs 3");
    }
}

#[test]
fn issue14_compose_checks_the_world_before_writing_world_json() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // An open side: a street ending at the map's border is fine, but a
    // library pattern whose mirror is missing cannot happen; instead, a
    // cell kind whose template has another period is refused up front.
    let map = repo().join("maps/town.map.json");
    let out = run(&["compose", map.to_str().unwrap(), "-o", "town", "--report", "town/report.json", "--quiet"], d);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let listed = files(&d.join("town"));
    assert!(listed.contains(&"world.json".to_string()) && listed.contains(&"report.json".to_string()));
    assert!(temporaries(&d.join("town")).is_empty());
    // world.json is the last file written.
    let modified = |f: &str| std::fs::metadata(d.join("town").join(f)).unwrap().modified().unwrap();
    assert!(modified("world.json") >= modified("report.json"));
}
