//! The step library of a character: every annotated step of its locomotion
//! clips and of their mirror images, split by stance foot, with the Delaunay
//! triangulation of their landing positions for barycentric blending
//! (course notes, "Footstep Parameterized Motion Blending using Barycentric
//! Coordinates" §4.1–4.4, eqs. 1–2).

use super::analysis::{ClipAnalysis, PlantThresholds, StepAnnotation, analyse};
#[cfg(doc)]
use super::blend_poses;
use super::{Character, Clip, Pose, Quat, SlerpArc, Transform, V3};
use crowdpatch_runtime::format::Foot;

/// Why a character cannot walk.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LibraryError {
    /// No clip gave a step with this stance foot.
    #[error(
        "character {character}: no clip has a step with the {foot} foot as stance foot; it needs a cyclic walk \
         whose feet plant in turn (clips: {clips})"
    )]
    NoSteps {
        /// Character name.
        character: String,
        /// The foot.
        foot: Foot,
        /// The clips looked at.
        clips: String,
    },
}

/// A step of the library.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LibraryStep {
    /// Its annotations; `annotation.clip` indexes [`StepLibrary::clips`].
    pub annotation: StepAnnotation,
    /// Whether it comes from a mirrored clip.
    pub mirrored: bool,
}

/// Blend weights: `(step index, weight)`, weights summing to 1.
pub type Weights = Vec<(usize, f64)>;

/// A blend's annotations, the weighted means of its steps'.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlendedStep {
    /// Natural duration `[s]`.
    pub duration: f64,
    /// Share of the step before the swing foot lifts off.
    pub lift: f64,
    /// Landing of the swing foot relative to the stance contact, step frame
    /// `[forward, left]` `[m]`.
    pub landing: [f64; 2],
    /// Root displacement, step frame `[m]`.
    pub root_displacement: [f64; 2],
    /// Root at the step's start relative to the stance contact `[m]`.
    pub root_start: [f64; 2],
    /// Heading change `[rad]`.
    pub rotation: f64,
}

/// The range of the natural durations and heading changes of a stance
/// foot's blends ([`StepLibrary::annotation_range`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AnnotationRange {
    /// Least and greatest natural duration `[s]` (at least 1 ms, as the
    /// footstep cost's time warp takes it).
    pub duration: [f64; 2],
    /// Least and greatest heading change `[rad]`.
    pub rotation: [f64; 2],
}

/// The annotated steps of a character.
#[derive(Debug, Clone)]
pub struct StepLibrary {
    /// The character's clips followed by the mirror images of its
    /// locomotion clips.
    pub clips: Vec<Clip>,
    /// The analysis of each clip.
    pub analyses: Vec<ClipAnalysis>,
    /// All steps.
    pub steps: Vec<LibraryStep>,
    /// Step indices by stance foot.
    pub by_foot: [Vec<usize>; 2],
    /// Delaunay triangles of landing positions, by stance foot (step indices).
    triangles: [Vec<[usize; 3]>; 2],
    /// Index of the idle clip in `clips`.
    pub idle: Option<usize>,
    /// Per clip, the slerp arcs between its consecutive frames
    /// ([`Clip::arcs`]), so that sampling takes no arccosine.
    arcs: Vec<Vec<SlerpArc>>,
    /// Per stance foot, the triangles near each cell of a grid over the
    /// landings, for [`StepLibrary::weights`].
    cells: [TriangleGrid; 2],
    /// Per stance foot and triangle, its corners (landings) and bounding box
    /// `[lower, upper]` `[m]`.
    corners: [Vec<Corners>; 2],
}

/// A triangle's corners and bounding box `[lower, upper]` `[m]`.
type Corners = ([[f64; 2]; 3], [[f64; 2]; 2]);

/// Weights as [`StepLibrary::weights`] finds them: those of a triangle
/// (at most three, in place), or of the degenerate search.
enum Found {
    Few([(usize, f64); 3], usize),
    Many(Weights),
}

/// The triangles (indices, increasing) whose bounding box comes within
/// [`TriangleGrid::MARGIN`] of each cell of a uniform grid: a point's cell
/// lists every triangle whose box lies within 1e-9 m of the point, so the
/// search of [`StepLibrary::weights`] that skips the others can skip the
/// triangles not listed.
#[derive(Debug, Clone, Default)]
struct TriangleGrid {
    /// Lower corner `[m]`.
    origin: [f64; 2],
    /// Cell size `[m]` per axis.
    cell: [f64; 2],
    /// Cells per axis.
    size: usize,
    /// Triangle indices per cell, row-major.
    lists: Vec<Vec<usize>>,
}

impl TriangleGrid {
    /// Slack around each triangle's box `[m]`: far above the 1e-9 m the
    /// search tests and the rounding of a cell index.
    const MARGIN: f64 = 1e-6;

    fn new(boxes: &[[[f64; 2]; 2]]) -> TriangleGrid {
        if boxes.is_empty() {
            return TriangleGrid::default();
        }
        let lo = [0, 1].map(|a| boxes.iter().map(|b| b[0][a]).fold(f64::INFINITY, f64::min));
        let hi = [0, 1].map(|a| boxes.iter().map(|b| b[1][a]).fold(f64::NEG_INFINITY, f64::max));
        let size = ((boxes.len() as f64).sqrt().ceil() as usize).clamp(1, 32);
        let cell = [0, 1].map(|a| ((hi[a] - lo[a]) / size as f64).max(1e-9));
        let mut grid = TriangleGrid { origin: lo, cell, size, lists: vec![Vec::new(); size * size] };
        for (i, b) in boxes.iter().enumerate() {
            let from = grid.index([b[0][0] - Self::MARGIN, b[0][1] - Self::MARGIN]);
            let to = grid.index([b[1][0] + Self::MARGIN, b[1][1] + Self::MARGIN]);
            for y in from[1]..=to[1] {
                for x in from[0]..=to[0] {
                    grid.lists[y * size + x].push(i);
                }
            }
        }
        grid
    }

    /// The cell of `p`, clamped into the grid.
    fn index(&self, p: [f64; 2]) -> [usize; 2] {
        [0, 1].map(|a| {
            // floor, clamped (truncation is the floor of a non-negative x).
            let x = (p[a] - self.origin[a]) / self.cell[a];
            if x.is_nan() || x < 0.0 { 0 } else { (x as usize).min(self.size - 1) }
        })
    }

    /// The triangles listed near `p`, or `None` when `p` lies farther than
    /// the margin outside the grid (no triangle's box is within 1e-9 m).
    fn near(&self, p: [f64; 2]) -> Option<&[usize]> {
        if self.size == 0 {
            return None;
        }
        let end = [0, 1].map(|a| self.origin[a] + self.cell[a] * self.size as f64);
        let outside =
            (0..2).any(|a| !(p[a] >= self.origin[a] - Self::MARGIN / 2.0 && p[a] <= end[a] + Self::MARGIN / 2.0));
        if outside {
            return None;
        }
        let [x, y] = self.index(p);
        Some(&self.lists[y * self.size + x])
    }
}

impl StepLibrary {
    /// Analyses every clip of `character` and of its mirror image.
    ///
    /// # Errors
    /// [`LibraryError::NoSteps`] when a foot has no step at all.
    pub fn new(character: &Character) -> Result<StepLibrary, LibraryError> {
        let thresholds = PlantThresholds::default();
        let mut clips = character.clips.clone();
        for (k, clip) in character.clips.iter().enumerate() {
            if Some(k) == character.idle {
                continue;
            }
            let mut m = clip.clone();
            m.name = format!("{} (mirrored)", clip.name);
            m.frames = clip.frames.iter().map(|f| character.mirror_pose(f)).collect();
            clips.push(m);
        }
        let analyses: Vec<ClipAnalysis> =
            clips.iter().enumerate().map(|(k, c)| analyse(character, k, c, &thresholds)).collect();
        let originals = character.clips.len();
        let mut steps: Vec<LibraryStep> = Vec::new();
        for (k, a) in analyses.iter().enumerate() {
            if Some(k) == character.idle {
                continue;
            }
            for s in &a.steps {
                let mirrored = k >= originals;
                // A mirrored step adds nothing where an original step lands
                // within 2 cm (straight walks mirror onto themselves).
                if mirrored
                    && steps.iter().any(|o| {
                        !o.mirrored
                            && o.annotation.stance == s.stance
                            && (o.annotation.landing[0] - s.landing[0]).hypot(o.annotation.landing[1] - s.landing[1])
                                < 0.02
                    })
                {
                    continue;
                }
                steps.push(LibraryStep { annotation: *s, mirrored });
            }
        }
        let mut by_foot: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
        for (i, s) in steps.iter().enumerate() {
            by_foot[s.annotation.stance.index()].push(i);
        }
        for f in Foot::BOTH {
            if by_foot[f.index()].is_empty() {
                return Err(LibraryError::NoSteps {
                    character: character.name.clone(),
                    foot: f,
                    clips: character.clips.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", "),
                });
            }
        }
        let triangles = std::array::from_fn(|f| {
            let ids = &by_foot[f];
            let points: Vec<delaunator::Point> = ids
                .iter()
                .map(|&i| delaunator::Point { x: steps[i].annotation.landing[0], y: steps[i].annotation.landing[1] })
                .collect();
            let t = delaunator::triangulate(&points);
            t.triangles
                .chunks_exact(3)
                .map(|c| [ids[c[0]], ids[c[1]], ids[c[2]]])
                .filter(|tri| area(&steps, *tri).abs() > 1e-6)
                .collect()
        });
        let arcs = clips.iter().map(Clip::arcs).collect();
        let corners: [Vec<Corners>; 2] = std::array::from_fn(|f| {
            let tris: &Vec<[usize; 3]> = &triangles[f];
            tris.iter()
                .map(|t| {
                    let p = t.map(|i| steps[i].annotation.landing);
                    let lo = [0, 1].map(|a| p[0][a].min(p[1][a]).min(p[2][a]));
                    let hi = [0, 1].map(|a| p[0][a].max(p[1][a]).max(p[2][a]));
                    (p, [lo, hi])
                })
                .collect()
        });
        let cells = std::array::from_fn(|f| {
            let boxes: Vec<[[f64; 2]; 2]> = corners[f].iter().map(|c| c.1).collect();
            TriangleGrid::new(&boxes)
        });
        Ok(StepLibrary { clips, analyses, steps, by_foot, triangles, idle: character.idle, arcs, cells, corners })
    }

    /// Landing position of step `i` `[m]`.
    pub fn landing(&self, i: usize) -> [f64; 2] {
        self.steps[i].annotation.landing
    }

    /// Barycentric blend weights of the steps with stance foot `stance`
    /// whose landing positions span the triangle holding `target` (BPK blend
    /// eq. 1); outside the triangulation, the nearest point of it. With fewer
    /// than three usable landings, the nearest point of the segment between
    /// the two nearest, or the nearest step.
    pub fn weights(&self, stance: Foot, target: [f64; 2]) -> Weights {
        match self.weights_found(stance, target) {
            Found::Few(w, len) => w[..len].to_vec(),
            Found::Many(w) => w,
        }
    }

    /// The annotations of the blend of [`StepLibrary::weights`]`(stance,
    /// target)`: [`StepLibrary::blended`] of them, without allocating them.
    pub fn blended_at(&self, stance: Foot, target: [f64; 2]) -> BlendedStep {
        match self.weights_found(stance, target) {
            Found::Few(w, len) => self.blended(&w[..len]),
            Found::Many(w) => self.blended(&w),
        }
    }

    /// [`StepLibrary::weights`], those of a triangle without an allocation.
    fn weights_found(&self, stance: Foot, target: [f64; 2]) -> Found {
        let f = stance.index();
        let tris = &self.triangles[f];
        // A triangle's corners and box, by index.
        let corners = |i: usize| &self.corners[f][i];
        // Distance of `target` from a triangle's bounding box (a lower bound
        // of its distance from the triangle).
        let box_gap = |b: &[[f64; 2]; 2]| {
            let gap = |x: f64, lo: f64, hi: f64| (lo - x).max(x - hi).max(0.0);
            let gx = gap(target[0], b[0][0], b[1][0]);
            let gy = gap(target[1], b[0][1], b[1][1]);
            gx.max(gy)
        };
        let pick = |tri: &[usize; 3], w: [f64; 3]| {
            let mut out = [(0, 0.0); 3];
            let mut len = 0;
            for x in tri.iter().copied().zip(w).filter(|x| x.1 > 1e-9) {
                out[len] = x;
                len += 1;
            }
            Found::Few(out, len)
        };
        // Fast path: the first triangle holding the target, when every
        // triangle before it is farther than 1e-12 m (the scan below picks
        // it then too). A triangle whose box lies more than 1e-9 m away is
        // farther than that without computing its distance.
        // Only the triangles listed near the target can have their box
        // within 1e-9 m of it (none outside the grid; all of them for a
        // target that is not a number, as the box test lets those by).
        let (listed, all) = match self.cells[f].near(target) {
            Some(list) => (list, 0..0),
            None if target.iter().any(|x| x.is_nan()) => (&[][..], 0..tris.len()),
            None => (&[][..], 0..0),
        };
        for i in listed.iter().copied().chain(all) {
            let (t, b) = corners(i);
            if box_gap(b) > 1e-9 {
                continue;
            }
            let (w, d) = closest_in_triangle(*t, target);
            if d == 0.0 {
                return pick(&tris[i], w);
            }
            if d <= 1e-12 {
                break;
            }
        }
        // The scan: the nearest triangle, the first of those within 1e-12 m
        // of each other. A triangle whose bounding box lies farther than the
        // best distance so far cannot be nearer (1e-9 m of slack for
        // rounding): skipped without changing the result.
        let mut best: Option<(f64, usize, [f64; 3])> = None;
        for i in 0..tris.len() {
            let (t, b) = corners(i);
            if let Some((d, _, _)) = best
                && box_gap(b) > d + 1e-9
            {
                continue;
            }
            let (w, d) = closest_in_triangle(*t, target);
            if best.is_none_or(|b| d < b.0 - 1e-12) {
                best = Some((d, i, w));
                if d == 0.0 {
                    break;
                }
            }
        }
        if let Some((_, i, w)) = best {
            return pick(&tris[i], w);
        }
        // Degenerate: segments between any two steps.
        let ids = &self.by_foot[f];
        let mut best: (f64, Weights) = (f64::INFINITY, vec![(ids[0], 1.0)]);
        for (a, &i) in ids.iter().enumerate() {
            let p = self.landing(i);
            let d = (p[0] - target[0]).hypot(p[1] - target[1]);
            if d < best.0 {
                best = (d, vec![(i, 1.0)]);
            }
            for &k in &ids[a + 1..] {
                let q = self.landing(k);
                let (ux, uy) = (q[0] - p[0], q[1] - p[1]);
                let len2 = ux * ux + uy * uy;
                if len2 < 1e-12 {
                    continue;
                }
                let s = (((target[0] - p[0]) * ux + (target[1] - p[1]) * uy) / len2).clamp(0.0, 1.0);
                let d = (p[0] + s * ux - target[0]).hypot(p[1] + s * uy - target[1]);
                if d < best.0 - 1e-12 {
                    best = (d, vec![(i, 1.0 - s), (k, s)]);
                }
            }
        }
        Found::Many(best.1)
    }

    /// The least and greatest natural duration `[s]` and heading change
    /// `[rad]` of a blend of the steps of stance foot `stance`
    /// ([`StepLibrary::blended_at`]'s weights are a convex combination, up
    /// to rounding): those of its steps, widened by a millionth of a second
    /// and of a radian to hold the blends' rounding. O(steps).
    pub fn annotation_range(&self, stance: Foot) -> AnnotationRange {
        let steps = self.by_foot[stance.index()].iter().map(|&i| &self.steps[i].annotation);
        let (mut duration, mut rotation) = ([f64::INFINITY, f64::NEG_INFINITY], [f64::INFINITY, f64::NEG_INFINITY]);
        for a in steps {
            duration = [duration[0].min(a.duration), duration[1].max(a.duration)];
            rotation = [rotation[0].min(a.rotation), rotation[1].max(a.rotation)];
        }
        AnnotationRange {
            duration: [(duration[0] - 1e-6).max(1e-3), (duration[1] + 1e-6).max(1e-3)],
            rotation: [rotation[0] - 1e-6, rotation[1] + 1e-6],
        }
    }

    /// The weighted annotations of a blend.
    pub fn blended(&self, w: &[(usize, f64)]) -> BlendedStep {
        let mut b = BlendedStep {
            duration: 0.0,
            lift: 0.0,
            landing: [0.0; 2],
            root_displacement: [0.0; 2],
            root_start: [0.0; 2],
            rotation: 0.0,
        };
        for &(i, x) in w {
            let a = &self.steps[i].annotation;
            b.duration += x * a.duration;
            b.lift += x * a.lift;
            b.rotation += x * a.rotation;
            for c in 0..2 {
                b.landing[c] += x * a.landing[c];
                b.root_displacement[c] += x * a.root_displacement[c];
                b.root_start[c] += x * a.root_start[c];
            }
        }
        b
    }

    /// The blended pose of a step blend at phase `u ∈ [0, 1]`: each step's
    /// clip sampled at `start + u · duration` (time warp to a common phase),
    /// then blended with the weights.
    ///
    /// The same bits as [`blend_poses`] of the steps' [`Clip::sample`]s,
    /// joint by joint without the intermediate poses, the frames' slerp
    /// arcs precomputed. O(weights · joints).
    pub fn pose(&self, w: &[(usize, f64)], u: f64) -> Pose {
        let mut out = Vec::new();
        self.pose_into(w, u, &mut out);
        out
    }

    /// [`StepLibrary::pose`] into `out` (its allocation reused).
    pub fn pose_into(&self, w: &[(usize, f64)], u: f64, out: &mut Pose) {
        out.clear();
        // Per weight: its clip and the frames to interpolate.
        let frames = |&(i, _): &(usize, f64)| {
            let a = &self.steps[i].annotation;
            let clip = &self.clips[a.clip];
            let t = a.start + u * a.duration;
            if clip.frames.len() == 1 {
                return (a.clip, 0, 0, 0.0);
            }
            let (fa, fb, s) = clip.frames_at(t);
            (a.clip, fa, fb, s)
        };
        let at: Vec<(usize, usize, usize, f64)> = w.iter().map(frames).collect();
        let Some(&(c0, _, _, _)) = at.first() else { return };
        let n = self.clips[c0].frames[0].len();
        // `blend_poses` of the weights' samples, weight by weight (each
        // joint's sums in the weights' order): per joint, the translation
        // and scale sums in `out`, the rotation sum and the first sample's
        // rotation beside.
        out.resize(n, Transform { translation: V3::zeros(), rotation: Quat::identity(), scale: V3::zeros() });
        let mut rotations: Vec<(nalgebra::Vector4<f64>, Quat)> =
            vec![(nalgebra::Vector4::zeros(), Quat::identity()); n];
        for (k, (&(_, x), &(c, fa, fb, s))) in w.iter().zip(&at).enumerate() {
            let clip = &self.clips[c];
            let mut add = |j: usize, p: Transform| {
                let (q, first) = &mut rotations[j];
                if k == 0 {
                    *first = p.rotation;
                }
                let o = &mut out[j];
                o.translation += p.translation * x;
                o.scale += p.scale * x;
                let c = p.rotation.coords;
                *q += if c.dot(&first.coords) < 0.0 { -c * x } else { c * x };
            };
            if clip.frames.len() == 1 {
                for (j, p) in clip.frames[0][..n].iter().enumerate() {
                    add(j, *p);
                }
            } else {
                let (a, b, arcs) = (&clip.frames[fa][..n], &clip.frames[fb][..n], &self.arcs[c][fa * n..(fa + 1) * n]);
                for (j, ((pa, pb), arc)) in a.iter().zip(b).zip(arcs).enumerate() {
                    add(j, pa.interpolate_on(pb, s, arc));
                }
            }
        }
        for (o, (q, first)) in out.iter_mut().zip(&rotations) {
            o.rotation = if q.norm() > 1e-12 { Quat::from_quaternion(nalgebra::Quaternion::from(*q)) } else { *first };
        }
    }

    /// Straight steps with stance foot `stance`, by increasing speed.
    pub fn straight_steps(&self, stance: Foot) -> Vec<usize> {
        let mut ids: Vec<usize> = self.by_foot[stance.index()]
            .iter()
            .copied()
            .filter(|&i| {
                let a = &self.steps[i].annotation;
                a.rotation.abs() < 0.05 && a.landing[1].abs() < 0.5 + 0.3 * a.landing[0].abs()
            })
            .collect();
        if ids.is_empty() {
            ids = self.by_foot[stance.index()].clone();
        }
        ids.sort_by(|&a, &b| {
            let (sa, sb) = (self.steps[a].annotation.speed, self.steps[b].annotation.speed);
            sa.total_cmp(&sb).then(a.cmp(&b))
        });
        ids
    }

    /// Weights for walking straight at `speed` `[m/s]` with stance foot
    /// `stance`: the two straight steps whose speeds bracket it, linearly
    /// (clamped to the slowest and fastest). Depends on the library alone,
    /// which makes it the gait of the seam convention.
    pub fn straight(&self, stance: Foot, speed: f64) -> Weights {
        if let Some(w) = self.straight_from_turns(stance, speed) {
            return w;
        }
        let ids = self.straight_steps(stance);
        let sp = |i: usize| self.steps[i].annotation.speed;
        if speed <= sp(ids[0]) || ids.len() == 1 {
            return vec![(ids[0], 1.0)];
        }
        for w in ids.windows(2) {
            let (a, b) = (sp(w[0]), sp(w[1]));
            if speed <= b {
                let u = if b - a > 1e-9 { (speed - a) / (b - a) } else { 1.0 };
                return vec![(w[0], 1.0 - u), (w[1], u)];
            }
        }
        vec![(ids[ids.len() - 1], 1.0)]
    }

    /// Without any straight step (a library made of a turning take and its
    /// mirror image), a straight step blended from a left-turning and a
    /// right-turning step of the same stance, weighted so that their turns
    /// cancel: the pair whose mean speed is nearest `speed`. `None` when
    /// the library has straight steps or no such pair.
    fn straight_from_turns(&self, stance: Foot, speed: f64) -> Option<Weights> {
        let ids = &self.by_foot[stance.index()];
        let rot = |i: usize| self.steps[i].annotation.rotation;
        if ids.iter().any(|&i| rot(i).abs() < 0.05) {
            return None;
        }
        let mut best: Option<(f64, Weights)> = None;
        for &a in ids.iter().filter(|&&i| rot(i) > 0.0) {
            for &b in ids.iter().filter(|&&i| rot(i) < 0.0) {
                let (ra, rb) = (rot(a), -rot(b));
                let (wa, wb) = (rb / (ra + rb), ra / (ra + rb));
                let v = wa * self.steps[a].annotation.speed + wb * self.steps[b].annotation.speed;
                let d = (v - speed).abs();
                if best.as_ref().is_none_or(|x| d < x.0 - 1e-12) {
                    best = Some((d, vec![(a, wa), (b, wb)]));
                }
            }
        }
        best.map(|b| b.1)
    }

    /// Fastest and slowest straight walking speeds `[m/s]`.
    pub fn speed_range(&self) -> (f64, f64) {
        let ids = self.straight_steps(Foot::Left);
        let sp = |i: usize| self.steps[i].annotation.speed;
        (sp(ids[0]), sp(ids[ids.len() - 1]))
    }
}

fn area(steps: &[LibraryStep], t: [usize; 3]) -> f64 {
    let p = |i: usize| steps[t[i]].annotation.landing;
    let (a, b, c) = (p(0), p(1), p(2));
    ((b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1])) / 2.0
}

/// Barycentric coordinates of the point of triangle `t` closest to `q`, and
/// its distance from `q` (0 inside).
fn closest_in_triangle(t: [[f64; 2]; 3], q: [f64; 2]) -> ([f64; 3], f64) {
    let bary = |p: [f64; 2]| {
        let [a, b, c] = t;
        let det = (b[1] - c[1]) * (a[0] - c[0]) + (c[0] - b[0]) * (a[1] - c[1]);
        let l1 = ((b[1] - c[1]) * (p[0] - c[0]) + (c[0] - b[0]) * (p[1] - c[1])) / det;
        let l2 = ((c[1] - a[1]) * (p[0] - c[0]) + (a[0] - c[0]) * (p[1] - c[1])) / det;
        [l1, l2, 1.0 - l1 - l2]
    };
    let l = bary(q);
    if l.iter().all(|&x| x >= -1e-12) {
        return (l.map(|x| x.max(0.0)), 0.0);
    }
    // Closest point on the three edges.
    let mut best = ([1.0, 0.0, 0.0], f64::INFINITY);
    for (i, j) in [(0, 1), (1, 2), (2, 0)] {
        let (a, b) = (t[i], t[j]);
        let (ux, uy) = (b[0] - a[0], b[1] - a[1]);
        let s = (((q[0] - a[0]) * ux + (q[1] - a[1]) * uy) / (ux * ux + uy * uy)).clamp(0.0, 1.0);
        let d = (a[0] + s * ux - q[0]).hypot(a[1] + s * uy - q[1]);
        if d < best.1 {
            let mut w = [0.0; 3];
            w[i] = 1.0 - s;
            w[j] = s;
            best = (w, d);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::character::builtin;

    /// The weights by a scan of every triangle in order (the search
    /// without the grid).
    fn weights_by_scan(lib: &StepLibrary, stance: Foot, target: [f64; 2]) -> Option<Weights> {
        let tris = &lib.triangles[stance.index()];
        let corners = |tri: &[usize; 3]| [lib.landing(tri[0]), lib.landing(tri[1]), lib.landing(tri[2])];
        let box_gap = |t: &[[f64; 2]; 3]| {
            let gap = |x: f64, lo: f64, hi: f64| (lo - x).max(x - hi).max(0.0);
            let gx = gap(target[0], t[0][0].min(t[1][0]).min(t[2][0]), t[0][0].max(t[1][0]).max(t[2][0]));
            let gy = gap(target[1], t[0][1].min(t[1][1]).min(t[2][1]), t[0][1].max(t[1][1]).max(t[2][1]));
            gx.max(gy)
        };
        for tri in tris {
            let t = corners(tri);
            if box_gap(&t) > 1e-9 {
                continue;
            }
            let (w, d) = closest_in_triangle(t, target);
            if d == 0.0 {
                return Some(tri.iter().copied().zip(w).filter(|x| x.1 > 1e-9).collect());
            }
            if d <= 1e-12 {
                break;
            }
        }
        None
    }

    #[test]
    fn the_triangle_grid_finds_what_a_scan_of_every_triangle_finds() {
        let c = builtin::character();
        let lib = StepLibrary::new(&c).unwrap();
        let bits = |w: &Weights| w.iter().map(|&(i, x)| (i, x.to_bits())).collect::<Vec<_>>();
        let mut next = crate::test_uniform(0x2545_f491_4f6c_dd1d_u64);
        for foot in Foot::BOTH {
            // Landings themselves (on triangle corners and edges), points
            // inside and around the landings, and far away.
            let mut targets: Vec<[f64; 2]> = lib.by_foot[foot.index()].iter().map(|&i| lib.landing(i)).collect();
            for _ in 0..20_000 {
                targets.push([3.0 * next() - 1.0, 2.0 * next() - 1.0]);
            }
            targets.extend([[f64::NAN, 0.3], [50.0, -40.0], [0.6, f64::INFINITY]]);
            for t in targets {
                let fast = lib.weights(foot, t);
                if let Some(scan) = weights_by_scan(&lib, foot, t) {
                    assert_eq!(bits(&fast), bits(&scan), "{foot:?} {t:?}");
                }
            }
        }
    }

    #[test]
    fn poses_are_the_blend_of_the_clips_samples_bit_for_bit() {
        let c = builtin::character();
        let lib = StepLibrary::new(&c).unwrap();
        let bits = |p: &[Transform]| {
            p.iter()
                .flat_map(|x| {
                    x.translation.iter().chain(x.rotation.coords.iter()).chain(x.scale.iter()).map(|v| v.to_bits())
                })
                .collect::<Vec<_>>()
        };
        for foot in Foot::BOTH {
            for target in [[0.6, -0.19 * foot.sign()], [0.4, -0.3 * foot.sign()], [0.9, 0.1]] {
                let w = lib.weights(foot, target);
                for u in [0.0, 0.13, 0.5, 0.77, 1.0] {
                    let samples: Vec<(Pose, f64)> = w
                        .iter()
                        .map(|&(i, x)| {
                            let a = &lib.steps[i].annotation;
                            (lib.clips[a.clip].sample(a.start + u * a.duration), x)
                        })
                        .collect();
                    let refs: Vec<(&[Transform], f64)> = samples.iter().map(|(p, x)| (p.as_slice(), *x)).collect();
                    assert_eq!(bits(&lib.pose(&w, u)), bits(&crate::character::blend_poses(&refs)), "{w:?} at {u}");
                }
            }
        }
    }

    #[test]
    fn barycentric_weights_reproduce_landings_inside_the_hull() {
        let c = builtin::character();
        let lib = StepLibrary::new(&c).unwrap();
        for foot in Foot::BOTH {
            for target in [[0.6, -0.19 * foot.sign()], [0.4, -0.2 * foot.sign()], [0.8, -0.18 * foot.sign()]] {
                let w = lib.weights(foot, target);
                let sum: f64 = w.iter().map(|x| x.1).sum();
                assert!((sum - 1.0).abs() < 1e-9);
                let b = lib.blended(&w);
                let err = (b.landing[0] - target[0]).hypot(b.landing[1] - target[1]);
                assert!(err < 1e-6, "{foot}: {target:?} → {:?} ({w:?})", b.landing);
            }
        }
        let (slow, fast) = lib.speed_range();
        assert!(slow < 0.2 && fast > 1.9, "{slow} {fast}");
    }
}
