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
mod error;
mod lines;
#[cfg(feature = "bake")]
pub mod preview;
mod scatter;
mod stages;

pub use canvas::stack;
pub use colour::time_colour;
pub use crowdpatch_runtime::format::{Obstacle, Side};
pub use error::PngError;
pub use lines::{Band, LineChart, LinePanel, LineSeries, render_lines};
pub use scatter::{LegendPosition, ScatterChart, ScatterPanel, Series, render_scatter};
pub use stages::{CrossingMark, PanelPath, StagePanel, StagesFigure, StagesLayout, render_stages, stages_layout};
