//! The tiling preview: the patch among eight copies of itself, the bake's
//! paths and agents in every tile, and the centre tile's seams green where
//! they meet the neighbour's mirror, red where a point has no partner.

use crate::command::Command;
use crate::state::{Cx, Scene};
use crate::view::{self, ViewTransform};
use crowdpatch::model::Side;
use egui::{Color32, Painter, Stroke, Ui, vec2};

/// The tiling preview (no state of its own: it shares the patch view's pan
/// and zoom).
#[derive(Debug, Clone, Copy, Default)]
pub struct TilingView;

impl TilingView {
    /// The line above the view: seamless, or which seams do not match with a
    /// button to make the patch tileable.
    pub fn header(&mut self, ui: &mut Ui, cx: &mut Cx<'_>) {
        let seams = &cx.derived.seams;
        let bad: Vec<Side> = [Side::South, Side::East]
            .into_iter()
            .filter(|s| !seams[s.index()].is_empty() || !seams[s.opposite().index()].is_empty())
            .collect();
        if bad.is_empty() {
            ui.colored_label(view::ENTRY, "Seamless: every side meets the mirror of its opposite side.");
        } else {
            let names: Vec<&str> =
                bad.iter().map(|s| if *s == Side::South { "south/north" } else { "east/west" }).collect();
            ui.colored_label(view::PROBLEM, format!("Seams that do not match: {}", names.join(", ")));
            if ui.button("Make tileable").clicked() {
                cx.commands.push(Command::MakeTileable);
            }
        }
    }

    /// Draws the 3×3 tiles with the transform `xf` of the patch view.
    pub fn draw(painter: &Painter, xf: &ViewTransform, dark: bool, cx: &Cx<'_>, scene: &Scene<'_>) {
        let l = cx.doc.size;
        let offsets: Vec<[f64; 2]> =
            (-1..=1).flat_map(|j| (-1..=1).map(move |i| [i as f64 * l, j as f64 * l])).collect();
        for &off in &offsets {
            view::draw_ground(painter, xf, l, off, dark);
            view::draw_obstacles(painter, xf, &cx.doc.obstacles, off, |_| None);
        }
        if let Some(r) = scene.result {
            for &off in &offsets {
                if scene.stages.smoothed {
                    for a in &r.bake.agents {
                        let pts: Vec<_> =
                            a.path.points.iter().map(|c| ([c.p.x + off[0], c.p.y + off[1]], c.t)).collect();
                        view::draw_path(painter, xf, &pts, r.baked.header.period, 1.2, 90, false);
                    }
                }
                view::draw_agents_at(painter, xf, &r.baked, scene.time, off);
            }
        }
        // The centre tile's seams: green where they meet the neighbour's
        // mirror, red markers where a point has no partner.
        for side in Side::ALL {
            let bad = &cx.derived.seams[side.index()];
            let a = xf.to_screen(side.point(0.0, l));
            let b = xf.to_screen(side.point(l, l));
            let colour = if bad.is_empty() { view::ENTRY } else { view::PROBLEM };
            painter.line_segment([a, b], Stroke::new(3.0, colour));
            for &(d, k) in bad {
                if let Some(p) = cx.derived.sides[side.index()].pattern.points(d).get(k) {
                    painter.circle_stroke(xf.to_screen(side.point(p.s, l)), 8.0, Stroke::new(2.5, view::PROBLEM));
                }
            }
        }
        let c = xf.to_screen([0.0, l]);
        painter.text(
            c + vec2(4.0, 4.0),
            egui::Align2::LEFT_TOP,
            "this patch",
            egui::FontId::proportional(13.0),
            Color32::from_gray(160),
        );
    }
}
