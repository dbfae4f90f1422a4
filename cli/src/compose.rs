//! `crowdpatch compose MAP -o DIR [--wang K]`

use crate::exit::{EXIT_COLLISIONS, EXIT_ERROR, EXIT_OK};
use crate::flags::{AnimationArg, AnimationArgs, BakeFlags, BakeSettings, CompressArg, ExportArgs, WorkArgs};
use crate::output;
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
                        --animation skeletal: capsules are the compact default for worlds.")]
// The one difference with `bake`'s flags: worlds play capsules by default.
#[command(mut_arg("animation", |a| a.default_value("none")))]
pub struct ComposeArgs {
    /// The map (*.map.json): a grid of cell kinds and the pattern library.
    #[arg(value_name = "MAP")]
    map: PathBuf,

    /// Output directory (created if missing): world.json and tiles/.
    #[arg(short, long, value_name = "DIR")]
    output: PathBuf,

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
    // Every output checked before any work; nothing created on refusal.
    let plan = output_plan(&args, &map, &composition);
    if output::refuse(&plan.check(), "nothing was composed") {
        return Ok(ExitCode::from(EXIT_ERROR));
    }
    plan.create_dirs()?;
    let baked = match bake_tiles(&args, &composition, &patches, &settings)? {
        Ok(n) => n,
        Err(code) => return Ok(ExitCode::from(code)),
    };
    let mut code = baked.code;
    let file = world_file(&composition, map.seed);
    let check = check_world(&args, &composition, &file)?;
    // The report first: world.json is written last, once everything else is.
    if let Some(path) = &args.report {
        write_report(path, &args, &args.output.join("world.json"), &composition, baked.baked, &check)?;
    }
    let world_path = args.output.join("world.json");
    if !quiet {
        let world = &check.world;
        eprintln!(
            "{} -> {}: {}×{} cells ({} tiles placed), {} distinct tiles ({} baked, {} cached){} in {:.1} s",
            args.map.display(),
            world_path.display(),
            world.columns(),
            world.rows(),
            world.cells().count(),
            composition.tiles.len(),
            baked.baked,
            composition.tiles.len() - baked.baked,
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
        if !quiet {
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
/// writes (world.json, every tile's GLB and document, the report).
fn output_plan(args: &ComposeArgs, map: &crowdpatch::compose::Map, composition: &Composition) -> output::Plan {
    let mut plan = output::Plan::new();
    for input in &map.inputs {
        plan.input("MAP", input);
    }
    for (flag, file) in args.animation.input_files() {
        plan.input(flag, &file);
    }
    let tiles_dir = args.output.join("tiles");
    plan.dir("-o", &args.output);
    plan.dir("-o", &tiles_dir);
    for t in &composition.tiles {
        plan.output("-o", &tiles_dir.join(format!("{}.glb", t.key)));
        plan.output("-o", &tiles_dir.join(format!("{}.patch.json", t.key)));
    }
    if let Some(r) = &args.report {
        plan.output("--report", r);
    }
    plan.output("-o", &args.output.join("world.json"));
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

/// Bakes the tiles whose GLB is missing or whose document changed, in
/// parallel with a progress bar. The inner `Err` is the exit code of a
/// failed tile (already reported).
fn bake_tiles(
    args: &ComposeArgs,
    composition: &Composition,
    patches: &[crowdpatch::Patch],
    settings: &BakeSettings,
) -> anyhow::Result<Result<Baked, u8>> {
    let tiles_dir = args.output.join("tiles");
    // What the GLBs were baked with: a tile baked otherwise is baked again.
    let stamp = format!("{}, {}\n", args.animation.stamp(), args.export.stamp());
    let (options, glb_options) = (&settings.options, &settings.glb);
    let to_bake: Vec<usize> = (0..composition.tiles.len())
        .filter(|&k| {
            let t = &composition.tiles[k];
            args.force
                || std::fs::read_to_string(tiles_dir.join(format!("{}.bake.txt", t.key))).map_or(
                    args.animation.animation() != AnimationArg::None
                        || args.export.compress != CompressArg::None
                        || !args.export.keys.is_default(),
                    |s| s != stamp,
                )
                || !tiles_dir.join(format!("{}.glb", t.key)).is_file()
                || std::fs::read_to_string(tiles_dir.join(format!("{}.patch.json", t.key)))
                    .is_ok_and(|text| text != canonical_text(&t.document))
                || !tiles_dir.join(format!("{}.patch.json", t.key)).is_file()
        })
        .collect();
    let bar = work::progress_bar(to_bake.len(), "tiles", args.work.quiet);
    let workers = args.work.workers()?;
    let results: Vec<anyhow::Result<bool>> = workers.map(&to_bake, &bar, |&k| {
        let tile = &composition.tiles[k];
        let mut observer = Progress { bar: &bar, name: tile.key.clone() };
        let bake = crowdpatch::bake_with(&patches[k], options, &mut observer)?;
        let glb = crowdpatch_gltf::write_glb(&bake.baked(), Some(&bake.metrics.to_json()), glb_options)
            .with_context(|| format!("writing the GLB of tile {}", tile.key))?;
        let glb_path = tiles_dir.join(format!("{}.glb", tile.key));
        output::write(&glb_path, &glb).with_context(|| format!("writing {}", glb_path.display()))?;
        let doc_path = tiles_dir.join(format!("{}.patch.json", tile.key));
        output::write(&doc_path, canonical_text(&tile.document).as_bytes())
            .with_context(|| format!("writing {}", doc_path.display()))?;
        let stamp_path = tiles_dir.join(format!("{}.bake.txt", tile.key));
        crowdpatch::io::write_atomic(&stamp_path, stamp.as_bytes())
            .with_context(|| format!("writing {}", stamp_path.display()))?;
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
fn check_world(args: &ComposeArgs, composition: &Composition, file: &WorldFile) -> anyhow::Result<WorldCheck> {
    let bar = work::stage_bar(args.work.quiet);
    bar.set_message("checking the world: 1/3 loading the tiles");
    bar.set_length(file.tiles.len() as u64);
    let mut tiles = Vec::with_capacity(file.tiles.len());
    for (k, t) in file.tiles.iter().enumerate() {
        let path = args.output.join(&t.glb);
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
        "seams: {} shared edges, {} crossings, max position error {:.2e} m, max time error {:.2e} s, max velocity jump {:.2e} m/s, min clearance {} (2r = {two_r} m), {} seam collision(s)",
        seams.edges,
        seams.crossings.len(),
        seams.max_position_error,
        seams.max_time_error,
        seams.max_velocity_jump,
        seams.min_clearance.map_or("-".into(), |c| format!("{c:.3} m")),
        seams.collisions.len()
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
