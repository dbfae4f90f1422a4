//! Streaming: keep the tiles near a focus point loaded, in the background,
//! under a memory budget ([`Streamer`]).
//!
//! A [`Layout`] says which tile each cell shows (a finite [`World`] or an
//! unbounded Wang fill, [`WangWorld`]); a [`TileSource`] loads a tile by
//! index (from a directory, [`DirectorySource`], or from a closure). Each
//! [`Streamer::update`] with the focus point (the camera, the player):
//! collects finished loads, finds the cells whose square comes within
//! `radius` of the focus, nearest first, asks for the tiles they lack to be
//! loaded, shows the cells whose tile is loaded, hides the cells beyond
//! `radius + hysteresis`, and unloads tiles no shown cell uses when memory
//! exceeds the budget. It returns what changed as [`StreamEvent`]s. Sampling
//! ([`Streamer::sample`]) covers the shown cells only.
//!
//! Loads run off the caller's thread: on loader threads of the streamer's own
//! ([`Streamer::new`]), or as jobs handed to an [`Executor`] the caller owns,
//! such as a game engine's task pool ([`Streamer::with_executor`]). Either
//! way they go through the same budget and give the same events.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::error::LoadError;
use crate::pose::{Placement, Poses};
use crate::sampler::{CrowdSampler, PlacedTile};
use crate::tile::Tile;
use crate::wang::WangSet;
use crate::world::{Cell, World};

/// Which tile each cell of a (possibly unbounded) world shows.
pub trait Layout {
    /// Tile side L `[m]`.
    fn size(&self) -> f64;
    /// The cell at column `i`, row `j` (any integers); `None` when empty.
    fn cell(&self, i: i64, j: i64) -> Option<Cell>;
}

impl Layout for World {
    fn size(&self) -> f64 {
        self.size
    }

    fn cell(&self, i: i64, j: i64) -> Option<Cell> {
        let (i, j) = (usize::try_from(i).ok()?, usize::try_from(j).ok()?);
        self.get(i, j)
    }
}

/// The unbounded world filled from a Wang-tile set with a seed
/// ([`WangSet::cell`]).
#[derive(Debug, Clone)]
pub struct WangWorld {
    /// The set.
    pub set: WangSet,
    /// The seed of the fill.
    pub seed: u64,
    /// Tile side L `[m]`.
    pub size: f64,
}

impl Layout for WangWorld {
    fn size(&self) -> f64 {
        self.size
    }

    fn cell(&self, i: i64, j: i64) -> Option<Cell> {
        self.set.cell(self.seed, i, j)
    }
}

/// Loads tiles by index, on a worker thread.
pub trait TileSource: Send + Sync + 'static {
    /// Loads tile `tile`.
    ///
    /// # Errors
    /// Whatever keeps the tile from loading; the streamer reports it as
    /// [`StreamEvent::LoadFailed`] and does not ask again.
    fn load(&self, tile: usize) -> Result<Tile, LoadError>;
}

impl<F> TileSource for F
where
    F: Fn(usize) -> Result<Tile, LoadError> + Send + Sync + 'static,
{
    fn load(&self, tile: usize) -> Result<Tile, LoadError> {
        self(tile)
    }
}

/// Loads tile `k` from the GLB file `dir/files[k]`.
#[derive(Debug, Clone)]
pub struct DirectorySource {
    /// The directory (that of `world.json`).
    pub dir: PathBuf,
    /// File of each tile, relative to `dir`.
    pub files: Vec<String>,
}

#[cfg(feature = "glb")]
impl DirectorySource {
    /// The source of the tiles of a world file read from `dir`.
    pub fn for_world(dir: impl Into<PathBuf>, world: &crate::world::WorldFile) -> DirectorySource {
        DirectorySource { dir: dir.into(), files: world.tiles.iter().map(|t| t.glb.clone()).collect() }
    }
}

#[cfg(feature = "glb")]
impl TileSource for DirectorySource {
    fn load(&self, tile: usize) -> Result<Tile, LoadError> {
        let file = self.files.get(tile).ok_or_else(|| LoadError::Io {
            file: format!("tile {tile}"),
            reason: format!("the world lists {} tiles", self.files.len()),
        })?;
        Tile::load(self.dir.join(file))
    }
}

/// One tile load: loads a tile and hands the result back to its
/// [`Streamer`] (which collects it at its next update). It blocks for as long
/// as the [`TileSource`] takes (reading and decoding a GLB: milliseconds to
/// tens of milliseconds a tile), so it belongs on a worker thread, not on a
/// frame's thread. A job whose streamer is gone by then loads and drops its
/// tile.
pub type LoadJob = Box<dyn FnOnce() + Send + 'static>;

/// Runs the [`Streamer`]'s tile loads where the caller wants them: on a game
/// engine's task pool, a thread pool, or inline.
///
/// A closure `Fn(LoadJob)` is an executor. With Bevy, for instance:
/// `move |job: LoadJob| AsyncComputeTaskPool::get().spawn(async move { job() }).detach()`
/// (this crate depends on no engine).
pub trait Executor: Send + Sync + 'static {
    /// Runs `job` once, now or later, on any thread. Called from
    /// [`Streamer::update`] once per tile to load: it should return quickly
    /// (queue the job) unless the caller wants loads inline, in which case
    /// `update` blocks for the loads it starts. A job that is never run
    /// leaves its tile pending: its cells stay empty and it is not asked
    /// for again.
    fn execute(&self, job: LoadJob);
}

impl<F> Executor for F
where
    F: Fn(LoadJob) + Send + Sync + 'static,
{
    fn execute(&self, job: LoadJob) {
        self(job)
    }
}

/// The loader threads of [`Streamer::new`]: `workers` threads taking jobs
/// from one queue, in order. Dropping it waits for the job each thread is
/// running; the jobs still queued are dropped unrun.
struct LoaderThreads {
    jobs: Option<Sender<LoadJob>>,
    closed: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl LoaderThreads {
    fn new(workers: usize) -> LoaderThreads {
        let (jobs, queue) = channel::<LoadJob>();
        let queue = Arc::new(Mutex::new(queue));
        let closed = Arc::new(AtomicBool::new(false));
        let threads = (0..workers.max(1))
            .map(|_| {
                let (queue, closed) = (Arc::clone(&queue), Arc::clone(&closed));
                std::thread::spawn(move || {
                    loop {
                        // The lock is released before the job runs.
                        let next = match queue.lock() {
                            Ok(guard) => guard.recv(),
                            Err(_) => return,
                        };
                        let Ok(job) = next else { return };
                        if closed.load(Ordering::Acquire) {
                            return;
                        }
                        job();
                    }
                })
            })
            .collect();
        LoaderThreads { jobs: Some(jobs), closed, threads }
    }
}

impl Executor for LoaderThreads {
    fn execute(&self, job: LoadJob) {
        if let Some(jobs) = &self.jobs {
            // The threads live as long as the queue: sending cannot fail.
            let _ = jobs.send(job);
        }
    }
}

impl Drop for LoaderThreads {
    fn drop(&mut self) {
        // The threads stop after their current load, leaving the queue.
        self.closed.store(true, Ordering::Release);
        self.jobs = None;
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Settings of a [`Streamer`].
#[derive(Debug, Clone, PartialEq)]
pub struct StreamOptions {
    /// Cells whose square comes within this distance of the focus are shown
    /// `[m]` `[Limit: ≥ 0]`.
    pub radius: f64,
    /// A shown cell is hidden only beyond `radius + hysteresis` `[m]`, so that
    /// a focus moving to and fro across the radius does not thrash.
    pub hysteresis: f64,
    /// Most bytes of loaded tiles ([`Tile::memory_bytes`]) to keep. Cells
    /// nearest the focus win when the wanted tiles do not all fit. A tile's
    /// size is known once it has loaded (tiles not loaded yet are planned at
    /// the mean size of those seen, 0 at first), so the very first loads may
    /// overshoot the budget until the next update unloads what does not fit.
    pub memory_budget: usize,
    /// Loader threads of [`Streamer::new`] `[Limit: ≥ 1]` (0 counts as 1).
    /// Unused by [`Streamer::with_executor`], whose executor decides.
    pub workers: usize,
}

impl Default for StreamOptions {
    fn default() -> Self {
        StreamOptions { radius: 64.0, hysteresis: 8.0, memory_budget: 256 << 20, workers: 1 }
    }
}

/// What changed in one [`Streamer::update`].
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// A tile finished loading.
    TileLoaded {
        /// Tile index.
        tile: usize,
        /// Its [`Tile::memory_bytes`].
        bytes: usize,
    },
    /// A tile was unloaded to stay within the memory budget.
    TileUnloaded {
        /// Tile index.
        tile: usize,
    },
    /// A tile failed to load; cells showing it stay empty.
    LoadFailed {
        /// Tile index.
        tile: usize,
        /// Why.
        error: LoadError,
    },
    /// A cell is now shown (its agents are sampled).
    CellShown {
        /// `(column, row)`.
        cell: [i64; 2],
        /// Its tile.
        tile: usize,
    },
    /// A cell is no longer shown.
    CellHidden {
        /// `(column, row)`.
        cell: [i64; 2],
    },
    /// Some wanted cells are not shown because their tiles do not fit in the
    /// memory budget.
    OverBudget {
        /// Number of wanted cells left out.
        cells_left_out: usize,
    },
}

type LoadResult = (usize, Result<Tile, LoadError>);

/// Keeps the tiles near a focus point loaded; see the [module](self)
/// documentation.
pub struct Streamer<L: Layout> {
    layout: L,
    options: StreamOptions,
    loaded: HashMap<usize, Arc<Tile>>,
    pending: HashSet<usize>,
    failed: HashSet<usize>,
    /// Bytes of every tile loaded once, to plan without reloading it.
    known_size: HashMap<usize, usize>,
    shown: BTreeMap<[i64; 2], Cell>,
    memory: usize,
    left_out: usize,
    source: Arc<dyn TileSource>,
    /// Where finished loads are sent (each job holds a clone).
    done: Sender<LoadResult>,
    results: Receiver<LoadResult>,
    sampler: CrowdSampler,
    ranges: Vec<Range<usize>>,
    /// Last, so that it drops after the rest: the streamer's own threads
    /// are joined once the streamer is otherwise gone.
    executor: Box<dyn Executor>,
}

impl<L: Layout> Streamer<L> {
    /// A streamer over `layout`, loading from `source` with `options`, on
    /// `options.workers` loader threads of its own, started now and joined
    /// when the streamer drops (after the load each is running). Nothing is
    /// loaded before the first [`Streamer::update`]. It is
    /// [`Streamer::with_executor`] with those threads as the executor.
    pub fn new(layout: L, source: impl TileSource, options: StreamOptions) -> Streamer<L> {
        let threads = LoaderThreads::new(options.workers);
        Streamer::with_executor(layout, source, options, threads)
    }

    /// A streamer over `layout`, loading from `source` with `options`, whose
    /// tile loads run as jobs handed to `executor` (a game engine's task
    /// pool, a thread pool of the caller's, or inline): it starts no thread
    /// of its own. `options.workers` is not used.
    ///
    /// Everything else is as with [`Streamer::new`]: the same memory budget,
    /// the same [`StreamEvent`]s. [`Streamer::update`] hands the executor
    /// one [`LoadJob`] per tile it wants loaded (each tile at most once while
    /// pending; a failed tile never again), costing the executor's queueing
    /// and no load; results are collected at the next update, so a load
    /// that finishes shows its cells one update later. A job still running
    /// when the streamer drops finishes on the executor and its tile is
    /// dropped. Load errors arrive as [`StreamEvent::LoadFailed`], as with
    /// [`Streamer::new`]. Nothing is loaded before the first update.
    ///
    /// # Example
    /// Loads run inline, on the caller's thread (a task pool works alike):
    /// ```
    /// use crowdpatch_runtime::format::{AgentKind, BakedAgent, BakedPatch, PatchHeader, PathKey, Sides};
    /// use crowdpatch_runtime::{Cell, FORMAT_VERSION, LoadJob, StreamEvent, StreamOptions, Streamer, Tile, World};
    /// use std::time::Duration;
    ///
    /// let walker = BakedAgent {
    ///     kind: AgentKind::Endogenous { index: 0 },
    ///     keys: vec![
    ///         PathKey { t: 0.0, position: [4.0, 8.0], heading: 0.0 },
    ///         PathKey { t: 5.0, position: [12.0, 8.0], heading: 0.0 },
    ///         PathKey { t: 10.0, position: [4.0, 8.0], heading: std::f64::consts::PI },
    ///     ],
    /// };
    /// let patch = BakedPatch {
    ///     format: FORMAT_VERSION,
    ///     header: PatchHeader { name: "loop".into(), size: 16.0, period: 10.0,
    ///                           agent_radius: 0.3, comfort_speed: 1.33, seed: 0 },
    ///     patterns: Sides::default(),
    ///     obstacles: vec![], agents: vec![walker], skeletal: None,
    /// };
    /// // A 4×4 world of one tile, 16 m cells.
    /// let mut world = World::new(4, 4, 16.0, 10.0);
    /// for j in 0..4 {
    ///     for i in 0..4 {
    ///         world.set(i, j, Some(Cell { tile: 0, rotation: 0 }));
    ///     }
    /// }
    /// let source = move |_tile: usize| Ok(Tile::from_baked(&patch));
    /// let options = StreamOptions { radius: 12.0, ..StreamOptions::default() };
    /// let mut streamer = Streamer::with_executor(world, source, options, |job: LoadJob| job());
    /// // The load ran inside the first update; the next one shows its cells.
    /// let first = streamer.update([24.0, 24.0]);
    /// assert!(first.is_empty() && streamer.pending() == 1);
    /// let events = streamer.update_blocking([24.0, 24.0], Duration::from_secs(1));
    /// assert!(matches!(events[0], StreamEvent::TileLoaded { tile: 0, .. }));
    /// // The cell under (24, 24) and its 8 neighbours come within 12 m.
    /// assert_eq!(streamer.shown_cells().count(), 9);
    /// assert_eq!(streamer.loaded_tiles(), 1);
    /// ```
    pub fn with_executor(
        layout: L,
        source: impl TileSource,
        options: StreamOptions,
        executor: impl Executor,
    ) -> Streamer<L> {
        let (done, results) = channel::<LoadResult>();
        Streamer {
            layout,
            options,
            loaded: HashMap::new(),
            pending: HashSet::new(),
            failed: HashSet::new(),
            known_size: HashMap::new(),
            shown: BTreeMap::new(),
            memory: 0,
            left_out: 0,
            source: Arc::new(source),
            done,
            results,
            sampler: CrowdSampler::new(),
            ranges: Vec::new(),
            executor: Box::new(executor),
        }
    }

    /// Hands the load of `tile` to the executor.
    fn request(&self, tile: usize) {
        let (source, done) = (Arc::clone(&self.source), self.done.clone());
        self.executor.execute(Box::new(move || {
            let result = source.load(tile);
            // The streamer may be gone: the tile is then dropped.
            let _ = done.send((tile, result));
        }));
    }

    /// The layout.
    pub fn layout(&self) -> &L {
        &self.layout
    }

    /// Bytes of loaded tiles.
    pub fn loaded_bytes(&self) -> usize {
        self.memory
    }

    /// Number of loaded tiles.
    pub fn loaded_tiles(&self) -> usize {
        self.loaded.len()
    }

    /// Number of tile loads under way.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// The shown cells, by coordinates.
    pub fn shown_cells(&self) -> impl Iterator<Item = ([i64; 2], Cell)> + '_ {
        self.shown.iter().map(|(&c, &cell)| (c, cell))
    }

    /// The loaded tile `tile`, if loaded.
    pub fn tile(&self, tile: usize) -> Option<&Tile> {
        self.loaded.get(&tile).map(|t| &**t)
    }

    /// The loaded tile `tile`, shared: a caller that samples it across
    /// frames keeps it alive even after the streamer unloads it (its bytes
    /// then no longer count against the budget).
    pub fn shared_tile(&self, tile: usize) -> Option<Arc<Tile>> {
        self.loaded.get(&tile).cloned()
    }

    fn collect(&mut self, events: &mut Vec<StreamEvent>, wait: Option<Duration>) {
        let deadline = wait.map(|d| Instant::now() + d);
        loop {
            let next = match deadline {
                Some(d) if !self.pending.is_empty() => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return;
                    }
                    self.results.recv_timeout(left).ok()
                }
                _ => self.results.try_recv().ok(),
            };
            let Some((tile, result)) = next else { return };
            self.pending.remove(&tile);
            match result {
                Ok(t) => {
                    let bytes = t.memory_bytes();
                    self.memory += bytes;
                    self.known_size.insert(tile, bytes);
                    self.loaded.insert(tile, Arc::new(t));
                    events.push(StreamEvent::TileLoaded { tile, bytes });
                }
                Err(error) => {
                    self.failed.insert(tile);
                    events.push(StreamEvent::LoadFailed { tile, error });
                }
            }
        }
    }

    /// Cells whose square comes within `radius` of `focus`, nearest first.
    fn cells_within(&self, focus: [f64; 2], radius: f64) -> Vec<(f64, [i64; 2], Cell)> {
        let l = self.layout.size();
        let mut out = Vec::new();
        if !(l > 0.0 && radius >= 0.0 && focus[0].is_finite() && focus[1].is_finite()) {
            return out;
        }
        let range = |c: f64| ((c - radius) / l).floor() as i64..=((c + radius) / l).floor() as i64;
        for j in range(focus[1]) {
            for i in range(focus[0]) {
                let dx = (i as f64 * l - focus[0]).max(focus[0] - (i + 1) as f64 * l).max(0.0);
                let dy = (j as f64 * l - focus[1]).max(focus[1] - (j + 1) as f64 * l).max(0.0);
                let d = dx.hypot(dy);
                if d <= radius
                    && let Some(cell) = self.layout.cell(i, j)
                {
                    out.push((d, [i, j], cell));
                }
            }
        }
        out.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        out
    }

    /// Moves the focus to `focus` `[m]` (world frame) and updates what is
    /// loaded and shown; returns what changed. Never blocks.
    pub fn update(&mut self, focus: [f64; 2]) -> Vec<StreamEvent> {
        let mut events = Vec::new();
        self.collect(&mut events, None);
        self.plan(focus, &mut events);
        events
    }

    /// As [`Streamer::update`], then waits up to `timeout` for the loads it
    /// started (and updates again): for loading screens, tests and tools.
    pub fn update_blocking(&mut self, focus: [f64; 2], timeout: Duration) -> Vec<StreamEvent> {
        let mut events = self.update(focus);
        self.collect(&mut events, Some(timeout));
        self.plan(focus, &mut events);
        events
    }

    fn plan(&mut self, focus: [f64; 2], events: &mut Vec<StreamEvent>) {
        let wanted = self.cells_within(focus, self.options.radius);
        let keep_radius = self.options.radius + self.options.hysteresis.max(0.0);
        let kept: Vec<(f64, [i64; 2], Cell)> = self
            .cells_within(focus, keep_radius)
            .into_iter()
            .filter(|(d, c, _)| *d > self.options.radius && self.shown.contains_key(c))
            .collect();
        let known: Vec<usize> = self.known_size.values().copied().collect();
        let estimate = if known.is_empty() { 0 } else { known.iter().sum::<usize>() / known.len() };
        let mut planned: HashMap<usize, usize> = HashMap::new();
        let mut planned_bytes = 0usize;
        let mut show: BTreeMap<[i64; 2], Cell> = BTreeMap::new();
        let mut left_out = 0;
        for (_, c, cell) in wanted.iter().chain(kept.iter()) {
            if self.failed.contains(&cell.tile) {
                continue;
            }
            let fits = match planned.get(&cell.tile) {
                Some(_) => true,
                None => {
                    let bytes = self.known_size.get(&cell.tile).copied().unwrap_or(estimate);
                    if planned_bytes + bytes <= self.options.memory_budget {
                        planned.insert(cell.tile, bytes);
                        planned_bytes += bytes;
                        true
                    } else {
                        false
                    }
                }
            };
            if !fits {
                left_out += 1;
                continue;
            }
            if self.loaded.contains_key(&cell.tile) {
                show.insert(*c, *cell);
            } else if self.pending.insert(cell.tile) {
                self.request(cell.tile);
            }
        }
        for (c, _) in self.shown.iter() {
            if !show.contains_key(c) {
                events.push(StreamEvent::CellHidden { cell: *c });
            }
        }
        for (c, cell) in show.iter() {
            if !self.shown.contains_key(c) {
                events.push(StreamEvent::CellShown { cell: *c, tile: cell.tile });
            }
        }
        self.shown = show;
        if left_out != self.left_out && left_out > 0 {
            events.push(StreamEvent::OverBudget { cells_left_out: left_out });
        }
        self.left_out = left_out;
        // Unload what no plan needs while over budget, largest first.
        if self.memory > self.options.memory_budget {
            let mut spare: Vec<(usize, usize)> = self
                .loaded
                .iter()
                .filter(|(t, _)| !planned.contains_key(t))
                .map(|(&t, tile)| (tile.memory_bytes(), t))
                .collect();
            spare.sort_by(|a, b| b.cmp(a));
            for (bytes, tile) in spare {
                if self.memory <= self.options.memory_budget {
                    break;
                }
                self.loaded.remove(&tile);
                self.memory -= bytes;
                events.push(StreamEvent::TileUnloaded { tile });
            }
        }
    }

    /// Samples the shown cells at time `t` `[s]` into `out` (world frame);
    /// returns, per shown cell in [`Streamer::shown_cells`] order, its
    /// coordinates and its slots in `out`.
    pub fn sample(&mut self, t: f64, out: &mut Poses) -> Vec<([i64; 2], Range<usize>)> {
        let l = self.layout.size();
        let cells: Vec<PlacedTile<'_>> = self
            .shown
            .iter()
            .filter_map(|(&[i, j], cell)| {
                self.loaded.get(&cell.tile).map(|tile| PlacedTile {
                    key: cell.tile,
                    tile,
                    placement: Placement { offset: [i as f64 * l, j as f64 * l], rotation: cell.rotation % 4 },
                })
            })
            .collect();
        self.sampler.sample(t, &cells, out, &mut self.ranges);
        self.shown.keys().copied().zip(self.ranges.iter().cloned()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{AgentKind, BakedAgent, PathKey};
    use std::sync::atomic::AtomicUsize;

    fn tile(agents: usize) -> Tile {
        let a = |y: f64| BakedAgent {
            kind: AgentKind::Endogenous { index: 0 },
            keys: vec![
                PathKey { t: 0.0, position: [2.0, y], heading: 0.0 },
                PathKey { t: 5.0, position: [12.0, y], heading: 0.0 },
                PathKey { t: 10.0, position: [2.0, y], heading: 0.0 },
            ],
        };
        Tile::from_baked(&crate::tile::tests::patch((0..agents).map(|k| a(1.0 + k as f64)).collect()))
    }

    fn world() -> World {
        let mut w = World::new(20, 20, 16.0, 10.0);
        for j in 0..20 {
            for i in 0..20 {
                w.set(i, j, Some(Cell { tile: (i + 2 * j) % 3, rotation: (i % 4) as u8 }));
            }
        }
        w
    }

    #[test]
    fn streams_the_cells_near_the_focus_and_no_others() {
        let loads = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&loads);
        let source = move |k: usize| {
            counter.fetch_add(1, Ordering::SeqCst);
            Ok(tile(k + 1))
        };
        let options = StreamOptions { radius: 20.0, hysteresis: 4.0, memory_budget: usize::MAX, workers: 2 };
        let mut s = Streamer::new(world(), source, options);
        let events = s.update_blocking([80.0, 80.0], Duration::from_secs(10));
        let shown: Vec<[i64; 2]> = s.shown_cells().map(|(c, _)| c).collect();
        // Every cell within 20 m of (80, 80) and no other.
        for j in 0..20i64 {
            for i in 0..20i64 {
                let dx = (i as f64 * 16.0 - 80.0).max(80.0 - (i + 1) as f64 * 16.0).max(0.0);
                let dy = (j as f64 * 16.0 - 80.0).max(80.0 - (j + 1) as f64 * 16.0).max(0.0);
                assert_eq!(shown.contains(&[i, j]), dx.hypot(dy) <= 20.0, "({i}, {j})");
            }
        }
        assert!(events.iter().any(|e| matches!(e, StreamEvent::TileLoaded { .. })));
        assert_eq!(loads.load(Ordering::SeqCst), 3, "each tile loads once");
        // Sampling covers only shown cells.
        let mut out = Poses::default();
        let ranges = s.sample(1.0, &mut out);
        let expected: usize = s.shown_cells().map(|(_, c)| s.tile(c.tile).unwrap().instance_count()).sum();
        assert_eq!(out.len(), expected);
        assert_eq!(ranges.len(), shown.len());
        // Every sampled agent lies inside its cell.
        for ([i, j], r) in ranges {
            for k in r {
                assert!(out.x[k] >= i as f32 * 16.0 - 1e-3 && out.x[k] <= (i + 1) as f32 * 16.0 + 1e-3);
                assert!(out.y[k] >= j as f32 * 16.0 - 1e-3 && out.y[k] <= (j + 1) as f32 * 16.0 + 1e-3);
            }
        }
        // Moving away hides the old cells, with events.
        let events = s.update_blocking([250.0, 250.0], Duration::from_secs(10));
        assert!(events.contains(&StreamEvent::CellHidden { cell: [5, 5] }));
        assert!(s.shown_cells().all(|([i, j], _)| i >= 13 && j >= 13));
    }

    #[test]
    fn memory_budget_keeps_the_nearest_cells_and_unloads_the_rest() {
        let sizes: Vec<usize> = (0..3).map(|k| tile(k + 1).memory_bytes()).collect();
        // Room for the two smallest tiles only.
        let budget = sizes[0] + sizes[1];
        let options = StreamOptions { radius: 40.0, hysteresis: 0.0, memory_budget: budget, workers: 1 };
        let mut s = Streamer::new(world(), |k: usize| Ok(tile(k + 1)), options);
        let mut all = Vec::new();
        for _ in 0..6 {
            all.extend(s.update_blocking([100.0, 100.0], Duration::from_secs(10)));
        }
        assert!(s.loaded_bytes() <= budget, "{} > {budget}", s.loaded_bytes());
        assert!(all.iter().any(|e| matches!(e, StreamEvent::OverBudget { .. })), "{all:?}");
        // The cell under the focus is shown.
        assert!(s.shown_cells().any(|(c, _)| c == [6, 6]));
    }

    #[test]
    fn failed_loads_are_reported_once() {
        let options = StreamOptions { radius: 10.0, ..StreamOptions::default() };
        let source = |k: usize| {
            if k == 1 { Err(LoadError::Io { file: "x.glb".into(), reason: "gone".into() }) } else { Ok(tile(1)) }
        };
        let mut s = Streamer::new(world(), source, options);
        let mut failures = 0;
        for _ in 0..4 {
            failures += s
                .update_blocking([40.0, 40.0], Duration::from_secs(10))
                .iter()
                .filter(|e| matches!(e, StreamEvent::LoadFailed { tile: 1, .. }))
                .count();
        }
        assert_eq!(failures, 1);
        assert!(s.shown_cells().all(|(_, c)| c.tile != 1));
    }

    /// A thread pool of the caller's, as a game engine's task pool: `threads`
    /// threads running the jobs its executor queues; they end once the
    /// executor is dropped.
    fn pool(threads: usize) -> (impl Executor, Vec<JoinHandle<()>>) {
        let (tx, rx) = channel::<LoadJob>();
        let rx = Arc::new(Mutex::new(rx));
        let handles = (0..threads)
            .map(|_| {
                let rx = Arc::clone(&rx);
                std::thread::spawn(move || {
                    loop {
                        let next = rx.lock().unwrap().recv();
                        let Ok(job) = next else { return };
                        job();
                    }
                })
            })
            .collect();
        (move |job: LoadJob| tx.send(job).unwrap(), handles)
    }

    /// A 20×20 world of 24 distinct tiles (3×3 blocks of cells share one),
    /// so that each move of the focus loads new tiles.
    fn blocks() -> World {
        let mut w = World::new(20, 20, 16.0, 10.0);
        for j in 0..20 {
            for i in 0..20 {
                w.set(i, j, Some(Cell { tile: (i / 3 + 7 * (j / 3)) % 24, rotation: ((i + j) % 4) as u8 }));
            }
        }
        w
    }

    /// Tile `k` (tile 9 fails), counting loads.
    fn counted_source(loads: &Arc<AtomicUsize>) -> impl TileSource {
        let counter = Arc::clone(loads);
        move |k: usize| {
            counter.fetch_add(1, Ordering::SeqCst);
            if k == 9 {
                Err(LoadError::Io { file: "9.glb".into(), reason: "gone".into() })
            } else {
                Ok(tile(k % 4 + 1))
            }
        }
    }

    /// What streaming along a path shows: each update's events (sorted:
    /// loads finish in any order), then the shown cells, loaded tiles and
    /// bytes at the end.
    type Trace = (Vec<Vec<String>>, Vec<([i64; 2], Cell)>, Vec<usize>, usize);

    fn stream_along(mut s: Streamer<World>) -> Trace {
        let mut log = Vec::new();
        let path = [[80.0, 80.0], [96.0, 120.0], [250.0, 250.0], [-20.0, 10.0], [160.0, 20.0], [80.0, 80.0]];
        for focus in path {
            let mut events: Vec<String> =
                s.update_blocking(focus, Duration::from_secs(10)).iter().map(|e| format!("{e:?}")).collect();
            assert_eq!(s.pending(), 0, "every load finished within the timeout");
            events.sort();
            log.push(events);
        }
        let loaded = (0..24).filter(|&k| s.tile(k).is_some()).collect();
        (log, s.shown_cells().collect(), loaded, s.loaded_bytes())
    }

    #[test]
    fn a_caller_executor_streams_as_the_streamers_own_threads_do() {
        let options = StreamOptions { radius: 40.0, hysteresis: 8.0, memory_budget: usize::MAX, workers: 2 };
        let loads = Arc::new(AtomicUsize::new(0));
        let own = stream_along(Streamer::new(blocks(), counted_source(&loads), options.clone()));
        let own_loads = loads.swap(0, Ordering::SeqCst);

        let inline = |job: LoadJob| job();
        let inline = stream_along(Streamer::with_executor(blocks(), counted_source(&loads), options.clone(), inline));
        assert_eq!(loads.swap(0, Ordering::SeqCst), own_loads, "each tile loads once");

        let (executor, threads) = pool(2);
        let pooled = stream_along(Streamer::with_executor(blocks(), counted_source(&loads), options, executor));
        // The streamer dropped its executor: the pool's threads end.
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(loads.load(Ordering::SeqCst), own_loads);

        for other in [&inline, &pooled] {
            assert_eq!(other, &own);
        }
        // The path loads new tiles at each move but the last, back at the
        // start (its tiles are still loaded), and meets the failing tile.
        let (log, shown, loaded, bytes) = own;
        let loads_some = |e: &Vec<String>| e.iter().any(|e| e.starts_with("TileLoaded"));
        let (back, moves) = log.split_last().unwrap();
        assert!(moves.iter().all(loads_some) && !loads_some(back), "{log:#?}");
        assert!(back.iter().any(|e| e.starts_with("CellShown")), "{back:?}");
        assert_eq!(log.iter().flatten().filter(|e| e.starts_with("LoadFailed { tile: 9")).count(), 1);
        assert!(loaded.len() > 12 && !loaded.contains(&9), "{loaded:?}");
        assert!(shown.iter().all(|(_, c)| c.tile != 9) && !shown.is_empty());
        assert_eq!(bytes, loaded.iter().map(|&k| tile(k % 4 + 1).memory_bytes()).sum::<usize>());
    }

    #[test]
    fn a_caller_executor_keeps_the_memory_budget() {
        let sizes: Vec<usize> = (0..3).map(|k| tile(k + 1).memory_bytes()).collect();
        let budget = sizes[0] + sizes[1];
        let options = StreamOptions { radius: 40.0, hysteresis: 0.0, memory_budget: budget, workers: 1 };
        let (executor, threads) = pool(2);
        let mut s = Streamer::with_executor(world(), |k: usize| Ok(tile(k + 1)), options, executor);
        let mut all = Vec::new();
        for _ in 0..6 {
            all.extend(s.update_blocking([100.0, 100.0], Duration::from_secs(10)));
        }
        assert!(s.loaded_bytes() <= budget, "{} > {budget}", s.loaded_bytes());
        assert!(all.iter().any(|e| matches!(e, StreamEvent::OverBudget { .. })), "{all:?}");
        assert!(all.iter().any(|e| matches!(e, StreamEvent::TileUnloaded { .. })), "{all:?}");
        assert!(s.shown_cells().any(|(c, _)| c == [6, 6]));
        drop(s);
        for t in threads {
            t.join().unwrap();
        }
    }

    #[test]
    fn dropping_a_streamer_finishes_the_running_load_and_drops_the_queued_ones() {
        let loads = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&loads);
        let slow = move |k: usize| {
            counter.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(50));
            Ok(tile(k % 4 + 1))
        };
        let options = StreamOptions { radius: 40.0, memory_budget: usize::MAX, workers: 1, ..StreamOptions::default() };
        let mut s = Streamer::new(blocks(), slow, options);
        s.update([80.0, 80.0]);
        assert!(s.pending() > 4, "{}", s.pending());
        drop(s);
        assert!(loads.load(Ordering::SeqCst) <= 1, "{} loads ran", loads.load(Ordering::SeqCst));
    }

    #[test]
    fn wang_worlds_stream_without_bounds() {
        let mut set = WangSet::new(1);
        set.insert([0, 0, 0, 0], 0);
        let layout = WangWorld { set, seed: 3, size: 16.0 };
        let mut s =
            Streamer::new(layout, |_k: usize| Ok(tile(2)), StreamOptions { radius: 16.0, ..StreamOptions::default() });
        s.update_blocking([-1000.0, 5000.0], Duration::from_secs(10));
        assert!(s.shown_cells().count() >= 9);
        assert!(s.shown_cells().any(|(c, _)| c == [(-1000.0f64 / 16.0).floor() as i64, 5000 / 16]));
    }
}
