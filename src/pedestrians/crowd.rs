//! Crowd statistics of sampled trajectories, with one set of definitions for
//! baked walkers and real pedestrians alike (docs/design.md "Realism").
//!
//! A *track* is one walker's positions at a fixed sampling interval Δ, with
//! no gap; a *frame* is every walker's position at one sample time. Then:
//!
//! - **speed**: `|p_{k+1} − p_k| / Δ` for every consecutive pair of a track;
//! - **turn rate**: `|wrap(h_{k+1} − h_k)| / Δ` for consecutive displacement
//!   headings `h` whose speeds are both at least [`MOVING_SPEED`] (a walker
//!   standing still has no heading);
//! - **detour**: a track's length over the straight distance between its
//!   first and last sample, for tracks that go [`MIN_DETOUR_DISTANCE`] or
//!   more;
//! - **nearest neighbour**: each walker's distance to the nearest other
//!   walker of its frame.
//!
//! Percentiles are nearest-rank ([`crate::stats::Quantile::InvertedCdf`]).

use crate::figures::{CrowdStats, Distribution};
use crate::stats::{Quantile, quantile};
use crowdpatch_runtime::format::wrap_angle;

/// Slowest speed `[m/s]` of a displacement that defines a heading for the
/// turn rate (below it a walker is standing or shuffling).
pub const MOVING_SPEED: f64 = 0.3;

/// Shortest straight distance `[m]` of a track whose detour is measured.
pub const MIN_DETOUR_DISTANCE: f64 = 2.0;

/// Number of quantiles (minus one) kept of a speed distribution for the
/// Kolmogorov–Smirnov distance: percentiles 0, 1, …, 100.
pub const QUANTILES: usize = 100;

/// The order statistics of `values` (sorted in place); all zero when empty.
/// O(n log n).
pub fn distribution(values: &mut [f64]) -> Distribution {
    let mut q = |p: f64| quantile(values, p, Quantile::InvertedCdf).unwrap_or(0.0);
    let (p5, p50, p95, max) = (q(0.05), q(0.5), q(0.95), q(1.0));
    Distribution { count: values.len(), p5, p50, p95, max }
}

/// Samples of the four statistics, before they are summarised.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CrowdSamples {
    /// Speeds `[m/s]`.
    pub speed: Vec<f64>,
    /// Turn rates `[rad/s]`.
    pub turn_rate: Vec<f64>,
    /// Lateral accelerations `[m/s²]`: each turn rate times the mean speed
    /// of its two intervals.
    pub lateral_acceleration: Vec<f64>,
    /// Detours `[1]`.
    pub detour: Vec<f64>,
    /// Nearest-neighbour distances `[m]`.
    pub nearest_neighbour: Vec<f64>,
}

impl CrowdSamples {
    /// Adds the speed, turn-rate and detour samples of one track sampled
    /// every `dt` `[s]`. O(track length).
    pub fn add_track(&mut self, track: &[[f64; 2]], dt: f64) {
        let mut prev: Option<(f64, f64)> = None; // (heading, speed)
        let mut length = 0.0;
        for w in track.windows(2) {
            let d = [w[1][0] - w[0][0], w[1][1] - w[0][1]];
            let step = d[0].hypot(d[1]);
            length += step;
            let speed = step / dt;
            self.speed.push(speed);
            let heading = (speed >= MOVING_SPEED).then(|| d[1].atan2(d[0]));
            if let (Some((a, u)), Some(b)) = (prev, heading) {
                let rate = wrap_angle(b - a).abs() / dt;
                self.turn_rate.push(rate);
                self.lateral_acceleration.push(rate * (u + speed) / 2.0);
            }
            prev = heading.map(|h| (h, speed));
        }
        if let (Some(first), Some(last)) = (track.first(), track.last()) {
            let straight = (last[0] - first[0]).hypot(last[1] - first[1]);
            if straight >= MIN_DETOUR_DISTANCE {
                self.detour.push(length / straight);
            }
        }
    }

    /// Adds the nearest-neighbour distances of one frame. O(n log n) on
    /// average: walkers are sorted by x and each scans outwards until the
    /// x gap exceeds its best distance.
    pub fn add_frame(&mut self, frame: &[[f64; 2]]) {
        if frame.len() < 2 {
            return;
        }
        let mut order: Vec<usize> = (0..frame.len()).collect();
        order.sort_by(|&a, &b| frame[a][0].total_cmp(&frame[b][0]).then(a.cmp(&b)));
        let mut nearest = vec![f64::INFINITY; frame.len()];
        for (k, &i) in order.iter().enumerate() {
            let p = frame[i];
            let mut best = f64::INFINITY;
            for &j in order[k + 1..].iter() {
                if frame[j][0] - p[0] >= best {
                    break;
                }
                best = best.min((frame[j][0] - p[0]).hypot(frame[j][1] - p[1]));
            }
            for &j in order[..k].iter().rev() {
                if p[0] - frame[j][0] >= best {
                    break;
                }
                best = best.min((frame[j][0] - p[0]).hypot(frame[j][1] - p[1]));
            }
            nearest[i] = best;
        }
        // In the frame's order.
        self.nearest_neighbour.extend(nearest);
    }

    /// Appends another set's samples to these.
    pub fn append(&mut self, other: &CrowdSamples) {
        self.speed.extend(&other.speed);
        self.turn_rate.extend(&other.turn_rate);
        self.lateral_acceleration.extend(&other.lateral_acceleration);
        self.detour.extend(&other.detour);
        self.nearest_neighbour.extend(&other.nearest_neighbour);
    }

    /// The statistics, at sampling interval `dt` `[s]`.
    pub fn summary(&self, dt: f64) -> CrowdStats {
        CrowdStats {
            sample_interval: dt,
            speed: distribution(&mut self.speed.clone()),
            turn_rate: distribution(&mut self.turn_rate.clone()),
            lateral_acceleration: distribution(&mut self.lateral_acceleration.clone()),
            detour: distribution(&mut self.detour.clone()),
            nearest_neighbour: distribution(&mut self.nearest_neighbour.clone()),
        }
    }
}

/// Percentiles 0, 1, …, 100 of `values` (nearest rank); empty when there
/// are none.
pub fn quantile_table(values: &[f64]) -> Vec<f64> {
    if values.is_empty() {
        return Vec::new();
    }
    let mut v = values.to_vec();
    (0..=QUANTILES)
        .map(|k| quantile(&mut v, k as f64 / QUANTILES as f64, Quantile::InvertedCdf).unwrap_or(0.0))
        .collect()
}

/// The reference CDF at `x` from its quantile table `q` (percentiles 0…100,
/// non-decreasing): linear between the tabled percentiles, 0 below the
/// smallest and 1 above the largest.
fn table_cdf(q: &[f64], x: f64) -> f64 {
    let n = q.len() - 1;
    if x < q[0] {
        return 0.0;
    }
    if x >= q[n] {
        return 1.0;
    }
    // The last tabled percentile at or below x, then linear to the next.
    let k = q.partition_point(|&v| v <= x) - 1;
    let (a, b) = (q[k], q[k + 1]);
    let frac = if b > a { (x - a) / (b - a) } else { 0.0 };
    (k as f64 + frac) / n as f64
}

/// Kolmogorov–Smirnov distance `sup |F(x) − G(x)|` between the empirical
/// distribution of `samples` and a reference given by its quantile table
/// (percentiles 0…100, as [`quantile_table`] makes). `None` when either is
/// empty. O(n log n + table).
///
/// # Example
/// ```
/// use crowdpatch::realism::crowd::{ks_distance, quantile_table};
/// let reference: Vec<f64> = (0..=1000).map(|k| k as f64 / 1000.0).collect();
/// let table = quantile_table(&reference);
/// // The same distribution is close; one shifted by half its range is far.
/// assert!(ks_distance(&reference, &table).unwrap() < 0.01);
/// let shifted: Vec<f64> = reference.iter().map(|x| x + 0.5).collect();
/// assert!((ks_distance(&shifted, &table).unwrap() - 0.5).abs() < 0.01);
/// ```
pub fn ks_distance(samples: &[f64], table: &[f64]) -> Option<f64> {
    if samples.is_empty() || table.len() < 2 {
        return None;
    }
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len() as f64;
    let mut d: f64 = 0.0;
    // At each sample: the empirical CDF jumps from i/n to (i+1)/n.
    for (i, &x) in s.iter().enumerate() {
        let g = table_cdf(table, x);
        d = d.max((g - i as f64 / n).abs()).max(((i + 1) as f64 / n - g).abs());
    }
    // At each tabled percentile, between jumps of the empirical CDF.
    for &x in table {
        let f = s.partition_point(|&v| v <= x) as f64 / n;
        d = d.max((f - table_cdf(table, x)).abs());
    }
    Some(d.min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_straight_walk_at_one_speed() {
        let mut c = CrowdSamples::default();
        let track: Vec<[f64; 2]> = (0..11).map(|k| [0.5 * k as f64, 1.0]).collect();
        c.add_track(&track, 0.4);
        let s = c.summary(0.4);
        assert_eq!(s.speed.count, 10);
        assert!((s.speed.p50 - 1.25).abs() < 1e-12 && (s.speed.max - 1.25).abs() < 1e-12);
        assert_eq!(s.turn_rate.max, 0.0);
        assert!((s.detour.p50 - 1.0).abs() < 1e-12);
    }

    #[test]
    fn a_right_angle_turn_and_a_stop() {
        let mut c = CrowdSamples::default();
        // East 2 m per sample, then north, then standing, then shuffling.
        let track = [[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [2.0, 2.0], [2.0, 2.1]];
        c.add_track(&track, 0.5);
        for (got, want) in c.speed.iter().zip([4.0, 4.0, 0.0, 0.2]) {
            assert!((got - want).abs() < 1e-12, "{:?}", c.speed);
        }
        // One turn of π/2 over 0.5 s; the standing and shuffling intervals
        // have no heading.
        assert_eq!(c.turn_rate.len(), 1);
        assert!((c.turn_rate[0] - std::f64::consts::PI).abs() < 1e-12);
        // 4.1 m walked for a straight distance of √(4 + 2.1²).
        assert!((c.detour[0] - 4.1 / (4.0f64 + 2.1 * 2.1).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn walking_a_circle_has_the_centripetal_acceleration() {
        // Radius 3 m at 1.2 m/s: ω = v/R = 0.4 rad/s, a = v²/R = 0.48 m/s².
        let (r, v, dt) = (3.0, 1.2, 0.04);
        let track: Vec<[f64; 2]> = (0..200)
            .map(|k| {
                let a = v / r * k as f64 * dt;
                [r * a.cos(), r * a.sin()]
            })
            .collect();
        let mut c = CrowdSamples::default();
        c.add_track(&track, dt);
        assert_eq!(c.lateral_acceleration.len(), c.turn_rate.len());
        // Chords are a hair shorter than arcs: within 0.1 %.
        for (&w, &a) in c.turn_rate.iter().zip(&c.lateral_acceleration) {
            assert!((w / (v / r) - 1.0).abs() < 1e-3, "{w}");
            assert!((a / (v * v / r) - 1.0).abs() < 1e-3, "{a}");
        }
    }

    #[test]
    fn nearest_neighbours_match_a_brute_force_search() {
        let mut x: u64 = 7;
        let mut rnd = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 11) as f64 / (1u64 << 53) as f64 * 20.0
        };
        let frame: Vec<[f64; 2]> = (0..300).map(|_| [rnd(), rnd()]).collect();
        let mut c = CrowdSamples::default();
        c.add_frame(&frame);
        for (i, p) in frame.iter().enumerate() {
            let brute = frame
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, q)| (q[0] - p[0]).hypot(q[1] - p[1]))
                .fold(f64::INFINITY, f64::min);
            assert_eq!(c.nearest_neighbour[i], brute, "walker {i}");
        }
    }

    #[test]
    fn ks_distance_against_an_independent_computation() {
        // Reference: uniform on [0, 2]; samples: uniform on [0, 1] → F = 2G at
        // x = 1 where G = 0.5, F = 1: KS = 0.5.
        let reference: Vec<f64> = (0..=2000).map(|k| k as f64 / 1000.0).collect();
        let table = quantile_table(&reference);
        let samples: Vec<f64> = (0..1000).map(|k| (k as f64 + 0.5) / 1000.0).collect();
        let d = ks_distance(&samples, &table).unwrap();
        assert!((d - 0.5).abs() < 0.002, "{d}");
        // Symmetry of a one-sided shift.
        let low: Vec<f64> = reference.iter().map(|x| x - 0.2).collect();
        let d2 = ks_distance(&low, &table).unwrap();
        assert!((d2 - 0.1).abs() < 0.002, "{d2}");
        assert_eq!(ks_distance(&[], &table), None);
    }
}
