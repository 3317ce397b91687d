"""One small, fast configuration per estimator, and how to fit it on the Adult-like frame."""

from __future__ import annotations

from typing import Any

import numpy as np
from conftest import BOUNDS

import dpfair

CLASSIFIERS = {
    "DPLogisticRegression": lambda **kw: dpfair.DPLogisticRegression(
        epsilon=1.0, epochs=5, bounds=BOUNDS, **kw
    ),
    "CDPFairClassifier": lambda **kw: dpfair.CDPFairClassifier(
        alpha=0.1, epsilon=1.0, frequencies=64, bounds=BOUNDS, **kw
    ),
    "FDPFairClassifier": lambda **kw: dpfair.FDPFairClassifier(
        alpha=0.1, epsilon=1.0, sites=2, frequencies=64, bounds=BOUNDS, **kw
    ),
    "DecoupledFairClassifier": lambda **kw: dpfair.DecoupledFairClassifier(
        epsilon=3.0, bounds=BOUNDS, **kw
    ),
    "DP2DPClassifier": lambda **kw: dpfair.DP2DPClassifier(
        rho=0.05, epsilon=1.0, iterations=20, bounds=BOUNDS, **kw
    ),
    "GroupThresholdsClassifier": lambda **kw: dpfair.GroupThresholdsClassifier(
        epsilon=1.0, epochs=5, bounds=BOUNDS, **kw
    ),
    "LPCTClassifier": lambda **kw: dpfair.LPCTClassifier(epsilon=2.0, **kw),
    "LPCTPruneClassifier": lambda **kw: dpfair.LPCTPruneClassifier(epsilon=2.0, **kw),
}
REGRESSORS = {
    "PrivateFairRegressor": lambda **kw: dpfair.PrivateFairRegressor(
        alpha=0.05, epsilon=1.0, bins=20, score_range=(0, 2), **kw
    ),
    "DPLinearRegression": lambda **kw: dpfair.DPLinearRegression(
        epsilon=1.0, target_range=(0, 3), bounds=BOUNDS, **kw
    ),
    # The post-processor chained after the private regressor, from features.
    "PrivateFairRegressor+base": lambda **kw: dpfair.PrivateFairRegressor(
        alpha=0.05,
        epsilon=1.0,
        bins=20,
        score_range=(0, 3),
        base=dpfair.DPLinearRegression(bounds=BOUNDS),
        **kw,
    ),
}
ALL = [*CLASSIFIERS, *REGRESSORS]
LPCT = ("LPCTClassifier", "LPCTPruneClassifier")


def make(name: str, **kw: Any) -> Any:
    if name in REGRESSORS:
        return REGRESSORS[name](**kw)
    return CLASSIFIERS[name](**kw)


def real_target(X: Any) -> Any:
    """A real response on the Adult-like frame (public formula): the score behind the labels."""
    sales = 0.2 * (X["job"] == "sales")
    return (X["age"] - 17) / 73 + X["hours"] / 99 + 0.35 * (X["sex"] == "Male") + sales


def scores(X: Any) -> Any:
    """A regressor's output on the Adult-like frame (public formula, for the post-processor)."""
    return ((X["age"] - 17) / 73 + X["hours"] / 99).to_frame("score")


def fit_args(name: str, X: Any, y: Any, public: tuple) -> tuple:
    """(X, y, fit keyword arguments) for `name` on the Adult-like data: the text sensitive
    column by name, the public rows for LPCT, scores and a real target for the regressor."""
    if name in LPCT:
        Xp, yp = public
        return X, y, {"X_public": Xp, "y_public": yp}
    if name == "PrivateFairRegressor":
        s = scores(X)
        return s, s["score"] + 0.1, {"sensitive_features": X["sex"]}
    if name in REGRESSORS:
        return X, real_target(X), {"sensitive_features": "sex"}
    if name == "DP2DPClassifier":
        y3 = np.where(X["age"] < 35, "young", np.where(X["age"] < 55, "middle", "senior"))
        return X.drop(columns="sex"), y3, {"sensitive_features": X["sex"]}
    return X, y, {"sensitive_features": "sex"}


def predict_kwargs(name: str, X: Any) -> dict:
    if name in LPCT:
        return {}
    return {"sensitive_features": X["sex"]}


def predict_input(name: str, X: Any) -> Any:
    """Prediction input: the frame itself (columns the model does not use are ignored), or the
    scores for the regressor."""
    return scores(X) if name == "PrivateFairRegressor" else X
