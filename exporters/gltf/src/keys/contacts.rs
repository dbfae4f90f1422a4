//! Foot contacts over one instance's window: which feet each sample holds
//! planted, and the samples nearest each plant and lift (they stay keys of
//! the groups moving that foot).

use crowdpatch_runtime::skeletal::AgentAnimation;

/// Per sample of a window, per foot (0: left, 1: right).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Contacts {
    /// Whether a footstep holds the foot planted at the sample
    /// (`Footstep::t ≤ t ≤ Footstep::lift`, within 10⁻⁹ s).
    pub planted: Vec<[bool; 2]>,
    /// Whether the sample is the one nearest a plant or a lift of the foot.
    pub event: Vec<[bool; 2]>,
}

/// The contacts of the samples `window` (indices into the agent's samples)
/// of `a`. The window runs in the agent's time order, or in two runs where
/// a first instance also shows the last window (its later samples come
/// first). Cost: O(F · m) for F footsteps and m samples.
pub(super) fn contacts(a: &AgentAnimation, window: &[usize]) -> Contacts {
    let eps = 1e-9;
    let m = window.len();
    let mut planted = vec![[false; 2]; m];
    let mut event = vec![[false; 2]; m];
    let agent_t: Vec<f64> = window.iter().map(|&w| a.times[w]).collect();
    let cut = (1..m).find(|&k| agent_t[k] < agent_t[k - 1]).unwrap_or(m);
    for f in &a.footsteps {
        let side = f.foot.index();
        for (k, &t) in agent_t.iter().enumerate() {
            if f.t - eps <= t && t <= f.lift + eps {
                planted[k][side] = true;
            }
        }
        for (lo, run) in [(0, &agent_t[..cut]), (cut, &agent_t[cut..])] {
            for e in [f.t, f.lift] {
                if let Some(near) = nearest(run, e) {
                    event[lo + near][side] = true;
                }
            }
        }
    }
    Contacts { planted, event }
}

/// The index of the time of `run` (increasing) nearest `e` (the later on a
/// tie), when `e` lies within the run.
fn nearest(run: &[f64], e: f64) -> Option<usize> {
    let n = run.len();
    if n > 0 && e >= run[0] && e <= run[n - 1] {
        let i = run.partition_point(|&t| t < e);
        Some(if i > 0 && (i == n || e - run[i - 1] < run[i] - e) { i - 1 } else { i })
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crowdpatch_runtime::skeletal::{Foot, Footstep};

    fn agent(times: Vec<f64>) -> AgentAnimation {
        let step = |t, foot, lift| Footstep { t, foot, position: [0.0, 0.0], heading: 0.0, lift };
        let footsteps = vec![step(0.42, Foot::Left, 1.08), step(1.3, Foot::Right, 2.5)];
        AgentAnimation { footsteps, times, translations: vec![], rotations: vec![] }
    }

    #[test]
    fn planted_samples_lie_within_their_footsteps_and_events_at_the_nearest_sample() {
        let a = agent((0..=20).map(|k| f64::from(k) * 0.1).collect());
        let window: Vec<usize> = (0..=20).collect();
        let c = contacts(&a, &window);
        for (k, &t) in a.times.iter().enumerate() {
            assert_eq!(c.planted[k][0], (0.42..=1.08).contains(&t), "{t}");
            assert_eq!(c.planted[k][1], t >= 1.3 - 1e-9, "{t}");
        }
        let events = |side: usize| -> Vec<usize> { (0..=20).filter(|&k| c.event[k][side]).collect() };
        // 0.42 → 0.4, 1.08 → 1.1; the right foot's lift is past the window.
        assert_eq!(events(0), vec![4, 11]);
        assert_eq!(events(1), vec![13]);
    }

    #[test]
    fn a_window_in_two_runs_finds_the_events_of_each() {
        // The later run first (a first instance showing the last window).
        let a = agent((0..=20).map(|k| f64::from(k) * 0.1).collect());
        let window: Vec<usize> = (10..=20).chain(0..10).collect();
        let c = contacts(&a, &window);
        let events = |side: usize| -> Vec<usize> { (0..21).filter(|&k| c.event[k][side]).map(|k| window[k]).collect() };
        assert_eq!(events(0), vec![11, 4]);
        assert_eq!(events(1), vec![13]);
        assert!(c.planted.iter().zip(&window).all(|(p, &w)| p[0] == (5..=10).contains(&w)));
    }

    #[test]
    fn the_nearest_sample_takes_the_later_on_a_tie() {
        assert_eq!(nearest(&[0.0, 1.0, 2.0], 0.4), Some(0));
        assert_eq!(nearest(&[0.0, 1.0, 2.0], 0.5), Some(1));
        assert_eq!(nearest(&[0.0, 1.0, 2.0], 2.0), Some(2));
        assert_eq!(nearest(&[0.0, 1.0, 2.0], 2.1), None);
        assert_eq!(nearest(&[], 0.0), None);
    }
}
