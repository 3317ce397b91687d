"""The scikit-learn protocol on every estimator: clone, set_params, Pipeline with a
preprocessing step."""

from __future__ import annotations

import pandas as pd
import pytest
from estimator_cases import ALL, LPCT, fit_args, make, predict_input, predict_kwargs
from sklearn.base import clone
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

import dpfair


def _hours_to_days(X: pd.DataFrame) -> pd.DataFrame:
    """A data-independent preprocessing step (fits nothing on the private data)."""
    if "hours" not in getattr(X, "columns", []):
        return X
    return X.assign(hours=X["hours"] / 24.0)


def _plain(params: dict) -> dict:
    """Parameters with nested estimators replaced by their own parameters (clone copies them)."""
    return {k: v.get_params() if hasattr(v, "get_params") else v for k, v in params.items()}


@pytest.mark.parametrize("name", ALL)
def test_clone_and_set_params(name):
    est = make(name, random_state=3)
    params = est.get_params()
    assert params["random_state"] == 3
    twin = clone(est)
    assert twin is not est and _plain(twin.get_params()) == _plain(params)
    twin.set_params(random_state=4)
    assert twin.random_state == 4 and est.random_state == 3
    with pytest.raises(ValueError, match="invalid parameter `no_such`"):
        twin.set_params(no_such=1)
    assert type(est).__name__ in repr(est)


@pytest.mark.parametrize("name", ALL)
def test_pipeline_with_a_preprocessing_step(name, adult, adult_public):
    X, y = adult
    Xf, yf, kw = fit_args(name, X, y, adult_public)
    est = make(name, random_state=5)
    if getattr(est, "bounds", None) is not None:
        est.set_params(bounds={"age": (17, 90), "hours": (1 / 24, 99 / 24)})
    pipe = Pipeline([("days", FunctionTransformer(_hours_to_days)), ("est", est)])
    if name in LPCT:
        # The public rows get the same (public) preprocessing as the private ones.
        kw["X_public"] = _hours_to_days(kw["X_public"])
    pipe.fit(Xf, yf, **{f"est__{k}": v for k, v in kw.items()})
    pred = pipe.predict(predict_input(name, X), **predict_kwargs(name, X))
    assert len(pred) == len(X)
    fitted = pipe.named_steps["est"]
    assert hasattr(fitted, "ledger_")
    # A clone of the fitted pipeline is unfitted, with the same hyper-parameters.
    again = clone(pipe)
    assert not hasattr(again.named_steps["est"], "ledger_")
    assert _plain(again.named_steps["est"].get_params()) == _plain(fitted.get_params())


def test_clone_keeps_the_session(adult):
    session = dpfair.PrivacySession(epsilon=2.0, delta=1e-5)
    est = dpfair.DPLogisticRegression(epsilon=1.0, epochs=2, session=session)
    assert clone(est).session is session


def test_unfitted_predict_is_an_error(adult):
    from sklearn.exceptions import NotFittedError

    X, _ = adult
    with pytest.raises(NotFittedError, match="not fitted"):
        dpfair.CDPFairClassifier().predict(X, sensitive_features=X["sex"])
