//! Stage 3: collision removal (seed paper §3.4, Algorithm 2, eqs. 5–10).
//!
//! A distance matrix `M` holds, for every pair of agent paths, their closest
//! approach over all periodic instance pairs ([`crate::proximity`]). *Fixed
//! movers* — static obstacles and the seam ghosts (docs/design.md "Seams") —
//! sit in extra columns. While the worst entry is below its threshold (2r for
//! agents and ghosts, r to an obstacle's surface, plus the solver margin), the
//! two paths get a control point at their closest approach, pushed apart by
//! `F = R(φ)·Δp̂·θ·w` (eq. 5) with a seeded random rotation
//! `φ ∈ [−0.5, 0.5]` rad and speed weights `w_i = u_j / (u_i + u_j)` (eq. 6);
//! only the rows and columns of the changed paths are recomputed. Boundary
//! points and crossing stubs never move. The loop stops at an iteration cap
//! and says which agents still collide, when and where.
//!
//! | solver | module |
//! |---|---|
//! | the seed paper's Algorithm 2 as written, with its [`paper::DistanceMatrix`] | [`paper`] |
//! | the project's solver: pruned [`matrix::IncrementalMatrix`], smooth pushes, LP [`refine`]ment | [`default`] |
//! | the original crowd patches' social forces | [`social_forces`] |
//!
//! Shared: [`params`] (parameters, matrix entries, outcome) and the
//! [`infeasibility`] proof that runs before the project's solver.

pub mod default;
pub mod infeasibility;
pub mod matrix;
pub mod paper;
pub mod params;
pub mod refine;
pub mod social_forces;

pub use infeasibility::{Conflict, conflicts_of, infeasibility, max_walking_speed};
pub use matrix::find_contacts;
pub use params::{Cell, CollisionOutcome, CollisionParams};

use crate::model::{Obstacle, SolverKind};
use crate::path::Agent;
use crate::proximity::Ghost;

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
