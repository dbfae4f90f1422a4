//! The inspector: the selected point (s, t, crossing velocity) or obstacle
//! (centre and radius, or vertices), edited in place, with its problems.

use crate::command::Command;
use crate::edit::{self, PointId, SideSource};
use crate::state::{Cx, Selection};
use crate::view;
use crowdpatch::model::{BoundaryPoint, DEFAULT_COMFORT_SPEED, Direction, Obstacle};
use egui::{RichText, Ui};

/// The inspector panel (no state of its own).
#[derive(Debug, Clone, Copy, Default)]
pub struct InspectorPanel;

impl InspectorPanel {
    /// Draws the panel.
    pub fn ui(&mut self, ui: &mut Ui, cx: &mut Cx<'_>) {
        match *cx.selection {
            Selection::None => {
                ui.label(RichText::new("Nothing selected. Click a point or an obstacle.").weak());
            }
            Selection::Point(id) => point(ui, cx, id),
            Selection::Obstacle(k) => obstacle(ui, cx, k),
        }
    }
}

fn point(ui: &mut Ui, cx: &mut Cx<'_>, id: PointId) {
    let view = &cx.derived.sides[id.side.index()];
    let Some(b) = view.pattern.points(id.direction).get(id.index).copied() else {
        ui.label("(gone)");
        return;
    };
    ui.label(RichText::new(id.path().to_string()).monospace());
    if let SideSource::File(f) = &view.source {
        ui.label(format!("from the pattern file {f}: s = {:.2} m, t = {:.2} s", b.s, b.t));
        if ui.button("Copy the pattern into the document to edit it").clicked() {
            cx.commands.push(Command::InlineSide(id.side));
        }
    } else if let (l, pi) = (cx.doc.size, cx.doc.period)
        && let Some(p) = edit::point_mut(cx.doc, id)
    {
        cx.edited |= point_grid(ui, p, id, l, pi);
    }
    if ui.button("Delete (Del)").clicked() {
        cx.commands.push(Command::DeletePoint(id));
    }
    for m in cx.derived.point_problems.get(&id).into_iter().flatten() {
        ui.colored_label(view::PROBLEM, m);
    }
}

/// A length in `[0, max]` `[m]`.
fn metres(v: &mut f64, max: f64) -> egui::DragValue<'_> {
    egui::DragValue::new(v).range(0.0..=max).speed(0.02).suffix(" m")
}

/// s, t and velocity of an inline point of a side of length `l` `[m]` in a
/// period `pi` `[s]`; whether they changed.
fn point_grid(ui: &mut Ui, p: &mut BoundaryPoint, id: PointId, l: f64, pi: f64) -> bool {
    egui::Grid::new("point")
        .num_columns(2)
        .show(ui, |ui| {
            let mut changed = false;
            ui.label("s");
            changed |= ui.add(egui::DragValue::new(&mut p.s).range(0.0..=l).speed(0.02).suffix(" m")).changed();
            ui.end_row();
            ui.label("t");
            changed |= ui.add(egui::DragValue::new(&mut p.t).range(0.0..=pi - 1e-3).speed(0.02).suffix(" s")).changed();
            ui.end_row();
            let mut custom = p.velocity.is_some();
            ui.label("velocity");
            if ui.checkbox(&mut custom, "custom (patch frame)").changed() {
                p.velocity = if custom {
                    let n = id.side.inward_normal();
                    let sign = if id.direction == Direction::Entry { 1.0 } else { -1.0 };
                    Some([n[0] * DEFAULT_COMFORT_SPEED * sign, n[1] * DEFAULT_COMFORT_SPEED * sign])
                } else {
                    None
                };
                changed = true;
            }
            ui.end_row();
            if let Some(v) = &mut p.velocity {
                ui.label("vx, vy");
                ui.horizontal(|ui| {
                    changed |= ui.add(egui::DragValue::new(&mut v[0]).speed(0.01).suffix(" m/s")).changed();
                    changed |= ui.add(egui::DragValue::new(&mut v[1]).speed(0.01).suffix(" m/s")).changed();
                });
                ui.end_row();
            } else {
                ui.label("");
                ui.label(RichText::new("default: along the normal at comfort speed").weak());
                ui.end_row();
            }
            changed
        })
        .inner
}

fn obstacle(ui: &mut Ui, cx: &mut Cx<'_>, k: usize) {
    let l = cx.doc.size;
    let Some(o) = cx.doc.obstacles.get_mut(k) else {
        ui.label("(gone)");
        return;
    };
    ui.label(RichText::new(format!("obstacles[{k}]")).monospace());
    let mut changed = false;
    match o {
        Obstacle::Circle { center, radius } => {
            ui.horizontal(|ui| {
                ui.label("centre");
                changed |= ui.add(metres(&mut center[0], l)).changed();
                changed |= ui.add(metres(&mut center[1], l)).changed();
            });
            ui.horizontal(|ui| {
                ui.label("radius");
                let r = egui::DragValue::new(radius).range(0.05..=l / 2.0).speed(0.02).suffix(" m");
                changed |= ui.add(r).changed();
            });
        }
        Obstacle::Polygon(vs) => {
            for (i, v) in vs.iter_mut().enumerate() {
                ui.horizontal(|ui| {
                    ui.label(format!("[{i}]"));
                    changed |= ui.add(metres(&mut v[0], l)).changed();
                    changed |= ui.add(metres(&mut v[1], l)).changed();
                });
            }
        }
    }
    cx.edited |= changed;
    if ui.button("Delete (Del)").clicked() {
        cx.commands.push(Command::DeleteObstacle(k));
    }
    for m in cx.derived.obstacle_problems.get(&k).into_iter().flatten() {
        ui.colored_label(view::PROBLEM, m);
    }
    for w in cx.derived.warnings_of(k) {
        ui.colored_label(view::WARNING, &w.message);
    }
}
