//! Helpers shared by the editor's test files.

use crowdpatch_editor::EditorApp;
use egui::vec2;
use egui_kittest::Harness;
use std::path::{Path, PathBuf};

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A harness around a fresh editor whose state (recent files, autosaves,
/// settings) lives in `home`.
pub fn harness(home: &Path) -> Harness<'static, EditorApp> {
    Harness::builder()
        .with_size(vec2(1600.0, 1000.0))
        .with_accessibility_check(false)
        .build_ui_state(|ui, app: &mut EditorApp| app.show(ui), EditorApp::new(home.to_path_buf()))
}
