//! `crowdpatch pattern generate|library`: boundary conditions at human pace
//! (crowdpatch::generate).

use crate::exit::EXIT_OK;
use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use crowdpatch::generate::{Diagonal, GenerateParams, Speeds, document, lanes, library_pattern};
use crowdpatch::model::Side;
use std::path::PathBuf;
use std::process::ExitCode;

/// Pattern subcommands.
#[derive(Debug, Subcommand)]
pub enum PatternCommand {
    /// Generate a patch's four patterns from a density, flow directions and
    /// walking speeds: lanes whose walkers cross at their own speed, straight
    /// or round a corner, and that tile with themselves.
    Generate(GenerateArgs),
    /// Write a pattern library for `compose`: balanced lane patterns that
    /// are their own mirror, one per flow (walkers per period each way).
    Library(LibraryArgs),
    /// Add standing groups to a patch: people standing in twos and threes
    /// out of the walkers' way, as in real crowds (a fifth of them stand).
    Stand(StandArgs),
}

/// Arguments of `crowdpatch pattern stand`.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  crowdpatch pattern stand patches/plaza.patch.json --share 0.2 --seed 1 -o plaza.patch.json"
)]
pub struct StandArgs {
    /// The patch document to add standing groups to (it is not changed).
    #[arg(value_name = "PATCH")]
    patch: PathBuf,

    /// Output patch document (*.patch.json).
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,

    /// Share of the people present who stand, standing agents the patch has
    /// already included, in [0, 0.9].
    #[arg(long, value_name = "SHARE", default_value_t = crowdpatch::generate::STANDING_SHARE)]
    share: f64,

    /// Seed of the places and group sizes.
    #[arg(long, value_name = "N", default_value_t = 0)]
    seed: u64,
}

/// Walking speeds on the command line.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum SpeedsArg {
    /// The walking speeds of the real pedestrians of the shipped ETH/UCY
    /// reference (0.5–2 m/s).
    Reference,
    /// Free walking speeds, 1.34 ± 0.26 m/s (Weidmann 1993).
    Weidmann,
}

impl SpeedsArg {
    fn speeds(self, fixed: Option<f64>) -> Speeds {
        match (fixed, self) {
            (Some(u), _) => Speeds::Fixed(u),
            (None, SpeedsArg::Reference) => Speeds::Reference,
            (None, SpeedsArg::Weidmann) => Speeds::Weidmann,
        }
    }
}

/// Arguments of `crowdpatch pattern generate`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  crowdpatch pattern generate --density 0.1 -o busy.patch.json\n  \
                        crowdpatch pattern generate --density 0.05 --flow north=3 --flow south=3 --flow east=1 \
                        --template patches/plaza.patch.json -o plaza.patch.json\n  \
                        crowdpatch pattern generate --density 0.04 --size 12 --flow northeast=1 --flow east=1 \
                        -o corner.patch.json")]
pub struct GenerateArgs {
    /// Output patch document (*.patch.json).
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,

    /// Mean number of walkers per square metre [1/m²] (real crowds: 0.02
    /// sparse, 0.1 busy, 0.3 dense).
    #[arg(long, value_name = "RHO", default_value_t = 0.08)]
    density: f64,

    /// Share of the walkers heading towards a side, `north=2`, or turning a
    /// corner, heading `northeast`, `northwest`, `southwest` or `southeast`
    /// (`northeast=1`: walkers enter west and leave north, or enter south and
    /// leave east, a staircase across the tiles at 45°). Repeat; the shares
    /// are relative. Default: the same towards every side, no corners.
    #[arg(long = "flow", value_name = "HEADING=SHARE")]
    flows: Vec<String>,

    /// Where walking speeds come from.
    #[arg(long, value_enum, default_value = "reference")]
    speeds: SpeedsArg,

    /// One walking speed for every walker [m/s] (instead of --speeds).
    #[arg(long, value_name = "M/S")]
    speed: Option<f64>,

    /// A patch document whose size, period, radius, obstacles, endogenous
    /// agents and solver options the result keeps (its sides are replaced).
    #[arg(long, value_name = "FILE")]
    template: Option<PathBuf>,

    /// Side length L [m] (without --template).
    #[arg(long, value_name = "M", default_value_t = 16.0)]
    size: f64,

    /// Period [s] (without --template).
    #[arg(long, value_name = "S", default_value_t = 10.0)]
    period: f64,

    /// Seed of the draws.
    #[arg(long, value_name = "N", default_value_t = 0)]
    seed: u64,

    /// Also save a side as a pattern file (side-frame velocities), e.g.
    /// `south=patterns/avenue-in.pattern.json` (repeat).
    #[arg(long = "save-side", value_name = "SIDE=FILE")]
    save_sides: Vec<String>,

    /// Share of the people present who stand in groups out of the lanes, in
    /// [0, 0.9] (0: none; see `pattern stand`).
    #[arg(long, value_name = "SHARE", default_value_t = crowdpatch::generate::STANDING_SHARE)]
    standing: f64,

    /// Share of the straight lanes' walkers who walk in groups (pairs and
    /// triads abreast, entering and leaving together), in [0, 1) (0: all
    /// alone). Default: the share in the ETH/UCY recordings (data/groups.json).
    #[arg(long, value_name = "SHARE", default_value_t = crowdpatch::generate::walking_group_share())]
    walking_groups: f64,
}

/// Arguments of `crowdpatch pattern library`.
#[derive(Debug, Args)]
pub struct LibraryArgs {
    /// Output directory (created if missing); receives lanes-N.pattern.json.
    #[arg(short, long, value_name = "DIR")]
    output: PathBuf,

    /// Flows to write, comma-separated (`--counts 2,5`): walkers per period crossing each way.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1usize, 2, 3, 4, 6, 8])]
    counts: Vec<usize>,

    /// Where walking speeds come from.
    #[arg(long, value_enum, default_value = "reference")]
    speeds: SpeedsArg,

    /// Side length L [m].
    #[arg(long, value_name = "M", default_value_t = 16.0)]
    size: f64,

    /// Period [s].
    #[arg(long, value_name = "S", default_value_t = 10.0)]
    period: f64,

    /// Seed of the draws (lanes-N is drawn with seed + N, whatever else is asked).
    #[arg(long, value_name = "N", default_value_t = 0)]
    seed: u64,
}

/// Runs a pattern subcommand.
pub fn run(command: PatternCommand) -> anyhow::Result<ExitCode> {
    match command {
        PatternCommand::Generate(args) => generate(args),
        PatternCommand::Library(args) => library(args),
        PatternCommand::Stand(args) => stand(args),
    }
}

/// The patch document `doc` (written to `output`) resolved, or its
/// problems as an error.
fn resolved(
    doc: &crowdpatch::model::PatchDocument,
    output: &std::path::Path,
) -> anyhow::Result<crowdpatch::model::Patch> {
    let base = output.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    doc.resolve(Some(output), base).map_err(|problems| {
        anyhow::anyhow!(
            "the generated patch has problems (try another --seed or a lower --density):\n{}",
            problems.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("\n")
        )
    })
}

fn stand(args: StandArgs) -> anyhow::Result<ExitCode> {
    if same(&args.patch, &args.output) {
        bail!("-o {}: would overwrite the input", args.output.display());
    }
    let (mut doc, _) = crowdpatch::document::read_patch_document(&args.patch).map_err(|e| anyhow::anyhow!("{e}"))?;
    let base = args.patch.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    let patch = doc.resolve(Some(&args.patch), base).map_err(|problems| {
        anyhow::anyhow!(
            "{}: {}",
            args.patch.display(),
            problems.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("\n")
        )
    })?;
    let groups = crowdpatch::generate::standing_groups(&patch, args.share, args.seed)?;
    let added = groups.len();
    doc.endogenous.extend(groups);
    // Pattern references stay relative to the input's directory: the output
    // must sit beside it or the references must resolve from there too.
    resolved(&doc, &args.output)?;
    crowdpatch::io::write_atomic(&args.output, doc.to_json().as_bytes())
        .with_context(|| format!("writing {}", args.output.display()))?;
    eprintln!("{}: {added} people standing in groups added", args.output.display());
    Ok(ExitCode::from(EXIT_OK))
}

/// The straight and the corner flows of `--flow` values.
type Flows = (Vec<(Side, f64)>, Vec<(Diagonal, f64)>);

fn parse_flows(flows: &[String]) -> anyhow::Result<Flows> {
    if flows.is_empty() {
        return Ok((Side::ALL.iter().map(|&s| (s, 1.0)).collect(), Vec::new()));
    }
    let (mut straight, mut corners) = (Vec::new(), Vec::new());
    for f in flows {
        let (heading, share) = f.split_once('=').with_context(|| format!("--flow {f:?}: expected HEADING=SHARE"))?;
        let share: f64 = share
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)
            .with_context(|| format!("--flow {f:?}: the share {share:?} is not a number ≥ 0"))?;
        let heading = heading.trim();
        match (Side::from_name(heading), Diagonal::from_name(heading)) {
            (Some(side), _) => straight.push((side, share)),
            (None, Some(d)) => corners.push((d, share)),
            (None, None) => bail!(
                "--flow {f:?}: {heading:?} is not north, east, south, west, northeast, northwest, southwest or southeast"
            ),
        }
    }
    Ok((straight, corners))
}

fn generate(args: GenerateArgs) -> anyhow::Result<ExitCode> {
    if let Some(u) = args.speed
        && !(u.is_finite() && (0.3..=3.0).contains(&u))
    {
        bail!("--speed {u}: must be in [0.3, 3] m/s");
    }
    let template = match &args.template {
        Some(t) => {
            if same(t, &args.output) {
                bail!("-o {}: would overwrite the template", args.output.display());
            }
            Some(crowdpatch::document::read_patch_document(t).map_err(|e| anyhow::anyhow!("{e}"))?.0)
        }
        None => None,
    };
    let (size, period) = template.as_ref().map_or((args.size, args.period), |t| (t.size, t.period));
    let (flows, corners) = parse_flows(&args.flows)?;
    let params = GenerateParams {
        size,
        period,
        agent_radius: template.as_ref().and_then(|t| t.agent_radius).unwrap_or(crowdpatch::model::DEFAULT_AGENT_RADIUS),
        density: args.density,
        flows,
        corners,
        speeds: args.speeds.speeds(args.speed),
        seed: args.seed,
        obstacles: template.as_ref().map_or_else(Vec::new, |t| t.obstacles.clone()),
        walking_groups: args.walking_groups,
    };
    let lanes = lanes(&params)?;
    let mut doc = document(&lanes, &params, template.as_ref());
    if doc.name.is_none() {
        doc.name = Some(crowdpatch::document::file_stem(&args.output));
    }
    // The document must resolve: it is checked before anything is written.
    let mut patch = resolved(&doc, &args.output)?;
    if args.standing != 0.0 {
        let groups = crowdpatch::generate::standing_groups(&patch, args.standing, args.seed)?;
        if !groups.is_empty() {
            doc.endogenous.extend(groups);
            patch = resolved(&doc, &args.output)?;
        }
    }
    let mut sides = Vec::new();
    for spec in &args.save_sides {
        let (side, file) = spec.split_once('=').with_context(|| format!("--save-side {spec:?}: expected SIDE=FILE"))?;
        let side = Side::from_name(side.trim())
            .with_context(|| format!("--save-side {spec:?}: {side:?} is not north, east, south or west"))?;
        let file = PathBuf::from(file);
        if same(&file, &args.output) || args.template.as_ref().is_some_and(|t| same(t, &file)) {
            bail!("--save-side {spec:?}: would overwrite the output or the template");
        }
        let mut p = patch.sides[side].clone();
        p.name = Some(crowdpatch::document::file_stem(&file));
        sides.push((file, p));
    }
    crowdpatch::io::write_atomic(&args.output, doc.to_json().as_bytes())
        .with_context(|| format!("writing {}", args.output.display()))?;
    for (file, p) in &sides {
        crowdpatch::document::save_pattern(p, file).with_context(|| format!("writing {}", file.display()))?;
        eprintln!("{}: {} entries, {} exits", file.display(), p.entries.len(), p.exits.len());
    }
    let pairs = crowdpatch::matching::match_patch(&patch, patch.solver.matching);
    let (agents, _) = crowdpatch::initial_paths::initial_paths(&patch, &pairs);
    let mut floor = crowdpatch::realism::floor_speeds(&agents);
    let d = crowdpatch::realism::crowd::distribution(&mut floor);
    eprintln!(
        "{}: {} lanes, {} walkers per period, floor speed {} m/s",
        args.output.display(),
        lanes.len(),
        pairs.len(),
        crowdpatch::realism::describe(&d, 2)
    );
    Ok(ExitCode::from(EXIT_OK))
}

fn library(args: LibraryArgs) -> anyhow::Result<ExitCode> {
    if args.counts.is_empty() || args.counts.iter().any(|&n| n == 0 || n > 64) {
        bail!("--counts {:?}: every count must be in [1, 64]", args.counts);
    }
    let speeds = args.speeds.speeds(None);
    let mut written = Vec::new();
    for &n in &args.counts {
        let mut p = library_pattern(
            n,
            args.size,
            args.period,
            crowdpatch::model::DEFAULT_AGENT_RADIUS,
            speeds,
            args.seed + n as u64,
        )?;
        p.name = Some(format!("lanes-{n}"));
        let problems = crowdpatch::validate::validate_pattern(&p);
        if !problems.is_empty() {
            bail!("lanes-{n}: {}", problems.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("; "));
        }
        written.push((args.output.join(format!("lanes-{n}.pattern.json")), p));
    }
    std::fs::create_dir_all(&args.output).with_context(|| format!("creating {}", args.output.display()))?;
    for (path, p) in &written {
        crowdpatch::document::save_pattern(p, path).with_context(|| format!("writing {}", path.display()))?;
        eprintln!("{}: {} walkers per period each way", path.display(), p.entries.len());
    }
    Ok(ExitCode::from(EXIT_OK))
}

fn same(a: &std::path::Path, b: &std::path::Path) -> bool {
    matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}
