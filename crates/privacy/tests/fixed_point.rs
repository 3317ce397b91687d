//! Fixed-point tests of every exact sampler: point probabilities against their exact values,
//! with Wilson score intervals (OpenDP #2639: a bias in an exact CKS20 sampler that KS tests at
//! 2·10⁴ draws could not see). `docs/privacy.md#floating-point`.
//!
//! Each test checks m probabilities (a sampler's P(Y = y) at y = 0, ±1, ±2 for several
//! parameters, or P(1) of a Bernoulli) at family-wise level α = 10⁻⁶ (Bonferroni: each interval
//! at α/m, two-sided). **Power** (normal approximation, computed by [`detectable_bias`] and
//! asserted in `stated_power_of_the_fixed_point_tests`, so the stated figures cannot drift): an
//! absolute bias b in one probability p is detected with probability ≥ 0.99 when
//! b ≥ (z_{α/2m} + z_{0.99})·√(p(1−p)/N). At the default N = 10⁵ and p = ½ with m ≈ 20 that is
//! b ≈ 0.012; the `#[ignore]`d `*_high_power` twins draw N = 10⁷ per case (b ≈ 0.0012 at p = ½,
//! 0.0007 at p = 0.1). The slow big-integer paths (CKS20's on 2^70-scaled parameters, the forced
//! exact paths of the table sampler and the geometric skips) get N/10 draws (N/4 for the
//! rational-σ² Gaussian): √10 times the bias above.
//!
//! ```text
//! cargo test -p dpfair-privacy --release --test fixed_point -- --ignored high_power
//! ```
//!
//! Measured: all seven high-power tests pass in 929 s in release on this project's 2-core
//! machine (shared with other builds; the forced exact paths dominate). The default tests take
//! under a second each in debug, the table and geometric ones about 5 s.

use dpfair_privacy::mechanisms::Laplace;
use dpfair_privacy::samplers::bits::BitStream;
use dpfair_privacy::samplers::geometric::GeometricSkips;
use dpfair_privacy::samplers::lattice::{Lattice, Norm};
use dpfair_privacy::samplers::{
    LazyDiscreteGaussian, TableDiscreteGaussian, bernoulli_exp, bernoulli_exp_small,
    discrete_gaussian, discrete_gaussian_small, discrete_laplace, discrete_laplace_small,
};
use dpfair_privacy::{Budget, Ledger, Noise};
use num_bigint::BigUint;
use num_traits::ToPrimitive;
use statrs::distribution::{ContinuousCDF, Normal};

/// Family-wise level of each test.
const ALPHA: f64 = 1e-6;
/// Draws per case in the default tests and in the high-power ones.
const N_FAST: usize = 100_000;
const N_HIGH: usize = 10_000_000;

fn z_quantile(p: f64) -> f64 {
    Normal::new(0.0, 1.0).unwrap().inverse_cdf(p)
}

/// The Wilson score interval of k successes in n trials at two-sided level `level`.
fn wilson(k: u64, n: u64, level: f64) -> (f64, f64) {
    let n_draws = n;
    let z = z_quantile(1.0 - level / 2.0);
    let (n, p) = (n as f64, k as f64 / n as f64);
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z / (1.0 + z * z / n) * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    // At k = 0 or k = n the interval reaches 0 or 1 exactly (the formula gives it up to rounding).
    let lo = if k == 0 { 0.0 } else { centre - half };
    let hi = if k == n_draws { 1.0 } else { centre + half };
    (lo, hi)
}

/// The smallest bias in a probability p that m simultaneous checks at family-wise level ALPHA
/// on n draws detect with probability ≥ 0.99 (normal approximation; module doc).
fn detectable_bias(p: f64, n: usize, m: usize) -> f64 {
    (z_quantile(1.0 - ALPHA / (2.0 * m as f64)) + z_quantile(0.99))
        * (p * (1.0 - p) / n as f64).sqrt()
}

/// Observed frequencies against exact probabilities, checked together (Bonferroni).
#[derive(Default)]
struct Checks(Vec<(String, u64, u64, f64)>);

impl Checks {
    fn add(&mut self, what: String, k: u64, n: u64, p: f64) {
        self.0.push((what, k, n, p));
    }

    /// P(Y = y) for y ∈ {0, ±1, ±2} from integer draws.
    fn points(&mut self, what: &str, draws: &[i128], pmf: impl Fn(i128) -> f64) {
        for y in -2..=2 {
            let k = draws.iter().filter(|&&x| x == y).count() as u64;
            self.add(format!("{what}: P(Y = {y})"), k, draws.len() as u64, pmf(y));
        }
    }

    fn assert_all(self) {
        let m = self.0.len();
        for (what, k, n, p) in &self.0 {
            let (lo, hi) = wilson(*k, *n, ALPHA / m as f64);
            assert!(
                (lo..=hi).contains(p),
                "{what}: {k}/{n} = {} outside [{lo}, {hi}] around {p}",
                *k as f64 / *n as f64
            );
        }
    }
}

/// P(Y = y) of the discrete Laplace with scale b: tanh(1/(2b))·e^{−|y|/b}.
fn laplace_pmf(b: f64) -> impl Fn(i128) -> f64 {
    move |y| (0.5 / b).tanh() * (-(y.abs() as f64) / b).exp()
}

/// P(Y = y) of N_ℤ(0, σ²), normalised over |y| ≤ 40σ + 10 (the rest is below 1e-300).
fn gaussian_pmf(sigma2: f64) -> impl Fn(i128) -> f64 {
    let m = (40.0 * sigma2.sqrt() + 10.0) as i128;
    let z: f64 = (-m..=m)
        .map(|y| (-((y * y) as f64) / (2.0 * sigma2)).exp())
        .sum();
    move |y| (-((y * y) as f64) / (2.0 * sigma2)).exp() / z
}

fn count(n: usize, mut f: impl FnMut() -> bool) -> u64 {
    (0..n).filter(|_| f()).count() as u64
}

/// Bernoulli(e^{−γ}) (CKS20 Algorithm 1) at rational γ on both paths; monotone in γ; and
/// e^{−(a+b)} = e^{−a}·e^{−b} through the conjunction of two independent draws.
fn bernoulli_exp_cases(n: usize) -> Checks {
    let mut rng = Noise::seeded(2639);
    let mut c = Checks::default();
    let gammas = [(0u64, 1u64), (1, 3), (1, 2), (1, 1), (7, 2), (5, 1)];
    let mut previous = 1.0f64;
    for (num, den) in gammas {
        let p = (-(num as f64) / den as f64).exp();
        let fast = count(n, || {
            bernoulli_exp_small(&mut rng, num.into(), den.into()).unwrap()
        });
        let (bn, bd) = (
            BigUint::from(num) << 100usize,
            BigUint::from(den) << 100usize,
        );
        let big = count(n / 10, || bernoulli_exp(&mut rng, &bn, &bd).unwrap());
        c.add(format!("γ = {num}/{den} fast"), fast, n as u64, p);
        c.add(format!("γ = {num}/{den} big"), big, (n / 10) as u64, p);
        // The γ above are far enough apart (p drops by ≥ 0.11, ≥ 20 standard errors at N = 10⁵)
        // that the frequencies must decrease.
        let freq = fast as f64 / n as f64;
        assert!(freq <= previous, "not monotone at γ = {num}/{den}");
        previous = freq;
    }
    for ((a, ad), (b, bd)) in [((1u128, 3u128), (1u128, 2u128)), ((1, 1), (7, 2))] {
        let both = count(n, || {
            let x = bernoulli_exp_small(&mut rng, a, ad).unwrap();
            let y = bernoulli_exp_small(&mut rng, b, bd).unwrap();
            x && y
        });
        let p = (-(a as f64 / ad as f64 + b as f64 / bd as f64)).exp();
        c.add(
            format!("e^−({a}/{ad} + {b}/{bd}) by a product"),
            both,
            n as u64,
            p,
        );
    }
    c
}

fn laplace_cases(n: usize) -> Checks {
    let mut rng = Noise::seeded(2640);
    let mut c = Checks::default();
    for (t, s) in [(1u64, 1u64), (3, 2), (10, 1)] {
        let b = t as f64 / s as f64;
        let fast: Vec<i128> = (0..n)
            .map(|_| discrete_laplace_small(&mut rng, t, s).unwrap())
            .collect();
        c.points(&format!("Laplace {t}/{s} fast"), &fast, laplace_pmf(b));
        let (bt, bs) = (BigUint::from(t) << 70usize, BigUint::from(s) << 70usize);
        let big: Vec<i128> = (0..n / 10)
            .map(|_| {
                discrete_laplace(&mut rng, &bt, &bs)
                    .unwrap()
                    .to_i128()
                    .unwrap()
            })
            .collect();
        c.points(&format!("Laplace {t}/{s} big"), &big, laplace_pmf(b));
    }
    c
}

fn gaussian_cases(n: usize) -> Checks {
    let mut rng = Noise::seeded(2641);
    let mut c = Checks::default();
    for sigma in [1u64, 3] {
        let xs: Vec<i128> = (0..n)
            .map(|_| discrete_gaussian_small(&mut rng, sigma).unwrap())
            .collect();
        c.points(
            &format!("CKS20 Gaussian σ = {sigma}"),
            &xs,
            gaussian_pmf((sigma * sigma) as f64),
        );
    }
    let xs: Vec<i128> = (0..n / 4)
        .map(|_| {
            discrete_gaussian(&mut rng, &BigUint::from(5u32), &BigUint::from(2u32))
                .unwrap()
                .to_i128()
                .unwrap()
        })
        .collect();
    c.points("CKS20 Gaussian σ² = 5/2 (big)", &xs, gaussian_pmf(2.5));
    c
}

/// The bulk sampler over lazily read bits, on its fast path and with its thresholds loosened so
/// that about one comparison in eight takes the exact big-integer path.
fn lazy_gaussian_cases(n: usize) -> Checks {
    let mut rng = Noise::seeded(2642);
    let mut c = Checks::default();
    for sigma in [1u64, 3] {
        let g = LazyDiscreteGaussian::new(sigma).unwrap();
        for (label, s) in [
            ("fast", g.clone()),
            ("exact path", g.with_loose_bounds(1 << 61)),
        ] {
            let mut xs = vec![0i128; n];
            s.fill(&mut rng, &mut xs);
            c.points(
                &format!("lazy σ = {sigma} {label}"),
                &xs,
                gaussian_pmf((sigma * sigma) as f64),
            );
        }
    }
    c
}

/// The table sampler, blocks reaching 8σ and σ, on its fast path and forced onto its exact paths
/// (64-bit bounds loosened by 2^61).
fn table_gaussian_cases(n: usize) -> Checks {
    let mut rng = Noise::seeded(2643);
    let mut c = Checks::default();
    for sigma in [1u64, 3] {
        for reach in [8, 1] {
            let t = TableDiscreteGaussian::with_reach(sigma, reach).unwrap();
            // The exact paths are slow: a tenth of the draws.
            for (label, s, n) in [
                ("fast", t.clone(), n),
                ("exact path", t.with_loose_bounds(1 << 61), n / 10),
            ] {
                let mut xs = vec![0i128; n];
                s.fill(&mut rng, &mut xs);
                let what = format!("table σ = {sigma}, reach {reach}σ, {label}");
                c.points(&what, &xs, gaussian_pmf((sigma * sigma) as f64));
            }
        }
    }
    c
}

/// Geometric(q) skips: P(G = g) = (1 − q)^g·q for g = 0, 1, 2, on both paths.
fn geometric_cases(n: usize) -> Checks {
    let mut c = Checks::default();
    let mut noise = Noise::seeded(2644);
    let mut bits = BitStream::new(&mut noise);
    for q in [0.3, 1.0 / 89.0, 0.75] {
        let g = GeometricSkips::new(q).unwrap();
        // The exact big-integer path is slow: a tenth of the draws.
        for (label, s, n) in [
            ("fast", g.clone(), n),
            ("exact path", g.with_loose_bounds(1 << 61), n / 10),
        ] {
            let draws: Vec<u64> = (0..n)
                .map(|_| s.skip(&mut bits, u64::MAX).unwrap())
                .collect();
            for v in 0..3u64 {
                let k = draws.iter().filter(|&&x| x == v).count() as u64;
                let p = (1.0 - q).powi(v as i32) * q;
                c.add(
                    format!("geometric q = {q} {label}: P(G = {v})"),
                    k,
                    n as u64,
                    p,
                );
            }
        }
    }
    c
}

/// The lattice release (a Laplace mechanism on a 2^k lattice): a value on the lattice comes back
/// as value + j·g with j ~ discrete Laplace of scale b/g in lattice steps.
fn lattice_release_cases(n: usize) -> Checks {
    let mut c = Checks::default();
    let mut noise = Noise::seeded(2645);
    for b in [0.75, 3.0] {
        let mech = Laplace::from_scale(1.0, b).unwrap();
        // Releases of 100 coordinates each (the lattice's spacing depends on the dimension).
        let dim = 100;
        let lattice = Lattice::for_release(1.0, Norm::L1, dim, b).unwrap();
        let mut ledger = Ledger::new(Budget::pure(f64::INFINITY).unwrap());
        let mut out = Vec::with_capacity(n);
        for _ in 0..n / dim {
            out.extend(
                mech.release_vec(&mut ledger, &mut noise, "t", &[0.0; 100])
                    .unwrap(),
            );
        }
        let steps: Vec<i128> = out
            .iter()
            .map(|v| lattice.round("v", *v).unwrap())
            .collect();
        assert!(
            out.iter().zip(&steps).all(|(v, k)| lattice.value(*k) == *v),
            "off the lattice"
        );
        let (t, s) = lattice.steps_ratio(b).unwrap();
        let scale = t.to_f64().unwrap() / s.to_f64().unwrap();
        c.points(
            &format!("lattice Laplace b = {b} ({scale} steps)"),
            &steps,
            laplace_pmf(scale),
        );
    }
    c
}

/// The stated power (module doc) holds for the default and the high-power draws.
#[test]
fn stated_power_of_the_fixed_point_tests() {
    let m = 20;
    assert!(detectable_bias(0.5, N_FAST, m) < 0.0125);
    assert!(detectable_bias(0.5, N_HIGH, m) < 0.00125);
    assert!(detectable_bias(0.1, N_HIGH, m) < 0.00075);
    // And the checks can fail: a Bernoulli(0.5) sampler biased by the detectable amount.
    let k = (N_FAST as f64 * (0.5 + detectable_bias(0.5, N_FAST, m) * 1.3)) as u64;
    let (lo, hi) = wilson(k, N_FAST as u64, ALPHA / m as f64);
    assert!(!(lo..=hi).contains(&0.5));
}

macro_rules! fixed_point_tests {
    ($($fast:ident, $high:ident => $cases:ident;)*) => {$(
        #[test]
        fn $fast() {
            $cases(N_FAST).assert_all();
        }

        /// High power: 10⁷ draws per case (module doc for the command and the power).
        #[test]
        #[ignore]
        fn $high() {
            $cases(N_HIGH).assert_all();
        }
    )*};
}

fixed_point_tests! {
    fixed_point_bias_cks20_bernoulli_exp, fixed_point_bias_cks20_bernoulli_exp_high_power
        => bernoulli_exp_cases;
    fixed_point_bias_cks20_discrete_laplace, fixed_point_bias_cks20_discrete_laplace_high_power
        => laplace_cases;
    fixed_point_bias_cks20_discrete_gaussian, fixed_point_bias_cks20_discrete_gaussian_high_power
        => gaussian_cases;
    fixed_point_bias_lazy_gaussian, fixed_point_bias_lazy_gaussian_high_power
        => lazy_gaussian_cases;
    fixed_point_bias_table_gaussian_incl_exact_path, fixed_point_bias_table_gaussian_incl_exact_path_high_power
        => table_gaussian_cases;
    fixed_point_bias_geometric_skips, fixed_point_bias_geometric_skips_high_power
        => geometric_cases;
    fixed_point_bias_lattice_release, fixed_point_bias_lattice_release_high_power
        => lattice_release_cases;
}
