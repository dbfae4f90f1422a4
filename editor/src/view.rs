//! Drawing: the top-down patch view (pan and zoom), the s–t charts of the
//! patterns, and the 3×3 tiling preview. Pure painting from data passed in;
//! nothing here changes the document.
//!
//! The patch view is drawn in layers ([`Layer`]), bottom to top, each a
//! function of the document, the bake and the play time. Per-agent drawing
//! goes through [`draw_agent`], the one place a richer agent glyph (a
//! skeletal character's footsteps from the baked data) plugs in.

use crate::edit::{PointId, SideView};
use crowdpatch::model::{Direction, Obstacle, Side};
use crowdpatch::runtime::format::{AgentKind, BakedAgent, BakedPatch};
use egui::{Color32, Painter, Pos2, Rect, Shape, Stroke, Vec2, pos2, vec2};

/// Colour of time `t` in a period (the PNG previews' colour map).
pub fn time_colour(t: f64, period: f64) -> Color32 {
    let [r, g, b] = crowdpatch_png::time_colour(t, period);
    Color32::from_rgb(r, g, b)
}

/// Entry points' colour.
pub const ENTRY: Color32 = Color32::from_rgb(46, 160, 67);
/// Exit points' colour.
pub const EXIT: Color32 = Color32::from_rgb(230, 126, 34);
/// Problems and collisions.
pub const PROBLEM: Color32 = Color32::from_rgb(230, 57, 70);
/// Warnings.
pub const WARNING: Color32 = Color32::from_rgb(242, 183, 5);
/// Selection.
pub const SELECTED: Color32 = Color32::from_rgb(80, 170, 255);
/// Obstacles.
pub const OBSTACLE: Color32 = Color32::from_rgb(120, 124, 132);

/// Maps the patch frame (metres, y north) to the screen (points, y down).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ViewTransform {
    /// Screen rectangle of the view.
    pub rect: Rect,
    /// Patch point `[m]` at the centre of the rectangle.
    pub center: [f64; 2],
    /// Screen points per metre.
    pub scale: f32,
}

impl ViewTransform {
    /// A transform fitting a patch of side `size` `[m]` (times `extent`
    /// patches, for the tiling preview) into `rect`, then panned by `pan`
    /// `[m]` and zoomed by `zoom`.
    pub fn fit(rect: Rect, size: f64, extent: f64, pan: [f64; 2], zoom: f32) -> ViewTransform {
        let side = rect.width().min(rect.height()) * 0.92;
        let scale = side / (size * extent) as f32 * zoom;
        ViewTransform { rect, center: [size / 2.0 + pan[0], size / 2.0 + pan[1]], scale: scale.max(1e-3) }
    }

    /// Screen position of a patch point.
    pub fn to_screen(&self, p: [f64; 2]) -> Pos2 {
        let c = self.rect.center();
        pos2(c.x + ((p[0] - self.center[0]) as f32) * self.scale, c.y - ((p[1] - self.center[1]) as f32) * self.scale)
    }

    /// Patch point of a screen position.
    pub fn to_patch(&self, p: Pos2) -> [f64; 2] {
        let c = self.rect.center();
        [self.center[0] + ((p.x - c.x) / self.scale) as f64, self.center[1] - ((p.y - c.y) / self.scale) as f64]
    }

    /// Screen length of `metres`.
    pub fn len(&self, metres: f64) -> f32 {
        metres as f32 * self.scale
    }
}

/// Maps an s–t chart (arc position × time) to the screen: `s` left to
/// right, `t` bottom to top.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChartTransform {
    /// Plot area on screen.
    pub rect: Rect,
    /// Side length L `[m]`.
    pub size: f64,
    /// Period π `[s]`.
    pub period: f64,
}

impl ChartTransform {
    /// Screen position of `(s, t)`.
    pub fn to_screen(&self, s: f64, t: f64) -> Pos2 {
        pos2(
            self.rect.left() + (s / self.size) as f32 * self.rect.width(),
            self.rect.bottom() - (t / self.period) as f32 * self.rect.height(),
        )
    }

    /// `(s, t)` of a screen position (not clamped).
    pub fn to_st(&self, p: Pos2) -> (f64, f64) {
        (
            ((p.x - self.rect.left()) / self.rect.width()) as f64 * self.size,
            ((self.rect.bottom() - p.y) / self.rect.height()) as f64 * self.period,
        )
    }
}

/// The layers of the patch view, bottom to top.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// Ground, grid and border.
    Ground,
    /// Static obstacles.
    Obstacles,
    /// (a) Matching lines: straight from each entry to its exit.
    MatchingLines,
    /// (b) Paths after collision removal.
    CollisionFree,
    /// (c) Smoothed (final) paths.
    Smoothed,
    /// Remaining collisions of the bake.
    Collisions,
    /// Agents at the play time.
    Agents,
    /// Entry and exit points.
    Boundary,
}

/// Draws the ground of a patch of side `size` at `offset` `[m]`: fill, 1 m
/// grid, border.
pub fn draw_ground(p: &Painter, xf: &ViewTransform, size: f64, offset: [f64; 2], dark: bool) {
    let a = xf.to_screen([offset[0], offset[1]]);
    let b = xf.to_screen([offset[0] + size, offset[1] + size]);
    let r = Rect::from_two_pos(a, b);
    let fill = if dark { Color32::from_gray(34) } else { Color32::from_gray(246) };
    p.rect_filled(r, 0.0, fill);
    let grid = if dark { Color32::from_gray(48) } else { Color32::from_gray(228) };
    if xf.scale > 6.0 {
        let n = size.floor() as i32;
        for k in 1..=n {
            let k = k as f64;
            if k >= size {
                break;
            }
            p.line_segment(
                [xf.to_screen([offset[0] + k, offset[1]]), xf.to_screen([offset[0] + k, offset[1] + size])],
                Stroke::new(1.0, grid),
            );
            p.line_segment(
                [xf.to_screen([offset[0], offset[1] + k]), xf.to_screen([offset[0] + size, offset[1] + k])],
                Stroke::new(1.0, grid),
            );
        }
    }
    p.rect_stroke(r, 0.0, Stroke::new(1.5, Color32::from_gray(if dark { 150 } else { 90 })), egui::StrokeKind::Middle);
}

/// Draws obstacles at `offset` `[m]`; `highlight(k)` gives an outline colour.
pub fn draw_obstacles(
    p: &Painter,
    xf: &ViewTransform,
    obstacles: &[Obstacle],
    offset: [f64; 2],
    highlight: impl Fn(usize) -> Option<Color32>,
) {
    for (k, o) in obstacles.iter().enumerate() {
        let stroke = match highlight(k) {
            Some(c) => Stroke::new(2.5, c),
            None => Stroke::new(1.0, Color32::from_gray(90)),
        };
        match o {
            Obstacle::Circle { center, radius } => {
                let c = xf.to_screen([center[0] + offset[0], center[1] + offset[1]]);
                p.circle(c, xf.len(*radius).max(1.0), OBSTACLE, stroke);
            }
            Obstacle::Polygon(vs) => {
                let pts: Vec<Pos2> = vs.iter().map(|v| xf.to_screen([v[0] + offset[0], v[1] + offset[1]])).collect();
                if pts.len() >= 3 {
                    // Triangulated fill (concave polygons too), then the outline.
                    let flat: Vec<f64> = vs.iter().flat_map(|v| [v[0], v[1]]).collect();
                    if let Some(tris) = earcut(&flat) {
                        let mut mesh = egui::Mesh::default();
                        for q in &pts {
                            mesh.colored_vertex(*q, OBSTACLE);
                        }
                        for t in tris.chunks(3) {
                            mesh.add_triangle(t[0] as u32, t[1] as u32, t[2] as u32);
                        }
                        p.add(Shape::mesh(mesh));
                    }
                    p.add(Shape::closed_line(pts, stroke));
                } else {
                    p.add(Shape::line(pts, stroke));
                }
            }
        }
    }
}

/// Triangulation of a simple polygon given as `[x0, y0, x1, …]` (either
/// winding, concave too): indices into the vertices, three per triangle;
/// `None` for a malformed outline.
pub fn earcut(flat: &[f64]) -> Option<Vec<usize>> {
    earcutr::earcut(flat, &[], 2).ok()
}

/// Draws a path (positions `[m]` with unwrapped times `[s]`) as segments
/// coloured by time in the period.
///
/// `fine` splits long segments so that the colour follows time closely;
/// without it each segment has one colour (cheaper, for the tiling preview).
pub fn draw_path(
    p: &Painter,
    xf: &ViewTransform,
    pts: &[([f64; 2], f64)],
    period: f64,
    width: f32,
    alpha: u8,
    fine: bool,
) {
    for w in pts.windows(2) {
        let ((a, ta), (b, tb)) = (w[0], w[1]);
        let steps = if fine { (((tb - ta) / period * 48.0).ceil() as usize).clamp(1, 64) } else { 1 };
        for k in 0..steps {
            let (u0, u1) = (k as f64 / steps as f64, (k + 1) as f64 / steps as f64);
            let lerp = |u: f64| [a[0] + (b[0] - a[0]) * u, a[1] + (b[1] - a[1]) * u];
            let c = time_colour(ta + (tb - ta) * (u0 + u1) / 2.0, period);
            p.line_segment(
                [xf.to_screen(lerp(u0)), xf.to_screen(lerp(u1))],
                Stroke::new(width, Color32::from_rgba_unmultiplied(c.r(), c.g(), c.b(), alpha)),
            );
        }
    }
}

/// The position and heading of every visible agent instance at play time
/// `tau` `[s]`: `(agent index, position [m], heading [rad])`.
pub fn agents_at(baked: &BakedPatch, tau: f64) -> Vec<(usize, [f64; 2], f64)> {
    let period = baked.header.period;
    let mut out = Vec::new();
    for (i, a) in baked.agents.iter().enumerate() {
        if a.keys.len() < 2 {
            continue;
        }
        for k in a.instances(period) {
            if let Some((p, h)) = a.sample(tau + k as f64 * period) {
                out.push((i, p, h));
            }
        }
    }
    out
}

/// A stable colour per agent.
pub fn agent_colour(agent: &BakedAgent, index: usize) -> Color32 {
    let base = match agent.kind {
        AgentKind::Endogenous { .. } => 0.12,
        AgentKind::Exogenous { .. } => 0.0,
    };
    let h = (index as f32 * 0.618_034 + base).fract();
    egui::ecolor::Hsva::new(h, 0.55, 0.85, 1.0).into()
}

/// Draws one agent: a disc of radius `r` `[m]` with a heading tick. Skeletal
/// characters' footsteps, when the baked data holds them, are drawn here too.
pub fn draw_agent(p: &Painter, xf: &ViewTransform, pos: [f64; 2], heading: f64, r: f64, colour: Color32, hit: bool) {
    let c = xf.to_screen(pos);
    let rad = xf.len(r).max(2.0);
    let outline = if hit { Stroke::new(2.5, PROBLEM) } else { Stroke::new(1.0, Color32::from_gray(30)) };
    p.circle(c, rad, colour, outline);
    let tip = [pos[0] + r * heading.cos(), pos[1] + r * heading.sin()];
    p.line_segment([c, xf.to_screen(tip)], Stroke::new(1.5, Color32::from_gray(20)));
}

/// Indices (into `agents`) of agent instances closer than `2r` to another.
pub fn touching(agents: &[(usize, [f64; 2], f64)], r: f64) -> Vec<bool> {
    let mut hit = vec![false; agents.len()];
    for i in 0..agents.len() {
        for j in i + 1..agents.len() {
            let (a, b) = (agents[i].1, agents[j].1);
            if (a[0] - b[0]).hypot(a[1] - b[1]) < 2.0 * r - 1e-6 {
                hit[i] = true;
                hit[j] = true;
            }
        }
    }
    hit
}

/// Draws the agents of `baked` at play time `time` `[s]`, shifted by
/// `offset` `[m]` (a tile of the tiling preview); agents that touch are
/// marked.
pub fn draw_agents_at(painter: &Painter, xf: &ViewTransform, baked: &BakedPatch, time: f64, offset: [f64; 2]) {
    let now = agents_at(baked, time);
    let hit = touching(&now, baked.header.agent_radius);
    for ((i, p, h), hit) in now.iter().zip(hit) {
        let c = agent_colour(&baked.agents[*i], *i);
        draw_agent(painter, xf, [p[0] + offset[0], p[1] + offset[1]], *h, baked.header.agent_radius, c, hit);
    }
}

/// Draws an entry (a triangle pointing into the patch) or an exit (a ring)
/// at `c`, pointing along `inward` (screen direction, unit).
pub fn draw_marker(
    p: &Painter,
    c: Pos2,
    inward: Vec2,
    direction: Direction,
    fill: Color32,
    size: f32,
    ring: Option<Color32>,
) {
    match direction {
        Direction::Entry => {
            let side = vec2(-inward.y, inward.x);
            let pts = vec![
                c + inward * size * 1.2,
                c - inward * size * 0.6 + side * size,
                c - inward * size * 0.6 - side * size,
            ];
            p.add(Shape::convex_polygon(pts, fill, Stroke::new(1.0, Color32::from_gray(20))));
        }
        Direction::Exit => {
            p.circle(c, size * 0.8, Color32::TRANSPARENT, Stroke::new(2.5, fill));
        }
    }
    if let Some(rc) = ring {
        p.circle_stroke(c, size * 1.7, Stroke::new(2.0, rc));
    }
}

/// Screen direction of a side's inward normal.
pub fn inward_screen(side: Side) -> Vec2 {
    let n = side.inward_normal();
    vec2(n[0] as f32, -(n[1] as f32))
}

/// The screen positions of the boundary points in the patch view.
pub fn boundary_positions(views: &[SideView; 4], size: f64, xf: &ViewTransform) -> Vec<(PointId, Pos2, f64)> {
    let mut out = Vec::new();
    for side in Side::ALL {
        let v = &views[side.index()];
        for direction in [Direction::Entry, Direction::Exit] {
            for (index, b) in v.pattern.points(direction).iter().enumerate() {
                out.push((PointId { side, direction, index }, xf.to_screen(side.point(b.s, size)), b.t));
            }
        }
    }
    out
}

/// Colour of the links between the members of a walking group.
pub const GROUP_LINK: Color32 = Color32::from_rgb(200, 90, 200);

/// The links of the walking groups of `views`: for each side, direction
/// and group id, its members' points `(s, t)` in order along the side,
/// joined by a line to draw (a group's members cross together). O(n log n).
pub fn group_links(views: &[SideView; 4]) -> Vec<(Side, Vec<(f64, f64)>)> {
    let mut out = Vec::new();
    for side in Side::ALL {
        let v = &views[side.index()];
        for direction in [Direction::Entry, Direction::Exit] {
            let mut groups: std::collections::BTreeMap<u32, Vec<(f64, f64)>> = Default::default();
            for b in v.pattern.points(direction) {
                if let Some(g) = b.group {
                    groups.entry(g).or_default().push((b.s, b.t));
                }
            }
            for mut members in groups.into_values().filter(|m| m.len() > 1) {
                members.sort_by(|a, b| a.0.total_cmp(&b.0));
                out.push((side, members));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transforms_round_trip() {
        let xf =
            ViewTransform::fit(Rect::from_min_size(pos2(10.0, 20.0), vec2(400.0, 300.0)), 16.0, 1.0, [1.0, -2.0], 1.5);
        for p in [[0.0, 0.0], [16.0, 16.0], [3.5, 12.25]] {
            let q = xf.to_patch(xf.to_screen(p));
            assert!((q[0] - p[0]).abs() < 1e-3 && (q[1] - p[1]).abs() < 1e-3, "{p:?} → {q:?}");
        }
        // North is up: a larger y is higher on screen.
        assert!(xf.to_screen([0.0, 10.0]).y < xf.to_screen([0.0, 5.0]).y);
        let ct =
            ChartTransform { rect: Rect::from_min_size(pos2(0.0, 0.0), vec2(160.0, 100.0)), size: 16.0, period: 10.0 };
        let (s, t) = ct.to_st(ct.to_screen(4.0, 2.5));
        assert!((s - 4.0).abs() < 1e-4 && (t - 2.5).abs() < 1e-4);
        assert!(ct.to_screen(0.0, 9.0).y < ct.to_screen(0.0, 1.0).y, "time runs upwards");
    }

    #[test]
    fn earcut_covers_a_concave_polygon() {
        // An L shape of area 3.
        let flat = [0.0, 0.0, 2.0, 0.0, 2.0, 1.0, 1.0, 1.0, 1.0, 2.0, 0.0, 2.0];
        let tris = earcut(&flat).unwrap();
        assert_eq!(tris.len(), 3 * 4);
        let v = |i: usize| (flat[2 * i], flat[2 * i + 1]);
        let area: f64 = tris
            .chunks(3)
            .map(|t| {
                let (a, b, c) = (v(t[0]), v(t[1]), v(t[2]));
                ((b.0 - a.0) * (c.1 - a.1) - (b.1 - a.1) * (c.0 - a.0)).abs() / 2.0
            })
            .sum();
        assert!((area - 3.0).abs() < 1e-9, "{area}");
    }
}
