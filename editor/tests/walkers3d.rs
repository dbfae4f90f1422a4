//! Headless tests of the skeletal side of the editor (egui_kittest, no GPU,
//! no display): the character window and the settings that keep its
//! choice, the 3D view's posing (planted feet stay on their footprints as
//! the view poses them from the bake's own GLB), picking a walker in 3D,
//! and the quality gate's culprits in Problems.

use crowdpatch::runtime::format::Foot;
use crowdpatch_editor::app::ViewMode;
use crowdpatch_editor::bake_job::{CharacterSettings, Playable};
use crowdpatch_editor::tools::Selection;
use crowdpatch_editor::views::scene3d::{instance_node, joint_globals};
use crowdpatch_editor::{Command, EditorApp};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use std::path::Path;

mod common;
use common::{harness, repo};

/// An editor on the shipped `figure7` (read, never written), baked with
/// the built-in character.
fn baked_figure7(home: &Path) -> Harness<'static, EditorApp> {
    let mut h = harness(home);
    h.state_mut().open(&repo().join("patches/figure7.patch.json"));
    h.run();
    assert!(h.state_mut().set_character(&CharacterSettings::default()));
    h.state_mut().run_command(Command::Bake);
    h.state_mut().wait_for_bake();
    h.run();
    h
}

#[test]
fn the_character_window_uses_a_file_refuses_one_that_cannot_walk_and_its_choice_is_kept_in_the_settings() {
    let home = tempfile::tempdir().unwrap();
    let mut h = harness(home.path());
    h.run();
    // The editor starts with capsules; the window shows it.
    h.get_by_label("Character…").click();
    h.run();
    assert!(h.query_by_label("Walkers are baked as capsules.").is_some());

    // A file that is not a character: refused with the loader's sentence,
    // naming the file; capsules stay.
    let bogus = home.path().join("not-a-character.glb");
    std::fs::write(&bogus, b"glTF but not really").unwrap();
    h.get_by_label("Character file").click();
    h.get_by_label("Character file").type_text(&bogus.display().to_string());
    h.run();
    h.get_by_label("Use this character").click();
    h.run();
    h.run();
    let refusal = h.state().baker.character_refusal.clone().expect("refused");
    assert!(refusal.contains("not-a-character.glb"), "{refusal}");
    assert!(h.query_by_label_contains("Cannot walk:").is_some(), "the window says why");
    assert!(h.state().baker.character.is_none(), "the choice before is kept");
    assert_eq!(CharacterSettings::load(home.path()), Ok(None), "nothing kept for a refused choice");

    // The built-in character: loaded, described as `character inspect`
    // describes it, kept in the settings.
    h.get_by_label("Built-in").click();
    // The new character starts a bake (running in the background, its
    // progress bar repainting): let it finish.
    h.run_steps(3);
    h.state_mut().wait_for_bake();
    h.run();
    let c = h.state().baker.character.as_ref().expect("a character");
    assert_eq!(c.name, "builtin");
    assert!(c.description.contains("humanoid mapping"), "{}", c.description);
    assert!(h.state().baker.character_refusal.is_none());
    assert_eq!(CharacterSettings::load(home.path()), Ok(Some(Some(CharacterSettings::default()))));

    // A new editor with the same settings bakes as the same character;
    // capsules are kept too.
    let mut again = EditorApp::new(home.path().to_path_buf());
    again.restore_walkers();
    assert_eq!(again.baker.character.as_ref().map(|c| c.name.as_str()), Some("builtin"));
    again.set_capsules();
    assert_eq!(CharacterSettings::load(home.path()), Ok(Some(None)));
    let mut third = EditorApp::new(home.path().to_path_buf());
    third.restore_walkers();
    assert!(third.baker.character.is_none());
    // A damaged settings file: named in the status bar, the built-in
    // character used, the file left as it was.
    let file = home.path().join("character.json");
    std::fs::write(&file, "{\"file\": 7").unwrap();
    let mut fourth = EditorApp::new(home.path().to_path_buf());
    fourth.restore_walkers();
    assert_eq!(fourth.baker.character.as_ref().map(|c| c.name.as_str()), Some("builtin"));
    let (message, error) = fourth.message.clone().expect("a message");
    assert!(error && message.contains("character.json"), "{message}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "{\"file\": 7");
}

#[test]
fn character_settings_name_the_same_bake_options_as_the_command_line() {
    let s = CharacterSettings {
        file: Some("knight.glb".into()),
        joint_map: Some("map.json".into()),
        animation_source: "walk.bvh".into(),
        source_joint_map: Some("src.json".into()),
    };
    assert_eq!(
        s.command_line(),
        "--character knight.glb --joint-map map.json --animation-source walk.bvh --source-joint-map src.json"
    );
    assert_eq!(CharacterSettings::default().command_line(), "--character builtin");
}

/// The world positions (patch frame, `[m]`; height `[m]`) of points
/// `(joint, local offset in its frame)` of instance `i` at play time `tau`,
/// as the 3D view poses it, or `None` while the instance is hidden.
fn points_at(
    p: &Playable,
    cursors: &mut crowdpatch::runtime::joints::JointCursors,
    poses: &mut crowdpatch::runtime::joints::JointPoses,
    i: usize,
    points: &[(usize, [f64; 3])],
    tau: f64,
) -> Option<Vec<([f64; 2], f64)>> {
    let (_, node) = instance_node(&p.tile, i, tau)?;
    p.joints.sample(tau, cursors, poses);
    let mut globals = Vec::new();
    joint_globals(p, poses, i, &node, &mut globals);
    Some(
        points
            .iter()
            .map(|&(joint, l)| {
                let g = globals[joint] * nalgebra::Vector4::new(l[0] as f32, l[1] as f32, l[2] as f32, 1.0);
                ([g.x as f64, -g.z as f64], g.y as f64)
            })
            .collect(),
    )
}

#[test]
fn planted_feet_stay_on_their_footprints_as_the_3d_view_poses_them() {
    let home = tempfile::tempdir().unwrap();
    let h = baked_figure7(home.path());
    let app = h.state();
    let r = app.baker.result.as_ref().unwrap();
    let p = match &r.playable {
        Some(Ok(p)) => p.clone(),
        other => panic!("no playable bake: {:?}", other.as_ref().map(|x| x.as_ref().err())),
    };
    let core = &r.skeletal.as_ref().expect("a character bake").character;
    // The contact joints (the planner's planted points) by name in the
    // played character.
    let contact: Vec<usize> = core
        .feet
        .iter()
        .map(|f| {
            let name = &core.skeleton.joints[f.contact].name;
            p.character.joints.iter().position(|j| &j.name == name).expect("contact joint played")
        })
        .collect();
    // Each foot's heel and ball as played (the sole points the GLB
    // records), then its contact joint.
    let points: Vec<(usize, [f64; 3])> = [Foot::Left, Foot::Right]
        .iter()
        .flat_map(|&foot| {
            let sole = |part: &str| {
                let s = p.character.sole_points.iter().find(|s| s.foot == foot && s.part == part).expect("sole point");
                (s.joint, s.local)
            };
            [sole("heel"), sole("ball"), (contact[foot.index()], [0.0; 3])]
        })
        .collect();
    let period = p.tile.period();
    let (mut cursors, mut poses) = (p.joints.cursors(), p.joints.poses());
    let (mut stances, mut worst_drift, mut worst_off, mut worst_height) = (0, 0.0_f64, 0.0_f64, 0.0_f64);
    for i in 0..p.tile.instance_count() {
        let info = p.tile.instance(i);
        let Some(steps) = &p.tile.extras().agents[info.agent].footsteps else { continue };
        // Play times of this instance inside each footstep's stance (50 ms
        // in from the plant and the lift); per footstep, where its heel and
        // its ball first were while the lower of the two (the point the
        // foot stands or rolls on).
        let mut first: Vec<[Option<[f64; 2]>; 2]> = vec![[None; 2]; steps.len()];
        let n = (period / 0.02).round() as usize;
        for s in 0..n {
            let tau = s as f64 * period / n as f64;
            let t = info.path_time(tau, period);
            for (k, f) in steps.iter().enumerate() {
                if t < f.t + 0.05 || t > f.lift - 0.05 {
                    continue;
                }
                let Some(at) = points_at(&p, &mut cursors, &mut poses, i, &points, tau) else {
                    continue;
                };
                let (heel, ball, contact) =
                    (at[3 * f.foot.index()], at[3 * f.foot.index() + 1], at[3 * f.foot.index() + 2]);
                worst_height = worst_height.max(contact.1);
                let part = usize::from(ball.1 < heel.1);
                let xy = [heel, ball][part].0;
                if first[k] == [None, None] {
                    stances += 1;
                    worst_off = worst_off.max((contact.0[0] - f.position[0]).hypot(contact.0[1] - f.position[1]));
                }
                let f0 = *first[k][part].get_or_insert(xy);
                worst_drift = worst_drift.max((xy[0] - f0[0]).hypot(xy[1] - f0[1]));
            }
        }
    }
    println!("{stances} stances: drift {worst_drift:.4} m, off {worst_off:.4} m, height {worst_height:.4} m at most");
    assert!(stances > 50, "only {stances} stances seen");
    // On the ground too: the built-in walk's own contact joint (the ball of
    // the foot) is 2 cm up when flat and up to 3.8 cm at heel strike; a
    // transition between blends once lifted it 15 cm, held horizontally.
    assert!(worst_height < 0.04, "a planted foot is {worst_height:.3} m up as played");
    // A planted foot's heel and ball stay within 1 cm of where they stood
    // (and the contact joint within 2 cm of the footprint the planner
    // chose, the foot rolling about heel and ball) as the view plays the GLB.
    assert!(worst_drift < 0.01, "a planted foot drifts {worst_drift:.4} m as played");
    assert!(worst_off < 0.02, "a planted foot lands {worst_off:.4} m off its footprint");
}

#[test]
fn a_click_on_a_walker_in_the_3d_view_selects_it_and_the_inspector_gives_its_footsteps_and_gate_figures() {
    let home = tempfile::tempdir().unwrap();
    let mut h = baked_figure7(home.path());
    h.get_by_label("3D").click();
    h.run();
    h.run();
    assert_eq!(h.state().mode, ViewMode::Walkers3d);
    let picks = h.state().walkers_3d().to_vec();
    assert!(picks.len() > 5, "{} walkers drawn", picks.len());
    // A walker standing apart on screen (30 points from any other).
    let (agent, at) = picks
        .iter()
        .copied()
        .find(|&(a, s)| picks.iter().all(|&(b, o)| b == a || o.distance(s) > 30.0))
        .expect("a walker apart from the others");
    h.hover_at(at);
    h.drag_at(at);
    h.drop_at(at);
    h.run();
    assert_eq!(h.state().selection, Selection::Walker(agent));
    assert!(h.query_by_label(&format!("walker {agent}")).is_some(), "the inspector names it");
    assert!(h.query_by_label("footsteps").is_some());
    assert!(h.query_by_label("stance drift").is_some());
    // Its own gate figures against the whole bake's: a part of it.
    let r = h.state().baker.result.as_ref().unwrap();
    let mine = r.walker_gate(agent).expect("figures of the walker");
    let all = &r.bake.skeletal.as_ref().unwrap().gate;
    assert!(mine.stance_drift_max.value <= all.stance_drift_max.value + 1e-12);
    assert!(mine.joint_speed_max.value <= all.joint_speed_max.value + 1e-12);
    assert_eq!(mine.stance_drift_max.agent, agent);
}

#[test]
fn a_quality_gate_culprit_is_listed_in_problems_and_a_click_shows_the_walker_at_that_time() {
    let home = tempfile::tempdir().unwrap();
    let mut h = baked_figure7(home.path());
    // A culprit as the gate reports one (the shipped patch passes).
    let period = h.state().doc().period;
    let v = crowdpatch::animation::gate::Violation {
        metric: "stance_drift_max".into(),
        value: 0.05,
        limit: 0.01,
        agent: 3,
        time: 1.5 * period + 2.25,
        message: "agent 3 at t = 2.25 s: the planted left foot drifts 5.0 cm (limit 1.0 cm)".into(),
    };
    let r = h.state_mut().baker.result.as_mut().unwrap();
    r.bake.skeletal.as_mut().unwrap().gate.violations.push(v);
    h.run();
    let label = "animation quality gate: agent 3 at t = 2.25 s";
    h.get_by_label_contains(label).scroll_to_me();
    h.run();
    h.get_by_label_contains(label).click();
    h.run();
    h.run();
    assert_eq!(h.state().selection, Selection::Walker(3));
    let want = (1.5 * period + 2.25) % period;
    assert!((h.state().playback.time - want).abs() < 0.05, "{} against {want}", h.state().playback.time);
    assert_eq!(h.query_all_by_label_contains("quality gate: agent 3").count(), 2, "the inspector lists it too");
}
