//! The data model: pattern and patch documents as saved (`*.pattern.json`,
//! `*.patch.json`, docs/design.md "File formats"), the resolved [`Patch`] a bake
//! starts from, and their boundary points ([`Crossing`]).
//!
//! Frames and conventions (docs/design.md "Conventions"): SI units; patch frame with
//! origin at the south-west corner, x east, y north; sides south, east, north,
//! west in counter-clockwise order; a boundary point is `(side, s, t)` with
//! `s ∈ [0, L]` along the side's direction and `t ∈ [0, π)`.
//!
//! **Velocity frames.** A [`Pattern`] holds velocities in its *side frame*:
//! x along the side's direction of increasing `s`, y along the inward normal.
//! For the south side this is the patch frame; on side `k` the patch-frame
//! velocity is the side-frame one turned by `k` quarter turns. A pattern file
//! can therefore be put on any side. An *inline* side of a patch document gives
//! velocities in the patch frame (docs/design.md "Velocity frames"), and they are converted
//! on load.

use crate::field_path::FieldPath;
use crate::geometry::{Vec2, rotate_quarter, v2};
use serde::{Deserialize, Serialize};

pub use crowdpatch_runtime::format::{Obstacle, PatchHeader, Side, Sides};

/// The document format version this code reads and writes.
pub const DOCUMENT_FORMAT: u32 = 1;
pub use crate::pace::DEFAULT_COMFORT_SPEED;
/// Default agent radius r `[m]`.
pub const DEFAULT_AGENT_RADIUS: f64 = 0.3;

/// A boundary point as written in a document.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BoundaryPoint {
    /// Arc position along the side `[m]` `[Limit: 0 ≤ s ≤ L]`.
    pub s: f64,
    /// Crossing time `[s]` `[Limit: 0 ≤ t < π]`.
    pub t: f64,
    /// Optional crossing velocity `[m/s]` (side frame in a [`Pattern`], patch
    /// frame in an inline side). Entries must point inward, exits outward.
    /// When absent: the inward (entry) or outward (exit) normal at comfort speed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub velocity: Option<[f64; 2]>,
    /// Optional walking group (issue 31; docs/design.md "Walking groups"):
    /// the points of one side with the same id are the members of one
    /// group, one point a member, who enter (or leave) together — all
    /// entries or all exits, 2 to [`crate::validate::MAX_GROUP_SIZE`]
    /// members, neighbours along the side at most
    /// [`crate::validate::GROUP_SPACING`] apart, all crossing within
    /// [`crate::validate::GROUP_TIME_SPAN`]. An id names a group of its side
    /// only; the mirror rule keeps it (the group leaving one side is the
    /// group entering the neighbour). Absent: the walker is alone, and a
    /// document without groups is written as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<u32>,
}

/// Entry or exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Agents come into the patch here.
    Entry,
    /// Agents leave the patch here.
    Exit,
}

impl Direction {
    /// `entries` or `exits`, the document field holding such points.
    pub fn field(self) -> &'static str {
        match self {
            Direction::Entry => "entries",
            Direction::Exit => "exits",
        }
    }
}

/// A boundary point of a patch document: `sides.<side>.<entries|exits>[index]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PointId {
    /// The side.
    pub side: Side,
    /// Entry or exit.
    pub direction: Direction,
    /// Index in that side's entries or exits.
    pub index: usize,
}

impl PointId {
    /// The document path, e.g. `sides.east.entries[3]`.
    pub fn path(&self) -> FieldPath {
        FieldPath::new().field("sides").field(self.side.name()).field(self.direction.field()).index(self.index)
    }
}

/// The boundary conditions of one side of a patch (seed paper §3.1.2): its
/// entry and exit points over one period. Velocities are in the side frame
/// (see the module documentation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pattern {
    /// Optional name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Side length L `[m]` `[Limit: > 0]`.
    pub length: f64,
    /// Period π `[s]` `[Limit: > 0]`.
    pub period: f64,
    /// Entry points.
    #[serde(default)]
    pub entries: Vec<BoundaryPoint>,
    /// Exit points.
    #[serde(default)]
    pub exits: Vec<BoundaryPoint>,
}

impl Pattern {
    /// An empty pattern (no points).
    pub fn empty(length: f64, period: f64) -> Pattern {
        Pattern { name: None, length, period, entries: vec![], exits: vec![] }
    }

    /// The pattern the neighbour across this side must have (seed paper eq. 3,
    /// docs/design.md "Mirror rule"): the point `(s, t)` becomes `(L − s, t)`, entries
    /// and exits swap, and side-frame velocities turn by a half turn (the
    /// neighbour's side runs the other way and faces the other way), so the
    /// velocity is the same vector in the world.
    ///
    /// `p.mirror().mirror() == p` up to the rounding of `L − (L − s)`.
    pub fn mirror(&self) -> Pattern {
        let flip = |b: &BoundaryPoint| BoundaryPoint {
            s: self.length - b.s,
            t: b.t,
            velocity: b.velocity.map(|v| [-v[0], -v[1]]),
            group: b.group,
        };
        Pattern {
            name: self.name.as_ref().map(|n| match n.strip_suffix(" (mirror)") {
                Some(base) => base.to_string(),
                None => format!("{n} (mirror)"),
            }),
            length: self.length,
            period: self.period,
            entries: self.exits.iter().map(flip).collect(),
            exits: self.entries.iter().map(flip).collect(),
        }
    }

    /// Whether the pattern has as many entries as exits; any set of balanced
    /// patterns has parity.
    pub fn is_balanced(&self) -> bool {
        self.entries.len() == self.exits.len()
    }

    /// The points of one direction.
    pub fn points(&self, direction: Direction) -> &[BoundaryPoint] {
        match direction {
            Direction::Entry => &self.entries,
            Direction::Exit => &self.exits,
        }
    }

    /// Mutable access to the points of one direction.
    pub fn points_mut(&mut self, direction: Direction) -> &mut Vec<BoundaryPoint> {
        match direction {
            Direction::Entry => &mut self.entries,
            Direction::Exit => &mut self.exits,
        }
    }

    /// The same pattern with velocities re-expressed after `quarter_turns`
    /// counter-clockwise turns of their frame: turning a side-frame pattern by
    /// `k` gives its patch-frame velocities on side `k`, and by `−k` back.
    /// Four turns give the pattern back exactly.
    pub fn rotated(&self, quarter_turns: i32) -> Pattern {
        let turn = |b: &BoundaryPoint| BoundaryPoint {
            velocity: b.velocity.map(|v| crate::geometry::arr(rotate_quarter(v2(v), quarter_turns))),
            ..*b
        };
        Pattern {
            entries: self.entries.iter().map(turn).collect(),
            exits: self.exits.iter().map(turn).collect(),
            ..self.clone()
        }
    }
}

/// A `*.pattern.json` file: `{"format": 1, "name", "length", "period",
/// "entries": […], "exits": […]}`, velocities in the side frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PatternFile {
    /// Must be [`DOCUMENT_FORMAT`].
    pub format: u32,
    /// Optional name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Side length `[m]`.
    pub length: f64,
    /// Period `[s]`.
    pub period: f64,
    /// Entry points.
    #[serde(default)]
    pub entries: Vec<BoundaryPoint>,
    /// Exit points.
    #[serde(default)]
    pub exits: Vec<BoundaryPoint>,
}

impl From<PatternFile> for Pattern {
    fn from(f: PatternFile) -> Pattern {
        Pattern { name: f.name, length: f.length, period: f.period, entries: f.entries, exits: f.exits }
    }
}

impl From<&Pattern> for PatternFile {
    fn from(p: &Pattern) -> PatternFile {
        PatternFile {
            format: DOCUMENT_FORMAT,
            name: p.name.clone(),
            length: p.length,
            period: p.period,
            entries: p.entries.clone(),
            exits: p.exits.clone(),
        }
    }
}

/// One side of a patch document: either `{"pattern": "relative/path.pattern.json"}`
/// or an inline pattern `{"entries": […], "exits": […]}` whose velocities are
/// in the patch frame and whose `length`/`period`, if stated, must be the patch's.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SideDocument {
    /// Path of a pattern file, relative to the patch document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// Optional name of an inline pattern.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Optional length of an inline pattern (must equal the patch size) `[m]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length: Option<f64>,
    /// Optional period of an inline pattern (must equal the patch period) `[s]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<f64>,
    /// Inline entry points (patch-frame velocities).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<BoundaryPoint>>,
    /// Inline exit points (patch-frame velocities).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exits: Option<Vec<BoundaryPoint>>,
}

/// The `sides` object of a patch document; a side left out has no points.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SidesDocument {
    /// Side 0, (0,0)→(L,0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub south: Option<SideDocument>,
    /// Side 1, (L,0)→(L,L).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub east: Option<SideDocument>,
    /// Side 2, (L,L)→(0,L).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub north: Option<SideDocument>,
    /// Side 3, (0,L)→(0,0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub west: Option<SideDocument>,
}

impl SidesDocument {
    /// The side document of `side`, if any.
    pub fn get(&self, side: Side) -> Option<&SideDocument> {
        match side {
            Side::South => self.south.as_ref(),
            Side::East => self.east.as_ref(),
            Side::North => self.north.as_ref(),
            Side::West => self.west.as_ref(),
        }
    }

    /// Mutable access to the slot of `side`.
    pub fn slot_mut(&mut self, side: Side) -> &mut Option<SideDocument> {
        match side {
            Side::South => &mut self.south,
            Side::East => &mut self.east,
            Side::North => &mut self.north,
            Side::West => &mut self.west,
        }
    }
}

/// A waypoint of an endogenous agent's loop.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Waypoint {
    /// Position `[m]`, patch frame `[Limit: inside A, at least r from its sides]`.
    pub position: [f64; 2],
    /// Time `[s]`; strictly increasing along the list, the whole list spanning
    /// less than one period.
    pub t: f64,
}

/// An endogenous agent (seed paper §3.1.1): it stays inside the patch and
/// walks a loop through its waypoints, back at the first one a period after
/// it left it. One waypoint makes a standing agent. The waypoints seed the
/// initial path; collision removal may move them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Endogenous {
    /// Optional name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The loop's waypoints `[Limit: ≥ 1]`.
    pub waypoints: Vec<Waypoint>,
}

/// How entries are matched to exits (document and command-line names
/// `stable`, `optimal`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum MatchingMode {
    /// Gale–Shapley stable matching, entries proposing (seed paper Algorithm 1).
    #[default]
    Stable,
    /// Minimum total score assignment (Kuhn–Munkres).
    Optimal,
}

/// Which collision-removal solver runs (document and command-line names
/// `paper`, `default`, `greedy`, `social-forces`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum SolverKind {
    /// The seed paper's Algorithm 2 as written (spatial pushes of θ, weights
    /// 0 when a point would leave the patch), with the seed paper's initial
    /// paths: the in-run baseline.
    Paper,
    /// The project's solver: infeasibility test, pruned incremental distance
    /// matrix, smooth pushes in space and time, a linear-programming
    /// refinement where the greedy pass stalls and a polish of speed and turn
    /// artefacts, C¹ initial paths near comfort speed.
    #[default]
    Default,
    /// The project's solver without its linear-programming refinement and
    /// polish (greedy passes only): measures what the refinement buys.
    Greedy,
    /// The original crowd patches' adapted social forces (Yersin et al.
    /// 2009): particles attracted by a goal moving along the straight path,
    /// repelled by the others; a quality baseline, not guaranteed
    /// collision-free.
    SocialForces,
}

impl SolverKind {
    /// Every solver, in the order benchmarks show them.
    pub const ALL: [SolverKind; 4] =
        [SolverKind::Paper, SolverKind::Default, SolverKind::Greedy, SolverKind::SocialForces];

    /// The name in documents and on the command line (`paper`, `default`, …).
    pub fn name(self) -> &'static str {
        match self {
            SolverKind::Paper => "paper",
            SolverKind::Default => "default",
            SolverKind::Greedy => "greedy",
            SolverKind::SocialForces => "social-forces",
        }
    }
}

impl MatchingMode {
    /// Every matching mode.
    pub const ALL: [MatchingMode; 2] = [MatchingMode::Stable, MatchingMode::Optimal];

    /// The name in documents and on the command line (`stable`, `optimal`).
    pub fn name(self) -> &'static str {
        match self {
            MatchingMode::Stable => "stable",
            MatchingMode::Optimal => "optimal",
        }
    }
}

/// Parses a name from a list of named values; the error lists the names.
fn parse_named<T: Copy>(s: &str, all: &[T], name: impl Fn(T) -> &'static str, what: &str) -> Result<T, String> {
    all.iter().copied().find(|v| name(*v) == s).ok_or_else(|| {
        let names: Vec<&str> = all.iter().map(|v| name(*v)).collect();
        format!("{s:?} is not a {what}; expected one of {}", names.join(", "))
    })
}

impl std::str::FromStr for SolverKind {
    type Err = String;
    fn from_str(s: &str) -> Result<SolverKind, String> {
        parse_named(s, &SolverKind::ALL, SolverKind::name, "solver")
    }
}

impl std::str::FromStr for MatchingMode {
    type Err = String;
    fn from_str(s: &str) -> Result<MatchingMode, String> {
        parse_named(s, &MatchingMode::ALL, MatchingMode::name, "matching mode")
    }
}

impl std::fmt::Display for SolverKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::fmt::Display for MatchingMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Solver options of a patch document (`"solver": {…}`); every field is
/// optional.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SolverOptions {
    /// Matching mode.
    pub matching: MatchingMode,
    /// Collision-removal solver.
    pub method: SolverKind,
    /// Iteration cap of collision removal `[Limit: ≥ 1]`.
    pub max_iterations: usize,
    /// Clearance the solver aims for beyond 2r `[m]` `[Limit: 0 ≤ margin < r]`,
    /// so that smoothing and 32-bit export keep the result collision-free.
    pub margin: f64,
    /// Depth `[m]` of the straight *crossing stub* each agent walks with its
    /// boundary velocity on either side of a boundary point; `null` = r.
    /// With a stub of at least r, agents of neighbouring tiles never touch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stub_depth: Option<f64>,
    /// A pair whose speed exceeds `fast_factor × u_cft` gets extra periods
    /// `[Limit: > 1]`.
    pub fast_factor: f64,
    /// The seed paper's solver: a pair whose speed is below
    /// `slow_factor × u_cft` walks at comfort speed and pauses on the way
    /// `[Limit: 0 ≤ slow_factor < 1]`.
    pub slow_factor: f64,
    /// The project's solvers: a walker whose pace would drop below
    /// `wait_factor` × its preferred speed walks at that speed (never faster
    /// than [`crate::pace::STRIDE_CAP`], [`crate::pace::stride_speed`]) and
    /// stands still for the time it has to spare (people stop rather than
    /// crawl). Above 1 a walker with any time to spare walks briskly and
    /// stands longer (real crowds hold about 20 % of standing samples,
    /// docs/design.md "Realism"); a walker whose boundary velocity the
    /// document gives walks at that speed at most (the factor is capped at
    /// [`crate::pace::CALM_FACTOR`] for it) `[Limit: 0 ≤ wait_factor ≤ 2]`.
    pub wait_factor: f64,
    /// An existing control point within this time of a closest approach is
    /// moved instead of inserting a new one `[s]` `[Limit: ≥ 0]`.
    pub merge_interval: f64,
    /// Spline smoothing on/off (seed paper §3.5).
    pub smoothing: bool,
    /// Time between tacks for smoothing `[s]` `[Limit: > 0]`.
    pub tack_interval: f64,
    /// Largest distance a smoothed point may stray from the unsmoothed path
    /// `[m]`; `null` = r (the seed paper ties it to the collision threshold).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_deviation: Option<f64>,
}

impl Default for SolverOptions {
    fn default() -> Self {
        SolverOptions {
            matching: MatchingMode::Stable,
            method: SolverKind::Default,
            max_iterations: 5000,
            margin: 0.02,
            stub_depth: None,
            fast_factor: 1.5,
            slow_factor: 0.5,
            wait_factor: crate::pace::STRIDE_FACTOR,
            merge_interval: 0.1,
            smoothing: true,
            tack_interval: 0.5,
            max_deviation: None,
        }
    }
}

/// A `*.patch.json` document as saved (docs/design.md "File formats"). Pattern
/// references stay unresolved: [`PatchDocument::resolve`] makes a [`Patch`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PatchDocument {
    /// Must be [`DOCUMENT_FORMAT`].
    pub format: u32,
    /// Optional name (default: the file stem).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Side length L `[m]` `[Limit: > 0]`.
    pub size: f64,
    /// Period π `[s]` `[Limit: > 0]`.
    pub period: f64,
    /// Agent radius r `[m]` `[Limit: 0 < r < L/4]`; default 0.3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_radius: Option<f64>,
    /// Comfort speed u_cft `[m/s]` `[Limit: > 0]`; default 1.33.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comfort_speed: Option<f64>,
    /// Seed of the bake's random choices; default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The four sides.
    #[serde(default)]
    pub sides: SidesDocument,
    /// Static obstacles.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub obstacles: Vec<Obstacle>,
    /// Endogenous agents.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub endogenous: Vec<Endogenous>,
    /// Solver options.
    #[serde(default, skip_serializing_if = "is_default_solver")]
    pub solver: SolverOptions,
}

fn is_default_solver(s: &SolverOptions) -> bool {
    *s == SolverOptions::default()
}

impl PatchDocument {
    /// A new empty document with the default size, period and parameters.
    pub fn new(size: f64, period: f64) -> PatchDocument {
        PatchDocument {
            format: DOCUMENT_FORMAT,
            name: None,
            size,
            period,
            agent_radius: None,
            comfort_speed: None,
            seed: None,
            sides: SidesDocument::default(),
            obstacles: vec![],
            endogenous: vec![],
            solver: SolverOptions::default(),
        }
    }

    /// The document turned by `quarter_turns` quarter turns counter-clockwise
    /// about the patch centre: side `k` becomes side `k + q`, obstacles and
    /// waypoints turn about the centre, inline (patch-frame) velocities turn.
    /// Pattern files are side-frame and need no change. Four turns give the
    /// document back (up to the rounding of `L − (L − x)`).
    pub fn rotated(&self, quarter_turns: i32) -> PatchDocument {
        let q = quarter_turns.rem_euclid(4);
        let l = self.size;
        let turn_point = |p: [f64; 2]| -> [f64; 2] {
            match q {
                0 => p,
                1 => [l - p[1], p[0]],
                2 => [l - p[0], l - p[1]],
                _ => [p[1], l - p[0]],
            }
        };
        let turn_velocity = |b: &BoundaryPoint| BoundaryPoint {
            velocity: b.velocity.map(|v| crate::geometry::arr(rotate_quarter(v2(v), q))),
            ..*b
        };
        let mut sides = SidesDocument::default();
        for side in Side::ALL {
            let doc = self.sides.get(side).cloned().map(|mut d| {
                if d.pattern.is_none() {
                    d.entries = d.entries.map(|v| v.iter().map(turn_velocity).collect());
                    d.exits = d.exits.map(|v| v.iter().map(turn_velocity).collect());
                }
                d
            });
            *sides.slot_mut(side.rotated(q)) = doc;
        }
        PatchDocument {
            sides,
            obstacles: self
                .obstacles
                .iter()
                .map(|o| match o {
                    Obstacle::Circle { center, radius } => {
                        Obstacle::Circle { center: turn_point(*center), radius: *radius }
                    }
                    Obstacle::Polygon(vs) => Obstacle::Polygon(vs.iter().map(|v| turn_point(*v)).collect()),
                })
                .collect(),
            endogenous: self
                .endogenous
                .iter()
                .map(|e| Endogenous {
                    name: e.name.clone(),
                    waypoints: e
                        .waypoints
                        .iter()
                        .map(|w| Waypoint { position: turn_point(w.position), t: w.t })
                        .collect(),
                })
                .collect(),
            ..self.clone()
        }
    }
}

/// A resolved, validated patch: what a bake starts from.
#[derive(Debug, Clone, PartialEq)]
pub struct Patch {
    /// Name, side length L `[m]`, period π `[s]`, agent radius r `[m]`,
    /// comfort speed u_cft `[m/s]` and seed: the parameters a baked patch
    /// carries as well.
    pub header: PatchHeader,
    /// The four patterns, side-frame velocities.
    pub sides: Sides<Pattern>,
    /// Where each side's pattern came from (a file reference), if not inline.
    pub pattern_sources: Sides<Option<String>>,
    /// Static obstacles.
    pub obstacles: Vec<Obstacle>,
    /// Endogenous agents.
    pub endogenous: Vec<Endogenous>,
    /// Solver options.
    pub solver: SolverOptions,
}

/// A boundary point resolved in the patch frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Crossing {
    /// Side it lies on.
    pub side: Side,
    /// Entry or exit.
    pub direction: Direction,
    /// Index in that side's entries or exits.
    pub index: usize,
    /// Arc position `[m]`.
    pub s: f64,
    /// Time `[s]` in `[0, π)`.
    pub t: f64,
    /// Position `[m]`, patch frame.
    pub position: Vec2,
    /// Velocity `[m/s]`, patch frame (given or default).
    pub velocity: Vec2,
    /// Preferred walking speed `[m/s]` of the walker crossing here: the
    /// speed of the given velocity, else drawn by [`crate::pace`].
    pub preferred_speed: f64,
}

impl Crossing {
    /// The point's identity in the document.
    pub fn id(&self) -> PointId {
        PointId { side: self.side, direction: self.direction, index: self.index }
    }

    /// Document path of the point, e.g. `sides.east.entries[3]`.
    pub fn path(&self) -> FieldPath {
        self.id().path()
    }

    /// Speed across the side `[m/s]`: the inward component of the velocity
    /// for an entry, the outward one for an exit (positive when valid).
    pub fn normal_speed(&self) -> f64 {
        let n = v2(self.side.inward_normal());
        match self.direction {
            Direction::Entry => self.velocity.dot(&n),
            Direction::Exit => -self.velocity.dot(&n),
        }
    }

    /// Duration `[s]` of a straight walk at the boundary velocity that reaches
    /// `depth` `[m]` away from the side.
    pub fn time_to_depth(&self, depth: f64) -> f64 {
        depth / self.normal_speed().max(1e-6)
    }

    /// The crossing *stub* inside the patch: the straight space-time segment
    /// walked with the boundary velocity down to `depth` `[m]`, as
    /// `((p, t), (p, t))` in time order. Fixed during a bake.
    pub fn stub(&self, depth: f64) -> ((Vec2, f64), (Vec2, f64)) {
        let tau = self.time_to_depth(depth);
        match self.direction {
            Direction::Entry => ((self.position, self.t), (self.position + self.velocity * tau, self.t + tau)),
            Direction::Exit => ((self.position - self.velocity * tau, self.t - tau), (self.position, self.t)),
        }
    }

    /// The *ghost* outside the patch (docs/design.md "Seams"): the neighbour's
    /// agent crossing here, extrapolated along the boundary velocity until it is
    /// `depth` `[m]` (2r) away from the side; in time order.
    pub fn ghost(&self, depth: f64) -> ((Vec2, f64), (Vec2, f64)) {
        let tau = self.time_to_depth(depth);
        match self.direction {
            Direction::Entry => ((self.position - self.velocity * tau, self.t - tau), (self.position, self.t)),
            Direction::Exit => ((self.position, self.t), (self.position + self.velocity * tau, self.t + tau)),
        }
    }
}

impl Patch {
    /// The preferred speed `[m/s]` of the walker entering at `entry`: u_cft
    /// for the seed paper's solver, the walker's own
    /// ([`Crossing::preferred_speed`]) for the project's solvers.
    pub fn walker_speed(&self, entry: &Crossing) -> f64 {
        if self.solver.method == SolverKind::Paper { self.header.comfort_speed } else { entry.preferred_speed }
    }

    /// Whether the document gives the velocity of the boundary point
    /// `crossing` (so the speed of the walker crossing there is given, not
    /// drawn).
    pub fn velocity_given(&self, crossing: &Crossing) -> bool {
        self.sides[crossing.side].points(crossing.direction).get(crossing.index).is_some_and(|b| b.velocity.is_some())
    }

    /// Depth of the crossing stubs `[m]`: the solver option or r.
    pub fn stub_depth(&self) -> f64 {
        self.solver.stub_depth.unwrap_or(self.header.agent_radius)
    }

    /// Every boundary point in the patch frame: sides in order, entries then
    /// exits, by index.
    pub fn crossings(&self) -> Vec<Crossing> {
        let mut out = Vec::new();
        for side in Side::ALL {
            for direction in [Direction::Entry, Direction::Exit] {
                for (index, b) in self.sides[side].points(direction).iter().enumerate() {
                    out.push(self.crossing(side, direction, index, b));
                }
            }
        }
        out
    }

    /// The boundary points of one direction, in [`Patch::crossings`] order.
    pub fn crossings_of(&self, direction: Direction) -> Vec<Crossing> {
        self.crossings().into_iter().filter(|c| c.direction == direction).collect()
    }

    fn crossing(&self, side: Side, direction: Direction, index: usize, b: &BoundaryPoint) -> Crossing {
        let default = match direction {
            Direction::Entry => Vec2::new(0.0, self.header.comfort_speed),
            Direction::Exit => Vec2::new(0.0, -self.header.comfort_speed),
        };
        let local = b.velocity.map(v2).unwrap_or(default);
        let preferred_speed =
            match b.velocity {
                Some(v) => v[0].hypot(v[1]),
                None => crate::pace::SpeedDistribution::reference(self.header.comfort_speed)
                    .draw(crate::pace::walker_key(b.s, b.t, self.header.size)),
            };
        Crossing {
            preferred_speed,
            side,
            direction,
            index,
            s: b.s,
            t: b.t,
            position: v2(side.point(b.s, self.header.size)),
            velocity: rotate_quarter(local, side.index() as i32),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Vec2;

    use proptest::prelude::*;

    fn point() -> impl Strategy<Value = BoundaryPoint> {
        (0.0..16.0f64, 0.0..10.0f64, proptest::option::of((-2.0..2.0f64, 0.1..2.0f64)), proptest::option::of(0..3u32))
            .prop_map(|(s, t, v, group)| BoundaryPoint { s, t, velocity: v.map(|(a, b)| [a, b]), group })
    }

    fn pattern() -> impl Strategy<Value = Pattern> {
        (proptest::collection::vec(point(), 0..6), proptest::collection::vec(point(), 0..6)).prop_map(|(e, x)| {
            Pattern {
                name: None,
                length: 16.0,
                period: 10.0,
                // Exits point outward in the side frame.
                exits: x
                    .into_iter()
                    .map(|b| BoundaryPoint { velocity: b.velocity.map(|v| [v[0], -v[1]]), ..b })
                    .collect(),
                entries: e,
            }
        })
    }

    fn close(a: &Pattern, b: &Pattern) -> bool {
        let same = |p: &[BoundaryPoint], q: &[BoundaryPoint]| {
            p.len() == q.len()
                && p.iter().zip(q).all(|(x, y)| {
                    (x.s - y.s).abs() < 1e-12
                        && x.t == y.t
                        && match (x.velocity, y.velocity) {
                            (None, None) => true,
                            (Some(u), Some(v)) => u == v,
                            _ => false,
                        }
                })
        };
        same(&a.entries, &b.entries) && same(&a.exits, &b.exits) && a.length == b.length && a.period == b.period
    }

    #[test]
    fn names_parse_back_and_match_serde() {
        for k in SolverKind::ALL {
            assert_eq!(k.name().parse::<SolverKind>(), Ok(k));
            assert_eq!(serde_json::to_value(k).unwrap(), serde_json::Value::String(k.name().into()));
        }
        for m in MatchingMode::ALL {
            assert_eq!(m.name().parse::<MatchingMode>(), Ok(m));
            assert_eq!(serde_json::to_value(m).unwrap(), serde_json::Value::String(m.name().into()));
        }
        let e = "fast".parse::<SolverKind>().unwrap_err();
        assert!(e.contains("paper, default, greedy, social-forces"), "{e}");
    }

    proptest! {
        #[test]
        fn mirror_twice_is_identity(p in pattern()) {
            prop_assert!(close(&p.mirror().mirror(), &p));
        }

        #[test]
        fn four_quarter_turns_are_identity(p in pattern(), q in -3i32..4) {
            let mut r = p.clone();
            for _ in 0..4 { r = r.rotated(q); }
            prop_assert_eq!(&r, &p);
            prop_assert_eq!(&p.rotated(q).rotated(-q), &p);
        }

        /// The mirror rule, checked in the world: a point on side k of patch A
        /// and its mirror on side k + 2 of the neighbour B are the same place,
        /// time and velocity, with entry and exit swapped.
        #[test]
        fn a_mirror_pattern_meets_its_original_across_the_seam(p in pattern(), k in 0usize..4) {
            let l = 16.0;
            let side = Side::from_index(k);
            let offset = Vec2::from(side.inward_normal()) * -l; // B's origin in A's frame
            let world = |side: Side, b: &BoundaryPoint, origin: Vec2| {
                let pos = v2(side.point(b.s, l)) + origin;
                let vel = b.velocity.map(|v| rotate_quarter(v2(v), side.index() as i32));
                (pos, b.t, vel)
            };
            let m = p.mirror();
            for (a, b) in p.entries.iter().zip(&m.exits).chain(p.exits.iter().zip(&m.entries)) {
                let (pa, ta, va) = world(side, a, Vec2::zeros());
                let (pb, tb, vb) = world(side.opposite(), b, offset);
                prop_assert!((pa - pb).norm() < 1e-9, "{} vs {}", pa, pb);
                prop_assert_eq!(ta, tb);
                match (va, vb) {
                    (Some(u), Some(v)) => prop_assert!((u - v).norm() < 1e-12),
                    (None, None) => {}
                    _ => prop_assert!(false, "velocity lost"),
                }
            }
        }

        #[test]
        fn a_patch_turned_four_times_is_itself(q in 1i32..4, cx in 3.0..13.0f64, cy in 3.0..13.0f64, s in 1.0..15.0f64) {
            let text = format!(r#"{{"format":1,"size":16,"period":10,
                "sides":{{"south":{{"entries":[{{"s":{s},"t":1,"velocity":[0.3,1.2]}}]}},
                          "east":{{"pattern":"x.pattern.json"}},
                          "west":{{"exits":[{{"s":{s},"t":4}}]}}}},
                "obstacles":[{{"circle":{{"center":[{cx},{cy}],"radius":1}}}},{{"polygon":[[2,2],[3,2],[{cx},{cy}]]}}],
                "endogenous":[{{"waypoints":[{{"position":[{cy},{cx}],"t":2}}]}}]}}"#);
            let (doc, _) = PatchDocument::from_json(&text).unwrap();
            let mut r = doc.clone();
            for _ in 0..4 { r = r.rotated(q); }
            // Equal up to the rounding of L − (L − x).
            let a = serde_json::to_value(&r).unwrap();
            let b = serde_json::to_value(&doc).unwrap();
            prop_assert!(json_close(&a, &b), "{} vs {}", a, b);
            // One turn moves the south side to the east, with its velocity turned.
            let one = doc.rotated(1);
            let e = &one.sides.east.as_ref().unwrap().entries.as_ref().unwrap()[0];
            prop_assert_eq!(e.velocity, Some([-1.2, 0.3]));
            prop_assert_eq!(one.sides.north.as_ref().and_then(|d| d.pattern.clone()), Some("x.pattern.json".to_string()));
        }
    }

    fn json_close(a: &serde_json::Value, b: &serde_json::Value) -> bool {
        use serde_json::Value as V;
        match (a, b) {
            (V::Number(x), V::Number(y)) => (x.as_f64().unwrap() - y.as_f64().unwrap()).abs() < 1e-9,
            (V::Array(x), V::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_close(p, q)),
            (V::Object(x), V::Object(y)) => {
                x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_close(v, w)))
            }
            _ => a == b,
        }
    }
}
