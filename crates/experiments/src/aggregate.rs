//! Aggregation of repetitions: mean, standard deviation and 95 % interval (Student's t,
//! [`crate::stats::half_width`]) per setting and metric.

use crate::grid::Setting;
use crate::raw::RawCell;

/// One row of results.csv.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub setting: Setting,
    /// Repetitions that finished.
    pub repetitions: usize,
    /// Mean over repetitions of the ledger's spent ε (`None`: non-private).
    pub epsilon_spent: Option<f64>,
    pub metric: String,
    pub mean: f64,
    /// Sample standard deviation (n − 1); 0 for one repetition.
    pub std: f64,
    /// Half-width of the 95 % interval of the mean, `t_{0.975, n−1}·std/√n`
    /// ([`crate::stats::half_width`]; ∞ for one repetition, NaN for a stored value).
    pub ci95: f64,
}

impl Summary {
    /// A summary of `metric` over `repetitions` runs with this mean and sample sd (no spent ε,
    /// no interval): the rows the checks' tests are built from.
    #[cfg(test)]
    pub(crate) fn of(
        setting: Setting,
        metric: &str,
        mean: f64,
        std: f64,
        repetitions: usize,
    ) -> Self {
        Summary {
            setting,
            repetitions,
            epsilon_spent: None,
            metric: metric.into(),
            mean,
            std,
            ci95: crate::stats::half_width(std, repetitions),
        }
    }
}

/// Mean, sample standard deviation and 95 % half-width ([`crate::stats::half_width`]) of
/// `values`.
pub fn mean_std_ci(values: &[f64]) -> (f64, f64, f64) {
    let n = values.len() as f64;
    if values.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let mean = values.iter().sum::<f64>() / n;
    let std = if values.len() > 1 {
        (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    (mean, std, crate::stats::half_width(std, values.len()))
}

/// The accounting mode of a stored number: a value read from a paper or an authors' repository,
/// not computed by this run (e.g. the baselines of DP2DP's Figs. 2–4).
pub const STORED: &str = "stored";

/// Summaries of the cells of one setting (metrics in first-seen order). A stored setting
/// ([`STORED`]) reports its value with `repetitions = 0` and no standard deviation or interval
/// (NaN): nothing was repeated, and its spread is unknown.
pub fn summarise(setting: &Setting, cells: &[&RawCell]) -> Vec<Summary> {
    let stored = setting.accounting == STORED;
    let mut names: Vec<&str> = Vec::new();
    for c in cells {
        for (m, _) in &c.outcome.metrics {
            if !names.contains(&m.as_str()) {
                names.push(m);
            }
        }
    }
    let spent: Vec<f64> = cells
        .iter()
        .filter_map(|c| c.outcome.epsilon_spent)
        .collect();
    let epsilon_spent = (!spent.is_empty()).then(|| mean_std_ci(&spent).0);
    names
        .into_iter()
        .map(|name| {
            let values: Vec<f64> = cells
                .iter()
                .flat_map(|c| c.outcome.metrics.iter().filter(|(m, _)| m == name))
                .map(|(_, v)| *v)
                .collect();
            let (mean, std, ci95) = mean_std_ci(&values);
            let (repetitions, std, ci95) = if stored {
                (0, f64::NAN, f64::NAN)
            } else {
                (values.len(), std, ci95)
            };
            Summary {
                setting: setting.clone(),
                repetitions,
                epsilon_spent,
                metric: name.to_string(),
                mean,
                std,
                ci95,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_std_ci_by_hand() {
        // 1, 2, 3, 4: mean 2.5, sample variance 5/3.
        let (m, s, c) = mean_std_ci(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(m, 2.5);
        assert!((s - (5.0f64 / 3.0).sqrt()).abs() < 1e-12);
        // Student's t with 3 degrees of freedom: t_{0.975, 3} = 3.182 (tabulated).
        assert!((c - 3.182 * s / 2.0).abs() < 1e-3 * s);
        let (m, s, c) = mean_std_ci(&[7.0]);
        assert_eq!((m, s), (7.0, 0.0));
        assert!(c.is_infinite(), "one draw has no interval");
    }

    #[test]
    fn stored_values_carry_no_repetitions_or_spread() {
        use crate::grid::Params;
        use crate::paper::Outcome;
        let setting = |accounting: &str| Setting {
            dataset: "adult".into(),
            method: "dp-fermi-stored".into(),
            accounting: accounting.into(),
            epsilon: 0.5,
            delta: 0.0,
            fairness_level: None,
            params: Params::new(),
        };
        let cell = |s: &Setting| RawCell {
            setting: s.clone(),
            repetition: 0,
            seed: 0,
            outcome: Outcome::new().metric("error", 0.1664),
        };
        let stored = setting(STORED);
        let c = cell(&stored);
        let s = &summarise(&stored, &[&c, &c])[0];
        assert_eq!((s.mean, s.repetitions), (0.1664, 0));
        assert!(s.std.is_nan() && s.ci95.is_nan());
        // A computed setting with the same values is two repetitions of spread 0.
        let computed = setting("strict");
        let c = cell(&computed);
        let s = &summarise(&computed, &[&c, &c])[0];
        assert_eq!((s.repetitions, s.std), (2, 0.0));
    }
}
