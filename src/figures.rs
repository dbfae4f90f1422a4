//! The quality figures of a bake as plain data: what [`crate::metrics`],
//! [`crate::realism`] and [`crate::animation::metrics`] compute, what the
//! report ([`crate::report::Report::metrics`]) and the baked GLB's
//! `extras.crowdpatch.metrics` hold (docs/design.md "Metrics"). Authoring
//! figures only: the runtime's playback types carry none of them.
//!
//! A module of its own that names nothing else of the crate, so that every
//! stage that computes a figure may name its type without an import cycle.
//! Read them as `crowdpatch::metrics::{Metrics, SpeedStats, …}`.

use serde::{Deserialize, Serialize};

/// Instance pairs closer than the collision threshold, and how long.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct CollisionStats {
    /// Number of colliding agent-instance pairs (each pair of paths and
    /// relative period shift counted once).
    pub count: usize,
    /// Total time `[s]` during which such pairs overlap, summed over pairs.
    pub overlap_time: f64,
}

/// How far path ends are from their boundary points.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct BoundaryError {
    /// Largest position error `[m]`.
    pub position: f64,
    /// Largest time error `[s]` (modulo the period).
    pub time: f64,
}

/// Speed statistics, time-weighted over all agents' paths.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct SpeedStats {
    /// Time-weighted mean speed `[m/s]`.
    pub mean: f64,
    /// 5th percentile `[m/s]`.
    pub p5: f64,
    /// 95th percentile `[m/s]`.
    pub p95: f64,
    /// Largest speed `[m/s]`.
    pub max: f64,
    /// Time-weighted mean of |u − u_cft| `[m/s]`.
    pub mean_comfort_deviation: f64,
}

/// Heading change rate statistics on the final paths.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct TurnRateStats {
    /// Largest heading change rate `[rad/s]`.
    pub max: f64,
    /// 95th percentile, time-weighted `[rad/s]`.
    pub p95: f64,
}

/// Quality figures of a baked patch (docs/design.md "Metrics").
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Metrics {
    /// Minimum centre distance over all coexisting agent-instance pairs `[m]`;
    /// `None` when no two instances ever coexist. Collision-free iff ≥ 2r.
    pub min_separation: Option<f64>,
    /// Minimum distance from an agent centre to an obstacle surface `[m]`
    /// (≥ r when clear); `None` without obstacles.
    pub obstacle_clearance: Option<f64>,
    /// Minimum centre distance from an agent to a *ghost*, the neighbour
    /// tile's agent crossing a shared side `[m]` (≥ 2r when seams are clear);
    /// `None` when no agent ever meets a ghost.
    pub seam_clearance: Option<f64>,
    /// Agent-instance pairs closer than 2r.
    pub collisions: CollisionStats,
    /// Distance of path ends from their boundary points.
    pub boundary_error: BoundaryError,
    /// Speed statistics.
    pub speed: SpeedStats,
    /// Turn-rate statistics.
    pub turn_rate: TurnRateStats,
    /// Fraction of the 1 m cells of the patch visited by an agent centre
    /// during the period, in `[0, 1]`.
    pub coverage: f64,
    /// Mean horizontal speed of a planted foot `[m/s]`; `None` without
    /// skeletal animation.
    #[serde(default)]
    pub foot_skate: Option<f64>,
    /// Footstep and skeletal-animation figures; `None` without skeletal
    /// animation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub animation: Option<AnimationMetrics>,
    /// How the crowd compares with real pedestrians (docs/design.md
    /// "Realism"); `None` in files baked before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub realism: Option<RealismMetrics>,
}

impl Metrics {
    /// The figures as JSON, as a baked GLB holds them in
    /// `extras.crowdpatch.metrics` and the report in `metrics`: what an
    /// exporter is given to write beside the baked patch
    /// (`crowdpatch_gltf::write_glb`). A non-finite number becomes `null`.
    /// O(size of the figures).
    ///
    /// # Panics
    /// Never: the figures are numbers, strings and lists.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("metrics are numbers, strings and lists")
    }
}

/// Order statistics of a set of samples.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Distribution {
    /// Number of samples.
    pub count: usize,
    /// 5th percentile.
    pub p5: f64,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// Largest sample.
    pub max: f64,
}

/// Statistics of walkers' trajectories sampled at a fixed interval, in the
/// manner of the ETH/UCY pedestrian sets (docs/design.md "Realism"): the same
/// definitions serve the bake and the real crowds it is compared with.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CrowdStats {
    /// Sampling interval `[s]`.
    pub sample_interval: f64,
    /// Speed over each sampling interval `[m/s]`.
    pub speed: Distribution,
    /// Heading change between consecutive moving intervals over the
    /// sampling interval `[rad/s]`.
    pub turn_rate: Distribution,
    /// Turn rate times the mean speed of the two intervals: the lateral
    /// acceleration of each turn `[m/s²]`.
    #[serde(default)]
    pub lateral_acceleration: Distribution,
    /// Path length over the straight distance between a walker's first and
    /// last samples (walkers going 2 m or more) `[1]`.
    pub detour: Distribution,
    /// Distance from each walker to its nearest neighbour at each sample
    /// time `[m]`.
    pub nearest_neighbour: Distribution,
}

/// The realism report of a bake: its crowd statistics, their distance to
/// real pedestrians, and the floor its boundary conditions impose.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RealismMetrics {
    /// The baked walkers' statistics at the reference's sampling interval.
    pub crowd: CrowdStats,
    /// Turn rate as a glTF player shows the baked paths, sampled at 25 Hz
    /// `[rad/s]`.
    pub turn_rate_played: Distribution,
    /// Kolmogorov–Smirnov distance between the speed samples and the pooled
    /// reference speeds, in `[0, 1]`.
    pub speed_ks: f64,
    /// The reference compared with (its name in the reference table).
    pub reference: String,
    /// Mean speed `[m/s]` of each exogenous walker's straight walk from its
    /// entry to its exit in the time it has, extra periods included: what the
    /// boundary conditions ask before any solver runs (time-weighted over
    /// walkers).
    pub floor_speed: Distribution,
    /// Each exogenous walker's preferred walking speed `[m/s]`.
    pub preferred_speed: Distribution,
    /// The turn bound: lateral acceleration `[m/s²]` above which a turn is
    /// sharper than real pedestrians make at that speed (`ω > a / v`).
    #[serde(default)]
    pub turn_bound: f64,
    /// Share of the turns above the turn bound, sampled at the reference's
    /// interval `[1]` (the real pedestrians: 1 % by the bound's definition).
    #[serde(default)]
    pub over_turn_bound: f64,
    /// Share of the turns above the turn bound as a glTF player shows them,
    /// sampled at 25 Hz `[1]`.
    #[serde(default)]
    pub over_turn_bound_played: f64,
    /// The walking groups' statistics of the baked walkers (a group: the
    /// walkers whose entry points carry one group id of one side), to set
    /// beside the real scenes' (`data/groups.json`); share 0 and no figure
    /// of groups when every walker walks alone.
    #[serde(default)]
    pub groups: GroupStats,
}

/// The 10th, 50th and 90th percentiles of a set of samples (nearest rank).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Spread {
    /// Number of samples (at least 1 where a `Spread` is given).
    pub count: usize,
    /// 10th percentile.
    pub p10: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
}

/// How the members of groups of one size walk side by side
/// (docs/design.md "Walking groups").
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct FormationStats {
    /// Distance between members `[m]`: the edges of the members' minimum
    /// spanning tree at each walking sample (a pair: its one distance; a
    /// triad: its two shortest). `None` when no group of this size walked.
    pub spacing: Option<Spread>,
    /// Angle `[deg]` in `[0, 90]` between each of those edges and the
    /// group's walking direction (90 = abreast, 0 = in line). `None` as
    /// `spacing`.
    pub angle_deg: Option<Spread>,
}

/// Group statistics of walkers with group membership: the ETH/UCY scenes
/// with group annotations and a bake's walkers alike (docs/design.md
/// "Walking groups"; `pedestrians::groups`). Empty figures are `None` or 0,
/// never NaN.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GroupStats {
    /// Sampling interval `[s]`.
    pub sample_interval: f64,
    /// Walkers (distinct ids).
    pub walkers: usize,
    /// Walkers in a group of two or more.
    pub walkers_in_groups: usize,
    /// `walkers_in_groups / walkers` `[1]`; 0 when there are no walkers.
    pub share_in_groups: f64,
    /// Groups of two or more (overlapping annotated groups merged).
    pub groups: usize,
    /// Number of groups of each size (size → groups).
    pub sizes: std::collections::BTreeMap<usize, usize>,
    /// Share of the groups that are pairs `[1]`; `None` when there is no
    /// group.
    pub pair_share: Option<f64>,
    /// Pairs' spacing and angle.
    pub pairs: FormationStats,
    /// Triads' spacing and angle.
    pub triads: FormationStats,
    /// Median walking speed `[m/s]` (samples at 0.3 m/s or more) of walkers
    /// in groups; `None` when there is no such sample.
    pub group_speed: Option<f64>,
    /// Median walking speed `[m/s]` of walkers alone; `None` likewise.
    pub single_speed: Option<f64>,
    /// `group_speed / single_speed` `[1]`: below 1 when groups walk slower;
    /// `None` when either is.
    pub speed_ratio: Option<f64>,
}

/// Quality figures of footsteps and skeletal animation.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AnimationMetrics {
    /// Character played.
    pub character: String,
    /// Number of footsteps planned (all agents).
    pub footsteps: usize,
    /// Mean horizontal speed of a planted foot joint `[m/s]`, sampled over
    /// every planted interval of the synthesised animation.
    pub foot_skate: f64,
    /// Largest horizontal speed of a planted foot joint `[m/s]`.
    pub foot_skate_max: f64,
    /// Mean |planned − synthesised| footstep landing time `[s]`.
    pub timing_error_mean: f64,
    /// Largest footstep timing error `[s]`.
    pub timing_error_max: f64,
    /// Mean distance of the synthesised footstep landings from the planned
    /// ones `[m]`.
    pub landing_error_mean: f64,
    /// Mean horizontal distance of the root (hips on the ground) from the
    /// baked path `[m]`, time-weighted.
    pub root_deviation_mean: f64,
    /// 95th percentile of the root deviation `[m]`.
    pub root_deviation_p95: f64,
    /// Largest root deviation `[m]`.
    pub root_deviation_max: f64,
    /// Step length: mean, p5 and p95 `[m]`.
    pub step_length: [f64; 3],
    /// Cadence: mean, p5 and p95 `[steps/s]`.
    pub cadence: [f64; 3],
    /// Pairs of simultaneously planted feet of different agent instances
    /// closer than a foot length (they would overlap).
    pub foot_overlaps: usize,
    /// Largest speed of any joint between consecutive samples `[m/s]`: a
    /// jump in the motion (at a step boundary, a hand-over between instances
    /// or a loop point) would show here as an absurd speed.
    pub max_joint_speed: f64,
    /// 95th percentile over footsteps of the stance drift: how far a foot's
    /// contact joint moves horizontally from where it is at its plant until
    /// it lifts `[m]`.
    #[serde(default)]
    pub stance_drift_p95: f64,
    /// Largest stance drift of any footstep `[m]`.
    #[serde(default)]
    pub stance_drift_max: f64,
    /// Hip height over leg length of walking agents: least, 5th percentile
    /// and mean (natural walking keeps 0.9–1.0).
    #[serde(default)]
    pub hip_height_ratio: [f64; 3],
    /// Shortest step (landing along the facing from the stance foot) `[m]`.
    #[serde(default)]
    pub step_length_min: f64,
    /// Joint keys written in the GLB (rotation and translation channels;
    /// 0 where not reported: files written before it was measured).
    #[serde(default)]
    pub joint_keys: usize,
    /// Largest extremity position error of the written joint tracks against
    /// the synthesised samples `[m]` (the key reduction's error).
    #[serde(default)]
    pub key_position_error: f64,
    /// Largest local joint rotation error of the written tracks `[rad]`.
    #[serde(default)]
    pub key_rotation_error: f64,
    /// Largest horizontal error of a planted foot's joints in the written
    /// tracks `[m]`.
    #[serde(default)]
    pub key_contact_error: f64,
}
