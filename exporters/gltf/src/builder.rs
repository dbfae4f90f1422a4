//! A small builder over the typed glTF JSON: one binary buffer split into a
//! few buffer views by use, accessors with exact `min`/`max` where the
//! validator needs them, meshes and materials.
//!
//! Buffer views are grouped by [`ViewKind`]: all vertex attributes of one
//! element size share an `ARRAY_BUFFER` view with that `byteStride`, all
//! indices share an `ELEMENT_ARRAY_BUFFER` view, and all animation data shares
//! one view with no target and no stride (the validator forbids both for
//! animation samplers). Skinning data (joints, weights, inverse bind matrices)
//! can join as new kinds later. Every accessor starts on a 4-byte boundary, so
//! the binary chunk needs no padding of its own.

use std::collections::BTreeMap;

use gltf_json as json;
use json::validation::Checked::Valid;
use json::validation::USize64;

use crate::error::ExportError;
use crate::geometry::MeshData;
use crate::options::Compression;
use crate::played::Played;

/// Drops what glTF defaults (a sampler's `"interpolation": "LINEAR"`) and
/// writes the agents' footsteps (`extras.crowdpatch.agents[i].footsteps`,
/// the largest part of the extras) at the precision of the file's own
/// data, `f32`, in the fewest digits: 0.5 µm at 10 m, 1 µs at 10 s.
fn compact(root: &mut serde_json::Value) {
    fn to_f32(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Number(n) if n.is_f64() => {
                if let Some(x) = n.as_f64() {
                    *v = shortest(x as f32);
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(to_f32),
            serde_json::Value::Object(fields) => fields.values_mut().for_each(to_f32),
            _ => {}
        }
    }
    if let Some(scenes) = root.get_mut("scenes").and_then(|s| s.as_array_mut()) {
        for scene in scenes {
            let agents = scene.pointer_mut("/extras/crowdpatch/agents").and_then(|a| a.as_array_mut());
            for agent in agents.into_iter().flatten() {
                if let Some(steps) = agent.get_mut("footsteps") {
                    to_f32(steps);
                }
            }
        }
    }
    if let Some(animations) = root.get_mut("animations").and_then(|a| a.as_array_mut()) {
        for animation in animations {
            if let Some(samplers) = animation.get_mut("samplers").and_then(|s| s.as_array_mut()) {
                for sampler in samplers.iter_mut().filter_map(|s| s.as_object_mut()) {
                    if sampler.get("interpolation").is_some_and(|i| i == "LINEAR") {
                        sampler.remove("interpolation");
                    }
                }
            }
        }
    }
}

/// JSON text of `value` with no whitespace, whole numbers written without
/// a fraction (`0` rather than `0.0`; they read back as the same `f64`).
fn to_compact_vec(value: &serde_json::Value) -> Result<Vec<u8>, serde_json::Error> {
    struct Compact;
    impl serde_json::ser::Formatter for Compact {
        fn write_f64<W: ?Sized + std::io::Write>(&mut self, w: &mut W, v: f64) -> std::io::Result<()> {
            if v.fract() == 0.0 && v.abs() < 1e15 && !(v == 0.0 && v.is_sign_negative()) {
                write!(w, "{}", v as i64)
            } else {
                serde_json::ser::CompactFormatter.write_f64(w, v)
            }
        }
    }
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Compact);
    serde::Serialize::serialize(value, &mut ser)?;
    Ok(out)
}

/// `v` as the JSON number that reads back as `v` in `f32` with the fewest
/// digits (`0.245` rather than `0.24500000476837158`).
fn shortest(v: f32) -> json::Value {
    let x: f64 = v.to_string().parse().unwrap_or(f64::from(v));
    serde_json::Number::from_f64(x).map_or(json::Value::Null, json::Value::Number)
}

/// What a buffer view holds; views are created on first use, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum ViewKind {
    /// Vertex attributes whose elements are this many bytes long.
    Vertex { stride: usize },
    /// Index data.
    Index,
    /// Animation sampler inputs and outputs (callers' kind; stored by
    /// element size, [`ViewKind::AnimationElements`]).
    Animation,
    /// Animation data whose elements are this many bytes long: one view per
    /// element size, so that each can be compressed as one stream.
    AnimationElements(usize),
    /// Inverse bind matrices of skins.
    Skin,
}

/// Component type and element type of an accessor of `f32`s.
#[derive(Debug, Clone, Copy)]
pub(crate) enum FloatType {
    Scalar,
    Vec3,
    Vec4,
    Mat4,
}

impl FloatType {
    fn width(self) -> usize {
        match self {
            FloatType::Scalar => 1,
            FloatType::Vec3 => 3,
            FloatType::Vec4 => 4,
            FloatType::Mat4 => 16,
        }
    }

    fn json(self) -> json::accessor::Type {
        match self {
            FloatType::Scalar => json::accessor::Type::Scalar,
            FloatType::Vec3 => json::accessor::Type::Vec3,
            FloatType::Vec4 => json::accessor::Type::Vec4,
            FloatType::Mat4 => json::accessor::Type::Mat4,
        }
    }
}

/// The glTF document under construction and its binary data.
pub(crate) struct Builder {
    /// The JSON document.
    pub root: json::Root,
    /// Bytes of each view, by view index.
    views: Vec<Vec<u8>>,
    /// View index of each kind in use.
    view_of: BTreeMap<ViewKind, usize>,
    /// Materials created so far, by name, so that meshes of a kind share one.
    materials: BTreeMap<&'static str, json::Index<json::Material>>,
    /// How the binary chunk is stored.
    compression: Compression,
    /// What players decode of the values written.
    pub played: Played,
}

impl Builder {
    /// A document for a tile of period `period` `[s]`, stored as
    /// `compression` says.
    pub fn new(compression: Compression, period: f32) -> Self {
        let root = json::Root {
            asset: json::Asset {
                generator: Some(format!("crowdpatch-gltf {}", env!("CARGO_PKG_VERSION"))),
                ..Default::default()
            },
            ..Default::default()
        };
        Builder {
            root,
            views: Vec::new(),
            view_of: BTreeMap::new(),
            materials: BTreeMap::new(),
            compression,
            played: Played::new(compression, period),
        }
    }

    /// Appends `bytes` to the view of `kind`; returns the view and the byte
    /// offset of the data inside it.
    fn append(&mut self, kind: ViewKind, bytes: &[u8]) -> (json::Index<json::buffer::View>, usize) {
        let kind = match kind {
            ViewKind::Animation => ViewKind::AnimationElements(4),
            k => k,
        };
        let view = match self.view_of.get(&kind) {
            Some(&v) => v,
            None => {
                let v = self.views.len();
                self.views.push(Vec::new());
                self.view_of.insert(kind, v);
                let (target, stride) = match kind {
                    ViewKind::Vertex { stride } => {
                        (Some(Valid(json::buffer::Target::ArrayBuffer)), Some(json::buffer::Stride(stride)))
                    }
                    ViewKind::Index => (Some(Valid(json::buffer::Target::ElementArrayBuffer)), None),
                    ViewKind::Animation | ViewKind::AnimationElements(_) | ViewKind::Skin => (None, None),
                };
                // Offsets and lengths are filled in by `finish`.
                self.root.push(json::buffer::View {
                    buffer: json::Index::new(0),
                    byte_length: USize64(0),
                    byte_offset: None,
                    byte_stride: stride,
                    name: None,
                    target,
                    extensions: None,
                    extras: None,
                });
                v
            }
        };
        let data = &mut self.views[view];
        let offset = data.len();
        data.extend_from_slice(bytes);
        let align = match kind {
            ViewKind::AnimationElements(size) => size,
            _ => 4,
        };
        while !data.len().is_multiple_of(align) {
            data.push(0);
        }
        (json::Index::new(view as u32), offset)
    }

    /// Pushes an accessor of `f32` elements (`values.len()` must be a
    /// multiple of the type's width). With `bounds`, writes per-component
    /// `min`/`max` equal to the stored `f32` values.
    pub fn floats(
        &mut self,
        kind: ViewKind,
        ty: FloatType,
        values: &[f32],
        bounds: bool,
    ) -> json::Index<json::Accessor> {
        let width = ty.width();
        debug_assert_eq!(values.len() % width, 0);
        // Animation vectors are written as players decode them.
        let played: Vec<f32>;
        let values = if kind == ViewKind::Animation && width == 3 {
            played = values.chunks_exact(3).flat_map(|v| self.played.translation([v[0], v[1], v[2]])).collect();
            &played[..]
        } else {
            values
        };
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let kind = match kind {
            ViewKind::Animation => ViewKind::AnimationElements(4 * width),
            k => k,
        };
        let (view, offset) = self.append(kind, &bytes);
        let (min, max) = if bounds && !values.is_empty() {
            let mut min = values[..width].to_vec();
            let mut max = min.clone();
            for element in values.chunks_exact(width) {
                for c in 0..width {
                    min[c] = min[c].min(element[c]);
                    max[c] = max[c].max(element[c]);
                }
            }
            let list = |v: Vec<f32>| json::Value::Array(v.into_iter().map(shortest).collect());
            (Some(list(min)), Some(list(max)))
        } else {
            (None, None)
        };
        self.root.push(json::Accessor {
            buffer_view: Some(view),
            byte_offset: Some(USize64::from(offset)),
            count: USize64::from(values.len() / width),
            component_type: Valid(json::accessor::GenericComponentType(json::accessor::ComponentType::F32)),
            extensions: None,
            extras: None,
            type_: Valid(ty.json()),
            min,
            max,
            name: None,
            normalized: false,
            sparse: None,
        })
    }

    /// Pushes an accessor of normalised `i16` elements of `width` components
    /// (animation rotations: glTF 2.0 allows normalised SHORT outputs).
    pub fn shorts(&mut self, kind: ViewKind, ty: FloatType, values: &[i16]) -> json::Index<json::Accessor> {
        let width = ty.width();
        debug_assert_eq!(values.len() % width, 0);
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let kind = match kind {
            ViewKind::Animation => ViewKind::AnimationElements(2 * width),
            k => k,
        };
        let (view, offset) = self.append(kind, &bytes);
        self.root.push(json::Accessor {
            buffer_view: Some(view),
            byte_offset: Some(USize64::from(offset)),
            count: USize64::from(values.len() / width),
            component_type: Valid(json::accessor::GenericComponentType(json::accessor::ComponentType::I16)),
            extensions: None,
            extras: None,
            type_: Valid(ty.json()),
            min: None,
            max: None,
            name: None,
            normalized: true,
            sparse: None,
        })
    }

    /// Pushes a `JOINTS_0` accessor: four unsigned shorts per vertex.
    pub fn joints(&mut self, joints: &[[u16; 4]]) -> json::Index<json::Accessor> {
        let bytes: Vec<u8> = joints.iter().flat_map(|j| j.iter().flat_map(|x| x.to_le_bytes())).collect();
        let (view, offset) = self.append(ViewKind::Vertex { stride: 8 }, &bytes);
        self.root.push(json::Accessor {
            buffer_view: Some(view),
            byte_offset: Some(USize64::from(offset)),
            count: USize64::from(joints.len()),
            component_type: Valid(json::accessor::GenericComponentType(json::accessor::ComponentType::U16)),
            extensions: None,
            extras: None,
            type_: Valid(json::accessor::Type::Vec4),
            min: None,
            max: None,
            name: None,
            normalized: false,
            sparse: None,
        })
    }

    /// Pushes an opaque, non-metallic material of linear colour `rgba`
    /// (not shared by name).
    pub fn material_rgba(&mut self, name: &str, rgba: [f32; 4]) -> json::Index<json::Material> {
        self.root.push(json::Material {
            name: Some(name.to_owned()),
            pbr_metallic_roughness: json::material::PbrMetallicRoughness {
                base_color_factor: json::material::PbrBaseColorFactor(rgba),
                metallic_factor: json::material::StrengthFactor(0.0),
                roughness_factor: json::material::StrengthFactor(0.8),
                ..Default::default()
            },
            ..Default::default()
        })
    }

    /// Pushes a mesh with one skinned primitive per entry: `POSITION` (with
    /// bounds), `NORMAL`, `JOINTS_0`, `WEIGHTS_0` and indices.
    pub fn skinned_mesh(
        &mut self,
        name: &str,
        primitives: &[crowdpatch_runtime::skeletal::SkinnedPrimitive],
    ) -> json::Index<json::Mesh> {
        let mut out = Vec::new();
        for p in primitives {
            let material = self.material_rgba(&p.material, p.colour);
            let flat3 = |v: &[[f32; 3]]| -> Vec<f32> { v.iter().flatten().copied().collect() };
            let vertex = ViewKind::Vertex { stride: 12 };
            let positions = self.floats(vertex, FloatType::Vec3, &flat3(&p.positions), true);
            let normals = self.floats(vertex, FloatType::Vec3, &flat3(&p.normals), false);
            let joints = self.joints(&p.joints);
            let w: Vec<f32> = p.weights.iter().flatten().copied().collect();
            let weights = self.floats(ViewKind::Vertex { stride: 16 }, FloatType::Vec4, &w, false);
            let indices = self.indices(&p.indices);
            let attributes = BTreeMap::from([
                (Valid(json::mesh::Semantic::Positions), positions),
                (Valid(json::mesh::Semantic::Normals), normals),
                (Valid(json::mesh::Semantic::Joints(0)), joints),
                (Valid(json::mesh::Semantic::Weights(0)), weights),
            ]);
            out.push(json::mesh::Primitive {
                attributes,
                extensions: None,
                extras: None,
                indices: Some(indices),
                material: Some(material),
                mode: Valid(json::mesh::Mode::Triangles),
                targets: None,
            });
        }
        self.root.push(json::Mesh {
            extensions: None,
            extras: None,
            name: Some(name.to_owned()),
            primitives: out,
            weights: None,
        })
    }

    /// Pushes an index accessor: unsigned shorts when every index fits below
    /// the primitive-restart value 65535, unsigned ints otherwise.
    fn indices(&mut self, indices: &[u32]) -> json::Index<json::Accessor> {
        let small = indices.iter().all(|&i| i < u32::from(u16::MAX));
        let (bytes, component): (Vec<u8>, _) = if small {
            (indices.iter().flat_map(|&i| (i as u16).to_le_bytes()).collect(), json::accessor::ComponentType::U16)
        } else {
            (indices.iter().flat_map(|&i| i.to_le_bytes()).collect(), json::accessor::ComponentType::U32)
        };
        let (view, offset) = self.append(ViewKind::Index, &bytes);
        self.root.push(json::Accessor {
            buffer_view: Some(view),
            byte_offset: Some(USize64::from(offset)),
            count: USize64::from(indices.len()),
            component_type: Valid(json::accessor::GenericComponentType(component)),
            extensions: None,
            extras: None,
            type_: Valid(json::accessor::Type::Scalar),
            min: None,
            max: None,
            name: None,
            normalized: false,
            sparse: None,
        })
    }

    /// The material named `name`, created on first use: opaque, non-metallic,
    /// of colour `rgb` (linear).
    pub fn material(&mut self, name: &'static str, rgb: [f32; 3]) -> json::Index<json::Material> {
        if let Some(&m) = self.materials.get(name) {
            return m;
        }
        let m = self.root.push(json::Material {
            name: Some(name.to_owned()),
            pbr_metallic_roughness: json::material::PbrMetallicRoughness {
                base_color_factor: json::material::PbrBaseColorFactor([rgb[0], rgb[1], rgb[2], 1.0]),
                metallic_factor: json::material::StrengthFactor(0.0),
                roughness_factor: json::material::StrengthFactor(0.8),
                ..Default::default()
            },
            ..Default::default()
        });
        self.materials.insert(name, m);
        m
    }

    /// Pushes a one-primitive triangle mesh with `POSITION` (with bounds) and
    /// `NORMAL` attributes and indices.
    pub fn mesh(
        &mut self,
        name: String,
        data: &MeshData,
        material: json::Index<json::Material>,
    ) -> json::Index<json::Mesh> {
        let to_f32 = |v: &[[f64; 3]]| -> Vec<f32> { v.iter().flat_map(|p| p.map(|c| c as f32)).collect() };
        let vertex = ViewKind::Vertex { stride: 12 };
        let positions = self.floats(vertex, FloatType::Vec3, &to_f32(&data.positions), true);
        let normals = self.floats(vertex, FloatType::Vec3, &to_f32(&data.normals), false);
        let indices = self.indices(&data.indices);
        let attributes = BTreeMap::from([
            (Valid(json::mesh::Semantic::Positions), positions),
            (Valid(json::mesh::Semantic::Normals), normals),
        ]);
        self.root.push(json::Mesh {
            extensions: None,
            extras: None,
            name: Some(name),
            primitives: vec![json::mesh::Primitive {
                attributes,
                extensions: None,
                extras: None,
                indices: Some(indices),
                material: Some(material),
                mode: Valid(json::mesh::Mode::Triangles),
                targets: None,
            }],
            weights: None,
        })
    }

    /// Lays the views out in one buffer and writes the GLB container.
    pub fn finish(mut self) -> Result<Vec<u8>, ExportError> {
        let mut bin = Vec::new();
        for (i, data) in self.views.iter().enumerate() {
            let view = &mut self.root.buffer_views[i];
            view.byte_offset = Some(USize64::from(bin.len()));
            view.byte_length = USize64::from(data.len());
            bin.extend_from_slice(data);
        }
        if !bin.is_empty() {
            self.root.push(json::Buffer {
                byte_length: USize64::from(bin.len()),
                extensions: None,
                extras: None,
                name: None,
                uri: None,
            });
        }
        let json_err = |source| ExportError::Json { source };
        let mut value: serde_json::Value =
            serde_json::from_slice(&json::serialize::to_vec(&self.root).map_err(json_err)?).map_err(json_err)?;
        compact(&mut value);
        if self.compression == Compression::Meshopt {
            let size_of: BTreeMap<usize, usize> = self
                .view_of
                .iter()
                .filter_map(|(kind, &v)| match kind {
                    ViewKind::AnimationElements(size) => Some((v, *size)),
                    _ => None,
                })
                .collect();
            bin = crate::meshopt::compress(&mut value, &size_of, &self.views, bin, &self.played)?;
        }
        let json = to_compact_vec(&value).map_err(json_err)?;
        // 12-byte header, 8-byte chunk headers, chunks padded to 4 bytes.
        let total = 12 + 8 + json.len().div_ceil(4) * 4 + if bin.is_empty() { 0 } else { 8 + bin.len() };
        if total > u32::MAX as usize {
            return Err(ExportError::TooLarge { bytes: total as u64 });
        }
        let glb = gltf::binary::Glb {
            header: gltf::binary::Header { magic: *b"glTF", version: 2, length: total as u32 },
            json: json.into(),
            bin: (!bin.is_empty()).then(|| bin.into()),
        };
        glb.to_vec().map_err(|source| ExportError::Glb { source })
    }
}
