//! Inline SVG plots of the release report's private evaluation ([`panel`]): each figure a point
//! with its interval as an error bar, one row per group (and overall), on a labelled axis. No
//! script, no external resource, the same numbers as the tables and the JSON; black on white so
//! the page prints.

use super::html::escape;
use dpfair_fairness::Figure;
use std::fmt::Write;

const WIDTH: f64 = 560.0;
const LABEL: f64 = 150.0;
const RIGHT: f64 = 20.0;
const ROW: f64 = 22.0;
const TOP: f64 = 26.0;
const AXIS: f64 = 26.0;

/// One panel: `title`, then a row per `(label, figure)`, the axis from 0 to `max` (1 for rates;
/// for a figure without a natural end, [`axis_end`]). A figure without a point value (its
/// noisy denominator was 0) shows its interval only.
pub(super) fn panel(title: &str, rows: &[(String, Figure)], max: f64) -> String {
    let height = TOP + ROW * rows.len() as f64 + AXIS;
    let plot = WIDTH - LABEL - RIGHT;
    let x = |v: f64| LABEL + plot * (v / max).clamp(0.0, 1.0);
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg class=\"plot\" width=\"{WIDTH}\" \
         height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" \
         aria-label=\"{t}\"><title>{t}</title>\
         <text x=\"0\" y=\"16\" font-weight=\"bold\">{t}</text>",
        t = escape(title)
    );
    let bottom = TOP + ROW * rows.len() as f64;
    for i in 0..=4 {
        let v = max * i as f64 / 4.0;
        let _ = write!(
            s,
            "<line x1=\"{x:.1}\" y1=\"{TOP}\" x2=\"{x:.1}\" y2=\"{bottom}\" stroke=\"#ddd\"/>\
             <text x=\"{x:.1}\" y=\"{ty}\" text-anchor=\"middle\" font-size=\"11\">{label}</text>",
            x = x(v),
            ty = bottom + 16.0,
            label = tick(v)
        );
    }
    for (i, (label, f)) in rows.iter().enumerate() {
        let y = TOP + ROW * (i as f64 + 0.5);
        let (l, u) = (x(f.lower), x(f.upper));
        let _ = write!(
            s,
            "<text x=\"{tx}\" y=\"{ty:.1}\" text-anchor=\"end\" font-size=\"12\">{name}</text>\
             <line x1=\"{l:.1}\" y1=\"{y:.1}\" x2=\"{u:.1}\" y2=\"{y:.1}\" stroke=\"#111\" \
             stroke-width=\"1.5\"/>\
             <line x1=\"{l:.1}\" y1=\"{a:.1}\" x2=\"{l:.1}\" y2=\"{b:.1}\" stroke=\"#111\"/>\
             <line x1=\"{u:.1}\" y1=\"{a:.1}\" x2=\"{u:.1}\" y2=\"{b:.1}\" stroke=\"#111\"/>",
            tx = LABEL - 8.0,
            ty = y + 4.0,
            name = escape(label),
            a = y - 5.0,
            b = y + 5.0,
        );
        if let Some(v) = f.value {
            let _ = write!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{y:.1}\" r=\"4\" fill=\"#111\"><title>{}</title>\
                 </circle>",
                x(v),
                escape(&format!("{label}: {}", f.show(3)))
            );
        }
    }
    s.push_str("</svg>\n");
    s
}

/// A round axis end at or above every figure's upper end (for figures without a natural end,
/// e.g. an MSE): 1, 2 or 5 times a power of ten.
pub(super) fn axis_end(figures: &[Figure]) -> f64 {
    let top = figures
        .iter()
        .flat_map(|f| [f.upper, f.value.unwrap_or(0.0)])
        .fold(0.0f64, f64::max);
    if top <= 0.0 || !top.is_finite() {
        return 1.0;
    }
    let power = 10f64.powf(top.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|&end| end >= top)
        .unwrap_or(10.0 * power)
}

/// An axis tick's label: at most three significant digits.
fn tick(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() { "0".into() } else { s.into() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fig(value: Option<f64>, lower: f64, upper: f64) -> Figure {
        Figure {
            value,
            lower,
            upper,
        }
    }

    #[test]
    fn a_panel_draws_each_interval_where_its_numbers_say() {
        let rows = vec![
            ("<b>g".to_string(), fig(Some(0.5), 0.25, 0.75)),
            ("empty".to_string(), fig(None, 0.0, 1.0)),
        ];
        let svg = panel("accuracy", &rows, 1.0);
        // The plot spans x = 150 … 540: 0.25 → 247.5, 0.5 → 345, 0.75 → 442.5.
        assert!(
            svg.contains("x1=\"247.5\" y1=\"37.0\" x2=\"442.5\""),
            "{svg}"
        );
        assert!(svg.contains("<circle cx=\"345.0\" cy=\"37.0\""), "{svg}");
        // No point for a figure without a value; names escaped.
        assert_eq!(svg.matches("<circle").count(), 1);
        assert!(svg.contains("&lt;b&gt;g") && !svg.contains("<b>"));
    }

    #[test]
    fn the_axis_ends_at_a_round_value_above_every_figure() {
        assert_eq!(axis_end(&[fig(Some(0.1), 0.05, 0.17)]), 0.2);
        assert_eq!(axis_end(&[fig(Some(150.0), 110.0, 196.0)]), 200.0);
        assert_eq!(axis_end(&[fig(None, 0.0, 0.0)]), 1.0);
        assert_eq!(tick(0.25), "0.25");
        assert_eq!(tick(0.0), "0");
    }
}
