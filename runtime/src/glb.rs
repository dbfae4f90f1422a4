//! A small, defensive reader of the GLB container and of the part of the glTF
//! JSON a crowdpatch tile needs: nodes, one animation, accessors, buffer
//! views and the binary chunk.
//!
//! Built on `serde_json` alone (no glTF crate): every index is checked before
//! use, every byte range is checked against the binary chunk with overflow-
//! checked arithmetic, and nothing is allocated for data the file does not
//! hold, so that a corrupt or hostile file yields a [`LoadError`] and never a
//! panic or an out-of-memory abort.

use std::collections::HashMap;

use serde::Deserialize;

use crate::error::LoadError;

/// `glTF` in little-endian.
const MAGIC: u32 = 0x4654_6C67;
/// Chunk type of the JSON chunk (`JSON`).
const CHUNK_JSON: u32 = 0x4E4F_534A;
/// Chunk type of the binary chunk (`BIN\0`).
const CHUNK_BIN: u32 = 0x004E_4942;
/// glTF accessor component type FLOAT.
const FLOAT: u32 = 5126;
/// glTF accessor component types of integers: BYTE, UNSIGNED_BYTE, SHORT,
/// UNSIGNED_SHORT.
const BYTE: u32 = 5120;
const UNSIGNED_BYTE: u32 = 5121;
const SHORT: u32 = 5122;
const UNSIGNED_SHORT: u32 = 5123;
const UNSIGNED_INT: u32 = 5125;

/// The two chunks of a GLB.
pub(crate) struct Container<'a> {
    /// The JSON chunk.
    pub json: &'a [u8],
    /// The binary chunk, if any.
    pub bin: Option<&'a [u8]>,
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Splits a GLB into its chunks (glTF 2.0 §4.4).
pub(crate) fn container(bytes: &[u8]) -> Result<Container<'_>, LoadError> {
    let bad = |reason: String| LoadError::Container { reason };
    let magic = u32_at(bytes, 0).ok_or_else(|| bad(format!("{} bytes is too short for a GLB header", bytes.len())))?;
    if magic != MAGIC {
        let shown: String = bytes[..4].iter().map(|&b| char::from(b).escape_default().to_string()).collect();
        return Err(bad(format!("magic is \"{shown}\", not \"glTF\"")));
    }
    let version = u32_at(bytes, 4).ok_or_else(|| bad("truncated header".into()))?;
    if version != 2 {
        return Err(bad(format!("container version {version}; only glTF 2.0 (version 2) is read")));
    }
    let length = u32_at(bytes, 8).ok_or_else(|| bad("truncated header".into()))? as usize;
    if length > bytes.len() {
        return Err(bad(format!("header says {length} bytes but the file holds {}: truncated", bytes.len())));
    }
    let bytes = &bytes[..length];
    let mut at = 12usize;
    let mut chunks = Vec::new();
    while at < bytes.len() {
        let len = u32_at(bytes, at).ok_or_else(|| bad(format!("truncated chunk header at byte {at}")))? as usize;
        let ty = u32_at(bytes, at + 4).ok_or_else(|| bad(format!("truncated chunk header at byte {at}")))?;
        let start = at + 8;
        let end = start
            .checked_add(len)
            .filter(|&e| e <= bytes.len())
            .ok_or_else(|| bad(format!("chunk at byte {at} claims {len} bytes, past the end of the file")))?;
        chunks.push((ty, &bytes[start..end]));
        at = end;
        if chunks.len() > 16 {
            return Err(bad("more than 16 chunks".into()));
        }
    }
    let Some(&(CHUNK_JSON, json)) = chunks.first() else {
        return Err(bad("the first chunk is not the JSON chunk".into()));
    };
    let bin = chunks.get(1).filter(|(ty, _)| *ty == CHUNK_BIN).map(|(_, b)| *b);
    Ok(Container { json, bin })
}

/// The glTF JSON, as far as the runtime reads it. Unknown fields are ignored.
#[derive(Debug, Deserialize)]
pub(crate) struct Root {
    #[serde(default)]
    pub scene: Option<usize>,
    #[serde(default)]
    pub scenes: Vec<Scene>,
    #[serde(default)]
    pub nodes: Vec<Node>,
    #[serde(default)]
    pub accessors: Vec<Accessor>,
    #[serde(default, rename = "bufferViews")]
    pub buffer_views: Vec<BufferView>,
    #[serde(default)]
    pub buffers: Vec<Buffer>,
    #[serde(default)]
    pub animations: Vec<Animation>,
    #[serde(default)]
    pub meshes: Vec<Mesh>,
    #[serde(default)]
    pub skins: Vec<Skin>,
    #[serde(default)]
    pub materials: Vec<Material>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Mesh {
    #[serde(default)]
    pub primitives: Vec<Primitive>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Primitive {
    #[serde(default)]
    pub attributes: HashMap<String, usize>,
    #[serde(default)]
    pub indices: Option<usize>,
    #[serde(default)]
    pub material: Option<usize>,
    #[serde(default)]
    pub mode: Option<u32>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Skin {
    #[serde(default, rename = "inverseBindMatrices")]
    pub inverse_bind_matrices: Option<usize>,
    #[serde(default)]
    pub joints: Vec<usize>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Material {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default, rename = "pbrMetallicRoughness")]
    pub pbr: Option<Pbr>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Pbr {
    #[serde(default, rename = "baseColorFactor")]
    pub base_colour: Option<[f32; 4]>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Scene {
    #[serde(default)]
    pub extras: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Node {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub children: Vec<usize>,
    #[serde(default)]
    pub translation: Option<[f64; 3]>,
    #[serde(default)]
    pub rotation: Option<[f64; 4]>,
    #[serde(default)]
    pub scale: Option<[f64; 3]>,
    #[serde(default)]
    pub mesh: Option<usize>,
    #[serde(default)]
    pub skin: Option<usize>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Accessor {
    #[serde(default, rename = "bufferView")]
    pub buffer_view: Option<usize>,
    #[serde(default, rename = "byteOffset")]
    pub byte_offset: u64,
    #[serde(rename = "componentType")]
    pub component_type: u32,
    pub count: u64,
    #[serde(rename = "type")]
    pub ty: String,
    #[serde(default)]
    pub sparse: Option<serde_json::Value>,
    #[serde(default)]
    pub normalized: bool,
}

#[derive(Debug, Deserialize)]
pub(crate) struct BufferView {
    pub buffer: usize,
    #[serde(default, rename = "byteOffset")]
    pub byte_offset: u64,
    #[serde(rename = "byteLength")]
    pub byte_length: u64,
    #[serde(default, rename = "byteStride")]
    pub byte_stride: Option<u64>,
    #[serde(default)]
    pub extensions: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Buffer {
    #[serde(default)]
    pub uri: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Animation {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub channels: Vec<Channel>,
    #[serde(default)]
    pub samplers: Vec<Sampler>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Channel {
    pub sampler: usize,
    pub target: Target,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Target {
    #[serde(default)]
    pub node: Option<usize>,
    pub path: String,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Sampler {
    pub input: usize,
    pub output: usize,
    #[serde(default = "linear")]
    pub interpolation: String,
}

fn linear() -> String {
    "LINEAR".to_owned()
}

/// Parses the JSON chunk.
pub(crate) fn root(json: &[u8]) -> Result<Root, LoadError> {
    serde_json::from_slice(json).map_err(|e| LoadError::Json { reason: e.to_string() })
}

/// Number of components of an accessor type.
fn components(ty: &str) -> Option<usize> {
    Some(match ty {
        "SCALAR" => 1,
        "VEC2" => 2,
        "VEC3" => 3,
        "VEC4" => 4,
        "MAT2" => 4,
        "MAT3" => 9,
        "MAT4" => 16,
        _ => return None,
    })
}

/// The binary data of a GLB: its binary chunk and the buffer views that
/// `EXT_meshopt_compression` compressed, decoded once.
pub(crate) struct Data<'a> {
    /// The binary chunk, if any.
    pub bin: Option<&'a [u8]>,
    /// Per buffer view: its decoded bytes when it is compressed.
    decoded: Vec<Option<Vec<u8>>>,
}

impl<'a> Data<'a> {
    /// Decodes every compressed buffer view of `root` (mode `ATTRIBUTES`,
    /// filter `NONE`, `QUATERNION` or `EXPONENTIAL`) from the binary chunk. The decoded
    /// bytes are bounded by 1 GiB and by 1024 times the binary chunk, so a
    /// hostile file cannot make the reader allocate without bound.
    ///
    /// # Errors
    /// A compressed view that is malformed or does not decode; any
    /// compressed view when the crate is built without its `meshopt`
    /// feature (the error names the feature).
    pub fn new(root: &Root, bin: Option<&'a [u8]>) -> Result<Data<'a>, LoadError> {
        let mut decoded = Vec::with_capacity(root.buffer_views.len());
        let budget = (bin.map_or(0, <[u8]>::len) as u64).saturating_mul(1024).min(1 << 30);
        let mut used = 0u64;
        for (i, view) in root.buffer_views.iter().enumerate() {
            let ext = view.extensions.as_ref().and_then(|e| e.get("EXT_meshopt_compression"));
            let Some(ext) = ext else {
                decoded.push(None);
                continue;
            };
            let path = format!("bufferViews[{i}].extensions.EXT_meshopt_compression");
            let bytes = meshopt_view(ext, bin, &path, budget.saturating_sub(used))?;
            used += bytes.len() as u64;
            decoded.push(Some(bytes));
        }
        Ok(Data { bin, decoded })
    }
}

/// The fields of an `EXT_meshopt_compression` buffer view.
#[derive(Debug, Deserialize)]
struct MeshoptView {
    #[serde(default)]
    buffer: usize,
    #[serde(default, rename = "byteOffset")]
    byte_offset: u64,
    #[serde(rename = "byteLength")]
    byte_length: u64,
    #[serde(rename = "byteStride")]
    byte_stride: u64,
    count: u64,
    mode: String,
    #[serde(default)]
    filter: Option<String>,
}

/// Decodes one compressed view into `count × byteStride` bytes, at most
/// `budget` of them.
fn meshopt_view(ext: &serde_json::Value, bin: Option<&[u8]>, path: &str, budget: u64) -> Result<Vec<u8>, LoadError> {
    let v: MeshoptView =
        serde_json::from_value(ext.clone()).map_err(|e| LoadError::gltf(path, format!("is malformed: {e}")))?;
    if v.buffer != 0 {
        return Err(LoadError::gltf(path, "data outside the GLB's binary chunk is not read"));
    }
    let bin = bin.ok_or_else(|| LoadError::gltf(path, "the GLB has no binary chunk"))?;
    let end = v.byte_offset.checked_add(v.byte_length);
    if end.is_none_or(|e| e > bin.len() as u64) {
        return Err(LoadError::gltf(
            path,
            format!("bytes {}..+{} lie outside the binary chunk", v.byte_offset, v.byte_length),
        ));
    }
    if v.mode != "ATTRIBUTES" {
        return Err(LoadError::gltf(path, format!("mode {} is not read (only ATTRIBUTES)", v.mode)));
    }
    if v.byte_stride == 0 || v.byte_stride > 256 || !v.byte_stride.is_multiple_of(4) {
        return Err(LoadError::gltf(path, format!("byteStride {} is not a multiple of 4 in [4, 256]", v.byte_stride)));
    }
    let size = v.count.checked_mul(v.byte_stride).filter(|&n| n <= budget).ok_or_else(|| {
        LoadError::gltf(path, format!("{} elements of {} bytes exceed what the file can hold", v.count, v.byte_stride))
    })?;
    let filter = match (v.filter.as_deref().unwrap_or("NONE"), v.byte_stride) {
        ("NONE", _) => Filter::None,
        ("QUATERNION", 8) => Filter::Quaternion,
        ("EXPONENTIAL", _) => Filter::Exponential,
        (other, stride) => {
            return Err(LoadError::gltf(path, format!("filter {other} with byteStride {stride} is not read")));
        }
    };
    let encoded = &bin[v.byte_offset as usize..(v.byte_offset + v.byte_length) as usize];
    decode_attributes(encoded, v.count as usize, v.byte_stride as usize, filter, size as usize)
        .map_err(|reason| LoadError::gltf(path, reason))
}

/// The filters of `EXT_meshopt_compression` that are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Filter {
    None,
    /// Unit quaternions, 16-bit components (byteStride 8).
    Quaternion,
    /// 32-bit floats as an 8-bit exponent and a 24-bit mantissa each.
    Exponential,
}

#[cfg(feature = "meshopt")]
fn decode_attributes(
    encoded: &[u8],
    count: usize,
    stride: usize,
    filter: Filter,
    size: usize,
) -> Result<Vec<u8>, String> {
    let err = |e: meshopt::Error| format!("does not decode: {e:?}");
    let mut out: Vec<u8> = match stride {
        4 => meshopt::decode_vertex_buffer::<[u8; 4]>(encoded, count).map_err(err)?.concat(),
        8 => meshopt::decode_vertex_buffer::<[u8; 8]>(encoded, count).map_err(err)?.concat(),
        12 => meshopt::decode_vertex_buffer::<[u8; 12]>(encoded, count).map_err(err)?.concat(),
        16 => meshopt::decode_vertex_buffer::<[u8; 16]>(encoded, count).map_err(err)?.concat(),
        _ => return Err(format!("byteStride {stride} is not read (4, 8, 12 or 16)")),
    };
    if filter == Filter::Exponential {
        let mut e: Vec<[u32; 1]> =
            out.chunks_exact(4).map(|c| [u32::from_le_bytes([c[0], c[1], c[2], c[3]])]).collect();
        meshopt::decode_filter_exp(&mut e);
        out = e.into_iter().flat_map(|x| x[0].to_le_bytes()).collect();
    }
    if filter == Filter::Quaternion {
        let mut q: Vec<[i16; 4]> = out
            .chunks_exact(8)
            .map(|c| std::array::from_fn(|k| i16::from_le_bytes([c[2 * k], c[2 * k + 1]])))
            .collect();
        meshopt::decode_filter_quat(&mut q);
        out = q.into_iter().flat_map(|x| x.into_iter().flat_map(i16::to_le_bytes)).collect();
    }
    debug_assert_eq!(out.len(), size);
    Ok(out)
}

#[cfg(not(feature = "meshopt"))]
fn decode_attributes(_: &[u8], _: usize, _: usize, _: Filter, _: usize) -> Result<Vec<u8>, String> {
    Err("is compressed with EXT_meshopt_compression; build crowdpatch-runtime with its `meshopt` feature to read it \
         (or bake without `--compress meshopt`)"
        .to_owned())
}

/// Bytes per component and the conversion to `f32` of a component type
/// (glTF 2.0 §3.11: normalised integers map to [0, 1] or [−1, 1]).
/// Reads one component from its bytes (normalised or not).
type ReadComponent = fn(&[u8], bool) -> f32;

fn component(component_type: u32, normalized: bool) -> Option<(usize, ReadComponent)> {
    fn f(b: &[u8], _: bool) -> f32 {
        f32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
    fn i8n(b: &[u8], n: bool) -> f32 {
        let v = f32::from(b[0] as i8);
        if n { (v / 127.0).max(-1.0) } else { v }
    }
    fn u8n(b: &[u8], n: bool) -> f32 {
        let v = f32::from(b[0]);
        if n { v / 255.0 } else { v }
    }
    fn i16n(b: &[u8], n: bool) -> f32 {
        let v = f32::from(i16::from_le_bytes([b[0], b[1]]));
        if n { (v / 32767.0).max(-1.0) } else { v }
    }
    fn u16n(b: &[u8], n: bool) -> f32 {
        let v = f32::from(u16::from_le_bytes([b[0], b[1]]));
        if n { v / 65535.0 } else { v }
    }
    Some(match (component_type, normalized) {
        (FLOAT, false) => (4, f),
        (BYTE, _) => (1, i8n),
        (UNSIGNED_BYTE, _) => (1, u8n),
        (SHORT, _) => (2, i16n),
        (UNSIGNED_SHORT, _) => (2, u16n),
        _ => return None,
    })
}

/// Where the elements of one accessor lie: bytes, first element, count,
/// stride, component size and width (components per element).
struct Layout<'b> {
    bytes: &'b [u8],
    base: usize,
    count: usize,
    stride: usize,
    size: usize,
    width: usize,
    path: String,
}

/// Checks accessor `index` of type `ty` whose component type `accept`
/// takes, and gives its elements' layout and the conversion `accept` chose.
fn layout<'b, T>(
    root: &Root,
    data: &'b Data<'_>,
    index: usize,
    ty: &str,
    accept: impl Fn(u32, bool) -> Option<(usize, T)>,
    read: &str,
) -> Result<Option<(Layout<'b>, T)>, LoadError> {
    let path = format!("accessors[{index}]");
    let a = root.accessors.get(index).ok_or_else(|| {
        LoadError::gltf(&path, format!("does not exist (the file has {} accessors)", root.accessors.len()))
    })?;
    if a.ty != ty {
        return Err(LoadError::gltf(&path, format!("has type {}, expected {ty}", a.ty)));
    }
    let Some((size, convert)) = accept(a.component_type, a.normalized) else {
        return Err(LoadError::gltf(
            &path,
            format!(
                "has component type {}{}; {read} are read",
                a.component_type,
                if a.normalized { " (normalized)" } else { "" }
            ),
        ));
    };
    if a.sparse.is_some() {
        return Err(LoadError::gltf(&path, "is sparse; sparse accessors are not read"));
    }
    let width = components(ty).unwrap_or(1);
    if a.count == 0 {
        return Ok(None);
    }
    let Some(view_index) = a.buffer_view else {
        return Err(LoadError::gltf(&path, "has no bufferView"));
    };
    let view_path = format!("bufferViews[{view_index}]");
    let view = root
        .buffer_views
        .get(view_index)
        .ok_or_else(|| LoadError::gltf(&path, format!("refers to {view_path}, which does not exist")))?;
    let element = (width * size) as u64;
    let (bytes, view_offset, view_length): (&[u8], u64, u64) =
        match data.decoded.get(view_index).and_then(Option::as_ref) {
            Some(decoded) => (decoded.as_slice(), 0, decoded.len() as u64),
            None => {
                if view.buffer != 0 || root.buffers.first().is_none_or(|b| b.uri.is_some()) {
                    return Err(LoadError::gltf(&view_path, "data outside the GLB's binary chunk is not read"));
                }
                let bin = data.bin.ok_or_else(|| LoadError::gltf(&view_path, "the GLB has no binary chunk"))?;
                (bin, view.byte_offset, view.byte_length)
            }
        };
    let stride = view.byte_stride.unwrap_or(element);
    if stride < element || stride > 252 || stride % size as u64 != 0 {
        return Err(LoadError::gltf(
            &view_path,
            format!("byteStride {stride} is invalid for {ty} of {size}-byte components"),
        ));
    }
    let view_end = view_offset.checked_add(view_length);
    if view_end.is_none_or(|e| e > bytes.len() as u64) {
        return Err(LoadError::gltf(
            &view_path,
            format!("bytes {view_offset}..+{view_length} lie outside the binary chunk of {} bytes", bytes.len()),
        ));
    }
    let needed = (a.count - 1)
        .checked_mul(stride)
        .and_then(|n| n.checked_add(element))
        .and_then(|n| n.checked_add(a.byte_offset));
    if needed.is_none_or(|n| n > view_length) {
        return Err(LoadError::gltf(
            &path,
            format!("{} elements at offset {} do not fit in {view_path} ({view_length} bytes)", a.count, a.byte_offset),
        ));
    }
    // In bounds of the data, so every conversion below fits in usize.
    let base = (view_offset + a.byte_offset) as usize;
    Ok(Some((Layout { bytes, base, count: a.count as usize, stride: stride as usize, size, width, path }, convert)))
}

/// Reads accessor `index` as `f32` elements of type `ty` (`"SCALAR"`,
/// `"VEC3"`, …), flattened, checking every bound and that every value is
/// finite. FLOAT components are read as they are; BYTE, UNSIGNED_BYTE,
/// SHORT and UNSIGNED_SHORT ones (quantised data, `KHR_mesh_quantization`)
/// as their values, or mapped to [−1, 1] / [0, 1] when `normalized`. A view
/// compressed with `EXT_meshopt_compression` is read from its decoded bytes
/// ([`Data`]).
///
/// # Errors
/// An out-of-range index, a type other than expected, an unknown component
/// type, a sparse accessor, data outside its buffer view or the binary
/// chunk, an external buffer, a non-finite value.
pub(crate) fn floats(root: &Root, data: &Data<'_>, index: usize, ty: &str) -> Result<Vec<f32>, LoadError> {
    let read = "FLOAT (5126), BYTE, UNSIGNED_BYTE, SHORT and UNSIGNED_SHORT";
    let Some((l, convert)) = layout(root, data, index, ty, component, read)? else {
        return Ok(Vec::new());
    };
    let normalized = root.accessors[index].normalized;
    let mut out = Vec::with_capacity(l.count * l.width);
    for e in 0..l.count {
        let at = l.base + e * l.stride;
        for c in 0..l.width {
            let o = at + l.size * c;
            let v = convert(&l.bytes[o..o + l.size], normalized);
            if !v.is_finite() {
                return Err(LoadError::gltf(&l.path, format!("element {e} holds the non-finite value {v}")));
            }
            out.push(v);
        }
    }
    Ok(out)
}

/// Reads accessor `index`, a SCALAR of UNSIGNED_BYTE, UNSIGNED_SHORT or
/// UNSIGNED_INT (vertex indices), each value below `bound`.
///
/// # Errors
/// As [`floats`], and a value at or above `bound` (an index past the
/// vertices).
pub(crate) fn indices(root: &Root, data: &Data<'_>, index: usize, bound: u32) -> Result<Vec<u32>, LoadError> {
    type ReadIndex = fn(&[u8]) -> u32;
    let accept = |component_type: u32, normalized: bool| -> Option<(usize, ReadIndex)> {
        Some(match (component_type, normalized) {
            (UNSIGNED_BYTE, false) => (1, |b| u32::from(b[0])),
            (UNSIGNED_SHORT, false) => (2, |b| u32::from(u16::from_le_bytes([b[0], b[1]]))),
            (UNSIGNED_INT, false) => (4, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            _ => return None,
        })
    };
    let read = "UNSIGNED_BYTE, UNSIGNED_SHORT and UNSIGNED_INT (5125)";
    let Some((l, convert)) = layout(root, data, index, "SCALAR", accept, read)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::with_capacity(l.count);
    for e in 0..l.count {
        let at = l.base + e * l.stride;
        let v = convert(&l.bytes[at..at + l.size]);
        if v >= bound {
            return Err(LoadError::gltf(&l.path, format!("element {e} is {v}, past the {bound} vertices")));
        }
        out.push(v);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glb(json: &str, bin: &[u8]) -> Vec<u8> {
        let mut j = json.as_bytes().to_vec();
        while !j.len().is_multiple_of(4) {
            j.push(b' ');
        }
        let mut out = Vec::new();
        let total = 12 + 8 + j.len() + if bin.is_empty() { 0 } else { 8 + bin.len() };
        out.extend(MAGIC.to_le_bytes());
        out.extend(2u32.to_le_bytes());
        out.extend((total as u32).to_le_bytes());
        out.extend((j.len() as u32).to_le_bytes());
        out.extend(CHUNK_JSON.to_le_bytes());
        out.extend(j);
        if !bin.is_empty() {
            out.extend((bin.len() as u32).to_le_bytes());
            out.extend(CHUNK_BIN.to_le_bytes());
            out.extend(bin);
        }
        out
    }

    #[test]
    fn reads_strided_floats_and_rejects_out_of_bounds() {
        let bin: Vec<u8> = [1.0f32, 2.0, 9.0, 3.0, 4.0, 9.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        let json = r#"{"asset":{"version":"2.0"},"buffers":[{"byteLength":24}],
            "bufferViews":[{"buffer":0,"byteLength":24,"byteStride":12}],
            "accessors":[{"bufferView":0,"componentType":5126,"count":2,"type":"VEC2"},
                         {"bufferView":0,"componentType":5126,"count":3,"type":"VEC2"},
                         {"bufferView":0,"byteOffset":4294967296,"componentType":5126,"count":1,"type":"VEC2"}]}"#;
        let file = glb(json, &bin);
        let c = container(&file).unwrap();
        let r = root(c.json).unwrap();
        let d = Data::new(&r, c.bin).unwrap();
        assert_eq!(floats(&r, &d, 0, "VEC2").unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
        assert!(matches!(floats(&r, &d, 1, "VEC2"), Err(LoadError::Gltf { .. })));
        assert!(matches!(floats(&r, &d, 2, "VEC2"), Err(LoadError::Gltf { .. })));
        assert!(matches!(floats(&r, &d, 0, "VEC3"), Err(LoadError::Gltf { .. })));
        assert!(matches!(floats(&r, &d, 7, "VEC2"), Err(LoadError::Gltf { .. })));
    }

    #[test]
    fn reads_normalised_shorts_and_refuses_unknown_components() {
        let bin: Vec<u8> = [32767i16, -32767, 0, -32768].iter().flat_map(|v| v.to_le_bytes()).collect();
        let json = r#"{"asset":{"version":"2.0"},"buffers":[{"byteLength":8}],
            "bufferViews":[{"buffer":0,"byteLength":8}],
            "accessors":[{"bufferView":0,"componentType":5122,"normalized":true,"count":1,"type":"VEC4"},
                         {"bufferView":0,"componentType":5122,"count":1,"type":"VEC4"},
                         {"bufferView":0,"componentType":5125,"count":1,"type":"VEC2"}]}"#;
        let file = glb(json, &bin);
        let c = container(&file).unwrap();
        let r = root(c.json).unwrap();
        let d = Data::new(&r, c.bin).unwrap();
        assert_eq!(floats(&r, &d, 0, "VEC4").unwrap(), vec![1.0, -1.0, 0.0, -1.0]);
        assert_eq!(floats(&r, &d, 1, "VEC4").unwrap(), vec![32767.0, -32767.0, 0.0, -32768.0]);
        let e = floats(&r, &d, 2, "VEC2").unwrap_err().to_string();
        assert!(e.contains("accessors[2]") && e.contains("5125"), "{e}");
    }

    #[cfg(feature = "meshopt")]
    #[test]
    fn reads_views_through_the_exponential_filter() {
        let values: Vec<[f32; 3]> = vec![[0.0, 0.93, -1.5e-3], [3.9, 0.0, -12.25], [1e-7, -2.0, 0.5]];
        let filtered = meshopt::encode_filter_exp(&values, 24, meshopt::EncodeExpMode::SharedVector);
        let mut decoded = filtered.clone();
        meshopt::decode_filter_exp(&mut decoded);
        let want: Vec<f32> = decoded.iter().flatten().map(|&b| f32::from_bits(b)).collect();
        let encoded = meshopt::encode_vertex_buffer_level(&filtered, 2, Some(0)).unwrap();
        let mut bin = encoded.clone();
        while !bin.len().is_multiple_of(4) {
            bin.push(0);
        }
        let json = format!(
            r#"{{"asset":{{"version":"2.0"}},"buffers":[{{"byteLength":{}}},{{"byteLength":36}}],
            "bufferViews":[{{"buffer":1,"byteLength":36,"extensions":{{"EXT_meshopt_compression":
                {{"buffer":0,"byteOffset":0,"byteLength":{},"byteStride":12,"count":3,"mode":"ATTRIBUTES","filter":"EXPONENTIAL"}}}}}}],
            "accessors":[{{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3"}}]}}"#,
            bin.len(),
            encoded.len()
        );
        let file = glb(&json, &bin);
        let c = container(&file).unwrap();
        let r = root(c.json).unwrap();
        let d = Data::new(&r, c.bin).unwrap();
        let got = floats(&r, &d, 0, "VEC3").unwrap();
        assert_eq!(got, want);
        // Within 2⁻²³ of each vector's largest component.
        for (g, v) in got.chunks_exact(3).zip(&values) {
            let scale = v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
            assert!(g.iter().zip(v).all(|(a, b)| (a - b).abs() <= scale * 2e-7), "{g:?} vs {v:?}");
        }
    }

    #[test]
    fn container_errors_name_the_problem() {
        assert!(matches!(container(b"PK\x03\x04 zip file"), Err(LoadError::Container { .. })));
        let file = glb(r#"{"asset":{"version":"2.0"}}"#, &[]);
        assert!(container(&file).is_ok());
        for cut in 0..file.len() {
            assert!(container(&file[..cut]).is_err(), "cut at {cut}");
        }
        let msg = container(b"PK\x03\x04 zip file").err().unwrap().to_string();
        assert!(msg.contains("magic"), "{msg}");
    }
}
