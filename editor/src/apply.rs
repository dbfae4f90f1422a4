//! Runs the commands that edit the document (add, move and delete points
//! and obstacles, delete the selection, patterns onto sides, make
//! tileable), and says whether the
//! document changed, so that it gets a new revision only then: a drag that
//! ends where it started, or a side cleared twice, is no step and no change.
//!
//! What changed is found by comparing only the parts a command touches (one
//! side, one obstacle), never the whole document.

use crate::command::Command;
use crate::edit;
use crate::state::Selection;
use crowdpatch::generate::Diagonal;
use crowdpatch::model::{BoundaryPoint, PatchDocument, Side};
use std::path::Path;

/// What an edit command did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Edit {
    /// The document changed.
    pub changed: bool,
    /// A message for the status bar, and whether it is an error.
    pub message: Option<(String, bool)>,
}

/// Runs `command` when it edits the document (pattern references resolve
/// against `base`); any other command is handed back.
///
/// # Errors
/// The command itself, when it is not an edit of the document.
pub fn apply(
    command: Command,
    doc: &mut PatchDocument,
    selection: &mut Selection,
    base: &Path,
) -> Result<Edit, Command> {
    let mut changed = true;
    let mut message = None;
    let command = match (command, *selection) {
        (Command::DeleteSelection, Selection::Point(id)) => Command::DeletePoint(id),
        (Command::DeleteSelection, Selection::Obstacle(k)) => Command::DeleteObstacle(k),
        (Command::DeleteSelection, Selection::None) => return Ok(Edit::default()),
        (c, _) => c,
    };
    match command {
        Command::AddPoint { side, direction, s, t } => {
            *selection = Selection::Point(edit::add_point(doc, side, direction, s, t, base));
        }
        Command::MovePoint { id, s, t } => {
            changed = on_sides(doc, &[id.side], |doc| {
                edit::move_point(doc, id, s, t, base);
            });
        }
        Command::DeletePoint(id) => {
            let mut deleted = false;
            changed = on_sides(doc, &[id.side], |doc| deleted = edit::delete_point(doc, id, base));
            if deleted {
                *selection = Selection::None;
            }
        }
        Command::JoinGroup(id) => {
            let mut result = Err(String::new());
            changed = on_sides(doc, &[id.side], |doc| result = edit::join_nearest(doc, id, base));
            message = Some(match result {
                Ok(g) => (format!("{} walks in group {g}", id.path()), false),
                Err(e) => (e, true),
            });
        }
        Command::LeaveGroup(id) => {
            changed = on_sides(doc, &[id.side], |doc| {
                edit::leave_group(doc, id, base);
            });
        }
        Command::AddObstacle(o) => {
            doc.obstacles.push(o);
            *selection = Selection::Obstacle(doc.obstacles.len() - 1);
        }
        Command::SetObstacle(k, o) => {
            changed = false;
            if let Some(slot) = doc.obstacles.get_mut(k)
                && *slot != o
            {
                *slot = o;
                changed = true;
            }
        }
        Command::DeleteObstacle(k) => {
            changed = k < doc.obstacles.len();
            if changed {
                doc.obstacles.remove(k);
                *selection = Selection::None;
            }
        }
        Command::ApplyPattern { side, file, link } => {
            changed = on_sides(doc, &[side], |doc| message = Some(apply_pattern(doc, side, &file, link, base)));
            if message.as_ref().is_some_and(|m| !m.1) {
                *selection = Selection::None;
            }
        }
        Command::InlineSide(side) => {
            changed = on_sides(doc, &[side], |doc| {
                edit::inline_side(doc, side, base);
            });
        }
        Command::ClearSide(side) => {
            changed = doc.sides.slot_mut(side).take().is_some();
            *selection = Selection::None;
        }
        Command::MakeTileable => {
            changed = on_sides(doc, &[Side::North, Side::West], |doc| edit::make_tileable(doc, base));
            message = Some((
                "north is now the mirror of south and west the mirror of east: the patch tiles with itself".into(),
                false,
            ));
        }
        Command::GeneratePatterns { density, flows, corners, reference_speeds, walking_groups, seed, add } => {
            let before = doc.sides.clone();
            let mut params = generate_params(doc, density, flows, corners, reference_speeds, seed);
            params.walking_groups = walking_groups;
            message = Some(generate_patterns(doc, &params, add.then_some(base)));
            changed = doc.sides != before;
            *selection = Selection::None;
        }
        Command::AddStandingGroups { share, seed } => {
            let before = doc.endogenous.len();
            message = Some(add_standing_groups(doc, share, seed, base));
            changed = doc.endogenous.len() != before;
            *selection = Selection::None;
        }
        other => return Err(other),
    }
    Ok(Edit { changed, message })
}

/// The generator's parameters for `doc` (its size, period, radius and
/// obstacles): straight shares per side in [`Side::ALL`] order, corner
/// shares in [`Diagonal::ALL`] order (the zero ones left out, so that a
/// patch without corners is generated as before they existed).
fn generate_params(
    doc: &PatchDocument,
    density: f64,
    flows: [f64; 4],
    corners: [f64; 4],
    reference: bool,
    seed: u64,
) -> crowdpatch::generate::GenerateParams {
    use crowdpatch::generate::{GenerateParams, Speeds};
    GenerateParams {
        size: doc.size,
        period: doc.period,
        agent_radius: doc.agent_radius.unwrap_or(crowdpatch::model::DEFAULT_AGENT_RADIUS),
        density,
        flows: Side::ALL.iter().zip(flows).map(|(&s, f)| (s, f)).collect(),
        corners: Diagonal::ALL.into_iter().zip(corners).filter(|&(_, f)| f > 0.0).collect(),
        speeds: if reference { Speeds::Reference } else { Speeds::Weidmann },
        seed,
        obstacles: doc.obstacles.clone(),
        walking_groups: 0.0,
    }
}

/// Replaces the sides of `doc` by the lanes generated with `params`, or,
/// with `add` (the document's directory, against which its pattern
/// references resolve), adds the lanes' points to those already there
/// (sides become inline); returns what to tell the user, and whether it is
/// an error (the document is then unchanged). Lanes keep clear of the
/// obstacles in `params`.
fn generate_patterns(
    doc: &mut PatchDocument,
    params: &crowdpatch::generate::GenerateParams,
    add: Option<&Path>,
) -> (String, bool) {
    use crowdpatch::generate::{document, lanes, patterns};
    match lanes(params) {
        Ok(l) => {
            let walkers: usize = l.iter().map(|x| x.walkers()).sum();
            match add {
                None => doc.sides = document(&l, params, Some(doc)).sides,
                Some(base) => {
                    let generated = patterns(&l, doc.size, doc.period);
                    for side in Side::ALL {
                        let mut p = edit::side_view(doc, side, base).pattern;
                        // Group ids are a side's own: the new groups are
                        // numbered after those already there.
                        let last = p.entries.iter().chain(&p.exits).filter_map(|b| b.group).max().unwrap_or(0);
                        let renumbered = |b: &BoundaryPoint| BoundaryPoint { group: b.group.map(|g| g + last), ..*b };
                        p.entries.extend(generated[side.index()].entries.iter().map(renumbered));
                        p.exits.extend(generated[side.index()].exits.iter().map(renumbered));
                        p.name = None;
                        edit::set_side_inline(doc, side, &p);
                    }
                }
            }
            let how = if add.is_some() { "added" } else { "generated" };
            (format!("{how} {} lanes, {walkers} walkers per period, crossing at their own speed", l.len()), false)
        }
        Err(e) => (format!("cannot generate: {e}"), true),
    }
}

/// Adds standing groups to `doc` (see [`Command::AddStandingGroups`]);
/// returns what to tell the user, and whether it is an error (the document
/// is then unchanged).
fn add_standing_groups(doc: &mut PatchDocument, share: f64, seed: u64, base: &Path) -> (String, bool) {
    let patch = match doc.resolve(None, base) {
        Ok(p) => p,
        Err(problems) => {
            let first = problems.first().map_or_else(String::new, |p| format!(": {p}"));
            return (
                format!("cannot add standing groups: the document has {} problem(s){first}", problems.len()),
                true,
            );
        }
    };
    match crowdpatch::generate::standing_groups(&patch, share, seed) {
        Ok(groups) if groups.is_empty() => (
            "no standing group added: the share is reached already, or no place is out of the walkers' way".into(),
            false,
        ),
        Ok(groups) => {
            let people = groups.len();
            doc.endogenous.extend(groups);
            (format!("added {people} people standing in groups out of the walkers' way"), false)
        }
        Err(e) => (format!("cannot add standing groups: {e}"), true),
    }
}

/// Runs `f` on `doc` and tells whether it changed one of `sides` (the only
/// parts `f` may touch).
fn on_sides(doc: &mut PatchDocument, sides: &[Side], f: impl FnOnce(&mut PatchDocument)) -> bool {
    let before: Vec<_> = sides.iter().map(|s| doc.sides.get(*s).cloned()).collect();
    f(doc);
    sides.iter().zip(before).any(|(s, b)| doc.sides.get(*s) != b.as_ref())
}

/// Sets `side` to a copy of the pattern `file`, or a reference to it.
fn apply_pattern(doc: &mut PatchDocument, side: Side, file: &Path, link: bool, base: &Path) -> (String, bool) {
    let p = match crowdpatch::document::load_pattern(file) {
        Ok(p) => p,
        Err(e) => return (e.to_string(), true),
    };
    if p.length != doc.size || p.period != doc.period {
        let text = format!(
            "{}: length {} m and period {} s do not match the patch's {} m and {} s",
            file.display(),
            p.length,
            p.period,
            doc.size,
            doc.period
        );
        return (text, true);
    }
    match (link, edit::relative_path(file, base)) {
        (true, Some(rel)) => {
            *doc.sides.slot_mut(side) =
                Some(crowdpatch::model::SideDocument { pattern: Some(rel.clone()), ..Default::default() });
            (format!("the {side} side now references {rel}"), false)
        }
        _ => {
            edit::set_side_inline(doc, side, &p);
            (format!("copied {} onto the {side} side", file.display()), false)
        }
    }
}

/// `selection` if what it names still exists in `doc`, else nothing (after
/// undo and redo).
pub fn checked_selection(doc: &PatchDocument, selection: Selection, base: &Path) -> Selection {
    let ok = match selection {
        Selection::Point(id) => edit::side_view(doc, id.side, base).pattern.points(id.direction).len() > id.index,
        Selection::Obstacle(k) => k < doc.obstacles.len(),
        // The bake, not the document, holds walkers: what shows it checks.
        Selection::None | Selection::Walker(_) => true,
    };
    if ok { selection } else { Selection::None }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crowdpatch::model::{Direction, Obstacle};

    #[test]
    fn edits_say_whether_they_changed_the_document() {
        let mut doc = PatchDocument::new(16.0, 10.0);
        let mut sel = Selection::None;
        let base = Path::new(".");
        let mut run = |c: Command, doc: &mut PatchDocument| apply(c, doc, &mut sel, base).unwrap().changed;
        let add = Command::AddPoint { side: Side::East, direction: Direction::Entry, s: 2.0, t: 3.0 };
        assert!(run(add, &mut doc));
        let id = edit::PointId { side: Side::East, direction: Direction::Entry, index: 0 };
        // A move to where the point already is changes nothing (a click).
        assert!(!run(Command::MovePoint { id, s: 2.0, t: 3.0 }, &mut doc));
        assert!(run(Command::MovePoint { id, s: 4.0, t: 3.0 }, &mut doc));
        let circle = Obstacle::Circle { center: [8.0, 8.0], radius: 1.0 };
        assert!(run(Command::AddObstacle(circle.clone()), &mut doc));
        assert!(!run(Command::SetObstacle(0, circle), &mut doc));
        assert!(!run(Command::DeleteObstacle(3), &mut doc));
        assert!(run(Command::ClearSide(Side::East), &mut doc));
        assert!(!run(Command::ClearSide(Side::East), &mut doc));
        // Not an edit: handed back.
        assert_eq!(apply(Command::Bake, &mut doc, &mut sel, base), Err(Command::Bake));
    }

    #[test]
    fn standing_groups_stand_out_of_the_generated_lanes() {
        let mut doc = PatchDocument::new(16.0, 10.0);
        let mut sel = Selection::None;
        let base = Path::new(".");
        let generate = Command::GeneratePatterns {
            density: 0.05,
            flows: [1.0, 0.0, 1.0, 0.0],
            corners: [0.0; 4],
            reference_speeds: true,
            walking_groups: 0.0,
            seed: 3,
            add: false,
        };
        let edit = apply(generate, &mut doc, &mut sel, base).unwrap();
        assert!(edit.changed && !edit.message.as_ref().unwrap().1, "{:?}", edit.message);
        // A share outside [0, 0.9]: an error, the document unchanged.
        let before = doc.clone();
        let edit = apply(Command::AddStandingGroups { share: 1.5, seed: 1 }, &mut doc, &mut sel, base).unwrap();
        assert!(!edit.changed && edit.message.as_ref().unwrap().1, "{:?}", edit.message);
        assert_eq!(doc, before);
        let edit = apply(Command::AddStandingGroups { share: 0.2, seed: 1 }, &mut doc, &mut sel, base).unwrap();
        assert!(edit.changed && !edit.message.as_ref().unwrap().1, "{:?}", edit.message);
        let added = &doc.endogenous[before.endogenous.len()..];
        assert!(added.len() >= 2, "{} people added", added.len());
        // Each stands still (one waypoint), clear of every lane: a
        // generated lane runs straight across the patch along its entry
        // point's velocity, so no one stands within 2r of that line.
        let patch = doc.resolve(None, base).unwrap();
        let two_r = 2.0 * patch.header.agent_radius;
        let lanes: Vec<_> = patch.crossings_of(Direction::Entry);
        assert!(!lanes.is_empty());
        for e in added {
            assert_eq!(e.waypoints.len(), 1);
            let [x, y] = e.waypoints[0].position;
            for c in &lanes {
                let d = c.velocity.normalize();
                let (dx, dy) = (x - c.position.x, y - c.position.y);
                let off = (dx * d.y - dy * d.x).abs();
                assert!(off >= two_r, "standing at ({x}, {y}) {off} m from the lane of {}", c.path());
            }
        }
    }
}
