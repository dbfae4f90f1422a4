//! A character ready to animate bakes.

use crate::character::Character;
use crate::character::contact::Soles;
use crate::character::ik::Legs;
use crate::character::library::LibraryError;
use crate::footsteps::{FootstepParams, GaitModel};

/// A character ready to animate a bake: the character and its gait model
/// (step library, landing hulls), built once and shared by many bakes.
#[derive(Debug, Clone)]
pub struct Skeletal {
    /// The character.
    pub character: Character,
    /// Its gait model.
    pub gait: GaitModel,
    /// Joint-track sample rate `[Hz]` (rounded so that a whole number of
    /// samples fills the period).
    pub frame_rate: f64,
    /// Planner parameters.
    pub params: FootstepParams,
    /// Root-movement fidelity λ₄ in `[0, 1]` (BPK blend §5): the share of
    /// the root's miss from the baked path that is corrected by moving the
    /// body, both feet then held on their footprints by IK. 0 derives the
    /// root from the stance foot alone.
    pub root_pull: f64,
    /// The joints of its legs, for the foot IK.
    pub legs: Legs,
    /// Its soles: contact points and lowest mesh vertices, for the contact
    /// measure as played.
    pub soles: Soles,
}

impl Skeletal {
    /// Prepares `character` (analyses its clips).
    ///
    /// # Errors
    /// [`LibraryError`] when the character has no walking steps.
    pub fn new(mut character: Character) -> Result<Skeletal, LibraryError> {
        // Keyframes gone wrong (a joint out and back in one frame).
        let pops = crate::character::repair_clip_pops(&mut character);
        character.notes.extend(pops);
        // The clips' feet on the floor the bind pose stands on.
        let soles = Soles::of(&character);
        for (clip, dy) in soles.ground_clips(&mut character) {
            let how = if dy > 0.0 { "below" } else { "above" };
            character
                .notes
                .push(format!("clip {clip}: its feet stood {:.1} cm {how} the floor; moved onto it", 100.0 * dy.abs()));
        }
        let gait = GaitModel::new(&character)?;
        // Step durations scale with the square root of the leg length
        // (dynamic similarity, Alexander 1989): a short-legged character
        // takes quicker steps, not longer ones.
        let mut params = FootstepParams::default();
        let s = (character.leg_length() / 0.95).sqrt().clamp(0.3, 2.0);
        params.min_duration *= s.min(1.0);
        params.time_step *= s.min(1.0);
        let legs = Legs::new(&character).with_detached_hinges(&character);
        Ok(Skeletal { character, gait, frame_rate: 30.0, params, root_pull: 1.0, legs, soles })
    }
}
