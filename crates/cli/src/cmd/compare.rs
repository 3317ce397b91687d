//! `dpfair compare`: every applicable method on one CSV at the same (ε, δ) and fairness level,
//! scored on a held-out part, in one table and one SVG (the library's [`dpfair::compare`]). By
//! default every held-out figure is a private release with an interval (docs/evaluation.md,
//! "dpfair compare"); `--exact-evaluation` scores exactly, for the data owner only.

use crate::cmd::common::{BoundsArgs, DataArgs, check_output};
use crate::cmd::fit::flags::parse_constraint;
use crate::error::{CliError, CliResult};
use dpfair::compare::{self, Config, Evaluation, Method, Report, Row, Verdict};
use dpfair::group_thresholds::Constraint;
use dpfair_experiments::plot::{Bars, Curve, Figure, Flag, Note, Point, draw_figure};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

#[derive(clap::Args)]
#[command(
    after_help = "Example (Adult, two ε):\n  dpfair compare --data adult.csv \
    --target income --sensitive sex --epsilon 1,2 --out compare\n\nWithout --bounds every fit \
    spends --bounds-share of its ε on private feature bounds; public --bounds cost nothing. A fit \
    whose private bounds would be no better than a guess (too many columns for the rows and ε) \
    refuses, and its row says `refused:` with what to change.\n\nThe held-out figures are \
    private by default: each fit's predictions of the held-out rows are released once at \
    --evaluation-epsilon (a binary target: one private group report, the group x label x \
    prediction counts with exact discrete Laplace noise from the OS; a multi-class target: the \
    same counts for k classes; a real target: the sum of squared errors and a histogram of the \
    predictions, clipped to --target-range; docs/evaluation.md), and the table shows each \
    accuracy (or MSE) and unfairness with an interval at --level covering the noise and the \
    sampling of the held-out rows. A fairness target is met when the interval lies at or below \
    it, missed above it, undecided when it straddles it. The majority class (or the training mean) is \
    read from one more such release; the non-private reference and LPCT's simulated public sample cannot be part of \
    a private table and are left out (name lpct or lpct-prune in --methods to include them, \
    marked). The footer states the whole table's ε. --exact-evaluation scores the held-out rows \
    exactly instead (today's table with the non-private reference; for the data owner, not for \
    publication). Each fit is private at its \
    own (ε, δ); its release noise comes from the OS, --seed fixes only the splits.\n\n\
    --constraint equal-opportunity or equalized-odds (a binary target): cdp-fair, fdp-fair, \
    decoupled and group-thresholds are fitted to it (the first three through group thresholds), \
    the unfairness column is its difference (largest minus smallest over groups, as Fairlearn's), \
    and the methods that cannot target it (dp2dp and the unconstrained ones) are still fitted, \
    their target column `-`."
)]
pub struct Args {
    #[command(flatten)]
    data: DataArgs,
    #[command(flatten)]
    bounds: BoundsArgs,
    /// The ε of every fit; a comma-separated list compares each method at each ε.
    #[arg(long, value_name = "E,...", value_delimiter = ',', default_value = "1")]
    epsilon: Vec<f64>,
    /// The δ of every fit.
    #[arg(long, value_name = "D", default_value_t = 1e-5)]
    delta: f64,
    /// The fairness level: CDP-Fair's, FDP-Fair's and the decoupled classifier's α, DP2DP's ρ,
    /// group-thresholds' level (of --constraint).
    #[arg(long, value_name = "A", default_value_t = 0.1)]
    alpha: f64,
    /// The constraint at level --alpha and the unfairness column's measure (a binary target):
    /// demographic-parity (positive rates), equal-opportunity (true-positive rates) or
    /// equalized-odds (true- and false-positive rates). cdp-fair, fdp-fair, decoupled and
    /// group-thresholds are fitted to it; dp2dp targets demographic parity only (under another
    /// constraint it is fitted as always, its target column `-`). A multi-class or real target
    /// takes demographic-parity only.
    #[arg(
        long,
        value_name = "NAME",
        default_value = "demographic-parity",
        value_parser = parse_constraint
    )]
    constraint: Constraint,
    /// The methods to compare, by their `dpfair fit` names [default: every one that applies but
    /// group-thresholds, which is compared only when named].
    #[arg(long, value_name = "M,...", value_delimiter = ',')]
    methods: Vec<String>,
    /// The held-out fraction of the rows.
    #[arg(long, value_name = "F", default_value_t = 0.3)]
    test_fraction: f64,
    /// The fraction of the training rows that plays LPCT's and LPCT-prune's public sample (a
    /// simulation of having public data; the rest are the private holders).
    #[arg(long, value_name = "F", default_value_t = compare::DEFAULT_PUBLIC_FRACTION)]
    public_fraction: f64,
    /// Repetitions (new split and new noise each): means with standard errors.
    #[arg(long, value_name = "R", default_value_t = 1)]
    repetitions: usize,
    /// Seed of the public splits.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// The public range of a real target, `LO:HI` (dp-linear and fair-regression clip the target
    /// to it; they refuse without it). Ignored for a class target.
    #[arg(long, value_name = "LO:HI", value_parser = parse_range, allow_hyphen_values = true)]
    target_range: Option<[f64; 2]>,
    /// A folder for `compare.md` (the table) and `frontier.svg` (accuracy vs unfairness).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Add a row `private selection`: the central fair classifier (among CDP-Fair, decoupled,
    /// DP2DP and group-thresholds, those compared) chosen privately on the training rows at one
    /// fit's budget (`dpfair tune`'s search over methods; the constant classes compete too).
    #[arg(long)]
    select: bool,
    /// The ε of each held-out release: one private group report per fit (and one for the
    /// majority class), each charged to the evaluation's ledger.
    #[arg(long, value_name = "E", default_value_t = compare::DEFAULT_EVALUATION_EPSILON,
          conflicts_with = "exact_evaluation")]
    evaluation_epsilon: f64,
    /// The level of the held-out figures' intervals, in (0, 1).
    #[arg(long, value_name = "L", default_value_t = dpfair_fairness::DEFAULT_LEVEL,
          conflicts_with = "exact_evaluation")]
    level: f64,
    /// Score the held-out rows exactly, without noise (and add the non-private reference):
    /// for the data owner's eyes, not for publication.
    #[arg(long)]
    exact_evaluation: bool,
}

/// `LO:HI` as a range (also `dpfair report --target-range`).
pub(crate) fn parse_range(text: &str) -> Result<[f64; 2], String> {
    let parts: Vec<&str> = text.split(':').collect();
    let [lo, hi] = parts.as_slice() else {
        return Err(format!("expected LO:HI, got `{text}`"));
    };
    let num = |v: &str| {
        v.trim()
            .parse::<f64>()
            .map_err(|_| format!("`{v}` is not a number (expected LO:HI)"))
    };
    let (lo, hi) = (num(lo)?, num(hi)?);
    if lo.is_finite() && hi.is_finite() && lo < hi {
        Ok([lo, hi])
    } else {
        Err(format!("expected finite LO < HI, got `{text}`"))
    }
}

pub fn run(args: Args) -> CliResult {
    let methods = if args.methods.is_empty() {
        Vec::new() // every method that applies to the target
    } else {
        args.methods
            .iter()
            .map(|m| Method::parse(m.trim()))
            .collect::<dpfair::Result<_>>()?
    };
    let config = Config {
        methods,
        epsilons: args.epsilon.clone(),
        delta: args.delta,
        alpha: args.alpha,
        test_fraction: args.test_fraction,
        public_fraction: args.public_fraction,
        repetitions: args.repetitions,
        seed: args.seed,
        // A user's data: release noise from the OS, always.
        simulated_noise: false,
        target_range: args.target_range,
        select: args.select,
        constraint: args.constraint,
        evaluation: if args.exact_evaluation {
            Evaluation::Exact
        } else {
            Evaluation::Private {
                epsilon: args.evaluation_epsilon,
                level: args.level,
            }
        },
    };
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::BadInput(format!("--out {}: {e}", dir.display())))?;
        check_output("--out", &dir.join("compare.md"), &[args.data.input()])?;
    }
    let scaling = args.bounds.scaling()?;
    if scaling.is_none() {
        eprintln!(
            "warning: --unscaled: features are used unscaled; most methods need them on [0, 1]"
        );
    }
    let loaded = args.data.load(None)?;
    if let Some(plan) = scaling.plan(&loaded) {
        let mut lines = crate::cmd::common::bounds_lines(&plan, scaling.share(), 1.0, 0.0, 0);
        if !plan.private.is_empty() {
            lines.truncate(1);
            let mut train_rows =
                (loaded.dataset.n_rows() as f64 * (1.0 - args.test_fraction)) as usize;
            // The held-out check leaves every fit the other rows; a regressor's fit also leaves
            // the check's fallback mean its share of ε.
            train_rows -=
                (train_rows as f64 * dpfair::held_out_check::DEFAULT_FRACTION).round() as usize;
            let fit_part = match loaded.dataset.target {
                Some(dpfair_data::Target::Real(_)) => 1.0 - dpfair::held_out_check::FIT_MEAN_SHARE,
                _ => 1.0,
            };
            let m = plan.private.len();
            let least = args.epsilon.iter().copied().fold(f64::INFINITY, f64::min);
            // The share of ε a fit at ε spends (raised on small data: docs/privacy.md).
            let share_at = |e: f64| {
                fit_part
                    * match &scaling {
                        dpfair::pipeline::Scaling::Auto { share, .. } => {
                            dpfair::pipeline::auto_bounds_share(*share, m, train_rows, fit_part * e)
                        }
                        other => other.share(),
                    }
            };
            let readable = dpfair_privacy::ledger::readable;
            let shares: Vec<String> = args
                .epsilon
                .iter()
                .map(|&e| format!("{} at ε = {}", readable(share_at(e)), readable(e)))
                .collect();
            let least_share = share_at(least);
            let eps_column = least_share * least / m as f64;
            lines.push(format!(
                "no --bounds: each fit spends a share of its ε on private bounds for {m} \
                 column(s): {} (median and spread on a public log grid; in its ε spent); give \
                 --bounds to spend nothing",
                shares.join(", ")
            ));
            lines.extend(dpfair::pipeline::bounds_warning(eps_column, train_rows));
        }
        for line in lines {
            eprintln!("{line}");
        }
    }
    let report = compare::compare(&loaded, &scaling, &config, progress())?;
    for (m, why) in &report.skipped {
        eprintln!("note: {} left out: {why}", m.name());
    }
    let table = match &report.evaluation {
        Some(_) => table(&report, &config),
        None => format!("{NOT_FOR_PUBLICATION}\n\n{}", table(&report, &config)),
    };
    print!("{table}");
    if let Some(dir) = &args.out {
        let md = dir.join("compare.md");
        let write = |path: &std::path::Path, bytes: &[u8]| {
            dpfair_data::output::write_atomic(path, bytes)
                .map_err(|e| CliError::BadInput(format!("cannot write {}: {e}", path.display())))
        };
        write(&md, table.as_bytes())?;
        let svg = dir.join("frontier.svg");
        let label = match &report.evaluation {
            Some(e) => format!("private figures, {} intervals", percent(e.level)),
            None => NOT_FOR_PUBLICATION_SHORT.to_string(),
        };
        frontier(&report, &svg, Some(&label))?;
        match &report.evaluation {
            Some(e) => {
                let ledger = dir.join("evaluation-ledger.json");
                let json = serde_json::to_string_pretty(&e.ledger)
                    .map_err(|e| CliError::Internal(e.to_string()))?;
                write(&ledger, json.as_bytes())?;
                eprintln!(
                    "wrote {}, {} and {}",
                    md.display(),
                    svg.display(),
                    ledger.display()
                );
            }
            None => eprintln!("wrote {} and {}", md.display(), svg.display()),
        }
    }
    Ok(())
}

/// `95 %` for 0.95.
fn percent(level: f64) -> String {
    format!("{} %", dpfair_privacy::ledger::readable(level * 100.0))
}

/// The label on every output of `dpfair compare` run on a user's data: its held-out scores read
/// the private held-out rows without noise (docs/privacy.md, "Failures and messages").
pub(crate) const NOT_FOR_PUBLICATION: &str = "**Exact on private rows: not for publication.** \
     The held-out scores below read the private held-out rows without noise (an evaluation for \
     the data owner, like `dpfair evaluate`); the models are private, this table is not.";

/// [`NOT_FOR_PUBLICATION`] in a few words, for the plot's title.
const NOT_FOR_PUBLICATION_SHORT: &str = "exact on private rows: not for publication";

/// A one-line progress indicator on stderr, only on a terminal.
pub(crate) fn progress() -> impl FnMut(usize, usize, &str) {
    let terminal = std::io::stderr().is_terminal();
    move |done, total, what| {
        if terminal {
            let mut err = std::io::stderr();
            let _ = write!(err, "\r\x1b[2K[{done}/{total}] {what}");
            if done == total {
                let _ = writeln!(err);
            }
            let _ = err.flush();
        }
    }
}

/// `mean [lower, upper]` with a private figure's interval; else `mean ± se` (just the mean with
/// one repetition).
fn estimate(
    e: &compare::Estimate,
    interval: Option<dpfair_fairness::interval::Interval>,
) -> String {
    if e.mean.is_nan() {
        "-".into()
    } else if let Some(i) = interval {
        format!("{:.4} [{:.4}, {:.4}]", e.mean, i.lower, i.upper)
    } else if e.se.is_nan() {
        format!("{:.4}", e.mean)
    } else {
        format!("{:.4} ± {:.4}", e.mean, e.se)
    }
}

/// The table as Markdown: one row per (method, ε), the references first.
pub(crate) fn table(report: &Report, config: &Config) -> String {
    let intervals = report.evaluation.as_ref().map_or(String::new(), |e| {
        format!(" [{} interval]", percent(e.level))
    });
    let mut s = format!(
        "| method | ε | {}{intervals} | unfairness{intervals} | target | met | ε spent | seconds \
         | note |\n|---|---|---|---|---|---|---|---|---|\n",
        if report.regression { "MSE" } else { "accuracy" }
    );
    let majority = report.majority();
    for r in &report.rows {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.method,
            if r.epsilon.is_finite() {
                dpfair_privacy::ledger::readable(r.epsilon)
            } else if report.evaluation.is_some() {
                // The private majority class: its one release is in the evaluation's ledger.
                "-".into()
            } else {
                "not private".into()
            },
            estimate(&r.accuracy, r.accuracy_interval),
            estimate(&r.unfairness, r.unfairness_interval),
            r.target.map_or("-".into(), |t| format!("≤ {t}")),
            match r.met {
                Some(Verdict::Met) => "yes",
                Some(Verdict::Missed) => "NO",
                Some(Verdict::Undecided) => "undecided",
                None => "-",
            },
            if r.spent.is_nan() || (r.spent.is_infinite() && report.evaluation.is_some()) {
                "-".into()
            } else {
                dpfair_privacy::ledger::readable_up(r.spent)
            },
            // A simulation's table repeats exactly from its seed: its times go to stderr.
            if r.seconds.is_nan() || config.simulated_noise {
                "-".into()
            } else {
                format!("{:.2}", r.seconds)
            },
            note(r, majority, report),
        ));
    }
    s.push_str(&if let Some(e) = &report.evaluation {
        let entries = e.ledger.entries().len();
        let readable = dpfair_privacy::ledger::readable_up;
        let lpct = report
            .rows
            .iter()
            .any(|r| r.method == Method::Lpct.name() || r.method == Method::LpctPrune.name());
        let (released, figures, constant) = match report.classes {
            0 => (
                format!(
                    "the sum of squared errors (Laplace noise) at {:.2} of that ε and the group × \
                     bin counts of the predictions (exact discrete Laplace noise) at the rest",
                    compare::other_targets::MSE_SHARE
                ),
                format!(
                    "MSE = mean squared error of predictions and targets clipped to \
                     --target-range; unfairness = Kolmogorov–Smirnov distance between groups of \
                     the predictions in {} equal bins of that range",
                    compare::other_targets::BINS
                ),
                "The training mean is the held-out rows' mean released at ε/2 and its MSE at ε/2"
                    .to_string(),
            ),
            2 => (
                "one private group report (group × label × prediction counts, exact discrete \
                 Laplace noise)"
                    .to_string(),
                format!("Unfairness = {}", measure(report.constraint)),
                "The majority class is the held-out rows' more frequent class by the noisy counts"
                    .to_string(),
            ),
            _ => (
                "the group × label × prediction counts (exact discrete Laplace noise)".to_string(),
                "Unfairness = DP2DP's multi-class U (the largest spread over groups of a class's \
                 rate)"
                    .to_string(),
                "The majority class is the class with the most held-out rows by the noisy group × \
                 label counts"
                    .to_string(),
            ),
        };
        format!(
            "\n{} held-out rows, {} repetition(s). **Private figures**: each fit's predictions of \
             the held-out rows, and the constant reference, were released once at ε = {} \
             (replace-one neighbours): {released}; ε = {} in all on the held-out rows, {entries} \
             ledger entries (the evaluation ledger). Each figure is a point value from the noisy \
             release with a {} interval for the mean of the fits' population figures, covering \
             the noise and the sampling of the held-out rows (docs/evaluation.md). {figures}; a \
             target is met when its interval lies at or below it, missed above it, undecided when \
             it straddles it. {constant}; the non-private reference is left out \
             (--exact-evaluation shows it). δ = {} for every fit. The whole table: ε = {}, δ = {} \
             (per repetition the larger of the fits' sum and the held-out releases' sum, summed \
             over repetitions).{}\n",
            report.test_rows,
            config.repetitions,
            dpfair_privacy::ledger::readable(e.epsilon),
            readable(e.ledger.total().map_or(f64::NAN, |t| t.epsilon)),
            percent(e.level),
            config.delta,
            readable(e.table.0),
            e.table.1,
            if lpct {
                " The LPCT rows' public sample is simulated with training rows: the whole-table \
                 bound does not cover those rows."
            } else {
                ""
            }
        )
    } else if report.regression {
        format!(
            "\n{} held-out rows, {} repetition(s); MSE = mean squared error, unfairness = \
             statistical parity in Kolmogorov–Smirnov distance (the largest between two groups); \
             a target is met within the two-sample KS test's 95% critical value at the held-out \
             group sizes. δ = {} for every fit.\n",
            report.test_rows, config.repetitions, config.delta
        )
    } else {
        format!(
            "\n{} held-out rows, {} repetition(s); unfairness = {}; a target is met within the \
             one-sided 95% sampling bound at the held-out group sizes. δ = {} for every fit.\n",
            report.test_rows,
            config.repetitions,
            if report.classes == 2 {
                measure(report.constraint)
            } else {
                "DP2DP's multi-class U"
            },
            config.delta
        )
    });
    if report.constraint != Constraint::DemographicParity {
        s.push_str(&format!(
            "\nUnder {}, cdp-fair, decoupled and group-thresholds are fitted to the constraint \
             (CDP-Fair and decoupled through group thresholds); the other methods are fitted as \
             always and do not target it: their target column shows `-`.\n",
            report.constraint
        ));
    }
    s
}

/// What a binary target's unfairness column measures under `constraint`.
fn measure(constraint: Constraint) -> &'static str {
    match constraint {
        Constraint::DemographicParity => "demographic-parity difference",
        Constraint::EqualOpportunity => {
            "equal-opportunity difference (of the groups' true-positive rates, largest minus \
             smallest)"
        }
        Constraint::EqualizedOdds => {
            "equalized-odds difference (the larger of the groups' true- and false-positive \
             rates' differences, each largest minus smallest)"
        }
    }
}

/// A warning when a method is no better than the constant reference (the majority class; the
/// training mean of a real target), or why it refused or failed.
fn note(r: &Row, constant: Option<&Row>, report: &Report) -> String {
    if let Some(e) = &r.error {
        return e.to_string().replace('|', "/");
    }
    let reference = r.method == compare::MAJORITY || r.method == compare::MEAN;
    // Private figures: below when the two intervals do not meet.
    let below = |c: &Row| match (r.accuracy_interval, c.accuracy_interval) {
        (Some(a), Some(b)) => a.upper < b.lower,
        _ => r.accuracy.mean < c.accuracy.mean,
    };
    let weak = match constant.map(|c| (c.accuracy.mean, c)) {
        Some((m, c)) if !reference && report.regression && r.accuracy.mean >= m && c.fits > 0 => {
            format!(
                "no better than the training mean{}",
                paired_difference(&r.versus_constant, "MSE")
            )
        }
        Some((_, c)) if !reference && !report.regression && below(c) => {
            format!(
                "below the majority class{}",
                paired_difference(&r.versus_constant, "accuracy")
            )
        }
        Some((m, _))
            if !reference
                && !report.regression
                && report.evaluation.is_some()
                && r.accuracy.mean <= m =>
        {
            "no better than the majority class".into()
        }
        _ => match constant.map(|c| c.accuracy.mean) {
            Some(m)
                if !reference
                    && !report.regression
                    && r.accuracy.mean <= m + report.tolerance / 2.0 =>
            {
                "no better than the majority class".into()
            }
            _ => String::new(),
        },
    };
    if r.constant_fits > 0 && !reference {
        let checked = format!(
            "held-out check: {} in {} of {} fit(s)",
            if report.regression {
                "the released mean"
            } else {
                "a constant class"
            },
            r.constant_fits,
            r.fits
        );
        return if weak.is_empty() {
            checked
        } else {
            format!("{weak}; {checked}")
        };
    }
    weak
}

/// ` (MSE +d ± se from it, paired over the repetitions)`: the mean difference `d` in `what` from
/// the constant reference on the same splits, with its standard error (free of the
/// split-to-split spread both share); empty with one repetition. No verdict: a fallback to a
/// privately released constant differs from the exact one by that release's noise, a
/// difference that enough held-out rows always resolve (docs/privacy.md, "The held-out check").
fn paired_difference(d: &compare::Estimate, what: &str) -> String {
    if d.se.is_nan() {
        return String::new();
    }
    format!(
        " ({what} {:+.4} ± {:.4} from it, paired over the repetitions)",
        d.mean, d.se
    )
}

/// Accuracy (or MSE) against unfairness: one curve per method through its ε values, one
/// colour-blind-safe hue per method, each point labelled with its ε and marked when the
/// held-out check made the model a constant (in most of its fits) or the fairness target was
/// missed; the target as a vertical line. `label` is added to the title.
pub(crate) fn frontier(report: &Report, path: &std::path::Path, label: Option<&str>) -> CliResult {
    let constant = |r: &&compare::Row| r.method == compare::MAJORITY || r.method == compare::MEAN;
    let mut curves: Vec<Curve> = Vec::new();
    for r in report
        .rows
        .iter()
        .filter(|r| !r.accuracy.mean.is_nan() && !constant(r))
    {
        // A private figure's interval as error bars; else the standard error as a band.
        let bars = r
            .accuracy_interval
            .zip(r.unfairness_interval)
            .map(|(a, u)| Bars {
                x: [u.lower, u.upper],
                y: [a.lower, a.upper],
            });
        let point = Point {
            x: r.unfairness.mean,
            y: r.accuracy.mean,
            band: if r.accuracy.se.is_nan() || bars.is_some() {
                0.0
            } else {
                r.accuracy.se
            },
        };
        let flag = if r.fits > 0 && 2 * r.constant_fits > r.fits {
            Flag::Constant
        } else if r.met == Some(Verdict::Missed) {
            Flag::Missed
        } else {
            Flag::Plain
        };
        let text = if r.epsilon.is_finite() {
            format!("ε = {}", dpfair_privacy::ledger::readable(r.epsilon))
        } else {
            String::new()
        };
        let note = Note { text, flag };
        match curves.iter_mut().find(|c| c.label == r.method) {
            Some(c) => {
                c.points.push(point);
                c.notes.push(note);
                c.bars.extend(bars);
            }
            None => curves.push(Curve {
                label: r.method.clone(),
                points: vec![point],
                notes: vec![note],
                bars: bars.into_iter().collect(),
            }),
        }
    }
    let what = if report.regression {
        "held-out MSE against unfairness"
    } else {
        "held-out accuracy against unfairness"
    };
    let title = match label {
        Some(label) => format!("{what} ({label})"),
        None => what.to_string(),
    };
    // The constant reference as a horizontal line across the plotted range.
    let (x0, x1) = curves
        .iter()
        .flat_map(|c| c.points.iter())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
            (lo.min(p.x), hi.max(p.x))
        });
    let references: Vec<Curve> = report
        .rows
        .iter()
        .filter(|r| constant(r) && !r.accuracy.mean.is_nan() && x0 <= x1)
        .map(|r| Curve {
            label: format!("{} (the constant reference)", r.method),
            points: [x0, x1]
                .iter()
                .map(|&x| Point {
                    x,
                    y: r.accuracy.mean,
                    band: 0.0,
                })
                .collect(),
            notes: Vec::new(),
            bars: Vec::new(),
        })
        .collect();
    let target = report.rows.iter().find_map(|r| r.target);
    let target_label = target.map(|t| format!("fairness target {t}"));
    let x_label = match report.constraint {
        Constraint::DemographicParity => {
            "unfairness (demographic-parity difference; DP2DP: its multi-class U)".to_string()
        }
        other => format!("unfairness ({} difference)", other),
    };
    draw_figure(
        path,
        &Figure {
            title: &title,
            x_label: if report.regression {
                "unfairness (KS distance between groups)"
            } else {
                &x_label
            },
            y_label: if report.regression {
                "MSE (lower is better)"
            } else {
                "accuracy"
            },
            curves: &curves,
            lines: true,
            envelope: None,
            references: &references,
            vertical: target.zip(target_label.as_deref()),
        },
    )
    .map_err(|e| CliError::Internal(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paired_difference_gives_the_mean_and_its_standard_error() {
        let d = |mean, se| paired_difference(&compare::Estimate { mean, se }, "MSE");
        assert_eq!(
            d(0.011, 0.0064),
            " (MSE +0.0110 ± 0.0064 from it, paired over the repetitions)"
        );
        assert!(d(-0.0004, 0.0004).contains("MSE -0.0004 ± 0.0004"));
        // One repetition: no standard error, nothing to say.
        assert_eq!(d(0.011, f64::NAN), "");
    }
}
