"""dpfair: machine learning that is both differentially private and fair.

scikit-learn-style estimators over the dpfair Rust library (the same code as the `dpfair`
command line, and the same model files), fairness metrics under Fairlearn's names
(`dpfair.metrics`) and DP-SGD accounting under Opacus's (`dpfair.accounting`).

Example:
    >>> import numpy as np, pandas as pd, dpfair
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"age": rng.integers(18, 90, 3000),
    ...                    "sex": rng.choice(["F", "M"], 3000)})
    >>> y = np.where(df.age + 10 * (df.sex == "M") > 55, ">50K", "<=50K")
    >>> clf = dpfair.CDPFairClassifier(alpha=0.05, epsilon=1.0, frequencies=64,
    ...                                bounds={"age": (17, 90)})
    >>> clf = clf.fit(df, y, sensitive_features="sex")
    >>> pred = clf.predict(df, sensitive_features=df["sex"])
    >>> clf.ledger_["total"]["epsilon"] <= 1.0
    True

"""

from __future__ import annotations

from typing import Any

from dpfair import accounting, metrics
from dpfair._base import DPFairEstimator
from dpfair._native import BudgetExceededError
from dpfair._warnings import (
    BoundsWarning,
    BudgetWarning,
    ConstantModelWarning,
    FairnessWarning,
    PrivacyWarning,
)
from dpfair.estimators import (
    CDPFairClassifier,
    DecoupledFairClassifier,
    DP2DPClassifier,
    DPLinearRegression,
    DPLogisticRegression,
    FDPFairClassifier,
    GroupThresholdsClassifier,
    LPCTClassifier,
    LPCTPruneClassifier,
    PrivateFairRegressor,
)
from dpfair.search import PrivateSearchCV
from dpfair.session import PrivacySession

__all__ = [
    "BoundsWarning",
    "BudgetExceededError",
    "BudgetWarning",
    "CDPFairClassifier",
    "ConstantModelWarning",
    "DP2DPClassifier",
    "DPFairEstimator",
    "DPLinearRegression",
    "DPLogisticRegression",
    "DecoupledFairClassifier",
    "FDPFairClassifier",
    "FairnessWarning",
    "GroupThresholdsClassifier",
    "LPCTClassifier",
    "LPCTPruneClassifier",
    "PrivacySession",
    "PrivacyWarning",
    "PrivateFairRegressor",
    "PrivateSearchCV",
    "accounting",
    "load",
    "metrics",
]

_BY_METHOD = {
    cls._method: cls
    for cls in (
        DPLogisticRegression,
        DPLinearRegression,
        CDPFairClassifier,
        FDPFairClassifier,
        PrivateFairRegressor,
        LPCTClassifier,
        LPCTPruneClassifier,
        DecoupledFairClassifier,
        DP2DPClassifier,
        GroupThresholdsClassifier,
    )
}


def load(path: Any) -> DPFairEstimator:
    """Read a model file (written by `save` or by `dpfair fit`) as a fitted estimator.

    The estimator's hyper-parameters are left at their defaults (the file's configuration is in
    `model_.config_json()`); `classes_` holds the class labels as text, as the file stores them.
    """
    import warnings

    from dpfair import _native

    model = _native.Model.load(str(path))
    if not model.verified:
        warnings.warn(
            f"{path}: a version-1 model file without a digest: its integrity and its ledger "
            "cannot be checked (unverified)",
            UserWarning,
            stacklevel=2,
        )
    return _fitted_estimator(model, str(path))


def _fitted_estimator(model: Any, origin: str) -> DPFairEstimator:
    """The fitted estimator of `model` (a native model file), hyper-parameters at defaults."""
    cls = _BY_METHOD.get(model.method)
    if cls is None and model.method == "constant-classifier":
        # A private search that released the constant classes: the searched method's class.
        import json

        methods = json.loads(model.selection_json() or "{}").get("methods") or [None]
        cls = _BY_METHOD.get(methods[0])
    if cls is None:
        raise ValueError(f"{origin}: a `{model.method}` model has no Python estimator")
    est = cls()
    est._set_fitted(model, None)
    est.n_features_in_ = len(model.feature_columns)
    return est
