//! `crowdpatch bench`: the seed paper's protocol run from the command line.

#[test]
fn the_bench_command_writes_csv_summary_and_figure() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_crowdpatch"))
        .args([
            "bench",
            "--protocol",
            "opt",
            "--variant",
            "raw",
            "--n-max",
            "4",
            "--runs",
            "2",
            "--quiet",
            "--out",
            "b",
        ])
        .args(["--solver", "paper", "default", "social-forces"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = std::fs::read_to_string(dir.path().join("b/bench.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], crowdpatch::bench::CSV_HEADER);
    assert_eq!(lines.len(), 1 + 4 * 2 * 3, "one row per patch and solver");
    assert!(lines[1].starts_with("paper,raw,1,0,1000,"));
    let columns = lines[0].split(',').count();
    assert!(lines.iter().all(|l| l.split(',').count() == columns));
    // Infeasible patches name their culprit points; feasible ones none.
    for l in &lines[1..] {
        let f: Vec<&str> = l.split(',').collect();
        assert_eq!(f[6] == "true", f[columns - 1].contains("sides."), "{l}");
    }
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("b/summary.json")).unwrap()).unwrap();
    let solvers = summary["solvers"].as_array().unwrap();
    assert_eq!(solvers.len(), 3);
    assert_eq!(solvers[1]["solver"], "default");
    assert_eq!(solvers[1]["patches"], 8);
    assert!(summary["machine"]["wall_s"].as_f64().unwrap() > 0.0);
    assert_eq!(summary["against_paper"].as_array().unwrap().len(), 2);
    let png = std::fs::read(dir.path().join("b/figure6.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    // Deterministic apart from wall times: the same run gives the same rows
    // once the two time columns are dropped.
    let again = std::process::Command::new(env!("CARGO_BIN_EXE_crowdpatch"))
        .args(["bench", "--variant", "raw", "--n-max", "4", "--runs", "2", "--quiet", "--out", "c"])
        .args(["--solver", "paper", "default", "social-forces"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(0));
    let strip = |s: &str| -> Vec<String> {
        s.lines()
            .map(|l| {
                l.split(',')
                    .enumerate()
                    .filter(|(k, _)| *k != 9 && *k != 10)
                    .map(|(_, v)| v)
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .collect()
    };
    assert_eq!(strip(&csv), strip(&std::fs::read_to_string(dir.path().join("c/bench.csv")).unwrap()));
}
