"""`PrivateSearchCV`: a hyper-parameter search that spends like one fit (`dpfair::tune`).

scikit-learn's `GridSearchCV` fits every candidate on overlapping rows and compares their exact
scores: each fit spends its ε, and the scores are not private. `PrivateSearchCV` runs the
library's private selection instead (Liu & Talwar's random stopping): the rows are split once
by a public random split into fit rows and selection rows (`selection_fraction`), a secret
random number of runs each fits a candidate drawn at random on the fit rows and scores it on
the selection rows by its accuracy plus Laplace noise, and only the best run is kept. Beside it
the constant classes (the fit rows' most frequent class and its noisy count) are released once,
and the best run's model is released only if it beats them by a public margin. The whole search
spends the estimator's own (ε, δ) (three ledger entries: the search, and the constant's two
parallel releases): what one fit of the estimator would spend. docs/tuning.md has the details.
"""

from __future__ import annotations

import itertools
import json
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from dpfair import _native
from dpfair._base import DPFairEstimator, Params, _not_fitted
from dpfair._ledger import Ledger
from dpfair._repeated_fits import warn_if_repeated
from dpfair._warnings import ConstantModelWarning

#: Hyper-parameters a grid may not vary, and why.
_FIXED = {
    **dict.fromkeys(
        ("alpha", "rho", "margin_z", "level", "constraint"),
        "the fairness level: the search scores accuracy only, so every candidate must hold the "
        "same fairness constraint (set it on the estimator)",
    ),
    **dict.fromkeys(
        ("epsilon", "delta", "accounting"),
        "the privacy budget: the whole search spends the estimator's (ε, δ) once (set it on "
        "the estimator)",
    ),
    "substitution": (
        "the neighbouring relation: a search certifies replace-one neighbours, as every "
        "candidate must"
    ),
    **dict.fromkeys(
        ("bounds", "coarse_bounds", "bounds_share", "unscaled", "pos_label", "groups", "classes"),
        "the search codes and scales the rows once (set it on the estimator)",
    ),
    **dict.fromkeys(
        ("session", "random_state"),
        "the search runs in one session with one public seed (set it on the estimator)",
    ),
}


def _grid(param_grid: Any) -> list:
    """The candidates of `param_grid` (a dict of lists, or a list of such dicts).

    In scikit-learn's `ParameterGrid` order: each dict in turn, its names sorted, every
    combination of their values.
    """
    grids = [param_grid] if isinstance(param_grid, Mapping) else param_grid
    if not isinstance(grids, Sequence) or isinstance(grids, str):
        raise TypeError(f"param_grid must be a dict or a list of dicts, got {param_grid!r}")
    out = []
    for grid in grids:
        if not isinstance(grid, Mapping):
            raise TypeError(f"param_grid must be a dict or a list of dicts, got {grid!r}")
        names = sorted(grid)
        for name in names:
            values = grid[name]
            if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
                raise TypeError(
                    f"param_grid[{name!r}] must be a list of values, got {type(values).__name__}"
                )
            if len(list(values)) == 0:
                raise ValueError(f"param_grid[{name!r}] is empty: give it at least one value")
        for values in itertools.product(*(list(grid[n]) for n in names)):
            out.append(dict(zip(names, values)))
    if not out:
        raise ValueError("param_grid gives no candidate")
    return out


class PrivateSearchCV(Params):
    """A private hyper-parameter search: one fit's privacy budget for the whole search.

    Parameters
    ----------
    estimator : DPFairEstimator
        A `DPLogisticRegression`, `CDPFairClassifier`, `DecoupledFairClassifier`,
        `DP2DPClassifier` or `GroupThresholdsClassifier` (the classifiers under central DP, as
        `dpfair tune`: scoring the runs reads raw held-out labels, which FDP-Fair's federated
        and LPCT's local trust models rule out). Its settings are every candidate's, its
        `epsilon` and `delta` the whole search's, its `session` and `random_state` the search's
        (unless `session` is given here).
    param_grid : dict or list of dicts
        The candidates, as scikit-learn's `ParameterGrid` reads them (a dict of lists of
        values, or a list of such dicts). It may not vary the fairness level (`alpha`, `rho`,
        `margin_z`, `level`, `constraint`: the search scores accuracy only, fairness enters
        through each candidate's own constraint), the privacy budget (`epsilon`, `delta`,
        `accounting`), the neighbouring relation (`substitution`), the feature coding and
        scaling, the session or the seed.
    selection_fraction : float
        The share of the rows held out to score the runs (a public random split).
    mean_runs : int or None
        The mean of the secret number of runs (at least 2). None: the library's default, twice
        the number of candidates it draws from.
    session : dpfair.PrivacySession or None
        The session the search is charged to. None: the estimator's, else one of its own whose
        budget is the estimator's (ε, δ).

    What is released is the chosen run's model and its noisy accuracy; the number of runs and
    the other runs' scores stay secret (the privacy theorem covers the best run only), so there
    is no `cv_results_`. The library also releases always predicting the fit rows' most frequent
    class, and keeps it unless the best run beats it by a public margin: then `best_params_` is
    None, `constant_` is that class and the search warns (`ConstantModelWarning`).

    Attributes (after `fit`): `best_estimator_` (a fitted estimator of the base class with the
    chosen parameters, predicting through the chosen model), `best_params_`, `best_index_`
    (into the grid's candidates), `best_score_` (the released noisy accuracy on the selection
    rows), `selection_` (a dict: `candidates` (each candidate's configuration as the library
    recorded it), `chosen`, `noisy_accuracy`, `selection_rows`, `run_epsilon`, `mean_runs`,
    `rule`), `ledger_` (everything the search spent), `classes_`, `constant_`.

    Example:
        >>> import numpy as np, dpfair
        >>> rng = np.random.default_rng(0)
        >>> X = rng.uniform(size=(3000, 2)); y = (X[:, 0] + X[:, 1] > 1).astype(int)
        >>> bounds = {"x0": (0, 1), "x1": (0, 1)}
        >>> est = dpfair.DPLogisticRegression(epsilon=2.0, epochs=5, bounds=bounds)
        >>> grid = {"learning_rate": [0.1, 0.5], "mechanism": ["dp-sgd", "output-perturbation"]}
        >>> search = dpfair.PrivateSearchCV(est, grid).fit(X, y)
        >>> len(search.ledger_["entries"]), search.ledger_["total"]["epsilon"] <= 2.0 + 1e-9
        (3, True)
        >>> len(search.selection_["candidates"])
        4
        >>> search.predict(X[:3]).shape
        (3,)

    """

    def __init__(
        self,
        estimator: Any,
        param_grid: Any,
        *,
        selection_fraction: float = 0.2,
        mean_runs: int | None = None,
        session: Any = None,
    ) -> None:
        self.estimator = estimator
        self.param_grid = param_grid
        self.selection_fraction = selection_fraction
        self.mean_runs = mean_runs
        self.session = session

    def _checked(self) -> tuple:
        """The base estimator, the grid's candidates (dicts) and their estimators."""
        est = self.estimator
        if not isinstance(est, DPFairEstimator):
            raise TypeError(f"estimator must be a dpfair estimator, got {type(est).__name__}")
        grid = _grid(self.param_grid)
        valid = est._get_param_names()
        for params in grid:
            for name in params:
                if name not in valid:
                    raise ValueError(
                        f"param_grid: invalid parameter `{name}` for {type(est).__name__}; "
                        f"valid parameters: {', '.join(valid)}"
                    )
                if name in _FIXED:
                    raise ValueError(f"param_grid may not vary `{name}`: {_FIXED[name]}")
        mean_runs = self.mean_runs
        if mean_runs is not None and (
            isinstance(mean_runs, bool) or not isinstance(mean_runs, int) or mean_runs < 2
        ):
            raise ValueError(f"mean_runs must be an integer ≥ 2 or None, got {mean_runs!r}")
        base = est.get_params(deep=False)
        return est, grid, [type(est)(**{**base, **params}) for params in grid]

    def _session(self, est: DPFairEstimator) -> Any:
        """The session the search is charged to (`None`: one of its own)."""
        mine, theirs = self.session, getattr(est, "session", None)
        if mine is not None and theirs is not None and mine is not theirs:
            raise ValueError(
                "session and estimator.session are different sessions: a search is charged to "
                "one (give it once)"
            )
        return mine if mine is not None else theirs

    def fit(self, X: Any, y: Any, sensitive_features: Any = None) -> PrivateSearchCV:
        """Search on features `X`, target `y` and the groups `sensitive_features`.

        `sensitive_features` is an array-like or the name of a column of X. Returns `self`.
        """
        est, grid, candidates = self._checked()
        session = self._session(est)
        if session is None:
            warn_if_repeated(est)
        frame = est._fit_input(X, y, sensitive_features)
        model = _native.tune(
            est._method,
            [c._native_params() for c in candidates],
            frame,
            est._coding(frame),
            float(self.selection_fraction),
            self.mean_runs,
            None if session is None else session._native,
            getattr(est, "random_state", None),
        )
        selection = json.loads(model.selection_json())
        chosen = selection["chosen"]
        constant = chosen == len(candidates)
        best = type(est)(**est.get_params(deep=False)) if constant else candidates[chosen]
        best._set_fitted(model, y, frame)
        if constant:
            code = json.loads(model.config_json())["constant"]
            best.constant_ = best.classes_[code]
            warnings.warn(
                ConstantModelWarning(
                    f"PrivateSearchCV: no candidate's noisy accuracy beat always predicting "
                    f"{best.constant_!r}, and the search released that constant; more rows, a "
                    "larger epsilon or other candidates may give a model that beats it"
                ),
                stacklevel=2,
            )
        self.best_estimator_ = best
        self.best_index_ = chosen
        self.best_params_ = None if constant else grid[chosen]
        self.best_score_ = selection["noisy_accuracy"]
        self.selection_ = selection
        self.n_features_in_ = best.n_features_in_
        if hasattr(best, "feature_names_in_"):
            self.feature_names_in_ = best.feature_names_in_
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        return self

    def _best(self) -> DPFairEstimator:
        if "best_estimator_" not in self.__dict__:
            raise _not_fitted(self)
        return self.best_estimator_

    def __sklearn_is_fitted__(self) -> bool:
        return "best_estimator_" in self.__dict__

    def __sklearn_tags__(self) -> Any:
        return self.estimator.__sklearn_tags__()

    @property
    def ledger_(self) -> Ledger:
        """Everything the search spent: at most the estimator's (ε, δ)."""
        return self._best().ledger_

    @property
    def classes_(self) -> Any:
        """The class labels, as the best estimator's."""
        return self._best().classes_

    @property
    def constant_(self) -> Any:
        """The class always predicted, when the model is a constant; else `None`."""
        return self._best().constant_

    def predict(self, X: Any, sensitive_features: Any = None) -> Any:
        """The best estimator's predictions."""
        return self._best().predict(X, sensitive_features)

    def predict_proba(self, X: Any, sensitive_features: Any = None) -> Any:
        """The best estimator's class probabilities."""
        return self._best().predict_proba(X, sensitive_features)

    def score(
        self, X: Any, y: Any, sensitive_features: Any = None, sample_weight: Any = None
    ) -> float:
        """The best estimator's accuracy on `X`, `y` (exact: not a private release)."""
        return self._best().score(X, y, sensitive_features, sample_weight)
