//! Routes around static obstacles for the initial paths: A* on a grid over
//! the patch shrunk by r (the `pathfinding` crate), then line-of-sight
//! shortening. Cost: building the grid is O(cells) plus, per obstacle, the
//! cells of its box grown by the clearance times its vertices; a route is
//! A* over at most 2000² cells.

use crate::geometry::{Vec2, segment_obstacle_distance};
use crate::model::{Obstacle, Patch};

/// A* router around static obstacles on a grid over the patch shrunk by r.
pub(super) struct Router<'a> {
    obstacles: &'a [Obstacle],
    clearance: f64,
    r: f64,
    h: f64,
    n: usize,
    blocked: Vec<bool>,
}

impl<'a> Router<'a> {
    /// A router keeping agent centres `r + 0.1` m from obstacles.
    pub(super) fn new(patch: &'a Patch) -> Router<'a> {
        Router::with_clearance(patch, patch.header.agent_radius + 0.1)
    }

    /// A router keeping agent centres `clearance` `[m]` from obstacles.
    pub(super) fn with_clearance(patch: &'a Patch, clearance: f64) -> Router<'a> {
        let r = patch.header.agent_radius;
        let l = patch.header.size;
        let h = 0.2_f64.min((l - 2.0 * r) / 8.0).max(1e-3);
        let n = (((l - 2.0 * r) / h).floor() as usize + 1).min(2000);
        let mut blocked = vec![false; n * n];
        // Each obstacle marks the cells of its box grown by the clearance:
        // no cell outside can be nearer than that.
        let index = |c: f64| ((c - r) / h).clamp(0.0, (n - 1) as f64);
        for o in &patch.obstacles {
            let (lo, hi) = match o {
                Obstacle::Circle { center, radius } => {
                    ([center[0] - radius, center[1] - radius], [center[0] + radius, center[1] + radius])
                }
                Obstacle::Polygon(vs) => vs
                    .iter()
                    .fold(([f64::INFINITY, f64::INFINITY], [f64::NEG_INFINITY, f64::NEG_INFINITY]), |(lo, hi), v| {
                        ([lo[0].min(v[0]), lo[1].min(v[1])], [hi[0].max(v[0]), hi[1].max(v[1])])
                    }),
            };
            if !(lo.iter().chain(&hi).all(|c| c.is_finite())) {
                continue;
            }
            let (i0, i1) = (index(lo[0] - clearance).floor() as usize, index(hi[0] + clearance).ceil() as usize);
            let (j0, j1) = (index(lo[1] - clearance).floor() as usize, index(hi[1] + clearance).ceil() as usize);
            for i in i0..=i1 {
                for j in j0..=j1 {
                    if !blocked[i * n + j] {
                        let p = Vec2::new(r + i as f64 * h, r + j as f64 * h);
                        blocked[i * n + j] = crate::geometry::obstacle_signed_distance(p, o).0 < clearance;
                    }
                }
            }
        }
        Router { obstacles: &patch.obstacles, clearance, r, h, n, blocked }
    }

    fn clear(&self, a: Vec2, b: Vec2) -> bool {
        self.obstacles.iter().all(|o| segment_obstacle_distance(a, b, o).1 >= self.clearance - 0.05)
    }

    /// Route through `waypoints` in order, leg by leg; returns the points and
    /// whether some leg had to cross an obstacle.
    pub(super) fn route_through(&self, waypoints: &[Vec2]) -> (Vec<Vec2>, bool) {
        let mut out = vec![waypoints[0]];
        let mut blocked = false;
        for w in waypoints.windows(2) {
            match self.route(w[0], w[1]) {
                Some(leg) => out.extend_from_slice(&leg[1..]),
                None => {
                    blocked = true;
                    out.push(w[1]);
                }
            }
        }
        (out, blocked)
    }

    fn cell(&self, p: Vec2) -> (usize, usize) {
        let f = |c: f64| (((c - self.r) / self.h).round().max(0.0) as usize).min(self.n - 1);
        (f(p.x), f(p.y))
    }

    fn center(&self, c: (usize, usize)) -> Vec2 {
        Vec2::new(self.r + c.0 as f64 * self.h, self.r + c.1 as f64 * self.h)
    }

    /// Shortest obstacle-free route from `a` to `b`, or `None`.
    fn route(&self, a: Vec2, b: Vec2) -> Option<Vec<Vec2>> {
        if self.obstacles.is_empty() || self.clear(a, b) {
            return Some(vec![a, b]);
        }
        let n = self.n;
        let nearest_free = |p: Vec2| -> Option<(usize, usize)> {
            let c = self.cell(p);
            if !self.blocked[c.0 * n + c.1] {
                return Some(c);
            }
            let mut best = None;
            for i in c.0.saturating_sub(10)..(c.0 + 11).min(n) {
                for j in c.1.saturating_sub(10)..(c.1 + 11).min(n) {
                    if !self.blocked[i * n + j] {
                        let d = (self.center((i, j)) - p).norm();
                        if best.is_none_or(|(_, bd)| d < bd) {
                            best = Some(((i, j), d));
                        }
                    }
                }
            }
            best.map(|(c, _)| c)
        };
        let (start, goal) = (nearest_free(a)?, nearest_free(b)?);
        let scale = 1000.0;
        let (cells, _) = pathfinding::directed::astar::astar(
            &start,
            |&(i, j)| {
                let mut v = Vec::with_capacity(8);
                for (di, dj) in [(-1i64, 0i64), (1, 0), (0, -1), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1)] {
                    let (ni, nj) = (i as i64 + di, j as i64 + dj);
                    if ni < 0 || nj < 0 || ni >= n as i64 || nj >= n as i64 {
                        continue;
                    }
                    let (ni, nj) = (ni as usize, nj as usize);
                    if self.blocked[ni * n + nj] {
                        continue;
                    }
                    let cost = if di != 0 && dj != 0 {
                        (self.h * std::f64::consts::SQRT_2 * scale) as u64
                    } else {
                        (self.h * scale) as u64
                    };
                    v.push(((ni, nj), cost));
                }
                v
            },
            |&(i, j)| {
                let d = ((i as f64 - goal.0 as f64).powi(2) + (j as f64 - goal.1 as f64).powi(2)).sqrt();
                (d * self.h * scale * 0.999) as u64
            },
            |&c| c == goal,
        )?;
        let mut raw: Vec<Vec2> = vec![a];
        raw.extend(cells.iter().map(|&c| self.center(c)));
        raw.push(b);
        // Line-of-sight shortening (string pulling).
        let mut out = vec![a];
        let mut i = 0;
        while i + 1 < raw.len() {
            let mut j = raw.len() - 1;
            while j > i + 1 && !self.clear(raw[i], raw[j]) {
                j -= 1;
            }
            out.push(raw[j]);
            i = j;
        }
        Some(out)
    }
}
