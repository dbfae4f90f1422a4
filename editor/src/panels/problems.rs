//! The problems panel: every validation problem (click one to select the
//! point or obstacle it is about, from its typed target) and clearance
//! warning.

use crate::derived::Derived;
use crate::state::{Cx, Selection};
use crate::view;
use crowdpatch::problem::Target;
use egui::{RichText, Sense, Ui};

/// The problems panel (no state of its own).
#[derive(Debug, Clone, Copy, Default)]
pub struct ProblemsPanel;

impl ProblemsPanel {
    /// The panel's title, with the number of problems, warnings and notes.
    pub fn title(derived: &Derived) -> String {
        let notes = usize::from(derived.tiling.is_some());
        format!("Problems ({})", derived.problems.len() + derived.warnings.len() + notes)
    }

    /// Draws the panel.
    pub fn ui(&mut self, ui: &mut Ui, cx: &mut Cx<'_>) {
        let d = cx.derived;
        let note = d.tiling.as_ref();
        if d.problems.is_empty() && d.warnings.is_empty() && note.is_none() {
            ui.colored_label(view::ENTRY, "No problems.");
            return;
        }
        if let Some(note) = note {
            ui.horizontal_wrapped(|ui| {
                ui.label(RichText::new(format!("Note: {note}")).color(view::WARNING));
                if ui
                    .small_button("Make tileable")
                    .on_hover_text("North := mirror(south), west := mirror(east)")
                    .clicked()
                {
                    cx.commands.push(crate::command::Command::MakeTileable);
                }
            });
        }
        for p in &d.problems {
            let text = format!("{} {}", p.path, p.message);
            let r = ui.add(egui::Label::new(RichText::new(text).color(view::PROBLEM)).sense(Sense::click()));
            if r.clicked()
                && let Some(s) = selection_of(&p.target)
            {
                *cx.selection = s;
            }
        }
        for w in &d.warnings {
            if ui.add(egui::Label::new(RichText::new(&w.message).color(view::WARNING)).sense(Sense::click())).clicked()
            {
                *cx.selection = Selection::Obstacle(w.obstacle);
            }
        }
    }
}

/// What to select for a problem about `target` (the first point of a pair).
pub fn selection_of(target: &Target) -> Option<Selection> {
    match *target {
        Target::Point(id) | Target::PointPair(id, _) => Some(Selection::Point(id)),
        Target::Obstacle(k) => Some(Selection::Obstacle(k)),
        _ => None,
    }
}
