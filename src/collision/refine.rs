//! Global refinement of control points in space **and time** by sequential
//! linear programming (good_lp with the pure-Rust Clarabel interior-point
//! solver: on the resolutions' programs of 450–1,200 variables it is 3–6×
//! faster than the simplex of microlp, which the project used before, with
//! the same steps taken on the benchmark's patches) — the
//! "global optimization approach that takes into account speed" and the
//! moves "in space and time" the seed paper leaves as future work (§5, §6).
//!
//! One step linearises, around the current paths, for the control points of a
//! chosen set of agents (positions `Δx, Δy`, times `Δt`; boundary points and
//! crossing stubs are not variables):
//!
//! - **separation** at every closest approach (each period shift) nearer than
//!   `target + buffer`: `n̂·(Δp_a(t_a) − Δp_b(t_b)) ≥ target − d`, where a
//!   point on segment `s` at fraction `u` moves by
//!   `(1−u)·ΔP_s + u·ΔP_{s+1} − v_s·((1−u)·ΔT_s + u·ΔT_{s+1})` (a later control
//!   point puts the agent behind along its velocity); obstacles and seam ghosts
//!   likewise, with the other side fixed. In *resolve* mode each constraint has
//!   a penalised slack, so an overlapping set still yields a step;
//! - **strictly increasing times**: `T_{k+1} + ΔT_{k+1} − T_k − ΔT_k ≥ δ`;
//! - **staying inside A**: `r ≤ x + Δx ≤ L − r`, same for y;
//! - a **trust region** `|Δx|, |Δy| ≤ ρ`, `|ΔT| ≤ ρ_t`;
//!
//! and minimises, with L1 terms (auxiliary variables),
//! `w_dev·Σ|P + ΔP − P_ref(T)|` (deviation from the initial paths),
//! `w_speed·Σ h·| |v| + v̂·Δv − u_w |` (speed away from the walker's
//! preferred speed `u_w`) and
//! `w_turn·Σ |Δ(v_k − v_{k−1})| / Δt_mid` (velocity jumps at control points:
//! turns and speed artefacts), plus `w_slack·Σ slack`.
//! The step is then applied and checked exactly against the distance matrix;
//! a step that makes things worse is halved, then dropped.

use super::matrix::IncrementalMatrix;
use super::params::CollisionParams;
use crate::geometry::Vec2;
use crate::model::Obstacle;
use crate::path::{Agent, Path};
use crate::proximity::{Ghost, closest_periodic, closest_to_obstacle, closest_with_shift, shifts};
use good_lp::{Constraint, Expression, ProblemVariables, Solution, SolverModel, Variable, clarabel, variable};

/// Settings of one refinement.
#[derive(Debug, Clone, PartialEq)]
pub struct RefineSettings {
    /// Trust region of positions `[m]`.
    pub trust_position: f64,
    /// Trust region of times `[s]`.
    pub trust_time: f64,
    /// Closest approaches nearer than `target + buffer` become constraints `[m]`.
    pub buffer: f64,
    /// Weight of the deviation from the reference paths `[1/m]`.
    pub weight_deviation: f64,
    /// Weight of the speed deviation from comfort `[s/m]`.
    pub weight_speed: f64,
    /// Weight of the velocity jumps at control points `[s²/m]`.
    pub weight_turn: f64,
    /// Weight of a segment's speed above the walking limit
    /// ([`super::params::HARD_SPEED_FACTOR`]·u_cft) `[s/m]`, per second of
    /// the segment: a hinge `max(0, |v| + v̂·Δv − u_hard)`.
    pub weight_running: f64,
    /// Separation constraints are soft with this penalty `[1/m]`
    /// (`None`: hard).
    pub slack: Option<f64>,
    /// Shortest time between control points `[s]`.
    pub min_spacing: f64,
    /// Only control points in this time window move `[s]` (`None`: all).
    pub window: Option<(f64, f64)>,
    /// Per agent, `(agent, from, to)`: an agent listed moves only its
    /// control points inside one of its windows `[s]` (its own unwrapped
    /// times); an agent not listed, all (within [`Self::window`]).
    pub windows: Vec<(usize, f64, f64)>,
}

impl RefineSettings {
    /// Resolving collisions where the greedy pass stalls.
    pub fn resolve() -> RefineSettings {
        RefineSettings {
            trust_position: 0.4,
            trust_time: 0.4,
            buffer: 0.15,
            weight_deviation: 0.05,
            weight_speed: 0.05,
            weight_turn: 0.02,
            weight_running: 20.0,
            slack: Some(100.0),
            min_spacing: 0.05,
            window: None,
            windows: Vec::new(),
        }
    }

    /// Polishing collision-free paths: lower speed and turn artefacts, keep
    /// every separation.
    pub fn polish() -> RefineSettings {
        RefineSettings {
            trust_position: 0.25,
            trust_time: 0.25,
            buffer: 0.12,
            weight_deviation: 0.1,
            weight_speed: 1.0,
            weight_turn: 1.0,
            weight_running: 0.0,
            slack: None,
            min_spacing: 0.05,
            window: None,
            windows: Vec::new(),
        }
    }
}

/// The variables of one control point.
#[derive(Debug, Clone, Copy)]
struct PointVars {
    x: Variable,
    y: Variable,
    t: Option<Variable>,
}

/// Per agent of the step: per control point, its variables (`None`: fixed).
struct Vars {
    agents: Vec<usize>,
    points: Vec<Vec<Option<PointVars>>>,
}

impl Vars {
    fn of(&self, agent: usize) -> Option<&Vec<Option<PointVars>>> {
        self.agents.iter().position(|&a| a == agent).map(|k| &self.points[k])
    }
}

/// Adds `scale · n̂ · Δp(t)` of path `path` (with variables `vars`) at time
/// `t` to `e`.
fn add_displacement(e: &mut Expression, path: &Path, vars: &[Option<PointVars>], t: f64, n: Vec2, scale: f64) {
    let s = path.segment_at(t);
    let (a, b) = (path.points[s], path.points[s + 1]);
    let u = ((t - a.t) / (b.t - a.t)).clamp(0.0, 1.0);
    let v = path.segment_velocity(s);
    for (k, w) in [(s, 1.0 - u), (s + 1, u)] {
        if w == 0.0 {
            continue;
        }
        if let Some(pv) = vars[k] {
            e.add_mul(scale * w * n.x, pv.x);
            e.add_mul(scale * w * n.y, pv.y);
            if let Some(tv) = pv.t {
                e.add_mul(-scale * w * n.dot(&v), tv);
            }
        }
    }
}

/// Whether `Δp(t)` of `path` depends on some variable of `vars`.
fn moves_at(path: &Path, vars: &[Option<PointVars>], t: f64) -> bool {
    let s = path.segment_at(t);
    vars[s].is_some() || vars[s + 1].is_some()
}

/// A linear program under construction: variables, objective, constraints.
struct Lp {
    pv: ProblemVariables,
    objective: Expression,
    constraints: Vec<Constraint>,
}

impl Lp {
    /// Adds `weight · |lin + a|` to the objective through an auxiliary
    /// variable `e ≥ 0` with `e − lin ≥ a` and `e + lin ≥ −a`.
    fn abs_term(&mut self, weight: f64, lin: Expression, a: f64) {
        let e = self.pv.add(variable().min(0.0));
        self.objective.add_mul(weight, e);
        self.constraints.push((Expression::from(e) - lin.clone()).geq(a));
        self.constraints.push((Expression::from(e) + lin).geq(-a));
    }

    /// Adds the separation constraint `e ≥ rhs`, soft with a penalised slack
    /// when `slack` is given.
    fn separation(&mut self, e: Expression, rhs: f64, slack: Option<f64>) {
        let e = match slack {
            Some(w) => {
                let s = self.pv.add(variable().min(0.0));
                self.objective.add_mul(w, s);
                e + s
            }
            None => e,
        };
        self.constraints.push(e.geq(rhs));
    }
}

/// One SLP step over the agents `movable` (see the module docs). Returns the
/// displacements `(agent, point, Δp, Δt)` of the solution, or `None` when the
/// LP failed. Cost: one LP with O(movable control points + close
/// approaches) variables and constraints.
#[allow(clippy::too_many_arguments)]
pub fn step(
    agents: &[Agent],
    reference: &[Agent],
    movable: &[usize],
    obstacles: &[Obstacle],
    ghosts: &[Ghost],
    params: &CollisionParams,
    settings: &RefineSettings,
) -> Option<Vec<(usize, usize, Vec2, f64)>> {
    let mut lp = Lp { pv: ProblemVariables::new(), objective: Expression::from(0.0), constraints: Vec::new() };
    let vars = variables(&mut lp.pv, agents, movable, params, settings);
    for (slot, &i) in movable.iter().enumerate() {
        path_terms(
            &mut lp,
            &agents[i],
            &reference[i].path,
            &vars.points[slot],
            settings,
            super::params::HARD_SPEED_FACTOR * params.comfort_speed,
        );
    }
    for (slot, &i) in movable.iter().enumerate() {
        separations(&mut lp, agents, (i, &vars.points[slot]), &vars, (obstacles, ghosts), params, settings);
    }
    let Lp { pv, objective, constraints } = lp;
    let mut model = pv.minimise(objective).using(clarabel);
    for c in constraints {
        model.add_constraint(c);
    }
    let solution = model.solve().ok()?;
    let mut out = Vec::new();
    for (slot, &i) in movable.iter().enumerate() {
        let n = agents[i].path.points.len();
        for (k, p) in vars.points[slot].iter().enumerate() {
            let Some(p) = p else { continue };
            if agents[i].path.looped && k == n - 1 {
                continue;
            }
            let dp = Vec2::new(solution.value(p.x), solution.value(p.y));
            let dt = p.t.map_or(0.0, |t| solution.value(t));
            if dp.norm() > 1e-7 || dt.abs() > 1e-7 {
                out.push((i, k, dp, dt));
            }
        }
    }
    Some(out)
}

/// The variables of the movable control points of the agents `movable`
/// (inside the settings' window), bounded by the trust region and by the
/// patch shrunk by r; a loop's last point shares its first point's.
fn variables(
    pv: &mut ProblemVariables,
    agents: &[Agent],
    movable: &[usize],
    params: &CollisionParams,
    settings: &RefineSettings,
) -> Vars {
    let (r, l) = (params.radius, params.size);
    let mut vars = Vars { agents: movable.to_vec(), points: Vec::new() };
    for &i in movable {
        let path = &agents[i].path;
        let n = path.points.len();
        let mut pts: Vec<Option<PointVars>> = vec![None; n];
        for (k, &c) in path.points.iter().enumerate() {
            if !path.is_movable(k) || (path.looped && k == n - 1) {
                continue;
            }
            if settings.window.is_some_and(|(lo, hi)| c.t < lo || c.t > hi) {
                continue;
            }
            // A loop's times are taken periodically.
            let pi = params.period;
            let inside = |w: &&(usize, f64, f64)| {
                let copies: &[f64] = if path.looped { &[0.0, -pi, pi] } else { &[0.0] };
                copies.iter().any(|k| c.t + k >= w.1 && c.t + k <= w.2)
            };
            let mut own = settings.windows.iter().filter(|w| w.0 == i).peekable();
            if own.peek().is_some() && !own.any(|w| inside(&w)) {
                continue;
            }
            let rho = settings.trust_position;
            let x = pv.add(variable().min((r - c.p.x).max(-rho).min(0.0)).max((l - r - c.p.x).min(rho).max(0.0)));
            let y = pv.add(variable().min((r - c.p.y).max(-rho).min(0.0)).max((l - r - c.p.y).min(rho).max(0.0)));
            let t = (!path.looped).then(|| pv.add(variable().min(-settings.trust_time).max(settings.trust_time)));
            pts[k] = Some(PointVars { x, y, t });
        }
        if path.looped {
            pts[n - 1] = pts[0];
        }
        vars.points.push(pts);
    }
    vars
}

/// The objective terms of one movable path — deviation from `reference`,
/// speed away from the walker's preferred speed, velocity jumps at control points — and its
/// strictly increasing times.
fn path_terms(
    lp: &mut Lp,
    agent: &Agent,
    reference: &Path,
    pts: &[Option<PointVars>],
    settings: &RefineSettings,
    u_hard: f64,
) {
    let path = &agent.path;
    let n = path.points.len();
    // Deviation from the reference path at the point's time.
    for (k, &slot) in pts.iter().enumerate() {
        let Some(p) = slot else { continue };
        if path.looped && k == n - 1 {
            continue;
        }
        let c = path.points[k];
        let reference = reference.position(c.t);
        for (var, off) in [(p.x, c.p.x - reference.x), (p.y, c.p.y - reference.y)] {
            lp.abs_term(settings.weight_deviation, Expression::from(var), off);
        }
    }
    // Segment velocities, linearised: Δv = (ΔP₁ − ΔP₀)/h − v·(ΔT₁ − ΔT₀)/h.
    let dv = |s: usize| -> [Expression; 2] {
        let h = path.points[s + 1].t - path.points[s].t;
        let v = path.segment_velocity(s);
        let mut out = [Expression::from(0.0), Expression::from(0.0)];
        for (k, sign) in [(s, -1.0), (s + 1, 1.0)] {
            if let Some(p) = pts[k] {
                out[0].add_mul(sign / h, p.x);
                out[1].add_mul(sign / h, p.y);
                if let Some(t) = p.t {
                    out[0].add_mul(-sign * v.x / h, t);
                    out[1].add_mul(-sign * v.y / h, t);
                }
            }
        }
        out
    };
    let has = |s: usize| pts[s].is_some() || pts[s + 1].is_some();
    for s in 0..n - 1 {
        if !has(s) {
            continue;
        }
        let h = path.points[s + 1].t - path.points[s].t;
        let v = path.segment_velocity(s);
        let speed = v.norm();
        if speed > 1e-6 {
            let [dx, dy] = dv(s);
            let lin = dx * (v.x / speed) + dy * (v.y / speed);
            // Running: a hinge on the speed above the walking limit, for the
            // segments near it (a trust-region step changes a speed by
            // less than about 2ρ/h).
            if settings.weight_running > 0.0 && speed > 0.75 * u_hard {
                let e = lp.pv.add(variable().min(0.0));
                lp.objective.add_mul(settings.weight_running * h, e);
                lp.constraints.push((Expression::from(e) - lin.clone()).geq(speed - u_hard));
            }
            lp.abs_term(settings.weight_speed * h, lin, speed - agent.preferred_speed);
        }
    }
    for k in 1..n - 1 {
        if !(has(k - 1) || has(k)) {
            continue;
        }
        let mid = (path.points[k + 1].t - path.points[k - 1].t) / 2.0;
        let a0 = path.segment_velocity(k) - path.segment_velocity(k - 1);
        let [ax1, ay1] = dv(k);
        let [ax0, ay0] = dv(k - 1);
        for (lin, a) in [(ax1 - ax0, a0.x), (ay1 - ay0, a0.y)] {
            lp.abs_term(settings.weight_turn / mid.max(0.05), lin, a);
        }
    }
    // Strictly increasing times.
    for s in 0..n - 1 {
        let (ta, tb) = (pts[s].and_then(|p| p.t), pts[s + 1].and_then(|p| p.t));
        if ta.is_none() && tb.is_none() {
            continue;
        }
        let gap = path.points[s + 1].t - path.points[s].t;
        let need = gap.min(settings.min_spacing);
        let mut e = Expression::from(0.0);
        if let Some(tb) = tb {
            e.add_mul(1.0, tb);
        }
        if let Some(ta) = ta {
            e.add_mul(-1.0, ta);
        }
        lp.constraints.push(e.geq(need - gap));
    }
}

/// The separation constraints of movable agent `i` (variables `va`) at every
/// closest approach nearer than `target + buffer`: to the other agents (a
/// movable pair once), to the seam ghosts and to the obstacles.
fn separations(
    lp: &mut Lp,
    agents: &[Agent],
    (i, va): (usize, &[Option<PointVars>]),
    vars: &Vars,
    (obstacles, ghosts): (&[Obstacle], &[Ghost]),
    params: &CollisionParams,
    settings: &RefineSettings,
) {
    let (r, pi) = (params.radius, params.period);
    let agent_target = 2.0 * r + params.margin;
    let a = &agents[i].path;
    let normal = |d: Vec2| if d.norm() > 1e-9 { d / d.norm() } else { Vec2::new(1.0, 0.0) };
    for (j, other) in agents.iter().enumerate() {
        let b = &other.path;
        let vb = vars.of(j);
        // A pair of movable agents once.
        if (vb.is_some() && j < i) || (i == j && a.looped) {
            continue;
        }
        for k in shifts(a, b, pi) {
            if i == j && k == 0 {
                continue;
            }
            let Some(ap) = closest_with_shift(a, b, k as f64 * pi) else { continue };
            if ap.distance >= agent_target + settings.buffer {
                continue;
            }
            // A row without variables that already holds adds nothing.
            if ap.distance >= agent_target && !moves_at(a, va, ap.t_a) && vb.is_none_or(|vb| !moves_at(b, vb, ap.t_b)) {
                continue;
            }
            let n = normal(ap.p_a - ap.p_b);
            let mut e = Expression::from(0.0);
            add_displacement(&mut e, a, va, ap.t_a, n, 1.0);
            if let Some(vb) = vb {
                add_displacement(&mut e, b, vb, ap.t_b, n, -1.0);
            }
            lp.separation(e, agent_target - ap.distance, settings.slack);
        }
    }
    for ghost in ghosts {
        let skip = ghost.owner.filter(|o| o.0 == i).map(|o| o.1);
        let Some(ap) = closest_periodic(a, &ghost.path, pi, skip) else { continue };
        if ap.distance >= agent_target + settings.buffer || (ap.distance >= agent_target && !moves_at(a, va, ap.t_a)) {
            continue;
        }
        let mut e = Expression::from(0.0);
        add_displacement(&mut e, a, va, ap.t_a, normal(ap.p_a - ap.p_b), 1.0);
        lp.separation(e, agent_target - ap.distance, settings.slack);
    }
    for o in obstacles {
        let (t, _, d, dir) = closest_to_obstacle(a, o);
        let target = r + params.margin;
        if d >= target + settings.buffer || (d >= target && !moves_at(a, va, t)) {
            continue;
        }
        let mut e = Expression::from(0.0);
        add_displacement(&mut e, a, va, t, dir, 1.0);
        lp.separation(e, target - d, settings.slack);
    }
}

/// Applies a step scaled by `scale`; returns each changed agent's window.
fn apply(agents: &mut [Agent], moves: &[(usize, usize, Vec2, f64)], scale: f64, params: &CollisionParams) {
    let (r, l) = (params.radius, params.size);
    for &(i, k, dp, dt) in moves {
        let path = &mut agents[i].path;
        let p = crate::path::clamp_inside(path.points[k].p + dp * scale, r, l);
        path.set_position(k, p);
        path.points[k].t += dt * scale;
    }
}

/// The time window `[s]` (the path's own times before the step) in which
/// the `moves` of agent `i` change its path: from the control point before
/// the first moved one to the one after the last (a moved point's time stays
/// between its neighbours'), or `None` (anywhere) when a loop's seam moves.
fn changed_window(path: &Path, moves: &[(usize, usize, Vec2, f64)], i: usize) -> Option<(f64, f64)> {
    let n = path.points.len();
    let ks = moves.iter().filter(|m| m.0 == i).map(|m| m.1);
    let (lo, hi) = ks.fold((usize::MAX, 0), |(lo, hi), k| (lo.min(k), hi.max(k)));
    if lo == usize::MAX {
        return Some((path.start(), path.start()));
    }
    if path.looped && (lo == 0 || hi + 1 >= n - 1) {
        return None;
    }
    Some((path.points[lo.saturating_sub(1)].t, path.points[(hi + 1).min(n - 1)].t))
}

/// The sum of how far every near cell is below its target `[m]`.
fn violation(matrix: &IncrementalMatrix<'_>) -> f64 {
    matrix.near(0.0).iter().map(|c| -c.2.gap).sum()
}

/// Runs up to `rounds` SLP steps over `movable`, keeping the matrix exact.
/// In resolve mode (soft separation) a step is kept when the total violation
/// drops; in polish mode (hard separation) when no gap drops below zero that
/// was not already. A rejected step is halved twice, then dropped. Returns the
/// number of linear programs solved.
#[allow(clippy::too_many_arguments)]
pub fn refine(
    agents: &mut [Agent],
    reference: &[Agent],
    movable: &[usize],
    obstacles: &[Obstacle],
    ghosts: &[Ghost],
    params: &CollisionParams,
    settings: &RefineSettings,
    matrix: &mut IncrementalMatrix<'_>,
    rounds: usize,
) -> usize {
    let mut solved = 0;
    for _ in 0..rounds {
        let Some(moves) = step(agents, reference, movable, obstacles, ghosts, params, settings) else {
            break;
        };
        solved += 1;
        if moves.is_empty() {
            break;
        }
        let before_violation = violation(matrix);
        let before_min = matrix.min_gap().unwrap_or(f64::INFINITY).min(0.0);
        let saved: Vec<Path> = movable.iter().map(|&i| agents[i].path.clone()).collect();
        let windows: Vec<Option<(f64, f64)>> =
            movable.iter().map(|&i| changed_window(&agents[i].path, &moves, i)).collect();
        let update = |agents: &[Agent], matrix: &mut IncrementalMatrix<'_>| {
            let paths: Vec<&Path> = agents.iter().map(|a| &a.path).collect();
            for (&i, w) in movable.iter().zip(&windows) {
                matrix.update(&paths, i, w.as_ref().map(std::slice::from_ref));
            }
        };
        let mut accepted = false;
        for scale in [1.0, 0.5, 0.25] {
            apply(agents, &moves, scale, params);
            let ok_times = movable.iter().all(|&i| agents[i].path.check().is_ok());
            if ok_times {
                update(agents, matrix);
                let better = match settings.slack {
                    Some(_) => violation(matrix) < before_violation - 1e-6,
                    None => matrix.min_gap().unwrap_or(f64::INFINITY) >= before_min - 1e-12,
                };
                if better {
                    accepted = true;
                    break;
                }
            }
            for (&i, p) in movable.iter().zip(&saved) {
                agents[i].path = p.clone();
            }
            if ok_times {
                update(agents, matrix);
            }
        }
        if !accepted {
            break;
        }
    }
    solved
}
