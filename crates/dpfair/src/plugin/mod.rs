//! The plug-in core shared by CDP-Fair and FDP-Fair (Xue & Yu, "Federated fairness-aware classification under
//! differential privacy"): the plug-in estimators, the public random-feature basis, the exactly
//! private functional release and the threshold machinery that CDP-Fair (Algorithm 5,
//! [`crate::cdp_fair`]) and FDP-Fair (Algorithms 1–4 and 6, [`crate::fdp_fair`]) both use.
//!
//! | module | paper step |
//! |---|---|
//! | [`kernel`] | Gaussian kernel `K(u) = exp(−‖u‖²/2)` (§5, `C_K = K(0) = 1`), exact kernel sums, bandwidth rules (the authors' cross-validation, public rules) |
//! | [`basis`] | random Fourier features: the public finite basis the functions are released in (`docs/deviations.md#fdp-fair-gp-sample-paths-drawn-once`) |
//! | [`logistic`] | the logistic plug-in, a private parametric `η̃_a` for high dimension (`docs/deviations.md#fdp-fair-logistic-plug-in`) |
//! | [`dp_sgd`] | the DP-SGD plug-in `η̃_a` and its Laplace `π̃` (CDP-Fair on all rows, FDP-Fair per site) |
//! | [`eta_model`] | which `η̃_a` estimator (`--eta-model kernel`, `logistic`, `auto`) and `auto`'s public rule |
//! | [`sincos`] | the sines and cosines of the feature map, vectorised |
//! | [`exp`] | the exponentials of the cross-validation's kernel sums, vectorised |
//! | [`release`] | Algorithm 1 S1 (S1.1 class probabilities, S1.2 densities) as one exactly private finite object |
//! | [`threshold`] | the DD curve of eq. (4)/(20), the exact sweep for `τ̃` (Algorithm 5 S2) and the output rule (eq. 2–3) |
//! | [`classifier`] | the output classifier `f̃` (Alg. 1/5 OUTPUT) and its expected metrics (`docs/deviations.md#fdp-fair-randomised-final-classifier`) |
//! | [`split`] | the training / calibration split (Algorithm 5 step 1, Algorithm 1 "data split") |
//!
//! Features are expected on `[0,1]^d` (the data layer scales them with public or privately
//! estimated bounds); nothing here reads bounds, and the privacy of the functional release does
//! not depend on them (the feature map has unit norm everywhere).

pub mod basis;
pub mod classifier;
pub mod dp_sgd;
pub mod error;
pub mod eta_model;
pub mod exp;
pub mod kernel;
pub mod logistic;
pub mod release;
pub mod sincos;
pub mod split;
pub mod threshold;

pub use basis::RffBasis;
pub use classifier::{ExpectedMetrics, FairPluginClassifier};
pub use error::{Error, Result};
pub use eta_model::EtaModel;
pub use kernel::Bandwidth;
pub use release::{Calibration, EtaEstimate, KernelEta, KernelSums, PluginEstimate};
pub use threshold::{GroupRule, ScoreSet, Side, sweep_threshold};
