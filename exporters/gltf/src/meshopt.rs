//! `EXT_meshopt_compression` of the animation data: each animation buffer
//! view (one per element size, see [`crate::builder::ViewKind`]) becomes one
//! meshoptimizer attribute stream (codec version 0, the one the extension
//! specifies), stored in the GLB's binary chunk (buffer 0); the views keep
//! their uncompressed layout in a second buffer with no data (the
//! extension's `fallback`), which players that decode the extension never
//! read. Other views are copied as they are. The extension is required.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::builder::ViewKind;
use crate::error::ExportError;

/// Rewrites the JSON chunk and the binary chunk (`bin`, the views laid out
/// in order, as `views`) with the animation views compressed.
pub(crate) fn compress(
    json_bytes: &[u8],
    view_of: &BTreeMap<ViewKind, usize>,
    views: &[Vec<u8>],
    bin: Vec<u8>,
) -> Result<(Vec<u8>, Vec<u8>), ExportError> {
    let json_err = |source| ExportError::Json { source };
    let mut root: Value = serde_json::from_slice(json_bytes).map_err(json_err)?;
    let size_of: BTreeMap<usize, usize> = view_of
        .iter()
        .filter_map(|(kind, &v)| match kind {
            ViewKind::AnimationElements(size) => Some((v, *size)),
            _ => None,
        })
        .collect();
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
                view["buffer"] = json!(1);
                view["byteOffset"] = json!(fallback_offset);
                view["extensions"] = json!({"EXT_meshopt_compression": {
                    "buffer": 0,
                    "byteOffset": out.len(),
                    "byteLength": encoded.len(),
                    "byteStride": size,
                    "count": data.len() / size,
                    "mode": "ATTRIBUTES",
                }});
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
    let json = serde_json::to_vec(&root).map_err(json_err)?;
    Ok((json, out))
}

#[cfg(feature = "meshopt")]
fn encode(data: &[u8], size: usize) -> Result<Vec<u8>, String> {
    fn go<const N: usize>(data: &[u8]) -> Result<Vec<u8>, String> {
        let elements: Vec<[u8; N]> = data.chunks_exact(N).map(|c| c.try_into().unwrap_or([0; N])).collect();
        meshopt::encode_vertex_buffer_level(&elements, 2, Some(0)).map_err(|e| format!("{e:?}"))
    }
    match size {
        4 => go::<4>(data),
        8 => go::<8>(data),
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
