//! The glTF scene as the importer reads it: the node tree with rest
//! transforms, and the triangle geometry in the file's frame at rest with
//! each vertex's joint influences. Skinned meshes are posed by their skins;
//! a mesh without a skin rides on the skeleton when it hangs below a joint
//! (a helmet on the head, a sword in a hand slot) and is left out, with a
//! note, when it does not (a display base, a prop at the scene root).

use super::source::Source;
use crate::character::{Quat, Transform, V3, position_of, rotation_of};
use crowdpatch_runtime::skeletal::SkinnedPrimitive;
use gltf::accessor::{DataType, Dimensions};
use nalgebra::Matrix4;
use std::collections::BTreeMap;

/// Most vertices read from one file.
pub(super) const MAX_VERTICES: usize = 4_000_000;

/// The node tree of one scene, by glTF node index.
pub(super) struct SceneTree<'a> {
    /// Every node of the file.
    pub nodes: Vec<gltf::Node<'a>>,
    /// Parent of each node in the scene.
    pub parent: Vec<Option<usize>>,
    /// The scene's nodes, depth-first, parents before children.
    pub order: Vec<usize>,
    /// Whether each node is in the scene.
    pub in_scene: Vec<bool>,
    /// Rest local transform of each node: the file's, or the bind pose's
    /// after [`SceneTree::rest_at_bind`].
    pub local: Vec<Transform>,
    /// Local transform of each node as the file stores it (what an
    /// animation channel leaves unkeyed holds).
    pub file_local: Vec<Transform>,
    /// Model-frame matrix of each node at rest.
    pub global: Vec<Matrix4<f64>>,
    /// Whether an animation channel (other than morph weights) drives it.
    pub animated: Vec<bool>,
    /// Whether a skin lists it as a joint.
    pub skin_joint: Vec<bool>,
}

impl<'a> SceneTree<'a> {
    /// Reads the tree of `scene`. O(nodes + channels + skin joints).
    pub fn new(g: &'a gltf::Document, scene: &gltf::Scene<'a>) -> SceneTree<'a> {
        let n_nodes = g.nodes().count();
        let mut parent: Vec<Option<usize>> = vec![None; n_nodes];
        let mut in_scene = vec![false; n_nodes];
        let mut order = Vec::new();
        let mut stack: Vec<gltf::Node<'_>> = scene.nodes().collect();
        stack.reverse();
        while let Some(n) = stack.pop() {
            if in_scene[n.index()] {
                continue;
            }
            in_scene[n.index()] = true;
            order.push(n.index());
            let mut kids: Vec<gltf::Node<'_>> = n.children().collect();
            kids.reverse();
            for c in kids {
                parent[c.index()] = Some(n.index());
                stack.push(c);
            }
        }
        let nodes: Vec<gltf::Node<'_>> = g.nodes().collect();
        let local: Vec<Transform> = nodes.iter().map(node_transform).collect();
        let mut global = vec![Matrix4::identity(); n_nodes];
        for &i in &order {
            global[i] = parent[i].map_or(Matrix4::identity(), |p| global[p]) * local[i].matrix();
        }
        let mut animated = vec![false; n_nodes];
        for a in g.animations() {
            for ch in a.channels() {
                if ch.target().property() != gltf::animation::Property::MorphTargetWeights {
                    animated[ch.target().node().index()] = true;
                }
            }
        }
        let mut skin_joint = vec![false; n_nodes];
        for s in g.skins() {
            for j in s.joints() {
                skin_joint[j.index()] = true;
            }
        }
        SceneTree { nodes, parent, order, in_scene, file_local: local.clone(), local, global, animated, skin_joint }
    }

    /// Whether some skin lists a node of the scene as a joint.
    pub fn has_skin(&self) -> bool {
        self.order.iter().any(|&i| self.skin_joint[i])
    }

    /// Whether node `i` hangs below a skin joint (or is one): a mesh there
    /// rides on the skeleton.
    pub fn on_skeleton(&self, i: usize) -> bool {
        let mut k = Some(i);
        while let Some(x) = k {
            if self.skin_joint[x] {
                return true;
            }
            k = self.parent[x];
        }
        false
    }

    /// The node's name (empty when it has none).
    pub fn name(&self, i: usize) -> String {
        self.nodes[i].name().unwrap_or("").to_owned()
    }

    /// Whether the node carries a mesh without a skin (bound rigidly).
    pub fn is_rigid_mesh(&self, i: usize) -> bool {
        self.nodes[i].mesh().is_some() && self.nodes[i].skin().is_none()
    }

    /// Whether `ancestor` is `i` or one of its ancestors.
    pub fn is_ancestor(&self, ancestor: usize, i: usize) -> bool {
        let mut k = Some(i);
        while let Some(x) = k {
            if x == ancestor {
                return true;
            }
            k = self.parent[x];
        }
        false
    }
}

/// The inverse bind matrices of `skin`, one a joint, or `None` when the skin
/// has none (glTF's default: identities) or they cannot be read as `f32`
/// 4×4 matrices, at least one a joint.
fn inverse_binds(skin: &gltf::Skin<'_>, source: &Source) -> Option<Vec<Matrix4<f64>>> {
    let joints = skin.joints().count();
    let a = skin.inverse_bind_matrices()?;
    if a.data_type() != DataType::F32 || a.dimensions() != Dimensions::Mat4 || a.count() < joints {
        return None;
    }
    let ibms: Vec<Matrix4<f64>> = skin
        .reader(source.get())
        .read_inverse_bind_matrices()?
        .map(|m| Matrix4::from_fn(|r, c| f64::from(m[c][r])))
        .collect();
    (ibms.len() >= joints).then_some(ibms)
}

/// A joint whose rest position lies farther than this fraction of the
/// skeleton's extent from its bind position (from the inverse bind
/// matrices) makes the importer pose the skeleton at bind.
pub(super) const BIND_TOLERANCE: f64 = 0.01;

impl SceneTree<'_> {
    /// Puts the skin joints at their **bind pose** where the nodes rest in
    /// another one (a file saved mid-crouch or at a clip's first frame): the
    /// proportions of a character are those of the pose its mesh was bound
    /// in, which the inverse bind matrices record.
    ///
    /// For each skin whose matrices can be read, `M_j = G_j · B_j` (node
    /// rest matrix times inverse bind matrix) is the same matrix for every
    /// joint when the nodes rest at bind (identity, or a transform common
    /// to the mesh, e.g. a dequantisation folded into the matrices). When
    /// some joint's bind position `M_top · B_j⁻¹` (with `top` the skin's
    /// highest joint, which keeps its place) lies more than
    /// [`BIND_TOLERANCE`] × the skin's extent from its rest position, every
    /// joint of that skin is set to `M_top · B_j⁻¹` and the local transforms
    /// (translation, rotation, per-axis scale; shear dropped) recomputed;
    /// other nodes keep their local transforms. The first skin listing a
    /// joint decides it.
    ///
    /// Returns the joints moved and the largest distance moved, in the
    /// file's units, or `None` when every skin rests at bind.
    /// O(nodes + skin joints).
    pub fn rest_at_bind(&mut self, source: &Source) -> Option<(usize, f64)> {
        let n = self.nodes.len();
        let mut bind: Vec<Option<Matrix4<f64>>> = vec![None; n];
        let mut depth = vec![0usize; n];
        for &i in &self.order {
            depth[i] = self.parent[i].map_or(0, |p| depth[p] + 1);
        }
        let mut moved = 0usize;
        let mut farthest = 0f64;
        for skin in source.document.skins() {
            let joints: Vec<usize> = skin.joints().map(|j| j.index()).collect();
            let Some(ibms) = inverse_binds(&skin, source) else { continue };
            let in_scene: Vec<usize> = (0..joints.len()).filter(|&k| self.in_scene[joints[k]]).collect();
            let Some(&top) = in_scene.iter().min_by_key(|&&k| (depth[joints[k]], k)) else { continue };
            let common = self.global[joints[top]] * ibms[top];
            let at_bind: Vec<Option<Matrix4<f64>>> =
                (0..joints.len()).map(|k| ibms[k].try_inverse().map(|inv| common * inv)).collect();
            if in_scene.iter().any(|&k| at_bind[k].is_none_or(|m| !m.iter().all(|x| x.is_finite()))) {
                continue;
            }
            let rest: Vec<V3> = in_scene.iter().map(|&k| position_of(&self.global[joints[k]])).collect();
            let (lo, hi) = rest.iter().fold((rest[0], rest[0]), |(lo, hi), p| (lo.inf(p), hi.sup(p)));
            let extent = (hi - lo).norm();
            let off =
                |k: usize| at_bind[k].map_or(0.0, |m| (position_of(&m) - position_of(&self.global[joints[k]])).norm());
            let worst = in_scene.iter().map(|&k| off(k)).fold(0.0, f64::max);
            if extent <= 0.0 || worst <= BIND_TOLERANCE * extent {
                continue;
            }
            for &k in &in_scene {
                if bind[joints[k]].is_none() {
                    bind[joints[k]] = at_bind[k];
                    moved += usize::from(off(k) > BIND_TOLERANCE * extent);
                }
            }
            farthest = farthest.max(worst);
        }
        if moved == 0 {
            return None;
        }
        for &i in &self.order {
            let parent = self.parent[i].map_or(Matrix4::identity(), |p| self.global[p]);
            match bind[i] {
                Some(m) => {
                    self.local[i] = transform_of(&(parent.try_inverse().unwrap_or_else(Matrix4::identity) * m));
                    self.global[i] = parent * self.local[i].matrix();
                }
                None => self.global[i] = parent * self.local[i].matrix(),
            }
        }
        Some((moved, farthest))
    }
}

/// A matrix as translation, rotation and per-axis scale (a negative
/// determinant flips the scale of X; shear is dropped).
fn transform_of(m: &Matrix4<f64>) -> Transform {
    let lin = m.fixed_view::<3, 3>(0, 0);
    let sign = if lin.determinant() < 0.0 { -1.0 } else { 1.0 };
    let scale = V3::new(sign * lin.column(0).norm(), lin.column(1).norm(), lin.column(2).norm());
    let mut r = m.clone_owned();
    r.fixed_view_mut::<3, 1>(0, 0).scale_mut(sign);
    Transform { translation: position_of(m), rotation: rotation_of(&r), scale }
}

fn node_transform(n: &gltf::Node<'_>) -> Transform {
    let (t, r, s) = n.transform().decomposed();
    Transform {
        translation: V3::new(t[0].into(), t[1].into(), t[2].into()),
        rotation: Quat::from_quaternion(nalgebra::Quaternion::new(r[3].into(), r[0].into(), r[1].into(), r[2].into())),
        scale: V3::new(s[0].into(), s[1].into(), s[2].into()),
    }
}

/// One triangle primitive in the model frame at rest, with the influences
/// of each vertex by node index.
pub(super) struct Geo {
    material: Option<usize>,
    positions: Vec<V3>,
    normals: Vec<V3>,
    influences: Vec<Vec<(usize, f64)>>,
    indices: Vec<u32>,
}

/// The scene's triangle geometry.
pub(super) struct Geometry {
    /// Every triangle primitive kept.
    pub primitives: Vec<Geo>,
    /// Whether some vertex depends on each node.
    pub influences_node: Vec<bool>,
    /// Meshes without a skin that hang from no joint, left out (node names).
    pub left_out: Vec<String>,
}

impl Geometry {
    /// Applies the similarity `c` (rotation, uniform scale, translation) to
    /// every vertex and turns the normals with it.
    pub fn transform(&mut self, c: &Matrix4<f64>) {
        let lin = c.fixed_view::<3, 3>(0, 0).into_owned();
        for g in &mut self.primitives {
            for p in &mut g.positions {
                *p = c.transform_point(&nalgebra::Point3::from(*p)).coords;
            }
            for n in &mut g.normals {
                *n = (lin * *n).try_normalize(1e-12).unwrap_or_else(V3::y);
            }
        }
    }

    /// The lowest height (y) of the vertices whose heaviest influence is a
    /// node for which `on` holds (the soles: vertices of the legs), or `None`.
    pub fn lowest_below(&self, on: &dyn Fn(usize) -> bool) -> Option<f64> {
        let mut lo: Option<f64> = None;
        for g in &self.primitives {
            for (p, inf) in g.positions.iter().zip(&g.influences) {
                let heaviest = inf.iter().max_by(|a, b| a.1.total_cmp(&b.1)).map(|x| x.0);
                if heaviest.is_some_and(on) {
                    lo = Some(lo.map_or(p.y, |l| l.min(p.y)));
                }
            }
        }
        lo
    }

    /// The least and greatest corner of the vertices, or `None` without any.
    pub fn bounds(&self) -> Option<(V3, V3)> {
        let mut it = self.primitives.iter().flat_map(|g| g.positions.iter());
        let first = *it.next()?;
        Some(it.fold((first, first), |(lo, hi), p| (lo.inf(p), hi.sup(p))))
    }
}

/// Whether an accessor holds `f32` vectors of `dims`.
fn floats(a: &gltf::Accessor<'_>, dims: Dimensions) -> bool {
    a.data_type() == DataType::F32 && a.dimensions() == dims && !a.normalized()
}

/// Reads every triangle primitive of the scene's meshes: skinned ones posed
/// to the scene's rest transforms with their weights; a mesh on a node
/// without a skin bound rigidly to that node when it hangs below a skin
/// joint, else left out. Primitives whose positions are not `f32` vectors
/// are skipped. O(vertices).
///
/// # Errors
/// More than [`MAX_VERTICES`] vertices.
pub(super) fn read_geometry(tree: &SceneTree<'_>, source: &Source) -> Result<Geometry, String> {
    let get = source.get();
    let mut primitives: Vec<Geo> = Vec::new();
    let mut influences_node = vec![false; tree.nodes.len()];
    let mut left_out = Vec::new();
    let mut vertices = 0usize;
    for &i in &tree.order {
        let node = &tree.nodes[i];
        let Some(mesh) = node.mesh() else { continue };
        if node.skin().is_none() && !tree.on_skeleton(i) {
            let name = tree.name(i);
            left_out.push(if name.is_empty() { format!("node {i}") } else { name });
            continue;
        }
        let skin_mats: Option<(Vec<usize>, Vec<Matrix4<f64>>)> = node.skin().map(|s| {
            let joints: Vec<usize> = s.joints().map(|j| j.index()).collect();
            let ibms = inverse_binds(&s, source).unwrap_or_else(|| vec![Matrix4::identity(); joints.len()]);
            let mats = joints.iter().zip(&ibms).map(|(&j, ibm)| tree.global[j] * ibm).collect();
            (joints, mats)
        });
        for prim in mesh.primitives() {
            if prim.mode() != gltf::mesh::Mode::Triangles {
                continue;
            }
            let attr_ok = |sem: gltf::Semantic, dims: Dimensions| prim.get(&sem).is_none_or(|a| floats(&a, dims));
            if prim.get(&gltf::Semantic::Positions).is_none_or(|a| !floats(&a, Dimensions::Vec3)) {
                continue;
            }
            let normals_ok = attr_ok(gltf::Semantic::Normals, Dimensions::Vec3);
            let r = prim.reader(get.clone());
            let Some(pos) = r.read_positions() else { continue };
            let pos: Vec<V3> = pos.map(|p| V3::new(p[0].into(), p[1].into(), p[2].into())).collect();
            vertices += pos.len();
            if vertices > MAX_VERTICES {
                return Err(format!("more than {MAX_VERTICES} vertices; decimate the character first"));
            }
            let nor: Vec<V3> = r
                .read_normals()
                .filter(|_| normals_ok)
                .map(|it| it.map(|p| V3::new(p[0].into(), p[1].into(), p[2].into())).collect())
                .filter(|n: &Vec<V3>| n.len() == pos.len())
                .unwrap_or_else(|| vec![V3::y(); pos.len()]);
            let indices: Vec<u32> =
                r.read_indices().map(|it| it.into_u32().collect()).unwrap_or_else(|| (0..pos.len() as u32).collect());
            // Triangles whose indices run past the vertices are dropped.
            let indices: Vec<u32> = indices
                .chunks_exact(3)
                .filter(|t| t.iter().all(|&k| (k as usize) < pos.len()))
                .flatten()
                .copied()
                .collect();
            let mut geo = Geo {
                material: prim.material().index(),
                positions: vec![],
                normals: vec![],
                influences: vec![],
                indices,
            };
            match &skin_mats {
                Some((joints, mats)) => {
                    let js: Vec<[u16; 4]> = r
                        .read_joints(0)
                        .map(|it| it.into_u16().collect())
                        .filter(|v: &Vec<[u16; 4]>| v.len() == pos.len())
                        .unwrap_or_else(|| vec![[0; 4]; pos.len()]);
                    let ws: Vec<[f32; 4]> = r
                        .read_weights(0)
                        .map(|it| it.into_f32().collect())
                        .filter(|v: &Vec<[f32; 4]>| v.len() == pos.len())
                        .unwrap_or_else(|| vec![[1.0, 0.0, 0.0, 0.0]; pos.len()]);
                    skinned(&mut geo, &pos, &nor, (&js, &ws), (joints, mats), &mut influences_node);
                }
                None => {
                    rigid(&mut geo, &pos, &nor, i, tree.global[i]);
                    influences_node[i] = true;
                }
            }
            primitives.push(geo);
        }
    }
    Ok(Geometry { primitives, influences_node, left_out })
}

/// Skinned vertices posed to the rest transforms (linear blend skinning).
fn skinned(
    geo: &mut Geo,
    pos: &[V3],
    nor: &[V3],
    (js, ws): (&[[u16; 4]], &[[f32; 4]]),
    (joints, mats): (&[usize], &[Matrix4<f64>]),
    influences_node: &mut [bool],
) {
    for (k, p) in pos.iter().enumerate() {
        let mut m = Matrix4::zeros();
        let mut inf = Vec::new();
        let total: f64 = ws[k].iter().map(|&w| f64::from(w)).sum::<f64>().max(1e-12);
        for s in 0..4 {
            let w = f64::from(ws[k][s]) / total;
            let j = js[k][s] as usize;
            if w <= 0.0 || j >= joints.len() {
                continue;
            }
            m += mats[j] * w;
            inf.push((joints[j], w));
            influences_node[joints[j]] = true;
        }
        if inf.is_empty() {
            // No usable weight: bound to the skin's first joint.
            if let (Some(&j0), Some(m0)) = (joints.first(), mats.first()) {
                m = *m0;
                inf.push((j0, 1.0));
                influences_node[j0] = true;
            } else {
                m = Matrix4::identity();
            }
        }
        let q = m.transform_point(&nalgebra::Point3::from(*p)).coords;
        let n = m.fixed_view::<3, 3>(0, 0).try_inverse().map_or(nor[k], |inv| inv.transpose() * nor[k]);
        geo.positions.push(q);
        geo.normals.push(n.try_normalize(1e-12).unwrap_or_else(V3::y));
        geo.influences.push(inf);
    }
}

/// Vertices of a mesh on node `node` (matrix `m`), bound rigidly to it.
fn rigid(geo: &mut Geo, pos: &[V3], nor: &[V3], node: usize, m: Matrix4<f64>) {
    let lin = m.fixed_view::<3, 3>(0, 0).into_owned();
    let nm = lin.try_inverse().map_or(lin, |inv| inv.transpose());
    for (k, p) in pos.iter().enumerate() {
        geo.positions.push(m.transform_point(&nalgebra::Point3::from(*p)).coords);
        geo.normals.push((nm * nor[k]).try_normalize(1e-12).unwrap_or_else(V3::y));
        geo.influences.push(vec![(node, 1.0)]);
    }
    // Flip winding if the node's transform mirrors.
    if lin.determinant() < 0.0 {
        for t in geo.indices.chunks_exact_mut(3) {
            t.swap(1, 2);
        }
    }
}

/// The geometry as skinned primitives, one per material, influences moved
/// to the joint `joint_of` each node (its nearest kept joint), at most four
/// per vertex, renormalised so that they sum to 1 exactly in f32 (as the
/// validator checks). O(vertices).
pub(super) fn primitives_by_material(
    g: &gltf::Document,
    geometry: &Geometry,
    joint_of: impl Fn(usize) -> usize,
) -> Vec<SkinnedPrimitive> {
    let materials: Vec<(String, [f32; 4])> = g
        .materials()
        .map(|m| (m.name().unwrap_or("material").to_owned(), m.pbr_metallic_roughness().base_color_factor()))
        .collect();
    let mut by_material: BTreeMap<Option<usize>, SkinnedPrimitive> = BTreeMap::new();
    for geo in &geometry.primitives {
        let p = by_material.entry(geo.material).or_insert_with(|| {
            let (name, colour) =
                geo.material.and_then(|m| materials.get(m).cloned()).unwrap_or(("default".into(), [0.8; 4]));
            SkinnedPrimitive { material: name, colour, ..Default::default() }
        });
        let base = p.positions.len() as u32;
        for (k, q) in geo.positions.iter().enumerate() {
            p.positions.push([q.x as f32, q.y as f32, q.z as f32]);
            let n = geo.normals[k];
            p.normals.push([n.x as f32, n.y as f32, n.z as f32]);
            let (js, ws) = four_influences(geo.influences[k].iter().map(|&(node, w)| (joint_of(node), w)));
            p.joints.push(js);
            p.weights.push(ws);
        }
        p.indices.extend(geo.indices.iter().map(|&i| base + i));
    }
    by_material.into_values().collect()
}

/// Up to four influences `(joint, weight)`, heaviest first (ties by joint),
/// merged by joint and renormalised, with an exact unit sum in f32.
fn four_influences(influences: impl Iterator<Item = (usize, f64)>) -> ([u16; 4], [f32; 4]) {
    let mut inf: Vec<(usize, f64)> = influences.collect();
    inf.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut merged: Vec<(usize, f64)> = Vec::new();
    for (j, w) in inf {
        match merged.iter_mut().find(|m| m.0 == j) {
            Some(m) => m.1 += w,
            None => merged.push((j, w)),
        }
    }
    merged.truncate(4);
    let total: f64 = merged.iter().map(|m| m.1).sum();
    let mut js = [0u16; 4];
    let mut ws = [0f32; 4];
    for (s, (j, w)) in merged.iter().enumerate() {
        js[s] = *j as u16;
        ws[s] = (*w / total) as f32;
    }
    let sum: f32 = ws.iter().sum();
    ws[0] += 1.0 - sum;
    (js, ws)
}
