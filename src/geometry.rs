//! Geometric kernels shared by the pipeline stages: closest approach of linear
//! motions (seed paper eqs. 8–10), distances to static obstacles, and small
//! vector helpers. All lengths `[m]`, times `[s]`, velocities `[m/s]`.

use crowdpatch_runtime::format::Obstacle;
use nalgebra::Vector2;

/// A 2D vector or point in the patch frame `[m]` or `[m/s]`.
pub type Vec2 = Vector2<f64>;

/// Builds a [`Vec2`] from an `[x, y]` array.
pub fn v2(a: [f64; 2]) -> Vec2 {
    Vec2::new(a[0], a[1])
}

/// Converts a [`Vec2`] to an `[x, y]` array.
pub fn arr(v: Vec2) -> [f64; 2] {
    [v.x, v.y]
}

/// Rotates `v` by `angle` `[rad]` counter-clockwise.
pub fn rotate(v: Vec2, angle: f64) -> Vec2 {
    let (s, c) = angle.sin_cos();
    Vec2::new(c * v.x - s * v.y, s * v.x + c * v.y)
}

/// Rotates `v` by `quarter_turns` quarter turns counter-clockwise, exactly
/// (no rounding: components are swapped and negated).
pub fn rotate_quarter(v: Vec2, quarter_turns: i32) -> Vec2 {
    match quarter_turns.rem_euclid(4) {
        0 => v,
        1 => Vec2::new(-v.y, v.x),
        2 => Vec2::new(-v.x, -v.y),
        _ => Vec2::new(v.y, -v.x),
    }
}

/// Closest approach of two points in linear motion over `[0, duration]`
/// (seed paper, eqs. 8–10): `d(t) = |w + Δv t|` with `w = p₁ − p₂` and
/// `Δv = v₁ − v₂`, minimised at `t_c = −(w·Δv)/|Δv|²` clamped to the interval.
///
/// Returns `(t, d)`: the time offset `[s]` of the closest approach in
/// `[0, duration]` and the distance `[m]` there. O(1).
///
/// # Example
/// ```
/// use crowdpatch::geometry::{closest_approach, Vec2};
/// // Two agents walking towards each other along x, 1 m apart in y.
/// let (t, d) = closest_approach(Vec2::new(0.0, 0.0), Vec2::new(1.0, 0.0),
///                               Vec2::new(4.0, 1.0), Vec2::new(-1.0, 0.0), 10.0);
/// assert!((t - 2.0).abs() < 1e-12 && (d - 1.0).abs() < 1e-12);
/// ```
pub fn closest_approach(p1: Vec2, v1: Vec2, p2: Vec2, v2: Vec2, duration: f64) -> (f64, f64) {
    let w = p1 - p2;
    let dv = v1 - v2;
    let dv2 = dv.norm_squared();
    let t = if dv2 > 0.0 { (-w.dot(&dv) / dv2).clamp(0.0, duration) } else { 0.0 };
    (t, (w + dv * t).norm())
}

/// The sub-interval of `[0, duration]` during which two points in linear
/// motion are closer than `threshold` `[m]`, if any (the roots of
/// `|w + Δv t|² = θ²`). Returns `(start, end)` offsets `[s]`.
pub fn closer_than(p1: Vec2, v1: Vec2, p2: Vec2, v2: Vec2, duration: f64, threshold: f64) -> Option<(f64, f64)> {
    let w = p1 - p2;
    let dv = v1 - v2;
    let a = dv.norm_squared();
    let b = 2.0 * w.dot(&dv);
    let c = w.norm_squared() - threshold * threshold;
    if a <= 1e-18 {
        return (c < 0.0).then_some((0.0, duration));
    }
    let disc = b * b - 4.0 * a * c;
    if disc <= 0.0 {
        return None;
    }
    let sq = disc.sqrt();
    let t0 = ((-b - sq) / (2.0 * a)).max(0.0);
    let t1 = ((-b + sq) / (2.0 * a)).min(duration);
    (t1 > t0).then_some((t0, t1))
}

/// Closest point to `p` on the segment `a`–`b`: returns `(u, q)` with
/// `q = a + u (b − a)`, `u ∈ [0, 1]`.
pub fn closest_on_segment(p: Vec2, a: Vec2, b: Vec2) -> (f64, Vec2) {
    let ab = b - a;
    let l2 = ab.norm_squared();
    let u = if l2 > 0.0 { ((p - a).dot(&ab) / l2).clamp(0.0, 1.0) } else { 0.0 };
    (u, a + ab * u)
}

/// Whether the closed segments `a`–`b` and `c`–`d` intersect.
pub fn segments_intersect(a: Vec2, b: Vec2, c: Vec2, d: Vec2) -> bool {
    fn orient(p: Vec2, q: Vec2, r: Vec2) -> f64 {
        (q - p).perp(&(r - p))
    }
    fn on_segment(p: Vec2, q: Vec2, r: Vec2) -> bool {
        r.x >= p.x.min(q.x) && r.x <= p.x.max(q.x) && r.y >= p.y.min(q.y) && r.y <= p.y.max(q.y)
    }
    let (o1, o2, o3, o4) = (orient(a, b, c), orient(a, b, d), orient(c, d, a), orient(c, d, b));
    if ((o1 > 0.0 && o2 < 0.0) || (o1 < 0.0 && o2 > 0.0)) && ((o3 > 0.0 && o4 < 0.0) || (o3 < 0.0 && o4 > 0.0)) {
        return true;
    }
    (o1 == 0.0 && on_segment(a, b, c))
        || (o2 == 0.0 && on_segment(a, b, d))
        || (o3 == 0.0 && on_segment(c, d, a))
        || (o4 == 0.0 && on_segment(c, d, b))
}

/// Whether `p` lies inside the simple polygon `poly` (even-odd rule).
pub fn point_in_polygon(p: Vec2, poly: &[[f64; 2]]) -> bool {
    let mut inside = false;
    let n = poly.len();
    for i in 0..n {
        let a = v2(poly[i]);
        let b = v2(poly[(i + 1) % n]);
        if (a.y > p.y) != (b.y > p.y) {
            let x = a.x + (p.y - a.y) / (b.y - a.y) * (b.x - a.x);
            if p.x < x {
                inside = !inside;
            }
        }
    }
    inside
}

/// Signed distance `[m]` from `p` to an obstacle's surface (negative inside)
/// and the unit direction that increases it fastest (away from the obstacle).
pub fn obstacle_signed_distance(p: Vec2, obstacle: &Obstacle) -> (f64, Vec2) {
    match obstacle {
        Obstacle::Circle { center, radius } => {
            let d = p - v2(*center);
            let n = d.norm();
            let dir = if n > 1e-12 { d / n } else { Vec2::new(1.0, 0.0) };
            (n - radius, dir)
        }
        Obstacle::Polygon(poly) => {
            let mut best = f64::INFINITY;
            let mut q_best = p;
            for i in 0..poly.len() {
                let (_, q) = closest_on_segment(p, v2(poly[i]), v2(poly[(i + 1) % poly.len()]));
                let d = (p - q).norm();
                if d < best {
                    best = d;
                    q_best = q;
                }
            }
            let inside = point_in_polygon(p, poly);
            let mut dir = if inside { q_best - p } else { p - q_best };
            if dir.norm() < 1e-12 {
                // On the boundary: push away from the polygon's centroid.
                let c = poly.iter().fold(Vec2::zeros(), |s, v| s + v2(*v)) / poly.len() as f64;
                dir = p - c;
            }
            let dir = if dir.norm() > 1e-12 { dir.normalize() } else { Vec2::new(1.0, 0.0) };
            (if inside { -best } else { best }, dir)
        }
    }
}

/// Smallest signed distance `[m]` from the segment `a`–`b` to an obstacle's
/// surface: returns `(u, d, dir)` with the parameter `u ∈ [0,1]` of the
/// segment's worst point, its signed distance (negative inside) and the unit
/// direction that moves that point away from the obstacle.
///
/// Exact for circles and for polygons the segment stays out of; a segment
/// that enters a polygon is sampled every 2 cm for its deepest point.
pub fn segment_obstacle_distance(a: Vec2, b: Vec2, obstacle: &Obstacle) -> (f64, f64, Vec2) {
    match obstacle {
        Obstacle::Circle { center, .. } => {
            let (u, q) = closest_on_segment(v2(*center), a, b);
            let (d, dir) = obstacle_signed_distance(q, obstacle);
            (u, d, dir)
        }
        Obstacle::Polygon(poly) => {
            let n = poly.len();
            let enters = point_in_polygon(a, poly)
                || point_in_polygon(b, poly)
                || (0..n).any(|i| segments_intersect(a, b, v2(poly[i]), v2(poly[(i + 1) % n])));
            if enters {
                let steps = (((b - a).norm() / 0.02).ceil() as usize).clamp(1, 4000);
                let mut best = (0.0, f64::INFINITY, Vec2::new(1.0, 0.0));
                for k in 0..=steps {
                    let u = k as f64 / steps as f64;
                    let (d, dir) = obstacle_signed_distance(a + (b - a) * u, obstacle);
                    if d < best.1 {
                        best = (u, d, dir);
                    }
                }
                return best;
            }
            // Outside: the closest pair lies on a polygon vertex or a segment end.
            let mut best = (0.0, f64::INFINITY, Vec2::new(1.0, 0.0));
            for (u, p) in [(0.0, a), (1.0, b)] {
                let (d, dir) = obstacle_signed_distance(p, obstacle);
                if d < best.1 {
                    best = (u, d, dir);
                }
            }
            for v in poly {
                let (u, q) = closest_on_segment(v2(*v), a, b);
                let d = (q - v2(*v)).norm();
                if d < best.1 {
                    let dir = if d > 1e-12 { (q - v2(*v)) / d } else { best.2 };
                    best = (u, d, dir);
                }
            }
            best
        }
    }
}

/// Signed area of a polygon `[m²]` (positive when counter-clockwise).
pub fn polygon_area(poly: &[[f64; 2]]) -> f64 {
    let n = poly.len();
    (0..n)
        .map(|i| {
            let (a, b) = (poly[i], poly[(i + 1) % n]);
            a[0] * b[1] - b[0] * a[1]
        })
        .sum::<f64>()
        / 2.0
}

/// Whether a polygon's edges cross each other (other than neighbours at their
/// shared vertex).
pub fn polygon_self_intersects(poly: &[[f64; 2]]) -> bool {
    let n = poly.len();
    for i in 0..n {
        for j in i + 1..n {
            if j == i + 1 || (i == 0 && j == n - 1) {
                continue;
            }
            if segments_intersect(v2(poly[i]), v2(poly[(i + 1) % n]), v2(poly[j]), v2(poly[(j + 1) % n])) {
                return true;
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute-force minimum of |w + Δv t| by dense sampling, to cross-check
    /// the closed form.
    fn brute(p1: Vec2, v1: Vec2, p2: Vec2, v2: Vec2, dur: f64) -> f64 {
        (0..=20000)
            .map(|k| {
                let t = dur * k as f64 / 20000.0;
                ((p1 + v1 * t) - (p2 + v2 * t)).norm()
            })
            .fold(f64::INFINITY, f64::min)
    }

    #[test]
    fn closest_approach_matches_sampling() {
        let cases = [
            (Vec2::new(0.0, 0.0), Vec2::new(1.0, 0.2), Vec2::new(5.0, 1.0), Vec2::new(-0.5, 0.0), 4.0),
            (Vec2::new(1.0, 1.0), Vec2::new(0.0, 0.0), Vec2::new(1.0, 1.0), Vec2::new(0.0, 0.0), 2.0),
            (Vec2::new(0.0, 0.0), Vec2::new(1.0, 0.0), Vec2::new(0.0, 3.0), Vec2::new(1.0, 0.0), 2.0),
            (Vec2::new(0.0, 0.0), Vec2::new(-1.0, 0.0), Vec2::new(2.0, 0.0), Vec2::new(1.0, 0.0), 3.0),
        ];
        for (p1, v1, p2, v2, dur) in cases {
            let (t, d) = closest_approach(p1, v1, p2, v2, dur);
            assert!((0.0..=dur).contains(&t));
            let expect = brute(p1, v1, p2, v2, dur);
            assert!((d - expect).abs() < 1e-6, "{d} vs {expect}");
            let at_t = ((p1 + v1 * t) - (p2 + v2 * t)).norm();
            assert!((at_t - d).abs() < 1e-12);
        }
    }

    #[test]
    fn closer_than_brackets_the_overlap() {
        let (a, b) = closer_than(
            Vec2::new(0.0, 0.0),
            Vec2::new(1.0, 0.0),
            Vec2::new(10.0, 0.0),
            Vec2::new(-1.0, 0.0),
            10.0,
            1.0,
        )
        .unwrap();
        // Gap 10 − 2t < 1 ⇔ t ∈ (4.5, 5.5).
        assert!((a - 4.5).abs() < 1e-12 && (b - 5.5).abs() < 1e-12);
        assert!(closer_than(Vec2::zeros(), Vec2::zeros(), Vec2::new(3.0, 0.0), Vec2::zeros(), 1.0, 1.0).is_none());
    }

    #[test]
    fn polygon_distances() {
        let square = Obstacle::Polygon(vec![[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]]);
        let (d, dir) = obstacle_signed_distance(Vec2::new(3.0, 1.0), &square);
        assert!((d - 1.0).abs() < 1e-12 && (dir - Vec2::new(1.0, 0.0)).norm() < 1e-12);
        let (d, dir) = obstacle_signed_distance(Vec2::new(1.5, 1.0), &square);
        assert!((d + 0.5).abs() < 1e-12 && (dir - Vec2::new(1.0, 0.0)).norm() < 1e-12);
        let (u, d, _) = segment_obstacle_distance(Vec2::new(-1.0, 3.0), Vec2::new(3.0, 3.0), &square);
        assert!((d - 1.0).abs() < 1e-12 && (0.25..=0.75).contains(&u));
        let (_, d, _) = segment_obstacle_distance(Vec2::new(-1.0, 1.0), Vec2::new(3.0, 1.0), &square);
        assert!((d + 1.0).abs() < 0.03, "{d}");
        assert!(!polygon_self_intersects(&[[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]]));
        assert!(polygon_self_intersects(&[[0.0, 0.0], [2.0, 2.0], [2.0, 0.0], [0.0, 2.0]]));
        assert!((polygon_area(&[[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]]) - 4.0).abs() < 1e-12);
    }

    #[test]
    fn quarter_rotations_are_exact() {
        let v = Vec2::new(0.1, -7.3);
        assert_eq!(rotate_quarter(rotate_quarter(v, 3), 1), v);
        assert!((rotate_quarter(v, 1) - rotate(v, std::f64::consts::FRAC_PI_2)).norm() < 1e-12);
    }
}
