//! Undo and redo by document snapshots (egui's `Undoer` idea), settled so
//! that one gesture is one step: a change is recorded only once the pointer is
//! released (a whole drag becomes one step) and, while a text field has the
//! keyboard, once typing pauses.
//!
//! Change is seen through the document's revision number (see
//! [`crate::document`]): a new revision is a change, and a step records the
//! state together with its revision, so that undoing gives the old revision
//! back (and a document undone to its saved state is clean again).

use std::collections::VecDeque;

/// A recorded state and its revision.
type Step<T> = (T, u64);

/// Snapshot history of a document.
#[derive(Debug, Clone)]
pub struct History<T> {
    /// Oldest first; the oldest are dropped beyond `limit`.
    undo: VecDeque<Step<T>>,
    redo: Vec<Step<T>>,
    /// The last recorded state.
    settled: Step<T>,
    /// When the revision last differed from the previous frame's `[s]`.
    last_change: f64,
    /// The revision seen last frame.
    last_seen: Option<u64>,
    /// Most steps kept.
    limit: usize,
}

/// When an edit in progress is recorded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SettleRule {
    /// The pointer is held down (a drag may be going on): never record.
    pub pointer_busy: bool,
    /// A text field has the keyboard: record after a pause of `typing_pause`.
    pub typing: bool,
    /// A structural command changed the document this frame: record now.
    pub structural: bool,
}

/// Pause in typing after which the text typed becomes one step `[s]`.
pub const TYPING_PAUSE: f64 = 0.8;

/// Most undo steps kept.
pub const HISTORY_LIMIT: usize = 200;

impl<T: Clone> History<T> {
    /// A history whose first state is `state`, at `revision`.
    pub fn new(state: T, revision: u64) -> Self {
        History {
            undo: VecDeque::new(),
            redo: Vec::new(),
            settled: (state, revision),
            last_change: 0.0,
            last_seen: None,
            limit: HISTORY_LIMIT,
        }
    }

    /// Forgets every step and starts from `state` (after loading a document).
    pub fn reset(&mut self, state: T, revision: u64) {
        *self = History::new(state, revision);
    }

    /// Called once per frame with the current state, its revision and the
    /// time `[s]`; records a step when the rule says the edit has settled.
    pub fn feed(&mut self, now: f64, current: &T, revision: u64, rule: SettleRule) {
        if self.last_seen != Some(revision) {
            self.last_change = now;
            self.last_seen = Some(revision);
        }
        if revision == self.settled.1 || rule.pointer_busy && !rule.structural {
            return;
        }
        if rule.structural || !rule.typing || now - self.last_change >= TYPING_PAUSE {
            self.record(current, revision);
        }
    }

    fn record(&mut self, current: &T, revision: u64) {
        let previous = std::mem::replace(&mut self.settled, (current.clone(), revision));
        self.push_undo(previous);
        self.redo.clear();
    }

    fn push_undo(&mut self, step: Step<T>) {
        self.undo.push_back(step);
        while self.undo.len() > self.limit {
            self.undo.pop_front();
        }
    }

    /// Whether there is something to undo (a recorded step, or a change in
    /// progress).
    pub fn can_undo(&self, revision: u64) -> bool {
        !self.undo.is_empty() || revision != self.settled.1
    }

    /// Whether there is something to redo.
    pub fn can_redo(&self) -> bool {
        !self.redo.is_empty()
    }

    /// The state (and revision) before the last step; a change in progress is
    /// recorded first, then undone.
    pub fn undo(&mut self, current: &T, revision: u64) -> Option<Step<T>> {
        if revision != self.settled.1 {
            self.record(current, revision);
        }
        let previous = self.undo.pop_back()?;
        let now = std::mem::replace(&mut self.settled, previous.clone());
        self.redo.push(now);
        self.last_seen = Some(previous.1);
        Some(previous)
    }

    /// The state (and revision) undone last.
    pub fn redo(&mut self, current: &T, revision: u64) -> Option<Step<T>> {
        if revision != self.settled.1 {
            // Edited since the undo: the redo branch is gone.
            self.record(current, revision);
            return None;
        }
        let next = self.redo.pop()?;
        let now = std::mem::replace(&mut self.settled, next.clone());
        self.push_undo(now);
        self.last_seen = Some(next.1);
        Some(next)
    }

    /// Number of recorded steps that can be undone.
    pub fn undo_len(&self) -> usize {
        self.undo.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDLE: SettleRule = SettleRule { pointer_busy: false, typing: false, structural: false };
    const DRAG: SettleRule = SettleRule { pointer_busy: true, typing: false, structural: false };
    const TYPE: SettleRule = SettleRule { pointer_busy: false, typing: true, structural: false };

    // The states of these tests are integers and strings whose revision is
    // the integer itself or the string's length: a new value, a new revision.

    #[test]
    fn a_drag_is_one_step() {
        let mut h = History::new(0, 0);
        for (i, v) in [1, 2, 3, 4, 5].iter().enumerate() {
            h.feed(i as f64, v, *v, DRAG);
        }
        assert_eq!(h.undo_len(), 0, "nothing recorded while the pointer is down");
        h.feed(10.0, &5, 5, IDLE);
        assert_eq!(h.undo_len(), 1);
        assert_eq!(h.undo(&5, 5), Some((0, 0)));
        assert_eq!(h.redo(&0, 0), Some((5, 5)));
        assert_eq!(h.redo(&5, 5), None);
    }

    #[test]
    fn typing_settles_after_a_pause() {
        let mut h = History::new(String::new(), 0);
        h.feed(0.0, &"1".to_string(), 1, TYPE);
        h.feed(0.1, &"12".to_string(), 2, TYPE);
        h.feed(0.2, &"12".to_string(), 2, TYPE);
        assert_eq!(h.undo_len(), 0);
        h.feed(0.1 + TYPING_PAUSE + 0.01, &"12".to_string(), 2, TYPE);
        assert_eq!(h.undo_len(), 1);
        assert_eq!(h.undo(&"12".to_string(), 2).map(|s| s.0).as_deref(), Some(""));
    }

    #[test]
    fn undo_records_a_change_in_progress_and_edits_drop_redo() {
        let mut h = History::new(0, 0);
        h.feed(0.0, &1, 1, IDLE);
        h.feed(1.0, &2, 2, DRAG);
        // Undo during an unsettled change first records it, then undoes it.
        assert_eq!(h.undo(&2, 2), Some((1, 1)));
        assert_eq!(h.undo(&1, 1), Some((0, 0)));
        assert_eq!(h.undo(&0, 0), None);
        assert!(h.can_redo());
        h.feed(2.0, &7, 7, IDLE);
        assert!(!h.can_redo(), "a new edit discards the redo branch");
        assert_eq!(h.undo(&7, 7), Some((0, 0)));
    }

    #[test]
    fn the_oldest_steps_are_dropped_beyond_the_limit() {
        let mut h = History::new(0, 0);
        for v in 1..=(HISTORY_LIMIT as u64 + 10) {
            h.feed(v as f64, &v, v, IDLE);
        }
        assert_eq!(h.undo_len(), HISTORY_LIMIT);
        let mut last = None;
        let (mut cur, mut rev) = (HISTORY_LIMIT as u64 + 10, HISTORY_LIMIT as u64 + 10);
        while let Some((v, r)) = h.undo(&cur, rev) {
            (cur, rev) = (v, r);
            last = Some(v);
        }
        assert_eq!(last, Some(10), "the first ten steps were dropped");
    }
}
