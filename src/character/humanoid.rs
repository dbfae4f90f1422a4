//! Humanoid joint mapping: which joints of a rig are the hips, spine, chest,
//! neck, head and the two arms and legs, whatever the naming convention.
//!
//! A rig is read as a tree of named nodes with their rest positions
//! ([`Rig`]). Joints are found in three ways, each bone remembering which
//! ([`Humanoid::found`]):
//!
//! 1. **Names**, across the common conventions: Mixamo
//!    (`mixamorig:LeftUpLeg`, `mixamorigLeftLeg`), Blender and Rigify
//!    (`thigh.L`, `UpperLeg.L`, `DEF-shin.L`), Unreal Engine (`thigh_l`,
//!    `calf_l`, `ball_l`), VRM humanoid names and VRoid (`leftUpperLeg`,
//!    `J_Bip_L_UpperLeg`), 3ds Max Biped (`Bip01 L Thigh`), Character Creator
//!    (`CC_Base_L_Calf`), KayKit (`upperleg.l`), kebab-case (`leg-left`) and
//!    `Left…`/`L_…`/`…_l`/`….L`/`…L` sides. A name is split into words
//!    (camelCase, digits and separators), its side words and vendor prefixes
//!    removed, and the rest looked up ([`classify`]); helper joints (IK
//!    targets, poles, twist and roll bones, controls, `_end` leaves, sockets)
//!    are never humanoid bones. Ambiguous words (`Leg`, `Arm`) are resolved by
//!    the hierarchy: Mixamo's `LeftLeg` below `LeftUpLeg` is the lower leg.
//! 2. **Structure**, when names do not tell: the legs are the two mirror
//!    chains of at least two joints that branch nearest the root; the hips
//!    their common ancestor.
//! 3. **A joint map** (`--joint-map FILE.json`, [`JointMap`]) names any bone
//!    explicitly and wins over both.
//!
//! [`Humanoid::axes`] then checks that the rig is a two-legged humanoid
//! standing upright (legs below the hips, the spine rising from them: a
//! quadruped's spine runs level with the ground) and gives its up and left
//! directions, from which an importer turns any export (Y-up, Z-up, facing
//! anywhere) into the model frame. Cost: O(nodes · depth).

use nalgebra::{Matrix3, Rotation3, Vector3};
use serde::Serialize;
use std::collections::BTreeMap;

type V3 = Vector3<f64>;

/// A humanoid bone (the VRM humanoid set, without fingers, eyes and jaw).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)]
pub enum Bone {
    Hips,
    Spine,
    Chest,
    Neck,
    Head,
    LeftShoulder,
    LeftUpperArm,
    LeftLowerArm,
    LeftHand,
    RightShoulder,
    RightUpperArm,
    RightLowerArm,
    RightHand,
    LeftUpperLeg,
    LeftLowerLeg,
    LeftFoot,
    LeftToes,
    RightUpperLeg,
    RightLowerLeg,
    RightFoot,
    RightToes,
}

/// Every bone, in [`Bone::index`] order.
pub const BONES: [Bone; 21] = [
    Bone::Hips,
    Bone::Spine,
    Bone::Chest,
    Bone::Neck,
    Bone::Head,
    Bone::LeftShoulder,
    Bone::LeftUpperArm,
    Bone::LeftLowerArm,
    Bone::LeftHand,
    Bone::RightShoulder,
    Bone::RightUpperArm,
    Bone::RightLowerArm,
    Bone::RightHand,
    Bone::LeftUpperLeg,
    Bone::LeftLowerLeg,
    Bone::LeftFoot,
    Bone::LeftToes,
    Bone::RightUpperLeg,
    Bone::RightLowerLeg,
    Bone::RightFoot,
    Bone::RightToes,
];

const NAMES: [&str; 21] = [
    "hips",
    "spine",
    "chest",
    "neck",
    "head",
    "leftShoulder",
    "leftUpperArm",
    "leftLowerArm",
    "leftHand",
    "rightShoulder",
    "rightUpperArm",
    "rightLowerArm",
    "rightHand",
    "leftUpperLeg",
    "leftLowerLeg",
    "leftFoot",
    "leftToes",
    "rightUpperLeg",
    "rightLowerLeg",
    "rightFoot",
    "rightToes",
];

impl Bone {
    /// Position in [`BONES`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The VRM humanoid name (`hips`, `leftUpperLeg`, …), as a joint map
    /// spells it.
    pub fn name(self) -> &'static str {
        NAMES[self.index()]
    }

    /// The bone of a VRM humanoid name (also `upperChest`, read as the chest).
    pub fn from_name(name: &str) -> Option<Bone> {
        if name == "upperChest" {
            return Some(Bone::Chest);
        }
        NAMES.iter().position(|n| *n == name).map(|i| BONES[i])
    }

    /// The leg bones of side `side` (0 left, 1 right): upper leg, lower leg,
    /// foot, toes.
    pub fn leg(side: usize) -> [Bone; 4] {
        if side == 0 {
            [Bone::LeftUpperLeg, Bone::LeftLowerLeg, Bone::LeftFoot, Bone::LeftToes]
        } else {
            [Bone::RightUpperLeg, Bone::RightLowerLeg, Bone::RightFoot, Bone::RightToes]
        }
    }

    /// The arm bones of side `side`: shoulder, upper arm, lower arm, hand.
    pub fn arm(side: usize) -> [Bone; 4] {
        if side == 0 {
            [Bone::LeftShoulder, Bone::LeftUpperArm, Bone::LeftLowerArm, Bone::LeftHand]
        } else {
            [Bone::RightShoulder, Bone::RightUpperArm, Bone::RightLowerArm, Bone::RightHand]
        }
    }

    /// The same bone on the other side (itself on the mid-line).
    pub fn mirror(self) -> Bone {
        let i = self.index();
        match i {
            5..=8 => BONES[i + 4],
            9..=12 => BONES[i - 4],
            13..=16 => BONES[i + 4],
            17..=20 => BONES[i - 4],
            _ => self,
        }
    }
}

/// A rig as the mapping reads it: named nodes, parents before children, with
/// rest positions in any frame and units.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rig {
    /// Node names (may be empty).
    pub names: Vec<String>,
    /// Parent of each node.
    pub parents: Vec<Option<usize>>,
    /// Rest position of each node (global, the file's frame and units).
    pub positions: Vec<V3>,
    /// Whether a node may be a humanoid bone (a joint of a skin, or an
    /// animated node; not a mesh holder).
    pub eligible: Vec<bool>,
}

impl Rig {
    fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether `a` is `b` or an ancestor of it.
    pub fn is_ancestor(&self, a: usize, mut b: usize) -> bool {
        loop {
            if a == b {
                return true;
            }
            match self.parents[b] {
                Some(p) => b = p,
                None => return false,
            }
        }
    }

    fn depth(&self, mut i: usize) -> usize {
        let mut d = 0;
        while let Some(p) = self.parents[i] {
            d += 1;
            i = p;
        }
        d
    }

    /// Lowest common ancestor of `a` and `b`.
    pub fn common_ancestor(&self, a: usize, b: usize) -> Option<usize> {
        let mut k = Some(a);
        while let Some(x) = k {
            if self.is_ancestor(x, b) {
                return Some(x);
            }
            k = self.parents[x];
        }
        None
    }

    fn children(&self, i: usize) -> Vec<usize> {
        (0..self.len()).filter(|&c| self.parents[c] == Some(i) && self.eligible[c]).collect()
    }
}

/// What a node's name says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// Hips, pelvis.
    Hips,
    /// Spine, abdomen, torso (with an index when numbered).
    Spine,
    /// Chest, upper chest.
    Chest,
    /// Neck.
    Neck,
    /// Head.
    Head,
    /// Shoulder, clavicle.
    Shoulder,
    /// Upper arm.
    UpperArm,
    /// `Arm` alone: the upper arm, or the whole arm of a one-bone arm.
    Arm,
    /// Lower arm, forearm, elbow.
    LowerArm,
    /// Hand, wrist, fist.
    Hand,
    /// Upper leg, thigh.
    UpperLeg,
    /// `Leg` alone: Mixamo's lower leg below `UpLeg`, or a one-bone leg.
    Leg,
    /// Lower leg, calf, shin, knee.
    LowerLeg,
    /// Foot, ankle.
    Foot,
    /// Toes, ball of the foot.
    Toes,
}

/// What [`classify`] reads from a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NameInfo {
    /// The body part.
    pub part: Part,
    /// 0 left, 1 right, `None` on the mid-line.
    pub side: Option<usize>,
    /// The number in the name (`Spine2`, `spine_03`), if any.
    pub number: Option<u32>,
    /// 0 for a deform or plain joint, 1 for Rigify's `ORG-` originals.
    pub rank: u8,
}

/// Words of a name: separators split, camelCase split (`LeftUpLeg` → left,
/// up, leg; `RThigh` → r, thigh), digits split from letters, lower-cased;
/// the part before the last `:` or `|` (a namespace) dropped.
pub fn words(name: &str) -> Vec<String> {
    let name = name.rsplit([':', '|']).next().unwrap_or(name);
    let chars: Vec<char> = name.chars().collect();
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if let Some(&p) = cur.chars().last().as_ref() {
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            let boundary = (p.is_lowercase() && c.is_uppercase())
                || (p.is_ascii_digit() != c.is_ascii_digit())
                || (p.is_uppercase() && c.is_uppercase() && next_lower);
            if boundary {
                out.push(std::mem::take(&mut cur));
            }
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out.into_iter().map(|w| w.to_lowercase()).collect()
}

/// Vendor prefixes and filler words, dropped (with a number right after them:
/// `Bip01`, `mixamorig1`, `Character1`).
const NOISE: [&str; 16] = [
    "def",
    "deform",
    "mixamorig",
    "j",
    "bip",
    "cc",
    "base",
    "character",
    "armature",
    "c",
    "jnt",
    "joint",
    "bone",
    "bn",
    "sk",
    "mesh",
];

/// Words that make a joint a helper, never a humanoid bone.
const HELPER: [&str; 48] = [
    "end",
    "nub",
    "tip",
    "ik",
    "pole",
    "target",
    "twist",
    "roll",
    "control",
    "ctrl",
    "ctl",
    "mch",
    "helper",
    "socket",
    "slot",
    "weapon",
    "prop",
    "effector",
    "pv",
    "aux",
    "corrective",
    "correctiveroot",
    "jiggle",
    "tweak",
    "hint",
    "null",
    "locator",
    "sec",
    "adj",
    "hair",
    "skirt",
    "bust",
    "breast",
    "tail",
    "ear",
    "eye",
    "jaw",
    "cape",
    "cloth",
    "heel",
    "proxy",
    "dummy",
    "attach",
    "lookat",
    "coat",
    "robe",
    "dress",
    "cloak",
];

/// Whether a joint name marks a helper joint (an IK target, a pole, a
/// twist bone, a control, an `_end` leaf, a socket, hair, a tail…), never a
/// humanoid bone nor a limb.
pub fn is_helper(name: &str) -> bool {
    words(name).iter().any(|w| HELPER.contains(&w.as_str()))
}

/// The body part, side and number a joint name tells, or `None` (not a
/// humanoid bone name, or a helper joint). See the module documentation.
pub fn classify(name: &str) -> Option<NameInfo> {
    if is_helper(name) {
        return None;
    }
    let w = words(name);
    let mut side = None;
    let mut rank = 0;
    let mut number = None;
    let mut key = String::new();
    let mut after_noise = false;
    for word in &w {
        let s = word.as_str();
        match s {
            "left" | "l" | "lft" => side = Some(0),
            "right" | "r" | "rt" | "rgt" => side = Some(1),
            "org" => rank = 1,
            _ if NOISE.contains(&s) => {
                after_noise = true;
                continue;
            }
            _ if s.chars().all(|c| c.is_ascii_digit()) => {
                if !after_noise && number.is_none() {
                    number = s.parse().ok();
                }
            }
            _ => key.push_str(s),
        }
        after_noise = false;
    }
    let part = match key.as_str() {
        "hips" | "pelvis" => Part::Hips,
        "hip" => {
            if side.is_some() {
                Part::UpperLeg
            } else {
                Part::Hips
            }
        }
        "spine" | "abdomen" | "torso" | "waist" | "belly" | "lowerback" => Part::Spine,
        "chest" | "upperchest" | "ribcage" | "thorax" => Part::Chest,
        "neck" => Part::Neck,
        "head" => Part::Head,
        "shoulder" | "clavicle" | "collar" | "collarbone" => Part::Shoulder,
        "upperarm" | "uparm" | "armupper" | "humerus" => Part::UpperArm,
        "arm" => Part::Arm,
        "forearm" | "lowerarm" | "loarm" | "armlower" | "elbow" => Part::LowerArm,
        "hand" | "wrist" | "fist" => Part::Hand,
        "upleg" | "upperleg" | "thigh" | "legupper" | "femur" => Part::UpperLeg,
        "leg" => Part::Leg,
        "lowerleg" | "loleg" | "calf" | "shin" | "knee" | "leglower" | "tibia" => Part::LowerLeg,
        "foot" | "ankle" => Part::Foot,
        "toe" | "toes" | "toebase" | "ball" | "forefoot" => Part::Toes,
        _ => return None,
    };
    let sided = matches!(
        part,
        Part::Shoulder
            | Part::UpperArm
            | Part::Arm
            | Part::LowerArm
            | Part::Hand
            | Part::UpperLeg
            | Part::Leg
            | Part::LowerLeg
            | Part::Foot
            | Part::Toes
    );
    if sided != side.is_some() {
        // A sided pelvis (Rigify's DEF-pelvis.L) or an unsided foot is not
        // a humanoid bone.
        return None;
    }
    Some(NameInfo { part, side, number, rank })
}

/// The naming convention of a rig, from its joint names (for messages):
/// Mixamo (with or without the `mixamorig` prefix), VRoid, Rigify `DEF-`
/// and metarig names (`spine.001`), 3ds Max Biped, Character Creator, VRM
/// humanoid names, VRM 0.x / CATS names (`Left ankle`), the Unreal
/// mannequin's (`thigh_l`, `ball_l`, and `thigh.l` as Godot imports it),
/// Blender's `.L/.R`, lower-case `.l/.r` (KayKit), kebab-case and the
/// generic side spellings.
pub fn convention(names: &[String]) -> &'static str {
    let any = |f: &dyn Fn(&str) -> bool| names.iter().any(|n| f(n));
    let lower: Vec<String> = names.iter().map(|n| n.to_lowercase()).collect();
    let any_lower = |f: &dyn Fn(&str) -> bool| lower.iter().any(|n| f(n));
    // Unreal mannequin terms: calf, ball, clavicle, and numbered spine_0N.
    let unreal = any_lower(&|n| {
        n.starts_with("calf") || n.starts_with("ball") || n.starts_with("clavicle") || n.starts_with("spine_0")
    });
    let mixamo_words = any(&|n| n.ends_with("LeftUpLeg") || n.ends_with("LeftToeBase") || n.ends_with("LeftForeArm"));
    if any(&|n| n.to_lowercase().starts_with("mixamorig")) {
        if any(&|n| n.contains(':')) { "Mixamo (mixamorig: prefix)" } else { "Mixamo (mixamorig prefix, no colon)" }
    } else if any(&|n| n.starts_with("J_Bip_")) {
        "VRoid/VRM (J_Bip_*)"
    } else if any(&|n| n.starts_with("DEF-")) {
        "Blender Rigify deform bones (DEF-spine.001, DEF-thigh.L)"
    } else if any(&|n| n.starts_with("Bip0")) {
        "3ds Max Biped (Bip01 L …)"
    } else if any(&|n| n.starts_with("CC_Base_")) {
        "Character Creator (CC_Base_*)"
    } else if any(&|n| n == "leftUpperLeg" || n == "leftFoot") {
        "VRM humanoid names"
    } else if any_lower(&|n| n == "left ankle" || n == "left knee" || n == "left elbow" || n == "left wrist") {
        "VRM 0.x / CATS names (Left leg, Left knee, Left ankle)"
    } else if mixamo_words {
        "Mixamo names without a prefix (LeftUpLeg, LeftToeBase)"
    } else if any(&|n| n.starts_with("spine.00")) && any(&|n| n.ends_with(".L") || n.ends_with(".R")) {
        "Blender Rigify metarig (spine.001, thigh.L)"
    } else if any(&|n| n.ends_with(".L") || n.ends_with(".R")) {
        "Blender (.L/.R)"
    } else if any(&|n| n.ends_with(".l") || n.ends_with(".r")) {
        if unreal { "Unreal mannequin names with .l/.r (thigh.l, calf.l)" } else { "Blender lower-case (.l/.r)" }
    } else if any(&|n| n.ends_with("_l") || n.ends_with("_L")) {
        if unreal || any_lower(&|n| n.starts_with("thigh")) {
            "Unreal mannequin (thigh_l, calf_l, ball_l)"
        } else {
            "…_l/…_r suffixes"
        }
    } else if any(&|n| n.contains("-left") || n.contains("-right")) {
        "kebab-case (-left/-right)"
    } else if any(&|n| n.contains("Left") || n.contains("left")) {
        "Left…/Right… names"
    } else if any(&|n| n.ends_with('L') || n.ends_with('R')) {
        "…L/…R suffixes"
    } else {
        "no known convention"
    }
}

/// A joint map (`--joint-map FILE.json`): humanoid bone → node name.
///
/// ```json
/// { "format": 1, "bones": { "hips": "pelvis", "leftUpperLeg": "Thigh_L", "leftLowerLeg": "Shin_L" } }
/// ```
///
/// Keys are VRM humanoid bone names ([`Bone::name`]); values the names of
/// the rig's nodes. Bones left out are found as usual.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JointMap {
    /// The bones named, with the node name.
    pub bones: BTreeMap<Bone, String>,
    /// Where it was read from (for messages).
    pub file: String,
}

/// A problem of a joint map or of a mapping.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MapError {
    /// The joint map file is unreadable or malformed.
    #[error("{file}: {message}")]
    JointMapFile {
        /// The file.
        file: String,
        /// The field path, value and reason.
        message: String,
    },
    /// A joint map names a node the rig does not have.
    #[error("{file}: bones.{bone} = \"{node}\": no joint of that name in {rig}{nearest}")]
    NoSuchNode {
        /// The joint map file.
        file: String,
        /// The bone.
        bone: &'static str,
        /// The node name given.
        node: String,
        /// The rig's file.
        rig: String,
        /// Nearest names, as a parenthesis (or empty).
        nearest: String,
    },
    /// The rig is not a two-legged humanoid (or its legs were not found).
    #[error("{0}")]
    NotHumanoid(String),
}

impl JointMap {
    /// Reads a joint map from JSON text; `file` names it in messages.
    ///
    /// # Errors
    /// [`MapError::JointMapFile`] naming the field path and value: malformed
    /// JSON, a `format` other than 1, an unknown bone name, a non-string
    /// node name, an unknown field.
    pub fn from_json(text: &str, file: &str) -> Result<JointMap, MapError> {
        let err = |message: String| MapError::JointMapFile { file: file.to_owned(), message };
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| err(format!("not JSON: {e}")))?;
        let obj = v.as_object().ok_or_else(|| err("the top level must be an object".into()))?;
        for k in obj.keys() {
            if k != "format" && k != "bones" {
                return Err(err(format!("{k}: unknown field (a joint map holds \"format\": 1 and \"bones\")")));
            }
        }
        match obj.get("format") {
            Some(f) if f.as_u64() == Some(1) => {}
            Some(f) => return Err(err(format!("format = {f} is not a supported format (this crowdpatch reads 1)"))),
            None => return Err(err("format: missing (write \"format\": 1)".into())),
        }
        let bones = obj
            .get("bones")
            .and_then(|b| b.as_object())
            .ok_or_else(|| err("bones: missing or not an object of bone name → joint name".into()))?;
        let mut out = BTreeMap::new();
        for (k, v) in bones {
            let bone = Bone::from_name(k)
                .ok_or_else(|| err(format!("bones.{k}: unknown humanoid bone (known: {})", NAMES.join(", "))))?;
            let node = v.as_str().ok_or_else(|| err(format!("bones.{k} = {v}: must be a joint name (a string)")))?;
            out.insert(bone, node.to_owned());
        }
        Ok(JointMap { bones: out, file: file.to_owned() })
    }

    /// Reads a joint map file.
    ///
    /// # Errors
    /// As [`JointMap::from_json`], and an unreadable file.
    pub fn load(path: &std::path::Path) -> Result<JointMap, MapError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| MapError::JointMapFile { file: file.clone(), message: e.to_string() })?;
        JointMap::from_json(&text, &file)
    }
}

/// How a bone was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Found {
    /// By its name.
    Name,
    /// By the structure of the rig.
    Structure,
    /// Named by a joint map.
    JointMap,
    /// By the file's VRM humanoid extension.
    Vrm,
}

/// The humanoid bones of a rig, by node index (of the [`Rig`] it was found
/// in, or of a skeleton after [`Humanoid::remap`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Humanoid {
    /// Node of each bone, in [`BONES`] order.
    pub bones: [Option<usize>; 21],
    /// How each bone was found, in [`BONES`] order.
    pub found: [Option<Found>; 21],
    /// The naming convention recognised ([`convention`]).
    pub convention: String,
    /// What the mapping chose where it had to (two bones on one joint, a
    /// head taken from the top of the spine chain), one sentence each.
    pub notes: Vec<String>,
}

impl Humanoid {
    /// The node of `bone`.
    pub fn get(&self, bone: Bone) -> Option<usize> {
        self.bones[bone.index()]
    }

    fn set(&mut self, bone: Bone, node: usize, how: Found) {
        self.bones[bone.index()] = Some(node);
        self.found[bone.index()] = Some(how);
    }

    /// The same mapping on other indices (`f` maps a node to its new index;
    /// a bone whose node has none is dropped).
    pub fn remap(&self, f: impl Fn(usize) -> Option<usize>) -> Humanoid {
        let mut h = self.clone();
        for (i, b) in self.bones.iter().enumerate() {
            h.bones[i] = b.and_then(&f);
            if h.bones[i].is_none() {
                h.found[i] = None;
            }
        }
        h
    }

    /// Where two bones map to one joint (a rig naming its hips `spine`, a
    /// chest that is also the top of the chain), keeps one and leaves the
    /// others unmapped, with a note naming the joint, the bones and the
    /// choice: a bone named by a joint map or a VRM extension first, then
    /// what a walk needs most (hips, legs, head, neck, arms, spine, chest).
    fn settle_collisions(&mut self, rig: &Rig) {
        use Bone::*;
        const PRIORITY: [Bone; 21] = [
            Hips,
            LeftUpperLeg,
            RightUpperLeg,
            LeftLowerLeg,
            RightLowerLeg,
            LeftFoot,
            RightFoot,
            LeftToes,
            RightToes,
            Head,
            Neck,
            LeftUpperArm,
            RightUpperArm,
            LeftLowerArm,
            RightLowerArm,
            LeftHand,
            RightHand,
            LeftShoulder,
            RightShoulder,
            Spine,
            Chest,
        ];
        let mut by_node: BTreeMap<usize, Vec<Bone>> = BTreeMap::new();
        for b in BONES {
            if let Some(n) = self.get(b) {
                by_node.entry(n).or_default().push(b);
            }
        }
        for (node, bones) in by_node {
            let rank = |b: &Bone| {
                let named = matches!(self.found[b.index()], Some(Found::JointMap | Found::Vrm));
                (!named, PRIORITY.iter().position(|x| x == b).unwrap_or(PRIORITY.len()))
            };
            let Some(&kept) = bones.iter().min_by_key(|b| rank(b)) else { continue };
            if bones.len() < 2 {
                continue;
            }
            let dropped: Vec<&str> = bones.iter().filter(|&&b| b != kept).map(|b| b.name()).collect();
            for &b in &bones {
                if b != kept {
                    self.bones[b.index()] = None;
                    self.found[b.index()] = None;
                }
            }
            self.notes.push(format!(
                "{} {} to joint {}: it is taken as the {}, and {} left unmapped",
                bones.iter().map(|b| b.name()).collect::<Vec<_>>().join(" and "),
                if bones.len() == 2 { "both map" } else { "all map" },
                node_name(rig, node),
                kept.name(),
                dropped.join(" and ")
            ));
        }
    }

    /// The bones found, with their node and how: `(bone, node, found)`.
    pub fn mapped(&self) -> Vec<(Bone, usize, Found)> {
        BONES
            .iter()
            .filter_map(|&b| Some((b, self.bones[b.index()]?, self.found[b.index()].unwrap_or(Found::Name))))
            .collect()
    }

    /// Finds the humanoid bones of `rig`: `vrm` (the file's VRM humanoid
    /// extension, bone → node) first, then the names, then the structure;
    /// a joint map's entries win over all three.
    ///
    /// # Errors
    /// [`MapError::NoSuchNode`] when the joint map names a node the rig
    /// lacks; [`MapError::NotHumanoid`] when no two legs are found.
    pub fn find(
        rig: &Rig,
        vrm: &BTreeMap<Bone, usize>,
        joint_map: Option<&JointMap>,
        rig_file: &str,
    ) -> Result<Humanoid, MapError> {
        let mut h = Humanoid {
            bones: [None; 21],
            found: [None; 21],
            convention: convention(&rig.names).to_owned(),
            notes: Vec::new(),
        };
        if !vrm.is_empty() {
            h.convention = "VRM humanoid extension".into();
        }
        by_names(rig, &mut h);
        for (&bone, &node) in vrm {
            if node < rig.len() {
                h.set(bone, node, Found::Vrm);
            }
        }
        if let Some(map) = joint_map {
            for (&bone, node) in &map.bones {
                let i = rig.names.iter().position(|n| n == node).ok_or_else(|| MapError::NoSuchNode {
                    file: map.file.clone(),
                    bone: bone.name(),
                    node: node.clone(),
                    rig: rig_file.to_owned(),
                    nearest: nearest_names(&rig.names, node),
                })?;
                h.set(bone, i, Found::JointMap);
            }
        }
        if h.get(Bone::LeftUpperLeg).is_none() || h.get(Bone::RightUpperLeg).is_none() {
            by_structure(rig, &mut h);
        }
        if h.get(Bone::Hips).is_none()
            && let (Some(l), Some(r)) = (h.get(Bone::LeftUpperLeg), h.get(Bone::RightUpperLeg))
            && let Some(lca) = rig.common_ancestor(l, r)
        {
            h.set(Bone::Hips, lca, Found::Structure);
        }
        h.settle_collisions(rig);
        if [Bone::Spine, Bone::Chest, Bone::Neck, Bone::Head].iter().all(|&b| h.get(b).is_none()) {
            spine_by_structure(rig, &mut h);
        }
        if (0..2).all(|s| Bone::arm(s).iter().all(|&b| h.get(b).is_none())) {
            arms_by_structure(rig, &mut h);
        }
        if h.get(Bone::LeftUpperLeg).is_none() || h.get(Bone::RightUpperLeg).is_none() || h.get(Bone::Hips).is_none() {
            let hint = if rig.eligible.iter().filter(|&&e| e).count() < 3 {
                "it has no skeleton to speak of".to_string()
            } else {
                "no two legs were found by name or by structure (two mirror chains of joints below the hips)"
                    .to_string()
            };
            return Err(MapError::NotHumanoid(format!(
                "{rig_file} is not a two-legged humanoid that crowdpatch can walk: {hint}; if it is one, name its \
                 joints with --joint-map FILE.json ({{\"format\": 1, \"bones\": {{\"hips\": …, \"leftUpperLeg\": …}}}})"
            )));
        }
        Ok(h)
    }

    /// The up and left directions of the rig at rest (unit, orthogonal, in
    /// the rig's frame), after checking that it stands as a biped humanoid:
    /// feet below the hips, a spine rising from the hips (within
    /// [`UPRIGHT_LIMIT_DEG`] of the legs' direction: a quadruped's runs
    /// level), a head (or neck), no other limbs reaching the ground (a
    /// quadruped's front legs, whether or not found as its arms), and sides
    /// that agree (the left leg on the left of the way the
    /// toes point, the left arm on the side of the left leg).
    ///
    /// # Errors
    /// [`MapError::NotHumanoid`] with what was found, one sentence.
    pub fn axes(&self, rig: &Rig, rig_file: &str) -> Result<(V3, V3), MapError> {
        let not = |why: String| {
            MapError::NotHumanoid(format!(
                "{rig_file} is not a two-legged humanoid that crowdpatch can walk: {why}; crowdpatch walks \
                 upright bipeds (if this is one, name its joints with --joint-map FILE.json)"
            ))
        };
        let p = |b: Bone| self.get(b).map(|i| rig.positions[i]);
        let leg_end = |s: usize| -> V3 {
            let [u, l, f, _] = Bone::leg(s);
            p(f).or(p(l)).or_else(|| p(u).map(|x| lowest_below(rig, self.get(u).unwrap_or(0), x))).unwrap_or_default()
        };
        let (ul, ur) = (p(Bone::LeftUpperLeg).unwrap_or_default(), p(Bone::RightUpperLeg).unwrap_or_default());
        let feet = (leg_end(0) + leg_end(1)) / 2.0;
        let hips = (ul + ur) / 2.0;
        let leg = (hips - feet).norm();
        let scale = rig_extent(rig).max(1e-9);
        let found = self.bones.iter().flatten().count();
        let top = p(Bone::Head).or(p(Bone::Neck)).or(p(Bone::Chest)).or(p(Bone::Spine));
        let spine = top.map(|t| t - hips).filter(|s| s.norm() > 0.05 * scale);
        let up = match (leg >= 0.05 * scale, spine) {
            (true, Some(spine)) => {
                let angle = ((hips - feet) / leg).angle(&spine.normalize());
                if angle > UPRIGHT_LIMIT_DEG.to_radians() {
                    return Err(not(format!(
                        "its spine runs {:.0}° away from the direction its legs stand in, its body held level \
                         as a quadruped's rather than upright",
                        angle.to_degrees()
                    )));
                }
                (hips + spine - feet).normalize()
            }
            (true, None) => {
                return Err(not(format!(
                    "it has no spine (no joint named like one rises from its hips; {found} of 21 humanoid bones found)"
                )));
            }
            // One-bone legs: the spine tells up.
            (false, Some(spine)) => spine.normalize(),
            (false, None) => return Err(not("its legs have no length and it has no spine".into())),
        };
        let lateral = ul - ur;
        let left = lateral - up * lateral.dot(&up);
        if left.norm() < 1e-3 * scale {
            return Err(not("its left and right legs hang from the same point".into()));
        }
        let left = left.normalize();
        if let Some([a, b]) = self.other_limbs_on_the_ground(rig, (hips - feet) / leg.max(1e-12), left) {
            return Err(not(format!(
                "besides its two legs, {} and {} reach the ground: it stands on more than two legs",
                node_name(rig, a),
                node_name(rig, b)
            )));
        }
        if self.get(Bone::Head).is_none() && self.get(Bone::Neck).is_none() {
            return Err(not(format!(
                "it has no head (no joint named like a head or neck, nor a spine chain rising above its arms; \
                 {found} of 21 humanoid bones found)"
            )));
        }
        // Sides: toes point forward (left × up) from the feet; the left arm
        // is on the side of the left leg.
        let forward = left.cross(&up);
        let (mut ahead, mut along) = (0.0, 0.0);
        for s in 0..2 {
            let [_, _, f, t] = Bone::leg(s);
            if let (Some(f), Some(t)) = (p(f), p(t)) {
                let d = t - f;
                let d = d - up * d.dot(&up);
                ahead += d.dot(&forward);
                along += d.norm();
            }
        }
        let name = |b: Bone| self.get(b).map_or_else(String::new, |i| node_name(rig, i));
        if along > 1e-3 * scale && ahead < -0.5 * along {
            return Err(not(format!(
                "its left leg ({}) stands on the right of the way its toes point, so its left and right would \
                 only fit swapped",
                name(Bone::LeftUpperLeg)
            )));
        }
        if let (Some(a), Some(b)) = (p(Bone::LeftUpperArm), p(Bone::RightUpperArm))
            && (a - b).dot(&left) < -1e-3 * scale
        {
            return Err(not(format!(
                "its left arm ({}) is on the side of its right leg ({}), so its left and right would only fit \
                 swapped",
                name(Bone::LeftUpperArm),
                name(Bone::RightUpperLeg)
            )));
        }
        Ok((up, left))
    }

    /// Two joints on either side (left, right) that reach the ground beside
    /// the legs, a quadruped's front legs: eligible joints outside the legs'
    /// subtrees (and not above the legs), not below a helper joint (an IK
    /// target, a pole, a tail…), lower than [`GROUND_REACH`] of the legs'
    /// length above the lowest leg joint (along `up`, the legs' direction)
    /// and a twentieth of it off the mid-plane; `None` when no such pair is
    /// found. O(nodes · depth).
    fn other_limbs_on_the_ground(&self, rig: &Rig, up: V3, left: V3) -> Option<[usize; 2]> {
        let leg_bones: Vec<usize> = (0..2).flat_map(Bone::leg).filter_map(|b| self.get(b)).collect();
        let uppers: Vec<usize> =
            [Bone::LeftUpperLeg, Bone::RightUpperLeg].iter().filter_map(|&b| self.get(b)).collect();
        let in_legs = |k: usize| leg_bones.iter().any(|&b| rig.is_ancestor(b, k));
        let ground = (0..rig.len()).filter(|&k| in_legs(k)).map(|k| rig.positions[k].dot(&up)).reduce(f64::min)?;
        let hips = uppers.iter().map(|&u| rig.positions[u]).sum::<V3>() / uppers.len().max(1) as f64;
        let length = hips.dot(&up) - ground;
        if length <= 0.0 {
            return None;
        }
        let below_helper = |k: usize| {
            let mut i = Some(k);
            while let Some(x) = i {
                if is_helper(&rig.names[x]) {
                    return true;
                }
                i = rig.parents[x];
            }
            false
        };
        let mut sides = [None, None];
        for k in 0..rig.len() {
            if !rig.eligible[k] || in_legs(k) || uppers.iter().any(|&u| rig.is_ancestor(k, u)) || below_helper(k) {
                continue;
            }
            let q = rig.positions[k];
            if q.dot(&up) - ground > GROUND_REACH * length {
                continue;
            }
            let side = (q - hips).dot(&left);
            if side > 0.05 * length {
                sides[0] = sides[0].or(Some(k));
            } else if side < -0.05 * length {
                sides[1] = sides[1].or(Some(k));
            }
        }
        Some([sides[0]?, sides[1]?])
    }
}

/// The largest angle `[°]` between a biped's spine (hips to head) and the
/// direction its legs stand in (feet to hips) at rest.
pub const UPRIGHT_LIMIT_DEG: f64 = 45.0;

/// How high above the lowest leg joint, as a fraction of the legs' length,
/// a joint outside the legs counts as reaching the ground (a front paw).
pub const GROUND_REACH: f64 = 0.3;

/// The lowest point below node `i` (its subtree's positions), for a leg with
/// no named lower joints.
fn lowest_below(rig: &Rig, i: usize, from: V3) -> V3 {
    let mut best = from;
    let mut best_d = 0.0;
    for k in 0..rig.len() {
        if rig.is_ancestor(i, k) {
            let d = (rig.positions[k] - from).norm();
            if d > best_d {
                best_d = d;
                best = rig.positions[k];
            }
        }
    }
    best
}

/// The largest distance between two eligible nodes (a size of the rig).
fn rig_extent(rig: &Rig) -> f64 {
    let pts: Vec<V3> = (0..rig.len()).filter(|&i| rig.eligible[i]).map(|i| rig.positions[i]).collect();
    let mut lo = V3::repeat(f64::INFINITY);
    let mut hi = V3::repeat(f64::NEG_INFINITY);
    for q in &pts {
        lo = lo.inf(q);
        hi = hi.sup(q);
    }
    if pts.is_empty() { 0.0 } else { (hi - lo).norm() }
}

/// Characters of a name compared by [`nearest_names`]: a suggestion needs
/// no more, and the comparison is quadratic in them.
const NEAREST_CHARS: usize = 64;

/// The length of the longest common substring of `a` and `b`, in
/// characters. O(|a| · |b|).
fn longest_common_substring(a: &[char], b: &[char]) -> usize {
    let mut best = 0;
    let mut prev = vec![0usize; b.len() + 1];
    let mut cur = vec![0usize; b.len() + 1];
    for &x in a {
        for (j, &y) in b.iter().enumerate() {
            cur[j + 1] = if x == y { prev[j] + 1 } else { 0 };
            best = best.max(cur[j + 1]);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    best
}

/// Up to three node names close to `name` (same words, or a common
/// substring), as ` (nearest: a, b)`, or empty.
fn nearest_names(names: &[String], name: &str) -> String {
    let key: Vec<char> = words(name).join("").chars().take(NEAREST_CHARS).collect();
    let mut scored: Vec<(usize, &String)> = names
        .iter()
        .filter(|n| !n.is_empty())
        .map(|n| {
            let k: Vec<char> = words(n).join("").chars().take(NEAREST_CHARS).collect();
            (longest_common_substring(&key, &k), n)
        })
        .filter(|x| x.0 >= 3)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    if scored.is_empty() {
        String::new()
    } else {
        format!(" (nearest: {})", scored.iter().take(3).map(|x| x.1.as_str()).collect::<Vec<_>>().join(", "))
    }
}

/// Candidates of one part (and side), best first: better rank, then higher
/// in the hierarchy, then the lower number, then the node order.
fn candidates(rig: &Rig, info: &[Option<NameInfo>], part: Part, side: Option<usize>) -> Vec<usize> {
    let mut c: Vec<usize> = (0..rig.len())
        .filter(|&i| rig.eligible[i] && info[i].is_some_and(|x| x.part == part && x.side == side))
        .collect();
    c.sort_by_key(|&i| {
        let x = info[i].unwrap_or(NameInfo { part, side, number: None, rank: 9 });
        (x.rank, rig.depth(i), x.number.unwrap_or(0), i)
    });
    c
}

/// The bones found by name.
fn by_names(rig: &Rig, h: &mut Humanoid) {
    let info: Vec<Option<NameInfo>> = rig.names.iter().map(|n| classify(n)).collect();
    let first = |part: Part, side: Option<usize>, below: Option<usize>| -> Option<usize> {
        candidates(rig, &info, part, side).into_iter().find(|&i| below.is_none_or(|b| b != i && rig.is_ancestor(b, i)))
    };
    for s in 0..2 {
        let side = Some(s);
        let [bu, bl, bf, bt] = Bone::leg(s);
        let upper = first(Part::UpperLeg, side, None).or_else(|| first(Part::Leg, side, None));
        let Some(upper) = upper else { continue };
        h.set(bu, upper, Found::Name);
        let lower = first(Part::LowerLeg, side, Some(upper)).or_else(|| first(Part::Leg, side, Some(upper)));
        if let Some(l) = lower {
            h.set(bl, l, Found::Name);
        }
        // The foot below the lower leg; else anywhere (a foot outside the leg
        // chain, moved by an IK constraint in the authoring tool).
        let foot = lower
            .and_then(|l| first(Part::Foot, side, Some(l)))
            .or_else(|| first(Part::Foot, side, None).filter(|&f| lower.is_some() && !rig.is_ancestor(upper, f)));
        if let Some(f) = foot {
            h.set(bf, f, Found::Name);
            if let Some(t) = first(Part::Toes, side, Some(f)) {
                h.set(bt, t, Found::Name);
            }
        }
    }
    // Arms: a shoulder, an upper arm below it (or anywhere), the lower arm
    // and hand below.
    for s in 0..2 {
        let side = Some(s);
        let [bs, bu, bl, bh] = Bone::arm(s);
        let shoulder = first(Part::Shoulder, side, None);
        if let Some(x) = shoulder {
            h.set(bs, x, Found::Name);
        }
        let upper = first(Part::UpperArm, side, shoulder)
            .or_else(|| first(Part::Arm, side, shoulder))
            .or_else(|| first(Part::UpperArm, side, None))
            .or_else(|| first(Part::Arm, side, None));
        let Some(upper) = upper else { continue };
        h.set(bu, upper, Found::Name);
        let lower = first(Part::LowerArm, side, Some(upper));
        if let Some(l) = lower {
            h.set(bl, l, Found::Name);
            if let Some(hand) = first(Part::Hand, side, Some(l)) {
                h.set(bh, hand, Found::Name);
            }
        }
    }
    let legs: Vec<usize> = [Bone::LeftUpperLeg, Bone::RightUpperLeg].iter().filter_map(|&b| h.get(b)).collect();
    let hips = candidates(rig, &info, Part::Hips, None);
    let mut hips = hips
        .iter()
        .copied()
        .find(|&i| legs.len() == 2 && legs.iter().all(|&l| rig.is_ancestor(i, l)))
        .or_else(|| {
            // A hips joint beside the legs (both children of a body joint).
            hips.iter().copied().find(|&i| {
                legs.len() == 2 && legs.iter().all(|&l| rig.parents[i].is_some_and(|p| rig.is_ancestor(p, l)))
            })
        })
        .or_else(|| if legs.len() < 2 { hips.first().copied() } else { None });
    let mut spine: Vec<usize> = candidates(rig, &info, Part::Spine, None);
    // Rigify (`spine`, `spine.001`, … and `DEF-spine`, `DEF-spine.001`, …):
    // without a joint named like the hips, the spine joint above both legs
    // is the hips.
    if hips.is_none()
        && legs.len() == 2
        && let Some(k) = spine.iter().position(|&i| legs.iter().all(|&l| rig.is_ancestor(i, l)))
    {
        hips = Some(spine.remove(k));
    }
    if let Some(hp) = hips {
        h.set(Bone::Hips, hp, Found::Name);
    }
    // Spine, chest, neck, head: below the hips' parent (a body joint may hold
    // both the hips and the spine).
    let root = hips.and_then(|hp| rig.parents[hp].or(Some(hp)));
    let below = |i: usize| root.is_none_or(|r| rig.is_ancestor(r, i));
    spine.retain(|&i| below(i) && Some(i) != hips);
    if let Some(&s) = spine.first() {
        h.set(Bone::Spine, s, Found::Name);
    }
    // The chest: named; else the spine joint (not the first) the arms hang
    // from; else the deepest spine joint but the first.
    let arm_root = [Bone::LeftShoulder, Bone::LeftUpperArm, Bone::RightShoulder, Bone::RightUpperArm]
        .iter()
        .find_map(|&b| h.get(b));
    let chest = candidates(rig, &info, Part::Chest, None).into_iter().find(|&i| below(i));
    let chest = chest
        .or_else(|| {
            let a = arm_root?;
            spine.iter().skip(1).copied().filter(|&i| i != a && rig.is_ancestor(i, a)).max_by_key(|&i| rig.depth(i))
        })
        .or_else(|| spine.iter().copied().filter(|&i| Some(i) != spine.first().copied()).max_by_key(|&i| rig.depth(i)));
    if let Some(c) = chest {
        h.set(Bone::Chest, c, Found::Name);
    }
    let neck = candidates(rig, &info, Part::Neck, None).into_iter().find(|&i| below(i));
    let head = candidates(rig, &info, Part::Head, None).into_iter().find(|&i| below(i));
    if let Some(n) = neck {
        h.set(Bone::Neck, n, Found::Name);
    }
    if let Some(hd) = head {
        h.set(Bone::Head, hd, Found::Name);
    }
    // Spine joints above the chest with no head named (Rigify's
    // spine.004–.006, a metarig that stops at spine.005): the top one is the
    // head, the first one the neck.
    let mut above: Vec<usize> =
        spine.iter().copied().filter(|&i| chest.is_some_and(|c| c != i && rig.is_ancestor(c, i))).collect();
    above.sort_by_key(|&i| (rig.depth(i), i));
    if head.is_none()
        && let Some(&top) = above.last()
    {
        h.set(Bone::Head, top, Found::Structure);
        h.notes.push(format!(
            "no joint is named like a head: the top of the spine chain, {}, is taken as the head",
            node_name(rig, top)
        ));
        if neck.is_none() && above.len() >= 2 {
            h.set(Bone::Neck, above[0], Found::Structure);
            h.notes.push(format!(
                "no joint is named like a neck: {}, between the chest and the head, is taken as the neck",
                node_name(rig, above[0])
            ));
        }
    }
}

/// A node's name for messages (`node N` when it has none).
fn node_name(rig: &Rig, i: usize) -> String {
    if rig.names[i].is_empty() { format!("node {i}") } else { rig.names[i].clone() }
}

/// A chain from node `i` down: while the node has eligible children, the
/// one whose subtree reaches farthest from `i`.
fn chain(rig: &Rig, i: usize) -> Vec<usize> {
    let mut out = vec![i];
    let mut k = i;
    loop {
        let kids = rig.children(k);
        let far = |c: usize| -> f64 {
            (0..rig.len())
                .filter(|&x| rig.eligible[x] && rig.is_ancestor(c, x))
                .map(|x| (rig.positions[x] - rig.positions[i]).norm())
                .fold(0.0, f64::max)
        };
        let Some(next) = kids.into_iter().max_by(|&a, &b| far(a).total_cmp(&far(b)).then(b.cmp(&a))) else {
            break;
        };
        out.push(next);
        k = next;
        if out.len() > 64 {
            break;
        }
    }
    out
}

/// The two child chains of node `b` ([`chain`]) that mirror each other
/// (at least two joints each, equal bone counts within one and lengths
/// within 20 %, equally far from `b`), the pair reaching farthest, cut to
/// their common length; `None` when no two do. `skip` leaves children out.
fn mirror_chains(rig: &Rig, b: usize, skip: &dyn Fn(usize) -> bool) -> Option<(Vec<usize>, Vec<usize>)> {
    let kids: Vec<usize> = rig.children(b).into_iter().filter(|&c| !skip(c)).collect();
    if kids.len() < 2 {
        return None;
    }
    let chains: Vec<Vec<usize>> = kids.iter().map(|&c| chain(rig, c)).collect();
    let lengths = |c: &[usize]| -> Vec<f64> {
        let mut v = vec![(rig.positions[c[0]] - rig.positions[b]).norm()];
        v.extend(c.windows(2).map(|w| (rig.positions[w[1]] - rig.positions[w[0]]).norm()));
        v
    };
    let mut best: Option<(f64, usize, usize)> = None;
    for a in 0..chains.len() {
        for c in a + 1..chains.len() {
            // Compared over their common length: one may end in an extra
            // leaf (a toe end).
            let n = chains[a].len().min(chains[c].len());
            if n < 2 || chains[a].len().abs_diff(chains[c].len()) > 1 {
                continue;
            }
            let (ca, cc) = (&chains[a][..n], &chains[c][..n]);
            let (la, lc) = (lengths(ca), lengths(cc));
            let similar = la.iter().zip(&lc).all(|(x, y)| (x - y).abs() <= 0.2 * x.max(*y) + 1e-9);
            let reach = la.iter().sum::<f64>();
            if similar && reach > 0.0 && best.is_none_or(|x| reach > x.0) {
                best = Some((reach, a, c));
            }
        }
    }
    let (_, a, c) = best?;
    let n = chains[a].len().min(chains[c].len());
    Some((chains[a][..n].to_vec(), chains[c][..n].to_vec()))
}

/// The legs by structure: at the branching node nearest the root, two child
/// chains of at least two joints that mirror each other ([`mirror_chains`]),
/// the pair reaching farthest; left is the chain on the left of the facing
/// (+Z of the file when no toes tell it).
fn by_structure(rig: &Rig, h: &mut Humanoid) {
    let mut order: Vec<usize> = (0..rig.len()).filter(|&i| rig.eligible[i]).collect();
    order.sort_by_key(|&i| (rig.depth(i), i));
    for b in order {
        let Some((ca, cc)) = mirror_chains(rig, b, &|_| false) else { continue };
        // Facing: along the last bone of a chain (foot → toe) when it has
        // four joints, else the file's +Z.
        let end = |ch: &[usize]| rig.positions[ch[ch.len() - 1]];
        let mid = (end(&ca) + end(&cc)) / 2.0;
        let up = (rig.positions[b] - mid).try_normalize(1e-12).unwrap_or_else(V3::y);
        let forward = if ca.len() >= 4 {
            let d = rig.positions[ca[3]] - rig.positions[ca[2]];
            d - up * d.dot(&up)
        } else {
            V3::z() - up * up.z
        };
        let left = up.cross(&forward);
        let a_left = (end(&ca) - end(&cc)).dot(&left) >= 0.0;
        let (l, r) = if a_left { (&ca, &cc) } else { (&cc, &ca) };
        for (s, ch) in [(0, l), (1, r)] {
            for (k, &bone) in Bone::leg(s).iter().enumerate() {
                if let Some(&node) = ch.get(k) {
                    h.set(bone, node, Found::Structure);
                }
            }
        }
        if h.get(Bone::Hips).is_none() {
            h.set(Bone::Hips, b, Found::Structure);
        }
        return;
    }
}

/// The direction from the feet to the hips of a mapping with both upper
/// legs (not normalised), and the lateral offset from the right upper leg
/// to the left one; `None` without both legs.
fn leg_frame(rig: &Rig, h: &Humanoid) -> Option<(V3, V3)> {
    let (ul, ur) = (h.get(Bone::LeftUpperLeg)?, h.get(Bone::RightUpperLeg)?);
    let hips = (rig.positions[ul] + rig.positions[ur]) / 2.0;
    let foot = |s: usize, u: usize| {
        let [_, l, f, _] = Bone::leg(s);
        h.get(f).or(h.get(l)).map_or_else(|| lowest_below(rig, u, rig.positions[u]), |i| rig.positions[i])
    };
    let feet = (foot(0, ul) + foot(1, ur)) / 2.0;
    Some((hips - feet, rig.positions[ul] - rig.positions[ur]))
}

/// The spine by structure, for a rig whose names tell none of the spine,
/// chest, neck and head: the chain from a child of the hips (or of the
/// hips' parent) that is not a leg, followed up ([`rising_chain`]), the one
/// rising highest above the hips, if it rises a quarter of the legs'
/// length; its first joint is the spine, its last the head.
fn spine_by_structure(rig: &Rig, h: &mut Humanoid) {
    let (Some(hips), Some((up, _))) = (h.get(Bone::Hips), leg_frame(rig, h)) else { return };
    let legs: Vec<usize> = [Bone::LeftUpperLeg, Bone::RightUpperLeg].iter().filter_map(|&b| h.get(b)).collect();
    let leg = up.norm();
    let up = up / leg.max(1e-12);
    let at = rig.positions[hips];
    let mut starts = rig.children(hips);
    if let Some(p) = rig.parents[hips] {
        starts.extend(rig.children(p).into_iter().filter(|&c| c != hips));
    }
    let best = starts
        .into_iter()
        .filter(|&c| !legs.iter().any(|&l| rig.is_ancestor(c, l)) && !is_helper(&rig.names[c]))
        .map(|c| rising_chain(rig, c, up))
        .map(|ch| {
            let rise = (rig.positions[ch[ch.len() - 1]] - at).dot(&up);
            (rise, ch)
        })
        .filter(|(rise, _)| *rise > 0.25 * leg)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let Some((_, ch)) = best else { return };
    h.set(Bone::Spine, ch[0], Found::Structure);
    if ch.len() >= 2 {
        let top = ch[ch.len() - 1];
        h.set(Bone::Head, top, Found::Structure);
        h.notes.push(format!(
            "no joint is named like a spine or head: the chain rising from the hips, {} to {}, is taken as the \
             spine and head",
            node_name(rig, ch[0]),
            node_name(rig, top)
        ));
    }
}

/// A chain from node `i` up: while the node has eligible children that are
/// not helpers, the highest along `up` (a spine to its head, not to a hand
/// held out in a T-pose).
fn rising_chain(rig: &Rig, i: usize, up: V3) -> Vec<usize> {
    let mut out = vec![i];
    let mut k = i;
    while out.len() <= 64 {
        let height = |c: &usize| rig.positions[*c].dot(&up);
        let Some(next) = rig
            .children(k)
            .into_iter()
            .filter(|&c| !is_helper(&rig.names[c]))
            .max_by(|a, b| height(a).total_cmp(&height(b)).then(b.cmp(a)))
        else {
            break;
        };
        out.push(next);
        k = next;
    }
    out
}

/// The arms by structure, for a rig whose names tell no arm bone: at the
/// highest joint of the spine chain (head down to the spine, or to the hips
/// without one) with two
/// mirror child chains off the chain ([`mirror_chains`]), those chains; the
/// one on the legs' left is the left arm. Four joints are shoulder, upper
/// arm, lower arm and hand; fewer start at the upper arm.
fn arms_by_structure(rig: &Rig, h: &mut Humanoid) {
    let (Some(spine), Some((_, lateral))) =
        (h.get(Bone::Spine).or(h.get(Bone::Chest)).or(h.get(Bone::Hips)), leg_frame(rig, h))
    else {
        return;
    };
    let legs: Vec<usize> = [Bone::LeftUpperLeg, Bone::RightUpperLeg].iter().filter_map(|&b| h.get(b)).collect();
    let top = h.get(Bone::Head).or(h.get(Bone::Neck)).or(h.get(Bone::Chest)).unwrap_or(spine);
    // The path from the top down to the spine joint.
    let mut path = vec![top];
    let mut k = top;
    while k != spine {
        let Some(p) = rig.parents[k] else { return };
        path.push(p);
        k = p;
    }
    for &b in &path {
        let skip =
            |c: usize| path.contains(&c) || is_helper(&rig.names[c]) || legs.iter().any(|&l| rig.is_ancestor(c, l));
        let Some((ca, cc)) = mirror_chains(rig, b, &skip) else { continue };
        let end = |ch: &[usize]| rig.positions[ch[ch.len() - 1]];
        let (l, r) = if (end(&ca) - end(&cc)).dot(&lateral) >= 0.0 { (ca, cc) } else { (cc, ca) };
        for (s, ch) in [(0, l), (1, r)] {
            let bones = Bone::arm(s);
            let from = if ch.len() >= 4 { 0 } else { 1 };
            for (&bone, &node) in bones[from..].iter().zip(&ch) {
                h.set(bone, node, Found::Structure);
            }
        }
        if h.get(Bone::Chest).is_none() && b != spine {
            h.set(Bone::Chest, b, Found::Structure);
        }
        return;
    }
}

/// The rotation of the model frame from a rig's `up` and `left` (unit,
/// orthogonal, rig frame): it takes left to +X, up to +Y and the facing
/// (`left × up`) to +Z. Snapped to the nearest quarter-turn rotation when
/// within 20° of it (exports differ by quarter turns; a rest pose is rarely
/// exactly square).
pub fn model_rotation(up: V3, left: V3) -> Rotation3<f64> {
    let forward = left.cross(&up);
    // Rows are the rig's directions: R · left = X, R · up = Y, R · fwd = Z.
    let m = Matrix3::from_rows(&[left.transpose(), up.transpose(), forward.transpose()]);
    // `m` is a rotation up to rounding: made exactly one (Gram–Schmidt on
    // its rows) rather than searched for. nalgebra's `Rotation3::from_matrix`
    // iterates from the identity without bound and never ended on some
    // turns near a half turn (a rig whose left points along −X, found by
    // fuzzing: fuzz/ and docs/fuzzing.md).
    let l = left.normalize();
    let u = (up - l * l.dot(&up)).normalize();
    let exact =
        Rotation3::from_matrix_unchecked(Matrix3::from_rows(&[l.transpose(), u.transpose(), l.cross(&u).transpose()]));
    let snapped = Matrix3::from_fn(|r, c| {
        let row = m.row(r);
        let k = (0..3).max_by(|&a, &b| row[a].abs().total_cmp(&row[b].abs())).unwrap_or(0);
        if c == k { row[k].signum() } else { 0.0 }
    });
    if (snapped.determinant() - 1.0).abs() < 1e-9 {
        let s = Rotation3::from_matrix_unchecked(snapped);
        if s.angle_to(&exact) < 20f64.to_radians() {
            return s;
        }
    }
    exact
}

/// The mirror of every node by name: the node whose words are the same with
/// the side swapped (`upperleg.l` ↔ `upperleg.r`, `LeftHand` ↔ `RightHand`,
/// `thigh_l` ↔ `thigh_r`, `leg-left` ↔ `leg-right`); a node without one
/// mirrors to itself.
pub fn mirror_by_names(names: &[String]) -> Vec<usize> {
    let keyed: Vec<(Vec<String>, Option<usize>)> = names
        .iter()
        .map(|n| {
            let mut side = None;
            let w: Vec<String> = words(n)
                .into_iter()
                .map(|x| match x.as_str() {
                    "left" | "l" => {
                        side = Some(0);
                        "<side>".to_string()
                    }
                    "right" | "r" => {
                        side = Some(1);
                        "<side>".to_string()
                    }
                    _ => x,
                })
                .collect();
            (w, side)
        })
        .collect();
    let mut index: BTreeMap<(&[String], usize), usize> = BTreeMap::new();
    for (i, (w, s)) in keyed.iter().enumerate() {
        if let Some(s) = s {
            index.entry((w.as_slice(), *s)).or_insert(i);
        }
    }
    keyed
        .iter()
        .enumerate()
        .map(|(i, (w, s))| match s {
            Some(s) => index.get(&(w.as_slice(), 1 - s)).copied().unwrap_or(i),
            None => i,
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn part(name: &str) -> Option<(Part, Option<usize>)> {
        classify(name).map(|x| (x.part, x.side))
    }

    #[test]
    fn names_of_every_convention_are_read() {
        use Part::*;
        let l = Some(0);
        let r = Some(1);
        for (name, want) in [
            ("mixamorig:LeftUpLeg", Some((UpperLeg, l))),
            ("mixamorigLeftUpLeg", Some((UpperLeg, l))),
            ("mixamorig1:RightLeg", Some((Leg, r))),
            ("mixamorig:RightToeBase", Some((Toes, r))),
            ("mixamorig:LeftToe_End", None),
            ("mixamorig:HeadTop_End", None),
            ("mixamorig:Hips", Some((Hips, None))),
            ("mixamorig:Spine2", Some((Spine, None))),
            ("thigh.L", Some((UpperLeg, l))),
            ("DEF-shin.R", Some((LowerLeg, r))),
            ("DEF-thigh.L.001", Some((UpperLeg, l))),
            ("DEF-pelvis.L", None),
            ("UpperLeg.L", Some((UpperLeg, l))),
            ("UpperLegR", Some((UpperLeg, r))),
            ("LowerLegL_end", None),
            ("thigh_l", Some((UpperLeg, l))),
            ("calf_r", Some((LowerLeg, r))),
            ("ball_l", Some((Toes, l))),
            ("thigh_twist_01_l", None),
            ("ik_foot_l", None),
            ("spine_03", Some((Spine, None))),
            ("leftUpperLeg", Some((UpperLeg, l))),
            ("J_Bip_L_LowerLeg", Some((LowerLeg, l))),
            ("J_Bip_C_Hips", Some((Hips, None))),
            ("J_Sec_L_Bust1", None),
            ("Bip01 L Thigh", Some((UpperLeg, l))),
            ("Bip01 Pelvis", Some((Hips, None))),
            ("CC_Base_R_Calf", Some((LowerLeg, r))),
            ("upperleg.l", Some((UpperLeg, l))),
            ("toes.r", Some((Toes, r))),
            ("kneeIK.l", None),
            ("IK-foot.l", None),
            ("control-heel-roll.l", None),
            ("handslot.r", None),
            ("leg-left", Some((Leg, l))),
            ("arm-right", Some((Arm, r))),
            ("Foot.L", Some((Foot, l))),
            ("PoleTarget.L", None),
            ("Fist.R", Some((Hand, r))),
            ("RThigh", Some((UpperLeg, r))),
            ("L_Foot", Some((Foot, l))),
            ("left_hip", Some((UpperLeg, l))),
            ("root", None),
            ("Torso_1", Some((Spine, None))),
        ] {
            assert_eq!(part(name), want, "{name}: {:?}", words(name));
        }
        assert_eq!(classify("mixamorig:Spine2").and_then(|x| x.number), Some(2));
        assert_eq!(classify("Bip01 Spine1").and_then(|x| x.number), Some(1), "the 01 of Bip01 is not the spine's");
    }

    /// A rig from (name, parent, position) triples; every node eligible.
    pub(crate) fn rig<S: AsRef<str>>(nodes: &[(S, Option<usize>, [f64; 3])]) -> Rig {
        Rig {
            names: nodes.iter().map(|n| n.0.as_ref().to_string()).collect(),
            parents: nodes.iter().map(|n| n.1).collect(),
            positions: nodes.iter().map(|n| V3::new(n.2[0], n.2[1], n.2[2])).collect(),
            eligible: vec![true; nodes.len()],
        }
    }

    /// A humanoid standing along +Y, facing +Z, left +X, hips 1 m up, arms
    /// out in a T-pose, with names made by `name(part)` from Mixamo's
    /// (`Hips`, `LeftUpLeg`, `LeftArm`, …).
    pub(crate) fn biped(name: impl Fn(&str) -> String) -> Rig {
        rig(&[
            (&name("Hips"), None, [0.0, 1.0, 0.0]),
            (&name("Spine"), Some(0), [0.0, 1.2, 0.0]),
            (&name("Head"), Some(1), [0.0, 1.6, 0.0]),
            (&name("LeftUpLeg"), Some(0), [0.1, 0.95, 0.0]),
            (&name("LeftLeg"), Some(3), [0.1, 0.5, 0.0]),
            (&name("LeftFoot"), Some(4), [0.1, 0.08, 0.0]),
            (&name("LeftToeBase"), Some(5), [0.1, 0.0, 0.12]),
            (&name("RightUpLeg"), Some(0), [-0.1, 0.95, 0.0]),
            (&name("RightLeg"), Some(7), [-0.1, 0.5, 0.0]),
            (&name("RightFoot"), Some(8), [-0.1, 0.08, 0.0]),
            (&name("RightToeBase"), Some(9), [-0.1, 0.0, 0.12]),
            (&name("LeftToe_End"), Some(6), [0.1, 0.0, 0.2]),
            (&name("LeftArm"), Some(1), [0.2, 1.45, 0.0]),
            (&name("LeftForeArm"), Some(12), [0.45, 1.45, 0.0]),
            (&name("LeftHand"), Some(13), [0.7, 1.45, 0.0]),
            (&name("RightArm"), Some(1), [-0.2, 1.45, 0.0]),
            (&name("RightForeArm"), Some(15), [-0.45, 1.45, 0.0]),
            (&name("RightHand"), Some(16), [-0.7, 1.45, 0.0]),
        ])
    }

    #[test]
    fn nearest_names_of_names_beyond_ascii() {
        // Found by fuzzing (joint_map): a joint map naming "ChelSSSSSe,\tUpperŮese"
        // sliced its words inside 'Ů' (a byte index, not a character's) and panicked.
        let names: Vec<String> = ["Hips", "Chest", "UpperChest", "Oberkörper"].map(String::from).into();
        let near = nearest_names(&names, "ChelSSSSSe,\tUpperŮese");
        assert!(near.contains("UpperChest"), "{near}");
        assert!(nearest_names(&names, "Oberkörperx").contains("Oberkörper"));
        // Long names are compared by their first characters, in bounded time.
        let long = "Ů".repeat(100_000);
        assert_eq!(
            within(10, move || nearest_names(std::slice::from_ref(&long), &long)),
            " (nearest: ".to_string() + &"Ů".repeat(100_000) + ")"
        );
    }

    /// Runs `f` on a thread and fails when it takes longer than `secs`
    /// (a test of a former hang fails rather than hangs).
    fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(f()));
        rx.recv_timeout(std::time::Duration::from_secs(secs)).expect("finished in time")
    }

    #[test]
    fn model_rotation_of_a_rig_turned_near_a_half_turn_returns() {
        // Found by fuzzing (joint_map): a joint map swapping the legs of a
        // biped gives these axes, about 175° from the model frame about Z;
        // `Rotation3::from_matrix` from the identity never returned.
        let up = V3::new(0.07974522228289001, 0.9968152785361251, 0.0);
        let left = V3::new(-0.996815278536125, 0.07974522228288974, 0.0);
        let r = within(10, move || model_rotation(up, left));
        // Within 20° of a quarter-turn rotation (a half turn about Y): snapped to it.
        assert_eq!(*r.matrix(), Matrix3::new(-1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, -1.0));
        assert!((r * left).angle(&V3::x()) < 5f64.to_radians() && (r * up).angle(&V3::y()) < 5f64.to_radians());
        // Tilted 30° from it: not snapped, the exact rotation.
        let (s, c) = (30f64.to_radians().sin(), 30f64.to_radians().cos());
        let (up, left) = (V3::new(s, c, 0.0), V3::new(-c, s, 0.0));
        let r = within(10, move || model_rotation(up, left));
        assert!((r * left - V3::x()).norm() < 1e-12 && (r * up - V3::y()).norm() < 1e-12, "{r:?}");
        assert!((r.matrix().determinant() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn mixamo_legs_resolve_leg_below_upleg() {
        for prefix in ["mixamorig:", "mixamorig", ""] {
            let r = biped(|p| format!("{prefix}{p}"));
            let h = Humanoid::find(&r, &BTreeMap::new(), None, "test").unwrap();
            assert_eq!(h.get(Bone::LeftUpperLeg), Some(3), "{prefix}");
            assert_eq!(h.get(Bone::LeftLowerLeg), Some(4));
            assert_eq!(h.get(Bone::LeftFoot), Some(5));
            assert_eq!(h.get(Bone::LeftToes), Some(6));
            assert_eq!(h.get(Bone::RightFoot), Some(9));
            assert_eq!(h.get(Bone::Hips), Some(0));
            let (up, left) = h.axes(&r, "test").unwrap();
            assert!((up - V3::y()).norm() < 0.05 && (left - V3::x()).norm() < 1e-9);
            assert_eq!(model_rotation(up, left), Rotation3::identity());
        }
    }

    #[test]
    fn structure_finds_unnamed_legs_and_their_sides() {
        let named = biped(|p| p.to_string());
        let mut r = named.clone();
        r.names = (0..r.names.len()).map(|i| format!("Bone.{i:03}")).collect();
        let h = Humanoid::find(&r, &BTreeMap::new(), None, "test").unwrap();
        assert_eq!(h.get(Bone::LeftUpperLeg), Some(3));
        assert_eq!(h.get(Bone::RightUpperLeg), Some(7));
        assert_eq!(h.get(Bone::LeftFoot), Some(5));
        assert_eq!(h.get(Bone::LeftToes), Some(6));
        assert_eq!(h.found[Bone::LeftFoot.index()], Some(Found::Structure));
        assert_eq!(h.get(Bone::Hips), Some(0));
        assert_eq!(h.convention, "no known convention");
        // The spine rises to the head, not to a hand held out; the arms
        // are the mirror chains off it, left on the legs' left.
        assert_eq!(h.get(Bone::Spine), Some(1));
        assert_eq!(h.get(Bone::Head), Some(2));
        assert_eq!((h.get(Bone::LeftUpperArm), h.get(Bone::LeftHand)), (Some(12), Some(14)));
        assert_eq!((h.get(Bone::RightUpperArm), h.get(Bone::RightHand)), (Some(15), Some(17)));
        assert!(h.notes.iter().any(|n| n.contains("Bone.001 to Bone.002")), "{:?}", h.notes);
        assert!(h.axes(&r, "test").is_ok());
    }

    #[test]
    fn a_quadruped_is_refused_by_its_level_spine() {
        // Hind legs under the pelvis, a spine running forward along +Z to the
        // head, front legs under the chest.
        let r = rig(&[
            ("pelvis", None, [0.0, 0.6, 0.0]),
            ("spine", Some(0), [0.0, 0.62, 0.4]),
            ("head", Some(1), [0.0, 0.8, 0.8]),
            ("thigh_l", Some(0), [0.1, 0.55, 0.0]),
            ("calf_l", Some(3), [0.1, 0.3, 0.0]),
            ("foot_l", Some(4), [0.1, 0.05, 0.0]),
            ("thigh_r", Some(0), [-0.1, 0.55, 0.0]),
            ("calf_r", Some(6), [-0.1, 0.3, 0.0]),
            ("foot_r", Some(7), [-0.1, 0.05, 0.0]),
            ("upperarm_l", Some(1), [0.1, 0.55, 0.4]),
            ("lowerarm_l", Some(9), [0.1, 0.3, 0.4]),
            ("hand_l", Some(10), [0.1, 0.05, 0.4]),
            ("upperarm_r", Some(1), [-0.1, 0.55, 0.4]),
            ("lowerarm_r", Some(12), [-0.1, 0.3, 0.4]),
            ("hand_r", Some(13), [-0.1, 0.05, 0.4]),
        ]);
        let h = Humanoid::find(&r, &BTreeMap::new(), None, "dog.glb").unwrap();
        let e = h.axes(&r, "dog.glb").unwrap_err().to_string();
        assert!(e.contains("dog.glb is not a two-legged humanoid") && e.contains("spine"), "{e}");
    }

    #[test]
    fn a_z_up_rig_gets_a_quarter_turn() {
        // Standing along +Z, facing −Y (a Blender export without axis
        // conversion): left is +X.
        let r = rig(&[
            ("Hips", None, [0.0, 0.0, 1.0]),
            ("Spine", Some(0), [0.0, 0.0, 1.3]),
            ("thigh.L", Some(0), [0.1, 0.0, 0.95]),
            ("shin.L", Some(2), [0.1, 0.0, 0.5]),
            ("foot.L", Some(3), [0.1, 0.0, 0.08]),
            ("thigh.R", Some(0), [-0.1, 0.0, 0.95]),
            ("shin.R", Some(5), [-0.1, 0.0, 0.5]),
            ("foot.R", Some(6), [-0.1, 0.0, 0.08]),
            ("head", Some(1), [0.0, 0.0, 1.6]),
            ("upper_arm.L", Some(1), [0.2, 0.0, 1.45]),
            ("upper_arm.R", Some(1), [-0.2, 0.0, 1.45]),
        ]);
        let h = Humanoid::find(&r, &BTreeMap::new(), None, "t").unwrap();
        let (up, left) = h.axes(&r, "t").unwrap();
        let m = model_rotation(up, left);
        assert!((m * V3::z() - V3::y()).norm() < 1e-9, "up becomes +Y");
        assert!((m * V3::x() - V3::x()).norm() < 1e-9, "left stays +X");
        assert!((m * -V3::y() - V3::z()).norm() < 1e-9, "the facing −Y becomes +Z");
    }

    #[test]
    fn joint_maps_name_bones_and_report_bad_entries() {
        let r = biped(|p| format!("bone_{}", p.len()));
        let text = r#"{"format": 1, "bones": {"leftUpperLeg": "bone_9"}}"#;
        let m = JointMap::from_json(text, "map.json").unwrap();
        assert_eq!(m.bones[&Bone::LeftUpperLeg], "bone_9");
        let e = JointMap::from_json(r#"{"format": 1, "bones": {"leftKnee": "x"}}"#, "map.json").unwrap_err();
        assert!(e.to_string().starts_with("map.json: bones.leftKnee: unknown humanoid bone"), "{e}");
        let e = JointMap::from_json(r#"{"format": 2, "bones": {}}"#, "map.json").unwrap_err();
        assert!(e.to_string().contains("format = 2"), "{e}");
        let bad = JointMap::from_json(r#"{"format": 1, "bones": {"hips": "Pelvis"}}"#, "map.json").unwrap();
        let e = Humanoid::find(&r, &BTreeMap::new(), Some(&bad), "rig.glb").unwrap_err();
        assert!(
            e.to_string().starts_with("map.json: bones.hips = \"Pelvis\": no joint of that name in rig.glb"),
            "{e}"
        );
    }

    #[test]
    fn mirrors_pair_sides_in_every_spelling() {
        let names: Vec<String> = [
            "upperleg.l",
            "upperleg.r",
            "thigh_l",
            "thigh_r",
            "LeftHand",
            "RightHand",
            "leg-left",
            "leg-right",
            "head",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(mirror_by_names(&names), vec![1, 0, 3, 2, 5, 4, 7, 6, 8]);
    }

    /// No two bones of a mapping on one joint.
    fn assert_distinct(h: &Humanoid) {
        let nodes: Vec<usize> = h.bones.iter().flatten().copied().collect();
        let mut unique = nodes.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), nodes.len(), "two bones on one joint: {:?}", h.bones);
    }

    /// A Rigify rig standing along +Y facing +Z: `spine` (the hips) and
    /// `spine.001`… up to `spine.005` (`.006` too when `head_joint`), with
    /// `prefix` before every name (`DEF-` for a generated rig's deform
    /// bones, nothing for a metarig), twist segments (`thigh.L.001`), a
    /// sided pelvis and breast.
    fn rigify(prefix: &str, head_joint: bool) -> Rig {
        let mut nodes: Vec<(String, Option<usize>, [f64; 3])> = vec![
            ("spine".into(), None, [0.0, 1.0, 0.0]),
            ("spine.001".into(), Some(0), [0.0, 1.1, 0.0]),
            ("spine.002".into(), Some(1), [0.0, 1.25, 0.0]),
            ("spine.003".into(), Some(2), [0.0, 1.4, 0.0]),
            ("spine.004".into(), Some(3), [0.0, 1.55, 0.0]),
            ("spine.005".into(), Some(4), [0.0, 1.6, 0.0]),
        ];
        // One side: (name, parent by name, position on the left).
        let side = [
            ("pelvis", "spine", [0.05, 1.0, 0.0]),
            ("thigh", "spine", [0.1, 0.95, 0.0]),
            ("thigh.001", "thigh", [0.1, 0.72, 0.0]),
            ("shin", "thigh.001", [0.1, 0.5, 0.0]),
            ("shin.001", "shin", [0.1, 0.3, 0.0]),
            ("foot", "shin.001", [0.1, 0.08, 0.0]),
            ("toe", "foot", [0.1, 0.0, 0.12]),
            ("shoulder", "spine.003", [0.05, 1.5, 0.0]),
            ("upper_arm", "shoulder", [0.2, 1.5, 0.0]),
            ("upper_arm.001", "upper_arm", [0.32, 1.5, 0.0]),
            ("forearm", "upper_arm.001", [0.45, 1.5, 0.0]),
            ("forearm.001", "forearm", [0.57, 1.5, 0.0]),
            ("hand", "forearm.001", [0.7, 1.5, 0.0]),
            ("breast", "spine.003", [0.1, 1.4, 0.1]),
        ];
        let sided = |n: &str, s: &str| match n.split_once('.') {
            _ if n.starts_with("spine") => n.to_string(),
            Some((a, b)) => format!("{a}.{s}.{b}"),
            None => format!("{n}.{s}"),
        };
        for (s, x) in [("L", 1.0), ("R", -1.0)] {
            for (name, parent, p) in side {
                let parent = nodes.iter().position(|n| n.0 == sided(parent, s));
                nodes.push((sided(name, s), parent, [x * p[0], p[1], p[2]]));
            }
        }
        if head_joint {
            nodes.push(("spine.006".into(), Some(5), [0.0, 1.68, 0.0]));
        }
        let named: Vec<(String, Option<usize>, [f64; 3])> =
            nodes.into_iter().map(|(n, p, x)| (format!("{prefix}{n}"), p, x)).collect();
        rig(&named)
    }

    #[test]
    fn a_rigify_rig_maps_its_spine_chain_as_rigify_names_it() {
        for (prefix, head_joint) in [("DEF-", true), ("", true), ("", false)] {
            let r = rigify(prefix, head_joint);
            let at = |name: &str| r.names.iter().position(|n| *n == format!("{prefix}{name}"));
            let h = Humanoid::find(&r, &BTreeMap::new(), None, "rigify.glb").unwrap();
            let want = [
                (Bone::Hips, "spine"),
                (Bone::Spine, "spine.001"),
                (Bone::Chest, "spine.003"),
                (Bone::Neck, "spine.004"),
                (Bone::Head, if head_joint { "spine.006" } else { "spine.005" }),
                (Bone::LeftUpperLeg, "thigh.L"),
                (Bone::LeftLowerLeg, "shin.L"),
                (Bone::LeftFoot, "foot.L"),
                (Bone::LeftToes, "toe.L"),
                (Bone::RightUpperLeg, "thigh.R"),
                (Bone::LeftShoulder, "shoulder.L"),
                (Bone::LeftUpperArm, "upper_arm.L"),
                (Bone::LeftLowerArm, "forearm.L"),
                (Bone::LeftHand, "hand.L"),
                (Bone::RightHand, "hand.R"),
            ];
            for (bone, name) in want {
                assert_eq!(h.get(bone), at(name), "{prefix}, {head_joint}: {} should be {name}", bone.name());
            }
            assert_distinct(&h);
            // What was inferred is said, naming the joint.
            let head = h.get(Bone::Head).map(|i| r.names[i].clone()).unwrap_or_default();
            assert!(h.notes.iter().any(|n| n.contains("head") && n.contains(&head)), "{:?}", h.notes);
            let label = if prefix.is_empty() { "Rigify metarig" } else { "Rigify deform bones" };
            assert!(h.convention.contains(label), "{}", h.convention);
            assert!(h.axes(&r, "rigify.glb").is_ok(), "two legs, a spine and a head are never refused");
        }
    }

    #[test]
    fn bones_that_collide_on_a_joint_are_told_with_the_choice() {
        // The names give the spine to `Spine`; a joint map puts the chest
        // there too: the joint map's word wins and the note says so.
        let r = biped(|p| p.to_string());
        let map = JointMap::from_json(r#"{"format": 1, "bones": {"chest": "Spine"}}"#, "map.json").unwrap();
        let h = Humanoid::find(&r, &BTreeMap::new(), Some(&map), "rig.glb").unwrap();
        assert_eq!(h.get(Bone::Chest), Some(1));
        assert_eq!(h.get(Bone::Spine), None);
        assert_distinct(&h);
        assert_eq!(
            h.notes,
            vec!["spine and chest both map to joint Spine: it is taken as the chest, and spine left unmapped"]
        );
        // Without the map, a mapping of every test rig puts one bone on a joint.
        for r in [biped(|p| p.to_string()), biped(|p| format!("mixamorig:{p}")), rigify("DEF-", true)] {
            let h = Humanoid::find(&r, &BTreeMap::new(), None, "rig.glb").unwrap();
            assert_distinct(&h);
            assert!(h.notes.iter().all(|n| !n.contains("both map")), "{:?}", h.notes);
        }
    }

    #[test]
    fn conventions_are_labelled_as_their_tools_name_them() {
        let label = |names: &[&str]| convention(&names.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert!(label(&["pelvis", "thigh.l", "calf.l", "ball.l"]).starts_with("Unreal mannequin names with .l/.r"));
        assert!(label(&["thigh_l", "calf_l", "ball_l"]).starts_with("Unreal mannequin"));
        assert!(label(&["hips", "upperleg.l", "lowerleg.l"]).starts_with("Blender lower-case"));
        assert!(label(&["Hips", "Left leg", "Left knee", "Left ankle"]).starts_with("VRM 0.x"));
        assert!(label(&["Hips", "LeftUpLeg", "LeftToeBase"]).starts_with("Mixamo names without a prefix"));
        assert!(label(&["DEF-spine", "DEF-thigh.L"]).starts_with("Blender Rigify deform bones"));
        assert!(label(&["spine", "spine.001", "thigh.L"]).starts_with("Blender Rigify metarig"));
        assert!(label(&["Hips", "UpperLeg.L"]).starts_with("Blender (.L/.R)"));
        // VRM 0.x (CATS) names map: leg, knee, ankle, toe; arm, elbow, wrist.
        let vrm0 = |p: &str| {
            let (side, part) = match (p.strip_prefix("Left"), p.strip_prefix("Right")) {
                (Some(q), _) => ("Left ", q),
                (_, Some(q)) => ("Right ", q),
                _ => ("", p),
            };
            let part = match part {
                "UpLeg" => "leg",
                "Leg" => "knee",
                "Foot" => "ankle",
                "ToeBase" => "toe",
                "Toe_End" => "toe_end",
                "Arm" => "arm",
                "ForeArm" => "elbow",
                "Hand" => "wrist",
                other => other,
            };
            format!("{side}{part}")
        };
        let r = biped(vrm0);
        let h = Humanoid::find(&r, &BTreeMap::new(), None, "vrm0.glb").unwrap();
        assert!(h.convention.starts_with("VRM 0.x"), "{} {:?}", h.convention, r.names);
        for (bone, node) in [(Bone::LeftUpperLeg, 3), (Bone::LeftLowerLeg, 4), (Bone::LeftFoot, 5), (Bone::LeftToes, 6)]
        {
            assert_eq!(h.get(bone), Some(node), "{}: {:?}", bone.name(), r.names);
        }
        assert_eq!((h.get(Bone::LeftLowerArm), h.get(Bone::LeftHand)), (Some(13), Some(14)));
    }

    #[test]
    fn a_quadruped_without_a_spine_is_refused_for_its_other_legs() {
        // Four legs hang from one body joint, a head right above it: the
        // front pair is taken as the legs, and the hind paws reach the
        // ground beside them.
        let mut nodes = vec![("body".to_string(), None, [0.0, 0.6, 0.0]), ("Head".into(), Some(0), [0.0, 1.2, 0.1])];
        for (name, x, z) in [("FL", 0.1, 0.4), ("FR", -0.1, 0.4), ("BL", 0.1, -0.4), ("BR", -0.1, -0.4)] {
            let side = if x > 0.0 { "L" } else { "R" };
            let at = nodes.len();
            nodes.push((format!("{name}1.{side}"), Some(0), [x, 0.55, z]));
            nodes.push((format!("{name}2.{side}"), Some(at), [x, 0.3, z]));
            nodes.push((format!("{name}3.{side}"), Some(at + 1), [x, 0.0, z]));
        }
        let r = rig(&nodes);
        let h = Humanoid::find(&r, &BTreeMap::new(), None, "dog.glb").unwrap();
        let e = h.axes(&r, "dog.glb").unwrap_err().to_string();
        assert!(e.starts_with("dog.glb is not a two-legged humanoid"), "{e}");
        assert!(e.contains("BL3.L and BR3.R reach the ground") && e.contains("more than two legs"), "{e}");
        assert_eq!(e.matches(". ").count(), 0, "one sentence: {e}");
    }

    #[test]
    fn two_legs_a_spine_and_a_head_are_walked_with_arms_or_without() {
        let mut r = biped(|p| p.to_string());
        for armless in [false, true] {
            if armless {
                // The arms are the last six joints.
                let n = r.names.len() - 6;
                r.names.truncate(n);
                r.parents.truncate(n);
                r.positions.truncate(n);
                r.eligible.truncate(n);
            }
            let h = Humanoid::find(&r, &BTreeMap::new(), None, "walker.glb").unwrap();
            assert_eq!(h.get(Bone::LeftHand).is_none(), armless);
            assert!(h.axes(&r, "walker.glb").is_ok(), "armless: {armless}");
        }
    }

    #[test]
    fn sides_that_only_fit_swapped_are_refused() {
        let swap = |p: &str| {
            if p.starts_with("Left") { p.replacen("Left", "Right", 1) } else { p.replacen("Right", "Left", 1) }
        };
        let legs = |p: &str| if p.contains("Arm") || p.contains("Hand") { p.to_string() } else { swap(p) };
        let arms = |p: &str| if p.contains("Arm") || p.contains("Hand") { swap(p) } else { p.to_string() };
        for (name, why) in [(&legs as &dyn Fn(&str) -> String, "its toes point"), (&arms, "its left arm")] {
            let r = biped(name);
            let h = Humanoid::find(&r, &BTreeMap::new(), None, "swapped.glb").unwrap();
            let e = h.axes(&r, "swapped.glb").unwrap_err().to_string();
            assert!(e.contains(why) && e.contains("only fit swapped"), "{e}");
        }
        // Turned a half turn (facing −Z, left −X), the sides agree: walked.
        let mut r = biped(|p| p.to_string());
        for p in &mut r.positions {
            *p = V3::new(-p.x, p.y, -p.z);
        }
        let h = Humanoid::find(&r, &BTreeMap::new(), None, "turned.glb").unwrap();
        let (up, left) = h.axes(&r, "turned.glb").unwrap();
        assert!((up - V3::y()).norm() < 0.05 && (left + V3::x()).norm() < 1e-9, "{up} {left}");
    }
}
