//! Uniform bits read lazily: a buffered bit stream over any random source, and a uniform real
//! U ∈ [0, 1) revealed one 64-bit word at a time and compared exactly with rationals.
//!
//! Samplers that decide from a prefix of U's binary expansion consume only that prefix (a
//! stopping time of the bit sequence); the bits after it are never looked at by the decision, so
//! they are still independent uniform bits and the next draw may use them.

use num_bigint::BigUint;
use rand::Rng;

/// A buffer of unused uniform bits (left-aligned in a `u128`), refilled 64 bits at a time.
pub struct BitStream<'a, R: Rng + ?Sized> {
    rng: &'a mut R,
    buf: u128,
    /// Valid bits at the top of `buf`.
    avail: u32,
}

impl<'a, R: Rng + ?Sized> BitStream<'a, R> {
    pub fn new(rng: &'a mut R) -> Self {
        BitStream {
            rng,
            buf: 0,
            avail: 0,
        }
    }

    /// The next 64 bits (first bit most significant), not consumed.
    #[inline]
    pub fn peek64(&mut self) -> u64 {
        if self.avail < 64 {
            let w = self.rng.next_u64() as u128;
            // 1 ≤ 64 − avail ≤ 64: the new word goes right after the valid bits.
            self.buf |= w << (64 - self.avail);
            self.avail += 64;
        }
        (self.buf >> 64) as u64
    }

    /// Drops the next `k ≤ 64` bits (after a [`BitStream::peek64`]).
    #[inline]
    pub fn consume(&mut self, k: u32) {
        debug_assert!(k <= 64 && k <= self.avail);
        self.buf <<= k;
        self.avail -= k;
    }

    /// The next 64 bits, consumed.
    #[inline]
    pub fn take64(&mut self) -> u64 {
        let w = self.peek64();
        self.consume(64);
        w
    }
}

/// Whole 64-bit words of the stream (for the rare cold paths that run the word-at-a-time
/// samplers on the same stream, and so keep its bits in order).
impl<R: Rng + ?Sized> rand_core::TryRng for BitStream<'_, R> {
    type Error = core::convert::Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        Ok((self.take64() >> 32) as u32)
    }

    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        Ok(self.take64())
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        for chunk in dst.chunks_mut(8) {
            let w = self.take64().to_be_bytes();
            chunk.copy_from_slice(&w[..chunk.len()]);
        }
        Ok(())
    }
}

/// The number of leading bits of `w` that decide a comparison with the threshold `t ≠ w`: the
/// bits up to and including the first one where `w` and `t` differ (at most 64).
///
/// With k = that count and w_k = w's first k bits: if w > t, every real number with prefix w_k is
/// > t (as a 64-bit fraction); if w < t, every real number with prefix w_k is ≤ t + 1 − 2^−64.
#[inline]
pub fn deciding_bits(w: u64, t: u64) -> u32 {
    ((w ^ t).leading_zeros() + 1).min(64)
}

/// A uniform real U ∈ [0, 1) of which the first `bits` binary digits (`prefix`) have been drawn:
/// U ∈ [prefix·2^−bits, (prefix + 1)·2^−bits).
pub struct LazyUniform {
    prefix: BigUint,
    bits: u64,
}

impl LazyUniform {
    /// U whose first 64 bits are `w` (already consumed from the stream).
    pub fn from_word(w: u64) -> Self {
        LazyUniform {
            prefix: BigUint::from(w),
            bits: 64,
        }
    }

    /// Whether U < num/den (den > 0), exactly: draws further 64-bit words from `bits` until the
    /// interval of U's prefix lies on one side of num/den (U = num/den has probability 0, and the
    /// decision is the one for the full real U).
    pub fn less_than<R: Rng + ?Sized>(
        &mut self,
        bits: &mut BitStream<'_, R>,
        num: &BigUint,
        den: &BigUint,
    ) -> bool {
        loop {
            // U < num/den  ⇐  (prefix + 1)·den ≤ num·2^bits;  U ≥ num/den  ⇐  prefix·den ≥ num·2^bits.
            let scaled = num << self.bits;
            let low = &self.prefix * den;
            if &low + den <= scaled {
                return true;
            }
            if low >= scaled {
                return false;
            }
            self.prefix = (&self.prefix << 64u32) + BigUint::from(bits.take64());
            self.bits += 64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Noise;

    #[test]
    fn stream_hands_out_every_bit_once_in_order() {
        // The same seed read as whole words and as odd-sized pieces gives the same bits.
        let words: Vec<u64> = {
            let mut n = Noise::seeded(3);
            (0..4).map(|_| n.next_u64()).collect()
        };
        let mut n = Noise::seeded(3);
        let mut s = BitStream::new(&mut n);
        let mut got = Vec::new();
        let mut pieces = [1u32, 7, 13, 64, 3, 40, 60, 20, 48].iter().cycle();
        let mut total = 0;
        while total < 192 {
            let k = (*pieces.next().unwrap()).min(192 - total);
            let w = s.peek64();
            got.push((w >> (64 - k) as u64, k));
            s.consume(k);
            total += k;
        }
        let mut bitstring = String::new();
        for (v, k) in got {
            bitstring.push_str(&format!("{:0width$b}", v, width = k as usize));
        }
        let want: String = words[..3].iter().map(|w| format!("{w:064b}")).collect();
        assert_eq!(bitstring, want);
    }

    #[test]
    fn deciding_bits_is_the_first_difference() {
        assert_eq!(deciding_bits(0, 1 << 63), 1);
        assert_eq!(deciding_bits(0b101 << 61, 0b100 << 61), 3);
        assert_eq!(deciding_bits(5, 4), 64);
        assert_eq!(deciding_bits(7, 7), 64);
    }

    #[test]
    fn lazy_comparison_is_exact_past_the_first_word() {
        // Threshold 1/3 and a prefix that agrees with 1/3's expansion for 64 bits, so every
        // comparison must draw more bits. Binomial count of 4,000 trials, 5 sd allowed.
        let third_prefix = u64::MAX / 3; // 0.0101…01 (64 bits), 1/3 − 2^-64/3
        let (num, den) = (BigUint::from(1u32), BigUint::from(3u32));
        let mut noise = Noise::seeded(5);
        let mut s = BitStream::new(&mut noise);
        let below = (0..4000)
            .filter(|_| LazyUniform::from_word(third_prefix).less_than(&mut s, &num, &den))
            .count();
        // U ∈ [p, p + 2^-64) with p = 1/3 − 2^-64/3: P(U < 1/3) = 1/3.
        let sd = (4000.0f64 * (1.0 / 3.0) * (2.0 / 3.0)).sqrt();
        assert!(
            (below as f64 - 4000.0 / 3.0).abs() < 5.0 * sd,
            "{below} of 4000"
        );
        // Prefixes far from the threshold are decided without drawing.
        assert!(LazyUniform::from_word(0).less_than(&mut s, &num, &den));
        assert!(!LazyUniform::from_word(u64::MAX / 2).less_than(&mut s, &num, &den));
    }
}
