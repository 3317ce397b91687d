//! Training / calibration splits (Algorithm 5 step 1: `n = ⌊N/2⌋`, `ň = N − n`; Algorithm 1:
//! `n_s = ⌈N_s/2⌉`). The split never looks at the data values, only at the public row count and
//! a seed, so it is a data-independent partition and parallel composition over the two halves
//! holds under replace-one neighbours. The shuffle is a Fisher–Yates pass over a ChaCha20 stream,
//! fixed here so that a recorded seed reproduces the split on every platform and version (the
//! federated protocol repeats a site's split from its seed).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// A uniformly random permutation of `0..n` from `seed`.
pub fn permutation(n: usize, seed: u64) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    for i in (1..n).rev() {
        // Rejection-free multiply-shift is biased for huge n; use rejection sampling.
        let bound = i as u64 + 1;
        let zone = u64::MAX - (u64::MAX % bound);
        let j = loop {
            let r = rng.next_u64();
            if r < zone {
                break (r % bound) as usize;
            }
        };
        p.swap(i, j);
    }
    p
}

/// Rows `0..n` split at random into `n_train` training rows and `n − n_train` calibration rows
/// (each half sorted).
pub fn random_split(n: usize, n_train: usize, seed: u64) -> (Vec<usize>, Vec<usize>) {
    let p = permutation(n, seed);
    let (mut t, mut c) = (p[..n_train.min(n)].to_vec(), p[n_train.min(n)..].to_vec());
    t.sort_unstable();
    c.sort_unstable();
    (t, c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_is_a_permutation_and_depends_on_the_seed() {
        let p = permutation(1000, 3);
        let mut s = p.clone();
        s.sort_unstable();
        assert_eq!(s, (0..1000).collect::<Vec<_>>());
        assert_eq!(p, permutation(1000, 3));
        assert_ne!(p, permutation(1000, 4));
    }

    #[test]
    fn splits_have_the_right_sizes() {
        let (t, c) = random_split(11, 5, 1);
        assert_eq!((t.len(), c.len()), (5, 6));
        let mut all = [t, c].concat();
        all.sort_unstable();
        assert_eq!(all, (0..11).collect::<Vec<_>>());
    }
}
