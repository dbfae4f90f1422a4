//! # crowdpatch-editor
//!
//! The crowdpatch editor (`crowdpatch-editor [FILE.patch.json]`): author the
//! patterns (one s–t chart per side), obstacles and parameters of a crowd
//! patch, bake it in the background, watch it play, tile it with its
//! neighbours, and save it.
//!
//! Architecture (egui_demo_app, RecastDemo):
//! - the saved **document** is the core's [`PatchDocument`](crowdpatch::model::PatchDocument)
//!   (serde, `Clone + PartialEq`), kept apart from the **app** state in
//!   [`EditorApp`] (selection, tool, bake job, playback, caches, dialogs);
//! - widgets may edit document fields directly; structural actions are
//!   [`Command`] values, applied once per frame ([`EditorApp::run_command`]);
//! - undo and redo are document snapshots that settle after a gesture
//!   ([`history`]);
//! - viewport tools sit behind one small trait with per-tool state
//!   ([`tools::Tool`]);
//! - bakes run in a background thread with progress and cancel
//!   ([`bake_job`]); drawing never waits for them.

pub mod app;
pub mod bake_job;
pub mod command;
pub mod edit;
pub mod export;
pub mod files;
pub mod history;
pub mod library;
pub mod tools;
pub mod view;

pub use app::EditorApp;
pub use command::Command;

/// Runs the editor in a native window, opening `file` if given.
///
/// # Errors
/// When no window can be created (no display, no OpenGL).
pub fn run(file: Option<std::path::PathBuf>) -> eframe::Result {
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("crowdpatch editor")
            .with_inner_size([1560.0, 960.0])
            .with_min_inner_size([900.0, 600.0]),
        ..Default::default()
    };
    eframe::run_native(
        "crowdpatch-editor",
        options,
        Box::new(move |_cc| {
            let mut app = EditorApp::new(files::state_dir());
            if let Some(f) = &file {
                app.open(f);
            }
            Ok(Box::new(Native(app)))
        }),
    )
}

/// The eframe wrapper of [`EditorApp`].
struct Native(EditorApp);

impl eframe::App for Native {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.0.show(ui);
    }

    fn on_exit(&mut self, _gl: Option<&eframe::glow::Context>) {
        self.0.on_exit();
    }
}
