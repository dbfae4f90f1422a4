//! The seed paper's collision removal, Algorithm 2 exactly as written (OPT
//! §3.4, eqs. 5–10), kept as the in-run baseline of `crowdpatch bench`.
//!
//! While the smallest entry of the distance matrix `M` is below its threshold
//! θ (2r plus the solver margin; r to an obstacle's surface), the two paths
//! get a control point at their closest approach — an existing one within the
//! merge interval is reused — and each is pushed by `F = R(φ)·Δp̂·θ·w` (eq. 5)
//! with a seeded random rotation `φ ∈ [−0.5, 0.5]` rad and the weight
//! `w_i = u_j / (u_i + u_j)`, or 0 when the point would leave the patch
//! (eq. 6); then the rows of the two paths are recomputed. Obstacles and seam
//! ghosts are agents that never move (the agent takes the whole push θ).
//! Nothing else: no stall handling, no infeasibility test, the iteration cap
//! ends it.

use super::params::{Cell, CollisionOutcome, CollisionParams};
use crate::geometry::{Vec2, rotate};
use crate::model::Obstacle;
use crate::path::{Agent, Path};
use crate::proximity::{Approach, Contact, Ghost, Other, closest_periodic, closest_to_obstacle};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Removes collisions between `agents` (in place) by Algorithm 2 of the
/// seed paper, as written. `progress(iteration, min_gap)` is called every iteration and
/// may return `false` to cancel.
pub fn remove_collisions(
    agents: &mut [Agent],
    obstacles: &[Obstacle],
    ghosts: &[Ghost],
    params: &CollisionParams,
    progress: &mut dyn FnMut(usize, f64) -> bool,
) -> CollisionOutcome {
    let mut rng = ChaCha8Rng::seed_from_u64(params.seed);
    let (r, l) = (params.radius, params.size);
    let mut matrix = {
        let paths: Vec<&Path> = agents.iter().map(|a| &a.path).collect();
        DistanceMatrix::new(&paths, obstacles, ghosts, params)
    };
    let mut iterations = 0;
    let mut cancelled = false;
    while let Some((i, other, cell)) = matrix.worst_entry() {
        if cell.gap >= 0.0 || iterations >= params.max_iterations {
            break;
        }
        if !progress(iterations, cell.gap) {
            cancelled = true;
            break;
        }
        iterations += 1;
        let ap = cell.approach;
        let theta = 2.0 * r + params.margin;
        let inside = |p: Vec2| p.x >= r && p.x <= l - r && p.y >= r && p.y <= l - r;
        match other {
            Other::Agent(j) => {
                let mut dp = ap.p_a - ap.p_b;
                if dp.norm() < 1e-9 {
                    // Exactly on top of each other: push across the relative motion.
                    let va = agents[i].path.segment_velocity(agents[i].path.segment_at(ap.t_a));
                    let vb = agents[j].path.segment_velocity(agents[j].path.segment_at(ap.t_b));
                    let rel = va - vb;
                    dp = if rel.norm() > 1e-9 {
                        Vec2::new(-rel.y, rel.x)
                    } else {
                        rotate(Vec2::new(1.0, 0.0), rng.random_range(0.0..std::f64::consts::TAU))
                    };
                }
                let dir = dp.normalize();
                let (ui, uj) = (agents[i].path.mean_speed(), agents[j].path.mean_speed());
                let (wi, wj) = if ui + uj > 1e-9 { (uj / (ui + uj), ui / (ui + uj)) } else { (0.5, 0.5) };
                let phi_i = rng.random_range(-0.5..=0.5);
                let phi_j = rng.random_range(-0.5..=0.5);
                // Control points at the closest approach (eq. 7 moves them).
                let ki = agents[i].path.movable_point_at(ap.t_a, params.merge_interval);
                let kj = agents[j].path.movable_point_at(ap.t_b, params.merge_interval);
                // Same agent, two instances: inserting the second point may
                // have shifted the first one's index; look it up again.
                let ki = if i == j { agents[i].path.movable_point_at(ap.t_a, params.merge_interval) } else { ki };
                let fi = rotate(dir, phi_i) * theta * wi;
                let fj = rotate(-dir, phi_j) * theta * wj;
                let mut moves = Vec::new();
                if let Some(k) = ki {
                    moves.push((i, k, fi));
                }
                if let Some(k) = kj {
                    moves.push((j, k, fj));
                }
                for (a, k, f) in moves {
                    let p = agents[a].path.points[k].p + f;
                    // w = 0 when the point would leave the patch (eq. 6).
                    if inside(p) {
                        agents[a].path.set_position(k, p);
                    }
                }
                let paths: Vec<&Path> = agents.iter().map(|a| &a.path).collect();
                matrix.update(&paths, i);
                if j != i {
                    matrix.update(&paths, j);
                }
            }
            Other::Obstacle(_) | Other::Ghost(_) => {
                let dir = match other {
                    Other::Obstacle(_) => cell.dir,
                    _ => {
                        let dp = ap.p_a - ap.p_b;
                        if dp.norm() > 1e-9 {
                            dp.normalize()
                        } else {
                            rotate(Vec2::new(1.0, 0.0), rng.random_range(0.0..std::f64::consts::TAU))
                        }
                    }
                };
                let phi = rng.random_range(-0.5..=0.5);
                if let Some(k) = agents[i].path.movable_point_at(ap.t_a, params.merge_interval) {
                    let p = agents[i].path.points[k].p + rotate(dir, phi) * theta;
                    if inside(p) {
                        agents[i].path.set_position(k, p);
                    }
                }
                let paths: Vec<&Path> = agents.iter().map(|a| &a.path).collect();
                matrix.update(&paths, i);
            }
        }
    }
    let remaining = matrix.contacts();
    CollisionOutcome {
        iterations,
        converged: remaining.is_empty(),
        remaining,
        cancelled,
        lp_rounds: 0,
        infeasible: vec![],
        hurried: vec![],
    }
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
            self.agents[a][b] = if i <= j { cell } else { cell.map(Cell::flipped) };
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
