"""dpfair.metrics against Fairlearn on random predictions (exact agreement: the same
definitions, computed in floating point from the same counts)."""

from __future__ import annotations

import numpy as np
import pytest
from fairlearn import metrics as fl

from dpfair import metrics


@pytest.fixture(params=[0, 1, 2])
def binary(request):
    rng = np.random.default_rng(request.param)
    n = 500
    groups = rng.choice(["a", "b", "c"], size=n)
    y_true = rng.integers(0, 2, size=n)
    y_pred = (rng.uniform(size=n) < 0.3 + 0.2 * (groups == "b")).astype(int)
    return y_true, y_pred, groups


@pytest.mark.parametrize("method", ["between_groups", "to_overall"])
def test_demographic_parity(binary, method):
    t, p, g = binary
    for name in ("demographic_parity_difference", "demographic_parity_ratio"):
        ours = getattr(metrics, name)(t, p, sensitive_features=g, method=method)
        theirs = getattr(fl, name)(t, p, sensitive_features=g, method=method)
        assert ours == pytest.approx(theirs, abs=1e-12), name


def test_equalized_odds_and_equal_opportunity(binary):
    t, p, g = binary
    assert metrics.equalized_odds_difference(t, p, sensitive_features=g) == pytest.approx(
        fl.equalized_odds_difference(t, p, sensitive_features=g), abs=1e-12
    )
    assert metrics.equal_opportunity_difference(t, p, sensitive_features=g) == pytest.approx(
        fl.equal_opportunity_difference(t, p, sensitive_features=g), abs=1e-12
    )


def test_group_report_equals_metric_frame(binary):
    t, p, g = binary
    mf = fl.MetricFrame(
        metrics={
            "accuracy": lambda a, b: float(np.mean(a == b)),
            "selection_rate": fl.selection_rate,
            "true_positive_rate": fl.true_positive_rate,
        },
        y_true=t,
        y_pred=p,
        sensitive_features=g,
    )
    ours = metrics.group_report(t, p, sensitive_features=g)
    for m in ours.metrics:
        for grp in ("a", "b", "c"):
            assert ours.by_group[grp][m] == pytest.approx(mf.by_group[m][grp], abs=1e-12)
        assert ours.overall[m] == pytest.approx(mf.overall[m], abs=1e-12)
        assert ours.difference(m) == pytest.approx(mf.difference()[m], abs=1e-12)
    assert "overall" in str(ours) and ours.sizes["overall"] == len(t)


def test_text_labels_with_pos_label():
    y_true = np.array([">50K", "<=50K", ">50K", ">50K", "<=50K", "<=50K"])
    y_pred = np.array([">50K", ">50K", "<=50K", ">50K", "<=50K", "<=50K"])
    g = np.array(["F", "F", "F", "M", "M", "M"])
    ours = metrics.demographic_parity_difference(
        y_true, y_pred, sensitive_features=g, pos_label=">50K"
    )
    theirs = fl.demographic_parity_difference(
        y_true == ">50K", y_pred == ">50K", sensitive_features=g
    )
    assert ours == pytest.approx(theirs, abs=1e-12)


def test_metric_errors():
    with pytest.raises(ValueError, match="sensitive_features has 2 rows, y_pred has 3"):
        metrics.demographic_parity_difference(None, [1, 0, 1], sensitive_features=["a", "b"])
    with pytest.raises(ValueError, match="method"):
        metrics.demographic_parity_ratio(None, [1, 0], sensitive_features=["a", "b"], method="x")
    with pytest.raises(ValueError, match="no row has a positive"):
        metrics.equal_opportunity_difference([0, 0], [1, 0], sensitive_features=["a", "b"])
