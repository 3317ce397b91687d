//! SVG trade-off plots (plotters, SVG backend): one curve per series, mean with its 95% band,
//! optionally with lower envelopes ([`Envelope`], seed 001 Figs. 3–4).

use crate::aggregate::Summary;
use crate::error::{ExpError, Result};
use crate::grid::fmt_f64;
use crate::paper::{Axis, Envelope, PlotSpec, Series};
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
#[derive(Clone, Debug, PartialEq)]
pub struct Curve {
    pub label: String,
    pub points: Vec<Point>,
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
    let mut curves: BTreeMap<String, Vec<Point>> = BTreeMap::new();
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
                Some(v) => format!("{p} = {v}"),
                None => s.method.clone(),
            });
        let label = match spec.series {
            _ if by_param.is_some() => by_param.unwrap_or_default(),
            Series::Method => s.method.clone(),
            Series::Epsilon => format!("ε = {}", fmt_f64(s.epsilon)),
            Series::MethodAndEpsilon => format!("{}, ε = {}", s.method, fmt_f64(s.epsilon)),
        };
        curves.entry(label).or_default().push(Point {
            x,
            y: y.mean,
            band: if y.ci95.is_finite() { y.ci95 } else { 0.0 },
        });
    }
    curves
        .into_iter()
        .map(|(label, mut points)| {
            points.sort_by(|a, b| a.x.total_cmp(&b.x));
            if spec.envelope == Envelope::PerSeries {
                points = lower_envelope(&points);
            }
            Curve { label, points }
        })
        .collect()
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
/// chain): the trade-off frontier reachable by mixing two settings (seed 001 spec §2.7, the lower
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
    draw_with_envelope(path, title, x_label, y_label, curves, lines, None)
}

/// [`draw`], plus `envelope` (if any) as a thick black line over the curves.
pub fn draw_with_envelope(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    curves: &[Curve],
    lines: bool,
    envelope: Option<&Curve>,
) -> Result<()> {
    let err = |e: String| ExpError::Plot {
        file: path.display().to_string(),
        reason: e,
    };
    let pts = curves.iter().flat_map(|c| c.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for p in pts {
        x0 = x0.min(p.x);
        x1 = x1.max(p.x);
        y0 = y0.min(p.y - p.band);
        y1 = y1.max(p.y + p.band);
    }
    if x0 > x1 {
        (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
    }
    let pad = |lo: f64, hi: f64| {
        let w = if hi > lo { hi - lo } else { lo.abs().max(1.0) };
        (lo - 0.05 * w, hi + 0.05 * w)
    };
    let (x0, x1) = pad(x0, x1);
    let (y0, y1) = pad(y0, y1);
    let root = SVGBackend::new(path, (800, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(|e| err(e.to_string()))?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .draw()
        .map_err(|e| err(e.to_string()))?;
    for (i, c) in curves.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        if c.points.iter().any(|p| p.band > 0.0) && c.points.len() > 1 && lines {
            let mut poly: Vec<(f64, f64)> = c.points.iter().map(|p| (p.x, p.y + p.band)).collect();
            poly.extend(c.points.iter().rev().map(|p| (p.x, p.y - p.band)));
            chart
                .draw_series(std::iter::once(Polygon::new(
                    poly,
                    color.mix(0.18).filled(),
                )))
                .map_err(|e| err(e.to_string()))?;
        }
        if lines {
            chart
                .draw_series(LineSeries::new(
                    c.points.iter().map(|p| (p.x, p.y)),
                    color.stroke_width(2),
                ))
                .map_err(|e| err(e.to_string()))?;
        }
        chart
            .draw_series(
                c.points
                    .iter()
                    .map(|p| Circle::new((p.x, p.y), 4, color.filled())),
            )
            .map_err(|e| err(e.to_string()))?
            .label(c.label.clone())
            .legend(move |(x, y)| Circle::new((x + 8, y), 4, color.filled()));
        if !lines {
            // Error bars for scatter plots.
            chart
                .draw_series(c.points.iter().filter(|p| p.band > 0.0).map(|p| {
                    PathElement::new(vec![(p.x, p.y - p.band), (p.x, p.y + p.band)], color)
                }))
                .map_err(|e| err(e.to_string()))?;
        }
    }
    if let Some(env) = envelope {
        chart
            .draw_series(LineSeries::new(
                env.points.iter().map(|p| (p.x, p.y)),
                BLACK.stroke_width(3),
            ))
            .map_err(|e| err(e.to_string()))?
            .label(env.label.clone())
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], BLACK.stroke_width(3)));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(e.to_string()))?;
    root.present().map_err(|e| err(e.to_string()))?;
    Ok(())
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
            }
        });
        if spec.log_x {
            cs.iter_mut().chain(envelope.as_mut()).for_each(log_x);
        }
        draw_with_envelope(
            &path,
            &spec.title,
            &axis_name(spec),
            &spec.y,
            &cs,
            true,
            envelope.as_ref(),
        )?;
        out.push(path);
    }
    Ok(out)
}
