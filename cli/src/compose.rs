//! `crowdpatch compose MAP -o DIR [--wang K]`

use crate::exit::{EXIT_COLLISIONS, EXIT_ERROR, EXIT_OK};
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
                        A tile whose document is unchanged is not baked again.")]
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

    /// How the tiles' agents are animated: `none` (capsules, the compact
    /// default for worlds) or `skeletal` (skinned characters with footsteps,
    /// as `bake` does).
    #[arg(long, value_enum, default_value = "none")]
    animation: crate::bake::AnimationArg,

    /// Character of `--animation skeletal`: `builtin` or a skinned .glb.
    #[arg(long, value_name = "NAME|FILE.glb", default_value = "builtin")]
    character: String,

    /// How the tiles' binary data is stored (as `bake --compress`): `none`
    /// or `meshopt` (EXT_meshopt_compression; the runtime reads it with its
    /// `meshopt` feature).
    #[arg(long, value_enum, default_value = "none")]
    compress: crate::bake::CompressArg,

    #[command(flatten)]
    keys: crate::bake::KeyArgs,

    #[command(flatten)]
    walk: crate::character::WalkArgs,

    /// Write a JSON report: compatibility mismatches and seam metrics.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,

    /// Tiles baked at once, 1 to 256 (default: one per core).
    #[arg(short, long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    jobs: Option<u16>,

    /// Print nothing but errors.
    #[arg(short, long)]
    quiet: bool,
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

/// Runs `compose`: load the map, compose, resolve every tile's document (bad
/// input writes nothing), bake the tiles not cached, check the world as a
/// game would load it, then write `world.json` and the report.
pub fn run(args: ComposeArgs) -> anyhow::Result<ExitCode> {
    let start = Instant::now();
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
    // Every output checked before any work; nothing created on refusal.
    let plan = output_plan(&args, &map, &composition);
    if output::refuse(&plan.check(), "nothing was composed") {
        return Ok(ExitCode::from(EXIT_ERROR));
    }
    plan.create_dirs()?;
    let baked = match bake_tiles(&args, &composition, &patches)? {
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
    if !args.quiet {
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
        if !args.quiet {
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

/// Resolves every tile's document; on problems prints them all and returns
/// `None`.
fn resolve_tiles(args: &ComposeArgs, composition: &Composition) -> Option<Vec<crowdpatch::Patch>> {
    let base = args.map.parent().unwrap_or(Path::new("."));
    let mut patches = Vec::new();
    let mut bad = 0;
    for tile in &composition.tiles {
        let resolved = tile.document.resolve(None, base).and_then(|p| {
            let refused = crowdpatch::limits::check_bake(&p, None);
            if refused.is_empty() { Ok(p) } else { Err(refused) }
        });
        match resolved {
            Ok(p) => patches.push(p),
            Err(problems) => {
                let cells: Vec<String> = tile.cells.iter().take(6).map(|[i, j]| format!("({i}, {j})")).collect();
                for p in problems {
                    eprintln!("{}: tile {} (cells {}): {p}", args.map.display(), tile.key, cells.join(", "));
                    bad += 1;
                }
            }
        }
    }
    if bad > 0 {
        eprintln!(
            "error: {bad} problem(s) in the composed patches; nothing was written (try another seed or pattern library)"
        );
        return None;
    }
    Some(patches)
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
) -> anyhow::Result<Result<Baked, u8>> {
    let tiles_dir = args.output.join("tiles");
    // What the GLBs were baked with: a tile baked otherwise is baked again.
    let keys = if args.keys.is_default() { String::new() } else { format!(", keys {:?}", args.keys.tolerance()) };
    let stamp =
        format!("animation {:?}, character {}, compress {:?}{keys}\n", args.animation, args.character, args.compress);
    let options = match args.animation {
        crate::bake::AnimationArg::None => crowdpatch::BakeOptions::default(),
        crate::bake::AnimationArg::Skeletal => {
            let walk_speed =
                patches.iter().map(|p| p.header.comfort_speed).fold(crowdpatch::model::DEFAULT_COMFORT_SPEED, f64::max);
            let setup = crate::character::load(&args.character, 1.75, &args.walk, walk_speed)?;
            if !args.quiet {
                for n in &setup.notes {
                    eprintln!("{}: {n}", args.character);
                }
            }
            let sk = crowdpatch::animation::Skeletal::new(setup.character)
                .with_context(|| format!("--character {}", args.character))?;
            crowdpatch::BakeOptions { skeletal: Some(std::sync::Arc::new(sk)) }
        }
    };
    let glb_options = args.compress.glb_options(&args.keys);
    let to_bake: Vec<usize> = (0..composition.tiles.len())
        .filter(|&k| {
            let t = &composition.tiles[k];
            args.force
                || std::fs::read_to_string(tiles_dir.join(format!("{}.bake.txt", t.key))).map_or(
                    args.animation != crate::bake::AnimationArg::None
                        || args.compress != crate::bake::CompressArg::None
                        || !args.keys.is_default(),
                    |s| s != stamp,
                )
                || !tiles_dir.join(format!("{}.glb", t.key)).is_file()
                || std::fs::read_to_string(tiles_dir.join(format!("{}.patch.json", t.key)))
                    .is_ok_and(|text| text != canonical_text(&t.document))
                || !tiles_dir.join(format!("{}.patch.json", t.key)).is_file()
        })
        .collect();
    let bar = work::progress_bar(to_bake.len(), "tiles", args.quiet);
    let workers = work::Workers::new(args.jobs.map(usize::from))?;
    let results: Vec<anyhow::Result<bool>> = workers.map(&to_bake, &bar, |&k| {
        let tile = &composition.tiles[k];
        let mut observer = Progress { bar: &bar, name: tile.key.clone() };
        let bake = crowdpatch::bake_with(&patches[k], &options, &mut observer)?;
        let glb = crowdpatch_gltf::write_glb(&bake.baked(), Some(&bake.metrics.to_json()), &glb_options)
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
    let bar = work::stage_bar(args.quiet);
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
