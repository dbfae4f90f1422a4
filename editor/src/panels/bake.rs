//! The bake panel: bake and cancel, automatic re-bake, the running bake's
//! progress or the last bake's outcome (stale once the document's revision
//! moved on), and which stages the patch view shows.

use crate::bake_job::{Baker, CharacterSettings, stage_name};
use crate::command::Command;
use crate::state::{Cx, StageToggles};
use crate::view;
use egui::{RichText, Ui};

/// The bake panel's state: the character window and what is typed in it.
#[derive(Debug, Clone, Default)]
pub struct BakePanel {
    /// The character window is open.
    pub character_window: bool,
    /// The character file typed (empty: the built-in one).
    pub character_file: String,
    /// The joint map file typed.
    pub joint_map: String,
    /// The animation source: `auto`, `none`, `builtin` or `file`.
    pub source: String,
    /// The animation source file typed (with `file`).
    pub source_file: String,
    /// The animation source's joint map typed.
    pub source_joint_map: String,
}

/// The animation sources offered, with what each does (the CLI's
/// `--animation-source`).
const SOURCES: [(&str, &str); 4] = [
    ("auto", "its own walk clips; the built-in walks retargeted when it has none"),
    ("none", "its own walk clips only (refused when it has none)"),
    ("builtin", "the built-in character's walks, retargeted onto it"),
    ("file", "the walks of another file (.glb, .gltf, .bvh), retargeted"),
];

impl BakePanel {
    /// The fields filled from `s` (the character in use).
    pub fn fill(&mut self, s: &CharacterSettings) {
        let text = |p: &Option<std::path::PathBuf>| p.as_deref().map(|p| p.display().to_string()).unwrap_or_default();
        self.character_file = text(&s.file);
        self.joint_map = text(&s.joint_map);
        self.source_joint_map = text(&s.source_joint_map);
        match s.animation_source.as_str() {
            "" => self.source = "auto".into(),
            k @ ("auto" | "none" | "builtin") => self.source = k.into(),
            f => {
                self.source = "file".into();
                self.source_file = f.into();
            }
        }
    }

    /// The settings the fields ask for.
    pub fn settings(&self) -> CharacterSettings {
        let path = |s: &str| (!s.trim().is_empty()).then(|| std::path::PathBuf::from(s.trim()));
        CharacterSettings {
            file: path(&self.character_file),
            joint_map: path(&self.joint_map),
            animation_source: match self.source.as_str() {
                "file" => self.source_file.trim().to_owned(),
                "" => "auto".into(),
                k => k.to_owned(),
            },
            source_joint_map: path(&self.source_joint_map),
        }
    }

    /// Draws the panel for the document at `revision`.
    pub fn ui(&mut self, ui: &mut Ui, cx: &mut Cx<'_>, baker: &mut Baker, stages: &mut StageToggles, revision: u64) {
        ui.horizontal(|ui| {
            let can = cx.derived.resolved.is_some();
            if ui.add_enabled(can, egui::Button::new("Bake (B)")).clicked() {
                cx.commands.push(Command::Bake);
            }
            if ui.add_enabled(baker.baking(), egui::Button::new("Cancel (Esc)")).clicked() {
                cx.commands.push(Command::CancelBake);
            }
            ui.checkbox(&mut baker.auto, "Auto re-bake");
        });
        // Walkers as capsules or as a character (the editor's setting; the
        // same as `crowdpatch bake --animation none` or `--character`).
        ui.horizontal(|ui| {
            ui.label("Walkers:");
            let on = baker.character.is_some();
            if ui.radio(!on, "capsules").clicked() && on {
                cx.commands.push(Command::NoCharacter);
            }
            if ui.radio(on, "characters").clicked() && !on {
                cx.commands.push(Command::SetCharacter(self.settings()));
            }
            if ui.button("Character…").on_hover_text("Choose the character, its joint map and its walk").clicked() {
                if let Some(c) = &baker.character {
                    self.fill(&c.settings);
                }
                self.character_window = true;
            }
        });
        if let Some(c) = &baker.character {
            ui.label(RichText::new(format!("{}: {}", c.name, c.notes.join("; "))).weak())
                .on_hover_text("The character walkers are baked as, and how it walks");
        }
        if self.character_window {
            self.character_window_ui(ui.ctx(), cx, baker);
        }
        if let Some(j) = baker.job() {
            let p = &j.progress;
            let max = cx.doc.solver.max_iterations.max(1);
            let frac = (p.iteration() as f32 / max as f32).min(1.0);
            let stage = p.stage().map_or("starting".to_string(), stage_name);
            let text =
                format!("{stage}: iteration {} · worst gap {:.3} m · {:.1} s", p.iteration(), p.gap(), j.elapsed());
            ui.add(egui::ProgressBar::new(frac).text(text).animate(true));
            if j.cancelling() {
                ui.label("cancelling…");
            }
        } else if let Some(r) = &baker.result {
            let state = if r.bake.converged() {
                RichText::new("collision-free").color(view::ENTRY)
            } else {
                RichText::new(format!("{} collisions remain", r.bake.remaining.len())).color(view::PROBLEM)
            };
            ui.horizontal(|ui| {
                ui.label(format!(
                    "{} agents, {} iterations, {:.2} s:",
                    r.bake.agents.len(),
                    r.bake.collision.iterations,
                    r.seconds
                ));
                ui.label(state);
            });
            if baker.stale(revision) {
                ui.colored_label(view::WARNING, "The document changed since this bake (B to re-bake).");
            }
        } else if cx.derived.resolved.is_none() {
            ui.colored_label(view::WARNING, "Fix the problems below to bake.");
        } else {
            ui.label("Not baked yet: press B.");
        }
        ui.label("Show:");
        ui.horizontal_wrapped(|ui| {
            ui.checkbox(&mut stages.matching, "(a) matching lines");
            ui.checkbox(&mut stages.collision_free, "(b) after collision removal");
            ui.checkbox(&mut stages.smoothed, "(c) smoothed");
            ui.checkbox(&mut stages.agents, "agents");
            ui.checkbox(&mut stages.collisions, "collisions");
        });
    }
}

impl BakePanel {
    /// The character window: the file (or the built-in one), its joint
    /// map, where its walk comes from, a button that uses them, and what
    /// `crowdpatch character inspect` says of the character in use — or
    /// why the one asked for cannot walk.
    fn character_window_ui(&mut self, ctx: &egui::Context, cx: &mut Cx<'_>, baker: &Baker) {
        let mut open = true;
        egui::Window::new("Character").open(&mut open).default_width(620.0).show(ctx, |ui| {
            egui::Grid::new("character form").num_columns(2).show(ui, |ui| {
                path_row(ui, "Character file", &mut self.character_file, "empty: the built-in character");
                path_row(ui, "Joint map", &mut self.joint_map, "optional .json naming its humanoid joints");
                let l = ui.label("Animation source");
                if self.source.is_empty() {
                    self.source = "auto".into();
                }
                egui::ComboBox::from_id_salt("animation source")
                    .selected_text(self.source.clone())
                    .width(380.0)
                    .show_ui(ui, |ui| {
                        for (k, what) in SOURCES {
                            ui.selectable_value(&mut self.source, k.to_owned(), format!("{k}: {what}"));
                        }
                    })
                    .response
                    .labelled_by(l.id);
                ui.end_row();
                if self.source == "file" {
                    path_row(ui, "Source file", &mut self.source_file, "a walk on another rig (.glb, .gltf, .bvh)");
                    path_row(ui, "Source joint map", &mut self.source_joint_map, "");
                }
            });
            let settings = self.settings();
            ui.horizontal(|ui| {
                let ready = self.source != "file" || !self.source_file.trim().is_empty();
                if ui.add_enabled(ready, egui::Button::new("Use this character")).clicked() {
                    cx.commands.push(Command::SetCharacter(settings.clone()));
                }
                if ui.button("Built-in").clicked() {
                    *self = BakePanel { character_window: true, ..BakePanel::default() };
                    cx.commands.push(Command::SetCharacter(CharacterSettings::default()));
                }
            });
            ui.label(RichText::new(format!("crowdpatch bake {}", settings.command_line())).monospace().weak())
                .on_hover_text("The same choice on the command line");
            if let Some(e) = &baker.character_refusal {
                ui.colored_label(view::PROBLEM, format!("Cannot walk: {e}"));
            }
            ui.separator();
            match &baker.character {
                Some(c) => {
                    ui.label(RichText::new(format!("In use: {}", c.name)).strong());
                    egui::ScrollArea::both().max_height(420.0).show(ui, |ui| {
                        ui.label(RichText::new(&c.description).monospace().size(11.0));
                    });
                }
                None => {
                    ui.label("Walkers are baked as capsules.");
                }
            }
        });
        self.character_window &= open;
    }
}

/// A labelled row of the character form: a file path typed in `text`.
fn path_row(ui: &mut Ui, label: &str, text: &mut String, hint: &str) {
    let l = ui.label(label);
    ui.add(egui::TextEdit::singleline(text).hint_text(hint).desired_width(380.0)).labelled_by(l.id);
    ui.end_row();
}
