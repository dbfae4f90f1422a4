//! Nothing of the user's is ever lost: every output location of a command
//! is checked before any work ([`Plan`]) — writable, distinct from every
//! input and from every other output (by canonical path and by device and
//! inode) — and nothing is created when one is refused; outputs are written
//! atomically ([`write`]) through temporary files that a signal handler
//! removes on Ctrl-C or SIGTERM ([`install_signal_handler`]).

use anyhow::Context;
use same_file::Handle;
use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

/// When set to a number of milliseconds (at most 60 000), every output
/// waits that long between writing its temporary file and renaming it: the
/// window a test interrupts to check that nothing is left behind.
pub const WRITE_DELAY_ENV: &str = "CROWDPATCH_WRITE_DELAY_MS";

/// Exit code after an interrupt (Ctrl-C, SIGTERM): 128 + SIGINT.
pub const EXIT_INTERRUPTED: i32 = 130;

/// The temporary files being written, removed by the signal handler.
struct Live {
    /// Set by the handler: no new temporary file may be created.
    closing: bool,
    paths: Vec<PathBuf>,
}

static LIVE: Mutex<Live> = Mutex::new(Live { closing: false, paths: Vec::new() });

fn live() -> std::sync::MutexGuard<'static, Live> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Installs the handler of SIGINT, SIGTERM and SIGHUP: it removes every
/// temporary file being written, says so, and exits with
/// [`EXIT_INTERRUPTED`]. Outputs already renamed into place are complete
/// and kept; an output being replaced keeps its previous content.
///
/// # Errors
/// When a handler cannot be installed.
pub fn install_signal_handler() -> anyhow::Result<()> {
    ctrlc::set_handler(|| {
        // Holding the lock until exit: no temporary file is created after
        // this point, and none being created is missed.
        let mut live = live();
        live.closing = true;
        let mut removed = 0;
        for p in live.paths.drain(..) {
            if std::fs::remove_file(&p).is_ok() {
                removed += 1;
            }
        }
        eprintln!("\ninterrupted: {removed} temporary file(s) removed; outputs written before are complete");
        std::process::exit(EXIT_INTERRUPTED);
    })
    .context("installing the interrupt handler")
}

/// Writes `bytes` to `path` atomically: a temporary file
/// `.crowdpatch-*.tmp` in the same directory (registered for the signal
/// handler), written, synced, given the permissions of the file it replaces
/// (a new file gets the usual 0666 less the umask), then renamed over
/// `path`. On error the temporary file is removed and `path` is untouched.
///
/// # Errors
/// I/O errors; after an interrupt, `Interrupted`.
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new().prefix(".crowdpatch-").suffix(".tmp").make_in(dir, |p| {
        let mut live = live();
        if live.closing {
            return Err(std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted"));
        }
        let file = File::options().write(true).create_new(true).open(p)?;
        live.paths.push(p.to_path_buf());
        Ok(file)
    })?;
    let name = tmp.path().to_path_buf();
    let result = (|| {
        #[cfg(unix)]
        if let Ok(m) = std::fs::metadata(path) {
            tmp.as_file().set_permissions(m.permissions())?;
        }
        tmp.as_file_mut().write_all(bytes)?;
        tmp.as_file().sync_all()?;
        if let Some(ms) = std::env::var(WRITE_DELAY_ENV).ok().and_then(|v| v.parse::<u64>().ok()) {
            std::thread::sleep(std::time::Duration::from_millis(ms.min(60_000)));
        }
        tmp.persist(path).map_err(|e| e.error)?;
        Ok(())
    })();
    live().paths.retain(|p| *p != name);
    result
}

/// What a command reads and writes, checked before it does any work.
#[derive(Debug, Default)]
pub struct Plan {
    /// `(what, path)`: files the command reads.
    inputs: Vec<(String, PathBuf)>,
    /// `(what, path)`: files it writes.
    outputs: Vec<(String, PathBuf)>,
    /// `(what, path)`: directories it creates when missing.
    dirs: Vec<(String, PathBuf)>,
}

/// The path `p` would have once its missing directories exist: the
/// canonical path of its nearest existing ancestor, then the rest of `p`
/// (`.` dropped, `..` applied).
fn identity(p: &Path) -> PathBuf {
    let absolute = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let mut existing = absolute.as_path();
    let mut rest: Vec<Component> = Vec::new();
    loop {
        if let Ok(c) = std::fs::canonicalize(existing) {
            let mut out = c;
            for part in rest.iter().rev() {
                match part {
                    Component::ParentDir => {
                        out.pop();
                    }
                    Component::CurDir => {}
                    other => out.push(other.as_os_str()),
                }
            }
            return out;
        }
        match (existing.parent(), existing.components().next_back()) {
            (Some(parent), Some(last)) => {
                rest.push(last);
                existing = parent;
            }
            _ => return absolute,
        }
    }
}

/// The nearest existing ancestor of `p` (itself included).
fn existing_ancestor(p: &Path) -> PathBuf {
    let absolute = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let mut at = absolute.as_path();
    loop {
        if std::fs::symlink_metadata(at).is_ok() {
            return at.to_path_buf();
        }
        match at.parent() {
            Some(parent) => at = parent,
            None => return at.to_path_buf(),
        }
    }
}

/// Whether a file can be created in the directory `dir`: by creating one
/// (and removing it at once), which answers for permissions, read-only
/// mounts and access lists alike.
fn probe_writable(dir: &Path) -> Result<(), String> {
    match tempfile::Builder::new().prefix(".crowdpatch-probe-").suffix(".tmp").tempfile_in(dir) {
        Ok(f) => {
            drop(f);
            Ok(())
        }
        Err(e) => Err(format!("cannot write in {}: {e}", dir.display())),
    }
}

impl Plan {
    /// A plan with nothing in it.
    pub fn new() -> Plan {
        Plan::default()
    }

    /// The command reads `path` (`what` names it in messages: `PATCH`,
    /// `--character`, …).
    pub fn input(&mut self, what: impl Into<String>, path: &Path) {
        self.inputs.push((what.into(), path.to_path_buf()));
    }

    /// The command writes the file `path` (`what` names the flag).
    pub fn output(&mut self, what: impl Into<String>, path: &Path) {
        self.outputs.push((what.into(), path.to_path_buf()));
    }

    /// The command creates the directory `path` if missing and writes in it.
    pub fn dir(&mut self, what: impl Into<String>, path: &Path) {
        self.dirs.push((what.into(), path.to_path_buf()));
    }

    /// Every reason the plan cannot run, without creating anything: a
    /// directory that is a file or cannot be created; an output that is a
    /// directory or another non-regular file (a device, a pipe), is read-only, lies in a missing directory the command does
    /// not create, or in one it cannot write; an output that is an input
    /// (same canonical path, or same device and inode: a hard or symbolic
    /// link); two outputs that are one file. Empty when it may run.
    /// O(inputs · outputs) comparisons of handles, O(outputs) otherwise.
    pub fn check(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut probed: HashMap<PathBuf, Result<(), String>> = HashMap::new();
        let mut probe = |dir: PathBuf, out: &mut Vec<String>, what: &str| {
            let r = probed.entry(dir.clone()).or_insert_with(|| probe_writable(&dir)).clone();
            if let Err(e) = r {
                out.push(format!("{what}: {e}"));
            }
        };
        let planned: Vec<PathBuf> = self.dirs.iter().map(|(_, d)| identity(d)).collect();
        for (what, d) in &self.dirs {
            let shown = format!("{what} {}", d.display());
            match std::fs::metadata(d) {
                Ok(m) if m.is_dir() => probe(d.clone(), &mut out, &shown),
                Ok(_) => out.push(format!("{shown}: is a file, not a directory")),
                Err(_) => {
                    let base = existing_ancestor(d);
                    if base.is_dir() {
                        probe(base, &mut out, &shown);
                    } else {
                        out.push(format!("{shown}: cannot be created: {} is not a directory", base.display()));
                    }
                }
            }
        }
        let inputs: Vec<(&String, &PathBuf, PathBuf, Option<Handle>)> =
            self.inputs.iter().map(|(what, p)| (what, p, identity(p), Handle::from_path(p).ok())).collect();
        let mut seen: HashMap<PathBuf, String> = HashMap::new();
        let mut seen_handles: Vec<(Handle, String)> = Vec::new();
        for (what, p) in &self.outputs {
            let shown = format!("{what} {}", p.display());
            let id = identity(p);
            match std::fs::metadata(p) {
                Ok(m) if m.is_dir() => {
                    out.push(format!("{shown}: is a directory; give a file name"));
                    continue;
                }
                Ok(m) if !m.is_file() => {
                    // A device, pipe or socket would be replaced by the rename.
                    out.push(format!("{shown}: is not a regular file; give a file name"));
                    continue;
                }
                Ok(m) if m.permissions().readonly() => {
                    out.push(format!("{shown}: exists and is read-only; it is not overwritten"));
                }
                _ => {}
            }
            let parent = match p.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => PathBuf::from("."),
            };
            if parent.is_dir() {
                probe(parent, &mut out, &shown);
            } else if !planned.iter().any(|d| identity(&parent) == *d) {
                out.push(format!("{shown}: the directory {} does not exist", parent.display()));
            }
            let handle = Handle::from_path(p).ok();
            for (in_what, in_path, in_id, in_handle) in &inputs {
                if id == *in_id || (handle.is_some() && handle == *in_handle) {
                    out.push(format!(
                        "{shown}: is the input {in_what} {}; an output never overwrites an input (choose another path)",
                        in_path.display()
                    ));
                }
            }
            if let Some(first) = seen.get(&id) {
                out.push(format!("{shown}: is also {first}; two outputs of one run must be different files"));
            } else if let Some((_, first)) = handle.as_ref().and_then(|h| seen_handles.iter().find(|(x, _)| x == h)) {
                out.push(format!(
                    "{shown}: is the same file as {first}; two outputs of one run must be different files"
                ));
            }
            seen.insert(id, shown.clone());
            if let Some(h) = handle {
                seen_handles.push((h, shown));
            }
        }
        out
    }

    /// Creates the planned directories (after [`Plan::check`]).
    ///
    /// # Errors
    /// When one cannot be created.
    pub fn create_dirs(&self) -> anyhow::Result<()> {
        for (what, d) in &self.dirs {
            std::fs::create_dir_all(d).with_context(|| format!("{what} {}: creating the directory", d.display()))?;
        }
        Ok(())
    }
}

/// Prints the problems of a plan and says nothing was done; returns whether
/// there were any.
pub fn refuse(problems: &[String], what: &str) -> bool {
    for p in problems {
        eprintln!("{p}");
    }
    if !problems.is_empty() {
        eprintln!("error: {} problem(s) with the output paths; {what}", problems.len());
    }
    !problems.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_that_are_inputs_or_each_other_are_refused_and_nothing_is_created() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("a.patch.json");
        std::fs::write(&input, "{}").unwrap();
        let link = dir.path().join("hard.glb");
        std::fs::hard_link(&input, &link).unwrap();
        let mut plan = Plan::new();
        plan.input("PATCH", &input);
        plan.output("-o", &dir.path().join(".").join("a.patch.json"));
        plan.output("--report", &link);
        plan.output("--preview", &dir.path().join("x.png"));
        plan.output("-o", &dir.path().join("sub/../x.png"));
        plan.dir("-o", &dir.path().join("new/deeper"));
        plan.output("--report", &dir.path().join("missing/r.json"));
        let problems = plan.check();
        let text = problems.join("\n");
        assert!(text.contains("a.patch.json: is the input PATCH"), "{text}");
        assert!(text.contains("hard.glb: is the input PATCH"), "{text}");
        assert!(text.contains("is also --preview"), "{text}");
        assert!(text.contains("missing does not exist"), "{text}");
        // The hard link is also the first output; `sub/..` cannot be walked.
        assert!(text.contains("hard.glb: is the same file as -o"), "{text}");
        assert!(text.contains("sub/.. does not exist"), "{text}");
        assert_eq!(problems.len(), 6, "{text}");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 2, "nothing created: {names:?}");
    }

    #[test]
    fn write_replaces_atomically_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.bin");
        write(&p, b"first").unwrap();
        write(&p, b"second").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"second");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        assert!(live().paths.is_empty());
        assert!(write(&dir.path().join("no/such/dir/x"), b"x").is_err());
    }
}
