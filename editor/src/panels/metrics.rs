//! The metrics of the last bake (the report's figures), its remaining
//! collisions (click one to see it: the play time jumps there) and notes.

use crate::bake_job::BakeResult;
use crate::state::Playback;
use crate::view;
use egui::{RichText, Ui};

/// The metrics panel (no state of its own).
#[derive(Debug, Clone, Copy, Default)]
pub struct MetricsPanel;

impl MetricsPanel {
    /// Draws the metrics of `result`; a click on a collision moves the
    /// `playback` there.
    pub fn ui(&mut self, ui: &mut Ui, result: Option<&BakeResult>, playback: &mut Playback) {
        let Some(r) = result else {
            ui.label(RichText::new("Bake to see the metrics.").weak());
            return;
        };
        grid(ui, r);
        realism(ui, r);
        if !r.bake.remaining.is_empty() {
            ui.label("Remaining collisions (click to see):");
            let list: Vec<(usize, String, f64)> =
                r.bake.report().remaining_collisions.iter().map(|c| (c.agent, c.other.clone(), c.time)).collect();
            for (a, other, t) in list.into_iter().take(20) {
                if ui.link(format!("agent {a} × {other} at t = {t:.2} s")).clicked() {
                    playback.seek(t);
                }
            }
        }
        for n in &r.bake.notes {
            ui.colored_label(view::WARNING, n);
        }
    }
}

fn grid(ui: &mut Ui, r: &BakeResult) {
    let m = &r.bake.metrics;
    let two_r = 2.0 * r.baked.header.agent_radius;
    let fmt = |v: Option<f64>| v.map_or("–".to_string(), |d| format!("{d:.3} m"));
    let t = &r.bake.timings;
    egui::Grid::new("metrics").num_columns(2).striped(true).show(ui, |ui| {
        let row = |ui: &mut Ui, k: &str, v: String, bad: bool| {
            ui.label(k);
            if bad {
                ui.colored_label(view::PROBLEM, v)
            } else {
                ui.label(v)
            };
            ui.end_row();
        };
        row(ui, "converged", format!("{}", r.bake.converged()), !r.bake.converged());
        row(ui, "iterations", r.bake.collision.iterations.to_string(), false);
        row(
            ui,
            "min separation",
            format!("{} (2r = {two_r:.2} m)", fmt(m.min_separation)),
            m.min_separation.is_some_and(|d| d < two_r - 1e-9),
        );
        row(
            ui,
            "obstacle clearance",
            fmt(m.obstacle_clearance),
            m.obstacle_clearance.is_some_and(|d| d < r.baked.header.agent_radius - 1e-9),
        );
        row(ui, "seam clearance", fmt(m.seam_clearance), false);
        row(
            ui,
            "collisions",
            format!("{} ({:.2} s overlap)", m.collisions.count, m.collisions.overlap_time),
            m.collisions.count > 0,
        );
        row(
            ui,
            "boundary error",
            format!("{:.2e} m, {:.2e} s", m.boundary_error.position, m.boundary_error.time),
            false,
        );
        row(
            ui,
            "speed mean",
            format!("{:.2} m/s (p5 {:.2}, p95 {:.2}, max {:.2})", m.speed.mean, m.speed.p5, m.speed.p95, m.speed.max),
            false,
        );
        row(ui, "|u − u_cft| mean", format!("{:.2} m/s", m.speed.mean_comfort_deviation), false);
        row(ui, "turn rate", format!("p95 {:.2}, max {:.2} rad/s", m.turn_rate.p95, m.turn_rate.max), false);
        row(ui, "coverage", format!("{:.0} %", m.coverage * 100.0), false);
        row(
            ui,
            "time",
            format!(
                "{:.0} ms (collisions {:.0} ms, smoothing {:.0} ms)",
                t.total_ms, t.collision_removal_ms, t.smoothing_ms
            ),
            false,
        );
    });
}

/// Like real pedestrians? The realism figures of the bake next to the
/// shipped reference (pooled ETH/UCY), every 0.4 s.
fn realism(ui: &mut Ui, r: &BakeResult) {
    let Some(m) = &r.bake.metrics.realism else { return };
    let real = &crowdpatch::realism::reference::Reference::shipped_ref().pooled.stats;
    ui.label(RichText::new("Like real pedestrians? (medians, every 0.4 s)").strong());
    egui::Grid::new("realism").num_columns(3).striped(true).show(ui, |ui| {
        ui.label("");
        ui.label(RichText::new("this bake").weak());
        ui.label(RichText::new("real").weak());
        ui.end_row();
        let mut row = |k: &str, ours: String, theirs: String, bad: bool| {
            ui.label(k);
            if bad {
                ui.colored_label(view::WARNING, ours);
            } else {
                ui.label(ours);
            }
            ui.label(theirs);
            ui.end_row();
        };
        row(
            "speed",
            format!("{:.2} m/s (p95 {:.2})", m.crowd.speed.p50, m.crowd.speed.p95),
            format!("{:.2} m/s (p95 {:.2})", real.speed.p50, real.speed.p95),
            m.crowd.speed.p95 > 1.9,
        );
        row(
            "floor / preferred",
            format!("{:.2} / {:.2} m/s", m.floor_speed.p50, m.preferred_speed.p50),
            String::new(),
            m.floor_speed.p95 > 1.9,
        );
        row("speed KS distance", format!("{:.2}", m.speed_ks), String::new(), false);
        row(
            "detour",
            format!("{:.3}", m.crowd.detour.p50),
            format!("{:.3}", real.detour.p50),
            m.crowd.detour.p50 > 1.03,
        );
        row(
            "turn rate p95",
            format!("{:.2} rad/s (25 Hz {:.2})", m.crowd.turn_rate.p95, m.turn_rate_played.p95),
            format!("{:.2} rad/s", real.turn_rate.p95),
            false,
        );
        row(
            "nearest neighbour",
            format!("{:.2} m (p5 {:.2})", m.crowd.nearest_neighbour.p50, m.crowd.nearest_neighbour.p5),
            format!("{:.2} m (p5 {:.2})", real.nearest_neighbour.p50, real.nearest_neighbour.p5),
            false,
        );
        // Walking groups against the range over the ETH/UCY scenes with
        // group annotations (data/groups.json).
        let reference = crowdpatch::realism::groups::GroupReference::shipped_ref();
        let range = |f: &dyn Fn(&crowdpatch::figures::GroupStats) -> Option<f64>, k: f64, unit: &str| {
            reference.range(f).map_or(String::new(), |(lo, hi)| format!("{:.0}–{:.0}{unit}", lo * k, hi * k))
        };
        let ours = |x: Option<f64>, k: f64, unit: &str| x.map_or("—".to_owned(), |x| format!("{:.0}{unit}", x * k));
        let g = &m.groups;
        row(
            "walkers in groups",
            format!("{:.0} % ({} groups)", 100.0 * g.share_in_groups, g.groups),
            range(&|s| Some(s.share_in_groups), 100.0, " %"),
            false,
        );
        row(
            "pair spacing",
            ours(g.pairs.spacing.as_ref().map(|x| x.p50), 100.0, " cm"),
            range(&|s| s.pairs.spacing.as_ref().map(|x| x.p50), 100.0, " cm"),
            false,
        );
        row(
            "pair angle to heading",
            ours(g.pairs.angle_deg.as_ref().map(|x| x.p50), 1.0, "°"),
            range(&|s| s.pairs.angle_deg.as_ref().map(|x| x.p50), 1.0, "°"),
            false,
        );
        row("groups' speed / alone", ours(g.speed_ratio, 100.0, " %"), range(&|s| s.speed_ratio, 100.0, " %"), false);
    });
}
