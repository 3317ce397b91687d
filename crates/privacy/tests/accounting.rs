//! Accountants against published and recomputed reference values.
//!
//! Sources of the reference numbers:
//! * [S4] `docs/reference-values.md#dp2dp` (pure-Python port of dp_accounting's RDP).
//! * [S3] `docs/reference-values.md#decoupled` (prv-accountant 0.2.0, Opacus RDP and GDP
//!   accountants).
//! * [S0] `docs/reference-values.md#fdp-fair` (Xue & Yu, Prop. 19).
//! * [DPA] Google dp_accounting 0.6.0 (PyPI), computed for this file:
//!   `RdpAccountant()` / `PLDAccountant(value_discretization_interval=1e-4)` composing
//!   `PoissonSampledDpEvent(q, GaussianDpEvent(z))` T times, `get_epsilon(1e-5)`
//!   (add/remove neighbours).
//! * [SciPy] brentq on the Balle–Wang profile `Φ(1/(2z) − εz) − e^ε Φ(−1/(2z) − εz) = δ`
//!   (scipy 1.17, xtol 1e-14).
//!
//! Tolerances: RDP 0.5% and PRV 1% of dp_accounting (the project's targets); closed forms and
//! root-finders to 1e-6 relative or better, as stated per test.

use dpfair_privacy::accounting::{
    self, Accountant, advanced_composition, analytic_gaussian_epsilon, analytic_gaussian_sigma,
    basic_composition, classical_gaussian_sigma, default_orders, gdp_mu, rdp, rdp_sgm_curve,
    rdp_to_dp, sgm_effective_noise_multiplier, sgm_epsilon, sgm_epsilon_for, sgm_noise_multiplier,
    sgm_prv_bounds, zcdp, zcdp_to_dp,
};
use dpfair_privacy::{PrivacyError, Relation};

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

#[test]
fn sampled_gaussian_rdp_values_match_dp2dp() {
    // [S4] S_α(q = 0.064, z = 2) and S_α(q = 0.01, z = 1.1) at integer orders, printed to 6
    // digits.
    for (q, z, a, want) in [
        (0.064, 2.0, 2.0, 0.001_162_69),
        (0.064, 2.0, 8.0, 0.005_252_41),
        (0.064, 2.0, 32.0, 1.169_13),
        (0.01, 1.1, 2.0, 1.285_10e-4),
        (0.01, 1.1, 10.0, 8.075_82e-4),
    ] {
        let got = rdp::rdp_step(q, z, a);
        assert!(
            rel(got, want) < 1e-5,
            "S_{a}(q={q}, z={z}) = {got}, want {want}"
        );
    }
    // Closed form at α = 2 (MTZ 2019 §3.2): ln(1 + q²(e^{1/z²} − 1)).
    let closed = (1.0 + 0.064f64.powi(2) * (0.25f64.exp() - 1.0)).ln();
    assert!(rel(rdp::rdp_step(0.064, 2.0, 2.0), closed) < 1e-12);
}

#[test]
fn fractional_orders_match_the_renyi_integral() {
    // Reference: ln(∫ ((1−q)φ_z(x) + qφ_z(x−1))^α φ_z(x)^{1−α} dx)/(α − 1) by scipy.integrate.quad
    // (epsabs 1e-14, epsrel 1e-13). [S4] prints 0.00147111 for α = 2.5 and dp_accounting 0.6.0
    // returns 0.0014711057 (and 0.113548652 for the second case): its fractional series stops
    // early and over-states these orders by 0.3–0.4% (harmless: an over-estimate is still a
    // bound). dpfair's series matches the integral.
    for (q, z, a, truth) in [
        (0.064, 2.0, 2.5, 0.001_466_766_130_422_57),
        (0.3, 1.5, 3.7, 0.113_132_217_819_264_84),
    ] {
        let got = rdp::rdp_step(q, z, a);
        assert!(
            rel(got, truth) < 1e-9,
            "S_{a}(q={q}, z={z}) = {got}, want {truth}"
        );
    }
    // [DPA] at a large fractional order, where its series does converge: 21.1172603.
    assert!(rel(rdp::rdp_step(0.3, 1.5, 100.5), 21.117_260_3) < 1e-7);
    // dp_accounting gives up (∞) at α = 1.5 here; the alternating-tail bound still gives a finite
    // value, which must lie between the neighbouring orders' (RDP is non-decreasing in α).
    let (lo, mid, hi) = (
        rdp::rdp_step(0.3, 1.5, 1.4),
        rdp::rdp_step(0.3, 1.5, 1.5),
        rdp::rdp_step(0.3, 1.5, 2.0),
    );
    assert!(mid.is_finite() && lo <= mid * (1.0 + 1e-9) && mid <= hi * (1.0 + 1e-9));
    // Integer and fractional formulas agree across the switch.
    let a = rdp::rdp_step(0.05, 0.9, 7.0);
    let b = rdp::rdp_step(0.05, 0.9, 7.0 + 1e-9);
    assert!(rel(a, b) < 1e-6, "{a} vs {b}");
}

#[test]
fn large_orders_do_not_overflow() {
    // RDP of the subsampled Gaussian never exceeds the unsubsampled α/(2z²).
    for a in [1024.0, 4096.0, 100_000.0, 2500.5] {
        let v = rdp::rdp_step(0.01, 0.8, a);
        assert!(v.is_finite() && v > 0.0, "order {a}: {v}");
        assert!(v <= a / (2.0 * 0.64) * (1.0 + 1e-12), "order {a}: {v}");
    }
}

#[test]
fn rdp_epsilon_matches_dp_accounting() {
    // (q, z, T, ε): [DPA] RdpAccountant with its default orders (= default_orders()); the reference
    // values [S4]/[S3] agree to their printed digits.
    for (q, z, t, want) in [
        (0.01, 1.1, 10_000, 5.632_010_670_081_592), // [S4] 5.6320
        (0.01, 1.0, 1000, 2.101_366_525_420_273),   // [S3] 2.1014
        (0.034, 2.0, 1500, 3.256_607_535_179_061),  // [S3] 3.2566
        (0.034, 3.27 / 1.5, 1500, 2.914_248_521_394_902), // [S3] 2.9142
        (0.064, 5.526, 100, 0.460_018_381_975_207_3), // [S4] 0.4600
        (1.0, 1.0, 1, 4.728_507_067_217_623),       // [S4] Gaussian z = 1: 4.7285
        (1.0, 20.0, 1, 0.181_617_251_211_279_78),   // [S4] Gaussian z = 20: 0.18162
    ] {
        let got = sgm_epsilon(Accountant::Rdp, q, z, t, 1e-5).unwrap();
        assert!(
            rel(got, want) < 0.005,
            "RDP q={q} z={z} T={t}: {got} vs {want}"
        );
        // Same formulas and orders as dp_accounting (fractional orders slightly tighter, see
        // above): far inside the 0.5% requirement.
        assert!(
            rel(got, want) < 1e-4,
            "RDP q={q} z={z} T={t}: {got} vs {want}"
        );
    }
    // [S3] further RDP rows (4-digit values).
    for (q, z, t, want) in [
        (0.034, 1.56 / 1.5, 1500, 8.9187),
        (0.0683, 4.65 / 1.5, 750, 2.8153),
        (0.0683, 2.60 / 1.5, 1500, 8.8103),
    ] {
        let got = sgm_epsilon(Accountant::Rdp, q, z, t, 1e-5).unwrap();
        assert!(
            rel(got, want) < 0.005,
            "RDP q={q} z={z} T={t}: {got} vs {want}"
        );
    }
}

#[test]
fn classic_conversion_matches_decoupled() {
    // [S3] "RDP ε (classic conversion)" with Opacus' orders {1.1, …, 10.9} ∪ {12, …, 63}.
    let mut orders: Vec<f64> = (1..100).map(|i| 1.0 + i as f64 / 10.0).collect();
    orders.extend((12..64).map(f64::from));
    for (q, z, t, classic, improved) in [
        (0.01, 1.0, 1000, 2.5380, 2.1014),
        (0.034, 2.0, 1500, 3.7285, 3.2566),
    ] {
        let curve = rdp_sgm_curve(q, z, t, &orders).unwrap();
        let c = rdp::rdp_to_dp_classic(&orders, &curve, 1e-5);
        let i = rdp_to_dp(&orders, &curve, 1e-5).unwrap();
        assert!(rel(c, classic) < 5e-4, "classic {c} vs {classic}");
        assert!(rel(i, improved) < 5e-4, "improved {i} vs {improved}");
    }
}

#[test]
fn prv_matches_dp_accounting_pld_within_one_percent() {
    // [DPA] PLDAccountant(1e-4); [S3] prints the same four PRV values as prv-accountant
    // estimates (2.831, 8.818, 2.735, 8.678).
    for (q, z, t, want) in [
        (0.01, 1.1, 10_000, 5.192_620_123_878_041),
        (0.034, 3.13 / 1.5, 1500, 2.831_359_426_304_131),
        (0.0683, 4.44 / 1.5, 750, 2.735_139_892_809_762_8),
        (0.064, 5.526, 100, 0.415_945_710_582_191_6),
        (1.0, 1.0, 1, 4.377_178_100_048_04),
    ] {
        let b = sgm_prv_bounds(q, z, t, 1e-5).unwrap();
        assert!(
            b.lower <= b.estimate && b.estimate <= b.upper,
            "q={q} z={z} T={t}: {b:?}"
        );
        assert!(
            rel(b.upper, want) < 0.01,
            "PRV q={q} z={z} T={t}: {b:?} vs {want}"
        );
        assert!(
            rel(b.estimate, want) < 0.01,
            "PRV q={q} z={z} T={t}: {b:?} vs {want}"
        );
        // The certified bracket is narrow: upper − lower ≤ 1% of ε (+ 1e-3).
        assert!(b.upper - b.lower <= 0.01 * want + 1e-3, "{b:?}");
        // The PRV accountant is tighter than RDP (same relation, both certified).
        let r = sgm_epsilon(Accountant::Rdp, q, z, t, 1e-5).unwrap();
        assert!(b.upper < r, "PRV {b:?} vs RDP {r}");
    }
    // q = 1, T = 1 is one Gaussian release: the PRV bracket must contain the exact value.
    let exact = analytic_gaussian_epsilon(1.0, 1e-5).unwrap();
    let b = sgm_prv_bounds(1.0, 1.0, 1, 1e-5).unwrap();
    assert!(b.lower <= exact && exact <= b.upper, "{b:?} vs {exact}");
}

#[test]
fn prv_matches_dp_accounting_at_large_epsilon() {
    // [DPA]; [S3] prints 8.818 / 8.678 (prv-accountant estimates).
    for (q, z, t, want) in [
        (0.034, 1.0, 1500, 8.817_877_906_773_669),
        (0.0683, 1.66, 1500, 8.677_571_590_868_702),
        (0.5, 3.0, 50, 5.626_423_189_373_491),
        (0.1, 0.8, 300, 19.316_575_459_561_825),
    ] {
        let b = sgm_prv_bounds(q, z, t, 1e-5).unwrap();
        assert!(
            rel(b.upper, want) < 0.01,
            "PRV q={q} z={z} T={t}: {b:?} vs {want}"
        );
    }
}

#[test]
fn gdp_matches_decoupled() {
    // [S3] (Opacus GaussianAccountant, Poisson CLT): μ and ε at δ = 1e-5.
    for (q, z, t, mu, eps) in [
        (0.034, 3.01 / 1.5, 1500, 0.6992, 2.9057),
        (0.034, 1.45 / 1.5, 1500, 1.8226, 8.9219),
        (0.0683, 4.30 / 1.5, 750, 0.6729, 2.7823),
        (0.0683, 2.43 / 1.5, 1500, 1.8015, 8.7959),
    ] {
        let m = gdp_mu(q, z, t).unwrap();
        assert!(rel(m, mu) < 2e-4, "μ {m} vs {mu}");
        let e = sgm_epsilon(Accountant::Gdp, q, z, t, 1e-5).unwrap();
        assert!(rel(e, eps) < 5e-4, "GDP ε {e} vs {eps}");
    }
}

#[test]
fn analytic_gaussian_matches_balle_wang_profile() {
    // [SciPy] ε(z, δ); the CLI example z = 1, δ = 1e-5 → 4.3772.
    for (z, d, want) in [
        (1.0, 1e-5, 4.377_178_095_681_225),
        (0.5, 1e-5, 9.997_256_146_434_303),
        (5.0, 1e-6, 0.834_117_548_624_050_5),
        (20.0, 1e-5, 0.160_042_034_458_132_78),
        (0.1, 1e-3, 80.032_526_094_150_5),
    ] {
        let e = analytic_gaussian_epsilon(z, d).unwrap();
        assert!(rel(e, want) < 1e-9, "ε({z}, {d}) = {e}, want {want}");
    }
    assert!((analytic_gaussian_epsilon(1.0, 1e-5).unwrap() - 4.3772).abs() < 5e-5);
    // [SciPy] σ(Δ = 1, ε, δ) for ε below and above 1.
    for (e, d, want) in [
        (1.0, 1e-5, 3.730_631_634_815_946),
        (0.5, 1e-5, 7.031_826_675_582_462_5),
        (4.0, 1e-6, 1.193_518_587_157_984_3),
        (10.0, 1e-5, 0.499_888_619_709_008_44),
        (0.1, 1e-6, 36.304_690_426_195_45),
    ] {
        let s = analytic_gaussian_sigma(1.0, e, d).unwrap();
        assert!(rel(s, want) < 1e-9, "σ({e}, {d}) = {s}, want {want}");
        // Scales linearly with the sensitivity, and is on the safe side of the profile.
        let s3 = analytic_gaussian_sigma(3.0, e, d).unwrap();
        assert!(rel(s3, 3.0 * s) < 1e-12);
        assert!(analytic_gaussian_epsilon(s, d).unwrap() <= e * (1.0 + 1e-12));
    }
    // Analytic never needs more noise than the classical formula where the latter is valid.
    for e in [0.1, 0.5, 0.9] {
        assert!(
            analytic_gaussian_sigma(1.0, e, 1e-5).unwrap()
                < classical_gaussian_sigma(1.0, e, 1e-5).unwrap()
        );
    }
}

#[test]
fn plugin_noise_scales() {
    // [S0]: the tree noise σ² = M(4 ln(1/δ) + 2ε)/ε² is ρ = M/σ² zCDP, and the classical
    // conversion gives ε' = 0.99984 (ε = 1) and 3.9915 (ε = 4) at δ = 1e-6, independent of M;
    // [S0]: σ² = 343.572 for M = 6, ε = 1. The tight conversion (CKS 2020) is never larger.
    let l = (1e6f64).ln();
    let sigma2 = 6.0 * (4.0 * l + 2.0) / 1.0;
    assert!((sigma2 - 343.572).abs() < 1e-3);
    for (eps, want) in [(1.0, 0.99984), (4.0, 3.9915)] {
        for m in [6.0, 13.0] {
            let rho = m / (m * (4.0 * l + 2.0 * eps) / (eps * eps));
            let classical = zcdp::classical_epsilon(rho, 1e-6);
            assert!((classical - want).abs() < 5e-5, "{classical} vs {want}");
            let tight = zcdp_to_dp(rho, 1e-6).unwrap();
            // ρ-zCDP is the guarantee of a Gaussian with z = 1/√(2ρ); no valid conversion can go
            // below that Gaussian's exact ε.
            let exact = analytic_gaussian_epsilon(1.0 / (2.0 * rho).sqrt(), 1e-6).unwrap();
            assert!(
                exact < tight && tight <= classical,
                "{exact} {tight} {classical}"
            );
        }
    }
    // [S0] CDP DD noise at ε = 1, δ = 1.6e-7, sensitivity 2/750: the paper's classical value
    // 0.015024 is outside the classical theorem's range (ε < 1), which dpfair refuses; the
    // analytic calibration is valid there and needs less noise.
    assert!(classical_gaussian_sigma(2.0 / 750.0, 1.0, 1.6e-7).is_err());
    let paper = 2.0 * (2.0 * (1.25f64 / 1.6e-7).ln()).sqrt() / 750.0;
    assert!((paper - 0.015024).abs() < 1e-6);
    let analytic = analytic_gaussian_sigma(2.0 / 750.0, 1.0, 1.6e-7).unwrap();
    assert!(analytic < paper);
}

#[test]
fn zcdp_tight_conversion_equals_the_best_rdp_order() {
    // A Gaussian release with z = 1 is ρ = 1/2 zCDP; the tight conversion minimises the same
    // expression as the RDP conversion over continuous α, so it lies at or just below the grid
    // minimum [S4] 4.7285, and above the exact analytic value 4.3772.
    let t = zcdp_to_dp(0.5, 1e-5).unwrap();
    assert!(t <= 4.728_507_067_217_623 && t > 4.72, "{t}");
    assert!(t > analytic_gaussian_epsilon(1.0, 1e-5).unwrap());
    assert_eq!(zcdp_to_dp(0.0, 1e-5).unwrap(), 0.0);
    // Monotone in ρ and in δ.
    assert!(zcdp_to_dp(0.1, 1e-5).unwrap() < zcdp_to_dp(0.2, 1e-5).unwrap());
    assert!(zcdp_to_dp(0.1, 1e-6).unwrap() > zcdp_to_dp(0.1, 1e-5).unwrap());
}

#[test]
fn noise_multiplier_search_matches_dp2dp_calibrations() {
    // [S4] "z_SGD (no π release)" and the output-perturbation multipliers (q = 1, T = 1), RDP.
    for (q, t, eps, want) in [
        (0.064, 100, 0.46, 5.526),
        (0.064, 100, 1.0, 2.860),
        (0.0131, 100, 0.5, 1.565),
        (0.0131, 100, 1.0, 1.145),
        (0.0213, 1000, 0.5, 5.281),
        (0.0213, 1000, 1.0, 2.879),
        (1.0, 1, 0.46, 8.2821),
        (1.0, 1, 0.5, 7.6674),
        (1.0, 1, 1.0, 4.0454),
    ] {
        let z = sgm_noise_multiplier(Accountant::Rdp, q, t, eps, 1e-5).unwrap();
        assert!(
            rel(z, want) < 0.005,
            "q={q} T={t} ε={eps}: z = {z}, want {want}"
        );
        // The returned z meets the target and is within the stated tolerance of the smallest.
        assert!(sgm_epsilon(Accountant::Rdp, q, z, t, 1e-5).unwrap() <= eps);
        let smaller = z * (1.0 - 2.0 * accounting::NOISE_MULTIPLIER_TOLERANCE);
        assert!(sgm_epsilon(Accountant::Rdp, q, smaller, t, 1e-5).unwrap() > eps);
    }
}

#[test]
fn noise_multiplier_search_matches_decoupled_gdp_and_moments() {
    // [S3] noise multipliers: Moments (Opacus RDP, ε tolerance 0.01) and GDP, δ = 1e-5. Opacus'
    // search stops within 0.01 of the target ε, so 1% on z.
    for (q, t, eps, moments, gdp) in [
        (0.034, 1500, 2.9, 2.18, 2.0067),
        (0.034, 1500, 8.9, 1.04, 0.9667),
        (0.0683, 750, 2.8, 3.10, 2.8667),
        (0.0683, 1500, 8.8, 1.733, 1.62),
    ] {
        let zr = sgm_noise_multiplier(Accountant::Rdp, q, t, eps, 1e-5).unwrap();
        assert!(rel(zr, moments) < 0.01, "moments: {zr} vs {moments}");
        let zg = sgm_noise_multiplier(Accountant::Gdp, q, t, eps, 1e-5).unwrap();
        assert!(rel(zg, gdp) < 0.01, "gdp: {zg} vs {gdp}");
    }
}

#[test]
fn prv_noise_multiplier_matches_dp_accounting() {
    // [DPA] brentq of PLDAccountant(1e-4) ε(z) = 2.9 (q = 0.034, T = 1500): z = 2.048457.
    // [S3]'s 2.0862 comes from prv-accountant with eps_error = 0.1, which calibrates its *upper*
    // estimate ε + 0.1 and so asks for more noise; dpfair's certified bound is tighter.
    let z = sgm_noise_multiplier(Accountant::Prv, 0.034, 1500, 2.9, 1e-5).unwrap();
    assert!(rel(z, 2.048_457) < 0.01 && z < 2.0862, "{z}");
    assert!(sgm_epsilon(Accountant::Prv, 0.034, z, 1500, 1e-5).unwrap() <= 2.9);
}

/// ln ∫ p^α q^{1−α} for two densities given in log form, by the trapezoid rule on [−a, a].
fn log_renyi_integral(lp: impl Fn(f64) -> f64, lq: impl Fn(f64) -> f64, alpha: f64) -> f64 {
    let (a, n) = (60.0, 600_000);
    let h = 2.0 * a / n as f64;
    let vals: Vec<f64> = (0..=n)
        .map(|i| {
            let x = -a + i as f64 * h;
            alpha * lp(x) + (1.0 - alpha) * lq(x)
        })
        .collect();
    let m = vals.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let s: f64 = vals
        .iter()
        .enumerate()
        .map(|(i, v)| if i == 0 || i == n { 0.5 } else { 1.0 } * (v - m).exp())
        .sum();
    m + (s * h).ln()
}

#[test]
fn substitution_convention_is_conservative() {
    // The exact Rényi divergence of the substitution pair (1−q)N(0,z²)+qN(−1,z²) vs
    // (1−q)N(0,z²)+qN(1,z²) never exceeds the add/remove RDP at z/2 (sensitivity 2C), which is
    // what dpfair charges for replace-one; both coincide at q = 1.
    let ln_norm = |x: f64, m: f64, z: f64| {
        -0.5 * ((x - m) / z).powi(2) - (z * (2.0 * std::f64::consts::PI).sqrt()).ln()
    };
    for (q, z) in [(0.01f64, 1.1f64), (0.1, 0.7), (0.5, 3.0), (1.0, 1.1)] {
        for alpha in [2.0, 8.0, 32.0] {
            let mix = |x: f64, m: f64| {
                if q == 1.0 {
                    ln_norm(x, m, z)
                } else {
                    let a = (1.0 - q).ln() + ln_norm(x, 0.0, z);
                    let b = q.ln() + ln_norm(x, m, z);
                    a.max(b) + (-(a - b).abs()).exp().ln_1p()
                }
            };
            let exact =
                log_renyi_integral(|x| mix(x, -1.0), |x| mix(x, 1.0), alpha) / (alpha - 1.0);
            let charged = rdp::rdp_step(
                q,
                sgm_effective_noise_multiplier(z, Relation::Substitution),
                alpha,
            );
            assert!(
                exact <= charged * (1.0 + 1e-6),
                "q={q} z={z} α={alpha}: {exact} > {charged}"
            );
        }
    }
    let ar = sgm_epsilon(Accountant::Rdp, 0.01, 1.1, 1000, 1e-5).unwrap();
    let sub = sgm_epsilon_for(
        Relation::Substitution,
        Accountant::Rdp,
        0.01,
        1.1,
        1000,
        1e-5,
    )
    .unwrap();
    let ar_half = sgm_epsilon(Accountant::Rdp, 0.01, 0.55, 1000, 1e-5).unwrap();
    assert!(sub > ar && sub == ar_half);
    assert_eq!(Accountant::Prv.relation(), Relation::AddRemove);
}

#[test]
fn composition_theorems() {
    let (e, d) = basic_composition(&[(0.5, 0.0), (0.25, 1e-6), (1.0, 1e-5)]).unwrap();
    assert!((e - 1.75).abs() < 1e-15 && (d - 1.1e-5).abs() < 1e-18);
    // Dwork & Roth Thm 3.20: k = 100, ε = 0.01, δ' = 1e-5:
    // 0.01·√(200 ln 1e5) + 100·0.01·(e^0.01 − 1) = 0.489859… + 0.010050… .
    let (ea, da) = advanced_composition(0.01, 1e-7, 100, 1e-5).unwrap();
    let want = 0.01 * (200.0 * (1e5f64).ln()).sqrt() + 1.0 * 0.01f64.exp_m1();
    assert!((ea - want).abs() < 1e-12 && (da - (1e-5 + 1e-5)).abs() < 1e-18);
    // For large ε per step the basic bound is smaller and is returned.
    let (eb, _) = advanced_composition(2.0, 0.0, 10, 1e-5).unwrap();
    assert_eq!(eb, 20.0);
    assert!(basic_composition(&[(-1.0, 0.0)]).is_err());
}

#[test]
fn bad_inputs_are_errors_naming_the_parameter() {
    let name = |e: PrivacyError| match e {
        PrivacyError::InvalidParameter { name, .. } => name,
        other => panic!("unexpected {other:?}"),
    };
    let acc = Accountant::Rdp;
    assert_eq!(
        name(sgm_epsilon(acc, 0.0, 1.0, 10, 1e-5).unwrap_err()),
        "sampling_rate"
    );
    assert_eq!(
        name(sgm_epsilon(acc, 1.5, 1.0, 10, 1e-5).unwrap_err()),
        "sampling_rate"
    );
    assert_eq!(
        name(sgm_epsilon(acc, f64::NAN, 1.0, 10, 1e-5).unwrap_err()),
        "sampling_rate"
    );
    assert_eq!(
        name(sgm_epsilon(acc, 0.1, 0.0, 10, 1e-5).unwrap_err()),
        "noise_multiplier"
    );
    assert_eq!(
        name(sgm_epsilon(acc, 0.1, 1.0, 0, 1e-5).unwrap_err()),
        "steps"
    );
    assert_eq!(
        name(sgm_epsilon(acc, 0.1, 1.0, 10, 0.0).unwrap_err()),
        "delta"
    );
    assert_eq!(
        name(sgm_epsilon(acc, 0.1, 1.0, 10, 1.0).unwrap_err()),
        "delta"
    );
    assert_eq!(
        name(sgm_noise_multiplier(acc, 0.1, 10, 0.0, 1e-5).unwrap_err()),
        "epsilon"
    );
    assert_eq!(
        name(sgm_noise_multiplier(acc, 0.1, 10, f64::INFINITY, 1e-5).unwrap_err()),
        "epsilon"
    );
    assert_eq!(
        name(analytic_gaussian_epsilon(-1.0, 1e-5).unwrap_err()),
        "noise_multiplier"
    );
    assert_eq!(
        name(analytic_gaussian_sigma(0.0, 1.0, 1e-5).unwrap_err()),
        "sensitivity"
    );
    assert_eq!(name(zcdp_to_dp(-0.1, 1e-5).unwrap_err()), "rho");
    assert_eq!(
        name(rdp_to_dp(&[2.0], &[0.1, 0.2], 1e-5).unwrap_err()),
        "rdp"
    );
    assert_eq!(
        name(rdp_sgm_curve(0.1, 1.0, 1, &[0.5]).unwrap_err()),
        "orders"
    );
}

#[test]
fn default_orders_are_dp_accountings_grid() {
    let o = default_orders();
    assert_eq!(o.len(), 99 + 53 + 4);
    assert!(o.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(
        (o[0], o[98], o[99], o[151], o[155]),
        (1.1, 10.9, 11.0, 63.0, 1024.0)
    );
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// ε is non-increasing in z and non-decreasing in q and T (RDP and GDP).
        #[test]
        fn sgm_epsilon_is_monotone(
            q in 0.001f64..1.0, z in 0.5f64..10.0, t in 1u64..5000, dz in 0.01f64..2.0,
            dq in 0.0f64..0.5, dt in 1u64..1000,
        ) {
            for acc in [Accountant::Rdp, Accountant::Gdp] {
                let e = sgm_epsilon(acc, q, z, t, 1e-5).unwrap();
                prop_assert!(sgm_epsilon(acc, q, z + dz, t, 1e-5).unwrap() <= e * (1.0 + 1e-12));
                prop_assert!(sgm_epsilon(acc, (q + dq).min(1.0), z, t, 1e-5).unwrap() >= e * (1.0 - 1e-12));
                prop_assert!(sgm_epsilon(acc, q, z, t + dt, 1e-5).unwrap() >= e * (1.0 - 1e-12));
            }
        }

        /// The analytic Gaussian σ and ε are inverse to each other.
        #[test]
        fn analytic_gaussian_roundtrip(eps in 0.01f64..30.0, ld in -12.0f64..-2.0) {
            let d = 10f64.powf(ld);
            let s = analytic_gaussian_sigma(1.0, eps, d).unwrap();
            let back = analytic_gaussian_epsilon(s, d).unwrap();
            prop_assert!((back - eps).abs() <= 1e-8 * eps, "{} vs {}", back, eps);
        }

        /// The tight zCDP conversion is never worse than the classical one.
        #[test]
        fn zcdp_tight_below_classical(rho in 1e-6f64..10.0, ld in -12.0f64..-2.0) {
            let d = 10f64.powf(ld);
            prop_assert!(zcdp_to_dp(rho, d).unwrap() <= zcdp::classical_epsilon(rho, d));
        }
    }
}

/// The PRV noise-multiplier search returns a z whose *certified upper bound* meets the target,
/// and z·(1 − 2·tolerance) does not (the search does not over-noise by more than its tolerance,
/// whether it closed with one certified evaluation and the steering's power or with two).
#[test]
fn prv_search_result_meets_the_target_under_the_upper_bound() {
    use dpfair_privacy::accounting::NOISE_MULTIPLIER_TOLERANCE as TOL;
    // (0.01, 1000, 1.0): the Python package's test; (0.0625, 1500, 1.0): the decoupled
    // classifier's base learner on an Adult group (BENCHMARKS.md); then few steps at large q,
    // large ε, and many steps.
    for (q, t, eps) in [
        (0.034, 1500u64, 2.9),
        (0.064, 100, 0.5),
        (0.01, 2000, 1.0),
        (0.01, 1000, 1.0),
        (0.0625, 1500, 1.0),
        (0.1, 100, 2.0),
        (0.5, 20, 4.0),
        (0.02, 3000, 8.0),
        (0.004, 50_000, 3.0),
    ] {
        let z = sgm_noise_multiplier(Accountant::Prv, q, t, eps, 1e-5).unwrap();
        let at = sgm_prv_bounds(q, z, t, 1e-5).unwrap();
        assert!(at.upper <= eps, "q={q} T={t}: upper {} > {eps}", at.upper);
        let below = sgm_prv_bounds(q, z * (1.0 - 2.0 * TOL), t, 1e-5).unwrap();
        assert!(
            below.upper > eps,
            "q={q} T={t}: z = {z} is not the smallest"
        );
    }
}
