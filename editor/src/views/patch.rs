//! The patch view: the patch from above with pan and zoom, drawn in layers
//! ([`Layer`]) — ground, obstacles, the bake's stages, agents at the play
//! time, boundary points —, the current tool's input and overlay, and a
//! tooltip naming what is under the pointer with its problems. In tiling
//! mode the same transform shows [`TilingView`].

use crate::state::{Cx, Scene, Selection, ViewMode};
use crate::tools::{PatchHit, Pointer, ToolBox, ToolCx, ToolKind, pick_patch};
use crate::view::{self, Layer, ViewTransform};
use crate::views::chart::point_ring;
use crate::views::tiling::TilingView;
use crowdpatch::model::Direction;
use egui::{Color32, Pos2, Rect, Sense, Stroke, Ui, Vec2, vec2};

/// The patch view and its state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PatchView {
    /// Pan `[m]` from the patch's centre.
    pub pan: [f64; 2],
    /// Zoom factor.
    pub zoom: f32,
}

impl Default for PatchView {
    fn default() -> Self {
        PatchView { pan: [0.0, 0.0], zoom: 1.0 }
    }
}

impl PatchView {
    /// Back to the whole patch.
    pub fn reset(&mut self) {
        *self = PatchView::default();
    }

    /// Draws the view in `size`, handles pan, zoom and the tool's input;
    /// returns the transform used.
    pub fn ui(
        &mut self,
        ui: &mut Ui,
        size: Vec2,
        cx: &mut Cx<'_>,
        tools: &mut ToolBox,
        scene: &Scene<'_>,
    ) -> ViewTransform {
        let (rect, response) = ui.allocate_exact_size(size, Sense::click_and_drag());
        response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Canvas, true, "Patch view"));
        let l = cx.doc.size;
        let extent = if scene.mode == ViewMode::Tiling { 3.0 } else { 1.0 };
        // Pan (middle drag) and zoom (scroll, about the pointer).
        let panning = response.dragged_by(egui::PointerButton::Middle)
            || response.dragged_by(egui::PointerButton::Primary) && ui.input(|i| i.modifiers.alt);
        if panning {
            let d = response.drag_delta();
            let xf = ViewTransform::fit(rect, l, extent, self.pan, self.zoom);
            self.pan[0] -= (d.x / xf.scale) as f64;
            self.pan[1] += (d.y / xf.scale) as f64;
        }
        if response.hovered() {
            let scroll = ui.input(|i| i.smooth_scroll_delta.y);
            if scroll != 0.0
                && let Some(h) = response.hover_pos()
            {
                let before = ViewTransform::fit(rect, l, extent, self.pan, self.zoom).to_patch(h);
                self.zoom = (self.zoom * (scroll * 0.002).exp()).clamp(0.2, 20.0);
                let after = ViewTransform::fit(rect, l, extent, self.pan, self.zoom).to_patch(h);
                self.pan[0] += before[0] - after[0];
                self.pan[1] += before[1] - after[1];
            }
        }
        let xf = ViewTransform::fit(rect, l, extent, self.pan, self.zoom);
        let painter = ui.painter_at(rect);
        let dark = ui.visuals().dark_mode;
        painter.rect_filled(rect, 0.0, if dark { Color32::from_gray(20) } else { Color32::from_gray(220) });

        if scene.mode == ViewMode::Tiling {
            TilingView::draw(&painter, &xf, dark, cx, scene);
        } else {
            draw_layers(&painter, &xf, dark, cx, scene);
            let pointer = Pointer::from_response(&response);
            if !panning {
                tools.tool.patch_input(&mut ToolCx::from_cx(cx, tools.snap, scene.time), &xf, &pointer);
                // Nothing of the document under a select click: a walker?
                // (A press, or a click whose press and release came in one frame.)
                if let (Some(press), Some(r)) = (pointer.press.or(pointer.click), scene.result)
                    && tools.tool.kind() == ToolKind::Select
                    && *cx.selection == Selection::None
                    && let Some(i) = walker_at(&r.baked, scene.time, &xf, press)
                {
                    *cx.selection = Selection::Walker(i);
                }
            }
            tools.tool.draw_patch(&painter, &xf, response.hover_pos());
            if let Some(h) = response.hover_pos() {
                let p = xf.to_patch(h);
                painter.text(
                    rect.left_bottom() + vec2(6.0, -6.0),
                    egui::Align2::LEFT_BOTTOM,
                    format!("x {:.2} m, y {:.2} m", p[0], p[1]),
                    egui::FontId::monospace(12.0),
                    Color32::from_gray(150),
                );
                hover_tooltip(ui, &xf, h, cx, scene);
            }
        }
        painter.text(
            rect.right_top() + vec2(-8.0, 6.0),
            egui::Align2::RIGHT_TOP,
            format!("t = {:.2} s", scene.time),
            egui::FontId::monospace(14.0),
            if dark { Color32::WHITE } else { Color32::BLACK },
        );
        xf
    }
}

/// The walker of `baked` under screen position `at` at play time `time`
/// `[s]` (within its disc, or 6 px of its centre when drawn smaller), the
/// nearest if several; its agent index.
pub fn walker_at(
    baked: &crowdpatch::runtime::format::BakedPatch,
    time: f64,
    xf: &ViewTransform,
    at: Pos2,
) -> Option<usize> {
    let reach = xf.len(baked.header.agent_radius).max(6.0);
    view::agents_at(baked, time)
        .into_iter()
        .map(|(i, p, _)| (i, xf.to_screen(p).distance(at)))
        .filter(|&(_, d)| d <= reach)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}

/// What is under the pointer at `h`, with its problems, in a tooltip.
fn hover_tooltip(ui: &Ui, xf: &ViewTransform, h: Pos2, cx: &Cx<'_>, scene: &Scene<'_>) {
    let d = cx.derived;
    let text = match pick_patch(cx.doc, &d.sides, xf, h) {
        Some(PatchHit::Point(id)) => {
            let b = d.sides[id.side.index()].pattern.points(id.direction).get(id.index).copied();
            let path = id.path();
            let mut t = b.map_or(path.to_string(), |b| format!("{path}: s = {:.2} m, t = {:.2} s", b.s, b.t));
            for m in d.point_problems.get(&id).into_iter().flatten() {
                t.push_str(&format!("\n! {m}"));
            }
            Some(t)
        }
        Some(PatchHit::Obstacle(k) | PatchHit::Rim(k) | PatchHit::Vertex(k, _)) => {
            let mut t = format!("obstacles[{k}]");
            for m in d.obstacle_problems.get(&k).into_iter().flatten() {
                t.push_str(&format!("\n! {m}"));
            }
            for w in d.warnings_of(k) {
                t.push_str(&format!("\n! {}", w.message));
            }
            Some(t)
        }
        None => scene.result.and_then(|r| {
            let i = walker_at(&r.baked, scene.time, xf, h)?;
            let a = r.bake.agents.get(i)?;
            Some(format!(
                "walker {i}: pace {:.2} m/s, {:.2} m/s now (click to inspect)",
                a.preferred_speed,
                a.path.velocity_at(scene.time).norm()
            ))
        }),
    };
    if let Some(text) = text {
        let layer = egui::LayerId::new(egui::Order::Tooltip, egui::Id::unique("patch-tip"));
        ui.ctx().layer_painter(layer).text(
            h + vec2(14.0, 14.0),
            egui::Align2::LEFT_TOP,
            text,
            egui::FontId::proportional(13.0),
            Color32::from_rgb(255, 230, 160),
        );
    }
}

/// The layers of the patch view, bottom to top.
pub fn layers(scene: &Scene<'_>) -> Vec<Layer> {
    let mut out = vec![Layer::Ground, Layer::Obstacles];
    if scene.result.is_some() {
        let s = scene.stages;
        let stages = [
            (s.matching, Layer::MatchingLines),
            (s.collision_free, Layer::CollisionFree),
            (s.smoothed, Layer::Smoothed),
            (s.collisions, Layer::Collisions),
            (s.agents, Layer::Agents),
        ];
        out.extend(stages.into_iter().filter(|(on, _)| *on).map(|(_, layer)| layer));
    }
    out.push(Layer::Boundary);
    out
}

fn draw_layers(painter: &egui::Painter, xf: &ViewTransform, dark: bool, cx: &Cx<'_>, scene: &Scene<'_>) {
    let (doc, d) = (&*cx.doc, cx.derived);
    let pi = doc.period;
    for layer in layers(scene) {
        match (layer, scene.result) {
            (Layer::Ground, _) => view::draw_ground(painter, xf, doc.size, [0.0, 0.0], dark),
            (Layer::Obstacles, _) => view::draw_obstacles(painter, xf, &doc.obstacles, [0.0, 0.0], |k| {
                if *cx.selection == Selection::Obstacle(k) {
                    Some(view::SELECTED)
                } else if d.obstacle_problems.contains_key(&k) {
                    Some(view::PROBLEM)
                } else if d.warnings_of(k).next().is_some() {
                    Some(view::WARNING)
                } else {
                    None
                }
            }),
            (Layer::MatchingLines, Some(r)) => {
                for a in &r.bake.initial {
                    if let (Some(e), Some(x)) = (a.entry, a.exit) {
                        let c = view::time_colour(e.t, pi);
                        painter.line_segment(
                            [xf.to_screen([e.position.x, e.position.y]), xf.to_screen([x.position.x, x.position.y])],
                            Stroke::new(1.2, c),
                        );
                    } else {
                        let pts: Vec<_> = a.path.points.iter().map(|c| ([c.p.x, c.p.y], c.t)).collect();
                        view::draw_path(painter, xf, &pts, pi, 1.2, 255, true);
                    }
                }
            }
            (Layer::CollisionFree | Layer::Smoothed, Some(r)) => {
                let (agents, w, alpha) = if layer == Layer::Smoothed {
                    (&r.bake.agents, 2.4, 255)
                } else {
                    (&r.bake.collision_free, 1.6, 170)
                };
                for a in agents {
                    let pts: Vec<_> = a.path.points.iter().map(|c| ([c.p.x, c.p.y], c.t)).collect();
                    view::draw_path(painter, xf, &pts, r.baked.header.period, w, alpha, true);
                }
            }
            (Layer::Collisions, Some(r)) => {
                for c in &r.bake.remaining {
                    painter.circle_stroke(
                        xf.to_screen([c.position.x, c.position.y]),
                        xf.len(r.baked.header.agent_radius * 1.6),
                        Stroke::new(2.0, view::PROBLEM),
                    );
                }
            }
            (Layer::Agents, Some(r)) => {
                view::draw_agents_at(painter, xf, &r.baked, scene.time, [0.0, 0.0]);
                if let Selection::Walker(i) = *cx.selection {
                    draw_selected_walker(painter, xf, r, i, scene.time);
                }
            }
            (Layer::Boundary, _) => draw_boundary(painter, xf, cx),
            (_, None) => {}
        }
    }
}

/// Endogenous agents' waypoints, the selected point's crossing velocity and
/// the boundary points.
fn draw_boundary(painter: &egui::Painter, xf: &ViewTransform, cx: &Cx<'_>) {
    let doc = &*cx.doc;
    // Endogenous agents' waypoints: small squares joined in loop order.
    for e in &doc.endogenous {
        let pts: Vec<Pos2> = e.waypoints.iter().map(|w| xf.to_screen(w.position)).collect();
        if pts.len() > 1 {
            let mut closed = pts.clone();
            closed.push(pts[0]);
            painter.add(egui::Shape::dashed_line(&closed, Stroke::new(1.0, Color32::from_gray(150)), 4.0, 4.0));
        }
        for (w, p) in e.waypoints.iter().zip(&pts) {
            let c = view::time_colour(w.t, doc.period);
            painter.rect_filled(Rect::from_center_size(*p, vec2(7.0, 7.0)), 1.0, c);
        }
    }
    // The selected point's crossing velocity, as an arrow (1 s of walking).
    if let Selection::Point(id) = *cx.selection
        && let Some(c) = cx.derived.resolved.as_ref().and_then(|p| {
            p.crossings().into_iter().find(|c| c.side == id.side && c.direction == id.direction && c.index == id.index)
        })
    {
        let a = xf.to_screen([c.position.x, c.position.y]);
        let (from, to) = match c.direction {
            Direction::Entry => (a, xf.to_screen([c.position.x + c.velocity.x, c.position.y + c.velocity.y])),
            Direction::Exit => (xf.to_screen([c.position.x - c.velocity.x, c.position.y - c.velocity.y]), a),
        };
        painter.arrow(from, to - from, Stroke::new(2.0, view::SELECTED));
    }
    // Walking groups: their members joined along the side.
    for (side, members) in view::group_links(&cx.derived.sides) {
        let pts: Vec<Pos2> = members.iter().map(|&(s, _)| xf.to_screen(side.point(s, doc.size))).collect();
        painter.add(egui::Shape::line(pts, Stroke::new(4.0, view::GROUP_LINK)));
    }
    for (id, p, t) in view::boundary_positions(&cx.derived.sides, doc.size, xf) {
        let colour = view::time_colour(t, doc.period);
        view::draw_marker(painter, p, view::inward_screen(id.side), id.direction, colour, 6.0, point_ring(cx, id));
    }
}

/// The selected walker: its route (smoothed path) and a ring round it
/// (each of its instances) at play time `time` `[s]`.
fn draw_selected_walker(
    painter: &egui::Painter,
    xf: &ViewTransform,
    r: &crate::bake_job::BakeResult,
    i: usize,
    time: f64,
) {
    let Some(a) = r.bake.agents.get(i) else { return };
    let line: Vec<Pos2> = a.path.points.iter().map(|c| xf.to_screen([c.p.x, c.p.y])).collect();
    painter.add(egui::Shape::line(line, Stroke::new(2.0, view::SELECTED)));
    let rad = xf.len(r.baked.header.agent_radius).max(2.0) + 4.0;
    for (_, p, _) in view::agents_at(&r.baked, time).into_iter().filter(|(k, ..)| *k == i) {
        painter.circle_stroke(xf.to_screen(p), rad, Stroke::new(2.5, view::SELECTED));
    }
}
