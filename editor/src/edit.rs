//! Editing operations on the saved document ([`PatchDocument`]): reading a
//! side's points whatever their source (inline or a pattern file), turning a
//! referenced side into an inline one before it is edited, adding, moving and
//! deleting boundary points, and re-basing pattern references when the
//! document moves. (Validation problems carry their own typed target,
//! `crowdpatch::problem::Target`.)
//!
//! Frames: an inline side of a patch document stores velocities in the patch
//! frame; a pattern file stores them in its side frame (`crowdpatch::model`).
//! Arc positions `s` `[m]` and times `t` `[s]` are the same in both.

use crowdpatch::model::{BoundaryPoint, Direction, Obstacle, PatchDocument, Pattern, Side, SideDocument};
use std::path::{Path, PathBuf};

/// A boundary point of the document (the core's id, re-exported).
pub use crowdpatch::model::PointId;

/// Where a side's points come from.
#[derive(Debug, Clone, PartialEq)]
pub enum SideSource {
    /// No points (the side is left out).
    Empty,
    /// Written inline in the document.
    Inline,
    /// A pattern file, relative to the document's directory.
    File(String),
    /// A pattern file that could not be loaded, and why.
    Missing(String, String),
}

/// The points of one side as the editor shows them: `s` and `t` of every
/// entry and exit, velocities in the **side frame** (x along the side, y
/// inward), and where they come from.
#[derive(Debug, Clone, PartialEq)]
pub struct SideView {
    /// The points (side-frame velocities).
    pub pattern: Pattern,
    /// Their source.
    pub source: SideSource,
}

/// Reads the points of `side`; pattern references resolve against `base_dir`
/// (the document's directory).
pub fn side_view(doc: &PatchDocument, side: Side, base_dir: &Path) -> SideView {
    let empty = Pattern::empty(doc.size, doc.period);
    match doc.sides.get(side) {
        None => SideView { pattern: empty, source: SideSource::Empty },
        Some(d) => match &d.pattern {
            Some(rel) => match crowdpatch::document::load_pattern(&base_dir.join(rel)) {
                Ok(p) => SideView { pattern: p, source: SideSource::File(rel.clone()) },
                Err(e) => SideView {
                    pattern: empty,
                    source: SideSource::Missing(rel.clone(), e.to_string().lines().next().unwrap_or("").to_string()),
                },
            },
            None => SideView {
                pattern: Pattern {
                    name: d.name.clone(),
                    length: doc.size,
                    period: doc.period,
                    entries: d.entries.clone().unwrap_or_default(),
                    exits: d.exits.clone().unwrap_or_default(),
                }
                .rotated(-(side.index() as i32)),
                source: SideSource::Inline,
            },
        },
    }
}

/// Makes `side` inline and returns it: a pattern reference is replaced by a
/// copy of the file's points (velocities turned into the patch frame), a
/// missing side becomes an empty inline one. The points keep their `s`, `t`
/// and world velocity, so the bake is unchanged.
pub fn inline_side<'a>(doc: &'a mut PatchDocument, side: Side, base_dir: &Path) -> &'a mut SideDocument {
    let view = side_view(doc, side, base_dir);
    let slot = doc.sides.slot_mut(side);
    let needs = match slot {
        None => true,
        Some(d) => d.pattern.is_some(),
    };
    if needs {
        let p = view.pattern.rotated(side.index() as i32);
        *slot = Some(SideDocument {
            pattern: None,
            name: p.name.clone(),
            length: None,
            period: None,
            entries: Some(p.entries),
            exits: Some(p.exits),
        });
    }
    let d = slot.as_mut().expect("just made inline");
    d.entries.get_or_insert_with(Vec::new);
    d.exits.get_or_insert_with(Vec::new);
    d
}

/// Sets `side` to an inline copy of `pattern` (side-frame velocities, as in a
/// pattern file).
pub fn set_side_inline(doc: &mut PatchDocument, side: Side, pattern: &Pattern) {
    let p = pattern.rotated(side.index() as i32);
    *doc.sides.slot_mut(side) = Some(SideDocument {
        pattern: None,
        name: p.name.clone(),
        length: None,
        period: None,
        entries: Some(p.entries),
        exits: Some(p.exits),
    });
}

/// The points of one direction of an inline side (created if needed).
fn points_mut<'a>(
    doc: &'a mut PatchDocument,
    side: Side,
    direction: Direction,
    base: &Path,
) -> &'a mut Vec<BoundaryPoint> {
    let d = inline_side(doc, side, base);
    match direction {
        Direction::Entry => d.entries.as_mut().expect("inline"),
        Direction::Exit => d.exits.as_mut().expect("inline"),
    }
}

/// Adds a point at `(s, t)` (clamped to `[0, L] × [0, π)`) with the default
/// velocity; returns its id.
pub fn add_point(doc: &mut PatchDocument, side: Side, direction: Direction, s: f64, t: f64, base: &Path) -> PointId {
    let (s, t) = clamp_st(doc, s, t);
    let pts = points_mut(doc, side, direction, base);
    pts.push(BoundaryPoint { s, t, velocity: None, group: None });
    PointId { side, direction, index: pts.len() - 1 }
}

/// Moves a point to `(s, t)` (clamped). Returns `false` when it does not exist.
pub fn move_point(doc: &mut PatchDocument, id: PointId, s: f64, t: f64, base: &Path) -> bool {
    let (s, t) = clamp_st(doc, s, t);
    let pts = points_mut(doc, id.side, id.direction, base);
    match pts.get_mut(id.index) {
        Some(p) => {
            p.s = s;
            p.t = t;
            true
        }
        None => false,
    }
}

/// Deletes a point. Returns `false` when it does not exist.
pub fn delete_point(doc: &mut PatchDocument, id: PointId, base: &Path) -> bool {
    let pts = points_mut(doc, id.side, id.direction, base);
    if id.index < pts.len() {
        pts.remove(id.index);
        true
    } else {
        false
    }
}

/// Makes the point at `id` walk with the nearest point of its side and
/// direction that crosses within [`crowdpatch::validate::GROUP_SPACING`]
/// along the side and [`crowdpatch::validate::GROUP_TIME_SPAN`] in time
/// (periodic): it joins that point's walking group, or both start a new
/// one (the side's largest id + 1). Returns the group id.
///
/// # Errors
/// No such point, it already walks in a group, or no point is near enough
/// (the sentence says which). The document is then unchanged.
pub fn join_nearest(doc: &mut PatchDocument, id: PointId, base: &Path) -> Result<u32, String> {
    use crowdpatch::validate::{GROUP_SPACING, GROUP_TIME_SPAN, MAX_GROUP_SIZE};
    let pi = doc.period;
    let view = side_view(doc, id.side, base);
    let pts = view.pattern.points(id.direction);
    let Some(me) = pts.get(id.index).copied() else { return Err(format!("{} does not exist", id.path())) };
    if let Some(g) = me.group {
        return Err(format!("{} already walks in group {g}", id.path()));
    }
    let dt = |a: f64, b: f64| crowdpatch::matching::periodic_offset(a - b, pi).abs();
    let size = |g: u32| pts.iter().filter(|b| b.group == Some(g)).count();
    let nearest = pts
        .iter()
        .enumerate()
        .filter(|&(k, b)| {
            k != id.index
                && (b.s - me.s).abs() <= GROUP_SPACING
                && dt(b.t, me.t) <= GROUP_TIME_SPAN
                && b.group.is_none_or(|g| size(g) < MAX_GROUP_SIZE)
        })
        .min_by(|a, b| {
            let d = |p: &BoundaryPoint| (p.s - me.s).abs() + dt(p.t, me.t);
            d(a.1).total_cmp(&d(b.1))
        })
        .map(|(k, b)| (k, b.group));
    let Some((other, group)) = nearest else {
        return Err(format!(
            "no other {} of the {} side crosses within {GROUP_SPACING} m and {GROUP_TIME_SPAN} s of {} to walk with",
            if id.direction == Direction::Entry { "entry" } else { "exit" },
            id.side.name(),
            id.path()
        ));
    };
    let group = group.unwrap_or_else(|| pts.iter().filter_map(|b| b.group).max().map_or(1, |g| g + 1));
    let pts = points_mut(doc, id.side, id.direction, base);
    pts[id.index].group = Some(group);
    pts[other].group = Some(group);
    Ok(group)
}

/// Makes the point at `id` walk alone (its group id removed; the other
/// members keep theirs). Returns `false` when it does not exist or walks
/// alone already.
pub fn leave_group(doc: &mut PatchDocument, id: PointId, base: &Path) -> bool {
    let view = side_view(doc, id.side, base);
    if view.pattern.points(id.direction).get(id.index).is_none_or(|b| b.group.is_none()) {
        return false;
    }
    points_mut(doc, id.side, id.direction, base)[id.index].group = None;
    true
}

/// The point, if it exists (inline sides only; velocity in the patch frame).
pub fn point(doc: &PatchDocument, id: PointId) -> Option<&BoundaryPoint> {
    let d = doc.sides.get(id.side)?;
    let v = match id.direction {
        Direction::Entry => d.entries.as_ref()?,
        Direction::Exit => d.exits.as_ref()?,
    };
    v.get(id.index)
}

/// Mutable access to an inline point (velocity in the patch frame).
pub fn point_mut(doc: &mut PatchDocument, id: PointId) -> Option<&mut BoundaryPoint> {
    let d = doc.sides.slot_mut(id.side).as_mut()?;
    let v = match id.direction {
        Direction::Entry => d.entries.as_mut()?,
        Direction::Exit => d.exits.as_mut()?,
    };
    v.get_mut(id.index)
}

/// What of the document lies beyond a side length `l` `[m]`: inline
/// boundary points with s > l, obstacles reaching past l, endogenous
/// waypoints past l, each named by its field path (`sides.east.entries[2]`,
/// `obstacles[0]`, `endogenous[1].waypoints[3]`); the first few, then how
/// many more. Empty when a patch of side `l` holds everything. O(items).
pub fn beyond(doc: &PatchDocument, l: f64) -> Vec<String> {
    let mut out = Vec::new();
    for side in Side::ALL {
        let Some(d) = doc.sides.get(side) else { continue };
        for (field, points) in [("entries", &d.entries), ("exits", &d.exits)] {
            for (i, b) in points.iter().flatten().enumerate() {
                if b.s > l {
                    out.push(format!("sides.{}.{field}[{i}] (s = {} m)", side.name(), b.s));
                }
            }
        }
    }
    for (k, o) in doc.obstacles.iter().enumerate() {
        let reach = match o {
            Obstacle::Circle { center, radius } => (center[0].max(center[1])) + radius,
            Obstacle::Polygon(vs) => vs.iter().map(|v| v[0].max(v[1])).fold(f64::NEG_INFINITY, f64::max),
        };
        if reach > l {
            out.push(format!("obstacles[{k}] (reaches {reach} m)"));
        }
    }
    for (k, e) in doc.endogenous.iter().enumerate() {
        for (i, w) in e.waypoints.iter().enumerate() {
            if w.position[0].max(w.position[1]) > l {
                out.push(format!("endogenous[{k}].waypoints[{i}]"));
            }
        }
    }
    if out.len() > 4 {
        let more = out.len() - 4;
        out.truncate(4);
        out.push(format!("{more} more"));
    }
    out
}

/// `s` clamped to `[0, L]` and `t` wrapped into `[0, π)`.
pub fn clamp_st(doc: &PatchDocument, s: f64, t: f64) -> (f64, f64) {
    let s = if s.is_finite() { s.clamp(0.0, doc.size) } else { 0.0 };
    let mut t = if t.is_finite() { t.rem_euclid(doc.period) } else { 0.0 };
    if t >= doc.period {
        t = 0.0;
    }
    (s, t)
}

/// Rounds `v` to the nearest multiple of `step` (unchanged when `step ≤ 0`).
pub fn snap(v: f64, step: f64) -> f64 {
    if step > 0.0 { (v / step).round() * step } else { v }
}

/// Makes the patch tile with itself: the north side becomes the mirror of the
/// south side and the west side the mirror of the east side (docs/design.md "Mirror
/// rule"), so that the patch's copies meet across every seam.
pub fn make_tileable(doc: &mut PatchDocument, base: &Path) {
    for (from, to) in [(Side::South, Side::North), (Side::East, Side::West)] {
        let p = side_view(doc, from, base).pattern;
        let mut m = p.mirror();
        m.name = None;
        set_side_inline(doc, to, &m);
    }
}

/// How the side `side` meets the opposite side of a copy of the same patch
/// (tiling with itself): the points of `side` that have no mirror partner on
/// the opposite side, by index, as `(direction, index)`; empty when the seam
/// is seamless. Positions, times and velocities match within `tol`
/// (`[m]`, `[s]`, `[m/s]`).
pub fn seam_mismatches(doc: &PatchDocument, side: Side, base: &Path, tol: f64) -> Vec<(Direction, usize)> {
    let here = side_view(doc, side, base).pattern;
    let opposite = side_view(doc, side.opposite(), base).pattern;
    let comfort = doc.comfort_speed.unwrap_or(crowdpatch::model::DEFAULT_COMFORT_SPEED);
    seam_mismatches_of(&here, &opposite, doc.period, comfort, tol)
}

/// [`seam_mismatches`] for two side-frame patterns: the core's
/// [`crowdpatch::validate::mirror_mismatches`].
pub use crowdpatch::validate::mirror_mismatches as seam_mismatches_of;

/// A clearance warning about obstacles: a gap between two obstacles, or
/// between an obstacle and a side of the patch, narrower than 2r, that agents
/// cannot pass through (not an error: the bake routes around).
#[derive(Debug, Clone, PartialEq)]
pub struct ClearanceWarning {
    /// The obstacle.
    pub obstacle: usize,
    /// The other obstacle, or `None` for a side of the patch.
    pub other: Option<usize>,
    /// The gap `[m]`.
    pub gap: f64,
    /// What to tell the user.
    pub message: String,
}

/// Gaps narrower than 2r = `2 * radius` between obstacles and between an
/// obstacle and the patch's sides (a gap of 0, touching or overlapping, is not
/// reported: no one expects to pass there).
pub fn clearance_warnings(doc: &PatchDocument) -> Vec<ClearanceWarning> {
    let r = doc.agent_radius.unwrap_or(crowdpatch::model::DEFAULT_AGENT_RADIUS);
    let l = doc.size;
    let mut out = Vec::new();
    let samples: Vec<Vec<[f64; 2]>> = doc.obstacles.iter().map(outline).collect();
    for (i, a) in samples.iter().enumerate() {
        if a.is_empty() {
            continue;
        }
        // To the border (only where the obstacle is inside the patch).
        let border = a.iter().map(|p| p[0].min(p[1]).min(l - p[0]).min(l - p[1])).fold(f64::INFINITY, f64::min);
        if border > 1e-6 && border < 2.0 * r {
            out.push(ClearanceWarning {
                obstacle: i,
                other: None,
                gap: border,
                message: format!(
                    "obstacles[{i}] leaves a gap of {border:.2} m to the patch's side, less than 2r = {:.2} m: no agent passes there",
                    2.0 * r
                ),
            });
        }
        for (j, b) in samples.iter().enumerate().skip(i + 1) {
            if b.is_empty() {
                continue;
            }
            let gap = a
                .iter()
                .map(|p| {
                    crowdpatch::geometry::obstacle_signed_distance(crowdpatch::geometry::v2(*p), &doc.obstacles[j]).0
                })
                .fold(f64::INFINITY, f64::min);
            if gap > 1e-6 && gap < 2.0 * r {
                out.push(ClearanceWarning {
                    obstacle: i,
                    other: Some(j),
                    gap,
                    message: format!(
                        "obstacles[{i}] and obstacles[{j}] are {gap:.2} m apart, less than 2r = {:.2} m: no agent passes between them",
                        2.0 * r
                    ),
                });
            }
        }
    }
    out
}

/// Points on the outline of an obstacle (edges sampled every 5 cm).
fn outline(o: &Obstacle) -> Vec<[f64; 2]> {
    match o {
        Obstacle::Circle { center, radius } => {
            if !(radius.is_finite() && *radius > 0.0) {
                return vec![];
            }
            let n = ((std::f64::consts::TAU * radius / 0.05).ceil() as usize).clamp(16, 2048);
            (0..n)
                .map(|k| {
                    let a = std::f64::consts::TAU * k as f64 / n as f64;
                    [center[0] + radius * a.cos(), center[1] + radius * a.sin()]
                })
                .collect()
        }
        Obstacle::Polygon(vs) => {
            let mut out = Vec::new();
            for (k, a) in vs.iter().enumerate() {
                let b = vs[(k + 1) % vs.len()];
                let len = ((b[0] - a[0]).hypot(b[1] - a[1]) / 0.05).ceil().clamp(1.0, 4096.0) as usize;
                for m in 0..len {
                    let u = m as f64 / len as f64;
                    out.push([a[0] + (b[0] - a[0]) * u, a[1] + (b[1] - a[1]) * u]);
                }
            }
            out
        }
    }
}

/// Pattern references are relative to the document's directory: when the
/// document moves from `old_base` to `new_base`, re-bases every reference, or
/// copies the side inline when no relative path leads to its file. Returns
/// whether the document changed.
pub fn rebase_references(doc: &mut PatchDocument, old_base: &Path, new_base: &Path) -> bool {
    if absolute(old_base) == absolute(new_base) {
        return false;
    }
    let mut changed = false;
    for side in Side::ALL {
        if let Some(d) = doc.sides.slot_mut(side)
            && let Some(rel) = &d.pattern
        {
            match relative_path(&old_base.join(rel), new_base) {
                Some(r) => {
                    changed |= *rel != r;
                    d.pattern = Some(r);
                }
                None => {
                    inline_side(doc, side, old_base);
                    changed = true;
                }
            }
        }
    }
    changed
}

/// A path `to` written relative to the directory `from` (with `..` where
/// needed), `/`-separated; `None` when they share no root.
pub fn relative_path(to: &Path, from: &Path) -> Option<String> {
    let to = absolute(to);
    let from = absolute(from);
    let a: Vec<_> = to.components().collect();
    let b: Vec<_> = from.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    if common == 0 {
        return None;
    }
    let mut parts: Vec<String> = vec!["..".into(); b.len() - common];
    parts.extend(a[common..].iter().map(|c| c.as_os_str().to_string_lossy().into_owned()));
    Some(parts.join("/"))
}

/// The absolute form of `p` (against the current directory), without `.`
/// and with `..` folded where possible.
pub fn absolute(p: &Path) -> PathBuf {
    let base = if p.is_absolute() { PathBuf::new() } else { std::env::current_dir().unwrap_or_default() };
    let mut out = PathBuf::new();
    for c in base.join(p).components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> PatchDocument {
        PatchDocument::new(16.0, 10.0)
    }

    #[test]
    fn points_join_the_nearest_to_walk_together_and_leave_alone() {
        let mut d = doc();
        let base = Path::new(".");
        let a = add_point(&mut d, Side::South, Direction::Entry, 4.0, 1.0, base);
        let b = add_point(&mut d, Side::South, Direction::Entry, 4.8, 9.5, base);
        let c = add_point(&mut d, Side::South, Direction::Entry, 10.0, 5.0, base);
        let x = add_point(&mut d, Side::South, Direction::Exit, 4.4, 1.0, base);
        // The nearest entry (across the period's end: 1.5 s apart), not the exit.
        assert_eq!(join_nearest(&mut d, a, base), Ok(1));
        assert_eq!((point(&d, a).unwrap().group, point(&d, b).unwrap().group), (Some(1), Some(1)));
        assert_eq!((point(&d, c).unwrap().group, point(&d, x).unwrap().group), (None, None));
        // Too far from anyone: an error naming the point, nothing changed.
        let before = d.clone();
        let e = join_nearest(&mut d, c, base).unwrap_err();
        assert!(e.contains("sides.south.entries[2]") && e.contains("1.5 m"), "{e}");
        assert!(join_nearest(&mut d, a, base).unwrap_err().contains("already walks in group 1"));
        assert_eq!(d, before);
        // A third member joins the group of its nearest.
        let n = add_point(&mut d, Side::South, Direction::Entry, 5.6, 9.0, base);
        assert_eq!(join_nearest(&mut d, n, base), Ok(1));
        // Leaving touches the one point only.
        assert!(leave_group(&mut d, b, base));
        assert_eq!(point(&d, b).unwrap().group, None);
        assert_eq!((point(&d, a).unwrap().group, point(&d, n).unwrap().group), (Some(1), Some(1)));
        assert!(!leave_group(&mut d, b, base));
    }

    #[test]
    fn add_move_delete_round_trip() {
        let mut d = doc();
        let base = Path::new(".");
        let id = add_point(&mut d, Side::East, Direction::Entry, 3.0, 12.5, base);
        assert_eq!(id.index, 0);
        // t wraps into the period.
        assert_eq!(point(&d, id).map(|p| (p.s, p.t)), Some((3.0, 2.5)));
        assert!(move_point(&mut d, id, 40.0, -1.0, base));
        assert_eq!(point(&d, id).map(|p| (p.s, p.t)), Some((16.0, 9.0)));
        assert!(delete_point(&mut d, id, base));
        assert!(point(&d, id).is_none());
        assert!(!delete_point(&mut d, id, base));
    }

    #[test]
    fn inline_conversion_keeps_world_velocity() {
        let dir = tempfile::tempdir().unwrap();
        let pattern = Pattern {
            name: Some("p".into()),
            length: 16.0,
            period: 10.0,
            entries: vec![BoundaryPoint { s: 2.0, t: 1.0, velocity: Some([0.3, 1.2]), group: None }],
            exits: vec![BoundaryPoint { s: 9.0, t: 4.0, velocity: None, group: None }],
        };
        crowdpatch::document::save_pattern(&pattern, &dir.path().join("p.pattern.json")).unwrap();
        let mut d = doc();
        d.sides.east = Some(SideDocument { pattern: Some("p.pattern.json".into()), ..Default::default() });
        // Another side's exit keeps parity.
        d.sides.west = Some(SideDocument {
            entries: Some(vec![BoundaryPoint { s: 5.0, t: 6.0, velocity: None, group: None }]),
            exits: Some(vec![BoundaryPoint { s: 12.0, t: 2.0, velocity: None, group: None }]),
            ..Default::default()
        });
        let before = d.resolve(None, dir.path()).unwrap();
        inline_side(&mut d, Side::East, dir.path());
        assert!(d.sides.east.as_ref().unwrap().pattern.is_none());
        let after = d.resolve(None, dir.path()).unwrap();
        assert_eq!(before.crossings(), after.crossings());
        // The side view of the inline side gives the side frame back.
        assert_eq!(side_view(&d, Side::East, dir.path()).pattern.entries, pattern.entries);
    }

    #[test]
    fn make_tileable_gives_seamless_seams() {
        let mut d = doc();
        let base = Path::new(".");
        add_point(&mut d, Side::South, Direction::Entry, 4.0, 1.0, base);
        add_point(&mut d, Side::South, Direction::Exit, 11.0, 6.0, base);
        add_point(&mut d, Side::East, Direction::Entry, 8.0, 3.0, base);
        assert!(!seam_mismatches(&d, Side::South, base, 1e-6).is_empty());
        make_tileable(&mut d, base);
        for side in Side::ALL {
            assert!(seam_mismatches(&d, side, base, 1e-6).is_empty(), "{side}");
        }
        // A custom velocity on one side only breaks C¹ continuity: reported.
        let id = PointId { side: Side::South, direction: Direction::Entry, index: 0 };
        point_mut(&mut d, id).unwrap().velocity = Some([0.5, 1.2]);
        assert_eq!(seam_mismatches(&d, Side::South, base, 1e-6), vec![(Direction::Entry, 0)]);
        make_tileable(&mut d, base);
        assert!(seam_mismatches(&d, Side::North, base, 1e-6).is_empty());
        // North now holds the mirror of south: (L − s, t), entries ↔ exits.
        let north = side_view(&d, Side::North, base).pattern;
        assert_eq!(north.exits[0].s, 12.0);
        assert_eq!(north.entries[0].t, 6.0);
    }

    #[test]
    fn narrow_gaps_are_warned() {
        let mut d = doc();
        d.obstacles.push(Obstacle::Circle { center: [5.0, 8.0], radius: 1.0 });
        d.obstacles.push(Obstacle::Circle { center: [7.4, 8.0], radius: 1.0 });
        d.obstacles.push(Obstacle::Polygon(vec![[0.3, 2.0], [2.0, 2.0], [2.0, 3.0], [0.3, 3.0]]));
        let w = clearance_warnings(&d);
        assert!(w.iter().any(|w| w.obstacle == 0 && w.other == Some(1) && (w.gap - 0.4).abs() < 0.01), "{w:?}");
        assert!(w.iter().any(|w| w.obstacle == 2 && w.other.is_none() && (w.gap - 0.3).abs() < 0.01), "{w:?}");
        // A wide gap is fine.
        d.obstacles[1] = Obstacle::Circle { center: [9.0, 8.0], radius: 1.0 };
        assert!(!clearance_warnings(&d).iter().any(|w| w.other == Some(1)));
    }

    #[test]
    fn relative_paths() {
        assert_eq!(
            relative_path(Path::new("/a/patterns/x.pattern.json"), Path::new("/a/patches")).as_deref(),
            Some("../patterns/x.pattern.json")
        );
        assert_eq!(relative_path(Path::new("/a/b/x.json"), Path::new("/a/b")).as_deref(), Some("x.json"));
    }
}
