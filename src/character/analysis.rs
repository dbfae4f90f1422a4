//! Clip analysis (BPK §4.2–4.3, "Dynamic Footsteps Planning for Multiple
//! Characters", course notes): foot plants from foot height *and* velocity,
//! segmentation into steps (stance and swing foot), and each step's
//! annotations — root displacement, swing-foot displacement and landing,
//! duration, rotation.
//!
//! A foot is planted in a frame when its contact joint is near its lowest
//! height *and* moves with the clip's ground: for an in-place clip the ground
//! slides backwards under the character, so the velocity test is against the
//! rigid ground motion (translation and yaw rate) fitted to the low frames of
//! both feet, which is zero for a clip with root motion. Runs shorter than a
//! tenth of the cycle are dropped (BPK: "only those where the foot plant occurs
//! in a group of adjacent frames are kept").
//!
//! A step runs from the plant (heel strike) of one foot — the *stance* foot,
//! planted throughout — to the plant of the other, the *swing* foot, which
//! lifts off during the step. Annotations are measured in the *step frame*:
//! origin at the stance foot's contact point at the step's start, axes along
//! the character's facing (x forward, y left), with the stance foot held
//! still (positions are taken relative to it and its yaw change is undone),
//! which derives the root motion of an in-place clip from the stance foot.

use super::{Character, Clip, V3, wrap, yaw, yaw_of_rotation};
use crowdpatch_runtime::format::Foot;
use serde::Serialize;

/// A run of frames in which a foot is planted.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Plant {
    /// The foot.
    pub foot: Foot,
    /// Clip time of the first planted frame `[s]`.
    pub start: f64,
    /// Clip time just after the last planted frame `[s]`; past the clip's
    /// duration when the run wraps round a cyclic clip.
    pub end: f64,
}

/// One step of a clip and its annotations (BPK Table 1).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StepAnnotation {
    /// Index of the clip in the character's (or library's) clip list.
    pub clip: usize,
    /// The stance (supporting) foot, planted throughout.
    pub stance: Foot,
    /// Clip time of the stance foot's plant `[s]` (t₀).
    pub start: f64,
    /// Clip time of the swing foot's plant `[s]` (t_end); may pass the clip's
    /// duration for a step that wraps round a cyclic clip.
    pub end: f64,
    /// Duration `[s]` (t).
    pub duration: f64,
    /// Share of the step, in `[0, 1]`, at which the swing foot lifts off
    /// (before it, both feet are planted: double support).
    pub lift: f64,
    /// Root (hips on the ground) displacement over the step `[m]`, step
    /// frame `[forward, left]` (v_r · t).
    pub root_displacement: [f64; 2],
    /// Swing foot's landing point relative to the stance foot's contact point
    /// `[m]`, step frame `[forward, left]`: the landing position p of BPK's
    /// barycentric interpolation.
    pub landing: [f64; 2],
    /// Swing foot displacement from lift-off to landing `[m]`, step frame (f).
    pub swing_displacement: [f64; 2],
    /// Root position at the step's start relative to the stance contact `[m]`,
    /// step frame.
    pub root_start: [f64; 2],
    /// Heading change of the character over the step `[rad]`, positive to the
    /// left (θ).
    pub rotation: f64,
    /// Movement angle: direction of the swing foot displacement from the
    /// facing `[rad]`, positive to the left (α).
    pub angle: f64,
    /// Mean root speed `[m/s]`.
    pub speed: f64,
}

/// The analysis of one clip.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClipAnalysis {
    /// Clip name.
    pub name: String,
    /// Clip duration `[s]`.
    pub duration: f64,
    /// Frame times `[s]`.
    pub times: Vec<f64>,
    /// Height of each foot's contact joint per frame `[m]`, left then right.
    pub heights: [Vec<f64>; 2],
    /// Horizontal speed of each foot's contact joint relative to the fitted
    /// ground motion, per frame `[m/s]`.
    pub speeds: [Vec<f64>; 2],
    /// Whether each foot is planted, per frame.
    pub planted: [Vec<bool>; 2],
    /// Plant runs, both feet, in time order.
    pub plants: Vec<Plant>,
    /// The steps.
    pub steps: Vec<StepAnnotation>,
    /// The ground's motion under an in-place clip: velocity `[m/s]` (model
    /// frame, x, z) and yaw rate `[rad/s]`; zero for a clip with root motion.
    pub ground_velocity: [f64; 3],
}

/// Thresholds of the foot-plant detector.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlantThresholds {
    /// Height above the foot's lowest height below which it may be planted,
    /// as a share of the character's height.
    pub height: f64,
    /// Largest speed relative to the ground motion `[m/s]`.
    pub speed: f64,
    /// Shortest plant, as a share of the clip's duration.
    pub min_share: f64,
}

impl Default for PlantThresholds {
    fn default() -> Self {
        PlantThresholds { height: 0.012, speed: 0.12, min_share: 0.1 }
    }
}

/// Analyses clip `clip` of `character` (a clip of [`Character::clips`], or
/// any clip of the same skeleton passed as `clip_data`): the feet's contact
/// tracks, the foot plants (low and still relative to the ground's fitted
/// motion, BPK §4), then the steps between plants. O(frames · joints).
pub fn analyse(character: &Character, clip_index: usize, clip: &Clip, thresholds: &PlantThresholds) -> ClipAnalysis {
    let tracks = FootTracks::of(character, clip);
    let detected = detect_plants(character, clip, &tracks, thresholds);
    let steps = annotate_steps(character, clip_index, clip, &tracks, &detected);
    let n = clip.frames.len();
    ClipAnalysis {
        name: clip.name.clone(),
        duration: clip.duration(),
        times: (0..n).map(|i| i as f64 * clip.frame_interval).collect(),
        heights: detected.heights,
        speeds: detected.speeds,
        planted: detected.planted,
        plants: detected.plants,
        steps,
        ground_velocity: detected.ground,
    }
}

/// Per frame of a clip: the feet's contact positions and yaws (relative to
/// rest, whatever the bones' own axes) and the hips' position, model frame.
struct FootTracks {
    contacts: Vec<[V3; 2]>,
    yaws: Vec<[f64; 2]>,
    hips: Vec<V3>,
    dt: f64,
    cyclic: bool,
}

impl FootTracks {
    fn of(character: &Character, clip: &Clip) -> FootTracks {
        let sk = &character.skeleton;
        let n = clip.frames.len();
        let mut t = FootTracks {
            contacts: Vec::with_capacity(n),
            yaws: Vec::with_capacity(n),
            hips: Vec::with_capacity(n),
            dt: clip.frame_interval,
            cyclic: clip.cyclic,
        };
        let rest_g = sk.globals(&sk.rest_pose());
        // A rigid leg rocks on its sole: its contact joint is over the
        // floor but where the heel or toe tip is on it.
        let soles =
            super::rigid::is_rigid(&super::ik::Legs::new(character)).then(|| super::contact::Soles::of(character));
        for frame in &clip.frames {
            let g = sk.globals(frame);
            let c = |f: Foot| {
                let at = super::position_of(&g[character.foot(f).contact]);
                match &soles {
                    Some(soles) => super::rigid::ground_point(soles, &g, f, at),
                    None => at,
                }
            };
            t.contacts.push([c(Foot::Left), c(Foot::Right)]);
            let y = |f: Foot| {
                let a = character.foot(f).ankle;
                yaw_of_rotation(&(super::rotation_of(&g[a]) * super::rotation_of(&rest_g[a]).inverse()))
            };
            t.yaws.push([y(Foot::Left), y(Foot::Right)]);
            t.hips.push(super::position_of(&g[character.hips]));
        }
        t
    }

    fn len(&self) -> usize {
        self.contacts.len()
    }

    /// Frame index `i`, wrapped in a cyclic clip, clamped otherwise.
    fn at(&self, i: isize) -> usize {
        let n = self.len() as isize;
        if self.cyclic { i.rem_euclid(n) as usize } else { i.clamp(0, n - 1) as usize }
    }

    /// Horizontal velocity of foot `f` at frame `i` by central differences.
    fn vel(&self, f: usize, i: usize) -> V3 {
        let (a, b) = (self.at(i as isize - 1), self.at(i as isize + 1));
        let span = if self.cyclic || (i > 0 && i + 1 < self.len()) { 2.0 * self.dt } else { self.dt };
        let d = self.contacts[b][f] - self.contacts[a][f];
        V3::new(d.x, 0.0, d.z) / span
    }
}

/// What the plant detector found.
struct Detected {
    heights: [Vec<f64>; 2],
    speeds: [Vec<f64>; 2],
    planted: [Vec<bool>; 2],
    plants: Vec<Plant>,
    ground: [f64; 3],
}

/// Foot plants: frames where a foot is low (within `thresholds.height` of
/// its lowest) and still relative to the ground's rigid motion fitted to the
/// low frames (or, in place, never moving forwards), as runs of at least
/// `thresholds.min_share` of the clip with one-frame gaps closed.
fn detect_plants(character: &Character, clip: &Clip, tracks: &FootTracks, thresholds: &PlantThresholds) -> Detected {
    let n = tracks.len();
    let dt = tracks.dt;
    let heights: [Vec<f64>; 2] = std::array::from_fn(|f| tracks.contacts.iter().map(|c| c[f].y).collect());
    let min_h: [f64; 2] = std::array::from_fn(|f| heights[f].iter().copied().fold(f64::INFINITY, f64::min));
    // The height tolerance, at most a third of the foot's own lift (a
    // short-legged walker whose ball barely leaves the ground still lifts
    // it).
    let max_h: [f64; 2] = std::array::from_fn(|f| heights[f].iter().copied().fold(f64::NEG_INFINITY, f64::max));
    let h_tols: [f64; 2] =
        std::array::from_fn(|f| (thresholds.height * character.height).min((max_h[f] - min_h[f]) / 3.0));
    // Fit the ground's rigid motion v + ω·(z, −x) to the low frames.
    let low: Vec<(usize, usize)> = (0..n)
        .flat_map(|i| (0..2).map(move |f| (i, f)))
        .filter(|&(i, f)| heights[f][i] <= min_h[f] + h_tols[f])
        .collect();
    let ground = fit_ground(&low.iter().map(|&(i, f)| (tracks.contacts[i][f], tracks.vel(f, i))).collect::<Vec<_>>());
    let rel_speed = |f: usize, i: usize| -> f64 {
        let p = tracks.contacts[i][f];
        let g = V3::new(ground[0] + ground[2] * p.z, 0.0, ground[1] - ground[2] * p.x);
        (tracks.vel(f, i) - g).norm()
    };
    let speeds: [Vec<f64>; 2] = std::array::from_fn(|f| (0..n).map(|i| rel_speed(f, i)).collect());
    let scale = character.height / 1.75;
    let ground_speed = ground[0].hypot(ground[1]);
    let v_tol = thresholds.speed * scale + 0.1 * ground_speed;
    // The facing direction, to tell a foot swinging forwards from one
    // carried backwards by an in-place clip's (possibly uneven) ground.
    let facing_yaw = clip_facing(&tracks.hips, clip, character);
    let forward = V3::new(facing_yaw.sin(), 0.0, facing_yaw.cos());
    let mut planted: [Vec<bool>; 2] = std::array::from_fn(|f| {
        (0..n)
            .map(|i| {
                let low = heights[f][i] <= min_h[f] + h_tols[f];
                let still = speeds[f][i] <= v_tol;
                // In place, a planted foot never moves forwards.
                let backwards =
                    ground_speed > 0.2 * scale && tracks.vel(f, i).dot(&forward) <= thresholds.speed * scale;
                low && (still || backwards)
            })
            .collect()
    });
    // Runs: close one-frame gaps, drop short runs.
    let min_frames = ((thresholds.min_share * n as f64).ceil() as usize).max(2);
    let mut plants = Vec::new();
    for (f, flags) in planted.iter_mut().enumerate() {
        for i in 0..n {
            if !flags[i] && flags[tracks.at(i as isize - 1)] && flags[tracks.at(i as isize + 1)] {
                flags[i] = true;
            }
        }
        let runs = runs(flags, clip.cyclic);
        for (s, len) in runs {
            if len < min_frames || len == n {
                for k in s..s + len {
                    flags[k % n] = false;
                }
                continue;
            }
            plants.push(Plant { foot: Foot::BOTH[f], start: s as f64 * dt, end: (s + len) as f64 * dt });
        }
    }
    plants.sort_by(|a, b| a.start.total_cmp(&b.start));
    Detected { heights, speeds, planted, plants, ground }
}

/// Steps: from one foot's plant to the next plant of the other foot, the
/// stance foot planted for most of it; displacements measured with the
/// stance foot's motion undone, in the step frame (x forwards, y left).
fn annotate_steps(
    character: &Character,
    clip_index: usize,
    clip: &Clip,
    tracks: &FootTracks,
    detected: &Detected,
) -> Vec<StepAnnotation> {
    let (dt, duration) = (tracks.dt, clip.duration());
    let (plants, planted) = (&detected.plants, &detected.planted);
    let at = |i: isize| tracks.at(i);
    let (contacts, yaws, hips) = (&tracks.contacts, &tracks.yaws, &tracks.hips);
    let mut steps = Vec::new();
    for p in plants {
        let other = plants
            .iter()
            .filter(|q| q.foot != p.foot)
            .map(|q| {
                let mut s = q.start;
                while s <= p.start + 1e-9 {
                    if !clip.cyclic {
                        return f64::INFINITY;
                    }
                    s += duration;
                }
                s
            })
            .fold(f64::INFINITY, f64::min);
        // The stance foot must be planted for most of the step (a clip may
        // lift it a little before the other foot lands).
        if !other.is_finite() || (p.end - p.start) < 0.5 * (other - p.start) {
            continue;
        }
        let (i0, i1) = ((p.start / dt).round() as isize, (other / dt).round() as isize);
        let stance = p.foot.index();
        let swing = 1 - stance;
        // Lift-off of the swing foot: first unplanted frame after the start.
        let lift_i = (i0..i1).find(|&i| !planted[swing][at(i)]).unwrap_or(i0);
        // Stance-locked positions: undo the stance foot's motion.
        let c0 = contacts[at(i0)][stance];
        let y0 = yaws[at(i0)][stance];
        let facing = clip_facing(hips, clip, character);
        let locked = |p: V3, i: isize| -> V3 {
            let k = at(i);
            let undo = wrap(y0 - yaws[k][stance]);
            let c = contacts[k][stance];
            // Unwrapped frames of a cyclic clip: the stance foot is the anchor,
            // so wrapping needs no correction.
            c0 + yaw(undo) * (p - c)
        };
        let to_step = |w: V3| -> [f64; 2] {
            let d = yaw(-facing) * (w - c0);
            [d.z, d.x]
        };
        let hip0 = locked(hips[at(i0)], i0);
        let hip1 = locked(hips[at(i1)], i1);
        let land = locked(contacts[at(i1)][swing], i1);
        let lift = locked(contacts[at(lift_i)][swing], lift_i);
        let rotation = wrap(y0 - yaws[at(i1)][stance]);
        let root_displacement = {
            let a = to_step(hip0);
            let b = to_step(hip1);
            [b[0] - a[0], b[1] - a[1]]
        };
        let landing = to_step(land);
        let lifted = to_step(lift);
        let swing_displacement = [landing[0] - lifted[0], landing[1] - lifted[1]];
        let dur = (i1 - i0) as f64 * dt;
        steps.push(StepAnnotation {
            clip: clip_index,
            stance: p.foot,
            start: i0 as f64 * dt,
            end: i1 as f64 * dt,
            duration: dur,
            lift: ((lift_i - i0) as f64 * dt / dur).clamp(0.0, 1.0),
            root_displacement,
            landing,
            swing_displacement,
            root_start: to_step(hip0),
            rotation,
            angle: swing_displacement[1].atan2(swing_displacement[0]),
            speed: root_displacement[0].hypot(root_displacement[1]) / dur,
        });
    }
    steps
}

/// The facing yaw of an in-place clip in the model frame `[rad]`: the mean
/// facing of the hips over the clip (the pelvis rotates back and forth while
/// walking; its mean is the direction of travel).
fn clip_facing(_hips: &[V3], clip: &Clip, character: &Character) -> f64 {
    let sk = &character.skeleton;
    let rest_g = sk.globals(&sk.rest_pose());
    let rest = super::rotation_of(&rest_g[character.hips]);
    let (mut s, mut c) = (0.0, 0.0);
    for frame in &clip.frames {
        let g = sk.globals(frame);
        let q = super::rotation_of(&g[character.hips]) * rest.inverse();
        let y = yaw_of_rotation(&q);
        s += y.sin();
        c += y.cos();
    }
    s.atan2(c)
}

/// Least-squares rigid ground motion `(vx, vz, ω)` with velocity
/// `v + ω·(z, −x)` at point `(x, z)`.
fn fit_ground(samples: &[(V3, V3)]) -> [f64; 3] {
    if samples.len() < 3 {
        return [0.0; 3];
    }
    let mut ata = nalgebra::Matrix3::<f64>::zeros();
    let mut atb = nalgebra::Vector3::<f64>::zeros();
    for (p, v) in samples {
        for (row, rhs) in [([1.0, 0.0, p.z], v.x), ([0.0, 1.0, -p.x], v.z)] {
            let r = nalgebra::Vector3::from(row);
            ata += r * r.transpose();
            atb += r * rhs;
        }
    }
    // A little damping on ω: a clip without turning has no ω to find.
    ata[(2, 2)] += 1e-3 * samples.len() as f64;
    match ata.try_inverse() {
        Some(inv) => {
            let x = inv * atb;
            [x[0], x[1], x[2]]
        }
        None => [0.0; 3],
    }
}

/// Runs of `true` as (start, length); a cyclic run may wrap round the end
/// (its start is then before the end and its length reaches past it).
fn runs(flags: &[bool], cyclic: bool) -> Vec<(usize, usize)> {
    let n = flags.len();
    if n == 0 {
        return Vec::new();
    }
    if flags.iter().all(|&f| f) {
        return vec![(0, n)];
    }
    let mut out = Vec::new();
    // Start scanning after a false frame so that a wrapping run stays whole.
    let first_false = if cyclic { flags.iter().position(|&f| !f).unwrap_or(0) } else { 0 };
    let mut i = 0;
    while i < n {
        let k = (first_false + i) % n;
        if flags[k] {
            let mut len = 0;
            while i + len < n && flags[(first_false + i + len) % n] {
                len += 1;
            }
            out.push((k, len));
            i += len;
        } else {
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::character::builtin;

    #[test]
    fn builtin_walks_have_alternating_plants_at_the_generated_times() {
        let c = builtin::character();
        for (k, clip) in c.clips.iter().enumerate() {
            let a = analyse(&c, k, clip, &PlantThresholds::default());
            if clip.name == "idle" {
                assert!(a.steps.is_empty(), "idle has no step");
                continue;
            }
            if clip.name.contains("spot") {
                // Stepping on the spot: the swing foot barely leaves the
                // ground, so only the alternation is checked.
                assert_eq!(a.steps.len(), 2);
                assert_ne!(a.steps[0].stance, a.steps[1].stance);
                continue;
            }
            // Two steps per cycle, one per stance foot.
            assert_eq!(a.steps.len(), 2, "{}: {:?}", clip.name, a.plants);
            let d = clip.duration();
            let left = a.steps.iter().find(|s| s.stance == Foot::Left).unwrap();
            // The generator plants the left foot at t = 0 and the right at d/2.
            let err = |t: f64, want: f64| ((t - want + d / 2.0).rem_euclid(d) - d / 2.0).abs();
            assert!(err(left.start, 0.0) < 0.05 * d, "{}: left plant at {}", clip.name, left.start);
            assert!(err(left.end, d / 2.0) < 0.05 * d, "{}: right plant at {}", clip.name, left.end);
            assert!((left.duration - d / 2.0).abs() < 0.05 * d);
        }
    }

    #[test]
    fn step_annotations_match_the_generated_gait() {
        let c = builtin::character();
        let clip = c.clips.iter().position(|k| k.name == "walk 1.33 m/s").unwrap();
        let a = analyse(&c, clip, &c.clips[clip], &PlantThresholds::default());
        for s in &a.steps {
            // Root moves one step length forward; the swing foot lands one
            // step ahead on the other side; no turn.
            assert!((s.root_displacement[0] - builtin::step_length(1.33)).abs() < 0.03, "{s:?}");
            assert!(s.root_displacement[1].abs() < 0.03, "{s:?}");
            assert!((s.landing[0] - builtin::step_length(1.33)).abs() < 0.03, "{s:?}");
            assert!(s.landing[1] * s.stance.sign() < -0.1, "lands on the other side: {s:?}");
            assert!(s.rotation.abs() < 0.02);
            assert!((s.speed - 1.33).abs() < 0.05, "{s:?}");
            assert!(s.lift > 0.05 && s.lift < 0.4, "double support share {}", s.lift);
        }
        let turn = c.clips.iter().position(|k| k.name == "turn left 1.10 m/s").unwrap();
        let a = analyse(&c, turn, &c.clips[turn], &PlantThresholds::default());
        for s in &a.steps {
            assert!((s.rotation - builtin::TURN_PER_STEP).abs() < 0.05, "{s:?}");
        }
    }
}
