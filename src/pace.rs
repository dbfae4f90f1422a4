//! Walking pace: each walker's preferred speed, and how much time its walk
//! through a patch is given (extra periods).
//!
//! **Preferred speeds.** A boundary point with a velocity in its document
//! gives the speed of the walker crossing there; otherwise the speed is drawn
//! from the walking speeds of the real pedestrians of the shipped ETH/UCY
//! reference (docs/design.md "Realism"; between 0.47 and 2 m/s: standing
//! and running left out), scaled by `u_cft / 1.33` so that the comfort
//! speed of a document still sets its pace. (Weidmann 1993's free walking
//! speeds, 1.34 ± 0.26 m/s, are the other distribution offered: people walk
//! that fast alone in open space, slower in the crowds of the reference
//! sets.) The draw depends on the crossing time and the arc position
//! only (not on the side, the direction or the patch's seed), so that a
//! neighbour tile sharing the point — where it is `(L − s, t)` — draws the
//! same walker.
//!
//! **Time in the patch.** A walker matched from entry time `t₁` to exit
//! time `t₂` has `Δt + kπ` (`Δt` of seed paper §3.3, `k` extra periods).
//! People rarely hurry and readily dawdle or wait: `k` is the smallest
//! number of extra periods that brings the straight walk's speed down to
//! [`RUSH_FACTOR`] times the walker's preferred speed, and to
//! [`HURRY_SPEED`] at most (seed paper §3.3 adds periods to pairs "far above
//! comfort"; here "far" is a fifth).
//!
//! **Walking and standing.** A walker with time to spare does not crawl:
//! it walks at its *stride speed*, [`STRIDE_FACTOR`] times its preferred
//! speed (never above [`STRIDE_CAP`]), and stands still for the rest of
//! its time ([`stride_speed`]). The preferred speed is thus the walker's
//! pace through the tile, stops included, which is what matching and extra
//! periods aim at; real crowds cover ground faster than their mean speed
//! and stand: a fifth of the ETH/UCY samples are below 0.21 m/s.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

/// Default comfort walking speed u_cft `[m/s]` (seed paper §3.3, after Whittle 2003).
pub const DEFAULT_COMFORT_SPEED: f64 = 1.33;

/// Mean free walking speed of pedestrians `[m/s]` (Weidmann 1993).
pub const WEIDMANN_MEAN: f64 = 1.34;
/// Standard deviation of free walking speeds `[m/s]` (Weidmann 1993).
pub const WEIDMANN_SD: f64 = 0.26;

/// A walker hurries when its straight walk is faster than this many times
/// its preferred speed; extra periods are added until it does not.
pub const RUSH_FACTOR: f64 = 1.2;

/// Whatever its preferred speed, a walker hurries above this speed `[m/s]`
/// (at the default comfort speed; it scales with u_cft): the 95th
/// percentile of the real pedestrians' speeds (1.63 m/s, pooled ETH/UCY).
pub const HURRY_SPEED: f64 = 1.6;

/// Lateral acceleration `[m/s²]` that bounds a walker's turn rate at speed
/// `v`: `ω ≤ TURN_ACCELERATION / v`, so sharp turns happen only when slow.
/// People slow down in tight turns (Hicheur et al., *Velocity and curvature
/// in human locomotion along complex curved paths*, Experimental Brain
/// Research 162, 2005). The value is the 99th percentile of `ω·v` of the
/// pooled real pedestrians of the shipped ETH/UCY reference sampled every
/// 0.4 s (1.14 m/s², `data/pedestrians.json`); per 0.2 m/s speed bin from
/// 0.7 to 1.5 m/s it stays within 1.1–1.25 m/s² while the 99th percentile
/// of `ω` alone falls from 1.5 to 0.9 rad/s, so a bound on `ω·v` fits real
/// walkers better than one on `ω` (docs/design.md "Realism").
pub const TURN_ACCELERATION: f64 = 1.15;

/// Default `solver.wait_factor` of the project's solvers: a walker with
/// time to spare walks at this many times its preferred speed and stands
/// for the rest ([`stride_speed`]). Measured, not derived: on random patches
/// (docs/design.md "Realism") 1.3 brings about 20 % of the speed samples
/// to standing, as in the real crowds, and their Kolmogorov–Smirnov
/// distances to the ETH/UCY sets below those of a social-force model; 0.9
/// (walk slower, wait rarely) left 3 % standing.
pub const STRIDE_FACTOR: f64 = 1.3;

/// Fastest stride `[m/s]` (at the default comfort speed; it scales with
/// u_cft): the fastest free walking speed, Weidmann 1993's mean plus two
/// standard deviations (1.34 + 2 × 0.26), as [`SpeedDistribution::weidmann`]
/// truncates it.
pub const STRIDE_CAP: f64 = WEIDMANN_MEAN + 2.0 * WEIDMANN_SD;

/// The wait factor of walkers who keep moving: below 0.9 times its speed
/// a walker stops rather than slows down further. It bounds the wait
/// factor of a walker whose boundary velocity the document gives (that
/// velocity is its walking speed: lanes keep flowing), and is the bake's
/// second try when walkers standing still left collisions.
pub const CALM_FACTOR: f64 = 0.9;

/// Most extra periods a walk is given.
pub const MAX_EXTRA_PERIODS: usize = 12;

/// Walking speeds of real pedestrians kept for drawing: the pooled ETH/UCY
/// speeds between these bounds `[m/s]` (standing and running left out).
/// Draws start at the first tabled percentile at or above the lower bound
/// (the 32nd, 0.48 m/s). The bound is measured, not derived: from there
/// the bakes of random patches come nearer the pooled real speeds than
/// from 0.5 m/s (whose walks were a little fast for them) and stay nearer
/// each real set than a social-force model (docs/design.md "Realism");
/// lower bounds trade the one for the other.
pub const WALKING_RANGE: (f64, f64) = (0.47, 2.0);

/// A walking-speed distribution.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SpeedDistribution {
    /// A normal of this mean and standard deviation `[m/s]`, truncated to
    /// ±2 standard deviations (Weidmann 1993's free walking speeds: 1.34,
    /// 0.26).
    Normal {
        /// Mean `[m/s]`.
        mean: f64,
        /// Standard deviation `[m/s]`.
        sd: f64,
    },
    /// The walking speeds of the real pedestrians of the shipped reference
    /// (its pooled speeds within [`WALKING_RANGE`]), scaled by a factor.
    Reference {
        /// Scale of the speeds `[1]`.
        scale: f64,
    },
}

impl SpeedDistribution {
    /// Weidmann's distribution with its mean moved to `comfort_speed`
    /// `[m/s]` (the spread scales with it).
    pub fn weidmann(comfort_speed: f64) -> SpeedDistribution {
        SpeedDistribution::Normal { mean: comfort_speed, sd: WEIDMANN_SD * comfort_speed / WEIDMANN_MEAN }
    }

    /// Real pedestrians' walking speeds for a patch of comfort speed
    /// `comfort_speed` `[m/s]`: scaled by `comfort_speed / 1.33` (the seed
    /// paper's default u_cft walks as the real crowds do).
    pub fn reference(comfort_speed: f64) -> SpeedDistribution {
        SpeedDistribution::Reference { scale: comfort_speed / DEFAULT_COMFORT_SPEED }
    }

    /// A speed `[m/s]` drawn from the distribution for the walker keyed by
    /// `key` (equal keys, equal speeds).
    pub fn draw(&self, key: u64) -> f64 {
        let mut rng = ChaCha8Rng::seed_from_u64(key);
        match *self {
            SpeedDistribution::Normal { mean, sd } => {
                // Truncation by redrawing (a draw beyond 2σ is 1 in 22).
                let normal = Normal::new(mean, sd.max(0.0)).ok();
                let within = |x: f64| (x - mean).abs() <= 2.0 * sd;
                let draws = (0..64).map(|_| normal.map_or(mean, |n| n.sample(&mut rng)));
                draws.into_iter().find(|&x| within(x)).unwrap_or(mean)
            }
            SpeedDistribution::Reference { scale } => {
                let u: f64 = rand::RngExt::random(&mut rng);
                scale * crate::pedestrians::reference::Reference::shipped_ref().walking_speed(u, WALKING_RANGE)
            }
        }
    }
}

/// The key of the walker crossing a side at arc position `s` `[m]` and time
/// `t` `[s]` of a side of length `length`: the same from both tiles sharing
/// the point (the neighbour sees it at `L − s`).
pub fn walker_key(s: f64, t: f64, length: f64) -> u64 {
    let s = s.min(length - s);
    // Round off the last bits so that L − (L − s) rounding keeps the key.
    let q = |x: f64| (x * 1e6).round() as i64 as u64;
    q(t).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ q(s).rotate_left(29)
}

/// The speed `[m/s]` above which a walker of preferred speed `preferred`
/// hurries, in a patch of comfort speed `comfort_speed`: [`RUSH_FACTOR`]
/// times its preferred speed, and never more than [`HURRY_SPEED`] (scaled
/// with the comfort speed).
pub fn hurry_limit(preferred: f64, comfort_speed: f64) -> f64 {
    (RUSH_FACTOR * preferred).min(HURRY_SPEED * comfort_speed / DEFAULT_COMFORT_SPEED)
}

/// The speed `[m/s]` at which a walker of preferred speed `preferred`
/// walks when it has time to spare, in a patch of comfort speed
/// `comfort_speed`, for its stride `factor` (the document's wait factor):
/// `factor` times its preferred speed, but no faster than [`STRIDE_CAP`] (scaled
/// with the comfort speed) unless its preferred speed already is. A
/// walker whose walk is slower than this walks at this speed and stands
/// for the rest of its time. O(1).
pub fn stride_speed(preferred: f64, factor: f64, comfort_speed: f64) -> f64 {
    let cap = STRIDE_CAP * comfort_speed / DEFAULT_COMFORT_SPEED;
    (factor * preferred).min(cap.max(preferred))
}

/// The number of extra periods for a walk of `length` `[m]` with `base`
/// `[s]` of free time before any extra period, by period `period` `[s]`:
/// the smallest `k` from `k_min` on whose speed `length / (base + kπ)` is at
/// most `limit` `[m/s]` ([`hurry_limit`]), at most [`MAX_EXTRA_PERIODS`]
/// more. O(1).
pub fn extra_periods(length: f64, base: f64, period: f64, limit: f64, k_min: usize) -> usize {
    let free = |k: usize| base + k as f64 * period;
    (k_min..=k_min + MAX_EXTRA_PERIODS).find(|&k| length / free(k) <= limit).unwrap_or(k_min + MAX_EXTRA_PERIODS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_follow_the_distribution_and_repeat() {
        let d = SpeedDistribution::weidmann(1.34);
        let v: Vec<f64> = (0..4000u64).map(|k| d.draw(k * 7919)).collect();
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64).sqrt();
        assert!((mean - 1.34).abs() < 0.02, "{mean}");
        // Truncation at 2 sd keeps 88 % of the spread.
        assert!((sd - 0.26 * 0.88).abs() < 0.02, "{sd}");
        assert!(v.iter().all(|x| (0.82..=1.86).contains(x)));
        assert_eq!(d.draw(42), d.draw(42));
    }

    #[test]
    fn a_shared_point_is_the_same_walker_from_both_tiles() {
        let (l, s, t) = (16.0, 3.7, 8.25);
        assert_eq!(walker_key(s, t, l), walker_key(l - s, t, l));
        assert_ne!(walker_key(s, t, l), walker_key(s, t + 0.5, l));
    }

    #[test]
    fn stride_speeds_are_brisk_but_no_rush() {
        let cap = 1.34 + 2.0 * 0.26;
        // 1.3 × 1.0 m/s.
        assert!((stride_speed(1.0, 1.3, 1.33) - 1.3).abs() < 1e-12);
        // 1.5 × 1.4 = 2.1 is above the fastest free walk: 1.86.
        assert!((stride_speed(1.4, 1.5, 1.33) - cap).abs() < 1e-12);
        // A fast walker keeps its own speed.
        assert!((stride_speed(1.95, 1.3, 1.33) - 1.95).abs() < 1e-12);
        // Below 1 the factor slows walkers down (the wait factor's old meaning).
        assert!((stride_speed(1.0, 0.9, 1.33) - 0.9).abs() < 1e-12);
        // The cap scales with the comfort speed.
        assert!((stride_speed(0.8, 1.3, 0.665) - cap / 2.0).abs() < 1e-12);
    }

    #[test]
    fn extra_periods_stop_the_rush() {
        let limit = hurry_limit(1.3, 1.33);
        assert!((limit - 1.56).abs() < 1e-12);
        // 16 m with 9 s: 1.78 m/s, a rush for a 1.3 m/s walker; 19 s: 0.84.
        assert_eq!(extra_periods(16.0, 9.0, 10.0, limit, 0), 1);
        // 12 s: 1.33 m/s is within 1.2 × 1.3.
        assert_eq!(extra_periods(16.0, 12.0, 10.0, limit, 0), 0);
        assert_eq!(extra_periods(16.0, 0.5, 10.0, limit, 1), 1);
        // A fast walker still does not run: 1.9 m/s is above 1.6.
        assert_eq!(extra_periods(16.0, 8.4, 10.0, hurry_limit(1.9, 1.33), 0), 1);
    }
}
