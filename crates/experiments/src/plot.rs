//! SVG trade-off plots (plotters, SVG backend): one curve per series, mean with its 95% band.

use crate::aggregate::Summary;
use crate::error::{ExpError, Result};
use crate::grid::fmt_f64;
use crate::paper::{Axis, PlotSpec, Series};
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
/// finite — e.g. ε = ∞ — are left out).
pub fn curves(spec: &PlotSpec, rows: &[Summary]) -> Vec<Curve> {
    // Group rows by setting (key without experiment).
    let mut by_setting: BTreeMap<String, Vec<&Summary>> = BTreeMap::new();
    for r in rows {
        if spec
            .dataset
            .as_ref()
            .is_some_and(|d| *d != r.setting.dataset)
        {
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
        let Some(mut x) = x.filter(|x| x.is_finite()) else {
            continue;
        };
        if spec.log_x {
            if x <= 0.0 {
                continue;
            }
            x = x.log10();
        }
        let label = match spec.series {
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
            Curve { label, points }
        })
        .collect()
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

/// Draw `curves` into an SVG file. `bands`: shade mean ± 95% half-width.
pub fn draw(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    curves: &[Curve],
    lines: bool,
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
        let cs = curves(spec, rows);
        if cs.is_empty() {
            continue;
        }
        let path = dir.join(&spec.file);
        draw(&path, &spec.title, &axis_name(spec), &spec.y, &cs, true)?;
        out.push(path);
    }
    Ok(out)
}
