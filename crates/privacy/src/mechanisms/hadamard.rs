//! Hadamard randomized response: an ε-LDP frequency oracle over `m` cells whose report is one
//! row index and one bit (the "Hadamard response" of Acharya, Sun & Zhang 2019, in its one-bit
//! form; also Apple's and Cormode et al.'s "HRR").
//!
//! Let K be the smallest power of two ≥ m and H the K × K Sylvester–Hadamard matrix,
//! H\[r, c\] = (−1)^{popcount(r & c)}. A holder of cell c
//! 1. draws a row r uniformly from {0, …, K−1};
//! 2. computes h = H\[r, c\] ∈ {±1};
//! 3. reports (r, b) with b = h, or b = −h with probability 1/(e^ε + 1) (binary randomized
//!    response; drawn in constant time, below).
//!
//! **ε-LDP.** With flip probability p (below: p′ ∈ [1/(e^ε+1), ½]), for every output (r, b) and
//! cell c, P((r, b) | c) = (1/K)·(1 − p) if b = H\[r, c\] and (1/K)·p otherwise. So for any two
//! cells c, c′ the ratio P((r, b) | c) / P((r, b) | c′) lies in {p/(1−p), 1, (1−p)/p}, and
//! (1 − p)/p ≤ e^ε: the report is ε-LDP. Both random choices come from the release stream by
//! integer operations (no floating-point comparison).
//!
//! **Constant time** (`docs/privacy.md#timing`). The report is drawn from exactly two 64-bit words
//! of the release stream, whatever the cell: r is the low log₂K bits of the first (K ≤ 2^31 is a
//! power of two, so r is exactly uniform), and the flip is "second word < T" for the threshold
//! T = ⌈2^64/(e^ε + 1)⌉ or slightly above (computed once from a rigorous upper bracket of e^{−ε},
//! [`crate::samplers`]), so the flip probability p′ = T/2^64 satisfies 1/(e^ε+1) ≤ p′ ≤ ½ and the
//! probability ratio (1 − p′)/p′ ≤ e^ε: still exactly ε-LDP (p′ − 1/(e^ε+1) < 2^−60). The cell
//! enters only through a popcount, a comparison and an exclusive or (no branch on it, no
//! rejection loop whose length an observer of the holder's device could time; Jin et al. 2022).
//! [`RandomizedResponse::respond`] (the variable-time exact sampler this replaced) stays for
//! k-ary responses. Decoding uses α = 1 − 2p′ ([`HadamardResponse::alpha`]).
//!
//! **Unbiased decoding.** Let α = (e^ε−1)/(e^ε+1) = tanh(ε/2). For a holder i in cell cᵢ and any
//! cell c, X_i^c = bᵢ·H\[rᵢ, c\] has E\[X_i^c\] = α·(1/K)·Σ_r H\[r, cᵢ\]H\[r, c\] = α·1(cᵢ = c) (the
//! rows of H are orthogonal, Σ_r H\[r, a\]H\[r, c\] = K·1(a = c)). Every row 0 … K−1 is used,
//! including the all-ones row 0: orthogonality needs the full set of rows, and no row has to be
//! skipped (that trick belongs to the variant that encodes a cell *as* a row). So
//! n̂_c = (1/α)·Σ_i X_i^c = (1/α)·Σ_r H\[r, c\]·S_r, with S_r = Σ_{i: rᵢ = r} bᵢ, is unbiased for
//! the count n_c; all K of them come from one fast Walsh–Hadamard transform of S (O(K log K),
//! [`HadamardResponse::decode`]) after the O(n) row sums.
//!
//! **Variance.** X_i^c ∈ {±1}, so Var(X_i^c) = 1 − α²·1(cᵢ = c) and, the holders being independent,
//! Var(n̂_c) = n/α² − n_c ≤ n·((e^ε+1)/(e^ε−1))². Two different cells are uncorrelated:
//! Cov(X_i^c, X_i^{c′}) = E\[H\[r,c\]H\[r,c′\]\] − α²·1(cᵢ = c)·1(cᵢ = c′) = 0 for c ≠ c′, so the
//! variance of a sum of estimates over a set A of cells is |A|·n/α² − n_A.

#[cfg(doc)]
use super::RandomizedResponse;
use super::{entry, positive};
use crate::Noise;
use crate::error::{Result, invalid};
use crate::ledger::{Cost, Ledger, Relation};
use crate::samplers::flip_threshold;
use crate::samplers::lattice::dyadic;
use rand::Rng;

/// The largest number of rows (2^31) a report's row index can name.
pub const MAX_ROWS: usize = 1 << 31;

/// The ε-LDP Hadamard randomized response over `cells` cells (module doc).
///
/// ```
/// use dpfair_privacy::mechanisms::HadamardResponse;
/// use dpfair_privacy::{Budget, Ledger, Noise};
///
/// let hr = HadamardResponse::new(4, 2.0).unwrap();
/// let mut ledger = Ledger::new(Budget::pure(2.0).unwrap());
/// hr.charge_reports(&mut ledger, "cells", 3).unwrap();
/// let mut noise = Noise::seeded(1);
/// let mut sums = vec![0i64; hr.rows()];
/// for cell in [0, 2, 2] {
///     let (r, b) = hr.report(&mut noise, cell).unwrap();
///     sums[r as usize] += if b { 1 } else { -1 };
/// }
/// let estimates = hr.decode(&sums).unwrap(); // α·n̂_c for every cell
/// assert_eq!(estimates.len(), 4);
/// ```
#[derive(Clone, Debug)]
pub struct HadamardResponse {
    cells: usize,
    rows: usize,
    epsilon: f64,
    /// T: the report flips when a uniform `u64` is below T (module doc, constant time).
    flip: u128,
}

impl HadamardResponse {
    /// The oracle for `cells ≥ 1` cells at budget ε (finite, > 0); K = the next power of two ≥ cells.
    pub fn new(cells: usize, epsilon: f64) -> Result<Self> {
        let epsilon = positive("epsilon", epsilon)?;
        if cells == 0 || cells > MAX_ROWS {
            return Err(invalid(
                "cells",
                format!("must be in 1..={MAX_ROWS}, got {cells}"),
            ));
        }
        Ok(HadamardResponse {
            cells,
            rows: cells.next_power_of_two(),
            epsilon,
            flip: {
                let (num, den) = dyadic(epsilon)?;
                flip_threshold(&num, &den)
            },
        })
    }

    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }

    pub fn cells(&self) -> usize {
        self.cells
    }

    /// K, the number of Hadamard rows (a power of two ≥ the number of cells).
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The flip probability p′ = T/2^64 ∈ [1/(e^ε+1), ½] (module doc).
    pub fn flip_probability(&self) -> f64 {
        self.flip as f64 / 2f64.powi(64)
    }

    /// α = 1 − 2p′ ≈ (e^ε−1)/(e^ε+1) (within 2^−59): E\[b·H\[r, c\]\] for a holder of cell c.
    pub fn alpha(&self) -> f64 {
        1.0 - 2.0 * self.flip_probability()
    }

    /// Upper bound n/α² on the variance of one cell's unbiased count over n reports (exact
    /// variance: n/α² − n_c).
    pub fn cell_variance(&self, n: u64) -> f64 {
        n as f64 / (self.alpha() * self.alpha())
    }

    /// User side: the report (r, b) of a holder of `cell` (b = true is +1).
    pub fn report(&self, noise: &mut Noise, cell: usize) -> Result<(u32, bool)> {
        if cell >= self.cells {
            return Err(invalid(
                "cell",
                format!("{cell} is not below {}", self.cells),
            ));
        }
        let words = [noise.next_u64(), noise.next_u64()];
        Ok(self.report_from(cell, words))
    }

    /// The report of `cell` from two uniform words, in constant time (module doc): r = the low
    /// log₂K bits of the first, the flip = second < T, b = H\[r, c\] XOR flip.
    #[inline]
    fn report_from(&self, cell: usize, [first, second]: [u64; 2]) -> (u32, bool) {
        let r = first & (self.rows as u64 - 1);
        let flip = u128::from(second) < self.flip;
        (r as u32, hadamard_sign(r, cell as u64) ^ flip)
    }

    /// Collector side: records that `n_users` users each sent one ε-LDP report (parallel over
    /// users: one entry of cost ε). Call it before accepting the reports.
    pub fn charge_reports(&self, ledger: &mut Ledger, label: &str, n_users: u64) -> Result<()> {
        ledger.charge(entry(
            label,
            "hadamard randomized response",
            Relation::Substitution,
            1.0,
            "any",
            self.flip_probability(),
            Cost::Pure {
                epsilon: self.epsilon,
            },
            Some(format!(
                "{n_users} users, one ε-LDP report (row of {} Hadamard rows, one bit) each (parallel over users); scale = flip probability",
                self.rows
            )),
        ))
    }

    /// Collector side, post-processing: from the row sums S_r = Σ_{i: rᵢ = r} bᵢ (b = ±1), the
    /// K values α·n̂_c = Σ_r H\[r, c\]·S_r (one fast Walsh–Hadamard transform, exact in integers);
    /// divide by [`HadamardResponse::alpha`] for the unbiased counts. Entries c ≥ cells are pure
    /// noise (padding).
    pub fn decode(&self, row_sums: &[i64]) -> Result<Vec<i64>> {
        if row_sums.len() != self.rows {
            return Err(invalid(
                "row_sums",
                format!("{} sums for {} rows", row_sums.len(), self.rows),
            ));
        }
        let mut w = row_sums.to_vec();
        fwht(&mut w)?;
        Ok(w)
    }
}

/// H\[r, c\] = +1 (true) or −1 (false) of the Sylvester–Hadamard matrix.
#[inline]
pub fn hadamard_sign(r: u64, c: u64) -> bool {
    (r & c).count_ones().is_multiple_of(2)
}

/// The in-place fast Walsh–Hadamard transform w ← H·w (length a power of two), in checked
/// integer arithmetic.
fn fwht(w: &mut [i64]) -> Result<()> {
    let n = w.len();
    let mut h = 1;
    while h < n {
        for block in w.chunks_mut(2 * h) {
            let (a, b) = block.split_at_mut(h);
            for (x, y) in a.iter_mut().zip(b) {
                let (s, d) = (x.checked_add(*y), x.checked_sub(*y));
                match (s, d) {
                    (Some(s), Some(d)) => (*x, *y) = (s, d),
                    _ => return Err(invalid("row_sums", "the transform overflows i64")),
                }
            }
        }
        h *= 2;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fwht_is_the_hadamard_product() {
        let mut w = vec![3i64, -1, 4, 1, -5, 9, 2, -6];
        let want: Vec<i64> = (0..8u64)
            .map(|c| {
                (0..8u64)
                    .map(|r| {
                        if hadamard_sign(r, c) {
                            w[r as usize]
                        } else {
                            -w[r as usize]
                        }
                    })
                    .sum()
            })
            .collect();
        fwht(&mut w).unwrap();
        assert_eq!(w, want);
    }

    #[test]
    fn rows_are_the_next_power_of_two_and_bad_inputs_are_refused() {
        assert_eq!(HadamardResponse::new(5, 1.0).unwrap().rows(), 8);
        assert_eq!(HadamardResponse::new(8, 1.0).unwrap().rows(), 8);
        assert!(HadamardResponse::new(0, 1.0).is_err());
        assert!(HadamardResponse::new(4, 0.0).is_err());
        assert!(HadamardResponse::new(4, f64::INFINITY).is_err());
        let hr = HadamardResponse::new(4, 1.0).unwrap();
        assert!(hr.report(&mut Noise::seeded(0), 4).is_err());
        assert!(hr.decode(&[0; 3]).is_err());
    }

    /// The decoded counts are unbiased. Over n reports of a fixed population, each estimate
    /// n̂_c has variance n/α² − n_c (module doc); with T independent repetitions the mean of
    /// n̂_c − n_c has sd √((n/α² − n_c)/T), and the test allows 5 sd (a two-sided normal tail of
    /// 6·10⁻⁷ per cell, 8 cells: the central limit theorem over T·n bounded terms).
    #[test]
    fn decoded_counts_are_unbiased() {
        let hr = HadamardResponse::new(6, 1.0).unwrap();
        let cells = [0usize, 0, 0, 1, 2, 2, 5, 5, 5, 5, 3];
        let mut truth = [0i64; 6];
        for &c in &cells {
            truth[c] += 1;
        }
        let (t, n) = (4000, cells.len() as u64);
        let mut noise = Noise::seeded(7);
        let mut total = [0.0; 8];
        for _ in 0..t {
            let mut sums = vec![0i64; hr.rows()];
            for &c in &cells {
                let (r, b) = hr.report(&mut noise, c).unwrap();
                sums[r as usize] += if b { 1 } else { -1 };
            }
            for (acc, w) in total.iter_mut().zip(hr.decode(&sums).unwrap()) {
                *acc += w as f64 / hr.alpha();
            }
        }
        for (c, sum) in total.iter().enumerate() {
            let want = truth.get(c).copied().unwrap_or(0) as f64;
            let mean = sum / t as f64;
            let sd = ((hr.cell_variance(n) - want) / t as f64).sqrt();
            assert!(
                (mean - want).abs() < 5.0 * sd,
                "cell {c}: {mean} vs {want} (sd {sd})"
            );
        }
    }
}
