"""The estimators as scikit-learn citizens (issue #42): `score`, fit-time columns checked at
predict, scikit-learn's errors for bad input, and signature defaults that are the library's."""

from __future__ import annotations

import inspect
import json

import numpy as np
import pytest
import scipy.sparse
from conftest import BOUNDS, adult_like
from estimator_cases import real_target
from sklearn.metrics import accuracy_score, r2_score
from sklearn.model_selection import cross_val_score

import dpfair
from dpfair import _native
from dpfair._input import to_frame
from dpfair.estimators import __all__ as ESTIMATORS


def _numeric(n: int = 2000, seed: int = 0) -> tuple:
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 2))
    return X, (X[:, 0] + X[:, 1] > 1).astype(int)


# -- defaults --------------------------------------------------------------------------------

# (method, extra params both fits need, sensitive, regression, X columns): the fits that compare
# the signature's defaults with the library's own.
_DEFAULT_FITS = {
    "DPLogisticRegression": ({}, False, False),
    "DPLinearRegression": ({"target_range": (0.0, 3.0)}, False, True),
    "CDPFairClassifier": ({}, True, False),
    "FDPFairClassifier": ({}, True, False),
    "DecoupledFairClassifier": ({}, True, False),
    "DP2DPClassifier": ({}, True, False),
    "GroupThresholdsClassifier": ({}, True, False),
    "PrivateFairRegressor": ({"score_range": (0.0, 3.0)}, True, True),
    "LPCTClassifier": ({}, False, False),
    "LPCTPruneClassifier": ({}, False, False),
}


def _without_seeds(config: str) -> dict:
    """A model's configuration without the seeds drawn at fit time (fresh in every fit)."""
    return {k: v for k, v in json.loads(config).items() if "seed" not in k}


@pytest.mark.parametrize("name", sorted(_DEFAULT_FITS))
def test_signature_defaults_are_what_the_library_applies(name):
    """A default-constructed estimator's params fit the model the library's own defaults fit
    (the same configuration, the same ε in the ledger), and that ε is the signature's."""
    extra, sensitive, regression = _DEFAULT_FITS[name]
    cls = getattr(dpfair, name)
    X, y = adult_like(2400, 7)
    groups = X.pop("sex") if sensitive else None
    if regression:
        y = real_target(X.assign(sex=groups if sensitive else "Male"))
    if name == "PrivateFairRegressor":
        X = X[["age"]] / 30.0
    est = cls(**{k: v for k, v in extra.items() if k in inspect.signature(cls).parameters})
    frame = to_frame(X, y, groups, regression=regression)
    coding = est._coding(frame)
    public = to_frame(*adult_like(600, 8)) if name.startswith("LPCT") else None
    if name == "PrivateFairRegressor":
        extra = {**extra, "score_column": "age"}
        est._score_column = "age"
    ours = est._native_params()
    assert ours, "the signature passes its defaults explicitly"
    fits = [
        _native.fit(cls._method, params, frame, coding, None, 3, public)
        for params in ({**ours, **extra}, dict(extra))
    ]
    with_signature, with_library = fits
    assert _without_seeds(with_signature.config_json()) == _without_seeds(
        with_library.config_json()
    )
    spent = [m.ledger_total()[0] for m in fits]
    assert spent[0] == spent[1] == pytest.approx(est.epsilon)
    assert est.epsilon == (3.0 if name == "DecoupledFairClassifier" else 1.0)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_repr_and_help_show_epsilon(name):
    cls = getattr(dpfair, name)
    default = inspect.signature(cls).parameters["epsilon"].default
    assert isinstance(default, float)
    assert f"epsilon : float, default={default!r}" in inspect.getdoc(cls)
    assert "Parameters\n----------" in inspect.getdoc(cls)
    assert repr(cls(epsilon=default / 2)) == f"{name}(epsilon={default / 2!r})"


# -- score -----------------------------------------------------------------------------------


def test_cross_val_score_needs_no_scoring():
    X, y = _numeric()
    est = dpfair.DPLogisticRegression(epochs=3, bounds={"x0": (0, 1), "x1": (0, 1)})
    scores = cross_val_score(est, X, y, cv=3)
    assert scores.shape == (3,) and np.all((scores >= 0) & (scores <= 1))
    assert scores.mean() > 0.6


def test_score_is_accuracy_or_r2(adult):
    X, y = adult
    clf = dpfair.CDPFairClassifier(frequencies=64, bounds=BOUNDS).fit(X, y, "sex")
    pred = clf.predict(X, sensitive_features=X["sex"])
    assert clf.score(X, y, sensitive_features=X["sex"]) == accuracy_score(y, pred)
    weights = np.linspace(0.1, 1, len(y))
    assert clf.score(X, y, X["sex"], sample_weight=weights) == pytest.approx(
        accuracy_score(y, pred, sample_weight=weights)
    )
    yr = real_target(X)
    reg = dpfair.DPLinearRegression(target_range=(0, 3), bounds=BOUNDS).fit(X, yr, "sex")
    assert reg.score(X, yr) == pytest.approx(r2_score(yr, reg.predict(X)))
    with pytest.raises(ValueError, match="y has 10 rows, X has 3000"):
        reg.score(X, yr[:10])


# -- input checks ----------------------------------------------------------------------------


def test_predict_checks_the_columns_fit_saw(adult):
    X, y = _numeric()
    clf = dpfair.DPLogisticRegression(epochs=2, unscaled=True).fit(X, y)
    assert clf.n_features_in_ == 2 and not hasattr(clf, "feature_names_in_")
    with pytest.raises(ValueError, match="X has 3 features, but DPLogisticRegression is expecting"):
        clf.predict(np.hstack([X, X[:, :1]]))
    Xa, ya = adult
    clf = dpfair.DPLogisticRegression(epochs=2, bounds=BOUNDS).fit(Xa, ya, "sex")
    assert list(clf.feature_names_in_) == ["age", "hours", "job", "sex"]
    with pytest.raises(ValueError, match="Feature names unseen at fit time:\n- extra"):
        clf.predict(Xa.assign(extra=1))
    with pytest.raises(ValueError, match="must be in the same order"):
        clf.predict(Xa[["hours", "age", "job", "sex"]])
    # The group column is never a feature: with it or without it, X has fit's features.
    assert len(clf.predict(Xa.drop(columns="sex"))) == len(Xa)


def test_list_input_is_read_as_an_array():
    X, y = _numeric(1500)
    clf = dpfair.DPLogisticRegression(epochs=2, unscaled=True).fit(X.tolist(), y.tolist())
    assert clf.n_features_in_ == 2
    assert np.array_equal(clf.predict(X[:50].tolist()), clf.predict(X[:50]))


def test_sparse_input_is_refused_by_name():
    X, y = _numeric(200)
    for sparse in (scipy.sparse.csr_matrix(X), scipy.sparse.csr_array(X)):
        with pytest.raises(TypeError, match="sparse matrix.*X.toarray()"):
            dpfair.DPLogisticRegression().fit(sparse, y)


@pytest.mark.parametrize("name", ["DPLogisticRegression", "CDPFairClassifier", "LPCTClassifier"])
def test_continuous_target_to_a_classifier(name):
    X, _ = _numeric(300)
    y = X[:, 0] * 3
    groups = np.where(X[:, 1] > 0.5, "a", "b")
    est = getattr(dpfair, name)()
    kw = {"X_public": X, "y_public": y} if name.startswith("LPCT") else {}
    if name == "CDPFairClassifier":
        kw["sensitive_features"] = groups
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        est.fit(X, y, **kw)


def test_numeric_text_target_is_classes_not_a_panic():
    """Text labels that read as real numbers ('0.25', …): classes for a classifier (the library
    used to infer a regression target there and panic)."""
    X, _ = _numeric(2000)
    many = np.array([f"{v:.1f}" for v in X[:, 0]])  # 11 labels: 0.0, 0.1, …, 1.0
    groups = np.where(X[:, 1] > 0.5, "a", "b")
    with pytest.raises(ValueError, match="Only binary classification is supported"):
        dpfair.CDPFairClassifier(unscaled=True).fit(X, many, groups)
    clf = dpfair.DPLogisticRegression(epochs=1, unscaled=True).fit(X, many)
    assert sorted(clf.classes_) == sorted(set(many))
    two = np.where(X[:, 0] > 0.5, "0.75", "0.25")
    clf = dpfair.DPLogisticRegression(epochs=1, unscaled=True).fit(X, two)
    assert sorted(clf.classes_) == ["0.25", "0.75"]
    # The native module no longer infers the task (the inference read these labels as a real
    # target and panicked): without a task it is an error.
    coding = {"positive": None, "task": None, "groups": None, "classes": None}
    with pytest.raises(ValueError, match="the coding needs `task`"):
        _native.fit("dp-logistic", {}, to_frame(X, many), coding, None, None, None)
    coding["task"] = "regression"
    with pytest.raises(ValueError, match="a regression target must be numbers, got text"):
        _native.fit("dp-linear", {"target_range": (0.0, 1.0)}, to_frame(X, many), coding)
