//! The barycenter LP (Xian et al., Algorithm 1, line 14): the worked example of `docs/reference-values.md#fair-regression`, the special cases, both back
//! ends against each other on random instances, and the Law School k = 180 instance against the
//! objective values HiGHS reported for it (bench/fair_regression_law_k180.json).

use dpfair::fair_regression::lp::{
    Backend, BarycenterProblem, SolveOptions, SolvedBy, solve, solve_path, validate,
};
use dpfair::fair_regression::transport::{cdf, max_pairwise_ks, monotone_coupling, w2_squared};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn opts(backend: Backend, fast_paths: bool) -> SolveOptions {
    SolveOptions {
        backend,
        fast_paths,
        ..SolveOptions::default()
    }
}

fn worked_example(alpha: f64) -> BarycenterProblem {
    BarycenterProblem::new(
        vec![vec![0.5, 0.25, 0.25], vec![0.0, 0.0, 1.0]],
        vec![2.0 / 3.0, 1.0 / 3.0],
        alpha,
    )
    .unwrap()
}

fn assert_close(a: &[f64], b: &[f64], tol: f64) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= tol, "{a:?} vs {b:?}");
    }
}

/// `docs/reference-values.md#fair-regression`: values 0.583333, 0.333333, 0.083333, 0 and the unique targets at α ∈ {0, 0.25, 0.5},
/// with every back end, with and without fast paths.
#[test]
fn worked_example_all_backends() {
    let cases: [(f64, f64, [[f64; 3]; 2]); 4] = [
        (0.0, 7.0 / 12.0, [[0.0, 0.75, 0.25], [0.0, 0.75, 0.25]]),
        (0.25, 1.0 / 3.0, [[0.25, 0.5, 0.25], [0.0, 0.5, 0.5]]),
        (0.5, 1.0 / 12.0, [[0.5, 0.25, 0.25], [0.0, 0.25, 0.75]]),
        (1.0, 0.0, [[0.5, 0.25, 0.25], [0.0, 0.0, 1.0]]),
    ];
    for backend in [Backend::Structured, Backend::Clarabel] {
        for fast in [true, false] {
            for (alpha, value, targets) in cases {
                let sol = solve(&worked_example(alpha), &opts(backend, fast)).unwrap();
                assert!(
                    (sol.value - value).abs() < 1e-7,
                    "{backend:?} fast={fast} α={alpha}: {} vs {value}",
                    sol.value
                );
                for (q, t) in sol.targets.iter().zip(targets) {
                    assert_close(q, &t, 1e-6);
                }
                assert!(sol.max_ks <= alpha + 1e-9);
            }
        }
    }
    // `docs/reference-values.md#fair-regression`, α = 0: π_1 = [[0,0,0],[0,0,0],[0,0.75,0.25]].
    let sol = solve(&worked_example(0.0), &SolveOptions::default()).unwrap();
    assert_eq!(sol.solved_by, SolvedBy::ClosedForm);
    assert_eq!(sol.couplings[1].entries, vec![(2, 1, 0.75), (2, 2, 0.25)]);
}

/// A random instance: m groups, k bins, some empty bins, weights not normalized.
fn random_problem(rng: &mut ChaCha8Rng, m: usize, k: usize, alpha: f64) -> BarycenterProblem {
    let pmfs = (0..m)
        .map(|a| {
            let shift = rng.random_range(0..k / 2 + 1);
            let mut p: Vec<f64> = (0..k)
                .map(|j| {
                    if j < shift || rng.random::<f64>() < 0.2 {
                        0.0
                    } else {
                        rng.random::<f64>() + 0.01 * a as f64
                    }
                })
                .collect();
            if p.iter().all(|x| *x == 0.0) {
                p[k - 1] = 1.0;
            }
            let s: f64 = p.iter().sum();
            p.iter().map(|x| x / s).collect()
        })
        .collect();
    let weights = (0..m).map(|_| rng.random::<f64>() + 0.05).collect();
    BarycenterProblem::new(pmfs, weights, alpha).unwrap()
}

/// The special cases and cross-checks of the back ends on random instances (k ≤ 12, m ≤ 4):
/// both back ends agree on the value (to 1e-7 relative, the interior-point tolerance plus
/// polishing), the α = 0 closed form equals both LPs, the value is nonincreasing in α and 0 exactly
/// from the largest pairwise KS distance on, and the α = 0 value exceeds the free-support bound by
/// at most Σw/4.
#[test]
fn random_instances_backends_agree_and_special_cases_hold() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for trial in 0..24 {
        let m = 2 + trial % 3;
        let k = 3 + (trial * 7) % 10;
        let base = random_problem(&mut rng, m, k, 0.0);
        let unfair = base.unfairness();
        let alphas = [0.0, 0.3 * unfair, 0.7 * unfair, unfair, 1.0];
        let mut prev = f64::INFINITY;
        for &alpha in &alphas {
            let p = BarycenterProblem::new(base.pmfs.clone(), base.weights.clone(), alpha).unwrap();
            let fast = solve(&p, &SolveOptions::default()).unwrap();
            let ipm = solve(&p, &opts(Backend::Structured, false)).unwrap();
            let clar = solve(&p, &opts(Backend::Clarabel, false)).unwrap();
            let scale = 1.0 + fast.value;
            assert!(
                (fast.value - clar.value).abs() < 1e-7 * scale,
                "trial {trial} α={alpha}: {} vs clarabel {}",
                fast.value,
                clar.value
            );
            assert!(
                (ipm.value - clar.value).abs() < 1e-7 * scale,
                "trial {trial} α={alpha}: ipm {} vs clarabel {}",
                ipm.value,
                clar.value
            );
            for s in [&fast, &ipm, &clar] {
                validate(&p, s, 1e-9).unwrap();
            }
            assert!(fast.value <= prev + 1e-9, "value increased in α");
            prev = fast.value;
            if alpha >= unfair {
                assert_eq!(fast.value, 0.0);
                assert_eq!(fast.solved_by, SolvedBy::Trivial);
            } else {
                if alpha > 0.0 {
                    // The per-level decomposition answered (no fallback to a back end).
                    assert_eq!(
                        fast.solved_by,
                        SolvedBy::Levelwise,
                        "trial {trial} α={alpha}"
                    );
                }
                assert!(clar.value > 1e-9, "value 0 below the inputs' unfairness");
            }
        }
        // α = 0 against the free-support barycenter (quantile average without rounding).
        let free = free_support_value(&base);
        let v0 = solve(&base, &SolveOptions::default()).unwrap().value;
        let w: f64 = base.weights.iter().sum();
        assert!(
            v0 >= free - 1e-9 && v0 - free <= w / 4.0 + 1e-9,
            "{v0} vs free {free}"
        );
    }
}

/// The per-level decomposition (default) against the structured interior point (no fast paths) on
/// larger random instances (k = 40 and 60, m = 2..4, empty bins, unequal weights) at α from tight
/// to loose: the same value to 1e-7 relative (the IPM's tolerance 1e-10 plus polishing), every
/// answer from the decomposition (its monotonicity never fails), and valid solutions.
#[test]
fn levelwise_matches_the_interior_point_on_larger_instances() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for trial in 0..6 {
        let (m, k) = (2 + trial % 3, if trial < 3 { 40 } else { 60 });
        let base = random_problem(&mut rng, m, k, 0.0);
        let unfair = base.unfairness();
        for frac in [0.02, 0.2, 0.6, 0.95] {
            let p = BarycenterProblem::new(base.pmfs.clone(), base.weights.clone(), frac * unfair)
                .unwrap();
            let fast = solve(&p, &SolveOptions::default()).unwrap();
            let ipm = solve(&p, &opts(Backend::Structured, false)).unwrap();
            assert_eq!(fast.solved_by, SolvedBy::Levelwise, "trial {trial}");
            assert!(
                (fast.value - ipm.value).abs() <= 1e-7 * (1.0 + ipm.value),
                "trial {trial} α = {}: {} vs IPM {}",
                p.alpha,
                fast.value,
                ipm.value
            );
            validate(&p, &fast, 1e-9).unwrap();
        }
    }
}

/// `Σ_a w_a W₂²(p_a, q̄)` for the free-support barycenter `Q̄ = Σ (w_a/W) Q_a` (not rounded).
fn free_support_value(p: &BarycenterProblem) -> f64 {
    let cdfs = p.cdfs();
    let total: f64 = p.weights.iter().sum();
    // Breakpoints of all CDFs; on each interval every quantile is constant.
    let mut us: Vec<f64> = cdfs.iter().flatten().copied().chain([0.0]).collect();
    us.sort_by(f64::total_cmp);
    us.dedup();
    let mut v = 0.0;
    for win in us.windows(2) {
        let mid = 0.5 * (win[0] + win[1]);
        let qs: Vec<f64> = cdfs
            .iter()
            .map(|f| f.iter().position(|&x| x > mid).unwrap_or(f.len() - 1) as f64)
            .collect();
        let bar: f64 = qs.iter().zip(&p.weights).map(|(q, w)| q * w).sum::<f64>() / total;
        v += (win[1] - win[0])
            * qs.iter()
                .zip(&p.weights)
                .map(|(q, w)| w * (q - bar) * (q - bar))
                .sum::<f64>();
    }
    v
}

/// Lemma B.9: the polished couplings are the monotone couplings, and an LP coupling's cost equals
/// W₂² of its marginals.
#[test]
fn couplings_are_monotone_and_optimal() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let p = random_problem(&mut rng, 3, 9, 0.1);
    let sol = solve(&p, &opts(Backend::Clarabel, false)).unwrap();
    for ((c, pa), qa) in sol.couplings.iter().zip(&p.pmfs).zip(&sol.targets) {
        assert!(c.is_monotone());
        assert_eq!(c, &monotone_coupling(&cdf(pa), &cdf(qa)));
        assert!((c.cost() - w2_squared(pa, qa)).abs() < 1e-12);
    }
    assert!(max_pairwise_ks(&sol.targets) <= 0.1 + 1e-9);
}

#[test]
fn single_bin_is_trivial() {
    let p = BarycenterProblem::new(vec![vec![1.0], vec![1.0]], vec![0.5, 0.5], 0.0).unwrap();
    let sol = solve(&p, &SolveOptions::default()).unwrap();
    assert_eq!(sol.value, 0.0);
    assert_eq!(sol.couplings[0].entries, vec![(0, 0, 1.0)]);
}

#[test]
fn bad_inputs_are_errors() {
    assert!(BarycenterProblem::new(vec![], vec![], 0.1).is_err());
    assert!(BarycenterProblem::new(vec![vec![0.5, 0.5]], vec![1.0], -0.1).is_err());
    assert!(BarycenterProblem::new(vec![vec![0.5, 0.6]], vec![1.0], 0.1).is_err());
    assert!(BarycenterProblem::new(vec![vec![0.5, 0.5]], vec![0.0], 0.1).is_err());
    assert!(BarycenterProblem::new(vec![vec![1.0], vec![0.5, 0.5]], vec![1.0, 1.0], 0.1).is_err());
}

/// The Law School instance (k = 180, m = 4, ε = 1, seed 33) exported by the HiGHS reference script.
struct Instance {
    pmfs: Vec<Vec<f64>>,
    weights: Vec<f64>,
    highs: Vec<(f64, f64)>,
}

fn law_instance() -> Instance {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../bench/fair_regression_law_k180.json"
    );
    let text = std::fs::read_to_string(path).expect("bench/fair_regression_law_k180.json");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let vecs = |x: &serde_json::Value| -> Vec<f64> {
        x.as_array()
            .unwrap()
            .iter()
            .map(|y| y.as_f64().unwrap())
            .collect()
    };
    let pmfs = v["p_tilde"].as_array().unwrap().iter().map(vecs).collect();
    let weights = vecs(&v["w_tilde"]);
    let mut highs: Vec<(f64, f64)> = v["highs_objective_index_by_alpha"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(a, o)| (a.parse().unwrap(), o.as_f64().unwrap()))
        .collect();
    highs.sort_by(|a, b| a.0.total_cmp(&b.0));
    Instance {
        pmfs,
        weights,
        highs,
    }
}

/// The default solver (fast paths: closed form at α = 0, the per-level decomposition for
/// 0 < α < the inputs' KS, identity above) reproduces HiGHS's objective at all five α of the
/// instance to 1e-6 relative (the project's tolerance; optima are not unique, values are), and so
/// does the structured interior point without fast paths.
#[test]
fn law_instance_matches_highs_objectives() {
    let inst = law_instance();
    let base = BarycenterProblem::new(inst.pmfs.clone(), inst.weights.clone(), 0.0).unwrap();
    let alphas: Vec<f64> = inst.highs.iter().map(|h| h.0).collect();
    let sols = solve_path(&base, &alphas, &SolveOptions::default()).unwrap();
    for (sol, (alpha, highs)) in sols.iter().zip(&inst.highs) {
        let rel = (sol.value - highs).abs() / highs.abs().max(1e-12);
        assert!(
            rel <= 1e-6 || (*highs == 0.0 && sol.value == 0.0),
            "α = {alpha}: {} vs HiGHS {highs} ({:?})",
            sol.value,
            sol.solved_by
        );
        assert!(sol.max_ks <= alpha + 1e-9);
        if *alpha > 0.0 && *alpha < base.unfairness() {
            assert_eq!(sol.solved_by, SolvedBy::Levelwise);
        }
    }
    // And without fast paths: the interior point at α = 0, 0.005 and 0.05 as well.
    for &alpha in &[0.0, 0.005, 0.05] {
        let p = BarycenterProblem::new(inst.pmfs.clone(), inst.weights.clone(), alpha).unwrap();
        let sol = solve(&p, &opts(Backend::Structured, false)).unwrap();
        let highs = inst.highs.iter().find(|h| h.0 == alpha).unwrap().1;
        assert!(
            ((sol.value - highs) / highs).abs() <= 1e-6,
            "α = {alpha}: {} vs {highs}",
            sol.value
        );
    }
}
