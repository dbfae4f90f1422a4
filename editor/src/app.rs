//! The editor application: app state (selection, tool, bake job, playback,
//! caches, dialogs) around the saved document, the panels, and the command
//! loop. [`EditorApp::show`] draws one frame into a `Ui` and then runs the
//! commands the frame produced; the eframe wrapper ([`crate::run`]) and the
//! headless tests both drive it.

use crate::bake_job::{BakeJob, BakeResult, Poll, stage_name};
use crate::command::Command;
use crate::edit::{self, ClearanceWarning, PointId, ProblemTarget, SideSource, SideView};
use crate::files::{self, Autosave, DialogPurpose, FileDialog};
use crate::history::{History, SettleRule};
use crate::library::{self, LibraryEntry};
use crate::tools::{Pointer, Selection, Snap, Tool, ToolCx, ToolKind};
use crate::view::{self, ChartTransform, Layer, ViewTransform};
use crowdpatch::model::{
    DEFAULT_AGENT_RADIUS, DEFAULT_COMFORT_SPEED, Direction, MatchingMode, Obstacle, Patch, PatchDocument, Side,
    SolverKind,
};
use crowdpatch::problem::Problem;
use egui::{Color32, Key, KeyboardShortcut, Modifiers, Pos2, Rect, RichText, Sense, Stroke, Ui, vec2};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// What the central view shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewMode {
    /// The patch, top-down.
    Patch,
    /// The patch among its neighbours, 3×3.
    Tiling,
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

/// An unsaved-changes question in progress: what to do once answered.
#[derive(Debug, Clone, PartialEq)]
struct Prompt {
    then: Command,
}

/// Seconds without edits after which an automatic re-bake starts.
pub const AUTO_BAKE_DELAY: f64 = 0.6;
/// Seconds between autosaves of a changed document.
pub const AUTOSAVE_INTERVAL: f64 = 3.0;

/// The editor.
pub struct EditorApp {
    /// The document being edited (what is saved).
    pub doc: PatchDocument,
    /// Its file.
    pub file: Option<PathBuf>,
    saved: PatchDocument,
    history: History<PatchDocument>,
    /// The selection.
    pub selection: Selection,
    tool: Box<dyn Tool>,
    /// Snapping of positions and times.
    pub snap: Snap,
    pending: Vec<Command>,
    structural: bool,
    // Derived from the document, refreshed when it changes.
    cache_doc: Option<PatchDocument>,
    sides: [SideView; 4],
    /// Every validation problem of the document.
    pub problems: Vec<Problem>,
    /// The resolved patch, when the document is valid.
    pub resolved: Option<Patch>,
    /// Obstacle clearance warnings.
    pub warnings: Vec<ClearanceWarning>,
    /// Per side, the points with no mirror partner on the opposite side
    /// (tiling with itself).
    pub seams: [Vec<(Direction, usize)>; 4],
    point_problems: HashMap<PointId, Vec<String>>,
    obstacle_problems: HashMap<usize, Vec<String>>,
    // Bake.
    job: Option<BakeJob>,
    /// The last finished bake.
    pub result: Option<BakeResult>,
    /// Re-bake automatically once edits settle.
    pub auto_bake: bool,
    last_change: f64,
    seen_doc: Option<PatchDocument>,
    auto_baked: Option<PatchDocument>,
    // View.
    /// Bake stages shown.
    pub stages: StageToggles,
    /// Patch or tiling view.
    pub mode: ViewMode,
    pan: [f64; 2],
    zoom: f32,
    /// Where the views were drawn last frame.
    pub layout: Layout,
    // Playback.
    /// Play time `[s]` in `[0, π)`.
    pub time: f64,
    /// Playing.
    pub playing: bool,
    /// Playback speed factor.
    pub speed: f32,
    /// Loop at the end of the period (else stop).
    pub looping: bool,
    // Library.
    /// The pattern library folder.
    pub library_dir: PathBuf,
    library_text: String,
    library: Vec<LibraryEntry>,
    library_side: Side,
    // Files.
    state_dir: PathBuf,
    /// Recently opened files, most recent first.
    pub recent: Vec<PathBuf>,
    dialog: Option<FileDialog>,
    prompt: Option<Prompt>,
    discard_ok: bool,
    /// Autosaves of editors that crashed, offered for recovery.
    pub recovery: Vec<(PathBuf, Autosave)>,
    last_autosave: f64,
    autosaved: Option<PatchDocument>,
    /// The last message shown in the status bar, and whether it is an error.
    pub message: Option<(String, bool)>,
    error_window: Option<String>,
    show_help: bool,
    /// Quit was asked for and confirmed (the window closes).
    pub quit: bool,
    now: f64,
}

impl EditorApp {
    /// A new editor on an empty document; `state_dir` holds recent files and
    /// autosaves (see [`files::state_dir`]).
    pub fn new(state_dir: PathBuf) -> EditorApp {
        let doc = new_document();
        let recent = files::load_recent(&state_dir);
        let recovery = files::orphaned_autosaves(&state_dir);
        let library_dir = library::default_dir(None);
        let mut app = EditorApp {
            saved: doc.clone(),
            history: History::new(doc.clone()),
            doc,
            file: None,
            selection: Selection::None,
            tool: ToolKind::Select.make(),
            snap: Snap { on: true, space: 0.25, time: 0.25 },
            pending: Vec::new(),
            structural: false,
            cache_doc: None,
            sides: std::array::from_fn(|_| SideView {
                pattern: crowdpatch::model::Pattern::empty(16.0, 10.0),
                source: SideSource::Empty,
            }),
            problems: vec![],
            resolved: None,
            warnings: vec![],
            seams: Default::default(),
            point_problems: HashMap::new(),
            obstacle_problems: HashMap::new(),
            job: None,
            result: None,
            auto_bake: false,
            last_change: 0.0,
            seen_doc: None,
            auto_baked: None,
            stages: StageToggles::default(),
            mode: ViewMode::Patch,
            pan: [0.0, 0.0],
            zoom: 1.0,
            layout: Layout::default(),
            time: 0.0,
            playing: false,
            speed: 1.0,
            looping: true,
            library_text: library_dir.display().to_string(),
            library: library::scan(&library_dir),
            library_dir,
            library_side: Side::South,
            state_dir,
            recent,
            dialog: None,
            prompt: None,
            discard_ok: false,
            recovery,
            last_autosave: 0.0,
            autosaved: None,
            message: None,
            error_window: None,
            show_help: false,
            quit: false,
            now: 0.0,
        };
        app.refresh();
        app
    }

    /// Opens `file` (as [`Command::Open`] would, without asking).
    pub fn open(&mut self, file: &Path) {
        self.discard_ok = true;
        self.run_command(Command::Open(file.to_path_buf()));
    }

    /// The current tool.
    pub fn tool(&self) -> ToolKind {
        self.tool.kind()
    }

    /// Switches tool.
    pub fn set_tool(&mut self, kind: ToolKind) {
        if self.tool.kind() != kind {
            self.tool = kind.make();
        }
    }

    /// Queues a command for the end of the frame.
    pub fn queue(&mut self, command: Command) {
        self.pending.push(command);
    }

    /// Whether the document differs from its file.
    pub fn dirty(&self) -> bool {
        self.doc != self.saved
    }

    /// Whether a bake is running.
    pub fn baking(&self) -> bool {
        self.job.is_some()
    }

    /// Whether an unsaved-changes question is open.
    pub fn prompting(&self) -> bool {
        self.prompt.is_some()
    }

    /// The side views (side-frame points) of the document.
    pub fn sides(&self) -> &[SideView; 4] {
        &self.sides
    }

    fn base_dir(&self) -> PathBuf {
        match self.file.as_deref().and_then(Path::parent) {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        }
    }

    fn say(&mut self, text: impl Into<String>) {
        self.message = Some((text.into(), false));
    }

    fn fail(&mut self, text: impl Into<String>) {
        self.message = Some((text.into(), true));
    }

    /// Recomputes what is derived from the document when it changed.
    fn refresh(&mut self) {
        if self.cache_doc.as_ref() == Some(&self.doc) {
            return;
        }
        let base = self.base_dir();
        self.sides = std::array::from_fn(|k| edit::side_view(&self.doc, Side::from_index(k), &base));
        let (resolved, problems) = match self.doc.resolve(None, &base) {
            Ok(p) => (Some(p), vec![]),
            Err(problems) => (None, problems),
        };
        self.resolved = resolved;
        self.problems = problems;
        self.warnings = edit::clearance_warnings(&self.doc);
        let comfort = self.doc.comfort_speed.unwrap_or(DEFAULT_COMFORT_SPEED);
        self.seams = std::array::from_fn(|k| {
            let side = Side::from_index(k);
            edit::seam_mismatches_of(
                &self.sides[k].pattern,
                &self.sides[side.opposite().index()].pattern,
                self.doc.period,
                comfort,
                1e-6,
            )
        });
        self.point_problems.clear();
        self.obstacle_problems.clear();
        for p in &self.problems {
            match edit::problem_target(&p.path.to_string()) {
                ProblemTarget::Point(id) => self.point_problems.entry(id).or_default().push(p.message.clone()),
                ProblemTarget::Obstacle(k) => {
                    self.obstacle_problems.entry(k).or_default().push(format!("{} {}", p.path, p.message))
                }
                _ => {}
            }
        }
        // "a and b are too close": mark the other point too.
        for p in &self.problems {
            if let Some(rest) = p.message.strip_prefix("and ")
                && let Some(other) = rest.split_whitespace().next()
                && let ProblemTarget::Point(id) = edit::problem_target(other)
            {
                self.point_problems.entry(id).or_default().push(format!("{} {}", p.path, p.message));
            }
        }
        self.cache_doc = Some(self.doc.clone());
    }

    // ------------------------------------------------------------------
    // The frame.

    /// Draws one frame into `ui`, then runs the commands it produced, feeds
    /// the undo history, polls the bake, re-bakes and autosaves as needed.
    pub fn show(&mut self, ui: &mut Ui) {
        self.now = ui.input(|i| i.time);
        self.structural = false;
        self.refresh();
        self.poll_bake(ui.ctx());
        self.advance_playback(ui);
        self.shortcuts(ui);

        egui::Panel::top("menu").show(ui, |ui| self.menu_bar(ui));
        egui::Panel::bottom("status").show(ui, |ui| self.status_bar(ui));
        egui::Panel::bottom("timeline").show(ui, |ui| self.timeline(ui));
        egui::Panel::left("left").resizable(true).default_size(300.0).show(ui, |ui| {
            egui::ScrollArea::vertical().id_salt("left-scroll").show(ui, |ui| self.left_panel(ui));
        });
        egui::Panel::right("right").resizable(true).default_size(340.0).max_size(420.0).show(ui, |ui| {
            egui::ScrollArea::vertical().id_salt("right-scroll").show(ui, |ui| self.right_panel(ui));
        });
        egui::CentralPanel::default().show(ui, |ui| self.central(ui));
        self.windows(ui.ctx());

        let commands = std::mem::take(&mut self.pending);
        if !commands.is_empty() {
            // Show the result of the commands in the next frame right away.
            ui.ctx().request_repaint();
        }
        for c in commands {
            self.run_command(c);
        }
        self.refresh();
        self.after_frame(ui.ctx());
    }

    fn after_frame(&mut self, ctx: &egui::Context) {
        let pointer_busy = ctx.input(|i| i.pointer.any_down());
        let typing = ctx.egui_wants_keyboard_input();
        self.history.feed(self.now, &self.doc, SettleRule { pointer_busy, typing, structural: self.structural });
        if self.seen_doc.as_ref() != Some(&self.doc) {
            self.seen_doc = Some(self.doc.clone());
            self.last_change = self.now;
        }
        // Automatic re-bake once edits settle.
        if self.auto_bake
            && !pointer_busy
            && self.now - self.last_change >= AUTO_BAKE_DELAY
            && self.auto_baked.as_ref() != Some(&self.doc)
            && self.result.as_ref().is_none_or(|r| r.document != self.doc)
        {
            self.auto_baked = Some(self.doc.clone());
            if self.resolved.is_some() {
                self.start_bake(ctx);
            }
        } else if self.auto_bake && self.auto_baked.as_ref() != Some(&self.doc) {
            ctx.request_repaint_after(std::time::Duration::from_secs_f64(AUTO_BAKE_DELAY / 2.0));
        }
        // Autosave.
        if self.dirty() && self.autosaved.as_ref() != Some(&self.doc) {
            if self.now - self.last_autosave >= AUTOSAVE_INTERVAL {
                match files::write_autosave(&self.state_dir, self.file.as_deref(), &self.doc) {
                    Ok(_) => self.autosaved = Some(self.doc.clone()),
                    Err(e) => self.fail(format!("autosave failed: {e}")),
                }
                self.last_autosave = self.now;
            } else {
                ctx.request_repaint_after(std::time::Duration::from_secs_f64(AUTOSAVE_INTERVAL));
            }
        } else if !self.dirty() && self.autosaved.is_some() {
            files::remove_autosave(&self.state_dir);
            self.autosaved = None;
        }
        // Closing the window.
        if ctx.input(|i| i.viewport().close_requested()) && !self.quit {
            if self.dirty() {
                ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
                self.prompt = Some(Prompt { then: Command::Quit });
            } else {
                self.quit = true;
            }
        }
        if self.quit {
            files::remove_autosave(&self.state_dir);
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        }
    }

    fn poll_bake(&mut self, ctx: &egui::Context) {
        let Some(job) = &self.job else { return };
        match job.poll() {
            Poll::Running => ctx.request_repaint_after(std::time::Duration::from_millis(100)),
            Poll::Done(r) => {
                let converged = r.bake.converged();
                let msg = format!(
                    "baked {} agents in {:.2} s: {}",
                    r.bake.agents.len(),
                    r.seconds,
                    if converged {
                        "collision-free".to_string()
                    } else {
                        format!("{} collisions remain", r.bake.remaining.len())
                    }
                );
                self.result = Some(*r);
                self.job = None;
                if converged { self.say(msg) } else { self.fail(msg) }
            }
            Poll::Cancelled => {
                self.job = None;
                self.say("bake cancelled");
            }
            Poll::Failed(e) => {
                self.job = None;
                self.fail(format!("bake failed: {e}"));
            }
        }
    }

    /// Waits for the running bake, if any, and takes its result (tests).
    pub fn wait_for_bake(&mut self) {
        if let Some(job) = self.job.take() {
            match job.wait() {
                Poll::Done(r) => self.result = Some(*r),
                Poll::Cancelled => self.say("bake cancelled"),
                Poll::Failed(e) => self.fail(e),
                Poll::Running => {}
            }
        }
    }

    fn period(&self) -> f64 {
        self.result.as_ref().map_or(self.doc.period, |r| r.baked.header.period)
    }

    fn advance_playback(&mut self, ui: &Ui) {
        if !self.playing {
            return;
        }
        let dt = ui.input(|i| i.stable_dt).min(0.1) as f64;
        let period = self.period();
        self.time += dt * self.speed as f64;
        if self.time >= period {
            if self.looping {
                self.time = self.time.rem_euclid(period);
            } else {
                self.time = period - 1e-6;
                self.playing = false;
            }
        }
        ui.ctx().request_repaint();
    }

    fn shortcuts(&mut self, ui: &mut Ui) {
        let cmd = |k| KeyboardShortcut::new(Modifiers::COMMAND, k);
        let cmd_shift = |k| KeyboardShortcut::new(Modifiers::COMMAND | Modifiers::SHIFT, k);
        let mut out = Vec::new();
        ui.input_mut(|i| {
            if i.consume_shortcut(&cmd_shift(Key::Z)) || i.consume_shortcut(&cmd(Key::Y)) {
                out.push(Command::Redo);
            }
            if i.consume_shortcut(&cmd(Key::Z)) {
                out.push(Command::Undo);
            }
            if i.consume_shortcut(&cmd_shift(Key::S)) {
                out.push(Command::SaveAs(PathBuf::new()));
            }
            if i.consume_shortcut(&cmd(Key::S)) {
                out.push(Command::Save);
            }
            if i.consume_shortcut(&cmd(Key::O)) {
                out.push(Command::Open(PathBuf::new()));
            }
            if i.consume_shortcut(&cmd(Key::N)) {
                out.push(Command::New);
            }
            if i.consume_shortcut(&cmd(Key::Q)) {
                out.push(Command::Quit);
            }
        });
        self.pending.extend(out);
        if ui.ctx().egui_wants_keyboard_input() {
            return;
        }
        let pressed = |k| ui.input(|i| i.key_pressed(k) && !i.modifiers.command);
        // Tool keys first: Enter, Escape and Backspace finish or cancel a polygon.
        let mut backspace_used = false;
        for key in [Key::Enter, Key::Escape, Key::Backspace] {
            if pressed(key) {
                let EditorApp { doc, sides, selection, pending, tool, snap, time, .. } = self;
                let mut cx = ToolCx { doc, sides, selection, commands: pending, snap: *snap, time: *time };
                let used = tool.key(&mut cx, key);
                backspace_used |= used && key == Key::Backspace;
                if !used && key == Key::Escape {
                    if self.job.is_some() {
                        self.pending.push(Command::CancelBake);
                    } else {
                        self.selection = Selection::None;
                    }
                }
            }
        }
        for kind in ToolKind::ALL {
            if pressed(kind.key()) {
                self.set_tool(kind);
            }
        }
        if pressed(Key::Delete) || pressed(Key::Backspace) && !backspace_used {
            self.pending.push(Command::DeleteSelection);
        }
        if pressed(Key::Space) {
            self.playing = !self.playing;
        }
        if pressed(Key::B) {
            self.pending.push(Command::Bake);
        }
        if pressed(Key::T) {
            self.mode = if self.mode == ViewMode::Patch { ViewMode::Tiling } else { ViewMode::Patch };
        }
        if pressed(Key::Home) {
            self.pan = [0.0, 0.0];
            self.zoom = 1.0;
        }
        if pressed(Key::F1) || pressed(Key::Questionmark) {
            self.show_help = !self.show_help;
        }
        if pressed(Key::S) {
            self.snap.on = !self.snap.on;
        }
        let period = self.period();
        if pressed(Key::ArrowRight) {
            self.time = (self.time + 0.1).rem_euclid(period);
        }
        if pressed(Key::ArrowLeft) {
            self.time = (self.time - 0.1).rem_euclid(period);
        }
    }

    // ------------------------------------------------------------------
    // Commands.

    /// Runs one command now.
    pub fn run_command(&mut self, command: Command) {
        if command.is_structural() {
            self.structural = true;
        }
        let base = self.base_dir();
        match command {
            Command::AddPoint { side, direction, s, t } => {
                let id = edit::add_point(&mut self.doc, side, direction, s, t, &base);
                self.selection = Selection::Point(id);
            }
            Command::MovePoint { id, s, t } => {
                edit::move_point(&mut self.doc, id, s, t, &base);
            }
            Command::DeletePoint(id) => {
                if edit::delete_point(&mut self.doc, id, &base) {
                    self.selection = Selection::None;
                }
            }
            Command::AddObstacle(o) => {
                self.doc.obstacles.push(o);
                self.selection = Selection::Obstacle(self.doc.obstacles.len() - 1);
            }
            Command::SetObstacle(k, o) => {
                if let Some(slot) = self.doc.obstacles.get_mut(k) {
                    *slot = o;
                }
            }
            Command::DeleteObstacle(k) => {
                if k < self.doc.obstacles.len() {
                    self.doc.obstacles.remove(k);
                    self.selection = Selection::None;
                }
            }
            Command::DeleteSelection => match self.selection {
                Selection::Point(id) => self.run_command(Command::DeletePoint(id)),
                Selection::Obstacle(k) => self.run_command(Command::DeleteObstacle(k)),
                Selection::None => {}
            },
            Command::ApplyPattern { side, file, link } => match crowdpatch::document::load_pattern(&file) {
                Ok(p) => {
                    if p.length != self.doc.size || p.period != self.doc.period {
                        self.fail(format!(
                            "{}: length {} m and period {} s do not match the patch's {} m and {} s",
                            file.display(),
                            p.length,
                            p.period,
                            self.doc.size,
                            self.doc.period
                        ));
                        return;
                    }
                    let rel = edit::relative_path(&file, &base);
                    match (link, rel) {
                        (true, Some(rel)) => {
                            *self.doc.sides.slot_mut(side) = Some(crowdpatch::model::SideDocument {
                                pattern: Some(rel.clone()),
                                ..Default::default()
                            });
                            self.say(format!("the {side} side now references {rel}"));
                        }
                        _ => {
                            edit::set_side_inline(&mut self.doc, side, &p);
                            self.say(format!("copied {} onto the {side} side", file.display()));
                        }
                    }
                    self.selection = Selection::None;
                }
                Err(e) => self.fail(e.to_string()),
            },
            Command::SaveSideAsPattern { side, file } => {
                let view = edit::side_view(&self.doc, side, &base);
                let mut p = view.pattern;
                p.name = Some(crowdpatch::document::file_stem(&file));
                match crowdpatch::document::save_pattern(&p, &file) {
                    Ok(()) => {
                        self.say(format!("saved the {side} side as {}", file.display()));
                        self.library = library::scan(&self.library_dir);
                    }
                    Err(e) => self.fail(format!("{}: {e}", file.display())),
                }
            }
            Command::InlineSide(side) => {
                edit::inline_side(&mut self.doc, side, &base);
            }
            Command::ClearSide(side) => {
                *self.doc.sides.slot_mut(side) = None;
                self.selection = Selection::None;
            }
            Command::MakeTileable => {
                edit::make_tileable(&mut self.doc, &base);
                self.say("north is now the mirror of south and west the mirror of east: the patch tiles with itself");
            }
            Command::Bake => {
                self.refresh();
                if self.resolved.is_some() {
                    if let Some(j) = &self.job {
                        j.cancel();
                    }
                    self.job = None;
                    self.start_bake_now();
                } else {
                    self.fail(format!("cannot bake: {} problem(s); see the Problems panel", self.problems.len()));
                }
            }
            Command::CancelBake => {
                if let Some(j) = &self.job {
                    j.cancel();
                }
            }
            Command::Undo => {
                if let Some(d) = self.history.undo(&self.doc) {
                    self.doc = d;
                    self.fix_selection();
                    self.say("undone");
                }
            }
            Command::Redo => {
                if let Some(d) = self.history.redo(&self.doc) {
                    self.doc = d;
                    self.fix_selection();
                    self.say("redone");
                }
            }
            c @ (Command::New | Command::Open(_) | Command::Quit) => {
                let asked = std::mem::take(&mut self.discard_ok);
                if self.dirty() && !asked {
                    self.prompt = Some(Prompt { then: c });
                    return;
                }
                match c {
                    Command::New => {
                        self.load(new_document(), None);
                        self.say("new document");
                    }
                    Command::Open(p) if p.as_os_str().is_empty() => {
                        self.dialog = Some(FileDialog::new(DialogPurpose::Open, self.dialog_dir(), String::new()));
                    }
                    Command::Open(p) => self.open_now(&p),
                    _ => self.quit = true,
                }
            }
            Command::Save => match self.file.clone() {
                Some(f) => self.save_to(&f),
                None => self.run_command(Command::SaveAs(PathBuf::new())),
            },
            Command::SaveAs(p) if p.as_os_str().is_empty() => {
                let name = self.file.as_deref().and_then(|f| f.file_name()).map_or_else(
                    || format!("{}.patch.json", self.doc.name.clone().unwrap_or_else(|| "untitled".into())),
                    |n| n.to_string_lossy().into_owned(),
                );
                self.dialog = Some(FileDialog::new(DialogPurpose::SaveAs, self.dialog_dir(), name));
            }
            Command::SaveAs(p) => self.save_to(&p),
            Command::ExportGlb(p) if p.as_os_str().is_empty() => self.open_export_dialog(false),
            Command::ExportPng(p) if p.as_os_str().is_empty() => self.open_export_dialog(true),
            Command::ExportGlb(p) => self.export(&p, false),
            Command::ExportPng(p) => self.export(&p, true),
            Command::Recover(p) => {
                let found = self.recovery.iter().find(|(f, _)| *f == p).cloned();
                match found {
                    Some((_, a)) => {
                        self.load(a.document.clone(), a.file.clone());
                        // Recovered work is unsaved: compare with the file on disk.
                        self.saved = match &a.file {
                            Some(f) => crowdpatch::document::read_patch_document(f)
                                .map(|d| d.0)
                                .unwrap_or_else(|_| new_document()),
                            None => new_document(),
                        };
                        let _ = std::fs::remove_file(&p);
                        self.recovery.retain(|(f, _)| *f != p);
                        self.autosaved = None;
                        self.say("recovered the autosaved document; save it to keep it");
                    }
                    None => self.fail(format!("{}: no such autosave", p.display())),
                }
            }
            Command::DiscardRecovery(p) => {
                let _ = std::fs::remove_file(&p);
                self.recovery.retain(|(f, _)| *f != p);
            }
        }
    }

    fn dialog_dir(&self) -> PathBuf {
        match self.file.as_deref().and_then(Path::parent) {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => {
                let patches = Path::new("patches");
                if patches.is_dir() { patches.to_path_buf() } else { PathBuf::from(".") }
            }
        }
    }

    fn fix_selection(&mut self) {
        let ok = match self.selection {
            Selection::Point(id) => {
                edit::side_view(&self.doc, id.side, &self.base_dir()).pattern.points(id.direction).len() > id.index
            }
            Selection::Obstacle(k) => k < self.doc.obstacles.len(),
            Selection::None => true,
        };
        if !ok {
            self.selection = Selection::None;
        }
    }

    fn load(&mut self, doc: PatchDocument, file: Option<PathBuf>) {
        if let Some(j) = self.job.take() {
            j.cancel();
        }
        self.doc = doc.clone();
        self.saved = doc.clone();
        self.history.reset(doc);
        self.file = file;
        self.selection = Selection::None;
        self.result = None;
        self.auto_baked = None;
        self.time = 0.0;
        self.pan = [0.0, 0.0];
        self.zoom = 1.0;
        self.cache_doc = None;
        if self.autosaved.take().is_some() {
            files::remove_autosave(&self.state_dir);
        }
        self.library_dir = library::default_dir(self.file.as_deref());
        self.library_text = self.library_dir.display().to_string();
        self.library = library::scan(&self.library_dir);
        self.refresh();
    }

    fn open_now(&mut self, p: &Path) {
        match crowdpatch::document::read_patch_document(p) {
            Ok((doc, unknown)) => {
                self.load(doc, Some(p.to_path_buf()));
                if let Err(e) = files::push_recent(&self.state_dir, &mut self.recent, p) {
                    self.fail(format!("could not update the recent files: {e}"));
                }
                if unknown.is_empty() {
                    self.say(format!("opened {}", p.display()));
                } else {
                    let list: Vec<String> = unknown.iter().map(|u| u.path.to_string()).collect();
                    self.fail(format!(
                        "opened {}; unknown fields are ignored and will be dropped on save: {}",
                        p.display(),
                        list.join(", ")
                    ));
                }
            }
            Err(e) => {
                self.error_window = Some(format!("Could not open {}:\n{e}", p.display()));
                self.fail(format!("could not open {}", p.display()));
            }
        }
    }

    fn save_to(&mut self, p: &Path) {
        // Pattern references are relative to the document: re-base them when
        // saving somewhere else.
        let old_base = self.base_dir();
        let new_base = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf();
        let mut doc = self.doc.clone();
        if edit::absolute(&old_base) != edit::absolute(&new_base) {
            for side in Side::ALL {
                if let Some(d) = doc.sides.slot_mut(side)
                    && let Some(rel) = &d.pattern
                {
                    match edit::relative_path(&old_base.join(rel), &new_base) {
                        Some(r) => d.pattern = Some(r),
                        None => {
                            edit::inline_side(&mut doc, side, &old_base);
                        }
                    }
                }
            }
        }
        match crowdpatch::io::write_atomic(p, doc.to_json().as_bytes()) {
            Ok(()) => {
                self.doc = doc.clone();
                self.saved = doc;
                self.file = Some(p.to_path_buf());
                self.cache_doc = None;
                files::remove_autosave(&self.state_dir);
                self.autosaved = None;
                let _ = files::push_recent(&self.state_dir, &mut self.recent, p);
                self.say(format!("saved {}", p.display()));
            }
            Err(e) => {
                self.error_window = Some(format!("Could not save {}:\n{e}\nThe document is unchanged.", p.display()));
                self.fail(format!("could not save {}: {e}", p.display()));
            }
        }
    }

    fn export(&mut self, p: &Path, png: bool) {
        let Some(r) = &self.result else {
            self.fail("nothing to export: bake first (B)");
            return;
        };
        let out = if png { crate::export::write_png(&r.bake, p) } else { crate::export::write_glb(&r.bake, p) };
        match out {
            Ok(()) => {
                let stale =
                    if r.document != self.doc { " (of the last bake; the document has changed since)" } else { "" };
                self.say(format!("exported {}{stale}", p.display()))
            }
            Err(e) => self.fail(format!("export failed: {e:#}")),
        }
    }

    fn start_bake_now(&mut self) {
        let Some(patch) = self.resolved.clone() else { return };
        self.job = Some(BakeJob::start(patch, self.doc.clone(), || {}));
        self.say("baking…");
    }

    fn start_bake(&mut self, ctx: &egui::Context) {
        let Some(patch) = self.resolved.clone() else { return };
        if let Some(j) = self.job.take() {
            j.cancel();
        }
        let ctx = ctx.clone();
        self.job = Some(BakeJob::start(patch, self.doc.clone(), move || ctx.request_repaint()));
        self.say("baking…");
    }

    // ------------------------------------------------------------------
    // Panels.

    fn menu_bar(&mut self, ui: &mut Ui) {
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("File", |ui| {
                if ui.button("New            Ctrl+N").clicked() {
                    self.pending.push(Command::New);
                }
                if ui.button("Open…          Ctrl+O").clicked() {
                    self.pending.push(Command::Open(PathBuf::new()));
                }
                ui.menu_button("Open recent", |ui| {
                    if self.recent.is_empty() {
                        ui.label("(none yet)");
                    }
                    for f in self.recent.clone() {
                        if ui.button(f.display().to_string()).clicked() {
                            self.pending.push(Command::Open(f));
                        }
                    }
                });
                ui.separator();
                if ui.button("Save           Ctrl+S").clicked() {
                    self.pending.push(Command::Save);
                }
                if ui.button("Save as…       Ctrl+Shift+S").clicked() {
                    self.pending.push(Command::SaveAs(PathBuf::new()));
                }
                ui.separator();
                let has = self.result.is_some();
                if ui.add_enabled(has, egui::Button::new("Export GLB…")).clicked() {
                    self.open_export_dialog(false);
                }
                if ui.add_enabled(has, egui::Button::new("Export PNG preview…")).clicked() {
                    self.open_export_dialog(true);
                }
                ui.separator();
                if ui.button("Quit           Ctrl+Q").clicked() {
                    self.pending.push(Command::Quit);
                }
            });
            ui.menu_button("Edit", |ui| {
                if ui.add_enabled(self.history.can_undo(&self.doc), egui::Button::new("Undo   Ctrl+Z")).clicked() {
                    self.pending.push(Command::Undo);
                }
                if ui.add_enabled(self.history.can_redo(), egui::Button::new("Redo   Ctrl+Shift+Z")).clicked() {
                    self.pending.push(Command::Redo);
                }
                ui.separator();
                if ui.button("Delete selection   Del").clicked() {
                    self.pending.push(Command::DeleteSelection);
                }
                if ui.button("Make tileable (north = mirror of south, west = mirror of east)").clicked() {
                    self.pending.push(Command::MakeTileable);
                }
            });
            ui.menu_button("Bake", |ui| {
                if ui.button("Bake   B").clicked() {
                    self.pending.push(Command::Bake);
                }
                if ui.add_enabled(self.job.is_some(), egui::Button::new("Cancel   Esc")).clicked() {
                    self.pending.push(Command::CancelBake);
                }
                ui.checkbox(&mut self.auto_bake, "Re-bake automatically after edits");
            });
            ui.menu_button("View", |ui| {
                ui.radio_value(&mut self.mode, ViewMode::Patch, "Patch   T");
                ui.radio_value(&mut self.mode, ViewMode::Tiling, "Tiling 3×3   T");
                if ui.button("Reset view   Home").clicked() {
                    self.pan = [0.0, 0.0];
                    self.zoom = 1.0;
                }
            });
            ui.menu_button("Help", |ui| {
                if ui.button("Keyboard shortcuts   F1").clicked() {
                    self.show_help = true;
                }
            });
            ui.separator();
            let name = self.file.as_deref().map_or("untitled".to_string(), |f| f.display().to_string());
            ui.label(RichText::new(format!("{name}{}", if self.dirty() { " •" } else { "" })).strong());
        });
    }

    fn open_export_dialog(&mut self, png: bool) {
        let stem = self
            .file
            .as_deref()
            .map(crowdpatch::document::file_stem)
            .or_else(|| self.doc.name.clone())
            .unwrap_or_else(|| "patch".into());
        let purpose = if png { DialogPurpose::ExportPng } else { DialogPurpose::ExportGlb };
        self.dialog = Some(FileDialog::new(purpose, self.dialog_dir(), format!("{stem}{}", purpose.suffix())));
    }

    fn status_bar(&mut self, ui: &mut Ui) {
        ui.horizontal(|ui| {
            match &self.message {
                Some((m, true)) => ui.colored_label(view::PROBLEM, m),
                Some((m, false)) => ui.label(m),
                None => ui.label("Ready. F1 lists the shortcuts."),
            };
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                ui.label(RichText::new(self.tool.hint()).weak());
            });
        });
    }

    fn timeline(&mut self, ui: &mut Ui) {
        let period = self.period();
        ui.horizontal(|ui| {
            let label = if self.playing { "Pause" } else { "Play" };
            if ui.button(label).on_hover_text("Space").clicked() {
                self.playing = !self.playing;
            }
            if ui.button("|<").on_hover_text("Back to t = 0").clicked() {
                self.time = 0.0;
            }
            ui.label("t");
            let mut t = self.time;
            let slider = egui::Slider::new(&mut t, 0.0..=period).suffix(" s").fixed_decimals(2).text("time");
            ui.spacing_mut().slider_width = (ui.available_width() - 360.0).max(120.0);
            if ui.add(slider).changed() {
                self.time = t.min(period - 1e-6).max(0.0);
            }
            ui.label("speed");
            egui::ComboBox::from_id_salt("speed").selected_text(format!("{}×", self.speed)).show_ui(ui, |ui| {
                for s in [0.1f32, 0.25, 0.5, 1.0, 2.0, 4.0] {
                    ui.selectable_value(&mut self.speed, s, format!("{s}×"));
                }
            });
            ui.checkbox(&mut self.looping, "Loop");
        });
    }

    fn left_panel(&mut self, ui: &mut Ui) {
        ui.heading("Tools");
        ui.horizontal_wrapped(|ui| {
            for kind in ToolKind::ALL {
                let on = self.tool.kind() == kind;
                if ui.selectable_label(on, kind.label()).on_hover_text(format!("key {:?}", kind.key())).clicked() {
                    self.set_tool(kind);
                }
            }
        });
        ui.horizontal(|ui| {
            ui.checkbox(&mut self.snap.on, "Snap");
            ui.add(egui::DragValue::new(&mut self.snap.space).range(0.01..=4.0).speed(0.01).suffix(" m"));
            ui.add(egui::DragValue::new(&mut self.snap.time).range(0.01..=5.0).speed(0.01).suffix(" s"));
        });
        ui.separator();
        egui::CollapsingHeader::new("Parameters").default_open(true).show(ui, |ui| self.parameters(ui));
        egui::CollapsingHeader::new("Pattern library").default_open(true).show(ui, |ui| self.library_panel(ui));
        egui::CollapsingHeader::new("Sides").default_open(true).show(ui, |ui| self.sides_panel(ui));
    }

    fn parameters(&mut self, ui: &mut Ui) {
        let doc = &mut self.doc;
        egui::Grid::new("params").num_columns(2).striped(true).show(ui, |ui| {
            let l = ui.label("Name");
            let mut name = doc.name.clone().unwrap_or_default();
            if ui.text_edit_singleline(&mut name).labelled_by(l.id).changed() {
                doc.name = if name.is_empty() { None } else { Some(name) };
            }
            ui.end_row();
            let l = ui.label("Size L");
            ui.add(egui::DragValue::new(&mut doc.size).range(1.0..=1000.0).speed(0.1).suffix(" m")).labelled_by(l.id);
            ui.end_row();
            let l = ui.label("Period π");
            ui.add(egui::DragValue::new(&mut doc.period).range(0.5..=600.0).speed(0.1).suffix(" s")).labelled_by(l.id);
            ui.end_row();
            opt_value(ui, "Agent radius r", &mut doc.agent_radius, DEFAULT_AGENT_RADIUS, 0.01..=4.0, " m");
            opt_value(ui, "Comfort speed", &mut doc.comfort_speed, DEFAULT_COMFORT_SPEED, 0.1..=5.0, " m/s");
            let l = ui.label("Seed");
            let mut seed = doc.seed.unwrap_or(0);
            if ui.add(egui::DragValue::new(&mut seed)).labelled_by(l.id).changed() {
                doc.seed = Some(seed);
            }
            ui.end_row();
            ui.label("Matching");
            egui::ComboBox::from_id_salt("matching").selected_text(format!("{:?}", doc.solver.matching)).show_ui(
                ui,
                |ui| {
                    ui.selectable_value(&mut doc.solver.matching, MatchingMode::Stable, "Stable (Gale–Shapley)");
                    ui.selectable_value(&mut doc.solver.matching, MatchingMode::Optimal, "Optimal (Kuhn–Munkres)");
                },
            );
            ui.end_row();
            ui.label("Solver");
            egui::ComboBox::from_id_salt("solver").selected_text(format!("{:?}", doc.solver.method)).show_ui(
                ui,
                |ui| {
                    ui.selectable_value(&mut doc.solver.method, SolverKind::Default, "Default");
                    ui.selectable_value(&mut doc.solver.method, SolverKind::Paper, "Paper (Algorithm 2 as written)");
                },
            );
            ui.end_row();
            let l = ui.label("Max iterations");
            ui.add(egui::DragValue::new(&mut doc.solver.max_iterations).range(1..=1_000_000)).labelled_by(l.id);
            ui.end_row();
            let l = ui.label("Margin");
            ui.add(egui::DragValue::new(&mut doc.solver.margin).range(0.0..=1.0).speed(0.005).suffix(" m"))
                .labelled_by(l.id);
            ui.end_row();
            let l = ui.label("Smoothing");
            ui.checkbox(&mut doc.solver.smoothing, "").labelled_by(l.id);
            ui.end_row();
            let l = ui.label("Tack interval");
            ui.add(egui::DragValue::new(&mut doc.solver.tack_interval).range(0.05..=10.0).speed(0.01).suffix(" s"))
                .labelled_by(l.id);
            ui.end_row();
            let l = ui.label("Fast factor");
            ui.add(egui::DragValue::new(&mut doc.solver.fast_factor).range(1.01..=10.0).speed(0.01)).labelled_by(l.id);
            ui.end_row();
            let l = ui.label("Slow factor");
            ui.add(egui::DragValue::new(&mut doc.solver.slow_factor).range(0.0..=0.99).speed(0.01)).labelled_by(l.id);
            ui.end_row();
        });
    }

    fn library_panel(&mut self, ui: &mut Ui) {
        ui.horizontal(|ui| {
            ui.label("Folder");
            let r = ui.text_edit_singleline(&mut self.library_text);
            if r.lost_focus() || ui.button("Rescan").on_hover_text("Rescan").clicked() {
                self.library_dir = PathBuf::from(self.library_text.trim());
                self.library = library::scan(&self.library_dir);
            }
        });
        ui.horizontal(|ui| {
            ui.label("Side");
            side_combo(ui, "library-side", &mut self.library_side);
        });
        if self.library.is_empty() {
            ui.label(RichText::new("no *.pattern.json here").weak());
        }
        let side = self.library_side;
        for e in &self.library {
            ui.horizontal(|ui| match &e.pattern {
                Ok(p) => {
                    let tag = if p.is_balanced() { "" } else { " (unbalanced)" };
                    ui.label(format!("{}  {} in / {} out{tag}", e.name(), p.entries.len(), p.exits.len()))
                        .on_hover_text(e.file.display().to_string());
                    if ui.small_button("Apply").on_hover_text(format!("Copy onto the {side} side")).clicked() {
                        self.pending.push(Command::ApplyPattern { side, file: e.file.clone(), link: false });
                    }
                    if ui
                        .small_button("Link")
                        .on_hover_text(format!("Reference the file from the {side} side"))
                        .clicked()
                    {
                        self.pending.push(Command::ApplyPattern { side, file: e.file.clone(), link: true });
                    }
                }
                Err(err) => {
                    ui.colored_label(view::PROBLEM, e.name()).on_hover_text(err);
                }
            });
        }
        if ui.button(format!("Save the {side} side as a pattern…")).clicked() {
            let name =
                format!("{}-{}.pattern.json", self.doc.name.clone().unwrap_or_else(|| "side".into()), side.name());
            self.dialog = Some(FileDialog::new(DialogPurpose::SavePattern(side), self.library_dir.clone(), name));
        }
    }

    fn sides_panel(&mut self, ui: &mut Ui) {
        for side in Side::ALL {
            let v = &self.sides[side.index()];
            ui.horizontal(|ui| {
                ui.label(RichText::new(side.name()).strong());
                let src = match &v.source {
                    SideSource::Empty => "empty".to_string(),
                    SideSource::Inline => "inline".to_string(),
                    SideSource::File(f) => format!("file {f}"),
                    SideSource::Missing(f, _) => format!("file {f} (missing)"),
                };
                ui.label(format!("{} in / {} out, {src}", v.pattern.entries.len(), v.pattern.exits.len()));
                if matches!(v.source, SideSource::File(_))
                    && ui
                        .small_button("Copy in")
                        .on_hover_text("Copy the pattern file's points into the document to edit them here")
                        .clicked()
                {
                    self.pending.push(Command::InlineSide(side));
                }
                if !matches!(v.source, SideSource::Empty) && ui.small_button("Clear").clicked() {
                    self.pending.push(Command::ClearSide(side));
                }
            });
        }
    }

    fn right_panel(&mut self, ui: &mut Ui) {
        egui::CollapsingHeader::new("Bake").default_open(true).show(ui, |ui| self.bake_panel(ui));
        egui::CollapsingHeader::new("Selection").default_open(true).show(ui, |ui| self.inspector(ui));
        egui::CollapsingHeader::new("Metrics").default_open(true).show(ui, |ui| self.metrics_panel(ui));
        let n = self.problems.len() + self.warnings.len();
        egui::CollapsingHeader::new(format!("Problems ({n})"))
            .id_salt("problems")
            .default_open(true)
            .show(ui, |ui| self.problems_panel(ui));
    }

    fn bake_panel(&mut self, ui: &mut Ui) {
        ui.horizontal(|ui| {
            let can = self.resolved.is_some();
            if ui.add_enabled(can, egui::Button::new("Bake (B)")).clicked() {
                self.pending.push(Command::Bake);
            }
            if ui.add_enabled(self.job.is_some(), egui::Button::new("Cancel (Esc)")).clicked() {
                self.pending.push(Command::CancelBake);
            }
            ui.checkbox(&mut self.auto_bake, "Auto re-bake");
        });
        if let Some(j) = &self.job {
            let p = &j.progress;
            let max = self.doc.solver.max_iterations.max(1);
            let frac = (p.iteration() as f32 / max as f32).min(1.0);
            let stage = p.stage().map_or("starting".to_string(), stage_name);
            let text =
                format!("{stage}: iteration {} · worst gap {:.3} m · {:.1} s", p.iteration(), p.gap(), j.elapsed());
            ui.add(egui::ProgressBar::new(frac).text(text).animate(true));
            if j.cancelling() {
                ui.label("cancelling…");
            }
        } else if let Some(r) = &self.result {
            let stale = r.document != self.doc;
            let state = if r.bake.converged() {
                RichText::new("collision-free").color(view::ENTRY)
            } else {
                RichText::new(format!("{} collisions remain", r.bake.remaining.len())).color(view::PROBLEM)
            };
            ui.horizontal(|ui| {
                ui.label(format!(
                    "{} agents, {} iterations, {:.2} s:",
                    r.bake.agents.len(),
                    r.bake.collision.iterations,
                    r.seconds
                ));
                ui.label(state);
            });
            if stale {
                ui.colored_label(view::WARNING, "The document changed since this bake (B to re-bake).");
            }
        } else if self.resolved.is_none() {
            ui.colored_label(view::WARNING, "Fix the problems below to bake.");
        } else {
            ui.label("Not baked yet: press B.");
        }
        ui.label("Show:");
        ui.horizontal_wrapped(|ui| {
            ui.checkbox(&mut self.stages.matching, "(a) matching lines");
            ui.checkbox(&mut self.stages.collision_free, "(b) after collision removal");
            ui.checkbox(&mut self.stages.smoothed, "(c) smoothed");
            ui.checkbox(&mut self.stages.agents, "agents");
            ui.checkbox(&mut self.stages.collisions, "collisions");
        });
    }

    fn inspector(&mut self, ui: &mut Ui) {
        match self.selection {
            Selection::None => {
                ui.label(RichText::new("Nothing selected. Click a point or an obstacle.").weak());
            }
            Selection::Point(id) => {
                let view = &self.sides[id.side.index()];
                let Some(b) = view.pattern.points(id.direction).get(id.index).copied() else {
                    ui.label("(gone)");
                    return;
                };
                ui.label(RichText::new(id.path()).monospace());
                if let SideSource::File(f) = &view.source {
                    ui.label(format!("from the pattern file {f}: s = {:.2} m, t = {:.2} s", b.s, b.t));
                    if ui.button("Copy the pattern into the document to edit it").clicked() {
                        self.pending.push(Command::InlineSide(id.side));
                    }
                } else if let (l, pi) = (self.doc.size, self.doc.period)
                    && let Some(p) = edit::point_mut(&mut self.doc, id)
                {
                    egui::Grid::new("point").num_columns(2).show(ui, |ui| {
                        ui.label("s");
                        ui.add(egui::DragValue::new(&mut p.s).range(0.0..=l).speed(0.02).suffix(" m"));
                        ui.end_row();
                        ui.label("t");
                        ui.add(egui::DragValue::new(&mut p.t).range(0.0..=pi - 1e-3).speed(0.02).suffix(" s"));
                        ui.end_row();
                        let mut custom = p.velocity.is_some();
                        ui.label("velocity");
                        if ui.checkbox(&mut custom, "custom (patch frame)").changed() {
                            p.velocity = if custom {
                                let n = id.side.inward_normal();
                                let sign = if id.direction == Direction::Entry { 1.0 } else { -1.0 };
                                Some([n[0] * DEFAULT_COMFORT_SPEED * sign, n[1] * DEFAULT_COMFORT_SPEED * sign])
                            } else {
                                None
                            };
                        }
                        ui.end_row();
                        if let Some(v) = &mut p.velocity {
                            ui.label("vx, vy");
                            ui.horizontal(|ui| {
                                ui.add(egui::DragValue::new(&mut v[0]).speed(0.01).suffix(" m/s"));
                                ui.add(egui::DragValue::new(&mut v[1]).speed(0.01).suffix(" m/s"));
                            });
                            ui.end_row();
                        } else {
                            ui.label("");
                            ui.label(RichText::new("default: along the normal at comfort speed").weak());
                            ui.end_row();
                        }
                    });
                }
                if ui.button("Delete (Del)").clicked() {
                    self.pending.push(Command::DeletePoint(id));
                }
                for m in self.point_problems.get(&id).into_iter().flatten() {
                    ui.colored_label(view::PROBLEM, m);
                }
            }
            Selection::Obstacle(k) => {
                let l = self.doc.size;
                let Some(o) = self.doc.obstacles.get_mut(k) else {
                    ui.label("(gone)");
                    return;
                };
                ui.label(RichText::new(format!("obstacles[{k}]")).monospace());
                match o {
                    Obstacle::Circle { center, radius } => {
                        ui.horizontal(|ui| {
                            ui.label("centre");
                            ui.add(egui::DragValue::new(&mut center[0]).range(0.0..=l).speed(0.02).suffix(" m"));
                            ui.add(egui::DragValue::new(&mut center[1]).range(0.0..=l).speed(0.02).suffix(" m"));
                        });
                        ui.horizontal(|ui| {
                            ui.label("radius");
                            ui.add(egui::DragValue::new(radius).range(0.05..=l / 2.0).speed(0.02).suffix(" m"));
                        });
                    }
                    Obstacle::Polygon(vs) => {
                        for (i, v) in vs.iter_mut().enumerate() {
                            ui.horizontal(|ui| {
                                ui.label(format!("[{i}]"));
                                ui.add(egui::DragValue::new(&mut v[0]).range(0.0..=l).speed(0.02).suffix(" m"));
                                ui.add(egui::DragValue::new(&mut v[1]).range(0.0..=l).speed(0.02).suffix(" m"));
                            });
                        }
                    }
                }
                if ui.button("Delete (Del)").clicked() {
                    self.pending.push(Command::DeleteObstacle(k));
                }
                for m in self.obstacle_problems.get(&k).into_iter().flatten() {
                    ui.colored_label(view::PROBLEM, m);
                }
                for w in self.warnings.iter().filter(|w| w.obstacle == k || w.other == Some(k)) {
                    ui.colored_label(view::WARNING, &w.message);
                }
            }
        }
    }

    fn metrics_panel(&mut self, ui: &mut Ui) {
        let Some(r) = &self.result else {
            ui.label(RichText::new("Bake to see the metrics.").weak());
            return;
        };
        let m = &r.bake.metrics;
        let two_r = 2.0 * r.baked.header.agent_radius;
        let fmt = |v: Option<f64>| v.map_or("–".to_string(), |d| format!("{d:.3} m"));
        let t = &r.bake.timings;
        egui::Grid::new("metrics").num_columns(2).striped(true).show(ui, |ui| {
            let row = |ui: &mut Ui, k: &str, v: String, bad: bool| {
                ui.label(k);
                if bad {
                    ui.colored_label(view::PROBLEM, v)
                } else {
                    ui.label(v)
                };
                ui.end_row();
            };
            row(ui, "converged", format!("{}", r.bake.converged()), !r.bake.converged());
            row(ui, "iterations", r.bake.collision.iterations.to_string(), false);
            row(
                ui,
                "min separation",
                format!("{} (2r = {two_r:.2} m)", fmt(m.min_separation)),
                m.min_separation.is_some_and(|d| d < two_r - 1e-9),
            );
            row(
                ui,
                "obstacle clearance",
                fmt(m.obstacle_clearance),
                m.obstacle_clearance.is_some_and(|d| d < r.baked.header.agent_radius - 1e-9),
            );
            row(ui, "seam clearance", fmt(m.seam_clearance), false);
            row(
                ui,
                "collisions",
                format!("{} ({:.2} s overlap)", m.collisions.count, m.collisions.overlap_time),
                m.collisions.count > 0,
            );
            row(
                ui,
                "boundary error",
                format!("{:.2e} m, {:.2e} s", m.boundary_error.position, m.boundary_error.time),
                false,
            );
            row(
                ui,
                "speed mean",
                format!(
                    "{:.2} m/s (p5 {:.2}, p95 {:.2}, max {:.2})",
                    m.speed.mean, m.speed.p5, m.speed.p95, m.speed.max
                ),
                false,
            );
            row(ui, "|u − u_cft| mean", format!("{:.2} m/s", m.speed.mean_comfort_deviation), false);
            row(ui, "turn rate", format!("p95 {:.2}, max {:.2} rad/s", m.turn_rate.p95, m.turn_rate.max), false);
            row(ui, "coverage", format!("{:.0} %", m.coverage * 100.0), false);
            row(
                ui,
                "time",
                format!(
                    "{:.0} ms (collisions {:.0} ms, smoothing {:.0} ms)",
                    t.total_ms, t.collision_removal_ms, t.smoothing_ms
                ),
                false,
            );
        });
        if !r.bake.remaining.is_empty() {
            ui.label("Remaining collisions (click to see):");
            let list: Vec<(usize, String, f64)> =
                r.bake.report().remaining_collisions.iter().map(|c| (c.agent, c.other.clone(), c.time)).collect();
            for (a, other, t) in list.into_iter().take(20) {
                if ui.link(format!("agent {a} × {other} at t = {t:.2} s")).clicked() {
                    self.time = t;
                    self.playing = false;
                }
            }
        }
        for n in &r.bake.notes {
            ui.colored_label(view::WARNING, n);
        }
    }

    fn problems_panel(&mut self, ui: &mut Ui) {
        if self.problems.is_empty() && self.warnings.is_empty() {
            ui.colored_label(view::ENTRY, "No problems.");
            return;
        }
        for p in self.problems.clone() {
            let target = edit::problem_target(&p.path.to_string());
            let text = format!("{} {}", p.path, p.message);
            let r = ui.add(egui::Label::new(RichText::new(text).color(view::PROBLEM)).sense(Sense::click()));
            if r.clicked() {
                match target {
                    ProblemTarget::Point(id) => self.selection = Selection::Point(id),
                    ProblemTarget::Obstacle(k) => self.selection = Selection::Obstacle(k),
                    _ => {}
                }
            }
        }
        for w in self.warnings.clone() {
            if ui.add(egui::Label::new(RichText::new(&w.message).color(view::WARNING)).sense(Sense::click())).clicked()
            {
                self.selection = Selection::Obstacle(w.obstacle);
            }
        }
    }

    fn central(&mut self, ui: &mut Ui) {
        ui.horizontal(|ui| {
            ui.selectable_value(&mut self.mode, ViewMode::Patch, "Patch");
            ui.selectable_value(&mut self.mode, ViewMode::Tiling, "Tiling 3×3");
            ui.separator();
            if self.mode == ViewMode::Tiling {
                let bad: Vec<Side> = [Side::South, Side::East]
                    .into_iter()
                    .filter(|s| !self.seams[s.index()].is_empty() || !self.seams[s.opposite().index()].is_empty())
                    .collect();
                if bad.is_empty() {
                    ui.colored_label(view::ENTRY, "Seamless: every side meets the mirror of its opposite side.");
                } else {
                    let names: Vec<&str> =
                        bad.iter().map(|s| if *s == Side::South { "south/north" } else { "east/west" }).collect();
                    ui.colored_label(view::PROBLEM, format!("Seams that do not match: {}", names.join(", ")));
                    if ui.button("Make tileable").clicked() {
                        self.pending.push(Command::MakeTileable);
                    }
                }
            } else {
                ui.label(RichText::new("scroll: zoom · middle or Alt+drag: pan · Home: reset").weak());
            }
        });
        let charts_h = (ui.available_height() * 0.28).clamp(150.0, 260.0);
        let view_h = ui.available_height() - charts_h - 8.0;
        let (rect, response) = ui.allocate_exact_size(vec2(ui.available_width(), view_h), Sense::click_and_drag());
        response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Canvas, true, "Patch view"));
        self.patch_view(ui, rect, &response);
        ui.add_space(4.0);
        let w = (ui.available_width() - 3.0 * 6.0) / 4.0;
        ui.horizontal(|ui| {
            for side in Side::ALL {
                let (rect, response) = ui.allocate_exact_size(vec2(w, charts_h - 22.0), Sense::click_and_drag());
                response.widget_info(|| {
                    egui::WidgetInfo::labeled(egui::Role::Canvas, true, format!("{} pattern chart", side.name()))
                });
                self.chart(ui, side, rect, &response);
            }
        });
        ui.horizontal(|ui| {
            ui.colored_label(view::ENTRY, "triangle: entry");
            ui.colored_label(view::EXIT, "ring: exit");
            ui.label(RichText::new("grey: opposite side mirrored (to tile with itself)").weak());
            ui.colored_label(view::PROBLEM, "red ring: problem");
            if let Some(p) = self.problems.iter().find(|p| p.path == "sides") {
                ui.separator();
                ui.colored_label(view::PROBLEM, format!("The sides {}", p.message));
            }
        });
    }

    fn patch_view(&mut self, ui: &mut Ui, rect: Rect, response: &egui::Response) {
        let l = self.doc.size;
        let extent = if self.mode == ViewMode::Tiling { 3.0 } else { 1.0 };
        // Pan (middle drag) and zoom (scroll, about the pointer).
        let panning = response.dragged_by(egui::PointerButton::Middle)
            || response.dragged_by(egui::PointerButton::Primary) && ui.input(|i| i.modifiers.alt);
        if panning {
            let d = response.drag_delta();
            let xf = ViewTransform::fit(rect, l, extent, self.pan, self.zoom);
            self.pan[0] -= (d.x / xf.scale) as f64;
            self.pan[1] += (d.y / xf.scale) as f64;
        }
        if response.hovered() {
            let scroll = ui.input(|i| i.smooth_scroll_delta.y);
            if scroll != 0.0
                && let Some(h) = response.hover_pos()
            {
                let before = ViewTransform::fit(rect, l, extent, self.pan, self.zoom).to_patch(h);
                self.zoom = (self.zoom * (scroll * 0.002).exp()).clamp(0.2, 20.0);
                let after = ViewTransform::fit(rect, l, extent, self.pan, self.zoom).to_patch(h);
                self.pan[0] += before[0] - after[0];
                self.pan[1] += before[1] - after[1];
            }
        }
        let xf = ViewTransform::fit(rect, l, extent, self.pan, self.zoom);
        self.layout.patch = Some(xf);
        let painter = ui.painter_at(rect);
        let dark = ui.visuals().dark_mode;
        painter.rect_filled(rect, 0.0, if dark { Color32::from_gray(20) } else { Color32::from_gray(220) });

        if self.mode == ViewMode::Tiling {
            self.draw_tiling(&painter, &xf, dark);
        } else {
            self.draw_patch_layers(&painter, &xf, dark);
            let pointer = Pointer::from_response(response);
            if !panning {
                let EditorApp { doc, sides, selection, pending, tool, snap, time, .. } = self;
                let mut cx = ToolCx { doc, sides, selection, commands: pending, snap: *snap, time: *time };
                tool.patch_input(&mut cx, &xf, &pointer);
            }
            self.tool.draw_patch(&painter, &xf, response.hover_pos());
            if let Some(h) = response.hover_pos() {
                let p = xf.to_patch(h);
                painter.text(
                    rect.left_bottom() + vec2(6.0, -6.0),
                    egui::Align2::LEFT_BOTTOM,
                    format!("x {:.2} m, y {:.2} m", p[0], p[1]),
                    egui::FontId::monospace(12.0),
                    Color32::from_gray(150),
                );
                self.hover_tooltip(ui, &xf, h);
            }
        }
        painter.text(
            rect.right_top() + vec2(-8.0, 6.0),
            egui::Align2::RIGHT_TOP,
            format!("t = {:.2} s", self.time),
            egui::FontId::monospace(14.0),
            if dark { Color32::WHITE } else { Color32::BLACK },
        );
    }

    fn hover_tooltip(&self, ui: &Ui, xf: &ViewTransform, h: Pos2) {
        let hit = crate::tools::pick_patch(&self.doc, &self.sides, xf, h);
        let text = match hit {
            Some(crate::tools::PatchHit::Point(id)) => {
                let b = self.sides[id.side.index()].pattern.points(id.direction).get(id.index).copied();
                let mut t = b.map_or(id.path(), |b| format!("{}: s = {:.2} m, t = {:.2} s", id.path(), b.s, b.t));
                for m in self.point_problems.get(&id).into_iter().flatten() {
                    t.push_str(&format!("\n! {m}"));
                }
                Some(t)
            }
            Some(
                crate::tools::PatchHit::Obstacle(k)
                | crate::tools::PatchHit::Rim(k)
                | crate::tools::PatchHit::Vertex(k, _),
            ) => {
                let mut t = format!("obstacles[{k}]");
                for m in self.obstacle_problems.get(&k).into_iter().flatten() {
                    t.push_str(&format!("\n! {m}"));
                }
                for w in self.warnings.iter().filter(|w| w.obstacle == k || w.other == Some(k)) {
                    t.push_str(&format!("\n! {}", w.message));
                }
                Some(t)
            }
            None => None,
        };
        if let Some(text) = text {
            let layer = egui::LayerId::new(egui::Order::Tooltip, egui::Id::unique("patch-tip"));
            ui.ctx().layer_painter(layer).text(
                h + vec2(14.0, 14.0),
                egui::Align2::LEFT_TOP,
                text,
                egui::FontId::proportional(13.0),
                Color32::from_rgb(255, 230, 160),
            );
        }
    }

    /// The layers of the patch view, bottom to top.
    fn layers(&self) -> Vec<Layer> {
        let mut out = vec![Layer::Ground, Layer::Obstacles];
        if self.result.is_some() {
            if self.stages.matching {
                out.push(Layer::MatchingLines);
            }
            if self.stages.collision_free {
                out.push(Layer::CollisionFree);
            }
            if self.stages.smoothed {
                out.push(Layer::Smoothed);
            }
            if self.stages.collisions {
                out.push(Layer::Collisions);
            }
            if self.stages.agents {
                out.push(Layer::Agents);
            }
        }
        out.push(Layer::Boundary);
        out
    }

    fn draw_patch_layers(&self, painter: &egui::Painter, xf: &ViewTransform, dark: bool) {
        let l = self.doc.size;
        let pi = self.doc.period;
        for layer in self.layers() {
            match layer {
                Layer::Ground => view::draw_ground(painter, xf, l, [0.0, 0.0], dark),
                Layer::Obstacles => view::draw_obstacles(painter, xf, &self.doc.obstacles, [0.0, 0.0], |k| {
                    if self.selection == Selection::Obstacle(k) {
                        Some(view::SELECTED)
                    } else if self.obstacle_problems.contains_key(&k) {
                        Some(view::PROBLEM)
                    } else if self.warnings.iter().any(|w| w.obstacle == k || w.other == Some(k)) {
                        Some(view::WARNING)
                    } else {
                        None
                    }
                }),
                Layer::MatchingLines => {
                    if let Some(r) = &self.result {
                        for a in &r.bake.initial {
                            if let (Some(e), Some(x)) = (a.entry, a.exit) {
                                let c = view::time_colour(e.t, pi);
                                painter.line_segment(
                                    [
                                        xf.to_screen([e.position.x, e.position.y]),
                                        xf.to_screen([x.position.x, x.position.y]),
                                    ],
                                    Stroke::new(1.2, c),
                                );
                            } else {
                                let pts: Vec<_> = a.path.points.iter().map(|c| ([c.p.x, c.p.y], c.t)).collect();
                                view::draw_path(painter, xf, &pts, pi, 1.2, 255, true);
                            }
                        }
                    }
                }
                Layer::CollisionFree | Layer::Smoothed => {
                    if let Some(r) = &self.result {
                        let (agents, w, alpha) = if layer == Layer::Smoothed {
                            (&r.bake.agents, 2.4, 255)
                        } else {
                            (&r.bake.collision_free, 1.6, 170)
                        };
                        for a in agents {
                            let pts: Vec<_> = a.path.points.iter().map(|c| ([c.p.x, c.p.y], c.t)).collect();
                            view::draw_path(painter, xf, &pts, r.baked.header.period, w, alpha, true);
                        }
                    }
                }
                Layer::Collisions => {
                    if let Some(r) = &self.result {
                        for c in &r.bake.remaining {
                            painter.circle_stroke(
                                xf.to_screen([c.position.x, c.position.y]),
                                xf.len(r.baked.header.agent_radius * 1.6),
                                Stroke::new(2.0, view::PROBLEM),
                            );
                        }
                    }
                }
                Layer::Agents => {
                    if let Some(r) = &self.result {
                        self.draw_agents(painter, xf, &r.baked, [0.0, 0.0]);
                    }
                }
                Layer::Boundary => self.draw_boundary(painter, xf),
            }
        }
    }

    fn draw_agents(
        &self,
        painter: &egui::Painter,
        xf: &ViewTransform,
        baked: &crowdpatch::runtime::format::BakedPatch,
        offset: [f64; 2],
    ) {
        let now = view::agents_at(baked, self.time);
        let hit = view::touching(&now, baked.header.agent_radius);
        for ((i, p, h), hit) in now.iter().zip(hit) {
            let c = view::agent_colour(&baked.agents[*i], *i);
            view::draw_agent(painter, xf, [p[0] + offset[0], p[1] + offset[1]], *h, baked.header.agent_radius, c, hit);
        }
    }

    fn draw_boundary(&self, painter: &egui::Painter, xf: &ViewTransform) {
        // Endogenous agents' waypoints: small squares joined in loop order.
        for e in &self.doc.endogenous {
            let pts: Vec<Pos2> = e.waypoints.iter().map(|w| xf.to_screen(w.position)).collect();
            if pts.len() > 1 {
                let mut closed = pts.clone();
                closed.push(pts[0]);
                painter.add(egui::Shape::dashed_line(&closed, Stroke::new(1.0, Color32::from_gray(150)), 4.0, 4.0));
            }
            for (w, p) in e.waypoints.iter().zip(&pts) {
                let c = view::time_colour(w.t, self.doc.period);
                painter.rect_filled(Rect::from_center_size(*p, vec2(7.0, 7.0)), 1.0, c);
            }
        }
        // The selected point's crossing velocity, as an arrow (1 s of walking).
        if let Selection::Point(id) = self.selection
            && let Some(c) = self.resolved.as_ref().and_then(|p| {
                p.crossings()
                    .into_iter()
                    .find(|c| c.side == id.side && c.direction == id.direction && c.index == id.index)
            })
        {
            let a = xf.to_screen([c.position.x, c.position.y]);
            let (from, to) = match c.direction {
                Direction::Entry => (a, xf.to_screen([c.position.x + c.velocity.x, c.position.y + c.velocity.y])),
                Direction::Exit => (xf.to_screen([c.position.x - c.velocity.x, c.position.y - c.velocity.y]), a),
            };
            painter.arrow(from, to - from, Stroke::new(2.0, view::SELECTED));
        }
        for (id, p, t) in view::boundary_positions(&self.sides, self.doc.size, xf) {
            let ring = if self.selection == Selection::Point(id) {
                Some(view::SELECTED)
            } else if self.point_problems.contains_key(&id) {
                Some(view::PROBLEM)
            } else {
                None
            };
            view::draw_marker(
                painter,
                p,
                view::inward_screen(id.side),
                id.direction,
                view::time_colour(t, self.doc.period),
                6.0,
                ring,
            );
        }
    }

    fn draw_tiling(&self, painter: &egui::Painter, xf: &ViewTransform, dark: bool) {
        let l = self.doc.size;
        for j in -1..=1 {
            for i in -1..=1 {
                let off = [i as f64 * l, j as f64 * l];
                view::draw_ground(painter, xf, l, off, dark);
                view::draw_obstacles(painter, xf, &self.doc.obstacles, off, |_| None);
            }
        }
        if let Some(r) = &self.result {
            for j in -1..=1 {
                for i in -1..=1 {
                    let off = [i as f64 * l, j as f64 * l];
                    if self.stages.smoothed {
                        for a in &r.bake.agents {
                            let pts: Vec<_> =
                                a.path.points.iter().map(|c| ([c.p.x + off[0], c.p.y + off[1]], c.t)).collect();
                            view::draw_path(painter, xf, &pts, r.baked.header.period, 1.2, 90, false);
                        }
                    }
                    self.draw_agents(painter, xf, &r.baked, off);
                }
            }
        }
        // The centre tile's seams: green where they meet the neighbour's
        // mirror, red markers where a point has no partner.
        for side in Side::ALL {
            let bad = &self.seams[side.index()];
            let a = xf.to_screen(side.point(0.0, l));
            let b = xf.to_screen(side.point(l, l));
            let colour = if bad.is_empty() { view::ENTRY } else { view::PROBLEM };
            painter.line_segment([a, b], Stroke::new(3.0, colour));
            for &(d, k) in bad {
                if let Some(p) = self.sides[side.index()].pattern.points(d).get(k) {
                    painter.circle_stroke(xf.to_screen(side.point(p.s, l)), 8.0, Stroke::new(2.5, view::PROBLEM));
                }
            }
        }
        let c = xf.to_screen([0.0, l]);
        painter.text(
            c + vec2(4.0, 4.0),
            egui::Align2::LEFT_TOP,
            "this patch",
            egui::FontId::proportional(13.0),
            Color32::from_gray(160),
        );
    }

    fn chart(&mut self, ui: &mut Ui, side: Side, rect: Rect, response: &egui::Response) {
        let dark = ui.visuals().dark_mode;
        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 4.0, if dark { Color32::from_gray(28) } else { Color32::from_gray(245) });
        let v = &self.sides[side.index()];
        let corner = |s: Side| ["SW", "SE", "NE", "NW"][s.index()];
        let src = match &v.source {
            SideSource::File(f) => format!(" · {f}"),
            SideSource::Missing(f, _) => format!(" · {f} missing"),
            _ => String::new(),
        };
        let title = format!(
            "{} ({} to {}) · {} in / {} out{src}",
            side.name(),
            corner(side),
            corner(side.rotated(1)),
            v.pattern.entries.len(),
            v.pattern.exits.len()
        );
        let text_col = if dark { Color32::from_gray(210) } else { Color32::from_gray(40) };
        painter.text(
            rect.left_top() + vec2(6.0, 3.0),
            egui::Align2::LEFT_TOP,
            title,
            egui::FontId::proportional(12.5),
            text_col,
        );
        let plot = Rect::from_min_max(rect.min + vec2(30.0, 20.0), rect.max - vec2(8.0, 18.0));
        let (l, pi) = (self.doc.size, self.doc.period);
        let ct = ChartTransform { rect: plot, size: l, period: pi };
        self.layout.charts[side.index()] = Some(ct);
        painter.rect_filled(plot, 0.0, if dark { Color32::from_gray(36) } else { Color32::WHITE });
        let grid = Stroke::new(1.0, if dark { Color32::from_gray(50) } else { Color32::from_gray(230) });
        let step_s = if l > 40.0 {
            10.0
        } else if l > 12.0 {
            4.0
        } else {
            1.0
        };
        let mut s = 0.0;
        while s <= l + 1e-9 {
            painter.line_segment([ct.to_screen(s, 0.0), ct.to_screen(s, pi)], grid);
            painter.text(
                ct.to_screen(s, 0.0) + vec2(0.0, 2.0),
                egui::Align2::CENTER_TOP,
                format!("{s}"),
                egui::FontId::proportional(10.0),
                Color32::GRAY,
            );
            s += step_s;
        }
        let step_t = if pi > 30.0 {
            10.0
        } else if pi > 6.0 {
            2.0
        } else {
            1.0
        };
        let mut t = 0.0;
        while t <= pi + 1e-9 {
            painter.line_segment([ct.to_screen(0.0, t), ct.to_screen(l, t)], grid);
            painter.text(
                ct.to_screen(0.0, t) - vec2(3.0, 0.0),
                egui::Align2::RIGHT_CENTER,
                format!("{t}"),
                egui::FontId::proportional(10.0),
                Color32::GRAY,
            );
            t += step_t;
        }
        painter.text(
            plot.right_bottom() + vec2(0.0, 12.0),
            egui::Align2::RIGHT_TOP,
            "s [m]",
            egui::FontId::proportional(10.0),
            Color32::GRAY,
        );
        painter.text(
            plot.left_top() - vec2(4.0, 2.0),
            egui::Align2::RIGHT_BOTTOM,
            "t [s]",
            egui::FontId::proportional(10.0),
            Color32::GRAY,
        );
        // Play time.
        painter.line_segment(
            [ct.to_screen(0.0, self.time), ct.to_screen(l, self.time)],
            Stroke::new(1.0, view::SELECTED.gamma_multiply(0.6)),
        );
        // The opposite side, mirrored: where this side's points must be for
        // the patch to tile with itself.
        let opposite = self.sides[side.opposite().index()].pattern.mirror();
        for d in [Direction::Entry, Direction::Exit] {
            for b in opposite.points(d) {
                let c = ct.to_screen(b.s, b.t);
                view::draw_marker(
                    &painter,
                    c,
                    vec2(0.0, -1.0),
                    d,
                    Color32::from_gray(140).gamma_multiply(0.5),
                    4.5,
                    None,
                );
            }
        }
        // The points.
        for d in [Direction::Entry, Direction::Exit] {
            for (index, b) in v.pattern.points(d).iter().enumerate() {
                let id = PointId { side, direction: d, index };
                let ring = if self.selection == Selection::Point(id) {
                    Some(view::SELECTED)
                } else if self.point_problems.contains_key(&id) {
                    Some(view::PROBLEM)
                } else {
                    None
                };
                let colour = if d == Direction::Entry { view::ENTRY } else { view::EXIT };
                view::draw_marker(&painter, ct.to_screen(b.s, b.t), vec2(0.0, -1.0), d, colour, 5.5, ring);
            }
        }
        if let SideSource::Missing(f, e) = &v.source {
            painter.text(
                plot.center(),
                egui::Align2::CENTER_CENTER,
                format!("{f}: {e}"),
                egui::FontId::proportional(11.0),
                view::PROBLEM,
            );
        }
        // Input.
        let pointer = Pointer::from_response(response);
        {
            let EditorApp { doc, sides, selection, pending, tool, snap, time, .. } = self;
            let mut cx = ToolCx { doc, sides, selection, commands: pending, snap: *snap, time: *time };
            tool.chart_input(&mut cx, side, &ct, &pointer);
        }
        if let Some(h) = response.hover_pos() {
            let v = &self.sides[side.index()];
            if let Some(id) = crate::tools::pick_chart(v, side, &ct, h) {
                let b = v.pattern.points(id.direction)[id.index];
                let mut text = format!("{}: s = {:.2} m, t = {:.2} s", id.path(), b.s, b.t);
                for m in self.point_problems.get(&id).into_iter().flatten() {
                    text.push_str(&format!("\n! {m}"));
                }
                response.clone().on_hover_text_at_pointer(text);
            } else if plot.contains(h) {
                let (s, t) = ct.to_st(h);
                painter.text(
                    plot.right_top() + vec2(-3.0, 2.0),
                    egui::Align2::RIGHT_TOP,
                    format!("s {:.2}  t {:.2}", s, t),
                    egui::FontId::monospace(10.0),
                    Color32::GRAY,
                );
            }
        }
    }

    // ------------------------------------------------------------------
    // Windows: file dialog, unsaved-changes prompt, recovery, errors, help.

    fn windows(&mut self, ctx: &egui::Context) {
        if let Some(mut d) = self.dialog.take() {
            let mut keep = true;
            let mut chosen = None;
            egui::Window::new(d.purpose.title())
                .collapsible(false)
                .default_width(460.0)
                .pivot(egui::Align2::CENTER_CENTER)
                .default_pos(ctx.content_rect().center())
                .show(ctx, |ui| {
                    ui.horizontal(|ui| {
                        if ui.button("Up").on_hover_text("Parent folder").clicked()
                            && let Some(p) = d.dir.parent()
                        {
                            d.dir = p.to_path_buf();
                        }
                        ui.label(d.dir.display().to_string());
                    });
                    let (dirs, list) = d.listing();
                    egui::ScrollArea::vertical().max_height(260.0).show(ui, |ui| {
                        for name in dirs {
                            if ui.selectable_label(false, format!("[{name}]")).clicked() {
                                d.dir = d.dir.join(name);
                            }
                        }
                        for name in list {
                            let r = ui.selectable_label(d.name == name, &name);
                            if r.clicked() {
                                d.name = name.clone();
                            }
                            if r.double_clicked() {
                                d.name = name;
                                chosen = Some(d.chosen());
                            }
                        }
                    });
                    ui.horizontal(|ui| {
                        ui.label("File");
                        let r = ui.text_edit_singleline(&mut d.name);
                        if r.lost_focus() && ui.input(|i| i.key_pressed(Key::Enter)) {
                            chosen = Some(d.chosen());
                        }
                    });
                    if let Some(e) = &d.error {
                        ui.colored_label(view::PROBLEM, e);
                    }
                    ui.horizontal(|ui| {
                        let ok = if d.purpose == DialogPurpose::Open { "Open" } else { "Save" };
                        if ui.button(ok).clicked() {
                            chosen = Some(d.chosen());
                        }
                        if ui.button("Cancel").clicked() {
                            keep = false;
                        }
                    });
                });
            match chosen {
                Some(Ok(path)) => {
                    keep = false;
                    let c = match d.purpose {
                        DialogPurpose::Open => Command::Open(path),
                        DialogPurpose::SaveAs => Command::SaveAs(path),
                        DialogPurpose::ExportGlb => Command::ExportGlb(path),
                        DialogPurpose::ExportPng => Command::ExportPng(path),
                        DialogPurpose::SavePattern(side) => Command::SaveSideAsPattern { side, file: path },
                    };
                    if d.purpose == DialogPurpose::Open {
                        // The question about unsaved changes was asked before the dialog.
                        self.discard_ok = true;
                    }
                    self.pending.push(c);
                }
                Some(Err(e)) => d.error = Some(e),
                None => {}
            }
            if keep {
                self.dialog = Some(d);
            }
        }

        if let Some(p) = self.prompt.clone() {
            let what = match &p.then {
                Command::Quit => "quitting",
                Command::New => "starting a new document",
                _ => "opening another document",
            };
            let modal = egui::Modal::new(egui::Id::unique("unsaved")).show(ctx, |ui| {
                ui.heading("Unsaved changes");
                ui.label(format!(
                    "Save the changes to {} before {what}?",
                    self.file.as_deref().map_or("the untitled document".to_string(), |f| f.display().to_string())
                ));
                ui.horizontal(|ui| {
                    if ui.button("Save").clicked() {
                        self.prompt = None;
                        self.run_command(Command::Save);
                        if !self.dirty() {
                            self.discard_ok = true;
                            self.pending.push(p.then.clone());
                        }
                    }
                    if ui.button("Don't save").clicked() {
                        self.prompt = None;
                        self.discard_ok = true;
                        self.pending.push(p.then.clone());
                    }
                    if ui.button("Cancel").clicked() {
                        self.prompt = None;
                    }
                });
            });
            if modal.should_close() {
                self.prompt = None;
            }
        }

        if let Some((path, a)) = self.recovery.first().cloned() {
            egui::Window::new("Recover unsaved work")
                .collapsible(false)
                .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
                .show(ctx, |ui| {
                    let age = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map(|d| d.as_secs().saturating_sub(a.saved_at))
                        .unwrap_or(0);
                    ui.label(format!(
                        "The editor stopped without saving. An autosave of {} from {} ago is available.",
                        a.file.as_deref().map_or("an untitled document".to_string(), |f| f.display().to_string()),
                        human_age(age)
                    ));
                    ui.horizontal(|ui| {
                        if ui.button("Recover").clicked() {
                            self.pending.push(Command::Recover(path.clone()));
                        }
                        if ui.button("Discard").clicked() {
                            self.pending.push(Command::DiscardRecovery(path.clone()));
                        }
                    });
                });
        }

        if let Some(e) = self.error_window.clone() {
            let mut open = true;
            egui::Window::new("Error")
                .open(&mut open)
                .collapsible(false)
                .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
                .show(ctx, |ui| {
                    ui.colored_label(view::PROBLEM, e);
                });
            if !open {
                self.error_window = None;
            }
        }

        if self.show_help {
            let mut open = true;
            egui::Window::new("Keyboard shortcuts")
                .open(&mut open)
                .collapsible(false)
                .pivot(egui::Align2::CENTER_CENTER)
                .default_pos(ctx.content_rect().center())
                .show(ctx, |ui| {
                    egui::Grid::new("help").num_columns(2).striped(true).show(ui, |ui| {
                        for (k, what) in SHORTCUTS {
                            ui.label(RichText::new(*k).monospace());
                            ui.label(*what);
                            ui.end_row();
                        }
                    });
                });
            self.show_help = open;
        }
    }

    /// Removes this process's autosave (call on a clean exit).
    pub fn on_exit(&mut self) {
        if let Some(j) = self.job.take() {
            j.cancel();
        }
        // A clean exit: unsaved changes were saved or knowingly discarded.
        files::remove_autosave(&self.state_dir);
    }
}

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

fn human_age(secs: u64) -> String {
    match secs {
        0..=59 => format!("{secs} s"),
        60..=3599 => format!("{} min", secs / 60),
        _ => format!("{} h", secs / 3600),
    }
}

fn new_document() -> PatchDocument {
    PatchDocument::new(16.0, 10.0)
}

fn opt_value(
    ui: &mut Ui,
    label: &str,
    v: &mut Option<f64>,
    default: f64,
    range: std::ops::RangeInclusive<f64>,
    unit: &str,
) {
    let l = ui.label(label);
    let mut x = v.unwrap_or(default);
    if ui.add(egui::DragValue::new(&mut x).range(range).speed(0.01).suffix(unit)).labelled_by(l.id).changed() {
        *v = Some(x);
    }
    ui.end_row();
}

fn side_combo(ui: &mut Ui, id: &str, side: &mut Side) {
    egui::ComboBox::from_id_salt(id).selected_text(side.name()).show_ui(ui, |ui| {
        for s in Side::ALL {
            ui.selectable_value(side, s, s.name());
        }
    });
}
