//! Distributional comparison with OpenDP's exact samplers (the reference implementation of the
//! same CKS20 algorithms): a two-sample chi-square test of homogeneity on the central integers
//! (tails pooled), 20,000 draws from each, rejecting at level 1e-4. Fixed seed on our side;
//! OpenDP draws from its own generator (rand 0.7 `thread_rng` without the `use-openssl` feature),
//! so its half is not reproducible, which the 1e-4 level absorbs.

use dashu::integer::{IBig, UBig};
use dashu::rational::RBig;
use dpfair_privacy::Noise;
use dpfair_privacy::samplers::{discrete_gaussian, discrete_laplace};
use num_bigint::BigUint;
use num_traits::ToPrimitive;
use opendp::traits::samplers::{sample_discrete_gaussian, sample_discrete_laplace};
use statrs::distribution::{ChiSquared, ContinuousCDF};

const N: usize = 20_000;

/// Two-sample chi-square statistic, Σ (a_i − b_i)²/(a_i + b_i) over cells with a_i + b_i ≥ 10
/// (equal sample sizes), the rest pooled per tail; and its 1 − 1e-4 critical value.
fn homogeneity(a: &[i64], b: &[i64]) -> (f64, f64) {
    let lo = *a.iter().chain(b).min().unwrap();
    let hi = *a.iter().chain(b).max().unwrap();
    let width = (hi - lo + 1) as usize;
    let (mut ca, mut cb) = (vec![0.0; width], vec![0.0; width]);
    a.iter().for_each(|x| ca[(x - lo) as usize] += 1.0);
    b.iter().for_each(|x| cb[(x - lo) as usize] += 1.0);
    // Merge sparse cells into their neighbour towards the centre.
    let mut cells: Vec<(f64, f64)> = Vec::new();
    let mut acc = (0.0, 0.0);
    for i in 0..width {
        acc.0 += ca[i];
        acc.1 += cb[i];
        if acc.0 + acc.1 >= 10.0 {
            cells.push(acc);
            acc = (0.0, 0.0);
        }
    }
    if let Some(last) = cells.last_mut() {
        last.0 += acc.0;
        last.1 += acc.1;
    }
    let stat: f64 = cells.iter().map(|(x, y)| (x - y).powi(2) / (x + y)).sum();
    let df = (cells.len() - 1) as f64;
    (stat, ChiSquared::new(df).unwrap().inverse_cdf(1.0 - 1e-4))
}

fn rbig(num: u64, den: u64) -> RBig {
    RBig::from_parts(IBig::from(num), UBig::from(den))
}

fn to_i64(x: IBig) -> i64 {
    i64::try_from(x).unwrap()
}

#[test]
fn discrete_laplace_matches_opendp() {
    let mut noise = Noise::seeded(31);
    for (num, den) in [(1u64, 1u64), (5, 2), (30, 1)] {
        let ours: Vec<i64> = (0..N)
            .map(|_| {
                discrete_laplace(&mut noise, &BigUint::from(num), &BigUint::from(den))
                    .unwrap()
                    .to_i64()
                    .unwrap()
            })
            .collect();
        let theirs: Vec<i64> = (0..N)
            .map(|_| to_i64(sample_discrete_laplace(rbig(num, den)).unwrap()))
            .collect();
        let (stat, crit) = homogeneity(&ours, &theirs);
        assert!(
            stat < crit,
            "Laplace {num}/{den}: χ² = {stat:.1} ≥ {crit:.1}"
        );
    }
}

#[test]
fn discrete_gaussian_matches_opendp() {
    let mut noise = Noise::seeded(32);
    // σ given to OpenDP as a rational scale; to us as σ² (here perfect squares and 9/4).
    for (num, den) in [(1u64, 1u64), (3, 2), (20, 1)] {
        let ours: Vec<i64> = (0..N)
            .map(|_| {
                discrete_gaussian(
                    &mut noise,
                    &BigUint::from(num * num),
                    &BigUint::from(den * den),
                )
                .unwrap()
                .to_i64()
                .unwrap()
            })
            .collect();
        let theirs: Vec<i64> = (0..N)
            .map(|_| to_i64(sample_discrete_gaussian(rbig(num, den)).unwrap()))
            .collect();
        let (stat, crit) = homogeneity(&ours, &theirs);
        assert!(
            stat < crit,
            "Gaussian σ = {num}/{den}: χ² = {stat:.1} ≥ {crit:.1}"
        );
    }
}
