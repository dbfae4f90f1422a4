//! The s–t charts, one per side: arc position s across, time t up; the
//! side's entries (▲) and exits (○), the opposite side's points mirrored in
//! grey (where this side's must be for the patch to tile with itself), the
//! play time, problems ringed in red; pointer input goes to the tool.

use crate::edit::{PointId, SideSource};
use crate::state::{Cx, Selection};
use crate::tools::{Pointer, ToolBox, ToolCx, pick_chart};
use crate::view::{self, ChartTransform};
use crowdpatch::model::{Direction, Side};
use crowdpatch::problem::Target;
use egui::{Color32, Painter, Rect, RichText, Sense, Stroke, Ui, vec2};

/// The charts (no state of their own).
#[derive(Debug, Clone, Copy, Default)]
pub struct ChartView;

/// The ring of a boundary point: selected, else with a problem, else none.
pub fn point_ring(cx: &Cx<'_>, id: PointId) -> Option<Color32> {
    if *cx.selection == Selection::Point(id) {
        Some(view::SELECTED)
    } else if cx.derived.point_problems.contains_key(&id) {
        Some(view::PROBLEM)
    } else {
        None
    }
}

impl ChartView {
    /// Draws the four charts side by side, `height` high, with the play time
    /// at `time` `[s]`; returns their transforms by side index.
    pub fn ui(
        &mut self,
        ui: &mut Ui,
        height: f32,
        cx: &mut Cx<'_>,
        tools: &mut ToolBox,
        time: f64,
    ) -> [Option<ChartTransform>; 4] {
        let mut out = [None; 4];
        let w = (ui.available_width() - 3.0 * 6.0) / 4.0;
        ui.horizontal(|ui| {
            for side in Side::ALL {
                out[side.index()] = Some(self.chart(ui, side, vec2(w, height), cx, tools, time));
            }
        });
        out
    }

    /// The legend under the charts (and the parity problem, if any).
    pub fn legend(ui: &mut Ui, cx: &Cx<'_>) {
        ui.horizontal(|ui| {
            ui.colored_label(view::ENTRY, "triangle: entry");
            ui.colored_label(view::EXIT, "ring: exit");
            ui.label(RichText::new("grey: opposite side mirrored (to tile with itself)").weak());
            ui.colored_label(view::PROBLEM, "red ring: problem");
            if let Some(p) = cx.derived.problems.iter().find(|p| p.target == Target::Parity) {
                ui.separator();
                ui.colored_label(view::PROBLEM, format!("The sides {}", p.message));
            }
        });
    }

    fn chart(
        &mut self,
        ui: &mut Ui,
        side: Side,
        size: egui::Vec2,
        cx: &mut Cx<'_>,
        tools: &mut ToolBox,
        time: f64,
    ) -> ChartTransform {
        let (rect, response) = ui.allocate_exact_size(size, Sense::click_and_drag());
        response.widget_info(|| {
            egui::WidgetInfo::labeled(egui::Role::Canvas, true, format!("{} pattern chart", side.name()))
        });
        let dark = ui.visuals().dark_mode;
        let painter = ui.painter_at(rect);
        draw_frame(&painter, rect, side, cx, dark);
        let plot = Rect::from_min_max(rect.min + vec2(30.0, 20.0), rect.max - vec2(8.0, 18.0));
        let ct = ChartTransform { rect: plot, size: cx.doc.size, period: cx.doc.period };
        painter.rect_filled(plot, 0.0, if dark { Color32::from_gray(36) } else { Color32::WHITE });
        draw_grid(&painter, &ct, dark);
        // Play time.
        painter.line_segment(
            [ct.to_screen(0.0, time), ct.to_screen(ct.size, time)],
            Stroke::new(1.0, view::SELECTED.gamma_multiply(0.6)),
        );
        draw_points(&painter, &ct, side, cx);
        // Input.
        let pointer = Pointer::from_response(&response);
        tools.tool.chart_input(&mut ToolCx::from_cx(cx, tools.snap, time), side, &ct, &pointer);
        if let Some(h) = response.hover_pos() {
            let v = &cx.derived.sides[side.index()];
            if let Some(id) = pick_chart(v, side, &ct, h) {
                let b = v.pattern.points(id.direction)[id.index];
                let mut text = format!("{}: s = {:.2} m, t = {:.2} s", id.path(), b.s, b.t);
                for m in cx.derived.point_problems.get(&id).into_iter().flatten() {
                    text.push_str(&format!("\n! {m}"));
                }
                response.clone().on_hover_text_at_pointer(text);
            } else if plot.contains(h) {
                let (s, t) = ct.to_st(h);
                painter.text(
                    plot.right_top() + vec2(-3.0, 2.0),
                    egui::Align2::RIGHT_TOP,
                    format!("s {:.2}  t {:.2}", s, t),
                    egui::FontId::monospace(10.0),
                    Color32::GRAY,
                );
            }
        }
        ct
    }
}

/// The chart's background and title.
fn draw_frame(painter: &Painter, rect: Rect, side: Side, cx: &Cx<'_>, dark: bool) {
    painter.rect_filled(rect, 4.0, if dark { Color32::from_gray(28) } else { Color32::from_gray(245) });
    let v = &cx.derived.sides[side.index()];
    let corner = |s: Side| ["SW", "SE", "NE", "NW"][s.index()];
    let src = match &v.source {
        SideSource::File(f) => format!(" · {f}"),
        SideSource::Missing(f, _) => format!(" · {f} missing"),
        _ => String::new(),
    };
    let title = format!(
        "{} ({} to {}) · {} in / {} out{src}",
        side.name(),
        corner(side),
        corner(side.rotated(1)),
        v.pattern.entries.len(),
        v.pattern.exits.len()
    );
    let text_col = if dark { Color32::from_gray(210) } else { Color32::from_gray(40) };
    painter.text(
        rect.left_top() + vec2(6.0, 3.0),
        egui::Align2::LEFT_TOP,
        title,
        egui::FontId::proportional(12.5),
        text_col,
    );
}

/// The grid and the axes' labels.
fn draw_grid(painter: &Painter, ct: &ChartTransform, dark: bool) {
    let (l, pi, plot) = (ct.size, ct.period, ct.rect);
    let grid = Stroke::new(1.0, if dark { Color32::from_gray(50) } else { Color32::from_gray(230) });
    let label =
        |at, align, text: String| painter.text(at, align, text, egui::FontId::proportional(10.0), Color32::GRAY);
    let step_s = if l > 40.0 {
        10.0
    } else if l > 12.0 {
        4.0
    } else {
        1.0
    };
    let mut s = 0.0;
    while s <= l + 1e-9 {
        painter.line_segment([ct.to_screen(s, 0.0), ct.to_screen(s, pi)], grid);
        label(ct.to_screen(s, 0.0) + vec2(0.0, 2.0), egui::Align2::CENTER_TOP, format!("{s}"));
        s += step_s;
    }
    let step_t = if pi > 30.0 {
        10.0
    } else if pi > 6.0 {
        2.0
    } else {
        1.0
    };
    let mut t = 0.0;
    while t <= pi + 1e-9 {
        painter.line_segment([ct.to_screen(0.0, t), ct.to_screen(l, t)], grid);
        label(ct.to_screen(0.0, t) - vec2(3.0, 0.0), egui::Align2::RIGHT_CENTER, format!("{t}"));
        t += step_t;
    }
    label(plot.right_bottom() + vec2(0.0, 12.0), egui::Align2::RIGHT_TOP, "s [m]".into());
    label(plot.left_top() - vec2(4.0, 2.0), egui::Align2::RIGHT_BOTTOM, "t [s]".into());
}

/// The opposite side's points mirrored (grey), then this side's points.
fn draw_points(painter: &Painter, ct: &ChartTransform, side: Side, cx: &Cx<'_>) {
    let up = vec2(0.0, -1.0);
    let opposite = cx.derived.sides[side.opposite().index()].pattern.mirror();
    for d in [Direction::Entry, Direction::Exit] {
        for b in opposite.points(d) {
            let grey = Color32::from_gray(140).gamma_multiply(0.5);
            view::draw_marker(painter, ct.to_screen(b.s, b.t), up, d, grey, 4.5, None);
        }
    }
    let v = &cx.derived.sides[side.index()];
    // Walking groups: members joined, times taken within half a period of
    // the first member's (a group crossing at the period's end is drawn
    // at both ends of the chart).
    let pi = cx.doc.period;
    let clipped = painter.with_clip_rect(ct.rect);
    for (_, members) in view::group_links(&cx.derived.sides).into_iter().filter(|(s, _)| *s == side) {
        let t0 = members[0].1;
        let near = |t: f64| t0 + crowdpatch::matching::periodic_offset(t - t0, pi);
        for shift in [-pi, 0.0, pi] {
            let pts: Vec<egui::Pos2> = members.iter().map(|&(s, t)| ct.to_screen(s, near(t) + shift)).collect();
            clipped.add(egui::Shape::line(pts, egui::Stroke::new(3.0, view::GROUP_LINK)));
        }
    }
    for d in [Direction::Entry, Direction::Exit] {
        for (index, b) in v.pattern.points(d).iter().enumerate() {
            let ring = point_ring(cx, PointId { side, direction: d, index });
            let colour = if d == Direction::Entry { view::ENTRY } else { view::EXIT };
            view::draw_marker(painter, ct.to_screen(b.s, b.t), up, d, colour, 5.5, ring);
        }
    }
    if let SideSource::Missing(f, e) = &v.source {
        painter.text(
            ct.rect.center(),
            egui::Align2::CENTER_CENTER,
            format!("{f}: {e}"),
            egui::FontId::proportional(11.0),
            view::PROBLEM,
        );
    }
}
