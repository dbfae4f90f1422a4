//! Key groups: the joint channels that vary over a window, gathered into
//! the groups that share one list of key times (the root, one group per
//! leg, then every other channel on its own), and each group's share of
//! the bounds at the joints it moves.

use crowdpatch_runtime::skeletal::AgentAnimation;

use super::kinematics::Skeleton;
use crate::options::KeyTolerance;

/// φ at a foot's joints: the part of the feet's position and contact bounds
/// that the root (the first group moving them) may use; the legs below get
/// the rest. Measured on the shipped patches: 0.5 → 0.95 saves 8 % of the
/// keys.
pub(super) const ROOT_SHARE: f64 = 0.95;

/// φ at other extremities (head, hands): the part of the position bound the
/// first group moving them may use.
pub(super) const OTHER_SHARE: f64 = 0.5;

/// What a channel drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Property {
    /// The joint's local rotation.
    Rotation,
    /// The joint's local translation.
    Translation,
}

/// One joint channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Channel {
    /// The joint it drives.
    pub joint: usize,
    /// What of the joint it drives.
    pub property: Property,
}

impl Channel {
    /// Whether the channel moves the position of joint `x`: a rotation
    /// moves the joint's descendants, a translation the joint too.
    pub fn moves(&self, sk: &Skeleton, x: usize) -> bool {
        match self.property {
            Property::Rotation => x != self.joint && sk.ancestor[x][self.joint],
            Property::Translation => sk.ancestor[x][self.joint],
        }
    }

    /// Whether the channel moves a joint of foot `side`.
    fn moves_side(&self, sk: &Skeleton, side: usize) -> bool {
        (0..sk.len()).any(|x| sk.foot_of[x] == Some(side) && self.moves(sk, x))
    }
}

/// Channels reduced together: they share one list of kept keys.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Group {
    /// Indices into the channels, all driving joints of the subtree of
    /// `top`.
    pub channels: Vec<usize>,
    /// The topmost joint the group drives.
    pub top: usize,
    /// Feet whose plants and lifts stay keys of the group.
    pub events: [bool; 2],
}

impl Group {
    /// Per sample of `m`, whether it must be a key of the group: the last
    /// sample, and those nearest the plants and lifts (`event`) of the
    /// feet the group keeps.
    pub fn must(&self, event: &[[bool; 2]], m: usize) -> Vec<bool> {
        (0..m).map(|k| k == m - 1 || (0..2).any(|side| self.events[side] && event[k][side])).collect()
    }
}

/// The channels of the samples `window` of `a` (n joints) whose baked
/// values change over the window by more than 10⁻⁷ in a component (the
/// others hold their first sample: no channel is written), by joint,
/// rotation before translation. Cost: O(m · n).
pub(super) fn varying_channels(a: &AgentAnimation, window: &[usize], n: usize) -> Vec<Channel> {
    let mut channels: Vec<Channel> = Vec::with_capacity(2 * n);
    for j in 0..n {
        let (r0, t0) = (a.rotations[window[0] * n + j], a.translations[window[0] * n + j]);
        if window.iter().any(|&w| (0..4).any(|i| (a.rotations[w * n + j][i] - r0[i]).abs() > 1e-7)) {
            channels.push(Channel { joint: j, property: Property::Rotation });
        }
        if window.iter().any(|&w| (0..3).any(|i| (a.translations[w * n + j][i] - t0[i]).abs() > 1e-7)) {
            channels.push(Channel { joint: j, property: Property::Translation });
        }
    }
    channels
}

/// The groups of `channels`, in the order they are reduced (each after
/// those driving its ancestors): the root (the channels that move both
/// feet), one group per leg (the channels that move one foot), then every
/// other channel on its own, parents first. Cost: O(c · n) for c channels.
pub(super) fn groups(channels: &[Channel], sk: &Skeleton) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    let mut grouped = vec![false; channels.len()];
    let root: Vec<usize> =
        (0..channels.len()).filter(|&i| channels[i].moves_side(sk, 0) && channels[i].moves_side(sk, 1)).collect();
    push_group(&mut groups, channels, root, [true, true], &mut grouped);
    for side in 0..2 {
        let ids: Vec<usize> =
            (0..channels.len()).filter(|&i| !grouped[i] && channels[i].moves_side(sk, side)).collect();
        let mut events = [false; 2];
        events[side] = true;
        push_group(&mut groups, channels, ids, events, &mut grouped);
    }
    let mut rest: Vec<usize> = (0..channels.len()).filter(|&i| !grouped[i]).collect();
    rest.sort_by_key(|&i| channels[i].joint);
    for i in rest {
        push_group(&mut groups, channels, vec![i], [false; 2], &mut grouped);
    }
    groups
}

/// Appends the group of the channels `ids` (none: no group), marking them
/// grouped.
fn push_group(groups: &mut Vec<Group>, channels: &[Channel], ids: Vec<usize>, events: [bool; 2], grouped: &mut [bool]) {
    if let Some(top) = ids.iter().map(|&i| channels[i].joint).min() {
        ids.iter().for_each(|&i| grouped[i] = true);
        groups.push(Group { channels: ids, top, events });
    }
}

/// Per (group, joint): the squared position and contact errors `[m²]` the
/// joint may show once the group is reduced. The groups moving a joint
/// share its bounds in order: the i-th of N may bring the error up to
/// `(φ + (1 − φ)(i − 1)/(N − 1))` of the bound, the last one to all of it;
/// φ is [`ROOT_SHARE`] for a foot's joints, [`OTHER_SHARE`] for others.
/// Cost: O(G · c · n).
pub(super) fn bounds(
    groups: &[Group],
    channels: &[Channel],
    sk: &Skeleton,
    tol: &KeyTolerance,
) -> Vec<Vec<(f64, f64)>> {
    let n = sk.len();
    let mut bound2 = vec![vec![(0.0f64, 0.0f64); n]; groups.len()];
    for (x, foot) in sk.foot_of.iter().enumerate() {
        let movers: Vec<usize> =
            (0..groups.len()).filter(|&g| groups[g].channels.iter().any(|&i| channels[i].moves(sk, x))).collect();
        let count = movers.len();
        for (r, &g) in movers.iter().enumerate() {
            let phi = if foot.is_some() { ROOT_SHARE } else { OTHER_SHARE };
            let f = if count == 1 { 1.0 } else { phi + (1.0 - phi) * r as f64 / (count - 1) as f64 };
            bound2[g][x] = ((f * tol.position).powi(2), (f * tol.contact).powi(2));
        }
    }
    bound2
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::keys::tests::walker;

    /// The walker's channels: every rotation and the hips' translation.
    fn walker_channels() -> (Skeleton, Vec<Channel>) {
        let (sk, times) = walker(41);
        let window: Vec<usize> = (0..times.len()).collect();
        let n = sk.character.joints.len();
        (Skeleton::of(&sk.character), varying_channels(&sk.agents[0], &window, n))
    }

    #[test]
    fn only_the_channels_that_change_vary() {
        let (_, channels) = walker_channels();
        let rotation = |joint| Channel { joint, property: Property::Rotation };
        // Hips turn and bob, the legs and the arm swing; feet and hand hold.
        let expected = vec![
            rotation(0),
            Channel { joint: 0, property: Property::Translation },
            rotation(1),
            rotation(3),
            rotation(5),
        ];
        assert_eq!(channels, expected);
    }

    #[test]
    fn the_root_then_each_leg_then_the_rest_parents_first() {
        let (sk, channels) = walker_channels();
        let groups = groups(&channels, &sk);
        let joints = |g: &Group| -> Vec<usize> { g.channels.iter().map(|&i| channels[i].joint).collect() };
        assert_eq!(groups.iter().map(joints).collect::<Vec<_>>(), vec![vec![0, 0], vec![1], vec![3], vec![5]]);
        assert_eq!(groups.iter().map(|g| g.top).collect::<Vec<_>>(), vec![0, 1, 3, 5]);
        let events: Vec<[bool; 2]> = groups.iter().map(|g| g.events).collect();
        assert_eq!(events, [[true, true], [true, false], [false, true], [false, false]]);
        // Every channel in exactly one group.
        let mut all: Vec<usize> = groups.iter().flat_map(|g| g.channels.clone()).collect();
        all.sort_unstable();
        assert_eq!(all, (0..channels.len()).collect::<Vec<_>>());
    }

    #[test]
    fn the_last_group_moving_a_joint_gets_its_whole_bound() {
        let (sk, channels) = walker_channels();
        let groups = groups(&channels, &sk);
        let tol = KeyTolerance { position: 0.01, rotation: 0.1, contact: 0.002 };
        let b = bounds(&groups, &channels, &sk, &tol);
        // The left foot (2): the root first with ROOT_SHARE, its leg last.
        assert_eq!(b[0][2], ((ROOT_SHARE * 0.01f64).powi(2), (ROOT_SHARE * 0.002f64).powi(2)));
        let near = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b;
        assert!(near(b[1][2].0, 0.01f64.powi(2)) && near(b[1][2].1, 0.002f64.powi(2)), "{:?}", b[1][2]);
        // The hand (6): the root with OTHER_SHARE, the arm last.
        assert_eq!(b[0][6].0, (OTHER_SHARE * 0.01f64).powi(2));
        assert!(near(b[3][6].0, 0.01f64.powi(2)), "{:?}", b[3][6]);
        // A group does not move the other leg's foot: no bound there.
        assert_eq!(b[1][4], (0.0, 0.0));
        assert_eq!(b[2][2], (0.0, 0.0));
    }

    #[test]
    fn a_group_must_key_the_last_sample_and_its_feet_events() {
        let group = Group { channels: vec![0], top: 1, events: [true, false] };
        let event = [[false, false], [true, false], [false, true], [false, false]];
        assert_eq!(group.must(&event, 4), vec![false, true, false, true]);
    }
}
