//! Plays a composed world in a window: the tiles near the camera's target
//! streamed in, ground squares showing the tile grid, obstacles as solids,
//! walkers walking, an orbit camera and an overlay.
//!
//! ```sh
//! cargo run --release -p crowdpatch --bin crowdpatch -- compose maps/town.map.json -o target/town --animation skeletal
//! cargo run --release -p crowdpatch-bevy --example town -- target/town/world.json
//! ```
//!
//! Controls: drag with the left mouse button to orbit, scroll to zoom,
//! W A S D (or the arrow keys) to move the target, Space to pause, `[` and
//! `]` to halve and double the playback speed, `T` to toggle the overlay.
//!
//! Options: `--at X,Y` (target, world metres), `--distance M`, `--pitch DEG`,
//! `--yaw DEG`, `--time S` (start time), `--budget MIB`, `--radius M`,
//! `--shot FILE.png` (write a screenshot after `--after S` seconds of
//! playback, default 2, and quit).

use std::path::PathBuf;

use bevy::input::mouse::{AccumulatedMouseMotion, AccumulatedMouseScroll};
use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, save_to_disk};
use crowdpatch_bevy::crowdpatch_runtime::{StreamOptions, WorldFile};
use crowdpatch_bevy::{CrowdClock, CrowdFocus, CrowdPatchPlugin, CrowdStats};

#[derive(Debug, Clone)]
struct Args {
    world: PathBuf,
    at: Option<[f32; 2]>,
    distance: f32,
    pitch: f32,
    yaw: f32,
    time: f64,
    budget: usize,
    radius: f64,
    shot: Option<PathBuf>,
    after: f64,
}

fn parse() -> Result<Args, String> {
    let mut args = Args {
        world: PathBuf::new(),
        at: None,
        distance: 40.0,
        pitch: 50.0,
        yaw: 30.0,
        time: 0.0,
        budget: 256,
        radius: 48.0,
        shot: None,
        after: 2.0,
    };
    let mut world = None;
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        let number = |name: &str, v: String| v.parse::<f64>().map_err(|_| format!("{name} {v}: not a number"));
        match a.as_str() {
            "--help" | "-h" => {
                println!(
                    "usage: town WORLD.json [--at X,Y] [--distance M] [--pitch DEG] [--yaw DEG] [--time S] [--budget MIB] [--radius M] [--shot FILE.png [--after S]]"
                );
                std::process::exit(0);
            }
            "--at" => {
                let v = value("--at")?;
                let xy: Vec<f32> = v.split(',').filter_map(|s| s.trim().parse().ok()).collect();
                let [x, y] = xy[..] else { return Err(format!("--at {v}: expected X,Y")) };
                args.at = Some([x, y]);
            }
            "--distance" => args.distance = number("--distance", value("--distance")?)? as f32,
            "--pitch" => args.pitch = number("--pitch", value("--pitch")?)? as f32,
            "--yaw" => args.yaw = number("--yaw", value("--yaw")?)? as f32,
            "--time" => args.time = number("--time", value("--time")?)?,
            "--budget" => args.budget = number("--budget", value("--budget")?)? as usize,
            "--radius" => args.radius = number("--radius", value("--radius")?)?,
            "--shot" => args.shot = Some(PathBuf::from(value("--shot")?)),
            "--after" => args.after = number("--after", value("--after")?)?,
            s if s.starts_with('-') => return Err(format!("unknown option {s} (see --help)")),
            s => world = Some(PathBuf::from(s)),
        }
    }
    args.world = world.ok_or("give the world.json to play (see --help)")?;
    Ok(args)
}

/// The orbit camera's target (followed by the streamer) and angles.
#[derive(Component, Debug, Clone, Copy)]
struct Orbit {
    distance: f32,
    pitch: f32,
    yaw: f32,
}

#[derive(Component)]
struct Overlay;

#[derive(Resource)]
struct Shot {
    file: Option<PathBuf>,
    after: f64,
    taken: bool,
    frames_after: u32,
}

#[derive(Resource, Default)]
struct FrameTimes {
    mean_ms: f64,
    since: f64,
}

fn main() {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("town: {e}");
            std::process::exit(2);
        }
    };
    // Frame the world when its file reads (the plugin reads it again, off
    // the frame, and reports any problem).
    let at = args.at.unwrap_or_else(|| match WorldFile::load(&args.world) {
        Ok(w) => {
            let s = w.size as f32;
            [w.columns as f32 * s / 2.0, w.rows as f32 * s / 2.0]
        }
        Err(_) => [0.0, 0.0],
    });
    let plugin = CrowdPatchPlugin {
        stream: StreamOptions { radius: args.radius, memory_budget: args.budget << 20, ..StreamOptions::default() },
        ..CrowdPatchPlugin::new(&args.world)
    };
    App::new()
        .add_plugins(DefaultPlugins.set(WindowPlugin {
            primary_window: Some(Window {
                title: format!("crowdpatch  |  {}", args.world.display()),
                resolution: (1280, 720).into(),
                ..default()
            }),
            ..default()
        }))
        .add_plugins(plugin)
        .insert_resource(CrowdClock { time: args.time, ..default() })
        .insert_resource(ClearColor(Color::srgb(0.12, 0.13, 0.15)))
        .insert_resource(Shot { file: args.shot.clone(), after: args.time + args.after, taken: false, frames_after: 0 })
        .init_resource::<FrameTimes>()
        .add_systems(Startup, move |commands: Commands| setup(commands, at, &args))
        .add_systems(Update, (controls, place_camera, overlay, shot).chain())
        .run();
}

fn setup(mut commands: Commands, at: [f32; 2], args: &Args) {
    let target = Vec3::new(at[0], 0.0, -at[1]);
    let orbit = Orbit { distance: args.distance, pitch: args.pitch.to_radians(), yaw: args.yaw.to_radians() };
    commands.spawn((CrowdFocus, orbit, Transform::from_translation(target)));
    commands.spawn((
        Camera3d::default(),
        bevy::core_pipeline::tonemapping::Tonemapping::AcesFitted,
        Transform::default(),
    ));
    commands.spawn((
        DirectionalLight { illuminance: 9000.0, shadow_maps_enabled: false, ..default() },
        Transform::from_xyz(0.3, 1.0, 0.5).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    commands.insert_resource(GlobalAmbientLight { brightness: 400.0, ..default() });
    commands.spawn((
        Overlay,
        Text::new("loading…"),
        TextFont { font_size: FontSize::Px(15.0), ..default() },
        TextColor(Color::WHITE),
        BackgroundColor(Color::srgba(0.0, 0.0, 0.0, 0.55)),
        Node {
            position_type: PositionType::Absolute,
            top: Val::Px(8.0),
            left: Val::Px(8.0),
            padding: UiRect::all(Val::Px(6.0)),
            ..default()
        },
    ));
}

#[allow(clippy::too_many_arguments)] // a Bevy system: one parameter per resource it reads
fn controls(
    keys: Res<ButtonInput<KeyCode>>,
    buttons: Res<ButtonInput<MouseButton>>,
    motion: Res<AccumulatedMouseMotion>,
    scroll: Res<AccumulatedMouseScroll>,
    time: Res<Time>,
    mut clock: ResMut<CrowdClock>,
    mut target: Query<(&mut Transform, &mut Orbit)>,
    mut overlay: Query<&mut Visibility, With<Overlay>>,
) {
    let Ok((mut t, mut o)) = target.single_mut() else { return };
    if buttons.pressed(MouseButton::Left) {
        o.yaw -= motion.delta.x * 0.005;
        o.pitch = (o.pitch + motion.delta.y * 0.005).clamp(0.1, 1.5);
    }
    o.distance = (o.distance * (1.0 - scroll.delta.y * 0.1)).clamp(3.0, 400.0);
    let forward = Vec3::new(-o.yaw.sin(), 0.0, -o.yaw.cos());
    let right = Vec3::new(o.yaw.cos(), 0.0, -o.yaw.sin());
    let mut step = Vec3::ZERO;
    for (keys_for, dir) in [
        ([KeyCode::KeyW, KeyCode::ArrowUp], forward),
        ([KeyCode::KeyS, KeyCode::ArrowDown], -forward),
        ([KeyCode::KeyD, KeyCode::ArrowRight], right),
        ([KeyCode::KeyA, KeyCode::ArrowLeft], -right),
    ] {
        if keys.any_pressed(keys_for) {
            step += dir;
        }
    }
    t.translation += step * o.distance * 0.6 * time.delta_secs();
    if keys.just_pressed(KeyCode::Space) {
        clock.paused = !clock.paused;
    }
    if keys.just_pressed(KeyCode::BracketLeft) {
        clock.speed /= 2.0;
    }
    if keys.just_pressed(KeyCode::BracketRight) {
        clock.speed *= 2.0;
    }
    if keys.just_pressed(KeyCode::KeyT)
        && let Ok(mut v) = overlay.single_mut()
    {
        v.toggle_visible_hidden();
    }
}

fn place_camera(
    target: Query<(&Transform, &Orbit), Without<Camera3d>>,
    mut camera: Query<&mut Transform, With<Camera3d>>,
) {
    let (Ok((t, o)), Ok(mut c)) = (target.single(), camera.single_mut()) else { return };
    let back = Vec3::new(o.yaw.sin() * o.pitch.cos(), o.pitch.sin(), o.yaw.cos() * o.pitch.cos());
    *c = Transform::from_translation(t.translation + back * o.distance).looking_at(t.translation, Vec3::Y);
}

fn overlay(
    time: Res<Time>,
    stats: Res<CrowdStats>,
    clock: Res<CrowdClock>,
    mut frames: ResMut<FrameTimes>,
    mut text: Query<&mut Text, With<Overlay>>,
) {
    let ms = time.delta_secs_f64() * 1000.0;
    frames.mean_ms = if frames.mean_ms == 0.0 { ms } else { 0.9 * frames.mean_ms + 0.1 * ms };
    frames.since += time.delta_secs_f64();
    if frames.since < 0.25 {
        return;
    }
    frames.since = 0.0;
    let Ok(mut text) = text.single_mut() else { return };
    **text = match &stats.world_error {
        Some(e) => format!("cannot play the world:\n{e}"),
        None => format!(
            "walkers drawn {} of {}  |  cells {}  |  tiles loaded {}{}{}\nframe {:.1} ms  |  memory {:.1} MiB  |  t = {:.1} s{}",
            stats.walkers_drawn,
            stats.walkers,
            stats.cells,
            stats.tiles_loaded,
            if stats.tiles_pending > 0 { format!(" (+{} loading)", stats.tiles_pending) } else { String::new() },
            if stats.tiles_failed > 0 {
                format!("  |  {} failed (see the log)", stats.tiles_failed)
            } else {
                String::new()
            },
            frames.mean_ms,
            stats.bytes as f64 / (1 << 20) as f64,
            clock.time,
            if clock.paused { "  |  paused" } else { "" },
        ),
    };
}

fn shot(
    mut commands: Commands,
    clock: Res<CrowdClock>,
    stats: Res<CrowdStats>,
    mut shot: ResMut<Shot>,
    mut exit: MessageWriter<AppExit>,
) {
    let Some(file) = shot.file.clone() else { return };
    if !shot.taken {
        // Wait for the tiles to load, then for the playback time asked for.
        if stats.tiles_pending == 0 && (stats.cells > 0 || stats.world_error.is_some()) && clock.time >= shot.after {
            commands.spawn(Screenshot::primary_window()).observe(save_to_disk(file));
            shot.taken = true;
        }
        return;
    }
    shot.frames_after += 1;
    if shot.frames_after > 10 {
        exit.write(AppExit::Success);
    }
}
