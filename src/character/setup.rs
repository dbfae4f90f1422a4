//! A character ready to walk, from what the user gives: a character
//! (built-in or a glTF file, with an optional joint map) and where its walk
//! comes from ([`AnimationSource`]).
//!
//! The character's clips are measured ([`crate::character::choice`]); its
//! own walks are used when it has any. A character with no usable walk (a
//! Mixamo download in T-pose, a rig whose clips are attacks and runs) walks
//! with walks retargeted onto it ([`crate::character::retarget`]) from the
//! built-in character's procedural walks, or from the walks of another file
//! (`--animation-source FILE.glb|FILE.gltf|FILE.bvh`). Its own idle is used
//! for standing agents when it has one, else the source's, else its rest
//! pose.

use super::bvh;
use super::choice::{ClipChoice, ClipKind, choose, classify, straightest_cycle};
use super::humanoid::{Bone, Humanoid, JointMap, MapError, Rig, model_rotation};
use super::import::{ImportError, ImportOptions, import_file};
use super::retarget::{Retarget, RetargetError};
use super::{Character, FootJoints, builtin, mirror_map};
use nalgebra::Matrix4;
use std::path::{Path, PathBuf};

/// Where a character's walk comes from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum AnimationSource {
    /// Its own walk clips; when it has none, the built-in walks retargeted.
    #[default]
    Auto,
    /// Its own walk clips only (refused when it has none).
    None,
    /// The built-in character's walks, retargeted.
    Builtin,
    /// The walks of another file (`.glb`, `.gltf` or `.bvh`), retargeted.
    File(PathBuf),
}

impl AnimationSource {
    /// Parses a command-line value: `auto`, `none`, `builtin` or a path.
    pub fn parse(s: &str) -> AnimationSource {
        match s {
            "auto" => AnimationSource::Auto,
            "none" => AnimationSource::None,
            "builtin" => AnimationSource::Builtin,
            path => AnimationSource::File(PathBuf::from(path)),
        }
    }
}

/// What to load.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CharacterSpec {
    /// A glTF file, or `None` for the built-in character.
    pub file: Option<PathBuf>,
    /// Scale an imported character to this height `[m]` (`None`: the file's).
    pub height: Option<f64>,
    /// A joint map for the character.
    pub joint_map: Option<PathBuf>,
    /// Where its walk comes from.
    pub animation_source: AnimationSource,
    /// A joint map for the animation source file.
    pub source_joint_map: Option<PathBuf>,
    /// The speed the crowd walks at `[m/s]` (the patches' comfort speed;
    /// `None`: 1.33 m/s). With [`AnimationSource::Auto`], own walks whose
    /// fastest straight step is slower than 3/4 of it are not used: a walker
    /// cannot triple its cadence, and the built-in walks retargeted cover
    /// human speeds.
    pub walk_speed: Option<f64>,
}

/// Why a character cannot walk.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The character (or the source) could not be imported.
    #[error(transparent)]
    Import(#[from] ImportError),
    /// A joint map is malformed, or a rig is not a biped.
    #[error(transparent)]
    Map(#[from] MapError),
    /// A BVH file is malformed.
    #[error("{0}")]
    Bvh(String),
    /// A rig has no humanoid mapping.
    #[error(transparent)]
    Retarget(#[from] RetargetError),
    /// No walk to be had.
    #[error("{0}")]
    NoWalk(String),
}

/// A character ready to walk, and how it was made.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The character: its walks (own or retargeted) and idle as clips.
    pub character: Character,
    /// The verdict on each of the character's own clips.
    pub choices: Vec<ClipChoice>,
    /// The verdict on each clip of the animation source, when one was used.
    pub source_choices: Vec<ClipChoice>,
    /// Where the walks come from, in words.
    pub walks_from: String,
    /// What was done, in words.
    pub notes: Vec<String>,
}

/// Loads and prepares a character as `spec` says.
///
/// # Errors
/// [`SetupError`] with one sentence saying what is missing and what to
/// pass: an unreadable or unsupported file, a rig that is not a biped, no
/// walk (with `--animation-source none`), a source without a walk.
pub fn setup(spec: &CharacterSpec) -> Result<Setup, SetupError> {
    let joint_map = spec.joint_map.as_deref().map(JointMap::load).transpose()?;
    let Some(file) = &spec.file else {
        // The built-in clips are made to measure: all are used (its walk on
        // the spot too, for slow and shuffling agents).
        let character = builtin::character();
        let choices = classify(&character);
        return Ok(Setup {
            character,
            choices,
            source_choices: Vec::new(),
            walks_from: "its own clips".into(),
            notes: vec![],
        });
    };
    let options = ImportOptions { height: spec.height, joint_map, motion_only: false };
    let mut character = import_file(file, &options)?;
    let mut notes = std::mem::take(&mut character.notes);
    // Before its clips are judged: a pop splits a stance in two.
    notes.extend(super::repair_clip_pops(&mut character));
    let mut own = character.clone();
    let choices = choose(&mut own);
    let own_walks = choices.iter().filter(|c| c.kind == ClipKind::Walk).count();
    let runs: Vec<&str> = choices.iter().filter(|c| c.kind == ClipKind::Run).map(|c| c.name.as_str()).collect();
    if !runs.is_empty() {
        notes.push(format!("{} measured as a run (flight phase): not used as a walk", runs.join(", ")));
    }
    let fastest = choices.iter().filter(|c| c.kind == ClipKind::Walk).map(|c| c.speed).fold(0.0, f64::max);
    let need = spec.walk_speed.unwrap_or(1.33);
    let source = match (&spec.animation_source, own_walks) {
        (AnimationSource::Auto, n) if n > 0 && fastest >= 0.75 * need => None,
        (AnimationSource::Auto, n) if n > 0 => {
            notes.push(format!(
                "its own walks reach {fastest:.2} m/s, too slow for a crowd at {need:.2} m/s: walking with the \
                 built-in walks retargeted through its humanoid mapping (--animation-source none keeps its own)"
            ));
            Some(AnimationSource::Builtin)
        }
        (AnimationSource::None, 0) => {
            return Err(SetupError::NoWalk(format!(
                "{} has no walk clip ({}) and --animation-source none was given: pass --animation-source builtin \
                 (the built-in walks, retargeted) or --animation-source FILE.glb|FILE.bvh (a walk on another rig)",
                file.display(),
                describe_clips(&choices)
            )));
        }
        (AnimationSource::None, _) => None,
        (AnimationSource::Auto, _) => {
            notes.push(format!(
                "no usable walk clip ({}): walking with the built-in walks retargeted through its humanoid mapping",
                describe_clips(&choices)
            ));
            Some(AnimationSource::Builtin)
        }
        (s, _) => Some(s.clone()),
    };
    let Some(source) = source else {
        return Ok(Setup {
            character: own,
            choices,
            source_choices: Vec::new(),
            walks_from: "its own clips".into(),
            notes,
        });
    };
    let (mut motion, from) = load_source(&source, spec.source_joint_map.as_deref())?;
    for note in super::repair_clip_pops(&mut motion) {
        notes.push(format!("{from}: {note}"));
    }
    // A take that is not a loop gives its straightest whole gait cycle.
    for k in 0..motion.clips.len() {
        if let Some(c) = straightest_cycle(&motion, &motion.clips[k]) {
            motion.clips[k] = c;
        }
    }
    let source_choices = if source == AnimationSource::Builtin {
        // All the built-in walks, its walk on the spot included; its idle last.
        classify(&motion)
    } else {
        choose(&mut motion)
    };
    if !source_choices.iter().any(|c| c.kind == ClipKind::Walk) {
        return Err(SetupError::NoWalk(format!(
            "the animation source {from} has no walk clip ({}): pass a file with a forward walk",
            describe_clips(&source_choices)
        )));
    }
    let r = Retarget::new(&motion, &character)?;
    let k = r.k;
    let own_idle = own.idle.map(|i| own.clips[i].clone());
    let walks: Vec<_> =
        motion.clips.iter().take(motion.idle.unwrap_or(motion.clips.len())).map(|c| r.clip(c)).collect();
    let idle = own_idle.or_else(|| motion.idle.map(|i| r.clip(&motion.clips[i])));
    let mut target = character;
    target.clips = walks;
    target.idle = idle.map(|c| {
        target.clips.push(c);
        target.clips.len() - 1
    });
    notes.push(format!(
        "walks retargeted from {from}: lengths ×{:.3} (leg {:.3} m onto {:.3} m), time ×{:.3}",
        k,
        motion.leg_length(),
        target.leg_length(),
        k.sqrt()
    ));
    // The retargeted clips, measured like any.
    let check = classify(&target);
    for c in &check {
        if c.kind != ClipKind::Walk && c.kind != ClipKind::Idle {
            notes.push(format!("retargeted clip {} is not a walk: {}", c.name, c.why));
        }
    }
    let walks_from = format!("{from} (retargeted)");
    Ok(Setup { character: target, choices, source_choices, walks_from, notes })
}

/// Clip names with their verdicts, short.
fn describe_clips(choices: &[ClipChoice]) -> String {
    if choices.is_empty() {
        return "it has no clip at all".into();
    }
    let mut v: Vec<String> = choices.iter().take(8).map(|c| format!("{}: {}", c.name, c.kind.name())).collect();
    if choices.len() > 8 {
        v.push(format!("{} more", choices.len() - 8));
    }
    format!("clips {}", v.join(", "))
}

/// The animation source as a character (skeleton, clips, mapping; no mesh
/// needed) and its name for messages.
///
/// # Errors
/// As [`setup`].
pub fn load_source(source: &AnimationSource, joint_map: Option<&Path>) -> Result<(Character, String), SetupError> {
    let joint_map = joint_map.map(JointMap::load).transpose()?;
    match source {
        AnimationSource::File(path) => {
            let name = path.display().to_string();
            let is_bvh = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("bvh"));
            let c = if is_bvh {
                let meta = std::fs::metadata(path).map_err(|e| SetupError::Bvh(format!("{name}: {e}")))?;
                if meta.len() > bvh::MAX_BYTES as u64 {
                    return Err(SetupError::Bvh(format!("{name}: larger than {} bytes", bvh::MAX_BYTES)));
                }
                let text = std::fs::read_to_string(path).map_err(|e| SetupError::Bvh(format!("{name}: {e}")))?;
                let b = bvh::parse(&text, &name).map_err(SetupError::Bvh)?;
                bvh_character(b, &name, joint_map.as_ref())?
            } else {
                let options = ImportOptions { height: Some(1.75), joint_map, motion_only: true };
                import_file(path, &options)?
            };
            Ok((c, name))
        }
        _ => Ok((builtin::character(), "the built-in character".into())),
    }
}

/// A BVH take as a character without a mesh: mapped, turned into the model
/// frame, 1.75 m tall, its rest pose on the take's ground; the take keeps
/// its root motion.
fn bvh_character(b: bvh::Bvh, file: &str, joint_map: Option<&JointMap>) -> Result<Character, SetupError> {
    let sk = &b.skeleton;
    let rig = Rig {
        names: sk.joints.iter().map(|j| j.name.clone()).collect(),
        parents: sk.joints.iter().map(|j| j.parent).collect(),
        positions: sk.positions(&sk.rest_pose()),
        eligible: vec![true; sk.len()],
    };
    let h = Humanoid::find(&rig, &Default::default(), joint_map, file)?;
    let (up, left) = h.axes(&rig, file)?;
    let rot = model_rotation(up, left).to_homogeneous();
    // A take places its root absolutely (hips a metre up), its rest pose at
    // the origin: the rest pose is raised onto the take's ground, the
    // lowest a foot's contact comes in the take.
    let hips = h.get(Bone::Hips).unwrap_or(0);
    let contacts: Vec<usize> = (0..2).filter_map(|s| h.get(Bone::leg(s)[3]).or(h.get(Bone::leg(s)[2]))).collect();
    let take_ground = b
        .clip
        .frames
        .iter()
        .flat_map(|f| {
            let p = sk.positions(f);
            contacts.iter().map(move |&c| (rot * p[c].push(1.0)).y).collect::<Vec<_>>()
        })
        .fold(f64::INFINITY, f64::min);
    let rest_p: Vec<_> = rig.positions.iter().map(|x| (rot * x.push(1.0)).xyz()).collect();
    let rest_low = contacts.iter().map(|&c| rest_p[c].y).fold(f64::INFINITY, f64::min);
    let mut sk = sk.clone();
    if take_ground.is_finite() && rest_low.is_finite() {
        // The root's rest translation, in the file frame, raised by the gap.
        let lift = (rot.fixed_view::<3, 3>(0, 0).transpose() * super::V3::new(0.0, take_ground - rest_low, 0.0)).xyz();
        sk.joints[0].rest.translation += lift;
    }
    let rest_p = sk.positions(&sk.rest_pose());
    let ground = if take_ground.is_finite() {
        take_ground
    } else {
        rest_p.iter().map(|x| (rot * x.push(1.0)).y).fold(f64::INFINITY, f64::min)
    };
    // 1.75 m tall: the top joint (the head's end) a tenth below the top.
    let top = rest_p.iter().map(|x| (rot * x.push(1.0)).y).fold(f64::NEG_INFINITY, f64::max);
    let scale = 1.75 / (1.1 * (top - ground)).max(1e-9);
    let to_model = Matrix4::new_scaling(scale) * Matrix4::new_translation(&super::V3::new(0.0, -ground, 0.0)) * rot;
    let sk = &sk;
    let _ = hips;
    let rest = sk.model_pose(&sk.rest_pose(), &to_model);
    let skeleton = super::Skeleton {
        joints: sk.joints.iter().zip(&rest).map(|(j, t)| super::Joint { rest: *t, ..j.clone() }).collect(),
    };
    let mut clip = b.clip;
    clip.frames = clip.frames.iter().map(|f| sk.model_pose(f, &to_model)).collect();
    // Root motion stays: the take's straightest cycle is cut out first.
    let hips = h.get(Bone::Hips).unwrap_or(0);
    let feet = std::array::from_fn(|s| {
        let [upper, lower, foot, toes] = Bone::leg(s);
        let ankle = h.get(foot).or(h.get(lower)).or(h.get(upper)).unwrap_or(hips);
        FootJoints { ankle, contact: h.get(toes).filter(|&t| skeleton.is_ancestor(ankle, t)).unwrap_or(ankle) }
    });
    let height = 1.75;
    let name = Path::new(file).file_stem().map_or_else(|| "bvh".into(), |s| s.to_string_lossy().into_owned());
    clip.name = format!("{name} take");
    Ok(Character {
        name,
        mirror: mirror_map(&skeleton),
        skeleton,
        primitives: Vec::new(),
        feet,
        hips,
        clips: vec![clip],
        idle: None,
        height,
        notes: h.notes.iter().map(|n| format!("humanoid mapping: {n}")).collect(),
        humanoid: Some(h),
    })
}
