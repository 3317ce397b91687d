//! The report's checks for fair regression (report.md, "Checks"): the trends Xian et al.'s
//! Fig. 2 and the authors' notebooks show, each a pooled one-sided test with its power
//! ([`crate::stats::direction`]):
//!
//! * at α = 0, the unfairness Δ_SP (KS) rises as ε falls (∞ → 10 → 5 → 1 → 0.5 → 0.1), the
//!   notebooks' effect per ε step beside it;
//! * along each ε's trade-off curve, a larger fairness level α buys a lower MSE and allows a
//!   larger KS.

use super::{COMMUNITIES, K_COMMUNITIES, K_LAW, LAW};
use crate::Check;
use crate::aggregate::Summary;
use crate::report::close;
use crate::stats::direction;

const METHOD: &str = "fair-regression";

/// The summary of Algorithm 1 on `dataset` with `k` bins at (ε, α) for `metric`.
fn find<'a>(
    rows: &'a [Summary],
    dataset: &str,
    k: usize,
    eps: f64,
    alpha: f64,
    metric: &str,
) -> Option<&'a Summary> {
    let k = k.to_string();
    rows.iter().find(|s| {
        let st = &s.setting;
        s.metric == metric
            && st.dataset == dataset
            && st.method == METHOD
            && close(st.epsilon, eps)
            && st.fairness_level.is_some_and(|a| close(a, alpha))
            && st.params.get_str("k") == Some(k.as_str())
    })
}

/// The sorted distinct values of `f` over Algorithm 1's rows of (`dataset`, `k`).
fn values(
    rows: &[Summary],
    dataset: &str,
    k: usize,
    f: impl Fn(&Summary) -> Option<f64>,
) -> Vec<f64> {
    let k = k.to_string();
    let mut v: Vec<f64> = rows
        .iter()
        .filter(|s| {
            s.setting.dataset == dataset
                && s.setting.method == METHOD
                && s.setting.params.get_str("k") == Some(k.as_str())
        })
        .filter_map(f)
        .collect();
    v.sort_by(f64::total_cmp);
    v.dedup_by(|a, b| close(*a, *b));
    v
}

/// The notebooks' KS at α = 0 rises by this much per step of the ε sweep:
/// (KS at ε = 0.1 − KS at ε = ∞) / 5 (Law School k = 36: (0.2807 − 0.0852)/5 = 0.0391;
/// Communities k = 12: (0.1628 − 0.0641)/5 = 0.0197).
fn notebook_step(dataset: &str) -> Option<f64> {
    let refs = super::references_for(super::REPETITIONS_FULL);
    let ks = |eps: f64| {
        refs.iter()
            .find(|r| {
                r.dataset == dataset
                    && r.method == METHOD
                    && r.metric == "ks"
                    && close(r.epsilon, eps)
            })
            .map(|r| r.value)
    };
    Some((ks(0.1)? - ks(f64::INFINITY)?) / 5.0)
}

/// At α = 0 the KS rises as ε falls (neighbouring ε of the sweep, pooled).
fn ks_rises_as_epsilon_falls(rows: &[Summary], dataset: &str, k: usize) -> Option<Check> {
    let mut eps = values(rows, dataset, k, |s| Some(s.setting.epsilon));
    eps.reverse(); // ∞ first: each pair goes to the next smaller ε
    let pairs: Vec<(String, &Summary, &Summary)> = eps
        .windows(2)
        .filter_map(|w| {
            Some((
                format!(
                    "ε {} → {}",
                    crate::present::setting(w[0]),
                    crate::present::setting(w[1])
                ),
                find(rows, dataset, k, w[0], 0.0, "ks")?,
                find(rows, dataset, k, w[1], 0.0, "ks")?,
            ))
        })
        .collect();
    let d = direction(&pairs, 1.0)?;
    let mut c = Check::trend(
        &format!("Fig. 2 / notebooks ({dataset}, k = {k}, α = 0): Δ_SP (KS) rises as ε falls"),
        &d,
        d.summary(),
    );
    if let Some(step) = notebook_step(dataset) {
        c = c.claimed_effect(step);
    }
    Some(c)
}

/// Along each ε's curve a larger α moves `metric` the `sign` way (+1: rises), pooled over the
/// neighbouring α of every ε.
fn along_alpha(
    rows: &[Summary],
    dataset: &str,
    k: usize,
    metric: &str,
    sign: f64,
    name: &str,
) -> Option<Check> {
    let alphas = values(rows, dataset, k, |s| s.setting.fairness_level);
    let mut pairs = Vec::new();
    for eps in values(rows, dataset, k, |s| Some(s.setting.epsilon)) {
        for w in alphas.windows(2) {
            let (Some(a), Some(b)) = (
                find(rows, dataset, k, eps, w[0], metric),
                find(rows, dataset, k, eps, w[1], metric),
            ) else {
                continue;
            };
            pairs.push((
                format!(
                    "ε {}: α {} → {}",
                    crate::present::setting(eps),
                    crate::present::setting(w[0]),
                    crate::present::setting(w[1])
                ),
                a,
                b,
            ));
        }
    }
    let d = direction(&pairs, sign)?;
    Some(Check::trend(name, &d, d.summary()))
}

/// Every check the rows allow.
pub fn all(rows: &[Summary]) -> Vec<Check> {
    let mut out = Vec::new();
    for (dataset, k) in [(LAW, K_LAW), (COMMUNITIES, K_COMMUNITIES)] {
        out.extend(ks_rises_as_epsilon_falls(rows, dataset, k));
        out.extend(along_alpha(
            rows,
            dataset,
            k,
            "mse",
            -1.0,
            &format!("Fig. 2 ({dataset}, k = {k}): MSE falls as α grows, at every ε"),
        ));
        out.extend(along_alpha(
            rows,
            dataset,
            k,
            "ks",
            1.0,
            &format!("Fig. 2 ({dataset}, k = {k}): Δ_SP (KS) rises as α grows, at every ε"),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::{Params, Setting};

    fn row(eps: f64, alpha: f64, metric: &str, mean: f64, std: f64, n: usize) -> Summary {
        let setting = Setting {
            dataset: LAW.into(),
            method: METHOD.into(),
            accounting: if eps.is_finite() { "strict" } else { "none" }.into(),
            epsilon: eps,
            delta: 0.0,
            fairness_level: Some(alpha),
            params: Params::new().with("k", K_LAW),
        };
        Summary::of(setting, metric, mean, std, n)
    }

    /// KS at α = 0 over ε = ∞, 1, 0.1 rising by 0.04 per step, sd 0.02 over 50 seeds: SE of a
    /// step √2·0.02/√50 = 0.004, pooled over 2 steps 0.004/√2 = 0.00283 (ν = 196); detectable
    /// (t_0.95 + t_0.80)·SE = (1.653 + 0.843)·0.00283 = 0.00706, below the notebooks' 0.0391
    /// per step: evidence. At 5 seeds (SE 0.00894, ν = 16) the detectable rise is
    /// (1.746 + 0.865)·0.00894 = 0.0233.
    #[test]
    fn ks_trend_in_epsilon_states_its_power() {
        let rows = |n: usize| {
            vec![
                row(f64::INFINITY, 0.0, "ks", 0.08, 0.02, n),
                row(1.0, 0.0, "ks", 0.12, 0.02, n),
                row(0.1, 0.0, "ks", 0.16, 0.02, n),
            ]
        };
        let full = rows(50);
        let c = ks_rises_as_epsilon_falls(&full, LAW, K_LAW).expect("rows");
        assert!(c.passed, "{c:?}");
        let p = c.power.as_ref().expect("power");
        assert!((p.min_effect - 0.00706).abs() < 1e-4, "{p:?}");
        assert!((p.claimed_effect.expect("notebooks") - 0.0391).abs() < 1e-4);
        assert_eq!(c.evidence(crate::Scale::Full), "evidence");
        let quick = rows(5);
        let c = ks_rises_as_epsilon_falls(&quick, LAW, K_LAW).expect("rows");
        let mde = c.power.as_ref().expect("power").min_effect;
        assert!((mde - 0.0233).abs() < 3e-4, "{mde}");
        // A flat KS is no evidence of the trend.
        let mut flat = rows(50);
        flat.iter_mut().for_each(|r| r.mean = 0.1);
        assert!(
            !ks_rises_as_epsilon_falls(&flat, LAW, K_LAW)
                .expect("rows")
                .passed
        );
    }

    #[test]
    fn mse_falls_along_alpha() {
        let rows = vec![
            row(1.0, 0.0, "mse", 0.012, 0.001, 5),
            row(1.0, 0.05, "mse", 0.008, 0.001, 5),
            row(1.0, 1.0, "mse", 0.001, 0.001, 5),
        ];
        let c = all(&rows);
        let mse = c
            .iter()
            .find(|c| c.name.contains("MSE falls"))
            .expect("check");
        assert!(mse.passed && mse.power.is_some(), "{mse:?}");
        let mut rising = rows.clone();
        rising.reverse();
        for (r, m) in rising.iter_mut().zip([0.0, 0.05, 1.0]) {
            r.setting.fairness_level = Some(m);
        }
        let c = all(&rising);
        let mse = c
            .iter()
            .find(|c| c.name.contains("MSE falls"))
            .expect("check");
        assert!(!mse.passed, "{mse:?}");
    }
}
