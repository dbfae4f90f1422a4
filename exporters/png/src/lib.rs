//! PNG figures for crowdpatch: previews of the bake stages and scatter charts.
//!
//! This crate turns *plain data* into PNG bytes. It knows nothing of the core
//! crate `crowdpatch` (it only borrows [`Obstacle`] and [`Side`] from the
//! runtime's baked format), so a caller converts its paths, boundary points and
//! metrics into the input types below and gets back an encoded image:
//!
//! - [`render_stages`] draws a [`StagesFigure`]: one square panel per bake stage
//!   (like Figure 7 of the seed paper), paths coloured by time in the period with
//!   the cyclic map [`time_colour`], boundary points, highlighted collisions, a
//!   colour bar and a caption.
//! - [`render_scatter`] draws a [`ScatterChart`]: one or more scatter panels with
//!   linear or logarithmic axes, coloured series and a legend (for the paper's
//!   Figure 6: iterations against number of points, time against iterations).
//! - [`render_lines`] draws a [`LineChart`]: a grid of line plots with shaded
//!   intervals and vertical marks (a character's foot heights over each clip,
//!   with the detected foot plants and steps).
//! - With the `bake` feature, `preview` builds the [`StagesFigure`] of a core
//!   bake (the one place that converts the core's results into figure data).
//!
//! Figures are drawn with `plotters` on a supersampled bitmap and downsampled,
//! so lines and shapes are anti-aliased; text is rasterised with `ab_glyph` in
//! the Ubuntu Light and Hack fonts embedded by `epaint_default_fonts`, so no
//! system font is needed. Rendering is deterministic: the
//! same input gives the same bytes.
//!
//! # Example
//! ```
//! use crowdpatch_png::{render_scatter, ScatterChart, ScatterPanel, Series};
//!
//! let chart = ScatterChart {
//!     panels: vec![ScatterPanel {
//!         title: "iterations".into(),
//!         x_label: "points".into(),
//!         y_label: "iterations".into(),
//!         y_log: true,
//!         series: vec![Series {
//!             name: "Algorithm 2".into(),
//!             colour: [31, 119, 180],
//!             points: vec![[1.0, 2.0], [10.0, 40.0], [50.0, 900.0]],
//!         }],
//!         ..ScatterPanel::default()
//!     }],
//!     width_px: 640,
//!     height_px: 480,
//!     ..ScatterChart::default()
//! };
//! let png = render_scatter(&chart).unwrap();
//! assert_eq!(&png[1..4], b"PNG");
//! ```

mod axis;
mod canvas;
mod colour;
mod lines;
#[cfg(feature = "bake")]
pub mod preview;
mod scatter;
mod stages;

pub use colour::time_colour;
pub use crowdpatch_runtime::format::{Obstacle, Side};
pub use lines::{Band, LineChart, LinePanel, LineSeries, render_lines};
pub use scatter::{LegendPosition, ScatterChart, ScatterPanel, Series, render_scatter};
pub use stages::{CrossingMark, PanelPath, StagePanel, StagesFigure, StagesLayout, render_stages, stages_layout};

/// Why a figure could not be drawn.
///
/// Bad *data* inside a figure (a non-finite coordinate, a path with one point,
/// a non-positive value on a log axis) is skipped, not an error; these variants
/// are about the figure as a whole.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PngError {
    /// The patch side is not a finite positive length.
    #[error("patch size {size} m is not a finite length > 0; pass the patch side L in metres")]
    InvalidSize {
        /// The offending side length `[m]`.
        size: f64,
    },
    /// The period is not a finite positive duration.
    #[error("period {period} s is not a finite duration > 0; pass the patch period π in seconds")]
    InvalidPeriod {
        /// The offending period `[s]`.
        period: f64,
    },
    /// The agent radius is negative or not finite.
    #[error("agent radius {agent_radius} m is not a finite length ≥ 0")]
    InvalidAgentRadius {
        /// The offending radius `[m]`.
        agent_radius: f64,
    },
    /// The figure has no panel to draw.
    #[error("the {figure} has no panels; add at least one")]
    NoPanels {
        /// Which kind of figure: `"stages figure"` or `"scatter chart"`.
        figure: &'static str,
    },
    /// The requested image is too small to hold the figure legibly.
    #[error(
        "image {width_px}×{height_px} px is too small for this figure; it needs at least \
         {min_width_px}×{min_height_px} px"
    )]
    ImageTooSmall {
        /// Requested (or, for a stages figure, laid out) width `[px]`.
        width_px: u32,
        /// Requested (or laid out) height `[px]`.
        height_px: u32,
        /// Smallest usable width `[px]`.
        min_width_px: u32,
        /// Smallest usable height `[px]`.
        min_height_px: u32,
    },
    /// The requested image is larger than this crate draws.
    #[error(
        "image {width_px}×{height_px} px is too large; each side must be at most {max_px} px \
         (a long caption also makes a stages figure taller)"
    )]
    ImageTooLarge {
        /// Requested (or laid out) width `[px]`.
        width_px: u32,
        /// Requested (or laid out) height `[px]`.
        height_px: u32,
        /// Largest allowed side `[px]`.
        max_px: u32,
    },
    /// An embedded font could not be loaded (a build problem, not an input one).
    #[error("the embedded font {family} could not be parsed")]
    Font {
        /// The font family name.
        family: &'static str,
    },
    /// The drawing backend failed.
    #[error("drawing failed: {message}")]
    Draw {
        /// The backend's message.
        message: String,
    },
    /// The PNG encoder failed.
    #[error("PNG encoding failed")]
    Encode {
        /// The encoder's error.
        #[source]
        source: png::EncodingError,
    },
}
