//! Proof that a patch has no collision-free solution: pairs of boundary
//! points whose fixed parts (crossing stubs inside, ghosts outside) come too
//! close in space and time for any two walkers through them to stay 2r
//! apart. O(p²) in the number of boundary points.

use crate::geometry::Vec2;
use crate::model::{Crossing, DEFAULT_COMFORT_SPEED, Patch};

/// Two boundary points whose fixed parts — crossing stubs inside the patch,
/// ghosts outside (docs/design.md "Seams") — come too close in space and time for
/// any two walkers through them to stay 2r apart (see [`infeasibility`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Conflict {
    /// One boundary point.
    pub a: Crossing,
    /// The other.
    pub b: Crossing,
    /// `min |p_a(t) − p_b(t')| + u·|t − t'|` over their fixed parts `[m]`
    /// (< 2r; the plain distance when `t = t'`).
    pub distance: f64,
    /// Play time of that closest approach `[s]`.
    pub time: f64,
}

impl Conflict {
    /// `sides.south.entries[2] and sides.west.exits[0] come 0.412 m apart at t = 3.10 s (2r = 0.6 m)`.
    pub fn describe(&self, radius: f64) -> String {
        format!(
            "{} and {} come {:.3} m apart at t = {:.2} s (2r = {} m)",
            self.a.path(),
            self.b.path(),
            self.distance,
            self.time,
            2.0 * radius
        )
    }
}

/// Every pair of boundary points of `patch` that is proven inseparable (see
/// [`Conflict`]). O(p²) in the number of boundary points.
///
/// The proof holds in the crowd-patch model for walkers no faster than
/// [`max_walking_speed`] (1.5 m/s at the default comfort speed): each agent
/// walks its fixed crossing stub (depth `stub_depth`, boundary velocity)
/// inside the patch and the neighbour's agent walks the ghost (2r) outside;
/// these never move, so two that overlap closer than 2r collide in every
/// solution (no speed bound needed), and two whose points are `Δt` apart in
/// time collide when `|Δp| + u·|Δt| < 2r` ([`conflicts_of`]). The point
/// criterion (docs/design.md "Infeasibility") `|p₁ − p₂| + 1.5 m/s·|Δt| < 2r` is the case of the two boundary
/// points themselves (tested in `tests/bench.rs`).
pub fn infeasibility(patch: &Patch) -> Vec<Conflict> {
    conflicts_of(
        &patch.crossings(),
        patch.stub_depth(),
        patch.header.agent_radius,
        patch.header.period,
        max_walking_speed(patch.header.comfort_speed),
    )
}

/// The walking speed `[m/s]` up to which infeasibility is proven: the 1.5 m/s of
/// docs/design.md "Infeasibility" at the default comfort speed of 1.33 m/s, scaled with the comfort
/// speed (so `|p₁ − p₂| + 1.5 m/s·|Δt| < 2r` on the boundary points
/// themselves is one case of the proof).
pub fn max_walking_speed(comfort_speed: f64) -> f64 {
    1.5 * comfort_speed / DEFAULT_COMFORT_SPEED
}

/// The inseparable pairs among `crossings` (see [`infeasibility`]): with
/// free parts walking at most `max_speed` `[m/s]`, two boundary points whose
/// fixed parts have points `p_a(t)`, `p_b(t')` (a period shift apart, not
/// both ghosts) with `|p_a(t) − p_b(t')| + max_speed·|t − t'| < 2r` collide in
/// every solution: when `a` is at `p_a(t)`, `b` can be at most
/// `max_speed·|t − t'|` from `p_b(t')`. `t = t'` is the plain overlap of the
/// fixed parts, which needs no speed bound.
pub fn conflicts_of(
    crossings: &[Crossing],
    stub_depth: f64,
    radius: f64,
    period: f64,
    max_speed: f64,
) -> Vec<Conflict> {
    let (depth, r, pi) = (stub_depth, radius, period);
    // How far a boundary point's fixed parts reach from it `[m]`.
    let reach = |c: &Crossing| c.velocity.norm() * c.time_to_depth(depth).max(c.time_to_depth(2.0 * r));
    let reaches: Vec<f64> = crossings.iter().map(reach).collect();
    let mut out = Vec::new();
    for (i, a) in crossings.iter().enumerate() {
        for (j, b) in crossings.iter().enumerate().skip(i + 1) {
            // Parts that cannot come within 2r of each other.
            if (a.position - b.position).norm() >= reaches[i] + reaches[j] + 2.0 * r {
                continue;
            }
            if let Some((d, t)) = speed_bounded_distance(a, b, depth, 2.0 * r, pi, max_speed, 2.0 * r)
                && d < 2.0 * r - 1e-9
            {
                out.push(Conflict { a: *a, b: *b, distance: d, time: t });
            }
        }
    }
    out
}

/// `min |p_a(t) − p_b(t')| + u·|t − t'|` over the fixed parts of two boundary
/// points (crossing stub of depth `stub_depth` inside, ghost of depth
/// `ghost_depth` outside; not ghost against ghost) and the period shifts, with
/// the play time `[s]` of the first point there. The function is jointly
/// convex in `(t, t')` (a norm of an affine map plus a multiple of one), so
/// nested ternary searches find its minimum over each pair of parts. Pairs of
/// parts and shifts that cannot come below `threshold` `[m]` are skipped, so
/// the result is exact below it and `None` or at least it otherwise.
pub fn speed_bounded_distance(
    a: &Crossing,
    b: &Crossing,
    stub_depth: f64,
    ghost_depth: f64,
    period: f64,
    u: f64,
    threshold: f64,
) -> Option<(f64, f64)> {
    type Part = ((Vec2, f64), (Vec2, f64));
    let parts = |c: &Crossing| [c.stub(stub_depth), c.ghost(ghost_depth)];
    let at = |p: &Part, t: f64| {
        let ((p0, t0), (p1, t1)) = *p;
        p0 + (p1 - p0) * ((t - t0) / (t1 - t0))
    };
    fn ternary(lo: f64, hi: f64, f: &dyn Fn(f64) -> f64) -> (f64, f64) {
        let (mut lo, mut hi) = (lo, hi);
        for _ in 0..40 {
            let m1 = lo + (hi - lo) / 3.0;
            let m2 = hi - (hi - lo) / 3.0;
            if f(m1) <= f(m2) { hi = m2 } else { lo = m1 }
        }
        let t = (lo + hi) / 2.0;
        (f(t), t)
    }
    let mut best: Option<(f64, f64)> = None;
    for (ia, pa) in parts(a).iter().enumerate() {
        for (ib, pb) in parts(b).iter().enumerate() {
            if ia == 1 && ib == 1 {
                continue;
            }
            // Parts whose boxes are 2r apart never conflict (the function is
            // at least the distance of the boxes).
            let (lo_a, hi_a) = (pa.0.0.inf(&pa.1.0), pa.0.0.sup(&pa.1.0));
            let (lo_b, hi_b) = (pb.0.0.inf(&pb.1.0), pb.0.0.sup(&pb.1.0));
            let gap = (lo_b - hi_a).sup(&(lo_a - hi_b)).sup(&Vec2::zeros()).norm();
            if gap >= threshold {
                continue;
            }
            // Shifts whose time gap alone costs 2r or more are skipped too.
            let slack = threshold / u.max(1e-9);
            let k0 = ((pb.0.1 - pa.1.1 - slack) / period).floor() as i64;
            let k1 = ((pb.1.1 - pa.0.1 + slack) / period).ceil() as i64;
            for k in k0..=k1 {
                let shift = k as f64 * period;
                // b's part on a's clock.
                let pbs: Part = ((pb.0.0, pb.0.1 - shift), (pb.1.0, pb.1.1 - shift));
                let time_gap = (pbs.0.1 - pa.1.1).max(pa.0.1 - pbs.1.1).max(0.0);
                if gap + u * time_gap >= threshold {
                    continue;
                }
                let inner = |t: f64| {
                    let pt = at(pa, t);
                    ternary(pbs.0.1, pbs.1.1, &|s: f64| (pt - at(&pbs, s)).norm() + u * (t - s).abs()).0
                };
                let (d, t) = ternary(pa.0.1, pa.1.1, &inner);
                if best.is_none_or(|(bd, _)| d < bd) {
                    best = Some((d, t.rem_euclid(period)));
                }
            }
        }
    }
    best
}
