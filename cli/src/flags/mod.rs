//! The flags shared by the commands that bake — `bake`, `compose`,
//! `validate`, `bench` — in one place, as ripgrep keeps its `flags/`: each
//! group a `clap::Args` struct that the commands flatten, its help text next
//! to each flag, and [`BakeFlags::settings`], the one function that turns
//! them into the core's and the exporter's options.
//!
//! | group | flags | flattened into |
//! |---|---|---|
//! | [`SolverArgs`] | `--seed` `--matching` `--solver` | bake |
//! | [`AnimationArgs`] | `--animation` `--character` `--character-height` `--frame-rate`, and [`WalkArgs`] | bake, compose, validate |
//! | [`AnimationMode`] | `--animation` | bench (in [`AnimationArgs`] for the others) |
//! | [`WalkArgs`] | `--joint-map` `--animation-source` `--source-joint-map` | character inspect (in [`AnimationArgs`] for the others) |
//! | [`ExportArgs`] | `--compress`, and [`KeyArgs`](export::KeyArgs): `--key-position-error` `--key-rotation-error` `--key-contact-error` `--every-sample` | bake, compose |
//! | [`WorkArgs`] | `--jobs` `--quiet` | bake, compose, bench |
//!
//! Values out of range are refused while parsing (clap's message names the
//! flag and the range, exit 2), whatever the command; the files a skeletal
//! bake reads are loaded by [`BakeFlags::settings`], before any work.

mod animation;
mod export;
mod parse;
mod solver;
mod work;

pub use animation::{AnimationArg, AnimationArgs, AnimationMode, BUILTIN_HEIGHT, WalkArgs, load_character};
pub use export::{CompressArg, ExportArgs};
pub use parse::at_least;
pub use solver::SolverArgs;
pub use work::WorkArgs;

use anyhow::Context;
use crowdpatch::bake::{BakeOptions, BakeOverrides};
use crowdpatch::model::Patch;

/// The flag groups of a command that bakes; a group the command lacks is
/// `None` and bakes with its defaults (the documents' own settings, the
/// exporter's defaults).
#[derive(Debug, Clone, Copy)]
pub struct BakeFlags<'a> {
    /// `--seed`, `--matching`, `--solver`.
    pub solver: Option<&'a SolverArgs>,
    /// The animation stage and its character.
    pub animation: &'a AnimationArgs,
    /// `--compress`, `--key-*`.
    pub export: Option<&'a ExportArgs>,
}

/// What the flags ask a bake to do, with its objects built.
#[derive(Debug, Clone)]
pub struct BakeSettings {
    /// Overrides of each document's seed, matching and solver.
    pub overrides: BakeOverrides,
    /// The bake's options: the character loaded and prepared (`None` for
    /// capsules), its frame rate.
    pub options: BakeOptions,
    /// The exporter's options.
    pub glb: crowdpatch_gltf::GlbOptions,
}

impl BakeFlags<'_> {
    /// The settings these flags ask for: for a skeletal bake, the character
    /// loaded and prepared for a crowd walking at `walk_speed` [m/s]
    /// ([`walk_speed`]), its notes printed unless `quiet`. O(1) for capsules;
    /// a skeletal bake loads the character (and its animation source) and
    /// builds its step library.
    ///
    /// # Errors
    /// A file the character needs that cannot be read, or a character that
    /// cannot walk; the message names the flag.
    pub fn settings(&self, walk_speed: f64, quiet: bool) -> anyhow::Result<BakeSettings> {
        let a = self.animation;
        let skeletal = match a.animation() {
            AnimationArg::None => None,
            AnimationArg::Skeletal => {
                // Each file named, and each joint map read, with its flag.
                for (flag, file) in a.input_files() {
                    std::fs::metadata(&file).with_context(|| format!("{flag} {}", file.display()))?;
                    if flag.ends_with("joint-map") {
                        crowdpatch::character::humanoid::JointMap::load(&file)
                            .with_context(|| format!("{flag} {}", file.display()))?;
                    }
                }
                let setup = load_character(&a.character, a.character_height, &a.walk, walk_speed)?;
                if !quiet {
                    for n in &setup.notes {
                        eprintln!("{}: {n}", a.character);
                    }
                }
                let mut sk = crowdpatch::animation::Skeletal::new(setup.character)
                    .with_context(|| format!("--character {}", a.character))?;
                sk.frame_rate = a.frame_rate;
                Some(std::sync::Arc::new(sk))
            }
        };
        Ok(BakeSettings {
            overrides: self.solver.map(SolverArgs::overrides).unwrap_or_default(),
            options: BakeOptions { skeletal },
            glb: self.export.map(ExportArgs::glb_options).unwrap_or_default(),
        })
    }
}

/// The walking speed a character is prepared for `[m/s]`: that of the
/// fastest crowd among `patches` (their comfort speed), the core's default
/// when there are none. O(patches).
pub fn walk_speed<'p>(patches: impl IntoIterator<Item = &'p Patch>) -> f64 {
    patches
        .into_iter()
        .map(|p| p.header.comfort_speed)
        .fold(None, |m: Option<f64>, c| Some(m.map_or(c, |m| m.max(c))))
        .unwrap_or(crowdpatch::model::DEFAULT_COMFORT_SPEED)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// A command with every group, parsed as the real commands parse.
    #[derive(Debug, Parser)]
    struct All {
        #[command(flatten)]
        solver: SolverArgs,
        #[command(flatten)]
        animation: AnimationArgs,
        #[command(flatten)]
        export: ExportArgs,
        #[command(flatten)]
        work: WorkArgs,
    }

    #[test]
    fn the_defaults_are_the_cores_and_the_exporters() {
        let all = All::parse_from(["x", "--animation", "none"]);
        let flags = BakeFlags { solver: Some(&all.solver), animation: &all.animation, export: Some(&all.export) };
        let s = flags.settings(1.33, true).unwrap();
        assert_eq!(s.overrides, BakeOverrides::default());
        assert!(s.options.skeletal.is_none());
        assert_eq!(s.glb, crowdpatch_gltf::GlbOptions::default());
        assert!(all.export.keys.is_default());
        // A command without the groups bakes alike.
        let bare = BakeFlags { solver: None, animation: &all.animation, export: None };
        let b = bare.settings(1.33, true).unwrap();
        assert_eq!((b.overrides, b.glb), (s.overrides, s.glb));
    }

    #[test]
    fn values_out_of_range_are_refused_while_parsing() {
        for (flag, value) in [
            ("--frame-rate", "0"),
            ("--frame-rate", "-1"),
            ("--frame-rate", "1000"),
            ("--frame-rate", "nan"),
            ("--character-height", "-1"),
            ("--character-height", "inf"),
            ("--key-position-error", "0.1"),
            ("--key-rotation-error", "6"),
            ("--key-contact-error", "2"),
        ] {
            let e = All::try_parse_from(["x", flag, value]).unwrap_err();
            assert!(e.to_string().contains(flag), "{flag} {value}: {e}");
        }
        let ok = All::try_parse_from(["x", "--frame-rate", "240", "--character-height", "0"]).unwrap();
        assert_eq!((ok.animation.frame_rate, ok.animation.character_height), (240.0, 0.0));
    }

    #[test]
    fn the_walk_speed_is_the_fastest_crowds() {
        assert_eq!(walk_speed([]), crowdpatch::model::DEFAULT_COMFORT_SPEED);
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../patches/figure7.patch.json");
        let mut slow = crowdpatch::load_patch(&file).unwrap();
        slow.header.comfort_speed = 0.9;
        let mut fast = slow.clone();
        fast.header.comfort_speed = 1.6;
        assert_eq!(walk_speed([&slow]), 0.9);
        assert_eq!(walk_speed([&slow, &fast]), 1.6);
    }
}
