"""scikit-learn's estimator checks (`parametrize_with_checks`) on every estimator.

Each estimator runs every check that applies to it; the ones it cannot pass are declared below
with a reason (at most 10 per estimator, `test_declared_failures_are_few_and_real`), through
scikit-learn's current API (`expected_failed_checks`; the `_xfail_checks` tag is gone since
scikit-learn 1.6).

The checks call `fit(X, y)` on a few dozen rows and nothing else, so the estimators that need
more are run through a thin subclass that supplies it, and nothing else:

* the fair classifiers and the fair regressor need groups: a public group per row, a hash of
  the row's values (the same row always gets the same group, so predictions on a subset or in
  another order are comparable);
* the LPCTs need public rows: the check's own rows (test data: nothing here is private);
* the decoupled classifier trains on splits of at least 40 rows (`MIN_SPLIT_ROWS`): its rows
  are repeated to reach them.

The checks' data have no public bounds, so the estimators that scale features do not
(`unscaled=True`): on 20 rows, private bounds would be no better than a guess (a
`BoundsWarning` on every fit).
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import pytest
from sklearn.utils.estimator_checks import estimator_checks_generator, parametrize_with_checks

import dpfair


def _row_groups(X: Any) -> Any:
    """A group per row from the row's values (public, deterministic), or None if X is not 2-D."""
    rows = np.asarray(X.to_numpy() if hasattr(X, "to_numpy") else X)
    if rows.ndim != 2:
        return None
    return np.array(["a", "b"])[[zlib.crc32(repr(r.tolist()).encode()) % 2 for r in rows]]


def _groups(X: Any, given: Any) -> Any:
    return _row_groups(X) if given is None else given


class _WithGroups:
    """Groups from the rows when the caller (a check) gives none."""

    def fit(self, X, y, sensitive_features=None):
        return super().fit(X, y, _groups(X, sensitive_features))

    def predict(self, X, sensitive_features=None):
        return super().predict(X, _groups(X, sensitive_features))

    def score(self, X, y, sensitive_features=None, sample_weight=None):
        return super().score(X, y, _groups(X, sensitive_features), sample_weight)


class _ProbaWithGroups(_WithGroups):
    def predict_proba(self, X, sensitive_features=None):
        return super().predict_proba(X, _groups(X, sensitive_features))


class CDPFairWithGroups(_ProbaWithGroups, dpfair.CDPFairClassifier):
    pass


class FDPFairWithGroups(_ProbaWithGroups, dpfair.FDPFairClassifier):
    pass


class DP2DPWithGroups(_ProbaWithGroups, dpfair.DP2DPClassifier):
    pass


class GroupThresholdsWithGroups(_ProbaWithGroups, dpfair.GroupThresholdsClassifier):
    pass


class FairRegressorWithGroups(_WithGroups, dpfair.PrivateFairRegressor):
    pass


class DecoupledWithGroups(_ProbaWithGroups, dpfair.DecoupledFairClassifier):
    """Rows repeated to the method's smallest split (40 rows each), groups from the rows."""

    def fit(self, X, y, sensitive_features=None):
        dense = isinstance(X, (np.ndarray, list)) or hasattr(X, "iloc")
        n = len(X) if dense else 0
        if n >= 2 and y is not None and n < _DECOUPLED_ROWS:
            again = np.tile(np.arange(n), -(-_DECOUPLED_ROWS // n))
            X = X.iloc[again] if hasattr(X, "iloc") else np.asarray(X)[again]
            y = np.asarray(y)[again]
        return super().fit(X, y, sensitive_features)


# Each of the decoupled classifier's splits (a third for the rates, the held-out check's
# tenth) keeps at least 40 rows.
_DECOUPLED_ROWS = 200


class _WithPublicRows:
    """The check's rows as the public rows too (test data)."""

    def fit(self, X, y, sensitive_features=None):
        return super().fit(X, y, sensitive_features, X_public=X, y_public=y)


class LPCTWithPublicRows(_WithPublicRows, dpfair.LPCTClassifier):
    pass


class LPCTPruneWithPublicRows(_WithPublicRows, dpfair.LPCTPruneClassifier):
    pass


ESTIMATORS = [
    dpfair.DPLogisticRegression(epochs=2, unscaled=True),
    dpfair.DPLinearRegression(unscaled=True, target_range=(-10.0, 10.0)),
    CDPFairWithGroups(frequencies=16, unscaled=True),
    FDPFairWithGroups(frequencies=16, sites=1, unscaled=True),
    DecoupledWithGroups(unscaled=True),
    DP2DPWithGroups(iterations=20, unscaled=True),
    GroupThresholdsWithGroups(epochs=2, unscaled=True),
    LPCTWithPublicRows(),
    LPCTPruneWithPublicRows(),
    FairRegressorWithGroups(
        base=dpfair.DPLinearRegression(unscaled=True), score_range=(-10.0, 10.0)
    ),
]

# Fresh noise: two fits on the same rows release different noise (the operating system's,
# whatever random_state says: it seeds public randomness only), so checks that compare the
# predictions of two fits cannot pass. Declared where they failed in repeated runs (the LPCTs'
# trees on the checks' few rows, and some held-out checks' constants, come out alike).
_TWO_FITS = {
    "check_fit_idempotent": "fit draws fresh release noise: two fits differ",
    "check_supervised_y_2d": "compares two fits (y 1-D and as a column): fresh noise in each",
}
_CLASSIFIER = {
    **_TWO_FITS,
    "check_classifier_data_not_an_array": "compares two fits (array, array-like): fresh noise",
}
_FAIR_CLASSIFIER = {
    **_CLASSIFIER,
    "check_pipeline_consistency": "compares a fit and a fit in a Pipeline: fresh noise in each",
}
_REGRESSOR = {
    **_TWO_FITS,
    "check_regressor_data_not_an_array": "compares two fits (array, array-like): fresh noise",
    "check_regressors_int": "compares two fits (integer and float y): fresh noise in each",
    "check_supervised_y_no_nan": (
        "a missing (NaN) target is filled by the library's public rule (docs/privacy.md), "
        "not refused"
    ),
}
EXPECTED_FAILURES = {
    "DPLogisticRegression": _CLASSIFIER,
    "DPLinearRegression": _REGRESSOR,
    "CDPFairWithGroups": _FAIR_CLASSIFIER,
    "FDPFairWithGroups": {
        **_FAIR_CLASSIFIER,
        # When the released threshold straddles (docs/deviations.md#fdp-fair-randomised-straddle)
        # predict draws between two rules: a row with P(1) in (0, 1) may go either way (it did,
        # 5 of 200 rows, in one CI run in several).
        "check_classifiers_train": (
            "randomized predictor: predict draws between two thresholds, not argmax(proba)"
        ),
    },
    "DecoupledWithGroups": {
        **_FAIR_CLASSIFIER,
        "check_classifiers_train": (
            "randomized predictor: predict draws the group's flips, not argmax(predict_proba)"
        ),
    },
    "DP2DPWithGroups": {
        **_FAIR_CLASSIFIER,
        # Denis et al.'s tie-break: U(0, 1e-5) jitter per row, one seeded stream in row order.
        "check_methods_sample_order_invariance": "randomized tie-break: jitter drawn in row order",
        "check_methods_subset_invariance": "randomized tie-break: jitter drawn in row order",
        "check_classifiers_train": "randomized tie-break: predict is not always argmax(proba)",
    },
    "GroupThresholdsWithGroups": {
        **_FAIR_CLASSIFIER,
        # A row whose group's rule mixes two thresholds at its score bin is drawn, one seeded
        # stream in row order (each failed in some of 8 runs).
        "check_classifiers_train": (
            "randomized predictor: predict draws the group's randomised threshold, not "
            "argmax(predict_proba)"
        ),
        "check_methods_sample_order_invariance": "randomized predictions: drawn in row order",
        "check_methods_subset_invariance": "randomized predictions: drawn in row order",
    },
    "LPCTWithPublicRows": {},
    "LPCTPruneWithPublicRows": {},
    "FairRegressorWithGroups": {
        **_REGRESSOR,
        "check_methods_sample_order_invariance": "randomized predictions: drawn in row order",
        "check_methods_subset_invariance": "randomized predictions: drawn in row order",
    },
}


def _expected(est: Any) -> dict:
    return EXPECTED_FAILURES[type(est).__name__]


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_declared_failures_are_few_and_real(est):
    """At most 10 declared per estimator, each the name of a check that runs on it."""
    declared = _expected(est)
    assert len(declared) <= 10
    names = {
        getattr(check, "func", check).__name__
        for _, check in estimator_checks_generator(est, mark="skip")
    }
    assert set(declared) <= names, set(declared) - names
