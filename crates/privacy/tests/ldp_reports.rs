//! Every local report's every output coordinate varies (OpenDP #2708: a last bit that was never
//! randomised), and the Hadamard report is drawn in constant time from a fixed number of random
//! words (`docs/privacy.md#timing`).
//!
//! "Varies" means: over R reports of one fixed input, the coordinate takes both values (a bit,
//! a sign). A correct randomiser fails this only when R independent draws all agree, with
//! probability below 2·max(p, 1 − p)^R for the per-draw probability p of one value; each case
//! below states R and that bound (all below 10⁻¹⁰⁰).

use dpfair_privacy::Noise;
use dpfair_privacy::mechanisms::{
    HadamardResponse, LocalLaplace, PrivUnitG, RandomizedResponse, hadamard_sign,
};
use rand::Rng;

/// Both values of each of the log₂K row bits and of the reported bit, for every cell, at ε = 1
/// and ε = 4. R = 20,000: a row bit is a fair coin (bound 2^−19,999); the bit b for cell 0
/// (H\[r, 0\] = +1 for every r) varies only by its flip, probability ≥ 1/(e^4 + 1) ≈ 0.018
/// (bound 2·0.982^20,000 ≈ 10⁻¹⁵⁸).
#[test]
fn every_hadamard_report_bit_varies() {
    let mut noise = Noise::seeded(2708);
    for epsilon in [1.0, 4.0] {
        let hr = HadamardResponse::new(6, epsilon).unwrap();
        let bits = hr.rows().trailing_zeros();
        for cell in 0..6 {
            let (mut row_or, mut row_and) = (0u32, u32::MAX);
            let mut seen = [false; 2];
            for _ in 0..20_000 {
                let (r, b) = hr.report(&mut noise, cell).unwrap();
                row_or |= r;
                row_and &= r;
                seen[usize::from(b)] = true;
            }
            let mask = (1u32 << bits) - 1;
            assert_eq!(
                row_or & mask,
                mask,
                "ε {epsilon}, cell {cell}: a row bit never 1"
            );
            assert_eq!(
                row_and & mask,
                0,
                "ε {epsilon}, cell {cell}: a row bit never 0"
            );
            assert!(
                seen[0] && seen[1],
                "ε {epsilon}, cell {cell}: b never varies"
            );
        }
    }
}

/// k-ary randomized response: every category is reported for every input. R = 20,000 at k = 5,
/// ε = 2: each other category has probability 1/(e² + 4) ≈ 0.088 (bound 5·0.912^20,000).
#[test]
fn every_randomized_response_category_occurs() {
    let mut noise = Noise::seeded(2709);
    let rr = RandomizedResponse::new(5, 2.0).unwrap();
    for value in 0..5 {
        let mut seen = [false; 5];
        for _ in 0..20_000 {
            seen[rr.respond(&mut noise, value).unwrap()] = true;
        }
        assert!(seen.iter().all(|s| *s), "input {value}: {seen:?}");
    }
}

/// Real-valued reports (the local Laplace report of `dpfair ldp --mechanism laplace` and
/// PrivUnitG): every coordinate takes both signs, including the last, on an input whose
/// coordinates are all 0 (Laplace: each sign has probability < ½ but > 0.4 at scale 4/ε with
/// ε = 1, R = 2,000, bound 2·0.6^2,000) or all at the clip (PrivUnitG: the released candidate's
/// coordinates are symmetric Gaussians times ±σ, R = 2,000, bound 2·2^−2,000).
#[test]
fn every_real_report_coordinate_takes_both_signs() {
    let mut noise = Noise::seeded(2710);
    let d = 7;
    let check = |name: &str, reports: &[Vec<f64>]| {
        for j in 0..d {
            let pos = reports.iter().any(|r| r[j] > 0.0);
            let neg = reports.iter().any(|r| r[j] < 0.0);
            assert!(pos && neg, "{name}: coordinate {j} never changes sign");
        }
    };
    let lap = LocalLaplace::new(4.0, 1.0).unwrap();
    let reports: Vec<Vec<f64>> = (0..2_000)
        .map(|_| lap.report(&mut noise, &[0.0; 7]))
        .collect();
    check("local Laplace", &reports);
    let pu = PrivUnitG::new(1.0, 1.0).unwrap();
    let g = [1.0 / (d as f64).sqrt(); 7];
    let reports: Vec<Vec<f64>> = (0..2_000)
        .map(|_| pu.report(&mut noise, &g).unwrap())
        .collect();
    check("PrivUnitG", &reports);
}

/// The Hadamard report consumes exactly two 64-bit words whatever the cell: from the same stream
/// state, every cell gets the same row and the same flip (b XOR H\[r, c\]), and the stream is left
/// in the same state (the next word agrees). A variable number of draws (a rejection loop) or a
/// branch on the cell that draws differently fails this.
#[test]
fn hadamard_report_draws_a_fixed_number_of_words() {
    for epsilon in [0.5, 1.0, 6.0] {
        let hr = HadamardResponse::new(12, epsilon).unwrap();
        for seed in 0..200u64 {
            let outcomes: Vec<(u32, bool, u64)> = (0..12)
                .map(|cell| {
                    let mut noise = Noise::seeded(seed);
                    let (r, b) = hr.report(&mut noise, cell).unwrap();
                    let flip = b ^ hadamard_sign(r.into(), cell as u64);
                    (r, flip, noise.next_u64())
                })
                .collect();
            let mut two_words = Noise::seeded(seed);
            two_words.next_u64();
            two_words.next_u64();
            let after = two_words.next_u64();
            for (cell, o) in outcomes.iter().enumerate() {
                assert_eq!(*o, outcomes[0], "ε {epsilon}, seed {seed}, cell {cell}");
                assert_eq!(o.2, after, "ε {epsilon}, seed {seed}: not two words");
            }
        }
    }
}

/// The constant-time flip's probability p′ is at least 1/(e^ε + 1) (so (1 − p′)/p′ ≤ e^ε:
/// ε-LDP) and above it by less than 2^−59 (plus the f64 rounding of the reference, 1e-15
/// relative); its empirical frequency over 10⁶ reports lies within 6 binomial standard
/// deviations of p′ (a two-sided normal tail of 2·10⁻⁹ per ε).
#[test]
fn hadamard_flip_probability_is_outward_and_tight() {
    let mut noise = Noise::seeded(2711);
    for epsilon in [0.1, 1.0, 3.0, 8.0] {
        let hr = HadamardResponse::new(4, epsilon).unwrap();
        let exact = 1.0 / (epsilon.exp() + 1.0);
        let p = hr.flip_probability();
        assert!(p >= exact * (1.0 - 1e-15), "ε {epsilon}: {p} < {exact}");
        assert!(p - exact < 2f64.powi(-59) + 1e-15 * exact, "ε {epsilon}");
        assert!((1.0 - p) / p <= epsilon.exp() * (1.0 + 1e-15));
        let n = 1_000_000u32;
        let flips = (0..n)
            .filter(|_| {
                let (r, b) = hr.report(&mut noise, 3).unwrap();
                b != hadamard_sign(r.into(), 3)
            })
            .count() as f64;
        let sd = (p * (1.0 - p) / f64::from(n)).sqrt();
        assert!((flips / f64::from(n) - p).abs() < 6.0 * sd, "ε {epsilon}");
    }
}
