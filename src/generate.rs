//! Patterns that let people walk at human pace: boundary conditions built
//! from a density, flow directions and a walking-speed distribution, so that
//! the straight walk of every walker across a tile — and of its neighbours,
//! since exits are the neighbours' entries — takes exactly the time its own
//! speed needs (docs/design.md "Pattern generation").
//!
//! **Lanes.** Walkers cross in straight lanes perpendicular to two opposite
//! sides, as pedestrians in a street form lanes (Helbing et al., *Self-
//! organized pedestrian crowd dynamics*, Environment and Planning B 28, 2001).
//! A lane at lateral position `x` holds `m` walkers per period at times
//! `φ + jπ/m` and speed `u = L·m / (q·π)` for a whole `q`: a walker takes
//! `L/u = qπ/m` to cross, so the times where the lane leaves the tile are
//! the times where it enters — the next tile along the lane sees the same
//! walkers, and a tile whose lanes are all like this tiles with itself in
//! both directions. `(m, q)` is chosen per lane so that `u` is nearest a
//! speed drawn from the distribution (with `m ≤ 8` the lane speeds fall
//! within 8 % of any speed between 0.6 and 1.8 m/s).
//!
//! **Where lanes cross** (north–south against east–west), each lane's phase
//! `φ` is chosen among 16 so that its walkers reach the crossings as far in
//! time as possible from those of the lanes already placed; what conflicts
//! remain is the solver's to resolve (it slows walkers down or lets them
//! wait rather than detour).
//!
//! Cost: O(lanes² · walkers per lane²) to place the phases.

use crate::model::{BoundaryPoint, DOCUMENT_FORMAT, PatchDocument, Pattern, Side, SideDocument, SidesDocument};
use crate::realism::reference::Reference;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Most walkers per period in one lane.
pub const MAX_PER_LANE: usize = 8;
/// Distance kept between a lane and a corner of the patch `[m]`.
pub const CORNER_MARGIN: f64 = 1.5;
/// Slowest and fastest lane speeds `[m/s]`.
pub const SPEED_RANGE: (f64, f64) = (0.5, 2.0);

/// Where walking speeds come from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Speeds {
    /// Free walking speeds of pedestrians: a normal of mean 1.34 m/s and
    /// standard deviation 0.26 m/s (Weidmann 1993), truncated to ±2σ.
    Weidmann,
    /// The walking speeds of the real pedestrians of the shipped ETH/UCY
    /// reference (its pooled speeds between 0.5 and 2 m/s).
    Reference,
    /// One speed `[m/s]` for every walker.
    Fixed(f64),
}

impl Speeds {
    fn draw(&self, rng: &mut ChaCha8Rng) -> f64 {
        match *self {
            Speeds::Weidmann => {
                let d = crate::pace::SpeedDistribution::weidmann(crate::pace::WEIDMANN_MEAN);
                d.draw(rng.random())
            }
            Speeds::Reference => Reference::shipped_ref().walking_speed(rng.random(), SPEED_RANGE),
            Speeds::Fixed(u) => u,
        }
    }
}

/// Walking direction of a lane: towards this side.
pub type Heading = Side;

/// What to generate.
#[derive(Debug, Clone, PartialEq)]
pub struct GenerateParams {
    /// Side length L `[m]`.
    pub size: f64,
    /// Period π `[s]`.
    pub period: f64,
    /// Agent radius r `[m]`: lanes are at least `2r + 0.2` apart.
    pub agent_radius: f64,
    /// Mean number of walkers per square metre in the patch
    /// `[1/m²]` `[Limit: (0, 1]]`.
    pub density: f64,
    /// Share of the walkers heading towards each side (north, east, south,
    /// west), summing to more than 0.
    pub flows: Vec<(Heading, f64)>,
    /// Walking speeds.
    pub speeds: Speeds,
    /// Seed of the draws.
    pub seed: u64,
}

/// One lane: walkers heading towards `heading`, crossing at `along` `[m]`
/// (the x of a north/south lane, the y of an east/west one).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lane {
    /// The side the walkers head for.
    pub heading: Heading,
    /// Lateral position `[m]`, patch frame.
    pub along: f64,
    /// Walkers per period.
    pub per_period: usize,
    /// Periods' worth of `π/m` steps one crossing takes.
    pub q: usize,
    /// Time of the first walker at the entry side `[s]`, in `[0, π/m)`.
    pub phase: f64,
}

impl Lane {
    /// Walking speed `[m/s]`: `L·m / (q·π)`.
    pub fn speed(&self, size: f64, period: f64) -> f64 {
        size * self.per_period as f64 / (self.q as f64 * period)
    }

    /// Entry times `[s]` in `[0, π)`.
    pub fn times(&self, period: f64) -> Vec<f64> {
        (0..self.per_period).map(|j| (self.phase + j as f64 * period / self.per_period as f64) % period).collect()
    }
}

/// Why nothing could be generated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GenerateError {
    /// A parameter is out of its limits.
    #[error("{what} = {value} {why}")]
    Parameter {
        /// Which.
        what: &'static str,
        /// Its value.
        value: f64,
        /// The limit.
        why: String,
    },
    /// The lanes do not fit across the patch.
    #[error(
        "{lanes} lanes heading {heading} do not fit across {size} m (at most {room}); lower the density or the share of that flow"
    )]
    TooManyLanes {
        /// Heading.
        heading: &'static str,
        /// Lanes wanted.
        lanes: usize,
        /// Lanes that fit.
        room: usize,
        /// Side length `[m]`.
        size: f64,
    },
}

/// The lane (m, q) whose speed is nearest `speed`, with `m ≤ max_m`.
fn lane_shape(size: f64, period: f64, speed: f64, max_m: usize) -> (usize, usize) {
    let mut best = (1, 1, f64::INFINITY);
    for m in 1..=max_m.max(1) {
        let q = ((size * m as f64) / (period * speed)).round().max(1.0) as usize;
        let u = size * m as f64 / (q as f64 * period);
        let err = (u / speed).ln().abs();
        // Prefer more walkers per lane when as good (fewer, fuller lanes).
        if err < best.2 - 1e-9 || (err <= best.2 + 1e-9 && m > best.0) {
            best = (m, q, err);
        }
    }
    (best.0, best.1)
}

/// Lateral slots for lanes across a side `[m]`.
fn slots(size: f64, r: f64) -> Vec<f64> {
    let width = 2.0 * r + 0.2;
    let (lo, hi) = (CORNER_MARGIN, size - CORNER_MARGIN);
    let n = ((hi - lo) / width).floor() as usize + 1;
    (0..n).map(|k| lo + k as f64 * width).filter(|&x| x <= hi).collect()
}

/// Generates the lanes of a patch (see the module documentation).
///
/// # Errors
/// Parameters out of their limits, or more lanes than fit across a side.
pub fn lanes(p: &GenerateParams) -> Result<Vec<Lane>, GenerateError> {
    let bad = |what, value, why: &str| Err(GenerateError::Parameter { what, value, why: why.into() });
    if !(p.density.is_finite() && p.density > 0.0 && p.density <= 1.0) {
        return bad("density", p.density, "must be in (0, 1] walkers/m²");
    }
    let total_share: f64 = p.flows.iter().map(|f| f.1.max(0.0)).sum();
    if !(total_share.is_finite() && total_share > 0.0) {
        return bad("flow shares", total_share, "must sum to more than 0");
    }
    let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
    let (l, pi) = (p.size, p.period);
    // Walkers per period: density·L² walkers present, each for L/u.
    let mean_speed = (0..256).map(|_| p.speeds.draw(&mut rng)).sum::<f64>() / 256.0;
    let per_period = p.density * l * pi * mean_speed;
    let mut free: [Vec<f64>; 2] = [slots(l, p.agent_radius), slots(l, p.agent_radius)];
    let mut out = Vec::new();
    for &(heading, share) in &p.flows {
        let mut left = (per_period * share.max(0.0) / total_share).round() as usize;
        let axis = heading.index() % 2; // 0: north/south lanes (along x), 1: east/west (along y)
        let mut count = 0;
        while left > 0 {
            let u = p.speeds.draw(&mut rng).clamp(SPEED_RANGE.0, SPEED_RANGE.1);
            let (m, q) = lane_shape(l, pi, u, left.min(MAX_PER_LANE));
            if free[axis].is_empty() {
                let room = slots(l, p.agent_radius).len();
                return Err(GenerateError::TooManyLanes { heading: heading.name(), lanes: count + 1, room, size: l });
            }
            let k = rng.random_range(0..free[axis].len());
            let along = free[axis].remove(k);
            out.push(Lane { heading, along, per_period: m, q, phase: 0.0 });
            left = left.saturating_sub(m);
            count += 1;
        }
    }
    place_phases(&mut out, l, pi, &mut rng);
    Ok(out)
}

/// Where and when walker `j` of `lane` passes the cross line at `c` `[m]`
/// (the other axis's coordinate): its time `[s]` in `[0, π)`.
fn passing_times(lane: &Lane, c: f64, l: f64, pi: f64) -> Vec<f64> {
    let u = lane.speed(l, pi);
    // Distance from the entry side to the crossing.
    let d = match lane.heading {
        Side::North | Side::East => c,
        Side::South | Side::West => l - c,
    };
    lane.times(pi).into_iter().map(|t| (t + d / u).rem_euclid(pi)).collect()
}

/// Chooses each lane's phase among 16 so that its walkers pass each
/// crossing with the other axis's lanes as far in time as possible from
/// theirs (the smallest periodic time gap, maximised).
fn place_phases(lanes: &mut [Lane], l: f64, pi: f64, rng: &mut ChaCha8Rng) {
    for i in 0..lanes.len() {
        let step = pi / lanes[i].per_period as f64;
        let offset: f64 = rng.random_range(0.0..step / 16.0);
        let mut best = (f64::NEG_INFINITY, 0.0);
        for k in 0..16 {
            let phase = offset + step * k as f64 / 16.0;
            let trial = Lane { phase, ..lanes[i] };
            let mut gap = f64::INFINITY;
            for other in &lanes[..i] {
                if other.heading.index() % 2 == trial.heading.index() % 2 {
                    continue;
                }
                for a in passing_times(&trial, other.along, l, pi) {
                    for b in passing_times(other, trial.along, l, pi) {
                        let dt = (a - b).rem_euclid(pi);
                        gap = gap.min(dt.min(pi - dt));
                    }
                }
            }
            if gap > best.0 + 1e-9 {
                best = (gap, phase);
            }
        }
        lanes[i].phase = best.1;
    }
}

/// The four patterns (side frame) of `lanes`: each walker's entry on the
/// side it leaves behind and its exit on the side it heads for, `L/u`
/// later, both with its velocity.
pub fn patterns(lanes: &[Lane], l: f64, pi: f64) -> [Pattern; 4] {
    let mut out: [Pattern; 4] = std::array::from_fn(|_| Pattern::empty(l, pi));
    for lane in lanes {
        let u = lane.speed(l, pi);
        let to = lane.heading;
        let from = to.opposite();
        // Arc positions: a side's s runs counter-clockwise.
        let s_on = |side: Side| match side {
            Side::South | Side::East => lane.along,
            Side::North | Side::West => l - lane.along,
        };
        let crossing = l / u;
        for t in lane.times(pi) {
            // Side frame: y inward. An entry walks inward, an exit outward.
            out[from.index()].entries.push(BoundaryPoint { s: s_on(from), t, velocity: Some([0.0, u]) });
            let tx = (t + crossing).rem_euclid(pi);
            out[to.index()].exits.push(BoundaryPoint { s: s_on(to), t: tx, velocity: Some([0.0, -u]) });
        }
    }
    for p in &mut out {
        let key = |b: &BoundaryPoint| (b.t, b.s);
        p.entries.sort_by(|a, b| key(a).partial_cmp(&key(b)).unwrap_or(std::cmp::Ordering::Equal));
        p.exits.sort_by(|a, b| key(a).partial_cmp(&key(b)).unwrap_or(std::cmp::Ordering::Equal));
    }
    out
}

/// A patch document of the generated lanes: `template`'s obstacles,
/// endogenous agents and parameters (or defaults) with the four sides
/// inline (velocities in the patch frame).
pub fn document(lanes: &[Lane], p: &GenerateParams, template: Option<&PatchDocument>) -> PatchDocument {
    let mut doc = template.cloned().unwrap_or_else(|| PatchDocument::new(p.size, p.period));
    doc.format = DOCUMENT_FORMAT;
    doc.size = p.size;
    doc.period = p.period;
    doc.seed = Some(p.seed);
    let pats = patterns(lanes, p.size, p.period);
    let mut sides = SidesDocument::default();
    for side in Side::ALL {
        let pat = pats[side.index()].rotated(side.index() as i32);
        if pat.entries.is_empty() && pat.exits.is_empty() {
            continue;
        }
        *sides.slot_mut(side) =
            Some(SideDocument { entries: Some(pat.entries), exits: Some(pat.exits), ..SideDocument::default() });
    }
    doc.sides = sides;
    doc
}

/// A balanced, mirror-symmetric pattern for a pattern library: `n` walkers
/// per period cross the side each way in pairs of lanes at `x` (in) and
/// `L − x` (out) with the same times and speed, so that the pattern is its
/// own mirror and any tile holding it on two opposite sides passes its
/// walkers straight through at their speeds (see the module documentation).
///
/// # Errors
/// As [`lanes`].
pub fn library_pattern(
    n: usize,
    size: f64,
    period: f64,
    r: f64,
    speeds: Speeds,
    seed: u64,
) -> Result<Pattern, GenerateError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut free: Vec<f64> = slots(size, r).into_iter().filter(|&x| x < size / 2.0 - r - 0.1).collect();
    let mut pattern = Pattern::empty(size, period);
    let mut left = n;
    while left > 0 {
        let u = speeds.draw(&mut rng).clamp(SPEED_RANGE.0, SPEED_RANGE.1);
        let (m, q) = lane_shape(size, period, u, left.min(MAX_PER_LANE));
        if free.is_empty() {
            return Err(GenerateError::TooManyLanes {
                heading: "both ways",
                lanes: n.div_ceil(MAX_PER_LANE),
                room: slots(size, r).len() / 2,
                size,
            });
        }
        let x = free.remove(rng.random_range(0..free.len()));
        let lane =
            Lane { heading: Side::North, along: x, per_period: m, q, phase: rng.random_range(0.0..period / m as f64) };
        let u = lane.speed(size, period);
        for t in lane.times(period) {
            pattern.entries.push(BoundaryPoint { s: x, t, velocity: Some([0.0, u]) });
            pattern.exits.push(BoundaryPoint { s: size - x, t, velocity: Some([0.0, -u]) });
        }
        left = left.saturating_sub(m);
    }
    Ok(pattern)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Direction;
    use std::path::Path;

    fn params(density: f64, seed: u64) -> GenerateParams {
        GenerateParams {
            size: 16.0,
            period: 10.0,
            agent_radius: 0.3,
            density,
            flows: vec![(Side::North, 0.3), (Side::South, 0.3), (Side::East, 0.2), (Side::West, 0.2)],
            speeds: Speeds::Weidmann,
            seed,
        }
    }

    #[test]
    fn lane_speeds_come_close_to_any_human_speed() {
        for k in 0..=30 {
            let u = 0.6 + 1.2 * k as f64 / 30.0;
            let (m, q) = lane_shape(16.0, 10.0, u, MAX_PER_LANE);
            let got = 16.0 * m as f64 / (q as f64 * 10.0);
            assert!((got / u).ln().abs() < 0.08, "{u} → {got} (m = {m}, q = {q})");
        }
    }

    #[test]
    fn every_walker_crosses_at_its_speed_and_the_patch_tiles_with_itself() {
        for seed in 0..6 {
            let p = params(0.08, seed);
            let lanes = lanes(&p).unwrap();
            let pats = patterns(&lanes, p.size, p.period);
            // Balanced per axis and in all.
            let n: usize = pats.iter().map(|q| q.entries.len()).sum();
            let x: usize = pats.iter().map(|q| q.exits.len()).sum();
            assert_eq!(n, x);
            // Tiling with itself: each side is the mirror of its opposite.
            for side in [Side::South, Side::West] {
                let a = &pats[side.index()];
                let b = pats[side.opposite().index()].mirror();
                let key = |v: &[BoundaryPoint]| {
                    let mut k: Vec<(i64, i64, i64)> = v
                        .iter()
                        .map(|p| {
                            (
                                (p.s * 1e6).round() as i64,
                                (p.t * 1e6).round() as i64,
                                (p.velocity.unwrap()[1] * 1e6).round() as i64,
                            )
                        })
                        .collect();
                    k.sort();
                    k
                };
                assert_eq!(key(&a.entries), key(&b.entries), "seed {seed} side {side:?}");
                assert_eq!(key(&a.exits), key(&b.exits), "seed {seed} side {side:?}");
            }
            // Resolved, the matched straight walks are at the lanes' speeds.
            let doc = document(&lanes, &p, None);
            let patch = doc.resolve(None, Path::new(".")).unwrap_or_else(|e| panic!("seed {seed}: {e:?}"));
            let pairs = crate::matching::match_patch(&patch, crate::model::MatchingMode::Stable);
            let (agents, _) = crate::initial_paths::initial_paths(&patch, &pairs);
            let floor = crate::realism::floor_speeds(&agents);
            let speeds: Vec<f64> = agents.iter().map(|a| a.preferred_speed).collect();
            let close = floor.iter().zip(&speeds).filter(|(f, u)| (*f / *u - 1.0).abs() < 0.05).count();
            assert!(close * 10 >= floor.len() * 8, "seed {seed}: {close} of {} walk at their own speed", floor.len());
            assert!(floor.iter().all(|&f| (0.45..2.1).contains(&f)), "{floor:?}");
        }
    }

    #[test]
    fn library_patterns_are_their_own_mirror() {
        let p = library_pattern(5, 16.0, 10.0, 0.3, Speeds::Weidmann, 3).unwrap();
        assert_eq!(p.entries.len(), 5);
        assert!(p.is_balanced());
        let m = p.mirror();
        for (a, b) in p.entries.iter().zip(&m.entries) {
            assert!((a.s - b.s).abs() < 1e-9 && a.t == b.t && a.velocity == b.velocity);
        }
        assert!(crate::validate::validate_pattern(&p).is_empty());
        let _ = Direction::Entry;
    }

    #[test]
    fn bad_parameters_are_named() {
        let mut p = params(0.0, 1);
        assert!(lanes(&p).unwrap_err().to_string().contains("density = 0"));
        p.density = 0.9;
        p.flows = vec![(Side::North, 1.0)];
        let e = lanes(&p).unwrap_err().to_string();
        assert!(e.contains("do not fit"), "{e}");
    }
}
