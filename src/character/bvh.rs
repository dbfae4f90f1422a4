//! Biovision Hierarchy (BVH) motion files, as motion capture and Mixamo
//! exports write them: a joint hierarchy with offsets and channels, then
//! one line of channel values per frame.
//!
//! Our own small parser (the one crate for it, `bvh_anim`, calls itself
//! alpha quality and depends on crates that no longer build): it reads
//! `HIERARCHY` (`ROOT`/`JOINT` blocks with `OFFSET` and `CHANNELS`, `End
//! Site` blocks) and `MOTION` (`Frames:`, `Frame Time:`, values), and
//! refuses anything else with the line it is on. A joint's local transform
//! is a translation — its position channels when it has them, else its
//! offset — then its rotation channels applied in the order listed
//! (`Zrotation Yrotation Xrotation` is `Rz · Ry · Rx`), in degrees. End
//! sites are not joints. Limits: 1024 joints, 6 channels a joint, 10⁶
//! frames, 64 MiB of text; non-finite numbers are refused.

use super::{Clip, Joint, Pose, Quat, Skeleton, Transform, V3};
use nalgebra::{Unit, Vector3};

/// Largest BVH file read `[bytes]`.
pub const MAX_BYTES: usize = 64 << 20;
const MAX_JOINTS: usize = 1024;
const MAX_FRAMES: usize = 1_000_000;

/// A BVH file read: its skeleton at rest (zero channels) and its frames.
#[derive(Debug, Clone, PartialEq)]
pub struct Bvh {
    /// Joints with their offsets as rest translations (file units).
    pub skeleton: Skeleton,
    /// The take, one pose per frame (not cyclic).
    pub clip: Clip,
}

/// A channel of a joint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Channel {
    Position(usize),
    Rotation(usize),
}

/// Parses BVH text; `file` names it in errors.
///
/// # Errors
/// `file:line: what was expected` for malformed text, and the limits above.
pub fn parse(text: &str, file: &str) -> Result<Bvh, String> {
    if text.len() > MAX_BYTES {
        return Err(format!("{file}: larger than {MAX_BYTES} bytes"));
    }
    let mut tokens = Tokens::new(text);
    let err = |line: usize, what: &str| format!("{file}:{line}: {what}");
    let (t, line) = tokens.next().ok_or_else(|| err(1, "empty file"))?;
    if t != "HIERARCHY" {
        return Err(err(line, "expected HIERARCHY (not a BVH file?)"));
    }
    let mut joints: Vec<Joint> = Vec::new();
    let mut channels: Vec<Vec<Channel>> = Vec::new();
    // Stack of open blocks: Some(joint) or None for an end site.
    let mut stack: Vec<Option<usize>> = Vec::new();
    loop {
        let (t, line) = tokens.next().ok_or_else(|| err(tokens.line, "unexpected end of the hierarchy"))?;
        match t {
            "ROOT" | "JOINT" => {
                if (t == "ROOT") != stack.is_empty() {
                    return Err(err(line, "ROOT must be the top joint and JOINT inside one"));
                }
                if matches!(stack.last(), Some(None)) {
                    return Err(err(line, "a joint inside an End Site"));
                }
                let name = tokens.rest_of_line().trim().to_owned();
                if name.is_empty() {
                    return Err(err(line, "a joint without a name"));
                }
                if joints.len() >= MAX_JOINTS {
                    return Err(err(line, "more than 1024 joints"));
                }
                tokens.expect("{").map_err(|l| err(l, "expected {"))?;
                let parent = stack.last().copied().flatten();
                joints.push(Joint { name, parent, rest: Transform::default() });
                channels.push(Vec::new());
                stack.push(Some(joints.len() - 1));
            }
            "End" => {
                let (site, l) = tokens.next().ok_or_else(|| err(line, "expected Site"))?;
                if site != "Site" {
                    return Err(err(l, "expected Site after End"));
                }
                tokens.expect("{").map_err(|l| err(l, "expected {"))?;
                stack.push(None);
            }
            "OFFSET" => {
                let v = tokens.numbers(3).map_err(|l| err(l, "OFFSET needs three numbers"))?;
                if let Some(Some(j)) = stack.last() {
                    joints[*j].rest.translation = V3::new(v[0], v[1], v[2]);
                }
            }
            "CHANNELS" => {
                let Some(Some(j)) = stack.last().copied() else {
                    return Err(err(line, "CHANNELS outside a joint"));
                };
                let n = tokens.numbers(1).map_err(|l| err(l, "CHANNELS needs a count"))?[0];
                if !(0.0..=6.0).contains(&n) || n.fract() != 0.0 {
                    return Err(err(line, "a joint has 0 to 6 channels"));
                }
                for _ in 0..n as usize {
                    let (c, l) = tokens.next().ok_or_else(|| err(line, "missing channel name"))?;
                    let ch = match c {
                        "Xposition" => Channel::Position(0),
                        "Yposition" => Channel::Position(1),
                        "Zposition" => Channel::Position(2),
                        "Xrotation" => Channel::Rotation(0),
                        "Yrotation" => Channel::Rotation(1),
                        "Zrotation" => Channel::Rotation(2),
                        _ => return Err(err(l, &format!("unknown channel {c}"))),
                    };
                    channels[j].push(ch);
                }
            }
            "}" => {
                stack.pop().ok_or_else(|| err(line, "} without a block"))?;
                if stack.is_empty() {
                    break;
                }
            }
            _ => return Err(err(line, &format!("unexpected {t} in the hierarchy"))),
        }
    }
    if joints.is_empty() {
        return Err(err(tokens.line, "no joint"));
    }
    let (t, line) = tokens.next().ok_or_else(|| err(tokens.line, "expected MOTION"))?;
    if t != "MOTION" {
        return Err(err(line, "expected MOTION (one ROOT only is read)"));
    }
    let (t, line) = tokens.next().ok_or_else(|| err(tokens.line, "expected Frames:"))?;
    if t != "Frames:" {
        return Err(err(line, "expected Frames:"));
    }
    let frames = tokens.numbers(1).map_err(|l| err(l, "Frames: needs a count"))?[0];
    if !(1.0..=MAX_FRAMES as f64).contains(&frames) || frames.fract() != 0.0 {
        return Err(err(line, "Frames: must be a whole number from 1 to 10⁶"));
    }
    let (a, line) = tokens.next().ok_or_else(|| err(tokens.line, "expected Frame Time:"))?;
    let (b, _) = tokens.next().ok_or_else(|| err(line, "expected Frame Time:"))?;
    if (a, b) != ("Frame", "Time:") {
        return Err(err(line, "expected Frame Time:"));
    }
    let dt = tokens.numbers(1).map_err(|l| err(l, "Frame Time: needs a number"))?[0];
    if !(dt > 0.0 && dt <= 10.0) {
        return Err(err(line, "Frame Time: must be in (0, 10] s"));
    }
    let per_frame: usize = channels.iter().map(Vec::len).sum();
    let skeleton = Skeleton { joints };
    let mut poses: Vec<Pose> = Vec::with_capacity(frames as usize);
    for _ in 0..frames as usize {
        let v = tokens.numbers(per_frame).map_err(|l| err(l, &format!("a frame needs {per_frame} numbers")))?;
        let mut pose = skeleton.rest_pose();
        let mut k = 0;
        for (j, chans) in channels.iter().enumerate() {
            let mut position: Option<V3> = None;
            let mut rotation = Quat::identity();
            for ch in chans {
                let x = v[k];
                k += 1;
                match *ch {
                    Channel::Position(a) => position.get_or_insert(V3::zeros())[a] = x,
                    Channel::Rotation(a) => {
                        let axis = Unit::new_unchecked(Vector3::ith(a, 1.0));
                        rotation *= Quat::from_axis_angle(&axis, x.to_radians());
                    }
                }
            }
            if let Some(p) = position {
                pose[j].translation = p;
            }
            pose[j].rotation = rotation;
        }
        poses.push(pose);
    }
    Ok(Bvh { skeleton, clip: Clip { name: "take".into(), frame_interval: dt, frames: poses, cyclic: false } })
}

/// Whitespace-separated tokens with their line numbers.
struct Tokens<'a> {
    lines: std::str::Lines<'a>,
    current: std::str::SplitWhitespace<'a>,
    rest: &'a str,
    line: usize,
}

impl<'a> Tokens<'a> {
    fn new(text: &'a str) -> Tokens<'a> {
        Tokens { lines: text.lines(), current: "".split_whitespace(), rest: "", line: 0 }
    }

    fn next(&mut self) -> Option<(&'a str, usize)> {
        loop {
            if let Some(t) = self.current.next() {
                // What follows this token on its line.
                let at = self.rest.find(t).map_or(self.rest.len(), |i| i + t.len());
                self.rest = &self.rest[at..];
                return Some((t, self.line));
            }
            let l = self.lines.next()?;
            self.line += 1;
            self.current = l.split_whitespace();
            self.rest = l;
        }
    }

    /// The rest of the current line (a joint name may hold spaces).
    fn rest_of_line(&mut self) -> &'a str {
        let r = self.rest;
        self.current = "".split_whitespace();
        self.rest = "";
        r
    }

    fn expect(&mut self, want: &str) -> Result<(), usize> {
        match self.next() {
            Some((t, _)) if t == want => Ok(()),
            Some((_, l)) => Err(l),
            None => Err(self.line),
        }
    }

    /// `n` finite numbers, or the line where that failed.
    fn numbers(&mut self, n: usize) -> Result<Vec<f64>, usize> {
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let (t, l) = self.next().ok_or(self.line)?;
            let x: f64 = t.parse().map_err(|_| l)?;
            if !x.is_finite() {
                return Err(l);
            }
            out.push(x);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = "HIERARCHY
ROOT Hips
{
\tOFFSET 0 0 0
\tCHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation
\tJOINT Left Leg
\t{
\t\tOFFSET 10 -40 0
\t\tCHANNELS 3 Zrotation Yrotation Xrotation
\t\tEnd Site
\t\t{
\t\t\tOFFSET 0 -40 0
\t\t}
\t}
}
MOTION
Frames: 2
Frame Time: 0.5
0 90 0 0 0 0 0 0 0
1 91 2 90 0 0 0 0 30
";

    #[test]
    fn a_small_file_reads_with_its_channels_in_order() {
        let b = parse(SMALL, "t.bvh").unwrap();
        assert_eq!(b.skeleton.len(), 2);
        assert_eq!(b.skeleton.joints[1].name, "Left Leg");
        assert_eq!(b.skeleton.joints[1].parent, Some(0));
        assert_eq!(b.clip.frames.len(), 2);
        assert_eq!(b.clip.frame_interval, 0.5);
        let f = &b.clip.frames[1];
        assert_eq!(f[0].translation, V3::new(1.0, 91.0, 2.0));
        // Zrotation 90 first: +X turns to +Y.
        assert!((f[0].rotation * V3::x() - V3::y()).norm() < 1e-12);
        // The leg keeps its offset and turns 30° about X.
        assert_eq!(f[1].translation, V3::new(10.0, -40.0, 0.0));
        assert!((f[1].rotation.angle() - 30f64.to_radians()).abs() < 1e-12);
    }

    #[test]
    fn malformed_files_name_the_line() {
        let e = parse(&SMALL.replace("CHANNELS 3", "CHANNELS 7"), "t.bvh").unwrap_err();
        assert!(e.starts_with("t.bvh:9:"), "{e}");
        let e = parse(&SMALL.replace("1 91 2 90 0 0 0 0 30", "1 91 2"), "t.bvh").unwrap_err();
        assert!(e.contains("a frame needs 9 numbers"), "{e}");
        let e = parse(&SMALL.replace("Frames: 2", "Frames: -1"), "t.bvh").unwrap_err();
        assert!(e.starts_with("t.bvh:17:"), "{e}");
        let e = parse("BVH", "t.bvh").unwrap_err();
        assert!(e.contains("expected HIERARCHY"), "{e}");
        let e = parse(&SMALL.replace("0 90 0", "0 NaN 0"), "t.bvh").unwrap_err();
        assert!(e.starts_with("t.bvh:19:"), "{e}");
    }
}
