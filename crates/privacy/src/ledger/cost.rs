//! The cost of one release, in the mechanism's native unit, and its conversions: to (ε, δ), to
//! an RDP curve, and from add/remove to replace-one neighbours.

use super::Relation;
use crate::accounting::{self, Accountant};
use crate::error::{Result, invalid};
use serde::{Deserialize, Serialize};
use std::fmt;

/// What every rule of [`Cost::add_remove_to_substitution`] begins with, in the note of an entry
/// it restated.
pub(super) const FROM_ADD_REMOVE: &str = "converted from add/remove";

/// The cost of one release, in the mechanism's native unit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "unit", rename_all = "kebab-case")]
pub enum Cost {
    /// Pure ε-DP.
    Pure {
        #[serde(with = "crate::serde_f64")]
        epsilon: f64,
    },
    /// Approximate (ε, δ)-DP.
    Approx {
        #[serde(with = "crate::serde_f64")]
        epsilon: f64,
        delta: f64,
    },
    /// ρ-zero-concentrated DP.
    Zcdp { rho: f64 },
    /// A Rényi-DP curve over `orders`.
    Rdp {
        orders: Vec<f64>,
        #[serde(with = "crate::serde_f64::vec")]
        epsilons: Vec<f64>,
    },
    /// `steps` compositions of the Poisson-subsampled Gaussian (DP-SGD), converted by `accountant`.
    SubsampledGaussian {
        sampling_rate: f64,
        noise_multiplier: f64,
        steps: u64,
        accountant: Accountant,
    },
}

impl Cost {
    /// The RDP curve over `orders`, when this cost has one.
    pub(super) fn rdp_curve(&self, orders: &[f64]) -> Option<Result<Vec<f64>>> {
        match self {
            // ε-DP implies (ε²/2)-zCDP (Bun & Steinke 2016, Prop. 1.4) and RDP ≤ ε at every order.
            Cost::Pure { epsilon } => Some(Ok(orders
                .iter()
                .map(|a| epsilon.min(a * epsilon * epsilon / 2.0))
                .collect())),
            Cost::Zcdp { rho } => Some(Ok(orders.iter().map(|a| a * rho).collect())),
            Cost::Rdp {
                orders: own,
                epsilons,
            } => {
                if own.as_slice() == orders {
                    Some(Ok(epsilons.clone()))
                } else {
                    // Interpolate conservatively: the value at the next larger recorded order
                    // (RDP is non-decreasing in the order).
                    Some(
                        orders
                            .iter()
                            .map(|a| {
                                own.iter()
                                    .zip(epsilons)
                                    .filter(|(o, _)| **o >= *a)
                                    .map(|(_, e)| *e)
                                    .next()
                                    .ok_or(invalid("orders", "RDP curve does not reach order"))
                            })
                            .collect(),
                    )
                }
            }
            Cost::SubsampledGaussian {
                sampling_rate,
                noise_multiplier,
                steps,
                accountant: Accountant::Rdp,
            } => Some(accounting::rdp_sgm_curve(
                *sampling_rate,
                *noise_multiplier,
                *steps,
                orders,
            )),
            Cost::SubsampledGaussian { .. } | Cost::Approx { .. } => None,
        }
    }

    /// (ε, δ) of this cost at the given δ (δ is ignored for pure and approximate costs).
    pub(super) fn to_dp(&self, delta: f64) -> Result<(f64, f64)> {
        match self {
            Cost::Pure { epsilon } => Ok((*epsilon, 0.0)),
            Cost::Approx { epsilon, delta } => Ok((*epsilon, *delta)),
            Cost::Zcdp { rho } => Ok((accounting::zcdp_to_dp(*rho, delta)?, delta)),
            Cost::Rdp { orders, epsilons } => {
                Ok((accounting::rdp_to_dp(orders, epsilons, delta)?, delta))
            }
            Cost::SubsampledGaussian {
                sampling_rate,
                noise_multiplier,
                steps,
                accountant,
            } => Ok((
                accounting::sgm_epsilon(
                    *accountant,
                    *sampling_rate,
                    *noise_multiplier,
                    *steps,
                    delta,
                )?,
                delta,
            )),
        }
    }
}

impl Cost {
    /// Whether this cost's (ε, δ) conversion is a proven upper bound: every cost except a
    /// subsampled Gaussian with the GDP central-limit accountant.
    pub fn is_certified(&self) -> bool {
        match self {
            Cost::SubsampledGaussian { accountant, .. } => accountant.is_certified(),
            _ => true,
        }
    }
}

impl fmt::Display for Cost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use super::{readable as r, readable_up as up};
        match self {
            Cost::Pure { epsilon } => write!(f, "ε = {}", up(*epsilon)),
            Cost::Approx { epsilon, delta } => {
                write!(f, "(ε, δ) = ({}, {})", up(*epsilon), up(*delta))
            }
            Cost::Zcdp { rho } => write!(f, "zCDP ρ = {}", up(*rho)),
            Cost::Rdp { orders, .. } => write!(f, "RDP curve over {} orders", orders.len()),
            Cost::SubsampledGaussian {
                sampling_rate,
                noise_multiplier,
                steps,
                accountant,
            } => write!(
                f,
                "subsampled Gaussian q = {}, z = {}, T = {steps} ({accountant:?})",
                r(*sampling_rate),
                r(*noise_multiplier)
            ),
        }
    }
}

impl Cost {
    /// The cost of a release certified for add/remove neighbours, restated for replace-one
    /// neighbours (a replacement is a removal and an addition), with the rule used:
    /// * pure ε → 2ε, and (ε, δ) → (2ε, (1 + e^ε)δ): group privacy for groups of two;
    /// * ρ-zCDP → 4ρ: zCDP group privacy, k²ρ for groups of k (Bun & Steinke 2016, Prop. 1.9);
    /// * a subsampled Gaussian at noise multiplier z → z/2: sensitivity 2C, the rule DP-SGD's
    ///   own substitution accounting uses ([`crate::mechanisms::SubsampledGaussianRun::start_for`]);
    /// * an RDP curve has no simple group-privacy map here: refused.
    pub fn add_remove_to_substitution(&self) -> Result<(Cost, &'static str)> {
        Ok(match self {
            Cost::Pure { epsilon } => (
                Cost::Pure {
                    epsilon: 2.0 * epsilon,
                },
                "converted from add/remove: group privacy, ε → 2ε",
            ),
            Cost::Approx { epsilon, delta } => (
                Cost::Approx {
                    epsilon: 2.0 * epsilon,
                    // Rounded up (`accounting::outward`): exp, one addition, one product.
                    delta: {
                        let d = (1.0 + epsilon.exp()) * delta;
                        accounting::outward::up(d, d, 3).min(1.0)
                    },
                },
                "converted from add/remove: group privacy, (ε, δ) → (2ε, (1 + e^ε)δ)",
            ),
            Cost::Zcdp { rho } => (
                Cost::Zcdp { rho: 4.0 * rho },
                "converted from add/remove: zCDP group privacy, ρ → 4ρ",
            ),
            Cost::SubsampledGaussian {
                sampling_rate,
                noise_multiplier,
                steps,
                accountant,
            } => (
                Cost::SubsampledGaussian {
                    sampling_rate: *sampling_rate,
                    noise_multiplier: accounting::sgm_effective_noise_multiplier(
                        *noise_multiplier,
                        Relation::Substitution,
                    ),
                    steps: *steps,
                    accountant: *accountant,
                },
                "converted from add/remove: sensitivity 2C, accounted at z/2",
            ),
            Cost::Rdp { .. } => {
                return Err(invalid(
                    "relation",
                    "an RDP cost certified for add/remove neighbours cannot be restated for \
                     replace-one neighbours; charge it to a ledger for add/remove neighbours",
                ));
            }
        })
    }

    /// Whether the cost is ε = ∞ (a step that reads private data without noise): the same for
    /// every relation.
    pub fn is_infinite(&self) -> bool {
        matches!(self, Cost::Pure { epsilon } | Cost::Approx { epsilon, .. } if epsilon.is_infinite())
    }
}
