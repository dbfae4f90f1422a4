//! Real pedestrians as data: the crowd statistics of sampled trajectories,
//! with one set of definitions for baked walkers and real pedestrians alike
//! ([`crowd`]), the reference tables computed from the ETH/UCY sets
//! ([`reference`]), and the statistics of walking groups with the reference
//! computed from the ETH/UCY scenes with group annotations ([`groups`])
//! (docs/design.md "Realism", "Walking groups").
//!
//! A kernel: plain statistics over positions, below the document layer, so
//! that walkers' preferred speeds ([`crate::pace`]) can be drawn from the real
//! walking speeds and the bake's measures ([`crate::realism`]) compare with
//! the same tables.

pub mod crowd;
pub mod groups;
pub mod reference;
