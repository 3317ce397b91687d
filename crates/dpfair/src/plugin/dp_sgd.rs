//! The DP-SGD plug-in `η̃_a(x) = σ(w̃·[x; a; 1])` (`--eta-model dp-sgd`): logistic regression with
//! the group as a feature, trained by DP-SGD at `dp-logistic`'s settings, and the group
//! proportions `π̃` from one Laplace count. CDP-Fair fits it on all rows
//! ([`crate::cdp_fair::all_rows`]); an FDP-Fair site fits it on its training half and the server
//! averages the sites' weights ([`crate::fdp_fair::protocol`];
//! `docs/deviations.md#cdp-fair-dp-sgd-plug-in-on-all-rows`,
//! `docs/deviations.md#fdp-fair-dp-sgd-plug-in`).
//!
//! Both releases are calibrated for replace-one neighbours (the row count is public).

use crate::plugin::error::{Error, Result};
use crate::plugin::logistic::{FeatureMap, LogisticEta};
use crate::plugin::release::PluginEstimate;
use dpfair_learn::{Architecture, Calibration, Classifier, DpSgdConfig, fit_dp_sgd};
use dpfair_privacy::mechanisms::Laplace;
use dpfair_privacy::{Budget, Composition, Cost, Ledger, Noise, Relation};
use ndarray::{Array2, ArrayView2, s};

/// The share of ε spent on the group count behind `π̃`.
pub const PI_SHARE: f64 = 0.05;

/// DP-SGD's settings for `η̃` at `(epsilon, delta)` on `n` rows: `dp-logistic`'s defaults
/// (30 epochs, learning rate 0.5, clip 1, expected batch `n/16` in 16..=1024), replace-one.
///
/// ```
/// let c = dpfair::plugin::dp_sgd::sgd_config(4_000, 1.0, 1e-6);
/// assert_eq!((c.epochs, c.expected_batch), (30, 250));
/// ```
pub fn sgd_config(n: usize, epsilon: f64, delta: f64) -> DpSgdConfig {
    DpSgdConfig {
        epsilon,
        delta,
        epochs: 30,
        learning_rate: 0.5,
        clip: 1.0,
        expected_batch: (n / 16).clamp(16, 1024),
        architecture: Architecture::Logistic,
        relation: Relation::Substitution,
        ..DpSgdConfig::default()
    }
}

/// `π̃` from the count of group 1 by the Laplace mechanism at `epsilon` (Δ = 1 under
/// replace-one): `π̃_1 = ñ_1/n`, `π̃_0 = 1 − π̃_1` (post-processing; `n` is public). One ledger
/// entry, labelled after `prefix`.
///
/// ```
/// use dpfair::plugin::dp_sgd::release_pi;
/// use dpfair_privacy::{Ledger, Noise};
/// let pi = release_pi(&[0, 1, 1, 0], 1e6, "", &mut Ledger::unlimited(), &mut Noise::seeded(1)).unwrap();
/// assert!((pi[1] - 0.5).abs() < 1e-3 && pi[0] + pi[1] == 1.0);
/// ```
pub fn release_pi(
    a: &[u32],
    epsilon: f64,
    prefix: &str,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<[f64; 2]> {
    let count = a.iter().filter(|&&g| g == 1).count() as f64;
    let count = Laplace::from_epsilon(1.0, epsilon)?.release(
        ledger,
        noise,
        &format!("{prefix}π̃ from the count of group 1 (Laplace, Δ = 1)"),
        count,
    )?;
    let pi1 = (count / a.len().max(1) as f64).clamp(0.0, 1.0);
    Ok([1.0 - pi1, pi1])
}

/// How [`release_eta`]'s run is written in the caller's ledger.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunEntry {
    /// The run's own subsampled-Gaussian cost, which the ledger composes in RDP with the rest
    /// (CDP-Fair on all rows).
    Accountant,
    /// One approximate-DP entry: the run is charged to a ledger of its own `(ε, δ)` before any
    /// noise, and that ledger's total, converted at `δ`, to the caller's before the weights
    /// leave. For a part of a partition whose other part spends the whole `δ` on
    /// approximate-DP releases (an FDP-Fair site's halves): the ledger converts an accountant's
    /// cost only at the `δ` such releases leave, which there is none.
    ConvertedAtDelta,
}

/// `η̃` by DP-SGD at `(epsilon, delta)` ([`sgd_config`]) on the rows `x` with groups `a` and
/// labels `y`, returned with `pi`: one ledger entry, written as `entry` says. The weights apply
/// to raw rows ([`FeatureMap::Raw`]); their noise standard deviation is [`weight_noise_sd`].
///
/// ```
/// use dpfair::plugin::dp_sgd::{RunEntry, release_eta};
/// use dpfair_privacy::{Ledger, Noise};
/// let x = ndarray::array![[0.1], [0.9], [0.2], [0.8]];
/// let est = release_eta([0.5, 0.5], 4.0, 1e-3, x.view(), &[0, 0, 1, 1], &[0, 1, 0, 1],
///     RunEntry::Accountant, &mut Ledger::unlimited(), &mut Noise::seeded(1)).unwrap();
/// assert_eq!(est.dim(), 1);
/// ```
#[allow(clippy::too_many_arguments)]
pub fn release_eta(
    pi: [f64; 2],
    epsilon: f64,
    delta: f64,
    x: ArrayView2<f64>,
    a: &[u32],
    y: &[u8],
    entry: RunEntry,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<PluginEstimate> {
    let (n, d) = x.dim();
    let mut design = Array2::zeros((n, d + 1));
    design.slice_mut(s![.., ..d]).assign(&x);
    for (i, &g) in a.iter().enumerate() {
        design[[i, d]] = f64::from(g);
    }
    let labels: Vec<u32> = y.iter().map(|&v| u32::from(v)).collect();
    let sgd = sgd_config(n, epsilon, delta);
    let in_plug_in =
        |e: dpfair_learn::LearnError| Error::InvalidData(format!("DP-SGD plug-in: {e}"));
    let fit = match entry {
        RunEntry::Accountant => {
            fit_dp_sgd(&sgd, design.view(), &labels, 2, ledger, noise).map_err(in_plug_in)?
        }
        RunEntry::ConvertedAtDelta => {
            let mut own =
                Ledger::for_relation(Budget::approx(epsilon, delta)?, Relation::Substitution);
            let fit =
                fit_dp_sgd(&sgd, design.view(), &labels, 2, &mut own, noise).map_err(in_plug_in)?;
            let total = own.total()?;
            let mut run = own.entries()[0].clone();
            run.note = Some(match run.note.take() {
                Some(note) => format!("{note}; {}", total.rule),
                None => total.rule,
            });
            run.cost = Cost::Approx {
                epsilon: total.epsilon,
                delta: total.delta,
            };
            run.composition = Composition::Sequential;
            ledger.charge(run)?;
            fit
        }
    };
    let Classifier::Logistic(model) = &fit.model else {
        return Err(Error::InvalidData(
            "internal: DP-SGD returned a non-logistic model".into(),
        ));
    };
    let mut weights: Vec<f64> = model.coef.row(0).to_vec();
    weights.push(model.intercept[0]);
    Ok(PluginEstimate::logistic(
        pi,
        LogisticEta {
            weights,
            l2: 0.0,
            noise_sd: weight_noise_sd(n, epsilon, delta)?,
            feature_map: FeatureMap::Raw,
        },
    ))
}

/// The standard deviation of the noise DP-SGD adds to each weight of [`release_eta`] on `n`
/// rows at `(epsilon, delta)` (learning rate × z × clip × √T / batch), from public values.
///
/// ```
/// let sd = dpfair::plugin::dp_sgd::weight_noise_sd(4_000, 1.0, 1e-6).unwrap();
/// assert!(sd > 0.0 && sd < 1.0);
/// ```
pub fn weight_noise_sd(n: usize, epsilon: f64, delta: f64) -> Result<f64> {
    let (sgd, calibration) = calibrated(n, epsilon, delta)?;
    Ok(calibration.weight_noise_sd(sgd.learning_rate, sgd.clip))
}

/// [`sgd_config`] on `n` rows and its public calibration.
fn calibrated(n: usize, epsilon: f64, delta: f64) -> Result<(DpSgdConfig, Calibration)> {
    let sgd = sgd_config(n, epsilon, delta);
    let calibration = sgd
        .calibration(n)
        .map_err(|e| Error::InvalidData(format!("DP-SGD plug-in: {e}")))?;
    Ok((sgd, calibration))
}

/// A bound on `‖w̃‖` of an honest [`release_eta`] on `n` rows with `p` weights, exceeded with
/// probability at most `fail` (`docs/federated-trust.md`): the starting weights (each within
/// `1/√(p−1)`, so norm at most `√(p/(p−1)) ≤ √2`), plus T steps that each move the weights by
/// at most `η·C·|B_t|/B`, where `Σ_t |B_t| ≤ 2BT` except with probability `exp(−BT/3)`
/// (Chernoff; `BT ≥ 16·480`, far below `fail`), plus the Gaussian noise's norm,
/// `sd·(√p + √(2 ln(1/fail)))` (Laurent–Massart).
pub fn weight_norm_bound(n: usize, p: usize, epsilon: f64, delta: f64, fail: f64) -> Result<f64> {
    let (sgd, calibration) = calibrated(n, epsilon, delta)?;
    let start = 2f64.sqrt();
    let drift = sgd.learning_rate * sgd.clip * 2.0 * calibration.steps as f64;
    let sd = calibration.weight_noise_sd(sgd.learning_rate, sgd.clip);
    let noise = sd * ((p as f64).sqrt() + (2.0 * (1.0 / fail).ln()).sqrt());
    Ok(start + drift + noise)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The recorded noise is the run's own: `weight_noise_sd` recomputes what `release_eta`
    /// stores, and the trained weights stay within `weight_norm_bound`.
    #[test]
    fn public_noise_and_bound_match_a_run() {
        let n = 400;
        let x = Array2::from_shape_fn((n, 2), |(i, j)| ((i * 7 + j * 3) % 11) as f64 / 10.0);
        let a: Vec<u32> = (0..n).map(|i| (i % 3 == 0) as u32).collect();
        let y: Vec<u8> = (0..n).map(|i| (x[[i, 0]] > 0.5) as u8).collect();
        let est = release_eta(
            [0.6, 0.4],
            1.0,
            1e-4,
            x.view(),
            &a,
            &y,
            RunEntry::Accountant,
            &mut Ledger::unlimited(),
            &mut Noise::seeded(3),
        )
        .unwrap();
        let crate::plugin::release::EtaEstimate::Logistic { logistic } = &est.eta else {
            panic!("not logistic")
        };
        assert_eq!(logistic.noise_sd, weight_noise_sd(n, 1.0, 1e-4).unwrap());
        let norm = logistic.weights.iter().map(|w| w * w).sum::<f64>().sqrt();
        let bound = weight_norm_bound(n, 4, 1.0, 1e-4, 1e-12).unwrap();
        assert!(norm < bound, "{norm} ≥ {bound}");
        // The drift term dominates and is what a step can do at most on average: 2·η·C·T.
        assert!(bound > 0.5 * 2.0 * 480.0, "{bound}");
    }
}
