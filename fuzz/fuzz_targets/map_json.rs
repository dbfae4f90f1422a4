//! Map documents (`*.map.json`) as `crowdpatch compose` reads them, with
//! the shipped patterns and patches beside them (`../patterns`,
//! `../patches/…` resolve), then composed when they load (the composition
//! is bounded by the map limits).
#![no_main]
#[path = "common.rs"]
mod common;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = common::file("maps/fuzz.map.json", data);
    if let Ok(map) = crowdpatch::compose::load_map(&path) {
        let c = crowdpatch::compose::compose(&map);
        for t in &c.tiles {
            let _ = t.document.resolve(None, path.parent().unwrap());
        }
    }
});
