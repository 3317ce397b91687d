"""A fit's own private estimate of its fairness measure (issue #42): `fairness_estimate_` from
released values where the method releases one, and a `FairnessWarning` when it misses the
target, as `dpfair fit` prints "met: false"."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import BOUNDS

import dpfair


def test_the_decoupled_classifier_reports_its_estimate(adult):
    X, y = adult
    clf = dpfair.DecoupledFairClassifier(epsilon=3.0, alpha=0.1, bounds=BOUNDS, check_fraction=0)
    clf.fit(X, y, sensitive_features="sex")
    est = clf.fairness_estimate_
    assert est is not None and est["target"] == 0.1
    assert 0.0 <= est["estimate"] <= 1.0
    assert est["met"] == (est["estimate"] <= est["target"] + 1e-9)


def test_a_method_without_a_released_estimate_has_none():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(1000, 2))
    y = (X[:, 0] > 0.5).astype(int)
    clf = dpfair.DPLogisticRegression(epochs=2, bounds={"x0": (0, 1), "x1": (0, 1)}).fit(X, y)
    assert clf.fairness_estimate_ is None


@pytest.mark.parametrize("met", [True, False])
def test_a_missed_target_warns_and_a_met_one_does_not(met):
    est = dpfair.DecoupledFairClassifier()
    model = SimpleNamespace(fairness=("parity", 0.1, 0.05 if met else 0.2, met))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        est._set_fairness(model, warn=True)
    found = [w for w in record if issubclass(w.category, dpfair.FairnessWarning)]
    assert est.fairness_estimate_["met"] is met
    assert len(found) == (0 if met else 1)
    if not met:
        assert "0.2000" in str(found[0].message) and "target 0.1" in str(found[0].message)


def test_summary_says_what_the_fit_released(adult):
    X, y = adult
    clf = dpfair.DecoupledFairClassifier(epsilon=3.0, alpha=0.1, bounds=BOUNDS)
    clf.fit(X, y, sensitive_features="sex")
    lines = clf.summary().splitlines()
    assert lines[0].startswith("DecoupledFairClassifier (decoupled): privacy spent ε = 3")
    assert lines[1].startswith("held-out check on ") and "held-out rows" in lines[1]
    assert ("predicts that constant" in lines[1]) == (clf.constant_ is not None)
    assert lines[2].startswith("fairness: ")
    if clf.fairness_estimate_ is not None:
        assert ("met" in lines[2]) and "target 0.1" in lines[2]


def test_summary_of_a_privacy_only_method_says_so():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(1000, 2))
    y = (X[:, 0] > 0.5).astype(int)
    clf = dpfair.DPLogisticRegression(epochs=2, bounds={"x0": (0, 1), "x1": (0, 1)}).fit(X, y)
    assert clf.summary().splitlines()[-1] == "fairness: no target (a privacy-only method)"
    with pytest.raises(Exception, match="not fitted"):
        dpfair.DPLogisticRegression().summary()
