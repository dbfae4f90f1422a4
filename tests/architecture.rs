//! The architecture holds: no module of any crate of the workspace imports,
//! directly or through others, a module that imports it back; and the core
//! library's normal dependencies hold no command-line, progress or exporter
//! crate.
//!
//! The core's modules stand on layers ([`CORE_LAYERS`], bottom first): a
//! module imports only from its own layer and the layers below it, every
//! `pub mod` of `src/lib.rs` is in a layer, in `lib.rs`'s module table and in
//! docs/design.md's module map.
//!
//! A module is a source file (`mod.rs`, `lib.rs` and `main.rs` stand for
//! their folder). It imports another when it names it in a path: `crate::a::b`,
//! `super::x`, `self::c::` or a child declared with `mod c;` used as `c::`
//! (re-exports count). Test modules (`#[cfg(test)] mod tests`) and comments
//! are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// Module path (`a::b`) → file, for a crate's `src/`.
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                let rel = p.strip_prefix(src).unwrap().with_extension("");
                let mut parts: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
                if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
                    parts.pop();
                }
                out.insert(parts.join("::"), p);
            }
        }
    }
    out
}

/// The code of a file without comments and test modules.
fn code(text: &str) -> String {
    let mut t = text.to_string();
    for marker in ["#[cfg(test)]\nmod tests", "#[cfg(test)]\npub(crate) mod tests", "#[cfg(test)]\npub mod tests"] {
        if let Some(i) = t.find(marker) {
            t.truncate(i);
        }
    }
    t.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Every path that starts with `prefix` (e.g. `crate::`), as the segments
/// after it, expanding one level of `{a, b::c}` groups.
fn paths_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = code[from..].find(prefix) {
        let start = from + i;
        from = start + prefix.len();
        if code[..start].chars().last().is_some_and(|c| is_ident(c) || c == ':') {
            continue;
        }
        let rest = &code[from..];
        let mut segs = Vec::new();
        let mut k = 0;
        loop {
            let ident: String = rest[k..].chars().take_while(|&c| is_ident(c)).collect();
            if ident.is_empty() {
                break;
            }
            k += ident.len();
            segs.push(ident);
            if rest[k..].starts_with("::") {
                k += 2;
            } else {
                break;
            }
        }
        if rest[k..].starts_with('{') {
            let end = rest[k..].find('}').map_or(rest.len(), |e| k + e);
            for item in rest[k + 1..end].split(',') {
                let item: String = item.trim().chars().take_while(|&c| is_ident(c) || c == ':').collect();
                let mut s = segs.clone();
                s.extend(item.split("::").filter(|x| !x.is_empty()).map(str::to_string));
                out.push(s);
            }
        } else {
            out.push(segs);
        }
    }
    out
}

/// The longest module named by a path's leading segments.
fn resolve(mods: &BTreeMap<String, PathBuf>, base: &[String], segs: &[String]) -> Option<String> {
    let mut best = None;
    for n in 0..=segs.len() {
        let mut full: Vec<String> = base.to_vec();
        full.extend(segs[..n].iter().cloned());
        let name = full.join("::");
        if mods.contains_key(&name) {
            best = Some(name);
        }
    }
    best
}

fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mods = modules(src);
    let mut g = BTreeMap::new();
    for (m, file) in &mods {
        let c = code(&std::fs::read_to_string(file).unwrap());
        let me: Vec<String> = if m.is_empty() { vec![] } else { m.split("::").map(str::to_string).collect() };
        let parent = &me[..me.len().saturating_sub(1)];
        let mut deps = BTreeSet::new();
        for segs in paths_after(&c, "crate::") {
            deps.extend(resolve(&mods, &[], &segs));
        }
        for segs in paths_after(&c, "super::") {
            deps.extend(resolve(&mods, parent, &segs));
        }
        for segs in paths_after(&c, "self::") {
            deps.extend(resolve(&mods, &me, &segs));
        }
        // Children declared here and used by a bare path.
        for line in c.lines() {
            let l = line.trim_start();
            let l = l.strip_prefix("pub ").or_else(|| l.strip_prefix("pub(crate) ")).unwrap_or(l);
            if let Some(name) = l.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
                let child = if m.is_empty() { name.to_string() } else { format!("{m}::{name}") };
                let used = paths_after(&c, &format!("{name}::")).into_iter().next().is_some();
                if mods.contains_key(&child) && used {
                    deps.insert(child);
                }
            }
        }
        deps.remove(m);
        g.insert(m.clone(), deps);
    }
    g
}

/// A cycle of `g`, if any (depth-first search).
fn cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        v: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(v.to_string(), 1);
        stack.push(v.to_string());
        for w in g.get(v).into_iter().flatten() {
            match state.get(w.as_str()).copied().unwrap_or(0) {
                0 => {
                    if let Some(c) = visit(w, g, state, stack) {
                        return Some(c);
                    }
                }
                1 => {
                    let i = stack.iter().position(|x| x == w).unwrap();
                    let mut c = stack[i..].to_vec();
                    c.push(w.clone());
                    return Some(c);
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(v.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for v in g.keys() {
        if state.get(v.as_str()).copied().unwrap_or(0) == 0
            && let Some(c) = visit(v, g, &mut state, &mut Vec::new())
        {
            return Some(c);
        }
    }
    None
}

/// The core's layers, bottom first: top-level modules of `src/` (docs/design.md
/// "Layout"). A module may import from its own layer and those below.
const CORE_LAYERS: &[(&str, &[&str])] = &[
    (
        "kernels",
        &["geometry", "stats", "tridiagonal", "broadphase", "field_path", "io", "figures", "pedestrians", "pace"],
    ),
    ("documents", &["model", "problem", "limits", "validate", "document"]),
    ("paths", &["path", "proximity"]),
    ("stages", &["matching", "initial_paths", "collision", "smoothing"]),
    ("measures", &["realism", "metrics"]),
    ("characters", &["character"]),
    ("footsteps", &["footsteps"]),
    ("animation", &["animation"]),
    ("bake", &["baked", "bake", "report"]),
    ("tools", &["generate", "compose", "bench"]),
];

/// The layer index of a module path (`a::b` → the layer of `a`); `None` for
/// the crate root or a module in no layer.
fn layer_of(layers: &[(&str, &[&str])], module: &str) -> Option<usize> {
    let top = module.split("::").next()?;
    layers.iter().position(|(_, mods)| mods.contains(&top))
}

/// Every import that runs upwards, as `from (layer) -> to (layer)`, and every
/// top-level module that is in no layer.
fn layer_violations(g: &BTreeMap<String, BTreeSet<String>>, layers: &[(&str, &[&str])]) -> Vec<String> {
    let mut out = Vec::new();
    for (m, deps) in g {
        if m.is_empty() {
            continue;
        }
        let Some(lm) = layer_of(layers, m) else {
            if !m.contains("::") {
                out.push(format!("module {m} is in no layer of CORE_LAYERS"));
            }
            continue;
        };
        for d in deps {
            if let Some(ld) = layer_of(layers, d)
                && ld > lm
            {
                out.push(format!("{m} ({}) imports {d} ({}), a layer above it", layers[lm].0, layers[ld].0));
            }
        }
    }
    out
}

/// The `pub mod NAME;` declarations of a crate root.
fn pub_mods(lib: &str) -> Vec<String> {
    lib.lines().filter_map(|l| l.trim_start().strip_prefix("pub mod ")?.strip_suffix(';').map(str::to_string)).collect()
}

#[test]
fn the_cores_modules_import_only_from_their_layer_and_below() {
    let g = graph(&workspace().join("src"));
    let bad = layer_violations(&g, CORE_LAYERS);
    assert!(bad.is_empty(), "layers broken:\n{}", bad.join("\n"));
    // Every layer's modules exist.
    for (layer, mods) in CORE_LAYERS {
        for m in *mods {
            assert!(g.contains_key(*m), "layer {layer} names {m}, which src/ does not hold");
        }
    }
}

#[test]
fn the_layer_check_sees_an_upward_import_and_a_module_in_no_layer() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("low")).unwrap();
    std::fs::write(dir.path().join("lib.rs"), "pub mod low;\npub mod high;\n").unwrap();
    std::fs::write(dir.path().join("low/mod.rs"), "pub mod inner;\n").unwrap();
    std::fs::write(dir.path().join("low/inner.rs"), "// crate::high is only named here\npub struct X;\n").unwrap();
    std::fs::write(dir.path().join("high.rs"), "use crate::low::inner::X;\npub struct Y;\n").unwrap();
    let layers: &[(&str, &[&str])] = &[("bottom", &["low"]), ("top", &["high"])];
    assert_eq!(layer_violations(&graph(dir.path()), layers), Vec::<String>::new());
    // A planted upward import, in a nested module and through a `{…}` group.
    std::fs::write(dir.path().join("low/inner.rs"), "use crate::{high::Y};\npub struct X;\n").unwrap();
    let bad = layer_violations(&graph(dir.path()), layers);
    assert_eq!(bad, vec!["low::inner (bottom) imports high (top), a layer above it".to_string()]);
    // A module in no layer.
    std::fs::write(dir.path().join("stray.rs"), "pub struct Z;\n").unwrap();
    let bad = layer_violations(&graph(dir.path()), layers);
    assert!(bad.iter().any(|b| b == "module stray is in no layer of CORE_LAYERS"), "{bad:?}");
}

/// The `pub mod`s of `lib` that its module table (`//! | … | [`NAME`] …`)
/// does not name.
fn missing_from_table(lib: &str) -> Vec<String> {
    let table: String = lib.lines().filter(|l| l.starts_with("//! |")).collect::<Vec<_>>().join("\n");
    pub_mods(lib)
        .into_iter()
        .filter(|m| !table.contains(&format!("[`{m}`]")) && !table.contains(&format!("[`{m}`](")))
        .collect()
}

#[test]
fn every_module_of_the_core_is_in_the_lib_table_the_layers_and_the_design_map() {
    let lib = std::fs::read_to_string(workspace().join("src/lib.rs")).unwrap();
    let mods = pub_mods(&lib);
    assert!(mods.len() > 20, "only {} pub mods found in src/lib.rs", mods.len());
    assert_eq!(missing_from_table(&lib), Vec::<String>::new(), "pub mods missing from src/lib.rs's module table");
    let layered: BTreeSet<&str> = CORE_LAYERS.iter().flat_map(|(_, m)| m.iter().copied()).collect();
    let declared: BTreeSet<&str> = mods.iter().map(String::as_str).collect();
    assert_eq!(declared, layered, "src/lib.rs's pub mods and CORE_LAYERS differ");
    // docs/design.md's module map: the table after "**Modules of the core**".
    let design = std::fs::read_to_string(workspace().join("docs/design.md")).unwrap();
    let from = design.find("**Modules of the core**").expect("docs/design.md has its module map");
    let map = &design[from..];
    let map = &map[..map.find("\n\n**").unwrap_or(map.len())];
    let mapped: BTreeSet<&str> = map.lines().filter_map(|l| l.strip_prefix("| `")?.split('`').next()).collect();
    assert_eq!(mapped, declared, "docs/design.md's module map and src/lib.rs's pub mods differ");
}

#[test]
fn the_table_check_sees_a_missing_module() {
    let lib =
        "//! | what | module |\n//! | a | [`alpha`] |\n//! | b | [`beta`](mod@beta) |\npub mod alpha;\npub mod beta;\n";
    assert_eq!(missing_from_table(lib), Vec::<String>::new());
    let lib = format!("{lib}pub mod gamma;\n");
    assert_eq!(missing_from_table(&lib), vec!["gamma".to_string()]);
}

#[test]
fn no_module_imports_a_module_that_imports_it_back() {
    let root = workspace();
    let crates = ["src", "cli/src", "runtime/src", "exporters/gltf/src", "exporters/png/src", "editor/src"];
    let mut checked = 0;
    for dir in crates {
        let g = graph(&root.join(dir));
        checked += g.len();
        if let Some(c) = cycle(&g) {
            let names: Vec<String> = c.iter().map(|m| if m.is_empty() { "<root>".into() } else { m.clone() }).collect();
            panic!("{dir}: import cycle {}", names.join(" -> "));
        }
    }
    assert!(checked > 60, "only {checked} modules were found");
}

#[test]
fn the_cycle_check_sees_a_cycle() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("a")).unwrap();
    std::fs::write(dir.path().join("lib.rs"), "pub mod a;\npub mod b;\n").unwrap();
    std::fs::write(dir.path().join("a/mod.rs"), "mod inner;\npub use inner::X;\n").unwrap();
    std::fs::write(dir.path().join("a/inner.rs"), "use crate::b::{Y, other::Z};\npub struct X;\n").unwrap();
    std::fs::write(dir.path().join("b.rs"), "// crate::a is only named in a comment\npub struct Y;\n").unwrap();
    let g = graph(dir.path());
    assert_eq!(cycle(&g), None, "{g:?}");
    std::fs::write(dir.path().join("b.rs"), "use super::a::X;\npub struct Y;\n").unwrap();
    let c = cycle(&graph(dir.path())).expect("a -> a::inner -> b -> a");
    assert!(c.contains(&"b".to_string()) && c.contains(&"a::inner".to_string()), "{c:?}");
}

#[test]
fn the_core_library_pulls_no_command_line_progress_or_exporter_crate() {
    let manifest = std::fs::read_to_string(workspace().join("Cargo.toml")).unwrap();
    let package = &manifest[manifest.find("[package]").unwrap()..];
    let deps = &package[package.find("\n[dependencies]").unwrap()..];
    let deps = &deps[..deps[1..].find("\n[").map_or(deps.len(), |i| i + 1)];
    for name in ["clap", "indicatif", "anyhow", "rayon", "crowdpatch-gltf", "crowdpatch-png", "eframe", "egui"] {
        for line in deps.lines().filter(|l| l.starts_with(&format!("{name} ")) || l.starts_with(&format!("{name}."))) {
            assert!(line.contains("optional = true"), "the core depends on {name} by default: {line}");
        }
    }
    let features = &package[package.find("[features]").unwrap()..];
    let default = features.lines().find(|l| l.starts_with("default")).unwrap_or("default = []");
    assert!(!default.contains("clap"), "clap must stay out of the default features: {default}");
}
