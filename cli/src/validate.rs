//! `crowdpatch validate FILE...`

use crate::bake::load_and_check;
use crate::exit::{EXIT_ERROR, EXIT_OK};
use crate::flags::{AnimationArgs, BakeFlags};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `crowdpatch validate`.
#[derive(Debug, Args)]
#[command(after_help = "A patch is checked as `crowdpatch bake` would check it before baking, with the same \
                        animation options (--animation, --character, --frame-rate): what validate accepts, \
                        bake accepts.")]
pub struct ValidateArgs {
    /// Documents to check: *.patch.json (with the patterns they reference) or
    /// *.pattern.json. Every problem is listed with its file and field path
    /// (at most 20 of each kind, then how many more).
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,

    #[command(flatten)]
    animation: AnimationArgs,
}

/// Runs `validate`: exit 0 when every file is valid and would be baked, 2
/// otherwise.
pub fn run(args: ValidateArgs) -> anyhow::Result<ExitCode> {
    let flags = BakeFlags { solver: None, animation: &args.animation, export: None };
    let options = match flags.settings(crowdpatch::model::DEFAULT_COMFORT_SPEED, false) {
        Ok(s) => s.options,
        Err(e) => {
            eprintln!("error: {e:#}");
            return Ok(ExitCode::from(EXIT_ERROR));
        }
    };
    let mut bad = 0usize;
    let mut out = std::io::stdout().lock();
    for file in &args.files {
        let name = file.to_string_lossy();
        if name.ends_with(".pattern.json") {
            match crowdpatch::load_pattern(file) {
                Ok(p) => writeln!(
                    out,
                    "{}: ok: pattern, {} entries, {} exits{}",
                    file.display(),
                    p.entries.len(),
                    p.exits.len(),
                    if p.is_balanced() { ", balanced" } else { "" }
                )?,
                Err(e) => {
                    bad += 1;
                    for p in e.problems() {
                        eprintln!("{p}");
                    }
                }
            }
            continue;
        }
        // The very check `bake` runs before baking.
        match load_and_check(std::slice::from_ref(file), &options) {
            Some(patches) => {
                for (_, p) in patches {
                    let n: usize = crowdpatch::model::Side::ALL.iter().map(|s| p.sides[*s].entries.len()).sum();
                    writeln!(
                        out,
                        "{}: ok: patch {:?}, {} m × {} m, period {} s, {n} entry/exit pairs, {} endogenous, {} obstacles",
                        file.display(),
                        p.header.name,
                        p.header.size,
                        p.header.size,
                        p.header.period,
                        p.endogenous.len(),
                        p.obstacles.len()
                    )?;
                }
            }
            None => bad += 1,
        }
    }
    if bad > 0 {
        eprintln!("{bad} of {} files have problems", args.files.len());
        Ok(ExitCode::from(EXIT_ERROR))
    } else {
        Ok(ExitCode::from(EXIT_OK))
    }
}
