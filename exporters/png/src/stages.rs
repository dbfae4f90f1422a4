//! The bake-stages figure: one square panel per stage, like Figure 7 of the seed
//! paper.

use crowdpatch_runtime::format::{Obstacle, Side};

use crate::axis::{Scale, nice_step};
use crate::canvas::{self, Align, Canvas, Font, Rect, Rgb};
use crate::colour::time_colour;
use crate::error::PngError;

/// A figure of the bake stages of one patch: one square panel per stage, side
/// by side, then a colour bar of time in the period, a legend and a caption.
///
/// All geometry is in the patch frame (origin at the south-west corner, x east,
/// y north, metres); north is drawn up.
#[derive(Debug, Clone, PartialEq)]
pub struct StagesFigure {
    /// Patch side L `[m]` `[Limit: finite, > 0]`.
    pub size: f64,
    /// Period π `[s]` `[Limit: finite, > 0]`: one turn of the colour map.
    pub period: f64,
    /// Agent radius r `[m]` `[Limit: finite, ≥ 0]`: radius of the rings drawn
    /// around collisions.
    pub agent_radius: f64,
    /// Static obstacles, drawn filled grey in every panel (clipped to the patch).
    pub obstacles: Vec<Obstacle>,
    /// Boundary points, drawn in every panel: entries as inward triangles,
    /// exits as hollow circles, both coloured by their time.
    pub crossings: Vec<CrossingMark>,
    /// The panels, left to right `[Limit: at least one]`.
    pub stages: Vec<StagePanel>,
    /// Text under the panels (e.g. a metrics summary), in a monospaced font;
    /// `\n` starts a new line and long lines are wrapped. May be empty.
    pub caption: String,
    /// Image width `[px]` `[Limit: wide enough for 120 px panels, ≤ 8192]`. The
    /// height follows from the layout (about 790 px for 1800 px and 3 panels
    /// with a caption of up to five lines).
    pub width_px: u32,
}

impl Default for StagesFigure {
    /// The design defaults (L = 16 m, π = 10 s, r = 0.3 m), no content, 1800 px.
    fn default() -> Self {
        StagesFigure {
            size: 16.0,
            period: 10.0,
            agent_radius: 0.3,
            obstacles: Vec::new(),
            crossings: Vec::new(),
            stages: Vec::new(),
            caption: String::new(),
            width_px: 1800,
        }
    }
}

/// A boundary point: where and when an agent crosses the patch border.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CrossingMark {
    /// Position `[m]`, patch frame, on (or near) the border; clamped to the
    /// patch. The nearest side orients the marker. Skipped if not finite.
    pub position: [f64; 2],
    /// Crossing time `[s]`; only `t mod period` matters (its colour).
    pub t: f64,
    /// `true` for an entry (filled triangle pointing into the patch), `false`
    /// for an exit (hollow circle).
    pub entry: bool,
}

/// One stage of the bake, drawn as one square panel.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StagePanel {
    /// Title above the panel, e.g. `"(b) matched"`.
    pub title: String,
    /// Agent paths.
    pub paths: Vec<PanelPath>,
    /// Positions `[m]` (patch frame) to highlight as collisions: a red ring of
    /// radius [`StagesFigure::agent_radius`] around each. Non-finite ones are
    /// skipped.
    pub collisions: Vec<[f64; 2]>,
}

/// A space-time path drawn as a polyline coloured by time in the period.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PanelPath {
    /// Vertices `[x m, y m, t s]`, patch frame, unwrapped time. A vertex with a
    /// non-finite value breaks the polyline there; parts outside the patch are
    /// clipped.
    pub points: Vec<[f64; 3]>,
    /// Draw as a thin line (an initial straight path joining a matched entry
    /// and exit) rather than a full-width trajectory.
    pub straight: bool,
}

// Layout `[px]`.
const MARGIN: f64 = 28.0;
const TITLE_H: f64 = 38.0;
const GAP: f64 = 44.0;
const Y_TICKS_W: f64 = 34.0;
const X_TICKS_H: f64 = 26.0;
const BAND_GAP: f64 = 22.0;
const MIN_PANEL: f64 = 120.0;
const COLOURBAR_MAX_W: f64 = 520.0;
const COLOURBAR_H: f64 = 16.0;
/// From the top of the band to the top of the colour bar.
const BAR_OFFSET: f64 = 22.0;

// Type sizes `[px]`.
const TITLE_SIZE: f64 = 22.0;
const TICK_SIZE: f64 = 15.0;
const LABEL_SIZE: f64 = 16.0;
const CAPTION_SIZE: f64 = 14.5;
const CAPTION_LINE: f64 = 21.0;

// Colours.
const INK: Rgb = [34, 34, 34];
const MUTED: Rgb = [96, 96, 96];
const GRID: Rgb = [232, 232, 232];
const BORDER: Rgb = [60, 60, 60];
const OBSTACLE: Rgb = [176, 176, 176];
const OBSTACLE_EDGE: Rgb = [128, 128, 128];
const COLLISION: Rgb = [214, 39, 40];
const WHITE: Rgb = [255, 255, 255];

// Strokes `[px]`.
const PATH_W: f64 = 2.6;
const STRAIGHT_W: f64 = 1.4;
const HALO_W: f64 = 1.6;

/// Colour steps per period along a path: fine enough for a smooth gradient.
const STEPS_PER_PERIOD: f64 = 256.0;
/// Cap on colour steps per segment (a long pause would otherwise cost a lot).
const MAX_STEPS_PER_SEGMENT: usize = 1024;

/// Renders a [`StagesFigure`] to PNG bytes.
///
/// Each panel shows the patch square with a light grid (every metre when there
/// is room), the obstacles, the paths coloured by `t mod π` through
/// [`time_colour`] (so colour runs on smoothly across the period wrap), red rings
/// of radius r around the collisions, and the boundary points; tick labels in
/// metres run along the bottom of every panel and the left of the first one.
/// Under the panels come a colour bar from 0 to π `[s]`, a legend of the
/// markers and the caption.
///
/// Rendering is deterministic and costs O(image pixels + path length × colour
/// steps).
///
/// # Errors
/// [`PngError::InvalidSize`], [`PngError::InvalidPeriod`] or
/// [`PngError::InvalidAgentRadius`] for a bad figure parameter,
/// [`PngError::NoPanels`] without stages, [`PngError::ImageTooSmall`] or
/// [`PngError::ImageTooLarge`] when the width leaves panels under 120 px or the
/// image would exceed 8192 px; drawing and encoding failures otherwise. Bad data
/// inside the figure (non-finite coordinates, one-point paths) is skipped.
pub fn render_stages(figure: &StagesFigure) -> Result<Vec<u8>, PngError> {
    let layout = Layout::new(figure)?;
    canvas::render(figure.width_px, layout.height_px, |c| draw(c, figure, &layout))
}

/// Where [`render_stages`] puts the panels and the colour bar of `figure`, in
/// image pixels (origin at the top-left corner, y down), without drawing.
///
/// Use it to annotate or inspect a rendered figure: [`StagesLayout::patch_to_pixel`]
/// maps a patch point of a panel to its pixel.
///
/// # Errors
/// As [`render_stages`], less drawing and encoding failures.
pub fn stages_layout(figure: &StagesFigure) -> Result<StagesLayout, PngError> {
    let layout = Layout::new(figure)?;
    Ok(StagesLayout {
        width_px: figure.width_px,
        height_px: layout.height_px,
        size: figure.size,
        panels: layout.lefts.iter().map(|&left| [left, layout.top, layout.side]).collect(),
        colour_bar: [layout.bar_left, layout.bar_top, layout.bar_width, COLOURBAR_H],
    })
}

/// The geometry of a rendered [`StagesFigure`] (see [`stages_layout`]).
#[derive(Debug, Clone, PartialEq)]
pub struct StagesLayout {
    /// Image width `[px]`.
    pub width_px: u32,
    /// Image height `[px]`.
    pub height_px: u32,
    /// Patch side L `[m]`.
    pub size: f64,
    /// Each panel's square: `[left, top, side]` `[px]`.
    pub panels: Vec<[f64; 3]>,
    /// The colour bar: `[left, top, width, height]` `[px]`; its left edge is
    /// t = 0, its right edge t = π.
    pub colour_bar: [f64; 4],
}

impl StagesLayout {
    /// Pixel `[x px, y px]` of patch point `p` `[m]` in panel `panel`, or `None`
    /// for a panel that does not exist. North is up.
    pub fn patch_to_pixel(&self, panel: usize, p: [f64; 2]) -> Option<[f64; 2]> {
        let &[left, top, side] = self.panels.get(panel)?;
        let k = side / self.size;
        Some([left + p[0] * k, top + side - p[1] * k])
    }
}

/// Checks the figure's parameters.
fn validate(figure: &StagesFigure) -> Result<(), PngError> {
    if !(figure.size.is_finite() && figure.size > 0.0) {
        return Err(PngError::InvalidSize { size: figure.size });
    }
    if !(figure.period.is_finite() && figure.period > 0.0) {
        return Err(PngError::InvalidPeriod { period: figure.period });
    }
    if !(figure.agent_radius.is_finite() && figure.agent_radius >= 0.0) {
        return Err(PngError::InvalidAgentRadius { agent_radius: figure.agent_radius });
    }
    if figure.stages.is_empty() {
        return Err(PngError::NoPanels { figure: "stages figure" });
    }
    Ok(())
}

/// What a legend item shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LegendItem {
    Entry,
    Exit,
    Collision,
    Obstacle,
}

/// The legend's items and labels, in order.
const LEGEND: [(LegendItem, &str); 4] = [
    (LegendItem::Entry, "entry"),
    (LegendItem::Exit, "exit"),
    (LegendItem::Collision, "collision (radius r)"),
    (LegendItem::Obstacle, "obstacle"),
];
/// Label of the colour bar.
const BAR_LABEL: &str = "time in the period, t mod π [s]";
/// Legend: room for the marker before a label, space after it, row pitch `[px]`.
const LEGEND_MARK_W: f64 = 26.0;
const LEGEND_SPACING: f64 = 28.0;
const LEGEND_ROW: f64 = 28.0;
/// From the top of the colour bar to the centre of the first legend row `[px]`.
const LEGEND_OFFSET: f64 = 64.0;

/// Where everything goes.
struct Layout {
    /// Panel side `[px]`.
    side: f64,
    /// Scale of markers and strokes for small panels `[0.6–1]`.
    mark: f64,
    /// Top of the panels `[px]`.
    top: f64,
    /// Left edge of each panel `[px]`.
    lefts: Vec<f64>,
    /// Colour bar: left, top, width.
    bar_left: f64,
    bar_top: f64,
    bar_width: f64,
    /// Legend items with the left end of their marker box and their centre line.
    legend: Vec<(LegendItem, &'static str, f64, f64)>,
    /// Caption: left, top, wrapped lines.
    caption_left: f64,
    caption_top: f64,
    caption: Vec<String>,
    height_px: u32,
}

impl Layout {
    fn new(figure: &StagesFigure) -> Result<Layout, PngError> {
        validate(figure)?;
        let n = figure.stages.len();
        let width = f64::from(figure.width_px);
        let fixed = 2.0 * MARGIN + Y_TICKS_W + (n as f64 - 1.0) * GAP;
        let min_width = (fixed + n as f64 * MIN_PANEL).ceil();
        let side = ((width - fixed) / n as f64).floor().max(MIN_PANEL);
        let left0 = MARGIN + Y_TICKS_W;
        let lefts: Vec<f64> = (0..n).map(|i| left0 + i as f64 * (side + GAP)).collect();
        let top = MARGIN + TITLE_H;
        let band_top = top + side + X_TICKS_H + BAND_GAP;
        let bar_top = band_top + BAR_OFFSET;
        let bar_width = side.min(COLOURBAR_MAX_W);
        let full_width = (width - MARGIN - left0).max(MIN_PANEL);

        canvas::with_measuring_canvas(|c| {
            // The colour bar and legend sit under the first panel with the
            // caption beside them when they fit there, else the caption goes
            // below them.
            let label_w = c.text_width(BAR_LABEL, Font::Sans, LABEL_SIZE);
            let beside = n >= 2 && label_w <= side + GAP - 20.0;
            let budget = if beside { side + GAP - 20.0 } else { full_width };
            let mut legend = Vec::new();
            let (mut x, mut y) = (left0, bar_top + LEGEND_OFFSET);
            for (item, label) in LEGEND {
                let w = LEGEND_MARK_W + c.text_width(label, Font::Sans, TICK_SIZE);
                if x > left0 && x + w > left0 + budget {
                    x = left0;
                    y += LEGEND_ROW;
                }
                legend.push((item, label, x, y));
                x += w + LEGEND_SPACING;
            }
            let block_bottom = y + 18.0;
            let (caption_left, caption_top) = if beside { (lefts[1], band_top) } else { (left0, block_bottom + 8.0) };
            let caption_width = (width - MARGIN - caption_left).max(MIN_PANEL);
            let caption = if figure.caption.trim().is_empty() {
                Vec::new()
            } else {
                c.wrap(figure.caption.trim_end(), Font::Mono, CAPTION_SIZE, caption_width)
            };
            let caption_bottom = caption_top + caption.len() as f64 * CAPTION_LINE;
            let height = (block_bottom.max(caption_bottom) + MARGIN).ceil();
            let min_height = (top + MIN_PANEL + X_TICKS_H + BAND_GAP + 100.0 + MARGIN).ceil();
            let height_px = height.min(f64::from(u32::MAX)) as u32;
            canvas::check_size(figure.width_px, height_px, min_width as u32, min_height as u32)?;
            Ok(Layout {
                side,
                mark: (side / 540.0).clamp(0.6, 1.0),
                top,
                lefts,
                bar_left: left0,
                bar_top,
                bar_width,
                legend,
                caption_left,
                caption_top,
                caption,
                height_px,
            })
        })?
    }
}

/// Maps the patch frame of one panel to image pixels (north up).
#[derive(Clone, Copy)]
struct PanelFrame {
    left: f64,
    top: f64,
    side: f64,
    size: f64,
    /// Scale of markers and strokes.
    mark: f64,
}

impl PanelFrame {
    fn px(&self, p: [f64; 2]) -> [f64; 2] {
        let k = self.side / self.size;
        [self.left + p[0] * k, self.top + self.side - p[1] * k]
    }

    fn scale(&self) -> f64 {
        self.side / self.size
    }

    fn patch(&self) -> Rect {
        Rect { x0: 0.0, y0: 0.0, x1: self.size, y1: self.size }
    }
}

fn draw(c: &mut Canvas<'_>, figure: &StagesFigure, layout: &Layout) -> Result<(), PngError> {
    let tick_step = nice_step(figure.size * 60.0 / layout.side);
    for (i, stage) in figure.stages.iter().enumerate() {
        let frame = PanelFrame {
            left: layout.lefts[i],
            top: layout.top,
            side: layout.side,
            size: figure.size,
            mark: layout.mark,
        };
        draw_panel(c, figure, stage, frame)?;
        draw_ticks(c, frame, tick_step, i == 0)?;
    }
    draw_colour_bar(c, figure, layout)?;
    draw_legend(c, layout)?;
    for (k, line) in layout.caption.iter().enumerate() {
        let baseline = layout.caption_top + 14.0 + k as f64 * CAPTION_LINE;
        c.text(line, layout.caption_left, baseline, CAPTION_SIZE, Font::Mono, Align::Left, INK, false)?;
    }
    Ok(())
}

fn draw_panel(
    c: &mut Canvas<'_>,
    figure: &StagesFigure,
    stage: &StagePanel,
    frame: PanelFrame,
) -> Result<(), PngError> {
    let (l, t, s) = (frame.left, frame.top, frame.side);
    // Grid every metre when the lines are at least 8 px apart.
    let grid = if frame.scale() >= 8.0 { 1.0 } else { nice_step(8.0 / frame.scale()) };
    // At most one line per 8 px, whatever the numbers (a non-finite step
    // gives no grid).
    let lines = (figure.size / grid).ceil();
    let lines = if lines.is_finite() && lines <= s { lines as usize } else { 0 };
    for k in 1..lines {
        let v = k as f64 * grid;
        if v >= figure.size {
            break;
        }
        // Centred on a pixel, a one-pixel line stays crisp.
        let x = frame.px([v, 0.0])[0].floor() + 0.5;
        let y = frame.px([0.0, v])[1].floor() + 0.5;
        c.segment([x, t], [x, t + s], 1.0, GRID)?;
        c.segment([l, y], [l + s, y], 1.0, GRID)?;
    }

    for obstacle in &figure.obstacles {
        let outline = obstacle_outline(obstacle);
        let clipped = frame.patch().clip_polygon(&outline);
        if clipped.len() < 3 {
            continue;
        }
        let px: Vec<[f64; 2]> = clipped.iter().map(|&p| frame.px(p)).collect();
        c.fill_polygon(&px, OBSTACLE)?;
        let mut closed = px.clone();
        closed.push(px[0]);
        c.polyline(&closed, 1.2, OBSTACLE_EDGE)?;
    }

    // Straight matching lines first, trajectories over them.
    for straight in [true, false] {
        for path in stage.paths.iter().filter(|p| p.straight == straight) {
            draw_path(c, path, frame, figure.period)?;
        }
    }

    let k = frame.mark;
    let ring_r = (figure.agent_radius * frame.scale()).max(5.0 * k);
    for p in &stage.collisions {
        if !(p[0].is_finite() && p[1].is_finite()) {
            continue;
        }
        let margin = figure.agent_radius;
        if p[0] < -margin || p[1] < -margin || p[0] > figure.size + margin || p[1] > figure.size + margin {
            continue;
        }
        let q = frame.px(*p);
        c.ring(q, ring_r + 1.6 * k, 1.0 * k, WHITE)?;
        c.ring(q, ring_r, 2.2 * k, COLLISION)?;
    }

    c.stroke_rect([l, t], [l + s, t + s], 1.6, BORDER)?;

    for mark in &figure.crossings {
        draw_crossing(c, mark, frame, figure.period)?;
    }

    // Shrink a title that would run into its neighbours.
    let room = s + 0.6 * GAP;
    let natural = c.text_width(&stage.title, Font::Sans, TITLE_SIZE);
    let size = if natural > room { (TITLE_SIZE * room / natural).max(10.0) } else { TITLE_SIZE };
    c.text(&stage.title, l + s / 2.0, t - 14.0, size, Font::Sans, Align::Center, INK, true)
}

/// The outline of an obstacle as a polygon `[m]`.
fn obstacle_outline(obstacle: &Obstacle) -> Vec<[f64; 2]> {
    match obstacle {
        Obstacle::Circle { center, radius } => {
            if !(center[0].is_finite() && center[1].is_finite() && radius.is_finite()) || *radius <= 0.0 {
                return Vec::new();
            }
            let n = 96;
            (0..n)
                .map(|i| {
                    let a = std::f64::consts::TAU * f64::from(i) / f64::from(n);
                    [center[0] + radius * a.cos(), center[1] + radius * a.sin()]
                })
                .collect()
        }
        Obstacle::Polygon(vertices) => {
            if vertices.iter().flatten().any(|v| !v.is_finite()) {
                Vec::new()
            } else {
                vertices.clone()
            }
        }
    }
}

/// Draws one path in runs of finite vertices, coloured by time.
fn draw_path(c: &mut Canvas<'_>, path: &PanelPath, frame: PanelFrame, period: f64) -> Result<(), PngError> {
    let width = frame.mark * if path.straight { STRAIGHT_W } else { PATH_W };
    let halo = frame.mark * HALO_W;
    let finite = |p: &[f64; 3]| p.iter().all(|v| v.is_finite());
    for run in path.points.split(|p| !finite(p)) {
        if run.len() < 2 {
            continue;
        }
        // Pieces of constant colour, clipped to the patch, in pixels.
        let mut pieces: Vec<([f64; 2], [f64; 2], Rgb)> = Vec::new();
        for w in run.windows(2) {
            let (a, b) = (w[0], w[1]);
            let steps = ((b[2] - a[2]).abs() / period * STEPS_PER_PERIOD)
                .ceil()
                .clamp(1.0, MAX_STEPS_PER_SEGMENT as f64) as usize;
            for k in 0..steps {
                let (u0, u1) = (k as f64 / steps as f64, (k + 1) as f64 / steps as f64);
                let lerp = |u: f64| [a[0] + u * (b[0] - a[0]), a[1] + u * (b[1] - a[1]), a[2] + u * (b[2] - a[2])];
                let (p, q) = (lerp(u0), lerp(u1));
                let colour = time_colour(lerp((u0 + u1) / 2.0)[2], period);
                if let Some((p, q)) = frame.patch().clip_segment([p[0], p[1]], [q[0], q[1]]) {
                    pieces.push((frame.px(p), frame.px(q), colour));
                }
            }
        }
        // A white halo under full-width paths lifts them off the grid and shows
        // which path passes over which.
        if !path.straight {
            for &(p, q, _) in &pieces {
                c.segment(p, q, width + 2.0 * halo, WHITE)?;
            }
            for &(p, q, _) in &pieces {
                c.fill_circle(p, width / 2.0 + halo, WHITE)?;
                c.fill_circle(q, width / 2.0 + halo, WHITE)?;
            }
        }
        for &(p, q, colour) in &pieces {
            c.segment(p, q, width, colour)?;
        }
        // Round joins and caps at the original vertices.
        let rect = frame.patch();
        for v in run {
            if v[0] >= rect.x0 && v[0] <= rect.x1 && v[1] >= rect.y0 && v[1] <= rect.y1 {
                c.fill_circle(frame.px([v[0], v[1]]), width / 2.0, time_colour(v[2], period))?;
            }
        }
    }
    Ok(())
}

/// The side a border point is nearest to.
fn nearest_side(p: [f64; 2], size: f64) -> Side {
    let d = [p[1], size - p[0], size - p[1], p[0]];
    let mut best = 0;
    for k in 1..4 {
        if d[k] < d[best] {
            best = k;
        }
    }
    Side::from_index(best)
}

/// Entry triangle (pointing into the patch) or exit circle at a border point.
fn draw_crossing(c: &mut Canvas<'_>, mark: &CrossingMark, frame: PanelFrame, period: f64) -> Result<(), PngError> {
    if !(mark.position[0].is_finite() && mark.position[1].is_finite()) {
        return Ok(());
    }
    let p = [mark.position[0].clamp(0.0, frame.size), mark.position[1].clamp(0.0, frame.size)];
    let colour = time_colour(mark.t, period);
    let q = frame.px(p);
    if mark.entry {
        let n = nearest_side(p, frame.size).inward_normal();
        entry_marker(c, q, [n[0], -n[1]], colour, frame.mark)
    } else {
        exit_marker(c, q, colour, frame.mark)
    }
}

/// A filled triangle centred on `q` with its tip along `n` (image frame), with
/// a dark outline, at scale `k`.
fn entry_marker(c: &mut Canvas<'_>, q: [f64; 2], n: [f64; 2], colour: Rgb, k: f64) -> Result<(), PngError> {
    let tri = |h: f64, half: f64| {
        let t = [-n[1], n[0]];
        let base = [q[0] - n[0] * h / 3.0, q[1] - n[1] * h / 3.0];
        vec![
            [q[0] + n[0] * 2.0 * h / 3.0, q[1] + n[1] * 2.0 * h / 3.0],
            [base[0] + t[0] * half, base[1] + t[1] * half],
            [base[0] - t[0] * half, base[1] - t[1] * half],
        ]
    };
    c.fill_polygon(&tri(17.5 * k, 9.6 * k), INK)?;
    c.fill_polygon(&tri(13.0 * k, 7.0 * k), colour)
}

/// A hollow circle in the time colour with a dark outline, at scale `k`.
fn exit_marker(c: &mut Canvas<'_>, q: [f64; 2], colour: Rgb, k: f64) -> Result<(), PngError> {
    c.fill_circle(q, 7.2 * k, INK)?;
    c.fill_circle(q, 6.2 * k, colour)?;
    c.fill_circle(q, 3.4 * k, WHITE)?;
    c.ring(q, 3.4 * k, 1.0 * k, INK)
}

/// Tick labels in metres below the panel and, for the first, on its left.
fn draw_ticks(c: &mut Canvas<'_>, frame: PanelFrame, step: f64, with_y: bool) -> Result<(), PngError> {
    let count = (frame.size / step + 1e-9).floor();
    // A non-finite or absurd step (extreme patch sizes) labels just 0 and L.
    let count = if count.is_finite() && count <= 100.0 { count as usize } else { 0 };
    let decimals = (-(step.log10() + 1e-9).floor()).clamp(0.0, 20.0) as usize;
    let mut ticks: Vec<(f64, String)> = (0..=count)
        .map(|k| {
            let v = k as f64 * step;
            (v, format!("{v:.decimals$}"))
        })
        .collect();
    // Always label the far side L itself, dropping a tick that would crowd it.
    let last = ticks.last().map_or(0.0, |t| t.0);
    if frame.size - last > 1e-9 * frame.size {
        if (frame.size - last) * frame.scale() < 30.0 && ticks.len() > 1 {
            ticks.pop();
        }
        ticks.push((frame.size, trim_number(frame.size)));
    }
    for (v, label) in ticks {
        let [x, y] = frame.px([v, v]);
        let bottom = frame.top + frame.side;
        c.segment([x, bottom], [x, bottom + 5.0], 1.2, BORDER)?;
        c.text(&label, x, bottom + 21.0, TICK_SIZE, Font::Sans, Align::Center, MUTED, false)?;
        if with_y {
            c.segment([frame.left - 5.0, y], [frame.left, y], 1.2, BORDER)?;
            c.text(&label, frame.left - 9.0, y + 5.0, TICK_SIZE, Font::Sans, Align::Right, MUTED, false)?;
        }
    }
    Ok(())
}

/// Horizontal colour bar of `t mod π` from 0 to π `[s]`.
fn draw_colour_bar(c: &mut Canvas<'_>, figure: &StagesFigure, layout: &Layout) -> Result<(), PngError> {
    let (x0, w) = (layout.bar_left, layout.bar_width);
    let label_base = layout.bar_top - 10.0;
    c.text(BAR_LABEL, x0, label_base, LABEL_SIZE, Font::Sans, Align::Left, INK, false)?;
    let (y0, h) = (layout.bar_top, COLOURBAR_H);
    let columns = (w * 2.0).ceil() as usize;
    for i in 0..columns {
        let (a, b) = (i as f64 / columns as f64, (i + 1) as f64 / columns as f64);
        let colour = time_colour((a + b) / 2.0 * figure.period, figure.period);
        c.fill_rect([x0 + a * w, y0], [x0 + b * w + 0.01, y0 + h], colour)?;
    }
    c.stroke_rect([x0, y0], [x0 + w, y0 + h], 1.0, BORDER)?;
    let scale = Scale { lo: 0.0, hi: figure.period, log: false };
    let mut ticks = scale.ticks(w, 70.0).major;
    let end_px = |v: f64| x0 + v / figure.period * w;
    // Always label π itself.
    let last_px = ticks.last().map_or(f64::NEG_INFINITY, |t| end_px(t.value));
    if x0 + w - last_px > 1.0 {
        if x0 + w - last_px < 40.0 {
            ticks.pop();
        }
        ticks.push(crate::axis::Tick { value: figure.period, label: trim_number(figure.period) });
    }
    for tick in &ticks {
        let x = end_px(tick.value);
        c.segment([x, y0 + h], [x, y0 + h + 5.0], 1.2, BORDER)?;
        c.text(&tick.label, x, y0 + h + 21.0, TICK_SIZE, Font::Sans, Align::Center, MUTED, false)?;
    }
    Ok(())
}

/// Legend of the markers, under the colour bar.
fn draw_legend(c: &mut Canvas<'_>, layout: &Layout) -> Result<(), PngError> {
    let neutral: Rgb = [150, 150, 150];
    let k = layout.mark;
    for &(item, label, x, y) in &layout.legend {
        // Every marker fits in [x, x + 18] px.
        let centre = [x + 9.0, y];
        match item {
            LegendItem::Entry => entry_marker(c, [x + 6.0, y], [1.0, 0.0], neutral, k)?,
            LegendItem::Exit => exit_marker(c, centre, neutral, k)?,
            LegendItem::Collision => c.ring(centre, 7.0 * k, 2.2 * k, COLLISION)?,
            LegendItem::Obstacle => {
                let (a, b) = ([x + 2.0, y - 7.0], [x + 16.0, y + 7.0]);
                c.fill_rect(a, b, OBSTACLE)?;
                c.stroke_rect(a, b, 1.2, OBSTACLE_EDGE)?;
            }
        }
        c.text(label, x + LEGEND_MARK_W, y + 5.0, TICK_SIZE, Font::Sans, Align::Left, INK, false)?;
    }
    Ok(())
}

/// A number with at most three decimals and no trailing zeros.
fn trim_number(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_sides() {
        assert_eq!(nearest_side([4.0, 0.0], 16.0), Side::South);
        assert_eq!(nearest_side([16.0, 3.0], 16.0), Side::East);
        assert_eq!(nearest_side([7.0, 16.0], 16.0), Side::North);
        assert_eq!(nearest_side([0.0, 9.0], 16.0), Side::West);
    }

    #[test]
    fn numbers_are_trimmed() {
        assert_eq!(trim_number(10.0), "10");
        assert_eq!(trim_number(7.25), "7.25");
    }
}
