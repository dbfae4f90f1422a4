//! Seam metrics over a world of loaded tiles ([`seam_metrics`]): what a
//! player would see where two tiles meet.
//!
//! They are computed here, in the runtime, from the tiles as loaded (the
//! `f32` keyframes a game plays, placed and rotated as the world places
//! them), not from the bake's `f64` paths: so a game or a build step can
//! check the very data it ships, and a mod's tiles can be checked on load.
//!
//! For every shared edge, each pedestrian crossing it is one agent of the
//! tile it leaves (ending at an exit) and one agent of the tile it enters
//! (starting at the mirror entry). Per crossing:
//! - **position error**: distance between where the first agent ends and
//!   the second starts, world frame `[m]`;
//! - **time error**: difference of the two times, modulo the period `[s]`;
//! - **velocity jump**: `|v_out − v_in|` of the two agents across the seam
//!   (docs/design.md "Metrics", `boundary_velocity_jump`) `[m/s]`, each from the motion over
//!   the last (first) [`VELOCITY_WINDOW`] of its path.
//!
//! **Clearance**: the smallest centre distance between an agent of a tile
//! and one of a neighbouring tile (across an edge or a corner) while both
//! are shown, over the whole period, exact for piecewise-linear motion
//! (closest approach per key interval); the two halves of one crossing
//! pedestrian are not compared at their hand-over instant. Below 2r it is a
//! seam collision.
//!
//! **Walking groups**: each group leaving a tile across a shared edge (its
//! exit points' [`BakedPoint::group`]) goes on together when its members
//! enter the neighbour as one group of the same size and leave it by one
//! exit group of that size; the groups that do not are counted as parted.

use crate::format::{AgentKind, BakedPoint, PointRef, Side};
use crate::pose::Placement;
use crate::tile::Tile;
use crate::world::{Cell, World};
use std::collections::{BTreeMap, HashMap};

/// A crossing pedestrian: the cell it leaves and its agent there, the cell it
/// enters and its agent there.
type Handover = ([usize; 2], usize, [usize; 2], usize);

/// Time span `[s]` over which crossing velocities are measured.
pub const VELOCITY_WINDOW: f64 = 0.02;

/// Pairs of agents whose paths' bounding boxes stay further apart than
/// `2r + CLEARANCE_REACH` `[m]` are not compared: the clearance reported is
/// exact below that distance.
pub const CLEARANCE_REACH: f64 = 1.0;

/// Half-width `[s]` of the hand-over instant of a crossing pedestrian, not
/// counted in clearances (the two agents meet there by design, and `f32`
/// key times may let both show for a microsecond).
const HANDOVER: f32 = 1e-3;

/// One pedestrian crossing a seam.
#[derive(Debug, Clone, PartialEq)]
pub struct SeamCrossing {
    /// Cell it leaves `(column, row)`.
    pub from: [usize; 2],
    /// Cell it enters.
    pub to: [usize; 2],
    /// World side of `from` it crosses.
    pub side: Side,
    /// Agent index in `from`'s tile.
    pub from_agent: usize,
    /// Agent index in `to`'s tile.
    pub to_agent: usize,
    /// Distance between the end of one and the start of the other `[m]`.
    pub position_error: f64,
    /// Their time difference, modulo π, in `[0, π/2]` `[s]`.
    pub time_error: f64,
    /// `|v_out − v_in|` `[m/s]`.
    pub velocity_jump: f64,
}

/// Two agents of neighbouring tiles closer than 2r.
#[derive(Debug, Clone, PartialEq)]
pub struct SeamCollision {
    /// One cell and its instance index.
    pub a: ([usize; 2], usize),
    /// The neighbouring cell and its instance index.
    pub b: ([usize; 2], usize),
    /// Play time of the closest approach `[s]`.
    pub tau: f64,
    /// Their closest distance `[m]`.
    pub distance: f64,
}

/// Seam metrics of a world; see the [module](self) documentation.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SeamReport {
    /// Shared edges between non-empty cells.
    pub edges: usize,
    /// Every crossing pedestrian found.
    pub crossings: Vec<SeamCrossing>,
    /// Boundary points of shared edges for which no agent pair was found
    /// (a point with no mirror, or no agent ending or starting there).
    pub unmatched: usize,
    /// Largest [`SeamCrossing::position_error`] `[m]`.
    pub max_position_error: f64,
    /// Largest [`SeamCrossing::time_error`] `[s]`.
    pub max_time_error: f64,
    /// Largest [`SeamCrossing::velocity_jump`] `[m/s]`.
    pub max_velocity_jump: f64,
    /// Smallest distance between agents of neighbouring tiles `[m]`; `None`
    /// when none ever come within `2r +` [`CLEARANCE_REACH`].
    pub min_clearance: Option<f64>,
    /// Pairs closer than 2r (`agent_radius` of the tiles).
    pub collisions: Vec<SeamCollision>,
    /// Walking groups that leave a tile across a shared edge (the points
    /// of one exit group of a side, [`crate::BakedPoint::group`]; issue 31).
    pub group_crossings: usize,
    /// Of those, the groups that do not go on together: whose members do
    /// not enter the neighbour as one group of the same size, or, having
    /// entered, do not leave it by one exit group of that size.
    pub groups_parted: usize,
}

fn sub(a: [f64; 2], b: [f64; 2]) -> [f64; 2] {
    [a[0] - b[0], a[1] - b[1]]
}

fn norm(a: [f64; 2]) -> f64 {
    a[0].hypot(a[1])
}

/// World position of agent `agent` of a placed tile at unwrapped time `t`.
fn world_position(tile: &Tile, place: &Placement, agent: usize, t: f64) -> Option<[f64; 2]> {
    tile.agent_position(agent, t).map(|p| place.point(tile.size(), p))
}

/// Computes the seam metrics of `world` whose tile `k` is `tiles[k]`.
/// Cells naming a missing tile are skipped ([`World::check`] reports them).
/// Same as [`seam_metrics_with`] without progress.
pub fn seam_metrics(world: &World, tiles: &[&Tile]) -> SeamReport {
    seam_metrics_with(world, tiles, &mut |_, _| {})
}

/// [`seam_metrics`], reporting progress as `(cells done, 2 × cells)`: each
/// cell is visited once for its crossings, then once for its clearances.
///
/// Cost: O(cells · (p·log p + a·log a + i²·k)), linear in the world: per
/// cell, its boundary points p are matched to their mirrors and agents
/// through sorted indices, and its instances i are compared with those of
/// its four forward neighbours (edge and corner) whose bounding boxes come
/// within 2r + [`CLEARANCE_REACH`], each pair in time linear in their keys k;
/// the hand-over instants of a pair are found in a hash index of the
/// crossings (O(1) per pair, not a scan of every crossing).
pub fn seam_metrics_with(world: &World, tiles: &[&Tile], progress: &mut dyn FnMut(usize, usize)) -> SeamReport {
    let mut report = SeamReport::default();
    let l = world.size;
    let cell = |i: usize, j: usize| -> Option<(Cell, &Tile, Placement)> {
        let c = world.get(i, j)?;
        let t = *tiles.get(c.tile)?;
        Some((c, t, world.placement(i, j, c.rotation)))
    };
    let total = 2 * world.cells().count();
    let mut done = 0usize;
    // Hand-over instants of each crossing pedestrian, by its two halves.
    let mut handover_time: HashMap<Handover, Vec<f32>> = HashMap::new();
    // Per tile: the agent starting (entry) or ending (exit) at each point.
    let ends: Vec<AgentEnds> = tiles.iter().map(|t| AgentEnds::of(t)).collect();

    // Crossings.
    for ([i, j], _) in world.cells() {
        done += 1;
        progress(done, total);
        let Some((ca, ta, pa)) = cell(i, j) else { continue };
        for side in [Side::East, Side::North] {
            let Some([ni, nj]) = world.neighbour(i, j, side) else { continue };
            let Some((cb, tb, pb)) = cell(ni, nj) else { continue };
            report.edges += 1;
            let la = side.rotated(-i32::from(ca.rotation % 4));
            let lb = side.opposite().rotated(-i32::from(cb.rotation % 4));
            let period = ta.period();
            // (exiting tile, its ends, placement, its side, cell, entering tile, …, world side)
            let pairs = [
                (ta, &ends[ca.tile], &pa, la, [i, j], tb, &ends[cb.tile], &pb, lb, [ni, nj], side),
                (tb, &ends[cb.tile], &pb, lb, [ni, nj], ta, &ends[ca.tile], &pa, la, [i, j], side.opposite()),
            ];
            for (tx, ex, px, sx, cx, ty, ey, py, sy, cy, world_side) in pairs {
                let exits = &tx.extras().patterns[sx].exits;
                let entries = &ty.extras().patterns[sy].entries;
                // The mirror entry of each exit, through entries sorted by s.
                let mut by_s: Vec<(f64, usize)> = entries.iter().enumerate().map(|(k, q)| (q.s, k)).collect();
                by_s.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                let tol_s = 1e-6 * l.max(1.0);
                // Per exit group: (the mirror entry's group, the group and
                // side of the exit the entering agent leaves by) of each member.
                let mut groups: BTreeMap<u32, Vec<GroupHandover>> = BTreeMap::new();
                for (index, p) in exits.iter().enumerate() {
                    let want = l - p.s;
                    // |s − want| < tol_s, the lowest index first (as a scan would).
                    let from = by_s.partition_point(|&(s, _)| s <= want - tol_s);
                    let mirror = by_s[from..]
                        .iter()
                        .take_while(|&&(s, _)| s < want + tol_s)
                        .map(|&(_, k)| k)
                        .filter(|&k| {
                            let dt = (entries[k].t - p.t).rem_euclid(period);
                            dt.min(period - dt) < 1e-6 * period.max(1.0)
                        })
                        .min();
                    let pair = mirror.and_then(|m| {
                        Some((ex.exit(PointRef { side: sx, index })?, ey.entry(PointRef { side: sy, index: m })?))
                    });
                    if let Some(g) = p.group {
                        let onward = pair.and_then(|(_, ay)| match ty.extras().agents[ay].kind {
                            AgentKind::Exogenous { exit, .. } => {
                                Some((exit.side, ty.extras().patterns[exit.side].exits.get(exit.index)?.group?))
                            }
                            AgentKind::Endogenous { .. } => None,
                        });
                        groups
                            .entry(g)
                            .or_default()
                            .push(GroupHandover { entering: mirror.and_then(|m| entries[m].group), onward });
                    }
                    let Some((ax, ay)) = pair else {
                        report.unmatched += 1;
                        continue;
                    };
                    let end = tx.extras().agents[ax].interval[1];
                    let start = ty.extras().agents[ay].interval[0];
                    let hx = VELOCITY_WINDOW.min((end - tx.extras().agents[ax].interval[0]) / 2.0);
                    let hy = VELOCITY_WINDOW.min((ty.extras().agents[ay].interval[1] - start) / 2.0);
                    let (Some(e1), Some(e0), Some(s0), Some(s1)) = (
                        world_position(tx, px, ax, end),
                        world_position(tx, px, ax, end - hx),
                        world_position(ty, py, ay, start),
                        world_position(ty, py, ay, start + hy),
                    ) else {
                        report.unmatched += 1;
                        continue;
                    };
                    let v_out = sub(e1, e0).map(|c| c / hx);
                    let v_in = sub(s1, s0).map(|c| c / hy);
                    let dt = (end - start).rem_euclid(period);
                    let crossing = SeamCrossing {
                        from: cx,
                        to: cy,
                        side: world_side,
                        from_agent: ax,
                        to_agent: ay,
                        position_error: norm(sub(e1, s0)),
                        time_error: dt.min(period - dt),
                        velocity_jump: norm(sub(v_out, v_in)),
                    };
                    report.max_position_error = report.max_position_error.max(crossing.position_error);
                    report.max_time_error = report.max_time_error.max(crossing.time_error);
                    report.max_velocity_jump = report.max_velocity_jump.max(crossing.velocity_jump);
                    report.crossings.push(crossing);
                    handover_time.entry((cx, ax, cy, ay)).or_default().push(end.rem_euclid(period) as f32);
                }
                for members in groups.values() {
                    report.group_crossings += 1;
                    let size =
                        |f: &dyn Fn(&BakedPoint) -> bool, list: &[BakedPoint]| list.iter().filter(|q| f(q)).count();
                    let first = members[0];
                    let together = members.iter().all(|m| m.entering.is_some() && m.onward.is_some() && *m == first)
                        && first.entering.is_some_and(|h| size(&|q| q.group == Some(h), entries) == members.len())
                        && first.onward.is_some_and(|(side, h)| {
                            size(&|q| q.group == Some(h), &ty.extras().patterns[side].exits) == members.len()
                        });
                    if !together {
                        report.groups_parted += 1;
                    }
                }
            }
        }
    }

    // Clearance across edges and corners.
    let boxes: Vec<Vec<[f32; 4]>> = tiles.iter().map(|t| instance_boxes(t)).collect();
    let mut skip: Vec<f32> = Vec::new();
    for ([i, j], _) in world.cells() {
        done += 1;
        progress(done, total);
        let Some((ca, ta, pa)) = cell(i, j) else { continue };
        let two_r = 2.0 * ta.agent_radius();
        let wa: Vec<[f32; 4]> = boxes[ca.tile].iter().map(|b| world_box(b, &pa, l)).collect();
        let others = [(1i64, 0i64), (0, 1), (1, 1), (-1, 1)];
        for (di, dj) in others {
            let (ni, nj) = (i as i64 + di, j as i64 + dj);
            if ni < 0 || nj < 0 {
                continue;
            }
            let (ni, nj) = (ni as usize, nj as usize);
            let Some((cb, tb, pb)) = cell(ni, nj) else { continue };
            let reach = (two_r.max(2.0 * tb.agent_radius()) + CLEARANCE_REACH) as f32;
            let wb: Vec<[f32; 4]> = boxes[cb.tile].iter().map(|b| world_box(b, &pb, l)).collect();
            for (ia, ba) in wa.iter().enumerate() {
                for (ib, bb) in wb.iter().enumerate() {
                    let gap_x = (ba[0] - bb[2]).max(bb[0] - ba[2]);
                    let gap_y = (ba[1] - bb[3]).max(bb[1] - ba[3]);
                    if gap_x > reach || gap_y > reach {
                        continue;
                    }
                    let (agent_a, agent_b) = (ta.instance(ia).agent, tb.instance(ib).agent);
                    skip.clear();
                    for key in [([i, j], agent_a, [ni, nj], agent_b), ([ni, nj], agent_b, [i, j], agent_a)] {
                        if let Some(times) = handover_time.get(&key) {
                            skip.extend_from_slice(times);
                        }
                    }
                    let Some((d, tau)) = closest(ta, &pa, ia, tb, &pb, ib, l, &skip) else { continue };
                    if report.min_clearance.is_none_or(|m| d < m) {
                        report.min_clearance = Some(d);
                    }
                    if d < two_r - 1e-3 {
                        report.collisions.push(SeamCollision { a: ([i, j], ia), b: ([ni, nj], ib), tau, distance: d });
                    }
                }
            }
        }
    }
    report
}

/// Where a member of a walking group leaving a tile goes on: the group of
/// its mirror entry in the neighbour, and the side and group of the exit
/// by which the agent entering there leaves.
#[derive(Debug, Clone, Copy, PartialEq)]
struct GroupHandover {
    entering: Option<u32>,
    onward: Option<(Side, u32)>,
}

/// The agent of a tile that starts (enters) or ends (exits) at each boundary
/// point, sorted for binary search.
struct AgentEnds {
    entries: Vec<(PointRef, usize)>,
    exits: Vec<(PointRef, usize)>,
}

fn point_key(p: &PointRef) -> (usize, usize) {
    (p.side.index(), p.index)
}

impl AgentEnds {
    /// O(a log a) in the tile's agents a; the first agent wins, as a scan
    /// in agent order would.
    fn of(tile: &Tile) -> AgentEnds {
        let mut entries = Vec::new();
        let mut exits = Vec::new();
        for (k, a) in tile.extras().agents.iter().enumerate() {
            if let AgentKind::Exogenous { entry, exit } = a.kind {
                entries.push((entry, k));
                exits.push((exit, k));
            }
        }
        let order =
            |a: &(PointRef, usize), b: &(PointRef, usize)| point_key(&a.0).cmp(&point_key(&b.0)).then(a.1.cmp(&b.1));
        entries.sort_by(order);
        exits.sort_by(order);
        AgentEnds { entries, exits }
    }

    fn find(list: &[(PointRef, usize)], point: PointRef) -> Option<usize> {
        let key = point_key(&point);
        let at = list.partition_point(|(p, _)| point_key(p) < key);
        list.get(at).filter(|(p, _)| point_key(p) == key).map(|&(_, k)| k)
    }

    /// The agent whose path starts at `point`.
    fn entry(&self, point: PointRef) -> Option<usize> {
        Self::find(&self.entries, point)
    }

    /// The agent whose path ends at `point`.
    fn exit(&self, point: PointRef) -> Option<usize> {
        Self::find(&self.exits, point)
    }
}

/// Bounding box `[xmin, ymin, xmax, ymax]` of every instance's keys (patch frame).
fn instance_boxes(tile: &Tile) -> Vec<[f32; 4]> {
    (0..tile.instance_count())
        .map(|i| {
            let mut b = [f32::INFINITY, f32::INFINITY, f32::NEG_INFINITY, f32::NEG_INFINITY];
            for t in tile.key_times(i) {
                let [x, y] = tile.position_at(i, t.min(tile.period() as f32));
                b = [b[0].min(x), b[1].min(y), b[2].max(x), b[3].max(y)];
            }
            b
        })
        .collect()
}

fn world_box(b: &[f32; 4], place: &Placement, l: f64) -> [f32; 4] {
    let p = place.point(l, [f64::from(b[0]), f64::from(b[1])]);
    let q = place.point(l, [f64::from(b[2]), f64::from(b[3])]);
    [p[0].min(q[0]) as f32, p[1].min(q[1]) as f32, p[0].max(q[0]) as f32, p[1].max(q[1]) as f32]
}

/// Visible intervals of an instance within `[0, π]`.
fn visible_intervals(tile: &Tile, i: usize) -> Vec<(f32, f32)> {
    let period = tile.period() as f32;
    let (from, len) = tile.visibility(i);
    if len <= 0.0 {
        return vec![];
    }
    let end = from + len;
    if end <= period { vec![(from, end)] } else { vec![(from, period), (0.0, end - period)] }
}

/// Closest approach `(distance, τ)` of instance `ia` of placed tile `ta` and
/// `ib` of `tb` while both are shown, outside the hand-over instants `skip`.
#[allow(clippy::too_many_arguments)]
fn closest(
    ta: &Tile,
    pa: &Placement,
    ia: usize,
    tb: &Tile,
    pb: &Placement,
    ib: usize,
    l: f64,
    skip: &[f32],
) -> Option<(f64, f64)> {
    let period = ta.period() as f32;
    let (va, vb) = (visible_intervals(ta, ia), visible_intervals(tb, ib));
    let mut both: Vec<(f32, f32)> = Vec::new();
    for a in &va {
        for b in &vb {
            let (s, e) = (a.0.max(b.0), a.1.min(b.1));
            if e > s {
                both.push((s, e));
            }
        }
    }
    // Cut the hand-over instants out.
    for &h in skip {
        let mut cut = Vec::new();
        for (s, e) in both {
            let (hs, he) = (h - HANDOVER, h + HANDOVER);
            if he <= s || hs >= e {
                cut.push((s, e));
                continue;
            }
            if hs > s {
                cut.push((s, hs));
            }
            if he < e {
                cut.push((he, e));
            }
        }
        both = cut;
        // A hand-over at τ = 0 is also one at τ = π.
        if h < HANDOVER || h > period - HANDOVER {
            both.retain(|&(s, e)| e > HANDOVER && s < period - HANDOVER);
        }
    }
    let mut best: Option<(f64, f64)> = None;
    for (s, e) in both {
        let mut times: Vec<f32> = ta.key_times(ia).chain(tb.key_times(ib)).filter(|&t| t > s && t < e).collect();
        times.push(s);
        times.push(e);
        times.sort_by(f32::total_cmp);
        times.dedup();
        for w in times.windows(2) {
            let (t0, t1) = (w[0], w[1]);
            let at = |tile: &Tile, place: &Placement, i: usize, t: f32| {
                let [x, y] = tile.position_at(i, t);
                place.point(l, [f64::from(x), f64::from(y)])
            };
            let d0 = sub(at(ta, pa, ia, t0), at(tb, pb, ib, t0));
            let d1 = sub(at(ta, pa, ia, t1), at(tb, pb, ib, t1));
            // |d0 + (d1 − d0)u| for u ∈ [0, 1].
            let dv = sub(d1, d0);
            let vv = dv[0] * dv[0] + dv[1] * dv[1];
            let u = if vv > 0.0 { (-(d0[0] * dv[0] + d0[1] * dv[1]) / vv).clamp(0.0, 1.0) } else { 0.0 };
            let d = norm([d0[0] + dv[0] * u, d0[1] + dv[1] * u]);
            if best.is_none_or(|(b, _)| d < b) {
                best = Some((d, f64::from(t0) + f64::from(t1 - t0) * u));
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{AgentKind, BakedAgent, BakedPattern, BakedPoint, PathKey, PointRef};
    use crate::tile::tests::patch;

    fn standing(x: f64, y: f64) -> BakedAgent {
        BakedAgent {
            kind: AgentKind::Endogenous { index: 0 },
            keys: vec![
                PathKey { t: 0.0, position: [x, y], heading: 0.0 },
                PathKey { t: 10.0, position: [x, y], heading: 0.0 },
            ],
        }
    }

    fn two_cells() -> World {
        let mut w = World::new(2, 1, 16.0, 10.0);
        w.set(0, 0, Some(Cell { tile: 0, rotation: 0 }));
        w.set(1, 0, Some(Cell { tile: 1, rotation: 0 }));
        w
    }

    #[test]
    fn agents_too_close_across_a_seam_are_collisions() {
        let a = Tile::from_baked(&patch(vec![standing(15.8, 8.0), standing(8.0, 8.0)]));
        let b = Tile::from_baked(&patch(vec![standing(0.1, 8.0)]));
        let r = seam_metrics(&two_cells(), &[&a, &b]);
        assert_eq!(r.collisions.len(), 1, "{r:#?}");
        assert!((r.min_clearance.unwrap() - 0.3).abs() < 1e-5);
        assert_eq!(r.collisions[0].a.0, [0, 0]);
        // Far enough apart: no collision.
        let b = Tile::from_baked(&patch(vec![standing(0.5, 8.0)]));
        let r = seam_metrics(&two_cells(), &[&a, &b]);
        assert!(r.collisions.is_empty());
        assert!((r.min_clearance.unwrap() - 0.7).abs() < 1e-5);
    }

    /// A walker leaving A eastwards at (16, 8), t = 5, and the walker that
    /// enters B there, starting `offset` m off and with velocity `v_in`.
    fn crossing(offset: f64, v_in: [f64; 2]) -> (Tile, Tile) {
        let v = [1.0, 0.0];
        let mut pa = patch(vec![BakedAgent {
            kind: AgentKind::Exogenous {
                entry: PointRef { side: Side::West, index: 0 },
                exit: PointRef { side: Side::East, index: 0 },
            },
            keys: vec![
                PathKey { t: 0.0, position: [11.0, 8.0], heading: 0.0 },
                PathKey { t: 5.0, position: [16.0, 8.0], heading: 0.0 },
            ],
        }]);
        pa.patterns.east = BakedPattern {
            entries: vec![],
            exits: vec![BakedPoint { s: 8.0, t: 5.0, velocity: v, gait: None, group: None }],
        };
        let mut pb = patch(vec![BakedAgent {
            kind: AgentKind::Exogenous {
                entry: PointRef { side: Side::West, index: 0 },
                exit: PointRef { side: Side::East, index: 0 },
            },
            keys: vec![
                PathKey { t: 5.0, position: [0.0, 8.0 + offset], heading: 0.0 },
                PathKey { t: 9.0, position: [4.0 * v_in[0], 8.0 + offset + 4.0 * v_in[1]], heading: 0.0 },
            ],
        }]);
        pb.patterns.west = BakedPattern {
            entries: vec![BakedPoint { s: 8.0, t: 5.0, velocity: v, gait: None, group: None }],
            exits: vec![],
        };
        (Tile::from_baked(&pa), Tile::from_baked(&pb))
    }

    /// A pair walking east through A and on through B at y = 7.6 and 8.4:
    /// A's exits carry group 1; B's entries `entering` and its exits
    /// `leaving` (group ids of the two members).
    fn pair(entering: [Option<u32>; 2], leaving: [Option<u32>; 2]) -> (Tile, Tile) {
        let v = [1.0, 0.0];
        let walker = |y: f64, t0: f64, x0: f64, k: usize| BakedAgent {
            kind: AgentKind::Exogenous {
                entry: PointRef { side: Side::West, index: k },
                exit: PointRef { side: Side::East, index: k },
            },
            keys: vec![
                PathKey { t: t0, position: [x0, y], heading: 0.0 },
                PathKey { t: t0 + 5.0, position: [x0 + 5.0, y], heading: 0.0 },
            ],
        };
        let point = |s: f64, group: Option<u32>| BakedPoint { s, t: 5.0, velocity: v, gait: None, group };
        let mut pa = patch(vec![walker(7.6, 0.0, 11.0, 0), walker(8.4, 0.0, 11.0, 1)]);
        pa.patterns.east = BakedPattern { entries: vec![], exits: vec![point(7.6, Some(1)), point(8.4, Some(1))] };
        let mut pb = patch(vec![walker(7.6, 5.0, 0.0, 0), walker(8.4, 5.0, 0.0, 1)]);
        // West s runs from the north: y = 7.6 is s = 8.4.
        pb.patterns.west =
            BakedPattern { entries: vec![point(8.4, entering[0]), point(7.6, entering[1])], exits: vec![] };
        pb.patterns.east =
            BakedPattern { entries: vec![], exits: vec![point(7.6, leaving[0]), point(8.4, leaving[1])] };
        (Tile::from_baked(&pa), Tile::from_baked(&pb))
    }

    #[test]
    fn a_walking_group_goes_on_together_or_is_counted_as_parted() {
        let (a, b) = pair([Some(4), Some(4)], [Some(2), Some(2)]);
        let r = seam_metrics(&two_cells(), &[&a, &b]);
        assert_eq!(r.crossings.len(), 2, "{r:#?}");
        assert_eq!((r.group_crossings, r.groups_parted), (1, 0));
        // Entering as two groups, or as one member of a group and a single.
        for entering in [[Some(4), Some(5)], [Some(4), None]] {
            let (a, b) = pair(entering, [Some(2), Some(2)]);
            assert_eq!(seam_metrics(&two_cells(), &[&a, &b]).groups_parted, 1, "{entering:?}");
        }
        // Entering together but leaving apart.
        let (a, b) = pair([Some(4), Some(4)], [Some(2), None]);
        assert_eq!(seam_metrics(&two_cells(), &[&a, &b]).groups_parted, 1);
    }

    #[test]
    fn crossings_measure_position_error_and_velocity_jump() {
        let (a, b) = crossing(0.0, [1.0, 0.0]);
        let r = seam_metrics(&two_cells(), &[&a, &b]);
        assert_eq!(r.crossings.len(), 1);
        assert_eq!(r.unmatched, 0);
        assert!(r.max_position_error < 1e-6 && r.max_velocity_jump < 1e-4, "{r:#?}");
        // The hand-over itself is not a collision.
        assert!(r.collisions.is_empty(), "{r:#?}");
        let (a, b) = crossing(0.5, [1.0, 0.5]);
        let r = seam_metrics(&two_cells(), &[&a, &b]);
        assert!((r.max_position_error - 0.5).abs() < 1e-5, "{r:#?}");
        assert!((r.max_velocity_jump - 0.5).abs() < 1e-3, "{r:#?}");
    }
}
