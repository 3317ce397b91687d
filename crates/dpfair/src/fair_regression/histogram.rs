//! Algorithm 1, lines 2–13: the bin grid, the private joint (group × bin) histogram, and the
//! repair of each group's noisy histogram into a PMF (Xian et al., Algorithm 1, lines 2–13).

use super::FairRegressionError;
use crate::accumulate::CountTable;
use dpfair_privacy::{Ledger, Noise};
use serde::{Deserialize, Serialize};

/// k equal bins on the public interval `[lo, hi]` (Xian et al., Algorithm 1, lines 2–3, `docs/deviations.md#fair-regression-bin-midpoints` and `docs/deviations.md#fair-regression-discretiser-ties`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Grid {
    pub lo: f64,
    pub hi: f64,
    pub k: usize,
}

impl Grid {
    /// Checks `k ≥ 1` and `lo < hi`, both finite.
    pub fn new(lo: f64, hi: f64, k: usize) -> Result<Self, FairRegressionError> {
        if k == 0 {
            return Err(FairRegressionError::invalid("bins", "k must be ≥ 1"));
        }
        if !(lo.is_finite() && hi.is_finite() && lo < hi) {
            return Err(FairRegressionError::invalid(
                "range",
                format!("needs finite LO < HI, got [{lo}, {hi}]"),
            ));
        }
        Ok(Grid { lo, hi, k })
    }

    /// Bin width Δ = (hi − lo)/k.
    pub fn width(&self) -> f64 {
        (self.hi - self.lo) / self.k as f64
    }

    /// Line 3, the discretizer: `clamp(floor((y − lo)/Δ), 0, k−1)`. Bin boundaries go to the upper
    /// bin, `hi` to the last bin, values outside `[lo, hi]` to the end bins (`docs/deviations.md#fair-regression-discretiser-ties`).
    pub fn bin(&self, y: f64) -> usize {
        let t = ((y - self.lo) / self.width()).floor();
        if t <= 0.0 {
            0
        } else {
            (t as usize).min(self.k - 1)
        }
    }

    /// Line 2, the midpoint of bin j: `lo + (j + ½)Δ` (with the `+ lo` the paper drops, `docs/deviations.md#fair-regression-bin-midpoints`).
    pub fn midpoint(&self, j: usize) -> f64 {
        j as f64 * self.width() + self.lo + self.width() / 2.0
    }

    /// Whether `y` lies in `[lo, hi]`.
    pub fn contains(&self, y: f64) -> bool {
        (self.lo..=self.hi).contains(&y)
    }
}

/// Lines 4–6: the released joint histogram `p̌(a, v_j)`, group-major (`h[a·k + j]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JointHistogram {
    pub m: usize,
    pub k: usize,
    /// Public record count n.
    pub n: usize,
    /// `p̌(a, v_j)` = (count + noise)/n; may be negative.
    pub h: Vec<f64>,
    /// The ε spent (∞ for the non-private reference).
    #[serde(with = "dpfair_privacy::serde_f64")]
    pub epsilon: f64,
}

/// Lines 4–6's sufficient statistic, mergeable ([`crate::accumulate`]): the exact joint
/// (group × bin) counts of the records seen so far. Any split of the records, accumulated and
/// merged in any order, gives the same counts; [`JointCounts::finalize`] releases them once.
///
/// ```
/// use dpfair::fair_regression::histogram::{Grid, JointCounts};
/// use dpfair_privacy::{Budget, Ledger, Noise};
/// let grid = Grid::new(0.0, 1.0, 4).unwrap();
/// let (mut a, mut b) = (JointCounts::new(2, grid), JointCounts::new(2, grid));
/// a.update(&[0.1, 0.9], &[0, 1]).unwrap();
/// b.update(&[0.4], &[1]).unwrap();
/// a.merge(&b).unwrap();
/// let mut ledger = Ledger::new(Budget::pure(1.0).unwrap());
/// let hist = a.finalize(1.0, &mut ledger, &mut Noise::seeded(1)).unwrap();
/// assert_eq!((hist.n, hist.h.len()), (3, 8));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct JointCounts {
    m: usize,
    grid: Grid,
    table: CountTable,
}

impl JointCounts {
    /// No records yet, for `m` groups on `grid`.
    pub fn new(m: usize, grid: Grid) -> Self {
        JointCounts {
            m,
            grid,
            table: CountTable::new(m * grid.k),
        }
    }

    /// Counts rebuilt from a part's exact state ([`JointCounts::counts`], group-major) for `m`
    /// groups on `grid`; refuses a state of another shape.
    ///
    /// ```
    /// use dpfair::fair_regression::histogram::{Grid, JointCounts};
    /// let grid = Grid::new(0.0, 1.0, 2).unwrap();
    /// let mut a = JointCounts::new(2, grid);
    /// a.update(&[0.7], &[1]).unwrap();
    /// assert_eq!(JointCounts::from_counts(2, grid, a.counts().to_vec()).unwrap(), a);
    /// assert!(JointCounts::from_counts(3, grid, a.counts().to_vec()).is_err());
    /// ```
    pub fn from_counts(
        m: usize,
        grid: Grid,
        counts: Vec<u64>,
    ) -> Result<Self, FairRegressionError> {
        if counts.len() != m * grid.k {
            return Err(FairRegressionError::invalid(
                "histogram",
                format!(
                    "{} counts, {m} groups × {} bins need {}",
                    counts.len(),
                    grid.k,
                    m * grid.k
                ),
            ));
        }
        Ok(JointCounts {
            m,
            grid,
            table: CountTable::from_counts(counts),
        })
    }

    /// The number of groups.
    pub fn groups(&self) -> usize {
        self.m
    }

    /// The bin grid.
    pub fn grid(&self) -> Grid {
        self.grid
    }

    /// Count records `(scores[i], groups[i])`: record i goes to cell `a·k + bin(score_i)` (line
    /// 4, with the `a_i = a` indicator the paper's line drops, `docs/deviations.md#fair-regression-line-4-indicator`).
    /// Errors name the first bad row of the batch; the batch is then not counted.
    pub fn update(&mut self, scores: &[f64], groups: &[u32]) -> Result<(), FairRegressionError> {
        if scores.len() != groups.len() {
            return Err(FairRegressionError::invalid(
                "groups",
                format!("{} group codes for {} scores", groups.len(), scores.len()),
            ));
        }
        let (m, k) = (self.m, self.grid.k);
        let mut part = CountTable::new(m * k);
        for (i, (&y, &a)) in scores.iter().zip(groups).enumerate() {
            if y.is_nan() {
                return Err(FairRegressionError::invalid(
                    "scores",
                    format!("row {i} is NaN"),
                ));
            }
            if a as usize >= m {
                return Err(FairRegressionError::invalid(
                    "groups",
                    format!("row {i}: group code {a} is not among the {m} declared groups"),
                ));
            }
            part.add(a as usize * k + self.grid.bin(y))
                .expect("cell in range: group and bin checked");
        }
        self.table.merge(&part).expect("same shape");
        Ok(())
    }

    /// Add another part's counts (same groups and grid).
    pub fn merge(&mut self, other: &JointCounts) -> Result<(), FairRegressionError> {
        if other.m != self.m || other.grid != self.grid {
            return Err(FairRegressionError::invalid(
                "histogram",
                "cannot merge counts of different groups or bins",
            ));
        }
        self.table
            .merge(&other.table)
            .map_err(|e| FairRegressionError::invalid("histogram", e.to_string()))
    }

    /// The exact counts, group-major.
    pub fn counts(&self) -> &[u64] {
        self.table.counts()
    }

    /// Lines 4–6, the only step that reads the data: the joint counts with discrete Laplace
    /// noise of scale 2/ε on each count (one pure ε-DP release, ℓ1 sensitivity 2 under
    /// substitution, exact sampler as `docs/deviations.md#fair-regression-floating-point-laplace`
    /// advises), divided by the public n (`docs/deviations.md#fair-regression-neighbouring-relation-and-n`).
    /// `epsilon = ∞` is the non-private reference: nothing is charged and the exact histogram
    /// is returned.
    pub fn finalize(
        &self,
        epsilon: f64,
        ledger: &mut Ledger,
        noise: &mut Noise,
    ) -> Result<JointHistogram, FairRegressionError> {
        let n = self.table.total() as usize;
        if n == 0 {
            return Err(FairRegressionError::invalid("data", "no rows"));
        }
        if self.m == 0 {
            return Err(FairRegressionError::invalid("groups", "no groups declared"));
        }
        if epsilon.is_nan() || epsilon <= 0.0 {
            return Err(FairRegressionError::invalid(
                "epsilon",
                format!("must be > 0, got {epsilon}"),
            ));
        }
        let (m, k) = (self.m, self.grid.k);
        let counts: Vec<f64> = if epsilon.is_infinite() {
            self.table.counts().iter().map(|&c| c as f64).collect()
        } else {
            let label = format!(
                "fair regression (Xian et al.): joint histogram, {m} groups × {k} bins, n = {n}"
            );
            self.table
                .release(ledger, noise, &label, epsilon)?
                .into_iter()
                .map(|c| c as f64)
                .collect()
        };
        Ok(JointHistogram {
            m,
            k,
            n,
            h: counts.iter().map(|c| c / n as f64).collect(),
            epsilon,
        })
    }
}

/// Lines 4–6 in one pass over `scores` and `groups` ([`JointCounts`] updated once and
/// finalized).
pub fn private_joint_histogram(
    scores: &[f64],
    groups: &[u32],
    m: usize,
    grid: &Grid,
    epsilon: f64,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<JointHistogram, FairRegressionError> {
    if scores.is_empty() {
        return Err(FairRegressionError::invalid("data", "no rows"));
    }
    if m == 0 {
        return Err(FairRegressionError::invalid("groups", "no groups declared"));
    }
    if epsilon.is_nan() || epsilon <= 0.0 {
        return Err(FairRegressionError::invalid(
            "epsilon",
            format!("must be > 0, got {epsilon}"),
        ));
    }
    let mut counts = JointCounts::new(m, *grid);
    counts.update(scores, groups)?;
    counts.finalize(epsilon, ledger, noise)
}

/// One group's repaired estimate (lines 8–13).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RepairedGroup {
    /// `w̃_a`, floored at `floor` (`docs/deviations.md#fair-regression-empty-group-weight`).
    pub weight: f64,
    /// Whether the floor was applied (the group's noisy mass was ≤ floor: near-empty).
    pub floored: bool,
    /// `F̃_a` (last entry exactly 1).
    pub cdf: Vec<f64>,
    /// `p̃_a`.
    pub pmf: Vec<f64>,
}

/// Lines 8–13 for one group's row `p̌(a, ·)`:
/// `w̃ = max(Σ_j p̌(a,j), floor)` (the paper's floor 0 makes line 9 divide by zero; `docs/deviations.md#fair-regression-empty-group-weight` keeps the
/// code's 1e-6); `F̌ = partial sums / w̃`; the L∞ isotonic regression of line 10–11 in closed form,
/// `G(j) = ½(max_{l≤j} F̌(l) + min_{r≥j} F̌(r))` (prefix maximum and suffix minimum; Stout 2017);
/// `F̃ = clamp(G, 0, 1)` with `F̃(k−1) = 1`; `p̃ = ΔF̃` (nonnegative exactly, since every step is
/// monotone).
pub fn repair_group(row: &[f64], floor: f64) -> RepairedGroup {
    let k = row.len();
    let total: f64 = row.iter().sum();
    let floored = total <= floor;
    let weight = total.max(floor);
    let mut acc = 0.0;
    let fcheck: Vec<f64> = row
        .iter()
        .map(|x| {
            acc += x;
            acc / weight
        })
        .collect();
    let mut suffix_min = vec![0.0; k];
    let mut run = f64::INFINITY;
    for j in (0..k).rev() {
        run = run.min(fcheck[j]);
        suffix_min[j] = run;
    }
    let mut prefix_max = f64::NEG_INFINITY;
    let mut cdf: Vec<f64> = (0..k)
        .map(|j| {
            prefix_max = prefix_max.max(fcheck[j]);
            (0.5 * (prefix_max + suffix_min[j])).clamp(0.0, 1.0)
        })
        .collect();
    cdf[k - 1] = 1.0;
    let pmf = super::transport::pmf_from_cdf(&cdf);
    RepairedGroup {
        weight,
        floored,
        cdf,
        pmf,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discretizer_edges() {
        let g = Grid::new(0.0, 1.0, 3).unwrap();
        assert_eq!(g.bin(0.0), 0);
        assert_eq!(g.bin(1.0 / 3.0), 1); // boundary goes up
        assert_eq!(g.bin(0.5), 1);
        assert_eq!(g.bin(1.0), 2); // hi goes to the last bin
        assert_eq!(g.bin(-5.0), 0);
        assert_eq!(g.bin(7.0), 2);
        let law = Grid::new(1.0, 4.0, 1).unwrap();
        assert_eq!(law.midpoint(0), 2.5); // docs/deviations.md#fair-regression-bin-midpoints: with + lo
        assert!(Grid::new(1.0, 1.0, 3).is_err() && Grid::new(0.0, 1.0, 0).is_err());
    }

    /// Privacy: under every single-record substitution of small data sets, the joint count
    /// vector moves by exactly 2 in ℓ1 when the record changes cell and 0 otherwise (so ≤ 2/n
    /// after dividing by n).
    #[test]
    fn joint_counts_have_l1_sensitivity_two() {
        let grid = Grid::new(0.0, 1.0, 4).unwrap();
        let scores = [0.1, 0.3, 0.55, 0.9, 0.95, 0.2];
        let groups = [0, 1, 2, 0, 1, 2];
        let counts = |s: &[f64], g: &[u32]| {
            let mut c = JointCounts::new(3, grid);
            c.update(s, g).unwrap();
            c.counts().iter().map(|&v| v as i32).collect::<Vec<_>>()
        };
        let base = counts(&scores, &groups);
        for i in 0..scores.len() {
            for y in [0.05, 0.3, 0.6, 0.99] {
                for a in 0..3 {
                    let (mut s, mut g) = (scores, groups);
                    s[i] = y;
                    g[i] = a;
                    let l1: i32 = counts(&s, &g)
                        .iter()
                        .zip(&base)
                        .map(|(x, y)| (x - y).abs())
                        .sum();
                    let moved = a != groups[i] || grid.bin(y) != grid.bin(scores[i]);
                    assert_eq!(l1, if moved { 2 } else { 0 });
                }
            }
        }
    }

    #[test]
    fn repair_is_noop_on_valid_histograms_and_monotone_on_noisy_ones() {
        let r = repair_group(&[0.1, 0.0, 0.3], 1e-6);
        assert!((r.weight - 0.4).abs() < 1e-15);
        for (a, b) in r.pmf.iter().zip([0.25, 0.0, 0.75]) {
            assert!((a - b).abs() < 1e-15);
        }
        let noisy = [0.05, -0.02, 0.01, 0.2, -0.1, 0.03, 0.4];
        let r = repair_group(&noisy, 1e-6);
        assert!(r.cdf.windows(2).all(|w| w[0] <= w[1]));
        assert!(r.pmf.iter().all(|p| *p >= 0.0));
        assert_eq!(*r.cdf.last().unwrap(), 1.0);
        // Brute-force L∞ isotonic fit: the max error of the midpoint fit is half the largest
        // decrease max_{l≤m} (F̌(l) − F̌(m)) (Stout 2017), before clipping.
        let w: f64 = noisy.iter().sum();
        let f: Vec<f64> = noisy
            .iter()
            .scan(0.0, |a, x| {
                *a += x;
                Some(*a / w)
            })
            .collect();
        let mut worst_drop = 0.0f64;
        for l in 0..f.len() {
            for m in l..f.len() {
                worst_drop = worst_drop.max(f[l] - f[m]);
            }
        }
        let err = f
            .iter()
            .zip(&r.cdf)
            .take(f.len() - 1)
            .map(|(a, b)| (a.clamp(0.0, 1.0) - b).abs())
            .fold(0.0, f64::max);
        assert!(err <= worst_drop / 2.0 + 1e-12, "{err} vs {worst_drop}");
    }

    #[test]
    fn empty_group_is_floored() {
        let r = repair_group(&[0.0, -1e-3, 0.0], 1e-6);
        assert!(r.floored && r.weight == 1e-6);
        assert!(r.pmf.iter().all(|p| *p >= 0.0));
    }

    /// Random parts of a data set, accumulated separately and merged in random orders, give
    /// the one-pass counts bit for bit and, with the same noise stream, the same released
    /// histogram (the counts are integers: addition is exact and commutative).
    #[test]
    fn parts_merged_in_any_order_give_the_one_pass_histogram() {
        use crate::accumulate::testing::{merge_randomly, random_parts};
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let grid = Grid::new(-1.0, 2.0, 13).unwrap();
        let n = 2_000;
        let scores: Vec<f64> = (0..n).map(|_| rng.random_range(-1.5..2.5)).collect();
        let groups: Vec<u32> = (0..n).map(|_| rng.random_range(0..3)).collect();
        let mut one = JointCounts::new(3, grid);
        one.update(&scores, &groups).unwrap();
        let release = |c: &JointCounts| {
            let mut ledger = Ledger::new(dpfair_privacy::Budget::pure(1.0).unwrap());
            c.finalize(1.0, &mut ledger, &mut Noise::seeded(11))
                .unwrap()
        };
        let reference = release(&one);
        for parts in [1, 2, 5, 17] {
            let accumulated: Vec<JointCounts> = random_parts(n, parts, &mut rng)
                .into_iter()
                .map(|rows| {
                    let mut c = JointCounts::new(3, grid);
                    let s: Vec<f64> = rows.iter().map(|&i| scores[i]).collect();
                    let g: Vec<u32> = rows.iter().map(|&i| groups[i]).collect();
                    c.update(&s, &g).unwrap();
                    c
                })
                .collect();
            let merged = merge_randomly(accumulated, &mut rng, |a, b| a.merge(&b).unwrap());
            assert_eq!(merged.counts(), one.counts(), "{parts} parts");
            assert_eq!(release(&merged), reference, "{parts} parts");
        }
        let other = JointCounts::new(2, grid);
        assert!(one.clone().merge(&other).is_err());
    }
}
