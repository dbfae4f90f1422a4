//! The document's parameters: name, size, period, agent radius, comfort
//! speed, seed, and the solver's options (matching, solver — every
//! [`SolverKind`], each with what it is —, iterations, margin, smoothing…).
//! The widgets edit the document directly and report their changes through
//! [`Cx::edited`].

use crate::state::Cx;
use crowdpatch::model::{DEFAULT_AGENT_RADIUS, DEFAULT_COMFORT_SPEED, MatchingMode, SolverKind};
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
    /// Draws the panel.
    pub fn ui(&mut self, ui: &mut Ui, cx: &mut Cx<'_>) {
        let doc = &mut *cx.doc;
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
                let size = egui::DragValue::new(&mut doc.size).range(1.0..=1000.0).speed(0.1).suffix(" m");
                changed |= row(ui, "Size L", size);
                let period = egui::DragValue::new(&mut doc.period).range(0.5..=600.0).speed(0.1).suffix(" s");
                changed |= row(ui, "Period π", period);
                changed |=
                    opt_value(ui, "Agent radius r", &mut doc.agent_radius, DEFAULT_AGENT_RADIUS, 0.01..=4.0, " m");
                changed |=
                    opt_value(ui, "Comfort speed", &mut doc.comfort_speed, DEFAULT_COMFORT_SPEED, 0.1..=5.0, " m/s");
                let l = ui.label("Seed");
                let mut seed = doc.seed.unwrap_or(0);
                if ui.add(egui::DragValue::new(&mut seed)).labelled_by(l.id).changed() {
                    doc.seed = Some(seed);
                    changed = true;
                }
                ui.end_row();
                changed |= matching_combo(ui, &mut doc.solver.matching);
                changed |= solver_combo(ui, &mut doc.solver.method);
                let s = &mut doc.solver;
                changed |= row(ui, "Max iterations", egui::DragValue::new(&mut s.max_iterations).range(1..=1_000_000));
                let margin = egui::DragValue::new(&mut s.margin).range(0.0..=1.0).speed(0.005).suffix(" m");
                changed |= row(ui, "Margin", margin);
                changed |= row(ui, "Smoothing", egui::Checkbox::new(&mut s.smoothing, ""));
                let tack = egui::DragValue::new(&mut s.tack_interval).range(0.05..=10.0).speed(0.01).suffix(" s");
                changed |= row(ui, "Tack interval", tack);
                changed |=
                    row(ui, "Fast factor", egui::DragValue::new(&mut s.fast_factor).range(1.01..=10.0).speed(0.01));
                changed |=
                    row(ui, "Slow factor", egui::DragValue::new(&mut s.slow_factor).range(0.0..=0.99).speed(0.01));
                changed |=
                    row(ui, "Wait factor", egui::DragValue::new(&mut s.wait_factor).range(0.0..=2.0).speed(0.01));
                changed
            })
            .inner;
        cx.edited |= changed;
    }
}

/// A labelled row of the grid; whether the widget changed its value.
fn row(ui: &mut Ui, label: &str, widget: impl egui::Widget) -> bool {
    let l = ui.label(label);
    let changed = ui.add(widget).labelled_by(l.id).changed();
    ui.end_row();
    changed
}

/// A row for an optional value shown with its default.
fn opt_value(
    ui: &mut Ui,
    label: &str,
    v: &mut Option<f64>,
    default: f64,
    range: std::ops::RangeInclusive<f64>,
    unit: &str,
) -> bool {
    let mut x = v.unwrap_or(default);
    let changed = row(ui, label, egui::DragValue::new(&mut x).range(range).speed(0.01).suffix(unit));
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
