//! The document being edited: the saved [`PatchDocument`], its file, its
//! revision and its undo history.
//!
//! Every change of the document gives it a new **revision** (a number never
//! used before); whatever depends on the document remembers the revision it
//! last saw instead of a copy of the document: the derived views
//! ([`crate::derived`]), the saved state (dirty title, unsaved-changes
//! question), the last bake (stale bake, automatic re-bake) and the autosave.
//! Undo and redo restore a state together with its revision.
//!
//! Who changes the document says so: commands through [`Document::edit`] or
//! [`Document::touch`], widgets that edit fields directly through
//! [`crate::state::Cx::edited`], which the app turns into a `touch` after the
//! panel is drawn.

use crate::edit;
use crate::history::{History, SettleRule};
use crowdpatch::model::PatchDocument;
use std::path::{Path, PathBuf};

/// The document, its file, revision and history.
pub struct Document {
    doc: PatchDocument,
    /// Its file, if it has one.
    pub file: Option<PathBuf>,
    revision: u64,
    /// The last revision handed out.
    issued: u64,
    /// The revision on disk, if any.
    saved: Option<u64>,
    history: History<PatchDocument>,
}

impl Document {
    /// `doc`, saved as `file` (or new when `None`).
    pub fn new(doc: PatchDocument, file: Option<PathBuf>) -> Document {
        Document { history: History::new(doc.clone(), 0), doc, file, revision: 0, issued: 0, saved: Some(0) }
    }

    /// The document.
    pub fn get(&self) -> &PatchDocument {
        &self.doc
    }

    /// The current revision.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Changes the document: a new revision.
    pub fn edit(&mut self) -> &mut PatchDocument {
        self.touch();
        &mut self.doc
    }

    /// Mutable access **without** a new revision: for code that reports its
    /// changes itself and then calls [`Document::touch`] (widgets, commands
    /// that may change nothing).
    pub fn untracked(&mut self) -> &mut PatchDocument {
        &mut self.doc
    }

    /// Marks the document changed: a new revision.
    pub fn touch(&mut self) {
        self.issued += 1;
        self.revision = self.issued;
    }

    /// Whether the document differs from its file (or is new and edited).
    pub fn dirty(&self) -> bool {
        self.saved != Some(self.revision)
    }

    /// Marks the current state as on disk (or not).
    pub fn set_saved(&mut self, saved: bool) {
        self.saved = saved.then_some(self.revision);
    }

    /// The directory pattern references resolve against.
    pub fn base_dir(&self) -> PathBuf {
        match self.file.as_deref().and_then(Path::parent) {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        }
    }

    /// Where file dialogs open: the document's folder, else `patches/` when
    /// there is one, else the current directory.
    pub fn dialog_dir(&self) -> PathBuf {
        match self.file.as_deref().and_then(Path::parent) {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => {
                let patches = Path::new("patches");
                if patches.is_dir() { patches.to_path_buf() } else { PathBuf::from(".") }
            }
        }
    }

    /// Replaces the document by `doc` from `file` (loaded, new or
    /// recovered): a new revision, saved, with a fresh history.
    pub fn load(&mut self, doc: PatchDocument, file: Option<PathBuf>) {
        self.doc = doc;
        self.file = file;
        self.touch();
        self.saved = Some(self.revision);
        self.history.reset(self.doc.clone(), self.revision);
    }

    /// Writes the document to `file` (atomically), re-basing its pattern
    /// references when it moves to another folder, and makes `file` its file.
    ///
    /// # Errors
    /// I/O errors; the document is then unchanged.
    pub fn save_to(&mut self, file: &Path) -> std::io::Result<()> {
        let new_base = file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf();
        let mut doc = self.doc.clone();
        let rebased = edit::rebase_references(&mut doc, &self.base_dir(), &new_base);
        crowdpatch::io::write_atomic(file, doc.to_json().as_bytes())?;
        if rebased {
            self.doc = doc;
            self.touch();
        }
        self.file = Some(file.to_path_buf());
        self.set_saved(true);
        Ok(())
    }

    /// Feeds the undo history (once per frame).
    pub fn settle(&mut self, now: f64, rule: SettleRule) {
        self.history.feed(now, &self.doc, self.revision, rule);
    }

    /// Whether there is something to undo.
    pub fn can_undo(&self) -> bool {
        self.history.can_undo(self.revision)
    }

    /// Whether there is something to redo.
    pub fn can_redo(&self) -> bool {
        self.history.can_redo()
    }

    /// Undoes one step; `false` when there was none.
    pub fn undo(&mut self) -> bool {
        let step = self.history.undo(&self.doc, self.revision);
        self.restore(step)
    }

    /// Redoes one step; `false` when there was none.
    pub fn redo(&mut self) -> bool {
        let step = self.history.redo(&self.doc, self.revision);
        self.restore(step)
    }

    fn restore(&mut self, step: Option<(PatchDocument, u64)>) -> bool {
        match step {
            Some((doc, revision)) => {
                self.doc = doc;
                self.revision = revision;
                true
            }
            None => false,
        }
    }
}
