"""`dpfair.metrics.private_group_report`: one charged release, a MetricFrame-shaped result with
intervals, composition with a PrivacySession, declared groups, and clear errors
(docs/evaluation.md)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import dpfair
from dpfair.metrics import (
    demographic_parity_difference,
    equal_opportunity_difference,
    equalized_odds_difference,
    private_group_report,
)

METRICS = ["count", "accuracy", "selection_rate", "true_positive_rate", "false_positive_rate"]


def _rows(n: int, seed: int) -> tuple:
    """Labels, predictions (80 % correct, a group-dependent selection) and groups F/M."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], size=n, p=[0.4, 0.6])
    y = (rng.random(n) < np.where(sex == "F", 0.3, 0.5)).astype(int)
    y_hat = np.where(rng.random(n) < 0.8, y, 1 - y)
    return y, y_hat, sex


def test_shape_one_release_and_names():
    y, y_hat, sex = _rows(3_000, 1)
    session = dpfair.PrivacySession.insecure_seeded(1.0, seed=3)
    mf = private_group_report(
        y, y_hat, sensitive_features=sex, groups=["F", "M", "X"], epsilon=1.0, session=session
    )
    assert list(mf.by_group.index) == ["F", "M", "X"]
    assert list(mf.by_group.columns) == METRICS
    assert list(mf.overall.index) == METRICS
    assert list(mf.difference().index) == METRICS[1:]
    assert set(mf.disparities.index) >= {
        "demographic_parity_difference",
        "equalized_odds_ratio",
        "equal_opportunity_difference",
    }
    # The declared group without rows is a row with a wide interval, not an error.
    lo, hi = mf.interval("selection_rate", "X")
    assert lo < 0.05 and hi > 0.95
    # One entry, the asked ε, the session's relation; the seeded session says not private.
    entries = mf.ledger_["entries"]
    assert len(entries) == 1 and entries[0]["cost"]["epsilon"] == 1.0
    assert entries[0]["relation"] == "substitution" and entries[0]["sensitivity"] == 2.0
    assert mf.ledger_["private"] is False
    assert "ε = 1" in str(mf)


def test_intervals_contain_the_exact_values_at_large_epsilon():
    # At ε = 20 the noise (scale 0.1) almost never moves a count; the exact (non-private)
    # metrics lie inside the intervals, and the point values are within 0.01 of them.
    y, y_hat, sex = _rows(4_000, 2)
    session = dpfair.PrivacySession.insecure_seeded(20.0, seed=4)
    mf = private_group_report(
        y, y_hat, sensitive_features=sex, groups=["F", "M"], epsilon=20.0, session=session
    )
    exact = {
        "demographic_parity_difference": demographic_parity_difference(
            y, y_hat, sensitive_features=sex
        ),
        "equal_opportunity_difference": equal_opportunity_difference(
            y, y_hat, sensitive_features=sex
        ),
        "equalized_odds_difference": equalized_odds_difference(y, y_hat, sensitive_features=sex),
    }
    for name, value in exact.items():
        lo, hi = mf.interval(name)
        assert lo <= value <= hi, (name, value, lo, hi)
        assert mf.disparities.loc[name, "value"] == pytest.approx(value, abs=0.01)
    accuracy_f = float(np.mean(y[sex == "F"] == y_hat[sex == "F"]))
    assert mf.by_group.loc["F", "accuracy"] == pytest.approx(accuracy_f, abs=0.01)
    lo, hi = mf.by_group_interval.loc["F", "accuracy"]
    assert lo <= accuracy_f <= hi


def test_composes_with_the_session_budget():
    y, y_hat, sex = _rows(500, 3)
    session = dpfair.PrivacySession(epsilon=1.5)
    private_group_report(
        y, y_hat, sensitive_features=sex, groups=["F", "M"], epsilon=1.0, session=session
    )
    assert session.remaining[0] == pytest.approx(0.5)
    with pytest.raises(dpfair.BudgetExceededError):
        private_group_report(
            y, y_hat, sensitive_features=sex, groups=["F", "M"], epsilon=1.0, session=session
        )
    assert len(session.ledger["entries"]) == 1
    # Add/remove sessions release with sensitivity 1.
    ar = dpfair.PrivacySession(epsilon=1.0, relation="add-remove")
    mf = private_group_report(
        y, y_hat, sensitive_features=sex, groups=["F", "M"], epsilon=1.0, session=ar
    )
    assert mf.relation == "add-remove" and mf.ledger_["entries"][0]["sensitivity"] == 1.0


def test_groups_are_declared_never_read_from_the_rows():
    y, y_hat, sex = _rows(200, 4)
    with pytest.raises(ValueError, match="groups: declare"):
        private_group_report(y, y_hat, sensitive_features=sex, epsilon=1.0)
    # A Categorical's categories are a declaration, also of a group without rows.
    cat = pd.Series(pd.Categorical(sex, categories=["M", "F", "X"]))
    mf = private_group_report(y, y_hat, sensitive_features=cat, epsilon=1.0)
    assert mf.groups == ["M", "F", "X"]
    # A row outside the declared groups is refused without echoing its value.
    with pytest.raises(ValueError, match="row 0: a value that is not one of the declared"):
        private_group_report(y, y_hat, sensitive_features=sex, groups=["A", "B"], epsilon=1.0)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"epsilon": math.inf}, "epsilon"),
        ({"epsilon": 1.0, "level": 1.0}, "level"),
        ({"epsilon": 1.0, "groups": ["F"]}, "at least 2"),
        ({"epsilon": 1.0, "groups": ["F", "F"]}, "twice"),
    ],
)
def test_bad_parameters_name_themselves(kwargs, match):
    y, y_hat, sex = _rows(100, 5)
    kwargs = {"groups": ["F", "M"], **kwargs}
    with pytest.raises(ValueError, match=match):
        private_group_report(y, y_hat, sensitive_features=sex, **kwargs)


def test_without_pandas_shapes_are_dicts(monkeypatch):
    import dpfair._private_frame as frame

    monkeypatch.setattr(frame, "_pandas", lambda: None)
    y, y_hat, sex = _rows(300, 6)
    mf = private_group_report(y, y_hat, sensitive_features=sex, groups=["F", "M"], epsilon=1.0)
    assert isinstance(mf.by_group, dict) and set(mf.by_group) == {"F", "M"}
    assert set(mf.by_group["F"]) == set(METRICS)
    assert isinstance(mf.difference(), dict) and isinstance(mf.disparities, dict)
    assert mf.by_group_interval["M"]["accuracy"][0] <= mf.by_group_interval["M"]["accuracy"][1]


def test_names_and_semantics_match_fairlearn():
    fl = pytest.importorskip("fairlearn.metrics")
    from sklearn.metrics import accuracy_score

    # ε = 20: noise of scale 0.1, so P(a count moves) = 2e^-10/(1 + e^-10) ≈ 9e-5 per cell; the
    # point values are Fairlearn's exact values (allowing 0.01 for the rare moved count).
    y, y_hat, sex = _rows(5_000, 7)
    session = dpfair.PrivacySession.insecure_seeded(20.0, seed=8)
    mf = private_group_report(
        y, y_hat, sensitive_features=sex, groups=["F", "M"], epsilon=20.0, session=session
    )
    for name in [
        "demographic_parity_difference",
        "demographic_parity_ratio",
        "equalized_odds_difference",
        "equalized_odds_ratio",
        "equal_opportunity_difference",
        "equal_opportunity_ratio",
    ]:
        exact = getattr(fl, name)(y, y_hat, sensitive_features=sex)
        assert mf.disparities.loc[name, "value"] == pytest.approx(exact, abs=0.01), name
        lo, hi = mf.interval(name)
        assert lo <= exact <= hi, name
    frame = fl.MetricFrame(
        metrics={
            "accuracy": accuracy_score,
            "selection_rate": fl.selection_rate,
            "true_positive_rate": fl.true_positive_rate,
            "false_positive_rate": fl.false_positive_rate,
        },
        y_true=y,
        y_pred=y_hat,
        sensitive_features=sex,
    )
    for metric in METRICS[1:]:
        for group in ["F", "M"]:
            exact = frame.by_group.loc[group, metric]
            assert mf.by_group.loc[group, metric] == pytest.approx(exact, abs=0.01)
        assert mf.difference()[metric] == pytest.approx(frame.difference()[metric], abs=0.01)
        assert mf.ratio()[metric] == pytest.approx(frame.ratio()[metric], abs=0.01)


def test_a_fit_and_its_evaluation_share_one_budget(adult):
    # The workflow: fit and evaluate in one session; the evaluation is one more entry
    # and the total is the sum (basic composition of pure ε).
    X, y = adult
    session = dpfair.PrivacySession(epsilon=1.5)
    scores = ((X["age"] - 17) / 73).to_frame("score")
    model = dpfair.PrivateFairRegressor(
        alpha=0.05, epsilon=1.0, bins=10, score_range=(0, 1), session=session
    ).fit(scores, scores["score"], sensitive_features=X["sex"])
    y_hat = np.where(model.predict(scores, sensitive_features=X["sex"]) > 0.5, ">50K", "<=50K")
    fitted = len(session.ledger["entries"])
    mf = private_group_report(
        y,
        y_hat,
        sensitive_features=X["sex"],
        groups=["Female", "Male"],
        epsilon=0.5,
        session=session,
        pos_label=">50K",
    )
    assert len(session.ledger["entries"]) == fitted + 1
    assert session.ledger["total"]["epsilon"] == pytest.approx(1.5)
    assert mf.ledger_["total"]["epsilon"] == pytest.approx(0.5)
    with pytest.raises(dpfair.BudgetExceededError):
        private_group_report(
            y, y_hat, sensitive_features=X["sex"], groups=["Female", "Male"], epsilon=0.1,
            session=session, pos_label=">50K",
        )  # fmt: skip
