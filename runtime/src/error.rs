//! Errors of the runtime: loading a tile, reading a world file.

use std::fmt;

/// Why a baked GLB could not be loaded as a [`Tile`](crate::Tile).
///
/// Every variant says what is wrong and where (the glTF object and its
/// index, or the field path in the crowdpatch extras). Loading never panics:
/// a corrupt, truncated or hostile file gives one of these.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum LoadError {
    /// The bytes are not a GLB container (glTF 2.0 binary): bad magic,
    /// version, length or chunk layout.
    Container {
        /// What is wrong, e.g. `magic is "PK\u{3}\u{4}", not "glTF"`.
        reason: String,
    },
    /// The JSON chunk is not valid glTF JSON for what the runtime reads.
    Json {
        /// The JSON parser's message, with line and column.
        reason: String,
    },
    /// The file is a valid glTF but not a crowdpatch bake: its scene has no
    /// `extras.crowdpatch` record.
    NotCrowdpatch {
        /// What was missing.
        reason: String,
    },
    /// The file is a crowdpatch bake of a format version this runtime does
    /// not read; re-bake it with a matching `crowdpatch`.
    UnsupportedVersion {
        /// `extras.crowdpatch.format` as found.
        found: u64,
        /// [`FORMAT_VERSION`](crate::FORMAT_VERSION), the version read here.
        supported: u32,
    },
    /// A value of the `extras.crowdpatch` record is malformed or out of its
    /// limits.
    Extras {
        /// Field path, e.g. `agents[3].nodes[1]`.
        path: String,
        /// What is wrong, with the value.
        reason: String,
    },
    /// A glTF object the runtime reads (node, animation channel, sampler,
    /// accessor, buffer view, buffer) is malformed, out of bounds or of a kind
    /// not supported.
    Gltf {
        /// The object, e.g. `accessors[12]` or `animations[0].samplers[3]`.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// Reading the file failed.
    Io {
        /// The file.
        file: String,
        /// The operating system's message.
        reason: String,
    },
    /// A file was read but failed to load; `error` says why.
    File {
        /// The file.
        file: String,
        /// The error.
        error: Box<LoadError>,
    },
}

#[cfg(feature = "glb")]
impl LoadError {
    pub(crate) fn gltf(path: impl Into<String>, reason: impl Into<String>) -> Self {
        LoadError::Gltf { path: path.into(), reason: reason.into() }
    }

    pub(crate) fn extras(path: impl Into<String>, reason: impl Into<String>) -> Self {
        LoadError::Extras { path: path.into(), reason: reason.into() }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Container { reason } => write!(f, "not a GLB file: {reason}"),
            LoadError::Json { reason } => write!(f, "malformed glTF JSON: {reason}"),
            LoadError::NotCrowdpatch { reason } => {
                write!(f, "not a crowdpatch bake ({reason}); bake the patch with `crowdpatch bake`")
            }
            LoadError::UnsupportedVersion { found, supported } => write!(
                f,
                "crowdpatch baked format {found} is not supported: this runtime reads format {supported}; re-bake the patch"
            ),
            LoadError::Extras { path, reason } => write!(f, "extras.crowdpatch.{path}: {reason}"),
            LoadError::Gltf { path, reason } => write!(f, "{path}: {reason}"),
            LoadError::Io { file, reason } => write!(f, "{file}: cannot read: {reason}"),
            LoadError::File { file, error } => write!(f, "{file}: {error}"),
        }
    }
}

impl std::error::Error for LoadError {}

/// Why a `world.json` file could not be read.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum WorldError {
    /// Reading the file failed.
    Io {
        /// The file.
        file: String,
        /// The operating system's message.
        reason: String,
    },
    /// The JSON is malformed or a field has the wrong type.
    Json {
        /// The parser's message, with line and column.
        reason: String,
    },
    /// A field is out of its limits or refers to something that does not
    /// exist.
    Invalid {
        /// Field path, e.g. `cells[3][7].tile`.
        path: String,
        /// What is wrong, with the value.
        reason: String,
    },
}

impl fmt::Display for WorldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WorldError::Io { file, reason } => write!(f, "{file}: cannot read: {reason}"),
            WorldError::Json { reason } => write!(f, "malformed world file: {reason}"),
            WorldError::Invalid { path, reason } => write!(f, "{path}: {reason}"),
        }
    }
}

impl std::error::Error for WorldError {}
