//! Quality figures of a synthesised patch, measured on the animation as
//! played (the traces): foot skate, footstep timing and landing errors, root
//! deviation from the path, step lengths and cadence, joint speeds, feet of
//! different agents planted on each other.

use super::sampling::Trace;
use crate::character::Character;
use crate::figures::AnimationMetrics;
use crate::footsteps::{landing_of, path_position};
use crate::stats::{Quantile, mean, quantile};
use crowdpatch_runtime::format::{AgentAnimation, BakedAgent};

fn percentile(v: &mut [f64], q: f64) -> f64 {
    quantile(v, q, Quantile::Nearest).unwrap_or(0.0)
}

/// The quality figures of a synthesised patch.
pub fn metrics(
    character: &Character,
    baked: &[BakedAgent],
    anims: &[AgentAnimation],
    traces: &[Trace],
    period: f64,
) -> AnimationMetrics {
    let mut skate = Vec::new();
    let mut timing = Vec::new();
    let mut landing = Vec::new();
    let mut deviation = Vec::new();
    let mut lengths = Vec::new();
    let mut cadences = Vec::new();
    let mut joint_speed: f64 = 0.0;
    let mut count = 0usize;
    for ((b, anim), tr) in baked.iter().zip(anims).zip(traces) {
        let f = &anim.footsteps;
        count += f.len();
        // Planted intervals: a foot from its plant to its lift-off.
        for fs in f {
            let k = fs.foot.index();
            // The samples i whose interval [t_{i−1}, t_i] lies within the
            // plant (the trace's times do not decrease).
            let from = tr.times.partition_point(|&t| t < fs.t - 1e-9) + 1;
            let to = tr.times.partition_point(|&t| t <= fs.lift + 1e-9);
            for i in from.max(1)..to {
                let (ta, tb) = (tr.times[i - 1], tr.times[i]);
                if tb - ta > 1e-9 && ta >= fs.t - 1e-9 && tb <= fs.lift + 1e-9 {
                    let (a, c) = (tr.feet[i - 1][k], tr.feet[i][k]);
                    skate.push((c[0] - a[0]).hypot(c[1] - a[1]) / (tb - ta));
                }
            }
            // Landing: where the synthesised foot is at its plant time.
            if let Some(i) = tr.times.iter().position(|&t| t >= fs.t - 1e-9) {
                let p = tr.feet[i][k];
                landing.push((p[0] - fs.position[0]).hypot(p[1] - fs.position[1]));
                // Timing: the first sample from which the foot stops moving.
                let lo = tr.times.partition_point(|&t| t < fs.t - 0.3);
                let still = (lo + 1..tr.times.len()).find(|&j| {
                    let dt = tr.times[j] - tr.times[j - 1];
                    let a = tr.feet[j - 1][k];
                    let c = tr.feet[j][k];
                    dt > 1e-9 && (c[0] - a[0]).hypot(c[1] - a[1]) / dt < 0.05 && (c[2] - a[2]).abs() / dt < 0.05
                });
                if let Some(j) = still
                    && tr.times[j - 1] < fs.t + 0.3
                    && fs.t > tr.times[0] + 0.3
                {
                    timing.push((tr.times[j - 1] - fs.t).abs());
                }
            }
        }
        for w in f.windows(2) {
            let q = landing_of(&w[0], &w[1]);
            lengths.push(q[0]);
            cadences.push(1.0 / (w[1].t - w[0].t));
        }
        for (i, &t) in tr.times.iter().enumerate() {
            if let Some(p) = path_position(b, t) {
                deviation.push((tr.root[i][0] - p[0]).hypot(tr.root[i][1] - p[1]));
            }
            if i > 0 {
                let dt = tr.times[i] - tr.times[i - 1];
                if dt > 1e-9 {
                    for (a, c) in tr.joints[i - 1].iter().zip(&tr.joints[i]) {
                        joint_speed = joint_speed.max((c - a).norm() / dt);
                    }
                }
            }
        }
    }
    let max = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    let stats = |v: &mut Vec<f64>| [mean(v), percentile(v, 0.05), percentile(v, 0.95)];
    AnimationMetrics {
        character: character.name.clone(),
        footsteps: count,
        foot_skate: mean(&skate),
        foot_skate_max: max(&skate),
        timing_error_mean: mean(&timing),
        timing_error_max: max(&timing),
        landing_error_mean: mean(&landing),
        root_deviation_mean: mean(&deviation),
        root_deviation_p95: percentile(&mut deviation.clone(), 0.95),
        root_deviation_max: max(&deviation),
        step_length: stats(&mut lengths),
        cadence: stats(&mut cadences),
        foot_overlaps: foot_overlaps(anims, period),
        max_joint_speed: joint_speed,
        ..AnimationMetrics::default()
    }
}

/// Pairs of planted feet of different agents (any instances) that overlap:
/// planted at the same play time less than a foot length apart.
fn foot_overlaps(anims: &[AgentAnimation], period: f64) -> usize {
    const FOOT: f64 = 0.25;
    let mut n = 0;
    for (i, a) in anims.iter().enumerate() {
        for b in &anims[i + 1..] {
            for fa in &a.footsteps {
                for fb in &b.footsteps {
                    if (fa.position[0] - fb.position[0]).hypot(fa.position[1] - fb.position[1]) >= FOOT {
                        continue;
                    }
                    // Overlap in play time, for some whole shift of periods.
                    let k_lo = ((fa.t - fb.lift) / period).floor() as i64;
                    let k_hi = ((fa.lift - fb.t) / period).ceil() as i64;
                    if (k_lo..=k_hi).any(|k| {
                        let s = k as f64 * period;
                        fa.t < fb.lift + s && fb.t + s < fa.lift
                    }) {
                        n += 1;
                    }
                }
            }
        }
    }
    n
}
