//! Number fields that change the document only when committed, and never
//! behind the user's back.
//!
//! egui's `DragValue` by default applies every keystroke (typing "12" passes
//! through 1) and clamps the value it shows to its range, even when nobody
//! touched it (opening a document with a period of 1200 s made it 600 s).
//! These fields apply a typed value when it is committed (Enter, or the
//! focus leaves), carry no range of their own, and leave the check of a
//! committed value to the caller, which refuses an out-of-range value with
//! a message (the format's own limits: [`crowdpatch::validate`]) instead of
//! clamping it.

/// A number field over `value` that applies a typed value when committed
/// and clamps nothing; `unit` is shown after the number.
pub fn number<'a, N: egui::emath::Numeric>(value: &'a mut N, speed: f64, unit: &str) -> egui::DragValue<'a> {
    egui::DragValue::new(value).speed(speed).suffix(unit).update_while_editing(false)
}

/// The message of a refused value: what was typed, why it is refused, and
/// that nothing changed.
pub fn refusal(what: &str, why: impl std::fmt::Display) -> String {
    format!("{what}: {why}; not applied, the document is unchanged")
}
