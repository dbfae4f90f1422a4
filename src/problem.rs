//! Problems found in documents: where (file, typed field path, the element it
//! is about) and what. Validation reports every problem it finds, each built
//! once where it is found, in the manner of gltf-json's `Validate`, which
//! yields `(Path, Error)` pairs.
//!
//! A [`FieldPath`] prints as `sides.east.entries[3].t`; a path that continues
//! inside a referenced pattern file prints as `sides.east.pattern (file): t`.
//! A [`Target`] names the element a problem is about (a boundary point, an
//! obstacle, …), so that a user interface can show the problem on it without
//! reading the path or the message.

pub use crate::field_path::{FieldPath, Segment};
use crate::model::{Direction, PointId, Side};
use std::fmt;
use std::path::PathBuf;

/// The element of a document a [`Problem`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Target {
    /// The document as a whole, or a parameter of it (size, period, solver
    /// options, format, malformed JSON).
    #[default]
    Document,
    /// The four sides together (parity).
    Parity,
    /// One side: its pattern reference or inline fields.
    Side(Side),
    /// One boundary point.
    Point(PointId),
    /// Two boundary points together (too close to be separable).
    PointPair(PointId, PointId),
    /// An obstacle, by index.
    Obstacle(usize),
    /// An endogenous agent, by index.
    Endogenous(usize),
}

impl Target {
    /// The target of a problem at `path` in a patch document, from the path's
    /// steps alone: `sides.<side>.<entries|exits>[i]…` is a point (also inside
    /// a referenced pattern), `sides.<side>…` a side, `sides` parity,
    /// `obstacles[k]…` an obstacle, `endogenous[k]…` an endogenous agent,
    /// anything else the document. Used for problems found by the JSON
    /// reader (unknown fields, malformed values), whose paths are all they
    /// have; validation builds its targets directly.
    pub fn of_patch_path(path: &FieldPath) -> Target {
        let seg = path.segments();
        let field = |i: usize| match seg.get(i) {
            Some(Segment::Field(f)) => Some(f.as_str()),
            _ => None,
        };
        let index = |i: usize| match seg.get(i) {
            Some(Segment::Index(k)) => Some(*k),
            _ => None,
        };
        match field(0) {
            Some("sides") if seg.len() == 1 => Target::Parity,
            Some("sides") => {
                let Some(side) = field(1).and_then(Side::from_name) else {
                    return Target::Document;
                };
                // A referenced pattern continues after `pattern`, `Inside`.
                let rest = match (field(2), seg.get(3)) {
                    (Some("pattern"), Some(Segment::Inside(_))) => 4,
                    (Some("pattern"), _) => return Target::Side(side),
                    _ => 2,
                };
                for direction in [Direction::Entry, Direction::Exit] {
                    if field(rest) == Some(direction.field())
                        && let Some(i) = index(rest + 1)
                    {
                        return Target::Point(PointId { side, direction, index: i });
                    }
                }
                Target::Side(side)
            }
            Some("obstacles") => index(1).map_or(Target::Document, Target::Obstacle),
            Some("endogenous") => index(1).map_or(Target::Document, Target::Endogenous),
            _ => Target::Document,
        }
    }

    /// The boundary points the problem is about (none, one or two).
    pub fn points(&self) -> Vec<PointId> {
        match *self {
            Target::Point(p) => vec![p],
            Target::PointPair(a, b) => vec![a, b],
            _ => vec![],
        }
    }
}

/// One problem found in a document: where (file, field path, element) and
/// what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The file, when known.
    pub file: Option<PathBuf>,
    /// Field path, e.g. `sides.east.entries[3].t` (empty for the whole file).
    pub path: FieldPath,
    /// The element the problem is about.
    pub target: Target,
    /// What is wrong, with the offending value and how to fix it.
    pub message: String,
}

impl Problem {
    /// A problem at `path` about `target`, in no file yet.
    pub fn new(path: FieldPath, target: Target, message: impl Into<String>) -> Problem {
        Problem { file: None, path, target, message: message.into() }
    }

    /// The same problem, in `file`.
    pub fn in_file(mut self, file: Option<PathBuf>) -> Problem {
        self.file = file;
        self
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}: ", file.display())?;
        }
        if self.path.is_empty() { write!(f, "{}", self.message) } else { write!(f, "{} {}", self.path, self.message) }
    }
}

/// How many problems of one kind (one [`FieldPath::pattern`], one kind of
/// [`Target`], one file) a list keeps; the rest are counted and summed up in
/// one closing problem, "and M more …". 20 keeps a terminal readable and
/// still shows the shape of a mistake repeated over thousands of points.
pub const PROBLEMS_PER_KIND: usize = 20;

/// A list of problems that keeps the first [`PROBLEMS_PER_KIND`] of each
/// kind and counts the others, so that a document repeating one mistake a
/// million times costs a few kilobytes to report, not gigabytes. The editor,
/// `validate` and `bake` all read their problems through it, so they list
/// the same ones.
///
/// A kind is the file, the field path with its indices erased
/// ([`FieldPath::pattern`]) and the kind of [`Target`].
///
/// Cost: O(path length) per problem pushed.
///
/// # Example
/// ```
/// use crowdpatch::problem::{FieldPath, Problem, ProblemList, Target, PROBLEMS_PER_KIND};
/// let mut list = ProblemList::new();
/// for i in 0..1000 {
///     list.push(Problem::new(FieldPath::new().field("obstacles").index(i), Target::Obstacle(i), "is bad"));
/// }
/// let problems = list.into_vec();
/// assert_eq!(problems.len(), PROBLEMS_PER_KIND + 1);
/// assert!(problems.last().unwrap().message.contains("980 more"));
/// ```
#[derive(Debug, Clone, Default)]
pub struct ProblemList {
    listed: Vec<Problem>,
    /// Per kind: problems seen.
    kinds: std::collections::HashMap<Kind, usize>,
    /// Problems counted but not kept, per kind, in order of first overflow.
    more: Vec<((Option<PathBuf>, String), usize)>,
    more_index: std::collections::HashMap<Kind, usize>,
}

/// File, field-path pattern and kind of target.
type Kind = (Option<PathBuf>, String, std::mem::Discriminant<Target>);

impl ProblemList {
    /// An empty list.
    pub fn new() -> ProblemList {
        ProblemList::default()
    }

    fn key(file: &Option<PathBuf>, path: &FieldPath, target: &Target) -> Kind {
        (file.clone(), path.pattern(), std::mem::discriminant(target))
    }

    /// Whether a problem at `path` about `target` (in no file) would be
    /// kept; if not, it is counted now. Lets a hot loop skip formatting a
    /// message that would be dropped.
    pub fn admits(&mut self, path: &FieldPath, target: &Target) -> bool {
        self.admit(Self::key(&None, path, target))
    }

    fn admit(&mut self, key: Kind) -> bool {
        let seen = self.kinds.entry(key.clone()).or_insert(0);
        *seen += 1;
        if *seen <= PROBLEMS_PER_KIND {
            return true;
        }
        match self.more_index.get(&key) {
            Some(&k) => self.more[k].1 += 1,
            None => {
                self.more_index.insert(key.clone(), self.more.len());
                self.more.push(((key.0, key.1), 1));
            }
        }
        false
    }

    /// Adds a problem (kept or counted).
    pub fn push(&mut self, problem: Problem) {
        if self.admit(Self::key(&problem.file, &problem.path, &problem.target)) {
            self.listed.push(problem);
        }
    }

    /// Adds a problem already admitted by [`ProblemList::admits`].
    pub fn push_admitted(&mut self, problem: Problem) {
        self.listed.push(problem);
    }

    /// Whether no problem was found.
    pub fn is_empty(&self) -> bool {
        self.listed.is_empty() && self.more.is_empty()
    }

    /// Every problem found, kept or counted.
    pub fn len(&self) -> usize {
        self.listed.len() + self.more.iter().map(|(_, n)| n).sum::<usize>()
    }

    /// The problems kept, in the order found.
    pub fn iter(&self) -> impl Iterator<Item = &Problem> {
        self.listed.iter()
    }

    /// The problems kept, then one per kind that overflowed: "and M more
    /// problems at PATH[…] (the first 20 are listed)".
    pub fn into_vec(self) -> Vec<Problem> {
        let mut out = self.listed;
        for ((file, pattern), n) in self.more {
            let at = if pattern.is_empty() { String::new() } else { format!(" at {pattern}") };
            out.push(
                Problem::new(
                    FieldPath::new(),
                    Target::Document,
                    format!("and {n} more problem(s){at} like the ones above (the first {PROBLEMS_PER_KIND} of each kind are listed)"),
                )
                .in_file(file),
            );
        }
        out
    }
}

impl Extend<Problem> for ProblemList {
    fn extend<I: IntoIterator<Item = Problem>>(&mut self, iter: I) {
        for p in iter {
            self.push(p);
        }
    }
}

impl FromIterator<Problem> for ProblemList {
    fn from_iter<I: IntoIterator<Item = Problem>>(iter: I) -> ProblemList {
        let mut list = ProblemList::new();
        list.extend(iter);
        list
    }
}

/// `problems` with at most [`PROBLEMS_PER_KIND`] of each kind, then one
/// "and M more" per kind ([`ProblemList`]). O(problems).
pub fn capped(problems: impl IntoIterator<Item = Problem>) -> Vec<Problem> {
    problems.into_iter().collect::<ProblemList>().into_vec()
}

/// Why a document could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("{}: cannot read: {source}", file.display())]
    Io {
        /// The file.
        file: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file was read but holds problems; every one is listed.
    #[error("{}", problems.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("\n"))]
    Invalid {
        /// Every problem found.
        problems: Vec<Problem>,
    },
}

impl LoadError {
    /// The problems as a list (an I/O error becomes one problem).
    pub fn problems(&self) -> Vec<Problem> {
        match self {
            LoadError::Io { file, source } => vec![
                Problem::new(FieldPath::new(), Target::Document, format!("cannot read: {source}"))
                    .in_file(Some(file.clone())),
            ],
            LoadError::Invalid { problems } => problems.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> FieldPath {
        // Test helper: builds a path from its printed form (fields and indices only).
        let mut p = FieldPath::new();
        for part in text.split('.') {
            let (name, rest) = part.split_once('[').map_or((part, ""), |(n, r)| (n, r));
            p = p.field(name);
            for idx in rest.split('[').filter(|s| !s.is_empty()) {
                p = p.index(idx.trim_end_matches(']').parse().unwrap());
            }
        }
        p
    }

    #[test]
    fn targets_follow_the_path_steps() {
        let point = |side, direction, index| Target::Point(PointId { side, direction, index });
        assert_eq!(Target::of_patch_path(&parse("sides")), Target::Parity);
        assert_eq!(Target::of_patch_path(&parse("sides.east.entries[3].t")), point(Side::East, Direction::Entry, 3));
        let inner = FieldPath::new().field("exits").index(1).field("s");
        let via_file = parse("sides.west.pattern").inside(Some("x.pattern.json"), &inner);
        assert_eq!(Target::of_patch_path(&via_file), point(Side::West, Direction::Exit, 1));
        assert_eq!(Target::of_patch_path(&parse("sides.west.pattern")), Target::Side(Side::West));
        assert_eq!(Target::of_patch_path(&parse("sides.west.length")), Target::Side(Side::West));
        assert_eq!(Target::of_patch_path(&parse("sides.up.entries[0]")), Target::Document);
        assert_eq!(Target::of_patch_path(&parse("obstacles[2].circle.radius")), Target::Obstacle(2));
        assert_eq!(Target::of_patch_path(&parse("endogenous[1].waypoints[0].t")), Target::Endogenous(1));
        assert_eq!(Target::of_patch_path(&parse("solver.margin")), Target::Document);
        assert_eq!(Target::of_patch_path(&FieldPath::new()), Target::Document);
    }
}
