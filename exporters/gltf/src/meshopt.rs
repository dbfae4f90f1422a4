//! `EXT_meshopt_compression` of the animation data: each animation buffer
//! view (one per element size, see [`crate::builder::ViewKind`]) becomes one
//! meshoptimizer attribute stream (codec version 0, the one the extension
//! specifies), stored in the GLB's binary chunk (buffer 0); the views keep
//! their uncompressed layout in a second buffer with no data (the
//! extension's `fallback`), which players that decode the extension never
//! read. Other views are copied as they are. The extension is required.
//!
//! Filters (the extension's, as gltfpack uses them), each applied only where
//! the values written are already what it decodes to ([`Played`]), so that a
//! player reads back exactly the values the key reduction measured:
//! - 8-byte elements (joint rotations, normalised shorts): QUATERNION,
//!   16 bits;
//! - 12-byte elements (translations and scales, `f32 × 3`): EXPONENTIAL,
//!   one exponent per vector, 18-bit mantissas (a step of 2⁻¹⁷ to 2⁻¹⁶ of
//!   the vector's largest component: 8 µm at the hips, 0.12 mm at 8–16 m);
//! - 4-byte elements (key times `[s]`): EXPONENTIAL, one exponent for the
//!   whole view (that of the period π, the largest time), with the fewest
//!   mantissa bits that keep the grid step at most 15 µs
//!   ([`crate::played::time_bits`]: 21 bits for π = 10 s), when π itself is
//!   a value of that grid; plain otherwise.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::error::ExportError;
use crate::played::Played;
#[cfg(feature = "meshopt")]
use crate::played::{EXPONENT_BITS, QUATERNION_BITS};

/// Rewrites the JSON (`root`) and the binary chunk (`bin`, the views laid
/// out in order, as `views`) with the animation views compressed; `size_of`
/// gives the element size of each animation view (by view index), `played`
/// the filters the values went through. Returns the new binary chunk.
///
/// # Errors
/// [`ExportError::Compression`] when a view does not encode, or when its
/// values are not what the filter decodes to (a bug).
pub(crate) fn compress(
    root: &mut Value,
    size_of: &BTreeMap<usize, usize>,
    views: &[Vec<u8>],
    bin: Vec<u8>,
    played: &Played,
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
                let filter = match size {
                    8 => Filter::Quaternion,
                    12 => Filter::Exponential(Shared::Vector),
                    4 => match played.time_filter_bits() {
                        Some(bits) => Filter::Exponential(Shared::Component(bits)),
                        None => Filter::None,
                    },
                    _ => Filter::None,
                };
                let encoded =
                    encode(data, size, filter).map_err(|reason| ExportError::Compression { view: i, reason })?;
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
                match filter {
                    Filter::None => {}
                    Filter::Quaternion => ext["filter"] = json!("QUATERNION"),
                    Filter::Exponential(_) => ext["filter"] = json!("EXPONENTIAL"),
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

/// A filter of the extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Filter {
    None,
    Quaternion,
    Exponential(Shared),
}

/// Which values share an exponent under the EXPONENTIAL filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shared {
    /// The components of one vector.
    Vector,
    /// Each component over the whole view, with this many mantissa bits.
    Component(i32),
}

/// Encodes one view of `size`-byte elements through `filter`, checking that
/// the filter gives the stored bytes back exactly.
#[cfg(feature = "meshopt")]
fn encode(data: &[u8], size: usize, filter: Filter) -> Result<Vec<u8>, String> {
    fn go<const N: usize>(data: &[u8]) -> Result<Vec<u8>, String> {
        let elements: Vec<[u8; N]> = data.chunks_exact(N).map(|c| c.try_into().unwrap_or([0; N])).collect();
        meshopt::encode_vertex_buffer_level(&elements, 2, Some(0)).map_err(|e| format!("{e:?}"))
    }
    fn floats<const N: usize>(data: &[u8]) -> Vec<[f32; N]> {
        data.chunks_exact(4 * N)
            .map(|c| std::array::from_fn(|k| f32::from_le_bytes([c[4 * k], c[4 * k + 1], c[4 * k + 2], c[4 * k + 3]])))
            .collect()
    }
    fn exponential<const N: usize>(data: &[u8], bits: i32, mode: meshopt::EncodeExpMode) -> Result<Vec<u8>, String> {
        let filtered = meshopt::encode_filter_exp(&floats::<N>(data), bits, mode);
        let mut back = filtered.clone();
        meshopt::decode_filter_exp(&mut back);
        if !back.iter().flatten().flat_map(|c| c.to_le_bytes()).eq(data.iter().copied()) {
            return Err("values do not survive the EXPONENTIAL filter unchanged".into());
        }
        meshopt::encode_vertex_buffer_level(&filtered, 2, Some(0)).map_err(|e| format!("{e:?}"))
    }
    match (size, filter) {
        (8, Filter::Quaternion) => {
            // The QUATERNION filter's encoding of the values, which decodes
            // to the same shorts (they went through it).
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
        (12, Filter::Exponential(Shared::Vector)) => {
            exponential::<3>(data, EXPONENT_BITS, meshopt::EncodeExpMode::SharedVector)
        }
        (4, Filter::Exponential(Shared::Component(bits))) => {
            exponential::<1>(data, bits, meshopt::EncodeExpMode::SharedComponent)
        }
        (4, Filter::None) => go::<4>(data),
        (8, Filter::None) => go::<8>(data),
        (12, Filter::None) => go::<12>(data),
        (16, Filter::None) => go::<16>(data),
        (64, Filter::None) => go::<64>(data),
        _ => Err(format!("element size {size} is not encoded with {filter:?}")),
    }
}

#[cfg(not(feature = "meshopt"))]
fn encode(_: &[u8], _: usize, _: Filter) -> Result<Vec<u8>, String> {
    Err("built without the `meshopt` feature".into())
}
