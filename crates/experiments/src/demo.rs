//! `dpfair demo`: the methods on embedded synthetic data (no download), compared on the same data
//! in each panel.
//!
//! * The classification panels ([`compare_panels`]) are `dpfair compare` ([`dpfair::compare`])
//!   on one synthetic data set each: every classifier that applies, at the same ε and fairness
//!   level, scored on the same held-out rows beside the majority class and a non-private
//!   reference.
//! * The regression panel runs the methods registered through their paper's
//!   [`crate::Paper::demo`] ([`DemoMethod`], see the crate docs) on one regression data set
//!   ([`DemoData`]), and reports utility (MSE), the paper's fairness measure and the privacy the
//!   ledger says was spent.

use crate::error::{ExpError, Result};
use crate::plot::{Curve, Point, draw};
use dpfair_data::Dataset;
use dpfair_data::synthetic::{
    Design, FdpFairDesign, GaussianMixtureDesign, LawLikeDesign, LpctDesign, TwoGroupLogisticDesign,
};
use dpfair_privacy::Ledger;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A train/test pair.
pub type TrainTest = (Dataset, Dataset);

/// One classification panel: a synthetic data set for [`dpfair::compare::compare`] (which
/// splits it into training and held-out rows itself).
pub struct ComparePanel {
    /// What the data are, for the panel's heading.
    pub title: &'static str,
    /// The file name of the panel's frontier plot.
    pub plot: &'static str,
    pub data: dpfair_data::Loaded,
    /// Public feature bounds from the panel's synthetic design ([`two_group_bounds`]): known
    /// without reading a row, so the fits spend nothing on bounds.
    pub bounds: dpfair_data::Bounds,
}

/// How many standard deviations of a design's Gaussian noise its public bounds reach beyond
/// the noise's mean (a value falls outside with probability 6·10⁻⁵ and is clipped).
const DESIGN_BOUNDS_SDS: f64 = 4.0;

/// Public bounds of a Gaussian design's features: column `j` is `N(mean, 1)` with `mean`
/// among `means[j]` (the design's own constants, not the data), bounded by the smallest and
/// largest mean ∓ [`DESIGN_BOUNDS_SDS`].
fn gaussian_bounds(means: &[Vec<f64>]) -> dpfair_data::Bounds {
    dpfair_data::Bounds(
        means
            .iter()
            .enumerate()
            .map(|(j, m)| {
                let lo = m.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = m.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                (
                    format!("x{j}"),
                    (lo - DESIGN_BOUNDS_SDS, hi + DESIGN_BOUNDS_SDS),
                )
            })
            .collect(),
    )
}

/// The public bounds of the two-group logistic design's features: `x0 ~ N(±shift, 1)`, the
/// others `N(0, 1)`.
///
/// ```
/// use dpfair_data::synthetic::TwoGroupLogisticDesign;
/// let b = dpfair_experiments::demo::two_group_bounds(&TwoGroupLogisticDesign::default());
/// assert_eq!(b.0["x0"], (-4.5, 4.5));
/// assert_eq!(b.0["x4"], (-4.0, 4.0));
/// ```
pub fn two_group_bounds(design: &TwoGroupLogisticDesign) -> dpfair_data::Bounds {
    let means: Vec<Vec<f64>> = (0..design.weights.len())
        .map(|j| {
            if j == 0 {
                vec![-design.shift, design.shift]
            } else {
                vec![0.0]
            }
        })
        .collect();
    gaussian_bounds(&means)
}

/// The public bounds of the Gaussian mixture design's features: each component is
/// `N(centre, I)` with the design's public centres.
pub fn mixture_bounds(design: &GaussianMixtureDesign) -> Result<dpfair_data::Bounds> {
    let centres = design
        .centres(design.centres_seed)
        .map_err(|e| ExpError::Method(e.to_string()))?
        .centres;
    let means: Vec<Vec<f64>> = (0..design.dim)
        .map(|j| centres.iter().flatten().map(|c| c[j]).collect())
        .collect();
    Ok(gaussian_bounds(&means))
}

/// The held-out fraction the panels use: the demo's test rows among all its rows.
pub fn panel_test_fraction(size: DemoSize) -> f64 {
    size.test as f64 / (size.train + size.test) as f64
}

/// The classification panels: two groups with different base rates and a binary target (every
/// classifier applies), and six classes with two groups (DP-logistic and DP2DP apply), each of
/// `size.train + size.test` rows, with public feature bounds from its design (private bounds
/// for 20 columns on a few thousand rows would be refused as no better than a guess:
/// docs/privacy.md, "Feature bounds").
///
/// ```
/// use dpfair_experiments::demo::{DemoSize, compare_panels};
/// let panels = compare_panels(DemoSize::SMALL, 1)?;
/// assert_eq!(panels.len(), 2);
/// assert_eq!(panels[0].data.dataset.n_rows(), 2_500);
/// assert_eq!(panels[1].bounds.0.len(), 20); // public bounds for every feature
/// # Ok::<(), dpfair_experiments::ExpError>(())
/// ```
pub fn compare_panels(size: DemoSize, seed: u64) -> Result<Vec<ComparePanel>> {
    let n = size.train + size.test;
    let panel = |title, plot, design: &dyn Design, bounds| -> Result<ComparePanel> {
        let dataset = design
            .generate(n, seed)
            .map_err(|e| ExpError::Method(e.to_string()))?;
        let schema = synthetic_schema(&dataset);
        Ok(ComparePanel {
            title,
            plot,
            data: dpfair_data::Loaded::in_memory(dataset, schema),
            bounds,
        })
    };
    let binary = TwoGroupLogisticDesign::default();
    let mixture = GaussianMixtureDesign::default();
    Ok(vec![
        panel(
            "binary target, two groups with different base rates",
            "frontier_binary.svg",
            &binary,
            two_group_bounds(&binary),
        )?,
        panel(
            "six classes, two groups",
            "frontier_multiclass.svg",
            &mixture,
            mixture_bounds(&mixture)?,
        )?,
    ])
}

/// The schema of a synthetic data set: numeric features `x0, x1, …`, the groups' names, and
/// the target's classes as `0, 1, …` (or a real target).
fn synthetic_schema(data: &Dataset) -> dpfair_data::Schema {
    use dpfair_data::Target;
    use dpfair_data::schema::{FeatureColumn, SensitiveColumn, TargetColumn, TargetEncoding};
    let numbers = |k: usize| (0..k).map(|c| c.to_string()).collect::<Vec<_>>();
    dpfair_data::Schema {
        features: (0..data.features.ncols())
            .map(|j| FeatureColumn::Numeric {
                name: format!("x{j}"),
            })
            .collect(),
        sensitive: data.groups.as_ref().map(|g| SensitiveColumn {
            name: "group".into(),
            levels: g.names.clone(),
            declared: false,
        }),
        target: data.target.as_ref().map(|t| TargetColumn {
            name: "y".into(),
            encoding: match t {
                Target::Binary(_) => TargetEncoding::Binary { labels: numbers(2) },
                Target::Multiclass { k, .. } => TargetEncoding::Multiclass {
                    labels: numbers(*k),
                },
                Target::Real(_) => TargetEncoding::Real,
            },
        }),
        scaling: Default::default(),
    }
}

/// Sizes of the demo data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DemoSize {
    pub train: usize,
    pub test: usize,
}

impl DemoSize {
    /// The default: a few thousand rows, under a minute for every method on 2 cores.
    pub const DEFAULT: DemoSize = DemoSize {
        train: 6_000,
        test: 4_000,
    };
    /// For tests.
    pub const SMALL: DemoSize = DemoSize {
        train: 1_500,
        test: 1_000,
    };
}

type Cached<T> = OnceLock<std::result::Result<T, String>>;

/// The demo's synthetic data, generated on first use and shared by every method.
pub struct DemoData {
    pub size: DemoSize,
    pub seed: u64,
    binary: Cached<TrainTest>,
    fdp: Cached<TrainTest>,
    regression: Cached<TrainTest>,
    multiclass: Cached<TrainTest>,
    lpct: Cached<(Dataset, TrainTest)>,
}

fn pair(design: &dyn Design, size: DemoSize, seed: u64) -> std::result::Result<TrainTest, String> {
    let train = design
        .generate(size.train, seed)
        .map_err(|e| e.to_string())?;
    let test = design
        .generate(size.test, dpfair_data::synthetic::derive_seed(seed, 1))
        .map_err(|e| e.to_string())?;
    Ok((train, test))
}

fn get<T>(cell: &Cached<T>, init: impl FnOnce() -> std::result::Result<T, String>) -> Result<&T> {
    cell.get_or_init(init)
        .as_ref()
        .map_err(|e| ExpError::Method(e.clone()))
}

impl DemoData {
    pub fn new(size: DemoSize, seed: u64) -> Self {
        DemoData {
            size,
            seed,
            binary: OnceLock::new(),
            fdp: OnceLock::new(),
            regression: OnceLock::new(),
            multiclass: OnceLock::new(),
            lpct: OnceLock::new(),
        }
    }

    /// Binary classification with two groups of different base rates (Ghoukasian & Asoodeh-style design).
    pub fn binary(&self) -> Result<&TrainTest> {
        get(&self.binary, || {
            pair(&TwoGroupLogisticDesign::default(), self.size, self.seed)
        })
    }

    /// Xue & Yu's design (`d = 2`, features in `[0,1]²`, two groups).
    pub fn fdp(&self) -> Result<&TrainTest> {
        get(&self.fdp, || {
            pair(&FdpFairDesign::default(), self.size, self.seed)
        })
    }

    /// Regression with four groups (Law-like design of Xian et al.).
    pub fn regression(&self) -> Result<&TrainTest> {
        get(&self.regression, || {
            pair(&LawLikeDesign::default(), self.size, self.seed)
        })
    }

    /// Six classes, two groups, `p = 0.75` (Say et al.'s design).
    pub fn multiclass(&self) -> Result<&TrainTest> {
        get(&self.multiclass, || {
            pair(&GaussianMixtureDesign::default(), self.size, self.seed)
        })
    }

    /// Ma & Yang's design: (public sample of 10% of train size, (private train, test)).
    pub fn lpct(&self) -> Result<&(Dataset, TrainTest)> {
        get(&self.lpct, || {
            let d = LpctDesign::default();
            let public = d
                .public((self.size.train / 10).max(50), self.seed)
                .map_err(|e| e.to_string())?;
            Ok((public, pair(&d, self.size, self.seed)?))
        })
    }
}

/// What one demo run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct DemoResult {
    /// `accuracy` or `MSE`.
    pub utility_name: &'static str,
    pub utility: f64,
    /// E.g. `DP difference`, `U`, `KS`.
    pub fairness_name: &'static str,
    pub fairness: f64,
    /// (ε, δ) the ledger reports; `None` for non-private methods.
    pub spent: Option<(f64, f64)>,
}

impl DemoResult {
    /// A non-private result.
    pub fn new(
        utility_name: &'static str,
        utility: f64,
        fairness_name: &'static str,
        fairness: f64,
    ) -> Self {
        DemoResult {
            utility_name,
            utility,
            fairness_name,
            fairness,
            spent: None,
        }
    }

    /// Record what `ledger` says was spent (builder style).
    pub fn spent(mut self, ledger: &Ledger) -> Result<Self> {
        let t = ledger.total()?;
        self.spent = Some((t.epsilon, t.delta));
        Ok(self)
    }
}

/// One method in the demo.
#[derive(Clone, Debug)]
pub struct DemoMethod {
    pub name: &'static str,
    /// The data it runs on (for the table), e.g. `binary, 2 groups`.
    pub task: &'static str,
    /// The ε values to run (`f64::INFINITY`: non-private).
    pub epsilons: Vec<f64>,
    /// Run once at `epsilon` with a seeded noise source from `seed`.
    pub run: fn(&DemoData, f64, u64) -> Result<DemoResult>,
}

/// One row of the demo table.
#[derive(Clone, Debug)]
pub struct DemoRow {
    pub method: &'static str,
    pub task: &'static str,
    pub epsilon: f64,
    pub result: std::result::Result<DemoResult, String>,
}

/// Run every method at each of its ε (in parallel).
pub fn run_methods(methods: &[DemoMethod], data: &DemoData) -> Vec<DemoRow> {
    let jobs: Vec<(&DemoMethod, f64)> = methods
        .iter()
        .flat_map(|m| m.epsilons.iter().map(move |&e| (m, e)))
        .collect();
    jobs.par_iter()
        .map(|&(m, e)| DemoRow {
            method: m.name,
            task: m.task,
            epsilon: e,
            result: (m.run)(data, e, data.seed).map_err(|e| e.to_string()),
        })
        .collect()
}

/// The table printed by `dpfair demo`.
pub fn table(rows: &[DemoRow]) -> String {
    let mut s = format!(
        "{:<28} {:<22} {:>6}  {:<9} {:>9}  {:<14} {:>9}  {}\n",
        "method", "data", "ε", "utility", "value", "fairness", "value", "privacy spent (ledger)"
    );
    for r in rows {
        let eps = if r.epsilon.is_finite() {
            crate::present::setting(r.epsilon)
        } else {
            "∞".into()
        };
        match &r.result {
            Ok(d) => {
                let spent = match d.spent {
                    Some((e, de)) if de > 0.0 => format!("ε = {e:.4}, δ = {de:.1e}"),
                    Some((e, _)) => format!("ε = {e:.4}"),
                    None => "none (non-private)".into(),
                };
                // A method without groups has no fairness value: "-", and no point on the plot.
                let fairness = if d.fairness.is_finite() {
                    format!("{:.4}", d.fairness)
                } else {
                    "-".into()
                };
                s += &format!(
                    "{:<28} {:<22} {:>6}  {:<9} {:>9.4}  {:<14} {:>9}  {}\n",
                    r.method,
                    r.task,
                    eps,
                    d.utility_name,
                    d.utility,
                    d.fairness_name,
                    fairness,
                    spent
                );
            }
            Err(e) => s += &format!("{:<28} {:<22} {:>6}  failed: {e}\n", r.method, r.task, eps),
        }
    }
    s
}

/// File name of the demo's classification plot (fairness against accuracy).
pub const DEMO_PLOT: &str = "fairness_vs_utility.svg";
/// File name of the demo's regression plot (fairness against MSE).
pub const DEMO_PLOT_REGRESSION: &str = "fairness_vs_mse.svg";

/// Plot fairness (x) against utility (y): one curve per method through its ε values (in the
/// order run, ∞ last), accuracy methods in [`DEMO_PLOT`], MSE methods in
/// [`DEMO_PLOT_REGRESSION`] (two scales that do not share an axis). Returns the files written.
pub fn plot(rows: &[DemoRow], dir: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).map_err(|source| ExpError::Io {
        path: dir.into(),
        source,
    })?;
    // (method, utility name) -> (ε labels, points), in the rows' order.
    let mut curves: Vec<(&str, &str, Vec<String>, Vec<Point>)> = Vec::new();
    for r in rows {
        let Ok(d) = &r.result else { continue };
        if !d.fairness.is_finite() {
            // No groups, no unfairness: drawing it at 0 would read as perfectly fair.
            continue;
        }
        let eps = if r.epsilon.is_finite() {
            crate::present::setting(r.epsilon)
        } else {
            "∞".into()
        };
        let point = Point {
            x: d.fairness,
            y: d.utility,
            band: 0.0,
        };
        match curves
            .iter_mut()
            .find(|c| c.0 == r.method && c.1 == d.utility_name)
        {
            Some(c) => {
                c.2.push(eps);
                c.3.push(point);
            }
            None => curves.push((r.method, d.utility_name, vec![eps], vec![point])),
        }
    }
    let mut written = Vec::new();
    for (file, regression, y_label) in [
        (DEMO_PLOT, false, "accuracy"),
        (DEMO_PLOT_REGRESSION, true, "MSE (lower is better)"),
    ] {
        let selected: Vec<Curve> = curves
            .iter()
            .filter(|c| (c.1 == "MSE") == regression)
            .map(|(method, _, eps, points)| Curve {
                label: format!("{method}: ε = {}", eps.join(", ")),
                points: points.clone(),
                notes: eps
                    .iter()
                    .map(|e| crate::plot::Note {
                        text: format!("ε = {e}"),
                        flag: crate::plot::Flag::Plain,
                    })
                    .collect(),
                bars: Vec::new(),
            })
            .collect();
        if selected.is_empty() {
            continue;
        }
        let path = dir.join(file);
        draw(
            &path,
            &format!("dpfair demo: fairness vs {y_label} (one line per method, through its ε)"),
            "unfairness (lower is fairer)",
            y_label,
            &selected,
            true,
        )?;
        written.push(path);
    }
    Ok(written)
}
