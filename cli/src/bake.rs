//! `crowdpatch bake PATCH... -o OUT`

use crate::exit::{EXIT_COLLISIONS, EXIT_ERROR, EXIT_OK};
use crate::output;
use crate::work;
use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use crowdpatch::bake::{Bake, BakeObserver, BakeOverrides, Stage};
use crowdpatch::model::{MatchingMode, Patch, SolverKind};
use indicatif::ProgressBar;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// How agents are animated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AnimationArg {
    /// Skinned characters: footsteps planned along each path (A*), foot-locked
    /// skeletal animation, footsteps in the extras.
    Skeletal,
    /// Capsules that follow the paths (no footsteps).
    None,
}

/// `--compress`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompressArg {
    /// Plain buffers (quantised, reduced keys).
    None,
    /// EXT_meshopt_compression.
    Meshopt,
}

/// `--key-*`: how far the written joint keys may stray from the baked
/// motion (the exporter's [`crowdpatch_gltf::KeyTolerance`], measured on
/// every joint at every baked sample), or `--every-sample`.
#[derive(Debug, Clone, Args)]
pub struct KeyArgs {
    /// Largest position error of the extremities (feet, hands, head, toes)
    /// against the baked motion [mm], in [0.25, 10], at every baked sample
    /// (between samples, as a player interpolates, up to about 1.6× that).
    /// Looser bounds keep fewer keys: smaller files, less faithful feet and
    /// hands.
    #[arg(long, value_name = "MM", default_value_t = 1.0, value_parser = within(0.25, 10.0))]
    key_position_error: f64,

    /// Largest local rotation error of any joint [°], in [0.01, 5].
    #[arg(long, value_name = "DEG", default_value_t = 0.5, value_parser = within(0.01, 5.0))]
    key_rotation_error: f64,

    /// Largest horizontal error of a planted foot [mm], in [0.1, 1]: an
    /// error that changes from key to key shows as a sliding foot (1 mm
    /// plays a planted foot at 15–22 mm/s on average in three.js, the
    /// default at 6.5), and it adds to the stance drift the quality gate
    /// holds within 1 cm. The lower limits stay clear of what 16-bit
    /// rotations hold with every sample a key (about 0.09 mm at the hand of
    /// a character 1.75 m tall; a taller one may need looser bounds).
    #[arg(long, value_name = "MM", default_value_t = 0.3, value_parser = within(0.1, 1.0))]
    key_contact_error: f64,

    /// Write every baked sample of every joint as `f32`, no key reduction
    /// (about 3× the reduced file: a reference to measure against, or for
    /// tools that resample anyway).
    #[arg(long, conflicts_with_all = ["key_position_error", "key_rotation_error", "key_contact_error"])]
    every_sample: bool,
}

/// A clap parser of a finite number in `[low, high]`.
fn within(low: f64, high: f64) -> impl Fn(&str) -> Result<f64, String> + Clone {
    move |s: &str| {
        let v: f64 = s.trim().parse().map_err(|e| format!("{s:?} is not a number ({e})"))?;
        if v.is_finite() && v >= low && v <= high { Ok(v) } else { Err(format!("{s} is outside [{low}, {high}]")) }
    }
}

impl KeyArgs {
    /// The exporter's key tolerance (`None` for `--every-sample`).
    pub fn tolerance(&self) -> Option<crowdpatch_gltf::KeyTolerance> {
        (!self.every_sample).then(|| crowdpatch_gltf::KeyTolerance {
            position: self.key_position_error * 1e-3,
            rotation: self.key_rotation_error.to_radians(),
            contact: self.key_contact_error * 1e-3,
        })
    }

    /// Whether these are the defaults.
    pub fn is_default(&self) -> bool {
        self.tolerance() == Some(crowdpatch_gltf::KeyTolerance::default())
    }
}

impl CompressArg {
    /// The exporter options it stands for, with the key tolerance of `keys`.
    pub fn glb_options(self, keys: &KeyArgs) -> crowdpatch_gltf::GlbOptions {
        let compression = match self {
            CompressArg::None => crowdpatch_gltf::Compression::None,
            CompressArg::Meshopt => crowdpatch_gltf::Compression::Meshopt,
        };
        crowdpatch_gltf::GlbOptions {
            compression,
            key_tolerance: keys.tolerance(),
            ..crowdpatch_gltf::GlbOptions::default()
        }
    }
}

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

    /// Seed of the bake's random choices (overrides each document's "seed").
    #[arg(long, value_name = "N")]
    seed: Option<u64>,

    /// How entries are matched to exits (overrides "solver.matching").
    #[arg(long, value_enum)]
    matching: Option<MatchingMode>,

    /// Collision-removal solver (overrides "solver.method").
    #[arg(long, value_enum)]
    solver: Option<SolverKind>,

    /// Write the JSON report (metrics, matching, remaining collisions, stage
    /// timings): a file for one patch, a directory for several.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,

    /// Write a PNG preview of the stages — (a) matched paths, (b) after
    /// collision removal, (c) smoothed, coloured by time: a file for one
    /// patch, a directory for several.
    #[arg(long, value_name = "FILE")]
    preview: Option<PathBuf>,

    /// Write the baked walkers' trajectories as `id,frame,x,y` CSV (metres,
    /// patch frame; the format PedPy and the ETH/UCY tools read): a file for
    /// one patch, a directory for several (NAME.csv).
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

    /// How the GLB's binary data is stored: `none` (joint keys reduced within
    /// 0.5° per joint, 1 mm at the extremities and 0.3 mm for a planted foot,
    /// rotations as normalised 16-bit integers; every glTF player), or
    /// `meshopt` (the same, compressed with
    /// EXT_meshopt_compression, for players with a meshopt decoder: three.js,
    /// Babylon.js, Unity glTFast).
    #[arg(long, value_enum, default_value = "none")]
    compress: CompressArg,

    #[command(flatten)]
    keys: KeyArgs,

    /// Patches baked at once, 1 to 256 (default: one per core).
    #[arg(short, long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    jobs: Option<u16>,

    /// Print nothing but errors.
    #[arg(short, long)]
    quiet: bool,
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

/// Options of the animation stage shared by `bake` and `validate` (so that
/// both judge a document by the same bake).
#[derive(Debug, Args)]
pub struct AnimationArgs {
    /// How agents are played: skinned characters walking on planned footsteps,
    /// or capsules.
    #[arg(long, value_enum, default_value = "skeletal")]
    pub animation: AnimationArg,

    /// The character of a skeletal bake: `builtin` (generated, no asset
    /// needed) or a rigged humanoid in glTF (.glb or .gltf); without a walk
    /// clip of its own it walks with a retargeted one (--animation-source).
    #[arg(long, value_name = "builtin|FILE", default_value = "builtin")]
    pub character: String,

    /// Scale an imported character to this height [m]; 0 keeps the file's
    /// scale.
    #[arg(long, value_name = "M", default_value_t = 1.75)]
    pub character_height: f64,

    /// Sample rate of the skeletal joint tracks [Hz] (rounded so that a whole
    /// number of samples fills the period), in [1, 240]; period × rate may
    /// not exceed 100000 samples.
    #[arg(long, value_name = "HZ", default_value_t = 30.0)]
    pub frame_rate: f64,

    #[command(flatten)]
    pub walk: crate::character::WalkArgs,
}

impl AnimationArgs {
    /// The bake options these arguments ask for: the character loaded and
    /// prepared for a crowd walking at `walk_speed` [m/s]; its notes
    /// printed unless `quiet`.
    ///
    /// # Errors
    /// An unreadable or unusable character, or a frame rate out of range.
    pub fn options(&self, walk_speed: f64, quiet: bool) -> anyhow::Result<crowdpatch::BakeOptions> {
        let skeletal = match self.animation {
            AnimationArg::None => None,
            AnimationArg::Skeletal => {
                let (lo, hi) = crowdpatch::limits::FRAME_RATE_RANGE;
                if !(self.frame_rate.is_finite() && (lo..=hi).contains(&self.frame_rate)) {
                    bail!("--frame-rate {}: must be in [{lo}, {hi}] Hz", self.frame_rate);
                }
                let setup = crate::character::load(&self.character, self.character_height, &self.walk, walk_speed)?;
                if !quiet {
                    for n in &setup.notes {
                        eprintln!("{}: {n}", self.character);
                    }
                }
                let mut sk = crowdpatch::animation::Skeletal::new(setup.character)
                    .with_context(|| format!("--character {}", self.character))?;
                sk.frame_rate = self.frame_rate;
                Some(std::sync::Arc::new(sk))
            }
        };
        Ok(crowdpatch::BakeOptions { skeletal })
    }

    /// The files a skeletal bake reads besides the documents, with their
    /// flags: the character, the animation source and the joint maps.
    pub fn input_files(&self) -> Vec<(&'static str, PathBuf)> {
        if self.animation != AnimationArg::Skeletal {
            return Vec::new();
        }
        let mut out = Vec::new();
        if self.character != "builtin" {
            out.push(("--character", PathBuf::from(&self.character)));
        }
        if !["auto", "none", "builtin"].contains(&self.walk.animation_source.as_str()) {
            out.push(("--animation-source", PathBuf::from(&self.walk.animation_source)));
        }
        for (flag, map) in [("--joint-map", &self.walk.joint_map), ("--source-joint-map", &self.walk.source_joint_map)]
        {
            if let Some(m) = map {
                out.push((flag, m.clone()));
            }
        }
        out
    }
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
    // The character is prepared for the fastest crowd of the run.
    let walk_speed = patches
        .iter()
        .map(|(_, p)| p.header.comfort_speed)
        .fold(None, |m: Option<f64>, c| Some(m.map_or(c, |m| m.max(c))))
        .unwrap_or(crowdpatch::model::DEFAULT_COMFORT_SPEED);
    let options = match args.animation.options(walk_speed, args.quiet) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e:#}\nerror: nothing was baked");
            return Ok(ExitCode::from(EXIT_ERROR));
        }
    };
    problems += check(&patches, &options);
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
    let overrides = BakeOverrides { seed: args.seed, matching: args.matching, method: args.solver };
    let glb_options = args.compress.glb_options(&args.keys);

    // 2. Bake in parallel with a progress bar (one bake: its stages).
    let single = jobs.len() == 1;
    let bar = if single { work::stage_bar(args.quiet) } else { work::progress_bar(jobs.len(), "patches", args.quiet) };
    let workers = work::Workers::new(args.jobs.map(usize::from))?;
    let sampling = (args.trajectory_rate, args.trajectory_periods);
    let outcomes: Vec<Outcome> = workers.map(&jobs, &bar, |job| {
        match bake_one(job, &overrides, &options, &glb_options, sampling, &bar, single) {
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
                if !args.quiet || !converged {
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
            trajectories: pick(&args.trajectories, "csv"),
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
        crowdpatch::realism::trajectories_csv(&bake.patch, &bake.agents, rate, periods)
    });
    output::write(&job.glb, &glb).with_context(|| format!("writing {}", job.glb.display()))?;
    if let (Some(path), Some(text)) = (&job.report, &report) {
        output::write(path, text.as_bytes()).with_context(|| format!("writing {}", path.display()))?;
    }
    if let (Some(path), Some(png)) = (&job.preview, &preview) {
        output::write(path, png).with_context(|| format!("writing {}", path.display()))?;
    }
    if let (Some(path), Some(csv)) = (&job.trajectories, &trajectories) {
        output::write(path, csv.as_bytes()).with_context(|| format!("writing {}", path.display()))?;
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
    format!(
        "{} -> {}: {} agents, {state}, {sep}, {} iterations, speed {:.2} m/s mean{anim}, {:.0} ms",
        job.source.display(),
        job.glb.display(),
        bake.agents.len(),
        bake.collision.iterations,
        m.speed.mean,
        bake.timings.total_ms
    )
}
