//! The admissible heuristic of the footstep search, [`super::SearchBound::Relaxed`]
//! (course notes, BPK §5.4, with the search's own step bounds; docs/design.md
//! "5a. Footsteps"): the least cost from a plant to the goal when every step
//! costs its lower bound ([`PlantGrid::lower_bound`]), over every sequence of
//! plants the steps' durations allow — a backward pass over the plant grid,
//! a DAG.
//!
//! Each step the search may take is an edge of this relaxed graph and costs
//! at least its bound, so the heuristic is admissible and consistent; it
//! follows the path round its bends and counts the strides the legs cannot
//! take, where the energy of walking straight to the goal (`M (e_s τ +
//! e_w D²/τ)`, BPK §5.4) cut across them.

use super::grid::{Node, PlantGrid, slot, units};
use crowdpatch_runtime::format::Foot;

/// A cost in the search's integer units that no sequence of steps reaches
/// (or a step surely rejected).
pub(super) const UNREACHABLE: i64 = i64::MAX;

/// Steps' bounds kept at most (4 M of them, 32 MB: a walker of an hour at
/// the default grid, a quarter of that on the finest grid of the relaxed
/// limits); beyond, each is made again when the search asks for it.
const KEPT_BOUNDS: usize = 1 << 22;

/// The relaxed graph's least costs to the goal, and the bounds of its steps.
#[derive(Debug, Clone)]
pub(super) struct Relaxed {
    /// The least cost to the goal from each plant, by [`slot`]
    /// ([`UNREACHABLE`]: no sequence of steps reaches the goal).
    to_goal: Vec<i64>,
    /// Each step's bound ([`UNREACHABLE`] for a step surely rejected, or one
    /// to a plant the goal cannot be reached from), by plant and step length
    /// in grid times; empty when not kept.
    bounds: Vec<i64>,
    /// Step lengths per plant in `bounds`.
    steps: usize,
    /// Whether `bounds` holds the steps' bounds.
    kept: bool,
}

impl Relaxed {
    /// The backward pass over `grid`. O(grid × steps) bounds.
    pub fn new(grid: &PlantGrid) -> Relaxed {
        let steps = (grid.k_max_step - grid.k_min_step + 1).max(0) as usize;
        let kept = 2 * grid.len * steps <= KEPT_BOUNDS;
        let mut r = Relaxed {
            to_goal: vec![UNREACHABLE; 2 * grid.len],
            bounds: vec![UNREACHABLE; if kept { 2 * grid.len * steps } else { 0 }],
            steps,
            kept,
        };
        for k in (0..=grid.k_max.max(0)).rev() {
            let least = r.least_from(grid, k);
            for foot in Foot::BOTH {
                r.to_goal[slot(k, foot)] = least[foot.index()];
            }
        }
        r
    }

    /// The least relaxed cost to the goal from both feet's plants at grid
    /// time `k`, the plants after `k` done; the steps' bounds kept on the
    /// way.
    fn least_from(&mut self, grid: &PlantGrid, k: i64) -> [i64; 2] {
        let goal_step = grid.lower_bound(k, Foot::Left, Node::Goal).map(units);
        let mut best = [goal_step.unwrap_or(UNREACHABLE), UNREACHABLE];
        for s in grid.steps_from(k) {
            let rest = Foot::BOTH.map(|f| self.to_goal[slot(k + s, f.other())]);
            if rest == [UNREACHABLE; 2] {
                continue;
            }
            let Some(shared) = grid.path_part(k, Node::Plant(k + s, Foot::Left)) else { continue };
            for foot in Foot::BOTH {
                let (f, to) = (foot.index(), Node::Plant(k + s, foot.other()));
                if rest[f] == UNREACHABLE {
                    continue;
                }
                if let Some(c) = grid.foot_part(k, foot, to, shared).map(units) {
                    if self.kept {
                        self.bounds[slot(k, foot) * self.steps + (s - grid.k_min_step) as usize] = c;
                    }
                    best[f] = best[f].min(c.saturating_add(rest[f]));
                }
            }
        }
        best
    }

    /// The least relaxed cost to the goal from plant `(k, foot)`, in the
    /// search's integer units ([`UNREACHABLE`] where none).
    pub fn to_goal(&self, k: i64, foot: Foot) -> i64 {
        self.to_goal[slot(k, foot)]
    }

    /// The bound of the step of `s` grid times from plant `(k, foot)`, as
    /// kept by the pass or made again ([`UNREACHABLE`] for a step surely
    /// rejected, or one to a plant the goal cannot be reached from).
    pub fn bound_of(&self, grid: &PlantGrid, k: i64, foot: Foot, s: i64) -> i64 {
        if self.kept {
            return self.bounds[slot(k, foot) * self.steps + (s - grid.k_min_step) as usize];
        }
        let to = Node::Plant(k + s, foot.other());
        if self.to_goal(k + s, foot.other()) == UNREACHABLE {
            return UNREACHABLE;
        }
        grid.lower_bound(k, foot, to).map(units).unwrap_or(UNREACHABLE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::footsteps::grid::tests::{for_every_grid, search_steps};

    #[test]
    fn the_relaxed_costs_to_the_goal_are_consistent() {
        // h(from) ≤ c(step) + h(to) on every step the search may take, with
        // h(goal) = 0: A* with it expands each plant once, at its least cost.
        let (mut checked, mut finite) = (0usize, 0usize);
        for_every_grid(|name, grid| {
            let r = Relaxed::new(grid);
            for (k, foot, to) in search_steps(grid) {
                let Some(c) = grid.step_cost(k, foot, to).filter(|c| c.is_finite()).map(units) else { continue };
                let rest = match to {
                    Node::Goal => 0,
                    Node::Plant(kb, fb) => r.to_goal(kb, fb),
                };
                let h = r.to_goal(k, foot);
                assert!(h <= c.saturating_add(rest), "{name}: h({k}, {foot:?}) = {h} > {c} + h({to:?}) = {rest}");
                checked += 1;
                finite += usize::from(h < UNREACHABLE);
            }
        });
        assert!(
            checked > 100_000 && finite > 100_000,
            "only {checked} steps checked, {finite} from plants with a bound"
        );
    }
}
