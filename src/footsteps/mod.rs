//! Stage 5a: footstep planning (course notes, "Dynamic Footsteps Planning for
//! Multiple Characters" §5 — BPK), one agent at a time, following its baked
//! path in space *and* time.
//!
//! **Search.** A* (the `pathfinding` crate) over footstep states: the foot
//! that has just planted, the plant time on a grid of [`FootstepParams::time_step`]
//! from the path's start, and — derived from them — the footprint and the
//! heading. The footprint of a plant at time `t` is where the character's
//! walking pose puts that foot when its root is on the path at `t` facing
//! the path's heading, after a straight step as long as the root's progress
//! over the character's own step duration at the path's speed there: so the
//! root is on the path at every step time, the step it takes is the
//! difference of two footprints, and a footprint depends on `(t, foot)`
//! alone — the search costs exactly the footprints its plan is made of.
//! **Actions** are steps of the character's step library: the swing foot
//! lands where the next
//! footprint is, in a duration (time warp of the blended clip steps) and with
//! a turn within limits; a landing outside the library's landing hull is
//! projected onto it, and the root then misses the path by that much.
//! **Cost** (BPK §5.3): the energy `M ∫ (e_s + e_w |v|²) dt` of the step
//! (`e_s` = 2.23 J/(kg·s), `e_w` = 1.26 J·s/(kg·m²), `v` the root's speed over
//! the step), plus a term that keeps the root on the path at the step times
//! (the squared miss), a time-warp term (playing a step much faster or slower
//! than its clip), a turn term, and a term on the root's progress beyond the
//! step length the landing's footprint was made for (the trailing foot
//! would be left out of reach). **Heuristic** ([`SearchBound`]): the least
//! cost to the goal over the plant grid with each step at a lower bound of
//! its cost (a backward pass over the grid before the search; admissible and
//! consistent), and steps that cannot belong to a plan cheaper than a greedy
//! one left uncosted; or, as BPK §5.4 with the time constraint, the least
//! energy to cover the straight distance to the goal in exactly the time
//! left, `M (e_s τ + e_w D²/τ)` (Jensen's inequality: admissible, and tighter
//! than BPK's `2 M D √(e_s e_w)`, which ignores the time constraint). Both
//! find plans of the same least cost.
//!
//! **Boundaries and loops** (the seam convention of
//! [`crowdpatch_runtime::skeletal`]): an exogenous agent starts with the two
//! footprints of its entry point (the right foot planted one boundary step
//! before, the left planting at the entry time) and must end with the two of
//! its exit point; an endogenous loop starts and ends with those of its start
//! time, a period apart, so its footsteps repeat with the period.
//!
//! | part | module |
//! |---|---|
//! | parameters, heuristic choice, the plan | `params` |
//! | the path sampled as the runtime samples it | `path` |
//! | the character's gait: landing hulls, footprints, lift-off times | `gait`, `hull` |
//! | the plant grid: footprints, step cost and its lower bound | `grid` |
//! | the relaxed-grid heuristic (backward pass) | `relaxed` |
//! | A* over the plants | `astar` |

mod astar;
mod gait;
mod grid;
mod hull;
mod params;
mod path;
mod relaxed;

pub use gait::{BoundaryFootsteps, GaitModel, landing_of};
pub use params::{FootstepParams, FootstepPlan, SearchBound};
pub use path::loop_seam_velocity;
pub(crate) use path::{path_position, path_sample, wrap_angle_exact};

use crate::character::Character;
use crowdpatch_runtime::format::{BakedAgent, Foot, Footstep};
use gait::{finish_lifts, footprint};
use path::at;

/// How an agent's path starts and ends, for the planner.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PathEnds {
    /// Enters and leaves through boundary points with these velocities.
    Exogenous {
        /// Entry velocity `[m/s]`, patch frame.
        entry: [f64; 2],
        /// Exit velocity `[m/s]`, patch frame.
        exit: [f64; 2],
    },
    /// A loop of one period.
    Loop,
    /// Stands still: no footsteps.
    Standing,
}

/// Plans the footsteps of one agent along its baked path.
///
/// Returns `None` for a standing agent. A path too short or too fast for
/// the library gets a plan all the same: the limits are relaxed (and the plan
/// says so).
pub fn plan_agent(
    gait: &GaitModel,
    character: &Character,
    agent: &BakedAgent,
    ends: PathEnds,
    period: f64,
    params: &FootstepParams,
) -> Option<FootstepPlan> {
    let (t0, t1) = (agent.start(), agent.end());
    let (start, goal) = match ends {
        PathEnds::Standing => return None,
        PathEnds::Exogenous { entry, exit } => {
            (gait.boundary(character, at(agent, t0).0, entry, t0), gait.boundary(character, at(agent, t1).0, exit, t1))
        }
        PathEnds::Loop => {
            let v = loop_seam_velocity(agent, period);
            let mut s = gait.boundary(character, at(agent, t0).0, v, t0);
            // The right foot's plant one boundary step before the seam is
            // where the path is then: a loop may turn sharply at its seam,
            // and a footprint straight behind along the seam's heading
            // could be a metre from where the walker arrives.
            let back = ideal_footstep(gait, agent, Foot::Right, t1 - (s.left.t - s.right.t), s.gait.step_length);
            s.right.position = back.position;
            s.right.heading = back.heading;
            let mut g = s;
            for f in [&mut g.left, &mut g.right] {
                f.t += period;
                f.lift += period;
            }
            (s, g)
        }
    };
    // The search runs from the start's left plant to the goal's right plant.
    let goal_t = goal.right.t;
    let mut relaxed = false;
    let mut p = *params;
    for attempt in 0..3 {
        if let Some(mut plan) = astar::search(gait, agent, &start, &goal, goal_t, &p) {
            plan.relaxed = relaxed;
            return Some(plan);
        }
        relaxed = true;
        p.min_duration = (p.min_duration * 0.6).max(p.time_step);
        p.max_duration *= 1.6;
        p.max_turn *= 1.5 + attempt as f64;
        p.max_miss *= 3.0;
        p.time_step /= 2.0;
    }
    // Last resort: evenly spaced steps.
    let span = goal_t - start.left.t;
    let mut n = ((span / 0.55).round() as usize).max(1);
    if n.is_multiple_of(2) {
        n += 1; // left at start, right at the goal: an odd number of steps
    }
    let mut footsteps = vec![start.right, start.left];
    for k in 1..n {
        let t = start.left.t + span * k as f64 / n as f64;
        let foot = if k % 2 == 1 { Foot::Right } else { Foot::Left };
        footsteps.push(ideal_footstep(gait, agent, foot, t, 0.7));
    }
    footsteps.push(goal.right);
    footsteps.push(goal.left);
    finish_lifts(&mut footsteps, gait);
    Some(FootstepPlan { footsteps, cost: f64::INFINITY, expanded: 0, costed: 0, relaxed: true })
}

/// The footstep of `foot` planting at `t` with the root on the path, after a
/// step of length `length`.
fn ideal_footstep(gait: &GaitModel, agent: &BakedAgent, foot: Foot, t: f64, length: f64) -> Footstep {
    let (p, h) = at(agent, t);
    footprint(gait, foot, t, (p, h), (h.cos(), h.sin()), length)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::character::builtin;
    use crowdpatch_runtime::format::{AgentKind, PathKey, PointRef, Side};

    fn straight_agent(speed: f64, duration: f64) -> BakedAgent {
        let keys = (0..=10)
            .map(|i| {
                let t = 1.0 + duration * i as f64 / 10.0;
                PathKey { t, position: [1.0 + speed * (t - 1.0), 8.0], heading: 0.0 }
            })
            .collect();
        let r = PointRef { side: Side::West, index: 0 };
        BakedAgent { kind: AgentKind::Exogenous { entry: r, exit: r }, keys }
    }

    #[test]
    fn a_walk_too_long_to_keep_its_step_bounds_plans_at_the_straight_line_bounds_cost() {
        // 2,000 s at the default grid: 120,000 plants, too many to keep
        // their step bounds (each is made again when the search asks).
        let c = builtin::character();
        let gait = GaitModel::new(&c).unwrap();
        let (agent, v) = (straight_agent(1.2, 2000.0), [1.2, 0.0]);
        let ends = PathEnds::Exogenous { entry: v, exit: v };
        let plan = |bound| {
            plan_agent(&gait, &c, &agent, ends, 2000.0, &FootstepParams { bound, ..Default::default() }).unwrap()
        };
        let (s, r) = (plan(SearchBound::Straight), plan(SearchBound::Relaxed));
        assert!(!s.relaxed && !r.relaxed);
        assert_eq!(s.cost.to_bits(), r.cost.to_bits(), "{} against {}", s.cost, r.cost);
        assert!(r.costed < s.costed, "{} against {} step costs", r.costed, s.costed);
        assert!(r.footsteps.len() > 3000, "{} footsteps", r.footsteps.len());
    }

    #[test]
    fn a_straight_walk_gets_alternating_steps_at_a_human_cadence() {
        let c = builtin::character();
        let gait = GaitModel::new(&c).unwrap();
        let agent = straight_agent(1.33, 10.0);
        let v = [1.33, 0.0];
        let plan =
            plan_agent(&gait, &c, &agent, PathEnds::Exogenous { entry: v, exit: v }, 10.0, &FootstepParams::default())
                .unwrap();
        assert!(!plan.relaxed);
        let f = &plan.footsteps;
        for w in f.windows(2) {
            assert_ne!(w[0].foot, w[1].foot, "feet alternate");
            assert!(w[1].t > w[0].t);
        }
        // Ends are the boundary convention's: left plants at the entry and
        // at the exit time.
        assert_eq!(f[1].foot, Foot::Left);
        assert!((f[1].t - 1.0).abs() < 1e-12);
        assert_eq!(f[f.len() - 1].foot, Foot::Left);
        assert!((f[f.len() - 1].t - 11.0).abs() < 1e-12);
        // About 1.8 steps per second at 1.33 m/s.
        let steps = (f.len() - 2) as f64;
        let cadence = steps / 10.0;
        assert!((cadence - 1.8).abs() < 0.15, "cadence {cadence}");
    }
}
