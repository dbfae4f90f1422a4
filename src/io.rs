//! File output that never leaves a half-written file.

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically: into a temporary file in the same
/// directory, flushed to disk, then renamed over `path`. A reader sees the old
/// file or the new one, never a partial one; on error `path` is untouched.
///
/// # Errors
/// Any I/O error creating, writing, syncing or renaming the temporary file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new().prefix(".crowdpatch-").suffix(".tmp").tempfile_in(dir)?;
    // Temporary files are private (0600); the result gets the permissions of
    // the file it replaces, or those of a newly created file.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = match std::fs::metadata(path) {
            Ok(m) => m.permissions().mode() & 0o7777,
            Err(_) => 0o666 & !current_umask(),
        };
        tmp.as_file().set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The process umask, read without changing it (from /proc), else 0o022.
#[cfg(unix)]
fn current_umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("Umask:").map(|v| v.trim().to_string())))
        .and_then(|v| u32::from_str_radix(&v, 8).ok())
        .unwrap_or(0o022)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.bin");
        write_atomic(&p, b"first").unwrap();
        write_atomic(&p, b"second").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"second");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1, "{names:?}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o666 & !current_umask(), "a new file gets the usual permissions, not 0600");
        }
    }

    #[test]
    fn missing_directory_is_an_error_not_a_partial_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("no/such/dir/out.bin");
        assert!(write_atomic(&p, b"x").is_err());
        assert!(!p.exists());
    }
}
