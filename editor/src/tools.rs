//! Viewport tools behind one small trait, each with its own state
//! (RecastDemo's `SampleTool`/`SampleToolState`): select and move, add entry,
//! add exit, circle, polygon. A tool reads pointer input on the patch view or
//! on an s–t chart and answers with [`Command`]s; it never writes the
//! document itself.

use crate::command::Command;
use crate::edit::{PointId, SideView, snap};
use crate::state::Cx;
pub use crate::state::Selection;
use crate::view::{ChartTransform, SELECTED, ViewTransform};
use crowdpatch::model::{Direction, Obstacle, PatchDocument, Side};
use egui::{Color32, Painter, Pos2, Stroke};

/// Which tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    /// Select, move (drag) and delete (right click).
    Select,
    /// Add entry points.
    AddEntry,
    /// Add exit points.
    AddExit,
    /// Draw circular obstacles.
    Circle,
    /// Draw polygonal obstacles.
    Polygon,
}

impl ToolKind {
    /// All tools in toolbar order.
    pub const ALL: [ToolKind; 5] =
        [ToolKind::Select, ToolKind::AddEntry, ToolKind::AddExit, ToolKind::Circle, ToolKind::Polygon];

    /// Toolbar label.
    pub fn label(self) -> &'static str {
        match self {
            ToolKind::Select => "Select / move",
            ToolKind::AddEntry => "Add entry",
            ToolKind::AddExit => "Add exit",
            ToolKind::Circle => "Circle obstacle",
            ToolKind::Polygon => "Polygon obstacle",
        }
    }

    /// Keyboard shortcut.
    pub fn key(self) -> egui::Key {
        match self {
            ToolKind::Select => egui::Key::V,
            ToolKind::AddEntry => egui::Key::E,
            ToolKind::AddExit => egui::Key::X,
            ToolKind::Circle => egui::Key::C,
            ToolKind::Polygon => egui::Key::P,
        }
    }

    /// A fresh tool of this kind.
    pub fn make(self) -> Box<dyn Tool> {
        match self {
            ToolKind::Select => Box::new(SelectTool::default()),
            ToolKind::AddEntry => Box::new(PointTool { direction: Direction::Entry, drag: None }),
            ToolKind::AddExit => Box::new(PointTool { direction: Direction::Exit, drag: None }),
            ToolKind::Circle => Box::new(CircleTool::default()),
            ToolKind::Polygon => Box::new(PolygonTool::default()),
        }
    }
}

/// Pointer input on a surface, in screen points.
#[derive(Debug, Clone, Copy, Default)]
pub struct Pointer {
    /// Hover position.
    pub hover: Option<Pos2>,
    /// The primary button went down here this frame (a drag may start).
    pub press: Option<Pos2>,
    /// Held down and moving: the current position.
    pub drag: Option<Pos2>,
    /// Released this frame, here.
    pub release: Option<Pos2>,
    /// A click (press and release without moving) here.
    pub click: Option<Pos2>,
    /// A double click here.
    pub double_click: Option<Pos2>,
    /// A secondary (right) click here.
    pub secondary_click: Option<Pos2>,
    /// Shift held.
    pub shift: bool,
    /// The primary button is down.
    pub down: bool,
}

impl Pointer {
    /// Reads a response of a surface.
    pub fn from_response(r: &egui::Response) -> Pointer {
        let pos = r.interact_pointer_pos().or(r.hover_pos());
        let down = r.ctx.input(|i| i.pointer.primary_pressed());
        let released = r.ctx.input(|i| i.pointer.primary_released());
        Pointer {
            hover: r.hover_pos(),
            press: if down && r.hovered() { r.ctx.input(|i| i.pointer.press_origin()) } else { None },
            drag: if r.dragged() { pos } else { None },
            release: if released && (r.dragged() || r.drag_stopped() || r.hovered()) { pos } else { None },
            click: if r.clicked() { pos } else { None },
            double_click: if r.double_clicked() { pos } else { None },
            secondary_click: if r.secondary_clicked() { pos } else { None },
            shift: r.ctx.input(|i| i.modifiers.shift),
            down: r.ctx.input(|i| i.pointer.primary_down()),
        }
    }
}

/// Snap steps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Snap {
    /// On or off.
    pub on: bool,
    /// Arc position / patch position step `[m]`.
    pub space: f64,
    /// Time step `[s]`.
    pub time: f64,
}

impl Snap {
    /// Snaps a length.
    pub fn s(&self, v: f64) -> f64 {
        if self.on { snap(v, self.space) } else { v }
    }
    /// Snaps a time.
    pub fn t(&self, v: f64) -> f64 {
        if self.on { snap(v, self.time) } else { v }
    }
    /// Snaps a patch point.
    pub fn p(&self, p: [f64; 2]) -> [f64; 2] {
        [self.s(p[0]), self.s(p[1])]
    }
}

/// What a tool sees.
pub struct ToolCx<'a> {
    /// The document (read only: tools answer with commands).
    pub doc: &'a PatchDocument,
    /// The four sides' points, side frame.
    pub sides: &'a [SideView; 4],
    /// The selection (tools may change it).
    pub selection: &'a mut Selection,
    /// Commands to run after this frame.
    pub commands: &'a mut Vec<Command>,
    /// Snapping.
    pub snap: Snap,
    /// Play time `[s]`: the time of points added in the patch view.
    pub time: f64,
}

impl<'a> ToolCx<'a> {
    /// What a tool sees of a panel's context.
    pub fn from_cx(cx: &'a mut Cx<'_>, snap: Snap, time: f64) -> ToolCx<'a> {
        ToolCx {
            doc: &*cx.doc,
            sides: &cx.derived.sides,
            selection: &mut *cx.selection,
            commands: &mut *cx.commands,
            snap,
            time,
        }
    }
}

/// The current tool and the snap steps (the toolbar's state).
pub struct ToolBox {
    /// The current tool, with its state.
    pub tool: Box<dyn Tool>,
    /// Snapping of positions and times.
    pub snap: Snap,
}

impl Default for ToolBox {
    fn default() -> Self {
        ToolBox { tool: ToolKind::Select.make(), snap: Snap { on: true, space: 0.25, time: 0.25 } }
    }
}

impl ToolBox {
    /// Which tool is current.
    pub fn kind(&self) -> ToolKind {
        self.tool.kind()
    }

    /// Switches tool (a fresh one; the same tool keeps its state).
    pub fn set(&mut self, kind: ToolKind) {
        if self.tool.kind() != kind {
            self.tool = kind.make();
        }
    }
}

/// A viewport tool.
pub trait Tool {
    /// Which tool this is.
    fn kind(&self) -> ToolKind;
    /// One line of help shown in the status bar.
    fn hint(&self) -> &'static str;
    /// Pointer input on the patch view.
    fn patch_input(&mut self, cx: &mut ToolCx<'_>, xf: &ViewTransform, input: &Pointer);
    /// Pointer input on the s–t chart of `side`.
    fn chart_input(&mut self, cx: &mut ToolCx<'_>, side: Side, ct: &ChartTransform, input: &Pointer);
    /// Draws the tool's state (a circle being drawn, …) on the patch view.
    fn draw_patch(&self, _painter: &Painter, _xf: &ViewTransform, _hover: Option<Pos2>) {}
    /// Keys: Enter finishes, Escape cancels, Backspace undoes the last vertex.
    fn key(&mut self, _cx: &mut ToolCx<'_>, _key: egui::Key) -> bool {
        false
    }
    /// Whether the tool is in the middle of something (Escape cancels it).
    fn busy(&self) -> bool {
        false
    }
}

/// Pick radius `[points]`.
pub const PICK: f32 = 9.0;

/// The boundary point under `pos` on a chart.
pub fn pick_chart(view: &SideView, side: Side, ct: &ChartTransform, pos: Pos2) -> Option<PointId> {
    let mut best: Option<(f32, PointId)> = None;
    for direction in [Direction::Entry, Direction::Exit] {
        for (index, b) in view.pattern.points(direction).iter().enumerate() {
            let d = ct.to_screen(b.s, b.t).distance(pos);
            if d <= PICK && best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, PointId { side, direction, index }));
            }
        }
    }
    best.map(|b| b.1)
}

/// What is under the pointer in the patch view.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PatchHit {
    /// A boundary point.
    Point(PointId),
    /// A vertex of a polygon.
    Vertex(usize, usize),
    /// The rim of a circle (drag to resize).
    Rim(usize),
    /// Inside an obstacle.
    Obstacle(usize),
}

/// What is under `pos` in the patch view (points first, then vertices, rims
/// and obstacles, the topmost obstacle first).
pub fn pick_patch(doc: &PatchDocument, sides: &[SideView; 4], xf: &ViewTransform, pos: Pos2) -> Option<PatchHit> {
    for (id, p, _) in crate::view::boundary_positions(sides, doc.size, xf) {
        if p.distance(pos) <= PICK {
            return Some(PatchHit::Point(id));
        }
    }
    let at = xf.to_patch(pos);
    for (k, o) in doc.obstacles.iter().enumerate().rev() {
        match o {
            Obstacle::Polygon(vs) => {
                for (i, v) in vs.iter().enumerate() {
                    if xf.to_screen(*v).distance(pos) <= PICK {
                        return Some(PatchHit::Vertex(k, i));
                    }
                }
            }
            Obstacle::Circle { center, radius } => {
                let d = (xf.to_screen(*center).distance(pos) - xf.len(*radius)).abs();
                if d <= PICK * 0.6 {
                    return Some(PatchHit::Rim(k));
                }
            }
        }
    }
    for (k, o) in doc.obstacles.iter().enumerate().rev() {
        if crowdpatch::geometry::obstacle_signed_distance(crowdpatch::geometry::v2(at), o).0 <= 0.0 {
            return Some(PatchHit::Obstacle(k));
        }
    }
    None
}

/// The side and arc position nearest to a patch point, if within `reach` `[m]`.
pub fn nearest_side(p: [f64; 2], size: f64, reach: f64) -> Option<(Side, f64)> {
    let candidates = [
        (Side::South, p[1].abs(), p[0]),
        (Side::East, (size - p[0]).abs(), p[1]),
        (Side::North, (size - p[1]).abs(), size - p[0]),
        (Side::West, p[0].abs(), size - p[1]),
    ];
    let (side, d, s) = candidates.into_iter().min_by(|a, b| a.1.total_cmp(&b.1))?;
    (d <= reach && (-reach..=size + reach).contains(&s)).then_some((side, s.clamp(0.0, size)))
}

/// Arc position `[m]` on `side` closest to a patch point.
pub fn arc_position(side: Side, p: [f64; 2], size: f64) -> f64 {
    let s = match side {
        Side::South => p[0],
        Side::East => p[1],
        Side::North => size - p[0],
        Side::West => size - p[1],
    };
    s.clamp(0.0, size)
}

/// A drag in progress.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Drag {
    /// A boundary point on a chart.
    ChartPoint(PointId),
    /// A boundary point along its side in the patch view.
    BorderPoint(PointId),
    /// A whole obstacle, from `start` `[m]` with its original shape.
    Obstacle(usize, [f64; 2]),
    /// A polygon vertex.
    Vertex(usize, usize),
    /// A circle's radius.
    Rim(usize),
}

/// Shared handling of point drags on charts, for every tool that moves points.
fn chart_drag(drag: &mut Option<Drag>, cx: &mut ToolCx<'_>, side: Side, ct: &ChartTransform, input: &Pointer) -> bool {
    if let Some(p) = input.press
        && let Some(id) = pick_chart(&cx.sides[side.index()], side, ct, p)
    {
        *cx.selection = Selection::Point(id);
        *drag = Some(Drag::ChartPoint(id));
        return true;
    }
    if let Some(Drag::ChartPoint(id)) = *drag {
        if let Some(p) = input.drag {
            let (s, t) = ct.to_st(p);
            cx.commands.push(Command::MovePoint { id, s: cx.snap.s(s), t: cx.snap.t(t) });
        }
        if input.release.is_some() || !input.down {
            *drag = None;
        }
        return true;
    }
    false
}

/// Select and move: drag points on the charts (s and t) or along their side
/// in the patch view (s), drag obstacles, polygon vertices and circle rims;
/// right-click deletes.
#[derive(Debug, Default)]
pub struct SelectTool {
    drag: Option<Drag>,
    /// The obstacle's shape when its drag started.
    original: Option<Obstacle>,
}

impl Tool for SelectTool {
    fn kind(&self) -> ToolKind {
        ToolKind::Select
    }
    fn hint(&self) -> &'static str {
        "Click to select; drag points, obstacles, polygon vertices or circle rims to move them; right-click deletes."
    }

    fn patch_input(&mut self, cx: &mut ToolCx<'_>, xf: &ViewTransform, input: &Pointer) {
        if let Some(p) = input.secondary_click {
            match pick_patch(cx.doc, cx.sides, xf, p) {
                Some(PatchHit::Point(id)) => cx.commands.push(Command::DeletePoint(id)),
                Some(PatchHit::Obstacle(k) | PatchHit::Rim(k) | PatchHit::Vertex(k, _)) => {
                    cx.commands.push(Command::DeleteObstacle(k))
                }
                None => {}
            }
            return;
        }
        if let Some(p) = input.press {
            let hit = pick_patch(cx.doc, cx.sides, xf, p);
            self.drag = match hit {
                Some(PatchHit::Point(id)) => {
                    *cx.selection = Selection::Point(id);
                    Some(Drag::BorderPoint(id))
                }
                Some(PatchHit::Vertex(k, i)) => {
                    *cx.selection = Selection::Obstacle(k);
                    Some(Drag::Vertex(k, i))
                }
                Some(PatchHit::Rim(k)) => {
                    *cx.selection = Selection::Obstacle(k);
                    Some(Drag::Rim(k))
                }
                Some(PatchHit::Obstacle(k)) => {
                    *cx.selection = Selection::Obstacle(k);
                    Some(Drag::Obstacle(k, xf.to_patch(p)))
                }
                None => {
                    *cx.selection = Selection::None;
                    None
                }
            };
            self.original = match self.drag {
                Some(Drag::Obstacle(k, _) | Drag::Vertex(k, _) | Drag::Rim(k)) => cx.doc.obstacles.get(k).cloned(),
                _ => None,
            };
        }
        if let (Some(p), Some(drag)) = (input.drag, self.drag) {
            let at = xf.to_patch(p);
            let l = cx.doc.size;
            match (drag, &self.original) {
                (Drag::BorderPoint(id), _) => {
                    let t = cx.sides[id.side.index()].pattern.points(id.direction).get(id.index).map(|b| b.t);
                    if let Some(t) = t {
                        let s = cx.snap.s(arc_position(id.side, at, l));
                        cx.commands.push(Command::MovePoint { id, s, t });
                    }
                }
                (Drag::Obstacle(k, start), Some(o)) => {
                    let d = cx.snap.p([at[0] - start[0], at[1] - start[1]]);
                    let moved = match o {
                        Obstacle::Circle { center, radius } => {
                            Obstacle::Circle { center: [center[0] + d[0], center[1] + d[1]], radius: *radius }
                        }
                        Obstacle::Polygon(vs) => {
                            Obstacle::Polygon(vs.iter().map(|v| [v[0] + d[0], v[1] + d[1]]).collect())
                        }
                    };
                    cx.commands.push(Command::SetObstacle(k, moved));
                }
                (Drag::Vertex(k, i), Some(Obstacle::Polygon(vs))) => {
                    let mut vs = vs.clone();
                    if i < vs.len() {
                        vs[i] = cx.snap.p(at);
                        cx.commands.push(Command::SetObstacle(k, Obstacle::Polygon(vs)));
                    }
                }
                (Drag::Rim(k), Some(Obstacle::Circle { center, .. })) => {
                    let r = cx.snap.s((at[0] - center[0]).hypot(at[1] - center[1])).max(0.05);
                    cx.commands.push(Command::SetObstacle(k, Obstacle::Circle { center: *center, radius: r }));
                }
                _ => {}
            }
        }
        if input.release.is_some() || !input.down {
            self.drag = None;
            self.original = None;
        }
    }

    fn chart_input(&mut self, cx: &mut ToolCx<'_>, side: Side, ct: &ChartTransform, input: &Pointer) {
        if let Some(p) = input.secondary_click {
            if let Some(id) = pick_chart(&cx.sides[side.index()], side, ct, p) {
                cx.commands.push(Command::DeletePoint(id));
            }
            return;
        }
        if chart_drag(&mut self.drag, cx, side, ct, input) {
            return;
        }
        if input.press.is_some() {
            *cx.selection = Selection::None;
        }
    }
}

/// Adds entries or exits: click an empty spot of a chart, or near a side of
/// the patch (at the play time); existing points can be dragged as with the
/// select tool.
#[derive(Debug)]
pub struct PointTool {
    direction: Direction,
    drag: Option<Drag>,
}

impl Tool for PointTool {
    fn kind(&self) -> ToolKind {
        match self.direction {
            Direction::Entry => ToolKind::AddEntry,
            Direction::Exit => ToolKind::AddExit,
        }
    }
    fn hint(&self) -> &'static str {
        match self.direction {
            Direction::Entry => {
                "Click a chart to add an entry at (s, t), or click near a side of the patch to add one at the play time. Drag points to move them."
            }
            Direction::Exit => {
                "Click a chart to add an exit at (s, t), or click near a side of the patch to add one at the play time. Drag points to move them."
            }
        }
    }

    fn patch_input(&mut self, cx: &mut ToolCx<'_>, xf: &ViewTransform, input: &Pointer) {
        if let Some(p) = input.click
            && pick_patch(cx.doc, cx.sides, xf, p).is_none()
            && let Some((side, s)) = nearest_side(xf.to_patch(p), cx.doc.size, 0.8)
        {
            cx.commands.push(Command::AddPoint {
                side,
                direction: self.direction,
                s: cx.snap.s(s),
                t: cx.snap.t(cx.time),
            });
        }
    }

    fn chart_input(&mut self, cx: &mut ToolCx<'_>, side: Side, ct: &ChartTransform, input: &Pointer) {
        if let Some(p) = input.secondary_click {
            if let Some(id) = pick_chart(&cx.sides[side.index()], side, ct, p) {
                cx.commands.push(Command::DeletePoint(id));
            }
            return;
        }
        if chart_drag(&mut self.drag, cx, side, ct, input) {
            return;
        }
        if let Some(p) = input.click {
            let (s, t) = ct.to_st(p);
            cx.commands.push(Command::AddPoint { side, direction: self.direction, s: cx.snap.s(s), t: cx.snap.t(t) });
        }
    }
}

/// Draws a circle: press at the centre, drag out the radius, release (a click
/// makes a 1 m circle).
#[derive(Debug, Default)]
pub struct CircleTool {
    center: Option<[f64; 2]>,
    radius: f64,
}

impl Tool for CircleTool {
    fn kind(&self) -> ToolKind {
        ToolKind::Circle
    }
    fn hint(&self) -> &'static str {
        "Press at the centre and drag out the radius; a click makes a 1 m circle."
    }
    fn patch_input(&mut self, cx: &mut ToolCx<'_>, xf: &ViewTransform, input: &Pointer) {
        if let Some(p) = input.press {
            self.center = Some(cx.snap.p(xf.to_patch(p)));
            self.radius = 0.0;
        }
        if let (Some(c), Some(p)) = (self.center, input.drag) {
            let q = xf.to_patch(p);
            self.radius = cx.snap.s((q[0] - c[0]).hypot(q[1] - c[1]));
        }
        if (input.release.is_some() || !input.down)
            && let Some(c) = self.center.take()
        {
            let radius = if self.radius < 0.1 { 1.0 } else { self.radius };
            cx.commands.push(Command::AddObstacle(Obstacle::Circle { center: c, radius }));
        }
    }
    fn chart_input(&mut self, _: &mut ToolCx<'_>, _: Side, _: &ChartTransform, _: &Pointer) {}
    fn draw_patch(&self, painter: &Painter, xf: &ViewTransform, _: Option<Pos2>) {
        if let Some(c) = self.center {
            painter.circle(
                xf.to_screen(c),
                xf.len(self.radius.max(0.05)),
                Color32::from_rgba_unmultiplied(80, 170, 255, 60),
                Stroke::new(2.0, SELECTED),
            );
        }
    }
    fn key(&mut self, _: &mut ToolCx<'_>, key: egui::Key) -> bool {
        if key == egui::Key::Escape && self.center.is_some() {
            self.center = None;
            return true;
        }
        false
    }
    fn busy(&self) -> bool {
        self.center.is_some()
    }
}

/// Draws a polygon: click each vertex; click the first vertex, double-click
/// or press Enter to close it; Backspace removes the last vertex, Escape
/// cancels.
#[derive(Debug, Default)]
pub struct PolygonTool {
    vertices: Vec<[f64; 2]>,
}

impl PolygonTool {
    fn finish(&mut self, cx: &mut ToolCx<'_>) {
        let vs = std::mem::take(&mut self.vertices);
        if vs.len() >= 3 {
            cx.commands.push(Command::AddObstacle(Obstacle::Polygon(vs)));
        }
    }
}

impl Tool for PolygonTool {
    fn kind(&self) -> ToolKind {
        ToolKind::Polygon
    }
    fn hint(&self) -> &'static str {
        "Click the vertices; click the first one, double-click or press Enter to close; Backspace removes the last, Escape cancels."
    }
    fn patch_input(&mut self, cx: &mut ToolCx<'_>, xf: &ViewTransform, input: &Pointer) {
        if input.double_click.is_some() {
            self.finish(cx);
            return;
        }
        if let Some(p) = input.click {
            if self.vertices.len() >= 3 && xf.to_screen(self.vertices[0]).distance(p) <= PICK {
                self.finish(cx);
                return;
            }
            let v = cx.snap.p(xf.to_patch(p));
            if self.vertices.last() != Some(&v) {
                self.vertices.push(v);
            }
        }
    }
    fn chart_input(&mut self, _: &mut ToolCx<'_>, _: Side, _: &ChartTransform, _: &Pointer) {}
    fn draw_patch(&self, painter: &Painter, xf: &ViewTransform, hover: Option<Pos2>) {
        if self.vertices.is_empty() {
            return;
        }
        let mut pts: Vec<Pos2> = self.vertices.iter().map(|v| xf.to_screen(*v)).collect();
        if let Some(h) = hover {
            pts.push(h);
        }
        painter.add(egui::Shape::line(pts.clone(), Stroke::new(2.0, SELECTED)));
        for p in &pts[..self.vertices.len()] {
            painter.circle_filled(*p, 4.0, SELECTED);
        }
    }
    fn key(&mut self, cx: &mut ToolCx<'_>, key: egui::Key) -> bool {
        match key {
            egui::Key::Enter if !self.vertices.is_empty() => {
                self.finish(cx);
                true
            }
            egui::Key::Escape if !self.vertices.is_empty() => {
                self.vertices.clear();
                true
            }
            egui::Key::Backspace if !self.vertices.is_empty() => {
                self.vertices.pop();
                true
            }
            _ => false,
        }
    }
    fn busy(&self) -> bool {
        !self.vertices.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_side_and_arc_positions_agree_with_side_points() {
        for side in Side::ALL {
            for s in [0.5, 8.0, 15.5] {
                let p = side.point(s, 16.0);
                let (found, fs) = nearest_side(p, 16.0, 0.5).unwrap();
                assert_eq!(found, side, "s = {s}");
                assert!((fs - s).abs() < 1e-9);
                assert!((arc_position(side, p, 16.0) - s).abs() < 1e-9);
            }
        }
        assert!(nearest_side([8.0, 8.0], 16.0, 0.5).is_none());
    }
}
