//! Mechanisms with discrete outputs: randomized response, noisy histograms, the exponential
//! mechanism (as permute-and-flip) and private quantiles / ranges built on it.

use super::{entry, positive};
use crate::Noise;
use crate::error::{Result, invalid};
use crate::ledger::{Cost, Ledger, Relation};
use crate::samplers::lattice::{Lattice, Norm, dyadic};
use crate::samplers::{bernoulli_exp, discrete_laplace, uniform_below};
use num_bigint::BigUint;
use num_traits::{ToPrimitive, Zero};

/// k-ary randomized response (Warner 1965; Kairouz, Oh, Viswanath 2016 "generalized RR"): the true
/// category with probability e^ε/(e^ε + k − 1), each other category with probability
/// 1/(e^ε + k − 1). ε-DP for any two inputs, so ε-LDP per user. k = 2 is binary RR.
#[derive(Clone, Debug, PartialEq)]
pub struct RandomizedResponse {
    k: usize,
    epsilon: f64,
    /// e^{−ε} as an exact fraction, the probability ratio of "another category" to "the truth".
    ratio: (BigUint, BigUint),
}

impl RandomizedResponse {
    /// k-ary randomized response (k ≥ 2 categories 0..k).
    pub fn new(k: usize, epsilon: f64) -> Result<Self> {
        if k < 2 {
            return Err(invalid(
                "k",
                format!("needs at least 2 categories, got {k}"),
            ));
        }
        let epsilon = positive("epsilon", epsilon)?;
        Ok(RandomizedResponse {
            k,
            epsilon,
            ratio: dyadic(epsilon)?,
        })
    }

    /// Binary randomized response: categories 0 and 1.
    pub fn binary(epsilon: f64) -> Result<Self> {
        Self::new(2, epsilon)
    }

    /// Probability of reporting the true category.
    pub fn keep_probability(&self) -> f64 {
        1.0 / (1.0 + (self.k as f64 - 1.0) * (-self.epsilon).exp())
    }

    /// User side: one randomized report of `value` ∈ 0..k. Exact: draw a uniform slot among k;
    /// slot 0 is the truth (weight 1/k), slot j ≥ 1 is the j-th other category, kept with
    /// probability e^{−ε} (weight e^{−ε}/k); otherwise draw again. So P(truth) ∝ 1 and
    /// P(each other) ∝ e^{−ε}.
    pub fn respond(&self, noise: &mut Noise, value: usize) -> Result<usize> {
        if value >= self.k {
            return Err(invalid(
                "value",
                format!("category {value} is not in 0..{}", self.k),
            ));
        }
        loop {
            let slot = uniform_below(noise, self.k as u64)? as usize;
            if slot == 0 {
                return Ok(value);
            }
            if bernoulli_exp(noise, &self.ratio.0, &self.ratio.1)? {
                let j = slot - 1;
                return Ok(if j < value { j } else { j + 1 });
            }
        }
    }

    /// Collector side: records `n_users` ε-LDP reports (parallel over users: cost ε).
    pub fn charge_reports(&self, ledger: &mut Ledger, label: &str, n_users: usize) -> Result<()> {
        ledger.charge(self.entry(label, n_users))
    }

    fn entry(&self, label: &str, n: usize) -> crate::Entry {
        entry(
            label,
            "randomized response",
            Relation::Substitution,
            1.0,
            "any",
            self.keep_probability(),
            Cost::Pure {
                epsilon: self.epsilon,
            },
            Some(format!(
                "{}-ary, {n} records each randomized once (parallel over records); scale = P(keep)",
                self.k
            )),
        )
    }

    /// Central use: randomizes every record's category (one entry of cost ε: each record's
    /// output depends on that record only).
    pub fn release(
        &self,
        ledger: &mut Ledger,
        noise: &mut Noise,
        label: &str,
        values: &[usize],
    ) -> Result<Vec<usize>> {
        if let Some((i, v)) = values.iter().enumerate().find(|(_, v)| **v >= self.k) {
            return Err(invalid(
                "values",
                format!("entry {i}: category {v} is not in 0..{}", self.k),
            ));
        }
        ledger.charge(self.entry(label, values.len()))?;
        values.iter().map(|&v| self.respond(noise, v)).collect()
    }

    /// Unbiased estimate of the category frequencies from reports (post-processing):
    /// f̂_j = (c_j/n − q)/(p − q), p = P(keep), q = (1 − p)/(k − 1).
    pub fn estimate_frequencies(&self, reports: &[usize]) -> Result<Vec<f64>> {
        if reports.is_empty() {
            return Err(invalid("reports", "no reports"));
        }
        let mut counts = vec![0usize; self.k];
        for (i, &r) in reports.iter().enumerate() {
            *counts.get_mut(r).ok_or_else(|| {
                invalid(
                    "reports",
                    format!("entry {i}: category {r} is not in 0..{}", self.k),
                )
            })? += 1;
        }
        let p = self.keep_probability();
        let q = (1.0 - p) / (self.k as f64 - 1.0);
        let n = reports.len() as f64;
        Ok(counts
            .iter()
            .map(|&c| (c as f64 / n - q) / (p - q))
            .collect())
    }
}

/// A histogram over disjoint bins with exact discrete Laplace noise of scale Δ/ε on each count,
/// Δ the count vector's ℓ1 sensitivity under the ledger's neighbouring relation
/// ([`histogram_sensitivity`]): replacing one record moves one unit between two bins (Δ = 2),
/// adding or removing one changes one bin by one (Δ = 1). The whole histogram is one ε-DP
/// release (parallel composition over the bins; Dwork & Roth 2014 §3.3) and one ledger entry
/// certified for the ledger's relation. `bins[i]` is record i's bin in 0..n_bins. Counts are
/// integers, so no lattice is needed.
pub fn noisy_histogram(
    ledger: &mut Ledger,
    noise: &mut Noise,
    label: &str,
    bins: &[usize],
    n_bins: usize,
    epsilon: f64,
) -> Result<Vec<i64>> {
    positive("epsilon", epsilon)?;
    if n_bins == 0 {
        return Err(invalid("n_bins", "must be ≥ 1"));
    }
    let mut counts = vec![0u64; n_bins];
    for (i, &b) in bins.iter().enumerate() {
        *counts.get_mut(b).ok_or_else(|| {
            invalid("bins", format!("record {i}: bin {b} is not in 0..{n_bins}"))
        })? += 1;
    }
    noisy_counts(ledger, noise, label, &counts, epsilon)
}

/// The ℓ1 sensitivity of a histogram's count vector under `relation`: 2 for replace-one (one
/// record leaves a bin and enters another), 1 for add/remove-one (one bin changes by one).
///
/// ```
/// use dpfair_privacy::{Relation, mechanisms::histogram_sensitivity};
/// assert_eq!(histogram_sensitivity(Relation::Substitution), 2.0);
/// assert_eq!(histogram_sensitivity(Relation::AddRemove), 1.0);
/// ```
pub fn histogram_sensitivity(relation: Relation) -> f64 {
    match relation {
        Relation::Substitution => 2.0,
        Relation::AddRemove => 1.0,
    }
}

/// The discrete Laplace scale b = Δ/ε with which [`noisy_counts`] releases each count on a ledger
/// certifying `relation`: P(noise = z) ∝ exp(−|z|/b). What a caller needs to state the noise's
/// tails (e.g. intervals), without repeating the calibration.
///
/// ```
/// use dpfair_privacy::{Relation, mechanisms::histogram_scale};
/// assert_eq!(histogram_scale(Relation::Substitution, 1.0), 2.0);
/// assert_eq!(histogram_scale(Relation::AddRemove, 0.5), 2.0);
/// ```
pub fn histogram_scale(relation: Relation, epsilon: f64) -> f64 {
    histogram_sensitivity(relation) / epsilon
}

/// [`noisy_histogram`] on counts already made (`counts[b]`: records in bin b), as a mergeable
/// accumulator holds them: the same release, the same charge, the same noise draws. The noise
/// scale is [`histogram_scale`] for the ledger's relation.
///
/// ```
/// use dpfair_privacy::mechanisms::noisy_counts;
/// use dpfair_privacy::{Budget, Ledger, Noise, Relation};
/// let mut ledger = Ledger::for_relation(Budget::pure(1.0)?, Relation::AddRemove);
/// let mut noise = Noise::seeded(3); // seeded for the example only: a release uses Noise::os()
/// let noisy = noisy_counts(&mut ledger, &mut noise, "cells", &[500, 20, 0], 1.0)?;
/// assert_eq!(noisy.len(), 3);
/// let entry = &ledger.entries()[0];
/// assert_eq!((entry.relation, entry.sensitivity, entry.scale), (Relation::AddRemove, 1.0, 1.0));
/// # Ok::<(), dpfair_privacy::PrivacyError>(())
/// ```
pub fn noisy_counts(
    ledger: &mut Ledger,
    noise: &mut Noise,
    label: &str,
    counts: &[u64],
    epsilon: f64,
) -> Result<Vec<i64>> {
    let epsilon = positive("epsilon", epsilon)?;
    let n_bins = counts.len();
    if n_bins == 0 {
        return Err(invalid("n_bins", "must be ≥ 1"));
    }
    let relation = ledger.relation();
    let sensitivity = histogram_sensitivity(relation);
    // scale = Δ/ε exactly: ε = n/d, so Δ/ε = Δd/n (Δ ∈ {1, 2}).
    let (en, ed) = dyadic(epsilon)?;
    let scale_num = ed * (sensitivity as u32);
    ledger.charge(entry(
        label,
        "noisy histogram (laplace)",
        relation,
        sensitivity,
        Norm::L1.name(),
        histogram_scale(relation, epsilon),
        Cost::Pure { epsilon },
        Some(format!(
            "{n_bins} disjoint bins: one entry (parallel composition); sensitivity {sensitivity} \
             under {}",
            relation.describe()
        )),
    ))?;
    counts
        .iter()
        .map(|&c| {
            let z = discrete_laplace(noise, &scale_num, &en)?
                .to_i64()
                .ok_or_else(|| invalid("epsilon", "noise out of the i64 range"))?;
            i64::try_from(c)
                .ok()
                .and_then(|c| c.checked_add(z))
                .ok_or_else(|| invalid("bins", "count plus noise overflows i64"))
        })
        .collect()
}

/// Permute-and-flip (McKenna & Sheldon 2020, Algorithm 1) on integer scores: visit the candidates
/// in uniformly random order and accept candidate r with probability exp(−unit·(max − score_r)),
/// unit = unit_num/unit_den exactly. The best candidate is always accepted, so it ends within one
/// pass. With unit = ε/(2Δ) it is ε-DP (their Thm 1) and never worse in expected score than the
/// exponential mechanism; it is also report-noisy-max with exponential noise (Ding et al. 2021).
fn permute_and_flip(
    noise: &mut Noise,
    scores: &[i128],
    unit_num: &BigUint,
    unit_den: &BigUint,
) -> Result<usize> {
    let best = *scores
        .iter()
        .max()
        .ok_or_else(|| invalid("scores", "no candidates"))?;
    let mut order: Vec<usize> = (0..scores.len()).collect();
    for i in 0..order.len() {
        // Lazy Fisher–Yates: position i gets a uniform pick among the not-yet-visited.
        let j = i + uniform_below(noise, (order.len() - i) as u64)? as usize;
        order.swap(i, j);
        let r = order[i];
        let gap = BigUint::from((best - scores[r]) as u128);
        if gap.is_zero() || bernoulli_exp(noise, &(unit_num * gap), unit_den)? {
            return Ok(r);
        }
    }
    // The best-scoring candidate is always accepted, so the loop returns before this.
    Err(crate::error::PrivacyError::Numerical {
        what: "permute-and-flip",
        reason: "no candidate accepted".into(),
    })
}

/// The exponential mechanism (McSherry & Talwar 2007) for choosing an index with high `scores`,
/// where one record changes any score by at most `sensitivity`: realised exactly as
/// permute-and-flip (same ε-DP guarantee, never worse utility). Scores are rounded to a lattice
/// first (the rounding is added to the sensitivity). One pure-ε entry.
pub fn exponential_mechanism(
    ledger: &mut Ledger,
    noise: &mut Noise,
    label: &str,
    scores: &[f64],
    sensitivity: f64,
    epsilon: f64,
) -> Result<usize> {
    let sensitivity = positive("sensitivity", sensitivity)?;
    let epsilon = positive("epsilon", epsilon)?;
    if scores.is_empty() {
        return Err(invalid("scores", "no candidates"));
    }
    // Each score moves by ≤ g/2 when rounded: sensitivity per score grows by ≤ g (dim 1, ℓ1).
    let lattice = Lattice::for_release(sensitivity, Norm::L1, 1, 2.0 * sensitivity / epsilon)?;
    let eff = lattice.effective_sensitivity(sensitivity);
    let steps = super::to_lattice(&lattice, scores)?;
    // unit = ε·g/(2Δ_eff), exactly.
    let (en, ed) = dyadic(epsilon)?;
    let (gn, gd) = dyadic(lattice.spacing())?;
    let (sn, sd) = dyadic(eff)?;
    let unit_num = en * gn * sd;
    let unit_den = ed * gd * sn * 2u32;
    ledger.charge(entry(
        label,
        "exponential (permute-and-flip)",
        Relation::Substitution,
        eff,
        "linf",
        2.0 * eff / epsilon,
        Cost::Pure { epsilon },
        Some(format!("{} candidates", scores.len())),
    ))?;
    permute_and_flip(noise, &steps, &unit_num, &unit_den)
}

/// Permute-and-flip on integer `scores` whose sensitivity is 1 under *both* replace-one and
/// add/remove-one neighbours (the caller's claim, e.g. distances of counts to a rank target:
/// adding a record moves a count and the target ⌈q·n⌉ by at most 1 each, in the same
/// direction): ε-DP for either relation, so the entry is certified for the ledger's own
/// relation. One pure-ε entry, charged before the draw.
pub(crate) fn choose_by_counts(
    ledger: &mut Ledger,
    noise: &mut Noise,
    label: &str,
    mechanism: &str,
    scores: &[i128],
    epsilon: f64,
    note: String,
) -> Result<usize> {
    let epsilon = positive("epsilon", epsilon)?;
    if scores.is_empty() {
        return Err(invalid("scores", "no candidates"));
    }
    let (en, ed) = dyadic(epsilon)?;
    ledger.charge(entry(
        label,
        mechanism,
        ledger.relation(),
        1.0,
        "linf",
        2.0 / epsilon,
        Cost::Pure { epsilon },
        Some(note),
    ))?;
    permute_and_flip(noise, scores, &en, &(ed * 2u32))
}

/// Checks a coarse public domain.
fn check_domain(coarse: (f64, f64)) -> Result<(f64, f64)> {
    let (lo, hi) = coarse;
    if !(lo.is_finite() && hi.is_finite() && lo < hi) {
        return Err(invalid(
            "coarse",
            format!("the public domain must be finite with lo < hi, got ({lo}, {hi})"),
        ));
    }
    Ok((lo, hi))
}

/// The private q-quantile of `values` by the exponential mechanism over a public grid (Smith 2011,
/// discretised): candidates c_j = lo + (hi − lo)·j/(grid − 1), score(c) = −|#{x ≤ c} − ⌈q·n⌉|.
/// Replacing one record changes each count by at most 1 (n is fixed under substitution), so the
/// score sensitivity is 1 and the choice is ε-DP (permute-and-flip). The grid and the domain are
/// public; values outside it count as below or above every candidate. One pure-ε entry.
#[allow(clippy::too_many_arguments)]
pub fn private_quantile(
    ledger: &mut Ledger,
    noise: &mut Noise,
    label: &str,
    values: &[f64],
    q: f64,
    epsilon: f64,
    coarse: (f64, f64),
    grid: usize,
) -> Result<f64> {
    let epsilon = positive("epsilon", epsilon)?;
    let (lo, hi) = check_domain(coarse)?;
    if !(0.0..=1.0).contains(&q) {
        return Err(invalid("q", format!("must be in [0, 1], got {q}")));
    }
    if grid < 2 {
        return Err(invalid(
            "grid",
            format!("needs at least 2 points, got {grid}"),
        ));
    }
    if let Some(i) = values.iter().position(|v| v.is_nan()) {
        return Err(invalid("values", format!("entry {i} is NaN")));
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let target = (q * sorted.len() as f64).ceil() as i128;
    let candidates: Vec<f64> = (0..grid)
        .map(|j| lo + (hi - lo) * j as f64 / (grid - 1) as f64)
        .collect();
    let scores: Vec<i128> = candidates
        .iter()
        .map(|c| -((sorted.partition_point(|x| x <= c) as i128) - target).abs())
        .collect();
    let (en, ed) = dyadic(epsilon)?;
    ledger.charge(entry(
        label,
        "quantile (exponential, permute-and-flip)",
        Relation::Substitution,
        1.0,
        "linf",
        2.0 / epsilon,
        Cost::Pure { epsilon },
        Some(format!(
            "q = {q}, {grid}-point grid on the public domain [{lo}, {hi}]"
        )),
    ))?;
    let j = permute_and_flip(noise, &scores, &en, &(ed * 2u32))?;
    Ok(candidates[j])
}

/// The quantiles [`private_range`] estimates: 1% and 99%, robust to outliers yet close to the
/// extremes. (q = 0 and 1 would give the exponential mechanism large flat regions below the
/// minimum / above the maximum to wander in.)
pub const RANGE_QUANTILES: (f64, f64) = (0.01, 0.99);
/// Grid points over the coarse domain for [`private_range`].
pub const RANGE_GRID: usize = 1000;

/// Private bounds of a feature for clipping and scaling, when no public bounds are given:
/// two private quantiles ([`private_quantile`], q = [`RANGE_QUANTILES`], [`RANGE_GRID`]-point
/// grid over the required public `coarse` domain), ε/2 each (two ledger entries, sequential
/// composition: ε in total). Returns (min, max) of the two, so lo ≤ hi. Never looks at the
/// data's min/max.
pub fn private_range(
    ledger: &mut Ledger,
    noise: &mut Noise,
    label: &str,
    values: &[f64],
    epsilon: f64,
    coarse: (f64, f64),
) -> Result<(f64, f64)> {
    let epsilon = positive("epsilon", epsilon)?;
    check_domain(coarse)?;
    let (ql, qh) = RANGE_QUANTILES;
    let a = private_quantile(
        ledger,
        noise,
        &format!("{label}: lower bound (q = {ql})"),
        values,
        ql,
        epsilon / 2.0,
        coarse,
        RANGE_GRID,
    )?;
    let b = private_quantile(
        ledger,
        noise,
        &format!("{label}: upper bound (q = {qh})"),
        values,
        qh,
        epsilon / 2.0,
        coarse,
        RANGE_GRID,
    )?;
    Ok((a.min(b), a.max(b)))
}

/// The number of rows `n` released with exact discrete Laplace noise of scale 1/ε, clamped to at
/// least 1: under add/remove-one neighbours one record changes n by one (sensitivity 1), so this
/// is ε-DP for that relation (the entry names it). The size from which a method under
/// add/remove-one neighbours computes its public choices, when none is declared
/// (docs/privacy.md, "The row count under add/remove").
///
/// ```
/// use dpfair_privacy::mechanisms::noisy_row_count;
/// use dpfair_privacy::{Budget, Ledger, Noise, Relation};
/// let mut ledger = Ledger::for_relation(Budget::pure(1.0).unwrap(), Relation::AddRemove);
/// let mut noise = Noise::seeded(1); // seeded for the example only: a release uses Noise::os()
/// let n = noisy_row_count(&mut ledger, &mut noise, "rows", 2_000, 0.5).unwrap();
/// assert!(n >= 1 && (n as f64 - 2_000.0).abs() < 200.0); // scale 2: |noise| > 200 has probability e^-100
/// assert_eq!(ledger.entries()[0].relation, Relation::AddRemove);
/// ```
pub fn noisy_row_count(
    ledger: &mut Ledger,
    noise: &mut Noise,
    label: &str,
    n: usize,
    epsilon: f64,
) -> Result<usize> {
    let epsilon = positive("epsilon", epsilon)?;
    // scale = 1/ε exactly: ε = en/ed, so 1/ε = ed/en.
    let (en, ed) = dyadic(epsilon)?;
    ledger.charge(entry(
        label,
        "noisy count (laplace)",
        Relation::AddRemove,
        1.0,
        Norm::L1.name(),
        1.0 / epsilon,
        Cost::Pure { epsilon },
        Some("the row count: sensitivity 1 under add/remove-one neighbours".into()),
    ))?;
    let z = discrete_laplace(noise, &ed, &en)?
        .to_i64()
        .ok_or_else(|| invalid("epsilon", "noise out of the i64 range"))?;
    let noisy = i64::try_from(n).unwrap_or(i64::MAX).saturating_add(z);
    Ok(usize::try_from(noisy.max(1)).unwrap_or(usize::MAX))
}
