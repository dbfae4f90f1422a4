//! `crowdpatch validate FILE...`

use crate::exit::{EXIT_ERROR, EXIT_OK};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `crowdpatch validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Documents to check: *.patch.json (with the patterns they reference) or
    /// *.pattern.json. Every problem is listed with its file and field path.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
}

/// Runs `validate`: exit 0 when every file is valid, 2 otherwise.
pub fn run(args: ValidateArgs) -> anyhow::Result<ExitCode> {
    let mut bad = 0usize;
    let mut out = std::io::stdout().lock();
    for file in &args.files {
        let name = file.to_string_lossy();
        let result = if name.ends_with(".pattern.json") {
            crowdpatch::load_pattern(file).map(|p| {
                format!(
                    "{}: ok: pattern, {} entries, {} exits{}",
                    file.display(),
                    p.entries.len(),
                    p.exits.len(),
                    if p.is_balanced() { ", balanced" } else { "" }
                )
            })
        } else {
            crowdpatch::load_patch(file).map(|p| {
                let n: usize = crowdpatch::model::Side::ALL.iter().map(|s| p.sides[*s].entries.len()).sum();
                format!(
                    "{}: ok: patch {:?}, {} m × {} m, period {} s, {n} entry/exit pairs, {} endogenous, {} obstacles",
                    file.display(),
                    p.header.name,
                    p.header.size,
                    p.header.size,
                    p.header.period,
                    p.endogenous.len(),
                    p.obstacles.len()
                )
            })
        };
        match result {
            Ok(line) => writeln!(out, "{line}")?,
            Err(e) => {
                bad += 1;
                for p in e.problems() {
                    eprintln!("{p}");
                }
            }
        }
    }
    if bad > 0 {
        eprintln!("{bad} of {} files have problems", args.files.len());
        Ok(ExitCode::from(EXIT_ERROR))
    } else {
        Ok(ExitCode::from(EXIT_OK))
    }
}
