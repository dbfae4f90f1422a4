//! A supersampled drawing surface in final-image pixel coordinates.
//!
//! Everything is drawn with `plotters` on a bitmap `SS` times larger than the
//! image and box-filtered down, which anti-aliases the (otherwise aliased)
//! polygon fills of the bitmap backend. Strokes are built here as polygons so
//! that sub-pixel positions, joins and caps are under our control.

use std::sync::OnceLock;

use ab_glyph::{Font as _, FontRef, PxScale, ScaleFont, point};
use plotters::backend::BitMapBackend;
use plotters::prelude::{Color, DrawingBackend};
use plotters::style::{RGBAColor, RGBColor};

use crate::error::PngError;

/// Supersampling factor per axis.
const SS: u32 = 2;
/// Largest image side this crate draws `[px]`.
pub(crate) const MAX_PX: u32 = 8192;

/// An 8-bit sRGB colour.
pub(crate) type Rgb = [u8; 3];

/// A typeface (both embedded by `epaint_default_fonts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Font {
    /// Ubuntu Light: titles, labels.
    Sans,
    /// Hack: captions with aligned numbers.
    Mono,
}

impl Font {
    fn name(self) -> &'static str {
        match self {
            Font::Sans => "Ubuntu Light",
            Font::Mono => "Hack",
        }
    }
}

/// Horizontal text alignment relative to the anchor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Align {
    Left,
    Center,
    Right,
}

/// The parsed embedded fonts, once per process.
///
/// Text is rasterised here with `ab_glyph` (the crate behind plotters'
/// `ab_glyph` feature) rather than through plotters' text drawing: plotters
/// 0.3.7 places each glyph bitmap at the pen position without its left side
/// bearing and on whole pixels, which visibly misplaces narrow glyphs (in Hack,
/// `0.61` reads `0. 61`).
fn fonts() -> Result<&'static [FontRef<'static>; 2], PngError> {
    static FONTS: OnceLock<Result<[FontRef<'static>; 2], &'static str>> = OnceLock::new();
    let parsed = FONTS.get_or_init(|| {
        let sans = FontRef::try_from_slice(epaint_default_fonts::UBUNTU_LIGHT).map_err(|_| Font::Sans.name())?;
        let mono = FontRef::try_from_slice(epaint_default_fonts::HACK_REGULAR).map_err(|_| Font::Mono.name())?;
        Ok([sans, mono])
    });
    parsed.as_ref().map_err(|&family| PngError::Font { family })
}

/// Checks an image size against the limits.
pub(crate) fn check_size(width_px: u32, height_px: u32, min_width_px: u32, min_height_px: u32) -> Result<(), PngError> {
    if width_px > MAX_PX || height_px > MAX_PX {
        return Err(PngError::ImageTooLarge { width_px, height_px, max_px: MAX_PX });
    }
    if width_px < min_width_px || height_px < min_height_px {
        return Err(PngError::ImageTooSmall { width_px, height_px, min_width_px, min_height_px });
    }
    Ok(())
}

/// Draws on a white `width_px × height_px` image with `draw` and returns the PNG
/// bytes.
pub(crate) fn render(
    width_px: u32,
    height_px: u32,
    draw: impl FnOnce(&mut Canvas<'_>) -> Result<(), PngError>,
) -> Result<Vec<u8>, PngError> {
    check_size(width_px, height_px, 1, 1)?;
    let fonts = fonts()?;
    let (w, h) = (width_px * SS, height_px * SS);
    let mut big = vec![255u8; w as usize * h as usize * 3];
    {
        let backend = BitMapBackend::with_buffer(&mut big, (w, h));
        let mut canvas = Canvas { backend, fonts };
        draw(&mut canvas)?;
        canvas.backend.present().map_err(draw_error)?;
    }
    let small = downsample(&big, width_px as usize, height_px as usize);
    encode_png(&small, width_px, height_px)
}

/// Runs `f` with a canvas that is only good for measuring text (it has one
/// pixel), for layouts that must be known before the image size is.
pub(crate) fn with_measuring_canvas<R>(f: impl FnOnce(&Canvas<'_>) -> R) -> Result<R, PngError> {
    let fonts = fonts()?;
    let mut buf = vec![255u8; (SS * SS * 3) as usize];
    let canvas = Canvas { backend: BitMapBackend::with_buffer(&mut buf, (SS, SS)), fonts };
    Ok(f(&canvas))
}

/// Box-filters the supersampled RGB buffer down to the image size.
fn downsample(big: &[u8], width: usize, height: usize) -> Vec<u8> {
    let ss = SS as usize;
    let big_w = width * ss;
    let n = (ss * ss) as u32;
    let mut out = vec![0u8; width * height * 3];
    for y in 0..height {
        for x in 0..width {
            for c in 0..3 {
                let mut sum = 0u32;
                for dy in 0..ss {
                    let row = (y * ss + dy) * big_w;
                    for dx in 0..ss {
                        sum += u32::from(big[(row + x * ss + dx) * 3 + c]);
                    }
                }
                out[(y * width + x) * 3 + c] = ((sum + n / 2) / n) as u8;
            }
        }
    }
    out
}

/// Stacks 8-bit RGB PNG images (as this crate renders them) top to bottom,
/// left-aligned on white, into one PNG.
///
/// # Errors
/// [`PngError::Decode`] for an image that is not 8-bit RGB; size limits as
/// for any figure.
pub fn stack(images: &[&[u8]]) -> Result<Vec<u8>, PngError> {
    let mut parts = Vec::new();
    for bytes in images {
        let decoder = png::Decoder::new(std::io::Cursor::new(*bytes));
        let mut reader = decoder.read_info().map_err(|e| PngError::Decode { source: Some(e) })?;
        let mut buf = vec![0u8; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).map_err(|e| PngError::Decode { source: Some(e) })?;
        if info.color_type != png::ColorType::Rgb || info.bit_depth != png::BitDepth::Eight {
            return Err(PngError::Decode { source: None });
        }
        buf.truncate(info.buffer_size());
        parts.push((info.width, info.height, buf));
    }
    let width = parts.iter().map(|p| p.0).max().unwrap_or(1);
    let height: u32 = parts.iter().map(|p| p.1).sum::<u32>().max(1);
    check_size(width, height, 1, 1)?;
    let mut out = vec![255u8; width as usize * height as usize * 3];
    let mut y0 = 0usize;
    for (w, h, buf) in &parts {
        for row in 0..*h as usize {
            let src = &buf[row * *w as usize * 3..(row + 1) * *w as usize * 3];
            let at = ((y0 + row) * width as usize) * 3;
            out[at..at + src.len()].copy_from_slice(src);
        }
        y0 += *h as usize;
    }
    encode_png(&out, width, height)
}

/// Encodes 8-bit RGB pixels as PNG.
fn encode_png(rgb: &[u8], width: u32, height: u32) -> Result<Vec<u8>, PngError> {
    let mut bytes = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut bytes, width, height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(|source| PngError::Encode { source })?;
        writer.write_image_data(rgb).map_err(|source| PngError::Encode { source })?;
        writer.finish().map_err(|source| PngError::Encode { source })?;
    }
    Ok(bytes)
}

fn draw_error<E: std::fmt::Display>(e: E) -> PngError {
    PngError::Draw { message: e.to_string() }
}

/// The drawing surface; coordinates are final-image pixels, y down.
pub(crate) struct Canvas<'a> {
    backend: BitMapBackend<'a>,
    fonts: &'static [FontRef<'static>; 2],
}

impl Canvas<'_> {
    fn font(&self, font: Font) -> &'static FontRef<'static> {
        match font {
            Font::Sans => &self.fonts[0],
            Font::Mono => &self.fonts[1],
        }
    }

    /// Advance width of `text` in `font` at `size` (in the pixels `size` is in).
    fn advance(&self, text: &str, font: Font, size: f64) -> f64 {
        let scaled = self.font(font).as_scaled(PxScale::from(size as f32));
        let mut width = 0.0f32;
        let mut prev = None;
        for ch in text.chars() {
            let id = scaled.glyph_id(ch);
            if let Some(p) = prev {
                width += scaled.kern(p, id);
            }
            prev = Some(id);
            width += scaled.h_advance(id);
        }
        f64::from(width)
    }

    fn sub(&self, p: [f64; 2]) -> (i32, i32) {
        let s = f64::from(SS);
        // Clamp far-off coordinates so the i32 conversion and the rasteriser stay sane.
        let lim = 4.0 * MAX_PX as f64;
        ((p[0].clamp(-lim, lim) * s).round() as i32, (p[1].clamp(-lim, lim) * s).round() as i32)
    }

    /// Fills a polygon (any simple polygon; vertices in pixels) with `colour` at
    /// opacity `alpha` in `[0, 1]`. Polygons with a non-finite vertex are skipped.
    pub fn fill_polygon_alpha(&mut self, points: &[[f64; 2]], colour: Rgb, alpha: f64) -> Result<(), PngError> {
        if points.len() < 3 || points.iter().flatten().any(|v| !v.is_finite()) {
            return Ok(());
        }
        let verts: Vec<(i32, i32)> = points.iter().map(|&p| self.sub(p)).collect();
        let style = RGBAColor(colour[0], colour[1], colour[2], alpha.clamp(0.0, 1.0));
        self.backend.fill_polygon(verts, &style).map_err(draw_error)
    }

    /// Fills an opaque polygon.
    pub fn fill_polygon(&mut self, points: &[[f64; 2]], colour: Rgb) -> Result<(), PngError> {
        self.fill_polygon_alpha(points, colour, 1.0)
    }

    /// Fills an axis-aligned rectangle given by two corners.
    pub fn fill_rect(&mut self, a: [f64; 2], b: [f64; 2], colour: Rgb) -> Result<(), PngError> {
        self.fill_polygon(&[a, [b[0], a[1]], b, [a[0], b[1]]], colour)
    }

    /// Outlines an axis-aligned rectangle with a stroke of `width` px centred on
    /// its edges.
    pub fn stroke_rect(&mut self, a: [f64; 2], b: [f64; 2], width: f64, colour: Rgb) -> Result<(), PngError> {
        let h = width / 2.0;
        let (x0, x1) = (a[0].min(b[0]), a[0].max(b[0]));
        let (y0, y1) = (a[1].min(b[1]), a[1].max(b[1]));
        self.fill_rect([x0 - h, y0 - h], [x1 + h, y0 + h], colour)?;
        self.fill_rect([x0 - h, y1 - h], [x1 + h, y1 + h], colour)?;
        self.fill_rect([x0 - h, y0 - h], [x0 + h, y1 + h], colour)?;
        self.fill_rect([x1 - h, y0 - h], [x1 + h, y1 + h], colour)
    }

    /// Fills a disc of radius `r` px at opacity `alpha`.
    pub fn fill_circle_alpha(&mut self, c: [f64; 2], r: f64, colour: Rgb, alpha: f64) -> Result<(), PngError> {
        if !(r.is_finite() && r > 0.0) {
            return Ok(());
        }
        let n = circle_segments(r);
        let pts: Vec<[f64; 2]> = (0..n)
            .map(|i| {
                let a = std::f64::consts::TAU * i as f64 / n as f64;
                [c[0] + r * a.cos(), c[1] + r * a.sin()]
            })
            .collect();
        self.fill_polygon_alpha(&pts, colour, alpha)
    }

    /// Fills an opaque disc of radius `r` px.
    pub fn fill_circle(&mut self, c: [f64; 2], r: f64, colour: Rgb) -> Result<(), PngError> {
        self.fill_circle_alpha(c, r, colour, 1.0)
    }

    /// Strokes a circle of radius `r` px with a ring `width` px wide.
    pub fn ring(&mut self, c: [f64; 2], r: f64, width: f64, colour: Rgb) -> Result<(), PngError> {
        if !(r.is_finite() && width.is_finite() && r > 0.0 && width > 0.0) {
            return Ok(());
        }
        let (ri, ro) = ((r - width / 2.0).max(0.0), r + width / 2.0);
        let n = circle_segments(ro);
        let at = |i: usize, rr: f64| {
            let a = std::f64::consts::TAU * i as f64 / n as f64;
            [c[0] + rr * a.cos(), c[1] + rr * a.sin()]
        };
        for i in 0..n {
            self.fill_polygon(&[at(i, ri), at(i, ro), at(i + 1, ro), at(i + 1, ri)], colour)?;
        }
        Ok(())
    }

    /// Strokes the segment `a`–`b` with butt ends, `width` px wide.
    pub fn segment(&mut self, a: [f64; 2], b: [f64; 2], width: f64, colour: Rgb) -> Result<(), PngError> {
        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
        let len = dx.hypot(dy);
        if !(len.is_finite() && len > 1e-9) {
            return Ok(());
        }
        let (nx, ny) = (-dy / len * width / 2.0, dx / len * width / 2.0);
        self.fill_polygon(
            &[[a[0] + nx, a[1] + ny], [b[0] + nx, b[1] + ny], [b[0] - nx, b[1] - ny], [a[0] - nx, a[1] - ny]],
            colour,
        )
    }

    /// Strokes a polyline with round joins and caps, `width` px wide.
    pub fn polyline(&mut self, points: &[[f64; 2]], width: f64, colour: Rgb) -> Result<(), PngError> {
        for w in points.windows(2) {
            self.segment(w[0], w[1], width, colour)?;
        }
        for &p in points {
            self.fill_circle(p, width / 2.0, colour)?;
        }
        Ok(())
    }

    /// Width of `text` in `font` at `size` px `[px]`.
    pub fn text_width(&self, text: &str, font: Font, size: f64) -> f64 {
        self.advance(text, font, size * f64::from(SS)) / f64::from(SS)
    }

    /// Draws one line of text with its baseline at `baseline` px, aligned to `x`.
    /// `bold` thickens the strokes by drawing the text twice, half a pixel apart.
    #[allow(clippy::too_many_arguments)]
    pub fn text(
        &mut self,
        text: &str,
        x: f64,
        baseline: f64,
        size: f64,
        font: Font,
        align: Align,
        colour: Rgb,
        bold: bool,
    ) -> Result<(), PngError> {
        if text.is_empty() || !(x.is_finite() && baseline.is_finite() && size > 0.0) {
            return Ok(());
        }
        let s = f64::from(SS);
        let size = size * s;
        let width = self.advance(text, font, size);
        let left = x * s
            - match align {
                Align::Left => 0.0,
                Align::Center => width / 2.0,
                Align::Right => width,
            };
        let passes: &[f64] = if bold { &[0.0, 0.9] } else { &[0.0] };
        for &dx in passes {
            self.glyphs(text, font, size, [left + dx, baseline * s], colour, |x, y| (x, y))?;
        }
        Ok(())
    }

    /// Draws text reading upwards, centred vertically on `center_y`, with its
    /// baseline on the vertical line `x = baseline_x` (glyphs extend to the left).
    pub fn text_up(
        &mut self,
        text: &str,
        baseline_x: f64,
        center_y: f64,
        size: f64,
        font: Font,
        colour: Rgb,
    ) -> Result<(), PngError> {
        if text.is_empty() || !(baseline_x.is_finite() && center_y.is_finite() && size > 0.0) {
            return Ok(());
        }
        let s = f64::from(SS);
        let size = size * s;
        let width = self.advance(text, font, size);
        let (bx, cy) = ((baseline_x * s).round() as i32, (center_y * s).round() as i32);
        // Lay out horizontally about the origin, then turn a quarter anticlockwise.
        self.glyphs(text, font, size, [-width / 2.0, 0.0], colour, |x, y| (bx + y, cy - x))
    }

    /// Rasterises `text` laid out from `origin` (left end of the baseline, in
    /// layout pixels) and blends each covered layout pixel at `map(x, y)`
    /// (backend pixels) with its coverage.
    fn glyphs(
        &mut self,
        text: &str,
        font: Font,
        size: f64,
        origin: [f64; 2],
        colour: Rgb,
        map: impl Fn(i32, i32) -> (i32, i32),
    ) -> Result<(), PngError> {
        let font = self.font(font);
        let scale = PxScale::from(size as f32);
        let scaled = font.as_scaled(scale);
        let rgb = RGBColor(colour[0], colour[1], colour[2]);
        let mut caret = origin[0] as f32;
        let mut prev = None;
        let mut pixels: Vec<((i32, i32), f32)> = Vec::new();
        for ch in text.chars() {
            let id = scaled.glyph_id(ch);
            if let Some(p) = prev {
                caret += scaled.kern(p, id);
            }
            prev = Some(id);
            let glyph = id.with_scale_and_position(scale, point(caret, origin[1] as f32));
            caret += scaled.h_advance(id);
            if let Some(outline) = font.outline_glyph(glyph) {
                let bounds = outline.px_bounds();
                let (x0, y0) = (bounds.min.x as i32, bounds.min.y as i32);
                outline.draw(|x, y, coverage| {
                    if coverage > 0.0 {
                        pixels.push((map(x0 + x as i32, y0 + y as i32), coverage));
                    }
                });
            }
        }
        for (p, coverage) in pixels {
            let colour = rgb.mix(f64::from(coverage.min(1.0))).to_backend_color();
            self.backend.draw_pixel(p, colour).map_err(draw_error)?;
        }
        Ok(())
    }

    /// Splits `text` into lines (at its newlines, then greedily at spaces) no
    /// wider than `max_width` px; a word wider than that is broken between
    /// characters. Lines that fit are kept as written; wrapped ones have their
    /// runs of spaces collapsed (a leading indent is kept).
    pub fn wrap(&self, text: &str, font: Font, size: f64, max_width: f64) -> Vec<String> {
        let width = |t: &str| self.text_width(t, font, size);
        let space = width(" ");
        let mut lines = Vec::new();
        for raw in text.lines() {
            if width(raw) <= max_width {
                // Keep the line as written, runs of spaces included.
                lines.push(raw.to_string());
                continue;
            }
            let indent: String = raw.chars().take_while(|c| *c == ' ').collect();
            // Words, with over-long ones cut into pieces that fit.
            let mut pieces: Vec<String> = Vec::new();
            for word in raw.split(' ').filter(|w| !w.is_empty()) {
                if width(word) <= max_width {
                    pieces.push(word.to_string());
                    continue;
                }
                let mut piece = String::new();
                let mut w = 0.0;
                for ch in word.chars() {
                    let cw = width(ch.encode_utf8(&mut [0; 4]));
                    if !piece.is_empty() && w + cw > max_width {
                        pieces.push(std::mem::take(&mut piece));
                        w = 0.0;
                    }
                    piece.push(ch);
                    w += cw;
                }
                pieces.push(piece);
            }
            let mut line = indent.clone();
            let mut line_w = width(&indent);
            let mut empty = true;
            for piece in pieces {
                let w = width(&piece);
                if !empty && line_w + space + w > max_width {
                    lines.push(std::mem::replace(&mut line, indent.clone()));
                    line_w = width(&indent);
                    empty = true;
                }
                if !empty {
                    line.push(' ');
                    line_w += space;
                }
                line.push_str(&piece);
                line_w += w;
                empty = false;
            }
            lines.push(line);
        }
        lines
    }
}

/// Polygon vertex count for a circle of radius `r` px.
fn circle_segments(r: f64) -> usize {
    ((std::f64::consts::TAU * r).ceil() as usize).clamp(12, 256)
}

/// An axis-aligned rectangle `[x0, y0]`–`[x1, y1]` (x0 ≤ x1, y0 ≤ y1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Rect {
    pub x0: f64,
    pub y0: f64,
    pub x1: f64,
    pub y1: f64,
}

impl Rect {
    /// The segment `a`–`b` clipped to the rectangle (Liang–Barsky), or `None`
    /// when it lies outside or has a non-finite end.
    pub fn clip_segment(&self, a: [f64; 2], b: [f64; 2]) -> Option<([f64; 2], [f64; 2])> {
        if a.iter().chain(&b).any(|v| !v.is_finite()) {
            return None;
        }
        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
        let (mut t0, mut t1) = (0.0f64, 1.0f64);
        for (p, q) in [(-dx, a[0] - self.x0), (dx, self.x1 - a[0]), (-dy, a[1] - self.y0), (dy, self.y1 - a[1])] {
            if p == 0.0 {
                if q < 0.0 {
                    return None;
                }
            } else {
                let r = q / p;
                if p < 0.0 {
                    t0 = t0.max(r);
                } else {
                    t1 = t1.min(r);
                }
            }
        }
        (t0 <= t1).then(|| ([a[0] + t0 * dx, a[1] + t0 * dy], [a[0] + t1 * dx, a[1] + t1 * dy]))
    }

    /// The polygon clipped to the rectangle (Sutherland–Hodgman); may be empty.
    pub fn clip_polygon(&self, poly: &[[f64; 2]]) -> Vec<[f64; 2]> {
        let mut out: Vec<[f64; 2]> = poly.to_vec();
        // Each edge: (axis, bound, keep when coordinate >= bound?).
        for (axis, bound, keep_ge) in [(0, self.x0, true), (0, self.x1, false), (1, self.y0, true), (1, self.y1, false)]
        {
            if out.is_empty() {
                break;
            }
            let inside = |p: &[f64; 2]| if keep_ge { p[axis] >= bound } else { p[axis] <= bound };
            let input = std::mem::take(&mut out);
            for i in 0..input.len() {
                let cur = input[i];
                let prev = input[(i + input.len() - 1) % input.len()];
                let (ci, pi) = (inside(&cur), inside(&prev));
                if ci != pi {
                    let t = (bound - prev[axis]) / (cur[axis] - prev[axis]);
                    out.push([prev[0] + t * (cur[0] - prev[0]), prev[1] + t * (cur[1] - prev[1])]);
                }
                if ci {
                    out.push(cur);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_breaks_at_spaces_and_inside_long_words() {
        let lines = with_measuring_canvas(|c| {
            let w = c.text_width("0123456789", Font::Mono, 10.0);
            (c.wrap("aaa bbb  ccc\nkeep  it", Font::Mono, 10.0, w), c.wrap(&"x".repeat(25), Font::Mono, 10.0, w))
        })
        .unwrap();
        assert_eq!(lines.0, ["aaa bbb", "ccc", "keep  it"]);
        assert_eq!(lines.1, ["x".repeat(10), "x".repeat(10), "x".repeat(5)]);
    }

    #[test]
    fn clip_segment_cases() {
        let r = Rect { x0: 0.0, y0: 0.0, x1: 10.0, y1: 10.0 };
        assert_eq!(r.clip_segment([-5.0, 5.0], [15.0, 5.0]), Some(([0.0, 5.0], [10.0, 5.0])));
        assert_eq!(r.clip_segment([-5.0, -5.0], [-1.0, 20.0]), None);
        assert_eq!(r.clip_segment([f64::NAN, 0.0], [1.0, 1.0]), None);
    }

    #[test]
    fn clip_polygon_cases() {
        let r = Rect { x0: 0.0, y0: 0.0, x1: 10.0, y1: 10.0 };
        let square = [[5.0, 5.0], [15.0, 5.0], [15.0, 15.0], [5.0, 15.0]];
        let c = r.clip_polygon(&square);
        assert_eq!(c.len(), 4);
        assert!(c.iter().all(|p| p[0] <= 10.0 && p[1] <= 10.0));
        assert!(r.clip_polygon(&[[20.0, 20.0], [30.0, 20.0], [30.0, 30.0]]).is_empty());
    }
}
