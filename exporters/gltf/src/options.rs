//! What the exporter accepts: its options and limits.

/// Most instances written for one agent, i.e. most periods one path may
/// span. A longer path is rejected with [`crate::ExportError::PathTooLong`].
pub const MAX_INSTANCES_PER_AGENT: usize = 1024;

/// Most agent instances (nodes) written in all.
pub const MAX_INSTANCES: usize = 1 << 20;

/// Largest magnitude `[m]` accepted for a coordinate, the patch size or a
/// radius. glTF stores geometry as `f32`, whose spacing is about 1 mm at
/// 16 km and 6 cm at 1000 km: a patch reaching further is surely wrong.
pub const MAX_COORDINATE: f64 = 1e6;

/// How [`crate::write_glb`] shapes what the baked motion does not define.
#[derive(Debug, Clone, PartialEq)]
pub struct GlbOptions {
    /// Height of the extruded obstacles. `[Units: m]` `[Limit: > 0, ≤ 10⁴]`
    /// Default 0.8.
    pub obstacle_height: f64,
    /// Total height of the agent capsule, feet on `y = 0`; its radius is the
    /// patch's agent radius (a capsule lower than its diameter is a sphere).
    /// `[Units: m]` `[Limit: > 0, ≤ 10⁴]` Default 1.75.
    pub agent_height: f64,
    /// Whether to write the ground quad `[0, L]²` at `y = 0`. Default `true`.
    pub ground: bool,
    /// Sides of the cylinder of a circular obstacle.
    /// `[Limit: 24 ≤ n ≤ 4096]` Default 32.
    pub circle_segments: u32,
    /// Error bound of the skeletal joint tracks ([`crate::keys`]): keys are
    /// removed while every joint stays within it, rotations are stored as
    /// normalised 16-bit integers. `None` writes every baked sample as
    /// `f32` (the larger output of earlier versions). Default
    /// `Some(KeyTolerance::default())`.
    pub key_tolerance: Option<KeyTolerance>,
    /// Compression of the binary data. Default [`Compression::None`].
    pub compression: Compression,
}

/// The error a skeletal tile may show against the baked motion, measured on
/// every joint at every baked sample, world (instance-node) frame. Bounds
/// below the floor of 16-bit rotations (about 3·10⁻⁵ m per metre of chain,
/// 6·10⁻⁵ rad) cannot be held even with every sample a key: the export
/// fails with [`crate::ExportError::KeyBounds`] rather than write a file
/// past them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KeyTolerance {
    /// Largest position error of the extremities: the joints with no child
    /// (head, hands, toes for the built-in character) and the feet.
    /// `[Units: m]` `[Limit: > 0]` Default 0.001 (1 mm).
    pub position: f64,
    /// Largest joint rotation error (local). `[Units: rad]` `[Limit: > 0]`
    /// Default 0.5° (0.00873 rad).
    pub rotation: f64,
    /// Largest horizontal position error of the joints of a planted foot
    /// (the foot joint and those below it, while a footstep holds it: a
    /// slide). An error that changes from key to key shows as speed (error /
    /// key interval), so a planted foot gets a far tighter bound than the
    /// rest. `[Units: m]` `[Limit: > 0]` Default 0.0003 (0.3 mm).
    pub contact: f64,
}

impl Default for KeyTolerance {
    fn default() -> Self {
        KeyTolerance { position: 0.001, rotation: 0.5_f64.to_radians(), contact: 0.000_3 }
    }
}

/// How the binary chunk is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compression {
    /// Plain buffer views.
    #[default]
    None,
    /// The animation data compressed with `EXT_meshopt_compression`
    /// (meshoptimizer's attribute codec, version 0; rotations with its
    /// quaternion filter), for players that decode it (three.js with its
    /// meshopt decoder, Babylon.js, Unity glTFast). Needs the exporter's
    /// `meshopt` feature; the extension is required, there is no fallback.
    Meshopt,
}

impl GlbOptions {
    /// Smallest accepted [`GlbOptions::circle_segments`].
    pub const MIN_CIRCLE_SEGMENTS: u32 = 24;
    /// Largest accepted [`GlbOptions::circle_segments`].
    pub const MAX_CIRCLE_SEGMENTS: u32 = 4096;
}

impl Default for GlbOptions {
    fn default() -> Self {
        GlbOptions {
            obstacle_height: 0.8,
            agent_height: 1.75,
            ground: true,
            circle_segments: 32,
            key_tolerance: Some(KeyTolerance::default()),
            compression: Compression::None,
        }
    }
}
