//! `crowdpatch bench --protocol opt --variant raw|separated --solver NAME… --out DIR`

use crate::exit::{EXIT_ERROR, EXIT_OK};
use crate::flags::{AnimationMode, WorkArgs};
use crate::output;
use crate::work;
use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use crowdpatch::bench::{CSV_HEADER, CaseResult, Protocol, Summary, Variant, run_case, summarise};
use crowdpatch::model::SolverKind;
use crowdpatch_png::{LegendPosition, ScatterChart, ScatterPanel, Series, render_scatter};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Benchmark protocol.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ProtocolArg {
    /// The seed paper's §4: L = 16 m, π = 10 s, r = 0.3 m, n = 1..50 pairs,
    /// 20 seeded runs each (1000 patches).
    Opt,
    /// Growth: bake time and peak memory against patch size (n = 10…400
    /// pairs, L = 16…64 m) and compose time and memory against map size
    /// (10²…200² cells), each command run in a child process; writes
    /// growth.csv, growth.md (tables and log–log slopes) and growth.png.
    Growth,
}

/// Arguments of `crowdpatch bench`.
#[derive(Debug, Args)]
#[command(mut_arg("animation", |a| a.help("Growth protocol: how the bakes animate their agents (bake's --animation)")))]
#[command(after_help = "Writes DIR/bench.csv (one row per patch and solver), DIR/summary.json (per solver: \
                        converged fraction, time percentiles, quality; each solver against paper) and \
                        DIR/figure6.png (iterations against points, time against iterations, time against \
                        points — the seed paper's Figure 6 — one colour per solver).\n\n\
                        Examples:\n  crowdpatch bench --protocol opt --variant separated --out bench/separated\n  \
                        crowdpatch bench --protocol opt --variant raw --solver paper default --out bench/raw\n  \
                        crowdpatch bench --solver default --n-max 20 --runs 5 --out /tmp/quick\n  \
                        crowdpatch bench --protocol growth --out bench/growth")]
pub struct BenchArgs {
    /// The protocol.
    #[arg(long, value_enum, default_value = "opt")]
    protocol: ProtocolArg,

    /// How boundary points are placed.
    #[arg(long, value_enum, default_value = "separated")]
    variant: Variant,

    /// Solvers to run side by side on the same patches (default: all).
    #[arg(long, value_enum, num_args = 1.., value_name = "NAME")]
    solver: Vec<SolverKind>,

    /// Output directory (created if missing).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,

    /// Seeded runs per number of pairs.
    #[arg(long, value_name = "N", default_value_t = 20)]
    runs: usize,

    /// Smallest number of entry/exit pairs.
    #[arg(long, value_name = "N", default_value_t = 1)]
    n_min: usize,

    /// Largest number of entry/exit pairs.
    #[arg(long, value_name = "N", default_value_t = 50)]
    n_max: usize,

    /// Iteration cap of `paper` (the seed paper stopped at 2000).
    #[arg(long, value_name = "N", default_value_t = 2000)]
    paper_cap: usize,

    #[command(flatten)]
    work: WorkArgs,

    /// Growth protocol: small sizes only (a smoke run).
    #[arg(long)]
    quick: bool,

    #[command(flatten)]
    animation: AnimationMode,
}

/// Runs `bench`.
pub fn run(args: BenchArgs) -> anyhow::Result<ExitCode> {
    if args.runs == 0 || args.n_min == 0 || args.n_min > args.n_max {
        bail!(
            "--runs {} --n-min {} --n-max {}: need at least one run and 1 ≤ n-min ≤ n-max",
            args.runs,
            args.n_min,
            args.n_max
        );
    }
    if let ProtocolArg::Growth = args.protocol {
        let sizes = if args.quick { crate::growth::Sizes::quick() } else { crate::growth::Sizes::full() };
        return crate::growth::run(&args.out, &sizes, &args.animation.animation.name(), args.work.quiet);
    }
    let variant = args.variant;
    let protocol = Protocol { n_min: args.n_min, n_max: args.n_max, runs: args.runs, ..Protocol::opt(variant) };
    let mut solvers: Vec<SolverKind> =
        if args.solver.is_empty() { SolverKind::ALL.to_vec() } else { args.solver.clone() };
    solvers.dedup();
    let mut plan = output::Plan::new();
    plan.dir("--out", &args.out);
    for name in ["bench.csv", "summary.json", "figure6.png"] {
        plan.output("--out", &args.out.join(name));
    }
    if output::refuse(&plan.check(), "nothing was run") {
        return Ok(ExitCode::from(EXIT_ERROR));
    }
    plan.create_dirs()?;

    // Tasks interleave the solvers so that they share the machine's load alike.
    let tasks: Vec<(usize, usize, SolverKind)> =
        protocol.cases().into_iter().flat_map(|(n, run)| solvers.iter().map(move |&s| (n, run, s))).collect();
    let bar = work::progress_bar(tasks.len(), "patches·solvers", args.work.quiet);
    let load_before = load_average();
    let workers = args.work.workers()?;
    let threads = workers.threads();
    let start = Instant::now();
    let mut rows: Vec<CaseResult> = workers.map(&tasks, &bar, |&(n, run, s)| {
        let cap = (s == SolverKind::Paper).then_some(args.paper_cap);
        bar.set_message(format!("n = {n}"));
        run_case(&protocol, n, run, s, cap)
    });
    let wall_s = start.elapsed().as_secs_f64();
    bar.finish_and_clear();
    let load_after = load_average();
    let order = |s: SolverKind| solvers.iter().position(|&x| x == s).unwrap_or(usize::MAX);
    rows.sort_by_key(|r| (order(r.solver), r.n, r.run));

    // bench.csv
    let mut csv = String::from(CSV_HEADER);
    csv.push('\n');
    for r in &rows {
        csv.push_str(&r.csv_row());
        csv.push('\n');
    }
    let csv_path = args.out.join("bench.csv");
    output::write(&csv_path, csv.as_bytes()).with_context(|| format!("writing {}", csv_path.display()))?;

    // summary.json
    let summary = summarise(&protocol, &solvers, &rows);
    let mut json = serde_json::to_value(&summary).context("serialising the summary")?;
    json["machine"] = serde_json::json!({
        "threads": threads,
        "wall_s": wall_s,
        "load_average_before": load_before,
        "load_average_after": load_after,
        "note": "wall times are shared-machine times; ratios between solvers of one run are meaningful",
    });
    let json_path = args.out.join("summary.json");
    let text = serde_json::to_string_pretty(&json).context("serialising the summary")? + "\n";
    output::write(&json_path, text.as_bytes()).with_context(|| format!("writing {}", json_path.display()))?;

    // figure6.png
    let png = render_scatter(&figure6(&protocol, &solvers, &rows)).context("drawing figure6.png")?;
    let png_path = args.out.join("figure6.png");
    output::write(&png_path, &png).with_context(|| format!("writing {}", png_path.display()))?;

    if !args.work.quiet {
        println!("{}", table(&summary));
        for v in &summary.solvers {
            println!("{}", v.per_n_text());
        }
        println!(
            "{} patches × {} solver(s) in {wall_s:.1} s on {threads} thread(s); load average {} → {}",
            protocol.cases().len(),
            solvers.len(),
            load_before.as_deref().unwrap_or("?"),
            load_after.as_deref().unwrap_or("?")
        );
        println!("wrote {}, {}, {}", csv_path.display(), json_path.display(), png_path.display());
    }
    Ok(ExitCode::from(EXIT_OK))
}

/// The 1-, 5- and 15-minute load averages, from `/proc/loadavg`.
fn load_average() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    Some(text.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
}

/// Colour of a solver in figures.
fn colour(s: SolverKind) -> [u8; 3] {
    match s {
        SolverKind::Paper => [230, 120, 20],
        SolverKind::Default => [31, 119, 180],
        SolverKind::Greedy => [148, 103, 189],
        SolverKind::SocialForces => [44, 160, 44],
    }
}

/// The seed paper's Figure 6 for this run: (a) iterations against boundary
/// points, (b) collision-removal time against iterations, (c) time against
/// boundary points; feasible patches only, one colour per solver.
pub fn figure6(protocol: &Protocol, solvers: &[SolverKind], rows: &[CaseResult]) -> ScatterChart {
    let series = |f: &dyn Fn(&CaseResult) -> [f64; 2]| -> Vec<Series> {
        solvers
            .iter()
            .map(|&s| Series {
                name: s.name().to_string(),
                colour: colour(s),
                points: rows.iter().filter(|r| r.solver == s && !r.infeasible).map(f).collect(),
            })
            .collect()
    };
    let points = |r: &CaseResult| 2.0 * r.n as f64;
    let variant = protocol.variant.name();
    ScatterChart {
        panels: vec![
            ScatterPanel {
                title: format!("(a) iterations ({variant})"),
                x_label: "boundary points (entries + exits)".into(),
                y_label: "iterations (social-forces: time steps)".into(),
                y_log: true,
                series: series(&|r| [points(r), r.iterations as f64]),
                // Growth curves leave the lower right empty.
                legend: LegendPosition::BottomRight,
                ..ScatterPanel::default()
            },
            ScatterPanel {
                title: "(b) time against iterations".into(),
                x_label: "iterations".into(),
                y_label: "collision removal [ms]".into(),
                x_log: true,
                y_log: true,
                series: series(&|r| [r.iterations as f64, r.solve_ms]),
                legend: LegendPosition::TopLeft,
            },
            ScatterPanel {
                title: "(c) time against points".into(),
                x_label: "boundary points (entries + exits)".into(),
                y_label: "collision removal [ms]".into(),
                y_log: true,
                series: series(&|r| [points(r), r.solve_ms]),
                legend: LegendPosition::BottomRight,
                ..ScatterPanel::default()
            },
        ],
        width_px: 1800,
        height_px: 600,
        point_radius_px: 2.5,
        point_opacity: 0.55,
    }
}

/// The summary as a plain-text table.
pub fn table(s: &Summary) -> String {
    let mut out = format!(
        "{:<14} {:>7} {:>9} {:>10} {:>6} {:>9} {:>9} {:>9} {:>10} {:>9} {:>8} {:>8}\n",
        "solver",
        "patches",
        "converged",
        "infeasible",
        "failed",
        "solve p50",
        "solve p90",
        "solve max",
        "bake total",
        "|u-ucft|",
        "turn p95",
        "it p50"
    );
    for v in &s.solvers {
        out.push_str(&format!(
            "{:<14} {:>7} {:>9} {:>10} {:>6} {:>7.2}ms {:>7.2}ms {:>7.1}ms {:>9.2}s {:>9.3} {:>8.3} {:>8.0}\n",
            v.solver.name(),
            v.patches,
            v.converged,
            v.infeasible,
            v.failed,
            v.solve_ms.p50,
            v.solve_ms.p90,
            v.solve_ms.max,
            v.bake_ms.total / 1000.0,
            v.quality.speed_comfort_deviation,
            v.quality.turn_rate_p95,
            v.iterations.p50
        ));
    }
    for c in &s.against_paper {
        out.push_str(&format!(
            "{} against paper: {:.1}× faster collision removal at n = {} (median), {:.1}× in total, {:.1}× whole bake at n = {}; \
             on the {} patches both converged: |u-ucft| {:.3} vs {:.3}, turn p95 {:.3} vs {:.3} rad/s\n",
            c.solver.name(),
            c.speedup_solve_at_n_max,
            s.protocol.n_max,
            c.speedup_solve_total,
            c.speedup_bake_at_n_max,
            s.protocol.n_max,
            c.quality.patches,
            c.quality.speed_comfort_deviation,
            c.paper_quality.speed_comfort_deviation,
            c.quality.turn_rate_p95,
            c.paper_quality.turn_rate_p95
        ));
    }
    out
}
