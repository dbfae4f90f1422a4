//! The baked format: what a bake produces, an exporter writes and a game reads.
//!
//! Every type here is plain data. A baked patch is a square of side
//! [`PatchHeader::size`] `[m]` whose motion repeats with period
//! [`PatchHeader::period`] `[s]`. Agent paths are space-time polylines with
//! strictly increasing, *unwrapped* times: an exogenous agent lives on
//! `[t_in, t_out]` with `t_in` in `[0, period)` and `t_out - t_in` possibly
//! longer than a period (at play time `τ` it is then at every `τ + kπ` inside its
//! interval: one *instance* per such `k`). An endogenous agent lives on
//! `[t₀, t₀ + π]` and is back where it started at its end.

use std::ops::{Index, IndexMut, Range};

pub use crate::skeletal::{
    AgentAnimation, BoundaryGait, Character, CharacterExtras, Foot, Footstep, SkeletalAnimation, SolePoint,
};

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

/// Version of the baked format written in `extras.crowdpatch.format`: 3
/// since the bake's quality figures left the playback types (a file's
/// `extras.crowdpatch.metrics` is authoring data that the runtime does not
/// read, and may be absent; format 2 required it), 2 since an agent's first
/// instance may also show its last window ([`BakedAgent::last_on_first`]).
/// The runtime reads 1, 2 and 3 alike.
pub const FORMAT_VERSION: u32 = 3;

/// Least hidden time `[s]` between the last window's part and the first's
/// of an instance showing both ([`BakedAgent::last_on_first`]).
pub const MIN_HIDDEN: f64 = 1e-3;

/// Play times `[s]` at which window `k1`'s part of the path over
/// `interval` (`[start, end]`, unwrapped) ends, `end − k₁π`, and window
/// `k0`'s part begins, `start − k₀π` (see [`BakedAgent::last_on_first`]).
pub fn hidden_parts(interval: [f64; 2], k0: i64, k1: i64, period: f64) -> (f64, f64) {
    (interval[1] - k1 as f64 * period, interval[0] - k0 as f64 * period)
}

/// A side of the square patch, in counter-clockwise order.
///
/// Side `k` runs from corner `k` to corner `k + 1`: south (0,0)→(L,0),
/// east (L,0)→(L,L), north (L,L)→(0,L), west (0,L)→(0,0). The arc position `s`
/// of a boundary point is measured along that direction, in `[0, L]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Side {
    /// Side 0, from (0,0) to (L,0); inward normal +y.
    South,
    /// Side 1, from (L,0) to (L,L); inward normal −x.
    East,
    /// Side 2, from (L,L) to (0,L); inward normal −y.
    North,
    /// Side 3, from (0,L) to (0,0); inward normal +x.
    West,
}

impl Side {
    /// The four sides in counter-clockwise order (their index order).
    pub const ALL: [Side; 4] = [Side::South, Side::East, Side::North, Side::West];

    /// Index 0..4 (south, east, north, west).
    pub fn index(self) -> usize {
        self as usize
    }

    /// The side of index `k mod 4`.
    pub fn from_index(k: usize) -> Side {
        Side::ALL[k % 4]
    }

    /// The side this one becomes after `quarter_turns` counter-clockwise turns
    /// of the patch about its centre.
    pub fn rotated(self, quarter_turns: i32) -> Side {
        Side::from_index((self.index() as i32 + quarter_turns).rem_euclid(4) as usize)
    }

    /// The side a neighbour shares with this one: `(k + 2) mod 4`.
    pub fn opposite(self) -> Side {
        self.rotated(2)
    }

    /// Lower-case name, as in documents: `south`, `east`, `north`, `west`.
    pub fn name(self) -> &'static str {
        match self {
            Side::South => "south",
            Side::East => "east",
            Side::North => "north",
            Side::West => "west",
        }
    }

    /// The side of a lower-case [`Side::name`], or `None`.
    pub fn from_name(name: &str) -> Option<Side> {
        Side::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Unit direction of increasing arc position `s` (patch frame).
    pub fn direction(self) -> [f64; 2] {
        match self {
            Side::South => [1.0, 0.0],
            Side::East => [0.0, 1.0],
            Side::North => [-1.0, 0.0],
            Side::West => [0.0, -1.0],
        }
    }

    /// Unit normal pointing into the patch (patch frame).
    pub fn inward_normal(self) -> [f64; 2] {
        match self {
            Side::South => [0.0, 1.0],
            Side::East => [-1.0, 0.0],
            Side::North => [0.0, -1.0],
            Side::West => [1.0, 0.0],
        }
    }

    /// Position `[m]` (patch frame) of arc position `s` `[m]` on this side of a
    /// patch of side `size` `[m]`.
    pub fn point(self, s: f64, size: f64) -> [f64; 2] {
        match self {
            Side::South => [s, 0.0],
            Side::East => [size, s],
            Side::North => [size - s, size],
            Side::West => [0.0, size - s],
        }
    }
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One value per side, indexable by [`Side`]; serialised as
/// `{"south": …, "east": …, "north": …, "west": …}`.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Sides<T> {
    /// Side 0.
    pub south: T,
    /// Side 1.
    pub east: T,
    /// Side 2.
    pub north: T,
    /// Side 3.
    pub west: T,
}

impl<T> Sides<T> {
    /// Builds the four values from a function of the side.
    pub fn from_fn(mut f: impl FnMut(Side) -> T) -> Self {
        Sides { south: f(Side::South), east: f(Side::East), north: f(Side::North), west: f(Side::West) }
    }

    /// The sides with their values, in counter-clockwise order.
    pub fn iter(&self) -> impl Iterator<Item = (Side, &T)> {
        Side::ALL.into_iter().map(move |s| (s, &self[s]))
    }

    /// Maps every value.
    pub fn map<U>(&self, mut f: impl FnMut(Side, &T) -> U) -> Sides<U> {
        Sides::from_fn(|s| f(s, &self[s]))
    }
}

impl<T> Index<Side> for Sides<T> {
    type Output = T;
    fn index(&self, side: Side) -> &T {
        match side {
            Side::South => &self.south,
            Side::East => &self.east,
            Side::North => &self.north,
            Side::West => &self.west,
        }
    }
}

impl<T> IndexMut<Side> for Sides<T> {
    fn index_mut(&mut self, side: Side) -> &mut T {
        match side {
            Side::South => &mut self.south,
            Side::East => &mut self.east,
            Side::North => &mut self.north,
            Side::West => &mut self.west,
        }
    }
}

/// A boundary point as baked: where and when an agent crosses a side, and with
/// which velocity.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct BakedPoint {
    /// Arc position along the side `[m]` `[Limit: 0 ≤ s ≤ size]`.
    pub s: f64,
    /// Crossing time `[s]` `[Limit: 0 ≤ t < period]`.
    pub t: f64,
    /// Velocity of the crossing agent `[m/s]`, patch frame: points into the
    /// patch for an entry, out of it for an exit.
    pub velocity: [f64; 2],
    /// The gait of the crossing character (skeletal bakes only): which foot
    /// plants at `t`, step duration and length, by the seam convention of
    /// [`crate::skeletal`].
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub gait: Option<BoundaryGait>,
    /// The walking group the crossing agent belongs to: points of one side
    /// and direction with the same id are the members of one group, who
    /// cross together (absent: the agent walks alone). Ids are the side's
    /// own; the mirror rule keeps them across a seam.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub group: Option<u32>,
}

/// The boundary conditions of one side as baked.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct BakedPattern {
    /// Entry points: agents come in here.
    pub entries: Vec<BakedPoint>,
    /// Exit points: agents leave here.
    pub exits: Vec<BakedPoint>,
}

/// Which boundary point of which side: `patterns[side].entries[index]` or
/// `.exits[index]`, depending on context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct PointRef {
    /// The side.
    pub side: Side,
    /// Index into that side's entries or exits.
    pub index: usize,
}

/// A static obstacle, in the patch frame.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Obstacle {
    /// A disc.
    Circle {
        /// Centre `[m]`.
        center: [f64; 2],
        /// Radius `[m]` `[Limit: > 0]`.
        radius: f64,
    },
    /// A simple polygon, vertices in order (either winding) `[m]`
    /// `[Limit: ≥ 3 vertices, not self-intersecting]`.
    Polygon(Vec<[f64; 2]>),
}

/// One key of an agent path: where the agent is at time `t` and which way it
/// faces.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct PathKey {
    /// Unwrapped time `[s]`; strictly increasing along a path.
    pub t: f64,
    /// Position `[m]`, patch frame.
    pub position: [f64; 2],
    /// Heading `[rad]`: angle of the facing direction from +x towards +y,
    /// in `(−π, π]`.
    pub heading: f64,
}

/// What kind of agent a path belongs to.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum AgentKind {
    /// Enters the patch at an entry point and leaves it at an exit point.
    Exogenous {
        /// The entry point it starts at.
        entry: PointRef,
        /// The exit point it ends at.
        exit: PointRef,
    },
    /// Stays inside the patch for the whole period; its path is a loop.
    Endogenous {
        /// Index into the patch document's `endogenous` list.
        index: usize,
    },
}

/// One agent of a baked patch.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct BakedAgent {
    /// Exogenous (with its boundary points) or endogenous.
    pub kind: AgentKind,
    /// The path: at least two keys, strictly increasing unwrapped times.
    /// Positions are linear between keys; headings interpolate the short way.
    pub keys: Vec<PathKey>,
}

impl BakedAgent {
    /// First time of the path `[s]`.
    ///
    /// # Panics
    /// If the path has no key.
    pub fn start(&self) -> f64 {
        self.keys[0].t
    }

    /// Last time of the path `[s]`.
    ///
    /// # Panics
    /// If the path has no key.
    pub fn end(&self) -> f64 {
        self.keys[self.keys.len() - 1].t
    }

    /// The instances of this agent: the integers `k` such that the play
    /// window `[kπ, (k+1)π)` meets the path's interval. At play time
    /// `τ ∈ [0, π)` instance `k` shows the path at `τ + kπ` when that lies in
    /// the interval, and is hidden otherwise.
    ///
    /// An endogenous loop `[t₀, t₀+π]` with `t₀ > 0` has two instances that
    /// together show it all the time, never both at once.
    pub fn instances(&self, period: f64) -> Range<i64> {
        let first = (self.start() / period).floor() as i64;
        // The last window that holds a time of the path strictly before its end
        // (an end exactly on kπ is shown by the next loop of window k − 1).
        let last_open = ((self.end() / period).ceil() as i64 - 1).max(first);
        first..last_open + 1
    }

    /// Whether the first instance also shows the last one's window: the
    /// agent meets two windows or more, and the last window's part of the
    /// path, play times `[0, end − k₁π)`, ends at least [`MIN_HIDDEN`]
    /// before the first window's part begins, at `start − k₀π` (the
    /// instance moves from the path's end to its start while hidden; a
    /// walker crossing in exactly one period has no such time). That
    /// instance then shows the path at `τ + k₁π` before
    /// [`BakedAgent::split`] and at `τ + k₀π` from it on: one instance
    /// fewer, and no new jump (at the loop point it goes from window k₀'s
    /// end to window k₁'s start, which is where the agent is when
    /// k₁ = k₀ + 1, and where window k₀ + 1's instance was otherwise). On
    /// the shipped patches 10–23 % of the instances. O(1).
    pub fn last_on_first(&self, period: f64) -> bool {
        let r = self.instances(period);
        let (until, from) = self.hidden(period);
        r.end - r.start >= 2 && until <= from - MIN_HIDDEN
    }

    /// Play time `[s]` at which an instance showing the last window and the
    /// first ([`BakedAgent::last_on_first`]) turns from one to the other:
    /// the middle of the time it is hidden, at least [`MIN_HIDDEN`] / 2 from
    /// either part, so that rounding a key time (to `f32`, or to a
    /// compressor's grid) never moves a key across it.
    pub fn split(&self, period: f64) -> f64 {
        let (until, from) = self.hidden(period);
        0.5 * (until + from)
    }

    /// Play times `[s]` at which the last window's part of the path ends
    /// (`end − k₁π`) and the first window's part begins (`start − k₀π`).
    pub fn hidden(&self, period: f64) -> (f64, f64) {
        let r = self.instances(period);
        hidden_parts([self.start(), self.end()], r.start, r.end - 1, period)
    }

    /// The instances as a file holds them, in order: per instance the
    /// window `k` it shows (from its split on), and the window it shows
    /// before its split, `Some(k₁)` for a first instance also showing the
    /// last window ([`BakedAgent::last_on_first`]), which then has no
    /// instance of its own. O(windows).
    pub fn instance_windows(&self, period: f64) -> Vec<(i64, Option<i64>)> {
        let r = self.instances(period);
        if !self.last_on_first(period) {
            return r.map(|k| (k, None)).collect();
        }
        let (first, last) = (r.start, r.end - 1);
        (first..last).map(|k| (k, (k == first).then_some(last))).collect()
    }

    /// The agent's record in a file's extras, given the node of each
    /// instance of [`BakedAgent::instance_windows`] in order: the first
    /// node listed again last where the first instance also shows the last
    /// window (since format 2).
    pub fn extras(&self, period: f64, mut nodes: Vec<usize>, footsteps: Option<Vec<Footstep>>) -> AgentExtras {
        if self.last_on_first(period) && !nodes.is_empty() {
            nodes.push(nodes[0]);
        }
        AgentExtras {
            kind: self.kind,
            interval: [self.start(), self.end()],
            first_instance: self.instances(period).start,
            nodes,
            footsteps,
        }
    }

    /// Position `[m]` and heading `[rad]` at unwrapped time `t` `[s]`, or
    /// `None` outside `[start, end]`. O(log n) in the number of keys.
    pub fn sample(&self, t: f64) -> Option<([f64; 2], f64)> {
        let keys = &self.keys;
        if keys.is_empty() || t < keys[0].t || t > keys[keys.len() - 1].t {
            return None;
        }
        let i = keys.partition_point(|k| k.t <= t);
        if i == 0 {
            return Some((keys[0].position, keys[0].heading));
        }
        if i >= keys.len() {
            let k = keys[keys.len() - 1];
            return Some((k.position, k.heading));
        }
        let (a, b) = (keys[i - 1], keys[i]);
        let u = (t - a.t) / (b.t - a.t);
        let p =
            [a.position[0] + (b.position[0] - a.position[0]) * u, a.position[1] + (b.position[1] - a.position[1]) * u];
        Some((p, lerp_angle(a.heading, b.heading, u)))
    }
}

/// Interpolates from angle `a` to angle `b` `[rad]` the short way round,
/// `u ∈ [0, 1]`; the result is in `(−π, π]`.
pub fn lerp_angle(a: f64, b: f64, u: f64) -> f64 {
    let tau = std::f64::consts::TAU;
    let mut d = (b - a) % tau;
    if d > std::f64::consts::PI {
        d -= tau;
    } else if d <= -std::f64::consts::PI {
        d += tau;
    }
    wrap_angle(a + d * u)
}

/// Wraps an angle `[rad]` into `(−π, π]`.
pub fn wrap_angle(a: f64) -> f64 {
    let tau = std::f64::consts::TAU;
    let mut w = a % tau;
    if w > std::f64::consts::PI {
        w -= tau;
    } else if w <= -std::f64::consts::PI {
        w += tau;
    }
    w
}

/// The parameters every patch carries, from its document through the bake
/// to the baked file (flattened into [`BakedPatch`] and [`SceneExtras`]).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct PatchHeader {
    /// Name of the patch (may be empty).
    pub name: String,
    /// Side length L of the square `[m]` `[Limit: > 0]`.
    pub size: f64,
    /// Period π of the motion `[s]` `[Limit: > 0]`.
    pub period: f64,
    /// Agent radius r `[m]` `[Limit: 0 < r < L/4]`; agents are collision-free
    /// when their centres stay 2r apart.
    pub agent_radius: f64,
    /// Comfort speed u_cft `[m/s]` `[Limit: > 0]`.
    pub comfort_speed: f64,
    /// Seed of the bake's random choices.
    pub seed: u64,
}

/// A baked crowd patch: everything a game needs to play it.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct BakedPatch {
    /// Format version, [`FORMAT_VERSION`].
    pub format: u32,
    /// Name, side length, period, agent radius, comfort speed and seed.
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub header: PatchHeader,
    /// The four patterns as baked, velocities included (patch frame).
    pub patterns: Sides<BakedPattern>,
    /// Static obstacles.
    pub obstacles: Vec<Obstacle>,
    /// All agents: exogenous ones first, in matching order, then endogenous.
    pub agents: Vec<BakedAgent>,
    /// Skeletal animation of the agents (character, joint tracks,
    /// footsteps); `None` when the agents are played as discs.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub skeletal: Option<Box<SkeletalAnimation>>,
}

/// How an agent appears in a baked GLB: the `extras.crowdpatch.agents[i]`
/// record.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct AgentExtras {
    /// Exogenous (with its boundary points) or endogenous.
    pub kind: AgentKind,
    /// The path's unwrapped time interval `[start, end]` `[s]`.
    pub interval: [f64; 2],
    /// Period index `k` of the first instance (see [`BakedAgent::instances`]).
    pub first_instance: i64,
    /// glTF node index of each instance, in instance order. The last equals
    /// the first where the first instance also shows the last window
    /// ([`BakedAgent::last_on_first`]; since format 2).
    pub nodes: Vec<usize>,
    /// The agent's foot plants (skeletal bakes only; possibly empty for a
    /// standing agent), unwrapped times on the path's clock.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub footsteps: Option<Vec<Footstep>>,
}

/// The `extras.crowdpatch` object on the scene of a baked GLB: what a game
/// needs beside the animation to play and tile the patch.
///
/// A file also holds the bake's quality figures, `metrics` (authoring data,
/// as the bake's report has them; required before format 3, optional since);
/// reading skips them, so that a loaded tile keeps no figure it never uses.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct SceneExtras {
    /// Format version, [`FORMAT_VERSION`].
    pub format: u32,
    /// Name, side length, period, agent radius, comfort speed and seed.
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub header: PatchHeader,
    /// The four baked patterns, velocities included (patch frame).
    pub patterns: Sides<BakedPattern>,
    /// Static obstacles (patch frame).
    pub obstacles: Vec<Obstacle>,
    /// One record per agent, in [`BakedPatch::agents`] order.
    pub agents: Vec<AgentExtras>,
    /// The character of a skeletal bake: joint names, feet, hips, and the
    /// gait convention at boundary points.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub character: Option<CharacterExtras>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(times: &[f64]) -> BakedAgent {
        BakedAgent {
            kind: AgentKind::Endogenous { index: 0 },
            keys: times.iter().map(|&t| PathKey { t, position: [t, 2.0 * t], heading: 0.0 }).collect(),
        }
    }

    #[test]
    fn instances_cover_the_interval() {
        assert_eq!(agent(&[2.0, 8.0]).instances(10.0), 0..1);
        assert_eq!(agent(&[8.0, 13.0]).instances(10.0), 0..2);
        assert_eq!(agent(&[8.0, 20.0]).instances(10.0), 0..2);
        assert_eq!(agent(&[8.0, 20.5]).instances(10.0), 0..3);
        assert_eq!(agent(&[0.0, 10.0]).instances(10.0), 0..1);
    }

    #[test]
    fn the_first_instance_shows_the_last_window_only_with_time_to_move_hidden() {
        // [8, 23] at period 10: windows 0, 1, 2; the last window's part is
        // play times [0, 3), the first's [8, 10): hidden from 3 to 8.
        let a = agent(&[8.0, 23.0]);
        assert!(a.last_on_first(10.0));
        assert_eq!(a.hidden(10.0), (3.0, 8.0));
        assert_eq!(a.split(10.0), 5.5);
        // Crossing in exactly one period: the parts meet, nothing hidden.
        let b = agent(&[8.0, 18.0]);
        assert_eq!(b.hidden(10.0), (8.0, 8.0));
        assert!(!b.last_on_first(10.0));
        // Within a millisecond: not enough time to move while hidden.
        assert!(!agent(&[8.0, 17.9995]).last_on_first(10.0));
        assert!(agent(&[8.0, 17.998]).last_on_first(10.0));
        // Overlapping parts, and a single window: no.
        assert!(!agent(&[8.0, 19.0]).last_on_first(10.0));
        assert!(!agent(&[2.0, 8.0]).last_on_first(10.0));
        // A path ending exactly on a window's end has no part in the next.
        let c = agent(&[8.0, 20.0]);
        assert_eq!(c.instances(10.0), 0..2);
        assert!(!c.last_on_first(10.0));
    }

    #[test]
    fn sample_interpolates_linearly() {
        let a = agent(&[1.0, 3.0, 4.0]);
        assert_eq!(a.sample(0.5), None);
        assert_eq!(a.sample(2.0).unwrap().0, [2.0, 4.0]);
        assert_eq!(a.sample(4.0).unwrap().0, [4.0, 8.0]);
        assert_eq!(a.sample(4.5), None);
    }

    #[test]
    fn angles_interpolate_the_short_way() {
        let a = lerp_angle(3.0, -3.0, 0.5);
        assert!((a.abs() - std::f64::consts::PI).abs() < 1e-12, "{a}");
        assert!((lerp_angle(0.5, 1.5, 0.5) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn side_geometry_is_counter_clockwise() {
        let l = 16.0;
        for side in Side::ALL {
            let a = side.point(0.0, l);
            let b = side.point(l, l);
            let d = side.direction();
            assert_eq!([b[0] - a[0], b[1] - a[1]], [d[0] * l, d[1] * l]);
            let n = side.inward_normal();
            // Inward normal is the direction rotated a quarter turn counter-clockwise.
            assert_eq!(n, [-d[1], d[0]]);
            assert_eq!(side.rotated(4), side);
            assert_eq!(side.opposite().opposite(), side);
            // The next side starts where this one ends.
            assert_eq!(side.rotated(1).point(0.0, l), b);
        }
    }
}
