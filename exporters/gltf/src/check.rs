//! Input checks, run before anything is built: a patch that passes them can be
//! written without a panic and gives a file that parses back to the same
//! numbers.

use crowdpatch_runtime::format::{BakedPatch, Metrics, Obstacle, Sides};
use crowdpatch_runtime::{BakedPattern, FORMAT_VERSION};

use crate::{ExportError, GlbOptions, MAX_INSTANCES_PER_AGENT};

/// Path times may reach at most this many periods from 0, so that instance
/// indices and window starts `kπ` stay exact in `f64` and `i64`.
const MAX_PERIODS_FROM_ZERO: f64 = 1e9;

fn finite(path: impl FnOnce() -> String, value: f64) -> Result<(), ExportError> {
    if value.is_finite() { Ok(()) } else { Err(ExportError::NonFinite { path: path(), value }) }
}

fn positive(field: &'static str, value: f64) -> Result<(), ExportError> {
    if value.is_finite() && value > 0.0 { Ok(()) } else { Err(ExportError::InvalidParameter { field, value }) }
}

/// Checks the options against their documented limits.
pub(crate) fn options(options: &GlbOptions) -> Result<(), ExportError> {
    let positive_length = |option: &'static str, value: f64| {
        if value.is_finite() && value > 0.0 && value <= 1e4 {
            Ok(())
        } else {
            Err(ExportError::InvalidOption { option, value, expected: "a height in metres, finite, > 0 and ≤ 10000" })
        }
    };
    positive_length("obstacle_height", options.obstacle_height)?;
    positive_length("agent_height", options.agent_height)?;
    if !(GlbOptions::MIN_CIRCLE_SEGMENTS..=GlbOptions::MAX_CIRCLE_SEGMENTS).contains(&options.circle_segments) {
        return Err(ExportError::InvalidOption {
            option: "circle_segments",
            value: f64::from(options.circle_segments),
            expected: "an integer in [24, 4096]",
        });
    }
    Ok(())
}

/// Checks everything of the patch the exporter relies on, in file order.
pub(crate) fn patch(patch: &BakedPatch) -> Result<(), ExportError> {
    if patch.format != FORMAT_VERSION {
        return Err(ExportError::UnsupportedFormat { found: patch.format, expected: FORMAT_VERSION });
    }
    positive("size", patch.size)?;
    positive("period", patch.period)?;
    positive("agent_radius", patch.agent_radius)?;
    positive("comfort_speed", patch.comfort_speed)?;
    patterns(&patch.patterns)?;
    for (i, obstacle) in patch.obstacles.iter().enumerate() {
        self::obstacle(i, obstacle)?;
    }
    for (i, agent) in patch.agents.iter().enumerate() {
        let keys = &agent.keys;
        if keys.len() < 2 {
            return Err(ExportError::TooFewKeys { agent: i, count: keys.len() });
        }
        for (j, key) in keys.iter().enumerate() {
            finite(|| format!("agents[{i}].keys[{j}].t"), key.t)?;
            for (c, &v) in key.position.iter().enumerate() {
                finite(|| format!("agents[{i}].keys[{j}].position[{c}]"), v)?;
            }
            finite(|| format!("agents[{i}].keys[{j}].heading"), key.heading)?;
            if j > 0 && key.t <= keys[j - 1].t {
                return Err(ExportError::TimeNotIncreasing { agent: i, key: j, previous: keys[j - 1].t, t: key.t });
            }
        }
        let (start, end) = (keys[0].t, keys[keys.len() - 1].t);
        let (a, b) = (start / patch.period, end / patch.period);
        // An upper bound of the instance count, computed without integer
        // casts, so that `BakedAgent::instances` cannot overflow.
        let too_far = a.abs() > MAX_PERIODS_FROM_ZERO || b.abs() > MAX_PERIODS_FROM_ZERO;
        if too_far || b.ceil() - a.floor() > MAX_INSTANCES_PER_AGENT as f64 {
            return Err(ExportError::PathTooLong {
                agent: i,
                start,
                end,
                period: patch.period,
                max: MAX_INSTANCES_PER_AGENT,
            });
        }
    }
    metrics(&patch.metrics)
}

fn patterns(patterns: &Sides<BakedPattern>) -> Result<(), ExportError> {
    for (side, pattern) in patterns.iter() {
        for (list, points) in [("entries", &pattern.entries), ("exits", &pattern.exits)] {
            for (i, p) in points.iter().enumerate() {
                let path = |field: &str| format!("patterns.{side}.{list}[{i}].{field}");
                finite(|| path("s"), p.s)?;
                finite(|| path("t"), p.t)?;
                finite(|| path("velocity[0]"), p.velocity[0])?;
                finite(|| path("velocity[1]"), p.velocity[1])?;
            }
        }
    }
    Ok(())
}

fn obstacle(index: usize, obstacle: &Obstacle) -> Result<(), ExportError> {
    let invalid = |reason: String| ExportError::InvalidObstacle { obstacle: index, reason };
    match obstacle {
        Obstacle::Circle { center, radius } => {
            if !(center[0].is_finite() && center[1].is_finite()) {
                return Err(invalid(format!("circle centre {center:?} is not finite")));
            }
            if !(radius.is_finite() && *radius > 0.0) {
                return Err(invalid(format!("circle radius {radius} m must be finite and > 0")));
            }
        }
        Obstacle::Polygon(vertices) => {
            if let Some((i, v)) = vertices.iter().enumerate().find(|(_, v)| !(v[0].is_finite() && v[1].is_finite())) {
                return Err(invalid(format!("polygon vertex {i} {v:?} is not finite")));
            }
            // The mesh code drops repeated vertices (and a closing copy of the
            // first); what remains must be a proper polygon.
            let clean = crate::geometry::clean_polygon(vertices);
            if clean.len() < 3 {
                return Err(invalid(format!("polygon has {} distinct vertices; it needs at least 3", clean.len())));
            }
            let area = crate::geometry::signed_area(&clean).abs();
            if area <= 1e-9 {
                return Err(invalid(format!(
                    "polygon has zero area ({area} m²); its vertices must not all lie on a line"
                )));
            }
        }
    }
    Ok(())
}

fn metrics(m: &Metrics) -> Result<(), ExportError> {
    let optional = [
        ("metrics.min_separation", m.min_separation),
        ("metrics.obstacle_clearance", m.obstacle_clearance),
        ("metrics.seam_clearance", m.seam_clearance),
        ("metrics.foot_skate", m.foot_skate),
    ];
    for (path, value) in optional {
        if let Some(v) = value {
            finite(|| path.to_owned(), v)?;
        }
    }
    let values = [
        ("metrics.collisions.overlap_time", m.collisions.overlap_time),
        ("metrics.boundary_error.position", m.boundary_error.position),
        ("metrics.boundary_error.time", m.boundary_error.time),
        ("metrics.speed.mean", m.speed.mean),
        ("metrics.speed.p5", m.speed.p5),
        ("metrics.speed.p95", m.speed.p95),
        ("metrics.speed.max", m.speed.max),
        ("metrics.speed.mean_comfort_deviation", m.speed.mean_comfort_deviation),
        ("metrics.turn_rate.max", m.turn_rate.max),
        ("metrics.turn_rate.p95", m.turn_rate.p95),
        ("metrics.coverage", m.coverage),
    ];
    for (path, value) in values {
        finite(|| path.to_owned(), value)?;
    }
    Ok(())
}
