//! O(n) solvers of tridiagonal and cyclic tridiagonal linear systems, the
//! moment systems of the clamped and periodic cubic splines of stage 4
//! ([`crate::smoothing::Spline`], seed paper §3.5, eqs. 11–12).
//!
//! - [`solve`]: the **Thomas algorithm** (Gaussian elimination without
//!   pivoting on the three diagonals; Conte & de Boor, *Elementary Numerical
//!   Analysis*, 1980, §3.3), stable for strictly diagonally dominant
//!   matrices, as the spline systems are (each diagonal entry is twice the
//!   sum of its row's off-diagonal entries).
//! - [`solve_cyclic`]: the same with the two corner entries of a periodic
//!   system, by the **Sherman–Morrison** formula (Press et al., *Numerical
//!   Recipes*, 3rd ed., §2.7.2, `cyclic`): two Thomas solves of the matrix
//!   without its corners, plus a rank-one correction.
//!
//! Both take one right-hand side per coordinate of a [`Vec2`] and solve the
//! two at once. Time O(n), memory O(n), against O(n³) and O(n²) for a dense
//! factorisation.

use crate::geometry::Vec2;

/// Solves the tridiagonal system `sub[i]·x[i−1] + diag[i]·x[i] +
/// sup[i]·x[i+1] = rhs[i]` for `i` in `0..n` (`sub[0]` and `sup[n−1]` are
/// ignored) and returns `x`. Time and memory O(n).
///
/// The matrix must be strictly diagonally dominant (no pivoting is done).
///
/// # Panics
/// If the four slices are not all of one length `n ≥ 1`.
///
/// # Example
/// ```
/// use crowdpatch::geometry::Vec2;
/// use crowdpatch::tridiagonal::solve;
/// // [4 1 0; 1 4 1; 0 1 4] x = (5, 6, 5) for both coordinates: x = (1, 1, 1).
/// let b = vec![Vec2::new(5.0, 5.0), Vec2::new(6.0, 6.0), Vec2::new(5.0, 5.0)];
/// let x = solve(&[0.0, 1.0, 1.0], &[4.0; 3], &[1.0, 1.0, 0.0], &b);
/// assert!(x.iter().all(|v| (v - Vec2::new(1.0, 1.0)).norm() < 1e-12));
/// ```
pub fn solve(sub: &[f64], diag: &[f64], sup: &[f64], rhs: &[Vec2]) -> Vec<Vec2> {
    let n = diag.len();
    assert!(n >= 1 && sub.len() == n && sup.len() == n && rhs.len() == n, "a tridiagonal system of n ≥ 1 rows");
    // Forward sweep: c'[i] = sup[i] / m, d'[i] = (rhs[i] − sub[i]·d'[i−1]) / m,
    // m = diag[i] − sub[i]·c'[i−1].
    let mut c = vec![0.0; n];
    let mut d = vec![Vec2::zeros(); n];
    let mut m = diag[0];
    c[0] = sup[0] / m;
    d[0] = rhs[0] / m;
    for i in 1..n {
        m = diag[i] - sub[i] * c[i - 1];
        c[i] = sup[i] / m;
        d[i] = (rhs[i] - d[i - 1] * sub[i]) / m;
    }
    // Back substitution.
    for i in (0..n - 1).rev() {
        d[i] = d[i] - d[i + 1] * c[i];
    }
    d
}

/// Solves the cyclic tridiagonal system whose row `i` is `sub[i]·x[i−1] +
/// diag[i]·x[i] + sup[i]·x[i+1] = rhs[i]` with indices taken modulo `n`
/// (`sub[0]` multiplies `x[n−1]`, `sup[n−1]` multiplies `x[0]`) and
/// returns `x`. Time and memory O(n): Sherman–Morrison over [`solve`]
/// (Numerical Recipes §2.7.2).
///
/// The matrix must be strictly diagonally dominant. With `n = 2` the corner
/// entries fall on the off-diagonals and the 2 × 2 system is solved directly.
///
/// # Panics
/// If the four slices are not all of one length `n ≥ 1`.
pub fn solve_cyclic(sub: &[f64], diag: &[f64], sup: &[f64], rhs: &[Vec2]) -> Vec<Vec2> {
    let n = diag.len();
    assert!(n >= 1 && sub.len() == n && sup.len() == n && rhs.len() == n, "a cyclic system of n ≥ 1 rows");
    match n {
        1 => return vec![rhs[0] / (diag[0] + sub[0] + sup[0])],
        2 => {
            // Row 0: diag[0]·x0 + (sub[0] + sup[0])·x1; row 1 likewise.
            let (a, b) = (diag[0], sub[0] + sup[0]);
            let (c, d) = (sub[1] + sup[1], diag[1]);
            let det = a * d - b * c;
            return vec![(rhs[0] * d - rhs[1] * b) / det, (rhs[1] * a - rhs[0] * c) / det];
        }
        _ => {}
    }
    // A = T + u·vᵀ with u = (γ, 0, …, 0, α), v = (1, 0, …, 0, β/γ): α the
    // lower-left corner, β the upper-right, γ = −diag[0].
    let (alpha, beta) = (sup[n - 1], sub[0]);
    let gamma = -diag[0];
    let mut t_diag = diag.to_vec();
    t_diag[0] -= gamma;
    t_diag[n - 1] -= alpha * beta / gamma;
    let mut t_sub = sub.to_vec();
    t_sub[0] = 0.0;
    let mut t_sup = sup.to_vec();
    t_sup[n - 1] = 0.0;
    let x = solve(&t_sub, &t_diag, &t_sup, rhs);
    let mut u = vec![Vec2::zeros(); n];
    u[0] = Vec2::new(gamma, gamma);
    u[n - 1] = Vec2::new(alpha, alpha);
    let z = solve(&t_sub, &t_diag, &t_sup, &u);
    // x − z·(v·x)/(1 + v·z), per coordinate.
    let mut out = x.clone();
    for c in 0..2 {
        let vx = x[0][c] + beta * x[n - 1][c] / gamma;
        let vz = z[0][c] + beta * z[n - 1][c] / gamma;
        let fact = vx / (1.0 + vz);
        for i in 0..n {
            out[i][c] = x[i][c] - fact * z[i][c];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{DMatrix, DVector};
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A random strictly diagonally dominant system (as the spline systems:
    /// positive intervals h, diagonal 2·(h_prev + h_next)), dense and banded.
    fn system(n: usize, cyclic: bool, rng: &mut ChaCha8Rng) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<Vec2>) {
        let h: Vec<f64> = (0..n).map(|_| rng.random_range(0.01..3.0)).collect();
        let mut sub = vec![0.0; n];
        let mut sup = vec![0.0; n];
        let mut diag = vec![0.0; n];
        for i in 0..n {
            let prev = if i > 0 || cyclic { h[(i + n - 1) % n] } else { 0.0 };
            let next = if i + 1 < n || cyclic { h[i] } else { 0.0 };
            sub[i] = prev;
            sup[i] = next;
            diag[i] = 2.0 * (prev + next).max(0.5);
        }
        let rhs = (0..n).map(|_| Vec2::new(rng.random_range(-50.0..50.0), rng.random_range(-50.0..50.0))).collect();
        (sub, diag, sup, rhs)
    }

    fn dense(sub: &[f64], diag: &[f64], sup: &[f64], cyclic: bool) -> DMatrix<f64> {
        let n = diag.len();
        let mut a = DMatrix::<f64>::zeros(n, n);
        for i in 0..n {
            a[(i, i)] += diag[i];
            if i > 0 {
                a[(i, i - 1)] += sub[i];
            } else if cyclic {
                a[(i, n - 1)] += sub[i];
            }
            if i + 1 < n {
                a[(i, i + 1)] += sup[i];
            } else if cyclic {
                a[(i, 0)] += sup[i];
            }
        }
        a
    }

    /// The O(n) solvers agree with a dense LU solve (nalgebra) on random
    /// systems of every small size and a few large ones.
    #[test]
    fn agree_with_a_dense_solve() {
        let mut rng = ChaCha8Rng::seed_from_u64(14);
        for cyclic in [false, true] {
            for n in (1..40).chain([100, 257, 600]) {
                for _ in 0..5 {
                    let (sub, diag, sup, rhs) = system(n, cyclic, &mut rng);
                    let got =
                        if cyclic { solve_cyclic(&sub, &diag, &sup, &rhs) } else { solve(&sub, &diag, &sup, &rhs) };
                    let lu = dense(&sub, &diag, &sup, cyclic).lu();
                    for c in 0..2 {
                        let b = DVector::from_iterator(n, rhs.iter().map(|v| v[c]));
                        let want = lu.solve(&b).expect("diagonally dominant, hence regular");
                        let scale = want.amax().max(1.0);
                        for i in 0..n {
                            assert!(
                                (got[i][c] - want[i]).abs() <= 1e-10 * scale,
                                "cyclic {cyclic}, n = {n}, x[{i}][{c}] = {} but the dense solve gives {}",
                                got[i][c],
                                want[i]
                            );
                        }
                    }
                }
            }
        }
    }

    /// The residual of a large system is at round-off level: the solvers
    /// are stable on the diagonally dominant systems the splines give.
    #[test]
    fn residuals_are_small_on_large_systems() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for cyclic in [false, true] {
            let n = 20_000;
            let (sub, diag, sup, rhs) = system(n, cyclic, &mut rng);
            let x = if cyclic { solve_cyclic(&sub, &diag, &sup, &rhs) } else { solve(&sub, &diag, &sup, &rhs) };
            for i in 0..n {
                let prev = if i > 0 {
                    x[i - 1]
                } else if cyclic {
                    x[n - 1]
                } else {
                    Vec2::zeros()
                };
                let next = if i + 1 < n {
                    x[i + 1]
                } else if cyclic {
                    x[0]
                } else {
                    Vec2::zeros()
                };
                let row = prev * sub[i] + x[i] * diag[i] + next * sup[i];
                assert!((row - rhs[i]).norm() < 1e-9, "row {i} of {n} (cyclic {cyclic})");
            }
        }
    }
}
