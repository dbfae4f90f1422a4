//! `crowdpatch character inspect FILE.glb|builtin [--png FILE]`

use anyhow::Context;
use clap::{Args, Subcommand};
use crowdpatch::character::analysis::{ClipAnalysis, PlantThresholds, analyse};
use crowdpatch::character::import::{ImportOptions, import_glb};
use crowdpatch::character::library::StepLibrary;
use crowdpatch::character::{Character, builtin};
use crowdpatch_png::{Band, LineChart, LinePanel, LineSeries, render_lines};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Character commands.
#[derive(Debug, Subcommand)]
pub enum CharacterCommand {
    /// Analyse a character's clips: foot plants, steps and their annotations
    /// (stance foot, duration, root displacement, landing, rotation), and
    /// draw the foot heights with the detected plants.
    #[command(after_help = "Examples:\n  crowdpatch character inspect builtin --png builtin.png\n  \
                            crowdpatch character inspect RobotExpressive.glb --png robot.png --all-clips")]
    Inspect(InspectArgs),
}

/// Arguments of `character inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// A glTF binary (.glb) with a skinned character and clips, or `builtin`.
    #[arg(value_name = "FILE.glb|builtin")]
    character: String,
    /// Write a PNG of each clip's foot heights with the detected plants
    /// (shaded) and step starts (vertical lines).
    #[arg(long, value_name = "FILE")]
    png: Option<PathBuf>,
    /// Scale an imported character to this height [m]; 0 keeps the file's
    /// scale.
    #[arg(long, value_name = "M", default_value_t = 1.75)]
    height: f64,
    /// Analyse every clip of the file, not only locomotion and idle clips.
    #[arg(long)]
    all_clips: bool,
    /// Print the analysis as JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// Loads `builtin` or a GLB file.
pub fn load(spec: &str, height: f64, all_clips: bool) -> anyhow::Result<Character> {
    if spec == "builtin" {
        return Ok(builtin::character());
    }
    if !(height.is_finite() && height >= 0.0) {
        anyhow::bail!("--character-height {height}: must be a height in metres, ≥ 0 (0 keeps the file's scale)");
    }
    let options = ImportOptions { height: (height > 0.0).then_some(height), all_clips };
    Ok(import_glb(Path::new(spec), &options)?)
}

/// Runs a character command.
pub fn run(command: CharacterCommand) -> anyhow::Result<ExitCode> {
    match command {
        CharacterCommand::Inspect(args) => inspect(args),
    }
}

/// `writeln!` into a `String` (which cannot fail).
macro_rules! w {
    ($($t:tt)*) => {{
        let _ = writeln!($($t)*);
    }};
}

fn inspect(args: InspectArgs) -> anyhow::Result<ExitCode> {
    if let Some(png) = &args.png {
        // The output checked before any work: writable, not the character.
        let mut plan = crate::output::Plan::new();
        if args.character != "builtin" {
            plan.input("CHARACTER", Path::new(&args.character));
        }
        plan.output("--png", png);
        if crate::output::refuse(&plan.check(), "nothing was inspected") {
            return Ok(ExitCode::from(crate::exit::EXIT_ERROR));
        }
    }
    let mut text = String::new();
    let character = load(&args.character, args.height, args.all_clips)?;
    let thresholds = PlantThresholds::default();
    let analyses: Vec<ClipAnalysis> =
        character.clips.iter().enumerate().map(|(k, c)| analyse(&character, k, c, &thresholds)).collect();
    let library = StepLibrary::new(&character);
    if args.json {
        let json = serde_json::json!({
            "character": character.name,
            "joints": character.skeleton.len(),
            "height": character.height,
            "clips": analyses,
        });
        w!(text, "{}", serde_json::to_string_pretty(&json)?);
    } else {
        let sk = &character.skeleton;
        w!(
            text,
            "{}: {} joints, height {:.2} m, hips {}, feet {} / {} (contact {} / {}), {} clips",
            character.name,
            sk.len(),
            character.height,
            sk.joints[character.hips].name,
            sk.joints[character.feet[0].ankle].name,
            sk.joints[character.feet[1].ankle].name,
            sk.joints[character.feet[0].contact].name,
            sk.joints[character.feet[1].contact].name,
            character.clips.len()
        );
        for a in &analyses {
            w!(
                text,
                "\n{} ({:.3} s{}): {} plants, {} steps; ground under the clip {:.2} m/s, {:.2} rad/s",
                a.name,
                a.duration,
                if character.clips.iter().any(|c| c.name == a.name && c.cyclic) { ", cyclic" } else { "" },
                a.plants.len(),
                a.steps.len(),
                a.ground_velocity[0].hypot(a.ground_velocity[1]),
                a.ground_velocity[2]
            );
            if !a.steps.is_empty() {
                w!(
                    text,
                    "  {:<6} {:>7} {:>7} {:>6} {:>5} {:>15} {:>15} {:>7} {:>6}",
                    "stance",
                    "start",
                    "end",
                    "dur",
                    "lift",
                    "root disp [m]",
                    "landing [m]",
                    "rot",
                    "m/s"
                );
            }
            for s in &a.steps {
                w!(
                    text,
                    "  {:<6} {:>7.3} {:>7.3} {:>6.3} {:>5.2} {:>7.3},{:>7.3} {:>7.3},{:>7.3} {:>7.3} {:>6.2}",
                    s.stance.name(),
                    s.start,
                    s.end,
                    s.duration,
                    s.lift,
                    s.root_displacement[0],
                    s.root_displacement[1],
                    s.landing[0],
                    s.landing[1],
                    s.rotation,
                    s.speed
                );
            }
        }
        match &library {
            Ok(lib) => {
                let (slow, fast) = lib.speed_range();
                let mirrored = lib.steps.iter().filter(|s| s.mirrored).count();
                w!(
                    text,
                    "\nstep library: {} steps ({} from mirrored clips), straight walking {:.2}–{:.2} m/s",
                    lib.steps.len(),
                    mirrored,
                    slow,
                    fast
                );
            }
            Err(e) => w!(text, "\nthis character cannot walk: {e}"),
        }
    }
    if let Some(path) = &args.png {
        let png = foot_height_chart(&character, &analyses)?;
        crate::output::write(path, &png).with_context(|| format!("writing {}", path.display()))?;
        if !args.json {
            w!(text, "wrote {}", path.display());
        }
    }
    std::io::stdout().write_all(text.as_bytes()).context("writing to stdout")?;
    Ok(ExitCode::SUCCESS)
}

const LEFT: [u8; 3] = [31, 119, 180];
const RIGHT: [u8; 3] = [230, 120, 20];

/// One panel per clip: contact-joint heights of both feet over the clip,
/// plants as shaded strips, step starts as vertical marks.
fn foot_height_chart(character: &Character, analyses: &[ClipAnalysis]) -> anyhow::Result<Vec<u8>> {
    let panels = analyses
        .iter()
        .map(|a| {
            let series = (0..2)
                .map(|f| LineSeries {
                    name: if f == 0 { "left foot".into() } else { "right foot".into() },
                    colour: if f == 0 { LEFT } else { RIGHT },
                    points: a.times.iter().zip(&a.heights[f]).map(|(&t, &h)| [t, h]).collect(),
                })
                .collect();
            let mut bands = Vec::new();
            for p in &a.plants {
                let (colour, strip) = if p.foot.index() == 0 { (LEFT, [0.0, 0.06]) } else { (RIGHT, [0.06, 0.12]) };
                // A plant wrapping round a cyclic clip is drawn in two parts.
                let d = a.duration;
                for (x0, x1) in [(p.start, p.end.min(d)), (0.0, p.end - d)] {
                    if x1 > x0 {
                        bands.push(Band { x: [x0, x1], colour, strip });
                    }
                }
            }
            LinePanel {
                title: format!("{} — {} steps", a.name, a.steps.len()),
                x_label: "clip time [s] (shaded: foot planted, left below right; lines: step starts)".into(),
                y_label: "contact joint height [m]".into(),
                series,
                bands,
                marks: a.steps.iter().map(|s| s.start).collect(),
                legend_bottom: false,
            }
        })
        .collect();
    let chart = LineChart {
        title: format!("{}: foot heights and detected plants", character.name),
        panels,
        columns: 2,
        ..LineChart::default()
    };
    Ok(render_lines(&chart)?)
}
