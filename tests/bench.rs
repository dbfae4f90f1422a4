//! The benchmark protocol and the solvers measured by it: a short protocol
//! run (a reduced n range and run count; the full one is `crowdpatch bench`),
//! infeasibility proofs cross-checked by sampling, the incremental distance
//! matrix against a fresh one, and the summary's arithmetic.

use crowdpatch::bench::{Protocol, Variant, run_case, separation, summarise};
use crowdpatch::collision::matrix::IncrementalMatrix;
use crowdpatch::collision::paper::DistanceMatrix;
use crowdpatch::collision::{CollisionParams, conflicts_of, find_contacts, infeasibility};
use crowdpatch::model::{Crossing, Direction, Side, SolverKind};
use crowdpatch::path::{Path, PointKind};
use crowdpatch::proximity::ghosts;
use proptest::prelude::*;

/// A short protocol: a few n, a few runs.
fn short(variant: Variant) -> Protocol {
    Protocol { n_min: 1, n_max: 24, runs: 3, ..Protocol::opt(variant) }
}

fn short_cases(p: &Protocol) -> Vec<(usize, usize)> {
    p.cases().into_iter().filter(|(n, _)| [1, 3, 8, 16, 24].contains(n)).collect()
}

#[test]
fn protocol_patches_are_seeded_and_separated_ones_are_valid() {
    let sep = Protocol::opt(Variant::Separated);
    for (n, run) in [(1, 0), (10, 3), (50, 19)] {
        let a = sep.patch(n, run);
        assert_eq!(a, sep.patch(n, run), "same case, same patch");
        assert_ne!(a.sides, sep.patch(n, (run + 1) % 20).sides, "another run, other points");
        let crossings = a.crossings();
        assert_eq!(crossings.len(), 2 * n);
        assert_eq!(crossings.iter().filter(|c| c.direction == Direction::Entry).count(), n);
        // Every pair keeps the separation of docs/design.md "Benchmark protocol", and the patch validates.
        for (i, p) in crossings.iter().enumerate() {
            for q in &crossings[i + 1..] {
                assert!(separation(p.side, p.s, p.t, q.side, q.s, q.t, 16.0, 10.0, 1.33) >= 1.2 - 1e-9);
            }
        }
        let problems = crowdpatch::validate::validate_patch(&a);
        assert!(problems.is_empty(), "{problems:?}");
        assert!(infeasibility(&a).is_empty());
    }
}

#[test]
fn infeasibility_proofs_hold_when_sampled() {
    // For each reported pair, sample `|p_a(t) − p_b(t')| + u·|t − t'|` on a
    // 2 ms grid over both fixed parts (stub, ghost; not ghost against ghost)
    // and five period shifts: the minimum is below 2r and matches the
    // reported distance.
    let raw = Protocol::opt(Variant::Raw);
    let u = crowdpatch::collision::max_walking_speed(1.33);
    let mut checked = 0;
    for (n, run) in [(11, 1), (14, 0), (20, 2), (30, 2), (50, 3)] {
        let patch = raw.patch(n, run);
        for c in infeasibility(&patch) {
            let parts = |x: &Crossing| [x.stub(0.3), x.ghost(0.6)];
            let mut best = f64::INFINITY;
            for (ia, pa) in parts(&c.a).iter().enumerate() {
                for (ib, pb) in parts(&c.b).iter().enumerate() {
                    if ia == 1 && ib == 1 {
                        continue;
                    }
                    let sample = |p: &((crowdpatch::geometry::Vec2, f64), (crowdpatch::geometry::Vec2, f64)),
                                  k: usize| {
                        let ((p0, t0), (p1, t1)) = *p;
                        let t = t0 + (t1 - t0) * k as f64 / 200.0;
                        (p0 + (p1 - p0) * ((t - t0) / (t1 - t0)), t)
                    };
                    for shift in -2..=2 {
                        for i in 0..=200 {
                            let (x, t) = sample(pa, i);
                            for j in 0..=200 {
                                let (y, s) = sample(pb, j);
                                let s = s - shift as f64 * 10.0;
                                best = best.min((x - y).norm() + u * (t - s).abs());
                            }
                        }
                    }
                }
            }
            assert!(best < 0.6 + 0.01, "{}: sampled {best}", c.describe(0.3));
            assert!(c.distance <= best + 1e-6 && best - c.distance < 0.02, "{} vs sampled {best}", c.distance);
            checked += 1;
        }
    }
    assert!(checked > 10, "the raw protocol has inseparable pairs to check ({checked})");
}

fn crossing(side: usize, entry: bool, s: f64, t: f64) -> Crossing {
    let side = Side::from_index(side);
    let inward = crowdpatch::geometry::v2(side.inward_normal());
    Crossing {
        side,
        direction: if entry { Direction::Entry } else { Direction::Exit },
        index: 0,
        s,
        t,
        position: crowdpatch::geometry::v2(side.point(s, 16.0)),
        velocity: if entry { inward * 1.33 } else { -inward * 1.33 },
        preferred_speed: 1.33,
    }
}

proptest! {
    /// The sufficient point criterion (docs/design.md "Infeasibility") `|p₁ − p₂| + 1.5 m/s·|Δt| < 2r`
    /// implies the exact fixed-part conflict used by the solver, so every
    /// patch docs/design.md "Infeasibility" calls infeasible is proven infeasible here too.
    #[test]
    fn the_design_criterion_implies_a_fixed_part_conflict(
        sa in 0usize..4, sb in 0usize..4, ea in any::<bool>(), eb in any::<bool>(),
        a in 0.3..15.7f64, ta in 0.0..10.0f64, da in -0.8..0.8f64, dt in -0.6..0.6f64,
    ) {
        // Second point near the first (same or adjacent side).
        let b = (a + da).clamp(0.3, 15.7);
        let tb = (ta + dt).rem_euclid(10.0);
        let (p, q) = (crossing(sa, ea, a, ta), crossing(sb, eb, b, tb));
        if separation(p.side, p.s, p.t, q.side, q.s, q.t, 16.0, 10.0, 1.5) < 0.6 {
            prop_assert!(!conflicts_of(&[p, q], 0.3, 0.3, 10.0, 2.66).is_empty());
        }
    }
}

#[test]
fn raw_infeasible_patches_are_reported_without_iterating() {
    let raw = Protocol::opt(Variant::Raw);
    let mut seen = 0;
    for (n, run) in [(10, 2), (14, 1), (20, 0), (40, 2)] {
        let patch = raw.patch(n, run);
        if infeasibility(&patch).is_empty() {
            continue;
        }
        let b = crowdpatch::bake(&patch, &mut crowdpatch::Silent).unwrap();
        assert_eq!(b.collision.iterations, 0, "default does not iterate an infeasible patch");
        assert!(!b.collision.infeasible.is_empty());
        assert!(!b.converged());
        // The bench row names the closest culprit pair and counts them all.
        let row = run_case(&raw, n, run, SolverKind::Default, None);
        let closest = infeasibility(&patch).into_iter().min_by(|a, b| a.distance.total_cmp(&b.distance)).unwrap();
        assert!(row.infeasible && row.culprits.starts_with(&closest.describe(0.3)), "{}", row.culprits);
        assert!(row.culprits.ends_with(&format!("({} inseparable pair(s))", infeasibility(&patch).len())));
        seen += 1;
    }
    assert!(seen >= 2);
}

#[test]
fn a_short_protocol_run_converges_on_every_feasible_patch() {
    for variant in [Variant::Separated, Variant::Raw] {
        let p = short(variant);
        let cases = short_cases(&p);
        let mut rows = Vec::new();
        for &(n, run) in &cases {
            for s in [SolverKind::Paper, SolverKind::Default] {
                rows.push(run_case(&p, n, run, s, (s == SolverKind::Paper).then_some(2000)));
            }
        }
        for r in rows.iter().filter(|r| r.solver == SolverKind::Default) {
            assert!(r.converged || r.infeasible, "{variant:?} n = {} run = {}: default failed", r.n, r.run);
            if r.converged {
                assert!(r.min_separation.is_nan() || r.min_separation >= 0.6, "{r:?}");
            }
        }
        let s = summarise(&p, &[SolverKind::Paper, SolverKind::Default], &rows);
        for v in &s.solvers {
            assert_eq!(v.patches, cases.len());
            assert_eq!(
                v.converged
                    + v.failed
                    + rows.iter().filter(|r| r.solver == v.solver && r.infeasible && !r.converged).count(),
                v.patches
            );
        }
        let d = s.solvers.iter().find(|v| v.solver == SolverKind::Default).unwrap();
        assert_eq!(d.converged_of_feasible, 1.0);
        assert_eq!(s.against_paper.len(), 1);
    }
}

#[test]
fn the_default_solver_keeps_boundaries_exact_and_is_deterministic() {
    let p = Protocol::opt(Variant::Separated);
    for (n, run) in [(6, 1), (20, 2)] {
        let patch = p.patch(n, run);
        let a = crowdpatch::bake(&patch, &mut crowdpatch::Silent).unwrap();
        let b = crowdpatch::bake(&patch, &mut crowdpatch::Silent).unwrap();
        assert_eq!(a.baked(), b.baked());
        assert!(a.converged());
        for agent in &a.agents {
            agent.path.check().unwrap();
            let pts = &agent.path.points;
            let (e, x) = (agent.entry.unwrap(), agent.exit.unwrap());
            assert_eq!((pts[0].p, pts[0].t), (e.position, e.t));
            assert_eq!(pts[pts.len() - 1].p, x.position);
            assert_eq!(pts[0].kind, PointKind::Boundary);
            assert!((agent.path.segment_velocity(0) - e.velocity).norm() < 1e-9);
        }
        assert_eq!(a.metrics.boundary_error.position, 0.0);
    }
}

#[test]
fn social_forces_keep_the_boundary_conditions() {
    let p = Protocol::opt(Variant::Separated);
    let mut patch = p.patch(12, 4);
    patch.solver.method = SolverKind::SocialForces;
    let b = crowdpatch::bake(&patch, &mut crowdpatch::Silent).unwrap();
    assert!(b.collision.iterations > 0);
    for agent in &b.agents {
        agent.path.check().unwrap();
        let pts = &agent.path.points;
        assert_eq!(pts[0].p, agent.entry.unwrap().position);
        assert_eq!(pts[pts.len() - 1].p, agent.exit.unwrap().position);
    }
    // It reports honestly: converged exactly when no contact is left.
    assert_eq!(
        b.converged(),
        find_contacts(&b.agents, &[], &b.ghosts, &CollisionParams::from_patch(&b.patch)).is_empty()
    );
}

/// Every exact cell of the incremental matrix after random space-time moves
/// equals a fresh matrix's (pruned cells are at least target + FAR away there).
#[test]
fn the_incremental_matrix_equals_a_fresh_one_after_moves() {
    use rand::{RngExt, SeedableRng};
    let p = Protocol::opt(Variant::Separated);
    let patch = p.patch(18, 5);
    let pairs = crowdpatch::matching::match_patch(&patch, patch.solver.matching);
    let (mut agents, _) = crowdpatch::initial_paths::initial_paths(&patch, &pairs);
    let g = ghosts(&patch, &agents);
    let params = CollisionParams::from_patch(&patch);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let mut m = {
        let paths: Vec<&Path> = agents.iter().map(|a| &a.path).collect();
        IncrementalMatrix::new(&paths, &[], &g, &params)
    };
    for _ in 0..60 {
        let i = rng.random_range(0..agents.len());
        let (lo, hi) = agents[i].path.free_range();
        let t = rng.random_range(lo..hi);
        let d = crowdpatch::geometry::Vec2::new(rng.random_range(-0.5..0.5), rng.random_range(-0.5..0.5));
        let w = crowdpatch::collision::default::bump(&mut agents[i].path, t, d, &params, 1.5);
        agents[i].path.check().unwrap();
        let paths: Vec<&Path> = agents.iter().map(|a| &a.path).collect();
        m.update(&paths, i, w.as_ref().map(std::slice::from_ref));
        let fresh = DistanceMatrix::new(&paths, &[], &g, &params);
        let (mine, theirs) = (m.contacts(), fresh.contacts());
        assert_eq!(mine.len(), theirs.len());
        for (x, y) in mine.iter().zip(&theirs) {
            assert_eq!((x.agent, x.other), (y.agent, y.other));
            assert!((x.distance - y.distance).abs() < 1e-9, "{x:?} vs {y:?}");
        }
        let (a, b) = (m.min_gap().unwrap(), fresh.min_gap().unwrap());
        assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    }
    assert!(m.stats.pruned > 0, "some blocks are pruned");
}

#[test]
fn greedy_is_default_without_linear_programs() {
    // `greedy` runs the same seeded passes as `default` and no LP: until the
    // first stall (after at least 200 pushes) both push the same pairs the
    // same way, so their iteration counts agree; only default polishes.
    let p = Protocol::opt(Variant::Separated);
    let mut polished = 0;
    for (n, run) in [(8, 0), (16, 1), (24, 2), (30, 3)] {
        let g = run_case(&p, n, run, SolverKind::Greedy, None);
        let d = run_case(&p, n, run, SolverKind::Default, None);
        assert_eq!(g.lp_rounds, 0, "n = {n}: greedy solved a linear program");
        assert!(g.converged && d.converged, "n = {n} run = {run}: {g:?} {d:?}");
        if d.iterations < 200 {
            assert_eq!(g.iterations, d.iterations, "n = {n} run = {run}");
        }
        polished += d.lp_rounds;
    }
    assert!(polished > 0, "default never polished");
}

#[test]
fn a_patch_left_with_a_collision_restarts_and_converges_and_one_that_converges_never_restarts() {
    // Case (42, 13) of the separated protocol: two walkers through the
    // patch's north-west corner 0.16 s apart, which the first attempt (and
    // the calm one) leave 0.51 m apart; a restart with another draw of the
    // pushes' turns separates them (issue 30).
    let sep = Protocol::opt(Variant::Separated);
    let patch = sep.patch(42, 13);
    let b = crowdpatch::bake::bake(&patch, &mut Quiet).unwrap();
    assert!(b.converged(), "{:?}", b.collision.remaining);
    assert!(b.remaining.is_empty(), "the final paths keep every separation: {:?}", b.remaining);
    let restarted: Vec<&String> = b.notes.iter().filter(|n| n.contains("started again")).collect();
    assert_eq!(restarted.len(), 1, "{:?}", b.notes);
    // The baseline solver is never restarted: the seed paper's Algorithm 2
    // stays as written.
    let paper = crowdpatch::bake::BakeOverrides { method: Some(SolverKind::Paper), ..Default::default() }.apply(&patch);
    let p = crowdpatch::bake::bake(&paper, &mut Quiet).unwrap();
    assert!(!p.notes.iter().any(|n| n.contains("started again")), "{:?}", p.notes);
    // A case that converges at once does not restart, and its result is
    // the first attempt's (same as the collision stage alone).
    let easy = sep.patch(20, 0);
    let e = crowdpatch::bake::bake(&easy, &mut Quiet).unwrap();
    assert!(e.converged());
    assert!(!e.notes.iter().any(|n| n.contains("started again")), "{:?}", e.notes);
    let mut alone = e.initial.clone();
    let params = CollisionParams::from_patch(&easy);
    let out =
        crowdpatch::collision::remove_collisions(&mut alone, &easy.obstacles, &e.ghosts, &params, &mut |_, _| true);
    assert!(out.converged);
    assert_eq!(
        alone.iter().map(|a| &a.path).collect::<Vec<_>>(),
        e.collision_free.iter().map(|a| &a.path).collect::<Vec<_>>()
    );
}

struct Quiet;
impl crowdpatch::bake::BakeObserver for Quiet {}
