//! Where a loop's footsteps close: an endogenous loop starts at its first
//! waypoint, which is a corner of the polygon its author drew. Planning its
//! footsteps from there would put the loop's seam convention (a straight
//! walking pose, two fixed footprints, BPK §5 boundary conditions) on a
//! corner that may turn back on itself. The plan is made instead on the
//! loop *rotated* to start where its path runs straightest (the least
//! heading change over ±0.6 s), and the synthesised animation, its
//! footsteps and its trace are then rotated back onto the loop's interval:
//! a loop repeats with the period, so its pose at `t + π` is its pose at
//! `t`. O(keys) per loop.

use crate::animation::sampling::{EventJump, Trace};
use crowdpatch_runtime::format::{AgentAnimation, BakedAgent, Footstep, PathKey, wrap_angle};

/// The time in `[start, start + period)` at which the loop `agent` runs
/// straightest: least heading change over 0.6 s either side, preferring a
/// moving walker (speed ≥ 0.3 m/s), then the earliest time; candidates on
/// the grid `start + k · step`.
pub fn straightest(agent: &BakedAgent, period: f64, step: f64) -> f64 {
    let t0 = agent.start();
    let wrap = |t: f64| t0 + (t - t0).rem_euclid(period);
    let pos = |t: f64| agent.sample(wrap(t)).map_or(agent.keys[0].position, |x| x.0);
    let heading = |a: f64, b: f64| {
        let (p, q) = (pos(a), pos(b));
        ((q[1] - p[1]).atan2(q[0] - p[0]), (q[0] - p[0]).hypot(q[1] - p[1]) / (b - a))
    };
    let n = (period / step).floor().max(1.0) as usize;
    let scores: Vec<f64> = (0..n)
        .map(|k| {
            let t = t0 + k as f64 * step;
            let (h_in, v_in) = heading(t - 0.6, t);
            let (h_out, v_out) = heading(t, t + 0.6);
            let (h_mid, _) = heading(t - 0.1, t + 0.1);
            let turn = wrap_angle(h_mid - h_in).abs() + wrap_angle(h_out - h_mid).abs();
            turn + if v_in.min(v_out) < 0.3 { 10.0 } else { 0.0 }
        })
        .collect();
    // The middle of the longest run of candidates within 0.02 rad of the
    // best (the middle of a straight stretch, not its end).
    let best = scores.iter().copied().fold(f64::INFINITY, f64::min);
    let good: Vec<bool> = scores.iter().map(|&s| s <= best + 0.02).collect();
    let (mut run, mut pick) = ((0usize, 0usize), 0usize);
    for start in 0..n {
        if !good[start] || (good[(start + n - 1) % n] && !good.iter().all(|&g| g)) {
            continue;
        }
        let len = (0..n).take_while(|&i| good[(start + i) % n]).count();
        if len > run.1 {
            run = (start, len);
            pick = (start + len / 2) % n;
        }
    }
    t0 + pick as f64 * step
}

/// The loop `agent` over `[ts, ts + period]` instead of its own interval
/// (its keys from `ts` on, then those before `ts` a period later).
pub fn rotate(agent: &BakedAgent, ts: f64, period: f64) -> BakedAgent {
    let (t0, t1) = (agent.start(), agent.end());
    let mid = |t: f64| {
        let (position, heading) = agent.sample(t).unwrap_or((agent.keys[0].position, agent.keys[0].heading));
        PathKey { t, position, heading }
    };
    let mut keys = vec![mid(ts)];
    keys.extend(agent.keys.iter().filter(|k| k.t > ts + 1e-9 && k.t < t1 - 1e-9).copied());
    keys.extend(
        agent.keys.iter().filter(|k| k.t >= t0 - 1e-9 && k.t < ts - 1e-9).map(|k| PathKey { t: k.t + period, ..*k }),
    );
    keys.push(PathKey { t: ts + period, ..mid(ts) });
    BakedAgent { kind: agent.kind, keys }
}

/// Moves what lies after `end` back by a period and sorts by time; equal
/// times (within 1 µs) kept once.
fn fold(times: &[f64], end: f64, period: f64) -> Vec<(f64, usize)> {
    let mut v: Vec<(f64, usize)> =
        times.iter().enumerate().map(|(i, &t)| (if t > end + 1e-6 { t - period } else { t }, i)).collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    v.dedup_by(|b, a| (b.0 - a.0).abs() < 1e-6);
    v
}

/// The animation of a loop planned over `[ts, ts + period]` ([`rotate`])
/// put back on the loop's own interval `[t0, t0 + period]`: keys, trace
/// samples and footsteps after `t0 + period` moved back a period; the
/// loop's end `t0 + period` gets a key (interpolated, as a player would
/// show it) and the same key at its start `t0`.
pub fn unrotate(
    mut anim: AgentAnimation,
    trace: Trace,
    t0: f64,
    period: f64,
    joints: usize,
) -> (AgentAnimation, Trace) {
    let end = t0 + period;
    // A key at the loop's end, which is also its start.
    insert_key(&mut anim, end, joints);
    let mut order = fold(&anim.times, end, period);
    if let Some(&(_, i)) = order.iter().find(|x| (x.0 - end).abs() < 1e-6) {
        order.insert(0, (t0, i));
        order.dedup_by(|b, a| (b.0 - a.0).abs() < 1e-6);
    }
    let mut out = AgentAnimation {
        footsteps: Vec::new(),
        times: Vec::with_capacity(order.len() + 2),
        translations: Vec::with_capacity((order.len() + 2) * joints),
        rotations: Vec::with_capacity((order.len() + 2) * joints),
    };
    for &(t, i) in &order {
        out.times.push(t);
        out.translations.extend_from_slice(&anim.translations[i * joints..(i + 1) * joints]);
        out.rotations.extend_from_slice(&anim.rotations[i * joints..(i + 1) * joints]);
    }
    insert_key(&mut out, t0, joints);
    // Footsteps: one period of them, in time order.
    let mut steps: Vec<Footstep> = anim
        .footsteps
        .iter()
        .map(|f| if f.t > end + 1e-6 { Footstep { t: f.t - period, lift: f.lift - period, ..*f } } else { *f })
        .collect();
    steps.sort_by(|a, b| a.t.total_cmp(&b.t));
    steps.dedup_by(|b, a| (b.t - a.t).abs() < 1e-6);
    // The footsteps either side of the interval, as a period away: the
    // last before the end seen before the start, the first after the start
    // seen after the end.
    let before = steps.iter().rev().find(|f| f.t < end - 1e-6).map(|f| Footstep {
        t: f.t - period,
        lift: f.lift - period,
        ..*f
    });
    let after =
        steps.iter().find(|f| f.t > t0 + 1e-6).map(|f| Footstep { t: f.t + period, lift: f.lift + period, ..*f });
    if let Some(f) = before
        && steps.first().is_none_or(|g| g.t > t0 + 1e-6)
    {
        steps.insert(0, f);
    }
    if let Some(f) = after
        && steps.last().is_none_or(|g| g.t < end - 1e-6)
    {
        steps.push(f);
    }
    out.footsteps = steps;
    let order = fold(&trace.times, end, period);
    let mut events: Vec<EventJump> =
        trace.events.iter().map(|e| if e.t > end + 1e-6 { EventJump { t: e.t - period, ..*e } } else { *e }).collect();
    events.sort_by(|a, b| a.t.total_cmp(&b.t));
    let t = Trace {
        times: order.iter().map(|x| x.0).collect(),
        feet: order.iter().map(|x| trace.feet[x.1]).collect(),
        root: order.iter().map(|x| trace.root[x.1]).collect(),
        joints: order.iter().map(|x| trace.joints[x.1].clone()).collect(),
        contacts: order.iter().map(|x| trace.contacts[x.1]).collect(),
        lowest: order.iter().map(|x| trace.lowest[x.1]).collect(),
        events,
    };
    (out, t)
}

/// Inserts a key at `t` interpolated from its neighbours (lerp, shortest
/// normalised lerp of quaternions, as glTF LINEAR plays them closely
/// enough at key spacing) when none is there.
fn insert_key(a: &mut AgentAnimation, t: f64, joints: usize) {
    let k = a.times.partition_point(|&x| x < t - 1e-6);
    if a.times.get(k).is_some_and(|&x| (x - t).abs() < 1e-6) || k == 0 || k >= a.times.len() {
        return;
    }
    let (ta, tb) = (a.times[k - 1], a.times[k]);
    let u = ((t - ta) / (tb - ta)) as f32;
    let mut tr = Vec::with_capacity(joints);
    let mut rot = Vec::with_capacity(joints);
    for j in 0..joints {
        let (p, q) = (a.translations[(k - 1) * joints + j], a.translations[k * joints + j]);
        tr.push(std::array::from_fn(|c| p[c] + u * (q[c] - p[c])));
        let (r, mut s) = (a.rotations[(k - 1) * joints + j], a.rotations[k * joints + j]);
        if (0..4).map(|c| r[c] * s[c]).sum::<f32>() < 0.0 {
            s = s.map(|x| -x);
        }
        let m: [f32; 4] = std::array::from_fn(|c| r[c] + u * (s[c] - r[c]));
        let n = m.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
        rot.push(m.map(|x| x / n));
    }
    a.times.insert(k, t);
    a.translations.splice(k * joints..k * joints, tr);
    a.rotations.splice(k * joints..k * joints, rot);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crowdpatch_runtime::format::AgentKind;

    /// A square loop of side 4 m walked in 8 s from a corner at t = 1.
    fn square() -> BakedAgent {
        let corners = [[2.0, 2.0], [6.0, 2.0], [6.0, 6.0], [2.0, 6.0]];
        let mut keys = Vec::new();
        for i in 0..=16 {
            let t = 1.0 + i as f64 * 0.5;
            let (side, u) = ((i / 4) % 4, (i % 4) as f64 / 4.0);
            let (a, b) = (corners[side], corners[(side + 1) % 4]);
            let position = [a[0] + u * (b[0] - a[0]), a[1] + u * (b[1] - a[1])];
            keys.push(PathKey { t, position, heading: (b[1] - a[1]).atan2(b[0] - a[0]) });
        }
        BakedAgent { kind: AgentKind::Endogenous { index: 0 }, keys }
    }

    #[test]
    fn the_seam_moves_off_the_corner_and_the_rotated_loop_is_the_same_path() {
        let a = square();
        let ts = straightest(&a, 8.0, 0.1);
        // Mid-side: 1 s after a corner (2 m at 2 m/s).
        let from_corner = (ts - 1.0).rem_euclid(2.0);
        assert!((from_corner - 1.0).abs() < 0.11, "seam at {ts}");
        let r = rotate(&a, ts, 8.0);
        assert!((r.start() - ts).abs() < 1e-12 && (r.end() - ts - 8.0).abs() < 1e-12);
        for k in 0..80 {
            let t = ts + k as f64 * 0.1;
            let (p, _) = r.sample(t).unwrap();
            let tw = 1.0 + (t - 1.0).rem_euclid(8.0);
            let (q, _) = a.sample(tw).unwrap();
            assert!((p[0] - q[0]).hypot(p[1] - q[1]) < 1e-9, "at {t}: {p:?} vs {q:?}");
        }
    }

    #[test]
    fn unrotating_puts_keys_and_footsteps_back_on_the_loop_interval() {
        let foot = |t: f64| Footstep {
            t,
            foot: crowdpatch_runtime::format::Foot::Left,
            position: [t, 0.0],
            heading: 0.0,
            lift: t + 0.2,
        };
        let times: Vec<f64> = (0..=10).map(|i| 3.0 + i as f64).collect(); // [3, 13] for a loop on [1, 11]
        let anim = AgentAnimation {
            footsteps: vec![foot(3.0), foot(8.0), foot(12.5)],
            times: times.clone(),
            translations: times.iter().map(|&t| [t as f32, 0.0, 0.0]).collect(),
            rotations: vec![[0.0, 0.0, 0.0, 1.0]; times.len()],
        };
        let trace = Trace {
            times: times.clone(),
            feet: vec![[[0.0; 3]; 2]; 11],
            root: vec![[0.0; 2]; 11],
            joints: vec![vec![]; 11],
            contacts: vec![[[0.0; 3]; 6]; 11],
            lowest: vec![0.0; 11],
            events: Vec::new(),
        };
        let (a, t) = unrotate(anim, trace, 1.0, 10.0, 1);
        assert_eq!(a.times.first(), Some(&1.0));
        assert_eq!(a.times.last(), Some(&11.0));
        assert!(a.times.windows(2).all(|w| w[1] > w[0]));
        // The key at 12 (moved to 2) keeps its pose.
        let k = a.times.iter().position(|&x| x == 2.0).unwrap();
        assert_eq!(a.translations[k][0], 12.0);
        assert_eq!(a.footsteps.iter().map(|f| f.t).collect::<Vec<_>>(), vec![-2.0, 2.5, 3.0, 8.0, 12.5]);
        assert!(t.times.windows(2).all(|w| w[1] >= w[0]));
    }
}
