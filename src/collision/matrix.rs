//! The distance matrix of the default solver, with space-time pruning of
//! pairs and incremental updates of the time window a move changed.
//!
//! It holds the same quantity as Algorithm 2's matrix `M` (seed paper §3.4.1:
//! the closest approach of every pair of paths over all periodic instance
//! pairs, eqs. 8–10), with obstacles and seam ghosts as extra columns, but
//! splits each cell by **play time**: the period is cut into `B` blocks
//! (about 0.5 s each) and a cell keeps its closest approach within each block
//! (an instance pair `a(t)`, `b(t + kπ)` meets at one play time `t mod π`, so
//! a block's value is shared by both orientations and every shift).
//!
//! - **Space-time pruning.** Each path keeps the spatial bounding box of its
//!   positions in each play-time block. A block in which two boxes lie at
//!   least `target + FAR` apart holds that distance as a *lower bound* and no
//!   closest approach is computed.
//! - **Incremental updates.** A move changes a path only inside a time
//!   window; only the blocks that window touches are recomputed, in the moved
//!   path's row and column. The result is exact — the same as a fresh matrix.
//! - **Row minima.** Each row keeps its smallest gap, so the worst pair is
//!   found in O(n).

use super::params::{Cell, CollisionParams};
use crate::geometry::Vec2;
use crate::model::Obstacle;
use crate::path::Agent;
use crate::path::Path;
use crate::proximity::{Approach, Contact, Ghost, Other, closest_to_obstacle, closest_with_shift_in};

/// Blocks whose bounding boxes lie this much farther apart than their target
/// distance hold a lower bound instead of a closest approach `[m]`.
pub const FAR: f64 = 0.5;
/// Aimed-for length of a play-time block `[s]`.
pub const BLOCK: f64 = 0.5;
/// Largest number of blocks per period.
pub const MAX_BLOCKS: usize = 64;

/// A cell of the matrix, oriented from its row's path.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Entry {
    /// The two never coexist.
    Never,
    /// They are at least this far apart `[m]` (pruned; ≥ target + [`FAR`]).
    Bound(f64),
    /// Their closest approach.
    Exact(Cell),
}

/// Spatial bounding box `[m]`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Aabb {
    lo: Vec2,
    hi: Vec2,
}

impl Aabb {
    fn point(p: Vec2) -> Aabb {
        Aabb { lo: p, hi: p }
    }

    fn of(path: &Path) -> Aabb {
        let mut b = Aabb::point(path.points[0].p);
        for c in &path.points[1..] {
            b.add(c.p);
        }
        b
    }

    fn union(&self, o: &Aabb) -> Aabb {
        Aabb { lo: self.lo.inf(&o.lo), hi: self.hi.sup(&o.hi) }
    }

    fn add(&mut self, p: Vec2) {
        self.lo = self.lo.inf(&p);
        self.hi = self.hi.sup(&p);
    }

    fn distance2(&self, o: &Aabb) -> f64 {
        let dx = (o.lo.x - self.hi.x).max(self.lo.x - o.hi.x).max(0.0);
        let dy = (o.lo.y - self.hi.y).max(self.lo.y - o.hi.y).max(0.0);
        dx * dx + dy * dy
    }
}

/// Counts of the work done, for benchmarks and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MatrixStats {
    /// Blocks whose closest approach was computed.
    pub exact: usize,
    /// Blocks answered by their bounding boxes alone.
    pub pruned: usize,
    /// Row updates.
    pub updates: usize,
}

/// The play-time blocks `[s]` of a period.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Blocks {
    count: usize,
    len: f64,
}

impl Blocks {
    fn new(period: f64) -> Blocks {
        let count = ((period / BLOCK).round() as usize).clamp(1, MAX_BLOCKS);
        Blocks { count, len: period / count as f64 }
    }

    /// Global (unwrapped) block index of time `t`.
    fn global(&self, t: f64) -> i64 {
        (t / self.len).floor() as i64
    }

    fn play(&self, g: i64) -> usize {
        g.rem_euclid(self.count as i64) as usize
    }

    /// The blocks a time window touches, as a bit set.
    fn mask(&self, w0: f64, w1: f64) -> u64 {
        let (g0, g1) = (self.global(w0), self.global(w1));
        if g1 - g0 + 1 >= self.count as i64 {
            return self.all();
        }
        (g0..=g1).fold(0, |m, g| m | 1u64 << self.play(g))
    }

    fn all(&self) -> u64 {
        if self.count == 64 { u64::MAX } else { (1u64 << self.count) - 1 }
    }

    /// Each play-time block's bounding box of `path` (`None`: never there).
    fn boxes(&self, path: &Path) -> Vec<Option<Aabb>> {
        let mut out: Vec<Option<Aabb>> = vec![None; self.count];
        let mut add = |b: usize, p: Vec2| match &mut out[b] {
            Some(bx) => bx.add(p),
            slot => *slot = Some(Aabb::point(p)),
        };
        for w in path.points.windows(2) {
            let (a, c) = (w[0], w[1]);
            let v = (c.p - a.p) / (c.t - a.t);
            let (g0, g1) = (self.global(a.t), self.global(c.t));
            for g in g0..=g1 {
                let t0 = a.t.max(g as f64 * self.len);
                let t1 = c.t.min((g + 1) as f64 * self.len);
                if t1 < t0 {
                    continue;
                }
                let b = self.play(g);
                add(b, a.p + v * (t0 - a.t));
                add(b, a.p + v * (t1 - a.t));
            }
        }
        out
    }
}

/// The pruned, incrementally updated distance matrix (see the module docs).
pub struct IncrementalMatrix<'a> {
    params: &'a CollisionParams,
    obstacles: &'a [Obstacle],
    ghosts: &'a [Ghost],
    n: usize,
    blocks: Blocks,
    /// Per agent, per block.
    boxes: Vec<Vec<Option<Aabb>>>,
    ghost_boxes: Vec<Vec<Option<Aabb>>>,
    /// Per agent, the box of its whole path.
    whole: Vec<Aabb>,
    /// Per ghost, the blocks it is present in.
    ghost_presence: Vec<u64>,
    /// During an update: the box of the changed path over the changed blocks.
    window_box: Option<Aabb>,
    /// `agents[i * n + j]`, oriented from `i` (both orientations kept).
    agents: Vec<Entry>,
    /// `fixed[i * nf + k]`: obstacles first, then ghosts.
    fixed: Vec<Entry>,
    /// Smallest gap of each row and its column (`< n`: agent, else fixed `− n`).
    row_best: Vec<(f64, usize)>,
    /// Work done so far.
    pub stats: MatrixStats,
}

fn gap(e: &Entry, target: f64) -> f64 {
    match e {
        Entry::Never => f64::INFINITY,
        Entry::Bound(d) => d - target,
        Entry::Exact(c) => c.gap,
    }
}

fn flip(e: Entry) -> Entry {
    match e {
        Entry::Exact(c) => Entry::Exact(c.flipped()),
        other => other,
    }
}

/// What a scan of some blocks of a pair found.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Scan {
    /// Closest approach within the near blocks.
    exact: Option<Approach>,
    /// Smallest box distance of the far blocks (∞: none).
    bound: f64,
    /// Whether both paths are present in some scanned block.
    present: bool,
}

impl<'a> IncrementalMatrix<'a> {
    /// Computes the whole matrix, pruning far blocks.
    /// O(n² · B) box tests plus the closest approaches of the near blocks.
    pub fn new(
        paths: &[&Path],
        obstacles: &'a [Obstacle],
        ghosts: &'a [Ghost],
        params: &'a CollisionParams,
    ) -> IncrementalMatrix<'a> {
        let n = paths.len();
        let nf = obstacles.len() + ghosts.len();
        let blocks = Blocks::new(params.period);
        let mut m = IncrementalMatrix {
            params,
            obstacles,
            ghosts,
            n,
            blocks,
            boxes: paths.iter().map(|p| blocks.boxes(p)).collect(),
            ghost_boxes: ghosts.iter().map(|g| blocks.boxes(&g.path)).collect(),
            whole: paths.iter().map(|p| Aabb::of(p)).collect(),
            ghost_presence: vec![],
            window_box: None,
            agents: vec![Entry::Never; n * n],
            fixed: vec![Entry::Never; n * nf],
            row_best: vec![(f64::INFINITY, 0); n],
            stats: MatrixStats::default(),
        };
        m.ghost_presence = m
            .ghost_boxes
            .iter()
            .map(|bs| bs.iter().enumerate().fold(0u64, |acc, (b, x)| if x.is_some() { acc | 1 << b } else { acc }))
            .collect();
        for i in 0..n {
            for j in i..n {
                let e = m.agent_cell(paths, i, j, None);
                m.agents[i * n + j] = e;
                m.agents[j * n + i] = flip(e);
            }
            for k in 0..nf {
                m.fixed[i * nf + k] = m.fixed_cell(paths, i, k, None);
            }
        }
        for i in 0..n {
            m.rescan(i);
        }
        m
    }

    fn agent_target(&self) -> f64 {
        2.0 * self.params.radius + self.params.margin
    }

    fn fixed_target(&self, k: usize) -> f64 {
        if k < self.obstacles.len() {
            self.params.radius + self.params.margin
        } else {
            2.0 * self.params.radius + self.params.margin
        }
    }

    /// Scans the blocks `mask` of `a` against `b` (all shifts but `skip`):
    /// closest approach over the near blocks, box bound over the far ones.
    #[allow(clippy::too_many_arguments)]
    fn scan(
        stats: &mut MatrixStats,
        blocks: Blocks,
        period: f64,
        a: &Path,
        b: &Path,
        skip: Option<i64>,
        boxes_a: &[Option<Aabb>],
        boxes_b: &[Option<Aabb>],
        mask: u64,
        target: f64,
    ) -> Scan {
        let mut out = Scan { exact: None, bound: f64::INFINITY, present: false };
        let mut near: u64 = 0;
        let far2 = (target + FAR) * (target + FAR);
        let mut bound2 = f64::INFINITY;
        let mut bits = mask;
        while bits != 0 {
            let blk = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let (Some(ba), Some(bb)) = (&boxes_a[blk], &boxes_b[blk]) else {
                continue;
            };
            out.present = true;
            let d2 = ba.distance2(bb);
            if d2 >= far2 {
                bound2 = bound2.min(d2);
            } else {
                near |= 1 << blk;
            }
        }
        if bound2.is_finite() {
            out.bound = bound2.sqrt();
        }
        stats.exact += near.count_ones() as usize;
        stats.pruned += (mask.count_ones() - near.count_ones()) as usize;
        // The near blocks as one span of play time (sweeping a few far blocks
        // inside it costs less than a sweep per run), once per period and
        // shift.
        if near != 0 {
            // The shortest cyclic span holding every near block: leave out
            // the longest run of far blocks, which may wrap around the period.
            let count = blocks.count;
            let first = near.trailing_zeros() as usize;
            let last = 63 - near.leading_zeros() as usize;
            let (mut start, mut end, mut widest) = (first, last + 1, first + count - last - 1);
            let mut prev = first;
            let mut rest = near & !(1u64 << first);
            while rest != 0 {
                let b = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                if b - prev - 1 > widest {
                    (start, end, widest) = (b, prev + 1 + count, b - prev - 1);
                }
                prev = b;
            }
            let (p0, p1) = (start as f64 * blocks.len, end as f64 * blocks.len);
            // Periods m with [p0 + mπ, p1 + mπ] meeting a's times.
            let m0 = ((a.start() - p1) / period).ceil() as i64;
            let m1 = ((a.end() - p0) / period).floor() as i64;
            for m in m0..=m1 {
                let (lo, hi) = (p0 + m as f64 * period, p1 + m as f64 * period);
                // Shifts k with b coexisting: [lo, hi] meets [b.start − kπ, b.end − kπ].
                let k0 = ((b.start() - hi) / period).ceil() as i64;
                let k1 = ((b.end() - lo) / period).floor() as i64;
                for k in k0..=k1 {
                    if Some(k) == skip {
                        continue;
                    }
                    if let Some(ap) = closest_with_shift_in(a, b, k as f64 * period, lo, hi)
                        && out.exact.is_none_or(|e| ap.distance < e.distance)
                    {
                        out.exact = Some(ap);
                    }
                }
            }
        }
        out
    }

    /// Combines candidates into a cell: exact approaches (valid where they
    /// were computed) and lower bounds (each ≥ target + FAR).
    fn combine(exact: Option<Approach>, bound: f64, present: bool, target: f64) -> Entry {
        match exact {
            Some(ap) if ap.distance <= bound => {
                Entry::Exact(Cell { gap: ap.distance - target, approach: ap, dir: Vec2::zeros() })
            }
            _ if bound.is_finite() => Entry::Bound(bound),
            _ if present => Entry::Bound(f64::INFINITY),
            _ => Entry::Never,
        }
    }

    /// The new value of a cell of path `a` (changed inside `windows`, blocks
    /// `mask`; `None`: from scratch) against `b`.
    #[allow(clippy::too_many_arguments)]
    fn cell(
        &mut self,
        old: Entry,
        a: &Path,
        b: &Path,
        skip: Option<i64>,
        boxes_a: &[Option<Aabb>],
        boxes_b: &[Option<Aabb>],
        change: Option<(&[(f64, f64)], u64)>,
        target: f64,
        same: bool,
        coarse: f64,
    ) -> Entry {
        let (blocks, period) = (self.blocks, self.params.period);
        let all = blocks.all();
        let scan = |mask: u64, stats: &mut MatrixStats| {
            Self::scan(stats, blocks, period, a, b, skip, boxes_a, boxes_b, mask, target)
        };
        let Some((windows, mask)) = change else {
            let s = scan(all, &mut self.stats);
            return Self::combine(s.exact, s.bound, s.present, target);
        };
        let inside = |t: f64| windows.iter().any(|&(lo, hi)| t >= lo - 1e-9 && t <= hi + 1e-9);
        match old {
            Entry::Never => Entry::Never,
            Entry::Exact(c) if inside(c.approach.t_a) || (same && inside(c.approach.t_b)) => {
                let s = scan(all, &mut self.stats);
                Self::combine(s.exact, s.bound, s.present, target)
            }
            // The changed part of `a` lies at least `coarse` from all of `b`.
            Entry::Exact(c) if coarse >= target + FAR => Self::combine(Some(c.approach), coarse, true, target),
            Entry::Bound(lb) if coarse >= target + FAR => Entry::Bound(lb.min(coarse)),
            Entry::Exact(c) => {
                let s = scan(mask, &mut self.stats);
                let exact = match s.exact {
                    Some(ap) if ap.distance < c.approach.distance => ap,
                    _ => c.approach,
                };
                Self::combine(Some(exact), s.bound, true, target)
            }
            Entry::Bound(lb) => {
                let s = scan(mask, &mut self.stats);
                Self::combine(s.exact, s.bound.min(lb), true, target)
            }
        }
    }

    fn agent_cell(&mut self, paths: &[&Path], i: usize, j: usize, change: Option<(&[(f64, f64)], u64)>) -> Entry {
        if i == j && paths[i].looped {
            return Entry::Never;
        }
        let n = self.n;
        let old = self.agents[i * n + j];
        let target = self.agent_target();
        let coarse = match (change, self.window_box) {
            (Some(_), Some(wb)) if i != j => wb.distance2(&self.whole[j]).sqrt(),
            _ => 0.0,
        };
        let boxes = std::mem::take(&mut self.boxes);
        let e = self.cell(
            old,
            paths[i],
            paths[j],
            (i == j).then_some(0),
            &boxes[i],
            &boxes[j],
            change,
            target,
            i == j,
            coarse,
        );
        self.boxes = boxes;
        e
    }

    fn fixed_cell(&mut self, paths: &[&Path], i: usize, k: usize, change: Option<(&[(f64, f64)], u64)>) -> Entry {
        let nf = self.obstacles.len() + self.ghosts.len();
        let no = self.obstacles.len();
        let target = self.fixed_target(k);
        if k < no {
            let (t, p, d, dir) = closest_to_obstacle(paths[i], &self.obstacles[k]);
            return Entry::Exact(Cell {
                gap: d - target,
                approach: Approach { distance: d, t_a: t, t_b: t, p_a: p, p_b: p - dir * d },
                dir,
            });
        }
        let g = k - no;
        let old = self.fixed[i * nf + k];
        let skip = self.ghosts[g].owner.filter(|o| o.0 == i).map(|o| o.1);
        let ghosts = self.ghosts;
        let boxes = std::mem::take(&mut self.boxes);
        let gboxes = std::mem::take(&mut self.ghost_boxes);
        let e = self.cell(old, paths[i], &ghosts[g].path, skip, &boxes[i], &gboxes[g], change, target, false, 0.0);
        self.boxes = boxes;
        self.ghost_boxes = gboxes;
        e
    }

    /// Updates row and column `i` after path `i` changed inside the time
    /// `windows` (its own unwrapped times; `None`: anywhere). Exact: the
    /// result equals a fresh [`IncrementalMatrix::new`] up to pruning.
    pub fn update(&mut self, paths: &[&Path], i: usize, windows: Option<&[(f64, f64)]>) {
        self.stats.updates += 1;
        let n = self.n;
        let nf = self.obstacles.len() + self.ghosts.len();
        let change = windows.map(|ws| (ws, ws.iter().fold(0, |m, &(a, b)| m | self.blocks.mask(a, b))));
        self.boxes[i] = self.blocks.boxes(paths[i]);
        self.whole[i] = Aabb::of(paths[i]);
        self.window_box = change.and_then(|(_, mask)| {
            self.boxes[i]
                .iter()
                .enumerate()
                .filter(|(b, _)| mask & (1 << b) != 0)
                .filter_map(|(_, x)| *x)
                .reduce(|a, b| a.union(&b))
        });
        for j in 0..n {
            let e = self.agent_cell(paths, i, j, change);
            self.agents[i * n + j] = e;
            self.agents[j * n + i] = flip(e);
        }
        let no = self.obstacles.len();
        for k in 0..nf {
            if let Some((_, mask)) = change
                && k >= no
                && self.ghost_presence[k - no] & mask == 0
            {
                // The ghost is never there when the path changed.
                continue;
            }
            self.fixed[i * nf + k] = self.fixed_cell(paths, i, k, change);
        }
        self.rescan(i);
        let target = self.agent_target();
        for j in 0..n {
            if j == i {
                continue;
            }
            let g = gap(&self.agents[j * n + i], target);
            if g < self.row_best[j].0 {
                self.row_best[j] = (g, i);
            } else if self.row_best[j].1 == i && g > self.row_best[j].0 {
                self.rescan(j);
            }
        }
    }

    fn rescan(&mut self, i: usize) {
        let n = self.n;
        let nf = self.obstacles.len() + self.ghosts.len();
        let target = self.agent_target();
        let mut best = (f64::INFINITY, 0);
        for j in 0..n {
            let g = gap(&self.agents[i * n + j], target);
            if g < best.0 {
                best = (g, j);
            }
        }
        for k in 0..nf {
            let g = gap(&self.fixed[i * nf + k], self.fixed_target(k));
            if g < best.0 {
                best = (g, n + k);
            }
        }
        self.row_best[i] = best;
    }

    /// The worst entry: `(agent, other, cell)`, or `None` if every entry is
    /// pruned or never coexists. O(n).
    pub(crate) fn worst_entry(&self) -> Option<(usize, Other, Cell)> {
        let mut best: Option<(usize, f64)> = None;
        for (i, &(g, _)) in self.row_best.iter().enumerate() {
            if best.is_none_or(|(_, bg)| g < bg) {
                best = Some((i, g));
            }
        }
        let (i, g) = best?;
        if !g.is_finite() {
            return None;
        }
        let c = self.row_best[i].1;
        let nf = self.obstacles.len() + self.ghosts.len();
        let (other, entry) = if c < self.n {
            (Other::Agent(c), self.agents[i * self.n + c])
        } else {
            let k = c - self.n;
            let other =
                if k < self.obstacles.len() { Other::Obstacle(k) } else { Other::Ghost(k - self.obstacles.len()) };
            (other, self.fixed[i * nf + k])
        };
        match entry {
            Entry::Exact(cell) => Some((i, other, cell)),
            // A pruned cell is never below its target.
            _ => None,
        }
    }

    /// Smallest gap below target over the whole matrix `[m]` (negative ⇒
    /// something to resolve), `None` when nothing is near.
    pub fn min_gap(&self) -> Option<f64> {
        self.worst_entry().map(|w| w.2.gap)
    }

    /// The cell of agents `i` and `j`, oriented from `i`.
    pub fn agent_entry(&self, i: usize, j: usize) -> Entry {
        self.agents[i * self.n + j]
    }

    /// Every entry closer than its real threshold (2r, or r to obstacles;
    /// without the margin), as contacts — the same list as
    /// [`super::DistanceMatrix::contacts`].
    pub fn contacts(&self) -> Vec<Contact> {
        let (r, pi) = (self.params.radius, self.params.period);
        let n = self.n;
        let nf = self.obstacles.len() + self.ghosts.len();
        let no = self.obstacles.len();
        let contact = |agent: usize, other: Other, c: &Cell, required: f64| Contact {
            agent,
            other,
            time: c.approach.t_a.rem_euclid(pi),
            position: c.approach.p_a,
            distance: c.approach.distance,
            required,
            agent_time: c.approach.t_a,
            other_time: c.approach.t_b,
        };
        let mut out = Vec::new();
        for i in 0..n {
            for j in i..n {
                if let Entry::Exact(c) = &self.agents[i * n + j]
                    && c.approach.distance < 2.0 * r
                {
                    out.push(contact(i, Other::Agent(j), c, 2.0 * r));
                }
            }
        }
        for i in 0..n {
            for k in 0..nf {
                if let Entry::Exact(c) = &self.fixed[i * nf + k] {
                    let (other, required) =
                        if k < no { (Other::Obstacle(k), r) } else { (Other::Ghost(k - no), 2.0 * r) };
                    if c.approach.distance < required {
                        out.push(contact(i, other, c, required));
                    }
                }
            }
        }
        out
    }

    /// Every cell (agents `j ≥ i` and fixed movers) whose gap is below
    /// `limit` `[m]`, as `(agent, other, cell)`.
    pub fn near(&self, limit: f64) -> Vec<(usize, Other, Cell)> {
        let n = self.n;
        let nf = self.obstacles.len() + self.ghosts.len();
        let no = self.obstacles.len();
        let mut out = Vec::new();
        for i in 0..n {
            for j in i..n {
                if let Entry::Exact(c) = self.agents[i * n + j]
                    && c.gap < limit
                {
                    out.push((i, Other::Agent(j), c));
                }
            }
            for k in 0..nf {
                if let Entry::Exact(c) = self.fixed[i * nf + k]
                    && c.gap < limit
                {
                    let other = if k < no { Other::Obstacle(k) } else { Other::Ghost(k - no) };
                    out.push((i, other, c));
                }
            }
        }
        out
    }
}

/// Every contact between `agents` and the fixed movers (obstacles, seam
/// ghosts), from scratch, with the pruned matrix. O(n² · segments) at worst.
pub fn find_contacts(
    agents: &[Agent],
    obstacles: &[Obstacle],
    ghosts: &[Ghost],
    params: &CollisionParams,
) -> Vec<Contact> {
    let paths: Vec<&Path> = agents.iter().map(|a| &a.path).collect();
    IncrementalMatrix::new(&paths, obstacles, ghosts, params).contacts()
}
