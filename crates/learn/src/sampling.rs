//! Exact Poisson subsampling for DP-SGD: every example joins the batch independently with
//! probability q (Opacus's `UniformWithReplacementSampler`; the subsampling the accountants of
//! spec 003 §2.4 assume). The coins come from the privacy crate's [`Noise`], because the
//! amplification by subsampling is part of the privacy argument.
//!
//! Each coin is exactly Bernoulli(q) for the `f64` value q: it compares a uniform U = 0.b₁b₂…
//! with q's finite binary expansion bit by bit and stops at the first difference (U < q ⇔
//! selected). q = 2^{−(z+1)}·(1.m₁…m₅₂) has z leading zero bits, so a coin almost always ends
//! within its first z bits at U's first 1 bit; on average a coin uses fewer than two random bits,
//! and a batch of n coins about n/32 64-bit words.

use crate::error::{Result, invalid};
use dpfair_privacy::Noise;
use rand::Rng;

/// Draws Poisson samples of `0..n` with inclusion probability `q`.
#[derive(Clone, Debug)]
pub struct PoissonSampler {
    q: f64,
    /// Leading zero bits of q after the binary point (q ∈ [2^{−z−1}, 2^{−z})).
    zeros: u32,
    /// q's 53 significant bits (implicit 1 included), i.e. its binary expansion from position
    /// z+1 to z+53; every later bit is 0.
    mantissa: u64,
}

/// A left-aligned buffer of unused random bits.
struct Bits<'a> {
    noise: &'a mut Noise,
    buf: u64,
    avail: u32,
}

impl Bits<'_> {
    #[inline]
    fn refill(&mut self) {
        self.buf = self.noise.next_u64();
        self.avail = 64;
    }

    #[inline]
    fn consume(&mut self, k: u32) {
        self.buf = self.buf.checked_shl(k).unwrap_or(0);
        self.avail -= k;
    }

    /// The next `k ≤ 64` bits as an integer (first bit most significant).
    fn take(&mut self, k: u32) -> u64 {
        if k == 0 {
            return 0;
        }
        if self.avail >= k {
            let v = self.buf >> (64 - k);
            self.consume(k);
            return v;
        }
        let have = self.avail;
        let hi = if have == 0 {
            0
        } else {
            self.buf >> (64 - have)
        };
        self.refill();
        let rest = k - have;
        let lo = self.buf >> (64 - rest);
        self.consume(rest);
        (hi.checked_shl(rest).unwrap_or(0)) | lo
    }

    /// One exact Bernoulli(q) coin (see the module doc).
    #[inline]
    fn coin(&mut self, zeros: u32, mantissa: u64) -> bool {
        // U's first `zeros` bits must all be 0 (q's are); the first 1 bit means U > q.
        let mut need = zeros;
        while need > 0 {
            if self.avail == 0 {
                self.refill();
            }
            let k = need.min(self.avail);
            let lz = self.buf.leading_zeros();
            if lz < k {
                self.consume(lz + 1);
                return false;
            }
            self.consume(k);
            need -= k;
        }
        // Next 53 bits against q's 53 significant bits; on equality every remaining bit of q is
        // 0, so U ≥ q (U = q has probability 0): not selected.
        self.take(53) < mantissa
    }
}

impl PoissonSampler {
    /// A sampler with inclusion probability `q ∈ (0, 1]` (normal, not subnormal, when < 1).
    pub fn new(q: f64) -> Result<Self> {
        if !(q > 0.0 && q <= 1.0) || (q < 1.0 && !q.is_normal()) {
            return Err(invalid(
                "sampling_rate",
                format!("must be in (0, 1] (and not subnormal), got {q}"),
            ));
        }
        if q == 1.0 {
            return Ok(PoissonSampler {
                q,
                zeros: 0,
                mantissa: 0,
            });
        }
        let bits = q.to_bits();
        let exp = ((bits >> 52) & 0x7ff) as i64 - 1023; // q = 1.m × 2^exp, exp ≤ −1
        let zeros = (-exp - 1) as u32;
        let mantissa = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
        Ok(PoissonSampler { q, zeros, mantissa })
    }

    pub fn rate(&self) -> f64 {
        self.q
    }

    /// Fills `out` with the selected indices of `0..n`, in increasing order.
    pub fn sample_into(&self, noise: &mut Noise, n: usize, out: &mut Vec<usize>) {
        out.clear();
        if self.q == 1.0 {
            out.extend(0..n);
            return;
        }
        let mut bits = Bits {
            noise,
            buf: 0,
            avail: 0,
        };
        for i in 0..n {
            if bits.coin(self.zeros, self.mantissa) {
                out.push(i);
            }
        }
    }

    /// The selected indices of `0..n`.
    pub fn sample(&self, noise: &mut Noise, n: usize) -> Vec<usize> {
        let mut out = Vec::new();
        self.sample_into(noise, n, &mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// |observed − expected| in standard errors of a binomial count.
    fn z_score(count: usize, trials: usize, p: f64) -> f64 {
        let n = trials as f64;
        (count as f64 - n * p) / (n * p * (1.0 - p)).sqrt()
    }

    #[test]
    fn inclusion_frequency_matches_q() {
        let mut noise = Noise::seeded(42);
        // Rates with short and long expansions, many and few leading zeros, a dyadic rate
        // (the equality branch), and q near 1.
        for q in [
            1.0 / 89.0,
            0.75,
            0.5,
            0.3,
            1e-3,
            0.999,
            2f64.powi(-40) * 3.0,
        ] {
            let s = PoissonSampler::new(q).unwrap();
            let n = 400_000;
            let mut total = 0;
            for _ in 0..5 {
                total += s.sample(&mut noise, n).len();
            }
            // 5 standard errors of a binomial count: false alarm rate below 1e-6 per rate.
            let z = z_score(total, 5 * n, q);
            assert!(z.abs() < 5.0, "q = {q}: {total} selected, z = {z}");
        }
    }

    #[test]
    fn coins_are_independent_of_position() {
        // Pairs (i, i+1) both selected: probability q² if the coins are independent. With q = 0.3
        // over 10⁶ pairs the count has standard error √(10⁶ q²(1−q²)) ≈ 286.
        let s = PoissonSampler::new(0.3).unwrap();
        let mut noise = Noise::seeded(7);
        let n = 1_000_001;
        let sel = s.sample(&mut noise, n);
        let mut mark = vec![false; n];
        for &i in &sel {
            mark[i] = true;
        }
        let both = mark.windows(2).filter(|w| w[0] && w[1]).count();
        let z = z_score(both, n - 1, 0.09);
        assert!(z.abs() < 5.0, "adjacent pairs z = {z}");
        assert!(sel.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn edge_rates() {
        let mut noise = Noise::seeded(1);
        assert_eq!(
            PoissonSampler::new(1.0).unwrap().sample(&mut noise, 5),
            vec![0, 1, 2, 3, 4]
        );
        for bad in [0.0, -0.1, 1.5, f64::NAN, 1e-310] {
            assert!(PoissonSampler::new(bad).is_err(), "{bad}");
        }
    }
}
