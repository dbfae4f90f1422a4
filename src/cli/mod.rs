//! Command-line interface (ripgrep style: `main` → `run() -> Result<ExitCode>`).

mod bake;
mod compose;
mod preview;
mod validate;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Exit code: success.
pub const EXIT_OK: u8 = 0;
/// Exit code: baked, but collisions remain in at least one patch.
pub const EXIT_COLLISIONS: u8 = 1;
/// Exit code: bad input or another error.
pub const EXIT_ERROR: u8 = 2;

/// Author and bake crowd patches: time-periodic tiles of pedestrian motion
/// that tile seamlessly.
#[derive(Debug, Parser)]
#[command(name = "crowdpatch", version, about, long_about = None, after_help = EXIT_CODES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

const EXIT_CODES: &str = "Exit codes: 0 success; 1 baked, but collisions remain; 2 bad input or error.";

#[derive(Debug, Subcommand)]
enum Command {
    /// Bake patch documents (*.patch.json) into GLB files.
    Bake(bake::BakeArgs),
    /// Check pattern and patch documents and list every problem.
    Validate(validate::ValidateArgs),
    /// Compose a world from a map of cell kinds: assign patterns to shared
    /// edges, bake each distinct tile once, write world.json and the GLBs.
    Compose(compose::ComposeArgs),
}

/// Parses the arguments, runs the command and maps the outcome to an exit
/// code; errors are printed with their whole chain.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_ERROR } else { EXIT_OK };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            if is_broken_pipe(&e) {
                return ExitCode::from(EXIT_OK);
            }
            eprintln!("error: {e:#}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Bake(args) => bake::run(args),
        Command::Validate(args) => validate::run(args),
        Command::Compose(args) => compose::run(args),
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}
