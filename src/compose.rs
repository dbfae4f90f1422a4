//! World composition (`crowdpatch compose`): from a *map* (a grid of cell
//! kinds) to the patch documents of a seamless world of tiles, or to a
//! Wang-tile set that fills any world at run time.
//!
//! **Edges.** Every edge shared by two walkable cells gets a pattern from the
//! pattern library (the balanced one whose number of entries is nearest the
//! two cells' target flow, ties and orientation drawn from the map's seed):
//! the cell south (west) of the edge holds it on its north (east) side, the
//! other cell its mirror ([`Pattern::mirror`], docs/design.md "Mirror rule"). Edges
//! to empty cells and the world's border get no pattern. Since every pattern
//! used is balanced, every patch is balanced (parity holds).
//!
//! **Distinct patches.** A cell's patch document is its kind's template
//! (obstacles, endogenous agents, solver options) with the four patterns
//! inline. Cells whose documents are equal up to a quarter turn share one
//! tile, placed rotated: the canonical document is the least, as JSON text,
//! of the four turns ([`PatchDocument::rotated`]). Each distinct document is
//! baked once and cached by its content hash ([`content_key`]).
//!
//! **Density.** A kind's `density` `[agents/m²]` sets its target flow: a
//! patch whose four sides carry `n` entries (and `n` exits) each holds on
//! average `4n · (L/u_cft) / π` agents (each crosses in about `L/u_cft`), so
//! `n = density · u_cft · π · L / 4` per side.
//!
//! **Wang tiles** ([`compose_wang`]): K patterns per edge orientation and one
//! tile per `[north, east, south, west]` colour combination (K⁴ tiles): the
//! tile `[n, e, s, w]` holds `H[n]` north, `V[e]` east, `mirror(H[s])` south
//! and `mirror(V[w])` west, so that any grid coloured edge by edge is
//! seamless; `crowdpatch_runtime::WangSet` colours edges from a seed at run
//! time.

use std::collections::BTreeMap;
use std::hash::Hasher;
use std::path::{Path, PathBuf};

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::document::{load_pattern, read_patch_document};
use crate::model::{BoundaryPoint, DEFAULT_COMFORT_SPEED, PatchDocument, Pattern, Side, SideDocument};
use crate::problem::{FieldPath, LoadError, Problem, Target};
use crowdpatch_runtime::{Cell, World};

/// The map format version this code reads.
pub const MAP_FORMAT: u32 = 1;

/// A `*.map.json` document: which kind each cell is, what each kind is, and
/// which pattern library to draw from.
///
/// ```json
/// { "format": 1, "name": "town", "size": 16.0, "period": 10.0, "seed": 7,
///   "patterns": "../patterns",
///   "kinds": { "street": { "density": 0.09 },
///              "square": { "density": 0.04, "template": "../patches/plaza.patch.json" } },
///   "legend": { "#": "street", "o": "square" },
///   "grid": [ "##o",
///             "#.#" ] }
/// ```
/// `grid` lists rows from north to south, as the map is drawn; each
/// character is a cell, looked up in `legend`; `.` and space are empty
/// cells.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MapDocument {
    /// Must be [`MAP_FORMAT`].
    pub format: u32,
    /// Optional name.
    #[serde(default)]
    pub name: Option<String>,
    /// Tile side L `[m]` `[Limit: > 0]`.
    pub size: f64,
    /// Period π `[s]` `[Limit: > 0]`.
    pub period: f64,
    /// Seed of the pattern choices; default 0.
    #[serde(default)]
    pub seed: u64,
    /// Directory of the pattern library (`*.pattern.json`), relative to the map.
    pub patterns: String,
    /// The walkable cell kinds, by name.
    pub kinds: BTreeMap<String, KindDocument>,
    /// One character per cell kind; `.` and ` ` are empty.
    pub legend: BTreeMap<char, String>,
    /// Rows from north to south.
    pub grid: Vec<String>,
}

/// A walkable cell kind of a map.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KindDocument {
    /// Mean pedestrian density to aim for `[agents/m²]` `[Limit: 0 ≤ d ≤ 2]`.
    pub density: f64,
    /// Optional patch document whose obstacles, endogenous agents, radius,
    /// comfort speed, seed and solver options the kind's patches take (its
    /// sides are replaced), relative to the map.
    #[serde(default)]
    pub template: Option<String>,
}

/// A loaded, checked map.
#[derive(Debug, Clone)]
pub struct Map {
    /// The map file.
    pub file: PathBuf,
    /// Name (the file stem by default).
    pub name: String,
    /// Tile side `[m]`.
    pub size: f64,
    /// Period `[s]`.
    pub period: f64,
    /// Seed.
    pub seed: u64,
    /// Kind names, in order.
    pub kinds: Vec<String>,
    /// Per kind: target entries per side.
    pub flow: Vec<f64>,
    /// Per kind: the template document (sides empty).
    pub templates: Vec<PatchDocument>,
    /// Balanced patterns of the library, with their files.
    pub library: Vec<(PathBuf, Pattern)>,
    /// Columns (west to east).
    pub columns: usize,
    /// Rows (south to north).
    pub rows: usize,
    /// Kind index of each cell, row-major from the south-west; `None` empty.
    pub cells: Vec<Option<usize>>,
    /// Every file the map was read from: the map, its templates and every
    /// pattern file of its library (outputs must not overwrite them).
    pub inputs: Vec<PathBuf>,
}

impl Map {
    /// The kind of cell `(i, j)`.
    pub fn kind(&self, i: usize, j: usize) -> Option<usize> {
        if i < self.columns && j < self.rows { self.cells[j * self.columns + i] } else { None }
    }
}

fn problem(file: &Path, path: FieldPath, message: impl Into<String>) -> Problem {
    Problem::new(path, Target::Document, message).in_file(Some(file.to_path_buf()))
}

/// The path of a top-level field of a map.
fn field(name: &str) -> FieldPath {
    FieldPath::new().field(name)
}

/// Loads and checks a map file, its templates and its pattern library.
///
/// # Errors
/// Every problem found, each with its file and field path: malformed JSON,
/// unknown fields, limits, rows of unequal length, legend characters without
/// a kind, unreadable templates or patterns, patterns of another L or π, a
/// library without a balanced pattern.
pub fn load_map(path: &Path) -> Result<Map, LoadError> {
    let text = crate::document::read_text(path)?;
    let doc: MapDocument = serde_json::from_str(&text)
        .map_err(|e| LoadError::Invalid { problems: vec![problem(path, FieldPath::new(), e.to_string())] })?;
    load_map_document(path, doc).map_err(|problems| LoadError::Invalid { problems: crate::problem::capped(problems) })
}

/// Largest number of cells of a map (512²). Composing costs about 1 ms and
/// 4 KB per walkable cell once its tiles are baked (linear: docs/benchmarks.md
/// "Growth"), so the largest map composes in minutes and about a gigabyte.
pub const MAX_MAP_CELLS: usize = 512 * 512;

/// Largest number of pattern files read from a map's library.
pub const MAX_LIBRARY_PATTERNS: usize = 256;

/// Largest number of cell kinds of a map (each may read a template).
pub const MAX_KINDS: usize = 64;

fn load_map_document(path: &Path, doc: MapDocument) -> Result<Map, Vec<Problem>> {
    let base = path.parent().unwrap_or(Path::new("."));
    let mut problems = header_problems(path, &doc);
    if over_limits(path, &doc, &mut problems) {
        return Err(problems);
    }
    let kinds: Vec<String> = doc.kinds.keys().cloned().collect();
    let mut inputs = vec![path.to_path_buf()];
    let mut flow = Vec::new();
    let mut templates = Vec::new();
    for (name, kind) in &doc.kinds {
        let template = load_kind(path, base, &doc, name, kind, &mut inputs, &mut problems);
        let comfort = template.comfort_speed.unwrap_or(DEFAULT_COMFORT_SPEED);
        flow.push(kind.density * comfort * doc.period * doc.size / 4.0);
        templates.push(template);
    }
    let index_of: BTreeMap<&String, usize> = kinds.iter().enumerate().map(|(k, n)| (n, k)).collect();
    for (c, kind) in &doc.legend {
        if !index_of.contains_key(kind) {
            problems.push(problem(
                path,
                field("legend").field(c.to_string()),
                format!("= {kind:?} is not one of the kinds {kinds:?}"),
            ));
        }
    }
    let (rows, columns, cells) = read_grid(path, &doc, &index_of, &mut problems);
    let library = read_library(path, base, &doc, &mut inputs, &mut problems);
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Map {
        file: path.to_path_buf(),
        name: doc.name.unwrap_or_else(|| crate::document::file_stem(path)),
        size: doc.size,
        period: doc.period,
        seed: doc.seed,
        kinds,
        flow,
        templates,
        library,
        columns,
        rows,
        cells,
        inputs,
    })
}

/// The problems of the map `doc` (read from `path`)'s format, size and
/// period.
fn header_problems(path: &Path, doc: &MapDocument) -> Vec<Problem> {
    let mut problems = Vec::new();
    if doc.format != MAP_FORMAT {
        problems.push(problem(
            path,
            field("format"),
            format!("= {} is not supported (this crowdpatch reads {MAP_FORMAT})", doc.format),
        ));
    }
    let (size, period) = (crate::validate::SIZE_RANGE, crate::validate::PERIOD_RANGE);
    if !(doc.size.is_finite() && (size.0..=size.1).contains(&doc.size)) {
        problems.push(problem(path, field("size"), format!("= {} is not in [{}, {}] [m]", doc.size, size.0, size.1)));
    }
    if !(doc.period.is_finite() && (period.0..=period.1).contains(&doc.period)) {
        problems.push(problem(
            path,
            field("period"),
            format!("= {} is not in [{}, {}] [s]", doc.period, period.0, period.1),
        ));
    }
    problems
}

/// Whether the map `doc` has more cells ([`MAX_MAP_CELLS`]) or kinds
/// ([`MAX_KINDS`]) than a map may (pushing the problem): nothing more of
/// it is read.
fn over_limits(path: &Path, doc: &MapDocument, problems: &mut Vec<Problem>) -> bool {
    let cells = doc.grid.len().saturating_mul(doc.grid.first().map_or(0, |r| r.chars().count()));
    if cells > MAX_MAP_CELLS || doc.grid.len() > MAX_MAP_CELLS {
        problems.push(problem(
            path,
            field("grid"),
            format!(
                "has {} rows of {} cells ({cells} cells); a map has at most {MAX_MAP_CELLS} (512 × 512)",
                doc.grid.len(),
                doc.grid.first().map_or(0, |r| r.chars().count())
            ),
        ));
        return true;
    }
    if doc.kinds.len() > MAX_KINDS {
        problems.push(problem(
            path,
            field("kinds"),
            format!("has {} kinds; a map has at most {MAX_KINDS}", doc.kinds.len()),
        ));
        return true;
    }
    false
}

/// The template document of kind `name` of the map `doc` (read from
/// `path`, relative files from `base`): its template file's document with
/// the sides and name left out, or an empty patch of the map's L and π.
/// Records the template file in `inputs`; pushes the kind's problems (its
/// density, its template's).
fn load_kind(
    path: &Path,
    base: &Path,
    doc: &MapDocument,
    name: &str,
    kind: &KindDocument,
    inputs: &mut Vec<PathBuf>,
    problems: &mut Vec<Problem>,
) -> PatchDocument {
    if !(kind.density.is_finite() && (0.0..=2.0).contains(&kind.density)) {
        problems.push(problem(
            path,
            field("kinds").field(name).field("density"),
            format!("= {} must be in [0, 2] [agents/m²]", kind.density),
        ));
    }
    let mut template = PatchDocument::new(doc.size, doc.period);
    if let Some(rel) = &kind.template {
        inputs.push(base.join(rel));
        match read_patch_document(&base.join(rel)) {
            Ok((t, unknown)) => {
                problems.extend(unknown);
                if t.size != doc.size || t.period != doc.period {
                    problems.push(problem(
                        path,
                        field("kinds").field(name).field("template"),
                        format!(
                            "{rel:?} has L = {} m, π = {} s but the map has L = {} m, π = {} s",
                            t.size, t.period, doc.size, doc.period
                        ),
                    ));
                }
                template = PatchDocument { sides: Default::default(), name: None, ..t };
                // Every cell of the kind copies the template: its own
                // problems (and counts) are refused here, once.
                if let Err(found) = template.resolve(Some(&base.join(rel)), base) {
                    problems.extend(found);
                }
            }
            Err(e) => problems.extend(e.problems()),
        }
    }
    template
}

/// The rows, the columns and the kind (index into `index_of`) of each cell
/// of the map `doc`'s grid, row-major from the south-west; pushes a
/// problem for an empty grid, each row of another length than the first,
/// and each character not in the legend.
fn read_grid(
    path: &Path,
    doc: &MapDocument,
    index_of: &BTreeMap<&String, usize>,
    problems: &mut Vec<Problem>,
) -> (usize, usize, Vec<Option<usize>>) {
    let rows = doc.grid.len();
    let columns = doc.grid.first().map_or(0, |r| r.chars().count());
    if rows == 0 || columns == 0 {
        problems.push(problem(path, field("grid"), "is empty; give at least one row of cells"));
    }
    let mut cells = vec![None; rows * columns];
    for (r, line) in doc.grid.iter().enumerate() {
        let j = rows - 1 - r;
        if line.chars().count() != columns {
            problems.push(problem(
                path,
                field("grid").index(r),
                format!("has {} cells but grid[0] has {columns}", line.chars().count()),
            ));
            continue;
        }
        for (i, ch) in line.chars().enumerate() {
            if ch == '.' || ch == ' ' {
                continue;
            }
            match doc.legend.get(&ch).and_then(|k| index_of.get(k)) {
                Some(&k) => cells[j * columns + i] = Some(k),
                None => problems.push(problem(
                    path,
                    field("grid").index(r).index(i),
                    format!("= {ch:?} is not in the legend (empty cells are '.')"),
                )),
            }
        }
    }
    (rows, columns, cells)
}

/// The map `doc`'s pattern library ([`load_library`]), recording its files
/// in `inputs`; pushes a problem when it cannot be read or holds no
/// balanced pattern of the map's L and π.
fn read_library(
    path: &Path,
    base: &Path,
    doc: &MapDocument,
    inputs: &mut Vec<PathBuf>,
    problems: &mut Vec<Problem>,
) -> Vec<(PathBuf, Pattern)> {
    match load_library(&base.join(&doc.patterns), doc.size, doc.period, inputs) {
        Ok(l) if l.is_empty() => {
            problems.push(problem(
                path,
                field("patterns"),
                format!("{:?} holds no balanced pattern of L = {} m, π = {} s", doc.patterns, doc.size, doc.period),
            ));
            l
        }
        Ok(l) => l,
        Err(e) => {
            problems.extend(e.problems());
            Vec::new()
        }
    }
}

/// The balanced patterns of a library directory of matching L and π, sorted
/// by file name. Unbalanced patterns (one-way flows) are left out: compose
/// keeps every patch balanced by using balanced patterns only.
fn load_library(
    dir: &Path,
    size: f64,
    period: f64,
    read: &mut Vec<PathBuf>,
) -> Result<Vec<(PathBuf, Pattern)>, LoadError> {
    let entries = std::fs::read_dir(dir).map_err(|source| LoadError::Io { file: dir.to_path_buf(), source })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".pattern.json"))
        .take(MAX_LIBRARY_PATTERNS + 1)
        .collect();
    if files.len() > MAX_LIBRARY_PATTERNS {
        return Err(LoadError::Invalid {
            problems: vec![
                Problem::new(
                    FieldPath::new(),
                    Target::Document,
                    format!("holds more than {MAX_LIBRARY_PATTERNS} pattern files, the most a map's library may"),
                )
                .in_file(Some(dir.to_path_buf())),
            ],
        });
    }
    files.sort();
    read.extend(files.iter().cloned());
    let mut out = Vec::new();
    for f in files {
        let p = load_pattern(&f)?;
        if p.is_balanced() && !p.entries.is_empty() && p.length == size && p.period == period {
            out.push((f, p));
        }
    }
    Ok(out)
}

/// The patterns an edge may carry: every library pattern and its mirror,
/// each once (a library file that is another's mirror up to rounding is
/// merged with it), with the index of each one's mirror. Mirrors are taken
/// from this table, never recomputed, so that a pattern mirrored twice is
/// the very same pattern and equal documents stay byte-equal.
#[derive(Debug, Clone)]
struct Variants {
    patterns: Vec<Pattern>,
    mirror: Vec<usize>,
}

fn same_points(a: &Pattern, b: &Pattern) -> bool {
    let close = |p: &[BoundaryPoint], q: &[BoundaryPoint]| {
        p.len() == q.len()
            && p.iter()
                .zip(q)
                .all(|(x, y)| (x.s - y.s).abs() < 1e-9 && (x.t - y.t).abs() < 1e-9 && x.velocity == y.velocity)
    };
    close(&a.entries, &b.entries) && close(&a.exits, &b.exits)
}

impl Variants {
    fn new<'a>(library: impl IntoIterator<Item = &'a Pattern>) -> Variants {
        let mut v = Variants { patterns: Vec::new(), mirror: Vec::new() };
        for p in library {
            if v.patterns.iter().any(|q| same_points(p, q)) {
                continue;
            }
            let plain = Pattern { name: None, ..p.clone() };
            let m = plain.mirror();
            let i = v.patterns.len();
            if same_points(&plain, &m) {
                v.patterns.push(plain);
                v.mirror.push(i);
            } else {
                v.patterns.push(plain);
                v.patterns.push(Pattern { name: None, ..m });
                v.mirror.extend([i + 1, i]);
            }
        }
        v
    }
}

/// The content hash of a patch document, as 16 hexadecimal digits: FNV-1a
/// (64 bit) of its JSON text and of the crowdpatch version, so that a new
/// version re-bakes. The cache stores the document beside the GLB and
/// compares it on a hit, so a hash collision can never serve a wrong tile.
pub fn content_key(doc: &PatchDocument) -> String {
    let mut h = fnv::FnvHasher::default();
    h.write(env!("CARGO_PKG_VERSION").as_bytes());
    h.write(&[0]);
    h.write(canonical_text(doc).as_bytes());
    format!("{:016x}", h.finish())
}

/// The JSON text a document is hashed and cached by (its name left out).
pub fn canonical_text(doc: &PatchDocument) -> String {
    PatchDocument { name: None, ..doc.clone() }.to_json()
}

/// A pattern placed on side `side` of a patch, as an inline side (patch-frame
/// velocities, no name).
fn inline_side(pattern: &Pattern, side: Side) -> SideDocument {
    let p = pattern.rotated(side.index() as i32);
    SideDocument { entries: Some(p.entries), exits: Some(p.exits), ..SideDocument::default() }
}

/// One distinct tile of a composition.
#[derive(Debug, Clone)]
pub struct ComposedTile {
    /// Content hash ([`content_key`]).
    pub key: String,
    /// The canonical document to bake (named after its key).
    pub document: PatchDocument,
    /// The cells showing it.
    pub cells: Vec<[usize; 2]>,
}

/// Per `[north, east, south, west]` colour combination of a Wang set, its tile.
pub type WangTiles = Vec<([usize; 4], usize)>;

/// What [`compose`] or [`compose_wang`] produce: the world grid and the
/// distinct tiles it uses (and the Wang set).
#[derive(Debug, Clone)]
pub struct Composition {
    /// The grid; `Cell::tile` indexes [`Composition::tiles`].
    pub world: World,
    /// Distinct tiles, in order of first use.
    pub tiles: Vec<ComposedTile>,
    /// The Wang set: `k` and, per `[n, e, s, w]` colour combination, its tile.
    pub wang: Option<(usize, WangTiles)>,
}

/// Builds the canonical form of `doc` and returns it with the rotation at
/// which its tile must be placed.
fn canonical(doc: &PatchDocument) -> (PatchDocument, u8) {
    let mut best: Option<(String, PatchDocument, u8)> = None;
    for q in 0..4i32 {
        let turned = doc.rotated(q);
        let text = canonical_text(&turned);
        if best.as_ref().is_none_or(|(b, _, _)| text < *b) {
            // The tile of `turned` turned back by −q shows `doc`.
            best = Some((text, turned, ((4 - q) % 4) as u8));
        }
    }
    let (_, d, r) = best.expect("four turns");
    (d, r)
}

/// Adds the document of cell `(i, j)` to the composition.
fn place(
    tiles: &mut Vec<ComposedTile>,
    index: &mut BTreeMap<String, usize>,
    world: &mut World,
    i: usize,
    j: usize,
    doc: &PatchDocument,
    dedupe_turns: bool,
) -> usize {
    let (canon, rotation) = if dedupe_turns { canonical(doc) } else { (doc.clone(), 0) };
    let key = content_key(&canon);
    let t = *index.entry(key.clone()).or_insert_with(|| {
        tiles.push(ComposedTile {
            key: key.clone(),
            document: PatchDocument { name: Some(key.clone()), ..canon },
            cells: vec![],
        });
        tiles.len() - 1
    });
    tiles[t].cells.push([i, j]);
    world.set(i, j, Some(Cell { tile: t, rotation }));
    t
}

/// The library pattern for an edge of target flow `flow` (entries per side),
/// oriented as drawn; `None` for a flow below half an entry.
fn pick(variants: &Variants, flow: f64, rng: &mut impl RngExt) -> Option<usize> {
    if flow < 0.5 {
        return None;
    }
    let score = |p: &Pattern| (p.entries.len() as f64 - flow).abs();
    let best = variants.patterns.iter().map(score).fold(f64::INFINITY, f64::min);
    let candidates: Vec<usize> =
        (0..variants.patterns.len()).filter(|&v| score(&variants.patterns[v]) <= best + 1e-9).collect();
    Some(candidates[rng.random_range(0..candidates.len())])
}

/// Composes the world of a map: assigns a pattern to every shared edge
/// (module documentation), builds each cell's document and groups equal
/// documents (up to a quarter turn) into tiles. Deterministic in the map and
/// its seed.
pub fn compose(map: &Map) -> Composition {
    let mut rng = ChaCha8Rng::seed_from_u64(map.seed);
    let variants = Variants::new(map.library.iter().map(|(_, p)| p));
    let (w, h) = (map.columns, map.rows);
    // Pattern (variant) on the north side of (i, j) and on its east side.
    let mut north: Vec<Option<usize>> = vec![None; w * h];
    let mut east: Vec<Option<usize>> = vec![None; w * h];
    for j in 0..h {
        for i in 0..w {
            let Some(a) = map.kind(i, j) else { continue };
            if let Some(b) = map.kind(i, j + 1) {
                north[j * w + i] = pick(&variants, (map.flow[a] + map.flow[b]) / 2.0, &mut rng);
            }
            if let Some(b) = map.kind(i + 1, j) {
                east[j * w + i] = pick(&variants, (map.flow[a] + map.flow[b]) / 2.0, &mut rng);
            }
        }
    }
    let mirror = |v: Option<usize>| v.map(|v| variants.mirror[v]);
    let mut world = World::new(w, h, map.size, map.period);
    let mut tiles = Vec::new();
    let mut index = BTreeMap::new();
    for j in 0..h {
        for i in 0..w {
            let Some(kind) = map.kind(i, j) else { continue };
            let mut doc = map.templates[kind].clone();
            let sides = [
                (Side::North, north[j * w + i]),
                (Side::East, east[j * w + i]),
                (Side::South, if j > 0 { mirror(north[(j - 1) * w + i]) } else { None }),
                (Side::West, if i > 0 { mirror(east[j * w + i - 1]) } else { None }),
            ];
            for (side, v) in sides {
                if let Some(v) = v {
                    *doc.sides.slot_mut(side) = Some(inline_side(&variants.patterns[v], side));
                }
            }
            place(&mut tiles, &mut index, &mut world, i, j, &doc, true);
        }
    }
    Composition { world, tiles, wang: None }
}

/// A balanced pattern of `n` entries and `n` exits drawn at random, for
/// Wang sets larger than the library: arc positions at least
/// `corner_margin` `[m]` from the side's ends (so that any two sides combine),
/// every two points at least `4r` apart in the space-time metric
/// `|Δs| + u_cft·|Δt|` (Δt periodic; the *separated* variant of docs/design.md "Benchmark protocol").
pub fn random_pattern(n: usize, size: f64, period: f64, r: f64, comfort: f64, rng: &mut impl RngExt) -> Pattern {
    let margin = (2.0 * r + 1.0).min(size / 4.0);
    let mut points: Vec<BoundaryPoint> = Vec::new();
    let mut tries = 0;
    while points.len() < 2 * n && tries < 100_000 {
        tries += 1;
        let s = rng.random_range(margin..size - margin);
        let t = rng.random_range(0.0..period);
        let far = points.iter().all(|p| {
            let dt = (p.t - t).rem_euclid(period);
            (p.s - s).abs() + comfort * dt.min(period - dt) >= 4.0 * r
        });
        if far {
            points.push(BoundaryPoint { s, t, velocity: None, group: None });
        }
    }
    let exits = points.split_off(points.len() / 2);
    Pattern { name: None, length: size, period, entries: points, exits }
}

/// Composes a Wang-tile set of `k` patterns per edge orientation (module
/// documentation): the library's balanced patterns nearest the map's mean
/// walkable flow (a pattern and its mirror count as two), completed if the
/// library holds fewer than `k` with lanes at human pace
/// ([`crate::generate::library_pattern`], walking speeds of the shipped
/// reference), or [`random_pattern`]s where lanes do not fit. Templates are not
/// used. The grid of the result is the map's rectangle filled from the set
/// with the map's seed.
///
/// # Panics
/// If `k` is 0 or above 16.
pub fn compose_wang(map: &Map, k: usize) -> Composition {
    assert!((1..=16).contains(&k), "k = {k} must be in 1..=16");
    let mut rng = ChaCha8Rng::seed_from_u64(map.seed);
    let walkable: Vec<f64> = map.cells.iter().flatten().map(|&kind| map.flow[kind]).collect();
    let flow = if walkable.is_empty() { 2.0 } else { walkable.iter().sum::<f64>() / walkable.len() as f64 };
    let library = Variants::new(map.library.iter().map(|(_, p)| p));
    let mut candidates: Vec<Pattern> = library.patterns.clone();
    candidates.sort_by(|a, b| (a.entries.len() as f64 - flow).abs().total_cmp(&(b.entries.len() as f64 - flow).abs()));
    candidates.truncate(k);
    let r = crate::model::DEFAULT_AGENT_RADIUS;
    while candidates.len() < k {
        let n = flow.round().max(1.0) as usize;
        let seed = map.seed.wrapping_add(candidates.len() as u64);
        let speeds = crate::generate::Speeds::Reference;
        let lanes = crate::generate::library_pattern(n, map.size, map.period, r, speeds, seed);
        candidates.push(
            lanes.unwrap_or_else(|_| random_pattern(n, map.size, map.period, r, DEFAULT_COMFORT_SPEED, &mut rng)),
        );
    }
    let colours = candidates;
    let mirrors: Vec<Pattern> = colours.iter().map(Pattern::mirror).collect();
    let mut tiles = Vec::new();
    let mut index = BTreeMap::new();
    let mut world = World::new(0, 0, map.size, map.period);
    let mut wang: Vec<([usize; 4], usize)> = Vec::new();
    let mut scratch = World::new(1, 1, map.size, map.period);
    for n in 0..k {
        for e in 0..k {
            for s in 0..k {
                for w in 0..k {
                    let mut doc = PatchDocument::new(map.size, map.period);
                    for (side, p) in [
                        (Side::North, colours[n].clone()),
                        (Side::East, colours[e].clone()),
                        (Side::South, mirrors[s].clone()),
                        (Side::West, mirrors[w].clone()),
                    ] {
                        *doc.sides.slot_mut(side) = Some(inline_side(&p, side));
                    }
                    let t = place(&mut tiles, &mut index, &mut scratch, 0, 0, &doc, false);
                    tiles[t].cells.clear();
                    wang.push(([n, e, s, w], t));
                }
            }
        }
    }
    let mut set = crowdpatch_runtime::WangSet::new(k);
    for &(c, t) in &wang {
        set.insert(c, t);
    }
    if map.columns > 0 && map.rows > 0 {
        world = set.fill(map.seed, [0, 0], map.columns, map.rows, map.size, map.period);
        for ([i, j], cell) in world.cells() {
            tiles[cell.tile].cells.push([i, j]);
        }
    }
    Composition { world, tiles, wang: Some((k, wang)) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crowdpatch_runtime::format::Side as S;

    fn map(grid: &[&str]) -> Map {
        let base = Path::new(env!("CARGO_MANIFEST_DIR"));
        let library = load_library(&base.join("patterns"), 16.0, 10.0, &mut Vec::new()).unwrap();
        let rows = grid.len();
        let columns = grid[0].len();
        let mut cells = vec![None; rows * columns];
        for (r, line) in grid.iter().enumerate() {
            for (i, ch) in line.chars().enumerate() {
                cells[(rows - 1 - r) * columns + i] = match ch {
                    '#' => Some(0),
                    'o' => Some(1),
                    _ => None,
                };
            }
        }
        Map {
            file: base.join("test.map.json"),
            name: "test".into(),
            size: 16.0,
            period: 10.0,
            seed: 3,
            kinds: vec!["street".into(), "lane".into()],
            flow: vec![5.0, 2.0],
            templates: vec![PatchDocument::new(16.0, 10.0), PatchDocument::new(16.0, 10.0)],
            library,
            columns,
            rows,
            cells,
            inputs: vec![],
        }
    }

    #[test]
    fn neighbours_hold_mirror_patterns_and_borders_none() {
        let m = map(&["##o.", "#.oo", "####"]);
        let c = compose(&m);
        let side_pattern = |i: usize, j: usize, side: S| -> Option<Pattern> {
            let cell = c.world.get(i, j)?;
            let doc = c.tiles[cell.tile].document.rotated(i32::from(cell.rotation));
            let patch = doc.resolve(None, Path::new(".")).unwrap();
            let p = patch.sides[side].clone();
            (!p.entries.is_empty() || !p.exits.is_empty()).then_some(p)
        };
        for j in 0..m.rows {
            for i in 0..m.columns {
                if m.kind(i, j).is_none() {
                    assert!(c.world.get(i, j).is_none());
                    continue;
                }
                let doc = c.tiles[c.world.get(i, j).unwrap().tile].document.clone();
                let patch = doc.resolve(None, Path::new(".")).expect("every composed patch validates");
                assert!(crate::validate::validate_patch(&patch).is_empty());
                for side in S::ALL {
                    let here = side_pattern(i, j, side);
                    let n = c.world.neighbour(i, j, side).filter(|&[a, b]| m.kind(a, b).is_some());
                    match n {
                        None => assert!(here.is_none(), "({i}, {j}) {side} faces nothing but has points"),
                        Some([a, b]) => {
                            let there = side_pattern(a, b, side.opposite()).expect("a walkable neighbour has points");
                            let here = here.unwrap();
                            let mirrored = there.mirror();
                            assert_eq!(here.entries.len(), mirrored.entries.len());
                            for (p, q) in here.entries.iter().zip(&mirrored.entries) {
                                assert!((p.s - q.s).abs() < 1e-9 && p.t == q.t, "({i}, {j}) {side}");
                            }
                            assert!(here.is_balanced());
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn canonical_documents_turn_back_to_the_cell() {
        let m = map(&["########"; 8]);
        let c = compose(&m);
        // Cells share tiles (up to quarter turns).
        assert!(c.tiles.len() < c.world.cells().count() / 2, "{} tiles", c.tiles.len());
        for ([i, j], cell) in c.world.cells() {
            let tile = &c.tiles[cell.tile];
            assert!(tile.cells.contains(&[i, j]));
            assert_eq!(content_key(&tile.document), tile.key);
        }
        // Deterministic.
        let again = compose(&m);
        assert_eq!(again.world, c.world);
    }

    #[test]
    fn wang_sets_are_complete() {
        let m = map(&["##", "##"]);
        let c = compose_wang(&m, 2);
        let (k, colours) = c.wang.clone().unwrap();
        assert_eq!(k, 2);
        assert_eq!(colours.len(), 16);
        assert_eq!(c.tiles.len(), 16);
        let mut seen: Vec<[usize; 4]> = colours.iter().map(|(c, _)| *c).collect();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 16);
        for t in &c.tiles {
            assert!(t.document.resolve(None, Path::new(".")).is_ok());
        }
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let p = random_pattern(4, 16.0, 10.0, 0.3, 1.33, &mut rng);
        assert_eq!((p.entries.len(), p.exits.len()), (4, 4));
    }
}
