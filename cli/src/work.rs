//! The progress bar and worker pool shared by the batch commands (`bake`,
//! `compose`, `bench`): one style, one place that starts threads.

use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use std::time::Duration;

/// A progress bar on standard error over `len` items counted in `unit`
/// (e.g. `tiles`), with elapsed time, ETA and a message; hidden when `quiet`.
pub fn progress_bar(len: usize, unit: &str, quiet: bool) -> ProgressBar {
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::with_draw_target(Some(len as u64), ProgressDrawTarget::stderr())
    };
    let unit = if unit.is_empty() { String::new() } else { format!(" {unit}") };
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{{spinner}} [{{elapsed_precise}}] {{bar:30}} {{pos}}/{{len}}{unit}, eta {{eta}} {{wide_msg}}"
        ))
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// A progress bar for one long task that goes through named stages: its
/// length and position follow the stage at hand (the caller sets them, and
/// the stage name as message), with elapsed time and the stage's ETA;
/// hidden when `quiet`.
pub fn stage_bar(quiet: bool) -> ProgressBar {
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::with_draw_target(Some(1), ProgressDrawTarget::stderr())
    };
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {percent:>3}%, eta {eta} {wide_msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// A pool of worker threads (`--jobs N`; default one per core).
pub struct Workers {
    pool: rayon::ThreadPool,
}

impl Workers {
    /// Starts `jobs` workers, or one per core.
    ///
    /// # Errors
    /// When the threads cannot be started.
    pub fn new(jobs: Option<usize>) -> anyhow::Result<Workers> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(jobs.unwrap_or(0))
            .build()
            .context("starting worker threads")?;
        Ok(Workers { pool })
    }

    /// Number of worker threads.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// `f` of every item, in item order, computed on the workers; the bar
    /// advances by one as each item is done.
    pub fn map<T: Sync, R: Send>(&self, items: &[T], bar: &ProgressBar, f: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
        self.pool.install(|| {
            items
                .par_iter()
                // One document per task: documents differ in cost.
                .with_max_len(1)
                .map(|item| {
                    let r = f(item);
                    bar.inc(1);
                    r
                })
                .collect()
        })
    }
}
