//! Sampling an agent's baked path for the footstep planner (course notes,
//! BPK §5: the root follows the path in space and time; docs/design.md "5a.
//! Footsteps"): position and heading at a time, the same bits as the
//! runtime's [`BakedAgent::sample`], from a window of keys when it is known,
//! and the path's walking velocity at a loop's seam.

use crowdpatch_runtime::format::BakedAgent;

/// Position `[m]` and heading `[rad]` of a baked path at `t`, clamped.
pub(super) fn at(agent: &BakedAgent, t: f64) -> ([f64; 2], f64) {
    let t = t.clamp(agent.start(), agent.end());
    path_sample(agent, t).unwrap_or((agent.keys[0].position, agent.keys[0].heading))
}

/// The position of [`at`] when the first key after the clamped `t` lies in
/// `lo..=hi` ([`path_position_within`]).
pub(super) fn at_within(agent: &BakedAgent, t: f64, lo: usize, hi: usize) -> [f64; 2] {
    let t = t.clamp(agent.start(), agent.end());
    path_position_within(agent, t, lo, hi).map_or(agent.keys[0].position, |x| x.0)
}

/// The index of the first key of `agent` after `t` clamped into the path's
/// interval (the `lo`/`hi` of [`at_within`]).
pub(super) fn key_after(agent: &BakedAgent, t: f64) -> usize {
    let t = t.clamp(agent.start(), agent.end());
    agent.keys.partition_point(|k| k.t <= t)
}

/// [`BakedAgent::sample`], the same bits: position `[m]` and heading
/// `[rad]` at `t` `[s]`, `None` outside the path's interval; an angle
/// already in (−2π, 2π) is not taken through `fmod` (whose remainder is
/// then the angle itself). O(log keys).
pub(crate) fn path_sample(agent: &BakedAgent, t: f64) -> Option<([f64; 2], f64)> {
    let (p, i, u) = path_position_at(agent, t)?;
    let keys = &agent.keys;
    Some((
        p,
        match (i, u) {
            (0, _) => keys[0].heading,
            (_, None) => keys[keys.len() - 1].heading,
            (i, Some(u)) => lerp_angle(keys[i - 1].heading, keys[i].heading, u),
        },
    ))
}

/// The position of [`BakedAgent::sample`] alone, the same bits. O(log keys).
pub(crate) fn path_position(agent: &BakedAgent, t: f64) -> Option<[f64; 2]> {
    path_position_at(agent, t).map(|x| x.0)
}

/// Position at `t`, the key after it and the share `u` of the way to it
/// (`None` at or after the last key).
fn path_position_at(agent: &BakedAgent, t: f64) -> Option<([f64; 2], usize, Option<f64>)> {
    path_position_within(agent, t, 0, agent.keys.len())
}

/// [`path_position_at`] when the index of the first key after `t` is known
/// to lie in `lo..=hi` (e.g. `t` between two times whose indices are `lo`
/// and `hi`): the same result, from a search of those keys only.
fn path_position_within(agent: &BakedAgent, t: f64, lo: usize, hi: usize) -> Option<([f64; 2], usize, Option<f64>)> {
    let keys = &agent.keys;
    if keys.is_empty() || t < keys[0].t || t > keys[keys.len() - 1].t {
        return None;
    }
    let i = lo + keys[lo..hi].partition_point(|k| k.t <= t);
    if i == 0 {
        return Some((keys[0].position, 0, None));
    }
    if i >= keys.len() {
        return Some((keys[keys.len() - 1].position, i, None));
    }
    let (a, b) = (keys[i - 1], keys[i]);
    let u = (t - a.t) / (b.t - a.t);
    let p = [a.position[0] + (b.position[0] - a.position[0]) * u, a.position[1] + (b.position[1] - a.position[1]) * u];
    Some((p, i, Some(u)))
}

/// `x % 2π`, exactly: `x` itself when `|x| < 2π`.
fn rem_tau(x: f64) -> f64 {
    let tau = std::f64::consts::TAU;
    if x.abs() < tau { x } else { x % tau }
}

/// [`crowdpatch_runtime::format::lerp_angle`], the same bits.
fn lerp_angle(a: f64, b: f64, u: f64) -> f64 {
    let (tau, pi) = (std::f64::consts::TAU, std::f64::consts::PI);
    let mut d = rem_tau(b - a);
    if d > pi {
        d -= tau;
    } else if d <= -pi {
        d += tau;
    }
    wrap_angle_exact(a + d * u)
}

/// [`crowdpatch_runtime::format::wrap_angle`], the same bits.
pub(crate) fn wrap_angle_exact(a: f64) -> f64 {
    let (tau, pi) = (std::f64::consts::TAU, std::f64::consts::PI);
    let mut w = rem_tau(a);
    if w > pi {
        w -= tau;
    } else if w <= -pi {
        w += tau;
    }
    w
}

/// Mean velocity of the path over `[t − h, t + h]` (clamped, or wrapped for a
/// loop of period `period`).
pub(super) fn velocity(agent: &BakedAgent, t: f64, h: f64, period: Option<f64>) -> [f64; 2] {
    let (a, b) = match period {
        Some(pi) => {
            let s = agent.start();
            let wrap = |x: f64| s + (x - s).rem_euclid(pi);
            let (pa, pb) = (at(agent, wrap(t - h)).0, at(agent, wrap(t + h)).0);
            (pa, pb)
        }
        None => (at(agent, t - h).0, at(agent, t + h).0),
    };
    let span = match period {
        Some(_) => 2.0 * h,
        None => (t + h).min(agent.end()) - (t - h).max(agent.start()),
    };
    [(b[0] - a[0]) / span.max(1e-9), (b[1] - a[1]) / span.max(1e-9)]
}

/// The walking velocity of a loop at its seam (its start, a period after
/// its end) `[m/s]`: the mean of the arriving and leaving speeds (over
/// 0.5 s each side), in the direction halfway between them. The mean
/// velocity across the seam would cancel where the loop turns back on
/// itself, and give a far too slow gait there.
pub fn loop_seam_velocity(agent: &BakedAgent, period: f64) -> [f64; 2] {
    let (t0, t1) = (agent.start(), agent.end());
    let (vi, vo) = (velocity(agent, t1 - 0.25, 0.25, None), velocity(agent, t0 + 0.25, 0.25, None));
    let (si, so) = (vi[0].hypot(vi[1]), vo[0].hypot(vo[1]));
    let dir = [vi[0] / si.max(1e-9) + vo[0] / so.max(1e-9), vi[1] / si.max(1e-9) + vo[1] / so.max(1e-9)];
    let (dn, speed) = (dir[0].hypot(dir[1]), (si + so) / 2.0);
    if dn > 1e-6 { [speed * dir[0] / dn, speed * dir[1] / dn] } else { velocity(agent, t0, 0.25, Some(period)) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crowdpatch_runtime::format::{AgentKind, PathKey, PointRef, Side};

    #[test]
    fn path_samples_are_the_runtimes_bit_for_bit() {
        // Headings that wrap, turn by more than π between keys, and lie
        // beyond 2π.
        let headings = [3.1, -3.0, 0.2, 7.0, -6.5, 2.0, 12.9];
        let keys: Vec<PathKey> = headings
            .iter()
            .enumerate()
            .map(|(i, &h)| PathKey {
                t: 1.0 + 0.7 * i as f64,
                position: [0.3 * i as f64, 1.0 - 0.2 * i as f64],
                heading: h,
            })
            .collect();
        let r = PointRef { side: Side::West, index: 0 };
        let agent = BakedAgent { kind: AgentKind::Exogenous { entry: r, exit: r }, keys };
        for i in -10..=600 {
            let t = 1.0 + f64::from(i) * 0.0073;
            let mine = path_sample(&agent, t).map(|(p, h)| (p.map(f64::to_bits), h.to_bits()));
            let theirs = agent.sample(t).map(|(p, h)| (p.map(f64::to_bits), h.to_bits()));
            assert_eq!(mine, theirs, "t = {t}");
            assert_eq!(path_position(&agent, t).map(|p| p.map(f64::to_bits)), theirs.map(|x| x.0));
            // A window that holds the key after t gives the same.
            let k = key_after(&agent, t);
            let (lo, hi) = (k.saturating_sub(2), (k + 3).min(agent.keys.len()));
            assert_eq!(at_within(&agent, t, lo, hi).map(f64::to_bits), at(&agent, t).0.map(f64::to_bits));
        }
        for a in [-20.0, -7.0, -3.2, -0.0, 0.0, 3.2, 6.4, 100.0, f64::NAN] {
            assert_eq!(wrap_angle_exact(a).to_bits(), crowdpatch_runtime::format::wrap_angle(a).to_bits(), "{a}");
        }
    }
}
