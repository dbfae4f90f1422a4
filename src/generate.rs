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
//! speed drawn from the distribution (with `m ≤ 5` the lane speeds fall
//! within 10 % of any speed between 0.6 and 1.7 m/s).
//!
//! **Corners.** A flow that turns a corner — heading north-east, say — is a
//! *staircase* across the tiles, made in one tile of two parallel 45° legs
//! (a [`Course::Corner`] lane at `a`): walkers entering the west side at
//! y = a leave the north side at x = L − a, and walkers entering the south
//! side at x = L − a leave the east side at y = a. The legs lie on
//! y = x + a and y = x − (L − a), L/√2 apart, and are √2(L − a) and √2·a
//! long, √2·L together. A walker of the first leg leaves north at
//! t + √2(L − a)/u, which is where and when the tile above sees it enter its
//! south side (the mirror rule), and leaves that tile's east side at
//! t + √2·L/u. With m walkers per period at `φ + jπ/m` on the first leg,
//! the second leg's walkers entering `√2(L − a)/u` later, the exits are the
//! entries shifted by a whole number of `π/m` exactly when `√2·L/u = qπ/m`:
//! `u = √2·L·m / (q·π)`, the straight lanes' `(m, q)` search with the
//! crossing distance √2·L instead of L. Such a tile tiles with itself: its
//! north exits are its south entries mirrored, its east exits its west
//! entries. The other three headings are this one turned by quarter turns.
//! The legs' points keep the corner margin and `2r + 0.2` from every other
//! lane's points on a side, and `2r + 0.2` from parallel legs.
//!
//! **Where lanes cross** (north–south against east–west, and corner legs
//! against both and each other), each lane's phase `φ` is chosen among 16
//! so that its walkers reach the crossings as far in time as possible from
//! those of the lanes already placed; what conflicts remain is the
//! solver's to resolve (it slows walkers down or lets them wait rather than
//! detour).
//!
//! Cost: O(lanes² · walkers per lane²) to place the phases.

use crate::geometry::Vec2;
use crate::model::{BoundaryPoint, DOCUMENT_FORMAT, PatchDocument, Pattern, Side, SideDocument, SidesDocument};
use crate::pedestrians::reference::Reference;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Most walkers per period in one lane.
pub const MAX_PER_LANE: usize = 5;
/// Distance kept between a lane and a corner of the patch `[m]`.
pub const CORNER_MARGIN: f64 = 1.5;
/// Slowest and fastest walking speeds drawn `[m/s]`.
pub const SPEED_RANGE: (f64, f64) = (0.5, 2.0);
/// Fastest lane `[m/s]`: a walk faster than [`crate::pace::HURRY_SPEED`]
/// is given an extra period by the matching, so a lane faster than that
/// would not be walked as generated.
pub const FASTEST_LANE: f64 = crate::pace::HURRY_SPEED;

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

/// Heading of a flow that turns a corner (see the module documentation):
/// walkers cross one tile from a side to an adjacent one, and the next
/// tile from the other side to the other adjacent one, so that across
/// the tiling they head diagonally.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Diagonal {
    /// West → north and south → east.
    NorthEast,
    /// South → west and east → north.
    NorthWest,
    /// East → south and north → west.
    SouthWest,
    /// North → east and west → south.
    SouthEast,
}

impl Diagonal {
    /// The four, each the one before turned a quarter turn counter-clockwise.
    pub const ALL: [Diagonal; 4] = [Diagonal::NorthEast, Diagonal::NorthWest, Diagonal::SouthWest, Diagonal::SouthEast];

    /// Quarter turns counter-clockwise from north-east: 0 to 3.
    pub fn quarter_turns(self) -> i32 {
        match self {
            Diagonal::NorthEast => 0,
            Diagonal::NorthWest => 1,
            Diagonal::SouthWest => 2,
            Diagonal::SouthEast => 3,
        }
    }

    /// Lower-case name, as on the command line: `northeast`, `northwest`,
    /// `southwest`, `southeast`.
    pub fn name(self) -> &'static str {
        match self {
            Diagonal::NorthEast => "northeast",
            Diagonal::NorthWest => "northwest",
            Diagonal::SouthWest => "southwest",
            Diagonal::SouthEast => "southeast",
        }
    }

    /// The heading of a [`Diagonal::name`], or `None`.
    pub fn from_name(name: &str) -> Option<Diagonal> {
        Diagonal::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The two legs' (entry side, exit side) in a tile: for north-east,
    /// (west, north) and (south, east).
    pub fn legs(self) -> [(Side, Side); 2] {
        let k = self.quarter_turns();
        [(Side::West.rotated(k), Side::North.rotated(k)), (Side::South.rotated(k), Side::East.rotated(k))]
    }
}

impl std::fmt::Display for Diagonal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a lane's walkers go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Course {
    /// Straight across, towards this side (entering on the opposite one).
    Straight(Heading),
    /// Round a corner, heading this way (two legs per tile).
    Corner(Diagonal),
}

impl Course {
    /// Name: the side's or the diagonal's.
    pub fn name(self) -> &'static str {
        match self {
            Course::Straight(side) => side.name(),
            Course::Corner(d) => d.name(),
        }
    }

    /// Distance `[m]` a walker covers between two passes of the same
    /// lane position in a tiling of side `size` `[m]`: L straight, √2·L
    /// round a corner (the two legs together).
    pub fn crossing(self, size: f64) -> f64 {
        match self {
            Course::Straight(_) => size,
            Course::Corner(_) => std::f64::consts::SQRT_2 * size,
        }
    }
}

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
    /// west), summing with `corners` to more than 0.
    pub flows: Vec<(Heading, f64)>,
    /// Share of the walkers turning a corner, per diagonal heading, on the
    /// same scale as `flows` (`[Limit: ≥ 0]`; empty: none). A share is of
    /// the people present: a corner walker spends √2·L/u in two tiles, so
    /// a share makes 1/√2 as many corner lane walkers per period as
    /// the same share of straight walkers. Placed after the straight lanes,
    /// so an empty list generates exactly what it did before corners.
    pub corners: Vec<(Diagonal, f64)>,
    /// Walking speeds.
    pub speeds: Speeds,
    /// Seed of the draws.
    pub seed: u64,
    /// The patch's static obstacles: no lane runs through one (nor within
    /// r + [`LANE_CLEARANCE`] of it); the slots they block are left out.
    pub obstacles: Vec<crate::model::Obstacle>,
    /// Share of the straight lanes' walkers who walk in groups `[0, 1)`
    /// (0: everyone alone, as before groups existed): groups of two and
    /// three abreast in neighbouring lanes, sizes drawn as in the reference
    /// ([`walking_group_reference`]).
    pub walking_groups: f64,
}

/// The generator's default share of walkers in walking groups: the
/// reference's ([`walking_group_reference`]) to two decimals (0.54).
pub fn walking_group_share() -> f64 {
    (walking_group_reference().0 * 100.0).round() / 100.0
}

/// The reference for walking groups, pooled over the ETH/UCY scenes of
/// `data/groups.json`: the share of walkers in groups and, among the pairs
/// and triads, the share of triads (larger groups, 7 % of all, are left
/// out: the generator makes pairs and triads). Pooled: 54 % in groups,
/// 15 % triads. O(scenes).
pub fn walking_group_reference() -> (f64, f64) {
    let scenes = &crate::pedestrians::groups::GroupReference::shipped_ref().scenes;
    let walkers: usize = scenes.iter().map(|s| s.stats.walkers).sum();
    let in_groups: usize = scenes.iter().map(|s| s.stats.walkers_in_groups).sum();
    let of = |n: usize| scenes.iter().map(|s| s.stats.sizes.get(&n).copied().unwrap_or(0)).sum::<usize>() as f64;
    (in_groups as f64 / walkers.max(1) as f64, of(3) / (of(2) + of(3)).max(1.0))
}

/// Clearance `[m]` beyond r that a lane keeps from an obstacle.
pub const LANE_CLEARANCE: f64 = 0.2;

/// Whether the segment from `a` to `b` `[m]` (patch frame) keeps
/// r + [`LANE_CLEARANCE`] from every obstacle; sampled every 5 cm.
/// O(|ab| / 5 cm · obstacles · vertices).
fn segment_clear(a: Vec2, b: Vec2, r: f64, obstacles: &[crate::model::Obstacle]) -> bool {
    let n = ((b - a).norm() / 0.05).ceil() as usize;
    (0..=n).all(|k| {
        let p = a + (b - a) * k as f64 / n as f64;
        obstacles.iter().all(|o| crate::geometry::obstacle_signed_distance(p, o).0 >= r + LANE_CLEARANCE)
    })
}

/// Whether a straight lane across the patch at `along` `[m]` on `axis` (0:
/// a north/south lane at x = along, 1: an east/west lane at y = along)
/// keeps r + [`LANE_CLEARANCE`] from every obstacle ([`segment_clear`]).
fn lane_clear(axis: usize, along: f64, l: f64, r: f64, obstacles: &[crate::model::Obstacle]) -> bool {
    let (a, b) = if axis == 0 {
        (Vec2::new(along, 0.0), Vec2::new(along, l))
    } else {
        (Vec2::new(0.0, along), Vec2::new(l, along))
    };
    segment_clear(a, b, r, obstacles)
}

/// One lane: walkers on `course` at `along` `[m]` (the x of a north/south
/// lane, the y of an east/west one; for a corner, the arc position of its
/// legs' exits, their entries being at L − along — for north-east the y of
/// the west entries).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lane {
    /// Where the walkers go.
    pub course: Course,
    /// Lateral position `[m]` (see above).
    pub along: f64,
    /// Walkers per period.
    pub per_period: usize,
    /// Periods' worth of `π/m` steps one crossing takes.
    pub q: usize,
    /// Time of the first walker at the entry side `[s]`, in `[0, π/m)`
    /// (of a corner, at its first leg's entry side), plus
    /// k·[`GROUP_STAGGER`]/u for the k-th lane of a walking group.
    pub phase: f64,
    /// The walking group the lane's walkers belong to: lanes with the same
    /// number are neighbours with the same walkers per period, speed and
    /// phase, whose j-th walkers walk together (`None`: alone).
    pub group: Option<u32>,
}

/// One straight walk of a lane across the tile, from a side to another.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Leg {
    /// Entry side.
    pub from: Side,
    /// Arc position of the entries `[m]`.
    pub s_in: f64,
    /// Entry point `[m]`, patch frame.
    pub start: Vec2,
    /// Exit side.
    pub to: Side,
    /// Arc position of the exits `[m]`.
    pub s_out: f64,
    /// Exit point `[m]`, patch frame.
    pub end: Vec2,
    /// Unit walking direction, patch frame.
    pub direction: Vec2,
    /// Length `[m]`.
    pub length: f64,
    /// Time `[s]` from the lane's phase to this leg's first entry.
    pub delay: f64,
}

impl Leg {
    /// Where and when the walkers of `lane` on this leg and those of
    /// `other_lane` on `other` pass the point where the two legs cross:
    /// their times `[s]` in `[0, π)`, or `None` when the legs are parallel
    /// or do not meet. Exact for straight legs (no rounding beyond that of
    /// their positions). O(walkers per lane).
    fn crossing_times(&self, lane: &Lane, other: &Leg, other_lane: &Lane, l: f64, pi: f64) -> Option<[Vec<f64>; 2]> {
        let cross = |a: Vec2, b: Vec2| a.x * b.y - a.y * b.x;
        let det = cross(self.direction, other.direction);
        if det.abs() < 1e-9 {
            return None;
        }
        let w = other.start - self.start;
        let (d, e) = (cross(w, other.direction) / det, cross(w, self.direction) / det);
        let inside = |x: f64, len: f64| (-1e-9..=len + 1e-9).contains(&x);
        if !(inside(d, self.length) && inside(e, other.length)) {
            return None;
        }
        let at = |leg: &Leg, lane: &Lane, dist: f64| {
            let u = lane.speed(l, pi);
            leg.times(lane, pi).into_iter().map(|t| (t + dist / u).rem_euclid(pi)).collect()
        };
        Some([at(self, lane, d), at(other, other_lane, e)])
    }

    /// Entry times `[s]` in `[0, π)` of `lane`'s walkers on this leg.
    pub fn times(&self, lane: &Lane, period: f64) -> Vec<f64> {
        lane.times(period).into_iter().map(|t| (t + self.delay).rem_euclid(period)).collect()
    }

    /// The walkers' velocity `[m/s]` at speed `u` in the frame of `side`
    /// (x along it, y inward), −0 written as 0.
    fn velocity_on(&self, side: Side, u: f64) -> [f64; 2] {
        let v = crate::geometry::rotate_quarter(self.direction * u, -(side.index() as i32));
        [v.x + 0.0, v.y + 0.0]
    }
}

impl Lane {
    /// Walking speed `[m/s]`: `d·m / (q·π)` with d the course's crossing
    /// distance ([`Course::crossing`]: L, or √2·L round a corner).
    pub fn speed(&self, size: f64, period: f64) -> f64 {
        self.course.crossing(size) * self.per_period as f64 / (self.q as f64 * period)
    }

    /// Entry times `[s]` in `[0, π)` (of a corner, on its first leg).
    pub fn times(&self, period: f64) -> Vec<f64> {
        (0..self.per_period).map(|j| (self.phase + j as f64 * period / self.per_period as f64) % period).collect()
    }

    /// Walkers entering the tile per period: m straight, 2m round a corner.
    pub fn walkers(&self) -> usize {
        match self.course {
            Course::Straight(_) => self.per_period,
            Course::Corner(_) => 2 * self.per_period,
        }
    }

    /// The lane's straight walks across a tile of side `l` `[m]` and
    /// period `pi` `[s]`: one straight, two round a corner (see the module
    /// documentation). O(1).
    pub fn legs(&self, l: f64, pi: f64) -> Vec<Leg> {
        let a = self.along;
        match self.course {
            Course::Straight(to) => {
                let from = to.opposite();
                let s_on = |side: Side| match side {
                    Side::South | Side::East => a,
                    Side::North | Side::West => l - a,
                };
                let at = |side: Side| match side {
                    Side::South => Vec2::new(a, 0.0),
                    Side::North => Vec2::new(a, l),
                    Side::West => Vec2::new(0.0, a),
                    Side::East => Vec2::new(l, a),
                };
                let (start, end) = (at(from), at(to));
                let (s_in, s_out) = (s_on(from), s_on(to));
                vec![Leg { from, s_in, start, to, s_out, end, direction: (end - start) / l, length: l, delay: 0.0 }]
            }
            Course::Corner(d) => {
                let k = d.quarter_turns();
                let direction = crate::geometry::rotate_quarter(Vec2::new(1.0, 1.0) / std::f64::consts::SQRT_2, k);
                let u = self.speed(l, pi);
                let [(from_a, to_a), (from_b, to_b)] = d.legs();
                let leg = |from: Side, to: Side, length: f64, delay: f64| Leg {
                    from,
                    s_in: l - a,
                    start: crate::geometry::v2(from.point(l - a, l)),
                    to,
                    s_out: a,
                    end: crate::geometry::v2(to.point(a, l)),
                    direction,
                    length,
                    delay,
                };
                let first = std::f64::consts::SQRT_2 * (l - a);
                vec![leg(from_a, to_a, first, 0.0), leg(from_b, to_b, std::f64::consts::SQRT_2 * a, first / u)]
            }
        }
    }

    /// Whether this lane's points keep `width` `[m]` from `other`'s on
    /// every side (√2·`width` where either crosses the side at 45°: a
    /// walker crossing slanted closes on its neighbour by half its way
    /// along the side, and `validate`'s separability check follows each
    /// 0.3 m beyond the seam), and its legs `width` from `other`'s
    /// parallel legs. O(1).
    fn apart(&self, other: &Lane, l: f64, pi: f64, width: f64) -> bool {
        let (mine, theirs) = (self.legs(l, pi), other.legs(l, pi));
        let points = |legs: &[Leg]| {
            legs.iter()
                .flat_map(|g| {
                    let slanted = g.direction.x.abs() > 1e-9 && g.direction.y.abs() > 1e-9;
                    [(g.from, g.s_in, slanted), (g.to, g.s_out, slanted)]
                })
                .collect::<Vec<_>>()
        };
        let on_sides = points(&mine).iter().all(|&(side, s, a)| {
            points(&theirs).iter().all(|&(o, t, b)| {
                let gap = if a || b { std::f64::consts::SQRT_2 * width } else { width };
                o != side || (s - t).abs() >= gap - 1e-9
            })
        });
        let parallel = mine.iter().all(|g| {
            theirs.iter().all(|h| {
                let cross = |a: Vec2, b: Vec2| a.x * b.y - a.y * b.x;
                cross(g.direction, h.direction).abs() >= 1e-9
                    || cross(g.direction, h.start - g.start).abs() >= width - 1e-9
            })
        });
        on_sides && parallel
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
        "{lanes} lanes heading {heading} do not fit across {size} m (at most {room}{}); lower the density or the share of that flow",
        if *blocked > 0 { format!(", {blocked} more lane positions cross an obstacle") } else { String::new() }
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
        /// Lane positions left out because they cross an obstacle.
        blocked: usize,
    },
}

/// The lane (m, q) whose speed is nearest `speed`, with `m ≤ max_m` and no
/// faster than [`FASTEST_LANE`].
fn lane_shape(size: f64, period: f64, speed: f64, max_m: usize) -> (usize, usize) {
    let mut best = (1, 1, f64::INFINITY);
    for m in 1..=max_m.max(1) {
        let slowest_q = ((size * m as f64) / (period * FASTEST_LANE) - 1e-9).ceil();
        let q = ((size * m as f64) / (period * speed)).round().max(slowest_q).max(1.0) as usize;
        let u = size * m as f64 / (q as f64 * period);
        let err = (u / speed).ln().abs();
        // Prefer more walkers per lane when as good (fewer, fuller lanes).
        if err < best.2 - 1e-9 || (err <= best.2 + 1e-9 && m > best.0) {
            best = (m, q, err);
        }
    }
    (best.0, best.1)
}

/// Largest relative error of a lane's speed against the speed drawn for it
/// before the lane may hold more walkers than are left to place.
const LANE_SPEED_TOLERANCE: f64 = 0.1;

/// The lane shape for a drawn `speed` with `left` walkers still to place:
/// at most `left` walkers when that comes within
/// [`LANE_SPEED_TOLERANCE`] of the speed, else up to [`MAX_PER_LANE`] (a
/// few more walkers than asked rather than a lane at the wrong pace — one
/// leftover walker alone in a 16 m, 10 s tile would cross at 1.6 m/s).
fn lane_for(size: f64, period: f64, speed: f64, left: usize) -> (usize, usize) {
    let (m, q) = lane_shape(size, period, speed, left.min(MAX_PER_LANE));
    let u = size * m as f64 / (q as f64 * period);
    if (u / speed).ln().abs() <= LANE_SPEED_TOLERANCE.ln_1p() {
        (m, q)
    } else {
        lane_shape(size, period, speed, MAX_PER_LANE)
    }
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
    let total_share: f64 = p.flows.iter().map(|f| f.1.max(0.0)).chain(p.corners.iter().map(|f| f.1.max(0.0))).sum();
    if !(total_share.is_finite() && total_share > 0.0) {
        return bad("flow shares", total_share, "must sum to more than 0");
    }
    let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
    let (l, pi) = (p.size, p.period);
    // Walkers per period: density·L² walkers present, each for L/u.
    let mean_speed = (0..256).map(|_| p.speeds.draw(&mut rng)).sum::<f64>() / 256.0;
    let per_period = p.density * l * pi * mean_speed;
    // Lane positions clear of the obstacles, per axis.
    let clear = |axis: usize| -> Vec<f64> {
        slots(l, p.agent_radius).into_iter().filter(|&x| lane_clear(axis, x, l, p.agent_radius, &p.obstacles)).collect()
    };
    let mut free: [Vec<f64>; 2] = [clear(0), clear(1)];
    let room: [usize; 2] = [free[0].len(), free[1].len()];
    if !(p.walking_groups.is_finite() && (0.0..1.0).contains(&p.walking_groups)) {
        return bad("walking group share", p.walking_groups, "must be in [0, 1)");
    }
    let mut out = Vec::new();
    // Walking groups: the next lane becomes a group's n neighbouring lanes
    // while fewer than the share of the walkers placed walk in groups.
    let (_, triads) = walking_group_reference();
    let (mut placed, mut grouped) = (0usize, 0usize);
    let mut groups = 0u32;
    let width = 2.0 * p.agent_radius + 0.2;
    for &(heading, share) in &p.flows {
        let mut left = (per_period * share.max(0.0) / total_share).round() as usize;
        let axis = heading.index() % 2; // 0: north/south lanes (along x), 1: east/west (along y)
        let mut count = 0;
        while left > 0 {
            if p.walking_groups > 0.0 && (grouped as f64) < p.walking_groups * placed as f64 + 1e-9 {
                let n = if rng.random_bool(triads) { 3 } else { 2 };
                // Neighbouring free slots for the n members.
                let starts: Vec<usize> = (0..free[axis].len().saturating_sub(n - 1))
                    .filter(|&k| (1..n).all(|i| (free[axis][k + i] - free[axis][k] - i as f64 * width).abs() < 1e-6))
                    .collect();
                if !starts.is_empty() {
                    // Drawn as anyone's; set against the walkers alone
                    // once every lane is placed (below).
                    let u = p.speeds.draw(&mut rng).clamp(SPEED_RANGE.0, SPEED_RANGE.1);
                    let (m, q) = lane_for(l, pi, u, left.div_ceil(n));
                    let k = starts[rng.random_range(0..starts.len())];
                    for along in free[axis].drain(k..k + n).collect::<Vec<_>>() {
                        let course = Course::Straight(heading);
                        out.push(Lane { course, along, per_period: m, q, phase: 0.0, group: Some(groups) });
                    }
                    groups += 1;
                    (placed, grouped) = (placed + m * n, grouped + m * n);
                    left = left.saturating_sub(m * n);
                    count += n;
                    continue;
                }
            }
            let u = p.speeds.draw(&mut rng).clamp(SPEED_RANGE.0, SPEED_RANGE.1);
            let (m, q) = lane_for(l, pi, u, left);
            placed += m;
            if free[axis].is_empty() {
                let blocked = slots(l, p.agent_radius).len() - room[axis];
                return Err(GenerateError::TooManyLanes {
                    heading: heading.name(),
                    lanes: count + 1,
                    room: room[axis],
                    size: l,
                    blocked,
                });
            }
            let k = rng.random_range(0..free[axis].len());
            let along = free[axis].remove(k);
            out.push(Lane { course: Course::Straight(heading), along, per_period: m, q, phase: 0.0, group: None });
            left = left.saturating_sub(m);
            count += 1;
        }
    }
    // Corners, after the straight lanes: at a slot whose legs keep clear of
    // the obstacles and apart from every lane placed.
    let width = 2.0 * p.agent_radius + 0.2;
    for &(diagonal, share) in &p.corners {
        let course = Course::Corner(diagonal);
        let mut left = (per_period * share.max(0.0) / total_share / std::f64::consts::SQRT_2).round() as usize;
        let mut count = 0;
        while left > 0 {
            let u = p.speeds.draw(&mut rng).clamp(SPEED_RANGE.0, SPEED_RANGE.1);
            let (m, q) = lane_for(course.crossing(l), pi, u, left);
            let at = |along| Lane { course, along, per_period: m, q, phase: 0.0, group: None };
            let clear = |lane: &Lane| {
                lane.legs(l, pi).iter().all(|g| segment_clear(g.start, g.end, p.agent_radius, &p.obstacles))
            };
            let open: Vec<f64> = slots(l, p.agent_radius)
                .into_iter()
                .filter(|&a| clear(&at(a)) && out.iter().all(|o| at(a).apart(o, l, pi, width)))
                .collect();
            if open.is_empty() {
                let blocked = slots(l, p.agent_radius).into_iter().filter(|&a| !clear(&at(a))).count();
                return Err(GenerateError::TooManyLanes {
                    heading: course.name(),
                    lanes: count + 1,
                    room: count,
                    size: l,
                    blocked,
                });
            }
            let along = open[rng.random_range(0..open.len())];
            out.push(at(along));
            left = left.saturating_sub(m);
            count += 1;
        }
    }
    pace_groups(&mut out, l, pi);
    place_phases(&mut out, l, pi, &mut rng);
    Ok(out)
}

/// How far `[m]` each member of a generated walking group walks behind its
/// right-hand neighbour: it crosses 0.3 m / u later (0.19–0.33 s at
/// 0.9–1.6 m/s, a fifth to a quarter of a stride), so that members who walk
/// abreast at one speed step out of lockstep (the gait convention plants
/// the left foot at each crossing, `crate::footsteps`), and a pair 0.75 m
/// apart meets the walking direction at 68° (ETH/UCY pairs: 67–80°).
pub const GROUP_STAGGER: f64 = 0.3;

/// Share of the walkers' speed a walking group loses per member beyond the
/// first: ETH/UCY groups walk 8–18 % slower than people alone
/// (`data/groups.json`), Moussaïd et al. 2010 fit 0.04–0.08 m/s per
/// member (3–6 % at 1.3 m/s); pairs 7 %, triads 14 % slower.
pub const GROUP_PACE_LOSS: f64 = 0.07;

/// Sets the pace of the walking groups among `lanes` against the walkers
/// alone: each group's lanes get the (m, q) whose speed is nearest the
/// median speed of the single lanes' walkers (weighted by the time they
/// spend in the tile; the groups' own median when none walks alone) lowered by
/// [`GROUP_PACE_LOSS`] per member beyond the first — so that a tile's few
/// groups walk as much slower than its people alone as real groups do,
/// whatever the draws. O(lanes log lanes).
fn pace_groups(lanes: &mut [Lane], l: f64, pi: f64) {
    // Each lane weighs the time its walkers spend in the tile (walkers per
    // period over speed), as the statistics sample walkers in time.
    let weighed = |x: &Lane| (x.speed(l, pi), x.walkers() as f64 / x.speed(l, pi));
    let mut alone: Vec<(f64, f64)> = lanes.iter().filter(|x| x.group.is_none()).map(weighed).collect();
    if alone.is_empty() {
        alone = lanes.iter().map(weighed).collect();
    }
    alone.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: f64 = alone.iter().map(|a| a.1).sum();
    let mut seen = 0.0;
    let Some(&(median, _)) = alone.iter().find(|a| {
        seen += a.1;
        2.0 * seen >= total
    }) else {
        return;
    };
    let groups: std::collections::BTreeSet<u32> = lanes.iter().filter_map(|x| x.group).collect();
    for g in groups {
        let n = lanes.iter().filter(|x| x.group == Some(g)).count();
        let target = (median * (1.0 - GROUP_PACE_LOSS * (n - 1) as f64)).max(SPEED_RANGE.0);
        // The fewest walkers per period from those it had (or 2) that come
        // within 4 % of the target, so that the share in groups stays near
        // the one placed.
        let had = lanes.iter().find(|x| x.group == Some(g)).map_or(1, |x| x.per_period);
        let (mut m, mut q) = lane_shape(l, pi, target, had.max(2));
        for most in had.max(2) + 1..=MAX_PER_LANE {
            if (l * m as f64 / (q as f64 * pi) / target - 1.0).abs() <= 0.04 {
                break;
            }
            (m, q) = lane_shape(l, pi, target, most);
        }
        for lane in lanes.iter_mut().filter(|x| x.group == Some(g)) {
            (lane.per_period, lane.q) = (m, q);
        }
    }
}

/// Chooses each lane's phase among 16 so that its walkers pass each
/// crossing with the legs of the lanes placed before it as far in time as
/// possible from theirs (the smallest periodic time gap, maximised).
fn place_phases(lanes: &mut [Lane], l: f64, pi: f64, rng: &mut ChaCha8Rng) {
    for i in 0..lanes.len() {
        if let Some(first) = lanes[..i].iter().find(|o| o.group.is_some() && o.group == lanes[i].group) {
            // The k-th member crosses k·GROUP_STAGGER / u after the first.
            let k = lanes[..i].iter().filter(|o| o.group == lanes[i].group).count();
            lanes[i].phase = first.phase + k as f64 * GROUP_STAGGER / lanes[i].speed(l, pi);
            continue;
        }
        let step = pi / lanes[i].per_period as f64;
        let offset: f64 = rng.random_range(0.0..step / 16.0);
        let mut best = (f64::NEG_INFINITY, 0.0);
        for k in 0..16 {
            let phase = offset + step * k as f64 / 16.0;
            let trial = Lane { phase, ..lanes[i] };
            let mut gap = f64::INFINITY;
            for other in &lanes[..i] {
                for mine in trial.legs(l, pi) {
                    for theirs in other.legs(l, pi) {
                        let Some([at, others]) = mine.crossing_times(&trial, &theirs, other, l, pi) else {
                            continue;
                        };
                        for a in &at {
                            for b in &others {
                                let dt = (a - b).rem_euclid(pi);
                                gap = gap.min(dt.min(pi - dt));
                            }
                        }
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
/// side its leg starts from and its exit on the side the leg ends on, the
/// leg's length / u later, both with its velocity. O(walkers).
pub fn patterns(lanes: &[Lane], l: f64, pi: f64) -> [Pattern; 4] {
    let mut out: [Pattern; 4] = std::array::from_fn(|_| Pattern::empty(l, pi));
    for lane in lanes {
        let u = lane.speed(l, pi);
        for leg in lane.legs(l, pi) {
            let (from, to) = (leg.from, leg.to);
            let (v_in, v_out) = (leg.velocity_on(from, u), leg.velocity_on(to, u));
            for (j, t) in leg.times(lane, pi).into_iter().enumerate() {
                // The j-th walkers of a group's lanes walk together.
                let group = lane.group.map(|g| g * MAX_PER_LANE as u32 + j as u32 + 1);
                // Side frame: y inward. An entry walks inward, an exit outward.
                out[from.index()].entries.push(BoundaryPoint { s: leg.s_in, t, velocity: Some(v_in), group });
                let tx = (t + leg.length / u).rem_euclid(pi);
                out[to.index()].exits.push(BoundaryPoint { s: leg.s_out, t: tx, velocity: Some(v_out), group });
            }
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
                blocked: 0,
            });
        }
        let x = free.remove(rng.random_range(0..free.len()));
        let lane = Lane {
            course: Course::Straight(Side::North),
            along: x,
            per_period: m,
            q,
            phase: rng.random_range(0.0..period / m as f64),
            group: None,
        };
        let u = lane.speed(size, period);
        for t in lane.times(period) {
            pattern.entries.push(BoundaryPoint { s: x, t, velocity: Some([0.0, u]), group: None });
            pattern.exits.push(BoundaryPoint { s: size - x, t, velocity: Some([0.0, -u]), group: None });
        }
        left = left.saturating_sub(m);
    }
    Ok(pattern)
}

/// Share of the people of a generated patch who stand, in groups
/// ([`standing_groups`]): a fifth of the pooled ETH/UCY speed samples are
/// below 0.21 m/s, people standing, mostly in groups (docs/design.md
/// "Realism").
pub const STANDING_SHARE: f64 = 0.2;

/// Distance `[m]` between the members of a standing group: within the
/// personal distance at which acquaintances talk (0.45–1.2 m; Hall, *The
/// Hidden Dimension*, 1966), and 2r apart with room to spare.
pub const GROUP_SPACING: f64 = 0.8;

/// Clearance `[m]` beyond 2r between a standing person and every walker's
/// initial route: walkers pass standing groups with room to spare, so the
/// solver need not push them round.
pub const GROUP_CLEARANCE: f64 = 0.6;

/// Clearance `[m]` of a standing person from the patch's sides (beyond r),
/// its obstacles, and the members of other groups (beyond 2r).
pub const GROUP_MARGIN: f64 = 0.5;

/// Speed `[m/s]` below which a walker counts as standing when
/// [`standing_groups`] weighs the standing already there: the 20th
/// percentile of the pooled ETH/UCY speeds, where the reference's
/// standing fifth ends.
pub const STANDING_BELOW: f64 = 0.21;

/// Grid step `[m]` of the places a group may stand.
const GROUP_GRID: f64 = 0.2;

/// Standing groups for `patch`: people who stand all period long in groups
/// of 2 or 3, [`GROUP_SPACING`] apart, where no walker's initial route
/// passes within 2r + [`GROUP_CLEARANCE`] (routes taken in space alone, at
/// any time: the matched pairs' initial paths and the endogenous loops) and
/// [`GROUP_MARGIN`] from the sides, obstacles and other groups — as many
/// as make `share` of the people present standing (counting the standing
/// agents the patch already has and the time its walkers wait,
/// [`STANDING_BELOW`]), or as many as fit. Each is an
/// endogenous agent with one waypoint (held in place by the bake). Places
/// and group sizes are drawn with `seed`.
///
/// Cost: O(grid points · (route segments + obstacle vertices)) with a grid
/// of [`GROUP_GRID`] over the patch, plus O(grid points) per group.
///
/// # Errors
/// `share` outside `[0, 0.9]`.
pub fn standing_groups(
    patch: &crate::model::Patch,
    share: f64,
    seed: u64,
) -> Result<Vec<crate::model::Endogenous>, GenerateError> {
    use crate::geometry::Vec2;
    if !(share.is_finite() && (0.0..=0.9).contains(&share)) {
        return Err(GenerateError::Parameter {
            what: "standing share",
            value: share,
            why: "must be in [0, 0.9]".into(),
        });
    }
    let (l, pi, r) = (patch.header.size, patch.header.period, patch.header.agent_radius);
    let pairs = crate::matching::match_patch(patch, patch.solver.matching);
    let (agents, _) = crate::initial_paths::initial_paths(patch, &pairs);
    // People present on average (M): each walker for its time in the
    // patch, each loop all the time; and standing (S): the standing agents,
    // and the walkers while slower than STANDING_BELOW (their waits). N
    // more standing make (S + N) / (M + N) = share.
    let mut present = 0.0;
    let mut standing = 0.0;
    for a in &agents {
        if a.path.holds() {
            present += 1.0;
            standing += 1.0;
            continue;
        }
        present += if a.path.looped { 1.0 } else { (a.path.end() - a.path.start()) / pi };
        standing += (0..a.path.points.len() - 1)
            .filter(|&k| a.path.segment_velocity(k).norm() < STANDING_BELOW)
            .map(|k| (a.path.points[k + 1].t - a.path.points[k].t) / pi)
            .sum::<f64>();
    }
    let wanted = ((share * present - standing) / (1.0 - share)).round().max(0.0) as usize;
    if wanted == 0 {
        return Ok(Vec::new());
    }
    let segments: Vec<(Vec2, Vec2)> = agents
        .iter()
        .filter(|a| !a.path.holds())
        .flat_map(|a| a.path.points.windows(2).map(|w| (w[0].p, w[1].p)).collect::<Vec<_>>())
        .collect();
    let to_segment = |p: Vec2, (a, b): (Vec2, Vec2)| {
        let ab = b - a;
        let u = if ab.norm_squared() > 1e-12 { ((p - a).dot(&ab) / ab.norm_squared()).clamp(0.0, 1.0) } else { 0.0 };
        (p - (a + ab * u)).norm()
    };
    let mut taken: Vec<Vec2> = agents.iter().filter(|a| a.path.holds()).map(|a| a.path.points[0].p).collect();
    // Whether one standing person fits at p.
    let fits = |p: Vec2, taken: &[Vec2]| {
        let edge = r + GROUP_MARGIN;
        p.x >= edge
            && p.x <= l - edge
            && p.y >= edge
            && p.y <= l - edge
            && patch.obstacles.iter().all(|o| crate::geometry::obstacle_signed_distance(p, o).0 >= r + GROUP_MARGIN)
            && taken.iter().all(|q| (p - q).norm() >= 2.0 * r + GROUP_MARGIN)
            && segments.iter().all(|&s| to_segment(p, s) >= 2.0 * r + GROUP_CLEARANCE)
    };
    let steps = (l / GROUP_GRID).floor() as usize;
    let grid: Vec<Vec2> = (1..steps)
        .flat_map(|i| (1..steps).map(move |j| Vec2::new(i as f64 * GROUP_GRID, j as f64 * GROUP_GRID)))
        .collect();
    // Places where one person fits, before any group stands.
    let mut open: Vec<Vec2> = grid.into_iter().filter(|&p| fits(p, &taken)).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    let mut group = 0;
    while out.len() < wanted && !open.is_empty() {
        let drawn = if wanted - out.len() >= 3 && rng.random_bool(0.4) { 3 } else { 2 };
        let turn: f64 = rng.random_range(0.0..std::f64::consts::TAU);
        // Members round the centre: a pair side by side, a trio in a
        // triangle; a trio that fits nowhere stands as a pair.
        let members = |size: usize| -> Vec<Vec2> {
            let ring = if size == 2 { GROUP_SPACING / 2.0 } else { GROUP_SPACING / 3f64.sqrt() };
            (0..size)
                .map(|k| {
                    let a = turn + std::f64::consts::TAU * k as f64 / size as f64;
                    Vec2::new(a.cos(), a.sin()) * ring
                })
                .collect()
        };
        let Some((offsets, places)) = [drawn, 2].into_iter().find_map(|size| {
            let offsets = members(size);
            let places: Vec<Vec2> =
                open.iter().copied().filter(|&c| offsets.iter().all(|&o| fits(c + o, &taken))).collect();
            (!places.is_empty()).then_some((offsets, places))
        }) else {
            break;
        };
        let centre = places[rng.random_range(0..places.len())];
        group += 1;
        for (k, &o) in offsets.iter().enumerate() {
            // To the millimetre: documents people read (the margins are far wider).
            let p = (centre + o).map(|x| (x * 1000.0).round() / 1000.0);
            taken.push(p);
            out.push(crate::model::Endogenous {
                name: Some(format!("standing group {group}, {}", k + 1)),
                waypoints: vec![crate::model::Waypoint { position: [p.x, p.y], t: 0.0 }],
            });
        }
        open.retain(|&c| fits(c, &taken));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Direction;
    use std::path::Path;

    #[test]
    fn lanes_keep_clear_of_obstacles_and_say_when_one_blocks_them_all() {
        use crate::model::Obstacle;
        // A fountain in the middle and a building along the west half.
        let fountain = Obstacle::Circle { center: [8.0, 8.0], radius: 2.0 };
        let building = Obstacle::Polygon(vec![[2.0, 11.0], [6.0, 11.0], [6.0, 14.0], [2.0, 14.0]]);
        // Straight lanes, and corner flows beside them.
        // (South-east legs lie on x + y = a and x + y = L + a: between the
        // fountain and the building for a in about [4.8, 12.3].)
        let with_corners = |p: GenerateParams| GenerateParams { corners: vec![(Diagonal::SouthEast, 0.3)], ..p };
        let obstacles = vec![fountain.clone(), building.clone()];
        for seed in 0..20 {
            let p = GenerateParams { obstacles: obstacles.clone(), ..params(0.05, seed) };
            for p in [p.clone(), with_corners(p)] {
                let lanes = lanes(&p).unwrap();
                assert!(!lanes.is_empty());
                for lane in &lanes {
                    for leg in lane.legs(p.size, p.period) {
                        for k in 0..=160 {
                            let q = leg.start + (leg.end - leg.start) * (k as f64 / 160.0);
                            for o in &p.obstacles {
                                let d = crate::geometry::obstacle_signed_distance(q, o).0;
                                assert!(
                                    d >= 0.3 + LANE_CLEARANCE - 1e-9,
                                    "seed {seed}: lane {lane:?} passes {d} m from {o:?}"
                                );
                            }
                        }
                    }
                }
            }
        }
        // Without the obstacles the same draws put lanes through them.
        let crosses =
            |lane: &Lane| lane.legs(16.0, 10.0).iter().any(|g| !segment_clear(g.start, g.end, 0.3, &obstacles));
        for corners in [false, true] {
            let through = (0..20).any(|seed| {
                let p = if corners { with_corners(params(0.05, seed)) } else { params(0.05, seed) };
                lanes(&p)
                    .unwrap()
                    .iter()
                    .any(|lane| corners == matches!(lane.course, Course::Corner(_)) && crosses(lane))
            });
            assert!(through, "corners: {corners}");
        }
        // A wall across the whole patch blocks every north/south lane.
        let wall = Obstacle::Polygon(vec![[0.5, 7.0], [15.5, 7.0], [15.5, 9.0], [0.5, 9.0]]);
        let p = GenerateParams { obstacles: vec![wall], flows: vec![(Side::North, 1.0)], ..params(0.05, 3) };
        let e = lanes(&p).unwrap_err().to_string();
        assert!(e.contains("at most 0") && e.contains("cross an obstacle"), "{e}");
    }

    fn params(density: f64, seed: u64) -> GenerateParams {
        GenerateParams {
            size: 16.0,
            period: 10.0,
            agent_radius: 0.3,
            density,
            flows: vec![(Side::North, 0.3), (Side::South, 0.3), (Side::East, 0.2), (Side::West, 0.2)],
            corners: Vec::new(),
            speeds: Speeds::Weidmann,
            seed,
            obstacles: Vec::new(),
            walking_groups: 0.0,
        }
    }

    #[test]
    fn lane_speeds_come_close_to_any_human_speed() {
        for k in 0..=30 {
            let u = 0.6 + 1.1 * k as f64 / 30.0;
            let (m, q) = lane_shape(16.0, 10.0, u, MAX_PER_LANE);
            let got = 16.0 * m as f64 / (q as f64 * 10.0);
            assert!((got / u).ln().abs() < 0.1, "{u} → {got} (m = {m}, q = {q})");
        }
    }

    #[test]
    fn leftover_walkers_keep_the_pace_of_their_draw() {
        // Walker counts that leave 1 or 2 over after full lanes of 5: a
        // lane of one walker in 16 m, 10 s could only go 1.6 or 0.8 m/s.
        for density in [0.02, 0.03, 0.05, 0.07, 0.11] {
            for u in [1.0, 1.2, 1.35] {
                let p = GenerateParams { speeds: Speeds::Fixed(u), ..params(density, 1) };
                for lane in lanes(&p).unwrap() {
                    let got = lane.speed(p.size, p.period);
                    assert!((got / u).ln().abs() <= LANE_SPEED_TOLERANCE.ln_1p() + 1e-12, "{density}: {u} → {got}");
                }
            }
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

    /// A patch of corner flows (and, with `straight`, straight ones):
    /// 12 m, 10 s.
    fn corner_params(corners: Vec<(Diagonal, f64)>, straight: bool, density: f64, seed: u64) -> GenerateParams {
        GenerateParams {
            size: 12.0,
            flows: if straight { vec![(Side::North, 0.5), (Side::West, 0.5)] } else { Vec::new() },
            corners,
            ..params(density, seed)
        }
    }

    /// The patch of `lanes` resolved, after checking that it validates and
    /// tiles with itself.
    fn checked_patch(lanes: &[Lane], p: &GenerateParams) -> crate::model::Patch {
        let doc = document(lanes, p, None);
        let patch = doc.resolve(None, Path::new(".")).unwrap_or_else(|e| panic!("{p:?}: {e:?}"));
        assert!(crate::validate::validate_patch(&patch).is_empty(), "{p:?}");
        assert_eq!(crate::validate::self_tiling_note(&patch), None, "{p:?}");
        patch
    }

    #[test]
    fn corner_flows_turn_at_their_speed_and_tile_with_themselves() {
        for d in Diagonal::ALL {
            for seed in 0..4 {
                let p = corner_params(vec![(d, 1.0)], false, 0.06, seed);
                let lanes = lanes(&p).unwrap();
                assert!(lanes.iter().all(|l| l.course == Course::Corner(d)) && !lanes.is_empty());
                let patch = checked_patch(&lanes, &p);
                let entries = patch.crossings_of(Direction::Entry);
                let exits = patch.crossings_of(Direction::Exit);
                assert_eq!(entries.len(), lanes.iter().map(Lane::walkers).sum::<usize>());
                // Every entry is matched by the exit its leg ends at, on an
                // adjacent side: straight along its velocity, at its speed,
                // its lane's, leaving with the same velocity.
                let pairs = crate::matching::match_patch(&patch, crate::model::MatchingMode::Stable);
                assert_eq!(pairs.len(), entries.len());
                let speeds: Vec<f64> = lanes.iter().map(|l| l.speed(p.size, p.period)).collect();
                for pair in &pairs {
                    let (e, x) = (&entries[pair.entry], &exits[pair.exit]);
                    assert!(d.legs().contains(&(e.side, x.side)), "{d}: {:?} → {:?}", e.side, x.side);
                    let u = e.velocity.norm();
                    assert!(speeds.iter().any(|s| (s - u).abs() < 1e-9), "{u} {speeds:?}");
                    let walk = x.position - e.position;
                    assert!((walk.normalize() - e.velocity / u).norm() < 1e-9, "{d}: {walk:?} {:?}", e.velocity);
                    let late = (e.t + walk.norm() / u - x.t).rem_euclid(p.period);
                    assert!(late.min(p.period - late) < 1e-6, "{d} seed {seed}: {late}");
                    assert!((x.velocity - e.velocity).norm() < 1e-9);
                }
                // Both legs of a corner lane are 2r + 0.2 from any other's
                // parallel legs.
                for (i, a) in lanes.iter().enumerate() {
                    for b in &lanes[i + 1..] {
                        assert!(a.apart(b, p.size, p.period, 0.8), "{a:?} {b:?}");
                        let gap = (a.along - b.along).abs() / std::f64::consts::SQRT_2;
                        assert!(gap >= 0.8 - 1e-9, "{a:?} {b:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn corner_and_straight_flows_together_tile_and_keep_apart() {
        for seed in 0..6 {
            let corners = vec![(Diagonal::NorthEast, 0.3), (Diagonal::SouthWest, 0.3), (Diagonal::NorthWest, 0.3)];
            let p = GenerateParams { size: 16.0, ..corner_params(corners, true, 0.08, seed) };
            let lanes = lanes(&p).unwrap();
            let kinds = |corner: bool| lanes.iter().filter(|l| matches!(l.course, Course::Corner(_)) == corner).count();
            assert!(kinds(true) >= 3 && kinds(false) >= 2, "{lanes:?}");
            let patch = checked_patch(&lanes, &p);
            // No two points of a side nearer than 2r + 0.2, none nearer a
            // corner than the margin.
            for side in Side::ALL {
                let mut s: Vec<f64> =
                    patch.sides[side].entries.iter().chain(&patch.sides[side].exits).map(|b| b.s).collect();
                s.sort_by(f64::total_cmp);
                s.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
                assert!(s.windows(2).all(|w| w[1] - w[0] >= 0.8 - 1e-9), "{side}: {s:?}");
                assert!(s.iter().all(|&x| (CORNER_MARGIN - 1e-9..=16.0 - CORNER_MARGIN + 1e-9).contains(&x)));
            }
            // Most walkers keep their own pace on their initial paths.
            let pairs = crate::matching::match_patch(&patch, crate::model::MatchingMode::Stable);
            let (agents, _) = crate::initial_paths::initial_paths(&patch, &pairs);
            let floor = crate::realism::floor_speeds(&agents);
            let close = floor.iter().zip(&agents).filter(|(f, a)| (*f / a.preferred_speed - 1.0).abs() < 0.05).count();
            assert!(close * 10 >= floor.len() * 8, "seed {seed}: {close} of {} walk at their own speed", floor.len());
        }
    }

    #[test]
    fn a_corner_leg_beside_a_straight_lane_is_separable_at_the_seam() {
        // The editor's generator on a 16 m plaza, towards east and turning
        // north-east: a 45° exit 0.8 m from a straight one closed to
        // 0.51 m within 0.3 m of the seam (validate refused the document).
        for seed in 0..24 {
            let p = GenerateParams {
                size: 16.0,
                flows: vec![(Side::East, 1.0)],
                corners: vec![(Diagonal::NorthEast, 1.0)],
                ..corner_params(Vec::new(), false, 0.08, seed)
            };
            checked_patch(&lanes(&p).unwrap(), &p);
        }
    }

    #[test]
    fn a_small_corner_patch_bakes_without_collisions() {
        // 1.2 m/s: lanes of 2 walkers per period at 1.13 m/s (q = 3), one
        // per heading.
        let p = GenerateParams {
            speeds: Speeds::Fixed(1.2),
            ..corner_params(vec![(Diagonal::NorthEast, 1.0), (Diagonal::SouthEast, 1.0)], false, 0.03, 1)
        };
        let lanes = lanes(&p).unwrap();
        let patch = checked_patch(&lanes, &p);
        let walkers: usize = lanes.iter().map(Lane::walkers).sum();
        assert_eq!(walkers, 8, "{lanes:?}");
        let b = crate::bake::bake(&patch, &mut crate::bake::Silent).unwrap();
        assert!(b.converged(), "{:?}", b.remaining);
        assert_eq!(b.metrics.collisions.count, 0);
    }

    #[test]
    fn corner_flows_that_do_not_fit_are_named() {
        let p = corner_params(vec![(Diagonal::SouthWest, 1.0)], false, 0.9, 1);
        let e = lanes(&p).unwrap_err().to_string();
        assert!(e.contains("heading southwest do not fit across 12 m"), "{e}");
        assert_eq!(Diagonal::from_name("northwest"), Some(Diagonal::NorthWest));
        assert_eq!(Diagonal::NorthWest.legs(), [(Side::South, Side::West), (Side::East, Side::North)]);
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
    fn standing_groups_stand_out_of_the_way_and_make_their_share() {
        let p = params(0.06, 2);
        let doc = document(&lanes(&p).unwrap(), &p, None);
        let patch = doc.resolve(None, Path::new(".")).unwrap();
        let pairs = crate::matching::match_patch(&patch, crate::model::MatchingMode::Stable);
        let (agents, _) = crate::initial_paths::initial_paths(&patch, &pairs);
        let groups = standing_groups(&patch, 0.2, 7).unwrap();
        assert!(groups.len() >= 2, "{}", groups.len());
        let r = patch.header.agent_radius;
        let at = |e: &crate::model::Endogenous| crate::geometry::v2(e.waypoints[0].position);
        for (i, g) in groups.iter().enumerate() {
            let q = at(g);
            assert_eq!(g.waypoints.len(), 1);
            // Clear of every walker's initial route …
            for a in &agents {
                for w in a.path.points.windows(2) {
                    let (u, v) = (w[0].p, w[1].p);
                    let t = ((q - u).dot(&(v - u)) / (v - u).norm_squared().max(1e-12)).clamp(0.0, 1.0);
                    let d = (q - (u + (v - u) * t)).norm();
                    assert!(d >= 2.0 * r + GROUP_CLEARANCE - 2e-3, "{q:?} is {d} m from a route");
                }
            }
            // … and of the others, yet beside someone of its group.
            let nearest = groups
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(_, h)| (at(h) - q).norm())
                .fold(f64::INFINITY, f64::min);
            assert!(nearest >= 2.0 * r + 0.1 && nearest <= GROUP_SPACING + 2e-3, "{nearest}");
        }
        // The share of people standing comes to 20 % (rounded to a person).
        let present: f64 = agents.iter().map(|a| (a.path.end() - a.path.start()) / p.period).sum();
        let waiting: f64 = agents
            .iter()
            .flat_map(|a| (0..a.path.points.len() - 1).map(move |k| (a, k)))
            .filter(|&(a, k)| a.path.segment_velocity(k).norm() < STANDING_BELOW)
            .map(|(a, k)| (a.path.points[k + 1].t - a.path.points[k].t) / p.period)
            .sum();
        let n = groups.len() as f64;
        let share = (waiting + n) / (present + n);
        assert!((share - 0.2).abs() < 1.5 / (present + n), "{share}");
        // The document with them resolves (standing agents inside, apart).
        let mut with = doc.clone();
        with.endogenous.extend(groups);
        with.resolve(None, Path::new(".")).unwrap();
        assert!(standing_groups(&patch, 0.0, 7).unwrap().is_empty());
        assert!(standing_groups(&patch, 1.5, 7).unwrap_err().to_string().contains("standing share = 1.5"));
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
