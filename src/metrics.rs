//! Quality metrics of a set of agent paths (docs/design.md "Metrics"). The same
//! code serves tests, reports, the editor and the benchmark. The figures
//! themselves, plain data, are in the kernel [`crate::figures`] (re-exported
//! here).

use crate::model::{Obstacle, Patch};
use crate::path::Agent;
use crate::proximity::{Ghost, closest_periodic, closest_to_obstacle, overlap};
use crate::stats::weighted_quantile;

pub use crate::figures;
pub use crate::figures::{
    AnimationMetrics, BoundaryError, CollisionStats, CrowdStats, Distribution, Metrics, RealismMetrics, SpeedStats,
    TurnRateStats,
};

/// Computes every metric of the final paths. `ghosts` give the seam
/// clearance (pass none to skip it). Foot skate is left `None` (it needs
/// skeletal animation).
pub fn compute(patch: &Patch, agents: &[Agent], ghosts: &[Ghost]) -> Metrics {
    let (r, pi) = (patch.header.agent_radius, patch.header.period);
    let mut min_sep: Option<f64> = None;
    let mut collisions = CollisionStats::default();
    for i in 0..agents.len() {
        for j in i..agents.len() {
            let (a, b) = (&agents[i].path, &agents[j].path);
            if i == j && a.looped {
                continue; // one instance at any time
            }
            if let Some(ap) = closest_periodic(a, b, pi, (i == j).then_some(0)) {
                min_sep = Some(min_sep.map_or(ap.distance, |m: f64| m.min(ap.distance)));
                if ap.distance < 2.0 * r {
                    let (count, time) = overlap(a, b, pi, (i == j).then_some(0), 2.0 * r);
                    collisions.count += count;
                    collisions.overlap_time += time;
                }
            }
        }
    }
    let obstacle_clearance = min_opt(
        agents.iter().flat_map(|a| patch.obstacles.iter().map(move |o: &Obstacle| closest_to_obstacle(&a.path, o).2)),
    );
    let seam_clearance = min_opt(agents.iter().enumerate().flat_map(|(i, a)| {
        ghosts.iter().filter_map(move |g| {
            closest_periodic(&a.path, &g.path, pi, g.owner.filter(|o| o.0 == i).map(|o| o.1)).map(|ap| ap.distance)
        })
    }));
    Metrics {
        min_separation: min_sep,
        obstacle_clearance,
        seam_clearance,
        collisions,
        boundary_error: boundary_error(patch, agents),
        speed: speed_stats(agents, patch.header.comfort_speed),
        turn_rate: turn_rate_stats(agents),
        coverage: coverage(patch.header.size, agents),
        foot_skate: None,
        animation: None,
        realism: Some(crate::realism::compute(patch, agents)),
    }
}

fn min_opt(it: impl Iterator<Item = f64>) -> Option<f64> {
    it.fold(None, |m: Option<f64>, d| Some(m.map_or(d, |m| m.min(d))))
}

/// Largest distance of exogenous path ends from their boundary points `[m]`,
/// and largest time error modulo the period `[s]`.
pub fn boundary_error(patch: &Patch, agents: &[Agent]) -> BoundaryError {
    let pi = patch.header.period;
    let mut e = BoundaryError::default();
    let wrap_err = |dt: f64| {
        let k = (dt / pi).round();
        (dt - k * pi).abs()
    };
    for a in agents {
        let pts = &a.path.points;
        let (first, last) = (pts[0], pts[pts.len() - 1]);
        if let Some(entry) = a.entry {
            e.position = e.position.max((first.p - entry.position).norm());
            e.time = e.time.max(wrap_err(first.t - entry.t));
        }
        if let Some(exit) = a.exit {
            e.position = e.position.max((last.p - exit.position).norm());
            e.time = e.time.max(wrap_err(last.t - exit.t));
        }
        if a.path.looped {
            e.position = e.position.max((last.p - first.p).norm());
            e.time = e.time.max(wrap_err(last.t - first.t - pi).abs());
        }
    }
    e
}

/// Speed statistics over all segments of all paths, weighted by duration.
pub fn speed_stats(agents: &[Agent], comfort: f64) -> SpeedStats {
    let mut samples = Vec::new();
    for a in agents {
        for w in a.path.points.windows(2) {
            let dt = w[1].t - w[0].t;
            samples.push(((w[1].p - w[0].p).norm() / dt, dt));
        }
    }
    let total: f64 = samples.iter().map(|s| s.1).sum();
    if total <= 0.0 {
        return SpeedStats::default();
    }
    let mean = samples.iter().map(|s| s.0 * s.1).sum::<f64>() / total;
    let dev = samples.iter().map(|s| (s.0 - comfort).abs() * s.1).sum::<f64>() / total;
    let max = samples.iter().map(|s| s.0).fold(0.0, f64::max);
    SpeedStats {
        mean,
        p5: weighted_quantile(&mut samples, 0.05),
        p95: weighted_quantile(&mut samples, 0.95),
        max,
        mean_comfort_deviation: dev,
    }
}

/// Heading change rates `(rate [rad/s], weight [s])` at the control points
/// of all paths ([`crate::path::Path::turns`]).
pub fn turn_rates(agents: &[Agent]) -> Vec<(f64, f64)> {
    agents.iter().flat_map(|a| a.path.turns()).map(|t| (t.rate, t.span)).collect()
}

/// Turn-rate statistics: max and time-weighted p95 `[rad/s]`.
pub fn turn_rate_stats(agents: &[Agent]) -> TurnRateStats {
    let mut rates = turn_rates(agents);
    let max = rates.iter().map(|r| r.0).fold(0.0, f64::max);
    TurnRateStats { max, p95: weighted_quantile(&mut rates, 0.95) }
}

/// Fraction of the 1 m cells of `[0, L]²` that some agent centre passes
/// through, sampling every path every 5 cm.
pub fn coverage(size: f64, agents: &[Agent]) -> f64 {
    let n = size.ceil().max(1.0) as usize;
    let mut seen = vec![false; n * n];
    let mark = |seen: &mut Vec<bool>, x: f64, y: f64| {
        let i = (x.floor().max(0.0) as usize).min(n - 1);
        let j = (y.floor().max(0.0) as usize).min(n - 1);
        seen[i * n + j] = true;
    };
    for a in agents {
        for w in a.path.points.windows(2) {
            let d = (w[1].p - w[0].p).norm();
            let steps = (d / 0.05).ceil().max(1.0) as usize;
            for s in 0..=steps {
                let p = w[0].p + (w[1].p - w[0].p) * (s as f64 / steps as f64);
                mark(&mut seen, p.x, p.y);
            }
        }
    }
    // Cells only partly inside a non-integer patch count as whole cells.
    seen.iter().filter(|s| **s).count() as f64 / (n * n) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Vec2;
    use crate::path::{ControlPoint, Path};
    use crowdpatch_runtime::format::AgentKind;

    fn agent(points: &[(f64, f64, f64)]) -> Agent {
        Agent {
            kind: AgentKind::Endogenous { index: 0 },
            path: Path {
                points: points.iter().map(|&(x, y, t)| ControlPoint::free(Vec2::new(x, y), t)).collect(),
                looped: false,
            },
            entry: None,
            exit: None,
            preferred_speed: 1.0,
        }
    }

    fn patch() -> Patch {
        let (doc, _) = crate::model::PatchDocument::from_json(r#"{"format":1,"size":4,"period":10}"#).unwrap();
        doc.resolve(None, std::path::Path::new(".")).unwrap()
    }

    /// Stage 3 checks a walker's top speed through `Path::max_speed` (the
    /// layer below): the same bits as this module's `speed_stats` of that
    /// walker alone, on random paths and on a path that spans no time.
    #[test]
    fn a_paths_max_speed_is_speed_stats_max_bit_for_bit() {
        let mut u = crate::test_uniform(7);
        for n in 1..40 {
            let mut t = 0.0;
            let points: Vec<(f64, f64, f64)> = (0..n)
                .map(|_| {
                    t += 0.05 + u();
                    (8.0 * u(), 8.0 * u(), t)
                })
                .collect();
            let a = agent(&points);
            let max = speed_stats(std::slice::from_ref(&a), 1.33).max;
            assert_eq!(a.path.max_speed().to_bits(), max.to_bits(), "{n} points");
            assert!(n < 2 || max > 0.0);
        }
        let still = agent(&[(1.0, 1.0, 2.0), (1.0, 1.0, 2.0)]);
        assert_eq!(still.path.max_speed(), speed_stats(std::slice::from_ref(&still), 1.33).max);
    }

    #[test]
    fn hand_computed_speeds_and_turns() {
        // 2 s at 1 m/s east, then 2 s at 2 m/s north, then 1 s standing.
        let a = agent(&[(0.5, 0.5, 0.0), (2.5, 0.5, 2.0), (2.5, 3.5, 3.5), (2.5, 3.5, 4.5)]);
        let s = speed_stats(std::slice::from_ref(&a), 1.0);
        // Mean = (1·2 + 2·1.5 + 0·1) / 4.5.
        assert!((s.mean - 5.0 / 4.5).abs() < 1e-12);
        assert!((s.max - 2.0).abs() < 1e-12);
        // |u − 1|: 0 for 2 s, 1 for 1.5 s, 1 for 1 s.
        assert!((s.mean_comfort_deviation - 2.5 / 4.5).abs() < 1e-12);
        assert_eq!(s.p5, 0.0);
        assert_eq!(s.p95, 2.0);
        // One turn of π/2 between segment midpoints 1.0 s and 2.75 s.
        let t = turn_rate_stats(std::slice::from_ref(&a));
        assert!((t.max - std::f64::consts::FRAC_PI_2 / 1.75).abs() < 1e-12);
    }

    #[test]
    fn hand_computed_separation_collisions_and_coverage() {
        let p = patch();
        // Two agents 0.5 m apart walking side by side east for 2 s: one
        // colliding pair (0.5 < 2r = 0.6) for the whole 2 s.
        let a = agent(&[(0.5, 1.0, 1.0), (2.5, 1.0, 3.0)]);
        let b = agent(&[(0.5, 1.5, 1.0), (2.5, 1.5, 3.0)]);
        let m = compute(&p, &[a.clone(), b], &[]);
        assert!((m.min_separation.unwrap() - 0.5).abs() < 1e-12);
        assert_eq!(m.collisions.count, 1);
        assert!((m.collisions.overlap_time - 2.0).abs() < 1e-9);
        // Cells (0,1), (1,1), (2,1) of 16.
        assert!((m.coverage - 3.0 / 16.0).abs() < 1e-12);
        // A lone agent has no separation to speak of.
        assert_eq!(compute(&p, &[a], &[]).min_separation, None);
    }
}
