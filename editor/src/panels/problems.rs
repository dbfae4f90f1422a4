//! The problems panel: every validation problem (click one to select the
//! point or obstacle it is about, from its typed target), clearance
//! warning, the note of a patch that does not tile with itself, and the
//! last bake's remaining collisions and animation quality gate culprits
//! (a click shows the walker at that time).

use crate::bake_job::BakeResult;
use crate::command::Command;
use crate::derived::Derived;
use crate::state::{Cx, Selection};
use crate::view;
use crowdpatch::problem::Target;
use crowdpatch::proximity::Other;
use egui::{RichText, Sense, Ui};

/// The problems panel (no state of its own).
#[derive(Debug, Clone, Copy, Default)]
pub struct ProblemsPanel;

impl ProblemsPanel {
    /// The panel's title, with the number of problems, warnings, notes and
    /// collisions left by the last bake.
    pub fn title(derived: &Derived, result: Option<&BakeResult>) -> String {
        let notes = usize::from(derived.tiling.is_some());
        let left = result.map_or(0, |r| r.bake.remaining.len() + gate_violations(r).len());
        format!("Problems ({})", derived.problems.len() + derived.warnings.len() + notes + left)
    }

    /// Draws the panel; `result` is the last bake, whose remaining
    /// collisions are listed (a click shows the walker at that time).
    pub fn ui(&mut self, ui: &mut Ui, cx: &mut Cx<'_>, result: Option<&BakeResult>) {
        let d = cx.derived;
        let note = d.tiling.as_ref();
        let left = result.map_or(&[][..], |r| &r.bake.remaining[..]);
        let gate = result.map_or(&[][..], gate_violations);
        if d.problems.is_empty() && d.warnings.is_empty() && note.is_none() && left.is_empty() && gate.is_empty() {
            ui.colored_label(view::ENTRY, "No problems.");
            return;
        }
        for c in left {
            let other = match c.other {
                Other::Agent(j) => format!("walker {j}"),
                Other::Ghost(_) => "a walker of the neighbouring tile".to_owned(),
                Other::Obstacle(k) => format!("obstacles[{k}]"),
            };
            let text = format!(
                "bake: walker {} and {other} collide at t = {:.2} s, {:.3} m apart (needs {:.2} m)",
                c.agent, c.time, c.distance, c.required
            );
            let r = ui.add(egui::Label::new(RichText::new(text).color(view::PROBLEM)).sense(Sense::click()));
            if r.on_hover_text("Show the walker at that time").clicked() {
                cx.commands.push(Command::ShowWalker { agent: c.agent, time: c.time });
            }
        }
        for v in gate {
            let text = format!("animation quality gate: {}", v.message);
            let r = ui.add(egui::Label::new(RichText::new(text).color(view::PROBLEM)).sense(Sense::click()));
            if r.on_hover_text(format!("{} = {:.4} (limit {:.4}); show the walker then", v.metric, v.value, v.limit))
                .clicked()
            {
                cx.commands.push(Command::ShowWalker { agent: v.agent, time: v.time });
            }
        }
        if let Some(note) = note {
            ui.horizontal_wrapped(|ui| {
                ui.label(RichText::new(format!("Note: {note}")).color(view::WARNING));
                if ui
                    .small_button("Make it tileable")
                    .on_hover_text("North := mirror(south), west := mirror(east)")
                    .clicked()
                {
                    cx.commands.push(Command::MakeTileable);
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

/// The limits the last bake's skeletal animation broke, each with its
/// culprit walker and time (none for a capsule bake).
pub fn gate_violations(r: &BakeResult) -> &[crowdpatch::animation::gate::Violation] {
    r.bake.skeletal.as_ref().map_or(&[][..], |s| &s.gate.violations[..])
}
