//! Stage 5b: foot-locked skeletal animation that follows planned footsteps
//! (course notes, "Footstep Parameterized Motion Blending using Barycentric
//! Coordinates" §4.2–4.5; "Avatar Locomotion in Crowd Simulation" §4.2–4.4).
//!
//! Per step (stance foot S planted at footprint `X_j`, swing foot W landing at
//! `X_{j+1}`):
//! 1. **Blend**: the library steps whose landing positions span the triangle
//!    that holds the wanted landing, with barycentric weights (eq. 1), each
//!    time-warped to the planned duration (phase `u ∈ [0, 1]`).
//! 2. **Transitions**: the pose at the step's start is the previous step's
//!    end pose; the difference to the blend is held through double support
//!    and faded out while the swing foot is in the air. At a boundary crossing
//!    (and a loop's end) the last step fades *into* the convention's boundary
//!    pose, so the neighbour tile starts from the same pose.
//! 3. **Root from the stance foot** (APM §4.3, eq. 2): the character is placed
//!    so that the stance foot's contact point stays exactly on `X_j`; turns
//!    are rotations about it (§4.4), spread over the step with a smoothstep,
//!    so the torso heading is filtered: continuous, with no rate jump at step
//!    boundaries.
//! 4. **Foot IK** (BPK blend §4.5): the swing foot stays on its footprint until
//!    it lifts off, then is carried smoothly onto the planned landing, by
//!    analytic two-bone IK on the leg (or by moving the foot joint when the
//!    rig's foot hangs outside the leg chain).
//!
//! So no planted foot slides, whatever the blend weights and time warps.
//!
//! | part | module |
//! |---|---|
//! | per-step synthesis (blend, transitions, placement, IK), standing agents | [`step`] |
//! | leg IK and forward kinematics of single joints (with the character: [`crate::character::ik`], [`crate::character::fk`]; re-exported here) | [`ik`], [`fk`] |
//! | key times, key refinement, local tracks, the trace as played | [`sampling`] |
//! | where a loop's footsteps close (off its corners) | [`seam`] |
//! | quality figures | [`metrics`] |
//! | the quality gate: limits on the animation as played | [`gate`] |

pub mod contact;
pub mod gate;
pub mod metrics;
pub mod sampling;
pub mod seam;
pub mod skeletal;
pub mod step;

pub use crate::character::{fk, ik};
pub use sampling::Trace;
pub use skeletal::Skeletal;

use crate::figures::AnimationMetrics;
use crate::footsteps::{FootstepPlan, PathEnds, loop_seam_velocity, path_position, plan_agent};
use crate::model::Patch;
use crate::path::Agent;
use crowdpatch_runtime::format::{self as rt, BakedAgent, BoundaryGait, Side, SkeletalAnimation};

/// The result of the footstep and animation stage.
#[derive(Debug, Clone)]
pub struct SkeletalOutcome {
    /// The animation (baked format).
    pub animation: SkeletalAnimation,
    /// Per agent, its footstep plan (`None` for a standing agent).
    pub plans: Vec<Option<FootstepPlan>>,
    /// Per agent, world positions of the synthesised motion.
    pub traces: Vec<Trace>,
    /// The gait at each boundary point, `(side, entry?, index, gait)`.
    pub gaits: Vec<(Side, bool, usize, BoundaryGait)>,
    /// Quality figures.
    pub metrics: AnimationMetrics,
    /// The quality gate's verdict.
    pub gate: gate::GateReport,
    /// Footstep planning wall time `[ms]`.
    pub planning_ms: f64,
    /// Synthesis wall time `[ms]`.
    pub synthesis_ms: f64,
    /// Remarks (relaxed plans).
    pub notes: Vec<String>,
}

impl SkeletalOutcome {
    /// The quality gate's figures for agent `a` alone ([`gate::check_agent`]:
    /// its footsteps, root deviation, posture and joint speeds, against the
    /// same limits and reference as the whole bake's [`Self::gate`]);
    /// `character` is the one that was animated and `baked` the agent's
    /// baked path. `None` for an agent the outcome does not hold. O(samples
    /// · joints) of the agent.
    pub fn agent_gate(
        &self,
        character: &crate::character::Character,
        baked: &BakedAgent,
        a: usize,
    ) -> Option<gate::GateReport> {
        let (anim, trace) = (self.animation.agents.get(a)?, self.traces.get(a)?);
        let paths = |_: usize, t: f64| path_position(baked, t);
        let (reference, limits) = (self.gate.hip_height_reference, &self.gate.limits);
        Some(gate::check_agent(character, a, anim, trace, &paths, reference, limits))
    }
}

/// Plans footsteps for every agent and synthesises its skeletal animation.
/// `agents` are the bake's final paths and `baked` their baked form (same
/// order).
pub fn animate(patch: &Patch, agents: &[Agent], baked: &[BakedAgent], skeletal: &Skeletal) -> SkeletalOutcome {
    animate_with(patch, agents, baked, skeletal, &mut |_, _| {})
}

/// [`animate`], reporting progress as `(done, 2 × agents)`: one unit per
/// agent planned, then one per agent synthesised.
pub fn animate_with(
    patch: &Patch,
    agents: &[Agent],
    baked: &[BakedAgent],
    skeletal: &Skeletal,
    progress: &mut dyn FnMut(usize, usize),
) -> SkeletalOutcome {
    let total = 2 * agents.len();
    let character = &skeletal.character;
    let gait = &skeletal.gait;
    let period = patch.header.period;
    let per_period = (period * skeletal.frame_rate).round().max(2.0);
    let interval = period / per_period;
    let t = std::time::Instant::now();
    // Each agent is planned and synthesised on its own (in parallel with the
    // `parallel` feature); results are gathered in agent order, so the
    // output does not depend on the number of threads.
    let indices: Vec<usize> = (0..agents.len()).collect();
    let planned = map_agents(&indices, |&i| {
        let (a, b) = (&agents[i], &baked[i]);
        let ends = path_ends(a);
        // A loop is planned from where it runs straightest.
        let r = (ends == PathEnds::Loop).then(|| {
            let ts = seam::straightest(b, period, interval);
            (ts > b.start() + 1e-9).then(|| seam::rotate(b, ts, period))
        });
        let r = r.flatten();
        (plan_agent(gait, character, r.as_ref().unwrap_or(b), ends, period, &skeletal.params), ends, r)
    });
    let mut plans = Vec::with_capacity(agents.len());
    let mut ends_of = Vec::with_capacity(agents.len());
    let mut gaits = Vec::new();
    let mut notes = Vec::new();
    let mut rotated = Vec::with_capacity(agents.len());
    for (i, ((a, b), (plan, ends, r))) in agents.iter().zip(baked).zip(planned).enumerate() {
        rotated.push(r);
        if let Some(p) = &plan
            && p.relaxed
        {
            notes.push(format!("agent {i}: footstep limits were relaxed to follow its path"));
        }
        if let (Some(e), Some(x)) = (a.entry, a.exit) {
            let ge = gait.boundary(character, arr(e.position), arr(e.velocity), b.start()).gait;
            let gx = gait.boundary(character, arr(x.position), arr(x.velocity), b.end()).gait;
            gaits.push((e.side, true, e.index, ge));
            gaits.push((x.side, false, x.index, gx));
        }
        plans.push(plan);
        ends_of.push(ends);
        progress(i + 1, total);
    }
    let planning_ms = t.elapsed().as_secs_f64() * 1000.0;
    let t = std::time::Instant::now();
    let synthesised = map_agents(&indices, |&i| {
        let (b, plan, ends, r) = (&baked[i], &plans[i], &ends_of[i], &rotated[i]);
        let (t0, b) = (b.start(), r.as_ref().unwrap_or(b));
        match (plan, ends) {
            (Some(plan), PathEnds::Exogenous { entry, exit }) => {
                let s = gait.boundary(character, b.keys[0].position, *entry, b.start());
                let e = gait.boundary(character, b.keys[b.keys.len() - 1].position, *exit, b.end());
                step::synthesize_walker(skeletal, b, plan, (&s, &e), interval)
            }
            (Some(plan), PathEnds::Loop) => {
                // The loop's convention, as the planner made it.
                let f = &plan.footsteps;
                let s = gait.boundary(character, b.keys[0].position, loop_seam_velocity(b, period), b.start());
                let mut e = s;
                e.left = f[f.len() - 1];
                e.right = f[f.len() - 2];
                let (anim, mut trace) = step::synthesize_walker(skeletal, b, plan, (&s, &e), interval);
                // The loop closes: its pose at the end against its pose at
                // the start (a period apart, the same instant).
                if let (Some(first), Some(last)) = (trace.joints.first(), trace.joints.last()) {
                    let (joint, distance) = sampling::largest_move(last, first);
                    let kind = sampling::EventKind::LoopClose;
                    trace.events.push(sampling::EventJump { t: b.end(), kind, foot: None, distance, joint });
                }
                if r.is_some() {
                    seam::unrotate(anim, trace, t0, period, character.skeleton.len())
                } else {
                    (anim, trace)
                }
            }
            _ => step::synthesize_standing(skeletal, b, period, interval),
        }
    });
    let (out, traces): (Vec<_>, Vec<_>) = synthesised.into_iter().unzip();
    progress(total, total);
    let synthesis_ms = t.elapsed().as_secs_f64() * 1000.0;
    // The figures and the gate read the same traces: side by side.
    let (mut metrics, gate) = join(
        || metrics::metrics(character, baked, &out, &traces, period),
        || {
            let reference = gate::walk_hip_height(character, &gait.library);
            let paths = |a: usize, t: f64| path_position(&baked[a], t);
            gate::check(character, &out, &traces, &paths, reference, &gate::GateLimits::default())
        },
    );
    metrics.stance_drift_p95 = gate.stance_drift_p95;
    metrics.stance_drift_max = gate.stance_drift_max.value;
    metrics.hip_height_ratio = [gate.hip_height_mean, gate.hip_height_p5, gate.hip_height_min.value];
    metrics.step_length_min = gate.step_length_min.value;
    SkeletalOutcome {
        animation: SkeletalAnimation {
            character: rt::Character { sole_points: skeletal.soles.records(), ..character.to_runtime() },
            sample_interval: interval,
            agents: out,
        },
        plans,
        traces,
        gaits,
        metrics,
        gate,
        planning_ms,
        synthesis_ms,
        notes,
    }
}

/// `f` over `items`, in order: in parallel on the current rayon pool with
/// the `parallel` feature, one after the other without.
fn map_agents<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        // One item per task: agents differ in cost by 100×, and rayon's
        // default split leaves one thread working alone through a run of
        // costly agents while the other has finished its cheap half.
        items.par_iter().with_max_len(1).map(f).collect()
    }
    #[cfg(not(feature = "parallel"))]
    {
        items.iter().map(f).collect()
    }
}

/// `(a(), b())`: side by side on the current rayon pool with the
/// `parallel` feature, one after the other without.
fn join<A: Send, B: Send>(a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B + Send) -> (A, B) {
    #[cfg(feature = "parallel")]
    {
        rayon::join(a, b)
    }
    #[cfg(not(feature = "parallel"))]
    {
        (a(), b())
    }
}

fn arr(v: crate::geometry::Vec2) -> [f64; 2] {
    [v.x, v.y]
}

/// How an agent's path starts and ends.
pub fn path_ends(a: &Agent) -> PathEnds {
    match (a.entry, a.exit) {
        (Some(e), Some(x)) => PathEnds::Exogenous { entry: arr(e.velocity), exit: arr(x.velocity) },
        _ => {
            let p0 = a.path.points[0].p;
            let moves = a.path.points.iter().any(|c| (c.p - p0).norm() > 0.05);
            if moves { PathEnds::Loop } else { PathEnds::Standing }
        }
    }
}
