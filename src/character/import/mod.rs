//! Import of a user character (or of an animation file) from glTF 2.0: a
//! `.glb`, or a `.gltf` with embedded or external buffers.
//!
//! Phases ([`import_file`]):
//!
//! 1. **Source** (`source`): the file and its buffers; geometry
//!    extensions (Draco, meshopt, quantization) refused by name first.
//! 2. **Scene and geometry** (`scene`): the node tree at rest; skinned
//!    meshes (any number, any number of skins over one skeleton) posed by
//!    their skins; a mesh without a skin rides on the joint it hangs from (a
//!    helmet, a shield, a sword in a hand slot) and is left out, with a
//!    note, when it hangs from no joint (a display base, a prop at the scene
//!    root). Morph targets and textures are not read; colours come from the
//!    materials' base colour factors.
//! 3. **Humanoid mapping** ([`crate::character::humanoid`]): the hips,
//!    spine, head, arms and legs, by the file's VRM extension, by name in
//!    any common convention, by structure, or by a joint map; a rig that is
//!    not an upright biped (a quadruped, a robot arm) is refused here.
//! 4. **Joints** (`joints`): the skin joints and animated nodes that move
//!    geometry or are humanoid bones, with their ancestors.
//! 5. **Model frame**: the whole character turned so that it stands along
//!    +Y facing +Z with its left towards +X (Z-up exports, characters facing
//!    −Z), its soles on `y = 0`, scaled to the height asked for
//!    (centimetre rigs), and every joint given unit scale (scale in the
//!    file — an armature's 100 or 0.01, a non-uniform bind scale — is baked
//!    into joint offsets and the mesh).
//! 6. **Clips** (`clips`): every animation resampled at [`FRAME_RATE`],
//!    expressed in the model frame, put in place (root motion removed, to
//!    be derived from the stance foot), cyclic when its first and last
//!    poses agree. Which clips are walks, runs or idles is measured by
//!    [`crate::character::choice`].

use super::humanoid::{Bone, Humanoid, JointMap, MapError, model_rotation};
use super::{Character, Clip, FootJoints, Pose, Skeleton, V3, mirror_map, position_of, rotation_of};
use clips::RawClip;
use nalgebra::{Matrix4, Rotation3};
use scene::SceneTree;
use source::Source;
use std::collections::BTreeMap;
use std::path::Path;

mod clips;
mod joints;
mod scene;
mod source;

pub use clips::FRAME_RATE;

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
    /// Not a valid glTF file, or one stored in a way the importer does not
    /// read.
    #[error("{file}: {reason}")]
    Gltf {
        /// The file.
        file: String,
        /// What is wrong, as a sentence.
        reason: String,
    },
    /// Something the importer needs is missing.
    #[error("{file} {what}")]
    Missing {
        /// The file.
        file: String,
        /// What is missing and how to fix it (a sentence after the file name).
        what: String,
    },
    /// The rig is not an upright biped, or a joint map does not fit it.
    #[error(transparent)]
    Humanoid(#[from] MapError),
}

/// Options of [`import_file`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ImportOptions {
    /// Scale the character to this height `[m]`; `None` keeps the file's scale.
    pub height: Option<f64>,
    /// A joint map naming humanoid bones the names do not tell.
    pub joint_map: Option<JointMap>,
    /// Read an animation file: no mesh or skin needed, every candidate joint
    /// kept, no rescale.
    pub motion_only: bool,
}

/// Reads a character from a glTF file (`.glb` or `.gltf`); see the module
/// documentation. O(nodes · depth + vertices + clips · frames · joints).
///
/// # Errors
/// [`ImportError`] naming the file: unreadable, not glTF, a geometry
/// extension, no skin, no mesh, not a biped (with what to pass).
pub fn import_file(path: &Path, options: &ImportOptions) -> Result<Character, ImportError> {
    let file = path.display().to_string();
    let source = Source::read(path).map_err(|reason| ImportError::Gltf { file: file.clone(), reason })?;
    let name = path.file_stem().map_or_else(|| "character".into(), |s| s.to_string_lossy().to_string());
    import_source(&source, &name, &file, options)
}

/// [`import_file`] (kept under its former name).
///
/// # Errors
/// As [`import_file`].
pub fn import_glb(path: &Path, options: &ImportOptions) -> Result<Character, ImportError> {
    import_file(path, options)
}

/// Reads a character from glTF bytes (external buffers are not read); `file`
/// names it in errors.
///
/// # Errors
/// As [`import_file`].
pub fn import_bytes(bytes: &[u8], name: &str, file: &str, options: &ImportOptions) -> Result<Character, ImportError> {
    let source =
        Source::from_bytes(bytes, None).map_err(|reason| ImportError::Gltf { file: file.to_owned(), reason })?;
    import_source(&source, name, file, options)
}

fn import_source(source: &Source, name: &str, file: &str, options: &ImportOptions) -> Result<Character, ImportError> {
    let missing = |what: String| ImportError::Missing { file: file.to_owned(), what };
    let doc = &source.document;
    let scene = doc.default_scene().or_else(|| doc.scenes().next()).ok_or_else(|| missing("has no scene".into()))?;
    let mut tree = SceneTree::new(doc, &scene);
    let mut notes = Vec::new();
    if let Some((moved, farthest)) = tree.rest_at_bind(source) {
        notes.push(format!(
            "posed at its bind pose (from the skin's inverse bind matrices): its nodes rest in another pose, {moved} \
             joints up to {farthest:.3} units away; its proportions are those of the pose its mesh was bound in"
        ));
    }
    if !options.motion_only && !tree.has_skin() {
        return Err(missing(
            "has no skin (no mesh bound to a skeleton): crowdpatch animates skinned characters; export it with its \
             armature and skin weights"
                .into(),
        ));
    }
    let mut geometry = scene::read_geometry(&tree, source).map_err(|e| missing(format!("has {e}")))?;
    if !options.motion_only && geometry.primitives.is_empty() {
        return Err(missing(
            "has no triangle mesh to show (an animation file? pass it as --animation-source FILE)".into(),
        ));
    }
    if !geometry.left_out.is_empty() {
        notes.push(format!(
            "left out {} (a mesh without a skin that hangs from no joint)",
            geometry.left_out.join(", ")
        ));
    }
    // Humanoid mapping and the model frame.
    let rig = joints::rig(&tree);
    let vrm = vrm_bones(&source.json, rig.names.len());
    let humanoid = Humanoid::find(&rig, &vrm, options.joint_map.as_ref(), file)?;
    let (up, left) = humanoid.axes(&rig, file)?;
    notes.extend(humanoid.notes.iter().map(|n| format!("humanoid mapping: {n}")));
    let rot = model_rotation(up, left);
    if rot.angle() > 1e-6 {
        notes.push(format!("turned into the model frame: {}", describe_turn(&rot)));
    }
    let bones: Vec<usize> = humanoid.mapped().iter().map(|m| m.1).collect();
    let kept = joints::keep(&tree, &geometry, &bones, options.motion_only);
    let r4 = rot.to_homogeneous();
    geometry.transform(&r4);
    let rest_file = kept.skeleton.globals(&kept.skeleton.rest_pose());
    let joint_ys: Vec<f64> = rest_file.iter().map(|g| (rot * position_of(g)).y).collect();
    let legs: Vec<usize> = (0..2).flat_map(Bone::leg).filter_map(|b| humanoid.get(b)).collect();
    let ground = geometry
        .lowest_below(&|node| legs.iter().any(|&l| tree.is_ancestor(l, node)))
        .or_else(|| geometry.bounds().map(|b| b.0.y))
        .unwrap_or_else(|| joint_ys.iter().copied().fold(f64::INFINITY, f64::min));
    // Without a mesh (an animation file), the top of the head is a tenth
    // above the highest joint.
    let top = geometry.bounds().map_or_else(
        || ground + 1.1 * (joint_ys.iter().copied().fold(f64::NEG_INFINITY, f64::max) - ground),
        |b| b.1.y,
    );
    let file_height = top - ground;
    let scale = match options.height {
        Some(h) if file_height > 1e-9 && h > 0.0 => h / file_height,
        _ => 1.0,
    };
    if (scale - 1.0).abs() > 1e-6 {
        notes.push(format!("scaled by {scale:.4} to {:.2} m (it is {file_height:.3} units tall)", file_height * scale));
    }
    // The hips above the model origin at rest (the root of root motion).
    let hips_at = rest_file.get(kept.index_of.get(&humanoid.get(Bone::Hips).unwrap_or(0)).copied().unwrap_or(0));
    let hips_at = hips_at.map_or(V3::zeros(), |g| rot * position_of(g));
    let place = Matrix4::new_scaling(scale) * Matrix4::new_translation(&V3::new(-hips_at.x, -ground, -hips_at.z));
    geometry.transform(&place);
    let to_model = place * r4;
    // The skeleton in the model frame with unit scales.
    let rest = kept.skeleton.model_pose(&kept.skeleton.rest_pose(), &to_model);
    let skeleton = Skeleton {
        joints: kept
            .skeleton
            .joints
            .iter()
            .zip(&rest)
            .map(|(j, t)| super::Joint { name: j.name.clone(), parent: j.parent, rest: *t })
            .collect(),
    };
    let humanoid = humanoid.remap(|node| kept.index_of.get(&node).copied());
    let hips = humanoid.get(Bone::Hips).ok_or_else(|| missing("has no hips joint".into()))?;
    // Clips in the model frame, in place.
    let (raw, clip_notes) = clips::read_clips(source, &tree, &kept);
    notes.extend(clip_notes.into_iter().map(|n| format!("clip {n}")));
    let clips: Vec<Clip> = raw.into_iter().map(|c| model_clip(c, &kept.skeleton, &skeleton, &to_model, hips)).collect();
    let primitives = scene::primitives_by_material(doc, &geometry, |node| kept.joint_of(node).unwrap_or(0));
    let feet = std::array::from_fn(|s| {
        let [_, lower, foot, toes] = Bone::leg(s);
        let ankle = humanoid.get(foot).or(humanoid.get(lower)).or(humanoid.get(Bone::leg(s)[0])).unwrap_or(hips);
        let contact = humanoid.get(toes).filter(|&t| skeleton.is_ancestor(ankle, t)).unwrap_or(ankle);
        FootJoints { ankle, contact }
    });
    let height = geometry.bounds().map_or(file_height * scale, |(lo, hi)| hi.y - lo.y.min(0.0));
    let upper_legs = [0, 1].map(|s| humanoid.get(Bone::leg(s)[0]));
    let mut character = Character {
        name: name.to_owned(),
        mirror: mirror_map(&skeleton),
        hips,
        skeleton,
        primitives,
        feet,
        clips,
        idle: None,
        height,
        humanoid: Some(humanoid),
        notes,
    };
    let soles = super::rigid::add_sole_joints(&mut character, upper_legs);
    if !soles.is_empty() {
        character.notes.push(format!(
            "legs without knee or foot joints: they walk as rigid legs (a compass), on sole joints added at their \
             soles ({})",
            soles.join(", ")
        ));
    }
    Ok(character)
}

/// A clip as read, in the model frame, put in place, and cyclic when its
/// first and last poses agree (then its last frame, a repeat of the first,
/// is dropped).
fn model_clip(raw: RawClip, file: &Skeleton, model: &Skeleton, to_model: &Matrix4<f64>, hips: usize) -> Clip {
    let frames: Vec<Pose> = raw.frames.iter().map(|f| file.model_pose(f, to_model)).collect();
    let mut clip = Clip { name: raw.name, frame_interval: raw.frame_interval, frames, cyclic: false };
    clip.make_in_place_at(model, hips);
    clip.centre_at(model, hips);
    let n = clip.frames.len();
    let extent = {
        let p = model.positions(&model.rest_pose());
        let (lo, hi) = p.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |a, q| (a.0.min(q.y), a.1.max(q.y)));
        (hi - lo).max(1e-3)
    };
    let (first, last) = (model.positions(&clip.frames[0]), model.positions(&clip.frames[n - 1]));
    let (q0, q1) = (model.globals(&clip.frames[0]), model.globals(&clip.frames[n - 1]));
    let cyclic = (0..model.len()).all(|j| {
        (first[j] - last[j]).norm() < 0.01 * extent && rotation_of(&q0[j]).angle_to(&rotation_of(&q1[j])) < 0.05
    });
    if cyclic && n > 2 {
        clip.frames.pop();
        clip.cyclic = true;
    }
    clip
}

/// The file axes that became up and forward, in words.
fn describe_turn(rot: &Rotation3<f64>) -> String {
    let name = |v: V3| -> String {
        let k = (0..3).max_by(|&a, &b| v[a].abs().total_cmp(&v[b].abs())).unwrap_or(1);
        let sign = if v[k] >= 0.0 { "+" } else { "−" };
        if v[k].abs() > 0.999 {
            format!("{sign}{}", ["X", "Y", "Z"][k])
        } else {
            format!("({:.2}, {:.2}, {:.2})", v.x, v.y, v.z)
        }
    };
    let inv = rot.inverse();
    format!("it stood along {} of the file facing {}; now +Y up, facing +Z", name(inv * V3::y()), name(inv * V3::z()))
}

/// The humanoid bones of a VRM file's extension (`VRM` 0.x or `VRMC_vrm`
/// 1.0), bone → node index; empty for other files.
fn vrm_bones(json: &serde_json::Value, nodes: usize) -> BTreeMap<Bone, usize> {
    let mut out = BTreeMap::new();
    let ext = json.get("extensions");
    let mut add = |name: &str, node: Option<u64>| {
        if let (Some(bone), Some(n)) = (Bone::from_name(name), node)
            && (n as usize) < nodes
            && !(name == "upperChest" && out.contains_key(&Bone::Chest))
        {
            out.insert(bone, n as usize);
        }
    };
    // VRM 0.x: humanBones is a list of {bone, node}.
    if let Some(list) = ext.and_then(|e| e.pointer("/VRM/humanoid/humanBones")).and_then(|v| v.as_array()) {
        for b in list {
            add(b.get("bone").and_then(|v| v.as_str()).unwrap_or(""), b.get("node").and_then(|v| v.as_u64()));
        }
    }
    // VRM 1.0: humanBones is an object of bone → {node}.
    if let Some(map) = ext.and_then(|e| e.pointer("/VRMC_vrm/humanoid/humanBones")).and_then(|v| v.as_object()) {
        for (k, v) in map {
            add(k, v.get("node").and_then(|x| x.as_u64()));
        }
    }
    out
}

/// Synthetic skinned glTF files for tests: a rig's joints as nodes, bound
/// at the rig's positions, with a mesh of one sliver triangle a bone.
#[cfg(test)]
pub(crate) mod synthetic {
    use crate::character::Quat;
    use crate::character::humanoid::Rig;
    use base64::Engine;
    use serde_json::json;

    /// A `.gltf` (JSON, its buffer a data URI) of `rig`: node `i` named
    /// `rig.names[i]`, bound (inverse bind matrices) at `rig.positions` with
    /// no rotation, resting at the bind pose turned by `rest[i]` (a local
    /// rotation) where given: a file saved in another pose than its bind.
    /// Each bone, parent to child, is a triangle weighted to the parent.
    pub(crate) fn skinned_gltf(rig: &Rig, rest: &[(usize, Quat)]) -> Vec<u8> {
        let n = rig.names.len();
        let mut bytes: Vec<u8> = Vec::new();
        let push = |bytes: &mut Vec<u8>, v: &[f32]| {
            let at = bytes.len();
            bytes.extend(v.iter().flat_map(|x| x.to_le_bytes()));
            (at, bytes.len() - at)
        };
        // Inverse bind matrices: translations by minus each position
        // (column-major).
        let ibm: Vec<f32> = rig
            .positions
            .iter()
            .flat_map(|p| {
                let mut m = [0f32; 16];
                m[0] = 1.0;
                m[5] = 1.0;
                m[10] = 1.0;
                m[15] = 1.0;
                m[12] = -p.x as f32;
                m[13] = -p.y as f32;
                m[14] = -p.z as f32;
                m
            })
            .collect();
        let ibm = push(&mut bytes, &ibm);
        let mut positions = Vec::new();
        let mut joints = Vec::new();
        for i in 0..n {
            let Some(p) = rig.parents[i] else { continue };
            let (a, b) = (rig.positions[p], rig.positions[i]);
            for q in [a, b, b + crate::character::V3::new(0.02, 0.0, 0.02)] {
                positions.extend([q.x as f32, q.y as f32, q.z as f32]);
                joints.extend([p as f32, 0.0, 0.0, 0.0]);
            }
        }
        let count = positions.len() / 3;
        let (lo, hi) = positions.chunks(3).fold(([f32::MAX; 3], [f32::MIN; 3]), |(mut lo, mut hi), q| {
            for k in 0..3 {
                lo[k] = lo[k].min(q[k]);
                hi[k] = hi[k].max(q[k]);
            }
            (lo, hi)
        });
        let pos = push(&mut bytes, &positions);
        // Joint indices as unsigned shorts (two a float's bytes, padded).
        let shorts: Vec<u8> = joints.iter().flat_map(|&j| (j as u16).to_le_bytes()).collect();
        let jnt = (bytes.len(), shorts.len());
        bytes.extend(shorts);
        let weights: Vec<f32> = (0..count).flat_map(|_| [1.0, 0.0, 0.0, 0.0]).collect();
        let wgt = push(&mut bytes, &weights);
        let nodes: Vec<serde_json::Value> = (0..n)
            .map(|i| {
                let t = rig.parents[i].map_or(rig.positions[i], |p| rig.positions[i] - rig.positions[p]);
                let children: Vec<usize> = (0..n).filter(|&c| rig.parents[c] == Some(i)).collect();
                let mut node = json!({"name": rig.names[i], "translation": [t.x, t.y, t.z]});
                if let Some((_, q)) = rest.iter().find(|r| r.0 == i) {
                    node["rotation"] = json!([q.i, q.j, q.k, q.w]);
                }
                if !children.is_empty() {
                    node["children"] = json!(children);
                }
                node
            })
            .chain([json!({"name": "body", "mesh": 0, "skin": 0})])
            .collect();
        let roots: Vec<usize> = (0..n).filter(|&i| rig.parents[i].is_none()).chain([n]).collect();
        let view = |(at, len): (usize, usize)| json!({"buffer": 0, "byteOffset": at, "byteLength": len});
        let doc = json!({
            "asset": {"version": "2.0"},
            "scene": 0,
            "scenes": [{"nodes": roots}],
            "nodes": nodes,
            "skins": [{"joints": (0..n).collect::<Vec<_>>(), "inverseBindMatrices": 0}],
            "meshes": [{"primitives": [{"attributes": {"POSITION": 1, "JOINTS_0": 2, "WEIGHTS_0": 3}}]}],
            "buffers": [{
                "byteLength": bytes.len(),
                "uri": format!(
                    "data:application/octet-stream;base64,{}",
                    base64::engine::general_purpose::STANDARD.encode(&bytes)
                ),
            }],
            "bufferViews": [view(ibm), view(pos), view(jnt), view(wgt)],
            "accessors": [
                {"bufferView": 0, "componentType": 5126, "count": n, "type": "MAT4"},
                {"bufferView": 1, "componentType": 5126, "count": count, "type": "VEC3", "min": lo, "max": hi},
                {"bufferView": 2, "componentType": 5123, "count": count, "type": "VEC4"},
                {"bufferView": 3, "componentType": 5126, "count": count, "type": "VEC4"},
            ],
        });
        serde_json::to_vec(&doc).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::character::Quat;
    use crate::character::humanoid::tests::biped;

    #[test]
    fn proportions_come_from_the_bind_pose_not_from_a_crouched_rest() {
        // The same humanoid saved straight, and saved with its nodes resting
        // in a crouch (thighs 60° forward, knees 120° bent): its mesh was
        // bound straight, as the inverse bind matrices say.
        let rig = biped(|p| p.to_string());
        let bend = |a: f64| Quat::from_axis_angle(&V3::x_axis(), a.to_radians());
        let crouch = [(3, bend(-60.0)), (7, bend(-60.0)), (4, bend(120.0)), (8, bend(120.0))];
        let options = ImportOptions { height: Some(1.75), ..Default::default() };
        let import = |rest: &[(usize, Quat)]| {
            import_bytes(&synthetic::skinned_gltf(&rig, rest), "walker", "walker.gltf", &options).unwrap()
        };
        let straight = import(&[]);
        let crouched = import(&crouch);
        assert!(straight.notes.iter().all(|n| !n.contains("bind pose")), "{:?}", straight.notes);
        assert!(crouched.notes.iter().any(|n| n.contains("posed at its bind pose")), "{:?}", crouched.notes);
        assert!((straight.height - crouched.height).abs() < 1e-6, "{} {}", straight.height, crouched.height);
        let (a, b) = (straight.leg_length(), crouched.leg_length());
        assert!((a - b).abs() < 1e-6, "leg {a} straight, {b} from the crouched file");
        // The rest pose is the straight one: each knee right under its hip.
        let p = crouched.skeleton.positions(&crouched.skeleton.rest_pose());
        let knee = |s: usize| {
            let [u, l, ..] = Bone::leg(s);
            let h = crouched.humanoid.as_ref().unwrap();
            (p[h.get(u).unwrap()], p[h.get(l).unwrap()])
        };
        for s in 0..2 {
            let (hip, knee) = knee(s);
            assert!((hip.x - knee.x).hypot(hip.z - knee.z) < 1e-6, "{hip} {knee}");
        }
        // Read at the nodes' crouch, the figure would be shorter and so
        // scaled up: its leg over its height is the straight figure's
        // (hip height over the top of the head, the soles at 0).
        let top = rig.positions.iter().map(|q| q.y).fold(f64::MIN, f64::max);
        let ratio = rig.positions[3].y / top;
        assert!((b / crouched.height - ratio).abs() < 1e-3, "{b} of {}: {ratio}", crouched.height);
    }

    #[test]
    fn clips_leave_unkeyed_joints_at_the_files_pose_not_at_the_bind_pose() {
        // The rest moves to the bind pose; what a clip does not key keeps
        // the node's transform in the file (glTF: an unanimated property
        // holds the node's own value), so a clip plays as authored.
        let rig = biped(|p| p.to_string());
        let bent = Quat::from_axis_angle(&V3::x_axis(), -1.0);
        let bytes = synthetic::skinned_gltf(&rig, &[(3, bent)]);
        let source = Source::from_bytes(&bytes, None).unwrap();
        let scene = source.document.scenes().next().unwrap();
        let mut tree = SceneTree::new(&source.document, &scene);
        assert!(tree.rest_at_bind(&source).is_some());
        assert!(tree.local[3].rotation.angle() < 1e-6, "the rest is the bind pose");
        assert!(tree.file_local[3].rotation.angle_to(&bent) < 1e-6, "the file's pose is kept for clips");
        let same = |a: &crate::character::Transform, b: &crate::character::Transform| {
            (a.translation - b.translation).norm() < 1e-6 && a.rotation.angle_to(&b.rotation) < 1e-6
        };
        assert!((0..rig.names.len()).all(|i| i == 3 || same(&tree.file_local[i], &tree.local[i])));
    }

    #[test]
    fn vrm_extensions_of_both_versions_are_read() {
        let v0: serde_json::Value = serde_json::from_str(
            r#"{"extensions": {"VRM": {"humanoid": {"humanBones": [{"bone": "hips", "node": 2}, {"bone": "leftFoot", "node": 7}, {"bone": "leftThumbProximal", "node": 9}]}}}}"#,
        )
        .unwrap();
        let b = vrm_bones(&v0, 10);
        assert_eq!(b.get(&Bone::Hips), Some(&2));
        assert_eq!(b.get(&Bone::LeftFoot), Some(&7));
        assert_eq!(b.len(), 2, "fingers are not humanoid bones here");
        let v1: serde_json::Value = serde_json::from_str(
            r#"{"extensions": {"VRMC_vrm": {"humanoid": {"humanBones": {"hips": {"node": 1}, "rightToes": {"node": 30}}}}}}"#,
        )
        .unwrap();
        let b = vrm_bones(&v1, 10);
        assert_eq!(b.get(&Bone::Hips), Some(&1));
        assert!(!b.contains_key(&Bone::RightToes), "node 30 is out of range");
    }
}
