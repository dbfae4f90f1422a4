//! Bakes in a background thread: progress and cancel through the core's
//! [`BakeObserver`], the result handed back over a channel and picked up by
//! the UI once per frame. Drawing never waits for a bake. [`Baker`] keeps
//! the running job, the last result and the automatic re-bake's bookkeeping.

use crowdpatch::animation::Skeletal;
use crowdpatch::bake::{Bake, BakeError, BakeObserver, BakeOptions, Stage};
use crowdpatch::model::Patch;
use crowdpatch::runtime::format::BakedPatch;
use crowdpatch::runtime::joints::JointSampler;
use crowdpatch::runtime::skeletal::Character;
use crowdpatch::runtime::tile::Tile;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError, channel};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Progress shared between the bake thread and the UI.
#[derive(Debug, Default)]
pub struct Progress {
    stage: Mutex<Option<Stage>>,
    iteration: AtomicUsize,
    /// Worst gap below target `[m]`, as f64 bits.
    gap: AtomicU64,
    cancel: AtomicBool,
}

impl Progress {
    /// The current stage.
    pub fn stage(&self) -> Option<Stage> {
        *self.stage.lock().unwrap_or_else(|e| e.into_inner())
    }
    /// Collision-removal iterations so far.
    pub fn iteration(&self) -> usize {
        self.iteration.load(Ordering::Relaxed)
    }
    /// Worst gap below target `[m]` (negative while collisions remain).
    pub fn gap(&self) -> f64 {
        f64::from_bits(self.gap.load(Ordering::Relaxed))
    }
}

struct Observer {
    progress: Arc<Progress>,
    repaint: Box<dyn Fn() + Send>,
    last_repaint: Instant,
}

impl BakeObserver for Observer {
    fn stage(&mut self, stage: Stage) {
        *self.progress.stage.lock().unwrap_or_else(|e| e.into_inner()) = Some(stage);
        (self.repaint)();
    }
    fn iteration(&mut self, iteration: usize, gap: f64) -> bool {
        self.progress.iteration.store(iteration, Ordering::Relaxed);
        self.progress.gap.store(gap.to_bits(), Ordering::Relaxed);
        if self.last_repaint.elapsed().as_millis() > 50 {
            self.last_repaint = Instant::now();
            (self.repaint)();
        }
        !self.cancelled()
    }
    fn cancelled(&self) -> bool {
        self.progress.cancel.load(Ordering::Relaxed)
    }
}

/// What the 3D view plays of a skeletal bake: the tile read back from the
/// very GLB bytes an export writes (through the runtime's reader, as a game
/// loads it), its joint clips in playback form, and the character's skin.
#[derive(Debug)]
pub struct Playable {
    /// The tile, from the GLB.
    pub tile: Tile,
    /// Its joint clips in playback form.
    pub joints: JointSampler,
    /// The character every walker plays: skeleton and skinned mesh.
    pub character: Character,
    /// Per joint of the character, its row among an instance's joints in
    /// [`Self::joints`] (the GLB's joint nodes below an instance, breadth
    /// first), matched by name as the skin matches them by node.
    pub slots: Vec<usize>,
    /// Size of the GLB `[bytes]`.
    pub glb_bytes: usize,
}

impl Playable {
    /// The playable form of a skeletal `bake` (`None` for a capsule bake).
    ///
    /// # Errors
    /// The GLB cannot be written or read back (an exporter or reader
    /// refusal, in words).
    pub fn of(bake: &Bake) -> Result<Option<Playable>, String> {
        let Some(sk) = bake.skeletal.as_ref() else { return Ok(None) };
        let glb = crowdpatch_gltf::write_glb(
            &bake.baked(),
            Some(&bake.metrics.to_json()),
            &crowdpatch_gltf::GlbOptions::default(),
        )
        .map_err(|e| format!("writing the GLB: {e}"))?;
        let tile = Tile::from_glb(&glb).map_err(|e| format!("reading the GLB back: {e}"))?;
        let joints = JointSampler::new(&tile).ok_or("the GLB has no joint clips")?;
        let character = sk.animation.character.clone();
        if joints.joint_count() != character.joints.len() {
            return Err(format!(
                "the GLB's instances have {} joints, the character {}",
                joints.joint_count(),
                character.joints.len()
            ));
        }
        let clip = (0..tile.instance_count())
            .find_map(|i| tile.joint_clip(i))
            .ok_or("no instance of the GLB has a joint clip")?;
        let slots = character
            .joints
            .iter()
            .map(|j| {
                clip.joints
                    .iter()
                    .position(|c| c.name.as_deref() == Some(j.name.as_str()))
                    .ok_or_else(|| format!("joint {} of the character is not among the GLB's joint nodes", j.name))
            })
            .collect::<Result<Vec<usize>, String>>()?;
        Ok(Some(Playable { tile, joints, character, slots, glb_bytes: glb.len() }))
    }
}

/// A finished bake with what the editor derives from it once.
#[derive(Debug, Clone)]
pub struct BakeResult {
    /// The revision of the document that was baked (see
    /// [`crate::document`]): the bake is stale once the document has another.
    pub revision: u64,
    /// Every stage's result.
    pub bake: Bake,
    /// The baked patch (runtime format): what playback samples.
    pub baked: BakedPatch,
    /// Wall time `[s]`.
    pub seconds: f64,
    /// What the 3D view plays (skeletal bakes), or why it cannot.
    pub playable: Option<Result<std::sync::Arc<Playable>, String>>,
    /// The character the walkers were baked as (`None`: capsules).
    pub skeletal: Option<std::sync::Arc<Skeletal>>,
}

impl BakeResult {
    /// The animation quality gate's figures for walker `a` alone (`None`
    /// for a capsule bake or a walker the bake does not hold).
    pub fn walker_gate(&self, a: usize) -> Option<crowdpatch::animation::gate::GateReport> {
        let (outcome, skeletal) = (self.bake.skeletal.as_ref()?, self.skeletal.as_ref()?);
        outcome.agent_gate(&skeletal.character, self.baked.agents.get(a)?, a)
    }
}

/// A bake running in a background thread.
pub struct BakeJob {
    /// Progress, shared with the thread.
    pub progress: Arc<Progress>,
    /// The revision of the document being baked.
    pub revision: u64,
    started: Instant,
    rx: Receiver<Result<Finished, BakeError>>,
    skeletal: Option<std::sync::Arc<Skeletal>>,
}

/// What the bake thread hands back.
type Finished = (Bake, Option<Result<std::sync::Arc<Playable>, String>>);

/// What [`BakeJob::poll`] found.
pub enum Poll {
    /// Still running.
    Running,
    /// Done.
    Done(Box<BakeResult>),
    /// Cancelled.
    Cancelled,
    /// The thread died (a panic in the bake).
    Failed(String),
}

impl BakeJob {
    /// Starts baking `patch` (resolved from the document at `revision`);
    /// `repaint` is called from the thread when there is progress to show.
    /// With `skeletal`, walkers are animated as that character (stage 5)
    /// and the result carries what the 3D view plays ([`Playable`]).
    pub fn start(
        patch: Patch,
        revision: u64,
        skeletal: Option<std::sync::Arc<Skeletal>>,
        repaint: impl Fn() + Send + 'static,
    ) -> BakeJob {
        let progress = Arc::new(Progress::default());
        let (tx, rx) = channel();
        let observer_progress = progress.clone();
        let repaint: Box<dyn Fn() + Send> = Box::new(repaint);
        let character = skeletal.clone();
        std::thread::Builder::new()
            .name("crowdpatch-bake".into())
            .spawn(move || {
                let mut observer = Observer { progress: observer_progress, repaint, last_repaint: Instant::now() };
                let options = BakeOptions { skeletal };
                let out = crowdpatch::bake::bake_with(&patch, &options, &mut observer).map(|bake| {
                    let playable = match Playable::of(&bake) {
                        Ok(None) => None,
                        Ok(Some(p)) => Some(Ok(std::sync::Arc::new(p))),
                        Err(e) => Some(Err(e)),
                    };
                    (bake, playable)
                });
                let _ = tx.send(out);
                (observer.repaint)();
            })
            .expect("spawning the bake thread");
        BakeJob { progress, revision, started: Instant::now(), rx, skeletal: character }
    }

    /// Asks the bake to stop; [`BakeJob::poll`] then reports `Cancelled`.
    pub fn cancel(&self) {
        self.progress.cancel.store(true, Ordering::Relaxed);
    }

    /// Whether cancel was asked.
    pub fn cancelling(&self) -> bool {
        self.progress.cancel.load(Ordering::Relaxed)
    }

    /// Seconds since the start.
    pub fn elapsed(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// Checks for the result without waiting.
    pub fn poll(&self) -> Poll {
        match self.rx.try_recv() {
            Ok(Ok((bake, playable))) => self.done(bake, playable),
            Ok(Err(BakeError::Cancelled)) => Poll::Cancelled,
            Err(TryRecvError::Empty) => Poll::Running,
            Err(TryRecvError::Disconnected) => Poll::Failed("the bake thread stopped without a result".into()),
        }
    }

    fn done(&self, bake: Bake, playable: Option<Result<std::sync::Arc<Playable>, String>>) -> Poll {
        let (baked, seconds, skeletal) = (bake.baked(), self.elapsed(), self.skeletal.clone());
        Poll::Done(Box::new(BakeResult { revision: self.revision, bake, baked, seconds, playable, skeletal }))
    }

    /// Waits for the result (tests and command-line use only; the UI polls).
    pub fn wait(self) -> Poll {
        match self.rx.recv() {
            Ok(Ok((bake, playable))) => self.done(bake, playable),
            Ok(Err(BakeError::Cancelled)) => Poll::Cancelled,
            Err(_) => Poll::Failed("the bake thread stopped without a result".into()),
        }
    }
}

/// A short name of a stage ("collision removal"), from its serialised name so
/// that stages added to the pipeline need no change here.
pub fn stage_name(stage: Stage) -> String {
    match serde_json::to_value(stage) {
        Ok(serde_json::Value::String(s)) => s.replace('_', " "),
        _ => format!("{stage:?}"),
    }
}

/// Seconds without edits after which an automatic re-bake starts.
pub const AUTO_BAKE_DELAY: f64 = 0.6;

/// What [`Baker::auto_due`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutoBake {
    /// Nothing to do.
    Idle,
    /// Edits have settled: start a bake now.
    Start,
    /// A bake will be due: look again in a moment.
    Later,
}

/// The running bake, the last result, and the automatic re-bake.
#[derive(Default)]
pub struct Baker {
    job: Option<BakeJob>,
    /// The last finished bake.
    pub result: Option<BakeResult>,
    /// Re-bake automatically once edits settle.
    pub auto: bool,
    /// The revision an automatic bake was last started for.
    auto_baked: Option<u64>,
    /// The revision seen last frame, and when it last changed `[s]`.
    seen: Option<u64>,
    last_change: f64,
    /// The character walkers are baked as (`None`: capsules). Kept in the
    /// editor's settings, not in the document.
    pub character: Option<CharacterChoice>,
    /// Why the last character asked for could not be used (the choice
    /// before it was kept), in one sentence.
    pub character_refusal: Option<String>,
}

/// What the editor bakes walkers as: the choices of `crowdpatch bake`'s
/// `--character`, `--joint-map`, `--animation-source` and
/// `--source-joint-map`. Kept in the editor's own settings
/// ([`CharacterSettings::load`]), never in the patch document.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct CharacterSettings {
    /// A glTF character (.glb, .gltf, .vrm); `None`: the built-in one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    /// A joint map naming its humanoid joints where names do not tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joint_map: Option<PathBuf>,
    /// Where the walk comes from: `auto`, `none`, `builtin` or a file
    /// (empty: `auto`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub animation_source: String,
    /// A joint map for the animation source file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_joint_map: Option<PathBuf>,
}

/// The editor's settings file of the walkers: `character.json` in the
/// state directory ([`crate::files::state_dir`]), holding
/// [`CharacterSettings`] or `null` for capsules.
pub fn settings_path(state_dir: &Path) -> PathBuf {
    state_dir.join("character.json")
}

impl CharacterSettings {
    /// The walkers' setting saved in `state_dir`: `Some(None)` capsules,
    /// `Some(Some(s))` a character, `None` nothing saved.
    ///
    /// # Errors
    /// The file exists but cannot be read or is not such a setting, in a
    /// sentence naming it (the caller keeps the default and says so).
    pub fn load(state_dir: &Path) -> Result<Option<Option<CharacterSettings>>, String> {
        let path = settings_path(state_dir);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        serde_json::from_str(&text).map(Some).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Saves the walkers' setting (`None`: capsules) in `state_dir`,
    /// written whole or not at all.
    ///
    /// # Errors
    /// The directory or the file cannot be written.
    pub fn save(state_dir: &Path, walkers: Option<&CharacterSettings>) -> std::io::Result<()> {
        std::fs::create_dir_all(state_dir)?;
        let path = settings_path(state_dir);
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, serde_json::to_string_pretty(&walkers).map_err(std::io::Error::other)?)?;
        std::fs::rename(&tmp, &path)
    }

    /// The `crowdpatch bake` options these settings stand for (what the
    /// editor tells the user a pipeline would pass).
    pub fn command_line(&self) -> String {
        let mut out =
            format!("--character {}", self.file.as_deref().map_or("builtin".to_owned(), |f| f.display().to_string()));
        if let Some(m) = &self.joint_map {
            out += &format!(" --joint-map {}", m.display());
        }
        if !self.animation_source.is_empty() && self.animation_source != "auto" {
            out += &format!(" --animation-source {}", self.animation_source);
        }
        if let Some(m) = &self.source_joint_map {
            out += &format!(" --source-joint-map {}", m.display());
        }
        out
    }
}

/// The character the editor bakes walkers as.
#[derive(Clone)]
pub struct CharacterChoice {
    /// What was chosen.
    pub settings: CharacterSettings,
    /// `builtin`, or the file's path.
    pub name: String,
    /// The character prepared to walk.
    pub skeletal: std::sync::Arc<Skeletal>,
    /// What loading it found (the walks used, retargeting), in words.
    pub notes: Vec<String>,
    /// What `crowdpatch character inspect` says of it (the joints found,
    /// the humanoid mapping, each clip's verdict, where the walks come
    /// from), in fixed columns.
    pub description: String,
}

impl CharacterChoice {
    /// Loads the character `settings` name, scaled to the built-in's height
    /// as `crowdpatch bake --character` does, for a crowd walking at
    /// `walk_speed` `[m/s]`.
    ///
    /// # Errors
    /// A file cannot be read or the character cannot walk, in one sentence
    /// (the CLI's).
    pub fn load(settings: &CharacterSettings, walk_speed: f64) -> Result<CharacterChoice, String> {
        use crowdpatch::character::setup::{AnimationSource, CharacterSpec, setup};
        let source = if settings.animation_source.is_empty() { "auto" } else { &settings.animation_source };
        let spec = CharacterSpec {
            file: settings.file.clone(),
            height: Some(crowdpatch::character::builtin::character().height),
            joint_map: settings.joint_map.clone(),
            animation_source: AnimationSource::parse(source),
            source_joint_map: settings.source_joint_map.clone(),
            walk_speed: Some(walk_speed),
        };
        let name = settings.file.as_deref().map_or("builtin".to_string(), |f| f.display().to_string());
        let s = setup(&spec).map_err(|e| format!("{name}: {e}"))?;
        let description = s.describe();
        let mut notes = vec![s.walks_from.clone()];
        notes.extend(s.notes.iter().cloned());
        let skeletal = Skeletal::new(s.character).map_err(|e| format!("{name}: {e}"))?;
        Ok(CharacterChoice {
            settings: settings.clone(),
            name,
            skeletal: std::sync::Arc::new(skeletal),
            notes,
            description,
        })
    }
}

impl Baker {
    /// The running bake.
    pub fn job(&self) -> Option<&BakeJob> {
        self.job.as_ref()
    }

    /// Whether a bake is running.
    pub fn baking(&self) -> bool {
        self.job.is_some()
    }

    /// Whether the last result is of another revision than `revision`.
    pub fn stale(&self, revision: u64) -> bool {
        self.result.as_ref().is_some_and(|r| r.revision != revision)
    }

    /// The baked period `[s]`, else `period`.
    pub fn period(&self, period: f64) -> f64 {
        self.result.as_ref().map_or(period, |r| r.baked.header.period)
    }

    /// Starts baking `patch` (of `revision`), cancelling a running bake.
    pub fn start(&mut self, patch: Patch, revision: u64, repaint: impl Fn() + Send + 'static) {
        self.stop();
        let skeletal = self.character.as_ref().map(|c| c.skeletal.clone());
        self.job = Some(BakeJob::start(patch, revision, skeletal, repaint));
    }

    /// Asks the running bake to stop (its end is seen by [`Baker::poll`]).
    pub fn cancel(&self) {
        if let Some(j) = &self.job {
            j.cancel();
        }
    }

    /// Cancels and forgets the running bake.
    pub fn stop(&mut self) {
        if let Some(j) = self.job.take() {
            j.cancel();
        }
    }

    /// Cancels the running bake and forgets the result (another document).
    pub fn clear(&mut self) {
        self.stop();
        self.result = None;
        self.auto_baked = None;
    }

    /// Picks up a finished bake; returns what to tell the user, and whether
    /// it is bad news. `ctx` is asked to look again while the bake runs.
    pub fn poll(&mut self, ctx: &egui::Context) -> Option<(String, bool)> {
        let poll = self.job.as_ref()?.poll();
        if matches!(poll, Poll::Running) {
            ctx.request_repaint_after(std::time::Duration::from_millis(100));
            return None;
        }
        self.job = None;
        match poll {
            Poll::Done(r) => {
                let converged = r.bake.converged();
                let state = if converged {
                    "collision-free".to_string()
                } else {
                    format!("{} collisions remain", r.bake.remaining.len())
                };
                let msg = format!("baked {} agents in {:.2} s: {state}", r.bake.agents.len(), r.seconds);
                self.result = Some(*r);
                Some((msg, !converged))
            }
            Poll::Cancelled => Some(("bake cancelled".into(), false)),
            Poll::Failed(e) => Some((format!("bake failed: {e}"), true)),
            Poll::Running => None,
        }
    }

    /// Waits for the running bake, if any, and takes its result (tests).
    pub fn wait(&mut self) -> Option<(String, bool)> {
        match self.job.take()?.wait() {
            Poll::Done(r) => {
                self.result = Some(*r);
                None
            }
            Poll::Cancelled => Some(("bake cancelled".into(), false)),
            Poll::Failed(e) => Some((e, true)),
            Poll::Running => None,
        }
    }

    /// Whether an automatic re-bake of `revision` is due at `now` `[s]`
    /// (called once per frame): once edits have settled for
    /// [`AUTO_BAKE_DELAY`] with the pointer up, once per revision, unless the
    /// last result is of that revision already.
    pub fn auto_due(&mut self, now: f64, revision: u64, pointer_busy: bool) -> AutoBake {
        if self.seen != Some(revision) {
            self.seen = Some(revision);
            self.last_change = now;
        }
        if !self.auto || self.auto_baked == Some(revision) {
            return AutoBake::Idle;
        }
        if !pointer_busy
            && now - self.last_change >= AUTO_BAKE_DELAY
            && self.result.as_ref().is_none_or(|r| r.revision != revision)
        {
            self.auto_baked = Some(revision);
            return AutoBake::Start;
        }
        AutoBake::Later
    }
}
