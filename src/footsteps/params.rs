//! The footstep planner's parameters and its result (course notes, BPK
//! §5.3: the step cost's energy rates and weights; docs/design.md "5a.
//! Footsteps"): [`FootstepParams`], the search's heuristic
//! [`SearchBound`], and the [`FootstepPlan`] of one agent.

use crowdpatch_runtime::format::Footstep;

/// Parameters of the planner.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FootstepParams {
    /// Agent mass M `[kg]`.
    pub mass: f64,
    /// Energy rate standing, e_s `[J/(kg·s)]` (BPK: 2.23).
    pub e_s: f64,
    /// Energy coefficient of speed, e_w `[J·s/(kg·m²)]` (BPK: 1.26).
    pub e_w: f64,
    /// Plant-time grid `[s]`.
    pub time_step: f64,
    /// Shortest step `[s]`.
    pub min_duration: f64,
    /// Longest step `[s]`.
    pub max_duration: f64,
    /// Weight of the squared root miss `[J/m²]`.
    pub track_weight: f64,
    /// Weight of the squared log time warp `[J]`.
    pub warp_weight: f64,
    /// Weight of the squared excess of a step's root progress over the step
    /// length its landing footprint was made for `[J/m²]`.
    pub length_weight: f64,
    /// Largest turn of one step `[rad]`.
    pub max_turn: f64,
    /// Weight of the squared turn beyond what the steps' clips turn `[J/rad²]`.
    pub turn_weight: f64,
    /// Farthest a landing may lie outside the library's landing hull `[m]`
    /// (a step the legs cannot take is not planned: the body would have to
    /// crouch or the planted foot slide).
    pub max_miss: f64,
    /// The A* heuristic and pruning (the same least cost either way).
    pub bound: SearchBound,
}

/// The heuristic of the footstep search. Both are admissible, so A* finds
/// a plan of least cost with either; where two plans cost the same to the
/// millijoule, each may return a different one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SearchBound {
    /// The energy of walking straight to the goal in the time left,
    /// `M (e_s τ + e_w D²/τ)` (BPK §5.4 with the time constraint), every
    /// step out of an expanded plant costed: the planner as it was, kept to
    /// check and to measure the other against.
    Straight,
    /// The least cost to the goal over the plant grid with each step at a
    /// lower bound of its cost (a backward pass over the grid, O(grid ×
    /// steps) cheap bounds), and steps that cannot belong to a plan
    /// cheaper than a greedy one left uncosted.
    #[default]
    Relaxed,
}

impl Default for FootstepParams {
    fn default() -> Self {
        FootstepParams {
            mass: 70.0,
            e_s: 2.23,
            e_w: 1.26,
            time_step: 1.0 / 30.0,
            min_duration: 0.25,
            max_duration: 1.5,
            track_weight: 20_000.0,
            warp_weight: 60.0,
            length_weight: 5_000.0,
            max_turn: 1.6,
            turn_weight: 40.0,
            max_miss: 0.12,
            bound: SearchBound::Relaxed,
        }
    }
}

/// A footstep plan of one agent.
#[derive(Debug, Clone, PartialEq)]
pub struct FootstepPlan {
    /// Footsteps in time order; the first two (and, for an exit or a loop,
    /// the last two) are the boundary convention's.
    pub footsteps: Vec<Footstep>,
    /// Cost of the plan `[J]`.
    pub cost: f64,
    /// A* nodes expanded.
    pub expanded: usize,
    /// Step costs computed (the search's work: each ~100 ns).
    pub costed: usize,
    /// Whether the limits had to be relaxed to find a plan.
    pub relaxed: bool,
}
