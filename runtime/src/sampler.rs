//! Sampling many placed tiles at once: [`CrowdSampler`].
//!
//! Every tile of a world plays on one clock (seams are defined in time as in
//! space), so a tile used by many cells is evaluated once per frame in its own
//! frame and then copied out per cell with its placement, a quarter-turn
//! rotation and an offset: a few vectorisable arithmetic operations per
//! agent. A world of a million agents built from a few dozen distinct tiles
//! costs about one keyframe evaluation per distinct instance plus one copy per
//! agent.

use std::ops::Range;

use crate::pose::{Placement, Poses};
use crate::tile::{Tile, TileCursor};

/// One placed tile to sample: which tile (an index the caller chooses, the
/// same for cells sharing a tile), the tile itself and its placement.
#[derive(Debug, Clone, Copy)]
pub struct PlacedTile<'a> {
    /// Key of the tile, shared by every cell that shows it.
    pub key: usize,
    /// The tile.
    pub tile: &'a Tile,
    /// Where it sits.
    pub placement: Placement,
}

/// Samples a set of placed tiles into one [`Poses`] buffer. Keeps the
/// per-tile local poses between calls (no allocation in the steady state).
#[derive(Debug, Default, Clone)]
pub struct CrowdSampler {
    local: Vec<Option<Poses>>,
    cursors: Vec<TileCursor>,
    fresh: Vec<bool>,
}

impl CrowdSampler {
    /// A sampler with no cached tile.
    pub fn new() -> CrowdSampler {
        CrowdSampler::default()
    }

    /// Samples every placed tile at time `t` `[s]` into `out`, resized to the
    /// total number of agent instances; `ranges[c]` receives the slots of
    /// `cells[c]`. World frame.
    pub fn sample(&mut self, t: f64, cells: &[PlacedTile<'_>], out: &mut Poses, ranges: &mut Vec<Range<usize>>) {
        ranges.clear();
        let mut total = 0;
        for c in cells {
            let n = c.tile.instance_count();
            ranges.push(total..total + n);
            total += n;
            if c.key >= self.local.len() {
                self.local.resize(c.key + 1, None);
                self.cursors.resize(c.key + 1, TileCursor::default());
                self.fresh.resize(c.key + 1, false);
            }
        }
        self.fresh.iter_mut().for_each(|f| *f = false);
        out.resize(total);
        for (c, range) in cells.iter().zip(ranges.iter()) {
            let local = self.local[c.key].get_or_insert_with(Poses::default);
            if !self.fresh[c.key] {
                local.resize(c.tile.instance_count());
                c.tile.sample_with(t, &Placement::default(), &mut self.cursors[c.key], local.as_mut());
                self.fresh[c.key] = true;
            }
            c.placement.transform(c.tile.size(), local, out.slice_mut(range.clone()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{AgentKind, BakedAgent, PathKey};

    #[test]
    fn shared_tiles_sample_as_each_cell_alone() {
        let agent = |y: f64| BakedAgent {
            kind: AgentKind::Endogenous { index: 0 },
            keys: vec![
                PathKey { t: 1.0, position: [1.0, y], heading: 0.0 },
                PathKey { t: 6.0, position: [9.0, y + 2.0], heading: 0.3 },
            ],
        };
        let a = Tile::from_baked(&crate::tile::tests::patch(vec![agent(2.0), agent(7.0)]));
        let b = Tile::from_baked(&crate::tile::tests::patch(vec![agent(4.0)]));
        let cells: Vec<PlacedTile<'_>> = (0..6)
            .map(|c| PlacedTile {
                key: c % 2,
                tile: if c % 2 == 0 { &a } else { &b },
                placement: Placement { offset: [16.0 * c as f64, 5.0], rotation: (c % 4) as u8 },
            })
            .collect();
        let mut sampler = CrowdSampler::new();
        let (mut out, mut ranges) = (Poses::default(), Vec::new());
        for t in [0.5, 3.0, 5.5, 13.0] {
            sampler.sample(t, &cells, &mut out, &mut ranges);
            assert_eq!(out.len(), 3 * a.instance_count() + 3 * b.instance_count());
            for (c, r) in cells.iter().zip(&ranges) {
                let mut alone = Poses::new(c.tile.instance_count());
                c.tile.sample(t, &c.placement, alone.as_mut());
                assert_eq!(out.x[r.clone()], alone.x[..]);
                assert_eq!(out.y[r.clone()], alone.y[..]);
                assert_eq!(out.heading[r.clone()], alone.heading[..]);
                assert_eq!(out.visible[r.clone()], alone.visible[..]);
            }
        }
    }
}
