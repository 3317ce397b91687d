//! Distribution tests of every continuous release path of the privacy crate (in the style of
//! Tumult Analytics' noise tests): 20,000 releases of a fixed value with a fixed seed, the noise
//! (release − value) tested by Kolmogorov–Smirnov against the law the path claims, and the same
//! sample against the law at the scale × 0.7 and × 1.3, which must be rejected (power check).
//!
//! Level 0.01: a correct path fails a given seed with probability 1%; the seeds are fixed, so
//! each run is deterministic. Power: at n = 20,000 the KS critical value at level 0.01 is
//! 1.63/√n ≈ 0.0115, while a 30% scale error moves the CDF by ≈ 0.05 (Laplace: sup |F_b − F_{0.7b}|
//! = ½(e^{−t/1.0} − e^{−t/0.7}) at its maximum ≈ 0.05; Gaussian ≈ 0.06), four times more.
//! The paths release on a 2^−k lattice with σ (or b) rounded up by the lattice's effective
//! sensitivity, below 0.1% here, far below the test's resolution. Discrete outputs (histogram
//! counts, randomised response, the samplers' integers) are tested by chi-square in
//! `samplers_gof.rs` and `mechanisms.rs`.

use dpfair_privacy::accounting::Accountant;
use dpfair_privacy::audit::distribution::{ScaleCheck, gaussian_cdf, laplace_cdf, scale_check};
use dpfair_privacy::mechanisms::{Gaussian, Laplace, LocalLaplace, SubsampledGaussianRun};
use dpfair_privacy::{Budget, Ledger, Noise};

const N: usize = 20_000;
const LEVEL: f64 = 0.01;
const OFF: f64 = 0.3;
const VALUE: f64 = 3.25;

fn check(name: &str, c: ScaleCheck) {
    eprintln!(
        "{name}: p = {:.3} (claimed), {:.2e} (× 0.7), {:.2e} (× 1.3)",
        c.claimed.p_value, c.smaller.p_value, c.larger.p_value
    );
    assert!(c.fits(), "{name}: the claimed law is rejected: {c:?}");
    assert!(
        c.has_power(),
        "{name}: a 30% scale error is not rejected: {c:?}"
    );
}

#[test]
fn laplace_scalar_and_vector_paths() {
    let l = Laplace::from_epsilon(2.0, 0.8).unwrap();
    let mut noise = Noise::seeded(101);
    let scalar: Vec<f64> = (0..N)
        .map(|_| {
            l.release(&mut Ledger::unlimited(), &mut noise, "t", VALUE)
                .unwrap()
                - VALUE
        })
        .collect();
    check(
        "Laplace::release",
        scale_check(&scalar, l.scale(), OFF, LEVEL, laplace_cdf).unwrap(),
    );
    let mut noise = Noise::seeded(102);
    let vector: Vec<f64> = l
        .release_vec(&mut Ledger::unlimited(), &mut noise, "t", &vec![VALUE; N])
        .unwrap()
        .into_iter()
        .map(|v| v - VALUE)
        .collect();
    check(
        "Laplace::release_vec",
        scale_check(&vector, l.scale(), OFF, LEVEL, laplace_cdf).unwrap(),
    );
}

#[test]
fn gaussian_calibrations() {
    let paths = [
        (
            "Gaussian::analytic",
            Gaussian::analytic(1.0, 1.0, 1e-5).unwrap(),
        ),
        (
            "Gaussian::classical",
            Gaussian::classical(1.0, 0.5, 1e-5).unwrap(),
        ),
        (
            "Gaussian::from_sigma",
            Gaussian::from_sigma(0.5, 1.7).unwrap(),
        ),
        (
            "Gaussian::from_zcdp",
            Gaussian::from_zcdp(1.0, 0.5).unwrap(),
        ),
    ];
    for (k, (name, g)) in paths.into_iter().enumerate() {
        let mut noise = Noise::seeded(200 + k as u64);
        let draws: Vec<f64> = g
            .release_vec(&mut Ledger::unlimited(), &mut noise, "t", &vec![VALUE; N])
            .unwrap()
            .into_iter()
            .map(|v| v - VALUE)
            .collect();
        check(
            name,
            scale_check(&draws, g.sigma(), OFF, LEVEL, gaussian_cdf).unwrap(),
        );
    }
}

#[test]
fn dp_sgd_step_noise() {
    let (z, clip) = (1.1, 0.7);
    let mut ledger = Ledger::new(Budget::approx(f64::INFINITY, 1e-5).unwrap());
    let mut run =
        SubsampledGaussianRun::start(&mut ledger, "t", 0.1, z, clip, 1, Accountant::Rdp).unwrap();
    let mut sum = vec![VALUE; N];
    run.add_noise(&mut Noise::seeded(301), &mut sum).unwrap();
    let draws: Vec<f64> = sum.iter().map(|v| v - VALUE).collect();
    check(
        "SubsampledGaussianRun::add_noise",
        scale_check(&draws, z * clip, OFF, LEVEL, gaussian_cdf).unwrap(),
    );
}

#[test]
fn local_laplace_reports() {
    let l = LocalLaplace::new(4.0, 2.0).unwrap();
    let mut noise = Noise::seeded(401);
    let draws: Vec<f64> = l
        .try_report(&mut noise, &vec![VALUE; N])
        .unwrap()
        .into_iter()
        .map(|v| v - VALUE)
        .collect();
    check(
        "LocalLaplace::try_report",
        scale_check(&draws, 4.0 / 2.0, OFF, LEVEL, laplace_cdf).unwrap(),
    );
}
