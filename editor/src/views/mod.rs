//! The central views: the patch seen from above ([`patch`], with pan and
//! zoom), the same among its neighbours ([`tiling`]) and the four s–t charts
//! of the patterns ([`chart`]), and the walkers of a skeletal bake in 3D
//! ([`scene3d`]). Each draws from a [`crate::state::Cx`] and a
//! [`crate::state::Scene`] and hands pointer input to the current tool.

pub mod chart;
pub mod patch;
pub mod scene3d;
pub mod tiling;

/// The views, with their state.
#[derive(Debug, Clone, Default)]
pub struct Views {
    /// The patch view (pan and zoom, shared with the tiling preview).
    pub patch: patch::PatchView,
    /// The s–t charts.
    pub chart: chart::ChartView,
    /// The tiling preview.
    pub tiling: tiling::TilingView,
    /// The 3D view of a skeletal bake.
    pub scene3d: scene3d::Scene3dView,
}
