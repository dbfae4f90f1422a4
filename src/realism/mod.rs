//! How a bake compares with real pedestrians (docs/design.md "Realism"):
//! the crowd statistics of its walkers ([`crowd`]) sampled as the ETH/UCY
//! sets are, their distance to those sets ([`reference`]; both kept in the
//! kernel [`crate::pedestrians`] and re-exported here), and the *floor*
//! its boundary conditions impose — the speeds of the straight walks from
//! each entry to its matched exit in the time the walker has — next to the
//! speeds the solver achieved, so that a user sees whether the patterns or
//! the solver set the pace.

pub use crate::pedestrians::{crowd, groups, reference};

use crate::figures::{Distribution, GroupStats, RealismMetrics};
use crate::model::Patch;
use crate::path::{Agent, Path};
use crate::pedestrians::crowd::{CrowdSamples, distribution};
use crate::pedestrians::groups::{GroupedTracks, group_stats};
use crate::pedestrians::reference::Reference;
use crowdpatch_runtime::format::wrap_angle;

/// Sampling interval of the crowd statistics `[s]`: the 0.4 s of the
/// ETH/UCY annotations, so that the bake and the references are measured
/// alike.
pub const SAMPLE_INTERVAL: f64 = 0.4;

/// Rate at which a player is assumed to show the bake for
/// [`RealismMetrics::turn_rate_played`] `[Hz]`.
pub const PLAYED_RATE: f64 = 25.0;

/// The crowd samples of a bake at interval `dt` `[s]`: each agent's path as
/// a track (its whole unwrapped interval, an endogenous loop once), and at
/// every play time `k·dt` in one period the positions of every agent
/// instance present then. O(agents · (π/dt) · instances).
pub fn bake_samples(patch: &Patch, agents: &[Agent], dt: f64) -> CrowdSamples {
    let pi = patch.header.period;
    let mut c = CrowdSamples::default();
    for a in agents {
        c.add_track(&sample_path(&a.path, dt), dt);
    }
    let steps = (pi / dt).round().max(1.0) as usize;
    for k in 0..steps {
        let t = k as f64 * pi / steps as f64;
        let mut frame = Vec::new();
        for a in agents {
            let (start, end) = (a.path.start(), a.path.end());
            // Instances: unwrapped times t + mπ inside [start, end); a loop
            // has one.
            let m0 = ((start - t) / pi).ceil() as i64;
            let m1 = if a.path.looped { m0 } else { ((end - t) / pi).floor() as i64 };
            for m in m0..=m1 {
                let tau = t + m as f64 * pi;
                if tau >= start && (tau < end || (tau <= end && !a.path.looped)) {
                    let p = a.path.position(tau);
                    frame.push([p.x, p.y]);
                }
            }
        }
        c.add_frame(&frame);
    }
    c
}

/// A path's positions every `dt` `[s]` from its start (the last sample at
/// or before its end).
pub fn sample_path(path: &Path, dt: f64) -> Vec<[f64; 2]> {
    let n = ((path.end() - path.start()) / dt + 1e-9).floor() as usize;
    (0..=n)
        .map(|k| {
            let p = path.position(path.start() + k as f64 * dt);
            [p.x, p.y]
        })
        .collect()
}

/// The speed, turn-rate and detour samples of the paths as a player shows
/// them at `rate` `[Hz]`, with the definitions of [`crowd`] (no
/// nearest-neighbour samples).
pub fn played_samples(agents: &[Agent], rate: f64) -> CrowdSamples {
    let dt = 1.0 / rate;
    let mut c = CrowdSamples::default();
    for a in agents {
        c.add_track(&sample_path(&a.path, dt), dt);
    }
    c
}

/// Share of `lateral_accelerations` `[m/s²]` above
/// [`crate::pace::TURN_ACCELERATION`] (0 when there are none).
pub fn over_turn_bound(lateral_accelerations: &[f64]) -> f64 {
    let over = lateral_accelerations.iter().filter(|&&a| a > crate::pace::TURN_ACCELERATION).count();
    over as f64 / lateral_accelerations.len().max(1) as f64
}

/// The floor speed `[m/s]` of each exogenous agent: the straight distance
/// from its entry to its exit over the time its path takes (extra periods
/// and pauses included).
pub fn floor_speeds(agents: &[Agent]) -> Vec<f64> {
    agents
        .iter()
        .filter_map(|a| {
            let (e, x) = (a.entry?, a.exit?);
            Some((x.position - e.position).norm() / (a.path.end() - a.path.start()))
        })
        .collect()
}

/// The realism report of a bake's final paths against the shipped
/// reference (its pooled set). O(agents · period / [`SAMPLE_INTERVAL`] ·
/// instances) plus the 25 Hz turn rates.
pub fn compute(patch: &Patch, agents: &[Agent]) -> RealismMetrics {
    compute_against(patch, agents, &Reference::shipped())
}

/// [`compute`] against a given reference.
pub fn compute_against(patch: &Patch, agents: &[Agent], reference: &Reference) -> RealismMetrics {
    let samples = bake_samples(patch, agents, SAMPLE_INTERVAL);
    let crowd = samples.summary(SAMPLE_INTERVAL);
    let speed_ks = crowd::ks_distance(&samples.speed, &reference.pooled.speed_quantiles).unwrap_or(1.0);
    let mut preferred: Vec<f64> = agents.iter().filter(|a| a.entry.is_some()).map(|a| a.preferred_speed).collect();
    let mut played = played_samples(agents, PLAYED_RATE);
    RealismMetrics {
        crowd,
        turn_rate_played: distribution(&mut played.turn_rate),
        turn_bound: crate::pace::TURN_ACCELERATION,
        over_turn_bound: over_turn_bound(&samples.lateral_acceleration),
        over_turn_bound_played: over_turn_bound(&played.lateral_acceleration),
        speed_ks,
        reference: reference.pooled.name.clone(),
        floor_speed: distribution(&mut floor_speeds(agents)),
        preferred_speed: distribution(&mut preferred),
        groups: bake_group_stats(agents, &entry_groups(patch, agents)),
    }
}

/// Which of a bake's walkers walk together: the exogenous agents whose
/// entry points carry the same group id on the same side (a boundary
/// point's `group`, docs/design.md "Walking groups"), as indices into
/// `agents`, in order of side and id. O(agents log agents).
pub fn entry_groups(patch: &Patch, agents: &[Agent]) -> Vec<Vec<usize>> {
    let mut groups: std::collections::BTreeMap<(usize, u32), Vec<usize>> = Default::default();
    for (i, a) in agents.iter().enumerate() {
        let Some(e) = &a.entry else { continue };
        if let Some(g) = patch.sides[e.side].entries.get(e.index).and_then(|b| b.group) {
            groups.entry((e.side.index(), g)).or_default().push(i);
        }
    }
    groups.into_values().collect()
}

/// A bake's walkers on a common clock for [`groups::group_stats`]: each
/// agent one walker (its unwrapped path; an endogenous loop once), sampled
/// at the times `k·dt` `[s]` inside its interval, numbered `k`, so that
/// members who walk together share sample numbers. `groups` are indices
/// into `agents` of the walkers who walk together. O(agents · duration / dt).
pub fn bake_group_tracks(agents: &[Agent], groups: &[Vec<usize>], dt: f64) -> GroupedTracks {
    let walkers = agents
        .iter()
        .map(|a| {
            let (start, end) = (a.path.start(), a.path.end());
            let (k0, k1) = ((start / dt - 1e-9).ceil() as i64, (end / dt + 1e-9).floor() as i64);
            (k0..=k1)
                .map(|k| {
                    let p = a.path.position((k as f64 * dt).clamp(start, end));
                    (k, [p.x, p.y])
                })
                .collect()
        })
        .collect();
    GroupedTracks { sample_interval: dt, step: 1, walkers, groups: groups.to_vec() }
}

/// The group statistics of a bake's walkers at [`SAMPLE_INTERVAL`], to set
/// beside the shipped reference ([`groups::GroupReference::shipped_ref`];
/// docs/design.md "Walking groups"). `groups`: indices into `agents` of the
/// walkers who walk together ([`entry_groups`]); with none, share 0 and
/// no figure of groups (`None`), never NaN.
/// O(agents · duration / [`SAMPLE_INTERVAL`]).
pub fn bake_group_stats(agents: &[Agent], groups: &[Vec<usize>]) -> GroupStats {
    group_stats(&bake_group_tracks(agents, groups, SAMPLE_INTERVAL))
}

/// The bake's walkers as trajectories in PedPy's text format (what PedPy
/// 1.5's `load_trajectory` reads as it is): comment lines giving the frame
/// rate (`# framerate: R`) and the unit (`x/m`), the walking groups as
/// `# group: ID ID…` lines (ids of the walkers of one copy of a group,
/// [`entry_groups`]), then one row per walker and frame, `id frame x y z`
/// (metres, patch frame, z = 0; frame numbers at `rate` `[Hz]` from play
/// time 0). `periods` periods of play, in which every copy of an exogenous
/// agent (one per period, entering at its entry time) is a walker of its
/// own and an endogenous agent one walker throughout.
/// O(agents · periods · π · rate).
pub fn trajectories_txt(patch: &Patch, agents: &[Agent], rate: f64, periods: usize) -> String {
    let pi = patch.header.period;
    let total = periods as f64 * pi;
    let frames = (total * rate).round() as i64;
    let mut rows = String::new();
    let mut id = 0usize;
    // The walker id of each agent's copy.
    let mut ids: Vec<std::collections::BTreeMap<i64, usize>> = vec![Default::default(); agents.len()];
    for (i, a) in agents.iter().enumerate() {
        let (start, end) = (a.path.start(), a.path.end());
        let copies: Vec<i64> = if a.path.looped {
            vec![0]
        } else {
            (((0.0 - end) / pi).floor() as i64..=((total - start) / pi).ceil() as i64).collect()
        };
        for c in copies {
            let mut any = false;
            for f in 0..frames {
                let t = f as f64 / rate;
                let tau = if a.path.looped { start + (t - start).rem_euclid(pi) } else { t - c as f64 * pi };
                if tau < start || tau > end {
                    continue;
                }
                let p = a.path.position(tau);
                rows.push_str(&format!("{id} {f} {:.4} {:.4} 0.0\n", p.x, p.y));
                any = true;
            }
            if any {
                ids[i].insert(c, id);
                id += 1;
            }
        }
    }
    let mut out = format!(
        "# crowdpatch: the baked walkers of \"{}\" (patch frame; PedPy's text format)\n\
         # framerate: {rate} fps\n\
         # unit: x/m y/m z/m (positions in metres)\n",
        patch.header.name
    );
    for group in entry_groups(patch, agents) {
        let copies: std::collections::BTreeSet<i64> = group.iter().flat_map(|&i| ids[i].keys().copied()).collect();
        for c in copies {
            let members: Vec<String> = group.iter().filter_map(|&i| ids[i].get(&c)).map(usize::to_string).collect();
            if members.len() > 1 {
                out.push_str(&format!("# group: {}\n", members.join(" ")));
            }
        }
    }
    out.push_str("# id frame x y z\n");
    out.push_str(&rows);
    out
}

/// Heading change `[rad]` of a path between consecutive samples every `dt`,
/// for tests and figures.
pub fn heading_changes(path: &Path, dt: f64) -> Vec<f64> {
    let p = sample_path(path, dt);
    let h: Vec<f64> = p.windows(2).map(|w| (w[1][1] - w[0][1]).atan2(w[1][0] - w[0][0])).collect();
    h.windows(2).map(|w| wrap_angle(w[1] - w[0])).collect()
}

/// A distribution's one-line summary, `median (p5–p95, max)`.
pub fn describe(d: &Distribution, digits: usize) -> String {
    format!("{:.*} ({:.*}–{:.*}, max {:.*})", digits, d.p50, digits, d.p5, digits, d.p95, digits, d.max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::load_patch;

    fn shipped(name: &str) -> crate::bake::Bake {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("patches/{name}.patch.json"));
        crate::bake::bake(&load_patch(&p).unwrap(), &mut crate::bake::Silent).unwrap()
    }

    #[test]
    fn the_trajectory_file_reads_back_to_the_bake_statistics_and_its_groups() {
        let b = shipped("avenue");
        // 25 Hz over ten periods, read back and sampled at 0.4 s (every 10th
        // frame): the same speeds as the bake's own sampling, up to the
        // 0.1 mm rounding of the CSV.
        let txt = trajectories_txt(&b.patch, &b.agents, 2.5, 10);
        let t = reference::parse_trajectories(&txt, "bake.txt", 99.0).unwrap();
        assert!((t.sample_interval - 0.4).abs() < 1e-12);
        let from_file = t.samples().summary(0.4);
        let direct = bake_samples(&b.patch, &b.agents, 0.4).summary(0.4);
        assert!((from_file.speed.p50 - direct.speed.p50).abs() < 0.01, "{:?} vs {:?}", from_file.speed, direct.speed);
        assert!((from_file.speed.p95 - direct.speed.p95).abs() < 0.02);
        // PedPy's header: the frame rate and the unit in comments; every
        // other line five fields and a frame in range.
        assert!(txt.lines().any(|l| l == "# framerate: 2.5 fps"));
        assert!(txt.lines().any(|l| l.starts_with('#') && l.contains("x/m")));
        let mut at: std::collections::BTreeMap<(usize, i64), [f64; 2]> = Default::default();
        for line in txt.lines().filter(|l| !l.starts_with('#')) {
            let f: Vec<&str> = line.split(' ').collect();
            assert_eq!(f.len(), 5, "{line}");
            let frame = f[1].parse::<i64>().unwrap();
            assert!((0..250).contains(&frame));
            at.insert((f[0].parse().unwrap(), frame), [f[2].parse().unwrap(), f[3].parse().unwrap()]);
        }
        // The avenue's walking pairs: a group line for each copy of each
        // pair, whose members walk side by side wherever both are present.
        let groups: Vec<Vec<usize>> = txt
            .lines()
            .filter_map(|l| l.strip_prefix("# group: "))
            .map(|l| l.split(' ').map(|x| x.parse().unwrap()).collect())
            .collect();
        assert!(groups.len() >= 3 * 9, "{} group lines", groups.len());
        for g in &groups {
            assert_eq!(g.len(), 2);
            let both: Vec<f64> = (0..250)
                .filter_map(|f| Some((at.get(&(g[0], f))?, at.get(&(g[1], f))?)))
                .map(|(a, b)| (a[0] - b[0]).hypot(a[1] - b[1]))
                .collect();
            // Side by side (others crossing between them may part them
            // for a moment).
            let mut sorted = both.clone();
            sorted.sort_by(f64::total_cmp);
            assert!(!sorted.is_empty());
            if sorted.len() >= 20 {
                assert!((0.6..=0.95).contains(&sorted[sorted.len() / 2]), "{g:?}: {both:?}");
            }
            assert!(both.iter().all(|d| (0.55..1.5).contains(d)), "{g:?}: {both:?}");
        }
    }

    #[test]
    fn the_floor_is_the_straight_walk_in_the_time_given() {
        let b = shipped("figure7");
        let floor = floor_speeds(&b.agents);
        assert_eq!(floor.len(), b.agents.iter().filter(|a| a.entry.is_some()).count());
        for (a, f) in b.agents.iter().filter(|a| a.entry.is_some()).zip(&floor) {
            // No path is shorter than the straight line.
            assert!(a.path.mean_speed() >= f - 1e-9, "{} < {f}", a.path.mean_speed());
        }
        let m = compute(&b.patch, &b.agents);
        assert!(m.crowd.speed.count > 0 && (0.0..=1.0).contains(&m.speed_ks));
        assert!(m.crowd.detour.p50 >= 1.0);
    }

    #[test]
    fn a_bake_without_groups_says_so() {
        let b = shipped("figure7");
        let s = bake_group_stats(&b.agents, &entry_groups(&b.patch, &b.agents));
        assert_eq!(b.metrics.realism.as_ref().unwrap().groups, s);
        assert_eq!((s.walkers, s.walkers_in_groups, s.share_in_groups, s.groups), (b.agents.len(), 0, 0.0, 0));
        assert_eq!((s.pair_share, s.speed_ratio, s.pairs.spacing), (None, None, None));
        assert!(s.single_speed.is_some_and(|v| v > 0.3));
        assert!(!serde_json::to_string(&s).unwrap().contains("NaN"));
    }

    #[test]
    fn a_bake_reports_the_groups_its_entry_points_declare() {
        use crate::model::{BoundaryPoint, PatchDocument, SideDocument};
        let points = |v: &[(f64, f64, Option<u32>)]| {
            Some(v.iter().map(|&(s, t, group)| BoundaryPoint { s, t, velocity: None, group }).collect())
        };
        let mut doc = PatchDocument::new(16.0, 10.0);
        doc.sides.south = Some(SideDocument {
            entries: points(&[(7.6, 1.0, Some(1)), (8.4, 1.0, Some(1)), (3.0, 5.0, None)]),
            ..SideDocument::default()
        });
        doc.sides.north = Some(SideDocument {
            exits: points(&[(7.6, 3.0, Some(1)), (8.4, 3.0, Some(1)), (13.0, 8.0, None)]),
            ..SideDocument::default()
        });
        let patch = doc.resolve(None, std::path::Path::new(".")).unwrap();
        let b = crate::bake::bake(&patch, &mut crate::bake::Silent).unwrap();
        let groups = entry_groups(&b.patch, &b.agents);
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].len(), 2);
        assert!(groups[0].iter().all(|&i| b.agents[i].entry.unwrap().s != 3.0));
        let g = &b.metrics.realism.as_ref().unwrap().groups;
        assert_eq!((g.walkers, g.walkers_in_groups, g.groups), (3, 2, 1));
        assert_eq!(g.sizes, std::collections::BTreeMap::from([(2, 1)]));
        // They walk side by side, 2r apart at least.
        assert!(g.pairs.spacing.is_some_and(|s| s.p10 >= 2.0 * patch.header.agent_radius - 1e-6), "{g:?}");
    }

    #[test]
    fn baked_walkers_in_a_group_are_measured_on_one_clock() {
        use crate::geometry::Vec2;
        use crate::path::ControlPoint;
        // Two agents entering together 0.8 m apart abreast (one at t = 1.1 s,
        // the other one sample later on its same line, i.e. in step with it),
        // walking +x at 1.2 m/s, and one walking alone at 1.5 m/s.
        let line = |y: f64, t0: f64, v: f64| Agent {
            path: Path {
                points: vec![
                    ControlPoint::free(Vec2::new(v * t0, y), t0),
                    ControlPoint::free(Vec2::new(v * 12.0, y), 12.0),
                ],
                looped: false,
            },
            kind: crowdpatch_runtime::format::AgentKind::Endogenous { index: 0 },
            entry: None,
            exit: None,
            preferred_speed: v,
        };
        let agents = [line(0.0, 1.1, 1.2), line(0.8, 1.5, 1.2), line(5.0, 0.0, 1.5)];
        let s = bake_group_stats(&agents, &[vec![0, 1]]);
        assert!((s.share_in_groups - 2.0 / 3.0).abs() < 1e-12);
        let sp = s.pairs.spacing.unwrap();
        assert!((sp.p10 - 0.8).abs() < 1e-9 && (sp.p90 - 0.8).abs() < 1e-9, "{sp:?}");
        assert!((s.pairs.angle_deg.unwrap().p50 - 90.0).abs() < 1e-6);
        assert!((s.speed_ratio.unwrap() - 0.8).abs() < 1e-9);
    }

    #[test]
    fn a_straight_walker_has_no_turn_and_no_detour() {
        use crate::geometry::Vec2;
        use crate::path::ControlPoint;
        let path = Path {
            points: vec![
                ControlPoint::free(Vec2::new(1.0, 8.0), 0.0),
                ControlPoint::free(Vec2::new(8.0, 8.0), 5.0),
                ControlPoint::free(Vec2::new(15.0, 8.0), 10.0),
            ],
            looped: false,
        };
        assert!(heading_changes(&path, 0.04).iter().all(|h| h.abs() < 1e-12));
        let mut c = CrowdSamples::default();
        c.add_track(&sample_path(&path, 0.4), 0.4);
        assert!((c.detour[0] - 1.0).abs() < 1e-12);
        assert!(c.speed.iter().all(|s| (s - 1.4).abs() < 1e-9));
    }
}
