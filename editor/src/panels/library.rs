//! The pattern library panel (the `*.pattern.json` files of a folder: apply
//! or link one to a side, save a side as a pattern) and the sides section
//! (where each side's points come from; copy a referenced side in, clear a
//! side).

use crate::command::Command;
use crate::edit::{SideSource, side_view};
use crate::files::{DialogPurpose, FileDialog};
use crate::library::{self, LibraryEntry};
use crate::state::Cx;
use crate::view;
use crowdpatch::generate::Diagonal;
use crowdpatch::model::{PatchDocument, Side};
use egui::{RichText, Ui};
use std::path::{Path, PathBuf};

/// The library panel and its state.
#[derive(Debug, Clone)]
pub struct LibraryPanel {
    /// The pattern library folder.
    pub dir: PathBuf,
    /// The folder as typed.
    text: String,
    /// Its pattern files.
    entries: Vec<LibraryEntry>,
    /// The side the buttons apply to.
    side: Side,
    /// The pattern generator's settings.
    pub generator: Generator,
}

/// Settings of the pattern generator (`crowdpatch::generate`).
#[derive(Debug, Clone, PartialEq)]
pub struct Generator {
    /// Mean walkers per square metre `[1/m²]`.
    pub density: f64,
    /// Shares of the walkers heading towards south, east, north, west.
    pub flows: [f64; 4],
    /// Shares of the walkers turning a corner, heading north-east,
    /// north-west, south-west, south-east (`crowdpatch::generate::Diagonal::ALL`).
    pub corners: [f64; 4],
    /// Real pedestrians' speeds (else Weidmann's free walking speeds).
    pub reference_speeds: bool,
    /// Seed of the draws.
    pub seed: u64,
    /// Share of the people present who stand in groups, in `[0, 0.9]`.
    pub standing: f64,
    /// Share of the lanes' walkers who walk in groups, in `[0, 1)`.
    pub walking_groups: f64,
}

impl Default for Generator {
    fn default() -> Self {
        Generator {
            density: 0.08,
            flows: [1.0; 4],
            corners: [0.0; 4],
            reference_speeds: true,
            seed: 0,
            standing: crowdpatch::generate::STANDING_SHARE,
            walking_groups: crowdpatch::generate::walking_group_share(),
        }
    }
}

impl LibraryPanel {
    /// The library of `dir`.
    pub fn new(dir: PathBuf) -> LibraryPanel {
        LibraryPanel {
            text: dir.display().to_string(),
            entries: library::scan(&dir),
            dir,
            side: Side::South,
            generator: Generator::default(),
        }
    }

    /// Shows the library of `dir` (another document was opened).
    pub fn show_dir(&mut self, dir: PathBuf) {
        let (side, generator) = (self.side, self.generator.clone());
        *self = LibraryPanel { side, generator, ..LibraryPanel::new(dir) };
    }

    /// Reads the folder again.
    pub fn rescan(&mut self) {
        self.entries = library::scan(&self.dir);
    }

    /// The dialog saving `side` of `doc` as a pattern in the library folder.
    pub fn save_dialog(&self, doc: &PatchDocument, side: Side) -> FileDialog {
        let name = format!("{}-{}.pattern.json", doc.name.as_deref().unwrap_or("side"), side.name());
        FileDialog::new(DialogPurpose::SavePattern(side), self.dir.clone(), name)
    }

    /// Saves `side` of `doc` (pattern references resolve against `base`) as
    /// the pattern `file` and rescans; returns what to tell the user, and
    /// whether it is an error.
    pub fn save_side(&mut self, doc: &PatchDocument, side: Side, file: &Path, base: &Path) -> (String, bool) {
        let mut p = side_view(doc, side, base).pattern;
        p.name = Some(crowdpatch::document::file_stem(file));
        match crowdpatch::document::save_pattern(&p, file) {
            Ok(()) => {
                self.rescan();
                (format!("saved the {side} side as {}", file.display()), false)
            }
            Err(e) => (format!("{}: {e}", file.display()), true),
        }
    }

    /// Draws the library.
    pub fn ui(&mut self, ui: &mut Ui, cx: &mut Cx<'_>) {
        ui.horizontal(|ui| {
            ui.label("Folder");
            let r = ui.text_edit_singleline(&mut self.text);
            if r.lost_focus() || ui.button("Rescan").on_hover_text("Rescan").clicked() {
                self.dir = PathBuf::from(self.text.trim());
                self.rescan();
            }
        });
        ui.horizontal(|ui| {
            ui.label("Side");
            egui::ComboBox::from_id_salt("library-side").selected_text(self.side.name()).show_ui(ui, |ui| {
                for s in Side::ALL {
                    ui.selectable_value(&mut self.side, s, s.name());
                }
            });
        });
        if self.entries.is_empty() {
            ui.label(RichText::new("no *.pattern.json here").weak());
        }
        let side = self.side;
        for e in &self.entries {
            ui.horizontal(|ui| match &e.pattern {
                Ok(p) => {
                    let tag = if p.is_balanced() { "" } else { " (unbalanced)" };
                    ui.label(format!("{}  {} in / {} out{tag}", e.name(), p.entries.len(), p.exits.len()))
                        .on_hover_text(e.file.display().to_string());
                    if ui.small_button("Apply").on_hover_text(format!("Copy onto the {side} side")).clicked() {
                        cx.commands.push(Command::ApplyPattern { side, file: e.file.clone(), link: false });
                    }
                    if ui
                        .small_button("Link")
                        .on_hover_text(format!("Reference the file from the {side} side"))
                        .clicked()
                    {
                        cx.commands.push(Command::ApplyPattern { side, file: e.file.clone(), link: true });
                    }
                }
                Err(err) => {
                    ui.colored_label(view::PROBLEM, e.name()).on_hover_text(err);
                }
            });
        }
        if ui.button(format!("Save the {side} side as a pattern…")).clicked() {
            cx.commands.push(Command::SaveSideAsPattern { side, file: PathBuf::new() });
        }
        self.generator_ui(ui, cx);
    }

    /// The pattern generator: density, flows and speeds, and a button that
    /// replaces the four sides.
    fn generator_ui(&mut self, ui: &mut Ui, cx: &mut Cx<'_>) {
        let g = &mut self.generator;
        egui::CollapsingHeader::new("Generate at human pace").id_salt("generator").default_open(false).show(ui, |ui| {
            ui.horizontal(|ui| {
                ui.label("Density");
                ui.add(egui::DragValue::new(&mut g.density).range(0.005..=1.0).speed(0.005).suffix(" /m²"));
            });
            ui.horizontal(|ui| {
                ui.label("Towards");
                for (k, side) in Side::ALL.iter().enumerate() {
                    ui.label(side.name());
                    ui.add(egui::DragValue::new(&mut g.flows[k]).range(0.0..=10.0).speed(0.05));
                }
            });
            // Corner shares as a compass: north-west and north-east above,
            // south-west and south-east below.
            ui.horizontal(|ui| {
                ui.label("Turning").on_hover_text(
                    "Walkers who turn a corner: north-east enter west and leave north, or enter south and leave \
                     east, a 45° staircase across the tiles",
                );
                egui::Grid::new("generator-corners").num_columns(4).show(ui, |ui| {
                    for row in [[Diagonal::NorthWest, Diagonal::NorthEast], [Diagonal::SouthWest, Diagonal::SouthEast]]
                    {
                        for d in row {
                            let k = d.quarter_turns() as usize;
                            ui.label(d.name());
                            ui.add(egui::DragValue::new(&mut g.corners[k]).range(0.0..=10.0).speed(0.05));
                        }
                        ui.end_row();
                    }
                });
            });
            ui.horizontal(|ui| {
                ui.checkbox(&mut g.reference_speeds, "real pedestrians' speeds")
                    .on_hover_text("Walking speeds of the ETH/UCY reference; off: Weidmann's 1.34 ± 0.26 m/s");
                ui.label("Seed");
                ui.add(egui::DragValue::new(&mut g.seed));
            });
            ui.horizontal(|ui| {
                ui.label("In walking groups");
                ui.add(egui::DragValue::new(&mut g.walking_groups).range(0.0..=0.95).speed(0.01)).on_hover_text(
                    "Share of the walkers who walk with others, pairs and triads abreast in neighbouring lanes \
                     (real crowds: about half, data/groups.json)",
                );
            });
            // Points already there are never replaced without saying so.
            let there: usize = cx.derived.sides.iter().map(|v| v.pattern.entries.len() + v.pattern.exits.len()).sum();
            let command = |add| Command::GeneratePatterns {
                density: g.density,
                flows: g.flows,
                corners: g.corners,
                reference_speeds: g.reference_speeds,
                walking_groups: g.walking_groups,
                seed: g.seed,
                add,
            };
            let hint = "Lanes whose walkers cross at their own speed, straight or round a corner, clear of the \
                        obstacles; the patch tiles with itself";
            if there == 0 {
                if ui.button("Generate the four sides").on_hover_text(hint).clicked() {
                    cx.commands.push(command(false));
                }
            } else {
                ui.horizontal(|ui| {
                    if ui.button(format!("Replace the {there} points")).on_hover_text(hint).clicked() {
                        cx.commands.push(command(false));
                    }
                    if ui
                        .button("Add lanes to them")
                        .on_hover_text("The lanes' points join those on the sides (sides become inline)")
                        .clicked()
                    {
                        cx.commands.push(command(true));
                    }
                });
            }
            ui.horizontal(|ui| {
                ui.label("Standing");
                ui.add(egui::DragValue::new(&mut g.standing).range(0.0..=0.9).speed(0.01))
                    .on_hover_text("Share of the people present who stand (real crowds: about a fifth)");
                if ui
                    .button("Add standing groups")
                    .on_hover_text("People standing in twos and threes out of every walker's route")
                    .clicked()
                {
                    cx.commands.push(Command::AddStandingGroups { share: g.standing, seed: g.seed });
                }
            });
        });
    }

    /// Draws the sides section: each side's points and source.
    pub fn sides_ui(&mut self, ui: &mut Ui, cx: &mut Cx<'_>) {
        for side in Side::ALL {
            let v = &cx.derived.sides[side.index()];
            ui.horizontal(|ui| {
                ui.label(RichText::new(side.name()).strong());
                let src = match &v.source {
                    SideSource::Empty => "empty".to_string(),
                    SideSource::Inline => "inline".to_string(),
                    SideSource::File(f) => format!("file {f}"),
                    SideSource::Missing(f, _) => format!("file {f} (missing)"),
                };
                ui.label(format!("{} in / {} out, {src}", v.pattern.entries.len(), v.pattern.exits.len()));
                if matches!(v.source, SideSource::File(_))
                    && ui
                        .small_button("Copy in")
                        .on_hover_text("Copy the pattern file's points into the document to edit them here")
                        .clicked()
                {
                    cx.commands.push(Command::InlineSide(side));
                }
                if !matches!(v.source, SideSource::Empty) && ui.small_button("Clear").clicked() {
                    cx.commands.push(Command::ClearSide(side));
                }
            });
        }
    }
}
