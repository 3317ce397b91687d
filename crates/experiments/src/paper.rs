//! The trait each paper implements, and what its cells return.

use crate::demo::DemoMethod;
use crate::error::Result;
use crate::grid::{Cell, Grid};
use crate::verdict::Verdict;
use dpfair_privacy::Ledger;

/// Which grid to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Minutes on 2 cores: few repetitions, a subset of the grid.
    Quick,
    /// The paper's whole grid.
    Full,
}

/// What one cell (one repetition of one setting) produced.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    /// `(metric, value)` in the order they should appear.
    pub metrics: Vec<(String, f64)>,
    /// The ε the ledger says was spent (at the setting's δ); `None` for non-private cells.
    pub epsilon_spent: Option<f64>,
}

impl Outcome {
    pub fn new() -> Self {
        Outcome::default()
    }

    /// Add a metric (builder style).
    pub fn metric(mut self, name: &str, value: f64) -> Self {
        self.metrics.push((name.to_string(), value));
        self
    }

    /// Record the ε the ledger reports as spent.
    pub fn spent(mut self, ledger: &Ledger) -> Result<Self> {
        self.epsilon_spent = Some(ledger.total()?.epsilon);
        Ok(self)
    }

    /// Record a spent ε directly (e.g. an accountant's value).
    pub fn spent_epsilon(mut self, epsilon: f64) -> Self {
        self.epsilon_spent = Some(epsilon);
        self
    }
}

/// A number the paper reports, for report.md: matched against our aggregated result with the same
/// dataset, method, ε, metric (and fairness level / params when given).
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    /// Where it comes from (e.g. "Table II", "the authors' notebook").
    pub source: String,
    pub dataset: String,
    pub method: String,
    pub epsilon: f64,
    pub fairness_level: Option<f64>,
    /// `None`: any parameters (the first matching setting); `Some`: exactly these.
    pub params: Option<crate::grid::Params>,
    pub metric: String,
    pub value: f64,
    /// The band |ours − paper| must fall in: the paper's stated band, or a sampling bound
    /// derived from the paper's own spread — never from ours; our sampling error enters the
    /// verdict through our interval ([`crate::verdict::compare`]).
    pub tolerance: f64,
    /// `None`: any accounting mode (the first matching setting); `Some`: only rows of this mode
    /// (`strict`, `paper`, `none`).
    pub accounting: Option<String>,
    /// Why ours may differ, printed beside a miss (no reason: the report says "unexplained").
    pub reason: Option<Reason>,
    /// Whether `value` is a number the paper prints (false: a number measured by running the
    /// authors' code, or derived; `source` says which).
    pub printed: bool,
    /// The run chose a configuration per setting (the paper's oracle selection over a grid):
    /// the setting's other metrics are that configuration's values (`p`, `lambda`, …), shown
    /// beside the setting.
    pub chosen_configuration: bool,
}

/// Why a reference row misses: a short measured reason and the deviation it comes from, an
/// anchor of `docs/deviations.md` (e.g. `lpct-prune-threshold-constants`).
#[derive(Clone, Debug, PartialEq)]
pub struct Reason {
    /// Anchor in `docs/deviations.md` (without `#`); empty when the reason is not a deviation.
    pub deviation: String,
    /// One sentence with the measured effect.
    pub text: String,
    /// `Some(true)`: the reason explains a miss below the paper's number only (`Some(false)`:
    /// above only); a miss on the other side is reported as unexplained.
    pub below: Option<bool>,
}

/// The in-repo page the reports link to for the reasons behind misses.
pub const DEVIATIONS_PAGE: &str = "docs/deviations.md";

impl Reference {
    /// A reference with no fairness level and any parameters.
    pub fn new(
        source: &str,
        dataset: &str,
        method: &str,
        epsilon: f64,
        metric: &str,
        value: f64,
        tolerance: f64,
    ) -> Self {
        Reference {
            source: source.into(),
            dataset: dataset.into(),
            method: method.into(),
            epsilon,
            fairness_level: None,
            params: None,
            metric: metric.into(),
            value,
            tolerance,
            accounting: None,
            reason: None,
            printed: true,
            chosen_configuration: false,
        }
    }

    /// The matched setting's other metrics describe the configuration the run chose (builder
    /// style; see [`Reference::chosen_configuration`]).
    pub fn showing_chosen_configuration(mut self) -> Self {
        self.chosen_configuration = true;
        self
    }

    /// At fairness level `level` (builder style).
    pub fn at_level(mut self, level: f64) -> Self {
        self.fairness_level = Some(level);
        self
    }

    /// Only with these method parameters (builder style).
    pub fn with_params(mut self, params: crate::grid::Params) -> Self {
        self.params = Some(params);
        self
    }

    /// Only rows of accounting mode `accounting` (builder style).
    pub fn in_mode(mut self, accounting: &str) -> Self {
        self.accounting = Some(accounting.into());
        self
    }

    /// The reason a miss has: deviation `anchor` of [`DEVIATIONS_PAGE`] and the measured effect
    /// (builder style).
    pub fn explained_by(mut self, anchor: &str, text: impl Into<String>) -> Self {
        self.reason = Some(Reason {
            deviation: anchor.into(),
            text: text.into(),
            below: None,
        });
        self
    }

    /// As [`Reference::explained_by`] for a reason that explains a miss below the paper's
    /// number only (`below = true`) or above it only (`false`): a miss on the other side says
    /// "unexplained" (builder style).
    pub fn explained_on_side(mut self, anchor: &str, text: impl Into<String>, below: bool) -> Self {
        self = self.explained_by(anchor, text);
        if let Some(r) = &mut self.reason {
            r.below = Some(below);
        }
        self
    }

    /// The value is not printed in the paper but measured by running the authors' code or
    /// derived (builder style; `source` says how).
    pub fn not_printed(mut self) -> Self {
        self.printed = false;
        self
    }
}

/// A pass/fail statement about the aggregated results, for report.md (e.g. "mean |DD| ≤ α + 0.02
/// at N ≥ 5,000"): what the paper's claims or the project's targets say about our own numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    pub name: String,
    pub passed: bool,
    /// The numbers behind the verdict (one line, or a few separated by `; `).
    pub detail: String,
    /// For a statistical comparison: the smallest effect it detects at the run's repetitions.
    pub power: Option<crate::stats::Power>,
    /// The verdict does not depend on sampling (a ledger total, a count): never smoke.
    pub exact: bool,
    /// Why a failing check fails (anchor and measured reason), as for a reference.
    pub reason: Option<Reason>,
    /// A failure only means the claimed effect was not found (no significant contrary
    /// evidence, e.g. a trend without reversals): with too little power it is underpowered.
    pub failure_is_absence: bool,
    /// The repetitions cannot decide the claim (e.g. it holds only within our intervals, or
    /// the intervals reach across its band): the verdict is *underpowered* whatever `passed`.
    pub undecided: bool,
}

impl Check {
    pub fn new(name: &str, passed: bool, detail: impl Into<String>) -> Self {
        Check {
            name: name.into(),
            passed,
            detail: detail.into(),
            power: None,
            exact: false,
            reason: None,
            failure_is_absence: false,
            undecided: false,
        }
    }

    /// The repetitions cannot decide this check (builder style; see [`Check::undecided`]).
    pub fn undecided_if(mut self, undecided: bool) -> Self {
        self.undecided = undecided;
        self
    }

    /// A directional claim ([`crate::stats::direction`]) with its power: a failure without a
    /// significant reversal is an absence of evidence.
    pub fn trend(name: &str, d: &crate::stats::Direction, detail: impl Into<String>) -> Self {
        let mut c = Check::new(name, d.passed, detail).with_power(d.power.clone());
        c.failure_is_absence = d.reversals.is_empty();
        c
    }

    /// The verdict (`docs/reproductions.md`): an exact check passes or fails; a statistical
    /// one is *underpowered* when marked [`Check::undecided`], or when it passes (or fails for want of the effect only) while its
    /// power cannot resolve the claim — means of one repetition (no finite detectable effect)
    /// or a detectable effect above the effect to resolve.
    pub fn verdict(&self) -> Verdict {
        let decided = if self.passed {
            Verdict::Within
        } else {
            Verdict::Miss
        };
        if self.exact {
            return decided;
        }
        if self.undecided {
            return Verdict::Underpowered;
        }
        let weak = self.power.as_ref().is_some_and(|p| {
            !p.min_effect.is_finite() || p.claimed_effect.is_some_and(|e| p.min_effect > e.abs())
        });
        if weak && (self.passed || self.failure_is_absence) {
            Verdict::Underpowered
        } else {
            decided
        }
    }

    /// With its power statement (builder style).
    pub fn with_power(mut self, power: crate::stats::Power) -> Self {
        self.power = Some(power);
        self
    }

    /// With the size of the effect the paper shows, to compare with the power (builder style).
    pub fn claimed_effect(mut self, effect: f64) -> Self {
        if let Some(p) = self.power.as_mut() {
            p.claimed_effect = Some(effect);
        }
        self
    }

    /// A verdict that does not rest on sampling (builder style).
    pub fn exact(mut self) -> Self {
        self.exact = true;
        self
    }

    /// The reason a failure has (builder style; see [`Reference::explained_by`]).
    pub fn explained_by(mut self, anchor: &str, text: impl Into<String>) -> Self {
        self.reason = Some(Reason {
            deviation: anchor.into(),
            text: text.into(),
            below: None,
        });
        self
    }

    /// How much the verdict can be trusted at `scale`: `exact` (no sampling), `evidence` (the
    /// check resolves the paper's effect, or at `--full` no effect size is known to compare
    /// with), `underpowered` (the minimal detectable effect exceeds the paper's effect) or
    /// `smoke` (at `--quick`, anything the check cannot resolve).
    pub fn evidence(&self, scale: Scale) -> &'static str {
        if self.exact {
            return "exact";
        }
        let power = self.power.as_ref();
        if power.is_some_and(|p| p.resolves_claim()) {
            return "evidence";
        }
        // No finite detectable effect (means of one repetition) or one above the paper's.
        let unresolved =
            power.is_some_and(|p| !p.min_effect.is_finite() || p.claimed_effect.is_some());
        match scale {
            Scale::Quick => "smoke",
            Scale::Full if unresolved => "underpowered",
            Scale::Full => "evidence",
        }
    }
}

/// The x axis of a plot.
#[derive(Clone, Debug, PartialEq)]
pub enum Axis {
    Epsilon,
    FairnessLevel,
    /// A method parameter (numeric).
    Param(String),
    /// Another metric's mean (trade-off curves: fairness vs accuracy).
    Metric(String),
}

/// What one curve of a plot groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Series {
    Method,
    Epsilon,
    MethodAndEpsilon,
}

/// Lower envelopes on a trade-off plot (Xian et al., Figs. 3–4): the lower convex hull
/// of the plotted mean points, from the smallest x to the largest (Andrew's monotone chain; what
/// the authors read off scipy's `ConvexHull`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Envelope {
    /// No envelope (the default).
    #[default]
    None,
    /// Draw the curves and, in black, one lower envelope over all their points (Fig. 3).
    Overlay,
    /// Replace each series by the lower envelope of its points (Fig. 4: one envelope per ε over
    /// every other setting).
    PerSeries,
}

/// A reference line the paper draws (dashed grey): a straight line `y = intercept + slope·x`
/// (`y = x`, `y = 0.3`, `y = 0.3 + ρ`) or stored points (e.g. an oracle's risk curve).
#[derive(Clone, Debug, PartialEq)]
pub enum RefLine {
    Linear {
        label: String,
        intercept: f64,
        slope: f64,
    },
    Points {
        label: String,
        points: Vec<(f64, f64)>,
    },
}

impl RefLine {
    /// `y = intercept + slope·x`.
    pub fn linear(label: &str, intercept: f64, slope: f64) -> Self {
        RefLine::Linear {
            label: label.into(),
            intercept,
            slope,
        }
    }

    /// `y = x`.
    pub fn identity() -> Self {
        RefLine::linear("y = x", 0.0, 1.0)
    }

    /// `y = value`.
    pub fn horizontal(label: &str, value: f64) -> Self {
        RefLine::linear(label, value, 0.0)
    }

    pub fn label(&self) -> &str {
        match self {
            RefLine::Linear { label, .. } | RefLine::Points { label, .. } => label,
        }
    }
}

/// A trade-off plot: one curve per series, mean of `y` with its 95% band, over `x`.
#[derive(Clone, Debug, PartialEq)]
pub struct PlotSpec {
    /// File name in the output directory (`.svg`).
    pub file: String,
    pub title: String,
    /// Restrict to one data set (`None`: all rows).
    pub dataset: Option<String>,
    pub x: Axis,
    pub y: String,
    pub series: Series,
    pub log_x: bool,
    /// Only rows of these methods (`None`: all).
    pub methods: Option<Vec<String>>,
    /// Only rows at this ε (`None`: all).
    pub epsilon: Option<f64>,
    /// Only rows whose parameters include each `(name, value)` (empty: all).
    pub param_filter: Vec<(String, String)>,
    /// Leave out rows whose parameter `name` equals `value`, for each `(name, value)` (empty: none).
    pub param_exclude: Vec<(String, String)>,
    /// Label curves by this parameter instead of [`PlotSpec::series`] (`k = 36`; rows without
    /// the parameter are labelled by their method).
    pub series_param: Option<String>,
    /// Lower envelopes (default none).
    pub envelope: Envelope,
    /// The paper's reference lines (dashed grey).
    pub reference_lines: Vec<RefLine>,
}

impl PlotSpec {
    pub fn new(file: &str, title: &str, x: Axis, y: &str, series: Series) -> Self {
        PlotSpec {
            file: file.into(),
            title: title.into(),
            dataset: None,
            x,
            y: y.into(),
            series,
            log_x: false,
            methods: None,
            epsilon: None,
            param_filter: Vec::new(),
            param_exclude: Vec::new(),
            series_param: None,
            envelope: Envelope::None,
            reference_lines: Vec::new(),
        }
    }

    /// Add a reference line (builder style; repeatable).
    pub fn reference(mut self, line: RefLine) -> Self {
        self.reference_lines.push(line);
        self
    }

    /// Only rows of `methods` (builder style).
    pub fn for_methods<I, S>(mut self, methods: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.methods = Some(methods.into_iter().map(Into::into).collect());
        self
    }

    /// Only rows at ε = `epsilon` (builder style; `f64::INFINITY` selects the non-private rows).
    pub fn for_epsilon(mut self, epsilon: f64) -> Self {
        self.epsilon = Some(epsilon);
        self
    }

    /// Only rows whose parameter `name` equals `value` (builder style; repeatable).
    pub fn for_param(mut self, name: &str, value: impl std::fmt::Display) -> Self {
        self.param_filter.push((name.into(), value.to_string()));
        self
    }

    /// Leave out rows whose parameter `name` equals `value` (builder style; repeatable).
    pub fn without_param(mut self, name: &str, value: impl std::fmt::Display) -> Self {
        self.param_exclude.push((name.into(), value.to_string()));
        self
    }

    /// One curve per value of parameter `name` (builder style).
    pub fn series_by_param(mut self, name: &str) -> Self {
        self.series_param = Some(name.into());
        self
    }

    /// Add the lower envelope over all points, in black (builder style; Fig. 3 of Xian et al.).
    pub fn lower_envelope(mut self) -> Self {
        self.envelope = Envelope::Overlay;
        self
    }

    /// Draw each series as the lower envelope of its points (builder style; Fig. 4 of Xian et al.).
    pub fn envelope_per_series(mut self) -> Self {
        self.envelope = Envelope::PerSeries;
        self
    }

    /// Only rows of `dataset` (builder style).
    pub fn for_dataset(mut self, dataset: &str) -> Self {
        self.dataset = Some(dataset.into());
        self
    }

    /// Logarithmic x axis (builder style).
    pub fn log_x(mut self) -> Self {
        self.log_x = true;
        self
    }
}

/// One paper's experiments. See the crate docs, "How to add a paper".
pub trait Paper: Sync {
    /// The name `dpfair reproduce NAME` takes (e.g. `decoupled`).
    fn name(&self) -> &'static str;
    /// One line: the paper and what is reproduced.
    fn description(&self) -> &'static str;
    /// The grid at `scale`.
    fn grid(&self, scale: Scale) -> Grid;
    /// Run one cell (one repetition of one setting) and return its metrics. Must be
    /// deterministic given `cell` (draw all randomness from `cell.seed`).
    fn run(&self, cell: &Cell) -> Result<Outcome>;
    /// Orders the cells about to run (`pending`, in grid order) and notes what they share;
    /// the default keeps the grid order. For a paper whose cells share fits across settings
    /// (fdp-fair: one seed's fits serve its whole α and ε sweep), running a seed's cells
    /// together lets a fit be made once and dropped soon after. Results must not depend on the
    /// order (each cell is deterministic given its seed).
    fn schedule(&self, _pending: &mut Vec<Cell>) {}
    /// The paper's numbers, with tolerances, for report.md.
    fn references(&self) -> Vec<Reference> {
        Vec::new()
    }
    /// The paper's numbers for a run of `repetitions` repetitions per setting (what report.md
    /// uses). Override when a tolerance depends on the number of repetitions averaged (e.g.
    /// c·std/√repetitions); the default is [`Paper::references`].
    fn references_at(&self, repetitions: usize) -> Vec<Reference> {
        let _ = repetitions;
        self.references()
    }
    /// Checks of the aggregated results, for report.md (none by default).
    fn checks(&self, _rows: &[crate::aggregate::Summary]) -> Vec<Check> {
        Vec::new()
    }
    /// The plots to draw from the aggregated results.
    fn plots(&self) -> Vec<PlotSpec> {
        Vec::new()
    }
    /// Methods this paper contributes to `dpfair demo`.
    fn demo(&self) -> Vec<DemoMethod> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{Power, direction, min_detectable_effect};

    fn power(min_effect: f64, claimed: Option<f64>) -> Power {
        Power {
            min_effect,
            repetitions: 2,
            claimed_effect: claimed,
        }
    }

    /// A check over means of 2 repetitions whose detectable effect exceeds the effect to
    /// resolve is underpowered when it passes, and when it fails for want of the effect only;
    /// a significant contrary finding is a failure at any power.
    #[test]
    fn a_two_repetition_check_with_a_wide_interval_is_underpowered() {
        // SE 0.01 from 2 repetitions (ν = 1): detects (6.314 + 1.376)·0.01 = 0.077 > 0.01.
        let mde = min_detectable_effect(0.01, 1.0);
        assert!((mde - 0.0769).abs() < 1e-3, "{mde}");
        let weak = || power(mde, Some(0.01));
        let pass = Check::new("c", true, "").with_power(weak());
        assert_eq!(pass.verdict(), Verdict::Underpowered);
        let fail = Check::new("c", false, "").with_power(weak());
        assert_eq!(
            fail.verdict(),
            Verdict::Miss,
            "a bound exceeded beyond its allowance"
        );
        // One repetition: no finite detectable effect, whatever the claim.
        let one = Check::new("c", true, "").with_power(power(f64::INFINITY, None));
        assert_eq!(one.verdict(), Verdict::Underpowered);
        // Enough power decides; an exact check is never underpowered.
        let strong = Check::new("c", true, "").with_power(power(0.005, Some(0.01)));
        assert_eq!(strong.verdict(), Verdict::Within);
        let exact = Check::new("c", true, "")
            .with_power(power(f64::INFINITY, None))
            .exact();
        assert_eq!(exact.verdict(), Verdict::Within);
    }

    #[test]
    fn a_trend_without_its_effect_is_underpowered_but_a_reversal_fails() {
        let s = |mean: f64| {
            crate::aggregate::Summary::of(
                crate::grid::Setting {
                    dataset: "d".into(),
                    method: "m".into(),
                    accounting: "strict".into(),
                    epsilon: 1.0,
                    delta: 0.0,
                    fairness_level: None,
                    params: crate::grid::Params::new(),
                },
                "error",
                mean,
                0.02,
                2,
            )
        };
        let (a, b, c) = (s(0.20), s(0.199), s(0.60));
        // A fall of 0.001 with SE 0.02 from 2 repetitions: no evidence, no reversal.
        let flat = direction(&[("1".into(), &a, &b)], -1.0).expect("a pair");
        let check = Check::trend("falls", &flat, flat.summary()).claimed_effect(0.01);
        assert!(!check.passed);
        assert_eq!(check.verdict(), Verdict::Underpowered);
        // A rise of 0.4 (t_{0.975,2}·0.02 = 0.086 at Welch ν = 2) is a significant reversal.
        let up = direction(&[("1".into(), &a, &c)], -1.0).expect("a pair");
        assert_eq!(up.reversals.len(), 1);
        let check = Check::trend("falls", &up, up.summary()).claimed_effect(0.01);
        assert_eq!(check.verdict(), Verdict::Miss);
    }
}
