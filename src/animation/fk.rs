//! Forward kinematics of single joints: the global matrix of one joint as
//! the product along its chain of ancestors, root first. It performs the
//! same products in the same order as
//! [`crate::character::Skeleton::globals`], so it gives the same bits for
//! that joint, at the cost of the chain's length (4–6 joints for a foot)
//! rather than the whole skeleton's. The IK and the key refinement need a
//! few joints of each pose, not all of them.

use crate::character::{Skeleton, Transform, V3, position_of};
use nalgebra::Matrix4;

/// Global (model-frame) matrix of joint `j` in `pose`. O(depth of `j`).
pub fn global_of(sk: &Skeleton, pose: &[Transform], j: usize) -> Matrix4<f64> {
    let local = pose[j].matrix();
    match sk.joints[j].parent {
        Some(p) => global_of(sk, pose, p) * local,
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
                Some((_, parent)) => parent * local,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::character::builtin;

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
