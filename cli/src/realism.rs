//! `crowdpatch realism FILE...`: the crowd statistics of trajectory files
//! (the ETH/UCY sets, or the `id,frame,x,y` CSV a bake writes with
//! `--trajectories`) next to the shipped reference of real pedestrians; and
//! `--write-reference`, which recomputes that reference from the sets, and
//! `--write-group-reference`, which recomputes the walking groups' reference
//! from the scenes with group annotations.

use crate::exit::{EXIT_ERROR, EXIT_OK};
use anyhow::Context;
use clap::Args;
use crowdpatch::metrics::CrowdStats;
use crowdpatch::realism::crowd::ks_distance;
use crowdpatch::realism::describe;
use crowdpatch::realism::groups::build_group_reference;
use crowdpatch::realism::reference::{Reference, build_reference, read_trajectories};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `crowdpatch realism`.
#[derive(Debug, Args)]
#[command(
    after_help = "Statistics, with the definitions of docs/design.md \"Realism\": speed and turn rate over each \
                        sampling interval, detour (path length over straight distance), nearest-neighbour \
                        distance; KS is the Kolmogorov–Smirnov distance of the speeds to the pooled real \
                        pedestrians.\n\nExamples:\n  crowdpatch bake patches/plaza.patch.json -o plaza.glb \
                        --trajectories plaza.txt --trajectory-rate 2.5\n  crowdpatch realism plaza.txt \
                        ../shared/data/pedestrians/*.txt\n  crowdpatch realism --write-reference \
                        data/pedestrians.json ../shared/data/pedestrians/*.txt\n  crowdpatch realism \
                        --write-group-reference data/groups.json ../shared/data/pedestrians/groups/*"
)]
pub struct RealismArgs {
    /// Trajectory files: ETH/UCY text (`frame id x y`), PedPy's text (a
    /// `# framerate` comment, then `id frame x y [z]`, as `bake
    /// --trajectories` writes), CSV (`id,frame,x,y`) or baked tiles (*.glb,
    /// sampled as a player shows them); with
    /// --write-group-reference, scene folders.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,

    /// Frame rate of CSV files [Hz] (ETH/UCY files are 25 fps video
    /// frames; PedPy's text gives its own).
    #[arg(long, value_name = "HZ", default_value_t = 25.0)]
    rate: f64,

    /// Sampling interval for baked tiles (*.glb) [s]: 0.4 compares with the
    /// ETH/UCY sets, 0.04 is what a player shows at 25 Hz.
    #[arg(long, value_name = "S", default_value_t = 0.4)]
    glb_interval: f64,

    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,

    /// Recompute the reference table from the given ETH/UCY files and write
    /// it to FILE (the library ships data/pedestrians.json).
    #[arg(long, value_name = "FILE")]
    write_reference: Option<PathBuf>,

    /// Recompute the walking groups' reference from the given scene folders
    /// (each with `obsmat.txt` and `groups.txt`, ETH/UCY group annotations)
    /// and write it to FILE (the library ships data/groups.json).
    #[arg(long, value_name = "FILE", conflicts_with = "write_reference")]
    write_group_reference: Option<PathBuf>,
}

/// Runs `realism`.
pub fn run(args: RealismArgs) -> anyhow::Result<ExitCode> {
    if !(args.rate.is_finite() && (0.1..=1000.0).contains(&args.rate)) {
        anyhow::bail!("--rate {}: must be in [0.1, 1000] Hz", args.rate);
    }
    if let Some(out) = &args.write_reference {
        if args.files.iter().any(|f| same_path(f, out)) {
            anyhow::bail!("--write-reference {}: would overwrite an input", out.display());
        }
        let files: Vec<&Path> = args.files.iter().map(PathBuf::as_path).collect();
        let reference = build_reference(&files)?;
        let text = serde_json::to_string_pretty(&reference).context("serialising the reference")? + "\n";
        crowdpatch::io::write_atomic(out, text.as_bytes()).with_context(|| format!("writing {}", out.display()))?;
        eprintln!("{}: {} sets, pooled {} walkers", out.display(), reference.sets.len(), reference.pooled.walkers);
        return Ok(ExitCode::from(EXIT_OK));
    }
    if let Some(out) = &args.write_group_reference {
        if args.files.iter().any(|f| same_path(f, out)) {
            anyhow::bail!("--write-group-reference {}: would overwrite an input", out.display());
        }
        let dirs: Vec<&Path> = args.files.iter().map(PathBuf::as_path).collect();
        let reference = build_group_reference(&dirs)?;
        let text = serde_json::to_string_pretty(&reference).context("serialising the group reference")? + "\n";
        crowdpatch::io::write_atomic(out, text.as_bytes()).with_context(|| format!("writing {}", out.display()))?;
        for s in &reference.scenes {
            eprintln!(
                "{}: {} walkers, {:.0} % in {} groups",
                s.name,
                s.stats.walkers,
                100.0 * s.stats.share_in_groups,
                s.stats.groups
            );
        }
        eprintln!("{}: {} scenes", out.display(), reference.scenes.len());
        return Ok(ExitCode::from(EXIT_OK));
    }
    let reference = Reference::shipped();
    let mut rows = Vec::new();
    let mut failed = false;
    for f in &args.files {
        let read = if f.extension().is_some_and(|e| e.eq_ignore_ascii_case("glb")) {
            glb_trajectories(f, args.glb_interval)
        } else {
            read_trajectories(f, args.rate).map_err(anyhow::Error::from)
        };
        match read {
            Ok(t) => {
                let samples = t.samples();
                let ks = ks_distance(&samples.speed, &reference.pooled.speed_quantiles).unwrap_or(1.0);
                let over = crowdpatch::realism::over_turn_bound(&samples.lateral_acceleration);
                let per_set = reference.speed_ks(&samples.speed);
                rows.push((f.display().to_string(), t.walkers, samples.summary(t.sample_interval), ks, over, per_set));
            }
            Err(e) => {
                eprintln!("error: {e:#}");
                failed = true;
            }
        }
    }
    rows.push((
        format!("reference: {}", reference.pooled.name),
        reference.pooled.walkers,
        reference.pooled.stats.clone(),
        0.0,
        share_above(&reference.pooled.lateral_acceleration_quantiles, crowdpatch::pace::TURN_ACCELERATION),
        Default::default(),
    ));
    let mut out = std::io::stdout().lock();
    if args.json {
        let json: Vec<_> = rows
            .iter()
            .map(|(f, n, s, ks, over, per_set)| {
                serde_json::json!({"file": f, "walkers": n, "stats": s, "speed_ks": ks, "speed_ks_sets": per_set,
                    "over_turn_bound": over})
            })
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&json)?)?;
    } else {
        for (f, n, s, ks, over, _) in &rows {
            writeln!(out, "{f}: {n} walkers, every {} s", s.sample_interval)?;
            print_stats(&mut out, s, *ks, *over)?;
        }
    }
    Ok(ExitCode::from(if failed { EXIT_ERROR } else { EXIT_OK }))
}

/// The walkers of a baked tile as a player shows them: each agent's path
/// over its interval as a track, and at every play time in one period the
/// visible instances, sampled every `dt` `[s]` with the runtime's
/// interpolation.
fn glb_trajectories(path: &Path, dt: f64) -> anyhow::Result<crowdpatch::realism::reference::Trajectories> {
    if !(dt.is_finite() && (0.001..=10.0).contains(&dt)) {
        anyhow::bail!("--glb-interval {dt}: must be in [0.001, 10] s");
    }
    let tile = crowdpatch_runtime::Tile::load(path).with_context(|| format!("loading {}", path.display()))?;
    let mut t = crowdpatch::realism::reference::Trajectories { sample_interval: dt, ..Default::default() };
    for (a, rec) in tile.extras().agents.iter().enumerate() {
        let [start, end] = rec.interval;
        let n = ((end - start) / dt + 1e-9).floor() as usize;
        let track: Vec<[f64; 2]> = (0..=n).filter_map(|k| tile.agent_position(a, start + k as f64 * dt)).collect();
        t.tracks.push(track);
        t.walkers += 1;
    }
    let pi = tile.period();
    let steps = (pi / dt).round().max(1.0) as usize;
    for k in 0..steps {
        let time = k as f64 * pi / steps as f64;
        let frame: Vec<[f64; 2]> = (0..tile.instance_count())
            .filter_map(|i| {
                let (p, _, visible, _) = tile.instance_pose(i, time);
                visible.then_some(p)
            })
            .collect();
        t.frames.push(frame);
    }
    Ok(t)
}

/// Share of a distribution above `x`, from its percentile table (to 1 %).
fn share_above(quantiles: &[f64], x: f64) -> f64 {
    let n = quantiles.len().saturating_sub(1).max(1);
    quantiles.iter().skip(1).filter(|&&q| q > x).count() as f64 / n as f64
}

fn print_stats(out: &mut impl Write, s: &CrowdStats, ks: f64, over: f64) -> std::io::Result<()> {
    writeln!(out, "  speed [m/s]       median (p5–p95, max) {}   KS to the reference {ks:.3}", describe(&s.speed, 2))?;
    writeln!(out, "  turn rate [rad/s] median (p5–p95, max) {}", describe(&s.turn_rate, 2))?;
    writeln!(
        out,
        "  ω·v [m/s²]        median (p5–p95, max) {}   above the turn bound ({} m/s²) {:.1} %",
        describe(&s.lateral_acceleration, 2),
        crowdpatch::pace::TURN_ACCELERATION,
        100.0 * over
    )?;
    writeln!(out, "  detour            median (p5–p95, max) {}", describe(&s.detour, 3))?;
    writeln!(out, "  nearest [m]       median (p5–p95, max) {}", describe(&s.nearest_neighbour, 2))
}

fn same_path(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}
