"""An empirical privacy audit through the Python front end (docs/audits.md, "Python estimators").

The Rust audits exercise the library's release paths directly; this one goes through what a
Python user calls: `PrivateFairRegressor.fit` on a DataFrame-free numpy input, whose released
group weights are read back from the model file. Replace-one neighbours: 20 rows, a canary row
in group `a` or in group `b` (everything else equal). The projection is the difference of the
two groups' released weights (noisy count / n, discrete Laplace of scale 2/ε on each count): the
canary moves it by 2/n, the histogram's whole sensitivity.

The auditor is the two-sample threshold auditor of `crates/privacy/src/audit/threshold.rs`,
written again here in a few lines: on one half of the samples choose the threshold event with
the largest plug-in bound, on the other half bound its probabilities by Clopper–Pearson at α/2
each; ε_lower = ln(L_a / U_b) exceeds the true ε with probability at most α. The planted bug (a
fit at ε = 4 claimed as ε = 1) shows the audit's power at this sample size.
"""

from __future__ import annotations

import json
import math

import numpy as np
from scipy.stats import beta

import dpfair

ALPHA = 0.01
TRIALS = 10_000  # per input: about 0.5 ms a fit, 20 s in all; power measured below (docs/audits.md)


def _clopper_pearson(k: int, n: int, a: float) -> tuple:
    lower = 0.0 if k == 0 else float(beta.ppf(a, k, n - k + 1))
    upper = 1.0 if k == n else float(beta.ppf(1 - a, k + 1, n - k))
    return lower, upper


def _threshold_audit(samples_a: np.ndarray, samples_b: np.ndarray) -> float:
    half = len(samples_a) // 2
    sel = (samples_a[:half], samples_b[:half])
    est = (samples_a[half:], samples_b[half:])
    pooled = np.concatenate(sel)
    best, best_event = -math.inf, None
    for t in np.unique(np.quantile(pooled, np.linspace(0.02, 0.98, 49))):
        for upper in (True, False):
            for first in (0, 1):
                hit = [(s >= t) if upper else (s <= t) for s in sel]
                pa, pb = hit[first].mean(), hit[1 - first].mean()
                if pa > 0 and pb > 0 and math.log(pa / pb) > best:
                    best, best_event = math.log(pa / pb), (t, upper, first)
    t, upper, first = best_event
    hits = [int(((s >= t) if upper else (s <= t)).sum()) for s in est]
    n = len(est[0])
    lower_a, _ = _clopper_pearson(hits[first], n, ALPHA / 2)
    _, upper_b = _clopper_pearson(hits[1 - first], n, ALPHA / 2)
    return max(0.0, math.log(lower_a / upper_b)) if lower_a > 0 else 0.0


def _released_weight(epsilon: float, canary_group: str, session) -> float:
    scores = np.linspace(0.05, 0.95, 20)
    groups = np.array(["a", "b"] * 10)
    groups[0] = canary_group
    reg = dpfair.PrivateFairRegressor(
        alpha=0.05, epsilon=epsilon, score_range=(0, 1), bins=4, session=session
    )
    reg.fit(scores.reshape(-1, 1), scores, sensitive_features=groups)
    weights = json.loads(reg.model_.to_json())["model"]["weights"]
    return weights[0] - weights[1]


def _audit(epsilon: float, seed: int) -> float:
    # Seeded noise so that the test repeats exactly (a simulation: these fits are not private).
    session = dpfair.PrivacySession.insecure_seeded(1e9, seed=seed)
    a = np.array([_released_weight(epsilon, "a", session) for _ in range(TRIALS)])
    b = np.array([_released_weight(epsilon, "b", session) for _ in range(TRIALS)])
    return _threshold_audit(a, b)


def test_python_fair_regression_audits_within_its_claim_and_catches_a_planted_bug():
    shipped = _audit(1.0, seed=1)
    assert shipped <= 1.0, shipped
    # Planted: the release at ε = 4, claimed as ε = 1 (a weight's noise a quarter of its claim).
    planted = _audit(4.0, seed=2)
    assert planted > 1.0, planted
    print(f"shipped ε_lower {shipped:.3f}, planted {planted:.3f}")
