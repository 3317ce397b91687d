//! The fits that the cells of `fdp-fair` share, and the test-set scores that go with them.
//!
//! A cell of Figures 3–9 differs from its neighbours only in α, ρ* or C_ω, which enter after
//! every release: at CDP-Fair's S2 (Algorithm 5 step 3) and at FDP-Fair's server selection
//! (Algorithm 2 S3). So one fit per (seed, N, S, ε, mode) serves a whole sweep, and so does the
//! released plug-in estimate `η̃` evaluated at the test rows: a cell then only applies its own
//! threshold to the cached scores ([`TestScores`]). The fits of one seed at the run's several ε
//! are made together ([`Caches::batched`]: `cdp_fair::fit_s1_many`, `simulate::rounds_many`),
//! computing the random-feature map of each row once for all ε. Every cached value is
//! bit-identical to what the cell would compute alone (same data, same noise seeds, same
//! arithmetic; test `cached_cells_equal_fresh_fits` in `fdp_fair.rs`).

use crate::error::{Result, method_error};
use dpfair::cdp_fair::{self, Model, groups_and_labels};
use dpfair::data::Dataset;
use dpfair::fdp_fair::simulate::{Rounds, rounds_many};
use dpfair::plugin::kernel::{Bandwidth, cross_validate};
use dpfair::plugin::release::eta_grouped_many;
use dpfair::plugin::threshold::score;
use dpfair::plugin::{ExpectedMetrics, PluginEstimate};
use dpfair::predictor::Accounting;
use dpfair_privacy::{Entry, Ledger, Noise};
use rand::Rng;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

/// A shared fit and, once the first of its cells has evaluated it, its scores on the cells'
/// common test set.
pub(super) struct Shared<F> {
    pub fit: F,
    test: OnceLock<TestScores>,
    score_once: bool,
}

impl<F> Shared<F> {
    /// `model.expected_metrics(test)` for a `model` selected from this fit (its folds' estimates
    /// are this fit's): the test set (made by `test` the first time) is scored once per fit.
    pub fn metrics(
        &self,
        model: &Model,
        test: impl FnOnce() -> Result<Dataset>,
    ) -> Result<ExpectedMetrics> {
        if !self.score_once {
            return model.expected_metrics(&test()?).map_err(method_error);
        }
        let scores = match self.test.get() {
            Some(s) => s,
            None => {
                let scores = TestScores::new(model, &test()?)?;
                // Two cells may race here; both computed the same scores.
                self.test.get_or_init(|| scores)
            }
        };
        scores.metrics(model)
    }
}

/// The released estimate of every fold evaluated at a test set's rows, as the threshold scores
/// `z = 2(2a−1) π̃_a (η̃_a(x) − 1/2)` ([`score`]), with the rows' groups and labels.
pub(super) struct TestScores {
    a: Vec<u32>,
    y: Vec<u8>,
    /// One score per test row, per fold.
    z: Vec<Vec<f64>>,
}

impl TestScores {
    /// Scores of `model`'s folds on `test` (the costly part of
    /// [`Model::expected_metrics`]: the random-feature basis at every test row).
    pub fn new(model: &Model, test: &Dataset) -> Result<Self> {
        let folds: Vec<&PluginEstimate> = model.folds.iter().map(|f| &f.estimate).collect();
        let mut scores = Self::many(&[folds], test)?;
        Ok(scores.pop().expect("one model, one set of scores"))
    }

    /// The scores of several fits' folds (`fits[i]`: fit `i`'s fold estimates, in its models'
    /// fold order) on `test`, each row's feature map computed once for all of them
    /// ([`eta_grouped_many`]): [`TestScores::new`] of each, bit for bit.
    pub fn many(fits: &[Vec<&PluginEstimate>], test: &Dataset) -> Result<Vec<Self>> {
        let (a, y) = groups_and_labels(test).map_err(method_error)?;
        let all: Vec<&PluginEstimate> = fits.iter().flatten().copied().collect();
        let etas = eta_grouped_many(&all, test.features.view(), a).map_err(method_error)?;
        let mut z = all.iter().zip(etas).map(|(est, eta)| {
            eta.iter()
                .zip(a)
                .map(|(&e, &g)| score(g as usize, e, est.pi[g as usize]))
                .collect::<Vec<f64>>()
        });
        Ok(fits
            .iter()
            .map(|folds| TestScores {
                a: a.to_vec(),
                y: y.to_vec(),
                z: z.by_ref().take(folds.len()).collect(),
            })
            .collect())
    }

    /// [`Model::expected_metrics`] of `model`, whose folds' estimates are the ones scored here,
    /// with the same arithmetic as [`Model::predict_proba`] (the fold average of each fold's
    /// `P(Ŷ = 1)` at its threshold rule).
    pub fn metrics(&self, model: &Model) -> Result<ExpectedMetrics> {
        if model.folds.len() != self.z.len() {
            return Err(method_error(format!(
                "a model with {} folds scored on a test set cached for {}",
                model.folds.len(),
                self.z.len()
            )));
        }
        let mut p = vec![0.0; self.a.len()];
        for (fold, z) in model.folds.iter().zip(&self.z) {
            for ((s, &zi), &g) in p.iter_mut().zip(z).zip(&self.a) {
                *s += fold.rule.positive_prob(g as usize, zi);
            }
        }
        let k = model.folds.len() as f64;
        p.iter_mut().for_each(|s| *s /= k);
        ExpectedMetrics::compute(&p, &self.a, &self.y).map_err(method_error)
    }
}

/// The shared fits of a run.
pub(super) struct Caches {
    /// FDP-Fair's protocol rounds by (seed, N_s, S, ε, mode, test size) (Figures 6–7: by data
    /// set, seed, ε and mode), shared by the cells that differ only in α, ρ* or C_ω
    /// (bit-identical to fitting per cell: same data, same noise seeds; test
    /// `one_set_of_rounds_serves_every_alpha`). ≈ 90 KB each at D = 1,024, plus 8 bytes per test
    /// row.
    pub rounds: SharedFits<Rounds>,
    /// CDP-Fair's S1 by (seed, N, ε, mode, test size) with the ledger it charged and the seed of
    /// S2's noise, shared by the cells that differ only in α ([`cdp_fair::fit_s1`]; ≈ 70 KB each
    /// at D = 1,024 and N = 9,000: the release and 4,500 calibration scores).
    cdp_s1: SharedFits<CdpS1>,
    /// Figures 6–7's baselines that do not read α (privacy only, unconstrained) by method, data
    /// set, seed and ε, with their ledgers.
    pub baselines: SharedFits<(Model, Ledger)>,
    /// Figures 6–7's fairness-only baseline before its threshold, by data set and seed.
    pub fairness_only: SharedFits<(cdp_fair::FairnessOnlyFolds, Ledger)>,
    /// Paper-mode CDP-Fair's bandwidth from the authors' CV, by data set and seed
    /// ([`Caches::share_paper_cv`]).
    cv: SharedFits<f64>,
    /// Whether the bandwidth CV is shared across ε (else each fit runs its own).
    share_cv: bool,
    /// The ε each group of cells that share their fits across ε asks for in this run
    /// ([`Caches::plan`]); a group without a plan fits one ε at a time.
    plan: Mutex<HashMap<String, Vec<f64>>>,
}

impl Caches {
    /// Empty caches; with `score_once = false` every cell evaluates its model on its test set
    /// itself ([`Model::expected_metrics`], the path the cached scores must reproduce).
    pub fn new(score_once: bool) -> Self {
        Caches {
            rounds: SharedFits::new(score_once),
            cdp_s1: SharedFits::new(score_once),
            baselines: SharedFits::new(score_once),
            fairness_only: SharedFits::new(score_once),
            cv: SharedFits::new(score_once),
            share_cv: score_once,
            plan: Mutex::new(HashMap::new()),
        }
    }

    /// Notes the ε of each group of cells (`group(cell)`, `None`: a cell whose fits are not
    /// batched across ε) among `cells`, the cells about to run: [`Caches::batched`] then fits a
    /// group's ε together.
    pub fn plan<'c>(
        &self,
        cells: impl IntoIterator<Item = &'c crate::Cell>,
        group: impl Fn(&crate::Cell) -> Option<String>,
    ) {
        let mut plan = self.plan.lock().unwrap_or_else(|e| e.into_inner());
        plan.clear();
        for cell in cells {
            if let Some(g) = group(cell) {
                plan.entry(g).or_default().push(cell.setting.epsilon);
            }
        }
        for eps in plan.values_mut() {
            eps.sort_by(f64::total_cmp);
            eps.dedup();
        }
    }

    /// The fit under `key(epsilon)` in `cache`, made, when missing, together with the fits at
    /// the other ε the plan lists for `group` that are not cached yet: `fit(εs)` returns one
    /// fit per ε of `εs`, in order (`εs` always holds `epsilon`). With scores cached, the
    /// test set (`test()`) is scored for all of them in one pass over its rows, `estimates(fit)`
    /// giving a fit's fold estimates in its models' fold order.
    pub fn batched<T>(
        &self,
        cache: &SharedFits<T>,
        at: &BatchKey,
        fit: impl FnOnce(&[f64]) -> Result<Vec<T>>,
        estimates: impl Fn(&T) -> Vec<&PluginEstimate>,
        test: impl FnOnce() -> Result<Dataset>,
    ) -> Result<Arc<Shared<T>>> {
        let BatchKey {
            epsilon,
            group,
            key,
        } = *at;
        if let Some(hit) = cache.get(&key(epsilon)) {
            return Ok(hit);
        }
        let planned = self
            .plan
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(group)
            .cloned()
            .unwrap_or_default();
        let mut eps: Vec<f64> = planned
            .into_iter()
            .filter(|&e| e != epsilon && cache.get(&key(e)).is_none())
            .collect();
        eps.push(epsilon);
        let fits = fit(&eps)?;
        if fits.len() != eps.len() {
            return Err(method_error(format!(
                "{} fits for {} values of ε",
                fits.len(),
                eps.len()
            )));
        }
        let mut scores: Vec<Option<TestScores>> = if cache.score_once {
            let folds: Vec<Vec<&PluginEstimate>> = fits.iter().map(&estimates).collect();
            TestScores::many(&folds, &test()?)?
                .into_iter()
                .map(Some)
                .collect()
        } else {
            fits.iter().map(|_| None).collect()
        };
        let mut wanted = None;
        for ((e, fit), scores) in eps.iter().zip(fits).zip(scores.iter_mut()) {
            let shared = cache.insert(&key(*e), fit, scores.take());
            if *e == epsilon {
                wanted = Some(shared);
            }
        }
        Ok(wanted.expect("ε is among the fitted"))
    }

    /// `config` with its bandwidth fixed to what paper-mode CDP-Fair's 3-fold CV
    /// ([`Bandwidth::paper_cv`]) chooses on `data()` for a fit whose noise is seeded with `seed`,
    /// chosen once per `cv_key` (data set and seed): the CV reads the data and the public split
    /// seed only, never ε or α. `ledger` is charged the CV's non-private entry, as `fit` charges
    /// it. Other configurations are returned unchanged. This repeats `cdp_fair`'s preparation
    /// (its public draws: the basis seed, then the split seed; the CV's seed
    /// `split_seed ^ 0x5eed_000c`); test `cached_cells_equal_fresh_fits` compares it with a fit
    /// that runs its own CV.
    pub fn share_paper_cv(
        &self,
        cv_key: &str,
        config: cdp_fair::Config,
        data: impl Fn() -> Result<Dataset>,
        seed: u64,
        ledger: &mut Ledger,
    ) -> Result<cdp_fair::Config> {
        if !self.share_cv || config.accounting != Accounting::Paper || config.bandwidth.is_some() {
            return Ok(config);
        }
        let Bandwidth::CrossValidated { grid, folds } = Bandwidth::paper_cv() else {
            return Ok(config);
        };
        let h = self.cv.get_or_fit(cv_key, || {
            let data = data()?;
            let (_, y) = groups_and_labels(&data).map_err(method_error)?;
            let mut public = Noise::seeded(seed);
            let _basis_seed = public.public_u64();
            let split_seed = public.public_u64();
            cross_validate(
                data.features.view(),
                y,
                &grid,
                folds,
                split_seed ^ 0x5eed_000c,
            )
            .map_err(method_error)
        })?;
        ledger.charge(Entry::non_private(
            "bandwidth: cross-validation on the training data",
            "the paper's 3-fold CV reads the data without noise (docs/deviations.md#fdp-fair-unaccounted-leaks-in-the-experiments)",
        ))?;
        Ok(cdp_fair::Config {
            bandwidth: Some(Bandwidth::Fixed { h: h.fit }),
            ..config
        })
    }
}

/// The caches of `dpfair reproduce fdp-fair`.
pub(super) static CACHES: LazyLock<Caches> = LazyLock::new(|| Caches::new(true));

/// One CDP-Fair S1 fit with what its cells need to finish it.
pub(super) struct CdpS1 {
    s1: cdp_fair::SharedS1,
    ledger: Ledger,
    s2_seed: u64,
}

/// Where a cell's fit sits among the fits made together across ε: its ε, its group's name in
/// the plan ([`Caches::plan`]) and the cache key of the group's fit at any ε.
#[derive(Clone, Copy)]
pub(super) struct BatchKey<'a> {
    pub epsilon: f64,
    pub group: &'a str,
    pub key: &'a dyn Fn(f64) -> String,
}

/// A CDP-Fair cell of a group whose fits are shared across ε: its ε, the group's name in the
/// plan, the cache key of the fit at any ε, and the configuration and starting ledger of a cell
/// at any ε (the S1 fit reads neither α nor anything else of the cell).
pub(super) struct CdpCell<'a> {
    pub epsilon: f64,
    pub group: &'a str,
    pub key: &'a dyn Fn(f64) -> String,
    pub setup: &'a dyn Fn(f64) -> Result<(cdp_fair::Config, Ledger)>,
}

/// CDP-Fair at `config.alpha` from the S1 fit shared by the cells of `cell`'s key (made, when
/// missing, by [`cdp_fair::fit_s1_many`] on `data()` at every ε the plan lists for the group,
/// each charging its own ledger and drawing from its own copy of `noise`). S2 draws from its
/// own stream, seeded from `noise` after S1: the same for every α, as `fit` would continue it.
/// Returns the shared fit (for its test scores), the model and its ledger (S1's entries and
/// this α's S2).
pub(super) fn cdp_at_alpha(
    caches: &Caches,
    cell: &CdpCell,
    config: &cdp_fair::Config,
    data: impl FnOnce() -> Result<Dataset>,
    noise: impl Fn() -> Noise,
    test: impl FnOnce() -> Result<Dataset>,
) -> Result<(Arc<Shared<CdpS1>>, Model, Ledger)> {
    let fit = |eps: &[f64]| -> Result<Vec<CdpS1>> {
        let (configs, mut ledgers): (Vec<cdp_fair::Config>, Vec<Ledger>) = eps
            .iter()
            .map(|&e| (cell.setup)(e))
            .collect::<Result<Vec<_>>>()?
            .into_iter()
            .unzip();
        let mut noises: Vec<Noise> = eps.iter().map(|_| noise()).collect();
        let fits = cdp_fair::fit_s1_many(&configs, &data()?, &mut ledgers, &mut noises)
            .map_err(method_error)?;
        Ok(fits
            .into_iter()
            .zip(ledgers)
            .zip(noises.iter_mut())
            .map(|((s1, ledger), noise)| CdpS1 {
                s1,
                ledger,
                s2_seed: noise.next_u64(),
            })
            .collect())
    };
    let at = BatchKey {
        epsilon: cell.epsilon,
        group: cell.group,
        key: cell.key,
    };
    let shared = caches.batched(
        &caches.cdp_s1,
        &at,
        fit,
        |f| f.s1.estimates().collect(),
        test,
    )?;
    let mut ledger = shared.fit.ledger.clone();
    let model = shared
        .fit
        .s1
        .select(
            config.alpha,
            &mut ledger,
            &mut Noise::seeded(shared.fit.s2_seed),
        )
        .map_err(method_error)?;
    Ok((shared, model, ledger))
}

/// FDP-Fair's rounds of `config` at each ε of `eps` on `sites`, site `s` drawing from a stream
/// seeded with `seed(s)` at every ε ([`rounds_many`]: one pass over each site's rows).
pub(super) fn rounds_at(
    config: &dpfair::fdp_fair::Config,
    eps: &[f64],
    sites: &[Dataset],
    seed: impl Fn(usize) -> u64,
) -> Result<Vec<Rounds>> {
    let configs: Vec<dpfair::fdp_fair::Config> = eps
        .iter()
        .map(|&epsilon| dpfair::fdp_fair::Config {
            epsilon,
            ..config.clone()
        })
        .collect();
    let mut noises: Vec<Vec<Noise>> = eps
        .iter()
        .map(|_| (0..sites.len()).map(|s| Noise::seeded(seed(s))).collect())
        .collect();
    let mut streams: Vec<&mut [Noise]> = noises.iter_mut().map(Vec::as_mut_slice).collect();
    rounds_many(&configs, sites, &mut streams).map_err(method_error)
}

/// Entries kept per cache. `reproduce` runs fdp-fair's cells seed-major (`schedule`), so a
/// seed's fits (≈ 110 across all figures and ε) are used within its own cells, and rayon's two
/// halves of the cell list run at once; a caller running cells in grid (setting-major) order
/// keeps the old bound: one sweep's fits are `repetitions × (param sets)` cells apart (≤ 5 S ×
/// 200 repetitions at `--full`). 2,048 covers both.
const SHARED_CAPACITY: usize = 2048;

/// A bounded cache of fits shared across cells; the oldest entries are dropped beyond
/// [`SHARED_CAPACITY`].
pub(super) struct SharedFits<T> {
    inner: Mutex<Entries<T>>,
    /// Whether each fit scores its test set once ([`Shared::metrics`]).
    score_once: bool,
}

/// The cached fits and their keys, oldest first.
struct Entries<T> {
    map: HashMap<String, Arc<Shared<T>>>,
    order: VecDeque<String>,
}

impl<T> SharedFits<T> {
    fn new(score_once: bool) -> Self {
        SharedFits {
            inner: Mutex::new(Entries {
                map: HashMap::new(),
                order: VecDeque::new(),
            }),
            score_once,
        }
    }

    /// The fit under `key`, made by `fit` (outside the lock) when missing.
    pub fn get_or_fit(&self, key: &str, fit: impl FnOnce() -> Result<T>) -> Result<Arc<Shared<T>>> {
        if let Some(r) = self.get(key) {
            return Ok(r);
        }
        Ok(self.insert(key, fit()?, None))
    }

    /// The fit under `key`, if held.
    fn get(&self, key: &str) -> Option<Arc<Shared<T>>> {
        let guard = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        guard.map.get(key).map(Arc::clone)
    }

    /// Holds `fit` under `key` (replacing what a racing cell put there: the same fit), with its
    /// test scores when already computed.
    fn insert(&self, key: &str, fit: T, scores: Option<TestScores>) -> Arc<Shared<T>> {
        let test = OnceLock::new();
        if let Some(s) = scores {
            let _ = test.set(s);
        }
        let fitted = Arc::new(Shared {
            fit,
            test,
            score_once: self.score_once,
        });
        let mut guard = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let Entries { map, order } = &mut *guard;
        if map.insert(key.to_string(), Arc::clone(&fitted)).is_none() {
            order.push_back(key.to_string());
        }
        while order.len() > SHARED_CAPACITY {
            if let Some(old) = order.pop_front() {
                map.remove(&old);
            }
        }
        fitted
    }
}

#[cfg(test)]
impl Caches {
    /// Fits held (both methods).
    pub fn fits_held(&self) -> usize {
        self.rounds.inner.lock().expect("not poisoned").map.len()
            + self.cdp_s1.inner.lock().expect("not poisoned").map.len()
            + self.baselines.inner.lock().expect("not poisoned").map.len()
            + self
                .fairness_only
                .inner
                .lock()
                .expect("not poisoned")
                .map
                .len()
            + self.cv.inner.lock().expect("not poisoned").map.len()
    }
}
