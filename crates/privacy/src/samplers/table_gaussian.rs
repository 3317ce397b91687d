//! Exact N_ℤ(0, σ²) for a fixed integer σ by rejection from a piecewise-uniform envelope drawn
//! with an alias table (Walker 1977; Vose 1991; the rejection method of Devroye 1986, "Non-Uniform
//! Random Variate Generation", §II.3): a per-σ table built once, after which a draw costs one
//! table look-up, a few dozen raw bits and, nearly always, two Bernoulli decisions settled by
//! their first few bits. For the many draws of one σ (DP-SGD draws millions at one σ) it replaces
//! the ≈ 10 data-dependent Bernoulli decisions per draw of [`super::LazyDiscreteGaussian`]
//! (Canonne, Kamath & Steinke 2020), which stays the reference sampler and the one for one-off σ.
//!
//! # The algorithm
//!
//! Write |y| ∈ {0, 1, …} as blocks of width B = 2^b (b = max(0, ⌊log₂σ⌋ − 4), so σ/B ∈ [16, 32)
//! when b > 0): block c < C covers [cB, cB + B), with C·B = T ≥ 8σ; beyond T, tail blocks of width
//! B_t = 2^{b_t} ≥ B chosen with T·B_t ≥ 0.7·σ² (> σ² ln 2). One attempt:
//!
//! 1. Pick an item by the alias table: block c with probability π_c, or the tail with π_tail
//!    (integer weights w over N·2^64, N columns: the probabilities are exactly w/(N·2^64)).
//! 2. Block c: |y| = cB + u, u uniform on B values (b raw bits). Tail: k ~ Geometric(1/2)
//!    (the count of 0 bits before the first 1) and |y| = T + k·B_t + v, v uniform on B_t values.
//! 3. Accept with probability A(|y|) = e^{−y²/(2σ²)} / (K·q(|y|)), q the proposal's mass at |y|:
//!    for block c, A = e^{−γ}·h_c with γ = (y² − (cB)²)/(2σ²) = (2cB + u)u/(2σ²) and
//!    h_c = e^{−(cB)²/(2σ²)}·L/w_c, where L = B·N·2^64/K; for tail block k with m = T + k·B_t,
//!    A = e^{−(y² − m²)/(2σ²)}·h_k, h_k = e^{−m²/(2σ²)}·2^{k+1}·(B_t/B)·L/w_tail.
//! 4. A fair sign; (negative, 0) is rejected (so 0 is not counted twice).
//!
//! # Why the law is exact
//!
//! The accepted |y| has probability ∝ q(|y|)·A(|y|) = e^{−y²/(2σ²)}/K, whatever the weights w
//! are, provided every A ≤ 1 (it is a rejection sampler with the envelope K·q). The weights come
//! from `f64` estimates of the Gaussian (only the speed depends on them); what the law depends on
//! is L, chosen as the minimum over the items of ⌊w·2^P / E⌋ with E ≥ e^{−a}·2^P an upper bracket
//! from exact integer arithmetic ([`super::exact_exp::exp_neg_bounds`]), so h_c ≤ 1 for every
//! block and h_0 ≤ 1 for the tail; h_{k+1}/h_k = 2e^{−(2m·B_t + B_t²)/(2σ²)} ≤ 2e^{−T·B_t/σ²} < 1
//! because T·B_t > σ² ln 2, so every h_k ≤ 1; and e^{−γ} ≤ 1. Each of the factors is decided
//! exactly: e^{−γ} (γ rational) by CKS20's Algorithm 1 over lazily read bits, as in
//! [`super::LazyDiscreteGaussian`]; the constant h_c by "U < h_c" from 64-bit bounds with the
//! exact big-integer comparison behind them ([`super::exact_exp::ExpConstant`]); the tail's h_k
//! directly by that comparison. The alias threshold is a dyadic rational compared with U's bits.
//! Each decision consumes only the bits up to the one that decides it, so later decisions see
//! fresh independent bits ([`super::bits::BitStream`]). Karney's exact algorithm (2016, "Sampling
//! exactly from the normal distribution", Algorithm D) was the other candidate: it needs no table
//! but decides each draw by comparing several uniform deviates digit by digit, the kind of
//! data-dependent decision chain this table removes.

use super::bits::{BitStream, deciding_bits};
use super::cks::{FAST_SIGMA_MAX, bernoulli_exp_nat};
use super::exact_exp::{ExpConstant, exp_neg_bounds, uniform_below_exp};
use super::lazy_gaussian::{RatioBounds, bernoulli_exp_fraction, bernoulli_exp_one, take_bits};
use crate::error::{Result, invalid};
use num_bigint::BigUint;
use num_traits::ToPrimitive;
use rand::Rng;

const TWO64: u128 = 1 << 64;

/// One alias column: its own item with probability threshold·2^−64, else `alias`.
#[derive(Clone, Copy, Debug)]
struct Column {
    threshold: u128,
    own: u32,
    alias: u32,
}

/// Exact N_ℤ(0, σ²) draws for one integer σ from a table built once (module doc).
#[derive(Clone, Debug)]
pub struct TableDiscreteGaussian {
    sigma: u64,
    /// Block width B = 2^b.
    b: u32,
    /// Tail block width B_t = 2^bt.
    bt: u32,
    /// N = 2^index_bits alias columns.
    index_bits: u32,
    columns: Vec<Column>,
    /// h_c for the blocks c < C.
    blocks: Vec<ExpConstant>,
    /// L (module doc).
    scale: u128,
    tail_weight: u128,
    /// 2σ², the denominator of every exponent.
    den: u128,
    ratio: RatioBounds,
    /// Test hook: widen every 64-bit bound by this much (0 in use).
    slack: u128,
}

impl TableDiscreteGaussian {
    /// The sampler for an integer σ with 1 ≤ σ ≤ 2^31 − 2. Building it takes a few
    /// milliseconds (about 2·8·32 exact exponentials); keep it for all draws of that σ.
    ///
    /// ```
    /// use dpfair_privacy::Noise;
    /// use dpfair_privacy::samplers::TableDiscreteGaussian;
    ///
    /// let sampler = TableDiscreteGaussian::new(1 << 29)?;
    /// let mut draws = vec![0i128; 103];
    /// sampler.fill(&mut Noise::os(), &mut draws);
    /// assert!(draws.iter().all(|d| d.unsigned_abs() < 40 << 29));
    /// # Ok::<(), dpfair_privacy::PrivacyError>(())
    /// ```
    pub fn new(sigma: u64) -> Result<Self> {
        Self::with_reach(sigma, 8)
    }

    /// The sampler with blocks covering [0, reach·σ) and the tail beyond (the law is the same for
    /// any reach ≥ 1; a small reach sends many draws through the tail, for its tests).
    #[doc(hidden)]
    pub fn with_reach(sigma: u64, reach: u64) -> Result<Self> {
        if !(1..=FAST_SIGMA_MAX).contains(&sigma) {
            return Err(invalid(
                "sigma",
                format!("must be 1..={FAST_SIGMA_MAX} lattice steps, got {sigma}"),
            ));
        }
        if !(1..=8).contains(&reach) {
            return Err(invalid("reach", format!("must be 1..=8, got {reach}")));
        }
        let b = (63 - sigma.leading_zeros()).saturating_sub(4);
        let block = 1u64 << b;
        let n_blocks = (reach * sigma).div_ceil(block);
        let t = u128::from(n_blocks) << b;
        let sigma2 = u128::from(sigma) * u128::from(sigma);
        let den = 2 * sigma2;
        let mut bt = b;
        while 10 * t * (1u128 << bt) < 7 * sigma2 {
            bt += 1;
        }
        // Exponents a = m²/(2σ²) of the blocks' nearest points and of the tail's first point.
        let exps: Vec<u128> = (0..n_blocks)
            .map(|c| {
                let m = u128::from(c) << b;
                m * m
            })
            .chain([t * t])
            .collect();
        let tail_factor = 1u128 << (bt - b + 1); // 2·B_t/B
        let items = exps.len();
        let columns_n = items.next_power_of_two();
        let total = (columns_n as u128) << 64;
        // Weights ≈ the envelope (f64 estimates: they only set the speed).
        let approx: Vec<f64> = exps
            .iter()
            .enumerate()
            .map(|(i, &num)| {
                let e = (-(num as f64) / den as f64).exp();
                if i + 1 == items {
                    e * tail_factor as f64
                } else {
                    e
                }
            })
            .collect();
        let per_unit = total as f64 / approx.iter().sum::<f64>();
        let mut weights: Vec<u128> = approx
            .iter()
            .map(|v| ((v * per_unit) as u128).max(1))
            .collect();
        let sum: u128 = weights.iter().sum();
        // The largest weight (block 0) absorbs the rounding so the weights sum to N·2^64.
        weights[0] = (weights[0] + total)
            .checked_sub(sum)
            .filter(|&w| w > 0)
            .ok_or_else(|| invalid("sigma", "alias weights do not add up"))?;
        // L = min ⌊w·2^P/E⌋ over items (module doc), from upper brackets E of e^{−a}.
        let brackets: Vec<(BigUint, BigUint)> = exps
            .iter()
            .map(|&num| exp_neg_bounds(&BigUint::from(num), &BigUint::from(den), ExpConstant::PREC))
            .collect();
        let scale = brackets
            .iter()
            .zip(&weights)
            .enumerate()
            .map(|(i, ((_, ehi), &w))| {
                let factor = if i + 1 == items { tail_factor } else { 1 };
                (BigUint::from(w) << ExpConstant::PREC) / (ehi * factor)
            })
            .min()
            .and_then(|l| l.to_u128())
            .ok_or_else(|| invalid("sigma", "envelope scale out of range"))?;
        let blocks = brackets
            .into_iter()
            .zip(&exps)
            .zip(&weights)
            .take(items - 1)
            .map(|(((elo, ehi), &num), &w)| {
                ExpConstant::from_bracket((num, den), (scale, w), elo, ehi)
            })
            .collect();
        let tail_weight = weights[items - 1];
        weights.resize(columns_n, 0);
        Ok(TableDiscreteGaussian {
            sigma,
            b,
            bt,
            index_bits: columns_n.trailing_zeros(),
            columns: alias_columns(&weights),
            blocks,
            scale,
            tail_weight,
            den,
            ratio: RatioBounds::new(den),
            slack: 0,
        })
    }

    /// The σ this sampler draws for.
    pub fn sigma(&self) -> u64 {
        self.sigma
    }

    /// A copy whose 64-bit bounds (the constants h_c and the fractions of CKS20's Algorithm 1)
    /// are widened by `slack` units of 2^−64, so that the exact big-integer comparisons run often
    /// (the law is unchanged). For tests of that path.
    #[doc(hidden)]
    pub fn with_loose_bounds(&self, slack: u64) -> Self {
        let slack = u128::from(slack);
        TableDiscreteGaussian {
            blocks: self
                .blocks
                .iter()
                .map(|h| h.clone().loosened(slack))
                .collect(),
            slack,
            ..self.clone()
        }
    }

    /// Fills `out` with independent draws from one bit stream over `rng`.
    pub fn fill<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [i128]) {
        let mut bits = BitStream::new(rng);
        for o in out {
            *o = self.sample(&mut bits);
        }
    }

    /// One draw, reading the bits it needs from `bits`.
    pub fn sample<R: Rng + ?Sized>(&self, bits: &mut BitStream<'_, R>) -> i128 {
        loop {
            // The column, the offset u in a block and the sign in one read of
            // index_bits + b + 1 ≤ 36 raw bits (u and the sign go unused for the tail item).
            let raw = take_bits(bits, self.index_bits + self.b + 1);
            let negative = raw & 1 == 1;
            let u = u128::from((raw >> 1) & ((1u64 << self.b) - 1));
            let column = self.columns[(raw >> (self.b + 1)) as usize];
            // Own item iff U < t·2^−64 for the column's dyadic threshold t, i.e. iff w < t for
            // U's first 64 bits w. Either way the bits up to the first one where w and t − 1
            // differ decide it (all 64 when w = t − 1), so both outcomes consume the same count
            // and no branch is needed. For t = 0 (padding columns) the outcome is fixed and the
            // consumed prefix (a stopping time) is discarded.
            let w = bits.peek64();
            let t = column.threshold;
            let own = u128::from(w) < t;
            bits.consume(deciding_bits(w, t.saturating_sub(1) as u64));
            let item = if own { column.own } else { column.alias } as usize;
            let magnitude = match self.blocks.get(item) {
                Some(h) => {
                    let start = (item as u128) << self.b;
                    if !h.decide(bits) || !self.bernoulli_exp(bits, (2 * start + u) * u) {
                        continue;
                    }
                    start + u
                }
                None => match self.tail(bits) {
                    Some(m) => m,
                    None => continue,
                },
            };
            if negative && magnitude == 0 {
                continue;
            }
            // magnitude < 2^99 (tail doc), so the cast is exact.
            let y = magnitude as i128;
            return if negative { -y } else { y };
        }
    }

    /// Bernoulli(e^{−num/(2σ²)}) (CKS20 Algorithm 1 over lazily read bits).
    #[inline]
    fn bernoulli_exp<R: Rng + ?Sized>(&self, bits: &mut BitStream<'_, R>, num: u128) -> bool {
        let mut r = num;
        if num >= self.den {
            // Only when B is small against σ's blocks (σ < 8 at reach 8).
            let q = num / self.den;
            r = num - q * self.den;
            for _ in 0..q {
                if !bernoulli_exp_one(bits) {
                    return false;
                }
            }
        }
        bernoulli_exp_fraction(bits, &self.ratio.threshold(r).loosened(self.slack))
    }

    /// Steps 2–3 for the tail item: the accepted magnitude, or `None` for a rejection. The
    /// count k is a `u64` (2^64 successive zero bits cannot be read), so m < 2^33 + 2^64·2^34.
    #[cold]
    fn tail<R: Rng + ?Sized>(&self, bits: &mut BitStream<'_, R>) -> Option<u128> {
        let mut k = 0u64;
        loop {
            let zeros = bits.peek64().leading_zeros();
            if zeros < 64 {
                bits.consume(zeros + 1);
                k += u64::from(zeros);
                break;
            }
            bits.consume(64);
            k += 64;
        }
        let t = (self.blocks.len() as u128) << self.b;
        let m = t + (u128::from(k) << self.bt);
        let v = u128::from(take_bits(bits, self.bt));
        let den = BigUint::from(self.den);
        let big_m = BigUint::from(m);
        // h_k = e^{−m²/(2σ²)}·(L·2^{k+1+bt−b})/w_tail.
        let r_num = BigUint::from(self.scale) << (u64::from(self.bt - self.b) + 1 + k);
        let w = bits.take64();
        if !uniform_below_exp(
            bits,
            w,
            (&(&big_m * &big_m), &den),
            (&r_num, &BigUint::from(self.tail_weight)),
        ) {
            return None;
        }
        let gamma = (BigUint::from(2u32) * &big_m + v) * v;
        bernoulli_exp_nat(bits, &gamma, &den).then_some(m + v)
    }
}

/// Vose's alias table for integer weights summing to N·2^64 (N = `weights.len()`), in exact
/// integer arithmetic: item i is chosen with probability exactly w_i/(N·2^64).
fn alias_columns(weights: &[u128]) -> Vec<Column> {
    let mut rest = weights.to_vec();
    let mut columns = vec![
        Column {
            threshold: TWO64,
            own: 0,
            alias: 0,
        };
        weights.len()
    ];
    let (mut small, mut large): (Vec<usize>, Vec<usize>) =
        (0..weights.len()).partition(|&i| rest[i] < TWO64);
    while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
        small.pop();
        // Column s: item s with probability w_s/2^64, item l with the rest.
        columns[s] = Column {
            threshold: rest[s],
            own: s as u32,
            alias: l as u32,
        };
        rest[l] -= TWO64 - rest[s];
        if rest[l] < TWO64 {
            large.pop();
            small.push(l);
        }
    }
    // What is left has exactly 2^64 each (the sums are exact): a full column of its own.
    for i in large.into_iter().chain(small) {
        debug_assert_eq!(rest[i], TWO64);
        columns[i] = Column {
            threshold: TWO64,
            own: i as u32,
            alias: i as u32,
        };
    }
    columns
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The alias table gives every item exactly its weight: Σ over columns of what each column
    /// gives the item equals w_i (in units of 2^−64 per column).
    #[test]
    fn alias_table_realises_the_weights_exactly() {
        for sigma in [1u64, 3, 20, 1000, (1 << 29) + 12_345] {
            for reach in [1, 8] {
                let g = TableDiscreteGaussian::with_reach(sigma, reach).unwrap();
                let n = g.columns.len();
                let mut got = vec![0u128; n];
                for c in &g.columns {
                    got[c.own as usize] += c.threshold;
                    got[c.alias as usize] += TWO64 - c.threshold;
                }
                assert_eq!(got.iter().sum::<u128>(), (n as u128) << 64);
                assert_eq!(got[g.blocks.len()], g.tail_weight, "σ {sigma}");
                // Every block's acceptance constant is a probability, and close to 1.
                for h in &g.blocks {
                    assert!(h.upper() <= TWO64);
                }
                assert!(g.blocks.len() as u64 * (1 << g.b) >= reach * sigma);
                let (t, bt) = ((g.blocks.len() as u128) << g.b, 1u128 << g.bt);
                let s2 = u128::from(sigma) * u128::from(sigma);
                assert!(10 * t * bt >= 7 * s2, "tail decay, σ {sigma}");
            }
        }
    }

    #[test]
    fn bad_sigmas_are_errors() {
        assert!(TableDiscreteGaussian::new(0).is_err());
        assert!(TableDiscreteGaussian::new(FAST_SIGMA_MAX + 1).is_err());
        assert!(TableDiscreteGaussian::with_reach(5, 0).is_err());
        assert_eq!(
            TableDiscreteGaussian::new(FAST_SIGMA_MAX).unwrap().sigma(),
            FAST_SIGMA_MAX
        );
    }
}
