//! Grids: the settings of an experiment (dataset, method, accounting, ε, δ, fairness level,
//! method parameters) times repetitions, each repetition with its own seed.

use crate::error::{ExpError, Result};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// Method parameters of a setting, printed `key=value;key=value` (sorted by key) in results.csv.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Params(BTreeMap<String, String>);

impl Params {
    pub fn new() -> Self {
        Params::default()
    }

    /// Add `key = value` (builder style).
    pub fn with(mut self, key: &str, value: impl fmt::Display) -> Self {
        self.0.insert(key.to_string(), value.to_string());
        self
    }

    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// Parse `key=value;…` (the results.csv form).
    pub fn parse(s: &str) -> Option<Params> {
        let mut p = Params::new();
        for kv in s.split(';').filter(|kv| !kv.is_empty()) {
            let (k, v) = kv.split_once('=')?;
            p.0.insert(k.to_string(), v.to_string());
        }
        Some(p)
    }
}

impl fmt::Display for Params {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(|(k, v)| format!("{k}={v}")).collect();
        write!(f, "{}", parts.join(";"))
    }
}

/// One point of the grid, without the repetition.
#[derive(Clone, Debug, PartialEq)]
pub struct Setting {
    pub dataset: String,
    pub method: String,
    /// `strict` (dpfair's default), `paper` (the paper's own procedure, `--accounting paper`) or
    /// `none` (non-private reference).
    pub accounting: String,
    /// The privacy parameter; `f64::INFINITY` for non-private settings.
    pub epsilon: f64,
    pub delta: f64,
    /// α, ρ, … (whatever the paper calls its fairness level); `None` for unconstrained methods.
    pub fairness_level: Option<f64>,
    pub params: Params,
}

/// Canonical text of a float (shortest round-trip form; `inf` for ∞).
pub fn fmt_f64(v: f64) -> String {
    format!("{v}")
}

impl Setting {
    /// The key results.csv rows and raw rows are matched by.
    pub fn key(&self, experiment: &str) -> String {
        [
            experiment.to_string(),
            self.method.clone(),
            self.dataset.clone(),
            self.accounting.clone(),
            fmt_f64(self.epsilon),
            fmt_f64(self.delta),
            self.fairness_level.map(fmt_f64).unwrap_or_default(),
            self.params.to_string(),
        ]
        .join("|")
    }
}

/// One repetition of one setting: what [`crate::Paper::run`] receives.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    pub setting: Setting,
    pub repetition: usize,
    /// `seed0 + repetition`: the same across settings (common random numbers, as the papers'
    /// scripts do), so that curves over ε or α compare like with like.
    pub seed: u64,
}

impl Cell {
    /// A seeded noise source for this cell's releases.
    pub fn noise(&self) -> dpfair_privacy::Noise {
        dpfair_privacy::Noise::seeded(self.seed)
    }

    /// Method parameter `key`, parsed; an error naming the cell and the parameter otherwise.
    pub fn param<T: FromStr>(&self, key: &str) -> Result<T>
    where
        T::Err: fmt::Display,
    {
        let raw = self
            .setting
            .params
            .get_str(key)
            .ok_or_else(|| ExpError::Parameter {
                cell: self.to_string(),
                parameter: key.to_string(),
                reason: "missing".into(),
            })?;
        raw.parse().map_err(|e: T::Err| ExpError::Parameter {
            cell: self.to_string(),
            parameter: key.to_string(),
            reason: format!("`{raw}`: {e}"),
        })
    }

    /// The fairness level, or an error naming the cell.
    pub fn fairness_level(&self) -> Result<f64> {
        self.setting
            .fairness_level
            .ok_or_else(|| ExpError::Parameter {
                cell: self.to_string(),
                parameter: "fairness_level".into(),
                reason: "missing".into(),
            })
    }
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.setting;
        write!(
            f,
            "{}/{} ε={} δ={} α={} {} [{}] rep {}",
            s.dataset,
            s.method,
            s.epsilon,
            s.delta,
            s.fairness_level.map(fmt_f64).unwrap_or("-".into()),
            s.accounting,
            s.params,
            self.repetition
        )
    }
}

/// The settings of an experiment and how many repetitions each gets.
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    pub settings: Vec<Setting>,
    /// The repetitions of every setting without an entry in `repetition_overrides`.
    pub repetitions: usize,
    /// Repetition `r` uses seed `seed0 + r`.
    pub seed0: u64,
    /// Settings with their own repetition count (a sweep given [`Sweep::repetitions`]), keyed
    /// by [`Setting::key`] without the experiment name, so that it survives reordering or
    /// filtering `settings`.
    pub repetition_overrides: BTreeMap<String, usize>,
}

impl Grid {
    pub fn new(repetitions: usize, seed0: u64) -> Self {
        Grid {
            settings: Vec::new(),
            repetitions,
            seed0,
            repetition_overrides: BTreeMap::new(),
        }
    }

    /// Add every setting of `sweep` (builder style), with the sweep's own repetition count if
    /// it has one.
    pub fn with(mut self, sweep: Sweep) -> Self {
        let settings = sweep.settings();
        if let Some(n) = sweep.repetitions {
            for s in &settings {
                self.repetition_overrides.insert(s.key(""), n);
            }
        }
        self.settings.extend(settings);
        self
    }

    /// How many repetitions `setting` gets: its override, else the grid's count.
    pub fn repetitions_of(&self, setting: &Setting) -> usize {
        self.repetition_overrides
            .get(&setting.key(""))
            .copied()
            .unwrap_or(self.repetitions)
    }

    /// The largest repetition count of any setting (the seeds run `seed0..seed0 + this`).
    pub fn max_repetitions(&self) -> usize {
        self.settings
            .iter()
            .map(|s| self.repetitions_of(s))
            .max()
            .unwrap_or(self.repetitions)
    }

    /// Every cell, setting-major.
    pub fn cells(&self) -> Vec<Cell> {
        self.settings
            .iter()
            .flat_map(|s| {
                (0..self.repetitions_of(s)).map(move |r| Cell {
                    setting: s.clone(),
                    repetition: r,
                    seed: self.seed0 + r as u64,
                })
            })
            .collect()
    }
}

/// A Cartesian product of values, turned into settings. Every list has a one-value default
/// (dataset `synthetic`, method `-`, accounting `strict`, ε = ∞, δ = 0, no fairness level, no
/// parameters), so a sweep names only what varies.
#[derive(Clone, Debug)]
pub struct Sweep {
    datasets: Vec<String>,
    methods: Vec<String>,
    accounting: Vec<String>,
    epsilons: Vec<f64>,
    deltas: Vec<f64>,
    fairness_levels: Vec<Option<f64>>,
    params: Vec<Params>,
    /// This sweep's repetition count; `None`: the grid's.
    repetitions: Option<usize>,
}

impl Default for Sweep {
    fn default() -> Self {
        Sweep {
            datasets: vec!["synthetic".into()],
            methods: vec!["-".into()],
            accounting: vec!["strict".into()],
            epsilons: vec![f64::INFINITY],
            deltas: vec![0.0],
            fairness_levels: vec![None],
            params: vec![Params::new()],
            repetitions: None,
        }
    }
}

fn strings<S: ToString>(v: impl IntoIterator<Item = S>) -> Vec<String> {
    v.into_iter().map(|s| s.to_string()).collect()
}

impl Sweep {
    pub fn new() -> Self {
        Sweep::default()
    }
    pub fn datasets<S: ToString>(mut self, v: impl IntoIterator<Item = S>) -> Self {
        self.datasets = strings(v);
        self
    }
    pub fn methods<S: ToString>(mut self, v: impl IntoIterator<Item = S>) -> Self {
        self.methods = strings(v);
        self
    }
    pub fn accounting<S: ToString>(mut self, v: impl IntoIterator<Item = S>) -> Self {
        self.accounting = strings(v);
        self
    }
    pub fn epsilons(mut self, v: impl IntoIterator<Item = f64>) -> Self {
        self.epsilons = v.into_iter().collect();
        self
    }
    pub fn deltas(mut self, v: impl IntoIterator<Item = f64>) -> Self {
        self.deltas = v.into_iter().collect();
        self
    }
    pub fn fairness_levels(mut self, v: impl IntoIterator<Item = f64>) -> Self {
        self.fairness_levels = v.into_iter().map(Some).collect();
        self
    }
    pub fn params(mut self, v: impl IntoIterator<Item = Params>) -> Self {
        self.params = v.into_iter().collect();
        self
    }
    /// Give this sweep's settings `n` repetitions instead of the grid's count (e.g. a paper
    /// figure averaged over more runs than the others).
    pub fn repetitions(mut self, n: usize) -> Self {
        self.repetitions = Some(n);
        self
    }

    /// The product, in the order dataset, method, accounting, ε, δ, fairness level, params.
    pub fn settings(&self) -> Vec<Setting> {
        let mut out = Vec::new();
        for d in &self.datasets {
            for m in &self.methods {
                for a in &self.accounting {
                    for &e in &self.epsilons {
                        for &de in &self.deltas {
                            for &f in &self.fairness_levels {
                                for p in &self.params {
                                    out.push(Setting {
                                        dataset: d.clone(),
                                        method: m.clone(),
                                        accounting: a.clone(),
                                        epsilon: e,
                                        delta: de,
                                        fairness_level: f,
                                        params: p.clone(),
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }
        out
    }
}

/// Check that a grid can run: at least one repetition per setting, settings unique.
pub(crate) fn validate(grid: &Grid, experiment: &str) -> Result<()> {
    if grid.repetitions == 0 {
        return Err(ExpError::InvalidParameter {
            parameter: "repetitions",
            reason: format!("experiment `{experiment}` has a grid with 0 repetitions"),
        });
    }
    if let Some(key) = grid.repetition_overrides.iter().find(|(_, n)| **n == 0) {
        return Err(ExpError::InvalidParameter {
            parameter: "repetitions",
            reason: format!(
                "experiment `{experiment}`: setting {} has 0 repetitions",
                key.0
            ),
        });
    }
    let mut seen = std::collections::HashSet::new();
    for s in &grid.settings {
        if !seen.insert(s.key(experiment)) {
            return Err(ExpError::InvalidParameter {
                parameter: "grid",
                reason: format!("setting {} appears twice", s.key(experiment)),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_is_a_product_and_params_round_trip() {
        let s = Sweep::new()
            .methods(["a", "b"])
            .epsilons([1.0, 2.0, f64::INFINITY])
            .params([Params::new().with("k", 36).with("h", 0.2)]);
        let settings = s.settings();
        assert_eq!(settings.len(), 6);
        assert_eq!(settings[0].params.to_string(), "h=0.2;k=36");
        assert_eq!(
            Params::parse("h=0.2;k=36"),
            Some(settings[0].params.clone())
        );
        assert_eq!(Params::parse(""), Some(Params::new()));
        let grid = Grid::new(3, 100).with(s);
        let cells = grid.cells();
        assert_eq!(cells.len(), 18);
        assert_eq!(cells[2].seed, 102);
        assert_eq!(cells[2].param::<u32>("k").unwrap(), 36);
        assert!(cells[2].param::<u32>("h").is_err());
        assert!(
            cells[2]
                .param::<u32>("zz")
                .unwrap_err()
                .to_string()
                .contains("zz")
        );
        assert_eq!(
            fmt_f64(f64::INFINITY).parse::<f64>().unwrap(),
            f64::INFINITY
        );
    }

    #[test]
    fn duplicate_settings_are_refused() {
        let g = Grid::new(1, 0).with(Sweep::new()).with(Sweep::new());
        assert!(validate(&g, "x").is_err());
        assert!(validate(&Grid::new(0, 0).with(Sweep::new()), "x").is_err());
        assert!(validate(&Grid::new(1, 0).with(Sweep::new().repetitions(0)), "x").is_err());
    }

    #[test]
    fn a_sweep_can_have_its_own_repetitions() {
        let g = Grid::new(2, 50)
            .with(Sweep::new().methods(["a"]))
            .with(Sweep::new().methods(["b", "c"]).repetitions(5));
        assert_eq!(g.repetitions_of(&g.settings[0]), 2);
        assert_eq!(g.repetitions_of(&g.settings[2]), 5);
        assert_eq!(g.max_repetitions(), 5);
        let cells = g.cells();
        assert_eq!(cells.len(), 2 + 2 * 5);
        // Seeds stay seed0 + repetition, so the first 2 are shared with the default sweep.
        let b: Vec<u64> = cells
            .iter()
            .filter(|c| c.setting.method == "b")
            .map(|c| c.seed)
            .collect();
        assert_eq!(b, vec![50, 51, 52, 53, 54]);
        // The override follows the setting, not its position.
        let mut f = g.clone();
        f.settings.retain(|s| s.method != "a");
        assert_eq!(f.cells().len(), 10);
        assert!(validate(&g, "x").is_ok());
    }
}
