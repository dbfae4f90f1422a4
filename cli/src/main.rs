//! The `crowdpatch` command-line tool: bake crowd patches to GLB, validate
//! documents, inspect characters, compose worlds, run the seed paper's
//! benchmark. See `crowdpatch --help`.
//!
//! Structured as ripgrep is: `main` → `run() -> anyhow::Result<ExitCode>`,
//! one module per subcommand, the libraries (`crowdpatch`,
//! `crowdpatch-runtime`, the exporters) doing the work.
//!
//! Exit codes ([`exit`]): 0 success; 1 baked, but collisions remain; 2 bad
//! input or error; 130 interrupted (Ctrl-C, SIGTERM; temporary files removed).

mod bake;
mod bench;
mod character;
mod compose;
mod exit;
mod flags;
mod growth;
mod output;
mod pattern;
mod realism;
mod shard;
mod validate;
mod work;

use clap::{Parser, Subcommand};
use exit::{EXIT_ERROR, EXIT_OK};
use std::process::ExitCode;

/// Author and bake crowd patches: time-periodic tiles of pedestrian motion
/// that tile seamlessly.
#[derive(Debug, Parser)]
#[command(name = "crowdpatch", version, about, long_about = None, after_help = exit::EXIT_CODES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Bake patch documents (*.patch.json) into GLB files.
    Bake(bake::BakeArgs),
    /// Check pattern and patch documents and list every problem.
    Validate(validate::ValidateArgs),
    /// Characters: inspect the steps found in a character's clips.
    #[command(subcommand)]
    Character(character::CharacterCommand),
    /// Run the seed paper's benchmark protocol with several solvers side by side.
    Bench(bench::BenchArgs),
    /// Compose a world from a map of cell kinds: assign patterns to shared
    /// edges, bake each distinct tile once, write world.json and the GLBs.
    Compose(compose::ComposeArgs),
    /// Patterns at human pace: generate a patch's boundary conditions, or a
    /// pattern library for compose.
    #[command(subcommand)]
    Pattern(pattern::PatternCommand),
    /// Crowd statistics of trajectory files (ETH/UCY sets, a bake's
    /// --trajectories CSV) against real pedestrians.
    Realism(realism::RealismArgs),
}

/// Parses the arguments, runs the command and maps the outcome to an exit
/// code; errors are printed with their whole chain.
fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_ERROR } else { EXIT_OK };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let result = run(cli);
    growth::report_peak_memory();
    match result {
        Ok(code) => code,
        Err(e) => {
            if exit::is_broken_pipe(&e) {
                return ExitCode::from(EXIT_OK);
            }
            eprintln!("error: {e:#}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    output::install_signal_handler()?;
    match cli.command {
        Command::Bake(args) => bake::run(args),
        Command::Validate(args) => validate::run(args),
        Command::Character(command) => character::run(command),
        Command::Bench(args) => bench::run(args),
        Command::Compose(args) => compose::run(args),
        Command::Realism(args) => realism::run(args),
        Command::Pattern(command) => pattern::run(command),
    }
}
