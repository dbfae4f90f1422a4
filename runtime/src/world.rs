//! A world: a grid of tiles ([`World`]), its compatibility check
//! ([`World::check`]) and its file, `world.json` ([`WorldFile`]).
//!
//! Cell `(i, j)` is column `i` (from the west) and row `j` (from the south);
//! its square is `[iL, (i+1)L] × [jL, (j+1)L]`. A cell is empty or holds a
//! tile (an index into the world's tile list) turned by a quarter-turn
//! rotation (see [`Placement`]).

use std::fmt;

use crate::format::{BakedPattern, BakedPoint, SceneExtras, Side};
use crate::pose::Placement;

/// A tile placed in a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Cell {
    /// Index of the tile in the world's tile list.
    pub tile: usize,
    /// Quarter turns counter-clockwise `[Limit: 0..4]`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub rotation: u8,
}

/// A rectangular grid of cells, each empty or holding a [`Cell`].
#[derive(Debug, Clone, PartialEq)]
pub struct World {
    /// Tile side L `[m]`.
    pub size: f64,
    /// Period π `[s]`.
    pub period: f64,
    columns: usize,
    rows: usize,
    cells: Vec<Option<Cell>>,
}

impl World {
    /// An empty world of `columns × rows` cells of side `size` `[m]` and
    /// period `period` `[s]`.
    pub fn new(columns: usize, rows: usize, size: f64, period: f64) -> World {
        World { size, period, columns, rows, cells: vec![None; columns * rows] }
    }

    /// Number of columns (west to east).
    pub fn columns(&self) -> usize {
        self.columns
    }

    /// Number of rows (south to north).
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The cell at column `i`, row `j`; `None` when empty or outside.
    pub fn get(&self, i: usize, j: usize) -> Option<Cell> {
        if i < self.columns && j < self.rows { self.cells[j * self.columns + i] } else { None }
    }

    /// Sets the cell at column `i`, row `j`.
    ///
    /// # Panics
    /// If `(i, j)` is outside the grid.
    pub fn set(&mut self, i: usize, j: usize, cell: Option<Cell>) {
        assert!(i < self.columns && j < self.rows, "cell ({i}, {j}) outside a {}×{} world", self.columns, self.rows);
        self.cells[j * self.columns + i] = cell;
    }

    /// Every non-empty cell with its coordinates, row by row from the south.
    pub fn cells(&self) -> impl Iterator<Item = ([usize; 2], Cell)> + '_ {
        self.cells.iter().enumerate().filter_map(|(k, c)| c.map(|c| ([k % self.columns, k / self.columns], c)))
    }

    /// Where the tile of cell `(i, j)` sits.
    pub fn placement(&self, i: usize, j: usize, rotation: u8) -> Placement {
        Placement { offset: [i as f64 * self.size, j as f64 * self.size], rotation: rotation % 4 }
    }

    /// The neighbour of `(i, j)` across world side `side`, if inside the grid.
    pub fn neighbour(&self, i: usize, j: usize, side: Side) -> Option<[usize; 2]> {
        let (di, dj) = match side {
            Side::South => (0, -1),
            Side::East => (1, 0),
            Side::North => (0, 1),
            Side::West => (-1, 0),
        };
        let (ni, nj) = (i as i64 + di, j as i64 + dj);
        (ni >= 0 && nj >= 0 && (ni as usize) < self.columns && (nj as usize) < self.rows)
            .then_some([ni as usize, nj as usize])
    }

    /// Checks every shared edge of the world against the mirror rule
    /// (docs/design.md "Mirror rule"): across the edge between cells A and B, each boundary
    /// point `(s, t)` of A's side must be the point `(L − s, t)` of B's side
    /// with entry and exit swapped and the same world velocity; both tiles
    /// must have the world's L and π. A side with boundary points that faces
    /// an empty cell or the world's border is reported too
    /// ([`SeamProblem::OpenSide`]): its agents would walk into nothing.
    ///
    /// `tiles[k]` is the baked record of tile `k` ([`Tile::extras`](crate::Tile::extras)).
    /// Returns every mismatch, each with its cell, side and neighbour; empty
    /// when the world is seamless. Cost: linear in the number of boundary
    /// points, quadratic per side.
    pub fn check(&self, tiles: &[&SceneExtras]) -> Vec<Mismatch> {
        let mut out = Vec::new();
        let tol_s = 1e-6 * self.size.max(1.0);
        let tol_t = 1e-6 * self.period.max(1.0);
        let tol_v = 1e-6;
        for ([i, j], cell) in self.cells() {
            let Some(a) = tiles.get(cell.tile) else {
                out.push(Mismatch {
                    cell: [i, j],
                    side: None,
                    neighbour: None,
                    problem: SeamProblem::MissingTile { tile: cell.tile },
                });
                continue;
            };
            if a.header.size != self.size || a.header.period != self.period {
                out.push(Mismatch {
                    cell: [i, j],
                    side: None,
                    neighbour: None,
                    problem: SeamProblem::SizeOrPeriod {
                        size: a.header.size,
                        period: a.header.period,
                        world_size: self.size,
                        world_period: self.period,
                    },
                });
                continue;
            }
            for side in Side::ALL {
                let pa = world_pattern(a, side, cell.rotation);
                let neighbour = self.neighbour(i, j, side);
                let other =
                    neighbour.and_then(|[ni, nj]| self.get(ni, nj)).and_then(|c| tiles.get(c.tile).map(|t| (c, *t)));
                let Some((bc, b)) = other.filter(|(_, b)| b.header.size == self.size && b.header.period == self.period)
                else {
                    let points = pa.entries.len() + pa.exits.len();
                    if points > 0 && neighbour.and_then(|[ni, nj]| self.get(ni, nj)).is_none() {
                        out.push(Mismatch {
                            cell: [i, j],
                            side: Some(side),
                            neighbour,
                            problem: SeamProblem::OpenSide { points },
                        });
                    }
                    continue;
                };
                let pb = world_pattern(b, side.opposite(), bc.rotation);
                for (dir, mine, theirs) in
                    [(Crossing::Entry, &pa.entries, &pb.exits), (Crossing::Exit, &pa.exits, &pb.entries)]
                {
                    for (index, p) in mine.iter().enumerate() {
                        let want_s = self.size - p.s;
                        let found = theirs
                            .iter()
                            .find(|q| (q.s - want_s).abs() <= tol_s && periodic_close(q.t, p.t, self.period, tol_t));
                        let problem = match found {
                            None => SeamProblem::Unmatched { direction: dir, index, s: p.s, t: p.t },
                            Some(q) if (q.velocity[0] - p.velocity[0]).hypot(q.velocity[1] - p.velocity[1]) > tol_v => {
                                SeamProblem::VelocityDiffers {
                                    direction: dir,
                                    index,
                                    s: p.s,
                                    t: p.t,
                                    velocity: p.velocity,
                                    neighbour_velocity: q.velocity,
                                }
                            }
                            Some(_) => continue,
                        };
                        out.push(Mismatch { cell: [i, j], side: Some(side), neighbour, problem });
                    }
                }
            }
        }
        out
    }
}

fn periodic_close(a: f64, b: f64, period: f64, tol: f64) -> bool {
    let d = (a - b).rem_euclid(period);
    d <= tol || period - d <= tol
}

/// The pattern a tile turned by `rotation` shows on world side `side`,
/// velocities in the world frame.
pub fn world_pattern(tile: &SceneExtras, side: Side, rotation: u8) -> BakedPattern {
    let local = side.rotated(-i32::from(rotation % 4));
    let place = Placement { offset: [0.0; 2], rotation };
    let turn = |p: &BakedPoint| BakedPoint { velocity: place.vector(p.velocity), ..*p };
    let pattern = &tile.patterns[local];
    BakedPattern {
        entries: pattern.entries.iter().map(turn).collect(),
        exits: pattern.exits.iter().map(turn).collect(),
    }
}

/// Entry or exit, as seen from the cell a mismatch is reported for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Crossing {
    /// Agents come into the cell here.
    Entry,
    /// Agents leave the cell here.
    Exit,
}

impl fmt::Display for Crossing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Crossing::Entry => "entry",
            Crossing::Exit => "exit",
        })
    }
}

/// What is wrong at a seam.
#[derive(Debug, Clone, PartialEq)]
pub enum SeamProblem {
    /// The cell names a tile that was not given.
    MissingTile {
        /// The tile index.
        tile: usize,
    },
    /// The tile's L or π differs from the world's.
    SizeOrPeriod {
        /// Tile side `[m]`.
        size: f64,
        /// Tile period `[s]`.
        period: f64,
        /// World tile side `[m]`.
        world_size: f64,
        /// World period `[s]`.
        world_period: f64,
    },
    /// A boundary point has no mirror point on the neighbour's side.
    Unmatched {
        /// Entry or exit of this cell.
        direction: Crossing,
        /// Index among this side's entries or exits (tile's own order).
        index: usize,
        /// Arc position `[m]` along the world side.
        s: f64,
        /// Time `[s]`.
        t: f64,
    },
    /// The mirror point exists but its velocity differs (world frame).
    VelocityDiffers {
        /// Entry or exit of this cell.
        direction: Crossing,
        /// Index among this side's entries or exits.
        index: usize,
        /// Arc position `[m]`.
        s: f64,
        /// Time `[s]`.
        t: f64,
        /// Velocity here `[m/s]`, world frame.
        velocity: [f64; 2],
        /// The neighbour's velocity `[m/s]`, world frame.
        neighbour_velocity: [f64; 2],
    },
    /// The side has boundary points but faces an empty cell or the border.
    OpenSide {
        /// Number of entries and exits on the side.
        points: usize,
    },
}

/// One mismatch found by [`World::check`].
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// The cell `(column, row)` it is reported for.
    pub cell: [usize; 2],
    /// The world side of that cell (`None` for a problem of the whole tile).
    pub side: Option<Side>,
    /// The neighbouring cell across that side, if inside the grid.
    pub neighbour: Option<[usize; 2]>,
    /// What is wrong.
    pub problem: SeamProblem,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [i, j] = self.cell;
        write!(f, "cell ({i}, {j})")?;
        if let Some(side) = self.side {
            write!(f, " {side}")?;
            match self.neighbour {
                Some([ni, nj]) => write!(f, " (facing cell ({ni}, {nj}) {})", side.opposite())?,
                None => write!(f, " (world border)")?,
            }
        }
        write!(f, ": ")?;
        match &self.problem {
            SeamProblem::MissingTile { tile } => write!(f, "tile {tile} does not exist"),
            SeamProblem::SizeOrPeriod { size, period, world_size, world_period } => write!(
                f,
                "tile has L = {size} m, π = {period} s but the world has L = {world_size} m, π = {world_period} s"
            ),
            SeamProblem::Unmatched { direction, index, s, t } => {
                let other = match direction {
                    Crossing::Entry => "exit",
                    Crossing::Exit => "entry",
                };
                write!(
                    f,
                    "{direction} {index} at s = {s:.3} m, t = {t:.3} s has no mirror {other} on the neighbour's side"
                )
            }
            SeamProblem::VelocityDiffers { direction, index, s, t, velocity, neighbour_velocity } => write!(
                f,
                "{direction} {index} at s = {s:.3} m, t = {t:.3} s crosses with velocity [{:.3}, {:.3}] m/s but the neighbour's with [{:.3}, {:.3}] m/s",
                velocity[0], velocity[1], neighbour_velocity[0], neighbour_velocity[1]
            ),
            SeamProblem::OpenSide { points } => {
                let to = if self.neighbour.is_some() { "an empty cell" } else { "the world's border" };
                write!(f, "{points} boundary point(s) lead into {to}")
            }
        }
    }
}

/// The `world.json` written by `crowdpatch compose`: the tiles (GLB files
/// relative to the world file), the grid of cells, and optionally a Wang-tile
/// set to fill any world at run time.
///
/// ```json
/// { "format": 1, "size": 16.0, "period": 10.0,
///   "tiles": [ {"name": "a1b2…", "glb": "tiles/a1b2….glb"} ],
///   "columns": 2, "rows": 1,
///   "cells": [ {"tile": 0, "rotation": 0}, null ],
///   "wang": { "k": 2, "seed": 7, "tiles": [ {"colors": [0, 1, 0, 0], "tile": 0} ] } }
/// ```
/// `cells` lists `columns × rows` entries row by row from the south-west
/// corner (`cells[j · columns + i]` is column `i`, row `j`); `null` is an
/// empty cell. In a Wang set, `colors` are `[north, east, south, west]` edge
/// colours (see [`WangSet`](crate::WangSet)).
#[cfg(feature = "serde")]
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WorldFile {
    /// Must be [`WORLD_FORMAT`].
    pub format: u32,
    /// Tile side L `[m]`.
    pub size: f64,
    /// Period π `[s]`.
    pub period: f64,
    /// The tiles.
    pub tiles: Vec<TileEntry>,
    /// Number of columns of the grid.
    #[serde(default)]
    pub columns: usize,
    /// Number of rows of the grid.
    #[serde(default)]
    pub rows: usize,
    /// `columns × rows` cells, row by row from the south.
    #[serde(default)]
    pub cells: Vec<Option<Cell>>,
    /// A Wang-tile set, when the world was composed with `--wang K`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wang: Option<WangFile>,
}

/// Version of `world.json`.
pub const WORLD_FORMAT: u32 = 1;

/// One tile of a world file.
#[cfg(feature = "serde")]
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TileEntry {
    /// Name (the content hash for composed tiles).
    pub name: String,
    /// GLB path, relative to the world file.
    pub glb: String,
}

/// The Wang-tile set of a world file.
#[cfg(feature = "serde")]
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WangFile {
    /// Colours (patterns) per edge orientation.
    pub k: usize,
    /// Seed of the fill that made the file's grid (any seed fills a world).
    #[serde(default)]
    pub seed: u64,
    /// One tile per `[north, east, south, west]` colour combination.
    pub tiles: Vec<WangTileEntry>,
}

/// One Wang tile: its edge colours and its tile index.
#[cfg(feature = "serde")]
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WangTileEntry {
    /// `[north, east, south, west]`, each `< k`.
    pub colors: [usize; 4],
    /// Index into [`WorldFile::tiles`].
    pub tile: usize,
}

#[cfg(feature = "serde")]
impl WorldFile {
    /// Parses and checks a world file's text.
    ///
    /// # Errors
    /// Malformed JSON, another format version, a grid whose cell count is not
    /// `columns × rows`, a cell or Wang entry naming a missing tile, a
    /// rotation ≥ 4, a size or period not finite and positive.
    pub fn from_json(text: &str) -> Result<WorldFile, crate::error::WorldError> {
        use crate::error::WorldError;
        let file: WorldFile = serde_json::from_str(text).map_err(|e| WorldError::Json { reason: e.to_string() })?;
        let invalid = |path: String, reason: String| Err(WorldError::Invalid { path, reason });
        if file.format != WORLD_FORMAT {
            return invalid(
                "format".into(),
                format!("= {} is not supported (this runtime reads {WORLD_FORMAT})", file.format),
            );
        }
        for (name, v) in [("size", file.size), ("period", file.period)] {
            if !(v.is_finite() && v > 0.0) {
                return invalid(name.into(), format!("= {v} must be finite and > 0"));
            }
        }
        if file.columns.checked_mul(file.rows) != Some(file.cells.len()) {
            return invalid(
                "cells".into(),
                format!("holds {} cells but columns × rows = {} × {}", file.cells.len(), file.columns, file.rows),
            );
        }
        for (k, c) in file.cells.iter().enumerate() {
            if let Some(c) = c {
                if c.tile >= file.tiles.len() {
                    return invalid(
                        format!("cells[{k}].tile"),
                        format!("= {} but there are {} tiles", c.tile, file.tiles.len()),
                    );
                }
                if c.rotation >= 4 {
                    return invalid(format!("cells[{k}].rotation"), format!("= {} must be 0, 1, 2 or 3", c.rotation));
                }
            }
        }
        if let Some(w) = &file.wang {
            if w.k == 0 || w.k > 16 {
                return invalid("wang.k".into(), format!("= {} must be in 1..=16", w.k));
            }
            for (n, t) in w.tiles.iter().enumerate() {
                if t.tile >= file.tiles.len() {
                    return invalid(
                        format!("wang.tiles[{n}].tile"),
                        format!("= {} but there are {} tiles", t.tile, file.tiles.len()),
                    );
                }
                if t.colors.iter().any(|&c| c >= w.k) {
                    return invalid(
                        format!("wang.tiles[{n}].colors"),
                        format!("= {:?} must all be < k = {}", t.colors, w.k),
                    );
                }
            }
        }
        Ok(file)
    }

    /// Reads and checks a world file.
    ///
    /// # Errors
    /// As [`WorldFile::from_json`], or the file cannot be read.
    pub fn load(path: impl AsRef<std::path::Path>) -> Result<WorldFile, crate::error::WorldError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|e| crate::error::WorldError::Io { file: path.display().to_string(), reason: e.to_string() })?;
        WorldFile::from_json(&text)
    }

    /// The grid as a [`World`].
    pub fn world(&self) -> World {
        World {
            size: self.size,
            period: self.period,
            columns: self.columns,
            rows: self.rows,
            cells: self.cells.clone(),
        }
    }

    /// The world as a file (tiles and Wang set as given).
    pub fn from_world(world: &World, tiles: Vec<TileEntry>, wang: Option<WangFile>) -> WorldFile {
        WorldFile {
            format: WORLD_FORMAT,
            size: world.size,
            period: world.period,
            tiles,
            columns: world.columns,
            rows: world.rows,
            cells: world.cells.clone(),
            wang,
        }
    }

    /// Loads every tile GLB, paths relative to `dir` (the world file's
    /// directory), in tile order.
    ///
    /// # Errors
    /// The first tile that fails to load, with its file named.
    #[cfg(feature = "glb")]
    pub fn load_tiles(
        &self,
        dir: impl AsRef<std::path::Path>,
    ) -> Result<Vec<crate::tile::Tile>, crate::error::LoadError> {
        self.tiles.iter().map(|t| crate::tile::Tile::load(dir.as_ref().join(&t.glb))).collect::<Result<Vec<_>, _>>()
    }
}
