//! The parameters, matrix entries and outcome shared by the collision
//! solvers.

use crate::geometry::Vec2;
use crate::model::{Patch, SolverKind};
use crate::proximity::{Approach, Contact};

/// No move makes a segment faster than this many times u_cft (unless it
/// already was): 2.13 m/s at the default comfort speed, under the 2.2 m/s
/// above which walkers run (the walk-to-run transition of humans lies at
/// about 2 m/s, Hreljac 1993).
pub const HARD_SPEED_FACTOR: f64 = 1.6;

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

impl Cell {
    /// The same entry seen from the other path: first and second swap.
    pub fn flipped(self) -> Cell {
        let a = self.approach;
        Cell { approach: Approach { distance: a.distance, t_a: a.t_b, t_b: a.t_a, p_a: a.p_b, p_b: a.p_a }, ..self }
    }
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
    pub infeasible: Vec<super::infeasibility::Conflict>,
    /// Agents whose moves were let run (the project's solver, after a
    /// stall: `default::SPRINT_SPEED_FACTORS`); empty for the other
    /// solvers.
    pub hurried: Vec<usize>,
}
