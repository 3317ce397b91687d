//! SVG trade-off plots (plotters, SVG backend): one curve per series, mean with its 95 % band
//! (Student's t, [`crate::stats::half_width`]),
//! optionally with lower envelopes ([`Envelope`], Xian et al., Figs. 3–4) and the papers' reference
//! lines ([`RefLine`]); the legend sits in its own panel beside the plot.

use crate::aggregate::Summary;
use crate::error::{ExpError, Result};
use crate::paper::{Axis, Envelope, PlotSpec, RefLine, Series};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One point of a curve: x, mean of y, half-width of y's 95% interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub band: f64,
}

/// A named curve.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Curve {
    pub label: String,
    pub points: Vec<Point>,
    /// Per-point notes (empty: none; else one per point): a short text beside the point and
    /// a flag that changes its marker.
    pub notes: Vec<Note>,
    /// Per-point error bars (empty: none; else one per point), drawn in both directions.
    pub bars: Vec<Bars>,
}

/// A point's intervals in x and in y ([`Curve::bars`]), e.g. a private figure's
/// (docs/evaluation.md): `[lower, upper]` each.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bars {
    pub x: [f64; 2],
    pub y: [f64; 2],
}

/// A point's note ([`Curve::notes`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Note {
    /// Written beside the point (e.g. "ε = 1").
    pub text: String,
    pub flag: Flag,
}

/// What a point's marker says beyond its series.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Flag {
    /// A filled dot.
    #[default]
    Plain,
    /// The model is a constant (the held-out check replaced it): a hollow square.
    Constant,
    /// The fairness target was missed: a cross over the dot.
    Missed,
}

/// The Okabe–Ito palette (colour-blind safe), black last; series past it repeat its colours
/// with a dashed line ([`series_style`]).
const OKABE_ITO: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(213, 94, 0),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(240, 228, 66),
    RGBColor(0, 0, 0),
];

/// Series `i`'s colour and whether its line is dashed (the second round of the palette).
fn series_style(i: usize) -> (RGBColor, bool) {
    (OKABE_ITO[i % OKABE_ITO.len()], i / OKABE_ITO.len() % 2 == 1)
}

/// The curves of `spec` from the aggregated rows (points sorted by x; settings whose x is not
/// finite — e.g. ε = ∞ — are left out; with `log_x`, x is log10 x and x ≤ 0 is left out). Lower
/// envelopes are taken on the linear scale (mixing two settings is linear in x), then logged.
pub fn curves(spec: &PlotSpec, rows: &[Summary]) -> Vec<Curve> {
    let mut cs = linear_curves(spec, rows);
    if spec.log_x {
        cs.iter_mut().for_each(log_x);
    }
    cs
}

/// x ↦ log10 x, dropping points with x ≤ 0.
fn log_x(c: &mut Curve) {
    c.points.retain(|p| p.x > 0.0);
    c.points.iter_mut().for_each(|p| p.x = p.x.log10());
}

/// [`curves`] on the linear x scale.
fn linear_curves(spec: &PlotSpec, rows: &[Summary]) -> Vec<Curve> {
    // Group rows by setting (key without experiment).
    let mut by_setting: BTreeMap<String, Vec<&Summary>> = BTreeMap::new();
    for r in rows {
        if !selected(spec, &r.setting) {
            continue;
        }
        by_setting.entry(r.setting.key("")).or_default().push(r);
    }
    let mut curves: BTreeMap<String, Vec<(Point, &crate::grid::Setting)>> = BTreeMap::new();
    for group in by_setting.values() {
        let s = &group[0].setting;
        let Some(y) = group.iter().find(|r| r.metric == spec.y) else {
            continue;
        };
        let x = match &spec.x {
            Axis::Epsilon => Some(s.epsilon),
            Axis::FairnessLevel => s.fairness_level,
            Axis::Param(p) => s.params.get_str(p).and_then(|v| v.parse().ok()),
            Axis::Metric(m) => group.iter().find(|r| r.metric == *m).map(|r| r.mean),
        };
        let Some(x) = x.filter(|x| x.is_finite()) else {
            continue;
        };
        let by_param = spec
            .series_param
            .as_ref()
            .map(|p| match s.params.get_str(p) {
                // Series by method: the parameter beside the method's name.
                Some(v) if spec.series == Series::Epsilon => format!("{p} = {v}"),
                Some(v) => format!("{}, {p} = {v}", s.method),
                None => s.method.clone(),
            });
        let label = match spec.series {
            _ if by_param.is_some() => by_param.unwrap_or_default(),
            Series::Method => s.method.clone(),
            Series::Epsilon => format!("ε = {}", crate::present::setting(s.epsilon)),
            Series::MethodAndEpsilon => {
                format!("{}, ε = {}", s.method, crate::present::setting(s.epsilon))
            }
        };
        let point = Point {
            x,
            y: y.mean,
            band: if y.ci95.is_finite() { y.ci95 } else { 0.0 },
        };
        curves.entry(label).or_default().push((point, s));
    }
    // One series per (method, mode, parameter): a curve whose settings differ in method or
    // accounting mode is always split (two modes are never one line, even where their x values
    // do not meet), and a curve that holds two settings at one x is split by whatever else
    // differs (a parameter); the label says what differs.
    let mut split: BTreeMap<String, Vec<Point>> = BTreeMap::new();
    for (label, members) in curves {
        let mut xs: Vec<f64> = members.iter().map(|(p, _)| p.x).collect();
        xs.sort_by(f64::total_cmp);
        let collides = xs.windows(2).any(|w| w[0] == w[1]);
        let settings: Vec<&crate::grid::Setting> = members.iter().map(|(_, s)| *s).collect();
        let dims: Vec<Dim> = if spec.envelope == Envelope::PerSeries {
            // An envelope is taken over everything of its series (Fig. 4 of Xian et al.).
            Vec::new()
        } else if collides {
            distinguishing(&settings, spec)
        } else {
            distinguishing(&settings, spec)
                .into_iter()
                .filter(|d| matches!(d, Dim::Method | Dim::Accounting))
                .collect()
        };
        if dims.is_empty() {
            split
                .entry(label)
                .or_default()
                .extend(members.iter().map(|(p, _)| *p));
            continue;
        }
        for (p, s) in &members {
            let extra: Vec<String> = dims.iter().map(|d| d.describe(s)).collect();
            let name = if extra.is_empty() {
                label.clone()
            } else {
                format!("{label} ({})", extra.join(", "))
            };
            split.entry(name).or_default().push(*p);
        }
    }
    let mut out: Vec<Curve> = split
        .into_iter()
        .map(|(label, mut points)| {
            points.sort_by(|a, b| a.x.total_cmp(&b.x));
            if spec.envelope == Envelope::PerSeries {
                points = lower_envelope(&points);
            }
            Curve {
                label,
                points,
                notes: Vec::new(),
                bars: Vec::new(),
            }
        })
        .collect();
    out.sort_by(|a, b| natural_order(&a.label, &b.label));
    out
}

/// Labels in natural order: runs of digits compare as numbers (`k = 2` before `k = 16`).
fn natural_order(a: &str, b: &str) -> std::cmp::Ordering {
    fn parts(s: &str) -> Vec<(bool, String)> {
        let mut out: Vec<(bool, String)> = Vec::new();
        for c in s.chars() {
            let digit = c.is_ascii_digit() || (c == '.' && out.last().is_some_and(|p| p.0));
            match out.last_mut() {
                Some((d, text)) if *d == digit => text.push(c),
                _ => out.push((digit, c.to_string())),
            }
        }
        out
    }
    let (pa, pb) = (parts(a), parts(b));
    for (x, y) in pa.iter().zip(&pb) {
        let ord = match (x, y) {
            ((true, u), (true, v)) => {
                let (u, v) = (u.parse::<f64>(), v.parse::<f64>());
                match (u, v) {
                    (Ok(u), Ok(v)) => u.total_cmp(&v),
                    _ => x.1.cmp(&y.1),
                }
            }
            _ => x.1.cmp(&y.1),
        };
        if ord != std::cmp::Ordering::Equal {
            return ord;
        }
    }
    pa.len().cmp(&pb.len())
}

/// Something settings of one curve can differ in.
enum Dim {
    Method,
    Accounting,
    Epsilon,
    Param(String),
}

impl Dim {
    fn describe(&self, s: &crate::grid::Setting) -> String {
        match self {
            Dim::Method => s.method.clone(),
            Dim::Accounting => s.accounting.clone(),
            Dim::Epsilon => format!("ε = {}", crate::present::setting(s.epsilon)),
            Dim::Param(p) => format!("{p} = {}", s.params.get_str(p).unwrap_or("-")),
        }
    }
}

/// The dimensions in which `settings` differ, other than the plot's x axis.
fn distinguishing(settings: &[&crate::grid::Setting], spec: &PlotSpec) -> Vec<Dim> {
    let varies = |f: &dyn Fn(&crate::grid::Setting) -> String| {
        let first = f(settings[0]);
        settings.iter().any(|s| f(s) != first)
    };
    let mut dims = Vec::new();
    if varies(&|s| s.method.clone()) {
        dims.push(Dim::Method);
    }
    if varies(&|s| s.accounting.clone()) {
        dims.push(Dim::Accounting);
    }
    if spec.x != Axis::Epsilon && varies(&|s| crate::present::setting(s.epsilon)) {
        dims.push(Dim::Epsilon);
    }
    let mut keys: Vec<String> = settings
        .iter()
        .flat_map(|s| {
            s.params
                .to_string()
                .split(';')
                .filter_map(|kv| kv.split_once('=').map(|(k, _)| k.to_string()))
                .collect::<Vec<_>>()
        })
        .collect();
    keys.sort();
    keys.dedup();
    // A `mode` parameter repeats the accounting mode where both are recorded.
    let mode_is_accounting = settings
        .iter()
        .all(|s| s.params.get_str("mode").is_none_or(|m| m == s.accounting));
    for k in keys {
        let on_x = matches!(&spec.x, Axis::Param(p) if *p == k);
        let repeats_mode = k == "mode" && mode_is_accounting;
        if !on_x && !repeats_mode && varies(&|s| s.params.get_str(&k).unwrap_or("").to_string()) {
            dims.push(Dim::Param(k));
        }
    }
    dims
}

/// Whether `spec`'s filters (data set, methods, ε, parameters kept and left out) keep a row of
/// setting `s`.
fn selected(spec: &PlotSpec, s: &crate::grid::Setting) -> bool {
    use crate::report::close;
    spec.dataset.as_ref().is_none_or(|d| *d == s.dataset)
        && spec
            .methods
            .as_ref()
            .is_none_or(|ms| ms.contains(&s.method))
        && spec.epsilon.is_none_or(|e| close(e, s.epsilon))
        && spec
            .param_filter
            .iter()
            .all(|(name, value)| s.params.get_str(name) == Some(value.as_str()))
        && !spec
            .param_exclude
            .iter()
            .any(|(name, value)| s.params.get_str(name) == Some(value.as_str()))
}

/// The lower convex hull of `points` from the smallest x to the largest (Andrew's monotone
/// chain): the trade-off frontier reachable by mixing two settings (Xian et al., Figs. 3–4; the lower
/// envelope of Figs. 3–4). Of points sharing an x only the lowest counts; non-finite points are
/// ignored. The vertices keep their bands.
pub fn lower_envelope(points: &[Point]) -> Vec<Point> {
    let mut sorted: Vec<Point> = points
        .iter()
        .copied()
        .filter(|p| p.x.is_finite() && p.y.is_finite())
        .collect();
    sorted.sort_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)));
    sorted.dedup_by(|later, first| later.x == first.x);
    // z-component of (a − o) × (b − o): > 0 for a counter-clockwise turn o → a → b.
    let cross =
        |o: &Point, a: &Point, b: &Point| (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
    let mut hull: Vec<Point> = Vec::with_capacity(sorted.len());
    for p in sorted {
        while hull.len() >= 2 && cross(&hull[hull.len() - 2], &hull[hull.len() - 1], &p) <= 0.0 {
            hull.pop();
        }
        hull.push(p);
    }
    hull
}

fn axis_name(spec: &PlotSpec) -> String {
    let base = match &spec.x {
        Axis::Epsilon => "ε".to_string(),
        Axis::FairnessLevel => "fairness level".to_string(),
        Axis::Param(p) => p.clone(),
        Axis::Metric(m) => m.clone(),
    };
    if spec.log_x {
        format!("log10 {base}")
    } else {
        base
    }
}

/// Draw `curves` into an SVG file. `lines`: join the points and shade mean ± 95% half-width
/// (else a scatter plot with error bars).
pub fn draw(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    curves: &[Curve],
    lines: bool,
) -> Result<()> {
    draw_figure(
        path,
        &Figure {
            title,
            x_label,
            y_label,
            curves,
            lines,
            envelope: None,
            references: &[],
            vertical: None,
        },
    )
}

/// Everything one SVG shows.
pub struct Figure<'a> {
    pub title: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub curves: &'a [Curve],
    /// Join points and shade bands (else scatter with error bars).
    pub lines: bool,
    /// A lower envelope, thick black.
    pub envelope: Option<&'a Curve>,
    /// The paper's reference lines as polylines, dashed grey.
    pub references: &'a [Curve],
    /// A vertical line at x with its legend label (e.g. the fairness target), dotted red.
    pub vertical: Option<(f64, &'a str)>,
}

/// Width of the legend panel to the right of the plot area (the legend never covers data).
const LEGEND_WIDTH: u32 = 320;
const PLOT_WIDTH: u32 = 760;
const LEGEND_LINE: u32 = 17;

/// Draw `fig` into an SVG file: the plot on the left, the legend in its own panel on the right.
/// The file is written atomically: an interrupted run leaves any previous plot intact.
pub fn draw_figure(path: &Path, fig: &Figure) -> Result<()> {
    let err = |reason: String| ExpError::Plot {
        file: path.display().to_string(),
        reason,
    };
    let mut svg = String::new();
    render(fig, &mut svg).map_err(err)?;
    dpfair_data::output::write_atomic(path, svg.as_bytes()).map_err(|e| err(e.to_string()))
}

/// How far a band may stretch the y axis beyond its mean: the span of the plotted means (∞
/// when they are all equal). The bands are Student-t 95 % intervals (`docs/reproductions.md`),
/// ±12.7·sd/√2 at 2 repetitions: uncapped, one wide band would flatten every curve; a longer
/// band runs to the plot's edge.
fn band_reach(means: impl Iterator<Item = f64>) -> f64 {
    let (lo, hi) = means
        .filter(|y| y.is_finite())
        .fold((f64::MAX, f64::MIN), |(lo, hi), y| (lo.min(y), hi.max(y)));
    if hi > lo { hi - lo } else { f64::INFINITY }
}

/// [`draw_figure`]'s drawing, into `svg`.
fn render(fig: &Figure, svg: &mut String) -> std::result::Result<(), String> {
    let err = |e: String| e;
    let pts = || fig.curves.iter().flat_map(|c| c.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    let reach = band_reach(pts().map(|p| p.y));
    for p in pts() {
        x0 = x0.min(p.x);
        x1 = x1.max(p.x);
        y0 = y0.min(p.y - p.band.min(reach));
        y1 = y1.max(p.y + p.band.min(reach));
    }
    for b in fig.curves.iter().flat_map(|c| c.bars.iter()) {
        x0 = x0.min(b.x[0]);
        x1 = x1.max(b.x[1]);
        y0 = y0.min(b.y[0]);
        y1 = y1.max(b.y[1]);
    }
    if x0 > x1 {
        (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
    }
    if let Some((x, _)) = fig.vertical.filter(|(x, _)| x.is_finite()) {
        x0 = x0.min(x);
        x1 = x1.max(x);
    }
    for p in fig.references.iter().flat_map(|c| c.points.iter()) {
        if p.x >= x0 && p.x <= x1 && p.y.is_finite() {
            y0 = y0.min(p.y);
            y1 = y1.max(p.y);
        }
    }
    let pad = |lo: f64, hi: f64| {
        let w = if hi > lo { hi - lo } else { lo.abs().max(1.0) };
        (lo - 0.05 * w, hi + 0.05 * w)
    };
    let (x0, x1) = pad(x0, x1);
    let (y0, y1) = pad(y0, y1);
    let flagged = |flag: Flag| {
        fig.curves
            .iter()
            .any(|c| c.notes.iter().any(|n| n.flag == flag))
    };
    let entries = fig.curves.len()
        + fig.references.len()
        + usize::from(fig.envelope.is_some())
        + usize::from(fig.vertical.is_some())
        + [Flag::Constant, Flag::Missed]
            .iter()
            .filter(|&&f| flagged(f))
            .map(|&f| 1 + flagged_points(fig.curves, f).len())
            .sum::<usize>();
    let height = 560.max(80 + LEGEND_LINE * entries as u32);
    let root =
        SVGBackend::with_string(svg, (PLOT_WIDTH + LEGEND_WIDTH, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let root = root
        .titled(fig.title, ("sans-serif", 18))
        .map_err(|e| err(e.to_string()))?;
    let (plot_area, legend_area) = root.split_horizontally(PLOT_WIDTH);
    let mut chart = ChartBuilder::on(&plot_area)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(|e| err(e.to_string()))?;
    chart
        .configure_mesh()
        .x_desc(fig.x_label)
        .y_desc(fig.y_label)
        .draw()
        .map_err(|e| err(e.to_string()))?;
    let grey = RGBColor(110, 110, 110);
    for (i, r) in fig.references.iter().enumerate() {
        let (dash, gap) = reference_dash(i);
        chart
            .draw_series(DashedLineSeries::new(
                r.points
                    .iter()
                    .filter(|p| p.x >= x0 && p.x <= x1 && p.y >= y0 && p.y <= y1)
                    .map(|p| (p.x, p.y)),
                dash,
                gap,
                grey.stroke_width(2),
            ))
            .map_err(|e| err(e.to_string()))?;
    }
    if let Some((x, _)) = fig.vertical.filter(|(x, _)| x.is_finite()) {
        chart
            .draw_series(DashedLineSeries::new(
                [(x, y0), (x, y1)],
                3,
                4,
                TARGET_RED.stroke_width(2),
            ))
            .map_err(|e| err(e.to_string()))?;
    }
    for (i, c) in fig.curves.iter().enumerate() {
        let (color, dashed) = series_style(i);
        let color = color.to_rgba();
        // Bands cut at the plot's edge (see `band_reach`).
        let top = |p: &Point| (p.y + p.band).min(y1);
        let bottom = |p: &Point| (p.y - p.band).max(y0);
        if c.points.iter().any(|p| p.band > 0.0) && c.points.len() > 1 && fig.lines {
            let mut poly: Vec<(f64, f64)> = c.points.iter().map(|p| (p.x, top(p))).collect();
            poly.extend(c.points.iter().rev().map(|p| (p.x, bottom(p))));
            chart
                .draw_series(std::iter::once(Polygon::new(
                    poly,
                    color.mix(0.18).filled(),
                )))
                .map_err(|e| err(e.to_string()))?;
        }
        if fig.lines && dashed {
            chart
                .draw_series(DashedLineSeries::new(
                    c.points.iter().map(|p| (p.x, p.y)),
                    8,
                    4,
                    color.stroke_width(2),
                ))
                .map_err(|e| err(e.to_string()))?;
        } else if fig.lines {
            chart
                .draw_series(LineSeries::new(
                    c.points.iter().map(|p| (p.x, p.y)),
                    color.stroke_width(2),
                ))
                .map_err(|e| err(e.to_string()))?;
        }
        for (k, p) in c.points.iter().enumerate() {
            let note = c.notes.get(k);
            let at = (p.x, p.y);
            match note.map_or(Flag::Plain, |n| n.flag) {
                Flag::Plain => {
                    chart.draw_series(std::iter::once(Circle::new(at, 4, color.filled())))
                }
                Flag::Constant => chart.draw_series(std::iter::once(
                    EmptyElement::at(at)
                        + Rectangle::new([(-6, -6), (6, 6)], color.stroke_width(2)),
                )),
                Flag::Missed => chart.draw_series(std::iter::once(
                    EmptyElement::at(at)
                        + Circle::new((0, 0), 4, color.filled())
                        + PathElement::new(vec![(-7, -7), (7, 7)], TARGET_RED.stroke_width(2))
                        + PathElement::new(vec![(-7, 7), (7, -7)], TARGET_RED.stroke_width(2)),
                )),
            }
            .map_err(|e| err(e.to_string()))?;
            // Constants share one point: they are listed in the legend instead.
            if let Some(n) = note.filter(|n| !n.text.is_empty() && n.flag != Flag::Constant) {
                chart
                    .draw_series(std::iter::once(
                        EmptyElement::at(at)
                            + Text::new(n.text.clone(), (8, -14), ("sans-serif", 11).into_font()),
                    ))
                    .map_err(|e| err(e.to_string()))?;
            }
        }
        // Intervals as thin error bars with short caps, in both directions.
        for (p, b) in c.points.iter().zip(&c.bars) {
            let (cap_x, cap_y) = ((x1 - x0) / 150.0, (y1 - y0) / 150.0);
            let segments = [
                vec![(b.x[0], p.y), (b.x[1], p.y)],
                vec![(p.x, b.y[0]), (p.x, b.y[1])],
                vec![(b.x[0], p.y - cap_y), (b.x[0], p.y + cap_y)],
                vec![(b.x[1], p.y - cap_y), (b.x[1], p.y + cap_y)],
                vec![(p.x - cap_x, b.y[0]), (p.x + cap_x, b.y[0])],
                vec![(p.x - cap_x, b.y[1]), (p.x + cap_x, b.y[1])],
            ];
            chart
                .draw_series(
                    segments
                        .into_iter()
                        .map(|s| PathElement::new(s, color.stroke_width(1))),
                )
                .map_err(|e| err(e.to_string()))?;
        }
        if !fig.lines {
            // Error bars for scatter plots.
            chart
                .draw_series(
                    c.points
                        .iter()
                        .filter(|p| p.band > 0.0)
                        .map(|p| PathElement::new(vec![(p.x, bottom(p)), (p.x, top(p))], color)),
                )
                .map_err(|e| err(e.to_string()))?;
        }
    }
    if let Some(env) = fig.envelope {
        chart
            .draw_series(LineSeries::new(
                env.points.iter().map(|p| (p.x, p.y)),
                BLACK.stroke_width(3),
            ))
            .map_err(|e| err(e.to_string()))?;
    }
    // The legend, in its own panel.
    let mut y = 20i32;
    for (i, c) in fig.curves.iter().enumerate() {
        legend_entry(&legend_area, y, Marker::Series(i), &c.label).map_err(err)?;
        y += LEGEND_LINE as i32;
    }
    if let Some(env) = fig.envelope {
        legend_entry(&legend_area, y, Marker::Envelope, &env.label).map_err(err)?;
        y += LEGEND_LINE as i32;
    }
    for (i, r) in fig.references.iter().enumerate() {
        legend_entry(&legend_area, y, Marker::Reference(i), &r.label).map_err(err)?;
        y += LEGEND_LINE as i32;
    }
    if let Some((_, label)) = fig.vertical {
        legend_entry(&legend_area, y, Marker::Vertical, label).map_err(err)?;
        y += LEGEND_LINE as i32;
    }
    for (flag, what) in [
        (
            Flag::Constant,
            "a constant model (the held-out check replaced it):",
        ),
        (Flag::Missed, "fairness target missed:"),
    ] {
        if !flagged(flag) {
            continue;
        }
        legend_entry(&legend_area, y, Marker::Flag(flag), what).map_err(err)?;
        y += LEGEND_LINE as i32;
        for line in flagged_points(fig.curves, flag) {
            legend_text(&legend_area, y, &line).map_err(err)?;
            y += LEGEND_LINE as i32;
        }
    }
    root.present().map_err(|e| err(e.to_string()))?;
    Ok(())
}

/// One legend line per series with points flagged `flag`: the series and its points' notes
/// (e.g. "lpct: ε = 1, ε = 4").
fn flagged_points(curves: &[Curve], flag: Flag) -> Vec<String> {
    curves
        .iter()
        .filter_map(|c| {
            let texts: Vec<&str> = c
                .notes
                .iter()
                .filter(|n| n.flag == flag)
                .map(|n| n.text.as_str())
                .collect();
            (!texts.is_empty()).then(|| {
                let which = texts.join(", ");
                if which.is_empty() {
                    c.label.clone()
                } else {
                    format!("{}: {which}", c.label)
                }
            })
        })
        .collect()
}

/// An indented legend line of text only, at height `y`.
fn legend_text(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    y: i32,
    text: &str,
) -> std::result::Result<(), String> {
    area.draw(&Text::new(
        text.to_string(),
        (44, y - 7),
        ("sans-serif", 12).into_font(),
    ))
    .map_err(|e| e.to_string())
}

/// What a legend entry shows before its label.
enum Marker {
    /// Series `i`'s colour: a line with a dot.
    Series(usize),
    /// The lower envelope: thick black.
    Envelope,
    /// Reference line `i`: dashed grey, in its own dash pattern ([`reference_dash`]).
    Reference(usize),
    /// The vertical line ([`Figure::vertical`]): dotted red.
    Vertical,
    /// A point flag's marker, in grey.
    Flag(Flag),
}

/// The colour of the fairness target's line and of the "missed" cross.
const TARGET_RED: RGBColor = RGBColor(200, 30, 30);

/// The dash and gap lengths (pixels) of reference line `i`: two lines on one plot (y = α and
/// y = α + ρ* in Fig. 8) are told apart by their dashes.
fn reference_dash(i: usize) -> (u32, u32) {
    [(6, 5), (2, 3), (14, 4)][i % 3]
}

/// One legend line at height `y` of the legend panel.
fn legend_entry(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    y: i32,
    marker: Marker,
    label: &str,
) -> std::result::Result<(), String> {
    let e = |e: DrawingAreaErrorKind<std::io::Error>| e.to_string();
    let line = vec![(6, y), (26, y)];
    match marker {
        Marker::Series(i) => {
            let (color, dashed) = series_style(i);
            if dashed {
                area.draw(&DashedPathElement::new(line, 8, 4, color.stroke_width(2)))
                    .map_err(e)?;
            } else {
                area.draw(&PathElement::new(line, color.stroke_width(2)))
                    .map_err(e)?;
            }
            area.draw(&Circle::new((16, y), 4, color.filled()))
                .map_err(e)?;
        }
        Marker::Vertical => area
            .draw(&DashedPathElement::new(
                vec![(16, y - 7), (16, y + 7)],
                3,
                4,
                TARGET_RED.stroke_width(2),
            ))
            .map_err(e)?,
        Marker::Flag(Flag::Constant) => area
            .draw(&Rectangle::new(
                [(10, y - 6), (22, y + 6)],
                RGBColor(110, 110, 110).stroke_width(2),
            ))
            .map_err(e)?,
        Marker::Flag(Flag::Missed | Flag::Plain) => {
            area.draw(&PathElement::new(
                vec![(9, y - 7), (23, y + 7)],
                TARGET_RED.stroke_width(2),
            ))
            .map_err(e)?;
            area.draw(&PathElement::new(
                vec![(9, y + 7), (23, y - 7)],
                TARGET_RED.stroke_width(2),
            ))
            .map_err(e)?;
        }
        Marker::Envelope => area
            .draw(&PathElement::new(line, BLACK.stroke_width(3)))
            .map_err(e)?,
        Marker::Reference(i) => {
            let (dash, gap) = reference_dash(i);
            area.draw(&DashedPathElement::new(
                line,
                dash,
                gap,
                RGBColor(110, 110, 110).stroke_width(2),
            ))
            .map_err(e)?
        }
    }
    area.draw(&Text::new(
        label.to_string(),
        (34, y - 7),
        ("sans-serif", 13).into_font(),
    ))
    .map_err(e)
}

/// A reference line as a polyline over `[x0, x1]` (linear scale; 64 segments, so that it stays
/// straight or follows its points after a logarithmic x axis).
fn reference_polyline(line: &RefLine, x0: f64, x1: f64) -> Curve {
    let points = match line {
        RefLine::Linear {
            intercept, slope, ..
        } => (0..=64)
            .map(|i| {
                let x = x0 + (x1 - x0) * f64::from(i) / 64.0;
                Point {
                    x,
                    y: intercept + slope * x,
                    band: 0.0,
                }
            })
            .collect(),
        RefLine::Points { points, .. } => points
            .iter()
            .filter(|(x, _)| *x >= x0 && *x <= x1)
            .map(|&(x, y)| Point { x, y, band: 0.0 })
            .collect(),
    };
    Curve {
        label: line.label().to_string(),
        points,
        notes: Vec::new(),
        bars: Vec::new(),
    }
}

/// Draw every spec into `dir`; returns the files written.
pub fn draw_all(dir: &Path, specs: &[PlotSpec], rows: &[Summary]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for spec in specs {
        let mut cs = linear_curves(spec, rows);
        if cs.is_empty() {
            continue;
        }
        let path = dir.join(&spec.file);
        let mut envelope = (spec.envelope == Envelope::Overlay).then(|| {
            let all: Vec<Point> = cs.iter().flat_map(|c| c.points.iter().copied()).collect();
            Curve {
                label: "lower envelope".into(),
                points: lower_envelope(&all),
                notes: Vec::new(),
                bars: Vec::new(),
            }
        });
        let (x0, x1) = cs
            .iter()
            .flat_map(|c| c.points.iter())
            .fold((f64::MAX, f64::MIN), |(lo, hi), p| {
                (lo.min(p.x), hi.max(p.x))
            });
        let mut references: Vec<Curve> = spec
            .reference_lines
            .iter()
            .map(|l| reference_polyline(l, x0, x1))
            .collect();
        if spec.log_x {
            cs.iter_mut()
                .chain(envelope.as_mut())
                .chain(references.iter_mut())
                .for_each(log_x);
        }
        draw_figure(
            &path,
            &Figure {
                title: &spec.title,
                x_label: &axis_name(spec),
                y_label: &spec.y,
                curves: &cs,
                lines: true,
                envelope: envelope.as_ref(),
                references: &references,
                vertical: None,
            },
        )?;
        out.push(path);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(curves: &[Curve]) -> Figure<'_> {
        Figure {
            title: "t",
            x_label: "x",
            y_label: "y",
            curves,
            lines: true,
            envelope: None,
            references: &[],
            vertical: None,
        }
    }

    /// A band stretches the axis by at most the span of the means: means 0.01–0.09 with one
    /// band of ±0.19 (a t interval at 2 repetitions) reach 0.08 beyond their ends, not 0.19.
    #[test]
    fn a_wide_band_stretches_the_axis_by_the_means_span_at_most() {
        let means = [0.01, 0.05, 0.09];
        let reach = band_reach(means.into_iter());
        assert!((reach - 0.08).abs() < 1e-12, "{reach}");
        assert!(band_reach([0.3, 0.3].into_iter()).is_infinite());
        assert!(band_reach([0.3, f64::NAN].into_iter()).is_infinite());
    }

    /// Flagged points are listed in the legend under their marker (constants share one point,
    /// so their labels are not drawn beside it), the vertical line has its entry, and the
    /// series take the Okabe–Ito colours.
    #[test]
    fn flags_and_the_target_line_reach_the_legend() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.svg");
        let point = |x, y| Point { x, y, band: 0.0 };
        let note = |text: &str, flag| Note {
            text: text.into(),
            flag,
        };
        let curves = [
            Curve {
                label: "lpct".into(),
                points: vec![point(0.0, 0.6), point(0.0, 0.6)],
                notes: vec![note("ε = 1", Flag::Constant), note("ε = 4", Flag::Constant)],
                bars: Vec::new(),
            },
            Curve {
                label: "dp2dp".into(),
                points: vec![point(0.05, 0.7), point(0.2, 0.72)],
                notes: vec![note("ε = 1", Flag::Plain), note("ε = 4", Flag::Missed)],
                bars: Vec::new(),
            },
        ];
        let fig = Figure {
            vertical: Some((0.1, "fairness target 0.1")),
            ..figure(&curves)
        };
        draw_figure(&path, &fig).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        for text in [
            "a constant model (the held-out check replaced it):",
            "lpct: ε = 1, ε = 4",
            "fairness target missed:",
            "dp2dp: ε = 4",
            "fairness target 0.1",
        ] {
            assert!(svg.contains(text), "{text} missing");
        }
        // The constants' ε labels are in the legend only; dp2dp's are beside its points.
        let alone = |t: &str| svg.lines().filter(|l| l.trim() == t).count();
        assert_eq!((alone("ε = 1"), alone("ε = 4")), (1, 1), "{svg}");
        assert!(
            svg.to_ascii_uppercase().contains("#0072B2"),
            "Okabe–Ito blue"
        );
    }

    /// The SVG goes to a temporary file renamed over the target: a replaced plot is whole,
    /// nothing is left behind, and a plot that cannot be written leaves the old one intact.
    #[test]
    fn plots_are_written_atomically() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.svg");
        std::fs::write(&path, "old").unwrap();
        let curves = [Curve {
            notes: Vec::new(),
            bars: Vec::new(),
            label: "a".into(),
            points: vec![
                Point {
                    x: 0.0,
                    y: 1.0,
                    band: 0.1,
                },
                Point {
                    x: 1.0,
                    y: 2.0,
                    band: 0.1,
                },
            ],
        }];
        draw_figure(&path, &figure(&curves)).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
            "{svg}"
        );
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "only the plot: {names:?}");
        // A target inside a missing folder cannot be written: an error, and nothing created.
        let missing = dir.path().join("no-such-folder").join("p.svg");
        assert!(draw_figure(&missing, &figure(&curves)).is_err());
        assert!(!missing.exists());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), svg);
    }
}
