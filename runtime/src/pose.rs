//! Agent poses in structure-of-arrays form ([`Poses`]) and the placement of
//! a tile in the world ([`Placement`]).

/// Agent poses, one slot per agent instance, as parallel arrays (a
/// structure of arrays: each array is contiguous, which is what a renderer
/// uploads and what the sampler writes at memory speed).
///
/// World frame: x east, y north `[m]`; heading `[rad]` from +x towards +y,
/// not wrapped (equal mod 2π to the facing direction); `phase` is the gait
/// phase in `[0, 1)`; `visible` is false where an instance is outside its
/// interval and must not be drawn.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Poses {
    /// x `[m]`.
    pub x: Vec<f32>,
    /// y `[m]`.
    pub y: Vec<f32>,
    /// Heading `[rad]`.
    pub heading: Vec<f32>,
    /// Gait phase in `[0, 1)`.
    pub phase: Vec<f32>,
    /// Whether to draw the instance.
    pub visible: Vec<bool>,
}

impl Poses {
    /// `n` slots, zeroed.
    pub fn new(n: usize) -> Poses {
        let mut p = Poses::default();
        p.resize(n);
        p
    }

    /// Number of slots.
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// Whether there is no slot.
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }

    /// Resizes every array to `n` slots (new ones zeroed, hidden).
    pub fn resize(&mut self, n: usize) {
        self.x.resize(n, 0.0);
        self.y.resize(n, 0.0);
        self.heading.resize(n, 0.0);
        self.phase.resize(n, 0.0);
        self.visible.resize(n, false);
    }

    /// Mutable view of all slots.
    pub fn as_mut(&mut self) -> PosesMut<'_> {
        PosesMut {
            x: &mut self.x,
            y: &mut self.y,
            heading: &mut self.heading,
            phase: &mut self.phase,
            visible: &mut self.visible,
        }
    }

    /// Mutable view of the slots `range`.
    ///
    /// # Panics
    /// If the range is out of bounds.
    pub fn slice_mut(&mut self, range: std::ops::Range<usize>) -> PosesMut<'_> {
        PosesMut {
            x: &mut self.x[range.clone()],
            y: &mut self.y[range.clone()],
            heading: &mut self.heading[range.clone()],
            phase: &mut self.phase[range.clone()],
            visible: &mut self.visible[range],
        }
    }

    /// Number of visible slots.
    pub fn visible_count(&self) -> usize {
        self.visible.iter().filter(|&&v| v).count()
    }
}

/// A mutable view of some slots of [`Poses`] (same fields, as slices).
#[derive(Debug)]
pub struct PosesMut<'a> {
    /// x `[m]`.
    pub x: &'a mut [f32],
    /// y `[m]`.
    pub y: &'a mut [f32],
    /// Heading `[rad]`.
    pub heading: &'a mut [f32],
    /// Gait phase in `[0, 1)`.
    pub phase: &'a mut [f32],
    /// Whether to draw the instance.
    pub visible: &'a mut [bool],
}

impl<'a> PosesMut<'a> {
    /// The first `n` slots.
    ///
    /// # Panics
    /// If fewer than `n` slots are held.
    pub fn truncate(self, n: usize) -> PosesMut<'a> {
        assert!(self.x.len() >= n, "pose buffer holds {} slots, {n} needed", self.x.len());
        PosesMut {
            x: &mut self.x[..n],
            y: &mut self.y[..n],
            heading: &mut self.heading[..n],
            phase: &mut self.phase[..n],
            visible: &mut self.visible[..n],
        }
    }

    /// Number of slots.
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// Whether there is no slot.
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }
}

/// Where a tile sits in the world: its square is
/// `[offset.x, offset.x + L] × [offset.y, offset.y + L]`, and its content is
/// turned by `rotation` quarter turns counter-clockwise about the square's
/// centre. Side `k` of the tile then faces the world side `k + rotation`, and
/// headings grow by `rotation · π/2`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Placement {
    /// World position of the square's south-west corner `[m]`.
    pub offset: [f64; 2],
    /// Quarter turns counter-clockwise, taken mod 4.
    pub rotation: u8,
}

impl Placement {
    /// World position `[m]` of the patch point `p` `[m]` of a tile of side
    /// `size` `[m]`.
    pub fn point(&self, size: f64, p: [f64; 2]) -> [f64; 2] {
        let [x, y] = p;
        let [lx, ly] = match self.rotation % 4 {
            0 => [x, y],
            1 => [size - y, x],
            2 => [size - x, size - y],
            _ => [y, size - x],
        };
        [lx + self.offset[0], ly + self.offset[1]]
    }

    /// World vector of the patch-frame vector `v` (a velocity).
    pub fn vector(&self, v: [f64; 2]) -> [f64; 2] {
        match self.rotation % 4 {
            0 => v,
            1 => [-v[1], v[0]],
            2 => [-v[0], -v[1]],
            _ => [v[1], -v[0]],
        }
    }

    /// World heading `[rad]` of the patch heading `h`.
    pub fn heading(&self, h: f64) -> f64 {
        h + f64::from(self.rotation % 4) * std::f64::consts::FRAC_PI_2
    }

    /// Transforms local (patch-frame) poses in place into the world.
    pub(crate) fn apply(&self, size: f64, out: PosesMut<'_>) {
        let (ox, oy) = (self.offset[0], self.offset[1]);
        let q = self.rotation % 4;
        let dh = f32::from(q) * std::f32::consts::FRAC_PI_2;
        // x' = a + sx·(x or y), y' = b + sy·(y or x), per quarter turn.
        let (a, b) = match q {
            0 => (ox, oy),
            1 => (ox + size, oy),
            2 => (ox + size, oy + size),
            _ => (ox, oy + size),
        };
        let (a, b) = (a as f32, b as f32);
        let (xs, ys) = (out.x, out.y);
        match q {
            0 => {
                for (x, y) in xs.iter_mut().zip(ys.iter_mut()) {
                    *x += a;
                    *y += b;
                }
            }
            1 => {
                for (x, y) in xs.iter_mut().zip(ys.iter_mut()) {
                    let (px, py) = (*x, *y);
                    *x = a - py;
                    *y = b + px;
                }
            }
            2 => {
                for (x, y) in xs.iter_mut().zip(ys.iter_mut()) {
                    *x = a - *x;
                    *y = b - *y;
                }
            }
            _ => {
                for (x, y) in xs.iter_mut().zip(ys.iter_mut()) {
                    let (px, py) = (*x, *y);
                    *x = a + py;
                    *y = b - px;
                }
            }
        }
        if q != 0 {
            for h in out.heading.iter_mut() {
                *h += dh;
            }
        }
    }

    /// Writes `local` (patch-frame poses) transformed into the world into
    /// `out` (same length).
    pub(crate) fn transform(&self, size: f64, local: &Poses, out: PosesMut<'_>) {
        let n = local.len();
        let out = out.truncate(n);
        out.x.copy_from_slice(&local.x);
        out.y.copy_from_slice(&local.y);
        out.heading.copy_from_slice(&local.heading);
        out.phase.copy_from_slice(&local.phase);
        out.visible.copy_from_slice(&local.visible);
        self.apply(size, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apply_agrees_with_point_vector_and_heading() {
        let l = 16.0;
        let pts = [[1.0, 2.0], [15.0, 0.5], [8.0, 8.0], [0.0, 16.0]];
        for rotation in 0..4u8 {
            let place = Placement { offset: [32.0, -48.0], rotation };
            let mut poses = Poses::new(pts.len());
            for (i, p) in pts.iter().enumerate() {
                poses.x[i] = p[0] as f32;
                poses.y[i] = p[1] as f32;
                poses.heading[i] = 0.25;
            }
            place.apply(l, poses.as_mut());
            for (i, p) in pts.iter().enumerate() {
                let w = place.point(l, *p);
                assert!((f64::from(poses.x[i]) - w[0]).abs() < 1e-5);
                assert!((f64::from(poses.y[i]) - w[1]).abs() < 1e-5);
                // The heading turns as direction vectors do.
                let h = f64::from(poses.heading[i]);
                let v = place.vector([0.25f64.cos(), 0.25f64.sin()]);
                assert!((h.cos() - v[0]).abs() < 1e-6 && (h.sin() - v[1]).abs() < 1e-6);
            }
            // The square maps onto itself, shifted: corners stay corners.
            let c = place.point(l, [0.0, 0.0]);
            assert!([[32.0, -48.0], [48.0, -48.0], [48.0, -32.0], [32.0, -32.0]].contains(&c));
        }
    }
}
