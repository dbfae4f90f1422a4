//! Renders hand-made figures, decodes the PNG bytes and checks what is drawn.
//!
//! Set `CROWDPATCH_PNG_DIR=/some/dir` to also write the figures there for a look.

use crowdpatch_png::{
    CrossingMark, LegendPosition, Obstacle, PanelPath, PngError, ScatterChart, ScatterPanel, Series, StagePanel,
    StagesFigure, render_scatter, render_stages, stages_layout, time_colour,
};

const L: f64 = 16.0;
const PERIOD: f64 = 10.0;
const R: f64 = 0.3;
/// Centre and radius of the round obstacle `[m]`.
const POND: ([f64; 2], f64) = ([4.5, 11.5], 1.4);

/// A decoded RGB image.
struct Image {
    width: u32,
    height: u32,
    rgb: Vec<u8>,
}

impl Image {
    fn decode(bytes: &[u8]) -> Image {
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = decoder.read_info().expect("a PNG header");
        let mut rgb = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut rgb).expect("a PNG frame");
        assert_eq!(info.color_type, png::ColorType::Rgb);
        assert_eq!(info.bit_depth, png::BitDepth::Eight);
        rgb.truncate(info.buffer_size());
        Image { width: info.width, height: info.height, rgb }
    }

    /// The pixel that covers image point `p` `[px]`.
    fn at(&self, p: [f64; 2]) -> [u8; 3] {
        let (x, y) = (p[0].floor() as usize, p[1].floor() as usize);
        assert!(x < self.width as usize && y < self.height as usize, "{p:?} is off the image");
        let i = (y * self.width as usize + x) * 3;
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }

    /// How many pixels are within `tol` of `colour` on every channel.
    fn count_near(&self, colour: [u8; 3], tol: i32) -> usize {
        self.rgb
            .chunks_exact(3)
            .filter(|p| (0..3).all(|k| (i32::from(p[k]) - i32::from(colour[k])).abs() <= tol))
            .count()
    }
}

fn save(name: &str, bytes: &[u8]) {
    if let Some(dir) = std::env::var_os("CROWDPATCH_PNG_DIR") {
        let path = std::path::Path::new(&dir).join(name);
        std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("writing {path:?}: {e}"));
    }
}

fn max_channel_diff(a: [u8; 3], b: [u8; 3]) -> i32 {
    (0..3).map(|k| (i32::from(a[k]) - i32::from(b[k])).abs()).max().unwrap()
}

/// The agent pairs of a hand-made patch: entry position and time, exit
/// position and (unwrapped) time.
fn pairs() -> Vec<([f64; 2], f64, [f64; 2], f64)> {
    vec![
        ([0.0, 3.0], 0.4, [16.0, 6.5], 12.5),
        ([0.0, 8.0], 2.2, [16.0, 13.0], 14.3),
        ([2.5, 0.0], 5.1, [9.0, 16.0], 18.0),
        ([7.0, 0.0], 1.0, [3.0, 16.0], 13.6),
        ([11.0, 0.0], 8.3, [0.0, 14.5], 18.1),
        ([16.0, 2.0], 3.5, [0.0, 5.5], 15.5),
        ([16.0, 10.0], 6.7, [6.5, 0.0], 16.0),
        ([13.0, 16.0], 0.9, [12.5, 0.0], 13.0),
        ([10.5, 16.0], 4.4, [16.0, 15.0], 9.0),
        ([6.0, 16.0], 9.2, [14.5, 0.0], 21.5),
    ]
}

/// Position of a polyline at unwrapped time `t`, if inside its interval.
fn at_time(path: &[[f64; 3]], t: f64) -> Option<[f64; 2]> {
    path.windows(2).find_map(|w| {
        let (a, b) = (w[0], w[1]);
        (t >= a[2] && t <= b[2]).then(|| {
            let u = (t - a[2]) / (b[2] - a[2]);
            [a[0] + u * (b[0] - a[0]), a[1] + u * (b[1] - a[1])]
        })
    })
}

/// Positions where two agents (any periodic instances) come closer than 2r,
/// one per colliding pair, found by sampling.
fn collisions(paths: &[Vec<[f64; 3]>]) -> Vec<[f64; 2]> {
    let mut out = Vec::new();
    for i in 0..paths.len() {
        for j in i + 1..paths.len() {
            let mut best: Option<(f64, [f64; 2])> = None;
            for step in 0..2000 {
                let tau = PERIOD * f64::from(step) / 2000.0;
                for ki in 0..3 {
                    for kj in 0..3 {
                        let pi = at_time(&paths[i], tau + f64::from(ki) * PERIOD);
                        let pj = at_time(&paths[j], tau + f64::from(kj) * PERIOD);
                        if let (Some(p), Some(q)) = (pi, pj) {
                            let d = (p[0] - q[0]).hypot(p[1] - q[1]);
                            if d < 2.0 * R && best.is_none_or(|(bd, _)| d < bd) {
                                best = Some((d, [(p[0] + q[0]) / 2.0, (p[1] + q[1]) / 2.0]));
                            }
                        }
                    }
                }
            }
            out.extend(best.map(|(_, p)| p));
        }
    }
    out
}

/// Chaikin corner cutting in space-time, keeping the end points.
fn smooth(path: &[[f64; 3]], rounds: usize) -> Vec<[f64; 3]> {
    let mut p = path.to_vec();
    for _ in 0..rounds {
        let mut q = vec![p[0]];
        for w in p.windows(2) {
            let lerp = |u: f64| std::array::from_fn(|k| w[0][k] + u * (w[1][k] - w[0][k]));
            q.push(lerp(0.25));
            q.push(lerp(0.75));
        }
        q.push(p[p.len() - 1]);
        p = q;
    }
    p
}

/// A patch like the seed paper's Figure 7: straight matched paths with their
/// collisions, paths after collision removal, and smoothed paths.
fn figure7() -> StagesFigure {
    let pairs = pairs();
    let straight: Vec<Vec<[f64; 3]>> =
        pairs.iter().map(|&(a, ta, b, tb)| vec![[a[0], a[1], ta], [b[0], b[1], tb]]).collect();
    // "Collision removal": bend every path at two control points.
    let bent: Vec<Vec<[f64; 3]>> = straight
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let (a, b) = (p[0], p[1]);
            let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
            let len = dx.hypot(dy);
            let n = [-dy / len, dx / len];
            let push = if i % 2 == 0 { 0.9 } else { -0.7 };
            let ctrl = |u: f64, s: f64| [a[0] + u * dx + n[0] * s, a[1] + u * dy + n[1] * s, a[2] + u * (b[2] - a[2])];
            vec![a, ctrl(0.35, push), ctrl(0.7, -0.5 * push), b]
        })
        .collect();
    let smoothed: Vec<Vec<[f64; 3]>> = bent.iter().map(|p| smooth(p, 4)).collect();
    let crossings = pairs
        .iter()
        .flat_map(|&(a, ta, b, tb)| {
            [CrossingMark { position: a, t: ta, entry: true }, CrossingMark { position: b, t: tb, entry: false }]
        })
        .collect();
    let panel = |title: &str, paths: &[Vec<[f64; 3]>], straight: bool, hits: Vec<[f64; 2]>| StagePanel {
        title: title.into(),
        paths: paths.iter().map(|p| PanelPath { points: p.clone(), straight }).collect(),
        collisions: hits,
    };
    let straight_hits = collisions(&straight);
    let bent_hits = collisions(&bent).into_iter().take(1).collect::<Vec<_>>();
    StagesFigure {
        size: L,
        period: PERIOD,
        agent_radius: R,
        obstacles: vec![
            Obstacle::Circle { center: POND.0, radius: POND.1 },
            Obstacle::Polygon(vec![[9.5, 4.0], [12.0, 4.5], [11.5, 6.5], [9.0, 6.0]]),
            // Partly outside the patch: clipped.
            Obstacle::Polygon(vec![[14.5, 7.5], [17.0, 7.5], [17.0, 9.0], [14.5, 9.0]]),
        ],
        crossings,
        stages: vec![
            panel("(b) matched: straight paths", &straight, true, straight_hits.clone()),
            panel("(c) collisions removed", &bent, false, bent_hits),
            panel("(d) smoothed", &smoothed, false, Vec::new()),
        ],
        caption: format!(
            "patch 16 m × 16 m, period 10 s, r = 0.3 m · 10 entries, 10 exits\n\
             (b) {} colliding pairs on straight paths\n\
             (c) 1 remaining after 42 iterations   min separation 0.58 m\n\
             (d) smoothed   min separation 0.61 m   speed mean 1.29 m/s, p95 1.52 m/s   \
             max turn rate 1.8 rad/s   coverage 0.62",
            straight_hits.len()
        ),
        width_px: 1800,
    }
}

#[test]
fn stages_figure_draws_panels_obstacles_paths_and_a_cyclic_colour_bar() {
    let figure = figure7();
    let bytes = render_stages(&figure).expect("rendered");
    save("stages.png", &bytes);
    let image = Image::decode(&bytes);
    let layout = stages_layout(&figure).unwrap();
    assert_eq!(image.width, 1800);
    assert_eq!(image.height, layout.height_px);
    assert!((650..=850).contains(&image.height), "height {}", image.height);
    assert_eq!(layout.panels.len(), 3);

    for panel in 0..3 {
        // The pond's centre is obstacle grey in every panel.
        let centre = layout.patch_to_pixel(panel, POND.0).unwrap();
        let [r, g, b] = image.at(centre);
        assert!(r == g && g == b && (120..=220).contains(&r), "panel {panel}: {:?}", [r, g, b]);
        // Outside the patch, the clipped obstacle leaves the margin white.
        let outside = layout.patch_to_pixel(panel, [16.0 + 0.5, 8.2]).unwrap();
        assert_eq!(image.at([outside[0] + 8.0, outside[1]]), [255, 255, 255]);
    }

    // A known path pixel: the middle of the first smoothed path, in its time colour.
    let path = &figure.stages[2].paths[0].points;
    let mid = path[path.len() / 2];
    let pixel = image.at(layout.patch_to_pixel(2, [mid[0], mid[1]]).unwrap());
    assert_ne!(pixel, [255, 255, 255], "path pixel is background");
    let expected = time_colour(mid[2], PERIOD);
    assert!(max_channel_diff(pixel, expected) <= 40, "{pixel:?} vs {expected:?}");

    // The colour map is cyclic: colour(0) == colour(π), and the bar's ends agree.
    assert_eq!(time_colour(0.0, PERIOD), time_colour(PERIOD, PERIOD));
    let [x, y, w, h] = layout.colour_bar;
    let left = image.at([x + 3.0, y + h / 2.0]);
    let right = image.at([x + w - 3.0, y + h / 2.0]);
    let middle = image.at([x + w / 2.0, y + h / 2.0]);
    assert!(max_channel_diff(left, right) <= 12, "{left:?} vs {right:?}");
    assert!(max_channel_diff(left, middle) >= 60, "{left:?} vs {middle:?}");

    // Collisions of the straight stage are ringed in red.
    assert!(!figure.stages[0].collisions.is_empty());
    assert!(image.count_near([214, 39, 40], 10) > 50);
}

#[test]
fn stages_figure_fits_narrow_images() {
    // The narrowest width that still gives 120 px panels, and one panel.
    let mut narrow = figure7();
    narrow.width_px = 560;
    let bytes = render_stages(&narrow).unwrap();
    save("stages-narrow.png", &bytes);
    assert_eq!(Image::decode(&bytes).width, 560);
    let mut single = figure7();
    single.stages.truncate(1);
    single.width_px = 700;
    let bytes = render_stages(&single).unwrap();
    save("stages-single.png", &bytes);
    let image = Image::decode(&bytes);
    assert_eq!(image.height, stages_layout(&single).unwrap().height_px);
}

#[test]
fn stages_figure_is_deterministic() {
    let figure = figure7();
    assert_eq!(render_stages(&figure).unwrap(), render_stages(&figure).unwrap());
}

#[test]
fn stages_figure_rejects_bad_parameters() {
    let ok = figure7();
    let with = |f: &dyn Fn(&mut StagesFigure)| {
        let mut fig = ok.clone();
        f(&mut fig);
        render_stages(&fig)
    };
    assert!(matches!(with(&|f| f.size = 0.0), Err(PngError::InvalidSize { .. })));
    assert!(matches!(with(&|f| f.size = f64::NAN), Err(PngError::InvalidSize { .. })));
    assert!(matches!(with(&|f| f.period = -1.0), Err(PngError::InvalidPeriod { .. })));
    assert!(matches!(with(&|f| f.agent_radius = f64::INFINITY), Err(PngError::InvalidAgentRadius { .. })));
    assert!(matches!(with(&|f| f.stages.clear()), Err(PngError::NoPanels { .. })));
    assert!(matches!(with(&|f| f.width_px = 300), Err(PngError::ImageTooSmall { .. })));
    assert!(matches!(with(&|f| f.width_px = 0), Err(PngError::ImageTooSmall { .. })));
    assert!(matches!(with(&|f| f.width_px = 100_000), Err(PngError::ImageTooLarge { .. })));
    let message = with(&|f| f.size = 0.0).unwrap_err().to_string();
    assert!(message.contains("patch size 0 m"), "{message}");
}

#[test]
fn stages_figure_tolerates_empty_and_non_finite_data() {
    // One empty panel, no caption: a valid, nearly empty figure.
    let empty = StagesFigure { stages: vec![StagePanel::default()], width_px: 600, ..StagesFigure::default() };
    let bytes = render_stages(&empty).unwrap();
    save("stages-empty.png", &bytes);
    let image = Image::decode(&bytes);
    assert_eq!(image.width, 600);

    // NaN and infinite coordinates, one-point paths, paths leaving the patch.
    let nan = f64::NAN;
    let messy = StagesFigure {
        obstacles: vec![
            Obstacle::Circle { center: [nan, 1.0], radius: 1.0 },
            Obstacle::Polygon(vec![[1.0, 1.0], [nan, 2.0], [2.0, 2.0]]),
            Obstacle::Polygon(vec![[1.0, 1.0]]),
            Obstacle::Circle { center: [3.0, 3.0], radius: -1.0 },
        ],
        crossings: vec![CrossingMark { position: [nan, 0.0], t: nan, entry: true }],
        stages: vec![StagePanel {
            title: String::new(),
            paths: vec![
                PanelPath {
                    points: vec![[1.0, 1.0, 0.0], [nan, 2.0, 1.0], [3.0, 3.0, 2.0], [4.0, 4.0, 3.0]],
                    straight: false,
                },
                PanelPath { points: vec![[1.0, 1.0, 0.0]], straight: true },
                PanelPath { points: vec![[-50.0, 8.0, 0.0], [60.0, 8.0, 1e6]], straight: false },
                PanelPath::default(),
            ],
            collisions: vec![[nan, nan], [1e300, 0.0]],
        }],
        caption: "x".repeat(2000),
        width_px: 500,
        ..StagesFigure::default()
    };
    let bytes = render_stages(&messy).unwrap();
    save("stages-messy.png", &bytes);
    let image = Image::decode(&bytes);
    assert_eq!(image.width, 500);
}

#[test]
fn extreme_numbers_neither_panic_nor_hang() {
    for size in [1e-300, 1e300, f64::MAX] {
        let figure = StagesFigure {
            size,
            period: f64::MAX,
            agent_radius: f64::MAX,
            crossings: vec![CrossingMark { position: [size, size / 2.0], t: f64::MAX, entry: true }],
            stages: vec![StagePanel {
                title: "extreme".into(),
                paths: vec![PanelPath { points: vec![[0.0, 0.0, -f64::MAX], [size, size, f64::MAX]], straight: false }],
                collisions: vec![[size / 2.0, size / 2.0]],
            }],
            width_px: 400,
            ..StagesFigure::default()
        };
        let image = Image::decode(&render_stages(&figure).unwrap());
        assert_eq!(image.width, 400);
    }
    let chart = ScatterChart {
        panels: vec![ScatterPanel {
            series: vec![Series {
                name: "extreme".into(),
                colour: [0, 0, 0],
                points: vec![[-f64::MAX, f64::MAX], [f64::MAX, -f64::MAX], [1e-300, 1e300]],
            }],
            ..ScatterPanel::default()
        }],
        width_px: 400,
        height_px: 300,
        ..ScatterChart::default()
    };
    render_scatter(&chart).unwrap();
    let log = ScatterChart {
        panels: vec![ScatterPanel { x_log: true, y_log: true, ..chart.panels[0].clone() }],
        ..chart.clone()
    };
    render_scatter(&log).unwrap();
}

/// Data shaped like the seed paper's Figure 6, for two solvers.
fn figure6() -> ScatterChart {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut uniform = move || {
        // xorshift64*: deterministic noise for the fixture.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut series = Vec::new();
    let mut timing = Vec::new();
    for (name, colour, growth, cost) in
        [("Algorithm 2 (paper)", [31, 119, 180], 0.085, 2.0e-4), ("optimal assignment", [255, 127, 14], 0.07, 3.5e-4)]
    {
        let mut its = Vec::new();
        let mut time = Vec::new();
        for n in 1..=50 {
            for _ in 0..20 {
                let it = (2.0 * f64::from(n) * (growth * f64::from(n) * (0.5 + uniform())).exp()).min(2000.0).round();
                its.push([f64::from(2 * n), it]);
                time.push([it, cost * it * (0.7 + 0.6 * uniform())]);
            }
        }
        series.push(Series { name: name.into(), colour, points: its });
        timing.push(Series { name: name.into(), colour, points: time });
    }
    ScatterChart {
        panels: vec![
            ScatterPanel {
                title: "(a) iterations to converge".into(),
                x_label: "boundary points (entries + exits)".into(),
                y_label: "iterations".into(),
                x_log: false,
                y_log: true,
                series,
                legend: LegendPosition::TopLeft,
            },
            ScatterPanel {
                title: "(b) time against iterations".into(),
                x_label: "iterations".into(),
                y_label: "wall time [s]".into(),
                x_log: true,
                y_log: true,
                series: timing,
                legend: LegendPosition::BottomRight,
            },
        ],
        width_px: 1600,
        height_px: 640,
        ..ScatterChart::default()
    }
}

#[test]
fn scatter_chart_draws_both_series() {
    let chart = figure6();
    let bytes = render_scatter(&chart).unwrap();
    save("scatter.png", &bytes);
    let image = Image::decode(&bytes);
    assert_eq!((image.width, image.height), (1600, 640));
    // Legend markers are opaque discs in the series colours; the dots blend.
    for colour in [[31, 119, 180], [255, 127, 14]] {
        assert!(image.count_near(colour, 6) > 60, "{colour:?} barely drawn");
    }
    assert_eq!(render_scatter(&chart).unwrap(), bytes, "deterministic");
}

#[test]
fn scatter_chart_skips_bad_points_and_draws_empty_panels() {
    let chart = ScatterChart {
        panels: vec![
            ScatterPanel {
                title: "log axes with bad points".into(),
                x_label: "x".into(),
                y_label: "y".into(),
                x_log: true,
                y_log: true,
                series: vec![Series {
                    name: "s".into(),
                    colour: [200, 0, 0],
                    points: vec![[0.0, 1.0], [-1.0, 5.0], [f64::NAN, 2.0], [3.0, f64::INFINITY]],
                }],
                legend: LegendPosition::Hidden,
            },
            ScatterPanel::default(),
        ],
        width_px: 800,
        height_px: 400,
        point_radius_px: f64::NAN,
        point_opacity: 7.0,
    };
    let bytes = render_scatter(&chart).unwrap();
    save("scatter-empty.png", &bytes);
    let image = Image::decode(&bytes);
    assert_eq!((image.width, image.height), (800, 400));
    assert_eq!(image.count_near([200, 0, 0], 20), 0, "no drawable point");

    assert!(matches!(render_scatter(&ScatterChart::default()), Err(PngError::NoPanels { .. })));
    let tiny = ScatterChart { width_px: 100, ..chart.clone() };
    assert!(matches!(render_scatter(&tiny), Err(PngError::ImageTooSmall { .. })));
}
