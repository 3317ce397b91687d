"""Every estimator on a pandas DataFrame with a text sensitive column and a text target: fit,
predict, ledger, and Fairlearn's MetricFrame against dpfair.metrics on the predictions."""

from __future__ import annotations

import numpy as np
import pytest
from estimator_cases import ALL, LPCT, fit_args, make, predict_input, predict_kwargs
from fairlearn.metrics import MetricFrame, selection_rate

import dpfair
from dpfair.metrics import demographic_parity_difference, group_report


@pytest.fixture(scope="module")
def fitted(adult, adult_public):
    X, y = adult
    out = {}
    for name in ALL:
        Xf, yf, kw = fit_args(name, X, y, adult_public)
        out[name] = make(name, random_state=7).fit(Xf, yf, **kw)
    return out


@pytest.mark.parametrize("name", ALL)
def test_fit_predict_and_ledger(name, fitted, adult):
    X, y = adult
    est = fitted[name]
    pred = est.predict(predict_input(name, X), **predict_kwargs(name, X))
    assert pred.shape == (len(X),)
    if name == "PrivateFairRegressor":
        assert np.isfinite(pred).all()
    else:
        assert set(pred) <= set(est.classes_)
        assert len(est.classes_) >= 2
    ledger = est.ledger_
    # The fit never spends more than its parameters say (ε of the whole fit; LPCT: per holder).
    assert 0 < ledger["total"]["epsilon"] <= est.epsilon * (1 + 1e-9)
    assert ledger["private"] is True
    assert ledger["entries"], "a private fit records its releases"
    assert "ε" in str(ledger) or "epsilon" in str(ledger)


def test_text_target_classes_are_the_original_labels(fitted):
    est = fitted["CDPFairClassifier"]
    assert list(est.classes_) == ["<=50K", ">50K"]
    assert list(est.groups_) == ["Female", "Male"]
    assert est.sensitive_feature_name_ == "sex"
    assert list(est.feature_names_in_) == ["age", "hours", "job", "sex"]


@pytest.mark.parametrize("name", [n for n in ALL if n not in LPCT and n != "PrivateFairRegressor"])
def test_predict_proba_rows_are_distributions(name, fitted, adult):
    X, _ = adult
    est = fitted[name]
    try:
        p = est.predict_proba(X, sensitive_features=X["sex"])
    except AttributeError:
        pytest.skip(f"skipped: {name}'s model has no probabilities")
    assert p.shape == (len(X), len(est.classes_))
    assert np.all(p >= 0) and np.allclose(p.sum(axis=1), 1.0)


@pytest.mark.parametrize("name", [n for n in ALL if n not in ("PrivateFairRegressor",)])
def test_fairlearn_metricframe_equals_dpfair_metrics(name, fitted, adult):
    X, y = adult
    est = fitted[name]
    pred = est.predict(predict_input(name, X), **predict_kwargs(name, X))
    sex = X["sex"]
    if name == "DP2DPClassifier":
        _, y_true, _ = fit_args(name, X, y, None)
        mf = MetricFrame(
            metrics={"accuracy": lambda t, p: float(np.mean(t == p))},
            y_true=y_true,
            y_pred=pred,
            sensitive_features=sex,
        )
        ours = group_report(y_true, pred, sensitive_features=sex, task="multiclass")
        for g in ("Female", "Male"):
            assert ours.by_group[g]["accuracy"] == pytest.approx(
                mf.by_group["accuracy"][g], abs=1e-12
            )
        return
    pos = ">50K"
    sr = lambda t, p: selection_rate(t, p, pos_label=pos)  # noqa: E731
    mf = MetricFrame(
        metrics={"accuracy": lambda t, p: float(np.mean(t == p)), "selection_rate": sr},
        y_true=y,
        y_pred=pred,
        sensitive_features=sex,
    )
    ours = group_report(y, pred, sensitive_features=sex, task="binary", pos_label=pos)
    for g in ("Female", "Male"):
        assert ours.by_group[g]["accuracy"] == pytest.approx(mf.by_group["accuracy"][g], abs=1e-12)
        assert ours.by_group[g]["selection_rate"] == pytest.approx(
            mf.by_group["selection_rate"][g], abs=1e-12
        )
    assert demographic_parity_difference(
        y, pred, sensitive_features=sex, pos_label=pos
    ) == pytest.approx(mf.difference()["selection_rate"], abs=1e-12)


def test_regressor_ks_metric_matches_scipy(fitted, adult):
    from scipy.stats import ks_2samp

    X, _ = adult
    est = fitted["PrivateFairRegressor"]
    out = est.predict(predict_input("PrivateFairRegressor", X), sensitive_features=X["sex"])
    a, b = out[X["sex"].to_numpy() == "Female"], out[X["sex"].to_numpy() == "Male"]
    ours = dpfair.metrics.ks_statistical_parity(None, out, sensitive_features=X["sex"])
    assert ours == pytest.approx(ks_2samp(a, b).statistic, abs=1e-12)


def test_groups_are_read_from_x_when_not_given(fitted, adult):
    X, _ = adult
    est = fitted["CDPFairClassifier"]
    assert (est.predict(X) == est.predict(X, sensitive_features=X["sex"])).all()


def test_pickled_estimator_predicts_alike(fitted, adult):
    import pickle

    X, _ = adult
    est = fitted["DPLogisticRegression"]
    again = pickle.loads(pickle.dumps(est))
    assert again.model_.to_json() == est.model_.to_json()
    assert (again.predict(X) == est.predict(X)).all()
