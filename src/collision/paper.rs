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

use super::{CollisionOutcome, CollisionParams, DistanceMatrix, Ghost, Other};
use crate::geometry::{Vec2, rotate};
use crate::model::Obstacle;
use crate::trajectory::{Agent, Path};
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
    }
}
