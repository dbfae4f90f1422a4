//! `crowdpatch character inspect FILE|builtin [--joint-map FILE]
//! [--animation-source auto|none|builtin|FILE] [--png FILE] [--json]`

use crate::flags::{BUILTIN_HEIGHT, WalkArgs, at_least, load_character};
use anyhow::Context;
use clap::{Args, Subcommand};
use crowdpatch::character::Character;
use crowdpatch::character::analysis::{ClipAnalysis, PlantThresholds, analyse};
use crowdpatch::character::choice::ClipChoice;
use crowdpatch::character::humanoid::{BONES, Found};
use crowdpatch::character::library::StepLibrary;
use crowdpatch::character::setup::Setup;
use crowdpatch_png::{Band, LineChart, LinePanel, LineSeries, render_lines};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

/// Character commands.
#[derive(Debug, Subcommand)]
pub enum CharacterCommand {
    /// Show how a character will walk: the humanoid joints found and why,
    /// each clip measured (walk, run, idle or other) and which are used or
    /// retargeted, the steps found (stance foot, duration, root
    /// displacement, landing, rotation), and a plot of the foot heights.
    /// Exits 2 when the character cannot walk.
    #[command(after_help = "Examples:\n  crowdpatch character inspect builtin --png builtin.png\n  \
                            crowdpatch character inspect RobotExpressive.glb --png robot.png --all-clips\n  \
                            crowdpatch character inspect tpose.glb --animation-source mixamo-walk.bvh")]
    Inspect(InspectArgs),
}

/// Arguments of `character inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// A glTF character (.glb or .gltf) with a skinned mesh, or `builtin`.
    #[arg(value_name = "FILE|builtin")]
    character: String,
    /// Write a PNG of each clip's foot heights with the detected plants
    /// (shaded) and step starts (vertical lines).
    #[arg(long, value_name = "FILE")]
    png: Option<PathBuf>,
    /// Scale an imported character to this height [m]; 0 keeps the file's
    /// scale.
    #[arg(long, value_name = "M", default_value_t = BUILTIN_HEIGHT, allow_negative_numbers = true,
          value_parser = at_least(0.0))]
    height: f64,
    /// Also show the steps of the clips not used (every clip of the file).
    #[arg(long)]
    all_clips: bool,
    /// Print the analysis as JSON instead of a table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    walk: WalkArgs,
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
            plan.input("CHARACTER", std::path::Path::new(&args.character));
        }
        plan.output("--png", png);
        if crate::output::refuse(&plan.check(), "nothing was inspected") {
            return Ok(ExitCode::from(crate::exit::EXIT_ERROR));
        }
    }
    let mut text = String::new();
    let setup = load_character(&args.character, args.height, &args.walk, 1.33)?;
    let character = &setup.character;
    let thresholds = PlantThresholds::default();
    let analyses: Vec<ClipAnalysis> =
        character.clips.iter().enumerate().map(|(k, c)| analyse(character, k, c, &thresholds)).collect();
    let library = StepLibrary::new(character);
    if args.json {
        let mapping: Vec<serde_json::Value> = character
            .humanoid
            .iter()
            .flat_map(|h| h.mapped())
            .map(|(b, j, f)| serde_json::json!({"bone": b, "joint": character.skeleton.joints[j].name, "found": f}))
            .collect();
        let json = serde_json::json!({
            "character": character.name,
            "joints": character.skeleton.len(),
            "height": character.height,
            "leg_length": character.leg_length(),
            "convention": character.humanoid.as_ref().map(|h| h.convention.clone()),
            "mapping": mapping,
            "notes": setup.notes,
            "clip_choices": setup.choices,
            "walks_from": setup.walks_from,
            "source_clip_choices": setup.source_choices,
            "clips": analyses,
            "can_walk": library.is_ok(),
        });
        w!(text, "{}", serde_json::to_string_pretty(&json)?);
    } else {
        describe(&mut text, &setup, &analyses, args.all_clips);
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
        let png = foot_height_chart(character, &analyses)?;
        crate::output::write(path, &png).with_context(|| format!("writing {}", path.display()))?;
        if !args.json {
            w!(text, "wrote {}", path.display());
        }
    }
    std::io::stdout().write_all(text.as_bytes()).context("writing to stdout")?;
    Ok(if library.is_ok() { ExitCode::SUCCESS } else { ExitCode::from(crate::exit::EXIT_ERROR) })
}

/// The mapping, the notes, the clip verdicts and the steps of the clips used.
fn describe(text: &mut String, setup: &Setup, analyses: &[ClipAnalysis], all: bool) {
    let character = &setup.character;
    let sk = &character.skeleton;
    w!(
        text,
        "{}: {} joints, height {:.2} m, leg length {:.3} m, hips {}, feet {} / {} (contact {} / {})",
        character.name,
        sk.len(),
        character.height,
        character.leg_length(),
        sk.joints[character.hips].name,
        sk.joints[character.feet[0].ankle].name,
        sk.joints[character.feet[1].ankle].name,
        sk.joints[character.feet[0].contact].name,
        sk.joints[character.feet[1].contact].name,
    );
    if let Some(h) = &character.humanoid {
        w!(text, "\nhumanoid mapping ({}):", h.convention);
        for b in BONES {
            let (joint, how) = match (h.get(b), h.found[b.index()]) {
                (Some(j), Some(f)) => (
                    sk.joints[j].name.as_str(),
                    match f {
                        Found::Name => "by name",
                        Found::Structure => "by structure (the rig's chains: mirror legs, spine to head)",
                        Found::JointMap => "from --joint-map",
                        Found::Vrm => "from the VRM extension",
                    },
                ),
                _ => ("—", "not found"),
            };
            w!(text, "  {:<14} {:<28} {how}", b.name(), joint);
        }
    }
    for n in &setup.notes {
        w!(text, "note: {n}");
    }
    let table = |text: &mut String, title: &str, choices: &[ClipChoice]| {
        if choices.is_empty() {
            return;
        }
        w!(text, "\n{title}:");
        w!(
            text,
            "  {:<28} {:>7} {:<6} {:>5} {:>6} {:>6} {:>6} {:>5} {:<4}",
            "clip",
            "dur [s]",
            "kind",
            "steps",
            "m/s",
            "step",
            "dbl %",
            "hips",
            "used"
        );
        for c in choices {
            w!(
                text,
                "  {:<28} {:>7.3} {:<6} {:>5} {:>6.2} {:>6.2} {:>6.0} {:>5.2} {:<4}  {}",
                truncate(&c.name, 28),
                c.duration,
                c.kind.name(),
                c.steps,
                c.speed,
                c.step_length,
                100.0 * c.double_support,
                c.hip_height,
                if c.used { "yes" } else { "no" },
                c.why
            );
        }
    };
    table(text, "clips of the file (measured)", &setup.choices);
    table(text, "clips of the animation source (measured)", &setup.source_choices);
    w!(text, "\nwalks from: {}", setup.walks_from);
    for a in analyses {
        let used = character.clips.iter().any(|c| c.name == a.name);
        if !used && !all {
            continue;
        }
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
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n { s.to_owned() } else { s.chars().take(n - 1).collect::<String>() + "…" }
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
