//! Reading a glTF 2.0 file as it comes: a binary `.glb`, or a `.gltf` whose
//! buffers are embedded as base64 `data:` URIs or sit beside it as files.
//! Extensions that change how geometry is stored (Draco, meshopt,
//! quantization) are refused by name before anything else; extensions that
//! only change how things look are ignored. Every accessor the importer may
//! read is checked against its buffer first, so a truncated or hostile file
//! is refused, never read out of bounds.

use base64::Engine as _;
use std::path::Path;

/// Largest file or buffer read `[bytes]` (1 GiB).
pub const MAX_BYTES: usize = 1 << 30;

/// Extensions that store geometry in a form this importer does not decode,
/// with what they are.
const GEOMETRY_EXTENSIONS: [(&str, &str); 4] = [
    ("KHR_draco_mesh_compression", "Draco mesh compression"),
    ("EXT_meshopt_compression", "meshopt compression"),
    ("KHR_mesh_quantization", "mesh quantization"),
    ("EXT_mesh_gpu_instancing", "GPU instancing"),
];

/// A glTF file read into memory: the document, its buffers' bytes (by
/// buffer index) and its JSON (for extensions the `gltf` crate does not
/// model, such as VRM's).
pub struct Source {
    /// The validated document.
    pub document: gltf::Document,
    /// Bytes of each buffer, by index.
    pub buffers: Vec<Vec<u8>>,
    /// The document's JSON.
    pub json: serde_json::Value,
}

impl Source {
    /// Reads glTF `bytes` (GLB or JSON); `dir` is where relative buffer URIs
    /// are looked up (`None`: they are refused).
    ///
    /// # Errors
    /// A sentence naming what is wrong: not glTF, a geometry extension, a
    /// buffer that cannot be read or is shorter than it says, an accessor
    /// out of its buffer.
    pub fn from_bytes(bytes: &[u8], dir: Option<&Path>) -> Result<Source, String> {
        if bytes.len() > MAX_BYTES {
            return Err(format!("the file is {} bytes, more than the {MAX_BYTES} read", bytes.len()));
        }
        let (json_bytes, bin) = if bytes.starts_with(b"glTF") {
            // The gltf crate subtracts the header's size from this length
            // unchecked (an overflow panic in debug builds, found by
            // fuzzing): checked here first.
            let length = bytes.get(8..12).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
            if length.is_none_or(|l| l < 12) {
                return Err(match length {
                    Some(l) => format!("not a valid GLB: its header gives a length of {l} bytes, less than its own 12"),
                    None => format!("not a valid GLB: {} bytes is too short for its header", bytes.len()),
                });
            }
            let glb = gltf::binary::Glb::from_slice(bytes).map_err(|e| format!("not a valid GLB: {e}"))?;
            (glb.json.into_owned(), glb.bin.map(|b| b.into_owned()))
        } else {
            (bytes.to_vec(), None)
        };
        let mut json: serde_json::Value = serde_json::from_slice(&json_bytes)
            .map_err(|e| format!("not a glTF file (its JSON does not parse: {e})"))?;
        refuse_geometry_extensions(&json)?;
        // Extensions required for looks only (materials, textures): the
        // importer reads none of them, so they need not be understood.
        if let Some(req) = json.get_mut("extensionsRequired").and_then(|r| r.as_array_mut()) {
            req.clear();
        }
        let root: gltf::json::Root =
            serde_json::from_value(json.clone()).map_err(|e| format!("not a valid glTF document: {e}"))?;
        check_attribute_indices(&root)?;
        let document = gltf::Document::from_json(root).map_err(|e| format!("not a valid glTF document: {e}"))?;
        let mut buffers = Vec::new();
        for b in document.buffers() {
            let data = match b.source() {
                gltf::buffer::Source::Bin => bin
                    .clone()
                    .ok_or_else(|| format!("buffer {} is the GLB binary chunk, which is missing", b.index()))?,
                gltf::buffer::Source::Uri(uri) => {
                    read_uri(uri, dir).map_err(|e| format!("buffer {}: {e}", b.index()))?
                }
            };
            if data.len() < b.length() {
                return Err(format!(
                    "buffer {} holds {} bytes but says it has {} (a truncated file?)",
                    b.index(),
                    data.len(),
                    b.length()
                ));
            }
            buffers.push(data);
        }
        check_node_tree(&document)?;
        check_accessors(&document, &buffers)?;
        check_animation_targets(&document)?;
        check_accessor_types(&document)?;
        Ok(Source { document, buffers, json })
    }

    /// Reads a glTF file (`.glb` or `.gltf`).
    ///
    /// # Errors
    /// As [`Source::from_bytes`], and an unreadable file.
    pub fn read(path: &Path) -> Result<Source, String> {
        let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
        if meta.len() > MAX_BYTES as u64 {
            return Err(format!("the file is {} bytes, more than the {MAX_BYTES} read", meta.len()));
        }
        let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
        Source::from_bytes(&bytes, path.parent())
    }

    /// The buffer lookup the `gltf` readers take.
    pub fn get<'s>(&'s self) -> impl Fn(gltf::Buffer<'_>) -> Option<&'s [u8]> + Clone {
        move |b: gltf::Buffer<'_>| self.buffers.get(b.index()).map(Vec::as_slice)
    }
}

/// Refuses a file that uses an extension storing geometry differently.
fn refuse_geometry_extensions(json: &serde_json::Value) -> Result<(), String> {
    let listed = |key: &str| -> Vec<String> {
        json.get(key)
            .and_then(|v| v.as_array())
            .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_owned)).collect())
            .unwrap_or_default()
    };
    let used: Vec<String> = listed("extensionsRequired").into_iter().chain(listed("extensionsUsed")).collect();
    for (ext, what) in GEOMETRY_EXTENSIONS {
        if used.iter().any(|u| u == ext) {
            return Err(format!(
                "uses {ext} ({what}), which crowdpatch does not read; export the character without it (e.g. \
                 `gltf-transform copy IN OUT` after `gltf-transform dedup`, or untick compression in the exporter)"
            ));
        }
    }
    Ok(())
}

/// The bytes of a buffer URI: a base64 `data:` URI, or a file relative to
/// `dir`.
fn read_uri(uri: &str, dir: Option<&Path>) -> Result<Vec<u8>, String> {
    if let Some(rest) = uri.strip_prefix("data:") {
        let (header, data) = rest.split_once(',').ok_or("a data: URI without a comma")?;
        if !header.ends_with(";base64") {
            return Err("a data: URI that is not base64".into());
        }
        if data.len() / 4 * 3 > MAX_BYTES {
            return Err("a data: URI larger than 1 GiB".into());
        }
        return base64::engine::general_purpose::STANDARD.decode(data).map_err(|e| format!("bad base64 data: {e}"));
    }
    if uri.contains("://") {
        return Err(format!("{uri}: only embedded data and files beside the glTF are read"));
    }
    let dir = dir.ok_or_else(|| format!("{uri}: an external file, and no directory to find it in"))?;
    let path = dir.join(percent_decode(uri));
    let meta = std::fs::metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    if meta.len() > MAX_BYTES as u64 {
        return Err(format!("{}: larger than 1 GiB", path.display()));
    }
    std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))
}

/// `%20` and friends of a relative URI.
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Ok(v) = u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("zz"), 16)
        {
            out.push(v);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Every accessor with a buffer view lies inside its view and buffer, has
/// at least one element, and is not sparse (the importer does not read
/// sparse data): checked once so that no read can fail half-way.
fn check_accessors(document: &gltf::Document, buffers: &[Vec<u8>]) -> Result<(), String> {
    for v in document.views() {
        let len = buffers.get(v.buffer().index()).map_or(0, Vec::len);
        if v.offset().checked_add(v.length()).is_none_or(|end| end > len) {
            return Err(format!("buffer view {} runs past the end of its buffer", v.index()));
        }
    }
    for a in document.accessors() {
        if a.count() == 0 {
            return Err(format!("accessor {} has no elements", a.index()));
        }
        let Some(view) = a.view() else { continue };
        let elem = a.size();
        let stride = view.stride().unwrap_or(elem);
        if stride < elem {
            // glTF 2.0 §3.6.2.4; the gltf crate's readers assume it (a
            // debug assertion, found by fuzzing).
            return Err(format!(
                "accessor {} has {elem}-byte elements but its buffer view {} has byteStride {stride}",
                a.index(),
                view.index()
            ));
        }
        let end = (a.count() - 1)
            .checked_mul(stride)
            .and_then(|x| x.checked_add(a.offset()))
            .and_then(|x| x.checked_add(elem));
        if end.is_none_or(|e| e > view.length()) {
            return Err(format!("accessor {} runs past the end of its buffer view", a.index()));
        }
    }
    Ok(())
}

/// The nodes form a forest, as glTF 2.0 requires (§ 3.5.3, "Nodes and
/// Hierarchy": no node is the child of two nodes, none its own ancestor):
/// the `gltf` crate's validation does not check it, and a node with two
/// parents put a joint before its parent, out of bounds in forward
/// kinematics (a panic, found by fuzzing). O(nodes · depth).
fn check_node_tree(document: &gltf::Document) -> Result<(), String> {
    let n = document.nodes().count();
    let mut parent: Vec<Option<usize>> = vec![None; n];
    for node in document.nodes() {
        for c in node.children() {
            if let Some(p) = parent[c.index()] {
                return Err(format!(
                    "nodes[{}] is a child of nodes[{p}] and nodes[{}]: glTF nodes form a tree (one parent each)",
                    c.index(),
                    node.index()
                ));
            }
            parent[c.index()] = Some(node.index());
        }
    }
    for start in 0..n {
        let (mut k, mut steps) = (parent[start], 0);
        while let Some(p) = k {
            steps += 1;
            if p == start || steps > n {
                return Err(format!("nodes[{start}] is its own ancestor: glTF nodes form a tree"));
            }
            k = parent[p];
        }
    }
    Ok(())
}

/// Every mesh attribute names an accessor of the file: the `gltf` crate's
/// validation indexes the accessors by `POSITION` before it checks the
/// index (a panic, found by fuzzing).
fn check_attribute_indices(root: &gltf::json::Root) -> Result<(), String> {
    for (m, mesh) in root.meshes.iter().enumerate() {
        for (p, prim) in mesh.primitives.iter().enumerate() {
            for (semantic, index) in &prim.attributes {
                if index.value() >= root.accessors.len() {
                    let name = match semantic {
                        gltf::json::validation::Checked::Valid(s) => s.to_string(),
                        gltf::json::validation::Checked::Invalid => "?".into(),
                    };
                    return Err(format!(
                        "meshes[{m}].primitives[{p}].attributes.{name} = {} but the file has {} accessors",
                        index.value(),
                        root.accessors.len()
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Every animation channel targets a node of the file by a property glTF
/// names: the `gltf` crate's validation leaves channel targets unchecked
/// and its readers unwrap them (a panic, found by fuzzing).
fn check_animation_targets(document: &gltf::Document) -> Result<(), String> {
    let root = document.as_json();
    for (a, animation) in root.animations.iter().enumerate() {
        for (c, channel) in animation.channels.iter().enumerate() {
            let at = format!("animations[{a}].channels[{c}].target");
            let node = channel.target.node.value();
            if node >= root.nodes.len() {
                return Err(format!("{at}.node = {node} but the file has {} nodes", root.nodes.len()));
            }
            if !matches!(channel.target.path, gltf::json::validation::Checked::Valid(_)) {
                return Err(format!("{at}.path is not \"translation\", \"rotation\", \"scale\" or \"weights\""));
            }
        }
    }
    Ok(())
}

/// Every accessor the importer reads has the element type and component
/// type glTF requires of its use: the `gltf` crate's readers assume them
/// (a debug assertion, or `unreachable!` on a component type, found by
/// fuzzing), and its validation does not check them.
fn check_accessor_types(document: &gltf::Document) -> Result<(), String> {
    use gltf::Semantic;
    use gltf::accessor::{DataType as T, Dimensions as D};
    use gltf::animation::Property;
    let expect = |a: gltf::Accessor<'_>, use_: &str, dims: D, types: &[T]| -> Result<(), String> {
        if a.dimensions() == dims && types.contains(&a.data_type()) && a.sparse().is_none() {
            return Ok(());
        }
        let names: Vec<String> = types.iter().map(|t| format!("{t:?}")).collect();
        Err(format!(
            "accessor {} ({use_}) is {:?} of {:?}{}, but must be {dims:?} of {}",
            a.index(),
            a.dimensions(),
            a.data_type(),
            if a.sparse().is_some() { ", sparse" } else { "" },
            names.join(" or ")
        ))
    };
    let normalized = [T::F32, T::I8, T::U8, T::I16, T::U16];
    for skin in document.skins() {
        if let Some(a) = skin.inverse_bind_matrices() {
            expect(a, &format!("skins[{}].inverseBindMatrices", skin.index()), D::Mat4, &[T::F32])?;
        }
    }
    for mesh in document.meshes() {
        for prim in mesh.primitives() {
            let at = |what: &str| format!("meshes[{}].primitives[{}].{what}", mesh.index(), prim.index());
            for (semantic, a) in prim.attributes() {
                match semantic {
                    Semantic::Positions => expect(a, &at("POSITION"), D::Vec3, &[T::F32])?,
                    Semantic::Normals => expect(a, &at("NORMAL"), D::Vec3, &[T::F32])?,
                    Semantic::Joints(n) => expect(a, &at(&format!("JOINTS_{n}")), D::Vec4, &[T::U8, T::U16])?,
                    Semantic::Weights(n) => expect(a, &at(&format!("WEIGHTS_{n}")), D::Vec4, &[T::F32, T::U8, T::U16])?,
                    _ => {}
                }
            }
            if let Some(a) = prim.indices() {
                expect(a, &at("indices"), D::Scalar, &[T::U8, T::U16, T::U32])?;
            }
        }
    }
    for animation in document.animations() {
        for channel in animation.channels() {
            let s = channel.sampler();
            let at = |what: &str| format!("animations[{}].samplers[{}].{what}", animation.index(), s.index());
            expect(s.input(), &at("input"), D::Scalar, &[T::F32])?;
            match channel.target().property() {
                Property::Translation | Property::Scale => expect(s.output(), &at("output"), D::Vec3, &[T::F32])?,
                Property::Rotation => expect(s.output(), &at("output"), D::Vec4, &normalized)?,
                Property::MorphTargetWeights => expect(s.output(), &at("output"), D::Scalar, &normalized)?,
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_must_form_a_tree() {
        // Found by fuzzing (`fuzz/fuzz_targets/character_gltf.rs`): a
        // mutated rig whose joint was the child of two joints put it before
        // one of its parents, and forward kinematics indexed past the
        // joints computed so far (a panic).
        let json = |nodes: &str| {
            format!(r#"{{"asset": {{"version": "2.0"}}, "nodes": [{nodes}], "scenes": [{{"nodes": [0]}}]}}"#)
        };
        let tree = json(r#"{"name": "Hips", "children": [1, 2]}, {"name": "L"}, {"name": "R"}"#);
        assert!(Source::from_bytes(tree.as_bytes(), None).is_ok());
        let two = json(r#"{"name": "Hips", "children": [1, 2]}, {"name": "L", "children": [2]}, {"name": "R"}"#);
        let e = Source::from_bytes(two.as_bytes(), None).err().unwrap();
        assert_eq!(e, "nodes[2] is a child of nodes[0] and nodes[1]: glTF nodes form a tree (one parent each)");
        let cycle = json(
            r#"{"name": "Hips", "children": [1]}, {"name": "L", "children": [2]}, {"name": "R", "children": [1]}"#,
        );
        let e = Source::from_bytes(cycle.as_bytes(), None).err().unwrap();
        assert!(e.contains("a child of") || e.contains("its own ancestor"), "{e}");
        let selfish = json(r#"{"name": "Hips", "children": [0]}"#);
        let e = Source::from_bytes(selfish.as_bytes(), None).err().unwrap();
        assert!(e.contains("its own ancestor"), "{e}");
    }

    #[test]
    fn animation_channels_must_target_a_node_by_a_known_path() {
        // Found by fuzzing (character): a channel targeting node 5126 of a
        // file of one node passed the gltf crate's validation, and
        // reading its target panicked in the importer.
        let data = base64::engine::general_purpose::STANDARD.encode([0u8; 16]);
        let json = format!(
            r#"{{"asset": {{"version": "2.0"}}, "nodes": [{{"name": "Hips"}}], "scenes": [{{"nodes": [0]}}],
               "buffers": [{{"byteLength": 16, "uri": "data:application/octet-stream;base64,{data}"}}],
               "bufferViews": [{{"buffer": 0, "byteLength": 16}}],
               "accessors": [{{"bufferView": 0, "componentType": 5126, "count": 1, "type": "SCALAR", "min": [0], "max": [0]}},
                             {{"bufferView": 0, "byteOffset": 4, "componentType": 5126, "count": 1, "type": "VEC3"}}],
               "animations": [{{"samplers": [{{"input": 0, "output": 1}}],
                                "channels": [{{"sampler": 0, "target": {{"node": 0, "path": "translation"}}}}]}}]}}"#
        );
        assert!(Source::from_bytes(json.as_bytes(), None).is_ok());
        let far = json.replace(r#""node": 0, "path""#, r#""node": 5126, "path""#);
        let e = Source::from_bytes(far.as_bytes(), None).err().unwrap();
        assert_eq!(e, "animations[0].channels[0].target.node = 5126 but the file has 1 nodes");
        let bogus = json.replace(r#""path": "translation""#, r#""path": "colour""#);
        let e = Source::from_bytes(bogus.as_bytes(), None).err().unwrap();
        assert!(e.starts_with("animations[0].channels[0].target.path is not"), "{e}");
    }

    #[test]
    fn a_glb_header_length_below_its_own_size_is_refused() {
        // Found by fuzzing (character): a GLB header with length 0 overflowed
        // a subtraction in the gltf crate (a panic in debug builds).
        let mut glb = b"glTF\x02\0\0\0\0\0\0\0".to_vec();
        glb.extend_from_slice(&[0; 16]);
        let e = Source::from_bytes(&glb, None).err().unwrap();
        assert_eq!(e, "not a valid GLB: its header gives a length of 0 bytes, less than its own 12");
        let e = Source::from_bytes(b"glTF\x02\0", None).err().unwrap();
        assert_eq!(e, "not a valid GLB: 6 bytes is too short for its header");
    }

    #[test]
    fn a_stride_shorter_than_an_element_is_refused() {
        // Found by fuzzing (character): VEC4 rotations read through a view
        // of byteStride 4 failed a debug assertion in the gltf crate's
        // reader (overlapping elements without it).
        let data = base64::engine::general_purpose::STANDARD.encode([0u8; 32]);
        let json = format!(
            r#"{{"asset": {{"version": "2.0"}},
               "buffers": [{{"byteLength": 32, "uri": "data:application/octet-stream;base64,{data}"}}],
               "bufferViews": [{{"buffer": 0, "byteLength": 32, "byteStride": 16}}],
               "accessors": [{{"bufferView": 0, "componentType": 5126, "count": 2, "type": "VEC4"}}]}}"#
        );
        assert!(Source::from_bytes(json.as_bytes(), None).is_ok());
        let short = json.replace(r#""byteStride": 16"#, r#""byteStride": 4"#);
        let e = Source::from_bytes(short.as_bytes(), None).err().unwrap();
        assert_eq!(e, "accessor 0 has 16-byte elements but its buffer view 0 has byteStride 4");
    }

    #[test]
    fn mesh_attributes_must_name_an_accessor_of_the_file() {
        // Found by fuzzing (character): POSITION = 1000000000 panicked in
        // the gltf crate's own validation (it indexes before checking).
        let json =
            br#"{"asset": {"version": "2.0"}, "meshes": [{"primitives": [{"attributes": {"POSITION": 1000000000}}]}]}"#;
        let e = Source::from_bytes(json, None).err().unwrap();
        assert_eq!(e, "meshes[0].primitives[0].attributes.POSITION = 1000000000 but the file has 0 accessors");
    }

    #[test]
    fn accessors_must_have_the_types_of_their_use() {
        // Found by fuzzing (character): a skin whose inverseBindMatrices
        // accessor was not MAT4 of floats failed a debug assertion in the
        // gltf crate's reader (and read garbage without); a rotation output
        // of UNSIGNED_INT reached its `unreachable!`.
        let data = base64::engine::general_purpose::STANDARD.encode([0u8; 64]);
        let json = format!(
            r#"{{"asset": {{"version": "2.0"}}, "nodes": [{{"name": "Hips"}}], "scenes": [{{"nodes": [0]}}],
               "buffers": [{{"byteLength": 64, "uri": "data:application/octet-stream;base64,{data}"}}],
               "bufferViews": [{{"buffer": 0, "byteLength": 64}}],
               "accessors": [{{"bufferView": 0, "componentType": 5126, "count": 1, "type": "MAT4"}},
                             {{"bufferView": 0, "componentType": 5126, "count": 1, "type": "SCALAR", "min": [0], "max": [0]}},
                             {{"bufferView": 0, "componentType": 5126, "count": 1, "type": "VEC4"}}],
               "skins": [{{"joints": [0], "inverseBindMatrices": 0}}],
               "animations": [{{"samplers": [{{"input": 1, "output": 2}}],
                                "channels": [{{"sampler": 0, "target": {{"node": 0, "path": "rotation"}}}}]}}]}}"#
        );
        assert!(Source::from_bytes(json.as_bytes(), None).is_ok());
        let vec3 = json.replacen(r#""count": 1, "type": "MAT4""#, r#""count": 1, "type": "VEC3""#, 1);
        let e = Source::from_bytes(vec3.as_bytes(), None).err().unwrap();
        assert_eq!(e, "accessor 0 (skins[0].inverseBindMatrices) is Vec3 of F32, but must be Mat4 of F32");
        let u32s = json.replace(
            r#""componentType": 5126, "count": 1, "type": "VEC4""#,
            r#""componentType": 5125, "count": 1, "type": "VEC4""#,
        );
        let e = Source::from_bytes(u32s.as_bytes(), None).err().unwrap();
        assert!(e.starts_with("accessor 2 (animations[0].samplers[0].output) is Vec4 of U32"), "{e}");
    }

    #[test]
    fn geometry_extensions_are_refused_by_name() {
        let json = br#"{"asset": {"version": "2.0"}, "extensionsUsed": ["KHR_draco_mesh_compression"],
                       "extensionsRequired": ["KHR_draco_mesh_compression"]}"#;
        let e = Source::from_bytes(json, None).err().unwrap();
        assert!(e.starts_with("uses KHR_draco_mesh_compression (Draco mesh compression)"), "{e}");
        let json = br#"{"asset": {"version": "2.0"}, "extensionsUsed": ["EXT_meshopt_compression"]}"#;
        assert!(Source::from_bytes(json, None).err().unwrap().starts_with("uses EXT_meshopt_compression"));
    }

    #[test]
    fn embedded_buffers_are_decoded_and_checked() {
        let data = base64::engine::general_purpose::STANDARD.encode([0u8; 12]);
        let json = format!(
            r#"{{"asset": {{"version": "2.0"}}, "buffers": [{{"byteLength": 12, "uri": "data:application/octet-stream;base64,{data}"}}],
               "bufferViews": [{{"buffer": 0, "byteLength": 12}}],
               "accessors": [{{"bufferView": 0, "componentType": 5126, "count": 1, "type": "VEC3"}}]}}"#
        );
        let s = Source::from_bytes(json.as_bytes(), None).unwrap();
        assert_eq!(s.buffers[0].len(), 12);
        // A view longer than the buffer is refused.
        let bad = json.replace(
            r#""bufferViews": [{"buffer": 0, "byteLength": 12}]"#,
            r#""bufferViews": [{"buffer": 0, "byteLength": 16}]"#,
        );
        let e = Source::from_bytes(bad.as_bytes(), None).err().unwrap();
        assert!(e.contains("buffer view 0"), "{e}");
        // An accessor longer than its view too.
        let bad = json.replace(r#""count": 1"#, r#""count": 2"#);
        assert!(Source::from_bytes(bad.as_bytes(), None).err().unwrap().contains("accessor 0"));
        assert!(Source::from_bytes(b"not json", None).err().unwrap().starts_with("not a glTF file"));
    }

    #[test]
    fn percent_decoding_of_relative_uris() {
        assert_eq!(percent_decode("my%20model.bin"), "my model.bin");
        assert_eq!(percent_decode("a%2"), "a%2");
    }
}
