//! Convex hull and the distance from it, for the footstep planner's landing
//! hulls (course notes, BPK §5: a step lands within the reach of the step
//! library; docs/design.md "5a. Footsteps"): [`convex_hull`] (monotone
//! chain) and [`hull_distance`], the same bits as every edge's distance.

/// Convex hull (counter-clockwise) of points; fewer than three points when
/// they are collinear or too few.
pub(super) fn convex_hull(points: &[[f64; 2]]) -> Vec<[f64; 2]> {
    let mut p: Vec<[f64; 2]> = points.to_vec();
    p.sort_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])));
    p.dedup_by(|a, b| (a[0] - b[0]).hypot(a[1] - b[1]) < 1e-6);
    if p.len() < 3 {
        return p;
    }
    let cross = |o: [f64; 2], a: [f64; 2], b: [f64; 2]| (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
    let mut lower: Vec<[f64; 2]> = Vec::new();
    for &q in &p {
        while lower.len() >= 2 && cross(lower[lower.len() - 2], lower[lower.len() - 1], q) <= 1e-12 {
            lower.pop();
        }
        lower.push(q);
    }
    let mut upper: Vec<[f64; 2]> = Vec::new();
    for &q in p.iter().rev() {
        while upper.len() >= 2 && cross(upper[upper.len() - 2], upper[upper.len() - 1], q) <= 1e-12 {
            upper.pop();
        }
        upper.push(q);
    }
    lower.pop();
    upper.pop();
    lower.extend(upper);
    if lower.len() < 3 {
        // Collinear: the two extremes.
        return vec![p[0], p[p.len() - 1]];
    }
    lower
}

/// Distance of `q` from a hull (polygon, segment or point) and the nearest
/// point of it (0 and `q` inside).
pub(super) fn hull_distance(hull: &[[f64; 2]], q: [f64; 2]) -> (f64, [f64; 2]) {
    match hull.len() {
        0 => (0.0, q),
        1 => ((q[0] - hull[0][0]).hypot(q[1] - hull[0][1]), hull[0]),
        _ => {
            let n = hull.len();
            // The vertex after vertex i (no integer division).
            let after = |i: usize| if i + 1 == n { 0 } else { i + 1 };
            // Inside (left of every edge): no distance to compute.
            let left_of = |i: usize| {
                let (a, b) = (hull[i], hull[after(i)]);
                let cross = (b[0] - a[0]) * (q[1] - a[1]) - (b[1] - a[1]) * (q[0] - a[0]);
                cross >= 0.0 || cross.is_nan()
            };
            if n >= 3 && (0..n).all(left_of) {
                return (0.0, q);
            }
            let edges = if n == 2 { 1 } else { n };
            let nearest = |i: usize| {
                let (a, b) = (hull[i], hull[after(i)]);
                let (ux, uy) = (b[0] - a[0], b[1] - a[1]);
                let len2 = (ux * ux + uy * uy).max(1e-18);
                let s = (((q[0] - a[0]) * ux + (q[1] - a[1]) * uy) / len2).clamp(0.0, 1.0);
                [a[0] + s * ux, a[1] + s * uy]
            };
            // The first edge of least distance (`hypot`), its distance
            // taken only where the squared distance is within 10⁻⁹ of the
            // least one (the others are farther, whatever the rounding).
            let square = |c: [f64; 2]| (c[0] - q[0]) * (c[0] - q[0]) + (c[1] - q[1]) * (c[1] - q[1]);
            let least = (0..edges).map(|i| square(nearest(i))).fold(f64::INFINITY, f64::min);
            let mut best = (f64::INFINITY, q);
            for i in 0..edges {
                let c = nearest(i);
                let sq = square(c);
                if least.is_finite() && (sq > least * (1.0 + 1e-9) || sq.is_nan()) {
                    continue;
                }
                let d = (c[0] - q[0]).hypot(c[1] - q[1]);
                if d < best.0 {
                    best = (d, c);
                }
            }
            best
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::character::builtin;
    use crate::footsteps::GaitModel;

    #[test]
    fn hull_distances_are_those_of_every_edge_bit_for_bit() {
        // Every edge's distance with `hypot`, the first least one.
        let plain = |hull: &[[f64; 2]], q: [f64; 2]| {
            let n = hull.len();
            let mut inside = n >= 3;
            let mut best = (f64::INFINITY, q);
            for i in 0..n {
                let (a, b) = (hull[i], hull[(i + 1) % n]);
                if n >= 3 && (b[0] - a[0]) * (q[1] - a[1]) - (b[1] - a[1]) * (q[0] - a[0]) < 0.0 {
                    inside = false;
                }
                let (ux, uy) = (b[0] - a[0], b[1] - a[1]);
                let len2 = (ux * ux + uy * uy).max(1e-18);
                let s = (((q[0] - a[0]) * ux + (q[1] - a[1]) * uy) / len2).clamp(0.0, 1.0);
                let c = [a[0] + s * ux, a[1] + s * uy];
                let d = (c[0] - q[0]).hypot(c[1] - q[1]);
                if d < best.0 {
                    best = (d, c);
                }
                if n == 2 {
                    break;
                }
            }
            if inside { (0.0, q) } else { best }
        };
        let gait = GaitModel::new(&builtin::character()).unwrap();
        let mut next = crate::test_uniform(0x853c_49e6_748f_ea9b_u64);
        let square = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]];
        for hull in [&gait.hulls[0][..], &gait.hulls[1][..], &square[..], &square[..2]] {
            let mut points: Vec<[f64; 2]> = (0..20_000).map(|_| [4.0 * next() - 2.0, 4.0 * next() - 2.0]).collect();
            // On the vertices, and equally far from two edges.
            points.extend(hull.iter().copied());
            points.extend([[0.5, -1.0], [2.0, 2.0], [-1.0, -1.0], [f64::NAN, 0.0]]);
            for q in points {
                let (a, b) = (hull_distance(hull, q), plain(hull, q));
                assert_eq!((a.0.to_bits(), a.1.map(f64::to_bits)), (b.0.to_bits(), b.1.map(f64::to_bits)), "{q:?}");
            }
        }
    }

    #[test]
    fn convex_hull_and_distance() {
        let h = convex_hull(&[[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.5, 0.5]]);
        assert_eq!(h.len(), 4);
        assert_eq!(hull_distance(&h, [0.5, 0.5]).0, 0.0);
        assert!((hull_distance(&h, [2.0, 0.5]).0 - 1.0).abs() < 1e-12);
        assert!((hull_distance(&[[0.0, 0.0], [1.0, 0.0]], [0.5, 2.0]).0 - 2.0).abs() < 1e-12);
    }
}
