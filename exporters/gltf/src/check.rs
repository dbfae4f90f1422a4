//! Input checks, run before anything is built: a patch that passes them can be
//! written without a panic, gives a valid file (every number finite in `f32`,
//! animation times strictly increasing) and parses back to the same numbers.

use crowdpatch_runtime::format::{BakedPatch, Obstacle, Sides};
use crowdpatch_runtime::{BakedPattern, FORMAT_VERSION};

use crate::error::ExportError;
use crate::options::{GlbOptions, KeyTolerance, MAX_COORDINATE, MAX_INSTANCES, MAX_INSTANCES_PER_AGENT};
use crate::skeletal::TrackStats;

/// Path times may reach at most this many periods from 0, so that instance
/// indices and window starts `kπ` stay exact in `f64` and `i64`.
const MAX_PERIODS_FROM_ZERO: f64 = 1e9;

/// Largest magnitude of a heading `[rad]` (baked headings are in (−π, π];
/// beyond this the angle itself is imprecise in `f64`).
const MAX_HEADING: f64 = 1e6;

/// Limits of the period `[s]`: `f32` key times need a period well inside
/// their range.
const PERIOD_RANGE: (f64, f64) = (1e-3, 1e6);

/// The errors the written joint keys show (measured at every sample as a
/// player interpolates them) within `tol`, to a relative 10⁻⁹ (the
/// measurement's rounding): a file past its stated bounds is never
/// written.
///
/// # Errors
/// [`ExportError::KeyBounds`] naming the first error past its bound.
pub(crate) fn key_errors(stats: &TrackStats, tol: &KeyTolerance) -> Result<(), ExportError> {
    let slack = 1.0 + 1e-9;
    for (what, value, limit) in [
        ("key_position_error [m]", stats.position_error, tol.position),
        ("key_rotation_error [rad]", stats.rotation_error, tol.rotation),
        ("key_contact_error [m]", stats.contact_error, tol.contact),
    ] {
        if value.is_nan() || value > limit * slack {
            return Err(ExportError::KeyBounds { what, value, limit });
        }
    }
    Ok(())
}

fn finite(path: impl FnOnce() -> String, value: f64) -> Result<(), ExportError> {
    if value.is_finite() { Ok(()) } else { Err(ExportError::NonFinite { path: path(), value }) }
}

/// A finite coordinate within ±[`MAX_COORDINATE`].
fn coordinate(path: impl Fn() -> String, value: f64) -> Result<(), ExportError> {
    finite(&path, value)?;
    if value.abs() <= MAX_COORDINATE {
        Ok(())
    } else {
        Err(ExportError::OutOfRange {
            path: path(),
            value,
            limit: MAX_COORDINATE,
            why: "glTF stores geometry as 32-bit floats; check the patch's coordinates (metres)",
        })
    }
}

fn parameter(
    field: &'static str,
    value: f64,
    (min, max): (f64, f64),
    expected: &'static str,
) -> Result<(), ExportError> {
    // Written so that NaN fails.
    if value > min && value <= max { Ok(()) } else { Err(ExportError::InvalidParameter { field, value, expected }) }
}

/// Checks the options against their documented limits.
pub(crate) fn options(options: &GlbOptions) -> Result<(), ExportError> {
    let height = |option: &'static str, value: f64| {
        if value > 0.0 && value <= 1e4 {
            Ok(())
        } else {
            Err(ExportError::InvalidOption { option, value, expected: "a height in metres, > 0 and ≤ 10000" })
        }
    };
    height("obstacle_height", options.obstacle_height)?;
    height("agent_height", options.agent_height)?;
    if let Some(t) = &options.key_tolerance {
        for (option, value) in [
            ("key_tolerance.position", t.position),
            ("key_tolerance.rotation", t.rotation),
            ("key_tolerance.contact", t.contact),
        ] {
            if !(value > 0.0 && value <= 1.0) {
                return Err(ExportError::InvalidOption { option, value, expected: "finite, > 0 and ≤ 1 (m or rad)" });
            }
        }
    }
    if !(GlbOptions::MIN_CIRCLE_SEGMENTS..=GlbOptions::MAX_CIRCLE_SEGMENTS).contains(&options.circle_segments) {
        return Err(ExportError::InvalidOption {
            option: "circle_segments",
            value: f64::from(options.circle_segments),
            expected: "an integer in [24, 4096]",
        });
    }
    Ok(())
}

/// Checks everything of the patch the exporter relies on, in file order;
/// returns the first problem.
pub(crate) fn patch(patch: &BakedPatch) -> Result<(), ExportError> {
    if patch.format != FORMAT_VERSION {
        return Err(ExportError::UnsupportedFormat { found: patch.format, expected: FORMAT_VERSION });
    }
    let metres = (0.0, MAX_COORDINATE);
    parameter("size", patch.header.size, metres, "finite, > 0 and ≤ 1e6 m")?;
    let (min, max) = PERIOD_RANGE;
    if !(patch.header.period >= min && patch.header.period <= max) {
        return Err(ExportError::InvalidParameter {
            field: "period",
            value: patch.header.period,
            expected: "finite, ≥ 0.001 s and ≤ 1e6 s",
        });
    }
    parameter("agent_radius", patch.header.agent_radius, metres, "finite, > 0 and ≤ 1e6 m")?;
    parameter("comfort_speed", patch.header.comfort_speed, (0.0, f64::MAX), "finite and > 0")?;
    patterns(&patch.patterns)?;
    for (i, obstacle) in patch.obstacles.iter().enumerate() {
        self::obstacle(i, obstacle)?;
    }
    let mut instances = 0usize;
    for (i, agent) in patch.agents.iter().enumerate() {
        let keys = &agent.keys;
        if keys.len() < 2 {
            return Err(ExportError::TooFewKeys { agent: i, count: keys.len() });
        }
        for (j, key) in keys.iter().enumerate() {
            finite(|| format!("agents[{i}].keys[{j}].t"), key.t)?;
            for (c, &v) in key.position.iter().enumerate() {
                coordinate(|| format!("agents[{i}].keys[{j}].position[{c}]"), v)?;
            }
            let heading = || format!("agents[{i}].keys[{j}].heading");
            finite(heading, key.heading)?;
            if key.heading.abs() > MAX_HEADING {
                return Err(ExportError::OutOfRange {
                    path: heading(),
                    value: key.heading,
                    limit: MAX_HEADING,
                    why: "a heading this large has lost its precision; headings are in (−π, π]",
                });
            }
            if j > 0 && key.t <= keys[j - 1].t {
                return Err(ExportError::TimeNotIncreasing { agent: i, key: j, previous: keys[j - 1].t, t: key.t });
            }
        }
        let (start, end) = (keys[0].t, keys[keys.len() - 1].t);
        let (a, b) = (start / patch.header.period, end / patch.header.period);
        // An upper bound of the instance count, computed without integer
        // casts, so that `BakedAgent::instances` cannot overflow.
        let too_far = a.abs() > MAX_PERIODS_FROM_ZERO || b.abs() > MAX_PERIODS_FROM_ZERO;
        let bound = b.ceil() - a.floor();
        if too_far || bound > MAX_INSTANCES_PER_AGENT as f64 {
            return Err(ExportError::PathTooLong {
                agent: i,
                start,
                end,
                period: patch.header.period,
                max: MAX_INSTANCES_PER_AGENT,
            });
        }
        instances += agent.instances(patch.header.period).count();
    }
    if instances > MAX_INSTANCES {
        return Err(ExportError::TooManyInstances { count: instances, max: MAX_INSTANCES });
    }
    Ok(())
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
            for (c, &v) in center.iter().enumerate() {
                coordinate(|| format!("obstacles[{index}].circle.center[{c}]"), v)?;
            }
            if !(*radius > 0.0 && *radius <= MAX_COORDINATE) {
                return Err(invalid(format!("circle radius {radius} m must be > 0 and ≤ 1e6 m")));
            }
        }
        Obstacle::Polygon(vertices) => {
            for (j, v) in vertices.iter().enumerate() {
                for (c, &x) in v.iter().enumerate() {
                    coordinate(|| format!("obstacles[{index}].polygon[{j}][{c}]"), x)?;
                }
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

#[cfg(test)]
mod tests {
    use super::key_errors;
    use crate::error::ExportError;
    use crate::options::KeyTolerance;
    use crate::skeletal::TrackStats;

    #[test]
    fn joint_keys_past_their_bounds_are_refused_by_name() {
        let tol = KeyTolerance::default();
        let within = TrackStats { keys: 10, position_error: tol.position, rotation_error: 0.0, contact_error: 1e-4 };
        assert!(key_errors(&within, &tol).is_ok());
        let slid = TrackStats { contact_error: 5e-4, ..within };
        match key_errors(&slid, &tol) {
            Err(e @ ExportError::KeyBounds { what: "key_contact_error [m]", .. }) => {
                assert!(e.to_string().contains("0.000500 > 0.000300"), "{e}");
            }
            other => panic!("{other:?}"),
        }
        let lost = TrackStats { rotation_error: f64::NAN, ..within };
        assert!(matches!(
            key_errors(&lost, &tol),
            Err(ExportError::KeyBounds { what: "key_rotation_error [rad]", .. })
        ));
    }
}
