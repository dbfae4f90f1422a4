//! Walking groups as data: the group statistics of walkers sampled on a
//! common clock with their group membership — one definition for the real
//! crowds with group annotations and a bake's walkers alike — and the
//! reference table computed from the ETH/UCY scenes with group annotations
//! (`data/groups.json`, written by `crowdpatch realism
//! --write-group-reference`; docs/design.md "Walking groups", issue 31).
//!
//! Definitions ([`group_stats`]; Δ the sampling interval):
//!
//! - **groups**: the annotated groups with overlapping ones merged (the
//!   connected components of "walks with"), members counted once; a group
//!   has two members or more. A walker is *in a group* when it is a member
//!   of one;
//! - **share in groups**: walkers in groups over all walkers; **sizes**: the
//!   number of groups of each size;
//! - **walking samples of a group**: the intervals `[k, k+1]` over which
//!   every member has both samples and the members' centroid moves at
//!   [`MOVING_SPEED`] or more; the *walking direction* is that centroid
//!   displacement and each member stands at the midpoint of its two samples;
//! - **spacing** (pairs, triads): at each walking sample the lengths of the
//!   edges of the members' minimum spanning tree (a pair: its distance; a
//!   triad: its two shortest distances, the neighbours in a line, an arc or
//!   a V); **angle**: between each such edge and the walking direction,
//!   folded into `[0°, 90°]` (90° abreast, 0° in line);
//! - **speed**: `|p_{k+1} − p_k| / Δ` of each walker's consecutive samples
//!   ([`crate::pedestrians::crowd`]'s speed) at [`MOVING_SPEED`] or more
//!   (people walking, not standing); the medians of walkers in groups and of
//!   walkers alone, and their ratio.
//!
//! Percentiles are nearest-rank ([`Quantile::InvertedCdf`]).
//!
//! Sources: the group annotations of ETH `seq_eth` (Pellegrini, Ess,
//! Schindler, Van Gool, *You'll never walk alone*, ICCV 2009) and UCY
//! `zara01`, `zara02`, `students03` (Lerner, Chrysanthou, Lischinski,
//! *Crowds by example*, Computer Graphics Forum 26(3), 2007), as OpenTraj
//! (crowdbotp/OpenTraj @97ec1d5) redistributes them: `obsmat.txt` (`frame id
//! x z y vx vz vy`, metres, one annotated frame every 0.4 s) and
//! `groups.txt` (one group a line, its walkers' ids).

use super::crowd::MOVING_SPEED;
use super::reference::{MAX_FILE_BYTES, RowFormat, TrajectoryError, parse_rows, sampling_step};
use crate::figures::{FormationStats, GroupStats, Spread};
use crate::stats::{Quantile, quantile};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Time between the annotated frames of an `obsmat.txt` `[s]`: every 6
/// video frames in ETH `seq_eth`, every 10 in UCY (SOURCES.md of the data).
pub const OBSMAT_SAMPLE_INTERVAL: f64 = 0.4;

/// Walkers sampled on a common clock, with which of them walk together:
/// the input of [`group_stats`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GroupedTracks {
    /// Time Δ between consecutive samples `[s]` `[Limit: > 0]`.
    pub sample_interval: f64,
    /// Difference of the sample numbers of consecutive samples (a video's
    /// frame step; 1 for samples numbered 0, 1, 2, …) `[Limit: ≥ 1]`.
    pub step: i64,
    /// Each walker's samples `(sample number, position [m])`, in increasing
    /// sample number; two samples are consecutive when their numbers differ
    /// by `step` (a larger difference is a gap). Walkers present at the same
    /// time share its sample number.
    pub walkers: Vec<Vec<(i64, [f64; 2])>>,
    /// Groups as indices into `walkers`, as annotated: groups may overlap
    /// (they are merged), repeat a member, or name an index out of range
    /// (left out).
    pub groups: Vec<Vec<usize>>,
}

/// The groups of `walkers` walkers as [`group_stats`] counts them: the
/// connected components of the annotated groups (members out of range left
/// out) with two members or more, each sorted, in order of their first
/// member. O(members · α(walkers)).
///
/// # Example
/// ```
/// use crowdpatch::pedestrians::groups::merge_groups;
/// // {1, 2} and {2, 3} share walker 2: one group of three; {5} is no group
/// // and 9 is out of range.
/// let g = merge_groups(6, &[vec![3, 2], vec![2, 1], vec![5], vec![0, 4, 9]]);
/// assert_eq!(g, vec![vec![0, 4], vec![1, 2, 3]]);
/// ```
pub fn merge_groups(walkers: usize, groups: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..walkers).collect();
    fn root(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    let mut listed = vec![false; walkers];
    for g in groups {
        let mut members = g.iter().copied().filter(|&w| w < walkers);
        if let Some(first) = members.next() {
            listed[first] = true;
            for w in members {
                listed[w] = true;
                let (a, b) = (root(&mut parent, first), root(&mut parent, w));
                parent[a.max(b)] = a.min(b);
            }
        }
    }
    let mut by_root: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for w in (0..walkers).filter(|&w| listed[w]) {
        let r = root(&mut parent, w);
        by_root.entry(r).or_default().push(w);
    }
    // Roots are each component's smallest member, and members come in
    // increasing order: components in order of their first member.
    by_root.into_values().filter(|g| g.len() >= 2).collect()
}

/// The 10th, 50th and 90th percentiles of `values` (nearest rank, sorted in
/// place); `None` when there are none. O(n log n).
pub fn spread(values: &mut [f64]) -> Option<Spread> {
    let mut q = |p: f64| quantile(values, p, Quantile::InvertedCdf);
    Some(Spread { p10: q(0.1)?, p50: q(0.5)?, p90: q(0.9)?, count: values.len() })
}

fn median(values: &mut [f64]) -> Option<f64> {
    quantile(values, 0.5, Quantile::InvertedCdf)
}

/// Position of a walker at sample number `k`, if it has one.
fn at(samples: &[(i64, [f64; 2])], k: i64) -> Option<[f64; 2]> {
    samples.binary_search_by_key(&k, |s| s.0).ok().map(|i| samples[i].1)
}

/// The edges `(a, b)` of a minimum spanning tree of `points` (Prim). O(k²).
fn spanning_tree(points: &[[f64; 2]]) -> Vec<(usize, usize)> {
    let k = points.len();
    let d = |a: usize, b: usize| (points[a][0] - points[b][0]).hypot(points[a][1] - points[b][1]);
    let mut inside = vec![false; k];
    // Nearest tree member of each point outside, from the first point.
    let mut best: Vec<(f64, usize)> = (0..k).map(|j| (d(0, j), 0)).collect();
    let mut edges = Vec::with_capacity(k.saturating_sub(1));
    if k == 0 {
        return edges;
    }
    inside[0] = true;
    for _ in 1..k {
        let next = (0..k).filter(|&j| !inside[j]).min_by(|&a, &b| best[a].0.total_cmp(&best[b].0).then(a.cmp(&b)));
        let Some(j) = next else { break };
        inside[j] = true;
        edges.push((best[j].1, j));
        for m in (0..k).filter(|&m| !inside[m]) {
            if d(j, m) < best[m].0 {
                best[m] = (d(j, m), j);
            }
        }
    }
    edges
}

/// Adds the spacing `[m]` and angle `[deg]` samples of one group's walking
/// samples (module documentation). O(samples · members · log samples +
/// samples · members²).
fn formation_samples(t: &GroupedTracks, group: &[usize], spacing: &mut Vec<f64>, angle: &mut Vec<f64>) {
    let Some(&lead) = group.first() else { return };
    let k = group.len() as f64;
    for &(n, _) in &t.walkers[lead] {
        let mut mid = Vec::with_capacity(group.len());
        let mut d = [0.0, 0.0];
        for &w in group {
            let s = &t.walkers[w];
            let (Some(a), Some(b)) = (at(s, n), at(s, n + t.step)) else { break };
            mid.push([(a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0]);
            d = [d[0] + (b[0] - a[0]) / k, d[1] + (b[1] - a[1]) / k];
        }
        let moved = d[0].hypot(d[1]);
        if mid.len() < group.len() || moved / t.sample_interval < MOVING_SPEED {
            continue;
        }
        for (a, b) in spanning_tree(&mid) {
            let e = [mid[b][0] - mid[a][0], mid[b][1] - mid[a][1]];
            let len = e[0].hypot(e[1]);
            spacing.push(len);
            if len > 1e-12 {
                let cos = ((e[0] * d[0] + e[1] * d[1]).abs() / (len * moved)).min(1.0);
                angle.push(cos.acos().to_degrees());
            }
        }
    }
}

/// The group statistics of `t` (definitions in the module documentation).
/// Walkers with no group give a share of 0 and `None` for every figure of
/// groups; nothing is NaN. O(samples · log samples + members²·samples).
///
/// # Example
/// ```
/// use crowdpatch::pedestrians::groups::{GroupedTracks, group_stats};
/// // Two walkers 0.8 m apart side by side walking +x at 1.2 m/s, and one
/// // alone at 1.5 m/s; samples every 0.4 s.
/// let walk = |y: f64, v: f64| (0..10).map(|k| (k, [v * 0.4 * k as f64, y])).collect::<Vec<_>>();
/// let t = GroupedTracks {
///     sample_interval: 0.4,
///     step: 1,
///     walkers: vec![walk(0.0, 1.2), walk(0.8, 1.2), walk(5.0, 1.5)],
///     groups: vec![vec![0, 1]],
/// };
/// let s = group_stats(&t);
/// assert!((s.share_in_groups - 2.0 / 3.0).abs() < 1e-12);
/// let spacing = s.pairs.spacing.unwrap();
/// assert!((spacing.p50 - 0.8).abs() < 1e-12);
/// assert!((s.pairs.angle_deg.unwrap().p50 - 90.0).abs() < 1e-9);
/// assert!((s.speed_ratio.unwrap() - 0.8).abs() < 1e-9);
/// ```
pub fn group_stats(t: &GroupedTracks) -> GroupStats {
    let walkers = t.walkers.len();
    let groups = merge_groups(walkers, &t.groups);
    let mut member = vec![false; walkers];
    let mut sizes: BTreeMap<usize, usize> = BTreeMap::new();
    for g in &groups {
        *sizes.entry(g.len()).or_default() += 1;
        for &w in g {
            member[w] = true;
        }
    }
    let in_groups = member.iter().filter(|&&m| m).count();
    let (mut group_speeds, mut single_speeds) = (Vec::new(), Vec::new());
    for (w, s) in t.walkers.iter().enumerate() {
        for p in s.windows(2).filter(|p| p[1].0 - p[0].0 == t.step) {
            let v = (p[1].1[0] - p[0].1[0]).hypot(p[1].1[1] - p[0].1[1]) / t.sample_interval;
            if v >= MOVING_SPEED {
                if member[w] { &mut group_speeds } else { &mut single_speeds }.push(v);
            }
        }
    }
    let formation = |size: usize| {
        let (mut spacing, mut angle) = (Vec::new(), Vec::new());
        for g in groups.iter().filter(|g| g.len() == size) {
            formation_samples(t, g, &mut spacing, &mut angle);
        }
        FormationStats { spacing: spread(&mut spacing), angle_deg: spread(&mut angle) }
    };
    let group_speed = median(&mut group_speeds);
    let single_speed = median(&mut single_speeds);
    GroupStats {
        sample_interval: t.sample_interval,
        walkers,
        walkers_in_groups: in_groups,
        share_in_groups: if walkers == 0 { 0.0 } else { in_groups as f64 / walkers as f64 },
        groups: groups.len(),
        pair_share: (!groups.is_empty()).then(|| sizes.get(&2).copied().unwrap_or(0) as f64 / groups.len() as f64),
        sizes,
        pairs: formation(2),
        triads: formation(3),
        group_speed,
        single_speed,
        speed_ratio: match (group_speed, single_speed) {
            (Some(g), Some(s)) if s > 0.0 => Some(g / s),
            _ => None,
        },
    }
}

/// Reads a scene with group annotations: the folder's `obsmat.txt` (`frame
/// id x z y vx vz vy`, whitespace separated, metres; samples
/// [`OBSMAT_SAMPLE_INTERVAL`] apart) and `groups.txt` (one group a line, the
/// ids of its walkers as in `obsmat.txt`). O(lines log lines).
///
/// # Errors
/// A file unreadable or larger than [`MAX_FILE_BYTES`], a malformed line
/// (file and line named), or a group naming an id `obsmat.txt` lacks.
pub fn read_scene(dir: &Path) -> Result<GroupedTracks, TrajectoryError> {
    let read = |name: &str| -> Result<(String, String), TrajectoryError> {
        let path = dir.join(name);
        let file = path.display().to_string();
        let io = |source| TrajectoryError::Io { file: file.clone(), source };
        let len = std::fs::metadata(&path).map_err(io)?.len();
        if len > MAX_FILE_BYTES {
            return Err(TrajectoryError::Format {
                file,
                line: 0,
                message: format!("is {len} bytes; trajectory files are read up to {MAX_FILE_BYTES}"),
            });
        }
        Ok((std::fs::read_to_string(&path).map_err(io)?, file))
    };
    let (obsmat, obsmat_file) = read("obsmat.txt")?;
    let (groups, groups_file) = read("groups.txt")?;
    parse_scene(&obsmat, &obsmat_file, &groups, &groups_file)
}

/// [`read_scene`] on the two files' text; `obsmat_file` and `groups_file`
/// name them in errors. Walkers are numbered in increasing id.
///
/// # Errors
/// As [`read_scene`], files aside.
pub fn parse_scene(
    obsmat: &str,
    obsmat_file: &str,
    groups: &str,
    groups_file: &str,
) -> Result<GroupedTracks, TrajectoryError> {
    let (mut rows, _) = parse_rows(obsmat, obsmat_file, RowFormat::Obsmat)?;
    let step = sampling_step(&mut rows);
    let mut out = GroupedTracks { sample_interval: OBSMAT_SAMPLE_INTERVAL, step, ..GroupedTracks::default() };
    let mut index: BTreeMap<i64, usize> = BTreeMap::new();
    for r in &rows {
        let w = *index.entry(r.id).or_insert_with(|| {
            out.walkers.push(Vec::new());
            out.walkers.len() - 1
        });
        // Sorted by (id, frame): a repeated frame keeps its first sample.
        if out.walkers[w].last().is_none_or(|s| s.0 != r.frame) {
            out.walkers[w].push((r.frame, r.position));
        }
    }
    for (n, line) in groups.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |message: String| TrajectoryError::Format { file: groups_file.to_owned(), line: n + 1, message };
        let mut group = Vec::new();
        for f in line.split_whitespace() {
            let id = f
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && v.fract() == 0.0 && v.abs() < 1e9)
                .ok_or_else(|| bad(format!("id {f:?} is not a whole number")))?;
            let w = index.get(&(id as i64)).ok_or_else(|| bad(format!("id {f} has no sample in {obsmat_file}")))?;
            group.push(*w);
        }
        out.groups.push(group);
    }
    Ok(out)
}

/// The group statistics of one scene with group annotations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupScene {
    /// Name, the scene's folder name (`eth`, `zara01`, …).
    pub name: String,
    /// Where the numbers come from (dataset, paper, redistribution).
    pub source: String,
    /// Annotated group lines that merged with another (they overlap).
    pub merged_lines: usize,
    /// The statistics.
    pub stats: GroupStats,
}

/// The group reference table: every scene with group annotations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupReference {
    /// What the scenes are and how the numbers were computed.
    pub note: String,
    /// The scenes.
    pub scenes: Vec<GroupScene>,
}

impl GroupReference {
    /// The group reference shipped with the library (`data/groups.json`),
    /// parsed once.
    ///
    /// # Panics
    /// If the shipped file does not parse (a test checks it does).
    pub fn shipped_ref() -> &'static GroupReference {
        static SHIPPED: std::sync::OnceLock<GroupReference> = std::sync::OnceLock::new();
        SHIPPED.get_or_init(|| {
            serde_json::from_str(include_str!("../../data/groups.json")).expect("data/groups.json parses")
        })
    }

    /// The scene named `name`, if shipped.
    pub fn scene(&self, name: &str) -> Option<&GroupScene> {
        self.scenes.iter().find(|s| s.name == name)
    }

    /// The least and largest of figure `f` over the scenes that have it
    /// (`None` when none does): the range a bake's figure is shown
    /// against. O(scenes).
    pub fn range(&self, f: impl Fn(&GroupStats) -> Option<f64>) -> Option<(f64, f64)> {
        self.scenes.iter().filter_map(|s| f(&s.stats)).fold(None, |r, x| match r {
            None => Some((x, x)),
            Some((lo, hi)) => Some((f64::min(lo, x), f64::max(hi, x))),
        })
    }
}

/// The group reference of scene folders (each holding `obsmat.txt` and
/// `groups.txt`; named by the folder), in the order given. O(lines log
/// lines) a scene.
///
/// # Errors
/// As [`read_scene`].
pub fn build_group_reference(dirs: &[&Path]) -> Result<GroupReference, TrajectoryError> {
    let mut scenes = Vec::new();
    for &dir in dirs {
        let t = read_scene(dir)?;
        let name = dir.file_name().map_or_else(String::new, |s| s.to_string_lossy().into_owned());
        let stats = group_stats(&t);
        let listed = t.groups.iter().filter(|g| g.len() >= 2).count();
        scenes.push(GroupScene {
            source: group_source(&name).to_string(),
            merged_lines: listed - stats.groups,
            stats,
            name,
        });
    }
    Ok(GroupReference {
        note: "Group statistics of the ETH and UCY scenes with group annotations (OpenTraj's obsmat.txt and \
               groups.txt), computed by `crowdpatch realism --write-group-reference`: share of walkers in groups, \
               group sizes (overlapping annotated groups merged), pairs' and triads' spacing [m] and angle to the \
               walking direction [deg] over walking samples 0.4 s apart, median walking speed (>= 0.3 m/s) of \
               walkers in groups and alone (docs/design.md \"Walking groups\"). Derived numbers only."
            .into(),
        scenes,
    })
}

fn group_source(name: &str) -> &'static str {
    match name {
        "eth" => "ETH (BIWI) seq_eth, Pellegrini et al., ICCV 2009; OpenTraj @97ec1d5 datasets/ETH/seq_eth",
        "zara01" => "UCY zara01, Lerner et al., Crowds by example, CGF 2007; OpenTraj @97ec1d5 datasets/UCY/zara01",
        "zara02" => "UCY zara02, Lerner et al., Crowds by example, CGF 2007; OpenTraj @97ec1d5 datasets/UCY/zara02",
        "students03" => {
            "UCY university (students03), Lerner et al., Crowds by example, CGF 2007; OpenTraj @97ec1d5 \
             datasets/UCY/students03"
        }
        _ => "user trajectories with group annotations",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A walker from `start` at velocity `v` `[m/s]`, samples 0..n every 0.4 s.
    fn walk(start: [f64; 2], v: [f64; 2], n: i64) -> Vec<(i64, [f64; 2])> {
        (0..n).map(|k| (k, [start[0] + v[0] * 0.4 * k as f64, start[1] + v[1] * 0.4 * k as f64])).collect()
    }

    fn tracks(walkers: Vec<Vec<(i64, [f64; 2])>>, groups: Vec<Vec<usize>>) -> GroupedTracks {
        GroupedTracks { sample_interval: 0.4, step: 1, walkers, groups }
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn a_pair_abreast_and_a_pair_in_line() {
        let v = [1.2, 0.0];
        let abreast = group_stats(&tracks(vec![walk([0.0, 0.0], v, 20), walk([0.0, 0.8], v, 20)], vec![vec![0, 1]]));
        let s = abreast.pairs.spacing.unwrap();
        assert_eq!(s.count, 19);
        assert!(close(s.p10, 0.8, 1e-12) && close(s.p50, 0.8, 1e-12) && close(s.p90, 0.8, 1e-12), "{s:?}");
        assert!(close(abreast.pairs.angle_deg.unwrap().p50, 90.0, 1e-9));
        assert_eq!(abreast.triads, FormationStats::default());
        let in_line = group_stats(&tracks(vec![walk([0.0, 0.0], v, 20), walk([0.8, 0.0], v, 20)], vec![vec![1, 0]]));
        assert!(close(in_line.pairs.spacing.unwrap().p50, 0.8, 1e-12));
        assert!(close(in_line.pairs.angle_deg.unwrap().p50, 0.0, 1e-6));
    }

    #[test]
    fn a_triad_abreast_has_two_neighbour_spacings_and_a_v_its_arms() {
        let v = [0.0, -1.0];
        let row = |x: f64| walk([x, 10.0], v, 10);
        let s = group_stats(&tracks(vec![row(0.0), row(0.7), row(1.4)], vec![vec![0, 1, 2]]));
        let sp = s.triads.spacing.unwrap();
        // Two edges a sample (0.7, 0.7), never the 1.4 between the outer two.
        assert_eq!(sp.count, 18);
        assert!(close(sp.p10, 0.7, 1e-12) && close(sp.p90, 0.7, 1e-12), "{sp:?}");
        assert!(close(s.triads.angle_deg.unwrap().p50, 90.0, 1e-9));
        assert_eq!(s.pairs.spacing, None);
        // A V: the middle member 0.5 m behind (walking −y, behind is +y),
        // arms at atan(0.5/0.7) from the walking direction's normal.
        let v_shape = vec![row(0.0), walk([0.7, 10.5], v, 10), row(1.4)];
        let s = group_stats(&tracks(v_shape, vec![vec![0, 1, 2]]));
        let want = 90.0 - (0.5f64 / 0.7).atan().to_degrees();
        assert!(close(s.triads.angle_deg.unwrap().p50, want, 1e-9));
        assert!(close(s.triads.spacing.unwrap().p50, 0.7f64.hypot(0.5), 1e-12));
    }

    #[test]
    fn share_and_sizes_on_a_scene_of_known_membership() {
        let walkers: Vec<_> = (0..10).map(|i| walk([0.0, 2.0 * i as f64], [1.0, 0.0], 5)).collect();
        // {5, 6} and {6, 7} overlap: one triad. {9} alone is no group; 12
        // is no walker.
        let groups = vec![vec![0, 1], vec![2, 3, 4], vec![5, 6], vec![6, 7], vec![9], vec![8, 12]];
        let s = group_stats(&tracks(walkers, groups));
        assert_eq!(s.walkers, 10);
        assert_eq!(s.walkers_in_groups, 8);
        assert!(close(s.share_in_groups, 0.8, 1e-12));
        assert_eq!(s.groups, 3);
        assert_eq!(s.sizes, BTreeMap::from([(2, 1), (3, 2)]));
        assert!(close(s.pair_share.unwrap(), 1.0 / 3.0, 1e-12));
        // Every walker walks at 1 m/s: a ratio of 1.
        assert!(close(s.speed_ratio.unwrap(), 1.0, 1e-12));
    }

    #[test]
    fn singles_only_give_share_zero_and_no_nan() {
        let walkers: Vec<_> = (0..4).map(|i| walk([0.0, 2.0 * i as f64], [1.3, 0.0], 6)).collect();
        for t in [
            tracks(walkers, vec![]),
            tracks(vec![], vec![]),
            tracks(vec![walk([0.0, 0.0], [1.0, 0.0], 3)], vec![vec![0]]),
        ] {
            let s = group_stats(&t);
            assert_eq!((s.walkers_in_groups, s.share_in_groups, s.groups), (0, 0.0, 0));
            assert!(s.sizes.is_empty());
            assert_eq!((s.pair_share, s.group_speed, s.speed_ratio), (None, None, None));
            assert_eq!(s.pairs, FormationStats::default());
            let json = serde_json::to_string(&s).unwrap();
            assert!(!json.contains("NaN") && !json.contains("inf"), "{json}");
            assert_eq!(serde_json::from_str::<GroupStats>(&json).unwrap(), s);
        }
    }

    #[test]
    fn groups_slower_than_singles_and_standing_left_out() {
        // The pair walks at 1.0 m/s, the single at 1.25 m/s; both stand
        // still for as long again (not walking: not counted).
        let stop_and_go = |y: f64, v: f64| {
            let mut s = walk([0.0, y], [v, 0.0], 10);
            let last = s[9].1;
            s.extend((10..20).map(|k| (k, last)));
            s
        };
        let t = tracks(vec![stop_and_go(0.0, 1.0), stop_and_go(0.75, 1.0), stop_and_go(4.0, 1.25)], vec![vec![0, 1]]);
        let s = group_stats(&t);
        assert!(close(s.group_speed.unwrap(), 1.0, 1e-12) && close(s.single_speed.unwrap(), 1.25, 1e-12));
        assert!(close(s.speed_ratio.unwrap(), 0.8, 1e-12));
        // Standing samples are no formation samples either.
        assert_eq!(s.pairs.spacing.unwrap().count, 9);
    }

    #[test]
    fn gaps_and_missing_members_give_no_sample() {
        // Walker 1 misses samples 3 and 4: intervals [2,3], [3,4], [4,5]
        // have no formation sample; its speed over the gap is none either.
        let mut b = walk([0.0, 0.8], [1.0, 0.0], 10);
        b.retain(|s| s.0 != 3 && s.0 != 4);
        let s = group_stats(&tracks(vec![walk([0.0, 0.0], [1.0, 0.0], 10), b], vec![vec![0, 1]]));
        assert_eq!(s.pairs.spacing.unwrap().count, 9 - 3);
    }

    #[test]
    fn obsmat_and_groups_parse_with_their_frame_step() {
        // Frames every 10, ids 7 and 9 a pair walking abreast +y, id 8 alone;
        // x z y vx vz vy.
        let mut obsmat = String::new();
        for k in 0..5 {
            let f = 1 + 10 * k;
            let y = 0.5 * k as f64;
            obsmat +=
                &format!("{f} 7 1.0 0 {y} 0 0 1.25\n{f} 9 1.75 0 {y} 0 0 1.25\n{f} 8 5 0 {} 0 0 1.5\n", 0.6 * k as f64);
        }
        let t = parse_scene(&obsmat, "obsmat.txt", "9 7\n\n", "groups.txt").unwrap();
        assert_eq!((t.step, t.walkers.len(), t.groups.clone()), (10, 3, vec![vec![2, 0]]));
        let s = group_stats(&t);
        assert!(close(s.pairs.spacing.unwrap().p50, 0.75, 1e-12));
        assert!(close(s.group_speed.unwrap(), 1.25, 1e-12) && close(s.single_speed.unwrap(), 1.5, 1e-12));
        let e = parse_scene(&obsmat, "obsmat.txt", "7 9\n7 4\n", "groups.txt").unwrap_err().to_string();
        assert!(e.contains("groups.txt:2") && e.contains("id 4"), "{e}");
        let e = parse_scene("1 2 3 4\n", "o.txt", "", "g.txt").unwrap_err().to_string();
        assert!(e.contains("o.txt:1") && e.contains("expected 8"), "{e}");
    }

    #[test]
    fn the_shipped_table_parses_and_is_consistent() {
        let r = GroupReference::shipped_ref();
        let names: Vec<&str> = r.scenes.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["eth", "students03", "zara01", "zara02"]);
        for sc in &r.scenes {
            let s = &sc.stats;
            assert!(sc.source.contains("OpenTraj"), "{}", sc.name);
            assert_eq!(s.sizes.values().sum::<usize>(), s.groups, "{}", sc.name);
            assert_eq!(s.sizes.iter().map(|(k, c)| k * c).sum::<usize>(), s.walkers_in_groups, "{}", sc.name);
            assert!(close(s.share_in_groups, s.walkers_in_groups as f64 / s.walkers as f64, 1e-12));
            assert!((s.sample_interval - OBSMAT_SAMPLE_INTERVAL).abs() < 1e-12);
            for f in [s.pairs, s.triads] {
                let (sp, an) = (f.spacing.unwrap(), f.angle_deg.unwrap());
                assert!(sp.p10 <= sp.p50 && sp.p50 <= sp.p90 && an.p10 <= an.p50 && an.p50 <= an.p90);
                assert!(an.p90 <= 90.0 && sp.count > 100, "{}: {sp:?}", sc.name);
            }
        }
    }

    /// The shipped numbers are what the shared data gives (when present),
    /// and they bear out what issue 31 states of real groups.
    #[test]
    fn the_shipped_table_is_recomputed_from_the_data() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/pedestrians/groups");
        if !dir.is_dir() {
            eprintln!("SKIPPED: {} is absent", dir.display());
            return;
        }
        let mut scenes: Vec<std::path::PathBuf> =
            std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
        scenes.sort();
        let refs: Vec<&Path> = scenes.iter().map(|p| p.as_path()).collect();
        let again = build_group_reference(&refs).unwrap();
        assert_eq!(
            &again,
            GroupReference::shipped_ref(),
            "re-run `crowdpatch realism --write-group-reference data/groups.json ../shared/data/pedestrians/groups/*`"
        );
        for sc in &again.scenes {
            let s = &sc.stats;
            let (pair, triad) = (s.pairs.spacing.unwrap(), s.triads.spacing.unwrap());
            let angle = s.pairs.angle_deg.unwrap();
            let ratio = s.speed_ratio.unwrap();
            eprintln!(
                "{}: {} walkers, {:.1} % in groups, sizes {:?}, pairs {:.0} % of groups; pairs {:.2} m (p10 {:.2}, \
                 p90 {:.2}) at {:.1}°; triads {:.2} m at {:.1}°; speed {:.2} vs {:.2} m/s ({:.1} % slower)",
                sc.name,
                s.walkers,
                100.0 * s.share_in_groups,
                s.sizes,
                100.0 * s.pair_share.unwrap(),
                pair.p50,
                pair.p10,
                pair.p90,
                angle.p50,
                triad.p50,
                s.triads.angle_deg.unwrap().p50,
                s.group_speed.unwrap(),
                s.single_speed.unwrap(),
                100.0 * (1.0 - ratio)
            );
            // Issue 31: 44–69 % of walkers in groups.
            assert!((0.435..0.695).contains(&s.share_in_groups), "{}: share {}", sc.name, s.share_in_groups);
            // Pairs are the most common group everywhere (issue: 70–90 % of
            // groups; eth has 62 %, its group lines overlap most).
            assert!(s.sizes.values().all(|&c| c <= s.sizes[&2]), "{}: {:?}", sc.name, s.sizes);
            assert!((0.6..=0.9).contains(&s.pair_share.unwrap()), "{}", sc.name);
            // Issue 31's judging range of the pairs' spacing median
            // (0.6–0.95 m; its statement, 0.7–0.9 m, misses students03's
            // 0.68), p10 ≥ 0.47 m and the median angle in 67–80°.
            assert!((0.6..=0.95).contains(&pair.p50) && pair.p10 >= 0.47, "{}: {pair:?}", sc.name);
            assert!((67.0..=80.0).contains(&angle.p50), "{}: {angle:?}", sc.name);
            // Groups walk slower than people alone (issue: 5–12 %).
            assert!(ratio < 0.95, "{}: ratio {ratio}", sc.name);
        }
        // The densest scene (students03) is the least abreast.
        let least = again
            .scenes
            .iter()
            .min_by(|a, b| a.stats.pairs.angle_deg.unwrap().p50.total_cmp(&b.stats.pairs.angle_deg.unwrap().p50));
        assert_eq!(least.unwrap().name, "students03");
    }

    proptest! {
        /// Any pair walking straight at any heading, speed, spacing and
        /// angle of their line to the walking direction measures that
        /// spacing and angle at every sample.
        #[test]
        fn a_pair_in_any_formation_measures_its_spacing_and_angle(
            heading in -3.2f64..3.2, speed in 0.35f64..2.5, gap in 0.2f64..3.0, angle in 0.0f64..90.0,
            x in -50.0f64..50.0, y in -50.0f64..50.0,
        ) {
            let u = [heading.cos(), heading.sin()];
            let phi = heading + angle.to_radians();
            let e = [gap * phi.cos(), gap * phi.sin()];
            let v = [speed * u[0], speed * u[1]];
            let t = tracks(vec![walk([x, y], v, 8), walk([x + e[0], y + e[1]], v, 8)], vec![vec![0, 1]]);
            let s = group_stats(&t);
            let (sp, an) = (s.pairs.spacing.unwrap(), s.pairs.angle_deg.unwrap());
            prop_assert_eq!(sp.count, 7);
            prop_assert!(close(sp.p10, gap, 1e-9) && close(sp.p90, gap, 1e-9), "{:?}", sp);
            // acos loses digits near 0°: 1e-9 in cos is 2.6e-3° there.
            prop_assert!(close(an.p10, angle, 5e-3) && close(an.p90, angle, 5e-3), "{:?} vs {}", an, angle);
            // No one walks alone: no ratio.
            prop_assert_eq!(s.speed_ratio, None);
        }

        /// Whatever the annotation, the merged groups partition the walkers
        /// in groups: share and sizes agree with the membership.
        #[test]
        fn share_and_sizes_agree_with_any_membership(
            n in 0usize..30, groups in proptest::collection::vec(proptest::collection::vec(0usize..35, 0..5), 0..10),
        ) {
            let walkers: Vec<_> = (0..n).map(|i| walk([0.0, i as f64], [1.0, 0.0], 3)).collect();
            let s = group_stats(&tracks(walkers, groups.clone()));
            let merged = merge_groups(n, &groups);
            let mut seen = vec![0usize; n];
            for g in &merged {
                prop_assert!(g.len() >= 2 && g.windows(2).all(|w| w[0] < w[1]));
                for &w in g { seen[w] += 1; }
            }
            prop_assert!(seen.iter().all(|&c| c <= 1), "a walker in two groups");
            prop_assert_eq!(s.walkers_in_groups, seen.iter().sum::<usize>());
            prop_assert_eq!(s.sizes.values().sum::<usize>(), s.groups);
            prop_assert_eq!(s.sizes.iter().map(|(k, c)| k * c).sum::<usize>(), s.walkers_in_groups);
            prop_assert!((0.0..=1.0).contains(&s.share_in_groups));
            // The members in range of every annotated group of two or more
            // distinct walkers end in one group.
            for g in groups.iter().map(|g| g.iter().filter(|&&w| w < n).collect::<std::collections::BTreeSet<_>>()) {
                let g: Vec<&usize> = g.into_iter().collect();
                if g.len() >= 2 {
                    let home = merged.iter().position(|m| m.contains(g[0])).unwrap();
                    prop_assert!(g.iter().all(|w| merged[home].contains(w)));
                }
            }
        }
    }
}
