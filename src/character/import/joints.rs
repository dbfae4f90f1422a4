//! Which nodes of an imported scene become joints, and which joints are the
//! feet, toes and hips.
//!
//! Candidates are skin joints, animated nodes and rigid-mesh holders, with
//! their ancestors; the feet and hips are found by name among them; the
//! joints kept are those that influence geometry, are designated, or carry
//! a rigid mesh under a skin joint — with their ancestors.

use super::scene::{Geometry, SceneTree};
use crate::character::{Joint, Skeleton};
use std::collections::{BTreeMap, BTreeSet};

/// The nodes that are joints candidates: skin joints, animated nodes and
/// rigid-mesh holders, with their ancestors.
pub(super) fn candidates(tree: &SceneTree<'_>) -> Vec<bool> {
    let mut joint = vec![false; tree.nodes.len()];
    for &i in &tree.order {
        if tree.skin_joint[i] || tree.animated[i] || tree.is_rigid_mesh(i) {
            let mut k = Some(i);
            while let Some(x) = k {
                joint[x] = true;
                k = tree.parent[x];
            }
        }
    }
    joint
}

/// The joints locomotion needs, by node index.
pub(super) struct Designated {
    /// Left and right foot (ankle) joints.
    pub feet: [usize; 2],
    /// Left and right toe (ball) joints below the feet, if any.
    pub toes: [Option<usize>; 2],
    /// The hips (pelvis).
    pub hips: usize,
    /// The joint candidates they were chosen from.
    pub candidates: Vec<bool>,
}

/// Side of a joint name: 0 left, 1 right (`Left…`, `…L`, `….L`, `…_l`,
/// `L_…`, and the same for right).
fn side_of(n: &str) -> Option<usize> {
    let l = n.to_lowercase();
    if l.contains("left") || n.ends_with('L') || n.ends_with(".L") || l.ends_with("_l") || n.contains("L_") {
        Some(0)
    } else if l.contains("right") || n.ends_with('R') || n.ends_with(".R") || l.ends_with("_r") || n.contains("R_") {
        Some(1)
    } else {
        None
    }
}

/// Finds the feet (`foot`, `ankle`), toes (`toe`, `ball`, below their foot)
/// and hips (`hips`, `pelvis`, else the deepest common ancestor of the
/// feet) by name among the candidates.
///
/// # Errors
/// What is missing, as a sentence.
pub(super) fn designate(tree: &SceneTree<'_>) -> Result<Designated, String> {
    let joint = candidates(tree);
    let find = |keys: &[&str], side: Option<usize>| -> Option<usize> {
        tree.order.iter().copied().filter(|&i| joint[i]).find(|&i| {
            let n = tree.name(i);
            let l = n.to_lowercase();
            keys.iter().any(|k| l.contains(k))
                && !l.contains("end")
                && !l.contains("pole")
                && !l.contains("target")
                && tree.nodes[i].mesh().is_none()
                && side_of(&n) == side
        })
    };
    let feet: Vec<usize> = (0..2)
        .map(|s| find(&["foot", "ankle"], Some(s)))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| "no left and right foot joints found (names with foot or ankle and L/R)".to_string())?;
    let feet = [feet[0], feet[1]];
    let toes = std::array::from_fn(|s| {
        find(&["toe", "ball"], Some(s)).filter(|&t| tree.parent[t].is_some_and(|p| tree.is_ancestor(feet[s], p)))
    });
    let hips = find(&["hips", "pelvis"], None)
        .or_else(|| {
            // The deepest common ancestor of the feet.
            let mut k = Some(feet[0]);
            while let Some(x) = k {
                if tree.is_ancestor(x, feet[1]) {
                    return Some(x);
                }
                k = tree.parent[x];
            }
            None
        })
        .ok_or_else(|| "no hips joint found (a name with hips or pelvis)".to_string())?;
    Ok(Designated { feet, toes, hips, candidates: joint })
}

/// The joints kept, as a skeleton.
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
    /// its nearest kept ancestor (or its top node).
    pub fn joint_of(&self, node: usize) -> usize {
        self.index_of[&self.nearest(node)]
    }

    fn nearest(&self, mut i: usize) -> usize {
        loop {
            if self.keep[i] {
                return i;
            }
            match self.parent[i] {
                Some(p) => i = p,
                None => return i,
            }
        }
    }
}

/// Keeps the candidates that influence geometry (a rigid, unanimated mesh
/// holder does not count), are designated, or are skin joints carrying a
/// rigid mesh (a leg part under its bone), with their ancestors; names are
/// made unique (`name node i`). O(nodes).
pub(super) fn keep(tree: &SceneTree<'_>, geometry: &Geometry, designated: &Designated) -> Kept {
    let n_nodes = tree.nodes.len();
    let mut keep = vec![false; n_nodes];
    for &i in tree.order.iter().rev() {
        if !designated.candidates[i] {
            continue;
        }
        let is_designated = designated.feet.contains(&i) || designated.toes.contains(&Some(i)) || i == designated.hips;
        // A rigid mesh holder that is not animated does not count as bound.
        let bound = geometry.influences_node[i] && (tree.animated[i] || !tree.is_rigid_mesh(i));
        let holds_rigid =
            tree.skin_joint[i] && tree.nodes[i].children().any(|c| c.mesh().is_some() && c.skin().is_none());
        if is_designated || bound || holds_rigid {
            let mut k = Some(i);
            while let Some(x) = k {
                keep[x] = true;
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
            Joint { name, parent: tree.parent[i].map(|p| kept.joint_of(p)), rest: tree.local[i] }
        })
        .collect();
    kept.skeleton = Skeleton { joints };
    kept
}
