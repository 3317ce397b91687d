//! The privacy ledger: the budget a fit may spend, every release made against it, and how the
//! releases compose into one total.
//!
//! Mechanisms call [`Ledger::charge`] *before* they draw noise; a charge that would take the total
//! over budget is refused and nothing is released.
//!
//! Total rule ([`Ledger::total`]), at the ledger's δ:
//! 1. The releases are *items*: each sequential entry, and each parallel partition (entries on
//!    disjoint parts of the data, [`Ledger::in_part`]). A partition costs its worst part: for any
//!    two neighbouring data sets only one part differs. A partition made inside a part of
//!    another (`in_part` within `in_part`) is one more item of that part, recursively.
//! 2. If every cost is pure ε: basic composition, Σ ε (a partition: the largest part's Σ ε), δ = 0.
//! 3. Otherwise two valid bounds are formed and the smaller ε is reported, with its rule:
//!    * RDP (when every cost has an RDP curve: pure ε, ρ-zCDP, RDP, subsampled Gaussian with the
//!      RDP accountant): curves add up over [`default_orders`] (a partition: the order-wise
//!      maximum of its parts' sums) and the sum is converted to (ε, δ) at the ledger's δ;
//!    * basic composition of (ε_i, δ_i): approximate-DP entries bring their own δ_i; what is left
//!      of the ledger's δ is split equally among the other non-pure items (within a part, equally
//!      among its non-pure entries), each converted at its share; a partition contributes its
//!      parts' largest ε and largest δ, each part's (ε, δ) the smaller of its own basic and its
//!      own RDP bound at its share.
//!
//!    Each bound is monotone in every entry, so the minimum is too: a new entry never lowers the
//!    total.
//!
//! Relation ([`Ledger::relation`]): a ledger certifies one neighbouring relation, printed with its
//! total and stored with it. An entry certified for add/remove neighbours charged to a
//! replace-one ledger is restated soundly ([`Cost::add_remove_to_substitution`], the rule written
//! in the entry's note); the other way round is refused.
//!
//! Noise ([`Ledger::record_noise`]): the ledger records where the release noise came from. Noise
//! from a seeded stream is reproducible from the seed, so such a ledger is not private: its total
//! says so ([`NOT_PRIVATE_MARK`]) and it is never certified.
//!
//! Certification ([`Ledger::is_certified`]): every rule above is a proven upper bound provided
//! each entry's own conversion is. The one exception is a DP-SGD entry accounted with
//! [`Accountant::Gdp`](crate::accounting::Accountant::Gdp), the Gaussian-DP central-limit *approximation* (it can under-state ε at
//! finite T). A total that relies on such an entry says so: its rule ends with
//! [`UNCERTIFIED_MARK`], and [`Ledger::summary`] prints a warning naming the entries.

mod compose;
mod cost;
mod partition;
mod relation;
mod summary;

pub use cost::Cost;
pub use partition::Partition;
pub use relation::Relation;
pub use summary::{readable, readable_up};

use crate::accounting::default_orders;
use crate::entropy::{Noise, NoiseSource};
use crate::error::{PrivacyError, Result, invalid};
use compose::ConversionCache;
use serde::{Deserialize, Serialize};

/// How much a fit may spend: (ε, δ); δ = 0 is pure DP.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    #[serde(with = "crate::serde_f64")]
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

/// Whether an entry composes sequentially or in parallel with its siblings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Composition {
    /// Adds to the total.
    #[default]
    Sequential,
    /// One of several releases on disjoint parts of the data: `partition` names the split,
    /// `part` the piece this entry touched, `key` is the split's [`Partition::key`] (0 in files
    /// written before keys). A partition costs its worst part.
    ///
    /// `within` lists the parts of other splits this split was made inside, outermost first
    /// (empty for a split of the whole data set): e.g. a method's own halves inside the training
    /// part of a held-out check. Its cost is then counted inside that part only.
    Parallel {
        partition: String,
        part: String,
        #[serde(default)]
        key: u64,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        within: Vec<Scope>,
    },
}

/// One part of one data-independent split (a [`Partition`]'s key and name, and the part).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scope {
    pub partition: String,
    pub part: String,
    pub key: u64,
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
    #[serde(with = "crate::serde_f64")]
    pub sensitivity: f64,
    /// "l1", "l2", or "linf".
    pub norm: String,
    /// The noise scale (Laplace b, Gaussian σ, or noise multiplier for DP-SGD).
    #[serde(with = "crate::serde_f64")]
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

impl Entry {
    /// This entry's cost restated with a Rényi-DP curve, when it has one or a valid bound gives
    /// one (see [`Ledger::rdp_curve`]); `None` otherwise.
    fn rdp_cost(&self) -> Option<Cost> {
        let from_add_remove = self
            .note
            .as_deref()
            .is_some_and(|n| n.contains(cost::FROM_ADD_REMOVE));
        match &self.cost {
            Cost::Approx { .. }
                if self.mechanism.starts_with("gaussian")
                    && self.norm == "l2"
                    && self.scale > 0.0
                    && !from_add_remove =>
            {
                let rho = self.sensitivity * self.sensitivity / (2.0 * self.scale * self.scale);
                Some(Cost::Zcdp { rho: rho.next_up() })
            }
            Cost::SubsampledGaussian {
                sampling_rate,
                noise_multiplier,
                steps,
                ..
            } => Some(Cost::SubsampledGaussian {
                sampling_rate: *sampling_rate,
                noise_multiplier: *noise_multiplier,
                steps: *steps,
                accountant: crate::accounting::Accountant::Rdp,
            }),
            c if c.rdp_curve(&[2.0]).is_some() && !c.is_infinite() => Some(c.clone()),
            _ => None,
        }
    }
}

/// Appended to [`Total::rule`] when the total relies on an approximation (see
/// [`Ledger::is_certified`]).
pub const UNCERTIFIED_MARK: &str =
    "NOT A CERTIFIED BOUND: includes the GDP central-limit approximation";

/// Appended to [`Total::rule`] when the ledger's noise came from a seeded stream.
pub const NOT_PRIVATE_MARK: &str = "NOT PRIVATE: noise reproducible from the seed";

/// The ledger's total, with the rule that produced it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Total {
    #[serde(with = "crate::serde_f64")]
    pub epsilon: f64,
    pub delta: f64,
    pub rule: String,
}

/// Budget plus the list of releases made against it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ledger {
    budget: Budget,
    /// The neighbouring relation the total is certified for.
    #[serde(default)]
    relation: Relation,
    /// Where the release noise came from.
    #[serde(default)]
    noise: NoiseSource,
    entries: Vec<Entry>,
    /// The parallel scopes new entries fall into, outermost first (see [`Ledger::in_part`]).
    #[serde(skip)]
    scope: Vec<Scope>,
    /// Memo of the accountant evaluations behind [`Ledger::total`] (see [`ConversionCache`]).
    #[serde(skip)]
    cache: ConversionCache,
}

impl Ledger {
    /// A ledger for replace-one (substitution) neighbours, dpfair's default relation.
    pub fn new(budget: Budget) -> Self {
        Self::for_relation(budget, Relation::Substitution)
    }

    /// A ledger certifying `relation`.
    pub fn for_relation(budget: Budget, relation: Relation) -> Self {
        Ledger {
            budget,
            relation,
            noise: NoiseSource::Unrecorded,
            entries: Vec::new(),
            scope: Vec::new(),
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

    /// The neighbouring relation this ledger certifies.
    pub fn relation(&self) -> Relation {
        self.relation
    }

    /// Record where the releases' noise comes from. Once a seeded (reproducible) source is
    /// recorded the ledger stays not private.
    pub fn record_noise(&mut self, noise: &Noise) {
        self.record_noise_source(noise.source());
    }

    /// Record a noise source directly (e.g. that of another ledger whose entries this one
    /// gathers). Seeded stays seeded; an unrecorded source changes nothing.
    pub fn record_noise_source(&mut self, source: NoiseSource) {
        self.noise = match (self.noise, source) {
            (NoiseSource::Seeded, _) | (_, NoiseSource::Seeded) => NoiseSource::Seeded,
            (current, NoiseSource::Unrecorded) => current,
            (_, source) => source,
        };
    }

    /// Where the releases' noise came from, as recorded.
    pub fn noise_source(&self) -> NoiseSource {
        self.noise
    }

    /// Whether the releases can be private: false when their noise is reproducible from a seed.
    pub fn is_private(&self) -> bool {
        self.noise != NoiseSource::Seeded
    }

    /// Whether [`Ledger::total`] is a proven upper bound: false as soon as one entry is accounted
    /// by an approximation (DP-SGD with [`Accountant::Gdp`](crate::accounting::Accountant::Gdp)), whose ε can be under-stated.
    /// Also false when the noise is reproducible from a seed ([`Ledger::is_private`]).
    pub fn is_certified(&self) -> bool {
        self.is_private() && self.entries.iter().all(|e| e.cost.is_certified())
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

    /// Run `f` with every charge it makes recorded as part `part` (an index into
    /// [`Partition::parts`]) of the data-independent split `partition` (parallel composition).
    /// Called inside another `in_part`, the split is one of the rows of that part: its cost counts
    /// inside that part only ([`Composition::Parallel`]'s `within`).
    ///
    /// ```
    /// use dpfair_privacy::{Budget, Ledger, Noise, Partition, mechanisms::Laplace};
    /// let mut ledger = Ledger::new(Budget::pure(1.0)?);
    /// let mut noise = Noise::seeded(1);
    /// let check = Partition::new("held-out check", &["fit rows", "check rows"], 3);
    /// let halves = Partition::new("halves", &["first", "second"], 4);
    /// let laplace = Laplace::from_epsilon(1.0, 1.0)?;
    /// ledger.in_part(&check, 0, |l| {
    ///     for half in 0..2 {
    ///         l.in_part(&halves, half, |l| laplace.release(l, &mut noise, "a count", 3.0))?;
    ///     }
    ///     Ok(())
    /// })?;
    /// ledger.in_part(&check, 1, |l| laplace.release(l, &mut noise, "the check", 5.0))?;
    /// // Each release costs ε = 1; the halves are inside the fit rows: max(max(1, 1), 1).
    /// assert!((ledger.total()?.epsilon - 1.0).abs() < 1e-9);
    /// # Ok::<(), dpfair_privacy::PrivacyError>(())
    /// ```
    pub fn in_part<T>(
        &mut self,
        partition: &Partition,
        part: usize,
        f: impl FnOnce(&mut Ledger) -> Result<T>,
    ) -> Result<T> {
        let Some(part_name) = partition.parts().get(part) else {
            return Err(invalid(
                "part",
                format!(
                    "part {part} of the split `{}`, which has {} parts",
                    partition.name(),
                    partition.parts().len()
                ),
            ));
        };
        self.scope.push(Scope {
            partition: partition.name().to_string(),
            part: part_name.clone(),
            key: partition.key(),
        });
        let out = f(self);
        self.scope.pop();
        out
    }

    /// Whether pure charges of `epsilons` made in `part` of `partition`, after what is recorded,
    /// would all be admitted: the check [`Ledger::charge`] makes, asked before anything is
    /// released (no entry is recorded; the answer reads only recorded costs, which are public).
    ///
    /// ```
    /// use dpfair_privacy::{Budget, Ledger, Partition};
    /// let ledger = Ledger::new(Budget::pure(1.0)?);
    /// let check = Partition::new("held-out check", &["fit rows", "check rows"], 3);
    /// assert!(ledger.admits_in_part(&check, 1, &[0.25, 0.75]));
    /// assert!(!ledger.admits_in_part(&check, 1, &[0.5, 0.75]));
    /// # Ok::<(), dpfair_privacy::PrivacyError>(())
    /// ```
    pub fn admits_in_part(&self, partition: &Partition, part: usize, epsilons: &[f64]) -> bool {
        let mut trial = self.clone();
        trial
            .in_part(partition, part, |l| {
                epsilons.iter().try_for_each(|&epsilon| {
                    l.charge(Entry {
                        label: "an admission query".into(),
                        mechanism: "none".into(),
                        relation: l.relation(),
                        sensitivity: 1.0,
                        norm: "l1".into(),
                        scale: 1.0 / epsilon,
                        cost: Cost::Pure { epsilon },
                        composition: Composition::Sequential,
                        note: None,
                    })
                })
            })
            .is_ok()
    }

    /// Record a release. Refused, and nothing recorded, if the total would exceed the budget.
    /// Called by mechanisms before they draw noise.
    /// An entry certified for another relation is restated for this ledger's relation (see the
    /// module docs) or refused.
    pub fn charge(&mut self, mut entry: Entry) -> Result<()> {
        if let Some((inner, outer)) = self.scope.split_last() {
            entry.composition = match entry.composition {
                Composition::Sequential => Composition::Parallel {
                    partition: inner.partition.clone(),
                    part: inner.part.clone(),
                    key: inner.key,
                    within: outer.to_vec(),
                },
                // A split recorded by the caller, made inside this scope's rows.
                Composition::Parallel {
                    partition,
                    part,
                    key,
                    within,
                } => Composition::Parallel {
                    partition,
                    part,
                    key,
                    within: self.scope.iter().cloned().chain(within).collect(),
                },
            };
        }
        self.restate_for_relation(&mut entry)?;
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

    /// Record a release that was already made and admitted by another ledger's budget (e.g. a
    /// fit's own ledger, gathered into a session's): restated for this ledger's relation like
    /// [`Ledger::charge`], but never refused for the budget, because the noise has been drawn.
    pub fn record_released(&mut self, mut entry: Entry) -> Result<()> {
        self.restate_for_relation(&mut entry)?;
        self.entries.push(entry);
        Ok(())
    }

    /// Restate `entry` for this ledger's relation, or refuse it (see the module docs).
    fn restate_for_relation(&self, entry: &mut Entry) -> Result<()> {
        if entry.relation == self.relation {
            return Ok(());
        }
        if entry.cost.is_infinite() {
            // ε = ∞ under every relation.
            entry.relation = self.relation;
            return Ok(());
        }
        match (entry.relation, self.relation) {
            (Relation::AddRemove, Relation::Substitution) => {
                let (cost, rule) = entry.cost.add_remove_to_substitution()?;
                entry.cost = cost;
                entry.relation = Relation::Substitution;
                entry.note = Some(match entry.note.take() {
                    Some(n) => format!("{n}; {rule}"),
                    None => rule.to_string(),
                });
                Ok(())
            }
            (from, to) => Err(invalid(
                "relation",
                format!(
                    "`{}` is certified for {}, which does not imply {}: this ledger certifies {to} \
                     neighbours only",
                    entry.label,
                    from.describe(),
                    to.describe()
                ),
            )),
        }
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

    /// This ledger's Rényi-DP curve over `orders`, its entries composed as in [`Ledger::total`]
    /// (sequential entries add up, a partition costs its order-wise worst part): what a cost
    /// built on a whole run needs ([`crate::selection`]). Two kinds of entry without their own
    /// curve are restated by a bound that holds for them: a Gaussian release recorded in (ε, δ)
    /// is (Δ²/2σ²)-zCDP at its recorded ℓ2 sensitivity Δ and σ (Bun & Steinke 2016, Prop. 1.6;
    /// for the discrete Gaussian, Canonne, Kamath & Steinke 2020, Thm 14), and a subsampled
    /// Gaussian has its RDP curve whichever accountant calibrated it. Any other entry without a
    /// curve (an (ε, δ) release of another mechanism, a non-private step) is an error naming it.
    pub fn rdp_curve(&self, orders: &[f64]) -> Result<Vec<f64>> {
        let mut restated = Vec::with_capacity(self.entries.len());
        for e in &self.entries {
            let cost = e.rdp_cost().ok_or_else(|| {
                invalid(
                    "ledger",
                    format!(
                        "`{}` ({}, {}) has no Rényi-DP curve",
                        e.label, e.mechanism, e.cost
                    ),
                )
            })?;
            restated.push(Entry { cost, ..e.clone() });
        }
        let items = compose::tree(&restated);
        match compose::rdp_curve(&items, orders, &self.cache) {
            Some(curve) => curve,
            None => Err(invalid("ledger", "an entry has no Rényi-DP curve")),
        }
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
        if self.entries.iter().any(|e| !e.cost.is_certified()) {
            total.rule = format!("{}; {UNCERTIFIED_MARK}", total.rule);
        }
        if !self.is_private() {
            total.rule = format!("{}; {NOT_PRIVATE_MARK}", total.rule);
        }
        Ok(total)
    }

    fn composed_total(&self, delta: f64) -> Result<Total> {
        let items = compose::tree(&self.entries);
        if compose::is_empty(&items) {
            return Ok(Total {
                epsilon: 0.0,
                delta: 0.0,
                rule: "no releases".into(),
            });
        }
        if compose::all_pure(&items) {
            return Ok(compose::pure_total(&items));
        }
        let rdp = if delta > 0.0 {
            compose::rdp_total(&items, &default_orders(), delta, &self.cache)
        } else {
            None
        };
        let basic = compose::basic_total(&items, delta, &self.cache);
        match (rdp, basic) {
            (Some(Ok(r)), Ok(b)) => Ok(if r.epsilon <= b.epsilon { r } else { b }),
            (Some(Ok(r)), Err(_)) => Ok(r),
            (Some(Err(_)) | None, Ok(b)) => Ok(b),
            (Some(Err(e)), Err(_)) | (None, Err(e)) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounting::{self, Accountant};

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
        let sites = Partition::new("sites", &["site 1", "site 2", "site 3"], 0);
        for (part, eps) in [0.5, 0.8, 0.3].into_iter().enumerate() {
            l.in_part(&sites, part, |l| l.charge(pure("count", eps)))
                .unwrap();
        }
        assert!(l.in_part(&sites, 3, |l| l.charge(pure("x", 0.1))).is_err());
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

    fn pure_add_remove(label: &str, eps: f64) -> Entry {
        Entry {
            relation: Relation::AddRemove,
            ..pure(label, eps)
        }
    }

    #[test]
    fn memoised_totals_equal_fresh_evaluations() {
        let mut l = Ledger::for_relation(Budget::approx(20.0, 1e-5).unwrap(), Relation::AddRemove);
        l.charge(sgm("run 1", Accountant::Prv, 200)).unwrap();
        l.charge(sgm("run 2", Accountant::Rdp, 300)).unwrap();
        l.charge(pure_add_remove("count", 0.1)).unwrap();
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
        let mut l = Ledger::for_relation(Budget::approx(20.0, 1e-5).unwrap(), Relation::AddRemove);
        l.charge(pure_add_remove("count", 0.1)).unwrap();
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

    #[test]
    fn add_remove_entries_are_restated_for_a_substitution_ledger() {
        let mut l = Ledger::new(Budget::approx(50.0, 1e-5).unwrap());
        let mut e = pure("count", 0.5);
        e.relation = Relation::AddRemove;
        l.charge(e).unwrap();
        let mut e = sgm("dp-sgd", Accountant::Rdp, 100);
        e.relation = Relation::AddRemove;
        l.charge(e).unwrap();
        let entries = l.entries();
        assert_eq!(entries[0].cost, Cost::Pure { epsilon: 1.0 });
        assert!(entries[0].note.as_deref().unwrap().contains("ε → 2ε"));
        assert!(matches!(
            entries[1].cost,
            Cost::SubsampledGaussian { noise_multiplier, .. } if noise_multiplier == 1.1 / 2.0
        ));
        assert!(entries.iter().all(|e| e.relation == Relation::Substitution));
        // The other way round is refused, and nothing is recorded.
        let mut ar = Ledger::for_relation(Budget::unlimited(), Relation::AddRemove);
        let err = ar.charge(pure("quantile", 0.5)).unwrap_err();
        assert!(err.to_string().contains("does not imply"), "{err}");
        assert!(ar.entries().is_empty());
        // ε = ∞ is ε = ∞ under every relation.
        ar.charge(Entry::non_private("all", "no noise")).unwrap();
        assert_eq!(ar.total().unwrap().epsilon, f64::INFINITY);
    }

    #[test]
    fn seeded_noise_makes_the_ledger_not_private() {
        let mut l = Ledger::new(Budget::pure(1.0).unwrap());
        assert_eq!(l.noise_source(), NoiseSource::Unrecorded);
        l.record_noise(&Noise::os());
        l.charge(pure("a", 0.5)).unwrap();
        assert!(l.is_private() && l.is_certified());
        assert!(!l.total().unwrap().rule.contains(NOT_PRIVATE_MARK));
        l.record_noise(&Noise::seeded(1));
        l.record_noise(&Noise::os());
        assert!(!l.is_private() && !l.is_certified());
        assert!(l.total().unwrap().rule.ends_with(NOT_PRIVATE_MARK));
        assert!(
            l.summary()
                .contains("NOT PRIVATE: noise reproducible from the seed")
        );
        let back: Ledger = serde_json::from_str(&serde_json::to_string(&l).unwrap()).unwrap();
        assert_eq!(back.noise_source(), NoiseSource::Seeded);
    }

    #[test]
    fn infinite_budgets_and_costs_round_trip_through_json() {
        let mut l = Ledger::unlimited();
        l.charge(Entry::non_private("fit", "paper procedure"))
            .unwrap();
        let text = serde_json::to_string(&l).unwrap();
        assert!(!text.contains("null"), "{text}");
        let back: Ledger = serde_json::from_str(&text).unwrap();
        assert_eq!(back, l);
        assert_eq!(back.total().unwrap().epsilon, f64::INFINITY);
        // Files written before: serde_json's `null` for ∞.
        let legacy = text.replace("\"inf\"", "null");
        let old: Ledger = serde_json::from_str(&legacy).unwrap();
        assert_eq!(old, l);
    }

    #[test]
    fn splits_with_the_same_name_but_different_seeds_compose_sequentially() {
        let mut l = Ledger::new(Budget::pure(10.0).unwrap());
        let a = Partition::new("halves", &["train", "calibrate"], 1);
        let b = Partition::new("halves", &["train", "calibrate"], 2);
        l.in_part(&a, 0, |l| l.charge(pure("x", 1.0))).unwrap();
        l.in_part(&a, 1, |l| l.charge(pure("y", 1.0))).unwrap();
        assert_eq!(l.total().unwrap().epsilon, 1.0);
        // Another random split of the same rows: not disjoint from the first.
        l.in_part(&b, 0, |l| l.charge(pure("z", 1.0))).unwrap();
        assert_eq!(l.total().unwrap().epsilon, 2.0);
    }

    /// A zCDP-costed entry (RDP curve αρ; needs a share of δ in the basic bound).
    fn zcdp(label: &str, rho: f64) -> Entry {
        Entry {
            cost: Cost::Zcdp { rho },
            ..pure(label, 1.0)
        }
    }

    #[test]
    fn a_split_inside_a_part_counts_inside_that_part_only() {
        let mut l = Ledger::new(Budget::pure(3.0).unwrap());
        let check = Partition::new("check", &["fit rows", "check rows"], 1);
        let halves = Partition::new("halves", &["train", "calibrate"], 2);
        l.charge(pure("bounds, every row", 0.5)).unwrap();
        l.in_part(&check, 0, |l| {
            l.charge(pure("fit, all fit rows", 0.25))?;
            l.in_part(&halves, 0, |l| l.charge(pure("train half", 1.0)))?;
            l.in_part(&halves, 1, |l| l.charge(pure("calibrate half", 0.75)))
        })
        .unwrap();
        // bounds + max(fit part = 0.25 + max(1, 0.75), check part).
        assert!((l.total().unwrap().epsilon - 1.75).abs() < 1e-12);
        l.in_part(&check, 1, |l| l.charge(pure("check", 1.25)))
            .unwrap();
        assert!((l.total().unwrap().epsilon - 1.75).abs() < 1e-12);
        l.in_part(&check, 1, |l| l.charge(pure("check again", 0.5)))
            .unwrap();
        assert!((l.total().unwrap().epsilon - 2.25).abs() < 1e-12);
        // The nesting is recorded, and read back from JSON.
        let inner = &l.entries()[2].composition;
        let Composition::Parallel { within, part, .. } = inner else {
            panic!("{inner:?}")
        };
        assert_eq!((part.as_str(), within.len()), ("train", 1));
        assert_eq!(within[0].part, "fit rows");
        let back: Ledger = serde_json::from_str(&serde_json::to_string(&l).unwrap()).unwrap();
        assert_eq!(back, l);
        assert_eq!(back.total().unwrap(), l.total().unwrap());
    }

    #[test]
    fn a_split_of_the_whole_data_is_written_as_before() {
        let mut l = Ledger::new(Budget::pure(1.0).unwrap());
        let halves = Partition::new("halves", &["train", "calibrate"], 2);
        l.in_part(&halves, 0, |l| l.charge(pure("x", 1.0))).unwrap();
        let text = serde_json::to_string(&l).unwrap();
        assert!(text.contains("\"part\":\"train\""), "{text}");
        assert!(!text.contains("within"), "{text}");
    }

    #[test]
    fn nesting_a_whole_fit_in_one_part_leaves_every_bound_unchanged() {
        // The same releases, at the top level and inside the fit part of a check whose check
        // part is empty: the RDP and the basic (ε, δ) bounds (δ shares included) must agree.
        let fit = |l: &mut Ledger| -> Result<()> {
            let halves = Partition::new("halves", &["train", "calibrate"], 2);
            l.charge(zcdp("all rows", 0.01))?;
            l.in_part(&halves, 0, |l| l.charge(zcdp("train", 0.05)))?;
            l.in_part(&halves, 1, |l| {
                l.charge(zcdp("calibrate", 0.02))?;
                l.charge(pure("calibrate, pure", 0.1))
            })
        };
        let mut top = Ledger::new(Budget::approx(10.0, 1e-6).unwrap());
        fit(&mut top).unwrap();
        let mut nested = Ledger::new(Budget::approx(10.0, 1e-6).unwrap());
        let check = Partition::new("check", &["fit rows", "check rows"], 1);
        nested.in_part(&check, 0, |l| fit(l)).unwrap();
        for ledger in [&top, &nested] {
            assert!(!compose::all_pure(&compose::tree(ledger.entries())));
        }
        let orders = default_orders();
        let rdp = |l: &Ledger| {
            compose::rdp_total(&compose::tree(l.entries()), &orders, 1e-6, &l.cache)
                .unwrap()
                .unwrap()
                .epsilon
        };
        let basic = |l: &Ledger| {
            let t = compose::basic_total(&compose::tree(l.entries()), 1e-6, &l.cache).unwrap();
            (t.epsilon, t.delta)
        };
        assert!((rdp(&top) - rdp(&nested)).abs() < 1e-12);
        // The basic bound may take the part's own RDP conversion: never above the top-level one.
        let (bt, bn) = (basic(&top), basic(&nested));
        assert!(bn.0 <= bt.0 + 1e-12 && bn.1 <= 1e-6, "{bt:?} {bn:?}");
        let (tt, tn) = (top.total().unwrap(), nested.total().unwrap());
        assert!((tt.epsilon - tn.epsilon).abs() < 1e-12, "{tt:?} {tn:?}");
    }

    #[test]
    fn a_pure_check_beside_an_rdp_admitted_fit_costs_no_more_than_the_larger() {
        // The fit part (zCDP releases, RDP-converted to ε_fit at δ) beside a pure check of
        // ε_fit: the total is ε_fit (each part converted on its own; parallel composition).
        let check = Partition::new("check", &["fit rows", "check rows"], 1);
        let mut alone = Ledger::new(Budget::approx(10.0, 1e-5).unwrap());
        alone.charge(zcdp("fit", 0.02)).unwrap();
        alone.charge(zcdp("fit, more", 0.03)).unwrap();
        let eps_fit = alone.total().unwrap().epsilon;
        let mut l = Ledger::new(Budget::approx(eps_fit + 1e-9, 1e-5).unwrap());
        l.in_part(&check, 0, |l| {
            l.charge(zcdp("fit", 0.02))?;
            l.charge(zcdp("fit, more", 0.03))
        })
        .unwrap();
        l.in_part(&check, 1, |l| l.charge(pure("check", eps_fit)))
            .unwrap();
        let t = l.total().unwrap();
        assert!(
            (t.epsilon - eps_fit).abs() < 1e-9 && t.delta <= 1e-5,
            "{t:?} vs {eps_fit}"
        );
        // A check above the fit's ε is refused.
        let mut more = l.clone();
        assert!(
            more.in_part(&check, 1, |l| l.charge(pure("again", 0.1)))
                .is_err()
        );
    }
}
