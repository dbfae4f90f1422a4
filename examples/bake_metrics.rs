//! Bakes patch documents with the library alone (no exporter) and prints each
//! one's headline figures: `cargo run --release --example bake_metrics -- patches/*.patch.json`.

fn main() {
    let mut failed = false;
    for arg in std::env::args().skip(1) {
        let path = std::path::Path::new(&arg);
        let patch = match crowdpatch::load_patch(path) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("{e}");
                failed = true;
                continue;
            }
        };
        let bake = crowdpatch::bake(&patch, &mut crowdpatch::Silent).expect("not cancelled");
        let m = &bake.metrics;
        println!(
            "{arg}: agents {} converged {} iterations {} min_sep {:.3} obstacle {:.3} seam {:.3} speed mean {:.2} p95 {:.2} max {:.2} |u-ucft| {:.3} turn p95 {:.2} max {:.2} coverage {:.2} boundary {:.1e} reverted {:?} {:.0} ms",
            bake.agents.len(),
            bake.converged(),
            bake.collision.iterations,
            m.min_separation.unwrap_or(f64::NAN),
            m.obstacle_clearance.unwrap_or(f64::NAN),
            m.seam_clearance.unwrap_or(f64::NAN),
            m.speed.mean,
            m.speed.p95,
            m.speed.max,
            m.speed.mean_comfort_deviation,
            m.turn_rate.p95,
            m.turn_rate.max,
            m.coverage,
            m.boundary_error.position,
            bake.smoothing.as_ref().map(|s| s.reverted.clone()).unwrap_or_default(),
            bake.timings.total_ms
        );
        for c in bake.remaining.iter().filter(|c| c.distance < 0.05 || std::env::var("ALL").is_ok()) {
            println!(
                "  collision: agent {} with {:?} at t={:.2} ({:.2}, {:.2}) d={:.3} < {:.3}",
                c.agent, c.other, c.time, c.position.x, c.position.y, c.distance, c.required
            );
        }
        for n in &bake.notes {
            println!("  note: {n}");
        }
        failed |= !bake.converged();
    }
    std::process::exit(if failed { 1 } else { 0 });
}
