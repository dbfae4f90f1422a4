//! Keyboard shortcuts: read once per frame into [`Shortcut`] values that the
//! app then carries out, and the list shown in the help window.

use crate::command::Command;
use crate::tools::ToolKind;
use egui::{Key, KeyboardShortcut, Modifiers, Ui};
use std::path::PathBuf;

/// Every shortcut, for the help window and the README.
pub const SHORTCUTS: &[(&str, &str)] = &[
    ("Ctrl+N", "new document"),
    ("Ctrl+O", "open"),
    ("Ctrl+S", "save"),
    ("Ctrl+Shift+S", "save as"),
    ("Ctrl+Z", "undo"),
    ("Ctrl+Shift+Z, Ctrl+Y", "redo"),
    ("Ctrl+Q", "quit"),
    ("V", "select / move tool"),
    ("E", "add-entry tool"),
    ("X", "add-exit tool"),
    ("C", "circle-obstacle tool"),
    ("P", "polygon-obstacle tool"),
    ("Enter / Backspace / Esc", "close / undo last vertex / cancel a polygon"),
    ("Del", "delete the selection"),
    ("right click", "delete the point or obstacle under the pointer"),
    ("S", "snap on/off"),
    ("B", "bake"),
    ("Esc", "cancel the bake, else clear the selection"),
    ("Space", "play / pause"),
    ("Left / Right", "step the play time by 0.1 s"),
    ("T", "patch view / tiling 3×3"),
    ("Home", "reset pan and zoom"),
    ("scroll, middle or Alt+drag", "zoom, pan"),
    ("F1", "this window"),
];

/// One shortcut pressed this frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Shortcut {
    /// A command (Ctrl shortcuts, B).
    Command(Command),
    /// Enter, Escape or Backspace: for the tool first (closing or cancelling
    /// a polygon); unused, Escape cancels the bake or clears the selection
    /// and Backspace deletes the selection.
    ToolKey(Key),
    /// Switch tool.
    Tool(ToolKind),
    /// Delete the selection: `by_delete` when the Delete key was pressed,
    /// else Backspace was (which the tool may have used).
    Delete {
        /// The Delete key, not Backspace.
        by_delete: bool,
    },
    /// Play or pause.
    PlayPause,
    /// Patch view or tiling.
    ToggleView,
    /// Reset pan and zoom.
    ResetView,
    /// Show or hide the help window.
    Help,
    /// Snap on or off.
    Snap,
    /// Step the play time by this `[s]`.
    Step(f64),
}

/// The shortcuts pressed this frame, in the order they apply (Ctrl
/// shortcuts are consumed; the others are read only when no text field has
/// the keyboard).
pub fn read(ui: &mut Ui) -> Vec<Shortcut> {
    let cmd = |k| KeyboardShortcut::new(Modifiers::COMMAND, k);
    let cmd_shift = |k| KeyboardShortcut::new(Modifiers::COMMAND | Modifiers::SHIFT, k);
    let mut out = Vec::new();
    ui.input_mut(|i| {
        let mut push = |c| out.push(Shortcut::Command(c));
        if i.consume_shortcut(&cmd_shift(Key::Z)) || i.consume_shortcut(&cmd(Key::Y)) {
            push(Command::Redo);
        }
        if i.consume_shortcut(&cmd(Key::Z)) {
            push(Command::Undo);
        }
        if i.consume_shortcut(&cmd_shift(Key::S)) {
            push(Command::SaveAs(PathBuf::new()));
        }
        if i.consume_shortcut(&cmd(Key::S)) {
            push(Command::Save);
        }
        if i.consume_shortcut(&cmd(Key::O)) {
            push(Command::Open(PathBuf::new()));
        }
        if i.consume_shortcut(&cmd(Key::N)) {
            push(Command::New);
        }
        if i.consume_shortcut(&cmd(Key::Q)) {
            push(Command::Quit);
        }
    });
    if ui.ctx().egui_wants_keyboard_input() {
        return out;
    }
    let pressed = |k| ui.input(|i| i.key_pressed(k) && !i.modifiers.command);
    // Tool keys first: Enter, Escape and Backspace finish or cancel a polygon.
    out.extend([Key::Enter, Key::Escape, Key::Backspace].into_iter().filter(|k| pressed(*k)).map(Shortcut::ToolKey));
    out.extend(ToolKind::ALL.into_iter().filter(|k| pressed(k.key())).map(Shortcut::Tool));
    if pressed(Key::Delete) || pressed(Key::Backspace) {
        out.push(Shortcut::Delete { by_delete: pressed(Key::Delete) });
    }
    let keys = [
        (Key::Space, Shortcut::PlayPause),
        (Key::B, Shortcut::Command(Command::Bake)),
        (Key::T, Shortcut::ToggleView),
        (Key::Home, Shortcut::ResetView),
        (Key::F1, Shortcut::Help),
        (Key::Questionmark, Shortcut::Help),
        (Key::S, Shortcut::Snap),
        (Key::ArrowRight, Shortcut::Step(0.1)),
        (Key::ArrowLeft, Shortcut::Step(-0.1)),
    ];
    for (key, s) in keys {
        // F1 and ? together toggle once.
        if pressed(key) && !(s == Shortcut::Help && out.last() == Some(&Shortcut::Help)) {
            out.push(s);
        }
    }
    out
}
