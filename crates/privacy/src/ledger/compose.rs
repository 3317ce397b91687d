//! How a ledger's entries compose into one total (the rules are in the module docs of
//! [`super`]): the items to compose, the pure-ε, RDP and basic-composition bounds, and the memo of
//! accountant evaluations they need.

use super::{Composition, Cost, Entry, Total};
use crate::accounting::{self, Accountant};
use crate::error::{Result, invalid};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Mutex;

/// The items to compose sequentially: each sequential entry as one part holding one cost,
/// and each parallel partition (keyed by its [`super::Partition::key`] and name) as its parts,
/// each the list of its costs.
pub(super) fn items(entries: &[Entry]) -> Vec<Vec<Vec<Cost>>> {
    let mut out: Vec<Vec<Vec<Cost>>> = entries
        .iter()
        .filter(|e| e.composition == Composition::Sequential)
        .map(|e| vec![vec![e.cost.clone()]])
        .collect();
    let mut map: BTreeMap<(u64, &str), BTreeMap<&str, Vec<Cost>>> = BTreeMap::new();
    for e in entries {
        if let Composition::Parallel {
            partition,
            part,
            key,
        } = &e.composition
        {
            map.entry((*key, partition))
                .or_default()
                .entry(part)
                .or_default()
                .push(e.cost.clone());
        }
    }
    out.extend(map.into_values().map(|parts| parts.into_values().collect()));
    out
}

/// Whether every cost is pure ε.
pub(super) fn all_pure(items: &[Vec<Vec<Cost>>]) -> bool {
    items
        .iter()
        .flat_map(|i| i.iter().flatten())
        .all(|c| matches!(c, Cost::Pure { .. }))
}

/// Basic composition of pure ε: Σ over items of the worst part's Σ ε.
pub(super) fn pure_total(items: &[Vec<Vec<Cost>>]) -> Total {
    let eps: f64 = items
        .iter()
        .map(|i| i.iter().map(|p| pure_sum(p)).fold(0.0, f64::max))
        .sum();
    Total {
        epsilon: eps,
        delta: 0.0,
        rule: "basic composition of pure ε (parallel parts: worst part)".into(),
    }
}

/// Memo of the accountant evaluations the total needs, keyed by the subsampled-Gaussian
/// parameters (and the δ of the conversion): a PRV ε costs ≈ 0.15 s of CPU and an RDP curve a
/// few ms, and a ledger's total is asked for on every charge, by `summary()` and when a model is
/// saved. Entries are append-only and costs immutable, so a memoised value never goes stale; the
/// values are bit-identical to a fresh evaluation (the same function on the same inputs).
/// Not serialised; ignored by equality.
#[derive(Default)]
pub(super) struct ConversionCache {
    epsilon: Mutex<HashMap<SgmKey, (f64, f64)>>,
    rdp: Mutex<HashMap<SgmKey, Vec<f64>>>,
}

/// (q, z, T, accountant, δ or 0) as exact bits.
type SgmKey = (u64, u64, u64, Accountant, u64);

impl ConversionCache {
    fn key(c: &Cost, delta: f64) -> Option<SgmKey> {
        match c {
            Cost::SubsampledGaussian {
                sampling_rate,
                noise_multiplier,
                steps,
                accountant,
            } => Some((
                sampling_rate.to_bits(),
                noise_multiplier.to_bits(),
                *steps,
                *accountant,
                delta.to_bits(),
            )),
            _ => None,
        }
    }

    /// [`Cost::to_dp`], memoised for subsampled-Gaussian costs.
    fn to_dp(&self, c: &Cost, delta: f64) -> Result<(f64, f64)> {
        let Some(key) = Self::key(c, delta) else {
            return c.to_dp(delta);
        };
        if let Some(v) = lock(&self.epsilon).get(&key) {
            return Ok(*v);
        }
        let v = c.to_dp(delta)?;
        lock(&self.epsilon).insert(key, v);
        Ok(v)
    }

    /// [`Cost::rdp_curve`] over the ledger's [`default_orders`], memoised for
    /// subsampled-Gaussian costs (`orders` must always be the same grid).
    fn rdp_curve(&self, c: &Cost, orders: &[f64]) -> Option<Result<Vec<f64>>> {
        let Some(key) = Self::key(c, 0.0) else {
            return c.rdp_curve(orders);
        };
        if let Some(v) = lock(&self.rdp).get(&key) {
            return Some(Ok(v.clone()));
        }
        let v = c.rdp_curve(orders)?;
        if let Ok(curve) = &v {
            lock(&self.rdp).insert(key, curve.clone());
        }
        Some(v)
    }

    pub(super) fn len(&self) -> usize {
        lock(&self.epsilon).len() + lock(&self.rdp).len()
    }
}

/// The map behind a mutex; a poisoned lock only means another thread panicked mid-insert of a
/// complete value, so its content is still valid.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Clone for ConversionCache {
    fn clone(&self) -> Self {
        ConversionCache {
            epsilon: Mutex::new(lock(&self.epsilon).clone()),
            rdp: Mutex::new(lock(&self.rdp).clone()),
        }
    }
}

impl PartialEq for ConversionCache {
    /// A memo never changes what the ledger means.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl fmt::Debug for ConversionCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ConversionCache({} values)", self.len())
    }
}

/// Σ ε of the pure costs of a part.
fn pure_sum(part: &[Cost]) -> f64 {
    part.iter()
        .map(|c| match c {
            Cost::Pure { epsilon } => *epsilon,
            _ => 0.0,
        })
        .sum()
}

/// Whether a cost must be converted at a share of the ledger's δ (not pure, not approximate).
fn needs_delta(c: &Cost) -> bool {
    !matches!(c, Cost::Pure { .. } | Cost::Approx { .. })
}

/// RDP bound: `None` when some cost has no RDP curve.
pub(super) fn rdp_total(
    items: &[Vec<Vec<Cost>>],
    orders: &[f64],
    delta: f64,
    cache: &ConversionCache,
) -> Option<Result<Total>> {
    let mut sum = vec![0.0; orders.len()];
    for item in items {
        let mut worst = vec![0.0f64; orders.len()];
        for part in item {
            let mut part_sum = vec![0.0; orders.len()];
            for c in part {
                match cache.rdp_curve(c, orders)? {
                    Ok(curve) => part_sum.iter_mut().zip(curve).for_each(|(s, v)| *s += v),
                    Err(e) => return Some(Err(e)),
                }
            }
            worst
                .iter_mut()
                .zip(part_sum)
                .for_each(|(w, v)| *w = w.max(v));
        }
        sum.iter_mut().zip(worst).for_each(|(s, v)| *s += v);
    }
    Some(
        accounting::rdp_to_dp(orders, &sum, delta).map(|epsilon| Total {
            epsilon,
            delta,
            rule: format!(
                "RDP composition over {} orders, converted to (ε, δ) at δ = {delta}",
                orders.len()
            ),
        }),
    )
}

/// Basic composition of (ε_i, δ_i), converting zCDP / RDP / DP-SGD costs at equal shares of
/// what the approximate-DP entries leave of `delta`.
pub(super) fn basic_total(
    items: &[Vec<Vec<Cost>>],
    delta: f64,
    cache: &ConversionCache,
) -> Result<Total> {
    // δ the approximate entries use (a partition: its largest part's), and how many items need
    // a share of the rest.
    let approx = |part: &[Cost]| -> f64 {
        part.iter()
            .map(|c| match c {
                Cost::Approx { delta, .. } => *delta,
                _ => 0.0,
            })
            .sum()
    };
    let approx_delta: f64 = items
        .iter()
        .map(|i| i.iter().map(|p| approx(p)).fold(0.0, f64::max))
        .sum();
    let slots = items
        .iter()
        .filter(|i| i.iter().flatten().any(needs_delta))
        .count();
    let share = if slots > 0 {
        let left = delta - approx_delta;
        if left <= 0.0 {
            return Err(invalid(
                "delta",
                format!(
                    "the ledger's δ = {delta} leaves nothing to convert zCDP/RDP/DP-SGD costs after approximate-DP entries use {approx_delta}"
                ),
            ));
        }
        left / slots as f64
    } else {
        0.0
    };
    let (mut eps, mut del) = (0.0, 0.0);
    for item in items {
        let (mut e_max, mut d_max) = (0.0f64, 0.0f64);
        for part in item {
            let n = part.iter().filter(|c| needs_delta(c)).count().max(1);
            let (mut e, mut d) = (0.0, 0.0);
            for c in part {
                let (ei, di) = cache.to_dp(c, share / n as f64)?;
                e += ei;
                d += di;
            }
            e_max = e_max.max(e);
            d_max = d_max.max(d);
        }
        eps += e_max;
        del += d_max;
    }
    Ok(Total {
        epsilon: eps,
        delta: del,
        rule: format!(
            "basic composition of (ε_i, δ_i); zCDP/RDP/DP-SGD items converted at δ_i = {share:.3e} each"
        ),
    })
}
