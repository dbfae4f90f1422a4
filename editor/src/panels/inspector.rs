//! The inspector: the selected point (s, t, crossing velocity) or obstacle
//! (centre and radius, or vertices), edited in place, with its problems.

use super::field::{self, number};
use crate::bake_job::BakeResult;
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
    /// Draws the panel; `result` is the last bake (for a selected walker).
    pub fn ui(&mut self, ui: &mut Ui, cx: &mut Cx<'_>, result: Option<&BakeResult>) {
        match *cx.selection {
            Selection::None => {
                ui.label(RichText::new("Nothing selected. Click a point, an obstacle or a walker.").weak());
            }
            Selection::Point(id) => point(ui, cx, id),
            Selection::Obstacle(k) => obstacle(ui, cx, k),
            Selection::Walker(i) => walker(ui, cx, result, i),
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
    let members = b.group.map(|g| (g, view.pattern.points(id.direction).iter().filter(|p| p.group == Some(g)).count()));
    let inline = !matches!(view.source, SideSource::File(_));
    ui.horizontal(|ui| {
        match members {
            Some((g, n)) => {
                ui.label(format!("Walks in group {g} ({n} on this side)"));
                if inline && ui.button("Walk alone").on_hover_text("Leave the walking group").clicked() {
                    cx.commands.push(Command::LeaveGroup(id));
                }
            }
            None => {
                ui.label("Walks alone");
                if inline
                    && ui
                        .button("Walk with the nearest")
                        .on_hover_text("Join the walking group of the nearest point of this side (or start one with it): they enter or leave together")
                        .clicked()
                {
                    cx.commands.push(Command::JoinGroup(id));
                }
            }
        }
    });
    if let SideSource::File(f) = &view.source {
        ui.label(format!("from the pattern file {f}: s = {:.2} m, t = {:.2} s", b.s, b.t));
        if ui.button("Copy the pattern into the document to edit it").clicked() {
            cx.commands.push(Command::InlineSide(id.side));
        }
    } else if let (l, pi) = (cx.doc.size, cx.doc.period)
        && let Some(p) = edit::point_mut(cx.doc, id)
    {
        let before = *p;
        if point_grid(ui, p, id, l, pi) {
            // s in [0, L] and t in [0, π), as the format says; a typed value
            // outside is refused, never clamped.
            if !(p.s.is_finite() && (0.0..=l).contains(&p.s)) {
                cx.refused =
                    Some(field::refusal(&format!("{} s = {}", id.path(), p.s), format!("must be in [0, {l}] m")));
                *p = before;
            } else if !(p.t.is_finite() && (0.0..pi).contains(&p.t)) {
                cx.refused =
                    Some(field::refusal(&format!("{} t = {}", id.path(), p.t), format!("must be in [0, {pi}) s")));
                *p = before;
            } else {
                cx.edited = true;
            }
        }
    }
    if ui.button("Delete (Del)").clicked() {
        cx.commands.push(Command::DeletePoint(id));
    }
    for m in cx.derived.point_problems.get(&id).into_iter().flatten() {
        ui.colored_label(view::PROBLEM, m);
    }
}

/// A length `[m]`, applied when committed, never clamped.
fn metres(v: &mut f64) -> egui::DragValue<'_> {
    number(v, 0.02, " m")
}

/// s, t and velocity of an inline point (of a side of length `_l` `[m]` in
/// a period `_pi` `[s]`, checked by the caller); whether they changed.
fn point_grid(ui: &mut Ui, p: &mut BoundaryPoint, id: PointId, _l: f64, _pi: f64) -> bool {
    egui::Grid::new("point")
        .num_columns(2)
        .show(ui, |ui| {
            let mut changed = false;
            ui.label("s");
            changed |= ui.add(number(&mut p.s, 0.02, " m")).changed();
            ui.end_row();
            ui.label("t");
            changed |= ui.add(number(&mut p.t, 0.02, " s")).changed();
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
                    changed |= ui.add(number(&mut v[0], 0.01, " m/s")).changed();
                    changed |= ui.add(number(&mut v[1], 0.01, " m/s")).changed();
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
    let before = o.clone();
    let mut changed = false;
    match o {
        Obstacle::Circle { center, radius } => {
            ui.horizontal(|ui| {
                ui.label("centre");
                changed |= ui.add(metres(&mut center[0])).changed();
                changed |= ui.add(metres(&mut center[1])).changed();
            });
            ui.horizontal(|ui| {
                ui.label("radius");
                changed |= ui.add(metres(radius)).changed();
            });
        }
        Obstacle::Polygon(vs) => {
            for (i, v) in vs.iter_mut().enumerate() {
                ui.horizontal(|ui| {
                    ui.label(format!("[{i}]"));
                    changed |= ui.add(metres(&mut v[0])).changed();
                    changed |= ui.add(metres(&mut v[1])).changed();
                });
            }
        }
    }
    if changed {
        match obstacle_refusal(o, l) {
            Some(why) => {
                cx.refused = Some(field::refusal(&format!("obstacles[{k}]"), why));
                *o = before;
            }
            None => cx.edited = true,
        }
    }
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

/// Why a typed obstacle is refused, or `None`: a coordinate outside the
/// patch `[0, l]` `[m]`, or a radius that is not a number in (0, l/2].
fn obstacle_refusal(o: &Obstacle, l: f64) -> Option<String> {
    let inside = |v: f64| v.is_finite() && (0.0..=l).contains(&v);
    match o {
        Obstacle::Circle { center, radius } => {
            if !center.iter().all(|&c| inside(c)) {
                Some(format!("the centre ({}, {}) must lie in [0, {l}]² m", center[0], center[1]))
            } else if !(radius.is_finite() && *radius > 0.0 && *radius <= l / 2.0) {
                Some(format!("the radius {radius} m must be in (0, {}] m", l / 2.0))
            } else {
                None
            }
        }
        Obstacle::Polygon(vs) => vs
            .iter()
            .position(|v| !v.iter().all(|&c| inside(c)))
            .map(|i| format!("vertex [{i}] = ({}, {}) must lie in [0, {l}]² m", vs[i][0], vs[i][1])),
    }
}

/// A walker of the last bake: where it enters and leaves, its pace, its
/// speeds and route, and the collisions it is in (each a button that shows
/// it at that time).
fn walker(ui: &mut Ui, cx: &mut Cx<'_>, result: Option<&BakeResult>, i: usize) {
    let Some((r, a)) = result.and_then(|r| r.bake.agents.get(i).map(|a| (r, a))) else {
        ui.label("(no such walker in the last bake)");
        return;
    };
    ui.label(RichText::new(format!("walker {i}")).strong());
    let (from, to) = match a.kind {
        crowdpatch::runtime::format::AgentKind::Exogenous { entry, exit } => (
            format!("sides.{}.entries[{}]", entry.side.name(), entry.index),
            format!("sides.{}.exits[{}]", exit.side.name(), exit.index),
        ),
        crowdpatch::runtime::format::AgentKind::Endogenous { index } => {
            (format!("endogenous[{index}]"), "its own loop (endogenous)".into())
        }
    };
    let path = &a.path;
    let duration = path.end() - path.start();
    egui::Grid::new("walker").num_columns(2).show(ui, |ui| {
        for (k, v) in [
            ("enters", from),
            ("leaves", to),
            ("pace", format!("{:.2} m/s (its preferred speed)", a.preferred_speed)),
            ("speed", format!("{:.2} m/s mean, {:.2} m/s at most", path.mean_speed(), path.max_speed())),
            ("route", format!("{:.1} m in {:.1} s", path.length(), duration)),
            ("control points", path.points.len().to_string()),
        ] {
            ui.label(k);
            ui.label(v);
            ui.end_row();
        }
    });
    // Its footsteps and its own figures of the animation quality gate.
    if let Some(plan) = r.bake.skeletal.as_ref().and_then(|s| s.plans.get(i))
        && let Some(g) = r.walker_gate(i)
    {
        let steps = plan.as_ref().map_or(0, |p| p.footsteps.len());
        let cm = |m: f64| format!("{:.1} cm", 100.0 * m);
        egui::Grid::new("walker gate").num_columns(2).show(ui, |ui| {
            for (k, v) in [
                ("footsteps", if steps == 0 { "none (stands)".to_owned() } else { steps.to_string() }),
                ("stance drift", format!("{} p95, {} at most", cm(g.stance_drift_p95), cm(g.stance_drift_max.value))),
                ("hips off the path", format!("{} p95", cm(g.root_deviation_p95))),
                ("hip height / leg", format!("{:.2} mean, {:.2} least", g.hip_height_mean, g.hip_height_min.value)),
                ("fastest joint", format!("{:.1} m/s ({})", g.joint_speed_max.value, g.joint_speed_max.what)),
                ("shortest step", cm(g.step_length_min.value)),
            ] {
                ui.label(k);
                ui.label(v);
                ui.end_row();
            }
        });
        for v in r.bake.skeletal.iter().flat_map(|s| &s.gate.violations).filter(|v| v.agent == i) {
            let text = format!("quality gate: {}", v.message);
            if ui.add(egui::Button::new(RichText::new(text).color(view::PROBLEM)).small()).clicked() {
                cx.commands.push(Command::ShowWalker { agent: i, time: v.time });
            }
        }
    }
    if r.bake.collision.hurried.contains(&i) {
        ui.colored_label(view::WARNING, "runs briefly where walking left it colliding (see the bake's notes)");
    }
    let mine: Vec<_> =
        r.bake.remaining.iter().filter(|c| c.agent == i || c.other == crowdpatch::proximity::Other::Agent(i)).collect();
    for c in mine {
        let text = format!("collides at t = {:.2} s: {:.3} m apart (needs {:.2} m)", c.time, c.distance, c.required);
        if ui.add(egui::Button::new(RichText::new(text).color(view::PROBLEM)).small()).clicked() {
            cx.commands.push(Command::ShowWalker { agent: i, time: c.time });
        }
    }
}
