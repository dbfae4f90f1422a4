//! # crowdpatch
//!
//! Authoring and baking of **crowd patches**: square, time-periodic tiles of
//! pedestrian motion whose boundary conditions (*patterns* of entry and exit
//! points) let tiles sit side by side with characters walking from one into
//! the next. The method follows *Optimization-based computation of locomotion
//! trajectories for Crowd Patches* (the seed paper; `shared/seeds/`) after
//! Yersin et al., *Crowd Patches*, I3D 2009.
//!
//! Data, queries and stages each have one home (docs/design.md "Layout").
//! The modules stand on layers, each importing only from its own layer and
//! those below it (checked by `tests/architecture.rs`), from the bottom up:
//!
//! | layer | what | module | source |
//! |---|---|---|---|
//! | 1. kernels | vectors, closest approach of linear motions, obstacles | [`geometry`] | eqs. 8–10 |
//! | | quantiles and weighted quantiles | [`stats`] | Hyndman & Fan 1996 |
//! | | tridiagonal and cyclic tridiagonal solves | [`tridiagonal`] | §3.5 |
//! | | pair checks of boxes by a hash grid | [`broadphase`] | |
//! | | typed paths of values in JSON documents | [`field_path`] | |
//! | | atomic file writes | [`io`] | |
//! | | a bake's quality figures as plain data (report, GLB extras) | [`figures`] | docs/design.md "Metrics" |
//! | | real pedestrians: crowd statistics, the ETH/UCY reference tables | [`pedestrians`] | docs/design.md "Realism" |
//! | | walking pace: preferred speeds, extra periods, the turn bound | [`pace`] | Weidmann 1993 |
//! | 2. documents | documents as plain data: patterns, patches, boundary points | [`model`] | §3.1 |
//! | | problems with typed field paths and targets | [`problem`] | |
//! | | limits of what a bake may be asked | [`limits`] | docs/design.md "Limits" |
//! | | every problem of a document | [`validate`] | |
//! | | reading, resolving and saving documents | [`document`] | |
//! | 3. paths | space-time paths and agents, shared by every stage | [`path`] | |
//! | | closest approaches of periodic instances, overlaps, obstacles, ghosts | [`proximity`] | eqs. 8–10 |
//! | 4. stages | 1. matching | [`matching`] | §3.3, Algorithm 1, eq. 4 |
//! | | 2. initial paths | [`initial_paths`] | §3.3 |
//! | | 3. collision removal | [`collision`]: [`collision::paper`] (as written), [`collision::default`] (with [`collision::matrix`], [`collision::refine`]), [`collision::social_forces`] | §3.4, Algorithm 2, eqs. 5–10; §5–6 |
//! | | 4. smoothing | [`smoothing`] | §3.5, eqs. 11–12 |
//! | 5. measures | the crowd against real pedestrians | [`realism`] | docs/design.md "Realism" |
//! | | path metrics | [`metrics`] | docs/design.md "Metrics" |
//! | 6. skeletal (feature `skeletal`) | characters: skeleton, clips, clip analysis, import, leg IK | [`character`] | course notes, BPK §4 |
//! | | 5a. footstep planning (A*) | [`footsteps`] | course notes, BPK §5 |
//! | | 5b. skeletal animation | [`animation`] | course notes, barycentric blending §4 |
//! | 7. bake | the baked format, the pipeline, the report | [`baked`], [`bake`](mod@bake), [`report`] | Figure 3 |
//! | 8. tools | patterns at human pace | [`generate`] | docs/design.md "Pattern generation" |
//! | | worlds from maps, Wang sets | [`compose`] | Yersin et al., Crowd Patches (I3D 2009) |
//! | | benchmark protocols | [`bench`] | §4, Figure 6 |
//!
//! The library depends on no GUI, no command-line crate and no exporter; it
//! produces the baked format of `crowdpatch-runtime` ([`bake::Bake::baked`]),
//! which exporters write. Progress leaves through a
//! [`BakeObserver`] passed in; nothing is printed.
//!
//! Units are SI: `[m]`, `[s]`, `[rad]`, `[m/s]`.

#[cfg(feature = "skeletal")]
pub mod animation;
pub mod bake;
pub mod baked;
pub mod bench;
pub mod broadphase;
#[cfg(feature = "skeletal")]
pub mod character;
pub mod collision;
pub mod compose;
pub mod document;
pub mod field_path;
pub mod figures;
#[cfg(feature = "skeletal")]
pub mod footsteps;
pub mod generate;
pub mod geometry;
pub mod initial_paths;
pub mod io;
pub mod limits;
pub mod matching;
pub mod metrics;
pub mod model;
pub mod pace;
pub mod path;
pub mod pedestrians;
pub mod problem;
pub mod proximity;
pub mod realism;
pub mod report;
pub mod smoothing;
pub mod stats;
pub mod tridiagonal;
pub mod validate;

/// Uniform numbers in `[0, 1)` for tests: xorshift64 (Marsaglia 2003,
/// shifts 13, 7, 17), the same sequence for a seed on every machine.
#[cfg(test)]
pub(crate) fn test_uniform(seed: u64) -> impl FnMut() -> f64 {
    let mut x = seed;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 11) as f64 / (1u64 << 53) as f64
    }
}

pub use bake::{Bake, BakeError, BakeObserver, BakeOptions, BakeOverrides, Silent, Stage, bake, bake_with};
pub use crowdpatch_runtime as runtime;
pub use document::{load_patch, load_pattern};
pub use model::{Patch, PatchDocument, Pattern};
pub use problem::{LoadError, Problem};
pub use report::Report;
