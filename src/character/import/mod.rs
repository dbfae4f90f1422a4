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

use super::{Character, Clip, FootJoints, mirror_map};
use crowdpatch_runtime::skeletal::SkinnedPrimitive;
use scene::SceneTree;
use std::path::Path;

mod clips;
mod joints;
mod scene;

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
/// Phases: the scene's node tree ([`scene::SceneTree`]), its triangle
/// geometry in the model frame ([`scene::read_geometry`]), the joints that
/// matter and the designated feet and hips ([`joints`]), the skinned
/// primitives by material, the clips ([`clips::read_clips`]), then the
/// height and an optional rescale. O(nodes + vertices + clip keys).
///
/// # Errors
/// As [`import_glb`].
pub fn import_bytes(bytes: &[u8], name: &str, file: &str, options: &ImportOptions) -> Result<Character, ImportError> {
    let missing = |what: String| ImportError::Missing { file: file.to_owned(), what };
    let g = gltf::Gltf::from_slice(bytes)
        .map_err(|e| ImportError::Gltf { file: file.to_owned(), reason: e.to_string() })?;
    let blob = g.blob.clone().unwrap_or_default();
    let scene =
        g.default_scene().or_else(|| g.scenes().next()).ok_or_else(|| missing("the file has no scene".into()))?;
    let tree = SceneTree::new(&g, &scene);
    let geometry = scene::read_geometry(&tree, &blob);
    if geometry.primitives.is_empty() {
        return Err(missing("the scene has no triangle mesh to show".into()));
    }
    let designated = joints::designate(&tree).map_err(missing)?;
    let kept = joints::keep(&tree, &geometry, &designated);
    let mut primitives = scene::primitives_by_material(&g, &geometry, |node| kept.joint_of(node));
    let clips = clips::read_clips(&g, &blob, &tree, &kept, options.all_clips);
    let idle = clips.iter().position(|(_, i)| *i);
    let clips: Vec<Clip> = clips.into_iter().map(|(c, _)| c).collect();

    let feet = std::array::from_fn(|s| {
        let ankle = kept.index_of[&designated.feet[s]];
        FootJoints { ankle, contact: designated.toes[s].map_or(ankle, |t| kept.index_of[&t]) }
    });
    let mut character = Character {
        name: name.to_owned(),
        mirror: mirror_map(&kept.skeleton),
        hips: kept.index_of[&designated.hips],
        skeleton: kept.skeleton,
        primitives: Vec::new(),
        feet,
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
