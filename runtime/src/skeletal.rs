//! Skeletal animation in the baked format: the character (skeleton, inverse
//! bind matrices, skinned mesh), every agent's joint tracks and footsteps, and
//! the gait convention at boundary points.
//!
//! All plain data, written by a bake and read by an exporter or a game. Local
//! joint transforms follow glTF: translation `[m]`, rotation as a unit
//! quaternion `(x, y, z, w)`, scale; a joint's global transform is its
//! parent's times its own (`T · R · S`). The character's *model frame* is
//! glTF's: +Y up, the character faces +Z, its left is +X, feet on `y = 0`.
//!
//! ## Gait phase at boundary points (the seam convention)
//! A neighbour tile is baked apart from this one, so the gait where an agent
//! crosses a shared side must follow from the boundary point alone
//! (position, time, velocity) and the character. The convention, recorded in
//! each baked boundary point as a [`BoundaryGait`]:
//!
//! - at the crossing time `t` the **left foot plants** (heel strike: the start
//!   of double support), and the root (the hips projected on the ground) is
//!   exactly on the boundary point;
//! - the pose at that instant is the character's *boundary pose* for the
//!   crossing speed `|v|`: the straight-walking pose at a left plant,
//!   blended from the character's walking steps for that speed, facing the
//!   velocity's direction; so both footprints (the left one at `t`, the right
//!   one planted `step_duration` earlier) are fixed by the point;
//! - the exit side of a tile ends with exactly these two footsteps, and the
//!   entry side of the neighbour starts from them, so the character crossing
//!   the seam keeps its feet where they are and its gait phase: gait phase
//!   0 = left plant, 0.5 = right plant.
//!
//! An endogenous loop meets itself at its start time the same way, so its
//! footsteps repeat with the period.

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

/// A foot of a biped character.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Foot {
    /// The left foot (+X in the character's model frame).
    #[default]
    Left,
    /// The right foot (−X in the character's model frame).
    Right,
}

impl Foot {
    /// Both feet, left first (their index order).
    pub const BOTH: [Foot; 2] = [Foot::Left, Foot::Right];

    /// 0 for the left foot, 1 for the right one.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The other foot.
    pub fn other(self) -> Foot {
        match self {
            Foot::Left => Foot::Right,
            Foot::Right => Foot::Left,
        }
    }

    /// Lower-case name: `left` or `right`.
    pub fn name(self) -> &'static str {
        match self {
            Foot::Left => "left",
            Foot::Right => "right",
        }
    }

    /// Side sign in the character's frame: +1 left, −1 right.
    pub fn sign(self) -> f64 {
        match self {
            Foot::Left => 1.0,
            Foot::Right => -1.0,
        }
    }
}

impl std::fmt::Display for Foot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A foot plant: where and when a foot lands and how long it stays, for
/// run-time decals, foot IK and gait phase.
///
/// Bakes write every field. When read, only `t` is required (what the gait
/// phase needs); a missing `foot` reads as left, `position` as `[0, 0]`,
/// `heading` and `lift` as 0.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Footstep {
    /// Unwrapped time of the plant (heel strike) `[s]`, on the agent's path
    /// clock (see [`crate::format::BakedAgent`]).
    pub t: f64,
    /// Which foot plants.
    #[cfg_attr(feature = "serde", serde(default))]
    pub foot: Foot,
    /// Ground position of the foot joint while planted `[m]`, patch frame.
    #[cfg_attr(feature = "serde", serde(default))]
    pub position: [f64; 2],
    /// Heading of the body at the plant `[rad]`, patch frame (from +x towards
    /// +y), in `(−π, π]`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub heading: f64,
    /// Unwrapped time the foot leaves the ground again `[s]` (its lift-off,
    /// after the other foot has planted).
    #[cfg_attr(feature = "serde", serde(default))]
    pub lift: f64,
}

/// The gait at a boundary point, by the seam convention of this module: the
/// [`BoundaryGait::foot`] plants at the crossing time with the root on the
/// point. Two neighbour tiles continue each other's gait exactly when they
/// were baked with the same character (`extras.crowdpatch.character.name`).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct BoundaryGait {
    /// The foot that plants at the crossing time (by convention the left).
    pub foot: Foot,
    /// Gait phase at the crossing, in `[0, 1)`: 0 is a left plant, 0.5 a right
    /// plant. By convention 0.
    pub phase: f64,
    /// Duration of the steps just before and just after the crossing `[s]`.
    pub step_duration: f64,
    /// Step length at the crossing: distance along the velocity between the
    /// two planted feet `[m]`.
    pub step_length: f64,
}

/// One joint of a character's skeleton, with its rest (bind) transform.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct CharacterJoint {
    /// Name, as in the source asset (unique within the character).
    pub name: String,
    /// Index of the parent joint; `None` for a top joint, whose parent is
    /// the agent instance node. Parents come before their children.
    pub parent: Option<usize>,
    /// Rest translation relative to the parent `[m]`.
    pub translation: [f64; 3],
    /// Rest rotation relative to the parent, unit quaternion `(x, y, z, w)`.
    pub rotation: [f64; 4],
    /// Rest scale relative to the parent.
    pub scale: [f64; 3],
    /// Inverse bind matrix, column-major 4×4: the inverse of the joint's
    /// global rest transform in the model frame (where the mesh is).
    pub inverse_bind: [f64; 16],
}

/// One primitive of a character's skinned mesh: a triangle list in the model
/// frame at the rest pose, with up to four joint influences per vertex.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct SkinnedPrimitive {
    /// Material name.
    pub material: String,
    /// Base colour, linear RGBA `[0, 1]`.
    pub colour: [f32; 4],
    /// Vertex positions `[m]`, model frame.
    pub positions: Vec<[f32; 3]>,
    /// Unit vertex normals.
    pub normals: Vec<[f32; 3]>,
    /// Joint indices of each vertex (into [`Character::joints`]); unused
    /// slots hold 0 with weight 0.
    pub joints: Vec<[u16; 4]>,
    /// Joint weights of each vertex, summing to 1.
    pub weights: Vec<[f32; 4]>,
    /// Three vertex indices per triangle, counter-clockwise from the front.
    pub indices: Vec<u32>,
}

/// What a game needs of a character: skeleton and skinned mesh.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Character {
    /// Name (`builtin` for the built-in character, else the asset's).
    pub name: String,
    /// The joints, parents first.
    pub joints: Vec<CharacterJoint>,
    /// Index of the left foot joint (the ankle).
    pub left_foot: usize,
    /// Index of the right foot joint.
    pub right_foot: usize,
    /// Index of the hips joint (the root of root motion).
    pub hips: usize,
    /// Height of the character at rest `[m]`.
    pub height: f64,
    /// The skinned mesh, one primitive per material.
    pub primitives: Vec<SkinnedPrimitive>,
    /// The hip joints of the two legs (upper legs), left then right.
    #[cfg_attr(feature = "serde", serde(default))]
    pub hip_joints: [usize; 2],
    /// Length of a straight leg `[m]`: hip joint to ankle plus the ankle's
    /// height; hip height over it is about 0.9–1.0 in natural walking.
    #[cfg_attr(feature = "serde", serde(default))]
    pub leg_length: f64,
    /// Where the feet touch the ground: the heel, ball and toe of each
    /// sole, each carried by a joint (empty in files written before they
    /// were recorded).
    #[cfg_attr(feature = "serde", serde(default))]
    pub sole_points: Vec<SolePoint>,
}

/// A point of a foot's sole, carried rigidly by a joint: its world
/// position is the joint's world matrix times `local`. What foot contact
/// is measured on as played (heel, ball and toe of each foot).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct SolePoint {
    /// The foot.
    pub foot: Foot,
    /// Which part of the sole: `heel`, `ball` or `toe`.
    pub part: String,
    /// The joint that carries it (index into the character's joints).
    pub joint: usize,
    /// Its position in the joint's frame `[m]`.
    pub local: [f64; 3],
}

impl Character {
    /// Index of the foot joint of `foot`.
    pub fn foot(&self, foot: Foot) -> usize {
        match foot {
            Foot::Left => self.left_foot,
            Foot::Right => self.right_foot,
        }
    }
}

/// The skeletal animation of one agent over its whole path.
///
/// Joint tracks are sampled at [`AgentAnimation::times`]; at sample `i`,
/// joint `j`'s local transform is `translations[i·J + j]` and
/// `rotations[i·J + j]` (`J` joints; scale stays at rest). The top joints'
/// transforms are relative to the agent's instance node, whose translation
/// and yaw follow the baked path (root motion): together they put the feet
/// where [`AgentAnimation::footsteps`] say.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct AgentAnimation {
    /// Foot plants in time order.
    pub footsteps: Vec<Footstep>,
    /// Unwrapped sample times `[s]`, strictly increasing, covering the path's
    /// interval: every multiple of the animation's sample interval there,
    /// and keys in between where interpolation would let a planted foot
    /// slide.
    pub times: Vec<f64>,
    /// Local joint translations, sample-major.
    pub translations: Vec<[f32; 3]>,
    /// Local joint rotations (unit quaternions), sample-major; consecutive
    /// samples of a joint lie in the same hemisphere.
    pub rotations: Vec<[f32; 4]>,
}

/// Skeletal animation of a baked patch: the character and one
/// [`AgentAnimation`] per agent (in [`crate::format::BakedPatch::agents`]
/// order).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct SkeletalAnimation {
    /// The character every agent plays.
    pub character: Character,
    /// Regular sample interval of the joint tracks `[s]`: the period divided
    /// by a whole number, so that every window of play time starts and ends
    /// on a sample; extra keys may lie in between.
    pub sample_interval: f64,
    /// One animation per agent.
    pub agents: Vec<AgentAnimation>,
}

/// The character as described in a baked GLB's extras
/// (`extras.crowdpatch.character`): enough to find the feet and the hips
/// among an instance's joint nodes.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct CharacterExtras {
    /// Character name.
    pub name: String,
    /// Joint names, in the order of each instance's joint nodes (and of its
    /// skin's `joints`).
    pub joints: Vec<String>,
    /// Parent of each joint (`null` for a top joint, a child of the instance
    /// node).
    pub parents: Vec<Option<usize>>,
    /// Index (into `joints`) of the left foot joint.
    pub left_foot: usize,
    /// Index of the right foot joint.
    pub right_foot: usize,
    /// Index of the hips joint.
    pub hips: usize,
    /// Height at rest `[m]`.
    pub height: f64,
    /// Indices of the hip joints of the two legs (upper legs), left then
    /// right.
    #[cfg_attr(feature = "serde", serde(default))]
    pub hip_joints: [usize; 2],
    /// Length of a straight leg `[m]` (hip height over leg length tells a
    /// walker upright, about 0.9–1.0, from a crouch).
    #[cfg_attr(feature = "serde", serde(default))]
    pub leg_length: f64,
    /// Gait phase convention at boundary points, in words (see
    /// [`BoundaryGait`]).
    pub gait_convention: String,
    /// The soles' contact points (heel, ball, toe of each foot), on which
    /// players measure foot contact.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Vec::is_empty"))]
    pub sole_points: Vec<SolePoint>,
}

/// The gait convention in words, as written into [`CharacterExtras`].
pub const GAIT_CONVENTION: &str = "At every boundary crossing the left foot plants at the crossing time with the root on \
     the boundary point, in the character's straight-walking pose for the crossing speed (gait phase 0 = left plant, \
     0.5 = right plant); the exiting tile ends and the entering tile starts with the same two footprints.";
