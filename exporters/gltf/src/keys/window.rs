//! What every stage of the reduction reads of one instance's window.

use super::contacts::Contacts;
use super::groups::Channel;
use super::kinematics::{Samples, Skeleton};

/// What every stage of the reduction reads of one instance's window:
/// arrays of samples × joints hold sample `k`'s joint `j` at `k · n + j`.
pub(super) struct Window<'a> {
    /// The character's joints.
    pub sk: &'a Skeleton,
    /// The samples, baked and played, and the baked world positions.
    pub samples: &'a Samples,
    /// Which feet each sample holds planted, and the plant and lift
    /// samples.
    pub contacts: &'a Contacts,
    /// The channels that vary over the window.
    pub channels: &'a [Channel],
    /// Play time of each sample `[s]`, strictly increasing.
    pub times: &'a [f64],
    /// The number of samples.
    pub m: usize,
    /// The cosine of half the rotation bound: a joint's rotation is within
    /// it where `|q · q_baked| ≥ min_cos`.
    pub min_cos: f64,
}
