//! How a command runs its bakes: `--jobs`, `--quiet`.

use clap::Args;

/// Parallelism and verbosity of the commands that bake many things
/// (`bake`, `compose`, `bench`).
#[derive(Debug, Clone, Args)]
pub struct WorkArgs {
    /// Bakes run at once (patches, or a map's tiles), 1 to 256 (default: one
    /// per core).
    #[arg(short, long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub jobs: Option<u16>,

    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

impl WorkArgs {
    /// The workers these flags ask for ([`crate::work::Workers::new`]).
    ///
    /// # Errors
    /// When the thread pool cannot be built.
    pub fn workers(&self) -> anyhow::Result<crate::work::Workers> {
        crate::work::Workers::new(self.jobs.map(usize::from))
    }
}
