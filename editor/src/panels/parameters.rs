//! The document's parameters: name, size, period, agent radius, comfort
//! speed, seed, and the solver's options (matching, solver — every
//! [`SolverKind`], each with what it is —, iterations, margin, smoothing…).
//! The widgets edit the document directly when a value is committed (Enter
//! or the focus leaves; [`field`]) and report their changes through
//! [`Cx::edited`], or refuse a value the format does not accept through
//! [`Cx::refused`].

use super::field::{self, number};
use crate::edit;
use crate::state::Cx;
use crowdpatch::model::{
    DEFAULT_AGENT_RADIUS, DEFAULT_COMFORT_SPEED, MatchingMode, PatchDocument, SolverKind, SolverOptions,
};
use crowdpatch::validate::parameter_problems;
use egui::Ui;

/// The parameters panel (no state of its own).
#[derive(Debug, Clone, Copy, Default)]
pub struct ParametersPanel;

/// A solver's name in the editor, a few words on what it is (shown in the
/// list), and a sentence (shown on hover); from the variant docs of
/// [`SolverKind`].
pub fn solver_text(kind: SolverKind) -> (&'static str, &'static str, &'static str) {
    match kind {
        SolverKind::Paper => (
            "Paper",
            "Algorithm 2 as written",
            "The seed paper's Algorithm 2 as written (spatial pushes, the paper's initial paths): the in-run baseline.",
        ),
        SolverKind::Default => (
            "Default",
            "refinement and polish",
            "The project's solver: smooth pushes in space and time, a linear-programming refinement where the greedy pass stalls, a polish of speed and turn artefacts.",
        ),
        SolverKind::Greedy => (
            "Greedy",
            "no refinement",
            "The project's solver without its linear-programming refinement and polish (greedy passes only): what the refinement buys.",
        ),
        SolverKind::SocialForces => (
            "Social forces",
            "baseline, not collision-free",
            "The original crowd patches' adapted social forces (Yersin et al. 2009): a quality baseline, not guaranteed collision-free.",
        ),
    }
}

/// A matching mode's name in the editor and its algorithm.
pub fn matching_text(mode: MatchingMode) -> (&'static str, &'static str) {
    match mode {
        MatchingMode::Stable => ("Stable", "Gale–Shapley"),
        MatchingMode::Optimal => ("Optimal", "Kuhn–Munkres"),
    }
}

impl ParametersPanel {
    /// Draws the panel. A committed value that the format refuses
    /// ([`crowdpatch::validate::parameter_problems`]: the limits `validate`
    /// and `bake` apply), or a smaller L that would leave points, obstacles
    /// or waypoints outside the patch, is not applied: the parameters go
    /// back to what they were and [`Cx::refused`] says why.
    pub fn ui(&mut self, ui: &mut Ui, cx: &mut Cx<'_>) {
        let doc = &mut *cx.doc;
        let before = Parameters::of(doc);
        let changed = egui::Grid::new("params")
            .num_columns(2)
            .striped(true)
            .show(ui, |ui| {
                let mut changed = false;
                let l = ui.label("Name");
                let mut name = doc.name.clone().unwrap_or_default();
                if ui.text_edit_singleline(&mut name).labelled_by(l.id).changed() {
                    doc.name = if name.is_empty() { None } else { Some(name) };
                    changed = true;
                }
                ui.end_row();
                changed |= row(ui, "Size L", number(&mut doc.size, 0.1, " m"));
                changed |= row(ui, "Period π", number(&mut doc.period, 0.1, " s"));
                changed |= opt_value(ui, "Agent radius r", &mut doc.agent_radius, DEFAULT_AGENT_RADIUS, " m");
                changed |= opt_value(ui, "Comfort speed", &mut doc.comfort_speed, DEFAULT_COMFORT_SPEED, " m/s");
                let l = ui.label("Seed");
                let mut seed = doc.seed.unwrap_or(0);
                if ui.add(number(&mut seed, 1.0, "")).labelled_by(l.id).changed() {
                    doc.seed = Some(seed);
                    changed = true;
                }
                ui.end_row();
                changed |= matching_combo(ui, &mut doc.solver.matching);
                changed |= solver_combo(ui, &mut doc.solver.method);
                let s = &mut doc.solver;
                changed |= row(ui, "Max iterations", number(&mut s.max_iterations, 1.0, ""));
                changed |= row(ui, "Margin", number(&mut s.margin, 0.005, " m"));
                changed |= row(ui, "Smoothing", egui::Checkbox::new(&mut s.smoothing, ""));
                changed |= row(ui, "Tack interval", number(&mut s.tack_interval, 0.01, " s"));
                changed |= row(ui, "Fast factor", number(&mut s.fast_factor, 0.01, ""));
                changed |= row(ui, "Slow factor", number(&mut s.slow_factor, 0.01, ""));
                changed |= row(ui, "Wait factor", number(&mut s.wait_factor, 0.01, ""));
                changed
            })
            .inner;
        if changed {
            match refusal(&before, doc) {
                Some(message) => {
                    before.restore(doc);
                    cx.refused = Some(message);
                }
                None => cx.edited = true,
            }
        }
    }
}

/// The parameters the panel edits, as they were before a frame's edit.
struct Parameters {
    size: f64,
    period: f64,
    agent_radius: Option<f64>,
    comfort_speed: Option<f64>,
    seed: Option<u64>,
    solver: SolverOptions,
}

impl Parameters {
    fn of(doc: &PatchDocument) -> Parameters {
        Parameters {
            size: doc.size,
            period: doc.period,
            agent_radius: doc.agent_radius,
            comfort_speed: doc.comfort_speed,
            seed: doc.seed,
            solver: doc.solver.clone(),
        }
    }

    fn restore(self, doc: &mut PatchDocument) {
        doc.size = self.size;
        doc.period = self.period;
        doc.agent_radius = self.agent_radius;
        doc.comfort_speed = self.comfort_speed;
        doc.seed = self.seed;
        doc.solver = self.solver;
    }
}

/// Why an edit from `before` to `doc` is refused, or `None`: a parameter
/// problem it makes that was not there before (the format's limits, as
/// `validate` words them), or a smaller L with items beyond it.
fn refusal(before: &Parameters, doc: &PatchDocument) -> Option<String> {
    let old = PatchDocument {
        size: before.size,
        period: before.period,
        agent_radius: before.agent_radius,
        comfort_speed: before.comfort_speed,
        solver: before.solver.clone(),
        ..PatchDocument::new(before.size, before.period)
    };
    let known: Vec<String> =
        parameter_problems(&old.header(), &old.solver).iter().map(|p| p.path.to_string()).collect();
    if let Some(p) =
        parameter_problems(&doc.header(), &doc.solver).iter().find(|p| !known.contains(&p.path.to_string()))
    {
        return Some(field::refusal(&p.path.to_string(), &p.message));
    }
    if doc.size < before.size {
        let beyond = edit::beyond(doc, doc.size);
        if !beyond.is_empty() {
            return Some(field::refusal(
                &format!("size = {}", doc.size),
                format!("{} lie beyond {} m; move or delete them first", beyond.join(", "), doc.size),
            ));
        }
    }
    None
}

/// A labelled row of the grid; whether the widget changed its value.
fn row(ui: &mut Ui, label: &str, widget: impl egui::Widget) -> bool {
    let l = ui.label(label);
    let changed = ui.add(widget).labelled_by(l.id).changed();
    ui.end_row();
    changed
}

/// A row for an optional value shown with its default.
fn opt_value(ui: &mut Ui, label: &str, v: &mut Option<f64>, default: f64, unit: &str) -> bool {
    let mut x = v.unwrap_or(default);
    let changed = row(ui, label, number(&mut x, 0.01, unit));
    if changed {
        *v = Some(x);
    }
    changed
}

fn matching_combo(ui: &mut Ui, matching: &mut MatchingMode) -> bool {
    let l = ui.label("Matching");
    let mut changed = false;
    egui::ComboBox::from_id_salt("matching")
        .selected_text(matching_text(*matching).0)
        .show_ui(ui, |ui| {
            for m in MatchingMode::ALL {
                let (name, algorithm) = matching_text(m);
                changed |= ui.selectable_value(matching, m, format!("{name} ({algorithm})")).changed();
            }
        })
        .response
        .labelled_by(l.id);
    ui.end_row();
    changed
}

/// Every solver of [`SolverKind::ALL`], with what it is.
fn solver_combo(ui: &mut Ui, method: &mut SolverKind) -> bool {
    let l = ui.label("Solver");
    let mut changed = false;
    egui::ComboBox::from_id_salt("solver")
        .selected_text(solver_text(*method).0)
        .show_ui(ui, |ui| {
            for k in SolverKind::ALL {
                let (name, short, long) = solver_text(k);
                changed |= ui.selectable_value(method, k, format!("{name} ({short})")).on_hover_text(long).changed();
            }
        })
        .response
        .labelled_by(l.id)
        .on_hover_text(solver_text(*method).2);
    ui.end_row();
    changed
}
