//! The privacy ledger: the budget a fit may spend, every release made against it, and how the
//! releases compose into one total.
//!
//! Mechanisms call [`Ledger::charge`] *before* they draw noise; a charge that would take the total
//! over budget is refused and nothing is released.
//!
//! Total rule ([`Ledger::total`]), at the ledger's δ:
//! 1. The releases are *items*: each sequential entry, and each parallel partition (entries on
//!    disjoint parts of the data, [`Ledger::in_part`]). A partition costs its worst part: for any
//!    two neighbouring data sets only one part differs.
//! 2. If every cost is pure ε: basic composition, Σ ε (a partition: the largest part's Σ ε), δ = 0.
//! 3. Otherwise two valid bounds are formed and the smaller ε is reported, with its rule:
//!    * RDP (when every cost has an RDP curve: pure ε, ρ-zCDP, RDP, subsampled Gaussian with the
//!      RDP accountant): curves add up over [`default_orders`] (a partition: the order-wise
//!      maximum of its parts' sums) and the sum is converted to (ε, δ) at the ledger's δ;
//!    * basic composition of (ε_i, δ_i): approximate-DP entries bring their own δ_i; what is left
//!      of the ledger's δ is split equally among the other non-pure items (within a part, equally
//!      among its non-pure entries), each converted at its share; a partition contributes its
//!      parts' largest ε and largest δ.
//!
//!    Each bound is monotone in every entry, so the minimum is too: a new entry never lowers the
//!    total.
//!
//! Certification ([`Ledger::is_certified`]): every rule above is a proven upper bound provided
//! each entry's own conversion is. The one exception is a DP-SGD entry accounted with
//! [`Accountant::Gdp`], the Gaussian-DP central-limit *approximation* (it can under-state ε at
//! finite T). A total that relies on such an entry says so: its rule ends with
//! [`UNCERTIFIED_MARK`], and [`Ledger::summary`] prints a warning naming the entries.

use crate::accounting::{self, Accountant, default_orders};
use crate::error::{PrivacyError, Result, invalid};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Mutex;

/// Which neighbouring data sets a guarantee is certified for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Relation {
    /// Replace one record (substitution): dpfair's default.
    #[default]
    Substitution,
    /// Add or remove one record.
    AddRemove,
}

/// How much a fit may spend: (ε, δ); δ = 0 is pure DP.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    pub epsilon: f64,
    pub delta: f64,
}

impl Budget {
    /// Pure ε-DP.
    pub fn pure(epsilon: f64) -> Result<Self> {
        Self::approx(epsilon, 0.0)
    }

    /// (ε, δ)-DP. ε = `f64::INFINITY` means no limit at all (a non-private reference run, or
    /// reporting what a paper's procedure spends): every charge is recorded, and δ is only the δ
    /// at which [`Ledger::total`] converts.
    pub fn approx(epsilon: f64, delta: f64) -> Result<Self> {
        if epsilon.is_nan() || epsilon <= 0.0 {
            return Err(invalid("epsilon", format!("must be > 0, got {epsilon}")));
        }
        if !(0.0..1.0).contains(&delta) {
            return Err(invalid("delta", format!("must be in [0, 1), got {delta}")));
        }
        Ok(Budget { epsilon, delta })
    }

    /// No limit: for non-private references and for reporting what a paper's procedure spends.
    pub fn unlimited() -> Self {
        Budget {
            epsilon: f64::INFINITY,
            delta: 0.0,
        }
    }
}

/// The cost of one release, in the mechanism's native unit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "unit", rename_all = "kebab-case")]
pub enum Cost {
    /// Pure ε-DP.
    Pure { epsilon: f64 },
    /// Approximate (ε, δ)-DP.
    Approx { epsilon: f64, delta: f64 },
    /// ρ-zero-concentrated DP.
    Zcdp { rho: f64 },
    /// A Rényi-DP curve over `orders`.
    Rdp {
        orders: Vec<f64>,
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
    fn rdp_curve(&self, orders: &[f64]) -> Option<Result<Vec<f64>>> {
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
    fn to_dp(&self, delta: f64) -> Result<(f64, f64)> {
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
        match self {
            Cost::Pure { epsilon } => write!(f, "ε = {epsilon}"),
            Cost::Approx { epsilon, delta } => write!(f, "(ε, δ) = ({epsilon}, {delta})"),
            Cost::Zcdp { rho } => write!(f, "ρ = {rho} (zCDP)"),
            Cost::Rdp { orders, .. } => write!(f, "RDP curve over {} orders", orders.len()),
            Cost::SubsampledGaussian {
                sampling_rate,
                noise_multiplier,
                steps,
                accountant,
            } => write!(
                f,
                "subsampled Gaussian q = {sampling_rate}, z = {noise_multiplier}, T = {steps} ({accountant:?})"
            ),
        }
    }
}

/// Whether an entry composes sequentially or in parallel with its siblings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Composition {
    /// Adds to the total.
    #[default]
    Sequential,
    /// One of several releases on disjoint parts of the data: `partition` names the split,
    /// `part` the piece this entry touched. A partition costs its worst part.
    Parallel { partition: String, part: String },
}

/// One release recorded in the ledger.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// What was released, in the method's words (e.g. "group positive rate, a = 1").
    pub label: String,
    /// The mechanism (e.g. "laplace", "gaussian", "dp-sgd").
    pub mechanism: String,
    /// The neighbouring relation the cost is certified for.
    pub relation: Relation,
    /// The sensitivity the noise was calibrated to (in `norm`).
    pub sensitivity: f64,
    /// "l1", "l2", or "linf".
    pub norm: String,
    /// The noise scale (Laplace b, Gaussian σ, or noise multiplier for DP-SGD).
    pub scale: f64,
    pub cost: Cost,
    pub composition: Composition,
    /// Free-form detail (e.g. "steps 1..=500 of 500").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Entry {
    /// A step that reads private data without noise (a paper's procedure, recorded as what it
    /// is): ε = ∞, so a ledger holding one reports an infinite total.
    pub fn non_private(label: impl Into<String>, note: impl Into<String>) -> Entry {
        Entry {
            label: label.into(),
            mechanism: "none (non-private)".into(),
            relation: Relation::Substitution,
            sensitivity: 0.0,
            norm: "none".into(),
            scale: 0.0,
            cost: Cost::Pure {
                epsilon: f64::INFINITY,
            },
            composition: Composition::Sequential,
            note: Some(note.into()),
        }
    }
}

/// Appended to [`Total::rule`] when the total relies on an approximation (see
/// [`Ledger::is_certified`]).
pub const UNCERTIFIED_MARK: &str =
    "NOT A CERTIFIED BOUND: includes the GDP central-limit approximation";

/// The ledger's total, with the rule that produced it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Total {
    pub epsilon: f64,
    pub delta: f64,
    pub rule: String,
}

/// Budget plus the list of releases made against it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ledger {
    budget: Budget,
    entries: Vec<Entry>,
    /// The parallel scope new entries fall into (see [`Ledger::in_part`]).
    #[serde(skip)]
    scope: Option<(String, String)>,
    /// Memo of the accountant evaluations behind [`Ledger::total`] (see [`ConversionCache`]).
    #[serde(skip)]
    cache: ConversionCache,
}

/// Memo of the accountant evaluations the total needs, keyed by the subsampled-Gaussian
/// parameters (and the δ of the conversion): a PRV ε costs ≈ 0.15 s of CPU and an RDP curve a
/// few ms, and a ledger's total is asked for on every charge, by `summary()` and when a model is
/// saved. Entries are append-only and costs immutable, so a memoised value never goes stale; the
/// values are bit-identical to a fresh evaluation (the same function on the same inputs).
/// Not serialised; ignored by equality.
#[derive(Default)]
struct ConversionCache {
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

    fn len(&self) -> usize {
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

impl Ledger {
    pub fn new(budget: Budget) -> Self {
        Ledger {
            budget,
            entries: Vec::new(),
            scope: None,
            cache: ConversionCache::default(),
        }
    }

    /// A ledger without limit (non-private references; paper-mode reporting). Its δ is 0, so
    /// totals over non-pure entries need [`Ledger::total_at`] with a δ.
    pub fn unlimited() -> Self {
        Self::new(Budget::unlimited())
    }

    pub fn budget(&self) -> Budget {
        self.budget
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Whether [`Ledger::total`] is a proven upper bound: false as soon as one entry is accounted
    /// by an approximation (DP-SGD with [`Accountant::Gdp`]), whose ε can be under-stated.
    pub fn is_certified(&self) -> bool {
        self.entries.iter().all(|e| e.cost.is_certified())
    }

    /// The 1-based numbers (as in [`Ledger::summary`]) of the entries whose cost is not a
    /// certified bound.
    pub fn uncertified_entries(&self) -> Vec<usize> {
        self.entries
            .iter()
            .enumerate()
            .filter(|(_, e)| !e.cost.is_certified())
            .map(|(i, _)| i + 1)
            .collect()
    }

    /// Run `f` with every charge it makes recorded as part `part` of the disjoint split
    /// `partition` (parallel composition).
    pub fn in_part<T>(
        &mut self,
        partition: &str,
        part: &str,
        f: impl FnOnce(&mut Ledger) -> Result<T>,
    ) -> Result<T> {
        let saved = self
            .scope
            .replace((partition.to_string(), part.to_string()));
        let out = f(self);
        self.scope = saved;
        out
    }

    /// Record a release. Refused, and nothing recorded, if the total would exceed the budget.
    /// Called by mechanisms before they draw noise.
    pub fn charge(&mut self, mut entry: Entry) -> Result<()> {
        if let Some((partition, part)) = &self.scope
            && entry.composition == Composition::Sequential
        {
            entry.composition = Composition::Parallel {
                partition: partition.clone(),
                part: part.clone(),
            };
        }
        self.entries.push(entry);
        if self.budget.epsilon == f64::INFINITY {
            // No limit: record everything (the total is still computed on request, at δ).
            return Ok(());
        }
        let verdict = self.total().and_then(|t| self.check(&t));
        if let Err(e) = verdict {
            let entry = self.entries.pop().expect("just pushed");
            return Err(match e {
                PrivacyError::BudgetExceeded { remaining, .. } => PrivacyError::BudgetExceeded {
                    label: entry.label,
                    asked: entry.cost.to_string(),
                    remaining,
                },
                other => other,
            });
        }
        Ok(())
    }

    fn check(&self, total: &Total) -> Result<()> {
        const SLACK: f64 = 1e-9;
        let b = self.budget;
        if total.epsilon > b.epsilon * (1.0 + SLACK)
            || total.delta > b.delta * (1.0 + SLACK) + 1e-300
        {
            let spent = self.total_without_last()?;
            return Err(PrivacyError::BudgetExceeded {
                label: String::new(),
                asked: String::new(),
                remaining: format!(
                    "(ε, δ) = ({:.6}, {:.3e}) of the budget ({}, {})",
                    (b.epsilon - spent.epsilon).max(0.0),
                    (b.delta - spent.delta).max(0.0),
                    b.epsilon,
                    b.delta
                ),
            });
        }
        Ok(())
    }

    fn total_without_last(&self) -> Result<Total> {
        let mut l = self.clone();
        l.entries.pop();
        l.total()
    }

    /// The total spent so far, by the rule in the module docs, at the ledger's δ.
    pub fn total(&self) -> Result<Total> {
        self.total_at(self.budget.delta)
    }

    /// The total spent so far, converting non-pure costs at `delta`. When the ledger is not
    /// certified ([`Ledger::is_certified`]) the rule ends with [`UNCERTIFIED_MARK`].
    pub fn total_at(&self, delta: f64) -> Result<Total> {
        let mut total = self.composed_total(delta)?;
        if !self.is_certified() {
            total.rule = format!("{}; {UNCERTIFIED_MARK}", total.rule);
        }
        Ok(total)
    }

    fn composed_total(&self, delta: f64) -> Result<Total> {
        let items = self.items();
        if items.is_empty() {
            return Ok(Total {
                epsilon: 0.0,
                delta: 0.0,
                rule: "no releases".into(),
            });
        }
        let all_pure = items
            .iter()
            .flat_map(|i| i.iter().flatten())
            .all(|c| matches!(c, Cost::Pure { .. }));
        if all_pure {
            let eps: f64 = items
                .iter()
                .map(|i| i.iter().map(|p| pure_sum(p)).fold(0.0, f64::max))
                .sum();
            return Ok(Total {
                epsilon: eps,
                delta: 0.0,
                rule: "basic composition of pure ε (parallel parts: worst part)".into(),
            });
        }
        let rdp = if delta > 0.0 {
            rdp_total(&items, &default_orders(), delta, &self.cache)
        } else {
            None
        };
        let basic = basic_total(&items, delta, &self.cache);
        match (rdp, basic) {
            (Some(Ok(r)), Ok(b)) => Ok(if r.epsilon <= b.epsilon { r } else { b }),
            (Some(Ok(r)), Err(_)) => Ok(r),
            (Some(Err(_)) | None, Ok(b)) => Ok(b),
            (Some(Err(e)), Err(_)) | (None, Err(e)) => Err(e),
        }
    }

    /// The items to compose sequentially: each sequential entry as one part holding one cost,
    /// and each parallel partition as its parts (each the list of its costs).
    fn items(&self) -> Vec<Vec<Vec<Cost>>> {
        let mut out: Vec<Vec<Vec<Cost>>> = self
            .entries
            .iter()
            .filter(|e| e.composition == Composition::Sequential)
            .map(|e| vec![vec![e.cost.clone()]])
            .collect();
        let mut map: BTreeMap<&str, BTreeMap<&str, Vec<Cost>>> = BTreeMap::new();
        for e in &self.entries {
            if let Composition::Parallel { partition, part } = &e.composition {
                map.entry(partition)
                    .or_default()
                    .entry(part)
                    .or_default()
                    .push(e.cost.clone());
            }
        }
        out.extend(map.into_values().map(|parts| parts.into_values().collect()));
        out
    }

    /// A human-readable table of the entries and the total.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "budget: ε = {}, δ = {}\n{:<4} {:<40} {:<14} {:<13} {:>12} {:>12}  cost\n",
            self.budget.epsilon,
            self.budget.delta,
            "#",
            "release",
            "mechanism",
            "relation",
            "sensitivity",
            "scale"
        );
        for (i, e) in self.entries.iter().enumerate() {
            let part = match &e.composition {
                Composition::Sequential => String::new(),
                Composition::Parallel { partition, part } => {
                    format!("  [parallel {partition}: {part}]")
                }
            };
            s.push_str(&format!(
                "{:<4} {:<40} {:<14} {:<13} {:>12.6} {:>12.6}  {}{}\n",
                i + 1,
                e.label,
                e.mechanism,
                format!("{:?}", e.relation).to_lowercase(),
                e.sensitivity,
                e.scale,
                e.cost,
                part
            ));
        }
        match self.total() {
            Ok(t) => s.push_str(&format!(
                "total: ε = {:.6}, δ = {:.3e}  ({})\n",
                t.epsilon, t.delta, t.rule
            )),
            Err(e) => s.push_str(&format!("total: unavailable ({e})\n")),
        }
        let uncertified = self.uncertified_entries();
        if !uncertified.is_empty() {
            let list: Vec<String> = uncertified.iter().map(|i| format!("#{i}")).collect();
            s.push_str(&format!(
                "warning: the total is NOT a certified bound: {} accounted with the GDP \
                 central-limit approximation, which can under-state ε (use the RDP or PRV \
                 accountant for a guarantee)\n",
                list.join(", ")
            ));
        }
        s
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
fn rdp_total(
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
fn basic_total(items: &[Vec<Vec<Cost>>], delta: f64, cache: &ConversionCache) -> Result<Total> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn pure(label: &str, eps: f64) -> Entry {
        Entry {
            label: label.into(),
            mechanism: "laplace".into(),
            relation: Relation::Substitution,
            sensitivity: 1.0,
            norm: "l1".into(),
            scale: 1.0 / eps,
            cost: Cost::Pure { epsilon: eps },
            composition: Composition::Sequential,
            note: None,
        }
    }

    #[test]
    fn pure_entries_add_up_and_overspend_is_refused() {
        let mut l = Ledger::new(Budget::pure(1.0).unwrap());
        l.charge(pure("a", 0.4)).unwrap();
        l.charge(pure("b", 0.6)).unwrap();
        let err = l.charge(pure("c", 0.1)).unwrap_err();
        assert!(matches!(err, PrivacyError::BudgetExceeded { ref label, .. } if label == "c"));
        assert_eq!(l.entries().len(), 2);
        assert!((l.total().unwrap().epsilon - 1.0).abs() < 1e-12);
    }

    #[test]
    fn parallel_parts_cost_their_worst_part() {
        let mut l = Ledger::new(Budget::pure(1.0).unwrap());
        for (part, eps) in [("site 1", 0.5), ("site 2", 0.8), ("site 3", 0.3)] {
            l.in_part("sites", part, |l| l.charge(pure("count", eps)))
                .unwrap();
        }
        assert!((l.total().unwrap().epsilon - 0.8).abs() < 1e-12);
        l.charge(pure("extra", 0.2)).unwrap();
        assert!(l.charge(pure("one too many", 0.01)).is_err());
    }

    #[test]
    fn budget_rejects_bad_parameters() {
        assert!(Budget::pure(0.0).is_err());
        assert!(Budget::pure(f64::NAN).is_err());
        assert!(Budget::approx(1.0, 1.0).is_err());
        assert!(Budget::approx(1.0, -0.1).is_err());
    }

    fn sgm(label: &str, accountant: Accountant, steps: u64) -> Entry {
        Entry {
            label: label.into(),
            mechanism: "dp-sgd".into(),
            relation: Relation::AddRemove,
            sensitivity: 1.0,
            norm: "l2".into(),
            scale: 1.1,
            cost: Cost::SubsampledGaussian {
                sampling_rate: 0.01,
                noise_multiplier: 1.1,
                steps,
                accountant,
            },
            composition: Composition::Sequential,
            note: None,
        }
    }

    #[test]
    fn memoised_totals_equal_fresh_evaluations() {
        let mut l = Ledger::new(Budget::approx(20.0, 1e-5).unwrap());
        l.charge(sgm("run 1", Accountant::Prv, 200)).unwrap();
        l.charge(sgm("run 2", Accountant::Rdp, 300)).unwrap();
        l.charge(pure("count", 0.1)).unwrap();
        let warm = l.total().unwrap();
        assert!(l.cache.len() > 0, "the charges memoised their evaluations");
        // A deserialised copy starts with an empty memo and must agree to the bit.
        let fresh: Ledger = serde_json::from_str(&serde_json::to_string(&l).unwrap()).unwrap();
        assert_eq!(fresh.cache.len(), 0);
        assert_eq!(fresh.total().unwrap(), warm);
        assert_eq!(l.total().unwrap(), warm);
        // And with the composition computed by hand: two slots share δ (basic rule; the PRV
        // entry has no RDP curve), each converted at δ/2.
        let e1 = accounting::sgm_epsilon(Accountant::Prv, 0.01, 1.1, 200, 5e-6).unwrap();
        let e2 = accounting::sgm_epsilon(Accountant::Rdp, 0.01, 1.1, 300, 5e-6).unwrap();
        assert_eq!(warm.epsilon, e1 + e2 + 0.1);
        // The same parameters at another δ are a different memo entry, not a stale hit.
        let at = l.total_at(1e-6).unwrap();
        assert_eq!(at, fresh.total_at(1e-6).unwrap());
        assert!(at.epsilon > warm.epsilon);
    }

    #[test]
    fn gdp_entries_make_the_total_uncertified() {
        let mut l = Ledger::new(Budget::approx(20.0, 1e-5).unwrap());
        l.charge(pure("count", 0.1)).unwrap();
        l.charge(sgm("rdp run", Accountant::Rdp, 100)).unwrap();
        assert!(l.is_certified());
        assert!(!l.total().unwrap().rule.contains(UNCERTIFIED_MARK));
        assert!(!l.summary().contains("NOT a certified bound"));
        l.charge(sgm("gdp run", Accountant::Gdp, 100)).unwrap();
        assert!(!l.is_certified());
        assert_eq!(l.uncertified_entries(), vec![3]);
        assert!(l.total().unwrap().rule.ends_with(UNCERTIFIED_MARK));
        let summary = l.summary();
        assert!(
            summary.contains("NOT a certified bound: #3 accounted with the GDP"),
            "{summary}"
        );
    }

    #[test]
    fn ledger_roundtrips_through_json() {
        let mut l = Ledger::new(Budget::approx(2.0, 1e-5).unwrap());
        l.charge(pure("a", 0.5)).unwrap();
        let s = serde_json::to_string(&l).unwrap();
        let back: Ledger = serde_json::from_str(&s).unwrap();
        assert_eq!(back, l);
    }
}
