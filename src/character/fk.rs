//! Forward kinematics of single joints: the global matrix of one joint as
//! the product along its chain of ancestors, root first. It performs the
//! same products in the same order as
//! [`crate::character::Skeleton::globals`], so it gives the same bits for
//! that joint, at the cost of the chain's length (4–6 joints for a foot)
//! rather than the whole skeleton's. The IK and the key refinement need a
//! few joints of each pose, not all of them.

use crate::character::{Pose, Quat, Skeleton, Transform, V3, mul4, position_of, rotation_of};
use nalgebra::Matrix4;

/// Global (model-frame) matrix of joint `j` in `pose`. O(depth of `j`).
pub fn global_of(sk: &Skeleton, pose: &[Transform], j: usize) -> Matrix4<f64> {
    let local = pose[j].matrix();
    match sk.joints[j].parent {
        Some(p) => mul4(&global_of(sk, pose, p), &local),
        None => local,
    }
}

/// Model-frame position `[m]` of joint `j` in `pose`. O(depth of `j`).
pub fn position(sk: &Skeleton, pose: &[Transform], j: usize) -> V3 {
    position_of(&global_of(sk, pose, j))
}

/// Global matrices of joint `j` and of its ancestors, root first: one pass
/// along the chain, the same bits as [`global_of`] for each of them.
#[derive(Debug, Clone)]
pub struct Chain(Vec<(usize, Matrix4<f64>)>);

impl Chain {
    /// The chain of joint `j` in `pose`. O(depth of `j`).
    pub fn new(sk: &Skeleton, pose: &[Transform], j: usize) -> Chain {
        let mut joints = vec![j];
        while let Some(p) = sk.joints[joints[joints.len() - 1]].parent {
            joints.push(p);
        }
        let mut out: Vec<(usize, Matrix4<f64>)> = Vec::with_capacity(joints.len());
        for &k in joints.iter().rev() {
            let local = pose[k].matrix();
            let g = match out.last() {
                Some((_, parent)) => mul4(parent, &local),
                None => local,
            };
            out.push((k, g));
        }
        Chain(out)
    }

    /// Global matrix of joint `k` if it is on the chain.
    pub fn get(&self, k: usize) -> Option<&Matrix4<f64>> {
        self.0.iter().find(|x| x.0 == k).map(|x| &x.1)
    }

    /// Global matrix of joint `k`: from the chain when it is on it, else
    /// computed from `pose`.
    pub fn global(&self, sk: &Skeleton, pose: &[Transform], k: usize) -> Matrix4<f64> {
        self.get(k).copied().unwrap_or_else(|| global_of(sk, pose, k))
    }

    /// Model-frame position `[m]` of joint `k` (see [`Chain::global`]).
    pub fn position(&self, sk: &Skeleton, pose: &[Transform], k: usize) -> V3 {
        position_of(&self.global(sk, pose, k))
    }
}

/// A pose with the global matrices of its joints computed on demand and
/// kept until the pose changes: each global is its parent's times the
/// joint's local matrix, the products of
/// [`crate::character::Skeleton::globals`] in the same order, so every
/// value is the same bits as [`global_of`] gives for the pose as it is. A
/// change of a joint ([`PoseFk::set_rotation`], [`PoseFk::translate`])
/// forgets that joint's matrix and the globals of its subtree only.
///
/// The IK and placement of one synthesised pose ask for the same feet
/// several times between changes; each product is then made once.
#[derive(Debug, Clone)]
pub struct PoseFk<'s> {
    sk: &'s Skeleton,
    pose: Pose,
    /// Per joint, what is known of it.
    known: Vec<Known>,
}

/// What a [`PoseFk`] knows of one joint.
#[derive(Debug, Clone, Copy, Default)]
struct Known {
    local: Option<Matrix4<f64>>,
    global: Option<Matrix4<f64>>,
    rotation: Option<Quat>,
}

impl<'s> PoseFk<'s> {
    /// `pose` of `sk`, nothing computed yet.
    pub fn new(sk: &'s Skeleton, pose: Pose) -> PoseFk<'s> {
        let known = vec![Known::default(); pose.len()];
        PoseFk { sk, pose, known }
    }

    /// The skeleton.
    pub fn skeleton(&self) -> &'s Skeleton {
        self.sk
    }

    /// The pose.
    pub fn pose(&self) -> &Pose {
        &self.pose
    }

    /// The pose, given back.
    pub fn into_pose(self) -> Pose {
        self.pose
    }

    /// Global (model-frame) matrix of joint `j`: [`global_of`], made once
    /// per change. O(depth of `j`) at most.
    pub fn global(&mut self, j: usize) -> Matrix4<f64> {
        if let Some(g) = self.known[j].global {
            return g;
        }
        let local = match self.known[j].local {
            Some(m) => m,
            None => {
                let m = self.pose[j].matrix();
                self.known[j].local = Some(m);
                m
            }
        };
        let g = match self.sk.joints[j].parent {
            Some(p) => mul4(&self.global(p), &local),
            None => local,
        };
        self.known[j].global = Some(g);
        g
    }

    /// Model-frame position `[m]` of joint `j`.
    pub fn position(&mut self, j: usize) -> V3 {
        position_of(&self.global(j))
    }

    /// Model-frame rotation of joint `j`: [`rotation_of`] its global.
    pub fn rotation(&mut self, j: usize) -> Quat {
        if let Some(q) = self.known[j].rotation {
            return q;
        }
        let q = rotation_of(&self.global(j));
        self.known[j].rotation = Some(q);
        q
    }

    /// Sets the local rotation of joint `j`.
    pub fn set_rotation(&mut self, j: usize, q: Quat) {
        self.pose[j].rotation = q;
        self.changed(j);
    }

    /// Moves joint `j` by `d` `[m]` in its parent's frame.
    pub fn translate(&mut self, j: usize, d: V3) {
        self.pose[j].translation += d;
        self.changed(j);
    }

    /// Forgets what depends on joint `j`'s local transform: its local
    /// matrix and the globals of its subtree (parents come before their
    /// children, and a child's global is kept only while its parent's is).
    fn changed(&mut self, j: usize) {
        self.known[j] = Known::default();
        for k in j + 1..self.pose.len() {
            if self.sk.joints[k].parent.is_some_and(|p| self.known[p].global.is_none()) {
                self.known[k].global = None;
                self.known[k].rotation = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::character::builtin;

    #[test]
    fn cached_globals_are_the_bits_of_the_pose_as_changed() {
        let c = builtin::character();
        let sk = &c.skeleton;
        let clip = &c.clips[0];
        let mut fk = PoseFk::new(sk, clip.frames[0].clone());
        let check = |fk: &mut PoseFk<'_>| {
            let all = sk.globals(fk.pose());
            for (j, g) in all.iter().enumerate() {
                assert_eq!(fk.global(j), *g, "joint {j}");
                assert_eq!(fk.rotation(j), rotation_of(g), "joint {j}");
            }
        };
        check(&mut fk);
        // Changes deep in a leg, at the hips, then a read of one foot only
        // before the next change.
        let foot = c.foot(crowdpatch_runtime::format::Foot::Left).contact;
        for (k, &j) in [foot, 14, 0, 13, 15].iter().enumerate() {
            fk.set_rotation(j, clip.frames[k + 1][j].rotation);
            let _ = fk.position(foot);
            fk.translate(j, V3::new(0.01, -0.02, 0.003 * k as f64));
            let _ = fk.global(foot);
            check(&mut fk);
        }
    }

    #[test]
    fn one_joint_gives_the_same_bits_as_the_whole_skeleton() {
        let c = builtin::character();
        let sk = &c.skeleton;
        let clip = &c.clips[0];
        for frame in [0, clip.frames.len() / 3] {
            let pose = &clip.frames[frame];
            let all = sk.globals(pose);
            for (j, g) in all.iter().enumerate() {
                assert_eq!(global_of(sk, pose, j), *g, "joint {j}");
                let chain = Chain::new(sk, pose, j);
                let mut k = Some(j);
                while let Some(i) = k {
                    assert_eq!(chain.get(i), Some(&all[i]), "joint {i} on the chain of {j}");
                    k = sk.joints[i].parent;
                }
            }
        }
    }
}
