//! Wang tiles: fill a world of any size aperiodically at run time from one
//! baked set, with no further baking.
//!
//! A set of *K colours per edge orientation*: horizontal edges (between a
//! cell and its northern neighbour) carry one of K patterns `H[c]`, vertical
//! edges (between a cell and its eastern neighbour) one of K patterns `V[c]`.
//! The tile of colours `[n, e, s, w]` holds `H[n]` on its north side, `V[e]`
//! on its east side and, following the mirror rule, `mirror(H[s])` on its
//! south side and `mirror(V[w])` on its west side. Two cells that share an
//! edge therefore agree whatever the colour, and the complete set (all K⁴
//! combinations, as `crowdpatch compose --wang K` bakes it) tiles any grid.
//!
//! The fill is *stateless*: the colour of every edge is a hash of the seed
//! and the edge's coordinates ([`WangSet::edge_colour`]), so any cell of an
//! unbounded world is known on its own — what a streamer needs — and the
//! same seed always gives the same world. (A scan-line fill from a sequential
//! random generator would need every cell south-west of the one asked for.)
//! The hash is SplitMix64's finaliser (Steele, Lea and Flood, *Fast
//! splittable pseudorandom number generators*, OOPSLA 2014), a bijective
//! mixer whose output bits pass BigCrush; taking it mod K is uniform to
//! within K/2⁶⁴.

use crate::world::{Cell, World};

/// A complete Wang-tile set: for every colour combination `[n, e, s, w]`
/// (each `< k`), the tile to place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WangSet {
    k: usize,
    /// Tile index per combination, at `((n·k + e)·k + s)·k + w`.
    tiles: Vec<Option<usize>>,
}

/// SplitMix64's output function: a bijective 64-bit mixer.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl WangSet {
    /// An empty set of `k` colours per orientation (`1 ≤ k ≤ 16`).
    ///
    /// # Panics
    /// If `k` is 0 or above 16.
    pub fn new(k: usize) -> WangSet {
        assert!((1..=16).contains(&k), "k = {k} must be in 1..=16");
        WangSet { k, tiles: vec![None; k.pow(4)] }
    }

    /// Colours per edge orientation.
    pub fn k(&self) -> usize {
        self.k
    }

    fn code(&self, colors: [usize; 4]) -> Option<usize> {
        let k = self.k;
        colors.iter().all(|&c| c < k).then(|| ((colors[0] * k + colors[1]) * k + colors[2]) * k + colors[3])
    }

    /// Sets the tile of colours `[north, east, south, west]`.
    ///
    /// # Panics
    /// If a colour is `≥ k`.
    pub fn insert(&mut self, colors: [usize; 4], tile: usize) {
        let code = self.code(colors).unwrap_or_else(|| panic!("colours {colors:?} must be < k = {}", self.k));
        self.tiles[code] = Some(tile);
    }

    /// The tile of colours `[north, east, south, west]`, if in the set.
    pub fn get(&self, colors: [usize; 4]) -> Option<usize> {
        self.code(colors).and_then(|c| self.tiles[c])
    }

    /// The colour combinations the set lacks (empty for a complete set).
    pub fn missing(&self) -> Vec<[usize; 4]> {
        let k = self.k;
        (0..self.tiles.len())
            .filter(|&c| self.tiles[c].is_none())
            .map(|c| [c / (k * k * k), (c / (k * k)) % k, (c / k) % k, c % k])
            .collect()
    }

    /// Colour of an edge: `horizontal` for the edge north of cell `(i, j)`,
    /// else the edge east of it. A pure function of `(seed, edge)`.
    pub fn edge_colour(&self, seed: u64, horizontal: bool, i: i64, j: i64) -> usize {
        let h = mix(
            seed ^ mix((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ mix(j as u64 ^ u64::from(horizontal) << 63))
        );
        (h % self.k as u64) as usize
    }

    /// The colours `[north, east, south, west]` of cell `(i, j)` in the world
    /// of seed `seed`.
    pub fn colors_at(&self, seed: u64, i: i64, j: i64) -> [usize; 4] {
        [
            self.edge_colour(seed, true, i, j),
            self.edge_colour(seed, false, i, j),
            self.edge_colour(seed, true, i, j - 1),
            self.edge_colour(seed, false, i - 1, j),
        ]
    }

    /// The set of a world file's `wang` entry.
    ///
    /// # Panics
    /// If the entry is out of its limits (as [`WorldFile::from_json`](crate::WorldFile::from_json) checks).
    #[cfg(feature = "serde")]
    pub fn from_file(file: &crate::world::WangFile) -> WangSet {
        let mut set = WangSet::new(file.k);
        for t in &file.tiles {
            set.insert(t.colors, t.tile);
        }
        set
    }

    /// The cell at `(i, j)` (any integers) of the unbounded world of seed
    /// `seed`; `None` if the set lacks that combination.
    pub fn cell(&self, seed: u64, i: i64, j: i64) -> Option<Cell> {
        self.get(self.colors_at(seed, i, j)).map(|tile| Cell { tile, rotation: 0 })
    }

    /// A finite `columns × rows` window of the world of seed `seed`, its
    /// south-west cell at `(i0, j0)`. The border sides of the window are open
    /// (they continue into the unbounded world), so [`World::check`] reports
    /// them as open sides.
    pub fn fill(&self, seed: u64, origin: [i64; 2], columns: usize, rows: usize, size: f64, period: f64) -> World {
        let mut world = World::new(columns, rows, size, period);
        for j in 0..rows {
            for i in 0..columns {
                world.set(i, j, self.cell(seed, origin[0] + i as i64, origin[1] + j as i64));
            }
        }
        world
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_share_edge_colours_and_the_fill_is_aperiodic() {
        let k = 2;
        let set = WangSet::new(k);
        let seed = 42;
        for i in -20..20 {
            for j in -20..20 {
                let a = set.colors_at(seed, i, j);
                assert_eq!(a[0], set.colors_at(seed, i, j + 1)[2], "north of ({i}, {j})");
                assert_eq!(a[1], set.colors_at(seed, i + 1, j)[3], "east of ({i}, {j})");
            }
        }
        // No row repeats with a short period.
        let row: Vec<[usize; 4]> = (0..256).map(|i| set.colors_at(seed, i, 0)).collect();
        for p in 1..64 {
            assert!((0..256 - p).any(|i| row[i] != row[i + p]), "period {p}");
        }
        // Every combination appears, about equally often.
        let mut counts = vec![0usize; k.pow(4)];
        for i in 0..100 {
            for j in 0..100 {
                let c = set.colors_at(seed, i, j);
                counts[((c[0] * k + c[1]) * k + c[2]) * k + c[3]] += 1;
            }
        }
        assert!(counts.iter().all(|&c| (400..850).contains(&c)), "{counts:?}");
        // Another seed, another world.
        assert!((0..10).any(|i| set.colors_at(1, i, 0) != set.colors_at(seed, i, 0)));
    }

    #[test]
    fn missing_lists_absent_combinations() {
        let mut set = WangSet::new(2);
        assert_eq!(set.missing().len(), 16);
        set.insert([1, 0, 1, 1], 7);
        assert_eq!(set.get([1, 0, 1, 1]), Some(7));
        assert_eq!(set.missing().len(), 15);
        assert!(!set.missing().contains(&[1, 0, 1, 1]));
    }
}
