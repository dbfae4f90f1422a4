//! `--animation`, `--character`, `--character-height`, `--frame-rate` and
//! where a character's walk comes from (`--joint-map`, `--animation-source`,
//! `--source-joint-map`).

use super::parse::{at_least, within};
use clap::{Args, ValueEnum};
use crowdpatch::character::setup::{AnimationSource, CharacterSpec, Setup, setup};
use crowdpatch::limits::FRAME_RATE_RANGE;
use std::path::PathBuf;

/// Height of the built-in character `[m]`
/// ([`crowdpatch::character::builtin::character`]): the height an imported
/// character is scaled to unless told otherwise, so that the two walk alike.
pub const BUILTIN_HEIGHT: f64 = 1.75;

/// Default of `--frame-rate` `[Hz]`.
pub const DEFAULT_FRAME_RATE: f64 = 30.0;

/// How agents are animated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AnimationArg {
    /// Skinned characters: footsteps planned along each path (A*), foot-locked
    /// skeletal animation, footsteps in the extras.
    Skeletal,
    /// Capsules that follow the paths (no footsteps).
    None,
}

impl AnimationArg {
    /// Its value on the command line (`skeletal`, `none`).
    pub fn name(self) -> String {
        self.to_possible_value().map(|v| v.get_name().to_owned()).unwrap_or_default()
    }
}

/// `--animation` alone: the commands that animate nothing themselves but
/// pass it on (`bench --protocol growth`) flatten this.
#[derive(Debug, Clone, Args)]
pub struct AnimationMode {
    /// How agents are played: skinned characters walking on planned footsteps,
    /// or capsules.
    #[arg(long, value_enum, default_value = "skeletal")]
    pub animation: AnimationArg,
}

/// Options of the animation stage shared by `bake`, `compose` and `validate`
/// (so that all judge a document by the same bake). `compose` plays capsules
/// by default (`--animation none`); the others, skinned characters.
#[derive(Debug, Clone, Args)]
pub struct AnimationArgs {
    #[command(flatten)]
    pub mode: AnimationMode,

    /// The character of a skeletal bake: `builtin` (generated, no asset
    /// needed) or a rigged humanoid in glTF (.glb or .gltf); without a walk
    /// clip of its own it walks with a retargeted one (--animation-source).
    #[arg(long, value_name = "builtin|FILE", default_value = "builtin")]
    pub character: String,

    /// Scale an imported character to this height [m]; 0 keeps the file's
    /// scale.
    #[arg(long, value_name = "M", default_value_t = BUILTIN_HEIGHT, allow_negative_numbers = true,
          value_parser = at_least(0.0))]
    pub character_height: f64,

    /// Sample rate of the skeletal joint tracks [Hz] (rounded so that a whole
    /// number of samples fills the period), in [1, 240]; period × rate may
    /// not exceed 100000 samples.
    #[arg(long, value_name = "HZ", default_value_t = DEFAULT_FRAME_RATE, allow_negative_numbers = true,
          value_parser = within(FRAME_RATE_RANGE.0, FRAME_RATE_RANGE.1))]
    pub frame_rate: f64,

    #[command(flatten)]
    pub walk: WalkArgs,
}

/// Where a character's walk comes from, and joint maps (shared by the
/// commands that bake and `character inspect`).
#[derive(Debug, Args, Clone, PartialEq, Eq)]
pub struct WalkArgs {
    /// A joint map naming the character's humanoid joints where their names
    /// do not tell: {"format": 1, "bones": {"hips": "pelvis", "leftUpperLeg":
    /// "Thigh_L", …}} (VRM humanoid bone names).
    #[arg(long, value_name = "FILE.json")]
    pub joint_map: Option<PathBuf>,
    /// Where the walk comes from: `auto` (the character's own walk clips,
    /// else the built-in walks retargeted onto it), `none` (its own clips
    /// only), `builtin` (the built-in walks, retargeted), or a file holding
    /// a walk on another rig (.glb, .gltf or .bvh), retargeted.
    #[arg(long, value_name = "auto|none|builtin|FILE", default_value = "auto")]
    pub animation_source: String,
    /// A joint map for the animation source file.
    #[arg(long, value_name = "FILE.json")]
    pub source_joint_map: Option<PathBuf>,
}

impl Default for WalkArgs {
    fn default() -> Self {
        WalkArgs { joint_map: None, animation_source: "auto".into(), source_joint_map: None }
    }
}

impl AnimationArgs {
    /// How agents are played.
    pub fn animation(&self) -> AnimationArg {
        self.mode.animation
    }

    /// The files a skeletal bake reads besides the documents, with their
    /// flags: the character, the animation source and the joint maps (none
    /// for capsules).
    pub fn input_files(&self) -> Vec<(&'static str, PathBuf)> {
        if self.animation() != AnimationArg::Skeletal {
            return Vec::new();
        }
        let mut out = Vec::new();
        if self.character != "builtin" {
            out.push(("--character", PathBuf::from(&self.character)));
        }
        if !["auto", "none", "builtin"].contains(&self.walk.animation_source.as_str()) {
            out.push(("--animation-source", PathBuf::from(&self.walk.animation_source)));
        }
        for (flag, map) in [("--joint-map", &self.walk.joint_map), ("--source-joint-map", &self.walk.source_joint_map)]
        {
            if let Some(m) = map {
                out.push((flag, m.clone()));
            }
        }
        out
    }

    /// These settings in one line, for a cache stamp: the animation and the
    /// character, then, for a skeletal bake, whatever else differs from the
    /// defaults.
    pub fn stamp(&self) -> String {
        // Files by name, not path: their content enters compose's stamp by
        // hash, and the machines of a farm mount them in different places.
        let name = |p: &std::path::Path| p.file_name().map_or(p.display().to_string(), |n| n.to_string_lossy().into());
        let character = name(std::path::Path::new(&self.character));
        let mut out = format!("animation {:?}, character {character}", self.animation());
        if self.animation() != AnimationArg::Skeletal {
            return out;
        }
        if self.character_height != BUILTIN_HEIGHT {
            out.push_str(&format!(", character height {}", self.character_height));
        }
        if self.frame_rate != DEFAULT_FRAME_RATE {
            out.push_str(&format!(", frame rate {}", self.frame_rate));
        }
        let walk = &self.walk;
        if walk.animation_source != "auto" {
            out.push_str(&format!(", animation source {}", name(std::path::Path::new(&walk.animation_source))));
        }
        for (what, map) in [("joint map", &walk.joint_map), ("source joint map", &walk.source_joint_map)] {
            if let Some(m) = map {
                out.push_str(&format!(", {what} {}", name(m)));
            }
        }
        out
    }
}

/// Loads and prepares `character` (`builtin` or a glTF file) scaled to
/// `height` `[m]` (0: the file's scale; ≥ 0, as `--character-height`
/// parses it), walking as `walk` says, for a crowd walking at `walk_speed`
/// `[m/s]`.
///
/// # Errors
/// The core's [`crowdpatch::character::setup::SetupError`]: an unreadable
/// file, a rig that is not a biped, no walk to be had.
pub fn load_character(character: &str, height: f64, walk: &WalkArgs, walk_speed: f64) -> anyhow::Result<Setup> {
    let spec = CharacterSpec {
        file: (character != "builtin").then(|| PathBuf::from(character)),
        height: (height > 0.0).then_some(height),
        joint_map: walk.joint_map.clone(),
        animation_source: AnimationSource::parse(&walk.animation_source),
        source_joint_map: walk.source_joint_map.clone(),
        walk_speed: Some(walk_speed),
    };
    Ok(setup(&spec)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_height_is_the_builtin_characters() {
        assert_eq!(crowdpatch::character::builtin::character().height, BUILTIN_HEIGHT);
    }

    #[test]
    fn the_default_frame_rate_is_the_cores() {
        let sk = crowdpatch::animation::Skeletal::new(crowdpatch::character::builtin::character()).unwrap();
        assert_eq!(sk.frame_rate, DEFAULT_FRAME_RATE);
    }
}
