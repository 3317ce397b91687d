"""The estimators: one class per dpfair method, scikit-learn style.

Every estimator fits through the Rust library (`dpfair::estimators`), charges its releases to a
privacy ledger (`ledger_` after `fit`), and saves the model file `dpfair predict` reads.
Each hyper-parameter's default in the signature is the library's (the value `dpfair fit`
uses, so `help()` and `repr` show the ε a fit spends); `None` stands for a default that depends
on the data, such as δ = (N/2)⁻² or the expected batch n/16, stated in its `Parameters` entry.

As scikit-learn estimators: `score(X, y)` is the accuracy of a classifier and the R² of a
regressor (the fair classifiers take `sensitive_features` there too, as in `predict`), so
`cross_val_score(est, X, y)` needs no `scoring=`; `fit` sets `n_features_in_` (and
`feature_names_in_` for a DataFrame), and `predict` refuses other columns with scikit-learn's
messages (the group column may be in X or not); a sparse matrix is a `TypeError` (convert
with `X.toarray()`), nested lists are read as an array, and a continuous target given to a
classifier is scikit-learn's `ValueError` ("Unknown label type: continuous").
`tests/test_sklearn_checks.py` runs scikit-learn's estimator checks on every estimator, with
the few it cannot pass (fresh release noise in every fit, randomized predictions) declared.

Common hyper-parameters:

* `session`: a `dpfair.PrivacySession` the fit is charged to (several fits compose against one
  budget; an overspend raises `dpfair.BudgetExceededError` before any noise is drawn). Without
  one, the fit runs in a session of its own whose budget is exactly what its parameters say.
* `random_state`: seeds the *public* randomness only (splits, random bases, tree seeds) and
  the draws of a randomized predictor. Release noise always comes from the operating system.
* `bounds`: public bounds `{column: (lo, hi)}` of the numeric feature columns: features are
  clipped and scaled to [0, 1] with them (free: no privacy spent). The bounds of the other
  numeric columns are estimated privately with `bounds_share` of ε (default 0.05), within
  `coarse_bounds` (wide public ranges) where given, else from a public log-scale grid, as the
  CLI does; 0/1 columns are [0, 1] for free. `unscaled=True` leaves every feature as it is.
* `pos_label`: the positive class of a binary target (default: the larger label, numerically
  for numbers, else in string order: `1` over `0`, `>50K` over `<=50K`, `True` over `False`).
* `groups`, `classes`: declare the sensitive groups and the target's classes (public), in code
  order, as `--groups` and `--classes` do; a value outside them is an error, and a declared level
  need not occur in the data. Without them the levels are those found in the data, recorded in
  the model as public schema information.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from dpfair._base import DPFairEstimator, _same
from dpfair._docs import parameters
from dpfair._input import to_frame

__all__ = [
    "DPLogisticRegression",
    "DPLinearRegression",
    "CDPFairClassifier",
    "FDPFairClassifier",
    "PrivateFairRegressor",
    "LPCTClassifier",
    "LPCTPruneClassifier",
    "DecoupledFairClassifier",
    "DP2DPClassifier",
    "GroupThresholdsClassifier",
]


def _given(**params: Any) -> dict:
    """The hyper-parameters that have a value (None: the library's data-dependent default)."""
    return {k: v for k, v in params.items() if v is not None}


def _changed(est: Any, name: str) -> bool:
    """Whether `est`'s hyper-parameter `name` differs from its signature's default."""
    default = inspect.signature(type(est).__init__).parameters[name].default
    return not _same(default, getattr(est, name))


class _ProbabilisticClassifier(DPFairEstimator):
    """A classifier whose model gives class probabilities."""

    def predict_proba(self, X: Any, sensitive_features: Any = None) -> np.ndarray:
        """Class probabilities, one column per class of `classes_`."""
        out = self._predict_native(X, sensitive_features)
        if "probabilities" not in out:
            raise AttributeError(f"{type(self).__name__}'s model has no probabilities")
        return np.asarray(out["probabilities"])


def _scaling_params(est: Any) -> dict:
    return _given(
        bounds=None if est.bounds is None else _bounds_list(est.bounds),
        coarse_bounds=None if est.coarse_bounds is None else _bounds_list(est.coarse_bounds),
        bounds_share=est.bounds_share,
        unscaled=est.unscaled,
    )


def _bounds_list(bounds: Any) -> list:
    if not isinstance(bounds, dict):
        raise TypeError(f"bounds must be a dict {{column: (lo, hi)}}, got {type(bounds).__name__}")
    out = []
    for col, pair in bounds.items():
        try:
            lo, hi = pair
        except (TypeError, ValueError):
            raise ValueError(f"bounds[{col!r}] must be a pair (lo, hi), got {pair!r}") from None
        out.append((str(col), float(lo), float(hi)))
    return out


@parameters(
    mechanism='"dp-sgd" (Opacus\'s DP-SGD) or "output-perturbation" (Gaussian, of the model).',
    epochs="DP-SGD epochs.",
    learning_rate="DP-SGD learning rate.",
    clip="DP-SGD per-example clipping norm.",
    batch_size="DP-SGD expected batch. None: n/16 clamped to 16..1024.",
    accountant='The DP-SGD accountant: "rdp", "prv" or "gdp" (an approximation: not certified).',
    substitution=(
        "Replace-one neighbours (every dpfair method's); False: add/remove-one, as Opacus "
        '(docs/privacy.md, "The row count under add/remove").'
    ),
    public_rows="Under add/remove: a public row count for the schedule. None: a noisy count.",
    feature_bound="Output perturbation: the ℓ2 bound of a row's features.",
)
class DPLogisticRegression(_ProbabilisticClassifier):
    """Differentially private logistic regression (privacy only, no fairness constraint).

    DP-SGD with Opacus's semantics (Poisson sampling, per-example clipping, Gaussian noise),
    or Gaussian output perturbation of L2-regularised logistic regression. Library defaults:
    ε = 1, δ = 10⁻⁵, DP-SGD, 30 epochs, expected batch n/16 clamped to 16..1024, learning rate
    0.5, clipping norm 1, the RDP accountant, replace-one neighbours like every dpfair method
    (`substitution=False`: add/remove-one, as Opacus; the row count is then private, so the
    schedule comes from `public_rows` or from a noisy count released with 2% of ε:
    docs/privacy.md, "The row count under add/remove").

    Example:
        >>> import numpy as np, dpfair
        >>> rng = np.random.default_rng(0)
        >>> X = rng.uniform(size=(2000, 3)); y = (X[:, 0] + X[:, 1] > 1).astype(int)
        >>> clf = dpfair.DPLogisticRegression(epsilon=2.0).fit(X, y)
        >>> float(clf.ledger_["total"]["epsilon"]) <= 2.0
        True

        Accuracy is random (the noise is real): its median here is about 0.9, and in 8,000 fits
        none fell below 0.68; always predicting one class scores about 0.5.

        >>> bool((clf.predict(X) == y).mean() > 0.55)
        True

    """

    _method = "dp-logistic"
    _multi_class = True

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        delta: float = 1e-5,
        mechanism: str = "dp-sgd",
        epochs: int = 30,
        learning_rate: float = 0.5,
        clip: float = 1.0,
        batch_size: int | None = None,
        accountant: str = "rdp",
        substitution: bool = True,
        public_rows: int | None = None,
        feature_bound: float = 1.0,
        bounds: dict | None = None,
        coarse_bounds: dict | None = None,
        bounds_share: float = 0.05,
        unscaled: bool = False,
        pos_label: Any = None,
        classes: list | None = None,
        check_fraction: float = 0.1,
        session: Any = None,
        random_state: int | None = None,
        n_jobs: int | None = None,
    ) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.mechanism = mechanism
        self.epochs = epochs
        self.learning_rate = learning_rate
        self.clip = clip
        self.batch_size = batch_size
        self.accountant = accountant
        self.substitution = substitution
        self.public_rows = public_rows
        self.feature_bound = feature_bound
        self.bounds = bounds
        self.coarse_bounds = coarse_bounds
        self.bounds_share = bounds_share
        self.unscaled = unscaled
        self.pos_label = pos_label
        self.classes = classes
        self.check_fraction = check_fraction
        self.session = session
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _native_params(self) -> dict:
        return {
            **_given(
                check_fraction=self.check_fraction,
                epsilon=self.epsilon,
                delta=self.delta,
                mechanism=self.mechanism,
                epochs=self.epochs,
                learning_rate=self.learning_rate,
                clip=self.clip,
                batch_size=self.batch_size,
                accountant=self.accountant,
                substitution=self.substitution,
                public_rows=self.public_rows,
                feature_bound=self.feature_bound,
            ),
            **_scaling_params(self),
        }


@parameters(
    target_range="The target's public range (lo, hi) (free); give it or coarse_target_range.",
    coarse_target_range="A wide public range (lo, hi) the target's range is estimated in.",
    target_share="The share of ε spent on the private target range.",
    row_bound="The ℓ2 clipping norm of a row. None: √(number of source columns).",
    ridge="The ridge. None: the automatic ridge that keeps the noisy XᵀX positive definite.",
)
class DPLinearRegression(DPFairEstimator):
    """Differentially private linear (ridge) regression by noisy sufficient statistics.

    One Gaussian release (analytic calibration at (ε, δ), exact discrete noise) of XᵀX and Xᵀy
    over rows clipped to ℓ2 norm `row_bound` and a target clipped to its range, solved with a
    ridge that keeps the noisy XᵀX positive definite (`docs/privacy.md`, "DP linear
    regression"). Give public `bounds` (or `coarse_bounds`) so features lie on [0, 1], and the
    target's range: public `target_range=(lo, hi)` (free) or `coarse_target_range=(lo, hi)`
    within which it is estimated privately with `target_share` of ε (default 0.05).
    Predictions lie in the range. Library defaults: ε = 1, δ = 10⁻⁵, R = √(number of source
    columns: one per numeric column and one per one-hot group), the automatic ridge, a held-out
    check against the released mean (`check_fraction`, 0.1); replace-one neighbours.

    Chain `PrivateFairRegressor(base=DPLinearRegression(...))` for fair predictions from
    features.

    Example:
        >>> import numpy as np, dpfair
        >>> rng = np.random.default_rng(0)
        >>> # 20,000 rows: on 5,000 at ε = 1 the held-out check chose the mean in 7 fits of 40.
        >>> X = rng.uniform(size=(20000, 2))
        >>> y = 2 * X[:, 0] - X[:, 1] + 0.1 * rng.normal(size=20000)
        >>> reg = dpfair.DPLinearRegression(epsilon=1.0, target_range=(-2, 3)).fit(X, y)
        >>> bool(np.mean((reg.predict(X) - y) ** 2) < np.var(y))
        True

    """

    _method = "dp-linear"
    _regression = True

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        delta: float = 1e-5,
        target_range: tuple | None = None,
        coarse_target_range: tuple | None = None,
        target_share: float = 0.05,
        row_bound: float | None = None,
        ridge: float | None = None,
        bounds: dict | None = None,
        coarse_bounds: dict | None = None,
        bounds_share: float = 0.05,
        unscaled: bool = False,
        check_fraction: float = 0.1,
        session: Any = None,
        random_state: int | None = None,
        n_jobs: int | None = None,
    ) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.target_range = target_range
        self.coarse_target_range = coarse_target_range
        self.target_share = target_share
        self.row_bound = row_bound
        self.ridge = ridge
        self.bounds = bounds
        self.coarse_bounds = coarse_bounds
        self.bounds_share = bounds_share
        self.unscaled = unscaled
        self.check_fraction = check_fraction
        self.session = session
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _native_params(self) -> dict:
        return {
            **_given(
                check_fraction=self.check_fraction,
                epsilon=self.epsilon,
                delta=self.delta,
                target_range=_pair("target_range", self.target_range),
                coarse_target_range=_pair("coarse_target_range", self.coarse_target_range),
                target_share=self.target_share,
                row_bound=self.row_bound,
                ridge=self.ridge,
            ),
            **_scaling_params(self),
        }


#: `constraint` of the classifiers whose own algorithm is for demographic parity between two
#: groups (CDP-Fair, the decoupled classifier).
_FALLBACK_CONSTRAINT = (
    '"demographic-parity" (the default), "equal-opportunity" or "equalized-odds", at level '
    "alpha. Demographic parity on two groups runs the paper's algorithm; another constraint or "
    "more than two groups fits the group-thresholds classifier in its place (the model's method "
    "is then group-thresholds; docs/fairness-constraints.md)."
)

#: `attribute_epsilon` of the binary fair classifiers.
_ATTRIBUTE_EPSILON = (
    "ε_A when `sensitive_features` were randomised by each person (K-ary randomised response "
    "at ε_A): the fairness statistics are corrected by the flip matrix and the score reads no "
    "group, so the rules are fair on the true groups, which prediction should be given. Fits "
    "the group-thresholds classifier. None: the attribute as given "
    "(docs/fairness-constraints.md)."
)


def _pair(name: str, value: Any) -> tuple | None:
    """`(lo, hi)` as two floats, or None."""
    if value is None:
        return None
    try:
        lo, hi = value
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (lo, hi), got {value!r}") from None
    return (float(lo), float(hi))


@parameters(
    delta="δ of the fit. None: (N/2)⁻², the paper's choice.",
    bandwidth="A fixed kernel bandwidth. None: the public bandwidth rule.",
    cross_fit="Cross-fitting. None: off with strict accounting, on with the paper's.",
    tau_grid="Public candidate thresholds of the private threshold choice (odd, ≥ 3).",
    min_group="A public floor on the groups' sizes. None: one derived from the released rates.",
    constraint=_FALLBACK_CONSTRAINT,
    attribute_epsilon=_ATTRIBUTE_EPSILON,
)
class CDPFairClassifier(_ProbabilisticClassifier):
    """CDP-Fair (Xue & Yu, Algorithm 5): a central-DP fair plug-in classifier.

    It keeps the demographic disparity |P(ŷ=1 | A=1) − P(ŷ=1 | A=0)| within `alpha`, for two
    groups; with another `constraint` or more groups it fits `GroupThresholdsClassifier`'s
    method in its place.

    Half the rows estimate each group's regression function and base rate, the other half choose
    the group threshold by the exponential mechanism. `eta_model`: the papers' kernel estimate
    released in a public random-feature basis (`"kernel"`), an output-perturbed logistic model
    with the group as a feature (`"logistic"`), DP-SGD logistic regression on all rows
    (`"dp-sgd"`), or `"auto"` (the default: DP-SGD under strict accounting, the kernel under
    the paper's; see docs/choosing.md).
    Features are scaled to [0, 1] (public `bounds`, else private bounds). Library defaults:
    α = 0.1, ε = 1, δ = (N/2)⁻², strict accounting, the public bandwidth rule, 1,024 random
    frequencies. Predicting needs `sensitive_features`.

    Example:
        >>> import numpy as np, pandas as pd, dpfair
        >>> rng = np.random.default_rng(0)
        >>> n = 4000
        >>> df = pd.DataFrame({"x": rng.uniform(size=n),
        ...                    "sex": rng.choice(["F", "M"], size=n)})
        >>> y = np.where(df.x + 0.2 * (df.sex == "M") > 0.6, "yes", "no")
        >>> clf = dpfair.CDPFairClassifier(alpha=0.05, epsilon=1.0, frequencies=64,
        ...                                bounds={"x": (0, 1)})
        >>> clf = clf.fit(df, y, sensitive_features="sex")
        >>> sorted(clf.classes_)
        ['no', 'yes']

    """

    _method = "cdp-fair"

    def __init__(
        self,
        *,
        alpha: float = 0.1,
        constraint: str = "demographic-parity",
        epsilon: float = 1.0,
        delta: float | None = None,
        bandwidth: float | None = None,
        frequencies: int = 1024,
        cross_fit: bool | None = None,
        tau_grid: int = 2001,
        min_group: int | None = None,
        eta_model: str = "auto",
        accounting: str = "strict",
        bounds: dict | None = None,
        coarse_bounds: dict | None = None,
        bounds_share: float = 0.05,
        unscaled: bool = False,
        pos_label: Any = None,
        groups: list | None = None,
        classes: list | None = None,
        check_fraction: float = 0.1,
        attribute_epsilon: float | None = None,
        session: Any = None,
        random_state: int | None = None,
        n_jobs: int | None = None,
    ) -> None:
        self.alpha = alpha
        self.constraint = constraint
        self.epsilon = epsilon
        self.delta = delta
        self.bandwidth = bandwidth
        self.frequencies = frequencies
        self.cross_fit = cross_fit
        self.tau_grid = tau_grid
        self.min_group = min_group
        self.eta_model = eta_model
        self.accounting = accounting
        self.bounds = bounds
        self.coarse_bounds = coarse_bounds
        self.bounds_share = bounds_share
        self.unscaled = unscaled
        self.pos_label = pos_label
        self.groups = groups
        self.classes = classes
        self.check_fraction = check_fraction
        self.attribute_epsilon = attribute_epsilon
        self.session = session
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _native_params(self) -> dict:
        return {
            **_given(
                attribute_epsilon=self.attribute_epsilon,
                check_fraction=self.check_fraction,
                alpha=self.alpha,
                constraint=self.constraint,
                epsilon=self.epsilon,
                delta=self.delta,
                bandwidth=self.bandwidth,
                frequencies=self.frequencies,
                cross_fit=self.cross_fit,
                tau_grid=self.tau_grid,
                min_group=self.min_group,
                eta_model=self.eta_model,
                accounting=self.accounting,
            ),
            **_scaling_params(self),
        }


@parameters(
    epsilon="ε of every site (federated DP: each site's ledger spends it).",
    delta="δ of every site. None: (N_s/2)⁻², N_s a site's rows.",
    sites="The number of simulated sites (contiguous blocks of rows).",
    bounds="Public bounds {column: (lo, hi)} (every site must scale alike).",
    eta_model=(
        "Each site's estimate of each group's regression function: \"kernel\" (the paper's), "
        '"logistic" (output-perturbed), "dp-sgd" (DP-SGD on the site\'s training half, the '
        'server averaging the weights; only when named) or "auto" (the kernel up to 3 feature '
        "columns after one-hot coding, the logistic model above; docs/choosing.md)."
    ),
    constraint=(
        'The rate the groups must share at level alpha: "demographic-parity" (default), '
        '"equal-opportunity" or "equalized-odds". Demographic parity on two groups runs '
        "Algorithm 1; another constraint or more groups fits the group-thresholds classifier "
        "over the same sites (the model's method is then group-thresholds; "
        "docs/fairness-constraints.md)."
    ),
    attribute_epsilon=_ATTRIBUTE_EPSILON,
)
class FDPFairClassifier(_ProbabilisticClassifier):
    """FDP-Fair (Xue & Yu, Algorithm 1), simulated in one process.

    The rows are split into `sites` contiguous sites, each runs both rounds on its own rows
    with its own randomness (federated DP: ε per site), and the server's selection builds one
    classifier. With another `constraint` or more than two groups it fits
    `GroupThresholdsClassifier`'s method over the same sites in its place.

    Features should be on [0, 1] (public `bounds` only: every site must scale alike). Library
    defaults: α = 0.1, ε = 1 per site, δ = (N_s/2)⁻² per site, 3 sites. Predicting needs
    `sensitive_features`.

    Example:
        >>> import numpy as np, dpfair
        >>> rng = np.random.default_rng(1)
        >>> X = rng.uniform(size=(6000, 2)); g = rng.choice(["a", "b"], size=6000)
        >>> y = (X[:, 0] > 0.5).astype(int)
        >>> clf = dpfair.FDPFairClassifier(sites=3, frequencies=64).fit(X, y, g)
        >>> clf.predict(X[:5], sensitive_features=g[:5]).shape
        (5,)

    """

    _method = "fdp-fair"

    def __init__(
        self,
        *,
        alpha: float = 0.1,
        epsilon: float = 1.0,
        delta: float | None = None,
        sites: int = 3,
        frequencies: int = 1024,
        eta_model: str = "auto",
        accounting: str = "strict",
        constraint: str = "demographic-parity",
        attribute_epsilon: float | None = None,
        check_fraction: float = 0.1,
        bounds: dict | None = None,
        unscaled: bool = False,
        pos_label: Any = None,
        groups: list | None = None,
        classes: list | None = None,
        session: Any = None,
        random_state: int | None = None,
        n_jobs: int | None = None,
    ) -> None:
        self.alpha = alpha
        self.epsilon = epsilon
        self.delta = delta
        self.check_fraction = check_fraction
        self.sites = sites
        self.frequencies = frequencies
        self.eta_model = eta_model
        self.accounting = accounting
        self.constraint = constraint
        self.attribute_epsilon = attribute_epsilon
        self.bounds = bounds
        self.unscaled = unscaled
        self.pos_label = pos_label
        self.groups = groups
        self.classes = classes
        self.session = session
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _native_params(self) -> dict:
        return _given(
            alpha=self.alpha,
            epsilon=self.epsilon,
            delta=self.delta,
            sites=self.sites,
            frequencies=self.frequencies,
            eta_model=self.eta_model,
            accounting=self.accounting,
            constraint=self.constraint,
            attribute_epsilon=self.attribute_epsilon,
            check_fraction=self.check_fraction,
            bounds=None if self.bounds is None else _bounds_list(self.bounds),
            unscaled=self.unscaled,
        )


@parameters(
    alpha="The Kolmogorov–Smirnov distance allowed between the groups' outputs (0: parity).",
    bins="Bins of the score range.",
    score_range="The scores' public range (lo, hi): required (or the base's target_range).",
    score_column="The column of X holding the scores. None: X's one column.",
    base="A dpfair.DPLinearRegression to chain after (scores from features). None: X is scores.",
    base_fraction="The share of rows the base is fitted on (with a base only).",
)
class PrivateFairRegressor(DPFairEstimator):
    """Private post-processing of regression scores for statistical parity.

    The method of Xian, Li, Kamath and Zhao: each group's score distribution is moved towards
    their Wasserstein barycenter, so that the groups' output distributions are within `alpha`
    in Kolmogorov–Smirnov distance.

    Two ways to use it:

    * **from features**, chained after a private regressor:
      `PrivateFairRegressor(base=DPLinearRegression(...), score_range=(lo, hi))`. The base is
      fitted on `base_fraction` (default 0.5) of a public random split of the rows, with the
      target clipped to `score_range`, and the post-processor on its predictions for the other
      rows; the two parts compose in parallel, so the whole fit is (ε, δ)-DP with ε this
      estimator's and δ the base's. `fit(X, y, sensitive_features=...)` and `predict(X,
      sensitive_features=...)` take the features. The base's `bounds`/`coarse_bounds` scale
      the features; its ε and target range are this estimator's (`epsilon`, `score_range`).
    * **on scores**: `X` is one column of scores (or name it with `score_column`), such as the
      predictions of a regressor fitted on other rows; `y` is the real target.

    The public interval `score_range=(lo, hi)` is required (never the data's own min/max; with
    a base, the base's `target_range` may give it). Library defaults: α = 0 (exact parity),
    ε = 1 (pure DP on scores), 36 bins. Predicting needs `sensitive_features`.

    Example:
        >>> import numpy as np, dpfair
        >>> rng = np.random.default_rng(2)
        >>> g = rng.choice(["a", "b"], size=3000)
        >>> scores = rng.uniform(size=3000) + 0.3 * (g == "b")
        >>> reg = dpfair.PrivateFairRegressor(alpha=0.05, score_range=(0, 1.3), bins=20)
        >>> reg = reg.fit(scores.reshape(-1, 1), scores, sensitive_features=g)
        >>> out = reg.predict(scores.reshape(-1, 1), sensitive_features=g)
        >>> bool(dpfair.metrics.ks_statistical_parity(None, out, sensitive_features=g) < 0.2)
        True
        >>> X = rng.uniform(size=(3000, 2)); y = X[:, 0] + 0.3 * (g == "b")
        >>> base = dpfair.DPLinearRegression()
        >>> reg = dpfair.PrivateFairRegressor(base=base, score_range=(0, 1.3))
        >>> reg.fit(X, y, sensitive_features=g).predict(X[:4], sensitive_features=g[:4]).shape
        (4,)

    """

    _method = "fair-regression"
    _regression = True

    def __init__(
        self,
        *,
        alpha: float = 0.0,
        epsilon: float = 1.0,
        bins: int = 36,
        score_range: tuple | None = None,
        score_column: str | None = None,
        base: Any = None,
        base_fraction: float = 0.5,
        groups: list | None = None,
        check_fraction: float = 0.1,
        session: Any = None,
        random_state: int | None = None,
        n_jobs: int | None = None,
    ) -> None:
        self.alpha = alpha
        self.epsilon = epsilon
        self.bins = bins
        self.score_range = score_range
        self.score_column = score_column
        self.base = base
        self.base_fraction = base_fraction
        self.groups = groups
        self.check_fraction = check_fraction
        self.session = session
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _score_range(self) -> tuple | None:
        score_range = _pair("score_range", self.score_range)
        if self.base is None:
            return score_range
        base_range = _pair("base.target_range", self.base.target_range)
        if score_range is None:
            return base_range
        if base_range is not None and base_range != score_range:
            raise ValueError(
                f"score_range {score_range} and the base's target_range {base_range} differ: "
                "the base's target is clipped to score_range; give one of them"
            )
        return score_range

    def _base_params(self) -> dict:
        """The base regressor's params (module docs); its unused settings are refused."""
        base = self.base
        if base is None:
            if _changed(self, "base_fraction"):
                raise ValueError("base_fraction needs a base regressor (base=DPLinearRegression())")
            return {}
        if not isinstance(base, DPLinearRegression):
            raise TypeError(
                f"base must be a dpfair.DPLinearRegression, got {type(base).__name__} (a "
                "non-private regressor's scores would not be private: fit it on other rows "
                "and pass its predictions as scores)"
            )
        if self.score_column is not None:
            raise ValueError("give a base regressor or a score_column, not both")
        if _changed(base, "epsilon") and base.epsilon != self.epsilon:
            raise ValueError(
                "the base's epsilon is this estimator's (its rows are disjoint from the "
                "post-processor's: parallel composition); set epsilon on PrivateFairRegressor"
            )
        for name in (
            "coarse_target_range",
            "target_share",
            "check_fraction",
            "session",
            "random_state",
        ):
            if _changed(base, name):
                raise ValueError(
                    f"base.{name}: not used when chained (the target range is score_range; "
                    "session and random_state are this estimator's)"
                )
        return {
            "base": "dp-linear",
            **_given(
                base_delta=base.delta,
                base_row_bound=base.row_bound,
                base_ridge=base.ridge,
                base_fraction=self.base_fraction,
            ),
            **_scaling_params(base),
        }

    def _native_params(self) -> dict:
        base = self._base_params()  # first: it checks what `base` is
        return {
            **_given(
                check_fraction=self.check_fraction,
                alpha=self.alpha,
                epsilon=self.epsilon,
                bins=self.bins,
                score_range=self._score_range(),
                score_column=self._score_column,
            ),
            **base,
        }

    def fit(self, X: Any, y: Any, sensitive_features: Any = None) -> PrivateFairRegressor:
        """Fit on features (with a base) or scores `X`, real target `y` and groups."""
        frame = self._fit_input(X, y, sensitive_features)
        if self.base is not None:
            self._score_column = None
        else:
            if self.score_column is None and len(frame.features) != 1:
                raise ValueError(
                    f"X has {len(frame.features)} columns: give the scores as one column, "
                    "name the score column with score_column=, or chain after a private "
                    "regressor with base=DPLinearRegression()"
                )
            self._score_column = self.score_column or frame.features[0][0]
        self._set_fitted(self._fit_frame(frame), y, frame)
        return self


class _LPCTBase(_ProbabilisticClassifier):
    """LPCT fits on private rows with public rows: `fit(X, y, X_public=, y_public=)`."""

    def fit(  # type: ignore[override]
        self,
        X: Any,
        y: Any,
        sensitive_features: Any = None,
        *,
        X_public: Any = None,  # noqa: N803 - scikit-learn's capitalised X
        y_public: Any = None,
    ) -> _LPCTBase:
        """Fit on private rows `X`, `y` with public rows `X_public`, `y_public` (same columns).

        The public rows build the partition; every private row is one holder whose ε-LDP report
        is simulated here exactly as the holder's device would make it. The method does not use
        groups: `sensitive_features` must be None.
        """
        # The classes are the public rows' (a private-only label is coded as missing).
        private = self._fit_input(X, y, classes_from_y=False)
        if X_public is None or y_public is None:
            raise ValueError(f"{type(self).__name__} needs public rows: X_public= and y_public=")
        if sensitive_features is not None:
            raise ValueError(
                f"{type(self).__name__} does not use sensitive_features (LPCT is private, not "
                "fairness-constrained): leave the group column among the features or drop it"
            )
        public = to_frame(X_public, y_public)
        self._check_binary(public)
        self._set_fitted(self._fit_frame(private, public), y, private)
        return self


@parameters(
    epsilon="ε of every holder's local (LDP) report.",
    depth="The tree's depth. None: Theorem 4's.",
    public_weight="λ, the public counts' weight. None: Theorem 4's.",
    guard="Standard deviations from 1/2 a leaf's estimate needs to be kept (0: the paper's).",
    splitter=(
        '"cart" (the CART criterion on the public rows, the paper\'s real-data variant), '
        '"max-edge" (Algorithm 1) or "random-max-edge".'
    ),
    criterion='"gini" or "entropy".',
    min_samples_leaf="Practical growth's leaf size. None: complete growth.",
    check_fraction="The share of public rows held out for the check against a constant.",
)
class LPCTClassifier(_LPCTBase):
    """LPCT (Ma & Yang): a locally private classification tree that uses public data.

    The public rows grow a partition; each private row's holder reports its leaf and label under
    ε-LDP, and the leaves combine public and private counts with weight λ (`public_weight`).
    Library defaults: ε = 1, Theorem 4's depth and λ, the CART splitter (the paper's real-data
    variant), Gini criterion, complete growth (`min_samples_leaf` for practical growth).

    `guard`: a leaf keeps its own estimate only when it is `guard` standard deviations from 1/2
    (noise of the reports and of the labels), else takes its nearest such ancestor's; the
    default 3 is `dpfair fit lpct`'s, 0 gives the paper's eq. (8) in every leaf (on
    high-dimensional data its leaves hold about one public row each, and the model is then
    worse than the majority class; docs/deviations.md, `lpct-significance-guard`).

    Example:
        >>> import numpy as np, dpfair
        >>> rng = np.random.default_rng(3)
        >>> Xp = rng.uniform(size=(500, 2)); yp = (Xp[:, 0] > 0.5).astype(int)
        >>> X = rng.uniform(size=(4000, 2)); y = (X[:, 0] > 0.5).astype(int)
        >>> clf = dpfair.LPCTClassifier(epsilon=2.0).fit(X, y, X_public=Xp, y_public=yp)
        >>> clf.ledger_["total"]["epsilon"]
        2.0

    """

    _method = "lpct"

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        depth: int | None = None,
        public_weight: float | None = None,
        guard: float = 3.0,
        splitter: str = "cart",
        criterion: str = "gini",
        min_samples_leaf: int | None = None,
        pos_label: Any = None,
        classes: list | None = None,
        check_fraction: float = 0.2,
        session: Any = None,
        random_state: int | None = None,
        n_jobs: int | None = None,
    ) -> None:
        self.epsilon = epsilon
        self.depth = depth
        self.public_weight = public_weight
        self.guard = guard
        self.splitter = splitter
        self.criterion = criterion
        self.min_samples_leaf = min_samples_leaf
        self.pos_label = pos_label
        self.classes = classes
        self.check_fraction = check_fraction
        self.session = session
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _native_params(self) -> dict:
        return _given(
            check_fraction=self.check_fraction,
            epsilon=self.epsilon,
            depth=self.depth,
            public_weight=self.public_weight,
            guard=self.guard,
            splitter=self.splitter,
            criterion=self.criterion,
            min_samples_leaf=self.min_samples_leaf,
        )


@parameters(
    epsilon="ε of every holder's local (LDP) report.",
    guard="Standard deviations from 1/2 the chosen node's estimate needs (0: the walk alone).",
    splitter=(
        '"cart" (the CART criterion on the public rows, the paper\'s real-data variant), '
        '"max-edge" (Algorithm 1) or "random-max-edge".'
    ),
    criterion='"gini" or "entropy".',
    min_samples_leaf="Practical growth's leaf size. None: complete growth.",
    check_fraction="The share of public rows held out for the check against a constant.",
)
class LPCTPruneClassifier(_LPCTBase):
    """LPCT-prune (Ma & Yang, Algorithm 2): LPCT with data-driven pruning of the tree.

    Library defaults: ε = 1, CART splitter (the paper's real-data variant), Gini criterion.

    `guard`: the node Algorithm 2's walk picks keeps its estimate only when it is `guard`
    standard deviations from 1/2, else takes its nearest such ancestor's; the default 3 is
    `dpfair fit lpct-prune`'s, 0 gives the walk alone (docs/deviations.md,
    `lpct-prune-significance-guard`).

    Example:
        >>> import numpy as np, dpfair
        >>> rng = np.random.default_rng(4)
        >>> Xp = rng.uniform(size=(500, 2)); yp = (Xp[:, 1] > 0.3).astype(int)
        >>> X = rng.uniform(size=(4000, 2)); y = (X[:, 1] > 0.3).astype(int)
        >>> clf = dpfair.LPCTPruneClassifier(epsilon=2.0).fit(X, y, X_public=Xp, y_public=yp)
        >>> clf.predict(X[:3]).shape
        (3,)

    """

    _method = "lpct-prune"

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        guard: float = 3.0,
        splitter: str = "cart",
        criterion: str = "gini",
        min_samples_leaf: int | None = None,
        pos_label: Any = None,
        classes: list | None = None,
        check_fraction: float = 0.2,
        session: Any = None,
        random_state: int | None = None,
        n_jobs: int | None = None,
    ) -> None:
        self.epsilon = epsilon
        self.guard = guard
        self.splitter = splitter
        self.criterion = criterion
        self.min_samples_leaf = min_samples_leaf
        self.pos_label = pos_label
        self.classes = classes
        self.check_fraction = check_fraction
        self.session = session
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _native_params(self) -> dict:
        return _given(
            check_fraction=self.check_fraction,
            epsilon=self.epsilon,
            guard=self.guard,
            splitter=self.splitter,
            criterion=self.criterion,
            min_samples_leaf=self.min_samples_leaf,
        )


@parameters(
    alpha="The disparity the flips aim at on the released rates (0: the paper's exact parity).",
    flips='"scores" (the smaller group moves by a score threshold), "fewest-changes" (by random '
    'flips) or "midpoint" (the paper\'s Algorithm 1).',
    epsilon="ε in total (DP-SGD and the rate release).",
    post_fraction="The share of rows held out for the rates.",
    constraint=_FALLBACK_CONSTRAINT,
    attribute_epsilon=_ATTRIBUTE_EPSILON,
)
class DecoupledFairClassifier(_ProbabilisticClassifier):
    """The decoupled private fair binary classifier (Ghoukasian & Asoodeh, Algorithm 2).

    A DP-SGD base model, then private group rates and a post-processing that changes decisions
    per group towards demographic parity: only the group with fewer rows (by the released
    counts) moves, so that the fewest decisions change
    (docs/deviations.md#decoupled-fewest-changes), and by default its least confident ones, by a
    threshold on the base scores (docs/deviations.md#decoupled-score-ordered-flips).

    `alpha`: the disparity level the flips aim at (the groups' released positive rates within
    `alpha` of each other; 0 is the paper's exact parity). With another `constraint` or more
    than two groups, `GroupThresholdsClassifier`'s method is fitted in its place (its score on
    the base model's rows, its table on the held-out rows). `flips`: `"scores"` (the default),
    `"fewest-changes"` (random flips of the same group) or `"midpoint"` (the paper's Algorithm 1:
    both groups' rates move to their midpoint). Library defaults: α = 0.1, ε = 3 in total,
    δ = 10⁻⁵, strict accounting, features scaled with public `bounds` where given and private
    bounds otherwise. Predicting needs
    `sensitive_features`.

    Example:
        >>> import numpy as np, dpfair
        >>> rng = np.random.default_rng(5)
        >>> X = rng.uniform(size=(3000, 2)); g = rng.choice(["a", "b"], size=3000)
        >>> y = (X[:, 0] + 0.3 * (g == "b") > 0.6).astype(int)
        >>> clf = dpfair.DecoupledFairClassifier(epsilon=3.0).fit(X, y, g)
        >>> clf.predict(X[:4], sensitive_features=g[:4]).shape
        (4,)

    """

    _method = "decoupled"

    def __init__(
        self,
        *,
        alpha: float = 0.1,
        constraint: str = "demographic-parity",
        flips: str = "scores",
        epsilon: float = 3.0,
        delta: float = 1e-5,
        post_fraction: float = 1 / 3,
        accounting: str = "strict",
        bounds: dict | None = None,
        coarse_bounds: dict | None = None,
        bounds_share: float = 0.05,
        unscaled: bool = False,
        pos_label: Any = None,
        groups: list | None = None,
        classes: list | None = None,
        check_fraction: float = 0.1,
        attribute_epsilon: float | None = None,
        session: Any = None,
        random_state: int | None = None,
        n_jobs: int | None = None,
    ) -> None:
        self.alpha = alpha
        self.constraint = constraint
        self.flips = flips
        self.epsilon = epsilon
        self.delta = delta
        self.post_fraction = post_fraction
        self.accounting = accounting
        self.bounds = bounds
        self.coarse_bounds = coarse_bounds
        self.bounds_share = bounds_share
        self.unscaled = unscaled
        self.pos_label = pos_label
        self.groups = groups
        self.classes = classes
        self.check_fraction = check_fraction
        self.attribute_epsilon = attribute_epsilon
        self.session = session
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _native_params(self) -> dict:
        return {
            **_given(
                attribute_epsilon=self.attribute_epsilon,
                check_fraction=self.check_fraction,
                alpha=self.alpha,
                constraint=self.constraint,
                flips=self.flips,
                epsilon=self.epsilon,
                delta=self.delta,
                post_fraction=self.post_fraction,
                accounting=self.accounting,
            ),
            **_scaling_params(self),
        }


@parameters(
    rho="The unfairness U allowed (0: the paper's exact parity).",
    margin_z="How many sampling standard deviations below rho the dual aims.",
    epsilon="ε of each phase (disjoint rows: parallel composition).",
    iterations="Dual-ascent iterations.",
    batch_size="Dual-ascent batch.",
    pool_fraction="The share of rows for phase 2.",
    bounds="Public bounds {column: (lo, hi)} of numeric features (free).",
)
class DP2DPClassifier(_ProbabilisticClassifier):
    """DP2DP (Say, Denis, Pinot): private demographic-parity post-processing, multi-class.

    Phase 1 fits a private probability model on part of the rows; phase 2 runs a
    private dual ascent on the rest so that the unfairness U is at most `rho`.

    Library defaults: ρ = 0.1 (every method's default fairness level; 0 is the paper's exact
    parity), ε = 1 per phase (disjoint rows: parallel composition), δ = 10⁻⁵,
    1,000 iterations, batch 128, the dual aimed `margin_z` = 1 sampling standard deviation
    below ρ (docs/deviations.md#dp2dp-sampling-margin; 0 aims at ρ itself, as the paper).
    Predicting needs `sensitive_features`.

    Example:
        >>> import numpy as np, dpfair
        >>> rng = np.random.default_rng(6)
        >>> X = rng.uniform(size=(4000, 2)); g = rng.choice(["a", "b"], size=4000)
        >>> y = np.digitize(X[:, 0] + 0.2 * (g == "b"), [0.4, 0.8])
        >>> clf = dpfair.DP2DPClassifier(rho=0.05, epsilon=2.0).fit(X, y, g)
        >>> sorted(clf.classes_.tolist())
        [0, 1, 2]

    """

    _method = "dp2dp"
    _multi_class = True

    def __init__(
        self,
        *,
        rho: float = 0.1,
        margin_z: float = 1.0,
        epsilon: float = 1.0,
        delta: float = 1e-5,
        iterations: int = 1000,
        batch_size: int = 128,
        pool_fraction: float = 0.25,
        accounting: str = "strict",
        bounds: dict | None = None,
        unscaled: bool = False,
        groups: list | None = None,
        classes: list | None = None,
        check_fraction: float = 0.1,
        session: Any = None,
        random_state: int | None = None,
        n_jobs: int | None = None,
    ) -> None:
        self.rho = rho
        self.margin_z = margin_z
        self.epsilon = epsilon
        self.delta = delta
        self.iterations = iterations
        self.batch_size = batch_size
        self.pool_fraction = pool_fraction
        self.accounting = accounting
        self.bounds = bounds
        self.unscaled = unscaled
        self.groups = groups
        self.classes = classes
        self.check_fraction = check_fraction
        self.session = session
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _native_params(self) -> dict:
        return _given(
            check_fraction=self.check_fraction,
            rho=self.rho,
            margin_z=self.margin_z,
            epsilon=self.epsilon,
            delta=self.delta,
            iterations=self.iterations,
            batch_size=self.batch_size,
            pool_fraction=self.pool_fraction,
            accounting=self.accounting,
            bounds=None if self.bounds is None else _bounds_list(self.bounds),
            unscaled=self.unscaled,
        )


@parameters(
    constraint=(
        '"demographic-parity" (positive rates), "equal-opportunity" (true-positive rates) or '
        '"equalized-odds" (true- and false-positive rates).'
    ),
    level="α: every two groups' constrained rates within it (0: exact).",
    epsilon="ε in total (DP-SGD and the table release).",
    delta="δ of the fit (all of it DP-SGD's: the table's release is pure). None: (N/2)⁻².",
    table_share="The share of ε spent on the group × label × score-bin table.",
    bins="Equal score bins on [0, 1] of the table (2 to 100).",
    epochs="DP-SGD epochs of the scorer η̃.",
    learning_rate="DP-SGD learning rate of the scorer η̃.",
    attribute_epsilon=_ATTRIBUTE_EPSILON,
)
class GroupThresholdsClassifier(_ProbabilisticClassifier):
    """Private group-wise thresholds: a fair binary classifier for two or more groups.

    The fair Bayes classifier's form, privately: a scorer η̃(x, a) by DP-SGD logistic
    regression with the group as K − 1 dummy features, at (1 − `table_share`)·ε; one Laplace
    release of the group × label × score-bin table of the rows' scores at `table_share`·ε; and,
    from the released table alone, a randomised threshold per group so that every two groups'
    constrained rates lie within `level` (docs/fairness-constraints.md). `constraint`:
    demographic parity (positive rates, the default), equal opportunity (true-positive rates)
    or equalized odds (both true- and false-positive rates), Fairlearn's differences.
    Library defaults: level 0.1, ε = 1, δ = (N/2)⁻², a quarter of ε on the table, 10 bins,
    DP-SGD at `DPLogisticRegression`'s settings (30 epochs, learning rate 0.5), strict
    accounting (two ledger entries), features scaled with public `bounds` where given and
    private bounds otherwise. `predict_proba` is each row's probability of a positive decision
    under its group's rule; `predict` draws it (seeded by `random_state`). Predicting needs
    `sensitive_features`.

    Example:
        >>> import numpy as np, dpfair
        >>> rng = np.random.default_rng(7)
        >>> X = rng.uniform(size=(3000, 2)); g = rng.choice(["a", "b", "c"], size=3000)
        >>> y = (X[:, 0] + 0.2 * (g == "b") - 0.2 * (g == "c") > 0.5).astype(int)
        >>> clf = dpfair.GroupThresholdsClassifier(constraint="equal-opportunity", epsilon=2.0,
        ...                                        bounds={"x0": (0, 1), "x1": (0, 1)})
        >>> clf = clf.fit(X, y, sensitive_features=g)
        >>> clf.predict_proba(X[:4], sensitive_features=g[:4]).shape
        (4, 2)
        >>> float(clf.ledger_["total"]["epsilon"]) <= 2.0, list(clf.groups_)
        (True, ['a', 'b', 'c'])

    """

    _method = "group-thresholds"

    def __init__(
        self,
        *,
        constraint: str = "demographic-parity",
        level: float = 0.1,
        epsilon: float = 1.0,
        delta: float | None = None,
        table_share: float = 0.25,
        bins: int = 10,
        epochs: int = 30,
        learning_rate: float = 0.5,
        bounds: dict | None = None,
        coarse_bounds: dict | None = None,
        bounds_share: float = 0.05,
        unscaled: bool = False,
        pos_label: Any = None,
        groups: list | None = None,
        classes: list | None = None,
        check_fraction: float = 0.1,
        attribute_epsilon: float | None = None,
        session: Any = None,
        random_state: int | None = None,
        n_jobs: int | None = None,
    ) -> None:
        self.constraint = constraint
        self.level = level
        self.epsilon = epsilon
        self.delta = delta
        self.table_share = table_share
        self.bins = bins
        self.epochs = epochs
        self.learning_rate = learning_rate
        self.bounds = bounds
        self.coarse_bounds = coarse_bounds
        self.bounds_share = bounds_share
        self.unscaled = unscaled
        self.pos_label = pos_label
        self.groups = groups
        self.classes = classes
        self.check_fraction = check_fraction
        self.attribute_epsilon = attribute_epsilon
        self.session = session
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _native_params(self) -> dict:
        return {
            **_given(
                attribute_epsilon=self.attribute_epsilon,
                check_fraction=self.check_fraction,
                constraint=self.constraint,
                level=self.level,
                epsilon=self.epsilon,
                delta=self.delta,
                table_share=self.table_share,
                bins=self.bins,
                epochs=self.epochs,
                learning_rate=self.learning_rate,
            ),
            **_scaling_params(self),
        }
