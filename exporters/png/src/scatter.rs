//! Scatter charts with linear or logarithmic axes (the seed paper's Figure 6).

use crate::axis::Scale;
use crate::canvas::{self, Align, Canvas, Font, Rect, Rgb};
use crate::error::PngError;

/// A chart of one or more scatter panels side by side.
#[derive(Debug, Clone, PartialEq)]
pub struct ScatterChart {
    /// The panels, left to right `[Limit: at least one]`.
    pub panels: Vec<ScatterPanel>,
    /// Image width `[px]` `[Limit: ≥ 240 per panel, ≤ 8192]`.
    pub width_px: u32,
    /// Image height `[px]` `[Limit: 200–8192]`.
    pub height_px: u32,
    /// Radius of a point's dot `[px]` `[Limit: clamped to 0.5–20; not finite
    /// gives 3]`.
    pub point_radius_px: f64,
    /// Opacity of a dot `[0–1]` `[Limit: clamped to 0.05–1; not finite gives
    /// 0.7]`: below 1 shows where many points overlap.
    pub point_opacity: f64,
}

impl Default for ScatterChart {
    /// No panels, 1600 × 640 px, 3 px dots at 70 % opacity.
    fn default() -> Self {
        ScatterChart { panels: Vec::new(), width_px: 1600, height_px: 640, point_radius_px: 3.0, point_opacity: 0.7 }
    }
}

/// One scatter plot.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ScatterPanel {
    /// Title above the plot (may be empty).
    pub title: String,
    /// Label under the x axis, with its unit, e.g. `"boundary points (entries + exits)"`.
    pub x_label: String,
    /// Label left of the y axis, with its unit, e.g. `"time [s]"`.
    pub y_label: String,
    /// Logarithmic x axis (non-positive x values are then skipped).
    pub x_log: bool,
    /// Logarithmic y axis (non-positive y values are then skipped).
    pub y_log: bool,
    /// The data, drawn in order (later series on top).
    pub series: Vec<Series>,
    /// Where the legend goes.
    pub legend: LegendPosition,
}

/// A named set of points in one colour.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Series {
    /// Name in the legend; a series with an empty name is left out of it.
    pub name: String,
    /// Colour (8-bit sRGB).
    pub colour: [u8; 3],
    /// Points `[x, y]` in data units; non-finite points are skipped.
    pub points: Vec<[f64; 2]>,
}

/// Corner of the plot that holds the legend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LegendPosition {
    /// Upper left (the default: growth curves leave it empty).
    #[default]
    TopLeft,
    /// Upper right.
    TopRight,
    /// Lower left.
    BottomLeft,
    /// Lower right.
    BottomRight,
    /// No legend.
    Hidden,
}

const MIN_PANEL_W: u32 = 240;
const MIN_H: u32 = 200;

const MARGIN: f64 = 18.0;
const TITLE_SIZE: f64 = 21.0;
const LABEL_SIZE: f64 = 17.0;
const TICK_SIZE: f64 = 15.0;
const LEGEND_SIZE: f64 = 15.0;

const INK: Rgb = [34, 34, 34];
const MUTED: Rgb = [90, 90, 90];
const FRAME: Rgb = [70, 70, 70];
const GRID: Rgb = [226, 226, 226];
const MINOR_GRID: Rgb = [243, 243, 243];
const WHITE: Rgb = [255, 255, 255];
const LEGEND_EDGE: Rgb = [190, 190, 190];

/// Renders a [`ScatterChart`] to PNG bytes.
///
/// Each panel gets its title, a framed plot with grid lines at the major ticks
/// (and at 2…9 × 10ᵏ on log axes), tick labels, axis labels, semi-transparent
/// dots and a legend. Axis ranges fit the drawable points with a small margin; a
/// panel without drawable points shows empty axes (`[0, 1]`, or `[1, 10]` on a
/// log axis).
///
/// # Errors
/// [`PngError::NoPanels`] without panels, [`PngError::ImageTooSmall`] below
/// 240 px of width per panel or 200 px of height, [`PngError::ImageTooLarge`]
/// above 8192 px; drawing and encoding failures otherwise.
pub fn render_scatter(chart: &ScatterChart) -> Result<Vec<u8>, PngError> {
    if chart.panels.is_empty() {
        return Err(PngError::NoPanels { figure: "scatter chart" });
    }
    let n = chart.panels.len() as u32;
    canvas::check_size(chart.width_px, chart.height_px, MIN_PANEL_W.saturating_mul(n), MIN_H)?;
    canvas::render(chart.width_px, chart.height_px, |c| {
        let w = f64::from(chart.width_px) / f64::from(n);
        for (i, panel) in chart.panels.iter().enumerate() {
            let area = Rect { x0: i as f64 * w, y0: 0.0, x1: (i + 1) as f64 * w, y1: f64::from(chart.height_px) };
            draw_panel(c, chart, panel, area)?;
        }
        Ok(())
    })
}

fn draw_panel(c: &mut Canvas<'_>, chart: &ScatterChart, panel: &ScatterPanel, area: Rect) -> Result<(), PngError> {
    // Fit the axes to the points that can be drawn on both.
    let usable = |v: f64, log: bool| v.is_finite() && (!log || v > 0.0);
    let points = || {
        panel
            .series
            .iter()
            .flat_map(|s| s.points.iter())
            .filter(|p| usable(p[0], panel.x_log) && usable(p[1], panel.y_log))
    };
    let xs = Scale::fit(points().map(|p| p[0]), panel.x_log);
    let ys = Scale::fit(points().map(|p| p[1]), panel.y_log);

    // Vertical layout first: the y ticks depend only on the plot height.
    let top = area.y0 + MARGIN + if panel.title.is_empty() { 8.0 } else { 36.0 };
    let bottom = area.y1 - MARGIN - if panel.x_label.is_empty() { 0.0 } else { 26.0 } - 26.0;
    let y_ticks = ys.ticks(bottom - top, 60.0);
    let tick_w = y_ticks.major.iter().map(|t| c.text_width(&t.label, Font::Sans, TICK_SIZE)).fold(0.0, f64::max);
    let y_label_w = if panel.y_label.is_empty() { 0.0 } else { LABEL_SIZE + 12.0 };
    let left = area.x0 + MARGIN + 8.0 + y_label_w + tick_w + 10.0;
    let right = area.x1 - MARGIN - 14.0;
    let x_ticks = xs.ticks(right - left, 90.0);
    let plot = Rect { x0: left, y0: top, x1: right, y1: bottom };
    let to_px = |p: [f64; 2]| -> Option<[f64; 2]> {
        let (u, v) = (xs.unit(p[0])?, ys.unit(p[1])?);
        Some([left + u * (right - left), bottom - v * (bottom - top)])
    };
    let x_px = |v: f64| xs.unit(v).map(|u| left + u * (right - left));
    let y_px = |v: f64| ys.unit(v).map(|u| bottom - u * (bottom - top));

    // Grid.
    for &v in &x_ticks.minor {
        if let Some(x) = x_px(v) {
            c.segment([x, top], [x, bottom], 1.0, MINOR_GRID)?;
        }
    }
    for &v in &y_ticks.minor {
        if let Some(y) = y_px(v) {
            c.segment([left, y], [right, y], 1.0, MINOR_GRID)?;
        }
    }
    for t in &x_ticks.major {
        if let Some(x) = x_px(t.value) {
            c.segment([x, top], [x, bottom], 1.0, GRID)?;
            c.segment([x, bottom], [x, bottom + 5.0], 1.2, FRAME)?;
            c.text(&t.label, x, bottom + 22.0, TICK_SIZE, Font::Sans, Align::Center, MUTED, false)?;
        }
    }
    for t in &y_ticks.major {
        if let Some(y) = y_px(t.value) {
            c.segment([left, y], [right, y], 1.0, GRID)?;
            c.segment([left - 5.0, y], [left, y], 1.2, FRAME)?;
            c.text(&t.label, left - 9.0, y + 5.0, TICK_SIZE, Font::Sans, Align::Right, MUTED, false)?;
        }
    }

    // Points.
    let r = if chart.point_radius_px.is_finite() { chart.point_radius_px.clamp(0.5, 20.0) } else { 3.0 };
    let alpha = if chart.point_opacity.is_finite() { chart.point_opacity.clamp(0.05, 1.0) } else { 0.7 };
    for series in &panel.series {
        for p in &series.points {
            if let Some(q) = to_px(*p)
                && q[0] >= left
                && q[0] <= right
                && q[1] >= top
                && q[1] <= bottom
            {
                c.fill_circle_alpha(q, r, series.colour, alpha)?;
            }
        }
    }

    c.stroke_rect([left, top], [right, bottom], 1.2, FRAME)?;

    // Labels.
    if !panel.title.is_empty() {
        c.text(
            &panel.title,
            (left + right) / 2.0,
            area.y0 + MARGIN + 20.0,
            TITLE_SIZE,
            Font::Sans,
            Align::Center,
            INK,
            true,
        )?;
    }
    if !panel.x_label.is_empty() {
        c.text(&panel.x_label, (left + right) / 2.0, bottom + 50.0, LABEL_SIZE, Font::Sans, Align::Center, INK, false)?;
    }
    if !panel.y_label.is_empty() {
        c.text_up(
            &panel.y_label,
            area.x0 + MARGIN + 8.0 + LABEL_SIZE * 0.8,
            (top + bottom) / 2.0,
            LABEL_SIZE,
            Font::Sans,
            INK,
        )?;
    }
    draw_legend(c, panel, plot, r)
}

fn draw_legend(c: &mut Canvas<'_>, panel: &ScatterPanel, plot: Rect, r: f64) -> Result<(), PngError> {
    let named: Vec<&Series> = panel.series.iter().filter(|s| !s.name.is_empty()).collect();
    if named.is_empty() || panel.legend == LegendPosition::Hidden {
        return Ok(());
    }
    let (pad, row) = (10.0, 22.0);
    let marker = r.max(4.5);
    let text_w = named.iter().map(|s| c.text_width(&s.name, Font::Sans, LEGEND_SIZE)).fold(0.0, f64::max);
    let w = pad + 2.0 * marker + 10.0 + text_w + pad;
    let h = 2.0 * pad + row * named.len() as f64 - 6.0;
    let inset = 12.0;
    let x0 = match panel.legend {
        LegendPosition::TopLeft | LegendPosition::BottomLeft => plot.x0 + inset,
        _ => plot.x1 - inset - w,
    };
    let y0 = match panel.legend {
        LegendPosition::TopLeft | LegendPosition::TopRight => plot.y0 + inset,
        _ => plot.y1 - inset - h,
    };
    c.fill_polygon_alpha(&[[x0, y0], [x0 + w, y0], [x0 + w, y0 + h], [x0, y0 + h]], WHITE, 0.9)?;
    c.stroke_rect([x0, y0], [x0 + w, y0 + h], 1.0, LEGEND_EDGE)?;
    for (k, s) in named.iter().enumerate() {
        let cy = y0 + pad + 8.0 + k as f64 * row;
        c.fill_circle([x0 + pad + marker, cy], marker, s.colour)?;
        c.text(&s.name, x0 + pad + 2.0 * marker + 10.0, cy + 5.0, LEGEND_SIZE, Font::Sans, Align::Left, INK, false)?;
    }
    Ok(())
}
