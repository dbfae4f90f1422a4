//! Paths of values in JSON documents, as problems report them:
//! `sides.east.entries[3].t`.

use std::fmt;

/// One step of a [`FieldPath`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Segment {
    /// An object member, `name`.
    Field(String),
    /// An array element, `[index]`.
    Index(usize),
    /// The rest of the path lies in another document referenced here (a
    /// pattern file), named by its reference when known: prints `: ` or
    /// ` (reference): `.
    Inside(Option<String>),
}

/// The path of a value in a JSON document: `sides.east.entries[3].t`.
///
/// Built with [`FieldPath::field`] and [`FieldPath::index`], like gltf-json's
/// `Path`; compares equal to its printed form (`path == "sides"`).
///
/// # Example
/// ```
/// use crowdpatch::field_path::FieldPath;
/// let p = FieldPath::new().field("sides").field("east").field("entries").index(3).field("t");
/// assert_eq!(p.to_string(), "sides.east.entries[3].t");
/// assert!(p == "sides.east.entries[3].t");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct FieldPath {
    segments: Vec<Segment>,
}

impl FieldPath {
    /// The empty path: the document as a whole.
    pub fn new() -> FieldPath {
        FieldPath::default()
    }

    /// The path of member `name` of this value.
    pub fn field(&self, name: impl Into<String>) -> FieldPath {
        self.with(Segment::Field(name.into()))
    }

    /// The path of element `index` of this array.
    pub fn index(&self, index: usize) -> FieldPath {
        self.with(Segment::Index(index))
    }

    /// This path followed by `inner`, a path inside the document referenced
    /// here (`reference` is how the reference is written, when it should be
    /// shown).
    pub fn inside(&self, reference: Option<&str>, inner: &FieldPath) -> FieldPath {
        let mut out = self.with(Segment::Inside(reference.map(str::to_string)));
        out.segments.extend(inner.segments.iter().cloned());
        out
    }

    /// The steps of the path.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// Whether this is the empty path (the whole document).
    pub fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }

    /// Whether the path begins with member `name`.
    pub fn starts_with_field(&self, name: &str) -> bool {
        matches!(self.segments.first(), Some(Segment::Field(f)) if f == name)
    }

    /// The path with every array index written `[…]`: the *kind* of value it
    /// names (`sides.east.entries[…].t`), which problem lists group by.
    ///
    /// ```
    /// use crowdpatch::field_path::FieldPath;
    /// let p = FieldPath::new().field("sides").field("east").field("entries").index(3).field("t");
    /// assert_eq!(p.pattern(), "sides.east.entries[…].t");
    /// ```
    pub fn pattern(&self) -> String {
        let mut out = String::new();
        let mut first = true;
        for s in &self.segments {
            match s {
                Segment::Field(name) => {
                    if !first {
                        out.push('.');
                    }
                    out.push_str(name);
                }
                Segment::Index(_) => out.push_str("[…]"),
                Segment::Inside(None) => out.push_str(": "),
                Segment::Inside(Some(r)) => {
                    out.push_str(" (");
                    out.push_str(r);
                    out.push_str("): ");
                }
            }
            first = matches!(s, Segment::Inside(_));
        }
        out
    }

    fn with(&self, segment: Segment) -> FieldPath {
        let mut segments = self.segments.clone();
        segments.push(segment);
        FieldPath { segments }
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for s in &self.segments {
            match s {
                Segment::Field(name) => {
                    if !first {
                        f.write_str(".")?;
                    }
                    f.write_str(name)?;
                    first = false;
                }
                Segment::Index(i) => {
                    write!(f, "[{i}]")?;
                    first = false;
                }
                Segment::Inside(None) => {
                    f.write_str(": ")?;
                    first = true;
                }
                Segment::Inside(Some(r)) => {
                    write!(f, " ({r}): ")?;
                    first = true;
                }
            }
        }
        Ok(())
    }
}

/// Compares what is written to it with a string, without allocating.
struct Matches<'a> {
    rest: &'a str,
    ok: bool,
}

impl fmt::Write for Matches<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        match self.rest.strip_prefix(s) {
            Some(rest) if self.ok => self.rest = rest,
            _ => self.ok = false,
        }
        Ok(())
    }
}

impl PartialEq<str> for FieldPath {
    fn eq(&self, other: &str) -> bool {
        let mut m = Matches { rest: other, ok: true };
        fmt::write(&mut m, format_args!("{self}")).is_ok() && m.ok && m.rest.is_empty()
    }
}

impl PartialEq<&str> for FieldPath {
    fn eq(&self, other: &&str) -> bool {
        *self == **other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_print_as_documents_write_them() {
        let p = FieldPath::new().field("sides").field("east").field("entries").index(3).field("t");
        assert_eq!(p.to_string(), "sides.east.entries[3].t");
        assert!(p.starts_with_field("sides") && !p.starts_with_field("east"));
        assert!(p == "sides.east.entries[3].t" && p != "sides.east.entries[3]" && p != "sides.east.entries[3].tt");
        assert_eq!(FieldPath::new().field("obstacles").index(2).index(1).to_string(), "obstacles[2][1]");
        let inner = FieldPath::new().field("exits").index(0).field("s");
        let side = FieldPath::new().field("sides").field("north").field("pattern");
        assert_eq!(side.inside(None, &inner).to_string(), "sides.north.pattern: exits[0].s");
        assert_eq!(side.inside(Some("a.json"), &inner).to_string(), "sides.north.pattern (a.json): exits[0].s");
        assert!(FieldPath::new().is_empty() && FieldPath::new().to_string().is_empty());
    }
}
