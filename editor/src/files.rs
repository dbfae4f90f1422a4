//! Files: where the editor keeps its own state (recent files, autosaves),
//! autosave and crash recovery, and a small built-in file dialog.
//!
//! Autosaves live in `<state dir>/autosave/autosave-<pid>.json`; the state
//! directory is `$CROWDPATCH_EDITOR_HOME`, else `$XDG_STATE_HOME/crowdpatch-editor`,
//! else `~/.local/state/crowdpatch-editor`. A clean exit or a save removes the
//! process's autosave; one left by a process that no longer runs is offered
//! for recovery at the next start.

use crowdpatch::model::PatchDocument;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The editor's state directory (created on first use).
pub fn state_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("CROWDPATCH_EDITOR_HOME") {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_STATE_HOME") {
        return PathBuf::from(d).join("crowdpatch-editor");
    }
    match std::env::var_os("HOME") {
        Some(h) => PathBuf::from(h).join(".local/state/crowdpatch-editor"),
        None => std::env::temp_dir().join("crowdpatch-editor"),
    }
}

/// Most recent files kept.
pub const RECENT_MAX: usize = 10;

/// Reads the recent-files list (most recent first); a missing or broken list
/// is empty.
pub fn load_recent(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_to_string(dir.join("recent.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Vec<PathBuf>>(&t).ok())
        .unwrap_or_default()
}

/// Puts `file` first in the recent list and saves the list.
///
/// # Errors
/// I/O errors writing the list.
pub fn push_recent(dir: &Path, recent: &mut Vec<PathBuf>, file: &Path) -> std::io::Result<()> {
    let file = crate::edit::absolute(file);
    recent.retain(|f| *f != file);
    recent.insert(0, file);
    recent.truncate(RECENT_MAX);
    std::fs::create_dir_all(dir)?;
    let text = serde_json::to_string_pretty(recent).expect("paths serialise");
    crowdpatch::io::write_atomic(&dir.join("recent.json"), text.as_bytes())
}

/// An autosave file's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Autosave {
    /// The document's own file, if it had one.
    pub file: Option<PathBuf>,
    /// Seconds since the Unix epoch when it was written.
    pub saved_at: u64,
    /// The process that wrote it.
    pub pid: u32,
    /// The document.
    pub document: PatchDocument,
}

/// The autosave file of this process.
pub fn autosave_path(dir: &Path) -> PathBuf {
    dir.join("autosave").join(format!("autosave-{}.json", std::process::id()))
}

/// Writes this process's autosave, atomically.
///
/// # Errors
/// I/O errors.
pub fn write_autosave(dir: &Path, file: Option<&Path>, doc: &PatchDocument) -> std::io::Result<PathBuf> {
    let path = autosave_path(dir);
    std::fs::create_dir_all(path.parent().expect("has a parent"))?;
    let a = Autosave {
        file: file.map(crate::edit::absolute),
        saved_at: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
        pid: std::process::id(),
        document: doc.clone(),
    };
    let text = serde_json::to_string_pretty(&a).expect("autosave serialises");
    crowdpatch::io::write_atomic(&path, text.as_bytes())?;
    Ok(path)
}

/// Removes this process's autosave (after a save or a clean exit).
pub fn remove_autosave(dir: &Path) {
    let _ = std::fs::remove_file(autosave_path(dir));
}

/// Autosaves left by editors that are no longer running (crashed or
/// killed), newest first, with their content.
pub fn orphaned_autosaves(dir: &Path) -> Vec<(PathBuf, Autosave)> {
    let Ok(entries) = std::fs::read_dir(dir.join("autosave")) else {
        return vec![];
    };
    let mut out: Vec<(PathBuf, Autosave)> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter_map(|p| {
            let a: Autosave = serde_json::from_str(&std::fs::read_to_string(&p).ok()?).ok()?;
            (a.pid != std::process::id() && !process_alive(a.pid)).then_some((p, a))
        })
        .collect();
    out.sort_by_key(|a| std::cmp::Reverse(a.1.saved_at));
    out
}

/// Whether a process runs (Linux: `/proc/<pid>/stat` exists and the process
/// is not a zombie, as one killed a moment ago is until reaped; elsewhere
/// assume it does not).
fn process_alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // "pid (comm) S …": the state follows the last parenthesis.
    let state = stat.rsplit_once(')').and_then(|(_, rest)| rest.trim_start().chars().next());
    !matches!(state, Some('Z' | 'X') | None)
}

/// Seconds between autosaves of a changed document.
pub const AUTOSAVE_INTERVAL: f64 = 3.0;

/// What [`Autosaver::tick`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Tick {
    /// Nothing (written already, or nothing to save).
    Idle,
    /// Written now.
    Written,
    /// A write is due later: look again in [`AUTOSAVE_INTERVAL`].
    Later,
    /// The write failed.
    Failed(String),
}

/// Autosaves a changed document every [`AUTOSAVE_INTERVAL`], once per
/// revision, and removes the autosave once the document is saved.
#[derive(Debug, Clone)]
pub struct Autosaver {
    /// The state directory (see [`state_dir`]).
    pub dir: PathBuf,
    /// The revision last written.
    written: Option<u64>,
    /// When it was last written (or tried) `[s]`.
    last: f64,
}

impl Autosaver {
    /// An autosaver writing into `dir`.
    pub fn new(dir: PathBuf) -> Autosaver {
        Autosaver { dir, written: None, last: 0.0 }
    }

    /// Called once per frame at `now` `[s]`.
    pub fn tick(&mut self, now: f64, document: &crate::document::Document) -> Tick {
        let revision = document.revision();
        if !document.dirty() {
            if self.written.is_some() {
                self.discard();
            }
            return Tick::Idle;
        }
        if self.written == Some(revision) {
            return Tick::Idle;
        }
        if now - self.last < AUTOSAVE_INTERVAL {
            return Tick::Later;
        }
        self.last = now;
        match write_autosave(&self.dir, document.file.as_deref(), document.get()) {
            Ok(_) => {
                self.written = Some(revision);
                Tick::Written
            }
            Err(e) => Tick::Failed(e.to_string()),
        }
    }

    /// Removes this process's autosave (saved, another document, clean exit).
    pub fn discard(&mut self) {
        remove_autosave(&self.dir);
        self.written = None;
    }
}

/// What a file dialog is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DialogPurpose {
    /// Open a patch document.
    Open,
    /// Save the document under a new name.
    SaveAs,
    /// Export the baked GLB.
    ExportGlb,
    /// Export the PNG preview.
    ExportPng,
    /// Save a side as a pattern file.
    SavePattern(crowdpatch::model::Side),
}

impl DialogPurpose {
    /// Window title.
    pub fn title(self) -> String {
        match self {
            DialogPurpose::Open => "Open patch".into(),
            DialogPurpose::SaveAs => "Save patch as".into(),
            DialogPurpose::ExportGlb => "Export GLB".into(),
            DialogPurpose::ExportPng => "Export PNG preview".into(),
            DialogPurpose::SavePattern(s) => format!("Save the {s} side as a pattern"),
        }
    }

    /// The file name ending this dialog lists and adds.
    pub fn suffix(self) -> &'static str {
        match self {
            DialogPurpose::Open | DialogPurpose::SaveAs => ".patch.json",
            DialogPurpose::ExportGlb => ".glb",
            DialogPurpose::ExportPng => ".png",
            DialogPurpose::SavePattern(_) => ".pattern.json",
        }
    }

    /// Whether the file must already exist.
    pub fn must_exist(self) -> bool {
        self == DialogPurpose::Open
    }
}

/// A simple file dialog: a directory listing and a file name.
#[derive(Debug, Clone, PartialEq)]
pub struct FileDialog {
    /// What it is for.
    pub purpose: DialogPurpose,
    /// The directory shown.
    pub dir: PathBuf,
    /// The file name typed or picked.
    pub name: String,
    /// An error to show (e.g. the file does not exist).
    pub error: Option<String>,
}

impl FileDialog {
    /// A dialog in `dir` with `name` proposed.
    pub fn new(purpose: DialogPurpose, dir: PathBuf, name: String) -> FileDialog {
        FileDialog { purpose, dir: crate::edit::absolute(&dir), name, error: None }
    }

    /// A save-as dialog in `dir` proposing the document's `file` name, else
    /// its `name` (or "untitled") with the suffix.
    pub fn save_as(dir: PathBuf, file: Option<&Path>, name: Option<&str>) -> FileDialog {
        let proposed = file.and_then(|f| f.file_name()).map_or_else(
            || format!("{}{}", name.unwrap_or("untitled"), DialogPurpose::SaveAs.suffix()),
            |n| n.to_string_lossy().into_owned(),
        );
        FileDialog::new(DialogPurpose::SaveAs, dir, proposed)
    }

    /// An export dialog (GLB, or PNG when `png`) in `dir` proposing the stem
    /// of the document's `file`, else its `name` (or "patch").
    pub fn export(png: bool, dir: PathBuf, file: Option<&Path>, name: Option<&str>) -> FileDialog {
        let stem = file.map(crowdpatch::document::file_stem).or_else(|| name.map(str::to_string));
        let purpose = if png { DialogPurpose::ExportPng } else { DialogPurpose::ExportGlb };
        FileDialog::new(purpose, dir, format!("{}{}", stem.as_deref().unwrap_or("patch"), purpose.suffix()))
    }

    /// Sub-directories and matching files of the directory, sorted.
    pub fn listing(&self) -> (Vec<String>, Vec<String>) {
        let mut dirs = Vec::new();
        let mut files = Vec::new();
        if let Ok(entries) = std::fs::read_dir(&self.dir) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') {
                    continue;
                }
                if e.path().is_dir() {
                    dirs.push(name);
                } else if name.ends_with(self.purpose.suffix()) {
                    files.push(name);
                }
            }
        }
        dirs.sort();
        files.sort();
        (dirs, files)
    }

    /// The chosen file (the suffix added when missing), or an error message.
    pub fn chosen(&self) -> Result<PathBuf, String> {
        let name = self.name.trim();
        if name.is_empty() {
            return Err("type a file name".into());
        }
        let mut path = if Path::new(name).is_absolute() { PathBuf::from(name) } else { self.dir.join(name) };
        let suffix = self.purpose.suffix();
        if !path.to_string_lossy().ends_with(suffix) {
            path = PathBuf::from(format!("{}{suffix}", path.display()));
        }
        if self.purpose.must_exist() && !path.is_file() {
            return Err(format!("{} does not exist", path.display()));
        }
        if !self.purpose.must_exist() && !path.parent().is_some_and(Path::is_dir) {
            return Err(format!("the folder of {} does not exist", path.display()));
        }
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recent_files_are_unique_and_most_recent_first() {
        let dir = tempfile::tempdir().unwrap();
        let mut recent = load_recent(dir.path());
        assert!(recent.is_empty());
        for f in ["/a.patch.json", "/b.patch.json", "/a.patch.json"] {
            push_recent(dir.path(), &mut recent, Path::new(f)).unwrap();
        }
        assert_eq!(recent, vec![PathBuf::from("/a.patch.json"), PathBuf::from("/b.patch.json")]);
        assert_eq!(load_recent(dir.path()), recent);
    }

    #[test]
    fn autosaves_of_dead_processes_are_offered_and_own_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let doc = PatchDocument::new(16.0, 10.0);
        write_autosave(dir.path(), Some(Path::new("/x.patch.json")), &doc).unwrap();
        assert!(orphaned_autosaves(dir.path()).is_empty(), "this process is alive");
        // An autosave of a process that does not exist (pid beyond pid_max).
        let dead = Autosave { file: None, saved_at: 5, pid: 4_999_999, document: doc.clone() };
        let p = dir.path().join("autosave/autosave-4999999.json");
        std::fs::write(&p, serde_json::to_string(&dead).unwrap()).unwrap();
        let found = orphaned_autosaves(dir.path());
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].1, dead);
        remove_autosave(dir.path());
        assert!(!autosave_path(dir.path()).exists());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_killed_process_is_not_alive_even_before_it_is_reaped() {
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        assert!(process_alive(child.id()));
        child.kill().unwrap();
        // Not waited for yet: a zombie.
        let mut dead = false;
        for _ in 0..100 {
            if !process_alive(child.id()) {
                dead = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(dead, "a zombie counts as gone");
        child.wait().unwrap();
        assert!(process_alive(std::process::id()));
    }

    #[test]
    fn dialog_adds_the_suffix_and_checks_existence() {
        let dir = tempfile::tempdir().unwrap();
        let mut d = FileDialog::new(DialogPurpose::SaveAs, dir.path().to_path_buf(), "new".into());
        assert_eq!(d.chosen().unwrap(), crate::edit::absolute(&dir.path().join("new.patch.json")));
        d.purpose = DialogPurpose::Open;
        assert!(d.chosen().is_err());
        std::fs::write(dir.path().join("new.patch.json"), "{}").unwrap();
        assert!(d.chosen().is_ok());
        assert_eq!(d.listing().1, vec!["new.patch.json".to_string()]);
    }
}
