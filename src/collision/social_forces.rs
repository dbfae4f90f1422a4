//! The method the seed paper compares against (OPT §2 and Figure 10): the
//! original crowd patches' adapted social forces (Yersin, Maïm, Pettré,
//! Thalmann, *Crowd Patches*, I3D 2009, after Helbing et al. 2005). Each agent
//! is a particle attracted by a *goal moving along its initial straight path*
//! and repelled by the other agents, the seam ghosts, the obstacles and the
//! sides of the patch; it reacts when others are near, without anticipation.
//!
//! Per step of `DT` the acceleration of a free agent is
//! `(v_goal + K·(g(t) − x) − v) / TAU` (goal attraction) plus
//! `A·exp((θ − d)/B)·n̂` from every neighbour closer than `CUTOFF` (θ = 2r, or
//! r to an obstacle's surface), with the speed capped at `MAX_SPEED`. Agents
//! walk their fixed crossing stubs exactly. Periodicity: an agent meets the
//! other instances of every agent (`t + kπ`, `k ≠ 0`) as they were in the
//! previous sweep; `SWEEPS` sweeps over the whole time line are run. At the end
//! the drift from the goal is blended out over `BLEND` seconds so the path
//! meets its exit stub (or closes its loop) exactly — the boundary conditions
//! are kept, collisions may remain (they are reported; this baseline does not
//! iterate to a guarantee).

use super::matrix::find_contacts;
use super::params::{CollisionOutcome, CollisionParams};
use crate::geometry::{Vec2, obstacle_signed_distance};
use crate::model::Obstacle;
use crate::path::{Agent, ControlPoint, Path, PointKind};
use crate::proximity::Ghost;

/// Time step `[s]` ([`crate::limits::SOCIAL_FORCES_DT`], where the document
/// layer's cost estimate reads it).
pub use crate::limits::SOCIAL_FORCES_DT as DT;
/// Relaxation time of the goal attraction `[s]` (Helbing's τ).
pub const TAU: f64 = 0.5;
/// Gain pulling the particle back onto its moving goal `[1/s]`.
pub const K: f64 = 1.0;
/// Repulsion strength `[m/s²]`.
pub const A: f64 = 8.0;
/// Repulsion range `[m]`.
pub const B: f64 = 0.2;
/// Neighbours farther than this are ignored `[m]`.
pub const CUTOFF: f64 = 2.5;
/// Largest speed `[m/s]`.
pub const MAX_SPEED: f64 = 2.5;
/// Sweeps over the time line ([`crate::limits::SOCIAL_FORCES_SWEEPS`]).
pub use crate::limits::SOCIAL_FORCES_SWEEPS as SWEEPS;
/// Time over which the end drift is blended out `[s]`.
pub const BLEND: f64 = 2.0;
/// Time between the control points of the output `[s]`: every integration
/// step, so that the trajectory played back is the simulated one (coarser
/// samples would add a kink at every control point).
pub const SAMPLE: f64 = DT;

/// The free time range of a path and the positions there.
struct Track {
    lo: f64,
    hi: f64,
    /// Positions at `lo + k·DT`.
    x: Vec<Vec2>,
}

impl Track {
    fn position(&self, path: &Path, t: f64) -> Vec2 {
        if t < self.lo || t > self.hi || self.x.len() < 2 {
            return path.position(t);
        }
        let f = (t - self.lo) / DT;
        let k = (f.floor() as usize).min(self.x.len() - 2);
        let u = (f - k as f64).clamp(0.0, 1.0);
        self.x[k] + (self.x[k + 1] - self.x[k]) * u
    }
}

/// Replaces the free part of every agent's path by its social-forces
/// trajectory (see the module docs). `progress(step, 0)` is called every step.
pub fn remove_collisions(
    agents: &mut [Agent],
    obstacles: &[Obstacle],
    ghosts: &[Ghost],
    params: &CollisionParams,
    progress: &mut dyn FnMut(usize, f64) -> bool,
) -> CollisionOutcome {
    let (r, l) = (params.radius, params.size);
    let goals: Vec<Path> = agents.iter().map(|a| a.path.clone()).collect();
    let n = agents.len();
    let ranges: Vec<(f64, f64)> = goals.iter().map(|p| p.free_range()).collect();
    let steps_of = |i: usize| ((ranges[i].1 - ranges[i].0) / DT).ceil().max(1.0) as usize;
    // Previous sweep, first the goals themselves.
    let mut tracks: Vec<Track> = (0..n)
        .map(|i| {
            let (lo, hi) = ranges[i];
            let m = steps_of(i);
            Track { lo, hi, x: (0..=m).map(|k| goals[i].position((lo + k as f64 * DT).min(hi))).collect() }
        })
        .collect();
    let t0 = ranges.iter().map(|r| r.0).fold(f64::INFINITY, f64::min);
    let t1 = ranges.iter().map(|r| r.1).fold(f64::NEG_INFINITY, f64::max);
    let total = ((t1 - t0) / DT).ceil() as usize;
    let mut iterations = 0;
    let mut cancelled = false;
    'sweeps: for _ in 0..SWEEPS {
        let mut x: Vec<Vec2> = (0..n).map(|i| goals[i].position(ranges[i].0)).collect();
        let mut v: Vec<Vec2> = (0..n).map(|i| goals[i].velocity_at(ranges[i].0)).collect();
        let mut next: Vec<Track> = (0..n).map(|i| Track { lo: ranges[i].0, hi: ranges[i].1, x: vec![x[i]] }).collect();
        for s in 1..=total {
            iterations += 1;
            if !progress(iterations, 0.0) {
                cancelled = true;
                break 'sweeps;
            }
            let t = t0 + s as f64 * DT;
            let active: Vec<bool> = (0..n).map(|i| t > ranges[i].0 && t <= ranges[i].1 + DT * 0.5).collect();
            let scene = Scene { goals: &goals, ranges: &ranges, tracks: &tracks, obstacles, ghosts, params };
            let acc: Vec<Vec2> =
                (0..n).map(|i| if active[i] { scene.acceleration(i, t - DT, &x, &v) } else { Vec2::zeros() }).collect();
            for i in 0..n {
                if !active[i] {
                    continue;
                }
                v[i] += acc[i] * DT;
                let speed = v[i].norm();
                if speed > MAX_SPEED {
                    v[i] *= MAX_SPEED / speed;
                }
                x[i] = crate::path::clamp_inside(x[i] + v[i] * DT, r, l);
                if next[i].x.len() <= steps_of(i) {
                    next[i].x.push(x[i]);
                }
            }
        }
        // Blend the end drift out so each track meets its end exactly.
        for (i, tr) in next.iter_mut().enumerate() {
            blend_end(tr, &goals[i], ranges[i], steps_of(i), (r, l));
        }
        tracks = next;
    }
    if !cancelled {
        for (i, a) in agents.iter_mut().enumerate() {
            a.path = to_path(&goals[i], &tracks[i]);
        }
    }
    let remaining = find_contacts(agents, obstacles, ghosts, params);
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

/// What the forces on an agent at one time step depend on.
struct Scene<'a> {
    goals: &'a [Path],
    ranges: &'a [(f64, f64)],
    /// The previous sweep (the agents' other instances).
    tracks: &'a [Track],
    obstacles: &'a [Obstacle],
    ghosts: &'a [Ghost],
    params: &'a CollisionParams,
}

impl Scene<'_> {
    /// Acceleration `[m/s²]` of agent `i` at time `tp`: relaxation towards
    /// its goal moving along the straight path (Helbing's driving term,
    /// after Yersin et al. 2009), and exponential repulsion from the other
    /// agents (this instance live in `x`, the others as in the previous
    /// sweep), the seam ghosts, the obstacles and the sides. O(agents ·
    /// instances + ghosts + obstacles).
    fn acceleration(&self, i: usize, tp: f64, x: &[Vec2], v: &[Vec2]) -> Vec2 {
        let (r, l, pi) = (self.params.radius, self.params.size, self.params.period);
        let (goals, ranges) = (self.goals, self.ranges);
        let g = goals[i].position(tp);
        let gv = goals[i].velocity_at(tp);
        let mut a = (gv + (g - x[i]) * K - v[i]) / TAU;
        let mut push = |d: Vec2, theta: f64| {
            let dist = d.norm();
            if dist < CUTOFF && dist > 1e-9 {
                a += d / dist * (A * ((theta - dist) / B).exp());
            }
        };
        // Other agents: the same instance live, other instances as in the
        // previous sweep; fixed stubs from the paths.
        for j in 0..goals.len() {
            let lo = ((goals[j].start() - tp) / pi).ceil() as i64;
            let hi = ((goals[j].end() - tp) / pi).floor() as i64;
            for k in lo..=hi {
                if j == i && (k == 0 || goals[i].looped) {
                    continue;
                }
                let tj = tp + k as f64 * pi;
                let pj = if k == 0 && tj >= ranges[j].0 && tj <= ranges[j].1 {
                    x[j]
                } else {
                    self.tracks[j].position(&goals[j], tj)
                };
                push(x[i] - pj, 2.0 * r);
            }
        }
        for gh in self.ghosts {
            let (a0, a1) = (gh.path.start(), gh.path.end());
            let k0 = ((a0 - tp) / pi).ceil() as i64;
            let k1 = ((a1 - tp) / pi).floor() as i64;
            for k in k0..=k1 {
                if gh.owner.is_some_and(|o| o.0 == i && o.1 == k) {
                    continue;
                }
                push(x[i] - gh.path.position(tp + k as f64 * pi), 2.0 * r);
            }
        }
        for o in self.obstacles {
            let (d, dir) = obstacle_signed_distance(x[i], o);
            if d < CUTOFF {
                a += dir * (A * ((r - d) / B).exp());
            }
        }
        // The sides keep r away.
        for (d, dir) in [
            (x[i].x, Vec2::new(1.0, 0.0)),
            (l - x[i].x, Vec2::new(-1.0, 0.0)),
            (x[i].y, Vec2::new(0.0, 1.0)),
            (l - x[i].y, Vec2::new(0.0, -1.0)),
        ] {
            if d < 1.0 {
                a += dir * (A * ((r - d) / B).exp());
            }
        }
        a
    }
}

/// Completes a sweep's track to its `m + 1` samples and blends the drift
/// from the goal's end out over the last [`BLEND`] seconds, so that the
/// track meets its end exactly; samples stay in the patch shrunk by r.
fn blend_end(tr: &mut Track, goal: &Path, (lo, hi): (f64, f64), m: usize, (r, l): (f64, f64)) {
    while tr.x.len() <= m {
        let last = tr.x[tr.x.len() - 1];
        tr.x.push(last);
    }
    let end = goal.position(hi);
    let drift = end - tr.x[m];
    for (k, p) in tr.x.iter_mut().enumerate() {
        let t = lo + k as f64 * DT;
        let u = ((t - (hi - BLEND)) / BLEND).clamp(0.0, 1.0);
        let w = u * u * (3.0 - 2.0 * u);
        *p = crate::path::clamp_inside(*p + drift * w, r, l);
    }
    tr.x[m] = end;
}

/// The goal path with its free part replaced by the track, sampled every
/// [`SAMPLE`].
fn to_path(goal: &Path, track: &Track) -> Path {
    let (lo, hi) = (track.lo, track.hi);
    let mut points: Vec<ControlPoint> = goal.points.iter().filter(|c| c.t <= lo).copied().collect();
    if goal.looped {
        points.clear();
    }
    let m = ((hi - lo) / SAMPLE).ceil().max(1.0) as usize;
    let start = if goal.looped { 0 } else { 1 };
    for k in start..m {
        let t = lo + (hi - lo) * k as f64 / m as f64;
        points.push(ControlPoint::free(track.position(goal, t), t));
    }
    if goal.looped {
        let p0 = points[0].p;
        points.push(ControlPoint::free(p0, hi));
    } else {
        points.extend(goal.points.iter().filter(|c| c.t >= hi).copied());
    }
    // Kinds of the fixed points are the goal's.
    let _ = PointKind::Free;
    Path { points, looped: goal.looped }
}
