//! The seed paper's benchmark protocol (OPT §4, docs/design.md "Benchmark
//! protocol"), shared by `crowdpatch bench`, the tests and the criterion
//! benches: random square patches of side L = 16 m and period π = 10 s with
//! agents of radius r = 0.3 m, for n = 1..50 entry/exit pairs and 20 seeded
//! runs each — 1000 patches — baked by each solver side by side.
//!
//! Every patch is a pure function of `(variant, n, run)`: its points are drawn
//! by a ChaCha8 generator seeded with [`case_seed`]`(n, run)`, and its bake uses
//! the same seed, so a run is reproducible apart from its wall times.

use crate::bake::{BakeObserver, BakeOverrides, bake};
use crate::collision::Conflict;
use crate::geometry::v2;
use crate::model::{
    BoundaryPoint, Crossing, Direction, Patch, PatchHeader, Pattern, Side, Sides, SolverKind, SolverOptions,
};
use crate::stats::{Quantile, quantile};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// How boundary points are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// Uniform random `(side, s, t)`, as the seed paper: many such patches
    /// hold two points too close in space and time for any solution.
    Raw,
    /// Points redrawn until every pair satisfies
    /// `|p₁ − p₂| + u_cft·|Δt| ≥ 4r` (`Δt` taken periodically).
    Separated,
}

impl Variant {
    /// `raw` or `separated`.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Raw => "raw",
            Variant::Separated => "separated",
        }
    }
}

/// Parameters of the protocol.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Protocol {
    /// Point placement.
    pub variant: Variant,
    /// Patch side L `[m]`.
    pub size: f64,
    /// Period π `[s]`.
    pub period: f64,
    /// Agent radius r `[m]`.
    pub agent_radius: f64,
    /// Comfort speed u_cft `[m/s]`.
    pub comfort_speed: f64,
    /// Smallest number of entry/exit pairs.
    pub n_min: usize,
    /// Largest number of entry/exit pairs.
    pub n_max: usize,
    /// Runs (seeds) per number of pairs.
    pub runs: usize,
}

impl Protocol {
    /// The seed paper's protocol: L = 16 m, π = 10 s, r = 0.3 m,
    /// u_cft = 1.33 m/s, n = 1..50, 20 runs each.
    pub fn opt(variant: Variant) -> Protocol {
        Protocol {
            variant,
            size: 16.0,
            period: 10.0,
            agent_radius: 0.3,
            comfort_speed: 1.33,
            n_min: 1,
            n_max: 50,
            runs: 20,
        }
    }

    /// Every `(n, run)` of the protocol, n-major.
    pub fn cases(&self) -> Vec<(usize, usize)> {
        (self.n_min..=self.n_max).flat_map(|n| (0..self.runs).map(move |run| (n, run))).collect()
    }

    /// The patch of case `(n, run)`: `n` entries and `n` exits on uniform
    /// random sides, at uniform random arc positions `s ∈ [r, L − r]` (a
    /// crossing closer than r to a corner would brush the diagonal
    /// neighbour, which no pattern constrains) and times `t ∈ [0, π)`, with
    /// the default (normal, comfort-speed) velocities; entries and exits
    /// alternate in the draw. The patch is *not* validated: a raw patch may
    /// hold inseparable points, which is what the protocol measures.
    pub fn patch(&self, n: usize, run: usize) -> Patch {
        let seed = case_seed(n, run);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (l, pi, r, u) = (self.size, self.period, self.agent_radius, self.comfort_speed);
        let mut placed: Vec<Crossing> = Vec::with_capacity(2 * n);
        let mut sides = Sides::from_fn(|_| Pattern::empty(l, pi));
        for k in 0..2 * n {
            let direction = if k % 2 == 0 { Direction::Entry } else { Direction::Exit };
            let point = loop {
                let side = Side::from_index(rng.random_range(0..4));
                let s: f64 = rng.random_range(r..l - r);
                let t: f64 = rng.random_range(0.0..pi);
                let c = self.crossing(side, direction, sides[side].points(direction).len(), s, t);
                if self.variant == Variant::Raw || placed.iter().all(|p| self.separable(&c, p)) {
                    break c;
                }
            };
            placed.push(point);
            sides[point.side].points_mut(direction).push(BoundaryPoint {
                s: point.s,
                t: point.t,
                velocity: None,
                group: None,
            });
        }
        Patch {
            header: PatchHeader {
                name: format!("opt-{}-n{n:02}-run{run:02}", self.variant.name()),
                size: l,
                period: pi,
                agent_radius: r,
                comfort_speed: u,
                seed,
            },
            sides,
            pattern_sources: Sides::from_fn(|_| None),
            obstacles: vec![],
            endogenous: vec![],
            solver: SolverOptions::default(),
        }
    }
}

impl Protocol {
    /// A boundary point with the default velocity (normal, comfort speed).
    fn crossing(&self, side: Side, direction: Direction, index: usize, s: f64, t: f64) -> Crossing {
        let inward = v2(side.inward_normal());
        let velocity = match direction {
            Direction::Entry => inward * self.comfort_speed,
            Direction::Exit => -inward * self.comfort_speed,
        };
        Crossing {
            side,
            direction,
            index,
            s,
            t,
            position: v2(side.point(s, self.size)),
            velocity,
            preferred_speed: self.comfort_speed,
        }
    }

    /// Whether two boundary points may both be placed in a *separated*
    /// patch: `|p₁ − p₂| + u_cft·|Δt| ≥ 4r` (docs/design.md "Benchmark protocol"), and they are not
    /// proven inseparable ([`crate::collision::conflicts_of`]) — the first
    /// alone lets a few pairs meet at a corner, where the stubs of two
    /// adjacent sides converge (3 to 5 patches in the 1000 of the protocol).
    fn separable(&self, a: &Crossing, b: &Crossing) -> bool {
        let (l, pi, r, u) = (self.size, self.period, self.agent_radius, self.comfort_speed);
        separation(a.side, a.s, a.t, b.side, b.s, b.t, l, pi, u) >= 4.0 * r
            && crate::collision::conflicts_of(&[*a, *b], r, r, pi, crate::collision::max_walking_speed(u)).is_empty()
    }
}

/// The seed of case `(n, run)`: `1000·n + run`, readable in the CSV.
pub fn case_seed(n: usize, run: usize) -> u64 {
    1000 * n as u64 + run as u64
}

/// `|p₁ − p₂| + u·|Δt|` of two boundary points, `Δt` taken periodically —
/// the separation measure of the protocol's *separated* variant `[m]`.
#[allow(clippy::too_many_arguments)]
pub fn separation(a: Side, sa: f64, ta: f64, b: Side, sb: f64, tb: f64, size: f64, period: f64, u: f64) -> f64 {
    let (p, q) = (a.point(sa, size), b.point(sb, size));
    let dt = (ta - tb).abs().rem_euclid(period);
    let dt = dt.min(period - dt);
    ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2)).sqrt() + u * dt
}

/// What one solver did on one patch: a row of `bench.csv`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseResult {
    /// Solver.
    pub solver: SolverKind,
    /// Point placement.
    pub variant: Variant,
    /// Entry/exit pairs.
    pub n: usize,
    /// Run index.
    pub run: usize,
    /// Seed of the patch and of the bake.
    pub seed: u64,
    /// Whether the final paths are collision-free (min separation ≥ 2r,
    /// seams and obstacles clear).
    pub converged: bool,
    /// Whether some pair of boundary points is proven inseparable (their
    /// fixed crossing stubs and ghosts come closer than 2r): no solver can
    /// succeed. Independent of the solver.
    pub infeasible: bool,
    /// Collision-removal iterations (pushes; for `social-forces`, time steps).
    pub iterations: usize,
    /// Global refinement rounds (linear programs solved).
    pub lp_rounds: usize,
    /// Wall time of collision removal `[ms]`.
    pub solve_ms: f64,
    /// Wall time of the whole bake `[ms]`.
    pub bake_ms: f64,
    /// Minimum centre distance between coexisting agents `[m]` (NaN when no
    /// two agents meet).
    pub min_separation: f64,
    /// Time-weighted mean speed `[m/s]`.
    pub speed_mean: f64,
    /// Time-weighted mean |u − u_cft| `[m/s]`.
    pub speed_comfort_deviation: f64,
    /// Largest segment speed `[m/s]`.
    pub speed_max: f64,
    /// p95 of the turn rate `[rad/s]`.
    pub turn_rate_p95: f64,
    /// Largest turn rate `[rad/s]`.
    pub turn_rate_max: f64,
    /// The culprit points of an infeasible patch: the closest inseparable
    /// pair described (see [`Conflict::describe`]) and the number of such
    /// pairs; empty when feasible.
    pub culprits: String,
}

/// Bakes the patch of case `(n, run)` with `solver` (iteration cap
/// `max_iterations` when given) and measures it.
pub fn run_case(
    protocol: &Protocol,
    n: usize,
    run: usize,
    solver: SolverKind,
    max_iterations: Option<usize>,
) -> CaseResult {
    let patch = protocol.patch(n, run);
    let conflicts = crate::collision::infeasibility(&patch);
    let infeasible = !conflicts.is_empty();
    let culprits = conflicts
        .iter()
        .min_by(|a, b| a.distance.total_cmp(&b.distance))
        .map(|c| format!("{} ({} inseparable pair(s))", c.describe(patch.header.agent_radius), conflicts.len()))
        .unwrap_or_default();
    let mut patch = BakeOverrides { method: Some(solver), ..BakeOverrides::default() }.apply(&patch);
    if let Some(cap) = max_iterations {
        patch.solver.max_iterations = cap;
    }
    let start = Instant::now();
    let b = bake(&patch, &mut NoProgress).expect("a silent bake is never cancelled");
    let bake_ms = start.elapsed().as_secs_f64() * 1000.0;
    let m = &b.metrics;
    CaseResult {
        solver,
        variant: protocol.variant,
        n,
        run,
        seed: patch.header.seed,
        converged: b.converged(),
        infeasible,
        iterations: b.collision.iterations,
        lp_rounds: b.collision.lp_rounds,
        solve_ms: b.timings.collision_removal_ms,
        bake_ms,
        min_separation: m.min_separation.unwrap_or(f64::NAN),
        speed_mean: m.speed.mean,
        speed_comfort_deviation: m.speed.mean_comfort_deviation,
        speed_max: m.speed.max,
        turn_rate_p95: m.turn_rate.p95,
        turn_rate_max: m.turn_rate.max,
        culprits,
    }
}

struct NoProgress;
impl BakeObserver for NoProgress {}

/// The inseparable pairs of a protocol patch (see [`Conflict`]).
pub fn conflicts(protocol: &Protocol, n: usize, run: usize) -> Vec<Conflict> {
    crate::collision::infeasibility(&protocol.patch(n, run))
}

/// Percentiles of a set of values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Percentiles {
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest.
    pub max: f64,
    /// Mean.
    pub mean: f64,
    /// Sum.
    pub total: f64,
}

impl Percentiles {
    /// Nearest-rank percentiles of the finite `values` ([`Quantile::InvertedCdf`];
    /// all NaN when empty).
    pub fn of(values: impl IntoIterator<Item = f64>) -> Percentiles {
        let mut v: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return Percentiles {
                p50: f64::NAN,
                p90: f64::NAN,
                p99: f64::NAN,
                max: f64::NAN,
                mean: f64::NAN,
                total: 0.0,
            };
        }
        let mut at = |q: f64| quantile(&mut v, q, Quantile::InvertedCdf).unwrap_or(f64::NAN);
        let (p50, p90, p99, max) = (at(0.5), at(0.9), at(0.99), at(1.0));
        let total: f64 = v.iter().sum();
        Percentiles { p50, p90, p99, max, mean: total / v.len() as f64, total }
    }
}

/// Mean quality of a set of baked patches.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Quality {
    /// Patches averaged.
    pub patches: usize,
    /// Mean of the time-weighted mean |u − u_cft| `[m/s]`.
    pub speed_comfort_deviation: f64,
    /// Mean of the p95 turn rate `[rad/s]`.
    pub turn_rate_p95: f64,
    /// Mean of the largest turn rate `[rad/s]`.
    pub turn_rate_max: f64,
    /// Mean of the largest segment speed `[m/s]`.
    pub speed_max: f64,
}

impl Quality {
    /// Means over `rows` (NaN when empty).
    pub fn of<'a>(rows: impl IntoIterator<Item = &'a CaseResult>) -> Quality {
        let rows: Vec<&CaseResult> = rows.into_iter().collect();
        let n = rows.len() as f64;
        let mean = |f: &dyn Fn(&CaseResult) -> f64| rows.iter().map(|r| f(r)).sum::<f64>() / n;
        Quality {
            patches: rows.len(),
            speed_comfort_deviation: mean(&|r| r.speed_comfort_deviation),
            turn_rate_p95: mean(&|r| r.turn_rate_p95),
            turn_rate_max: mean(&|r| r.turn_rate_max),
            speed_max: mean(&|r| r.speed_max),
        }
    }
}

/// One solver's results over the protocol.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SolverSummary {
    /// The solver.
    pub solver: SolverKind,
    /// Patches baked.
    pub patches: usize,
    /// Collision-free results.
    pub converged: usize,
    /// Patches proven infeasible (inseparable boundary points).
    pub infeasible: usize,
    /// Feasible patches left with collisions.
    pub failed: usize,
    /// `converged / patches`.
    pub converged_fraction: f64,
    /// `converged / (patches − infeasible)`.
    pub converged_of_feasible: f64,
    /// Collision-removal wall time per patch `[ms]`.
    pub solve_ms: Percentiles,
    /// Whole-bake wall time per patch `[ms]`.
    pub bake_ms: Percentiles,
    /// Iterations per patch (feasible patches).
    pub iterations: Percentiles,
    /// Mean quality of the converged patches.
    pub quality: Quality,
    /// Median collision-removal time at the largest n `[ms]`.
    pub solve_ms_median_at_n_max: f64,
    /// Median whole-bake time at the largest n `[ms]`.
    pub bake_ms_median_at_n_max: f64,
    /// Per number of pairs, in increasing n: how the cost grows.
    pub per_n: Vec<PerN>,
}

/// One solver's results at one number of pairs (a line of the growth of
/// cost that every run of the protocol shows).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PerN {
    /// Entry/exit pairs.
    pub n: usize,
    /// Patches baked.
    pub patches: usize,
    /// Collision-free results or patches proven infeasible.
    pub converged_or_infeasible: usize,
    /// Mean collision-removal time `[ms]`.
    pub solve_ms_mean: f64,
    /// Largest collision-removal time `[ms]`.
    pub solve_ms_max: f64,
    /// Mean whole-bake time `[ms]`.
    pub bake_ms_mean: f64,
}

impl SolverSummary {
    /// The growth of cost as text: `n: mean / max solve [ms]` every 5 n
    /// (and the last), and the total collision-removal time.
    pub fn per_n_text(&self) -> String {
        let last = self.per_n.last().map(|p| p.n);
        let cells: Vec<String> = self
            .per_n
            .iter()
            .filter(|p| p.n % 5 == 0 || Some(p.n) == last)
            .map(|p| format!("n{} {:.0}/{:.0}", p.n, p.solve_ms_mean, p.solve_ms_max))
            .collect();
        format!(
            "{} solve ms per patch, mean/max: {}; total {:.1} s",
            self.solver.name(),
            cells.join(", "),
            self.solve_ms.total / 1000.0
        )
    }
}

/// A solver against the paper's Algorithm 2 on the same patches.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// The solver compared.
    pub solver: SolverKind,
    /// Median collision-removal time of `paper` over this solver's, at the
    /// largest n.
    pub speedup_solve_at_n_max: f64,
    /// The same for the whole bake.
    pub speedup_bake_at_n_max: f64,
    /// Total collision-removal time of `paper` over this solver's.
    pub speedup_solve_total: f64,
    /// Quality of this solver on the patches both converged.
    pub quality: Quality,
    /// Quality of `paper` on the same patches.
    pub paper_quality: Quality,
}

/// `summary.json`: the protocol, each solver's summary and the comparisons
/// with `paper`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// The protocol run.
    pub protocol: Protocol,
    /// Per solver, in the order run.
    pub solvers: Vec<SolverSummary>,
    /// Every other solver against `paper`, when `paper` ran.
    pub against_paper: Vec<Comparison>,
}

/// Summarises the rows of one protocol run.
pub fn summarise(protocol: &Protocol, solvers: &[SolverKind], rows: &[CaseResult]) -> Summary {
    let of = |s: SolverKind| rows.iter().filter(move |r| r.solver == s);
    let median_at = |s: SolverKind, f: &dyn Fn(&CaseResult) -> f64| {
        Percentiles::of(of(s).filter(|r| r.n == protocol.n_max).map(f)).p50
    };
    let summaries = solvers
        .iter()
        .map(|&s| {
            let patches = of(s).count();
            let converged = of(s).filter(|r| r.converged).count();
            let infeasible = of(s).filter(|r| r.infeasible).count();
            let failed = of(s).filter(|r| !r.converged && !r.infeasible).count();
            SolverSummary {
                solver: s,
                patches,
                converged,
                infeasible,
                failed,
                converged_fraction: converged as f64 / patches.max(1) as f64,
                converged_of_feasible: of(s).filter(|r| r.converged && !r.infeasible).count() as f64
                    / (patches - infeasible).max(1) as f64,
                solve_ms: Percentiles::of(of(s).map(|r| r.solve_ms)),
                bake_ms: Percentiles::of(of(s).map(|r| r.bake_ms)),
                iterations: Percentiles::of(of(s).filter(|r| !r.infeasible).map(|r| r.iterations as f64)),
                quality: Quality::of(of(s).filter(|r| r.converged)),
                solve_ms_median_at_n_max: median_at(s, &|r| r.solve_ms),
                bake_ms_median_at_n_max: median_at(s, &|r| r.bake_ms),
                per_n: (protocol.n_min..=protocol.n_max)
                    .filter_map(|n| {
                        let at: Vec<&CaseResult> = of(s).filter(|r| r.n == n).collect();
                        let solve = Percentiles::of(at.iter().map(|r| r.solve_ms));
                        (!at.is_empty()).then(|| PerN {
                            n,
                            patches: at.len(),
                            converged_or_infeasible: at.iter().filter(|r| r.converged || r.infeasible).count(),
                            solve_ms_mean: solve.mean,
                            solve_ms_max: solve.max,
                            bake_ms_mean: Percentiles::of(at.iter().map(|r| r.bake_ms)).mean,
                        })
                    })
                    .collect(),
            }
        })
        .collect::<Vec<_>>();
    let mut against_paper = Vec::new();
    if solvers.contains(&SolverKind::Paper) {
        let paper = summaries.iter().find(|s| s.solver == SolverKind::Paper).expect("paper ran");
        for s in summaries.iter().filter(|s| s.solver != SolverKind::Paper) {
            let both = |r: &&CaseResult| {
                r.converged
                    && rows.iter().any(|p| p.solver == SolverKind::Paper && p.n == r.n && p.run == r.run && p.converged)
            };
            let mine: Vec<&CaseResult> = of(s.solver).filter(both).collect();
            let theirs: Vec<&CaseResult> =
                of(SolverKind::Paper).filter(|p| mine.iter().any(|r| r.n == p.n && r.run == p.run)).collect();
            against_paper.push(Comparison {
                solver: s.solver,
                speedup_solve_at_n_max: paper.solve_ms_median_at_n_max / s.solve_ms_median_at_n_max,
                speedup_bake_at_n_max: paper.bake_ms_median_at_n_max / s.bake_ms_median_at_n_max,
                speedup_solve_total: paper.solve_ms.total / s.solve_ms.total,
                quality: Quality::of(mine),
                paper_quality: Quality::of(theirs),
            });
        }
    }
    Summary { protocol: protocol.clone(), solvers: summaries, against_paper }
}

/// The header of `bench.csv`.
pub const CSV_HEADER: &str = "solver,variant,n,run,seed,converged,infeasible,iterations,lp_rounds,solve_ms,bake_ms,\
min_separation,speed_mean,speed_comfort_deviation,speed_max,turn_rate_p95,turn_rate_max,culprits";

impl CaseResult {
    /// The row of `bench.csv` (see [`CSV_HEADER`]).
    pub fn csv_row(&self) -> String {
        format!(
            "{},{},{},{},{},{},{},{},{},{:.3},{:.3},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},\"{}\"",
            self.solver.name(),
            self.variant.name(),
            self.n,
            self.run,
            self.seed,
            self.converged,
            self.infeasible,
            self.iterations,
            self.lp_rounds,
            self.solve_ms,
            self.bake_ms,
            self.min_separation,
            self.speed_mean,
            self.speed_comfort_deviation,
            self.speed_max,
            self.turn_rate_p95,
            self.turn_rate_max,
            // Quoted, and free of commas for readers that split on them.
            self.culprits.replace('"', "'").replace(',', ";")
        )
    }
}

/// The growth protocol (docs/benchmarks.md "Growth", `crowdpatch bench --protocol
/// growth`): how a bake's time and memory grow with the patch, and a
/// compose's with the map. Its patch of `n` entry/exit pairs on an L × L
/// patch (`size` `[m]`, π = 10 s, r = 0.3 m, u_cft = 1.33 m/s): the
/// *separated* variant's points ([`Protocol::patch`], seed
/// [`case_seed`]`(n, run)`), as a document with inline sides (default
/// velocities).
pub fn growth_patch(n: usize, size: f64, run: usize) -> crate::model::PatchDocument {
    let protocol = Protocol { size, ..Protocol::opt(Variant::Separated) };
    let patch = protocol.patch(n, run);
    let mut doc = crate::model::PatchDocument::new(size, protocol.period);
    doc.name = Some(format!("growth-L{size}-n{n}-run{run}"));
    doc.seed = Some(patch.header.seed);
    for side in Side::ALL {
        let p = &patch.sides[side];
        if p.entries.is_empty() && p.exits.is_empty() {
            continue;
        }
        // Default velocities: the inline (patch-frame) points are the same.
        *doc.sides.slot_mut(side) = Some(crate::model::SideDocument {
            entries: Some(p.entries.clone()),
            exits: Some(p.exits.clone()),
            ..Default::default()
        });
    }
    doc
}

/// The growth protocol's map: `cells × cells` street cells (density 0.09
/// agents/m², L = 16 m, π = 10 s, seed 7) whose pattern library `patterns/`
/// holds two balanced random patterns of 5 and 2 entries (drawn with seed
/// `seed`, [`crate::compose::random_pattern`]); returns the map's JSON text
/// and the library as `(file name, pattern)`.
pub fn growth_map(cells: usize, seed: u64) -> (String, Vec<(String, Pattern)>) {
    let (l, pi, r, u) = (16.0, 10.0, 0.3, 1.33);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let library = [5, 2]
        .iter()
        .map(|&n| (format!("street-{n}.pattern.json"), crate::compose::random_pattern(n, l, pi, r, u, &mut rng)))
        .collect();
    let row = "#".repeat(cells);
    let map = serde_json::json!({
        "format": 1,
        "name": format!("streets-{cells}x{cells}"),
        "size": l,
        "period": pi,
        "seed": 7,
        "patterns": "patterns",
        "kinds": { "street": { "density": 0.09 } },
        "legend": { "#": "street" },
        "grid": vec![row; cells],
    });
    (serde_json::to_string_pretty(&map).expect("a map serialises") + "\n", library)
}
