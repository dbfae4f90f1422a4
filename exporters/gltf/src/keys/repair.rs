//! Compressed files: the plain file's keys played through the compressor's
//! filters (which move a rotation by about 10⁻⁵ rad, a translation by up to
//! 0.06 mm, a key time by a microsecond), and wherever a bound fails at a
//! sample, that sample made a key of every group moving the joint (the
//! file then holds the plain file's keys and these few more).

use crowdpatch_runtime::skeletal::AgentAnimation;

use super::groups::{Group, Property};
use super::kinematics::{Pose, place};
use super::play::{Written, play_written};
use super::quat::{dequantise, dot, normalise};
use super::window::Window;
use crate::options::KeyTolerance;
use crate::played::Played;

/// The values of the samples `window` of `a` (at play times `times` `[s]`,
/// n joints) as `written` writes them. Cost: O(m · n).
pub(super) fn written_values(
    a: &AgentAnimation,
    window: &[usize],
    times: &[f64],
    n: usize,
    written: &Played,
) -> Written {
    let key_t: Vec<f64> = times.iter().map(|&t| f64::from(written.time(t as f32))).collect();
    let value_q: Vec<[f64; 4]> = window
        .iter()
        .flat_map(|&w| (0..n).map(move |j| normalise(dequantise(written.rotation(a.rotations[w * n + j])))))
        .collect();
    let value_t: Vec<[f64; 3]> = window
        .iter()
        .flat_map(|&w| (0..n).map(move |j| written.translation(a.translations[w * n + j]).map(f64::from)))
        .collect();
    Written { key_t, value_q, value_t }
}

/// Adds keys to `kept_of` (per channel) until every sample, played from
/// the `written` values at its own written time, is within `tol`: a
/// sample where a bound fails becomes a key of every group moving the
/// joint (of those with keys), at most `m` rounds. Leaves `pose` as
/// played from the written values. Cost: O(R · m · n · G) for R rounds.
pub(super) fn repair(
    w: &Window,
    groups: &[Group],
    tol: &KeyTolerance,
    written: &Written,
    pose: &mut Pose,
    kept_of: &mut [Vec<usize>],
) {
    let bound2 = (tol.position * tol.position, tol.contact * tol.contact);
    for _ in 0..w.m {
        for (i, ch) in w.channels.iter().enumerate() {
            if kept_of[i].len() < 2 {
                continue;
            }
            // Sample k as played at its own written time: a key is then
            // exactly its written value, so that enough repairs always meet
            // the bounds (the baked motion itself may turn faster than the
            // filter's time step, e.g. at a lift-off a few microseconds
            // after a sample).
            play_written(w, written, pose, *ch, &kept_of[i]);
        }
        place(w.sk, None, w.m, pose);
        if !add_failing_keys(w, groups, pose, bound2, kept_of) {
            break;
        }
    }
}

/// A sample where a joint fails a bound.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Failure {
    /// The sample.
    k: usize,
    /// The joint.
    x: usize,
    /// Its position (an extremity) or its horizontal position (a planted
    /// foot's joint) is out of bounds.
    over: bool,
    /// Its local rotation (a joint with a rotation channel) is out of
    /// bounds.
    turned: bool,
}

/// Makes every sample where a joint of `pose` fails a bound (`bound2`:
/// squared position and contact bounds `[m²]`) a key of the groups that
/// would fix it. Returns whether a key was added.
fn add_failing_keys(w: &Window, groups: &[Group], pose: &Pose, bound2: (f64, f64), kept_of: &mut [Vec<usize>]) -> bool {
    let n = w.sk.len();
    let mut added = false;
    for k in 0..w.m {
        for x in 0..n {
            if let Some(failure) = failure(w, pose, bound2, k, x) {
                added |= add_key(w, groups, failure, kept_of);
            }
        }
    }
    added
}

/// How joint `x` fails its bounds at sample `k` in `pose`, if it does.
fn failure(w: &Window, pose: &Pose, (pos2, contact2): (f64, f64), k: usize, x: usize) -> Option<Failure> {
    let (sk, samples) = (w.sk, w.samples);
    let n = sk.len();
    let d: [f64; 3] = std::array::from_fn(|v| pose.wp[k * n + x][v] - samples.world[k * n + x][v]);
    let over = (sk.extremity[x] && d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > pos2)
        || (sk.foot_of[x].is_some_and(|side| w.contacts.planted[k][side]) && d[0] * d[0] + d[2] * d[2] > contact2);
    let turned = w.channels.iter().any(|ch| {
        ch.joint == x
            && ch.property == Property::Rotation
            && dot(pose.local_q[k * n + x], samples.baked_q[k * n + x]).abs() < w.min_cos
    });
    (over || turned).then_some(Failure { k, x, over, turned })
}

/// Makes sample `f.k` a key of every group (with keys) whose channels move
/// joint `f.x` (when it is `over`) or turn it (when it is `turned`), last
/// group first. Returns whether a key was added.
fn add_key(w: &Window, groups: &[Group], f: Failure, kept_of: &mut [Vec<usize>]) -> bool {
    let channels = w.channels;
    let mut added = false;
    for group in groups.iter().rev() {
        let relevant = group.channels.iter().any(|&i| {
            (f.over && channels[i].moves(w.sk, f.x))
                || (f.turned && channels[i].joint == f.x && channels[i].property == Property::Rotation)
        });
        let first = group.channels[0];
        if !relevant || kept_of[first].len() < 2 {
            continue;
        }
        if let Err(at) = kept_of[first].binary_search(&f.k) {
            for &i in &group.channels {
                kept_of[i].insert(at, f.k);
            }
            added = true;
        }
    }
    added
}
