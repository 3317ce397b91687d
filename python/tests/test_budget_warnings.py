"""Repeated fits by scikit-learn's model-selection tools are not silent (issues #42, #45): without
a session they warn (`BudgetWarning`); with one they compose against its budget and the fit that
would overspend is refused; a session never crosses a process boundary."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, cross_val_score

import dpfair

BOUNDS = {"x0": (0.0, 1.0), "x1": (0.0, 1.0)}


def _numeric(n: int = 1000, seed: int = 0) -> tuple:
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 2))
    return X, (X[:, 0] + X[:, 1] > 1).astype(int)


def _budget_warnings(record) -> list:
    return [str(w.message) for w in record if issubclass(w.category, dpfair.BudgetWarning)]


def test_cross_val_score_without_a_session_warns_naming_the_tool_and_the_spend():
    X, y = _numeric()
    est = dpfair.DPLogisticRegression(epsilon=1.5, epochs=2, bounds=BOUNDS)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        cross_val_score(est, X, y, cv=3)
    messages = _budget_warnings(record)
    assert len(messages) == 3  # one per fit under "always"; the default filter shows one
    assert "cross_val_score" in messages[0] and "epsilon = 1.5" in messages[0]
    assert "PrivacySession" in messages[0]


def test_grid_search_without_a_session_warns_naming_the_search():
    X, y = _numeric()
    search = GridSearchCV(
        dpfair.DPLogisticRegression(epochs=2, bounds=BOUNDS), {"learning_rate": [0.5, 1.0]}, cv=2
    )
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        search.fit(X, y)
    messages = _budget_warnings(record)
    assert messages and all("GridSearchCV" in m for m in messages)


def test_a_plain_fit_does_not_warn():
    X, y = _numeric()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        dpfair.DPLogisticRegression(epochs=2, bounds=BOUNDS).fit(X, y)
    assert _budget_warnings(record) == []


def test_with_a_session_the_fits_compose_and_the_one_past_the_budget_is_refused():
    X, y = _numeric()
    session = dpfair.PrivacySession(epsilon=2.5, delta=1e-4)
    est = dpfair.DPLogisticRegression(epsilon=1.0, epochs=2, bounds=BOUNDS, session=session)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with pytest.raises(dpfair.BudgetExceededError):
            cross_val_score(est, X, y, cv=3, error_score="raise")
    assert _budget_warnings(record) == []
    # Two fits of ε = 1 fit in 2.5; the third was refused before drawing noise.
    eps_left, _ = session.remaining
    assert abs(eps_left - 0.5) < 1e-9


def test_a_session_cannot_be_pickled_for_a_worker_process():
    with pytest.raises(TypeError, match="n_jobs=1"):
        pickle.dumps(dpfair.PrivacySession(epsilon=1.0))
