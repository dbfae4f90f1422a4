//! Import of a user character from a glTF 2.0 binary (GLB): skeleton, skin,
//! mesh and clips.
//!
//! - **Joints**: every node of the default scene that a skin binds, that a
//!   clip animates or that carries a rigid mesh, and their ancestors; joints
//!   that influence no geometry and are not a foot or the hips are dropped
//!   (IK targets, `_end` leaves).
//! - **Mesh**: skinned primitives keep their weights (posed to the scene's
//!   rest transforms); a mesh attached to a node without a skin is bound
//!   rigidly to its nearest joint. Morph targets are ignored; colours come
//!   from the materials' base colour factors (textures are not imported).
//! - **Clips**: animations resampled at [`FRAME_RATE`]; a clip whose first and
//!   last poses agree is cyclic. Locomotion clips (names with walk, run, jog,
//!   turn or step, and no jump) are put in place; the idle clip is the one
//!   named idle.
//! - **Feet and hips** by name (`foot`, `ankle`, `toe`, `ball`, `hips`,
//!   `pelvis`, with a left/right marker), unless given.
//!
//! The character must face +Z with +Y up (glTF's convention); one that walks
//! towards −Z is turned round.

use super::{Character, Clip, FootJoints, Joint, Quat, Skeleton, Transform, V3, mirror_map};
use crowdpatch_runtime::skeletal::SkinnedPrimitive;
use gltf::animation::util::ReadOutputs;
use nalgebra::Matrix4;
use std::collections::BTreeMap;
use std::path::Path;

/// Sample rate of imported clips `[Hz]`.
pub const FRAME_RATE: f64 = 60.0;

/// Why a character could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file could not be read.
    #[error("{file}: {source}")]
    Io {
        /// The file.
        file: String,
        /// The reason.
        source: std::io::Error,
    },
    /// Not a valid glTF file.
    #[error("{file}: not a valid glTF/GLB file: {reason}")]
    Gltf {
        /// The file.
        file: String,
        /// The parser's message.
        reason: String,
    },
    /// Something the importer needs is missing.
    #[error("{file}: {what}")]
    Missing {
        /// The file.
        file: String,
        /// What is missing and how to fix it.
        what: String,
    },
}

/// Options of [`import_glb`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ImportOptions {
    /// Scale the character to this height `[m]`; `None` keeps the file's scale.
    pub height: Option<f64>,
    /// Keep every clip, not only locomotion and idle (for inspection).
    pub all_clips: bool,
}

/// Reads a character from a GLB file.
///
/// # Errors
/// [`ImportError`] naming the file: unreadable, not glTF, no scene, no mesh,
/// no foot joints found.
pub fn import_glb(path: &Path, options: &ImportOptions) -> Result<Character, ImportError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| ImportError::Io { file: file.clone(), source })?;
    let name = path.file_stem().map_or_else(|| "character".into(), |s| s.to_string_lossy().to_string());
    import_bytes(&bytes, &name, &file, options)
}

/// Reads a character from GLB bytes; `file` names it in errors.
///
/// # Errors
/// As [`import_glb`].
pub fn import_bytes(bytes: &[u8], name: &str, file: &str, options: &ImportOptions) -> Result<Character, ImportError> {
    let missing = |what: String| ImportError::Missing { file: file.to_owned(), what };
    let g = gltf::Gltf::from_slice(bytes)
        .map_err(|e| ImportError::Gltf { file: file.to_owned(), reason: e.to_string() })?;
    let blob = g.blob.clone().unwrap_or_default();
    let get = |b: gltf::Buffer<'_>| match b.source() {
        gltf::buffer::Source::Bin => Some(&blob[..]),
        gltf::buffer::Source::Uri(_) => None,
    };
    let scene =
        g.default_scene().or_else(|| g.scenes().next()).ok_or_else(|| missing("the file has no scene".into()))?;

    // The node tree of the scene.
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
    let local: Vec<Transform> = nodes
        .iter()
        .map(|n| {
            let (t, r, s) = n.transform().decomposed();
            Transform {
                translation: V3::new(t[0].into(), t[1].into(), t[2].into()),
                rotation: Quat::from_quaternion(nalgebra::Quaternion::new(
                    r[3].into(),
                    r[0].into(),
                    r[1].into(),
                    r[2].into(),
                )),
                scale: V3::new(s[0].into(), s[1].into(), s[2].into()),
            }
        })
        .collect();
    let mut global = vec![Matrix4::identity(); n_nodes];
    for &i in &order {
        global[i] = parent[i].map_or(Matrix4::identity(), |p| global[p]) * local[i].matrix();
    }

    // Which nodes the animations drive.
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

    // Geometry: (node, primitive) in the model frame at rest, with weights
    // by node index.
    struct Geo {
        material: Option<usize>,
        positions: Vec<V3>,
        normals: Vec<V3>,
        influences: Vec<Vec<(usize, f64)>>,
        indices: Vec<u32>,
    }
    let mut geos: Vec<Geo> = Vec::new();
    let mut influences_node = vec![false; n_nodes];
    for &i in &order {
        let node = &nodes[i];
        let Some(mesh) = node.mesh() else { continue };
        let skin = node.skin();
        let skin_mats: Option<(Vec<usize>, Vec<Matrix4<f64>>)> = skin.as_ref().map(|s| {
            let joints: Vec<usize> = s.joints().map(|j| j.index()).collect();
            let ibms: Vec<Matrix4<f64>> = s
                .reader(get)
                .read_inverse_bind_matrices()
                .map(|it| it.map(|m| Matrix4::from_fn(|r, c| f64::from(m[c][r]))).collect())
                .unwrap_or_else(|| vec![Matrix4::identity(); joints.len()]);
            let mats = joints.iter().zip(&ibms).map(|(&j, ibm)| global[j] * ibm).collect();
            (joints, mats)
        });
        // Rigid meshes bind to their nearest joint ancestor: decided after
        // the joint set is known, so record the node for now.
        for prim in mesh.primitives() {
            if prim.mode() != gltf::mesh::Mode::Triangles {
                continue;
            }
            let r = prim.reader(get);
            let Some(pos) = r.read_positions() else { continue };
            let pos: Vec<V3> = pos.map(|p| V3::new(p[0].into(), p[1].into(), p[2].into())).collect();
            let nor: Vec<V3> = r
                .read_normals()
                .map(|it| it.map(|p| V3::new(p[0].into(), p[1].into(), p[2].into())).collect())
                .unwrap_or_else(|| vec![V3::y(); pos.len()]);
            let indices: Vec<u32> =
                r.read_indices().map(|it| it.into_u32().collect()).unwrap_or_else(|| (0..pos.len() as u32).collect());
            let mut geo = Geo {
                material: prim.material().index(),
                positions: vec![],
                normals: vec![],
                influences: vec![],
                indices,
            };
            match &skin_mats {
                Some((joints, mats)) => {
                    let js: Vec<[u16; 4]> =
                        r.read_joints(0).map(|it| it.into_u16().collect()).unwrap_or_else(|| vec![[0; 4]; pos.len()]);
                    let ws: Vec<[f32; 4]> = r
                        .read_weights(0)
                        .map(|it| it.into_f32().collect())
                        .unwrap_or_else(|| vec![[1.0, 0.0, 0.0, 0.0]; pos.len()]);
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
                        let q = m.transform_point(&nalgebra::Point3::from(*p)).coords;
                        let n = m.fixed_view::<3, 3>(0, 0).try_inverse().map_or(nor[k], |inv| inv.transpose() * nor[k]);
                        geo.positions.push(q);
                        geo.normals.push(n.try_normalize(1e-12).unwrap_or_else(V3::y));
                        geo.influences.push(inf);
                    }
                }
                None => {
                    let m = global[i];
                    let lin = m.fixed_view::<3, 3>(0, 0).into_owned();
                    let nm = lin.try_inverse().map_or(lin, |inv| inv.transpose());
                    for (k, p) in pos.iter().enumerate() {
                        geo.positions.push(m.transform_point(&nalgebra::Point3::from(*p)).coords);
                        geo.normals.push((nm * nor[k]).try_normalize(1e-12).unwrap_or_else(V3::y));
                        geo.influences.push(vec![(i, 1.0)]);
                    }
                    // Flip winding if the node's transform mirrors.
                    if lin.determinant() < 0.0 {
                        for t in geo.indices.chunks_exact_mut(3) {
                            t.swap(1, 2);
                        }
                    }
                    influences_node[i] = true;
                }
            }
            geos.push(geo);
        }
    }
    if geos.is_empty() {
        return Err(missing("the scene has no triangle mesh to show".into()));
    }

    // Candidate joints: skin joints, animated nodes and rigid-mesh holders
    // (without a skin), with their ancestors.
    let mut joint = vec![false; n_nodes];
    for &i in &order {
        let rigid = nodes[i].mesh().is_some() && nodes[i].skin().is_none();
        if skin_joint[i] || animated[i] || rigid {
            let mut k = Some(i);
            while let Some(x) = k {
                joint[x] = true;
                k = parent[x];
            }
        }
    }
    // Designated joints, by name.
    let name_of = |i: usize| nodes[i].name().unwrap_or("").to_owned();
    let side_of = |n: &str| -> Option<usize> {
        let l = n.to_lowercase();
        if l.contains("left") || n.ends_with('L') || n.ends_with(".L") || l.ends_with("_l") || n.contains("L_") {
            Some(0)
        } else if l.contains("right") || n.ends_with('R') || n.ends_with(".R") || l.ends_with("_r") || n.contains("R_")
        {
            Some(1)
        } else {
            None
        }
    };
    let find = |keys: &[&str], side: Option<usize>| -> Option<usize> {
        order.iter().copied().filter(|&i| joint[i]).find(|&i| {
            let n = name_of(i);
            let l = n.to_lowercase();
            keys.iter().any(|k| l.contains(k))
                && !l.contains("end")
                && !l.contains("pole")
                && !l.contains("target")
                && nodes[i].mesh().is_none()
                && side_of(&n) == side
        })
    };
    let feet_nodes: Vec<usize> = (0..2)
        .map(|s| find(&["foot", "ankle"], Some(s)))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| missing("no left and right foot joints found (names with foot or ankle and L/R)".into()))?;
    let toes: Vec<Option<usize>> = (0..2)
        .map(|s| {
            find(&["toe", "ball"], Some(s)).filter(|&t| {
                let mut k = parent[t];
                while let Some(x) = k {
                    if x == feet_nodes[s] {
                        return true;
                    }
                    k = parent[x];
                }
                false
            })
        })
        .collect();
    let hips_node = find(&["hips", "pelvis"], None)
        .or_else(|| {
            // The deepest common ancestor of the feet.
            let anc = |mut i: usize| {
                let mut v = vec![i];
                while let Some(p) = parent[i] {
                    v.push(p);
                    i = p;
                }
                v
            };
            let a = anc(feet_nodes[0]);
            let b = anc(feet_nodes[1]);
            a.into_iter().find(|x| b.contains(x))
        })
        .ok_or_else(|| missing("no hips joint found (a name with hips or pelvis)".into()))?;

    // Keep the joints that matter: geometry influence, designated, or an
    // ancestor of one that does.
    let mut keep = vec![false; n_nodes];
    for &i in order.iter().rev() {
        if !joint[i] {
            continue;
        }
        let designated = feet_nodes.contains(&i) || toes.contains(&Some(i)) || i == hips_node;
        let bound = influences_node[i] && !(nodes[i].mesh().is_some() && nodes[i].skin().is_none() && !animated[i]);
        // A skin joint that carries a rigid mesh (a leg part under its bone).
        let holds_rigid = skin_joint[i] && nodes[i].children().any(|c| c.mesh().is_some() && c.skin().is_none());
        if designated || bound || holds_rigid {
            let mut k = Some(i);
            while let Some(x) = k {
                keep[x] = true;
                k = parent[x];
            }
        }
    }
    // Rigid meshes on non-joint nodes bind to their nearest kept ancestor.
    let nearest_kept = |mut i: usize| -> usize {
        loop {
            if keep[i] {
                return i;
            }
            match parent[i] {
                Some(p) => i = p,
                None => return i,
            }
        }
    };
    let kept: Vec<usize> = order.iter().copied().filter(|&i| keep[i]).collect();
    let index_of: BTreeMap<usize, usize> = kept.iter().enumerate().map(|(k, &i)| (i, k)).collect();
    let mut names_seen = std::collections::BTreeSet::new();
    let joints: Vec<Joint> = kept
        .iter()
        .map(|&i| {
            let mut name = name_of(i);
            if name.is_empty() || !names_seen.insert(name.clone()) {
                name = format!("{name} node {i}");
                names_seen.insert(name.clone());
            }
            Joint { name, parent: parent[i].map(|p| index_of[&nearest_kept(p)]), rest: local[i] }
        })
        .collect();
    // Kept joints are closed under ancestry: a top joint is a scene root.
    let skeleton = Skeleton { joints };

    // Mesh by material.
    let materials: Vec<(String, [f32; 4])> = g
        .materials()
        .map(|m| (m.name().unwrap_or("material").to_owned(), m.pbr_metallic_roughness().base_color_factor()))
        .collect();
    let mut by_material: BTreeMap<Option<usize>, SkinnedPrimitive> = BTreeMap::new();
    for geo in &geos {
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
            // Up to four influences, heaviest first, renormalised.
            let mut inf: Vec<(usize, f64)> =
                geo.influences[k].iter().map(|&(node, w)| (index_of[&nearest_kept(node)], w)).collect();
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
            // Exact unit sum in f32 (the validator checks it).
            let sum: f32 = ws.iter().sum();
            ws[0] += 1.0 - sum;
            p.joints.push(js);
            p.weights.push(ws);
        }
        p.indices.extend(geo.indices.iter().map(|&i| base + i));
    }
    let mut primitives: Vec<SkinnedPrimitive> = by_material.into_values().collect();

    // Clips.
    let mut clips = Vec::new();
    for a in g.animations() {
        let cname = a.name().unwrap_or("clip").to_owned();
        let lower = cname.to_lowercase();
        let locomotion =
            ["walk", "run", "jog", "turn", "step"].iter().any(|k| lower.contains(k)) && !lower.contains("jump");
        let idle = lower.contains("idle");
        if !(options.all_clips || locomotion || idle) {
            continue;
        }
        // Channels by kept joint.
        type Track = (Vec<f32>, Vec<[f32; 4]>, gltf::animation::Interpolation);
        let mut tracks: BTreeMap<(usize, u8), Track> = BTreeMap::new();
        let mut end = 0f32;
        for ch in a.channels() {
            let node = ch.target().node().index();
            let Some(&j) = index_of.get(&node) else { continue };
            let r = ch.reader(get);
            let Some(times) = r.read_inputs() else { continue };
            let times: Vec<f32> = times.collect();
            let (kind, values): (u8, Vec<[f32; 4]>) = match r.read_outputs() {
                Some(ReadOutputs::Translations(t)) => (0, t.map(|v| [v[0], v[1], v[2], 0.0]).collect()),
                Some(ReadOutputs::Rotations(q)) => (1, q.into_f32().collect()),
                Some(ReadOutputs::Scales(s)) => (2, s.map(|v| [v[0], v[1], v[2], 0.0]).collect()),
                _ => continue,
            };
            let interp = ch.sampler().interpolation();
            // Cubic splines store (in-tangent, value, out-tangent) per key.
            let values = if interp == gltf::animation::Interpolation::CubicSpline {
                values.chunks_exact(3).map(|c| c[1]).collect()
            } else {
                values
            };
            if values.len() != times.len() || times.is_empty() {
                continue;
            }
            end = end.max(times[times.len() - 1]);
            tracks.insert((j, kind), (times, values, interp));
        }
        let duration = f64::from(end);
        if duration <= 1e-3 {
            continue;
        }
        let pose_at = |t: f64| -> Vec<Transform> {
            let mut pose: Vec<Transform> = kept.iter().map(|&i| local[i]).collect();
            for (&(j, kind), (times, values, interp)) in &tracks {
                let v = sample_track(times, values, *interp, t as f32, kind == 1);
                match kind {
                    0 => pose[j].translation = V3::new(v[0].into(), v[1].into(), v[2].into()),
                    1 => {
                        pose[j].rotation = Quat::from_quaternion(nalgebra::Quaternion::new(
                            v[3].into(),
                            v[0].into(),
                            v[1].into(),
                            v[2].into(),
                        ))
                    }
                    _ => pose[j].scale = V3::new(v[0].into(), v[1].into(), v[2].into()),
                }
            }
            pose
        };
        let first = pose_at(0.0);
        let last = pose_at(duration);
        let cyclic = first.iter().zip(&last).enumerate().all(|(j, (a, b))| {
            let top = skeleton.joints[j].parent.is_none();
            (top || (a.translation - b.translation).norm() < 1e-3 * skeleton_scale(&skeleton))
                && a.rotation.angle_to(&b.rotation) < 0.02
        });
        let n = ((duration * FRAME_RATE).round() as usize).max(2);
        let dt = duration / n as f64;
        let count = if cyclic { n } else { n + 1 };
        let frames: Vec<Vec<Transform>> = (0..count).map(|k| pose_at(k as f64 * dt)).collect();
        let mut clip = Clip { name: cname, frame_interval: dt, frames, cyclic };
        if locomotion {
            clip.make_in_place(&skeleton);
        }
        clips.push((clip, idle));
    }
    let idle = clips.iter().position(|(_, i)| *i);
    let clips: Vec<Clip> = clips.into_iter().map(|(c, _)| c).collect();

    let left = index_of[&feet_nodes[0]];
    let right = index_of[&feet_nodes[1]];
    let feet = [
        FootJoints { ankle: left, contact: toes[0].map_or(left, |t| index_of[&t]) },
        FootJoints { ankle: right, contact: toes[1].map_or(right, |t| index_of[&t]) },
    ];
    let mut character = Character {
        name: name.to_owned(),
        mirror: mirror_map(&skeleton),
        skeleton,
        primitives: Vec::new(),
        feet,
        hips: index_of[&hips_node],
        clips,
        idle,
        height: 0.0,
    };
    // Height, and an optional rescale.
    let (lo, hi) = primitives
        .iter()
        .flat_map(|p| p.positions.iter())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |a, p| (a.0.min(f64::from(p[1])), a.1.max(f64::from(p[1]))));
    let height = hi - lo.min(0.0);
    if let Some(h) = options.height
        && height > 0.0
    {
        let s = h / height;
        scale_character(&mut character, &mut primitives, s);
        character.height = h;
    } else {
        character.height = height;
    }
    character.primitives = primitives;
    Ok(character)
}

/// A length typical of the skeleton (its rest extent) `[m]`.
fn skeleton_scale(sk: &Skeleton) -> f64 {
    let p = sk.positions(&sk.rest_pose());
    let (lo, hi) = p.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |a, q| (a.0.min(q.y), a.1.max(q.y)));
    (hi - lo).max(1e-3)
}

/// Scales a character uniformly about the model origin.
fn scale_character(c: &mut Character, primitives: &mut [SkinnedPrimitive], s: f64) {
    for (k, j) in c.skeleton.joints.iter_mut().enumerate() {
        if j.parent.is_none() {
            j.rest.translation *= s;
            j.rest.scale *= s;
            for clip in &mut c.clips {
                for f in &mut clip.frames {
                    f[k].translation *= s;
                    f[k].scale *= s;
                }
            }
        }
    }
    for p in primitives {
        for v in &mut p.positions {
            for x in v.iter_mut() {
                *x *= s as f32;
            }
        }
    }
}

/// Value of a keyframe track at `t` (clamped at the ends); rotations are
/// slerped.
fn sample_track(
    times: &[f32],
    values: &[[f32; 4]],
    interp: gltf::animation::Interpolation,
    t: f32,
    rotation: bool,
) -> [f32; 4] {
    let i = times.partition_point(|&k| k <= t);
    if i == 0 {
        return values[0];
    }
    if i >= times.len() || interp == gltf::animation::Interpolation::Step {
        return values[i - 1];
    }
    let (a, b) = (values[i - 1], values[i]);
    let u = f64::from((t - times[i - 1]) / (times[i] - times[i - 1]));
    if rotation {
        let q = |v: [f32; 4]| {
            Quat::from_quaternion(nalgebra::Quaternion::new(v[3].into(), v[0].into(), v[1].into(), v[2].into()))
        };
        let r = q(a).try_slerp(&q(b), u, 1e-9).unwrap_or(q(a));
        let c = r.coords;
        [c.x as f32, c.y as f32, c.z as f32, c.w as f32]
    } else {
        std::array::from_fn(|k| (f64::from(a[k]) + (f64::from(b[k]) - f64::from(a[k])) * u) as f32)
    }
}
