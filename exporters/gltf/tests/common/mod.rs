//! Hand-built baked patches shared by the crate's integration tests.
#![allow(dead_code)] // each test binary uses a part of it

use crowdpatch_runtime::FORMAT_VERSION;
use crowdpatch_runtime::format::{
    AgentKind, BakedAgent, BakedPatch, BakedPattern, BakedPoint, Obstacle, PatchHeader, PathKey, PointRef, Side, Sides,
};

pub const SIZE: f64 = 16.0;
pub const PERIOD: f64 = 10.0;

/// A path through `points` (time, position), each key heading along the
/// segment that leaves it (the last along the segment that reaches it), as
/// `atan2` gives it: in (−π, π].
pub fn path(points: &[(f64, [f64; 2])]) -> Vec<PathKey> {
    let n = points.len();
    (0..n)
        .map(|i| {
            let (a, b) = if i + 1 < n { (i, i + 1) } else { (i - 1, i) };
            let (p, q) = (points[a].1, points[b].1);
            PathKey { t: points[i].0, position: points[i].1, heading: (q[1] - p[1]).atan2(q[0] - p[0]) }
        })
        .collect()
}

/// An exogenous agent longer than two periods (t ∈ [2, 24.5], three
/// instances), whose heading crosses ±π.
pub fn long_walker() -> BakedAgent {
    BakedAgent {
        kind: AgentKind::Exogenous {
            entry: PointRef { side: Side::South, index: 0 },
            exit: PointRef { side: Side::West, index: 0 },
        },
        keys: path(&[
            (2.0, [4.0, 0.0]),
            (6.0, [4.0, 5.0]),
            (9.0, [6.0, 8.0]),
            (13.0, [10.0, 8.0]),
            (15.0, [12.0, 10.0]),
            (20.0, [8.0, 12.0]),
            (24.5, [0.0, 11.0]),
        ]),
    }
}

/// An exogenous agent crossing the patch within one window, from a window
/// start (t ∈ [0, 10]: one instance, always shown).
pub fn crosser() -> BakedAgent {
    BakedAgent {
        kind: AgentKind::Exogenous {
            entry: PointRef { side: Side::East, index: 0 },
            exit: PointRef { side: Side::West, index: 1 },
        },
        keys: path(&[(0.0, [16.0, 3.0]), (4.0, [10.0, 2.5]), (10.0, [0.0, 2.0])]),
    }
}

/// An endogenous loop round (8, 4) starting at t₀ = 3.5 (two instances).
pub fn looper() -> BakedAgent {
    let t0 = 3.5;
    let n = 12;
    let points: Vec<(f64, [f64; 2])> = (0..=n)
        .map(|i| {
            let u = i as f64 / n as f64;
            let a = std::f64::consts::TAU * u;
            // Exactly back at the start at t₀ + π.
            let a = if i == n { 0.0 } else { a };
            (t0 + PERIOD * u, [8.0 + 2.0 * a.cos(), 4.0 + 2.0 * a.sin()])
        })
        .collect();
    BakedAgent { kind: AgentKind::Endogenous { index: 0 }, keys: path(&points) }
}

fn point(s: f64, t: f64, velocity: [f64; 2]) -> BakedPoint {
    BakedPoint { s, t, velocity, gait: None, group: None }
}

/// Quality figures as a bake writes them (`extras.crowdpatch.metrics`),
/// with the keys a skeletal bake's `animation` holds for the exporter's
/// track figures.
pub fn metrics() -> serde_json::Value {
    serde_json::json!({
        "min_separation": 1.25,
        "obstacle_clearance": 0.5,
        "seam_clearance": null,
        "collisions": { "count": 0, "overlap_time": 0.0 },
        "boundary_error": { "position": 0.001, "time": 0.0 },
        "speed": { "mean": 1.25, "p5": 0.0, "p95": 0.0, "max": 2.5, "mean_comfort_deviation": 0.0 },
        "turn_rate": { "max": 0.75, "p95": 0.0 },
        "coverage": 0.25,
        "foot_skate": null,
        "animation": { "character": "hand-built", "footsteps": 0, "joint_keys": 7, "key_position_error": 0.5,
                       "key_rotation_error": 0.5, "key_contact_error": 0.5 },
    })
}

/// The L-shaped concave polygon (clockwise) and the circle of the tests.
pub fn obstacles() -> Vec<Obstacle> {
    vec![
        Obstacle::Polygon(vec![[11.0, 11.0], [11.0, 14.0], [12.0, 14.0], [12.0, 12.0], [14.0, 12.0], [14.0, 11.0]]),
        Obstacle::Circle { center: [8.0, 8.0], radius: 1.2 },
    ]
}

pub fn base(name: &str) -> BakedPatch {
    BakedPatch {
        format: FORMAT_VERSION,
        header: PatchHeader {
            name: name.to_owned(),
            size: SIZE,
            period: PERIOD,
            agent_radius: 0.3,
            comfort_speed: 1.33,
            seed: 42,
        },
        patterns: Sides::default(),
        obstacles: vec![],
        agents: vec![],
        skeletal: None,
    }
}

/// Two exogenous agents, one endogenous loop, a polygon and a circle.
pub fn full() -> BakedPatch {
    let mut p = base("full");
    p.patterns = Sides {
        south: BakedPattern { entries: vec![point(4.0, 2.0, [0.0, 1.25])], exits: vec![] },
        east: BakedPattern { entries: vec![point(3.0, 0.0, [-1.5, -0.125])], exits: vec![] },
        north: BakedPattern::default(),
        west: BakedPattern {
            entries: vec![],
            exits: vec![point(5.0, 4.5, [-1.75, -0.25]), point(14.0, 0.0, [-1.75, -0.125])],
        },
    };
    p.obstacles = obstacles();
    p.agents = vec![long_walker(), crosser(), looper()];
    p
}

/// Only the endogenous loop, no obstacle.
pub fn loop_only() -> BakedPatch {
    let mut p = base("loop only");
    p.agents = vec![looper()];
    p
}

/// Obstacles and ground, no agent.
pub fn no_agents() -> BakedPatch {
    let mut p = base("no agents");
    p.obstacles = obstacles();
    p
}

/// Nothing at all (and written without ground in the tests).
pub fn empty() -> BakedPatch {
    base("")
}
