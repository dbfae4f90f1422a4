//! # crowdpatch-gltf
//!
//! Writes a baked crowd patch ([`BakedPatch`], the format of
//! `crowdpatch-runtime`) as a glTF 2.0 binary (GLB) that a game engine or a
//! viewer plays as is, and that passes the Khronos glTF Validator with no
//! error and no warning.
//!
//! ## Frames and units
//! Metres and seconds. glTF is Y up; the patch point `(x, y)` (patch frame:
//! origin at the south-west corner, x east, y north) is the glTF point
//! `(x, 0, −y)`. A character faces glTF +Z in its local frame; the baked
//! heading `h` (from patch +x towards +y) is the yaw `h + π/2` about +Y, which
//! turns +Z into the glTF direction `(cos h, 0, −sin h)`.
//!
//! ## What the GLB holds
//! - **Nodes**, all scene roots, in this order:
//!   1. one node per agent *instance* (agent by agent, instances in the order
//!      of [`BakedAgent::instances`]), named `agent {i} instance {k}`, all
//!      sharing the mesh `agent`: a capsule of radius
//!      [`BakedPatch::agent_radius`] and height [`GlbOptions::agent_height`]
//!      standing on `y = 0`, with a small wedge (nose) towards +Z;
//!   2. one node per obstacle, `obstacle {j}`, with its own mesh in patch
//!      coordinates: a circle is a cylinder, a polygon a prism with an
//!      ear-clipped top, both [`GlbOptions::obstacle_height`] high;
//!   3. the node `ground` (unless [`GlbOptions::ground`] is off): the square
//!      `L × L` at `y = 0`.
//!
//!   Meshes have `POSITION` and `NORMAL`; three materials (`agent`,
//!   `obstacle`, `ground`), each written only when used.
//! - **One animation, [`ANIMATION_NAME`] (`loop`)**, whose key times run from
//!   exactly 0 to exactly π (as `f32`), so it loops seamlessly. Per instance
//!   node `k` of an agent: a LINEAR translation and a LINEAR rotation channel
//!   keyed at the path's keys inside the window `(kπ, (k+1)π)` (at
//!   `τ = t − kπ`) and at `τ = 0` and `τ = π`, and a STEP scale channel that
//!   is 1 where `τ + kπ` lies in the path's interval `[start, end)` and 0
//!   elsewhere (an endogenous loop's two instances hand over at `t₀`). While
//!   hidden an instance holds the nearest end of its path. Key-time accessors
//!   are shared where equal. A patch without agents keeps the animation with
//!   one constant scale channel on its first node, so that every tile has a
//!   `loop` of length π. A patch with nothing to show (no agent, no obstacle,
//!   ground off) gets one empty node, `empty patch`, to carry it.
//!   Each node's static transform is its pose at `τ = 0`.
//! - **`scene.extras.crowdpatch`**: a [`SceneExtras`] (format version, L, π,
//!   r, comfort speed, seed, the four baked patterns with velocities,
//!   obstacles, one [`AgentExtras`] per agent with its interval and the node
//!   index of each instance), and beside its fields, after `agents`, the
//!   bake's quality figures `metrics` as the caller gives them (authoring
//!   data, which the runtime does not read; absent when none are given).
//!   Read it back with `serde_json::from_str::<SceneExtras>`; to get every
//!   `f64` back bit for bit, the reader's `serde_json` needs its
//!   `float_roundtrip` feature (its default parser may be one ulp off).
//!
//! The output is a pure function of the input: the same patch and options
//! give the same bytes.
//!
//! ## Example
//! ```
//! use crowdpatch_gltf::{GlbOptions, write_glb};
//! use crowdpatch_runtime::format::{BakedPatch, PatchHeader, Sides};
//! use crowdpatch_runtime::FORMAT_VERSION;
//!
//! let patch = BakedPatch {
//!     format: FORMAT_VERSION,
//!     header: PatchHeader {
//!         name: "empty".into(),
//!         size: 16.0,
//!         period: 10.0,
//!         agent_radius: 0.3,
//!         comfort_speed: 1.33,
//!         seed: 7,
//!     },
//!     patterns: Sides::default(),
//!     obstacles: vec![],
//!     agents: vec![],
//!     skeletal: None,
//! };
//! // The bake's figures, written as given into `extras.crowdpatch.metrics`.
//! let metrics = serde_json::json!({ "coverage": 0.0 });
//! let glb = write_glb(&patch, Some(&metrics), &GlbOptions::default())?;
//! assert_eq!(&glb[..4], b"glTF");
//!
//! // Every tile has the animation `loop`, one period long.
//! let gltf = gltf::Gltf::from_slice(&glb)?;
//! let animation = gltf.animations().next().unwrap();
//! assert_eq!(animation.name(), Some(crowdpatch_gltf::ANIMATION_NAME));
//! let input = animation.samplers().next().unwrap().input();
//! assert_eq!(input.max().and_then(|v| v[0].as_f64()), Some(10.0));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod animation;
mod builder;
mod check;
mod error;
mod geometry;
mod keys;
mod meshopt;
mod options;
mod played;
mod skeletal;

pub use error::ExportError;
pub use options::{Compression, GlbOptions, KeyTolerance, MAX_COORDINATE, MAX_INSTANCES, MAX_INSTANCES_PER_AGENT};
pub use skeletal::TrackStats;

use crowdpatch_runtime::FORMAT_VERSION;
#[cfg(doc)]
use crowdpatch_runtime::format::BakedAgent;
use crowdpatch_runtime::format::{AgentExtras, BakedPatch, SceneExtras};
use gltf_json as json;

use animation::{AnimationBuilder, InstanceTrack};
use builder::Builder;

/// Name of the one animation of a baked GLB.
pub const ANIMATION_NAME: &str = "loop";

/// Key of the crowdpatch record in the scene's `extras`.
pub const EXTRAS_KEY: &str = "crowdpatch";

/// Segments round the agent capsule.
const AGENT_SEGMENTS: usize = 24;

/// Colours (linear RGB) of the three materials.
const AGENT_COLOUR: [f32; 3] = [0.80, 0.35, 0.10];
const OBSTACLE_COLOUR: [f32; 3] = [0.35, 0.36, 0.40];
const GROUND_COLOUR: [f32; 3] = [0.55, 0.60, 0.50];

/// Writes `patch` as a GLB (glTF 2.0 binary), with `metrics` (the bake's
/// quality figures, as JSON: `crowdpatch::metrics::Metrics::to_json`) as
/// `extras.crowdpatch.metrics`, or no metrics when `None`; see the [crate]
/// documentation for what the file holds.
///
/// Deterministic: the same input gives the same bytes. Time and memory are
/// linear in the total number of path keys times instances, plus the
/// obstacles' vertices and the size of `metrics`.
///
/// # Errors
/// Checks the whole input first and returns an [`ExportError`] naming the
/// first problem: a format version other than [`FORMAT_VERSION`]; a size or
/// agent radius not in `(0, 1e6]` m, a period not in `[0.001, 1e6]` s, a
/// comfort speed not finite and positive; any non-finite number (path key,
/// boundary point; the error holds its path), a coordinate beyond
/// ±[`MAX_COORDINATE`] or a heading beyond ±10⁶ rad; an agent with fewer than
/// two keys or with times that do not strictly increase; a path spanning more
/// than [`MAX_INSTANCES_PER_AGENT`] periods, or more than [`MAX_INSTANCES`]
/// instances in all; an obstacle that is not a proper shape (radius ≤ 0,
/// fewer than three distinct vertices, zero area); an option out of its
/// limits; a file over 4 GiB.
///
/// # Panics
/// Never, for any input.
pub fn write_glb(
    patch: &BakedPatch,
    metrics: Option<&serde_json::Value>,
    options: &GlbOptions,
) -> Result<Vec<u8>, ExportError> {
    write_glb_with_stats(patch, metrics, options).map(|(glb, _)| glb)
}

/// [`write_glb`], with the figures of the skeletal joint tracks it wrote
/// (all zero for a patch without skeletal animation); where `metrics` holds
/// an object `animation` (a skeletal bake's), they are also written into it:
/// `extras.crowdpatch.metrics.animation`'s `joint_keys`,
/// `key_position_error`, `key_rotation_error` and `key_contact_error`.
///
/// # Errors
/// As [`write_glb`].
pub fn write_glb_with_stats(
    patch: &BakedPatch,
    metrics: Option<&serde_json::Value>,
    options: &GlbOptions,
) -> Result<(Vec<u8>, TrackStats), ExportError> {
    check::options(options)?;
    check::patch(patch)?;
    if let Some(sk) = &patch.skeletal {
        skeletal::check(patch, sk)?;
    }

    if options.compression == Compression::Meshopt && !cfg!(feature = "meshopt") {
        return Err(ExportError::CompressionUnavailable { compression: "meshopt", feature: "meshopt" });
    }
    let mut b = Builder::new(options.compression, patch.header.period as f32);
    let mut animation = AnimationBuilder::default();
    let mut roots = Vec::new();

    let (agents, stats) = match &patch.skeletal {
        Some(sk) => skeletal::agent_nodes(&mut b, &mut animation, patch, sk, options, &mut roots),
        None => (agent_nodes(&mut b, &mut animation, patch, options, &mut roots), TrackStats::default()),
    };
    if let Some(tol) = &options.key_tolerance {
        check::key_errors(&stats, tol)?;
    }
    let mut metrics = metrics.cloned();
    if let Some(a) = metrics.as_mut().and_then(|m| m.get_mut("animation")).and_then(|a| a.as_object_mut()) {
        a.insert("joint_keys".to_owned(), stats.keys.into());
        a.insert("key_position_error".to_owned(), stats.position_error.into());
        a.insert("key_rotation_error".to_owned(), stats.rotation_error.into());
        a.insert("key_contact_error".to_owned(), stats.contact_error.into());
    }
    obstacle_nodes(&mut b, patch, options, &mut roots)?;
    if options.ground {
        roots.push(ground_node(&mut b, patch));
    }
    if roots.is_empty() {
        roots.push(placeholder_node(&mut b)?);
    }
    if animation.is_empty() {
        hold_still(&mut b, &mut animation, roots[0], patch.header.period);
    }
    animation.finish(&mut b, ANIMATION_NAME);

    let extras = SceneExtras {
        format: FORMAT_VERSION,
        header: patch.header.clone(),
        patterns: patch.patterns.clone(),
        obstacles: patch.obstacles.clone(),
        agents,
        character: patch.skeletal.as_ref().map(|sk| skeletal::character_extras(sk)),
    };
    let scene = b.root.push(json::Scene {
        extensions: None,
        extras: Some(scene_extras(&extras, metrics)?),
        name: Some(patch.header.name.clone()).filter(|n| !n.is_empty()),
        nodes: roots,
    });
    b.root.scene = Some(scene);
    Ok((b.finish()?, stats))
}

/// `{"crowdpatch": extras}` as raw JSON, with `metrics` (when given) among
/// the fields of `extras` right after `agents`, where format 2 had them.
fn scene_extras(
    extras: &SceneExtras,
    mut metrics: Option<serde_json::Value>,
) -> Result<Box<serde_json::value::RawValue>, ExportError> {
    let json = |source| ExportError::Json { source };
    let mut record = serde_json::to_value(extras).map_err(json)?;
    if let Some(fields) = record.as_object_mut() {
        for (key, value) in std::mem::take(fields) {
            let after = key == "agents";
            fields.insert(key, value);
            if after && let Some(m) = metrics.take() {
                fields.insert("metrics".to_owned(), m);
            }
        }
        if let Some(m) = metrics {
            fields.insert("metrics".to_owned(), m);
        }
    }
    let mut map = serde_json::Map::new();
    map.insert(EXTRAS_KEY.to_owned(), record);
    serde_json::value::to_raw_value(&map).map_err(json)
}

/// One node per agent instance, sharing one body mesh, with its channels in
/// `animation`. Returns the agents' extras records.
fn agent_nodes(
    b: &mut Builder,
    animation: &mut AnimationBuilder,
    patch: &BakedPatch,
    options: &GlbOptions,
    roots: &mut Vec<json::Index<json::Node>>,
) -> Vec<AgentExtras> {
    if patch.agents.is_empty() {
        return Vec::new();
    }
    let body = geometry::agent_body(patch.header.agent_radius, options.agent_height, AGENT_SEGMENTS);
    let material = b.material("agent", AGENT_COLOUR);
    let mesh = b.mesh("agent".to_owned(), &body, material);
    let mut records = Vec::with_capacity(patch.agents.len());
    for (i, agent) in patch.agents.iter().enumerate() {
        let windows = agent.instance_windows(patch.header.period);
        let mut nodes = Vec::with_capacity(windows.len() + 1);
        for window in windows {
            let played = b.played;
            let (track, name) = InstanceTrack::of(agent, i, window, patch.header.period, &|t| played.time(t));
            let node = b.root.push(json::Node {
                mesh: Some(mesh),
                name: Some(name),
                translation: Some(track.translations[0]),
                rotation: Some(json::scene::UnitQuaternion(track.rotations[0])),
                scale: Some([track.scales[0]; 3]),
                ..Default::default()
            });
            animation.instance(b, node, &track);
            roots.push(node);
            nodes.push(node.value());
        }
        records.push(agent.extras(patch.header.period, nodes, None));
    }
    records
}

/// One node and one mesh per obstacle, in patch coordinates.
fn obstacle_nodes(
    b: &mut Builder,
    patch: &BakedPatch,
    options: &GlbOptions,
    roots: &mut Vec<json::Index<json::Node>>,
) -> Result<(), ExportError> {
    for (j, obstacle) in patch.obstacles.iter().enumerate() {
        let data = geometry::obstacle(obstacle, options.obstacle_height, options.circle_segments as usize)
            .map_err(|reason| ExportError::InvalidObstacle { obstacle: j, reason })?;
        let material = b.material("obstacle", OBSTACLE_COLOUR);
        let mesh = b.mesh(format!("obstacle {j}"), &data, material);
        roots.push(b.root.push(json::Node {
            mesh: Some(mesh),
            name: Some(format!("obstacle {j}")),
            ..Default::default()
        }));
    }
    Ok(())
}

/// The ground quad's node.
fn ground_node(b: &mut Builder, patch: &BakedPatch) -> json::Index<json::Node> {
    let material = b.material("ground", GROUND_COLOUR);
    let mesh = b.mesh("ground".to_owned(), &geometry::ground(patch.header.size), material);
    b.root.push(json::Node { mesh: Some(mesh), name: Some("ground".to_owned()), ..Default::default() })
}

/// The node of a patch that has nothing to show (no agent, no obstacle, no
/// ground): glTF readers such as the `gltf` crate need a scene to have a node,
/// and the `loop` animation needs a channel. It carries
/// `extras.crowdpatch.placeholder = true` (which also tells the validator it
/// is not an unused empty node).
fn placeholder_node(b: &mut Builder) -> Result<json::Index<json::Node>, ExportError> {
    let extras = serde_json::value::to_raw_value(&serde_json::json!({ EXTRAS_KEY: { "placeholder": true } }))
        .map_err(|source| ExportError::Json { source })?;
    Ok(b.root.push(json::Node { name: Some("empty patch".to_owned()), extras: Some(extras), ..Default::default() }))
}

/// A constant unit-scale channel on `node` keyed at 0 and π: keeps the
/// `loop` animation (and its length) in a patch without agents.
fn hold_still(b: &mut Builder, animation: &mut AnimationBuilder, node: json::Index<json::Node>, period: f64) {
    let keys = animation::Keys {
        input: animation.input(b, &[0.0, period as f32]),
        interpolation: json::animation::Interpolation::Step,
        ty: builder::FloatType::Vec3,
        values: &[1.0; 6],
    };
    animation.channel(b, node, json::animation::Property::Scale, keys);
}
