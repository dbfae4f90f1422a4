//! Broad phase of pair checks: which axis-aligned boxes come within a given
//! distance of each other, through a uniform hash grid instead of all pairs.
//! Validation uses it for every pair check of a document (boundary points
//! too close to be separable, obstacles covering a crossing, waypoints near
//! obstacles), so that its cost follows the pairs that are actually close,
//! not the square of the number of elements.
//!
//! A box is `[xmin, ymin, xmax, ymax]` `[m]`. Two boxes are *close* when
//! their gap is at most `reach` along both axes (so every pair of points,
//! one in each, closer than `reach` is found).
//!
//! Cost: O(b + c) time and O(b + cells) memory for b boxes and c candidate
//! pairs (pairs sharing a grid cell), cells being of the boxes' median size
//! but at least `reach`; a box spanning more than [`MAX_CELLS_PER_BOX`]
//! cells is compared with every other box instead (O(b) each).

use std::collections::HashMap;

/// Largest number of grid cells one box is entered in; larger boxes are
/// compared with every box.
pub const MAX_CELLS_PER_BOX: usize = 64;

/// A box `[xmin, ymin, xmax, ymax]` `[m]`.
pub type Aabb = [f64; 4];

/// Whether `a` and `b` are within `reach` of each other along both axes.
pub fn close(a: &Aabb, b: &Aabb, reach: f64) -> bool {
    let gap_x = (a[0] - b[2]).max(b[0] - a[2]);
    let gap_y = (a[1] - b[3]).max(b[1] - a[3]);
    gap_x <= reach && gap_y <= reach
}

/// A uniform grid holding boxes by the cells they cover.
struct Grid {
    cell: f64,
    cells: HashMap<(i64, i64), Vec<u32>>,
    /// Boxes covering too many cells (or not finite): checked against all.
    big: Vec<u32>,
}

impl Grid {
    fn new(boxes: &[Aabb], reach: f64) -> Grid {
        // Cells of the median box size (a few huge boxes do not coarsen the
        // grid: they go to the big list), at least `reach`.
        let mut extents: Vec<f64> =
            boxes.iter().filter(|b| b.iter().all(|c| c.is_finite())).map(|b| (b[2] - b[0]).max(b[3] - b[1])).collect();
        extents.sort_by(f64::total_cmp);
        let median = extents.get(extents.len() / 2).copied().unwrap_or(1.0);
        let cell = median.max(reach).max(1e-6);
        let mut grid = Grid { cell, cells: HashMap::new(), big: Vec::new() };
        for (k, b) in boxes.iter().enumerate() {
            match grid.range(b, 0.0) {
                Some((i0, j0, i1, j1)) => {
                    for i in i0..=i1 {
                        for j in j0..=j1 {
                            grid.cells.entry((i, j)).or_default().push(k as u32);
                        }
                    }
                }
                None => grid.big.push(k as u32),
            }
        }
        grid
    }

    /// The cells covered by `b` grown by `grow`, or `None` when they are more
    /// than [`MAX_CELLS_PER_BOX`] (or the box is not finite).
    fn range(&self, b: &Aabb, grow: f64) -> Option<(i64, i64, i64, i64)> {
        if !b.iter().all(|c| c.is_finite()) {
            return None;
        }
        let f = |v: f64| (v / self.cell).floor();
        let (i0, j0, i1, j1) = (f(b[0] - grow), f(b[1] - grow), f(b[2] + grow), f(b[3] + grow));
        let count = (i1 - i0 + 1.0) * (j1 - j0 + 1.0);
        if !(count.is_finite() && count <= MAX_CELLS_PER_BOX as f64) {
            return None;
        }
        Some((i0 as i64, j0 as i64, i1 as i64, j1 as i64))
    }

    /// Indices of boxes sharing a cell with `b` grown by `reach` (and every
    /// big box), each once, ascending.
    fn near(&self, b: &Aabb, reach: f64, count: usize, stamp: &mut [usize], mark: usize, out: &mut Vec<u32>) {
        out.clear();
        match self.range(b, reach) {
            Some((i0, j0, i1, j1)) => {
                for i in i0..=i1 {
                    for j in j0..=j1 {
                        if let Some(list) = self.cells.get(&(i, j)) {
                            for &k in list {
                                if stamp[k as usize] != mark {
                                    stamp[k as usize] = mark;
                                    out.push(k);
                                }
                            }
                        }
                    }
                }
                for &k in &self.big {
                    if stamp[k as usize] != mark {
                        stamp[k as usize] = mark;
                        out.push(k);
                    }
                }
            }
            // A big query box meets everything.
            None => out.extend(0..count as u32),
        }
        out.sort_unstable();
    }
}

/// Calls `f(i, j)` for every pair `i < j` of `boxes` that are [`close`]
/// within `reach` `[m]`, each pair once, in increasing `(i, j)` order (the
/// order of a loop over all pairs). See the [module](self) for the cost.
///
/// # Example
/// ```
/// use crowdpatch::broadphase::for_each_close_pair;
/// let boxes = [[0.0, 0.0, 1.0, 1.0], [1.5, 0.0, 2.0, 1.0], [10.0, 10.0, 11.0, 11.0]];
/// let mut pairs = vec![];
/// for_each_close_pair(&boxes, 0.6, |i, j| pairs.push((i, j)));
/// assert_eq!(pairs, [(0, 1)]);
/// ```
pub fn for_each_close_pair(boxes: &[Aabb], reach: f64, mut f: impl FnMut(usize, usize)) {
    let grid = Grid::new(boxes, reach);
    let mut stamp = vec![usize::MAX; boxes.len()];
    let mut near = Vec::new();
    for (i, b) in boxes.iter().enumerate() {
        grid.near(b, reach, boxes.len(), &mut stamp, i, &mut near);
        for &j in &near {
            let j = j as usize;
            if j > i && close(b, &boxes[j], reach) {
                f(i, j);
            }
        }
    }
}

/// Calls `f(i, j)` for every box `i` of `a` and `j` of `b` that are
/// [`close`] within `reach` `[m]`, in increasing `(i, j)` order. Cost O(|a| +
/// |b| + candidates), as [`for_each_close_pair`].
pub fn for_each_close_pair_between(a: &[Aabb], b: &[Aabb], reach: f64, mut f: impl FnMut(usize, usize)) {
    let grid = Grid::new(b, reach);
    let mut stamp = vec![usize::MAX; b.len()];
    let mut near = Vec::new();
    for (i, bi) in a.iter().enumerate() {
        grid.near(bi, reach, b.len(), &mut stamp, i, &mut near);
        for &j in &near {
            if close(bi, &b[j as usize], reach) {
                f(i, j as usize);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn random_boxes(n: usize, spread: f64, size: f64, rng: &mut ChaCha8Rng) -> Vec<Aabb> {
        (0..n)
            .map(|_| {
                let mut draw = |hi: f64| if hi > 0.0 { rng.random_range(0.0..hi) } else { 0.0 };
                let (x, y) = (draw(spread), draw(spread));
                let (w, h) = (draw(size), draw(size));
                [x, y, x + w, y + h]
            })
            .collect()
    }

    /// The grid finds exactly the pairs a loop over all pairs finds, in the
    /// same order, for sparse, dense, identical and huge boxes.
    #[test]
    fn finds_exactly_the_close_pairs_of_a_full_loop() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for (n, spread, size, reach) in
            [(200, 50.0, 1.0, 0.6), (300, 5.0, 0.5, 0.6), (100, 1000.0, 400.0, 2.0), (50, 0.0, 0.0, 0.6)]
        {
            let mut boxes = random_boxes(n, spread, size, &mut rng);
            boxes.push([f64::NAN, 0.0, 1.0, 1.0]);
            boxes.push([-1e300, -1e300, 1e300, 1e300]);
            let mut want = vec![];
            for i in 0..boxes.len() {
                for j in i + 1..boxes.len() {
                    if close(&boxes[i], &boxes[j], reach) {
                        want.push((i, j));
                    }
                }
            }
            let mut got = vec![];
            for_each_close_pair(&boxes, reach, |i, j| got.push((i, j)));
            assert_eq!(got, want, "n = {n}, spread {spread}");

            let other = random_boxes(n / 2, spread, size, &mut rng);
            let mut want = vec![];
            for (i, a) in boxes.iter().enumerate() {
                for (j, b) in other.iter().enumerate() {
                    if close(a, b, reach) {
                        want.push((i, j));
                    }
                }
            }
            let mut got = vec![];
            for_each_close_pair_between(&boxes, &other, reach, |i, j| got.push((i, j)));
            assert_eq!(got, want, "between, n = {n}, spread {spread}");
        }
    }
}
