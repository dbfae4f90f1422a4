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
            }
        }
    }
}
