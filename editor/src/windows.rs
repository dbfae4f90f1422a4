//! The windows over the editor: the file dialog, the unsaved-changes
//! question, crash recovery, errors and the keyboard shortcuts. Each answers
//! with commands (or an [`Answer`] to the question), run by the app.

use crate::command::Command;
use crate::files::{Autosave, DialogPurpose, FileDialog};
use crate::shortcuts::SHORTCUTS;
use crate::view;
use egui::{Key, RichText};
use std::path::{Path, PathBuf};

/// The windows' state.
#[derive(Debug, Clone, Default)]
pub struct Windows {
    /// The file dialog, when open.
    pub dialog: Option<FileDialog>,
    /// The unsaved-changes question, when asked: what to do once answered.
    pub prompt: Option<Command>,
    /// An error to show in a window.
    pub error: Option<String>,
    /// The keyboard shortcuts window.
    pub help: bool,
    /// Autosaves of editors that crashed, offered for recovery.
    pub recovery: Vec<(PathBuf, Autosave)>,
}

/// A command the user has answered the unsaved-changes question for.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Run it: the unsaved changes may be dropped.
    Discard(Command),
    /// Save first, then run it if the save succeeded.
    SaveThen(Command),
}

impl Windows {
    /// Draws the open windows; `file` is the document's file. Commands go to
    /// `commands`; the answer to the unsaved-changes question (or to the
    /// open dialog, asked before it) is returned.
    pub fn ui(&mut self, ctx: &egui::Context, file: Option<&Path>, commands: &mut Vec<Command>) -> Option<Answer> {
        let mut answer = self.dialog_window(ctx, commands);
        answer = self.prompt_window(ctx, file).or(answer);
        self.recovery_window(ctx, commands);
        if let Some(e) = self.error.clone() {
            let mut open = true;
            egui::Window::new("Error")
                .open(&mut open)
                .collapsible(false)
                .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
                .show(ctx, |ui| {
                    ui.colored_label(view::PROBLEM, e);
                });
            if !open {
                self.error = None;
            }
        }
        if self.help {
            let mut open = true;
            egui::Window::new("Keyboard shortcuts")
                .open(&mut open)
                .collapsible(false)
                .pivot(egui::Align2::CENTER_CENTER)
                .default_pos(ctx.content_rect().center())
                .show(ctx, |ui| {
                    egui::Grid::new("help").num_columns(2).striped(true).show(ui, |ui| {
                        for (k, what) in SHORTCUTS {
                            ui.label(RichText::new(*k).monospace());
                            ui.label(*what);
                            ui.end_row();
                        }
                    });
                });
            self.help = open;
        }
        answer
    }

    fn dialog_window(&mut self, ctx: &egui::Context, commands: &mut Vec<Command>) -> Option<Answer> {
        let mut d = self.dialog.take()?;
        let mut keep = true;
        let mut chosen = None;
        egui::Window::new(d.purpose.title())
            .collapsible(false)
            .default_width(460.0)
            .pivot(egui::Align2::CENTER_CENTER)
            .default_pos(ctx.content_rect().center())
            .show(ctx, |ui| {
                ui.horizontal(|ui| {
                    if ui.button("Up").on_hover_text("Parent folder").clicked()
                        && let Some(p) = d.dir.parent()
                    {
                        d.dir = p.to_path_buf();
                    }
                    ui.label(d.dir.display().to_string());
                });
                let (dirs, list) = d.listing();
                egui::ScrollArea::vertical().max_height(260.0).show(ui, |ui| {
                    for name in dirs {
                        if ui.selectable_label(false, format!("[{name}]")).clicked() {
                            d.dir = d.dir.join(name);
                        }
                    }
                    for name in list {
                        let r = ui.selectable_label(d.name == name, &name);
                        if r.clicked() {
                            d.name = name.clone();
                        }
                        if r.double_clicked() {
                            d.name = name;
                            chosen = Some(d.chosen());
                        }
                    }
                });
                ui.horizontal(|ui| {
                    ui.label("File");
                    let r = ui.text_edit_singleline(&mut d.name);
                    if r.lost_focus() && ui.input(|i| i.key_pressed(Key::Enter)) {
                        chosen = Some(d.chosen());
                    }
                });
                if let Some(e) = &d.error {
                    ui.colored_label(view::PROBLEM, e);
                }
                ui.horizontal(|ui| {
                    let ok = if d.purpose == DialogPurpose::Open { "Open" } else { "Save" };
                    if ui.button(ok).clicked() {
                        chosen = Some(d.chosen());
                    }
                    if ui.button("Cancel").clicked() {
                        keep = false;
                    }
                });
            });
        let mut answer = None;
        match chosen {
            Some(Ok(path)) => {
                keep = false;
                match d.purpose {
                    // The question about unsaved changes was asked before the dialog.
                    DialogPurpose::Open => answer = Some(Answer::Discard(Command::Open(path))),
                    DialogPurpose::SaveAs => commands.push(Command::SaveAs(path)),
                    DialogPurpose::ExportGlb => commands.push(Command::ExportGlb(path)),
                    DialogPurpose::ExportPng => commands.push(Command::ExportPng(path)),
                    DialogPurpose::SavePattern(side) => commands.push(Command::SaveSideAsPattern { side, file: path }),
                }
            }
            Some(Err(e)) => d.error = Some(e),
            None => {}
        }
        if keep {
            self.dialog = Some(d);
        }
        answer
    }

    fn prompt_window(&mut self, ctx: &egui::Context, file: Option<&Path>) -> Option<Answer> {
        let then = self.prompt.clone()?;
        let what = match &then {
            Command::Quit => "quitting",
            Command::New => "starting a new document",
            _ => "opening another document",
        };
        let mut answer = None;
        let modal = egui::Modal::new(egui::Id::unique("unsaved")).show(ctx, |ui| {
            ui.heading("Unsaved changes");
            ui.label(format!(
                "Save the changes to {} before {what}?",
                file.map_or("the untitled document".to_string(), |f| f.display().to_string())
            ));
            ui.horizontal(|ui| {
                if ui.button("Save").clicked() {
                    answer = Some(Answer::SaveThen(then.clone()));
                }
                if ui.button("Don't save").clicked() {
                    answer = Some(Answer::Discard(then.clone()));
                }
                if ui.button("Cancel").clicked() {
                    self.prompt = None;
                }
            });
        });
        if answer.is_some() || modal.should_close() {
            self.prompt = None;
        }
        answer
    }

    fn recovery_window(&mut self, ctx: &egui::Context, commands: &mut Vec<Command>) {
        let Some((path, a)) = self.recovery.first() else { return };
        egui::Window::new("Recover unsaved work")
            .collapsible(false)
            .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
            .show(ctx, |ui| {
                let age = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs().saturating_sub(a.saved_at))
                    .unwrap_or(0);
                ui.label(format!(
                    "The editor stopped without saving. An autosave of {} from {} ago is available.",
                    a.file.as_deref().map_or("an untitled document".to_string(), |f| f.display().to_string()),
                    human_age(age)
                ));
                ui.horizontal(|ui| {
                    if ui.button("Recover").clicked() {
                        commands.push(Command::Recover(path.clone()));
                    }
                    if ui.button("Discard").clicked() {
                        commands.push(Command::DiscardRecovery(path.clone()));
                    }
                });
            });
    }
}

fn human_age(secs: u64) -> String {
    match secs {
        0..=59 => format!("{secs} s"),
        60..=3599 => format!("{} min", secs / 60),
        _ => format!("{} h", secs / 3600),
    }
}
