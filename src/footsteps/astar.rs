//! The footstep search (course notes, BPK §5: A* over foot plants;
//! docs/design.md "5a. Footsteps"): A* (the `pathfinding` crate) over the
//! [`Node`]s of a [`PlantGrid`], from the start's left plant to the goal's
//! right plant, each step at its true cost ([`PlantGrid::step_cost`]) in
//! integer millijoules, with the heuristic of [`SearchBound`]. With
//! [`SearchBound::Relaxed`], a greedy plan's cost bounds the plan's from
//! above first, and steps whose lower bound puts every plan through them
//! above it are left uncosted.

use super::gait::{BoundaryFootsteps, GaitModel, finish_lifts};
use super::grid::{Node, PlantGrid, SCALE, slot, units};
use super::params::{FootstepParams, FootstepPlan, SearchBound};
use super::relaxed::{Relaxed, UNREACHABLE};
use crowdpatch_runtime::format::{BakedAgent, Foot};

/// The plan of least cost from `start`'s left plant to `goal`'s right plant
/// at `goal_t` `[s]` on the plant grid of `p`, `None` where no sequence of
/// steps within the limits reaches the goal. O(grid × steps) bounds (with
/// [`SearchBound::Relaxed`]) and the step costs of the plants A* expands.
pub(super) fn search(
    gait: &GaitModel,
    agent: &BakedAgent,
    start: &BoundaryFootsteps,
    goal: &BoundaryFootsteps,
    goal_t: f64,
    p: &FootstepParams,
) -> Option<FootstepPlan> {
    let grid = PlantGrid::new(gait, agent, start, goal, goal_t, p);
    let relaxed = (p.bound == SearchBound::Relaxed).then(|| Relaxed::new(&grid));
    if relaxed.as_ref().is_some_and(|r| r.to_goal(0, Foot::Left) == UNREACHABLE) {
        return None;
    }
    let mut frontier = Frontier::new(&grid, relaxed.as_ref());
    frontier.upper = frontier.greedy_upper();
    let (nodes, cost) = pathfinding::prelude::astar(
        &Node::Plant(0, Foot::Left),
        |&n| frontier.successors(n),
        |&n| heuristic(&grid, relaxed.as_ref(), n),
        |&n| n == Node::Goal,
    )?;
    let mut footsteps = vec![start.right];
    for n in &nodes {
        match *n {
            Node::Plant(0, _) => footsteps.push(start.left),
            Node::Plant(k, foot) => footsteps.push(grid.footprint_at(k, foot).footstep),
            Node::Goal => footsteps.push(goal.right),
        }
    }
    footsteps.push(goal.left);
    // Headings of inner footsteps from the path; positions as planned.
    finish_lifts(&mut footsteps, gait);
    Some(FootstepPlan {
        footsteps,
        cost: cost as f64 / SCALE,
        expanded: frontier.expanded,
        costed: frontier.costed,
        relaxed: false,
    })
}

/// A*'s estimate of the cost from `n` to the goal, in the search's integer
/// units: the relaxed graph's least cost, or (with no relaxed graph, for
/// [`SearchBound::Straight`]) the energy of walking straight to the goal in
/// the time left ([`PlantGrid::straight_bound`]).
fn heuristic(grid: &PlantGrid, relaxed: Option<&Relaxed>, n: Node) -> i64 {
    match (n, relaxed) {
        (Node::Goal, _) => 0,
        (Node::Plant(k, foot), Some(r)) => r.to_goal(k, foot),
        (Node::Plant(k, _), None) => units(grid.straight_bound(k)),
    }
}

/// What the search learns as it goes: the least cost found so far to each
/// plant, an upper bound of the plan's cost, and its work.
struct Frontier<'g, 'a> {
    grid: &'g PlantGrid<'a>,
    /// The relaxed graph, for [`SearchBound::Relaxed`].
    relaxed: Option<&'g Relaxed>,
    /// The least cost found so far to each plant by [`slot`], as A*
    /// generates its successors (A*'s own: a node is expanded at that cost).
    reached: Vec<i64>,
    /// An upper bound of the plan's cost ([`UNREACHABLE`] while none is
    /// known).
    upper: i64,
    /// A* nodes expanded.
    expanded: usize,
    /// Step costs computed.
    costed: usize,
}

impl<'g, 'a> Frontier<'g, 'a> {
    fn new(grid: &'g PlantGrid<'a>, relaxed: Option<&'g Relaxed>) -> Frontier<'g, 'a> {
        let mut reached = vec![UNREACHABLE; 2 * grid.len];
        reached[0] = 0;
        Frontier { grid, relaxed, reached, upper: UNREACHABLE, expanded: 0, costed: 0 }
    }

    /// The true step cost, in the search's integer units (counted).
    fn edge_cost(&mut self, k: i64, foot: Foot, to: Node) -> Option<i64> {
        self.costed += 1;
        self.grid.step_cost(k, foot, to).map(units)
    }

    /// An upper bound of the plan's cost: the true cost of a greedy plan,
    /// each step the one of least true cost plus heuristic from the last
    /// (the search's own step costs; [`UNREACHABLE`] when it runs into a
    /// dead end, or without a relaxed graph).
    fn greedy_upper(&mut self) -> i64 {
        let Some(r) = self.relaxed else { return UNREACHABLE };
        let (mut k, mut foot, mut g) = (0i64, Foot::Left, 0i64);
        loop {
            let next = foot.other();
            let mut best: Option<(i64, Node, i64)> = None; // (c + h, to, c)
            if next == Foot::Right
                && let Some(c) = self.edge_cost(k, foot, Node::Goal)
            {
                best = Some((c, Node::Goal, c));
            }
            for s in self.grid.steps_from(k) {
                let (h, least) = (r.to_goal(k + s, next), r.bound_of(self.grid, k, foot, s));
                if least == UNREACHABLE || best.is_some_and(|b| least + h >= b.0) {
                    continue;
                }
                let to = Node::Plant(k + s, next);
                if let Some(c) = self.edge_cost(k, foot, to)
                    && best.is_none_or(|b| c + h < b.0)
                {
                    best = Some((c + h, to, c));
                }
            }
            match best {
                None => break UNREACHABLE,
                Some((_, Node::Goal, c)) => break g + c,
                Some((_, Node::Plant(kb, fb), c)) => (k, foot, g) = (kb, fb, g + c),
            }
        }
    }

    /// Whether the relaxed graph puts every plan through the step of `s`
    /// grid times from plant `(k, foot)`, reached at cost `g`, above the
    /// upper bound: A* would never expand its plant from there.
    fn pruned(&self, r: &Relaxed, k: i64, foot: Foot, s: i64, g: i64) -> bool {
        let (h, least) = (r.to_goal(k + s, foot.other()), r.bound_of(self.grid, k, foot, s));
        least == UNREACHABLE || g.saturating_add(least).saturating_add(h) > self.upper
    }

    /// The successors of `n` and the costs of the steps onto them, pruned
    /// steps left uncosted. A step onto the goal makes a plan, and may
    /// lower the upper bound.
    fn successors(&mut self, n: Node) -> Vec<(Node, i64)> {
        self.expanded += 1;
        let Node::Plant(k, foot) = n else { return Vec::new() };
        let g = self.reached[slot(k, foot)];
        let next = foot.other();
        let mut out = Vec::new();
        for s in self.grid.steps_from(k) {
            let to = Node::Plant(k + s, next);
            if self.relaxed.is_some_and(|r| self.pruned(r, k, foot, s, g)) {
                continue;
            }
            if let Some(c) = self.edge_cost(k, foot, to) {
                let best = &mut self.reached[slot(k + s, next)];
                *best = (*best).min(g + c);
                out.push((to, c));
            }
        }
        // The goal: the right foot lands on the goal's right footprint.
        if next == Foot::Right
            && let Some(c) = self.edge_cost(k, foot, Node::Goal)
        {
            self.upper = self.upper.min(g + c);
            out.push((Node::Goal, c));
        }
        out
    }
}
