//! The project's collision solver (`"method": "default"`): Algorithm 2's
//! greedy loop (seed paper §3.4) rebuilt for speed, robustness and quality.
//!
//! 1. **Infeasibility first.** Boundary points whose fixed crossing stubs and
//!    ghosts come closer than 2r make every solution collide
//!    ([`super::infeasibility`]); such a patch is reported with the culprit
//!    points at once instead of being iterated to the cap.
//! 2. **Greedy passes** over the [`IncrementalMatrix`] (space-time pruning,
//!    windowed updates, O(n) worst-pair search). Each pass pushes every
//!    current collision, worst first, apart by what it lacks (not a fixed θ):
//!    `Δ = (1 + OVERSHOOT)·(target − d) + 1 cm`, split by the speed weights of
//!    eq. 6 and turned by a small seeded random angle (`|φ| ≤ 0.25` rad)
//!    against cycles; then each moved agent's row is updated once, over the
//!    union of its changed windows. An iteration is one push, as in
//!    Algorithm 2. Of a walker and one standing still
//!    ([`STANDING_SPEED`]), the walker takes the whole push.
//! 3. **Moves in space and time** (seed paper §5, "Spatial moving of
//!    waypoints only", and §6): each agent's displacement at its closest
//!    approach is split into the part along its own velocity, applied as a
//!    *time shift* of its control points (it walks a little faster or slower
//!    along the same route — no new turn), within a speed limit and keeping
//!    times strictly increasing, and the rest, applied in space.
//! 4. **Smooth bumps.** Both are spread over a raised-cosine window of
//!    half-width [`BUMP_HALF_WIDTH`] around the approach (control points at
//!    `t ± h/2`, `t ± h`), so avoidance starts early and turns gently — the
//!    anticipation the seed paper's Figure 10 asks for — instead of the
//!    single-point kink of eq. 7.
//! 5. **Global refinement** ([`super::refine`]) where the greedy pass stalls,
//!    and as a polish of speed and turn artefacts once collision-free
//!    (left out by the `greedy` solver, which measures what it buys).

use super::infeasibility::conflicts_of;
use super::matrix::IncrementalMatrix;
use super::params::{CollisionOutcome, CollisionParams};
use super::refine::{self, RefineSettings};
use crate::geometry::{Vec2, rotate};
use crate::model::{Crossing, Obstacle};
use crate::path::{Agent, Path};
use crate::proximity::{Ghost, Other};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Half-width `[s]` of the raised-cosine window over which a push is spread.
pub const BUMP_HALF_WIDTH: f64 = 1.5;
/// Fraction of the missing distance added on top of it when pushing.
pub const OVERSHOOT: f64 = 0.5;
/// Constant extra push `[m]`.
pub const EXTRA_PUSH: f64 = 0.01;
/// Largest random rotation of a push `[rad]`.
pub const MAX_ROTATION: f64 = 0.25;
/// Time `[s]` over which a move fades in after a fixed crossing stub (and
/// out before one).
pub const STUB_RAMP: f64 = 0.4;
pub use super::params::HARD_SPEED_FACTOR;
/// A time shift makes no segment faster than this many times u_cft (unless
/// it already was): walkers let others pass by slowing down and waiting,
/// and hurry little.
pub const SHIFT_SPEED_FACTOR: f64 = 1.3;
/// The speed limits of a pair pushed [`DESPERATE`] times or more, which the
/// walking limits do not let apart (a patch whose boundary points leave
/// walkers a fraction of a second to clear each other): a hurried step
/// rather than a collision, still a walk (1.65 u_cft = 2.19 m/s at the
/// default comfort speed, under the 2.2 m/s above which walkers run).
/// Shift and hard factors of u_cft.
pub const RELAXED_SPEED_FACTORS: (f64, f64) = (1.5, 1.65);
/// Pushes of one pair after which its moves may hurry
/// ([`RELAXED_SPEED_FACTORS`]).
pub const DESPERATE: u32 = 12;
/// The speed limits of a pair pushed [`FRANTIC`] times or more: a few
/// running steps (2 u_cft = 2.66 m/s) rather than a collision. On random
/// patches (docs/design.md "Realism") the walking limit alone leaves some
/// pairs colliding, and running from the 12th push on puts walkers above
/// 2.2 m/s that did not need to run.
pub const FRANTIC_SPEED_FACTORS: (f64, f64) = (1.5, 2.0);
/// Pushes of one pair after which its moves may run
/// ([`FRANTIC_SPEED_FACTORS`]).
pub const FRANTIC: u32 = 24;
/// The speed limits of a stubborn pair (pushed [`DESPERATE`] times or
/// more) once the whole loop has stalled [`STALLED_RESOLVES`] times: a
/// short run (2.5 u_cft = 3.3 m/s) rather than a collision, for the
/// walkers of the few pairs (often two walkers crossing at a corner of the
/// patch, a fraction of a second apart) that no walk separates. The
/// outcome names them ([`CollisionOutcome::hurried`]).
pub const SPRINT_SPEED_FACTORS: (f64, f64) = (2.0, 2.5);
/// Resolutions in a row that leave the number of collisions and the
/// worst of them no better (by [`STALL_GAIN`]) before the stubborn pairs
/// may run, and as many again before the loop gives up.
pub const STALLED_RESOLVES: usize = 3;
/// Gain of the worst gap `[m]` that counts as progress.
pub const STALL_GAIN: f64 = 1e-3;
/// Pushes of one pair after which its moves get narrow and reach the stubs.
pub const STUBBORN: u32 = 4;
/// Below this speed `[m/s]` at its closest approach an agent stands still,
/// and a pair of which the other walks pushes only the walker.
pub const STANDING_SPEED: f64 = 0.1;

/// Shortest time `[s]` between two control points a time shift may leave
/// (or the current spacing, if already shorter).
pub const MIN_SPACING: f64 = 0.05;

/// The time window `[s]` of a path a move changed (its own unwrapped times),
/// or `None` when it may have changed anywhere.
pub type Window = Option<(f64, f64)>;

/// Removes collisions between `agents` in place (see the module docs).
/// `progress(iteration, min_gap)` is called every iteration and may return
/// `false` to cancel.
pub fn remove_collisions(
    agents: &mut [Agent],
    obstacles: &[Obstacle],
    ghosts: &[Ghost],
    params: &CollisionParams,
    progress: &mut dyn FnMut(usize, f64) -> bool,
) -> CollisionOutcome {
    let crossings: Vec<Crossing> = ghosts.iter().map(|g| g.crossing).collect();
    let infeasible = conflicts_of(
        &crossings,
        params.stub_depth,
        params.radius,
        params.period,
        super::infeasibility::max_walking_speed(params.comfort_speed),
    );
    if !infeasible.is_empty() {
        let remaining = super::matrix::find_contacts(agents, obstacles, ghosts, params);
        return CollisionOutcome {
            iterations: 0,
            converged: remaining.is_empty(),
            remaining,
            cancelled: false,
            lp_rounds: 0,
            infeasible,
            hurried: vec![],
        };
    }
    let mut rng = ChaCha8Rng::seed_from_u64(params.seed);
    let reference: Vec<Agent> = agents.to_vec();
    let mut lp_rounds = 0;
    // `greedy`: the same passes without the linear programs.
    let lp = params.method != crate::model::SolverKind::Greedy;
    let mut next_resolve = if lp { stall_budget(agents.len()) } else { usize::MAX };
    let mut matrix = {
        let paths: Vec<&Path> = agents.iter().map(|a| &a.path).collect();
        IncrementalMatrix::new(&paths, obstacles, ghosts, params)
    };

    let mut iterations = 0;
    let mut hits: std::collections::BTreeMap<(usize, Other), u32> = std::collections::BTreeMap::new();
    let mut cancelled = false;
    // Stalls: resolutions after which neither the number of collisions nor
    // the worst of them got better; after STALLED_RESOLVES the stubborn
    // pairs may run (SPRINT_SPEED_FACTORS), after as many more the loop
    // gives up.
    let mut best: Option<(usize, f64)> = None;
    let mut stalls = 0;
    let mut sprint = false;
    let mut hurried: Vec<usize> = Vec::new();
    while let Some((i, other, cell)) = matrix.worst_entry() {
        if cell.gap >= 0.0 || iterations >= params.max_iterations {
            break;
        }
        if !progress(iterations, cell.gap) {
            cancelled = true;
            break;
        }
        if iterations >= next_resolve {
            // A stall within the margin band (every pair at least 2r apart,
            // some short of 2r + margin) is already a solution.
            let contacts = matrix.contacts().len();
            if contacts == 0 {
                break;
            }
            let state = (contacts, cell.gap);
            if best.is_none_or(|b| state.0 < b.0 || state.1 > b.1 + STALL_GAIN) {
                best = Some(best.map_or(state, |b| (b.0.min(state.0), b.1.max(state.1))));
                stalls = 0;
            } else {
                stalls += 1;
                if stalls >= STALLED_RESOLVES {
                    if sprint {
                        break;
                    }
                    sprint = true;
                    stalls = 0;
                }
            }
            // The greedy pass stalls: solve the worst cluster jointly.
            next_resolve += stall_budget(agents.len());
            let (cluster, windows) = cluster(&matrix, MAX_CLUSTER);
            lp_rounds += refine::refine(
                agents,
                &reference,
                &cluster,
                obstacles,
                ghosts,
                params,
                &RefineSettings { windows, ..RefineSettings::resolve() },
                &mut matrix,
                3,
            );
            continue;
        }
        // One pass: every current collision is pushed, worst first, from the
        // matrix as it stands; each moved agent's row is updated once, over
        // the union of its windows.
        let mut batch = matrix.near(0.0);
        batch.sort_by(|x, y| x.2.gap.total_cmp(&y.2.gap));
        let mut touched: Vec<(usize, Window)> = Vec::new();
        let _ = (i, other, cell);
        for (i, other, cell) in batch {
            if iterations >= params.max_iterations {
                break;
            }
            iterations += 1;
            let count = hits.entry((i, other)).or_insert(0u32);
            *count += 1;
            let count = *count;
            if sprint && count >= DESPERATE {
                for a in [Some(i), if let Other::Agent(j) = other { Some(j) } else { None }].into_iter().flatten() {
                    if !hurried.contains(&a) {
                        hurried.push(a);
                    }
                }
            }
            for (a, w) in push(agents, i, other, &cell, params, &mut rng, Urgency { hits: count, sprint }) {
                match touched.iter_mut().find(|t| t.0 == a) {
                    Some(t) => t.1 = union(t.1, w),
                    None => touched.push((a, w)),
                }
            }
        }
        touched.sort_by_key(|t| t.0);
        let paths: Vec<&Path> = agents.iter().map(|a| &a.path).collect();
        for (a, w) in touched {
            matrix.update(&paths, a, w.as_ref().map(std::slice::from_ref));
        }
    }
    if lp && !cancelled && matrix.min_gap().is_none_or(|g| g >= 0.0) {
        lp_rounds += polish(agents, &reference, obstacles, ghosts, params, &mut matrix);
    }
    let remaining = matrix.contacts();
    CollisionOutcome {
        iterations,
        converged: remaining.is_empty(),
        remaining,
        cancelled,
        lp_rounds,
        infeasible: vec![],
        hurried,
    }
}

/// How hard a pair is pushed: how often it has been pushed before, and
/// whether its walkers may run (the stall fallback).
#[derive(Debug, Clone, Copy)]
struct Urgency {
    hits: u32,
    sprint: bool,
}

/// Pushes one colliding pair apart (see the module docs) and returns the
/// agents moved with the windows of their paths that changed.
fn push(
    agents: &mut [Agent],
    i: usize,
    other: Other,
    cell: &super::params::Cell,
    params: &CollisionParams,
    rng: &mut ChaCha8Rng,
    urgency: Urgency,
) -> Vec<(usize, Window)> {
    let Urgency { hits, sprint } = urgency;
    // A pair pushed again and again gets narrower, sharper moves that reach
    // right up to the stubs.
    let (h, ramp) = if hits >= STUBBORN { (BUMP_HALF_WIDTH / 2.0, 0.02) } else { (BUMP_HALF_WIDTH, STUB_RAMP) };
    let limits = if sprint && hits >= DESPERATE {
        SPRINT_SPEED_FACTORS
    } else if hits >= FRANTIC {
        FRANTIC_SPEED_FACTORS
    } else if hits >= DESPERATE {
        RELAXED_SPEED_FACTORS
    } else {
        (SHIFT_SPEED_FACTOR, HARD_SPEED_FACTOR)
    };
    let bump = |path: &mut Path, t: f64, d: Vec2, params: &CollisionParams, _: f64| {
        bump_with(path, t, d, params, (h, ramp), limits)
    };
    let ap = cell.approach;
    let amount = -cell.gap * (1.0 + OVERSHOOT) + EXTRA_PUSH;
    match other {
        Other::Agent(j) => {
            let mut dp = ap.p_a - ap.p_b;
            if dp.norm() < 1e-9 {
                let va = agents[i].path.velocity_at(ap.t_a);
                let vb = agents[j].path.velocity_at(ap.t_b);
                let rel = va - vb;
                dp = if rel.norm() > 1e-9 {
                    Vec2::new(-rel.y, rel.x)
                } else {
                    rotate(Vec2::new(1.0, 0.0), rng.random_range(0.0..std::f64::consts::TAU))
                };
            }
            let dir = dp.normalize();
            let (ui, uj) = (agents[i].path.mean_speed(), agents[j].path.mean_speed());
            let (mut wi, mut wj) = if ui + uj > 1e-9 { (uj / (ui + uj), ui / (ui + uj)) } else { (0.5, 0.5) };
            // A walker standing still is not shoved aside by one walking by
            // (it would shuffle, a step out and back that the footstep
            // planner cannot walk): the one walking gives way.
            match (standing_at(&agents[i].path, ap.t_a), standing_at(&agents[j].path, ap.t_b)) {
                (true, false) => (wi, wj) = (0.0, 1.0),
                (false, true) => (wi, wj) = (1.0, 0.0),
                _ => {}
            }
            match (can_move_at(&agents[i].path, ap.t_a), can_move_at(&agents[j].path, ap.t_b)) {
                (false, true) => (wi, wj) = (0.0, 1.0),
                (true, false) => (wi, wj) = (1.0, 0.0),
                _ => {}
            }
            let phi_i = rng.random_range(-MAX_ROTATION..=MAX_ROTATION);
            let phi_j = rng.random_range(-MAX_ROTATION..=MAX_ROTATION);
            let di = rotate(dir, phi_i) * amount * wi;
            let dj = rotate(-dir, phi_j) * amount * wj;
            if i == j {
                let w1 = bump(&mut agents[i].path, ap.t_a, di, params, BUMP_HALF_WIDTH);
                let w2 = bump(&mut agents[i].path, ap.t_b, dj, params, BUMP_HALF_WIDTH);
                vec![(i, union(w1, w2))]
            } else {
                let w1 = (wi > 0.0).then(|| bump(&mut agents[i].path, ap.t_a, di, params, BUMP_HALF_WIDTH));
                let w2 = (wj > 0.0).then(|| bump(&mut agents[j].path, ap.t_b, dj, params, BUMP_HALF_WIDTH));
                w1.map(|w| (i, w)).into_iter().chain(w2.map(|w| (j, w))).collect()
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
            let phi = rng.random_range(-MAX_ROTATION..=MAX_ROTATION);
            let w = bump(&mut agents[i].path, ap.t_a, rotate(dir, phi) * amount, params, BUMP_HALF_WIDTH);
            vec![(i, w)]
        }
    }
}

/// Greedy iterations between two joint resolutions of a stalled cluster.
fn stall_budget(n: usize) -> usize {
    200 + 8 * n
}

/// Largest number of agents solved jointly when the greedy pass stalls.
pub const MAX_CLUSTER: usize = 8;

/// Half-width `[s]` of the window of control points a joint resolution
/// moves around each collision of the cluster (the bumps' reach,
/// [`BUMP_HALF_WIDTH`], and as much again): the linear program stays small
/// however long the walks (walkers at human pace with waits cross a patch
/// in several periods, with 40 control points or more each).
pub const RESOLVE_HALF_WINDOW: f64 = 2.0;

/// The agents of the worst remaining collisions, at most `max`, and the
/// windows `(agent, from, to)` around the times of their collisions
/// ([`RESOLVE_HALF_WINDOW`], the agents' own times) in which they move.
fn cluster(matrix: &IncrementalMatrix<'_>, max: usize) -> (Vec<usize>, Vec<(usize, f64, f64)>) {
    let mut near = matrix.near(0.0);
    near.sort_by(|a, b| a.2.gap.total_cmp(&b.2.gap));
    let mut out: Vec<usize> = Vec::new();
    let mut windows: Vec<(usize, f64, f64)> = Vec::new();
    let h = RESOLVE_HALF_WINDOW;
    for (i, other, cell) in near {
        let ap = cell.approach;
        let j = if let Other::Agent(j) = other { Some(j) } else { None };
        let movers: Vec<(usize, f64)> =
            [(Some(i), ap.t_a), (j, ap.t_b)].into_iter().filter_map(|(a, t)| a.map(|a| (a, t))).collect();
        // A collision joins when all its agents fit.
        let new = movers.iter().filter(|m| !out.contains(&m.0)).count();
        if out.len() + new > max {
            continue;
        }
        for (a, t) in movers {
            if !out.contains(&a) {
                out.push(a);
            }
            windows.push((a, t - h, t + h));
        }
    }
    out.sort_unstable();
    (out, windows)
}

/// A collision-free path is polished where a turn's lateral acceleration
/// (turn rate × speed, between control points) exceeds this many times
/// [`crate::pace::TURN_ACCELERATION`]: the turn bound of real walkers, with
/// room for the turns that sampling at 0.4 s smooths.
pub const POLISH_TURN_FACTOR: f64 = 2.0;
/// Half-width `[s]` of the window of control points a polish moves around an
/// agent's worst turn.
pub const POLISH_HALF_WINDOW: f64 = 1.5;

/// The largest lateral acceleration `[m/s²]` of a path's turns
/// ([`Path::turns`]) and the time of the control point where it happens.
fn worst_turn(path: &Path) -> (f64, f64) {
    path.turns()
        .into_iter()
        .map(|t| (t.rate * t.speed, t.at))
        .fold((0.0, path.start()), |best, t| if t.0 > best.0 { t } else { best })
}

/// Largest number of agents polished per patch.
pub const MAX_POLISHED: usize = 2;

/// Polishes the agents with the worst turn or speed artefacts one by one
/// ([`refine::refine`] with [`RefineSettings::polish`]), keeping every
/// separation. Returns the linear programs solved.
fn polish(
    agents: &mut [Agent],
    reference: &[Agent],
    obstacles: &[Obstacle],
    ghosts: &[Ghost],
    params: &CollisionParams,
    matrix: &mut IncrementalMatrix<'_>,
) -> usize {
    let u_max = 1.5 * params.comfort_speed;
    // The two artefacts, each as a multiple of its threshold.
    let artefacts = |a: &Agent| {
        let (turn, at) = worst_turn(&a.path);
        let fast = a.path.max_speed() / u_max;
        (turn / (POLISH_TURN_FACTOR * crate::pace::TURN_ACCELERATION), fast, at)
    };
    let score = |a: &Agent| {
        let (turn, fast, at) = artefacts(a);
        (turn.max(fast), at)
    };
    let mut scored: Vec<(f64, usize, f64)> = agents
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let (s, at) = score(a);
            (s, i, at)
        })
        .filter(|(s, _, _)| *s > 1.0)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut solved = 0;
    for &(before, i, at) in scored.iter().take(MAX_POLISHED) {
        let saved = agents[i].path.clone();
        let (turn_before, fast_before, _) = artefacts(&agents[i]);
        let settings = RefineSettings {
            window: Some((at - POLISH_HALF_WINDOW, at + POLISH_HALF_WINDOW)),
            ..RefineSettings::polish()
        };
        solved += refine::refine(agents, reference, &[i], obstacles, ghosts, params, &settings, matrix, 1);
        // Keep the polish only where it lowered this agent's worst artefact
        // and made neither artefact worse beyond its threshold (a turn
        // smoothed by a burst of running is no polish).
        let (turn, fast, _) = artefacts(&agents[i]);
        let worse = |after: f64, before: f64| after > before.max(1.0) + 1e-9;
        if (score(&agents[i]).0 >= before || worse(turn, turn_before) || worse(fast, fast_before))
            && agents[i].path != saved
        {
            agents[i].path = saved;
            let paths: Vec<&Path> = agents.iter().map(|a| &a.path).collect();
            matrix.update(&paths, i, None);
        }
    }
    solved
}

fn union(a: Window, b: Window) -> Window {
    match (a, b) {
        (Some(x), Some(y)) => Some((x.0.min(y.0), x.1.max(y.1))),
        _ => None,
    }
}

/// Whether `path` stands still at time `t`: the segment there (and the one
/// before, at a control point) slower than [`STANDING_SPEED`]. A held
/// agent's path (which no push moves) does not count: against it, pushes
/// keep the weights of eq. 6.
fn standing_at(path: &Path, t: f64) -> bool {
    if path.holds() {
        return false;
    }
    let i = path.segment_at(t);
    let slow = |k: usize| path.segment_velocity(k).norm() < STANDING_SPEED;
    slow(i) && (i == 0 || (path.points[i].t - t).abs() > 1e-9 || slow(i - 1))
}

/// Whether moving a path's free part can change its position at time `t`
/// (not on a fixed stub).
fn can_move_at(path: &Path, t: f64) -> bool {
    let (lo, hi) = path.free_range();
    hi - lo > 1e-3 && (path.looped || (t > lo + 0.02 && t < hi - 0.02))
}

/// Raised-cosine weight of time offset `dt` for half-width `h`: 1 at 0,
/// ½ at `±h/2`, 0 beyond `±h`; C¹.
pub fn kernel(dt: f64, h: f64) -> f64 {
    if dt.abs() >= h {
        0.0
    } else {
        let c = (std::f64::consts::FRAC_PI_2 * dt / h).cos();
        c * c
    }
}

/// Moves `path` so that its position at time `t` is displaced by about `d`
/// `[m]`, spreading the move over a raised-cosine window of half-width `h`
/// `[s]`: control points are inserted (or reused) at `t`, `t ± h/2` and
/// `t ± h` inside the free range; the part of `d` along the path's velocity
/// becomes a time shift of those points (within the speed limit
/// [`SHIFT_SPEED_FACTOR`]·u_cft and keeping times strictly increasing), the
/// rest a spatial move (within [`HARD_SPEED_FACTOR`]·u_cft),
/// both weighted by [`kernel`]. Points stay in the patch shrunk by r.
///
/// Returns the time window that changed (in the path's times before the move)
/// or `None` (changed anywhere, e.g. across a loop's seam).
pub fn bump(path: &mut Path, t: f64, d: Vec2, params: &CollisionParams, h: f64) -> Window {
    bump_with(path, t, d, params, (h, STUB_RAMP), (SHIFT_SPEED_FACTOR, HARD_SPEED_FACTOR))
}

/// [`bump`] with the window half-width `h` and the fade-in near the fixed
/// stubs over `ramp_time` `[s]` (a pair that keeps colliding next to a stub
/// needs the room), and the speed limits as factors of u_cft of a time
/// shift and of any move.
pub fn bump_with(
    path: &mut Path,
    t: f64,
    d: Vec2,
    params: &CollisionParams,
    (h, ramp_time): (f64, f64),
    (shift_factor, hard_factor): (f64, f64),
) -> Window {
    let (lo, hi) = path.free_range();
    if hi - lo <= 1e-3 {
        return Some((t, t));
    }
    let looped = path.looped;
    let pi = params.period;
    // Times of the window's control points, inside the free range.
    let tc = t.clamp(lo, hi);
    let mut times = vec![tc];
    for off in [-h, -h / 2.0, h / 2.0, h] {
        let s = tc + off;
        if looped {
            times.push(lo + (s - lo).rem_euclid(pi));
        } else if s > lo + 0.02 && s < hi - 0.02 {
            times.push(s);
        }
    }
    path.movable_point_at(times[0], params.merge_interval);
    for &s in &times[1..] {
        path.movable_point_at(s, h / 4.0);
    }
    let offset = |s: f64| {
        let dt = s - tc;
        if looped { dt - pi * (dt / pi).round() } else { dt }
    };
    let n = path.points.len();
    // Near a fixed stub the move fades in over STUB_RAMP, so the path leaves
    // the stub without a kink.
    let ramp = |s: f64| if looped { 1.0 } else { ((s - lo).min(hi - s) / ramp_time).clamp(0.0, 1.0) };
    let weights: Vec<f64> = (0..n)
        .map(|k| {
            let s = path.points[k].t;
            if path.is_movable(k) { kernel(offset(s), h) * ramp(s) } else { 0.0 }
        })
        .collect();
    // Time shift: loop ends keep their times.
    let tweights: Vec<f64> = (0..n).map(|k| if looped && (k == 0 || k == n - 1) { 0.0 } else { weights[k] }).collect();
    let v = path.velocity_at(tc);
    let speed = v.norm();
    let mut dt = 0.0;
    if !looped && speed > 0.3 {
        let s = d.dot(&(v / speed));
        dt = -s / speed;
        // Keep times strictly increasing.
        for k in 0..n - 1 {
            let dw = tweights[k + 1] - tweights[k];
            let gap = path.points[k + 1].t - path.points[k].t;
            let need = gap.min(MIN_SPACING);
            if dt * dw < 0.0 {
                let room = (gap - need).max(0.0) / dw.abs();
                dt = dt.clamp(-room, room);
            }
        }
    }
    let (r, l) = (params.radius, params.size);
    let u_max = shift_factor * params.comfort_speed;
    let original = path.points.clone();
    // Attempts: the whole move; then the time shift halved, quartered and
    // dropped; then the spatial move halved down to nothing — until no
    // segment the move touches walks faster than the limit (or faster than
    // before, if it already did).
    let u_hard = hard_factor * params.comfort_speed;
    let attempts: [(f64, f64); 8] =
        [(1.0, 1.0), (0.5, 1.0), (0.25, 1.0), (0.0, 1.0), (0.0, 0.5), (0.0, 0.25), (0.0, 0.125), (0.0, 0.0)];
    for (ft, fs) in attempts {
        let dt_try = dt * ft;
        let spatial = (d + v * dt_try) * fs;
        for k in 0..n {
            let mut c = original[k];
            if weights[k] > 0.0 {
                c.p = crate::path::clamp_inside(c.p + spatial * weights[k], r, l);
                c.t += dt_try * tweights[k];
            }
            path.points[k] = c;
        }
        if looped {
            let p = path.points[0].p;
            path.points[n - 1].p = p;
        }
        let too_fast = (0..n - 1).any(|k| {
            if weights[k] == 0.0 && weights[k + 1] == 0.0 {
                return false;
            }
            let new = path.segment_velocity(k).norm();
            let old = (original[k + 1].p - original[k].p).norm() / (original[k + 1].t - original[k].t);
            let changed_time = tweights[k] != 0.0 || tweights[k + 1] != 0.0;
            (changed_time && dt_try != 0.0 && new > u_max && new > old + 1e-9)
                || (fs > 0.0 && new > u_hard && new > old + 1e-9)
        });
        if !too_fast {
            break;
        }
    }
    let changed: Vec<usize> = (0..n).filter(|&k| weights[k] > 0.0).collect();
    let (Some(&first), Some(&last)) = (changed.first(), changed.last()) else {
        return Some((tc, tc));
    };
    if looped && (first == 0 || last == n - 1 || last - first + 1 != changed.len()) {
        return None;
    }
    let a = original[first.saturating_sub(1)].t;
    let b = original[(last + 1).min(n - 1)].t;
    Some((a, b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path::{ControlPoint, PointKind};
    use crowdpatch_runtime::format::AgentKind;

    fn agent(points: Vec<ControlPoint>) -> Agent {
        Agent {
            kind: AgentKind::Endogenous { index: 0 },
            path: Path { points, looped: false },
            entry: None,
            exit: None,
            preferred_speed: 1.0,
        }
    }

    fn at(x: f64, y: f64, t: f64, kind: PointKind) -> ControlPoint {
        ControlPoint { p: Vec2::new(x, y), t, kind }
    }

    #[test]
    fn a_walker_gives_way_to_one_standing_still() {
        use PointKind::{Boundary, Free, Stub};
        // A walks north and stands at (8, 8) from 8 s to 16 s; B walks east
        // at 1 m/s past (8, 8.3) at 12 s, 0.3 m from A (2r = 0.6 m).
        let a = agent(vec![
            at(8.0, 0.0, 0.0, Boundary),
            at(8.0, 0.3, 0.3, Stub),
            at(8.0, 8.0, 8.0, Free),
            at(8.0, 8.0, 16.0, Free),
            at(8.0, 15.7, 23.7, Stub),
            at(8.0, 16.0, 24.0, Boundary),
        ]);
        let b = agent(vec![
            at(0.0, 8.3, 4.0, Boundary),
            at(0.3, 8.3, 4.3, Stub),
            at(15.7, 8.3, 19.7, Stub),
            at(16.0, 8.3, 20.0, Boundary),
        ]);
        let params = CollisionParams {
            radius: 0.3,
            size: 16.0,
            period: 60.0,
            margin: 0.02,
            max_iterations: 500,
            merge_interval: 0.1,
            method: crate::model::SolverKind::Default,
            comfort_speed: 1.33,
            stub_depth: 0.3,
            seed: 1,
        };
        let mut agents = vec![a.clone(), b];
        let out = remove_collisions(&mut agents, &[], &[], &params, &mut |_, _| true);
        assert!(out.converged, "{:?}", out.remaining);
        let d = crate::proximity::closest_periodic(&agents[0].path, &agents[1].path, 60.0, None).unwrap();
        assert!(d.distance >= 0.6, "{}", d.distance);
        // A stands where it stood, all the while.
        for k in 0..=80 {
            let t = 8.0 + k as f64 * 0.1;
            assert!((agents[0].path.position(t) - Vec2::new(8.0, 8.0)).norm() < 1e-9, "A moved at {t}");
        }
    }

    #[test]
    fn standing_is_read_on_the_segments_not_their_mean() {
        use PointKind::Free;
        // A U-turn at a control point: the mean velocity there is zero, yet
        // the walker does not stand.
        let p = Path {
            points: vec![at(8.0, 4.0, 0.0, Free), at(8.0, 8.0, 4.0, Free), at(8.0, 4.0, 8.0, Free)],
            looped: false,
        };
        assert!(p.velocity_at(4.0).norm() < 1e-9);
        assert!(!standing_at(&p, 4.0));
        let still = Path {
            points: vec![at(8.0, 4.0, 0.0, Free), at(8.0, 4.0, 4.0, Free), at(8.0, 8.0, 8.0, Free)],
            looped: false,
        };
        assert!(standing_at(&still, 2.0) && !standing_at(&still, 4.0) && !standing_at(&still, 6.0));
    }
}
