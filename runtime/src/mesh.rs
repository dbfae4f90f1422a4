//! Reading the character of a skeletal bake back from its GLB: the skinned
//! mesh every agent instance shares and the skin's joints with their
//! inverse bind matrices ([`Character`]), so that a game draws the walkers
//! with the mesh and skin the tile was baked with, whatever the file's
//! compression (the exporter writes one mesh and one inverse-bind accessor,
//! shared by every instance's skin; see `exporters/gltf`).
//!
//! What is read: the first skin, its `inverseBindMatrices` and `joints`
//! (the joint names, the parents from the node tree), the mesh of the first
//! node using that skin, each primitive's `POSITION`, `NORMAL`, `JOINTS_0`,
//! `WEIGHTS_0` and indices, its material's name and base colour; the feet,
//! hips, height and leg length from the scene's `extras.crowdpatch.character`.
//! The joints' rest transforms are those of the bind pose, from the inverse
//! bind matrices (local = inverse bind of the parent × bind of the joint).
//! Every index and length is checked; a malformed file gives a
//! [`LoadError`], never a panic.

use crate::error::LoadError;
use crate::format::SceneExtras;
use crate::glb::{self, Root};
use crate::skeletal::{Character, CharacterJoint, SkinnedPrimitive};
use crate::tile::JointClip;

/// Most vertices read per primitive (the built-in character has about 3,000).
const MAX_VERTICES: usize = 1 << 20;

/// The character of a skeletal bake, or `None` when the file has no skin
/// or its scene record no character (a capsule bake). O(vertices + joints).
///
/// # Errors
/// A [`LoadError::Gltf`] naming the object: a skin, mesh, accessor or
/// material index out of range, a primitive that is not a triangle list or
/// lacks an attribute, attributes of different lengths, a joint index past
/// the skin's joints, an inverse bind matrix that cannot be inverted.
pub(crate) fn character(
    root: &Root,
    data: &glb::Data<'_>,
    extras: &SceneExtras,
) -> Result<Option<Character>, LoadError> {
    let (Some(record), Some(skin)) = (extras.character.as_ref(), root.skins.first()) else {
        return Ok(None);
    };
    let n = skin.joints.len();
    if n == 0 || n > u16::MAX as usize {
        return Err(LoadError::gltf("skins[0].joints", format!("has {n} joints; 1 to 65535 are read")));
    }
    for (k, &node) in skin.joints.iter().enumerate() {
        if node >= root.nodes.len() {
            return Err(LoadError::gltf(
                format!("skins[0].joints[{k}]"),
                format!("= {node}, but the file has {} nodes", root.nodes.len()),
            ));
        }
    }
    let Some(ibm_accessor) = skin.inverse_bind_matrices else {
        return Err(LoadError::gltf("skins[0]", "has no inverseBindMatrices"));
    };
    let ibm = glb::floats(root, data, ibm_accessor, "MAT4")?;
    if ibm.len() != 16 * n {
        return Err(LoadError::gltf(
            format!("accessors[{ibm_accessor}]"),
            format!("holds {} matrices for the {n} joints of skins[0]", ibm.len() / 16),
        ));
    }
    // Parents from the node tree: the joint whose node lists it as a child.
    let mut joint_of_node = vec![usize::MAX; root.nodes.len()];
    for (k, &node) in skin.joints.iter().enumerate() {
        joint_of_node[node] = k;
    }
    let mut parents = vec![None; n];
    for (node, nd) in root.nodes.iter().enumerate() {
        let p = joint_of_node[node];
        if p == usize::MAX {
            continue;
        }
        for &c in &nd.children {
            if let Some(&k) = joint_of_node.get(c).filter(|&&k| k != usize::MAX) {
                parents[k] = Some(p);
            }
        }
    }
    let matrices: Vec<[f64; 16]> = ibm.chunks_exact(16).map(|m| std::array::from_fn(|i| f64::from(m[i]))).collect();
    let mut joints = Vec::with_capacity(n);
    for k in 0..n {
        let bind = invert_affine(&matrices[k])
            .ok_or_else(|| LoadError::gltf(format!("accessors[{ibm_accessor}]"), format!("matrix {k} is singular")))?;
        let local = match parents[k] {
            Some(p) => multiply(&matrices[p], &bind),
            None => bind,
        };
        let (translation, rotation, scale) = decompose(&local);
        let name = root.nodes[skin.joints[k]].name.clone().unwrap_or_else(|| format!("joint {k}"));
        joints.push(CharacterJoint {
            name,
            parent: parents[k],
            translation,
            rotation,
            scale,
            inverse_bind: matrices[k],
        });
    }
    let Some(mesh_index) = root.nodes.iter().find(|nd| nd.skin == Some(0)).and_then(|nd| nd.mesh) else {
        return Err(LoadError::gltf("skins[0]", "no node draws a mesh with it"));
    };
    let mesh = root.meshes.get(mesh_index).ok_or_else(|| {
        LoadError::gltf(format!("meshes[{mesh_index}]"), format!("does not exist (the file has {})", root.meshes.len()))
    })?;
    let mut primitives = Vec::with_capacity(mesh.primitives.len());
    for (pi, p) in mesh.primitives.iter().enumerate() {
        primitives.push(primitive(root, data, p, &format!("meshes[{mesh_index}].primitives[{pi}]"), n)?);
    }
    let in_range = |i: usize, what: &str| {
        if i < n {
            Ok(i)
        } else {
            Err(LoadError::extras(format!("character.{what}"), format!("= {i}, but the skin has {n} joints")))
        }
    };
    Ok(Some(Character {
        name: record.name.clone(),
        left_foot: in_range(record.left_foot, "left_foot")?,
        right_foot: in_range(record.right_foot, "right_foot")?,
        hips: in_range(record.hips, "hips")?,
        height: record.height,
        hip_joints: [
            in_range(record.hip_joints[0], "hip_joints[0]")?,
            in_range(record.hip_joints[1], "hip_joints[1]")?,
        ],
        leg_length: record.leg_length,
        sole_points: record
            .sole_points
            .iter()
            .enumerate()
            .map(|(i, p)| {
                Ok(crate::skeletal::SolePoint {
                    joint: in_range(p.joint, &format!("sole_points[{i}].joint"))?,
                    ..p.clone()
                })
            })
            .collect::<Result<_, LoadError>>()?,
        joints,
        primitives,
    }))
}

/// For each joint of the first skin, in the skin's order (that of
/// [`Character::joints`]), its row in the instances' joint clips (the
/// clips' joints are listed breadth first below the instance node): found
/// on the instance whose clip holds the skin's joint nodes; every instance
/// of a bake has the same joint tree. Empty without a skin. O(joints).
///
/// # Errors
/// A skin joint that is no joint of that instance's clip.
pub(crate) fn skin_rows(root: &Root, clips: &[Option<&JointClip>]) -> Result<Vec<u32>, LoadError> {
    let Some(skin) = root.skins.first() else { return Ok(Vec::new()) };
    let Some(&first) = skin.joints.first() else { return Ok(Vec::new()) };
    let Some(clip) = clips.iter().flatten().find(|c| c.joints.iter().any(|j| j.node == first)) else {
        return Err(LoadError::gltf("skins[0].joints", "do not lie below any agent instance node"));
    };
    skin.joints
        .iter()
        .enumerate()
        .map(|(k, &node)| {
            clip.joints.iter().position(|j| j.node == node).map(|r| r as u32).ok_or_else(|| {
                LoadError::gltf(
                    format!("skins[0].joints[{k}]"),
                    format!("= {node}, which is not below the instance node of joints[0]"),
                )
            })
        })
        .collect()
}

/// One skinned primitive: a triangle list with the four attributes.
fn primitive(
    root: &Root,
    data: &glb::Data<'_>,
    p: &glb::Primitive,
    path: &str,
    joints: usize,
) -> Result<SkinnedPrimitive, LoadError> {
    if p.mode.is_some_and(|m| m != 4) {
        return Err(LoadError::gltf(path, format!("has mode {}; triangle lists (4) are read", p.mode.unwrap_or(4))));
    }
    let attribute = |name: &str, ty: &str| -> Result<Vec<f32>, LoadError> {
        let &a = p.attributes.get(name).ok_or_else(|| LoadError::gltf(path, format!("has no {name} attribute")))?;
        glb::floats(root, data, a, ty)
    };
    let positions = attribute("POSITION", "VEC3")?;
    let count = positions.len() / 3;
    if count > MAX_VERTICES {
        return Err(LoadError::gltf(path, format!("has {count} vertices; at most {MAX_VERTICES} are read")));
    }
    let normals = attribute("NORMAL", "VEC3")?;
    let joint_indices = attribute("JOINTS_0", "VEC4")?;
    let weights = attribute("WEIGHTS_0", "VEC4")?;
    for (name, len, width) in
        [("NORMAL", normals.len(), 3), ("JOINTS_0", joint_indices.len(), 4), ("WEIGHTS_0", weights.len(), 4)]
    {
        if len != count * width {
            return Err(LoadError::gltf(path, format!("{name} has {} elements for {count} positions", len / width)));
        }
    }
    if let Some(k) = joint_indices.iter().position(|&j| j < 0.0 || j as usize >= joints) {
        return Err(LoadError::gltf(
            path,
            format!("JOINTS_0 element {} names joint {}, past the skin's {joints}", k / 4, joint_indices[k]),
        ));
    }
    let indices = match p.indices {
        Some(a) => glb::indices(root, data, a, count as u32)?,
        None => (0..count as u32).collect(),
    };
    if indices.len() % 3 != 0 {
        return Err(LoadError::gltf(path, format!("has {} indices, not a whole number of triangles", indices.len())));
    }
    let material = match p.material {
        Some(m) => Some(root.materials.get(m).ok_or_else(|| {
            LoadError::gltf(format!("{path}.material"), format!("= {m}, but the file has {}", root.materials.len()))
        })?),
        None => None,
    };
    let colour = material.and_then(|m| m.pbr.as_ref()).and_then(|p| p.base_colour).unwrap_or([1.0; 4]);
    Ok(SkinnedPrimitive {
        material: material.and_then(|m| m.name.clone()).unwrap_or_default(),
        colour,
        positions: positions.chunks_exact(3).map(|v| [v[0], v[1], v[2]]).collect(),
        normals: normals.chunks_exact(3).map(|v| [v[0], v[1], v[2]]).collect(),
        joints: joint_indices.chunks_exact(4).map(|v| [v[0] as u16, v[1] as u16, v[2] as u16, v[3] as u16]).collect(),
        weights: weights.chunks_exact(4).map(|v| [v[0], v[1], v[2], v[3]]).collect(),
        indices,
    })
}

/// Column-major 4×4 product `a · b`.
fn multiply(a: &[f64; 16], b: &[f64; 16]) -> [f64; 16] {
    std::array::from_fn(|i| {
        let (col, row) = (i / 4, i % 4);
        (0..4).map(|k| a[k * 4 + row] * b[col * 4 + k]).sum()
    })
}

/// Inverse of a column-major affine 4×4 matrix (last row 0 0 0 1), or `None`
/// when its 3×3 part is singular. O(1).
fn invert_affine(m: &[f64; 16]) -> Option<[f64; 16]> {
    let a = |r: usize, c: usize| m[c * 4 + r];
    let cof = |r: usize, c: usize| {
        let (r1, r2) = ((r + 1) % 3, (r + 2) % 3);
        let (c1, c2) = ((c + 1) % 3, (c + 2) % 3);
        a(r1, c1) * a(r2, c2) - a(r1, c2) * a(r2, c1)
    };
    let det = a(0, 0) * cof(0, 0) + a(0, 1) * cof(0, 1) + a(0, 2) * cof(0, 2);
    if !det.is_finite() || det.abs() < 1e-12 {
        return None;
    }
    let mut out = [0.0; 16];
    for r in 0..3 {
        for c in 0..3 {
            // inverse(r, c) = cofactor(c, r) / det
            out[c * 4 + r] = cof(c, r) / det;
        }
    }
    for r in 0..3 {
        out[12 + r] = -(0..3).map(|c| out[c * 4 + r] * m[12 + c]).sum::<f64>();
    }
    out[15] = 1.0;
    Some(out)
}

/// Translation, rotation (unit quaternion `(x, y, z, w)`) and scale of a
/// column-major affine matrix without shear.
fn decompose(m: &[f64; 16]) -> ([f64; 3], [f64; 4], [f64; 3]) {
    let col = |c: usize| [m[c * 4], m[c * 4 + 1], m[c * 4 + 2]];
    let norm = |v: [f64; 3]| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    let scale = [norm(col(0)), norm(col(1)), norm(col(2))];
    let r = |row: usize, c: usize| if scale[c] > 0.0 { m[c * 4 + row] / scale[c] } else { 0.0 };
    // Shepperd's method: the largest of w, x, y, z first.
    let trace = r(0, 0) + r(1, 1) + r(2, 2);
    let q = if trace > 0.0 {
        let s = (trace + 1.0).sqrt() * 2.0;
        [(r(2, 1) - r(1, 2)) / s, (r(0, 2) - r(2, 0)) / s, (r(1, 0) - r(0, 1)) / s, 0.25 * s]
    } else if r(0, 0) > r(1, 1) && r(0, 0) > r(2, 2) {
        let s = (1.0 + r(0, 0) - r(1, 1) - r(2, 2)).sqrt() * 2.0;
        [0.25 * s, (r(0, 1) + r(1, 0)) / s, (r(0, 2) + r(2, 0)) / s, (r(2, 1) - r(1, 2)) / s]
    } else if r(1, 1) > r(2, 2) {
        let s = (1.0 + r(1, 1) - r(0, 0) - r(2, 2)).sqrt() * 2.0;
        [(r(0, 1) + r(1, 0)) / s, 0.25 * s, (r(1, 2) + r(2, 1)) / s, (r(0, 2) - r(2, 0)) / s]
    } else {
        let s = (1.0 + r(2, 2) - r(0, 0) - r(1, 1)).sqrt() * 2.0;
        [(r(0, 2) + r(2, 0)) / s, (r(1, 2) + r(2, 1)) / s, 0.25 * s, (r(1, 0) - r(0, 1)) / s]
    };
    let qn = (q.iter().map(|c| c * c).sum::<f64>()).sqrt().max(1e-300);
    ([m[12], m[13], m[14]], q.map(|c| c / qn), scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affine_inverse_and_decomposition_round_trip() {
        // A rotation of 0.7 rad about (1, 2, 2)/3, scale 1.5, translation.
        let (ax, angle) = ([1.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0], 0.7f64);
        let (s, c) = ((angle / 2.0).sin(), (angle / 2.0).cos());
        let q = [ax[0] * s, ax[1] * s, ax[2] * s, c];
        let (x, y, z, w) = (q[0], q[1], q[2], q[3]);
        let rot = [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y + w * z),
            2.0 * (x * z - w * y),
            2.0 * (x * y - w * z),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z + w * x),
            2.0 * (x * z + w * y),
            2.0 * (y * z - w * x),
            1.0 - 2.0 * (x * x + y * y),
        ];
        let mut m = [0.0; 16];
        for col in 0..3 {
            for row in 0..3 {
                m[col * 4 + row] = 1.5 * rot[col * 3 + row];
            }
        }
        m[12..15].copy_from_slice(&[0.3, -1.2, 2.5]);
        m[15] = 1.0;
        let inv = invert_affine(&m).unwrap();
        let id = multiply(&m, &inv);
        for (i, v) in id.iter().enumerate() {
            let want = if i % 5 == 0 { 1.0 } else { 0.0 };
            assert!((v - want).abs() < 1e-12, "m · m⁻¹ [{i}] = {v}");
        }
        let (t, r, sc) = decompose(&m);
        assert_eq!(t, [0.3, -1.2, 2.5]);
        for k in 0..4 {
            assert!((r[k] - q[k]).abs() < 1e-12, "rotation {r:?} against {q:?}");
        }
        assert!(sc.iter().all(|v| (v - 1.5).abs() < 1e-12), "{sc:?}");
        let mut singular = m;
        singular[0..3].copy_from_slice(&[0.0; 3]);
        assert!(invert_affine(&singular).is_none());
    }
}
