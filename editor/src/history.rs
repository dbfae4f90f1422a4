//! Undo and redo by document snapshots (egui's `Undoer` idea), settled so
//! that one gesture is one step: a change is recorded only once the pointer is
//! released (a whole drag becomes one step) and, while a text field has the
//! keyboard, once typing pauses.

/// Snapshot history of a document.
#[derive(Debug, Clone)]
pub struct History<T> {
    undo: Vec<T>,
    redo: Vec<T>,
    /// The last recorded state.
    settled: T,
    /// When the document last differed from the previous frame `[s]`.
    last_change: f64,
    /// The state seen last frame.
    last_seen: Option<T>,
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

impl<T: Clone + PartialEq> History<T> {
    /// A history whose first state is `state`.
    pub fn new(state: T) -> Self {
        History { undo: Vec::new(), redo: Vec::new(), settled: state, last_change: 0.0, last_seen: None, limit: 200 }
    }

    /// Forgets every step and starts from `state` (after loading a document).
    pub fn reset(&mut self, state: T) {
        *self = History::new(state);
    }

    /// Called once per frame with the current state and the time `[s]`;
    /// records a step when the rule says the edit has settled.
    pub fn feed(&mut self, now: f64, current: &T, rule: SettleRule) {
        if self.last_seen.as_ref() != Some(current) {
            self.last_change = now;
            self.last_seen = Some(current.clone());
        }
        if *current == self.settled || rule.pointer_busy && !rule.structural {
            return;
        }
        if rule.structural || !rule.typing || now - self.last_change >= TYPING_PAUSE {
            self.record(current);
        }
    }

    fn record(&mut self, current: &T) {
        let previous = std::mem::replace(&mut self.settled, current.clone());
        self.undo.push(previous);
        if self.undo.len() > self.limit {
            self.undo.remove(0);
        }
        self.redo.clear();
    }

    /// Whether there is something to undo (a recorded step, or a change in
    /// progress).
    pub fn can_undo(&self, current: &T) -> bool {
        !self.undo.is_empty() || *current != self.settled
    }

    /// Whether there is something to redo.
    pub fn can_redo(&self) -> bool {
        !self.redo.is_empty()
    }

    /// The state before the last step; a change in progress is recorded first,
    /// then undone.
    pub fn undo(&mut self, current: &T) -> Option<T> {
        if *current != self.settled {
            self.record(current);
        }
        let previous = self.undo.pop()?;
        let now = std::mem::replace(&mut self.settled, previous.clone());
        self.redo.push(now);
        self.last_seen = Some(previous.clone());
        Some(previous)
    }

    /// The state undone last.
    pub fn redo(&mut self, current: &T) -> Option<T> {
        if *current != self.settled {
            // Edited since the undo: the redo branch is gone.
            self.record(current);
            return None;
        }
        let next = self.redo.pop()?;
        let now = std::mem::replace(&mut self.settled, next.clone());
        self.undo.push(now);
        self.last_seen = Some(next.clone());
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

    #[test]
    fn a_drag_is_one_step() {
        let mut h = History::new(0);
        for (i, v) in [1, 2, 3, 4, 5].iter().enumerate() {
            h.feed(i as f64, v, DRAG);
        }
        assert_eq!(h.undo_len(), 0, "nothing recorded while the pointer is down");
        h.feed(10.0, &5, IDLE);
        assert_eq!(h.undo_len(), 1);
        assert_eq!(h.undo(&5), Some(0));
        assert_eq!(h.redo(&0), Some(5));
        assert_eq!(h.redo(&5), None);
    }

    #[test]
    fn typing_settles_after_a_pause() {
        let mut h = History::new(String::new());
        h.feed(0.0, &"1".to_string(), TYPE);
        h.feed(0.1, &"12".to_string(), TYPE);
        h.feed(0.2, &"12".to_string(), TYPE);
        assert_eq!(h.undo_len(), 0);
        h.feed(0.1 + TYPING_PAUSE + 0.01, &"12".to_string(), TYPE);
        assert_eq!(h.undo_len(), 1);
        assert_eq!(h.undo(&"12".to_string()).as_deref(), Some(""));
    }

    #[test]
    fn undo_records_a_change_in_progress_and_edits_drop_redo() {
        let mut h = History::new(0);
        h.feed(0.0, &1, IDLE);
        h.feed(1.0, &2, DRAG);
        // Undo during an unsettled change first records it, then undoes it.
        assert_eq!(h.undo(&2), Some(1));
        assert_eq!(h.undo(&1), Some(0));
        assert_eq!(h.undo(&0), None);
        assert!(h.can_redo());
        h.feed(2.0, &7, IDLE);
        assert!(!h.can_redo(), "a new edit discards the redo branch");
        assert_eq!(h.undo(&7), Some(0));
    }
}
