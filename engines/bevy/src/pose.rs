//! The per-frame pose work, on contiguous arrays and free of the ECS:
//! joints sampled once per tile ([`TileJoints`]), root poses and joint world
//! transforms per shown cell ([`CellPoses`]). Nothing here allocates after
//! construction.

use bevy::math::{Affine3A, Quat, Vec3};
use bevy::transform::components::Transform;
use crowdpatch_runtime::{JointCursors, JointPoses, JointSampler, Placement, Poses, Tile, TileCursor};

use crate::assets::walker_transform;

/// The joints of every instance of one tile at one time: local transforms
/// from the runtime's [`JointSampler`], and the skeleton's shape. Cells
/// showing the same tile share it (the local poses do not depend on where
/// the tile is placed).
#[derive(Debug, Clone)]
pub struct TileJoints {
    sampler: JointSampler,
    cursors: JointCursors,
    poses: JointPoses,
    /// Joints per instance (`J`).
    joints: usize,
    /// Per clip row (breadth first, parents before children): its parent
    /// row.
    parents: Vec<Option<u32>>,
    /// Per skin joint `k`: its clip row.
    skin_rows: Vec<u32>,
    /// Per skin joint `k`: its parent's skin index.
    skin_parents: Vec<Option<u32>>,
    /// Whether every skin joint's parent comes before it (then joints are
    /// composed in skin order, straight into the output).
    skin_parents_first: bool,
    /// Time of the last sample `[s]`.
    at: Option<f64>,
}

impl TileJoints {
    /// The joints of `tile`, or `None` when it has no joint clips or no
    /// character whose skin maps onto them. O(keys).
    pub fn new(tile: &Tile) -> Option<TileJoints> {
        let sampler = JointSampler::new(tile)?;
        let joints = sampler.joint_count();
        let skin_rows = tile.skin_rows().to_vec();
        if skin_rows.len() != joints || skin_rows.iter().any(|&r| r as usize >= joints) {
            return None;
        }
        let clip = (0..tile.instance_count()).find_map(|i| tile.joint_clip(i))?;
        if clip.joints.len() != joints {
            return None;
        }
        let parents: Vec<Option<u32>> = clip.joints.iter().map(|j| j.parent.map(|p| p as u32)).collect();
        let mut skin_of_row = vec![0u32; joints];
        for (k, &r) in skin_rows.iter().enumerate() {
            skin_of_row[r as usize] = k as u32;
        }
        let skin_parents: Vec<Option<u32>> =
            skin_rows.iter().map(|&r| parents[r as usize].map(|p| skin_of_row[p as usize])).collect();
        let skin_parents_first = skin_parents.iter().enumerate().all(|(k, p)| p.is_none_or(|p| (p as usize) < k));
        Some(TileJoints {
            cursors: sampler.cursors(),
            poses: sampler.poses(),
            sampler,
            joints,
            parents,
            skin_rows,
            skin_parents,
            skin_parents_first,
            at: None,
        })
    }

    /// Joints per instance.
    pub fn joint_count(&self) -> usize {
        self.joints
    }

    /// The parent (skin index) of skin joint `k`; `None` for a top joint
    /// (a child of the walker).
    pub fn skin_parent(&self, k: usize) -> Option<usize> {
        self.skin_parents.get(k).copied().flatten().map(|p| p as usize)
    }

    /// Samples every instance's joints at `t` `[s]` (once per time).
    /// O(channels).
    pub fn sample(&mut self, t: f64) {
        if self.at != Some(t) {
            self.sampler.sample(t, &mut self.cursors, &mut self.poses);
            self.at = Some(t);
        }
    }

    /// The local transform of skin joint `k` of instance `i`, at
    /// `slot = i · J + k`, as last sampled.
    pub fn local(&self, slot: usize) -> Option<Transform> {
        let (i, k) = (slot / self.joints.max(1), slot % self.joints.max(1));
        let row = i * self.joints + *self.skin_rows.get(k)? as usize;
        Some(Transform {
            translation: Vec3::from_array(*self.poses.translation.get(row)?),
            rotation: Quat::from_array(*self.poses.rotation.get(row)?),
            scale: Vec3::from_array(*self.poses.scale.get(row)?),
        })
    }

    /// Heap bytes: the sampler's playback form and its outputs.
    pub fn memory_bytes(&self) -> usize {
        self.sampler.memory_bytes()
            + self.poses.translation.len() * 40
            + (self.parents.len() + 2 * self.skin_rows.len()) * 8
    }
}

/// One shown cell: where its tile is placed, its instances' root poses and
/// their joints' world transforms.
#[derive(Debug, Clone)]
pub struct CellPoses {
    placement: Placement,
    cursor: TileCursor,
    poses: Poses,
    /// Per instance: the walker's transform (root motion).
    roots: Vec<Affine3A>,
    /// Per instance, per skin joint: world transform.
    world: Vec<Affine3A>,
    /// One instance's joints in clip-row order.
    scratch: Vec<Affine3A>,
    joints: usize,
}

impl CellPoses {
    /// Buffers for `instances` walkers of `joints` joints each, placed by
    /// `placement`.
    pub fn new(placement: Placement, instances: usize, joints: usize) -> CellPoses {
        CellPoses {
            placement,
            cursor: TileCursor::default(),
            poses: Poses::new(instances),
            roots: vec![Affine3A::IDENTITY; instances],
            world: vec![Affine3A::IDENTITY; instances * joints],
            scratch: vec![Affine3A::IDENTITY; joints],
            joints,
        }
    }

    /// Samples the root poses of `tile` (placed) at `t` `[s]`. O(instances).
    pub fn sample_roots(&mut self, tile: &Tile, t: f64) {
        tile.sample_with(t, &self.placement, &mut self.cursor, self.poses.as_mut());
        let p = &self.poses;
        for (i, root) in self.roots.iter_mut().enumerate() {
            if p.visible[i] {
                *root = walker_transform(p.x[i], p.y[i], p.heading[i]);
            }
        }
    }

    /// Composes every drawn instance's joint world transforms from the
    /// tile's sampled local poses: parents first, down from the walker's
    /// transform. O(instances × J).
    pub fn compose_joints(&mut self, tj: &TileJoints) {
        let j = self.joints;
        if j == 0 || tj.joints != j {
            return;
        }
        let lp = &tj.poses;
        let local = |row: usize| {
            let (t, q, s) = (lp.translation[row], lp.rotation[row], lp.scale[row]);
            let m = Affine3A::from_rotation_translation(Quat::from_array(q), Vec3::from_array(t));
            if s == [1.0; 3] { m } else { m * Affine3A::from_scale(Vec3::from_array(s)) }
        };
        for i in 0..self.roots.len() {
            if !self.poses.visible[i] {
                continue;
            }
            let root = self.roots[i];
            let base = i * j;
            if tj.skin_parents_first {
                // Skin order, parents first: straight into the output.
                let out = &mut self.world[base..base + j];
                for k in 0..j {
                    let l = local(base + tj.skin_rows[k] as usize);
                    out[k] = match tj.skin_parents[k] {
                        Some(p) => out[p as usize] * l,
                        None => root * l,
                    };
                }
            } else {
                for r in 0..j {
                    let l = local(base + r);
                    self.scratch[r] = match tj.parents[r] {
                        Some(p) => self.scratch[p as usize] * l,
                        None => root * l,
                    };
                }
                let out = &mut self.world[base..base + j];
                for (k, w) in out.iter_mut().enumerate() {
                    *w = self.scratch[tj.skin_rows[k] as usize];
                }
            }
        }
    }

    /// World transform of the joint at `slot = i · J + k`.
    #[inline]
    pub fn joint_world(&self, slot: usize) -> Option<Affine3A> {
        let i = slot / self.joints.max(1);
        if *self.poses.visible.get(i)? { self.world.get(slot).copied() } else { None }
    }

    /// The transform of walker `i`.
    #[inline]
    pub fn root(&self, i: usize) -> Affine3A {
        self.roots[i]
    }

    /// Whether walker `i` is drawn now.
    #[inline]
    pub fn visible(&self, i: usize) -> bool {
        self.poses.visible.get(i).copied().unwrap_or(false)
    }

    /// Walkers drawn now.
    pub fn visible_count(&self) -> usize {
        self.poses.visible_count()
    }

    /// The root poses as sampled (world frame).
    pub fn poses(&self) -> &Poses {
        &self.poses
    }

    /// Heap bytes.
    pub fn memory_bytes(&self) -> usize {
        self.poses.len() * 17 + (self.roots.len() + self.world.len() + self.scratch.len()) * 48 + self.poses.len() * 4
    }
}
