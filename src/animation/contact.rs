//! Foot contact **as played**, measured on the geometry a player sees: the
//! soles' contact points (heel, ball and toe of each foot,
//! [`crate::character::contact::Soles`]) and the lowest skinned vertex,
//! sampled from the played animation ([`crate::animation::sampling::Trace`]).
//!
//! It does not ask the footstep planner which foot is planted: a point is
//! **in contact** while it stays within [`CONTACT_HEIGHT`] of its lowest
//! height over the walker's samples, for at least [`CONTACT_TIME`]; its
//! **stance drift** is the largest horizontal distance it moves from where
//! the contact began. A heel that skids while the foot yaws about its ball
//! counts, as does a whole foot that glides. Beside it, the
//! **contact-weighted foot skate** of Zhang, Starke, Komura and Saito
//! (*Mode-adaptive neural networks for quadruped motion control*, SIGGRAPH
//! 2018, §7.2): each point's horizontal speed weighted by
//! `clamp(2 − 2^(h / H), 0, 1)` at its height `h` above the floor,
//! `H =` [`SKATE_HEIGHT`], averaged over the weights.
//!
//! The same definition is implemented by `tools/threejs-check/check.mjs`
//! on the GLB as three.js plays it (the contact points are written into the
//! scene extras, `character.contact_points`).
//!
//! Cost: O(samples) per point.

use crate::stats::{Quantile, quantile};

/// A point is in contact while within this of its lowest height `[m]`.
pub const CONTACT_HEIGHT: f64 = 0.01;

/// Shortest contact `[s]`.
pub const CONTACT_TIME: f64 = 0.1;

/// Height scale `H` of the contact-weighted foot skate `[m]` (Zhang et al.
/// 2018 use 2.5 cm for the toes).
pub const SKATE_HEIGHT: f64 = 0.025;

/// Names of the six contact points, in the order of
/// [`crate::character::contact::Soles::points`].
pub const POINT_NAMES: [&str; 6] = ["left heel", "left ball", "left toe", "right heel", "right ball", "right toe"];

/// One contact of one point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Contact {
    /// The point (index into [`POINT_NAMES`]).
    pub point: usize,
    /// When the contact begins and ends `[s]`.
    pub t0: f64,
    /// End `[s]`.
    pub t1: f64,
    /// Largest horizontal distance from where it began `[m]`.
    pub drift: f64,
    /// When that distance is reached `[s]`.
    pub at: f64,
}

/// The contacts of the six points of one walker, from its samples: `times`
/// (increasing) and, per sample, the points' positions `[x, y, height]`
/// `[m]`. O(samples).
pub fn contacts(times: &[f64], points: &[[[f64; 3]; 6]]) -> Vec<Contact> {
    let mut out = Vec::new();
    for k in 0..6 {
        let low = points.iter().map(|p| p[k][2]).fold(f64::INFINITY, f64::min);
        if !low.is_finite() {
            continue;
        }
        let mut i = 0;
        while i < points.len() {
            if points[i][k][2] > low + CONTACT_HEIGHT {
                i += 1;
                continue;
            }
            let start = i;
            let (mut drift, mut at) = (0.0f64, times[i]);
            let p0 = points[i][k];
            while i < points.len() && points[i][k][2] <= low + CONTACT_HEIGHT {
                let d = (points[i][k][0] - p0[0]).hypot(points[i][k][1] - p0[1]);
                if d > drift {
                    (drift, at) = (d, times[i]);
                }
                i += 1;
            }
            let (t0, t1) = (times[start], times[i - 1]);
            if t1 - t0 >= CONTACT_TIME - 1e-9 {
                out.push(Contact { point: k, t0, t1, drift, at });
            }
        }
    }
    out
}

/// Contact-weighted foot skate of one walker: the sums `(Σ w·v·dt, Σ w·dt)`
/// over its samples and points (see the module documentation), to be added
/// over walkers; the skate is their ratio `[m/s]`. O(samples).
pub fn skate_sums(times: &[f64], points: &[[[f64; 3]; 6]]) -> (f64, f64) {
    let (mut num, mut den) = (0.0, 0.0);
    for i in 1..times.len() {
        let dt = times[i] - times[i - 1];
        if dt <= 1e-9 {
            continue;
        }
        for (a, b) in points[i - 1].iter().zip(&points[i]) {
            let h = (0.5 * (a[2] + b[2])).max(0.0);
            let w = (2.0 - (h / SKATE_HEIGHT).exp2()).clamp(0.0, 1.0);
            let v = (b[0] - a[0]).hypot(b[1] - a[1]) / dt;
            num += w * v * dt;
            den += w * dt;
        }
    }
    (num, den)
}

/// Figures of a set of contacts: drift at the 95th percentile and the share
/// over 2 cm.
pub fn drift_figures(contacts: &[Contact]) -> (f64, f64) {
    let mut d: Vec<f64> = contacts.iter().map(|c| c.drift).collect();
    let over = if d.is_empty() { 0.0 } else { d.iter().filter(|&&x| x > 0.02).count() as f64 / d.len() as f64 };
    (quantile(&mut d, 0.95, Quantile::Nearest).unwrap_or(0.0), over)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A heel that stays down while the foot yaws about its ball skids:
    /// the measure sees it; a foot that stays put does not drift.
    #[test]
    fn a_heel_skidding_on_the_floor_drifts_and_a_lifted_one_does_not() {
        let times: Vec<f64> = (0..=60).map(|i| i as f64 / 120.0).collect();
        let pts = |yaw_rate: f64, heel_lift: f64| -> Vec<[[f64; 3]; 6]> {
            times
                .iter()
                .map(|&t| {
                    let a = yaw_rate * t;
                    // The ball at the origin, the heel 0.15 m behind it.
                    let heel = [-0.15 * a.cos(), -0.15 * a.sin(), heel_lift * t];
                    let ball = [0.0, 0.0, 0.0];
                    let toe = [0.05 * a.cos(), 0.05 * a.sin(), 0.0];
                    // The other foot in the air, then down.
                    let up = if t < 0.2 { 0.1 } else { 0.0 };
                    [heel, ball, toe, [1.0, 0.0, up], [1.1, 0.0, up], [1.15, 0.0, up]]
                })
                .collect()
        };
        // 20° of yaw over 0.5 s with the heel down: the heel moves 5 cm.
        let c = contacts(&times, &pts(0.35 / 0.5, 0.0));
        let heel = c.iter().find(|c| c.point == 0).unwrap();
        assert!((heel.drift - 2.0 * 0.15 * (0.35f64 / 2.0).sin()).abs() < 1e-3, "{heel:?}");
        assert!(c.iter().find(|c| c.point == 1).unwrap().drift < 1e-12);
        // The other foot's contact starts when it comes down and lasts
        // 0.3 s.
        let right = c.iter().find(|c| c.point == 3).unwrap();
        assert!((right.t0 - 0.2).abs() < 0.01 && (right.t1 - 0.5).abs() < 1e-9);
        // The heel lifting 8 cm/s is in contact for 0.125 s only, and
        // drifts a quarter as far in it.
        let lifted = contacts(&times, &pts(0.35 / 0.5, 0.08));
        let heel = lifted.iter().find(|c| c.point == 0).unwrap();
        assert!(heel.t1 - heel.t0 <= 0.125 + 1e-9 && heel.drift < 0.015, "{heel:?}");
        let (p95, over) = drift_figures(&c);
        assert!(p95 > 0.04 && over > 0.0);
        // Skate: the still foot weighs in at 0 m/s, the skidding heel and
        // toe at their speeds.
        let (num, den) = skate_sums(&times, &pts(0.0, 0.0));
        assert!(num.abs() < 1e-12 && den > 0.0);
        let (num, den) = skate_sums(&times, &pts(0.7, 0.0));
        assert!(num / den > 0.01);
    }
}
