//! Line charts in a grid of panels, with shaded intervals and vertical marks
//! (foot heights over a clip with its detected plants and steps).

use crate::axis::Scale;
use crate::canvas::{self, Align, Canvas, Font, Rect, Rgb};
use crate::error::PngError;

/// A grid of line panels with a title.
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    /// Title above the grid (may be empty).
    pub title: String,
    /// Panels, row by row `[Limit: at least one]`.
    pub panels: Vec<LinePanel>,
    /// Panels per row `[Limit: ≥ 1]`.
    pub columns: u32,
    /// Width of a panel `[px]` `[Limit: 240–4096]`.
    pub panel_width_px: u32,
    /// Height of a panel `[px]` `[Limit: 160–4096]`.
    pub panel_height_px: u32,
}

impl Default for LineChart {
    /// No panels, two columns of 640 × 300 px.
    fn default() -> Self {
        LineChart { title: String::new(), panels: Vec::new(), columns: 2, panel_width_px: 640, panel_height_px: 300 }
    }
}

/// One line plot.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LinePanel {
    /// Title above the plot.
    pub title: String,
    /// Label under the x axis, with its unit.
    pub x_label: String,
    /// Label left of the y axis, with its unit.
    pub y_label: String,
    /// Polylines, drawn in order.
    pub series: Vec<LineSeries>,
    /// Shaded x intervals, drawn under the lines.
    pub bands: Vec<Band>,
    /// Vertical marks at these x values.
    pub marks: Vec<f64>,
    /// Legend in the bottom right corner (where a cumulative distribution
    /// leaves room) instead of the top right.
    pub legend_bottom: bool,
}

/// A named polyline.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LineSeries {
    /// Name in the legend (empty: not in it).
    pub name: String,
    /// Colour (8-bit sRGB).
    pub colour: [u8; 3],
    /// Points `[x, y]`; non-finite points break the line.
    pub points: Vec<[f64; 2]>,
}

/// A shaded interval of x across a horizontal strip of the plot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Band {
    /// `[x0, x1]` in data units.
    pub x: [f64; 2],
    /// Colour (8-bit sRGB).
    pub colour: [u8; 3],
    /// Vertical extent as shares of the plot height from the bottom,
    /// `[from, to]` in `[0, 1]`.
    pub strip: [f64; 2],
}

const TITLE: f64 = 22.0;
const PANEL_TITLE: f64 = 17.0;
const LABEL: f64 = 14.0;
const TICK: f64 = 13.0;
const INK: Rgb = [34, 34, 34];
const MUTED: Rgb = [90, 90, 90];
const FRAME: Rgb = [70, 70, 70];
const GRID: Rgb = [228, 228, 228];
const MARK: Rgb = [150, 150, 150];

/// Renders a [`LineChart`] to PNG bytes.
///
/// # Errors
/// [`PngError::NoPanels`] without panels; [`PngError::ImageTooSmall`] or
/// [`PngError::ImageTooLarge`] when a panel or the whole image is out of
/// limits; drawing and encoding failures otherwise.
pub fn render_lines(chart: &LineChart) -> Result<Vec<u8>, PngError> {
    if chart.panels.is_empty() {
        return Err(PngError::NoPanels { figure: "line chart" });
    }
    canvas::check_size(chart.panel_width_px, chart.panel_height_px, 240, 160)?;
    let cols = chart.columns.max(1).min(chart.panels.len() as u32);
    let rows = (chart.panels.len() as u32).div_ceil(cols);
    let head = if chart.title.is_empty() { 0 } else { 44 };
    let w = cols.saturating_mul(chart.panel_width_px);
    let h = rows.saturating_mul(chart.panel_height_px).saturating_add(head);
    canvas::check_size(w, h, 240, 160)?;
    canvas::render(w, h, |c| {
        if !chart.title.is_empty() {
            c.text(&chart.title, f64::from(w) / 2.0, 30.0, TITLE, Font::Sans, Align::Center, INK, true)?;
        }
        for (k, panel) in chart.panels.iter().enumerate() {
            let (col, row) = (k as u32 % cols, k as u32 / cols);
            let area = Rect {
                x0: f64::from(col * chart.panel_width_px),
                y0: f64::from(head + row * chart.panel_height_px),
                x1: f64::from((col + 1) * chart.panel_width_px),
                y1: f64::from(head + (row + 1) * chart.panel_height_px),
            };
            draw_panel(c, panel, area)?;
        }
        Ok(())
    })
}

fn draw_panel(c: &mut Canvas<'_>, panel: &LinePanel, area: Rect) -> Result<(), PngError> {
    let points = || panel.series.iter().flat_map(|s| s.points.iter()).filter(|p| p[0].is_finite() && p[1].is_finite());
    let xs = Scale::fit(points().map(|p| p[0]).chain(panel.bands.iter().flat_map(|b| b.x)), false);
    let ys = Scale::fit(points().map(|p| p[1]).chain([0.0]), false);
    let top = area.y0 + 40.0;
    let bottom = area.y1 - 48.0;
    let left = area.x0 + 70.0;
    let right = area.x1 - 16.0;
    let x_px = |v: f64| xs.unit(v).map(|u| left + u * (right - left));
    let y_px = |v: f64| ys.unit(v).map(|u| bottom - u * (bottom - top));
    let plot = Rect { x0: left, y0: top, x1: right, y1: bottom };
    let y_ticks = ys.ticks(bottom - top, 45.0);
    let x_ticks = xs.ticks(right - left, 80.0);
    for t in &y_ticks.major {
        if let Some(y) = y_px(t.value) {
            c.segment([left, y], [right, y], 1.0, GRID)?;
            c.text(&t.label, left - 7.0, y + 4.0, TICK, Font::Sans, Align::Right, MUTED, false)?;
        }
    }
    for t in &x_ticks.major {
        if let Some(x) = x_px(t.value) {
            c.segment([x, top], [x, bottom], 1.0, GRID)?;
            c.text(&t.label, x, bottom + 17.0, TICK, Font::Sans, Align::Center, MUTED, false)?;
        }
    }
    for b in &panel.bands {
        if let (Some(a), Some(z)) = (x_px(b.x[0]), x_px(b.x[1])) {
            let (a, z) = (a.clamp(left, right), z.clamp(left, right));
            let y0 = bottom - b.strip[0].clamp(0.0, 1.0) * (bottom - top);
            let y1 = bottom - b.strip[1].clamp(0.0, 1.0) * (bottom - top);
            if z > a {
                c.fill_polygon_alpha(&[[a, y1], [z, y1], [z, y0], [a, y0]], b.colour, 0.35)?;
            }
        }
    }
    for &m in &panel.marks {
        if let Some(x) = x_px(m) {
            c.segment([x, top], [x, bottom], 1.2, MARK)?;
        }
    }
    for s in &panel.series {
        let mut run: Vec<[f64; 2]> = Vec::new();
        for p in s.points.iter().chain(std::iter::once(&[f64::NAN, f64::NAN])) {
            match (x_px(p[0]), y_px(p[1])) {
                (Some(x), Some(y)) if p[0].is_finite() && p[1].is_finite() => run.push([x, y]),
                _ => {
                    let clipped: Vec<[f64; 2]> = std::mem::take(&mut run);
                    if clipped.len() >= 2 {
                        for w in clipped.windows(2) {
                            if let Some((a, b)) = plot.clip_segment(w[0], w[1]) {
                                c.segment(a, b, 2.0, s.colour)?;
                            }
                        }
                    }
                }
            }
        }
    }
    c.stroke_rect([left, top], [right, bottom], 1.2, FRAME)?;
    c.text(&panel.title, (left + right) / 2.0, area.y0 + 26.0, PANEL_TITLE, Font::Sans, Align::Center, INK, true)?;
    c.text(&panel.x_label, (left + right) / 2.0, bottom + 38.0, LABEL, Font::Sans, Align::Center, INK, false)?;
    c.text_up(&panel.y_label, area.x0 + 18.0, (top + bottom) / 2.0, LABEL, Font::Sans, INK)?;
    // Legend, top or bottom right, on white.
    let named: Vec<&LineSeries> = panel.series.iter().filter(|s| !s.name.is_empty()).collect();
    let first = if panel.legend_bottom { bottom - 10.0 - 18.0 * (named.len() as f64 - 1.0) } else { top + 16.0 };
    let widest = named.iter().map(|s| c.text_width(&s.name, Font::Sans, LABEL)).fold(0.0, f64::max);
    if !named.is_empty() {
        let (x0, y0) = (right - 14.0 - widest - 32.0, first - 16.0);
        c.fill_rect([x0, y0], [right - 4.0, first + 18.0 * (named.len() as f64 - 1.0) + 6.0], [255, 255, 255])?;
    }
    for (k, s) in named.iter().enumerate() {
        let y = first + 18.0 * k as f64;
        let tw = c.text_width(&s.name, Font::Sans, LABEL);
        let x = right - 14.0 - tw;
        c.segment([x - 26.0, y - 4.0], [x - 6.0, y - 4.0], 3.0, s.colour)?;
        c.text(&s.name, x, y, LABEL, Font::Sans, Align::Left, INK, false)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_a_png_of_the_laid_out_size() {
        let panel = LinePanel {
            title: "walk".into(),
            x_label: "time [s]".into(),
            y_label: "height [m]".into(),
            series: vec![LineSeries {
                name: "left".into(),
                colour: [31, 119, 180],
                points: (0..50).map(|i| [i as f64 * 0.02, (i as f64 * 0.2).sin().abs() * 0.1]).collect(),
            }],
            bands: vec![Band { x: [0.1, 0.4], colour: [31, 119, 180], strip: [0.0, 0.1] }],
            marks: vec![0.1, 0.6],
            legend_bottom: false,
        };
        let chart = LineChart {
            title: "foot heights".into(),
            panels: vec![panel.clone(), panel.clone(), panel],
            ..LineChart::default()
        };
        let png = render_lines(&chart).unwrap();
        let decoder = png::Decoder::new(std::io::Cursor::new(png));
        let reader = decoder.read_info().unwrap();
        assert_eq!((reader.info().width, reader.info().height), (1280, 44 + 600));
        assert!(render_lines(&LineChart::default()).is_err());
    }
}
