//! The pattern library: the `*.pattern.json` files of a folder (the
//! repository's `patterns/` by default), listed with their point counts.

use crowdpatch::model::Pattern;
use std::path::{Path, PathBuf};

/// One pattern file of the library.
#[derive(Debug, Clone, PartialEq)]
pub struct LibraryEntry {
    /// The file.
    pub file: PathBuf,
    /// Its pattern, or why it could not be read.
    pub pattern: Result<Pattern, String>,
}

impl LibraryEntry {
    /// The name shown: the pattern's name or the file stem.
    pub fn name(&self) -> String {
        match &self.pattern {
            Ok(Pattern { name: Some(n), .. }) => n.clone(),
            _ => crowdpatch::document::file_stem(&self.file),
        }
    }
}

/// Lists the pattern files of `dir`, sorted by file name.
pub fn scan(dir: &Path) -> Vec<LibraryEntry> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return vec![];
    };
    let mut files: Vec<PathBuf> =
        entries.flatten().map(|e| e.path()).filter(|p| p.to_string_lossy().ends_with(".pattern.json")).collect();
    files.sort();
    files
        .into_iter()
        .map(|file| {
            let pattern = crowdpatch::document::load_pattern(&file).map_err(|e| e.to_string());
            LibraryEntry { file, pattern }
        })
        .collect()
}

/// The library folder to show first: `patterns/` beside the document's
/// folder (`patches/../patterns`), else in the current directory or one of
/// its parents.
pub fn default_dir(document: Option<&Path>) -> PathBuf {
    let mut candidates = Vec::new();
    if let Some(doc) = document.and_then(Path::parent) {
        let doc = crate::edit::absolute(doc);
        candidates.push(doc.join("patterns"));
        if let Some(parent) = doc.parent() {
            candidates.push(parent.join("patterns"));
        }
    }
    let cwd = crate::edit::absolute(Path::new("."));
    for a in cwd.ancestors() {
        candidates.push(a.join("patterns"));
    }
    candidates.into_iter().find(|c| c.is_dir()).unwrap_or_else(|| cwd.join("patterns"))
}
