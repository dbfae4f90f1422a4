//! Structural actions as values (egui_demo_app's `Command`): widgets and tools
//! push them, the app applies them once per frame, after drawing
//! ([`crate::EditorApp::run_command`]).

use crate::edit::PointId;
use crowdpatch::model::{Direction, Obstacle, Side};
use std::path::PathBuf;

/// One action on the document or the app.
#[must_use = "a command does nothing until the app runs it"]
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Adds an entry or exit at `(s, t)` and selects it.
    AddPoint {
        /// The side.
        side: Side,
        /// Entry or exit.
        direction: Direction,
        /// Arc position `[m]`.
        s: f64,
        /// Time `[s]`.
        t: f64,
    },
    /// Moves a point (part of a drag; not a step of its own).
    MovePoint {
        /// The point.
        id: PointId,
        /// New arc position `[m]`.
        s: f64,
        /// New time `[s]`.
        t: f64,
    },
    /// Deletes a point.
    DeletePoint(PointId),
    /// The point walks with its nearest neighbour on its side (joins its
    /// walking group or starts one with it; `crate::edit::join_nearest`).
    JoinGroup(PointId),
    /// The point walks alone (leaves its walking group).
    LeaveGroup(PointId),
    /// Adds an obstacle and selects it.
    AddObstacle(Obstacle),
    /// Replaces an obstacle's shape (part of a drag).
    SetObstacle(usize, Obstacle),
    /// Deletes an obstacle.
    DeleteObstacle(usize),
    /// Deletes whatever is selected.
    DeleteSelection,
    /// Sets a side to an inline copy of a pattern file.
    ApplyPattern {
        /// The side.
        side: Side,
        /// The pattern file.
        file: PathBuf,
        /// Reference the file (`{"pattern": "…"}`) instead of copying it.
        link: bool,
    },
    /// Saves a side as a pattern file (side-frame velocities) and rescans
    /// the library.
    SaveSideAsPattern {
        /// The side.
        side: Side,
        /// Where; an empty path asks for a file in the library folder.
        file: PathBuf,
    },
    /// Copies a referenced side into the document.
    InlineSide(Side),
    /// Removes every point of a side.
    ClearSide(Side),
    /// North := mirror(south), west := mirror(east): the patch tiles with itself.
    MakeTileable,
    /// Replaces the four sides by patterns generated at human pace
    /// (`crowdpatch::generate`): lanes whose walkers cross at their own
    /// speed, straight or round a corner, tiling with themselves.
    GeneratePatterns {
        /// Mean walkers per square metre `[1/m²]`.
        density: f64,
        /// Share of the walkers heading towards south, east, north, west.
        flows: [f64; 4],
        /// Share of the walkers turning a corner, heading north-east,
        /// north-west, south-west, south-east
        /// (`crowdpatch::generate::Diagonal::ALL`).
        corners: [f64; 4],
        /// Speeds of the real pedestrians of the reference (else Weidmann's).
        reference_speeds: bool,
        /// Share of the straight lanes' walkers who walk in groups, in
        /// `[0, 1)` (`crowdpatch::generate::GenerateParams::walking_groups`).
        walking_groups: f64,
        /// Seed of the draws.
        seed: u64,
        /// Add the lanes' points to those already on the sides instead of
        /// replacing them.
        add: bool,
    },
    /// Adds people standing in groups of two and three out of every
    /// walker's route (`crowdpatch::generate::standing_groups`), as many as
    /// make `share` of the people present stand.
    AddStandingGroups {
        /// Share of the people present who stand, in `[0, 0.9]`.
        share: f64,
        /// Seed of the places and group sizes.
        seed: u64,
    },
    /// Selects a walker of the last bake and shows it at `time` `[s]`:
    /// the timeline stops there and the patch view centres on the walker.
    ShowWalker {
        /// Agent index in the bake.
        agent: usize,
        /// Time `[s]` (any; taken modulo the period).
        time: f64,
    },
    /// Starts a bake of the current document.
    Bake,
    /// Cancels the running bake.
    CancelBake,
    /// Undo one step.
    Undo,
    /// Redo one step.
    Redo,
    /// New empty document (asks about unsaved changes).
    New,
    /// Opens a document (asks about unsaved changes; an empty path asks for a
    /// file).
    Open(PathBuf),
    /// Saves to the document's file (or asks for one).
    Save,
    /// Saves to `file` and makes it the document's file (an empty path asks
    /// for a file).
    SaveAs(PathBuf),
    /// Writes the baked GLB (an empty path asks for a file).
    ExportGlb(PathBuf),
    /// Bakes walkers as a character from now on (the built-in one or a
    /// glTF file, with a joint map and an animation source). Kept in the
    /// editor's settings, not in the document.
    SetCharacter(crate::bake_job::CharacterSettings),
    /// Bakes walkers as capsules from now on (no character).
    NoCharacter,
    /// Writes the PNG preview of the bake stages (an empty path asks for a file).
    ExportPng(PathBuf),
    /// Restores the document from an autosave file.
    Recover(PathBuf),
    /// Deletes an autosave file without restoring it.
    DiscardRecovery(PathBuf),
    /// Quits (asks about unsaved changes).
    Quit,
}

impl Command {
    /// Whether the command is a step of its own in the undo history (drags
    /// are recorded when the pointer is released).
    pub fn is_structural(&self) -> bool {
        matches!(
            self,
            Command::AddPoint { .. }
                | Command::DeletePoint(_)
                | Command::JoinGroup(_)
                | Command::LeaveGroup(_)
                | Command::AddObstacle(_)
                | Command::DeleteObstacle(_)
                | Command::DeleteSelection
                | Command::ApplyPattern { .. }
                | Command::InlineSide(_)
                | Command::ClearSide(_)
                | Command::MakeTileable
                | Command::GeneratePatterns { .. }
                | Command::AddStandingGroups { .. }
        )
    }
}
