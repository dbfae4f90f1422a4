//! `crowdpatch bake PATCH... -o OUT`

use crate::exit::{EXIT_COLLISIONS, EXIT_ERROR, EXIT_OK};
use crate::flags::{AnimationArgs, BakeFlags, ExportArgs, SolverArgs, WorkArgs};
use crate::output;
use crate::work;
use anyhow::{Context, bail};
use clap::Args;
use crowdpatch::bake::{Bake, BakeObserver, BakeOverrides, Stage};
use crowdpatch::model::Patch;
use indicatif::ProgressBar;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `crowdpatch bake`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  crowdpatch bake patches/figure7.patch.json -o figure7.glb --preview figure7.png\n  \
                        crowdpatch bake patches/*.patch.json -o baked/ --report baked/ --preview baked/"
)]
pub struct BakeArgs {
    /// Patch documents to bake (*.patch.json).
    #[arg(required = true, value_name = "PATCH")]
    patches: Vec<PathBuf>,

    /// Output: a .glb file for one patch; for several, a directory (created
    /// if missing) that receives NAME.glb for each PATCH named NAME.patch.json.
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,

    #[command(flatten)]
    solver: SolverArgs,

    /// Write the JSON report (metrics, matching, remaining collisions, stage
    /// timings): a file for one patch, a directory for several.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,

    /// Write a PNG preview of the stages — (a) matched paths, (b) after
    /// collision removal, (c) smoothed, coloured by time: a file for one
    /// patch, a directory for several.
    #[arg(long, value_name = "FILE")]
    preview: Option<PathBuf>,

    /// Write the baked walkers' trajectories in PedPy's text format
    /// (`id frame x y z` in metres, patch frame; the frame rate, the unit
    /// and the walking groups in `#` comments), which PedPy's
    /// `load_trajectory` and `crowdpatch realism` read: a file for one
    /// patch, a directory for several (NAME.txt).
    #[arg(long, value_name = "FILE")]
    trajectories: Option<PathBuf>,

    /// Frame rate of --trajectories [Hz].
    #[arg(long, value_name = "HZ", default_value_t = 25.0)]
    trajectory_rate: f64,

    /// Periods of play written by --trajectories.
    #[arg(long, value_name = "N", default_value_t = 3)]
    trajectory_periods: usize,

    #[command(flatten)]
    animation: AnimationArgs,

    #[command(flatten)]
    export: ExportArgs,

    #[command(flatten)]
    work: WorkArgs,
}

/// Where one patch's outputs go.
struct Job {
    source: PathBuf,
    patch: Patch,
    glb: PathBuf,
    report: Option<PathBuf>,
    preview: Option<PathBuf>,
    trajectories: Option<PathBuf>,
}

/// What happened to one patch.
enum Outcome {
    Baked { converged: bool, summary: String },
    Failed(anyhow::Error),
}

/// Every file a patch was read from: the document and the pattern files its
/// sides reference.
pub fn patch_inputs(file: &Path, patch: &Patch) -> Vec<PathBuf> {
    let base = file.parent().unwrap_or(Path::new("."));
    let mut out = vec![file.to_path_buf()];
    for side in crowdpatch::model::Side::ALL {
        if let Some(rel) = &patch.pattern_sources[side] {
            out.push(base.join(rel));
        }
    }
    out
}

/// Loads every document, printing every problem: the documents read and the
/// number of problems.
pub fn load_all(files: &[PathBuf]) -> (Vec<(PathBuf, Patch)>, usize) {
    let mut patches = Vec::new();
    let mut problems = 0usize;
    for file in files {
        match crowdpatch::load_patch(file) {
            Ok(p) => patches.push((file.clone(), p)),
            Err(e) => {
                for p in e.problems() {
                    eprintln!("{p}");
                    problems += 1;
                }
            }
        }
    }
    (patches, problems)
}

/// Checks each document against what a bake refuses
/// ([`crowdpatch::bake::refusals`]), printing every problem: their number.
pub fn check(patches: &[(PathBuf, Patch)], options: &crowdpatch::BakeOptions) -> usize {
    let mut problems = 0;
    for (file, p) in patches {
        let refused = crowdpatch::bake::refusals(p, options, "--frame-rate");
        for r in &refused {
            eprintln!("{}", r.clone().in_file(Some(file.clone())));
        }
        problems += refused.len();
    }
    problems
}

/// Loads every document, then checks each against what a bake refuses;
/// prints every problem. `None` when there was one.
pub fn load_and_check(files: &[PathBuf], options: &crowdpatch::BakeOptions) -> Option<Vec<(PathBuf, Patch)>> {
    let (patches, problems) = load_all(files);
    (problems + check(&patches, options) == 0).then_some(patches)
}

/// Runs `bake`: every check first — documents, the bake's limits, output
/// paths — and nothing created or baked unless all pass.
pub fn run(args: BakeArgs) -> anyhow::Result<ExitCode> {
    // 1. Load and check everything first: bad input writes nothing.
    if !(args.trajectory_rate.is_finite() && (0.1..=1000.0).contains(&args.trajectory_rate)) {
        eprintln!(
            "error: --trajectory-rate {}: must be in [0.1, 1000] Hz\nerror: nothing was baked",
            args.trajectory_rate
        );
        return Ok(ExitCode::from(EXIT_ERROR));
    }
    if !(1..=100).contains(&args.trajectory_periods) {
        eprintln!(
            "error: --trajectory-periods {}: must be in [1, 100]\nerror: nothing was baked",
            args.trajectory_periods
        );
        return Ok(ExitCode::from(EXIT_ERROR));
    }
    let (patches, mut problems) = load_all(&args.patches);
    let quiet = args.work.quiet;
    // The character is prepared for the fastest crowd of the run.
    let walk_speed = crate::flags::walk_speed(patches.iter().map(|(_, p)| p));
    let flags = BakeFlags { solver: Some(&args.solver), animation: &args.animation, export: Some(&args.export) };
    let settings = match flags.settings(walk_speed, quiet) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e:#}\nerror: nothing was baked");
            return Ok(ExitCode::from(EXIT_ERROR));
        }
    };
    let options = &settings.options;
    problems += check(&patches, options);
    if problems > 0 {
        eprintln!("error: {problems} problem(s) in the input; nothing was baked");
        return Ok(ExitCode::from(EXIT_ERROR));
    }
    let (jobs, plan) = match plan(&args, patches) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {e:#}\nerror: nothing was baked");
            return Ok(ExitCode::from(EXIT_ERROR));
        }
    };
    if output::refuse(&plan.check(), "nothing was baked") {
        return Ok(ExitCode::from(EXIT_ERROR));
    }
    plan.create_dirs()?;

    // 2. Bake in parallel with a progress bar (one bake: its stages).
    let single = jobs.len() == 1;
    let bar = if single { work::stage_bar(quiet) } else { work::progress_bar(jobs.len(), "patches", quiet) };
    let workers = args.work.workers()?;
    let sampling = (args.trajectory_rate, args.trajectory_periods);
    let outcomes: Vec<Outcome> = workers.map(&jobs, &bar, |job| {
        match bake_one(job, &settings.overrides, options, &settings.glb, sampling, &bar, single) {
            Ok((converged, summary)) => Outcome::Baked { converged, summary },
            Err(e) => Outcome::Failed(e),
        }
    });
    bar.finish_and_clear();

    // 3. Summary and exit code.
    let mut code = EXIT_OK;
    for (job, outcome) in jobs.iter().zip(outcomes) {
        match outcome {
            Outcome::Baked { converged, summary } => {
                if !quiet || !converged {
                    eprintln!("{summary}");
                }
                if !converged && code == EXIT_OK {
                    code = EXIT_COLLISIONS;
                }
            }
            Outcome::Failed(e) => {
                eprintln!("error: {}: {e:#}", job.source.display());
                code = EXIT_ERROR;
            }
        }
    }
    Ok(ExitCode::from(code))
}

/// Whether `p` names a directory: an existing one, or one written with a
/// trailing separator.
fn names_dir(p: &Path) -> bool {
    p.is_dir() || p.as_os_str().to_string_lossy().ends_with(std::path::MAIN_SEPARATOR)
}

/// Decides output paths and what the bake reads and writes; refuses
/// ambiguous requests. Creates nothing.
fn plan(args: &BakeArgs, patches: Vec<(PathBuf, Patch)>) -> anyhow::Result<(Vec<Job>, output::Plan)> {
    let several = patches.len() > 1;
    let out_is_dir = several || names_dir(&args.output);
    if several && args.output.extension().is_some_and(|e| e.eq_ignore_ascii_case("glb")) {
        bail!("-o {}: {} patches need an output directory, not a .glb file", args.output.display(), patches.len());
    }
    let mut plan = output::Plan::new();
    if out_is_dir {
        plan.dir("-o", &args.output);
    }
    for (flag, dir) in
        [("--report", &args.report), ("--preview", &args.preview), ("--trajectories", &args.trajectories)]
    {
        if let Some(dir) = dir
            && (several || names_dir(dir))
        {
            plan.dir(flag, dir);
        }
    }
    for (flag, file) in args.animation.input_files() {
        plan.input(flag, &file);
    }
    let mut seen = std::collections::BTreeMap::new();
    let mut jobs = Vec::new();
    for (source, patch) in patches {
        let stem = crowdpatch::document::file_stem(&source);
        if let Some(first) = seen.insert(stem.clone(), source.clone()) {
            bail!(
                "{} and {} would both be written as {stem}.glb; bake them into different directories",
                first.display(),
                source.display()
            );
        }
        for input in patch_inputs(&source, &patch) {
            plan.input("PATCH", &input);
        }
        let in_dir = |dir: &Path, ext: &str| dir.join(format!("{stem}.{ext}"));
        let glb = if out_is_dir { in_dir(&args.output, "glb") } else { args.output.clone() };
        let pick = |p: &Option<PathBuf>, ext: &str| {
            p.as_ref().map(|p| if several || names_dir(p) { in_dir(p, ext) } else { p.clone() })
        };
        let job = Job {
            source,
            patch,
            glb,
            report: pick(&args.report, "report.json"),
            preview: pick(&args.preview, "png"),
            trajectories: pick(&args.trajectories, "txt"),
        };
        plan.output("-o", &job.glb);
        if let Some(r) = &job.report {
            plan.output("--report", r);
        }
        if let Some(p) = &job.preview {
            plan.output("--preview", p);
        }
        if let Some(t) = &job.trajectories {
            plan.output("--trajectories", t);
        }
        jobs.push(job);
    }
    Ok((jobs, plan))
}

/// Progress of one bake shown on the shared bar; with `single`, the bar
/// follows the bake's stages (agents animated, collision-removal
/// iterations) with an ETA.
struct BarObserver<'a> {
    bar: &'a ProgressBar,
    name: String,
    single: bool,
    max_iterations: usize,
}

impl BakeObserver for BarObserver<'_> {
    fn stage(&mut self, stage: Stage) {
        let what = match stage {
            Stage::Matching => "1/5 matching",
            Stage::InitialPaths => "2/5 initial paths",
            Stage::CollisionRemoval => "3/5 removing collisions",
            Stage::Smoothing => "4/5 smoothing",
            Stage::Metrics => "4/5 metrics",
            Stage::Animation => "5/5 footsteps and animation",
        };
        if self.single {
            self.bar.set_length(1);
            self.bar.set_position(0);
            self.bar.reset_eta();
        }
        self.bar.set_message(format!("{}: {what}", self.name));
    }

    fn iteration(&mut self, iteration: usize, gap: f64) -> bool {
        if iteration.is_multiple_of(50) {
            if self.single {
                self.bar.set_length(self.max_iterations as u64);
                self.bar.set_position(iteration as u64);
            }
            self.bar.set_message(format!(
                "{}: 3/5 removing collisions, iteration {iteration}, worst gap {gap:.3} m",
                self.name
            ));
        }
        true
    }

    fn progress(&mut self, done: usize, total: usize) {
        if self.single {
            self.bar.set_length(total as u64);
            self.bar.set_position(done as u64);
        }
    }
}

fn bake_one(
    job: &Job,
    overrides: &BakeOverrides,
    options: &crowdpatch::BakeOptions,
    glb_options: &crowdpatch_gltf::GlbOptions,
    trajectory_rate: (f64, usize),
    bar: &ProgressBar,
    single: bool,
) -> anyhow::Result<(bool, String)> {
    let patch = overrides.apply(&job.patch);
    let mut observer =
        BarObserver { bar, name: job.patch.header.name.clone(), single, max_iterations: patch.solver.max_iterations };
    let bake = crowdpatch::bake_with(&patch, options, &mut observer)?;
    let baked = bake.baked();
    let (glb, stats) = crowdpatch_gltf::write_glb_with_stats(&baked, Some(&bake.metrics.to_json()), glb_options)
        .context("writing the GLB")?;
    // Every output is made before the first is written, so that a failure
    // leaves the previous outputs as they were.
    let report = match &job.report {
        Some(_) => {
            let mut json = serde_json::to_value(bake.report()).context("serialising the report")?;
            json["patch"] = serde_json::Value::String(job.source.display().to_string());
            json["glb"] = serde_json::Value::String(job.glb.display().to_string());
            if let Some(a) = json["metrics"]["animation"].as_object_mut() {
                a.insert("joint_keys".into(), stats.keys.into());
                a.insert("key_position_error".into(), stats.position_error.into());
                a.insert("key_rotation_error".into(), stats.rotation_error.into());
                a.insert("key_contact_error".into(), stats.contact_error.into());
                // The bounds those errors are held to (`null` with
                // --every-sample): [m], [rad], [m].
                let tolerance = glb_options.key_tolerance.map(
                    |t| serde_json::json!({ "position": t.position, "rotation": t.rotation, "contact": t.contact }),
                );
                a.insert("key_tolerance".into(), tolerance.unwrap_or_default());
            }
            // Size figures: bytes per walker-second of play (walkers' path
            // durations summed).
            let walker_seconds: f64 = baked.agents.iter().map(|a| a.end() - a.start()).sum();
            json["glb_bytes"] = glb.len().into();
            if walker_seconds > 0.0 {
                json["glb_bytes_per_walker_second"] = (glb.len() as f64 / walker_seconds).into();
            }
            Some(serde_json::to_string_pretty(&json).context("serialising the report")? + "\n")
        }
        None => None,
    };
    let preview = match &job.preview {
        Some(_) => Some(
            crowdpatch_png::preview::render(&bake)
                .with_context(|| format!("drawing the preview of {}", job.source.display()))?,
        ),
        None => None,
    };
    let trajectories = job.trajectories.as_ref().map(|_| {
        let (rate, periods) = trajectory_rate;
        crowdpatch::realism::trajectories_txt(&bake.patch, &bake.agents, rate, periods)
    });
    output::write(&job.glb, &glb).with_context(|| format!("writing {}", job.glb.display()))?;
    if let (Some(path), Some(text)) = (&job.report, &report) {
        output::write(path, text.as_bytes()).with_context(|| format!("writing {}", path.display()))?;
    }
    if let (Some(path), Some(png)) = (&job.preview, &preview) {
        output::write(path, png).with_context(|| format!("writing {}", path.display()))?;
    }
    if let (Some(path), Some(text)) = (&job.trajectories, &trajectories) {
        output::write(path, text.as_bytes()).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok((bake.converged() && bake.animation_passed(), summary(job, &bake)))
}

fn summary(job: &Job, bake: &Bake) -> String {
    let m = &bake.metrics;
    let two_r = 2.0 * bake.patch.header.agent_radius;
    let sep = m.min_separation.map_or("no agents meet".to_string(), |d| format!("min separation {d:.3} m"));
    let mut state = if bake.converged() {
        "collision-free".to_string()
    } else {
        format!("{} COLLISION(S) REMAIN (2r = {two_r} m; see --report)", bake.remaining.len())
    };
    if let Some(s) = &bake.skeletal
        && !s.gate.passed()
    {
        state.push_str(&format!(
            ", ANIMATION FAILS ITS QUALITY GATE ({}; see --report)",
            s.gate.violations.iter().map(|v| v.message.as_str()).collect::<Vec<_>>().join("; ")
        ));
    }
    let anim = m.animation.as_ref().map_or(String::new(), |a| {
        format!(
            ", {} footsteps, foot skate {:.4} m/s, stance drift p95 {:.4} m (max {:.4}), root deviation p95 {:.3} m \
             (max {:.3}), hip height {:.2}–{:.2} of the leg",
            a.footsteps,
            a.foot_skate,
            a.stance_drift_p95,
            a.stance_drift_max,
            a.root_deviation_p95,
            a.root_deviation_max,
            a.hip_height_ratio[2],
            a.hip_height_ratio[0]
        )
    });
    let mut out = format!(
        "{} -> {}: {} agents, {state}, {sep}, {} iterations, speed {:.2} m/s mean{anim}, {:.0} ms",
        job.source.display(),
        job.glb.display(),
        bake.agents.len(),
        bake.collision.iterations,
        m.speed.mean,
        bake.timings.total_ms
    );
    // The one note a user acts on before placing the tile (the others are
    // in the report).
    if let Some(note) = bake.notes.iter().find(|n| n.starts_with("does not tile with itself")) {
        out.push_str(&format!("\n  note: {}: {note}", job.source.display()));
    }
    out
}
