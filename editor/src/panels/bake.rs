//! The bake panel: bake and cancel, automatic re-bake, the running bake's
//! progress or the last bake's outcome (stale once the document's revision
//! moved on), and which stages the patch view shows.

use crate::bake_job::{Baker, stage_name};
use crate::command::Command;
use crate::state::{Cx, StageToggles};
use crate::view;
use egui::{RichText, Ui};

/// The bake panel: the character file being typed is its only state.
#[derive(Debug, Clone, Default)]
pub struct BakePanel {
    /// The glTF file typed in the character field.
    pub character_file: String,
}

impl BakePanel {
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
                cx.commands.push(Command::SetCharacter(None));
            }
        });
        if let Some(c) = &baker.character {
            ui.label(RichText::new(format!("{}: {}", c.name, c.notes.join("; "))).weak())
                .on_hover_text("The character walkers are baked as, and how it walks");
        }
        ui.horizontal(|ui| {
            ui.add(
                egui::TextEdit::singleline(&mut self.character_file)
                    .hint_text("character .glb / .gltf")
                    .desired_width(150.0),
            );
            let file = self.character_file.trim();
            if ui.add_enabled(!file.is_empty(), egui::Button::new("Use file")).clicked() {
                cx.commands.push(Command::SetCharacter(Some(std::path::PathBuf::from(file))));
            }
            if ui.button("Built-in").clicked() {
                cx.commands.push(Command::SetCharacter(None));
            }
        });
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
