//! The bake pipeline (docs/design.md "Bake pipeline"): match → initial paths →
//! remove collisions → smooth → metrics, each stage a pure function over
//! plain data whose result is kept for inspection (the preview shows three of
//! them), then conversion to the baked format of `crowdpatch-runtime`.
//!
//! Progress leaves through a [`BakeObserver`] passed in; nothing is printed.

use crate::collision::{CollisionOutcome, CollisionParams, remove_collisions};
use crate::initial_paths::initial_paths;
use crate::matching::{Pair, match_patch};
use crate::metrics::Metrics;
use crate::model::{MatchingMode, Patch, SolverKind};
use crate::path::Agent;
use crate::proximity::{Contact, Ghost, ghosts};
use crate::smoothing::{SmoothingOutcome, SmoothingParams, smooth_agents};
use crowdpatch_runtime::format::BakedPatch;
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
    /// Work done in the current stage: `done` of `total` units (agents of
    /// the animation stage), for a progress bar with an ETA.
    fn progress(&mut self, _done: usize, _total: usize) {}
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
    /// Walker-periods animated: the agents' path durations summed, over the
    /// period (skeletal bakes).
    pub walker_periods: f64,
    /// Synthesis time per walker-period, [`Timings::animation_ms`] over
    /// [`Timings::walker_periods`] `[ms]` (skeletal bakes).
    pub animation_ms_per_walker_period: f64,
    /// Footstep planning time per walker-period `[ms]` (skeletal bakes).
    pub footsteps_ms_per_walker_period: f64,
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
    /// played as discs). Feature `skeletal`.
    #[cfg(feature = "skeletal")]
    pub skeletal: Option<crate::animation::SkeletalOutcome>,
}

/// Options of a bake beyond the patch document.
#[derive(Debug, Clone, Default)]
pub struct BakeOptions {
    /// Plan footsteps and synthesise skeletal animation with this character
    /// (stage 5); `None` plays agents as discs. Feature `skeletal`.
    #[cfg(feature = "skeletal")]
    pub skeletal: Option<std::sync::Arc<crate::animation::Skeletal>>,
}

impl BakeOptions {
    /// What these options animate, for the bake's budget
    /// ([`crate::limits::check_bake`]); `frame_rate_flag` names the setting
    /// of the frame rate in messages (`--frame-rate`).
    pub fn animation_load(&self, frame_rate_flag: &'static str) -> Option<crate::limits::AnimationLoad> {
        #[cfg(feature = "skeletal")]
        return self.skeletal.as_ref().map(|s| crate::limits::AnimationLoad {
            joints: s.character.skeleton.len(),
            frame_rate: s.frame_rate,
            frame_rate_flag,
        });
        #[cfg(not(feature = "skeletal"))]
        {
            let _ = frame_rate_flag;
            None
        }
    }
}

/// Everything a bake of `patch` with `options` refuses
/// ([`crate::limits::check_bake`]): the one check `crowdpatch validate` runs
/// and `crowdpatch bake` runs before any work. Empty when the bake may run.
/// O(p + obstacles + agents).
pub fn refusals(patch: &Patch, options: &BakeOptions, frame_rate_flag: &'static str) -> Vec<crate::problem::Problem> {
    crate::limits::check_bake(patch, options.animation_load(frame_rate_flag).as_ref())
}

impl Bake {
    /// The baked patch (runtime format), see [`crate::baked::baked_patch`];
    /// its metrics stay in [`Bake::metrics`] (an exporter writes them beside
    /// it, [`Metrics::to_json`]).
    pub fn baked(&self) -> BakedPatch {
        #[cfg(feature = "skeletal")]
        let skeletal = self.skeletal.as_ref().map(|s| (&s.animation, &s.gaits[..]));
        #[cfg(not(feature = "skeletal"))]
        let skeletal = None;
        crate::baked::baked_patch(&self.patch, &self.agents, skeletal)
    }
}

impl Bake {
    /// Whether the final paths are collision-free: no two agent instances
    /// closer than 2r, no agent closer than r to an obstacle or 2r to a ghost.
    pub fn converged(&self) -> bool {
        self.remaining.is_empty()
    }

    /// Whether the skeletal animation passes its quality gate (true without
    /// a character), see [`crate::animation::gate`].
    pub fn animation_passed(&self) -> bool {
        #[cfg(feature = "skeletal")]
        return self.skeletal.as_ref().is_none_or(|s| s.gate.passed());
        #[cfg(not(feature = "skeletal"))]
        true
    }
}

/// Bakes a patch: runs every stage and keeps every intermediate result.
///
/// # Errors
/// [`BakeError::Cancelled`] when the observer cancels.
pub fn bake(patch: &Patch, observer: &mut dyn BakeObserver) -> Result<Bake, BakeError> {
    bake_with(patch, &BakeOptions::default(), observer)
}

/// Restarts of the project's collision removal (`default`; not the
/// baselines `paper` and `greedy`) after the loop gives up with at most
/// [`RESTART_CONTACTS`] collisions left (and after the fallbacks for
/// standing and stopping walkers): each starts again, from the initial paths
/// and from the calm ones in turn, with another draw of the pushes' turns
/// (`|φ| ≤` [`crate::collision::default::MAX_ROTATION`]), which may pass a
/// stubborn walker on the other side or in the other order. The patches
/// of the separated benchmark protocol that the first attempt leaves
/// colliding (seeds 41009 and 42013: three or two walkers through a corner
/// of the patch within a second, whose separation needs one to pass the
/// others in an order the pushes do not reach from the initial paths; a draw
/// converges on a quarter to a half of the attempts) are separated by a
/// restart. A patch that converges never restarts, so its result is
/// unchanged (docs/benchmarks.md, issue 30).
pub const RESTARTS: usize = 8;

/// Most collisions left for which collision removal restarts
/// ([`RESTARTS`]): a patch left with more is far from a solution, which
/// another draw does not find.
pub const RESTART_CONTACTS: usize = 4;

/// The seed of the pushes' turns in restart `k` (0: the patch's own).
fn restart_seed(seed: u64, k: usize) -> u64 {
    seed ^ (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Runs the collision stage again on `retry` (another start for the same
/// walkers); its outcome when it converged or left fewer collisions than
/// `current`, else `None`.
///
/// # Errors
/// [`BakeError::Cancelled`] when the observer cancels.
fn rerun(
    retry: &mut [Agent],
    patch: &Patch,
    ghosts: &[Ghost],
    params: &CollisionParams,
    observer: &mut dyn BakeObserver,
    current: &CollisionOutcome,
) -> Result<Option<CollisionOutcome>, BakeError> {
    let second = remove_collisions(retry, &patch.obstacles, ghosts, params, &mut |i, gap| {
        observer.iteration(i, gap) && !observer.cancelled()
    });
    if second.cancelled {
        return Err(BakeError::Cancelled);
    }
    Ok((second.converged || second.remaining.len() < current.remaining.len()).then_some(second))
}

/// Bakes a patch with options: [`bake`], then, with a character, stage 5
/// (footstep planning and skeletal animation, [`crate::animation::animate`]).
///
/// The bake's cost is bounded by the limits of [`crate::limits`]: a caller
/// with a document of unknown origin checks [`refusals`] first (the command
/// line does, before any work; documents loaded by
/// [`crate::document::load_patch`] already meet the count limits).
///
/// # Errors
/// [`BakeError::Cancelled`] when the observer cancels.
pub fn bake_with(patch: &Patch, options: &BakeOptions, observer: &mut dyn BakeObserver) -> Result<Bake, BakeError> {
    let start = Instant::now();
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1000.0;
    let mut timings = Timings::default();
    let mut notes: Vec<String> = crate::validate::self_tiling_note(patch).into_iter().collect();

    observer.stage(Stage::Matching);
    let t = Instant::now();
    let pairs = match_patch(patch, patch.solver.matching);
    timings.matching_ms = ms(t);
    if observer.cancelled() {
        return Err(BakeError::Cancelled);
    }

    observer.stage(Stage::InitialPaths);
    let t = Instant::now();
    let (mut initial, initial_notes) = initial_paths(patch, &pairs);
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
    let mut collision = remove_collisions(&mut agents, &patch.obstacles, &ghosts, &params, &mut |i, gap| {
        observer.iteration(i, gap) && !observer.cancelled()
    });
    if collision.cancelled {
        return Err(BakeError::Cancelled);
    }
    // Standing agents are held in place (walkers go round them); where that
    // leaves a collision, they may step aside after all: the stage runs
    // again with their points free.
    let held: Vec<usize> = (0..initial.len()).filter(|&i| initial[i].path.holds()).collect();
    if !collision.converged && !held.is_empty() {
        let mut retry = initial.clone();
        for &i in &held {
            retry[i].path.release();
        }
        if let Some(second) = rerun(&mut retry, patch, &ghosts, &params, observer, &collision)? {
            notes.push(format!(
                "standing agents {held:?} held in place left {} collision(s); they step aside instead",
                collision.remaining.len()
            ));
            agents = retry;
            collision = second;
        }
    }
    // Walkers that stop are obstacles a while; where they leave a
    // collision, the stage runs again from initial paths in which walkers
    // walk slower and stop less (the wait factor of crate::pace::CALM_FACTOR).
    let mut calm_initial = None;
    if !collision.converged && collision.infeasible.is_empty() && patch.solver.wait_factor > crate::pace::CALM_FACTOR {
        let mut calm = patch.clone();
        calm.solver.wait_factor = crate::pace::CALM_FACTOR;
        let (calm_paths, _) = initial_paths(&calm, &pairs);
        calm_initial = Some(calm_paths.clone());
        let mut retry = calm_paths.clone();
        if let Some(second) = rerun(&mut retry, patch, &ghosts, &params, observer, &collision)? {
            notes.push(format!(
                "walkers standing still left {} collision(s); they walk slower and stop less instead \
                 (wait factor {})",
                collision.remaining.len(),
                crate::pace::CALM_FACTOR
            ));
            initial = calm_paths;
            agents = retry;
            collision = second;
        }
    }
    // Where the loop still gives up with a few collisions left, it starts
    // again with other draws of the pushes' turns (RESTARTS), from the
    // initial paths and from the calm ones in turn.
    if patch.solver.method == SolverKind::Default
        && !collision.converged
        && collision.infeasible.is_empty()
        && collision.remaining.len() <= RESTART_CONTACTS
    {
        let mut starts = vec![initial.clone()];
        if let Some(c) = &calm_initial {
            starts.push(c.clone());
        }
        for restart in 1..=RESTARTS {
            if collision.converged {
                break;
            }
            let start = &starts[(restart - 1) % starts.len()];
            let mut retry = start.clone();
            let params = CollisionParams { seed: restart_seed(params.seed, restart), ..params.clone() };
            if let Some(second) = rerun(&mut retry, patch, &ghosts, &params, observer, &collision)? {
                notes.push(format!(
                    "collision removal left {} collision(s); it started again with another draw of its \
                     pushes' turns (restart {restart})",
                    collision.remaining.len()
                ));
                initial = start.clone();
                agents = retry;
                collision = second;
            }
        }
    }
    timings.collision_removal_ms = ms(t);
    if !collision.hurried.is_empty() {
        notes.push(format!(
            "agents {:?} run briefly (up to {} × the comfort speed) where walking left them colliding",
            collision.hurried,
            crate::collision::default::SPRINT_SPEED_FACTORS.1
        ));
    }
    notes.extend(
        collision.infeasible.iter().map(|c| format!("proven infeasible: {}", c.describe(patch.header.agent_radius))),
    );
    let collision_free = agents.clone();

    let smoothing = if patch.solver.smoothing {
        observer.stage(Stage::Smoothing);
        let t = Instant::now();
        let sp = SmoothingParams::from_patch(patch);
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
    #[cfg(not(feature = "skeletal"))]
    let _ = (options, &mut metrics, &mut notes);
    #[cfg(feature = "skeletal")]
    let skeletal = match &options.skeletal {
        Some(sk) => Some(animate_stage(patch, &agents, sk, observer, &mut timings, &mut metrics, &mut notes)?),
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
        #[cfg(feature = "skeletal")]
        skeletal,
    })
}

/// Stage 5 of [`bake_with`]: footstep planning and skeletal animation of the
/// final paths with `sk`, its timings, metrics and notes added to the bake's.
///
/// # Errors
/// [`BakeError::Cancelled`] when the observer cancels before it starts.
#[cfg(feature = "skeletal")]
fn animate_stage(
    patch: &Patch,
    agents: &[Agent],
    sk: &crate::animation::Skeletal,
    observer: &mut dyn BakeObserver,
    timings: &mut Timings,
    metrics: &mut Metrics,
    notes: &mut Vec<String>,
) -> Result<crate::animation::SkeletalOutcome, BakeError> {
    if observer.cancelled() {
        return Err(BakeError::Cancelled);
    }
    observer.stage(Stage::Animation);
    let baked: Vec<crowdpatch_runtime::format::BakedAgent> =
        agents.iter().map(|a| crate::baked::baked_agent(a, patch.header.period)).collect();
    let out =
        crate::animation::animate_with(patch, agents, &baked, sk, &mut |done, total| observer.progress(done, total));
    timings.footsteps_ms = out.planning_ms;
    timings.animation_ms = out.synthesis_ms;
    let span: f64 = baked.iter().map(|b| b.end() - b.start()).sum();
    timings.walker_periods = span / patch.header.period;
    if timings.walker_periods > 0.0 {
        timings.animation_ms_per_walker_period = out.synthesis_ms / timings.walker_periods;
        timings.footsteps_ms_per_walker_period = out.planning_ms / timings.walker_periods;
    }
    metrics.foot_skate = Some(out.metrics.foot_skate);
    metrics.animation = Some(out.metrics.clone());
    notes.extend(out.notes.iter().cloned());
    Ok(out)
}
