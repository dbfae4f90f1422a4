//! `crowdpatch bench --protocol growth --out DIR`: how the cost of a bake
//! grows with the patch (n = 10…400 entry/exit pairs, L = 16, 32, 64 m) and
//! the cost of a compose with the map (10² … 200² street cells).
//!
//! Each measurement runs the real command (`crowdpatch bake …`, `crowdpatch
//! compose …`) in a child process, one at a time, and reads its wall time
//! and its peak resident memory (`VmHWM` of `/proc/self/status`, which the
//! child writes at exit when [`PEAK_MEMORY_ENV`] names a file). The
//! least-squares slope of log(time) against log(size) is the growth
//! exponent: 1 is linear.
//!
//! Writes `DIR/growth.csv`, `DIR/growth.md` (the tables and slopes, as the
//! docs/benchmarks.md "Growth" shows them) and `DIR/growth.png` (log–log plots).

use crate::exit::{EXIT_ERROR, EXIT_OK};
use crate::output;
use anyhow::{Context, bail};
use crowdpatch_png::{LegendPosition, ScatterChart, ScatterPanel, Series, render_scatter};
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

/// When set, the command writes its peak resident memory `[KiB]` (VmHWM)
/// into the file it names as it exits (for `bench --protocol growth`).
pub const PEAK_MEMORY_ENV: &str = "CROWDPATCH_PEAK_MEMORY_FILE";

/// Writes the process's peak memory where [`PEAK_MEMORY_ENV`] says, if set.
pub fn report_peak_memory() {
    if let Some(file) = std::env::var_os(PEAK_MEMORY_ENV)
        && let Some(kib) = peak_kib()
    {
        let _ = std::fs::write(file, format!("{kib}\n"));
    }
}

/// `VmHWM` of this process `[KiB]`.
fn peak_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The sizes measured.
#[derive(Debug, Clone)]
pub struct Sizes {
    /// `(L [m], pairs)` of the bakes.
    pub bakes: Vec<(f64, usize)>,
    /// Cells per map side of the composes.
    pub maps: Vec<usize>,
}

impl Sizes {
    /// The full protocol: n = 10…100 pairs at L = 16 m, 10…200 at 32 m,
    /// 10…400 at 64 m (about one pair per 0.64 m of side at most: the
    /// separated variant fills a side of 16 m with about 60 points); maps of
    /// 10² … 200² cells.
    pub fn full() -> Sizes {
        let ns = [10, 25, 50, 100, 200, 400];
        let mut bakes = Vec::new();
        for (l, max) in [(16.0, 100), (32.0, 200), (64.0, 400)] {
            bakes.extend(ns.iter().filter(|&&n| n <= max).map(|&n| (l, n)));
        }
        Sizes { bakes, maps: vec![10, 20, 40, 80, 140, 200] }
    }

    /// A smoke run (CI): small sizes only.
    pub fn quick() -> Sizes {
        Sizes { bakes: vec![(16.0, 5), (16.0, 10), (32.0, 10)], maps: vec![4, 8] }
    }
}

/// One measurement.
#[derive(Debug, Clone)]
struct Row {
    /// `bake` or `compose`.
    what: &'static str,
    /// Patch side (bakes) `[m]`.
    size: f64,
    /// Entry/exit pairs (bakes) or cells (composes).
    x: usize,
    /// Wall time `[s]`.
    seconds: f64,
    /// Peak resident memory `[MiB]`.
    peak_mib: f64,
    /// Exit code of the command.
    code: i32,
}

/// Runs the growth protocol; `animation` is passed to every bake
/// (`skeletal` or `none`).
pub fn run(out: &Path, sizes: &Sizes, animation: &str, quiet: bool) -> anyhow::Result<ExitCode> {
    let mut plan = output::Plan::new();
    plan.dir("--out", out);
    for name in ["growth.csv", "growth.md", "growth.png"] {
        plan.output("--out", &out.join(name));
    }
    if output::refuse(&plan.check(), "nothing was run") {
        return Ok(ExitCode::from(EXIT_ERROR));
    }
    plan.create_dirs()?;
    // The documents, maps and outputs measured live in the system's
    // temporary directory, never beside the results.
    let work = tempfile::Builder::new().prefix("crowdpatch-growth-").tempdir().context("a working directory")?;
    let exe = std::env::current_exe().context("finding the crowdpatch executable")?;
    let mut rows = Vec::new();
    let say = |s: String| {
        if !quiet {
            eprintln!("{s}");
        }
    };
    for &(l, n) in &sizes.bakes {
        let doc = crowdpatch::bench::growth_patch(n, l, 0);
        let file = work.path().join(format!("L{l}-n{n}.patch.json"));
        std::fs::write(&file, doc.to_json()).with_context(|| format!("writing {}", file.display()))?;
        let glb = work.path().join("out.glb");
        let args: Vec<String> = vec![
            "bake".into(),
            file.display().to_string(),
            "-o".into(),
            glb.display().to_string(),
            "--quiet".into(),
            "--jobs".into(),
            "1".into(),
            "--animation".into(),
            animation.into(),
        ];
        let row = measure(&exe, &args, work.path(), "bake", l, n)?;
        say(format!("bake L = {l} m, {n} pairs: {:.2} s, {:.0} MiB (exit {})", row.seconds, row.peak_mib, row.code));
        rows.push(row);
    }
    for &cells in &sizes.maps {
        let dir = work.path().join(format!("map{cells}"));
        std::fs::create_dir_all(dir.join("patterns"))?;
        let (map, library) = crowdpatch::bench::growth_map(cells, 14);
        for (name, p) in &library {
            crowdpatch::document::save_pattern(p, &dir.join("patterns").join(name))?;
        }
        let map_file = dir.join("streets.map.json");
        std::fs::write(&map_file, map)?;
        let args: Vec<String> = vec![
            "compose".into(),
            map_file.display().to_string(),
            "-o".into(),
            dir.join("world").display().to_string(),
            "--quiet".into(),
            "--jobs".into(),
            "1".into(),
        ];
        let row = measure(&exe, &args, &dir, "compose", 16.0, cells * cells)?;
        say(format!(
            "compose {cells}×{cells} cells: {:.2} s, {:.0} MiB (exit {})",
            row.seconds, row.peak_mib, row.code
        ));
        rows.push(row);
    }
    write_outputs(out, &rows, animation)?;
    if !quiet {
        print!("{}", markdown(&rows, animation));
    }
    let failed = rows.iter().filter(|r| r.code == 2 || r.code < 0).count();
    if failed > 0 {
        bail!("{failed} measurement(s) failed (exit 2): see above");
    }
    Ok(ExitCode::from(EXIT_OK))
}

/// Runs `exe args` in `dir` and measures it.
fn measure(exe: &Path, args: &[String], dir: &Path, what: &'static str, size: f64, x: usize) -> anyhow::Result<Row> {
    let peak_file = dir.join("peak.txt");
    let _ = std::fs::remove_file(&peak_file);
    let start = Instant::now();
    let status = Command::new(exe)
        .args(args)
        .env(PEAK_MEMORY_ENV, &peak_file)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .status()
        .with_context(|| format!("running {} {}", exe.display(), args.join(" ")))?;
    let seconds = start.elapsed().as_secs_f64();
    let peak_kib: f64 =
        std::fs::read_to_string(&peak_file).ok().and_then(|t| t.trim().parse().ok()).unwrap_or(f64::NAN);
    Ok(Row { what, size, x, seconds, peak_mib: peak_kib / 1024.0, code: status.code().unwrap_or(-1) })
}

/// Least-squares slope of ln y against ln x over `points` (`None` with
/// fewer than two distinct x).
pub fn log_log_slope(points: &[[f64; 2]]) -> Option<f64> {
    let p: Vec<[f64; 2]> = points.iter().filter(|q| q[0] > 0.0 && q[1] > 0.0).map(|q| [q[0].ln(), q[1].ln()]).collect();
    let n = p.len() as f64;
    if p.len() < 2 {
        return None;
    }
    let (mx, my) = (p.iter().map(|q| q[0]).sum::<f64>() / n, p.iter().map(|q| q[1]).sum::<f64>() / n);
    let sxx: f64 = p.iter().map(|q| (q[0] - mx).powi(2)).sum();
    let sxy: f64 = p.iter().map(|q| (q[0] - mx) * (q[1] - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

/// The bake series: one per patch side L.
fn bake_series(rows: &[Row]) -> Vec<(f64, Vec<&Row>)> {
    let mut sizes: Vec<f64> = rows.iter().filter(|r| r.what == "bake").map(|r| r.size).collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    sizes.iter().map(|&l| (l, rows.iter().filter(|r| r.what == "bake" && r.size == l).collect())).collect()
}

fn fmt_slope(s: Option<f64>) -> String {
    s.map_or("–".into(), |s| format!("{s:.2}"))
}

/// The tables and slopes in Markdown.
fn markdown(rows: &[Row], animation: &str) -> String {
    let mut out = format!(
        "Bake (`crowdpatch bake --animation {animation} --jobs 1`) against entry/exit pairs n, per patch side L:\n\n\
         | L [m] | n | time [s] | peak memory [MiB] | exit |\n|---|---|---|---|---|\n"
    );
    for (_, series) in bake_series(rows) {
        for r in series {
            out.push_str(&format!("| {} | {} | {:.2} | {:.0} | {} |\n", r.size, r.x, r.seconds, r.peak_mib, r.code));
        }
    }
    out.push_str("\n| L [m] | slope of time against n | slope of memory against n |\n|---|---|---|\n");
    for (l, series) in bake_series(rows) {
        let t: Vec<[f64; 2]> = series.iter().map(|r| [r.x as f64, r.seconds]).collect();
        let m: Vec<[f64; 2]> = series.iter().map(|r| [r.x as f64, r.peak_mib]).collect();
        out.push_str(&format!("| {l} | {} | {} |\n", fmt_slope(log_log_slope(&t)), fmt_slope(log_log_slope(&m))));
    }
    let maps: Vec<&Row> = rows.iter().filter(|r| r.what == "compose").collect();
    if !maps.is_empty() {
        out.push_str(
            "\nCompose (`crowdpatch compose --jobs 1`) of an all-street map against its cells:\n\n\
             | cells | time [s] | peak memory [MiB] | exit |\n|---|---|---|---|\n",
        );
        for r in &maps {
            let side = (r.x as f64).sqrt().round();
            out.push_str(&format!("| {side}² = {} | {:.2} | {:.0} | {} |\n", r.x, r.seconds, r.peak_mib, r.code));
        }
        let t: Vec<[f64; 2]> = maps.iter().map(|r| [r.x as f64, r.seconds]).collect();
        let m: Vec<[f64; 2]> = maps.iter().map(|r| [r.x as f64, r.peak_mib]).collect();
        // The largest maps alone: fixed costs (starting, baking the few
        // distinct tiles) weigh on the small ones.
        let big: Vec<[f64; 2]> = t.iter().copied().filter(|p| p[0] >= 1600.0).collect();
        out.push_str(&format!(
            "\nSlope of compose time against cells: {} (maps of 40² cells and more: {}); of memory: {}.\n",
            fmt_slope(log_log_slope(&t)),
            fmt_slope(log_log_slope(&big)),
            fmt_slope(log_log_slope(&m))
        ));
    }
    out
}

const COLOURS: [[u8; 3]; 4] = [[31, 119, 180], [230, 120, 20], [44, 160, 44], [148, 103, 189]];

fn write_outputs(out: &Path, rows: &[Row], animation: &str) -> anyhow::Result<()> {
    let mut csv = String::from("what,size_m,x,seconds,peak_mib,exit\n");
    for r in rows {
        csv.push_str(&format!("{},{},{},{:.4},{:.1},{}\n", r.what, r.size, r.x, r.seconds, r.peak_mib, r.code));
    }
    let path = out.join("growth.csv");
    output::write(&path, csv.as_bytes()).with_context(|| format!("writing {}", path.display()))?;
    let path = out.join("growth.md");
    output::write(&path, markdown(rows, animation).as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;

    let bake = |f: &dyn Fn(&Row) -> f64| -> Vec<Series> {
        bake_series(rows)
            .iter()
            .enumerate()
            .map(|(k, (l, series))| Series {
                name: format!("L = {l} m"),
                colour: COLOURS[k % COLOURS.len()],
                points: series.iter().map(|r| [r.x as f64, f(r)]).collect(),
            })
            .collect()
    };
    let compose = |f: &dyn Fn(&Row) -> f64| -> Vec<Series> {
        vec![Series {
            name: "all-street map".into(),
            colour: COLOURS[3],
            points: rows.iter().filter(|r| r.what == "compose").map(|r| [r.x as f64, f(r)]).collect(),
        }]
    };
    let panel = |title: &str, x: &str, y: &str, series: Vec<Series>| ScatterPanel {
        title: title.into(),
        x_label: x.into(),
        y_label: y.into(),
        x_log: true,
        y_log: true,
        series,
        legend: LegendPosition::TopLeft,
    };
    let chart = ScatterChart {
        panels: vec![
            panel("(a) bake time", "entry/exit pairs n", "time [s]", bake(&|r| r.seconds)),
            panel("(b) bake peak memory", "entry/exit pairs n", "peak memory [MiB]", bake(&|r| r.peak_mib)),
            panel("(c) compose time", "map cells", "time [s]", compose(&|r| r.seconds)),
            panel("(d) compose peak memory", "map cells", "peak memory [MiB]", compose(&|r| r.peak_mib)),
        ],
        width_px: 2000,
        height_px: 560,
        point_radius_px: 5.0,
        point_opacity: 0.9,
    };
    let png = render_scatter(&chart).context("drawing growth.png")?;
    let path = out.join("growth.png");
    output::write(&path, &png).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slopes_of_power_laws() {
        let line: Vec<[f64; 2]> = [1.0, 10.0, 100.0].iter().map(|&x| [x, 3.0 * x]).collect();
        assert!((log_log_slope(&line).unwrap() - 1.0).abs() < 1e-12);
        let square: Vec<[f64; 2]> = [2.0, 4.0, 8.0].iter().map(|&x| [x, x * x]).collect();
        assert!((log_log_slope(&square).unwrap() - 2.0).abs() < 1e-12);
        assert_eq!(log_log_slope(&[[1.0, 1.0]]), None);
    }
}
