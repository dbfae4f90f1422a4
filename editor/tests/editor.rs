//! Headless tests of the editor (egui_kittest, no GPU, no display): each
//! drives a tool or panel through pointer and keyboard events, as a user
//! would, and asserts on the document and the files it changed.

use crowdpatch::model::{Direction, Obstacle, PatchDocument, Side, SolverKind};
use crowdpatch::problem::Target;
use crowdpatch_editor::app::ViewMode;
use crowdpatch_editor::edit::{self, PointId};
use crowdpatch_editor::tools::{Selection, ToolKind};
use crowdpatch_editor::{Command, EditorApp};
use egui::{Key, Modifiers, Pos2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use std::path::PathBuf;

mod common;
use common::{harness, repo};

/// A copy of the shipped patches and patterns in a temporary folder, so
/// that saving never touches the repository.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["patches", "patterns"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        for e in std::fs::read_dir(repo().join(sub)).unwrap() {
            let p = e.unwrap().path();
            std::fs::copy(&p, dir.path().join(sub).join(p.file_name().unwrap())).unwrap();
        }
    }
    dir
}

fn click(h: &mut Harness<'_, EditorApp>, p: Pos2) {
    h.hover_at(p);
    h.drag_at(p);
    h.drop_at(p);
    h.run();
}

fn drag(h: &mut Harness<'_, EditorApp>, from: Pos2, to: Pos2) {
    h.hover_at(from);
    h.drag_at(from);
    for k in 1..=6 {
        h.hover_at(from + (to - from) * (k as f32 / 6.0));
    }
    h.drop_at(to);
    h.run();
}

fn chart_pos(h: &Harness<'_, EditorApp>, side: Side, s: f64, t: f64) -> Pos2 {
    h.state().layout.charts[side.index()].expect("chart drawn").to_screen(s, t)
}

fn patch_pos(h: &Harness<'_, EditorApp>, p: [f64; 2]) -> Pos2 {
    h.state().layout.patch.expect("patch view drawn").to_screen(p)
}

fn points(app: &EditorApp, side: Side, direction: Direction) -> Vec<(f64, f64)> {
    app.sides()[side.index()].pattern.points(direction).iter().map(|b| (b.s, b.t)).collect()
}

#[test]
fn chart_click_adds_an_entry_a_drag_moves_it_and_undo_takes_the_drag_back_in_one_step() {
    let home = tempfile::tempdir().unwrap();
    let mut h = harness(home.path());
    h.run();
    h.get_by_label("Add entry").click();
    h.run();
    assert_eq!(h.state().tool(), ToolKind::AddEntry);

    // Click the south chart at s = 4 m, t = 2.5 s.
    let p = chart_pos(&h, Side::South, 4.0, 2.5);
    click(&mut h, p);
    assert_eq!(points(h.state(), Side::South, Direction::Entry), vec![(4.0, 2.5)]);
    let id = PointId { side: Side::South, direction: Direction::Entry, index: 0 };
    assert_eq!(h.state().selection, Selection::Point(id));
    // The document holds it inline, with the default velocity.
    assert_eq!(edit::point(h.state().doc(), id).unwrap().velocity, None);

    // Drag it to s = 10 m, t = 7 s (snapped to 0.25).
    let to = chart_pos(&h, Side::South, 10.0, 7.0);
    drag(&mut h, p, to);
    assert_eq!(points(h.state(), Side::South, Direction::Entry), vec![(10.0, 7.0)]);

    // One Ctrl+Z undoes the whole drag; the next one the click.
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    assert_eq!(points(h.state(), Side::South, Direction::Entry), vec![(4.0, 2.5)]);
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    assert!(points(h.state(), Side::South, Direction::Entry).is_empty());
    // Ctrl+Shift+Z redoes.
    h.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z);
    h.run();
    assert_eq!(points(h.state(), Side::South, Direction::Entry), vec![(4.0, 2.5)]);

    // An exit on the east chart with the X tool; a right click deletes it.
    h.key_press(Key::X);
    h.run();
    let q = chart_pos(&h, Side::East, 12.0, 9.0);
    click(&mut h, q);
    assert_eq!(points(h.state(), Side::East, Direction::Exit), vec![(12.0, 9.0)]);
    h.hover_at(q);
    h.event(egui::Event::PointerButton {
        pos: q,
        button: egui::PointerButton::Secondary,
        pressed: true,
        modifiers: Modifiers::NONE,
    });
    h.event(egui::Event::PointerButton {
        pos: q,
        button: egui::PointerButton::Secondary,
        pressed: false,
        modifiers: Modifiers::NONE,
    });
    h.run();
    assert!(points(h.state(), Side::East, Direction::Exit).is_empty());
}

#[test]
fn clicking_near_a_side_in_the_patch_view_adds_a_point_at_the_play_time() {
    let home = tempfile::tempdir().unwrap();
    let mut h = harness(home.path());
    h.run();
    h.state_mut().playback.time = 3.0;
    h.key_press(Key::E);
    h.run();
    // Near the west side, at y = 12 m: s = L − y = 4 m.
    let p = patch_pos(&h, [0.1, 12.0]);
    click(&mut h, p);
    assert_eq!(points(h.state(), Side::West, Direction::Entry), vec![(4.0, 3.0)]);
}

#[test]
fn obstacles_are_drawn_with_the_circle_and_polygon_tools_and_moved_with_select() {
    let home = tempfile::tempdir().unwrap();
    let mut h = harness(home.path());
    h.run();
    h.get_by_label("Circle obstacle").click();
    h.run();
    let (a, b) = (patch_pos(&h, [8.0, 8.0]), patch_pos(&h, [9.5, 8.0]));
    drag(&mut h, a, b);
    assert_eq!(h.state().doc().obstacles, vec![Obstacle::Circle { center: [8.0, 8.0], radius: 1.5 }]);

    h.get_by_label("Polygon obstacle").click();
    h.run();
    for v in [[2.0, 2.0], [5.0, 2.0], [5.0, 4.0]] {
        let p = patch_pos(&h, v);
        click(&mut h, p);
    }
    // Backspace removes the last vertex; put it back, then Enter closes.
    h.key_press(Key::Backspace);
    h.run();
    let p = patch_pos(&h, [2.0, 4.0]);
    click(&mut h, p);
    h.key_press(Key::Enter);
    h.run();
    assert_eq!(h.state().doc().obstacles[1], Obstacle::Polygon(vec![[2.0, 2.0], [5.0, 2.0], [2.0, 4.0]]));
    assert_eq!(h.state().selection, Selection::Obstacle(1));

    // Select tool: drag the circle by its inside 2 m east.
    h.key_press(Key::V);
    h.run();
    let (a, b) = (patch_pos(&h, [7.5, 8.0]), patch_pos(&h, [9.5, 8.0]));
    drag(&mut h, a, b);
    assert_eq!(h.state().doc().obstacles[0], Obstacle::Circle { center: [10.0, 8.0], radius: 1.5 });

    // Undo: the move, then the polygon.
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    assert_eq!(h.state().doc().obstacles[0], Obstacle::Circle { center: [8.0, 8.0], radius: 1.5 });
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    assert_eq!(h.state().doc().obstacles.len(), 1);

    // A circle close to the first gets a clearance warning.
    h.state_mut().queue(Command::AddObstacle(Obstacle::Circle { center: [10.9, 8.0], radius: 1.0 }));
    h.run();
    let w = &h.state().derived.warnings;
    assert!(w.iter().any(|w| w.obstacle == 0 && w.other == Some(1)), "{w:?}");
    assert!(h.query_all_by_label_contains("no agent passes between them").count() >= 1);

    // Backspace that removes a polygon's only vertex deletes nothing else…
    h.key_press(Key::P);
    h.run();
    let n = h.state().doc().obstacles.len();
    h.state_mut().selection = Selection::Obstacle(0);
    let p = patch_pos(&h, [13.0, 13.0]);
    click(&mut h, p);
    h.key_press(Key::Backspace);
    h.run();
    assert_eq!(h.state().doc().obstacles.len(), n);
    // …and with no polygon in progress it deletes the selection.
    h.key_press(Key::Backspace);
    h.run();
    assert_eq!(h.state().doc().obstacles.len(), n - 1);
}

#[test]
fn bake_runs_in_the_background_and_fills_the_metrics_panel() {
    let home = tempfile::tempdir().unwrap();
    let ws = workspace();
    let mut h = harness(home.path());
    h.state_mut().open(&ws.path().join("patches/figure7.patch.json"));
    h.run();
    assert!(h.state().derived.resolved.is_some(), "{:?}", h.state().derived.problems);
    h.get_by_label("Bake (B)").click();
    h.step();
    assert!(h.state().baking() || h.state().baker.result.is_some());
    h.state_mut().wait_for_bake();
    h.run();
    let r = h.state().baker.result.as_ref().expect("baked");
    assert_eq!(r.baked.agents.len(), 10);
    assert!(r.bake.converged());
    assert_eq!(r.revision, h.state().document.revision());
    // The metrics panel shows the report's figures.
    assert!(h.query_by_label("min separation").is_some());
    assert!(h.query_by_label_contains("collision-free").is_some());
    // Stage toggles.
    assert!(!h.state().stages.matching);
    h.get_by_label("(a) matching lines").click();
    h.run();
    assert!(h.state().stages.matching);

    // A cancelled bake leaves the last result in place.
    h.state_mut().run_command(Command::Bake);
    h.state_mut().run_command(Command::CancelBake);
    h.state_mut().wait_for_bake();
    assert!(h.state().baker.result.is_some());

    // Exports: GLB and PNG of the bake.
    let glb = ws.path().join("figure7.glb");
    let png = ws.path().join("figure7.png");
    h.state_mut().run_command(Command::ExportGlb(glb.clone()));
    h.state_mut().run_command(Command::ExportPng(png.clone()));
    assert_eq!(&std::fs::read(&glb).unwrap()[..4], b"glTF");
    assert_eq!(&std::fs::read(&png).unwrap()[..8], b"\x89PNG\r\n\x1a\n");
}

#[test]
fn an_invalid_document_shows_its_problems_where_they_are_and_cannot_bake() {
    let home = tempfile::tempdir().unwrap();
    let mut h = harness(home.path());
    h.run();
    h.key_press(Key::E);
    h.run();
    let p = chart_pos(&h, Side::North, 6.0, 4.0);
    click(&mut h, p);
    // One entry and no exit: parity.
    assert!(h.state().derived.problems.iter().any(|p| p.path == "sides"), "{:?}", h.state().derived.problems);
    assert!(h.query_all_by_label_contains("break parity").next().is_some());
    // An exit right next to it in space and time: inseparable, shown on both points.
    h.key_press(Key::X);
    h.run();
    let q = chart_pos(&h, Side::North, 6.25, 4.0);
    click(&mut h, q);
    let problems = &h.state().derived.problems;
    let id = PointId { side: Side::North, direction: Direction::Entry, index: 0 };
    assert!(problems.iter().any(|p| p.target.points().contains(&id)), "{problems:?}");
    assert!(h.state().derived.resolved.is_none());
    h.state_mut().run_command(Command::Bake);
    assert!(!h.state().baking());
    assert!(h.state().message.as_ref().is_some_and(|m| m.1 && m.0.contains("cannot bake")));
}

#[test]
fn save_and_reopen_round_trip_and_unsaved_changes_are_asked_about() {
    let home = tempfile::tempdir().unwrap();
    let ws = workspace();
    let file = ws.path().join("patches/plaza.patch.json");
    let mut h = harness(home.path());
    h.state_mut().open(&file);
    h.run();
    let original = h.state().doc().clone();
    assert!(!h.state().dirty());

    // Edit: a circle obstacle, then Ctrl+S.
    h.state_mut().queue(Command::AddObstacle(Obstacle::Circle { center: [3.0, 12.0], radius: 0.5 }));
    h.run();
    assert!(h.state().dirty());
    h.key_press_modifiers(Modifiers::COMMAND, Key::S);
    h.run();
    assert!(!h.state().dirty());
    let (saved, unknown) = crowdpatch::document::read_patch_document(&file).unwrap();
    assert!(unknown.is_empty());
    assert_eq!(saved, *h.state().doc());
    assert_eq!(saved.obstacles.len(), original.obstacles.len() + 1);
    assert_eq!(h.state().recent.first(), Some(&edit::absolute(&file)));

    // Save as into another folder: pattern references are re-based.
    let avenue = ws.path().join("patches/avenue.patch.json");
    h.state_mut().open(&avenue);
    h.run();
    let sub = ws.path().join("elsewhere");
    std::fs::create_dir_all(&sub).unwrap();
    let moved = sub.join("avenue-copy.patch.json");
    h.state_mut().run_command(Command::SaveAs(moved.clone()));
    let a = PatchDocument::from_json(&std::fs::read_to_string(&avenue).unwrap()).unwrap().0;
    let b = crowdpatch::load_patch(&moved).unwrap();
    assert_eq!(a.resolve(None, avenue.parent().unwrap()).unwrap().crossings(), b.crossings());

    // Unsaved changes: New asks; Cancel keeps the document, Don't save drops it.
    h.state_mut().queue(Command::AddPoint { side: Side::South, direction: Direction::Entry, s: 1.0, t: 1.0 });
    h.run();
    let edited = h.state().doc().clone();
    assert!(h.state().dirty());
    h.key_press_modifiers(Modifiers::COMMAND, Key::N);
    h.run();
    assert!(h.state().prompting(), "{:?}", h.state().message);
    h.get_by_label("Cancel").click();
    h.run();
    assert!(!h.state().prompting());
    assert_eq!(*h.state().doc(), edited);
    h.key_press_modifiers(Modifiers::COMMAND, Key::N);
    h.run();
    h.get_by_label("Don't save").click();
    h.run();
    assert_eq!(*h.state().doc(), PatchDocument::new(16.0, 10.0));
    assert!(h.state().document.file.is_none());
    // The file on disk was not touched by the discarded edit.
    assert_ne!(crowdpatch::document::read_patch_document(&moved).unwrap().0, edited);
}

#[test]
fn autosave_after_a_crash_is_offered_and_recovers_the_work() {
    let home = tempfile::tempdir().unwrap();
    let ws = workspace();
    let file = ws.path().join("patches/park.patch.json");
    let mut h = harness(home.path());
    h.state_mut().open(&file);
    h.run();
    h.state_mut().queue(Command::AddObstacle(Obstacle::Circle { center: [12.0, 4.0], radius: 0.7 }));
    h.run();
    let edited = h.state().doc().clone();
    // Let time pass: the autosave is written after a few seconds.
    h.run_steps(20);
    let own = crowdpatch_editor::files::autosave_path(home.path());
    assert!(own.is_file(), "autosave written");

    // Simulate a crash: the writer's process is gone (rename the file and
    // give it a pid that does not run).
    let mut a: crowdpatch_editor::files::Autosave =
        serde_json::from_str(&std::fs::read_to_string(&own).unwrap()).unwrap();
    assert_eq!(a.document, edited);
    a.pid = 4_999_999;
    let dead = home.path().join("autosave/autosave-4999999.json");
    std::fs::write(&dead, serde_json::to_string(&a).unwrap()).unwrap();
    std::fs::remove_file(&own).unwrap();
    drop(h);

    let mut h = harness(home.path());
    h.run();
    assert_eq!(h.state().windows.recovery.len(), 1);
    assert!(h.query_by_label_contains("stopped without saving").is_some());
    h.get_by_label("Recover").click();
    h.run();
    assert_eq!(*h.state().doc(), edited);
    assert_eq!(h.state().document.file.as_deref(), Some(file.as_path()));
    assert!(h.state().dirty(), "recovered work is unsaved until saved");
    assert!(!dead.exists());
    // Saving removes the autosave.
    h.key_press_modifiers(Modifiers::COMMAND, Key::S);
    h.run();
    assert!(!crowdpatch_editor::files::autosave_path(home.path()).exists());
    assert_eq!(crowdpatch::document::read_patch_document(&file).unwrap().0, edited);
}

#[test]
fn library_patterns_apply_to_a_side_and_a_side_saves_as_a_pattern() {
    let home = tempfile::tempdir().unwrap();
    let ws = workspace();
    let mut h = harness(home.path());
    h.state_mut().open(&ws.path().join("patches/figure7.patch.json"));
    h.run();
    assert_eq!(h.state().panels.library.dir, edit::absolute(&ws.path().join("patterns")));
    // Apply "sparse" to the south side (the side picked in the panel).
    let sparse = ws.path().join("patterns/sparse.pattern.json");
    let pattern = crowdpatch::document::load_pattern(&sparse).unwrap();
    let apply = h.get_all_by_label("Apply").next().expect("an Apply button").rect().center();
    // The first entry in name order is avenue-in; use the command for sparse
    // and the button for the first one.
    click(&mut h, apply);
    let avenue_in = crowdpatch::document::load_pattern(&ws.path().join("patterns/avenue-in.pattern.json")).unwrap();
    assert_eq!(h.state().sides()[0].pattern.entries, avenue_in.entries);
    h.state_mut().queue(Command::ApplyPattern { side: Side::East, file: sparse.clone(), link: true });
    h.run();
    assert_eq!(
        h.state().doc().sides.east.as_ref().unwrap().pattern.as_deref(),
        Some("../patterns/sparse.pattern.json")
    );
    assert_eq!(h.state().sides()[1].pattern.entries, pattern.entries);

    // Save the west side as a pattern; it loads back equal (side frame).
    let out = ws.path().join("patterns/west.pattern.json");
    h.state_mut().run_command(Command::SaveSideAsPattern { side: Side::West, file: out.clone() });
    let back = crowdpatch::document::load_pattern(&out).unwrap();
    assert_eq!(back.entries, h.state().sides()[3].pattern.entries);
    assert_eq!(back.exits, h.state().sides()[3].pattern.exits);
}

#[test]
fn tiling_preview_reports_seams_and_make_tileable_fixes_them() {
    let home = tempfile::tempdir().unwrap();
    let ws = workspace();
    let mut h = harness(home.path());
    h.state_mut().open(&ws.path().join("patches/avenue.patch.json"));
    h.run();
    h.key_press(Key::T);
    h.run();
    assert_eq!(h.state().mode, ViewMode::Tiling);
    assert!(h.query_by_label_contains("Seamless").is_some());

    h.state_mut().open(&ws.path().join("patches/figure7.patch.json"));
    h.run();
    assert!(h.query_by_label_contains("Seams that do not match").is_some());
    h.get_by_label("Make tileable").click();
    h.run();
    assert!(h.query_by_label_contains("Seamless").is_some());
    let base = ws.path().join("patches");
    for side in Side::ALL {
        assert!(edit::seam_mismatches(h.state().doc(), side, &base, 1e-9).is_empty());
    }
    // The tiled patch bakes, and every agent that leaves across a side is
    // met by one entering the neighbour there at the same time and velocity.
    h.state_mut().run_command(Command::Bake);
    h.state_mut().wait_for_bake();
    let r = h.state().baker.result.as_ref().expect("baked");
    let pats = &r.baked.patterns;
    for side in Side::ALL {
        for x in &pats[side].exits {
            let found = pats[side.opposite()].entries.iter().any(|e| {
                (e.s - (16.0 - x.s)).abs() < 1e-9
                    && (e.t - x.t).abs() < 1e-9
                    && (e.velocity[0] - x.velocity[0]).abs() < 1e-9
                    && (e.velocity[1] - x.velocity[1]).abs() < 1e-9
            });
            assert!(found, "exit on {side} at s = {}, t = {} has no partner", x.s, x.t);
        }
    }
}

#[test]
fn help_window_lists_the_shortcuts() {
    let home = tempfile::tempdir().unwrap();
    let mut h = harness(home.path());
    h.run();
    h.key_press(Key::F1);
    h.run();
    assert!(h.query_by_label("Keyboard shortcuts").is_some());
    assert!(h.query_by_label("Ctrl+Shift+Z, Ctrl+Y").is_some());
}

#[test]
fn auto_rebake_runs_once_edits_settle_and_follows_the_document() {
    let home = tempfile::tempdir().unwrap();
    let ws = workspace();
    let mut h = harness(home.path());
    h.state_mut().open(&ws.path().join("patches/figure7.patch.json"));
    h.run();
    h.get_by_label("Auto re-bake").click();
    h.run_steps(2);
    assert!(h.state().baker.auto);
    // An edit (a new seed) while the first automatic bake may still run.
    h.state_mut().document.edit().seed = Some(7);
    // Step frames (each 0.25 s of app time) until the background bake lands.
    let mut baked = false;
    for _ in 0..400 {
        h.step();
        if h.state().baker.result.as_ref().is_some_and(|r| r.revision == h.state().document.revision()) {
            baked = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(baked, "an automatic bake of the edited document arrived");
    assert_eq!(h.state().baker.result.as_ref().unwrap().baked.header.seed, 7);
}

#[test]
fn quitting_with_unsaved_changes_asks_first() {
    let home = tempfile::tempdir().unwrap();
    let mut h = harness(home.path());
    h.run();
    h.state_mut().queue(Command::AddObstacle(Obstacle::Circle { center: [8.0, 8.0], radius: 1.0 }));
    h.run();
    h.key_press_modifiers(Modifiers::COMMAND, Key::Q);
    h.run();
    assert!(h.state().prompting());
    assert!(!h.state().quit);
    h.get_by_label("Don't save").click();
    h.run_steps(2);
    assert!(h.state().quit);
}

#[test]
fn parameters_panel_edits_the_document_and_each_edit_undoes() {
    let home = tempfile::tempdir().unwrap();
    let mut h = harness(home.path());
    h.run();
    h.get_by_label("Period π").set_value_accesskit(12.0);
    h.run();
    assert_eq!(h.state().doc().period, 12.0);
    h.get_by_label("Agent radius r").set_value_accesskit(0.4);
    h.run();
    assert_eq!(h.state().doc().agent_radius, Some(0.4));
    h.get_by_label("Seed").set_value_accesskit(42.0);
    h.run();
    assert_eq!(h.state().doc().seed, Some(42));
    // Out-of-range values are refused with the format's own words, never
    // clamped or stored.
    h.get_by_label("Comfort speed").set_value_accesskit(-3.0);
    h.run();
    assert_eq!(h.state().doc().comfort_speed, None);
    let (message, error) = h.state().message.clone().unwrap();
    assert!(error && message.contains("comfort_speed") && message.contains("[0.1, 10]"), "{message}");
    // Each settled edit is one undo step.
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    assert_eq!(h.state().doc().seed, None);
    assert_eq!(h.state().doc().agent_radius, Some(0.4));
}

#[test]
fn the_solver_list_offers_every_solver_with_what_it_is() {
    let home = tempfile::tempdir().unwrap();
    let mut h = harness(home.path());
    h.run();
    h.get_by_label("Solver").click();
    h.run();
    for kind in SolverKind::ALL {
        let (name, short, _) = crowdpatch_editor::panels::parameters::solver_text(kind);
        assert!(h.query_by_label(&format!("{name} ({short})")).is_some(), "{kind:?} is offered");
    }
    assert_eq!(SolverKind::ALL.len(), 4);
    // Picking one edits the document, as one undo step.
    let (name, short, _) = crowdpatch_editor::panels::parameters::solver_text(SolverKind::SocialForces);
    h.get_by_label(&format!("{name} ({short})")).click();
    h.run();
    assert_eq!(h.state().doc().solver.method, SolverKind::SocialForces);
    assert!(h.state().dirty());
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    assert_eq!(h.state().doc().solver.method, SolverKind::Default);
    assert!(!h.state().dirty());
}

#[test]
fn an_inseparable_pair_marks_both_points_from_the_problems_target() {
    let home = tempfile::tempdir().unwrap();
    let mut h = harness(home.path());
    h.run();
    let entry = PointId { side: Side::North, direction: Direction::Entry, index: 0 };
    let exit = PointId { side: Side::North, direction: Direction::Exit, index: 0 };
    h.state_mut().queue(Command::AddPoint { side: Side::North, direction: Direction::Entry, s: 6.0, t: 4.0 });
    h.state_mut().queue(Command::AddPoint { side: Side::North, direction: Direction::Exit, s: 6.25, t: 4.0 });
    h.run();
    let d = &h.state().derived;
    let pair = d.problems.iter().find(|p| p.target == Target::PointPair(entry, exit));
    assert!(pair.is_some(), "{:?}", d.problems);
    assert!(d.point_problems.get(&entry).is_some_and(|m| m.iter().any(|m| m.contains("too close"))), "{d:?}");
    assert!(d.point_problems.get(&exit).is_some_and(|m| m.iter().any(|m| m.contains("too close"))), "{d:?}");

    // The inspector of either point lists the problem (the problems panel
    // lists it once more).
    h.state_mut().selection = Selection::None;
    h.run();
    let listed = h.query_all_by_label_contains("too close to be separable").count();
    assert!(listed >= 1);
    for id in [entry, exit] {
        h.state_mut().selection = Selection::Point(id);
        h.run();
        assert_eq!(h.query_all_by_label_contains("too close to be separable").count(), listed + 1, "{id:?}");
    }
    // A click on the problem selects its first point.
    h.state_mut().selection = Selection::None;
    h.run();
    h.get_all_by_label_contains("too close to be separable").next().unwrap().click();
    h.run();
    assert_eq!(h.state().selection, Selection::Point(entry));
}

#[test]
fn a_parameter_edit_makes_the_bake_stale_and_the_title_dirty_and_undo_clean_again() {
    let home = tempfile::tempdir().unwrap();
    let ws = workspace();
    let file = ws.path().join("patches/figure7.patch.json");
    let mut h = harness(home.path());
    h.state_mut().open(&file);
    h.run();
    h.state_mut().run_command(Command::Bake);
    h.state_mut().wait_for_bake();
    h.run();
    let title = file.display().to_string();
    let stale = "The document changed since this bake";
    let baked = h.state().document.revision();
    assert!(!h.state().baker.stale(baked));
    assert!(h.query_by_label(&title).is_some(), "clean title");
    assert!(h.query_by_label_contains(stale).is_none());

    // A parameter edited in its widget: a new revision.
    h.get_by_label("Seed").set_value_accesskit(9.0);
    h.run();
    assert_eq!(h.state().doc().seed, Some(9));
    assert_ne!(h.state().document.revision(), baked);
    assert!(h.state().dirty());
    assert!(h.state().baker.stale(h.state().document.revision()));
    h.run();
    assert!(h.query_by_label(&format!("{title} •")).is_some(), "dirty title");
    assert!(h.query_by_label_contains(stale).is_some());

    // Undo gives the baked, saved revision back: clean and fresh again.
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    assert_eq!(h.state().document.revision(), baked);
    assert!(!h.state().dirty());
    assert!(h.query_by_label(&title).is_some());
    assert!(h.query_by_label_contains(stale).is_none());
}

#[test]
fn the_pattern_generator_fills_the_four_sides_with_lanes_that_tile_and_undo_takes_it_back() {
    let home = tempfile::tempdir().unwrap();
    let ws = workspace();
    let mut h = harness(home.path());
    h.state_mut().open(&ws.path().join("patches/figure7.patch.json"));
    h.run();
    let before = h.state().doc().clone();
    h.get_by_label("Generate at human pace").click();
    h.run();
    // figure7 has points on its sides: the generator offers to replace them
    // or to add to them, never replaces them silently.
    assert!(h.query_by_label("Generate the four sides").is_none());
    let there: usize = h.state().sides().iter().map(|v| v.pattern.entries.len() + v.pattern.exits.len()).sum();
    h.get_by_label(&format!("Replace the {there} points")).click();
    h.run();
    let doc = h.state().doc().clone();
    assert_ne!(doc.sides, before.sides);
    // Every generated point carries its walker's speed, and the patch tiles
    // with itself.
    let base = ws.path().join("patches");
    for side in Side::ALL {
        let d = doc.sides.get(side).expect("a generated side");
        for p in d.entries.iter().flatten().chain(d.exits.iter().flatten()) {
            let v = p.velocity.expect("a velocity");
            assert!((0.45..=2.1).contains(&v[0].hypot(v[1])), "{v:?}");
        }
        assert!(edit::seam_mismatches(&doc, side, &base, 1e-6).is_empty(), "{side:?}");
    }
    assert!(h.state().derived.problems.is_empty(), "{:?}", h.state().derived.problems);
    // One undo step restores the sides.
    h.state_mut().run_command(Command::Undo);
    h.run();
    assert_eq!(h.state().doc().sides, before.sides);
    // Adding keeps every point that was there, the lanes' ones after them.
    let old: Vec<Vec<(f64, f64)>> = Side::ALL
        .iter()
        .flat_map(|&side| [Direction::Entry, Direction::Exit].map(|d| points(h.state(), side, d)))
        .collect();
    h.get_by_label("Add lanes to them").click();
    h.run();
    let new: Vec<Vec<(f64, f64)>> = Side::ALL
        .iter()
        .flat_map(|&side| [Direction::Entry, Direction::Exit].map(|d| points(h.state(), side, d)))
        .collect();
    let added: usize = old.iter().zip(&new).map(|(o, n)| n.len() - o.len()).sum();
    assert!(added > 0);
    for (o, n) in old.iter().zip(&new) {
        assert_eq!(&n[..o.len()], &o[..]);
    }
}

#[test]
fn the_pattern_generator_makes_a_flow_that_turns_a_corner() {
    let home = tempfile::tempdir().unwrap();
    let ws = workspace();
    let mut h = harness(home.path());
    h.state_mut().open(&ws.path().join("patches/figure7.patch.json"));
    h.run();
    h.get_by_label("Generate at human pace").click();
    h.run();
    // The four corner shares sit beside the straight ones.
    for d in ["northeast", "northwest", "southwest", "southeast"] {
        assert!(h.query_by_label(d).is_some(), "{d}");
    }
    let g = &mut h.state_mut().panels.library.generator;
    (g.flows, g.corners) = ([0.0; 4], [1.0, 0.0, 0.0, 0.0]);
    h.run();
    let there: usize = h.state().sides().iter().map(|v| v.pattern.entries.len() + v.pattern.exits.len()).sum();
    h.get_by_label(&format!("Replace the {there} points")).click();
    h.run();
    // Heading north-east: in at west and south, out at north and east, at
    // 45° (patch frame); the patch tiles with itself and has no problem.
    let doc = h.state().doc().clone();
    let base = ws.path().join("patches");
    for side in Side::ALL {
        let d = doc.sides.get(side).expect("a generated side");
        let (entries, exits) = (d.entries.as_deref().unwrap_or(&[]), d.exits.as_deref().unwrap_or(&[]));
        let incoming = matches!(side, Side::West | Side::South);
        assert_eq!((entries.is_empty(), exits.is_empty()), (!incoming, incoming), "{side:?}");
        for p in entries.iter().chain(exits) {
            let v = p.velocity.expect("a velocity");
            assert!(v[0] > 0.3 && (v[0] - v[1]).abs() < 1e-9, "{side:?}: {v:?}");
        }
        assert!(edit::seam_mismatches(&doc, side, &base, 1e-6).is_empty(), "{side:?}");
    }
    assert!(h.state().derived.problems.is_empty(), "{:?}", h.state().derived.problems);
}

/// The document's meaning: its JSON as a value (key order and number
/// formatting aside).
fn meaning(doc: &PatchDocument) -> serde_json::Value {
    serde_json::from_str(&doc.to_json()).unwrap()
}

#[test]
fn a_typed_size_applies_on_enter_and_never_moves_the_selection() {
    let home = tempfile::tempdir().unwrap();
    let ws = workspace();
    let mut h = harness(home.path());
    h.state_mut().open(&ws.path().join("patches/plaza.patch.json"));
    h.run();
    let original = h.state().doc().clone();
    h.state_mut().selection = Selection::Obstacle(0);
    h.run();
    // Typing "12" into L: nothing applies while typing (the field passes
    // through "1"), and nothing else moves.
    h.get_by_label("Size L").focus();
    h.run();
    h.get_by_label("Size L").type_text("1");
    h.run();
    assert_eq!(h.state().doc().size, original.size, "a keystroke applied");
    h.get_by_label("Size L").type_text("2");
    h.run();
    assert_eq!(h.state().doc().size, original.size);
    assert_eq!(h.state().doc().obstacles, original.obstacles);
    h.key_press(Key::Enter);
    h.run();
    // 12 m would leave plaza's points and obstacles outside: refused, named.
    assert_eq!(*h.state().doc(), original);
    let (message, error) = h.state().message.clone().unwrap();
    assert!(
        error && message.contains("beyond 12 m") && message.contains("sides.east.exits[0] (s = 13.5 m)"),
        "{message}"
    );
    assert!(!h.state().dirty());
    // A larger size applies on Enter, as one undo step, moving nothing.
    h.get_by_label("Size L").set_value_accesskit(20.0);
    h.run();
    assert_eq!(h.state().doc().size, 20.0);
    assert_eq!(h.state().doc().obstacles, original.obstacles);
    assert_eq!(h.state().doc().sides, original.sides);
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    assert_eq!(*h.state().doc(), original);
    // A typed obstacle radius out of range is refused, the obstacle kept.
    h.state_mut().selection = Selection::Obstacle(0);
    h.run();
    for bad in [-5.0, 0.0] {
        h.get_by_label("Size L").set_value_accesskit(bad);
        h.run();
        assert_eq!(h.state().doc().size, original.size);
        let (message, _) = h.state().message.clone().unwrap();
        assert!(message.contains("size") && message.contains("not applied"), "{message}");
    }
    h.get_by_label("Period π").set_value_accesskit(0.0);
    h.run();
    assert_eq!(h.state().doc().period, original.period);
    assert!(h.state().message.clone().unwrap().0.contains("period"));
}

#[test]
fn opening_and_saving_changes_no_byte_of_meaning() {
    let home = tempfile::tempdir().unwrap();
    let ws = workspace();
    // Every shipped patch, and a document at the format's limits that the
    // former fields clamped (period 1200 s, comfort speed 6 m/s, tack
    // interval 20 s, fast factor 12, wait factor 2, a 1000 m patch).
    let mut files: Vec<PathBuf> = std::fs::read_dir(ws.path().join("patches"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".patch.json"))
        .collect();
    files.sort();
    let mut extreme = PatchDocument::new(1000.0, 1200.0);
    extreme.comfort_speed = Some(6.0);
    extreme.agent_radius = Some(0.01);
    extreme.seed = Some(u64::MAX);
    extreme.solver.tack_interval = 20.0;
    extreme.solver.fast_factor = 12.0;
    extreme.solver.wait_factor = 2.0;
    extreme.solver.slow_factor = 0.99;
    extreme.solver.max_iterations = 100_000;
    extreme.solver.margin = 0.009;
    extreme.obstacles.push(Obstacle::Circle { center: [999.0, 1.0], radius: 0.9 });
    let path = ws.path().join("patches/extreme.patch.json");
    std::fs::write(&path, extreme.to_json()).unwrap();
    assert!(crowdpatch::validate::parameter_problems(&extreme.header(), &extreme.solver).is_empty());
    files.push(path);
    assert!(files.len() >= 6);
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let before = PatchDocument::from_json(&text).unwrap().0;
        let mut h = harness(home.path());
        h.state_mut().open(file);
        h.run();
        // Every panel drawn, with an obstacle selected, then a point.
        if !before.obstacles.is_empty() {
            h.state_mut().selection = Selection::Obstacle(0);
        }
        h.run();
        h.run();
        assert!(!h.state().dirty(), "{}: unsaved changes right after opening", file.display());
        // Beside the original: pattern references keep their text.
        let out = file.with_file_name("saved.patch.json");
        h.state_mut().run_command(Command::SaveAs(out.clone()));
        let after = PatchDocument::from_json(&std::fs::read_to_string(&out).unwrap()).unwrap().0;
        assert_eq!(meaning(&after), meaning(&before), "{}", file.display());
    }
}

#[test]
fn a_patch_that_does_not_tile_with_itself_says_so_in_problems_and_make_tileable_clears_it() {
    let home = tempfile::tempdir().unwrap();
    let ws = workspace();
    let mut h = harness(home.path());
    h.state_mut().open(&ws.path().join("patches/plaza.patch.json"));
    h.run();
    assert!(h.state().derived.tiling.is_none(), "plaza tiles with itself");
    h.state_mut().open(&ws.path().join("patches/figure7.patch.json"));
    h.run();
    let note = h.state().derived.tiling.clone().expect("figure7 does not tile with itself");
    assert!(note.contains("north is not the mirror of south"), "{note}");
    // The note's own button, in Problems.
    h.get_by_label("Make it tileable").click();
    h.run();
    h.run();
    assert!(h.state().derived.tiling.is_none(), "{:?}", h.state().derived.tiling);
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    assert!(h.state().derived.tiling.is_some());
}

#[test]
fn a_walker_is_picked_in_the_patch_view_inspected_and_a_collision_in_problems_shows_it() {
    let home = tempfile::tempdir().unwrap();
    let ws = workspace();
    let mut h = harness(home.path());
    h.state_mut().open(&ws.path().join("patches/figure7.patch.json"));
    h.run();
    h.state_mut().run_command(Command::Bake);
    h.state_mut().wait_for_bake();
    h.run();
    // A walker on screen at the play time: click its disc.
    let (agent, at) = {
        let app = h.state();
        let r = app.baker.result.as_ref().unwrap();
        let tau = app.playback.time;
        let (i, p, _) = crowdpatch_editor::view::agents_at(&r.baked, tau)
            .into_iter()
            .find(|(_, p, _)| p[0] > 2.0 && p[0] < 14.0 && p[1] > 2.0 && p[1] < 14.0)
            .expect("a walker inside the patch");
        (i, p)
    };
    let p = patch_pos(&h, at);
    click(&mut h, p);
    assert_eq!(h.state().selection, Selection::Walker(agent));
    assert!(h.query_by_label(&format!("walker {agent}")).is_some(), "the inspector names it");
    assert!(h.query_by_label_contains("its preferred speed").is_some());
    // Clicking empty ground drops it.
    let p = patch_pos(&h, [0.5, 15.5]);
    click(&mut h, p);
    assert_eq!(h.state().selection, Selection::None);

    // A bake stopped after one iteration leaves collisions: listed in
    // Problems; a click selects the walker and stops the timeline there
    // (to the timeline slider's step).
    let mut doc = h.state().doc().clone();
    doc.solver.max_iterations = 1;
    let file = ws.path().join("patches/crowded.patch.json");
    std::fs::write(&file, doc.to_json()).unwrap();
    h.state_mut().open(&file);
    h.run();
    h.state_mut().run_command(Command::Bake);
    h.state_mut().wait_for_bake();
    h.run();
    let first = h.state().baker.result.as_ref().unwrap().bake.remaining.first().copied().expect("collisions left");
    let label = format!("bake: walker {} and", first.agent);
    // The Problems panel sits below the metrics: scrolled to, as a user would.
    h.get_by_label_contains(&label).scroll_to_me();
    h.run();
    h.get_by_label_contains(&label).click();
    h.run();
    h.run();
    assert_eq!(h.state().selection, Selection::Walker(first.agent), "{:?}", h.state().message);
    assert!(
        (h.state().playback.time - first.time.rem_euclid(doc.period)).abs() < 0.05,
        "{} {}",
        h.state().playback.time,
        first.time
    );
    assert!(!h.state().playback.playing);
}
