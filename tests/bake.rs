//! Integration tests of the bake pipeline (library level): every shipped
//! patch, invariants on random patches, determinism, cross-checks of the
//! metrics against independent sampling.

use crowdpatch::bake::{Bake, bake};
use crowdpatch::model::{Direction, Patch, PatchDocument, Side};
use crowdpatch::path::PointKind;
use crowdpatch::{Silent, load_patch};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

fn shipped_patches() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("patches");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".patch.json"))
        .collect();
    v.sort();
    assert!(v.len() >= 5, "expected the shipped examples in {}", dir.display());
    v
}

/// Minimum centre distance between all coexisting agent instances, by
/// sampling play time every 2 ms — independent of the closed form.
fn sampled_min_separation(b: &Bake) -> f64 {
    let pi = b.patch.header.period;
    let baked = b.baked();
    let mut best = f64::INFINITY;
    let steps = (pi / 0.002) as usize;
    for s in 0..steps {
        let tau = pi * s as f64 / steps as f64;
        let mut at: Vec<[f64; 2]> = Vec::new();
        for a in &baked.agents {
            let (lo, hi) = (a.start(), a.end());
            let mut k = ((lo - tau) / pi).ceil() as i64;
            while tau + k as f64 * pi <= hi {
                let t = tau + k as f64 * pi;
                // A loop's end is its start: count it once.
                if !(a.keys.len() > 1 && matches!(a.kind, crowdpatch::runtime::AgentKind::Endogenous { .. }) && t == hi)
                {
                    at.push(a.sample(t).unwrap().0);
                }
                k += 1;
            }
        }
        for i in 0..at.len() {
            for j in i + 1..at.len() {
                best = best.min(((at[i][0] - at[j][0]).powi(2) + (at[i][1] - at[j][1]).powi(2)).sqrt());
            }
        }
    }
    best
}

fn check_invariants(b: &Bake) {
    let patch = &b.patch;
    for (i, a) in b.agents.iter().enumerate() {
        a.path.check().unwrap_or_else(|e| panic!("agent {i}: {e}"));
        let pts = &a.path.points;
        if let (Some(e), Some(x)) = (a.entry, a.exit) {
            // Boundary points never move, exactly.
            assert_eq!(pts[0].p, e.position, "agent {i} entry position");
            assert_eq!(pts[0].t, e.t, "agent {i} entry time");
            assert_eq!(pts[pts.len() - 1].p, x.position, "agent {i} exit position");
            let k = (pts[pts.len() - 1].t - x.t) / patch.header.period;
            assert!((k - k.round()).abs() < 1e-9 && k.round() >= 0.0, "agent {i} exit time");
            assert_eq!(pts[0].kind, PointKind::Boundary);
            // The crossing velocity is the pattern's (C¹ across the seam).
            assert!((a.path.segment_velocity(0) - e.velocity).norm() < 1e-9, "agent {i} entry velocity");
            assert!((a.path.segment_velocity(pts.len() - 2) - x.velocity).norm() < 1e-9, "agent {i} exit velocity");
        } else {
            assert!(a.path.looped);
            assert_eq!(pts[0].p, pts[pts.len() - 1].p, "agent {i} loop closes");
            assert!(
                (pts[pts.len() - 1].t - pts[0].t - patch.header.period).abs() < 1e-9,
                "agent {i} loop lasts a period"
            );
        }
        // Free points stay inside the patch shrunk by r.
        let (r, l) = (patch.header.agent_radius, patch.header.size);
        for c in pts.iter().filter(|c| c.kind == PointKind::Free) {
            assert!(
                c.p.x >= r - 1e-9 && c.p.x <= l - r + 1e-9 && c.p.y >= r - 1e-9 && c.p.y <= l - r + 1e-9,
                "agent {i}: {c:?}"
            );
        }
    }
    assert!(b.metrics.boundary_error.position <= 1e-6 && b.metrics.boundary_error.time <= 1e-9);
    // Every entry and every exit is used exactly once.
    let entries = patch.crossings_of(Direction::Entry).len();
    assert_eq!(b.pairs.len(), entries);
    let mut exits: Vec<usize> = b.pairs.iter().map(|p| p.exit).collect();
    exits.sort_unstable();
    exits.dedup();
    assert_eq!(exits.len(), entries);
    // Collision-free ⇔ min separation ≥ 2r.
    let two_r = 2.0 * patch.header.agent_radius;
    let min_sep = b.metrics.min_separation.unwrap_or(f64::INFINITY);
    let agent_contacts = b.remaining.iter().any(|c| matches!(c.other, crowdpatch::proximity::Other::Agent(_)));
    assert_eq!(min_sep >= two_r, !agent_contacts, "min separation {min_sep} vs contacts {:?}", b.remaining);
}

#[test]
fn every_shipped_patch_bakes_collision_free() {
    for file in shipped_patches() {
        let patch = load_patch(&file).unwrap_or_else(|e| panic!("{e}"));
        let b = bake(&patch, &mut Silent).unwrap();
        assert!(b.converged(), "{}: {:?}", file.display(), b.remaining);
        check_invariants(&b);
        let m = &b.metrics;
        let two_r = 2.0 * patch.header.agent_radius;
        assert!(m.min_separation.is_none_or(|d| d >= two_r), "{}: {:?}", file.display(), m.min_separation);
        assert!(m.obstacle_clearance.is_none_or(|d| d >= patch.header.agent_radius), "{}", file.display());
        assert!(m.seam_clearance.is_none_or(|d| d >= two_r), "{}", file.display());
        assert_eq!(m.collisions.count, 0);
        // Independent check of the closed-form minimum by sampling.
        let sampled = sampled_min_separation(&b);
        let exact = m.min_separation.unwrap_or(f64::INFINITY);
        assert!(sampled >= exact - 1e-9, "{}: sampled {sampled} < exact {exact}", file.display());
        assert!(
            sampled - exact < 0.01 || exact.is_infinite(),
            "{}: sampled {sampled} vs exact {exact}",
            file.display()
        );
    }
}

#[test]
fn the_same_seed_bakes_the_same_paths_and_another_seed_may_not() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("patches/dense.patch.json");
    let patch = load_patch(&file).unwrap();
    let a = bake(&patch, &mut Silent).unwrap().baked();
    let b = bake(&patch, &mut Silent).unwrap().baked();
    assert_eq!(a, b);
    let mut other = patch.clone();
    other.header.seed += 1;
    let c = bake(&other, &mut Silent).unwrap().baked();
    assert_ne!(a.agents, c.agents, "the seed drives the random rotations of the pushes");
}

#[test]
fn both_solvers_and_both_matchings_run_on_the_shipped_patches() {
    use crowdpatch::model::{MatchingMode, SolverKind};
    for file in shipped_patches() {
        let patch = load_patch(&file).unwrap();
        for (matching, method) in
            [(MatchingMode::Optimal, SolverKind::Default), (MatchingMode::Stable, SolverKind::Paper)]
        {
            let mut p = patch.clone();
            p.solver.matching = matching;
            p.solver.method = method;
            let b = bake(&p, &mut Silent).unwrap();
            // Whatever converged, the invariants hold and the report is honest.
            check_invariants(&b);
            assert_eq!(b.converged(), b.report().converged);
        }
    }
}

/// A random patch of the benchmark's *separated* kind: `n` entries and `n`
/// exits at uniform random (side, s, t), redrawn until every pair satisfies
/// |p₁ − p₂| + u_cft·|Δt| ≥ 4r (docs/design.md "Benchmark protocol").
fn random_patch(n: usize, seed: u64) -> Patch {
    use rand::{RngExt, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let (l, pi, r, u) = (16.0, 10.0, 0.3, 1.33);
    let mut placed: Vec<(Side, f64, f64)> = Vec::new();
    let pos = |side: Side, s: f64| side.point(s, l);
    let mut doc = PatchDocument::new(l, pi);
    doc.seed = Some(seed);
    for k in 0..2 * n {
        let point = loop {
            let side = Side::from_index(rng.random_range(0..4));
            let s: f64 = rng.random_range(0.5..l - 0.5);
            let t: f64 = rng.random_range(0.0..pi);
            let ok = placed.iter().all(|&(sd, ss, tt)| {
                let (p, q) = (pos(side, s), pos(sd, ss));
                let dt = (t - tt).abs().min(pi - (t - tt).abs());
                ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2)).sqrt() + u * dt >= 4.0 * r
            });
            if ok {
                break (side, s, t);
            }
        };
        placed.push(point);
        let (side, s, t) = point;
        let slot = doc.sides.slot_mut(side).get_or_insert_with(Default::default);
        let list = if k % 2 == 0 {
            slot.entries.get_or_insert_with(Vec::new)
        } else {
            slot.exits.get_or_insert_with(Vec::new)
        };
        list.push(crowdpatch::model::BoundaryPoint { s, t, velocity: None, group: None });
    }
    doc.resolve(None, Path::new(".")).unwrap_or_else(|p| panic!("{p:?}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    #[test]
    fn random_patches_keep_every_invariant(n in 1usize..14, seed in any::<u64>()) {
        let patch = random_patch(n, seed);
        let b = bake(&patch, &mut Silent).unwrap();
        check_invariants(&b);
        // Deterministic.
        prop_assert_eq!(b.baked(), bake(&patch, &mut Silent).unwrap().baked());
    }
}

/// The same patches give the same GLB bytes baked one after another or at
/// once on parallel threads (shared character, no shared state).
#[test]
fn baking_on_parallel_threads_gives_the_same_bytes() {
    let character = crowdpatch::character::builtin::character();
    let skeletal = std::sync::Arc::new(crowdpatch::animation::Skeletal::new(character).unwrap());
    let options = crowdpatch::BakeOptions { skeletal: Some(skeletal) };
    let patches: Vec<Patch> = ["figure7", "park", "avenue"]
        .iter()
        .map(|n| load_patch(&Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("patches/{n}.patch.json"))).unwrap())
        .collect();
    let glb = |p: &Patch| {
        let b = crowdpatch::bake_with(p, &options, &mut Silent).unwrap();
        crowdpatch_gltf::write_glb(&b.baked(), Some(&b.metrics.to_json()), &crowdpatch_gltf::GlbOptions::default())
            .unwrap()
    };
    let one_by_one: Vec<Vec<u8>> = patches.iter().map(glb).collect();
    let at_once: Vec<Vec<u8>> = std::thread::scope(|s| {
        let handles: Vec<_> = patches.iter().map(|p| s.spawn(|| glb(p))).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (k, (a, b)) in one_by_one.iter().zip(&at_once).enumerate() {
        assert!(a == b, "patch {k}: bytes differ between sequential and parallel bakes");
    }
}

/// A standing agent is held in place and walkers go round it; one standing
/// where a walker's crossing stub passes (a stub cannot bend) steps aside
/// instead: the bake runs the collision stage again with it free and says so.
#[test]
fn a_standing_agent_in_a_crossing_steps_aside_and_one_elsewhere_holds() {
    let resolve = |sitter: [f64; 2]| {
        let y = Side::West.point(8.0, 16.0)[1];
        let json = format!(
            r#"{{"format": 1, "name": "sitter", "size": 16, "period": 10, "seed": 1,
                "sides": {{"west": {{"entries": [{{"s": 8, "t": 1}}]}}, "east": {{"exits": [{{"s": 8, "t": 8}}]}}}},
                "endogenous": [{{"name": "sitter", "waypoints": [{{"position": [{}, {}], "t": 0}}]}}]}}"#,
            sitter[0],
            y + sitter[1]
        );
        let doc: PatchDocument = serde_json::from_str(&json).unwrap();
        doc.resolve(None, Path::new(".")).unwrap_or_else(|p| panic!("{p:?}"))
    };
    // In the entry's stub (0.45 m in, on its line): held, it would collide.
    let b = bake(&resolve([0.45, 0.0]), &mut Silent).unwrap();
    assert!(b.converged(), "{:?}", b.remaining);
    assert!(b.notes.iter().any(|n| n.contains("step aside")), "{:?}", b.notes);
    let sitter = b.agents.iter().find(|a| a.entry.is_none()).unwrap();
    let p0 = sitter.path.points[0].p;
    assert!(sitter.path.points.iter().any(|c| (c.p - p0).norm() > 0.01), "it stepped aside");
    // In the middle of the patch: held, every point where it stands.
    let b = bake(&resolve([6.0, 3.0]), &mut Silent).unwrap();
    assert!(b.converged(), "{:?}", b.remaining);
    let sitter = b.agents.iter().find(|a| a.entry.is_none()).unwrap();
    assert!(!b.notes.iter().any(|n| n.contains("step aside")), "{:?}", b.notes);
    let p0 = sitter.path.points[0].p;
    assert!(sitter.path.points.iter().all(|c| (c.p - p0).norm() < 1e-9), "it stood where it was put");
}

/// A 16 m, 10 s patch with walking groups: a pair entering south and
/// leaving east (a turn), a triad crossing south to north, a pair crossing
/// west to east past an obstacle, and walkers alone.
fn patch_with_groups() -> Patch {
    use crowdpatch::model::{BoundaryPoint, Obstacle, SideDocument};
    let points = |v: &[(f64, f64, Option<u32>)]| {
        Some(v.iter().map(|&(s, t, group)| BoundaryPoint { s, t, velocity: None, group }).collect())
    };
    let mut doc = PatchDocument::new(16.0, 10.0);
    doc.sides.south = Some(SideDocument {
        entries: points(&[
            (7.6, 1.0, Some(1)),
            (8.4, 1.3, Some(1)),
            (3.0, 4.0, Some(2)),
            (3.8, 4.2, Some(2)),
            (4.6, 3.8, Some(2)),
            (12.0, 6.0, None),
        ]),
        ..SideDocument::default()
    });
    doc.sides.east = Some(SideDocument {
        exits: points(&[(7.2, 9.0, Some(5)), (8.0, 8.6, Some(5)), (12.0, 3.0, Some(6)), (12.8, 3.2, Some(6))]),
        ..SideDocument::default()
    });
    doc.sides.north = Some(SideDocument {
        exits: points(&[(11.4, 6.0, Some(3)), (12.2, 6.1, Some(3)), (13.0, 5.8, Some(3)), (3.0, 3.0, None)]),
        ..SideDocument::default()
    });
    doc.sides.west =
        Some(SideDocument { entries: points(&[(3.2, 0.5, Some(4)), (4.0, 0.7, Some(4))]), ..SideDocument::default() });
    doc.obstacles = vec![Obstacle::Circle { center: [8.0, 12.5], radius: 0.8 }];
    doc.resolve(None, Path::new(".")).unwrap()
}

#[test]
fn walking_groups_enter_walk_and_leave_together() {
    let patch = patch_with_groups();
    assert!(crowdpatch::validate::validate_patch(&patch).is_empty());
    let b = bake(&patch, &mut Silent).unwrap();
    check_invariants(&b);
    let r = patch.header.agent_radius;
    let sep = sampled_min_separation(&b);
    assert!(sep >= 2.0 * r - 1e-3, "min separation {sep}");
    // Matched as units: the members of an entry group leave by the members
    // of one exit group of the same size.
    let exits = patch.crossings_of(Direction::Exit);
    let groups = crowdpatch::realism::entry_groups(&b.patch, &b.agents);
    assert_eq!(groups.iter().map(Vec::len).collect::<Vec<_>>(), vec![2, 3, 2]);
    for g in &groups {
        let ids: Vec<_> = g
            .iter()
            .map(|&i| {
                let x = b.agents[i].exit.unwrap();
                (x.side, patch.sides[x.side].exits[x.index].group)
            })
            .collect();
        assert!(ids.iter().all(|id| *id == ids[0] && id.1.is_some()), "{ids:?}");
        assert_eq!(
            exits.iter().filter(|x| (x.side, patch.sides[x.side].exits[x.index].group) == ids[0]).count(),
            g.len()
        );
        // Members walk side by side: mid-walk within 0.5–1.3 m of their
        // nearest fellow member, and never cross each other's way.
        let (start, end) = g.iter().fold((f64::NEG_INFINITY, f64::INFINITY), |(s, e), &i| {
            (s.max(b.agents[i].path.start()), e.min(b.agents[i].path.end()))
        });
        let mid = (start + end) / 2.0;
        for &i in g {
            let p = b.agents[i].path.position(mid);
            let nearest = g
                .iter()
                .filter(|&&j| j != i)
                .map(|&j| (b.agents[j].path.position(mid) - p).norm())
                .fold(f64::INFINITY, f64::min);
            assert!((0.5..=1.3).contains(&nearest), "group {g:?}, agent {i}: nearest member {nearest} m at t = {mid}");
        }
    }
    let stats = &b.metrics.realism.as_ref().unwrap().groups;
    assert_eq!((stats.groups, stats.walkers_in_groups), (3, 7));
    let pairs = stats.pairs.spacing.unwrap();
    assert!((0.6..=0.95).contains(&pairs.p50) && pairs.p10 >= 0.45, "{pairs:?}");
    let angle = stats.pairs.angle_deg.unwrap();
    assert!((60.0..=85.0).contains(&angle.p50), "{angle:?}");
    // Members walk at the group's pace: one speed.
    for g in &groups {
        let speeds: Vec<f64> = g.iter().map(|&i| b.agents[i].preferred_speed).collect();
        assert!(speeds.iter().all(|&u| u == speeds[0]), "{speeds:?}");
    }
}

/// Where the way is too narrow to walk side by side (a 1.3 m gap in a
/// wall), a pair that enters side by side walks in line, one behind the
/// other, through the gap.
#[test]
fn a_walking_pair_goes_through_a_narrow_gap_in_line() {
    use crowdpatch::model::{BoundaryPoint, Obstacle, SideDocument};
    let points = |v: &[(f64, f64, Option<u32>)]| {
        Some(v.iter().map(|&(s, t, group)| BoundaryPoint { s, t, velocity: None, group }).collect())
    };
    let mut doc = PatchDocument::new(16.0, 10.0);
    doc.sides.south = Some(SideDocument {
        entries: points(&[(7.6, 1.0, Some(1)), (8.4, 1.3, Some(1)), (3.0, 6.0, None)]),
        ..SideDocument::default()
    });
    doc.sides.north = Some(SideDocument {
        exits: points(&[(7.6, 3.0, Some(1)), (8.4, 2.7, Some(1)), (13.0, 9.0, None)]),
        ..SideDocument::default()
    });
    let wall = |x0: f64, x1: f64| Obstacle::Polygon(vec![[x0, 7.5], [x1, 7.5], [x1, 8.5], [x0, 8.5]]);
    doc.obstacles = vec![wall(0.5, 7.35), wall(8.65, 15.5)];
    let patch = doc.resolve(None, Path::new(".")).unwrap();
    let b = bake(&patch, &mut Silent).unwrap();
    check_invariants(&b);
    assert!(sampled_min_separation(&b) >= 2.0 * patch.header.agent_radius - 1e-3);
    let g = &crowdpatch::realism::entry_groups(&b.patch, &b.agents)[0];
    let (p, q) = (&b.agents[g[0]].path, &b.agents[g[1]].path);
    // In the gap (y = 8): the two pass one behind the other, both inside.
    let through = |path: &crowdpatch::path::Path| {
        let mut t = path.start();
        while path.position(t).y < 8.0 {
            t += 0.01;
        }
        (t, path.position(t).x)
    };
    let ((ta, xa), (tb, xb)) = (through(p), through(q));
    assert!((7.35..8.65).contains(&xa) && (7.35..8.65).contains(&xb), "{xa} {xb}");
    assert!((ta - tb).abs() > 0.4, "through the gap {ta:.2} s and {tb:.2} s: not in line");
    // Having entered side by side, they fall into line.
    let t = p.start().max(q.start()) + 0.2;
    let d = p.position(t) - q.position(t);
    assert!(d.x.abs() > 0.6, "{d:?}");
    let stats = &b.metrics.realism.as_ref().unwrap().groups;
    assert!(stats.pairs.angle_deg.unwrap().p50 < 30.0, "{:?}", stats.pairs);
}
