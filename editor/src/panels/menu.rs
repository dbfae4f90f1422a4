//! The menu bar (File, Edit, Bake, View, Help, and the document's name with
//! a dot while it has unsaved changes) and the status bar (the last message,
//! the tool's hint).

use crate::command::Command;
use crate::state::ViewMode;
use crate::view;
use egui::{RichText, Ui};
use std::path::PathBuf;

/// What the menu bar shows and may change.
pub struct MenuCx<'a> {
    /// Commands to run after this frame.
    pub commands: &'a mut Vec<Command>,
    /// Recently opened files, most recent first.
    pub recent: &'a [PathBuf],
    /// The document's title: its file (or "untitled").
    pub title: String,
    /// It has unsaved changes.
    pub dirty: bool,
    /// Undo and redo are possible.
    pub can_undo: bool,
    /// Redo is possible.
    pub can_redo: bool,
    /// There is a bake to export.
    pub has_result: bool,
    /// A bake is running.
    pub baking: bool,
    /// Automatic re-bake.
    pub auto_bake: &'a mut bool,
    /// Patch or tiling view.
    pub mode: &'a mut ViewMode,
    /// The help window.
    pub help: &'a mut bool,
    /// Set when the view's pan and zoom are to be reset.
    pub reset_view: bool,
}

/// The menu bar (no state of its own).
#[derive(Debug, Clone, Copy, Default)]
pub struct MenuBar;

impl MenuBar {
    /// Draws the menu bar.
    pub fn ui(ui: &mut Ui, m: &mut MenuCx<'_>) {
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("File", |ui| file_menu(ui, m));
            ui.menu_button("Edit", |ui| {
                if ui.add_enabled(m.can_undo, egui::Button::new("Undo   Ctrl+Z")).clicked() {
                    m.commands.push(Command::Undo);
                }
                if ui.add_enabled(m.can_redo, egui::Button::new("Redo   Ctrl+Shift+Z")).clicked() {
                    m.commands.push(Command::Redo);
                }
                ui.separator();
                if ui.button("Delete selection   Del").clicked() {
                    m.commands.push(Command::DeleteSelection);
                }
                if ui.button("Make tileable (north = mirror of south, west = mirror of east)").clicked() {
                    m.commands.push(Command::MakeTileable);
                }
            });
            ui.menu_button("Bake", |ui| {
                if ui.button("Bake   B").clicked() {
                    m.commands.push(Command::Bake);
                }
                if ui.add_enabled(m.baking, egui::Button::new("Cancel   Esc")).clicked() {
                    m.commands.push(Command::CancelBake);
                }
                ui.checkbox(m.auto_bake, "Re-bake automatically after edits");
            });
            ui.menu_button("View", |ui| {
                ui.radio_value(m.mode, ViewMode::Patch, "Patch   T");
                ui.radio_value(m.mode, ViewMode::Tiling, "Tiling 3×3   T");
                ui.radio_value(m.mode, ViewMode::Walkers3d, "3D walkers");
                if ui.button("Reset view   Home").clicked() {
                    m.reset_view = true;
                }
            });
            ui.menu_button("Help", |ui| {
                if ui.button("Keyboard shortcuts   F1").clicked() {
                    *m.help = true;
                }
            });
            ui.separator();
            ui.label(RichText::new(format!("{}{}", m.title, if m.dirty { " •" } else { "" })).strong());
        });
    }

    /// Draws the status bar: `message` (an error in red) and the tool's `hint`.
    pub fn status_bar(ui: &mut Ui, message: Option<&(String, bool)>, hint: &str) {
        // An error takes the whole bar (wrapped), over the tool's hint.
        if let Some((m, true)) = message {
            ui.add(egui::Label::new(RichText::new(m).color(view::PROBLEM)).wrap());
            return;
        }
        ui.horizontal(|ui| {
            match message {
                Some((m, _)) => ui.label(m),
                None => ui.label("Ready. F1 lists the shortcuts."),
            };
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                ui.label(RichText::new(hint).weak());
            });
        });
    }
}

fn file_menu(ui: &mut Ui, m: &mut MenuCx<'_>) {
    if ui.button("New            Ctrl+N").clicked() {
        m.commands.push(Command::New);
    }
    if ui.button("Open…          Ctrl+O").clicked() {
        m.commands.push(Command::Open(PathBuf::new()));
    }
    ui.menu_button("Open recent", |ui| {
        if m.recent.is_empty() {
            ui.label("(none yet)");
        }
        for f in m.recent {
            if ui.button(f.display().to_string()).clicked() {
                m.commands.push(Command::Open(f.clone()));
            }
        }
    });
    ui.separator();
    if ui.button("Save           Ctrl+S").clicked() {
        m.commands.push(Command::Save);
    }
    if ui.button("Save as…       Ctrl+Shift+S").clicked() {
        m.commands.push(Command::SaveAs(PathBuf::new()));
    }
    ui.separator();
    if ui.add_enabled(m.has_result, egui::Button::new("Export GLB…")).clicked() {
        m.commands.push(Command::ExportGlb(PathBuf::new()));
    }
    if ui.add_enabled(m.has_result, egui::Button::new("Export PNG preview…")).clicked() {
        m.commands.push(Command::ExportPng(PathBuf::new()));
    }
    ui.separator();
    if ui.button("Quit           Ctrl+Q").clicked() {
        m.commands.push(Command::Quit);
    }
}
