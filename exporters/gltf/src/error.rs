//! The error type of the exporter.

/// Why a [`BakedPatch`](crowdpatch_runtime::BakedPatch) could not be written
/// as a GLB.
///
/// Every variant names what is wrong and where (an agent, an obstacle, a
/// field path such as `patterns.east.entries[3].t`), and says how to fix it.
/// The exporter checks its whole input before writing anything, so a bad
/// patch gives one of these errors and never a panic or a half-valid file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// The skeletal animation of a patch is inconsistent (track lengths,
    /// joint indices, non-finite numbers, …).
    #[error("skeletal animation: {path}: {reason}; re-bake the patch")]
    InvalidSkeletal {
        /// Where, e.g. `skeletal.agents[3].rotations`.
        path: String,
        /// What is wrong.
        reason: String,
    },

    /// The patch is in a baked format version this exporter does not write.
    #[error("baked format version {found} is not supported: this exporter writes format {expected}; re-bake the patch")]
    UnsupportedFormat {
        /// [`BakedPatch::format`](crowdpatch_runtime::BakedPatch::format) as given.
        found: u32,
        /// [`FORMAT_VERSION`](crowdpatch_runtime::FORMAT_VERSION).
        expected: u32,
    },

    /// A scalar parameter of the patch (`size`, `period`, `agent_radius`,
    /// `comfort_speed`) is out of its limits.
    #[error("{field} = {value} is invalid: it must be {expected}")]
    InvalidParameter {
        /// Field name in [`BakedPatch`](crowdpatch_runtime::BakedPatch).
        field: &'static str,
        /// The value given.
        value: f64,
        /// Its limits, e.g. `finite, > 0 and ≤ 1e6 m`.
        expected: &'static str,
    },

    /// A coordinate of a path key or an obstacle lies so far from the origin
    /// that the 32-bit floats of glTF would lose it, or a heading is so
    /// large that it has lost its precision.
    #[error("{path} = {value} is beyond ±{limit}: {why}")]
    OutOfRange {
        /// Where the number sits, e.g. `agents[2].keys[5].position[0]`.
        path: String,
        /// The value given.
        value: f64,
        /// The largest magnitude accepted (`[m]` or `[rad]`).
        limit: f64,
        /// Why there is a limit, and what to check.
        why: &'static str,
    },

    /// A number that ends up in the file (a boundary point, a path key) is
    /// NaN or infinite. glTF and JSON cannot hold it.
    #[error("{path} = {value} is not finite: every number of a baked patch must be finite")]
    NonFinite {
        /// Where the number sits, e.g. `agents[2].keys[5].position[0]` or
        /// `patterns.east.entries[3].t`.
        path: String,
        /// The value given.
        value: f64,
    },

    /// An agent's path has fewer than the two keys a path needs.
    #[error("agent {agent} has {count} path key(s): a path needs at least 2")]
    TooFewKeys {
        /// Index of the agent in `BakedPatch::agents`.
        agent: usize,
        /// Number of keys it has.
        count: usize,
    },

    /// An agent's path times do not strictly increase.
    #[error(
        "agent {agent}: key {key} has time {t} s, not after the previous key's {previous} s; path times must strictly increase"
    )]
    TimeNotIncreasing {
        /// Index of the agent in `BakedPatch::agents`.
        agent: usize,
        /// Index of the offending key.
        key: usize,
        /// Time of the key before it `[s]`.
        previous: f64,
        /// Its time `[s]`.
        t: f64,
    },

    /// An agent's path reaches too far from the period window `[0, π)` or
    /// spans too many periods: it would need more than
    /// [`MAX_INSTANCES_PER_AGENT`](crate::MAX_INSTANCES_PER_AGENT) instances
    /// (or times beyond ±10⁹ periods).
    #[error(
        "agent {agent}: its path [{start}, {end}] s spans too many periods of {period} s (at most {max} instances per agent, times within ±1e9 periods); check the path's times"
    )]
    PathTooLong {
        /// Index of the agent in `BakedPatch::agents`.
        agent: usize,
        /// First time of the path `[s]`.
        start: f64,
        /// Last time of the path `[s]`.
        end: f64,
        /// The patch period `[s]`.
        period: f64,
        /// The instance limit.
        max: usize,
    },

    /// The agents together have more instances (nodes) than one file may
    /// hold.
    #[error("the agents have {count} instances in all, more than the {max} a GLB may hold; split the patch")]
    TooManyInstances {
        /// Instances of all agents.
        count: usize,
        /// [`MAX_INSTANCES`](crate::MAX_INSTANCES).
        max: usize,
    },

    /// An obstacle cannot be turned into a mesh.
    #[error("obstacles[{obstacle}]: {reason}")]
    InvalidObstacle {
        /// Index of the obstacle in `BakedPatch::obstacles`.
        obstacle: usize,
        /// What is wrong with it and what is expected.
        reason: String,
    },

    /// An option of [`GlbOptions`](crate::GlbOptions) is out of its limits.
    #[error("GlbOptions::{option} = {value} is invalid: {expected}")]
    InvalidOption {
        /// Field name in [`GlbOptions`](crate::GlbOptions).
        option: &'static str,
        /// The value given.
        value: f64,
        /// Its limits.
        expected: &'static str,
    },

    /// Compression was asked for but this build cannot do it.
    #[error(
        "{compression} compression is not available: build crowdpatch-gltf with its `{feature}` feature (the \
         crowdpatch command line has it)"
    )]
    CompressionUnavailable {
        /// The compression asked for.
        compression: &'static str,
        /// The feature that provides it.
        feature: &'static str,
    },

    /// The compressor failed (should not happen; report it as a bug).
    #[error("meshopt compression of buffer view {view} failed: {reason}")]
    Compression {
        /// The buffer view.
        view: usize,
        /// The compressor's word.
        reason: String,
    },

    /// The joint keys written show a joint farther from the baked motion
    /// than the key tolerance allows: a tolerance below what 16-bit
    /// rotations hold with every sample a key (about 3·10⁻⁵ m per metre of
    /// chain, 6·10⁻⁵ rad), or a bug (the reduction keys every sample where
    /// a bound fails).
    #[error(
        "the joint keys stray past the key tolerance: {what} {value:.6} > {limit:.6} (even with every sample a key, \
         16-bit rotations move a joint by about 3e-5 m per metre of chain; a larger tolerance holds, otherwise \
         report this as a bug)"
    )]
    KeyBounds {
        /// Which error: `key_position_error [m]`, `key_rotation_error [rad]`
        /// or `key_contact_error [m]`.
        what: &'static str,
        /// The largest error measured.
        value: f64,
        /// The tolerance.
        limit: f64,
    },

    /// The file would exceed the 4 GiB a GLB container can address.
    #[error("the GLB would need {bytes} bytes, more than a GLB can hold (4 GiB); split the patch")]
    TooLarge {
        /// Bytes needed.
        bytes: u64,
    },

    /// The glTF JSON could not be serialised (should not happen with checked
    /// input; report it as a bug).
    #[error("could not serialise the glTF JSON")]
    Json {
        /// The serialiser's error.
        #[source]
        source: serde_json::Error,
    },

    /// The GLB container could not be written (should not happen when
    /// writing to memory; report it as a bug).
    #[error("could not write the GLB container")]
    Glb {
        /// The writer's error.
        #[source]
        source: gltf::Error,
    },
}
