//! Which nodes of an imported scene become joints.
//!
//! Candidates are the scene's skin joints and animated nodes with their
//! ancestors. Kept are the candidates that move geometry (a skinned vertex
//! weighs on them, or a mesh without a skin rides on them), the humanoid
//! bones, and their ancestors; IK targets, controls and `_end` leaves that
//! move nothing are dropped.

use super::scene::{Geometry, SceneTree};
use crate::character::humanoid::Rig;
use crate::character::{Joint, Skeleton, V3, position_of};
use std::collections::{BTreeMap, BTreeSet};

/// The rig the humanoid mapping reads: every node of the file with its
/// rest position; eligible are the scene's skin joints without a mesh (or,
/// in a file without a skin, its animated nodes).
pub(super) fn rig(tree: &SceneTree<'_>) -> Rig {
    let skinned = tree.has_skin();
    let n = tree.nodes.len();
    Rig {
        names: (0..n).map(|i| tree.name(i)).collect(),
        parents: tree.parent.clone(),
        positions: tree.global.iter().map(position_of).collect::<Vec<V3>>(),
        eligible: (0..n)
            .map(|i| {
                tree.in_scene[i]
                    && tree.nodes[i].mesh().is_none()
                    && if skinned { tree.skin_joint[i] } else { tree.animated[i] }
            })
            .collect(),
    }
}

/// The joints kept, as a skeleton in the file's frame.
pub(super) struct Kept {
    /// Whether each node is kept.
    keep: Vec<bool>,
    /// Parent of each node in the scene.
    parent: Vec<Option<usize>>,
    /// Joint index of each kept node.
    pub index_of: BTreeMap<usize, usize>,
    /// Kept nodes, parents first (joint order).
    pub nodes: Vec<usize>,
    /// The skeleton of the kept joints, rest transforms from the file.
    pub skeleton: Skeleton,
}

impl Kept {
    /// The joint a node's motion follows: the node itself when kept, else
    /// its nearest kept ancestor; `None` when none is.
    pub fn joint_of(&self, node: usize) -> Option<usize> {
        let mut i = node;
        loop {
            if self.keep[i] {
                return self.index_of.get(&i).copied();
            }
            i = self.parent[i]?;
        }
    }
}

/// Keeps the candidates (skin joints and animated nodes of the scene, with
/// their ancestors) that move geometry or are `bones` (the humanoid bones'
/// nodes), and the nearest candidate above each mesh that rides on the
/// skeleton; then every ancestor of those. With `all_candidates` (an
/// animation file without a mesh) every candidate is kept. Names are made
/// unique (`name node i`). O(nodes · depth).
pub(super) fn keep(tree: &SceneTree<'_>, geometry: &Geometry, bones: &[usize], all_candidates: bool) -> Kept {
    let n_nodes = tree.nodes.len();
    let mut candidate = vec![false; n_nodes];
    for &i in &tree.order {
        if tree.skin_joint[i] || tree.animated[i] {
            let mut k = Some(i);
            while let Some(x) = k {
                candidate[x] = true;
                k = tree.parent[x];
            }
        }
    }
    let mut keep = vec![false; n_nodes];
    let mark = |keep: &mut Vec<bool>, i: usize| {
        let mut k = Some(i);
        while let Some(x) = k {
            keep[x] = true;
            k = tree.parent[x];
        }
    };
    for &i in &tree.order {
        let rigid_holder = tree.is_rigid_mesh(i) && geometry.influences_node[i];
        if !rigid_holder && candidate[i] && (all_candidates || geometry.influences_node[i] || bones.contains(&i)) {
            mark(&mut keep, i);
        }
        if rigid_holder {
            // The mesh rides on its nearest candidate ancestor (itself when
            // it is animated).
            let mut k = Some(i);
            while let Some(x) = k {
                if candidate[x] && (x != i || tree.animated[i] || tree.skin_joint[i]) {
                    mark(&mut keep, x);
                    break;
                }
                k = tree.parent[x];
            }
        }
    }
    let nodes: Vec<usize> = tree.order.iter().copied().filter(|&i| keep[i]).collect();
    let index_of: BTreeMap<usize, usize> = nodes.iter().enumerate().map(|(k, &i)| (i, k)).collect();
    let mut kept = Kept { keep, parent: tree.parent.clone(), index_of, nodes, skeleton: Skeleton::default() };
    let mut names_seen = BTreeSet::new();
    let joints: Vec<Joint> = kept
        .nodes
        .iter()
        .map(|&i| {
            let mut name = tree.name(i);
            if name.is_empty() || !names_seen.insert(name.clone()) {
                name = format!("{name} node {i}");
                names_seen.insert(name.clone());
            }
            // Kept joints are closed under ancestry: a top joint is a scene root.
            Joint { name, parent: tree.parent[i].and_then(|p| kept.joint_of(p)), rest: tree.local[i] }
        })
        .collect();
    kept.skeleton = Skeleton { joints };
    kept
}
