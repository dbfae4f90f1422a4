//! `EXT_meshopt_compression` of the animation data: each animation buffer
//! view (one per element size, see [`crate::builder::ViewKind`]) becomes one
//! meshoptimizer attribute stream (codec version 0, the one the extension
//! specifies), stored in the GLB's binary chunk (buffer 0); the views keep
//! their uncompressed layout in a second buffer with no data (the
//! extension's `fallback`), which players that decode the extension never
//! read. Other views are copied as they are. The extension is required.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::error::ExportError;
use crate::options::Compression;

/// Rewrites the JSON chunk and the binary chunk (`bin`, the views laid out
/// in order, as `views`) with the animation views compressed; `size_of`
/// gives the element size of each animation view (by view index). Views of
/// 8-byte elements hold joint rotations (normalised shorts, already as
/// [`played_rotation`] makes them): they take the QUATERNION filter.
pub(crate) fn compress(
    root: &mut Value,
    size_of: &BTreeMap<usize, usize>,
    views: &[Vec<u8>],
    bin: Vec<u8>,
) -> Result<Vec<u8>, ExportError> {
    let mut out = Vec::new();
    let mut fallback_offset = 0usize;
    for (i, data) in views.iter().enumerate() {
        let view = &mut root["bufferViews"][i];
        while !out.len().is_multiple_of(4) {
            out.push(0);
        }
        match size_of.get(&i) {
            Some(&size) if size % 4 == 0 && !data.is_empty() => {
                let encoded = encode(data, size).map_err(|reason| ExportError::Compression { view: i, reason })?;
                if std::env::var_os("CP_DEBUG").is_some() {
                    eprintln!("view {i} size {size}: {} -> {} bytes", data.len(), encoded.len());
                }
                view["buffer"] = json!(1);
                view["byteOffset"] = json!(fallback_offset);
                let mut ext = json!({
                    "buffer": 0,
                    "byteOffset": out.len(),
                    "byteLength": encoded.len(),
                    "byteStride": size,
                    "count": data.len() / size,
                    "mode": "ATTRIBUTES",
                });
                if size == 8 {
                    ext["filter"] = json!("QUATERNION");
                }
                view["extensions"] = json!({ "EXT_meshopt_compression": ext });
                out.extend_from_slice(&encoded);
            }
            _ => {
                view["byteOffset"] = json!(out.len());
                out.extend_from_slice(data);
            }
        }
        fallback_offset += data.len();
    }
    while !out.len().is_multiple_of(4) {
        out.push(0);
    }
    root["buffers"] = json!([
        {"byteLength": out.len()},
        {"byteLength": bin.len(), "extensions": {"EXT_meshopt_compression": {"fallback": true}}},
    ]);
    for key in ["extensionsUsed", "extensionsRequired"] {
        let list = root[key].as_array().cloned().unwrap_or_default();
        let mut list: Vec<Value> = list.into_iter().filter(|v| v != "EXT_meshopt_compression").collect();
        list.push(json!("EXT_meshopt_compression"));
        root[key] = Value::Array(list);
    }
    Ok(out)
}

/// The normalised 16-bit rotation a player decodes for a baked rotation
/// under `compression`: quantised (glTF 2.0 §3.11), and with
/// `EXT_meshopt_compression` also through the extension's QUATERNION filter
/// (16 bits), so that the key reduction measures what is played.
pub(crate) fn played_rotation(compression: Compression) -> fn([f32; 4]) -> [i16; 4] {
    match compression {
        Compression::None => crate::keys::quantise,
        Compression::Meshopt => filtered,
    }
}

/// Bits per component of the QUATERNION filter.
const QUATERNION_BITS: i32 = 16;

/// Through the filter until the shorts no longer change (a fixed point, so
/// that encoding the stored shorts again gives them back exactly).
#[cfg(feature = "meshopt")]
fn filtered(q: [f32; 4]) -> [i16; 4] {
    let mut s = crate::keys::quantise(q);
    for _ in 0..8 {
        let mut e = meshopt::encode_filter_quat(&[s.map(|c| f32::from(c) / 32767.0)], QUATERNION_BITS);
        meshopt::decode_filter_quat(&mut e);
        if e[0] == s {
            break;
        }
        s = e[0];
    }
    s
}

#[cfg(not(feature = "meshopt"))]
fn filtered(q: [f32; 4]) -> [i16; 4] {
    crate::keys::quantise(q)
}

#[cfg(feature = "meshopt")]
fn encode(data: &[u8], size: usize) -> Result<Vec<u8>, String> {
    fn go<const N: usize>(data: &[u8]) -> Result<Vec<u8>, String> {
        let elements: Vec<[u8; N]> = data.chunks_exact(N).map(|c| c.try_into().unwrap_or([0; N])).collect();
        meshopt::encode_vertex_buffer_level(&elements, 2, Some(0)).map_err(|e| format!("{e:?}"))
    }
    match size {
        4 => go::<4>(data),
        8 => {
            // Rotations: the QUATERNION filter's encoding of the values,
            // which decodes to the same shorts (they went through it).
            let q: Vec<[f32; 4]> = data
                .chunks_exact(8)
                .map(|c| std::array::from_fn(|k| f32::from(i16::from_le_bytes([c[2 * k], c[2 * k + 1]])) / 32767.0))
                .collect();
            let filtered = meshopt::encode_filter_quat(&q, QUATERNION_BITS);
            let mut back = filtered.clone();
            meshopt::decode_filter_quat(&mut back);
            let same = back.iter().flatten().flat_map(|c| c.to_le_bytes()).eq(data.iter().copied());
            if !same {
                return Err("rotations do not survive the QUATERNION filter unchanged".into());
            }
            meshopt::encode_vertex_buffer_level(&filtered, 2, Some(0)).map_err(|e| format!("{e:?}"))
        }
        12 => go::<12>(data),
        16 => go::<16>(data),
        64 => go::<64>(data),
        _ => Err(format!("element size {size} is not encoded")),
    }
}

#[cfg(not(feature = "meshopt"))]
fn encode(_: &[u8], _: usize) -> Result<Vec<u8>, String> {
    Err("built without the `meshopt` feature".into())
}
