//! Clip choice: which of a character's clips are walks, runs, idles or
//! something else, **by measurement**, not by name (BPK §4: the steps
//! found in a clip are what the step library is made of).
//!
//! Each clip is analysed ([`analyse`]): foot plants, steps, their speed and
//! the share of double support; the hip height over leg length says whether
//! it is upright. A clip is
//!
//! - a **walk** when it has at least two steps, alternating feet, going
//!   forwards (each step moves the root forwards by at least 15 % of the leg
//!   length, more forwards than sideways, turning less than 0.8 rad; a
//!   turning take and its mirror image blend into straight steps),
//!   upright (hip height at least 0.85 of the leg length on average) and at
//!   a walking pace: a Froude number `v²/(g·l)` from 0.005 to 0.5 (people
//!   change from walking to running near 0.5, Alexander 1989; the Froude
//!   number is the same for a body of any size walking alike). Double
//!   support is reported, not required: game walk cycles often show little;
//! - a **run** when its steps alternate at a Froude number above 0.5, or
//!   when it is named a run (run, sprint, jog) and has a flight phase
//!   (neither foot planted for 5 % of it or more): not used as a walk, and
//!   said so;
//! - an **idle** when it has no step, both feet stay still (low and not
//!   moving, 90 % of its frames or more, the ground not moving under it)
//!   and it stands upright (hips at 0.85–1.02 of the leg length: not
//!   sitting); the one used for standing agents is the one
//!   named idle (or stand) if there is one, else the longest;
//! - **other** (attacks, jumps, dances, strafes, backwards walks, crouched
//!   walks), not used.

use super::analysis::{ClipAnalysis, PlantThresholds, analyse};
use super::{Character, Clip, V3};
use serde::Serialize;

/// What a clip is, by measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClipKind {
    /// A forward walk with double support.
    Walk,
    /// Alternating steps with a flight phase.
    Run,
    /// Standing still.
    Idle,
    /// Anything else.
    Other,
}

impl ClipKind {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            ClipKind::Walk => "walk",
            ClipKind::Run => "run",
            ClipKind::Idle => "idle",
            ClipKind::Other => "other",
        }
    }
}

/// The measurements and verdict of one clip.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClipChoice {
    /// Clip name.
    pub name: String,
    /// Duration `[s]`.
    pub duration: f64,
    /// Whether it loops.
    pub cyclic: bool,
    /// What it is.
    pub kind: ClipKind,
    /// Steps found.
    pub steps: usize,
    /// Mean root speed over its steps `[m/s]` (0 without steps).
    pub speed: f64,
    /// Mean step length (root displacement along the facing) `[m]`.
    pub step_length: f64,
    /// Mean share of a step with both feet planted.
    pub double_support: f64,
    /// Share of frames with neither foot planted.
    pub flight: f64,
    /// Mean hip height over leg length.
    pub hip_height: f64,
    /// Whether it is used (a walk, or the idle chosen).
    pub used: bool,
    /// Why, in words.
    pub why: String,
}

/// Measures and classifies every clip of `character`. O(clips · frames ·
/// joints).
pub fn classify(character: &Character) -> Vec<ClipChoice> {
    let thresholds = PlantThresholds::default();
    let leg = character.leg_length().max(1e-9);
    let hips = character.hip_joints();
    let mut out: Vec<ClipChoice> = character
        .clips
        .iter()
        .enumerate()
        .map(|(k, clip)| {
            let a = analyse(character, k, clip, &thresholds);
            let hip_height = mean_hip_height(character, clip, hips) / leg;
            judge(clip, &a, leg, hip_height)
        })
        .collect();
    // The idle used: the one named idle (or stand) with the fewest other
    // words (`Idle` before `Unarmed_Idle` before `Sit_Chair_Idle`), else
    // the longest.
    let rank = |c: &ClipChoice| -> (usize, bool, f64) {
        let w = super::humanoid::words(&c.name);
        let named = w.iter().any(|x| x == "idle" || x == "stand" || x == "standing");
        (if named { w.len() } else { usize::MAX }, !c.cyclic, -c.duration)
    };
    let pick = out
        .iter()
        .enumerate()
        .filter(|(_, c)| c.kind == ClipKind::Idle)
        .min_by(|(i, a), (j, b)| rank(a).partial_cmp(&rank(b)).unwrap_or(std::cmp::Ordering::Equal).then(i.cmp(j)))
        .map(|(i, _)| i);
    for (i, c) in out.iter_mut().enumerate() {
        if c.kind == ClipKind::Idle {
            c.used = Some(i) == pick;
            if !c.used {
                c.why.push_str("; another idle is used");
            }
        }
    }
    out
}

/// Keeps the walks and the chosen idle of `character` (in that order, the
/// idle last) and returns the verdict on every clip it had.
pub fn choose(character: &mut Character) -> Vec<ClipChoice> {
    let choices = classify(character);
    let clips = std::mem::take(&mut character.clips);
    let mut idle = None;
    for (clip, c) in clips.into_iter().zip(&choices) {
        match c.kind {
            ClipKind::Walk => character.clips.push(clip),
            ClipKind::Idle if c.used => idle = Some(clip),
            _ => {}
        }
    }
    character.idle = idle.map(|clip| {
        character.clips.push(clip);
        character.clips.len() - 1
    });
    choices
}

/// The straightest whole gait cycle of a clip that is not cyclic (a
/// motion-capture take that walks, turns and walks back): from a foot's
/// plant to its next plant with one plant of the other foot between, the
/// one whose hips turn least, cut out, put in place and made to loop
/// ([`Clip::close_loop`]). `None`
/// for a cyclic clip or one without such a cycle. O(frames · joints).
pub fn straightest_cycle(character: &Character, clip: &Clip) -> Option<Clip> {
    if clip.cyclic {
        return None;
    }
    let sk = &character.skeleton;
    // Plants in the world (a take keeps its root motion): a contact joint
    // low (within 2 % of the leg length of its lowest) and slow (under
    // 0.3 leg lengths per second), in runs of at least 3 frames.
    let leg = character.leg_length().max(1e-9);
    let n = clip.frames.len();
    let contact: Vec<[V3; 2]> = clip
        .frames
        .iter()
        .map(|f| {
            let p = sk.positions(f);
            [p[character.feet[0].contact], p[character.feet[1].contact]]
        })
        .collect();
    let dt = clip.frame_interval;
    let mut plants: Vec<(f64, usize)> = Vec::new();
    for foot in 0..2 {
        let lo = contact.iter().map(|c| c[foot].y).fold(f64::INFINITY, f64::min);
        let down: Vec<bool> = (0..n)
            .map(|i| {
                let (a, b) = (contact[i.saturating_sub(1)][foot], contact[(i + 1).min(n - 1)][foot]);
                let v = V3::new(b.x - a.x, 0.0, b.z - a.z).norm()
                    / (dt * (((i + 1).min(n - 1) - i.saturating_sub(1)) as f64));
                contact[i][foot].y <= lo + 0.02 * leg && v <= 0.3 * leg
            })
            .collect();
        let mut i = 0;
        while i < n {
            if down[i] && (i == 0 || !down[i - 1]) {
                let len = (i..n).take_while(|&k| down[k]).count();
                if len >= 3 {
                    plants.push((i as f64 * dt, foot));
                }
                i += len;
            } else {
                i += 1;
            }
        }
    }
    plants.sort_by(|a, b| a.0.total_cmp(&b.0));
    let yaw_at = |i: usize| {
        let g = sk.globals(&clip.frames[i.min(clip.frames.len() - 1)]);
        super::yaw_of_rotation(&super::rotation_of(&g[character.hips]))
    };
    let mut best: Option<(f64, usize, usize)> = None;
    for (i, p) in plants.iter().enumerate() {
        let mut others = 0;
        for q in &plants[i + 1..] {
            if q.1 != p.1 {
                others += 1;
                continue;
            }
            let (i0, i1) = ((p.0 / dt).round() as usize, (q.0 / dt).round() as usize);
            if others == 1 && i1 > i0 + 6 && i1 < clip.frames.len() {
                // The hips' turn over the cycle, frame by frame.
                let mut turn = 0.0;
                for k in i0..i1 {
                    turn += super::wrap(yaw_at(k + 1) - yaw_at(k));
                }
                if best.is_none_or(|b| turn.abs() < b.0 - 1e-9) {
                    best = Some((turn.abs(), i0, i1));
                }
            }
            break;
        }
    }
    let (_, i0, i1) = best?;
    let mut out = Clip {
        name: format!("{} (cycle {:.2}–{:.2} s)", clip.name, i0 as f64 * dt, i1 as f64 * dt),
        frame_interval: dt,
        frames: clip.frames[i0..=i1].to_vec(),
        cyclic: false,
    };
    out.make_in_place_at(sk, character.hips);
    // The arms and head loop; the body's placement (the hips and above)
    // and the legs keep the cycle's own.
    let thighs = character.hip_joints();
    let kept: Vec<bool> = (0..sk.len())
        .map(|k| {
            sk.is_ancestor(k, character.hips) || thighs.iter().any(|&t| t != character.hips && sk.is_ancestor(t, k))
        })
        .collect();
    out.close_loop(&kept);
    out.frames.pop();
    out.cyclic = true;
    Some(out)
}

/// Mean height of the hip joints over a clip `[m]`.
fn mean_hip_height(character: &Character, clip: &Clip, hips: [usize; 2]) -> f64 {
    let sk = &character.skeleton;
    let n = clip.frames.len().max(1);
    clip.frames
        .iter()
        .map(|f| {
            let p = sk.positions(f);
            (p[hips[0]].y + p[hips[1]].y) / 2.0
        })
        .sum::<f64>()
        / n as f64
}

/// Gravity `[m/s²]`, for Froude numbers.
const G: f64 = 9.81;

/// Largest Froude number `v²/(g·l)` of a walk: people change to a run
/// near 0.5 (Alexander 1989); a clip above is a run whatever its feet do.
pub const MAX_WALK_FROUDE: f64 = 0.5;

fn judge(clip: &Clip, a: &ClipAnalysis, leg: f64, hip_height: f64) -> ClipChoice {
    let n = a.times.len().max(1);
    let none = (0..n).filter(|&i| !a.planted[0][i] && !a.planted[1][i]).count() as f64 / n as f64;
    let steps = &a.steps;
    let k = steps.len().max(1) as f64;
    let speed = steps.iter().map(|s| s.speed).sum::<f64>() / k;
    let forward = steps.iter().map(|s| s.root_displacement[0]).sum::<f64>() / k;
    let double_support = steps.iter().map(|s| s.lift).sum::<f64>() / k;
    let mut c = ClipChoice {
        name: clip.name.clone(),
        duration: clip.duration(),
        cyclic: clip.cyclic,
        kind: ClipKind::Other,
        steps: steps.len(),
        speed: if steps.is_empty() { 0.0 } else { speed },
        step_length: if steps.is_empty() { 0.0 } else { forward },
        double_support,
        flight: none,
        hip_height,
        used: false,
        why: String::new(),
    };
    let alternating = steps.len() >= 2 && steps.windows(2).all(|w| w[0].stance != w[1].stance);
    if steps.is_empty() {
        // Still feet: low and not moving, whatever the plant runs say (a
        // foot planted through the whole clip is no plant to the step
        // analysis).
        let tol = 0.012 * leg / 0.5;
        let still = |f: usize, i: usize| {
            let lo = a.heights[f].iter().copied().fold(f64::INFINITY, f64::min);
            a.heights[f][i] <= lo + tol && a.speeds[f][i] <= 0.1 * leg
        };
        let standing = (0..n).filter(|&i| still(0, i) && still(1, i)).count() as f64 / n as f64;
        let ground = a.ground_velocity[0].hypot(a.ground_velocity[1]);
        if standing >= 0.9 && ground < 0.05 * leg && (0.85..=1.02).contains(&hip_height) {
            c.kind = ClipKind::Idle;
            c.why = format!("standing: both feet still {:.0} % of the time", 100.0 * standing);
        } else {
            c.why = if !(0.85..=1.02).contains(&hip_height) {
                format!("no steps; hips at {hip_height:.2} of the leg length (not standing upright)")
            } else {
                format!("no steps found; both feet still {:.0} % of the time", 100.0 * standing)
            };
        }
        return c;
    }
    if !alternating {
        c.why = format!("{} steps that do not alternate feet", steps.len());
        return c;
    }
    let lateral = steps.iter().map(|s| s.root_displacement[1].abs()).sum::<f64>() / k;
    let turn = steps.iter().map(|s| s.rotation.abs()).fold(0.0, f64::max);
    let froude = speed * speed / (G * leg);
    let named_run = ["run", "sprint", "jog"].iter().any(|w| clip.name.to_lowercase().contains(w));
    c.why = if hip_height < 0.85 {
        format!("crouched: hips at {hip_height:.2} of the leg length (an upright walk keeps 0.9–1.0)")
    } else if froude > MAX_WALK_FROUDE || (named_run && none >= 0.05) {
        c.kind = ClipKind::Run;
        format!(
            "a run: Froude number {froude:.2} (walks stay below {MAX_WALK_FROUDE}), {:.0} % of it with neither foot \
             planted; not used as a walk",
            100.0 * none
        )
    } else if forward < 0.15 * leg {
        format!("steps {:.2} m forwards (a walk on the spot, backwards or sideways)", forward)
    } else if lateral > forward {
        format!("steps {forward:.2} m forwards and {lateral:.2} m sideways (a strafe)")
    } else if turn > 0.8 {
        format!("turns {turn:.2} rad in a step")
    } else if froude < 0.005 {
        format!("{speed:.2} m/s is too slow for a walk (Froude number {froude:.3})")
    } else {
        c.kind = ClipKind::Walk;
        c.used = true;
        format!(
            "a walk: {} alternating steps of {forward:.2} m at {speed:.2} m/s (Froude {froude:.2}), double support \
             {:.0} % of a step, hips at {hip_height:.2} of the leg length",
            steps.len(),
            100.0 * double_support
        )
    };
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::character::builtin;

    #[test]
    fn the_builtin_walks_are_walks_and_its_idle_an_idle() {
        let c = builtin::character();
        let choices = classify(&c);
        for ch in &choices {
            let want = if ch.name == "idle" {
                ClipKind::Idle
            } else if ch.name.contains("spot") {
                ClipKind::Other
            } else {
                ClipKind::Walk
            };
            assert_eq!(ch.kind, want, "{}: {}", ch.name, ch.why);
            assert!(ch.used == (ch.kind != ClipKind::Other), "{}", ch.name);
        }
        let walk = choices.iter().find(|c| c.name == "walk 1.33 m/s").unwrap();
        assert!((walk.speed - 1.33).abs() < 0.05, "{}", walk.speed);
        assert!(walk.hip_height > 0.9 && walk.hip_height < 1.0, "{}", walk.hip_height);
    }

    #[test]
    fn a_walk_played_twice_as_fast_is_a_run() {
        // 4 m/s on 0.95 m legs: a Froude number near 1.7.
        let c = builtin::character();
        let mut clip = c.clips.iter().find(|k| k.name == "walk 2.00 m/s").unwrap().clone();
        clip.frame_interval /= 2.0;
        let a = analyse(&c, 0, &clip, &PlantThresholds::default());
        let v = judge(&clip, &a, c.leg_length(), 0.93);
        assert_eq!(v.kind, ClipKind::Run, "{}", v.why);
        assert!(v.why.contains("Froude"), "{}", v.why);
    }
}
