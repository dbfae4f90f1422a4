//! What a bake overrides in each document: `--seed`, `--matching`,
//! `--solver`.

use clap::Args;
use crowdpatch::bake::BakeOverrides;
use crowdpatch::model::{MatchingMode, SolverKind};

/// Overrides of the documents' own settings.
#[derive(Debug, Clone, Args)]
pub struct SolverArgs {
    /// Seed of the bake's random choices (overrides each document's "seed").
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// How entries are matched to exits (overrides "solver.matching").
    #[arg(long, value_enum)]
    pub matching: Option<MatchingMode>,

    /// Collision-removal solver (overrides "solver.method").
    #[arg(long, value_enum)]
    pub solver: Option<SolverKind>,
}

impl SolverArgs {
    /// The core's overrides these flags ask for.
    pub fn overrides(&self) -> BakeOverrides {
        BakeOverrides { seed: self.seed, matching: self.matching, method: self.solver }
    }
}
