//! Stage 3: collision removal (seed paper §3.4, Algorithm 2, eqs. 5–10).
//!
//! A distance matrix `M` holds, for every pair of agent paths, their closest
//! approach over all periodic instance pairs (closed form per segment pair,
//! eqs. 8–10): path `a` at time `t` is compared with path `b` at `t + kπ` for
//! every integer `k` at which both exist (for `a = b`, every `k ≠ 0`: the
//! agent's own other instances). *Fixed movers* — static obstacles and the
//! seam ghosts of DESIGN.md — sit in extra columns. While the worst entry is
//! below its threshold (2r for agents and ghosts, r to an obstacle's surface,
//! plus the solver margin), the two paths get a control point at their
//! closest approach, pushed apart by `F = R(φ)·Δp̂·θ·w` (eq. 5) with a seeded
//! random rotation `φ ∈ [−0.5, 0.5]` rad and speed weights
//! `w_i = u_j / (u_i + u_j)` (eq. 6); only the rows and columns of the two
//! changed paths are recomputed. Boundary points and crossing stubs never
//! move. The loop stops at an iteration cap and says which agents still
//! collide, when and where.

use crate::geometry::{Vec2, closer_than, segment_obstacle_distance};
use crate::model::{Crossing, Direction, Obstacle, Patch, SolverKind};
use crate::trajectory::{Agent, ControlPoint, Path, PointKind};

pub mod default;
pub mod matrix;
pub mod paper;
pub mod refine;
pub mod social_forces;

/// Closest approach of two paths (or a path and a ghost).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Approach {
    /// Centre distance at the closest approach `[m]`.
    pub distance: f64,
    /// Time on the first path `[s]` (its own unwrapped time).
    pub t_a: f64,
    /// Time on the second path `[s]` (its own unwrapped time; `t_b − t_a` is
    /// a whole number of periods).
    pub t_b: f64,
    /// Position on the first path `[m]`.
    pub p_a: Vec2,
    /// Position on the second path `[m]`.
    pub p_b: Vec2,
}

/// Closest approach of `a(t)` and `b(t + shift)` over their common times, or
/// `None` if they never coexist. Sweeps both polylines once: O(n_a + n_b).
pub fn closest_with_shift(a: &Path, b: &Path, shift: f64) -> Option<Approach> {
    closest_with_shift_in(a, b, shift, f64::NEG_INFINITY, f64::INFINITY)
}

/// [`closest_with_shift`] restricted to the times `t ∈ [lo, hi]` of `a`
/// (`b` at `t + shift`): the closest approach within a time window, or `None`
/// if the paths do not coexist there. O(segments in the window).
pub fn closest_with_shift_in(a: &Path, b: &Path, shift: f64, lo: f64, hi: f64) -> Option<Approach> {
    let t0 = a.start().max(b.start() - shift).max(lo);
    let t1 = a.end().min(b.end() - shift).min(hi);
    if t1 < t0 {
        return None;
    }
    let mut i = a.segment_at(t0);
    let mut j = b.segment_at(t0 + shift);
    let mut t = t0;
    let (mut va, mut vb) = (a.segment_velocity(i), b.segment_velocity(j));
    // (squared distance, start, offset, positions and velocities there)
    let mut best: Option<(f64, f64, f64, Vec2, Vec2, Vec2, Vec2)> = None;
    loop {
        let ea = a.points[i + 1].t;
        let eb = b.points[j + 1].t - shift;
        let te = ea.min(eb).min(t1);
        if te >= t {
            let pa = a.points[i].p + va * (t - a.points[i].t);
            let pb = b.points[j].p + vb * (t + shift - b.points[j].t);
            // Eqs. 8–10 (as `geometry::closest_approach`), squared.
            let w = pa - pb;
            let dv = va - vb;
            let dv2 = dv.norm_squared();
            let dt = if dv2 > 0.0 { (-w.dot(&dv) / dv2).clamp(0.0, te - t) } else { 0.0 };
            let d2 = (w + dv * dt).norm_squared();
            if best.is_none_or(|bst| d2 < bst.0) {
                best = Some((d2, t, dt, pa, va, pb, vb));
            }
        }
        if te >= t1 {
            break;
        }
        if ea <= te {
            i += 1;
        }
        if eb <= te {
            j += 1;
        }
        if i + 1 >= a.points.len() || j + 1 >= b.points.len() {
            break;
        }
        if ea <= te {
            va = a.segment_velocity(i);
        }
        if eb <= te {
            vb = b.segment_velocity(j);
        }
        t = te;
    }
    best.map(|(d2, t, dt, pa, va, pb, vb)| Approach {
        distance: d2.sqrt(),
        t_a: t + dt,
        t_b: t + dt + shift,
        p_a: pa + va * dt,
        p_b: pb + vb * dt,
    })
}

/// The period shifts `k` at which `a(t)` and `b(t + kπ)` coexist.
pub fn shifts(a: &Path, b: &Path, period: f64) -> std::ops::RangeInclusive<i64> {
    let lo = ((b.start() - a.end()) / period).ceil() as i64;
    let hi = ((b.end() - a.start()) / period).floor() as i64;
    lo..=hi
}

/// Closest approach of two paths over every pair of their periodic
/// instances, `a(t)` against `b(t + kπ)`, leaving out the shift `skip` (0 for
/// an agent against its own other instances; for a ghost against the agent
/// crossing there, the shift at which they are one and the same).
pub fn closest_periodic(a: &Path, b: &Path, period: f64, skip: Option<i64>) -> Option<Approach> {
    let mut best: Option<Approach> = None;
    for k in shifts(a, b, period) {
        if Some(k) == skip {
            continue;
        }
        if let Some(ap) = closest_with_shift(a, b, k as f64 * period)
            && best.is_none_or(|bst| ap.distance < bst.distance)
        {
            best = Some(ap);
        }
    }
    best
}

/// Total time `[s]` during which `a` and `b` (all instance pairs but the
/// shift `skip`) are closer than `threshold`, and the number of instance
/// pairs (shifts) that ever are.
pub fn overlap(a: &Path, b: &Path, period: f64, skip: Option<i64>, threshold: f64) -> (usize, f64) {
    let mut count = 0;
    let mut total = 0.0;
    for k in shifts(a, b, period) {
        if Some(k) == skip {
            continue;
        }
        let shift = k as f64 * period;
        let t0 = a.start().max(b.start() - shift);
        let t1 = a.end().min(b.end() - shift);
        if t1 <= t0 {
            continue;
        }
        let mut time = 0.0;
        let mut i = a.segment_at(t0);
        let mut j = b.segment_at(t0 + shift);
        let mut t = t0;
        loop {
            let ea = a.points[i + 1].t;
            let eb = b.points[j + 1].t - shift;
            let te = ea.min(eb).min(t1);
            if te > t {
                let va = a.segment_velocity(i);
                let vb = b.segment_velocity(j);
                let pa = a.points[i].p + va * (t - a.points[i].t);
                let pb = b.points[j].p + vb * (t + shift - b.points[j].t);
                if let Some((s, e)) = closer_than(pa, va, pb, vb, te - t, threshold) {
                    time += e - s;
                }
            }
            if te >= t1 {
                break;
            }
            if ea <= te {
                i += 1;
            }
            if eb <= te {
                j += 1;
            }
            if i + 1 >= a.points.len() || j + 1 >= b.points.len() {
                break;
            }
            t = te;
        }
        if time > 0.0 {
            count += 1;
            total += time;
        }
    }
    (count, total)
}

/// Closest approach of a path to a static obstacle: `(t, position, signed
/// distance to the surface, push direction)`.
pub fn closest_to_obstacle(a: &Path, o: &Obstacle) -> (f64, Vec2, f64, Vec2) {
    let mut best = (a.start(), a.points[0].p, f64::INFINITY, Vec2::new(1.0, 0.0));
    for w in a.points.windows(2) {
        let (u, d, dir) = segment_obstacle_distance(w[0].p, w[1].p, o);
        if d < best.2 {
            best = (w[0].t + (w[1].t - w[0].t) * u, w[0].p + (w[1].p - w[0].p) * u, d, dir);
        }
    }
    best
}

/// A seam ghost: the neighbour tile's agent crossing a boundary point, as a
/// fixed straight path outside the patch (DESIGN.md "Seams").
#[derive(Debug, Clone, PartialEq)]
pub struct Ghost {
    /// The boundary point it crosses.
    pub crossing: Crossing,
    /// The agent of this patch that crosses there, and the shift `k` at which
    /// `agent(t)` and `ghost(t + kπ)` are the same walker (skipped).
    pub owner: Option<(usize, i64)>,
    /// Its path: two fixed points.
    pub path: Path,
}

/// The ghosts of every boundary point of `patch`; `owner_of` gives the agent
/// crossing each point.
pub fn ghosts(patch: &Patch, agents: &[Agent]) -> Vec<Ghost> {
    let depth = 2.0 * patch.header.agent_radius;
    patch
        .crossings()
        .into_iter()
        .map(|c| {
            let ((p0, t0), (p1, t1)) = c.ghost(depth);
            let owner = agents.iter().enumerate().find_map(|(i, a)| {
                let crossing_time = match c.direction {
                    Direction::Entry => {
                        a.entry.filter(|e| e.side == c.side && e.index == c.index).map(|_| a.path.start())
                    }
                    Direction::Exit => a.exit.filter(|x| x.side == c.side && x.index == c.index).map(|_| a.path.end()),
                }?;
                // agent(T) is the ghost at c.t: T + kπ = c.t.
                Some((i, ((c.t - crossing_time) / patch.header.period).round() as i64))
            });
            let fixed = |p, t| ControlPoint { p, t, kind: PointKind::Boundary };
            Ghost { crossing: c, owner, path: Path { points: vec![fixed(p0, t0), fixed(p1, t1)], looped: false } }
        })
        .collect()
}

/// What an agent collides with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Other {
    /// Another agent (or, if the same index, another instance of itself).
    Agent(usize),
    /// A static obstacle.
    Obstacle(usize),
    /// The ghost of a boundary point (an agent of the neighbouring tile).
    Ghost(usize),
}

/// A remaining collision: who, when, where, how close.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Contact {
    /// The agent.
    pub agent: usize,
    /// What it collides with.
    pub other: Other,
    /// Play time of the closest approach `[s]`, in `[0, π)`.
    pub time: f64,
    /// Position of the agent then `[m]`.
    pub position: Vec2,
    /// Centre distance (to an obstacle: to its surface) `[m]`.
    pub distance: f64,
    /// Distance needed: 2r, or r to an obstacle `[m]`.
    pub required: f64,
    /// Unwrapped time on the agent's own path `[s]`.
    pub agent_time: f64,
    /// Unwrapped time on the other agent's own path `[s]` (equal to
    /// `agent_time` for fixed movers).
    pub other_time: f64,
}

/// Parameters of collision removal.
#[derive(Debug, Clone, PartialEq)]
pub struct CollisionParams {
    /// Agent radius r `[m]`.
    pub radius: f64,
    /// Patch side L `[m]`.
    pub size: f64,
    /// Period π `[s]`.
    pub period: f64,
    /// Clearance aimed for beyond the thresholds `[m]`.
    pub margin: f64,
    /// Iteration cap.
    pub max_iterations: usize,
    /// Merge interval for control points `[s]`.
    pub merge_interval: f64,
    /// Solver variant.
    pub method: SolverKind,
    /// Comfort speed u_cft `[m/s]`.
    pub comfort_speed: f64,
    /// Depth of the fixed crossing stubs `[m]`.
    pub stub_depth: f64,
    /// Seed of the random rotations.
    pub seed: u64,
}

impl CollisionParams {
    /// Parameters from a patch's values and solver options.
    pub fn from_patch(patch: &Patch) -> CollisionParams {
        CollisionParams {
            radius: patch.header.agent_radius,
            size: patch.header.size,
            period: patch.header.period,
            margin: patch.solver.margin,
            max_iterations: patch.solver.max_iterations,
            merge_interval: patch.solver.merge_interval,
            method: patch.solver.method,
            comfort_speed: patch.header.comfort_speed,
            stub_depth: patch.stub_depth(),
            seed: patch.header.seed,
        }
    }
}

/// Entry of the distance matrix: closest approach and how far below its
/// target it is (`gap < 0` ⇒ must be resolved).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cell {
    /// Distance minus target `[m]`.
    pub gap: f64,
    /// The closest approach.
    pub approach: Approach,
    /// Direction pushing the agent away (obstacles only).
    pub dir: Vec2,
}

/// The distance matrix of Algorithm 2 with fixed-mover columns, kept up to
/// date row by row.
pub struct DistanceMatrix<'a> {
    params: &'a CollisionParams,
    obstacles: &'a [Obstacle],
    ghosts: &'a [Ghost],
    /// `agents[i][j]` for `j ≥ i`.
    agents: Vec<Vec<Option<Cell>>>,
    /// `fixed[i][k]`: obstacles first, then ghosts.
    fixed: Vec<Vec<Option<Cell>>>,
}

impl<'a> DistanceMatrix<'a> {
    /// Computes the whole matrix. O(n² · segments · shifts).
    pub fn new(
        paths: &[&Path],
        obstacles: &'a [Obstacle],
        ghosts: &'a [Ghost],
        params: &'a CollisionParams,
    ) -> DistanceMatrix<'a> {
        let n = paths.len();
        let mut m = DistanceMatrix {
            params,
            obstacles,
            ghosts,
            agents: vec![vec![None; n]; n],
            fixed: vec![vec![None; obstacles.len() + ghosts.len()]; n],
        };
        for i in 0..n {
            m.update_row(paths, i, i..n);
        }
        m
    }

    fn agent_cell(&self, a: &Path, b: &Path, same: bool) -> Option<Cell> {
        if same && a.looped {
            // A loop has one instance at any time (its ends meet, nothing else).
            return None;
        }
        let target = 2.0 * self.params.radius + self.params.margin;
        closest_periodic(a, b, self.params.period, same.then_some(0)).map(|ap| Cell {
            gap: ap.distance - target,
            approach: ap,
            dir: Vec2::zeros(),
        })
    }

    fn update_row(&mut self, paths: &[&Path], i: usize, cols: std::ops::Range<usize>) {
        for j in cols {
            let cell = self.agent_cell(paths[i], paths[j], i == j);
            let (a, b) = if i <= j { (i, j) } else { (j, i) };
            // Keep the approach oriented as (min index, max index).
            self.agents[a][b] = if i <= j { cell } else { cell.map(flip) };
        }
        let r = self.params.radius;
        let margin = self.params.margin;
        for (k, o) in self.obstacles.iter().enumerate() {
            let (t, p, d, dir) = closest_to_obstacle(paths[i], o);
            self.fixed[i][k] = Some(Cell {
                gap: d - (r + margin),
                approach: Approach { distance: d, t_a: t, t_b: t, p_a: p, p_b: p - dir * d },
                dir,
            });
        }
        let off = self.obstacles.len();
        for (g, ghost) in self.ghosts.iter().enumerate() {
            let skip = ghost.owner.filter(|o| o.0 == i).map(|o| o.1);
            self.fixed[i][off + g] = closest_periodic(paths[i], &ghost.path, self.params.period, skip).map(|ap| Cell {
                gap: ap.distance - (2.0 * r + margin),
                approach: ap,
                dir: Vec2::zeros(),
            });
        }
    }

    /// Recomputes row and column `i` after path `i` changed. O(n · segments).
    pub fn update(&mut self, paths: &[&Path], i: usize) {
        self.update_row(paths, i, 0..paths.len());
    }

    /// The worst entry: `(agent, other, cell)`.
    pub(crate) fn worst_entry(&self) -> Option<(usize, Other, Cell)> {
        let mut best: Option<(usize, Other, Cell)> = None;
        for (i, row) in self.agents.iter().enumerate() {
            for (j, c) in row.iter().enumerate().skip(i) {
                if let Some(c) = c
                    && best.is_none_or(|b| c.gap < b.2.gap)
                {
                    best = Some((i, Other::Agent(j), *c));
                }
            }
        }
        let off = self.obstacles.len();
        for (i, row) in self.fixed.iter().enumerate() {
            for (k, c) in row.iter().enumerate() {
                if let Some(c) = c
                    && best.is_none_or(|b| c.gap < b.2.gap)
                {
                    let other = if k < off { Other::Obstacle(k) } else { Other::Ghost(k - off) };
                    best = Some((i, other, *c));
                }
            }
        }
        best
    }

    /// Smallest gap below target (negative ⇒ something to resolve).
    pub fn min_gap(&self) -> Option<f64> {
        self.worst_entry().map(|w| w.2.gap)
    }

    /// Every entry closer than its real threshold (2r, or r to obstacles;
    /// without the margin), as contacts.
    pub fn contacts(&self) -> Vec<Contact> {
        let r = self.params.radius;
        let pi = self.params.period;
        let mut out = Vec::new();
        for (i, row) in self.agents.iter().enumerate() {
            for (j, c) in row.iter().enumerate().skip(i) {
                if let Some(c) = c
                    && c.approach.distance < 2.0 * r
                {
                    out.push(Contact {
                        agent: i,
                        other: Other::Agent(j),
                        time: c.approach.t_a.rem_euclid(pi),
                        position: c.approach.p_a,
                        distance: c.approach.distance,
                        required: 2.0 * r,
                        agent_time: c.approach.t_a,
                        other_time: c.approach.t_b,
                    });
                }
            }
        }
        let off = self.obstacles.len();
        for (i, row) in self.fixed.iter().enumerate() {
            for (k, c) in row.iter().enumerate() {
                let Some(c) = c else { continue };
                let (other, required) =
                    if k < off { (Other::Obstacle(k), r) } else { (Other::Ghost(k - off), 2.0 * r) };
                if c.approach.distance < required {
                    out.push(Contact {
                        agent: i,
                        other,
                        time: c.approach.t_a.rem_euclid(pi),
                        position: c.approach.p_a,
                        distance: c.approach.distance,
                        required,
                        agent_time: c.approach.t_a,
                        other_time: c.approach.t_b,
                    });
                }
            }
        }
        out
    }
}

fn flip(c: Cell) -> Cell {
    let a = c.approach;
    Cell { approach: Approach { distance: a.distance, t_a: a.t_b, t_b: a.t_a, p_a: a.p_b, p_b: a.p_a }, ..c }
}

/// Outcome of collision removal.
#[derive(Debug, Clone, PartialEq)]
pub struct CollisionOutcome {
    /// Iterations run (pushes applied).
    pub iterations: usize,
    /// Whether no collision remains (all distances at least their thresholds).
    pub converged: bool,
    /// The collisions that remain, when not converged.
    pub remaining: Vec<Contact>,
    /// Whether the run was cancelled through the progress callback.
    pub cancelled: bool,
    /// Global refinement rounds (linear programs solved).
    pub lp_rounds: usize,
    /// Pairs of boundary points proven inseparable; when not empty the
    /// solver did not iterate.
    pub infeasible: Vec<Conflict>,
}

/// Removes collisions between `agents` (in place) with the solver
/// `params.method`: [`paper::remove_collisions`] (seed paper Algorithm 2 as
/// written), [`default::remove_collisions`] (the project's solver) or
/// [`social_forces::remove_collisions`] (Yersin et al. 2009).
/// `progress(iteration, min_gap)` is called every iteration and may return
/// `false` to cancel.
pub fn remove_collisions(
    agents: &mut [Agent],
    obstacles: &[Obstacle],
    ghosts: &[Ghost],
    params: &CollisionParams,
    progress: &mut dyn FnMut(usize, f64) -> bool,
) -> CollisionOutcome {
    match params.method {
        SolverKind::Paper => paper::remove_collisions(agents, obstacles, ghosts, params, progress),
        SolverKind::Default | SolverKind::Greedy => {
            default::remove_collisions(agents, obstacles, ghosts, params, progress)
        }
        SolverKind::SocialForces => social_forces::remove_collisions(agents, obstacles, ghosts, params, progress),
    }
}

/// Two boundary points whose fixed parts — crossing stubs inside the patch,
/// ghosts outside (DESIGN.md "Seams") — come too close in space and time for
/// any two walkers through them to stay 2r apart (see [`infeasibility`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Conflict {
    /// One boundary point.
    pub a: Crossing,
    /// The other.
    pub b: Crossing,
    /// `min |p_a(t) − p_b(t')| + u·|t − t'|` over their fixed parts `[m]`
    /// (< 2r; the plain distance when `t = t'`).
    pub distance: f64,
    /// Play time of that closest approach `[s]`.
    pub time: f64,
}

impl Conflict {
    /// `sides.south.entries[2] and sides.west.exits[0] come 0.412 m apart at t = 3.10 s (2r = 0.6 m)`.
    pub fn describe(&self, radius: f64) -> String {
        format!(
            "{} and {} come {:.3} m apart at t = {:.2} s (2r = {} m)",
            self.a.path(),
            self.b.path(),
            self.distance,
            self.time,
            2.0 * radius
        )
    }
}

/// Every pair of boundary points of `patch` that is proven inseparable (see
/// [`Conflict`]). O(p²) in the number of boundary points.
///
/// The proof holds in the crowd-patch model for walkers no faster than
/// [`max_walking_speed`] (1.5 m/s at the default comfort speed): each agent
/// walks its fixed crossing stub (depth `stub_depth`, boundary velocity)
/// inside the patch and the neighbour's agent walks the ghost (2r) outside;
/// these never move, so two that overlap closer than 2r collide in every
/// solution (no speed bound needed), and two whose points are `Δt` apart in
/// time collide when `|Δp| + u·|Δt| < 2r` ([`conflicts_of`]). DESIGN.md's
/// criterion `|p₁ − p₂| + 1.5 m/s·|Δt| < 2r` is the case of the two boundary
/// points themselves (tested in `tests/bench.rs`).
pub fn infeasibility(patch: &Patch) -> Vec<Conflict> {
    conflicts_of(
        &patch.crossings(),
        patch.stub_depth(),
        patch.header.agent_radius,
        patch.header.period,
        max_walking_speed(patch.header.comfort_speed),
    )
}

/// The walking speed `[m/s]` up to which infeasibility is proven: DESIGN.md's
/// 1.5 m/s at the default comfort speed of 1.33 m/s, scaled with the comfort
/// speed (so `|p₁ − p₂| + 1.5 m/s·|Δt| < 2r` on the boundary points
/// themselves is one case of the proof).
pub fn max_walking_speed(comfort_speed: f64) -> f64 {
    1.5 * comfort_speed / crate::model::DEFAULT_COMFORT_SPEED
}

/// The inseparable pairs among `crossings` (see [`infeasibility`]): with
/// free parts walking at most `max_speed` `[m/s]`, two boundary points whose
/// fixed parts have points `p_a(t)`, `p_b(t')` (a period shift apart, not
/// both ghosts) with `|p_a(t) − p_b(t')| + max_speed·|t − t'| < 2r` collide in
/// every solution: when `a` is at `p_a(t)`, `b` can be at most
/// `max_speed·|t − t'|` from `p_b(t')`. `t = t'` is the plain overlap of the
/// fixed parts, which needs no speed bound.
pub fn conflicts_of(
    crossings: &[Crossing],
    stub_depth: f64,
    radius: f64,
    period: f64,
    max_speed: f64,
) -> Vec<Conflict> {
    let (depth, r, pi) = (stub_depth, radius, period);
    // How far a boundary point's fixed parts reach from it `[m]`.
    let reach = |c: &Crossing| c.velocity.norm() * c.time_to_depth(depth).max(c.time_to_depth(2.0 * r));
    let reaches: Vec<f64> = crossings.iter().map(reach).collect();
    let mut out = Vec::new();
    for (i, a) in crossings.iter().enumerate() {
        for (j, b) in crossings.iter().enumerate().skip(i + 1) {
            // Parts that cannot come within 2r of each other.
            if (a.position - b.position).norm() >= reaches[i] + reaches[j] + 2.0 * r {
                continue;
            }
            if let Some((d, t)) = speed_bounded_distance(a, b, depth, 2.0 * r, pi, max_speed, 2.0 * r)
                && d < 2.0 * r - 1e-9
            {
                out.push(Conflict { a: *a, b: *b, distance: d, time: t });
            }
        }
    }
    out
}

/// `min |p_a(t) − p_b(t')| + u·|t − t'|` over the fixed parts of two boundary
/// points (crossing stub of depth `stub_depth` inside, ghost of depth
/// `ghost_depth` outside; not ghost against ghost) and the period shifts, with
/// the play time `[s]` of the first point there. The function is jointly
/// convex in `(t, t')` (a norm of an affine map plus a multiple of one), so
/// nested ternary searches find its minimum over each pair of parts. Pairs of
/// parts and shifts that cannot come below `threshold` `[m]` are skipped, so
/// the result is exact below it and `None` or at least it otherwise.
pub fn speed_bounded_distance(
    a: &Crossing,
    b: &Crossing,
    stub_depth: f64,
    ghost_depth: f64,
    period: f64,
    u: f64,
    threshold: f64,
) -> Option<(f64, f64)> {
    type Part = ((Vec2, f64), (Vec2, f64));
    let parts = |c: &Crossing| [c.stub(stub_depth), c.ghost(ghost_depth)];
    let at = |p: &Part, t: f64| {
        let ((p0, t0), (p1, t1)) = *p;
        p0 + (p1 - p0) * ((t - t0) / (t1 - t0))
    };
    fn ternary(lo: f64, hi: f64, f: &dyn Fn(f64) -> f64) -> (f64, f64) {
        let (mut lo, mut hi) = (lo, hi);
        for _ in 0..40 {
            let m1 = lo + (hi - lo) / 3.0;
            let m2 = hi - (hi - lo) / 3.0;
            if f(m1) <= f(m2) { hi = m2 } else { lo = m1 }
        }
        let t = (lo + hi) / 2.0;
        (f(t), t)
    }
    let mut best: Option<(f64, f64)> = None;
    for (ia, pa) in parts(a).iter().enumerate() {
        for (ib, pb) in parts(b).iter().enumerate() {
            if ia == 1 && ib == 1 {
                continue;
            }
            // Parts whose boxes are 2r apart never conflict (the function is
            // at least the distance of the boxes).
            let (lo_a, hi_a) = (pa.0.0.inf(&pa.1.0), pa.0.0.sup(&pa.1.0));
            let (lo_b, hi_b) = (pb.0.0.inf(&pb.1.0), pb.0.0.sup(&pb.1.0));
            let gap = (lo_b - hi_a).sup(&(lo_a - hi_b)).sup(&Vec2::zeros()).norm();
            if gap >= threshold {
                continue;
            }
            // Shifts whose time gap alone costs 2r or more are skipped too.
            let slack = threshold / u.max(1e-9);
            let k0 = ((pb.0.1 - pa.1.1 - slack) / period).floor() as i64;
            let k1 = ((pb.1.1 - pa.0.1 + slack) / period).ceil() as i64;
            for k in k0..=k1 {
                let shift = k as f64 * period;
                // b's part on a's clock.
                let pbs: Part = ((pb.0.0, pb.0.1 - shift), (pb.1.0, pb.1.1 - shift));
                let time_gap = (pbs.0.1 - pa.1.1).max(pa.0.1 - pbs.1.1).max(0.0);
                if gap + u * time_gap >= threshold {
                    continue;
                }
                let inner = |t: f64| {
                    let pt = at(pa, t);
                    ternary(pbs.0.1, pbs.1.1, &|s: f64| (pt - at(&pbs, s)).norm() + u * (t - s).abs()).0
                };
                let (d, t) = ternary(pa.0.1, pa.1.1, &inner);
                if best.is_none_or(|(bd, _)| d < bd) {
                    best = Some((d, t.rem_euclid(period)));
                }
            }
        }
    }
    best
}

/// Every contact between `agents` and the fixed movers, from scratch.
pub fn find_contacts(
    agents: &[Agent],
    obstacles: &[Obstacle],
    ghosts: &[Ghost],
    params: &CollisionParams,
) -> Vec<Contact> {
    let paths: Vec<&Path> = agents.iter().map(|a| &a.path).collect();
    matrix::IncrementalMatrix::new(&paths, obstacles, ghosts, params).contacts()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(points: &[(f64, f64, f64)]) -> Path {
        Path { points: points.iter().map(|&(x, y, t)| ControlPoint::free(Vec2::new(x, y), t)).collect(), looped: false }
    }

    /// Minimum distance by sampling every 1 ms over all shifts.
    fn sampled(a: &Path, b: &Path, period: f64, skip_zero: bool) -> f64 {
        let mut best = f64::INFINITY;
        for k in -5..=5 {
            if k == 0 && skip_zero {
                continue;
            }
            let shift = k as f64 * period;
            let (t0, t1) = (a.start().max(b.start() - shift), a.end().min(b.end() - shift));
            if t1 < t0 {
                continue;
            }
            let n = ((t1 - t0) / 0.001).ceil() as usize + 1;
            for s in 0..=n {
                let t = t0 + (t1 - t0) * s as f64 / n as f64;
                best = best.min((a.position(t) - b.position(t + shift)).norm());
            }
        }
        best
    }

    #[test]
    fn closest_periodic_matches_sampling() {
        let a = path(&[(0.0, 0.0, 1.0), (5.0, 3.0, 4.0), (9.0, 3.5, 8.0), (16.0, 4.0, 13.0)]);
        let b = path(&[(8.0, 0.0, 6.0), (7.0, 8.0, 9.0), (6.5, 16.0, 15.0)]);
        for (x, y, skip) in [(&a, &b, false), (&a, &a, true), (&b, &b, true), (&b, &a, false)] {
            let exact = closest_periodic(x, y, 10.0, skip.then_some(0)).map_or(f64::INFINITY, |ap| ap.distance);
            let s = sampled(x, y, 10.0, skip);
            if s.is_infinite() {
                assert!(exact.is_infinite(), "{exact} vs never together");
                continue;
            }
            assert!(exact <= s + 1e-9 && s - exact < 1e-2, "{exact} vs {s}");
        }
        // The approach's points are where the paths are at those times.
        let ap = closest_periodic(&a, &b, 10.0, None).unwrap();
        assert!((a.position(ap.t_a) - ap.p_a).norm() < 1e-9);
        assert!((b.position(ap.t_b) - ap.p_b).norm() < 1e-9);
        assert!(((ap.t_b - ap.t_a) / 10.0 - ((ap.t_b - ap.t_a) / 10.0).round()).abs() < 1e-9);
    }

    #[test]
    fn overlap_time_of_a_head_on_pass() {
        // Two agents 0.2 m apart laterally pass head-on at 1 m/s each: closer
        // than 0.6 m while |2(t − 5)|² + 0.04 < 0.36 ⇔ |t − 5| < √0.08.
        let a = path(&[(0.0, 0.0, 0.0), (10.0, 0.0, 10.0)]);
        let b = path(&[(10.0, 0.2, 0.0), (0.0, 0.2, 10.0)]);
        let (count, time) = overlap(&a, &b, 100.0, None, 0.6);
        assert_eq!(count, 1);
        assert!((time - 2.0 * 0.08f64.sqrt()).abs() < 1e-9, "{time}");
    }
}
