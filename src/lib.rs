//! # crowdpatch
//!
//! Authoring and baking of **crowd patches**: square, time-periodic tiles of
//! pedestrian motion whose boundary conditions (*patterns* of entry and exit
//! points) let tiles sit side by side with characters walking from one into
//! the next. The method follows *Optimization-based computation of locomotion
//! trajectories for Crowd Patches* (the seed paper; `shared/seeds/`) after
//! Yersin et al., *Crowd Patches*, I3D 2009.
//!
//! Data, queries and stages each have one home (docs/design.md "Layout"):
//!
//! | what | module | source |
//! |---|---|---|
//! | documents as plain data: patterns, patches, boundary points | [`model`] | seed paper §3.1 |
//! | problems with typed field paths and targets | [`problem`], [`field_path`] | |
//! | reading, resolving and saving documents | [`document`], [`io`] | |
//! | limits and every problem of a document | [`validate`] | docs/design.md "Limits" |
//! | space-time paths and agents, shared by every stage | [`path`] | |
//! | closest approaches of periodic instances, overlaps, obstacles, ghosts | [`proximity`], [`geometry`] | eqs. 8–10 |
//! | percentiles and weighted quantiles | [`stats`] | Hyndman & Fan 1996 |
//! | 1. matching | [`matching`] | §3.3, Algorithm 1, eq. 4 |
//! | 2. initial paths | [`initial_paths`] | §3.3 |
//! | 3. collision removal | [`collision`]: [`collision::paper`] (as written), [`collision::default`] (with [`collision::matrix`], [`collision::refine`]), [`collision::social_forces`] | §3.4, Algorithm 2, eqs. 5–10; §5–6 |
//! | 4. smoothing | [`smoothing`] | §3.5, eqs. 11–12 |
//! | characters: skeleton, clips, clip analysis, import | [`character`] | course notes, BPK §4 |
//! | 5a. footstep planning (A*) | [`footsteps`] | course notes, BPK §5 |
//! | 5b. skeletal animation | [`animation`] | course notes, barycentric blending §4 |
//! | metrics | [`metrics`] | docs/design.md "Metrics" |
//! | the pipeline, the baked format, the report | [`bake`](mod@bake), [`baked`], [`report`] | Figure 3 |
//! | benchmark protocol | [`bench`] | §4, Figure 6 |
//! | worlds from maps, Wang sets | [`compose`] | Yersin et al., Crowd Patches (I3D 2009) |
//!
//! The library depends on no GUI, no command-line crate and no exporter; it
//! produces the baked format of `crowdpatch-runtime` ([`bake::Bake::baked`]),
//! which exporters write. Progress leaves through a
//! [`BakeObserver`] passed in; nothing is printed.
//!
//! Units are SI: `[m]`, `[s]`, `[rad]`, `[m/s]`.

pub mod animation;
pub mod bake;
pub mod baked;
pub mod bench;
pub mod broadphase;
pub mod character;
pub mod collision;
pub mod compose;
pub mod document;
pub mod field_path;
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
