//! The bake pipeline (DESIGN.md "Bake pipeline"): match → initial paths →
//! remove collisions → smooth → metrics, each stage a pure function over
//! plain data whose result is kept for inspection (the preview shows three of
//! them), then conversion to the baked format of `crowdpatch-runtime`.
//!
//! Progress leaves through a [`BakeObserver`] passed in; nothing is printed.

use crate::collision::{CollisionOutcome, CollisionParams, Contact, Ghost, Other, ghosts, remove_collisions};
use crate::matching::{Pair, match_patch};
use crate::model::{Direction, MatchingMode, Patch, SolverKind};
use crate::smoothing::{SmoothingOutcome, SmoothingParams, smooth_agents};
use crate::trajectory::{Agent, initial_paths};
use crowdpatch_runtime::format::{
    BakedAgent, BakedPatch, BakedPattern, BakedPoint, FORMAT_VERSION, Metrics, PathKey, Side, Sides, wrap_angle,
};
use serde::Serialize;
use std::time::Instant;

/// A stage of the bake, for progress reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Matching entries to exits.
    Matching,
    /// Building initial paths.
    InitialPaths,
    /// Removing collisions.
    CollisionRemoval,
    /// Smoothing.
    Smoothing,
    /// Computing metrics.
    Metrics,
    /// Planning footsteps and synthesising skeletal animation.
    Animation,
}

/// Receives progress from a bake and may cancel it.
pub trait BakeObserver {
    /// A stage starts.
    fn stage(&mut self, _stage: Stage) {}
    /// Collision removal ran `iteration` pushes; the worst remaining gap below
    /// target is `gap` `[m]` (negative). Return `false` to cancel.
    fn iteration(&mut self, _iteration: usize, _gap: f64) -> bool {
        true
    }
    /// Whether the bake should stop now.
    fn cancelled(&self) -> bool {
        false
    }
}

/// An observer that ignores everything.
pub struct Silent;
impl BakeObserver for Silent {}

/// Why a bake did not produce a result.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BakeError {
    /// The observer cancelled the bake.
    #[error("the bake was cancelled")]
    Cancelled,
}

/// Overrides of a patch document's settings for one bake.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BakeOverrides {
    /// Seed instead of the document's.
    pub seed: Option<u64>,
    /// Matching mode instead of the document's.
    pub matching: Option<MatchingMode>,
    /// Collision solver instead of the document's.
    pub method: Option<SolverKind>,
}

impl BakeOverrides {
    /// The patch with these overrides applied.
    pub fn apply(&self, patch: &Patch) -> Patch {
        let mut p = patch.clone();
        if let Some(s) = self.seed {
            p.header.seed = s;
        }
        if let Some(m) = self.matching {
            p.solver.matching = m;
        }
        if let Some(m) = self.method {
            p.solver.method = m;
        }
        p
    }
}

/// Wall time of each stage `[ms]`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Timings {
    /// Matching.
    pub matching_ms: f64,
    /// Initial paths.
    pub initial_paths_ms: f64,
    /// Collision removal.
    pub collision_removal_ms: f64,
    /// Smoothing.
    pub smoothing_ms: f64,
    /// Metrics.
    pub metrics_ms: f64,
    /// Footstep planning (skeletal bakes).
    pub footsteps_ms: f64,
    /// Skeletal animation synthesis (skeletal bakes).
    pub animation_ms: f64,
    /// Whole bake.
    pub total_ms: f64,
}

/// Everything a bake computed, stage by stage.
#[derive(Debug, Clone)]
pub struct Bake {
    /// The patch baked (overrides applied).
    pub patch: Patch,
    /// Stage 1: matched pairs, in entry order.
    pub pairs: Vec<Pair>,
    /// Stage 2: initial paths (exogenous agents in pair order, then endogenous).
    pub initial: Vec<Agent>,
    /// Stage 3: paths after collision removal.
    pub collision_free: Vec<Agent>,
    /// Stage 4: final (smoothed) paths.
    pub agents: Vec<Agent>,
    /// The seam ghosts used as fixed movers.
    pub ghosts: Vec<Ghost>,
    /// Collision removal's outcome (iterations, remaining collisions).
    pub collision: CollisionOutcome,
    /// Smoothing's outcome (`None` when smoothing is off).
    pub smoothing: Option<SmoothingOutcome>,
    /// Contacts left in the final paths (empty when collision-free).
    pub remaining: Vec<Contact>,
    /// Metrics of the final paths.
    pub metrics: Metrics,
    /// Stage timings.
    pub timings: Timings,
    /// Remarks worth reading (routing failures, reverted smoothing, …).
    pub notes: Vec<String>,
    /// Stage 5: footsteps and skeletal animation (`None` when the agents are
    /// played as discs).
    pub skeletal: Option<crate::animation::SkeletalOutcome>,
}

/// Options of a bake beyond the patch document.
#[derive(Debug, Clone, Default)]
pub struct BakeOptions {
    /// Plan footsteps and synthesise skeletal animation with this character
    /// (stage 5); `None` plays agents as discs.
    pub skeletal: Option<std::sync::Arc<crate::animation::Skeletal>>,
}

impl Bake {
    /// Whether the final paths are collision-free: no two agent instances
    /// closer than 2r, no agent closer than r to an obstacle or 2r to a ghost.
    pub fn converged(&self) -> bool {
        self.remaining.is_empty()
    }
}

/// Bakes a patch: runs every stage and keeps every intermediate result.
///
/// # Errors
/// [`BakeError::Cancelled`] when the observer cancels.
pub fn bake(patch: &Patch, observer: &mut dyn BakeObserver) -> Result<Bake, BakeError> {
    bake_with(patch, &BakeOptions::default(), observer)
}

/// Bakes a patch with options: [`bake`], then, with a character, stage 5
/// (footstep planning and skeletal animation, [`crate::animation::animate`]).
///
/// # Errors
/// [`BakeError::Cancelled`] when the observer cancels.
pub fn bake_with(patch: &Patch, options: &BakeOptions, observer: &mut dyn BakeObserver) -> Result<Bake, BakeError> {
    let start = Instant::now();
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1000.0;
    let mut timings = Timings::default();
    let mut notes = Vec::new();

    observer.stage(Stage::Matching);
    let t = Instant::now();
    let pairs = match_patch(patch, patch.solver.matching);
    timings.matching_ms = ms(t);
    if observer.cancelled() {
        return Err(BakeError::Cancelled);
    }

    observer.stage(Stage::InitialPaths);
    let t = Instant::now();
    let (initial, initial_notes) = initial_paths(patch, &pairs);
    notes.extend(initial_notes.into_iter().map(|n| format!("agent {}: {}", n.agent, n.message)));
    let ghosts = ghosts(patch, &initial);
    timings.initial_paths_ms = ms(t);
    if observer.cancelled() {
        return Err(BakeError::Cancelled);
    }

    observer.stage(Stage::CollisionRemoval);
    let t = Instant::now();
    let params = CollisionParams::from_patch(patch);
    let mut agents = initial.clone();
    let collision = remove_collisions(&mut agents, &patch.obstacles, &ghosts, &params, &mut |i, gap| {
        observer.iteration(i, gap) && !observer.cancelled()
    });
    if collision.cancelled {
        return Err(BakeError::Cancelled);
    }
    timings.collision_removal_ms = ms(t);
    notes.extend(
        collision.infeasible.iter().map(|c| format!("proven infeasible: {}", c.describe(patch.header.agent_radius))),
    );
    let collision_free = agents.clone();

    let smoothing = if patch.solver.smoothing {
        observer.stage(Stage::Smoothing);
        let t = Instant::now();
        let sp = SmoothingParams {
            tack_interval: patch.solver.tack_interval,
            max_deviation: patch.solver.max_deviation.unwrap_or(patch.header.agent_radius),
            max_turn: 0.05,
            max_step: 1.0,
            scan_step: 0.02,
            radius: patch.header.agent_radius,
            size: patch.header.size,
        };
        let out = smooth_agents(&mut agents, &patch.obstacles, &ghosts, &sp, &params);
        if !out.reverted.is_empty() {
            notes.push(format!(
                "smoothing of agents {:?} was reverted: it would have caused a new collision",
                out.reverted
            ));
        }
        timings.smoothing_ms = ms(t);
        Some(out)
    } else {
        None
    };
    if observer.cancelled() {
        return Err(BakeError::Cancelled);
    }

    observer.stage(Stage::Metrics);
    let t = Instant::now();
    let remaining = crate::collision::find_contacts(&agents, &patch.obstacles, &ghosts, &params);
    let mut metrics = crate::metrics::compute(patch, &agents, &ghosts);
    timings.metrics_ms = ms(t);
    let skeletal = match &options.skeletal {
        Some(sk) => {
            if observer.cancelled() {
                return Err(BakeError::Cancelled);
            }
            observer.stage(Stage::Animation);
            let baked: Vec<BakedAgent> = agents.iter().map(|a| baked_agent(a, patch.header.period)).collect();
            let out = crate::animation::animate(patch, &agents, &baked, sk);
            timings.footsteps_ms = out.planning_ms;
            timings.animation_ms = out.synthesis_ms;
            metrics.foot_skate = Some(out.metrics.foot_skate);
            metrics.animation = Some(out.metrics.clone());
            notes.extend(out.notes.iter().cloned());
            Some(out)
        }
        None => None,
    };
    timings.total_ms = ms(start);
    Ok(Bake {
        patch: patch.clone(),
        pairs,
        initial,
        collision_free,
        agents,
        ghosts,
        collision,
        smoothing,
        remaining,
        metrics,
        timings,
        notes,
        skeletal,
    })
}

/// Slowest average speed `[m/s]` over a key's neighbourhood that still
/// defines a heading; slower, the agent keeps the heading it had.
pub const MIN_HEADING_SPEED: f64 = 0.2;

/// Headings `[rad]` at the control points of a path: the direction of the
/// central difference of positions (one-sided at open ends), carried over
/// where the agent stands still or barely moves; the same at both ends of a
/// loop of period `period` `[s]`.
pub fn headings(agent: &Agent, period: f64) -> Vec<f64> {
    let pts = &agent.path.points;
    let n = pts.len();
    let looped = agent.path.looped;
    let mut out: Vec<Option<f64>> = (0..n)
        .map(|i| {
            let (a, b, dt) = if looped {
                // Points 0 and n−1 coincide; neighbours wrap around them.
                let prev = if i == 0 { n - 2 } else { i - 1 };
                let next = if i == n - 1 { 1 } else { i + 1 };
                let dt = (pts[next].t - pts[prev].t).rem_euclid(period).max(1e-9);
                (pts[prev], pts[next], dt)
            } else {
                let (a, b) = (pts[i.saturating_sub(1)], pts[(i + 1).min(n - 1)]);
                (a, b, b.t - a.t)
            };
            let d = b.p - a.p;
            // Shuffling on the spot (below the speed of a slow step) keeps the
            // heading it had.
            (d.norm() / dt >= MIN_HEADING_SPEED).then(|| d.y.atan2(d.x))
        })
        .collect();
    // Fill gaps: forward with the last known, then the start backwards.
    let mut last = None;
    for h in out.iter_mut() {
        match h {
            Some(v) => last = Some(*v),
            None => *h = last,
        }
    }
    let first = out.iter().flatten().next().copied().unwrap_or(0.0);
    out.iter().map(|h| wrap_angle(h.unwrap_or(first))).collect()
}

/// The baked form of an agent.
pub fn baked_agent(agent: &Agent, period: f64) -> BakedAgent {
    let hs = headings(agent, period);
    BakedAgent {
        kind: agent.kind,
        keys: agent
            .path
            .points
            .iter()
            .zip(hs)
            .map(|(c, h)| PathKey { t: c.t, position: [c.p.x, c.p.y], heading: h })
            .collect(),
    }
}

/// The four patterns as baked: positions, times and the velocities used
/// (patch frame).
pub fn baked_patterns(patch: &Patch) -> Sides<BakedPattern> {
    let mut out: Sides<BakedPattern> = Sides::default();
    for c in patch.crossings() {
        let p = BakedPoint { s: c.s, t: c.t, velocity: [c.velocity.x, c.velocity.y], gait: None };
        match c.direction {
            Direction::Entry => out[c.side].entries.push(p),
            Direction::Exit => out[c.side].exits.push(p),
        }
    }
    out
}

impl Bake {
    /// The baked patch (runtime format).
    pub fn baked(&self) -> BakedPatch {
        BakedPatch {
            format: FORMAT_VERSION,
            header: self.patch.header.clone(),
            patterns: self.baked_patterns(),
            obstacles: self.patch.obstacles.clone(),
            agents: self.agents.iter().map(|a| baked_agent(a, self.patch.header.period)).collect(),
            metrics: self.metrics.clone(),
            skeletal: self.skeletal.as_ref().map(|s| Box::new(s.animation.clone())),
        }
    }

    /// The four patterns as baked, with the gait of each boundary point in a
    /// skeletal bake.
    pub fn baked_patterns(&self) -> Sides<BakedPattern> {
        let mut out = baked_patterns(&self.patch);
        if let Some(sk) = &self.skeletal {
            for &(side, entry, index, gait) in &sk.gaits {
                let list = if entry { &mut out[side].entries } else { &mut out[side].exits };
                if let Some(p) = list.get_mut(index) {
                    p.gait = Some(gait);
                }
            }
        }
        out
    }

    /// The JSON report of the bake.
    pub fn report(&self) -> Report {
        let entries = self.patch.crossings_of(Direction::Entry);
        let exits = self.patch.crossings_of(Direction::Exit);
        let point = |c: &crate::model::Crossing| PointRecord { side: c.side, index: c.index, s: c.s, t: c.t };
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
    /// Remarks.
    pub notes: Vec<String>,
    /// Stage timings `[ms]`.
    pub timings: Timings,
}
