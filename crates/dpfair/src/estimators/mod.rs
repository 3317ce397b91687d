//! One checked estimator per method, each built from its params ([`crate::Params`]) and fitted
//! in a [`crate::Session`] ([`crate::Estimator`]).
//!
//! | estimator | method | data it needs |
//! |---|---|---|
//! | [`DpLogistic`] | DP-SGD or output-perturbed logistic regression (privacy only) | features, class target |
//! | [`DpLinear`] | DP linear (ridge) regression by noisy sufficient statistics (privacy only) | features, real target in a public or privately estimated range |
//! | [`CdpFair`] | CDP-Fair, Algorithm 5 of Xue & Yu | features on `[0,1]^d`, binary target, two groups |
//! | [`CdpFairBaseline`] | the privacy-only / fairness-only / unconstrained plug-in references | as CDP-Fair |
//! | [`FdpFair`] | FDP-Fair, Algorithm 1 of Xue & Yu, simulated over sites | as CDP-Fair |
//! | [`FairRegression`] | private Wasserstein-barycenter post-processing (Xian, Li, Kamath, Zhao) | a score column, groups; or features and a real target with a [`DpLinear`] base |
//! | [`Lpct`], [`LpctPrune`] | locally private classification trees with public data (Ma & Yang) | private rows; public rows in the params |
//! | [`Decoupled`] | the decoupled private fair binary classifier (Ghoukasian & Asoodeh) | binary target, two groups |
//! | [`Dp2dp`] | DP2DP, private demographic-parity post-processing (Say, Denis, Pinot) | class target, groups |
//! | [`GroupThresholds`] | private group-wise thresholds: demographic parity, equal opportunity or equalized odds | binary target, two or more groups |
//!
//! `docs/choosing.md` says which method to use when.

mod cdp_fair;
mod decoupled;
mod dp2dp;
mod dp_linear;
mod dp_logistic;
mod fair_regression;
mod fdp_fair;
mod group_thresholds;
mod lpct;

pub(crate) use crate::inputs::{
    Lo, check_delta, check_epsilon, check_in, check_level, check_step_size,
};
pub use crate::inputs::{MAX_EPSILON, MAX_LEARNING_RATE};
pub use cdp_fair::{Baseline, CdpFair, CdpFairBaseline, CdpFairBaselineParams, CdpFairParams};
pub use decoupled::{DEFAULT_PARITY_LEVEL, Decoupled, DecoupledParams, STRICT_LEARNING_RATE};
pub use dp_linear::{DEFAULT_TARGET_SHARE, DpLinear, DpLinearConfig, DpLinearParams};
pub use dp_logistic::{DpLogistic, DpLogisticParams, LogisticMechanism};
pub use dp2dp::{DEFAULT_RHO, DP2DP_ITERATIONS, Dp2dp, Dp2dpParams, check_l2 as check_dp2dp_l2};
pub use fair_regression::{FairRegression, FairRegressionParams};
pub use fdp_fair::{
    DEFAULT_MARGIN_Z, DEFAULT_SITES, FdpFair, FdpFairParams, check_search as check_fdp_search,
};
pub use group_thresholds::{GroupThresholds, GroupThresholdsParams};
pub use lpct::{Lpct, LpctParams, LpctPrune, LpctPruneParams};

use crate::error::Result;
use dpfair_data::{Dataset, Groups, Target};
use ndarray::Array2;

/// Setters on a params type: `name: Type => field.path` sets `self.field.path`.
macro_rules! setters {
    ($params:ty { $( $(#[$doc:meta])* $name:ident : $ty:ty => $($field:ident).+ ; )* }) => {
        impl $params {
            $(
                $(#[$doc])*
                pub fn $name(mut self, value: $ty) -> Self {
                    self.$($field).+ = value;
                    self
                }
            )*
        }
    };
}
pub(crate) use setters;

/// The spend of a fit under `accounting`: strict delivers `(ε, δ)` for replace-one neighbours;
/// a paper's procedure spends more than it claims, so it runs against an unlimited ledger (and
/// needs an unlimited session) that records what it really spends.
pub(crate) fn accounted_spend(
    accounting: crate::predictor::Accounting,
    epsilon: f64,
    delta: f64,
) -> crate::session::Spend {
    crate::session::Spend {
        epsilon: match accounting {
            crate::predictor::Accounting::Strict => epsilon,
            crate::predictor::Accounting::Paper => f64::INFINITY,
        },
        delta,
        relation: dpfair_privacy::Relation::Substitution,
    }
}

/// The fixed-form line every fit prints about its released signal (one line, in the same form
/// on every fit, so that which lines a fit prints never depends on the data): the norm of the
/// released vector `what` (`p` values) and the norm its release noise alone would give
/// (public settings). The noise's squared norm is `σ²χ²_p`, mean `pσ²`, standard deviation
/// `√(2p)σ²`: a norm below `noise·√(1 + 3√(2/p))` (3 standard deviations; twice the noise at
/// p = 2) is consistent with noise alone, and the model then likely no better than a constant.
pub(crate) fn signal_line(what: &str, norm: f64, noise: f64, p: usize) -> String {
    let limit = noise * (1.0 + 3.0 * (2.0 / p.max(1) as f64).sqrt()).sqrt();
    format!(
        "released {what}: norm {norm:.4}; the noise alone would give about {noise:.4} (a \
         norm below {limit:.4} is consistent with noise alone, and the model then likely no \
         better than a constant)"
    )
}

/// The fixed-form line every fit prints about fairness: the level it targets and what its own
/// private (released) estimate of that level says, from released values and public settings.
pub(crate) fn fairness_line(target: &str, estimate: &str) -> String {
    format!("fairness: targets {target}; {estimate}")
}

/// Record a non-private reference fit (`ε = ∞`) as what it is: the whole fit reads the data
/// without noise, so the ledger's total reads `ε = ∞`, not 0.
pub(crate) fn charge_reference(ledger: &mut dpfair_privacy::Ledger) -> Result<()> {
    ledger.charge(dpfair_privacy::Entry::non_private(
        "the whole fit (epsilon = inf)",
        "a non-private reference: fitted without noise",
    ))?;
    Ok(())
}

/// Synthetic data for the examples and doctests (public, seeded: no privacy involved): `n` rows,
/// `d` features uniform on `[0, 1]`, two groups `"a"`/`"b"` with different base rates, and a
/// binary target `P(y = 1 | x, g) = σ(4 (x̄ − 1/2) + (g − 1/2))` where `x̄` is the mean feature.
#[doc(hidden)]
pub fn example_data(n: usize, d: usize, seed: u64) -> Dataset {
    use rand::{RngExt, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let features = Array2::from_shape_fn((n, d), |_| rng.random::<f64>());
    let codes: Vec<u32> = (0..n)
        .map(|_| u32::from(rng.random::<f64>() < 0.4))
        .collect();
    let y: Vec<u8> = (0..n)
        .map(|i| {
            let mean = features.row(i).mean().unwrap_or(0.5);
            let logit = 4.0 * (mean - 0.5) + (f64::from(codes[i]) - 0.5);
            u8::from(rng.random::<f64>() < 1.0 / (1.0 + (-logit).exp()))
        })
        .collect();
    Dataset {
        features,
        feature_names: (0..d).map(|j| format!("x{j}")).collect(),
        groups: Some(Groups {
            codes,
            names: vec!["a".into(), "b".into()],
        }),
        target: Some(Target::Binary(y)),
    }
}

/// The schema of [`example_data`]: numeric features `x0..`, sensitive column `group` with levels
/// `a`, `b`, binary target `y` with labels `0`, `1`.
#[doc(hidden)]
pub fn example_schema(d: usize) -> dpfair_data::Schema {
    use dpfair_data::schema::{FeatureColumn, SensitiveColumn, TargetColumn, TargetEncoding};
    dpfair_data::Schema {
        features: (0..d)
            .map(|j| FeatureColumn::Numeric {
                name: format!("x{j}"),
            })
            .collect(),
        sensitive: Some(SensitiveColumn {
            name: "group".into(),
            levels: vec!["a".into(), "b".into()],
            declared: false,
        }),
        target: Some(TargetColumn {
            name: "y".into(),
            encoding: TargetEncoding::Binary {
                labels: vec!["0".into(), "1".into()],
            },
        }),
        scaling: Default::default(),
    }
}
