//! Whether one group's channels, interpolated between two keys, keep every
//! sample in between within the group's share of the bounds: its joints'
//! rotations, and the positions (and a planted foot's horizontal position)
//! of the joints it moves, by forward kinematics of its subtree from the
//! pose as played so far.

use super::groups::{Group, Property};
use super::kinematics::Pose;
use super::quat::{Arc, arc, dot, mul, rotate, slerp};
use super::window::Window;

/// The rigid test's margin: its arithmetic differs from forward
/// kinematics', so it checks a hair inside the bounds.
const INSIDE: f64 = 1.0 - 1e-9;

/// One group's interval test, for [`super::simplify::simplify`].
pub(super) struct GroupFit<'a> {
    w: &'a Window<'a>,
    /// The pose as played so far (the groups before this one from their
    /// keys).
    pose: &'a Pose,
    group: &'a Group,
    /// Per joint, the squared position and contact bounds `[m²]` the group
    /// may bring its error to.
    bound2: &'a [(f64, f64)],
    /// The joints of the subtree of the group's top joint, parents first.
    sub: Vec<usize>,
    /// The joints of `sub` whose error is bounded and that the group moves.
    checked: Vec<usize>,
    /// Per joint, the group's (rotation, translation) channels as slots
    /// (indices into the group's channels).
    slot_of: Vec<(Option<usize>, Option<usize>)>,
    /// The joint every channel of the group drives, if one.
    single: Option<usize>,
    /// With `single` joint j, per sample and checked joint x (sample-major):
    /// the offset `x − j` and x's error in the pose as played so far.
    rigid: Vec<([f64; 3], [f64; 3])>,
    /// Per slot, the arc between the two keys tried (rotations).
    ends: Vec<Arc>,
    /// World positions of the subtree as tried, per joint.
    gp: Vec<[f64; 3]>,
    /// World rotations of the subtree as tried, per joint.
    gq: Vec<[f64; 4]>,
}

impl<'a> GroupFit<'a> {
    /// The test of `group` against the pose as played so far, with the
    /// bounds `bound2` (per joint, squared). Cost: O(m · s) for the
    /// single-joint offsets.
    pub fn new(w: &'a Window<'a>, pose: &'a Pose, group: &'a Group, bound2: &'a [(f64, f64)]) -> GroupFit<'a> {
        let (sk, channels) = (w.sk, w.channels);
        let n = sk.len();
        let sub = sk.subtree(Some(group.top));
        let checked: Vec<usize> = sub
            .iter()
            .copied()
            .filter(|&x| {
                (sk.extremity[x] || sk.foot_of[x].is_some()) && group.channels.iter().any(|&i| channels[i].moves(sk, x))
            })
            .collect();
        let mut slot_of = vec![(None::<usize>, None::<usize>); n];
        for (slot, &i) in group.channels.iter().enumerate() {
            let ch = channels[i];
            match ch.property {
                Property::Rotation => slot_of[ch.joint].0 = Some(slot),
                Property::Translation => slot_of[ch.joint].1 = Some(slot),
            }
        }
        let single = {
            let j = channels[group.channels[0]].joint;
            group.channels.iter().all(|&i| channels[i].joint == j).then_some(j)
        };
        let rigid = match single {
            Some(j) => rigid_offsets(w, pose, &checked, j),
            None => Vec::new(),
        };
        let ends = vec![Arc::default(); group.channels.len()];
        let (gp, gq) = (vec![[0.0; 3]; n], vec![[0.0; 4]; n]);
        GroupFit { w, pose, group, bound2, sub, checked, slot_of, single, rigid, ends, gp, gq }
    }

    /// Whether the group's channels between keys `a0` and `c0` (`None`:
    /// held at their baked sample 0) keep every sample after `a0` up to
    /// `c0` (every sample but the first for `None`) within the bounds.
    /// Cost: O(L · s) for L samples in the interval.
    pub fn fits(&mut self, a0: usize, c0: Option<usize>) -> bool {
        if let Some(c0) = c0 {
            let n = self.w.sk.len();
            let played_q = &self.w.samples.played_q;
            for (slot, &i) in self.group.channels.iter().enumerate() {
                let j = self.w.channels[i].joint;
                if self.w.channels[i].property == Property::Rotation {
                    self.ends[slot] = arc(played_q[a0 * n + j], played_q[c0 * n + j]);
                }
            }
        }
        let (lo, hi) = match c0 {
            Some(c0) => (a0 + 1, c0 + 1),
            None => (1, self.w.m),
        };
        // The middle first (where linear playback strays most), then every
        // other sample.
        let mid = (lo + hi) / 2;
        if hi > lo && !self.within(a0, c0, mid) {
            return false;
        }
        for k in lo..hi {
            if k != mid && !self.within(a0, c0, k) {
                return false;
            }
        }
        true
    }

    /// Whether sample `k` is within every bound, the group interpolated
    /// between `a0` and `c0`.
    fn within(&mut self, a0: usize, c0: Option<usize>, k: usize) -> bool {
        let times = self.w.times;
        let u = c0.map_or(0.0, |c0| (times[k] - times[a0]) / (times[c0] - times[a0]));
        match self.single {
            Some(j) => self.within_rigid(j, a0, c0, k, u),
            None => self.within_subtree(a0, c0, k, u),
        }
    }

    /// Joint `j`'s rotation at sample `k` as the group plays it in `slot`
    /// (at `u` between the keys; held at its baked sample 0 when unkeyed);
    /// `None` when it turns past the rotation bound.
    fn rotation(&self, slot: usize, j: usize, c0: Option<usize>, k: usize, u: f64) -> Option<[f64; 4]> {
        let baked_q = &self.w.samples.baked_q;
        let r = match c0 {
            None => baked_q[j],
            Some(_) => slerp(&self.ends[slot], u),
        };
        if dot(r, baked_q[k * self.w.sk.len() + j]).abs() < self.w.min_cos { None } else { Some(r) }
    }

    /// Joint `j`'s translation as the group plays it (at `u` between the
    /// keys `a0` and `c0`; held at its baked sample 0 when unkeyed).
    fn translation(&self, j: usize, a0: usize, c0: Option<usize>, u: f64) -> [f64; 3] {
        let n = self.w.sk.len();
        match c0 {
            None => self.w.samples.baked_t[j],
            Some(c0) => {
                let played_t = &self.w.samples.played_t;
                let (ta, tc) = (played_t[a0 * n + j], played_t[c0 * n + j]);
                std::array::from_fn(|v| ta[v] + (tc[v] - ta[v]) * u)
            }
        }
    }

    /// Whether joint `x`'s error `d` `[m]` at sample `k` is within its
    /// bounds scaled by `scale`.
    fn within_bounds(&self, x: usize, k: usize, d: [f64; 3], scale: f64) -> bool {
        let sk = self.w.sk;
        let (pos2, contact2) = self.bound2[x];
        let over_p = sk.extremity[x] && d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > pos2 * scale;
        let over_c = sk.foot_of[x].is_some_and(|side| self.w.contacts.planted[k][side])
            && d[0] * d[0] + d[2] * d[2] > contact2 * scale;
        !over_p && !over_c
    }

    /// [`Self::within`] for a group whose channels all drive one joint `j`
    /// (its rotation, its translation or both: a single channel, or the
    /// root's hips), without forward kinematics: turning j's local rotation
    /// from r₀ (the pose as played so far) to r turns its whole subtree
    /// rigidly about j by the world rotation Δ = (q_parent r)(q_parent r₀)⁻¹,
    /// and moving its local translation moves the subtree with j, so a
    /// joint x below moves to j' + Δ(x − j).
    fn within_rigid(&self, j: usize, a0: usize, c0: Option<usize>, k: usize, u: f64) -> bool {
        let (sk, wq) = (self.w.sk, &self.pose.wq);
        let n = sk.len();
        let parent = sk.parents[j].map_or([0.0, 0.0, 0.0, 1.0], |p| wq[k * n + p]);
        // The turn of the subtree, when the group turns j.
        let turn = match self.slot_of[j].0 {
            Some(slot) => {
                let Some(r) = self.rotation(slot, j, c0, k, u) else { return false };
                let old = wq[k * n + j];
                Some(mul(mul(parent, r), [-old[0], -old[1], -old[2], old[3]]))
            }
            None => None,
        };
        // The move of j, when the group moves it.
        let shift = self.slot_of[j].1.map(|_| self.shift(j, parent, a0, c0, k, u));
        let count = self.checked.len();
        for (xi, &x) in self.checked.iter().enumerate() {
            let (o, e) = self.rigid[k * count + xi];
            let moved = match turn {
                Some(turn) => rotate(turn, o),
                None => o,
            };
            let d: [f64; 3] = match shift {
                None => std::array::from_fn(|v| e[v] + moved[v] - o[v]),
                Some(sh) => std::array::from_fn(|v| e[v] + sh[v] + moved[v] - o[v]),
            };
            if !self.within_bounds(x, k, d, INSIDE) {
                return false;
            }
        }
        true
    }

    /// The move `[m]` of joint `j` (world rotation of its parent `parent`)
    /// at sample `k` when the group plays its translation.
    fn shift(&self, j: usize, parent: [f64; 4], a0: usize, c0: Option<usize>, k: usize, u: f64) -> [f64; 3] {
        let (sk, wp) = (self.w.sk, &self.pose.wp);
        let n = sk.len();
        let t = self.translation(j, a0, c0, u);
        let at: [f64; 3] = match sk.parents[j] {
            Some(px) => {
                let (pp, ps) = (wp[k * n + px], sk.world_scales[px]);
                let d = rotate(parent, std::array::from_fn(|v| t[v] * ps[v]));
                std::array::from_fn(|v| pp[v] + d[v])
            }
            None => t,
        };
        let old = wp[k * n + j];
        std::array::from_fn(|v| at[v] - old[v])
    }

    /// [`Self::within`] by forward kinematics of the group's subtree from
    /// its parent's world transform as played.
    fn within_subtree(&mut self, a0: usize, c0: Option<usize>, k: usize, u: f64) -> bool {
        let (sk, pose) = (self.w.sk, self.pose);
        let n = sk.len();
        for xi in 0..self.sub.len() {
            let x = self.sub[xi];
            let (mut r, mut t) = (pose.local_q[k * n + x], pose.local_t[k * n + x]);
            if let Some(slot) = self.slot_of[x].0 {
                let Some(q) = self.rotation(slot, x, c0, k, u) else { return false };
                r = q;
            }
            if self.slot_of[x].1.is_some() {
                t = self.translation(x, a0, c0, u);
            }
            match sk.parents[x] {
                Some(px) => {
                    let (pp, pq) = if sk.ancestor[px][self.group.top] {
                        (self.gp[px], self.gq[px])
                    } else {
                        (pose.wp[k * n + px], pose.wq[k * n + px])
                    };
                    let d = rotate(pq, std::array::from_fn(|v| t[v] * sk.world_scales[px][v]));
                    self.gp[x] = std::array::from_fn(|v| pp[v] + d[v]);
                    self.gq[x] = mul(pq, r);
                }
                None => (self.gp[x], self.gq[x]) = (t, r),
            }
        }
        self.checked.iter().all(|&x| {
            let w = self.w.samples.world[k * n + x];
            let d: [f64; 3] = std::array::from_fn(|v| self.gp[x][v] - w[v]);
            self.within_bounds(x, k, d, 1.0)
        })
    }
}

/// Per sample and joint of `checked` (sample-major), joint x's offset
/// `x − j` from joint `j` and its error, in `pose` (world transforms
/// placed). Cost: O(m · s).
fn rigid_offsets(w: &Window, pose: &Pose, checked: &[usize], j: usize) -> Vec<([f64; 3], [f64; 3])> {
    let n = w.sk.len();
    let mut rigid = Vec::with_capacity(w.m * checked.len());
    for k in 0..w.m {
        for &x in checked {
            let (px, pj, world) = (pose.wp[k * n + x], pose.wp[k * n + j], w.samples.world[k * n + x]);
            rigid.push((std::array::from_fn(|v| px[v] - pj[v]), std::array::from_fn(|v| px[v] - world[v])));
        }
    }
    rigid
}
