//! Documents on disk: reading `*.patch.json` and `*.pattern.json` with the
//! field path of every problem, resolving a patch document into the
//! [`Patch`] a bake starts from (pattern references, defaults, validation),
//! and saving patterns. The types themselves are plain data in
//! [`crate::model`]; the checks are in [`crate::validate`].
//!
//! Cost: parsing is linear in the text; resolving adds one pattern file per
//! referenced side and the validation of [`crate::validate::validate_patch`].

use crate::model::{
    DEFAULT_AGENT_RADIUS, DEFAULT_COMFORT_SPEED, DOCUMENT_FORMAT, Patch, PatchDocument, Pattern, PatternFile, Side,
    Sides,
};
use crate::problem::{FieldPath, LoadError, Problem, Target};
use crowdpatch_runtime::format::PatchHeader;
use std::path::Path;

impl PatchDocument {
    /// Parses a patch document from JSON text.
    ///
    /// # Errors
    /// A [`Problem`] naming the field path of the first malformed value
    /// (wrong type, missing field). Unknown fields do not stop parsing: they are
    /// returned beside the document, every one with its path.
    pub fn from_json(text: &str) -> Result<(PatchDocument, Vec<Problem>), Problem> {
        parse_json(text, Target::of_patch_path)
    }

    /// Writes the document as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a patch document always serialises") + "\n"
    }

    /// The patch's header: its parameters with their defaults filled in
    /// (r = [`DEFAULT_AGENT_RADIUS`], u_cft = [`DEFAULT_COMFORT_SPEED`],
    /// seed 0, an empty name).
    pub fn header(&self) -> PatchHeader {
        PatchHeader {
            name: self.name.clone().unwrap_or_default(),
            size: self.size,
            period: self.period,
            agent_radius: self.agent_radius.unwrap_or(DEFAULT_AGENT_RADIUS),
            comfort_speed: self.comfort_speed.unwrap_or(DEFAULT_COMFORT_SPEED),
            seed: self.seed.unwrap_or(0),
        }
    }

    /// Resolves pattern references (relative to `base_dir`, the directory of
    /// the document) and fills defaults, then validates the result.
    ///
    /// `file` names the document in problems.
    ///
    /// # Errors
    /// Every problem found (unreadable or invalid pattern files, out-of-range
    /// values, parity, velocities, obstacles, inseparable points), each with its
    /// file and field path.
    pub fn resolve(&self, file: Option<&Path>, base_dir: &Path) -> Result<Patch, Vec<Problem>> {
        let mut problems = Vec::new();
        if self.format != DOCUMENT_FORMAT {
            problems.push(Problem::new(
                FieldPath::new().field("format"),
                Target::Document,
                format!("= {} is not a supported format (this crowdpatch reads {DOCUMENT_FORMAT})", self.format),
            ));
        }
        let mut sides = Sides::from_fn(|_| Pattern::empty(self.size, self.period));
        let mut sources = Sides::from_fn(|_| None);
        for side in Side::ALL {
            if let Some((pattern, source)) = self.resolve_side(side, base_dir, &mut problems) {
                sides[side] = pattern;
                sources[side] = source;
            }
        }
        let patch = Patch {
            header: self.header(),
            sides,
            pattern_sources: sources,
            obstacles: self.obstacles.clone(),
            endogenous: self.endogenous.clone(),
            solver: self.solver.clone(),
        };
        problems.extend(crate::validate::validate_patch(&patch));
        let problems = crate::problem::capped(problems.into_iter().map(|p| p.in_file(file.map(Path::to_path_buf))));
        if problems.is_empty() { Ok(patch) } else { Err(problems) }
    }

    /// The pattern of one side (side frame) and its file reference, or `None`
    /// for a side left out or a pattern file that could not be used (the
    /// problems are pushed).
    fn resolve_side(
        &self,
        side: Side,
        base_dir: &Path,
        problems: &mut Vec<Problem>,
    ) -> Option<(Pattern, Option<String>)> {
        let doc = self.sides.get(side)?;
        let key = FieldPath::new().field("sides").field(side.name());
        let at = |field: &str, message: String| Problem::new(key.field(field), Target::Side(side), message);
        let Some(rel) = &doc.pattern else {
            if let Some(l) = doc.length
                && l != self.size
            {
                problems.push(at("length", format!("= {l} differs from the patch size {}", self.size)));
            }
            if let Some(p) = doc.period
                && p != self.period
            {
                problems.push(at("period", format!("= {p} differs from the patch period {}", self.period)));
            }
            let inline = Pattern {
                name: doc.name.clone(),
                length: self.size,
                period: self.period,
                entries: doc.entries.clone().unwrap_or_default(),
                exits: doc.exits.clone().unwrap_or_default(),
            };
            return Some((inline.rotated(-(side.index() as i32)), None));
        };
        for (field, present) in [
            ("entries", doc.entries.is_some()),
            ("exits", doc.exits.is_some()),
            ("length", doc.length.is_some()),
            ("period", doc.period.is_some()),
            ("name", doc.name.is_some()),
        ] {
            if present {
                problems.push(at(
                    field,
                    "a side that references a pattern file cannot also be inline; remove this field or the \"pattern\" reference".into(),
                ));
            }
        }
        match load_pattern(&base_dir.join(rel)) {
            Ok(p) => {
                if p.length != self.size {
                    problems.push(at(
                        "pattern",
                        format!("{rel:?} has length {} m but the patch size is {} m", p.length, self.size),
                    ));
                }
                if p.period != self.period {
                    problems.push(at(
                        "pattern",
                        format!("{rel:?} has period {} s but the patch period is {} s", p.period, self.period),
                    ));
                }
                Some((p, Some(rel.clone())))
            }
            Err(e) => {
                // The pattern file's own problems, re-anchored at this side.
                let reference = key.field("pattern");
                for p in e.problems() {
                    let (path, target) = if p.path.is_empty() {
                        (reference.clone(), Target::Side(side))
                    } else {
                        let path = reference.inside(Some(rel), &p.path);
                        let target = Target::of_patch_path(&path);
                        (path, target)
                    };
                    problems.push(Problem::new(path, target, p.message));
                }
                None
            }
        }
    }
}

/// Loads and validates a `*.patch.json` file; pattern references resolve
/// relative to its directory.
///
/// # Errors
/// [`LoadError::Io`] when unreadable, else [`LoadError::Invalid`] with every
/// problem found (malformed JSON, unknown fields, out-of-range values, …).
pub fn load_patch(path: &Path) -> Result<Patch, LoadError> {
    let (doc, unknown) = read_patch_document(path)?;
    let base = path.parent().unwrap_or(Path::new("."));
    let mut problems = unknown;
    match doc.resolve(Some(path), base) {
        Ok(mut patch) => {
            if problems.is_empty() {
                if patch.header.name.is_empty() {
                    patch.header.name = file_stem(path);
                }
                Ok(patch)
            } else {
                Err(LoadError::Invalid { problems: crate::problem::capped(problems) })
            }
        }
        Err(more) => {
            problems.extend(more);
            Err(LoadError::Invalid { problems: crate::problem::capped(problems) })
        }
    }
}

/// Reads a document's text, refusing a file larger than
/// [`crate::limits::MAX_DOCUMENT_BYTES`] (without reading it whole) or not
/// UTF-8. O(bytes).
///
/// # Errors
/// [`LoadError::Io`] when unreadable, [`LoadError::Invalid`] when too large.
pub fn read_text(path: &Path) -> Result<String, LoadError> {
    use std::io::Read;
    let io = |source| LoadError::Io { file: path.to_path_buf(), source };
    let file = std::fs::File::open(path).map_err(io)?;
    let max = crate::limits::MAX_DOCUMENT_BYTES;
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > max {
        return Err(LoadError::Invalid {
            problems: vec![
                Problem::new(
                    FieldPath::new(),
                    Target::Document,
                    format!("is larger than {} MiB, the largest document read", max >> 20),
                )
                .in_file(Some(path.to_path_buf())),
            ],
        });
    }
    String::from_utf8(bytes).map_err(|e| io(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))
}

/// Reads a patch document without resolving it, returning the unknown-field
/// problems beside it (the editor opens documents that do not validate).
///
/// # Errors
/// Unreadable file or malformed JSON.
pub fn read_patch_document(path: &Path) -> Result<(PatchDocument, Vec<Problem>), LoadError> {
    let text = read_text(path)?;
    let in_file = |p: Problem| p.in_file(Some(path.to_path_buf()));
    let (doc, unknown) =
        PatchDocument::from_json(&text).map_err(|p| LoadError::Invalid { problems: vec![in_file(p)] })?;
    Ok((doc, unknown.into_iter().map(in_file).collect()))
}

/// The file name without its `.patch.json` / `.pattern.json` / `.json` suffix.
pub fn file_stem(path: &Path) -> String {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    for suffix in [".patch.json", ".pattern.json", ".json"] {
        if let Some(stem) = name.strip_suffix(suffix) {
            return stem.to_string();
        }
    }
    name
}

/// Loads and validates a `*.pattern.json` file.
///
/// # Errors
/// As [`load_patch`].
pub fn load_pattern(path: &Path) -> Result<Pattern, LoadError> {
    let text = read_text(path)?;
    let in_file = |p: Problem| p.in_file(Some(path.to_path_buf()));
    // A pattern file's targets are its own points; a patch re-anchors them.
    let (file, unknown): (PatternFile, Vec<Problem>) =
        parse_json(&text, |_| Target::Document).map_err(|p| LoadError::Invalid { problems: vec![in_file(p)] })?;
    let mut problems: Vec<Problem> = unknown.into_iter().map(in_file).collect();
    if file.format != DOCUMENT_FORMAT {
        problems.push(in_file(Problem::new(
            FieldPath::new().field("format"),
            Target::Document,
            format!("= {} is not a supported format (this crowdpatch reads {DOCUMENT_FORMAT})", file.format),
        )));
    }
    let mut pattern = Pattern::from(file);
    problems.extend(crate::validate::validate_pattern(&pattern).into_iter().map(in_file));
    if problems.is_empty() {
        if pattern.name.is_none() {
            pattern.name = Some(file_stem(path));
        }
        Ok(pattern)
    } else {
        Err(LoadError::Invalid { problems: crate::problem::capped(problems) })
    }
}

/// Saves a pattern as a `*.pattern.json` file, atomically.
///
/// # Errors
/// I/O errors, with the file named.
pub fn save_pattern(pattern: &Pattern, path: &Path) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(&PatternFile::from(pattern)).expect("a pattern always serialises") + "\n";
    crate::io::write_atomic(path, text.as_bytes())
}

/// Parses JSON into `T`, reporting the path of a malformed value and
/// collecting the path of every unknown field; `target` gives the element
/// a path is about.
fn parse_json<T: serde::de::DeserializeOwned>(
    text: &str,
    target: impl Fn(&FieldPath) -> Target,
) -> Result<(T, Vec<Problem>), Problem> {
    let mut unknown = Vec::new();
    let mut de = serde_json::Deserializer::from_str(text);
    let mut track = serde_path_to_error::Track::new();
    let value = {
        let mut on_unknown = |path: serde_ignored::Path<'_>| unknown.push(ignored_path(&path));
        let ignored = serde_ignored::Deserializer::new(
            serde_path_to_error::Deserializer::new(&mut de, &mut track),
            &mut on_unknown,
        );
        T::deserialize(ignored)
    };
    let value = match value.and_then(|v| de.end().map(|()| v)) {
        Ok(v) => v,
        Err(e) => {
            let path = track_path(&track.path());
            // serde_json appends " at line L column C"; keep it, it helps.
            let t = target(&path);
            return Err(Problem::new(path, t, e.to_string()));
        }
    };
    let problems = unknown
        .into_iter()
        .map(|path| {
            let t = target(&path);
            Problem::new(path, t, "is not a known field (check its spelling; unknown fields are an error)")
        })
        .collect();
    Ok((value, problems))
}

/// `serde_path_to_error`'s path as a [`FieldPath`].
fn track_path(path: &serde_path_to_error::Path) -> FieldPath {
    let mut out = FieldPath::new();
    for seg in path.iter() {
        out = match seg {
            serde_path_to_error::Segment::Seq { index } => out.index(*index),
            serde_path_to_error::Segment::Map { key } | serde_path_to_error::Segment::Enum { variant: key } => {
                out.field(key.as_str())
            }
            serde_path_to_error::Segment::Unknown => out,
        };
    }
    out
}

/// `serde_ignored`'s path as a [`FieldPath`].
fn ignored_path(path: &serde_ignored::Path<'_>) -> FieldPath {
    use serde_ignored::Path as P;
    match path {
        P::Root => FieldPath::new(),
        P::Seq { parent, index } => ignored_path(parent).index(*index),
        P::Map { parent, key } => ignored_path(parent).field(key.as_str()),
        P::Some { parent } | P::NewtypeStruct { parent } | P::NewtypeVariant { parent } => ignored_path(parent),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Vec2;
    use crate::model::{Direction, PointId};

    #[test]
    fn unknown_fields_are_all_reported_with_paths() {
        let text = r#"{"format":1,"size":16,"period":10,"colour":"red",
            "sides":{"south":{"entries":[{"s":1,"t":1,"speed":2}],"exits":[{"s":9,"t":2}]}},
            "obstacles":[{"circle":{"center":[8,8],"radius":1,"height":2}}]}"#;
        let (_, unknown) = PatchDocument::from_json(text).unwrap();
        let paths: Vec<String> = unknown.iter().map(|p| p.path.to_string()).collect();
        assert!(paths.iter().any(|p| p == "colour"), "{paths:?}");
        assert!(paths.iter().any(|p| p == "sides.south.entries[0].speed"), "{paths:?}");
        // serde_ignored does not record enum variants in its paths.
        assert!(paths.iter().any(|p| p == "obstacles[0].height"), "{paths:?}");
        let speed = unknown.iter().find(|p| p.path == "sides.south.entries[0].speed").unwrap();
        assert_eq!(speed.target, Target::Point(PointId { side: Side::South, direction: Direction::Entry, index: 0 }));
        assert_eq!(unknown.iter().find(|p| p.path == "obstacles[0].height").unwrap().target, Target::Obstacle(0));
    }

    #[test]
    fn malformed_values_name_their_path() {
        let text = r#"{"format":1,"size":16,"period":10,"sides":{"east":{"entries":[{"s":1,"t":"x"}]}}}"#;
        let p = PatchDocument::from_json(text).unwrap_err();
        assert_eq!(p.path, "sides.east.entries[0].t");
        assert_eq!(p.target, Target::Point(PointId { side: Side::East, direction: Direction::Entry, index: 0 }));
    }

    #[test]
    fn inline_velocities_are_patch_frame() {
        let text = r#"{"format":1,"size":16,"period":10,"sides":{
            "east":{"entries":[{"s":8,"t":1,"velocity":[-1.0,0.2]}]},
            "west":{"exits":[{"s":8,"t":9}]}}}"#;
        let (doc, _) = PatchDocument::from_json(text).unwrap();
        let patch = doc.resolve(None, Path::new(".")).unwrap();
        let c = patch.crossings();
        let entry = c.iter().find(|c| c.direction == Direction::Entry).unwrap();
        assert!((entry.velocity - Vec2::new(-1.0, 0.2)).norm() < 1e-12);
        assert_eq!(entry.position, Vec2::new(16.0, 8.0));
        let exit = c.iter().find(|c| c.direction == Direction::Exit).unwrap();
        // Default exit velocity on the west side: outward normal (−x) at comfort speed.
        assert!((exit.velocity - Vec2::new(-1.33, 0.0)).norm() < 1e-12);
        assert_eq!(exit.position, Vec2::new(0.0, 8.0));
    }

    #[test]
    fn problems_of_a_referenced_pattern_point_at_the_points() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("bad.pattern.json"),
            r#"{"format":1,"length":16,"period":10,"entries":[{"s":4,"t":11}],"exits":[{"s":5,"t":1}]}"#,
        )
        .unwrap();
        let text = r#"{"format":1,"size":16,"period":10,"sides":{"north":{"pattern":"bad.pattern.json"}}}"#;
        let (doc, _) = PatchDocument::from_json(text).unwrap();
        let problems = doc.resolve(None, dir.path()).unwrap_err();
        let p = problems.iter().find(|p| p.message.contains("the period")).unwrap();
        assert_eq!(p.path.to_string(), "sides.north.pattern (bad.pattern.json): entries[0].t");
        assert_eq!(p.target, Target::Point(PointId { side: Side::North, direction: Direction::Entry, index: 0 }));
    }
}
