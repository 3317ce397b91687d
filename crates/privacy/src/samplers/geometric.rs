//! Exact geometric skips: G ~ Geometric(q) on {0, 1, …}, P(G = g) = (1 − q)^g·q, for an `f64`
//! rate q ∈ (0, 1), i.e. the number of failed Bernoulli(q) coins before the first success.
//! Poisson subsampling (every row independently with probability q) is the same law as jumping
//! from one selected row to the next by independent skips G, so a batch costs one draw per
//! *selected* row instead of one coin per row.
//!
//! # Why the law is exact
//!
//! 1. q is an `f64`, so q = m/2^l exactly (m < 2^53) and y = 1 − q = (2^l − m)/2^l is rational.
//! 2. With a block of s = 2^j rows, G = s·H + R where H = ⌊G/s⌋ and R = G mod s are independent:
//!    P(H = h, R = r) = y^{sh+r}·q = [x^h·(1 − x)]·[y^r·q/(1 − x)] with x = y^s. So H counts the
//!    successes of Bernoulli(x) coins before the first failure, and R has the truncated geometric
//!    law on {0, …, s−1}, drawn by inversion: R = min{r : U < F(r)} for a uniform U ∈ [0, 1), with
//!    F(r) = (1 − y^{r+1})/(1 − x).
//! 3. Every decision is a comparison "U < p" of a fresh uniform real U with an exact rational p
//!    (x, or one F(r)). It is made from a table of integer bounds lo ≤ p·2^64 ≤ hi, computed
//!    once with directed rounding (every product and quotient rounded down for lower bounds and up
//!    for upper bounds, so they enclose the exact rational). When U's first 64 bits do not settle
//!    the comparison against these bounds, the comparison is redone exactly in big integers with
//!    as many further bits of U as it takes ([`LazyUniform`]). The outcome is therefore exactly
//!    whether U < p in every case; the bounds only decide how fast it is found (the big-integer
//!    path has probability about (hi − lo)·2^−64 per comparison, below 2^−52 for the rates
//!    DP-SGD uses).
//! 4. Each comparison consumes only the bits of U up to its first difference with the threshold
//!    (a stopping time of the bit sequence), so the bits after it are still independent and
//!    uniform, and the next comparison reads them ([`BitStream`]).
//!
//! No floating-point logarithm is involved: `ln(U)/ln(1 − q)` would only approximate this law.

use super::bits::{BitStream, LazyUniform, deciding_bits};
use crate::error::{Result, invalid};
use num_bigint::BigUint;
use num_traits::One;
use rand::Rng;

/// The table has s = 2^j cells with s the smallest power of two ≥ 2/q (so x = y^s ≤ e^−2 and H is
/// 0 with probability ≥ 0.86), capped at 2^12 cells (80 KiB) for very small q.
const MAX_TABLE_BITS: u32 = 12;
/// log2 of the guide entries per table cell (the guide is capped at 2^[`MAX_TABLE_BITS`] entries).
const GUIDE_PER_CELL: u32 = 3;
/// Fixed-point scale of the power bounds: `ONE` stands for 1.
const ONE: u128 = 1 << 126;
/// 2^64 as a bound in units of 2^−64.
const TWO64: u128 = 1 << 64;

/// Exact Geometric(q) skips (module doc), for one rate.
#[derive(Clone, Debug)]
pub struct GeometricSkips {
    q: f64,
    /// q = m / 2^l.
    m: u64,
    l: u32,
    /// s = 2^table_bits rows per block.
    table_bits: u32,
    /// lo[r] ≤ F(r)·2^64 ≤ hi[r] for r = 0, …, s − 2 (F(s − 1) = 1).
    lo: Vec<u64>,
    hi: Vec<u128>,
    /// guide[t]: the number of r with lo[r] ≤ t·2^(64−g), g = `guide_bits` (where the inversion
    /// search starts: at most the answer, since lo[r] ≤ t·2^(64−g) ≤ U·2^64 for those r).
    guide: Vec<u32>,
    /// 2^guide_bits guide entries: 2^[`GUIDE_PER_CELL`] per table cell (up to the cap), so that
    /// the search from the guide's start nearly always stops at once.
    guide_bits: u32,
    /// Bounds on x·2^64, x = (1 − q)^s: the probability that a whole block fails.
    block_lo: u128,
    block_hi: u128,
}

/// ⌊p·y/2^64⌋ (or ⌈·⌉ when `up`), for p ≤ 2^126 and y ≤ 2^64, without overflow.
#[inline]
fn mul_shift(p: u128, y: u128, up: bool) -> u128 {
    let (p1, p0) = (p >> 64, p & (TWO64 - 1));
    let low = p0 * y; // < 2^128
    let mut r = p1 * y + (low >> 64);
    if up && (low as u64) != 0 {
        r += 1;
    }
    r
}

fn bit_length(v: u128) -> u32 {
    128 - v.leading_zeros()
}

/// A lower bound on (a/b)·2^64 from a ≥ a_lo and b ≤ b_hi (0 < a_lo ≤ b_hi), rounded down.
fn ratio_floor(a_lo: u128, b_hi: u128) -> u128 {
    let k = bit_length(b_hi).saturating_sub(64);
    let a = a_lo >> k;
    let b = (b_hi >> k) + u128::from(b_hi & ((1u128 << k) - 1) != 0);
    (a << 64) / b
}

/// An upper bound on (a/b)·2^64 from a ≤ a_hi and b ≥ b_lo, rounded up; at most 2^64 (the ratios
/// bounded here are probabilities).
fn ratio_ceil(a_hi: u128, b_lo: u128) -> u128 {
    if b_lo == 0 {
        return TWO64;
    }
    let k = bit_length(b_lo).saturating_sub(64);
    let b = b_lo >> k;
    let a = (a_hi >> k) + u128::from(a_hi & ((1u128 << k) - 1) != 0);
    if a >= TWO64 {
        return TWO64;
    }
    ((a << 64) + b - 1).div_euclid(b).min(TWO64)
}

/// The search guide of `GeometricSkips` for lower bounds `lo`, with 2^bits entries.
fn guide_for(lo: &[u64], bits: u32) -> Vec<u32> {
    (0..1u64 << bits)
        .map(|t| lo.partition_point(|&v| v <= t << (64 - bits)) as u32)
        .collect()
}

impl GeometricSkips {
    /// The skip sampler for rate `q ∈ (0, 1)` (normal, not subnormal).
    pub fn new(q: f64) -> Result<Self> {
        if !(q > 0.0 && q < 1.0 && q.is_normal()) {
            return Err(invalid(
                "sampling_rate",
                format!("must be in (0, 1) and not subnormal, got {q}"),
            ));
        }
        let bits = q.to_bits();
        let exp = ((bits >> 52) & 0x7ff) as i64 - 1075; // q = mantissa · 2^exp
        let m = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
        let l = (-exp) as u32;
        // q·2^64 bounds, then y·2^64 = 2^64 − q·2^64.
        let (q_lo, q_hi) = if l <= 64 {
            let v = u128::from(m) << (64 - l);
            (v, v)
        } else if l - 64 >= 64 {
            (0, 1)
        } else {
            let sh = l - 64;
            let v = u128::from(m >> sh);
            (v, v + u128::from(m & ((1u64 << sh) - 1) != 0))
        };
        let (y_lo, y_hi) = (TWO64 - q_hi, TWO64 - q_lo);
        let table_bits = ((2.0 / q).ceil().log2().ceil() as u32).clamp(1, MAX_TABLE_BITS);
        let s = 1usize << table_bits;
        // Bounds on y^k·2^126, k = 0..=s.
        let mut p_lo = Vec::with_capacity(s + 1);
        let mut p_hi = Vec::with_capacity(s + 1);
        p_lo.push(ONE);
        p_hi.push(ONE);
        for k in 1..=s {
            p_lo.push(mul_shift(p_lo[k - 1], y_lo, false));
            p_hi.push(mul_shift(p_hi[k - 1], y_hi, true).min(ONE));
        }
        // 1 − x in 2^−126 units, bracketed.
        let (b_lo, b_hi) = (ONE - p_hi[s], ONE - p_lo[s]);
        let mut lo = Vec::with_capacity(s - 1);
        let mut hi = Vec::with_capacity(s - 1);
        for r in 0..s - 1 {
            let (a_lo, a_hi) = (ONE - p_hi[r + 1], ONE - p_lo[r + 1]);
            let l = if a_lo == 0 {
                0
            } else {
                ratio_floor(a_lo, b_hi)
            };
            lo.push(l.min(TWO64 - 1) as u64);
            hi.push(ratio_ceil(a_hi, b_lo).max(1));
        }
        let guide_bits = (table_bits + GUIDE_PER_CELL).min(MAX_TABLE_BITS.max(table_bits));
        let guide = guide_for(&lo, guide_bits);
        Ok(GeometricSkips {
            q,
            m,
            l,
            table_bits,
            guide_bits,
            lo,
            hi,
            guide,
            block_lo: p_lo[s] >> 62,
            block_hi: ((p_hi[s] + (1 << 62) - 1) >> 62).max(1),
        })
    }

    pub fn rate(&self) -> f64 {
        self.q
    }

    /// Draws G; returns `Some(G)` when G < `limit` and `None` when G ≥ `limit` (then G itself is
    /// not needed: a Poisson sample stops at the end of the rows).
    pub fn skip<R: Rng + ?Sized>(&self, bits: &mut BitStream<'_, R>, limit: u64) -> Option<u64> {
        let s = 1u64 << self.table_bits;
        let mut base = 0u64;
        while self.block_fails(bits) {
            base += s;
            if base >= limit {
                return None;
            }
        }
        let g = base + self.within_block(bits);
        (g < limit).then_some(g)
    }

    /// Bernoulli(x), x = (1 − q)^s: U < x.
    #[inline]
    fn block_fails<R: Rng + ?Sized>(&self, bits: &mut BitStream<'_, R>) -> bool {
        let w = bits.peek64();
        if u128::from(w) < self.block_lo {
            // Every U with the deciding prefix is < block_lo·2^−64 ≤ x.
            bits.consume(deciding_bits(w, (self.block_lo - 1) as u64));
            true
        } else if u128::from(w) >= self.block_hi {
            // Every U with the deciding prefix is ≥ block_hi·2^−64 ≥ x.
            bits.consume(deciding_bits(w, (self.block_hi - 1) as u64));
            false
        } else {
            bits.consume(64);
            let (num, den) = self.exact_block();
            LazyUniform::from_word(w).less_than(bits, &num, &den)
        }
    }

    /// R = min{r : U < F(r)} on {0, …, s − 1}.
    #[inline]
    fn within_block<R: Rng + ?Sized>(&self, bits: &mut BitStream<'_, R>) -> u64 {
        let last = self.lo.len();
        let w = bits.peek64();
        let mut r = self.guide[(w >> (64 - self.guide_bits)) as usize] as usize;
        while r < last && self.lo[r] <= w {
            r += 1;
        }
        // Now w < lo[r] (U < F(r) is certain) unless r = s − 1 (F = 1). U ≥ F(r − 1) is certain
        // when w ≥ hi[r − 1].
        if r > 0 && u128::from(w) < self.hi[r - 1] {
            bits.consume(64);
            return self.within_block_exact(bits, w);
        }
        let upper = if r < last {
            deciding_bits(w, self.lo[r] - 1)
        } else {
            0
        };
        let lower = if r > 0 {
            deciding_bits(w, (self.hi[r - 1] - 1) as u64)
        } else {
            0
        };
        bits.consume(upper.max(lower));
        r as u64
    }

    /// The inversion with exact comparisons, U's first 64 bits being `w`.
    #[cold]
    fn within_block_exact<R: Rng + ?Sized>(&self, bits: &mut BitStream<'_, R>, w: u64) -> u64 {
        let last = self.lo.len();
        // F(r) ≤ hi[r] ≤ w·2^−64 ≤ U for every r before `first`.
        let first = self.hi.partition_point(|&h| h <= u128::from(w));
        let mut u = LazyUniform::from_word(w);
        for r in first..last {
            let (num, den) = self.exact_cdf(r);
            if u.less_than(bits, &num, &den) {
                return r as u64;
            }
        }
        last as u64
    }

    /// (2^l − m, 2^l): y = 1 − q as an exact fraction.
    fn exact_y(&self) -> (BigUint, BigUint) {
        let den = BigUint::one() << self.l;
        (&den - self.m, den)
    }

    /// x = y^s exactly.
    #[cold]
    fn exact_block(&self) -> (BigUint, BigUint) {
        let (y, d) = self.exact_y();
        let s = 1u32 << self.table_bits;
        (y.pow(s), d.pow(s))
    }

    /// F(r) = (1 − y^{r+1})/(1 − y^s) = (D^s − Y^{r+1}·D^{s−r−1}) / (D^s − Y^s), y = Y/D.
    #[cold]
    fn exact_cdf(&self, r: usize) -> (BigUint, BigUint) {
        let (y, d) = self.exact_y();
        let s = 1u32 << self.table_bits;
        let r = r as u32;
        let ds = d.pow(s);
        let num = &ds - y.pow(r + 1) * d.pow(s - r - 1);
        let den = &ds - y.pow(s);
        (num, den)
    }

    /// A copy whose fast-path bounds are widened by `slack` units of 2^−64 (lower bounds down,
    /// upper bounds up): still valid bounds, so the law is unchanged, but the exact big-integer
    /// path runs far more often. For tests of that path.
    #[doc(hidden)]
    pub fn with_loose_bounds(&self, slack: u64) -> Self {
        let mut g = self.clone();
        for v in &mut g.lo {
            *v = v.saturating_sub(slack);
        }
        for v in &mut g.hi {
            *v = (*v + u128::from(slack)).min(TWO64);
        }
        g.block_lo = g.block_lo.saturating_sub(u128::from(slack));
        g.block_hi = (g.block_hi + u128::from(slack)).min(TWO64);
        g.guide = guide_for(&g.lo, g.guide_bits);
        g
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Noise;

    /// Exact bounds enclose the f64 evaluation of F and x (a sanity check of the fixed point).
    #[test]
    fn bounds_enclose_the_cdf() {
        for q in [1.0 / 89.0, 0.3, 1.0 / 3907.0, 0.75] {
            let g = GeometricSkips::new(q).unwrap();
            let s = 1usize << g.table_bits;
            let x = (1.0 - q).powi(s as i32);
            for r in 0..s - 1 {
                let f = (1.0 - (1.0 - q).powi(r as i32 + 1)) / (1.0 - x) * 2f64.powi(64);
                let (lo, hi) = (g.lo[r] as f64, g.hi[r] as f64);
                // f64 evaluation is good to ~1e-13 relative: allow that much outside.
                assert!(
                    lo <= f * (1.0 + 1e-12) && hi >= f * (1.0 - 1e-12),
                    "q = {q}, r = {r}"
                );
                assert!(g.hi[r] - u128::from(g.lo[r]) < 1 << 12, "q = {q}: loose");
            }
            let xb = x * 2f64.powi(64);
            assert!(g.block_lo as f64 <= xb * (1.0 + 1e-12));
            assert!(g.block_hi as f64 >= xb * (1.0 - 1e-12));
        }
        assert!(GeometricSkips::new(1.0).is_err());
        assert!(GeometricSkips::new(0.0).is_err());
        assert!(GeometricSkips::new(f64::NAN).is_err());
    }

    /// Chi-square statistic of `counts` (the last cell a tail ≥ its index) against Geometric(q).
    fn chi_square(counts: &[u64], q: f64) -> f64 {
        let n: u64 = counts.iter().sum();
        let k = counts.len();
        (0..k)
            .map(|g| {
                let p = if g + 1 < k {
                    (1.0 - q).powi(g as i32) * q
                } else {
                    (1.0 - q).powi(g as i32)
                };
                let e = n as f64 * p;
                (counts[g] as f64 - e).powi(2) / e
            })
            .sum()
    }

    /// Goodness of fit of the skips, on the table path and (bounds loosened by 2^61, so that
    /// about one comparison in eight takes it) on the exact big-integer path. Pearson's statistic
    /// over 40 cells (39 degrees of freedom) has P(χ²₃₉ > 90) < 10⁻⁵ under the exact law.
    #[test]
    fn skips_follow_the_geometric_law_on_both_paths() {
        for (q, cells) in [(0.3, 40usize), (1.0 / 89.0, 40)] {
            for loose in [false, true] {
                let fast = GeometricSkips::new(q).unwrap();
                let g = if loose {
                    fast.with_loose_bounds(1 << 61)
                } else {
                    fast
                };
                let mut noise = Noise::seeded(if loose { 8 } else { 9 });
                let mut bits = BitStream::new(&mut noise);
                let draws = if loose { 20_000 } else { 200_000 };
                let width = if q > 0.1 { 1 } else { 10 };
                let mut counts = vec![0u64; cells];
                let mut binned = vec![0u64; cells];
                for _ in 0..draws {
                    let v = g.skip(&mut bits, u64::MAX).unwrap();
                    counts[(v as usize).min(cells - 1)] += 1;
                    binned[(v as usize / width).min(cells - 1)] += 1;
                }
                let stat = if width == 1 {
                    chi_square(&counts, q)
                } else {
                    // Bins of `width` skips: Geometric(1 − (1−q)^width) in bin units.
                    chi_square(&binned, 1.0 - (1.0 - q).powi(width as i32))
                };
                assert!(stat < 90.0, "q = {q}, loose = {loose}: χ² = {stat}");
            }
        }
    }

    #[test]
    fn limit_cuts_the_skip() {
        let g = GeometricSkips::new(0.01).unwrap();
        let mut noise = Noise::seeded(2);
        let mut bits = BitStream::new(&mut noise);
        // P(G ≥ 1) = 0.99: over 1,000 draws with limit 1, `Some(0)` about 10 times.
        let some = (0..1000).filter(|_| g.skip(&mut bits, 1).is_some()).count();
        assert!(some < 40, "{some}");
        assert!((0..1000).all(|_| g.skip(&mut bits, 0).is_none()));
    }
}
