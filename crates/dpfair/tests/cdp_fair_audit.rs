//! Empirical privacy audits of CDP-Fair's releases (privacy crate's `audit`): the π̃ release, one
//! functional release evaluated at a fixed point, CDP-Fair end to end on a small data set
//! (half-line and point events of τ̃); a redraw-per-evaluation variant (the authors' code,
//! `docs/deviations.md#fdp-fair-gp-sample-paths-drawn-once`) must be caught, and so must the paper's S2 on the counterexample of
//! `docs/deviations.md#fdp-fair-privacy-of-the-threshold-release` (τ̃ private
//! for half-line events only), which the strict S2 passes.
//!
//! Each audit returns a lower bound on ε valid with probability ≥ 1 − 0.01: for a correct
//! mechanism `epsilon_lower ≤ ε` fails with probability ≤ 0.01 (privacy crate's audit docs).

use dpfair::cdp_fair::{Config, DdFloor, fit};
use dpfair::data::{Dataset, Groups, Target};
use dpfair::plugin::RffBasis;
use dpfair::plugin::kernel::Bandwidth;
use dpfair::plugin::release::{
    Calibration, KernelSums, PiRelease, S1Accounting, S1Plan, gaussian_release_vec,
};
use dpfair::plugin::split::random_split;
use dpfair::plugin::threshold::{ScoreSet, crossing_utility, sweep_threshold, tau_grid};
use dpfair::privacy::audit::audit;
use dpfair::privacy::mechanisms::exponential_mechanism;
use dpfair::privacy::{Budget, Ledger, Noise};
use ndarray::Array2;

const EPS: f64 = 1.0;
const DELTA: f64 = 1e-5;
const CONFIDENCE_ALPHA: f64 = 0.01;

fn ledger() -> Ledger {
    Ledger::new(Budget::approx(EPS, DELTA).unwrap())
}

fn plan(pi: PiRelease) -> S1Plan {
    S1Plan {
        epsilon: EPS,
        delta: DELTA,
        accounting: S1Accounting::Strict,
        pi,
        c_k: 1.0,
        label_prefix: String::new(),
    }
}

/// 20 training rows; row 0 differs between the two neighbours (`x0` vs `x1`, or its group).
fn training_pair(
    x0: [f64; 2],
    x1: [f64; 2],
    flip_group: bool,
) -> [(Array2<f64>, Vec<u32>, Vec<u8>); 2] {
    let n = 20;
    let base = Array2::from_shape_fn((n, 2), |(i, j)| ((i * 13 + j * 7) % 20) as f64 / 20.0);
    let a: Vec<u32> = (0..n).map(|i| (i % 2) as u32).collect();
    let y: Vec<u8> = (0..n).map(|i| ((i / 2) % 2) as u8).collect();
    let mut d = [(base.clone(), a.clone(), y.clone()), (base, a, y)];
    for (k, x) in [x0, x1].into_iter().enumerate() {
        d[k].0[[0, 0]] = x[0];
        d[k].0[[0, 1]] = x[1];
        d[k].1[0] = 1;
        d[k].2[0] = 1;
    }
    if flip_group {
        d[1].1[0] = 0;
    }
    d
}

#[test]
fn pi_release_passes_the_audit() {
    let basis = RffBasis::new(2, 0.3, 4, 1).unwrap();
    let data = training_pair([0.5, 0.5], [0.5, 0.5], true);
    let sums: Vec<KernelSums> = data
        .iter()
        .map(|(x, a, y)| KernelSums::compute(&basis, x.view(), a, y).unwrap())
        .collect();
    let report = audit(
        &mut Noise::seeded(1),
        4_000,
        DELTA,
        CONFIDENCE_ALPHA,
        |input, noise| {
            let est = sums[input]
                .release(&plan(PiRelease::Private), &mut ledger(), noise)
                .unwrap();
            Ok(est.pi[1])
        },
    )
    .unwrap();
    assert!(report.epsilon_lower <= EPS, "{report:?}");
}

/// A point `x1` with `φ(x0)·φ(x1) ≈ −1` in a one-frequency basis: moving a record from `x0` to `x1`
/// moves the function value at `x0` by the full sensitivity `2h^{−d}/n`.
fn worst_pair(basis: &RffBasis, x0: [f64; 2]) -> [f64; 2] {
    let phi0 = basis.features(&x0);
    (0..4000)
        .map(|k| [x0[0] + k as f64 * 5e-4, x0[1]])
        .min_by(|p, q| {
            let dot = |x: &[f64; 2]| {
                basis
                    .features(x)
                    .iter()
                    .zip(&phi0)
                    .map(|(a, b)| a * b)
                    .sum::<f64>()
            };
            dot(p).total_cmp(&dot(q))
        })
        .unwrap()
}

/// The released numerator `G̃_1` evaluated at `x0`, averaged over `redraws` independent releases
/// (`redraws = 1`: the released object, drawn once; `> 1`: the authors' fresh noise at every
/// evaluation, each use claiming the cost of one release).
fn functional_audit(redraws: usize, trials: usize) -> f64 {
    let basis = RffBasis::new(2, 0.3, 1, 3).unwrap();
    let x0 = [0.5, 0.5];
    let x1 = worst_pair(&basis, x0);
    let data = training_pair(x0, x1, false);
    let sums: Vec<KernelSums> = data
        .iter()
        .map(|(x, a, y)| KernelSums::compute(&basis, x.view(), a, y).unwrap())
        .collect();
    let point = Array2::from_shape_vec((1, 2), x0.to_vec()).unwrap();
    audit(
        &mut Noise::seeded(2),
        trials,
        DELTA,
        CONFIDENCE_ALPHA,
        |input, noise| {
            let mut total = 0.0;
            for _ in 0..redraws {
                let est = sums[input]
                    .release(&plan(PiRelease::Skip), &mut ledger(), noise)
                    .unwrap();
                let numerator = &est.kernel().expect("kernel estimate").numerator[1];
                total += basis.evaluate(&[numerator], point.view()).unwrap()[[0, 0]];
            }
            Ok(total / redraws as f64)
        },
    )
    .unwrap()
    .epsilon_lower
}

#[test]
fn functional_release_evaluated_at_a_fixed_point_passes_the_audit() {
    let e = functional_audit(1, 4_000);
    eprintln!("single ε_lower = {e}");
    assert!(e <= EPS, "ε_lower = {e}");
}

/// Redrawing the noise at each of 64 evaluations (the authors' pipeline redraws per evaluation
/// set, fold and α value: 2 sets × 2 folds × 20 α values = 80) while charging one release: the
/// averaged value carries 1/8 of the noise, a noise multiplier ≈ 0.66 at this point (true
/// ε ≈ 3 at the best threshold event); with 500 estimation samples the expected ε_lower is
/// ≈ 1.9 (`audit::expected_lower_bound`), so the auditor proves ε > 1.
#[test]
fn redraw_per_evaluation_is_caught() {
    let e = functional_audit(64, 1_000);
    eprintln!("redraw ε_lower = {e}");
    assert!(e > EPS, "ε_lower = {e}: the redraw variant was not caught");
}

/// Rows of the small data set of the end-to-end audit.
const N_SMALL: usize = 80;

/// A small data set and its neighbour: one **calibration** record (S2's input) changes group and
/// features.
fn small_pair(n: usize, split_seed: u64) -> [Dataset; 2] {
    let (_, cal) = random_split(n, n / 2, split_seed);
    let changed = cal[0];
    let make = |change: bool| {
        let mut x =
            Array2::from_shape_fn((n, 2), |(i, j)| ((i * 17 + j * 29) % n) as f64 / n as f64);
        let mut a: Vec<u32> = (0..n).map(|i| u32::from(i % 3 == 0)).collect();
        let y: Vec<u8> = (0..n)
            .map(|i| u8::from(x[[i, 0]] + x[[i, 1]] > 0.8 + 0.3 * a[i] as f64))
            .collect();
        if change {
            a[changed] = 1 - a[changed];
            x[[changed, 0]] = 1.0 - x[[changed, 0]];
        }
        Dataset {
            features: x,
            feature_names: vec!["x1".into(), "x2".into()],
            groups: Some(Groups {
                codes: a,
                names: vec!["0".into(), "1".into()],
            }),
            target: Some(Target::Binary(y)),
        }
    };
    [make(false), make(true)]
}

/// The most frequent value of `draws`.
fn mode(draws: &[f64]) -> f64 {
    let mut sorted = draws.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut best = (0, sorted[0]);
    let mut run = 0;
    for (i, v) in sorted.iter().enumerate() {
        run = if i > 0 && sorted[i - 1] == *v {
            run + 1
        } else {
            1
        };
        if run > best.0 {
            best = (run, *v);
        }
    }
    best.1
}

/// CDP-Fair (strict) end to end, output projected to `τ̃` (half-line events, the paper's Prop. 4)
/// and to the indicator of its most frequent value on the first data set (a point event, which
/// the paper's Gaussian-shift rule does not cover, `docs/deviations.md#fdp-fair-privacy-of-the-threshold-release`; the value is taken from a pilot run with
/// other seeds, so the event does not depend on the audited samples). Public parameters (split,
/// basis, bandwidth, DD floor, a 101-point grid to keep the test fast) are fixed, as they are
/// public inputs. Power is low here: the spread of `τ̃` comes mostly from S1's noise (the same
/// law on both inputs), so the sharp test of S2 is `docs/deviations.md#fdp-fair-privacy-of-the-threshold-release` pair below, on fixed scores.
#[test]
fn cdp_fair_end_to_end_passes_the_audit_on_half_lines_and_points() {
    let split_seed = 2;
    let data = small_pair(N_SMALL, split_seed);
    // The smallest calibration group over both data sets: the tightest valid public floor, so
    // that the claimed sensitivity 2/m is close to the real one and the audit has power.
    let (_, cal) = random_split(N_SMALL, N_SMALL / 2, split_seed);
    let min_group = data
        .iter()
        .flat_map(|d| {
            let codes = &d.groups.as_ref().unwrap().codes;
            let ones = cal.iter().filter(|&&i| codes[i] == 1).count();
            [ones, cal.len() - ones]
        })
        .min()
        .unwrap();
    let config = Config {
        alpha: 0.05,
        epsilon: EPS,
        delta: Some(DELTA),
        bandwidth: Some(Bandwidth::Fixed { h: 0.3 }),
        n_frequencies: 8,
        basis_seed: Some(1),
        split_seed: Some(split_seed),
        dd_floor: DdFloor::Public { min_group },
        tau_grid: 101,
        ..Config::default()
    };
    let tau = |input: usize, noise: &mut Noise| {
        fit(&config, &data[input], &mut ledger(), noise)
            .unwrap()
            .folds[0]
            .rule
            .tau
    };
    let mut pilot = Noise::seeded(99);
    let pilot: Vec<f64> = (0..500).map(|_| tau(0, &mut pilot)).collect();
    let point = mode(&pilot);
    let half_lines = audit(
        &mut Noise::seeded(3),
        6_000,
        DELTA,
        CONFIDENCE_ALPHA,
        |input, noise| Ok(tau(input, noise)),
    )
    .unwrap();
    assert!(half_lines.epsilon_lower <= EPS, "{half_lines:?}");
    let points = audit(
        &mut Noise::seeded(4),
        6_000,
        DELTA,
        CONFIDENCE_ALPHA,
        |input, noise| Ok(f64::from(u8::from(tau(input, noise) == point))),
    )
    .unwrap();
    eprintln!("{half_lines:?}\nτ̃ = {point}: {points:?}");
    assert!(points.epsilon_lower <= EPS, "τ̃ = {point}: {points:?}");
}

/// The counterexample of `docs/deviations.md#fdp-fair-privacy-of-the-threshold-release`, as calibration scores: group 1 has 10 scores at 0.5, one at 0.3
/// (0.4 in the neighbour: one record's features changed) and 89 at −0.5; group 0 has 100 at 0.9.
/// `D̂D = 0.11` on `(0, 0.3]` (`(0, 0.4]` in the neighbour) and `0.10` up to 0.5; α = 0.1.
fn h11_scores() -> [ScoreSet; 2] {
    let scores = |moved: f64| {
        let z1 = [vec![0.5; 10], vec![moved], vec![-0.5; 89]].concat();
        ScoreSet::new(vec![0.9; 100], z1, [100.0, 100.0])
    };
    [scores(0.3), scores(0.4)]
}

/// The paper's S2 (`--accounting paper`) is not `(ε, δ)`-DP for all events: `τ̃ = 0.3` whenever
/// `w̌ ∈ (−0.01, 0]` (probability ≈ 5%), never in the neighbour. The auditor, fed the indicator
/// of `{τ̃ = 0.3}`, proves ε > 1 (paper mode therefore records the location of `τ̃` as ε = ∞).
#[test]
fn paper_tau_release_leaks_through_point_events() {
    let sets = h11_scores();
    let report = audit(
        &mut Noise::seeded(4),
        10_000,
        DELTA,
        CONFIDENCE_ALPHA,
        |input, noise| {
            let w = gaussian_release_vec(
                &mut ledger(),
                noise,
                "S2 shift",
                2.0 / 100.0,
                Calibration::Analytic {
                    epsilon: EPS,
                    delta: DELTA,
                },
                &[0.0],
            )
            .unwrap()[0];
            let tau = sweep_threshold(&sets[input], w, 0.1).rule.tau;
            Ok(f64::from(u8::from(tau == 0.3)))
        },
    )
    .unwrap();
    assert!(report.epsilon_lower > EPS, "{report:?}");
}

/// A projection of `τ̃` (given the point of interest) to the audited real number.
type Projection = fn(f64, f64) -> f64;

/// The strict S2 (exponential mechanism over a public grid, [`crossing_utility`], Δ = 2/100) on
/// the same counterexample passes, for the half-lines, for the grid points between the two
/// positions of the moved score (where the curves differ) and for the single grid point just
/// above 0.3.
#[test]
fn strict_tau_release_passes_the_point_event_audit() {
    let sets = h11_scores();
    let grid = tau_grid(1.0, 201);
    let utility: Vec<Vec<f64>> = sets
        .iter()
        .map(|s| grid.iter().map(|&t| crossing_utility(s, t, 0.1)).collect())
        .collect();
    let select = |input: usize, noise: &mut Noise| {
        exponential_mechanism(
            &mut ledger(),
            noise,
            "S2",
            &utility[input],
            2.0 / 100.0,
            EPS,
        )
        .map(|j| grid[j])
    };
    let point = grid.iter().copied().find(|&t| t > 0.3).unwrap();
    let projections: [(&str, Projection); 3] = [
        ("τ̃", |t, _| t),
        ("τ̃ ∈ (0.3, 0.4]", |t, _| {
            f64::from(u8::from(t > 0.3 && t <= 0.4))
        }),
        ("τ̃ = first grid point above 0.3", |t, p| {
            f64::from(u8::from(t == p))
        }),
    ];
    for (k, (name, project)) in projections.into_iter().enumerate() {
        let report = audit(
            &mut Noise::seeded(10 + k as u64),
            10_000,
            DELTA,
            CONFIDENCE_ALPHA,
            |input, noise| Ok(project(select(input, noise)?, point)),
        )
        .unwrap();
        eprintln!("{name}: {report:?}");
        assert!(report.epsilon_lower <= EPS, "{name}: {report:?}");
    }
    // Power: the same interval projection catches a variant that understates the sensitivity
    // 20× (Δ = 0.001: the utility gap 0.01 on (0.3, 0.4] is a likelihood ratio e^5).
    let report = audit(
        &mut Noise::seeded(20),
        2_000,
        DELTA,
        CONFIDENCE_ALPHA,
        |input, noise| {
            let j = exponential_mechanism(&mut ledger(), noise, "S2", &utility[input], 0.001, EPS)?;
            Ok(f64::from(u8::from(grid[j] > 0.3 && grid[j] <= 0.4)))
        },
    )
    .unwrap();
    assert!(report.epsilon_lower > EPS, "{report:?}");
}
