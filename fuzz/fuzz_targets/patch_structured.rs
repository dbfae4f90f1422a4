//! Patch documents, structure-aware: `arbitrary` draws a JSON tree whose
//! object keys come from the patch format's own field names (and, now and
//! then, other text) and whose numbers include the edge values (0, −0,
//! negatives, huge, tiny, the limits), serialised by `serde_json` and read
//! as `crowdpatch bake` reads a file. It reaches the validation of points,
//! obstacles, endogenous agents and solver options that random bytes
//! rarely parse into.
#![no_main]
#[path = "common.rs"]
mod common;
use arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};

const KEYS: &[&str] = &[
    "format", "name", "size", "period", "agent_radius", "comfort_speed", "seed", "sides", "south", "east", "north",
    "west", "pattern", "length", "entries", "exits", "s", "t", "velocity", "obstacles", "circle", "polygon", "center",
    "radius", "endogenous", "waypoints", "position", "solver", "method", "matching", "max_iterations", "margin",
    "smoothing", "tack_interval", "fast_factor", "slow_factor", "wait_factor", "merge_interval", "stub_depth",
    "max_deviation", "stable", "optimal", "paper", "default", "greedy", "social-forces",
];

const NUMBERS: &[f64] = &[
    0.0, -0.0, 1.0, -1.0, 0.3, 1.33, 10.0, 16.0, 1000.0, 3600.0, 1e-300, 1e300, f64::MAX, f64::MIN_POSITIVE, 0.5, 2.0,
    100_000.0, 1e-9, 4.0, 0.01,
];

fn number(u: &mut Unstructured<'_>) -> Result<Value> {
    let x = if u.arbitrary()? { *u.choose(NUMBERS)? } else { u.arbitrary::<f64>()? };
    let x = if u.ratio(1, 4)? { x.round() } else { x };
    Ok(serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number))
}

fn value(u: &mut Unstructured<'_>, depth: u32) -> Result<Value> {
    let pick = if depth >= 6 { u.int_in_range(0..=3)? } else { u.int_in_range(0..=6)? };
    Ok(match pick {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => number(u)?,
        3 => Value::String(if u.arbitrary()? { (*u.choose(KEYS)?).to_owned() } else { u.arbitrary()? }),
        4 | 5 => {
            let n = u.int_in_range(0..=6)?;
            let mut m = Map::new();
            for _ in 0..n {
                let k = if u.ratio(7, 8)? { (*u.choose(KEYS)?).to_owned() } else { u.arbitrary()? };
                m.insert(k, value(u, depth + 1)?);
            }
            Value::Object(m)
        }
        _ => {
            let n = u.int_in_range(0..=8)?;
            Value::Array((0..n).map(|_| value(u, depth + 1)).collect::<Result<_>>()?)
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(Value::Object(mut doc)) = value(&mut u, 0).map(|v| match v {
        Value::Object(m) => Value::Object(m),
        other => Value::Object(Map::from_iter([("sides".to_owned(), other)])),
    }) else {
        return;
    };
    // Mostly the fields every patch has, so that validation goes deep.
    if u.ratio(3, 4).unwrap_or(true) {
        doc.entry("format").or_insert(Value::from(1));
        doc.entry("size").or_insert(Value::from(16.0));
        doc.entry("period").or_insert(Value::from(10.0));
    }
    let text = serde_json::to_string(&Value::Object(doc)).unwrap();
    let path = common::file("patches/structured.patch.json", text.as_bytes());
    if let Ok(patch) = crowdpatch::load_patch(&path) {
        let _ = crowdpatch::bake::refusals(&patch, &crowdpatch::BakeOptions::default(), "--frame-rate");
    }
});
