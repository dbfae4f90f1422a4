//! Bevy assets built from what the runtime reads: the character's skinned
//! meshes, materials and inverse bind matrices, the capsule of a capsule
//! bake, obstacle solids and ground squares.
//!
//! Frames: the patch point `(x, y)` (x east, y north) is the Bevy point
//! `(x, 0, −y)`, Y up, as in the baked GLB (glTF is Y up too); a character
//! stands on `y = 0` and faces +Z in its own frame.

use bevy::asset::RenderAssetUsages;
use bevy::camera::primitives::Aabb;
use bevy::math::{Affine3A, Mat4, Vec3};
use bevy::mesh::skinning::SkinnedMeshInverseBindposes;
use bevy::mesh::{Indices, Mesh, PrimitiveTopology, VertexAttributeValues};
use bevy::prelude::*;
use crowdpatch_runtime::format::Obstacle;
use crowdpatch_runtime::skeletal::{Character, SkinnedPrimitive};

/// What draws the walkers of one character: meshes and materials (the
/// opaque primitives merged into one mesh with vertex colours, each
/// translucent one apart), the skin's inverse bind matrices, and bounds around the
/// walking body for culling.
#[derive(Debug, Clone)]
pub(crate) struct CharacterAssets {
    /// Meshes and their materials.
    pub primitives: Vec<(Handle<Mesh>, Handle<StandardMaterial>)>,
    /// Inverse bind matrices, in the skin's joint order.
    pub inverse_bindposes: Handle<SkinnedMeshInverseBindposes>,
    /// Bounds of the body in the walker's frame: the bind pose's bounds grown
    /// by half a stride, so that swinging limbs stay inside.
    pub aabb: Aabb,
    /// Vertices of one walker (all primitives).
    pub vertices: usize,
}

/// The Bevy assets of `character`. O(vertices).
pub(crate) fn character_assets(
    character: &Character,
    meshes: &mut Assets<Mesh>,
    materials: &mut Assets<StandardMaterial>,
    bindposes: &mut Assets<SkinnedMeshInverseBindposes>,
) -> CharacterAssets {
    let mut lo = Vec3::splat(f32::INFINITY);
    let mut hi = Vec3::splat(f32::NEG_INFINITY);
    let mut vertices = 0;
    // Opaque primitives merge into one mesh whose vertices carry their
    // primitive's base colour (one mesh entity and one draw per walker
    // instead of one per material); translucent ones keep their own.
    let mut opaque = SkinnedPrimitive::default();
    let mut colours: Vec<[f32; 4]> = Vec::new();
    let mut primitives = Vec::new();
    for p in &character.primitives {
        for v in &p.positions {
            lo = lo.min(Vec3::from_array(*v));
            hi = hi.max(Vec3::from_array(*v));
        }
        vertices += p.positions.len();
        if p.colour[3] >= 1.0 {
            let base = opaque.positions.len() as u32;
            opaque.positions.extend_from_slice(&p.positions);
            opaque.normals.extend_from_slice(&p.normals);
            opaque.joints.extend_from_slice(&p.joints);
            opaque.weights.extend_from_slice(&p.weights);
            opaque.indices.extend(p.indices.iter().map(|i| i + base));
            colours.extend(std::iter::repeat_n(p.colour, p.positions.len()));
        } else {
            let colour = vec![[1.0; 4]; p.positions.len()];
            primitives.push((meshes.add(skinned_mesh(p, colour)), materials.add(material(p.colour))));
        }
    }
    if !opaque.positions.is_empty() {
        primitives.insert(0, (meshes.add(skinned_mesh(&opaque, colours)), materials.add(material([1.0; 4]))));
    }
    let matrices: Vec<Mat4> =
        character.joints.iter().map(|j| Mat4::from_cols_array(&j.inverse_bind.map(|x| x as f32))).collect();
    if lo.x > hi.x {
        (lo, hi) = (Vec3::ZERO, Vec3::ZERO);
    }
    let grow = Vec3::new(0.5, 0.1, 0.5);
    CharacterAssets {
        primitives,
        inverse_bindposes: bindposes.add(SkinnedMeshInverseBindposes::from(matrices)),
        aabb: Aabb::from_min_max(lo - grow, hi + grow),
        vertices,
    }
}

/// A skinned triangle mesh of `p` with per-vertex colours.
fn skinned_mesh(p: &SkinnedPrimitive, colours: Vec<[f32; 4]>) -> Mesh {
    Mesh::new(PrimitiveTopology::TriangleList, RenderAssetUsages::RENDER_WORLD)
        .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, p.positions.clone())
        .with_inserted_attribute(Mesh::ATTRIBUTE_NORMAL, p.normals.clone())
        .with_inserted_attribute(Mesh::ATTRIBUTE_COLOR, colours)
        .with_inserted_attribute(Mesh::ATTRIBUTE_JOINT_INDEX, VertexAttributeValues::Uint16x4(p.joints.clone()))
        .with_inserted_attribute(Mesh::ATTRIBUTE_JOINT_WEIGHT, p.weights.clone())
        .with_inserted_indices(Indices::U32(p.indices.clone()))
}

/// A material of linear base colour `c` (multiplied by the vertex colours).
fn material(c: [f32; 4]) -> StandardMaterial {
    StandardMaterial {
        base_color: Color::linear_rgba(c[0], c[1], c[2], c[3]),
        alpha_mode: if c[3] < 1.0 { AlphaMode::Blend } else { AlphaMode::Opaque },
        perceptual_roughness: 0.8,
        ..default()
    }
}

/// The body of a capsule bake's walker: a capsule of radius `radius` `[m]`
/// and height `height` `[m]` standing on `y = 0`.
pub(crate) fn capsule(radius: f32, height: f32) -> Mesh {
    let mut mesh = Mesh::from(Capsule3d::new(radius, (height - 2.0 * radius).max(0.01)));
    mesh.translate_by(Vec3::Y * height / 2.0);
    mesh
}

/// An obstacle as a solid `height` `[m]` high, in world coordinates: each
/// point `(x, y)` of the obstacle (patch frame) is placed by `place` (the
/// cell's placement) and drawn at `(x, 0, −y)`. A circle becomes a
/// 32-sided prism, a polygon a prism with an ear-clipped top. `None` for a
/// polygon that cannot be triangulated.
pub(crate) fn obstacle(obstacle: &Obstacle, height: f32, place: &dyn Fn([f64; 2]) -> [f64; 2]) -> Option<Mesh> {
    let outline: Vec<[f64; 2]> = match obstacle {
        Obstacle::Circle { center, radius } => (0..32)
            .map(|k| {
                let a = k as f64 * std::f64::consts::TAU / 32.0;
                [center[0] + radius * a.cos(), center[1] + radius * a.sin()]
            })
            .collect(),
        Obstacle::Polygon(v) => v.clone(),
    };
    let outline: Vec<[f64; 2]> = outline.iter().map(|&p| place(p)).collect();
    let n = outline.len();
    if n < 3 {
        return None;
    }
    // Counter-clockwise seen from above (+y north): positive shoelace area.
    let area: f64 = (0..n)
        .map(|i| {
            let (a, b) = (outline[i], outline[(i + 1) % n]);
            a[0] * b[1] - b[0] * a[1]
        })
        .sum();
    let ccw: Vec<[f64; 2]> = if area >= 0.0 { outline } else { outline.into_iter().rev().collect() };
    let flat: Vec<f64> = ccw.iter().flat_map(|p| [p[0], p[1]]).collect();
    let top = earcutr::earcut(&flat, &[], 2).ok()?;
    let at = |p: [f64; 2], y: f32| [p[0] as f32, y, -p[1] as f32];
    let (mut positions, mut normals, mut indices) = (Vec::new(), Vec::new(), Vec::<u32>::new());
    for p in &ccw {
        positions.push(at(*p, height));
        normals.push([0.0, 1.0, 0.0]);
    }
    // Seen from above, Bevy's (x, −z) is the patch's (x, y): a triangle
    // counter-clockwise in (x, y) faces up. Each is ordered so.
    for t in top.chunks_exact(3) {
        let (a, b, c) = (ccw[t[0]], ccw[t[1]], ccw[t[2]]);
        let turn = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
        if turn >= 0.0 {
            indices.extend([t[0] as u32, t[1] as u32, t[2] as u32]);
        } else {
            indices.extend([t[0] as u32, t[2] as u32, t[1] as u32]);
        }
    }
    for i in 0..n {
        let (a, b) = (ccw[i], ccw[(i + 1) % n]);
        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
        let len = (dx * dx + dy * dy).sqrt().max(1e-9);
        // Outward normal of a counter-clockwise edge: (dy, −dx) in (x, y).
        let normal = [(dy / len) as f32, 0.0, (dx / len) as f32];
        let base = positions.len() as u32;
        positions.extend([at(a, 0.0), at(b, 0.0), at(b, height), at(a, height)]);
        normals.extend([normal; 4]);
        indices.extend([base, base + 1, base + 2, base, base + 2, base + 3]);
    }
    Some(
        Mesh::new(PrimitiveTopology::TriangleList, RenderAssetUsages::RENDER_WORLD)
            .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, positions)
            .with_inserted_attribute(Mesh::ATTRIBUTE_NORMAL, normals)
            .with_inserted_indices(Indices::U32(indices)),
    )
}

/// The transform of a walker standing at patch-frame point `(x, y)` `[m]`
/// with heading `h` `[rad]` (from +x towards +y): the point `(x, 0, −y)`,
/// turned by `h + π/2` about +Y so that its +Z faces `(cos h, 0, −sin h)`
/// (the exporter's convention).
#[inline]
pub(crate) fn walker_transform(x: f32, y: f32, heading: f32) -> Affine3A {
    Affine3A::from_rotation_translation(
        Quat::from_rotation_y(heading + std::f32::consts::FRAC_PI_2),
        Vec3::new(x, 0.0, -y),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inside(poly: &[[f64; 2]], p: [f64; 2]) -> bool {
        let mut c = false;
        for i in 0..poly.len() {
            let (a, b) = (poly[i], poly[(i + 1) % poly.len()]);
            if (a[1] > p[1]) != (b[1] > p[1]) && p[0] < a[0] + (p[1] - a[1]) / (b[1] - a[1]) * (b[0] - a[0]) {
                c = !c;
            }
        }
        c
    }

    /// Every face of an obstacle solid faces out (the side a renderer draws
    /// with back faces culled): tops up, walls away from the inside, for
    /// either winding and a concave outline; the normals agree.
    #[test]
    fn obstacle_solids_face_outwards() {
        let square = vec![[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]];
        let ell = vec![[0.0, 0.0], [3.0, 0.0], [3.0, 1.0], [1.0, 1.0], [1.0, 3.0], [0.0, 3.0]];
        let mut clockwise = ell.clone();
        clockwise.reverse();
        for outline in [square, ell, clockwise] {
            let mesh = obstacle(&Obstacle::Polygon(outline.clone()), 1.0, &|p| p).unwrap();
            let Some(VertexAttributeValues::Float32x3(pos)) = mesh.attribute(Mesh::ATTRIBUTE_POSITION) else {
                panic!()
            };
            let Some(VertexAttributeValues::Float32x3(nor)) = mesh.attribute(Mesh::ATTRIBUTE_NORMAL) else { panic!() };
            let Some(Indices::U32(idx)) = mesh.indices() else { panic!() };
            for t in idx.chunks_exact(3) {
                let [a, b, c] = [0, 1, 2].map(|k| Vec3::from_array(pos[t[k] as usize]));
                let n = (b - a).cross(c - a).normalize();
                assert!(n.dot(Vec3::from_array(nor[t[0] as usize])) > 0.99, "{outline:?}: face {n} against its normal");
                if a.y == 1.0 && b.y == 1.0 && c.y == 1.0 {
                    assert!(n.y > 0.99, "{outline:?}: top face {n}");
                } else {
                    let m = (a + b + c) / 3.0 + n * 0.01;
                    assert!(!inside(&outline, [f64::from(m.x), f64::from(-m.z)]), "{outline:?}: wall faces in");
                }
            }
        }
    }
}
