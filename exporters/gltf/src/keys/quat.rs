//! Quaternion arithmetic of the key reduction: unit quaternions `(x, y, z,
//! w)` in `f64`, decoded from the normalised 16-bit integers a file holds,
//! and slerp along the short arc as a player interpolates them.

/// A decoded 16-bit rotation: each component `c / 32767`, at least −1
/// (glTF's normalised `SHORT`).
pub(super) fn dequantise(q: [i16; 4]) -> [f64; 4] {
    q.map(|c| (f64::from(c) / 32767.0).max(-1.0))
}

/// `q` scaled to unit length; the identity for the zero quaternion.
pub(super) fn normalise(q: [f64; 4]) -> [f64; 4] {
    let n = q.iter().map(|c| c * c).sum::<f64>().sqrt();
    if n > 0.0 { q.map(|c| c / n) } else { [0.0, 0.0, 0.0, 1.0] }
}

/// The 4-component dot product: the cosine of half the angle between two
/// unit quaternions' rotations (up to sign).
pub(super) fn dot(a: [f64; 4], b: [f64; 4]) -> f64 {
    (0..4).map(|k| a[k] * b[k]).sum()
}

/// Angle `[rad]` between two unit quaternions' rotations.
#[cfg(test)]
pub(super) fn angle(a: [f64; 4], b: [f64; 4]) -> f64 {
    2.0 * dot(a, b).abs().clamp(0.0, 1.0).acos()
}

/// `v` turned by the unit quaternion `q` (`q v q⁻¹`, 15 multiplications).
pub(super) fn rotate(q: [f64; 4], v: [f64; 3]) -> [f64; 3] {
    let [x, y, z, w] = q;
    let t = [2.0 * (y * v[2] - z * v[1]), 2.0 * (z * v[0] - x * v[2]), 2.0 * (x * v[1] - y * v[0])];
    [
        v[0] + w * t[0] + (y * t[2] - z * t[1]),
        v[1] + w * t[1] + (z * t[0] - x * t[2]),
        v[2] + w * t[2] + (x * t[1] - y * t[0]),
    ]
}

/// The Hamilton product `a b` (turn by `b`, then by `a`).
pub(super) fn mul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]
}

/// The short arc between two keys' unit quaternions, as a player slerps
/// it: the second key on the first's hemisphere, the arc's angle and its
/// sine.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Arc {
    /// The first key's rotation.
    pub from: [f64; 4],
    /// The second key's rotation, negated where it lies on the other
    /// hemisphere.
    pub to: [f64; 4],
    /// `acos(from · to)` `[rad]` (half the turn between the keys).
    pub angle: f64,
    /// `sin(angle)`.
    pub sine: f64,
}

/// The short arc from `a` to `c` (unit quaternions).
pub(super) fn arc(a: [f64; 4], c: [f64; 4]) -> Arc {
    let (qa, mut qc) = (a, c);
    if dot(qa, qc) < 0.0 {
        qc = qc.map(|v| -v);
    }
    let th = dot(qa, qc).min(1.0).acos();
    Arc { from: qa, to: qc, angle: th, sine: th.sin() }
}

/// The rotation at `u ∈ [0, 1]` along `arc`: slerp (nlerp where the arc's
/// angle is under 10⁻³ rad).
pub(super) fn slerp(arc: &Arc, u: f64) -> [f64; 4] {
    slerp_pre(arc.from, arc.to, arc.angle, arc.sine, u)
}

/// Slerp of unit quaternions along the short arc, with the arc's angle
/// `th` and its sine `s` precomputed (`th = 0`: nlerp).
fn slerp_pre(a: [f64; 4], b: [f64; 4], th: f64, s: f64, u: f64) -> [f64; 4] {
    if th < 1e-3 {
        return normalise(std::array::from_fn(|k| a[k] + (b[k] - a[k]) * u));
    }
    let (wa, wb) = (sin((1.0 - u) * th) / s, sin(u * th) / s);
    normalise(std::array::from_fn(|k| wa * a[k] + wb * b[k]))
}

/// `x.sin()`, by its Taylor series to x¹³ for `|x| ≤ 0.5` (relative error
/// below 10⁻¹⁵: a slerp between keys turns a joint by far less).
fn sin(x: f64) -> f64 {
    if x.abs() > 0.5 {
        return x.sin();
    }
    let x2 = x * x;
    x * (1.0
        - x2 / 6.0
            * (1.0 - x2 / 20.0 * (1.0 - x2 / 42.0 * (1.0 - x2 / 72.0 * (1.0 - x2 / 110.0 * (1.0 - x2 / 156.0))))))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::played::quantise;

    #[test]
    fn quantised_rotations_are_within_a_hundredth_of_a_degree() {
        for q in [[0.0f32, 0.0, 0.0, 1.0], [0.5, -0.5, 0.5, 0.5], [0.1, 0.7, -0.2, 0.677]] {
            let n = normalise(q.map(f64::from));
            let back = normalise(dequantise(quantise(n.map(|c| c as f32))));
            assert!(angle(n, back) < 1e-4, "{q:?}: {} rad", angle(n, back));
        }
    }

    #[test]
    fn the_sine_series_matches_the_library() {
        for i in -100..=100 {
            let x = f64::from(i) * 0.006;
            assert!((sin(x) - x.sin()).abs() <= 1e-15, "{x}");
        }
    }
}
