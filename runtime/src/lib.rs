//! # crowdpatch-runtime
//!
//! The run-time side of crowdpatch: what a game links to play baked crowd
//! patches. It owns the **baked format** ([`format`](mod@format)): the plain types a bake
//! produces and an exporter writes, and that a game reads back. On top of it:
//!
//! | what | where |
//! |---|---|
//! | load a baked GLB (bytes or path) into a compact playback form | [`Tile::from_glb`], [`Tile::load`] |
//! | the character a skeletal tile was baked with: skinned mesh, skin, inverse bind matrices | [`Tile::character`] |
//! | sample agent poses at any time, placed with an offset and a quarter turn | [`Tile::sample`], [`Poses`], [`Placement`] |
//! | sample many placed tiles at once (each distinct tile evaluated once) | [`CrowdSampler`] |
//! | a grid of tiles and its compatibility check (mirror rule, L, π, velocities) | [`World`], [`World::check`] |
//! | `world.json`, as `crowdpatch compose` writes it | [`WorldFile`] |
//! | fill any world aperiodically from a Wang-tile set | [`WangSet`], [`WangWorld`] |
//! | stream the tiles near a focus point in the background, under a memory budget | [`Streamer`] |
//! | seam metrics over a world: position error, velocity jump, clearance | [`seam::seam_metrics`] |
//!
//! This crate depends on no authoring code of crowdpatch (as Detour never
//! includes Recast). Its only dependencies are `serde` and `serde_json`,
//! behind features: `serde` (derives on the format types) and `glb` (the GLB
//! loader and the world file reader; on by default). Without them the crate
//! still plays tiles built from a [`BakedPatch`] ([`Tile::from_baked`]).
//!
//! Units are SI everywhere: metres `[m]`, seconds `[s]`, radians `[rad]`,
//! metres per second `[m/s]`. Positions are in the *patch frame*: origin at the
//! south-west corner of the square patch, x east, y north; world positions
//! likewise with the world's origin.
//!
//! ## Example
//! ```
//! use crowdpatch_runtime::format::{AgentKind, BakedAgent, BakedPatch, PatchHeader, PathKey, Sides};
//! use crowdpatch_runtime::{Placement, Poses, Tile, FORMAT_VERSION};
//!
//! let walker = BakedAgent {
//!     kind: AgentKind::Endogenous { index: 0 },
//!     keys: vec![
//!         PathKey { t: 0.0, position: [4.0, 8.0], heading: 0.0 },
//!         PathKey { t: 5.0, position: [12.0, 8.0], heading: 0.0 },
//!         PathKey { t: 10.0, position: [4.0, 8.0], heading: std::f64::consts::PI },
//!     ],
//! };
//! let patch = BakedPatch {
//!     format: FORMAT_VERSION,
//!     header: PatchHeader { name: "loop".into(), size: 16.0, period: 10.0,
//!                           agent_radius: 0.3, comfort_speed: 1.33, seed: 0 },
//!     patterns: Sides::default(),
//!     obstacles: vec![], agents: vec![walker], skeletal: None,
//! };
//! let tile = Tile::from_baked(&patch);
//! let mut poses = Poses::new(tile.instance_count());
//! // The tile placed at (16, 0), a half turn: (8, 8) ↦ (16 + 8, 8).
//! tile.sample(12.5, &Placement { offset: [16.0, 0.0], rotation: 2 }, poses.as_mut());
//! assert!(poses.visible[0]);
//! assert!((poses.x[0] - 24.0).abs() < 1e-5 && (poses.y[0] - 8.0).abs() < 1e-5);
//! ```

pub mod error;
pub mod format;
#[cfg(feature = "glb")]
mod glb;
pub mod joints;
#[cfg(feature = "glb")]
mod load;
#[cfg(feature = "glb")]
mod mesh;
pub mod pose;
pub mod sampler;
pub mod seam;
pub mod skeletal;
pub mod stream;
pub mod tile;
pub mod wang;
pub mod world;

pub use error::{LoadError, WorldError};
pub use format::{
    AgentExtras, AgentKind, BakedAgent, BakedPatch, BakedPattern, BakedPoint, FORMAT_VERSION, Obstacle, PatchHeader,
    PathKey, PointRef, SceneExtras, Side, Sides,
};
pub use joints::{InstanceJoints, JointCursors, JointPoses, JointSampler};
#[cfg(feature = "glb")]
pub use load::MAX_INSTANCES;
pub use pose::{Placement, Poses, PosesMut};
pub use sampler::{CrowdSampler, PlacedTile};
pub use seam::{SeamReport, seam_metrics, seam_metrics_with};
#[cfg(feature = "glb")]
pub use stream::DirectorySource;
pub use stream::{Executor, Layout, LoadJob, StreamEvent, StreamOptions, Streamer, TileSource, WangWorld};
pub use tile::{
    InstanceInfo, Interpolation, Joint, JointChannel, JointClip, JointPose, JointProperty, NOMINAL_CYCLE_LENGTH,
    PhaseSource, Tile, TileCursor,
};
pub use wang::WangSet;
pub use world::{Cell, Mismatch, SeamProblem, WORLD_FORMAT, World};
#[cfg(feature = "serde")]
pub use world::{TileEntry, WangFile, WangTileEntry, WorldFile};
