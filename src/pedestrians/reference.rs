//! Real pedestrians as the yardstick: statistics computed by the project from
//! the public ETH and UCY trajectory sets, shipped as derived numbers only
//! (`data/pedestrians.json`, written by `crowdpatch realism --write-reference`).
//!
//! Sources (the standard redistribution with Social-STGCNN, Mohamed et al.,
//! CVPR 2020; `frame id x y` in metres, annotated every 10 frames of 25 fps
//! video, i.e. every 0.4 s):
//! - ETH (BIWI): Pellegrini, Ess, Schindler, Van Gool, *You'll never walk
//!   alone: modeling social behavior for multi-target tracking*, ICCV 2009 —
//!   `biwi_eth` (its timing is doubtful: its walkers come out twice as fast
//!   as every other set's, so it is left out of the pooled reference),
//!   `biwi_hotel`;
//! - UCY: Lerner, Chrysanthou, Lischinski, *Crowds by example*, Computer
//!   Graphics Forum 26(3), 2007 — `crowds_zara01`–`03`, `students001`,
//!   `students003`, `uni_examples`.

use super::crowd::{CrowdSamples, ks_distance, quantile_table};
use crate::figures::CrowdStats;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Frame rate of the ETH/UCY videos `[Hz]`: frame numbers / 25 are seconds.
pub const ETH_UCY_FRAME_RATE: f64 = 25.0;

/// Largest trajectory file read `[bytes]` (the largest real set is 0.6 MB).
pub const MAX_FILE_BYTES: u64 = 256 << 20;

/// The statistics of one trajectory set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReferenceSet {
    /// Name, e.g. `hotel`.
    pub name: String,
    /// Where the numbers come from.
    pub source: String,
    /// Whether the set is part of the pooled reference.
    pub pooled: bool,
    /// Number of walkers (tracks before gaps split them).
    pub walkers: usize,
    /// The statistics.
    pub stats: CrowdStats,
    /// Speed percentiles 0, 1, …, 100 `[m/s]`, for distances between
    /// speed distributions.
    pub speed_quantiles: Vec<f64>,
    /// Turn-rate percentiles 0, 1, …, 100 `[rad/s]`.
    pub turn_rate_quantiles: Vec<f64>,
    /// Detour percentiles 0, 1, …, 100 `[1]`.
    pub detour_quantiles: Vec<f64>,
    /// Nearest-neighbour distance percentiles 0, 1, …, 100 `[m]`.
    pub nearest_neighbour_quantiles: Vec<f64>,
    /// Lateral-acceleration percentiles 0, 1, …, 100 `[m/s²]`.
    #[serde(default)]
    pub lateral_acceleration_quantiles: Vec<f64>,
}

impl ReferenceSet {
    fn of(name: String, pooled: bool, walkers: usize, samples: &CrowdSamples, dt: f64) -> ReferenceSet {
        ReferenceSet {
            source: source_of(&name).to_string(),
            pooled,
            walkers,
            stats: samples.summary(dt),
            speed_quantiles: quantile_table(&samples.speed),
            turn_rate_quantiles: quantile_table(&samples.turn_rate),
            detour_quantiles: quantile_table(&samples.detour),
            nearest_neighbour_quantiles: quantile_table(&samples.nearest_neighbour),
            lateral_acceleration_quantiles: quantile_table(&samples.lateral_acceleration),
            name,
        }
    }
}

/// The reference table: every set, and the pooled one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    /// What the sets are and how the numbers were computed.
    pub note: String,
    /// The sets.
    pub sets: Vec<ReferenceSet>,
    /// All sets marked `pooled`, their samples together.
    pub pooled: ReferenceSet,
}

impl Reference {
    /// The reference shipped with the library (`data/pedestrians.json`).
    ///
    /// # Panics
    /// If the shipped file does not parse (a test checks it does).
    pub fn shipped() -> Reference {
        Reference::shipped_ref().clone()
    }

    /// The shipped reference, parsed once.
    ///
    /// # Panics
    /// As [`Reference::shipped`].
    pub fn shipped_ref() -> &'static Reference {
        static SHIPPED: std::sync::OnceLock<Reference> = std::sync::OnceLock::new();
        SHIPPED.get_or_init(|| {
            serde_json::from_str(include_str!("../../data/pedestrians.json")).expect("data/pedestrians.json parses")
        })
    }

    /// The pooled walking speed `[m/s]` at quantile `u ∈ [0, 1]` of the
    /// pooled speeds between `lo` and `hi` `[m/s]` (linear between the
    /// tabled percentiles): inverse-CDF sampling of how real pedestrians
    /// walk, standing and strolling left out.
    pub fn walking_speed(&self, u: f64, (lo, hi): (f64, f64)) -> f64 {
        let q = &self.pooled.speed_quantiles;
        let n = q.len() - 1;
        // Tabled percentiles a..=b: the first at or above lo, the last at or
        // below hi.
        let a = q.partition_point(|&v| v < lo).min(n - 1);
        let b = q.partition_point(|&v| v <= hi).saturating_sub(1).clamp(a + 1, n);
        let x = a as f64 + (b - a) as f64 * u.clamp(0.0, 1.0);
        let k = (x.floor() as usize).min(n - 1);
        (q[k] + (q[k + 1] - q[k]) * (x - k as f64)).clamp(lo, hi)
    }

    /// Kolmogorov–Smirnov distance of `speeds` to the pooled reference and
    /// to each set, by name.
    pub fn speed_ks(&self, speeds: &[f64]) -> BTreeMap<String, f64> {
        let mut out = BTreeMap::new();
        for s in self.sets.iter().chain(std::iter::once(&self.pooled)) {
            if let Some(d) = ks_distance(speeds, &s.speed_quantiles) {
                out.insert(s.name.clone(), d);
            }
        }
        out
    }
}

/// A set of walkers' tracks and frames read from a trajectory file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trajectories {
    /// Sampling interval `[s]`.
    pub sample_interval: f64,
    /// Number of distinct walker ids.
    pub walkers: usize,
    /// Tracks (a walker's consecutive samples; a gap starts a new track).
    pub tracks: Vec<Vec<[f64; 2]>>,
    /// Every walker's position at each sample time.
    pub frames: Vec<Vec<[f64; 2]>>,
}

impl Trajectories {
    /// The crowd samples of these trajectories.
    pub fn samples(&self) -> CrowdSamples {
        let mut c = CrowdSamples::default();
        for t in &self.tracks {
            c.add_track(t, self.sample_interval);
        }
        for f in &self.frames {
            c.add_frame(f);
        }
        c
    }
}

/// Why a trajectory file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TrajectoryError {
    /// The file could not be read.
    #[error("{file}: cannot read: {source}")]
    Io {
        /// The file.
        file: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A line is not what the format says.
    #[error("{file}:{line}: {message}")]
    Format {
        /// The file.
        file: String,
        /// Line number (1-based).
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// Reads a trajectory file: ETH/UCY text (`frame id x y`, whitespace
/// separated, frames at [`ETH_UCY_FRAME_RATE`]) or the bake's CSV
/// (`id,frame,x,y` with that header, frames at `csv_rate` `[Hz]`). Tracks
/// are split where a walker misses a sample. O(lines log lines).
///
/// # Errors
/// Unreadable, too large, or a malformed line (named with its number).
pub fn read_trajectories(path: &Path, csv_rate: f64) -> Result<Trajectories, TrajectoryError> {
    let file = path.display().to_string();
    let io = |source| TrajectoryError::Io { file: file.clone(), source };
    let len = std::fs::metadata(path).map_err(io)?.len();
    if len > MAX_FILE_BYTES {
        return Err(TrajectoryError::Format {
            file,
            line: 0,
            message: format!("is {len} bytes; trajectory files are read up to {MAX_FILE_BYTES}"),
        });
    }
    let text = std::fs::read_to_string(path).map_err(io)?;
    parse_trajectories(&text, &file, csv_rate)
}

/// [`read_trajectories`] on text; `file` names it in errors.
///
/// # Errors
/// A malformed line, named with its number.
pub fn parse_trajectories(text: &str, file: &str, csv_rate: f64) -> Result<Trajectories, TrajectoryError> {
    let (mut rows, rate) = parse_rows(text, file, RowFormat::Auto { csv_rate })?;
    let step = sampling_step(&mut rows);
    let mut out = Trajectories { sample_interval: step as f64 / rate, ..Trajectories::default() };
    let mut track: Vec<[f64; 2]> = Vec::new();
    for (k, r) in rows.iter().enumerate() {
        let continues = k > 0 && rows[k - 1].id == r.id && r.frame - rows[k - 1].frame == step;
        if !continues && !track.is_empty() {
            out.tracks.push(std::mem::take(&mut track));
        }
        if k == 0 || rows[k - 1].id != r.id {
            out.walkers += 1;
        }
        track.push(r.position);
    }
    out.tracks.push(track);
    let mut by_frame: BTreeMap<i64, Vec<[f64; 2]>> = BTreeMap::new();
    for r in &rows {
        by_frame.entry(r.frame).or_default().push(r.position);
    }
    out.frames = by_frame.into_values().collect();
    Ok(out)
}

/// One annotated sample of a trajectory file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Row {
    /// Frame number (video frames, or CSV frames).
    pub frame: i64,
    /// Walker id.
    pub id: i64,
    /// Position `[m]`.
    pub position: [f64; 2],
}

/// The line formats [`parse_rows`] reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum RowFormat {
    /// ETH/UCY text `frame id x y` (frames at [`ETH_UCY_FRAME_RATE`]), or
    /// the bake's CSV `id,frame,x,y` when the first line is that header
    /// (frames at `csv_rate` `[Hz]`).
    Auto {
        /// Frame rate of the CSV `[Hz]`.
        csv_rate: f64,
    },
    /// The ETH/UCY annotations' `obsmat.txt`: `frame id x z y vx vz vy`
    /// (whitespace separated; `z` and the velocities unused).
    Obsmat,
}

/// The rows of trajectory text in `format`, with the frame rate `[Hz]` their
/// frame numbers count (for [`RowFormat::Obsmat`], [`ETH_UCY_FRAME_RATE`],
/// which its callers do not use). Comment (`#`) and blank lines are skipped.
/// O(lines).
///
/// # Errors
/// A malformed line, named with its number; no row at all.
pub(crate) fn parse_rows(text: &str, file: &str, format: RowFormat) -> Result<(Vec<Row>, f64), TrajectoryError> {
    let bad = |line: usize, message: String| TrajectoryError::Format { file: file.to_owned(), line, message };
    let mut rows: Vec<Row> = Vec::new();
    let mut csv = false;
    // PedPy's text format: a `framerate` comment before the rows, then
    // `id frame x y [z]`.
    let mut pedpy = false;
    let mut rate = ETH_UCY_FRAME_RATE;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if let RowFormat::Auto { .. } = format
            && rows.is_empty()
            && line.starts_with('#')
            && line.to_ascii_lowercase().contains("framerate")
        {
            let value = line.split_whitespace().find_map(|w| w.parse::<f64>().ok());
            match value.filter(|r| r.is_finite() && *r > 0.0 && *r <= 1e4) {
                Some(r) => (pedpy, rate) = (true, r),
                None => return Err(bad(n + 1, format!("{line:?} names no frame rate in (0, 10000] Hz"))),
            }
            continue;
        }
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let RowFormat::Auto { csv_rate } = format
            && rows.is_empty()
            && !csv
            && line.replace(' ', "").eq_ignore_ascii_case("id,frame,x,y")
        {
            csv = true;
            rate = csv_rate;
            continue;
        }
        let f: Vec<&str> =
            if csv { line.split(',').map(str::trim).collect() } else { line.split_whitespace().collect() };
        let (fields, want) = match format {
            RowFormat::Obsmat => (8, "frame id x z y vx vz vy"),
            RowFormat::Auto { .. } if csv => (4, "id,frame,x,y"),
            RowFormat::Auto { .. } if pedpy && f.len() == 5 => (5, "id frame x y z"),
            RowFormat::Auto { .. } if pedpy => (4, "id frame x y [z]"),
            RowFormat::Auto { .. } => (4, "frame id x y"),
        };
        if f.len() != fields {
            return Err(bad(n + 1, format!("has {} fields; expected {fields} ({want})", f.len())));
        }
        let num = |s: &str, what: &str| -> Result<f64, TrajectoryError> {
            s.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && v.abs() < 1e9)
                .ok_or_else(|| bad(n + 1, format!("{what} = {s:?} is not a finite number")))
        };
        let (id, frame) = if csv || pedpy {
            (num(f[0], "id")?, num(f[1], "frame")?)
        } else {
            (num(f[1], "id")?, num(f[0], "frame")?)
        };
        let y = if format == RowFormat::Obsmat { f[4] } else { f[3] };
        rows.push(Row {
            frame: frame.round() as i64,
            id: id.round() as i64,
            position: [num(f[2], "x")?, num(y, "y")?],
        });
    }
    if rows.is_empty() {
        return Err(bad(0, "holds no trajectory sample".into()));
    }
    Ok((rows, rate))
}

/// Sorts `rows` by walker, then frame, and returns the sampling step in
/// frames: the most common positive gap between a walker's consecutive
/// frames (the smaller on a tie; 1 when no walker has two samples).
/// O(n log n).
pub(crate) fn sampling_step(rows: &mut [Row]) -> i64 {
    rows.sort_by_key(|r| (r.id, r.frame));
    let mut gaps: BTreeMap<i64, usize> = BTreeMap::new();
    for w in rows.windows(2) {
        if w[0].id == w[1].id && w[1].frame > w[0].frame {
            *gaps.entry(w[1].frame - w[0].frame).or_default() += 1;
        }
    }
    gaps.iter().max_by_key(|(g, c)| (**c, -**g)).map_or(1, |(g, _)| *g)
}

/// The set name of an ETH/UCY file (`biwi_hotel.txt` → `hotel`,
/// `crowds_zara01.txt` → `zara01`, `students003.txt` → `students003`).
pub fn set_name(path: &Path) -> String {
    let stem = path.file_stem().map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    stem.strip_prefix("biwi_").or_else(|| stem.strip_prefix("crowds_")).unwrap_or(&stem).to_string()
}

/// The reference table of the given trajectory files: each set's
/// statistics, and those of the pooled samples of every set but `biwi_eth`
/// (see the module documentation).
///
/// # Errors
/// As [`read_trajectories`].
pub fn build_reference(files: &[&Path]) -> Result<Reference, TrajectoryError> {
    let mut sets = Vec::new();
    let mut pooled = CrowdSamples::default();
    let mut dt = 0.0;
    let mut walkers = 0;
    for &f in files {
        let t = read_trajectories(f, ETH_UCY_FRAME_RATE)?;
        let name = set_name(f);
        let include = name != "eth";
        let samples = t.samples();
        if include {
            pooled.append(&samples);
            dt = t.sample_interval;
            walkers += t.walkers;
        }
        sets.push(ReferenceSet::of(name, include, t.walkers, &samples, t.sample_interval));
    }
    let mut pooled = ReferenceSet::of("pooled".into(), true, walkers, &pooled, dt);
    pooled.source = "every set above but eth, samples together".into();
    Ok(Reference {
        note: "Statistics of the ETH and UCY pedestrian trajectory sets (Social-STGCNN redistribution), computed by \
               `crowdpatch realism --write-reference`: speeds, turn rates, detours and nearest-neighbour distances \
               sampled every 0.4 s, and the lateral acceleration of each turn (turn rate × speed) (docs/design.md \"Realism\"). Derived numbers only."
            .into(),
        sets,
        pooled,
    })
}

fn source_of(name: &str) -> &'static str {
    match name {
        "eth" => "ETH (BIWI) seq_eth, Pellegrini et al., ICCV 2009; timing doubtful, left out of the pool",
        "hotel" => "ETH (BIWI) seq_hotel, Pellegrini et al., ICCV 2009",
        n if n.starts_with("zara") => "UCY zara, Lerner et al., Crowds by example, CGF 2007",
        n if n.starts_with("students") || n.starts_with("uni") => {
            "UCY university, Lerner et al., Crowds by example, CGF 2007"
        }
        _ => "user trajectories",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_formats_parse_to_the_same_tracks() {
        let eth = "0 1 0.0 0.0\n10 1 0.4 0.0\n20 1 0.8 0.0\n0 2 5 5\n10 2 5 5.4\n40 2 5 6.6\n";
        let csv = "id,frame,x,y\n1,0,0.0,0.0\n1,1,0.4,0.0\n1,2,0.8,0.0\n2,0,5,5\n2,1,5,5.4\n2,4,5,6.6\n";
        let a = parse_trajectories(eth, "a.txt", 2.5).unwrap();
        let b = parse_trajectories(csv, "b.csv", 2.5).unwrap();
        assert_eq!(a, b);
        assert!((a.sample_interval - 0.4).abs() < 1e-12);
        assert_eq!(a.walkers, 2);
        // Walker 2 misses two samples: two tracks.
        assert_eq!(a.tracks.len(), 3);
        assert_eq!(a.frames.len(), 4);
        let s = a.samples().summary(a.sample_interval);
        assert!((s.speed.max - 1.0).abs() < 1e-12);
    }

    #[test]
    fn walking_speeds_stay_in_their_range_and_follow_the_reference() {
        let r = Reference::shipped_ref();
        let v: Vec<f64> = (0..=1000).map(|k| r.walking_speed(k as f64 / 1000.0, (0.5, 2.0))).collect();
        assert!(
            v.iter().all(|x| (0.5..=2.0).contains(x)),
            "{:?}",
            v.iter().fold((9.0f64, 0.0f64), |a, x| (a.0.min(*x), a.1.max(*x)))
        );
        assert!(v.windows(2).all(|w| w[1] >= w[0]), "monotone in u");
        // The median drawn is the pooled median of the walking speeds.
        let q = &r.pooled.speed_quantiles;
        let walking: Vec<f64> = q.iter().copied().filter(|x| (0.5..=2.0).contains(x)).collect();
        assert!((v[500] - walking[walking.len() / 2]).abs() < 0.05, "{} vs {}", v[500], walking[walking.len() / 2]);
    }

    #[test]
    fn malformed_lines_are_named() {
        let e = parse_trajectories("0 1 0 0\n10 1 x 0\n", "t.txt", 2.5).unwrap_err().to_string();
        assert!(e.contains("t.txt:2") && e.contains("\"x\""), "{e}");
        let e = parse_trajectories("id,frame,x,y\n1,2,3\n", "t.csv", 25.0).unwrap_err().to_string();
        assert!(e.contains("t.csv:2") && e.contains("3 fields"), "{e}");
        assert!(parse_trajectories("# nothing\n", "e.txt", 25.0).is_err());
    }

    #[test]
    fn the_shipped_reference_parses_and_is_consistent() {
        let r = Reference::shipped();
        assert!(r.sets.len() >= 8, "{} sets", r.sets.len());
        assert!(!r.sets.iter().find(|s| s.name == "eth").unwrap().pooled);
        for s in r.sets.iter().chain(std::iter::once(&r.pooled)) {
            assert_eq!(s.speed_quantiles.len(), 101, "{}", s.name);
            assert!(s.speed_quantiles.windows(2).all(|w| w[1] >= w[0]), "{}", s.name);
            assert_eq!(s.stats.speed.p50, s.speed_quantiles[50], "{}", s.name);
            assert!((s.stats.sample_interval - 0.4).abs() < 1e-12);
        }
        // The pooled walkers are the pooled sets' walkers.
        let n: usize = r.sets.iter().filter(|s| s.pooled).map(|s| s.walkers).sum();
        assert_eq!(r.pooled.walkers, n);
        // Real walkers: a median speed between 0.5 and 1.5 m/s, straight paths.
        assert!((0.5..1.5).contains(&r.pooled.stats.speed.p50), "{:?}", r.pooled.stats.speed);
        assert!(r.pooled.stats.detour.p50 < 1.05);
        // The turn bound is the pooled 99th percentile of ω·v (rounded).
        let p99 = r.pooled.lateral_acceleration_quantiles[99];
        assert!((p99 / crate::pace::TURN_ACCELERATION - 1.0).abs() < 0.03, "{p99}");
        // ω·v is a lateral acceleration: never above ω_max·v_max of the set.
        let s = &r.pooled.stats;
        assert!(s.lateral_acceleration.max <= s.turn_rate.max * s.speed.max + 1e-9);
    }

    /// The shipped numbers are what the shared data gives (when present).
    #[test]
    fn the_shipped_reference_is_recomputed_from_the_data() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/pedestrians");
        if !dir.is_dir() {
            eprintln!("SKIPPED: {} is absent", dir.display());
            return;
        }
        let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "txt"))
            .collect();
        files.sort();
        let refs: Vec<&Path> = files.iter().map(|p| p.as_path()).collect();
        let again = build_reference(&refs).unwrap();
        assert_eq!(again, Reference::shipped(), "re-run `crowdpatch realism --write-reference data/pedestrians.json`");
    }
}
