//! Streams a composed world along a camera path, prints agent counts, and
//! writes a top-down PNG of one frame.
//!
//! Compose a world from the shipped tiles first (the town map, or its
//! Wang-tile set, which fills an unbounded world), then run the example:
//!
//! ```sh
//! cargo run --release -- compose maps/town.map.json -o target/town
//! cargo run --release -p crowdpatch-runtime --example stream_world -- target/town/world.json --png town.png
//!
//! cargo run --release -- compose maps/town.map.json -o target/wang --wang 2
//! cargo run --release -p crowdpatch-runtime --example stream_world -- target/wang/world.json --png wang.png
//! ```
//!
//! A world with a Wang set is streamed as the unbounded world of the set
//! (with the file's seed) along a 2 km path; a plain world along a loop over
//! its grid.
//!
//! Exit codes, as the README's: 0 success; 2 bad input or another error,
//! a tile that failed to load included.
//!
//! Skeletal tiles (`compose --animation skeletal`, optionally `--compress
//! meshopt`: run the example with `--features meshopt`) stream the same way;
//! the budget counts their joint clips, and every frame the example also
//! samples the local joint transforms of every instance of the shown tiles
//! ([`JointSampler`]). `--budget MIB` sets the memory budget (default 8).
//!
//! ```sh
//! cargo run --release -- compose maps/town.map.json -o target/town-skeletal --animation skeletal --compress meshopt
//! cargo run --release -p crowdpatch-runtime --features meshopt --example stream_world -- target/town-skeletal/world.json --budget 48
//! ```

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use std::collections::HashMap;

use crowdpatch_runtime::{
    DirectorySource, JointCursors, JointPoses, JointSampler, Layout, Obstacle, Placement, Poses, StreamEvent,
    StreamOptions, Streamer, WangSet, WangWorld, WorldFile,
};

/// Frames of the camera path and seconds between them.
const FRAMES: usize = 240;
const DT: f64 = 0.25;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut world_path = PathBuf::from("target/town/world.json");
    let mut png = PathBuf::from("stream_world.png");
    let mut budget_mib = 8usize;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--png" => png = args.next().map(PathBuf::from).unwrap_or(png),
            "--budget" => match args.next().and_then(|b| b.parse().ok()).filter(|&b| b > 0 && b <= 1 << 20) {
                Some(b) => budget_mib = b,
                None => {
                    eprintln!("error: --budget takes a whole number of MiB in [1, 1048576]");
                    return ExitCode::from(2);
                }
            },
            "-h" | "--help" => {
                println!(
                    "usage: stream_world [WORLD.json] [--png FILE] [--budget MIB]\n(compose one with `crowdpatch compose maps/town.map.json -o target/town`)"
                );
                return ExitCode::SUCCESS;
            }
            _ => world_path = PathBuf::from(a),
        }
    }
    let file = match WorldFile::load(&world_path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            eprintln!("compose a world first: cargo run --release -- compose maps/town.map.json -o target/town");
            return ExitCode::from(2);
        }
    };
    let dir = world_path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let source = DirectorySource::for_world(&dir, &file);
    let options = StreamOptions { radius: 48.0, hysteresis: 16.0, memory_budget: budget_mib << 20, workers: 2 };
    println!("memory budget {budget_mib} MiB");
    let result = match &file.wang {
        Some(w) => {
            let layout = WangWorld { set: WangSet::from_file(w), seed: w.seed, size: file.size };
            // A straight 2 km walk north-east with a sway.
            let path = |f: f64| [f * 2000.0, f * 1200.0 + 60.0 * (f * 12.0).sin()];
            run(Streamer::new(layout, source, options), path, &png)
        }
        None => {
            let world = file.world();
            let (w, h) = (world.columns() as f64 * file.size, world.rows() as f64 * file.size);
            // A loop round the world's centre.
            let path = move |f: f64| {
                let a = f * std::f64::consts::TAU;
                [w / 2.0 + 0.35 * w * a.cos(), h / 2.0 + 0.35 * h * a.sin()]
            };
            run(Streamer::new(world, source, options), path, &png)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run<L: Layout>(mut s: Streamer<L>, path: impl Fn(f64) -> [f64; 2], png: &Path) -> Result<(), String> {
    let mut poses = Poses::default();
    let (mut loaded, mut unloaded, mut failed) = (0, 0, 0);
    let mut max_visible = 0;
    let mut sample_time = Duration::ZERO;
    let mut samples = 0usize;
    let snapshot_frame = FRAMES / 2;
    // Joint samplers of the loaded skeletal tiles (built when a tile shows).
    let mut joints: HashMap<usize, (JointSampler, JointCursors, JointPoses)> = HashMap::new();
    let (mut joint_time, mut joint_samples, mut max_loaded) = (Duration::ZERO, 0usize, 0usize);
    for frame in 0..=FRAMES {
        let f = frame as f64 / FRAMES as f64;
        let camera = path(f);
        // The first frame waits for its tiles (a loading screen); later
        // frames never block.
        let events = if frame == 0 { s.update_blocking(camera, Duration::from_secs(30)) } else { s.update(camera) };
        for e in &events {
            match e {
                StreamEvent::TileLoaded { .. } => loaded += 1,
                StreamEvent::TileUnloaded { tile } => {
                    unloaded += 1;
                    joints.remove(tile);
                }
                StreamEvent::LoadFailed { tile, error } => {
                    failed += 1;
                    eprintln!("tile {tile} failed to load: {error}");
                }
                _ => {}
            }
        }
        let t = frame as f64 * DT;
        let start = Instant::now();
        let cells = s.sample(t, &mut poses);
        sample_time += start.elapsed();
        samples += poses.len();
        max_loaded = max_loaded.max(s.loaded_bytes());
        // Joint poses of every instance of each shown skeletal tile.
        let shown: std::collections::BTreeSet<usize> = s.shown_cells().map(|(_, c)| c.tile).collect();
        for tile in shown {
            if let std::collections::hash_map::Entry::Vacant(e) = joints.entry(tile)
                && let Some(sampler) = s.tile(tile).and_then(JointSampler::new)
            {
                let (c, p) = (sampler.cursors(), sampler.poses());
                e.insert((sampler, c, p));
            }
            if let Some((sampler, cursors, out)) = joints.get_mut(&tile) {
                let start = Instant::now();
                sampler.sample(t, cursors, out);
                joint_time += start.elapsed();
                joint_samples += sampler.instance_count() * sampler.joint_count();
            }
        }
        let visible = poses.visible_count();
        max_visible = max_visible.max(visible);
        if frame % 30 == 0 {
            println!(
                "t = {t:6.2} s  camera ({:7.1}, {:7.1}) m  cells shown {:3}  tiles loaded {:2} ({:5.0} KiB, {} pending)  agents {:5} visible of {:5} instances",
                camera[0],
                camera[1],
                cells.len(),
                s.loaded_tiles(),
                s.loaded_bytes() as f64 / 1024.0,
                s.pending(),
                visible,
                poses.len()
            );
        }
        if frame == snapshot_frame {
            draw(&s, &poses, &cells, camera, &path, png)?;
            println!("wrote {} (frame {frame}, t = {t:.2} s, {visible} agents)", png.display());
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    println!(
        "{} tile loads, {} unloads, {} failures; at most {max_visible} agents visible; sampling took {:.0} µs a frame on average ({} agent instances a frame)",
        loaded,
        unloaded,
        failed,
        sample_time.as_secs_f64() * 1e6 / (FRAMES + 1) as f64,
        samples / (FRAMES + 1)
    );
    println!(
        "at most {:.1} MiB of tiles loaded; joint transforms: {} a frame on average, {:.0} µs a frame ({:.0} M/s)",
        max_loaded as f64 / (1 << 20) as f64,
        joint_samples / (FRAMES + 1),
        joint_time.as_secs_f64() * 1e6 / (FRAMES + 1) as f64,
        joint_samples as f64 / joint_time.as_secs_f64().max(1e-9) / 1e6
    );
    if failed > 0 {
        return Err(format!("{failed} tile load(s) failed (see above)"));
    }
    Ok(())
}

/// An RGB image.
struct Image {
    w: usize,
    h: usize,
    px: Vec<[u8; 3]>,
    /// World → pixel: origin and pixels per metre (y up in the world).
    origin: [f64; 2],
    scale: f64,
}

impl Image {
    fn to_px(&self, p: [f64; 2]) -> [f64; 2] {
        [(p[0] - self.origin[0]) * self.scale, self.h as f64 - (p[1] - self.origin[1]) * self.scale]
    }

    fn put(&mut self, x: i64, y: i64, c: [u8; 3]) {
        if x >= 0 && y >= 0 && (x as usize) < self.w && (y as usize) < self.h {
            self.px[y as usize * self.w + x as usize] = c;
        }
    }

    fn disc(&mut self, centre: [f64; 2], r_px: f64, c: [u8; 3]) {
        let [cx, cy] = self.to_px(centre);
        let r = r_px.max(0.5);
        for y in (cy - r).floor() as i64..=(cy + r).ceil() as i64 {
            for x in (cx - r).floor() as i64..=(cx + r).ceil() as i64 {
                let (dx, dy) = (x as f64 + 0.5 - cx, y as f64 + 0.5 - cy);
                if dx * dx + dy * dy <= r * r {
                    self.put(x, y, c);
                }
            }
        }
    }

    fn line(&mut self, a: [f64; 2], b: [f64; 2], c: [u8; 3]) {
        let (pa, pb) = (self.to_px(a), self.to_px(b));
        let n = ((pb[0] - pa[0]).abs().max((pb[1] - pa[1]).abs()).ceil() as usize).max(1);
        for k in 0..=n {
            let u = k as f64 / n as f64;
            self.put((pa[0] + (pb[0] - pa[0]) * u) as i64, (pa[1] + (pb[1] - pa[1]) * u) as i64, c);
        }
    }

    fn rect(&mut self, min: [f64; 2], max: [f64; 2], c: [u8; 3]) {
        let (a, b) = (self.to_px([min[0], max[1]]), self.to_px([max[0], min[1]]));
        for y in a[1].round() as i64..b[1].round() as i64 {
            for x in a[0].round() as i64..b[0].round() as i64 {
                self.put(x, y, c);
            }
        }
    }

    fn polygon(&mut self, vs: &[[f64; 2]], c: [u8; 3]) {
        let px: Vec<[f64; 2]> = vs.iter().map(|&v| self.to_px(v)).collect();
        let (x0, x1) = px.iter().fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p[0]), b.max(p[0])));
        let (y0, y1) = px.iter().fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p[1]), b.max(p[1])));
        for y in y0.floor() as i64..=y1.ceil() as i64 {
            for x in x0.floor() as i64..=x1.ceil() as i64 {
                let (fx, fy) = (x as f64 + 0.5, y as f64 + 0.5);
                let mut inside = false;
                for k in 0..px.len() {
                    let (a, b) = (px[k], px[(k + 1) % px.len()]);
                    if (a[1] > fy) != (b[1] > fy) && fx < a[0] + (fy - a[1]) / (b[1] - a[1]) * (b[0] - a[0]) {
                        inside = !inside;
                    }
                }
                if inside {
                    self.put(x, y, c);
                }
            }
        }
    }

    fn save(&self, path: &Path) -> Result<(), String> {
        let file = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut enc = png::Encoder::new(std::io::BufWriter::new(file), self.w as u32, self.h as u32);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header().map_err(|e| e.to_string())?;
        let data: Vec<u8> = self.px.iter().flatten().copied().collect();
        writer.write_image_data(&data).map_err(|e| e.to_string())
    }
}

/// Hue wheel colour of a heading.
fn heading_colour(h: f64) -> [u8; 3] {
    let a = h.rem_euclid(std::f64::consts::TAU) / std::f64::consts::TAU * 6.0;
    let x = 1.0 - ((a % 2.0) - 1.0).abs();
    let (r, g, b) = match a as usize {
        0 => (1.0, x, 0.0),
        1 => (x, 1.0, 0.0),
        2 => (0.0, 1.0, x),
        3 => (0.0, x, 1.0),
        4 => (x, 0.0, 1.0),
        _ => (1.0, 0.0, x),
    };
    [(r * 200.0 + 30.0) as u8, (g * 200.0 + 30.0) as u8, (b * 200.0 + 30.0) as u8]
}

/// Top-down picture of the shown cells: ground, obstacles, agents coloured
/// by heading with a facing tick, the streaming radius and the camera path.
fn draw<L: Layout>(
    s: &Streamer<L>,
    poses: &Poses,
    cells: &[([i64; 2], std::ops::Range<usize>)],
    camera: [f64; 2],
    path: impl Fn(f64) -> [f64; 2],
    png: &Path,
) -> Result<(), String> {
    let l = s.layout().size();
    let (mut min, mut max) = ([f64::MAX; 2], [f64::MIN; 2]);
    for ([i, j], _) in cells {
        min = [min[0].min(*i as f64 * l), min[1].min(*j as f64 * l)];
        max = [max[0].max((*i + 1) as f64 * l), max[1].max((*j + 1) as f64 * l)];
    }
    if cells.is_empty() {
        return Err("nothing is shown at the snapshot frame".into());
    }
    let scale = 1000.0 / (max[0] - min[0]).max(max[1] - min[1]);
    let (w, h) = (((max[0] - min[0]) * scale).ceil() as usize, ((max[1] - min[1]) * scale).ceil() as usize);
    let mut img = Image { w, h, px: vec![[40, 42, 48]; w * h], origin: min, scale };
    let shown: Vec<([i64; 2], crowdpatch_runtime::Cell)> = s.shown_cells().collect();
    for &([i, j], cell) in &shown {
        let o = [i as f64 * l, j as f64 * l];
        let shade = if (i + j) % 2 == 0 { [196, 204, 186] } else { [186, 196, 178] };
        img.rect(o, [o[0] + l, o[1] + l], shade);
        let Some(tile) = s.tile(cell.tile) else { continue };
        let place = Placement { offset: o, rotation: cell.rotation };
        for obstacle in &tile.extras().obstacles {
            match obstacle {
                Obstacle::Circle { center, radius } => {
                    img.disc(place.point(l, *center), radius * scale, [110, 112, 120]);
                }
                Obstacle::Polygon(vs) => {
                    let world: Vec<[f64; 2]> = vs.iter().map(|v| place.point(l, *v)).collect();
                    img.polygon(&world, [110, 112, 120]);
                }
            }
        }
    }
    // Cell borders.
    for &([i, j], _) in &shown {
        let o = [i as f64 * l, j as f64 * l];
        for (a, b) in [([0.0, 0.0], [l, 0.0]), ([0.0, 0.0], [0.0, l])] {
            img.line([o[0] + a[0], o[1] + a[1]], [o[0] + b[0], o[1] + b[1]], [150, 156, 146]);
        }
    }
    // Camera path and streaming radius.
    for k in 0..2000 {
        let p = path(k as f64 / 2000.0);
        if k % 4 < 2 {
            img.disc(p, 1.0, [250, 250, 250]);
        }
    }
    for k in 0..720 {
        let a = k as f64 / 720.0 * std::f64::consts::TAU;
        img.disc([camera[0] + 48.0 * a.cos(), camera[1] + 48.0 * a.sin()], 1.2, [255, 215, 0]);
    }
    img.disc(camera, 5.0, [255, 215, 0]);
    // Agents.
    let r = shown.first().and_then(|(_, c)| s.tile(c.tile)).map_or(0.3, |t| t.agent_radius());
    for k in 0..poses.len() {
        if !poses.visible[k] {
            continue;
        }
        let p = [f64::from(poses.x[k]), f64::from(poses.y[k])];
        let h = f64::from(poses.heading[k]);
        img.disc(p, r * scale, heading_colour(h));
        img.line(p, [p[0] + 2.0 * r * h.cos(), p[1] + 2.0 * r * h.sin()], [20, 20, 20]);
    }
    img.save(png)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pixels_map_world_corners_with_y_up() {
        let img = Image { w: 200, h: 100, px: vec![[0; 3]; 200 * 100], origin: [16.0, 32.0], scale: 2.0 };
        assert_eq!(img.to_px([16.0, 32.0]), [0.0, 100.0]);
        assert_eq!(img.to_px([116.0, 82.0]), [200.0, 0.0]);
    }

    #[test]
    fn headings_get_distinct_colours() {
        let colours: Vec<[u8; 3]> =
            (0..6).map(|k| heading_colour(k as f64 * std::f64::consts::FRAC_PI_3 + 0.1)).collect();
        for a in 0..6 {
            for b in a + 1..6 {
                assert_ne!(colours[a], colours[b]);
            }
        }
        assert_eq!(heading_colour(0.5), heading_colour(0.5 + std::f64::consts::TAU));
    }

    #[test]
    fn discs_and_polygons_fill_their_inside_only() {
        let mut img = Image { w: 40, h: 40, px: vec![[0; 3]; 1600], origin: [0.0, 0.0], scale: 1.0 };
        img.disc([20.0, 20.0], 5.0, [255, 0, 0]);
        let red = img.px.iter().filter(|p| p[0] == 255).count();
        assert!((70..=90).contains(&red), "{red} pixels for a disc of area 78.5");
        img.polygon(&[[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]], [0, 255, 0]);
        let green = img.px.iter().filter(|p| p[1] == 255).count();
        assert_eq!(green, 100);
    }
}
