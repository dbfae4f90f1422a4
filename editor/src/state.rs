//! App state shared by the panels, the views and the app (egui_demo_app's
//! `State`): the selection, the playback clock, what the views show, and
//! [`Cx`], what a panel or view may read and change while it is drawn.
//!
//! This module uses no panel, view or the app, so that they can all use it.

use crate::bake_job::BakeResult;
use crate::command::Command;
use crate::derived::Derived;
use crate::edit::PointId;
use crate::view::{ChartTransform, ViewTransform};
use crowdpatch::model::PatchDocument;

/// What is selected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Selection {
    /// Nothing.
    #[default]
    None,
    /// A boundary point.
    Point(PointId),
    /// An obstacle.
    Obstacle(usize),
    /// A walker of the last bake, by agent index (exogenous agents first,
    /// in matching order, then endogenous ones).
    Walker(usize),
}

/// What the central view shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewMode {
    /// The patch, top-down.
    Patch,
    /// The patch among its neighbours, 3×3.
    Tiling,
    /// The walkers of a skeletal bake as characters, in 3D.
    Walkers3d,
}

/// Which bake stages and overlays the patch view shows (seed paper Figure 7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StageToggles {
    /// (a) Matching lines.
    pub matching: bool,
    /// (b) Paths after collision removal.
    pub collision_free: bool,
    /// (c) Smoothed paths.
    pub smoothed: bool,
    /// Agents at the play time.
    pub agents: bool,
    /// Remaining collisions.
    pub collisions: bool,
}

impl Default for StageToggles {
    fn default() -> Self {
        StageToggles { matching: false, collision_free: false, smoothed: true, agents: true, collisions: true }
    }
}

/// Where things were drawn last frame (the tests click there).
#[derive(Debug, Clone, Copy, Default)]
pub struct Layout {
    /// The patch view.
    pub patch: Option<ViewTransform>,
    /// The four s–t charts, by side index.
    pub charts: [Option<ChartTransform>; 4],
}

/// The playback clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Playback {
    /// Play time `[s]` in `[0, π)`.
    pub time: f64,
    /// Playing.
    pub playing: bool,
    /// Playback speed factor.
    pub speed: f32,
    /// Loop at the end of the period (else stop).
    pub looping: bool,
}

impl Default for Playback {
    fn default() -> Self {
        Playback { time: 0.0, playing: false, speed: 1.0, looping: true }
    }
}

impl Playback {
    /// Advances the clock by `dt` `[s]` of wall time in a period of `period`
    /// `[s]` (when playing).
    pub fn advance(&mut self, dt: f64, period: f64) {
        if !self.playing {
            return;
        }
        self.time += dt * self.speed as f64;
        if self.time >= period {
            if self.looping {
                self.time = self.time.rem_euclid(period);
            } else {
                self.time = period - 1e-6;
                self.playing = false;
            }
        }
    }

    /// Steps the play time by `dt` `[s]`, wrapping in the period.
    pub fn step(&mut self, dt: f64, period: f64) {
        self.time = (self.time + dt).rem_euclid(period);
    }

    /// Stops at `time`.
    pub fn seek(&mut self, time: f64) {
        self.time = time;
        self.playing = false;
    }
}

/// What the views draw besides the document.
#[derive(Clone, Copy)]
pub struct Scene<'a> {
    /// The last finished bake.
    pub result: Option<&'a BakeResult>,
    /// Bake stages shown.
    pub stages: StageToggles,
    /// Play time `[s]`.
    pub time: f64,
    /// Patch or tiling view.
    pub mode: ViewMode,
}

/// What a panel or view may read and change while it is drawn (the egui
/// demo's context): the document, what is derived from it, the selection
/// and the command sink.
pub struct Cx<'a> {
    /// The document. Widgets may edit its fields directly and then set
    /// [`Cx::edited`]; structural changes go through [`Cx::commands`].
    pub doc: &'a mut PatchDocument,
    /// Derived from the document at the start of the frame.
    pub derived: &'a Derived,
    /// The selection.
    pub selection: &'a mut Selection,
    /// Commands to run after this frame.
    pub commands: &'a mut Vec<Command>,
    /// A widget changed the document: it gets a new revision after the panel.
    pub edited: bool,
    /// A widget refused a value (out of the format's range, or one that
    /// would move what the user did not touch): the status bar shows why.
    pub refused: Option<String>,
}

impl<'a> Cx<'a> {
    /// A context on these parts of the app.
    pub fn new(
        doc: &'a mut PatchDocument,
        derived: &'a Derived,
        selection: &'a mut Selection,
        commands: &'a mut Vec<Command>,
    ) -> Cx<'a> {
        Cx { doc, derived, selection, commands, edited: false, refused: None }
    }
}
