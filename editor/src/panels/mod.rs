//! The panels around the central view (egui demo style): each a struct that
//! owns its state and draws itself with `ui`, given what it needs explicitly
//! (mostly a [`crate::state::Cx`]: the document, what is derived from it, the
//! selection and the command sink).
//!
//! Left: [`toolbar`], [`parameters`], [`library`] (with the sides). Right:
//! [`bake`], [`inspector`], [`metrics`], [`problems`]. Around: [`menu`]
//! (menu and status bars) and [`timeline`].

pub mod bake;
pub mod field;
pub mod inspector;
pub mod library;
pub mod menu;
pub mod metrics;
pub mod parameters;
pub mod problems;
pub mod timeline;
pub mod toolbar;

/// Every panel, with its state.
pub struct Panels {
    /// Tools and snap.
    pub toolbar: toolbar::ToolbarPanel,
    /// The document's parameters.
    pub parameters: parameters::ParametersPanel,
    /// The pattern library and the sides.
    pub library: library::LibraryPanel,
    /// The selected point or obstacle.
    pub inspector: inspector::InspectorPanel,
    /// The last bake's metrics.
    pub metrics: metrics::MetricsPanel,
    /// Validation problems and warnings.
    pub problems: problems::ProblemsPanel,
    /// Bake, progress and stage toggles.
    pub bake: bake::BakePanel,
}

impl Panels {
    /// The panels, the library showing `library_dir`.
    pub fn new(library_dir: std::path::PathBuf) -> Panels {
        Panels {
            toolbar: toolbar::ToolbarPanel,
            parameters: parameters::ParametersPanel,
            library: library::LibraryPanel::new(library_dir),
            inspector: inspector::InspectorPanel,
            metrics: metrics::MetricsPanel,
            problems: problems::ProblemsPanel,
            bake: bake::BakePanel::default(),
        }
    }
}
