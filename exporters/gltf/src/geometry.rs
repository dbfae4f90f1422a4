//! Triangle meshes of the baked GLB: the agent body, extruded obstacles and
//! the ground quad, all in glTF coordinates (metres, +Y up).
//!
//! A patch point `(x, y)` at height `h` is the glTF point `(x, h, −y)`
//! ([`patch_to_gltf`]). That map is a rotation (no mirror), so a polygon that
//! turns counter-clockwise in the patch frame turns counter-clockwise seen from
//! +Y in glTF as well.
//!
//! Every triangle is wound counter-clockwise seen from the side its normals
//! point to (glTF's front face): [`MeshData`] orients each triangle from its
//! vertex normals, so the builders below only have to get normals right.

use crowdpatch_runtime::Obstacle;
use std::f64::consts::{FRAC_PI_2, TAU};

/// glTF position `[m]` of the patch point `p` `[m]` at height `height` `[m]`:
/// `(x, y) ↦ (x, height, −y)`.
pub(crate) fn patch_to_gltf(p: [f64; 2], height: f64) -> [f64; 3] {
    // `+ 0.0` turns −0 into 0, so that y = 0 is written as 0.
    [p[0], height, -p[1] + 0.0]
}

/// An indexed triangle list with per-vertex normals, glTF frame.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct MeshData {
    /// Vertex positions `[m]`.
    pub positions: Vec<[f64; 3]>,
    /// Unit vertex normals.
    pub normals: Vec<[f64; 3]>,
    /// Three vertex indices per triangle, counter-clockwise from the front.
    pub indices: Vec<u32>,
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn normalize(a: [f64; 3]) -> [f64; 3] {
    let n = dot(a, a).sqrt();
    if n > 0.0 { [a[0] / n, a[1] / n, a[2] / n] } else { a }
}

impl MeshData {
    /// Appends a vertex and returns its index. `normal` is normalised here.
    fn vertex(&mut self, position: [f64; 3], normal: [f64; 3]) -> u32 {
        self.positions.push(position);
        self.normals.push(normalize(normal));
        (self.positions.len() - 1) as u32
    }

    /// Appends the triangle `(a, b, c)`, wound so that its face normal agrees
    /// with the sum of its vertex normals.
    fn triangle(&mut self, a: u32, b: u32, c: u32) {
        let p = |i: u32| self.positions[i as usize];
        let n = |i: u32| self.normals[i as usize];
        let face = cross(sub(p(b), p(a)), sub(p(c), p(a)));
        let hint = [n(a)[0] + n(b)[0] + n(c)[0], n(a)[1] + n(b)[1] + n(c)[1], n(a)[2] + n(b)[2] + n(c)[2]];
        if dot(face, hint) < 0.0 {
            self.indices.extend([a, c, b]);
        } else {
            self.indices.extend([a, b, c]);
        }
    }

    /// Appends a flat quad `p0 p1 p2 p3` (in order round its border) with
    /// the normal `normal` on all four vertices.
    fn quad(&mut self, p: [[f64; 3]; 4], normal: [f64; 3]) {
        let [a, b, c, d] = p.map(|q| self.vertex(q, normal));
        self.triangle(a, b, c);
        self.triangle(a, c, d);
    }

    /// Appends a flat triangle whose normal points away from `inside`.
    fn flat_triangle(&mut self, p: [[f64; 3]; 3], inside: [f64; 3]) {
        let mut normal = normalize(cross(sub(p[1], p[0]), sub(p[2], p[0])));
        let centre = [
            (p[0][0] + p[1][0] + p[2][0]) / 3.0,
            (p[0][1] + p[1][1] + p[2][1]) / 3.0,
            (p[0][2] + p[1][2] + p[2][2]) / 3.0,
        ];
        if dot(normal, sub(centre, inside)) < 0.0 {
            normal = normal.map(|c| -c);
        }
        let [a, b, c] = p.map(|q| self.vertex(q, normal));
        self.triangle(a, b, c);
    }

    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }
}

/// Latitude steps per hemisphere of the agent capsule.
const CAPSULE_RINGS: usize = 6;

/// The agent body in its local frame: a capsule of radius `radius` `[m]` and
/// total height `height` `[m]` standing on `y = 0` around the +Y axis, with a
/// small wedge (the *nose*) pointing along +Z, the facing direction, at the
/// height of the upper hemisphere's centre. `segments` vertices per ring.
///
/// When `height < 2·radius` the capsule is a sphere of that radius resting on
/// `y = 0`.
pub(crate) fn agent_body(radius: f64, height: f64, segments: usize) -> MeshData {
    let mut m = MeshData::default();
    let bottom = radius;
    let top = (height - radius).max(bottom);
    let has_cylinder = top - bottom > 1e-6;

    // Rings from the bottom up: (latitude, y of the hemisphere centre).
    let mut rings = Vec::new();
    for j in 1..=CAPSULE_RINGS {
        rings.push((-FRAC_PI_2 + FRAC_PI_2 * j as f64 / CAPSULE_RINGS as f64, bottom));
    }
    let first_top = if has_cylinder { 0 } else { 1 };
    for j in first_top..CAPSULE_RINGS {
        rings.push((FRAC_PI_2 * j as f64 / CAPSULE_RINGS as f64, top));
    }

    let south = m.vertex([0.0, 0.0, 0.0], [0.0, -1.0, 0.0]);
    let mut ring_starts = Vec::with_capacity(rings.len());
    for &(lat, centre) in &rings {
        ring_starts.push(m.vertex_count() as u32);
        for i in 0..segments {
            let a = TAU * i as f64 / segments as f64;
            let n = [lat.cos() * a.cos(), lat.sin(), lat.cos() * a.sin()];
            m.vertex([radius * n[0], centre + radius * n[1], radius * n[2]], n);
        }
    }
    let north = m.vertex([0.0, top + radius, 0.0], [0.0, 1.0, 0.0]);

    let seg = segments as u32;
    let first = ring_starts[0];
    let last = ring_starts[ring_starts.len() - 1];
    for i in 0..seg {
        let j = (i + 1) % seg;
        m.triangle(south, first + i, first + j);
        m.triangle(north, last + i, last + j);
    }
    for w in ring_starts.windows(2) {
        let (lo, hi) = (w[0], w[1]);
        for i in 0..seg {
            let j = (i + 1) % seg;
            m.triangle(lo + i, lo + j, hi + j);
            m.triangle(lo + i, hi + j, hi + i);
        }
    }

    // The nose: a three-sided pyramid whose base hides inside the head.
    let y = top;
    let (base_z, tip_z) = (0.6 * radius, 1.45 * radius);
    let (w, h) = (0.3 * radius, 0.3 * radius);
    let tl = [-w, y + h, base_z];
    let tr = [w, y + h, base_z];
    let bm = [0.0, y - h, base_z];
    let tip = [0.0, y, tip_z];
    let inside = [0.0, y, base_z];
    m.flat_triangle([tl, tr, tip], inside);
    m.flat_triangle([tr, bm, tip], inside);
    m.flat_triangle([bm, tl, tip], inside);
    m
}

/// Removes consecutive repeated vertices (and a last vertex that repeats the
/// first) from a polygon.
pub(crate) fn clean_polygon(vertices: &[[f64; 2]]) -> Vec<[f64; 2]> {
    let mut out: Vec<[f64; 2]> = Vec::with_capacity(vertices.len());
    for &v in vertices {
        if out.last() != Some(&v) {
            out.push(v);
        }
    }
    while out.len() > 1 && out.first() == out.last() {
        out.pop();
    }
    out
}

/// Signed area `[m²]` of a polygon, patch frame: positive when its vertices
/// turn counter-clockwise.
pub(crate) fn signed_area(vertices: &[[f64; 2]]) -> f64 {
    let n = vertices.len();
    (0..n)
        .map(|i| {
            let (a, b) = (vertices[i], vertices[(i + 1) % n]);
            a[0] * b[1] - b[0] * a[1]
        })
        .sum::<f64>()
        / 2.0
}

/// An obstacle extruded from `y = 0` to `y = height` `[m]`: side walls and a
/// top cap (no bottom: it stands on the ground). A circle becomes a cylinder of
/// `segments` sides with smooth normals; a polygon (concave or convex, either
/// winding) a prism with flat walls and an ear-clipped top.
///
/// # Errors
/// A reason, when a polygon cannot be triangulated.
pub(crate) fn obstacle(obstacle: &Obstacle, height: f64, segments: usize) -> Result<MeshData, String> {
    match obstacle {
        Obstacle::Circle { center, radius } => Ok(cylinder(*center, *radius, height, segments)),
        Obstacle::Polygon(vertices) => prism(vertices, height),
    }
}

fn cylinder(center: [f64; 2], radius: f64, height: f64, segments: usize) -> MeshData {
    let mut m = MeshData::default();
    let seg = segments as u32;
    let ring = |i: usize| {
        let a = TAU * i as f64 / segments as f64;
        ([center[0] + radius * a.cos(), center[1] + radius * a.sin()], [a.cos(), a.sin()])
    };
    // Walls: a bottom and a top vertex per segment, radial normals.
    let walls = m.vertex_count() as u32;
    for i in 0..segments {
        let (p, n) = ring(i);
        let normal = patch_to_gltf(n, 0.0);
        m.vertex(patch_to_gltf(p, 0.0), normal);
        m.vertex(patch_to_gltf(p, height), normal);
    }
    for i in 0..seg {
        let j = (i + 1) % seg;
        let (b0, t0, b1, t1) = (walls + 2 * i, walls + 2 * i + 1, walls + 2 * j, walls + 2 * j + 1);
        m.triangle(b0, b1, t1);
        m.triangle(b0, t1, t0);
    }
    // Top cap: a fan round the centre.
    let up = [0.0, 1.0, 0.0];
    let hub = m.vertex(patch_to_gltf(center, height), up);
    let cap = m.vertex_count() as u32;
    for i in 0..segments {
        m.vertex(patch_to_gltf(ring(i).0, height), up);
    }
    for i in 0..seg {
        m.triangle(hub, cap + i, cap + (i + 1) % seg);
    }
    m
}

fn prism(vertices: &[[f64; 2]], height: f64) -> Result<MeshData, String> {
    let mut poly = clean_polygon(vertices);
    if signed_area(&poly) < 0.0 {
        poly.reverse();
    }
    let n = poly.len();
    if n < 3 {
        return Err(format!("polygon has {n} distinct vertices; it needs at least 3"));
    }
    let mut m = MeshData::default();
    // Walls: one flat quad per edge, outward normal (right of a
    // counter-clockwise edge).
    for i in 0..n {
        let (a, b) = (poly[i], poly[(i + 1) % n]);
        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
        let normal = patch_to_gltf([dy, -dx], 0.0);
        m.quad(
            [patch_to_gltf(a, 0.0), patch_to_gltf(b, 0.0), patch_to_gltf(b, height), patch_to_gltf(a, height)],
            normal,
        );
    }
    // Top cap, ear-clipped.
    let flat: Vec<f64> = poly.iter().flat_map(|p| [p[0], p[1]]).collect();
    let triangles = earcutr::earcut(&flat, &[], 2)
        .map_err(|e| format!("polygon could not be triangulated ({e}); is it self-intersecting?"))?;
    if triangles.is_empty() {
        return Err("polygon could not be triangulated (no triangle); is it degenerate?".into());
    }
    let up = [0.0, 1.0, 0.0];
    let cap = m.vertex_count() as u32;
    for &p in &poly {
        m.vertex(patch_to_gltf(p, height), up);
    }
    for t in triangles.chunks_exact(3) {
        m.triangle(cap + t[0] as u32, cap + t[1] as u32, cap + t[2] as u32);
    }
    Ok(m)
}

/// The ground: the square `[0, size]²` of the patch at `y = 0`, facing +Y.
pub(crate) fn ground(size: f64) -> MeshData {
    let mut m = MeshData::default();
    m.quad([[0.0, 0.0], [size, 0.0], [size, size], [0.0, size]].map(|p| patch_to_gltf(p, 0.0)), [0.0, 1.0, 0.0]);
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every triangle is counter-clockwise seen from where its vertex normals
    /// point, every normal has unit length, every vertex is used.
    fn assert_well_formed(m: &MeshData) {
        assert_eq!(m.positions.len(), m.normals.len());
        assert_eq!(m.indices.len() % 3, 0);
        let mut used = vec![false; m.positions.len()];
        for t in m.indices.chunks_exact(3) {
            let p = |i: u32| m.positions[i as usize];
            let face = cross(sub(p(t[1]), p(t[0])), sub(p(t[2]), p(t[0])));
            assert!(dot(face, face) > 0.0, "degenerate triangle {t:?}");
            for &i in t {
                used[i as usize] = true;
                assert!(dot(face, m.normals[i as usize]) > 0.0, "triangle {t:?} faces away from its normals");
            }
        }
        assert!(used.iter().all(|&u| u), "unused vertex");
        for n in &m.normals {
            assert!((dot(*n, *n) - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn agent_body_is_a_capsule_standing_on_the_ground() {
        let m = agent_body(0.3, 1.75, 24);
        assert_well_formed(&m);
        let min_y = m.positions.iter().map(|p| p[1]).fold(f64::INFINITY, f64::min);
        let max_y = m.positions.iter().map(|p| p[1]).fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(min_y, 0.0);
        assert!((max_y - 1.75).abs() < 1e-12);
        // The nose sticks out along +Z and nowhere else.
        let max_z = m.positions.iter().map(|p| p[2]).fold(f64::NEG_INFINITY, f64::max);
        let min_z = m.positions.iter().map(|p| p[2]).fold(f64::INFINITY, f64::min);
        let max_x = m.positions.iter().map(|p| p[0].abs()).fold(0.0, f64::max);
        assert!(max_z > 0.4 && (min_z + 0.3).abs() < 1e-12 && (max_x - 0.3).abs() < 1e-12);
        // A wide agent becomes a sphere resting on the ground.
        let ball = agent_body(1.0, 1.75, 24);
        assert_well_formed(&ball);
        let top = ball.positions.iter().map(|p| p[1]).fold(f64::NEG_INFINITY, f64::max);
        assert!((top - 2.0).abs() < 1e-12);
    }

    #[test]
    fn obstacles_are_closed_upwards_and_outwards() {
        let circle = Obstacle::Circle { center: [8.0, 8.0], radius: 1.2 };
        let c = obstacle(&circle, 0.8, 24).unwrap();
        assert_well_formed(&c);
        // A concave L shape, clockwise.
        let l = vec![[0.0, 0.0], [0.0, 2.0], [1.0, 2.0], [1.0, 1.0], [2.0, 1.0], [2.0, 0.0], [0.0, 0.0]];
        let p = obstacle(&Obstacle::Polygon(l.clone()), 0.8, 24).unwrap();
        assert_well_formed(&p);
        // 6 walls of 4 vertices, 6 cap vertices, 6 + 6 + 4 triangles.
        assert_eq!(p.vertex_count(), 30);
        assert_eq!(p.indices.len() / 3, 2 * 6 + 4);
        // The same shape in the other winding gives the same cap area.
        let mut r = l;
        r.reverse();
        let q = obstacle(&Obstacle::Polygon(r), 0.8, 24).unwrap();
        assert_well_formed(&q);
        let cap_area = |m: &MeshData| -> f64 {
            m.indices
                .chunks_exact(3)
                .filter(|t| t.iter().all(|&i| m.normals[i as usize] == [0.0, 1.0, 0.0]))
                .map(|t| {
                    let p = |i: u32| m.positions[i as usize];
                    let f = cross(sub(p(t[1]), p(t[0])), sub(p(t[2]), p(t[0])));
                    f[1] / 2.0
                })
                .sum()
        };
        assert!((cap_area(&p) - 3.0).abs() < 1e-12);
        assert!((cap_area(&q) - 3.0).abs() < 1e-12);
        assert_well_formed(&ground(16.0));
    }

    #[test]
    fn polygon_cleaning_drops_repeats() {
        let p = clean_polygon(&[[0.0, 0.0], [1.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]]);
        assert_eq!(p, vec![[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]]);
        assert!((signed_area(&p) - 0.5).abs() < 1e-15);
    }
}
