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
}

impl GlbOptions {
    /// Smallest accepted [`GlbOptions::circle_segments`].
    pub const MIN_CIRCLE_SEGMENTS: u32 = 24;
    /// Largest accepted [`GlbOptions::circle_segments`].
    pub const MAX_CIRCLE_SEGMENTS: u32 = 4096;
}

impl Default for GlbOptions {
    fn default() -> Self {
        GlbOptions { obstacle_height: 0.8, agent_height: 1.75, ground: true, circle_segments: 32 }
    }
}
