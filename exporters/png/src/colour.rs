//! The cyclic colour map of time in the period.

/// Lightness of the map in OKLab `[0–1]`: dark enough to read on white.
const LIGHTNESS: f64 = 0.62;
/// Chroma of the map in OKLab where sRGB allows it; hues whose gamut is
/// narrower at this lightness get [`GAMUT_SHARE`] of their largest chroma.
const CHROMA: f64 = 0.15;
/// Share of a hue's largest in-gamut chroma used when [`CHROMA`] is out of gamut.
const GAMUT_SHARE: f64 = 0.92;
/// Hue `[rad]` at phase 0 (a blue-violet), so the map starts and ends in blue.
const HUE0: f64 = 4.6;

/// Colour (sRGB, 8 bits per channel) of time `t` `[s]` in a period of `period`
/// `[s]`: the hue wheel of OKLab at constant lightness, walked once per period
/// (blue → magenta → red → olive → green → cyan → blue), with the chroma
/// reduced smoothly where sRGB cannot show it.
///
/// Only `t mod period` matters, so the map is cyclic — `time_colour(0, π)`
/// equals `time_colour(π, π)` exactly and the colour is continuous across the
/// wrap — and unwrapped times can be passed as they are. Constant lightness keeps
/// every time equally visible on a white background.
///
/// Returns mid grey when `t` or `period` is not finite or `period ≤ 0`.
///
/// # Example
/// ```
/// use crowdpatch_png::time_colour;
/// assert_eq!(time_colour(0.0, 10.0), time_colour(10.0, 10.0));
/// assert_eq!(time_colour(2.5, 10.0), time_colour(-7.5, 10.0));
/// assert_ne!(time_colour(0.0, 10.0), time_colour(5.0, 10.0));
/// ```
pub fn time_colour(t: f64, period: f64) -> [u8; 3] {
    if !(t.is_finite() && period.is_finite() && period > 0.0) {
        return [128, 128, 128];
    }
    let mut phase = (t / period).rem_euclid(1.0);
    if phase >= 1.0 {
        // rem_euclid can round up to the modulus for tiny negative inputs.
        phase = 0.0;
    }
    let hue = HUE0 + std::f64::consts::TAU * phase;
    let chroma = CHROMA.min(GAMUT_SHARE * max_chroma(LIGHTNESS, hue));
    let [r, g, b] = oklch_to_linear(LIGHTNESS, chroma, hue);
    [encode(r), encode(g), encode(b)]
}

/// The largest chroma of the given lightness and hue inside the sRGB gamut,
/// by bisection (continuous in the hue, so the map stays continuous).
fn max_chroma(l: f64, hue: f64) -> f64 {
    let inside = |c: f64| oklch_to_linear(l, c, hue).iter().all(|v| (0.0..=1.0).contains(v));
    let (mut lo, mut hi) = (0.0, 0.4);
    for _ in 0..24 {
        let mid = 0.5 * (lo + hi);
        if inside(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// OKLCh (lightness, chroma, hue in radians) to linear sRGB.
fn oklch_to_linear(l: f64, c: f64, h: f64) -> [f64; 3] {
    let (a, b) = (c * h.cos(), c * h.sin());
    // Björn Ottosson's OKLab → linear sRGB.
    let l_ = l + 0.396_337_777_4 * a + 0.215_803_757_3 * b;
    let m_ = l - 0.105_561_345_8 * a - 0.063_854_172_8 * b;
    let s_ = l - 0.089_484_177_5 * a - 1.291_485_548_0 * b;
    let (l3, m3, s3) = (l_ * l_ * l_, m_ * m_ * m_, s_ * s_ * s_);
    let r = 4.076_741_662_1 * l3 - 3.307_711_591_3 * m3 + 0.230_969_929_2 * s3;
    let g = -1.268_438_004_6 * l3 + 2.609_757_401_1 * m3 - 0.341_319_396_5 * s3;
    let bl = -0.004_196_086_3 * l3 - 0.703_418_614_7 * m3 + 1.707_614_701_0 * s3;
    [r, g, bl]
}

/// Linear channel to 8-bit sRGB.
fn encode(x: f64) -> u8 {
    let x = x.clamp(0.0, 1.0);
    let v = if x <= 0.003_130_8 { 12.92 * x } else { 1.055 * x.powf(1.0 / 2.4) - 0.055 };
    (v * 255.0).round().clamp(0.0, 255.0) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cyclic_and_continuous_across_the_wrap() {
        let p = 10.0;
        assert_eq!(time_colour(0.0, p), time_colour(p, p));
        assert_eq!(time_colour(3.0, p), time_colour(3.0 + 4.0 * p, p));
        let a = time_colour(p - 1e-9, p);
        let b = time_colour(0.0, p);
        for k in 0..3 {
            assert!((i32::from(a[k]) - i32::from(b[k])).abs() <= 1, "{a:?} vs {b:?}");
        }
    }

    #[test]
    fn smooth_steps_and_distinct_hues() {
        let p = 10.0;
        let n = 256;
        let mut max_step = 0;
        for i in 0..n {
            let a = time_colour(p * i as f64 / n as f64, p);
            let b = time_colour(p * (i + 1) as f64 / n as f64, p);
            let d = (0..3).map(|k| (i32::from(a[k]) - i32::from(b[k])).abs()).max().unwrap();
            max_step = max_step.max(d);
        }
        assert!(max_step <= 8, "colour jumps by {max_step} between neighbouring steps");
        assert_ne!(time_colour(0.0, p), time_colour(p / 2.0, p));
    }

    #[test]
    fn not_finite_is_grey() {
        assert_eq!(time_colour(f64::NAN, 10.0), [128; 3]);
        assert_eq!(time_colour(1.0, 0.0), [128; 3]);
        assert_eq!(time_colour(f64::INFINITY, 10.0), [128; 3]);
    }
}
