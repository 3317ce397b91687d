//! `decoupled`: Ghoukasian & Asoodeh, "Differentially Private Fair Binary Classifications"
//! (arXiv:2402.15603, Tables II–XIII): Algorithm 2 on Adult and
//! Credit Card at ε' ∈ {3, 9}, δ' = 1e-5, with the PRV, moments (RDP) and GDP accountants.
//!
//! Protocol per repetition (seed = cell seed): a random 75/25 split into train75 / test; then
//! [`dpfair::decoupled::fit`] on train75 holds out 1/3 of it for the rates (50/25/25 overall).
//!
//! * `mode=paper`: the authors' procedure: z-scores from train75, public group counts,
//!   ε₀ = ε₁ = 0.05 (Adult) / 0.1 (Credit Card), the paper's noise std (their noise-calibration table) as noise
//!   multiplier std/1.5, B = 1024, η = 0.01, 50 epochs (100 for Credit Card at ε' = 9). The
//!   reported `dp_epsilon` is what the DP parts really spend (DP-SGD at the Opacus q = 1/K of the
//!   actual split, plus ε₀ + ε₁); the z-scores and counts are non-private (ledger ε = ∞).
//! * `mode=strict`: dpfair's defaults, numeric columns min-max scaled with public domain bounds
//!   (UCI documentation), DP-SGD calibrated by the accountant for replace-one neighbours.
//!
//! Metrics: `accuracy` and `dp_gap` of sampled predictions (as the paper), their expectations
//! over the flips (`expected_accuracy`, `expected_dp_gap`, `docs/deviations.md#decoupled-randomised-predictions`), and the base model's.
//!
//! DP-FERMI rows (`method=dp-fermi`, [`dpfair::dp_fermi`]) on the same train75 / test
//! split, at the λ grid of each table (the tables' consolidated curves); its noise does not depend
//! on the accountant, so it runs once per (dataset, ε'). Paper mode is the comparison code
//! (ψ reads the Male column, see `FermiConfig::ermi_group`); `dp_epsilon` is what its ledger
//! really records (mini-batch clipping: far above ε'). Strict mode clips per example and
//! calibrates the noise to ε'.

use crate::aggregate::Summary;
use crate::demo::{DemoMethod, DemoResult};
use crate::error::{Result, method_error};
use crate::{
    Axis, Cell, Check, Grid, Outcome, Paper, Params, PlotSpec, Reference, Scale, Series, Sweep,
};
use dpfair::decoupled::{Accounting, Config, Training, accuracy_and_gap, fit, two_groups};
use dpfair::dp_fermi::{self as fermi, FermiConfig};
use dpfair_data::{Dataset, Stratify, Target};
use dpfair_privacy::{Budget, Ledger};

pub struct Decoupled;

const ACCOUNTANTS: [&str; 3] = ["prv", "rdp", "gdp"];

/// The paper's DP-SGD noise std (σ_mult · 1.5), `docs/reference-values.md#decoupled`: (dataset, ε', accountant).
fn paper_std(dataset: &str, epsilon: f64, accountant: &str) -> Option<f64> {
    let row = match (dataset, epsilon as i64) {
        ("adult", 3) => [3.13, 3.27, 3.01],
        ("adult", 9) => [1.50, 1.56, 1.45],
        ("credit", 3) => [4.44, 4.65, 4.30],
        ("credit", 9) => [2.49, 2.60, 2.43],
        _ => return None,
    };
    let i = ACCOUNTANTS.iter().position(|a| *a == accountant)?;
    Some(row[i])
}

/// Algorithm 2 (accuracy, SP gap) of Tables II–XIII: (dataset, ε', accountant, accuracy, gap).
const PAPER: [(&str, f64, &str, f64, f64); 12] = [
    ("adult", 3.0, "prv", 0.7763, 0.0074),
    ("adult", 9.0, "prv", 0.7790, 0.0091),
    ("credit", 3.0, "prv", 0.7844, 0.0086),
    ("credit", 9.0, "prv", 0.7900, 0.0056),
    ("adult", 3.0, "rdp", 0.7752, 0.0057),
    ("adult", 9.0, "rdp", 0.7782, 0.0054),
    ("credit", 3.0, "rdp", 0.7842, 0.0041),
    ("credit", 9.0, "rdp", 0.7908, 0.0071),
    ("adult", 3.0, "gdp", 0.7796, 0.0081),
    ("adult", 9.0, "gdp", 0.7804, 0.0060),
    ("credit", 3.0, "gdp", 0.7863, 0.0062),
    ("credit", 9.0, "gdp", 0.7915, 0.0063),
];

/// DP-FERMI (λ, accuracy, SP gap) of Tables II–XIII, consolidated over the accountants (the
/// rows repeat wherever a λ repeats; Ghoukasian & Asoodeh, Tables II–XIII): (dataset, ε') → curve.
/// Why DP-FERMI's rows miss below the tables on `dataset` (accuracy, SP gap): the comparison
/// code's noise at ε', measured on that data set (`examples/dp_fermi_gap.rs`, 4 splits).
fn fermi_noise_reasons(dataset: &str) -> (String, String) {
    let (verb, accuracy, gap) = if dataset == "adult" {
        (
            "reach",
            "Adult λ = 0.5: 0.7737 at ε' = 3, 0.7965 at ε' = 1000, table 0.7998",
            "at every λ (Adult ε' = 3, λ = 0.5: 0.038 vs 0.102)",
        )
    } else {
        (
            "pass",
            "Credit λ = 0.1: 0.7566 at ε' = 3, 0.8005 at ε' = 1000, table 0.7899",
            "at small λ (Credit ε' = 3, λ = 0.1: 0.013 vs 0.021)",
        )
    };
    (
        format!(
            "the comparison code's noise at ε': without it (ε' = 1000) the same cells {verb} the \
             table's accuracy ({accuracy}); why the published runs carry less noise is unexplained"
        ),
        format!(
            "the comparison code's noise at ε' fits less: our SP gaps are lower {gap}, the same \
             direction as the accuracy gap"
        ),
    )
}

fn paper_fermi(dataset: &str, epsilon: f64) -> &'static [(f64, f64, f64)] {
    match (dataset, epsilon as i64) {
        ("adult", 3) => &[
            (0.5, 0.7998, 0.1020),
            (1.0, 0.7859, 0.0462),
            (1.5, 0.7822, 0.0267),
            (1.7, 0.7795, 0.0215),
            (1.8, 0.7770, 0.0182),
            (1.9, 0.7749, 0.0126),
            (2.5, 0.7673, 0.0099),
        ],
        ("adult", _) => &[
            (0.5, 0.8091, 0.0944),
            (1.0, 0.7923, 0.0413),
            (1.5, 0.7810, 0.0152),
            (1.7, 0.7782, 0.0121),
            (1.8, 0.7769, 0.0113),
            (2.5, 0.7693, 0.0030),
        ],
        ("credit", 3) => &[
            (0.1, 0.7899, 0.0212),
            (0.17, 0.7860, 0.0199),
            (0.2, 0.7846, 0.0193),
            (0.5, 0.7777, 0.0185),
            (1.0, 0.7759, 0.0105),
            (2.5, 0.7669, 0.0110),
        ],
        _ => &[
            (0.25, 0.7996, 0.0188),
            (0.3, 0.7971, 0.0182),
            (0.35, 0.7950, 0.0174),
            (0.5, 0.7912, 0.0172),
            (1.0, 0.7895, 0.0105),
            (2.5, 0.7884, 0.0066),
        ],
    }
}

/// Source of a DP-FERMI row: the first table listing it.
fn fermi_table(dataset: &str, epsilon: f64) -> &'static str {
    match (dataset, epsilon as i64) {
        ("adult", 3) => "Tables II, VI, X",
        ("adult", _) => "Tables III, VII, XI",
        ("credit", 3) => "Tables IV, VIII, XII",
        _ => "Tables V, IX, XIII",
    }
}

fn fermi_params(lambda: f64, mode: &str) -> Params {
    Params::new().with("lambda", lambda).with("mode", mode)
}

fn table(dataset: &str, accountant: &str, epsilon: f64) -> &'static str {
    match (accountant, dataset, epsilon as i64) {
        ("prv", "adult", 3) => "Table II",
        ("prv", "adult", _) => "Table III",
        ("prv", "credit", 3) => "Table IV",
        ("prv", _, _) => "Table V",
        ("rdp", "adult", 3) => "Table VI",
        ("rdp", "adult", _) => "Table VII",
        ("rdp", "credit", 3) => "Table VIII",
        ("rdp", _, _) => "Table IX",
        (_, "adult", 3) => "Table X",
        (_, "adult", _) => "Table XI",
        (_, "credit", 3) => "Table XII",
        _ => "Table XIII",
    }
}

fn params(accountant: &str, mode: &str) -> Params {
    Params::new()
        .with("accountant", accountant)
        .with("mode", mode)
}

/// Public domain bounds of the numeric columns (UCI documentation), for strict mode.
fn public_bounds(name: &str) -> Option<(f64, f64)> {
    Some(match name {
        "age" => (17.0, 90.0),
        "fnlwgt" => (0.0, 1.5e6),
        "education-num" => (1.0, 16.0),
        "capital-gain" => (0.0, 1e5),
        "capital-loss" => (0.0, 4400.0),
        "hours-per-week" => (1.0, 99.0),
        "LIMIT_BAL" => (0.0, 1e6),
        "AGE" => (20.0, 80.0),
        n if n.starts_with("BILL_AMT") => (-2e5, 1e6),
        n if n.starts_with("PAY_AMT") => (0.0, 1e6),
        _ => return None,
    })
}

/// Min-max scaling to [0, 1] of the columns with public bounds, clipping (no data statistic).
fn scale_public(d: &mut Dataset) {
    for (j, name) in d.feature_names.clone().iter().enumerate() {
        if let Some((lo, hi)) = public_bounds(name) {
            d.features
                .column_mut(j)
                .mapv_inplace(|v| ((v - lo) / (hi - lo)).clamp(0.0, 1.0));
        }
    }
}

fn labels(d: &Dataset) -> Result<&[u8]> {
    match d.target.as_ref() {
        Some(Target::Binary(y)) => Ok(y),
        _ => Err(method_error("a binary target is needed")),
    }
}

fn as_f64(v: Vec<bool>) -> Vec<f64> {
    v.into_iter().map(|b| f64::from(u8::from(b))).collect()
}

/// The group code whose name is `male` (case-insensitive): the column DP-FERMI's ψ reads.
fn male_code(d: &Dataset) -> Result<u32> {
    let g = d.groups.as_ref().ok_or_else(|| method_error("no groups"))?;
    g.names
        .iter()
        .position(|n| n.eq_ignore_ascii_case("male"))
        .map(|i| i as u32)
        .ok_or_else(|| method_error("no group named male"))
}

/// One DP-FERMI cell: train on train75, evaluate on test (module doc).
fn run_fermi(cell: &Cell, train: &mut Dataset, test: &mut Dataset) -> Result<Outcome> {
    let s = &cell.setting;
    let lambda: f64 = cell.param("lambda")?;
    let mode: String = cell.param("mode")?;
    let accounting = if mode == "paper" {
        Accounting::Paper
    } else {
        scale_public(train);
        scale_public(test);
        Accounting::Strict
    };
    let config = FermiConfig {
        lambda,
        epsilon: s.epsilon,
        delta: s.delta,
        epochs: if s.dataset == "credit" && s.epsilon > 5.0 {
            100
        } else {
            50
        },
        ermi_group: male_code(train)?,
        accounting,
        ..FermiConfig::default()
    };
    // Strict mode: the data-size schedule (the code's B = 1024, η_θ = 0.005 predicts the majority
    // class once the updates are clipped per row); it replaces the epochs above.
    let config = match accounting {
        Accounting::Strict => config.with_strict_schedule(train.features.nrows()),
        Accounting::Paper => config,
    };
    // Unlimited ledger: paper mode spends far more than ε' (recorded, not refused); strict mode
    // is calibrated to ε' (checked by the tests).
    let mut ledger = Ledger::unlimited();
    let mut noise = cell.noise();
    let groups = two_groups(train).map_err(method_error)?;
    let model = fermi::fit(
        &config,
        train.features.view(),
        groups,
        labels(train)?,
        &mut ledger,
        &mut noise,
    )
    .map_err(method_error)?;
    let pred = as_f64(model.predict(test.features.view()).map_err(method_error)?);
    let (accuracy, gap) = accuracy_and_gap(
        &pred,
        two_groups(test).map_err(method_error)?,
        labels(test)?,
    );
    // What the noisy steps spend (paper mode also records non-private statistics, ε = ∞).
    let mut noisy = Ledger::unlimited();
    for e in ledger.entries().iter().filter(|e| e.scale > 0.0) {
        noisy.charge(e.clone()).map_err(method_error)?;
    }
    let spent = noisy.total_at(s.delta).map_err(method_error)?.epsilon;
    Ok(Outcome::new()
        .metric("accuracy", accuracy)
        .metric("dp_gap", gap)
        .metric("dp_epsilon", spent)
        .metric("sigma_theta", model.sigma_theta)
        .metric("sigma_w", model.sigma_w)
        .spent_epsilon(if accounting == Accounting::Paper {
            f64::INFINITY
        } else {
            spent
        }))
}

/// (mean, 95 % half-width) of `metric` for the setting matching `method`, `dataset`, ε and the
/// given parameters.
fn summary(
    rows: &[Summary],
    method: &str,
    dataset: &str,
    epsilon: f64,
    params: &Params,
    metric: &str,
) -> Option<(f64, f64)> {
    row_of(rows, method, dataset, epsilon, params, metric).map(|r| (r.mean, r.ci95))
}

/// The aggregated row of `metric` for (`method`, `dataset`, ε, `params`).
fn row_of<'a>(
    rows: &'a [Summary],
    method: &str,
    dataset: &str,
    epsilon: f64,
    params: &Params,
    metric: &str,
) -> Option<&'a Summary> {
    rows.iter().find(|r| {
        r.setting.method == method
            && r.setting.dataset == dataset
            && r.setting.epsilon == epsilon
            && r.setting.params == *params
            && r.metric == metric
    })
}

/// DP-FERMI's SP gap at accuracy `accuracy`, read off its λ curve (`(accuracy, gap)` rows of
/// one mode): linear interpolation between the two λ whose accuracies bracket it, else the
/// nearest end (the more accurate end for a more accurate Algorithm 2: its gap can only be
/// larger at matched accuracy, so the comparison is conservative). Returns a summary carrying
/// the interpolated mean and the larger SE of the two points used.
fn fermi_gap_at(curve: &[(&Summary, &Summary)], accuracy: f64) -> Option<Summary> {
    let mut pts: Vec<(&Summary, &Summary)> = curve.to_vec();
    pts.sort_by(|a, b| a.0.mean.total_cmp(&b.0.mean));
    let (lo, hi) = (pts.first()?, pts.last()?);
    let (gap, se, n, template) = if accuracy <= lo.0.mean {
        (lo.1.mean, crate::stats::se(lo.1), lo.1.repetitions, lo.1)
    } else if accuracy >= hi.0.mean {
        (hi.1.mean, crate::stats::se(hi.1), hi.1.repetitions, hi.1)
    } else {
        let w = pts
            .windows(2)
            .find(|w| w[0].0.mean <= accuracy && accuracy <= w[1].0.mean)?;
        let (a, b) = (w[0], w[1]);
        let t = if b.0.mean > a.0.mean {
            (accuracy - a.0.mean) / (b.0.mean - a.0.mean)
        } else {
            0.5
        };
        (
            a.1.mean + t * (b.1.mean - a.1.mean),
            crate::stats::se(a.1).max(crate::stats::se(b.1)),
            a.1.repetitions.min(b.1.repetitions),
            a.1,
        )
    };
    let mut out = template.clone();
    out.mean = gap;
    out.std = se * (n.max(1) as f64).sqrt();
    out.repetitions = n;
    Some(out)
}

/// Tables II–XIII's claim: at the accuracy Algorithm 2 reaches, DP-FERMI's SP gap is larger.
/// One check per (data set, ε', mode), pooling the accountants' Algorithm 2 rows against the
/// DP-FERMI curve of the same mode (one-sided pooled test, [`crate::stats::direction`]).
fn fairer_than_fermi(rows: &[Summary], dataset: &str, eps: f64, mode: &str) -> Option<Check> {
    let curve: Vec<(&Summary, &Summary)> = paper_fermi(dataset, eps)
        .iter()
        .filter_map(|&(l, _, _)| {
            let p = fermi_params(l, mode);
            Some((
                row_of(rows, "dp-fermi", dataset, eps, &p, "accuracy")?,
                row_of(rows, "dp-fermi", dataset, eps, &p, "dp_gap")?,
            ))
        })
        .collect();
    if curve.len() < 2 {
        return None;
    }
    let mut matched = Vec::new();
    for acc in ACCOUNTANTS {
        let p = params(acc, mode);
        let (Some(a), Some(g)) = (
            row_of(rows, "decoupled", dataset, eps, &p, "accuracy"),
            row_of(rows, "decoupled", dataset, eps, &p, "dp_gap"),
        ) else {
            continue;
        };
        matched.push((acc, a.mean, g, fermi_gap_at(&curve, a.mean)?));
    }
    if matched.is_empty() {
        return None;
    }
    let pairs: Vec<(String, &Summary, &Summary)> = matched
        .iter()
        .map(|(acc, a, g, f)| {
            (
                format!(
                    "{acc}: accuracy {a:.4}, DP-FERMI gap {:.4} vs Algorithm 2",
                    f.mean
                ),
                f,
                *g,
            )
        })
        .collect();
    let d = crate::stats::direction(&pairs, -1.0)?;
    Some(Check::trend(
        &format!(
            "{} ({dataset}, ε' = {eps}, {mode}): Algorithm 2 fairer than DP-FERMI at matched accuracy",
            fermi_table(dataset, eps)
        ),
        &d,
        d.summary(),
    ))
}

/// The targets that are not one number each (report.md "Checks"): Algorithm 2's SP gap
/// ≤ 0.02 in both modes (strict beside paper, with the accuracy difference); DP-FERMI's SP gap
/// decreasing in λ (paper mode; a rise between neighbouring λ within the combined 95 % intervals
/// is noise), and strict DP-FERMI spending no more than ε'.
fn decoupled_checks(rows: &[Summary]) -> Vec<Check> {
    let mut out = Vec::new();
    for dataset in ["adult", "credit"] {
        for eps in [3.0, 9.0] {
            for acc in ACCOUNTANTS {
                let get = |mode: &str, metric: &str| {
                    summary(rows, "decoupled", dataset, eps, &params(acc, mode), metric)
                };
                let (Some((gap_p, _)), Some((acc_p, _))) =
                    (get("paper", "dp_gap"), get("paper", "accuracy"))
                else {
                    continue;
                };
                let t = table(dataset, acc, eps);
                // Power of "mean gap ≤ 0.02": the smallest excess over 0.02 a one-sample test
                // on the run's repetitions detects.
                let power = |mode: &str| {
                    row_of(
                        rows,
                        "decoupled",
                        dataset,
                        eps,
                        &params(acc, mode),
                        "dp_gap",
                    )
                    .map(|g| {
                        let df = g.repetitions.saturating_sub(1) as f64;
                        crate::stats::Power {
                            min_effect: crate::stats::min_detectable_effect(
                                crate::stats::se(g),
                                df,
                            ),
                            repetitions: g.repetitions,
                            claimed_effect: None,
                        }
                    })
                };
                let with_power = |c: Check, mode: &str| match power(mode) {
                    Some(p) => c.with_power(p),
                    None => c,
                };
                out.push(with_power(
                    Check::new(
                        &format!(
                            "{t} ({dataset}, ε' = {eps}, {acc}): Algorithm 2 SP gap ≤ 0.02, paper mode"
                        ),
                        gap_p <= 0.02,
                        format!("gap {gap_p:.4}, accuracy {acc_p:.4}"),
                    ),
                    "paper",
                ));
                if let (Some((gap_s, _)), Some((acc_s, _))) =
                    (get("strict", "dp_gap"), get("strict", "accuracy"))
                {
                    out.push(with_power(
                        Check::new(
                            &format!("{t} ({dataset}, ε' = {eps}, {acc}): Algorithm 2 SP gap ≤ 0.02, strict mode"),
                            gap_s <= 0.02,
                            format!(
                                "gap {gap_s:.4}, accuracy {acc_s:.4}; strict − paper: accuracy {:+.4}, gap {:+.4}",
                                acc_s - acc_p,
                                gap_s - gap_p
                            ),
                        ),
                        "strict",
                    ));
                }
            }
            let curve = |mode: &str, metric: &str| -> Vec<(f64, f64, f64)> {
                paper_fermi(dataset, eps)
                    .iter()
                    .filter_map(|&(l, _, _)| {
                        summary(
                            rows,
                            "dp-fermi",
                            dataset,
                            eps,
                            &fermi_params(l, mode),
                            metric,
                        )
                        .map(|(m, c)| (l, m, c))
                    })
                    .collect()
            };
            // The tables' trend: the SP gap falls as λ grows (pooled over neighbouring λ, no
            // significant rise between neighbours; stats::direction).
            let gaps: Vec<(f64, &Summary)> = paper_fermi(dataset, eps)
                .iter()
                .filter_map(|&(l, _, _)| {
                    let p = fermi_params(l, "paper");
                    Some((l, row_of(rows, "dp-fermi", dataset, eps, &p, "dp_gap")?))
                })
                .collect();
            let pairs: Vec<(String, &Summary, &Summary)> = gaps
                .windows(2)
                .map(|w| (format!("λ {} → {}", w[0].0, w[1].0), w[0].1, w[1].1))
                .collect();
            if let Some(d) = crate::stats::direction(&pairs, -1.0) {
                let detail = gaps
                    .iter()
                    .map(|(l, g)| format!("λ {l}: {}", crate::present::mean_pm(g.mean, g.ci95)))
                    .chain([d.summary()])
                    .collect::<Vec<_>>()
                    .join("; ");
                // The tables' own fall per λ step: (first − last gap)/(steps), e.g. Adult ε' = 3:
                // (0.1020 − 0.0099)/6 = 0.015.
                let table = paper_fermi(dataset, eps);
                let claimed = (table[0].2 - table[table.len() - 1].2) / (table.len() - 1) as f64;
                out.push(
                    Check::trend(
                        &format!(
                            "{} ({dataset}, ε' = {eps}): DP-FERMI SP gap decreasing in λ, paper mode",
                            fermi_table(dataset, eps)
                        ),
                        &d,
                        detail,
                    )
                    .claimed_effect(claimed),
                );
            }
            for mode in ["paper", "strict"] {
                out.extend(fairer_than_fermi(rows, dataset, eps, mode));
            }
            let spent = curve("strict", "dp_epsilon");
            if !spent.is_empty() {
                let worst = spent.iter().map(|s| s.1).fold(0.0, f64::max);
                let acc_s = curve("strict", "accuracy");
                let acc_p = curve("paper", "accuracy");
                let diff = acc_s
                    .iter()
                    .zip(&acc_p)
                    .map(|(s, p)| format!("λ {}: {:.4} ({:+.4})", s.0, s.1, s.1 - p.1))
                    .collect::<Vec<_>>()
                    .join("; ");
                out.push(
                    Check::new(
                        &format!(
                            "{} ({dataset}, ε' = {eps}): strict DP-FERMI spends ≤ ε'",
                            fermi_table(dataset, eps)
                        ),
                        worst <= eps * (1.0 + 1e-9),
                        format!("ledger ε ≤ {worst:.4}; strict accuracy (strict − paper): {diff}"),
                    )
                    // What the ledgers spent: no sampling behind the verdict.
                    .exact(),
                );
            }
        }
    }
    out
}

impl Paper for Decoupled {
    fn name(&self) -> &'static str {
        "decoupled"
    }

    fn description(&self) -> &'static str {
        "Ghoukasian & Asoodeh: Algorithm 2 and DP-FERMI on Adult and Credit Card, Tables II–XIII"
    }

    fn grid(&self, scale: Scale) -> Grid {
        let (reps, accountants): (usize, &[&str]) = match scale {
            Scale::Quick => (2, &ACCOUNTANTS[..1]),
            Scale::Full => (10, &ACCOUNTANTS),
        };
        let mut grid = Grid::new(reps, 100);
        for mode in ["paper", "strict"] {
            grid = grid.with(
                Sweep::new()
                    .datasets(["adult", "credit"])
                    .methods(["decoupled"])
                    .accounting([mode])
                    .epsilons([3.0, 9.0])
                    .deltas([1e-5])
                    .params(accountants.iter().map(|a| params(a, mode))),
            );
            for dataset in ["adult", "credit"] {
                for eps in [3.0, 9.0] {
                    grid = grid.with(
                        Sweep::new()
                            .datasets([dataset])
                            .methods(["dp-fermi"])
                            .accounting([mode])
                            .epsilons([eps])
                            .deltas([1e-5])
                            .params(
                                paper_fermi(dataset, eps)
                                    .iter()
                                    .map(|&(l, _, _)| fermi_params(l, mode)),
                            ),
                    );
                }
            }
        }
        grid
    }

    fn run(&self, cell: &Cell) -> Result<Outcome> {
        let s = &cell.setting;
        let data = crate::load_builtin(&s.dataset)?;
        let mut parts = data
            .dataset
            .split(&[0.75, 0.25], cell.seed, Stratify::None)
            .map_err(method_error)?;
        let (mut train, mut test) = (parts.remove(0), parts.remove(0));
        if s.method == "dp-fermi" {
            return run_fermi(cell, &mut train, &mut test);
        }
        let accountant: String = cell.param("accountant")?;
        let mode: String = cell.param("mode")?;
        let acc = match accountant.as_str() {
            "prv" => dpfair_privacy::accounting::Accountant::Prv,
            "rdp" => dpfair_privacy::accounting::Accountant::Rdp,
            _ => dpfair_privacy::accounting::Accountant::Gdp,
        };
        let paper = mode == "paper";
        let config = if paper {
            let std = paper_std(&s.dataset, s.epsilon, &accountant)
                .ok_or_else(|| method_error("no paper noise level for this setting"))?;
            Config {
                epsilon: s.epsilon,
                delta: s.delta,
                accounting: Accounting::Paper,
                accountant: acc,
                paper_rate_epsilon: if s.dataset == "adult" { 0.05 } else { 0.1 },
                noise_multiplier: Some(std / 1.5),
                training: Training {
                    epochs: Some(if s.dataset == "credit" && s.epsilon > 5.0 {
                        100
                    } else {
                        50
                    }),
                    ..Training::default()
                },
                split_seed: Some(cell.seed),
                ..Config::default()
            }
        } else {
            scale_public(&mut train);
            scale_public(&mut test);
            Config {
                epsilon: s.epsilon,
                delta: s.delta,
                accountant: acc,
                split_seed: Some(cell.seed),
                ..Config::default()
            }
        };
        let mut ledger = if paper {
            Ledger::new(Budget::approx(f64::INFINITY, s.delta).map_err(method_error)?)
        } else {
            Ledger::new(Budget::approx(s.epsilon, s.delta).map_err(method_error)?)
        };
        let mut noise = cell.noise();
        let model = fit(&config, &train, &mut ledger, &mut noise).map_err(method_error)?;
        let groups = two_groups(&test).map_err(method_error)?;
        let y = labels(&test)?;
        let x = test.features.view();
        let sampled = as_f64(model.predict(x, groups, &mut noise).map_err(method_error)?);
        let (accuracy, gap) = accuracy_and_gap(&sampled, groups, y);
        let p = model.predict_proba(x, groups).map_err(method_error)?;
        let (e_acc, e_gap) = accuracy_and_gap(&p, groups, y);
        let base = as_f64(model.predict_base(x, groups).map_err(method_error)?);
        let (b_acc, b_gap) = accuracy_and_gap(&base, groups, y);
        let dp_epsilon = model.sgd_epsilon + model.rates.release.epsilon();
        let out = Outcome::new()
            .metric("accuracy", accuracy)
            .metric("dp_gap", gap)
            .metric("expected_accuracy", e_acc)
            .metric("expected_dp_gap", e_gap)
            .metric("base_accuracy", b_acc)
            .metric("base_dp_gap", b_gap)
            .metric("dp_epsilon", dp_epsilon);
        Ok(if paper {
            out.spent_epsilon(dp_epsilon)
        } else {
            out.spent(&ledger)?
        })
    }

    fn checks(&self, rows: &[Summary]) -> Vec<Check> {
        decoupled_checks(rows)
    }

    fn references(&self) -> Vec<Reference> {
        let mut out = Vec::new();
        for dataset in ["adult", "credit"] {
            let (why, why_gap) = fermi_noise_reasons(dataset);
            for eps in [3.0, 9.0] {
                let t = fermi_table(dataset, eps);
                for &(lambda, accuracy, gap) in paper_fermi(dataset, eps) {
                    // Targets: accuracy within 0.015; the gap is compared for
                    // information (its target is the trend in λ), band 0.02.
                    // Both reasons lower our numbers: a miss above the table is unexplained.
                    let anchor = "decoupled-dp-fermi-accuracy-at-small-lambda";
                    let a =
                        Reference::new(t, dataset, "dp-fermi", eps, "accuracy", accuracy, 0.015)
                            .with_params(fermi_params(lambda, "paper"))
                            .in_mode("paper")
                            .explained_on_side(anchor, &why, true);
                    let g = Reference::new(t, dataset, "dp-fermi", eps, "dp_gap", gap, 0.02)
                        .with_params(fermi_params(lambda, "paper"))
                        .in_mode("paper")
                        .explained_on_side(anchor, &why_gap, true);
                    out.extend([a, g]);
                }
            }
        }
        for (dataset, eps, acc, accuracy, gap) in PAPER {
            let t = table(dataset, acc, eps);
            let a = Reference::new(t, dataset, "decoupled", eps, "accuracy", accuracy, 0.01)
                .with_params(params(acc, "paper"))
                .in_mode("paper");
            // Target: SP gap ≤ 0.02 (the project's target); the paper's gaps sit at the sampling floor
            // (≈ 0.005–0.006, Ghoukasian & Asoodeh, Tables II–XIII), so |ours − paper| ≤ 0.015 is the band.
            let g = Reference::new(t, dataset, "decoupled", eps, "dp_gap", gap, 0.015)
                .with_params(params(acc, "paper"))
                .in_mode("paper");
            out.extend([a, g]);
        }
        out
    }

    fn plots(&self) -> Vec<PlotSpec> {
        let mut out = Vec::new();
        for d in ["adult", "credit"] {
            // Algorithm 2 over ε: one series per (accountant, mode).
            out.push(
                PlotSpec::new(
                    &format!("{d}_accuracy.svg"),
                    &format!("{d}: Algorithm 2 accuracy"),
                    Axis::Epsilon,
                    "accuracy",
                    Series::Method,
                )
                .for_dataset(d)
                .for_methods(["decoupled"])
                .series_by_param("accountant"),
            );
            for mode in ["paper", "strict"] {
                out.push(
                    PlotSpec::new(
                        &format!("{d}_dp_fermi_gap_{mode}.svg"),
                        &format!("{d}: DP-FERMI SP gap against λ ({mode})"),
                        Axis::Param("lambda".into()),
                        "dp_gap",
                        Series::Epsilon,
                    )
                    .for_dataset(d)
                    .for_methods(["dp-fermi"])
                    .for_param("mode", mode),
                );
                // The tables' comparison as a trade-off: DP-FERMI's λ curve and Algorithm 2's
                // points (one per accountant), accuracy against SP gap.
                for eps in [3.0, 9.0] {
                    out.push(
                        PlotSpec::new(
                            &format!("{d}_tradeoff_eps{eps}_{mode}.svg"),
                            &format!("{d}, ε' = {eps}: accuracy against SP gap ({mode})"),
                            Axis::Metric("dp_gap".into()),
                            "accuracy",
                            Series::Method,
                        )
                        .for_dataset(d)
                        .for_epsilon(eps)
                        .for_param("mode", mode)
                        .series_by_param("accountant"),
                    );
                }
            }
        }
        out
    }

    fn demo(&self) -> Vec<DemoMethod> {
        vec![DemoMethod {
            name: "decoupled (Alg. 2)",
            task: "binary, 2 groups",
            epsilons: vec![1.0, 3.0, 9.0],
            run: |data, epsilon, seed| {
                let (train, test) = data.binary()?;
                let config = Config {
                    epsilon,
                    split_seed: Some(seed),
                    ..Config::default()
                };
                let mut ledger = Ledger::new(Budget::approx(epsilon, 1e-5).map_err(method_error)?);
                let mut noise = dpfair_privacy::Noise::seeded(seed);
                let model = fit(&config, train, &mut ledger, &mut noise).map_err(method_error)?;
                let groups = two_groups(test).map_err(method_error)?;
                let sampled = as_f64(
                    model
                        .predict(test.features.view(), groups, &mut noise)
                        .map_err(method_error)?,
                );
                let (acc, gap) = accuracy_and_gap(&sampled, groups, labels(test)?);
                DemoResult::new("accuracy", acc, "DP difference", gap).spent(&ledger)
            },
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Setting;

    fn row(method: &str, mode: &str, params: Params, metric: &str, mean: f64) -> Summary {
        Summary {
            setting: Setting {
                dataset: "adult".into(),
                method: method.into(),
                accounting: mode.into(),
                epsilon: 3.0,
                delta: 1e-5,
                fairness_level: None,
                params,
            },
            repetitions: 10,
            epsilon_spent: None,
            metric: metric.into(),
            mean,
            // ci95 = t_{0.975, 9}·std/√10 = 0.002.
            std: 0.002 * 10f64.sqrt() / crate::stats::t_quantile(0.975, 9.0),
            ci95: 0.002,
        }
    }

    fn fermi_gaps(gaps: &[f64]) -> Vec<Summary> {
        paper_fermi("adult", 3.0)
            .iter()
            .zip(gaps)
            .map(|(&(l, _, _), &g)| row("dp-fermi", "paper", fermi_params(l, "paper"), "dp_gap", g))
            .collect()
    }

    fn verdict(rows: &[Summary], needle: &str) -> bool {
        let c: Vec<Check> = decoupled_checks(rows)
            .into_iter()
            .filter(|c| c.name.contains(needle))
            .collect();
        assert_eq!(c.len(), 1, "{needle}");
        c[0].passed
    }

    #[test]
    fn grid_runs_every_table_lambda_in_both_modes() {
        let grid = Decoupled.grid(Scale::Full);
        for mode in ["paper", "strict"] {
            let lambdas: Vec<String> = grid
                .settings
                .iter()
                .filter(|s| s.method == "dp-fermi" && s.dataset == "credit" && s.epsilon == 9.0)
                .filter(|s| s.accounting == mode)
                .map(|s| s.params.get_str("lambda").unwrap().to_string())
                .collect();
            assert_eq!(
                lambdas,
                ["0.25", "0.3", "0.35", "0.5", "1", "2.5"],
                "{mode}"
            );
        }
        // Algorithm 2: 2 data sets × 2 ε × 3 accountants × 2 modes.
        let alg2 = grid.settings.iter().filter(|s| s.method == "decoupled");
        assert_eq!(alg2.count(), 24);
    }

    #[test]
    fn lambda_trend_check_accepts_noise_and_rejects_a_rising_curve() {
        // Falling, with one rise of 0.002 below t_{0.975}·SE of the difference (2.1·0.00144):
        // the pooled fall is significant, the rise is not a reversal.
        let ok = fermi_gaps(&[0.10, 0.05, 0.03, 0.032, 0.02, 0.015, 0.01]);
        assert!(verdict(&ok, "decreasing in λ"));
        // A rise of 0.01 between neighbours is a significant reversal.
        let bump = fermi_gaps(&[0.10, 0.05, 0.03, 0.04, 0.02, 0.015, 0.01]);
        assert!(!verdict(&bump, "decreasing in λ"));
        let rising = fermi_gaps(&[0.01, 0.011, 0.012, 0.013, 0.014, 0.015, 0.016]);
        assert!(!verdict(&rising, "decreasing in λ"));
    }

    #[test]
    fn algorithm_2_gap_target_is_0_02() {
        let p = params("prv", "paper");
        let at = |gap: f64| {
            vec![
                row("decoupled", "paper", p.clone(), "dp_gap", gap),
                row("decoupled", "paper", p.clone(), "accuracy", 0.77),
            ]
        };
        assert!(verdict(
            &at(0.019),
            "prv): Algorithm 2 SP gap ≤ 0.02, paper"
        ));
        assert!(!verdict(
            &at(0.021),
            "prv): Algorithm 2 SP gap ≤ 0.02, paper"
        ));
    }
}
