//! # crowdpatch-bevy
//!
//! A [Bevy](https://bevy.org) plugin that plays a world of baked crowd
//! patches: it streams the tiles of a `world.json` (as `crowdpatch compose`
//! writes it) near a focus through the runtime's [`Streamer`] on Bevy's task
//! pool, under a memory budget, spawns each shown cell's walkers with the
//! mesh and skin their tile was baked with, and poses them every frame from
//! the runtime's [`JointSampler`]. This crate is an adapter: the runtime
//! knows nothing of Bevy.
//!
//! ```no_run
//! use bevy::prelude::*;
//! use crowdpatch_bevy::{CrowdFocus, CrowdPatchPlugin};
//!
//! App::new()
//!     .add_plugins(DefaultPlugins)
//!     .add_plugins(CrowdPatchPlugin::new("target/town/world.json"))
//!     .add_systems(Startup, |mut commands: Commands| {
//!         // The streamer follows the entity marked `CrowdFocus` (else the first 3D camera).
//!         commands.spawn((Camera3d::default(), CrowdFocus,
//!             Transform::from_xyz(40.0, 30.0, -10.0).looking_at(Vec3::new(40.0, 0.0, -40.0), Vec3::Y)));
//!         commands.spawn((DirectionalLight::default(), Transform::from_xyz(1.0, 2.0, 1.0).looking_at(Vec3::ZERO, Vec3::Y)));
//!     })
//!     .run();
//! ```
//!
//! ## Frames and units
//! Metres and seconds. The world point `(x, y)` (x east, y north, origin at
//! the world's south-west corner) is the Bevy point `(x, 0, −y)`, Y up: the
//! baked GLB's convention. A walker's heading `h` (from +x towards +y) is
//! the yaw `h + π/2` about +Y.
//!
//! ## What runs when
//! - `PreUpdate`: the [`CrowdClock`] advances by the frame's time, scaled,
//!   unless paused.
//! - `Update`: the world file is read and parsed on a thread (never on the
//!   frame); the [`Streamer`] is told the focus (when it moved more
//!   than a metre, every 0.2 s, or while loads are pending); its events
//!   spawn and despawn cells. Tiles load on Bevy's async compute pool (on a
//!   loader thread of the runtime's when that pool has no thread).
//! - `PostUpdate`: every shown cell's walkers are sampled at the clock's time
//!   and written: with [`JointWrites::Direct`] (the default) the joints' world
//!   transforms are composed here and written to their `GlobalTransform`s
//!   after Bevy's transform propagation (no hierarchy to propagate); with
//!   [`JointWrites::Hierarchy`] each joint's local `Transform` is written and
//!   Bevy propagates. Nothing is allocated per frame.
//!
//! ## Bad input
//! A missing, truncated or foreign world or tile file logs one error naming
//! the file and what is wrong, and the rest of the world plays; nothing
//! panics.
//!
//! ## Cost
//! See `benches/plugin.rs` and docs/bevy.md: per frame O(shown walkers ×
//! joints) for sampling and writing, plus Bevy's visibility and skinning.

mod assets;
mod pose;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, TryRecvError, channel};
use std::sync::{Arc, Mutex};

use bevy::camera::visibility::{NoAutoAabb, VisibilitySystems};
use bevy::math::Affine3A;
use bevy::mesh::skinning::{SkinnedMesh, SkinnedMeshInverseBindposes};
use bevy::prelude::*;
use bevy::tasks::AsyncComputeTaskPool;
use bevy::transform::TransformSystems;
use crowdpatch_runtime::error::WorldError;
use crowdpatch_runtime::skeletal::Character;
use crowdpatch_runtime::{
    DirectorySource, Layout, LoadJob, Placement, StreamEvent, StreamOptions, Streamer, Tile, World, WorldFile,
};

use crate::assets::CharacterAssets;
pub use crate::pose::{CellPoses, TileJoints};
/// The runtime this plugin plays with (the same version, for games that
/// also read tiles themselves).
pub use crowdpatch_runtime;

/// Height of obstacle solids `[m]`.
const OBSTACLE_HEIGHT: f32 = 1.0;
/// Height of a capsule walker `[m]`.
const CAPSULE_HEIGHT: f32 = 1.7;
/// Gap between neighbouring ground squares, so that the tile grid shows `[m]`.
const GRID_GAP: f32 = 0.08;

/// How the walkers' joints reach the renderer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JointWrites {
    /// Joint entities without parents whose `GlobalTransform` the plugin
    /// writes after Bevy's transform propagation: the plugin composes each
    /// joint's world transform from the sampled local poses (parents first)
    /// in one pass over contiguous arrays. The default: no hierarchy for
    /// Bevy to walk (see docs/bevy.md for the measured ratio).
    #[default]
    Direct,
    /// Joint entities in a hierarchy under a walker entity (Bevy's usual
    /// skinned scene): the plugin writes each joint's local `Transform` and
    /// the walker's, and Bevy's transform propagation composes them.
    Hierarchy,
}

/// The plugin. See the [crate](crate) documentation.
#[derive(Debug, Clone)]
pub struct CrowdPatchPlugin {
    /// The `world.json` to play.
    pub world: PathBuf,
    /// Streaming radius, hysteresis and memory budget (`workers` is unused:
    /// tiles load on Bevy's async compute task pool).
    pub stream: StreamOptions,
    /// How joints are written.
    pub joints: JointWrites,
    /// Draw each shown cell's ground square and obstacles.
    pub scenery: bool,
}

impl CrowdPatchPlugin {
    /// Plays `world` with the default settings: tiles within 64 m of the
    /// focus, a 256 MiB budget, direct joint writes, scenery drawn.
    pub fn new(world: impl Into<PathBuf>) -> CrowdPatchPlugin {
        CrowdPatchPlugin {
            world: world.into(),
            stream: StreamOptions::default(),
            joints: JointWrites::Direct,
            scenery: true,
        }
    }
}

/// The playback clock of the crowd: the time `[s]` the walkers are posed at.
/// Tiles loop with their period, so any time is valid. Set `time` to jump,
/// `speed` to scale (1 = real time), `paused` to stop.
#[derive(Resource, Debug, Clone, Copy, PartialEq)]
pub struct CrowdClock {
    /// Playback time `[s]`.
    pub time: f64,
    /// Playback speed (1 = real time; 0 or paused stops).
    pub speed: f64,
    /// Whether the clock stands still.
    pub paused: bool,
}

impl Default for CrowdClock {
    fn default() -> Self {
        CrowdClock { time: 0.0, speed: 1.0, paused: false }
    }
}

/// Marks the entity whose position the streamer follows; without one, the
/// first 3D camera is followed.
#[derive(Component, Debug, Clone, Copy, Default)]
pub struct CrowdFocus;

/// What the plugin is showing, for overlays and tests.
#[derive(Resource, Debug, Clone, Default, PartialEq)]
pub struct CrowdStats {
    /// Walker instances spawned (in shown cells).
    pub walkers: usize,
    /// Of those, drawn this frame (inside their interval).
    pub walkers_drawn: usize,
    /// Cells shown.
    pub cells: usize,
    /// Tiles loaded.
    pub tiles_loaded: usize,
    /// Tile loads pending.
    pub tiles_pending: usize,
    /// Tiles that failed to load (each logged once).
    pub tiles_failed: usize,
    /// Bytes held: loaded tiles (playback form) plus the plugin's pose
    /// buffers and joint samplers.
    pub bytes: usize,
    /// Joint entities.
    pub joints: usize,
    /// Skinned vertices drawn this frame (walkers drawn × the character's
    /// vertices).
    pub skinned_vertices: usize,
    /// Mesh draws of walkers this frame (walkers drawn × primitives; Bevy
    /// batches them into fewer draw calls where it can).
    pub walker_draws: usize,
    /// The world file's state: `None` while it loads or plays; the error
    /// once it failed.
    pub world_error: Option<String>,
}

/// A walker's mesh entity (one per primitive), or its root entity with
/// [`JointWrites::Hierarchy`].
#[derive(Component, Debug, Clone, Copy)]
pub struct WalkerBody {
    /// Cell slot.
    cell: u32,
    /// Instance of the cell's tile.
    pub instance: u32,
}

/// A walker's joint entity.
#[derive(Component, Debug, Clone, Copy)]
pub struct WalkerJoint {
    /// Cell slot.
    cell: u32,
    /// `instance · joints + k`, `k` the joint's index in the skin.
    slot: u32,
}

/// A shown cell's root entity holds this; its walkers and scenery are
/// separate entities listed here.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrowdCell {
    /// `(column, row)`.
    pub cell: [i64; 2],
    /// Tile index in the world file.
    pub tile: usize,
}

/// The world file, being read on the I/O pool, or read.
enum Source {
    Reading(Receiver<Result<WorldFile, WorldError>>),
    Playing(Box<Streamer<World>>),
    Failed,
}

/// Per loaded tile the plugin has shown: its joints and how it is drawn.
struct TileState {
    tile: Arc<Tile>,
    joints: Option<TileJoints>,
    /// Index into `Scene::characters`, or `None` for capsules.
    look: Option<usize>,
    /// Cells showing it.
    users: usize,
}

struct CellState {
    tile: usize,
    poses: CellPoses,
    entities: Vec<Entity>,
}

/// What the plugin has spawned, and the assets it spawns with.
struct Scene {
    mode: JointWrites,
    scenery: bool,
    tiles: HashMap<usize, TileState>,
    cells: Vec<Option<CellState>>,
    free: Vec<u32>,
    by_cell: HashMap<[i64; 2], u32>,
    characters: Vec<(Arc<Character>, CharacterAssets)>,
    capsule: Option<(Handle<Mesh>, Handle<StandardMaterial>)>,
    /// Ground square (unit, scaled per tile) and its material.
    ground: Option<(Handle<Mesh>, Handle<StandardMaterial>)>,
    obstacle_material: Option<Handle<StandardMaterial>>,
}

/// The plugin's state (one resource; the streamer is behind a mutex so that
/// the resource is `Sync`, and is reached through `&mut` without locking).
#[derive(Resource)]
struct Crowd {
    world_path: PathBuf,
    options: StreamOptions,
    source: Mutex<Source>,
    scene: Scene,
    last_focus: Option<[f64; 2]>,
    since_update: f64,
    over_budget: usize,
}

impl Plugin for CrowdPatchPlugin {
    fn build(&self, app: &mut App) {
        let crowd = Crowd {
            world_path: self.world.clone(),
            options: self.stream.clone(),
            source: Mutex::new(Source::Failed),
            scene: Scene {
                mode: self.joints,
                scenery: self.scenery,
                tiles: HashMap::new(),
                cells: Vec::new(),
                free: Vec::new(),
                by_cell: HashMap::new(),
                characters: Vec::new(),
                capsule: None,
                ground: None,
                obstacle_material: None,
            },
            last_focus: None,
            since_update: 0.0,
            over_budget: 0,
        };
        app.init_resource::<CrowdClock>()
            .init_resource::<CrowdStats>()
            .init_asset::<SkinnedMeshInverseBindposes>()
            .insert_resource(crowd)
            .add_systems(Startup, (read_world, scenery_assets))
            .add_systems(PreUpdate, advance_clock)
            .add_systems(Update, stream);
        match self.joints {
            JointWrites::Direct => app.add_systems(
                PostUpdate,
                pose_direct.after(TransformSystems::Propagate).before(VisibilitySystems::CheckVisibility),
            ),
            JointWrites::Hierarchy => app.add_systems(PostUpdate, pose_hierarchy.before(TransformSystems::Propagate)),
        };
    }
}

/// Starts reading the world file on a thread of its own (once: a small
/// file, but never on the frame, and whatever threads the app's task pools
/// have).
fn read_world(crowd: ResMut<Crowd>) {
    let crowd = crowd.into_inner();
    let path = crowd.world_path.clone();
    let (send, receive) = channel();
    let reader = std::thread::Builder::new().name("crowdpatch world".into()).spawn(move || {
        let _ = send.send(WorldFile::load(&path));
    });
    *crowd.source.get_mut().unwrap_or_else(|e| e.into_inner()) = match reader {
        Ok(_) => Source::Reading(receive),
        Err(e) => {
            error!("crowdpatch: cannot start reading {}: {e}", crowd.world_path.display());
            Source::Failed
        }
    };
}

/// The ground square's mesh and material and the obstacles' material.
fn scenery_assets(
    crowd: ResMut<Crowd>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    let scene = &mut crowd.into_inner().scene;
    let quad = meshes.add(Plane3d::new(Vec3::Y, Vec2::splat(0.5)));
    let ground = materials.add(StandardMaterial {
        base_color: Color::srgb(0.55, 0.57, 0.55),
        perceptual_roughness: 1.0,
        ..default()
    });
    scene.ground = Some((quad, ground));
    scene.obstacle_material = Some(materials.add(StandardMaterial {
        base_color: Color::srgb(0.35, 0.45, 0.7),
        perceptual_roughness: 0.9,
        ..default()
    }));
}

fn advance_clock(time: Res<Time>, mut clock: ResMut<CrowdClock>) {
    if !clock.paused {
        let dt = time.delta_secs_f64() * clock.speed;
        if dt != 0.0 {
            clock.time += dt;
        }
    }
}

/// The executor of tile loads: Bevy's async compute task pool.
fn executor(job: LoadJob) {
    AsyncComputeTaskPool::get().spawn(async move { job() }).detach();
}

/// The world point `(x, y)` `[m]` of a Bevy position.
fn world_point(p: Vec3) -> [f64; 2] {
    [f64::from(p.x), -f64::from(p.z)]
}

/// The assets a cell is spawned with.
struct AssetStores<'a> {
    meshes: &'a mut Assets<Mesh>,
    materials: &'a mut Assets<StandardMaterial>,
    bindposes: &'a mut Assets<SkinnedMeshInverseBindposes>,
}

#[allow(clippy::too_many_arguments)]
fn stream(
    mut commands: Commands,
    time: Res<Time>,
    crowd: ResMut<Crowd>,
    mut stats: ResMut<CrowdStats>,
    focus: Query<&GlobalTransform, With<CrowdFocus>>,
    cameras: Query<&GlobalTransform, With<Camera3d>>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    mut bindposes: ResMut<Assets<SkinnedMeshInverseBindposes>>,
) {
    let crowd = crowd.into_inner();
    let source = crowd.source.get_mut().unwrap_or_else(|e| e.into_inner());
    if let Source::Reading(receive) = source {
        let result = match receive.try_recv() {
            Ok(r) => r,
            Err(TryRecvError::Empty) => return,
            Err(TryRecvError::Disconnected) => Err(WorldError::Io {
                file: crowd.world_path.display().to_string(),
                reason: "the reading thread stopped".into(),
            }),
        };
        *source = match result {
            Ok(file) => {
                let dir = crowd.world_path.parent().map(Path::to_path_buf).unwrap_or_default();
                let tiles = DirectorySource::for_world(dir, &file);
                info!("crowdpatch: playing {} ({} tiles)", crowd.world_path.display(), file.tiles.len());
                // An app whose async compute pool has no thread (a one-thread
                // task pool setup) would never run the loads: the
                // streamer's own loader thread takes them then.
                let streamer = if AsyncComputeTaskPool::get().thread_num() > 0 {
                    Streamer::with_executor(file.world(), tiles, crowd.options.clone(), executor)
                } else {
                    Streamer::new(file.world(), tiles, StreamOptions { workers: 1, ..crowd.options.clone() })
                };
                Source::Playing(Box::new(streamer))
            }
            Err(e) => {
                let message = format!("{}: {e}", crowd.world_path.display());
                error!("crowdpatch: cannot play the world: {message}");
                stats.world_error = Some(message);
                Source::Failed
            }
        };
    }
    let Source::Playing(streamer) = source else { return };
    let Some(at) = focus.iter().next().or_else(|| cameras.iter().next()).map(|g| world_point(g.translation())) else {
        return;
    };
    crowd.since_update += time.delta_secs_f64();
    let moved = crowd.last_focus.is_none_or(|f| (f[0] - at[0]).hypot(f[1] - at[1]) > 1.0);
    if !(moved || crowd.since_update >= 0.2 || streamer.pending() > 0) {
        return;
    }
    crowd.since_update = 0.0;
    crowd.last_focus = Some(at);
    let scene = &mut crowd.scene;
    let mut stores = AssetStores { meshes: &mut meshes, materials: &mut materials, bindposes: &mut bindposes };
    for event in streamer.update(at) {
        match event {
            StreamEvent::CellShown { cell, tile } => {
                if let (Some(t), Some(c)) = (streamer.shared_tile(tile), streamer.layout().cell(cell[0], cell[1])) {
                    scene.show(cell, tile, &t, c.rotation, &mut commands, &mut stores);
                }
            }
            StreamEvent::CellHidden { cell } => scene.hide(cell, &mut commands),
            StreamEvent::TileUnloaded { tile } => {
                scene.tiles.remove(&tile);
            }
            StreamEvent::TileLoaded { .. } => {}
            StreamEvent::LoadFailed { tile, error } => {
                error!("crowdpatch: tile {tile} of {} is left empty: {error}", crowd.world_path.display());
                stats.tiles_failed += 1;
            }
            StreamEvent::OverBudget { cells_left_out } => {
                if cells_left_out != crowd.over_budget {
                    warn!(
                        "crowdpatch: {cells_left_out} cells near the focus are not shown: their tiles do not fit in \
                         the memory budget of {} MiB",
                        crowd.options.memory_budget >> 20
                    );
                }
                crowd.over_budget = cells_left_out;
            }
        }
    }
    // Tiles no shown cell uses lose their samplers.
    scene.tiles.retain(|_, t| t.users > 0);
    stats.tiles_loaded = streamer.loaded_tiles();
    stats.tiles_pending = streamer.pending();
    stats.cells = scene.by_cell.len();
    stats.bytes = streamer.loaded_bytes() + scene.memory_bytes();
}

impl Scene {
    fn memory_bytes(&self) -> usize {
        self.tiles.values().map(|t| t.joints.as_ref().map_or(0, TileJoints::memory_bytes)).sum::<usize>()
            + self.cells.iter().flatten().map(|c| c.poses.memory_bytes() + c.entities.len() * 8).sum::<usize>()
    }

    /// Despawns a cell no longer shown.
    fn hide(&mut self, cell: [i64; 2], commands: &mut Commands) {
        let Some(slot) = self.by_cell.remove(&cell) else { return };
        let Some(state) = self.cells[slot as usize].take() else { return };
        for e in state.entities {
            commands.entity(e).despawn();
        }
        if let Some(t) = self.tiles.get_mut(&state.tile) {
            t.users = t.users.saturating_sub(1);
        }
        self.free.push(slot);
    }

    /// Spawns the walkers (and scenery) of a cell now shown: `tile` turned
    /// by `rotation` quarter turns.
    fn show(
        &mut self,
        cell: [i64; 2],
        tile_index: usize,
        tile: &Arc<Tile>,
        rotation: u8,
        commands: &mut Commands,
        stores: &mut AssetStores<'_>,
    ) {
        if self.by_cell.contains_key(&cell) {
            return;
        }
        let size = tile.size();
        let placement = Placement { offset: [cell[0] as f64 * size, cell[1] as f64 * size], rotation };
        let characters = &mut self.characters;
        let state = self.tiles.entry(tile_index).or_insert_with(|| {
            let joints = tile.character().and_then(|_| TileJoints::new(tile));
            let look = joints.as_ref().and(tile.character()).map(|ch| {
                characters.iter().position(|(c, _)| **c == **ch).unwrap_or_else(|| {
                    let a = assets::character_assets(ch, stores.meshes, stores.materials, stores.bindposes);
                    characters.push((ch.clone(), a));
                    characters.len() - 1
                })
            });
            TileState { tile: tile.clone(), joints, look, users: 0 }
        });
        state.users += 1;
        let slot = self.free.pop().unwrap_or_else(|| {
            self.cells.push(None);
            (self.cells.len() - 1) as u32
        });
        let n = tile.instance_count();
        let joint_count = state.joints.as_ref().map_or(0, TileJoints::joint_count);
        let mut entities = vec![commands.spawn((CrowdCell { cell, tile: tile_index }, Transform::default())).id()];
        if self.scenery {
            spawn_scenery(
                tile,
                &placement,
                commands,
                stores,
                self.ground.as_ref(),
                self.obstacle_material.as_ref(),
                &mut entities,
            );
        }
        match state.look {
            Some(k) => {
                let look = &self.characters[k].1;
                for i in 0..n {
                    spawn_walker(commands, self.mode, look, state.joints.as_ref(), slot, i, joint_count, &mut entities);
                }
            }
            None => {
                let (mesh, material) = self
                    .capsule
                    .get_or_insert_with(|| {
                        let r = tile.agent_radius() as f32;
                        (
                            stores.meshes.add(assets::capsule(r, CAPSULE_HEIGHT)),
                            stores
                                .materials
                                .add(StandardMaterial { base_color: Color::srgb(0.85, 0.35, 0.2), ..default() }),
                        )
                    })
                    .clone();
                for i in 0..n {
                    let body = WalkerBody { cell: slot, instance: i as u32 };
                    let e = commands
                        .spawn((
                            body,
                            Mesh3d(mesh.clone()),
                            MeshMaterial3d(material.clone()),
                            Transform::default(),
                            Visibility::Hidden,
                        ))
                        .id();
                    entities.push(e);
                }
            }
        }
        self.cells[slot as usize] =
            Some(CellState { tile: tile_index, poses: CellPoses::new(placement, n, joint_count), entities });
        self.by_cell.insert(cell, slot);
    }
}

/// Spawns one skinned walker: its joints and one mesh entity per primitive.
#[allow(clippy::too_many_arguments)]
fn spawn_walker(
    commands: &mut Commands,
    mode: JointWrites,
    look: &CharacterAssets,
    joints: Option<&TileJoints>,
    cell: u32,
    i: usize,
    joint_count: usize,
    entities: &mut Vec<Entity>,
) {
    let body = WalkerBody { cell, instance: i as u32 };
    // Direct writes: joints carry a GlobalTransform only, so that Bevy's
    // transform systems never visit them. In a hierarchy they need their
    // local Transform.
    let joint_entities: Vec<Entity> = (0..joint_count)
        .map(|k| {
            let joint = WalkerJoint { cell, slot: (i * joint_count + k) as u32 };
            match mode {
                JointWrites::Direct => commands.spawn((joint, GlobalTransform::IDENTITY)).id(),
                JointWrites::Hierarchy => commands.spawn((joint, Transform::default())).id(),
            }
        })
        .collect();
    let skin = SkinnedMesh { inverse_bindposes: look.inverse_bindposes.clone(), joints: joint_entities.clone() };
    match mode {
        JointWrites::Direct => {
            for (mesh, material) in &look.primitives {
                let e = commands
                    .spawn((
                        body,
                        Mesh3d(mesh.clone()),
                        MeshMaterial3d(material.clone()),
                        skin.clone(),
                        look.aabb,
                        NoAutoAabb,
                        Transform::default(),
                        Visibility::Hidden,
                    ))
                    .id();
                entities.push(e);
            }
        }
        JointWrites::Hierarchy => {
            let root = commands.spawn((body, Transform::default(), Visibility::Hidden)).id();
            entities.push(root);
            for (k, &e) in joint_entities.iter().enumerate() {
                let parent = joints.and_then(|t| t.skin_parent(k)).map_or(root, |p| joint_entities[p]);
                commands.entity(e).insert(ChildOf(parent));
            }
            for (mesh, material) in &look.primitives {
                let e = commands
                    .spawn((
                        Mesh3d(mesh.clone()),
                        MeshMaterial3d(material.clone()),
                        skin.clone(),
                        look.aabb,
                        NoAutoAabb,
                        Transform::default(),
                        Visibility::Inherited,
                        ChildOf(root),
                    ))
                    .id();
                entities.push(e);
            }
        }
    }
    entities.extend(joint_entities);
}

/// The ground square and obstacle solids of a cell.
fn spawn_scenery(
    tile: &Tile,
    placement: &Placement,
    commands: &mut Commands,
    stores: &mut AssetStores<'_>,
    ground: Option<&(Handle<Mesh>, Handle<StandardMaterial>)>,
    obstacle_material: Option<&Handle<StandardMaterial>>,
    entities: &mut Vec<Entity>,
) {
    let size = tile.size();
    if let Some((mesh, material)) = ground {
        let centre = placement.point(size, [size / 2.0, size / 2.0]);
        let side = (size as f32 - GRID_GAP).max(0.1);
        let at = Transform::from_xyz(centre[0] as f32, 0.0, -centre[1] as f32).with_scale(Vec3::new(side, 1.0, side));
        entities.push(commands.spawn((Mesh3d(mesh.clone()), MeshMaterial3d(material.clone()), at)).id());
    }
    let Some(material) = obstacle_material else { return };
    for o in &tile.extras().obstacles {
        if let Some(m) = assets::obstacle(o, OBSTACLE_HEIGHT, &|p| placement.point(size, p)) {
            entities.push(commands.spawn((Mesh3d(stores.meshes.add(m)), MeshMaterial3d(material.clone()))).id());
        }
    }
}

/// Poses every shown cell's walkers at the clock's time and writes joint
/// world transforms ([`JointWrites::Direct`]).
fn pose_direct(
    clock: Res<CrowdClock>,
    crowd: ResMut<Crowd>,
    mut stats: ResMut<CrowdStats>,
    mut joints: Query<(&WalkerJoint, &mut GlobalTransform), Without<WalkerBody>>,
    mut bodies: Query<(&WalkerBody, &mut GlobalTransform, &mut Visibility), Without<WalkerJoint>>,
) {
    let scene = &mut crowd.into_inner().scene;
    scene.sample(clock.time, &mut stats, true);
    let cells = &scene.cells;
    for (j, mut g) in &mut joints {
        if let Some(Some(c)) = cells.get(j.cell as usize)
            && let Some(m) = c.poses.joint_world(j.slot as usize)
        {
            *g = GlobalTransform::from(m);
        }
    }
    for (b, mut g, mut v) in &mut bodies {
        if let Some(root) = body_pose(cells, b, &mut v) {
            *g = GlobalTransform::from(root);
        }
    }
}

/// Shows or hides walker `b` as its cell's poses say; its transform when
/// drawn.
/// (Change detection fires only when the visibility changes.)
fn body_pose(cells: &[Option<CellState>], b: &WalkerBody, v: &mut Mut<Visibility>) -> Option<Affine3A> {
    let c = cells.get(b.cell as usize)?.as_ref()?;
    let i = b.instance as usize;
    let shown = c.poses.visible(i);
    v.set_if_neq(if shown { Visibility::Visible } else { Visibility::Hidden });
    shown.then(|| c.poses.root(i))
}

/// As [`pose_direct`], writing local transforms for Bevy to propagate
/// ([`JointWrites::Hierarchy`]).
fn pose_hierarchy(
    clock: Res<CrowdClock>,
    crowd: ResMut<Crowd>,
    mut stats: ResMut<CrowdStats>,
    mut joints: Query<(&WalkerJoint, &mut Transform), Without<WalkerBody>>,
    mut bodies: Query<(&WalkerBody, &mut Transform, &mut Visibility), Without<WalkerJoint>>,
) {
    let scene = &mut crowd.into_inner().scene;
    scene.sample(clock.time, &mut stats, false);
    let (cells, tiles) = (&scene.cells, &scene.tiles);
    for (j, mut t) in &mut joints {
        if let Some(Some(c)) = cells.get(j.cell as usize)
            && let Some(tj) = tiles.get(&c.tile).and_then(|s| s.joints.as_ref())
            && let Some(local) = tj.local(j.slot as usize)
        {
            *t = local;
        }
    }
    for (b, mut t, mut v) in &mut bodies {
        if let Some(root) = body_pose(cells, b, &mut v) {
            *t = Transform::from_matrix(root.into());
        }
    }
}

impl Scene {
    /// Samples every used tile's joints once and every shown cell's root
    /// poses (and, with `compose`, its joints' world transforms) at time `t`
    /// `[s]`, and counts what is drawn.
    fn sample(&mut self, t: f64, stats: &mut CrowdStats, compose: bool) {
        for state in self.tiles.values_mut() {
            if let Some(j) = state.joints.as_mut() {
                j.sample(t);
            }
        }
        let (mut walkers, mut drawn, mut joints, mut vertices, mut draws) = (0, 0, 0, 0, 0);
        for cell in self.cells.iter_mut().flatten() {
            let Some(state) = self.tiles.get(&cell.tile) else { continue };
            cell.poses.sample_roots(&state.tile, t);
            if compose && let Some(j) = state.joints.as_ref() {
                cell.poses.compose_joints(j);
            }
            let shown = cell.poses.visible_count();
            let n = state.tile.instance_count();
            walkers += n;
            drawn += shown;
            joints += n * state.joints.as_ref().map_or(0, TileJoints::joint_count);
            match state.look {
                Some(k) => {
                    let look = &self.characters[k].1;
                    vertices += shown * look.vertices;
                    draws += shown * look.primitives.len();
                }
                None => draws += shown,
            }
        }
        stats.walkers = walkers;
        stats.walkers_drawn = drawn;
        stats.joints = joints;
        stats.skinned_vertices = vertices;
        stats.walker_draws = draws;
    }
}
