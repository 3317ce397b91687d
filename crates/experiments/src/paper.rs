//! The trait each paper implements, and what its cells return.

use crate::demo::DemoMethod;
use crate::error::Result;
use crate::grid::{Cell, Grid};
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
    /// Where it comes from (e.g. "Table II", "spec §4.6 notebook").
    pub source: String,
    pub dataset: String,
    pub method: String,
    pub epsilon: f64,
    pub fairness_level: Option<f64>,
    /// `None`: any parameters (the first matching setting); `Some`: exactly these.
    pub params: Option<crate::grid::Params>,
    pub metric: String,
    pub value: f64,
    /// |ours − paper| ≤ tolerance counts as reproduced.
    pub tolerance: f64,
}

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
        }
    }

    /// At fairness level `level` (builder style).
    pub fn at_level(mut self, level: f64) -> Self {
        self.fairness_level = Some(level);
        self
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
        }
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
    /// The name `dpfair reproduce NAME` takes (e.g. `seed003`).
    fn name(&self) -> &'static str;
    /// One line: the paper and what is reproduced.
    fn description(&self) -> &'static str;
    /// The grid at `scale`.
    fn grid(&self, scale: Scale) -> Grid;
    /// Run one cell (one repetition of one setting) and return its metrics. Must be
    /// deterministic given `cell` (draw all randomness from `cell.seed`).
    fn run(&self, cell: &Cell) -> Result<Outcome>;
    /// The paper's numbers, with tolerances, for report.md.
    fn references(&self) -> Vec<Reference> {
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
