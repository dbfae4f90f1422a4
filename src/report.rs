//! The JSON report of a bake (`crowdpatch bake --report`): outcome, metrics,
//! one record per matched pair, the collisions left, notes and stage
//! timings.

use crate::bake::{Bake, Timings};
use crate::metrics::Metrics;
use crate::model::{Crossing, Direction, MatchingMode, SolverKind};
use crate::proximity::Other;
use crowdpatch_runtime::format::Side;
use serde::Serialize;

impl Bake {
    /// The JSON report of the bake.
    pub fn report(&self) -> Report {
        let entries = self.patch.crossings_of(Direction::Entry);
        let exits = self.patch.crossings_of(Direction::Exit);
        let point = |c: &Crossing| PointRecord { side: c.side, index: c.index, s: c.s, t: c.t };
        let describe = |o: Other| match o {
            Other::Agent(j) => format!("agent {j}"),
            Other::Obstacle(k) => format!("obstacles[{k}]"),
            Other::Ghost(g) => format!("ghost of {}", self.ghosts[g].crossing.path()),
        };
        Report {
            name: self.patch.header.name.clone(),
            seed: self.patch.header.seed,
            matching_mode: self.patch.solver.matching,
            solver: self.patch.solver.method,
            converged: self.converged(),
            iterations: self.collision.iterations,
            agents: self.agents.len(),
            metrics: self.metrics.clone(),
            matching: self
                .pairs
                .iter()
                .zip(&self.initial)
                .map(|(p, a)| MatchRecord {
                    entry: point(&entries[p.entry]),
                    exit: point(&exits[p.exit]),
                    score: p.score,
                    duration: a.path.end() - a.path.start(),
                })
                .collect(),
            remaining_collisions: self
                .remaining
                .iter()
                .map(|c| ContactRecord {
                    agent: c.agent,
                    other: describe(c.other),
                    time: c.time,
                    position: [c.position.x, c.position.y],
                    distance: c.distance,
                    required: c.required,
                })
                .collect(),
            smoothing_reverted: self.smoothing.as_ref().map(|s| s.reverted.clone()).unwrap_or_default(),
            #[cfg(feature = "skeletal")]
            animation_gate: self.skeletal.as_ref().map(|s| s.gate.clone()),
            notes: self.notes.clone(),
            timings: self.timings,
        }
    }
}

/// A boundary point in a report.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PointRecord {
    /// Side.
    pub side: Side,
    /// Index in that side's entries or exits.
    pub index: usize,
    /// Arc position `[m]`.
    pub s: f64,
    /// Time `[s]`.
    pub t: f64,
}

/// One matched pair in a report.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MatchRecord {
    /// The entry point.
    pub entry: PointRecord,
    /// The exit point it was matched to.
    pub exit: PointRecord,
    /// Preference score (seed paper eq. 4).
    pub score: f64,
    /// Time the agent spends in the patch `[s]` (extra periods included).
    pub duration: f64,
}

/// A remaining collision in a report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContactRecord {
    /// Agent index.
    pub agent: usize,
    /// What it collides with.
    pub other: String,
    /// Play time `[s]`.
    pub time: f64,
    /// Where `[m]`.
    pub position: [f64; 2],
    /// Distance `[m]`.
    pub distance: f64,
    /// Distance needed `[m]`.
    pub required: f64,
}

/// The JSON report of a bake (`crowdpatch bake --report`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Patch name.
    pub name: String,
    /// Seed used.
    pub seed: u64,
    /// Matching mode used.
    pub matching_mode: MatchingMode,
    /// Collision solver used.
    pub solver: SolverKind,
    /// Whether the result is collision-free.
    pub converged: bool,
    /// Collision-removal iterations.
    pub iterations: usize,
    /// Number of agents.
    pub agents: usize,
    /// Metrics of the final paths.
    pub metrics: Metrics,
    /// One record per matched pair.
    pub matching: Vec<MatchRecord>,
    /// Collisions left, if any.
    pub remaining_collisions: Vec<ContactRecord>,
    /// Agents whose smoothing was reverted.
    pub smoothing_reverted: Vec<usize>,
    /// The quality gate of a skeletal bake (figures, limits, the limits
    /// broken with their culprit agent and time); absent without a
    /// character. Feature `skeletal`.
    #[cfg(feature = "skeletal")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub animation_gate: Option<crate::animation::gate::GateReport>,
    /// Remarks.
    pub notes: Vec<String>,
    /// Stage timings `[ms]`.
    pub timings: Timings,
}
