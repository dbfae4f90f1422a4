//! # crowdpatch-editor
//!
//! The crowdpatch editor (`crowdpatch-editor [FILE.patch.json]`): author the
//! patterns (one s–t chart per side), obstacles and parameters of a crowd
//! patch, bake it in the background, watch it play, tile it with its
//! neighbours, and save it.
//!
//! Architecture (egui_demo_app, RecastDemo):
//! - the saved **document** is the core's [`PatchDocument`](crowdpatch::model::PatchDocument)
//!   (serde, `Clone + PartialEq`), kept with its file, **revision** and undo
//!   history in [`document::Document`], apart from the **app** state;
//! - [`EditorApp`] is a router: it owns the document, what is derived from
//!   it ([`derived`]), the selection and clock ([`state`]), the tool, the
//!   bake, and the [`panels`] and [`views`], each a struct with its own state
//!   and `ui`, given what it needs through a small context ([`state::Cx`]);
//! - widgets may edit document fields directly (and say so); structural
//!   actions are [`Command`] values, applied once per frame
//!   ([`EditorApp::run_command`], document edits in [`apply`]);
//! - a revision number, new on every change, tells what is out of date:
//!   derived views, the dirty title, a stale bake, the automatic re-bake,
//!   the autosave; undo and redo are document snapshots that settle after a
//!   gesture ([`history`], a bounded `VecDeque`);
//! - validation problems carry a typed target (`crowdpatch::problem::Target`)
//!   that puts them on their points and obstacles;
//! - viewport tools sit behind one small trait with per-tool state
//!   ([`tools::Tool`]);
//! - bakes run in a background thread with progress and cancel
//!   ([`bake_job`]); drawing never waits for them.
//!
//! Modules use each other without cycles: shared state types live in
//! [`state`], [`derived`] and [`document`], which use no panel, view or the
//! app; panels and views use those, never the app or each other's parent.

pub mod app;
pub mod apply;
pub mod bake_job;
pub mod command;
pub mod derived;
pub mod document;
pub mod edit;
pub mod export;
pub mod files;
pub mod history;
pub mod library;
pub mod panels;
pub mod shortcuts;
pub mod state;
pub mod tools;
pub mod view;
pub mod views;
pub mod windows;

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
        // The 3D view draws depth-tested.
        depth_buffer: 24,
        ..Default::default()
    };
    eframe::run_native(
        "crowdpatch-editor",
        options,
        Box::new(move |_cc| {
            let mut app = EditorApp::new(files::state_dir());
            // Walkers are baked as the character kept in the settings (the
            // built-in one at first; Bake panel, Character…).
            app.restore_walkers();
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
