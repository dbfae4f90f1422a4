//! The quality gate of a skeletal bake: the animation is checked **as
//! played** (the traces: glTF LINEAR interpolation of the written keys, see
//! [`crate::animation::sampling`]) against documented limits, and a bake
//! that breaks one says so — the culprit agent, play time and metric — and
//! makes `crowdpatch bake` exit 1, as remaining collisions do
//! (docs/design.md "Quality gate").
//!
//! | metric | what | limit ([`GateLimits::default`]) |
//! |---|---|---|
//! | stance drift | per contact of a weight-bearing sole point (heel or ball of either foot, within 1 cm of its lowest height for ≥ 0.1 s, measured on the played geometry: [`crate::animation::contact`]), the largest horizontal distance it moves from where the contact began; the toe tips' are reported by part, not gated (a toe-off scrapes them forward 2–3 cm on every character so far) | p95 ≤ 2.5 cm, ≤ 10 % of contacts over 2 cm, max ≤ 10 cm (a glide, a pop) |
//! | clearance | the least height of any sole point, stance or swing (a foot through the floor) | ≥ −3 cm (the shared humanoids: −1.1 cm at worst, with their own walks or a walk file; the built-in −0.7 to −1.0 cm at 4–15 Hz keys) |
//! | lowest vertex | the lowest skinned vertex of the mesh, median over all samples (sinking into the floor or floating over it) | within ±3 cm of the floor |
//! | planted lift | per footstep, the largest height of the planted foot's contact joint above its height in stance in the character's walks ([`stance_contact_height`]: the foot flat on the floor), from the end of the loading response ([`LOADING_RESPONSE`] after the plant) to mid-stance (half-way to the lift-off; the heel rises after it); for a leg that is its own foot, which rocks on its sole (`character::rigid`), the height of its lowest sole point | ≤ 2.5 cm (a transition between blends once lifted a planted foot 15 cm with the footprint held) |
//! | root deviation | horizontal distance of the hips from the baked path (the body may leave the path a little round a sharp corner rather than crouch or let a planted foot slide; the maximum is reported) | p95 ≤ 5 cm |
//! | posture | hip height over leg length ([`crate::character::Character::leg_length`]), every sample of every agent | ≥ the character's own walk's least value − 0.2 (a long step in double support dips the hips; a crouch or a sitting figure, at 0.2–0.5, goes far below) |
//! | joint speed | speed of any joint between consecutive samples (a jump of 25 cm in one 1/120 s sample) | ≤ 30 m/s, × √(leg / 0.9 m) for longer legs |
//! | step length | landing of each step from the stance foot, along the direction halfway between the two footsteps' headings, over the leg length | ≥ −0.2 (a foot set a little behind the other while turning on the spot is no step backwards; −1 is) |
//! | contacts | heel and ball contacts (as for the stance drift) per footstep of the plans: a walker's heel and ball each rest on the floor once a step, about 2 (feet that never rest there glide or hover, and have no drift to measure) | ≥ 0.5 |
//! | continuity | per step event (each plant and lift-off, and a loop's closing), the largest move of any joint of the synthesised pose from just before the event to just after it ([`crate::animation::sampling::EventJump`]) | ≤ 1 mm (a pop) |
//!
//! Maxima are reported, not only means and percentiles, so that a single
//! jump shows. The traces sample the played animation every 1/120 s and at
//! the middle of every shorter key interval (where a planted foot strays
//! most between two refined keys, which the regular samples step over); the
//! joint speeds are measured between consecutive samples, where a pop reads
//! as a fast but continuous move: the continuity
//! check compares the poses either side of each event itself. Cost:
//! O(samples · joints) per agent.

use crate::animation::contact;
use crate::animation::sampling::Trace;
use crate::character::Character;
use crate::character::library::StepLibrary;
use crate::stats::{Quantile, quantile};
use crowdpatch_runtime::format::{AgentAnimation, wrap_angle};
use serde::Serialize;

/// Limits of the gate (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GateLimits {
    /// 95th percentile of the stance drift `[m]`.
    pub stance_drift_p95: f64,
    /// Largest stance drift `[m]`.
    pub stance_drift_max: f64,
    /// Largest share of contacts that drift more than 2 cm.
    pub stance_drift_over_2cm: f64,
    /// Least height of a sole point `[m]` (negative: under the floor).
    pub clearance: f64,
    /// Largest distance of the lowest vertex's median height from the
    /// floor `[m]`.
    pub lowest_vertex: f64,
    /// 95th percentile of the root deviation `[m]`.
    pub root_deviation_p95: f64,
    /// How far below the character's own walk the hip height over leg
    /// length may go.
    pub hip_height_drop: f64,
    /// Largest joint speed `[m/s]`, scaled by `√(leg / 0.9 m)` for legs
    /// longer than 0.9 m (dynamic similarity).
    pub joint_speed: f64,
    /// Shortest step over the leg length (negative: a step backwards).
    pub step_length_min: f64,
    /// Largest move of a joint across a step event `[m]` (a pop).
    pub event_jump: f64,
    /// Largest height of a planted foot's contact joint above its height
    /// at rest `[m]`.
    pub planted_lift: f64,
    /// Fewest contacts of heels and balls per footstep of the plans (a
    /// walker's heel and ball each rest on the floor once a step).
    pub contacts_per_footstep: f64,
}

impl Default for GateLimits {
    fn default() -> Self {
        GateLimits {
            stance_drift_p95: 0.025,
            stance_drift_max: 0.10,
            stance_drift_over_2cm: 0.10,
            clearance: -0.03,
            lowest_vertex: 0.03,
            root_deviation_p95: 0.05,
            hip_height_drop: 0.2,
            joint_speed: 30.0,
            step_length_min: -0.2,
            event_jump: 0.001,
            planted_lift: 0.025,
            contacts_per_footstep: 0.5,
        }
    }
}

/// The worst sample of a metric: its value, agent and play time.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Worst {
    /// The value.
    pub value: f64,
    /// The agent (bake order).
    pub agent: usize,
    /// Unwrapped time on the agent's path `[s]`.
    pub time: f64,
    /// What else identifies it (a joint, a foot).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub what: String,
}

/// A limit broken.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Violation {
    /// The metric.
    pub metric: String,
    /// Its value.
    pub value: f64,
    /// The limit.
    pub limit: f64,
    /// The culprit agent.
    pub agent: usize,
    /// Its time `[s]`.
    pub time: f64,
    /// The sentence a report prints.
    pub message: String,
}

/// What the gate measured and found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GateReport {
    /// The limits applied.
    pub limits: GateLimits,
    /// Stance drift over the contacts of the sole points, as played
    /// ([`crate::animation::contact`]): 95th percentile `[m]`.
    pub stance_drift_p95: f64,
    /// The largest stance drift (what: the point, e.g. "left heel").
    pub stance_drift_max: Worst,
    /// Share of contacts that drift more than 2 cm.
    pub stance_drift_over_2cm: f64,
    /// Stance drift at the 95th percentile by part of the sole: heel, ball,
    /// toe `[m]`.
    pub stance_drift_p95_by_part: [f64; 3],
    /// Number of contacts measured.
    pub contacts: usize,
    /// Number of footsteps of the plans (the contacts' yardstick).
    pub footsteps: usize,
    /// The fewest contacts per footstep of an agent (what: its contacts
    /// and footsteps).
    pub contacts_per_footstep_min: Worst,
    /// Contact-weighted foot skate of the sole points `[m/s]` (Zhang et al.
    /// 2018).
    pub foot_skate: f64,
    /// The least height of a sole point `[m]` (what: the point).
    pub clearance_min: Worst,
    /// The lowest skinned vertex: median height over all samples `[m]`
    /// (0 for a character without a mesh).
    pub lowest_vertex_median: f64,
    /// Its least height (what it is at the worst sample).
    pub lowest_vertex_min: Worst,
    /// Root deviation: 95th percentile `[m]`.
    pub root_deviation_p95: f64,
    /// The largest root deviation.
    pub root_deviation_max: Worst,
    /// Hip height over leg length: the character's own walk's least value.
    pub hip_height_reference: f64,
    /// Hip height over leg length: 5th percentile and mean over all samples.
    pub hip_height_p5: f64,
    /// Mean hip height over leg length.
    pub hip_height_mean: f64,
    /// The least hip height over leg length.
    pub hip_height_min: Worst,
    /// The fastest joint `[m/s]`.
    pub joint_speed_max: Worst,
    /// The shortest step `[m]`.
    pub step_length_min: Worst,
    /// The largest move of a joint across a step event `[m]` (what: the
    /// joint and the event).
    pub event_jump_max: Worst,
    /// The highest a planted foot's contact joint rose above its height at
    /// rest `[m]` (what: the foot).
    pub planted_lift_max: Worst,
    /// Limits broken (empty: the bake passes).
    pub violations: Vec<Violation>,
}

impl GateReport {
    /// Whether every limit holds.
    pub fn passed(&self) -> bool {
        self.violations.is_empty()
    }
}

fn worse(w: &mut Option<Worst>, value: f64, agent: usize, time: f64, what: impl FnOnce() -> String, higher: bool) {
    let better = w.as_ref().is_some_and(|x| if higher { value <= x.value } else { value >= x.value });
    if !better {
        *w = Some(Worst { value, agent, time, what: what() });
    }
}

/// Time `[s]` after a plant (heel strike) before the planted lift is
/// measured: the loading response, in which the foot comes down flat about
/// the heel with the ball of the foot still up (up to 5.7 cm in the
/// built-in walk); 10 % of a 1.1 s gait cycle (Perry & Burnfield, *Gait
/// Analysis*, 2010, ch. 2).
pub const LOADING_RESPONSE: f64 = 0.11;

/// Froude number `v² / (g · leg)` above which legs of length `leg` run
/// rather than walk (the walk–run transition of dynamic similarity:
/// Alexander, *Optimization and gaits in the locomotion of vertebrates*,
/// Physiol. Rev. 69, 1989).
pub const WALK_RUN_FROUDE: f64 = 0.5;

/// A note for a message about agent `a` at time `t` `[s]`: where the path
/// there (its speed over ±50 ms) is past a walk for legs of length `leg`
/// `[m]` ([`WALK_RUN_FROUDE`]), what that speed is and what would walk it;
/// empty otherwise (or where the path is not defined round `t`). O(1).
fn past_a_walk(paths: &dyn Fn(usize, f64) -> Option<[f64; 2]>, a: usize, t: f64, leg: f64) -> String {
    let h = 0.05;
    let (p0, p1, dt) = match (paths(a, t - h), paths(a, t), paths(a, t + h)) {
        (Some(p0), _, Some(p1)) => (p0, p1, 2.0 * h),
        (Some(p0), Some(p1), None) | (None, Some(p0), Some(p1)) => (p0, p1, h),
        _ => return String::new(),
    };
    let v = (p1[0] - p0[0]).hypot(p1[1] - p0[1]) / dt;
    let froude = v * v / (9.81 * leg);
    if froude <= WALK_RUN_FROUDE {
        return String::new();
    }
    format!(
        " (the path there runs at {v:.2} m/s, past a walk for legs of {leg:.2} m: Froude number {froude:.2} > \
         {WALK_RUN_FROUDE}; a taller character or a slower patch walks it)"
    )
}

/// The least hip height over leg length of the character's walks (the
/// library's clips, the idle left out).
pub fn walk_hip_height(character: &Character, library: &StepLibrary) -> f64 {
    let leg = character.leg_length().max(1e-9);
    let hips = character.hip_joints();
    let mut least = f64::INFINITY;
    for (k, clip) in library.clips.iter().enumerate() {
        if Some(k) == library.idle {
            continue;
        }
        for f in &clip.frames {
            let p = character.skeleton.positions(f);
            least = least.min((p[hips[0]].y + p[hips[1]].y) / 2.0 / leg);
        }
    }
    if least.is_finite() { least } else { 0.9 }
}

/// The height `[m]` of a planted foot's contact joint in the character's
/// walks (the clips put on the floor, [`crate::character::contact::Soles::ground_clips`]):
/// the median over the walks' frames of the lower of the two contact
/// joints (in a walk one foot is always planted); the rest pose's when the
/// character has no walk. O(clip frames · joints).
pub fn stance_contact_height(character: &Character) -> f64 {
    let sk = &character.skeleton;
    let [l, r] = [character.feet[0].contact, character.feet[1].contact];
    let mut h: Vec<f64> = Vec::new();
    for (k, clip) in character.clips.iter().enumerate() {
        if Some(k) == character.idle {
            continue;
        }
        for f in &clip.frames {
            let p = sk.positions(f);
            h.push(p[l].y.min(p[r].y));
        }
    }
    quantile(&mut h, 0.5, Quantile::Nearest).unwrap_or_else(|| {
        let p = sk.positions(&sk.rest_pose());
        p[l].y.min(p[r].y)
    })
}

/// Checks a synthesised patch: `anims` and `traces` per agent (bake order),
/// `paths` gives each agent's path position at a time (for the root
/// deviation), `walk_reference` the character's own walk's least hip height
/// over leg length ([`walk_hip_height`]).
pub fn check(
    character: &Character,
    anims: &[AgentAnimation],
    traces: &[Trace],
    paths: &dyn Fn(usize, f64) -> Option<[f64; 2]>,
    walk_reference: f64,
    limits: &GateLimits,
) -> GateReport {
    check_agents(character, anims.iter().zip(traces).enumerate(), paths, walk_reference, limits)
}

/// [`check`] for agent `a` alone (its animation and trace): the figures of
/// its own footsteps and samples, its culprits named as agent `a`. O(its
/// samples · joints).
pub fn check_agent(
    character: &Character,
    a: usize,
    anim: &AgentAnimation,
    trace: &Trace,
    paths: &dyn Fn(usize, f64) -> Option<[f64; 2]>,
    walk_reference: f64,
    limits: &GateLimits,
) -> GateReport {
    check_agents(character, std::iter::once((a, (anim, trace))), paths, walk_reference, limits)
}

/// [`check`] over `(agent, (animation, trace))` items.
fn check_agents<'a>(
    character: &Character,
    items: impl Iterator<Item = (usize, (&'a AgentAnimation, &'a Trace))>,
    paths: &dyn Fn(usize, f64) -> Option<[f64; 2]>,
    walk_reference: f64,
    limits: &GateLimits,
) -> GateReport {
    let leg = character.leg_length().max(1e-9);
    let hips = character.hip_joints();
    let speed_limit = limits.joint_speed * (leg / 0.9).sqrt().max(1.0);
    let mut drifts = Vec::new();
    let mut drift_max = None;
    let mut deviations = Vec::new();
    let mut dev_max = None;
    let mut ratios = Vec::new();
    let mut ratio_min = None;
    let mut speed_max = None;
    let mut step_min = None;
    let mut jump_max = None;
    let mut lift_max = None;
    let mut over_2cm = 0usize;
    let mut by_part: [Vec<f64>; 3] = Default::default();
    let mut skate = (0.0, 0.0);
    let mut clearance_min = None;
    let mut lowest = Vec::new();
    let mut lowest_min = None;
    let stance_height = stance_contact_height(character);
    // A rigid leg rocks on its sole, its contact joint over the floor
    // (`character::rigid`): its lowest sole point is what stays down.
    let rigid = crate::character::rigid::is_rigid(&crate::character::ik::Legs::new(character));
    let mut footsteps = 0;
    let mut sparse = None;
    for (a, (anim, tr)) in items {
        let before = drifts.len();
        // Continuity across step events.
        for e in &tr.events {
            let what = || {
                let joint = character.skeleton.joints.get(e.joint).map_or("?", |j| j.name.as_str());
                match e.foot {
                    Some(f) => format!("joint {joint} at the {} foot's {}", f.name(), e.kind.name()),
                    None => format!("joint {joint} at the {}", e.kind.name()),
                }
            };
            worse(&mut jump_max, e.distance, a, e.t, what, true);
        }
        // Stance drift, per contact of a sole point, as played.
        for c in contact::contacts(&tr.times, &tr.contacts) {
            by_part[c.point % 3].push(c.drift);
            if c.point % 3 == 2 {
                // The toe tip: reported by part, not gated (see the
                // module documentation).
                continue;
            }
            drifts.push(c.drift);
            over_2cm += usize::from(c.drift > 0.02);
            let what = || format!("{}{}", contact::POINT_NAMES[c.point], past_a_walk(paths, a, c.at, leg));
            worse(&mut drift_max, c.drift, a, c.at, what, true);
        }
        footsteps += anim.footsteps.len();
        if !anim.footsteps.is_empty() {
            let (n, m) = (drifts.len() - before, anim.footsteps.len());
            let at = anim.footsteps[0].t;
            worse(&mut sparse, n as f64 / m as f64, a, at, || format!("{n} contacts for {m} footsteps"), false);
        }
        let (num, den) = contact::skate_sums(&tr.times, &tr.contacts);
        skate.0 += num;
        skate.1 += den;
        for (i, (p, &low)) in tr.contacts.iter().zip(&tr.lowest).enumerate() {
            for (k, q) in p.iter().enumerate() {
                worse(&mut clearance_min, q[2], a, tr.times[i], || contact::POINT_NAMES[k].to_owned(), false);
            }
            if low.is_finite() {
                lowest.push(low);
                worse(&mut lowest_min, low, a, tr.times[i], String::new, false);
            }
        }
        // Planted lift, per footstep of the plan: above the contact
        // joint's height in stance in the character's walks.
        for fs in &anim.footsteps {
            let k = fs.foot.index();
            let from = tr.times.partition_point(|&t| t < fs.t - 1e-9);
            let to = tr.times.partition_point(|&t| t <= fs.lift + 1e-9);
            for (i, &t) in tr.times.iter().enumerate().take(to).skip(from) {
                // After the loading response (heel strike to foot flat,
                // when the ball of the foot comes down about the heel), to
                // mid-stance (after it the heel rises, and a foot joint
                // that is a rig's contact joint with it).
                if t >= fs.t + LOADING_RESPONSE && t <= (fs.t + fs.lift) / 2.0 {
                    let up = if rigid {
                        tr.contacts[i][3 * k..3 * k + 3].iter().map(|q| q[2]).fold(f64::INFINITY, f64::min)
                    } else {
                        tr.feet[i][k][2] - stance_height
                    };
                    worse(&mut lift_max, up, a, t, || format!("{} foot", fs.foot.name()), true);
                }
            }
        }
        // Steps.
        for w in anim.footsteps.windows(2) {
            // Along the direction of travel: halfway between the two
            // footsteps' headings (a step turning round a sharp corner lands
            // beside the stance foot, not ahead of its old heading).
            let h = w[0].heading + wrap_angle(w[1].heading - w[0].heading) / 2.0;
            let d = [w[1].position[0] - w[0].position[0], w[1].position[1] - w[0].position[1]];
            let along = d[0] * h.cos() + d[1] * h.sin();
            worse(&mut step_min, along, a, w[1].t, || format!("{} foot lands", w[1].foot.name()), false);
        }
        // Root deviation, posture and joint speeds, per sample.
        for (i, &t) in tr.times.iter().enumerate() {
            if let Some(p) = paths(a, t) {
                let d = (tr.root[i][0] - p[0]).hypot(tr.root[i][1] - p[1]);
                deviations.push(d);
                worse(&mut dev_max, d, a, t, String::new, true);
            }
            let j = &tr.joints[i];
            let r = (j[hips[0]].y + j[hips[1]].y) / 2.0 / leg;
            ratios.push(r);
            worse(&mut ratio_min, r, a, t, String::new, false);
            if i > 0 {
                let dt = t - tr.times[i - 1];
                if dt > 1e-9 {
                    for (k, (x, y)) in tr.joints[i - 1].iter().zip(j).enumerate() {
                        let v = (y - x).norm() / dt;
                        worse(&mut speed_max, v, a, t, || character.skeleton.joints[k].name.clone(), true);
                    }
                }
            }
        }
    }
    let pct = |v: &mut Vec<f64>, q: f64| quantile(v, q, Quantile::Nearest).unwrap_or(0.0);
    let mean = |v: &[f64]| if v.is_empty() { 0.0 } else { v.iter().sum::<f64>() / v.len() as f64 };
    let mut report = GateReport {
        limits: *limits,
        stance_drift_p95: pct(&mut drifts, 0.95),
        stance_drift_max: drift_max.unwrap_or_default(),
        stance_drift_over_2cm: if drifts.is_empty() { 0.0 } else { over_2cm as f64 / drifts.len() as f64 },
        contacts: drifts.len(),
        footsteps,
        contacts_per_footstep_min: sparse.unwrap_or_default(),
        stance_drift_p95_by_part: by_part.map(|mut v| pct(&mut v, 0.95)),
        foot_skate: if skate.1 > 0.0 { skate.0 / skate.1 } else { 0.0 },
        clearance_min: clearance_min.unwrap_or_default(),
        lowest_vertex_median: pct(&mut lowest, 0.5),
        lowest_vertex_min: lowest_min.unwrap_or_default(),
        root_deviation_p95: pct(&mut deviations, 0.95),
        root_deviation_max: dev_max.unwrap_or_default(),
        hip_height_reference: walk_reference,
        hip_height_p5: pct(&mut ratios, 0.05),
        hip_height_mean: mean(&ratios),
        hip_height_min: ratio_min.unwrap_or(Worst { value: 1.0, ..Worst::default() }),
        joint_speed_max: speed_max.unwrap_or_default(),
        step_length_min: step_min.unwrap_or_default(),
        event_jump_max: jump_max.unwrap_or_default(),
        planted_lift_max: lift_max.unwrap_or_default(),
        violations: Vec::new(),
    };
    report.violations = violations(&report, leg, speed_limit);
    report
}

/// The limits `r`'s figures break, each with its culprit: `leg` is the
/// character's leg length `[m]` (step lengths scale with it) and
/// `speed_limit` the joint speed limit `[m/s]` for it.
fn violations(r: &GateReport, leg: f64, speed_limit: f64) -> Vec<Violation> {
    let mut v = Vec::new();
    let mut over = |metric: &str, value: f64, limit: f64, w: &Worst, what: String| {
        v.push(Violation {
            metric: metric.into(),
            value,
            limit,
            agent: w.agent,
            time: w.time,
            message: format!("agent {} at t = {:.2} s: {what}", w.agent, w.time),
        });
    };
    if r.stance_drift_p95 > r.limits.stance_drift_p95 {
        // The culprit of a percentile is the worst footstep.
        over(
            "stance_drift_p95",
            r.stance_drift_p95,
            r.limits.stance_drift_p95,
            &r.stance_drift_max,
            format!(
                "planted feet drift {:.1} cm at the 95th percentile of their contacts with the floor (limit {:.1} cm); worst: the {} {:.1} cm",
                100.0 * r.stance_drift_p95,
                100.0 * r.limits.stance_drift_p95,
                r.stance_drift_max.what,
                100.0 * r.stance_drift_max.value
            ),
        );
    }
    if r.stance_drift_max.value > r.limits.stance_drift_max {
        over(
            "stance_drift_max",
            r.stance_drift_max.value,
            r.limits.stance_drift_max,
            &r.stance_drift_max,
            format!(
                "the {} drifts {:.1} cm on the floor (limit {:.1} cm)",
                r.stance_drift_max.what,
                100.0 * r.stance_drift_max.value,
                100.0 * r.limits.stance_drift_max
            ),
        );
    }
    if r.stance_drift_over_2cm > r.limits.stance_drift_over_2cm {
        over(
            "stance_drift_over_2cm",
            r.stance_drift_over_2cm,
            r.limits.stance_drift_over_2cm,
            &r.stance_drift_max,
            format!(
                "{:.1} % of the feet's contacts with the floor drift more than 2 cm (limit {:.1} %); worst: the {} {:.1} cm",
                100.0 * r.stance_drift_over_2cm,
                100.0 * r.limits.stance_drift_over_2cm,
                r.stance_drift_max.what,
                100.0 * r.stance_drift_max.value
            ),
        );
    }
    if r.clearance_min.value < r.limits.clearance {
        over(
            "clearance_min",
            r.clearance_min.value,
            r.limits.clearance,
            &r.clearance_min,
            format!(
                "the {} goes {:.1} cm under the floor (limit {:.1} cm)",
                r.clearance_min.what,
                -100.0 * r.clearance_min.value,
                -100.0 * r.limits.clearance
            ),
        );
    }
    if r.lowest_vertex_median.abs() > r.limits.lowest_vertex {
        let (verb, d) = if r.lowest_vertex_median < 0.0 { ("sinks", "into") } else { ("floats", "over") };
        over(
            "lowest_vertex",
            r.lowest_vertex_median,
            r.limits.lowest_vertex,
            &r.lowest_vertex_min,
            format!(
                "the character {verb} {:.1} cm {d} the floor: its lowest vertex, median over the walk (limit {:.1} cm)",
                100.0 * r.lowest_vertex_median.abs(),
                100.0 * r.limits.lowest_vertex
            ),
        );
    }
    if r.root_deviation_p95 > r.limits.root_deviation_p95 {
        over(
            "root_deviation_p95",
            r.root_deviation_p95,
            r.limits.root_deviation_p95,
            &r.root_deviation_max,
            format!(
                "the hips stray {:.1} cm from the path at the 95th percentile (limit {:.1} cm)",
                100.0 * r.root_deviation_p95,
                100.0 * r.limits.root_deviation_p95
            ),
        );
    }
    let floor = r.hip_height_reference - r.limits.hip_height_drop;
    if r.hip_height_min.value < floor {
        over(
            "hip_height_min",
            r.hip_height_min.value,
            floor,
            &r.hip_height_min,
            format!(
                "the hips sink to {:.2} of the leg length (its walk keeps ≥ {:.2}; limit {:.2}): a crouch",
                r.hip_height_min.value, r.hip_height_reference, floor
            ),
        );
    }
    if r.joint_speed_max.value > speed_limit {
        over(
            "joint_speed_max",
            r.joint_speed_max.value,
            speed_limit,
            &r.joint_speed_max,
            format!(
                "joint {} moves at {:.1} m/s (limit {:.1} m/s): a jump",
                r.joint_speed_max.what, r.joint_speed_max.value, speed_limit
            ),
        );
    }
    if r.event_jump_max.value > r.limits.event_jump {
        over(
            "event_jump_max",
            r.event_jump_max.value,
            r.limits.event_jump,
            &r.event_jump_max,
            format!(
                "{} jumps {:.1} mm (limit {:.1} mm): a pop",
                r.event_jump_max.what,
                1000.0 * r.event_jump_max.value,
                1000.0 * r.limits.event_jump
            ),
        );
    }
    if r.planted_lift_max.value > r.limits.planted_lift {
        over(
            "planted_lift_max",
            r.planted_lift_max.value,
            r.limits.planted_lift,
            &r.planted_lift_max,
            format!(
                "the planted {} rises {:.1} cm off the floor while held in place (limit {:.1} cm)",
                r.planted_lift_max.what,
                100.0 * r.planted_lift_max.value,
                100.0 * r.limits.planted_lift
            ),
        );
    }
    let per_footstep = if r.footsteps == 0 { f64::INFINITY } else { r.contacts as f64 / r.footsteps as f64 };
    if per_footstep < r.limits.contacts_per_footstep {
        over(
            "contacts_per_footstep",
            per_footstep,
            r.limits.contacts_per_footstep,
            &r.contacts_per_footstep_min,
            format!(
                "the feet rest on the floor {} times in {} footsteps, {per_footstep:.2} a footstep (limit {:.2}): they glide or hover; fewest: {}",
                r.contacts, r.footsteps, r.limits.contacts_per_footstep, r.contacts_per_footstep_min.what
            ),
        );
    }
    if r.step_length_min.value < r.limits.step_length_min * leg {
        over(
            "step_length_min",
            r.step_length_min.value,
            r.limits.step_length_min * leg,
            &r.step_length_min,
            format!(
                "the {} {:.2} m behind the other foot (limit {:.2} m): a step backwards",
                r.step_length_min.what,
                -r.step_length_min.value,
                -r.limits.step_length_min * leg
            ),
        );
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::animation::sampling::{EventJump, EventKind};
    use crate::character::V3;
    use crate::character::builtin;
    use crowdpatch_runtime::format::Foot;
    use crowdpatch_runtime::skeletal::Footstep;

    fn gate_of(jumps: &[f64]) -> GateReport {
        let c = builtin::character();
        let events = jumps
            .iter()
            .enumerate()
            .map(|(i, &distance)| EventJump {
                t: 1.0 + i as f64,
                kind: EventKind::Lift,
                foot: Some(Foot::Left),
                distance,
                joint: c.foot(Foot::Left).contact,
            })
            .collect();
        let trace = Trace { events, ..Trace::default() };
        let anim = AgentAnimation {
            footsteps: Vec::new(),
            times: Vec::new(),
            translations: Vec::new(),
            rotations: Vec::new(),
        };
        check(&c, &[anim], &[trace], &|_, _| None, 0.9, &GateLimits::default())
    }

    /// The gate on one agent whose right foot, planted from 1 s to 1.6 s,
    /// drifts `drift` `[m]` along a straight path walked at `speed` `[m/s]`.
    fn gate_of_drift(drift: f64, speed: f64) -> GateReport {
        gate_of_stance(drift, 0.0, speed)
    }

    /// A right foot planted from 1 s to 1.6 s that drifts `drift` `[m]` and
    /// rises `lift` `[m]` above the floor meanwhile, on a path at `speed`.
    fn gate_of_stance(drift: f64, lift: f64, speed: f64) -> GateReport {
        let c = builtin::character();
        let leg = c.leg_length();
        let hips = c.hip_joints();
        let times: Vec<f64> = (0..=40).map(|i| 0.8 + 0.025 * i as f64).collect();
        let at = |t: f64| -> [f64; 2] { [speed * t, 0.0] };
        let feet = times
            .iter()
            .map(|&t| {
                let u = ((t - 1.0) / 0.6).clamp(0.0, 1.0);
                let rest = c.skeleton.positions(&c.skeleton.rest_pose())[c.feet[1].contact].y;
                let up = rest + lift * (std::f64::consts::PI * u).sin();
                [[at(t)[0], 0.1, 0.0], [1.0 + drift * u, -0.1, up]]
            })
            .collect();
        let joints = times
            .iter()
            .map(|_| {
                let mut j = vec![V3::zeros(); c.skeleton.joints.len()];
                j[hips[0]].y = 0.95 * leg;
                j[hips[1]].y = 0.95 * leg;
                j
            })
            .collect();
        // The sole points: the left foot's still on the floor, the right
        // foot's in the air but from 1 s to 1.6 s, where they drift and
        // rise as the contact joint does.
        let contacts = times
            .iter()
            .map(|&t| {
                let u = ((t - 1.0) / 0.6).clamp(0.0, 1.0);
                let down = (1.0..=1.6).contains(&t);
                let h = if down { lift * (std::f64::consts::PI * u).sin() } else { 0.1 };
                let x = 1.0 + drift * u;
                [
                    [0.0, 0.1, 0.0],
                    [0.15, 0.1, 0.0],
                    [0.2, 0.1, 0.0],
                    [x, -0.1, h],
                    [x + 0.15, -0.1, h],
                    [x + 0.2, -0.1, h],
                ]
            })
            .collect();
        let lowest = times.iter().map(|_| 0.0).collect();
        let root = times.iter().map(|&t| at(t)).collect();
        let trace = Trace { times, feet, root, joints, contacts, lowest, events: Vec::new() };
        let plant = Footstep { t: 1.0, foot: Foot::Right, position: [1.0, -0.1], heading: 0.0, lift: 1.6 };
        let anim = AgentAnimation {
            footsteps: vec![plant],
            times: Vec::new(),
            translations: Vec::new(),
            rotations: Vec::new(),
        };
        let paths = move |_: usize, t: f64| (0.0..=5.0).contains(&t).then(|| at(t));
        check(&c, &[anim], &[trace], &paths, 0.9, &GateLimits::default())
    }

    #[test]
    fn a_drifting_foot_on_a_path_past_a_walk_for_the_legs_says_so() {
        let leg = builtin::character().leg_length();
        // Froude number 0.87 for these legs: a run.
        let fast = (0.87 * 9.81 * leg).sqrt();
        let g = gate_of_drift(0.12, fast);
        let v = g.violations.iter().find(|v| v.metric == "stance_drift_max").expect("a drift violation");
        assert!(v.message.contains("right heel") && v.message.contains("drifts 12.0 cm"), "{}", v.message);
        assert!(
            v.message.contains(&format!("{fast:.2} m/s")) && v.message.contains("Froude number 0.87"),
            "{}",
            v.message
        );
        // The same drift at a walk names no gait.
        let g = gate_of_drift(0.12, 1.3);
        let v = g.violations.iter().find(|v| v.metric == "stance_drift_max").expect("a drift violation");
        assert!(!v.message.contains("Froude"), "{}", v.message);
        // No drift, no violation; 3 cm breaks the 95th percentile, not
        // the maximum.
        assert!(gate_of_drift(0.0, fast).violations.iter().all(|v| !v.metric.starts_with("stance_drift")));
        let g = gate_of_drift(0.03, 1.3);
        let metrics: Vec<_> = g.violations.iter().map(|v| v.metric.as_str()).collect();
        assert!(metrics.contains(&"stance_drift_p95") && !metrics.contains(&"stance_drift_max"), "{metrics:?}");
        assert!((g.stance_drift_max.value - 0.03).abs() < 1e-9 && g.stance_drift_max.what.starts_with("right"));
        // The toe tips are measured by part, not gated.
        assert!((g.stance_drift_p95_by_part[2] - 0.03).abs() < 1e-9);
    }

    #[test]
    fn feet_that_never_rest_on_the_floor_fail_the_gate_and_planted_ones_pass() {
        // Both feet bounce: their soles touch the floor every 0.2 s, never
        // for the 0.1 s of a contact (a rigid-legged character's feet
        // swept along by the built-in walk, 4 contacts in 1916 footsteps):
        // no contact, so no drift to measure, over four footsteps.
        let c = builtin::character();
        let times: Vec<f64> = (0..=240).map(|i| 0.8 + i as f64 / 120.0).collect();
        let h = |t: f64| 0.03 * (std::f64::consts::PI * t / 0.2).sin().abs();
        let contacts = times.iter().map(|&t| std::array::from_fn(|k| [t + 0.1 * k as f64, 0.0, h(t)])).collect();
        let n = times.len();
        let trace = Trace {
            feet: vec![[[0.0; 3]; 2]; n],
            root: vec![[0.0; 2]; n],
            joints: vec![vec![V3::new(0.0, 0.9, 0.0); c.skeleton.joints.len()]; n],
            lowest: vec![0.0; n],
            contacts,
            times,
            events: Vec::new(),
        };
        let footsteps = (0..4)
            .map(|i| {
                let foot = if i % 2 == 0 { Foot::Left } else { Foot::Right };
                Footstep {
                    t: 0.8 + 0.5 * i as f64,
                    foot,
                    position: [0.3 * i as f64, 0.0],
                    heading: 0.0,
                    lift: 1.0 + 0.5 * i as f64,
                }
            })
            .collect();
        let anim = AgentAnimation { footsteps, times: Vec::new(), translations: Vec::new(), rotations: Vec::new() };
        let g = check(&c, &[anim], &[trace], &|_, _| None, 0.9, &GateLimits::default());
        assert_eq!((g.contacts, g.footsteps), (0, 4));
        let v = g.violations.iter().find(|v| v.metric == "contacts_per_footstep").expect("a contacts violation");
        assert!(v.message.contains("0 times in 4 footsteps") && v.message.contains("glide or hover"), "{}", v.message);
        assert_eq!(g.contacts_per_footstep_min.what, "0 contacts for 4 footsteps");
        // A planted foot rests on the floor: two contacts (heel, ball) for
        // its one footstep, and the left foot's two.
        let g = gate_of_stance(0.0, 0.0, 1.3);
        assert_eq!((g.contacts, g.footsteps), (4, 1));
        assert!(g.passed(), "{:?}", g.violations);
    }

    #[test]
    fn a_planted_foot_lifted_off_the_floor_fails_the_gate_and_one_flat_passes() {
        // Held in place horizontally, 6 cm up mid-stance: a foot marching
        // on the spot, which the stance drift alone does not see.
        let g = gate_of_stance(0.0, 0.06, 1.3);
        let v = g.violations.iter().find(|v| v.metric == "planted_lift_max").expect("a lift violation");
        assert!((v.value - 0.06).abs() < 1e-3, "{v:?}");
        assert!(v.message.contains("right foot rises 6.0 cm"), "{}", v.message);
        assert!((v.time - 1.3).abs() < 0.03, "{v:?}");
        assert!(g.violations.iter().all(|v| v.metric != "stance_drift_max"));
        // A heel strike's 1.8 cm passes.
        let g = gate_of_stance(0.0, 0.018, 1.3);
        assert!(g.passed(), "{:?}", g.violations);
        assert!((g.planted_lift_max.value - 0.018).abs() < 1e-3);
    }

    #[test]
    fn a_pop_at_a_step_event_fails_the_gate_and_a_continuous_pose_passes() {
        // The toe moving 17 mm across a lift-off: between played samples
        // 1/120 s apart it reads as 2 m/s, far under the joint speed limit.
        let g = gate_of(&[2e-5, 0.017, 3e-5]);
        assert!(!g.passed());
        let v = &g.violations[0];
        assert_eq!(v.metric, "event_jump_max");
        assert!((v.time - 2.0).abs() < 1e-12 && (v.value - 0.017).abs() < 1e-12, "{v:?}");
        assert!(
            v.message.contains("toe_l") && v.message.contains("lift-off") && v.message.contains("17.0 mm"),
            "{}",
            v.message
        );
        // A joint moving at 20 m/s moves 40 µm across the event's span.
        let g = gate_of(&[2e-5, 4e-5]);
        assert!(g.passed(), "{:?}", g.violations);
        assert!((g.event_jump_max.value - 4e-5).abs() < 1e-15);
    }
}
