//! How a bake is written: `--compress` and the joint keys' bounds
//! (`--key-*`, `--every-sample`).

use super::parse::within;
use clap::{Args, ValueEnum};

/// `--compress`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompressArg {
    /// Plain buffers (quantised, reduced keys).
    None,
    /// EXT_meshopt_compression.
    Meshopt,
}

/// The exporter's settings: how the GLB's data is stored and how many
/// joint keys it keeps.
#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    /// How the GLB's binary data is stored: `none` (joint keys reduced within
    /// 0.5° per joint, 1 mm at the extremities and 0.3 mm for a planted foot,
    /// rotations as normalised 16-bit integers; every glTF player), or
    /// `meshopt` (the same, compressed with
    /// EXT_meshopt_compression, for players with a meshopt decoder: three.js,
    /// Babylon.js, Unity glTFast, and the runtime crate with its `meshopt`
    /// feature).
    #[arg(long, value_enum, default_value = "none")]
    pub compress: CompressArg,

    #[command(flatten)]
    pub keys: KeyArgs,
}

/// `--key-*`: how far the written joint keys may stray from the baked
/// motion (the exporter's [`crowdpatch_gltf::KeyTolerance`], measured on
/// every joint at every baked sample), or `--every-sample`.
#[derive(Debug, Clone, Args)]
pub struct KeyArgs {
    /// Largest position error of the extremities (feet, hands, head, toes)
    /// against the baked motion [mm], in [0.25, 10], at every baked sample
    /// (between samples, as a player interpolates, up to about 1.6× that).
    /// Looser bounds keep fewer keys: smaller files, less faithful feet and
    /// hands.
    #[arg(long, value_name = "MM", default_value_t = 1.0, allow_negative_numbers = true,
          value_parser = within(0.25, 10.0))]
    pub key_position_error: f64,

    /// Largest local rotation error of any joint [°], in [0.01, 5].
    #[arg(long, value_name = "DEG", default_value_t = 0.5, allow_negative_numbers = true,
          value_parser = within(0.01, 5.0))]
    pub key_rotation_error: f64,

    /// Largest horizontal error of a planted foot [mm], in [0.1, 1]: an
    /// error that changes from key to key shows as a sliding foot (1 mm
    /// plays a planted foot at 15–22 mm/s on average in three.js, the
    /// default at 6.5), and it adds to the stance drift the quality gate
    /// holds within 1 cm. The lower limits stay clear of what 16-bit
    /// rotations hold with every sample a key (about 0.09 mm at the hand of
    /// a character 1.75 m tall; a taller one may need looser bounds).
    #[arg(long, value_name = "MM", default_value_t = 0.3, allow_negative_numbers = true,
          value_parser = within(0.1, 1.0))]
    pub key_contact_error: f64,

    /// Write every baked sample of every joint as `f32`, no key reduction
    /// (about 3× the reduced file: a reference to measure against, or for
    /// tools that resample anyway).
    #[arg(long, conflicts_with_all = ["key_position_error", "key_rotation_error", "key_contact_error"])]
    pub every_sample: bool,
}

impl KeyArgs {
    /// The exporter's key tolerance (`None` for `--every-sample`).
    pub fn tolerance(&self) -> Option<crowdpatch_gltf::KeyTolerance> {
        (!self.every_sample).then(|| crowdpatch_gltf::KeyTolerance {
            position: self.key_position_error * 1e-3,
            rotation: self.key_rotation_error.to_radians(),
            contact: self.key_contact_error * 1e-3,
        })
    }

    /// Whether these are the defaults.
    pub fn is_default(&self) -> bool {
        self.tolerance() == Some(crowdpatch_gltf::KeyTolerance::default())
    }
}

impl ExportArgs {
    /// The exporter options these flags ask for.
    pub fn glb_options(&self) -> crowdpatch_gltf::GlbOptions {
        let compression = match self.compress {
            CompressArg::None => crowdpatch_gltf::Compression::None,
            CompressArg::Meshopt => crowdpatch_gltf::Compression::Meshopt,
        };
        crowdpatch_gltf::GlbOptions {
            compression,
            key_tolerance: self.keys.tolerance(),
            ..crowdpatch_gltf::GlbOptions::default()
        }
    }

    /// These settings in one line, for a cache stamp: the compression, then
    /// the key bounds unless they are the defaults.
    pub fn stamp(&self) -> String {
        let keys = if self.keys.is_default() { String::new() } else { format!(", keys {:?}", self.keys.tolerance()) };
        format!("compress {:?}{keys}", self.compress)
    }
}
