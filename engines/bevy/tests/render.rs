//! A composed world rendered through Bevy's renderer, offscreen, on
//! whatever Vulkan the machine has (Mesa's software lavapipe on CI), and
//! checked from the pixels:
//! - walkers are drawn where the runtime says they are: the runtime's own
//!   sampling of the tile files, projected into the image, lands on walker
//!   pixels (pixels that change when the walkers are removed), and walker
//!   pixels lie near a walker the runtime places;
//! - frames 0.5 s apart differ near walkers and nowhere else;
//! - at every tile seam crossed in a 4 s window, the planted feet of the
//!   walker leaving one tile are the planted feet of the walker entering the
//!   next: the same point on screen, within a pixel.
//!
//! The frames are written to `target/bevy-render/` (CI keeps them). Without
//! a Vulkan driver the test says SKIPPED.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bevy::app::PluginsState;
use bevy::camera::RenderTarget;
use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::mesh::skinning::SkinnedMesh;
use bevy::prelude::*;
use bevy::render::render_resource::TextureFormat;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured};
use bevy::window::ExitCondition;
use bevy::winit::WinitPlugin;
use common::{compose_world, run_until};
use crowdpatch_bevy::{CrowdClock, CrowdFocus, CrowdPatchPlugin, CrowdStats, WalkerBody};
use crowdpatch_runtime::{Placement, Poses, Tile, WorldFile};

const W: u32 = 960;
const H: u32 = 600;
/// Tile side of the test world `[m]`.
const L: f32 = 16.0;

fn vulkan_driver() -> bool {
    ["/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d"]
        .iter()
        .any(|d| std::fs::read_dir(d).is_ok_and(|mut e| e.any(|f| f.is_ok())))
}

fn out_dir() -> PathBuf {
    let d = common::repo().join("target/bevy-render");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// An RGBA frame.
#[derive(Clone)]
struct Frame {
    rgba: Vec<u8>,
}

impl Frame {
    fn px(&self, x: i32, y: i32) -> [u8; 4] {
        let i = (y as usize * W as usize + x as usize) * 4;
        [self.rgba[i], self.rgba[i + 1], self.rgba[i + 2], self.rgba[i + 3]]
    }

    fn differs(&self, other: &Frame, x: i32, y: i32) -> bool {
        let (a, b) = (self.px(x, y), other.px(x, y));
        (0..3).any(|k| a[k].abs_diff(b[k]) > 12)
    }

    fn save(&self, name: &str) -> PathBuf {
        let path = out_dir().join(name);
        let file = std::fs::File::create(&path).unwrap();
        let mut enc = png::Encoder::new(std::io::BufWriter::new(file), W, H);
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        enc.write_header().unwrap().write_image_data(&self.rgba).unwrap();
        path
    }
}

struct Renderer {
    app: App,
    target: Handle<Image>,
}

impl Renderer {
    fn new(world: &Path) -> Renderer {
        let mut app = App::new();
        app.add_plugins(DefaultPlugins.build().disable::<WinitPlugin>().set(WindowPlugin {
            primary_window: None,
            exit_condition: ExitCondition::DontExit,
            ..default()
        }))
        .add_plugins(CrowdPatchPlugin::new(world))
        .insert_resource(CrowdClock { time: 0.0, paused: true, ..default() })
        .insert_resource(ClearColor(Color::srgb(0.1, 0.1, 0.12)));
        let image = Image::new_target_texture(W, H, TextureFormat::Rgba8UnormSrgb, None);
        let target = app.world_mut().resource_mut::<Assets<Image>>().add(image);
        // The 2 × 2 world seen from the south, 52° down.
        app.world_mut().spawn((
            Camera3d::default(),
            CrowdFocus,
            RenderTarget::Image(target.clone().into()),
            Tonemapping::AcesFitted,
            Transform::from_xyz(L, 24.0, 3.5).looking_at(Vec3::new(L, 0.0, -L), Vec3::Y),
        ));
        app.world_mut().spawn((
            DirectionalLight { illuminance: 9000.0, shadow_maps_enabled: false, ..default() },
            Transform::from_xyz(0.3, 1.0, 0.5).looking_at(Vec3::ZERO, Vec3::Y),
        ));
        app.insert_resource(GlobalAmbientLight { brightness: 400.0, ..default() });
        while app.plugins_state() == PluginsState::Adding {
            bevy::tasks::tick_global_task_pools_on_main_thread();
        }
        app.finish();
        app.cleanup();
        Renderer { app, target }
    }

    fn set_time(&mut self, t: f64) {
        self.app.world_mut().resource_mut::<CrowdClock>().time = t;
        self.app.update();
    }

    /// Renders the current state until two frames in a row are the same
    /// (the renderer compiles its pipelines in the background: the first
    /// frames may lack what is not ready yet), and returns it.
    fn frame(&mut self) -> Frame {
        let mut last = self.capture();
        for _ in 0..30 {
            let next = self.capture();
            if next.rgba == last.rgba {
                return next;
            }
            last = next;
        }
        panic!("the frames do not settle");
    }

    /// Renders the current state and reads the frame back.
    fn capture(&mut self) -> Frame {
        let got: Arc<Mutex<Option<Image>>> = Arc::default();
        let sink = got.clone();
        self.app
            .world_mut()
            .spawn(Screenshot::image(self.target.clone()))
            .observe(move |c: On<ScreenshotCaptured>| *sink.lock().unwrap() = Some(c.image.clone()));
        for _ in 0..60 {
            self.app.update();
            if let Some(image) = got.lock().unwrap().take() {
                let mut rgba = image.data.expect("a screenshot has its bytes");
                if matches!(image.texture_descriptor.format, TextureFormat::Bgra8UnormSrgb | TextureFormat::Bgra8Unorm)
                {
                    for p in rgba.chunks_exact_mut(4) {
                        p.swap(0, 2);
                    }
                }
                assert_eq!(rgba.len(), (W * H * 4) as usize);
                return Frame { rgba };
            }
        }
        panic!("no screenshot after 60 frames");
    }

    /// Image position of a Bevy point, if in front of the camera.
    fn project(&mut self, p: Vec3) -> Option<Vec2> {
        let world = self.app.world_mut();
        let mut q = world.query::<(&Camera, &GlobalTransform)>();
        let (camera, g) = q.single(world).ok()?;
        camera.world_to_viewport(g, p).ok()
    }
}

/// The runtime's own placement of every drawn walker at `t`: world points.
fn runtime_walkers(file: &WorldFile, tiles: &[Tile], t: f64) -> Vec<[f32; 2]> {
    let mut out = Vec::new();
    for ([i, j], cell) in file.world().cells() {
        let tile = &tiles[cell.tile];
        let placement = Placement { offset: [i as f64 * file.size, j as f64 * file.size], rotation: cell.rotation };
        let mut poses = Poses::new(tile.instance_count());
        tile.sample(t, &placement, poses.as_mut());
        out.extend((0..poses.len()).filter(|&k| poses.visible[k]).map(|k| [poses.x[k], poses.y[k]]));
    }
    out
}

/// Image points of a walker standing at world point `w` (feet, hips,
/// shoulders, head), and how far `[px]` its limbs may reach from that axis:
/// 0.7 m on the ground there (a stride seen from above spans more pixels
/// than the foreshortened body is tall).
fn walker_points(r: &mut Renderer, w: [f32; 2]) -> (Vec<Vec2>, f32) {
    let axis: Vec<Vec2> =
        [0.05, 0.5, 0.9, 1.3, 1.6].iter().filter_map(|&h| r.project(Vec3::new(w[0], h, -w[1]))).collect();
    let foot = r.project(Vec3::new(w[0], 0.05, -w[1]));
    let stride = [Vec3::new(w[0] + 0.7, 0.05, -w[1]), Vec3::new(w[0], 0.05, -w[1] - 0.7)]
        .into_iter()
        .filter_map(|p| Some(r.project(p)?.distance(foot?)))
        .fold(0.0, f32::max);
    (axis, stride)
}

fn inside(p: Vec2, margin: f32) -> bool {
    p.x >= margin && p.y >= margin && p.x < W as f32 - margin && p.y < H as f32 - margin
}

/// Fraction of the pixels where `a` and `b` differ that lie within `reach`
/// pixels (or the walker's own reach, if more) of a segment between
/// consecutive points of some walker in `walkers` ([`walker_points`]); and
/// the number of differing pixels.
fn explained(a: &Frame, b: &Frame, walkers: &[(Vec<Vec2>, f32)], reach: f32) -> (f64, usize) {
    let (mut diff, mut near) = (0usize, 0usize);
    for y in 0..H as i32 {
        for x in 0..W as i32 {
            if !a.differs(b, x, y) {
                continue;
            }
            diff += 1;
            let p = Vec2::new(x as f32, y as f32);
            let close = walkers.iter().any(|(pts, stride)| {
                let reach = reach.max(*stride);
                pts.windows(2).any(|s| {
                    let (u, v) = (s[0], s[1]);
                    let d = v - u;
                    let t = ((p - u).dot(d) / d.length_squared().max(1e-6)).clamp(0.0, 1.0);
                    (u + d * t).distance(p) <= reach
                })
            });
            near += usize::from(close);
        }
    }
    (if diff == 0 { 1.0 } else { near as f64 / diff as f64 }, diff)
}

#[test]
fn a_composed_world_renders_with_walkers_where_the_runtime_puts_them() {
    if !vulkan_driver() {
        println!("SKIPPED: no Vulkan driver (apt-get install mesa-vulkan-drivers gives lavapipe)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let world_path = compose_world(dir.path(), &["#p", "-#"], true);
    let file = WorldFile::load(&world_path).unwrap();
    let tiles = file.load_tiles(dir.path()).unwrap();
    let mut r = Renderer::new(&world_path);
    assert!(
        run_until(&mut r.app, Duration::from_secs(120), |s| s.cells == 4 && s.tiles_pending == 0),
        "{:?}",
        r.app.world().resource::<CrowdStats>()
    );
    let t0 = 3.0;
    r.set_time(t0);
    let a = r.frame();
    r.set_time(t0 + 0.5);
    let a2 = r.frame();
    let stats = r.app.world().resource::<CrowdStats>().clone();
    println!(
        "drawn: {} walkers of {}, {} mesh draws, {} skinned vertices, {} joints",
        stats.walkers_drawn, stats.walkers, stats.walker_draws, stats.skinned_vertices, stats.joints
    );

    // The planted feet at every seam crossing in a 4 s window, from the
    // joints Bevy skins with.
    let character = tiles[0].character().unwrap().clone();
    let feet = [character.left_foot, character.right_foot];
    let (mut crossings, mut worst_px, mut worst_m) = (0, 0.0f32, 0.0f32);
    // The last two frames: per walker, drawn or not, and its feet.
    let mut last: HashMap<Entity, (bool, Vec<Vec3>)> = HashMap::new();
    let mut before_last: HashMap<Entity, (bool, Vec<Vec3>)> = HashMap::new();
    let mut seam_frames = None;
    for step in 0..=120 {
        let t = t0 + 0.5 + step as f64 / 30.0;
        r.set_time(t);
        let world = r.app.world_mut();
        let mut q = world.query::<(Entity, &WalkerBody, &SkinnedMesh, &Visibility)>();
        let mut now: HashMap<Entity, (bool, Vec<Vec3>)> = HashMap::new();
        let mut seen = std::collections::HashSet::new();
        for (e, _, skin, v) in q.iter(world) {
            if !seen.insert(skin.joints[0]) {
                continue;
            }
            let pts =
                feet.iter().map(|&k| world.get::<GlobalTransform>(skin.joints[k]).unwrap().translation()).collect();
            now.insert(e, (*v == Visibility::Visible, pts));
        }
        let feet_now: Vec<Vec3> = now.values().filter(|(v, _)| *v).flat_map(|(_, p)| p.iter().copied()).collect();
        for (e, (was, pts)) in &last {
            let left = *was && now.get(e).is_some_and(|(v, _)| !v);
            if !left {
                continue;
            }
            // Feet planted: the ankle low and still over the frame before.
            let earlier = before_last.get(e).map(|(_, q)| q.clone()).unwrap_or_default();
            let planted = pts
                .iter()
                .enumerate()
                .filter(|(k, p)| p.y < 0.2 && earlier.get(*k).is_some_and(|q| q.distance(**p) < 0.001));
            for (_, p) in planted {
                let (x, y) = (p.x, -p.z);
                let on_seam = ((x - L).abs() < 0.8 && (0.0..2.0 * L).contains(&y))
                    || ((y - L).abs() < 0.8 && (0.0..2.0 * L).contains(&x));
                if !on_seam {
                    continue;
                }
                let next = feet_now.iter().min_by(|a, b| a.distance(*p).total_cmp(&b.distance(*p))).copied();
                let Some(next) = next else {
                    panic!("t = {t}: a planted foot at {p} leaves with its walker and no walker enters on it")
                };
                let (sp, sn) = (r.project(*p), r.project(next));
                if let (Some(sp), Some(sn)) = (sp, sn) {
                    worst_px = worst_px.max(sp.distance(sn));
                }
                worst_m = worst_m.max(p.distance(next));
                crossings += 1;
                if seam_frames.is_none() {
                    seam_frames = Some(t);
                }
            }
        }
        before_last = std::mem::replace(&mut last, now);
    }
    println!("seam crossings with a planted foot: {crossings}; worst jump {worst_m:.4} m, {worst_px:.2} px");
    assert!(crossings >= 2, "only {crossings} seam crossings seen in 4 s");
    assert!(worst_m < 0.01 && worst_px < 1.0, "a planted foot jumps {worst_m} m ({worst_px} px) at a seam");
    if let Some(ts) = seam_frames {
        r.set_time(ts - 1.0 / 30.0);
        r.frame().save("seam-before.png");
        r.set_time(ts);
        r.frame().save("seam-after.png");
    }

    // The same scene without walkers.
    let world = r.app.world_mut();
    let bodies: Vec<Entity> = world.query_filtered::<Entity, With<WalkerBody>>().iter(world).collect();
    for e in bodies {
        world.entity_mut(e).despawn();
    }
    r.set_time(t0);
    let empty = r.frame();
    for (f, name) in [(&a, "frame-t3.0.png"), (&a2, "frame-t3.5.png"), (&empty, "frame-no-walkers.png")] {
        println!("wrote {}", f.save(name).display());
    }

    // Walkers where the runtime puts them.
    let at_t0 = runtime_walkers(&file, &tiles, t0);
    let at_t1 = runtime_walkers(&file, &tiles, t0 + 0.5);
    let (mut checked, mut hits) = (0, 0);
    for w in &at_t0 {
        let Some(chest) = r.project(Vec3::new(w[0], 1.2, -w[1])) else { continue };
        if !inside(chest, 4.0) {
            continue;
        }
        checked += 1;
        let hit = (-3..=3).any(|dy| (-3..=3).any(|dx| a.differs(&empty, chest.x as i32 + dx, chest.y as i32 + dy)));
        hits += usize::from(hit);
    }
    println!("walkers in view: {checked}; drawn at the runtime's position: {hits}");
    assert!(checked >= 20, "only {checked} walkers in view");
    assert!(hits as f64 >= 0.95 * checked as f64, "{hits} of {checked} walkers drawn where the runtime puts them");
    let pts0: Vec<(Vec<Vec2>, f32)> = at_t0.iter().map(|&w| walker_points(&mut r, w)).collect();
    let pts1: Vec<(Vec<Vec2>, f32)> = at_t1.iter().map(|&w| walker_points(&mut r, w)).collect();
    let (share, walker_pixels) = explained(&a, &empty, &pts0, 12.0);
    println!("walker pixels: {walker_pixels}; near a walker the runtime places: {:.2} %", 100.0 * share);
    assert!(walker_pixels > 1000 && share > 0.995, "{walker_pixels} walker pixels, {:.3} near a walker", share);

    // Frames 0.5 s apart: changes near walkers only, and near the walkers.
    let both: Vec<(Vec<Vec2>, f32)> = pts0.iter().chain(&pts1).cloned().collect();
    let (share, changed) = explained(&a, &a2, &both, 12.0);
    println!("pixels changed in 0.5 s: {changed}; near a walker: {:.2} %", 100.0 * share);
    assert!(changed > 1000 && share > 0.995, "{changed} pixels changed, {:.3} near walkers", share);
}
