//! Bakes in a background thread: progress and cancel through the core's
//! [`BakeObserver`], the result handed back over a channel and picked up by
//! the UI once per frame. Drawing never waits for a bake.

use crowdpatch::bake::{Bake, BakeError, BakeObserver, Stage};
use crowdpatch::model::{Patch, PatchDocument};
use crowdpatch::runtime::format::BakedPatch;
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

/// A finished bake with what the editor derives from it once.
#[derive(Debug, Clone)]
pub struct BakeResult {
    /// The document that was baked.
    pub document: PatchDocument,
    /// Every stage's result.
    pub bake: Bake,
    /// The baked patch (runtime format): what playback samples.
    pub baked: BakedPatch,
    /// Wall time `[s]`.
    pub seconds: f64,
}

/// A bake running in a background thread.
pub struct BakeJob {
    /// Progress, shared with the thread.
    pub progress: Arc<Progress>,
    /// The document being baked.
    pub document: PatchDocument,
    started: Instant,
    rx: Receiver<Result<Bake, BakeError>>,
}

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
    /// Starts baking `patch` (resolved from `document`); `repaint` is called
    /// from the thread when there is progress to show.
    pub fn start(patch: Patch, document: PatchDocument, repaint: impl Fn() + Send + 'static) -> BakeJob {
        let progress = Arc::new(Progress::default());
        let (tx, rx) = channel();
        let observer_progress = progress.clone();
        let repaint: Box<dyn Fn() + Send> = Box::new(repaint);
        std::thread::Builder::new()
            .name("crowdpatch-bake".into())
            .spawn(move || {
                let mut observer = Observer { progress: observer_progress, repaint, last_repaint: Instant::now() };
                let out = crowdpatch::bake(&patch, &mut observer);
                let _ = tx.send(out);
                (observer.repaint)();
            })
            .expect("spawning the bake thread");
        BakeJob { progress, document, started: Instant::now(), rx }
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
            Ok(Ok(bake)) => {
                let baked = bake.baked();
                Poll::Done(Box::new(BakeResult {
                    document: self.document.clone(),
                    bake,
                    baked,
                    seconds: self.elapsed(),
                }))
            }
            Ok(Err(BakeError::Cancelled)) => Poll::Cancelled,
            Err(TryRecvError::Empty) => Poll::Running,
            Err(TryRecvError::Disconnected) => Poll::Failed("the bake thread stopped without a result".into()),
        }
    }

    /// Waits for the result (tests and command-line use only; the UI polls).
    pub fn wait(self) -> Poll {
        match self.rx.recv() {
            Ok(Ok(bake)) => {
                let baked = bake.baked();
                let seconds = self.elapsed();
                Poll::Done(Box::new(BakeResult { document: self.document, bake, baked, seconds }))
            }
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
