//! Axis scales and tick choice, shared by both figures.

/// A tick: its value (data units) and its label.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Tick {
    pub value: f64,
    pub label: String,
}

/// Major ticks (labelled, with a grid line) and minor grid positions.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Ticks {
    pub major: Vec<Tick>,
    pub minor: Vec<f64>,
}

/// A one-dimensional axis scale: a data interval mapped to `[0, 1]`, linearly or
/// by `log10`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Scale {
    /// Lower end, data units (`> 0` when `log`).
    pub lo: f64,
    /// Upper end, data units, `> lo`.
    pub hi: f64,
    /// Logarithmic.
    pub log: bool,
}

impl Scale {
    /// The scale that shows `values` with a small margin. Non-finite values, and
    /// non-positive ones on a log scale, are ignored; without any usable value
    /// the range is `[0, 1]` (linear) or `[1, 10]` (log).
    pub fn fit(values: impl IntoIterator<Item = f64>, log: bool) -> Scale {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values {
            if usable(v, log) {
                let v = if log { v.log10() } else { v };
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
        if lo > hi {
            return if log { Scale { lo: 1.0, hi: 10.0, log } } else { Scale { lo: 0.0, hi: 1.0, log } };
        }
        if hi - lo < 1e-9 * lo.abs().max(1e-300) || hi == lo {
            let half = if log { 0.5 } else { (lo.abs() * 0.1).max(0.5) };
            lo -= half;
            hi += half;
        }
        if !(hi - lo).is_finite() {
            // Values near ±f64::MAX: keep the span finite.
            lo = lo.max(-1e300);
            hi = hi.min(1e300);
        }
        let pad = 0.04 * (hi - lo);
        let (lo, hi) = (lo - pad, hi + pad);
        if log {
            // Keep the ends finite and ordered even for extreme magnitudes.
            let lo = 10f64.powf(lo.clamp(-300.0, 300.0));
            let hi = 10f64.powf(hi.clamp(-300.0, 300.0)).max(lo * 1.0001);
            Scale { lo, hi, log }
        } else {
            Scale { lo, hi, log }
        }
    }

    /// Position of `v` in `[0, 1]` (outside for values off the range), or `None`
    /// for a value the scale cannot show.
    pub fn unit(&self, v: f64) -> Option<f64> {
        if !usable(v, self.log) {
            return None;
        }
        let u = if self.log {
            (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        u.is_finite().then_some(u)
    }

    /// Ticks for an axis `length_px` long, about one labelled tick per
    /// `spacing_px`.
    pub fn ticks(&self, length_px: f64, spacing_px: f64) -> Ticks {
        let target = (length_px / spacing_px).clamp(2.0, 12.0);
        if !self.log {
            return linear_ticks(self.lo, self.hi, target);
        }
        let (a, b) = (self.lo.log10(), self.hi.log10());
        let span = b - a;
        if span < 0.9 {
            // Less than a decade: linear ticks in data units, placed on the log scale.
            let mut t = linear_ticks(self.lo, self.hi, target);
            t.major.retain(|tick| tick.value > 0.0);
            t.minor.clear();
            return t;
        }
        let every = (span / target).ceil().max(1.0) as i32;
        let mut ticks = Ticks::default();
        let (first, last) = (a.floor() as i32, b.ceil() as i32);
        let within = |v: f64| v >= self.lo * (1.0 - 1e-12) && v <= self.hi * (1.0 + 1e-12);
        for e in first..=last {
            let decade = 10f64.powi(e);
            if e.rem_euclid(every) == 0 && within(decade) {
                ticks.major.push(Tick { value: decade, label: log_label(1.0, e) });
            }
            if every == 1 {
                for m in 2..10 {
                    let v = f64::from(m) * decade;
                    if !within(v) {
                        continue;
                    }
                    if span < 2.2 && (m == 2 || m == 5) {
                        ticks.major.push(Tick { value: v, label: log_label(f64::from(m), e) });
                    } else {
                        ticks.minor.push(v);
                    }
                }
            }
        }
        ticks.major.sort_by(|p, q| p.value.partial_cmp(&q.value).unwrap_or(std::cmp::Ordering::Equal));
        ticks
    }
}

/// Whether a value can be placed on a scale.
fn usable(v: f64, log: bool) -> bool {
    v.is_finite() && (!log || v > 0.0)
}

/// The smallest of 1, 2, 5 × 10ᵏ that is at least `raw` (`raw > 0`).
pub(crate) fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let decade = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if m * decade >= raw * (1.0 - 1e-9) {
            return m * decade;
        }
    }
    10.0 * decade
}

/// Linear ticks at a nice step, about `target` of them over `[lo, hi]`.
fn linear_ticks(lo: f64, hi: f64, target: f64) -> Ticks {
    let mut ticks = Ticks::default();
    let step = nice_step((hi - lo) / target);
    let (first, last) = ((lo / step).ceil(), (hi / step).floor());
    if !(first.is_finite() && last.is_finite()) || last < first || last - first > 1000.0 {
        return ticks;
    }
    let (first, last) = (first as i64, last as i64);
    let decimals = (-(step.log10() + 1e-9).floor()).clamp(0.0, 20.0) as usize;
    let big = lo.abs().max(hi.abs()) >= 1e6;
    for k in first..=last {
        let value = k as f64 * step;
        // `k == 0` gives 0.0, never −0.0.
        let value = if k == 0 { 0.0 } else { value };
        let label = if big { format!("{value:e}") } else { format!("{value:.decimals$}") };
        ticks.major.push(Tick { value, label });
    }
    ticks
}

/// Label of `m × 10^e` on a log axis: plain decimals for moderate magnitudes,
/// `me±k` otherwise.
fn log_label(m: f64, e: i32) -> String {
    if (-4..=5).contains(&e) {
        let decimals = (-e).max(0) as usize;
        format!("{:.decimals$}", m * 10f64.powi(e))
    } else if m == 1.0 {
        format!("1e{e}")
    } else {
        format!("{m}e{e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_steps() {
        assert_eq!(nice_step(0.7), 1.0);
        assert_eq!(nice_step(1.0), 1.0);
        assert_eq!(nice_step(1.3), 2.0);
        assert_eq!(nice_step(3.0), 5.0);
        assert_eq!(nice_step(7.0), 10.0);
        assert!((nice_step(0.013) - 0.02).abs() < 1e-15);
    }

    #[test]
    fn linear_ticks_are_round_and_inside() {
        let s = Scale::fit([0.0, 50.0], false);
        let t = s.ticks(500.0, 80.0);
        let labels: Vec<_> = t.major.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["0", "10", "20", "30", "40", "50"]);
        let s = Scale { lo: 0.0, hi: 0.35, log: false };
        let labels: Vec<_> = s.ticks(400.0, 80.0).major.into_iter().map(|t| t.label).collect();
        assert_eq!(labels, ["0.0", "0.1", "0.2", "0.3"]);
    }

    #[test]
    fn log_ticks_are_decades() {
        let s = Scale::fit([1.0, 2000.0], true);
        let t = s.ticks(500.0, 60.0);
        let labels: Vec<_> = t.major.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["1", "10", "100", "1000"]);
        assert!(t.minor.contains(&20.0));
        let s = Scale::fit([1e-4, 1e8], true);
        let labels: Vec<_> = s.ticks(300.0, 60.0).major.into_iter().map(|t| t.label).collect();
        assert_eq!(labels, ["0.001", "1", "1000", "1e6"]);
    }

    #[test]
    fn extreme_values_give_finite_scales() {
        let s = Scale::fit([-f64::MAX, f64::MAX], false);
        assert!(s.lo.is_finite() && s.hi.is_finite() && s.lo < s.hi);
        assert!(!s.ticks(500.0, 80.0).major.is_empty());
        let s = Scale::fit([f64::MIN_POSITIVE, f64::MAX], true);
        assert!(s.lo > 0.0 && s.hi.is_finite());
        assert!(!s.ticks(500.0, 60.0).major.is_empty());
    }

    #[test]
    fn log_scale_ignores_non_positive_and_empty_is_valid() {
        let s = Scale::fit([0.0, -1.0, f64::NAN, 10.0, 100.0], true);
        assert!(s.lo > 0.0 && s.lo < 10.0 && s.hi > 100.0);
        assert_eq!(s.unit(0.0), None);
        assert_eq!(s.unit(f64::NAN), None);
        let e = Scale::fit([], true);
        assert_eq!((e.lo, e.hi), (1.0, 10.0));
        let single = Scale::fit([5.0], false);
        assert!(single.lo < 5.0 && single.hi > 5.0);
    }
}
