//! The `crowdpatch` command-line tool: bake crowd patches to GLB, validate
//! documents. See `crowdpatch --help`.
//!
//! Exit codes: 0 success; 1 baked, but collisions remain; 2 bad input or error.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
