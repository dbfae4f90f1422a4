//! `crowdpatch compose MAP -o DIR [--wang K] [--plan | --shard M/N | --gather]`

use crate::exit::{EXIT_COLLISIONS, EXIT_ERROR, EXIT_OK};
use crate::flags::{AnimationArg, AnimationArgs, BakeFlags, BakeSettings, CompressArg, ExportArgs, WorkArgs};
use crate::output;
use crate::shard::{Shard, ShardFrom, job_hash, parse_count, parse_shard, parse_shard_from};
use crate::work;
use anyhow::Context;
use clap::Args;
use crowdpatch::bake::{BakeObserver, Stage};
use crowdpatch::compose::{Composition, canonical_text, compose, compose_wang, load_map};
use crowdpatch_runtime::{SeamProblem, Tile, TileEntry, WangFile, WangTileEntry, WorldFile, seam_metrics_with};
use indicatif::ProgressBar;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// Arguments of `crowdpatch compose`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  crowdpatch compose maps/town.map.json -o town/\n  \
                        crowdpatch compose maps/town.map.json -o wang/ --wang 2\n\n\
                        Writes DIR/world.json and DIR/tiles/HASH.glb (with HASH.patch.json, the document baked). \
                        A tile whose document is unchanged is not baked again. Tiles play capsules unless \
                        --animation skeletal: capsules are the compact default for worlds.\n\n\
                        On a farm (docs/farm.md): `--plan` lists the bake jobs; `--shard M/N` (or \
                        `--shard-from slurm|k8s|aws|env:NAME`) bakes shard M of N of them, each job in one \
                        shard by its hash; `--gather` then checks every tile and writes world.json.")]
// The one difference with `bake`'s flags: worlds play capsules by default.
#[command(mut_arg("animation", |a| a.default_value("none")))]
pub struct ComposeArgs {
    /// The map (*.map.json): a grid of cell kinds and the pattern library.
    #[arg(value_name = "MAP")]
    map: PathBuf,

    /// Output directory (created if missing): world.json and tiles/.
    #[arg(short, long, value_name = "DIR", required_unless_present = "plan")]
    output: Option<PathBuf>,

    /// List the world's bake jobs (one per distinct tile, with the character
    /// and options given) and their content hashes on standard output, with
    /// each job's shard when --shards N is given; bake nothing.
    #[arg(long, conflicts_with_all = ["shard", "shard_from", "gather", "report"])]
    plan: bool,

    /// Bake only shard M of N of the jobs (1 ≤ M ≤ N): those whose content
    /// hash falls in it, so that a job keeps its shard when others are
    /// added. Writes the shard's tiles, not world.json; `--gather` does.
    #[arg(long, value_name = "M/N", value_parser = parse_shard, conflicts_with_all = ["shard_from", "gather", "report"])]
    shard: Option<Shard>,

    /// Take the shard from the scheduler's array index: `slurm`
    /// (SLURM_ARRAY_TASK_ID of SLURM_ARRAY_TASK_COUNT), `k8s`
    /// (JOB_COMPLETION_INDEX of an Indexed Job), `aws`
    /// (AWS_BATCH_JOB_ARRAY_INDEX) or `env:NAME` (a 0-based index in NAME);
    /// the count from --shards where the scheduler does not give it.
    #[arg(long, value_name = "SCHEDULER", value_parser = parse_shard_from, conflicts_with_all = ["gather", "report"])]
    shard_from: Option<ShardFrom>,

    /// The number of shards N: for --shard-from, and for --plan and --gather
    /// to name each job's shard.
    #[arg(long, value_name = "N", value_parser = parse_count)]
    shards: Option<u32>,

    /// After the shards: check that every job's tile is in DIR and valid
    /// (naming each missing or corrupt one and the shard that should have
    /// made it), check the world and write world.json, baking nothing.
    #[arg(long, conflicts_with = "force")]
    gather: bool,

    /// Build a Wang-tile set of K patterns per edge orientation (K⁴ tiles)
    /// that fills any world aperiodically at run time, instead of the map's
    /// own tiles. The world's grid is then the map's rectangle filled from
    /// the set.
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u8).range(1..=6))]
    wang: Option<u8>,

    /// Bake every tile again, even when its cached GLB is up to date.
    #[arg(long)]
    force: bool,

    #[command(flatten)]
    animation: AnimationArgs,

    #[command(flatten)]
    export: ExportArgs,

    /// Write a JSON report: compatibility mismatches and seam metrics.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,

    #[command(flatten)]
    work: WorkArgs,
}

struct Progress<'a> {
    bar: &'a ProgressBar,
    name: String,
}

impl BakeObserver for Progress<'_> {
    fn stage(&mut self, stage: Stage) {
        self.bar.set_message(format!("{}: {stage:?}", self.name));
    }
}

/// Runs `compose`: load the map, compose, resolve every tile's document,
/// load the character and check every tile against what a bake refuses (bad
/// input writes nothing), bake the tiles not cached, check the world as a
/// game would load it, then write `world.json` and the report.
///
/// `--plan` stops after listing the jobs; `--shard` bakes one shard's jobs
/// and stops before the world; `--gather` bakes nothing, checks that every
/// job's tile is there and valid, then checks and writes the world.
pub fn run(args: ComposeArgs) -> anyhow::Result<ExitCode> {
    let start = Instant::now();
    let quiet = args.work.quiet;
    let map = match load_map(&args.map) {
        Ok(m) => m,
        Err(e) => {
            for p in e.problems() {
                eprintln!("{p}");
            }
            eprintln!("error: the map has problems; nothing was composed");
            return Ok(ExitCode::from(EXIT_ERROR));
        }
    };
    let composition = match args.wang {
        Some(k) => compose_wang(&map, usize::from(k)),
        None => compose(&map),
    };
    let Some(patches) = resolve_tiles(&args, &composition) else {
        return Ok(ExitCode::from(EXIT_ERROR));
    };
    let stamp = match job_stamp(&args) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e:#}\nerror: nothing was composed");
            return Ok(ExitCode::from(EXIT_ERROR));
        }
    };
    let jobs: Vec<u64> = composition.tiles.iter().map(|t| job_hash(&t.key, &stamp)).collect();
    if args.plan {
        print_plan(&args, &composition, &jobs, &stamp)?;
        return Ok(ExitCode::from(EXIT_OK));
    }
    let shard = match which_shard(&args) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}\nerror: nothing was composed");
            return Ok(ExitCode::from(EXIT_ERROR));
        }
    };
    let dir = args.output.clone().context("-o DIR is required unless --plan")?;
    if args.gather {
        let plan = gather_plan(&args, &dir, &map);
        if output::refuse(&plan.check(), "nothing was gathered") {
            return Ok(ExitCode::from(EXIT_ERROR));
        }
        if !check_gathered(&args, &dir, &composition, &jobs, &stamp) {
            return Ok(ExitCode::from(EXIT_ERROR));
        }
        return finish_world(&args, &dir, map.seed, &composition, Baked { baked: 0, code: EXIT_OK }, start);
    }
    // The character is prepared for the fastest crowd of the world, as `bake`
    // prepares it for the fastest of its patches.
    let flags = BakeFlags { solver: None, animation: &args.animation, export: Some(&args.export) };
    let settings = match flags.settings(crate::flags::walk_speed(&patches), quiet) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e:#}\nerror: nothing was composed");
            return Ok(ExitCode::from(EXIT_ERROR));
        }
    };
    if !check_tiles(&args, &composition, &patches, &settings.options) {
        return Ok(ExitCode::from(EXIT_ERROR));
    }
    let selected: Vec<usize> = (0..jobs.len()).filter(|&k| shard.is_none_or(|s| s.holds(jobs[k]))).collect();
    // Every output checked before any work; nothing created on refusal.
    let plan = output_plan(&args, &dir, &map, &composition, &selected, shard.is_none());
    if output::refuse(&plan.check(), "nothing was composed") {
        return Ok(ExitCode::from(EXIT_ERROR));
    }
    plan.create_dirs()?;
    let job = BakeJob { dir: &dir, composition: &composition, patches: &patches, settings: &settings, stamp: &stamp };
    let baked = match bake_tiles(&args, &job, &selected)? {
        Ok(n) => n,
        Err(code) => return Ok(ExitCode::from(code)),
    };
    match shard {
        Some(s) => {
            if !quiet {
                eprintln!(
                    "{} -> {}: shard {s}: {} of {} jobs ({} baked, {} cached) in {:.1} s; `--gather` writes world.json",
                    args.map.display(),
                    dir.join("tiles").display(),
                    selected.len(),
                    jobs.len(),
                    baked.baked,
                    selected.len() - baked.baked,
                    start.elapsed().as_secs_f64()
                );
            }
            Ok(ExitCode::from(baked.code))
        }
        None => finish_world(&args, &dir, map.seed, &composition, baked, start),
    }
}

/// The shard of this run: `--shard`, or `--shard-from` read from the
/// environment; `None` for the whole world.
fn which_shard(args: &ComposeArgs) -> Result<Option<Shard>, String> {
    let shard = match (&args.shard, &args.shard_from) {
        (Some(s), _) => *s,
        (None, Some(from)) => {
            from.resolve(args.shards, |k| std::env::var(k).ok()).map_err(|e| format!("--shard-from: {e}"))?
        }
        (None, None) => return Ok(None),
    };
    if let Some(n) = args.shards.filter(|&n| n != shard.count) {
        return Err(format!("--shards {n} differs from the shard's count ({shard})"));
    }
    Ok(Some(shard))
}

/// What a job is baked with, in one line (the `.bake.txt` stamp beside each
/// tile): the animation and export settings, and the content hash of every
/// file the bake reads besides the document (character, animation source,
/// joint maps), so that a changed file re-bakes and machines mounting it at
/// other paths agree.
///
/// # Errors
/// When one of those files cannot be read (named with its flag).
fn job_stamp(args: &ComposeArgs) -> anyhow::Result<String> {
    let mut stamp = format!("{}, {}", args.animation.stamp(), args.export.stamp());
    for (flag, path) in args.animation.input_files() {
        // Worded as the bake's own refusal of an unreadable file.
        let hash = crate::shard::file_hash(&path).map_err(|e| anyhow::anyhow!("{flag} {}: {e}", path.display()))?;
        stamp.push_str(&format!(", {flag} fnv {hash}"));
    }
    Ok(stamp + "\n")
}

/// Prints the jobs on standard output: job hash, tile key, the job's shard
/// when `--shards` is given, whether `-o DIR` already holds its tile, and
/// its first cells.
fn print_plan(args: &ComposeArgs, composition: &Composition, jobs: &[u64], stamp: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let options = stamp.trim_end();
    writeln!(out, "# {}: {} bake job(s) with {options}", args.map.display(), jobs.len())?;
    writeln!(out, "# job\ttile\tshard\tstate\tcells")?;
    let tiles_dir = args.output.as_ref().map(|d| d.join("tiles"));
    for (t, &job) in composition.tiles.iter().zip(jobs) {
        let shard = args.shards.map_or("-".to_owned(), |n| format!("{}/{n}", crate::shard::shard_of(job, n)));
        let state = match &tiles_dir {
            None => "-",
            Some(d) if cached(args, d, t, stamp).is_ok() => "done",
            Some(_) => "to-bake",
        };
        let cells: Vec<String> = t.cells.iter().map(|[i, j]| format!("{i},{j}")).collect();
        writeln!(out, "{job:016x}\t{}\t{shard}\t{state}\t{}", t.key, cells.join(" "))?;
    }
    Ok(())
}

/// Why the cached tile of `tile` in `tiles_dir` cannot serve this run, or
/// `Ok` when it can: its GLB, its document (the same text) and its stamp
/// (the same settings, and the hash of the GLB's bytes as its bake wrote
/// them, so that a corrupt or partly copied GLB is baked again; a tile
/// without a stamp counts as baked with the defaults, as compose wrote them
/// before stamps). Reads the GLB: O(its size).
fn cached(
    args: &ComposeArgs,
    tiles_dir: &Path,
    tile: &crowdpatch::compose::ComposedTile,
    stamp: &str,
) -> Result<(), String> {
    let glb = tiles_dir.join(format!("{}.glb", tile.key));
    if !glb.is_file() {
        return Err(format!("{} is missing", glb.display()));
    }
    let doc = tiles_dir.join(format!("{}.patch.json", tile.key));
    match std::fs::read_to_string(&doc) {
        Ok(text) if text == canonical_text(&tile.document) => {}
        Ok(_) => return Err(format!("{} holds another document than the tile's", doc.display())),
        Err(_) => return Err(format!("{} is missing", doc.display())),
    }
    let stamp_path = tiles_dir.join(format!("{}.bake.txt", tile.key));
    match std::fs::read_to_string(&stamp_path) {
        Ok(s) => match s.strip_prefix(stamp).and_then(|rest| rest.strip_prefix("glb fnv ")) {
            Some(hash) => match crate::shard::file_hash(&glb) {
                Ok(h) if h == hash.trim_end() => Ok(()),
                Ok(_) => Err(format!(
                    "{}: its bytes are not those its bake wrote ({}): corrupt or partly copied",
                    glb.display(),
                    stamp_path.display()
                )),
                Err(e) => Err(format!("{} cannot be read: {e}", glb.display())),
            },
            None => Err(format!(
                "{} says it was baked with {} (this run: {})",
                stamp_path.display(),
                s.lines().next().unwrap_or_default(),
                stamp.trim()
            )),
        },
        Err(_)
            if args.animation.animation() == AnimationArg::None
                && args.export.compress == CompressArg::None
                && args.export.keys.is_default() =>
        {
            Ok(())
        }
        Err(_) => Err(format!("{} is missing", stamp_path.display())),
    }
}

/// What `--gather` reads and writes: the map, every tile, world.json and the
/// report.
fn gather_plan(args: &ComposeArgs, dir: &Path, map: &crowdpatch::compose::Map) -> output::Plan {
    let mut plan = output::Plan::new();
    for input in &map.inputs {
        plan.input("MAP", input);
    }
    if let Some(r) = &args.report {
        plan.output("--report", r);
    }
    plan.output("-o", &dir.join("world.json"));
    plan
}

/// Checks that every job's tile is in `dir` and loads, printing each one
/// that is missing, stale or corrupt with the shard that should have made
/// it; returns whether all are there. Loads every GLB: O(tiles' size).
fn check_gathered(args: &ComposeArgs, dir: &Path, composition: &Composition, jobs: &[u64], stamp: &str) -> bool {
    let tiles_dir = dir.join("tiles");
    let mut bad = 0;
    for (t, &job) in composition.tiles.iter().zip(jobs) {
        let problem = cached(args, &tiles_dir, t, stamp).err().or_else(|| {
            let glb = tiles_dir.join(format!("{}.glb", t.key));
            Tile::load(&glb).err().map(|e| format!("{} cannot be loaded: {e}", glb.display()))
        });
        let Some(problem) = problem else { continue };
        let who = match args.shards {
            Some(n) => format!(
                "shard {}/{n} should have made it (crowdpatch compose {} -o {} --shard {}/{n})",
                crate::shard::shard_of(job, n),
                args.map.display(),
                dir.display(),
                crate::shard::shard_of(job, n)
            ),
            None => "give --shards N to name the shard that should have made it".to_owned(),
        };
        eprintln!("{}: job {job:016x}: {problem}; {who}", tile_label(args, t));
        bad += 1;
    }
    if bad > 0 {
        eprintln!(
            "error: {bad} of {} tile(s) missing or invalid in {}; world.json was not written (run those shards again)",
            jobs.len(),
            tiles_dir.display()
        );
    }
    bad == 0
}

/// Loads the written tiles, checks the world, writes the report, then
/// `world.json` last; prints the summary. The exit code: `baked.code`,
/// collisions at a seam, or an error on a seam mismatch.
fn finish_world(
    args: &ComposeArgs,
    dir: &Path,
    seed: u64,
    composition: &Composition,
    baked: Baked,
    start: Instant,
) -> anyhow::Result<ExitCode> {
    let mut code = baked.code;
    let file = world_file(composition, seed);
    let check = check_world(args, dir, composition, &file)?;
    let world_path = dir.join("world.json");
    // The report first: world.json is written last, once everything else is.
    if let Some(path) = &args.report {
        write_report(path, args, &world_path, composition, baked.baked, &check)?;
    }
    if !args.work.quiet {
        let world = &check.world;
        eprintln!(
            "{} -> {}: {}×{} cells ({} tiles placed), {} distinct tiles ({} baked, {} {}){} in {:.1} s",
            args.map.display(),
            world_path.display(),
            world.columns(),
            world.rows(),
            world.cells().count(),
            composition.tiles.len(),
            baked.baked,
            composition.tiles.len() - baked.baked,
            if args.gather { "gathered" } else { "cached" },
            composition.wang.as_ref().map_or(String::new(), |(k, _)| format!(", a Wang set of K = {k}")),
            start.elapsed().as_secs_f64()
        );
        print_seams(&check.seams, check.two_r);
    }
    for m in check.mismatches.iter().take(crowdpatch::problem::PROBLEMS_PER_KIND) {
        eprintln!("mismatch: {m}");
    }
    if check.mismatches.len() > crowdpatch::problem::PROBLEMS_PER_KIND {
        eprintln!(
            "mismatch: and {} more (the first {} are listed; --report lists them all)",
            check.mismatches.len() - crowdpatch::problem::PROBLEMS_PER_KIND,
            crowdpatch::problem::PROBLEMS_PER_KIND
        );
    }
    if !check.mismatches.is_empty() {
        eprintln!(
            "error: {} seam mismatch(es) in the composed world; world.json was not written",
            check.mismatches.len()
        );
        code = EXIT_ERROR;
    } else {
        if !args.work.quiet {
            eprintln!("compatibility: every shared edge follows the mirror rule (same L, π and velocities)");
        }
        let text = serde_json::to_string_pretty(&file).context("serialising world.json")? + "\n";
        output::write(&world_path, text.as_bytes()).with_context(|| format!("writing {}", world_path.display()))?;
    }
    if !check.seams.collisions.is_empty() && code == EXIT_OK {
        code = EXIT_COLLISIONS;
    }
    Ok(ExitCode::from(code))
}

/// What compose reads (the map, its templates and pattern library) and
/// writes (the `selected` tiles' GLB and document; for the whole world,
/// world.json and the report).
fn output_plan(
    args: &ComposeArgs,
    dir: &Path,
    map: &crowdpatch::compose::Map,
    composition: &Composition,
    selected: &[usize],
    whole: bool,
) -> output::Plan {
    let mut plan = output::Plan::new();
    for input in &map.inputs {
        plan.input("MAP", input);
    }
    for (flag, file) in args.animation.input_files() {
        plan.input(flag, &file);
    }
    let tiles_dir = dir.join("tiles");
    plan.dir("-o", dir);
    plan.dir("-o", &tiles_dir);
    for &k in selected {
        let t = &composition.tiles[k];
        plan.output("-o", &tiles_dir.join(format!("{}.glb", t.key)));
        plan.output("-o", &tiles_dir.join(format!("{}.patch.json", t.key)));
    }
    if whole {
        if let Some(r) = &args.report {
            plan.output("--report", r);
        }
        plan.output("-o", &dir.join("world.json"));
    }
    plan
}

/// Names a tile in messages: the map, its key and its first cells.
fn tile_label(args: &ComposeArgs, tile: &crowdpatch::compose::ComposedTile) -> String {
    let cells: Vec<String> = tile.cells.iter().take(6).map(|[i, j]| format!("({i}, {j})")).collect();
    format!("{}: tile {} (cells {})", args.map.display(), tile.key, cells.join(", "))
}

/// Prints the problems of the composed tiles and says nothing was written;
/// returns whether there were none.
fn report_tile_problems(bad: usize) -> bool {
    if bad > 0 {
        eprintln!(
            "error: {bad} problem(s) in the composed patches; nothing was written (try another seed or pattern library)"
        );
    }
    bad == 0
}

/// Resolves every tile's document; on problems prints them all and returns
/// `None`.
fn resolve_tiles(args: &ComposeArgs, composition: &Composition) -> Option<Vec<crowdpatch::Patch>> {
    let base = args.map.parent().unwrap_or(Path::new("."));
    let mut patches = Vec::new();
    let mut bad = 0;
    for tile in &composition.tiles {
        match tile.document.resolve(None, base) {
            Ok(p) => patches.push(p),
            Err(problems) => {
                for p in problems {
                    eprintln!("{}: {p}", tile_label(args, tile));
                    bad += 1;
                }
            }
        }
    }
    report_tile_problems(bad).then_some(patches)
}

/// Checks every tile against what its bake with `options` refuses
/// ([`crowdpatch::bake::refusals`], as `bake` checks a patch), printing every
/// problem; returns whether there were none.
fn check_tiles(
    args: &ComposeArgs,
    composition: &Composition,
    patches: &[crowdpatch::Patch],
    options: &crowdpatch::BakeOptions,
) -> bool {
    let mut bad = 0;
    for (tile, p) in composition.tiles.iter().zip(patches) {
        for r in crowdpatch::bake::refusals(p, options, "--frame-rate") {
            eprintln!("{}: {r}", tile_label(args, tile));
            bad += 1;
        }
    }
    report_tile_problems(bad)
}

/// What baking the tiles did.
struct Baked {
    /// Tiles baked (the others were cached).
    baked: usize,
    /// Exit code so far: collisions remain in a tile, or success.
    code: u8,
}

/// What every bake job of one run shares.
struct BakeJob<'a> {
    dir: &'a Path,
    composition: &'a Composition,
    patches: &'a [crowdpatch::Patch],
    settings: &'a BakeSettings,
    stamp: &'a str,
}

/// Bakes the `selected` tiles whose GLB is missing or whose document or
/// settings changed ([`cached`]), in parallel with a progress bar. Each tile
/// writes its GLB, then its document, then its stamp, each atomically under
/// a unique temporary name: a tile is complete only once its stamp is
/// there, and shards on several machines writing into one directory never
/// clash. The inner `Err` is the exit code of a failed tile (already
/// reported).
fn bake_tiles(args: &ComposeArgs, job: &BakeJob<'_>, selected: &[usize]) -> anyhow::Result<Result<Baked, u8>> {
    let composition = job.composition;
    let tiles_dir = job.dir.join("tiles");
    let (options, glb_options) = (&job.settings.options, &job.settings.glb);
    let to_bake: Vec<usize> = selected
        .iter()
        .copied()
        .filter(|&k| args.force || cached(args, &tiles_dir, &composition.tiles[k], job.stamp).is_err())
        .collect();
    let bar = work::progress_bar(to_bake.len(), "tiles", args.work.quiet);
    let workers = args.work.workers()?;
    let results: Vec<anyhow::Result<bool>> = workers.map(&to_bake, &bar, |&k| {
        let tile = &composition.tiles[k];
        let mut observer = Progress { bar: &bar, name: tile.key.clone() };
        let bake = crowdpatch::bake_with(&job.patches[k], options, &mut observer)?;
        let glb = crowdpatch_gltf::write_glb(&bake.baked(), Some(&bake.metrics.to_json()), glb_options)
            .with_context(|| format!("writing the GLB of tile {}", tile.key))?;
        let glb_path = tiles_dir.join(format!("{}.glb", tile.key));
        output::write(&glb_path, &glb).with_context(|| format!("writing {}", glb_path.display()))?;
        let doc_path = tiles_dir.join(format!("{}.patch.json", tile.key));
        output::write(&doc_path, canonical_text(&tile.document).as_bytes())
            .with_context(|| format!("writing {}", doc_path.display()))?;
        let stamp_path = tiles_dir.join(format!("{}.bake.txt", tile.key));
        let stamp = format!("{}glb fnv {}\n", job.stamp, crate::shard::bytes_hash(&glb));
        output::write(&stamp_path, stamp.as_bytes()).with_context(|| format!("writing {}", stamp_path.display()))?;
        Ok(bake.converged())
    });
    bar.finish_and_clear();
    let mut code = EXIT_OK;
    for (&k, r) in to_bake.iter().zip(&results) {
        match r {
            Ok(true) => {}
            Ok(false) => {
                eprintln!(
                    "tile {}: COLLISIONS REMAIN after the bake (cells {:?})",
                    composition.tiles[k].key, composition.tiles[k].cells
                );
                code = EXIT_COLLISIONS;
            }
            Err(e) => {
                eprintln!("error: tile {}: {e:#}", composition.tiles[k].key);
                return Ok(Err(EXIT_ERROR));
            }
        }
    }
    Ok(Ok(Baked { baked: to_bake.len(), code }))
}

/// The world as a game loads it, and what its seams look like.
struct WorldCheck {
    world: crowdpatch_runtime::World,
    mismatches: Vec<crowdpatch_runtime::Mismatch>,
    seams: crowdpatch_runtime::SeamReport,
    two_r: f64,
}

/// Loads the written tiles with the runtime and checks the world: the mirror
/// rule on every shared edge, and the seam metrics.
///
/// A progress bar follows its three stages (loading the tiles, the mirror
/// rule, the seam metrics over every cell) with an ETA. Cost: linear in the
/// tiles' size and in the world's cells ([`seam_metrics_with`]).
fn check_world(
    args: &ComposeArgs,
    dir: &Path,
    composition: &Composition,
    file: &WorldFile,
) -> anyhow::Result<WorldCheck> {
    let bar = work::stage_bar(args.work.quiet);
    bar.set_message("checking the world: 1/3 loading the tiles");
    bar.set_length(file.tiles.len() as u64);
    let mut tiles = Vec::with_capacity(file.tiles.len());
    for (k, t) in file.tiles.iter().enumerate() {
        let path = dir.join(&t.glb);
        tiles.push(Tile::load(&path).with_context(|| format!("loading the composed tile {} back", path.display()))?);
        bar.set_position(k as u64 + 1);
    }
    let extras: Vec<_> = tiles.iter().map(|t| t.extras()).collect();
    let world = file.world();
    let wang = composition.wang.is_some();
    bar.set_message("checking the world: 2/3 the mirror rule on every shared edge");
    let mismatches: Vec<_> = world
        .check(&extras)
        .into_iter()
        // A Wang window continues past its border.
        .filter(|m| !(wang && m.neighbour.is_none() && matches!(m.problem, SeamProblem::OpenSide { .. })))
        .collect();
    let refs: Vec<_> = tiles.iter().collect();
    bar.set_message("checking the world: 3/3 seam metrics (crossings, then clearances) over every cell");
    bar.reset_eta();
    let seams = seam_metrics_with(&world, &refs, &mut |done, total| {
        if done % 64 == 0 || done == total {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        }
    });
    bar.finish_and_clear();
    let two_r = tiles.first().map_or(0.0, |t| 2.0 * t.agent_radius());
    Ok(WorldCheck { world, mismatches, seams, two_r })
}

fn print_seams(seams: &crowdpatch_runtime::SeamReport, two_r: f64) {
    eprintln!(
        "seams: {} shared edges, {} crossings, max position error {:.2e} m, max time error {:.2e} s, max velocity jump {:.2e} m/s, min clearance {} (2r = {two_r} m), {} seam collision(s), {} walking group(s) crossing, {} parted",
        seams.edges,
        seams.crossings.len(),
        seams.max_position_error,
        seams.max_time_error,
        seams.max_velocity_jump,
        seams.min_clearance.map_or("-".into(), |c| format!("{c:.3} m")),
        seams.collisions.len(),
        seams.group_crossings,
        seams.groups_parted
    );
}

fn write_report(
    path: &Path,
    args: &ComposeArgs,
    world_path: &Path,
    composition: &Composition,
    baked: usize,
    check: &WorldCheck,
) -> anyhow::Result<()> {
    let seams = &check.seams;
    let json = serde_json::json!({
        "map": args.map.display().to_string(),
        "world": world_path.display().to_string(),
        "tiles": composition.tiles.len(),
        "baked": baked,
        "mismatches": check.mismatches.iter().map(|m| m.to_string()).collect::<Vec<_>>(),
        "seams": {
            "edges": seams.edges,
            "crossings": seams.crossings.len(),
            "unmatched": seams.unmatched,
            "max_position_error": seams.max_position_error,
            "max_time_error": seams.max_time_error,
            "max_velocity_jump": seams.max_velocity_jump,
            "min_clearance": seams.min_clearance,
            "collisions": seams.collisions.len(),
            "group_crossings": seams.group_crossings,
            "groups_parted": seams.groups_parted,
        },
    });
    let text = serde_json::to_string_pretty(&json).context("serialising the report")? + "\n";
    output::write(path, text.as_bytes()).with_context(|| format!("writing {}", path.display()))
}

/// The `world.json` of a composition.
fn world_file(c: &Composition, seed: u64) -> WorldFile {
    let tiles =
        c.tiles.iter().map(|t| TileEntry { name: t.key.clone(), glb: format!("tiles/{}.glb", t.key) }).collect();
    let wang = c.wang.as_ref().map(|(k, list)| WangFile {
        k: *k,
        seed,
        tiles: list.iter().map(|&(colors, tile)| WangTileEntry { colors, tile }).collect(),
    });
    WorldFile::from_world(&c.world, tiles, wang)
}
