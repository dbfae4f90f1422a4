//! `world.json` as games read it (`WorldFile::from_json`), then the grid
//! and, for a Wang set, a fill of a small window.
#![no_main]
use crowdpatch_runtime::{WangSet, WorldFile};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(file) = WorldFile::from_json(text) {
        let world = file.world();
        let _ = world.cells().count();
        if let Some(w) = &file.wang {
            let set = WangSet::from_file(w);
            if set.missing().is_empty() {
                let _ = set.fill(w.seed, [-3, 5], 4, 4, file.size, file.period);
            }
        }
    }
});
