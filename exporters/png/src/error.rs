//! Why a figure could not be drawn.

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
    /// A figure to stack under another is not an 8-bit RGB PNG.
    #[error("a figure to stack is not an 8-bit RGB PNG")]
    Decode {
        /// The decoder's error, if it failed.
        #[source]
        source: Option<png::DecodingError>,
    },
}
