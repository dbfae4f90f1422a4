//! Bounded work on any input (docs/design.md "Limits"): documents with
//! thousands of points, long polygons, long periods and extreme waypoints,
//! and maps of hundreds of cells, are read without a panic; a count over its
//! limit is refused by name; problem lists stay capped; what the bake would
//! refuse is decided by one check.

use crowdpatch::limits::{self, AnimationLoad};
use crowdpatch::model::PatchDocument;
use crowdpatch::problem::PROBLEMS_PER_KIND;
use proptest::prelude::*;
use std::path::Path;

/// The points of the four sides: `(entries, exits)` of `(s, t)` each.
type SidePoints = [(Vec<(f64, f64)>, Vec<(f64, f64)>); 4];
/// `(entries, exits)` of one side.
type OneSide = (Vec<(f64, f64)>, Vec<(f64, f64)>);

/// A document's JSON from its parts: `points[side]` = (entries, exits) of
/// `(s, t)`, obstacles as JSON values, endogenous waypoint lists.
fn document(
    size: f64,
    period: f64,
    points: &SidePoints,
    obstacles: &[serde_json::Value],
    endogenous: &[Vec<([f64; 2], f64)>],
    solver: serde_json::Value,
) -> String {
    let side = |(entries, exits): &OneSide| {
        let list =
            |v: &Vec<(f64, f64)>| v.iter().map(|&(s, t)| serde_json::json!({"s": s, "t": t})).collect::<Vec<_>>();
        serde_json::json!({"entries": list(entries), "exits": list(exits)})
    };
    let endo: Vec<serde_json::Value> = endogenous
        .iter()
        .map(|w| {
            serde_json::json!({"waypoints": w.iter().map(|(p, t)| serde_json::json!({"position": p, "t": t})).collect::<Vec<_>>()})
        })
        .collect();
    serde_json::json!({
        "format": 1, "size": size, "period": period,
        "sides": {"south": side(&points[0]), "east": side(&points[1]), "north": side(&points[2]), "west": side(&points[3])},
        "obstacles": obstacles, "endogenous": endo, "solver": solver,
    })
    .to_string()
}

/// Resolves a document's text; the problems (or none) and the patch.
fn check(text: &str) -> Result<crowdpatch::Patch, Vec<crowdpatch::Problem>> {
    let (doc, unknown) = PatchDocument::from_json(text).map_err(|p| vec![p])?;
    assert!(unknown.is_empty(), "{unknown:?}");
    doc.resolve(None, Path::new("."))
}

/// No more than [`PROBLEMS_PER_KIND`] problems of one kind are listed.
fn assert_capped(problems: &[crowdpatch::Problem]) {
    let mut kinds = std::collections::HashMap::new();
    for p in problems {
        *kinds.entry((p.path.pattern(), std::mem::discriminant(&p.target))).or_insert(0usize) += 1;
    }
    for (k, n) in kinds {
        assert!(n <= PROBLEMS_PER_KIND, "{n} problems of kind {k:?}");
    }
}

#[test]
fn the_pathological_document_is_refused_by_its_counts() {
    // 5000 identical entries and exits on one side each.
    let same = vec![(4.0, 1.0); 5000];
    let points = [(same.clone(), vec![]), (vec![], vec![]), (vec![], same), (vec![], vec![])];
    let problems = check(&document(16.0, 10.0, &points, &[], &[], serde_json::json!({}))).unwrap_err();
    let text: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
    assert!(text.iter().any(|t| t.starts_with("sides.south has 5000 boundary points")), "{text:?}");
    assert!(text.iter().any(|t| t.contains("at most 1000")), "{text:?}");
    assert!(problems.len() <= 4, "{text:?}");
}

#[test]
fn identical_points_within_the_limits_give_a_capped_list() {
    let same = vec![(4.0, 1.0); 400];
    let points = [(same.clone(), vec![]), (vec![], vec![]), (vec![], same), (vec![], vec![])];
    let problems = check(&document(16.0, 10.0, &points, &[], &[], serde_json::json!({}))).unwrap_err();
    assert_capped(&problems);
    // 2 × C(400, 2) pairs are too close: all counted, 20 of each kind listed.
    let more: usize = problems
        .iter()
        .filter_map(|p| {
            p.message.strip_prefix("and ").and_then(|m| m.split(' ').next()).and_then(|n| n.parse::<usize>().ok())
        })
        .sum();
    assert_eq!(more + problems.len() - 2, 2 * 400 * 399 / 2, "{problems:?}");
}

#[test]
fn limits_bound_the_bake_before_any_work() {
    let load = AnimationLoad { joints: 21, frame_rate: 30.0, frame_rate_flag: "--frame-rate" };
    // The largest size and period with one crossing pair: 3600 s × 30 Hz is
    // more samples per track than the exporter writes.
    let points = [(vec![(500.0, 1.0)], vec![]), (vec![], vec![]), (vec![], vec![(500.0, 1800.0)]), (vec![], vec![])];
    let patch = check(&document(1000.0, 3600.0, &points, &[], &[], serde_json::json!({}))).unwrap();
    let refused = limits::check_bake(&patch, Some(&load));
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(refused[0].to_string().starts_with("period = 3600 s at --frame-rate 30 Hz gives 108000 samples"));
    let slower = AnimationLoad { frame_rate: 27.7, ..load };
    assert!(limits::check_bake(&patch, Some(&slower)).is_empty());
    assert!(limits::check_bake(&patch, None).is_empty());

    // 400 pairs on a 64 m patch fit the joint budget (the growth protocol's
    // largest bake); 500 pairs on a 1000 m patch do not.
    let doc = crowdpatch::bench::growth_patch(400, 64.0, 0);
    let patch = doc.resolve(None, Path::new(".")).unwrap();
    assert!(limits::check_bake(&patch, Some(&load)).is_empty());
    let mut big = patch.clone();
    big.header.size = 1000.0;
    let refused = limits::check_bake(&big, Some(&load));
    assert!(refused.iter().any(|p| p.to_string().contains("joint samples")), "{refused:?}");
}

#[test]
fn waypoints_faster_than_walkers_are_refused() {
    let none = [(vec![], vec![]), (vec![], vec![]), (vec![], vec![]), (vec![], vec![])];
    // 163 m/s between two waypoints; and a closing leg of 26 m in 0.1 s.
    let fast = vec![([1.0, 1.0], 0.0), ([15.0, 1.0], 14.0 / 163.0)];
    let closing = vec![([1.0, 1.0], 0.0), ([1.5, 1.0], 9.9), ([15.0, 15.0], 9.95)];
    let problems = check(&document(16.0, 10.0, &none, &[], &[fast, closing], serde_json::json!({}))).unwrap_err();
    let text: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
    assert!(
        text.iter().any(|t| t.starts_with("endogenous[0].waypoints[0] to waypoints[1]") && t.contains("163.0 m/s")),
        "{text:?}"
    );
    assert!(text.iter().any(|t| t.starts_with("endogenous[1].waypoints[1] to waypoints[2]")), "{text:?}");
    assert!(
        text.iter().any(|t| t.starts_with("endogenous[1].waypoints[2] to waypoints[0] a period later")),
        "{text:?}"
    );
}

/// Points of one side: clustered, identical or spread, `n` of them.
fn side_points(n: usize, mode: u8, size: f64, period: f64, seed: u64) -> Vec<(f64, f64)> {
    let mut x = seed | 1;
    let mut next = move || {
        // xorshift: cheap, deterministic, no dependency.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..n)
        .map(|i| match mode {
            0 => (size / 2.0, period / 3.0),
            1 => (size / 2.0 + next() * 0.5, next() * period.min(1.0)),
            _ => (next() * size, (i as f64 * 0.37 + next()) % period),
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    /// Random extreme documents: up to thousands of points per side,
    /// polygons of up to 3000 vertices, hundreds of obstacles, long periods,
    /// waypoints at any speed, extreme solver options. Validation never
    /// panics, lists at most 20 problems of a kind, refuses every count over
    /// its limit, and the bake's check runs on whatever it accepts.
    #[test]
    fn extreme_documents_never_panic_and_stay_bounded(
        size in prop_oneof![Just(1.0), Just(16.0), Just(1000.0), 1.0f64..1000.0],
        period in prop_oneof![Just(1.0), Just(3600.0), 1.0f64..3600.0],
        counts in proptest::collection::vec(0usize..1200, 4),
        modes in proptest::collection::vec(0u8..3, 4),
        vertices in prop_oneof![Just(0usize), 3usize..20, 900usize..3000],
        obstacles in prop_oneof![Just(0usize), 1usize..4, 250usize..400],
        waypoints in prop_oneof![Just(0usize), 1usize..5, 200usize..400],
        tack in prop_oneof![Just(0.5), Just(1e-9), 0.001f64..10.0],
        iterations in prop_oneof![Just(5000u64), Just(1_000_000_000u64)],
        seed in any::<u64>(),
    ) {
        let points: SidePoints = std::array::from_fn(|k| {
            let n = counts[k];
            let all = side_points(n, modes[k], size, period, seed.wrapping_add(k as u64));
            let (a, b) = all.split_at(n / 2);
            (a.to_vec(), b.to_vec())
        });
        let mut shapes = Vec::new();
        for k in 0..obstacles {
            let c = [size * ((k * 7919) % 97) as f64 / 97.0, size * ((k * 104729) % 89) as f64 / 89.0];
            if vertices > 0 && k == 0 {
                let poly: Vec<[f64; 2]> = (0..vertices)
                    .map(|i| {
                        let a = std::f64::consts::TAU * i as f64 / vertices as f64;
                        [size / 2.0 + size / 5.0 * a.cos(), size / 2.0 + size / 5.0 * a.sin()]
                    })
                    .collect();
                shapes.push(serde_json::json!({"polygon": poly}));
            } else {
                shapes.push(serde_json::json!({"circle": {"center": c, "radius": size / 50.0}}));
            }
        }
        let endo: Vec<Vec<([f64; 2], f64)>> = (0..waypoints.min(3))
            .map(|a| {
                (0..waypoints)
                    .map(|i| {
                        let f = (i as f64 + a as f64 * 0.1) / waypoints as f64;
                        ([1.0 + (size - 2.0) * f, 1.0 + (size - 2.0) * (1.0 - f)], period * f * 0.999)
                    })
                    .collect()
            })
            .collect();
        let solver = serde_json::json!({"tack_interval": tack, "max_iterations": iterations});
        let text = document(size, period, &points, &shapes, &endo, solver);
        match check(&text) {
            Err(problems) => {
                assert_capped(&problems);
                let total: usize = points.iter().map(|(a, b)| a.len() + b.len()).sum();
                if total > limits::MAX_BOUNDARY_POINTS {
                    prop_assert!(problems.iter().any(|p| p.message.contains("a patch holds at most")));
                }
                if points.iter().any(|(a, b)| a.len() + b.len() > limits::MAX_SIDE_POINTS) {
                    prop_assert!(problems.iter().any(|p| p.message.contains("a side holds at most")));
                }
                if obstacles > limits::MAX_OBSTACLES {
                    prop_assert!(problems.iter().any(|p| p.path == "obstacles"));
                }
                if waypoints > limits::MAX_WAYPOINTS {
                    prop_assert!(problems.iter().any(|p| p.message.contains("an agent has at most")));
                }
                if iterations > limits::MAX_ITERATIONS as u64 {
                    prop_assert!(problems.iter().any(|p| p.path == "solver.max_iterations"));
                }
            }
            Ok(patch) => {
                prop_assert!(patch.solver.max_iterations <= limits::MAX_ITERATIONS);
                let load = AnimationLoad { joints: 21, frame_rate: 30.0, frame_rate_flag: "--frame-rate" };
                for p in limits::check_bake(&patch, Some(&load)) {
                    prop_assert!(!p.message.is_empty());
                }
            }
        }
    }

    /// Maps of up to hundreds of cells, any kinds and densities: loading and
    /// composing never panic, and every composed tile either resolves or
    /// names its problems (capped).
    #[test]
    fn maps_of_hundreds_of_cells_compose_without_panic(
        columns in 1usize..40,
        rows in 1usize..25,
        fill in proptest::collection::vec(0u8..4, 1..64),
        density in prop_oneof![Just(0.0), Just(2.0), 0.0f64..0.3],
        seed in any::<u64>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let patterns = Path::new(env!("CARGO_MANIFEST_DIR")).join("patterns");
        let grid: Vec<String> = (0..rows)
            .map(|j| (0..columns).map(|i| ['#', '-', '.', '#'][fill[(i * 31 + j * 17) % fill.len()] as usize]).collect())
            .collect();
        let map = serde_json::json!({
            "format": 1, "size": 16.0, "period": 10.0, "seed": seed,
            "patterns": patterns.display().to_string(),
            "kinds": {"street": {"density": density}, "lane": {"density": density / 2.0}},
            "legend": {"#": "street", "-": "lane"},
            "grid": grid,
        });
        let file = dir.path().join("m.map.json");
        std::fs::write(&file, map.to_string()).unwrap();
        match crowdpatch::compose::load_map(&file) {
            Ok(m) => {
                let c = crowdpatch::compose::compose(&m);
                prop_assert_eq!(c.world.cells().count(), grid.iter().map(|r| r.chars().filter(|&ch| ch != '.').count()).sum::<usize>());
                for t in &c.tiles {
                    if let Err(problems) = t.document.resolve(None, dir.path()) {
                        assert_capped(&problems);
                    }
                }
            }
            Err(e) => assert_capped(&e.problems()),
        }
    }
}

#[test]
fn oversized_maps_and_documents_are_refused_before_parsing_them_whole() {
    let dir = tempfile::tempdir().unwrap();
    // A map of 600 × 600 cells.
    let row = "#".repeat(600);
    let map = serde_json::json!({"format": 1, "size": 16.0, "period": 10.0, "patterns": "p",
        "kinds": {"s": {"density": 0.1}}, "legend": {"#": "s"}, "grid": vec![row; 600]});
    let file = dir.path().join("big.map.json");
    std::fs::write(&file, map.to_string()).unwrap();
    let e = crowdpatch::compose::load_map(&file).unwrap_err().to_string();
    assert!(e.contains("grid has 600 rows of 600 cells") && e.contains("at most 262144"), "{e}");
    // A 20 MiB document.
    let file = dir.path().join("huge.patch.json");
    std::fs::write(&file, " ".repeat(20 << 20)).unwrap();
    let e = crowdpatch::load_patch(&file).unwrap_err().to_string();
    assert!(e.contains("huge.patch.json: is larger than 16 MiB"), "{e}");
}
