//! A character as `crowdpatch character inspect` and the editor's
//! character window describe it: the joints found for the hips and feet,
//! the humanoid mapping and how each joint was found, the notes of
//! loading, each clip's verdict (measured: kind, steps, speed, whether it
//! is used and why) and where the walks come from. One text, so that the
//! command line and the GUI cannot disagree.

use super::choice::ClipChoice;
use super::humanoid::{BONES, Found};
use super::setup::Setup;
use std::fmt::Write as _;

/// `writeln!` into a `String` (which cannot fail).
macro_rules! w {
    ($($t:tt)*) => {{
        let _ = writeln!($($t)*);
    }};
}

impl Setup {
    /// The description of the loaded character, in lines of text (tables in
    /// fixed columns: show it in a monospace font). O(joints + clips).
    pub fn describe(&self) -> String {
        let mut out = String::new();
        let character = &self.character;
        let sk = &character.skeleton;
        w!(
            out,
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
            w!(out, "\nhumanoid mapping ({}):", h.convention);
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
                w!(out, "  {:<14} {:<28} {how}", b.name(), joint);
            }
        }
        for n in &self.notes {
            w!(out, "note: {n}");
        }
        let table = |out: &mut String, title: &str, choices: &[ClipChoice]| {
            if choices.is_empty() {
                return;
            }
            w!(out, "\n{title}:");
            w!(
                out,
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
                    out,
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
        table(&mut out, "clips of the file (measured)", &self.choices);
        table(&mut out, "clips of the animation source (measured)", &self.source_choices);
        w!(out, "\nwalks from: {}", self.walks_from);
        out
    }
}

/// `s` cut to `n` characters, an ellipsis marking the cut.
fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n { s.to_owned() } else { s.chars().take(n - 1).collect::<String>() + "…" }
}
