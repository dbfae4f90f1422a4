//! The 3D view of a skeletal bake: the walkers as skinned characters, posed
//! every frame by the runtime's [`JointSampler`] from the tile read back
//! from the bake's own GLB ([`Playable`]) — what a game plays, not a
//! re-simulation — on the patch's ground with its obstacles as solids, alone
//! or among its eight neighbours (the 3×3 tiling). An orbit camera: drag to
//! turn, right or middle drag to pan, scroll to zoom, Home to reset.
//!
//! Skinning runs on the CPU (linear blend skinning, four influences per
//! vertex: `p' = Σ wᵢ · G_jᵢ · B_jᵢ⁻¹ · p`, `G` a joint's global transform,
//! `B⁻¹` its inverse bind matrix); the triangles are drawn through egui's
//! glow paint callback with one small lit shader. Cost per frame:
//! O(visible instances × (joints + vertices)).

// glow's OpenGL calls are `unsafe fn`s (raw driver calls); this module is
// the editor's one user of them and keeps every call on the GL context the
// paint callback hands it.
#![allow(unsafe_code)]

use crate::bake_job::Playable;
use crate::state::{Cx, Selection};
use crowdpatch::model::Obstacle;
use crowdpatch::runtime::joints::{JointCursors, JointPoses};
use eframe::egui_glow;
use egui::{Sense, Ui, Vec2, pos2};
use egui_glow::glow::{self, HasContext};
use nalgebra::{Matrix4, Perspective3, Point3, Quaternion, Translation3, UnitQuaternion, Vector3};
use std::sync::{Arc, Mutex};

/// Floats per vertex: position, normal, colour.
const STRIDE: usize = 9;

/// Colour of the selected walker (linear RGB).
const SELECTED: [f32; 3] = [1.0, 0.45, 0.05];

/// The orbit camera: it looks at `target` from `distance` `[m]`, turned by
/// `yaw` about the up axis and raised by `pitch` `[rad]` (glTF frame: +Y up,
/// patch `(x, y)` at `(x, 0, −y)`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Orbit {
    /// Point looked at `[m]`.
    pub target: [f32; 3],
    /// Distance from the target `[m]`.
    pub distance: f32,
    /// Turn about +Y `[rad]`.
    pub yaw: f32,
    /// Elevation `[rad]`, in (0, π/2).
    pub pitch: f32,
}

impl Orbit {
    /// Looking at the middle of a patch of side `size` `[m]` (of the 3×3
    /// tiling's middle tile when `tiled`) from the south, 40° up.
    pub fn framing(size: f64, tiled: bool) -> Orbit {
        let l = size as f32;
        Orbit {
            target: [l / 2.0, 0.0, -l / 2.0],
            distance: if tiled { 2.6 * l } else { 1.35 * l },
            yaw: 0.35,
            pitch: 0.7,
        }
    }

    /// Eye position `[m]`.
    pub fn eye(&self) -> Point3<f32> {
        let (sy, cy) = self.yaw.sin_cos();
        let (sp, cp) = self.pitch.sin_cos();
        let t = Point3::from(self.target);
        t + Vector3::new(cp * sy, sp, cp * cy) * self.distance
    }

    /// Projection × view for a viewport of aspect `aspect` (width / height).
    pub fn matrix(&self, aspect: f32) -> Matrix4<f32> {
        let view = Matrix4::look_at_rh(&self.eye(), &Point3::from(self.target), &Vector3::y());
        let proj = Perspective3::new(aspect.max(0.1), 45f32.to_radians(), 0.1, 2000.0);
        proj.as_matrix() * view
    }

    /// Applies a drag `d` `[points]` (turn, or pan with `pan`) and a scroll
    /// `scroll` (zoom).
    pub fn input(&mut self, d: Vec2, pan: bool, scroll: f32) {
        if pan {
            let (sy, cy) = self.yaw.sin_cos();
            let k = self.distance * 0.0015;
            // Screen right is (cos yaw, 0, −sin yaw); screen up moves the
            // target away along the ground.
            self.target[0] += (-d.x * cy - d.y * sy) * k;
            self.target[2] += (d.x * sy - d.y * cy) * k;
        } else {
            self.yaw -= d.x * 0.008;
            self.pitch = (self.pitch + d.y * 0.006).clamp(0.05, 1.55);
        }
        if scroll != 0.0 {
            self.distance = (self.distance * (-scroll * 0.0015).exp()).clamp(1.0, 600.0);
        }
    }
}

/// The 3D view's state.
#[derive(Default)]
pub struct Scene3dView {
    /// The camera (`None`: framed on the next draw).
    pub camera: Option<Orbit>,
    /// Show the 3×3 tiling.
    pub tiled: bool,
    /// Draw footprints (the planted feet's stance positions).
    pub footprints: bool,
    /// Where each visible walker stood on screen last frame (agent, chest
    /// position `[points]`): what a click picks from.
    pub picks: Picks,
    cursors: JointCursors,
    poses: JointPoses,
    sampler_of: (usize, usize, usize, usize),
    globals: Vec<Matrix4<f32>>,
    skins: Vec<Matrix4<f32>>,
    gl: Arc<Mutex<Option<GlScene>>>,
}

impl std::fmt::Debug for Scene3dView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scene3dView").field("camera", &self.camera).field("tiled", &self.tiled).finish()
    }
}

impl Clone for Scene3dView {
    fn clone(&self) -> Self {
        Scene3dView {
            camera: self.camera,
            tiled: self.tiled,
            footprints: self.footprints,
            picks: self.picks.clone(),
            ..Default::default()
        }
    }
}

/// What one frame draws, built on the CPU and handed to the paint callback.
struct Frame {
    /// Static geometry: ground, tile borders, obstacles (`STRIDE` floats per
    /// vertex, triangles).
    statics: Vec<f32>,
    /// The skinned walkers of one tile (triangles).
    walkers: Vec<f32>,
    /// Offsets `[m]` at which the walkers are drawn (one per tile).
    offsets: Vec<[f32; 3]>,
    /// Projection × view, column-major.
    matrix: [f32; 16],
}

/// The GL objects of the view, made on the first paint.
struct GlScene {
    program: glow::Program,
    vao: glow::VertexArray,
    vbo: glow::Buffer,
}

/// Where walkers stood this frame (for picking): agent, screen position.
pub type Picks = Vec<(usize, egui::Pos2)>;

impl Scene3dView {
    /// Turns the camera to look at patch position `p` `[m]` from close by
    /// (a patch of side `size` `[m]`), keeping its direction.
    pub fn look_at(&mut self, p: [f64; 2], size: f64) {
        let camera = self.camera.get_or_insert_with(|| Orbit::framing(size, self.tiled));
        camera.target = [p[0] as f32, 0.9, -(p[1] as f32)];
        camera.distance = camera.distance.min(8.0);
    }

    /// Draws the view in `size` and handles camera input and clicks
    /// (a click within 24 points of a walker's chest selects it, elsewhere
    /// clears the selection); [`Self::picks`] keeps where walkers stood.
    pub fn ui(&mut self, ui: &mut Ui, size: Vec2, cx: &mut Cx<'_>, playable: &Playable, time: f64) {
        let (rect, response) = ui.allocate_exact_size(size, Sense::click_and_drag());
        let tile = &playable.tile;
        let l = tile.size();
        let camera = self.camera.get_or_insert_with(|| Orbit::framing(l, self.tiled));
        let pan = response.dragged_by(egui::PointerButton::Secondary)
            || response.dragged_by(egui::PointerButton::Middle)
            || (response.dragged_by(egui::PointerButton::Primary) && ui.input(|i| i.modifiers.shift));
        let scroll = if response.hovered() { ui.input(|i| i.smooth_scroll_delta.y) } else { 0.0 };
        camera.input(response.drag_delta(), pan, scroll);
        if response.hovered() && ui.input(|i| i.key_pressed(egui::Key::Home)) {
            *camera = Orbit::framing(l, self.tiled);
        }
        let matrix = camera.matrix(rect.width() / rect.height().max(1.0));

        let selected = match cx.selection {
            Selection::Walker(a) => Some(*a),
            _ => None,
        };
        let (walkers, roots) = self.skin(playable, time, selected);
        let offsets: Vec<[f32; 3]> = if self.tiled {
            (-1..=1).flat_map(|i| (-1..=1).map(move |j| [i as f32 * l as f32, 0.0, -(j as f32) * l as f32])).collect()
        } else {
            vec![[0.0; 3]]
        };
        let mut statics = ground(l, self.tiled);
        for o in &tile.extras().obstacles {
            for off in &offsets {
                solid(&mut statics, o, *off);
            }
        }
        if self.footprints {
            footprints(&mut statics, playable, &offsets);
        }

        // Picking: each visible walker's chest projected to the screen.
        let project = |p: Point3<f32>| {
            let c = matrix * p.to_homogeneous();
            (c.w > 0.0).then(|| {
                let (x, y) = (c.x / c.w, c.y / c.w);
                pos2(rect.left() + (x + 1.0) / 2.0 * rect.width(), rect.top() + (1.0 - y) / 2.0 * rect.height())
            })
        };
        let picks: Picks =
            roots.iter().filter_map(|&(agent, p)| project(Point3::new(p[0], 1.1, p[2])).map(|s| (agent, s))).collect();
        // The walker whose chest lies within 24 points of `pos`, nearest first.
        let nearest = |pos: egui::Pos2| {
            picks
                .iter()
                .map(|&(a, s)| (a, s.distance(pos)))
                .filter(|&(_, d)| d < 24.0)
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(a, _)| a)
        };
        if response.clicked()
            && let Some(pos) = response.interact_pointer_pos()
        {
            *cx.selection = nearest(pos).map_or(Selection::None, Selection::Walker);
        }
        if let Some(pos) = response.hover_pos()
            && let Some(a) = nearest(pos)
        {
            response.clone().on_hover_text(format!("walker {a}"));
        }

        let frame =
            Arc::new(Frame { statics, walkers, offsets, matrix: matrix.as_slice().try_into().unwrap_or([0.0; 16]) });
        let gl_scene = self.gl.clone();
        let callback = egui::PaintCallback {
            rect,
            callback: Arc::new(egui_glow::CallbackFn::new(move |info, painter| {
                // Clear and draw inside the view only: the clip rectangle
                // egui sets is its parent's.
                let (v, c) = (info.viewport_in_pixels(), info.clip_rect_in_pixels());
                let x0 = v.left_px.max(c.left_px);
                let y0 = v.from_bottom_px.max(c.from_bottom_px);
                let x1 = (v.left_px + v.width_px).min(c.left_px + c.width_px);
                let y1 = (v.from_bottom_px + v.height_px).min(c.from_bottom_px + c.height_px);
                if x1 <= x0 || y1 <= y0 {
                    return;
                }
                let mut slot = gl_scene.lock().unwrap_or_else(|e| e.into_inner());
                paint(painter.gl(), &mut slot, &frame, [x0, y0, x1 - x0, y1 - y0]);
            })),
        };
        ui.painter().add(callback);
        self.picks = picks;
        ui.painter().text(
            rect.left_top() + egui::vec2(8.0, 6.0),
            egui::Align2::LEFT_TOP,
            format!(
                "{} walkers · {} · GLB {:.0} KB · drag: turn · right drag: pan · scroll: zoom · Home: reset",
                roots.len(),
                playable.character.name,
                playable.glb_bytes as f64 / 1024.0
            ),
            egui::FontId::proportional(12.0),
            egui::Color32::from_gray(235),
        );
    }

    /// The skinned triangles of every visible instance at `time`, and each
    /// one's agent and root position (glTF frame).
    fn skin(&mut self, playable: &Playable, time: f64, selected: Option<usize>) -> (Vec<f32>, Vec<(usize, [f32; 3])>) {
        let (tile, sampler, character) = (&playable.tile, &playable.joints, &playable.character);
        // Cursors belong to one sampler.
        let key =
            (sampler as *const _ as usize, sampler.instance_count(), sampler.channel_count(), sampler.memory_bytes());
        if self.sampler_of != key {
            self.cursors = sampler.cursors();
            self.poses = sampler.poses();
            self.sampler_of = key;
        }
        sampler.sample(time, &mut self.cursors, &mut self.poses);
        let inverse_bind: Vec<Matrix4<f32>> =
            character.joints.iter().map(|j| Matrix4::from_column_slice(&j.inverse_bind.map(|v| v as f32))).collect();
        let mut out = Vec::new();
        let mut roots = Vec::new();
        for i in 0..tile.instance_count() {
            let Some((agent, node)) = instance_node(tile, i, time) else { continue };
            let root = node.column(3).xyz();
            roots.push((agent, [root.x, root.y, root.z]));
            joint_globals(playable, &self.poses, i, &node, &mut self.globals);
            self.skins.clear();
            self.skins.extend(self.globals.iter().zip(&inverse_bind).map(|(g, b)| g * b));
            let tint = (selected == Some(agent)).then_some(SELECTED);
            for prim in &character.primitives {
                let colour = tint.unwrap_or([prim.colour[0], prim.colour[1], prim.colour[2]]);
                for &v in &prim.indices {
                    let v = v as usize;
                    let (p, n) = (prim.positions[v], prim.normals[v]);
                    let mut sp = Vector3::zeros();
                    let mut sn = Vector3::zeros();
                    for k in 0..4 {
                        let w = prim.weights[v][k];
                        if w == 0.0 {
                            continue;
                        }
                        let m = &self.skins[prim.joints[v][k] as usize];
                        sp += (m * nalgebra::Vector4::new(p[0], p[1], p[2], 1.0)).xyz() * w;
                        sn += (m.fixed_view::<3, 3>(0, 0) * Vector3::new(n[0], n[1], n[2])) * w;
                    }
                    let sn = sn.try_normalize(1e-9).unwrap_or_else(Vector3::y);
                    out.extend_from_slice(&[sp.x, sp.y, sp.z, sn.x, sn.y, sn.z, colour[0], colour[1], colour[2]]);
                }
            }
        }
        (out, roots)
    }
}

/// The agent and the node transform (glTF frame) of instance `i` of `tile`
/// at play time `time` `[s]`, or `None` while it is hidden: the patch
/// position `(x, y)` at `(x, 0, −y)`, turned about +Y by the heading plus
/// π/2 (glTF forward +Z to the heading), as the exporter keys it.
pub fn instance_node(tile: &crowdpatch::runtime::tile::Tile, i: usize, time: f64) -> Option<(usize, Matrix4<f32>)> {
    let (p, heading, visible, _) = tile.instance_pose(i, time);
    if !visible {
        return None;
    }
    let yaw = (heading + std::f64::consts::FRAC_PI_2) as f32;
    let node = Translation3::new(p[0] as f32, 0.0, -p[1] as f32).to_homogeneous()
        * UnitQuaternion::from_axis_angle(&Vector3::y_axis(), yaw).to_homogeneous();
    Some((tile.instance(i).agent, node))
}

/// The global transforms (glTF frame) of the character's joints, in the
/// character's order, for instance `i` whose joint rows `poses` holds (as
/// [`crowdpatch::runtime::joints::JointSampler::sample`] wrote them) and
/// whose node is `node`: `G_j = G_parent · T·R·S` (top joints under the
/// node). O(joints).
pub fn joint_globals(
    playable: &Playable,
    poses: &JointPoses,
    i: usize,
    node: &Matrix4<f32>,
    out: &mut Vec<Matrix4<f32>>,
) {
    let (ts, rs, ss) = poses.instance(i, playable.joints.joint_count());
    out.clear();
    for (cj, &k) in playable.character.joints.iter().zip(&playable.slots) {
        let [qx, qy, qz, qw] = rs[k];
        let q = UnitQuaternion::from_quaternion(Quaternion::new(qw, qx, qy, qz));
        let local = Translation3::new(ts[k][0], ts[k][1], ts[k][2]).to_homogeneous()
            * q.to_homogeneous()
            * Matrix4::new_nonuniform_scaling(&Vector3::new(ss[k][0], ss[k][1], ss[k][2]));
        let parent = cj.parent.map_or(*node, |p| out[p]);
        out.push(parent * local);
    }
}

/// Adds a quad (two triangles) of colour `c` with normal `n`.
fn quad(out: &mut Vec<f32>, corners: [[f32; 3]; 4], n: [f32; 3], c: [f32; 3]) {
    for k in [0, 1, 2, 0, 2, 3] {
        let p = corners[k];
        out.extend_from_slice(&[p[0], p[1], p[2], n[0], n[1], n[2], c[0], c[1], c[2]]);
    }
}

/// The ground of one tile or of the 3×3 tiling (the middle tile lighter),
/// with each tile's border as a thin dark strip.
fn ground(size: f64, tiled: bool) -> Vec<f32> {
    let l = size as f32;
    let mut out = Vec::new();
    let range = if tiled { -1..=1 } else { 0..=0 };
    for i in range.clone() {
        for j in range.clone() {
            let (x0, z0) = (i as f32 * l, -(j as f32) * l);
            let shade = if i == 0 && j == 0 { 0.62 } else { 0.5 };
            let c = [shade, shade * 1.02, shade * 0.96];
            quad(
                &mut out,
                [[x0, 0.0, z0], [x0 + l, 0.0, z0], [x0 + l, 0.0, z0 - l], [x0, 0.0, z0 - l]],
                [0.0, 1.0, 0.0],
                c,
            );
            let w = 0.04 * l.max(4.0) / 16.0;
            let dark = [0.18, 0.2, 0.24];
            let y = 0.005;
            for (a, b) in [
                ([x0, z0], [x0 + l, z0]),
                ([x0 + l, z0], [x0 + l, z0 - l]),
                ([x0 + l, z0 - l], [x0, z0 - l]),
                ([x0, z0 - l], [x0, z0]),
            ] {
                let d = [b[0] - a[0], b[1] - a[1]];
                let len = (d[0] * d[0] + d[1] * d[1]).sqrt().max(1e-6);
                let nx = -d[1] / len * w;
                let nz = d[0] / len * w;
                quad(
                    &mut out,
                    [
                        [a[0] - nx, y, a[1] - nz],
                        [b[0] - nx, y, b[1] - nz],
                        [b[0] + nx, y, b[1] + nz],
                        [a[0] + nx, y, a[1] + nz],
                    ],
                    [0.0, 1.0, 0.0],
                    dark,
                );
            }
        }
    }
    out
}

/// Height of an obstacle's solid `[m]`.
const OBSTACLE_HEIGHT: f32 = 1.2;

/// An obstacle as a solid: walls round its outline (a circle as 32 sides)
/// and a lid, moved by `off`.
fn solid(out: &mut Vec<f32>, o: &Obstacle, off: [f32; 3]) {
    let outline: Vec<[f64; 2]> = match o {
        Obstacle::Circle { center, radius } => (0..32)
            .map(|k| {
                let a = k as f64 / 32.0 * std::f64::consts::TAU;
                [center[0] + radius * a.cos(), center[1] + radius * a.sin()]
            })
            .collect(),
        Obstacle::Polygon(vs) => vs.clone(),
    };
    let n = outline.len();
    if n < 3 {
        return;
    }
    let g = |p: [f64; 2], y: f32| [p[0] as f32 + off[0], y, -p[1] as f32 + off[2]];
    let c = [0.55, 0.42, 0.32];
    let h = OBSTACLE_HEIGHT;
    // Walls, facing out whatever the winding.
    let ccw = crowdpatch::geometry::polygon_area(&outline) > 0.0;
    for k in 0..n {
        let (a, b) = (outline[k], outline[(k + 1) % n]);
        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
        let len = dx.hypot(dy).max(1e-9);
        let (nx, ny) = if ccw { (dy / len, -dx / len) } else { (-dy / len, dx / len) };
        quad(out, [g(a, 0.0), g(b, 0.0), g(b, h), g(a, h)], [nx as f32, 0.0, -ny as f32], c);
    }
    // The lid.
    let flat: Vec<f64> = outline.iter().flat_map(|p| [p[0], p[1]]).collect();
    if let Ok(tris) = earcutr::earcut(&flat, &[], 2) {
        let lid = [c[0] * 1.15, c[1] * 1.15, c[2] * 1.15];
        for t in tris {
            let p = g(outline[t], h);
            out.extend_from_slice(&[p[0], p[1], p[2], 0.0, 1.0, 0.0, lid[0], lid[1], lid[2]]);
        }
    }
}

/// Footprints: a small dark square at each footstep of every agent, in
/// each tile of `offsets`.
fn footprints(out: &mut Vec<f32>, playable: &Playable, offsets: &[[f32; 3]]) {
    let l = playable.tile.size();
    let s = 0.06;
    for agent in &playable.tile.extras().agents {
        let Some(steps) = &agent.footsteps else { continue };
        for f in steps {
            let [x, y] = f.position;
            if !(0.0..=l).contains(&x) || !(0.0..=l).contains(&y) {
                continue;
            }
            for off in offsets {
                let (px, pz) = (x as f32 + off[0], -y as f32 + off[2]);
                let yy = 0.01;
                quad(
                    out,
                    [[px - s, yy, pz - s], [px + s, yy, pz - s], [px + s, yy, pz + s], [px - s, yy, pz + s]],
                    [0.0, 1.0, 0.0],
                    [0.12, 0.12, 0.16],
                );
            }
        }
    }
}

const VERTEX: &str = r#"
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec3 a_normal;
layout(location = 2) in vec3 a_colour;
uniform mat4 u_matrix;
uniform vec3 u_offset;
out vec3 v_normal;
out vec3 v_colour;
void main() {
    gl_Position = u_matrix * vec4(a_pos + u_offset, 1.0);
    v_normal = a_normal;
    v_colour = a_colour;
}
"#;

const FRAGMENT: &str = r#"
precision mediump float;
in vec3 v_normal;
in vec3 v_colour;
out vec4 out_colour;
void main() {
    vec3 light = normalize(vec3(0.4, 0.9, 0.3));
    float lambert = max(dot(normalize(v_normal), light), 0.0);
    vec3 c = v_colour * (0.35 + 0.65 * lambert);
    // egui's framebuffer is in gamma space.
    out_colour = vec4(pow(c, vec3(1.0 / 2.2)), 1.0);
}
"#;

/// Makes the program and buffers; `None` (and a log line) when the driver
/// refuses the shaders.
fn make(gl: &glow::Context) -> Option<GlScene> {
    let version = if cfg!(target_arch = "wasm32") { "#version 300 es" } else { "#version 330" };
    // SAFETY: plain GL object creation on the current context.
    unsafe {
        let program = gl.create_program().ok()?;
        let mut shaders = Vec::new();
        for (kind, src) in [(glow::VERTEX_SHADER, VERTEX), (glow::FRAGMENT_SHADER, FRAGMENT)] {
            let shader = gl.create_shader(kind).ok()?;
            gl.shader_source(shader, &format!("{version}\n{src}"));
            gl.compile_shader(shader);
            if !gl.get_shader_compile_status(shader) {
                eprintln!("crowdpatch-editor: 3D view shader: {}", gl.get_shader_info_log(shader));
                return None;
            }
            gl.attach_shader(program, shader);
            shaders.push(shader);
        }
        gl.link_program(program);
        if !gl.get_program_link_status(program) {
            eprintln!("crowdpatch-editor: 3D view program: {}", gl.get_program_info_log(program));
            return None;
        }
        for s in shaders {
            gl.detach_shader(program, s);
            gl.delete_shader(s);
        }
        let vao = gl.create_vertex_array().ok()?;
        let vbo = gl.create_buffer().ok()?;
        gl.bind_vertex_array(Some(vao));
        gl.bind_buffer(glow::ARRAY_BUFFER, Some(vbo));
        let stride = (STRIDE * 4) as i32;
        for (loc, offset) in [(0u32, 0i32), (1, 12), (2, 24)] {
            gl.enable_vertex_attrib_array(loc);
            gl.vertex_attrib_pointer_f32(loc, 3, glow::FLOAT, false, stride, offset);
        }
        gl.bind_vertex_array(None);
        Some(GlScene { program, vao, vbo })
    }
}

/// Draws a frame in the viewport egui set, depth-tested, cleared and drawn
/// inside `scissor` (x, y from the bottom, width, height `[px]`) only.
fn paint(gl: &glow::Context, slot: &mut Option<GlScene>, frame: &Frame, scissor: [i32; 4]) {
    if slot.is_none() {
        *slot = make(gl);
    }
    let Some(s) = slot.as_ref() else { return };
    // SAFETY: calls on the context egui hands the callback, with the
    // program and buffers made on it; the state changed is restored by
    // egui_glow after the callback (depth test off again).
    unsafe {
        gl.enable(glow::SCISSOR_TEST);
        gl.scissor(scissor[0], scissor[1], scissor[2], scissor[3]);
        gl.enable(glow::DEPTH_TEST);
        gl.depth_func(glow::LEQUAL);
        gl.depth_mask(true);
        gl.clear_color(0.16, 0.17, 0.2, 1.0);
        gl.clear(glow::DEPTH_BUFFER_BIT | glow::COLOR_BUFFER_BIT);
        gl.disable(glow::BLEND);
        gl.disable(glow::CULL_FACE);
        gl.use_program(Some(s.program));
        let matrix = gl.get_uniform_location(s.program, "u_matrix");
        let offset = gl.get_uniform_location(s.program, "u_offset");
        gl.uniform_matrix_4_f32_slice(matrix.as_ref(), false, &frame.matrix);
        gl.bind_vertex_array(Some(s.vao));
        gl.bind_buffer(glow::ARRAY_BUFFER, Some(s.vbo));
        let bytes = |v: &[f32]| -> Vec<u8> { v.iter().flat_map(|f| f.to_ne_bytes()).collect() };
        gl.uniform_3_f32(offset.as_ref(), 0.0, 0.0, 0.0);
        gl.buffer_data_u8_slice(glow::ARRAY_BUFFER, &bytes(&frame.statics), glow::STREAM_DRAW);
        gl.draw_arrays(glow::TRIANGLES, 0, (frame.statics.len() / STRIDE) as i32);
        gl.buffer_data_u8_slice(glow::ARRAY_BUFFER, &bytes(&frame.walkers), glow::STREAM_DRAW);
        for off in &frame.offsets {
            gl.uniform_3_f32(offset.as_ref(), off[0], off[1], off[2]);
            gl.draw_arrays(glow::TRIANGLES, 0, (frame.walkers.len() / STRIDE) as i32);
        }
        gl.bind_vertex_array(None);
        gl.use_program(None);
        gl.disable(glow::DEPTH_TEST);
    }
}
