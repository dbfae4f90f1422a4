//! The editor application: a router over panels and views (egui_demo_app's
//! `WrapApp`). [`EditorApp`] holds the document ([`Document`]: file,
//! revision, history), what is derived from it, the selection, the tool,
//! the bake and the playback clock; [`EditorApp::show`] lays out the panels
//! ([`crate::panels`]) and views ([`crate::views`]) around them, each drawing
//! itself, then runs the commands the frame produced, feeds the undo
//! history, re-bakes and autosaves as the document's revision moves on. The
//! eframe wrapper ([`crate::run`]) and the headless tests both drive it.

use crate::apply;
use crate::bake_job::{AutoBake, Baker, CharacterChoice, CharacterSettings};
use crate::command::Command;
use crate::derived::Derived;
use crate::document::Document;
use crate::edit::SideView;
use crate::files::{self, Autosaver, DialogPurpose, FileDialog, Tick};
use crate::history::SettleRule;
use crate::library;
use crate::panels::Panels;
use crate::panels::menu::{MenuBar, MenuCx};
use crate::panels::problems::ProblemsPanel;
use crate::panels::timeline::Timeline;
use crate::shortcuts::{self, Shortcut};
use crate::tools::{ToolBox, ToolCx, ToolKind};
use crate::views::Views;
use crate::views::chart::ChartView;
use crate::windows::{Answer, Windows};
use crowdpatch::model::PatchDocument;
use egui::{Key, RichText, Ui, vec2};
use std::path::{Path, PathBuf};

pub use crate::bake_job::AUTO_BAKE_DELAY;
pub use crate::files::AUTOSAVE_INTERVAL;
pub use crate::shortcuts::SHORTCUTS;
pub use crate::state::{Cx, Layout, Playback, Scene, Selection, StageToggles, ViewMode};

/// The editor.
pub struct EditorApp {
    /// The document: file, revision, undo history.
    pub document: Document,
    /// What is derived from the document (sides, problems, warnings, seams).
    pub derived: Derived,
    /// The selection.
    pub selection: Selection,
    /// The current tool and snapping.
    pub tools: ToolBox,
    pending: Vec<Command>,
    /// A structural command ran this frame: the history records a step now.
    structural: bool,
    /// The running bake, the last result, the automatic re-bake.
    pub baker: Baker,
    /// The playback clock.
    pub playback: Playback,
    /// Bake stages shown.
    pub stages: StageToggles,
    /// Patch or tiling view.
    pub mode: ViewMode,
    /// Where the views were drawn last frame.
    pub layout: Layout,
    /// The panels.
    pub panels: Panels,
    views: Views,
    /// Dialogs, questions, recovery, errors, help.
    pub windows: Windows,
    autosaver: Autosaver,
    /// Recently opened files, most recent first.
    pub recent: Vec<PathBuf>,
    /// The unsaved-changes question was answered for the next New/Open/Quit.
    discard_ok: bool,
    /// The last message shown in the status bar, and whether it is an error.
    pub message: Option<(String, bool)>,
    /// Quit was asked for and confirmed (the window closes).
    pub quit: bool,
    now: f64,
}

impl EditorApp {
    /// A new editor on an empty document; `state_dir` holds recent files and
    /// autosaves (see [`files::state_dir`]).
    pub fn new(state_dir: PathBuf) -> EditorApp {
        let mut app = EditorApp {
            document: Document::new(new_document(), None),
            derived: Derived::default(),
            selection: Selection::None,
            tools: ToolBox::default(),
            pending: Vec::new(),
            structural: false,
            baker: Baker::default(),
            playback: Playback::default(),
            stages: StageToggles::default(),
            mode: ViewMode::Patch,
            layout: Layout::default(),
            panels: Panels::new(library::default_dir(None)),
            views: Views::default(),
            windows: Windows { recovery: files::orphaned_autosaves(&state_dir), ..Windows::default() },
            recent: files::load_recent(&state_dir),
            autosaver: Autosaver::new(state_dir),
            discard_ok: false,
            message: None,
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

    /// The document.
    pub fn doc(&self) -> &PatchDocument {
        self.document.get()
    }

    /// The current tool.
    pub fn tool(&self) -> ToolKind {
        self.tools.kind()
    }

    /// Queues a command for the end of the frame.
    pub fn queue(&mut self, command: Command) {
        self.pending.push(command);
    }

    /// Whether the document differs from its file.
    pub fn dirty(&self) -> bool {
        self.document.dirty()
    }

    /// Whether a bake is running.
    pub fn baking(&self) -> bool {
        self.baker.baking()
    }

    /// Whether an unsaved-changes question is open.
    pub fn prompting(&self) -> bool {
        self.windows.prompt.is_some()
    }

    /// The side views (side-frame points) of the document.
    pub fn sides(&self) -> &[SideView; 4] {
        &self.derived.sides
    }

    fn say(&mut self, text: impl Into<String>) {
        self.message = Some((text.into(), false));
    }

    fn fail(&mut self, text: impl Into<String>) {
        self.message = Some((text.into(), true));
    }

    /// Recomputes what is derived from the document when its revision changed.
    fn refresh(&mut self) {
        self.derived.refresh(self.document.get(), self.document.revision(), &self.document.base_dir());
    }

    fn period(&self) -> f64 {
        self.baker.period(self.document.get().period)
    }

    // ------------------------------------------------------------------
    // The frame.

    /// Draws one frame into `ui`, then runs the commands it produced, feeds
    /// the undo history, polls the bake, re-bakes and autosaves as needed.
    pub fn show(&mut self, ui: &mut Ui) {
        self.now = ui.input(|i| i.time);
        self.structural = false;
        self.refresh();
        if let Some(m) = self.baker.poll(ui.ctx()) {
            self.message = Some(m);
        }
        if self.playback.playing {
            self.playback.advance(ui.input(|i| i.stable_dt).min(0.1) as f64, self.period());
            ui.ctx().request_repaint();
        }
        self.shortcuts(ui);

        egui::Panel::top("menu").show(ui, |ui| self.menu_bar(ui));
        egui::Panel::bottom("status")
            .show(ui, |ui| MenuBar::status_bar(ui, self.message.as_ref(), self.tools.tool.hint()));
        let period = self.period();
        egui::Panel::bottom("timeline").show(ui, |ui| Timeline::ui(ui, &mut self.playback, period));
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
        self.document.settle(self.now, SettleRule { pointer_busy, typing, structural: self.structural });
        let revision = self.document.revision();
        match self.baker.auto_due(self.now, revision, pointer_busy) {
            AutoBake::Start => {
                if let Some(patch) = self.derived.resolved.clone() {
                    let ctx = ctx.clone();
                    self.baker.start(patch, revision, move || ctx.request_repaint());
                    self.say("baking…");
                }
            }
            AutoBake::Later => ctx.request_repaint_after(std::time::Duration::from_secs_f64(AUTO_BAKE_DELAY / 2.0)),
            AutoBake::Idle => {}
        }
        match self.autosaver.tick(self.now, &self.document) {
            Tick::Failed(e) => self.fail(format!("autosave failed: {e}")),
            Tick::Later => ctx.request_repaint_after(std::time::Duration::from_secs_f64(AUTOSAVE_INTERVAL)),
            Tick::Idle | Tick::Written => {}
        }
        // Closing the window.
        if ctx.input(|i| i.viewport().close_requested()) && !self.quit {
            if self.dirty() {
                ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
                self.windows.prompt = Some(Command::Quit);
            } else {
                self.quit = true;
            }
        }
        if self.quit {
            files::remove_autosave(&self.autosaver.dir);
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        }
    }

    /// Waits for the running bake, if any, and takes its result (tests).
    pub fn wait_for_bake(&mut self) {
        if let Some(m) = self.baker.wait() {
            self.message = Some(m);
        }
    }

    fn shortcuts(&mut self, ui: &mut Ui) {
        let mut backspace_used = false;
        for s in shortcuts::read(ui) {
            match s {
                Shortcut::Command(c) => self.pending.push(c),
                Shortcut::ToolKey(key) => {
                    let mut cx = ToolCx {
                        doc: self.document.get(),
                        sides: &self.derived.sides,
                        selection: &mut self.selection,
                        commands: &mut self.pending,
                        snap: self.tools.snap,
                        time: self.playback.time,
                    };
                    let used = self.tools.tool.key(&mut cx, key);
                    backspace_used |= used && key == Key::Backspace;
                    if !used && key == Key::Escape {
                        if self.baker.baking() {
                            self.pending.push(Command::CancelBake);
                        } else {
                            self.selection = Selection::None;
                        }
                    }
                }
                Shortcut::Tool(kind) => self.tools.set(kind),
                Shortcut::Delete { by_delete } => {
                    if by_delete || !backspace_used {
                        self.pending.push(Command::DeleteSelection);
                    }
                }
                Shortcut::PlayPause => self.playback.playing = !self.playback.playing,
                Shortcut::ToggleView => {
                    self.mode = if self.mode == ViewMode::Patch { ViewMode::Tiling } else { ViewMode::Patch }
                }
                Shortcut::ResetView => self.views.patch.reset(),
                Shortcut::Help => self.windows.help = !self.windows.help,
                Shortcut::Snap => self.tools.snap.on = !self.tools.snap.on,
                Shortcut::Step(dt) => self.playback.step(dt, self.period()),
            }
        }
    }

    // ------------------------------------------------------------------
    // Commands.

    /// Runs one command now.
    pub fn run_command(&mut self, command: Command) {
        if command.is_structural() {
            self.structural = true;
        }
        let base = self.document.base_dir();
        let command = match apply::apply(command, self.document.untracked(), &mut self.selection, &base) {
            Ok(edit) => {
                if edit.changed {
                    self.document.touch();
                }
                if edit.message.is_some() {
                    self.message = edit.message;
                }
                return;
            }
            Err(other) => other,
        };
        match command {
            Command::SaveSideAsPattern { side, file } if file.as_os_str().is_empty() => {
                self.windows.dialog = Some(self.panels.library.save_dialog(self.document.get(), side));
            }
            Command::SaveSideAsPattern { side, file } => {
                self.message = Some(self.panels.library.save_side(self.document.get(), side, &file, &base));
            }
            Command::Bake => {
                self.refresh();
                match self.derived.resolved.clone() {
                    Some(patch) => {
                        self.baker.start(patch, self.document.revision(), || {});
                        self.say("baking…");
                    }
                    None => {
                        let n = self.derived.problems.len();
                        self.fail(format!("cannot bake: {n} problem(s); see the Problems panel"));
                    }
                }
            }
            Command::CancelBake => self.baker.cancel(),
            Command::ShowWalker { agent, time } => self.show_walker(agent, time),
            Command::Undo | Command::Redo => {
                let undo = command == Command::Undo;
                if if undo { self.document.undo() } else { self.document.redo() } {
                    self.selection = apply::checked_selection(self.document.get(), self.selection, &base);
                    self.say(if undo { "undone" } else { "redone" });
                }
            }
            c @ (Command::New | Command::Open(_) | Command::Quit) => self.leave(c),
            Command::Save => match self.document.file.clone() {
                Some(f) => self.save_to(&f),
                None => self.run_command(Command::SaveAs(PathBuf::new())),
            },
            Command::SaveAs(p) if p.as_os_str().is_empty() => {
                let (d, name) = (&self.document, self.doc().name.as_deref());
                self.windows.dialog = Some(FileDialog::save_as(d.dialog_dir(), d.file.as_deref(), name));
            }
            Command::SaveAs(p) => self.save_to(&p),
            Command::ExportGlb(p) => self.export(&p, false),
            Command::ExportPng(p) => self.export(&p, true),
            Command::SetCharacter(settings) => {
                if self.set_character(&settings) {
                    self.pending.push(Command::Bake);
                }
            }
            Command::NoCharacter => {
                self.set_capsules();
                self.pending.push(Command::Bake);
            }
            Command::Recover(p) => self.recover(&p),
            Command::DiscardRecovery(p) => {
                let _ = std::fs::remove_file(&p);
                self.windows.recovery.retain(|(f, _)| *f != p);
            }
            other => unreachable!("{other:?} is an edit, run by apply::apply"),
        }
    }

    /// Where the 3D view drew each walker last frame: agent and screen
    /// position `[points]` (empty unless the 3D view shows a skeletal bake).
    pub fn walkers_3d(&self) -> &[(usize, egui::Pos2)] {
        if self.mode == ViewMode::Walkers3d { &self.views.scene3d.picks } else { &[] }
    }

    /// Bakes walkers as the character `settings` name from now on,
    /// prepared for the document's comfort speed, and keeps the choice in
    /// the editor's settings; says what loading found, or why the
    /// character cannot walk (the previous choice is kept then, and the
    /// sentence stays in the character window). Returns whether it loaded.
    pub fn set_character(&mut self, settings: &CharacterSettings) -> bool {
        let speed = self.doc().header().comfort_speed;
        match CharacterChoice::load(settings, speed) {
            Ok(c) => {
                self.say(format!("walkers are baked as {} ({})", c.name, c.notes.join("; ")));
                self.baker.character = Some(c);
                self.baker.character_refusal = None;
                self.save_walkers();
                true
            }
            Err(e) => {
                self.fail(format!("cannot use the character: {e}"));
                self.baker.character_refusal = Some(e);
                false
            }
        }
    }

    /// Bakes walkers as capsules from now on (kept in the settings).
    pub fn set_capsules(&mut self) {
        self.baker.character = None;
        self.baker.character_refusal = None;
        self.save_walkers();
        self.say("walkers are baked as capsules");
    }

    /// Restores the walkers' setting kept in the state directory (the
    /// built-in character when none is kept, or when the kept character no
    /// longer loads: the status bar says why).
    pub fn restore_walkers(&mut self) {
        match CharacterSettings::load(&self.autosaver.dir) {
            Ok(Some(None)) => self.baker.character = None,
            Ok(Some(Some(s))) => {
                if !self.set_character(&s) {
                    let why = self.baker.character_refusal.clone().unwrap_or_default();
                    self.set_character(&CharacterSettings::default());
                    self.fail(format!(
                        "the character kept in the settings no longer loads ({why}); the built-in one is used"
                    ));
                }
            }
            Ok(None) => {
                self.set_character(&CharacterSettings::default());
            }
            Err(e) => {
                // The file is left as it is (nothing saved over it until
                // the user chooses again).
                let speed = self.doc().header().comfort_speed;
                self.baker.character = CharacterChoice::load(&CharacterSettings::default(), speed).ok();
                self.fail(format!("the walkers' setting cannot be read ({e}); the built-in character is used"));
            }
        }
    }

    fn save_walkers(&mut self) {
        let settings = self.baker.character.as_ref().map(|c| &c.settings);
        if let Err(e) = CharacterSettings::save(&self.autosaver.dir, settings) {
            self.fail(format!("cannot keep the walkers' setting in {}: {e}", self.autosaver.dir.display()));
        }
    }

    /// Selects walker `agent` of the last bake, stops the timeline at `time`
    /// (modulo the period) and centres the patch view (and the 3D view's
    /// camera) on the walker.
    fn show_walker(&mut self, agent: usize, time: f64) {
        let Some(r) = self.baker.result.as_ref() else { return };
        let period = r.baked.header.period;
        let tau = time.rem_euclid(period);
        self.selection = Selection::Walker(agent);
        self.playback.time = tau;
        self.playback.playing = false;
        // The 3D view stays (its camera turns to the walker); any other
        // view gives way to the patch view, centred on it.
        if self.mode != ViewMode::Walkers3d {
            self.mode = ViewMode::Patch;
        }
        if let Some((_, p, _)) = crate::view::agents_at(&r.baked, tau).into_iter().find(|(i, ..)| *i == agent) {
            let half = r.baked.header.size / 2.0;
            self.views.patch.pan = [p[0] - half, p[1] - half];
            self.views.scene3d.look_at(p, r.baked.header.size);
        }
        self.say(format!("walker {agent} at t = {tau:.2} s"));
    }

    /// New, Open or Quit: asks about unsaved changes first.
    fn leave(&mut self, c: Command) {
        let asked = std::mem::take(&mut self.discard_ok);
        if self.dirty() && !asked {
            self.windows.prompt = Some(c);
            return;
        }
        match c {
            Command::New => {
                self.load(new_document(), None);
                self.say("new document");
            }
            Command::Open(p) if p.as_os_str().is_empty() => {
                let dir = self.document.dialog_dir();
                self.windows.dialog = Some(FileDialog::new(DialogPurpose::Open, dir, String::new()));
            }
            Command::Open(p) => self.open_now(&p),
            _ => self.quit = true,
        }
    }

    fn load(&mut self, doc: PatchDocument, file: Option<PathBuf>) {
        self.baker.clear();
        self.document.load(doc, file);
        self.selection = Selection::None;
        self.playback.time = 0.0;
        self.views.patch.reset();
        self.derived.invalidate();
        self.autosaver.discard();
        self.panels.library.show_dir(library::default_dir(self.document.file.as_deref()));
        self.refresh();
    }

    fn open_now(&mut self, p: &Path) {
        match crowdpatch::document::read_patch_document(p) {
            Ok((doc, unknown)) => {
                self.load(doc, Some(p.to_path_buf()));
                if let Err(e) = files::push_recent(&self.autosaver.dir, &mut self.recent, p) {
                    self.fail(format!("could not update the recent files: {e}"));
                }
                if unknown.is_empty() {
                    self.say(format!("opened {}", p.display()));
                } else {
                    let list: Vec<String> = unknown.iter().map(|u| u.path.to_string()).collect();
                    let list = list.join(", ");
                    self.fail(format!(
                        "opened {}; unknown fields are ignored and will be dropped on save: {list}",
                        p.display()
                    ));
                }
            }
            Err(e) => {
                self.windows.error = Some(format!("Could not open {}:\n{e}", p.display()));
                self.fail(format!("could not open {}", p.display()));
            }
        }
    }

    fn save_to(&mut self, p: &Path) {
        match self.document.save_to(p) {
            Ok(()) => {
                self.derived.invalidate();
                self.autosaver.discard();
                let _ = files::push_recent(&self.autosaver.dir, &mut self.recent, p);
                self.say(format!("saved {}", p.display()));
            }
            Err(e) => {
                self.windows.error = Some(format!("Could not save {}:\n{e}\nThe document is unchanged.", p.display()));
                self.fail(format!("could not save {}: {e}", p.display()));
            }
        }
    }

    fn recover(&mut self, p: &Path) {
        let Some((_, a)) = self.windows.recovery.iter().find(|(f, _)| f == p).cloned() else {
            self.fail(format!("{}: no such autosave", p.display()));
            return;
        };
        self.load(a.document, a.file.clone());
        // Recovered work is unsaved unless it equals the file on disk.
        let on_disk = a.file.as_deref().and_then(|f| crowdpatch::document::read_patch_document(f).ok());
        let saved = on_disk.map_or_else(new_document, |d| d.0);
        self.document.set_saved(saved == *self.doc());
        let _ = std::fs::remove_file(p);
        self.windows.recovery.retain(|(f, _)| f != p);
        self.say("recovered the autosaved document; save it to keep it");
    }

    /// Writes the bake as GLB or PNG, or asks where when `p` is empty.
    fn export(&mut self, p: &Path, png: bool) {
        if p.as_os_str().is_empty() {
            let (d, name) = (&self.document, self.doc().name.as_deref());
            self.windows.dialog = Some(FileDialog::export(png, d.dialog_dir(), d.file.as_deref(), name));
            return;
        }
        let Some(r) = &self.baker.result else {
            self.fail("nothing to export: bake first (B)");
            return;
        };
        let out = if png { crate::export::write_png(&r.bake, p) } else { crate::export::write_glb(&r.bake, p) };
        match out {
            Ok(()) => {
                let stale = self.baker.stale(self.document.revision());
                let stale = if stale { " (of the last bake; the document has changed since)" } else { "" };
                self.say(format!("exported {}{stale}", p.display()))
            }
            Err(e) => self.fail(format!("export failed: {e:#}")),
        }
    }

    // ------------------------------------------------------------------
    // Layout: menu, side panels, central view, windows.

    fn menu_bar(&mut self, ui: &mut Ui) {
        let title = self.document.file.as_deref().map_or("untitled".to_string(), |f| f.display().to_string());
        let mut m = MenuCx {
            commands: &mut self.pending,
            recent: &self.recent,
            title,
            dirty: self.document.dirty(),
            can_undo: self.document.can_undo(),
            can_redo: self.document.can_redo(),
            has_result: self.baker.result.is_some(),
            baking: self.baker.baking(),
            auto_bake: &mut self.baker.auto,
            mode: &mut self.mode,
            help: &mut self.windows.help,
            reset_view: false,
        };
        MenuBar::ui(ui, &mut m);
        if m.reset_view {
            self.views.patch.reset();
        }
    }

    fn left_panel(&mut self, ui: &mut Ui) {
        let p = &mut self.panels;
        p.toolbar.ui(ui, &mut self.tools);
        ui.separator();
        let mut cx = Cx::new(self.document.untracked(), &self.derived, &mut self.selection, &mut self.pending);
        egui::CollapsingHeader::new("Parameters").default_open(true).show(ui, |ui| p.parameters.ui(ui, &mut cx));
        egui::CollapsingHeader::new("Pattern library").default_open(true).show(ui, |ui| p.library.ui(ui, &mut cx));
        egui::CollapsingHeader::new("Sides").default_open(true).show(ui, |ui| p.library.sides_ui(ui, &mut cx));
        let refused = cx.refused.take();
        if cx.edited {
            self.document.touch();
        }
        if let Some(m) = refused {
            self.fail(m);
        }
    }

    fn right_panel(&mut self, ui: &mut Ui) {
        let revision = self.document.revision();
        let (p, baker, stages) = (&mut self.panels, &mut self.baker, &mut self.stages);
        let mut cx = Cx::new(self.document.untracked(), &self.derived, &mut self.selection, &mut self.pending);
        egui::CollapsingHeader::new("Bake")
            .default_open(true)
            .show(ui, |ui| p.bake.ui(ui, &mut cx, baker, stages, revision));
        let result = baker.result.as_ref();
        egui::CollapsingHeader::new("Selection").default_open(true).show(ui, |ui| p.inspector.ui(ui, &mut cx, result));
        egui::CollapsingHeader::new("Metrics")
            .default_open(true)
            .show(ui, |ui| p.metrics.ui(ui, baker.result.as_ref(), &mut self.playback));
        egui::CollapsingHeader::new(ProblemsPanel::title(cx.derived, result))
            .id_salt("problems")
            .default_open(true)
            .show(ui, |ui| p.problems.ui(ui, &mut cx, result));
        let refused = cx.refused.take();
        if cx.edited {
            self.document.touch();
        }
        if let Some(m) = refused {
            self.fail(m);
        }
    }

    fn central(&mut self, ui: &mut Ui) {
        let mut cx = Cx::new(self.document.untracked(), &self.derived, &mut self.selection, &mut self.pending);
        let (mode, tiling) = (&mut self.mode, &mut self.views.tiling);
        ui.horizontal(|ui| {
            ui.selectable_value(mode, ViewMode::Patch, "Patch");
            ui.selectable_value(mode, ViewMode::Tiling, "Tiling 3×3");
            ui.selectable_value(mode, ViewMode::Walkers3d, "3D");
            ui.separator();
            if *mode == ViewMode::Tiling {
                tiling.header(ui, &mut cx);
            } else if *mode == ViewMode::Walkers3d {
                let s3 = &mut self.views.scene3d;
                if ui.checkbox(&mut s3.tiled, "3×3 tiling").changed() {
                    s3.camera = None;
                }
                ui.checkbox(&mut s3.footprints, "footprints");
            } else {
                ui.label(RichText::new("scroll: zoom · middle or Alt+drag: pan · Home: reset").weak());
            }
        });
        let scene = Scene {
            result: self.baker.result.as_ref(),
            stages: self.stages,
            time: self.playback.time,
            mode: self.mode,
        };
        let charts_h = (ui.available_height() * 0.28).clamp(150.0, 260.0);
        let view_h = ui.available_height() - charts_h - 8.0;
        let size = vec2(ui.available_width(), view_h);
        if self.mode == ViewMode::Walkers3d {
            match self.baker.result.as_ref().and_then(|r| r.playable.as_ref()) {
                Some(Ok(playable)) => {
                    let playable = playable.clone();
                    self.views.scene3d.ui(ui, size, &mut cx, &playable, scene.time);
                }
                other => {
                    let why = match other {
                        Some(Err(e)) => format!("The bake cannot be played in 3D: {e}"),
                        _ if self.baker.character.is_none() => {
                            "Walkers are baked as capsules: choose a character in the Bake panel \
                             (Walkers: characters), then bake (B)."
                                .to_string()
                        }
                        _ if self.baker.baking() => "Baking the characters' footsteps and animation…".to_string(),
                        _ => "Bake (B) to see the walkers in 3D.".to_string(),
                    };
                    ui.allocate_ui(size, |ui| {
                        ui.centered_and_justified(|ui| ui.label(RichText::new(why).size(16.0)));
                    });
                }
            }
        } else {
            self.layout.patch = Some(self.views.patch.ui(ui, size, &mut cx, &mut self.tools, &scene));
        }
        ui.add_space(4.0);
        self.layout.charts = self.views.chart.ui(ui, charts_h - 22.0, &mut cx, &mut self.tools, scene.time);
        ChartView::legend(ui, &cx);
    }

    fn windows(&mut self, ctx: &egui::Context) {
        match self.windows.ui(ctx, self.document.file.as_deref(), &mut self.pending) {
            Some(Answer::Discard(then)) => {
                self.discard_ok = true;
                self.pending.push(then);
            }
            Some(Answer::SaveThen(then)) => {
                self.run_command(Command::Save);
                if !self.dirty() {
                    self.discard_ok = true;
                    self.pending.push(then);
                }
            }
            None => {}
        }
    }

    /// Removes this process's autosave (call on a clean exit).
    pub fn on_exit(&mut self) {
        self.baker.stop();
        // A clean exit: unsaved changes were saved or knowingly discarded.
        self.autosaver.discard();
    }
}

fn new_document() -> PatchDocument {
    PatchDocument::new(16.0, 10.0)
}
