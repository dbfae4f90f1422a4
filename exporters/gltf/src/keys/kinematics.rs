//! The skeleton as the key reduction reads it, and forward kinematics: the
//! world (instance-node frame) transforms of the joints of one instance's
//! window as baked and as played, and the errors the played pose shows.
//!
//! Arrays of samples × joints hold sample `k`'s joint `j` at `k · n + j`.

use crowdpatch_runtime::skeletal::{AgentAnimation, Character};

use super::quat::{dequantise, dot, mul, normalise, rotate};
use crate::played::Played;

/// The joint hierarchy of a character and what the bounds hold at each
/// joint.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Skeleton {
    /// Per joint, its parent (parents come before their children).
    pub parents: Vec<Option<usize>>,
    /// Per joint, its constant local scale.
    pub scales: Vec<[f64; 3]>,
    /// Per joint, its world scale (scales are not animated).
    pub world_scales: Vec<[f64; 3]>,
    /// `ancestor[x][j]`: `j` is `x` or an ancestor of `x`.
    pub ancestor: Vec<Vec<bool>>,
    /// Per joint, the foot (0: left, 1: right) it belongs to: the foot
    /// joint and its descendants.
    pub foot_of: Vec<Option<usize>>,
    /// Per joint, whether its position is bounded: leaf joints and the
    /// feet.
    pub extremity: Vec<bool>,
}

impl Skeleton {
    /// The skeleton of `c`. Cost: O(n²) for n joints.
    pub fn of(c: &Character) -> Skeleton {
        let parents: Vec<Option<usize>> = c.joints.iter().map(|j| j.parent).collect();
        let scales: Vec<[f64; 3]> = c.joints.iter().map(|j| j.scale).collect();
        let n = parents.len();
        let mut ancestor = vec![vec![false; n]; n];
        for x in 0..n {
            ancestor[x][x] = true;
            if let Some(p) = parents[x] {
                let (lo, hi) = ancestor.split_at_mut(x);
                for (j, &is) in lo[p].iter().enumerate() {
                    hi[0][j] |= is;
                }
            }
        }
        let mut foot_of = vec![None::<usize>; n];
        for (side, &f) in [c.left_foot, c.right_foot].iter().enumerate() {
            foot_of[f] = Some(side);
        }
        for j in 0..n {
            if foot_of[j].is_none() {
                foot_of[j] = parents[j].and_then(|p| foot_of[p]);
            }
        }
        let mut extremity: Vec<bool> = (0..n).map(|j| !parents.contains(&Some(j))).collect();
        extremity[c.left_foot] = true;
        extremity[c.right_foot] = true;
        let mut world_scales = vec![[1.0; 3]; n];
        for x in 0..n {
            world_scales[x] = match parents[x] {
                Some(px) => std::array::from_fn(|v| world_scales[px][v] * scales[x][v]),
                None => scales[x],
            };
        }
        Skeleton { parents, scales, world_scales, ancestor, foot_of, extremity }
    }

    /// The number of joints.
    pub fn len(&self) -> usize {
        self.parents.len()
    }

    /// The joints of the subtree of `top` (all joints for `None`), parents
    /// first.
    pub fn subtree(&self, top: Option<usize>) -> Vec<usize> {
        (top.unwrap_or(0)..self.len()).filter(|&x| top.is_none_or(|t| self.ancestor[x][t])).collect()
    }
}

/// Forward kinematics of one pose: world positions `p`, rotations `q` and
/// scales `s` of every joint from its local rotation `rot[j]` and
/// translation `tr[j]` (parents first). Cost: O(n).
pub(super) fn fk(
    sk: &Skeleton,
    rot: &[[f64; 4]],
    tr: &[[f64; 3]],
    p: &mut [[f64; 3]],
    q: &mut [[f64; 4]],
    s: &mut [[f64; 3]],
) {
    for j in 0..sk.len() {
        let (r, t) = (rot[j], tr[j]);
        match sk.parents[j] {
            Some(pj) => {
                let a = rotate(q[pj], std::array::from_fn(|i| t[i] * s[pj][i]));
                p[j] = std::array::from_fn(|i| p[pj][i] + a[i]);
                q[j] = mul(q[pj], r);
                s[j] = std::array::from_fn(|i| s[pj][i] * sk.scales[j][i]);
            }
            None => (p[j], q[j], s[j]) = (t, r, sk.scales[j]),
        }
    }
}

/// The samples of one instance's window (samples × joints): baked, as a
/// player decodes them, and the baked world positions.
#[derive(Debug, Default)]
pub(super) struct Samples {
    /// Baked local rotations, normalised.
    pub baked_q: Vec<[f64; 4]>,
    /// Local rotations as played (quantised), normalised.
    pub played_q: Vec<[f64; 4]>,
    /// Baked local translations `[m]`.
    pub baked_t: Vec<[f64; 3]>,
    /// Local translations as played `[m]`.
    pub played_t: Vec<[f64; 3]>,
    /// Baked world positions `[m]`.
    pub world: Vec<[f64; 3]>,
}

impl Samples {
    /// Fills the arrays with the samples `window` of agent `a`, played as
    /// `played` writes them. Cost: O(m · n) for m samples.
    pub fn fill(&mut self, sk: &Skeleton, a: &AgentAnimation, window: &[usize], played: &Played) {
        let n = sk.len();
        let m = window.len();
        let Samples { baked_q, played_q, baked_t, played_t, world } = self;
        baked_q.clear();
        baked_q
            .extend(window.iter().flat_map(|&w| (0..n).map(move |j| normalise(a.rotations[w * n + j].map(f64::from)))));
        played_q.clear();
        played_q.extend(
            window
                .iter()
                .flat_map(|&w| (0..n).map(move |j| normalise(dequantise(played.rotation(a.rotations[w * n + j]))))),
        );
        baked_t.clear();
        baked_t.extend(window.iter().flat_map(|&w| (0..n).map(move |j| a.translations[w * n + j].map(f64::from))));
        played_t.clear();
        played_t.extend(
            window
                .iter()
                .flat_map(|&w| (0..n).map(move |j| played.translation(a.translations[w * n + j]).map(f64::from))),
        );
        let (mut p, mut q, mut s) = (vec![[0.0; 3]; n], vec![[0.0; 4]; n], vec![[0.0; 3]; n]);
        world.clear();
        world.resize(m * n, [0.0; 3]);
        for k in 0..m {
            let at = k * n..(k + 1) * n;
            fk(sk, &baked_q[at.clone()], &baked_t[at.clone()], &mut p, &mut q, &mut s);
            world[at].copy_from_slice(&p);
        }
    }
}

/// The pose as played so far (samples × joints): local values and world
/// transforms.
#[derive(Debug, Default)]
pub(super) struct Pose {
    /// Local rotations.
    pub local_q: Vec<[f64; 4]>,
    /// Local translations `[m]`.
    pub local_t: Vec<[f64; 3]>,
    /// World positions `[m]`.
    pub wp: Vec<[f64; 3]>,
    /// World rotations.
    pub wq: Vec<[f64; 4]>,
}

/// Sets the world transforms of the joints of the subtree of `top` (all
/// joints for `None`) at each of `m` samples from the local values of
/// `pose`. Cost: O(m · s) for s joints in the subtree.
pub(super) fn place(sk: &Skeleton, top: Option<usize>, m: usize, pose: &mut Pose) {
    let n = sk.len();
    let Pose { local_q, local_t, wp, wq } = pose;
    let joints = sk.subtree(top);
    for k in 0..m {
        for &x in &joints {
            let (r, t) = (local_q[k * n + x], local_t[k * n + x]);
            let i = k * n + x;
            match sk.parents[x] {
                Some(px) => {
                    let (pp, pq, ps) = (wp[k * n + px], wq[k * n + px], sk.world_scales[px]);
                    let d = rotate(pq, std::array::from_fn(|v| t[v] * ps[v]));
                    wp[i] = std::array::from_fn(|v| pp[v] + d[v]);
                    wq[i] = mul(pq, r);
                }
                None => (wp[i], wq[i]) = (t, r),
            }
        }
    }
}

/// The largest errors the played pose shows against the baked samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Errors {
    /// Largest extremity position error `[m]`.
    pub position: f64,
    /// Largest local joint rotation error `[rad]`.
    pub rotation: f64,
    /// Largest horizontal position error of a planted foot's joints `[m]`.
    pub contact: f64,
}

/// The errors of `pose` (world transforms placed) against `samples` at
/// each sample, `planted[k][side]` telling which feet sample `k` holds
/// planted. Cost: O(m · n).
pub(super) fn measure(sk: &Skeleton, samples: &Samples, pose: &Pose, planted: &[[bool; 2]]) -> Errors {
    let n = sk.len();
    let mut out = Errors { position: 0.0, rotation: 0.0, contact: 0.0 };
    let mut cos_r = 1.0f64;
    for (k, feet) in planted.iter().enumerate() {
        for x in 0..n {
            cos_r = cos_r.min(dot(pose.local_q[k * n + x], samples.baked_q[k * n + x]).abs());
            let (u, v) = (pose.wp[k * n + x], samples.world[k * n + x]);
            let d: [f64; 3] = std::array::from_fn(|i| u[i] - v[i]);
            if sk.extremity[x] {
                out.position = out.position.max((d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt());
            }
            if sk.foot_of[x].is_some_and(|side| feet[side]) {
                out.contact = out.contact.max((d[0] * d[0] + d[2] * d[2]).sqrt());
            }
        }
    }
    out.rotation = 2.0 * cos_r.min(1.0).acos();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::keys::tests::Parts;

    #[test]
    fn leaves_and_feet_are_bounded_and_a_foot_owns_the_joints_below_it() {
        let parts = Parts::walker(11);
        let sk = &parts.skeleton;
        // hips, leg_l, foot_l, leg_r, foot_r, arm, hand.
        assert_eq!(sk.extremity, [false, false, true, false, true, false, true]);
        assert_eq!(sk.foot_of, [None, None, Some(0), None, Some(1), None, None]);
        assert!(sk.ancestor[2][0] && sk.ancestor[2][1] && sk.ancestor[2][2] && !sk.ancestor[2][3]);
        assert_eq!(sk.subtree(Some(3)), vec![3, 4]);
        assert_eq!(sk.subtree(None), (0..7).collect::<Vec<_>>());
    }

    #[test]
    fn placing_the_baked_pose_gives_the_baked_world_and_no_error() {
        let parts = Parts::walker(41);
        let (sk, samples) = (&parts.skeleton, &parts.samples);
        let m = parts.times.len();
        let mut pose = Pose {
            local_q: samples.baked_q.clone(),
            local_t: samples.baked_t.clone(),
            wp: vec![[0.0; 3]; m * sk.len()],
            wq: vec![[0.0; 4]; m * sk.len()],
        };
        place(sk, None, m, &mut pose);
        assert_eq!(pose.wp, samples.world);
        let errors = measure(sk, samples, &pose, &parts.contacts.planted);
        // (The rotation's acos near 1 reads a rounding of the dot product as
        // 10⁻⁸ rad.)
        assert!(errors.position == 0.0 && errors.contact == 0.0 && errors.rotation < 1e-7, "{errors:?}");
        // Raising the hips by 1 cm: every extremity 1 cm off, a planted
        // foot not off horizontally.
        for k in 0..m {
            pose.local_t[k * sk.len()][1] += 0.01;
        }
        place(sk, Some(0), m, &mut pose);
        let errors = measure(sk, samples, &pose, &parts.contacts.planted);
        assert!((errors.position - 0.01).abs() < 1e-9, "{errors:?}");
        assert!(errors.contact < 1e-12 && errors.rotation < 1e-7, "{errors:?}");
        assert!(parts.contacts.planted.iter().any(|p| p[0]), "the left foot is planted a while");
    }
}
