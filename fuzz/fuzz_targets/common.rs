//! What the targets share: a scratch directory per process (in memory where
//! the system has /dev/shm) holding copies of the shipped patterns and
//! patches, so that documents which reference them resolve as they would
//! beside the repository's maps, and a file in it for readers that take a
//! path.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The scratch directory: `patterns/`, `patches/` and `maps/` (empty).
pub fn scratch() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let shm = Path::new("/dev/shm");
        let dir = if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() }.expect("a scratch dir");
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        for sub in ["patterns", "patches"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
            for e in std::fs::read_dir(repo.join(sub)).unwrap() {
                let p = e.unwrap().path();
                std::fs::copy(&p, dir.path().join(sub).join(p.file_name().unwrap())).unwrap();
            }
        }
        std::fs::create_dir_all(dir.path().join("maps")).unwrap();
        dir
    })
    .path()
}

/// Writes `bytes` to `scratch()/rel` and returns the path.
pub fn file(rel: &str, bytes: &[u8]) -> PathBuf {
    let p = scratch().join(rel);
    std::fs::write(&p, bytes).expect("writing the scratch file");
    p
}
