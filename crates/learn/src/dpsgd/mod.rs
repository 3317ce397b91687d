//! DP-SGD with Opacus semantics (Abadi et al. 2016, Algorithm 1; the base classifier of Ghoukasian &
//! Asoodeh and Phase 1 of Say et al.), for logistic regression (binary and
//! multinomial) and a one-hidden-layer ReLU MLP.
//!
//! Schedule (Opacus's `DataLoader` with `poisson_sampling=True`): K = ⌈N/B⌉ steps per epoch for
//! the expected batch size B, sampling rate q = 1/K, T = epochs·K steps. Each step:
//!
//! 1. Poisson sample: each example independently with probability q ([`crate::sampling`]:
//!    exact geometric skips from the privacy crate's [`Noise`], O(qN) per step); the batch may
//!    be empty.
//! 2. Per-example gradients of the cross-entropy, each clipped to ℓ2 norm C:
//!    g_i · min(1, C/(‖g_i‖(1 + 2^−30) + 10⁻⁶)), summed, from `f32` copies of the features with
//!    `f64` arithmetic (`nets`, `kernels`, `compact`: closed-form norms, no per-example gradient
//!    matrix, SIMD chosen at run time).
//! 3. Noise N(0, (zC)²) on every coordinate of the sum, drawn by the privacy crate's
//!    [`SubsampledGaussianRun`], which charged the whole run (q, z, T, accountant) to the ledger
//!    before the first step and refuses step T + 1. C is raised by the allowance for the `f64`
//!    sum of at most N terms (`SubsampledGaussianRun::with_float_sum_allowance`, factor
//!    ≈ 1 + 2N²·2^−53; `docs/privacy.md#floating-point`).
//! 4. θ ← θ − η · (noisy sum) / (qN): division by the *expected* batch size, not the drawn one
//!    (the drawn size is data-dependent). Under add/remove-one neighbours N (in q, T and qN) is
//!    a public size ([`DpSgdConfig::schedule_rows`]), not the private row count.
//!
//! Batches and noise do not depend on the data, so a drawing thread draws them ahead while the
//! caller's thread computes the sums (`pipeline`); the result is the same as on one thread.
//!
//! The noise multiplier z is the smallest meeting the target (ε, δ) under the chosen accountant
//! (`sgm_noise_multiplier`; RDP, PRV or GDP, `docs/reference-values.md#decoupled`), or a given z whose cost the ledger
//! records (`noise_multiplier`, the paper's fixed-σ procedure).
//!
//! Neighbours (`docs/deviations.md#decoupled-accountants-certify-add-remove`): the subsampled-Gaussian accountants certify add/remove-one
//! neighbours, as in Opacus, and the privacy crate's ledger entry names that relation; this is
//! the default here. With `relation = Substitution` the noise multiplier is calibrated for
//! replace-one neighbours (sensitivity 2C: twice the add/remove multiplier,
//! `sgm_effective_noise_multiplier`).

mod compact;
mod kernels;
pub(crate) mod nets;
mod pipeline;
mod shared_draws;
mod slices;

use crate::error::{Result, invalid};
use crate::logistic::{LogisticModel, argmax_scores, scores_to_proba};
use crate::validate::{at_least, check_classification, check_predict_input, positive};
use compact::CompactRows;
use dpfair_privacy::accounting::{
    Accountant, sgm_effective_noise_multiplier, sgm_noise_multiplier,
};
use dpfair_privacy::mechanisms::{StepNoise, SubsampledGaussianRun};
use dpfair_privacy::{Ledger, Noise, Relation};
use ndarray::{Array1, Array2, ArrayView2, s};
use nets::{LogisticNet, MlpNet, mlp_layers};
pub use pipeline::Threads;
use pipeline::{NoiseStep, Schedule, train};
use rand::Rng;
use serde::{Deserialize, Serialize};

/// The model DP-SGD trains.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Architecture {
    /// Logistic regression: sigmoid for two classes, softmax for more.
    Logistic,
    /// One hidden layer of `hidden` ReLU units, then sigmoid / softmax.
    Mlp { hidden: usize },
}

/// DP-SGD hyperparameters. Defaults: the Opacus runs of Ghoukasian & Asoodeh:
/// C = 1.5, η = 0.01, expected batch 1024, 50 epochs, δ = 1e-5; ε = 1; RDP accountant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DpSgdConfig {
    /// Target ε of the whole run.
    pub epsilon: f64,
    /// Target δ of the whole run.
    pub delta: f64,
    /// Accountant that calibrates z and converts the run's cost (RDP, PRV or GDP).
    pub accountant: Accountant,
    /// Use this noise multiplier instead of calibrating one; the ledger still records (and
    /// checks against its budget) what it costs.
    pub noise_multiplier: Option<f64>,
    pub epochs: usize,
    /// Expected batch size B (sampling rate q = 1/⌈N/B⌉).
    pub expected_batch: usize,
    /// The row count N the schedule (q, T) and the step's normalisation qN are computed from,
    /// when it must not be the private number of rows given: under add/remove-one neighbours a
    /// declared public size or a released count (docs/privacy.md, "The row count under
    /// add/remove"). `None`: the rows given (public under replace-one). Poisson sampling always
    /// runs over the rows given, so the privacy of the run does not depend on how close N is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule_rows: Option<usize>,
    pub learning_rate: f64,
    /// Per-example clipping norm C.
    pub clip: f64,
    pub architecture: Architecture,
    /// Neighbouring relation the calibrated z certifies (module doc). Default add/remove.
    pub relation: Relation,
    /// Where the batches and noise are drawn: on a drawing thread beside the gradient sums
    /// (default: when the run is large enough and a second core exists) or all on the caller's
    /// thread ([`Threads::One`]). The trained model does not depend on it, so it is not part of
    /// a saved configuration.
    #[serde(skip)]
    pub threads: Threads,
}

impl Default for DpSgdConfig {
    fn default() -> Self {
        DpSgdConfig {
            epsilon: 1.0,
            delta: 1e-5,
            accountant: Accountant::Rdp,
            noise_multiplier: None,
            epochs: 50,
            expected_batch: 1024,
            schedule_rows: None,
            learning_rate: 0.01,
            clip: 1.5,
            architecture: Architecture::Logistic,
            relation: Relation::AddRemove,
            threads: Threads::Auto,
        }
    }
}

/// The Opacus schedule for N examples: (q, steps per epoch K, total steps T).
pub fn schedule(n: usize, expected_batch: usize, epochs: usize) -> Result<(f64, usize, u64)> {
    at_least("expected_batch", expected_batch, 1)?;
    at_least("epochs", epochs, 1)?;
    if n == 0 {
        return Err(crate::LearnError::Empty("no training rows".into()));
    }
    let k = n.div_ceil(expected_batch.min(n));
    Ok((1.0 / k as f64, k, (k * epochs) as u64))
}

/// A run's public calibration: Opacus's schedule and the noise multiplier (see
/// [`DpSgdConfig::calibration`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibration {
    /// Poisson sampling rate q.
    pub sampling_rate: f64,
    /// Total steps T.
    pub steps: u64,
    /// z: noise standard deviation on the clipped sum is z·C.
    pub noise_multiplier: f64,
    /// The expected batch `q·N` each step's sum is divided by.
    pub expected_batch: f64,
}

impl Calibration {
    /// Standard deviation of the noise the run adds to each trained weight of a logistic model
    /// started at fixed weights: `η·z·C·√T / (qN)` (the sum of T independent step noises).
    pub fn weight_noise_sd(&self, learning_rate: f64, clip: f64) -> f64 {
        learning_rate * self.noise_multiplier * clip * (self.steps as f64).sqrt()
            / self.expected_batch
    }
}

impl DpSgdConfig {
    /// The schedule `(q, T)` and noise multiplier `z` a run on `rows` training rows uses
    /// (`schedule_rows` when set), from public values only: what [`fit_dp_sgd`] runs with, and
    /// what a party that did not train (a federated server) recomputes to check a release.
    ///
    /// ```
    /// use dpfair_learn::DpSgdConfig;
    /// let c = DpSgdConfig { epsilon: 1.0, epochs: 2, expected_batch: 100, ..Default::default() };
    /// let cal = c.calibration(1_000).unwrap();
    /// assert_eq!((cal.sampling_rate, cal.steps, cal.expected_batch), (0.1, 20, 100.0));
    /// assert!(cal.noise_multiplier > 0.5 && cal.noise_multiplier < 5.0);
    /// ```
    pub fn calibration(&self, rows: usize) -> Result<Calibration> {
        self.validate()?;
        let public_rows = self.schedule_rows.unwrap_or(rows);
        let (q, _, steps) = schedule(public_rows, self.expected_batch, self.epochs)?;
        let z = match self.noise_multiplier {
            Some(z) => z,
            None => {
                let z = sgm_noise_multiplier(self.accountant, q, steps, self.epsilon, self.delta)?;
                // The add/remove accountant at z/2 certifies substitution at z.
                z / sgm_effective_noise_multiplier(1.0, self.relation)
            }
        };
        Ok(Calibration {
            sampling_rate: q,
            steps,
            noise_multiplier: z,
            expected_batch: q * public_rows as f64,
        })
    }

    fn validate(&self) -> Result<()> {
        positive("epsilon", self.epsilon)?;
        if !(self.delta > 0.0 && self.delta < 1.0) {
            return Err(invalid(
                "delta",
                format!("must be in (0, 1), got {}", self.delta),
            ));
        }
        if let Some(z) = self.noise_multiplier {
            positive("noise_multiplier", z)?;
        }
        positive("learning_rate", self.learning_rate)?;
        positive("clip", self.clip)?;
        if let Architecture::Mlp { hidden } = self.architecture {
            at_least("hidden", hidden, 1)?;
        }
        Ok(())
    }
}

/// A fitted DP-SGD model with the privacy parameters of its run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DpSgdFit {
    pub model: crate::Classifier,
    /// z: noise standard deviation on the clipped sum is z·C.
    pub noise_multiplier: f64,
    pub sampling_rate: f64,
    pub steps: u64,
    pub clip: f64,
    /// The relation the calibration certifies.
    pub relation: Relation,
}

/// A one-hidden-layer ReLU network (DP-SGD's [`Architecture::Mlp`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MlpModel {
    pub n_classes: usize,
    /// Hidden layer: h × d weights, h biases.
    pub w1: Array2<f64>,
    pub b1: Array1<f64>,
    /// Output layer: m × h weights (m = 1 binary, K multinomial), m biases.
    pub w2: Array2<f64>,
    pub b2: Array1<f64>,
}

impl MlpModel {
    fn from_params(n_classes: usize, d: usize, h: usize, params: &[f64]) -> Self {
        let m = LogisticModel::score_rows(n_classes);
        let (l1, l2) = mlp_layers(params, d, h, m);
        MlpModel {
            n_classes,
            w1: l1.slice(s![.., ..d]).to_owned(),
            b1: l1.column(d).to_owned(),
            w2: l2.slice(s![.., ..h]).to_owned(),
            b2: l2.column(h).to_owned(),
        }
    }

    pub fn n_features(&self) -> usize {
        self.w1.ncols()
    }

    /// Output scores, n × 1 (binary log-odds) or n × K.
    pub fn decision_function(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        check_predict_input(x, self.n_features())?;
        let mut h = x.dot(&self.w1.t());
        h += &self.b1;
        h.mapv_inplace(|v| v.max(0.0));
        let mut z = h.dot(&self.w2.t());
        z += &self.b2;
        Ok(crate::logistic::standard(z))
    }

    /// Class probabilities, n × K.
    pub fn predict_proba(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        Ok(scores_to_proba(self.decision_function(x)?, self.n_classes))
    }

    /// Predicted classes (binary: P(y = 1) > 1/2).
    pub fn predict(&self, x: ArrayView2<'_, f64>) -> Result<Vec<u32>> {
        Ok(argmax_scores(&self.decision_function(x)?))
    }
}

impl NoiseStep for SubsampledGaussianRun {
    type Draw = StepNoise;

    fn draw(&mut self, noise: &mut Noise, dim: usize) -> Result<StepNoise> {
        Ok(self.draw_step_noise(noise, dim)?)
    }

    fn apply(draw: StepNoise, sum: &mut [f64]) -> Result<()> {
        Ok(draw.add_to(sum)?)
    }

    fn split_off(&mut self, steps: u64) -> Result<Self> {
        Ok(SubsampledGaussianRun::split_off(self, steps)?)
    }
}

/// PyTorch's `nn.Linear` initialisation, U(−1/√fan_in, 1/√fan_in) for weights and biases, for
/// `blocks` rows of `fan_in` weights and one bias. (The draws are not a release.)
fn init_layer(noise: &mut Noise, blocks: usize, fan_in: usize, out: &mut Vec<f64>) {
    let bound = 1.0 / (fan_in as f64).sqrt();
    for _ in 0..blocks * (fan_in + 1) {
        let u = (noise.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        out.push(bound * (2.0 * u - 1.0));
    }
}

/// Trains `cfg.architecture` by DP-SGD on features `x` and class codes `y ∈ 0..n_classes`,
/// charging the run to `ledger` before any noise (module doc).
pub fn fit_dp_sgd(
    cfg: &DpSgdConfig,
    x: ArrayView2<'_, f64>,
    y: &[u32],
    n_classes: usize,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<DpSgdFit> {
    cfg.validate()?;
    check_classification(x, y, n_classes, "DP-SGD")?;
    let (n, d) = x.dim();
    let Calibration {
        sampling_rate: q,
        steps,
        noise_multiplier: z,
        expected_batch,
    } = cfg.calibration(n)?;
    let rows = CompactRows::new(x, y)?;
    let m = LogisticModel::score_rows(n_classes);
    let mut run = SubsampledGaussianRun::start_for(
        cfg.relation,
        ledger,
        &format!("DP-SGD ({:?}) gradients", cfg.architecture),
        q,
        z,
        cfg.clip,
        steps,
        cfg.accountant,
    )?
    // The clipped gradients are summed in f64: the noise covers the rounding of a sum of up to
    // n terms (a batch is drawn from the n rows; `docs/privacy.md#floating-point`).
    .with_float_sum_allowance(n as u64)?;
    let schedule = Schedule {
        n,
        expected_batch,
        q,
        steps,
        learning_rate: cfg.learning_rate,
        clip: cfg.clip,
    };
    let model = match cfg.architecture {
        Architecture::Logistic => {
            let mut params = Vec::new();
            init_layer(noise, m, d, &mut params);
            let net = LogisticNet::new(rows, m);
            train(cfg.threads, &net, &mut params, &schedule, &mut run, noise)?;
            crate::Classifier::Logistic(LogisticModel::from_params(n_classes, d, &params, None))
        }
        Architecture::Mlp { hidden } => {
            let mut params = Vec::new();
            init_layer(noise, hidden, d, &mut params);
            init_layer(noise, m, hidden, &mut params);
            let net = MlpNet { rows, h: hidden, m };
            train(cfg.threads, &net, &mut params, &schedule, &mut run, noise)?;
            crate::Classifier::Mlp(MlpModel::from_params(n_classes, d, hidden, &params))
        }
    };
    Ok(DpSgdFit {
        model,
        noise_multiplier: z,
        sampling_rate: q,
        steps,
        clip: cfg.clip,
        relation: cfg.relation,
    })
}

/// Noise-free DP-SGD (clipping and sampling only), for tests of everything but the noise; counts
/// the steps drawn by it and by the handles split off it.
#[cfg(test)]
#[derive(Default)]
pub(crate) struct NoNoise(pub std::sync::Arc<std::sync::atomic::AtomicU64>);

#[cfg(test)]
impl NoiseStep for NoNoise {
    type Draw = ();

    fn draw(&mut self, _: &mut Noise, _: usize) -> Result<()> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    fn apply(_: (), _: &mut [f64]) -> Result<()> {
        Ok(())
    }

    fn split_off(&mut self, _: u64) -> Result<Self> {
        Ok(NoNoise(self.0.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::blobs;

    #[test]
    fn schedule_follows_opacus() {
        // Adult-shaped: 22,610 rows, B = 256 → 89 steps per epoch, q = 1/89 (bench README).
        let (q, k, t) = schedule(22_610, 256, 3).unwrap();
        assert_eq!((k, t), (89, 267));
        assert!((q - 1.0 / 89.0).abs() < 1e-16);
        assert!(schedule(10, 0, 1).is_err());
        assert!(schedule(10, 1, 0).is_err());
        // A batch larger than the data is a full-batch schedule.
        assert_eq!(schedule(10, 50, 2).unwrap(), (1.0, 1, 2));
    }

    #[test]
    fn clipped_noise_free_sgd_learns_separable_blobs() {
        for (k, arch) in [
            (2usize, Architecture::Logistic),
            (3, Architecture::Logistic),
            (3, Architecture::Mlp { hidden: 8 }),
        ] {
            let (x, y) = blobs(600, 5, k, 3.0, 9);
            let m = LogisticModel::score_rows(k);
            let mut noise = Noise::seeded(4);
            let (q, _, steps) = schedule(600, 64, 20).unwrap();
            let plan = Schedule {
                n: 600,
                expected_batch: q * 600.0,
                q,
                steps,
                learning_rate: 0.5,
                clip: 1.0,
            };
            let mut step = NoNoise::default();
            let mut params = Vec::new();
            let model = match arch {
                Architecture::Logistic => {
                    init_layer(&mut noise, m, 5, &mut params);
                    let net = LogisticNet::new(CompactRows::new(x.view(), &y).unwrap(), m);
                    train(
                        Threads::Auto,
                        &net,
                        &mut params,
                        &plan,
                        &mut step,
                        &mut noise,
                    )
                    .unwrap();
                    crate::Classifier::Logistic(LogisticModel::from_params(k, 5, &params, None))
                }
                Architecture::Mlp { hidden } => {
                    init_layer(&mut noise, hidden, 5, &mut params);
                    init_layer(&mut noise, m, hidden, &mut params);
                    let net = MlpNet {
                        rows: CompactRows::new(x.view(), &y).unwrap(),
                        h: hidden,
                        m,
                    };
                    train(
                        Threads::Auto,
                        &net,
                        &mut params,
                        &plan,
                        &mut step,
                        &mut noise,
                    )
                    .unwrap();
                    crate::Classifier::Mlp(MlpModel::from_params(k, 5, hidden, &params))
                }
            };
            assert_eq!(
                step.0.load(std::sync::atomic::Ordering::Relaxed),
                steps,
                "one noise step per SGD step"
            );
            let acc =
                |pred: Vec<u32>| pred.iter().zip(&y).filter(|(a, b)| a == b).count() as f64 / 600.0;
            let got = acc(model.predict(x.view()).unwrap());
            let exact = crate::fit_logistic(&Default::default(), x.view(), &y, k).unwrap();
            let want = acc(exact.predict(x.view()).unwrap());
            // Noise-free clipped SGD should reach the exact optimum's training accuracy up to a
            // few points (0.03 = 18 of 600 rows; it is 0.9 or more on these blobs).
            assert!(
                got >= want - 0.03,
                "{k} classes, {arch:?}: accuracy {got} vs {want}"
            );
        }
    }
}

#[cfg(test)]
mod pipeline_tests {
    use super::*;
    use crate::testutil::blobs;

    fn run(ledger: &mut Ledger, q: f64, steps: u64) -> SubsampledGaussianRun {
        SubsampledGaussianRun::start(ledger, "t", q, 1.0, 1.0, steps, Accountant::Rdp).unwrap()
    }

    #[test]
    fn one_and_two_threads_train_the_same_model() {
        // Expected batches of 100 rows (one slice per step) and 600 (four or five slices, shared
        // between the threads: `slices`).
        for batch in [100, 600] {
            same_model_on_one_and_two_threads(batch);
        }
    }

    #[test]
    fn a_drawing_thread_leaving_mid_run_keeps_the_model() {
        // The drawing thread leaves after its first 1, 5, 40 and 200 looks at its work (as when
        // another fit crowds the cores: `pipeline::CoreClaims`); the caller's thread then draws
        // the remaining steps itself, and the model is the one-thread model.
        for batch in [100, 600] {
            let one = fit(batch, Threads::One, None);
            for after in [1, 5, 40, 200] {
                assert_eq!(
                    fit(batch, Threads::Producers, Some(after)),
                    one,
                    "expected batch {batch}, leaving after {after}"
                );
            }
        }
    }

    /// One seeded run on `threads` (2,000 rows, 5 epochs at expected batch `batch`); its
    /// parameters. With `leave_after`, the drawing thread leaves after that many looks at its
    /// work (`pipeline::run_steps`); without, the run goes through [`train`].
    fn fit(batch: usize, threads: Threads, leave_after: Option<usize>) -> Vec<f64> {
        let (x, y) = blobs(2_000, 6, 3, 2.0, 3);
        let (q, _, steps) = schedule(2_000, batch, 5).unwrap();
        let mut ledger = Ledger::new(dpfair_privacy::Budget::approx(f64::INFINITY, 1e-5).unwrap());
        let mut r = run(&mut ledger, q, steps);
        let net = LogisticNet::new(CompactRows::new(x.view(), &y).unwrap(), 3);
        let mut params = vec![0.0; 3 * 7];
        let mut noise = Noise::seeded(5);
        let plan = Schedule {
            n: 2_000,
            expected_batch: q * 2_000.0,
            q,
            steps,
            learning_rate: 0.5,
            clip: 1.0,
        };
        match leave_after {
            None => train(threads, &net, &mut params, &plan, &mut r, &mut noise),
            Some(after) => {
                let looks = std::sync::atomic::AtomicUsize::new(0);
                let leave = || looks.fetch_add(1, std::sync::atomic::Ordering::SeqCst) >= after;
                pipeline::run_steps(
                    threads,
                    &net,
                    &mut params,
                    &plan,
                    &mut r,
                    &mut noise,
                    &leave,
                )
            }
        }
        .unwrap();
        // The caller's handle drew the even steps; a split-off handle drew the odd ones.
        assert_eq!(r.steps_done(), steps - steps / 2);
        params
    }

    fn same_model_on_one_and_two_threads(batch: usize) {
        let one = fit(batch, Threads::One, None);
        for _ in 0..3 {
            assert_eq!(
                fit(batch, Threads::Producers, None),
                one,
                "expected batch {batch}"
            );
        }
        assert!(one.iter().any(|&p| p != 0.0));
    }

    #[test]
    fn a_refused_step_stops_every_thread_with_the_error() {
        let (x, y) = blobs(500, 3, 2, 2.0, 4);
        for threads in [Threads::One, Threads::Producers] {
            let mut ledger =
                Ledger::new(dpfair_privacy::Budget::approx(f64::INFINITY, 1e-5).unwrap());
            // Charged for 20 steps, asked for 30: the odd steps' handle takes 15, the even
            // steps' handle keeps 5 and refuses its sixth step.
            let mut r = run(&mut ledger, 0.1, 20);
            let net = LogisticNet::new(CompactRows::new(x.view(), &y).unwrap(), 1);
            let mut params = vec![0.0; 4];
            let err = train(
                threads,
                &net,
                &mut params,
                &Schedule {
                    n: 500,
                    expected_batch: 50.0,
                    q: 0.1,
                    steps: 30,
                    learning_rate: 0.5,
                    clip: 1.0,
                },
                &mut r,
                &mut Noise::seeded(1),
            )
            .unwrap_err();
            assert!(err.to_string().contains("step 6 is refused"), "{err}");
        }
    }
}

/// Empirical audit of one DP-SGD step with a canary record (privacy crate's auditor).
#[cfg(test)]
mod audit_tests {
    use super::*;
    use dpfair_privacy::accounting::sgm_epsilon;
    use dpfair_privacy::audit::audit;

    /// One step from θ = 0 on 20 ordinary rows x = (0, 1), y = 0, plus (input 1) a canary
    /// x = (5, 0), y = 1: the ordinary rows' gradients have no first coordinate, the canary's
    /// clipped gradient has first coordinate −0.5·5/‖0.5·(5, 0, 1)‖ ≈ −0.98 (clip C = 1), so the
    /// released first weight is a Gaussian with or without that shift: the worst case of the
    /// subsampled Gaussian, where the auditor's threshold events are the optimal ones.
    /// `net_clip` is the clipping actually applied; the run's noise is calibrated for C = 1.
    fn one_step(
        input: usize,
        noise: &mut Noise,
        run: &mut SubsampledGaussianRun,
        q: f64,
        net_clip: f64,
    ) -> f64 {
        let mut x = [0.0, 1.0].repeat(20);
        let mut y = vec![0u32; 20];
        if input == 1 {
            x.extend([5.0, 0.0]);
            y.push(1);
        }
        let n = y.len();
        let x = ndarray::ArrayView2::from_shape((n, 2), &x[..]).unwrap();
        let net = LogisticNet::new(CompactRows::new(x, &y).unwrap(), 1);
        let mut params = vec![0.0; 3];
        // Learning rate q·n makes the update exactly −(noisy sum).
        train(
            Threads::One,
            &net,
            &mut params,
            &Schedule {
                n,
                expected_batch: q * n as f64,
                q,
                steps: 1,
                learning_rate: q * n as f64,
                clip: net_clip,
            },
            run,
            noise,
        )
        .unwrap();
        params[0]
    }

    /// A run charged once for every step of one audit (`trials` per input).
    fn run_for(q: f64, z: f64, trials: usize) -> SubsampledGaussianRun {
        let mut ledger = Ledger::new(dpfair_privacy::Budget::approx(f64::INFINITY, 1e-5).unwrap());
        SubsampledGaussianRun::start(
            &mut ledger,
            "audit",
            q,
            z,
            1.0,
            2 * trials as u64,
            Accountant::Rdp,
        )
        .unwrap()
    }

    #[test]
    fn audit_of_one_step_with_a_canary() {
        // q = 0.5, z = 0.8: one step costs ε = 5.24 at δ = 1e-5 (RDP), a level at which the
        // auditor (2·10⁵ trials per input, α = 0.01) has power: with seed 2024 it reports a lower
        // bound of 2.82 for the honest step and 6.84 for the broken variant below (caught).
        let (q, z, delta) = (0.5, 0.8, 1e-5);
        let claimed = sgm_epsilon(Accountant::Rdp, q, z, 1, delta).unwrap();
        let mut noise = Noise::seeded(2024);
        let trials = 200_000;
        let mut run = run_for(q, z, trials);
        let honest = audit(&mut noise, trials, delta, 0.01, |input, nz| {
            Ok(one_step(input, nz, &mut run, q, 1.0))
        })
        .unwrap();
        assert!(
            honest.epsilon_lower <= claimed,
            "honest step: ε_lower = {} > claimed {claimed}",
            honest.epsilon_lower
        );
        // Broken: no effective clipping (C = 100) with noise calibrated for C = 1; the canary's
        // shift is 2.5 instead of 0.98 noise units.
        let mut run = run_for(q, z, trials);
        let broken = audit(&mut noise, trials, delta, 0.01, |input, nz| {
            Ok(one_step(input, nz, &mut run, q, 100.0))
        })
        .unwrap();
        assert!(
            broken.epsilon_lower > claimed,
            "broken step not caught: ε_lower = {} ≤ claimed {claimed}",
            broken.epsilon_lower
        );
        eprintln!(
            "claimed ε = {claimed:.3}; audit lower bounds: honest {:.3}, broken {:.3}",
            honest.epsilon_lower, broken.epsilon_lower
        );
    }
}
