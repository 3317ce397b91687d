//! Which estimator of `η_a(x) = P(Y = 1 | X = x, A = a)` the plug-in uses (`--eta-model`): the
//! papers' kernel ratio ([`crate::plugin::release`]) or the logistic plug-in
//! ([`crate::plugin::logistic`]), and the public rule of `auto` (`docs/choosing.md`,
//! `docs/deviations.md#fdp-fair-logistic-plug-in`).

use crate::plugin::error::Result;
use crate::plugin::logistic::LogisticS1;
use crate::plugin::release::{KernelSums, PluginEstimate, S1Plan};
use dpfair_privacy::{Ledger, Noise};
use serde::{Deserialize, Serialize};

/// The estimator of `η_a`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EtaModel {
    /// The papers' Gaussian-kernel ratio in a random-feature basis (the library default, and
    /// the only choice of `--accounting paper`).
    #[default]
    Kernel,
    /// Output-perturbed logistic regression with the group as a feature.
    Logistic,
    /// DP-SGD logistic regression with the group as a feature ([`crate::plugin::dp_sgd`]):
    /// CDP-Fair on all rows ([`crate::cdp_fair::all_rows`],
    /// `docs/deviations.md#cdp-fair-dp-sgd-plug-in-on-all-rows`), an FDP-Fair site on its
    /// training half (`docs/deviations.md#fdp-fair-dp-sgd-plug-in`; named only: `auto` keeps
    /// FDP-Fair's sites on the kernel or the logistic plug-in, BENCHMARKS.md, "FDP-Fair with
    /// the DP-SGD plug-in").
    DpSgd,
    /// [`EtaModel::resolve`]'s public rule (the CLI's and the estimators' default).
    Auto,
}

/// `auto` keeps the kernel up to this many feature columns (the papers' designs: 2 to 3)...
pub const AUTO_KERNEL_MAX_DIM: usize = 3;

impl EtaModel {
    /// The estimator used for `dim` feature columns (after one-hot encoding): `auto` is the
    /// kernel when `dim ≤ AUTO_KERNEL_MAX_DIM` or under the paper's accounting, else the
    /// logistic plug-in. Reads public quantities only (the schema's column count, the mode).
    ///
    /// ```
    /// use dpfair::plugin::eta_model::EtaModel;
    /// assert_eq!(EtaModel::Auto.resolve(3, false), EtaModel::Kernel);
    /// assert_eq!(EtaModel::Auto.resolve(48, false), EtaModel::Logistic);
    /// assert_eq!(EtaModel::Auto.resolve(48, true), EtaModel::Kernel);
    /// assert_eq!(EtaModel::Logistic.resolve(2, false), EtaModel::Logistic);
    /// ```
    pub fn resolve(self, dim: usize, paper: bool) -> EtaModel {
        match self {
            EtaModel::Auto if paper || dim <= AUTO_KERNEL_MAX_DIM => EtaModel::Kernel,
            EtaModel::Auto => EtaModel::Logistic,
            other => other,
        }
    }

    /// The estimator CDP-Fair (central data) uses: `auto` is the DP-SGD plug-in on all rows
    /// under strict accounting, whatever the dimension (on the proxy suite it beat both the
    /// kernel and output perturbation: BENCHMARKS.md, "The proxy suite"), and the kernel under
    /// the paper's.
    ///
    /// ```
    /// use dpfair::plugin::eta_model::EtaModel;
    /// assert_eq!(EtaModel::Auto.resolve_central(2, false), EtaModel::DpSgd);
    /// assert_eq!(EtaModel::Auto.resolve_central(48, true), EtaModel::Kernel);
    /// assert_eq!(EtaModel::Logistic.resolve_central(48, false), EtaModel::Logistic);
    /// ```
    pub fn resolve_central(self, dim: usize, paper: bool) -> EtaModel {
        match self {
            EtaModel::Auto if !paper => EtaModel::DpSgd,
            other => other.resolve(dim, paper),
        }
    }
}

/// The non-private statistics S1 releases, for either estimator.
#[derive(Clone, Debug)]
pub enum S1Statistics {
    Kernel(KernelSums),
    Logistic(LogisticS1),
}

impl S1Statistics {
    /// Algorithm 1 S1 / Algorithm 5 S1 with this estimator, charging `ledger`.
    pub fn release(
        &self,
        plan: &S1Plan,
        ledger: &mut Ledger,
        noise: &mut Noise,
    ) -> Result<PluginEstimate> {
        match self {
            S1Statistics::Kernel(s) => s.release(plan, ledger, noise),
            S1Statistics::Logistic(s) => s.release(plan, ledger, noise),
        }
    }

    /// The non-private estimate (the references of §5.2).
    pub fn non_private(&self) -> PluginEstimate {
        match self {
            S1Statistics::Kernel(s) => s.non_private(),
            S1Statistics::Logistic(s) => s.non_private(),
        }
    }
}
