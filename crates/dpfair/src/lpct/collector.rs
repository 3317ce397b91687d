//! The collector's side of the local protocol as mergeable accumulators: reports are folded into
//! per-cell sums as they arrive ([`HadamardSums::add`], [`LaplaceSums::add`]), accumulators of
//! different files, threads or machines are combined with `merge`, and `finalize` records the
//! n reports in the ledger (each ε-LDP, parallel over holders) and returns the per-leaf sums
//! LPCT's estimators need ([`NoisySums`]). Memory is O(|I|), independent of the number of
//! reports.
//!
//! Hadamard sums are integers (per row: the number of reports and of +1 bits), so any split of
//! the reports, merged in any order, gives the same statistic bit for bit; the decoding
//! (one fast Walsh–Hadamard transform) is a deterministic function of it. Laplace sums are
//! floating-point sums of real reports: merging is exact only up to the order of additions.
//!
//! No noise is drawn here: every report was randomised by its holder.

use super::error::{Result, bad_data, check_epsilon, invalid};
use super::privatiser::{Mechanism, NoisySums, REPORT_SENSITIVITY, charge_reports};
use dpfair_privacy::Ledger;
use dpfair_privacy::mechanisms::HadamardResponse;

/// The cell of (leaf j, label y) in the Hadamard oracle: 2j + y.
#[inline]
pub fn hadamard_cell(leaf: usize, label: u8) -> usize {
    2 * leaf + usize::from(label)
}

/// Row sums of Hadamard reports: per row r, the number of reports and of those with bit +1.
///
/// ```
/// use dpfair::lpct::collector::HadamardSums;
/// use dpfair_privacy::{Budget, Ledger};
///
/// let mut a = HadamardSums::new(1.0, 2).unwrap();
/// a.add(0, true).unwrap();
/// let mut b = HadamardSums::new(1.0, 2).unwrap();
/// b.add(3, false).unwrap();
/// a.merge(&b).unwrap();
/// let mut ledger = Ledger::new(Budget::pure(1.0).unwrap());
/// let sums = a.finalize(&mut ledger, "leaf reports").unwrap();
/// assert_eq!((sums.n_users, sums.count.len()), (2, 2));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HadamardSums {
    epsilon_bits: u64,
    n_leaves: usize,
    total: Vec<u64>,
    ones: Vec<u64>,
}

impl HadamardSums {
    /// Empty sums for a partition of `n_leaves` leaves whose reports use ε.
    pub fn new(epsilon: f64, n_leaves: usize) -> Result<Self> {
        let hr = oracle(epsilon, n_leaves)?;
        Ok(HadamardSums {
            epsilon_bits: epsilon.to_bits(),
            n_leaves,
            total: vec![0; hr.rows()],
            ones: vec![0; hr.rows()],
        })
    }

    pub fn epsilon(&self) -> f64 {
        f64::from_bits(self.epsilon_bits)
    }

    pub fn n_leaves(&self) -> usize {
        self.n_leaves
    }

    /// K, the number of Hadamard rows a report may name.
    pub fn rows(&self) -> usize {
        self.total.len()
    }

    /// The number of reports folded in.
    pub fn n_reports(&self) -> u64 {
        self.total.iter().sum()
    }

    /// The exact state: per Hadamard row, the number of reports and of those with bit +1 (what
    /// a part sends to be merged elsewhere; [`HadamardSums::from_state`] rebuilds it).
    pub fn state(&self) -> (&[u64], &[u64]) {
        (&self.total, &self.ones)
    }

    /// Sums rebuilt from a [`HadamardSums::state`] for ε and `n_leaves`; refuses a state of
    /// another number of rows, or with more +1 bits than reports in a row.
    ///
    /// ```
    /// use dpfair::lpct::collector::HadamardSums;
    /// let mut a = HadamardSums::new(1.0, 2).unwrap();
    /// a.add(3, true).unwrap();
    /// let (total, ones) = a.state();
    /// let b = HadamardSums::from_state(1.0, 2, total.to_vec(), ones.to_vec()).unwrap();
    /// assert_eq!(a, b);
    /// assert!(HadamardSums::from_state(1.0, 3, total.to_vec(), ones.to_vec()).is_err());
    /// ```
    pub fn from_state(
        epsilon: f64,
        n_leaves: usize,
        total: Vec<u64>,
        ones: Vec<u64>,
    ) -> Result<Self> {
        let mut sums = HadamardSums::new(epsilon, n_leaves)?;
        if total.len() != sums.rows() || ones.len() != sums.rows() {
            return Err(bad_data(
                "reports",
                format!(
                    "sums of {} and {} rows, a partition of {n_leaves} leaves at ε = {epsilon} has {} Hadamard rows",
                    total.len(),
                    ones.len(),
                    sums.rows()
                ),
            ));
        }
        if let Some(r) = (0..total.len()).find(|&r| ones[r] > total[r]) {
            return Err(bad_data(
                "reports",
                format!("row {r} has more +1 bits than reports"),
            ));
        }
        sums.total = total;
        sums.ones = ones;
        Ok(sums)
    }

    /// Folds in one report (row r, bit b: true is +1).
    pub fn add(&mut self, row: u32, bit: bool) -> Result<()> {
        let r = row as usize;
        if r >= self.rows() {
            return Err(bad_data(
                "reports",
                format!(
                    "row {row} is not below the partition's {} Hadamard rows",
                    self.rows()
                ),
            ));
        }
        self.total[r] += 1;
        self.ones[r] += u64::from(bit);
        Ok(())
    }

    /// Folds in a batch of reports given as row indices and bits (same length); refuses the
    /// whole batch, naming the offending report's index in it, if a row is out of range.
    pub fn add_batch<T: Copy + Into<u64>>(
        &mut self,
        rows: &[T],
        bits: impl IntoIterator<Item = bool>,
    ) -> Result<()> {
        let k = self.rows() as u64;
        if let Some(i) = rows.iter().position(|&r| r.into() >= k) {
            return Err(bad_data(
                "reports",
                format!(
                    "report {} of the batch names row {}, the partition has {k} Hadamard rows",
                    i + 1,
                    rows[i].into()
                ),
            ));
        }
        let mut n = 0;
        for (&r, b) in rows.iter().zip(bits) {
            let r = r.into() as usize;
            self.total[r] += 1;
            self.ones[r] += u64::from(b);
            n += 1;
        }
        if n != rows.len() {
            return Err(invalid("bits", "fewer bits than row indices"));
        }
        Ok(())
    }

    /// Adds another accumulator's sums (same ε and partition size).
    pub fn merge(&mut self, other: &HadamardSums) -> Result<()> {
        if other.epsilon_bits != self.epsilon_bits || other.n_leaves != self.n_leaves {
            return Err(bad_data(
                "reports",
                format!(
                    "cannot merge sums of ε = {} over {} leaves into sums of ε = {} over {} leaves",
                    other.epsilon(),
                    other.n_leaves,
                    self.epsilon(),
                    self.n_leaves
                ),
            ));
        }
        for (a, b) in self.total.iter_mut().zip(&other.total) {
            *a += b;
        }
        for (a, b) in self.ones.iter_mut().zip(&other.ones) {
            *a += b;
        }
        Ok(())
    }

    /// Records the n reports (each ε-LDP, one entry, parallel over holders) and decodes the
    /// per-leaf sums: S̃_P^j = n̂_{(j,0)} + n̂_{(j,1)} and Ñ_P^j = n̂_{(j,1)}, each n̂ the
    /// unbiased count of [`HadamardResponse::decode`] (variance of S̃_P^j ≤ 2n/α², of Ñ_P^j ≤ n/α²).
    pub fn finalize(&self, ledger: &mut Ledger, label: &str) -> Result<NoisySums> {
        let hr = oracle(self.epsilon(), self.n_leaves)?;
        let n = self.n_reports();
        hr.charge_reports(ledger, label, n)?;
        let row_sums = self
            .total
            .iter()
            .zip(&self.ones)
            .map(|(&t, &o)| {
                i64::try_from(2 * o)
                    .ok()
                    .and_then(|x| x.checked_sub(i64::try_from(t).ok()?))
                    .ok_or_else(|| bad_data("reports", "too many reports for 64-bit sums"))
            })
            .collect::<Result<Vec<i64>>>()?;
        let w = hr.decode(&row_sums)?;
        let alpha = hr.alpha();
        let l = self.n_leaves;
        Ok(NoisySums {
            count: (0..l)
                .map(|j| (w[2 * j] + w[2 * j + 1]) as f64 / alpha)
                .collect(),
            positive: (0..l).map(|j| w[2 * j + 1] as f64 / alpha).collect(),
            n_users: n,
            epsilon: self.epsilon(),
            mechanism: Mechanism::Hadamard,
        })
    }
}

/// The Hadamard oracle over the 2|I| cells of a partition.
pub(crate) fn oracle(epsilon: f64, n_leaves: usize) -> Result<HadamardResponse> {
    check_epsilon(epsilon)?;
    if n_leaves == 0 {
        return Err(invalid("partition", "has no leaves"));
    }
    Ok(HadamardResponse::new(2 * n_leaves, epsilon)?)
}

/// Column sums of Laplace reports (Ũ, Ṽ) (floating point: merging is exact up to the order of
/// additions).
#[derive(Clone, Debug, PartialEq)]
pub struct LaplaceSums {
    epsilon: f64,
    count: Vec<f64>,
    positive: Vec<f64>,
    n: u64,
}

impl LaplaceSums {
    pub fn new(epsilon: f64, n_leaves: usize) -> Result<Self> {
        check_epsilon(epsilon)?;
        if n_leaves == 0 {
            return Err(invalid("partition", "has no leaves"));
        }
        Ok(LaplaceSums {
            epsilon,
            count: vec![0.0; n_leaves],
            positive: vec![0.0; n_leaves],
            n: 0,
        })
    }

    pub fn n_reports(&self) -> u64 {
        self.n
    }

    /// The largest |coordinate| an honest report can take at this ε:
    /// 1 + [`super::protocol::REPORT_TAIL_SCALES`]·4/ε.
    pub fn coordinate_limit(&self) -> f64 {
        1.0 + super::protocol::REPORT_TAIL_SCALES * REPORT_SENSITIVITY / self.epsilon
    }

    /// Folds in one report; refuses one of another size or with a coordinate no honest holder
    /// sends (non-finite or beyond [`LaplaceSums::coordinate_limit`]).
    pub fn add(&mut self, u: &[f64], v: &[f64]) -> Result<()> {
        let l = self.count.len();
        if u.len() != l || v.len() != l {
            return Err(bad_data(
                "reports",
                format!(
                    "a report of {} + {} values, the partition has {l} leaves",
                    u.len(),
                    v.len()
                ),
            ));
        }
        let limit = self.coordinate_limit();
        if let Some(i) = u
            .iter()
            .chain(v)
            .position(|x| x.is_nan() || x.abs() > limit)
        {
            return Err(bad_data(
                "reports",
                format!(
                    "coordinate {} is not a number within ±{limit:.4e} (the range of an honest report at ε = {})",
                    i + 1,
                    self.epsilon
                ),
            ));
        }
        for (s, x) in self.count.iter_mut().zip(u) {
            *s += x;
        }
        for (s, x) in self.positive.iter_mut().zip(v) {
            *s += x;
        }
        self.n += 1;
        Ok(())
    }

    pub fn merge(&mut self, other: &LaplaceSums) -> Result<()> {
        if other.epsilon != self.epsilon || other.count.len() != self.count.len() {
            return Err(bad_data(
                "reports",
                "cannot merge sums of another ε or partition size",
            ));
        }
        for (a, b) in self.count.iter_mut().zip(&other.count) {
            *a += b;
        }
        for (a, b) in self.positive.iter_mut().zip(&other.positive) {
            *a += b;
        }
        self.n += other.n;
        Ok(())
    }

    /// Records the n reports (each ε-LDP) and returns the column sums.
    pub fn finalize(&self, ledger: &mut Ledger, label: &str) -> Result<NoisySums> {
        charge_reports(ledger, label, self.epsilon, self.n)?;
        Ok(NoisySums {
            count: self.count.clone(),
            positive: self.positive.clone(),
            n_users: self.n,
            epsilon: self.epsilon,
            mechanism: Mechanism::Laplace,
        })
    }
}

/// The accumulator of either mechanism's reports.
#[derive(Clone, Debug, PartialEq)]
pub enum ReportSums {
    Laplace(LaplaceSums),
    Hadamard(HadamardSums),
}

impl ReportSums {
    /// Empty sums for `mechanism`'s reports at ε on a partition of `n_leaves` leaves.
    pub fn new(mechanism: Mechanism, epsilon: f64, n_leaves: usize) -> Result<Self> {
        Ok(match mechanism {
            Mechanism::Laplace => ReportSums::Laplace(LaplaceSums::new(epsilon, n_leaves)?),
            Mechanism::Hadamard => ReportSums::Hadamard(HadamardSums::new(epsilon, n_leaves)?),
        })
    }

    pub fn mechanism(&self) -> Mechanism {
        match self {
            ReportSums::Laplace(_) => Mechanism::Laplace,
            ReportSums::Hadamard(_) => Mechanism::Hadamard,
        }
    }

    pub fn n_reports(&self) -> u64 {
        match self {
            ReportSums::Laplace(s) => s.n_reports(),
            ReportSums::Hadamard(s) => s.n_reports(),
        }
    }

    /// Adds another accumulator of the same mechanism, ε and partition size.
    pub fn merge(&mut self, other: &ReportSums) -> Result<()> {
        match (self, other) {
            (ReportSums::Laplace(a), ReportSums::Laplace(b)) => a.merge(b),
            (ReportSums::Hadamard(a), ReportSums::Hadamard(b)) => a.merge(b),
            (a, b) => Err(bad_data(
                "reports",
                format!(
                    "cannot merge {} reports into {} reports",
                    b.mechanism(),
                    a.mechanism()
                ),
            )),
        }
    }

    /// Records the reports in the ledger and returns the per-leaf sums.
    pub fn finalize(&self, ledger: &mut Ledger, label: &str) -> Result<NoisySums> {
        match self {
            ReportSums::Laplace(s) => s.finalize(ledger, label),
            ReportSums::Hadamard(s) => s.finalize(ledger, label),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dpfair_privacy::{Budget, Noise};

    #[test]
    fn out_of_range_rows_and_mismatched_merges_are_refused() {
        let mut s = HadamardSums::new(1.0, 3).unwrap();
        assert_eq!(s.rows(), 8);
        assert!(s.add(8, true).is_err());
        let e = s
            .add_batch(&[1u16, 2, 9], [true; 3])
            .unwrap_err()
            .to_string();
        assert!(e.contains("report 3 of the batch names row 9"), "{e}");
        assert_eq!(s.n_reports(), 0, "a refused batch adds nothing");
        assert!(s.merge(&HadamardSums::new(2.0, 3).unwrap()).is_err());
        assert!(s.merge(&HadamardSums::new(1.0, 4).unwrap()).is_err());
        let mut r = ReportSums::new(Mechanism::Laplace, 1.0, 3).unwrap();
        assert!(r.merge(&ReportSums::Hadamard(s)).is_err());
    }

    #[test]
    fn finalize_charges_n_reports_at_epsilon() {
        let mut s = HadamardSums::new(2.0, 2).unwrap();
        let hr = oracle(2.0, 2).unwrap();
        let mut noise = Noise::seeded(1);
        for cell in [0, 1, 3, 3, 2] {
            let (r, b) = hr.report(&mut noise, cell).unwrap();
            s.add(r, b).unwrap();
        }
        let mut ledger = Ledger::new(Budget::pure(2.0).unwrap());
        let sums = s.finalize(&mut ledger, "t").unwrap();
        assert_eq!(sums.n_users, 5);
        assert_eq!(sums.mechanism, Mechanism::Hadamard);
        assert!((ledger.total().unwrap().epsilon - 2.0).abs() < 1e-12);
        // A second query on the same holders does not fit the budget.
        assert!(s.finalize(&mut ledger, "again").is_err());
    }
}
