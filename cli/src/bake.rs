//! `crowdpatch bake PATCH... -o OUT`

use crate::exit::{EXIT_COLLISIONS, EXIT_ERROR, EXIT_OK};
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

impl CompressArg {
    /// The exporter options it stands for.
    pub fn glb_options(self) -> crowdpatch_gltf::GlbOptions {
        let compression = match self {
            CompressArg::None => crowdpatch_gltf::Compression::None,
            CompressArg::Meshopt => crowdpatch_gltf::Compression::Meshopt,
        };
        crowdpatch_gltf::GlbOptions { compression, ..crowdpatch_gltf::GlbOptions::default() }
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

    /// How agents are played: skinned characters walking on planned footsteps,
    /// or capsules.
    #[arg(long, value_enum, default_value = "skeletal")]
    animation: AnimationArg,

    /// The character of a skeletal bake: `builtin` (generated, no asset
    /// needed) or a glTF binary with a skinned character and a walk clip.
    #[arg(long, value_name = "builtin|FILE.glb", default_value = "builtin")]
    character: String,

    /// Scale an imported character to this height [m]; 0 keeps the file's
    /// scale.
    #[arg(long, value_name = "M", default_value_t = 1.75)]
    character_height: f64,

    /// Sample rate of the skeletal joint tracks [Hz] (rounded so that a whole
    /// number of samples fills the period).
    #[arg(long, value_name = "HZ", default_value_t = 30.0)]
    frame_rate: f64,

    /// How the GLB's binary data is stored: `none` (joint keys reduced within
    /// 0.5° per joint, 1 mm at the extremities and 0.1 mm for a planted foot,
    /// rotations as normalised 16-bit integers; every glTF player), or
    /// `meshopt` (the same, compressed with
    /// EXT_meshopt_compression, for players with a meshopt decoder: three.js,
    /// Babylon.js, Unity glTFast).
    #[arg(long, value_enum, default_value = "none")]
    compress: CompressArg,

    /// Patches baked at once (default: one per core).
    #[arg(short, long, value_name = "N")]
    jobs: Option<usize>,

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

/// Runs `bake`.
pub fn run(args: BakeArgs) -> anyhow::Result<ExitCode> {
    // 1. Load and validate everything first: bad input writes nothing.
    let mut patches = Vec::new();
    let mut problems = 0usize;
    for file in &args.patches {
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
    if problems > 0 {
        eprintln!("error: {problems} problem(s) in the input; nothing was baked");
        return Ok(ExitCode::from(EXIT_ERROR));
    }
    if !(args.trajectory_rate.is_finite() && (0.1..=1000.0).contains(&args.trajectory_rate)) {
        bail!("--trajectory-rate {}: must be in [0.1, 1000] Hz", args.trajectory_rate);
    }
    if !(1..=100).contains(&args.trajectory_periods) {
        bail!("--trajectory-periods {}: must be in [1, 100]", args.trajectory_periods);
    }
    let jobs = plan(&args, patches)?;
    let skeletal = match args.animation {
        AnimationArg::None => None,
        AnimationArg::Skeletal => {
            let character = crate::character::load(&args.character, args.character_height, false)?;
            if !(args.frame_rate.is_finite() && (1.0..=240.0).contains(&args.frame_rate)) {
                bail!("--frame-rate {}: must be in [1, 240] Hz", args.frame_rate);
            }
            let mut sk = crowdpatch::animation::Skeletal::new(character)
                .with_context(|| format!("--character {}", args.character))?;
            sk.frame_rate = args.frame_rate;
            Some(std::sync::Arc::new(sk))
        }
    };
    let options = crowdpatch::BakeOptions { skeletal };
    let overrides = BakeOverrides { seed: args.seed, matching: args.matching, method: args.solver };
    let glb_options = args.compress.glb_options();

    // 2. Bake in parallel with a progress bar.
    let bar = work::progress_bar(jobs.len(), "patches", args.quiet);
    let workers = work::Workers::new(args.jobs)?;
    let outcomes: Vec<Outcome> = workers.map(&jobs, &bar, |job| {
        match bake_one(job, &overrides, &options, &glb_options, (args.trajectory_rate, args.trajectory_periods), &bar) {
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

/// Decides output paths; refuses ambiguous or clobbering requests.
fn plan(args: &BakeArgs, patches: Vec<(PathBuf, Patch)>) -> anyhow::Result<Vec<Job>> {
    let several = patches.len() > 1;
    let out_is_dir = several || args.output.is_dir();
    if several && args.output.extension().is_some_and(|e| e.eq_ignore_ascii_case("glb")) {
        bail!("-o {}: {} patches need an output directory, not a .glb file", args.output.display(), patches.len());
    }
    if out_is_dir {
        std::fs::create_dir_all(&args.output).with_context(|| format!("creating {}", args.output.display()))?;
    }
    for dir in [&args.report, &args.preview, &args.trajectories].into_iter().flatten() {
        if several {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
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
        let in_dir = |dir: &Path, ext: &str| dir.join(format!("{stem}.{ext}"));
        let glb = if out_is_dir { in_dir(&args.output, "glb") } else { args.output.clone() };
        let pick = |p: &Option<PathBuf>, ext: &str| {
            p.as_ref().map(|p| if several || p.is_dir() { in_dir(p, ext) } else { p.clone() })
        };
        jobs.push(Job {
            source,
            patch,
            glb,
            report: pick(&args.report, "report.json"),
            preview: pick(&args.preview, "png"),
            trajectories: pick(&args.trajectories, "csv"),
        });
    }
    Ok(jobs)
}

/// Progress of one bake shown on the shared bar.
struct BarObserver<'a> {
    bar: &'a ProgressBar,
    name: String,
}

impl BakeObserver for BarObserver<'_> {
    fn stage(&mut self, stage: Stage) {
        let what = match stage {
            Stage::Matching => "matching",
            Stage::InitialPaths => "initial paths",
            Stage::CollisionRemoval => "removing collisions",
            Stage::Smoothing => "smoothing",
            Stage::Metrics => "metrics",
            Stage::Animation => "footsteps and animation",
        };
        self.bar.set_message(format!("{}: {what}", self.name));
    }

    fn iteration(&mut self, iteration: usize, gap: f64) -> bool {
        if iteration.is_multiple_of(50) {
            self.bar.set_message(format!(
                "{}: removing collisions, iteration {iteration}, worst gap {gap:.3} m",
                self.name
            ));
        }
        true
    }
}

fn bake_one(
    job: &Job,
    overrides: &BakeOverrides,
    options: &crowdpatch::BakeOptions,
    glb_options: &crowdpatch_gltf::GlbOptions,
    trajectory_rate: (f64, usize),
    bar: &ProgressBar,
) -> anyhow::Result<(bool, String)> {
    let patch = overrides.apply(&job.patch);
    let mut observer = BarObserver { bar, name: job.patch.header.name.clone() };
    let bake = crowdpatch::bake_with(&patch, options, &mut observer)?;
    let baked = bake.baked();
    let (glb, stats) = crowdpatch_gltf::write_glb_with_stats(&baked, glb_options)
        .with_context(|| format!("writing the GLB of {}", job.source.display()))?;
    crowdpatch::io::write_atomic(&job.glb, &glb).with_context(|| format!("writing {}", job.glb.display()))?;
    if let Some(path) = &job.report {
        let mut json = serde_json::to_value(bake.report()).context("serialising the report")?;
        json["patch"] = serde_json::Value::String(job.source.display().to_string());
        json["glb"] = serde_json::Value::String(job.glb.display().to_string());
        if let Some(a) = json["metrics"]["animation"].as_object_mut() {
            a.insert("joint_keys".into(), stats.keys.into());
            a.insert("key_position_error".into(), stats.position_error.into());
            a.insert("key_rotation_error".into(), stats.rotation_error.into());
            a.insert("key_contact_error".into(), stats.contact_error.into());
        }
        // Size figures: bytes per walker-second of play (walkers' path
        // durations summed).
        let walker_seconds: f64 = baked.agents.iter().map(|a| a.end() - a.start()).sum();
        json["glb_bytes"] = glb.len().into();
        if walker_seconds > 0.0 {
            json["glb_bytes_per_walker_second"] = (glb.len() as f64 / walker_seconds).into();
        }
        let text = serde_json::to_string_pretty(&json).context("serialising the report")? + "\n";
        crowdpatch::io::write_atomic(path, text.as_bytes()).with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(path) = &job.preview {
        let png = crowdpatch_png::preview::render(&bake)
            .with_context(|| format!("drawing the preview of {}", job.source.display()))?;
        crowdpatch::io::write_atomic(path, &png).with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(path) = &job.trajectories {
        let (rate, periods) = trajectory_rate;
        let csv = crowdpatch::realism::trajectories_csv(&bake.patch, &bake.agents, rate, periods);
        crowdpatch::io::write_atomic(path, csv.as_bytes()).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok((bake.converged(), summary(job, &bake)))
}

fn summary(job: &Job, bake: &Bake) -> String {
    let m = &bake.metrics;
    let two_r = 2.0 * bake.patch.header.agent_radius;
    let sep = m.min_separation.map_or("no agents meet".to_string(), |d| format!("min separation {d:.3} m"));
    let state = if bake.converged() {
        "collision-free".to_string()
    } else {
        format!("{} COLLISION(S) REMAIN (2r = {two_r} m; see --report)", bake.remaining.len())
    };
    let anim = m.animation.as_ref().map_or(String::new(), |a| {
        format!(
            ", {} footsteps, foot skate {:.4} m/s, root deviation p95 {:.3} m",
            a.footsteps, a.foot_skate, a.root_deviation_p95
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
