//! # crowdpatch-runtime
//!
//! The run-time side of crowdpatch: what a game links to play baked crowd
//! patches. It owns the **baked format** ([`format`]): the plain types a bake
//! produces and an exporter writes, and that a game reads back.
//!
//! This crate depends on no authoring code of crowdpatch (as Detour never
//! includes Recast). Its only optional dependencies are `serde` and
//! `serde_json`, behind the `serde` feature, to read the `extras.crowdpatch`
//! block of a baked GLB.
//!
//! Units are SI everywhere: metres `[m]`, seconds `[s]`, radians `[rad]`,
//! metres per second `[m/s]`. Positions are in the *patch frame*: origin at the
//! south-west corner of the square patch, x east, y north.

pub mod format;
pub mod skeletal;

pub use format::{
    AgentExtras, AgentKind, BakedAgent, BakedPatch, BakedPattern, BakedPoint, FORMAT_VERSION, Metrics, Obstacle,
    PathKey, PointRef, Side,
};
