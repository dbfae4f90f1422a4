//! What the editor derives from the document, recomputed when its revision
//! changes: the four sides' points (side frame, whatever their source), the
//! validation problems and the resolved patch, obstacle clearance warnings,
//! the seams that do not tile, and the problems of each point and obstacle,
//! found from each problem's typed target (never from its message).

use crate::edit::{self, ClearanceWarning, PointId, SideSource, SideView};
use crowdpatch::model::{DEFAULT_COMFORT_SPEED, Direction, Patch, PatchDocument, Pattern, Side};
use crowdpatch::problem::{Problem, Target};
use std::collections::HashMap;
use std::path::Path;

/// Derived from the document at one revision.
#[derive(Debug, Clone)]
pub struct Derived {
    /// The side views (side-frame points), by side index.
    pub sides: [SideView; 4],
    /// Every validation problem of the document.
    pub problems: Vec<Problem>,
    /// The resolved patch, when the document is valid.
    pub resolved: Option<Patch>,
    /// Obstacle clearance warnings.
    pub warnings: Vec<ClearanceWarning>,
    /// Per side, the points with no mirror partner on the opposite side
    /// (tiling with itself).
    pub seams: [Vec<(Direction, usize)>; 4],
    /// "Does not tile with itself" and where, when the resolved document's
    /// copies would not meet across their seams
    /// ([`crowdpatch::validate::self_tiling_note`]: what the CLI and the
    /// report say too); `None` when it tiles or does not resolve.
    pub tiling: Option<String>,
    /// The problems of each boundary point (both points of an inseparable
    /// pair have it).
    pub point_problems: HashMap<PointId, Vec<String>>,
    /// The problems of each obstacle.
    pub obstacle_problems: HashMap<usize, Vec<String>>,
    /// The revision this was derived from.
    revision: Option<u64>,
}

impl Default for Derived {
    fn default() -> Self {
        Derived {
            sides: std::array::from_fn(|_| SideView { pattern: Pattern::empty(16.0, 10.0), source: SideSource::Empty }),
            problems: vec![],
            resolved: None,
            warnings: vec![],
            seams: Default::default(),
            tiling: None,
            point_problems: HashMap::new(),
            obstacle_problems: HashMap::new(),
            revision: None,
        }
    }
}

impl Derived {
    /// Forces the next [`Derived::refresh`] to recompute (the document's
    /// folder changed, so pattern references resolve elsewhere).
    pub fn invalidate(&mut self) {
        self.revision = None;
    }

    /// Recomputes everything from `doc` at `revision` (pattern references
    /// resolve against `base`), unless already derived from that revision.
    pub fn refresh(&mut self, doc: &PatchDocument, revision: u64, base: &Path) {
        if self.revision == Some(revision) {
            return;
        }
        self.sides = std::array::from_fn(|k| edit::side_view(doc, Side::from_index(k), base));
        (self.resolved, self.problems) = match doc.resolve(None, base) {
            Ok(p) => (Some(p), vec![]),
            Err(problems) => (None, problems),
        };
        self.warnings = edit::clearance_warnings(doc);
        self.tiling = self.resolved.as_ref().and_then(crowdpatch::validate::self_tiling_note);
        let comfort = doc.comfort_speed.unwrap_or(DEFAULT_COMFORT_SPEED);
        self.seams = std::array::from_fn(|k| {
            let side = Side::from_index(k);
            edit::seam_mismatches_of(
                &self.sides[k].pattern,
                &self.sides[side.opposite().index()].pattern,
                doc.period,
                comfort,
                1e-6,
            )
        });
        self.point_problems.clear();
        self.obstacle_problems.clear();
        for p in &self.problems {
            match p.target {
                Target::Point(id) | Target::PointPair(id, _) => {
                    self.point_problems.entry(id).or_default().push(p.message.clone())
                }
                Target::Obstacle(k) => {
                    self.obstacle_problems.entry(k).or_default().push(format!("{} {}", p.path, p.message))
                }
                _ => {}
            }
        }
        // An inseparable pair: the other point has the problem too, with the
        // path of the first (the message names the second).
        for p in &self.problems {
            if let Target::PointPair(_, other) = p.target {
                self.point_problems.entry(other).or_default().push(format!("{} {}", p.path, p.message));
            }
        }
        self.revision = Some(revision);
    }

    /// The clearance warnings about obstacle `k`.
    pub fn warnings_of(&self, k: usize) -> impl Iterator<Item = &ClearanceWarning> {
        self.warnings.iter().filter(move |w| w.obstacle == k || w.other == Some(k))
    }
}
