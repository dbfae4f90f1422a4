//! Stage 1: match entry points to exit points (seed paper §3.3, Algorithm 1).
//!
//! Each entry ranks every exit by the preference score of eq. 4,
//! `arctan(|u_cft − u|) + p`, where `u = |p₂ − p₁| / Δt` is the speed of the
//! straight path, `Δt = t₂ − t₁` if `t₂ > t₁` else `π + t₂ − t₁`, and the
//! penalty `p` is 0 for an exit on the opposite side, 2 on a neighbouring side
//! and 4 on the same side. Lower is better. The project's solvers rank by the
//! walker's own preferred speed instead of u_cft, and by the straight walk's
//! speed once the extra periods the walk would get are counted, and take
//! the side penalty from the side the walker heads for ([`walker_score`],
//! [`heading_side`]). Gale–Shapley with entries
//! proposing gives the entry-optimal stable matching; an optimal assignment
//! (Kuhn–Munkres, minimum total score) is offered beside it.

use crate::model::{Crossing, MatchingMode, Patch};
use pathfinding::matrix::Matrix;

/// One matched pair: indices into the entry and exit lists
/// ([`Patch::crossings_of`] order) and the pair's preference score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pair {
    /// Index of the entry.
    pub entry: usize,
    /// Index of the exit.
    pub exit: usize,
    /// Preference score of the pair (seed paper eq. 4), lower is better.
    pub score: f64,
}

/// Time from entry to exit `[s]` as the seed paper defines it for matching:
/// `t₂ − t₁` if `t₂ > t₁`, else `π + t₂ − t₁` (so in `(0, π]`).
pub fn matching_duration(t_entry: f64, t_exit: f64, period: f64) -> f64 {
    if t_exit > t_entry { t_exit - t_entry } else { period + t_exit - t_entry }
}

/// Side penalty of eq. 4: 0 opposite, 2 neighbouring, 4 same side.
pub fn side_penalty(entry: &Crossing, exit: &Crossing) -> f64 {
    match (exit.side.index() + 4 - entry.side.index()) % 4 {
        0 => 4.0,
        2 => 0.0,
        _ => 2.0,
    }
}

/// Preference score of matching `entry` to `exit` (seed paper eq. 4):
/// `arctan(|u_cft − u|) + p`, with `u = |p₂ − p₁| / Δt` `[m/s]`.
///
/// # Example
/// ```
/// # use crowdpatch::matching::preference_score;
/// # use crowdpatch::model::{Crossing, Direction, Side};
/// # use nalgebra::Vector2;
/// let c = |side, direction, x: f64, y: f64, t| Crossing { side, direction, index: 0, s: 0.0, t,
///     position: Vector2::new(x, y), velocity: Vector2::zeros(), preferred_speed: 1.33 };
/// // 13.3 m in 10 s across the patch: exactly comfort speed, opposite side.
/// let s = preference_score(&c(Side::South, Direction::Entry, 8.0, 0.0, 1.0),
///                          &c(Side::North, Direction::Exit, 8.0, 13.3, 1.0), 10.0, 1.33);
/// assert!(s.abs() < 1e-12);
/// ```
pub fn preference_score(entry: &Crossing, exit: &Crossing, period: f64, comfort_speed: f64) -> f64 {
    let dt = matching_duration(entry.t, exit.t, period);
    let u = (exit.position - entry.position).norm() / dt;
    (comfort_speed - u).abs().atan() + side_penalty(entry, exit)
}

/// The `entries × exits` matrix of preference scores (eq. 4).
pub fn score_matrix(entries: &[Crossing], exits: &[Crossing], period: f64, comfort_speed: f64) -> Vec<Vec<f64>> {
    entries.iter().map(|e| exits.iter().map(|x| preference_score(e, x, period, comfort_speed)).collect()).collect()
}

/// The side a walker entering at `entry` heads for in a patch of side
/// `size` `[m]`: the first side its entry velocity points at (the ray from
/// its position along its velocity), the opposite side on a tie (a ray
/// through a corner) and whenever the velocity is along the inward normal
/// — every default velocity — or zero. A generated flow that turns a
/// corner enters at 45° towards an adjacent side (`crate::generate`).
/// O(1).
pub fn heading_side(entry: &Crossing, size: f64) -> crate::model::Side {
    let (p, v) = (entry.position, entry.velocity);
    // Ray parameter at which p + λv meets the line of `side`, ∞ if never.
    let reach = |side: crate::model::Side| {
        let n = crate::geometry::v2(side.inward_normal());
        let towards = -v.dot(&n);
        if towards > 0.0 { (p - crate::geometry::v2(side.point(0.0, size))).dot(&n) / towards } else { f64::INFINITY }
    };
    let mut heading = entry.side.opposite();
    for side in [entry.side.rotated(1), entry.side.rotated(-1)] {
        if reach(side) < reach(heading) {
            heading = side;
        }
    }
    heading
}

/// Eq. 4 with the walker's own pace and heading: `arctan(|u_w − u_k|) + p`,
/// where `u_w` is the preferred speed `[m/s]` of the walker entering at
/// `entry`, `u_k = |p₂ − p₁| / (Δt + kπ)` the speed of the straight walk
/// with the `k` extra periods [`crate::pace::extra_periods`] gives it
/// (hurrying above `limit` `[m/s]`, [`crate::pace::hurry_limit`]), and the
/// penalty `p` 0 for an exit on the side the walker heads for
/// ([`heading_side`] in a patch of side `size` `[m]`), 4 on its entry side,
/// 2 elsewhere — [`side_penalty`] whenever entry velocities are normal.
pub fn walker_score(entry: &Crossing, exit: &Crossing, period: f64, preferred: f64, limit: f64, size: f64) -> f64 {
    let dt = matching_duration(entry.t, exit.t, period);
    let d = (exit.position - entry.position).norm();
    let k = crate::pace::extra_periods(d, dt, period, limit, 0);
    let u = d / (dt + k as f64 * period);
    let penalty = if exit.side == entry.side {
        4.0
    } else if exit.side == heading_side(entry, size) {
        0.0
    } else {
        2.0
    };
    (preferred - u).abs().atan() + penalty
}

/// Gale–Shapley stable matching with entries proposing (seed paper
/// Algorithm 1, after Gusfield and Irving 1989). `scores[e][x]` is the score
/// of entry `e` with exit `x`; both sides prefer lower scores, ties broken by
/// the lower index. Returns, for each entry, its exit (`None` only when there
/// are fewer exits than entries).
///
/// The result is the entry-optimal stable matching, unique whatever the order
/// in which free entries propose. O(n·m) proposals after O(n·m log m) sorting.
pub fn stable_matching(scores: &[Vec<f64>]) -> Vec<Option<usize>> {
    let n = scores.len();
    let m = scores.first().map_or(0, Vec::len);
    let prefs: Vec<Vec<usize>> = scores
        .iter()
        .map(|row| {
            let mut order: Vec<usize> = (0..m).collect();
            order.sort_by(|&a, &b| row[a].total_cmp(&row[b]).then(a.cmp(&b)));
            order
        })
        .collect();
    let prefers = |x: usize, e: usize, current: usize| -> bool {
        scores[e][x].total_cmp(&scores[current][x]).then(e.cmp(&current)).is_lt()
    };
    let mut next = vec![0usize; n];
    let mut engaged_to: Vec<Option<usize>> = vec![None; m];
    let mut free: Vec<usize> = (0..n).rev().collect();
    while let Some(e) = free.pop() {
        if next[e] >= m {
            continue; // proposed to everyone: stays single
        }
        let x = prefs[e][next[e]];
        next[e] += 1;
        match engaged_to[x] {
            None => engaged_to[x] = Some(e),
            Some(cur) if prefers(x, e, cur) => {
                engaged_to[x] = Some(e);
                free.push(cur);
            }
            Some(_) => free.push(e),
        }
    }
    let mut result = vec![None; n];
    for (x, e) in engaged_to.iter().enumerate() {
        if let Some(e) = e {
            result[*e] = Some(x);
        }
    }
    result
}

/// Minimum-total-score perfect assignment (Kuhn–Munkres, via `pathfinding`),
/// on scores rounded to 1e-9. Returns the exit of each entry. O(n³).
///
/// # Panics
/// If there are more entries than exits.
pub fn optimal_matching(scores: &[Vec<f64>]) -> Vec<usize> {
    if scores.is_empty() {
        return vec![];
    }
    let weights =
        Matrix::from_rows(scores.iter().map(|row| row.iter().map(|s| (s * 1e9).round() as i64).collect::<Vec<_>>()))
            .expect("score rows have equal length");
    pathfinding::kuhn_munkres::kuhn_munkres_min(&weights).1
}

/// Speed a walking group loses per member beyond the first `[m/s]`:
/// Moussaïd et al. 2010 (PLoS ONE 5(4) e10047) fit −0.04 to −0.08 m/s
/// per extra member; the middle of that range.
pub const GROUP_SLOWDOWN: f64 = 0.06;

/// The pace `[m/s]` of a walking group whose members prefer `speeds`: its
/// slowest member's, lowered by [`GROUP_SLOWDOWN`] per member beyond the
/// first (Yersin et al. 2008 §5: followers walk at the leader's speed; the
/// group at its slowest member's), never below half the slowest. O(n).
pub fn group_pace(speeds: &[f64]) -> f64 {
    let slowest = speeds.iter().copied().fold(f64::INFINITY, f64::min);
    if !slowest.is_finite() {
        return 0.0;
    }
    (slowest - GROUP_SLOWDOWN * (speeds.len().saturating_sub(1)) as f64).max(0.5 * slowest)
}

/// The pace `[m/s]` of the walking group crossing at `members` in `patch`:
/// [`group_pace`] of the members' preferred speeds, or, when the document
/// gives every member's velocity, the slowest given speed — a given
/// velocity is the walk itself (a generated group's lane already walks at
/// the group's pace), not a preference to lower. O(members).
pub fn members_pace(patch: &Patch, members: &[Crossing]) -> f64 {
    let speeds: Vec<f64> = members.iter().map(|c| patch.walker_speed(c)).collect();
    if members.iter().all(|c| patch.velocity_given(c)) {
        speeds.iter().copied().fold(f64::INFINITY, f64::min)
    } else {
        group_pace(&speeds)
    }
}

/// The walking groups among `crossings` (all of one direction, as
/// [`Patch::crossings_of`] gives them): the indices of the crossings whose
/// boundary points carry one group id on one side, groups of two or more
/// members, in order of side and id, members in index order. A lone id
/// (which `validate` refuses) is no group. O(n log n).
pub fn crossing_groups(patch: &Patch, crossings: &[Crossing]) -> Vec<Vec<usize>> {
    let mut groups: std::collections::BTreeMap<(usize, u32), Vec<usize>> = Default::default();
    for (i, c) in crossings.iter().enumerate() {
        let point = patch.sides[c.side].points(c.direction).get(c.index);
        if let Some(g) = point.and_then(|b| b.group) {
            groups.entry((c.side.index(), g)).or_default().push(i);
        }
    }
    groups.into_values().filter(|m| m.len() >= 2).collect()
}

/// The crossing of a walking group as a whole: its members' mean
/// position, velocity and time (the periodic mean: members' times taken
/// within half a period of the first's, the mean wrapped into `[0, π)`),
/// on their side, with the first member's index and `pace` `[m/s]`
/// ([`members_pace`]) as its preferred speed.
/// What matching scores and the group's formation path follows
/// ([`crate::initial_paths`]). O(members).
///
/// # Panics
/// If `members` is empty.
pub fn group_crossing(members: &[Crossing], pace: f64, period: f64) -> Crossing {
    let first = members[0];
    let n = members.len() as f64;
    let position = members.iter().map(|c| c.position).sum::<crate::geometry::Vec2>() / n;
    let velocity = members.iter().map(|c| c.velocity).sum::<crate::geometry::Vec2>() / n;
    let offset = members.iter().map(|c| periodic_offset(c.t - first.t, period)).sum::<f64>() / n;
    Crossing {
        position,
        velocity,
        t: (first.t + offset).rem_euclid(period),
        s: members.iter().map(|c| c.s).sum::<f64>() / n,
        preferred_speed: pace,
        ..first
    }
}

/// `dt` `[s]` wrapped into `[−π/2, π/2)`: the nearest periodic copy of a
/// time difference. O(1).
pub fn periodic_offset(dt: f64, period: f64) -> f64 {
    (dt + period / 2.0).rem_euclid(period) - period / 2.0
}

/// The members of a group of crossings in their order across the walking
/// direction, right to left of a walker crossing there (entering: the
/// side's inward normal; leaving: its outward one), ties by index: the
/// order in which members pair up between a group's entry and its exit,
/// so that members do not cross each other's way. O(n log n).
pub fn lateral_order(members: &[Crossing]) -> Vec<usize> {
    let n = members.len() as f64;
    let centre = members.iter().map(|c| c.position).sum::<crate::geometry::Vec2>() / n;
    let lateral = |c: &Crossing| {
        let inward = crate::geometry::v2(c.side.inward_normal());
        let walking = if c.direction == crate::model::Direction::Entry { inward } else { -inward };
        let d = c.position - centre;
        walking.x * d.y - walking.y * d.x
    };
    let mut order: Vec<usize> = (0..members.len()).collect();
    order.sort_by(|&a, &b| lateral(&members[a]).total_cmp(&lateral(&members[b])).then(a.cmp(&b)));
    order
}

/// Matches every entry of `patch` to an exit with the given mode.
/// Returns one [`Pair`] per entry, in entry order.
///
/// With the project's solvers a walking group ([`crossing_groups`]) is
/// matched as a unit: a group entering is matched among the groups of the
/// same size leaving, scored by [`walker_score`] between the two groups'
/// crossings ([`group_crossing`], at the group's pace), and its members
/// pair up in their order across the walking direction
/// ([`lateral_order`]), each pair carrying the group's score; singles are
/// matched among singles as before. Groups left without a group of their
/// size to match (a document `validate` refuses) walk as singles. The
/// `paper` solver keeps the seed paper's eq. 4 over every walker alone.
/// Cost: the matchings of each size class (O(n²) Gale–Shapley, O(n³)
/// optimal) after O(n log n) grouping.
pub fn match_patch(patch: &Patch, mode: MatchingMode) -> Vec<Pair> {
    let entries = patch.crossings_of(crate::model::Direction::Entry);
    let exits = patch.crossings_of(crate::model::Direction::Exit);
    let pi = patch.header.period;
    if patch.solver.method == crate::model::SolverKind::Paper {
        let scores = score_matrix(&entries, &exits, pi, patch.header.comfort_speed);
        return assign(&scores, mode)
            .into_iter()
            .map(|(e, x)| Pair { entry: e, exit: x, score: scores[e][x] })
            .collect();
    }
    let u_cft = patch.header.comfort_speed;
    let score = |e: &Crossing, x: &Crossing| {
        let u = patch.walker_speed(e);
        walker_score(e, x, pi, u, crate::pace::hurry_limit(u, u_cft), patch.header.size)
    };
    let (entry_groups, exit_groups) = (crossing_groups(patch, &entries), crossing_groups(patch, &exits));
    let unit = |all: &[Crossing], members: &[usize]| {
        let cs: Vec<Crossing> = members.iter().map(|&i| all[i]).collect();
        group_crossing(&cs, members_pace(patch, &cs), pi)
    };
    let mut pairs = Vec::with_capacity(entries.len());
    let (mut single_entries, mut single_exits) = (vec![true; entries.len()], vec![true; exits.len()]);
    entry_groups.iter().flatten().for_each(|&i| single_entries[i] = false);
    exit_groups.iter().flatten().for_each(|&i| single_exits[i] = false);
    let largest = entry_groups.iter().map(Vec::len).max().unwrap_or(0);
    for size in 2..=largest {
        let ins: Vec<&Vec<usize>> = entry_groups.iter().filter(|g| g.len() == size).collect();
        let outs: Vec<&Vec<usize>> = exit_groups.iter().filter(|g| g.len() == size).collect();
        let (ci, co): (Vec<Crossing>, Vec<Crossing>) =
            (ins.iter().map(|g| unit(&entries, g)).collect(), outs.iter().map(|g| unit(&exits, g)).collect());
        let scores: Vec<Vec<f64>> = ci.iter().map(|e| co.iter().map(|x| score(e, x)).collect()).collect();
        let chosen = if outs.is_empty() { vec![] } else { assign(&scores, mode) };
        let mut matched = vec![false; ins.len()];
        let mut taken = vec![false; outs.len()];
        for (a, b) in chosen {
            matched[a] = true;
            taken[b] = true;
            let order = |all: &[Crossing], g: &[usize]| {
                let cs: Vec<Crossing> = g.iter().map(|&i| all[i]).collect();
                lateral_order(&cs).into_iter().map(|k| g[k]).collect::<Vec<_>>()
            };
            let (e_order, x_order) = (order(&entries, ins[a]), order(&exits, outs[b]));
            for (&e, &x) in e_order.iter().zip(&x_order) {
                pairs.push(Pair { entry: e, exit: x, score: scores[a][b] });
            }
        }
        // Groups without a partner of their size walk as singles.
        for (g, m) in ins.iter().zip(&matched) {
            if !m {
                g.iter().for_each(|&i| single_entries[i] = true);
            }
        }
        for (g, m) in outs.iter().zip(&taken) {
            if !m {
                g.iter().for_each(|&i| single_exits[i] = true);
            }
        }
    }
    // Exit groups of sizes no entry group has.
    for g in exit_groups.iter().filter(|g| g.len() > largest) {
        g.iter().for_each(|&i| single_exits[i] = true);
    }
    let ins: Vec<usize> = (0..entries.len()).filter(|&i| single_entries[i]).collect();
    let outs: Vec<usize> = (0..exits.len()).filter(|&i| single_exits[i]).collect();
    let scores: Vec<Vec<f64>> =
        ins.iter().map(|&e| outs.iter().map(|&x| score(&entries[e], &exits[x])).collect()).collect();
    for (a, b) in assign(&scores, mode) {
        pairs.push(Pair { entry: ins[a], exit: outs[b], score: scores[a][b] });
    }
    pairs.sort_by_key(|p| p.entry);
    pairs
}

/// The matching of `mode` over `scores` (rows: entries, columns: exits) as
/// (entry, exit) index pairs: stable, or optimal when every entry can have
/// an exit (else stable).
fn assign(scores: &[Vec<f64>], mode: MatchingMode) -> Vec<(usize, usize)> {
    let columns = scores.first().map_or(0, Vec::len);
    let chosen: Vec<Option<usize>> = match mode {
        MatchingMode::Optimal if scores.len() <= columns => optimal_matching(scores).into_iter().map(Some).collect(),
        _ => stable_matching(scores),
    };
    chosen.iter().enumerate().filter_map(|(e, x)| x.map(|x| (e, x))).collect()
}

/// Whether `matching` (exit of each entry) is stable for `scores`: no entry
/// and exit both prefer each other to their partners. Used by tests and
/// assertions.
pub fn is_stable(scores: &[Vec<f64>], matching: &[Option<usize>]) -> bool {
    let m = scores.first().map_or(0, Vec::len);
    let mut partner_of_exit = vec![None; m];
    for (e, x) in matching.iter().enumerate() {
        if let Some(x) = x {
            partner_of_exit[*x] = Some(e);
        }
    }
    for (e, row) in scores.iter().enumerate() {
        for (x, &s) in row.iter().enumerate() {
            let e_prefers = match matching[e] {
                None => true,
                Some(cur) => (s, x) < (row[cur], cur),
            };
            let x_prefers = match partner_of_exit[x] {
                None => true,
                Some(cur) => (s, e) < (scores[cur][x], cur),
            };
            if e_prefers && x_prefers {
                return false;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// An independent Gale–Shapley: the textbook loop of Algorithm 1 over
    /// men in index order, written without the helpers above.
    fn textbook(scores: &[Vec<f64>]) -> Vec<Option<usize>> {
        let n = scores.len();
        let m = scores[0].len();
        let mut proposed = vec![vec![false; m]; n];
        let mut wife: Vec<Option<usize>> = vec![None; n];
        let mut husband: Vec<Option<usize>> = vec![None; m];
        while let Some(man) = (0..n).find(|&i| wife[i].is_none() && proposed[i].iter().any(|p| !p)) {
            let w = (0..m)
                .filter(|&j| !proposed[man][j])
                .min_by(|&a, &b| scores[man][a].partial_cmp(&scores[man][b]).unwrap().then(a.cmp(&b)))
                .unwrap();
            proposed[man][w] = true;
            match husband[w] {
                None => {
                    husband[w] = Some(man);
                    wife[man] = Some(w);
                }
                Some(h) if (scores[man][w], man) < (scores[h][w], h) => {
                    husband[w] = Some(man);
                    wife[man] = Some(w);
                    wife[h] = None;
                }
                Some(_) => {}
            }
        }
        wife
    }

    proptest! {
        #[test]
        fn agrees_with_textbook_and_is_stable(n in 1usize..12, seed in any::<u64>()) {
            use rand::{RngExt, SeedableRng};
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let scores: Vec<Vec<f64>> = (0..n).map(|_| (0..n).map(|_| rng.random_range(0.0..6.0)).collect()).collect();
            let gs = stable_matching(&scores);
            prop_assert_eq!(&gs, &textbook(&scores));
            prop_assert!(is_stable(&scores, &gs));
            // A perfect matching.
            let mut seen = vec![false; n];
            for x in gs.iter().flatten() { prop_assert!(!seen[*x]); seen[*x] = true; }
            prop_assert!(seen.iter().all(|s| *s));
        }

        #[test]
        fn optimal_is_no_worse_than_stable(n in 1usize..9, seed in any::<u64>()) {
            use rand::{RngExt, SeedableRng};
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let scores: Vec<Vec<f64>> = (0..n).map(|_| (0..n).map(|_| rng.random_range(0.0..6.0)).collect()).collect();
            let opt: f64 = optimal_matching(&scores).iter().enumerate().map(|(e, x)| scores[e][*x]).sum();
            let gs: f64 = stable_matching(&scores).iter().enumerate().map(|(e, x)| scores[e][x.unwrap()]).sum();
            prop_assert!(opt <= gs + 1e-6);
            // Brute force over permutations for small n.
            if n <= 6 {
                let mut perm: Vec<usize> = (0..n).collect();
                let mut best = f64::INFINITY;
                permute(&mut perm, 0, &mut |p| {
                    let s: f64 = p.iter().enumerate().map(|(e, x)| scores[e][*x]).sum();
                    best = best.min(s);
                });
                prop_assert!((opt - best).abs() < 1e-6, "{} vs {}", opt, best);
            }
        }
    }

    fn permute(p: &mut Vec<usize>, k: usize, f: &mut impl FnMut(&[usize])) {
        if k == p.len() {
            f(p);
            return;
        }
        for i in k..p.len() {
            p.swap(k, i);
            permute(p, k + 1, f);
            p.swap(k, i);
        }
    }

    #[test]
    fn table_one_like_ranking() {
        use crate::model::{Direction, Side};
        use nalgebra::Vector2;
        let c = |side, direction, x: f64, y: f64, t| Crossing {
            side,
            direction,
            index: 0,
            s: 0.0,
            t,
            position: Vector2::new(x, y),
            velocity: Vector2::zeros(),
            preferred_speed: 1.33,
        };
        let entry = c(Side::South, Direction::Entry, 8.0, 0.0, 2.0);
        // Opposite side at comfort speed beats a neighbouring side at comfort
        // speed, which beats the same side.
        let opp = c(Side::North, Direction::Exit, 8.0, 16.0, 2.0 + 16.0 / 1.33);
        let nb = c(Side::East, Direction::Exit, 16.0, 8.0, 2.0 + 128f64.sqrt() / 1.33);
        let same = c(Side::South, Direction::Exit, 12.0, 0.0, 2.0 + 4.0 / 1.33);
        let (so, sn, ss) = (
            preference_score(&entry, &opp, 20.0, 1.33),
            preference_score(&entry, &nb, 20.0, 1.33),
            preference_score(&entry, &same, 20.0, 1.33),
        );
        assert!(so.abs() < 1e-9 && (sn - 2.0).abs() < 1e-9 && (ss - 4.0).abs() < 1e-9, "{so} {sn} {ss}");
        // Wrapped Δt: exit earlier than entry means π + t₂ − t₁.
        assert_eq!(matching_duration(8.0, 3.0, 10.0), 5.0);
        assert_eq!(matching_duration(3.0, 3.0, 10.0), 10.0);
    }

    #[test]
    fn a_walker_heads_for_the_side_its_entry_velocity_points_at() {
        use crate::model::{Direction, Side};
        use nalgebra::Vector2;
        let west = |y: f64, v: [f64; 2]| Crossing {
            side: Side::West,
            direction: Direction::Entry,
            index: 0,
            s: 16.0 - y,
            t: 0.0,
            position: Vector2::new(0.0, y),
            velocity: Vector2::new(v[0], v[1]),
            preferred_speed: 1.3,
        };
        // Normal, zero or through a corner: the opposite side, as eq. 4.
        assert_eq!(heading_side(&west(2.0, [1.3, -0.0]), 16.0), Side::East);
        assert_eq!(heading_side(&west(2.0, [0.0, 0.0]), 16.0), Side::East);
        assert_eq!(heading_side(&west(8.0, [16.0, 8.0]), 16.0), Side::East);
        // At 45° it reaches the north side first from low, the south side
        // from high, the east side when it starts near the middle.
        assert_eq!(heading_side(&west(2.0, [1.0, 1.0]), 16.0), Side::North);
        assert_eq!(heading_side(&west(14.0, [1.0, -1.0]), 16.0), Side::South);
        assert_eq!(heading_side(&west(8.0, [1.0, 0.3]), 16.0), Side::East);
        // The score's side penalty follows the heading.
        let exit = |side: Side, x: f64, y: f64, t: f64| Crossing {
            side,
            direction: Direction::Exit,
            position: Vector2::new(x, y),
            t,
            ..west(0.0, [0.0, 0.0])
        };
        let e = west(2.0, [1.0, 1.0]);
        let d = 14.0 * 2f64.sqrt();
        let north = walker_score(&e, &exit(Side::North, 14.0, 16.0, d / 1.3), 20.0, 1.3, 1.6, 16.0);
        let east = walker_score(&e, &exit(Side::East, 16.0, 2.0, 16.0 / 1.3), 20.0, 1.3, 1.6, 16.0);
        assert!(north.abs() < 1e-9 && (east - 2.0).abs() < 1e-9, "{north} {east}");
        let straight = west(2.0, [1.3, 0.0]);
        let east = walker_score(&straight, &exit(Side::East, 16.0, 2.0, 16.0 / 1.3), 20.0, 1.3, 1.6, 16.0);
        assert!(east.abs() < 1e-9, "{east}");
    }
}
